/*
 * bench_sim.c: `make bench`, the simulator's cases of issue 5. Each case
 * runs in its own process (its own peak memory): build the schedule from
 * .coll text, convert it to the simulator's input, simulate. Prints the
 * simulator's own time and the whole run's time and peak memory beside the
 * targets, as ratios (below 1 meets the target). Times are the process's
 * CPU time, since the machine is shared and wall clock counts the waits;
 * rough figures. It reports; it never fails on a slow machine. The SP case
 * runs by dependencies too (flow mode's start heap at its fullest); the
 * last case is issue 11's (a 32x32 supermesh's pipelined trees).
 *
 * Then issue 13's cases end to end, as a user runs them: the collc binary's
 * `collc sim FILE.coll --sizes 1MiB` process (parse, build, verify, convert,
 * simulate, print), its CPU time and peak memory beside the targets.
 *
 * Last, packet mode's two engines, which its work budget is calibrated on
 * (base/collc_limits.h, docs/limits.md): the packet-hops a second of the
 * event loop (halving-doubling on ring(4096), whose far rounds share links)
 * and of the closed forms of lone messages (the ring on ring(4096)), in one
 * run so that the machine's load weighs on both alike, each beside the rate
 * its limit assumes (limit / PACKET_BUDGET_SECONDS: a ratio of 1 or more
 * means the largest accepted run takes at most that long), and the two
 * engines' cost ratio beside the limits'. Then halving-doubling on
 * ring(16384), refused before its first round: how long refusing takes.
 * `bench_sim engines` runs this part alone, `bench_sim procs NAME` the
 * end-to-end cases whose name holds NAME alone, `bench_sim cases` the first
 * table alone (the simulator in-process, both modes: seconds, to compare
 * two builds of the engine many times over).
 */
#define _DEFAULT_SOURCE /* mkstemps, wait4 (a child's own peak memory) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ast.h"
#include "ir.h"
#include "sim.h"
#include "to_sim.h"
#include "bench_child.h"
#include "bench_target.h"

typedef struct Case {
	const char *name;
	const char *text;
	int64_t bytes;
	SimMode mode;
	double target_sim_s, target_total_s, target_mib; /* 0: none */
	SimSync sync;
} Case;

/* The three cases; the 16-node mesh's pipelined tree allreduce is
 * TTO's three pipelined trees (chiplet (3, 0) forwards but takes no part),
 * with NCCL's double binary tree, pipelined over its chunks, beside it. */
static const Case cases[] = {
	{"ring allreduce, ring(1024), 1 MiB, packet",
	 "topology R = ring(1024);\n"
	 "collective allreduce AR on R { algorithm ring; }\n",
	 1 << 20, SIM_PACKET, 0.05, 0, 0, SIM_ROUNDS},
	{"SP allreduce, torus 64x64, 256 MiB, flow",
	 "topology T = torus(64, 64);\n"
	 "group G on T { translate; map (x, y) -> (-x, -y); map (x, y) -> (y, x); }\n"
	 "tree B = bfs(T, root (0, 0));\n"
	 "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n",
	 256 << 20, SIM_FLOW, 0, 5.0, 2048, SIM_ROUNDS},
	/* the same by dependencies: each message starts when its inputs arrive,
	 * so flow mode's start heap holds a round's messages and more (the
	 * case that weighs the heap, base/heap.h) */
	{"SP allreduce, torus 64x64, 256 MiB, flow, deps",
	 "topology T = torus(64, 64);\n"
	 "group G on T { translate; map (x, y) -> (-x, -y); map (x, y) -> (y, x); }\n"
	 "tree B = bfs(T, root (0, 0));\n"
	 "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n",
	 256 << 20, SIM_FLOW, 0, 0, 0, SIM_DEPS},
	{"tto allreduce, mesh(4, 4), 1 MiB, packet",
	 "topology M = mesh(4, 4);\n"
	 "collective allreduce AR on M { algorithm tto; ranks 0..11, 13..15; chunks 54; }\n",
	 1 << 20, SIM_PACKET, 0.1, 0, 0, SIM_ROUNDS},
	{"dbt allreduce, mesh(4, 4), 1 MiB, packet",
	 "topology M = mesh(4, 4);\n"
	 "collective allreduce AR on M { algorithm double_binary_tree; }\n",
	 1 << 20, SIM_PACKET, 0.1, 0, 0, SIM_ROUNDS},
	/* issue 11: bench_ir's 32x32 SuperMeshAlter case, simulated */
	{"pipelined trees AR, supermesh 32x32, 256 MiB, flow",
	 "topology S = supermesh(32, 32, alter);\n"
	 "trees C = disjoint(S, roots (0, 0), (0, 31), (31, 31), (31, 0));\n"
	 "collective allreduce AR on S { algorithm pipelined_trees(trees C, segments 256); }\n",
	 256 << 20, SIM_FLOW, 0, 5.0, 0, SIM_ROUNDS},
};

