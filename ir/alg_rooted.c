/*
 * alg_rooted.c: broadcast and reduce from a root.
 *   binomial_tree  in rank order relative to the root (v = r - root mod p):
 *                  broadcast round k, v < 2^k sends to v + 2^k; reduce is
 *                  the same tree run backwards; ceil(log2 p) rounds
 *   chain          the ranks in order from the root, the vector cut into S
 *                  segments (chain(segments S) or `chunks`; else the cost
 *                  model's for the size, pipeline_segments with fill p - 2
 *                  and the whole vector): position i forwards segment c in
 *                  round i + c, so the pipeline takes p - 2 + S rounds
 */
#include <string.h>

#include "alg.h"

Sched *
alg_rooted(const AlgCtx *c)
{
	int p = c->nrank, root = c->root;
	bool chain = strcmp(c->algorithm, "chain") == 0;
	bool bcast = c->kind == CK_BROADCAST;
	int fixed = c->segments ? c->segments : c->chunks;
	int S = !chain ? 1 : fixed ? fixed : pipeline_segments(c, p - 2, c->size, p - 1);
	AlgCtx one = *c;
	if (chain)
		one.chunks = 0;
	Gen g;
	if (gen_begin(&g, &one, S, 1) != 0)
		return NULL;
	if (chain) {
		for (int i = 0; i + 1 < p; i++)
			for (int k = 0; k < S; k++) {
				gen_block(&g, k, -1);
				if (bcast)
					gen_send(&g, i + k, imod(root + i, p), imod(root + i + 1, p), X_COPY);
				else /* towards the root: the far end starts */
					gen_send(&g, (p - 2 - i) + k, imod(root + i + 1, p), imod(root + i, p),
					         X_REDUCE);
			}
		g.s->choice = arena_printf(c->arena, "%ssegments %d", fixed ? "fixed " : "", S);
		g.s->size_chosen = !fixed;
	} else {
		int L = clog2(p);
		for (int k = 0; k < L; k++)
			for (int v = 0; v < (1 << k) && v + (1 << k) < p; v++) {
				for (int b = 0; b < S; b++)
					gen_block(&g, b, -1);
				int a = imod(root + v, p), z = imod(root + v + (1 << k), p);
				if (bcast)
					gen_send(&g, k, a, z, X_COPY);
				else
					gen_send(&g, L - 1 - k, z, a, X_REDUCE);
			}
	}
	return gen_end(c->diag, &g);
}
