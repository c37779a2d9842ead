/*
 * driver.c: what every collc command shares: usage errors, reading and
 * building an input (a .coll file, or a schedule in the IR text format),
 * sizes on the command line, and writing an output whole.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "collc_limits.h"
#include "driver.h"
#include "to_sim.h"

/* The hint after a usage error: the command's own help when known. */
static int
usage_hint(const char *cmd, int len)
{
	if (cmd)
		fprintf(stderr, "\nTry 'collc %.*s --help'.\n", len, cmd);
	else
		fprintf(stderr, "\nTry 'collc --help'.\n");
	return 2;
}

int
usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "collc: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	/* "CMD: ..." points at the command's own help */
	const char *colon = strchr(fmt, ':');
	bool cmd = colon && colon - fmt < 16 && !memchr(fmt, ' ', (size_t)(colon - fmt)) && fmt[0] != '%';
	return usage_hint(cmd ? fmt : NULL, cmd ? (int)(colon - fmt) : 0);
}

void
no_schedule_named(Diag *dg, const Prog *p, const char *name)
{
	const char **names = xcalloc((size_t)p->nsched + 1, sizeof *names);
	for (int i = 0; i < p->nsched; i++)
		names[i] = p->sched[i]->name;
	const char *near = nearest_name(name, names, p->nsched);
	if (near)
		error_file(dg, "no schedule named '%s' is built from this file; did you mean '%s'?", name,
		           near);
	else
		error_file(dg, "no schedule named '%s' is built from this file", name);
	free(names);
}

int
verify_prog(Diag *dg, const Prog *p, const char *only, bool progress, bool full)
{
	int rc = 0, n = p->nsched;
	bool tty = progress && isatty(2);
	for (int i = 0; i < n; i++) {
		const Sched *s = p->sched[i];
		if (only && strcmp(s->name, only) != 0)
			continue;
		if (tty)
			fprintf(stderr, "\033[Kcheck: verifying '%s' (%d of %d) ...\r", s->name, i + 1, n);
		rc |= (full ? verify_full(dg, s) : verify(dg, s)) != 0;
	}
	if (tty)
		fputs("\033[K", stderr);
	return rc;
}

int
lower_verified(Diag *dg, File *f, Prog *p, const char *only, bool progress, bool full)
{
	if (lower(dg, f, p) != 0 || nerrors(dg) > 0)
		return 1;
	return verify_prog(dg, p, only, progress, full);
}

/* The usage error for a -D naming no parameter of f: its parameters, and
 * the nearest one. 2. */
static int
unknown_define(const File *f, const Defines *defs, int k)
{
	const char *names[MAX_PARAMS_FILE];
	char list[512] = "";
	size_t n = 0;
	int np = 0;
	for (int i = 0; i < f->ndecl; i++)
		if (f->decl[i].kind == DC_PARAM && np < MAX_PARAMS_FILE) {
			names[np] = f->decl[i].name;
			n += (size_t)snprintf(list + n, n < sizeof list ? sizeof list - n : 0, "%s%s",
			                      np ? ", " : "", names[np]);
			np++;
		}
	const char *near = nearest_name(defs->v[k].name, names, np);
	if (np == 0)
		return cmd_usage_error(defs->cmd, "-D %s: %s declares no parameters", defs->v[k].arg,
		                       f->path);
	if (near)
		return cmd_usage_error(defs->cmd,
		                       "-D %s: %s has no parameter '%s'; did you mean '%s'? (it has %s)",
		                       defs->v[k].arg, f->path, defs->v[k].name, near, list);
	return cmd_usage_error(defs->cmd, "-D %s: %s has no parameter '%s' (it has %s)",
	                       defs->v[k].arg, f->path, defs->v[k].name, list);
}

/* Reads, parses and checks; with `build`, lowers to the IR too (an IR
 * file is read instead). 0 when the file is clean. */
int
load(Diag *dg, const char *path, Input *in, bool build, double size)
{
	size_t len;
	char err[512];
	const char *shown = strcmp(path, "-") == 0 ? "<stdin>" : path;
	in->text = read_file(path, &len, err, sizeof err);
	if (!in->text) {
		fprintf(stderr, "collc: error: %s\n", err);
		return 1;
	}
	diag_source(dg, shown, in->text, len);
	if (build && ir_is_text(in->text, len)) {
		in->is_ir = true;
		if (ir_read(dg, in->text, len, &in->prog) != 0 || nerrors(dg) > 0)
			return 1;
		return verify_prog(dg, &in->prog, in->only, in->progress, in->full_verify);
	}
	size_t lead = strspn(in->text, " \t\r\n");
	if (lead < len && in->text[lead] == '<') {
		/* the lexer would report every '<' and '"' of it */
		fprintf(stderr, "collc: error: %s is MSCCL XML, not a .coll file: run it with 'collc run "
		        "%s', or simulate it with 'collc sim %s --topology T.coll'\n", shown, shown, shown);
		return 1;
	}
	in->file = parse_text(dg, &in->arena, shown, in->text, len);
	if (nerrors(dg) > 0)
		return 1;
	int unknown;
	int rc = check_file(dg, in->file, in->defs, &unknown);
	if (rc == 2)
		return unknown_define(in->file, in->defs, unknown);
	in->prog.auto_size = size;
	if (rc == 0 && build)
		rc = lower_verified(dg, in->file, &in->prog, in->only, in->progress, in->full_verify);
	if (nerrors(dg) > 0)
		params_note(dg, in->file, in->defs); /* which values made the file invalid */
	return rc != 0 || nerrors(dg) > 0;
}

