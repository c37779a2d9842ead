/*
 * alg_cyclic.c: Swing and Trivance (algorithms.md 5 and 6), the two
 * exchanges whose steps cycle through the dimensions of a torus.
 *
 * Both run on a virtual torus: the topology's own when the collective has
 * every rank of a torus, else a ring of the ranks in order. Every port is
 * a concurrent instance on its own share of each block; port j starts with
 * dimension j and then takes the next dimension that has steps left.
 *
 * Swing (sizes 2^m; a ring of any other size folds first, as MPICH does):
 * step k of a dimension pairs coordinate c with c + rho(k) if c is even and
 * c - rho(k) if odd, rho(k) = 1, -1, 3, -5, 11, ...; 2d ports, port j + d
 * the mirror of port j (rho negated). Trivance (sizes 3^t): step k of a
 * dimension exchanges with both c + 3^k and c - 3^k; d ports.
 *
 * Block rule of both: Reach(x, s) is the set of nodes x reaches with steps
 * s, s+1, ...; in reduce-scatter step s a node sends its peer the blocks of
 * Reach(peer, s + 1) and keeps Reach(x, s + 1); allgather runs the steps
 * backwards sending Reach(x, s + 1). The latency variants send the whole
 * vector every step (allreduce only).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"

typedef struct VTorus {
	int d, n[MAX_DIMS], q; /* dimensions and node count */
	int rem;               /* a folded ring: ranks 2v, 2v+1 are one node for v < rem */
	int L;                 /* steps per port */
	int nport;
	int *dim, *step;       /* [port * L + s]: the dimension and its step */
	int words;             /* a node set as a bitmap */
	uint64_t *reach;       /* [(port * (L+1) + s) * q + x]: Reach(x, s), words each */
} VTorus;

static uint64_t *
reach(const VTorus *v, int port, int s, int x)
{
	return v->reach + (((size_t)port * (size_t)(v->L + 1) + (size_t)s) * (size_t)v->q + (size_t)x) *
	                      (size_t)v->words;
}

static int
rho(int k)
{
	int r = 0, pw = 1;
	for (int i = 0; i <= k; i++, pw *= -2)
		r += pw;
	return r;
}

static int
vnode_move(const VTorus *v, int x, int dim, int delta)
{
	int c[MAX_DIMS];
	for (int i = v->d - 1, y = x; i >= 0; i--) {
		c[i] = y % v->n[i];
		y /= v->n[i];
	}
	c[dim] = imod(c[dim] + delta, v->n[dim]);
	int id = 0;
	for (int i = 0; i < v->d; i++)
		id = id * v->n[i] + c[i];
	return id;
}

static int
vcoord(const VTorus *v, int x, int dim)
{
	for (int i = v->d - 1; i > dim; i--)
		x /= v->n[i];
	return x % v->n[dim];
}

/* Swing's peer; trivance asks for +1 or -1 as `which`. */
static int
peer(const VTorus *v, bool swing, int port, int s, int x, int which)
{
	int dim = v->dim[port * v->L + s], k = v->step[port * v->L + s];
	if (!swing) {
		int d = 1;
		for (int i = 0; i < k; i++)
			d *= 3;
		return vnode_move(v, x, dim, which * d);
	}
	int r = rho(k) * (port >= v->d ? -1 : 1);
	return vnode_move(v, x, dim, vcoord(v, x, dim) % 2 == 0 ? r : -r);
}

static int
real_rank(const VTorus *v, int x)
{
	return x < v->rem ? 2 * x + 1 : x + v->rem;
}

static void
virtual_block(Gen *g, const VTorus *v, int x, int sub)
{
	if (x < v->rem) {
		gen_block(g, 2 * x, sub);
		gen_block(g, 2 * x + 1, sub);
	} else {
		gen_block(g, x + v->rem, sub);
	}
}

static void
set_blocks(Gen *g, const VTorus *v, const uint64_t *set, int sub)
{
	for (int x = 0; x < v->q; x++)
		if (set[x / 64] >> (x % 64) & 1)
			virtual_block(g, v, x, sub);
}