#ifndef COLLC_BIN
#define COLLC_BIN "bin/collc"
#endif

/* issue 13: `collc sim` processes; targets 0 where the issue asks only
 * that it runs */
static const struct {
	const char *name, *text;
	double target_s, target_mib;
	const char *mode; /* --mode, or NULL for the default (packet) */
	double target_wall_s; /* issue 27's are wall clock seconds */
	const char *size; /* --sizes, or NULL for 1MiB */
} procs[] = {
	{"collc sim: ring AR, ring(1024), 1 MiB",
	 "topology R = ring(1024);\ncollective allreduce AR on R { algorithm ring; }\n", 0.05, 0, NULL, 0, NULL},
	{"collc sim: ring AR, ring(4096), 1 MiB",
	 "topology R = ring(4096);\ncollective allreduce AR on R { algorithm ring; }\n", 1.0, 1024, NULL, 0, NULL},
	{"collc sim: ring AR, ring(16384), 1 MiB",
	 "topology R = ring(16384);\ncollective allreduce AR on R { algorithm ring; }\n", 0, 0, NULL, 0, NULL},
	/* issue 27: 8.6e9 messages, run by node 0's (one a round, docs/sim.md
	 * 6.1), in the default mode (packet, cut-through) and in flow mode */
	{"collc sim: ring AR, ring(65536), 1 MiB",
	 "topology R = ring(65536);\ncollective allreduce AR on R { algorithm ring; }\n", 0, 1024, NULL,
	 10, NULL},
	{"collc sim: ring AR, ring(65536), 1 MiB, flow",
	 "topology R = ring(65536);\ncollective allreduce AR on R { algorithm ring; }\n", 0, 1024,
	 "flow", 10, NULL},
	{"collc sim: SP AR, HyperX 32x32, 1 MiB",
	 "topology H = hyperx(32, 32);\n"
	 "group GH on H { translate; map (x, y) -> (-y, x); }\n"
	 "tree W = windmill(H, root (0, 0));\n"
	 "collective allreduce SP on H { algorithm symmetric(trees W, group GH); }\n", 0, 0, NULL, 0, NULL},
	{"collc sim: Bucket AR, 128x128, 1 MiB",
	 "topology T = torus(128, 128);\ncollective allreduce BK on T { algorithm bucket; }\n", 0, 0,
	 NULL, 0, NULL},
	/* the rank form: a round's messages routed as the simulator asks for it */
	{"collc sim: HD AR, 128x128, 1 MiB",
	 "topology T = torus(128, 128);\n"
	 "collective allreduce HD on T { algorithm halving_doubling; }\n", 0, 0, NULL, 0, NULL},
	{"collc sim: HD AR, ring(16384), 1 MiB, flow",
	 "topology R = ring(16384);\n"
	 "collective allreduce HD on R { algorithm halving_doubling; }\n", 0, 0, "flow", 0, NULL},
	{"collc sim: RD AG, ring(4096), 1 MiB, flow",
	 "topology R = ring(4096);\n"
	 "collective allgather RD on R { algorithm recursive_doubling; }\n", 0, 0, "flow", 0, NULL},
	/* recursive doubling's allreduce in the rank form (refused built message
	 * by message: 5.4e8 chunk transfers); the memory target is issue 13's
	 * linear memory (one round's messages, 16384 here), far under 500 MiB,
	 * the CPU one what routing every message of its 14 rounds costs on a
	 * ring (2.7e8 links, each found by the router) */
	{"collc sim: RD AR, ring(16384), 1 MiB, flow",
	 "topology R = ring(16384);\n"
	 "collective allreduce RD on R { algorithm recursive_doubling; }\n", 30, 500, "flow", 0, NULL},
	{"collc sim: RD AR, 128x128, 1 MiB, flow",
	 "topology T = torus(128, 128);\n"
	 "collective allreduce RD on T { algorithm recursive_doubling; }\n", 5, 500, "flow", 0, NULL},
	/* issue 33: packing's 64 segments on 1024 GPUs in the repeated form
	 * (ir/repeat.c), streamed; the targets are the synthesis
	 * limits (docs/algorithms.md, "Orbit representatives") */
	{"collc sim: packing AG, rails 128x8, 1 GiB, flow",
	 "network { link_bandwidth = 3600 Gbps; link_latency = 500 ns; }\n"
	 "topology C = rails(boxes 128, gpus 8, nic_gbps 400);\n"
	 "collective allgather AG on C { algorithm packing; }\n", 60, 4096, "flow", 0, "1GiB"},
	{"collc sim: packing AR, rails 128x8, 1 GiB, flow",
	 "network { link_bandwidth = 3600 Gbps; link_latency = 500 ns; }\n"
	 "topology C = rails(boxes 128, gpus 8, nic_gbps 400);\n"
	 "collective allreduce AR on C { algorithm packing; }\n", 60, 4096, "flow", 0, "1GiB"},
};

