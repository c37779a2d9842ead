/*
 * bench_mpi.c: the MPI backend's generated allreduce against Open MPI's
 * MPI_Allreduce, 64 MiB of floats (16 Mi elements), on this machine
 * (oversubscribed when it has fewer cores): ring and SP on a ring of 8,
 * and SP on a 3x3 torus (9 ranks), whose messages of several runs move
 * with indexed datatypes. Prints both times and their ratio (target <= 1.1): each is the
 * slowest rank's time of one call, best of ITERS calls made in turn after a
 * warm-up call (the generated main's timing), so that other jobs on the
 * machine disturb the ratio less. First, the plan each rank of SP on a
 * 64x64 torus derives on its first call (4096 ranks: too many to run
 * here, so tests/mpi/plan_time.c times 16 of them in one process; target
 * <= 0.1 s per rank). Last, a library of the mpi-lib target (ring, then
 * SP on a ring of 8) through its MPI_Allreduce-shaped dispatcher against
 * MPI_Allreduce, 8 ranks, 4 KiB to 64 MiB (tests/mpi/lib_bench.c): the
 * ratio per size, and beside it the anchor, MPI_Allreduce timed again
 * against itself (how much this machine's load moves a ratio). Needs
 * mpicc and mpirun (make deps); without them it says so and skips.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_target.h"

#ifndef COLLC_BIN
#define COLLC_BIN "bin/collc"
#endif

enum { ITERS = 5 };

static const struct {
	const char *name, *text;
	int np;
} cases[] = {
	{"ring allreduce, 8 ranks",
	 "topology R = ring(8);\ncollective allreduce AR on R { algorithm ring; }\n", 8},
	{"SP allreduce, ring of 8",
	 "topology R = ring(8);\ngroup G on R { translate; map x -> -x; }\n"
	 "tree B = bfs(R, root 0);\n"
	 "collective allreduce AR on R { algorithm symmetric(trees B, group G); }\n", 8},
	/* half its chunks travel in messages of several runs: indexed datatypes */
	{"SP allreduce, 3x3 torus",
	 "topology T = torus(3, 3);\n"
	 "group G on T { translate; map (x, y) -> (-x, -y); map (x, y) -> (y, x); }\n"
	 "tree B = bfs(T, root (0, 0));\n"
	 "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n", 9},
};

static const char sp64[] =
	"topology T = torus(64, 64);\n"
	"group G on T { translate; map (x, y) -> (-x, -y); map (x, y) -> (y, x); }\n"
	"tree B = bfs(T, root (0, 0));\n"
	"collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n";

/* SP 64x64: each rank's plan, derived once per process; 1 when it missed
 * its target, 2 when it did not run. */
static int
plan_time(const char *dir)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "%s/sp64.coll", dir);
	FILE *f = fopen(cmd, "w");
	if (!f)
		return 2;
	fputs(sp64, f);
	fclose(f);
	snprintf(cmd, sizeof cmd,
	         "%s build %s/sp64.coll --target mpi -o %s/sp64.c && "
	         "mpicc -std=c11 -O2 '-DCOLLC_FILE=\"%s/sp64.c\"' tests/mpi/plan_time.c "
	         "-o %s/plan_time && %s/plan_time",
	         COLLC_BIN, dir, dir, dir, dir, dir);
	FILE *p = popen(cmd, "r");
	char line[256] = "";
	int ranks = 0, ops = 0;
	double mean = 0, worst = 0;
	bool ok = p && fgets(line, sizeof line, p) &&
	          sscanf(line, "%d %lf %lf %d", &ranks, &mean, &worst, &ops) == 4;
	if (p)
		pclose(p);
	printf("%-36s %10s %10s %8s %8s\n", "plan derivation, per rank", "mean s", "max s",
	       "target", "ratio");
	if (!ok) {
		printf("%-36s failed: %s\n", "SP allreduce, torus(64, 64)", line);
		return 2;
	}
	printf("%-36s %10.4f %10.4f %8.2f %8.3f   (%d of 4096 ranks; %d messages)\n",
	       "SP allreduce, torus(64, 64)", mean, worst, 0.1, worst / 0.1, ranks, ops);
	int missed = missed_target("SP allreduce, torus(64, 64)", "slowest rank's plan", worst, 0.1,
	                           "s");
	putchar('\n');
	return missed;
}

