/*
 * cmd_explain.c: `collc explain FILE [--collective NAME] [--svg OUT]`.
 * Builds and verifies the file's schedules like check, then shows each
 * selected one round by round (ir/explain.c): the messages, which chunks
 * every rank holds with whose contributions, the busiest links; --svg
 * writes a timeline of one collective. Small cases only: a larger schedule
 * is refused with a located error naming the limit.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "driver.h"

static int
explain_one(const Sched *s, const char *svg, FILE *out)
{
	if (explain_check_size(s) != 0)
		return 1;
	Arena a = {0};
	const Sched *x = s->base ? sched_expand(&a, s) : s;
	explain_text(x, out);
	int rc = 0;
	if (svg) {
		MemOut m;
		explain_svg(x, memout_open(&m));
		rc = write_output(svg, &m);
	}
	arena_free(&a);
	return rc;
}

typedef struct ExplainArgs {
	const char *collective, *svg;
} ExplainArgs;

static int
explain_opt(void *ctx, const char *name, const char *value)
{
	ExplainArgs *a = ctx;
	*(strcmp(name, "svg") == 0 ? &a->svg : &a->collective) = value;
	return 0;
}

static const CliOpt explain_opts[] = {
	{"collective", 0, "NAME", "only the collective NAME"},
	{"svg", 0, "OUT.svg", "write a timeline of the one collective shown"},
};

static int cmd_explain(int argc, char **argv);

const CliCommand cli_explain = {
	"explain", "FILE",
	"show a small schedule round by round: messages, chunks held, busiest links",
	"Each round lists its messages, which chunks every rank holds with whose\n"
	"contributions, and the busiest links; --svg writes a timeline of one collective.\n"
	"Small cases only: a larger schedule is refused with an error naming the limit.\n",
	explain_opts, countof(explain_opts), cmd_explain};

static int
cmd_explain(int argc, char **argv)
{
	const char *path = NULL;
	ExplainArgs ea = {0};
	int rc = cli_parse(&cli_explain, argc, argv, &ea, explain_opt, &path);
	if (rc)
		return rc < 0 ? 0 : rc;
	const char *collective = ea.collective, *svg = ea.svg;
	Input in = {.only = collective};
	rc = load(path, &in, true, 1 << 20);
	int shown = 0, nsel = 0;
	for (int i = 0; rc == 0 && i < in.prog.nsched; i++)
		nsel += !collective || strcmp(in.prog.sched[i]->name, collective) == 0;
	if (rc == 0 && nsel == 0) {
		if (collective)
			no_schedule_named(&in.prog, collective);
		else
			error_file("no schedule is built from this file");
		rc = 1;
	}
	if (rc == 0 && svg && nsel > 1)
		rc = usage_error("explain: --svg draws one collective; choose it with --collective");
	MemOut m;
	FILE *mem = memout_open(&m);
	for (int i = 0; rc == 0 && i < in.prog.nsched; i++) {
		const Sched *s = in.prog.sched[i];
		if (collective && strcmp(s->name, collective) != 0)
			continue;
		if (shown++)
			fputc('\n', mem);
		rc = explain_one(s, svg, mem);
	}
	if (rc == 0)
		rc = write_output(NULL, &m);
	else
		memout_drop(&m);
	input_free(&in);
	return rc;
}
