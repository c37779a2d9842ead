/*
 * cmd_sweep.c: `collc sweep SPEC`: simulate a grid of collectives (docs/sweep.md).
 *
 * SPEC is a small line-based file: each line is a key and a comma-separated
 * list (commas inside parentheses belong to the value), e.g.
 *
 *   topology  torus(8, 8), torus(4, 4, 4)
 *   groups    2, 4, 8, 16
 *   allreduce ring, ring(ports 2), halving_doubling
 *   routing   shortest_path, dor
 *   link_bandwidth 400 GBps
 *   sizes     64KiB..4MiB
 *
 * The grid is every topology x group x (collective, algorithm) x routing x
 * network variant x size; a group of g is ranks 0..g-1 (consecutive ids,
 * row-major). Or the spec names a .coll file (`file`) and some of its
 * collectives (`collectives`, default all): the grid is then every such
 * collective, on its own topology and ranks, x routing x network x size,
 * the spec's routing and network values replacing the file's. Each
 * configuration but the size is a "unit": a .coll text (or the file, with
 * the other collectives left out) parsed and checked once, then lowered
 * for each size (so `auto`, pipelined_trees' segments and bridge's
 * reconfigurations are chosen for that size: a row does not depend on the
 * other sizes), verified and simulated. Points are numbered in that nesting
 * order (size fastest). A point that cannot be built or simulated is an
 * error located at the spec line to blame; nothing is written.
 *
 * Work is spread over worker processes (fork), one record per point coming
 * back through a pipe; the parent keeps the rows by point number, so the
 * output does not depend on which worker ran what. `--shard i/n` keeps the
 * points p with p mod n = i; `--merge` sorts shards' rows by point number,
 * which gives the one-machine file byte for byte.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "driver.h"
#include "perf.h"
#include "simbuild.h"
#include "svgplot.h"

enum { MAX_VALUES = 64, MAX_WORKERS = 64, NOTE_LEN = 160, MAX_PAIRS = NCOLLKIND * MAX_VALUES };

/* The network keys a spec may list, in column order. */
static const char *const net_keys[] = {"link_bandwidth", "link_latency", "router_latency",
                                       "step_overhead", "mtu"};
enum { NNET = 5 };

typedef struct List {
	char *v[MAX_VALUES];
	Loc at[MAX_VALUES]; /* where each value is in the spec */
	Loc key;            /* its key's line (line 0: not in the spec) */
	int n;
} List;

/* One (collective, algorithm) of the grid: a library algorithm of a kind,
 * or a collective of the spec's .coll file. */
typedef struct Pair {
	int kind;           /* CollKind */
	const char *alg;    /* the `algorithm` column: as written */
	const char *name;   /* file: the collective's name */
	const char *topo;   /* file: its topology's form */
	const char *route;  /* file: its own routing */
	int decl;           /* file: its declaration */
	Loc at;             /* where the spec names it */
} Pair;

/* The spec's .coll file, parsed and checked once (workers inherit it). */
typedef struct CollFile {
	const char *path;
	char *text;
	size_t len;
	Arena arena;
	File *f;
} CollFile;

typedef struct Spec {
	const char *path;
	char *orig;                /* the spec as read, for diagnostics */
	size_t orig_len;
	List topo, groups, routing, net[NNET], file, colls;
	List alg[NCOLLKIND];       /* per collective kind: its algorithms */
	double sizes[MAX_VALUES];
	Loc sizes_at;
	int nsize;
	SimOpts opts;
	bool route_given;          /* a routing line (file: else each collective's own) */
	CollFile cf;               /* file mode when cf.f */
	const Block *net_block[NNET][MAX_VALUES]; /* file: `network { key = value; }` */
	Arena mem;                 /* labels, net blocks */
	/* derived: the units in order */
	int nunit;
	int per_topo, per_group, per_pair, per_route; /* strides of the nesting */
	int npair;
	Pair pair[MAX_PAIRS];
} Spec;

/* One unit decoded from its number. */
typedef struct Unit {
	int topo, group, pair, route, net[NNET];
} Unit;

/* What a worker sends back for one point (one write, under PIPE_BUF). */
typedef struct Record {
	int point;
	bool ok;
	int nrank;
	double time_s;
	Loc at;            /* failed: the spec's value to blame */
	Loc coll_at;       /* failed in the .coll file: where collc's message points */
	char note[NOTE_LEN]; /* ok: auto's choice; failed: collc's message */
} Record;

/* ---- the spec file ---- */

static char *
trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	char *e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

/* Splits at commas outside parentheses, noting where each value starts
 * (bol: its line's first byte); 0, or -1 if too many values. */
static int
split_list(char *text, List *l, const char *bol, int line)
{
	l->n = 0;
	int depth = 0;
	char *start = text;
	for (char *p = text;; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		if (*p == 0 || (*p == ',' && depth == 0)) {
			bool end = *p == 0;
			*p = 0;
			char *v = trim(start);
			if (*v) {
				if (l->n == MAX_VALUES)
					return -1;
				l->at[l->n] = (Loc){line, (int)(v - bol) + 1};
				l->v[l->n++] = v;
			}
			if (end)
				return 0;
			start = p + 1;
		}
	}
}

static int spec_error(const Spec *, Loc, const char *fmt, ...) PRINTF_LIKE(3, 4);

/* A located error in the spec (its line quoted, a caret); -1. */
static int
spec_error(const Spec *s, Loc at, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	diag_source(s->path, s->orig, s->orig_len);
	error_at(at, "%s", msg);
	return -1;
}

static int
spec_sizes(Spec *s, const List *l)
{
	s->nsize = 0;
	for (int i = 0; i < l->n; i++) {
		char *dots = strstr(l->v[i], "..");
		double lo, hi;
		if (dots) {
			*dots = 0;
			lo = parse_size(l->v[i]), hi = parse_size(dots + 2);
		} else {
			lo = hi = parse_size(l->v[i]);
		}
		if (lo < 1 || hi < lo)
			return spec_error(s, l->at[i], "sizes: '%s' is not a size or a range A..B",
			                  l->v[i]);
		for (double v = lo; v <= hi * (1 + 1e-12); v *= 2) {
			if (s->nsize == MAX_VALUES)
				return spec_error(s, l->at[i], "sizes: more than %s sizes", "64");
			s->sizes[s->nsize++] = floor(v);
		}
	}
	return 0;
}

static int
spec_option(Spec *s, Loc at, const char *key, const char *val)
{
	if (strcmp(key, "mode") == 0 && (strcmp(val, "packet") == 0 || strcmp(val, "flow") == 0)) {
		s->opts.mode = val[0] == 'p' ? SIM_PACKET : SIM_FLOW;
		return 0;
	}
	if (strcmp(key, "sync") == 0 && (strcmp(val, "rounds") == 0 || strcmp(val, "deps") == 0)) {
		s->opts.sync = val[0] == 'r' ? SIM_ROUNDS : SIM_DEPS;
		return 0;
	}
	if (strcmp(key, "links") == 0 && (strcmp(val, "shared") == 0 || strcmp(val, "private") == 0)) {
		s->opts.private_links = val[0] == 'p';
		return 0;
	}
	if (strcmp(key, "mode") == 0 || strcmp(key, "sync") == 0 || strcmp(key, "links") == 0)
		return spec_error(s, at, "'%s' takes packet|flow, rounds|deps or shared|private", key);
	return spec_error(s, at, "unknown key '%s' (topology, groups, a collective kind, file, "
	                  "collectives, routing, link_bandwidth, link_latency, router_latency, "
	                  "step_overhead, mtu, sizes, mode, sync, links)", key);
}

