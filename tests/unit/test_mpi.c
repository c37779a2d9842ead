/*
 * test_mpi.c: the MPI backend for real. Each case is compiled by collc to
 * C with --with-main, built with mpicc -Wall -Wextra -Werror, and run under
 * mpirun (oversubscribed: this machine has 2 cores). Its main checks the
 * generated function against MPI's own collective for counts 0, 1, 2, 7,
 * 13, 61, 1024, 4099 and 65537 on int32 (exact) and float (within
 * reduction-order tolerance), and exits non-zero on any difference. Every
 * reduction operator and datatype the target promises is checked by
 * tests/mpi/ops.c, linked with the generated function. The library target
 * (mpi-lib) is run as a PMPI drop-in under an unmodified program
 * (tests/mpi/dropin.c) with both MPIs, and linked twice, under two
 * prefixes, into one program (tests/mpi/two_libs.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mpi_lib.h"
#include "tests.h"

#ifndef COLLC_BIN
#define COLLC_BIN "bin/collc"
#endif

static char dir[] = "/tmp/collc-mpi-XXXXXX";
static bool have_mpi;


int
mpi_setup(void)
{
	if (!mkdtemp(dir))
		return -1;
	/* Open MPI's session directory in our own folder: two mpiruns started at
	 * once by different processes race to create /tmp/ompi.HOST.UID */
	setenv("OMPI_MCA_orte_tmpdir_base", dir, 1);
	have_mpi = system("command -v mpicc >/dev/null && command -v mpirun >/dev/null") == 0;
	return 0;
}

int
mpi_teardown(void)
{
	char cmd[128];
	unsetenv("OMPI_MCA_orte_tmpdir_base");
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int
sh(const char *cmd)
{
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* An MPI implementation: its compiler wrapper and its launcher. */
typedef struct MpiImpl {
	const char *cc, *run;
} MpiImpl;
static const MpiImpl open_mpi = {"mpicc", MPIRUN};
/* Debian's mpich installs beside Open MPI under these names */
static const MpiImpl mpich = {"mpicc.mpich", "mpiexec.mpich"};

/* Compiles text's collective (the one named, or its only one) to C,
 * builds it with mpi's compiler (-Werror, -O2) and runs it on p ranks;
 * args for its main ("COUNT TIMES"), or "" for every count. */
static void
run_with(const MpiImpl *mpi, const char *label, const char *text, int p, const char *collective,
         const char *args)
{
	if (!have_mpi) {
		assert_named(0, __LINE__, __FILE__, "mpicc and mpirun are needed (make deps installs "
		             "openmpi-bin and libopenmpi-dev)");
		return;
	}
	char path[256], cmd[2048];
	snprintf(path, sizeof path, "%s/case.coll", dir);
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof cmd,
	         "%s build %s/case.coll --target mpi --with-main%s%s -o %s/case.c >%s/log 2>&1 && "
	         "%s -std=c11 -Wall -Wextra -Werror -O2 %s/case.c -o %s/case -lm >>%s/log 2>&1 && "
	         "%s -np %d %s/case %s >>%s/log 2>&1",
	         COLLC_BIN, dir, collective ? " --collective " : "", collective ? collective : "", dir,
	         dir, mpi->cc, dir, dir, dir, mpi->run, p, dir, args, dir);
	int rc = sh(cmd);
	char log[300];
	snprintf(log, sizeof log, "%s/log", dir);
	char *out = slurp(log, NULL);
	assert_named(rc == 0 && out && !strstr(out, "WRONG"), __LINE__, __FILE__,
	             "%s on %d ranks (%s): exit %d\n%.3000s", label, p, mpi->cc, rc, out ? out : "");
	free(out);
}

static void
run_args(const char *label, const char *text, int p, const char *collective, const char *args)
{
	run_with(&open_mpi, label, text, p, collective, args);
}

static void
run_named(const char *label, const char *text, int p, const char *collective)
{
	run_args(label, text, p, collective, "");
}

static void
run_case(const char *label, const char *text, int p)
{
	run_named(label, text, p, NULL);
}

static const struct { const char *alg, *kind; int p; const char *extra; } rank_space[] = {
	{"ring", "allreduce", 2, ""}, {"ring", "allreduce", 5, ""},
	{"ring", "allreduce", 16, ""}, {"ring(ports 2)", "reduce_scatter", 6, ""},
	{"ring(ports 2)", "allgather", 4, ""}, {"halving_doubling", "allreduce", 8, ""},
	{"halving_doubling", "allreduce", 13, ""}, {"recursive_doubling", "allgather", 6, ""},
	{"recursive_halving", "reduce_scatter", 8, ""}, {"recursive_doubling", "allreduce", 3, ""},
	{"double_binary_tree", "allreduce", 5, " chunks 4;"},
	{"double_binary_tree", "allreduce", 8, ""},
	{"bruck", "alltoall", 7, ""}, {"bruck", "allgather", 5, ""},
	{"bruck", "reduce_scatter", 6, ""}, {"bruck", "allreduce", 11, ""},
	{"pairwise", "alltoall", 4, ""}, {"pairwise", "alltoall", 7, ""},
	{"swing(bandwidth)", "allreduce", 8, ""}, {"swing(latency)", "allreduce", 6, ""},
	{"swing(bandwidth)", "reduce_scatter", 12, ""},
	{"trivance(bandwidth)", "allreduce", 9, ""}, {"trivance(latency)", "allreduce", 3, ""},
	{"binomial_tree", "broadcast", 7, " root 3;"}, {"chain(segments 3)", "reduce", 5, " root 2;"},
	{"binomial_tree", "reduce", 6, " root 0;"}, {"chain", "broadcast", 4, ""},
};

static void
test_rank_space(void)
{
	for (size_t i = 0; i < countof(rank_space); i++) {
		char text[512], label[128];
		snprintf(text, sizeof text, "topology R = ring(%d);\n"
		         "collective %s AR on R { algorithm %s;%s }\n", rank_space[i].p,
		         rank_space[i].kind, rank_space[i].alg, rank_space[i].extra);
		snprintf(label, sizeof label, "%s %s", rank_space[i].alg, rank_space[i].kind);
		run_with(&open_mpi, label, text, rank_space[i].p, NULL, "");
	}
}

/* Under MPICH: one case of each family of the rank-space table (MPICH's
 * launcher polls, so the whole table would take minutes on two cores), and
 * SP on a 3x3 torus (the symmetric form). */
static void
test_mpich(void)
{
	static const int some[] = {1, 6, 10, 12, 18, 23, 24};
	if (system("command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null") != 0) {
		assert_named(0, __LINE__, __FILE__, "mpicc.mpich and mpiexec.mpich are needed (make deps "
		             "installs mpich)");
		return;
	}
	for (size_t k = 0; k < countof(some); k++) {
		int i = some[k];
		char text[512], label[128];
		snprintf(text, sizeof text, "topology R = ring(%d);\n"
		         "collective %s AR on R { algorithm %s;%s }\n", rank_space[i].p,
		         rank_space[i].kind, rank_space[i].alg, rank_space[i].extra);
		snprintf(label, sizeof label, "%s %s", rank_space[i].alg, rank_space[i].kind);
		run_with(&mpich, label, text, rank_space[i].p, NULL, "");
	}
	run_with(&mpich, "SP 3x3", "topology T = torus(3, 3);\ngroup G on T { translate; }\n"
	         "tree B = bfs(T, root 0);\n"
	         "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n", 9, NULL,
	         "");
}

static void
test_torus(void)
{
	run_case("SP allreduce on a 4x4 torus",
	         "topology T = torus(4, 4);\n"
	         "group G on T { translate; map (x, y) -> (-x, -y); map (x, y) -> (y, x); }\n"
	         "tree B = bfs(T, root (0, 0));\n"
	         "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n", 16);
	run_case("SP reduce_scatter on a 3x3 torus",
	         "topology T = torus(3, 3);\n"
	         "group G on T { translate; map (x, y) -> (-x, -y); map (x, y) -> (y, x); }\n"
	         "tree B = bfs(T, root (0, 0));\n"
	         "collective reduce_scatter AR on T { algorithm symmetric(trees B, group G); }\n", 9);
	run_case("SP allgather on a 3x3 torus, two trees",
	         "topology T = torus(3, 3);\n"
	         "group G on T { translate; map (x, y) -> (-x, -y); }\n"
	         "trees P = balanced_pair(T, root (0, 0));\n"
	         "collective allgather AR on T { algorithm symmetric(trees P, group G); }\n", 9);
	run_case("SP allreduce on a ring of 8 (the benchmark's schedule, reordered chunks)",
	         "topology R = ring(8);\ngroup G on R { translate; map x -> -x; }\n"
	         "tree B = bfs(R, root 0);\n"
	         "collective allreduce AR on R { algorithm symmetric(trees B, group G); }\n", 8);
	run_case("bucket on a 3x3 torus",
	         "topology T = torus(3, 3);\n"
	         "collective allreduce AR on T { algorithm bucket; }\n", 9);
	run_case("swing(bandwidth) on a 4x4 torus",
	         "topology T = torus(4, 4);\n"
	         "collective allreduce AR on T { algorithm swing(bandwidth); }\n", 16);
	run_case("multiport_ring on a 3x3 torus",
	         "topology T = torus(3, 3);\n"
	         "collective allreduce AR on T { algorithm multiport_ring; }\n", 9);
	run_case("tto on a 3x3 mesh without (2, 0), two-hop edges past it",
	         "topology M = mesh(3, 3);\n"
	         "collective allreduce AR on M { algorithm tto; ranks 0..5, 7..8; }\n", 8);
}

/* Bridge's schedules on an optical ring of 8: every kind, the baselines, a
 * mirrored copy and blocks of 2 nodes per port pair; the ranks wait at a
 * barrier where the circuits are rewired. */
static void
test_optical(void)
{
	static const struct {
		const char *kind, *alg;
		int ports;
	} cases[] = {
		{"alltoall", "bridge(reconfigs 1)", 16},
		{"reduce_scatter", "bridge(reconfigs 2)", 16},
		{"allgather", "bridge(reconfigs 1)", 16},
		{"allreduce", "bridge(reconfigs 1)", 16},
		{"alltoall", "s_bruck", 16},
		{"allgather", "g_bruck", 16},
		{"allreduce", "r_hd(reconfigs 1)", 16},
		{"allreduce", "bridge(mirrored)", 8},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[512], label[128];
		snprintf(text, sizeof text,
		         "network { reconfig_delay = 1 us; }\ntopology O = optical_ring(8, ports %d);\n"
		         "collective %s X on O { algorithm %s; }\n",
		         cases[i].ports, cases[i].kind, cases[i].alg);
		snprintf(label, sizeof label, "%s %s on optical_ring(8, ports %d)", cases[i].alg,
		         cases[i].kind, cases[i].ports);
		run_case(label, text, 8);
	}
}

/* What the generated file says of its chunk order for text's collective. */
static char *
chunk_order_note(const char *text)
{
	char path[256], cmd[1024];
	snprintf(path, sizeof path, "%s/order.coll", dir);
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "%s build %s --target mpi -o %s/order.c", COLLC_BIN, path, dir);
	if (sh(cmd) != 0)
		return NULL;
	snprintf(path, sizeof path, "%s/order.c", dir);
	return slurp(path, NULL);
}

