/*
 * two_libs.c: two libraries of the mpi-lib target linked into one program
 * through their headers (tests/unit/test_mpi.c writes them): liba, from a
 * plan of three size ranges for allreduce on 4 ranks (AR below 4 KiB, SP
 * from 4 KiB to 64 KiB, AR again from 64 KiB), and libb, built by `collc
 * build --target mpi-lib --prefix libb` from a file whose allreduce is
 * also named AR. Checks each result, that each size ran the schedule its
 * range names (liba_ran, libb_ran), that a communicator the plans do not
 * cover goes to MPI (the _passed counts), and that the named entry points
 * refuse a communicator of another size. Prints "ok" at rank 0; exit
 * status 1 on any failure.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "liba.h"
#include "libb.h"

static int me, bad;

static void
check(int ok, const char *what)
{
	if (!ok && !bad++)
		fprintf(stderr, "rank %d: %s\n", me, what);
}

/* fn(in, out, count, MPI_INT, MPI_SUM, comm) on p ranks: out[i] = sum of (r + 1) (i % 13 + 1) */
static void
sum(int (*fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm), int count,
    MPI_Comm comm, const char *what)
{
	int p, r, ok = 1;
	MPI_Comm_size(comm, &p);
	MPI_Comm_rank(comm, &r);
	int *in = malloc((size_t)count * sizeof *in + 1), *out = malloc((size_t)count * sizeof *out + 1);
	for (int i = 0; i < count; i++)
		in[i] = (r + 1) * (i % 13 + 1);
	check(fn(in, out, count, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS, what);
	for (int i = 0; i < count; i++)
		ok &= out[i] == (i % 13 + 1) * p * (p + 1) / 2;
	check(ok, what);
	free(in);
	free(out);
}

static int
liba_named(const void *in, void *out, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
	return liba_AR(in, out, (size_t)count, t, op, comm);
}

static int
libb_named(const void *in, void *out, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
	return libb_AR(in, out, (size_t)count, t, op, comm);
}

int
main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	/* 1 KiB, 16 KiB and 1 MiB of ints: AR, SP, AR in liba's plan */
	sum(liba_Allreduce, 256, MPI_COMM_WORLD, "liba_Allreduce 1 KiB");
	sum(liba_Allreduce, 4096, MPI_COMM_WORLD, "liba_Allreduce 16 KiB");
	sum(liba_Allreduce, 262144, MPI_COMM_WORLD, "liba_Allreduce 1 MiB");
	sum(libb_Allreduce, 4096, MPI_COMM_WORLD, "libb_Allreduce 16 KiB");
	sum(liba_named, 7, MPI_COMM_WORLD, "liba_AR");
	sum(libb_named, 7, MPI_COMM_WORLD, "libb_AR");
	/* one rank: no plan covers it */
	sum(liba_Allreduce, 100, MPI_COMM_SELF, "liba_Allreduce on MPI_COMM_SELF");
	sum(libb_Allreduce, 100, MPI_COMM_SELF, "libb_Allreduce on MPI_COMM_SELF");
	int x = 1, y;
	check(liba_AR(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF) == MPI_ERR_COMM,
	      "liba_AR on MPI_COMM_SELF returns MPI_ERR_COMM");
	check(liba_ran("AR") == 2 && liba_ran("SP") == 1 && liba_ran(NULL) == 3 &&
	      liba_passed() == 1, "liba's counts: AR 2, SP 1, passed 1");
	check(libb_ran("AR") == 1 && libb_passed() == 1, "libb's counts: AR 1, passed 1");
	int worst = 0;
	MPI_Reduce(&bad, &worst, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
	if (me == 0 && worst == 0)
		printf("ok\n");
	MPI_Finalize();
	return bad != 0;
}
