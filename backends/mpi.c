/*
 * mpi.c: a schedule as a standalone C program for MPI. One collective per
 * file (--collective NAME when the file has several): a function with the
 * shape of the matching MPI collective that runs the verified schedule
 * round by round with nonblocking sends and receives, reducing with the
 * caller's MPI_Op. Chunks are laid out so that messages are runs of the
 * buffer where the schedule allows (see order_chunks): those move without
 * packing copies.
 *
 * An explicit schedule is emitted as per-rank tables of operations; a
 * symmetric one as its base transfers and group, from which each rank
 * derives its own operations once (the 64x64 SP schedule stays a few
 * hundred kilobytes of C). The interpreter is the same text for every
 * schedule (emitted from `interpreter` below). --with-main adds a main that
 * checks the function against MPI's own collective and times both.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

/* Numbers, many to a line, so tables stay compact and readable. */
static void
table(FILE *f, const char *decl, const int *v, long n)
{
	fprintf(f, "%s[%ld] = {", decl, n > 0 ? n : 1);
	if (n == 0)
		fputs("0", f);
	for (long i = 0; i < n; i++)
		fprintf(f, "%s%s%d", i ? "," : "", i % 16 == 0 ? "\n\t" : " ", v[i]);
	fputs("\n};\n", f);
}

static const char *
c_name(const Sched *s, char *buf, size_t len)
{
	snprintf(buf, len, "collc_%s", s->name);
	return buf;
}

/* The function's parameters, as MPI's counterpart has them. */
static const char *
signature(CollKind k)
{
	switch (k) {
	case CK_ALLREDUCE:
		return "const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, "
		       "MPI_Op op, MPI_Comm comm";
	case CK_REDUCE_SCATTER:
		return "const void *sendbuf, void *recvbuf, size_t recvcount, MPI_Datatype type, "
		       "MPI_Op op, MPI_Comm comm";
	case CK_ALLGATHER:
		return "const void *sendbuf, size_t sendcount, MPI_Datatype sendtype, void *recvbuf, "
		       "size_t recvcount, MPI_Datatype recvtype, MPI_Comm comm";
	case CK_ALLTOALL:
		return "const void *sendbuf, size_t sendcount, MPI_Datatype sendtype, void *recvbuf, "
		       "size_t recvcount, MPI_Datatype recvtype, MPI_Comm comm";
	case CK_BROADCAST:
		return "void *buffer, size_t count, MPI_Datatype type, int root, MPI_Comm comm";
	case CK_REDUCE:
		return "const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, "
		       "MPI_Op op, int root, MPI_Comm comm";
	default:
		return "";
	}
}

typedef struct Placed {
	int pos, chunk;
} Placed;