/* The generated main's busbw is algbw times nccl-tests' factor for the kind:
 * 2(p-1)/p for allreduce, (p-1)/p for reduce-scatter and allgather, on p
 * ranks; read from the program --with-main writes. */
static void
test_busbw_factor(void)
{
	static const struct { const char *kind, *alg; double twice; } kinds[] = {
		{"allreduce", "ring", 2}, {"reduce_scatter", "ring", 1}, {"allgather", "ring", 1}};
	static const int ranks[] = {2, 6, 8};
	int read = 0;
	for (size_t k = 0; k < countof(kinds); k++)
		for (size_t r = 0; r < countof(ranks); r++) {
			char path[256], cmd[1024];
			snprintf(path, sizeof path, "%s/bus.coll", dir);
			FILE *f = fopen(path, "w");
			CU_ASSERT_PTR_NOT_NULL_FATAL(f);
			fprintf(f, "topology R = ring(%d);\ncollective %s X on R { algorithm %s; }\n",
			        ranks[r], kinds[k].kind, kinds[k].alg);
			fclose(f);
			snprintf(cmd, sizeof cmd, "%s build %s --target mpi --with-main -o %s/bus.c",
			         COLLC_BIN, path, dir);
			CU_ASSERT_EQUAL_FATAL(sh(cmd), 0);
			snprintf(path, sizeof path, "%s/bus.c", dir);
			char *c = slurp(path, NULL);
			CU_ASSERT_PTR_NOT_NULL_FATAL(c);
			const char *def = strstr(c, "#define BUS_FACTOR ");
			double factor = -1, p = ranks[r];
			if (def && sscanf(def, "#define BUS_FACTOR %lf", &factor) == 1)
				read++;
			double want = kinds[k].twice * (p - 1) / p;
			assert_named(fabs(factor - want) < 1e-12, __LINE__, __FILE__,
			             "%s on %d ranks: BUS_FACTOR %.17g, nccl-tests' %.17g", kinds[k].kind,
			             ranks[r], factor, want);
			/* and the busbw column is algbw times it */
			CU_ASSERT_PTR_NOT_NULL(strstr(c, "return BUS_FACTOR;"));
			CU_ASSERT_PTR_NOT_NULL(strstr(c, "algbw, algbw * collc_bus_factor()"));
			free(c);
		}
	CU_ASSERT_EQUAL(read, (int)(countof(kinds) * countof(ranks)));
}

/* Chunks are ordered so that messages are runs of the buffer (no packing);
 * an order that would pack more than the schedule's own is not taken. */
static void
test_chunk_order(void)
{
	static const struct { const char *text, *note; } cases[] = {
		{"topology R = ring(8);\ngroup G on R { translate; map x -> -x; }\n"
		 "tree B = bfs(R, root 0);\n"
		 "collective allreduce AR on R { algorithm symmetric(trees B, group G); }\n",
		 "0 chunks travel in messages that are not one run of the buffer (an indexed datatype each), 192 in "
		 "the schedule's own order"},
		{"topology R = ring(8);\ncollective allreduce AR on R { algorithm swing(bandwidth); }\n",
		 "0 chunks travel in messages that are not one run of the buffer (an indexed datatype each), 192 in "
		 "the schedule's own order"},
		{"topology T = torus(3, 3);\ncollective allreduce AR on T { algorithm bucket; }\n",
		 "0 chunks travel in messages that are not one run of the buffer (an indexed datatype each), 432 in "
		 "the schedule's own order"},
		{"topology T = torus(4, 4);\n"
		 "group G on T { translate; map (x, y) -> (-x, -y); map (x, y) -> (y, x); }\n"
		 "tree B = bfs(T, root (0, 0));\n"
		 "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n",
		 "1280 chunks travel in messages that are not one run of the buffer (an indexed datatype each), 1792 in "
		 "the schedule's own order"},
		/* alltoall chunks stay in their pair's block: nothing better than Bruck's own */
		{"topology R = ring(7);\ncollective alltoall AR on R { algorithm bruck; }\n",
		 "63 chunks travel in messages that are not one run of the buffer (an indexed datatype each), 63 in "
		 "the schedule's own order"},
		{"topology R = ring(16);\ncollective allreduce AR on R { algorithm ring; }\n",
		 "0 chunks travel in messages that are not one run of the buffer (an indexed datatype each), 0 in "
		 "the schedule's own order"},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		char *c = chunk_order_note(cases[i].text);
		assert_named(c && strstr(c, cases[i].note), __LINE__, __FILE__,
		             "case %zu: wanted \"%s\" in the generated file", i, cases[i].note);
		free(c);
	}
	/* the schedule on a ring of 8: pairs {0, 2}, {1, 5} ... travel together */
	char *c = chunk_order_note(cases[0].text);
	char *q = c ? strstr(c, "chunk_piece[16] = {") : NULL;
	int piece[16] = {0}, n = 0;
	for (q = q ? strchr(q, '{') + 1 : NULL; q && n < 16; n++) {
		piece[n] = (int)strtol(q, &q, 10);
		q += strspn(q, ", \n\t");
	}
	assert_named(n == 16 && abs(piece[0] - piece[2]) == 1 && abs(piece[1] - piece[5]) == 1 &&
	             abs(piece[3] - piece[8]) == 1 && abs(piece[11] - piece[14]) == 1,
	             __LINE__, __FILE__, "SP on a ring of 8: paired chunks are not neighbours");
	free(c);
}

