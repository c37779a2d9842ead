/*
 * bench_msccl.c: `make bench`, MSCCL XML at scale (issue 13). Each case
 * runs the collc binary end to end as a user does (`collc build F.coll
 * --target msccl -o OUT.xml`: build, expand, lower over the channel
 * widths it needs, the symbolic check of every rule, the XML written) and
 * prints its wall and CPU time beside the target, the XML's size and exit
 * status (0 wanted). Rough figures on a shared machine: the CPU column is
 * what the process spent; it reports and never fails on a slow machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "base.h"
#include "bench_child.h"

#ifndef COLLC_BIN
#define COLLC_BIN "bin/collc"
#endif

static const struct {
	const char *name, *text;
	double target;
} cases[] = {
	{"ring allreduce, ring(128)",
	 "topology T = ring(128);\ncollective allreduce AR on T { algorithm ring; }\n", 0.5},
	{"ring allreduce, ring(256)",
	 "topology T = ring(256);\ncollective allreduce AR on T { algorithm ring; }\n", 0},
	{"SP allreduce, torus(8, 16)",
	 "topology T = torus(8, 16);\ngroup G on T { translate; map (x, y) -> (-x, -y); }\n"
	 "tree B = bfs(T, root (0, 0));\n"
	 "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n", 0},
	{"SP allreduce, torus(16, 16)",
	 "topology T = torus(16, 16);\ngroup G on T { translate; map (x, y) -> (-x, -y); }\n"
	 "tree B = bfs(T, root (0, 0));\n"
	 "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n", 5.0},
};

int
main(void)
{
	printf("%-30s %8s %8s %7s %6s %9s %5s\n", "collc build --target msccl", "wall s", "cpu s",
	       "target", "ratio", "XML MB", "exit");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *in = "/tmp/collc_bench_msccl.coll", *out = "/tmp/collc_bench_msccl.xml";
		FILE *f = fopen(in, "w");
		if (!f)
			return 0;
		fputs(cases[i].text, f);
		fclose(f);
		char cmd[512];
		snprintf(cmd, sizeof cmd, "%s build %s --target msccl -o %s >/dev/null 2>&1", COLLC_BIN,
		         in, out);
		double t0 = wall_seconds(), c0 = children_cpu();
		int st = system(cmd);
		double t = wall_seconds() - t0, c = children_cpu() - c0;
		struct stat sb;
		double mb = stat(out, &sb) == 0 ? (double)sb.st_size / 1e6 : 0;
		char target[16] = "-", ratio[16] = "-";
		if (cases[i].target > 0) {
			snprintf(target, sizeof target, "%.2f", cases[i].target);
			snprintf(ratio, sizeof ratio, "%.3f", t / cases[i].target);
		}
		printf("%-30s %8.3f %8.3f %7s %6s %9.1f %5d\n", cases[i].name, t, c, target, ratio, mb,
		       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		remove(out);
		remove(in);
	}
	return 0;
}
