/*
 * test_cli.c: the collc binary as a user runs it: exit statuses, where
 * messages go, and that no output file appears for an input with an error.
 * The `cli` suite's table; its sweep tests are in test_cli_sweep.c.
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
#include "test_cli.h"
#include "tests.h"

#ifndef COLLC_BIN
#define COLLC_BIN "bin/collc"
#endif

char cli_tmpdir[] = "/tmp/collc-cli-XXXXXX";

/* Runs `collc ARGS`, capturing stdout and stderr; returns the exit status. */
int
cli_collc(const char *args, char **out, char **err)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "%s %s >%s/out 2>%s/err", COLLC_BIN, args, cli_tmpdir, cli_tmpdir);
	int st = system(cmd);
	char path[256];
	snprintf(path, sizeof path, "%s/out", cli_tmpdir);
	*out = slurp(path, NULL);
	snprintf(path, sizeof path, "%s/err", cli_tmpdir);
	*err = slurp(path, NULL);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

bool
cli_exists(const char *name)
{
	char path[256];
	struct stat st;
	snprintf(path, sizeof path, "%s/%s", name[0] == '/' ? "" : cli_tmpdir, name);
	return stat(path, &st) == 0;
}

int
cli_setup(void)
{
	if (!mkdtemp(cli_tmpdir))
		return -1;
	write_in(cli_tmpdir, "good.coll", "topology T = torus(4, 4);\n"
	                       "group G on T { translate; map (x, y) -> (y, x); }\n"
	                       "tree B = bfs(T, root 0);\n"
	                       "collective allreduce A on T {algorithm symmetric(trees B, group G);}\n");
	write_in(cli_tmpdir, "bad.coll", "topology T = torus(4, 4);\n"
	                      "collective allreduce A on T { algorithm rign; }\n");
	return 0;
}

int
cli_teardown(void)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf %s", cli_tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void
test_help_and_version(void)
{
	char *out, *err;
	CU_ASSERT_EQUAL(cli_collc("--help", &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "usage: collc <command>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "check FILE"));
	free(out), free(err);
	CU_ASSERT_EQUAL(cli_collc("--version", &out, &err), 0);
	CU_ASSERT_NSTRING_EQUAL(out, "collc ", 6);
	free(out), free(err);
	CU_ASSERT_EQUAL(cli_collc("", &out, &err), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "usage:"));
	free(out), free(err);
	CU_ASSERT_EQUAL(cli_collc("compile x.coll", &out, &err), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "collc: unknown command 'compile'"));
	free(out), free(err);
	CU_ASSERT_EQUAL(cli_collc("check --bogus x.coll", &out, &err), 2);
	free(out), free(err);
	CU_ASSERT_EQUAL(cli_collc("build x.coll --target msccl --min-bytes 2MiB --max-bytes 1MiB", &out, &err), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--min-bytes 2097152 is above --max-bytes 1048576"));
	free(out), free(err);
}

static void
test_check(void)
{
	char *out, *err, args[512];
	snprintf(args, sizeof args, "check %s/good.coll", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "good.coll: 1 collective, 1 built and verified; model for "
	                                   "1 MiB"));
	/* without the reflection two link orbits: the + and - links are unevenly loaded */
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "A           allreduce  symmetric     16      32       8"
	                                   "       448  30.00 MiB  1.000  1.000  1.333     32       2"));
	CU_ASSERT_STRING_EQUAL(err, "");
	free(out), free(err);
	snprintf(args, sizeof args, "check --json --size 64KiB %s/good.coll", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "{\"collectives\": [\n  {\"name\": \"A\", \"kind\": "
	                                   "\"allreduce\", \"algorithm\": \"symmetric\", \"ranks\": 16, "
	                                   "\"chunks\": 32, \"rounds\": 8, \"messages\": 448, "
	                                   "\"volume_bytes\": 1966080, \"psi\": 1, \"theta\": 1, "
	                                   "\"omega\": 1.3333333333333333, \"group_order\": 32, "
	                                   "\"link_orbits\": 2, "
	                                   "\"model_time_s\": "));
	free(out), free(err);
	snprintf(args, sizeof args, "check --size lots %s/good.coll", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 2);
	free(out), free(err);
	snprintf(args, sizeof args, "check %s/bad.coll", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 1);
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
	snprintf(args, sizeof args, "check %s/missing.coll", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "error: cannot open"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "No such file or directory"));
	free(out), free(err);
	snprintf(args, sizeof args, "check %s", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "it is a directory"));
	free(out), free(err);
	CU_ASSERT_EQUAL(cli_collc("check - </dev/null", &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "<stdin>: 0 collectives, 0 built and verified"));
	free(out), free(err);
}

