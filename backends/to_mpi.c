/*
 * to_mpi.c: a schedule as a standalone C program for MPI. One collective per
 * file (--collective NAME when the file has several): a function with the
 * shape of the matching MPI collective that runs the verified schedule
 * round by round with nonblocking sends and receives, reducing with the
 * caller's MPI_Op. Chunks lie where the shared layout (ir/layout.c) puts
 * them, so that messages are runs of the buffer where the schedule allows;
 * the others move with an indexed datatype, so nothing is packed.
 *
 * An explicit schedule is emitted as per-rank tables of operations; a
 * symmetric one as its base transfers, its group and each element's
 * inverse, from which each rank derives its own operations once, visiting
 * only the copies that touch it (the 64x64 SP schedule stays under a
 * megabyte of C). The interpreter is the same text for every
 * schedule (emitted from `interpreter` below). --with-main adds a main that
 * checks the function against MPI's own collective and times both.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_lib.h"

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
const char *
mpi_signature(CollKind k)
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
	/* each rank finds the copies that touch it through the inverses (g^-1(its node)) */
	int *inv = group_inverses(g);
	fputs("/* the index of each element's inverse */\n", f);
	table(f, "static const int inverse", inv, g->order);
	free(inv);
}

/* The MPI runtime and main (backends/mpi/runtime.c and main.c) are
 * embedded at build time; what lies between their markers goes into the
 * program (mpi_lib.h). */
const char *
mpi_part(const char *text, const char *from, const char *to, size_t *len)
{
	const char *a = strstr(text, from), *b = to && a ? strstr(a, to) : NULL;
	while (a && a > text && a[-1] != '\n')
		a--;
	while (b && b > text && b[-1] != '\n')
		b--;
	if (!a)
		die("the embedded MPI runtime has no '%s' line", from);
	*len = b ? (size_t)(b - a) : strlen(a);
	return a;
}

void
mpi_write_part(FILE *f, const char *text, const char *from, const char *to)
{
	size_t len;
	const char *a = mpi_part(text, from, to, &len);
	fputc('\n', f);
	fwrite(a, 1, len, f);
}

