/*
 * cmd_explain.c: `collc explain FILE [--collective NAME] [--svg OUT]
 * [--html OUT] [--size BYTES]`. Builds and verifies the file's schedules
 * like check, then shows each selected one round by round (ir/explain.c):
 * the messages, which chunks every rank holds with whose contributions, the
 * busiest links; --svg writes a timeline of one collective, --html an
 * interactive page (ir/explain_html.c). A user schedule the teacher finds
 * wrong is shown up to its fault, the error beside it; the exit status
 * stays 1. Small cases only: a larger schedule is refused with a located
 * error naming the limit (the page's limits are higher than the text's).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "driver.h"

typedef struct ExplainArgs {
	const char *collective, *svg, *html, *size;
	double bytes;
} ExplainArgs;

/* The outputs of one schedule x (explicit; sym its symmetric form or
 * NULL), up to the fault when there is one. */
static int
explain_outputs(Diag *dg, const Sched *x, const Sched *sym, const ExplainFault *fault,
                const ExplainArgs *ea, FILE *out)
{
	const Sched *shown = sym ? sym : x;
	int full = 1;
	if (ea->html && (full = explain_check_page(dg, shown)) < 0)
		return 1;
	if ((!ea->html || ea->svg) && explain_check_size(dg, shown) != 0)
		return 1;
	if (explain_text_fits(shown))
		explain_text_fault(x, fault, out);
	else
		fprintf(out, "'%s': %d ranks, %d chunks, %d rounds, past the text form's %d ranks, %d "
		        "chunks and %d rounds: the page shows it\n", x->name, x->nrank, x->nchunk,
		        x->nround, EXPLAIN_MAX_RANKS, EXPLAIN_MAX_CHUNKS, EXPLAIN_MAX_ROUNDS);
	int rc = 0;
	if (ea->svg) {
		MemOut m;
		explain_svg_fault(x, fault, memout_open(&m));
		rc = write_output(ea->svg, &m);
	}
	if (rc == 0 && ea->html) {
		MemOut m;
		explain_html(x, sym, fault, ea->bytes, full == 1, memout_open(&m));
		rc = write_output(ea->html, &m);
	}
	return rc;
}

static int
explain_one(Diag *dg, const Sched *s, const ExplainArgs *ea, FILE *out)
{
	if (ea->html ? explain_check_page(dg, s) < 0 : explain_check_size(dg, s) != 0)
		return 1;
	Arena a = {0};
	const Sched *x = s->base ? sched_expand(dg, &a, s) : s;
	int rc = explain_outputs(dg, x, s->base ? s : NULL, NULL, ea, out);
	arena_free(&a);
	return rc;
}

static int
explain_opt(void *ctx, const char *name, const char *value)
{
	ExplainArgs *a = ctx;
	if (strcmp(name, "svg") == 0)
		a->svg = value;
	else if (strcmp(name, "html") == 0)
		a->html = value;
	else if (strcmp(name, "size") == 0)
		a->size = value;
	else
		a->collective = value;
	return 0;
}

static const CliOpt explain_opts[] = {
	{"collective", 0, "NAME", "only the collective NAME"},
	{"svg", 0, "OUT.svg", "write a timeline of the one collective shown"},
	{"html", 0, "OUT.html", "write an interactive page of the one collective shown"},
	{"size", 0, "BYTES", "the message size the page's loads and metrics assume (1MiB)"},
};

static int cmd_explain(Diag *, int argc, char **argv);

const CliCommand cli_explain = {
	"explain", "FILE",
	"show a small schedule round by round: messages, chunks held, busiest links",
	"Each round lists its messages, which chunks every rank holds with whose\n"
	"contributions, and the busiest links; --svg writes a timeline of one collective,\n"
	"--html a page to step through in a browser (one file, no network). A wrong user\n"
	"schedule is shown up to its fault, and the exit status is 1.\n"
	"Small cases only: a larger schedule is refused with an error naming the limit.\n",
	explain_opts, countof(explain_opts), cmd_explain, NULL};

/* A user schedule the teacher refused: its rounds up to the fault, with
 * the counterexample collc printed. rc stays 1. */
static void
explain_trace(Diag *dg, const TeachTrace *tr, const char *why, const ExplainArgs *ea, FILE *out)
{
	ExplainFault f = explain_fault_of(tr, why);
	explain_outputs(dg, tr->s, NULL, &f, ea, out);
}

/* Builds the file with diagnostics kept (the page quotes them) and
 * echoed to stderr. */
static int
explain_load(Diag *dg, const char *path, Input *in, TeachTrace *trace, char **why)
{
	size_t len;
	FILE *mem = open_memstream(why, &len);
	if (mem)
		diag_stream(dg, mem);
	in->prog.trace = trace;
	int rc = load(dg, path, in, true, 1 << 20);
	if (mem) {
		diag_stream(dg, NULL);
		fclose(mem);
		fputs(*why, stderr);
	}
	return rc;
}

static int
explain_selected(Diag *dg, Input *in, const ExplainArgs *ea, FILE *mem)
{
	int rc = 0, shown = 0;
	for (int i = 0; rc == 0 && i < in->prog.nsched; i++) {
		const Sched *s = in->prog.sched[i];
		if (ea->collective && strcmp(s->name, ea->collective) != 0)
			continue;
		if (shown++)
			fputc('\n', mem);
		rc = explain_one(dg, s, ea, mem); /* load verified it */
	}
	return rc;
}

static int
cmd_explain(Diag *dg, int argc, char **argv)
{
	const char *path = NULL;
	ExplainArgs ea = {.bytes = 1 << 20};
	int rc = cli_parse(&cli_explain, argc, argv, &ea, explain_opt, &path);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (ea.size && (ea.bytes = parse_bytes(ea.size)) < 0)
		return ea.bytes == -2 ? size_usage("explain", "size", ea.size, ea.bytes, "")
		                      : usage_error("explain: --size %s: give a whole number of bytes, "
		                                    "1MiB or 1048576", ea.size);
	Input in = {.only = ea.collective};
	TeachTrace trace = {0};
	char *why = NULL;
	rc = explain_load(dg, path, &in, &trace, &why);
	MemOut m;
	FILE *mem = memout_open(&m);
	if (rc && trace.s && (!ea.collective || strcmp(trace.s->name, ea.collective) == 0)) {
		explain_trace(dg, &trace, why, &ea, mem);
		write_output(NULL, &m);
		free(why);
		input_free(&in);
		return 1;
	}
	free(why);
	int nsel = 0;
	for (int i = 0; rc == 0 && i < in.prog.nsched; i++)
		nsel += !ea.collective || strcmp(in.prog.sched[i]->name, ea.collective) == 0;
	if (rc == 0 && nsel == 0) {
		if (ea.collective)
			no_schedule_named(dg, &in.prog, ea.collective);
		else
			error_file(dg, "no schedule is built from this file");
		rc = 1;
	}
	if (rc == 0 && (ea.svg || ea.html) && nsel > 1)
		rc = usage_error("explain: --svg and --html draw one collective; choose it with "
		                 "--collective");
	if (rc == 0)
		rc = explain_selected(dg, &in, &ea, mem);
	if (rc == 0)
		rc = write_output(NULL, &m);
	else
		memout_drop(&m);
	input_free(&in);
	return rc;
}
