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
all_blocks(Gen *g, int nblock)
{
	for (int b = 0; b < nblock; b++)
		gen_block(g, b, -1);
}

Sched *
alg_recursive(const AlgCtx *c)
{
	Fold f = {.p = c->nrank};
	f.L = ilog2(f.p);
	f.q = 1 << f.L;
	f.rem = f.p - f.q;
	const char *alg = c->algorithm;
	CollKind kind = c->kind;
	/* recursive doubling's allreduce sends the whole vector in every message:
	 * for collc sim (compact) without `chunks` the vector is one chunk, so a
	 * fold (2^L ranks take the rank form) has p (L + 2) chunk transfers, not
	 * p times that; the messages are the same */
	bool whole = kind == CK_ALLREDUCE && strcmp(alg, "recursive_doubling") == 0;
	int nblock = whole && c->compact && !c->chunks ? 1 : c->nrank;
	Gen g;
	if (gen_begin(&g, c, nblock, 1) != 0)
		return NULL;
	int r = 0;
	/* fold in: the sleeping ranks hand over what they hold */
	if (f.rem) {
		for (int v = 0; v < f.rem; v++) {
			if (kind == CK_ALLGATHER)
				gen_block(&g, 2 * v, -1);
			else
				all_blocks(&g, nblock);
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
				all_blocks(&g, nblock);
				gen_send(&g, r, real_rank(&f, v), real_rank(&f, v ^ (1 << k)), X_REDUCE);
			}
	}
	/* fold out: the sleeping ranks get their result */
	if (f.rem) {
		for (int v = 0; v < f.rem; v++) {
			if (kind == CK_REDUCE_SCATTER)
				gen_block(&g, 2 * v, -1);
			else
				all_blocks(&g, nblock);
			gen_send(&g, r, 2 * v + 1, 2 * v, X_COPY);
		}
		r++;
	}
	free(lo);
	free(hi);
	return gen_end(c->diag, &g);
}

/* ---- the rank form (for collc sim) ---- */

/* The algorithms of this file with a rank form on 2^L ranks, and the kind
 * each has it for. */
static const struct {
	const char *alg;
	CollKind kind;
	bool whole;       /* every rank reduces the whole vector into its partner at
	                     every step, distance doubling (recursive doubling's
	                     allreduce): one phase, no other field applies */
	bool reduce_up;   /* reduce phase, distance doubling (else halving) */
	bool reduce;      /* has a reduce phase */
	bool copy_down;   /* copy phase, distance halving (else doubling) */
	bool copy;        /* has a copy phase */
} xor_forms[] = {
	{"halving_doubling", CK_ALLREDUCE, false, true, true, true, true},
	{"recursive_halving", CK_REDUCE_SCATTER, false, false, true, false, false},
	{"recursive_doubling", CK_ALLGATHER, false, false, false, false, true},
	{"recursive_doubling", CK_ALLREDUCE, true, false, false, false, false},
};

static int
xor_form(const AlgCtx *c)
{
	for (int i = 0; i < (int)countof(xor_forms); i++)
		if (strcmp(c->algorithm, xor_forms[i].alg) == 0 && c->kind == xor_forms[i].kind)
			return i;
	return -1;
}

/* Base transfers per base tree: p - 1 per phase, or p per step when every
 * rank sends the whole vector. */
static double
xor_base_count(int f, int p)
{
	if (xor_forms[f].whole)
		return (double)p * ilog2(p);
	return (double)(xor_forms[f].reduce + xor_forms[f].copy) * (p - 1);
}

/* 2^L ranks (no fold), routes without a search per destination (each copy
 * is routed as its message is, when the simulator asks for its round),
 * `chunks` a multiple of the ranks, and base transfers that fit
 * MAX_TRANSFERS (the whole-vector form has p log2 p per tree; past that the
 * explicit form's own estimate refuses it). */
bool
xor_rank_form_applies(const AlgCtx *c)
{
	int p = c->nrank, f = xor_form(c);
	if (f < 0 || p < 2 || (p & (p - 1)) != 0 || (c->chunks && c->chunks % p) ||
	    !routes_closed_form(c->topo))
		return false;
	int ntree = c->chunks ? c->chunks / p : 1;
	return xor_base_count(f, p) * ntree <= MAX_TRANSFERS;
}

/* A base transfer between ranks: not routed here (route -1), since each of
 * its copies is routed as the simulator asks for its round; holding base
 * routes would cost as much as a round's (about p^2/3 links for recursive
 * doubling on a ring), and in the route cache again. */
static void
xor_base(const AlgCtx *c, Sched *s, int *cap, int tree, int round, int src, int dst, XferOp op)
{
	if (s->nbase == *cap)
		s->base = arena_grow(c->arena, s->base, cap, sizeof *s->base);
	s->base[s->nbase++] = (BaseXfer){.round = round, .tree = tree, .src = c->rank_node[src],
	                                 .dst = c->rank_node[dst], .op = op, .route = -1};
}

