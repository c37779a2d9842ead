/*
 * alg_bruck.c: Bruck's algorithms and pairwise exchange (algorithms.md 7),
 * for any rank count, s = ceil(log2 p) steps of offset 2^k.
 *   alltoall        position i of rank r starts with the block for r + i;
 *                   step k sends the positions with bit k set to r + 2^k
 *   allgather       step k sends every block held to r - 2^k
 *   reduce_scatter  step k sends to u + 2^k the partial sums of the blocks
 *                   whose offset (b - u) mod p has bit k set and no lower bit
 *   allreduce       reduce_scatter then allgather, 2s steps
 * pairwise: alltoall in p - 1 steps, partner r XOR k for p = 2^L (MPICH),
 * r + k otherwise.
 */
#include <stdlib.h>

#include "alg.h"

static int
bruck_alltoall(Gen *g)
{
	int p = g->p, s = clog2(p);
	/* holder[r * p + i]: the block at position i of rank r */
	int *holder = xmalloc((size_t)p * (size_t)p * sizeof *holder);
	int *next = xmalloc((size_t)p * (size_t)p * sizeof *next);
	for (int r = 0; r < p; r++)
		for (int i = 0; i < p; i++)
			holder[r * p + i] = r * p + imod(r + i, p); /* block (r -> r + i) */
	for (int k = 0; k < s; k++) {
		for (int r = 0; r < p * p; r++)
			next[r] = holder[r];
		for (int r = 0; r < p; r++) {
			int to = imod(r + (1 << k), p);
			for (int i = 0; i < p; i++)
				if (i >> k & 1) {
					gen_block(g, holder[r * p + i], -1);
					next[to * p + i] = holder[r * p + i];
				}
			gen_send(g, k, r, to, X_COPY);
		}
		int *tmp = holder;
		holder = next;
		next = tmp;
	}
	free(holder);
	free(next);
	return s;
}

static int
bruck_reduce_scatter(Gen *g, int round)
{
	int p = g->p, s = clog2(p);
	for (int k = 0; k < s; k++, round++)
		for (int u = 0; u < p; u++) {
			for (int o = 0; o < p; o++)
				if ((o >> k & 1) && (o & ((1 << k) - 1)) == 0)
					gen_block(g, imod(u + o, p), -1);
			gen_send(g, round, u, imod(u + (1 << k), p), X_REDUCE);
		}
	return round;
}

static int
bruck_allgather(Gen *g, int round)
{
	int p = g->p, s = clog2(p);
	for (int k = 0; k < s; k++, round++)
		for (int r = 0; r < p; r++) {
			/* r holds blocks r .. r + 2^k - 1; the receiver lacks r .. r + p - 2^k - 1 */
			int n = (1 << k) < p - (1 << k) ? 1 << k : p - (1 << k);
			for (int i = 0; i < n; i++)
				gen_block(g, imod(r + i, p), -1);
			gen_send(g, round, r, imod(r - (1 << k), p), X_COPY);
		}
	return round;
}

Sched *
alg_bruck(const AlgCtx *c)
{
	Gen g;
	int p = c->nrank;
	if (gen_begin(&g, c, c->kind == CK_ALLTOALL ? p * p : p, 1) != 0)
		return NULL;
	if (c->kind == CK_ALLTOALL)
		bruck_alltoall(&g);
	else if (c->kind == CK_REDUCE_SCATTER)
		bruck_reduce_scatter(&g, 0);
	else if (c->kind == CK_ALLGATHER)
		bruck_allgather(&g, 0);
	else
		bruck_allgather(&g, bruck_reduce_scatter(&g, 0));
	return gen_end(c->diag, &g);
}

Sched *
alg_pairwise(const AlgCtx *c)
{
	Gen g;
	int p = c->nrank;
	if (gen_begin(&g, c, p * p, 1) != 0)
		return NULL;
	bool pow2 = is_pow(p, 2);
	for (int k = 1; k < p; k++)
		for (int r = 0; r < p; r++) {
			int to = pow2 ? r ^ k : imod(r + k, p);
			gen_block(&g, r * p + to, -1);
			gen_send(&g, k - 1, r, to, X_COPY);
		}
	return gen_end(c->diag, &g);
}