static int
placed_order(const void *a, const void *b)
{
	const Placed *x = a, *y = b;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Explicit schedules: each rank's operations in round order, each message's
 * chunks in buffer order (pos[c]: chunk c's place in the buffer). */
static void
explicit_tables(const Sched *s, const int *pos, FILE *f)
{
	int p = s->nrank;
	int *start = xcalloc((size_t)p + 1, sizeof *start);
	long nop = 0, nchunk = 0;
	for (int i = 0; i < s->nmsg; i++) {
		start[s->msg[i].src + 1]++;
		start[s->msg[i].dst + 1]++;
		nchunk += 2L * s->msg[i].n;
	}
	for (int r = 0; r < p; r++)
		start[r + 1] += start[r];
	nop = start[p];
	/* op: round, peer, kind (0 send, 1 receive and reduce, 2 receive and copy), first, n */
	int *ops = xmalloc((size_t)(nop * 5 + 1) * sizeof *ops);
	int *chunks = xmalloc((size_t)(nchunk + 1) * sizeof *chunks);
	int *fill = xcalloc((size_t)p, sizeof *fill);
	Placed *placed = xmalloc((size_t)(s->nchunk + 1) * sizeof *placed);
	long used = 0;
	for (int r = 0; r < p; r++)
		for (int i = 0; i < s->nmsg; i++) { /* messages are sorted by round */
			const Msg *m = &s->msg[i];
			if (m->src != r && m->dst != r)
				continue;
			for (int side = 0; side < 2; side++) {
				if ((side == 0 ? m->src : m->dst) != r)
					continue;
				int *o = ops + (start[r] + fill[r]++) * 5;
				o[0] = m->round;
				o[1] = side == 0 ? m->dst : m->src;
				o[2] = side == 0 ? 0 : m->op == X_REDUCE ? 1 : 2;
				o[3] = (int)used;
				o[4] = m->n;
				for (int c = 0; c < m->n; c++)
					placed[c] = (Placed){pos[s->chunks[m->first + c]], s->chunks[m->first + c]};
				qsort(placed, (size_t)m->n, sizeof *placed, placed_order);
				for (int c = 0; c < m->n; c++)
					chunks[used++] = placed[c].chunk;
			}
		}
	fputs("\n/* each rank's operations, in round order: round, peer, kind (0 send, 1 receive\n"
	      " * and reduce, 2 receive and copy), first and count in op_chunks */\n", f);
	fputs("#define COLLC_SYMMETRIC 0\n", f);
	table(f, "static const int op_start", start, p + 1);
	table(f, "static const int op_table", ops, nop * 5);
	table(f, "static const int op_chunks", chunks, used);
	free(start), free(ops), free(chunks), free(fill), free(placed);
}

/* Symmetric schedules: base transfers and the group's elements. */
static void
symmetric_tables(const Sched *s, FILE *f)
{
	const Group *g = s->group;
	const Topo *t = s->topo;
	int d = t->ndim;
	fputs("\n/* the symmetric form: base transfer e moves chunk (tree, g) from g(src) to\n"
	      " * g(dst) in its round, for every group element g; nodes are ranks here */\n", f);
	fputs("#define COLLC_SYMMETRIC 1\n", f);
	fprintf(f, "enum { NBASE = %d, ORDER = %d, NNODE = %d, NDIM = %d, AFFINE = %d };\n", s->nbase,
	        g->order, t->nnode, g->affine ? d : 0, g->affine);
	int *base = xmalloc((size_t)s->nbase * 5 * sizeof *base);
	for (int i = 0; i < s->nbase; i++) {
		const BaseXfer *x = &s->base[i];
		base[i * 5] = x->round;
		base[i * 5 + 1] = x->tree;
		base[i * 5 + 2] = s->node_rank[x->src];
		base[i * 5 + 3] = s->node_rank[x->dst];
		base[i * 5 + 4] = x->op == X_REDUCE ? 1 : 2;
	}
	fputs("/* round, tree, source rank, destination rank, 1 reduce or 2 copy */\n", f);
	table(f, "static const int base_table", base, (long)s->nbase * 5);
	free(base);
	int *size = xmalloc((size_t)(d + 1) * sizeof *size);
	for (int i = 0; i < d; i++)
		size[i] = t->size[i];
	table(f, "static const int dims", size, d);
	free(size);
	/* node <-> rank: the communicator's order */
	table(f, "static const int rank_node", s->rank_node, s->nrank);
	if (g->affine) {
		fputs("/* elements x -> A x + b (mod dims): A row-major, then b */\n", f);
		int w = d * d + d;
		int *el = xmalloc((size_t)g->order * (size_t)w * sizeof *el);
		for (int e = 0; e < g->order; e++) {
			memcpy(el + e * w, g->mat + e * d * d, (size_t)(d * d) * sizeof *el);
			memcpy(el + e * w + d * d, g->vec + e * d, (size_t)d * sizeof *el);
		}
		table(f, "static const int elements", el, (long)g->order * w);
		free(el);
	} else {
		fputs("/* elements as node permutations */\n", f);
		table(f, "static const int elements", g->perm, (long)g->order * t->nnode);
	}
}

/* The interpreter: the same for every schedule (one string per line). */
static const char *const interpreter[] = {
	"\n",
	"/* ---- the interpreter ---- */\n",
	"\n",
	"/* run: the op's chunks are one run of the buffer, in order; alone: no other\n",
	" * op of its round touches them (so a receive may write them at any time) */\n",
	"typedef struct { int round, peer, kind, xop, first, n, run, alone; } collc_op;\n",
	"typedef struct { int nop; collc_op *op; int *chunk; } collc_plan;\n",
	"\n",
	"/* Chunk c's place in the buffer, counted in chunks. */\n",
	"static int collc_pos(int c) { return chunk_block[c] * CHUNKS_PER_BLOCK + chunk_piece[c]; }\n",
	"#if COLLC_SYMMETRIC\n",
	"static int collc_node_of(int rank) { return rank_node[rank]; }\n",
	"static int collc_rank_of(int node)\n",
	"{\n",
	"\tfor (int r = 0; r < NRANK; r++)\n",
	"\t\tif (rank_node[r] == node)\n",
	"\t\t\treturn r;\n",
	"\treturn -1;\n",
	"}\n",
	"/* g(node) for element e */\n",
	"static int collc_apply(int e, int node)\n",
	"{\n",
	"\tif (!AFFINE)\n",
	"\t\treturn elements[(size_t)e * NNODE + (size_t)node];\n",
	"\tint x[8], y[8], w = NDIM * NDIM + NDIM;\n",
	"\tfor (int i = NDIM - 1, v = node; i >= 0; i--) {\n",
	"\t\tx[i] = v % dims[i];\n",
	"\t\tv /= dims[i];\n",
	"\t}\n",
	"\tint id = 0;\n",
	"\tfor (int i = 0; i < NDIM; i++) {\n",
	"\t\tlong s = elements[(size_t)e * w + NDIM * NDIM + i];\n",
	"\t\tfor (int j = 0; j < NDIM; j++)\n",
	"\t\t\ts += (long)elements[(size_t)e * w + i * NDIM + j] * x[j];\n",
	"\t\ty[i] = (int)(((s % dims[i]) + dims[i]) % dims[i]);\n",
	"\t\tid = id * dims[i] + y[i];\n",
	"\t}\n",
	"\treturn id;\n",
	"}\n",
	"#endif\n",
	"\n",
	"#if COLLC_SYMMETRIC\n",
	"/* by round, receives before sends, peer, then the transfer's op, so that\n",
	" * both ends cut the same messages */\n",
	"static int collc_op_order(const void *a, const void *b)\n",
	"{\n",
	"\tconst collc_op *x = a, *y = b;\n",
	"\tif (x->round != y->round)\n",
	"\t\treturn x->round < y->round ? -1 : 1;\n",
	"\tif ((x->kind == 0) != (y->kind == 0))\n",
	"\t\treturn (x->kind == 0) - (y->kind == 0);\n",
	"\tif (x->peer != y->peer)\n",
	"\t\treturn x->peer < y->peer ? -1 : 1;\n",
	"\tif (x->xop != y->xop)\n",
	"\t\treturn x->xop < y->xop ? -1 : 1;\n",
	"\treturn x->first < y->first ? -1 : x->first > y->first;\n",
	"}\n",
	"\n",
	"/* a message's chunks in buffer order, the same at both ends */\n",
	"static int collc_by_pos(const void *a, const void *b)\n",
	"{\n",
	"\tint x = collc_pos(*(const int *)a), y = collc_pos(*(const int *)b);\n",
	"\treturn (x > y) - (x < y);\n",
	"}\n",
	"#endif\n",
	"\n",
	"/* Sets each op's run and alone. */\n",
	"static int collc_mark(collc_plan *pl)\n",
	"{\n",
	"\tint *count = calloc((size_t)NCHUNK + 1, sizeof *count);\n",
	"\tif (!count)\n",
	"\t\treturn -1;\n",
	"\tfor (int i = 0, j; i < pl->nop; i = j) {\n",
	"\t\tfor (j = i; j < pl->nop && pl->op[j].round == pl->op[i].round; j++)\n",
	"\t\t\tfor (int c = 0; c < pl->op[j].n; c++)\n",
	"\t\t\t\tcount[pl->chunk[pl->op[j].first + c]]++;\n",
	"\t\tfor (int k = i; k < j; k++) {\n",
	"\t\t\tcollc_op *o = &pl->op[k];\n",
	"\t\t\tconst int *ch = pl->chunk + o->first;\n",
	"\t\t\to->run = o->alone = 1;\n",
	"\t\t\tfor (int c = 0; c < o->n; c++) {\n",
	"\t\t\t\to->alone &= count[ch[c]] == 1;\n",
	"\t\t\t\to->run &= c == 0 || collc_pos(ch[c]) == collc_pos(ch[c - 1]) + 1;\n",
	"\t\t\t}\n",
	"\t\t}\n",
	"\t\tfor (int k = i; k < j; k++)\n",
	"\t\t\tfor (int c = 0; c < pl->op[k].n; c++)\n",
	"\t\t\t\tcount[pl->chunk[pl->op[k].first + c]] = 0;\n",
	"\t}\n",
	"\tfree(count);\n",
	"\treturn 0;\n",
	"}\n",
	"\n",
	"/* This rank's operations, derived once. */\n",
	"static int collc_make_plan(int me, collc_plan *pl)\n",
	"{\n",
	"#if COLLC_SYMMETRIC\n",
	"\tint cap = 64, n = 0;\n",
	"\tcollc_op *op = malloc((size_t)cap * sizeof *op);\n",
	"\tint *ch = malloc((size_t)cap * sizeof *ch);\n",
	"\tif (!op || !ch)\n",
	"\t\treturn -1;\n",
	"\tint mynode = collc_node_of(me);\n",
	"\tfor (int i = 0; i < NBASE; i++) {\n",
	"\t\tconst int *b = base_table + 5 * i;\n",
	"\t\tfor (int e = 0; e < ORDER; e++) {\n",
	"\t\t\tint src = collc_apply(e, collc_node_of(b[2])), dst = collc_apply(e, collc_node_of(b[3]));\n",
	"\t\t\tfor (int side = 0; side < 2; side++) {\n",
	"\t\t\t\tif ((side ? dst : src) != mynode)\n",
	"\t\t\t\t\tcontinue;\n",
	"\t\t\t\tif (n == cap) {\n",
	"\t\t\t\t\tcap *= 2;\n",
	"\t\t\t\t\top = realloc(op, (size_t)cap * sizeof *op);\n",
	"\t\t\t\t\tch = realloc(ch, (size_t)cap * sizeof *ch);\n",
	"\t\t\t\t\tif (!op || !ch)\n",
	"\t\t\t\t\t\treturn -1;\n",
	"\t\t\t\t}\n",
	"\t\t\t\top[n] = (collc_op){b[0], collc_rank_of(side ? src : dst), side ? b[4] : 0, b[4], n, 1, 0, 0};\n",
	"\t\t\t\tch[n] = b[1] * ORDER + e;\n",
	"\t\t\t\tn++;\n",
	"\t\t\t}\n",
	"\t\t}\n",
	"\t}\n",
	"\t/* pack: the chunks of one round, direction and peer form one message */\n",
	"\tqsort(op, (size_t)n, sizeof *op, collc_op_order);\n",
	"\tint *sorted = malloc((size_t)(n + 1) * sizeof *sorted);\n",
	"\tif (!sorted)\n",
	"\t\treturn -1;\n",
	"\tint m = 0;\n",
	"\tfor (int i = 0; i < n; i++) {\n",
	"\t\tsorted[i] = ch[op[i].first];\n",
	"\t\tif (m > 0 && op[m - 1].round == op[i].round && op[m - 1].peer == op[i].peer &&\n",
	"\t\t    op[m - 1].kind == op[i].kind && op[m - 1].xop == op[i].xop) {\n",
	"\t\t\top[m - 1].n++;\n",
	"\t\t} else {\n",
	"\t\t\top[m] = op[i];\n",
	"\t\t\top[m].first = i;\n",
	"\t\t\tm++;\n",
	"\t\t}\n",
	"\t}\n",
	"\tfor (int i = 0; i < m; i++)\n",
	"\t\tqsort(sorted + op[i].first, (size_t)op[i].n, sizeof *sorted, collc_by_pos);\n",
	"\tfree(ch);\n",
	"\tpl->nop = m;\n",
	"\tpl->op = op;\n",
	"\tpl->chunk = sorted;\n",
	"#else\n",
	"\tint n = op_start[me + 1] - op_start[me];\n",
	"\tpl->op = malloc((size_t)(n + 1) * sizeof *pl->op);\n",
	"\tif (!pl->op)\n",
	"\t\treturn -1;\n",
	"\tfor (int i = 0; i < n; i++) {\n",
	"\t\tconst int *o = op_table + 5 * (op_start[me] + i);\n",
	"\t\tpl->op[i] = (collc_op){o[0], o[1], o[2], o[2], o[3], o[4], 0, 0};\n",
	"\t}\n",
	"\tpl->nop = n;\n",
	"\tpl->chunk = (int *)op_chunks;\n",
	"#endif\n",
	"\treturn collc_mark(pl);\n",
	"}\n",
	"\n",
	"enum { T_FLOAT, T_DOUBLE, T_INT32, T_INT64 };\n",
	"enum { O_SUM, O_PROD, O_MAX, O_MIN };\n",
	"\n",
	"static inline int collc_type(MPI_Datatype t, int *kind, size_t *size)\n",
	"{\n",
	"\tint s;\n",
	"\tif (t == MPI_FLOAT)\n",
	"\t\t*kind = T_FLOAT;\n",
	"\telse if (t == MPI_DOUBLE)\n",
	"\t\t*kind = T_DOUBLE;\n",
	"\telse if (t == MPI_INT32_T || t == MPI_INT)\n",
	"\t\t*kind = T_INT32;\n",
	"\telse if (t == MPI_INT64_T || t == MPI_LONG_LONG || t == MPI_LONG)\n",
	"\t\t*kind = T_INT64;\n",
	"\telse\n",
	"\t\treturn MPI_ERR_TYPE;\n",
	"\tMPI_Type_size(t, &s);\n",
	"\tif ((*kind == T_INT32 && s != 4) || (*kind == T_INT64 && s != 8))\n",
	"\t\treturn MPI_ERR_TYPE;\n",
	"\t*size = (size_t)s;\n",
	"\treturn MPI_SUCCESS;\n",
	"}\n",
	"\n",
	"static inline int collc_opkind(MPI_Op op, int *kind)\n",
	"{\n",
	"\tif (op == MPI_SUM)\n",
	"\t\t*kind = O_SUM;\n",
	"\telse if (op == MPI_PROD)\n",
	"\t\t*kind = O_PROD;\n",
	"\telse if (op == MPI_MAX)\n",
	"\t\t*kind = O_MAX;\n",
	"\telse if (op == MPI_MIN)\n",
	"\t\t*kind = O_MIN;\n",
	"\telse\n",
	"\t\treturn MPI_ERR_OP;\n",
	"\treturn MPI_SUCCESS;\n",
	"}\n",
	"\n",
	"/* the op is chosen outside the loop, so each loop is a plain vectorizable one */\n",
	"#define COLLC_LOOP(T, EXPR)                  \\\n",
	"\tdo {                                      \\\n",
	"\t\tT *d = (T *)dst;                      \\\n",
	"\t\tconst T *s = (const T *)src;          \\\n",
	"\t\tfor (size_t i = 0; i < n; i++)        \\\n",
	"\t\t\td[i] = EXPR;                     \\\n",
	"\t} while (0)\n",
	"#define COLLC_REDUCE(T)                                                       \\\n",
	"\tdo {                                                                      \\\n",
	"\t\tif (op == O_SUM)                                                      \\\n",
	"\t\t\tCOLLC_LOOP(T, d[i] + s[i]);                                      \\\n",
	"\t\telse if (op == O_PROD)                                               \\\n",
	"\t\t\tCOLLC_LOOP(T, d[i] * s[i]);                                      \\\n",
	"\t\telse if (op == O_MAX)                                                \\\n",
	"\t\t\tCOLLC_LOOP(T, d[i] > s[i] ? d[i] : s[i]);                        \\\n",
	"\t\telse                                                                 \\\n",
	"\t\t\tCOLLC_LOOP(T, d[i] < s[i] ? d[i] : s[i]);                        \\\n",
	"\t} while (0)\n",
	"\n",
	"static inline void collc_reduce(void *dst, const void *src, size_t n, int type, int op)\n",
	"{\n",
	"\tswitch (type) {\n",
	"\tcase T_FLOAT: COLLC_REDUCE(float); break;\n",
	"\tcase T_DOUBLE: COLLC_REDUCE(double); break;\n",
	"\tcase T_INT32: COLLC_REDUCE(int32_t); break;\n",
	"\tdefault: COLLC_REDUCE(int64_t); break;\n",
	"\t}\n",
	"}\n",
	"\n",
	"/* Elements [start, end) of chunk c: chunks of a block differ by one element at most. */\n",
	"static void collc_range(int c, size_t block, size_t *start, size_t *end)\n",
	"{\n",
	"\tsize_t b = (size_t)chunk_block[c], k = (size_t)chunk_piece[c];\n",
	"\t*start = b * block + k * block / CHUNKS_PER_BLOCK;\n",
	"\t*end = b * block + (k + 1) * block / CHUNKS_PER_BLOCK;\n",
	"}\n",
	"\n",
	"/* A send of one run leaves from the buffer, a copy of one run that is alone\n",
	" * lands in it; everything else goes through the scratch space. */\n",
	"static int collc_direct(const collc_op *o) { return o->run && (o->kind == 0 || (o->kind == 2 && o->alone)); }\n",
	"\n",
	"/* The bytes op o moves. */\n",
	"static size_t collc_bytes(const collc_plan *pl, const collc_op *o, size_t block, size_t esize)\n",
	"{\n",
	"\tsize_t bytes = 0, s, e;\n",
	"\tfor (int c = 0; c < o->n; c++) {\n",
	"\t\tcollc_range(pl->chunk[o->first + c], block, &s, &e);\n",
	"\t\tbytes += (e - s) * esize;\n",
	"\t}\n",
	"\treturn bytes;\n",
	"}\n",
	"\n",
	"/* Reduces or copies a received message (at data) into the buffer. */\n",
	"static void collc_deliver(const collc_plan *pl, const collc_op *o, char *work, const char *data,\n",
	"                          size_t block, size_t esize, int type, int op)\n",
	"{\n",
	"\tsize_t s, e;\n",
	"\tfor (int c = 0; c < o->n && !collc_direct(o); c++) {\n",
	"\t\tcollc_range(pl->chunk[o->first + c], block, &s, &e);\n",
	"\t\tif (o->kind == 1)\n",
	"\t\t\tcollc_reduce(work + s * esize, data, e - s, type, op);\n",
	"\t\telse\n",
	"\t\t\tmemcpy(work + s * esize, data, (e - s) * esize);\n",
	"\t\tdata += (e - s) * esize;\n",
	"\t}\n",
	"}\n",
	"\n",
	"/* Runs the plan on work (NBLOCK blocks of `block` elements). A round reads\n",
	" * what the rank held when it began: a receive that is alone in its round\n",
	" * lands in the buffer or is reduced into it as soon as it arrives; the\n",
	" * others land apart and are applied in order once the round is done. */\n",
	"static int collc_run(int me, void *work, size_t block, size_t esize, int type, int op,\n",
	"                     MPI_Comm comm)\n",
	"{\n",
	"\tstatic collc_plan plan;\n",
	"\tstatic int planned_for = -1;\n",
	"\t/* kept from call to call: a fresh large allocation costs a page fault\n",
	"\t * per page on every call */\n",
	"\tstatic char *space;\n",
	"\tstatic size_t cap;\n",
	"\tif (planned_for != me) {\n",
	"\t\tif (collc_make_plan(me, &plan) != 0)\n",
	"\t\t\treturn MPI_ERR_NO_MEM;\n",
	"\t\tplanned_for = me;\n",
	"\t}\n",
	"\tint rc = MPI_SUCCESS;\n",
	"\tMPI_Request *req = malloc((size_t)(plan.nop + 1) * sizeof *req);\n",
	"\tsize_t *at = malloc((size_t)(plan.nop + 1) * sizeof *at);\n",
	"\tint *arrived = malloc((size_t)(plan.nop + 1) * sizeof *arrived);\n",
	"\tif (!req || !at || !arrived) {\n",
	"\t\tfree(req);\n",
	"\t\tfree(at);\n",
	"\t\tfree(arrived);\n",
	"\t\treturn MPI_ERR_NO_MEM;\n",
	"\t}\n",
	"\tfor (int i = 0; i < plan.nop && rc == MPI_SUCCESS;) {\n",
	"\t\tint j = i;\n",
	"\t\twhile (j < plan.nop && plan.op[j].round == plan.op[i].round)\n",
	"\t\t\tj++;\n",
	"\t\tsize_t need = 0, s, e;\n",
	"\t\tfor (int k = i; k < j; k++) {\n",
	"\t\t\tat[k] = need;\n",
	"\t\t\tif (!collc_direct(&plan.op[k]))\n",
	"\t\t\t\tneed += collc_bytes(&plan, &plan.op[k], block, esize);\n",
	"\t\t}\n",
	"\t\tif (need > cap || !space) { /* never NULL: offsets into it stay defined */\n",
	"\t\t\tfree(space);\n",
	"\t\t\tcap = need;\n",
	"\t\t\tif (!(space = malloc(cap + 1))) {\n",
	"\t\t\t\tcap = 0;\n",
	"\t\t\t\trc = MPI_ERR_NO_MEM;\n",
	"\t\t\t\tbreak;\n",
	"\t\t\t}\n",
	"\t\t}\n",
	"\t\t/* receives first, so that the sends find them posted */\n",
	"\t\tfor (int sends = 0; sends < 2; sends++)\n",
	"\t\t\tfor (int k = i; k < j && rc == MPI_SUCCESS; k++) {\n",
	"\t\t\t\tconst collc_op *o = &plan.op[k];\n",
	"\t\t\t\tif ((o->kind == 0) != sends)\n",
	"\t\t\t\t\tcontinue;\n",
	"\t\t\t\tchar *data = space + at[k];\n",
	"\t\t\t\tsize_t bytes = collc_bytes(&plan, o, block, esize);\n",
	"\t\t\t\tif (collc_direct(o)) {\n",
	"\t\t\t\t\tcollc_range(plan.chunk[o->first], block, &s, &e);\n",
	"\t\t\t\t\tdata = (char *)work + s * esize;\n",
	"\t\t\t\t} else if (o->kind == 0) {\n",
	"\t\t\t\t\tchar *to = data;\n",
	"\t\t\t\t\tfor (int c = 0; c < o->n; c++) {\n",
	"\t\t\t\t\t\tcollc_range(plan.chunk[o->first + c], block, &s, &e);\n",
	"\t\t\t\t\t\tmemcpy(to, (char *)work + s * esize, (e - s) * esize);\n",
	"\t\t\t\t\t\tto += (e - s) * esize;\n",
	"\t\t\t\t\t}\n",
	"\t\t\t\t}\n",
	"\t\t\t\tif (bytes > INT_MAX) {\n",
	"\t\t\t\t\trc = MPI_ERR_COUNT;\n",
	"\t\t\t\t\tbreak;\n",
	"\t\t\t\t}\n",
	"\t\t\t\tif (o->kind == 0)\n",
	"\t\t\t\t\trc = MPI_Isend(data, (int)bytes, MPI_BYTE, o->peer, COLLC_TAG, comm, &req[k]);\n",
	"\t\t\t\telse\n",
	"\t\t\t\t\trc = MPI_Irecv(data, (int)bytes, MPI_BYTE, o->peer, COLLC_TAG, comm, &req[k]);\n",
	"\t\t\t}\n",
	"\t\tfor (int left = j - i, nready; rc == MPI_SUCCESS && left > 0; left -= nready) {\n",
	"\t\t\trc = MPI_Waitsome(j - i, req + i, &nready, arrived, MPI_STATUSES_IGNORE);\n",
	"\t\t\tif (rc != MPI_SUCCESS || nready == MPI_UNDEFINED)\n",
	"\t\t\t\tbreak;\n",
	"\t\t\tfor (int r = 0; r < nready; r++) {\n",
	"\t\t\t\tconst collc_op *o = &plan.op[i + arrived[r]];\n",
	"\t\t\t\tif (o->kind != 0 && o->alone)\n",
	"\t\t\t\t\tcollc_deliver(&plan, o, work, space + at[i + arrived[r]], block, esize, type, op);\n",
	"\t\t\t}\n",
	"\t\t}\n",
	"\t\tfor (int k = i; k < j && rc == MPI_SUCCESS; k++)\n",
	"\t\t\tif (plan.op[k].kind != 0 && !plan.op[k].alone)\n",
	"\t\t\t\tcollc_deliver(&plan, &plan.op[k], work, space + at[k], block, esize, type, op);\n",
	"\t\ti = j;\n",
	"\t}\n",
	"\tfree(req);\n",
	"\tfree(at);\n",
	"\tfree(arrived);\n",
	"\treturn rc;\n",
	"}\n",
	NULL,
};

static void
emit_function(const Sched *s, FILE *f)
{
	char fn[128];
	c_name(s, fn, sizeof fn);
	CollKind k = s->kind;
	fprintf(f, "\n/* %s: %s by %s on %d ranks. Returns MPI_SUCCESS, MPI_ERR_COMM when the\n"
	           " * communicator does not have %d ranks, MPI_ERR_TYPE for a datatype other than\n"
	           " * float, double, 32- and 64-bit integers, MPI_ERR_OP for an op other than\n"
	           " * MPI_SUM, MPI_PROD, MPI_MAX and MPI_MIN,%s MPI_ERR_COUNT when a message\n"
	           " * would pass INT_MAX bytes, MPI_ERR_NO_MEM. */\n",
	        fn, coll_kind_name[k], s->algorithm, s->nrank, s->nrank,
	        k == CK_BROADCAST || k == CK_REDUCE ? " MPI_ERR_ROOT for another root," : "");
	fprintf(f, "int\n%s(%s)\n{\n", fn, signature(k));
	fputs("\tint size, me, type_kind = 0, op_kind = 0;\n"
	      "\t(void)op_kind; /* the collectives without an op do not use it */\n"
	      "\tsize_t esize = 0;\n"
	      "\tMPI_Comm_size(comm, &size);\n"
	      "\tMPI_Comm_rank(comm, &me);\n"
	      "\tif (size != NRANK)\n"
	      "\t\treturn MPI_ERR_COMM;\n", f);
	switch (k) {
	case CK_ALLREDUCE:
	case CK_REDUCE:
		if (k == CK_REDUCE)
			fputs("\tif (root != ROOT)\n\t\treturn MPI_ERR_ROOT;\n", f);
		fputs("\tint rc = collc_type(type, &type_kind, &esize);\n"
		      "\tif (rc == MPI_SUCCESS)\n"
		      "\t\trc = collc_opkind(op, &op_kind);\n"
		      "\tif (rc != MPI_SUCCESS)\n"
		      "\t\treturn rc;\n", f);
		if (k == CK_ALLREDUCE) {
			fputs("\t/* the vector as NBLOCK blocks: block b is elements [b count / NBLOCK, ...) */\n"
			      "\tif (sendbuf != MPI_IN_PLACE)\n"
			      "\t\tmemcpy(recvbuf, sendbuf, count * esize);\n"
			      "\treturn collc_run(me, recvbuf, count, esize, type_kind, op_kind, comm);\n", f);
		} else {
			fputs("\tvoid *work = malloc(count * esize + 1);\n"
			      "\tif (!work)\n"
			      "\t\treturn MPI_ERR_NO_MEM;\n"
			      "\tmemcpy(work, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count * esize);\n"
			      "\trc = collc_run(me, work, count, esize, type_kind, op_kind, comm);\n"
			      "\tif (rc == MPI_SUCCESS && me == root)\n"
			      "\t\tmemcpy(recvbuf, work, count * esize);\n"
			      "\tfree(work);\n"
			      "\treturn rc;\n", f);
		}
		break;
	case CK_REDUCE_SCATTER:
		fputs("\tint rc = collc_type(type, &type_kind, &esize);\n"
		      "\tif (rc == MPI_SUCCESS)\n"
		      "\t\trc = collc_opkind(op, &op_kind);\n"
		      "\tif (rc != MPI_SUCCESS)\n"
		      "\t\treturn rc;\n"
		      "\t/* NRANK blocks of recvcount elements; rank r keeps block r */\n"
		      "\tvoid *work = malloc((size_t)NRANK * recvcount * esize + 1);\n"
		      "\tif (!work)\n"
		      "\t\treturn MPI_ERR_NO_MEM;\n"
		      "\tif (sendbuf == MPI_IN_PLACE)\n"
		      "\t\tmemcpy(work, recvbuf, (size_t)NRANK * recvcount * esize);\n"
		      "\telse\n"
		      "\t\tmemcpy(work, sendbuf, (size_t)NRANK * recvcount * esize);\n"
		      "\trc = collc_run(me, work, recvcount, esize, type_kind, op_kind, comm);\n"
		      "\tif (rc == MPI_SUCCESS)\n"
		      "\t\tmemcpy(recvbuf, (char *)work + (size_t)me * recvcount * esize, recvcount * esize);\n"
		      "\tfree(work);\n"
		      "\treturn rc;\n", f);
		break;
	case CK_ALLGATHER:
		fputs("\tint rc = collc_type(recvtype, &type_kind, &esize);\n"
		      "\tif (rc != MPI_SUCCESS)\n"
		      "\t\treturn rc;\n"
		      "\tif (sendbuf != MPI_IN_PLACE && (sendtype != recvtype || sendcount != recvcount))\n"
		      "\t\treturn MPI_ERR_TYPE;\n"
		      "\tif (sendbuf != MPI_IN_PLACE)\n"
		      "\t\tmemcpy((char *)recvbuf + (size_t)me * recvcount * esize, sendbuf, recvcount * esize);\n"
		      "\treturn collc_run(me, recvbuf, recvcount, esize, type_kind, 0, comm);\n", f);
		break;
	case CK_ALLTOALL:
		fputs("\tint rc = collc_type(recvtype, &type_kind, &esize);\n"
		      "\tif (rc != MPI_SUCCESS)\n"
		      "\t\treturn rc;\n"
		      "\tif (sendtype != recvtype || sendcount != recvcount)\n"
		      "\t\treturn MPI_ERR_TYPE;\n"
		      "\t/* block (s, d) of the whole exchange is slot s * NRANK + d of work */\n"
		      "\tsize_t n = recvcount * esize;\n"
		      "\tchar *work = malloc((size_t)NRANK * NRANK * n + 1);\n"
		      "\tif (!work)\n"
		      "\t\treturn MPI_ERR_NO_MEM;\n"
		      "\tmemcpy(work + (size_t)me * NRANK * n, sendbuf, (size_t)NRANK * n);\n"
		      "\trc = collc_run(me, work, recvcount, esize, type_kind, 0, comm);\n"
		      "\tfor (int s = 0; rc == MPI_SUCCESS && s < NRANK; s++)\n"
		      "\t\tmemcpy((char *)recvbuf + (size_t)s * n, work + ((size_t)s * NRANK + (size_t)me) * n, n);\n"
		      "\tfree(work);\n"
		      "\treturn rc;\n", f);
		break;
	case CK_BROADCAST:
		fputs("\tif (root != ROOT)\n"
		      "\t\treturn MPI_ERR_ROOT;\n"
		      "\tint rc = collc_type(type, &type_kind, &esize);\n"
		      "\tif (rc != MPI_SUCCESS)\n"
		      "\t\treturn rc;\n"
		      "\treturn collc_run(me, buffer, count, esize, type_kind, 0, comm);\n", f);
		break;
	default:
		break;
	}
	fputs("}\n", f);
}

/*
 * Chunk order. A message whose chunks are one run of the buffer is sent
 * from it and received into it; any other is packed and unpacked with
 * copies. Which chunk sits where is free within its block (for allreduce,
 * broadcast and reduce the whole vector is one block), so chunks are
 * ordered to make as many messages runs as possible: the chunk sets of the
 * messages, heaviest first, are kept while they stay laminar (two sets
 * nest or are disjoint), and a laminar family always has an order in which
 * each of its sets is a run (depth first through the nesting). The order
 * is kept only when it packs fewer chunks than the schedule's own.
 */

/* Past this many copies of base transfers a symmetric schedule keeps its
 * own order: gathering its messages would cost the compiler more than the
 * copies it saves. */
enum { ORDER_EXPAND_LIMIT = 1 << 21, ORDER_MAX_SETS = 4096 };

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Message chunk sets, set i is chunk[off[i] .. off[i + 1]), sorted. */
typedef struct ChunkSets {
	int n, cap;
	long *off;
	int *chunk;
	long nchunk, capchunk;
} ChunkSets;

static void
sets_add(ChunkSets *cs, const int *chunk, int n)
{
	if (cs->n + 1 >= cs->cap) {
		cs->cap = cs->cap ? 2 * cs->cap : 64;
		cs->off = xrealloc(cs->off, (size_t)cs->cap * sizeof *cs->off);
	}
	if (!cs->chunk || cs->nchunk + n > cs->capchunk) { /* never NULL: NULL + 0 is undefined */
		cs->capchunk = 2 * (cs->nchunk + n);
		cs->chunk = xrealloc(cs->chunk, (size_t)cs->capchunk * sizeof *cs->chunk);
	}
	cs->off[cs->n] = cs->nchunk;
	copy_n(cs->chunk + cs->nchunk, chunk, (size_t)n, sizeof *chunk);
	sort_n(cs->chunk + cs->nchunk, (size_t)n, sizeof *chunk, cmp_int);
	cs->nchunk += n;
	cs->off[++cs->n] = cs->nchunk;
}

/* One copy of a base transfer, as the generated program groups them. */
typedef struct Copy {
	int round, src, dst, op, chunk;
} Copy;

static int
copy_order(const void *a, const void *b)
{
	const Copy *x = a, *y = b;
	const int kx[] = {x->round, x->src, x->dst, x->op, x->chunk};
	const int ky[] = {y->round, y->src, y->dst, y->op, y->chunk};
	for (int i = 0; i < 5; i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	return 0;
}

/* The chunk sets of the program's messages; false when too many to gather. */
static bool
message_sets(const Sched *s, ChunkSets *cs)
{
	if (!s->base) {
		for (int i = 0; i < s->nmsg; i++)
			sets_add(cs, s->chunks + s->msg[i].first, s->msg[i].n);
		return true;
	}
	const Group *g = s->group;
	long n = (long)s->nbase * g->order;
	if (n > ORDER_EXPAND_LIMIT)
		return false;
	Copy *c = xmalloc((size_t)(n + 1) * sizeof *c);
	for (int i = 0; i < s->nbase; i++)
		for (int e = 0; e < g->order; e++) {
			const BaseXfer *x = &s->base[i];
			c[(long)i * g->order + e] = (Copy){x->round, s->node_rank[group_node(g, e, x->src)],
			                                   s->node_rank[group_node(g, e, x->dst)], x->op,
			                                   x->tree * g->order + e};
		}
	qsort(c, (size_t)n, sizeof *c, copy_order);
	int *buf = xmalloc((size_t)(s->nchunk + 1) * sizeof *buf);
	for (long i = 0, j; i < n; i = j) {
		int k = 0;
		for (j = i; j < n && c[j].round == c[i].round && c[j].src == c[i].src &&
		            c[j].dst == c[i].dst && c[j].op == c[i].op; j++)
			buf[k++] = c[j].chunk;
		sets_add(cs, buf, k);
	}
	free(buf), free(c);
	return true;
}

/* Chunks of sets moved in packed messages under the order pos (a chunk's
 * place in the whole buffer). */
static long
packed_chunks(const ChunkSets *cs, const int *pos)
{
	long packed = 0;
	for (int i = 0; i < cs->n; i++) {
		long n = cs->off[i + 1] - cs->off[i];
		int lo = INT_MAX, hi = INT_MIN;
		for (long k = cs->off[i]; k < cs->off[i + 1]; k++) {
			int p = pos[cs->chunk[k]];
			lo = p < lo ? p : lo;
			hi = p > hi ? p : hi;
		}
		if (n > 1 && hi - lo != n - 1)
			packed += n;
	}
	return packed;
}

/* By size, then contents: equal sets become neighbours. */
static int
set_order(const void *a, const void *b, void *ctx)
{
	const ChunkSets *cs = ctx;
	int x = *(const int *)a, y = *(const int *)b;
	long nx = cs->off[x + 1] - cs->off[x], ny = cs->off[y + 1] - cs->off[y];
	if (nx != ny)
		return nx > ny ? -1 : 1;
	int c = memcmp(cs->chunk + cs->off[x], cs->chunk + cs->off[y], (size_t)nx * sizeof(int));
	return c ? c : (x > y) - (x < y);
}

typedef struct Weighted {
	int set;
	long weight; /* chunks moved in messages with this set */
} Weighted;

static int
weight_order(const void *a, const void *b)
{
	const Weighted *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return (x->set > y->set) - (x->set < y->set);
}

/* Item of the nesting: a chunk or a kept set, under its innermost kept set. */
typedef struct Item {
	int parent; /* kept set, or -1 */
	int key;    /* smallest chunk: items in the schedule's own order */
	int set;    /* -1 for a chunk */
	int chunk;
} Item;

static int
item_order(const void *a, const void *b)
{
	const Item *x = a, *y = b;
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return (x->key > y->key) - (x->key < y->key);
}

typedef struct Nesting {
	const int *blk;
	Item *item;
	int *first; /* items under kept set k: item[first[k + 1] .. first[k + 2]) */
	int *next;  /* next free piece of each block */
	int *piece;
} Nesting;

static void
place(Nesting *ns, int parent)
{
	for (int i = ns->first[parent + 1]; i < ns->first[parent + 2]; i++) {
		const Item *it = &ns->item[i];
		if (it->set < 0)
			ns->piece[it->chunk] = ns->next[ns->blk[it->chunk]]++;
		else
			place(ns, it->set);
	}
}

/* Chooses piece[c], chunk c's place in its block blk[c]. Counts the chunks
 * that travel packed in *packed, and in the schedule's own order in *own
 * (both -1 when not counted). */
static void
order_chunks(const Sched *s, int nblock, int per, const int *blk, int *piece, long *packed,
             long *own)
{
	int nc = s->nchunk;
	int *seen = xcalloc((size_t)nblock, sizeof *seen), *pos = xmalloc((size_t)nc * sizeof *pos);
	for (int c = 0; c < nc; c++)
		piece[c] = seen[blk[c]]++;
	ChunkSets cs = {0};
	*packed = *own = -1;
	if (!message_sets(s, &cs))
		goto done;
	for (int c = 0; c < nc; c++)
		pos[c] = blk[c] * per + piece[c];
	*packed = *own = packed_chunks(&cs, pos);
	/* distinct sets of two or more chunks in one block, heaviest first */
	int *idx = xmalloc((size_t)cs.n * sizeof *idx + 1);
	for (int i = 0; i < cs.n; i++)
		idx[i] = i;
	sort_with(idx, (size_t)cs.n, sizeof *idx, set_order, &cs);
	Weighted *w = xmalloc((size_t)cs.n * sizeof *w + 1);
	int nw = 0;
	for (int i = 0, j; i < cs.n; i = j) {
		long n = cs.off[idx[i] + 1] - cs.off[idx[i]];
		for (j = i + 1; j < cs.n && cs.off[idx[j] + 1] - cs.off[idx[j]] == n &&
		                !memcmp(cs.chunk + cs.off[idx[i]], cs.chunk + cs.off[idx[j]],
		                        (size_t)n * sizeof(int)); j++)
			;
		const int *ch = cs.chunk + cs.off[idx[i]];
		bool one_block = true;
		for (long k = 1; k < n; k++)
			one_block &= blk[ch[k]] == blk[ch[0]];
		if (n > 1 && one_block)
			w[nw++] = (Weighted){idx[i], n * (j - i)};
	}
	qsort(w, (size_t)nw, sizeof *w, weight_order);
	/* keep the sets that nest with or miss every set kept before */
	int *kept = xmalloc((size_t)(nw + 1) * sizeof *kept), nkept = 0;
	int *mark = xcalloc((size_t)nc, sizeof *mark);
	for (int i = 0; i < nw && i < ORDER_MAX_SETS; i++) {
		const int *ch = cs.chunk + cs.off[w[i].set];
		long n = cs.off[w[i].set + 1] - cs.off[w[i].set];
		for (long k = 0; k < n; k++)
			mark[ch[k]] = i + 1;
		bool laminar = true;
		for (int t = 0; t < nkept && laminar; t++) {
			long m = cs.off[kept[t] + 1] - cs.off[kept[t]], common = 0;
			for (long k = cs.off[kept[t]]; k < cs.off[kept[t] + 1]; k++)
				common += mark[cs.chunk[k]] == i + 1;
			laminar = common == 0 || common == n || common == m;
		}
		if (laminar)
			kept[nkept++] = w[i].set;
	}
	/* the nesting: larger sets first, so a set's parent is already known */
	sort_with(kept, (size_t)nkept, sizeof *kept, set_order, &cs);
	int *inner = xmalloc((size_t)nc * sizeof *inner);
	for (int c = 0; c < nc; c++)
		inner[c] = -1;
	Item *item = xmalloc((size_t)(nkept + nc) * sizeof *item);
	for (int k = 0; k < nkept; k++) {
		const int *ch = cs.chunk + cs.off[kept[k]];
		long n = cs.off[kept[k] + 1] - cs.off[kept[k]];
		item[k] = (Item){inner[ch[0]], ch[0], k, -1};
		for (long i = 0; i < n; i++)
			inner[ch[i]] = k;
	}
	for (int c = 0; c < nc; c++)
		item[nkept + c] = (Item){inner[c], c, -1, c};
	qsort(item, (size_t)(nkept + nc), sizeof *item, item_order);
	int *first = xcalloc((size_t)nkept + 2, sizeof *first);
	for (int i = 0; i < nkept + nc; i++)
		first[item[i].parent + 2]++;
	for (int k = 1; k < nkept + 2; k++)
		first[k] += first[k - 1];
	int *trial = xmalloc((size_t)nc * sizeof *trial);
	memset(seen, 0, (size_t)nblock * sizeof *seen);
	Nesting ns = {blk, item, first, seen, trial};
	place(&ns, -1);
	for (int c = 0; c < nc; c++)
		pos[c] = blk[c] * per + trial[c];
	long trial_packed = packed_chunks(&cs, pos);
	if (trial_packed < *packed) {
		memcpy(piece, trial, (size_t)nc * sizeof *piece);
		*packed = trial_packed;
	}
	free(idx), free(w), free(kept), free(mark), free(inner), free(item), free(first), free(trial);
done:
	free(cs.off), free(cs.chunk), free(seen), free(pos);
}

/* Where each chunk lies: block blk[c] (NBLOCK blocks of `block` elements at
 * run time), piece piece[c] of CHUNKS_PER_BLOCK in it. A reduce-scatter or
 * allgather chunk lies in its owner's block, an alltoall chunk in its pair's. */
static void
placement(const Sched *s, int nblock, int per, int *blk, int *piece, long *packed, long *own)
{
	bool owned = s->kind == CK_REDUCE_SCATTER || s->kind == CK_ALLGATHER;
	for (int c = 0; c < s->nchunk; c++)
		blk[c] = owned ? s->owner[c] : c / per;
	order_chunks(s, nblock, per, blk, piece, packed, own);
}

static void
layout(const Sched *s, int *nblock, int *per)
{
	switch (s->kind) {
	case CK_REDUCE_SCATTER:
	case CK_ALLGATHER:
		*nblock = s->nrank;
		break;
	case CK_ALLTOALL:
		*nblock = s->nrank * s->nrank;
		break;
	default:
		*nblock = 1;
		break;
	}
	*per = s->nchunk / *nblock;
}

static const char *const with_main[] = {
	"\n",
	"/* ---- --with-main: check against MPI's own collective, time both ---- */\n",
	"\n",
	"#include <math.h>\n",
	"#include <stdio.h>\n",
	"\n",
	"static double collc_bus_factor(void) { return BUS_FACTOR; }\n",
	"\n",
	"int\n",
	"main(int argc, char **argv)\n",
	"{\n",
	"\tMPI_Init(&argc, &argv);\n",
	"\tint me, p, bad = 0;\n",
	"\tMPI_Comm_rank(MPI_COMM_WORLD, &me);\n",
	"\tMPI_Comm_size(MPI_COMM_WORLD, &p);\n",
	"\tif (p != NRANK) {\n",
	"\t\tif (me == 0)\n",
	"\t\t\tfprintf(stderr, \"this schedule runs on %d ranks, not %d\\n\", NRANK, p);\n",
	"\t\tMPI_Finalize();\n",
	"\t\treturn 2;\n",
	"\t}\n",
	"\tsize_t counts[] = {0, 1, 2, 7, 13, 61, 1024, 4099, 65537};\n",
	"\tsize_t ncount = sizeof counts / sizeof counts[0];\n",
	"\tif (argc > 1) {\n",
	"\t\tcounts[0] = (size_t)strtoull(argv[1], NULL, 10);\n",
	"\t\tncount = 1;\n",
	"\t}\n",
	"\tint iters = argc > 2 && atoi(argv[2]) > 1 ? atoi(argv[2]) : 1;\n",
	"\tfor (size_t ci = 0; ci < ncount; ci++)\n",
	"\t\tfor (int t = 0; t < 2; t++) {\n",
	"\t\t\tsize_t count = counts[ci];\n",
	"\t\t\tMPI_Datatype type = t ? MPI_FLOAT : MPI_INT32_T;\n",
	"\t\t\tsize_t n = count * WORK_FACTOR + 1;\n",
	"\t\t\tchar *in = malloc(n * 4), *out = malloc(n * 4), *ref = malloc(n * 4);\n",
	"\t\t\tsrand(1234 + me * 7 + (int)count);\n",
	"\t\t\tfor (size_t i = 0; i < n; i++) {\n",
	"\t\t\t\tif (t)\n",
	"\t\t\t\t\t((float *)in)[i] = (float)(rand() % 1000) / 100.0f;\n",
	"\t\t\t\telse\n",
	"\t\t\t\t\t((int32_t *)in)[i] = rand() % 1000 - 500;\n",
	"\t\t\t}\n",
	"\t\t\tmemset(out, 0, n * 4);\n",
	"\t\t\tmemset(ref, 0, n * 4);\n",
	"\t\t\t/* one untimed call each (plans, buffers, connections), then the two\n",
	"\t\t\t * in turn from a barrier: the slowest rank's time, best of iters */\n",
	"\t\t\tint rc = CALL_COLLC;\n",
	"\t\t\tCALL_MPI;\n",
	"\t\t\tdouble best[2] = {1e30, 1e30};\n",
	"\t\t\tfor (int k = 0; k < iters && rc == MPI_SUCCESS; k++) {\n",
	"\t\t\t\tdouble took[2];\n",
	"\t\t\t\tMPI_Barrier(MPI_COMM_WORLD);\n",
	"\t\t\t\tdouble t0 = MPI_Wtime();\n",
	"\t\t\t\trc = CALL_COLLC;\n",
	"\t\t\t\ttook[0] = MPI_Wtime() - t0;\n",
	"\t\t\t\tMPI_Barrier(MPI_COMM_WORLD);\n",
	"\t\t\t\tt0 = MPI_Wtime();\n",
	"\t\t\t\tCALL_MPI;\n",
	"\t\t\t\ttook[1] = MPI_Wtime() - t0;\n",
	"\t\t\t\tMPI_Allreduce(MPI_IN_PLACE, took, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);\n",
	"\t\t\t\tfor (int w = 0; w < 2; w++)\n",
	"\t\t\t\t\tbest[w] = took[w] < best[w] ? took[w] : best[w];\n",
	"\t\t\t}\n",
	"\t\t\tint wrong = rc != MPI_SUCCESS;\n",
	"\t\t\tfor (size_t i = 0; i < OUT_COUNT && !wrong; i++) {\n",
	"\t\t\t\tif (t) {\n",
	"\t\t\t\t\tfloat a = ((float *)out)[i], b = ((float *)ref)[i];\n",
	"\t\t\t\t\twrong = fabsf(a - b) > 1e-4f * (fabsf(b) + 1.0f) * (float)NRANK;\n",
	"\t\t\t\t} else {\n",
	"\t\t\t\t\twrong = ((int32_t *)out)[i] != ((int32_t *)ref)[i];\n",
	"\t\t\t\t}\n",
	"\t\t\t}\n",
	"\t\t\tint any;\n",
	"\t\t\tMPI_Allreduce(&wrong, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);\n",
	"\t\t\tbad |= any;\n",
	"\t\t\tif (me == 0) {\n",
	"\t\t\t\tdouble bytes = (double)count * 4, tc = best[0], tm = best[1];\n",
	"\t\t\t\tprintf(\"%-6s count %9zu  collc %10.6f s %8.3f GB/s   MPI %10.6f s %8.3f GB/s  %s\\n\",\n",
	"\t\t\t\t       t ? \"float\" : \"int32\", count, tc, tc > 0 ? bytes * collc_bus_factor() / tc / 1e9 : 0,\n",
	"\t\t\t\t       tm, tm > 0 ? bytes * collc_bus_factor() / tm / 1e9 : 0, any ? \"WRONG\" : \"ok\");\n",
	"\t\t\t}\n",
	"\t\t\tfree(in);\n",
	"\t\t\tfree(out);\n",
	"\t\t\tfree(ref);\n",
	"\t\t}\n",
	"\tMPI_Finalize();\n",
	"\treturn bad ? 1 : 0;\n",
	"}\n",
	NULL,
};

/* What main calls for each kind, and how much of the output it compares. */
static void
main_calls(const Sched *s, FILE *f)
{
	char fn[128];
	c_name(s, fn, sizeof fn);
	double p = s->nrank;
	switch (s->kind) {
	case CK_ALLREDUCE:
		fprintf(f, "#define CALL_COLLC %s(in, out, count, type, MPI_SUM, MPI_COMM_WORLD)\n", fn);
		fputs("#define CALL_MPI MPI_Allreduce(in, ref, (int)count, type, MPI_SUM, MPI_COMM_WORLD)\n"
		      "#define OUT_COUNT count\n#define WORK_FACTOR 1\n", f);
		fprintf(f, "#define BUS_FACTOR %.17g\n", 2 * (p - 1) / p);
		break;
	case CK_REDUCE_SCATTER:
		fprintf(f, "#define CALL_COLLC %s(in, out, count, type, MPI_SUM, MPI_COMM_WORLD)\n", fn);
		fputs("#define CALL_MPI MPI_Reduce_scatter_block(in, ref, (int)count, type, MPI_SUM, "
		      "MPI_COMM_WORLD)\n#define OUT_COUNT count\n#define WORK_FACTOR NRANK\n", f);
		fprintf(f, "#define BUS_FACTOR %.17g\n", (p - 1) / p * p);
		break;
	case CK_ALLGATHER:
		fprintf(f, "#define CALL_COLLC %s(in, count, type, out, count, type, MPI_COMM_WORLD)\n", fn);
		fputs("#define CALL_MPI MPI_Allgather(in, (int)count, type, ref, (int)count, type, "
		      "MPI_COMM_WORLD)\n#define OUT_COUNT (count * NRANK)\n#define WORK_FACTOR NRANK\n", f);
		fprintf(f, "#define BUS_FACTOR %.17g\n", (p - 1) / p * p);
		break;
	case CK_ALLTOALL:
		fprintf(f, "#define CALL_COLLC %s(in, count, type, out, count, type, MPI_COMM_WORLD)\n", fn);
		fputs("#define CALL_MPI MPI_Alltoall(in, (int)count, type, ref, (int)count, type, "
		      "MPI_COMM_WORLD)\n#define OUT_COUNT (count * NRANK)\n#define WORK_FACTOR NRANK\n", f);
		fprintf(f, "#define BUS_FACTOR %.17g\n", (p - 1) / p * p);
		break;
	case CK_BROADCAST:
		fprintf(f, "#define CALL_COLLC (memcpy(out, in, count * 4), %s(out, count, type, ROOT, "
		           "MPI_COMM_WORLD))\n", fn);
		fputs("#define CALL_MPI (memcpy(ref, in, count * 4), MPI_Bcast(ref, (int)count, type, ROOT, "
		      "MPI_COMM_WORLD))\n#define OUT_COUNT count\n#define WORK_FACTOR 1\n", f);
		fputs("#define BUS_FACTOR 1\n", f);
		break;
	case CK_REDUCE:
		fprintf(f, "#define CALL_COLLC %s(in, out, count, type, MPI_SUM, ROOT, MPI_COMM_WORLD)\n",
		        fn);
		fputs("#define CALL_MPI MPI_Reduce(in, ref, (int)count, type, MPI_SUM, ROOT, "
		      "MPI_COMM_WORLD)\n#define OUT_COUNT (me == ROOT ? count : 0)\n#define WORK_FACTOR 1\n",
		      f);
		fputs("#define BUS_FACTOR 1\n", f);
		break;
	default:
		break;
	}
}

static int
emit_mpi(const Prog *p, const BuildOpts *o, FILE *f)
{
	const Sched *sel[2];
	int n = backend_select(p, o, sel, 2);
	if (n == 0) {
		error_file("no schedule to write: the file builds none%s", o->collective ? " by that name" : "");
		return -1;
	}
	if (n > 1) {
		error_file("the MPI target writes one collective per file: choose one with --collective");
		return -1;
	}
	const Sched *s = sel[0];
	int nblock, per;
	layout(s, &nblock, &per);
	int *blk = xmalloc((size_t)s->nchunk * sizeof *blk), *piece = xmalloc((size_t)s->nchunk * sizeof *piece);
	int *pos = xmalloc((size_t)s->nchunk * sizeof *pos);
	long packed, own;
	placement(s, nblock, per, blk, piece, &packed, &own);
	for (int c = 0; c < s->nchunk; c++)
		pos[c] = blk[c] * per + piece[c];
	fprintf(f, "/*\n * %s: %s by %s, %d ranks, %d chunks, %d rounds.\n"
	           " * Generated by collc from a verified schedule; the function below runs it\n"
	           " * over MPI (see collc's docs/mpi.md). Compile with mpicc -std=c11.\n */\n",
	        s->name, coll_kind_name[s->kind], s->algorithm, s->nrank, s->nchunk, s->nround);
	fputs("#include <limits.h>\n#include <mpi.h>\n#include <stdint.h>\n#include <stdlib.h>\n"
	      "#include <string.h>\n\n", f);
	fprintf(f, "enum { NRANK = %d, NCHUNK = %d, NBLOCK = %d, CHUNKS_PER_BLOCK = %d, ROOT = %d, "
	           "COLLC_TAG = 0x5c0 };\n", s->nrank, s->nchunk, nblock, per, s->root);
	if (packed >= 0)
		fprintf(f, "/* chunk order: %ld chunks travel in messages that are not one run of the "
		           "buffer (packed), %ld in the schedule's own order */\n", packed, own);
	else
		fputs("/* chunk order: the schedule's own (too many messages to reorder) */\n", f);
	if (s->base)
		symmetric_tables(s, f);
	else
		explicit_tables(s, pos, f);
	table(f, "static const int chunk_block", blk, s->nchunk);
	table(f, "static const int chunk_piece", piece, s->nchunk);
	free(blk), free(piece), free(pos);
	for (int i = 0; interpreter[i]; i++)
		fputs(interpreter[i], f);
	emit_function(s, f);
	if (o->with_main) {
		fputs("\n", f);
		main_calls(s, f);
		for (int i = 0; with_main[i]; i++)
			fputs(with_main[i], f);
	}
	return 0;
}

const Backend mpi_backend = {"mpi", ".c", emit_mpi};