static void
test_fmt_output_file(void)
{
	char *out, *err, args[512];
	snprintf(args, sizeof args, "fmt %s/good.coll -o %s/good.out", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	char path[256];
	snprintf(path, sizeof path, "%s/good.out", cli_tmpdir);
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
	snprintf(args, sizeof args, "fmt %s/bad.coll -o %s/bad.out", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 1);
	CU_ASSERT(!cli_exists("bad.out"));
	free(out), free(err);
	/* an output that cannot be written: an error, and no temporary left */
	snprintf(args, sizeof args, "fmt %s/good.coll -o %s/no/such/dir.out", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "collc: error: cannot create"));
	free(out), free(err);
	snprintf(args, sizeof args, "ls %s | grep -c tmp >/dev/null", cli_tmpdir);
	CU_ASSERT_NOT_EQUAL(system(args), 0);
}

static void
test_write_errors_and_links(void)
{
	char *out, *err, args[512], path[256];
	/* a full disk is an error, not a success */
	snprintf(args, sizeof args, "check %s/good.coll >/dev/full", cli_tmpdir);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", COLLC_BIN, args);
	int st = system(cmd);
	CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	/* -o through a symbolic link writes the target and keeps its mode */
	write_in(cli_tmpdir, "target.coll", "old\n");
	snprintf(path, sizeof path, "%s/target.coll", cli_tmpdir);
	chmod(path, 0600);
	snprintf(cmd, sizeof cmd, "ln -s target.coll %s/link.coll", cli_tmpdir);
	CU_ASSERT_EQUAL(system(cmd), 0);
	snprintf(args, sizeof args, "fmt %s/good.coll -o %s/link.coll", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	free(out), free(err);
	struct stat ls, ts;
	snprintf(cmd, sizeof cmd, "%s/link.coll", cli_tmpdir);
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
	write_in(cli_tmpdir, "r4.coll", "network { link_bandwidth = 400 Gbps; link_latency = 100 ns; "
	                     "router_latency = 300 ns; step_overhead = 1 us; }\n"
	                     "topology R = ring(4);\n"
	                     "collective allreduce AR on R { algorithm ring; }\n");
	/* ring(4), 4 KiB: 2(p-1) steps of o + d + ser(1 KiB) = 6 x (1 us + 400 ns + 20.48 ns) */
	const char *row = "AR,allreduce,ring,4096,1024,float,sum,8.52288,";
	snprintf(args, sizeof args, "sim %s/r4.coll --sizes 4KiB --csv", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_NSTRING_EQUAL(out, "collective,kind,algorithm,size,count,type,redop,time_us,"
	                             "algbw_GBps,busbw_GBps,", 75);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, row));
	free(out), free(err);
	snprintf(args, sizeof args, "sim %s/r4.coll --sizes 4KiB --csv --sync deps", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, row));
	free(out), free(err);
	snprintf(args, sizeof args, "build %s/r4.coll --target sim -o %s/r4.sim", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	free(out), free(err);
	snprintf(args, sizeof args, "sim %s/r4.sim --sizes 4KiB --csv -o %s/r4.csv", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_STRING_EQUAL(out, "");
	free(out), free(err);
	char path[256];
	snprintf(path, sizeof path, "%s/r4.csv", cli_tmpdir);
	char *csv = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, row));
	free(csv);
	/* JSON: one round end per step, each directed link of the ring's one direction used */
	snprintf(args, sizeof args, "sim %s/r4.coll --sizes 4KiB --json", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"round_end_s\": [1.42048e-06, 2.84096e-06, 4.26144e-06, "
	                                   "5.68192e-06, 7.1024e-06, 8.52288e-06]"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"link_bytes\": [0, 6144, 0, 6144, 0, 6144, 0, 6144]"));
	free(out), free(err);
	snprintf(args, sizeof args, "sim %s/r4.coll --sizes 4KiB..64KiB --plot %s/g.svg "
	         "--plot-time %s/time.svg -o %s/t.txt", cli_tmpdir, cli_tmpdir, cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	free(out), free(err);
	snprintf(path, sizeof path, "%s/g.svg", cli_tmpdir);
	char *svg = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<svg "));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "</svg>"));
	free(svg);
	/* the time plot: one line per collective, five points, titled with the network */
	snprintf(path, sizeof path, "%s/time.svg", cli_tmpdir);
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
	snprintf(path, sizeof path, "%s/t.txt", cli_tmpdir);
	char *table = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(table);
	CU_ASSERT_PTR_NOT_NULL(strstr(table, " 65536 "));
	free(table);
	/* auto: each candidate simulated at each size; the rows read their nets after the
	 * candidates were built (once read after free: a crash, or ASan's report) */
	write_in(cli_tmpdir, "auto.coll", "topology T = torus(4, 4);\n"
	                       "collective allreduce AR on T { algorithm auto; }\n");
	snprintf(args, sizeof args, "sim %s/auto.coll --sizes 4KiB,1MiB --csv", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, ",allreduce,auto:"));
	free(out), free(err);
	/* usage errors exit 2, input errors 1, and neither writes the output */
	snprintf(args, sizeof args, "sim %s/r4.coll --mode fast -o %s/no1.csv", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 2);
	CU_ASSERT(!cli_exists("no1.csv"));
	free(out), free(err);
	snprintf(args, sizeof args, "sim %s/bad.coll --csv -o %s/no2.csv --plot %s/no2.svg", cli_tmpdir,
	         cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "error: unknown algorithm 'rign'"));
	CU_ASSERT(!cli_exists("no2.csv"));
	CU_ASSERT(!cli_exists("no2.svg"));
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

