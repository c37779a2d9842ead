/*
 * alg_hierarchical.c: `hierarchical(A0, A1, ...)`, the multi-dimensional
 * collective of ASTRA-sim's system layer, so a user can reproduce an
 * ASTRA-sim run in collc and compare it with other schedules.
 *
 * Needs: every rank of a torus, mesh or HyperX (or a ring: one dimension),
 * in id order, or every host of a spine-leaf network, whose two levels are
 * dimension 0 (the hosts of a leaf, through its switch) and dimension 1
 * (the same host of every leaf, through the spines), or every GPU of a
 * rails cluster (dimension 0 the GPUs of a box through its switch,
 * dimension 1 GPU g of every box through rail g); one algorithm per
 * dimension: ring (one direction, +1),
 * direct (each rank exchanges with every rank of its line in one round,
 * routed), halving_doubling (recursive halving, then doubling; the
 * dimension's size a power of 2) or, for the last dimension of an
 * allreduce, double_binary_tree (each tree reduces and broadcasts half of
 * what the line holds).
 * Builds: the vector is cut into one block per rank. Reduce-scatter along
 * dimension 0, then 1, ..., d-1: in the phase of dimension k, rank x
 * reduces, with the ranks of its line along k, the blocks b that agree
 * with x on dimensions 0..k-1, ending with those whose coordinate k is
 * x's too; after the last, rank x holds block x reduced over all ranks.
 * An allreduce then gathers back along d-1, ..., 0 (its "allreduce along
 * the last dimension" is that dimension's reduce-scatter and allgather).
 * Phases run one after the other, each line of a dimension at once; rounds
 * are the sum of the phases' rounds.
 *
 * Differs from bucket, which runs 2d such instances at once over every
 * (dimension, direction) on a share of the data each: hierarchical uses
 * one direction of one dimension at a time, as ASTRA-sim does.
 */
#include <string.h>

#include "alg.h"

typedef enum DimAlg { DA_RING, DA_DIRECT, DA_HD, DA_DBT } DimAlg;

typedef struct Hier {
	Gen *g;
	const Topo *t;
	int d;
	int order[MAX_DIMS]; /* phase dimension k is coordinate order[k] */
	int sub;             /* the sub-chunk messages carry: -1 all, or a tree's half */
	int round;
} Hier;

/* Adds to the next message the blocks b that agree with x on the phase
 * dimensions before k, have b[D] (D = order[k]) in [lo, lo + len) (mod n)
 * with b[D] & mask == want & mask when mask is not 0, and are free on the
 * phase dimensions after k. */
static void
add_blocks(Hier *h, const int *x, int k, int lo, int len, int mask, int want)
{
	const Topo *t = h->t;
	int b[MAX_DIMS], D = h->order[k];
	memcpy(b, x, sizeof b);
	for (int i = k + 1; i < h->d; i++)
		b[h->order[i]] = 0;
	for (int c = 0; c < len; c++) {
		b[D] = imod(lo + c, t->size[D]);
		if (mask && (b[D] & mask) != (want & mask))
			continue;
		for (;;) {
			gen_block(h->g, topo_node(t, b), h->sub);
			int i = k + 1;
			while (i < h->d && ++b[h->order[i]] == t->size[h->order[i]])
				b[h->order[i++]] = 0;
			if (i == h->d)
				break;
		}
		for (int i = k + 1; i < h->d; i++)
			b[h->order[i]] = 0;
	}
}

static int
peer(const Hier *h, const int *x, int k, int coord)
{
	int y[MAX_DIMS], D = h->order[k];
	memcpy(y, x, sizeof y);
	y[D] = imod(coord, h->t->size[D]);
	return topo_node(h->t, y);
}

/* One phase along dimension k for every rank: reduce-scatter (rs) or
 * allgather. */
static void
phase(Hier *h, int k, DimAlg a, bool rs)
{
	const Topo *t = h->t;
	int D = h->order[k], n = t->size[D], p = h->g->p;
	XferOp op = rs ? X_REDUCE : X_COPY;
	int steps = a == DA_RING ? n - 1 : a == DA_DIRECT ? 1 : ilog2(n);
	for (int s = 0; s < steps; s++) {
		for (int r = 0; r < p; r++) {
			int x[MAX_DIMS];
			topo_coords(t, r, x);
			if (a == DA_RING) {
				/* the ring's step: RS sends x[D]-s-1's partial sums, AG x[D]-s's */
				add_blocks(h, x, k, x[D] - s - (rs ? 1 : 0), 1, 0, 0);
				gen_send(h->g, h->round, r, peer(h, x, k, x[D] + 1), op);
			} else if (a == DA_DIRECT) {
				for (int y = 0; y < n; y++) {
					if (y == x[D])
						continue;
					add_blocks(h, x, k, rs ? y : x[D], 1, 0, 0);
					gen_send(h->g, h->round, r, peer(h, x, k, y), op);
				}
			} else {
				/* halving: distance n/2, n/4, ...; doubling: 1, 2, ... */
				int dist = rs ? n >> (s + 1) : 1 << s;
				int y = x[D] ^ dist;
				if (rs) /* of x's window of 2*dist, the half that is y's */
					add_blocks(h, x, k, x[D] & ~(2 * dist - 1), 2 * dist, dist, y);
				else /* x's window of dist */
					add_blocks(h, x, k, x[D] & ~(dist - 1), dist, 0, 0);
				gen_send(h->g, h->round, r, peer(h, x, k, y), op);
			}
		}
		h->round++;
	}
}

