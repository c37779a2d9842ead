/*
 * packing_shallow.c: shallower trees for the same link loads (packing.h;
 * docs/algorithms.md "Optimal tree packings", "Shallower trees").
 *
 * Needs: a packing whose trees each span every rank, parent and route per
 * rank, depth and height consistent with the parents.
 * Establishes: the same packing's link loads (every link carries exactly
 * the copies it carried), every tree still spanning every rank, with the
 * parents and routes of some ranks exchanged between trees of equal
 * multiplicity where that lowers the trees' depth profile: the number of
 * (tree, rank) pairs at the greatest depth, then at the next, and so on.
 *
 * Why it keeps the loads: rank v's edge in tree A (parent p, route P) and
 * in tree B (parent q, route Q), both of multiplicity m, become (q, Q) in A
 * and (p, P) in B: the multiset of (multiplicity, route) the loads sum over
 * is unchanged. A stays a tree (every rank one parent, no cycle) when q is
 * not in v's subtree in A, and B when p is not in v's subtree in B; the
 * subtrees move whole, so every rank stays reached from the root.
 *
 * Why: a round-synchronous pipeline over the trees pays a fill and drain
 * that grows with their height (alg_packing.c's imbalance); the growth in
 * packing.c takes the first arc that keeps its copies, not the one that
 * keeps trees short, and at the bound no arc has room left to regrow on.
 */
#include <stdlib.h>
#include <string.h>

#include "collc_limits.h"
#include "packing.h"

/* Whether u lies in v's subtree (u == v counts). */
static bool
in_subtree(const PackTree *t, int u, int v)
{
	while (u >= 0 && t->depth[u] > t->depth[v])
		u = t->parent[u];
	return u == v;
}

/* Adds to hist the move of v's subtree in t by shift levels. */
static void
shift_profile(const PackTree *t, int nrank, int v, int shift, int *hist)
{
	for (int u = 0; u < nrank; u++)
		if (t->depth[u] >= t->depth[v] && in_subtree(t, u, v)) {
			hist[t->depth[u]]--;
			hist[t->depth[u] + shift]++;
		}
}

static void
shift_depths(PackTree *t, int nrank, int v, int shift)
{
	int *mark = xcalloc((size_t)nrank, sizeof *mark);
	for (int u = 0; u < nrank; u++)
		mark[u] = t->depth[u] >= t->depth[v] && in_subtree(t, u, v);
	t->height = 0;
	for (int u = 0; u < nrank; u++) {
		t->depth[u] += mark[u] ? shift : 0;
		t->height = t->depth[u] > t->height ? t->depth[u] : t->height;
	}
	free(mark);
}

/* Whether exchanging v's edges in a and b lowers the profile; hist (of
 * 2 nrank counts) is left zeroed. */
static bool
lowers(const PackTree *a, const PackTree *b, int nrank, int v, int sa, int sb, int *hist)
{
	shift_profile(a, nrank, v, sa, hist);
	shift_profile(b, nrank, v, sb, hist);
	bool better = false;
	for (int d = 2 * nrank - 1; d >= 0; d--)
		if (hist[d] != 0) {
			better = hist[d] < 0;
			break;
		}
	memset(hist, 0, 2 * (size_t)nrank * sizeof *hist);
	return better;
}

/* Tries to exchange v's edges in trees a and b; whether it did. */
static bool
try_exchange(PackTree *a, PackTree *b, int nrank, int v, int *hist)
{
	int p = a->parent[v], q = b->parent[v];
	if (a->mult != b->mult || p < 0 || q < 0 || p == q)
		return false;
	int sa = a->depth[q] + 1 - a->depth[v], sb = b->depth[p] + 1 - b->depth[v];
	if ((sa >= 0 && sb >= 0) || in_subtree(a, q, v) || in_subtree(b, p, v))
		return false;
	if (!lowers(a, b, nrank, v, sa, sb, hist))
		return false;
	int nhop = a->nhop[v], *route = a->route[v];
	a->parent[v] = q, a->nhop[v] = b->nhop[v], a->route[v] = b->route[v];
	b->parent[v] = p, b->nhop[v] = nhop, b->route[v] = route;
	shift_depths(a, nrank, v, sa);
	shift_depths(b, nrank, v, sb);
	return true;
}

double
pack_shallow_work(const Packing *pk)
{
	double t = pk->ntree, n = pk->nrank;
	return t * t * n * n * PACK_SHALLOW_PASSES;
}

int
pack_shallow(Packing *pk)
{
	if (pk->nrank < 3 || pack_shallow_work(pk) > MAX_PACK_SHALLOW_WORK)
		return 0;
	int n = pk->nrank, done = 0;
	int *hist = xcalloc(2 * (size_t)n, sizeof *hist);
	for (int pass = 0; pass < PACK_SHALLOW_PASSES; pass++) {
		int moved = 0;
		for (int a = 0; a < pk->ntree; a++)
			for (int v = 0; v < n; v++)
				for (int b = a + 1; b < pk->ntree; b++)
					moved += try_exchange(&pk->tree[a], &pk->tree[b], n, v, hist);
		done += moved;
		if (!moved)
			break;
	}
	free(hist);
	return done;
}
