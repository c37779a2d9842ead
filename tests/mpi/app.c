/*
 * app.c: the program docs/mpi.md links with a library of the mpi-lib
 * target, built from examples/ring-classic.coll's AR under the prefix
 * ring8 (the page's commands; tests/unit/test_mpi.c runs them as
 * printed). An allreduce on the 8 ranks runs the schedule, one on half of
 * them MPI's own; each result is checked.
 */
#include <stdio.h>

#include "ring8.h"

int
main(int argc, char **argv)
{
	int me, bad = 0;
	float x[1000];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm half;
	MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
	for (int i = 0; i < 1000; i++)
		x[i] = (float)(me + i);
	ring8_Allreduce(MPI_IN_PLACE, x, 1000, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); /* AR */
	for (int i = 0; i < 1000; i++)
		bad |= x[i] != (float)(28 + 8 * i);
	ring8_Allreduce(MPI_IN_PLACE, x, 1000, MPI_FLOAT, MPI_SUM, half); /* 4 ranks: MPI's */
	for (int i = 0; i < 1000; i++)
		bad |= x[i] != (float)(4 * (28 + 8 * i));
	if (me == 0)
		printf("%s: AR ran %lld, MPI %lld\n", bad ? "WRONG" : "ok", ring8_ran("AR"),
		       ring8_passed());
	MPI_Comm_free(&half);
	MPI_Finalize();
	return bad;
}
