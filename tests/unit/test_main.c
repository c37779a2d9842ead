/*
 * test_main.c: the CUnit registry, one suite per module, and the runner's
 * command line. Run from the repository root (golden files and examples are
 * found by relative path). The exit status is non-zero when any assertion
 * failed: CUnit's basic runner does not do that by itself.
 *
 *   run [--quick] [--times] [--jobs N] [SUITE ['TEST']]
 *
 * --quick leaves out the tests listed in slow[] below (`make check`); --times
 * prints each test's wall time after the run, slowest first, which is how
 * slow[] is chosen (docs/testing.md, "The quick tier"); --jobs N runs the
 * suites in N processes at once (suite i in process i mod N), each one's
 * output printed whole when all have finished.
 */
#include <CUnit/Basic.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests.h"

/* The tests `--quick` leaves out: the first 17 took 1.5 s or more in a full
 * `run --times` (the project's 2-core machine under load, 2026-12-02; 336 s
 * of the 353 s the run took), except the golden files' (2.2 s), which the
 * quick tier keeps; the docs' commands are split by command into a quick
 * test and a slow one (tests/unit/test_docs.c, slow_docs and slow_cmds). Every suite
 * keeps its other tests, so the quick tier still reaches every module. A
 * name here that is not a test is an error: a renamed test must not drop out
 * of this list unnoticed. (ring(16384) streamed, once 12 s, left it with
 * issue 27: 0.15 s, its rounds run by node 0's messages.) */
static const struct {
	const char *suite, *test;
} slow[] = {
	{"mpi", "a case of each rank-space family and SP 3x3 under MPICH"},
	{"mpi", "pipelined trees on 6x6 SMBi (the example) and SMAlter, 36 ranks, against MPI"},
	{"mpi", "rank-space algorithms against MPI, 2..16 ranks"},
	{"msccl", "examples: build, check, read back, run, verify"},
	{"mpi", "Bridge on an optical ring against MPI, barriers at reconfigurations"},
	{"mpi", "pipelined trees on 4x4 SMBi / SMAlter against MPI"},
	{"mpi", "torus and mesh algorithms and SP against MPI"},
	{"msccl", "128 and 256 ranks: ring and SP on 8x16, 16x16 written, read back, run"},
	{"mpi", "user schedules (examples/user-*.coll) against MPI"},
	{"mpi", "each rank's symmetric plan against the definition"},
	{"mpi", "Open MPI and MPICH at -O2 without warnings; nccl-tests' columns"},
	{"mpi", "every reduction operator and datatype against MPI"},
	{"limits", "a schedule text file of 200,000 ranks reads back"},
	{"cli", "man page renders and names every option; install then uninstall leaves nothing"},
	{"alg", "every registry algorithm of any-rank domain, every kind and rank count 2..64 verifies"},
	{"msccl", "spine-leaf SP, 128 and 512 hosts: shape and every check"},
	{"cli", "sweep: shards merge byte-identically; busbw; statuses; spec errors"},
	/* added with their tests, each over 1.5 s on the machine that chose the above */
	{"cli", "sim: the bound never exceeds 100% (examples x 4 KiB, 1 MiB, 256 MiB)"},
	{"cli", "sim: packet and flow within 5% at 1, 16, 256 MiB on every example, or it says why"},
	{"cli", "tune --msccl-dir: the executor's selection picks the planned file, 1 KiB to 1 GiB"},
	{"cli", "tune --msccl-dir: box and 2x8, each range's program within 10% of its schedule, >= the ring"},
	{"mpi", "mpi-lib: the PMPI drop-in under an unmodified program, Open MPI and MPICH"},
	{"mpi", "mpi-lib: two libraries in one program, a plan of size ranges"},
	{"mpi", "mpi-lib: every schedule form in one library, both MPIs"},
	{"mpi", "mpi-lib: issue 37's hostile calls under Open MPI and MPICH"},
	{"docs", "the docs' slow commands run as printed (MPI, sweeps, large builds)"},
	{"mpi", "collc tune --mpi-lib: the plan's library as a drop-in under Open MPI and MPICH"},
	/* builds osu.coll's drop-in with both MPIs and runs 4 ranks under each: 5.5 s of
	 * CPU, 21 to 47 s of wall time at load average 20 (2026-12-05) */
	{"mpi_quiet", "mpi-lib: a call the drop-in passes to MPI asks MPI nothing (both MPIs)"},
	{"mpi_quiet", "mpi-lib: a call of no element returns at once or goes to MPI, asking nothing but a size (both MPIs)"},
	{"mpi_cal", "calibration: reduce-scatter's MPI time is its faster form's (both MPIs)"},
	{"explain", "chromium: every round of every page against the text"},
	{"explain", "chromium: #round=N, #tree=K, an aggregated page, a screenshot"},
	{"explain", "chromium: every layout opens without a script error"},
	{"explain", "chromium: the compare page, every round of ring, RD and SP against the text"},
	{"explain", "SP on an 8x8 torus: every cell, under 2 MB"},
	{"msccl", "a GPU cluster of 8-GPU nodes: AR, RS and AG, 128 and 256 run, 1024 within every limit"},
	/* builds and simulates the 64-chip evaluation's 2304 points in process: 0.6 s of CPU,
	 * 1.8 s at load average 10 */
	{"cli", "sweep: the progress estimate within 2x of the time left, on counted work"},
	{"symm", "every example: the proof by symmetry and the expansion agree"},
	/* 8.4 million messages listed, verified and simulated twice: 9.2 s of CPU and
	 * 1.3 GiB (2026-12-06) */
	{"repeat", "512 GPUs, --sync deps: the segments MAX_PACK_MSGS holds, listed and run"},
	/* tune and sweep over many sizes: 3 to 16 s of CPU each (2026-12-05), 5 to 10
	 * times that under the sanitizers, whose CI run is the quick tier */
	{"cli", "tune: MSCCL protocol and instances per range, or as --proto and --instances fix them"},
	{"cli", "sweep: a size's row is the same whatever else the sizes line holds"},
	{"cli", "tune: the choice at every size is the fastest candidate; ranges cover the sizes once"},
	{"cli", "sim: a size's row is the same whatever else --sizes holds (auto, segments, reconfigs)"},
	/* every library algorithm and SP simulated at 1 GiB on four 16-rank
	 * topologies and four generated tori and HyperX of 9 and 15 ranks, with
	 * and without SP in the file: 3.0 s of CPU (2026-12-05) */
	{"model", "tori, a mesh, a HyperX: auto at 1 GiB never below SP or the library"},
	/* a packing's program fitted by bisection on its segments: about 2 s of CPU */
	{"cli", "build --target msccl: a packing past the limits fits with fewer segments, and runs"},
	/* tune's program search on 16 ranks, one configuration: about 6 s of CPU, most of
	 * it the executor model's flow simulation of the packing's program */
	{"cli", "tune --msccl-dir: the 16-GCD box's allreduce at 64 MiB takes packing's program"},
	/* every library algorithm and SP at 3 sizes on four 9- and 12-rank tori, meshes and
	 * HyperX, and collc sim and tune on each: about 2 s of CPU */
	{"cli", "tori, meshes, HyperX at 64 KiB, 4 MiB, 256 MiB: sim's auto and tune never below SP or the library"},
	{NULL, NULL},
};