/* Runs `collc sim` on text (written to a temporary .coll file): its CPU
 * and wall seconds and peak KiB; false if it did not exit 0. */
static bool
run_collc(const char *text, const char *mode, const char *size, double *cpu, double *wall,
          long *kib)
{
	struct timespec w0, w1;
	clock_gettime(CLOCK_MONOTONIC, &w0);
	char path[] = "/tmp/collc-bench-XXXXXX.coll";
	int fd = mkstemps(path, 5);
	if (fd < 0)
		return false;
	bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	pid_t pid = ok ? fork() : -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		if (mode)
			execl(COLLC_BIN, "collc", "sim", path, "--sizes", size, "--mode", mode,
			      (char *)NULL);
		else
			execl(COLLC_BIN, "collc", "sim", path, "--sizes", size, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	struct rusage ru = {0};
	ok = pid > 0 && wait4(pid, &st, 0, &ru) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	clock_gettime(CLOCK_MONOTONIC, &w1);
	*wall = (double)(w1.tv_sec - w0.tv_sec) + (double)(w1.tv_nsec - w0.tv_nsec) * 1e-9;
	unlink(path);
	*cpu = rusage_cpu(&ru);
	*kib = ru.ru_maxrss;
	return ok;
}

/* The simulator's input of .coll text's one collective: explicit, or
 * (compact) symmetric or streamed as collc sim builds it. 0, or 1. */
static int
build_sim(Diag *dg, Arena *a, Arena *sa, const char *text, bool compact, Prog *p, SimNet *net)
{
	diag_source(dg, "bench.coll", text, strlen(text));
	File *f = parse_text(dg, a, "bench.coll", text, strlen(text));
	if (nerrors(dg) || sema(dg, f))
		return 1;
	*p = (Prog){.compact = compact};
	if (lower(dg, f, p) != 0 || p->nsched != 1)
		return 1;
	const Sched *s = p->sched[0];
	if (compact)
		return sim_stream_scheds(dg, sa, &s, 1, net) != 0;
	return sim_from_scheds(dg, sa, &s, 1, net) != 0;
}

static int
run(const void *arg, int fd)
{
	Diag d = diag_new(), *dg = &d; /* the child's diagnostics */
	const Case *c = arg;
	double t0 = process_cpu();
	Arena a = {0}, sa = {0};
	Prog p;
	SimNet net;
	if (build_sim(dg, &a, &sa, c->text, false, &p, &net) != 0)
		return 1;
	double t1 = process_cpu();
	SimOpts o = {.mode = c->mode, .sync = c->sync};
	SimResult r;
	char err[256];
	if (sim_run(&sa, &net, 0, c->bytes, &o, &r, err, sizeof err) != 0)
		return 1;
	double t2 = process_cpu();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	dprintf(fd, "%.6f %.6f %ld %d %.4f\n", t2 - t1, t2 - t0, ru.ru_maxrss, net.coll[0].nmsg,
	        r.bound_ratio);
	prog_free(&p);
	arena_free(&a);
	arena_free(&sa);
	return 0;
}

/* packet mode's engines: a case run in packet mode, round by round */
typedef struct Engine {
	const char *name, *text;
	bool loop; /* the event loop's case, else the closed forms' */
	int64_t bytes;
} Engine;

static const Engine engines[] = {
	{"event loop: HD AR, ring(4096), 1 MiB",
	 "topology R = ring(4096);\n"
	 "collective allreduce HD on R { algorithm halving_doubling; }\n", true, 1 << 20},
	{"event loop: HD AR, torus(128, 128), 1 MiB",
	 "topology T = torus(128, 128);\n"
	 "collective allreduce HD on T { algorithm halving_doubling; }\n", true, 1 << 20},
	{"closed forms: ring AR, ring(4096), 1 MiB",
	 "topology R = ring(4096);\ncollective allreduce AR on R { algorithm ring; }\n", false,
	 1 << 20},
	{"refused: HD AR, ring(16384), 1 MiB",
	 "topology R = ring(16384);\n"
	 "collective allreduce HD on R { algorithm halving_doubling; }\n", true, 1 << 20},
};

/* In a child: builds an Engine's case as collc sim does, simulates it, and
 * writes the simulation's CPU seconds, its work in and out of the event
 * loop, the peak memory and sim_run's status. */
static int
run_engine(const void *arg, int fd)
{
	Diag d = diag_new(), *dg = &d; /* the child's diagnostics */
	const Engine *e = arg;
	Arena a = {0}, sa = {0};
	Prog p;
	SimNet net;
	if (build_sim(dg, &a, &sa, e->text, true, &p, &net) != 0)
		return 1;
	/* the closed forms over every message: a symmetric stream's lone rounds
	 * would run node 0's alone (docs/sim.md 6.1), which is not the rate the
	 * budget's closed work is counted at */
	SimStream whole;
	if (net.coll[0].stream) {
		whole = *net.coll[0].stream;
		whole.ncopy = 0;
		net.coll[0].stream = &whole;
	}
	double t1 = process_cpu();
	SimOpts o = {.mode = SIM_PACKET, .sync = SIM_ROUNDS};
	SimResult r;
	char err[512];
	int rc = sim_run(&sa, &net, 0, e->bytes, &o, &r, err, sizeof err);
	double t2 = process_cpu();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	dprintf(fd, "%.6f %.0f %.0f %ld %d\n", t2 - t1, r.loop_hops, r.packet_hops - r.loop_hops,
	        ru.ru_maxrss, rc);
	return 0;
}

static void
bench_engines(void)
{
	double rate[2] = {0, 0};
	const double anchor[2] = {(double)MAX_PACKET_HOPS / PACKET_BUDGET_SECONDS,
	                          (double)MAX_LOOP_PACKET_HOPS / PACKET_BUDGET_SECONDS};
	printf("\n%-42s %8s %9s %9s %9s %9s %6s %8s\n", "packet mode's engines (work budget)",
	       "sim s", "loop hops", "closed", "hops/s", "limit/s", "ratio", "peak MiB");
	for (int i = 0; i < (int)countof(engines); i++) {
		char buf[256];
		double t = 0, loop = 0, closed = 0;
		long kib = 0;
		int rc = 0;
		if (!in_child(run_engine, &engines[i], buf, sizeof buf) ||
		    sscanf(buf, "%lf %lf %lf %ld %d", &t, &loop, &closed, &kib, &rc) != 5) {
			printf("%-42s did not run\n", engines[i].name);
			continue;
		}
		bool refused = rc != 0;
		printf("%-42s %8.3f %9.3g %9.3g", engines[i].name, t, loop, closed);
		if (refused) {
			printf("  refused before its first round\n");
			continue;
		}
		int e = engines[i].loop;
		double v = (e ? loop : closed) / t;
		rate[e] = rate[e] > 0 && rate[e] < v ? rate[e] : v;
		printf(" %9.3g %9.3g %6.2f %8.1f\n", v, anchor[e], v / anchor[e], (double)kib / 1024);
	}
	if (rate[0] > 0 && rate[1] > 0)
		printf("%-42s %8s %9s %9s %9.2f %9.2f %6.2f\n",
		       "closed forms / event loop, per packet-hop", "", "", "", rate[0] / rate[1],
		       anchor[0] / anchor[1], rate[0] / rate[1] / (anchor[0] / anchor[1]));
}

static void
ratio(double v, double target)
{
	if (target > 0)
		printf(" %7.2f %6.3f", target, v / target);
	else
		printf(" %7s %6s", "-", "-");
}

/* The in-process cases; adds their misses and failures to the counts. */
static void
bench_cases(int *missed, int *failed)
{
	printf("%-42s %8s %7s %6s %8s %7s %6s %8s %7s %6s %9s %6s\n", "case", "sim s", "target",
	       "ratio", "total s", "target", "ratio", "peak MiB", "target", "ratio", "messages",
	       "G/B");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char buf[256];
		double ts = 0, tt = 0, g = 0;
		long kib = 0;
		int nmsg = 0;
		if (!in_child(run, &cases[i], buf, sizeof buf) ||
		    sscanf(buf, "%lf %lf %ld %d %lf", &ts, &tt, &kib, &nmsg, &g) != 5) {
			printf("%-42s did not run\n", cases[i].name);
			++*failed;
			continue;
		}
		printf("%-42s %8.4f", cases[i].name, ts);
		ratio(ts, cases[i].target_sim_s);
		printf(" %8.3f", tt);
		ratio(tt, cases[i].target_total_s);
		printf(" %8.1f", (double)kib / 1024);
		ratio((double)kib / 1024, cases[i].target_mib);
		printf(" %9d %6.3f\n", nmsg, g);
		*missed += missed_target(cases[i].name, "sim time", ts, cases[i].target_sim_s, "s") +
		           missed_target(cases[i].name, "total time", tt, cases[i].target_total_s, "s") +
		           missed_target(cases[i].name, "peak memory", (double)kib / 1024,
		                         cases[i].target_mib, "MiB");
	}
}

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "engines") == 0) { /* the calibration alone */
		bench_engines();
		return 0;
	}
	int missed = 0, failed = 0;
	/* `procs NAME`: the end-to-end cases whose name holds NAME, alone */
	const char *only = argc > 2 && strcmp(argv[1], "procs") == 0 ? argv[2] : NULL;
	if (!only)
		bench_cases(&missed, &failed);
	if (argc > 1 && strcmp(argv[1], "cases") == 0)
		return bench_summary("bench_sim", missed, failed);
	printf("\n%-46s %8s %7s %6s %8s %7s %6s %8s %7s %6s\n", "case (the collc binary, end to end)",
	       "cpu s", "target", "ratio", "wall s", "target", "ratio", "peak MiB", "target", "ratio");
	for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++) {
		double cpu, wall;
		long kib;
		if (only && !strstr(procs[i].name, only))
			continue;
		if (!run_collc(procs[i].text, procs[i].mode, procs[i].size ? procs[i].size : "1MiB", &cpu,
		               &wall, &kib)) {
			printf("%-42s did not run\n", procs[i].name);
			failed++;
			continue;
		}
		printf("%-46s %8.3f", procs[i].name, cpu);
		ratio(cpu, procs[i].target_s);
		printf(" %8.3f", wall);
		ratio(wall, procs[i].target_wall_s);
		printf(" %8.1f", (double)kib / 1024);
		ratio((double)kib / 1024, procs[i].target_mib);
		putchar('\n');
		missed += missed_target(procs[i].name, "cpu time", cpu, procs[i].target_s, "s") +
		          missed_target(procs[i].name, "wall time", wall, procs[i].target_wall_s, "s") +
		          missed_target(procs[i].name, "peak memory", (double)kib / 1024,
		                        procs[i].target_mib, "MiB");
	}
	if (only)
		return bench_summary("bench_sim", missed, failed);
	bench_engines();
	return bench_summary("bench_sim", missed, failed);
}
