/*
 * passthru.c: the CPU time of a collective call that the drop-in passes to
 * the MPI library (tests/osu_imb_compare.py runs it on 1 rank with and
 * without the drop-in preloaded; no plan entry has 1 rank, so every call
 * goes to PMPI_ after the drop-in's checks and lookup). The difference is
 * what the drop-in adds where the calibration gives a size to MPI. The
 * third figure is an allreduce after the program wrote 4 KiB (as a
 * benchmark writes its buffers between calls; the call's own CPU time
 * alone): a locked count in the drop-in waits there for those stores to
 * drain (docs/mpi.md, "The locked count").
 *
 * usage: passthru [CALLS]   (default 1000000)
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	char bytes[64] = {0};
	float x = 1, y = 0;
	if (n < 1)
		n = 1;
	double t = cpu_s();
	for (long i = 0; i < n; i++)
		MPI_Bcast(bytes, 64, MPI_CHAR, 0, MPI_COMM_WORLD);
	double bcast = cpu_s() - t;
	t = cpu_s();
	for (long i = 0; i < n; i++)
		MPI_Allreduce(&x, &y, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	double allreduce = cpu_s() - t;
	/* the writes alone, then each followed by the call: the difference */
	static char buf[4 << 10];
	long m = n / 4 > 0 ? n / 4 : 1;
	t = cpu_s();
	for (long i = 0; i < m; i++) {
		memset(buf, (int)i, sizeof buf);
		__asm__ volatile("" : : "r"(buf) : "memory");
	}
	double writes = cpu_s() - t;
	t = cpu_s();
	for (long i = 0; i < m; i++) {
		memset(buf, (int)i, sizeof buf);
		MPI_Allreduce(&x, &y, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	}
	double stored = cpu_s() - t - writes;
	printf("passthru: bcast %.1f ns allreduce %.1f ns after stores %.1f ns (CPU time a call, "
	       "%ld calls)\n", bcast / (double)n * 1e9, allreduce / (double)n * 1e9,
	       stored / (double)m * 1e9, n);
	MPI_Finalize();
	return y == 1 ? 0 : 1;
}