static List *
spec_list(Spec *s, const char *key)
{
	static const struct { const char *key; size_t off; } keys[] = {
		{"topology", offsetof(Spec, topo)},   {"groups", offsetof(Spec, groups)},
		{"routing", offsetof(Spec, routing)}, {"file", offsetof(Spec, file)},
		{"collectives", offsetof(Spec, colls)}};
	for (size_t k = 0; k < countof(keys); k++)
		if (strcmp(key, keys[k].key) == 0)
			return (List *)((char *)s + keys[k].off);
	for (int k = 0; k < NNET; k++)
		if (strcmp(key, net_keys[k]) == 0)
			return &s->net[k];
	for (int k = 0; k < NCOLLKIND; k++)
		if (strcmp(key, coll_kind_name[k]) == 0)
			return &s->alg[k];
	return NULL;
}

/* ---- checking a value as a .coll file would hold it ---- */

/* The first error of a captured diagnostic: its message (after "error: ")
 * into note, and where it points in the file `name` (line 0: nowhere). */
static Loc
first_error(const char *diag, const char *name, char *note)
{
	Loc at = {0, 0};
	const char *e = strstr(diag, "error: ");
	if (e) {
		const char *bol = e;
		while (bol > diag && bol[-1] != '\n')
			bol--;
		size_t n = strlen(name);
		int line, col;
		if (n && strncmp(bol, name, n) == 0 && sscanf(bol + n, ":%d:%d:", &line, &col) == 2)
			at = (Loc){line, col};
		e += 7;
	} else {
		e = diag;
	}
	size_t n = strcspn(e, "\n");
	if (n >= NOTE_LEN)
		n = NOTE_LEN - 1;
	memcpy(note, e, n);
	note[n] = 0;
	for (char *c = note; *c; c++)
		if (*c == '"' || *c == '\\')
			*c = '\'';
	return at;
}

/* A spec value checked as the language checks it: `before value after`
 * parsed and checked as a .coll text; an error is reported at the value in
 * the spec. Returns the checked file (in s->mem), or NULL after the error. */
static File *
check_value(Spec *s, Loc at, const char *before, const char *value, const char *after)
{
	char *text = arena_printf(&s->mem, "%s%s%s", before, value, after);
	const char *nl = strrchr(before, '\n');
	int vline = 1, vcol = (int)strlen(nl ? nl + 1 : before) + 1;
	for (const char *c = before; *c; c++)
		vline += *c == '\n';
	MemOut diag;
	diag_reset();
	diag_stream(memout_open(&diag));
	diag_source("value.coll", text, strlen(text));
	File *f = parse_text(&s->mem, "value.coll", text, strlen(text));
	if (nerrors() == 0)
		sema(f);
	fflush(diag.f);
	diag_stream(stderr);
	char note[NOTE_LEN];
	Loc e = first_error(diag.buf ? diag.buf : "", "value.coll", note);
	memout_drop(&diag);
	if (nerrors() == 0)
		return f;
	diag_reset();
	int off = e.line == vline && e.col > vcol ? e.col - vcol : 0;
	if (off >= (int)strlen(value))
		off = 0;
	spec_error(s, (Loc){at.line, at.col + off}, "%s", note);
	return NULL;
}

static const Item *
item_in(const Block *b, ItemKind kind)
{
	for (int i = 0; b && i < b->nitem; i++)
		if (b->item[i].kind == kind)
			return &b->item[i];
	return NULL;
}

/* Network values and routing policies checked once; a file's units take
 * the network values as parsed blocks. */
static int
spec_check_values(Spec *s)
{
	for (int k = 0; k < NNET; k++)
		for (int i = 0; i < s->net[k].n; i++) {
			char before[64];
			snprintf(before, sizeof before, "network {\n    %s = ", net_keys[k]);
			File *f = check_value(s, s->net[k].at[i], before, s->net[k].v[i], ";\n}\n");
			if (!f)
				return -1;
			/* one value, not more text (a file's units take the item itself) */
			const Block *b = f->ndecl == 1 ? f->decl[0].body : NULL;
			if (!b || b->nitem != 1)
				return spec_error(s, s->net[k].at[i], "%s: '%s' is not one value", net_keys[k],
				                  s->net[k].v[i]);
			s->net_block[k][i] = b;
		}
	for (int i = 0; i < s->routing.n; i++) {
		File *f = check_value(s, s->routing.at[i], "topology T = ring(2);\ncollective allreduce "
		                      "X on T {\n    algorithm ring;\n    routing ", s->routing.v[i],
		                      ";\n}\n");
		if (!f)
			return -1;
		const Item *r = f->ndecl == 2 ? item_in(f->decl[1].body, IT_ROUTING) : NULL;
		if (!r || strcmp(r->name, s->routing.v[i]) != 0)
			return spec_error(s, s->routing.at[i], "routing: '%s' is not one policy",
			                  s->routing.v[i]);
	}
	return 0;
}

/* ---- a spec naming a .coll file ---- */

/* A label printed by fmt (a form as written), kept in s->mem. */
static const char *
form_label(Spec *s, const Call *c)
{
	MemOut m;
	fmt_call(c, memout_open(&m));
	memout_close(&m);
	return arena_own(&s->mem, m.buf);
}

/* The `algorithm` column of a file's collective: its algorithm as written,
 * or `schedule` and the schedule's modifiers. */
static const char *
alg_label(Spec *s, const Decl *d)
{
	MemOut m;
	FILE *f = memout_open(&m);
	for (int i = 0; d->body && i < d->body->nitem; i++) {
		const Item *it = &d->body->item[i];
		if (it->kind == IT_ALGORITHM)
			fmt_call(it->flag ? NULL : it->call, f);
		if (it->kind != IT_SCHEDULE)
			continue;
		fputs("schedule", f);
		for (int k = 0; k < it->sched->nmod; k++) {
			fputc(' ', f);
			fmt_call(it->sched->mod[k], f);
		}
	}
	memout_close(&m);
	return arena_own(&s->mem, m.buf);
}

static int
add_file_pair(Spec *s, int decl, Loc at)
{
	const Decl *d = &s->cf.f->decl[decl];
	if (s->npair == MAX_PAIRS)
		return spec_error(s, at, "more than %d collectives", MAX_PAIRS);
	int kind = 0;
	for (int k = 0; k < NCOLLKIND; k++)
		if (strcmp(coll_kind_name[k], d->ckind) == 0)
			kind = k;
	const Item *route = item_in(d->body, IT_ROUTING);
	s->pair[s->npair++] = (Pair){.kind = kind, .alg = alg_label(s, d), .name = d->name,
	            .topo = form_label(s, d->topo->form),
	            .route = route ? route->name : "shortest_path", .decl = decl, .at = at};
	return 0;
}

