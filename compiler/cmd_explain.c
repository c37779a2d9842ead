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
 * --collective A,B[,C] with --html writes the compare page: the schedules
 * of one topology side by side, stepped in lockstep (explain_html_compare).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "driver.h"

typedef struct ExplainArgs {
	const char *collective, *svg, *html, *size;
	double bytes;
	/* --collective A,B,C: the names (in a copy of the list), at most
	 * EXPLAIN_MAX_COMPARE; nnames 1 for one name */
	char *list;
	const char *names[EXPLAIN_MAX_COMPARE];
	int nnames;
	Defines defs;
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
	else if (strcmp(name, "define") == 0)
		return define_opt("explain", &a->defs, value);
	else
		a->collective = value;
	return 0;
}

static const CliOpt explain_opts[] = {
	{"collective", 0, "NAME", "only the collective NAME (A,B,C with --html: side by side)"},
	{"svg", 0, "OUT.svg", "write a timeline of the one collective shown"},
	{"html", 0, "OUT.html", "write an interactive page of the one collective shown"},
	{"size", 0, "BYTES", "the message size the page's loads and metrics assume (1MiB)"},
	DEFINE_OPT,
};

static int cmd_explain(Diag *, int argc, char **argv);

const CliCommand cli_explain = {
	"explain", "FILE",
	"show a small schedule round by round: messages, chunks held, busiest links",
	"Each round lists its messages, which chunks every rank holds with whose\n"
	"contributions, and the busiest links; --svg writes a timeline of one collective,\n"
	"--html a page to step through in a browser (one file, no network). A wrong user\n"
	"schedule is shown up to its fault, and the exit status is 1.\n"
	"--collective A,B,C with --html writes a page stepping two or three schedules of\n"
	"one topology side by side.\n"
	"Small cases only: a larger schedule is refused with an error naming the limit.\n",
	explain_opts, countof(explain_opts), cmd_explain, NULL};

/* The source's path as a page shows it: as given when relative; an
 * absolute one relative to the working directory when under it, else its
 * name (a handout shows no home directory). */
static const char *
page_path(const char *path, char *buf, size_t len)
{
	if (path[0] != '/')
		return path;
	size_t n;
	if (getcwd(buf, len) && (n = strlen(buf)) > 1 && strncmp(path, buf, n) == 0 &&
	    path[n] == '/')
		return path + n + 1;
	const char *slash = strrchr(path, '/');
	return slash + 1;
}

/* A user schedule the teacher refused: its rounds up to the fault, with
 * the counterexample collc printed (on the page, an absolute path of the
 * file as page_path shows it). rc stays 1. */
