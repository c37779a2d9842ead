/*
 * test_main.c: the CUnit registry, one suite per module, and the runner's
 * command line. Run from the repository root (golden files and examples are
 * found by relative path). The exit status is non-zero when any assertion
 * failed: CUnit's basic runner does not do that by itself.
 *
 *   run [--quick] [--times] [SUITE ['TEST']]
 *
 * --quick leaves out the tests listed in slow[] below (`make check`); --times
 * prints each test's wall time after the run, slowest first, which is how
 * slow[] is chosen (docs/testing.md, "The quick tier").
 */
#include <CUnit/Basic.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests.h"

/* The tests `--quick` leaves out: each took 2 s or more alone (`run --times`
 * on the 2-core machine, 2026-12-02); together they are most of `make test`'s
 * time. Every suite keeps its other tests, so the quick tier still reaches
 * every module. A name here that is not a test is an error (a renamed test
 * must not slip back into the quick tier unnoticed, or out of this list). */
static const struct {
	const char *suite, *test;
} slow[] = {
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
	free(timed_tab);
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

static int
usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--quick] [--times] [SUITE ['TEST']]\n", argv0);
	return 2;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"quick", no_argument, NULL, 'q'},
		{"times", no_argument, NULL, 't'},
		{NULL, 0, NULL, 0},
	};
	bool quick = false, times = false;
	for (int c; (c = getopt_long(argc, argv, "+", opts, NULL)) != -1;) {
		if (c == 'q')
			quick = true;
		else if (c == 't')
			times = true;
		else
			return usage(argv[0]);
	}
	if (argc - optind > 2)
		return usage(argv[0]);
	CU_SuiteInfo suites[] = {
		{.pName = "arena", .pTests = arena_tests},
		{.pName = "heap", .pTests = heap_tests},
		{.pName = "diag", .pTests = diag_tests},
		{.pName = "lexer", .pTests = lexer_tests},
		{.pName = "parser", .pTests = parser_tests},
		{.pName = "sema", .pTests = sema_tests},
		{.pName = "fmt", .pTests = fmt_tests},
		{.pName = "topo", .pTests = topo_tests},
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
		{.pName = "msccl", .pTests = msccl_tests},
		{.pName = "chakra", .pTests = chakra_tests},
		{.pName = "perf", .pTests = perf_tests},
		{.pName = "docs", .pTests = docs_tests},
		{.pName = "robust", .pTests = robust_tests},
		{.pName = "limits", .pTests = limits_tests, .pInitFunc = limits_setup,
		 .pCleanupFunc = limits_teardown},
		{.pName = "mpi", .pTests = mpi_tests, .pInitFunc = mpi_setup, .pCleanupFunc = mpi_teardown},
		{.pName = "cli", .pTests = cli_tests, .pInitFunc = cli_setup, .pCleanupFunc = cli_teardown},
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
	int rc = run(optind < argc ? argv[optind] : NULL, optind + 1 < argc ? argv[optind + 1] : NULL);
	if (rc != 0) {
		CU_cleanup_registry();
		return rc;
	}
	if (quick)
		printf("quick: %d slow tests left out (tests/unit/test_main.c; make test runs them)\n",
		       skipped);
	if (times)
		print_times();
	unsigned failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures != 0;
}
