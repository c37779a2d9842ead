/*
 * packing_units.c: a packing's copies given whole units of a block that is
 * cut into a power of two of them (docs/algorithms.md, "Units a power of
 * two").
 *
 * Needs a packing of k copies per root (packing.h) and a unit count U >= k.
 * Establishes per copy (trees in order, each tree's copies in turn) its
 * share of its root's block in units, floor(U / k) or one more, the shares
 * of each root summing to U, and the factor rho by which the busiest link's
 * time exceeds the bound's: rho = max over links of load x rate / (U bw),
 * load the units the link carries per unit of segment.
 *
 * Why: an MSCCL file cuts the buffer into nblock x U x M chunks and runs
 * only at sizes that count divides; with k copies per root carrying 1/k
 * each, U is a multiple of k, and a k with an odd factor (7 on the 16-GCD
 * box) leaves no power-of-two size. Each root's U mod k extra units go, a
 * unit at a time over the roots in turn, to the root's copy whose busiest
 * link would take least time with it: the copies of one root take different
 * trees, so the extras spread over the links instead of piling on one.
 * With shares at most ceil(U / k) and a copy's load at most k bw / rate
 * per link (the packing's capacities), rho <= ceil(U / k) k / U < 1 + k / U
 * whatever the choice; the greedy choice only makes it smaller.
 */
#include <stdlib.h>

#include "packing.h"

/* The time of link l's load, in units of bw: the busiest link is the
 * largest. */
static double
link_time(const double *load, const double *bw, int l)
{
	return bw[l] > 0 ? load[l] / bw[l] : 0;
}

/* Tree t's links' load raised by n units per use. */
static void
add_tree(const PackTree *tr, int nrank, double n, double *load)
{
	for (int x = 0; x < nrank; x++)
		for (int h = 0; h < tr->nhop[x]; h++)
			load[tr->route[x][h]] += n;
}

/* The busiest of tree t's links, its time with one more unit per use. */
static double
tree_cost(const PackTree *tr, int nrank, const double *load, const double *bw, double *tmp)
{
	double worst = 0;
	/* a route through a switch may share a link with another edge's: its
	 * uses counted first, then each link's time taken */
	for (int x = 0; x < nrank; x++)
		for (int h = 0; h < tr->nhop[x]; h++)
			tmp[tr->route[x][h]] += 1;
	for (int x = 0; x < nrank; x++)
		for (int h = 0; h < tr->nhop[x]; h++) {
			int l = tr->route[x][h];
			if (tmp[l] > 0 && bw[l] > 0) {
				double t = (load[l] + tmp[l]) / bw[l];
				worst = t > worst ? t : worst;
			}
			tmp[l] = 0;
		}
	return worst;
}

double
pack_unit_shares(const Packing *pk, int nlink, const double *bw, Frac rate, int64_t k, int64_t units,
                 int64_t *share)
{
	int nrank = pk->nrank;
	int64_t q = units / k, extra = units % k;
	double *load = xcalloc((size_t)nlink, sizeof *load), *tmp = xcalloc((size_t)nlink, sizeof *tmp);
	/* each copy's tree, and each root's first copy (copies counted by root) */
	int ncopy = 0;
	for (int t = 0; t < pk->ntree; t++)
		ncopy += (int)pk->tree[t].mult;
	int *tree_of = xmalloc(((size_t)ncopy + 1) * sizeof *tree_of);
	int *by_root = xmalloc(((size_t)ncopy + 1) * sizeof *by_root);
	int *first = xcalloc((size_t)nrank + 1, sizeof *first);
	for (int t = 0, ci = 0; t < pk->ntree; t++)
		for (int64_t m = 0; m < pk->tree[t].mult; m++, ci++) {
			tree_of[ci] = t;
			share[ci] = q;
			first[pk->tree[t].root + 1]++;
			add_tree(&pk->tree[t], nrank, (double)q, load);
		}
	for (int r = 0; r < nrank; r++)
		first[r + 1] += first[r];
	int *fill = xmalloc(((size_t)nrank + 1) * sizeof *fill);
	for (int r = 0; r <= nrank; r++)
		fill[r] = first[r];
	for (int ci = 0; ci < ncopy; ci++)
		by_root[fill[pk->tree[tree_of[ci]].root]++] = ci;
	for (int64_t e = 0; e < extra; e++)
		for (int r = 0; r < nrank; r++) {
			int best = -1;
			double cost = 0;
			for (int i = first[r]; i < first[r + 1]; i++) {
				int ci = by_root[i];
				if (share[ci] > q)
					continue; /* one extra a copy: shares stay within ceil(U / k) */
				double t = tree_cost(&pk->tree[tree_of[ci]], nrank, load, bw, tmp);
				if (best < 0 || t < cost)
					best = ci, cost = t;
			}
			if (best >= 0) {
				share[best]++;
				add_tree(&pk->tree[tree_of[best]], nrank, 1, load);
			}
		}
	double worst = 0;
	for (int l = 0; l < nlink; l++)
		worst = link_time(load, bw, l) > worst ? link_time(load, bw, l) : worst;
	free(load), free(tmp), free(tree_of), free(by_root), free(first), free(fill);
	return worst * (double)rate.num / ((double)rate.den * (double)units);
}
