/*
 * runtime.c: the interpreter every program of the MPI target carries.
 * collc embeds this file at build time (the Makefile makes a C array of
 * it) and writes the lines between the two "----" markers into each
 * generated program, after the schedule's tables; this file is the source,
 * never edited in the output. What it needs from the program before it:
 * NRANK, NCHUNK, CHUNKS_PER_BLOCK, COLLC_TAG, chunk_block[], chunk_piece[],
 * and COLLC_SYMMETRIC with either the per-rank op tables (op_start,
 * op_table, op_chunks) or the symmetric form (NBASE, ORDER, NNODE, NDIM,
 * AFFINE, base_table, dims, rank_node, elements, inverse); on an optical
 * ring that rewires its circuits, COLLC_REWIRE with NREWIRE and
 * collc_rewire[] (the rounds before which every rank waits at a barrier). What it establishes:
 * collc_run(), which runs this rank's part of the schedule on a buffer.
 * Both targets then write the lines between the "---- the communicator
 * ----" markers (collc_lib_own: the duplicate of the caller's communicator
 * the schedule runs on). The library target (backends/to_mpi_lib.c) writes
 * the interpreter once per schedule, its names renamed (all but the
 * schedule-independent part from the T_FLOAT line to collc_reduce, written
 * once), and the library's own part, backends/mpi/lib.c (plan lookup,
 * counts, calibration, the v variants).
 *
 * Compiled alone (make mpi-runtime-check, with every MPI found, in both
 * forms: -DCOLLC_SYMMETRIC=0 or 1), the lines above the first marker stand
 * in for the tables: a ring of two ranks allreducing two chunks.
 */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
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
static const int inverse[2] = {0, 1};
#else
static const int op_start[3] = {0, 4, 8};
/* round, peer, kind (0 send, 1 receive and reduce, 2 receive and copy), first, count */
static const int op_table[40] = {0, 1, 0, 0, 1, 0, 1, 1, 1, 1, 1, 1, 0, 2, 1, 1, 1, 2, 3, 1,
                                 0, 0, 0, 4, 1, 0, 0, 1, 5, 1, 1, 0, 0, 6, 1, 1, 0, 2, 7, 1};
static const int op_chunks[8] = {0, 1, 1, 0, 1, 0, 0, 1};
#endif
static const int chunk_block[2] = {0, 0};
static const int chunk_piece[2] = {0, 1};
#define COLLC_MPI(f) MPI_##f /* a library's MPI names: PMPI_ in the drop-in */
/* ---- the interpreter ---- */

/* run: the op's chunks are one run of the buffer, in order; alone: no other
 * op of its round touches them (so a receive may write them at any time) */
typedef struct { int round, peer, kind, xop, first, n, run, alone; } collc_op;
/* This rank's ops in round order, each op's chunks (in buffer order) in
 * chunk[first..first+n); per op, the datatype that picks its chunks out of
 * the buffer when they are several runs (made for block elements of esize
 * bytes, MPI_DATATYPE_NULL until needed); per op, a request, its scratch
 * offset and Waitsome's outputs. */
typedef struct {
	int nop;
	collc_op *op;
	int *chunk;
	MPI_Datatype *type;
	size_t type_block, type_esize;
	MPI_Request *req;
	size_t *at;
	int *arrived;
	MPI_Status *status;
} collc_plan;

/* Chunk c's place in the buffer, counted in chunks. */
static int collc_pos(int c) { return chunk_block[c] * CHUNKS_PER_BLOCK + chunk_piece[c]; }
#if COLLC_SYMMETRIC
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

/* The elements g with g^-1(node) = v, for every node v: elements by[] in
 * buckets, bucket v ending at end[v] (and starting at end[v - 1], or 0). */
static void collc_buckets(int node, int *end, int *by)
{
	for (int e = 0; e < ORDER; e++)
		end[collc_apply(inverse[e], node)]++;
	for (int v = 1; v < NNODE; v++)
		end[v] += end[v - 1];
	for (int e = ORDER - 1; e >= 0; e--)
		by[--end[collc_apply(inverse[e], node)]] = e;
	for (int v = 0; v < NNODE; v++) /* each now holds its bucket's start: make it the end */
		end[v] = v + 1 < NNODE ? end[v + 1] : ORDER;
}

