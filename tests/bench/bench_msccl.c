/*
 * bench_msccl.c: `make bench`, MSCCL XML at scale (issue 13). Each case
 * runs the collc binary end to end as a user does (`collc build F.coll
 * --target msccl -o OUT.xml`: build, expand, lower over the channel
 * widths it needs, the symbolic check of every rule, the XML written) and
 * prints its wall and CPU time beside the target, the XML's size and exit
 * status (0 wanted). Rough figures on a shared machine: the CPU column is
 * what the process spent; it reports and never fails on a slow machine.
 * Emission should grow no worse than linearly in the XML's size: the
 * "cpu s/MB" column is CPU seconds per MB of XML, "ring(128)" the anchor's
 * (ring(128)'s, measured first in the same run) and "x ring(128)" the one
 * over the other (1 is linear). Cases under a second of CPU take the
 * fastest of 3 runs. "programs" is how many programs the backend built
 * and checked to find the one it wrote, and "widths" how many width
 * attempts it lowered (msccl_lower_counted, in a child of its own): one
 * program is what keeps emission linear.
 *
 * With MSCCL_TOOLS=DIR (a checkout of Azure/msccl-tools, run with the
 * system's python3 and its Debian packages: python3-lxml, -humanfriendly,
 * -igraph, -tabulate, -z3), ring allreduce at 64, 128 and 256 ranks is
 * built side by side by collc and by msccl-tools' ring
 * (examples/mscclang/allreduce_a100_ring.py N C 1 --protocol Simple at
 * collc's channel count C): bytes, <step>s, <tb>s and CPU seconds of each
 * (the fastest of 3 runs), and collc's CPU against msccl-tools' at 128
 * ranks, whose target is 50 times less (docs/msccl.md, "Against
 * msccl-tools"); a miss prints "missed target". --versus-only runs this
 * comparison alone.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "backend.h"
#include "to_msccl.h"
#include "base.h"
#include "bench_child.h"
#include "bench_target.h"
#include "driver.h"
#include "msccl_program.h"

#ifndef COLLC_BIN
#define COLLC_BIN "bin/collc"
#endif

/* text: a .coll file's text, or file: an example and its collective. */
static const struct {
	const char *name, *text, *file, *coll;
	double target;
} cases[] = {
	{"ring allreduce, ring(64)",
	 "topology T = ring(64);\ncollective allreduce AR on T { algorithm ring; }\n", NULL, NULL,
	 0},
	{"ring allreduce, ring(128)",
	 "topology T = ring(128);\ncollective allreduce AR on T { algorithm ring; }\n", NULL, NULL,
	 0.5},
	{"ring allreduce, ring(256)",
	 "topology T = ring(256);\ncollective allreduce AR on T { algorithm ring; }\n", NULL, NULL,
	 0},
	{"SP allreduce, torus(8, 16)",
	 "topology T = torus(8, 16);\ngroup G on T { translate; map (x, y) -> (-x, -y); }\n"
	 "tree B = bfs(T, root (0, 0));\n"
	 "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n", NULL, NULL, 0},
	{"SP allreduce, torus(16, 16)",
	 "topology T = torus(16, 16);\ngroup G on T { translate; map (x, y) -> (-x, -y); }\n"
	 "tree B = bfs(T, root (0, 0));\n"
	 "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n", NULL, NULL,
	 5.0},
	/* 16 leaves: 15-chunk steps, send-only and receive-only tbs */
	{"SP, spine-leaf 16x16x16 (256)",
	 "topology F = spine_leaf(spines 16, leaves 16, hosts 16);\n"
	 "group G on F { map (l, h) -> (l + 1, h); map (l, h) -> (l, h + 1); }\n"
	 "tree K = bfs(F, root (0, 0));\n"
	 "collective allreduce SP on F { algorithm symmetric(trees K, group G); }\n", NULL, NULL, 0},
	/* 32 leaves: 31-chunk steps, each exchange received first on one side */
	{"SP, spine-leaf 16x32x16 (512)", NULL, "examples/spine-leaf.coll", "SP", 0},
};
enum { ANCHOR = 1 }; /* ring(128) */

/* The case's .coll file: an example's, or its text written to tmp. */
static const char *
case_input(size_t i, const char *tmp)
{
	if (!cases[i].text)
		return cases[i].file;
	FILE *f = fopen(tmp, "w");
	if (!f)
		return NULL;
	fputs(cases[i].text, f);
	fclose(f);
	return tmp;
}

