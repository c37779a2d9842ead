/*
 * runtime.c: the interpreter every program of the MPI target carries.
 * collc embeds this file at build time (the Makefile makes a C array of
 * it) and writes the lines between the two "----" markers into each
 * generated program, after the schedule's tables; this file is the source,
 * never edited in the output. What it needs from the program before it:
 * NRANK, NCHUNK, CHUNKS_PER_BLOCK, COLLC_TAG, chunk_block[], chunk_piece[],
 * and COLLC_SYMMETRIC with either the per-rank op tables (op_start,
 * op_table, op_chunks) or the symmetric form (NBASE, ORDER, NNODE, NDIM,
 * AFFINE, base_table, dims, rank_node, elements); on an optical ring that
 * rewires its circuits, COLLC_REWIRE with NREWIRE and collc_rewire[] (the
 * rounds before which every rank waits at a barrier). What it establishes:
 * collc_run(), which runs this rank's part of the schedule on a buffer.
 *
 * Compiled alone (make mpi-runtime-check, with every MPI found, in both
 * forms: -DCOLLC_SYMMETRIC=0 or 1), the lines above the first marker stand
 * in for the tables: a ring of two ranks allreducing two chunks.
 */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { NRANK = 2, NCHUNK = 2, NBLOCK = 1, CHUNKS_PER_BLOCK = 2, ROOT = 0, COLLC_TAG = 0x5c0 };
#if COLLC_SYMMETRIC
enum { NBASE = 2, ORDER = 2, NNODE = 2, NDIM = 1, AFFINE = 1 };
/* round, tree, source rank, destination rank, 1 reduce or 2 copy */
static const int base_table[10] = {0, 0, 1, 0, 1, 1, 0, 0, 1, 2};
static const int dims[1] = {2};
static const int rank_node[2] = {0, 1};
static const int elements[4] = {1, 0, 1, 1};
#else
static const int op_start[3] = {0, 4, 8};
/* round, peer, kind (0 send, 1 receive and reduce, 2 receive and copy), first, count */
static const int op_table[40] = {0, 1, 0, 0, 1, 0, 1, 1, 1, 1, 1, 1, 0, 2, 1, 1, 1, 2, 3, 1,
                                 0, 0, 0, 4, 1, 0, 0, 1, 5, 1, 1, 0, 0, 6, 1, 1, 0, 2, 7, 1};
static const int op_chunks[8] = {0, 1, 1, 0, 1, 0, 0, 1};
#endif
static const int chunk_block[2] = {0, 0};
static const int chunk_piece[2] = {0, 1};
/* ---- the interpreter ---- */

/* run: the op's chunks are one run of the buffer, in order; alone: no other
 * op of its round touches them (so a receive may write them at any time) */
typedef struct { int round, peer, kind, xop, first, n, run, alone; } collc_op;
typedef struct { int nop; collc_op *op; int *chunk; } collc_plan;

/* Chunk c's place in the buffer, counted in chunks. */
static int collc_pos(int c) { return chunk_block[c] * CHUNKS_PER_BLOCK + chunk_piece[c]; }
#if COLLC_SYMMETRIC
static int collc_node_of(int rank) { return rank_node[rank]; }
static int collc_rank_of(int node)
{
	for (int r = 0; r < NRANK; r++)
		if (rank_node[r] == node)
			return r;
	return -1;
}
/* g(node) for element e */
static int collc_apply(int e, int node)
{
	if (!AFFINE)
		return elements[(size_t)e * NNODE + (size_t)node];
	int x[8], y[8], w = NDIM * NDIM + NDIM;
	for (int i = NDIM - 1, v = node; i >= 0; i--) {
		x[i] = v % dims[i];
		v /= dims[i];
	}
	int id = 0;
	for (int i = 0; i < NDIM; i++) {
		long s = elements[(size_t)e * w + NDIM * NDIM + i];
		for (int j = 0; j < NDIM; j++)
			s += (long)elements[(size_t)e * w + i * NDIM + j] * x[j];
		y[i] = (int)(((s % dims[i]) + dims[i]) % dims[i]);
		id = id * dims[i] + y[i];
	}
	return id;
}
#endif

#if COLLC_SYMMETRIC
/* by round, receives before sends, peer, then the transfer's op, so that
 * both ends cut the same messages */