/* The collectives the spec names (or all of the file's), as pairs. */
static int
file_pairs(Spec *s)
{
	const File *f = s->cf.f;
	const char *names[MAX_PAIRS];
	int nname = 0;
	for (int i = 0; i < f->ndecl && nname < MAX_PAIRS; i++)
		if (f->decl[i].kind == DC_COLLECTIVE)
			names[nname++] = f->decl[i].name;
	if (!nname)
		return spec_error(s, s->file.at[0], "%s declares no collective", s->cf.path);
	if (!s->colls.n || (s->colls.n == 1 && strcmp(s->colls.v[0], "all") == 0)) {
		Loc at = s->colls.n ? s->colls.at[0] : s->file.at[0];
		for (int i = 0; i < f->ndecl; i++)
			if (f->decl[i].kind == DC_COLLECTIVE && add_file_pair(s, i, at) != 0)
				return -1;
		return 0;
	}
	for (int k = 0; k < s->colls.n; k++) {
		int d = -1;
		for (int i = 0; i < f->ndecl && d < 0; i++)
			if (f->decl[i].kind == DC_COLLECTIVE && strcmp(f->decl[i].name, s->colls.v[k]) == 0)
				d = i;
		for (int j = 0; j < k; j++)
			if (strcmp(s->colls.v[j], s->colls.v[k]) == 0)
				return spec_error(s, s->colls.at[k], "collective '%s' is named twice",
				                  s->colls.v[k]);
		const char *near = d < 0 ? nearest_name(s->colls.v[k], names, nname) : NULL;
		if (d < 0)
			return spec_error(s, s->colls.at[k], "%s declares no collective '%s'%s%s%s",
			                  s->cf.path, s->colls.v[k], near ? "; did you mean '" : "",
			                  near ? near : "", near ? "'?" : " (name its collectives, or 'all')");
		if (add_file_pair(s, d, s->colls.at[k]) != 0)
			return -1;
	}
	return 0;
}

/* A network value the spec sweeps and a topology of the file sets itself
 * (its `network` block or a link's) would not change that topology:
 * refused, not silently ignored. */
static int
file_net_conflicts(Spec *s)
{
	for (int i = 0; i < s->npair; i++) {
		const Decl *t = s->cf.f->decl[s->pair[i].decl].topo;
		for (int j = 0; t->body && j < t->body->nitem; j++) {
			const Item *it = &t->body->item[j];
			const Block *b = it->kind == IT_NETWORK || it->kind == IT_LINK ? it->body : NULL;
			for (int m = 0; b && m < b->nitem; m++)
				for (int k = 0; k < NNET; k++)
					if (s->net[k].n && b->item[m].kind == IT_PARAM &&
					    strcmp(b->item[m].name, net_keys[k]) == 0)
						return spec_error(s, s->net[k].key, "topology '%s' sets its own %s "
						                  "(%s:%d), which the spec's values would not "
						                  "change", t->name, net_keys[k], s->cf.path,
						                  b->item[m].loc.line);
		}
	}
	return 0;
}

/* The file, beside the spec unless absolute: read, parsed and checked. */
static int
spec_file(Spec *s)
{
	CollFile *c = &s->cf;
	const char *v = s->file.v[0], *slash = strrchr(s->path, '/');
	c->path = v[0] == '/' || !slash ? v
	                                : arena_printf(&s->mem, "%.*s%s", (int)(slash - s->path + 1),
	                                               s->path, v);
	char err[512];
	c->text = read_file(c->path, &c->len, err, sizeof err);
	if (!c->text)
		return spec_error(s, s->file.at[0], "%s", err);
	diag_reset();
	diag_source(c->path, c->text, c->len);
	File *f = parse_text(&c->arena, c->path, c->text, c->len);
	if (nerrors() == 0)
		sema(f);
	if (nerrors() > 0)
		return -1; /* reported in the file */
	c->f = f;
	return file_pairs(s) != 0 || file_net_conflicts(s) != 0 ? -1 : 0;
}

/* A file's collectives keep their topologies and ranks: the keys that set
 * them are refused. */
static int
file_axes(Spec *s)
{
	const List *no[2 + NCOLLKIND] = {&s->topo, &s->groups};
	const char *name[2 + NCOLLKIND] = {"topology", "groups"};
	for (int k = 0; k < NCOLLKIND; k++)
		no[2 + k] = &s->alg[k], name[2 + k] = coll_kind_name[k];
	for (size_t i = 0; i < countof(no); i++)
		if (no[i]->key.line)
			return spec_error(s, no[i]->key, "'%s' does not combine with `file`: the file's "
			                  "collectives keep their topologies, ranks and algorithms, and "
			                  "are swept over routing, network values and sizes", name[i]);
	if (s->file.n > 1)
		return spec_error(s, s->file.at[1], "%s", "one .coll file per spec");
	return 0;
}

/* ---- the grid ---- */

/* Library mode: the (collective, algorithm) pairs and the defaults. */
static int
library_pairs(Spec *s)
{
	static char dflt_group[] = "all";
	if (s->colls.key.line)
		return spec_error(s, s->colls.key, "%s", "'collectives' names collectives of the "
		                  "spec's .coll file: add a `file` line");
	if (!s->topo.n)
		return spec_error(s, (Loc){0, 0}, "%s", "a spec needs a topology line (or a `file` "
		                  "line) and a sizes line");
	if (!s->groups.n)
		s->groups.v[s->groups.n++] = dflt_group;
	s->npair = 0;
	for (int k = 0; k < NCOLLKIND; k++)
		for (int i = 0; i < s->alg[k].n; i++)
			s->pair[s->npair++] = (Pair){.kind = k, .alg = s->alg[k].v[i], .decl = -1,
			                             .at = s->alg[k].at[i]};
	if (!s->npair)
		return spec_error(s, (Loc){0, 0}, "%s", "a spec needs a line of algorithms for a "
		                  "collective kind, e.g. 'allreduce ring, halving_doubling', or a "
		                  "`file` line");
	for (int i = 0; i < s->groups.n; i++) {
		char *end;
		long g = strtol(s->groups.v[i], &end, 10);
		if (strcmp(s->groups.v[i], "all") != 0 && (*end || g < 1 || g > 1 << 20))
			return spec_error(s, s->groups.at[i], "groups: '%s' is not a rank count or 'all'",
			                  s->groups.v[i]);
	}
	return 0;
}