/* Each rank's plan of a symmetric schedule, derived through the group's
 * inverses, against the definition (every element applied to every base
 * transfer): tests/mpi/plan.c, compiled with the generated program. Affine
 * groups (translations and turns, x -> a x + b on full(7)) and permutation
 * groups (the Petersen graph's, automorphisms(), spine-leaf with switches). */
static void
test_symmetric_plans(void)
{
	static const struct { const char *file, *collective; } cases[] = {
		{"examples/sp-torus-8x8.coll", "AR"},
		{"examples/full-affine-group.coll", "SP"},
		{"examples/full-affine-group.coll", "SP_all"},
		{"examples/graph-petersen.coll", "SP"},
		{"examples/graph-petersen.coll", "SP_aut"},
		{"examples/graph-petersen.coll", "RS"},
		{"examples/spine-leaf.coll", "SP"},
	};
	if (!have_mpi) {
		assert_named(0, __LINE__, __FILE__, "mpicc is needed");
		return;
	}
	for (size_t i = 0; i < countof(cases); i++) {
		char cmd[2048];
		snprintf(cmd, sizeof cmd,
		         "%s build %s --target mpi --collective %s -o %s/plan_case.c >%s/plog 2>&1 && "
		         "grep -q 'define COLLC_SYMMETRIC 1' %s/plan_case.c && "
		         "mpicc -std=c11 -Wall -Wextra -Werror -O2 '-DCOLLC_FILE=\"%s/plan_case.c\"' "
		         "tests/mpi/plan.c -o %s/plan >>%s/plog 2>&1 && %s/plan >>%s/plog 2>&1",
		         COLLC_BIN, cases[i].file, cases[i].collective, dir, dir, dir, dir, dir, dir, dir,
		         dir);
		int rc = sh(cmd);
		char log[300];
		snprintf(log, sizeof log, "%s/plog", dir);
		char *out = slurp(log, NULL);
		assert_named(rc == 0 && out && strstr(out, "ok: "), __LINE__, __FILE__,
		             "%s --collective %s: exit %d\n%.3000s", cases[i].file, cases[i].collective,
		             rc, out ? out : "");
		free(out);
	}
}

static void
test_wrong_size(void)
{
	if (!have_mpi) {
		assert_named(0, __LINE__, __FILE__, "mpicc and mpirun are needed");
		return;
	}
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
	         "printf 'topology R = ring(4);\\ncollective allreduce AR on R { algorithm ring; }\\n' "
	         ">%s/w.coll && %s build %s/w.coll --target mpi -o %s/w.c && "
	         "mpicc -std=c11 -Wall -Wextra -Werror %s/w.c tests/mpi/wrong_size.c -o %s/w && "
	         "%s -np 2 %s/w >%s/wlog 2>&1",
	         dir, COLLC_BIN, dir, dir, dir, dir, MPIRUN, dir, dir);
	int rc = sh(cmd);
	char log[300];
	snprintf(log, sizeof log, "%s/wlog", dir);
	char *out = slurp(log, NULL);
	assert_named(rc == 0 && out && strstr(out, "comm-error comm-error"), __LINE__, __FILE__,
	             "a 4-rank schedule on 2 ranks returns MPI_ERR_COMM: exit %d, %s", rc,
	             out ? out : "");
	free(out);
}

/* Every operator and datatype the MPI target promises, against MPI's own
 * collective (tests/mpi/ops.c), for each reducing collective. */
static void
test_ops_and_types(void)
{
	static const struct { int kind; const char *topo, *decl; int p; } cases[] = {
		{1, "ring(4)", "collective allreduce X on R { algorithm ring; }", 4},
		{1, "ring(4)", "collective allreduce X on R { algorithm recursive_doubling; }", 4},
		{2, "ring(3)", "collective reduce_scatter X on R { algorithm ring; }", 3},
		{3, "ring(4)", "collective reduce X on R { algorithm binomial_tree; root 1; }", 4},
		/* symmetric, with messages of several runs: indexed datatypes */
		{1, "torus(3, 3)", "group G on R { translate; }\\ntree B = bfs(R, root (0, 0));\\n"
		 "collective allreduce X on R { algorithm symmetric(trees B, group G); }", 9},
	};
	if (!have_mpi) {
		assert_named(0, __LINE__, __FILE__, "mpicc and mpirun are needed");
		return;
	}
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char cmd[2048];
		snprintf(cmd, sizeof cmd,
		         "printf 'topology R = %s;\\n%s\\n' >%s/o.coll && "
		         "%s build %s/o.coll --target mpi -o %s/o.c >%s/olog 2>&1 && "
		         "mpicc -std=c11 -Wall -Wextra -Werror -DKIND=%d %s/o.c tests/mpi/ops.c "
		         "-o %s/o >>%s/olog 2>&1 && %s -np %d %s/o >>%s/olog 2>&1",
		         cases[i].topo, cases[i].decl, dir, COLLC_BIN, dir, dir, dir, cases[i].kind, dir,
		         dir, dir, MPIRUN, cases[i].p, dir, dir);
		int rc = sh(cmd);
		char log[300];
		snprintf(log, sizeof log, "%s/olog", dir);
		char *out = slurp(log, NULL);
		assert_named(rc == 0 && out && strstr(out, "ok: 112 cases") && !strstr(out, "WRONG"),
		             __LINE__, __FILE__, "%s: every op and datatype as MPI: exit %d\n%.3000s",
		             cases[i].decl, rc, out ? out : "");
		free(out);
	}
}

/* The generated program compiles warning-free at -O2 under Open MPI's and
 * MPICH's headers, in both forms, and its main prints nccl-tests' columns:
 * size and count of the whole collective, busbw = algbw x (p-1)/p. */
