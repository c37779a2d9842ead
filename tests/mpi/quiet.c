/*
 * quiet.c: calls that a calibrated drop-in passes to MPI, made between
 * MPI_Pcontrol(1) and MPI_Pcontrol(0), where tests/mpi/queries.c (preloaded
 * after the drop-in) counts what the drop-in asks MPI (tests/unit/
 * test_mpi_quiet.c). On 4 ranks with the drop-in of tests/mpi/osu.coll and
 * a plan that gives the broadcast's [1024, 4096) bytes to collc and every
 * other size and kind to MPI: each kind ITERS times at small sizes, OSU's
 * and IMB's types among them (MPI_CHAR, which the reducing kinds cannot
 * take, MPI_BYTE, MPI_FLOAT), every result checked. Before the window, one
 * call of each (the drop-in reads the plan, and asks once about each
 * predefined type) and a broadcast of 2048 bytes, which runs collc's
 * schedule. With "zero", calls of no element alone instead (zero_calls),
 * under any plan: each returns at once or goes to MPI, asking nothing but
 * MPI_Reduce_scatter's communicator size.
 * Prints "ok: quiet N checks", or what differed (exit 1).
 *
 * usage: quiet [ITERS [zero]]   (default 3)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P = 4, N = 16 };

/* The calls of one round, each result checked: wrong results counted. */
static long
round_of_calls(int me, long *checks)
{
	long bad = 0;
	char c[N * P], cin[N * P];
	float f[N * P], fin[N * P];
	int counts[P], displs[P];
	for (int i = 0; i < P; i++)
		counts[i] = N, displs[i] = i * N;
	/* broadcast: 64 B of MPI_CHAR (OSU's), 64 B of MPI_INT, 16 B of MPI_BYTE (IMB's) */
	memset(c, me == 0 ? 7 : 0, sizeof c);
	MPI_Bcast(c, 64, MPI_CHAR, 0, MPI_COMM_WORLD);
	for (int i = 0; i < 64; i++, (*checks)++)
		bad += c[i] != 7;
	int v[16];
	for (int i = 0; i < 16; i++)
		v[i] = me == 0 ? i : -1;
	MPI_Bcast(v, 16, MPI_INT, 0, MPI_COMM_WORLD);
	for (int i = 0; i < 16; i++, (*checks)++)
		bad += v[i] != i;
	memset(c, me == 0 ? 9 : 0, 16);
	MPI_Bcast(c, 16, MPI_BYTE, 0, MPI_COMM_WORLD);
	for (int i = 0; i < 16; i++, (*checks)++)
		bad += c[i] != 9;
	/* the reducing kinds: floats (no entry's size) and MPI_CHAR (no schedule takes it) */
	for (int i = 0; i < N * P; i++)
		fin[i] = (float)(me + 1), cin[i] = 1;
	MPI_Allreduce(fin, f, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < N; i++, (*checks)++)
		bad += f[i] != 10.0f;
	MPI_Allreduce(cin, c, N, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < N; i++, (*checks)++)
		bad += c[i] != P;
	MPI_Reduce(fin, f, N, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
	for (int i = 0; i < N && me == 0; i++, (*checks)++)
		bad += f[i] != 10.0f;
	MPI_Reduce_scatter_block(fin, f, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < N; i++, (*checks)++)
		bad += f[i] != 10.0f;
	MPI_Reduce_scatter(fin, f, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < N; i++, (*checks)++)
		bad += f[i] != 10.0f;
	/* the moving kinds, as OSU (MPI_CHAR) calls them */
	for (int i = 0; i < N * P; i++)
		cin[i] = (char)(me * N + i % N);
	MPI_Allgather(cin, N, MPI_CHAR, c, N, MPI_CHAR, MPI_COMM_WORLD);
	for (int i = 0; i < N * P; i++, (*checks)++)
		bad += c[i] != (char)i;
	MPI_Allgatherv(cin, N, MPI_CHAR, c, counts, displs, MPI_CHAR, MPI_COMM_WORLD);
	for (int i = 0; i < N * P; i++, (*checks)++)
		bad += c[i] != (char)i;
	for (int i = 0; i < N * P; i++)
		cin[i] = (char)(me * P + i / N); /* block j of rank me: me * P + j */
	MPI_Alltoall(cin, N, MPI_CHAR, c, N, MPI_CHAR, MPI_COMM_WORLD);
	for (int i = 0; i < N * P; i++, (*checks)++)
		bad += c[i] != (char)(i / N * P + me);
	MPI_Alltoallv(cin, counts, displs, MPI_CHAR, c, counts, displs, MPI_CHAR, MPI_COMM_WORLD);
	for (int i = 0; i < N * P; i++, (*checks)++)
		bad += c[i] != (char)(i / N * P + me);
	return bad;
}

/* Calls of no element (docs/mpi.md, "Count 0"): 5 that the drop-in
 * returns at once (allreduce, reduce_scatter_block, allgather, alltoall
 * and reduce_scatter of counts all 0, valid by their handles alone) and 4
 * it passes to MPI (a rooted kind's, MPI_IN_PLACE's, and MPI_CHAR's sum
 * after the float sum that returned: the drop-in keeps the types and op of
 * the last that returned at once); no buffer may change. */
static long
zero_calls(long *checks)
{
	long bad = 0;
	char c[N], cin[N];
	float f[N], fin[N];
	memset(c, 3, sizeof c), memset(cin, 4, sizeof cin);
	for (int i = 0; i < N; i++)
		f[i] = 3.0f, fin[i] = 4.0f;
	MPI_Allreduce(fin, f, 0, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Reduce_scatter_block(fin, f, 0, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allgather(cin, 0, MPI_CHAR, c, 0, MPI_CHAR, MPI_COMM_WORLD);
	MPI_Alltoall(cin, 0, MPI_BYTE, c, 0, MPI_BYTE, MPI_COMM_WORLD);
	int zeros[P] = {0};
	MPI_Reduce_scatter(fin, f, zeros, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Bcast(c, 0, MPI_CHAR, 0, MPI_COMM_WORLD);
	MPI_Reduce(fin, f, 0, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Allreduce(MPI_IN_PLACE, f, 0, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(cin, c, 0, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < N; i++, *checks += 4)
		bad += (c[i] != 3) + (cin[i] != 4) + (f[i] != 3.0f) + (fin[i] != 4.0f);
	return bad;
}

/* Broadcasts that differ from the one before in one of count, type and
 * root, each the plan's other side of the last (the drop-in keeps the last
 * call it passed, to pass its repeats at once): 1023 B MPI's, 1024 B
 * collc's; 256 MPI_CHAR MPI's, 256 MPI_INT from rank 1 MPI's (the plan's
 * entry is rank 0's), from rank 0 collc's. */
static long
same_but_one(int me, long *checks)
{
	static const struct {
		int count, type, root;
	} call[] = {{1023, 0, 0}, {1024, 0, 0}, {256, 0, 0}, {256, 1, 1}, {256, 1, 0}};
	long bad = 0;
	int buf[256];
	for (size_t k = 0; k < sizeof call / sizeof call[0]; k++) {
		unsigned char *b = (unsigned char *)buf;
		memset(buf, me == call[k].root ? (int)k + 1 : 0, sizeof buf);
		MPI_Bcast(buf, call[k].count, call[k].type ? MPI_INT : MPI_CHAR, call[k].root,
		          MPI_COMM_WORLD);
		size_t bytes = (size_t)call[k].count * (call[k].type ? sizeof(int) : 1);
		for (size_t i = 0; i < bytes; i++, (*checks)++)
			bad += b[i] != k + 1;
	}
	return bad;
}

/* Rank 0 prints the checks made and whether any failed; MPI_Finalize. */
static int
finish(int me, long bad, long checks)
{
	long all[2] = {bad, checks}, sum[2];
	MPI_Reduce(all, sum, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (me == 0 && sum[0] == 0)
		printf("ok: quiet %ld checks\n", sum[1]);
	else if (me == 0)
		printf("WRONG: quiet %ld of %ld checks\n", sum[0], sum[1]);
	MPI_Finalize();
	return me == 0 && sum[0] != 0;
}

int
main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int me, p, iters = argc > 1 ? atoi(argv[1]) : 3, zero = argc > 2 && strcmp(argv[2], "zero") == 0;
	long checks = 0, bad = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	if (p != P) {
		if (me == 0)
			fprintf(stderr, "quiet: run on %d ranks (tests/mpi/osu.coll's)\n", P);
		MPI_Finalize();
		return 1;
	}
	if (zero) { /* the warm-up, then calls of no element alone */
		bad += zero_calls(&checks);
		MPI_Pcontrol(1);
		for (int i = 0; i < iters; i++)
			bad += zero_calls(&checks);
		MPI_Pcontrol(0);
		return finish(me, bad, checks);
	}
	bad += round_of_calls(me, &checks); /* the warm-up */
	char big[2048];
	memset(big, me == 0 ? 5 : 0, sizeof big);
	MPI_Bcast(big, sizeof big, MPI_CHAR, 0, MPI_COMM_WORLD); /* the plan's: collc's schedule */
	for (size_t i = 0; i < sizeof big; i++, checks++)
		bad += big[i] != 5;
	bad += same_but_one(me, &checks);
	MPI_Pcontrol(1);
	for (int i = 0; i < iters; i++)
		bad += round_of_calls(me, &checks);
	MPI_Pcontrol(0);
	return finish(me, bad, checks);
}
