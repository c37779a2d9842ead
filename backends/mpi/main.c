/*
 * main.c: the main that `--with-main` adds to a program of the MPI target.
 * collc embeds this file at build time and writes the lines from the
 * "----" marker on after the program's function and these macros, which
 * backends/to_mpi.c defines per collective: CALL_COLLC and CALL_MPI (the two
 * calls on in, out and ref), OUT_COUNT (elements of out to compare),
 * WORK_FACTOR (elements of in per count), SIZE_FACTOR (elements of the
 * collective's size per count, nccl-tests' "size"), BUS_FACTOR (busbw per
 * algbw, nccl-tests' convention) and REDOP (the op's name, or "none").
 * It runs both on the same random data, checks them against each other and
 * prints nccl-tests' columns for each.
 *
 * Compiled alone (make mpi-runtime-check) the lines above the marker stand
 * in for a program: MPI's allreduce in place of collc's function.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { NRANK = 2, ROOT = 0 };
#define CALL_COLLC MPI_Allreduce(in, out, (int)count, type, MPI_SUM, MPI_COMM_WORLD)
#define CALL_MPI MPI_Allreduce(in, ref, (int)count, type, MPI_SUM, MPI_COMM_WORLD)
#define OUT_COUNT count
#define WORK_FACTOR 1
#define SIZE_FACTOR 1
#define BUS_FACTOR 1
#define REDOP "sum"

/* ---- --with-main: check against MPI's own collective, time both ---- */

#include <math.h>
#include <stdio.h>

static double collc_bus_factor(void) { return BUS_FACTOR; }

/* time (us), algbw and busbw (GB/s) of one call moving `bytes` in `t` s */
static void collc_columns(double bytes, double t)
{
	double algbw = t > 0 ? bytes / t / 1e9 : 0;
	printf("  %10.2f %7.2f %7.2f", t * 1e6, algbw, algbw * collc_bus_factor());
}

int
main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int me, p, bad = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	if (p != NRANK) {
		if (me == 0)
			fprintf(stderr, "this schedule runs on %d ranks, not %d\n", NRANK, p);
		MPI_Finalize();
		return 2;
	}
	size_t counts[] = {0, 1, 2, 7, 13, 61, 1024, 4099, 65537};
	size_t ncount = sizeof counts / sizeof counts[0];
	if (argc > 1) {
		counts[0] = (size_t)strtoull(argv[1], NULL, 10);
		ncount = 1;
	}
	int iters = argc > 2 && atoi(argv[2]) > 1 ? atoi(argv[2]) : 1;
	if (me == 0) {
		printf("# %d ranks; times are the slowest rank's, best of %d; busbw as nccl-tests\n",
		       NRANK, iters);
		printf("#%11s %13s %6s %6s  %10s %7s %7s  %10s\n", "", "", "", "", "collc", "", "",
		       "MPI");
		printf("#%11s %13s %6s %6s  %10s %7s %7s  %10s %7s %7s  %s\n", "size", "count", "type",
		       "redop", "time", "algbw", "busbw", "time", "algbw", "busbw", "check");
		printf("#%11s %13s %6s %6s  %10s %7s %7s  %10s %7s %7s\n", "(B)", "(elements)", "", "",
		       "(us)", "(GB/s)", "(GB/s)", "(us)", "(GB/s)", "(GB/s)");
	}
	for (size_t ci = 0; ci < ncount; ci++)
		for (int t = 0; t < 2; t++) {
			size_t count = counts[ci];
			MPI_Datatype type = t ? MPI_FLOAT : MPI_INT32_T;
			size_t n = count * WORK_FACTOR + 1;
			char *in = malloc(n * 4), *out = malloc(n * 4), *ref = malloc(n * 4);
			srand(1234 + me * 7 + (int)count);
			for (size_t i = 0; i < n; i++) {
				if (t)
					((float *)in)[i] = (float)(rand() % 1000) / 100.0f;
				else
					((int32_t *)in)[i] = rand() % 1000 - 500;
			}
			memset(out, 0, n * 4);
			memset(ref, 0, n * 4);
			/* one untimed call each (plans, buffers, connections), then the two
			 * in turn from a barrier: the slowest rank's time, best of iters */
			int rc = CALL_COLLC;
			CALL_MPI;
			double best[2] = {1e30, 1e30};
			for (int k = 0; k < iters && rc == MPI_SUCCESS; k++) {
				double took[2];
				MPI_Barrier(MPI_COMM_WORLD);
				double t0 = MPI_Wtime();
				rc = CALL_COLLC;
				took[0] = MPI_Wtime() - t0;
				MPI_Barrier(MPI_COMM_WORLD);
				t0 = MPI_Wtime();
				CALL_MPI;
				took[1] = MPI_Wtime() - t0;
				MPI_Allreduce(MPI_IN_PLACE, took, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
				for (int w = 0; w < 2; w++)
					best[w] = took[w] < best[w] ? took[w] : best[w];
			}
			int wrong = rc != MPI_SUCCESS;
			for (size_t i = 0; i < OUT_COUNT && !wrong; i++) {
				if (t) {
					float a = ((float *)out)[i], b = ((float *)ref)[i];
					wrong = fabsf(a - b) > 1e-4f * (fabsf(b) + 1.0f) * (float)NRANK;
				} else {
					wrong = ((int32_t *)out)[i] != ((int32_t *)ref)[i];
				}
			}
			int any;
			MPI_Allreduce(&wrong, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
			bad |= any;
			if (me == 0) {
				size_t elements = count * SIZE_FACTOR;
				printf("%12zu %13zu %6s %6s", elements * 4, elements, t ? "float" : "int32",
				       REDOP);
				collc_columns((double)elements * 4, best[0]);
				collc_columns((double)elements * 4, best[1]);
				printf("  %s\n", any ? "WRONG" : "ok");
			}
			free(in);
			free(out);
			free(ref);
		}
	MPI_Finalize();
	return bad ? 1 : 0;
}