void
mpi_write_function(const Sched *s, const char *fn, const char *storage, FILE *f)
{
	CollKind k = s->kind;
	bool moves = k == CK_ALLGATHER || k == CK_ALLTOALL || k == CK_BROADCAST;
	fprintf(f, "\n/* %s: %s by %s on %d ranks, on a duplicate of the communicator (made\n"
	           " * on the first call on it). Returns MPI_SUCCESS, MPI_ERR_COMM when the\n"
	           " * communicator does not have %d ranks, MPI_ERR_TYPE for a datatype other than\n"
	           " * %s,%s MPI_ERR_COUNT when a message\n"
	           " * would pass INT_MAX bytes, MPI_ERR_OTHER once MPI_Finalize has begun,\n"
	           " * MPI_ERR_NO_MEM. */\n",
	        fn, coll_kind_name[k], s->algorithm, s->nrank, s->nrank,
	        moves ? "a predefined contiguous one (moved as bytes)"
	              : "float, double, 32- and 64-bit integers, MPI_ERR_OP for an op other than\n"
	                " * MPI_SUM, MPI_PROD, MPI_MAX and MPI_MIN",
	        k == CK_BROADCAST || k == CK_REDUCE ? " MPI_ERR_ROOT for another root," : "");
	fprintf(f, "%sint\n%s(%s)\n{\n", storage, fn, mpi_signature(k));
	fputs("\tint size, me, type_kind = 0, op_kind = 0;\n"
	      "\t(void)op_kind; /* the collectives without an op do not use it */\n"
	      "\tsize_t esize = 0;\n"
	      "\tMPI_Comm_size(comm, &size);\n"
	      "\tMPI_Comm_rank(comm, &me);\n"
	      "\tif (size != NRANK)\n"
	      "\t\treturn MPI_ERR_COMM;\n"
	      "\t/* the schedule runs on comm's own duplicate: its messages never meet the caller's */\n"
	      "\tint rc = collc_lib_own(comm, NRANK, &comm);\n"
	      "\tif (rc != MPI_SUCCESS)\n"
	      "\t\treturn rc;\n", f);
	switch (k) {
	case CK_ALLREDUCE:
	case CK_REDUCE:
		if (k == CK_REDUCE)
			fputs("\tif (root != ROOT)\n\t\treturn MPI_ERR_ROOT;\n", f);
		fputs("\trc = collc_type(type, &type_kind, &esize);\n"
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
		fputs("\trc = collc_type(type, &type_kind, &esize);\n"
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
		fputs("\trc = collc_bytes_type(recvtype, &esize); /* moved as bytes */\n"
		      "\tif (rc != MPI_SUCCESS)\n"
		      "\t\treturn rc;\n"
		      "\tif (sendbuf != MPI_IN_PLACE && (sendtype != recvtype || sendcount != recvcount))\n"
		      "\t\treturn MPI_ERR_TYPE;\n"
		      "\tif (sendbuf != MPI_IN_PLACE)\n"
		      "\t\tmemcpy((char *)recvbuf + (size_t)me * recvcount * esize, sendbuf, recvcount * esize);\n"
		      "\treturn collc_run(me, recvbuf, recvcount, esize, type_kind, 0, comm);\n", f);
		break;
	case CK_ALLTOALL:
		fputs("\trc = collc_bytes_type(recvtype, &esize); /* moved as bytes */\n"
		      "\tif (rc != MPI_SUCCESS)\n"
		      "\t\treturn rc;\n"
		      "\tif (sendbuf != MPI_IN_PLACE && (sendtype != recvtype || sendcount != recvcount))\n"
		      "\t\treturn MPI_ERR_TYPE;\n"
		      "\t/* block (s, d) of the whole exchange is slot s * NRANK + d of work */\n"
		      "\tsize_t n = recvcount * esize;\n"
		      "\tchar *work = malloc((size_t)NRANK * NRANK * n + 1);\n"
		      "\tif (!work)\n"
		      "\t\treturn MPI_ERR_NO_MEM;\n"
		      "\tmemcpy(work + (size_t)me * NRANK * n, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf,\n"
		      "\t       (size_t)NRANK * n);\n"
		      "\trc = collc_run(me, work, recvcount, esize, type_kind, 0, comm);\n"
		      "\tfor (int s = 0; rc == MPI_SUCCESS && s < NRANK; s++)\n"
		      "\t\tmemcpy((char *)recvbuf + (size_t)s * n, work + ((size_t)s * NRANK + (size_t)me) * n, n);\n"
		      "\tfree(work);\n"
		      "\treturn rc;\n", f);
		break;
	case CK_BROADCAST:
		fputs("\tif (root != ROOT)\n"
		      "\t\treturn MPI_ERR_ROOT;\n"
		      "\trc = collc_bytes_type(type, &esize); /* moved as bytes */\n"
		      "\tif (rc != MPI_SUCCESS)\n"
		      "\t\treturn rc;\n"
		      "\treturn collc_run(me, buffer, count, esize, type_kind, 0, comm);\n", f);
		break;
	default:
		break;
	}
	fputs("}\n", f);
}

/* What main calls for each kind, how much of the output it compares, and
 * nccl-tests' size and busbw factors (busbw = algbw x BUS_FACTOR). */
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
		fprintf(f, "#define SIZE_FACTOR 1\n#define REDOP \"sum\"\n#define BUS_FACTOR %.17g\n",
		        2 * (p - 1) / p);
		break;
	case CK_REDUCE_SCATTER:
		fprintf(f, "#define CALL_COLLC %s(in, out, count, type, MPI_SUM, MPI_COMM_WORLD)\n", fn);
		fputs("#define CALL_MPI MPI_Reduce_scatter_block(in, ref, (int)count, type, MPI_SUM, "
		      "MPI_COMM_WORLD)\n#define OUT_COUNT count\n#define WORK_FACTOR NRANK\n", f);
		fprintf(f, "#define SIZE_FACTOR NRANK\n#define REDOP \"sum\"\n#define BUS_FACTOR %.17g\n",
		        (p - 1) / p);
		break;
	case CK_ALLGATHER:
		fprintf(f, "#define CALL_COLLC %s(in, count, type, out, count, type, MPI_COMM_WORLD)\n", fn);
		fputs("#define CALL_MPI MPI_Allgather(in, (int)count, type, ref, (int)count, type, "
		      "MPI_COMM_WORLD)\n#define OUT_COUNT (count * NRANK)\n#define WORK_FACTOR NRANK\n", f);
		fprintf(f, "#define SIZE_FACTOR NRANK\n#define REDOP \"none\"\n#define BUS_FACTOR %.17g\n",
		        (p - 1) / p);
		break;
	case CK_ALLTOALL:
		fprintf(f, "#define CALL_COLLC %s(in, count, type, out, count, type, MPI_COMM_WORLD)\n", fn);
		fputs("#define CALL_MPI MPI_Alltoall(in, (int)count, type, ref, (int)count, type, "
		      "MPI_COMM_WORLD)\n#define OUT_COUNT (count * NRANK)\n#define WORK_FACTOR NRANK\n", f);
		fprintf(f, "#define SIZE_FACTOR NRANK\n#define REDOP \"none\"\n#define BUS_FACTOR %.17g\n",
		        (p - 1) / p);
		break;
	case CK_BROADCAST:
		fprintf(f, "#define CALL_COLLC (memcpy(out, in, count * 4), %s(out, count, type, ROOT, "
		           "MPI_COMM_WORLD))\n", fn);
		fputs("#define CALL_MPI (memcpy(ref, in, count * 4), MPI_Bcast(ref, (int)count, type, ROOT, "
		      "MPI_COMM_WORLD))\n#define OUT_COUNT count\n#define WORK_FACTOR 1\n", f);
		fputs("#define SIZE_FACTOR 1\n#define REDOP \"none\"\n#define BUS_FACTOR 1\n", f);
		break;
	case CK_REDUCE:
		fprintf(f, "#define CALL_COLLC %s(in, out, count, type, MPI_SUM, ROOT, MPI_COMM_WORLD)\n",
		        fn);
		fputs("#define CALL_MPI MPI_Reduce(in, ref, (int)count, type, MPI_SUM, ROOT, "
		      "MPI_COMM_WORLD)\n#define OUT_COUNT (me == ROOT ? count : 0)\n#define WORK_FACTOR 1\n",
		      f);
		fputs("#define SIZE_FACTOR 1\n#define REDOP \"sum\"\n#define BUS_FACTOR 1\n", f);
		break;
	default:
		break;
	}
}

