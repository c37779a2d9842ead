/*
 * to_msccl_fit.c: a `packing` whose program does not fit the MSCCL
 * executor's limits, built again with fewer segments until one does; and
 * one whose chunk count no power of two divides, built again in a power of
 * two of units a block (AlgCtx.pack_pow2, ir/packing_units.c).
 *
 * Needs a verified schedule of `packing` (named or auto's pick) that
 * msccl_lower_counted refused, or that msccl_packing_uncut names.
 * Establishes, when some segment count fits, the schedule of the same
 * trees (the packing does not depend on the segments; a PackMemo keeps it
 * across the tries) with the most segments whose program fits, verified,
 * and that program; where the blocks are a power of two the segments are
 * one too (and the units, for an uncut one), so every power-of-two size
 * from chunk count x 4 bytes cuts into whole floats (the executor selects
 * a file only there); a packing by a group's orbits that fits fewer
 * segments than its own gives way to every root's trees where those fit
 * more; else -1 and nothing reported (the caller reports the first
 * refusal).
 *
 * Why segments and not trees: a rank's MSCCL steps are one per message and
 * run of chunks (to_msccl_bound.c), and packing sends a message per tree
 * copy, tree edge and segment, so the steps grow with the segments times
 * the copies. The copies per root are the least that meet the cut bound
 * (packing.c tries 1, 2, ...), so fewer would leave the bound; fewer
 * segments keep the link loads at the bound and cost only the pipeline's
 * fill and drain: with S levels and a round's fixed cost alpha, a run takes
 * about T + (M + S - 1) alpha + I T / M (docs/algorithms.md, "Levels and
 * segments"), which falls as M grows up to the model's choice. So the most
 * segments that fit is the cheapest fit; the search halves the interval
 * between a count that fits and one that does not (a program's steps grow
 * with M), a few lowerings.
 *
 * Tune lowers a schedule in many configurations (protocols, channels,
 * instances) and at every size, so an MscclFitCache keeps per collective
 * what does not depend on them: its trees (a PackMemo), the schedules
 * built by segment count (verified once) and the count the last fit
 * chose. That count is tried first and taken when it fits, without a
 * search above it: tune goes on to more channels and instances, which
 * only lower what fits (a protocol of larger connection capacity might fit
 * more; the cache gives that up for one bisection per collective). Only a
 * refusal there bisects below it.
 */
#include <stdlib.h>
#include <string.h>

#include "to_msccl.h"

/* One schedule of the trees with m segments (NULL: it did not build). */
typedef struct FitBuilt {
	int m;
	bool pow2;  /* a block in a power of two of units (AlgCtx.pack_pow2) */
	bool plain; /* every root's trees, not the group's orbits */
	const Sched *t;
	bool verified;
} FitBuilt;

/* A collective's fits: its key (name, kind, ranks, root: tune builds it
 * again per size, on topologies lowered again), the count the last fit
 * chose, and for the topology and ranks it was last built on its trees
 * and schedules. */
typedef struct FitEntry {
	char *name; /* its own copy: tune frees a size's schedules before the next */
	CollKind kind;
	int nrank, root;
	const Topo *topo;
	const int *rank_node;
	PackMemo *memo, *plain_memo; /* the trees by the group's orbits; of every root */
	Routes routes;
	int last[2]; /* the segments the last fit chose, [plain]; 0: none yet */
	int nbuilt, cap;
	FitBuilt *built;
} FitEntry;

struct MscclFitCache {
	int n, cap;
	FitEntry *e;
};

MscclFitCache *
msccl_fit_cache_new(void)
{
	return xcalloc(1, sizeof(MscclFitCache));
}

static void
entry_free(FitEntry *e)
{
	if (e->memo)
		routes_free(&e->routes);
	pack_memo_free(e->memo);
	pack_memo_free(e->plain_memo);
	free(e->built);
}

/* The trees and schedules of e for s's topology and ranks. */
static void
entry_on(FitEntry *e, const Sched *s)
{
	if (e->memo && e->topo == s->topo && e->rank_node == s->rank_node)
		return;
	entry_free(e);
	e->topo = s->topo, e->rank_node = s->rank_node, e->memo = pack_memo_new();
	e->plain_memo = pack_memo_new();
	e->nbuilt = e->cap = 0;
	e->built = NULL;
	routes_init(&e->routes, s->topo, s->routing);
}