/* The pairs, the defaults and the strides of the unit numbering. */
static int
spec_finish(Spec *s)
{
	static char dflt_route[] = "shortest_path", none[] = "", dflt_group[] = "all";
	if (!s->nsize)
		return spec_error(s, (Loc){0, 0}, "%s", "a spec needs a sizes line");
	s->route_given = s->routing.n > 0;
	if (spec_check_values(s) != 0)
		return -1;
	if (s->file.n) {
		if (file_axes(s) != 0 || spec_file(s) != 0)
			return -1;
		/* one topology and group each: the file's, per collective */
		s->topo.v[s->topo.n++] = none;
		s->groups.v[s->groups.n++] = dflt_group;
	} else if (library_pairs(s) != 0) {
		return -1;
	}
	if (!s->routing.n)
		s->routing.v[s->routing.n++] = s->file.n ? none : dflt_route;
	int nnet = 1;
	for (int k = 0; k < NNET; k++)
		nnet *= s->net[k].n ? s->net[k].n : 1;
	s->per_route = nnet;
	s->per_pair = s->per_route * s->routing.n;
	s->per_group = s->per_pair * s->npair;
	s->per_topo = s->per_group * s->groups.n;
	double units = (double)s->per_topo * s->topo.n;
	if (units * s->nsize > 1e7)
		return spec_error(s, (Loc){0, 0}, "%s", "the grid has more than 10^7 points");
	s->nunit = (int)units;
	return 0;
}

/* Reads SPEC; the text stays allocated (the lists point into it). */
static int
spec_read(const char *path, Spec *s, char **textp)
{
	char err[512];
	size_t len;
	char *text = read_file(path, &len, err, sizeof err);
	if (!text) {
		fprintf(stderr, "collc: error: %s\n", err);
		return -1;
	}
	*textp = text;
	s->path = path;
	s->orig = xmalloc(len + 1);
	memcpy(s->orig, text, len + 1);
	s->orig_len = len;
	int line = 0;
	for (char *p = text, *nl; p && *p; p = nl) {
		nl = strchr(p, '\n');
		if (nl)
			*nl++ = 0;
		line++;
		char *hash = strchr(p, '#');
		if (hash)
			*hash = 0;
		char *l = trim(p);
		if (!*l)
			continue;
		char *key = l;
		Loc at = {line, (int)(key - p) + 1};
		while (*l && *l != ' ' && *l != '\t' && *l != ':')
			l++;
		if (*l)
			*l++ = 0;
		if (*l == ':')
			l++;
		char *val = trim(l);
		List *list = spec_list(s, key);
		if (strcmp(key, "sizes") == 0) {
			List sizes;
			s->sizes_at = at;
			split_list(val, &sizes, p, line);
			if (spec_sizes(s, &sizes) != 0)
				return -1;
		} else if (list) {
			if (split_list(val, list, p, line) != 0)
				return spec_error(s, at, "'%s': more than 64 values", key);
			list->key = at;
		} else if (spec_option(s, at, key, val) != 0) {
			return -1;
		}
	}
	return spec_finish(s);
}

static Unit
unit_of(const Spec *s, int u)
{
	Unit x = {.topo = u / s->per_topo, .group = u % s->per_topo / s->per_group,
	          .pair = u % s->per_group / s->per_pair, .route = u % s->per_pair / s->per_route};
	int rest = u % s->per_route;
	for (int k = NNET - 1; k >= 0; k--) {
		int n = s->net[k].n ? s->net[k].n : 1;
		x.net[k] = rest % n;
		rest /= n;
	}
	return x;
}

/* ---- one unit: a .coll text, or the file, checked once ---- */

/* A value of the generated text and the spec value it came from. */
typedef struct Seg {
	int line, col, len;
	Loc at;
	bool exact; /* the spec's text itself (else only its start is meant) */
} Seg;

typedef struct Source {
	Arena arena;
	char *text;          /* library: the generated .coll text */
	const char *name;    /* what diagnostics call it */
	File *f;
	Seg seg[2 * NNET + 8];
	int nseg, line, col; /* the text written so far */
	FILE *out;
} Source;

/* Appends text; a spec value (at.line > 0) is remembered as a segment. */
static void
put(Source *g, const char *text, Loc at, bool exact)
{
	if (at.line > 0 && g->nseg < (int)countof(g->seg))
		g->seg[g->nseg++] = (Seg){g->line, g->col, (int)strlen(text), at, exact};
	fputs(text, g->out);
	for (const char *c = text; *c; c++) {
		g->col = *c == '\n' ? 1 : g->col + 1;
		g->line += *c == '\n';
	}
}

/* Library mode: the unit as a .coll text, each spec value on record. */
static void
unit_coll(const Spec *s, const Unit *x, Source *g)
{
	MemOut m;
	g->out = memout_open(&m);
	g->line = g->col = 1;
	Loc none = {0, 0};
	put(g, "network {", none, false);
	for (int k = 0; k < NNET; k++)
		if (s->net[k].n) {
			put(g, " ", none, false);
			put(g, net_keys[k], none, false);
			put(g, " = ", none, false);
			put(g, s->net[k].v[x->net[k]], s->net[k].at[x->net[k]], true);
			put(g, ";", none, false);
		}
	put(g, " }\ntopology T = ", none, false);
	put(g, s->topo.v[x->topo], s->topo.at[x->topo], true);
	const Pair *p = &s->pair[x->pair];
	put(g, ";\ncollective ", none, false);
	put(g, coll_kind_name[p->kind], none, false);
	put(g, " X on T {\n    algorithm ", none, false);
	put(g, p->alg, p->at, true);
	put(g, ";\n", none, false);
	if (strcmp(s->groups.v[x->group], "all") != 0) {
		char ranks[32];
		snprintf(ranks, sizeof ranks, "0..%ld", strtol(s->groups.v[x->group], NULL, 10) - 1);
		put(g, "    ranks ", none, false);
		put(g, ranks, s->groups.at[x->group], false);
		put(g, ";\n", none, false);
	}
	put(g, "    routing ", none, false);
	put(g, s->routing.v[x->route], s->routing.at[x->route], true);
	put(g, ";\n}\n", none, false);
	memout_close(&m);
	g->text = m.buf;
}

/* Where in the spec a location of the generated text comes from. */
static Loc
spec_loc_of(const Source *g, Loc gen, Loc fallback)
{
	for (int i = 0; i < g->nseg; i++) {
		const Seg *sg = &g->seg[i];
		if (gen.line != sg->line || gen.col < sg->col || gen.col > sg->col + sg->len)
			continue;
		int off = sg->exact && gen.col < sg->col + sg->len ? gen.col - sg->col : 0;
		return (Loc){sg->at.line, sg->at.col + off};
	}
	return fallback;
}

/* A block with the spec's network values in place of the file's (or the
 * file-wide block when the file has none). */
static Block *
net_override(const Spec *s, const Unit *x, const Block *file, Arena *a)
{
	Block *b = NEW(a, Block);
	int n = (file ? file->nitem : 0) + NNET;
	b->item = arena_array(a, (size_t)n, sizeof *b->item);
	for (int i = 0; file && i < file->nitem; i++) {
		bool swept = false;
		for (int k = 0; k < NNET; k++)
			swept |= s->net[k].n && file->item[i].kind == IT_PARAM &&
			         strcmp(file->item[i].name, net_keys[k]) == 0;
		if (!swept)
			b->item[b->nitem++] = file->item[i];
	}
	for (int k = 0; k < NNET; k++)
		if (s->net[k].n)
			b->item[b->nitem++] = s->net_block[k][x->net[k]]->item[0];
	b->capitem = b->nitem;
	return b;
}