/* A schedule on an optical ring that rewires its circuits: the rounds
 * before which the runtime's barrier makes every rank wait, as every link
 * does while the switch is rewired (docs/mpi.md). */
static void
emit_rewire(const Sched *s, FILE *f)
{
	int nrec = sched_nreconfig(s);
	if (!nrec)
		return;
	fprintf(f, "\n/* the rounds before which the optical switch is rewired */\n"
	           "#define COLLC_REWIRE 1\nenum { NREWIRE = %d };\n"
	           "static const int collc_rewire[NREWIRE] = {", nrec);
	for (int i = 0, k = 0; i < s->nphase; i++)
		if (s->phase[i].reconfig)
			fprintf(f, "%s%d", k++ ? ", " : "", s->phase[i].round);
	fputs("};\n", f);
}

static int
emit_mpi(Diag *dg, const Prog *p, const BuildOpts *o, FILE *f)
{
	const Sched *sel[2];
	int n = backend_select(p, o, sel, 2);
	if (n == 0) {
		error_file(dg, "no schedule to write: the file builds none%s", o->collective ? " by that name" : "");
		return -1;
	}
	if (n > 1) {
		error_file(dg, "the MPI target writes one collective per file: choose one with --collective");
		return -1;
	}
	const Sched *s = sel[0];
	if (backend_refuse_in_network(dg, s, "the MPI target") != 0)
		return -1;
	char fn[128];
	if (mpi_name_taken(c_name(s, fn, sizeof fn))) {
		error_at(dg, s->loc, "'%s' would be the function %s, a name of the MPI runtime's: rename "
		         "the collective", s->name, fn);
		return -1;
	}
	fprintf(f, "/*\n * %s: %s by %s, %d ranks, %d chunks, %d rounds.\n"
	           " * Generated by collc from a verified schedule; the function below runs it\n"
	           " * over MPI (see collc's docs/mpi.md). Compile with mpicc -std=c11.\n */\n",
	        s->name, coll_kind_name[s->kind], s->algorithm, s->nrank, s->nchunk, s->nround);
	fputs("#include <limits.h>\n#include <mpi.h>\n#include <stdint.h>\n#include <stdlib.h>\n"
	      "#include <string.h>\n\n", f);
	mpi_write_tables(s, f);
	mpi_write_part(f, collc_mpi_runtime_text, "/* ---- the interpreter ---- */",
	               "/* ---- end of the interpreter ---- */");
	mpi_write_part(f, collc_mpi_runtime_text, MPI_COMM_FROM, MPI_COMM_TO);
	mpi_write_function(s, fn, "", f);
	if (o->with_main) {
		fputs("\n", f);
		main_calls(s, f);
		mpi_write_part(f, collc_mpi_main_text, "/* ---- --with-main:", NULL);
	}
	return 0;
}

void
mpi_write_tables(const Sched *s, FILE *f)
{
	Arena a = {0};
	Layout L;
	layout_build(&a, s, &L);
	fprintf(f, "enum { NRANK = %d, NCHUNK = %d, NBLOCK = %d, CHUNKS_PER_BLOCK = %d, ROOT = %d, "
	           "COLLC_TAG = 0x5c0 };\n", s->nrank, s->nchunk, L.nblock, L.per, s->root);
	if (L.packed >= 0)
		fprintf(f, "/* chunk order: %ld chunks travel in messages that are not one run of the "
		           "buffer (an indexed datatype each), %ld in the schedule's own order */\n",
		        L.packed, L.own);
	else
		fputs("/* chunk order: the schedule's own (too many messages to reorder) */\n", f);
	if (s->base)
		symmetric_tables(s, f);
	else
		explicit_tables(s, L.pos, f);
	table(f, "static const int chunk_block", L.block, s->nchunk);
	table(f, "static const int chunk_piece", L.piece, s->nchunk);
	arena_free(&a);
	emit_rewire(s, f);
}

const Backend mpi_backend = {"mpi", "a C function for MPI", ".c", emit_mpi};
