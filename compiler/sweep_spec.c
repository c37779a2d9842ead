/*
 * sweep_spec.c: a `collc sweep` spec read and checked into its grid
 * (docs/sweep.md). Each line is a key and a comma-separated list (commas
 * inside parentheses belong to the value). Values are checked as a .coll
 * file holds them (routing and network values parsed and checked here, so
 * their errors point into the spec); a named .coll file is parsed and
 * checked once, and its collectives become the grid's pairs. Establishes
 * the pairs, the defaults and the strides of the unit numbering: topology x
 * group x pair x routing x network values (size fastest within a unit).
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sweep.h"

const char *
net_key(int k)
{
	for (int i = 0; i < nnet_params; i++)
		if (net_params[i].swept && k-- == 0)
			return net_params[i].name;
	return NULL;
}

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
				if (l->n == MAX_SWEEP_VALUES)
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

/* `param NAME = A, B, ...` (the `=` optional): the values of a file's
 * parameter, each an int64 as -D takes it. */
static int
spec_param(Diag *dg, Spec *s, Loc at, char *val, const char *bol)
{
	char *name = val;
	while (*val && *val != ' ' && *val != '\t' && *val != '=')
		val++;
	char *end = val;
	val += strspn(val, " \t");
	if (*val == '=')
		val++;
	*end = 0;
	if (!*name)
		return spec_error(dg, s, at, "%s", "'param' takes a parameter's name and its values: "
		                  "param n = 2, 4, 8");
	for (int i = 0; i < s->nparam; i++)
		if (strcmp(s->param_name[i], name) == 0)
			return spec_error(dg, s, at, "parameter '%s' is given twice; give all its values on "
			                  "one line, the first at line %d", name, s->param[i].key.line);
	if (s->nparam == MAX_SWEEP_PARAMS)
		return spec_error(dg, s, at, "more than %d param lines", MAX_SWEEP_PARAMS);
	List *l = &s->param[s->nparam];
	if (split_list(val, l, bol, at.line) != 0)
		return spec_error(dg, s, at, "'param %s': more than 64 values", name);
	if (l->n == 0)
		return spec_error(dg, s, at, "'param %s' has no values", name);
	l->key = at;
	for (int i = 0; i < l->n; i++) {
		Defines one = {0};
		char arg[96], err[256];
		snprintf(arg, sizeof arg, "%s=%s", name, l->v[i]);
		if (strlen(l->v[i]) > 40 || defines_add(&one, arg, err, sizeof err) != 0)
			return spec_error(dg, s, l->at[i], "param %s: '%s' is not an integer in "
			                  "-2^63..2^63-1", name, l->v[i]);
	}
	s->param_name[s->nparam++] = name;
	return 0;
}

/* The spec's param lines against the file's parameters; the number of
 * combinations of their values. */
static int
file_params(Diag *dg, Spec *s)
{
	const File *f = s->cf.f;
	s->ncombo = 1;
	for (int i = 0; i < s->nparam; i++) {
		bool found = false;
		const char *names[MAX_PARAMS_FILE];
		int n = 0;
		for (int k = 0; k < f->ndecl; k++)
			if (f->decl[k].kind == DC_PARAM) {
				found |= strcmp(f->decl[k].name, s->param_name[i]) == 0;
				if (n < MAX_PARAMS_FILE)
					names[n++] = f->decl[k].name;
			}
		const char *near = nearest_name(s->param_name[i], names, n);
		if (!found)
			return spec_error(dg, s, s->param[i].key, "%s has no parameter '%s'%s%s%s",
			                  s->cf.path, s->param_name[i], near ? "; did you mean '" : "",
			                  near ? near : "", near ? "'?" : "");
		s->ncombo *= s->param[i].n;
	}
	return 0;
}

void
spec_combo(const Spec *s, int c, Defines *out)
{
	*out = (Defines){.cmd = "sweep"};
	for (int i = s->nparam - 1; i >= 0; i--) {
		const List *l = &s->param[i];
		char arg[96], err[256];
		snprintf(arg, sizeof arg, "%s=%s", s->param_name[i], l->v[c % l->n]);
		defines_add(out, arg, err, sizeof err); /* checked when read */
		c /= l->n;
	}
}

void
combo_label(const Spec *s, int c, char *buf, size_t len)
{
	Defines d;
	spec_combo(s, c, &d);
	size_t n = 0;
	buf[0] = 0;
	for (int i = d.n - 1; i >= 0 && n < len; i--) /* in the spec's order */
		n += (size_t)snprintf(buf + n, len - n, "%s%s=%lld", i == d.n - 1 ? "" : " ",
		                      d.v[i].name, (long long)d.v[i].value);
}