static void
test_both_mpis_and_columns(void)
{
	if (!have_mpi || system("command -v mpicc.mpich >/dev/null") != 0) {
		assert_named(0, __LINE__, __FILE__, "mpicc, mpirun and mpicc.mpich are needed (make "
		             "deps installs openmpi-bin, libopenmpi-dev and mpich)");
		return;
	}
	static const char *const cases[] = {
		"topology R = ring(4);\ncollective allgather AG on R { algorithm ring; }\n",
		"topology R = ring(4);\ngroup G on R { translate; }\ntree B = bfs(R, root 0);\n"
		"collective allgather AG on R { algorithm symmetric(trees B, group G); }\n",
	};
	for (size_t i = 0; i < countof(cases); i++) {
		char path[256], cmd[4096];
		snprintf(path, sizeof path, "%s/cols.coll", dir);
		FILE *f = fopen(path, "w");
		fputs(cases[i], f);
		fclose(f);
		snprintf(cmd, sizeof cmd,
		         "%s build %s --target mpi --with-main -o %s/cols.c >%s/clog 2>&1 && "
		         "mpicc.mpich -std=c11 -Wall -Wextra -Werror -O2 %s/cols.c -o %s/cols.mpich -lm "
		         ">>%s/clog 2>&1 && "
		         "mpicc -std=c11 -Wall -Wextra -Werror -O2 %s/cols.c -o %s/cols -lm >>%s/clog 2>&1 "
		         "&& %s -np 4 %s/cols 1000 2 >%s/cout 2>>%s/clog",
		         COLLC_BIN, path, dir, dir, dir, dir, dir, dir, dir, dir, MPIRUN, dir, dir, dir);
		int rc = sh(cmd);
		snprintf(path, sizeof path, "%s/clog", dir);
		char *log = slurp(path, NULL);
		snprintf(path, sizeof path, "%s/cout", dir);
		char *out = slurp(path, NULL);
		assert_named(rc == 0, __LINE__, __FILE__, "case %zu: exit %d\n%.3000s", i, rc,
		             log ? log : "");
		const char *head = out ? strstr(out, "#       size         count   type  redop") : NULL;
		const char *row = out ? strstr(out, " float ") : NULL;
		while (row && row > out && row[-1] != '\n')
			row--;
		long size = 0, count = 0;
		double t[2] = {0}, alg[2] = {0}, bus[2] = {0};
		char type[16] = "", redop[16] = "", check[16] = "";
		int n = row ? sscanf(row, "%ld %ld %15s %15s %lf %lf %lf %lf %lf %lf %15s", &size, &count,
		                     type, redop, &t[0], &alg[0], &bus[0], &t[1], &alg[1], &bus[1],
		                     check) : 0;
		assert_named(head && n == 11 && size == 4000 * 4 && count == 4000 &&
		             strcmp(redop, "none") == 0 && strcmp(check, "ok") == 0 &&
		             fabs(bus[0] - 0.75 * alg[0]) <= 0.01 && fabs(bus[1] - 0.75 * alg[1]) <= 0.01,
		             __LINE__, __FILE__, "case %zu: nccl-tests columns (size 16000 B, count 4000, "
		             "busbw 3/4 of algbw):\n%s", i, out ? out : "");
		free(log);
		free(out);
	}
}

/* The user-schedule examples (examples/user-*.coll), one collective each. */
static void
test_user_schedules(void)
{
	static const struct { const char *file, *collective; int p; } cases[] = {
		{"examples/user-ring.coll", "RING", 8},
		{"examples/user-ring-bidirectional.coll", "BIRING", 8},
		{"examples/user-recursive-doubling.coll", "RD", 8},
		{"examples/user-recursive-doubling.coll", "AG", 8},
		{"examples/user-bruck.coll", "BRUCK", 6},
		{"examples/user-swing-2d.coll", "SWING", 16},
		{"examples/user-sp-ring.coll", "SP", 8},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		char *text = slurp(cases[i].file, NULL);
		char label[160];
		snprintf(label, sizeof label, "%s --collective %s", cases[i].file, cases[i].collective);
		assert_named(text != NULL, __LINE__, __FILE__, "read %s", cases[i].file);
		if (text)
			run_named(label, text, cases[i].p, cases[i].collective);
		free(text);
	}
}

/* pipelined_trees over link-disjoint trees of 4x4 supermeshes (16 ranks). */
static void
test_pipelined_trees(void)
{
	static const struct { const char *variant, *kind, *sets; int segments; } cases[] = {
		{"bi", "allreduce", "R0", 3},
		{"alter", "allreduce", "R0", 3},
		{"alter", "reduce_scatter", "R0, R1, R2, R3", 2},
		{"alter", "allgather", "R0, R1, R2, R3", 2},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		char text[1024], label[128];
		snprintf(text, sizeof text, "topology S = supermesh(4, 4, %s);\n"
		         "trees R0 = disjoint(S, roots 0, 3, 15, 12);\n"
		         "trees R1 = disjoint(S, roots 1, 7, 14, 8);\n"
		         "trees R2 = disjoint(S, roots 2, 11, 13, 4);\n"
		         "trees R3 = disjoint(S, roots 5, 6, 10, 9);\n"
		         "collective %s X on S { algorithm pipelined_trees(trees %s, segments %d); }\n",
		         cases[i].variant, cases[i].kind, cases[i].sets, cases[i].segments);
		snprintf(label, sizeof label, "pipelined_trees %s on supermesh %s", cases[i].kind,
		         cases[i].variant);
		run_case(label, text, 16);
	}
}

/* examples/supermesh-bi-6x6.coll and 6x6 SMAlter: pipelined trees on 36
 * ranks, every collective, at one count (4099: blocks that do not divide evenly) called
 * once; each call is 118 to 270 rounds, and 36 ranks share this machine's
 * two cores, so every count of the default main would take minutes. */
