/*
 * leaks.c: a PMPI tool the tests LD_PRELOAD beside a library's drop-in
 * (tests/unit/test_mpi.c, docs/mpi.md): it counts the MPI objects made and
 * freed through MPI's names by the program and the drop-in alike (datatypes
 * of MPI_Type_create_hindexed and MPI_Type_contiguous, communicators of
 * MPI_Comm_dup and MPI_Comm_split (and MPI-4's MPI_Comm_create_from_group),
 * attribute keys, requests of MPI_Isend and
 * MPI_Irecv completed by MPI_Wait and MPI_Waitsome: the calls dropin.c and
 * the libraries make), and once the process
 * exits, after MPI_Finalize and whatever it frees, prints on stderr
 *   mpi objects left: D datatypes, C communicators, K keys, R requests
 * A program that frees what it makes, with a drop-in that does the same,
 * leaves 0 of each. The MPI's own objects (made inside it, not through
 * these names) are not counted: this is the drop-in's account, under any
 * MPI (Open MPI has no leak report of its own outside debug builds; MPICH's
 * datatype engine reports only datatypes).
 *
 * Build: mpicc -std=c11 -O2 -fPIC -shared tests/mpi/leaks.c -o libleaks.so
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static long types, comms, keys, reqs;

static void
leaks_report(void)
{
	fprintf(stderr, "mpi objects left: %ld datatypes, %ld communicators, %ld keys, %ld requests\n",
	        types, comms, keys, reqs);
}

/* the report at exit, registered by the first call counted */
static void
leaks_start(void)
{
	static int started;
	if (!started++)
		atexit(leaks_report);
}

/* n objects made (or freed, negative) when rc is MPI_SUCCESS */
static int
leaks_count(long *what, long n, int rc)
{
	leaks_start();
	if (rc == MPI_SUCCESS)
		*what += n;
	return rc;
}

/* every process that initializes MPI reports, whatever it makes */
int
MPI_Init(int *argc, char ***argv)
{
	leaks_start();
	return PMPI_Init(argc, argv);
}

int
MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	leaks_start();
	return PMPI_Init_thread(argc, argv, required, provided);
}

int
MPI_Type_create_hindexed(int n, const int len[], const MPI_Aint disp[], MPI_Datatype old,
                         MPI_Datatype *t)
{
	return leaks_count(&types, 1, PMPI_Type_create_hindexed(n, len, disp, old, t));
}

int
MPI_Type_contiguous(int n, MPI_Datatype old, MPI_Datatype *t)
{
	return leaks_count(&types, 1, PMPI_Type_contiguous(n, old, t));
}

int
MPI_Type_free(MPI_Datatype *t)
{
	return leaks_count(&types, -1, PMPI_Type_free(t));
}

int
MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out)
{
	return leaks_count(&comms, 1, PMPI_Comm_dup(comm, out));
}

int
MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
	int rc = PMPI_Comm_split(comm, color, key, out);
	return leaks_count(&comms, *out != MPI_COMM_NULL, rc);
}

#if MPI_VERSION >= 4
/* a communicator of an MPI-4 session (tests/mpi/hostile.c) */
int
MPI_Comm_create_from_group(MPI_Group group, const char *tag, MPI_Info info,
                           MPI_Errhandler handler, MPI_Comm *out)
{
	int rc = PMPI_Comm_create_from_group(group, tag, info, handler, out);
	return leaks_count(&comms, *out != MPI_COMM_NULL, rc);
}
#endif

int
MPI_Comm_free(MPI_Comm *comm)
{
	return leaks_count(&comms, -1, PMPI_Comm_free(comm));
}

int
MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
                       int *key, void *extra)
{
	return leaks_count(&keys, 1, PMPI_Comm_create_keyval(copy, del, key, extra));
}

int
MPI_Comm_free_keyval(int *key)
{
	return leaks_count(&keys, -1, PMPI_Comm_free_keyval(key));
}

int
MPI_Isend(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm,
          MPI_Request *req)
{
	return leaks_count(&reqs, 1, PMPI_Isend(buf, count, t, dest, tag, comm, req));
}

int
MPI_Irecv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
          MPI_Request *req)
{
	return leaks_count(&reqs, 1, PMPI_Irecv(buf, count, t, src, tag, comm, req));
}

int
MPI_Wait(MPI_Request *req, MPI_Status *status)
{
	int active = *req != MPI_REQUEST_NULL;
	return leaks_count(&reqs, -active, PMPI_Wait(req, status));
}

int
MPI_Waitsome(int n, MPI_Request reqs_in[], int *done, int idx[], MPI_Status st[])
{
	int rc = PMPI_Waitsome(n, reqs_in, done, idx, st);
	return leaks_count(&reqs, rc == MPI_SUCCESS && *done != MPI_UNDEFINED ? -*done : 0, rc);
}