static void
all_blocks(Gen *g, int sub)
{
	for (int b = 0; b < g->p; b++)
		gen_block(g, b, sub);
}

/* Sets up the virtual torus, the port schedules and the reach sets; -1
 * after reporting when the sizes do not fit the algorithm. */
static int
vtorus_init(VTorus *v, const AlgCtx *c, bool swing)
{
	const Topo *t = c->topo;
	int base = swing ? 2 : 3;
	memset(v, 0, sizeof *v);
	/* a whole torus of two or more dimensions runs on its coordinates; a ring
	 * of ranks (which a 1D torus is) may fold. A whole HyperX runs on its
	 * coordinates too, as Swing's authors run it: every peer is then one hop
	 * away, and the 2d ports use 2d of its links */
	if (c->whole && (t->kind == TK_TORUS || t->kind == TK_RING || t->kind == TK_HYPERX) &&
	    t->ndim >= 2) {
		v->d = t->ndim;
		for (int i = 0; i < v->d; i++) {
			v->n[i] = t->size[i];
			if (!is_pow(v->n[i], base) || v->n[i] < (swing ? 2 : 3)) {
				/* the whole torus in id order runs on coordinates; any other
				 * order of its ranks is a ring, which swing folds */
				if (swing)
					error_at(c->diag, c->loc, "swing on a %s needs every side a power of 2; %s has "
					         "a side of %d (list the ranks in another order, such as 'ranks "
					         "%d..0', to run it on a ring of them, or give it a sub-%s "
					         "whose sides are powers of 2)", topo_kind_name(t->kind), t->name,
					         v->n[i], t->nrank - 1, topo_kind_name(t->kind));
				else
					error_at(c->diag, c->loc, "trivance on a %s needs every side a power of 3; %s "
					         "has a side of %d (give it a sub-%s whose sides are powers of "
					         "3, or a ring of 3^t ranks)", topo_kind_name(t->kind), t->name,
					         v->n[i], topo_kind_name(t->kind));
				return -1;
			}
		}
	} else {
		v->d = 1;
		v->n[0] = c->nrank;
		if (swing && !is_pow(c->nrank, 2)) {
			v->n[0] = 1 << ilog2(c->nrank); /* fold */
			v->rem = c->nrank - v->n[0];
		} else if (!swing && (!is_pow(c->nrank, 3) || c->nrank < 3)) {
			error_at(c->diag, c->loc, "trivance needs 3^t ranks on a ring (3, 9, 27, ...); '%s' has %d",
			         c->name, c->nrank);
			return -1;
		}
	}
	v->q = 1;
	int left[MAX_DIMS];
	for (int i = 0; i < v->d; i++) {
		v->q *= v->n[i];
		left[i] = 0;
		for (int n = v->n[i]; n > 1; n /= base)
			left[i]++;
		v->L += left[i];
	}
	v->nport = swing ? 2 * v->d : v->d;
	v->dim = xmalloc((size_t)v->nport * (size_t)(v->L + 1) * sizeof *v->dim);
	v->step = xmalloc((size_t)v->nport * (size_t)(v->L + 1) * sizeof *v->step);
	for (int port = 0; port < v->nport; port++) {
		int used[MAX_DIMS] = {0}, dim = port % v->d;
		for (int s = 0; s < v->L; s++) {
			while (used[dim] == left[dim])
				dim = (dim + 1) % v->d;
			v->dim[port * v->L + s] = dim;
			v->step[port * v->L + s] = used[dim]++;
			dim = (dim + 1) % v->d;
		}
	}
	v->words = (v->q + 63) / 64;
	size_t n = (size_t)v->nport * (size_t)(v->L + 1) * (size_t)v->q * (size_t)v->words;
	v->reach = xcalloc(n, sizeof *v->reach);
	for (int port = 0; port < v->nport; port++) {
		for (int x = 0; x < v->q; x++)
			reach(v, port, v->L, x)[x / 64] |= 1ull << (x % 64);
		for (int s = v->L - 1; s >= 0; s--)
			for (int x = 0; x < v->q; x++) {
				uint64_t *r = reach(v, port, s, x);
				const uint64_t *a = reach(v, port, s + 1, x);
				int ys[2] = {peer(v, swing, port, s, x, +1), swing ? -1 : peer(v, swing, port, s, x, -1)};
				for (int w = 0; w < v->words; w++)
					r[w] = a[w];
				for (int k = 0; k < 2; k++)
					if (ys[k] >= 0)
						for (int w = 0; w < v->words; w++)
							r[w] |= reach(v, port, s + 1, ys[k])[w];
			}
	}
	return 0;
}

