/*
 * main.c: the collc driver. Reads the input whole, runs the front end
 * (parse, sema) and then the command. Exit status: 0 success, 1 an error in
 * the input (reported as file:line:col), 2 a usage error.
 */
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "ir.h"

#ifndef COLLC_VERSION
#define COLLC_VERSION "0.1.0"
#endif

static const char usage[] =
	"usage: collc <command> [options] FILE\n"
	"\n"
	"collc compiles collective-communication schedules from .coll files.\n"
	"\n"
	"commands:\n"
	"  check FILE [--size S] [--json]\n"
	"                        parse and check FILE, build and verify every schedule, and\n"
	"                        print each one's rounds, volume, psi, theta, omega and\n"
	"                        model time for a vector of S bytes (default 1MiB)\n"
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

/* "1MiB", "64 KiB", "1048576": bytes, or -1. */
static double
parse_size(const char *text)
{
	char *end;
	double v = strtod(text, &end);
	if (end == text || v < 0)
		return -1;
	while (*end == ' ')
		end++;
	if (!*end)
		return v;
	int u = unit_find(end, strlen(end));
	if (u < 0 || unit_table[u].kind != Q_SIZE)
		return -1;
	return v * unit_table[u].factor;
}

static void
human_bytes(double b, char *buf, size_t len)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int k = 0;
	while (b >= 1024 && k < 4) {
		b /= 1024;
		k++;
	}
	snprintf(buf, len, k ? "%.2f %s" : "%.0f %s", b, unit[k]);
}

static void
human_time(double t, char *buf, size_t len)
{
	if (t < 1e-6)
		snprintf(buf, len, "%.1f ns", t * 1e9);
	else if (t < 1e-3)
		snprintf(buf, len, "%.2f us", t * 1e6);
	else if (t < 1)
		snprintf(buf, len, "%.3f ms", t * 1e3);
	else
		snprintf(buf, len, "%.3f s", t);
}

static const char *
algorithm_of(const Decl *d)
{
	for (int j = 0; j < d->body->nitem; j++)
		if (d->body->item[j].kind == IT_ALGORITHM)
			return d->body->item[j].flag ? "auto" : d->body->item[j].call->name;
	return "?";
}

typedef struct Row {
	const Decl *decl;
	const Sched *s;  /* NULL: not built */
	Metrics m;
} Row;

