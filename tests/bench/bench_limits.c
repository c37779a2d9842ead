/*
 * bench_limits.c: `make bench`, the refusals of issue 13 and the schedule
 * text reader. Each refused case (every tests/golden/limit-* file, and
 * `collc run --size 1e12`) runs the collc binary (as a user does) and
 * prints its wall and CPU time beside the target of one second,
 * and its exit status (1 wanted). Then a schedule text file of 1,048,576 ranks
 * (a chain broadcast on ring(1048576), built in memory) is read back and
 * verified in this process: the reader's time and peak memory. Rough
 * figures on a shared machine; it reports and never fails on a slow one.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "ast.h"
#include "bench_child.h"
#include "bench_target.h"
#include "backend.h"
#include "ir.h"

#ifndef COLLC_BIN
#define COLLC_BIN "bin/collc"
#endif

/* Besides every tests/golden/limit-* file (checked by `collc check`): */
static const struct {
	const char *name, *args;
} refused[] = {
	{"collc run --size 1e12", "run examples/ring-classic.coll --collective AR --size 1e12"},
	{"collc run --size 1e12 (cli golden)", "run tests/golden/cli/ring4.coll --size 1e12"},
};

/* Runs collc with args, prints its wall and CPU time beside the target;
 * 1 when it missed the target or did not exit 1 (a refusal). */
static int
time_one(const char *name, const char *args)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "%s %s >/dev/null 2>&1", COLLC_BIN, args);
	double t0 = wall_seconds(), c0 = children_cpu();
	int st = system(cmd);
	double t = wall_seconds() - t0, c = children_cpu() - c0;
	int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	printf("%-40s %8.3f %8.3f %7.2f %6.3f %5d\n", name, t, c, 1.0, t / 1.0, rc);
	if (rc != 1)
		printf("  missed target: %s: exit status %d, a refusal (1) wanted\n", name, rc);
	return missed_target(name, "wall time", t, 1.0, "s") + (rc != 1);
}

/* The number of refusals that missed their target. */
static int
time_refusals(void)
{
	printf("%-40s %8s %8s %7s %6s %5s\n", "refused case (collc binary)", "wall s", "cpu s",
	       "target", "ratio", "exit");
	glob_t g;
	int missed = 0;
	if (glob("tests/golden/limit-*.coll", 0, NULL, &g) == 0 &&
	    glob("tests/golden/limit-*.ir", GLOB_APPEND, NULL, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc; i++) {
			char args[512];
			snprintf(args, sizeof args, "check %s", g.gl_pathv[i]);
			missed += time_one(g.gl_pathv[i] + strlen("tests/golden/"), args);
		}
	globfree(&g);
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
		missed += time_one(refused[i].name, refused[i].args);
	return missed;
}

/* In a child (its own peak memory): build, write the IR text, time its
 * reading and verifying. Prints "read_s verify_s peak_kib bytes". */
static int
read_large(const void *unused, int fd)
{
	Diag d = diag_new(), *dg = &d; /* the child's diagnostics */
	(void)unused;
	static const char text[] = "topology R = ring(1048576);\n"
	                           "collective broadcast B on R { algorithm chain(segments 8); }\n";
	Arena a = {0};
	diag_source(dg, "bench.coll", text, strlen(text));
	File *f = parse_text(dg, &a, "bench.coll", text, strlen(text));
	Prog p = {0};
	if (nerrors(dg) || sema(dg, f) || lower(dg, f, &p) != 0)
		return 1;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	BuildOpts o = {0};
	if (ir_backend.emit(dg, &p, &o, mem) != 0)
		return 1;
	fclose(mem);
	prog_free(&p);
	Prog q = {0};
	diag_source(dg, "bench.ir", buf, len);
	double t0 = wall_seconds();
	if (ir_read(dg, buf, len, &q) != 0 || q.nsched != 1)
		return 1;
	double t1 = wall_seconds();
	if (verify(dg, q.sched[0]) != 0)
		return 1;
	double t2 = wall_seconds();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	dprintf(fd, "%.6f %.6f %ld %zu\n", t1 - t0, t2 - t1, ru.ru_maxrss, len);
	return 0;
}

int
main(void)
{
	int missed = time_refusals();
	char buf[128];
	bool ok = in_child(read_large, NULL, buf, sizeof buf);
	double tr = 0, tv = 0;
	long kib = 0;
	size_t bytes = 0;
	printf("\n%-40s %8s %8s %8s %9s\n", "schedule text file", "read s", "verify s", "peak MiB",
	       "MiB read");
	ok = ok && sscanf(buf, "%lf %lf %ld %zu", &tr, &tv, &kib, &bytes) == 4;
	if (!ok)
		printf("%-40s failed\n", "chain broadcast, 1048576 ranks");
	else
		printf("%-40s %8.3f %8.3f %8.1f %9.1f\n", "chain broadcast, 1048576 ranks", tr, tv,
		       (double)kib / 1024, (double)bytes / (1 << 20));
	return bench_summary("bench_limits", missed, !ok);
}
