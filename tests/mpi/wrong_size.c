/*
 * wrong_size.c: linked with a collective that collc wrote for more ranks
 * than this run has, each call must return MPI_ERR_COMM, not crash or hang.
 * The collective is named AR (an allreduce).
 */
#include <mpi.h>
#include <stdio.h>

int collc_AR(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
             MPI_Comm comm);

int
main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	float in[4] = {1, 2, 3, 4}, out[4];
	int rc = collc_AR(in, out, 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	int rc_self = collc_AR(in, out, 4, MPI_FLOAT, MPI_SUM, MPI_COMM_SELF);
	printf("%s %s\n", rc == MPI_ERR_COMM ? "comm-error" : "other", rc_self == MPI_ERR_COMM ? "comm-error" : "other");
	MPI_Finalize();
	return rc == MPI_ERR_COMM && rc_self == MPI_ERR_COMM ? 0 : 1;
}
