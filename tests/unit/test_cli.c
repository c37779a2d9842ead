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
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
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
	snprintf(args, sizeof args, "sim %s/r4.coll --sizes 4KiB..64KiB --plot %s/g.svg -o %s/t.txt",
	         tmpdir, tmpdir, tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	free(out), free(err);
	snprintf(path, sizeof path, "%s/g.svg", tmpdir);
	char *svg = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<svg "));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "</svg>"));
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
	                     "topology torus(8, 8), optical_ring(16)\n"
	                     "groups 4, 16\n"
	                     "allreduce ring, halving_doubling, bridge\n"
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
	static const char bridge_row[] = "optical_ring(16),16,allreduce,bridge,shortest_path,"
	                                 "400 GBps,0.025 us,,,,65536,16384,float,sum,";
	const char *br = strstr(all, bridge_row);
	CU_ASSERT_PTR_NOT_NULL_FATAL(br);
	const char *ok = strstr(br, ",ok,"), *eol = strchr(br, '\n');
	double bt = 0;
	CU_ASSERT_EQUAL(sscanf(br + strlen(bridge_row), "%lf", &bt), 1);
	CU_ASSERT_TRUE(bt > 0 && ok && eol && ok < eol);
	CU_ASSERT_PTR_NOT_NULL(strstr(all, "not_applicable"));
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
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "bad.sweep:4: error: 'links' takes"));
	free(out), free(err);
	write_in(tmpdir, "bad.sweep", "topology torus(4, 4)\nsizes 1MiB\nallreduce ring\nspeed 3\n");
	snprintf(args, sizeof args, "sweep %s/bad.sweep", tmpdir);
	CU_ASSERT_EQUAL(collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "bad.sweep:4: error: unknown key 'speed'"));
	CU_ASSERT_STRING_EQUAL(out, "");
	free(out), free(err);
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

CU_TestInfo cli_tests[] = {
	{"sweep: shards merge byte-identically; busbw; statuses; spec errors", test_sweep},
	{"sim: closed form through CSV, .sim and JSON; plots; errors write nothing", test_sim},
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