/* This rank's copies of the base transfers, one op per chunk. Copy g of
 * the transfer src -> dst touches this rank's node m when g(src) = m or
 * g(dst) = m, that is when src or dst is g^-1(m): with the elements in
 * buckets by g^-1(m) (ORDER steps), each transfer visits only its copies
 * here, NBASE x ORDER / NNODE steps in all for a group transitive on the
 * nodes, where trying every element took NBASE x ORDER. */
static int collc_copies(int me, collc_op **opp, int **chp, int *np)
{
	int *rank_of = malloc((size_t)NNODE * sizeof *rank_of);
	int *end = calloc((size_t)NNODE, sizeof *end), *by = malloc((size_t)ORDER * sizeof *by);
	collc_op *op = NULL;
	int *ch = NULL, n = 0;
	if (rank_of && end && by) {
		long total = 0; /* a rank's copies: more than an int holds only if it is out of memory */
		for (int r = 0; r < NRANK; r++)
			rank_of[rank_node[r]] = r;
		collc_buckets(rank_node[me], end, by);
		for (int i = 0; i < NBASE; i++)
			for (int side = 0; side < 2; side++) {
				int v = rank_node[base_table[5 * i + 2 + side]];
				total += end[v] - (v ? end[v - 1] : 0);
			}
		n = total < INT_MAX ? (int)total : 0;
		if (total < INT_MAX) {
			op = malloc((size_t)(n + 1) * sizeof *op);
			ch = malloc((size_t)(n + 1) * sizeof *ch);
		}
	}
	if (op && ch) {
		n = 0;
		for (int i = 0; i < NBASE; i++) {
			const int *b = base_table + 5 * i;
			for (int side = 0; side < 2; side++) { /* 0: this rank sends, 1: it receives */
				int here = rank_node[b[2 + side]], there = rank_node[b[3 - side]];
				for (int k = here ? end[here - 1] : 0; k < end[here]; k++) {
					int e = by[k];
					op[n] = (collc_op){b[0], rank_of[collc_apply(e, there)], side ? b[4] : 0,
					                   b[4], n, 1, 0, 0};
					ch[n++] = b[1] * ORDER + e;
				}
			}
		}
	}
	free(rank_of);
	free(end);
	free(by);
	if (!op || !ch) {
		free(op);
		free(ch);
		return -1;
	}
	*opp = op;
	*chp = ch;
	*np = n;
	return 0;
}