static int collc_op_order(const void *a, const void *b)
{
	const collc_op *x = a, *y = b;
	if (x->round != y->round)
		return x->round < y->round ? -1 : 1;
	if ((x->kind == 0) != (y->kind == 0))
		return (x->kind == 0) - (y->kind == 0);
	if (x->peer != y->peer)
		return x->peer < y->peer ? -1 : 1;
	if (x->xop != y->xop)
		return x->xop < y->xop ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* a message's chunks in buffer order, the same at both ends */
static int collc_by_pos(const void *a, const void *b)
{
	int x = collc_pos(*(const int *)a), y = collc_pos(*(const int *)b);
	return (x > y) - (x < y);
}
#endif

/* Sets each op's run and alone. */
static int collc_mark(collc_plan *pl)
{
	int *count = calloc((size_t)NCHUNK + 1, sizeof *count);
	if (!count)
		return -1;
	for (int i = 0, j; i < pl->nop; i = j) {
		for (j = i; j < pl->nop && pl->op[j].round == pl->op[i].round; j++)
			for (int c = 0; c < pl->op[j].n; c++)
				count[pl->chunk[pl->op[j].first + c]]++;
		for (int k = i; k < j; k++) {
			collc_op *o = &pl->op[k];
			const int *ch = pl->chunk + o->first;
			o->run = o->alone = 1;
			for (int c = 0; c < o->n; c++) {
				o->alone &= count[ch[c]] == 1;
				o->run &= c == 0 || collc_pos(ch[c]) == collc_pos(ch[c - 1]) + 1;
			}
		}
		for (int k = i; k < j; k++)
			for (int c = 0; c < pl->op[k].n; c++)
				count[pl->chunk[pl->op[k].first + c]] = 0;
	}
	free(count);
	return 0;
}

/* This rank's operations, derived once. */
static int collc_make_plan(int me, collc_plan *pl)
{
#if COLLC_SYMMETRIC
	int cap = 64, n = 0;
	collc_op *op = malloc((size_t)cap * sizeof *op);
	int *ch = malloc((size_t)cap * sizeof *ch);
	if (!op || !ch)
		return -1;
	int mynode = collc_node_of(me);
	for (int i = 0; i < NBASE; i++) {
		const int *b = base_table + 5 * i;
		for (int e = 0; e < ORDER; e++) {
			int src = collc_apply(e, collc_node_of(b[2])), dst = collc_apply(e, collc_node_of(b[3]));
			for (int side = 0; side < 2; side++) {
				if ((side ? dst : src) != mynode)
					continue;
				if (n == cap) {
					cap *= 2;
					op = realloc(op, (size_t)cap * sizeof *op);
					ch = realloc(ch, (size_t)cap * sizeof *ch);
					if (!op || !ch)
						return -1;
				}
				op[n] = (collc_op){b[0], collc_rank_of(side ? src : dst), side ? b[4] : 0, b[4], n, 1, 0, 0};
				ch[n] = b[1] * ORDER + e;
				n++;
			}
		}
	}
	/* pack: the chunks of one round, direction and peer form one message */
	qsort(op, (size_t)n, sizeof *op, collc_op_order);
	int *sorted = malloc((size_t)(n + 1) * sizeof *sorted);
	if (!sorted)
		return -1;
	int m = 0;
	for (int i = 0; i < n; i++) {
		sorted[i] = ch[op[i].first];
		if (m > 0 && op[m - 1].round == op[i].round && op[m - 1].peer == op[i].peer &&
		    op[m - 1].kind == op[i].kind && op[m - 1].xop == op[i].xop) {
			op[m - 1].n++;
		} else {
			op[m] = op[i];
			op[m].first = i;
			m++;
		}
	}
	for (int i = 0; i < m; i++)
		qsort(sorted + op[i].first, (size_t)op[i].n, sizeof *sorted, collc_by_pos);
	free(ch);
	pl->nop = m;
	pl->op = op;
	pl->chunk = sorted;
#else
	int n = op_start[me + 1] - op_start[me];
	pl->op = malloc((size_t)(n + 1) * sizeof *pl->op);
	if (!pl->op)
		return -1;
	for (int i = 0; i < n; i++) {
		const int *o = op_table + 5 * (op_start[me] + i);
		pl->op[i] = (collc_op){o[0], o[1], o[2], o[2], o[3], o[4], 0, 0};
	}
	pl->nop = n;
	pl->chunk = (int *)op_chunks;
#endif
	return collc_mark(pl);
}

enum { T_FLOAT, T_DOUBLE, T_INT32, T_INT64 };
enum { O_SUM, O_PROD, O_MAX, O_MIN };

static inline int collc_type(MPI_Datatype t, int *kind, size_t *size)
{
	int s;
	if (t == MPI_FLOAT)
		*kind = T_FLOAT;
	else if (t == MPI_DOUBLE)
		*kind = T_DOUBLE;
	else if (t == MPI_INT32_T || t == MPI_INT)
		*kind = T_INT32;
	else if (t == MPI_INT64_T || t == MPI_LONG_LONG || t == MPI_LONG)
		*kind = T_INT64;
	else
		return MPI_ERR_TYPE;
	MPI_Type_size(t, &s);
	if ((*kind == T_INT32 && s != 4) || (*kind == T_INT64 && s != 8))
		return MPI_ERR_TYPE;
	*size = (size_t)s;
	return MPI_SUCCESS;
}

static inline int collc_opkind(MPI_Op op, int *kind)
{
	if (op == MPI_SUM)
		*kind = O_SUM;
	else if (op == MPI_PROD)
		*kind = O_PROD;
	else if (op == MPI_MAX)
		*kind = O_MAX;
	else if (op == MPI_MIN)
		*kind = O_MIN;
	else
		return MPI_ERR_OP;
	return MPI_SUCCESS;
}

/* the op is chosen outside the loop, so each loop is a plain vectorizable one */
#define COLLC_LOOP(T, EXPR)                  \
	do {                                      \
		T *d = (T *)dst;                      \
		const T *s = (const T *)src;          \
		for (size_t i = 0; i < n; i++)        \
			d[i] = EXPR;                     \
	} while (0)
#define COLLC_REDUCE(T)                                                       \
	do {                                                                      \
		if (op == O_SUM)                                                      \
			COLLC_LOOP(T, d[i] + s[i]);                                      \
		else if (op == O_PROD)                                               \
			COLLC_LOOP(T, d[i] * s[i]);                                      \
		else if (op == O_MAX)                                                \
			COLLC_LOOP(T, d[i] > s[i] ? d[i] : s[i]);                        \
		else                                                                 \
			COLLC_LOOP(T, d[i] < s[i] ? d[i] : s[i]);                        \
	} while (0)

static inline void collc_reduce(void *dst, const void *src, size_t n, int type, int op)
{
	switch (type) {
	case T_FLOAT: COLLC_REDUCE(float); break;
	case T_DOUBLE: COLLC_REDUCE(double); break;
	case T_INT32: COLLC_REDUCE(int32_t); break;
	default: COLLC_REDUCE(int64_t); break;
	}
}

/* Elements [start, end) of chunk c: chunks of a block differ by one element at most. */
static void collc_range(int c, size_t block, size_t *start, size_t *end)
{
	size_t b = (size_t)chunk_block[c], k = (size_t)chunk_piece[c];
	*start = b * block + k * block / CHUNKS_PER_BLOCK;
	*end = b * block + (k + 1) * block / CHUNKS_PER_BLOCK;
}

/* A send of one run leaves from the buffer, a copy of one run that is alone
 * lands in it; everything else goes through the scratch space. */
static int collc_direct(const collc_op *o) { return o->run && (o->kind == 0 || (o->kind == 2 && o->alone)); }

/* The bytes op o moves. */
static size_t collc_bytes(const collc_plan *pl, const collc_op *o, size_t block, size_t esize)
{
	size_t bytes = 0, s, e;
	for (int c = 0; c < o->n; c++) {
		collc_range(pl->chunk[o->first + c], block, &s, &e);
		bytes += (e - s) * esize;
	}
	return bytes;
}

/* Reduces or copies a received message (at data) into the buffer. */
static void collc_deliver(const collc_plan *pl, const collc_op *o, char *work, const char *data,
                          size_t block, size_t esize, int type, int op)
{
	size_t s, e;
	for (int c = 0; c < o->n && !collc_direct(o); c++) {
		collc_range(pl->chunk[o->first + c], block, &s, &e);
		if (o->kind == 1)
			collc_reduce(work + s * esize, data, e - s, type, op);
		else
			memcpy(work + s * esize, data, (e - s) * esize);
		data += (e - s) * esize;
	}
}

/* Runs the plan on work (NBLOCK blocks of `block` elements). A round reads
 * what the rank held when it began: a receive that is alone in its round
 * lands in the buffer or is reduced into it as soon as it arrives; the
 * others land apart and are applied in order once the round is done. */
static int collc_run(int me, void *work, size_t block, size_t esize, int type, int op,
                     MPI_Comm comm)
{
	static collc_plan plan;
	static int planned_for = -1;
	/* kept from call to call: a fresh large allocation costs a page fault
	 * per page on every call */
	static char *space;
	static size_t cap;
	if (planned_for != me) {
		if (collc_make_plan(me, &plan) != 0)
			return MPI_ERR_NO_MEM;
		planned_for = me;
	}
	int rc = MPI_SUCCESS;
#ifdef COLLC_REWIRE
	int rewired = 0; /* reconfigurations of the optical switch passed */
#endif
	MPI_Request *req = malloc((size_t)(plan.nop + 1) * sizeof *req);
	size_t *at = malloc((size_t)(plan.nop + 1) * sizeof *at);
	int *arrived = malloc((size_t)(plan.nop + 1) * sizeof *arrived);
	/* real statuses: with MPICH, gcc -O2 takes MPI_STATUSES_IGNORE for an
	 * array Waitsome writes (-Wstringop-overflow) */
	MPI_Status *status = malloc((size_t)(plan.nop + 1) * sizeof *status);
	if (!req || !at || !arrived || !status) {
		free(req);
		free(at);
		free(arrived);
		free(status);
		return MPI_ERR_NO_MEM;
	}
	for (int i = 0; i < plan.nop && rc == MPI_SUCCESS;) {
		int j = i;
#ifdef COLLC_REWIRE
		/* the circuits are rewired before this round: every rank waits */
		for (; rewired < NREWIRE && collc_rewire[rewired] <= plan.op[i].round; rewired++)
			MPI_Barrier(comm);
#endif
		while (j < plan.nop && plan.op[j].round == plan.op[i].round)
			j++;
		size_t need = 0, s, e;
		for (int k = i; k < j; k++) {
			at[k] = need;
			if (!collc_direct(&plan.op[k]))
				need += collc_bytes(&plan, &plan.op[k], block, esize);
		}
		if (need > cap || !space) { /* never NULL: offsets into it stay defined */
			free(space);
			cap = need;
			if (!(space = malloc(cap + 1))) {
				cap = 0;
				rc = MPI_ERR_NO_MEM;
				break;
			}
		}
		/* receives first, so that the sends find them posted */
		for (int sends = 0; sends < 2; sends++)
			for (int k = i; k < j && rc == MPI_SUCCESS; k++) {
				const collc_op *o = &plan.op[k];
				if ((o->kind == 0) != sends)
					continue;
				char *data = space + at[k];
				size_t bytes = collc_bytes(&plan, o, block, esize);
				if (collc_direct(o)) {
					collc_range(plan.chunk[o->first], block, &s, &e);
					data = (char *)work + s * esize;
				} else if (o->kind == 0) {
					char *to = data;
					for (int c = 0; c < o->n; c++) {
						collc_range(plan.chunk[o->first + c], block, &s, &e);
						memcpy(to, (char *)work + s * esize, (e - s) * esize);
						to += (e - s) * esize;
					}
				}
				if (bytes > INT_MAX) {
					rc = MPI_ERR_COUNT;
					break;
				}
				if (o->kind == 0)
					rc = MPI_Isend(data, (int)bytes, MPI_BYTE, o->peer, COLLC_TAG, comm, &req[k]);
				else
					rc = MPI_Irecv(data, (int)bytes, MPI_BYTE, o->peer, COLLC_TAG, comm, &req[k]);
			}
		for (int left = j - i, nready; rc == MPI_SUCCESS && left > 0; left -= nready) {
			rc = MPI_Waitsome(j - i, req + i, &nready, arrived, status);
			if (rc != MPI_SUCCESS || nready == MPI_UNDEFINED)
				break;
			for (int r = 0; r < nready; r++) {
				const collc_op *o = &plan.op[i + arrived[r]];
				if (o->kind != 0 && o->alone)
					collc_deliver(&plan, o, work, space + at[i + arrived[r]], block, esize, type, op);
			}
		}
		for (int k = i; k < j && rc == MPI_SUCCESS; k++)
			if (plan.op[k].kind != 0 && !plan.op[k].alone)
				collc_deliver(&plan, &plan.op[k], work, space + at[k], block, esize, type, op);
		i = j;
	}
#ifdef COLLC_REWIRE
	for (; rewired < NREWIRE; rewired++) /* rewirings after this rank's last round */
		MPI_Barrier(comm);
#endif
	free(req);
	free(at);
	free(arrived);
	free(status);
	return rc;
}
/* ---- end of the interpreter ---- */

/* Alone, a caller uses every function above (not written into programs). */
int collc_runtime_check(void *work, size_t count, MPI_Comm comm);

int
collc_runtime_check(void *work, size_t count, MPI_Comm comm)
{
	int type, op, me;
	size_t esize;
	if (collc_type(MPI_FLOAT, &type, &esize) != MPI_SUCCESS ||
	    collc_opkind(MPI_SUM, &op) != MPI_SUCCESS)
		return MPI_ERR_TYPE;
	MPI_Comm_rank(comm, &me);
	return collc_run(me, work, count, esize, type, op, comm);
}
