/*
 * test_cli.c: the collc binary as a user runs it: exit statuses, where
 * messages go, and that no output file appears for an input with an error.
 */
#include <glob.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver.h"
#include "msccl_program.h"
#include "sweep.h"
#include "tests.h"

#ifndef COLLC_BIN
#define COLLC_BIN "bin/collc"
#endif

static char tmpdir[] = "/tmp/collc-cli-XXXXXX";

/* Runs `collc ARGS`, capturing stdout and stderr; returns the exit status. */
static int
collc(const char *args, char **out, char **err)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "%s %s >%s/out 2>%s/err", COLLC_BIN, args, tmpdir, tmpdir);
	int st = system(cmd);
	char path[256];
	snprintf(path, sizeof path, "%s/out", tmpdir);
	*out = slurp(path, NULL);
	snprintf(path, sizeof path, "%s/err", tmpdir);
	*err = slurp(path, NULL);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool
exists(const char *name)
{
	char path[256];
	struct stat st;
	snprintf(path, sizeof path, "%s/%s", name[0] == '/' ? "" : tmpdir, name);
	return stat(path, &st) == 0;
}

int
cli_setup(void)
{
	if (!mkdtemp(tmpdir))
		return -1;
	write_in(tmpdir, "good.coll", "topology T = torus(4, 4);\n"
	                       "group G on T { translate; map (x, y) -> (y, x); }\n"
	                       "tree B = bfs(T, root 0);\n"
	                       "collective allreduce A on T {algorithm symmetric(trees B, group G);}\n");
	write_in(tmpdir, "bad.coll", "topology T = torus(4, 4);\n"
	                      "collective allreduce A on T { algorithm rign; }\n");
	return 0;
}

int
cli_teardown(void)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void
test_help_and_version(void)
{
	char *out, *err;
	CU_ASSERT_EQUAL(collc("--help", &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "usage: collc <command>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "check FILE"));
	free(out), free(err);
	CU_ASSERT_EQUAL(collc("--version", &out, &err), 0);
	CU_ASSERT_NSTRING_EQUAL(out, "collc ", 6);
	free(out), free(err);
	CU_ASSERT_EQUAL(collc("", &out, &err), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "usage:"));
	free(out), free(err);
	CU_ASSERT_EQUAL(collc("compile x.coll", &out, &err), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "collc: unknown command 'compile'"));
	free(out), free(err);
	CU_ASSERT_EQUAL(collc("check --bogus x.coll", &out, &err), 2);
	free(out), free(err);
	CU_ASSERT_EQUAL(collc("build x.coll --target msccl --min-bytes 2MiB --max-bytes 1MiB", &out, &err), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--min-bytes 2097152 is above --max-bytes 1048576"));
	free(out), free(err);
}

static void
test_check(void)
{
	char *out, *err, args[512];
	snprintf(args, sizeof args, "check %s/good.coll", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "good.coll: 1 collective, 1 built and verified; model for "
	                                   "1 MiB"));
	/* without the reflection two link orbits: the + and - links are unevenly loaded */
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "A           allreduce  symmetric     16      32       8"
	                                   "       448  30.00 MiB  1.000  1.000  1.333     32       2"));
	CU_ASSERT_STRING_EQUAL(err, "");
	free(out), free(err);
	snprintf(args, sizeof args, "check --json --size 64KiB %s/good.coll", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "{\"collectives\": [\n  {\"name\": \"A\", \"kind\": "
	                                   "\"allreduce\", \"algorithm\": \"symmetric\", \"ranks\": 16, "
	                                   "\"chunks\": 32, \"rounds\": 8, \"messages\": 448, "
	                                   "\"volume_bytes\": 1966080, \"psi\": 1, \"theta\": 1, "
	                                   "\"omega\": 1.3333333333333333, \"group_order\": 32, "
	                                   "\"link_orbits\": 2, "
	                                   "\"model_time_s\": "));
	free(out), free(err);
	snprintf(args, sizeof args, "check --size lots %s/good.coll", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 2);
	free(out), free(err);
	snprintf(args, sizeof args, "check %s/bad.coll", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 1);
	CU_ASSERT_STRING_EQUAL(out, "");
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "bad.coll:2:41: error: unknown algorithm 'rign'; did you mean 'ring'?\n"
	                                   "collective allreduce A on T { algorithm rign; }\n"
	                                   "                                        ^\n"));
	free(out), free(err);
}

static void
test_unreadable_inputs(void)
{
	char *out, *err, args[512];
	snprintf(args, sizeof args, "check %s/missing.coll", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "error: cannot open"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "No such file or directory"));
	free(out), free(err);
	snprintf(args, sizeof args, "check %s", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "it is a directory"));
	free(out), free(err);
	CU_ASSERT_EQUAL(collc("check - </dev/null", &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "<stdin>: 0 collectives, 0 built and verified"));
	free(out), free(err);
}

static void
test_fmt_output_file(void)
{
	char *out, *err, args[512];
	snprintf(args, sizeof args, "fmt %s/good.coll -o %s/good.out", tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	char path[256];
	snprintf(path, sizeof path, "%s/good.out", tmpdir);
	char *written = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(written);
	CU_ASSERT_STRING_EQUAL(written, "topology T = torus(4, 4);\n"
	                                "group G on T {\n"
	                                "    translate;\n"
	                                "    map (x, y) -> (y, x);\n"
	                                "}\n"
	                                "tree B = bfs(T, root 0);\n"
	                                "collective allreduce A on T {\n"
	                                "    algorithm symmetric(trees B, group G);\n"
	                                "}\n");
	free(written), free(out), free(err);
	/* an input with an error writes nothing */
	snprintf(args, sizeof args, "fmt %s/bad.coll -o %s/bad.out", tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 1);
	CU_ASSERT(!exists("bad.out"));
	free(out), free(err);
	/* an output that cannot be written: an error, and no temporary left */
	snprintf(args, sizeof args, "fmt %s/good.coll -o %s/no/such/dir.out", tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "collc: error: cannot create"));
	free(out), free(err);
	snprintf(args, sizeof args, "ls %s | grep -c tmp >/dev/null", tmpdir);
	CU_ASSERT_NOT_EQUAL(system(args), 0);
}

static void
test_write_errors_and_links(void)
{
	char *out, *err, args[512], path[256];
	/* a full disk is an error, not a success */
	snprintf(args, sizeof args, "check %s/good.coll >/dev/full", tmpdir);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", COLLC_BIN, args);
	int st = system(cmd);
	CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	/* -o through a symbolic link writes the target and keeps its mode */
	write_in(tmpdir, "target.coll", "old\n");
	snprintf(path, sizeof path, "%s/target.coll", tmpdir);
	chmod(path, 0600);
	snprintf(cmd, sizeof cmd, "ln -s target.coll %s/link.coll", tmpdir);
	CU_ASSERT_EQUAL(system(cmd), 0);
	snprintf(args, sizeof args, "fmt %s/good.coll -o %s/link.coll", tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	free(out), free(err);
	struct stat ls, ts;
	snprintf(cmd, sizeof cmd, "%s/link.coll", tmpdir);
	CU_ASSERT(lstat(cmd, &ls) == 0 && S_ISLNK(ls.st_mode));
	CU_ASSERT(stat(path, &ts) == 0 && (ts.st_mode & 0777) == 0600);
	char *text = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_NSTRING_EQUAL(text, "topology T = torus(4, 4);", 25);
	free(text);
}

/* collc sim end to end: the closed form of docs/sim.md through the CSV, the
 * same numbers from a written .sim file, JSON, plots, and no output on error. */
static void
test_sim(void)
{
	char *out, *err, args[1024];
	write_in(tmpdir, "r4.coll", "network { link_bandwidth = 400 Gbps; link_latency = 100 ns; "
	                     "router_latency = 300 ns; step_overhead = 1 us; }\n"
	                     "topology R = ring(4);\n"
	                     "collective allreduce AR on R { algorithm ring; }\n");
	/* ring(4), 4 KiB: 2(p-1) steps of o + d + ser(1 KiB) = 6 x (1 us + 400 ns + 20.48 ns) */
	const char *row = "AR,allreduce,ring,4096,1024,float,sum,8.52288,";
	snprintf(args, sizeof args, "sim %s/r4.coll --sizes 4KiB --csv", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	CU_ASSERT_NSTRING_EQUAL(out, "collective,kind,algorithm,size,count,type,redop,time_us,"
	                             "algbw_GBps,busbw_GBps,", 75);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, row));
	free(out), free(err);
	snprintf(args, sizeof args, "sim %s/r4.coll --sizes 4KiB --csv --sync deps", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, row));
	free(out), free(err);
	snprintf(args, sizeof args, "build %s/r4.coll --target sim -o %s/r4.sim", tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	free(out), free(err);
	snprintf(args, sizeof args, "sim %s/r4.sim --sizes 4KiB --csv -o %s/r4.csv", tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	CU_ASSERT_STRING_EQUAL(out, "");
	free(out), free(err);
	char path[256];
	snprintf(path, sizeof path, "%s/r4.csv", tmpdir);
	char *csv = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, row));
	free(csv);
	/* JSON: one round end per step, each directed link of the ring's one direction used */
	snprintf(args, sizeof args, "sim %s/r4.coll --sizes 4KiB --json", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"round_end_s\": [1.42048e-06, 2.84096e-06, 4.26144e-06, "
	                                   "5.68192e-06, 7.1024e-06, 8.52288e-06]"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"link_bytes\": [0, 6144, 0, 6144, 0, 6144, 0, 6144]"));
	free(out), free(err);
	snprintf(args, sizeof args, "sim %s/r4.coll --sizes 4KiB..64KiB --plot %s/g.svg "
	         "--plot-time %s/time.svg -o %s/t.txt", tmpdir, tmpdir, tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	free(out), free(err);
	snprintf(path, sizeof path, "%s/g.svg", tmpdir);
	char *svg = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<svg "));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "</svg>"));
	free(svg);
	/* the time plot: one line per collective, five points, titled with the network */
	snprintf(path, sizeof path, "%s/time.svg", tmpdir);
	svg = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, ">time (us) by message size on ring 4 (packet mode)<"));
	const char *line = strstr(svg, "<polyline ");
	CU_ASSERT_PTR_NOT_NULL_FATAL(line);
	CU_ASSERT_PTR_NULL(strstr(line + 1, "<polyline "));
	int commas = 0;
	for (const char *c = strstr(line, "points="); *c != '/'; c++)
		commas += *c == ',';
	CU_ASSERT_EQUAL(commas, 5);
	free(svg);
	snprintf(path, sizeof path, "%s/t.txt", tmpdir);
	char *table = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(table);
	CU_ASSERT_PTR_NOT_NULL(strstr(table, " 65536 "));
	free(table);
	/* auto: each candidate simulated at each size; the rows read their nets after the
	 * candidates were built (once read after free: a crash, or ASan's report) */
	write_in(tmpdir, "auto.coll", "topology T = torus(4, 4);\n"
	                       "collective allreduce AR on T { algorithm auto; }\n");
	snprintf(args, sizeof args, "sim %s/auto.coll --sizes 4KiB,1MiB --csv", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, ",allreduce,auto:"));
	free(out), free(err);
	/* usage errors exit 2, input errors 1, and neither writes the output */
	snprintf(args, sizeof args, "sim %s/r4.coll --mode fast -o %s/no1.csv", tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 2);
	CU_ASSERT(!exists("no1.csv"));
	free(out), free(err);
	snprintf(args, sizeof args, "sim %s/bad.coll --csv -o %s/no2.csv --plot %s/no2.svg", tmpdir,
	         tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "error: unknown algorithm 'rign'"));
	CU_ASSERT(!exists("no2.csv"));
	CU_ASSERT(!exists("no2.svg"));
	free(out), free(err);
}