void
msccl_fit_cache_free(MscclFitCache *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->n; i++) {
		entry_free(&c->e[i]);
		free(c->e[i].name);
	}
	free(c->e);
	free(c);
}

/* s's entry in c, made on first use. */
static FitEntry *
entry_of(MscclFitCache *c, const Sched *s)
{
	FitEntry *e = NULL;
	for (int i = 0; i < c->n && !e; i++)
		if (c->e[i].kind == s->kind && c->e[i].nrank == s->nrank && c->e[i].root == s->root &&
		    strcmp(c->e[i].name, s->name) == 0)
			e = &c->e[i];
	if (!e) {
		if (c->n == c->cap) {
			c->cap = c->cap ? 2 * c->cap : 4;
			c->e = xrealloc(c->e, (size_t)c->cap * sizeof *c->e);
		}
		e = &c->e[c->n++];
		size_t len = strlen(s->name) + 1;
		*e = (FitEntry){.name = memcpy(xmalloc(len), s->name, len), .kind = s->kind,
		                .nrank = s->nrank, .root = s->root};
	}
	entry_on(e, s);
	return e;
}

typedef struct FitTry {
	Diag *dg;
	Arena *a;
	const Sched *s;
	const BuildOpts *o;
	FitEntry *e;
	bool pow2;  /* the schedules built with AlgCtx.pack_pow2, their segments powers of two */
	bool plain; /* the schedules packed root by root (no group) */
} FitTry;

/* The count the last fit of f's kind chose. */
static int *
last_of(FitTry *f)
{
	return &f->e->last[f->plain];
}

/* s's trees with m segments, built once per entry. */
static FitBuilt *
built(FitTry *f, int m)
{
	FitEntry *e = f->e;
	for (int i = 0; i < e->nbuilt; i++)
		if (e->built[i].m == m && e->built[i].pow2 == f->pow2 && e->built[i].plain == f->plain)
			return &e->built[i];
	const Sched *s = f->s;
	AlgCtx c = alg_ctx_new(f->dg, f->a, s->name, s->loc, s->kind, s->topo, &e->routes, s->rank_node,
	                       s->nrank);
	c.root = s->root;
	c.pack_group = f->plain ? NULL : s->pack_group;
	c.algorithm = "packing";
	c.segments = m;
	c.pack_memo = f->plain ? e->plain_memo : e->memo;
	c.pack_pow2 = f->pow2;
	bool missing;
	Sched *t = alg_build(&c, &missing);
	if (t)
		t->algorithm = s->algorithm;
	if (e->nbuilt == e->cap) {
		e->cap = e->cap ? 2 * e->cap : 8;
		e->built = xrealloc(e->built, (size_t)e->cap * sizeof *e->built);
	}
	e->built[e->nbuilt] = (FitBuilt){m, f->pow2, f->plain, t, false};
	return &e->built[e->nbuilt++];
}

/* s's packing with m segments if its program fits (into p): an
 * MscclFitTry on a FitTry. */
static const Sched *
try_segments(void *ctx, int m, MProg *p, MscclStats *st)
{
	FitTry *f = ctx;
	const Sched *t = built(f, m)->t;
	if (!t || msccl_lower_counted(f->dg, f->a, t, f->o, p, st) != 0)
		return NULL;
	return t;
}

const Sched *
msccl_fit_most(MscclFitTry try_fit, void *ctx, bool pow2, int lo, int hi, const Sched *best,
               MProg *p, MscclStats *st, int *chosen)
{
	MProg tp;
	MscclStats ts;
	while (best && hi - lo > 1) {
		int mid = lo + (hi - lo) / 2;
		const Sched *t = try_fit(ctx, pow2 ? 1 << mid : mid, &tp, &ts);
		if (t) {
			best = t, lo = mid;
			*p = tp;
			*st = ts;
		} else {
			hi = mid;
		}
	}
	if (best && chosen)
		*chosen = pow2 ? 1 << lo : lo;
	return best;
}

/* The fit below hi: the entry's last count where it fits, else bisection
 * from one segment. */
static const Sched *
fit_below(FitTry *f, int hi, MProg *p, MscclStats *st)
{
	int last = *last_of(f);
	if (last > 0 && last < hi) {
		const Sched *t = try_segments(f, last, p, st);
		if (t)
			return t;
		hi = last;
	}
	return msccl_fit_most(try_segments, f, false, 1, hi, try_segments(f, 1, p, st), p, st,
	                      last_of(f));
}