static void
explain_trace(Diag *dg, const TeachTrace *tr, const char *why, const char *path,
              const ExplainArgs *ea, FILE *out)
{
	char cwd[4096];
	const char *shown = page_path(path, cwd, sizeof cwd);
	char *text = NULL;
	size_t len = 0, n = strlen(path);
	FILE *t = open_memstream(&text, &len);
	for (const char *q = why; t && *q;) {
		const char *at = shown != path ? strstr(q, path) : NULL;
		if (!at) {
			fputs(q, t);
			break;
		}
		fprintf(t, "%.*s%s", (int)(at - q), q, shown);
		q = at + n;
	}
	if (t)
		fclose(t);
	ExplainFault f = explain_fault_of(tr, text ? text : why);
	explain_outputs(dg, tr->s, NULL, &f, ea, out);
	free(text);
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

/* --collective A,B,C: the names into ea->names; a usage error (2) for
 * more than EXPLAIN_MAX_COMPARE, an empty name or one named twice. */
static int
split_names(ExplainArgs *ea)
{
	if (!ea->collective || !strchr(ea->collective, ','))
		return 0;
	ea->list = xmalloc(strlen(ea->collective) + 1);
	strcpy(ea->list, ea->collective);
	ea->collective = NULL;
	for (char *p = ea->list, *next; p; p = next) {
		next = strchr(p, ',');
		if (next)
			*next++ = 0;
		if (!*p)
			return usage_error("explain: --collective: an empty name in the list");
		if (ea->nnames == EXPLAIN_MAX_COMPARE)
			return usage_error("explain: --collective: at most %d schedules side by side",
			                   EXPLAIN_MAX_COMPARE);
		for (int i = 0; i < ea->nnames; i++)
			if (strcmp(ea->names[i], p) == 0)
				return usage_error("explain: --collective: '%s' named twice", p);
		ea->names[ea->nnames++] = p;
	}
	return 0;
}

/* Two schedules on one page share its drawing: the same topology (its
 * description, nodes and links). */
static bool
same_topology(const Topo *a, const Topo *b)
{
	char da[128], db[128];
	topo_describe(a, da, sizeof da);
	topo_describe(b, db, sizeof db);
	return a == b || (strcmp(da, db) == 0 && a->nnode == b->nnode && a->nlink == b->nlink);
}

/* The named schedules of a compare page in s[], their order; located
 * errors for one of another topology or past the page's full detail. */
static int
compare_select(Diag *dg, const Input *in, const ExplainArgs *ea, const Sched *s[])
{
	for (int k = 0; k < ea->nnames; k++) {
		s[k] = NULL;
		for (int i = 0; i < in->prog.nsched && !s[k]; i++)
			if (strcmp(in->prog.sched[i]->name, ea->names[k]) == 0)
				s[k] = in->prog.sched[i];
		if (!s[k]) {
			no_schedule_named(dg, &in->prog, ea->names[k]);
			return 1;
		}
		if (!same_topology(s[k]->topo, s[0]->topo)) {
			char da[128], db[128];
			topo_describe(s[0]->topo, da, sizeof da);
			topo_describe(s[k]->topo, db, sizeof db);
			error_at(dg, s[k]->loc, "'%s' is on %s, '%s' on %s: a compare page steps schedules "
			         "of one topology", s[k]->name, db, s[0]->name, da);
			return 1;
		}
		int full = explain_check_page(dg, s[k]);
		if (full < 0)
			return 1;
		if (full == 0) {
			error_at(dg, s[k]->loc, "a compare page shows every cell: at most %d ranks and %d "
			         "chunks; '%s' has %d ranks and %d chunks (open it alone with --html)",
			         EXPLAIN_PAGE_RANKS, EXPLAIN_PAGE_CHUNKS, s[k]->name, s[k]->nrank,
			         s[k]->nchunk);
			return 1;
		}
	}
	return 0;
}

/* --collective A,B,C: each one's text form (when it fits), then with
 * --html the page of them side by side. */
static int
explain_compare(Diag *dg, const Input *in, const ExplainArgs *ea, const char *path, FILE *mem)
{
	const Sched *s[EXPLAIN_MAX_COMPARE], *x[EXPLAIN_MAX_COMPARE],
	            *sym[EXPLAIN_MAX_COMPARE];
	if (compare_select(dg, in, ea, s) != 0)
		return 1;
	if (!ea->html) {
		int rc = 0;
		for (int k = 0; rc == 0 && k < ea->nnames; k++) {
			fputs(k ? "\n" : "", mem);
			rc = explain_one(dg, s[k], ea, mem);
		}
		return rc;
	}
	Arena a = {0};
	for (int k = 0; k < ea->nnames; k++) {
		x[k] = s[k]->base ? sched_expand(dg, &a, s[k]) : s[k];
		sym[k] = s[k]->base ? s[k] : NULL;
		if (explain_text_fits(s[k]))
			explain_text(x[k], mem);
		else
			fprintf(mem, "'%s': %d ranks, %d chunks, %d rounds, past the text form's limits: "
			        "the page shows it\n", x[k]->name, x[k]->nrank, x[k]->nchunk,
			        x[k]->nround);
		fputs(k + 1 < ea->nnames ? "\n" : "", mem);
	}
	char cwd[4096];
	MemOut m;
	explain_html_compare(x, sym, ea->nnames, ea->bytes, page_path(path, cwd, sizeof cwd),
	                     memout_open(&m));
	int rc = write_output(ea->html, &m);
	arena_free(&a);
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
	if ((rc = split_names(&ea)) != 0) {
		free(ea.list);
		return rc;
	}
	if (ea.nnames > 0 && ea.svg) {
		free(ea.list);
		return usage_error("explain: --svg draws one collective; --collective A,B,C goes "
		                   "with --html");
	}
	Input in = {.only = ea.collective, .defs = &ea.defs};
	TeachTrace trace = {0};
	char *why = NULL;
	rc = explain_load(dg, path, &in, &trace, &why);
	MemOut m;
	FILE *mem = memout_open(&m);
	if (rc == 0 && ea.nnames > 0) { /* side by side */
		free(why);
		rc = explain_compare(dg, &in, &ea, path, mem);
		if (rc == 0)
			rc = write_output(NULL, &m);
		else
			memout_drop(&m);
		free(ea.list);
		input_free(&in);
		return rc;
	}
	free(ea.list);
	if (rc && trace.s && ea.nnames == 0 &&
	    (!ea.collective || strcmp(trace.s->name, ea.collective) == 0)) {
		explain_trace(dg, &trace, why, path, &ea, mem);
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