/* The library of cases[i] (prefix benchlib, its collective AR) against
 * MPI_Allreduce at every size. */
static void
lib_sweep(const char *dir, size_t i)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "%s/lib.coll", dir);
	FILE *f = fopen(cmd, "w");
	if (!f)
		return;
	fputs(cases[i].text, f);
	fclose(f);
	printf("\nmpi-lib: %s, benchlib_Allreduce against MPI_Allreduce, floats, best of %d; "
	       "ratio = lib / MPI (target %.1f), anchor = MPI again / MPI\n", cases[i].name, ITERS,
	       1.1);
	fflush(stdout);
	snprintf(cmd, sizeof cmd,
	         "rm -rf %s/lib && %s build %s/lib.coll --target mpi-lib --prefix benchlib -o %s/lib "
	         "&& mpicc -std=c11 -O2 -I%s/lib tests/mpi/lib_bench.c %s/lib/benchlib.c "
	         "-o %s/lib_bench && "
	         "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
	         "OMPI_MCA_mpi_yield_when_idle=1 mpirun --oversubscribe --bind-to none -np %d "
	         "%s/lib_bench %d",
	         dir, COLLC_BIN, dir, dir, dir, dir, dir, cases[i].np, dir, ITERS);
	if (system(cmd) != 0)
		printf("%-28s failed\n", cases[i].name);
}

int
main(void)
{
	if (system("command -v mpicc >/dev/null && command -v mpirun >/dev/null") != 0) {
		printf("bench_mpi: mpicc or mpirun not found (make deps installs Open MPI): skipped\n");
		return 0;
	}
	char dir[] = "/tmp/collc-bench-mpi-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	int plan = plan_time(dir), missed = plan == 1, failed = plan == 2;
	printf("%-28s %12s %12s %8s %8s   (best of %d)\n", "64 MiB of floats", "collc s", "MPI s",
	       "ratio", "target", ITERS);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char cmd[4096];
		snprintf(cmd, sizeof cmd, "%s/case.coll", dir);
		FILE *f = fopen(cmd, "w");
		fputs(cases[i].text, f);
		fclose(f);
		snprintf(cmd, sizeof cmd,
		         "%s build %s/case.coll --target mpi --with-main -o %s/case.c && "
		         "mpicc -std=c11 -O2 %s/case.c -o %s/case -lm && "
		         "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
		         "OMPI_MCA_mpi_yield_when_idle=1 mpirun --oversubscribe --bind-to none -np %d "
		         "%s/case 16777216 %d 2>&1 | grep ' float '",
		         COLLC_BIN, dir, dir, dir, dir, cases[i].np, dir, ITERS);
		FILE *p = popen(cmd, "r");
		char line[512] = "";
		double tc = 0, tm = 0;
		if (!p || !fgets(line, sizeof line, p) ||
		    /* nccl-tests' columns: size count type redop, then time (us) algbw
		     * busbw for collc and for MPI */
		    sscanf(line, "%*s %*s float %*s %lf %*s %*s %lf", &tc, &tm) != 2) {
			printf("%-28s failed: %s\n", cases[i].name, line);
			if (p)
				pclose(p);
			failed++;
			continue;
		}
		pclose(p);
		tc /= 1e6;
		tm /= 1e6;
		printf("%-28s %12.4f %12.4f %8.2f %8.2f%s\n", cases[i].name, tc, tm, tm > 0 ? tc / tm : 0,
		       1.1, strstr(line, "WRONG") ? "  (WRONG RESULT)" : "");
		failed += strstr(line, "WRONG") != NULL;
		missed += missed_target(cases[i].name, "collc / MPI time", tm > 0 ? tc / tm : 0, 1.1,
		                        "x");
	}
	for (size_t i = 0; i < 2; i++) /* ring and SP on 8 ranks */
		lib_sweep(dir, i);
	char rm[128];
	snprintf(rm, sizeof rm, "rm -rf %s", dir);
	failed += system(rm) != 0;
	return bench_summary("bench_mpi", missed, failed);
}
