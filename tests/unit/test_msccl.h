/*
 * test_msccl.h: what the msccl suite's two files share. test_msccl.c holds
 * the reader, checker and CPU interpreter on the fixtures, the backend on
 * every example, its options and its checks, and the suite's table;
 * test_msccl_lower.c the lowering's programs (their steps, channels, thread
 * blocks and limits on chosen schedules), whose tests the table lists.
 */
#ifndef COLLC_TEST_MSCCL_H
#define COLLC_TEST_MSCCL_H

#include "backend.h"
#include "exec.h"
#include "msccl_program.h"

/* Reads (and with run, runs in every declared mode) one file; returns 0 and
 * the diagnostics in *diag. With fit, the size run is the one nearest to
 * `bytes` that the file is selected for, as `collc run` picks it. */
int run_sized(Diag *, const char *name, const char *text, size_t len, bool legacy, bool run,
              int64_t bytes, bool fit, RDtype dt, char **diag);
/* run_sized at exactly `bytes`. */
int run_text(Diag *, const char *name, const char *text, size_t len, bool legacy, bool run,
             int64_t bytes, RDtype dt, char **diag);
/* Builds `text`'s first collective with `bo`; the XML (malloc'd) or NULL
 * after an error, whose diagnostics go to *diag. */
char *build_xml(Diag *, const char *text, const BuildOpts *bo, size_t *xlen, char **diag);
/* build_xml, asserting (at line) that the case fmt names builds; NULL if not. */
char *built_xml(Diag *, int line, const char *text, const BuildOpts *bo, size_t *xlen,
                const char *fmt, ...) PRINTF_LIKE(6, 7);

/* test_msccl_lower.c */
void test_fused_steps(void);
void test_ring_vs_msccl_tools(void);
void test_fan_in_chains(void);
void test_library_algorithms(void);
void test_two_children_one_round(void);
void test_alltoall_in_place(void);
void test_channels_error_closest(void);
void test_spine_leaf(void);
void test_one_program(void);
void test_scale_128_256(void);
void test_gpu_cluster(void);
void test_allgather_race(void);
void test_broadcast_reduce(void);
void test_gpu_map(void);
void test_copy_home_runs(void);
void test_layout_runs(void);

#endif
