/*
 * slow.c: a PMPI tool the tests LD_PRELOAD after a library's drop-in
 * (tests/unit/test_mpi_cal.c): the MPI library's reduce-scatter made 20 ms
 * slower a call, so that a calibration's MPI times show which of MPI's
 * forms it measured: MPI_Reduce_scatter_block always, MPI_Reduce_scatter
 * (counts per rank) too where COLLC_TEST_SLOW_BOTH is set. The drop-in
 * calls MPI's collectives by their PMPI_ names, which this defines, calling
 * the MPI library's after the pause.
 *
 * Build: mpicc -std=c11 -O2 -fPIC -shared tests/mpi/slow.c -o libslow.so -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdlib.h>
#include <time.h>

typedef int (*block_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
typedef int (*counts_fn)(const void *, void *, const int *, MPI_Datatype, MPI_Op, MPI_Comm);

static void
slow_pause(void)
{
	struct timespec t = {0, 20 * 1000 * 1000};
	while (nanosleep(&t, &t) != 0)
		;
}

int
PMPI_Reduce_scatter_block(const void *in, void *out, int n, MPI_Datatype t, MPI_Op op,
                          MPI_Comm comm)
{
	block_fn mpi;
	*(void **)&mpi = dlsym(RTLD_NEXT, "PMPI_Reduce_scatter_block");
	slow_pause();
	return mpi(in, out, n, t, op, comm);
}

int
PMPI_Reduce_scatter(const void *in, void *out, const int counts[], MPI_Datatype t, MPI_Op op,
                    MPI_Comm comm)
{
	counts_fn mpi;
	*(void **)&mpi = dlsym(RTLD_NEXT, "PMPI_Reduce_scatter");
	if (getenv("COLLC_TEST_SLOW_BOTH"))
		slow_pause();
	return mpi(in, out, counts, t, op, comm);
}