/* A located error in the spec (its line quoted, a caret); -1. */
int
spec_error(Diag *dg, const Spec *s, Loc at, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	diag_source(dg, s->path, s->orig, s->orig_len);
	error_at(dg, at, "%s", msg);
	return -1;
}

static int
spec_sizes(Diag *dg, Spec *s, const List *l)
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
		if (hi > MAX_SIZE_BYTES)
			return spec_error(dg, s, l->at[i], "sizes: '%s%s%s' is beyond %s", l->v[i],
			                  dots ? ".." : "", dots ? dots + 2 : "", SIZE_LIMIT_TEXT);
		if (lo < 1 || hi < lo)
			return spec_error(dg, s, l->at[i], "sizes: '%s' is not a size or a range A..B",
			                  l->v[i]);
		for (double v = lo; v <= hi * (1 + 1e-12); v *= 2) {
			if (s->nsize == MAX_SWEEP_VALUES)
				return spec_error(dg, s, l->at[i], "sizes: more than %d sizes",
				                  MAX_SWEEP_VALUES);
			s->sizes[s->nsize++] = floor(v);
		}
	}
	return 0;
}

static int
spec_option(Diag *dg, Spec *s, Loc at, const char *key, const char *val)
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
		return spec_error(dg, s, at, "'%s' takes packet|flow, rounds|deps or shared|private", key);
	return spec_error(dg, s, at, "unknown key '%s' (topology, groups, a collective kind, file, "
	                  "collectives, param, routing, link_bandwidth, link_latency, router_latency, "
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
		if (strcmp(key, net_key(k)) == 0)
			return &s->net[k];
	for (int k = 0; k < NCOLLKIND; k++)
		if (strcmp(key, coll_kind_name[k]) == 0)
			return &s->alg[k];
	return NULL;
}

/* ---- checking a value as a .coll file would hold it ---- */

/* Where the first diagnostic line of the file `name` points (line 0: none). */
static Loc
first_loc_in(const char *diag, const char *name)
{
	size_t n = strlen(name);
	for (const char *bol = diag; n && *bol; bol += strcspn(bol, "\n") + (bol[strcspn(bol, "\n")] != 0)) {
		int line, col;
		if (strncmp(bol, name, n) == 0 && sscanf(bol + n, ":%d:%d:", &line, &col) == 2)
			return (Loc){line, col};
	}
	return (Loc){0, 0};
}

/* The first error of a captured diagnostic: its message (after "error: ")
 * into note, and where it points in the file `name` (line 0: nowhere). An
 * error in another file (a topology's NCCL XML) keeps its file:line in the
 * note, and the place is the first note in `name` (the string naming it). */
Loc
first_error(const char *diag, const char *name, char *note)
{
	Loc at = {0, 0};
	const char *e = strstr(diag, "error: ");
	if (e) {
		const char *bol = e;
		while (bol > diag && bol[-1] != '\n')
			bol--;
		size_t n = strlen(name);
		bool here = n && strncmp(bol, name, n) == 0; /* the error is in `name` */
		int line, col;
		if (here && sscanf(bol + n, ":%d:%d:", &line, &col) == 2)
			at = (Loc){line, col};
		else if (n)
			at = first_loc_in(diag, name);
		e = n && !here && bol < e ? bol : e + 7;
	} else {
		e = diag;
	}
	size_t n = strcspn(e, "\n");
	if (n >= NOTE_LEN)
		n = NOTE_LEN - 1;
	memcpy(note, e, n);
	note[n] = 0;
	char *tag = strstr(note, ": error: "); /* another file's place kept, its tag dropped */
	if (tag)
		memmove(tag + 2, tag + 9, strlen(tag + 9) + 1);
	for (char *c = note; *c; c++)
		if (*c == '"' || *c == '\\')
			*c = '\'';
	return at;
}

/* A spec value checked as the language checks it: `before value after`
 * parsed and checked as a .coll text; an error is reported at the value in
 * the spec. Returns the checked file (in s->mem), or NULL after the error. */