static void
test_pipelined_6x6(void)
{
	char *text = slurp("examples/supermesh-bi-6x6.coll", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	static const char *const names[] = {"AR", "RS", "AG"};
	for (int i = 0; i < 3; i++) {
		char label[128];
		snprintf(label, sizeof label, "supermesh-bi-6x6.coll %s", names[i]);
		run_args(label, text, 36, names[i], "4099 1");
	}
	free(text);
	/* 6x6 SMAlter, its root sets built by pipelined_trees itself */
	static const char *const kinds[] = {"allreduce", "reduce_scatter", "allgather"};
	for (int i = 0; i < 3; i++) {
		char alter[256], label[128];
		snprintf(alter, sizeof alter, "topology S = supermesh(6, 6, alter);\n"
		         "collective %s X on S { algorithm pipelined_trees(segments 2); }\n", kinds[i]);
		snprintf(label, sizeof label, "pipelined_trees %s on 6x6 SMAlter", kinds[i]);
		run_args(label, alter, 36, NULL, "4099 1");
	}
}

/* ---- the library target (mpi-lib) ---- */

/* The counts a drop-in's COLLC_MPI_REPORT lines give ("P: rank R: ran A n
 * B m ...; passed to MPI k"): per rank, the calls ran and passed. -1 for a
 * rank without a line. */
static void
report_counts(const char *out, const char *lib, int p, long *ran, long *passed)
{
	for (int r = 0; r < p; r++)
		ran[r] = passed[r] = -1;
	char head[64];
	snprintf(head, sizeof head, "%s: rank ", lib);
	for (const char *q = out; (q = strstr(q, head)); q++) {
		int r = atoi(q + strlen(head));
		const char *e = strchr(q, ';'), *t = strstr(q, ": ran ");
		if (r < 0 || r >= p || !e || !t || t > e)
			continue;
		long n = 0;
		for (t += 5; t < e;) { /* " NAME n" pairs */
			t += strspn(t, " ");
			t += strcspn(t, " ;");
			n += strtol(t, (char **)&t, 10);
		}
		ran[r] = n;
		passed[r] = strtol(e + strlen("; passed to MPI"), NULL, 10);
	}
}

/* tests/mpi/dropin.c, built with mpi's compiler and no collc header, run
 * on 4 ranks with the library of tests/mpi/dropin.coll LD_PRELOADed (its
 * -DCOLLC_PMPI build; env: the launcher's options that set the ranks'
 * environment, the preload list following) and tests/mpi/leaks.c beside
 * it: every result right; each rank's report says the library ran exactly
 * the calls the plan covers and passed the others; each process leaves no
 * MPI object of the drop-in's or the program's behind after MPI_Finalize,
 * and MPICH's datatype engine reports no leaked handle. The program's
 * counts go to *covered and *other (-1 if it printed none). */
static void
run_dropin(const MpiImpl *mpi, const char *env, bool tuned, long *covered, long *other)
{
	*covered = *other = -1;
	if (!have_mpi || system("command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich "
	                        ">/dev/null") != 0) {
		assert_named(0, __LINE__, __FILE__, "Open MPI and MPICH are needed (make deps)");
		return;
	}
	char cmd[4096];
	/* the library of the file's collectives, or of collc tune's plan over
	 * them from 4 bytes to 1 MiB (every size dropin.c calls) */
	char make[1024];
	if (tuned)
		snprintf(make, sizeof make, "%s tune tests/mpi/dropin.coll --sizes 4B..1MiB --mode flow "
		         "--mpi-lib %s/drop --prefix drop -o %s/plan.txt", COLLC_BIN, dir, dir);
	else
		snprintf(make, sizeof make, "%s build tests/mpi/dropin.coll --target mpi-lib --prefix drop "
		         "-o %s/drop", COLLC_BIN, dir);
	snprintf(cmd, sizeof cmd,
	         "rm -rf %s/drop && %s >%s/dlog 2>&1 && "
	         "%s -std=c11 -Wall -Wextra -Werror -O2 -fPIC -shared -DCOLLC_PMPI %s/drop/drop.c "
	         "-o %s/drop/libdrop.so >>%s/dlog 2>&1 && "
	         "%s -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 -fPIC -shared tests/mpi/leaks.c "
	         "-o %s/drop/libleaks.so >>%s/dlog 2>&1 && "
	         "%s -std=c11 -Wall -Wextra -Werror -O2 tests/mpi/dropin.c -o %s/drop/dropin "
	         ">>%s/dlog 2>&1 && "
	         "%s -np 4 %s%s/drop/libdrop.so:%s/drop/libleaks.so %s/drop/dropin >>%s/dlog 2>&1",
	         dir, make, dir, mpi->cc, dir, dir, dir, mpi->cc, dir, dir, mpi->cc, dir, dir,
	         mpi->run, env, dir, dir, dir, dir);
	int rc = sh(cmd);
	char log[300];
	snprintf(log, sizeof log, "%s/dlog", dir);
	char *out = slurp(log, NULL);
	long ran[4], passed[4];
	const char *calls = out ? strstr(out, "calls: covered ") : NULL;
	if (calls)
		sscanf(calls, "calls: covered %ld other %ld", covered, other);
	report_counts(out ? out : "", "drop", 4, ran, passed);
	bool counts = *covered > 0 && *other > 0;
	for (int r = 0; r < 4; r++)
		counts &= ran[r] == *covered && passed[r] == *other;
	assert_named(rc == 0 && out && strstr(out, "ok: ") && counts, __LINE__, __FILE__,
	             "the drop-in under %s: exit %d, covered %ld other %ld, rank 0 ran %ld passed "
	             "%ld\n%.3000s", mpi->cc, rc, *covered, *other, ran[0], passed[0], out ? out : "");
	/* every process's account, and nothing MPI calls leaked */
	static const char clean[] = "mpi objects left: 0 datatypes, 0 communicators, 0 keys, "
	                            "0 requests\n";
	int nclean = 0;
	for (const char *q = out; q && (q = strstr(q, clean)); q += sizeof clean - 1)
		nclean++;
	assert_named(out && nclean == 4 && !strstr(out, "leaked") && !strstr(out, "yaksa"),
	             __LINE__, __FILE__, "the drop-in under %s leaves MPI objects at MPI_Finalize "
	             "(%d of 4 processes clean)\n%.3000s", mpi->cc, nclean, out ? out : "");
	free(out);
}

/* Both MPIs: the program makes the same calls under each, so the drop-in
 * covers the same ones and passes the same others. */
static void
dropin_both(bool tuned)
{
	long cov_o, oth_o, cov_m, oth_m;
	/* each launcher's way of setting the ranks' environment, up to the path */
	run_dropin(&open_mpi, "-x COLLC_MPI_REPORT=1 -x LD_PRELOAD=", tuned, &cov_o, &oth_o);
	run_dropin(&mpich, "-genv COLLC_MPI_REPORT 1 -genv LD_PRELOAD ", tuned, &cov_m, &oth_m);
	assert_named(cov_o > 0 && cov_o == cov_m && oth_o == oth_m, __LINE__, __FILE__,
	             "the drop-in covers %ld calls and passes %ld under Open MPI, %ld and %ld under "
	             "MPICH", cov_o, oth_o, cov_m, oth_m);
}

static void
test_lib_dropin(void)
{
	dropin_both(false);
}

/* The same program with the library of collc tune's plan (several ranges
 * per collective, each its fastest schedule) preloaded. */
static void
test_tuned_dropin(void)
{
	dropin_both(true);
	char path[300];
	snprintf(path, sizeof path, "%s/plan.txt", dir);
	char *plan = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
	CU_ASSERT_PTR_NOT_NULL(strstr(plan, "plan:\n"));
	free(plan);
}

/* tests/mpi/hostile.c's cases (issue 37), each run with the drop-in of
 * tests/mpi/hostile.coll and tests/mpi/leaks.c preloaded under mpi (env:
 * its launcher's options up to the preload list), under a time limit:
 * every result right, the report's counts the program's (what the drop-in
 * runs, what it passes to MPI), nothing left at MPI_Finalize. */
static void
run_hostile(const MpiImpl *mpi, const char *env, const char *tag)
{
	/* plan: 1 calibrates (to cal.TAG), 4 adds another launch's to it
	 * (COLLC_MPI_CALIBRATE_ADD), 2 follows that, 3 follows a file
	 * that is not a calibration of this library (Open MPI only: the file is
	 * read alike under both). MPICH polls, and with 4 ranks on this
	 * machine's 2 loaded cores each call and barrier costs 20 to 50 ms, so
	 * under MPICH the calibration measures 64 B only, 1 iteration a round,
	 * and osu makes 1 call each way a size after 1 warm-up (about 20 s in
	 * all, measured 2026-12-05; up to 4 KiB it took 116 s) */
	static const struct { const char *name, *args[2]; int p, plan; } cases[] = {
		{"big", {"", ""}, 2, 0}, {"finalize", {"", ""}, 4, 0}, {"session", {"", ""}, 4, 0},
		{"threads", {"", ""}, 4, 0}, {"bytes", {"", ""}, 4, 0}, {"vector", {"", ""}, 4, 0},
		{"osu", {" 1 1 0", " 1 1 0"}, 4, 1}, {"osu", {" 1 1 0", " 1 1 0"}, 4, 4},
		{"osu", {" 10 2 2", " 1 1 1"}, 4, 2},
		{"osu", {" 1 1 0", NULL}, 4, 3}};
	bool ompi = mpi == &open_mpi;
	char cmd[4096], log[300];
	snprintf(log, sizeof log, "%s/hostile/%s.log", dir, tag);
	snprintf(cmd, sizeof cmd,
	         "cd %s/hostile && "
	         "%s -std=c11 -Wall -Wextra -Werror -O2 -fPIC -shared -DCOLLC_PMPI lib/hostile.c "
	         "-o libh.%s.so >%s 2>&1 && "
	         "%s -std=c11 -O2 -fPIC -shared %s/tests/mpi/leaks.c -o libleaks.%s.so >>%s 2>&1 && "
	         "%s -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 -pthread %s/tests/mpi/hostile.c "
	         "-o hostile.%s >>%s 2>&1",
	         dir, mpi->cc, tag, log, mpi->cc, getenv("PWD") ? getenv("PWD") : ".", tag, log,
	         mpi->cc, getenv("PWD") ? getenv("PWD") : ".", tag, log);
	int rc = sh(cmd);
	char *out = slurp(log, NULL);
	assert_named(rc == 0, __LINE__, __FILE__, "building the hostile cases with %s: exit %d\n%.3000s",
	             mpi->cc, rc, out ? out : "");
	free(out);
	if (rc != 0)
		return;
	for (size_t i = 0; i < countof(cases) && cases[i].args[!ompi]; i++) {
		int p = cases[i].p;
		char set[600] = "", path[300];
		snprintf(path, sizeof path, "%s/hostile/%s.%s", dir, cases[i].plan == 3 ? "bad" : "cal",
		         tag);
		if (cases[i].plan == 1 || cases[i].plan == 4)
			snprintf(set, sizeof set, ompi ? "-x COLLC_MPI_CALIBRATE=%s -x "
			         "COLLC_MPI_CALIBRATE_MAX=4096 -x COLLC_MPI_CALIBRATE_TIME=0.05%s" : "-genv "
			         "COLLC_MPI_CALIBRATE %s -genv COLLC_MPI_CALIBRATE_MAX 64 -genv "
			         "COLLC_MPI_CALIBRATE_ITERS 1%s", path, cases[i].plan == 4 ? (ompi ?
			         " -x COLLC_MPI_CALIBRATE_ADD=1" : " -genv COLLC_MPI_CALIBRATE_ADD 1") : "");
		else if (cases[i].plan)
			snprintf(set, sizeof set, ompi ? "-x COLLC_MPI_PLAN=%s" : "-genv COLLC_MPI_PLAN %s",
			         path);
		snprintf(cmd, sizeof cmd,
		         "cd %s/hostile && echo '# other: 6 entries; 4 ranks' >bad.%s && timeout 120 env "
		         "%s -np %d %s %s%s/hostile/libh.%s.so:%s/hostile/libleaks.%s.so ./hostile.%s %s%s "
		         ">%s 2>&1",
		         dir, tag, mpi->run, p, set, env, dir, tag, dir, tag, tag, cases[i].name,
		         cases[i].args[!ompi], log);
		rc = sh(cmd);
		out = slurp(log, NULL);
		char ok[64];
		snprintf(ok, sizeof ok, "ok: %s ", cases[i].name);
		long covered = -1, other = -1, ran[4], passed[4];
		const char *calls = out ? strstr(out, "calls: covered ") : NULL;
		if (calls)
			sscanf(calls, "calls: covered %ld other %ld", &covered, &other);
		report_counts(out ? out : "", "hostile", p, ran, passed);
		bool counts = true, session = strcmp(cases[i].name, "session") == 0;
		for (int r = 0; r < p && !session; r++) /* a session's program calls no MPI_Finalize */
			counts &= covered >= 0 && ran[r] == covered && passed[r] == other;
		/* calls of no element returned at once: each rank's report says so */
		long at_once = calls && strstr(calls, " at once ") ? atol(strstr(calls, " at once ") + 9) : 0;
		char once[64];
		snprintf(once, sizeof once, "; returned at once %ld\n", at_once);
		int nonce = 0;
		for (const char *q = out; q && (q = strstr(q, once)); q++)
			nonce++;
		counts &= session || (out && (at_once == 0 ? !strstr(out, "; returned at once") : nonce == p));
		static const char clean[] = "mpi objects left: 0 datatypes, 0 communicators, 0 keys, "
		                            "0 requests\n";
		int nclean = 0;
		for (const char *q = out; q && (q = strstr(q, clean)); q += sizeof clean - 1)
			nclean++;
		/* an MPI before 4 has no sessions: that program never initializes MPI */
		bool none = session && nclean == 0 && out && strstr(out, "has no sessions");
		if (cases[i].plan == 1) /* what plan 4 adds to */
			snprintf(cmd, sizeof cmd, "cp %s %s.first", path, path), sh(cmd);
		snprintf(cmd, sizeof cmd, "%s.first", path);
		const char *cal = cases[i].plan == 1 || cases[i].plan == 4 ?
		                  calibration_wrong(path, ompi ? 0 : 1, cases[i].plan == 4 ? cmd : NULL) : "";
		bool said = cases[i].plan != 3 || (out && strstr(out, "is not a calibration of this "
		                                                   "library") && covered == 0);
		int rows = 0; /* osu's: 8 kinds at 3 sizes, each with the plan's choice */
		for (const char *q = out; q && (q = strstr(q, "\n  ")); q++)
			rows += strcspn(q + 1, "\n") > 5 && (strncmp(q + 1 + strcspn(q + 1, "\n") - 4, " mpi", 4) == 0 ||
			                                       strncmp(q + 1 + strcspn(q + 1, "\n") - 6, " collc", 6) == 0);
		said &= cases[i].plan == 0 || rows == 24;
		assert_named(rc == 0 && out && strstr(out, ok) && counts && (nclean == p || none) &&
		             !strstr(out, "yaksa") && !cal[0] && said, __LINE__, __FILE__,
		             "hostile %s (plan %d) on %d ranks under %s: exit %d, covered %ld other %ld, "
		             "rank 0 ran %ld passed %ld, %d of %d processes clean %s\n%.3000s",
		             cases[i].name, cases[i].plan, p, mpi->cc, rc, covered, other, ran[0],
		             passed[0], nclean, p, cal, out ? out : "");
		free(out);
	}
}

/* Issue 37's failures under both MPIs: a broadcast past what a schedule
 * represents, a collective in a delete callback at MPI_Finalize, a session
 * without MPI_Init, two threads at once, every predefined type as bytes. */
static void
test_lib_hostile(void)
{
	if (!have_mpi || system("command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich "
	                        ">/dev/null && command -v timeout >/dev/null") != 0) {
		assert_named(0, __LINE__, __FILE__, "Open MPI, MPICH and timeout are needed (make deps)");
		return;
	}
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "rm -rf %s/hostile && mkdir %s/hostile && %s build "
	         "tests/mpi/hostile.coll --target mpi-lib --prefix hostile -o %s/hostile/lib",
	         dir, dir, COLLC_BIN, dir);
	CU_ASSERT_EQUAL_FATAL(sh(cmd), 0);
	run_hostile(&open_mpi, "-x COLLC_MPI_REPORT=1 -x LD_PRELOAD=", "ompi");
	run_hostile(&mpich, "-genv COLLC_MPI_REPORT 1 -genv LD_PRELOAD ", "mpich");
}