/* One op per message: the chunks of one round, direction, peer and op. */
static int collc_group(collc_plan *pl, collc_op *op, const int *ch, int n)
{
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
	pl->nop = m;
	pl->op = op;
	pl->chunk = sorted;
	return 0;
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

/* Per op: its datatype (none yet), request, scratch offset, Waitsome's outputs. */
static int collc_plan_state(collc_plan *pl)
{
	size_t n = (size_t)pl->nop + 1;
	pl->type = malloc(n * sizeof *pl->type);
	pl->req = malloc(n * sizeof *pl->req);
	pl->at = malloc(n * sizeof *pl->at);
	pl->arrived = malloc(n * sizeof *pl->arrived);
	/* real statuses: with MPICH, gcc -O2 takes MPI_STATUSES_IGNORE for an
	 * array Waitsome writes (-Wstringop-overflow) */
	pl->status = malloc(n * sizeof *pl->status);
	for (int k = 0; pl->type && k < pl->nop; k++) /* collc_free_plan may free them */
		pl->type[k] = MPI_DATATYPE_NULL;
	if (!pl->type || !pl->req || !pl->at || !pl->arrived || !pl->status)
		return -1;
	return 0;
}

/* This rank's operations, derived once. */
static int collc_make_plan(int me, collc_plan *pl)
{
	memset(pl, 0, sizeof *pl);
#if COLLC_SYMMETRIC
	collc_op *op;
	int *ch, n;
	if (collc_copies(me, &op, &ch, &n) != 0)
		return -1;
	int rc = collc_group(pl, op, ch, n);
	free(ch);
	if (rc != 0) {
		free(op);
		return -1;
	}
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
	if (collc_plan_state(pl) != 0)
		return -1;
	return collc_mark(pl);
}

enum { T_FLOAT, T_DOUBLE, T_INT32, T_INT64 };
enum { O_SUM, O_PROD, O_MAX, O_MIN };

/* The element a reducing schedule takes for type t (T_...), by its handle
 * alone (no question to MPI), or -1. */
static inline int collc_type_kind(MPI_Datatype t)
{
	if (t == MPI_FLOAT)
		return T_FLOAT;
	if (t == MPI_DOUBLE)
		return T_DOUBLE;
	if (t == MPI_INT32_T || t == MPI_INT)
		return T_INT32;
	if (t == MPI_INT64_T || t == MPI_LONG_LONG || t == MPI_LONG)
		return T_INT64;
	return -1;
}

/* Whether elements of s bytes are kind's (MPI_LONG is T_INT64 only where it
 * is 8 bytes). */
static inline int collc_type_fits(int kind, long long s)
{
	return !((kind == T_INT32 && s != 4) || (kind == T_INT64 && s != 8));
}

static inline int collc_type(MPI_Datatype t, int *kind, size_t *size)
{
	int s;
	if ((*kind = collc_type_kind(t)) < 0)
		return MPI_ERR_TYPE;
	MPI_Type_size(t, &s);
	if (!collc_type_fits(*kind, s))
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

/* A datatype the moving collectives (allgather, alltoall, broadcast) take
 * as bytes, whatever its values: a predefined one whose elements lie end to
 * end (its size its extent, from 0: MPI_SHORT_INT's padding is not), of
 * *size bytes each. */
static inline int collc_bytes_type(MPI_Datatype t, size_t *size)
{
	int s, ni, na, nd, combiner;
	MPI_Aint lb, extent, tlb, textent;
	if (t == MPI_DATATYPE_NULL ||
	    MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS ||
	    combiner != MPI_COMBINER_NAMED || MPI_Type_size(t, &s) != MPI_SUCCESS ||
	    MPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS ||
	    MPI_Type_get_true_extent(t, &tlb, &textent) != MPI_SUCCESS || s <= 0 || lb != 0 ||
	    tlb != 0 || extent != s || textent != s)
		return MPI_ERR_TYPE;
	*size = (size_t)s;
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

/* Every send leaves from the buffer, and a copy alone in its round lands in
 * it: as one run, or through a datatype that picks the op's runs out of the
 * buffer, so nothing is packed. A reduction, or a copy that must wait for
 * the round's end, lands in the scratch space. */
static int collc_direct(const collc_op *o) { return o->kind == 0 || (o->kind == 2 && o->alone); }

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

/* Op k's datatype: its chunks' bytes in the buffer (at most INT_MAX in all),
 * neighbours merged into one block, over MPI_BYTE. */
static int collc_make_type(collc_plan *pl, int k, size_t block, size_t esize)
{
	const collc_op *o = &pl->op[k];
	int *len = malloc((size_t)o->n * sizeof *len), nrun = 0;
	MPI_Aint *disp = malloc((size_t)o->n * sizeof *disp);
	int rc = len && disp ? MPI_SUCCESS : MPI_ERR_NO_MEM;
	for (int c = 0; c < o->n && rc == MPI_SUCCESS; c++) {
		size_t s, e;
		collc_range(pl->chunk[o->first + c], block, &s, &e);
		if (e == s)
			continue;
		if (nrun > 0 && (size_t)disp[nrun - 1] + (size_t)len[nrun - 1] == s * esize) {
			len[nrun - 1] += (int)((e - s) * esize);
		} else {
			disp[nrun] = (MPI_Aint)(s * esize);
			len[nrun++] = (int)((e - s) * esize);
		}
	}
	if (rc == MPI_SUCCESS)
		rc = MPI_Type_create_hindexed(nrun, len, disp, MPI_BYTE, &pl->type[k]);
	if (rc == MPI_SUCCESS)
		rc = MPI_Type_commit(&pl->type[k]);
	free(len);
	free(disp);
	return rc;
}

/* The datatypes were made for another block or element size. */
static void collc_free_types(collc_plan *pl)
{
	for (int k = 0; k < pl->nop; k++)
		if (pl->type[k] != MPI_DATATYPE_NULL)
			MPI_Type_free(&pl->type[k]);
}

/* Where direct op k's `bytes` lie in work, as MPI's buffer, count and type. */
static int collc_where(collc_plan *pl, int k, char *work, size_t block, size_t esize,
                       size_t bytes, void **buf, int *count, MPI_Datatype *type)
{
	const collc_op *o = &pl->op[k];
	size_t s, e;
	collc_range(pl->chunk[o->first], block, &s, &e);
	if (o->run || bytes == 0) {
		*buf = work + s * esize;
		*count = (int)bytes;
		*type = MPI_BYTE;
		return MPI_SUCCESS;
	}
	if (pl->type[k] == MPI_DATATYPE_NULL) {
		int rc = collc_make_type(pl, k, block, esize);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	*buf = work;
	*count = 1;
	*type = pl->type[k];
	return MPI_SUCCESS;
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

/* Posts round [i, j)'s receives, then its sends, so that the sends find
 * them posted. */
static int collc_post(collc_plan *pl, int i, int j, char *work, char *space, size_t block,
                      size_t esize, MPI_Comm comm)
{
	int rc = MPI_SUCCESS;
	for (int sends = 0; sends < 2; sends++)
		for (int k = i; k < j && rc == MPI_SUCCESS; k++) {
			const collc_op *o = &pl->op[k];
			if ((o->kind == 0) != sends)
				continue;
			size_t bytes = collc_bytes(pl, o, block, esize);
			if (bytes > INT_MAX)
				return MPI_ERR_COUNT;
			void *buf = space + pl->at[k];
			int count = (int)bytes;
			MPI_Datatype type = MPI_BYTE;
			if (collc_direct(o))
				rc = collc_where(pl, k, work, block, esize, bytes, &buf, &count, &type);
			if (rc == MPI_SUCCESS && o->kind == 0)
				rc = MPI_Isend(buf, count, type, o->peer, COLLC_TAG, comm, &pl->req[k]);
			else if (rc == MPI_SUCCESS)
				rc = MPI_Irecv(buf, count, type, o->peer, COLLC_TAG, comm, &pl->req[k]);
		}
	return rc;
}

/* Completes round [i, j): a receive alone in its round is applied as soon
 * as it arrives, the others in order once the whole round is done, so the
 * round reads what the rank held when it began. */
static int collc_complete(collc_plan *pl, int i, int j, char *work, const char *space,
                          size_t block, size_t esize, int type, int op)
{
	int rc = MPI_SUCCESS;
	for (int left = j - i, nready; left > 0; left -= nready) {
		rc = MPI_Waitsome(j - i, pl->req + i, &nready, pl->arrived, pl->status);
		if (rc != MPI_SUCCESS || nready == MPI_UNDEFINED)
			break;
		for (int r = 0; r < nready; r++) {
			int k = i + pl->arrived[r];
			if (pl->op[k].kind != 0 && pl->op[k].alone)
				collc_deliver(pl, &pl->op[k], work, space + pl->at[k], block, esize, type, op);
		}
	}
	for (int k = i; k < j && rc == MPI_SUCCESS; k++)
		if (pl->op[k].kind != 0 && !pl->op[k].alone)
			collc_deliver(pl, &pl->op[k], work, space + pl->at[k], block, esize, type, op);
	return rc;
}

/* Round [i, j)'s scratch space: its receives that do not land in the buffer. */
static size_t collc_scratch(collc_plan *pl, int i, int j, size_t block, size_t esize)
{
	size_t need = 0;
	for (int k = i; k < j; k++) {
		pl->at[k] = need;
		if (!collc_direct(&pl->op[k]))
			need += collc_bytes(pl, &pl->op[k], block, esize);
	}
	return need;
}

/* What the schedule keeps from call to call: the plan of the rank it was
 * made for (-1: none), with its datatypes, and the scratch space (a fresh
 * large allocation costs a page fault per page on every call). */
static struct {
	collc_plan plan;
	int planned_for;
	char *space;
	size_t cap;
	int keyval; /* MPI_COMM_SELF's attribute that frees it all at MPI_Finalize */
} collc_kept = {.planned_for = -1, .keyval = MPI_KEYVAL_INVALID};

/* The plan and everything made for it (the datatypes are MPI's objects). */
static void collc_free_plan(collc_plan *pl)
{
	if (pl->type)
		collc_free_types(pl);
	free(pl->op);
#if COLLC_SYMMETRIC
	free(pl->chunk); /* else the file's own op_chunks */
#endif
	free(pl->type);
	free(pl->req);
	free(pl->at);
	free(pl->arrived);
	free(pl->status);
	memset(pl, 0, sizeof *pl);
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still
 * works (the standard's way to run code there): what collc_kept holds goes,
 * datatypes included, so no MPI reports them leaked. */
static int collc_release(MPI_Comm comm, int keyval, void *attr, void *extra)
{
	(void)comm;
	(void)keyval;
	(void)attr;
	(void)extra;
	if (collc_kept.planned_for >= 0)
		collc_free_plan(&collc_kept.plan);
	collc_kept.planned_for = -1;
	free(collc_kept.space);
	collc_kept.space = NULL;
	collc_kept.cap = 0;
	return MPI_Comm_free_keyval(&collc_kept.keyval);
}

/* The plan for rank me, made on the first call (and again when the rank
 * changes); the first makes sure MPI_Finalize frees it. */
static int collc_plan_for(int me)
{
	if (collc_kept.planned_for == me)
		return MPI_SUCCESS;
	if (collc_kept.keyval == MPI_KEYVAL_INVALID) {
		int rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, collc_release, &collc_kept.keyval,
		                                NULL);
		if (rc == MPI_SUCCESS)
			rc = MPI_Comm_set_attr(MPI_COMM_SELF, collc_kept.keyval, NULL);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	if (collc_kept.planned_for >= 0)
		collc_free_plan(&collc_kept.plan);
	collc_kept.planned_for = -1;
	if (collc_make_plan(me, &collc_kept.plan) != 0) {
		collc_free_plan(&collc_kept.plan);
		return MPI_ERR_NO_MEM;
	}
	collc_kept.planned_for = me;
	return MPI_SUCCESS;
}

/* Runs the plan on work (NBLOCK blocks of `block` elements), round by round. */
static int collc_run(int me, void *work, size_t block, size_t esize, int type, int op,
                     MPI_Comm comm)
{
	int rc = collc_plan_for(me);
	if (rc != MPI_SUCCESS)
		return rc;
	collc_plan *pl = &collc_kept.plan;
	if (pl->type_block != block || pl->type_esize != esize) {
		collc_free_types(pl);
		pl->type_block = block;
		pl->type_esize = esize;
	}
#ifdef COLLC_REWIRE
	int rewired = 0; /* reconfigurations of the optical switch passed */
#endif
	for (int i = 0, j = 0; i < pl->nop && rc == MPI_SUCCESS; i = j) {
#ifdef COLLC_REWIRE
		/* the circuits are rewired before this round: every rank waits */
		for (; rewired < NREWIRE && collc_rewire[rewired] <= pl->op[i].round; rewired++)
			MPI_Barrier(comm);
#endif
		while (j < pl->nop && pl->op[j].round == pl->op[i].round)
			j++;
		size_t need = collc_scratch(pl, i, j, block, esize);
		if (need > collc_kept.cap || !collc_kept.space) { /* never NULL: offsets stay defined */
			free(collc_kept.space);
			collc_kept.cap = need;
			if (!(collc_kept.space = malloc(need + 1))) {
				collc_kept.cap = 0;
				return MPI_ERR_NO_MEM;
			}
		}
		rc = collc_post(pl, i, j, work, collc_kept.space, block, esize, comm);
		if (rc == MPI_SUCCESS)
			rc = collc_complete(pl, i, j, work, collc_kept.space, block, esize, type, op);
	}
#ifdef COLLC_REWIRE
	for (; rewired < NREWIRE; rewired++) /* rewirings after this rank's last round */
		MPI_Barrier(comm);
#endif
	return rc;
}
/* ---- end of the interpreter ---- */


/* ---- the communicator ---- */

/* Every program and library of the MPI targets runs its schedules on a
 * duplicate of the caller's communicator, kept as the communicator's
 * attribute (written once, after the interpreter). */
/* The key under which each user communicator keeps its duplicate (one per
 * library: each has its own key and its own duplicates). */
static int collc_lib_keyval = MPI_KEYVAL_INVALID;
/* MPI_Finalize has begun (the drop-in's, or MPI_COMM_SELF's attribute
 * below deleted): nothing may be made or kept any more, for a collective
 * that a delete callback calls then would set an attribute on
 * MPI_COMM_SELF while MPI deletes them (MPICH spins there forever). */
static int collc_lib_closed;

/* comm is freed (MPI_Comm_free, or MPI_Finalize for the predefined ones):
 * so is its duplicate. */
static int collc_lib_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
	(void)comm;
	(void)keyval;
	(void)extra;
	MPI_Comm *own = attr;
	int rc = MPI_Comm_free(own);
	free(own);
	return rc;
}

/* At the start of MPI_Finalize (MPI_COMM_SELF's attributes go first, while
 * MPI still works): MPI_COMM_WORLD's duplicate and the key go, rather than
 * being left to whatever the MPI does with MPI_COMM_WORLD's attributes
 * later. A program's own communicators it has not freed keep theirs. */
static int collc_lib_finalize(MPI_Comm comm, int keyval, void *attr, void *extra)
{
	(void)comm;
	(void)attr;
	(void)extra;
	void *kept;
	collc_lib_closed = 1;
	int found = 0, rc = MPI_Comm_get_attr(MPI_COMM_WORLD, collc_lib_keyval, &kept, &found);
	if (rc == MPI_SUCCESS && found) /* Open MPI takes deleting none as an error */
		rc = MPI_Comm_delete_attr(MPI_COMM_WORLD, collc_lib_keyval);
	if (rc == MPI_SUCCESS)
		rc = MPI_Comm_free_keyval(&collc_lib_keyval);
	if (rc == MPI_SUCCESS)
		rc = MPI_Comm_free_keyval(&keyval);
	return rc;
}

/* The key, made on the first call, with MPI_COMM_SELF's attribute that
 * frees it at MPI_Finalize. */
static int collc_lib_key(void)
{
	int self = MPI_KEYVAL_INVALID;
	int rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, collc_lib_delete, &collc_lib_keyval,
	                                NULL);
	if (rc == MPI_SUCCESS)
		rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, collc_lib_finalize, &self, NULL);
	if (rc == MPI_SUCCESS)
		rc = MPI_Comm_set_attr(MPI_COMM_SELF, self, NULL);
	return rc;
}

/* The communicator a schedule runs on for comm: comm's duplicate, made on
 * the first call on comm (a collective call: every rank of comm makes it)
 * and kept as comm's attribute, so that the schedule's messages never meet
 * the caller's, whatever tags they use. MPI_ERR_COMM, before anything is
 * sent, for a null or inter-communicator or one of another size than nrank;
 * MPI_ERR_OTHER once MPI_Finalize has begun (above). The duplicate returns
 * its errors (MPI_ERRORS_RETURN), so that a library reports each through
 * the caller's communicator, once. */
static int collc_lib_own(MPI_Comm comm, int nrank, MPI_Comm *own)
{
	int size, inter, found = 0, rc = MPI_SUCCESS;
	MPI_Comm *kept = NULL;
	if (comm == MPI_COMM_NULL || MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
	    MPI_Comm_size(comm, &size) != MPI_SUCCESS || size != nrank)
		return MPI_ERR_COMM;
	if (collc_lib_closed)
		return MPI_ERR_OTHER;
	if (collc_lib_keyval == MPI_KEYVAL_INVALID)
		rc = collc_lib_key();
	if (rc == MPI_SUCCESS)
		rc = MPI_Comm_get_attr(comm, collc_lib_keyval, &kept, &found);
	if (rc == MPI_SUCCESS && !found) {
		if (!(kept = malloc(sizeof *kept)))
			return MPI_ERR_NO_MEM;
		rc = MPI_Comm_dup(comm, kept);
		if (rc == MPI_SUCCESS)
			rc = MPI_Comm_set_errhandler(*kept, MPI_ERRORS_RETURN);
		if (rc == MPI_SUCCESS)
			rc = MPI_Comm_set_attr(comm, collc_lib_keyval, kept);
		else
			free(kept);
	}
	if (rc == MPI_SUCCESS)
		*own = *kept;
	return rc;
}

/* ---- end of the communicator ---- */

/* Alone, a caller uses every function above (not written into programs;
 * backends/mpi/lib.c includes this file and checks the library's part). */
int collc_runtime_check(void *work, size_t count, MPI_Comm comm);

int
collc_runtime_check(void *work, size_t count, MPI_Comm comm)
{
	int type, op, me, rc;
	size_t esize;
	MPI_Comm own;
	if (collc_type(MPI_FLOAT, &type, &esize) != MPI_SUCCESS ||
	    collc_opkind(MPI_SUM, &op) != MPI_SUCCESS || collc_bytes_type(MPI_BYTE, &esize) != 0)
		return MPI_ERR_TYPE;
	if ((rc = collc_lib_own(comm, NRANK, &own)) != MPI_SUCCESS)
		return rc;
	MPI_Comm_rank(own, &me);
	return collc_run(me, work, count, sizeof(float), type, op, own);
}
