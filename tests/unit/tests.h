/* tests.h: the CUnit suites (one per module) and the helpers they share. */
#ifndef COLLC_TESTS_H
#define COLLC_TESTS_H

#include <CUnit/CUnit.h>

#include "ast.h"
#include "ir.h"
#include "cutbound.h"

extern CU_TestInfo arena_tests[], heap_tests[], diag_tests[], globals_tests[], lexer_tests[], parser_tests[], sema_tests[],
	fmt_tests[], golden_tests[], robust_tests[], cli_tests[], topo_tests[],
	group_tests[], symm_tests[], layout_tests[], backend_tests[], alg_tests[], sim_tests[],
	mpi_tests[], msccl_tests[], usersched_tests[], disjoint_tests[], pipelined_tests[],
	chakra_tests[], perf_tests[], docs_tests[], limits_tests[], optical_tests[], explain_tests[];
extern CU_TestInfo hash_tests[]; /* base/hash.h */
extern CU_TestInfo flow_tests[]; /* ir/flow.h */
extern CU_TestInfo cutbound_tests[]; /* ir/cutbound.h */
extern CU_TestInfo a2abound_tests[]; /* ir/a2abound.c */
extern CU_TestInfo hostile_tests[]; /* issue 38's findings */
extern CU_TestInfo mpi_cal_tests[]; /* the drop-in's calibration */
extern CU_TestInfo packing_tests[]; /* ir/packing.h */
extern CU_TestInfo packing_orbit_tests[]; /* ir/packing_orbit.c */
extern CU_TestInfo packing_shallow_tests[]; /* ir/packing_shallow.c */
extern CU_TestInfo packing_units_tests[]; /* ir/packing_units.c */
extern CU_TestInfo repeat_tests[]; /* ir/repeat.c: the repeated form */
extern CU_TestInfo symm_segments_tests[]; /* symmetric(..., segments S): ir/symm.c */
/* collc sim's AG, RS and AR of path at 1 GiB in flow mode reach at least
 * `least` of the bound, by the algorithm named alg (test_packing.c) */
void assert_shares(const char *path, const char *alg, double least);
extern CU_TestInfo model_tests[]; /* ir/metrics.c against the simulator */
extern CU_TestInfo nccl_topo_tests[]; /* ir/nccl_topo.c */
extern CU_TestInfo nvls_tests[]; /* in-network reduction: Sched.fuse, alg_nvls.c */
extern CU_TestInfo torus_boxes_tests[]; /* torus_boxes: ir/topo.c, its cut bound */
extern CU_TestInfo nccl_ring_tests[]; /* NCCL's rings per channel on every cluster form: alg_ring.c */
extern CU_TestInfo nic_nodes_tests[]; /* rails, xgmi_rails with shared NICs: ir/topo.c, its cut bound */

int cli_setup(void);
int cli_teardown(void);
int hostile_setup(void);
int hostile_teardown(void);
int limits_setup(void);
int limits_teardown(void);
int explain_setup(void);
int explain_teardown(void);
int mpi_setup(void);
int mpi_teardown(void);
int mpi_quiet_setup(void);
int mpi_quiet_teardown(void);
extern CU_TestInfo mpi_quiet_tests[]; /* a call the MPI drop-in passes asks MPI nothing */

/* Open MPI's launcher as the MPI tests run it: as root or not, 2 cores
 * oversubscribed, ranks that yield when idle */
#define MPIRUN "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 " \
               "OMPI_MCA_rmaps_base_oversubscribe=1 mpirun --oversubscribe --bind-to none"

/* The result of running the front end on a text, diagnostics captured. */
typedef struct Checked {
	Arena arena;
	File *file;
	int errors;
	char *diag; /* everything diag printed (malloc'd) */
} Checked;

/* One small declaration of every topology form, indexed by TopoKind
 * (helpers.c): "torus(4, 4)". */
extern const char *const topo_form_decl[];

