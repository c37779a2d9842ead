/*
 * alg_dbt.c: NCCL's double binary tree allreduce (algorithms.md 4). Tree 1
 * is the in-order binary tree on ranks: for r > 0 with lowest set bit b,
 * the parent is (r ^ b) | 2b, or r ^ b when that is p or more; rank 0 is
 * the root. Tree 2 mirrors it (r plays p - 1 - r) for even p, or shifts it
 * (r plays r - 1) for odd p. Each tree carries half of the vector, cut into
 * C pipeline chunks (`chunks 2C`, default C = 1): in a tree of height h the
 * node at depth k sends chunk c up in slot (h - k) + c, and the parent at
 * depth k - 1 sends it down in slot h + c + k - 1: 2h + C - 1 slots.
 */
#include <stdlib.h>

#include "alg.h"

static int
parent1(int r, int p)
{
	if (r == 0)
		return -1;
	int b = r & -r, up = (r ^ b) | (2 * b);
	return up < p ? up : r ^ b;
}

int
dbt_parent(int tree, int r, int p)
{
	if (tree == 0)
		return parent1(r, p);
	if (p % 2 == 0) {
		int q = parent1(p - 1 - r, p);
		return q < 0 ? -1 : p - 1 - q;
	}
	int q = parent1(imod(r - 1, p), p);
	return q < 0 ? -1 : imod(q + 1, p);
}

Sched *
alg_dbt(const AlgCtx *c)
{
	int p = c->nrank;
	/* the vector: 2 halves (one per tree) of C chunks; blocks are halves here */
	int C = 1;
	if (c->chunks) {
		if (c->chunks % 2) {
			error_at(c->diag, c->loc, "double_binary_tree needs an even chunk count (two trees, C "
			         "pipeline chunks each); chunks %d is odd", c->chunks);
			return NULL;
		}
		C = c->chunks / 2;
	}
	AlgCtx whole = *c;
	whole.chunks = 0;
	Gen g;
	if (gen_begin(&g, &whole, 2, C) != 0)
		return NULL;
	int *depth = xmalloc((size_t)p * sizeof *depth);
	for (int t = 0; t < 2; t++) {
		int h = 0;
		for (int r = 0; r < p; r++) {
			depth[r] = 0;
			for (int u = r; dbt_parent(t, u, p) >= 0; u = dbt_parent(t, u, p))
				depth[r]++;
			if (depth[r] > h)
				h = depth[r];
		}
		for (int r = 0; r < p; r++) {
			int up = dbt_parent(t, r, p);
			if (up < 0)
				continue;
			for (int k = 0; k < C; k++) {
				gen_block(&g, t, k);
				gen_send(&g, h - depth[r] + k, r, up, X_REDUCE);
				gen_block(&g, t, k);
				gen_send(&g, h + k + depth[r] - 1, up, r, X_COPY);
			}
		}
	}
	free(depth);
	return gen_end(c->diag, &g);
}