/* Marks slow[]'s tests inactive; -1 (and a message) when one is unknown. */
static int
skip_slow(void)
{
	int skipped = 0;
	for (size_t i = 0; slow[i].suite; i++) {
		CU_pSuite s = CU_get_suite(slow[i].suite);
		CU_pTest t = s ? CU_get_test(s, slow[i].test) : NULL;
		if (!t) {
			fprintf(stderr, "test_main.c slow[]: no test '%s' in suite '%s'\n", slow[i].test,
			        slow[i].suite);
			return -1;
		}
		CU_set_test_active(t, CU_FALSE);
		skipped++;
	}
	CU_set_fail_on_inactive(CU_FALSE);
	return skipped;
}

/* --times: every test function is called through timed(), which looks up the
 * running test's own function and clock. CUnit test functions take no
 * arguments, so the table is the runner's one piece of static state. A test
 * that stops at a fatal assertion leaves no time (CUnit jumps out of it). */
typedef struct Timed {
	CU_pSuite suite;
	CU_pTest test;
	CU_TestFunc fn;
	double secs;
	int state; /* 0 not run, 1 started, 2 finished */
} Timed;

static Timed *timed_tab;
static size_t timed_n;

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
timed(void)
{
	CU_pTest t = CU_get_current_test();
	for (size_t i = 0; i < timed_n; i++)
		if (timed_tab[i].test == t) {
			double t0 = now();
			timed_tab[i].state = 1;
			timed_tab[i].fn();
			timed_tab[i].secs = now() - t0;
			timed_tab[i].state = 2;
			return;
		}
}

