/*
 * alg_rooted.c: broadcast and reduce from a root.
 *   binomial_tree  in rank order relative to the root (v = r - root mod p):
 *                  broadcast round k, v < 2^k sends to v + 2^k; reduce is
 *                  the same tree run backwards; ceil(log2 p) rounds
 *   chain          the ranks in order from the root, the vector cut into S
 *                  segments (chain(segments S) or `chunks`; else the cost
 *                  model's for the size by the hops' own links,
 *                  chain_segments below):
 *                  position i forwards segment c in
 *                  round i + c, so the pipeline takes p - 2 + S rounds
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"

/* The chain's segments by its links. A segment's hop i takes D / S
 * times t_i, its route's slowest link's time a byte (1 / bandwidth, times
 * the hops whose routes share it), and a round takes alpha (the step
 * overhead and the slowest hop's route latency) and its slowest active
 * hop. So the S rounds with the slowest hop active take alpha + D t_max / S
 * each, and the fill and drain's p - 2 about alpha + D t / S with t the
 * other hops' times added up over their rounds: the run about
 * (S + p - 2) alpha + D t_max + D (sum t_i - t_max) / S, least at
 * S = sqrt(D (sum t_i - t_max) / alpha); with equal links the classic
 * sqrt((p - 2) D / (bw alpha)). */
static int
chain_segments(const AlgCtx *c)
{
	const Topo *t = c->topo;
	int p = c->nrank;
	double *uses = xcalloc((size_t)t->nlink + 1, sizeof *uses), sum = 0, most = 0, lat = 0;
	const int **route = xcalloc((size_t)p, sizeof *route);
	int *n = xcalloc((size_t)p, sizeof *n);
	for (int i = 0; i + 1 < p; i++) {
		int a = c->rank_node[imod(c->root + i, p)], z = c->rank_node[imod(c->root + i + 1, p)];
		n[i] = c->kind == CK_BROADCAST ? route_get(c->routes, a, z, &route[i])
		                               : route_get(c->routes, z, a, &route[i]);
		for (int h = 0; h < n[i]; h++)
			uses[route[i][h]]++;
	}
	for (int i = 0; i + 1 < p; i++) {
		double ti = 0, li = 0;
		for (int h = 0; h < n[i]; h++) {
			const Link *l = &t->link[route[i][h]];
			ti = fmax(ti, uses[route[i][h]] / l->bandwidth);
			li += l->latency + t->net.router_latency;
		}
		sum += ti;
		most = fmax(most, ti);
		lat = fmax(lat, li);
	}
	free(uses), free(route), free(n);
	return pipeline_segments_time(1, 8 * c->size * (sum - most), t->net.step_overhead + lat, p - 1);
}

Sched *
alg_rooted(const AlgCtx *c)
{
	int p = c->nrank, root = c->root;
	bool chain = strcmp(c->algorithm, "chain") == 0;
	bool bcast = c->kind == CK_BROADCAST;
	int fixed = c->segments ? c->segments : c->chunks;
	int S = !chain ? 1 : fixed ? fixed : chain_segments(c);
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
