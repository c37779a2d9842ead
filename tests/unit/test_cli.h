/* test_cli.h: what the cli suite's files share (test_cli.c, test_cli_sweep.c, test_cli_nccl.c,
 * test_cli_tune.c). */
#ifndef COLLC_TEST_CLI_H
#define COLLC_TEST_CLI_H

#include <stdbool.h>

extern char cli_tmpdir[]; /* the suite's scratch folder (cli_setup) */
/* Runs `collc ARGS`, capturing stdout and stderr; returns the exit status. */
int cli_collc(const char *args, char **out, char **err);
/* Whether NAME (in cli_tmpdir unless absolute) exists. */
bool cli_exists(const char *name);

/* test_cli_sweep.c */
void test_sweep(void);
void test_sweep_sizes(void);
void test_sweep_file(void);
void test_sweep_file_network(void);
void test_sweep_params(void);
void test_sweep_axes_registry(void);
void test_sweep_interrupt(void);
void test_sweep_estimate(void);
void test_sweep_nccl_topo(void);

/* test_cli_tune.c */
void test_tune_by_program(void);
void test_build_auto_by_program(void);
void test_tune_prog_line(void);
void test_nccl_vs_plan(void);
void test_tune_msccl_choice(void);
void test_tune_msccl_dir(void);
void test_tune_msccl_dir_two_plans(void);
void test_tune_msccl_dir_fails(void);
void test_tune_msccl_rank_form(void);
void test_tune_msccl_unfit(void);
void test_build_msccl_packing_fit(void);
void test_tune_msccl_pow2(void);
void test_never_below_sizes(void);
void test_tune_mpi_lib_gpus(void);
void test_tune_aim(void);
/* test_cli_nccl.c */
void test_nccl_choice(void);
void test_nccl_choice_csv_json(void);

#endif