/* One case end to end: wall and CPU seconds, the XML's MB, exit status. */
static void
run_once(size_t i, double *wall, double *cpu, double *mb, int *status)
{
	const char *in = case_input(i, "/tmp/collc_bench_msccl.coll");
	const char *out = "/tmp/collc_bench_msccl.xml";
	char cmd[512], only[64] = "";
	if (!in) {
		*status = -1;
		return;
	}
	if (!cases[i].text)
		snprintf(only, sizeof only, "--collective %s", cases[i].coll);
	snprintf(cmd, sizeof cmd, "%s build %s %s --target msccl -o %s >/dev/null 2>&1", COLLC_BIN,
	         in, only, out);
	double t0 = wall_seconds(), c0 = children_cpu();
	int st = system(cmd);
	*wall = wall_seconds() - t0;
	*cpu = children_cpu() - c0;
	struct stat sb;
	*mb = stat(out, &sb) == 0 ? (double)sb.st_size / 1e6 : 0;
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	remove(out);
	if (cases[i].text)
		remove(in);
}

/* In a child: the case's schedule lowered once more, in process, for the
 * backend's counts; writes "widths programs" to fd. */
static int
count_child(const void *arg, int fd)
{
	Diag d = diag_new(), *dg = &d; /* the child's diagnostics */
	size_t i = *(const size_t *)arg;
	const char *in = case_input(i, "/tmp/collc_bench_msccl_count.coll");
	Input input = {0};
	diag_reset(dg);
	diag_mute(dg, true);
	int rc = in ? load(dg, in, &input, true, 1 << 20) : -1; /* build's default --size */
	if (in && cases[i].text)
		remove(in);
	BuildOpts bo = {.collective = cases[i].coll};
	const Sched *s = NULL;
	if (rc != 0 || backend_select(&input.prog, &bo, &s, 1) < 1)
		return 1;
	Arena a = {0};
	MProg p;
	MscclStats st;
	if (msccl_lower_counted(dg, &a, s, &bo, &p, &st) != 0)
		return 1;
	char line[64];
	int n = snprintf(line, sizeof line, "%d %d\n", st.widths, st.programs);
	return write(fd, line, (size_t)n) == n ? 0 : 1;
}

/* A case's fastest of 3 runs when one takes under a second of CPU (the
 * anchor among them: one slow run of it would skew every ratio), else its
 * one run. */
static void
run_case(size_t i, double *wall, double *cpu, double *mb, int *status)
{
	run_once(i, wall, cpu, mb, status);
	for (int k = 1; k < 3 && *cpu < 1.0; k++) {
		double w, c;
		run_once(i, &w, &c, mb, status);
		if (c < *cpu) {
			*cpu = c;
			*wall = w;
		}
	}
}

/* Counts of a file: bytes, <step> and <tb> elements, nchannels; false if
 * unreadable. */
static bool
xml_counts(const char *path, long *bytes, long *steps, long *tbs, int *nch)
{
	size_t len;
	char err[256];
	char *t = read_file(path, &len, err, sizeof err);
	if (!t)
		return false;
	*bytes = (long)len;
	*steps = *tbs = 0;
	for (const char *q = t; (q = strstr(q, "<step ")) != NULL; q++)
		(*steps)++;
	for (const char *q = t; (q = strstr(q, "<tb ")) != NULL; q++)
		(*tbs)++;
	const char *c = strstr(t, "nchannels=\"");
	*nch = c ? atoi(c + strlen("nchannels=\"")) : 0;
	free(t);
	return true;
}

/* The fastest CPU seconds of 3 runs of cmd (its children's), -1 if it fails. */
static double
cpu_of(const char *cmd)
{
	double best = -1;
	for (int k = 0; k < 3; k++) {
		double c0 = children_cpu();
		int st = system(cmd);
		double c = children_cpu() - c0;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return -1;
		best = best < 0 || c < best ? c : best;
	}
	return best;
}

/* collc's ring allreduce against msccl-tools' at 64, 128 and 256 ranks;
 * the targets missed. */
