/*
 * to_msccl_symfit.c: a `symmetric(..., segments auto)` whose program does
 * not fit the MSCCL executor's limits, built again with fewer segments
 * until one does (as to_msccl_fit.c does for packing).
 *
 * Needs a verified symmetric schedule whose segments the cost model chose
 * (Sched.size_chosen, S > 1: symm.c's symmetrize_auto) that
 * msccl_lower_counted refused. Establishes the same base trees and group
 * in the most segments, a power of two below S, whose program fits,
 * verified, with that program; else -1 and nothing reported (the caller
 * reports the first refusal). A fixed `segments S` is the file's own
 * choice and is not changed.
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

int
msccl_fit_symmetric(Diag *dg, Arena *a, const Sched *s, const BuildOpts *o, const Sched **out,
                    MProg *p, MscclStats *st)
{
	*out = NULL;
	if (!msccl_symmetric_refits(s))
		return -1;
	int S = s->segments, ntree = s->ntree / S;
	Tree **trees = arena_array(a, (size_t)ntree, sizeof *trees);
	for (int b = 0; b < ntree; b++) /* base tree b * S + j is tree b's segment j */
		trees[b] = s->tree[b * S];
	Routes routes;
	routes_init(&routes, s->topo, s->routing);
	diag_mute(dg, true); /* each refusal is a try */
	for (int m = S / 2; m >= 1 && !*out; m /= 2) {
		Sched *t = symmetrize(dg, a, s->name, s->loc, s->kind, s->topo, &routes, trees, ntree, m,
		                      s->group, s->rank_node, s->nrank);
		t->algorithm = s->algorithm;
		t->routing = s->routing;
		t->pack_group = s->pack_group;
		t->size_chosen = true;
		t->choice = arena_printf(a, "segments %d", m);
		if (verify(dg, t) == 0 && msccl_lower_counted(dg, a, t, o, p, st) == 0)
			*out = t;
	}
	diag_mute(dg, false);
	routes_free(&routes);
	return *out ? 0 : -1;
}