/* Writes liba: a plan as collc tune would make one, three ranges for one
 * kind (AR below 4 KiB, SP to 64 KiB, AR again), through mpi_lib_write. */
static int
write_liba(Diag *dg)
{
	static const char text[] =
		"topology R = ring(4);\ngroup G on R { translate; map x -> -x; }\n"
		"tree B = bfs(R, root 0);\n"
		"collective allreduce AR on R { algorithm ring; }\n"
		"collective allreduce SP on R { algorithm symmetric(trees B, group G); }\n";
	Checked c;
	Prog p = {0};
	check_str(dg, &c, text);
	int rc = c.errors || lower(dg, c.file, &p) != 0 || p.nsched != 2 ? -1 : 0;
	if (rc == 0) {
		const Sched *ar = p.sched[0], *sp = p.sched[1];
		MpiLibEntry e[3] = {{CK_ALLREDUCE, 4, -1, 0, 4096, ar},
		                    {CK_ALLREDUCE, 4, -1, 4096, 65536, sp},
		                    {CK_ALLREDUCE, 4, -1, 65536, MPI_LIB_ANY_SIZE, ar}};
		MpiLibPlan plan = {3, e};
		char path[300];
		snprintf(path, sizeof path, "%s/two/liba.c", dir);
		FILE *fc = fopen(path, "w");
		snprintf(path, sizeof path, "%s/two/liba.h", dir);
		FILE *fh = fopen(path, "w");
		rc = fc && fh ? mpi_lib_write(dg, fc, fh, &plan, "liba", "liba.h") : -1;
		if (fc)
			fclose(fc);
		if (fh)
			fclose(fh);
	}
	prog_free(&p);
	checked_free(&c);
	return rc;
}

