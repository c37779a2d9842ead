/*
 * to_msccl_fit.c: a `packing` whose program does not fit the MSCCL
 * executor's limits, built again with fewer segments until one does.
 *
 * Needs a verified schedule of `packing` (named or auto's pick) that
 * msccl_lower_counted refused. Establishes, when some segment count fits,
 * the schedule of the same trees (the packing does not depend on the
 * segments; a PackMemo keeps it across the tries) with the most segments
 * whose program fits, verified, and that program; else -1 and nothing
 * reported (the caller reports the first refusal).
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
 */
#include <stdio.h>
#include <string.h>

#include "to_msccl.h"

/* The segments a packing schedule was built with, or 0 if s is none. */
static int
packing_segments(const Sched *s)
{
	const char *alg = strncmp(s->algorithm, "auto:", 5) == 0 ? s->algorithm + 5 : s->algorithm;
	int m = 0;
	if (strcmp(alg, "packing") != 0 || !s->choice || sscanf(s->choice, "segments %d", &m) != 1)
		return 0;
	return m;
}

typedef struct FitTry {
	Diag *dg;
	Arena *a;
	const Sched *s;
	const BuildOpts *o;
	Routes routes;
	PackMemo *memo;
} FitTry;

/* s's packing with m segments if its program fits (into p); verified by
 * the caller once chosen. */
static const Sched *
try_segments(FitTry *f, int m, MProg *p, MscclStats *st)
{
	const Sched *s = f->s;
	AlgCtx c = alg_ctx_new(f->dg, f->a, s->name, s->loc, s->kind, s->topo, &f->routes, s->rank_node,
	                       s->nrank);
	c.root = s->root;
	c.pack_group = s->pack_group;
	c.algorithm = "packing";
	c.segments = m;
	c.pack_memo = f->memo;
	bool missing;
	Sched *t = alg_build(&c, &missing);
	if (!t || msccl_lower_counted(f->dg, f->a, t, f->o, p, st) != 0)
		return NULL;
	t->algorithm = s->algorithm;
	return t;
}

/* The most segments below hi whose program fits, by bisection; NULL if
 * even one segment does not. */
static const Sched *
most_segments(FitTry *f, int hi, MProg *p, MscclStats *st)
{
	MProg tp;
	MscclStats ts;
	const Sched *best = try_segments(f, 1, p, st);
	int lo = 1;
	while (best && hi - lo > 1) {
		int mid = lo + (hi - lo) / 2;
		const Sched *t = try_segments(f, mid, &tp, &ts);
		if (t) {
			best = t, lo = mid;
			*p = tp;
			*st = ts;
		} else {
			hi = mid;
		}
	}
	return best;
}

int
msccl_fit_packing(Diag *dg, Arena *a, const Sched *s, const BuildOpts *o, const Sched **out, MProg *p,
                  MscclStats *st)
{
	int hi = packing_segments(s); /* does not fit */
	if (hi <= 1)
		return -1;
	FitTry f = {.dg = dg, .a = a, .s = s, .o = o, .memo = pack_memo_new()};
	routes_init(&f.routes, s->topo, s->routing);
	diag_mute(dg, true);
	const Sched *best = most_segments(&f, hi, p, st);
	if (best && verify(dg, best) != 0)
		best = NULL;
	diag_mute(dg, false);
	routes_free(&f.routes);
	pack_memo_free(f.memo);
	*out = best;
	return best ? 0 : -1;
}