int
define_opt(const char *cmd, Defines *defs, const char *value)
{
	char err[256];
	defs->cmd = cmd;
	if (defines_add(defs, value, err, sizeof err) != 0)
		return cmd_usage_error(cmd, "%s", err);
	return 0;
}

void
input_free(Input *in)
{
	prog_free(&in->prog);
	arena_free(&in->arena);
	free(in->text);
}

/* "1MiB", "64 KiB", "1048576": bytes, or -1. */
double
parse_quantity(const char *text, QtyKind kind)
{
	char *end;
	double v = strtod(text, &end);
	if (end == text || !(v >= 0 && v <= 1e300)) /* no nan, no inf */
		return -1;
	while (*end == ' ')
		end++;
	if (!*end)
		return v;
	int u = unit_find(end, strlen(end));
	if (u < 0 || unit_table[u].kind != kind)
		return -1;
	return v * unit_table[u].mul / unit_table[u].div;
}

double
parse_size(const char *text)
{
	return parse_quantity(text, Q_SIZE);
}

double
parse_bytes(const char *text)
{
	double v = parse_quantity(text, Q_SIZE);
	if (v > MAX_SIZE_BYTES)
		return -2;
	return v >= 1 && v == floor(v) ? v : -1;
}

int
size_usage(const char *cmd, const char *opt, const char *value, double got, const char *want)
{
	if (got == -2)
		fprintf(stderr, "collc: %s: --%s %s: beyond %s", cmd, opt, value, SIZE_LIMIT_TEXT);
	else
		fprintf(stderr, "collc: %s: --%s takes %s", cmd, opt, want);
	return usage_hint(cmd, (int)strlen(cmd));
}

void
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


int
write_output(const char *out, MemOut *m)
{
	char err[512];
	if (memout_write(m, out ? out : "-", err, sizeof err) != 0) {
		fprintf(stderr, "collc: error: %s\n", err);
		return 1;
	}
	return 0;
}

void
human_bytes(double b, char *buf, size_t len)
{
	bytes_in_units(b, 2, false, buf, len);
}

void
human_bytes_fixed(double b, char *buf, size_t len)
{
	bytes_in_units(b, 2, true, buf, len);
}

void
human_time(double t, char *buf, size_t len)
{
	if (t < 1e-6)
		snprintf(buf, len, "%.1f ns", t * 1e9);
	else if (t < 1e-3)
		snprintf(buf, len, "%.3f us", t * 1e6);
	else if (t < 1)
		snprintf(buf, len, "%.3f ms", t * 1e3);
	else
		snprintf(buf, len, "%.3f s", t);
}

/* One size of a list: its value, or -1 with the reason in err. */
static double
list_size(const char *tok, char *err, size_t errlen)
{
	double s = parse_bytes(tok);
	if (s == -2)
		snprintf(err, errlen, "'%s' is beyond %s", tok, SIZE_LIMIT_TEXT);
	else if (s < 1)
		snprintf(err, errlen, "'%s' is not a whole number of bytes, such as 64KiB", tok);
	return s < 1 ? -1 : s;
}

int
parse_size_list(const char *arg, double *sizes, int max, char *err, size_t errlen)
{
	size_t len = strlen(arg) + 1;
	char *buf = memcpy(xmalloc(len), arg, len); /* any length: no list is cut */
	int n = 0;
	char *dots = strstr(buf, "..");
	if (dots) {
		*dots = 0;
		double lo = list_size(buf, err, errlen), hi = lo < 1 ? -1 : list_size(dots + 2, err, errlen);
		if (lo >= 1 && hi >= 1 && hi < lo)
			snprintf(err, errlen, "%s..%s: the range ends below its start", buf, dots + 2);
		for (double s = lo; lo >= 1 && hi >= lo && s <= hi * (1 + 1e-12); s *= 2) {
			if (n == max) {
				snprintf(err, errlen, "%s..%s has more than %d sizes, the most one run takes",
				         buf, dots + 2, max);
				n = -1;
				break;
			}
			sizes[n++] = floor(s);
		}
		free(buf);
		return lo >= 1 && hi >= lo ? n : -1;
	}
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok && n >= 0; tok = strtok_r(NULL, ",", &save)) {
		if (n == max) {
			snprintf(err, errlen, "more than %d sizes, the most one run takes", max);
			n = -1;
		} else if ((sizes[n] = list_size(tok, err, errlen)) < 1) {
			n = -1;
		} else {
			n++;
		}
	}
	if (n == 0)
		snprintf(err, errlen, "'%s' names no size", arg);
	free(buf);
	return n > 0 ? n : -1;
}