/* The collective's block with the unit's routing in place of its own. */
static Block *
route_override(const Spec *s, const Unit *x, const Decl *d, Arena *a)
{
	const Block *old = d->body;
	Block *b = NEW(a, Block);
	*b = *old;
	b->item = arena_array(a, (size_t)old->nitem + 1, sizeof *b->item);
	b->nitem = 0;
	for (int i = 0; i < old->nitem; i++)
		if (old->item[i].kind != IT_ROUTING)
			b->item[b->nitem++] = old->item[i];
	b->item[b->nitem++] = (Item){.kind = IT_ROUTING, .loc = d->loc, .end_line = d->loc.line,
	                             .name = s->routing.v[x->route], .name_loc = d->loc};
	b->capitem = b->nitem;
	return b;
}

/* File mode: the file with the unit's collective only (the others are
 * not built), its routing and network values from the spec. The copies'
 * topology pointers follow the declarations into the new array. */
static File *
unit_file(const Spec *s, const Unit *x, Arena *a)
{
	const File *f = s->cf.f;
	const Pair *p = &s->pair[x->pair];
	File *u = NEW(a, File);
	*u = *f;
	u->decl = arena_array(a, (size_t)f->ndecl + 1, sizeof *u->decl);
	int *to = arena_array(a, (size_t)f->ndecl + 1, sizeof *to);
	bool swept = false, has_net = false;
	for (int k = 0; k < NNET; k++)
		swept |= s->net[k].n > 0;
	for (int i = 0; i < f->ndecl; i++)
		has_net |= f->decl[i].kind == DC_NETWORK;
	u->ndecl = 0;
	if (swept && !has_net)
		u->decl[u->ndecl++] = (Decl){.kind = DC_NETWORK, .body = net_override(s, x, NULL, a)};
	for (int i = 0; i < f->ndecl; i++) {
		to[i] = -1;
		if (f->decl[i].kind == DC_COLLECTIVE && i != p->decl)
			continue;
		to[i] = u->ndecl;
		Decl *d = &u->decl[u->ndecl++];
		*d = f->decl[i];
		if (d->kind == DC_NETWORK && swept)
			d->body = net_override(s, x, d->body, a);
		if (d->kind == DC_COLLECTIVE && s->route_given)
			d->body = route_override(s, x, d, a);
	}
	for (int i = 0; i < u->ndecl; i++)
		if (u->decl[i].topo)
			u->decl[i].topo = &u->decl[to[u->decl[i].topo - f->decl]];
	u->capdecl = u->ndecl;
	return u;
}

/* The unit parsed and checked, ready to lower at each size; -1 after
 * errors (in the captured diagnostics). */
static int
unit_source(const Spec *s, const Unit *x, Source *g)
{
	if (s->cf.f) {
		g->name = s->cf.path;
		diag_source(g->name, s->cf.text, s->cf.len);
		g->f = unit_file(s, x, &g->arena);
		return 0;
	}
	unit_coll(s, x, g);
	g->name = "sweep.coll";
	diag_source(g->name, g->text, strlen(g->text));
	g->f = parse_text(&g->arena, g->name, g->text, strlen(g->text));
	if (nerrors() == 0)
		sema(g->f);
	return nerrors() > 0 ? -1 : 0;
}

/* One point: the unit lowered for this size (`auto`'s choice,
 * pipelined_trees' segments and bridge's reconfigurations are made for
 * it), verified and simulated. 0, or -1 with the error in the captured
 * diagnostics or in err. */
static int
point_run(const Spec *s, const Source *g, double size, Record *r, char *err, size_t errlen)
{
	bool rounds = s->opts.sync == SIM_ROUNDS;
	/* as collc sim: round by round, large symmetric schedules and rings stream */
	Prog prog = {.auto_size = size, .compact = rounds};
	Arena sim = {0};
	SimNet net = {0};
	int rc = lower(g->f, &prog) != 0 || nerrors() > 0 ? -1 : 0;
	if (rc == 0 && prog.nskipped) {
		error_at(prog.skipped[0]->loc, "collc has no generator for this algorithm yet");
		rc = -1;
	}
	if (rc == 0 && (prog.nsched != 1 || verify(prog.sched[0]) != 0 ||
	                (rounds ? sim_stream_scheds : sim_from_scheds)(
	                    &sim, (const Sched *const *)prog.sched, 1, &net) != 0))
		rc = -1;
	SimResult res;
	if (rc == 0 && sim_run(&sim, &net, 0, (int64_t)size, &s->opts, &res, err, errlen) != 0) {
		rc = -1;
	} else if (rc == 0) {
		r->time_s = res.time_s;
		r->nrank = net.coll[0].nrank;
		const char *alg = prog.sched[0]->algorithm;
		snprintf(r->note, sizeof r->note, "%s", strncmp(alg, "auto:", 5) == 0 ? alg : "");
	}
	prog_free(&prog);
	arena_free(&sim);
	return rc;
}

/* A failed point's record: collc's message and the spec value to blame
 * (library: the value the message points at; file: the collective). */
static void
point_failed(const Spec *s, const Source *g, const Unit *x, const char *diag, const char *err,
             Record *r)
{
	const Pair *p = &s->pair[x->pair];
	r->ok = false;
	r->at = p->at;
	if (err[0]) {
		first_error(err, "", r->note);
		return;
	}
	Loc gen = first_error(diag, g->name, r->note);
	if (s->cf.f)
		r->coll_at = gen;
	else
		r->at = spec_loc_of(g, gen, p->at);
}

/* Builds unit u and simulates the sizes whose point is in the shard; false
 * once a point failed (the worker stops: its later points are larger). */
static bool
run_unit(const Spec *s, int u, int shard, int nshard, int fd)
{
	Unit x = unit_of(s, u);
	MemOut diag;
	FILE *df = memout_open(&diag);
	diag_reset();
	diag_stream(df);
	Source g = {0};
	bool built = false, ok = true;
	for (int k = 0; k < s->nsize && ok; k++) {
		Record r = {.point = u * s->nsize + k, .ok = true};
		if (r.point % nshard != shard)
			continue;
		char err[256] = "";
		if (!built)
			ok = unit_source(s, &x, &g) == 0;
		built = true;
		if (ok)
			ok = point_run(s, &g, s->sizes[k], &r, err, sizeof err) == 0;
		if (!ok) {
			fflush(df);
			point_failed(s, &g, &x, diag.buf ? diag.buf : "", err, &r);
		}
		if (write(fd, &r, sizeof r) != (ssize_t)sizeof r)
			_exit(3);
	}
	diag_stream(stderr);
	memout_drop(&diag);
	arena_free(&g.arena);
	free(g.text);
	return ok;
}
/* ---- workers and the progress line ---- */

typedef struct Progress {
	double t0, last;
	long done, total;
	bool tty;
} Progress;

