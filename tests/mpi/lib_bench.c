/*
 * lib_bench.c: a library of the mpi-lib target (prefix benchlib, its
 * allreduce named AR; tests/bench/bench_mpi.c writes it) against MPI's own
 * MPI_Allreduce, over sizes from 4 KiB to 64 MiB of floats, times 4 each
 * step. Each size: one untimed call of each (plan, duplicate communicator,
 * MPI's connections), then ITERS rounds calling benchlib_Allreduce,
 * MPI_Allreduce and MPI_Allreduce again (the anchor: what MPI's own
 * collective varies against itself on this machine), each from a barrier;
 * a time is the slowest rank's for one call, the best of the rounds. The
 * inputs are small integers, so the two results must agree bit for bit.
 * Prints, at rank 0, one line per size: bytes, the three times (us), the
 * library's ratio to MPI, the anchor's, and ok or WRONG.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"

/* The slowest rank's time for one allreduce of n floats: the library's
 * dispatcher (lib) or MPI's. */
static double
timed(int lib, const float *in, float *out, int n)
{
	MPI_Barrier(MPI_COMM_WORLD);
	double t = MPI_Wtime(), worst;
	if (lib)
		benchlib_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	else
		MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	t = MPI_Wtime() - t;
	MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return worst;
}

int
main(int argc, char **argv)
{
	int me, iters = argc > 1 ? atoi(argv[1]) : 5;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	size_t most = (64u << 20) / sizeof(float);
	float *in = malloc(most * sizeof *in), *a = malloc(most * sizeof *a),
	      *b = malloc(most * sizeof *b);
	for (size_t i = 0; i < most; i++)
		in[i] = (float)((me + (int)i) % 11);
	if (me == 0)
		printf("# %10s %12s %12s %12s %8s %8s  check\n", "bytes", "lib us", "MPI us",
		       "MPI again us", "ratio", "anchor");
	for (size_t bytes = 4096; bytes <= (64u << 20); bytes *= 4) {
		int n = (int)(bytes / sizeof(float));
		double best[3] = {1e30, 1e30, 1e30};
		timed(1, in, a, n);
		timed(0, in, b, n);
		int same = memcmp(a, b, bytes) == 0, all;
		for (int k = 0; k < iters; k++)
			for (int w = 0; w < 3; w++) {
				double t = timed(w == 0, in, w == 0 ? a : b, n);
				best[w] = t < best[w] ? t : best[w];
			}
		MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
		if (me == 0)
			printf("%12zu %12.1f %12.1f %12.1f %8.2f %8.2f  %s\n", bytes, best[0] * 1e6,
			       best[1] * 1e6, best[2] * 1e6, best[0] / best[1], best[2] / best[1],
			       all ? "ok" : "WRONG");
	}
	if (me == 0)
		printf("# the library ran AR %lld times, passed %lld to MPI\n", benchlib_ran("AR"),
		       benchlib_passed());
	free(in);
	free(a);
	free(b);
	MPI_Finalize();
	return 0;
}