int
sizes_opt(const char *cmd, const char *value, double *sizes, int *n)
{
	char err[256];
	if ((*n = parse_size_list(value, sizes, MAX_SIZES, err, sizeof err)) < 0)
		return cmd_usage_error(cmd, "--sizes: %s; it takes A..B (powers of two from A to B) or a "
		                       "list A,B,C of whole numbers of bytes", err);
	return 0;
}

const Sched *
sched_for_size(Diag *dg, SizedFile *z, double size, const Sched *s)
{
	if (!s->size_chosen || size == z->base)
		return s;
	int i = 0;
	while (i < z->nin && z->size[i] != size)
		i++;
	if (i == z->nin) {
		if (z->nin == z->cap) {
			z->cap = z->cap ? 2 * z->cap : 8;
			z->in = xrealloc(z->in, (size_t)z->cap * sizeof *z->in);
			z->size = xrealloc(z->size, (size_t)z->cap * sizeof *z->size);
		}
		z->in[i] = (Input){.prog.compact = true, .prog.listed = z->listed, .defs = z->defs};
		z->size[i] = size;
		z->nin++;
		if (load(dg, z->path, &z->in[i], true, size) != 0)
			return NULL;
	}
	for (int j = 0; j < z->in[i].prog.nsched; j++)
		if (strcmp(z->in[i].prog.sched[j]->name, s->name) == 0)
			return z->in[i].prog.sched[j];
	return NULL;
}

void
sized_free(SizedFile *z)
{
	for (int i = 0; i < z->nin; i++)
		input_free(&z->in[i]);
	free(z->in);
	free(z->size);
	*z = (SizedFile){0};
}

const char *
sched_label(Arena *a, const char *prefix, const Sched *s)
{
	return s->choice ? arena_printf(a, "%s%s (%s)", prefix, s->algorithm, s->choice)
	                 : arena_printf(a, "%s%s", prefix, s->algorithm);
}

AlgCtx
alg_ctx_of(Diag *dg, Arena *a, const Sched *s, Routes *routes)
{
	AlgCtx c = alg_ctx_new(dg, a, s->name, s->loc, s->kind, s->topo, routes, s->rank_node, s->nrank);
	c.root = s->root;
	c.pack_group = s->pack_group;
	return c;
}

int
sched_to_sim(Diag *dg, Arena *a, const Sched *s, SimSync sync, SimNet *net)
{
	return (sync == SIM_ROUNDS ? sim_stream_scheds : sim_from_scheds)(dg, a, &s, 1, net);
}

bool
simulate_one(Diag *dg, Arena *a, const Sched *s, double size, const SimOpts *o, Simulated *x)
{
	x->s = s;
	x->net = NEW(a, SimNet);
	char err[512];
	diag_mute(dg, true);
	bool ok = sched_to_sim(dg, a, s, o->sync, x->net) == 0 &&
	          (o->sync != SIM_DEPS || x->net->coll[0].has_deps) &&
	          sim_run(a, x->net, 0, (int64_t)size, o, &x->r, err, sizeof err) == 0;
	diag_mute(dg, false);
	return ok;
}

int
simulate_candidates(Diag *dg, Arena *a, Routes *routes, PackMemo *memo, const Sched *s, double size,
                    const SimOpts *o, Simulated *out)
{
	AlgCtx c = alg_ctx_of(dg, a, s, routes);
	c.size = size;
	c.pack_memo = memo;
	c.compact = true; /* symmetric forms stream */
	c.listed = o->sync == SIM_DEPS; /* every message at once: packing's segments listed */
	const char *names[NALG];
	Sched *cand[NALG];
	int n = alg_auto(&c, cand, names, NALG), m = 0;
	for (int i = 0; i < n; i++)
		if (simulate_one(dg, a, cand[i], size, o, &out[m])) {
			out[m].net->coll[0].name = s->name;
			m++;
		}
	return m;
}

int
fastest(const Simulated *out, int n)
{
	int best = -1;
	for (int i = 0; i < n; i++)
		if (best < 0 || out[i].r.time_s < out[best].r.time_s)
			best = i;
	return best;
}

int
sim_mode_opt(const char *cmd, const char *name, const char *value, SimOpts *o)
{
	static const char *const modes[] = {"packet", "flow"}, *const syncs[] = {"rounds", "deps"};
	bool mode = strcmp(name, "mode") == 0;
	int k = cli_choice(cmd, name, value, mode ? modes : syncs, 2);
	if (k < 0)
		return 2;
	if (mode)
		o->mode = k ? SIM_FLOW : SIM_PACKET;
	else
		o->sync = k ? SIM_DEPS : SIM_ROUNDS;
	return 0;
}

bool
is_svg_name(const char *path)
{
	size_t n = strlen(path);
	return n > 4 && strcmp(path + n - 4, ".svg") == 0;
}