static void
vtorus_free(VTorus *v)
{
	free(v->dim);
	free(v->step);
	free(v->reach);
}

static Sched *
cyclic(const AlgCtx *c, bool swing)
{
	if (c->latency && c->kind != CK_ALLREDUCE) {
		error_at(c->diag, c->loc, "%s(latency) implements allreduce only (it sends the whole vector "
		         "every step); use %s(bandwidth) for %s", c->algorithm, c->algorithm,
		         coll_kind_name[c->kind]);
		return NULL;
	}
	VTorus v;
	if (vtorus_init(&v, c, swing) != 0)
		return NULL;
	Gen g;
	if (gen_begin(&g, c, c->nrank, v.nport) != 0) {
		vtorus_free(&v);
		return NULL;
	}
	CollKind kind = c->kind;
	int r = 0, npeer = swing ? 1 : 2;
	if (v.rem) { /* fold in */
		for (int x = 0; x < v.rem; x++) {
			if (kind == CK_ALLGATHER)
				gen_block(&g, 2 * x, -1);
			else
				all_blocks(&g, -1);
			gen_send(&g, r, 2 * x, 2 * x + 1, kind == CK_ALLGATHER ? X_COPY : X_REDUCE);
		}
		r++;
	}
	int r0 = r;
	for (int port = 0; port < v.nport; port++) {
		r = r0;
		if (c->latency) {
			for (int s = 0; s < v.L; s++, r++)
				for (int x = 0; x < v.q; x++)
					for (int k = 0; k < npeer; k++) {
						all_blocks(&g, port);
						gen_send(&g, r, real_rank(&v, x),
						         real_rank(&v, peer(&v, swing, port, s, x, k ? -1 : +1)), X_REDUCE);
					}
			continue;
		}
		if (kind != CK_ALLGATHER)
			for (int s = 0; s < v.L; s++, r++)
				for (int x = 0; x < v.q; x++)
					for (int k = 0; k < npeer; k++) {
						int y = peer(&v, swing, port, s, x, k ? -1 : +1);
						set_blocks(&g, &v, reach(&v, port, s + 1, y), port);
						gen_send(&g, r, real_rank(&v, x), real_rank(&v, y), X_REDUCE);
					}
		if (kind != CK_REDUCE_SCATTER)
			for (int s = v.L - 1; s >= 0; s--, r++)
				for (int x = 0; x < v.q; x++)
					for (int k = 0; k < npeer; k++) {
						int y = peer(&v, swing, port, s, x, k ? -1 : +1);
						set_blocks(&g, &v, reach(&v, port, s + 1, x), port);
						gen_send(&g, r, real_rank(&v, x), real_rank(&v, y), X_COPY);
					}
	}
	if (v.rem) { /* fold out */
		for (int x = 0; x < v.rem; x++) {
			if (kind == CK_REDUCE_SCATTER)
				gen_block(&g, 2 * x, -1);
			else
				all_blocks(&g, -1);
			gen_send(&g, r, 2 * x + 1, 2 * x, X_COPY);
		}
	}
	vtorus_free(&v);
	return gen_end(c->diag, &g);
}

Sched *
alg_swing(const AlgCtx *c)
{
	return cyclic(c, true);
}

Sched *
alg_trivance(const AlgCtx *c)
{
	return cyclic(c, false);
}