static void
progress_show(Progress *p, bool final)
{
	double now = wall_seconds(), el = now - p->t0;
	if (!final && now - p->last < (p->tty ? 0.2 : 5))
		return;
	p->last = now;
	char left[48] = "";
	if (p->done > 0 && p->done < p->total)
		snprintf(left, sizeof left, ", about %.0f s left",
		         el / (double)p->done * (double)(p->total - p->done));
	fprintf(stderr, "%ssweep: %ld of %ld points, %.0f s elapsed%s%s", p->tty ? "\r" : "",
	        p->done, p->total, el, left, p->tty && !final ? "\033[K" : "\n");
	if (p->tty && final)
		fputs("\033[K", stderr);
}

/* The unit's routing (when the spec lists it) and network values, each
 * ", key value", as the spec writes them. */
static int
axes_desc(const Spec *s, const Unit *x, char *buf, size_t len)
{
	int n = 0;
	buf[0] = 0;
	if (s->route_given)
		n += snprintf(buf, len, ", routing %s", s->routing.v[x->route]);
	for (int k = 0; k < NNET; k++)
		if (s->net[k].n && n >= 0 && (size_t)n < len)
			n += snprintf(buf + n, len - (size_t)n, ", %s %s", net_keys[k],
			              s->net[k].v[x->net[k]]);
	return n;
}

/* The point a record is about, as the spec's values name it. */
static void
point_desc(const Spec *s, const Record *r, char *buf, size_t len)
{
	Unit x = unit_of(s, r->point / s->nsize);
	const Pair *p = &s->pair[x.pair];
	char size[32], axes[512];
	human_bytes(s->sizes[r->point % s->nsize], size, sizeof size);
	axes_desc(s, &x, axes, sizeof axes);
	if (s->cf.f)
		snprintf(buf, len, "%s %s on %s%s, %s", coll_kind_name[p->kind], p->name, p->topo, axes,
		         size);
	else
		snprintf(buf, len, "%s %s on %s, ranks %s%s, %s", coll_kind_name[p->kind], p->alg,
		         s->topo.v[x.topo], s->groups.v[x.group], axes, size);
}

/* A point that failed: an error at the spec value to blame, and a note
 * where collc's message points in the .coll file. */
static void
report_failure(const Spec *s, const Record *r)
{
	char desc[768];
	point_desc(s, r, desc, sizeof desc);
	diag_reset();
	/* a tree or a group cannot be declared in a spec: the file can */
	bool decl = !s->cf.f && (strncmp(r->note, "unknown tree", 12) == 0 ||
	                         strncmp(r->note, "unknown group", 13) == 0);
	spec_error(s, r->at, "point %d (%s) cannot be simulated: %s%s", r->point, desc, r->note,
	           decl ? " (declare trees and groups in a .coll file and name it with `file`)" : "");
	if (s->cf.f && r->coll_at.line) {
		diag_source(s->cf.path, s->cf.text, s->cf.len);
		note_at(r->coll_at, "in '%s'", s->pair[unit_of(s, r->point / s->nsize).pair].name);
	}
}

/* Runs every unit of the shard on `workers` processes; rec[point] filled.
 * A failed point stops its worker; the lowest failed point is reported
 * (each worker runs its points in order, so it is the lowest of all). */
