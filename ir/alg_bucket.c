/*
 * alg_bucket.c: Bucket on d-dimensional tori, in its balanced multiport
 * form (algorithms.md 2): 2d instances (j, e), one per (dimension,
 * direction), each on 1/2d of every block. Instance (j, e) runs ring
 * reduce-scatters dimension by dimension in the cyclic order j, j+1, ...
 * over direction e, then allgathers in the reverse order. In every round
 * the instances use the 2d link classes once each: psi = theta = omega = 1,
 * 2d(n-1) rounds on T_n^d. Each instance is its own Msg.instance.
 * It runs phase by phase, as a multiport Bucket's loop over its dimension
 * phases does: phase k (every instance on its k-th ring) holds rounds
 * [k L, (k + 1) L), L the longest ring's steps, with a barrier (Sched.barrier)
 * between phases. On equal sides that is round after round; on a rectangle
 * an instance on a short ring ends its phase early (by dependencies it goes
 * at its own pace, carrying more per step) and waits for the one on the
 * long ring: 2d L rounds, 252 on 64x16.
 */
#include <stdlib.h>
#include <string.h>

#include "alg.h"

/* Steps of the longest ring: the rounds of one phase. */
static int
phase_rounds(const Topo *t)
{
	int l = 0;
	for (int i = 0; i < t->ndim; i++)
		l = t->size[i] - 1 > l ? t->size[i] - 1 : l;
	return l;
}

/* The barriers between s's phases of l rounds each; s itself, or NULL. */
static Sched *
phase_barriers(Arena *a, Sched *s, int l)
{
	if (!s || l == 0)
		return s;
	s->nbarrier = s->nround / l - 1;
	s->barrier = arena_array(a, (size_t)s->nbarrier + 1, sizeof *s->barrier);
	for (int k = 0; k < s->nbarrier; k++)
		s->barrier[k] = (k + 1) * l;
	return s;
}

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
		error_at(c->diag, c->loc, "bucket runs on every rank of a torus (its rings are the torus's "
		         "rings); '%s' is %s", c->name, c->whole ? "not on a torus" : "a sub-communicator");
		return NULL;
	}
	int d = t->ndim;
	Gen g;
	if (gen_begin(&g, c, c->nrank, 2 * d) != 0)
		return NULL;
	bool rs = c->kind != CK_ALLGATHER, ag = c->kind != CK_REDUCE_SCATTER;
	int l = phase_rounds(t);
	for (int j = 0; j < d; j++)
		for (int e = +1; e >= -1; e -= 2) {
			int sub = 2 * j + (e < 0), dims[MAX_DIMS], phase = 0;
			g.b.instance = sub;
			for (int k = 0; k < d; k++)
				dims[k] = (j + k) % d;
			for (int k = 0; rs && k < d; k++, phase++)
				for (int s = 0; s < t->size[dims[k]] - 1; s++)
					phase_step(&g, dims, k, e, s + 1, sub, phase * l + s, X_REDUCE);
			for (int k = d - 1; ag && k >= 0; k--, phase++)
				for (int s = 0; s < t->size[dims[k]] - 1; s++)
					phase_step(&g, dims, k, e, s, sub, phase * l + s, X_COPY);
		}
	return phase_barriers(c->arena, gen_end(c->diag, &g), l);
}

/* ---- Bucket in symmetric form (for collc sim) ---- */

bool
bucket_symmetric_applies(const AlgCtx *c)
{
	const Topo *t = c->topo;
	int m = 2 * t->ndim;
	return (t->kind == TK_TORUS || t->kind == TK_RING) && c->whole &&
	       (c->kind == CK_ALLREDUCE || c->kind == CK_REDUCE_SCATTER ||
	        c->kind == CK_ALLGATHER) &&
	       !(c->chunks && c->chunks % (c->nrank * m)) && translations_apply(t);
}

/* The transfers of block 0 (base tree b) in one step of phase_step: from
 * every x with x[dims[i]] = 0 for i < k and x[D] = e * shift, free on the
 * rest, over its link along (D, e); the whole torus is in rank order. */
static void
base_step(Translates *tr, int b, const int *dims, int k, int e, int shift, int round,
          XferOp op)
{
	const Topo *t = tr->c->topo;
	int d = t->ndim, D = dims[k], x[MAX_DIMS] = {0}, free_dims[MAX_DIMS], nfree = 0;
	x[D] = imod(e * shift, t->size[D]);
	for (int i = k + 1; i < d; i++)
		free_dims[nfree++] = dims[i];
	for (;;) {
		int v = topo_node(t, x), to[MAX_DIMS];
		memcpy(to, x, sizeof to);
		to[D] = imod(x[D] + e, t->size[D]);
		int w = topo_node(t, to);
		for (int l = t->out[v]; l < t->out[v + 1]; l++)
			if (t->link[l].dim == D && t->link[l].dir == e)
				translates_xfer(tr, b, round, v, w, op, &l, 1);
		int i = 0;
		while (i < nfree && ++x[free_dims[i]] == t->size[free_dims[i]])
			x[free_dims[i++]] = 0;
		if (i == nfree)
			break;
	}
}

/*
 * Bucket as tree symmetrization: it is the same under every translation
 * (phase_step sends from x the blocks b with b - x fixed), so chunk (b, g)
 * is piece b of the block of node g, and base tree b holds every transfer
 * of node 0's piece: 2(p - 1) for an allreduce, p^2 messages' worth in
 * 4d(p - 1) base transfers per piece (torus(128, 128): 131,056). The
 * messages are alg_bucket's; collc sim streams them. NULL after reporting.
 */
Sched *
alg_bucket_symmetric(const AlgCtx *c)
{
	const Topo *t = c->topo;
	int d = t->ndim, m = 2 * d, mult = c->chunks ? c->chunks / (c->nrank * m) : 1;
	bool rs = c->kind != CK_ALLGATHER, ag = c->kind != CK_REDUCE_SCATTER;
	Translates tr;
	if (translates_begin(&tr, c, m * mult) != 0)
		return NULL;
	int l = phase_rounds(t);
	for (int j = 0; j < d; j++)
		for (int e = +1; e >= -1; e -= 2)
			for (int piece = 0; piece < mult; piece++) {
				int b = (2 * j + (e < 0)) * mult + piece, dims[MAX_DIMS], phase = 0;
				tr.instance = 2 * j + (e < 0); /* alg_bucket's Msg.instance */
				for (int k = 0; k < d; k++)
					dims[k] = (j + k) % d;
				for (int k = 0; rs && k < d; k++, phase++)
					for (int s = 0; s < t->size[dims[k]] - 1; s++)
						base_step(&tr, b, dims, k, e, s + 1, phase * l + s, X_REDUCE);
				for (int k = d - 1; ag && k >= 0; k--, phase++)
					for (int s = 0; s < t->size[dims[k]] - 1; s++)
						base_step(&tr, b, dims, k, e, s, phase * l + s, X_COPY);
			}
	return phase_barriers(c->arena, translates_end(c->diag, &tr), l);
}
