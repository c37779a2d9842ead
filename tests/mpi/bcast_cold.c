/*
 * bcast_cold.c: the wall time of a small broadcast the drop-in passes to
 * MPI, as OSU's and IMB's loops make it: each call after a barrier, so the
 * caches are cold (other ranks ran on the core in between). Calls alternate
 * between MPI_Bcast (the drop-in's, when preloaded) and PMPI_Bcast (MPI's
 * own), so both see the same load; each rank prints the median and the
 * 90th percentile of each, in us (docs/mpi.md, "Under OSU and IMB").
 *
 * usage: bcast_cold [CALLS [BYTES]]   (default 200 each way, 64 bytes)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int
by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int n = argc > 1 ? atoi(argv[1]) : 200, bytes = argc > 2 ? atoi(argv[2]) : 64, me, p;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	if (n < 1 || bytes < 0) {
		MPI_Finalize();
		return 2;
	}
	char *buf = calloc((size_t)bytes + 1, 1);
	double *t[2] = {calloc((size_t)n, sizeof(double)), calloc((size_t)n, sizeof(double))};
	if (!buf || !t[0] || !t[1])
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int i = 0; i < 10; i++) /* warm-up: connections, the drop-in's first call */
		MPI_Bcast(buf, bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < 2 * n; i++) {
		int dropin = i % 2;
		double start = MPI_Wtime();
		if (dropin)
			MPI_Bcast(buf, bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
		else
			PMPI_Bcast(buf, bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
		t[dropin][i / 2] = (MPI_Wtime() - start) * 1e6;
		MPI_Barrier(MPI_COMM_WORLD);
	}
	for (int w = 0; w < 2; w++)
		qsort(t[w], (size_t)n, sizeof(double), by_value);
	for (int r = 0; r < p; r++) { /* rank by rank, in order */
		MPI_Barrier(MPI_COMM_WORLD);
		if (r == me)
			printf("rank %d: %d B, median (p90) us: PMPI_Bcast %.2f (%.2f), MPI_Bcast %.2f (%.2f)\n",
			       me, bytes, t[0][n / 2], t[0][n * 9 / 10], t[1][n / 2], t[1][n * 9 / 10]);
		fflush(stdout);
	}
	free(buf);
	free(t[0]);
	free(t[1]);
	MPI_Finalize();
	return 0;
}