static int
run_all(const Spec *s, int shard, int nshard, int workers, Record *rec, bool *have)
{
	Record failed = {.point = -1};
	long total = 0;
	for (long p = 0; p < (long)s->nunit * s->nsize; p++)
		total += p % nshard == shard;
	Progress pg = {.t0 = wall_seconds(), .total = total, .tty = isatty(2)};
	struct pollfd pfd[MAX_WORKERS];
	pid_t pid[MAX_WORKERS];
	fflush(NULL);
	for (int w = 0; w < workers; w++) {
		int fds[2];
		if (pipe(fds) != 0)
			die("pipe: %s", strerror(errno));
		pid[w] = fork();
		if (pid[w] < 0)
			die("fork: %s", strerror(errno));
		if (pid[w] == 0) {
			close(fds[0]);
			for (int u = w; u < s->nunit; u += workers)
				if (!run_unit(s, u, shard, nshard, fds[1]))
					break;
			_exit(0);
		}
		close(fds[1]);
		pfd[w] = (struct pollfd){.fd = fds[0], .events = POLLIN};
	}
	int open = workers, rc = 0;
	while (open > 0) {
		if (poll(pfd, (nfds_t)workers, -1) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		for (int w = 0; w < workers; w++) {
			if (pfd[w].fd < 0 || !(pfd[w].revents & (POLLIN | POLLHUP)))
				continue;
			Record r;
			ssize_t n = read(pfd[w].fd, &r, sizeof r);
			if (n == (ssize_t)sizeof r && r.point >= 0 && r.point < s->nunit * s->nsize) {
				if (!r.ok && (failed.point < 0 || r.point < failed.point))
					failed = r;
				rec[r.point] = r;
				have[r.point] = true;
				pg.done++;
				progress_show(&pg, false);
			} else if (n <= 0) {
				close(pfd[w].fd);
				pfd[w].fd = -1;
				open--;
			}
		}
	}
	for (int w = 0; w < workers; w++) {
		int st;
		if (waitpid(pid[w], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			rc = -1;
	}
	progress_show(&pg, true);
	if (failed.point >= 0) {
		report_failure(s, &failed);
		return -1;
	}
	if (rc != 0 || pg.done != total) {
		fprintf(stderr, "collc: error: sweep: a worker failed (%ld of %ld points back)\n",
		        pg.done, total);
		return -1;
	}
	return 0;
}

/* ---- output ---- */

static void
csv_field(FILE *f, const char *v)
{
	if (strpbrk(v, ",\"")) {
		fputc('"', f);
		for (; *v; v++) {
			if (*v == '"')
				fputc('"', f);
			fputc(*v, f);
		}
		fputc('"', f);
	} else {
		fputs(v, f);
	}
}

static const char *const columns[] = {
    "point", "topology", "ranks", "collective", "name", "algorithm", "routing", "link_bandwidth",
    "link_latency", "router_latency", "step_overhead", "mtu", "size", "count", "type", "redop",
    "time_us", "algbw_GBps", "busbw_GBps", "status", "note"};
enum { NCOL = 21, COL_NAME = 4, COL_NOTE = 20 };

/* Whether column c is written: `name` only for a spec's .coll file. */
static bool
has_col(const Spec *s, int c)
{
	return c != COL_NAME || s->cf.f;
}

/* The fields of one row as strings (numbers already formatted). */
static void
row_fields(const Spec *s, const Record *r, char (*v)[64], const char **note)
{
	Unit x = unit_of(s, r->point / s->nsize);
	const Pair *p = &s->pair[x.pair];
	const char *kind = coll_kind_name[p->kind];
	double size = s->sizes[r->point % s->nsize];
	snprintf(v[0], 64, "%d", r->point);
	snprintf(v[1], 64, "%s", s->cf.f ? p->topo : s->topo.v[x.topo]);
	if (s->cf.f)
		snprintf(v[2], 64, "%d", r->nrank);
	else
		snprintf(v[2], 64, "%s", s->groups.v[x.group]);
	snprintf(v[3], 64, "%s", kind);
	snprintf(v[4], 64, "%s", p->name ? p->name : "");
	snprintf(v[5], 64, "%s", p->alg);
	snprintf(v[6], 64, "%s", s->route_given ? s->routing.v[x.route] : p->route ? p->route
	                                                                           : s->routing.v[0]);
	for (int k = 0; k < NNET; k++)
		snprintf(v[7 + k], 64, "%s", s->net[k].n ? s->net[k].v[x.net[k]] : "");
	snprintf(v[12], 64, "%.0f", size);
	snprintf(v[13], 64, "%.0f", floor(size / 4));
	snprintf(v[14], 64, "float");
	snprintf(v[15], 64, "%s", perf_redop(kind, "sum"));
	bool ok = r->ok && r->time_s > 0;
	double algbw = ok ? size / r->time_s / 1e9 : 0;
	double num[3] = {r->time_s * 1e6, algbw, algbw * perf_busbw_factor(kind, r->nrank)};
	for (int k = 0; k < 3; k++) /* empty when not simulated */
		snprintf(v[16 + k], 64, "%.3f", num[k]), v[16 + k][ok ? 63 : 0] = 0;
	snprintf(v[19], 64, "%s", "ok");
	*note = r->note;
}

static void
write_csv(const Spec *s, const Record *rec, const bool *have, FILE *f)
{
	const char *sep = "";
	for (int c = 0; c < NCOL; c++)
		if (has_col(s, c))
			fprintf(f, "%s%s", sep, columns[c]), sep = ",";
	fputc('\n', f);
	char v[NCOL][64];
	const char *note;
	for (long p = 0; p < (long)s->nunit * s->nsize; p++) {
		if (!have[p])
			continue;
		row_fields(s, &rec[p], v, &note);
		for (int c = 0; c < NCOL; c++) {
			if (!has_col(s, c))
				continue;
			if (c)
				fputc(',', f);
			csv_field(f, c == COL_NOTE ? note : v[c]);
		}
		fputc('\n', f);
	}
}

static void
write_json(const Spec *s, const Record *rec, const bool *have, FILE *f)
{
	fputs("{\"points\": [\n", f);
	char v[NCOL][64];
	const char *note;
	bool first = true;
	for (long p = 0; p < (long)s->nunit * s->nsize; p++) {
		if (!have[p])
			continue;
		row_fields(s, &rec[p], v, &note);
		fputs(first ? "  {" : ",\n  {", f);
		first = false;
		for (int c = 0; c < NCOL; c++) {
			if (!has_col(s, c))
				continue;
			fprintf(f, "%s\"%s\": ", c ? ", " : "", columns[c]);
			const char *val = c == COL_NOTE ? note : v[c];
			bool number = c == 0 || c == 12 || c == 13 || (c >= 16 && c <= 18);
			if (number && *val)
				fputs(val, f);
			else if (number)
				fputs("null", f);
			else
				json_string(f, val);
		}
		fputc('}', f);
	}
	fputs(first ? "]}\n" : "\n]}\n", f);
}

/* One busbw plot per unit family (all but the pair), series per pair of
 * the same collective kind (its algorithms, or the file's collectives). */
static int
write_plots(const Spec *s, const Record *rec, const bool *have, const char *dir)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "collc: error: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	int rc = 0;
	double *y = xmalloc(((size_t)MAX_PAIRS * s->nsize + 1) * sizeof *y);
	PlotSeries *ser = xmalloc(MAX_PAIRS * sizeof *ser);
	for (int u = 0; u < s->nunit && rc == 0; u++) {
		Unit x = unit_of(s, u);
		int kind = s->pair[x.pair].kind, first = 0;
		while (s->pair[first].kind != kind)
			first++;
		if (first != x.pair)
			continue; /* the family is drawn once, from its first pair */
		int ns = 0;
		for (int a = first; a < s->npair; a++) {
			if (s->pair[a].kind != kind)
				continue;
			int uu = u + (a - first) * s->per_pair;
			ser[ns].name = s->cf.f ? s->pair[a].name : s->pair[a].alg;
			ser[ns].y = y + (size_t)ns * s->nsize;
			bool any = false;
			for (int k = 0; k < s->nsize; k++) {
				long p = (long)uu * s->nsize + k;
				bool ok = have[p] && rec[p].ok;
				y[(size_t)ns * s->nsize + k] =
				    ok ? s->sizes[k] / rec[p].time_s / 1e9 *
				             perf_busbw_factor(coll_kind_name[kind], rec[p].nrank)
				       : -1;
				any |= ok;
			}
			ns += any;
		}
		if (!ns)
			continue;
		char title[1024], path[4096];
		char axes[512];
		axes_desc(s, &x, axes, sizeof axes);
		if (s->cf.f)
			snprintf(title, sizeof title, "%s, %s%s", coll_kind_name[kind], s->cf.path, axes);
		else
			snprintf(title, sizeof title, "%s %s, ranks %s, %s", coll_kind_name[kind],
			         s->topo.v[x.topo], s->groups.v[x.group], s->routing.v[x.route]);
		snprintf(path, sizeof path, "%s/sweep-%05d.svg", dir, u);
		MemOut m;
		svg_busbw(memout_open(&m), title, s->sizes, s->nsize, ser, ns, 0);
		rc = write_output(path, &m);
	}
	free(y), free(ser);
	return rc;
}

static int
emit(const char *out, void (*fn)(const Spec *, const Record *, const bool *, FILE *),
     const Spec *s, const Record *rec, const bool *have)
{
	MemOut m;
	fn(s, rec, have, memout_open(&m));
	return write_output(out, &m);
}

/* ---- --merge: shards' rows sorted by point number ---- */

typedef struct Line {
	long point;
	char *text;
} Line;

static int
by_point(const void *a, const void *b)
{
	long x = ((const Line *)a)->point, y = ((const Line *)b)->point;
	return (x > y) - (x < y);
}

/* The point number of a row: CSV "N,..." or JSON "  {"point": N, ...". */
static long
row_point(const char *l, bool json)
{
	if (json) {
		const char *p = strstr(l, "{\"point\": ");
		return p ? strtol(p + 10, NULL, 10) : -1;
	}
	char *end;
	long v = strtol(l, &end, 10);
	return end != l && *end == ',' ? v : -1;
}

static int
merge(char **files, int n, const char *out)
{
	Line *rows = NULL;
	size_t nrow = 0, cap = 0;
	char *head = NULL, **texts = xcalloc((size_t)n + 1, sizeof *texts);
	bool json = false;
	int rc = 0;
	for (int i = 0; i < n && rc == 0; i++) {
		char err[512];
		size_t len;
		texts[i] = read_file(files[i], &len, err, sizeof err);
		if (!texts[i]) {
			fprintf(stderr, "collc: error: %s\n", err);
			rc = 1;
			break;
		}
		char *nl = strchr(texts[i], '\n');
		if (!nl) {
			fprintf(stderr, "collc: error: %s: not a sweep output\n", files[i]);
			rc = 1;
			break;
		}
		*nl = 0;
		if (i == 0) {
			head = texts[0];
			json = strcmp(head, "{\"points\": [") == 0;
		} else if (strcmp(head, texts[i]) != 0) {
			fprintf(stderr, "collc: error: %s: its header differs from %s's\n", files[i],
			        files[0]);
			rc = 1;
			break;
		}
		for (char *l = nl + 1, *e; *l; l = e) {
			e = strchr(l, '\n');
			if (e)
				*e++ = 0;
			else
				e = l + strlen(l);
			size_t ll = strlen(l);
			if (json && ll && l[ll - 1] == ',')
				l[--ll] = 0;
			if (json && strcmp(l, "]}") == 0)
				continue;
			long p = row_point(l, json);
			if (p < 0) {
				fprintf(stderr, "collc: error: %s: a row without a point number: %.60s\n",
				        files[i], l);
				rc = 1;
				break;
			}
			if (nrow == cap) {
				cap = cap ? 2 * cap : 1024;
				rows = xrealloc(rows, cap * sizeof *rows);
			}
			rows[nrow++] = (Line){p, l};
		}
	}
	if (rc == 0) {
		qsort(rows, nrow, sizeof *rows, by_point);
		for (size_t i = 0; i < nrow && rc == 0; i++)
			if (rows[i].point != (long)i) {
				fprintf(stderr, "collc: error: merge: point %zu is %s\n", i,
				        rows[i].point < (long)i ? "in two shards" : "in no shard");
				rc = 1;
			}
	}
	if (rc == 0) {
		MemOut m;
		FILE *mem = memout_open(&m);
		fprintf(mem, "%s\n", head);
		for (size_t i = 0; i < nrow; i++)
			fprintf(mem, "%s%s\n", rows[i].text, json && i + 1 < nrow ? "," : "");
		if (json)
			fputs("]}\n", mem);
		rc = write_output(out, &m);
	}
	for (int i = 0; i < n; i++)
		free(texts[i]);
	free(texts), free(rows);
	return rc;
}

/* ---- the command ---- */

typedef struct SweepArgs {
	const char *spec, *out, *json, *plots;
	int shard, nshard, jobs;
	bool merge;
} SweepArgs;

/* The shard from --shard i/n, or from the MPI launcher's rank and size. */
static int
parse_shard(const char *arg, SweepArgs *a)
{
	if (strcmp(arg, "mpi") == 0) {
		const char *r = getenv("OMPI_COMM_WORLD_RANK"), *n = getenv("OMPI_COMM_WORLD_SIZE");
		if (!r || !n)
			r = getenv("PMI_RANK"), n = getenv("PMI_SIZE");
		if (!r || !n)
			return -1;
		a->shard = atoi(r), a->nshard = atoi(n);
	} else if (sscanf(arg, "%d/%d", &a->shard, &a->nshard) != 2) {
		return -1;
	}
	return a->nshard >= 1 && a->shard >= 0 && a->shard < a->nshard ? 0 : -1;
}

static const CliOpt sweep_opts[] = {
	{"output", 'o', "OUT.csv", "write the CSV to OUT.csv (default: standard output)"},
	{"json", 0, "OUT.json", "also write the rows as JSON"},
	{"plots", 0, "DIR", "one SVG busbw plot per configuration in DIR"},
	{"jobs", 'j', "N", "worker processes (default: the online cores)"},
	{"shard", 0, "i/n|mpi", "only the points whose number is i modulo n (mpi: i and n from "
	                        "the MPI launcher)"},
	{"merge", 0, NULL, "join the shard files given as operands, in point order"},
};

int cmd_sweep(int argc, char **argv);

const CliCommand cli_sweep = {
	"sweep", "SPEC | --merge SHARD...",
	"simulate a grid of topologies, groups, algorithms, routing, networks and sizes",
	"SPEC lists, one key per line, the values of each grid dimension (docs/sweep.md);\n"
	"`file F.coll` sweeps the collectives of a .coll file over routing, network and sizes.\n"
	"Each point is built for its own size; one that cannot be built is an error.\n"
	"Rows have nccl-tests' columns (size, count, type, redop, time_us, algbw, busbw).\n",
	sweep_opts, countof(sweep_opts), cmd_sweep};

/* argv[0] is "sweep"; -1 after --help, else 0 or a usage error's status. */
static int
sweep_args(int argc, char **argv, SweepArgs *a)
{
	static const struct option opts[] = {
	    {"output", required_argument, 0, 'o'}, {"json", required_argument, 0, 'J'},
	    {"plots", required_argument, 0, 'P'},  {"shard", required_argument, 0, 'S'},
	    {"jobs", required_argument, 0, 'j'},   {"merge", no_argument, 0, 'M'},
	    {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
	*a = (SweepArgs){.nshard = 1};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	a->jobs = ncpu > 0 ? (int)(ncpu < MAX_WORKERS ? ncpu : MAX_WORKERS) : 1;
	optind = 0;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "o:j:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': a->out = optarg; break;
		case 'J': a->json = optarg; break;
		case 'P': a->plots = optarg; break;
		case 'M': a->merge = true; break;
		case 'h': cli_help(&cli_sweep, stdout); return -1;
		case 'S':
			if (parse_shard(optarg, a) != 0)
				return usage_error("sweep: --shard takes i/n with 0 <= i < n, or 'mpi' "
				                   "(the launcher's rank and size)");
			break;
		case 'j':
			a->jobs = atoi(optarg);
			if (a->jobs < 1 || a->jobs > MAX_WORKERS)
				return usage_error("sweep: --jobs takes 1..%d", MAX_WORKERS);
			break;
		default:
			return usage_error("sweep: unknown option '%s' (collc help sweep)",
			                   argv[optind - 1]);
		}
	}
	if (!a->merge && optind + 1 != argc)
		return usage_error("sweep: one SPEC file expected");
	if (a->merge && optind >= argc)
		return usage_error("sweep --merge: shard files expected");
	a->spec = argv[optind];
	return 0;
}

static void
spec_free(Spec *s, char *text)
{
	arena_free(&s->cf.arena);
	arena_free(&s->mem);
	free(s->cf.text), free(s->orig), free(text), free(s);
}

int
cmd_sweep(int argc, char **argv)
{
	SweepArgs a;
	int rc = sweep_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (a.merge)
		return merge(argv + optind, argc - optind, a.out ? a.out : "-");
	Spec *s = xcalloc(1, sizeof *s);
	char *text = NULL;
	if (spec_read(a.spec, s, &text) != 0) {
		spec_free(s, text);
		return 1;
	}
	long npoint = (long)s->nunit * s->nsize;
	Record *rec = xcalloc((size_t)npoint + 1, sizeof *rec);
	bool *have = xcalloc((size_t)npoint + 1, sizeof *have);
	int workers = a.jobs < s->nunit ? a.jobs : s->nunit;
	rc = run_all(s, a.shard, a.nshard, workers > 0 ? workers : 1, rec, have) != 0;
	if (rc == 0)
		rc = emit(a.out ? a.out : "-", write_csv, s, rec, have);
	if (rc == 0 && a.json)
		rc = emit(a.json, write_json, s, rec, have);
	if (rc == 0 && a.plots)
		rc = write_plots(s, rec, have, a.plots);
	free(rec), free(have);
	spec_free(s, text);
	return rc;
}