static File *
check_value(Diag *dg, Spec *s, Loc at, const char *before, const char *value, const char *after)
{
	char *text = arena_printf(&s->mem, "%s%s%s", before, value, after);
	const char *nl = strrchr(before, '\n');
	int vline = 1, vcol = (int)strlen(nl ? nl + 1 : before) + 1;
	for (const char *c = before; *c; c++)
		vline += *c == '\n';
	MemOut diag;
	diag_reset(dg);
	diag_stream(dg, memout_open(&diag));
	diag_source(dg, "value.coll", text, strlen(text));
	File *f = parse_text(dg, &s->mem, "value.coll", text, strlen(text));
	if (f)
		f->path = s->path; /* a topology's file is named from the spec's folder */
	if (nerrors(dg) == 0)
		check_file(dg, f, NULL, &(int){0});
	fflush(diag.f);
	diag_stream(dg, stderr);
	char note[NOTE_LEN];
	Loc e = first_error(diag.buf ? diag.buf : "", "value.coll", note);
	memout_drop(&diag);
	if (nerrors(dg) == 0)
		return f;
	diag_reset(dg);
	int off = e.line == vline && e.col > vcol ? e.col - vcol : 0;
	if (off >= (int)strlen(value))
		off = 0;
	spec_error(dg, s, (Loc){at.line, at.col + off}, "%s", note);
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
spec_check_values(Diag *dg, Spec *s)
{
	for (int k = 0; k < NNET; k++)
		for (int i = 0; i < s->net[k].n; i++) {
			char before[64];
			snprintf(before, sizeof before, "network {\n    %s = ", net_key(k));
			File *f = check_value(dg, s, s->net[k].at[i], before, s->net[k].v[i], ";\n}\n");
			if (!f)
				return -1;
			/* one value, not more text (a file's units take the item itself) */
			const Block *b = f->ndecl == 1 ? f->decl[0].body : NULL;
			if (!b || b->nitem != 1)
				return spec_error(dg, s, s->net[k].at[i], "%s: '%s' is not one value", net_key(k),
				                  s->net[k].v[i]);
			s->net_block[k][i] = b;
		}
	for (int i = 0; i < s->routing.n; i++) {
		File *f = check_value(dg, s, s->routing.at[i], "topology T = ring(2);\ncollective allreduce "
		                      "X on T {\n    algorithm ring;\n    routing ", s->routing.v[i],
		                      ";\n}\n");
		if (!f)
			return -1;
		const Item *r = f->ndecl == 2 ? item_in(f->decl[1].body, IT_ROUTING) : NULL;
		if (!r || strcmp(r->name, s->routing.v[i]) != 0)
			return spec_error(dg, s, s->routing.at[i], "routing: '%s' is not one policy",
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
add_file_pair(Diag *dg, Spec *s, int decl, Loc at)
{
	const Decl *d = &s->cf.f->decl[decl];
	if (s->npair == MAX_PAIRS)
		return spec_error(dg, s, at, "more than %d collectives", MAX_PAIRS);
	int kind = 0;
	for (int k = 0; k < NCOLLKIND; k++)
		if (strcmp(coll_kind_name[k], d->ckind) == 0)
			kind = k;
	const Item *route = item_in(d->body, IT_ROUTING);
	s->pair[s->npair++] = (Pair){.kind = kind, .alg = alg_label(s, d), .name = d->name,
	            .topo = form_label(s, d->topo->form),
	            .route = route ? route->name : "fastest", .decl = decl, .at = at};
	return 0;
}

/* The collectives the spec names (or all of the file's), as pairs. */
static int
file_pairs(Diag *dg, Spec *s)
{
	const File *f = s->cf.f;
	const char *names[MAX_PAIRS];
	int nname = 0;
	for (int i = 0; i < f->ndecl && nname < MAX_PAIRS; i++)
		if (f->decl[i].kind == DC_COLLECTIVE)
			names[nname++] = f->decl[i].name;
	if (!nname)
		return spec_error(dg, s, s->file.at[0], "%s declares no collective", s->cf.path);
	if (!s->colls.n || (s->colls.n == 1 && strcmp(s->colls.v[0], "all") == 0)) {
		Loc at = s->colls.n ? s->colls.at[0] : s->file.at[0];
		for (int i = 0; i < f->ndecl; i++)
			if (f->decl[i].kind == DC_COLLECTIVE && add_file_pair(dg, s, i, at) != 0)
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
				return spec_error(dg, s, s->colls.at[k], "collective '%s' is named twice",
				                  s->colls.v[k]);
		const char *near = d < 0 ? nearest_name(s->colls.v[k], names, nname) : NULL;
		if (d < 0)
			return spec_error(dg, s, s->colls.at[k], "%s declares no collective '%s'%s%s%s",
			                  s->cf.path, s->colls.v[k], near ? "; did you mean '" : "",
			                  near ? near : "", near ? "'?" : " (name its collectives, or 'all')");
		if (add_file_pair(dg, s, d, s->colls.at[k]) != 0)
			return -1;
	}
	return 0;
}

/* A network value the spec sweeps and a topology of the file sets itself
 * (its `network` block or a link's) would not change that topology:
 * refused, not silently ignored. */
static int
file_net_conflicts(Diag *dg, Spec *s)
{
	for (int i = 0; i < s->npair; i++) {
		const Decl *t = s->cf.f->decl[s->pair[i].decl].topo;
		for (int j = 0; t->body && j < t->body->nitem; j++) {
			const Item *it = &t->body->item[j];
			const Block *b = it->kind == IT_NETWORK || it->kind == IT_LINK ? it->body : NULL;
			for (int m = 0; b && m < b->nitem; m++)
				for (int k = 0; k < NNET; k++)
					if (s->net[k].n && b->item[m].kind == IT_PARAM &&
					    strcmp(b->item[m].name, net_key(k)) == 0)
						return spec_error(dg, s, s->net[k].key, "topology '%s' sets its own %s "
						                  "(%s:%d), which the spec's values would not "
						                  "change", t->name, net_key(k), s->cf.path,
						                  b->item[m].loc.line);
		}
	}
	return 0;
}

/* The file, beside the spec unless absolute: read, parsed and checked. */
static int
spec_file(Diag *dg, Spec *s)
{
	CollFile *c = &s->cf;
	const char *v = s->file.v[0], *slash = strrchr(s->path, '/');
	c->path = v[0] == '/' || !slash ? v
	                                : arena_printf(&s->mem, "%.*s%s", (int)(slash - s->path + 1),
	                                               s->path, v);
	char err[512];
	c->text = read_file(c->path, &c->len, err, sizeof err);
	if (!c->text)
		return spec_error(dg, s, s->file.at[0], "%s", err);
	diag_reset(dg);
	diag_source(dg, c->path, c->text, c->len);
	File *f = parse_text(dg, &c->arena, c->path, c->text, c->len);
	if (nerrors(dg) == 0)
		check_file(dg, f, NULL, &(int){0});
	if (nerrors(dg) > 0)
		return -1; /* reported in the file */
	c->f = f;
	return file_pairs(dg, s) != 0 || file_net_conflicts(dg, s) != 0 ? -1 : 0;
}

/* A file's collectives keep their topologies and ranks: the keys that set
 * them are refused. */
static int
file_axes(Diag *dg, Spec *s)
{
	const List *no[2 + NCOLLKIND] = {&s->topo, &s->groups};
	const char *name[2 + NCOLLKIND] = {"topology", "groups"};
	for (int k = 0; k < NCOLLKIND; k++)
		no[2 + k] = &s->alg[k], name[2 + k] = coll_kind_name[k];
	for (size_t i = 0; i < countof(no); i++)
		if (no[i]->key.line)
			return spec_error(dg, s, no[i]->key, "'%s' does not combine with `file`: the file's "
			                  "collectives keep their topologies, ranks and algorithms, and "
			                  "are swept over routing, network values and sizes", name[i]);
	if (s->file.n > 1)
		return spec_error(dg, s, s->file.at[1], "%s", "one .coll file per spec");
	return 0;
}

/* ---- the grid ---- */

/* Library mode: the (collective, algorithm) pairs and the defaults. */
static int
library_pairs(Diag *dg, Spec *s)
{
	static const char dflt_group[] = "all";
	if (s->colls.key.line)
		return spec_error(dg, s, s->colls.key, "%s", "'collectives' names collectives of the "
		                  "spec's .coll file: add a `file` line");
	if (!s->topo.n)
		return spec_error(dg, s, (Loc){0, 0}, "%s", "a spec needs a topology line (or a `file` "
		                  "line) and a sizes line");
	if (!s->groups.n)
		s->groups.v[s->groups.n++] = dflt_group;
	s->npair = 0;
	for (int k = 0; k < NCOLLKIND; k++)
		for (int i = 0; i < s->alg[k].n; i++)
			s->pair[s->npair++] = (Pair){.kind = k, .alg = s->alg[k].v[i], .decl = -1,
			                             .at = s->alg[k].at[i]};
	if (!s->npair)
		return spec_error(dg, s, (Loc){0, 0}, "%s", "a spec needs a line of algorithms for a "
		                  "collective kind, e.g. 'allreduce ring, halving_doubling', or a "
		                  "`file` line");
	for (int i = 0; i < s->groups.n; i++) {
		char *end;
		long g = strtol(s->groups.v[i], &end, 10);
		if (strcmp(s->groups.v[i], "all") != 0 && (*end || g < 1 || g > 1 << 20))
			return spec_error(dg, s, s->groups.at[i], "groups: '%s' is not a rank count or 'all'",
			                  s->groups.v[i]);
	}
	return 0;
}

/* The pairs, the defaults and the strides of the unit numbering. */
static int
spec_finish(Diag *dg, Spec *s)
{
	static const char dflt_route[] = "shortest_path", none[] = "", dflt_group[] = "all";
	if (!s->nsize)
		return spec_error(dg, s, (Loc){0, 0}, "%s", "a spec needs a sizes line");
	s->route_given = s->routing.n > 0;
	if (spec_check_values(dg, s) != 0)
		return -1;
	if (s->file.n) {
		if (file_axes(dg, s) != 0 || spec_file(dg, s) != 0)
			return -1;
		if (file_params(dg, s) != 0)
			return -1;
		/* one topology and group each: the file's, per collective */
		s->topo.v[s->topo.n++] = none;
		s->groups.v[s->groups.n++] = dflt_group;
	} else if (s->nparam) {
		return spec_error(dg, s, s->param[0].key, "%s", "'param' sets a parameter of the spec's "
		                  ".coll file: add a `file` line");
	} else if (library_pairs(dg, s) != 0) {
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
	double units = (double)s->per_topo * (s->file.n ? s->ncombo : s->topo.n);
	if (units * s->nsize > 1e7)
		return spec_error(dg, s, (Loc){0, 0}, "%s", "the grid has more than 10^7 points");
	s->nunit = (int)units;
	return 0;
}

/* Where byte `at` of text is (line and column from 1). */
static Loc
loc_of(const char *text, const char *at)
{
	Loc l = {1, 1};
	for (const char *c = text; c < at; c++)
		l = *c == '\n' ? (Loc){l.line + 1, 1} : (Loc){l.line, l.col + 1};
	return l;
}

/* A key given twice is an error, not a silent win of the later line. */
static int
spec_once(Diag *dg, Spec *s, Loc at, const char *key, const char **seen, Loc *seen_at, int *nseen)
{
	for (int i = 0; i < *nseen; i++)
		if (strcmp(seen[i], key) == 0) {
			spec_error(dg, s, at, "'%s' is given twice; give all its values on one line, the first "
			           "at line %d", key, seen_at[i].line);
			return -1;
		}
	if (*nseen < 64)
		seen[*nseen] = key, seen_at[(*nseen)++] = at;
	return 0;
}

/* Reads SPEC; the text stays allocated (the lists point into it). */
int
spec_read(Diag *dg, const char *path, Spec *s, char **textp)
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
	if (starts_with_bom(text, len))
		return spec_error(dg, s, (Loc){1, 1}, "%s", BOM_MESSAGE);
	const char *nul = memchr(text, 0, len);
	if (nul)
		return spec_error(dg, s, loc_of(text, nul), "%s", "a NUL byte: a spec is text");
	int line = 0;
	const char *seen[64];
	Loc seen_at[64];
	int nseen = 0;
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
		if (strcmp(key, "param") == 0) {
			if (spec_param(dg, s, at, val, p) != 0)
				return -1;
			continue;
		}
		if (spec_once(dg, s, at, key, seen, seen_at, &nseen) != 0)
			return -1;
		size_t bad = strcspn(val, ";{}");
		if (val[bad] && strcmp(key, "file") != 0)
			return spec_error(dg, s, (Loc){line, (int)(val + bad - p) + 1},
			                  "'%s': a value cannot hold '%c' (a spec's values are words of the "
			                  ".coll language, separated by commas)", key, val[bad]);
		List *list = spec_list(s, key);
		if (strcmp(key, "sizes") == 0) {
			List sizes;
			s->sizes_at = at;
			split_list(val, &sizes, p, line);
			if (spec_sizes(dg, s, &sizes) != 0)
				return -1;
		} else if (list) {
			if (split_list(val, list, p, line) != 0)
				return spec_error(dg, s, at, "'%s': more than 64 values", key);
			list->key = at;
		} else if (spec_option(dg, s, at, key, val) != 0) {
			return -1;
		}
	}
	return spec_finish(dg, s);
}

Unit
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

void
spec_free(Spec *s, char *text)
{
	arena_free(&s->cf.arena);
	arena_free(&s->mem);
	free(s->cf.text), free(s->orig), free(text), free(s);
}