/* Two libraries in one program (both have an AR), each size of liba's plan
 * running its range's schedule; every external name under the prefix. */
static void
test_lib_two_prefixes(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	if (!have_mpi) {
		assert_named(0, __LINE__, __FILE__, "mpicc and mpirun are needed");
		return;
	}
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "rm -rf %s/two && mkdir %s/two", dir, dir);
	CU_ASSERT_EQUAL_FATAL(sh(cmd), 0);
	CU_ASSERT_EQUAL_FATAL(write_liba(dg), 0);
	snprintf(cmd, sizeof cmd,
	         "printf 'topology R = ring(4);\\ncollective allreduce AR on R { algorithm "
	         "recursive_doubling; }\\n' >%s/two/b.coll && "
	         "%s build %s/two/b.coll --target mpi-lib --prefix libb -o %s/two >%s/tlog 2>&1 && "
	         "for cc in mpicc mpicc.mpich; do $cc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 "
	         "-I%s/two tests/mpi/two_libs.c %s/two/liba.c %s/two/libb.c -o %s/two/t.$cc "
	         ">>%s/tlog 2>&1 || exit 1; done && "
	         "%s -np 4 %s/two/t.mpicc >>%s/tlog 2>&1",
	         dir, COLLC_BIN, dir, dir, dir, dir, dir, dir, dir, dir, MPIRUN, dir, dir);
	int rc = sh(cmd);
	char log[300];
	snprintf(log, sizeof log, "%s/tlog", dir);
	char *out = slurp(log, NULL);
	assert_named(rc == 0 && out && strstr(out, "ok\n"), __LINE__, __FILE__,
	             "two libraries in one program: exit %d\n%.3000s", rc, out ? out : "");
	free(out);
	/* external names: the prefix's, and MPI's in the drop-in */
	snprintf(cmd, sizeof cmd,
	         "cd %s/two && mpicc -std=c11 -O2 -c liba.c -o a.o && "
	         "mpicc -std=c11 -O2 -DCOLLC_PMPI -c liba.c -o p.o && "
	         "nm -g --defined-only a.o | awk '{print $3}' | grep -v '^liba_' >names; "
	         "nm -g --defined-only p.o | awk '{print $3}' | grep -v '^liba_' | grep -v '^MPI_' "
	         ">>names; nm -g --defined-only p.o | grep -q ' MPI_Allreduce$' && "
	         "! nm -g --defined-only p.o | grep -q ' MPI_Bcast$' && test ! -s names", dir);
	assert_named(sh(cmd) == 0, __LINE__, __FILE__, "liba.o defines only liba_ names, and the "
	             "drop-in MPI_Allreduce but not MPI_Bcast (its plan has no broadcast)");
}

/* Every form of schedule in one library (explicit, symmetric, rewiring an
 * optical ring, rooted), each under its own names: compiles warning-free
 * under both MPIs (and Open MPI's wrapper over clang, when there is one),
 * linked and as the drop-in. */
static void
test_lib_forms(void)
{
	if (!have_mpi || system("command -v mpicc.mpich >/dev/null") != 0) {
		assert_named(0, __LINE__, __FILE__, "mpicc and mpicc.mpich are needed");
		return;
	}
	char cmd[4096];
	snprintf(cmd, sizeof cmd,
	         "rm -rf %s/forms && mkdir %s/forms && cd %s/forms && printf '%s' >f.coll && "
	         "%s/%s build f.coll --target mpi-lib --prefix forms -o lib >log 2>&1 && "
	         "ccs='mpicc mpicc.mpich'; command -v clang >/dev/null && ccs=\"$ccs clang\"; "
	         "for cc in $ccs; do [ $cc = clang ] && cc='env OMPI_CC=clang mpicc'; "
	         "for m in -UCOLLC_PMPI -DCOLLC_PMPI; do "
	         "$cc -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wmissing-prototypes -Werror -O2 "
	         "-fPIC $m -c lib/forms.c -o forms.o >>log 2>&1 || exit 1; done; done",
	         dir, dir, dir,
	         "network { reconfig_delay = 1 us; }\\ntopology O = optical_ring(8, ports 16);\\n"
	         "topology R = ring(8);\\ngroup G on R { translate; map x -> -x; }\\n"
	         "tree B = bfs(R, root 0);\\n"
	         "collective alltoall X on O { algorithm bridge(reconfigs 1); }\\n"
	         "collective allreduce AR on O { algorithm r_hd(reconfigs 1); }\\n"
	         "collective reduce_scatter SP on R { algorithm symmetric(trees B, group G); }\\n"
	         "collective allgather AG on R { algorithm ring; }\\n"
	         "collective broadcast BC on R { algorithm binomial_tree; root 3; }\\n"
	         "collective reduce RD on R { algorithm chain; root 2; }\\n",
	         getenv("PWD") ? getenv("PWD") : ".", COLLC_BIN);
	int rc = sh(cmd);
	char log[300];
	snprintf(log, sizeof log, "%s/forms/log", dir);
	char *out = slurp(log, NULL);
	assert_named(rc == 0, __LINE__, __FILE__, "every form in one library: exit %d\n%.3000s", rc,
	             out ? out : "");
	free(out);
}

/* Two allreduces on the same ranks over every size: both entry points, a
 * note from collc, and the drop-in refuses to compile. */
static void
test_lib_ambiguous(void)
{
	if (!have_mpi) {
		assert_named(0, __LINE__, __FILE__, "mpicc is needed");
		return;
	}
	char cmd[4096];
	snprintf(cmd, sizeof cmd,
	         "rm -rf %s/amb && mkdir %s/amb && printf 'topology R = ring(4);\\n"
	         "collective allreduce AR on R { algorithm ring; }\\n"
	         "collective allreduce AR2 on R { algorithm recursive_doubling; }\\n' >%s/amb/a.coll && "
	         "%s build %s/amb/a.coll --target mpi-lib --prefix amb -o %s/amb/lib 2>%s/amb/note && "
	         "grep -q 'int amb_AR(' %s/amb/lib/amb.h && grep -q 'int amb_AR2(' %s/amb/lib/amb.h && "
	         "mpicc -std=c11 -Wall -Wextra -Werror -c %s/amb/lib/amb.c -o %s/amb/amb.o && "
	         "! mpicc -std=c11 -DCOLLC_PMPI -c %s/amb/lib/amb.c -o %s/amb/p.o 2>%s/amb/err",
	         dir, dir, dir, COLLC_BIN, dir, dir, dir, dir, dir, dir, dir, dir, dir, dir);
	int rc = sh(cmd);
	char path[300];
	snprintf(path, sizeof path, "%s/amb/note", dir);
	char *note = slurp(path, NULL);
	snprintf(path, sizeof path, "%s/amb/err", dir);
	char *err = slurp(path, NULL);
	assert_named(rc == 0 && note && strstr(note, "a.coll:3:") &&
	             strstr(note, "note: 'AR' and 'AR2' are both allreduce on 4 ranks") &&
	             err && strstr(err, "choose by size with a plan"), __LINE__, __FILE__,
	             "two allreduces over every size: exit %d\n%s\n%s", rc, note ? note : "",
	             err ? err : "");
	free(note);
	free(err);
}

/* What the target refuses, with nothing written (and a name the MPI
 * target refuses for the same reason). */