static void
json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(out, "\\u%04x", *s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

static void
print_json(const Row *rows, int n, FILE *out)
{
	fprintf(out, "{\"collectives\": [");
	for (int i = 0; i < n; i++) {
		const Row *r = &rows[i];
		const Sched *s = r->s;
		fprintf(out, "%s\n  {\"name\": ", i ? "," : "");
		json_string(out, r->decl->name);
		fprintf(out, ", \"kind\": ");
		json_string(out, r->decl->ckind);
		fprintf(out, ", \"algorithm\": ");
		json_string(out, algorithm_of(r->decl));
		if (!s) {
			fprintf(out, ", \"ranks\": null, \"chunks\": null, \"rounds\": null, "
			             "\"messages\": null, \"volume_bytes\": null, \"psi\": null, "
			             "\"theta\": null, \"omega\": null, \"group_order\": null, "
			             "\"link_orbits\": null, \"model_time_s\": null}");
			continue;
		}
		fprintf(out, ", \"ranks\": %d, \"chunks\": %d, \"rounds\": %d, \"messages\": %ld, "
		             "\"volume_bytes\": %.17g, \"psi\": %.17g, \"theta\": %.17g, "
		             "\"omega\": %.17g, ",
		        s->nrank, s->nchunk, r->m.rounds, r->m.messages, r->m.volume, r->m.psi,
		        r->m.theta, r->m.omega);
		if (s->group)
			fprintf(out, "\"group_order\": %d, \"link_orbits\": %d, ", s->group->order,
			        s->group->nlink_orbits);
		else
			fprintf(out, "\"group_order\": null, \"link_orbits\": null, ");
		fprintf(out, "\"model_time_s\": %.17g}", r->m.model_time);
	}
	fprintf(out, "\n]}\n");
}

static void
print_table(const char *path, const Row *rows, int n, double size, FILE *out)
{
	char sz[32];
	human_bytes(size, sz, sizeof sz);
	int built = 0;
	for (int i = 0; i < n; i++)
		built += rows[i].s != NULL;
	fprintf(out, "%s: %d collective%s, %d built and verified; model for %s\n", path, n,
	        n == 1 ? "" : "s", built, sz);
	if (n == 0)
		return;
	int w = 10;
	for (int i = 0; i < n; i++)
		if ((int)strlen(rows[i].decl->name) > w)
			w = (int)strlen(rows[i].decl->name);
	fprintf(out, "%-*s %-14s %-18s %6s %7s %6s %9s %12s %6s %6s %6s %6s %6s %12s\n", w,
	        "collective", "kind", "algorithm", "ranks", "chunks", "rounds", "messages", "volume",
	        "psi", "theta", "omega", "group", "orbits", "model time");
	for (int i = 0; i < n; i++) {
		const Row *r = &rows[i];
		fprintf(out, "%-*s %-14s %-18s ", w, r->decl->name, r->decl->ckind,
		        algorithm_of(r->decl));
		if (!r->s) {
			fprintf(out, "(no generator for this algorithm in this version)\n");
			continue;
		}
		char vol[32], tm[32], grp[16] = "-", orb[16] = "-";
		human_bytes(r->m.volume, vol, sizeof vol);
		human_time(r->m.model_time, tm, sizeof tm);
		if (r->s->group) {
			snprintf(grp, sizeof grp, "%d", r->s->group->order);
			snprintf(orb, sizeof orb, "%d", r->s->group->nlink_orbits);
		}
		fprintf(out, "%6d %7d %6d %9ld %12s %6.3f %6.3f %6.3f %6s %6s %12s\n", r->s->nrank,
		        r->s->nchunk, r->m.rounds, r->m.messages, vol, r->m.psi, r->m.theta, r->m.omega,
		        grp, orb, tm);
	}
}

static int
cmd_check(int argc, char **argv)
{
	const char *path = NULL;
	double size = 1 << 20;
	bool json = false;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--size") == 0) {
			if (++i >= argc || (size = parse_size(argv[i])) <= 0)
				return usage_error("check: --size takes a size such as 1MiB or 65536");
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return usage_error("check: unknown option '%s'", argv[i]);
		} else if (path) {
			return usage_error("check: one FILE, got also '%s'", argv[i]);
		} else {
			path = argv[i];
		}
	}
	if (!path)
		return usage_error("check: %s", "missing FILE");
	Input in = {0};
	int rc = front_end(path, &in);
	Prog prog = {0};
	if (rc == 0)
		rc = lower(in.file, &prog) != 0;
	Row *rows = NULL;
	int n = 0;
	if (rc == 0) {
		for (int i = 0; i < in.file->ndecl; i++)
			n += in.file->decl[i].kind == DC_COLLECTIVE;
		rows = calloc((size_t)n + 1, sizeof *rows);
		int k = 0, si = 0;
		for (int i = 0; i < in.file->ndecl; i++) {
			const Decl *d = &in.file->decl[i];
			if (d->kind != DC_COLLECTIVE)
				continue;
			rows[k].decl = d;
			if (si < prog.nsched && strcmp(prog.sched[si]->name, d->name) == 0)
				rows[k].s = prog.sched[si++];
			if (rows[k].s) {
				if (verify(rows[k].s) != 0)
					rc = 1;
				metrics(rows[k].s, size, &rows[k].m);
			} else {
				note_at(d->name_loc, "'%s' is checked but not built: collc has no generator "
				        "for algorithm '%s' yet", d->name, algorithm_of(d));
			}
			k++;
		}
	}
	if (rc == 0) {
		if (json)
			print_json(rows, n, stdout);
		else
			print_table(in.file->path, rows, n, size, stdout);
	}
	free(rows);
	prog_free(&prog);
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