/* The fit in a power of two of units: the most segments that fit among the
 * powers of two up to top (the chunk count stays a power of two), the
 * entry's last count first where it is one of them. */
static const Sched *
fit_pow2(FitTry *f, int top, MProg *p, MscclStats *st)
{
	int last = *last_of(f);
	if (last > 0 && last <= top && (last & (last - 1)) == 0) {
		const Sched *t = try_segments(f, last, p, st);
		if (t)
			return t;
		top = last / 2;
	}
	const Sched *t = top >= 1 ? try_segments(f, top, p, st) : NULL;
	if (t || top <= 1) {
		*last_of(f) = t ? top : *last_of(f);
		return t;
	}
	/* exponents: 2^0 is tried first, 2^hi (top) did not fit */
	int hi = 0;
	while (1 << (hi + 1) <= top)
		hi++;
	return msccl_fit_most(try_segments, f, true, 0, hi, try_segments(f, 1, p, st), p, st,
	                      last_of(f));
}

bool
msccl_packing_uncut(const Sched *s)
{
	const char *alg = strncmp(s->algorithm, "auto:", 5) == 0 ? s->algorithm + 5 : s->algorithm;
	int nblock = s->kind == CK_BROADCAST || s->kind == CK_REDUCE ? 1 : s->nrank;
	return strcmp(alg, "packing") == 0 && s->segments > 0 && (nblock & (nblock - 1)) == 0 &&
	       (s->nchunk & (s->nchunk - 1)) != 0;
}

/* f's fit with at most `most` segments: by powers of two (fit_pow2) where
 * the blocks are a power of two, so the chunk count stays one; else the
 * most segments by bisection. */
static const Sched *
fit_any(FitTry *f, int most, MProg *p, MscclStats *st)
{
	int top = 1;
	while (top <= most / 2)
		top *= 2;
	return f->pow2 ? fit_pow2(f, top, p, st) : fit_below(f, most + 1, p, st);
}

int
msccl_fit_packing(Diag *dg, Arena *a, const Sched *s, const BuildOpts *o, MscclFitCache *fc,
                  const Sched **out, MProg *p, MscclStats *st)
{
	const char *alg = strncmp(s->algorithm, "auto:", 5) == 0 ? s->algorithm + 5 : s->algorithm;
	int hi = strcmp(alg, "packing") == 0 ? s->segments : 0; /* does not fit */
	int nblock = s->kind == CK_BROADCAST || s->kind == CK_REDUCE ? 1 : s->nrank;
	bool uncut = msccl_packing_uncut(s);
	if (hi <= 1 && !uncut)
		return -1;
	MscclFitCache *own = fc ? NULL : msccl_fit_cache_new();
	/* the blocks a power of two: the units and the segments too, so the
	 * file cuts every power-of-two size from its chunk count up */
	FitTry f = {.dg = dg, .a = a, .s = s, .o = o, .e = entry_of(fc ? fc : own, s),
	            .pow2 = (nblock & (nblock - 1)) == 0};
	diag_mute(dg, true);
	/* s's own count did not fit, unless it was not tried (uncut) */
	const Sched *best = fit_any(&f, uncut ? hi : hi - 1, p, st);
	/* a packing by a group's orbits (more copies a root: 32 on hyperx(2,
	 * 2, 4), where every root's packing has 1) may fit only a segment or
	 * two where every root's fits more, and its fill and drain then cost
	 * most: the trees of every root where they fit more segments */
	if (s->pack_group && (!best || *last_of(&f) < hi)) {
		FitTry g = f;
		g.plain = true;
		MProg gp;
		MscclStats gs;
		const Sched *alt = fit_any(&g, hi, &gp, &gs);
		if (alt && (!best || *last_of(&g) > *last_of(&f))) {
			best = alt, f = g;
			*p = gp;
			*st = gs;
		}
	}
	FitBuilt *b = best ? built(&f, *last_of(&f)) : NULL;
	if (b && !b->verified) {
		b->verified = verify(dg, best) == 0;
		best = b->verified ? best : NULL;
	}
	diag_mute(dg, false);
	msccl_fit_cache_free(own);
	*out = best;
	return best ? 0 : -1;
}