/* COLLC_UPDATE_GOLDEN (make update-goldens): NAME.out rewritten as collc
 * prints it, the budget written @BUDGET@ again where the old file had it. */
static void
update_cli_golden(const char *path, const char *got)
{
	char *old = slurp(path, NULL), *keep = NULL;
	if (old && strstr(old, "@BUDGET@")) {
		char budget[32];
		human_bytes(memory_budget(), budget, sizeof budget);
		const char *at = strstr(got, budget);
		if (at) {
			size_t n = strlen(got) + sizeof "@BUDGET@";
			keep = malloc(n);
			snprintf(keep, n, "%.*s@BUDGET@%s", (int)(at - got), got, at + strlen(budget));
		}
	}
	char err[256];
	const char *text = keep ? keep : got;
	write_file_atomic(path, text, strlen(text), err, sizeof err);
	free(keep), free(old);
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
		int st = cli_collc(args, &out, &err);
		size_t n = strlen(out) + strlen(err) + 32;
		char *got = malloc(n);
		snprintf(got, n, "%s%sexit %d\n", out, err, st);
		char want_path[512];
		snprintf(want_path, sizeof want_path, "%.*s.out",
		         (int)(strlen(g.gl_pathv[i]) - strlen(".args")), g.gl_pathv[i]);
		if (getenv("COLLC_UPDATE_GOLDEN"))
			update_cli_golden(want_path, got);
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
	snprintf(cmd, sizeof cmd, "MANWIDTH=80 man -l docs/collc.1 2>&1 >%s/man.txt", cli_tmpdir);
	CU_ASSERT_EQUAL(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s/man.txt", cli_tmpdir);
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
		CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
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
	         ">%s/make.txt 2>&1 && test -x %s/prefix/bin/collc", cli_tmpdir, COLLC_BIN, cli_tmpdir,
	         cli_tmpdir);
	CU_ASSERT_NOT_EQUAL(system(cmd), 0); /* uninstalled: no collc left */
	snprintf(cmd, sizeof cmd, "make -s install-files PREFIX=%s/prefix COLLC=%s >%s/make.txt 2>&1 "
	         "&& MANWIDTH=80 man -l %s/prefix/share/man/man1/collc.1 | grep -q 'EXIT STATUS' "
	         "&& %s/prefix/bin/collc check %s/prefix/share/collc/examples/ring-classic.coll "
	         ">/dev/null && test -f %s/prefix/share/doc/collc/sim.md", cli_tmpdir, COLLC_BIN, cli_tmpdir,
	         cli_tmpdir, cli_tmpdir, cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(system(cmd), 0);
	/* bash completion: commands, and a command's options from its help */
	snprintf(cmd, sizeof cmd, "PATH=%s/prefix/bin:$PATH bash -c '. docs/contrib/collc.bash; "
	         "COMP_WORDS=(collc si); COMP_CWORD=1; _collc; echo ${COMPREPLY[*]}; "
	         "COMP_WORDS=(collc sim --siz); COMP_CWORD=2; _collc; echo ${COMPREPLY[*]}' >%s/comp.txt",
	         cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s/comp.txt", cli_tmpdir);
	char *comp = slurp(cmd, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(comp);
	CU_ASSERT_STRING_EQUAL(comp, "sim\n--size --sizes\n");
	free(comp);
	snprintf(cmd, sizeof cmd, "make -s uninstall PREFIX=%s/prefix >%s/make.txt 2>&1 && "
	         "test -z \"$(find %s/prefix -mindepth 1)\"", cli_tmpdir, cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

/* The rows of a sim CSV (header dropped), sorted: the same set of rows
 * whatever order --sizes gave them in. */
static char *
sorted_rows(const char *csv)
{
	char cmd[1024], path[256];
	snprintf(path, sizeof path, "%s/rows.csv", cli_tmpdir);
	FILE *f = fopen(path, "w");
	fputs(csv, f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "tail -n +2 %s | LC_ALL=C sort >%s.sorted", path, path);
	CU_ASSERT_EQUAL(system(cmd), 0);
	snprintf(path, sizeof path, "%s/rows.csv.sorted", cli_tmpdir);
	return slurp(path, NULL);
}

/* A size's row is the same byte for byte whatever else --sizes holds:
 * auto's pick, pipelined_trees', chain's and symmetric's (`segments
 * auto`) segments, tto's chunks and bridge's reconfigurations are chosen
 * per size. */
static void
test_sim_sizes_permuted(void)
{
	write_in(cli_tmpdir, "persize.coll",
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
	         "collective allreduce F on SB { algorithm pipelined_trees(segments 4); }\n"
	         "topology CR = rails(boxes 2, gpus 8, nic_gbps 400);\n"
	         "group GC = translations(CR);\ntree BC = bfs(CR, root gpu(0, 0));\n"
	         "collective allgather S on CR { algorithm symmetric(trees BC, group GC, "
	         "segments auto); }\n");
	static const char *const orders[] = {"4KiB,1MiB,64MiB", "64MiB,1MiB,4KiB", "1MiB,64MiB,4KiB"};
	char *first = NULL, *alone = NULL, *out, *err, args[512];
	for (size_t i = 0; i < countof(orders); i++) {
		snprintf(args, sizeof args, "sim %s/persize.coll --sizes %s --csv", cli_tmpdir, orders[i]);
		CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
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
		snprintf(args, sizeof args, "sim %s/persize.coll --sizes %s --csv", cli_tmpdir, one[k]);
		CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
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
	         "--sizes 4KiB..1MiB --json --plot %s/tune.svg", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_EQUAL(check_tune_json(out, 4096, 1 << 20), 9);
	/* the file's other allreduces on the same ranks take part (SP's forest, swing) */
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"SP_forest: symmetric\": "));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"halving_doubling\": "));
	free(out), free(err);
	snprintf(path, sizeof path, "%s/tune.svg", cli_tmpdir);
	char *svg = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<svg"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "chosen"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "SP_forest: symmetric"));
	free(svg);
	/* SuperMesh: pipelined trees chosen per size; the text plan */
	CU_ASSERT_EQUAL(cli_collc("tune examples/supermesh-vs-mesh.coll --collective AR_bi --sizes "
	                      "4KiB..1MiB --json", &out, &err), 0);
	CU_ASSERT_EQUAL(check_tune_json(out, 4096, 1 << 20), 9);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"AR_bi: pipelined_trees (fixed segments 64)\": "));
	free(out), free(err);
	CU_ASSERT_EQUAL(cli_collc("tune examples/supermesh-vs-mesh.coll --collective AR_bi --sizes "
	                      "4KiB,64KiB", &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "plan:\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "4 KiB to under 64 KiB"));
	free(out), free(err);
	/* --plot draws one collective */
	snprintf(args, sizeof args, "tune examples/supermesh-vs-mesh.coll --sizes 4KiB --plot %s/x.svg",
	         cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 1);
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
			CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
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
	int rc = cli_collc(args, &out, &err);
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
		CU_ASSERT_EQUAL(cli_collc(args, &flow, &err), 0);
		free(err);
		snprintf(args, sizeof args, "sim %s --csv --mode packet --sizes 1MiB,16MiB,256MiB", path);
		bool whole = cli_collc(args, &packet, &err) == 0; /* else one collective and size at a time */
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

/* build --target msccl says what it chose on stderr (a note), agreeing
 * with the file: the channels the width search found, or the options
 * given, named as given; a staged allgather says so. */
static void
test_build_msccl_note(void)
{
	char *out, *err, args[512];
	snprintf(args, sizeof args, "build %s/good.coll --target msccl -o %s/good.xml", cli_tmpdir,
	         cli_tmpdir);
	CU_ASSERT_EQUAL_FATAL(cli_collc(args, &out, &err), 0);
	char path[256];
	snprintf(path, sizeof path, "%s/good.xml", cli_tmpdir);
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
	         "--proto LL -o %s/good2.xml", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL_FATAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "'A' for MSCCL: 4 channels (2 per instance, --channels), "
	                                   "2 instances (--instances), protocol LL (--proto); at most "));
	free(out), free(err);
	/* the hierarchical allgather of 16 nodes of 8 GPUs is staged */
	write_in(cli_tmpdir, "ag128.coll", "topology C = spine_leaf(spines 16, leaves 16, hosts 8);\n"
	         "collective allgather AG on C { algorithm hierarchical(ring, ring); }\n");
	snprintf(args, sizeof args, "build %s/ag128.coll --target msccl -o %s/ag128.xml", cli_tmpdir,
	         cli_tmpdir);
	CU_ASSERT_EQUAL_FATAL(cli_collc(args, &out, &err), 0);
	assert_named(strstr(err, "protocol Simple (default), staged through scratch; at most 7 "
	                         "thread blocks and 175 steps a rank\n") != NULL, __LINE__, __FILE__,
	             "%s", err);
	free(out), free(err);
	/* other commands say nothing of it: the XML on stdout, stderr empty */
	snprintf(args, sizeof args, "build %s/good.coll --target ir", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_STRING_EQUAL(err, "");
	free(out), free(err);
}

/* Every command's failure paths end with status 1 (the input or the run
 * failed, said on standard error) or 2 (usage), never another: a
 * command's -1 once reached the shell as 255. */
static void
test_exit_statuses(void)
{
	static const char bad_coll[] = "topology T = ring(4);\n"
	                               "collective allreduce A on T { algorithm nosuch; }\n";
	static const char syntax[] = "topology T = ring(4)\n";
	char badp[256], synp[256];
	snprintf(badp, sizeof badp, "%s/exit-bad.coll", cli_tmpdir);
	snprintf(synp, sizeof synp, "%s/exit-syntax.coll", cli_tmpdir);
	FILE *f = fopen(badp, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(bad_coll, f);
	fclose(f);
	f = fopen(synp, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(syntax, f);
	fclose(f);
	static const char *const cmds[] = {"check", "build --target ir", "fmt", "run", "sim",
	                                   "explain", "sweep", "tune"};
	/* per command: a missing file, an unknown name, a syntax error (1); an
	 * unknown option (2) */
	for (size_t c = 0; c < countof(cmds); c++) {
		const char *files[] = {"/nonexistent/x.coll", badp, synp};
		char args[600], *out, *err;
		for (size_t k = 0; k < countof(files); k++) {
			snprintf(args, sizeof args, "%s %s", cmds[c], files[k]);
			int rc = cli_collc(args, &out, &err);
			assert_named(rc == 1 && strstr(err, "error"), __LINE__, __FILE__,
			             "collc %s: status %d (want 1), %s", args, rc, err);
			free(out), free(err);
		}
		snprintf(args, sizeof args, "%s --no-such-option %s", cmds[c], badp);
		int rc = cli_collc(args, &out, &err);
		assert_named(rc == 2, __LINE__, __FILE__, "collc %s: status %d (want 2)", args, rc);
		free(out), free(err);
	}
	/* deeper failures: a run, a width, an output, a plan */
	char dir[300], args[700];
	snprintf(dir, sizeof dir, "%s/no/such/dir", cli_tmpdir);
	/* the command, and what follows the missing directory (NULL: none) */
	const char *const deep[][2] = {
	    {"run examples/tour.coll --collective NOPE", NULL},
	    {"explain examples/tour.coll --collective NOPE", NULL},
	    {"build examples/tour.coll --target msccl --instances 8 --channels 8 -o ", "/w.xml"},
	    {"build examples/tour.coll --target ir -o ", "/x.ir"},
	    {"tune examples/tour.coll --sizes 1KiB --msccl-dir ", "/algos"},
	};
	for (size_t k = 0; k < countof(deep); k++) {
		char *out, *err;
		snprintf(args, sizeof args, "%s%s%s", deep[k][0], deep[k][1] ? dir : "",
		         deep[k][1] ? deep[k][1] : "");
		int rc = cli_collc(args, &out, &err);
		assert_named(rc == 1 && strstr(err, "error"), __LINE__, __FILE__,
		             "collc %s: status %d (want 1), %s", args, rc, err);
		free(out), free(err);
	}
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
	write_in(cli_tmpdir, "cmp.coll", "topology R = ring(8);\n"
	                       "collective allreduce A on R { algorithm ring; }\n"
	                       "collective allreduce B on R { algorithm recursive_doubling; }\n"
	                       "collective allgather G on R { algorithm ring; }\n");
	snprintf(args, sizeof args, "sim %s/cmp.coll --sizes 1MiB,4MiB --compare A", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
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
	snprintf(args, sizeof args, "sim %s/cmp.coll --sizes 1MiB --compare Z", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--compare: no collective named 'Z' was simulated"));
	free(out), free(err);
	snprintf(args, sizeof args, "sim %s/cmp.coll --sizes 1MiB --compare A --csv", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 2);
	CU_ASSERT_STRING_EQUAL(out, "");
	free(out), free(err);
}

/* The k-th comma-separated field (0 first) after `key` on its line of text,
 * as a number; -1 when there is none. */
static double
csv_field(const char *text, const char *key, int k)
{
	const char *line = text ? strstr(text, key) : NULL;
	if (!line)
		return -1;
	line += strlen(key);
	for (int i = 0; i < k && line; i++) {
		line = strpbrk(line, ",\n");
		line = line && *line == ',' ? line + 1 : NULL;
	}
	return line ? strtod(line, NULL) : -1;
}

/* auto's candidates in sim, sweep and tune are routed as the collective
 * says (its routing, or the default), so auto's pick and the same algorithm
 * named take the same time. They were routed by the trees' fixed minimal
 * routes, which on torus(8, 8) send alltoall's pairwise in dimension order:
 * 74.94 us for auto:pairwise against 82.65 us for pairwise. */
static void
test_auto_routing(void)
{
	static const char *const routing[] = {"", "routing shortest_path;", "routing fastest;",
	                                      "routing dor;"};
	for (int i = 0; i < 4; i++) {
		char text[512], args[512], *out, *err;
		snprintf(text, sizeof text,
		         "topology T = torus(8, 8);\n"
		         "collective alltoall A on T { algorithm auto; %s }\n"
		         "collective alltoall P on T { algorithm pairwise; %s }\n",
		         routing[i], routing[i]);
		write_in(cli_tmpdir, "route.coll", text);
		write_in(cli_tmpdir, "route.sweep", "file route.coll\nsizes 1MiB\n");
		snprintf(args, sizeof args, "sim %s/route.coll --sizes 1MiB --csv", cli_tmpdir);
		CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
		double a = csv_field(out, "A,alltoall,auto:pairwise,", 4);
		double b = csv_field(out, "P,alltoall,pairwise,", 4);
		assert_named(a > 0 && a == b, __LINE__, __FILE__,
		             "sim, '%s': auto:pairwise %g us, pairwise %g us", routing[i], a, b);
		free(out), free(err);
		snprintf(args, sizeof args, "sweep %s/route.sweep", cli_tmpdir);
		CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
		a = csv_field(out, ",A,auto,", 10);
		b = csv_field(out, ",P,pairwise,", 10);
		assert_named(a > 0 && a == b, __LINE__, __FILE__,
		             "sweep, '%s': auto %g us, pairwise %g us", routing[i], a, b);
		free(out), free(err);
		snprintf(args, sizeof args, "tune %s/route.coll --collective A --sizes 1MiB --json",
		         cli_tmpdir);
		CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
		const char *own = out ? strstr(out, "\"P: pairwise\": ") : NULL;
		const char *lib = out ? strstr(out, "\"pairwise\": ") : NULL;
		a = own ? strtod(own + strlen("\"P: pairwise\": "), NULL) : -1;
		b = lib ? strtod(lib + strlen("\"pairwise\": "), NULL) : -2;
		assert_named(a > 0 && a == b, __LINE__, __FILE__,
		             "tune, '%s': P %g us, the library's pairwise %g us", routing[i], a, b);
		free(out), free(err);
	}
}

/* run on a file whose range starts above the default 1 MiB (a tune file of
 * the large sizes): the smallest size the executor selects it for, in whole
 * floats per chunk (3000001 up to 16-byte steps: 3000016), not a larger one */
static void
test_run_range_start(void)
{
	write_in(cli_tmpdir, "r4big.coll", "topology T = ring(4);\n"
	                                   "collective allreduce AR on T { algorithm ring; }\n");
	char args[512], *out, *err;
	snprintf(args, sizeof args, "build %s/r4big.coll --target msccl --min-bytes 3000001 "
	         "--max-bytes 0 -o %s/r4big.xml", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	free(out), free(err);
	snprintf(args, sizeof args, "run %s/r4big.xml", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "running 3000016 B, the smallest size it is selected "
	                                   "for (give --size to choose)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "in-place      3000016  750004  float"));
	free(out), free(err);
}

CU_TestInfo cli_tests[] = {
	{"tune --msccl-dir ranks by the program: its time, busbw and channels, in files and CSV",
	 test_tune_by_program},
	{"build --target msccl: auto ranks by the program and writes the one it ranked",
	 test_build_auto_by_program},
	{"tune --msccl-dir: box and 2x8, each range's program within 10% of its schedule, >= the ring",
	 test_tune_aim},
	{"tune's program time past 16 iterations: the line within 1% of the full model",
	 test_tune_prog_line},
	{"nccl_vs_plan.py: predicted against measured busbw per size", test_nccl_vs_plan},
	{"run: a file whose range starts above 1 MiB runs at the smallest size selected",
	 test_run_range_start},
	{"tune --msccl-dir: a rank-form candidate (recursive doubling on ring(4)) lowers",
	 test_tune_msccl_rank_form},
	{"tune --msccl-dir: a choice that does not fit MSCCL leaves the next that fits, a note",
	 test_tune_msccl_unfit},
	{"build --target msccl: a packing past the limits fits with fewer segments, and runs",
	 test_build_msccl_packing_fit},
	{"tune --msccl-dir: the 16-GCD box's allreduce at 64 MiB takes packing's program", test_tune_msccl_pow2},
	{"tori, meshes, HyperX at 64 KiB, 4 MiB, 256 MiB: sim's auto and tune never below SP or the library",
	 test_never_below_sizes},
	{"tune --mpi-lib on a GPU cluster: the header says each rank's box and GPU",
	 test_tune_mpi_lib_gpus},
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
	{"check, sim and sweep: a user schedule on 2x2 to 8x8 tori by -D, and a sweep of sizes and "
	 "parameters", test_sweep_params},
	{"sweep: nccl_topo(\"F.xml\") as a spec's topology and in a swept file", test_sweep_nccl_topo},
	{"sim: closed form through CSV, .sim and JSON; plots; errors write nothing", test_sim},
	{"sim: a size's row is the same whatever else --sizes holds (auto, segments, reconfigs)",
	 test_sim_sizes_permuted},
	{"tune: the choice at every size is the fastest candidate; ranges cover the sizes once",
	 test_tune},
	{"sim, sweep, tune: auto's candidates routed as the file says (auto = the named pick)",
	 test_auto_routing},
	{"sim: the bound never exceeds 100% (examples x 4 KiB, 1 MiB, 256 MiB)", test_bound_holds},
	{"sim: packet and flow within 5% at 1, 16, 256 MiB on every example, or it says why",
	 test_packet_flow_agree},
	{"sweep: its network axes are the registry's swept parameters", test_sweep_axes_registry},
	{"tune: MSCCL protocol and instances per range, or as --proto and --instances fix them",
	 test_tune_msccl_choice},
	{"every command's failure paths: status 1 or 2, never another", test_exit_statuses},
	{"tune --msccl-dir: two plans for one kind and rank count refused; names carry the choice",
	 test_tune_msccl_dir_two_plans},
	{"tune --msccl-dir: a range that cannot be built is exit 1, nothing written",
	 test_tune_msccl_dir_fails},
	{"tune --msccl-dir: the executor's selection picks the planned file, 1 KiB to 1 GiB",
	 test_tune_msccl_dir},
	{"sim --compare: speedup and energy against the baseline", test_sim_compare},
	{"rails: sim --compare and tune against NCCL's choice (2 x 8, 2 sizes)", test_nccl_choice},
	{"rails: tune's CSV and JSON give NCCL's choice and the gain (2 x 8, 1 size)",
	 test_nccl_choice_csv_json},
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
