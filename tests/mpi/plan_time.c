/*
 * plan_time.c: compiled with a symmetric schedule's program that collc
 * wrote (-DCOLLC_FILE="path"), times the plan each rank derives on its
 * first call (collc_make_plan), for 16 ranks spread over the communicator,
 * one after the other in this one process (no MPI call is made). Prints
 * "RANKS MEAN_S MAX_S OPS": the ranks timed, the mean and the slowest time
 * per rank in seconds, and the slowest rank's message count. For
 * tests/bench/bench_mpi.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include COLLC_FILE
#if !COLLC_SYMMETRIC
#error "for the symmetric form only"
#endif
#include <stdio.h>

static double
now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int
main(void)
{
	enum { SAMPLE = 16 };
	double sum = 0, worst = 0;
	int ops = 0, n = 0;
	for (int i = 0; i < SAMPLE && i < NRANK; i++, n++) {
		int me = (int)((long)i * (NRANK - 1) / (SAMPLE - 1 > 0 ? SAMPLE - 1 : 1));
		collc_plan pl;
		double t0 = now();
		if (collc_make_plan(me, &pl) != 0)
			return 1;
		double t = now() - t0;
		sum += t;
		if (t > worst) {
			worst = t;
			ops = pl.nop;
		}
		free(pl.op), free(pl.chunk), free(pl.type), free(pl.req), free(pl.at);
		free(pl.arrived), free(pl.status);
	}
	printf("%d %.6f %.6f %d\n", n, sum / n, worst, ops);
	return 0;
}