/* sweep: one machine and three merged shards give the same bytes; the rows
 * carry nccl-tests' bus bandwidth; a bad spec names its line. */
static void
test_sweep(void)
{
	write_in(tmpdir, "g.sweep", "# a small grid\n"
	                     "topology torus(8, 8), torus(4, 4)\n"
	                     "groups 4, 16\n"
	                     "allreduce ring, halving_doubling, swing\n"
	                     "alltoall bruck\n"
	                     "routing shortest_path, dor\n"
	                     "link_bandwidth 400 GBps\n"
	                     "link_latency 0.025 us, 0.5 us\n"
	                     "sizes 64KiB..4MiB\n");
	char *out, *err, args[1024];
	snprintf(args, sizeof args, "sweep %s/g.sweep -j 2 -o %s/all.csv --json %s/all.json "
	         "--plots %s/plots", tmpdir, tmpdir, tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "sweep: 448 of 448 points"));
	free(out), free(err);
	/* bridge on the optical ring, in a grid of its own */
	write_in(tmpdir, "o.sweep", "topology optical_ring(16)\nallreduce bridge\n"
	                            "link_bandwidth 400 GBps\nlink_latency 0.025 us\nsizes 64KiB\n");
	snprintf(args, sizeof args, "sweep %s/o.sweep -o %s/o.csv", tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	free(out), free(err);
	for (int i = 0; i < 3; i++) {
		snprintf(args, sizeof args, "sweep %s/g.sweep --shard %d/3 -j 1 -o %s/s%d.csv "
		         "--json %s/s%d.json", tmpdir, i, tmpdir, i, tmpdir, i);
		CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
		free(out), free(err);
	}
	snprintf(args, sizeof args, "sweep --merge %s/s2.csv %s/s0.csv %s/s1.csv", tmpdir, tmpdir,
	         tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	char path[256];
	snprintf(path, sizeof path, "%s/all.csv", tmpdir);
	char *all = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(all);
	CU_ASSERT_STRING_EQUAL(out, all);
	free(out), free(err);
	snprintf(args, sizeof args, "sweep --merge %s/s1.json %s/s0.json %s/s2.json", tmpdir,
	         tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	snprintf(path, sizeof path, "%s/all.json", tmpdir);
	char *js = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(js);
	CU_ASSERT_STRING_EQUAL(out, js);
	free(out), free(err), free(js);
	/* a shard missing: the merge refuses */
	snprintf(args, sizeof args, "sweep --merge %s/s0.csv %s/s1.csv", tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "in no shard"));
	free(out), free(err);
	/* point 0: ring allreduce of 4 ranks at 64 KiB; busbw = algbw x 2(p-1)/p */
	double t, alg, bus;
	const char *row = strstr(all, "\n0,");
	CU_ASSERT_PTR_NOT_NULL_FATAL(row);
	CU_ASSERT_EQUAL(sscanf(strstr(row, "65536,16384,float,sum,") + 22, "%lf,%lf,%lf", &t, &alg,
	                       &bus), 3);
	CU_ASSERT_DOUBLE_EQUAL(alg, 65536 / (t * 1e3), 0.01 * alg);
	CU_ASSERT_DOUBLE_EQUAL(bus, alg * 1.5, 0.002);
	/* bridge runs on the optical ring and reports its time; it does not run
	 * on a torus */
	snprintf(path, sizeof path, "%s/o.csv", tmpdir);
	char *opt = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(opt);
	static const char bridge_row[] = "optical_ring(16),all,allreduce,bridge,shortest_path,"
	                                 "400 GBps,0.025 us,,,,65536,16384,float,sum,";
	const char *br = strstr(opt, bridge_row);
	CU_ASSERT_PTR_NOT_NULL_FATAL(br);
	const char *ok = strstr(br, ",ok,"), *eol = strchr(br, '\n');
	double bt = 0;
	CU_ASSERT_EQUAL(sscanf(br + strlen(bridge_row), "%lf", &bt), 1);
	CU_ASSERT_TRUE(bt > 0 && ok && eol && ok < eol);
	free(opt);
	/* ... and not on a torus: an error at bridge in the spec, nothing written */
	write_in(tmpdir, "mixed.sweep", "topology torus(8, 8), optical_ring(16)\n"
	                                "allreduce ring, bridge\nsizes 64KiB\n");
	snprintf(args, sizeof args, "sweep %s/mixed.sweep -o %s/mixed.csv", tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "mixed.sweep:2:17: error: point 1 (allreduce bridge "
	                                   "on torus(8, 8), ranks all, 64 KiB) cannot be simulated: "
	                                   "bridge runs on an optical_ring topology"));
	CU_ASSERT(!exists("mixed.csv"));
	free(out), free(err);
	CU_ASSERT_TRUE(exists("plots/sweep-00000.svg"));
	free(all);
	/* links private: Bruck's six steps of 2 MiB on 2x32 take 6 x 2 MiB / 400 GB/s
	 * (no latency), however many of them cross one link */
	write_in(tmpdir, "p.sweep", "topology torus(2, 32)\ngroups 64\nalltoall bruck\n"
	                            "link_bandwidth 400 GBps\nlink_latency 0 us\nsizes 4MiB\n"
	                            "mode flow\nlinks private\n");
	snprintf(args, sizeof args, "sweep %s/p.sweep", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, ",4194304,1048576,float,none,31.457,"));
	free(out), free(err);
	write_in(tmpdir, "bad.sweep", "topology torus(4, 4)\nsizes 1MiB\nallreduce ring\nlinks some\n");
	snprintf(args, sizeof args, "sweep %s/bad.sweep", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "bad.sweep:4:1: error: 'links' takes"));
	free(out), free(err);
	write_in(tmpdir, "bad.sweep", "topology torus(4, 4)\nsizes 1MiB\nallreduce ring\nspeed 3\n");
	snprintf(args, sizeof args, "sweep %s/bad.sweep", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "bad.sweep:4:1: error: unknown key 'speed'"));
	CU_ASSERT_STRING_EQUAL(out, "");
	free(out), free(err);
}

/* The rows of a sweep's CSV without their point numbers, in size order
 * of `order` (the row of sizes[order[k]] k-th): what a row says of its
 * point, whatever else the spec lists. */