static int
versus_msccl_tools(void)
{
	const char *dir = getenv("MSCCL_TOOLS");
	int missed = 0;
	if (!dir) {
		printf("\nmsccl-tools: not compared (set MSCCL_TOOLS to a checkout of "
		       "Azure/msccl-tools)\n");
		return 0;
	}
	printf("\n%-14s %10s %8s %6s %4s %8s   %10s %8s %6s %8s %8s\n", "ring allreduce",
	       "collc B", "steps", "tbs", "ch", "cpu s", "tools B", "steps", "tbs", "cpu s",
	       "cpu x");
	const int ranks[] = {64, 128, 256};
	for (int i = 0; i < 3; i++) {
		const char *in = "/tmp/collc_bench_ring.coll", *cx = "/tmp/collc_bench_ring.xml",
		           *tx = "/tmp/collc_bench_ring_tools.xml";
		FILE *f = fopen(in, "w");
		if (!f)
			return missed + 1;
		fprintf(f, "topology T = ring(%d);\ncollective allreduce AR on T { algorithm ring; }\n",
		        ranks[i]);
		fclose(f);
		char cmd[1024];
		snprintf(cmd, sizeof cmd, "%s build %s --target msccl -o %s", COLLC_BIN, in, cx);
		double ccpu = cpu_of(cmd);
		long cb = 0, cs = 0, ct = 0, tb = 0, ts = 0, tt = 0;
		int cn = 0, tn = 0;
		if (ccpu < 0 || !xml_counts(cx, &cb, &cs, &ct, &cn)) {
			printf("ring(%d): collc failed\n", ranks[i]);
			continue;
		}
		snprintf(cmd, sizeof cmd, "cd '%s' && PYTHONPATH='%s' /usr/bin/python3 "
		         "examples/mscclang/allreduce_a100_ring.py %d %d 1 --protocol Simple > %s",
		         dir, dir, ranks[i], cn, tx);
		double tcpu = cpu_of(cmd);
		if (tcpu < 0 || !xml_counts(tx, &tb, &ts, &tt, &tn)) {
			printf("ring(%d): msccl-tools failed: %s\n", ranks[i], cmd);
			continue;
		}
		double x = ccpu > 0 ? tcpu / ccpu : 0;
		printf("ring(%-3d)      %10ld %8ld %6ld %4d %8.3f   %10ld %8ld %6ld %8.3f %8.1f\n",
		       ranks[i], cb, cs, ct, cn, ccpu, tb, ts, tt, tcpu, x);
		if (cb > tb || cs > ts || ct > tt) {
			printf("missed target: ring(%d)'s XML is larger than msccl-tools'\n", ranks[i]);
			missed++;
		}
		if (ranks[i] == 128 && x < 50) {
			printf("missed target: ring(128) takes %.1fx less CPU than msccl-tools; the "
			       "target is 50x\n", x);
			missed++;
		}
		remove(in);
		remove(cx);
		remove(tx);
	}
	return missed;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {{"versus-only", no_argument, NULL, 'v'},
	                                         {NULL, 0, NULL, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1)
		if (c == 'v') {
			return versus_msccl_tools() ? 1 : 0;
		} else {
			fprintf(stderr, "usage: %s [--versus-only]\n", argv[0]);
			return 2;
		}
	enum { NCASE = sizeof cases / sizeof cases[0] };
	double wall[NCASE], cpu[NCASE], mb[NCASE];
	int status[NCASE];
	/* the anchor first, so every row shows its ratio; the rows in order */
	run_case(ANCHOR, &wall[ANCHOR], &cpu[ANCHOR], &mb[ANCHOR], &status[ANCHOR]);
	double anchor = mb[ANCHOR] > 0 ? cpu[ANCHOR] / mb[ANCHOR] : 0;
	printf("%-30s %8s %8s %7s %6s %9s %9s %11s %11s %8s %6s %5s\n",
	       "collc build --target msccl", "wall s", "cpu s", "target", "ratio", "XML MB",
	       "cpu s/MB", "ring(128)", "x ring(128)", "programs", "widths", "exit");
	int missed = 0, failed = 0;
	for (size_t i = 0; i < NCASE; i++) {
		if (i != ANCHOR)
			run_case(i, &wall[i], &cpu[i], &mb[i], &status[i]);
		char target[16] = "-", ratio[16] = "-", per[16] = "-", anc[16] = "-", rel[16] = "-";
		if (cases[i].target > 0) {
			snprintf(target, sizeof target, "%.2f", cases[i].target);
			snprintf(ratio, sizeof ratio, "%.3f", wall[i] / cases[i].target);
		}
		if (anchor > 0)
			snprintf(anc, sizeof anc, "%.4f", anchor);
		if (mb[i] > 0) {
			snprintf(per, sizeof per, "%.4f", cpu[i] / mb[i]);
			if (anchor > 0)
				snprintf(rel, sizeof rel, "%.2f", cpu[i] / mb[i] / anchor);
		}
		char buf[64], programs[16] = "-", widths[16] = "-";
		int nw, np;
		if (in_child(count_child, &i, buf, sizeof buf) && sscanf(buf, "%d %d", &nw, &np) == 2) {
			snprintf(programs, sizeof programs, "%d", np);
			snprintf(widths, sizeof widths, "%d", nw);
		}
		printf("%-30s %8.3f %8.3f %7s %6s %9.1f %9s %11s %11s %8s %6s %5d\n", cases[i].name,
		       wall[i], cpu[i], target, ratio, mb[i], per, anc, rel, programs, widths,
		       status[i]);
		missed += missed_target(cases[i].name, "wall time", wall[i], cases[i].target, "s");
		failed += status[i] != 0;
		fflush(stdout);
	}
	missed += versus_msccl_tools();
	return bench_summary("bench_msccl", missed, failed);
}