static int
time_tests(void)
{
	timed_n = CU_get_registry()->uiNumberOfTests;
	timed_tab = calloc(timed_n ? timed_n : 1, sizeof *timed_tab);
	if (!timed_tab)
		return -1;
	size_t n = 0;
	for (CU_pSuite s = CU_get_registry()->pSuite; s; s = s->pNext)
		for (CU_pTest t = s->pTest; t && n < timed_n; t = t->pNext) {
			timed_tab[n++] = (Timed){.suite = s, .test = t, .fn = t->pTestFunc};
			t->pTestFunc = timed;
		}
	timed_n = n;
	return 0;
}

static int
slowest_first(const void *a, const void *b)
{
	double x = ((const Timed *)a)->secs, y = ((const Timed *)b)->secs;
	return (x < y) - (x > y);
}

static void
print_times(void)
{
	qsort(timed_tab, timed_n, sizeof *timed_tab, slowest_first);
	double total = 0;
	printf("\nwall time of each test, slowest first:\n");
	for (size_t i = 0; i < timed_n; i++) {
		const Timed *e = &timed_tab[i];
		if (e->state == 1)
			printf("      -    %s: %s (stopped at a fatal assertion)\n", e->suite->pName,
			       e->test->pName);
		else if (e->state == 2)
			printf("%7.2f s  %s: %s\n", e->secs, e->suite->pName, e->test->pName);
		total += e->secs;
	}
	printf("%7.2f s  in all\n", total);
}

/* Runs everything, one suite, or one test of a suite; 2 when a name is unknown. */
static int
run(const char *suite, const char *test)
{
	if (!suite) {
		CU_basic_run_tests();
		return 0;
	}
	CU_pSuite s = CU_get_suite(suite);
	if (!s) {
		fprintf(stderr, "no suite '%s'\n", suite);
		return 2;
	}
	CU_pTest t = test ? CU_get_test(s, test) : NULL;
	if (test && !t) {
		fprintf(stderr, "no test '%s' in suite '%s'\n", test, suite);
		return 2;
	}
	if (t)
		CU_basic_run_test(s, t);
	else
		CU_basic_run_suite(s);
	return 0;
}

/* After a run: what --quick left out, the --times table; 1 when a test failed. */
static int
finish(bool quick, int skipped, bool times)
{
	if (quick)
		printf("quick: %d slow tests left out (tests/unit/test_main.c; make test runs them)\n",
		       skipped);
	if (times)
		print_times();
	return CU_get_number_of_failures() != 0;
}

/* --jobs: runner k of n runs the suites i with i mod n = k, its stdout and
 * stderr into a temporary file, printed here once every runner is done.
 * Suites keep their own temporary folders, so they can run side by side. */
static int
run_jobs(int n, bool quick, int skipped, bool times)
{
	FILE *out[16];
	pid_t pid[16];
	fflush(stdout);
	fflush(stderr);
	for (int k = 0; k < n; k++) {
		out[k] = tmpfile();
		pid[k] = out[k] ? fork() : -1;
		if (pid[k] < 0) {
			perror("run --jobs");
			return 2;
		}
		if (pid[k] == 0) {
			dup2(fileno(out[k]), 1);
			dup2(fileno(out[k]), 2);
			setvbuf(stdout, NULL, _IOLBF, 0);
			int i = 0;
			for (CU_pSuite s = CU_get_registry()->pSuite; s; s = s->pNext, i++)
				CU_set_suite_active(s, i % n == k ? CU_TRUE : CU_FALSE);
			CU_set_fail_on_inactive(CU_FALSE);
			CU_basic_run_tests();
			/* exit, not _exit: a coverage build writes its counts at exit */
			exit(finish(quick, skipped, times));
		}
	}
	int bad = 0;
	for (int k = 0; k < n; k++) {
		int st;
		waitpid(pid[k], &st, 0);
		printf("\n== runner %d of %d\n", k + 1, n);
		rewind(out[k]);
		char buf[4096];
		for (size_t got; (got = fread(buf, 1, sizeof buf, out[k])) > 0;)
			fwrite(buf, 1, got, stdout);
		fclose(out[k]);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			bad = 1;
			if (WIFSIGNALED(st))
				printf("runner %d of %d: killed by signal %d\n", k + 1, n, WTERMSIG(st));
		}
	}
	printf("\n%d runners: %s\n", n, bad ? "a test FAILED (above)" : "every test passed");
	return bad;
}