static char *
sweep_rows(const char *spec, const char *const *order, int n)
{
	char args[512], *out, *err;
	snprintf(args, sizeof args, "sweep %s/%s -j 2", tmpdir, spec);
	if (collc(args, &out, &err) != 0) {
		free(out), free(err);
		return NULL;
	}
	size_t len = strlen(out) + 1;
	char *rows = xcalloc(len, 1);
	for (int k = 0; k < n; k++)
		for (char *l = strchr(out, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
			char *eol = strchr(l + 1, '\n'), *comma = strchr(l + 1, ',');
			char want[64];
			snprintf(want, sizeof want, ",%s,", order[k]);
			char *at = strstr(comma, want);
			if (at && at < eol)
				strncat(rows, comma, (size_t)(eol - comma + 1));
		}
	free(out), free(err);
	return rows;
}

/* A row for a size is the same bytes whatever else the sizes line holds:
 * auto, pipelined_trees (SuperMesh) and bridge (optical ring) choose for
 * each size; and the choices differ by size. */
static void
test_sweep_sizes(void)
{
	static const char body[] = "topology supermesh(6, 6, bi)\n"
	                           "allreduce auto, pipelined_trees, pipelined_trees(segments 1)\n"
	                           "reduce_scatter pipelined_trees\nmode flow\n";
	static const char opt[] = "topology optical_ring(16)\nallreduce bridge\nalltoall bridge\n"
	                          "link_bandwidth 800 Gbps\nstep_overhead 1.7 us\nmode flow\n";
	char text[512];
	const char *sizes[][3] = {{"4KiB, 64MiB", "4096", "67108864"},
	                          {"64MiB, 4KiB", "4096", "67108864"},
	                          {"64MiB", "67108864", NULL}};
	char *rows[3], *orows[3];
	for (int i = 0; i < 3; i++) {
		snprintf(text, sizeof text, "%ssizes %s\n", body, sizes[i][0]);
		write_in(tmpdir, "sz.sweep", text);
		rows[i] = sweep_rows("sz.sweep", sizes[i] + 1, sizes[i][2] ? 2 : 1);
		snprintf(text, sizeof text, "%ssizes %s\n", opt, sizes[i][0]);
		write_in(tmpdir, "szo.sweep", text);
		orows[i] = sweep_rows("szo.sweep", sizes[i] + 1, sizes[i][2] ? 2 : 1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(rows[i]);
		CU_ASSERT_PTR_NOT_NULL_FATAL(orows[i]);
	}
	CU_ASSERT_STRING_EQUAL(rows[0], rows[1]);
	CU_ASSERT_STRING_EQUAL(orows[0], orows[1]);
	CU_ASSERT(strlen(rows[0]) > 0 && strlen(orows[0]) > 0);
	/* the 64 MiB rows alone are the 64 MiB rows of the pair */
	for (char *l = rows[2]; *l; l = strchr(l, '\n') + 1) {
		char line[512];
		snprintf(line, sizeof line, "%.*s", (int)(strchr(l, '\n') - l + 1), l);
		CU_ASSERT_PTR_NOT_NULL(strstr(rows[0], line));
	}
	for (char *l = orows[2]; *l; l = strchr(l, '\n') + 1) {
		char line[512];
		snprintf(line, sizeof line, "%.*s", (int)(strchr(l, '\n') - l + 1), l);
		CU_ASSERT_PTR_NOT_NULL(strstr(orows[0], line));
	}
	/* auto chooses per size, and says what; pipelined_trees' segments for
	 * 64 MiB beat one segment */
	CU_ASSERT_PTR_NOT_NULL(strstr(rows[0], ",4096,1024,float,sum,"));
	/* auto is simulated per size, as collc sim does: the same pick, built for each size */
	CU_ASSERT_PTR_NOT_NULL(strstr(rows[0], ",ok,auto:pipelined_trees (segments 1)\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(rows[0], ",ok,auto:pipelined_trees (segments 252)\n"));
	double seg = 0, one = 0;
	const char *a = strstr(rows[2], ",pipelined_trees,"), *b = strstr(rows[2], "segments 1)");
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_EQUAL(sscanf(strstr(a, ",float,sum,") + 11, "%lf", &seg), 1);
	CU_ASSERT_EQUAL(sscanf(strstr(b, ",float,sum,") + 11, "%lf", &one), 1);
	CU_ASSERT_TRUE(seg > 0 && seg * 2 < one);
	for (int i = 0; i < 3; i++)
		free(rows[i]), free(orows[i]);
}

/* A spec naming a .coll file: SP (a group and a tree), a user schedule and
 * a library algorithm, over routing and network values; the rows are
 * collc sim's and the library grid's; shards merge; errors are located. */
static void
test_sweep_file(void)
{
	static const char coll[] =
	    "network { link_bandwidth = 400 Gbps; link_latency = 100 ns; }\n"
	    "topology T = torus(4, 4);\n"
	    "group G on T { translate; map (x, y) -> (-x, -y); map (x, y) -> (y, x); }\n"
	    "tree B = bfs(T, root (0, 0));\n"
	    "collective allreduce SP on T { algorithm symmetric(trees B, group G); }\n"
	    "collective allreduce HD on T { algorithm halving_doubling; }\n"
	    "topology R = ring(4);\n"
	    "collective allgather UR on R {\n"
	    "    schedule { for s in 0..p - 2 { round { for r in 0..p - 1 {\n"
	    "        send (r - s) mod p from r to (r + 1) mod p copy; } } } }\n"
	    "}\n";
	write_in(tmpdir, "f.coll", coll);
	write_in(tmpdir, "f.sweep", "file f.coll\ncollectives SP, HD, UR\n"
	                            "routing shortest_path, dor\nlink_bandwidth 800 Gbps\n"
	                            "sizes 1MiB, 4MiB\nmode flow\n");
	char *out, *err, args[1024], path[256];
	snprintf(args, sizeof args, "sweep %s/f.sweep -j 2 -o %s/f.csv --plots %s/fplots", tmpdir,
	         tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "sweep: 12 of 12 points"));
	free(out), free(err);
	snprintf(path, sizeof path, "%s/f.csv", tmpdir);
	char *all = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(all);
	CU_ASSERT_PTR_NOT_NULL(strstr(all, "point,topology,ranks,collective,name,algorithm,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(all, "\n0,\"torus(4, 4)\",16,allreduce,SP,\"symmetric(trees B, "
	                                   "group G)\",shortest_path,800 Gbps,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(all, "\n8,ring(4),4,allgather,UR,schedule,shortest_path,"));
	CU_ASSERT_TRUE(exists("fplots/sweep-00000.svg") && exists("fplots/sweep-00004.svg"));
	/* SP at 800 Gb/s is collc sim's on the file with that bandwidth */
	char *sp = strstr(all, "\n0,"), *tail;
	double t = 0, want = 0;
	CU_ASSERT_EQUAL(sscanf(strstr(sp, ",float,sum,") + 11, "%lf", &t), 1);
	snprintf(args, sizeof args, "sim %s/f800.coll --collective SP --sizes 1MiB --mode flow --csv",
	         tmpdir);
	char text[2048];
	snprintf(text, sizeof text, "network { link_bandwidth = 800 Gbps; link_latency = 100 ns; }\n%s",
	         strstr(coll, "topology T"));
	write_in(tmpdir, "f800.coll", text);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	tail = strstr(out, ",float,sum,");
	CU_ASSERT_PTR_NOT_NULL_FATAL(tail);
	CU_ASSERT_EQUAL(sscanf(tail + 11, "%lf", &want), 1);
	CU_ASSERT_DOUBLE_EQUAL(t, want, 0.0006);
	free(out), free(err);
	/* HD with dor at 800 Gb/s is the library grid's row */
	write_in(tmpdir, "hd.sweep", "topology torus(4, 4)\nallreduce halving_doubling\n"
	                             "routing dor\nlink_bandwidth 800 Gbps\nlink_latency 100 ns\n"
	                             "sizes 1MiB\nmode flow\n");
	snprintf(args, sizeof args, "sweep %s/hd.sweep", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	const char *lib = strstr(out, ",1048576,262144,float,sum,");
	const char *hd = strstr(all, ",HD,halving_doubling,dor,800 Gbps,,,,,1048576,262144,float,sum,");
	CU_ASSERT_PTR_NOT_NULL_FATAL(lib);
	CU_ASSERT_PTR_NOT_NULL_FATAL(hd);
	CU_ASSERT_EQUAL(strncmp(lib, strstr(hd, ",1048576,"), strcspn(lib, "\n")), 0);
	free(out), free(err);
	/* shards merge byte-identically */
	for (int i = 0; i < 2; i++) {
		snprintf(args, sizeof args, "sweep %s/f.sweep --shard %d/2 -j 1 -o %s/fs%d.csv", tmpdir,
		         i, tmpdir, i);
		CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
		free(out), free(err);
	}
	snprintf(args, sizeof args, "sweep --merge %s/fs1.csv %s/fs0.csv", tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	CU_ASSERT_STRING_EQUAL(out, all);
	free(out), free(err), free(all);
	/* errors: located in the spec, nothing written */
	static const struct { const char *spec, *want; } bad[] = {
	    {"file f.coll\ntopology torus(4, 4)\nsizes 1MiB\n",
	     "e.sweep:2:1: error: 'topology' does not combine with `file`"},
	    {"file f.coll\ncollectives SP, HX\nsizes 1MiB\n",
	     "e.sweep:2:17: error: "},
	    {"file f.coll\nrouting dor\ncollectives UR\nsizes 1MiB\n", NULL},
	    {"file nothere.coll\nsizes 1MiB\n", "e.sweep:1:6: error: cannot open"},
	    {"topology torus(4, 4)\nallreduce symmetric(trees B, group G)\nsizes 1MiB\n",
	     "e.sweep:2:27: error: point 0 (allreduce symmetric(trees B, group G) on torus(4, 4), "
	     "ranks all, 1 MiB) cannot be simulated: unknown tree 'B' (declare trees and groups in "
	     "a .coll file and name it with `file`)"},
	};
	for (size_t i = 0; i < countof(bad); i++) {
		write_in(tmpdir, "e.sweep", bad[i].spec);
		snprintf(args, sizeof args, "sweep %s/e.sweep -o %s/e.csv", tmpdir, tmpdir);
		int rc = collc(args, &out, &err);
		if (bad[i].want) {
			CU_ASSERT_EQUAL(rc, 1);
			CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].want));
			CU_ASSERT(!exists("e.csv"));
		} else { /* dor on a ring: UR runs */
			CU_ASSERT_EQUAL(rc, 0);
			char *e = slurp(strcat(strcpy(path, tmpdir), "/e.csv"), NULL);
			CU_ASSERT_TRUE(e && strstr(e, ",allgather,UR,schedule,dor,"));
			free(e);
			unlink(path);
		}
		free(out), free(err);
	}
	/* a topology's own value is not overridden silently */
	write_in(tmpdir, "own.coll", "topology T = torus(4, 4) { network { link_latency = 1 us; } }\n"
	                             "collective allreduce A on T { algorithm ring; }\n");
	write_in(tmpdir, "e.sweep", "file own.coll\nlink_latency 0.5 us\nsizes 1MiB\n");
	snprintf(args, sizeof args, "sweep %s/e.sweep", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "e.sweep:2:1: error: topology 'T' sets its own "
	                                   "link_latency"));
	free(out), free(err);
}

/* A file without a network block takes the spec's values as one: the
 * user's ring schedule is the library ring's row for row; the failed point
 * reported is the same whatever --jobs is. */
static void
test_sweep_file_network(void)
{
	char cwd[1024], text[2048], args[1024], *out, *err, *lib, *lerr;
	CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
	snprintf(text, sizeof text, "file %s/examples/user-ring.coll\ncollectives RING\n"
	         "link_bandwidth 800 Gbps, 100 Gbps\nsizes 1MiB\n", cwd);
	write_in(tmpdir, "u.sweep", text);
	write_in(tmpdir, "l.sweep", "topology ring(8)\nallreduce ring\n"
	                            "link_bandwidth 800 Gbps, 100 Gbps\nsizes 1MiB\n");
	snprintf(args, sizeof args, "sweep %s/u.sweep", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	snprintf(args, sizeof args, "sweep %s/l.sweep", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &lib, &lerr), 0);
	/* from the bandwidth on, each row is the library's */
	for (int bw = 0; bw < 2; bw++) {
		const char *key = bw ? ",100 Gbps," : ",800 Gbps,";
		const char *u = strstr(out, key), *l = strstr(lib, key);
		CU_ASSERT_PTR_NOT_NULL_FATAL(u);
		CU_ASSERT_PTR_NOT_NULL_FATAL(l);
		CU_ASSERT_EQUAL(strncmp(strstr(u, ",1048576,"), strstr(l, ",1048576,"),
		                        strcspn(strstr(l, ",1048576,"), "\n")), 0);
	}
	free(out), free(err), free(lib), free(lerr);
	write_in(tmpdir, "e2.sweep", "topology torus(4, 4), optical_ring(16)\ngroups 4, 16\n"
	                             "allreduce ring, bridge\nrouting shortest_path, dor\n"
	                             "sizes 1MiB\n");
	char *e[2];
	for (int j = 0; j < 2; j++) {
		snprintf(args, sizeof args, "sweep %s/e2.sweep -j %d", tmpdir, j + 1);
		CU_ASSERT_EQUAL(collc(args, &out, &e[j]), 1);
		CU_ASSERT_STRING_EQUAL(out, "");
		free(out);
	}
	CU_ASSERT_PTR_NOT_NULL(strstr(e[0], "e2.sweep:3:17: error: point 2 (allreduce bridge on "
	                                    "torus(4, 4), ranks 4, routing shortest_path, 1 MiB)"));
	CU_ASSERT_STRING_EQUAL(strstr(e[0], "e2.sweep:"), strstr(e[1], "e2.sweep:"));
	free(e[0]), free(e[1]);
}

/* want with @BUDGET@ (the memory budget, which follows the machine's
 * memory: docs/limits.md) replaced as collc prints it here. */
static char *
with_budget(char *want)
{
	const char *at = want ? strstr(want, "@BUDGET@") : NULL;
	if (!at)
		return want;
	char budget[32];
	human_bytes(memory_budget(), budget, sizeof budget);
	size_t n = strlen(want) + sizeof budget;
	char *out = malloc(n);
	snprintf(out, n, "%.*s%s%s", (int)(at - want), want, budget, at + strlen("@BUDGET@"));
	free(want);
	return out;
}

/* tests/golden/cli/NAME.args is a command line; NAME.out what collc prints
 * (stdout, then stderr) and its exit status; @BUDGET@ in it stands for the
 * memory budget collc computes on this machine. */
static void
test_cli_golden(void)
{
	glob_t g;
	CU_ASSERT_EQUAL_FATAL(glob("tests/golden/cli/*.args", 0, NULL, &g), 0);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char *args = slurp(g.gl_pathv[i], NULL);
		CU_ASSERT_PTR_NOT_NULL_FATAL(args);
		args[strcspn(args, "\n")] = 0;
		char *out, *err;
		int st = collc(args, &out, &err);
		size_t n = strlen(out) + strlen(err) + 32;
		char *got = malloc(n);
		snprintf(got, n, "%s%sexit %d\n", out, err, st);
		char want_path[512];
		snprintf(want_path, sizeof want_path, "%.*s.out",
		         (int)(strlen(g.gl_pathv[i]) - strlen(".args")), g.gl_pathv[i]);
		char *want = with_budget(slurp(want_path, NULL));
		assert_named(want && strcmp(want, got) == 0, __LINE__, __FILE__,
		             "collc %s: expected\n%s\ngot\n%s", args, want ? want : "(missing)", got);
		free(want), free(got), free(out), free(err), free(args);
	}
	globfree(&g);
}

/* the man page renders, names every command and option collc's help lists;
 * install to a temporary PREFIX, then uninstall, leaves no file */
static void
test_man_install(void)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "MANWIDTH=80 man -l docs/collc.1 2>&1 >%s/man.txt", tmpdir);
	CU_ASSERT_EQUAL(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s/man.txt", tmpdir);
	char *man = slurp(cmd, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(man);
	CU_ASSERT_PTR_NOT_NULL(strstr(man, "collc - a schedule compiler for collective communication"));
	char *src = slurp("docs/collc.1", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(src);
	static const char *const cmds[] = {"check", "build", "fmt", "run", "sim", "explain",
	                                   "sweep"};
	for (size_t c = 0; c < countof(cmds); c++) {
		char args[64], *out, *err;
		snprintf(args, sizeof args, "help %s", cmds[c]);
		CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
		for (const char *p = strstr(out, "  --"); p; p = strstr(p + 1, "  --")) {
			char opt[64], roff[80];
			if (sscanf(p + 4, "%63[a-z-]", opt) != 1)
				continue;
			size_t k = 0;
			for (const char *q = opt; *q && k + 3 < sizeof roff; q++) {
				if (*q == '-')
					roff[k++] = '\\';
				roff[k++] = *q;
			}
			roff[k] = 0;
			assert_named(strstr(src, roff) != NULL, __LINE__, __FILE__,
			             "collc.1 does not name %s's --%s", cmds[c], opt);
		}
		free(out), free(err);
	}
	free(src), free(man);
	snprintf(cmd, sizeof cmd, "make -s install-files uninstall PREFIX=%s/prefix COLLC=%s "
	         ">%s/make.txt 2>&1 && test -x %s/prefix/bin/collc", tmpdir, COLLC_BIN, tmpdir,
	         tmpdir);
	CU_ASSERT_NOT_EQUAL(system(cmd), 0); /* uninstalled: no collc left */
	snprintf(cmd, sizeof cmd, "make -s install-files PREFIX=%s/prefix COLLC=%s >%s/make.txt 2>&1 "
	         "&& MANWIDTH=80 man -l %s/prefix/share/man/man1/collc.1 | grep -q 'EXIT STATUS' "
	         "&& %s/prefix/bin/collc check %s/prefix/share/collc/examples/ring-classic.coll "
	         ">/dev/null && test -f %s/prefix/share/doc/collc/sim.md", tmpdir, COLLC_BIN, tmpdir,
	         tmpdir, tmpdir, tmpdir, tmpdir);
	CU_ASSERT_EQUAL(system(cmd), 0);
	/* bash completion: commands, and a command's options from its help */
	snprintf(cmd, sizeof cmd, "PATH=%s/prefix/bin:$PATH bash -c '. docs/contrib/collc.bash; "
	         "COMP_WORDS=(collc si); COMP_CWORD=1; _collc; echo ${COMPREPLY[*]}; "
	         "COMP_WORDS=(collc sim --siz); COMP_CWORD=2; _collc; echo ${COMPREPLY[*]}' >%s/comp.txt",
	         tmpdir, tmpdir);
	CU_ASSERT_EQUAL(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s/comp.txt", tmpdir);
	char *comp = slurp(cmd, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(comp);
	CU_ASSERT_STRING_EQUAL(comp, "sim\n--size --sizes\n");
	free(comp);
	snprintf(cmd, sizeof cmd, "make -s uninstall PREFIX=%s/prefix >%s/make.txt 2>&1 && "
	         "test -z \"$(find %s/prefix -mindepth 1)\"", tmpdir, tmpdir, tmpdir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

/* The rows of a sim CSV (header dropped), sorted: the same set of rows
 * whatever order --sizes gave them in. */
static char *
sorted_rows(const char *csv)
{
	char cmd[1024], path[256];
	snprintf(path, sizeof path, "%s/rows.csv", tmpdir);
	FILE *f = fopen(path, "w");
	fputs(csv, f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "tail -n +2 %s | LC_ALL=C sort >%s.sorted", path, path);
	CU_ASSERT_EQUAL(system(cmd), 0);
	snprintf(path, sizeof path, "%s/rows.csv.sorted", tmpdir);
	return slurp(path, NULL);
}

/* A size's row is the same byte for byte whatever else --sizes holds:
 * auto's pick, pipelined_trees' and chain's segments, tto's chunks and
 * bridge's reconfigurations are chosen per size. */
static void
test_sim_sizes_permuted(void)
{
	write_in(tmpdir, "persize.coll",
	         "network { link_bandwidth = 400 Gbps; link_latency = 100 ns; }\n"
	         "topology SB = supermesh(4, 4, bi);\n"
	         "topology T = torus(4, 4);\n"
	         "topology O = optical_ring(16, ports 32);\n"
	         "topology M = mesh(4, 4);\n"
	         "topology R = ring(8);\n"
	         "collective allreduce P on SB { algorithm pipelined_trees; }\n"
	         "collective broadcast C on R { algorithm chain; root 3; }\n"
	         "collective allreduce D on M { algorithm tto; ranks 0..11, 13..15; }\n"
	         "collective reduce G on R { algorithm chain(segments 8); root 0; }\n"
	         "collective allreduce H on M { algorithm tto; chunks 192; ranks 0..11, 13..15; }\n"
	         "collective allreduce A on T { algorithm auto; }\n"
	         "collective allreduce B on O { algorithm bridge; }\n"
	         "collective allreduce F on SB { algorithm pipelined_trees(segments 4); }\n");
	static const char *const orders[] = {"4KiB,1MiB,64MiB", "64MiB,1MiB,4KiB", "1MiB,64MiB,4KiB"};
	char *first = NULL, *alone = NULL, *out, *err, args[512];
	for (size_t i = 0; i < countof(orders); i++) {
		snprintf(args, sizeof args, "sim %s/persize.coll --sizes %s --csv", tmpdir, orders[i]);
		CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
		char *rows = sorted_rows(out);
		if (!first)
			first = rows;
		else {
			CU_ASSERT_STRING_EQUAL(rows, first);
			free(rows);
		}
		free(out), free(err);
	}
	/* each size alone gives its rows of the three-size runs */
	char *joined = calloc(1, 1);
	for (int k = 0; k < 3; k++) {
		static const char *const one[] = {"4KiB", "1MiB", "64MiB"};
		snprintf(args, sizeof args, "sim %s/persize.coll --sizes %s --csv", tmpdir, one[k]);
		CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
		const char *body = strchr(out, '\n') ? strchr(out, '\n') + 1 : out;
		const char *part = k ? body : out; /* one header, as sorted_rows drops it */
		joined = realloc(joined, strlen(joined) + strlen(part) + 1);
		strcat(joined, part);
		free(out), free(err);
	}
	alone = sorted_rows(joined);
	CU_ASSERT_STRING_EQUAL(alone, first);
	/* the choices differ by size, and the output says which; a fixed one says so */
	CU_ASSERT_PTR_NOT_NULL(strstr(first, "P,allreduce,pipelined_trees (segments 1),4096,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(first, "P,allreduce,pipelined_trees (segments 192),67108864,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(first, "F,allreduce,pipelined_trees (fixed segments 4),67108864,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(first, "C,broadcast,chain (segments 2),4096,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(first, "C,broadcast,chain (segments 283),67108864,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(first, "G,reduce,chain (fixed segments 8),4096,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(first, "G,reduce,chain (fixed segments 8),67108864,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(first, "D,allreduce,tto (chunks 3),4096,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(first, "D,allreduce,tto (chunks 600),67108864,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(first, "H,allreduce,tto (fixed chunks 192),4096,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(first, "B,allreduce,bridge (reconfigs 0),4096,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(first, "B,allreduce,bridge (reconfigs 6),67108864,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(first, "A,allreduce,auto:swing,67108864,"));
	free(first), free(alone), free(joined);
}

/* tune's JSON, read back: at every size the choice's time is the least of
 * the candidates'; the plan's ranges run from the first size to the last,
 * each starting one byte after the one before. The count of sizes. */
static int
check_tune_json(const char *json, double first, double last)
{
	int nsize = 0;
	for (const char *p = strstr(json, "{\"size\": "); p; p = strstr(p + 1, "{\"size\": ")) {
		const char *t = strstr(p, "\"time_us\": ");
		const char *c = strstr(p, "\"candidates\": {");
		CU_ASSERT_FATAL(t && c);
		double chosen = strtod(t + 11, NULL), least = INFINITY;
		int ncand = 0;
		const char *end = strchr(c, '}');
		for (const char *q = c + 15; q < end;) {
			const char *k0 = strchr(q, '"');
			if (!k0 || k0 > end)
				break;
			const char *k1 = strchr(k0 + 1, '"');
			double v = strtod(k1 + 3, (char **)&q); /* past `": ` */
			least = v < least ? v : least;
			ncand++;
		}
		assert_named(ncand >= 2 && chosen == least, __LINE__, __FILE__,
		             "tune: size %d chose %g us, the least of %d candidates is %g us", nsize,
		             chosen, ncand, least);
		nsize++;
	}
	const char *plan = strstr(json, "\"plan\": [");
	CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
	double next = first, hi = 0;
	int nrange = 0;
	for (const char *p = strstr(plan, "\"min_bytes\": "); p; p = strstr(p + 1, "\"min_bytes\": ")) {
		double lo = strtod(p + 13, NULL);
		hi = strtod(strstr(p, "\"max_bytes\": ") + 13, NULL);
		assert_named(lo == next && hi >= lo, __LINE__, __FILE__,
		             "tune: range %d is %.0f..%.0f, expected to start at %.0f", nrange, lo, hi, next);
		next = hi + 1;
		nrange++;
	}
	CU_ASSERT(nrange >= 1);
	CU_ASSERT_EQUAL(hi, last);
	return nsize;
}

static void
test_tune(void)
{
	char *out, *err, args[1024], path[256];
	snprintf(args, sizeof args, "tune examples/torus-8x8-compare.coll --collective SP "
	         "--sizes 4KiB..1MiB --json --plot %s/tune.svg", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	CU_ASSERT_EQUAL(check_tune_json(out, 4096, 1 << 20), 9);
	/* the file's other allreduces on the same ranks take part (SP's forest, swing) */
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"SP_forest: symmetric\": "));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"halving_doubling\": "));
	free(out), free(err);
	snprintf(path, sizeof path, "%s/tune.svg", tmpdir);
	char *svg = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<svg"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "chosen"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "SP_forest: symmetric"));
	free(svg);
	/* SuperMesh: pipelined trees chosen per size; the text plan */
	CU_ASSERT_EQUAL(collc("tune examples/supermesh-vs-mesh.coll --collective AR_bi --sizes "
	                      "4KiB..1MiB --json", &out, &err), 0);
	CU_ASSERT_EQUAL(check_tune_json(out, 4096, 1 << 20), 9);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"AR_bi: pipelined_trees (fixed segments 64)\": "));
	free(out), free(err);
	CU_ASSERT_EQUAL(collc("tune examples/supermesh-vs-mesh.coll --collective AR_bi --sizes "
	                      "4KiB,64KiB", &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "plan:\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "4 KiB to under 64 KiB"));
	free(out), free(err);
	/* --plot draws one collective */
	snprintf(args, sizeof args, "tune examples/supermesh-vs-mesh.coll --sizes 4KiB --plot %s/x.svg",
	         tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--plot draws one collective"));
	free(out), free(err);
}

/* The bound column is a true upper bound: no example's collective passes
 * it at 4 KiB, 1 MiB or 256 MiB (flow), or 4 KiB and 1 MiB (packet). */
static void
test_bound_holds(void)
{
	glob_t g;
	CU_ASSERT_EQUAL_FATAL(glob("examples/*.coll", 0, NULL, &g), 0);
	int rows = 0;
	for (size_t i = 0; i < g.gl_pathc; i++)
		for (int mode = 0; mode < 2; mode++) {
			char args[512], *out, *err;
			/* under the sanitizers the packet runs take most of an hour: flow only */
			if (mode && UNDER_ASAN)
				continue;
			snprintf(args, sizeof args, "sim %s --csv %s", g.gl_pathv[i],
			         mode ? "--mode packet --sizes 4KiB,1MiB" : "--mode flow --sizes 4KiB,1MiB,256MiB");
			CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
			/* bound_ratio is the 12th column */
			for (char *save, *line = strtok_r(out, "\n", &save); line;
			     line = strtok_r(NULL, "\n", &save)) {
				if (strncmp(line, "collective,", 11) == 0)
					continue;
				const char *c = line;
				for (int k = 0; k < 11 && c; k++)
					c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL;
				CU_ASSERT_PTR_NOT_NULL_FATAL(c);
				double ratio = strtod(c, NULL);
				assert_named(ratio <= 1 + 1e-9, __LINE__, __FILE__, "%s (%s): bound %.1f%% in %s",
				             g.gl_pathv[i], mode ? "packet" : "flow", ratio * 100, line);
				rows++;
			}
			free(out), free(err);
		}
	globfree(&g);
	CU_ASSERT(rows > (UNDER_ASAN ? 200 : 400));
}

/* A line of an example saying that packet and flow mode differ for one
 * collective at one size, with the figures measured (docs/sim.md 2.2):
 *   // sim: packet and flow differ: NAME at SIZE: packet P us, flow F us */
typedef struct DiffNote {
	char name[64];
	double size, packet_us, flow_us;
	bool seen;
} DiffNote;

enum { MAX_DIFF_NOTES = 32 };

static const char diff_tag[] = "sim: packet and flow differ: ";

/* The notes of an example's text; -1 (and a named failure) for one that
 * does not read. */
static int
read_diff_notes(const char *path, const char *text, DiffNote *notes)
{
	int n = 0;
	for (const char *p = strstr(text, diff_tag); p; p = strstr(p + 1, diff_tag)) {
		char size[32];
		DiffNote d = {0};
		int ok = n < MAX_DIFF_NOTES &&
		         sscanf(p + strlen(diff_tag), "%63s at %31[^:]: packet %lf us, flow %lf us",
		                d.name, size, &d.packet_us, &d.flow_us) == 4 &&
		         (d.size = parse_size(size)) > 0;
		assert_named(ok, __LINE__, __FILE__, "%s: a note that does not read: %.80s", path, p);
		if (!ok)
			return -1;
		notes[n++] = d;
	}
	return n;
}

/* The CSV's time_us (8th column) of collective `name` at `size`, or -1. */
static double
csv_time(const char *csv, const char *name, double size)
{
	size_t len = strlen(name);
	for (const char *l = csv; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, name, len) != 0 || l[len] != ',')
			continue;
		const char *c = l;
		double cols[8];
		for (int k = 0; k < 8 && c; k++) {
			cols[k] = strtod(c, NULL);
			c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL;
		}
		if (c && cols[3] == size)
			return cols[7];
	}
	return -1;
}

/* Packet mode's time of `name` at `size` by itself: -1 when the work
 * budget refuses it (docs/limits.md), -2 on any other failure. */
static double
packet_alone(const char *path, const char *name, double size)
{
	char args[512], *out, *err;
	snprintf(args, sizeof args, "sim %s --csv --mode packet --collective %s --sizes %.0f", path,
	         name, size);
	int rc = collc(args, &out, &err);
	double t = rc == 0 ? csv_time(out, name, size) : strstr(err, "packet mode") ? -1 : -2;
	free(out), free(err);
	return t;
}

/* Packet and flow mode agree within 5 % on every example's collectives at
 * 1, 16 and 256 MiB, or the example says why in a note (above) whose
 * figures are the ones measured; a note for a pair that agrees is stale and
 * fails, as does one naming nothing that ran. A packet run the work budget
 * refuses is left out (flow mode runs every size). */
static void
test_packet_flow_agree(void)
{
	/* under the sanitizers the packet runs take most of an hour */
	if (UNDER_ASAN)
		return;
	static const double sizes[] = {1 << 20, 16 << 20, 256 << 20};
	glob_t g;
	CU_ASSERT_EQUAL_FATAL(glob("examples/*.coll", 0, NULL, &g), 0);
	int pairs = 0, refused = 0, noted = 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *path = g.gl_pathv[i];
		char *text = slurp(path, NULL);
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		DiffNote notes[MAX_DIFF_NOTES];
		int nnote = read_diff_notes(path, text, notes);
		free(text);
		char args[512], *flow, *packet, *err;
		snprintf(args, sizeof args, "sim %s --csv --mode flow --sizes 1MiB,16MiB,256MiB", path);
		CU_ASSERT_EQUAL(collc(args, &flow, &err), 0);
		free(err);
		snprintf(args, sizeof args, "sim %s --csv --mode packet --sizes 1MiB,16MiB,256MiB", path);
		bool whole = collc(args, &packet, &err) == 0; /* else one collective and size at a time */
		free(err);
		for (char *save, *line = strtok_r(flow, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			if (strncmp(line, "collective,", 11) == 0)
				continue;
			char name[64];
			CU_ASSERT_FATAL(sscanf(line, "%63[^,]", name) == 1);
			for (size_t k = 0; k < countof(sizes); k++) {
				double f = csv_time(line, name, sizes[k]);
				if (f < 0)
					continue;
				double p = whole ? csv_time(packet, name, sizes[k])
				                 : packet_alone(path, name, sizes[k]);
				/* refused only past 1 MiB, and only by itself */
				assert_named(p != -2 && (p != -1 || (!whole && sizes[k] > (1 << 20))),
				             __LINE__, __FILE__, "%s: %s at %.0f B: packet mode failed", path,
				             name, sizes[k]);
				if (p < 0) {
					refused++;
					continue;
				}
				pairs++;
				DiffNote *d = NULL;
				for (int n = 0; n < nnote && !d; n++)
					if (strcmp(notes[n].name, name) == 0 && notes[n].size == sizes[k])
						d = &notes[n];
				double diff = (p - f) / f * 100;
				if (d) {
					d->seen = true;
					noted++;
				}
				if (fabs(diff) <= 5) {
					assert_named(!d, __LINE__, __FILE__, "%s: %s at %.0f B agree (packet %.1f us, "
					             "flow %.1f us, %+.1f %%): its note is stale", path, name,
					             sizes[k], p, f, diff);
					continue;
				}
				assert_named(d && fabs(d->packet_us - p) <= 0.05 + 1e-9 * p &&
				             fabs(d->flow_us - f) <= 0.05 + 1e-9 * f, __LINE__, __FILE__,
				             "%s: %s at %.0f B: packet %.1f us, flow %.1f us (%+.1f %%), and %s",
				             path, name, sizes[k], p, f, diff,
				             d ? "its note's figures are not these" : "no note says why");
			}
		}
		for (int n = 0; n < nnote; n++)
			assert_named(notes[n].seen, __LINE__, __FILE__, "%s: the note on %s at %.0f B "
			             "names no pair that ran", path, notes[n].name, notes[n].size);
		free(flow), free(packet);
	}
	globfree(&g);
	/* 130 of 136 pairs at 256 MiB, 2026-12-02 */
	CU_ASSERT(pairs > 350 && refused < 20 && noted > 0);
}

/* The sweep's network axes are the registry's swept parameters, NNET of
 * them, each a parameter the language knows. */
static void
test_sweep_axes_registry(void)
{
	for (int k = 0; k < NNET; k++) {
		CU_ASSERT_PTR_NOT_NULL_FATAL(net_key(k));
		CU_ASSERT_PTR_NOT_NULL(net_param_find(net_key(k)));
	}
	CU_ASSERT_PTR_NULL(net_key(NNET));
}

/* build --target msccl says what it chose on stderr (a note), agreeing
 * with the file: the channels the width search found, or the options
 * given, named as given; a staged allgather says so. */
static void
test_build_msccl_note(void)
{
	char *out, *err, args[512];
	snprintf(args, sizeof args, "build %s/good.coll --target msccl -o %s/good.xml", tmpdir,
	         tmpdir);
	CU_ASSERT_EQUAL_FATAL(collc(args, &out, &err), 0);
	char path[256];
	snprintf(path, sizeof path, "%s/good.xml", tmpdir);
	char *xml = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
	const char *nc = strstr(xml, "nchannels=\"");
	CU_ASSERT_PTR_NOT_NULL_FATAL(nc);
	int nch = atoi(nc + 11);
	char want[256];
	snprintf(want, sizeof want, "collc: build: note: 'A' for MSCCL: %d channel%s (%d per "
	         "instance, the fewest that fit), 1 instance (default), protocol Simple (default); "
	         "at most ", nch, nch == 1 ? "" : "s", nch);
	assert_named(strncmp(err, want, strlen(want)) == 0 && strchr(err, '\n') == err + strlen(err) - 1,
	             __LINE__, __FILE__, "one note line, '%s...': %s", want, err);
	CU_ASSERT_STRING_EQUAL(out, "");
	free(xml), free(out), free(err);
	snprintf(args, sizeof args, "build %s/good.coll --target msccl --channels 2 --instances 2 "
	         "--proto LL -o %s/good2.xml", tmpdir, tmpdir);
	CU_ASSERT_EQUAL_FATAL(collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "'A' for MSCCL: 4 channels (2 per instance, --channels), "
	                                   "2 instances (--instances), protocol LL (--proto); at most "));
	free(out), free(err);
	/* the hierarchical allgather of 16 nodes of 8 GPUs is staged */
	write_in(tmpdir, "ag128.coll", "topology C = spine_leaf(spines 16, leaves 16, hosts 8);\n"
	         "collective allgather AG on C { algorithm hierarchical(ring, ring); }\n");
	snprintf(args, sizeof args, "build %s/ag128.coll --target msccl -o %s/ag128.xml", tmpdir,
	         tmpdir);
	CU_ASSERT_EQUAL_FATAL(collc(args, &out, &err), 0);
	assert_named(strstr(err, "protocol Simple (default), staged through scratch; at most 7 "
	                         "thread blocks and 175 steps a rank\n") != NULL, __LINE__, __FILE__,
	             "%s", err);
	free(out), free(err);
	/* other commands say nothing of it: the XML on stdout, stderr empty */
	snprintf(args, sizeof args, "build %s/good.coll --target ir", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	CU_ASSERT_STRING_EQUAL(err, "");
	free(out), free(err);
}

static int
count_in(const char *text, const char *what)
{
	int n = 0;
	for (const char *q = strstr(text, what); q; q = strstr(q + 1, what))
		n++;
	return n;
}

/* tune's MSCCL choice per range: by the model, deterministic (the same
 * text twice), and what --proto and --instances fix stays fixed and is
 * marked so in the text, the CSV and the JSON. */
static void
test_tune_msccl_choice(void)
{
	const char *base = "tune examples/torus-8x8-compare.coll --collective SP --sizes "
	                   "1KiB..1GiB --mode flow";
	char args[512], *out, *err, *out2;
	CU_ASSERT_EQUAL_FATAL(collc(base, &out, &err), 0);
	free(err);
	CU_ASSERT_EQUAL_FATAL(collc(base, &out2, &err), 0);
	CU_ASSERT_STRING_EQUAL(out, out2);
	/* LL for the smallest range, Simple with instances for the largest */
	const char *plan = strstr(out, "plan:\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
	CU_ASSERT_PTR_NOT_NULL(strstr(plan, "1 KiB to under 32 KiB        SWL: swing  [MSCCL LL, "
	                                    "1 instance]"));
	CU_ASSERT_PTR_NOT_NULL(strstr(plan, "[MSCCL Simple, 8 instances]"));
	CU_ASSERT_PTR_NULL(strstr(plan, "(--proto)"));
	free(out), free(out2), free(err);
	snprintf(args, sizeof args, "%s --proto LL128 --instances 2", base);
	CU_ASSERT_EQUAL_FATAL(collc(args, &out, &err), 0);
	int ranges = 0;
	const char *fixed = "[MSCCL LL128 (--proto), 2 instances (--instances)]";
	for (const char *q = strstr(out, "plan:\n"); (q = strstr(q + 1, "[MSCCL ")) && q[7] != '.';
	     ranges++) /* each range's, up to the legend's "[MSCCL ...]" */
		CU_ASSERT_EQUAL(strncmp(q, fixed, strlen(fixed)), 0);
	CU_ASSERT(ranges >= 2);
	free(out), free(err);
	snprintf(args, sizeof args, "%s --proto LL128 --instances 2 --csv", base);
	CU_ASSERT_EQUAL_FATAL(collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, ",msccl_proto,msccl_instances\n"));
	CU_ASSERT_EQUAL(count_in(out, ",LL128,2\n"), count_in(out, "\n") - 1);
	free(out), free(err);
	snprintf(args, sizeof args, "%s --proto Simple --json", base);
	CU_ASSERT_EQUAL_FATAL(collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"msccl\": {\"proto\": \"Simple\", \"instances\": 1, "
	                                   "\"proto_fixed\": true, \"instances_fixed\": false}"));
	CU_ASSERT_PTR_NULL(strstr(out, "\"proto\": \"LL"));
	free(out), free(err);
	CU_ASSERT_EQUAL(collc("tune examples/torus-8x8-compare.coll --proto LL64", &out, &err), 2);
	free(out), free(err);
}

/* tune --msccl-dir: walking sizes from 1 KiB to 1 GiB, the executor's
 * rule (files in path order, the first whose range and chunking select
 * the size) picks the file of the planned range every time; every file
 * passes the checker as it is read. */
static void
test_tune_msccl_dir(void)
{
	char args[1024], *out, *err, dir[256];
	snprintf(dir, sizeof dir, "%s/algos", tmpdir);
	snprintf(args, sizeof args, "tune examples/torus-8x8-compare.coll --collective SP --sizes "
	         "1KiB..1GiB --mode flow --csv --msccl-dir %s", dir);
	CU_ASSERT_EQUAL_FATAL(collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "run with MSCCL_ALGO_DIR="));
	/* the plan's ranges, from the CSV: size -> its range's first byte */
	glob_t g;
	char pat[300];
	snprintf(pat, sizeof pat, "%s/*.xml", dir);
	CU_ASSERT_EQUAL_FATAL(glob(pat, 0, NULL, &g), 0); /* sorted: the executor's order */
	CU_ASSERT(g.gl_pathc >= 2);
	Arena a = {0};
	MProg *p = arena_array(&a, g.gl_pathc, sizeof *p);
	char **texts = arena_array(&a, g.gl_pathc, sizeof *texts); /* the programs point into them */
	for (size_t f = 0; f < g.gl_pathc; f++) {
		size_t len;
		char *text = texts[f] = slurp(g.gl_pathv[f], &len);
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		diag_source(g.gl_pathv[f], text, len);
		CU_ASSERT_EQUAL(msccl_read(&a, text, len, false, &p[f]), 0);
		CU_ASSERT_EQUAL(msccl_check(&p[f]), 0);
		CU_ASSERT_EQUAL(msccl_check_run(&p[f], msccl_capacity(p[f].proto), false), 0);
		diag_reset();
	}
	int walked = 0, picked = 0;
	for (double size = 1024; size <= 1073741824.0; size *= 1.5) {
		double bytes = floor(size / 1024) * 1024; /* whole chunks of floats */
		/* the planned range's first byte and MSCCL protocol: the CSV row's
		 * range_min, range_max and msccl_proto for this size's range */
		double want_lo = -1;
		char want_proto[16] = "";
		for (char *l = strchr(out, '\n') + 1; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			double lo, hi;
			char proto[16];
			const char *c = l;
			for (int k = 0; k < 8 && c; k++)
				c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL;
			if (c && sscanf(c, "%lf,%lf,%15[A-Za-z0-9]", &lo, &hi, proto) == 3 &&
			    lo <= bytes && bytes <= hi) {
				want_lo = lo;
				snprintf(want_proto, sizeof want_proto, "%s", proto);
			}
		}
		int first = -1, planned = -1;
		for (size_t f = 0; f < g.gl_pathc; f++) {
			if (first < 0 && msccl_selects(&p[f], (int64_t)bytes, 4))
				first = (int)f;
			if (p[f].min_bytes == (int64_t)want_lo)
				planned = (int)f;
		}
		CU_ASSERT_FATAL(planned >= 0);
		/* a size the planned file's chunks (nchunksperloop, times its
		 * instances) do not cut into whole elements runs NCCL's own */
		bool whole = (int64_t)bytes / 4 % p[planned].nchunksperloop == 0;
		assert_named(whole ? first == planned : first < 0, __LINE__, __FILE__,
		             "%.0f bytes: the executor picks %s, the plan's file is %s (%d chunks)",
		             bytes, first >= 0 ? g.gl_pathv[first] : "nothing", g.gl_pathv[planned],
		             p[planned].nchunksperloop);
		static const char *const pname[] = {[MP_SIMPLE] = "Simple", [MP_LL] = "LL",
		                                    [MP_LL128] = "LL128"};
		assert_named(strcmp(pname[p[planned].proto], want_proto) == 0, __LINE__, __FILE__,
		             "%s: proto %s, the plan's %s", g.gl_pathv[planned],
		             pname[p[planned].proto], want_proto);
		walked++;
		picked += first >= 0;
	}
	/* small sizes LL, large Simple (the model: docs/cli.md, tune) */
	CU_ASSERT_EQUAL(p[0].proto, MP_LL);
	CU_ASSERT_EQUAL(p[g.gl_pathc - 1].proto, MP_SIMPLE);
	CU_ASSERT(picked > 25);
	CU_ASSERT(walked > 30);
	/* outside the plan, no file: NCCL's own algorithm runs */
	for (size_t f = 0; f < g.gl_pathc; f++) {
		CU_ASSERT_FALSE(msccl_selects(&p[f], 512, 4));
		CU_ASSERT_FALSE(msccl_selects(&p[f], 2147483648LL, 4));
	}
	for (size_t f = 0; f < g.gl_pathc; f++)
		free(texts[f]);
	arena_free(&a);
	globfree(&g);
	free(out), free(err);
	/* a directory that exists is replaced whole (no file of the earlier plan
	 * stays to be selected too): run again, the same files */
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	free(out), free(err);
}

/* The time(us) of NAME's row at SIZE in sim's main table (up to the first
 * blank line, before the comparison table). */
static bool
sim_row(const char *out, const char *name, const char *size, double *us)
{
	const char *end = strstr(out, "\n\n");
	for (const char *l = out; l && *l && (!end || l < end); l = strchr(l, '\n'), l = l ? l + 1 : 0) {
		char n[32], alg[64], sz[32], type[16], redop[16];
		double count;
		if (sscanf(l, "%31s %63s %31s %lf %15s %15s %lf", n, alg, sz, &count, type, redop,
		           us) == 7 &&
		    strcmp(n, name) == 0 && strcmp(sz, size) == 0)
			return true;
	}
	return false;
}

/* sim --compare: each row against the baseline of its kind and size; the
 * speedup is the baseline's time over the row's (checked against the times
 * of the main table), and the energy is its three parts' sum. */
static void
test_sim_compare(void)
{
	char *out, *err, args[1024];
	write_in(tmpdir, "cmp.coll", "topology R = ring(8);\n"
	                       "collective allreduce A on R { algorithm ring; }\n"
	                       "collective allreduce B on R { algorithm recursive_doubling; }\n"
	                       "collective allgather G on R { algorithm ring; }\n");
	snprintf(args, sizeof args, "sim %s/cmp.coll --sizes 1MiB,4MiB --compare A", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	const char *table = out ? strstr(out, "\ncollective  baseline") : NULL;
	CU_ASSERT_PTR_NOT_NULL_FATAL(table);
	int rows = 0;
	for (const char *l = strchr(table + 1, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
		char name[32], base[32], size[32];
		double speedup, energy, link, router, stat, tb = 0, tr = 0;
		int n = sscanf(l + 1, "%31s %31s %31s %lfx %lfx %lf %lf %lf", name, base, size, &speedup,
		               &energy, &link, &router, &stat);
		assert_named(n == 8, __LINE__, __FILE__, "comparison row: %.60s", l + 1);
		if (n != 8)
			break;
		rows++;
		/* only B has a baseline: A is it, G (allgather) has none of its kind */
		CU_ASSERT_STRING_EQUAL(name, "B");
		CU_ASSERT_STRING_EQUAL(base, "A");
		CU_ASSERT(sim_row(out, "A", size, &tb) && sim_row(out, "B", size, &tr));
		assert_named(tr > 0 && fabs(speedup - tb / tr) < 2e-3, __LINE__, __FILE__,
		             "%s B: speedup %.3f, times %.2f / %.2f us", size, speedup, tb, tr);
		CU_ASSERT(speedup < 1); /* recursive doubling sends whole vectors: slower */
		CU_ASSERT(fabs(link + router + stat - energy) < 2e-3);
	}
	CU_ASSERT_EQUAL(rows, 2);
	free(out), free(err);
	/* an unknown baseline, and a table that CSV has no place for */
	snprintf(args, sizeof args, "sim %s/cmp.coll --sizes 1MiB --compare Z", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--compare: no collective named 'Z' was simulated"));
	free(out), free(err);
	snprintf(args, sizeof args, "sim %s/cmp.coll --sizes 1MiB --compare A --csv", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 2);
	CU_ASSERT_STRING_EQUAL(out, "");
	free(out), free(err);
}


/* sweep stopped by SIGINT (the test hook has the first worker send it, as a
 * terminal would, once it has sent 3 points): exit 130, a CSV of whole rows
 * each the full run's, the command that resumes it; --resume finishes it into
 * the uninterrupted run's bytes, and refuses another spec's rows. */
static void
test_sweep_interrupt(void)
{
	write_in(tmpdir, "i.sweep", "topology torus(4, 4), torus(2, 8)\ngroups 2, 4, 8, 16\n"
	                            "allreduce ring, halving_doubling\nallgather ring\n"
	                            "routing shortest_path, dor\nsizes 64KiB, 1MiB, 4MiB\n"
	                            "links private\nmode flow\n");
	char *out, *err, args[1024], path[256];
	snprintf(args, sizeof args, "sweep %s/i.sweep -j 2 -o %s/i-full.csv", tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	free(out), free(err);
	snprintf(path, sizeof path, "%s/i-full.csv", tmpdir);
	char *full = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(full);
	setenv("COLLC_SWEEP_INTERRUPT", "3", 1);
	snprintf(args, sizeof args, "sweep %s/i.sweep -j 2 -o %s/i-part.csv", tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 130);
	unsetenv("COLLC_SWEEP_INTERRUPT");
	char want[512];
	snprintf(want, sizeof want, "points done, written to %s/i-part.csv; resume with: collc sweep "
	         "%s/i.sweep --resume %s/i-part.csv -o %s/i-part.csv\n", tmpdir, tmpdir, tmpdir, tmpdir);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
	long done = -1, total = -1;
	const char *st = strstr(err, "collc: sweep stopped: ");
	CU_ASSERT_PTR_NOT_NULL_FATAL(st);
	CU_ASSERT_EQUAL(sscanf(st, "collc: sweep stopped: %ld of %ld", &done, &total), 2);
	CU_ASSERT(done >= 3 && done < total && total == 144);
	free(out), free(err);
	snprintf(path, sizeof path, "%s/i-part.csv", tmpdir);
	char *part = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(part);
	long rows = -1;
	for (char *l = part; *l; rows++) { /* every line (the header too) is one of the full run's */
		char *e = strchr(l, '\n');
		CU_ASSERT_PTR_NOT_NULL_FATAL(e);
		*e = 0;
		char line[600];
		snprintf(line, sizeof line, "%s%s\n", l == part ? "" : "\n", l);
		assert_named(strstr(full, line) != NULL || (l == part && strncmp(full, l, strlen(l)) == 0),
		             __LINE__, __FILE__, "a stopped run's row is the full run's: %s", l);
		l = e + 1;
	}
	CU_ASSERT_EQUAL(rows, done);
	free(part);
	/* resumed into the file it reads: the uninterrupted run's bytes */
	snprintf(args, sizeof args, "sweep %s/i.sweep -j 2 --resume %s/i-part.csv -o %s/i-part.csv",
	         tmpdir, tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	snprintf(want, sizeof want, "sweep: %ld of %ld points", total - done, total - done);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
	free(out), free(err);
	char *resumed = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(resumed);
	CU_ASSERT_STRING_EQUAL(resumed, full);
	free(resumed);
	/* another spec's rows are refused at their line; --json needs a whole run */
	write_in(tmpdir, "j.sweep", "topology torus(4, 4), torus(2, 8)\ngroups 2, 4, 8, 16\n"
	                            "allreduce ring, halving_doubling\nallgather ring\n"
	                            "routing shortest_path, dor\nsizes 64KiB, 1MiB, 8MiB\n"
	                            "links private\nmode flow\n");
	snprintf(args, sizeof args, "sweep %s/j.sweep --resume %s/i-full.csv", tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 1);
	snprintf(want, sizeof want, "i-full.csv:4: a row that is not this spec's point: 2,");
	CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
	free(out), free(err);
	snprintf(args, sizeof args, "sweep %s/i.sweep --resume %s/i-full.csv --json %s/x.json",
	         tmpdir, tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 2);
	free(out), free(err), free(full);
}

/* The work (messages built and simulated) of every point of SPEC, unit by
 * unit as a worker runs them. */
static double *
sweep_work(const char *spec, Spec *s, char **text)
{
	CU_ASSERT_EQUAL_FATAL(spec_read(spec, s, text), 0);
	double *work = calloc((size_t)s->nunit * s->nsize, sizeof *work);
	for (int u = 0; u < s->nunit; u++) {
		int fds[2];
		CU_ASSERT_EQUAL_FATAL(pipe(fds), 0);
		CU_ASSERT_EQUAL(run_unit(s, u, 0, 1, NULL, fds[1]), s->nsize);
		close(fds[1]);
		Record r;
		while (read(fds[0], &r, sizeof r) == (ssize_t)sizeof r) {
			CU_ASSERT(r.ok && r.work >= 1);
			work[r.point] = r.work;
		}
		close(fds[0]);
	}
	return work;
}

typedef struct Arrival {
	double t, weight;
} Arrival;

static int
by_time(const void *a, const void *b)
{
	double x = ((const Arrival *)a)->t, y = ((const Arrival *)b)->t;
	return (x > y) - (x < y);
}

/* The progress line's estimate against the time truly left, two workers
 * running the units in `order`'s order and each point taking its work: the
 * largest ratio, *lo the smallest, over the points back once a tenth of the
 * points are and while a tenth of the time is left. */
static double
eta_ratio(const Spec *s, const double *work, int (*order)(int, int), double *lo)
{
	long n = (long)s->nunit * s->nsize;
	Arrival *a = malloc((size_t)n * sizeof *a);
	double clock[2] = {0, 0}, wtotal = 0;
	for (int i = 0, k = 0; i < s->nunit; i++) {
		int u = order(s->nunit, i);
		for (int z = 0; z < s->nsize; z++, k++) {
			long p = (long)u * s->nsize + z;
			a[k] = (Arrival){clock[i % 2] += work[p], point_weight(s, p)};
			wtotal += a[k].weight;
		}
	}
	sort_n(a, (size_t)n, sizeof *a, by_time);
	double end = a[n - 1].t, hi = 0, wdone = 0;
	*lo = INFINITY;
	for (long k = 0; k < n; k++) {
		wdone += a[k].weight;
		double left = end - a[k].t, r = sweep_left(wdone, wtotal, a[k].t) / left;
		if (k + 1 < n / 10 || left < end / 10)
			continue;
		*lo = r < *lo ? r : *lo;
		hi = r > hi ? r : hi;
	}
	free(a);
	return hi;
}

static int
in_order(int nunit, int i)
{
	(void)nunit;
	return i;
}

/* The progress estimate's model on counted work, on the 64-chip evaluation
 * (points of 2 to 8064 messages): run in unit_at's order and weighed by
 * their ranks, the points done predict the points left, within 2x of the
 * time left; in the grid's order (small groups first, what the sweep did)
 * the estimate was optimistic many times over. */
static void
test_sweep_estimate(void)
{
	Spec *s = calloc(1, sizeof *s);
	char *text = NULL;
	double *work = sweep_work("examples/reproduce/torus64-eval.sweep", s, &text);
	double most = 0, least = INFINITY;
	for (long p = 0; p < (long)s->nunit * s->nsize; p++)
		most = work[p] > most ? work[p] : most, least = work[p] < least ? work[p] : least;
	CU_ASSERT(most > 1000 * least);
	double lo, hi = eta_ratio(s, work, unit_at, &lo);
	assert_named(lo >= 0.5 && hi <= 2, __LINE__, __FILE__,
	             "estimate / time left in unit_at's order: %.2f .. %.2f", lo, hi);
	double lo0, hi0 = eta_ratio(s, work, in_order, &lo0);
	assert_named(lo0 < 0.2, __LINE__, __FILE__, "in the grid's order: %.2f .. %.2f", lo0, hi0);
	/* unit_at visits every unit once, for any count */
	for (int n = 1; n <= s->nunit; n += n < 40 ? 1 : 97) {
		bool *seen = calloc((size_t)n, 1);
		for (int i = 0; i < n; i++)
			seen[unit_at(n, i)] = true;
		int all = 0;
		for (int u = 0; u < n; u++)
			all += seen[u];
		CU_ASSERT_EQUAL(all, n);
		free(seen);
	}
	free(work);
	spec_free(s, text);
}

CU_TestInfo cli_tests[] = {
	{"build --target msccl: a note says the channels, instances and protocol chosen",
	 test_build_msccl_note},
	{"sweep: shards merge byte-identically; busbw; statuses; spec errors", test_sweep},
	{"sweep: a size's row is the same whatever else the sizes line holds", test_sweep_sizes},
	{"sweep: SIGINT writes the rows done and exits 130; --resume finishes the same bytes",
	 test_sweep_interrupt},
	{"sweep: the progress estimate within 2x of the time left, on counted work",
	 test_sweep_estimate},
	{"sweep: a .coll file's collectives (SP, user schedules) over routing, network, sizes",
	 test_sweep_file},
	{"sweep: a file without a network block; the failed point whatever --jobs",
	 test_sweep_file_network},
	{"sim: closed form through CSV, .sim and JSON; plots; errors write nothing", test_sim},
	{"sim: a size's row is the same whatever else --sizes holds (auto, segments, reconfigs)",
	 test_sim_sizes_permuted},
	{"tune: the choice at every size is the fastest candidate; ranges cover the sizes once",
	 test_tune},
	{"sim: the bound never exceeds 100% (examples x 4 KiB, 1 MiB, 256 MiB)", test_bound_holds},
	{"sim: packet and flow within 5% at 1, 16, 256 MiB on every example, or it says why",
	 test_packet_flow_agree},
	{"sweep: its network axes are the registry's swept parameters", test_sweep_axes_registry},
	{"tune: MSCCL protocol and instances per range, or as --proto and --instances fix them",
	 test_tune_msccl_choice},
	{"tune --msccl-dir: the executor's selection picks the planned file, 1 KiB to 1 GiB",
	 test_tune_msccl_dir},
	{"sim --compare: speedup and energy against the baseline", test_sim_compare},
	{"write errors, symbolic links, modes", test_write_errors_and_links},
	{"help, version, usage errors", test_help_and_version},
	{"golden command lines: --opt=value, help, suggestions", test_cli_golden},
	{"man page renders and names every option; install then uninstall leaves nothing",
	 test_man_install},
	{"check: summary, diagnostics, exit status", test_check},
	{"missing file, directory, stdin", test_unreadable_inputs},
	{"fmt -o writes whole files, nothing on error", test_fmt_output_file},
	CU_TEST_INFO_NULL,
};