/* Block 0's piece `tree` in one phase, its L steps from round r0, the
 * distance of step k 2^k (up) or 2^(L-1-k). Reducing, the ranks that hold a
 * partial sum of it are those whose bits of the distances passed are 0, and
 * those of them with the step's bit set reduce into their partner; copying,
 * the ranks that hold it are those whose bits of the distances to come (the
 * step's included) are 0, and each copies it to its partner. Ranks in
 * increasing order, by the submasks of the free bits. */
static void
xor_phase(const AlgCtx *c, Sched *s, int *cap, int tree, int r0, bool up, XferOp op)
{
	int p = c->nrank, L = ilog2(p), passed = 0;
	for (int k = 0; k < L; k++) {
		int d = up ? 1 << k : 1 << (L - 1 - k);
		int todo = (p - 1) & ~passed; /* the step's bit and those to come */
		int set = op == X_REDUCE ? d : 0, free = op == X_REDUCE ? todo & ~d : passed;
		for (int m = 0;; m = (m - free) & free) {
			xor_base(c, s, cap, tree, r0 + k, m | set, (m | set) ^ d, op);
			if (m == free)
				break;
		}
		passed |= d;
	}
}

/* Recursive doubling's allreduce: in step k every rank v reduces the whole
 * vector, so block 0's piece `tree` too, into v ^ 2^k. */
static void
xor_whole(const AlgCtx *c, Sched *s, int *cap, int tree)
{
	int p = c->nrank, L = ilog2(p);
	for (int k = 0; k < L; k++)
		for (int v = 0; v < p; v++)
			xor_base(c, s, cap, tree, k, v, v ^ (1 << k), X_REDUCE);
}

/* The whole-vector form's transfers are no tree (every rank sends at every
 * step); its base tree is the binomial one by which rank 0's copy first
 * receives each contribution: rank v's arrives through v & (v - 1), the
 * partner of the step of v's lowest set bit. */
static Tree *
whole_tree(const AlgCtx *c)
{
	int *parent = arena_array(c->arena, (size_t)c->topo->nnode, sizeof *parent);
	for (int v = 0; v < c->topo->nnode; v++)
		parent[v] = -1;
	for (int v = 1; v < c->nrank; v++)
		parent[c->rank_node[v]] = c->rank_node[v & (v - 1)];
	return tree_from_parents(c->diag, c->arena, c->topo, c->routes, &c->rank_node[0], 1, parent,
	                         c->loc);
}

/*
 * Halving-doubling, recursive halving, recursive doubling (allgather and
 * allreduce) are the same under XOR by any rank m applied to the ranks (and
 * to the blocks: halving-doubling's bit-reversed): rank v's partner in a
 * step of distance d is v ^ d, and which blocks it sends is told by v's
 * bits. So chunk (b, m) is piece b of a block of rank m, and base tree b
 * holds every transfer of block 0's piece b (xor_phase): a binomial reduce
 * into rank 0, a binomial broadcast from it, or both, p - 1 transfers each;
 * recursive doubling's allreduce sends the whole vector, so every rank
 * reduces piece b into its partner at every step (xor_whole, p log2 p). The
 * messages are alg_recursive's; the base transfers carry no route (each
 * copy is routed as its message is, when the simulator asks for its
 * round). NULL after reporting.
 */
Sched *
alg_xor_rank_form(const AlgCtx *c)
{
	int p = c->nrank, L = ilog2(p), ntree = c->chunks ? c->chunks / p : 1, f = xor_form(c);
	if (check_symmetric_size(c->diag, c->loc, c->name, ntree, p) != 0)
		return NULL;
	Sched *s = sched_new(c->arena, c->name, c->loc, c->kind, c->algorithm, c->topo, c->rank_node,
	                     p);
	s->xor_routes = c->routes;
	s->ntree = ntree;
	s->nchunk = ntree * p;
	s->nround = xor_forms[f].whole ? L : (xor_forms[f].reduce + xor_forms[f].copy) * L;
	s->tree = arena_array(c->arena, (size_t)ntree, sizeof *s->tree);
	int cap = 0;
	for (int b = 0; b < ntree; b++) {
		if (xor_forms[f].whole)
			xor_whole(c, s, &cap, b);
		if (xor_forms[f].reduce)
			xor_phase(c, s, &cap, b, 0, xor_forms[f].reduce_up, X_REDUCE);
		if (xor_forms[f].copy)
			xor_phase(c, s, &cap, b, xor_forms[f].reduce ? L : 0, !xor_forms[f].copy_down,
			          X_COPY);
	}
	for (int b = 0; b < ntree; b++) {
		s->tree[b] = xor_forms[f].whole ? (b ? s->tree[0] : whole_tree(c))
		                                : transfers_tree(c, s, b, c->rank_node[0]);
		if (!s->tree[b])
			return NULL;
	}
	s->owner = arena_array(c->arena, (size_t)s->nchunk, sizeof *s->owner);
	for (int b = 0; b < ntree; b++)
		for (int m = 0; m < p; m++)
			s->owner[b * p + m] = m;
	return s;
}
