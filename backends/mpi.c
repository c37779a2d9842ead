/*
 * mpi.c: a schedule as a standalone C program for MPI. One collective per
 * file (--collective NAME when the file has several): a function with the
 * shape of the matching MPI collective that runs the verified schedule
 * round by round with nonblocking sends and receives, packing a message's
 * chunks into one buffer, and reducing with the caller's MPI_Op.
 *
 * An explicit schedule is emitted as per-rank tables of operations; a
 * symmetric one as its base transfers and group, from which each rank
 * derives its own operations once (the 64x64 SP schedule stays a few
 * hundred kilobytes of C). The interpreter is the same text for every
 * schedule (emitted from `interpreter` below). --with-main adds a main that
 * checks the function against MPI's own collective and times both.
 */
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

/* Explicit schedules: each rank's operations in round order. */
static void
explicit_tables(const Sched *s, FILE *f)
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
				memcpy(chunks + used, s->chunks + m->first, (size_t)m->n * sizeof *chunks);
				used += m->n;
			}
		}
	fputs("\n/* each rank's operations, in round order: round, peer, kind (0 send, 1 receive\n"
	      " * and reduce, 2 receive and copy), first and count in op_chunks */\n", f);
	fputs("#define COLLC_SYMMETRIC 0\n", f);
	table(f, "static const int op_start", start, p + 1);
	table(f, "static const int op_table", ops, nop * 5);
	table(f, "static const int op_chunks", chunks, used);
	free(start), free(ops), free(chunks), free(fill);
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
	"typedef struct { int round, peer, kind, first, n; } collc_op;\n",
	"typedef struct { int nop; collc_op *op; int *chunk; int maxbytes_chunks; } collc_plan;\n",
	"\n",
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
	"static int collc_op_order(const void *a, const void *b)\n",
	"{\n",
	"\tconst collc_op *x = a, *y = b;\n",
	"\tif (x->round != y->round)\n",
	"\t\treturn x->round < y->round ? -1 : 1;\n",
	"\tif (x->kind != y->kind)\n",
	"\t\treturn (x->kind == 0) - (y->kind == 0); /* receives and sends apart */\n",
	"\tif (x->peer != y->peer)\n",
	"\t\treturn x->peer < y->peer ? -1 : 1;\n",
	"\treturn x->first < y->first ? -1 : x->first > y->first;\n",
	"}\n",
	"#endif\n",
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
	"\t\t\t\top[n] = (collc_op){b[0], collc_rank_of(side ? src : dst), side ? b[4] : 0, n, 1};\n",
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
	"\t\t    op[m - 1].kind == op[i].kind) {\n",
	"\t\t\top[m - 1].n++;\n",
	"\t\t} else {\n",
	"\t\t\top[m] = op[i];\n",
	"\t\t\top[m].first = i;\n",
	"\t\t\tm++;\n",
	"\t\t}\n",
	"\t}\n",
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
	"\t\tpl->op[i] = (collc_op){o[0], o[1], o[2], o[3], o[4]};\n",
	"\t}\n",
	"\tpl->nop = n;\n",
	"\tpl->chunk = (int *)op_chunks;\n",
	"#endif\n",
	"\treturn 0;\n",
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
	"/* The chunks of op o as one range of elements, if they are one. */\n",
	"static int collc_contiguous(const collc_plan *pl, const collc_op *o, size_t block, size_t *s, size_t *e)\n",
	"{\n",
	"\tsize_t a, b;\n",
	"\tcollc_range(pl->chunk[o->first], block, s, e);\n",
	"\tfor (int c = 1; c < o->n; c++) {\n",
	"\t\tcollc_range(pl->chunk[o->first + c], block, &a, &b);\n",
	"\t\tif (a != *e)\n",
	"\t\t\treturn 0;\n",
	"\t\t*e = b;\n",
	"\t}\n",
	"\treturn 1;\n",
	"}\n",
	"\n",
	"/* Runs the plan on work (NBLOCK blocks of `block` elements). A round reads\n",
	" * what the rank held when it began: sends go out from the work buffer (or a\n",
	" * packed copy), receives land apart and are applied after the round. */\n",
	"static int collc_run(int me, void *work, size_t block, size_t esize, int type, int op,\n",
	"                     MPI_Comm comm)\n",
	"{\n",
	"\tstatic collc_plan plan;\n",
	"\tstatic int planned_for = -1;\n",
	"\tif (planned_for != me) {\n",
	"\t\tif (collc_make_plan(me, &plan) != 0)\n",
	"\t\t\treturn MPI_ERR_NO_MEM;\n",
	"\t\tplanned_for = me;\n",
	"\t}\n",
	"\tint rc = MPI_SUCCESS;\n",
	"\tMPI_Request *req = malloc((size_t)(plan.nop + 1) * sizeof *req);\n",
	"\tsize_t *at = malloc((size_t)(plan.nop + 1) * sizeof *at);\n",
	"\tchar *space = NULL;\n",
	"\tsize_t cap = 0;\n",
	"\tif (!req || !at) {\n",
	"\t\tfree(req);\n",
	"\t\tfree(at);\n",
	"\t\treturn MPI_ERR_NO_MEM;\n",
	"\t}\n",
	"\tfor (int i = 0; i < plan.nop && rc == MPI_SUCCESS;) {\n",
	"\t\tint j = i;\n",
	"\t\twhile (j < plan.nop && plan.op[j].round == plan.op[i].round)\n",
	"\t\t\tj++;\n",
	"\t\t/* room for every receive and every send that must be packed */\n",
	"\t\tsize_t need = 0, s, e;\n",
	"\t\tfor (int k = i; k < j; k++) {\n",
	"\t\t\tconst collc_op *o = &plan.op[k];\n",
	"\t\t\tat[k] = need;\n",
	"\t\t\tif (o->kind == 0 && collc_contiguous(&plan, o, block, &s, &e))\n",
	"\t\t\t\tcontinue;\n",
	"\t\t\tfor (int c = 0; c < o->n; c++) {\n",
	"\t\t\t\tcollc_range(plan.chunk[o->first + c], block, &s, &e);\n",
	"\t\t\t\tneed += (e - s) * esize;\n",
	"\t\t\t}\n",
	"\t\t}\n",
	"\t\tif (need > cap) {\n",
	"\t\t\tfree(space);\n",
	"\t\t\tcap = need;\n",
	"\t\t\tif (!(space = malloc(cap))) {\n",
	"\t\t\t\trc = MPI_ERR_NO_MEM;\n",
	"\t\t\t\tbreak;\n",
	"\t\t\t}\n",
	"\t\t}\n",
	"\t\tfor (int k = i; k < j && rc == MPI_SUCCESS; k++) {\n",
	"\t\t\tconst collc_op *o = &plan.op[k];\n",
	"\t\t\tchar *data = space + at[k];\n",
	"\t\t\tsize_t bytes = 0;\n",
	"\t\t\tif (o->kind == 0 && collc_contiguous(&plan, o, block, &s, &e)) {\n",
	"\t\t\t\tdata = (char *)work + s * esize;\n",
	"\t\t\t\tbytes = (e - s) * esize;\n",
	"\t\t\t} else {\n",
	"\t\t\t\tfor (int c = 0; c < o->n; c++) {\n",
	"\t\t\t\t\tcollc_range(plan.chunk[o->first + c], block, &s, &e);\n",
	"\t\t\t\t\tif (o->kind == 0)\n",
	"\t\t\t\t\t\tmemcpy(data + bytes, (char *)work + s * esize, (e - s) * esize);\n",
	"\t\t\t\t\tbytes += (e - s) * esize;\n",
	"\t\t\t\t}\n",
	"\t\t\t}\n",
	"\t\t\tif (bytes > INT_MAX) {\n",
	"\t\t\t\trc = MPI_ERR_COUNT;\n",
	"\t\t\t\tbreak;\n",
	"\t\t\t}\n",
	"\t\t\tif (o->kind == 0)\n",
	"\t\t\t\trc = MPI_Isend(data, (int)bytes, MPI_BYTE, o->peer, COLLC_TAG, comm, &req[k]);\n",
	"\t\t\telse\n",
	"\t\t\t\trc = MPI_Irecv(data, (int)bytes, MPI_BYTE, o->peer, COLLC_TAG, comm, &req[k]);\n",
	"\t\t}\n",
	"\t\tif (rc == MPI_SUCCESS)\n",
	"\t\t\trc = MPI_Waitall(j - i, req + i, MPI_STATUSES_IGNORE);\n",
	"\t\tfor (int k = i; k < j && rc == MPI_SUCCESS; k++) {\n",
	"\t\t\tconst collc_op *o = &plan.op[k];\n",
	"\t\t\tsize_t off = at[k];\n",
	"\t\t\tfor (int c = 0; o->kind != 0 && c < o->n; c++) {\n",
	"\t\t\t\tcollc_range(plan.chunk[o->first + c], block, &s, &e);\n",
	"\t\t\t\tif (o->kind == 1)\n",
	"\t\t\t\t\tcollc_reduce((char *)work + s * esize, space + off, e - s, type, op);\n",
	"\t\t\t\telse\n",
	"\t\t\t\t\tmemcpy((char *)work + s * esize, space + off, (e - s) * esize);\n",
	"\t\t\t\toff += (e - s) * esize;\n",
	"\t\t\t}\n",
	"\t\t}\n",
	"\t\ti = j;\n",
	"\t}\n",
	"\tfree(req);\n",
	"\tfree(at);\n",
	"\tfree(space);\n",
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

