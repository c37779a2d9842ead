/*
 * main.c: the collc driver. Reads the input whole, runs the front end
 * (parse, sema) and then the command. Exit status: 0 success, 1 an error in
 * the input (reported as file:line:col), 2 a usage error.
 */
#include <stdlib.h>
#include <string.h>

#include "ast.h"

#ifndef COLLC_VERSION
#define COLLC_VERSION "0.1.0"
#endif

static const char usage[] =
	"usage: collc <command> [options] FILE\n"
	"\n"
	"collc compiles collective-communication schedules from .coll files.\n"
	"\n"
	"commands:\n"
	"  check FILE            parse and check FILE; print a summary of its declarations\n"
	"  fmt FILE [-o OUT]     print FILE in canonical form (to OUT, written whole)\n"
	"\n"
	"options:\n"
	"  -h, --help            this text\n"
	"  --version             collc's version\n"
	"\n"
	"FILE may be '-' for standard input. Exit status: 0 success, 1 errors in the\n"
	"input, 2 bad usage. The language is described in docs/language.md.\n";

static int usage_error(const char *fmt, ...) PRINTF_LIKE(1, 2);

static int
usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "collc: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry 'collc --help'.\n");
	va_end(ap);
	return 2;
}

typedef struct Input {
	Arena arena;
	char *text;
	File *file;
} Input;

/* Reads, parses and checks; 0 when the file is clean. */
static int
front_end(const char *path, Input *in)
{
	size_t len;
	char err[512];
	const char *shown = strcmp(path, "-") == 0 ? "<stdin>" : path;
	in->text = read_file(path, &len, err, sizeof err);
	if (!in->text) {
		fprintf(stderr, "collc: error: %s\n", err);
		return 1;
	}
	diag_source(shown, in->text, len);
	in->file = parse_text(&in->arena, shown, in->text, len);
	if (nerrors() == 0)
		sema(in->file);
	return nerrors() > 0;
}

static void
input_free(Input *in)
{
	arena_free(&in->arena);
	free(in->text);
}

static void
summary(const File *f, FILE *out)
{
	static const char *const kind[] = {"network", "topology", "group", "tree", "trees",
	                                   "collective"};
	fprintf(out, "%s: ok\n", f->path);
	for (int i = 0; i < f->ndecl; i++) {
		const Decl *d = &f->decl[i];
		fprintf(out, "  %-10s %-8s ", kind[d->kind], d->name ? d->name : "");
		switch (d->kind) {
		case DC_NETWORK:
			fprintf(out, "%d parameters", d->body->nitem);
			break;
		case DC_TOPOLOGY:
			fmt_call(d->form, out);
			break;
		case DC_GROUP:
		case DC_TREE:
		case DC_TREES:
			if (d->form) {
				fmt_call(d->form, out);
			} else {
				fprintf(out, "on %s, %d %s%s", d->on, d->body->nitem,
				        d->kind == DC_GROUP ? "generator" : "edge",
				        d->body->nitem == 1 ? "" : "s");
			}
			break;
		case DC_COLLECTIVE: {
			const Call *alg = NULL;
			for (int j = 0; j < d->body->nitem; j++)
				if (d->body->item[j].kind == IT_ALGORITHM)
					alg = d->body->item[j].call;
			fprintf(out, "%s on %s, algorithm ", d->ckind, d->on);
			fmt_call(alg, out);
			break;
		}
		}
		fputc('\n', out);
	}
}

static int
cmd_check(int argc, char **argv)
{
	const char *path = NULL;
	for (int i = 0; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1])
			return usage_error("check: unknown option '%s'", argv[i]);
		if (path)
			return usage_error("check: one FILE, got also '%s'", argv[i]);
		path = argv[i];
	}
	if (!path)
		return usage_error("check: %s", "missing FILE");
	Input in = {0};
	int rc = front_end(path, &in);
	if (rc == 0)
		summary(in.file, stdout);
	input_free(&in);
	return rc;
}

static int
cmd_fmt(int argc, char **argv)
{
	const char *path = NULL, *out = NULL;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0) {
			if (++i >= argc)
				return usage_error("fmt: %s", "-o needs a file name");
			out = argv[i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return usage_error("fmt: unknown option '%s'", argv[i]);
		} else if (path) {
			return usage_error("fmt: one FILE, got also '%s'", argv[i]);
		} else {
			path = argv[i];
		}
	}
	if (!path)
		return usage_error("fmt: %s", "missing FILE");
	Input in = {0};
	int rc = front_end(path, &in);
	if (rc == 0) {
		char *buf = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&buf, &len);
		if (!mem)
			die("open_memstream failed");
		fmt_file(in.file, mem);
		fclose(mem);
		char err[512];
		if (write_file_atomic(out ? out : "-", buf, len, err, sizeof err) != 0) {
			fprintf(stderr, "collc: error: %s\n", err);
			rc = 1;
		}
		free(buf);
	}
	input_free(&in);
	return rc;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
		fputs(usage, stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0) {
		printf("collc %s\n", COLLC_VERSION);
		return 0;
	}
	int rc;
	if (strcmp(cmd, "check") == 0)
		rc = cmd_check(argc - 2, argv + 2);
	else if (strcmp(cmd, "fmt") == 0)
		rc = cmd_fmt(argc - 2, argv + 2);
	else
		return usage_error("unknown command '%s'", cmd);
	/* a full disk or a closed pipe is an error, not a success */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "collc: error: cannot write to standard output\n");
		rc = 1;
	}
	return rc;
}
