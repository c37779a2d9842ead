/*
 * cmd_explain.c: `collc explain FILE [--collective NAME] [--svg OUT]`.
 * Builds and verifies the file's schedules like check, then shows each
 * selected one round by round (ir/explain.c): the messages, which chunks
 * every rank holds with whose contributions, the busiest links; --svg
 * writes a timeline of one collective. Small cases only: a larger schedule
 * is refused with a located error naming the limit.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

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
		char *buf = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&buf, &len);
		if (!mem)
			die("open_memstream failed");
		explain_svg(x, mem);
		fclose(mem);
		rc = write_output(svg, buf, len);
		free(buf);
	}
	arena_free(&a);
	return rc;
}

int
cmd_explain(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"collective", required_argument, NULL, 'c'},
		{"svg", required_argument, NULL, 's'},
		{NULL, 0, NULL, 0},
	};
	const char *path = NULL, *collective = NULL, *svg = NULL;
	/* getopt_long wants the program's name first */
	char **args = xmalloc(((size_t)argc + 2) * sizeof *args);
	args[0] = (char *)"collc explain";
	memcpy(args + 1, argv, (size_t)argc * sizeof *args);
	args[argc + 1] = NULL;
	optind = 0;
	opterr = 0;
	int opt, rc = 0;
	while (rc == 0 && (opt = getopt_long(argc + 1, args, ":", longopts, NULL)) != -1) {
		if (opt == 'c')
			collective = optarg;
		else if (opt == 's')
			svg = optarg;
		else if (opt == ':')
			rc = usage_error("explain: %s needs a value", args[optind - 1]);
		else
			rc = usage_error("explain: unknown option '%s'", args[optind - 1]);
	}
	for (int i = optind; rc == 0 && i < argc + 1; i++)
		rc = file_operand("explain", args[i], &path);
	free(args);
	if (rc)
		return rc;
	if (!path)
		return missing_file("explain");
	Input in = {0};
	rc = load(path, &in, true, 1 << 20);
	int shown = 0, nsel = 0;
	for (int i = 0; rc == 0 && i < in.prog.nsched; i++)
		nsel += !collective || strcmp(in.prog.sched[i]->name, collective) == 0;
	if (rc == 0 && nsel == 0) {
		error_file(collective ? "no schedule named '%s' is built from this file"
		                      : "no schedule is built from this file%s", collective ? collective : "");
		rc = 1;
	}
	if (rc == 0 && svg && nsel > 1)
		rc = usage_error("explain: --svg draws one collective; choose it with --collective");
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	if (!mem)
		die("open_memstream failed");
	for (int i = 0; rc == 0 && i < in.prog.nsched; i++) {
		const Sched *s = in.prog.sched[i];
		if (collective && strcmp(s->name, collective) != 0)
			continue;
		rc = verify(s) != 0;
		if (rc == 0) {
			if (shown++)
				fputc('\n', mem);
			rc = explain_one(s, svg, mem);
		}
	}
	fclose(mem);
	if (rc == 0)
		rc = write_output(NULL, buf, len);
	free(buf);
	input_free(&in);
	return rc;
}