/* Where each chunk lies: block chunk_block[c] (NBLOCK blocks of `block`
 * elements at run time), piece chunk_piece[c] of CHUNKS_PER_BLOCK in it. A
 * reduce-scatter or allgather chunk lies in its owner's block. */
static void
placement(const Sched *s, int nblock, int per, FILE *f)
{
	int *blk = xmalloc((size_t)s->nchunk * sizeof *blk), *piece = xmalloc((size_t)s->nchunk * sizeof *piece);
	int *seen = xcalloc((size_t)nblock, sizeof *seen);
	bool owned = s->kind == CK_REDUCE_SCATTER || s->kind == CK_ALLGATHER;
	for (int c = 0; c < s->nchunk; c++) {
		blk[c] = owned ? s->owner[c] : c / per;
		piece[c] = seen[blk[c]]++;
	}
	table(f, "static const int chunk_block", blk, s->nchunk);
	table(f, "static const int chunk_piece", piece, s->nchunk);
	free(blk), free(piece), free(seen);
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
	"\tint iters = argc > 2 ? atoi(argv[2]) : 1;\n",
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
	"\t\t\tdouble t0 = MPI_Wtime();\n",
	"\t\t\tint rc = MPI_SUCCESS;\n",
	"\t\t\tfor (int k = 0; k < iters && rc == MPI_SUCCESS; k++)\n",
	"\t\t\t\trc = CALL_COLLC;\n",
	"\t\t\tdouble t1 = MPI_Wtime();\n",
	"\t\t\tfor (int k = 0; k < iters; k++)\n",
	"\t\t\t\tCALL_MPI;\n",
	"\t\t\tdouble t2 = MPI_Wtime();\n",
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
	"\t\t\t\tdouble bytes = (double)count * 4, tc = (t1 - t0) / iters, tm = (t2 - t1) / iters;\n",
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
	fprintf(f, "/*\n * %s: %s by %s, %d ranks, %d chunks, %d rounds.\n"
	           " * Generated by collc from a verified schedule; the function below runs it\n"
	           " * over MPI (see collc's docs/mpi.md). Compile with mpicc -std=c11.\n */\n",
	        s->name, coll_kind_name[s->kind], s->algorithm, s->nrank, s->nchunk, s->nround);
	fputs("#include <limits.h>\n#include <mpi.h>\n#include <stdint.h>\n#include <stdlib.h>\n"
	      "#include <string.h>\n\n", f);
	fprintf(f, "enum { NRANK = %d, NCHUNK = %d, NBLOCK = %d, CHUNKS_PER_BLOCK = %d, ROOT = %d, "
	           "COLLC_TAG = 0x5c0 };\n", s->nrank, s->nchunk, nblock, per, s->root);
	if (s->base)
		symmetric_tables(s, f);
	else
		explicit_tables(s, f);
	placement(s, nblock, per, f);
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