static int
usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--quick] [--times] [--jobs N] [SUITE ['TEST']]\n", argv0);
	return 2;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"quick", no_argument, NULL, 'q'},
		{"times", no_argument, NULL, 't'},
		{"jobs", required_argument, NULL, 'j'},
		{NULL, 0, NULL, 0},
	};
	bool quick = false, times = false;
	int jobs = 1;
	for (int c; (c = getopt_long(argc, argv, "+", opts, NULL)) != -1;) {
		if (c == 'q')
			quick = true;
		else if (c == 't')
			times = true;
		else if (c == 'j' && (jobs = atoi(optarg)) >= 1 && jobs <= 16)
			continue;
		else
			return usage(argv[0]);
	}
	if (argc - optind > 2)
		return usage(argv[0]);
	CU_SuiteInfo suites[] = {
		{.pName = "arena", .pTests = arena_tests},
		{.pName = "heap", .pTests = heap_tests},
		{.pName = "hash", .pTests = hash_tests},
		{.pName = "flow", .pTests = flow_tests},
		{.pName = "cutbound", .pTests = cutbound_tests},
		{.pName = "a2abound", .pTests = a2abound_tests},
		{.pName = "packing", .pTests = packing_tests},
		{.pName = "nvls", .pTests = nvls_tests},
		{.pName = "torus_boxes", .pTests = torus_boxes_tests},
		{.pName = "nic_nodes", .pTests = nic_nodes_tests},
		{.pName = "nccl_ring", .pTests = nccl_ring_tests},
		{.pName = "packing_orbit", .pTests = packing_orbit_tests},
		{.pName = "packing_shallow", .pTests = packing_shallow_tests},
		{.pName = "packing_units", .pTests = packing_units_tests},
		{.pName = "repeat", .pTests = repeat_tests},
		{.pName = "symm_segments", .pTests = symm_segments_tests},
		{.pName = "model", .pTests = model_tests},
		{.pName = "diag", .pTests = diag_tests},
		{.pName = "globals", .pTests = globals_tests},
		{.pName = "lexer", .pTests = lexer_tests},
		{.pName = "parser", .pTests = parser_tests},
		{.pName = "sema", .pTests = sema_tests},
		{.pName = "fmt", .pTests = fmt_tests},
		{.pName = "topo", .pTests = topo_tests},
		{.pName = "nccl_topo", .pTests = nccl_topo_tests},
		{.pName = "group", .pTests = group_tests},
		{.pName = "symm", .pTests = symm_tests},
		{.pName = "alg", .pTests = alg_tests},
		{.pName = "layout", .pTests = layout_tests},
		{.pName = "disjoint", .pTests = disjoint_tests},
		{.pName = "pipelined", .pTests = pipelined_tests},
		{.pName = "backend", .pTests = backend_tests},
		{.pName = "sim", .pTests = sim_tests},
		{.pName = "optical", .pTests = optical_tests},
		{.pName = "golden", .pTests = golden_tests},
		{.pName = "usersched", .pTests = usersched_tests},
		{.pName = "explain", .pTests = explain_tests, .pInitFunc = explain_setup, .pCleanupFunc = explain_teardown},
		{.pName = "msccl", .pTests = msccl_tests},
		{.pName = "chakra", .pTests = chakra_tests},
		{.pName = "perf", .pTests = perf_tests},
		{.pName = "docs", .pTests = docs_tests},
		{.pName = "robust", .pTests = robust_tests},
		{.pName = "limits", .pTests = limits_tests, .pInitFunc = limits_setup,
		 .pCleanupFunc = limits_teardown},
		{.pName = "mpi", .pTests = mpi_tests, .pInitFunc = mpi_setup, .pCleanupFunc = mpi_teardown},
		{.pName = "mpi_quiet", .pTests = mpi_quiet_tests, .pInitFunc = mpi_quiet_setup,
		 .pCleanupFunc = mpi_quiet_teardown},
		{.pName = "mpi_cal", .pTests = mpi_cal_tests},
		{.pName = "cli", .pTests = cli_tests, .pInitFunc = cli_setup, .pCleanupFunc = cli_teardown},
		{.pName = "hostile", .pTests = hostile_tests, .pInitFunc = hostile_setup,
		 .pCleanupFunc = hostile_teardown},
		CU_SUITE_INFO_NULL,
	};
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	if (CU_register_suites(suites) != CUE_SUCCESS) {
		CU_cleanup_registry();
		return 2;
	}
	int skipped = quick ? skip_slow() : 0;
	if (skipped < 0 || (times && time_tests() != 0)) {
		CU_cleanup_registry();
		return 2;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	int rc;
	if (jobs > 1 && optind == argc)
		rc = run_jobs(jobs, quick, skipped, times);
	else if ((rc = run(optind < argc ? argv[optind] : NULL,
	                   optind + 1 < argc ? argv[optind + 1] : NULL)) == 0)
		rc = finish(quick, skipped, times);
	if (times)
		free(timed_tab);
	CU_cleanup_registry();
	return rc;
}