/* The allreduce along the last phase dimension k by a double binary tree
 * in every line: each tree reduces, then broadcasts, its half (sub-chunk)
 * of the blocks the line's ranks hold (as alg_dbt.c, one pipeline chunk). */
static void
dbt_phase(Hier *h, int k)
{
	const Topo *t = h->t;
	int D = h->order[k], n = t->size[D], height = 0;
	int depth[2][64];
	for (int tr = 0; tr < 2; tr++)
		for (int r = 0; r < n; r++) {
			depth[tr][r] = 0;
			for (int u = r; dbt_parent(tr, u, n) >= 0; u = dbt_parent(tr, u, n))
				depth[tr][r]++;
			if (depth[tr][r] > height)
				height = depth[tr][r];
		}
	for (int tr = 0; tr < 2; tr++) {
		h->sub = tr;
		int th = 0; /* this tree's height */
		for (int v = 0; v < n; v++)
			th = depth[tr][v] > th ? depth[tr][v] : th;
		for (int r = 0; r < h->g->p; r++) {
			int x[MAX_DIMS];
			topo_coords(t, r, x);
			int up = dbt_parent(tr, x[D], n), dep = depth[tr][x[D]];
			if (up < 0)
				continue;
			add_blocks(h, x, k, 0, n, 0, 0);
			gen_send(h->g, h->round + th - dep, r, peer(h, x, k, up), X_REDUCE);
			int xu[MAX_DIMS];
			topo_coords(t, peer(h, x, k, up), xu);
			add_blocks(h, xu, k, 0, n, 0, 0);
			gen_send(h->g, h->round + th + dep - 1, peer(h, x, k, up), r, X_COPY);
		}
	}
	h->sub = -1;
	h->round += 2 * height;
}

static int
dim_algs(const AlgCtx *c, int d, const int *order, DimAlg *a)
{
	if (c->ndim_alg != d) {
		error_at(c->diag, c->loc, "hierarchical takes one algorithm per dimension: %s has %d, "
		         "hierarchical(...) names %d", c->topo->name, d, c->ndim_alg);
		return -1;
	}
	for (int k = 0; k < d; k++) {
		const char *w = c->dim_alg[k];
		a[k] = strcmp(w, "ring") == 0               ? DA_RING
		       : strcmp(w, "direct") == 0           ? DA_DIRECT
		       : strcmp(w, "halving_doubling") == 0 ? DA_HD
		                                            : DA_DBT;
		if (a[k] == DA_DBT && (k != d - 1 || c->kind != CK_ALLREDUCE)) {
			error_at(c->diag, c->loc, "hierarchical: double_binary_tree is an allreduce: it runs along "
			         "the last dimension of an allreduce only");
			return -1;
		}
		if (a[k] == DA_DBT && c->topo->size[order[k]] > 64) {
			error_at(c->diag, c->loc, "hierarchical: double_binary_tree along a dimension of at most 64 "
			         "ranks; it has %d", c->topo->size[order[k]]);
			return -1;
		}
		if (a[k] == DA_HD && !is_pow(c->topo->size[order[k]], 2)) {
			error_at(c->diag, c->loc, "hierarchical: halving_doubling along dimension %d needs a power "
			         "of 2 ranks; it has %d", k, c->topo->size[order[k]]);
			return -1;
		}
	}
	return 0;
}

Sched *
alg_hierarchical(const AlgCtx *c)
{
	const Topo *t = c->topo;
	if (!alg_runs_on(ALG_hierarchical, t->kind) || !c->whole) {
		char forms[160];
		topo_forms_phrase(alg_forms[ALG_hierarchical].topos, forms, sizeof forms);
		error_at(c->diag, c->loc, "hierarchical runs on every rank of %s network, dimension by "
		         "dimension; '%s' is %s", forms, c->name,
		         alg_runs_on(ALG_hierarchical, t->kind) ? "a sub-communicator" : "on another topology");
		return NULL;
	}
	int d = t->ndim;
	Hier h = {.t = t, .d = d};
	for (int k = 0; k < d; k++) /* spine-leaf, rails: the leaf's hosts, the box's GPUs first */
		h.order[k] = topo_forms[t->kind].hosts_last ? d - 1 - k : k;
	DimAlg a[MAX_DIMS];
	if (dim_algs(c, d, h.order, a) != 0)
		return NULL;
	/* a double binary tree carries half of each block per tree */
	bool dbt = a[d - 1] == DA_DBT;
	Gen g;
	if (gen_begin(&g, c, c->nrank, dbt ? 2 : 1) != 0)
		return NULL;
	h.g = &g;
	h.sub = -1;
	int last = dbt ? d - 1 : d; /* phases by reduce-scatter and allgather */
	if (c->kind != CK_ALLGATHER)
		for (int k = 0; k < last; k++)
			phase(&h, k, a[k], true);
	if (dbt)
		dbt_phase(&h, d - 1);
	if (c->kind != CK_REDUCE_SCATTER)
		for (int k = last - 1; k >= 0; k--)
			phase(&h, k, a[k], false);
	return gen_end(c->diag, &g);
}
