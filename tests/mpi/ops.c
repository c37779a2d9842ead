/*
 * ops.c: linked with a reducing collective that collc wrote (named X; KIND
 * 1 allreduce, 2 reduce_scatter, 3 reduce with root 1), checks it against
 * MPI's own collective for every operator (sum, prod, max, min) and every
 * datatype the MPI target promises (docs/mpi.md), bit for bit: the inputs
 * are small integers (prod: 1, 2 and -1), so every reduction order gives
 * the same value. Also that other types and operators are refused with
 * MPI_ERR_TYPE and MPI_ERR_OP. Prints WRONG lines and exits 1 on a
 * difference.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if KIND == 1
int collc_X(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
            MPI_Comm comm);
#define CALL_COLLC(in, out, n, t, op) collc_X(in, out, n, t, op, MPI_COMM_WORLD)
#define CALL_MPI(in, out, n, t, op) MPI_Allreduce(in, out, (int)(n), t, op, MPI_COMM_WORLD)
#define IN_PER_RANK(n, p) (n)
#define OUT_PER_RANK(n, p) (n)
#elif KIND == 2
int collc_X(const void *sendbuf, void *recvbuf, size_t recvcount, MPI_Datatype type,
            MPI_Op op, MPI_Comm comm);
#define CALL_COLLC(in, out, n, t, op) collc_X(in, out, n, t, op, MPI_COMM_WORLD)
#define CALL_MPI(in, out, n, t, op) MPI_Reduce_scatter_block(in, out, (int)(n), t, op, MPI_COMM_WORLD)
#define IN_PER_RANK(n, p) ((n) * (size_t)(p))
#define OUT_PER_RANK(n, p) (n)
#else
int collc_X(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
            int root, MPI_Comm comm);
#define CALL_COLLC(in, out, n, t, op) collc_X(in, out, n, t, op, 1, MPI_COMM_WORLD)
#define CALL_MPI(in, out, n, t, op) MPI_Reduce(in, out, (int)(n), t, op, 1, MPI_COMM_WORLD)
#define IN_PER_RANK(n, p) (n)
#define OUT_PER_RANK(n, p) (n)
#endif

static const struct {
	const char *name;
	MPI_Op op;
} ops[] = {{"sum", MPI_SUM}, {"prod", MPI_PROD}, {"max", MPI_MAX}, {"min", MPI_MIN}};

enum { F32, F64, I32, I64 };
static const struct {
	const char *name;
	MPI_Datatype type;
	int kind;
} types[] = {
	{"MPI_FLOAT", MPI_FLOAT, F32},       {"MPI_DOUBLE", MPI_DOUBLE, F64},
	{"MPI_INT32_T", MPI_INT32_T, I32},   {"MPI_INT", MPI_INT, I32},
	{"MPI_INT64_T", MPI_INT64_T, I64},   {"MPI_LONG_LONG", MPI_LONG_LONG, I64},
	{"MPI_LONG", MPI_LONG, I64},
};

static long
value(int op, int rank, size_t i)
{
	switch (op) {
	case 0:
		return 1 + (long)((rank * 7 + i * 13) % 9);
	case 1:
		return (rank + i) % 3 == 0 ? 2 : (rank * 5 + i) % 4 == 0 ? -1 : 1;
	default:
		return (long)((rank * 7 + i * 13) % 23) - 11;
	}
}

static void
put(void *buf, int kind, size_t i, long v)
{
	switch (kind) {
	case F32:
		((float *)buf)[i] = (float)v;
		break;
	case F64:
		((double *)buf)[i] = (double)v;
		break;
	case I32:
		((int32_t *)buf)[i] = (int32_t)v;
		break;
	default:
		((int64_t *)buf)[i] = (int64_t)v;
	}
}

int
main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, p, wrong = 0, checked = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	static const size_t counts[] = {1, 7, 61, 1024};
	for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
		for (int o = 0; o < 4; o++)
			for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
				size_t n = counts[c], nin = IN_PER_RANK(n, p), nout = OUT_PER_RANK(n, p);
				int es;
				MPI_Type_size(types[t].type, &es);
				char *in = malloc(nin * (size_t)es), *out = calloc(nout, (size_t)es),
				     *ref = calloc(nout, (size_t)es);
				for (size_t i = 0; i < nin; i++)
					put(in, types[t].kind, i, value(o, rank, i));
				int rc = CALL_COLLC(in, out, n, types[t].type, ops[o].op);
				CALL_MPI(in, ref, n, types[t].type, ops[o].op);
				int bad = rc != MPI_SUCCESS;
#if KIND == 3
				if (rank == 1)
#endif
					bad |= memcmp(out, ref, nout * (size_t)es) != 0;
				if (bad)
					printf("WRONG: rank %d, %s on %s, count %zu (rc %d)\n", rank, ops[o].name,
					       types[t].name, n, rc);
				wrong |= bad;
				checked++;
				free(in);
				free(out);
				free(ref);
			}
	/* what is not promised is refused, on every rank alike */
	char in[64] = {0}, out[64];
	if (CALL_COLLC(in, out, 4, MPI_CHAR, MPI_SUM) != MPI_ERR_TYPE) {
		printf("WRONG: MPI_CHAR is not refused with MPI_ERR_TYPE\n");
		wrong = 1;
	}
	if (CALL_COLLC(in, out, 4, MPI_INT, MPI_BAND) != MPI_ERR_OP) {
		printf("WRONG: MPI_BAND is not refused with MPI_ERR_OP\n");
		wrong = 1;
	}
	int any;
	MPI_Allreduce(&wrong, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s: %d cases on %d ranks\n", any ? "WRONG" : "ok", checked, p);
	MPI_Finalize();
	return any ? 1 : 0;
}
