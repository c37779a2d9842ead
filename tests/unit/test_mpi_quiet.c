/*
 * test_mpi_quiet.c: what the drop-in does for a call it passes to MPI
 * (docs/mpi.md, "When MPI runs the call"). A passed small broadcast under
 * MPICH took 2 to 3 times MPI's own: before PMPI_Bcast the drop-in asked
 * MPI nine questions (whether it was usable, the datatype, the
 * communicator), each a few us with the caches cold after a barrier. Now
 * a call that no span of the plan followed holds goes to MPI asking
 * nothing. tests/mpi/quiet.c makes such calls of every kind between
 * MPI_Pcontrol(1) and (0), with tests/mpi/queries.c preloaded after the
 * drop-in to count the questions, under Open MPI and MPICH, following
 * tests/mpi/quiet.plan (the broadcast's [1024, 4096) bytes collc's, every
 * other size and kind MPI's): 0 at every
 * rank, every result right, each rank's report the calls the plan gives
 * collc (one broadcast) and MPI (the rest). Then calls of no element
 * (quiet.c's "zero"), with no plan to follow, so that every entry's
 * schedule may run: before, each asked MPI about the communicator and
 * MPI_Finalized (IMB's 0-byte sizes were over MPI's time); now 5 of each 9
 * return at once and 4 go to MPI, with no question but the communicator's
 * size for MPI_Reduce_scatter's counts. About 2 s for each MPI and mode.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tests.h"

#ifndef COLLC_BIN
#define COLLC_BIN "bin/collc"
#endif

static char qdir[] = "/tmp/collc-quiet-XXXXXX";

int
mpi_quiet_setup(void)
{
	if (!mkdtemp(qdir))
		return -1;
	setenv("OMPI_MCA_orte_tmpdir_base", qdir, 1); /* as test_mpi.c: mpiruns at once race */
	return 0;
}

int
mpi_quiet_teardown(void)
{
	char cmd[128];
	unsetenv("OMPI_MCA_orte_tmpdir_base");
	snprintf(cmd, sizeof cmd, "rm -rf %s", qdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Builds the drop-in, the counting tool and the program with cc (-Werror)
 * and runs them on 4 ranks with run (its launcher, the options that set the
 * ranks' environment: "-x K=V" or "-genv K V"): quiet.c's passed calls
 * following quiet.plan, or (zero) its calls of no element with no plan. */
static void
quiet_under(const char *cc, const char *run, bool ompi, bool zero)
{
	char cmd[4096], log[300], env[1024], plan[512] = "";
	const char *pwd = getenv("PWD") ? getenv("PWD") : ".";
	snprintf(log, sizeof log, "%s/%s.log", qdir, cc);
	if (!zero)
		snprintf(plan, sizeof plan, ompi ? "-x COLLC_MPI_PLAN=%s/tests/mpi/quiet.plan" :
		         "-genv COLLC_MPI_PLAN %s/tests/mpi/quiet.plan", pwd);
	if (ompi)
		snprintf(env, sizeof env, "%s -x COLLC_MPI_REPORT=1 -x LD_PRELOAD=%s/libosu.%s.so:"
		         "%s/libq.%s.so", plan, qdir, cc, qdir, cc);
	else
		snprintf(env, sizeof env, "%s -genv COLLC_MPI_REPORT 1 -genv LD_PRELOAD "
		         "%s/libosu.%s.so:%s/libq.%s.so", plan, qdir, cc, qdir, cc);
	snprintf(cmd, sizeof cmd,
	         "cd %s && { test -x quiet.%s || { %s -std=c11 -Wall -Wextra -Werror -O2 -fPIC -shared "
	         "-DCOLLC_PMPI lib/osu.c -o libosu.%s.so && %s -std=c11 -Wall -Wextra -Wpedantic "
	         "-Werror -O2 -fPIC -shared %s/tests/mpi/queries.c -o libq.%s.so && %s -std=c11 -Wall "
	         "-Wextra -Wpedantic -Werror -O2 %s/tests/mpi/quiet.c -o quiet.%s; }; } >%s 2>&1 && "
	         "timeout 120 env %s -np 4 %s ./quiet.%s 3%s >>%s 2>&1",
	         qdir, cc, cc, cc, cc, pwd, cc, cc, pwd, cc, log, run, env, cc, zero ? " zero" : "", log);
	int st = system(cmd), rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	char *out = slurp(log, NULL);
	int silent = 0, reports = 0;
	/* zero: the final sum's MPI_Reduce of longs runs the reduce schedule */
	/* zero: a reduce_scatter of counts all 0 asks the communicator's size */
	const char *none = zero ? "queries: 3 (Initialized 0, Finalized 0, Query_thread 0, "
	                          "Type_get_envelope 0, Type_size 0, Type_get_extent 0, "
	                          "Type_get_true_extent 0, Comm_test_inter 0, Comm_size 3, "
	                          "Comm_rank 0, Comm_get_attr 0)\n"
	                        : "queries: 0 (",
	           *report = zero ? ": ran AR 0 RS 0 AG 0 A2A 0 BC 0 RD 1; passed to MPI 16; returned "
	                            "at once 20\n"
	                          : ": ran AR 0 RS 0 AG 0 A2A 0 BC 3 RD 0; passed to MPI 52\n";
	for (const char *q = out; q && (q = strstr(q, none)); q++)
		silent++;
	for (const char *q = out; q && (q = strstr(q, report)); q++)
		reports++;
	assert_named(rc == 0 && out && strstr(out, "ok: quiet ") && silent == 4 && reports == 4,
	             __LINE__, __FILE__, "tests/mpi/quiet.c%s under %s: exit %d, %d of 4 ranks asked "
	             "MPI nothing, %d of 4 reports as planned (%s)\n%.3000s", zero ? " zero" : "", cc,
	             rc, silent, reports, report, out ? out : "");
	free(out);
}

/* The plan's library built once, then tests/mpi/quiet.c under both MPIs
 * (zero: its calls of no element). */
static void
quiet_under_both(bool zero)
{
	if (system("command -v mpicc >/dev/null && command -v mpicc.mpich >/dev/null && "
	           "command -v timeout >/dev/null") != 0) {
		assert_named(0, __LINE__, __FILE__, "Open MPI, MPICH and timeout are needed (make deps)");
		return;
	}
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "%s build tests/mpi/osu.coll --target mpi-lib --prefix osu -o %s/lib",
	         COLLC_BIN, qdir);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	quiet_under("mpicc", MPIRUN, true, zero);
	quiet_under("mpicc.mpich", "mpiexec.mpich", false, zero);
}

static void
test_passed_calls_ask_nothing(void)
{
	quiet_under_both(false);
}

/* Calls of no element, where every entry's schedule may run (no plan to
 * follow): those valid by their handles return at once, the others go to
 * MPI, and none asks MPI anything (docs/mpi.md, "Count 0"). */
static void
test_empty_calls_ask_nothing(void)
{
	quiet_under_both(true);
}

CU_TestInfo mpi_quiet_tests[] = {
    {"mpi-lib: a call the drop-in passes to MPI asks MPI nothing (both MPIs)",
     test_passed_calls_ask_nothing},
    {"mpi-lib: a call of no element returns at once or goes to MPI, asking nothing but a size (both MPIs)",
     test_empty_calls_ask_nothing},
    CU_TEST_INFO_NULL,
};
