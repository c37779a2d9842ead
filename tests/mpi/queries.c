/*
 * queries.c: a PMPI tool the tests LD_PRELOAD after a library's drop-in
 * (tests/unit/test_mpi_quiet.c, docs/mpi.md): it counts the calls, through
 * MPI's names, of the questions the drop-in may ask MPI about a call
 * (whether MPI is usable, the datatype, the communicator, the attribute
 * holding its duplicate), between the program's MPI_Pcontrol(1) and
 * MPI_Pcontrol(0), the profiling interface's own switch (a no-op without a
 * tool). At MPI_Pcontrol(0) each process prints on stderr
 *   queries: N (Initialized a, Finalized b, ...)
 * The program asks none of them itself in between, so N is the drop-in's:
 * after a warm-up call of each kind, 0 for the calls it passes to MPI (a
 * passed broadcast asked nine, each a few us with cold caches: docs/mpi.md).
 *
 * Build: mpicc -std=c11 -O2 -fPIC -shared tests/mpi/queries.c -o libqueries.so
 */
#include <mpi.h>
#include <stdio.h>

enum { Q_INITIALIZED, Q_FINALIZED, Q_QUERY_THREAD, Q_ENVELOPE, Q_TYPE_SIZE, Q_EXTENT,
       Q_TRUE_EXTENT, Q_TEST_INTER, Q_COMM_SIZE, Q_COMM_RANK, Q_GET_ATTR, NQ };

static const char *const q_name[NQ] = {"Initialized", "Finalized", "Query_thread",
                                       "Type_get_envelope", "Type_size", "Type_get_extent",
                                       "Type_get_true_extent", "Comm_test_inter", "Comm_size",
                                       "Comm_rank", "Comm_get_attr"};

/* the counts, and whether the program's window is open */
static struct {
	int on;
	long n[NQ];
} q;

static int
q_count(int which, int rc)
{
	q.n[which] += q.on;
	return rc;
}

int
MPI_Pcontrol(const int level, ...)
{
	if (level == 1) {
		q.on = 1;
		for (int i = 0; i < NQ; i++)
			q.n[i] = 0;
	} else if (level == 0 && q.on) {
		char line[512];
		long all = 0;
		int n = 0;
		q.on = 0;
		for (int i = 0; i < NQ; i++)
			all += q.n[i];
		n = snprintf(line, sizeof line, "queries: %ld (", all);
		for (int i = 0; i < NQ && n > 0 && (size_t)n < sizeof line; i++)
			n += snprintf(line + n, sizeof line - (size_t)n, "%s%s %ld", i ? ", " : "", q_name[i],
			              q.n[i]);
		fprintf(stderr, "%s)\n", line);
	}
	return MPI_SUCCESS;
}

int
MPI_Initialized(int *flag)
{
	return q_count(Q_INITIALIZED, PMPI_Initialized(flag));
}

int
MPI_Finalized(int *flag)
{
	return q_count(Q_FINALIZED, PMPI_Finalized(flag));
}

int
MPI_Query_thread(int *provided)
{
	return q_count(Q_QUERY_THREAD, PMPI_Query_thread(provided));
}

int
MPI_Type_get_envelope(MPI_Datatype t, int *ni, int *na, int *nd, int *combiner)
{
	return q_count(Q_ENVELOPE, PMPI_Type_get_envelope(t, ni, na, nd, combiner));
}

int
MPI_Type_size(MPI_Datatype t, int *size)
{
	return q_count(Q_TYPE_SIZE, PMPI_Type_size(t, size));
}

int
MPI_Type_get_extent(MPI_Datatype t, MPI_Aint *lb, MPI_Aint *extent)
{
	return q_count(Q_EXTENT, PMPI_Type_get_extent(t, lb, extent));
}

int
MPI_Type_get_true_extent(MPI_Datatype t, MPI_Aint *lb, MPI_Aint *extent)
{
	return q_count(Q_TRUE_EXTENT, PMPI_Type_get_true_extent(t, lb, extent));
}

int
MPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
	return q_count(Q_TEST_INTER, PMPI_Comm_test_inter(comm, flag));
}

int
MPI_Comm_size(MPI_Comm comm, int *size)
{
	return q_count(Q_COMM_SIZE, PMPI_Comm_size(comm, size));
}

int
MPI_Comm_rank(MPI_Comm comm, int *rank)
{
	return q_count(Q_COMM_RANK, PMPI_Comm_rank(comm, rank));
}

int
MPI_Comm_get_attr(MPI_Comm comm, int key, void *value, int *flag)
{
	return q_count(Q_GET_ATTR, PMPI_Comm_get_attr(comm, key, value, flag));
}
