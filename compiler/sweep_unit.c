/*
 * sweep_unit.c: one unit of a `collc sweep` grid, in a worker: its .coll
 * text generated from the spec's values (each value's place remembered, so
 * an error in the text points back into the spec), or the spec's .coll file
 * with the unit's collective only and the spec's routing and network
 * values in place of the file's; parsed and checked once, then lowered for
 * each size (`auto`, pipelined_trees' segments and bridge's
 * reconfigurations chosen for that size), verified and simulated.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "to_sim.h"
#include "sweep.h"

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
			put(g, net_key(k), none, false);
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
			         strcmp(file->item[i].name, net_key(k)) == 0;
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
unit_file(const Spec *s, const Unit *x, const File *f, Arena *a)
{
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
unit_source(Diag *dg, const Spec *s, const Unit *x, Source *g)
{
	if (s->cf.f) {
		g->name = s->cf.path;
		diag_source(dg, g->name, s->cf.text, s->cf.len);
		const File *f = s->cf.f;
		if (s->nparam) {
			/* the unit's parameter values: the file read again with them */
			Defines defs;
			int unknown;
			spec_combo(s, x->topo, &defs);
			File *pf = parse_text(dg, &g->arena, g->name, s->cf.text, s->cf.len);
			if (nerrors(dg) == 0)
				check_file(dg, pf, &defs, &unknown);
			if (nerrors(dg) > 0)
				return -1;
			f = pf;
		}
		g->f = unit_file(s, x, f, &g->arena);
		return 0;
	}
	unit_coll(s, x, g);
	g->name = "sweep.coll";
	diag_source(dg, g->name, g->text, strlen(g->text));
	g->f = parse_text(dg, &g->arena, g->name, g->text, strlen(g->text));
	if (g->f)
		g->f->path = s->path; /* a topology's file is named from the spec's folder */
	if (nerrors(dg) == 0)
		check_file(dg, g->f, NULL, &(int){0});
	return nerrors(dg) > 0 ? -1 : 0;
}

/* One point: the unit lowered for this size (`auto`'s choice,
 * pipelined_trees' segments and bridge's reconfigurations are made for
 * it), verified and simulated. 0, or -1 with the error in the captured
 * diagnostics or in err. */
static int
point_run(Diag *dg, const Spec *s, const Source *g, double size, Record *r, char *err, size_t errlen)
{
	bool rounds = s->opts.sync == SIM_ROUNDS;
	/* as collc sim: round by round, large symmetric schedules and rings stream */
	Prog prog = {.auto_size = size, .compact = rounds};
	Arena sim = {0};
	SimNet net = {0};
	int rc = lower_verified(dg, g->f, &prog, NULL, false, false) != 0 ? -1 : 0;
	if (rc == 0 && prog.nskipped) {
		error_at(dg, prog.skipped[0]->loc, "collc has no generator for this algorithm yet");
		rc = -1;
	}
	if (rc == 0 && (prog.nsched != 1 ||
	                (rounds ? sim_stream_scheds : sim_from_scheds)(
	                    dg, &sim, (const Sched *const *)prog.sched, 1, &net) != 0))
		rc = -1;
	SimResult res;
	double work = rc == 0 ? (double)sim_coll_nmsg(&net.coll[0]) : 0;
	const char *alg = rc == 0 ? prog.sched[0]->algorithm : "";
	if (rc == 0 && strncmp(alg, "auto:", 5) == 0) {
		/* as collc sim: every candidate simulated at this size, the fastest */
		Simulated *cand = arena_array(&sim, NALG, sizeof *cand);
		Routes routes;
		routes_init(&routes, prog.sched[0]->topo, prog.sched[0]->routing);
		int ncand = simulate_candidates(dg, &sim, &routes, NULL, prog.sched[0], size, &s->opts, cand);
		int best = fastest(cand, ncand);
		for (int i = 0; i < ncand; i++)
			work += (double)sim_coll_nmsg(&cand[i].net->coll[0]);
		routes_free(&routes); /* the result is copied out below */
		if (best < 0) {
			error_at(dg, prog.sched[0]->loc, "auto: no algorithm of the library applies to '%s'",
			         prog.sched[0]->name);
			rc = -1;
		} else {
			res = cand[best].r;
			alg = sched_label(&sim, "auto:", cand[best].s);
		}
	} else if (rc == 0 && sim_run(&sim, &net, 0, (int64_t)size, &s->opts, &res, err, errlen) != 0) {
		rc = -1;
	}
	if (rc == 0) {
		r->time_s = res.time_s;
		r->work = work;
		r->nrank = net.coll[0].nrank;
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

/* Builds unit u and simulates the sizes whose point is in the shard and not
 * skipped (done before an interruption): the points sent, or -1 once a
 * point failed (the worker stops: its later points are larger). */
int
run_unit(Diag *dg, const Spec *s, int u, int shard, int nshard, const bool *skip, int fd)
{
	Unit x = unit_of(s, u);
	MemOut diag;
	FILE *df = memout_open(&diag);
	diag_reset(dg);
	diag_stream(dg, df);
	Source g = {0};
	bool built = false, ok = true;
	int sent = 0;
	for (int k = 0; k < s->nsize && ok; k++) {
		Record r = {.point = u * s->nsize + k, .ok = true};
		if (r.point % nshard != shard || (skip && skip[r.point]))
			continue;
		char err[256] = "";
		if (!built)
			ok = unit_source(dg, s, &x, &g) == 0;
		built = true;
		if (ok)
			ok = point_run(dg, s, &g, s->sizes[k], &r, err, sizeof err) == 0;
		if (!ok) {
			fflush(df);
			point_failed(s, &g, &x, diag.buf ? diag.buf : "", err, &r);
		}
		if (write(fd, &r, sizeof r) != (ssize_t)sizeof r)
			worker_exit(3);
		sent++;
	}
	diag_stream(dg, stderr);
	memout_drop(&diag);
	arena_free(&g.arena);
	free(g.text);
	return ok ? sent : -1;
}
