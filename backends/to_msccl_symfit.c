/*
 * to_msccl_symfit.c: a `symmetric(..., segments auto)` whose program does
 * not fit the MSCCL executor's limits, built again with fewer segments
 * until one does (as to_msccl_fit.c does for packing).
 *
 * Needs a verified symmetric schedule whose segments the cost model chose
 * (Sched.size_chosen, S > 1: symm.c's symmetrize_auto) that
 * msccl_lower_counted refused. Establishes the same base trees and group
 * in the most segments, a power of two below S, whose program fits,
 * verified, with that program (found by msccl_fit_most's bisection, as a
 * packing's are); else -1 and nothing reported (the caller reports the
 * first refusal). A fixed `segments S` is the file's own choice and is not
 * changed.
 *
 * Why the most that fit: a rank's steps, and its thread blocks, grow with
 * the segments (each is an instance of its own), while the model's time
 * falls with S up to its choice (the search in symmetrize_auto stops at
 * the first S that gains nothing), so below the choice more is faster.
 */
#include <string.h>

#include "to_msccl.h"

bool
msccl_symmetric_refits(const Sched *s)
{
	const char *alg = strncmp(s->algorithm, "auto:", 5) == 0 ? s->algorithm + 5 : s->algorithm;
	return strcmp(alg, "symmetric") == 0 && s->group && s->size_chosen && s->segments > 1;
}

/* What one try builds from: s's base trees and the routes. */
typedef struct {
	Diag *dg;
	Arena *a;
	const Sched *s;
	const BuildOpts *o;
	Tree **trees;
	int ntree;
	Routes *routes;
} SymTry;

/* The base trees in m segments, verified, if their program fits: an
 * MscclFitTry. */
static const Sched *
try_segments(void *ctx, int m, MProg *p, MscclStats *st)
{
	SymTry *y = ctx;
	const Sched *s = y->s;
	Sched *t = symmetrize(y->dg, y->a, s->name, s->loc, s->kind, s->topo, y->routes, y->trees,
	                      y->ntree, m, s->group, s->rank_node, s->nrank);
	t->algorithm = s->algorithm;
	t->routing = s->routing;
	t->pack_group = s->pack_group;
	t->size_chosen = true;
	t->choice = arena_printf(y->a, "segments %d", m);
	return verify(y->dg, t) == 0 && msccl_lower_counted(y->dg, y->a, t, y->o, p, st) == 0 ? t
	                                                                                      : NULL;
}

int
msccl_fit_symmetric(Diag *dg, Arena *a, const Sched *s, const BuildOpts *o, const Sched **out,
                    MProg *p, MscclStats *st)
{
	*out = NULL;
	if (!msccl_symmetric_refits(s))
		return -1;
	int S = s->segments, ntree = s->ntree / S, below = 0;
	Tree **trees = arena_array(a, (size_t)ntree, sizeof *trees);
	for (int b = 0; b < ntree; b++) /* base tree b * S + j is tree b's segment j */
		trees[b] = s->tree[b * S];
	Routes routes;
	routes_init(&routes, s->topo, s->routing);
	SymTry y = {dg, a, s, o, trees, ntree, &routes};
	while (1 << below < S) /* exponents of the powers of two below S */
		below++;
	diag_mute(dg, true); /* each refusal is a try */
	*out = msccl_fit_most(try_segments, &y, true, 0, below, try_segments(&y, 1, p, st), p, st,
	                      NULL); /* the choice names its segments */
	diag_mute(dg, false);
	routes_free(&routes);
	return *out ? 0 : -1;
}
