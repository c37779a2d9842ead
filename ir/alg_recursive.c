/*
 * alg_recursive.c: recursive doubling, recursive halving and
 * halving-doubling (algorithms.md 3), with MPICH's fold for rank counts
 * that are not powers of two: with q = 2^floor(log2 p) and rem = p - q,
 * each even rank below 2 rem first hands its data to the next rank and
 * sits out; the q survivors (virtual rank v is rank 2v + 1 for v < rem,
 * v + rem after) run the power-of-two algorithm, each carrying its own
 * block and its sleeping neighbour's; a last round hands the result back.
 *
 *   halving_doubling    allreduce: reduce-scatter with distance doubling and
 *                       vector halving, then allgather mirrored (MPICH's
 *                       order, largest messages to the nearest partners)
 *   recursive_halving   reduce-scatter with distance halving: block v at v
 *   recursive_doubling  allgather; allreduce exchanging the whole vector
 */
#include <stdlib.h>
#include <string.h>

#include "alg.h"

typedef struct Fold {
	int p, q, rem, L;
} Fold;

static int
real_rank(const Fold *f, int v)
{
	return v < f->rem ? 2 * v + 1 : v + f->rem;
}

/* The real blocks of virtual block v. */
static void
virtual_block(Gen *g, const Fold *f, int v)
{
	if (v < f->rem) {
		gen_block(g, 2 * v, -1);
		gen_block(g, 2 * v + 1, -1);
	} else {
		gen_block(g, v + f->rem, -1);
	}
}

static void
virtual_range(Gen *g, const Fold *f, int lo, int hi)
{
	for (int v = lo; v < hi; v++)
		virtual_block(g, f, v);
}

static void
all_blocks(Gen *g)
{
	for (int b = 0; b < g->p; b++)
		gen_block(g, b, -1);
}

Sched *
alg_recursive(const AlgCtx *c)
{
	Fold f = {.p = c->nrank};
	f.L = ilog2(f.p);
	f.q = 1 << f.L;
	f.rem = f.p - f.q;
	Gen g;
	if (gen_begin(&g, c, c->nrank, 1) != 0)
		return NULL;
	const char *alg = c->algorithm;
	CollKind kind = c->kind;
	int r = 0;
	/* fold in: the sleeping ranks hand over what they hold */
	if (f.rem) {
		for (int v = 0; v < f.rem; v++) {
			if (kind == CK_ALLGATHER)
				gen_block(&g, 2 * v, -1);
			else
				all_blocks(&g);
			gen_send(&g, r, 2 * v, 2 * v + 1, kind == CK_ALLGATHER ? X_COPY : X_REDUCE);
		}
		r++;
	}
	int *lo = xmalloc((size_t)f.q * sizeof *lo), *hi = xmalloc((size_t)f.q * sizeof *hi);
	for (int v = 0; v < f.q; v++) {
		lo[v] = 0;
		hi[v] = f.q;
	}
	if (strcmp(alg, "recursive_halving") == 0) {
		/* distance halving: keep the half that holds my own block */
		for (int k = 0; k < f.L; k++, r++)
			for (int v = 0; v < f.q; v++) {
				int w = v ^ (1 << (f.L - 1 - k)), mid = (lo[v] + hi[v]) / 2;
				if (v < mid)
					virtual_range(&g, &f, mid, hi[v]), hi[v] = mid;
				else
					virtual_range(&g, &f, lo[v], mid), lo[v] = mid;
				gen_send(&g, r, real_rank(&f, v), real_rank(&f, w), X_REDUCE);
			}
	} else if (strcmp(alg, "halving_doubling") == 0) {
		/* distance doubling, vector halving; then the mirror image */
		for (int k = 0; k < f.L; k++, r++)
			for (int v = 0; v < f.q; v++) {
				int w = v ^ (1 << k), mid = (lo[v] + hi[v]) / 2;
				if (v & (1 << k))
					virtual_range(&g, &f, lo[v], mid), lo[v] = mid;
				else
					virtual_range(&g, &f, mid, hi[v]), hi[v] = mid;
				gen_send(&g, r, real_rank(&f, v), real_rank(&f, w), X_REDUCE);
			}
		for (int k = f.L - 1; k >= 0; k--, r++) {
			for (int v = 0; v < f.q; v++) {
				virtual_range(&g, &f, lo[v], hi[v]);
				gen_send(&g, r, real_rank(&f, v), real_rank(&f, v ^ (1 << k)), X_COPY);
			}
			for (int v = 0; v < f.q; v++) { /* both halves now */
				int size = hi[v] - lo[v];
				lo[v] = lo[v] / (2 * size) * (2 * size);
				hi[v] = lo[v] + 2 * size;
			}
		}
	} else if (kind == CK_ALLGATHER) {
		/* recursive doubling: send every block held so far */
		for (int k = 0; k < f.L; k++, r++)
			for (int v = 0; v < f.q; v++) {
				int base = v >> k << k;
				virtual_range(&g, &f, base, base + (1 << k));
				gen_send(&g, r, real_rank(&f, v), real_rank(&f, v ^ (1 << k)), X_COPY);
			}
	} else {
		/* recursive doubling allreduce: the whole vector every step */
		for (int k = 0; k < f.L; k++, r++)
			for (int v = 0; v < f.q; v++) {
				all_blocks(&g);
				gen_send(&g, r, real_rank(&f, v), real_rank(&f, v ^ (1 << k)), X_REDUCE);
			}
	}
	/* fold out: the sleeping ranks get their result */
	if (f.rem) {
		for (int v = 0; v < f.rem; v++) {
			if (kind == CK_REDUCE_SCATTER)
				gen_block(&g, 2 * v, -1);
			else
				all_blocks(&g);
			gen_send(&g, r, 2 * v + 1, 2 * v, X_COPY);
		}
		r++;
	}
	free(lo);
	free(hi);
	return gen_end(&g);
}
