/*
 * test_main.c: the CUnit registry, one suite per module. Run from the
 * repository root (golden files and examples are found by relative path).
 * The exit status is non-zero when any assertion failed: CUnit's basic
 * runner does not do that by itself.
 */
#include <CUnit/Basic.h>
#include <string.h>

#include "tests.h"

int
main(int argc, char **argv)
{
	CU_SuiteInfo suites[] = {
		{.pName = "arena", .pTests = arena_tests},
		{.pName = "heap", .pTests = heap_tests},
		{.pName = "hash", .pTests = hash_tests},
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
		{.pName = "explain", .pTests = explain_tests, .pInitFunc = explain_setup, .pCleanupFunc = explain_teardown},
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
	/* collc-tests SUITE runs one suite, collc-tests SUITE 'TEST' one test */
	CU_basic_set_mode(CU_BRM_VERBOSE);
	if (argc > 1) {
		CU_pSuite s = CU_get_suite(argv[1]);
		if (!s) {
			fprintf(stderr, "no suite '%s'\n", argv[1]);
			CU_cleanup_registry();
			return 2;
		}
		CU_pTest t = argc > 2 ? CU_get_test(s, argv[2]) : NULL;
		if (argc > 2 && !t) {
			fprintf(stderr, "no test '%s' in suite '%s'\n", argv[2], argv[1]);
			CU_cleanup_registry();
			return 2;
		}
		if (t)
			CU_basic_run_test(s, t);
		else
			CU_basic_run_suite(s);
	} else {
		CU_basic_run_tests();
	}
	unsigned failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures != 0;
}
