/*
 * bench_sched.c: `make bench`, explicit schedules at scale (issue 13). Each
 * case runs in its own process (its own peak memory): build the ring
 * allreduce of ring(p) from .coll text (the generator and sched_end's sort
 * and packing), then verify it. Prints the CPU time of each phase and the
 * peak memory; the build + verify target is the budget for the
 * whole of `collc sim` (0.05 s at ring(1024), 1 s and 1 GiB at ring(4096)),
 * of which these two phases must be a small part. Rough figures on a
 * shared machine; it reports and never fails on a slow one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "ast.h"
#include "bench_child.h"
#include "bench_target.h"
#include "ir.h"

typedef struct Case {
	const char *name;
	const char *text;
	double target_s, target_mib;
} Case;

static const Case cases[] = {
	{"ring allreduce, ring(1024)",
	 "topology R = ring(1024);\n"
	 "collective allreduce AR on R { algorithm ring; }\n",
	 0.05, 1024},
	{"ring allreduce, ring(4096)",
	 "topology R = ring(4096);\n"
	 "collective allreduce AR on R { algorithm ring; }\n",
	 1.0, 1024},
	{"ring(ports 2) allreduce, torus(32, 32)",
	 "topology T = torus(32, 32);\n"
	 "collective allreduce AR on T { algorithm ring(ports 2); }\n",
	 0.05, 1024},
};

/* In the child: prints "build_s verify_s peak_kib messages". */
static int
run(const void *arg, int fd)
{
	Diag d = diag_new(), *dg = &d; /* the child's diagnostics */
	const Case *c = arg;
	Arena a = {0};
	diag_source(dg, "bench.coll", c->text, strlen(c->text));
	File *f = parse_text(dg, &a, "bench.coll", c->text, strlen(c->text));
	if (nerrors(dg) || sema(dg, f))
		return 1;
	double t0 = process_cpu();
	Prog p = {0};
	if (lower(dg, f, &p) != 0 || p.nsched != 1)
		return 1;
	double t1 = process_cpu();
	if (verify(dg, p.sched[0]) != 0)
		return 1;
	double t2 = process_cpu();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	dprintf(fd, "%.6f %.6f %ld %d\n", t1 - t0, t2 - t1, ru.ru_maxrss, p.sched[0]->nmsg);
	prog_free(&p);
	arena_free(&a);
	return 0;
}

int
main(void)
{
	printf("%-40s %8s %8s %8s %7s %6s %8s %7s %6s %9s\n", "case", "build s", "verify s",
	       "total s", "target", "ratio", "peak MiB", "target", "ratio", "messages");
	int missed = 0, failed = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char buf[128];
		bool ok = in_child(run, &cases[i], buf, sizeof buf);
		double tb = 0, tv = 0;
		long kib = 0;
		int nmsg = 0;
		if (!ok || sscanf(buf, "%lf %lf %ld %d", &tb, &tv, &kib, &nmsg) != 4) {
			printf("%-40s failed\n", cases[i].name);
			failed++;
			continue;
		}
		const Case *c = &cases[i];
		double mib = (double)kib / 1024;
		printf("%-40s %8.3f %8.3f %8.3f %7.2f %6.3f %8.1f %7.0f %6.3f %9d\n", c->name, tb, tv,
		       tb + tv, c->target_s, (tb + tv) / c->target_s, mib, c->target_mib,
		       mib / c->target_mib, nmsg);
		missed += missed_target(c->name, "total time", tb + tv, c->target_s, "s");
		missed += missed_target(c->name, "peak memory", mib, c->target_mib, "MiB");
	}
	return bench_summary("bench_sched", missed, failed);
}