/* Parses and (when the parse is clean) checks `text` as file `name`. */
void check_text(Diag *, Checked *, const char *name, const char *text, size_t len);
void check_str(Diag *, Checked *, const char *text);
/* check_text, then (when clean) lower to the IR and verify every schedule,
 * as the driver does (lower_verified). */
void check_built(Diag *, Checked *, const char *name, const char *text, size_t len);
/* check_str, then (when clean) lower into *p for `size` bytes (what a
 * size-chosen schedule is built for; 0 as a zeroed Prog) and verify every
 * schedule; 0, or -1 with the diagnostics of every stage in c->diag. */
int lower_str(Diag *, const char *text, double size, Checked *, Prog *p);
void checked_free(Checked *);
/* The calibration of tests/mpi/hostile.coll's drop-in at path, as the
 * library writes it (test_mpi_cal.c): the header, then for each of the
 * 4-rank entries (0 to 4) rows from 0 to no bound, each following the
 * last, each giving its sizes to the schedule only where it measured
 * faster than MPI's by more than the noise in every time, made of `fixed`
 * iterations a round (0: OSU's count at most); with `before` (the path of
 * the first launch's), a second launch added to it: each time the better
 * of the two, the noise at least the first's. "" or what is wrong. */
const char *calibration_wrong(const char *path, int fixed, const char *before);
/* The canonical form of a clean Checked (malloc'd). */
char *fmt_string(const File *);
/* Reads a whole file into memory (malloc'd, NUL-terminated), or NULL. */
char *slurp(const char *path, size_t *len);
/* A wall-clock limit of `seconds` on an idle machine, scaled by the load:
 * times 1 + the load average per core (/proc/loadavg), so that a test's
 * time limit holds on the shared, loaded machine too. */
int load_scaled(int seconds);
/* Writes text to dir/name. */
void write_in(const char *dir, const char *name, const char *text);
/* A new temporary file open for writing, named from the mkstemp template
 * path (rewritten in place); asserted to open. */
FILE *temp_file(char *path);
/* `collc ARGS` (ARGS a printf format) under `ulimit -t seconds`: a limit
 * of CPU time, not wall time, since the machine may be loaded; the
 * shell's status. */
int collc_cpu_limited(int seconds, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* a and b equal up to rounding: within tol of the larger of 1, |a| and |b|. */
bool near_rel(double a, double b, double tol);
/* Splits line at its commas in place, field[i] the i-th field (at most max);
 * the number of fields. */
int csv_split(char *line, char **field, int max);
/* The busbw (bit/s) a verified schedule's link volumes allow: its most
 * loaded link sets the time, busbw (p - 1)/p x size / time (x2: allreduce). */
double volume_busbw(const Sched *);
/* collc sim's busbw and bound (GB/s) for path's collective at 1 GiB, flow mode. */
void sim_busbw(const char *path, const char *coll, double *busbw, double *bound);
/* Runs the shell command cmd: its stdout (malloc'd) and exit status. */
char *run_all(const char *cmd, int *status);
/* The cut bound of kind k on t, every node that is not a switch a rank
 * (asserted to be found). */
CutBound cut_bound_of(const Topo *t, CollKind k);

/* Whether this runner is built with AddressSanitizer (gcc says so with
 * __SANITIZE_ADDRESS__, clang with __has_feature): some cases cannot run
 * there (address-space limits) or take far too long (thousands of threads). */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif
/* Asserts that the diagnostics contain `needle`, reporting them if not. */
#define ASSERT_DIAG(c, needle)                                                        \
	CU_assertImplementation(strstr((c)->diag, (needle)) != NULL, __LINE__,            \
	                        diag_msg((c), (needle)), __FILE__, "", CU_FALSE)
const char *diag_msg(const Checked *, const char *needle);
/* Every registry algorithm on every form and kind it accepts (test_alg_forms.c). */
void test_every_form_builds(void);
void test_auto_notes_failed_candidate(void);
/* One assertion with a message built at run time (CUnit copies it). */
void assert_named(int ok, int line, const char *file, const char *fmt, ...) PRINTF_LIKE(4, 5);

#endif