static void
test_lib_errors(void)
{
	static const struct { const char *text, *prefix, *want; } cases[] = {
		{"topology R = ring(4);\ncollective allreduce AR on R { algorithm ring; }\n", "my-lib",
		 "error: --prefix 'my-lib' is not a C identifier"},
		{"topology R = ring(4);\ncollective allreduce Allreduce on R { algorithm ring; }\n", "p",
		 "e.coll:2:39: error: 'Allreduce' would be the library's p_Allreduce"},
		/* collc_run is the interpreter's: the file would not compile */
		{"topology R = ring(4);\ncollective allreduce run on R { algorithm ring; }\n", "collc",
		 "e.coll:2:33: error: 'run' would be the library's collc_run, a name of its runtime's"},
		/* the MPI target's function, likewise ("-o DIR" names its file) */
		{"topology R = ring(4);\ncollective allreduce run on R { algorithm ring; }\n", NULL,
		 "e.coll:2:33: error: 'run' would be the function collc_run, a name of the MPI "
		 "runtime's"},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		char path[300], cmd[1024];
		snprintf(path, sizeof path, "%s/e.coll", dir);
		FILE *f = fopen(path, "w");
		fputs(cases[i].text, f);
		fclose(f);
		snprintf(cmd, sizeof cmd, "rm -rf %s/elib && %s build %s --target %s%s -o %s/elib "
		         "2>%s/elog", dir, COLLC_BIN, path, cases[i].prefix ? "mpi-lib --prefix " : "mpi",
		         cases[i].prefix ? cases[i].prefix : "", dir, dir);
		int rc = sh(cmd);
		snprintf(path, sizeof path, "%s/elog", dir);
		char *out = slurp(path, NULL);
		snprintf(path, sizeof path, "%s/elib", dir);
		assert_named(rc == 1 && out && strstr(out, cases[i].want) && access(path, F_OK) != 0,
		             __LINE__, __FILE__, "case %zu: exit %d, wanted \"%s\" and no %s:\n%s", i, rc,
		             cases[i].want, path, out ? out : "");
		free(out);
	}
}

/* mpi_lib_write on plans as a tuner would hand them: the diagnostics (with
 * the source, "" when it writes) and the source it writes. */
static int
plan_write(Diag *dg, const char *text, const MpiLibEntry *e, int n, char **src, char **diag)
{
	Checked c;
	Prog p = {0};
	check_str(dg, &c, text);
	CU_ASSERT_FATAL(c.errors == 0 && lower(dg, c.file, &p) == 0 && p.nsched == 2);
	MpiLibEntry *entry = malloc((size_t)n * sizeof *entry);
	for (int i = 0; i < n; i++) {
		entry[i] = e[i];
		entry[i].sched = p.sched[e[i].sched == NULL ? 0 : 1]; /* NULL: the first, else the second */
	}
	MpiLibPlan plan = {n, entry};
	size_t len;
	char *hdr = NULL;
	FILE *d = open_memstream(diag, &len), *fc = open_memstream(src, &len),
	     *fh = open_memstream(&hdr, &len);
	diag_stream(dg, d);
	diag_reset(dg);
	diag_source(dg, "t.coll", text, strlen(text));
	int rc = mpi_lib_write(dg, fc, fh, &plan, "tuned", "tuned.h");
	diag_stream(dg, NULL);
	diag_reset(dg);
	fclose(d), fclose(fc), fclose(fh);
	free(hdr), free(entry);
	prog_free(&p);
	checked_free(&c);
	return rc;
}

static void
test_lib_plan_checks(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char text[] =
		"topology R = ring(4);\n"
		"collective allreduce RING on R { algorithm ring; }\n"
		"collective allreduce RD on R { algorithm recursive_doubling; }\n";
	static const Sched second; /* stands for the second schedule in plan_write */
	static const struct {
		MpiLibEntry e[3];
		int n, rc;
		const char *diag, *src;
	} cases[] = {
		/* two ranges, two schedules: no overlap, no #error */
		{{{CK_ALLREDUCE, 4, -1, 0, 8192, NULL}, {CK_ALLREDUCE, 4, -1, 8192, MPI_LIB_ANY_SIZE, &second}},
		 2, 0, "", "{COLLC_K_ALLREDUCE, 4, -1, 8192ULL, 9223372036854775807ULL, 1}, /* RD */"},
		/* overlapping ranges of two schedules: noted, and the drop-in refuses */
		{{{CK_ALLREDUCE, 4, -1, 0, 8192, NULL}, {CK_ALLREDUCE, 4, -1, 4096, MPI_LIB_ANY_SIZE, &second}},
		 2, 0, "note: 'RING' and 'RD' are both allreduce on 4 ranks for the same sizes",
		 "#error \"two schedules of the plan cover the same calls"},
		{{{CK_REDUCE_SCATTER, 4, -1, 0, MPI_LIB_ANY_SIZE, NULL}}, 1, -1,
		 "t.coll:2:34: error: the plan's entry for reduce_scatter on 4 ranks (root -1) names "
		 "'RING', allreduce on 4 ranks (root -1)", NULL},
		{{{CK_ALLREDUCE, 4, -1, 100, 100, NULL}}, 1, -1,
		 "error: the plan's entry for 'RING' has no sizes: [100, 100)", NULL},
		{{{CK_ALLREDUCE, 8, -1, 0, 100, NULL}}, 1, -1, "names 'RING', allreduce on 4 ranks", NULL},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		char *src = NULL, *diag = NULL;
		int rc = plan_write(dg, text, cases[i].e, cases[i].n, &src, &diag);
		bool ok = rc == cases[i].rc && diag &&
		          (cases[i].diag[0] ? strstr(diag, cases[i].diag) != NULL : diag[0] == 0) &&
		          (!cases[i].src || (src && strstr(src, cases[i].src))) &&
		          (cases[i].n != 2 || cases[i].diag[0] || !strstr(src, "#error"));
		assert_named(ok, __LINE__, __FILE__, "plan case %zu: rc %d, diagnostics:\n%s", i, rc,
		             diag ? diag : "");
		free(src), free(diag);
	}
}

CU_TestInfo mpi_tests[] = {
	{"every reduction operator and datatype against MPI", test_ops_and_types},
	{"user schedules (examples/user-*.coll) against MPI", test_user_schedules},
	{"rank-space algorithms against MPI, 2..16 ranks", test_rank_space},
	{"a case of each rank-space family and SP 3x3 under MPICH", test_mpich},
	{"torus and mesh algorithms and SP against MPI", test_torus},
	{"a communicator of the wrong size", test_wrong_size},
	{"Bridge on an optical ring against MPI, barriers at reconfigurations", test_optical},
	{"chunk order: messages as runs of the buffer", test_chunk_order},
	{"--with-main: busbw is algbw x 2(p-1)/p (allreduce), (p-1)/p (reduce-scatter, allgather)",
	 test_busbw_factor},
	{"each rank's symmetric plan against the definition", test_symmetric_plans},
	{"Open MPI and MPICH at -O2 without warnings; nccl-tests' columns", test_both_mpis_and_columns},
	{"pipelined trees on 4x4 SMBi / SMAlter against MPI", test_pipelined_trees},
	{"pipelined trees on 6x6 SMBi (the example) and SMAlter, 36 ranks, against MPI",
	 test_pipelined_6x6},
	{"mpi-lib: the PMPI drop-in under an unmodified program, Open MPI and MPICH",
	 test_lib_dropin},
	{"mpi-lib: two libraries in one program, a plan of size ranges", test_lib_two_prefixes},
	{"mpi-lib: every schedule form in one library, both MPIs", test_lib_forms},
	{"mpi-lib: two collectives of one kind and size", test_lib_ambiguous},
	{"mpi-lib: a bad prefix, a name of the library's own", test_lib_errors},
	{"mpi-lib: mpi_lib_write on plans of several ranges, and bad entries", test_lib_plan_checks},
	{"collc tune --mpi-lib: the plan's library as a drop-in under Open MPI and MPICH",
	 test_tuned_dropin},
	{"mpi-lib: issue 37's hostile calls under Open MPI and MPICH", test_lib_hostile},
	CU_TEST_INFO_NULL,
};
