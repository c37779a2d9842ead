/*
 * alg_bucket.c: Bucket on d-dimensional tori, in its balanced multiport
 * form (algorithms.md 2): 2d instances (j, e), one per (dimension,
 * direction), each on 1/2d of every block. Instance (j, e) runs ring
 * reduce-scatters dimension by dimension in the cyclic order j, j+1, ...
 * over direction e, then allgathers in the reverse order. In every round
 * the instances use the 2d link classes once each: psi = theta = omega = 1,
 * 2d(n-1) rounds on T_n^d. Each instance is its own Msg.instance: on a
 * rectangle the instances that start on the short side reach the long one
 * while the others are still there, and they share its links as independent
 * pipelines instead of being packed into one message per link and round.
 */
#include <stdlib.h>
#include <string.h>

#include "alg.h"

/* Sends from every rank x, over its link along (dim, e), the blocks b with
 * b[dim] = x[dim] - e * shift, b equal to x on dims[0..k), free on the rest. */
static void
phase_step(Gen *g, const int *dims, int k, int e, int shift, int sub, int round, XferOp op)
{
	const Topo *t = g->ctx->topo;
	int d = t->ndim, D = dims[k];
	for (int x = 0; x < g->p; x++) {
		int cx[MAX_DIMS], b[MAX_DIMS];
		topo_coords(t, x, cx);
		memcpy(b, cx, sizeof b);
		b[D] = imod(cx[D] - e * shift, t->size[D]);
		/* odometer over the free dimensions dims[k+1..] */
		int free_dims[MAX_DIMS], nfree = 0;
		for (int i = k + 1; i < d; i++) {
			free_dims[nfree++] = dims[i];
			b[dims[i]] = 0;
		}
		for (;;) {
			gen_block(g, topo_node(t, b), sub);
			int i = 0;
			while (i < nfree && ++b[free_dims[i]] == t->size[free_dims[i]])
				b[free_dims[i++]] = 0;
			if (i == nfree)
				break;
		}
		int to[MAX_DIMS];
		memcpy(to, cx, sizeof to);
		to[D] += e;
		gen_send_link(g, round, x, topo_node(t, to), op, gen_link(g, x, D, e));
	}
}

Sched *
alg_bucket(const AlgCtx *c)
{
	const Topo *t = c->topo;
	if (!(t->kind == TK_TORUS || t->kind == TK_RING) || !c->whole) {
		error_at(c->loc, "bucket runs on every rank of a torus (its rings are the torus's "
		         "rings); '%s' is %s", c->name, c->whole ? "not on a torus" : "a sub-communicator");
		return NULL;
	}
	int d = t->ndim;
	Gen g;
	if (gen_begin(&g, c, c->nrank, 2 * d) != 0)
		return NULL;
	bool rs = c->kind != CK_ALLGATHER, ag = c->kind != CK_REDUCE_SCATTER;
	for (int j = 0; j < d; j++)
		for (int e = +1; e >= -1; e -= 2) {
			int sub = 2 * j + (e < 0), dims[MAX_DIMS], round = 0;
			g.b.instance = sub;
			for (int k = 0; k < d; k++)
				dims[k] = (j + k) % d;
			for (int k = 0; rs && k < d; k++)
				for (int s = 0; s < t->size[dims[k]] - 1; s++)
					phase_step(&g, dims, k, e, s + 1, sub, round++, X_REDUCE);
			for (int k = d - 1; ag && k >= 0; k--)
				for (int s = 0; s < t->size[dims[k]] - 1; s++)
					phase_step(&g, dims, k, e, s, sub, round++, X_COPY);
		}
	return gen_end(&g);
}
