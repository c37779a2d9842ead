/*
 * test_cli_tune.c: `collc tune --msccl-dir` (the cli suite, whose table is
 * in test_cli.c): the plan's MSCCL protocol, instances and files, ranked by
 * the program, and tests/nccl_vs_plan.py against a published nccl-tests
 * output.
 */
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "msccl_program.h"
#include "test_cli.h"
#include "tests.h"

/* CSV field `col` (0-based) of the row whose third field (size) is `size`. */
static bool
csv_field(const char *text, const char *size, int col, char *out, size_t cap)
{
	for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1
	                                                                    : NULL) {
		const char *f = line, *sz = NULL;
		for (int c = 0; f && c <= col && *f != '\n'; c++) {
			if (c == 2)
				sz = f;
			if (c == col && sz && strncmp(sz, size, strlen(size)) == 0 &&
			    sz[strlen(size)] == ',') {
				size_t n = strcspn(f, ",\n");
				snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), f);
				return true;
			}
			f = strchr(f, ',');
			f = f ? f + 1 : NULL;
		}
	}
	return false;
}

/* The column of `name` in the CSV's header, -1 if none. */
static int
csv_col(const char *text, const char *name)
{
	int col = 0;
	size_t n = strlen(name);
	for (const char *f = text; f && *f != '\n'; col++) {
		if (strncmp(f, name, n) == 0 && (f[n] == ',' || f[n] == '\n'))
			return col;
		f = strchr(f, ',');
		f = f ? f + 1 : NULL;
	}
	return -1;
}

/* tune --msccl-dir on the NVSwitch box at 64 KiB and 64 MiB, ranked by the
 * program: the CSV carries the program's time, busbw and channels; the
 * files hold the channels the plan says; the program is within 10 % of its
 * schedule as the executor runs it (issue 35's aim, reference_time_us:
 * docs/sim.md 7, "The aim"), which is no faster than the schedule for the
 * network alone. */
void
test_tune_by_program(void)
{
	char args[1024], *out, *err;
	snprintf(args, sizeof args, "tune examples/nvswitch-box-8.coll --sizes 64KiB,64MiB "
	         "--msccl-dir %s/byprog --csv -o %s/byprog.csv", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL_FATAL(cli_collc(args, &out, &err), 0);
	free(out), free(err);
	char path[300];
	snprintf(path, sizeof path, "%s/byprog.csv", cli_tmpdir);
	char *csv = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
	int pt = csv_col(csv, "program_time_us"), st = csv_col(csv, "time_us"),
	    rt = csv_col(csv, "reference_time_us"), ch = csv_col(csv, "msccl_channels");
	CU_ASSERT(pt > 0 && st > 0 && rt > 0 && ch > 0);
	const char *sizes[] = {"65536", "67108864"};
	for (int i = 0; i < 2; i++) {
		char p[64] = "", s[64] = "", r[64] = "", c[64] = "";
		CU_ASSERT_FATAL(csv_field(csv, sizes[i], pt, p, sizeof p));
		CU_ASSERT_FATAL(csv_field(csv, sizes[i], st, s, sizeof s));
		CU_ASSERT_FATAL(csv_field(csv, sizes[i], rt, r, sizeof r));
		CU_ASSERT_FATAL(csv_field(csv, sizes[i], ch, c, sizeof c));
		assert_named(atof(r) / atof(p) >= 0.9 && atof(r) >= atof(s), __LINE__, __FILE__,
		             "%s bytes: program %s us, its schedule %s us in the executor, %s us for "
		             "the network alone", sizes[i], p, r, s);
		/* the range's file has the channels the plan gives */
		char cmd[600], line[256] = "";
		snprintf(cmd, sizeof cmd, "grep -l 'nchannels=\"%s\"' %s/byprog/AR-0%d-*.xml", c,
		         cli_tmpdir, i);
		FILE *f = popen(cmd, "r");
		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		assert_named(fgets(line, sizeof line, f) != NULL, __LINE__, __FILE__,
		             "no file of range %d with %s channels", i, c);
		pclose(f);
	}
	free(csv);
	/* the table: the program's columns and the ring's beside */
	snprintf(args, sizeof args, "tune examples/nvswitch-box-8.coll --sizes 64MiB "
	         "--msccl-dir %s/byprog2", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "program(us)  prog busbw  of sched  ring prog"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "ranked by the program (--msccl-dir)"));
	free(out), free(err);
}

/* tune's program time past 16 iterations of the executor's loop is a line
 * through the times at 8 and 16 (tune_prog.c, ITER_LO and ITER_HI); here
 * the ring's program on one channel at 512 MiB (32 iterations) against
 * `collc sim` of the file tune wrote, the full executor model: within 1 %. */
void
test_tune_prog_line(void)
{
	char args[1024], *out, *err;
	snprintf(args, sizeof args, "tune examples/nvswitch-box-8.coll --sizes 512MiB --mode flow "
	         "--instances 1 --channels 1 --msccl-dir %s/line --csv -o %s/line.csv", cli_tmpdir,
	         cli_tmpdir);
	CU_ASSERT_EQUAL_FATAL(cli_collc(args, &out, &err), 0);
	free(out), free(err);
	char path[300], t[64] = "";
	snprintf(path, sizeof path, "%s/line.csv", cli_tmpdir);
	char *csv = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
	CU_ASSERT_FATAL(csv_field(csv, "536870912", csv_col(csv, "program_time_us"), t, sizeof t));
	free(csv);
	snprintf(args, sizeof args, "sim %s/line/AR-00-*.xml --topology examples/nvswitch-box-8.coll "
	         "--sizes 512MiB", cli_tmpdir);
	CU_ASSERT_EQUAL_FATAL(cli_collc(args, &out, &err), 0);
	const char *row = strstr(out, "msccl-executor");
	CU_ASSERT_PTR_NOT_NULL_FATAL(row);
	double full = 0;
	CU_ASSERT_EQUAL(sscanf(row, "msccl-executor %*s %*s %*s %*s %lf", &full), 1);
	assert_named(fabs(atof(t) - full) <= 0.01 * full, __LINE__, __FILE__,
	             "line %s us, full model %.2f us", t, full);
	free(out), free(err);
}

/* The last three numbers of the line at p (predicted, measured, ratio). */
static bool
last_three(const char *p, double v[3])
{
	const char *end = strchr(p + 1, '\n');
	if (!end)
		return false;
	const char *q = end;
	for (int i = 2; i >= 0; i--) {
		while (q > p && q[-1] == ' ')
			q--;
		while (q > p && q[-1] != ' ')
			q--;
		v[i] = atof(q);
	}
	return true;
}

/* tests/nccl_vs_plan.py on tune's CSV and a published nccl-tests output
 * (tests/fixtures/nccl-tests/README.md): a row per measured size with the
 * plan's choice, predicted and measured busbw and their ratio; a size tune
 * did not simulate has no prediction; a file that is not a plan is status
 * 1, a usage error 2. */
void
test_nccl_vs_plan(void)
{
	char args[1024], *out, *err;
	snprintf(args, sizeof args, "tune examples/nvswitch-box-8.coll --sizes 1MiB,256MiB --msccl-dir "
	         "%s/vs --csv -o %s/vs.csv", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL_FATAL(cli_collc(args, &out, &err), 0);
	free(out), free(err);
	char cmd[1024], buf[8192] = "";
	snprintf(cmd, sizeof cmd, "python3 tests/nccl_vs_plan.py %s/vs.csv "
	         "tests/fixtures/nccl-tests/h20x8-all_reduce.txt", cli_tmpdir);
	FILE *f = popen(cmd, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	CU_ASSERT_EQUAL(pclose(f), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "AR: predicted (collc tune) against measured (nccl-tests, "
	                                   "out-of-place) busbw in GB/s"));
	/* measured 66.11 GB/s at 1 MiB and 343.85 at 256 MiB (the fixture) */
	char *r1 = strstr(buf, "\n     1048576  "), *r2 = strstr(buf, "\n   268435456  ");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r2);
	double v1[3], v2[3];
	CU_ASSERT_FATAL(last_three(r1, v1) && last_three(r2, v2));
	CU_ASSERT(fabs(v1[1] - 66.11) < 1e-9);
	CU_ASSERT(v1[0] > 0 && fabs(v1[2] - v1[1] / v1[0]) < 0.006);
	CU_ASSERT(fabs(v2[1] - 343.85) < 1e-9);
	CU_ASSERT(v2[0] > 0 && fabs(v2[2] - v2[1] / v2[0]) < 0.006);
	/* 32 KiB was measured, not tuned: no prediction */
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\n       32768  -"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "2 sizes in both"));
	snprintf(cmd, sizeof cmd, "python3 tests/nccl_vs_plan.py tests/fixtures/nccl-tests/README.md "
	         "tests/fixtures/nccl-tests/h20x8-all_reduce.txt 2>/dev/null");
	CU_ASSERT_EQUAL(WEXITSTATUS(system(cmd)), 1);
	CU_ASSERT_EQUAL(WEXITSTATUS(system("python3 tests/nccl_vs_plan.py 2>/dev/null")), 2);
}

/* How many times `what` occurs in text. */
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
void
test_tune_msccl_choice(void)
{
	const char *base = "tune examples/torus-4x4-compare.coll --collective SP --sizes "
	                   "1KiB..1GiB --mode flow";
	char args[512], *out, *err, *out2;
	CU_ASSERT_EQUAL_FATAL(cli_collc(base, &out, &err), 0);
	free(err);
	CU_ASSERT_EQUAL_FATAL(cli_collc(base, &out2, &err), 0);
	CU_ASSERT_STRING_EQUAL(out, out2);
	/* LL for the smallest range, Simple with instances for the largest */
	const char *plan = strstr(out, "plan:\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
	CU_ASSERT_PTR_NOT_NULL(strstr(plan, "1 KiB to under 4 KiB         RD: recursive_doubling  "
	                                    "[MSCCL LL, 1 instance]"));
	CU_ASSERT_PTR_NOT_NULL(strstr(plan, "[MSCCL Simple, 8 instances]"));
	CU_ASSERT_PTR_NULL(strstr(plan, "(--proto)"));
	free(out), free(out2), free(err);
	snprintf(args, sizeof args, "%s --proto LL128 --instances 2", base);
	CU_ASSERT_EQUAL_FATAL(cli_collc(args, &out, &err), 0);
	int ranges = 0;
	const char *fixed = "[MSCCL LL128 (--proto), 2 instances (--instances)]";
	for (const char *q = strstr(out, "plan:\n"); (q = strstr(q + 1, "[MSCCL ")) && q[7] != '.';
	     ranges++) /* each range's, up to the legend's "[MSCCL ...]" */
		CU_ASSERT_EQUAL(strncmp(q, fixed, strlen(fixed)), 0);
	CU_ASSERT(ranges >= 2);
	free(out), free(err);
	snprintf(args, sizeof args, "%s --proto LL128 --instances 2 --csv", base);
	CU_ASSERT_EQUAL_FATAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, ",msccl_proto,msccl_instances,bound_busbw_GBps,"
	                                   "bound_ratio,nccl_choice,nccl_gain\n"));
	CU_ASSERT_EQUAL(count_in(out, ",LL128,2,200,"), count_in(out, "\n") - 1);
	free(out), free(err);
	snprintf(args, sizeof args, "%s --proto Simple --json", base);
	CU_ASSERT_EQUAL_FATAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"msccl\": {\"proto\": \"Simple\", \"instances\": 1, "
	                                   "\"proto_fixed\": true, \"instances_fixed\": false}"));
	CU_ASSERT_PTR_NULL(strstr(out, "\"proto\": \"LL"));
	free(out), free(err);
	CU_ASSERT_EQUAL(cli_collc("tune examples/torus-8x8-compare.coll --proto LL64", &out, &err), 2);
	free(out), free(err);
}

/* tune --msccl-dir: walking sizes from 1 KiB to 1 GiB, the executor's
 * rule (files in path order, the first whose range and chunking select
 * the size) picks the file of the planned range every time; every file
 * passes the checker as it is read. */
void
test_tune_msccl_dir(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	char args[1024], *out, *err, dir[256];
	snprintf(dir, sizeof dir, "%s/algos", cli_tmpdir);
	snprintf(args, sizeof args, "tune examples/torus-4x4-compare.coll --collective SP --sizes "
	         "1KiB..1GiB --mode flow --csv --msccl-dir %s", dir);
	CU_ASSERT_EQUAL_FATAL(cli_collc(args, &out, &err), 0);
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
		diag_source(dg, g.gl_pathv[f], text, len);
		CU_ASSERT_EQUAL(msccl_read(dg, &a, text, len, false, &p[f]), 0);
		CU_ASSERT_EQUAL(msccl_check(dg, &p[f]), 0);
		CU_ASSERT_EQUAL(msccl_check_run(dg, &p[f], msccl_capacity(p[f].proto), false), 0);
		diag_reset(dg);
	}
	int walked = 0, picked = 0;
	/* ... and the last size, 1 GiB: the range of one size */
	for (double size = 1024, last = 0; !last; size *= 1.5) {
		if (size >= 1073741824.0)
			size = 1073741824.0, last = 1;
		double bytes = floor(size / 1024) * 1024; /* whole chunks of floats */
		/* the planned range's first byte and MSCCL protocol: the CSV row's
		 * range_min, range_max and msccl_proto for this size's range */
		double want_lo = -1;
		char want_proto[16] = "";
		int want_inst = 0;
		for (char *l = strchr(out, '\n') + 1; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			double lo, hi;
			char proto[16];
			int inst;
			const char *c = l;
			for (int k = 0; k < 8 && c; k++)
				c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL;
			if (c && sscanf(c, "%lf,%lf,%15[A-Za-z0-9],%d", &lo, &hi, proto, &inst) == 4 &&
			    lo <= bytes && bytes <= hi) {
				want_lo = lo;
				want_inst = inst;
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
		/* the plan's instances are the ones the file was built with (where
		 * the model's did not fit, fewer: standard error says which) */
		char said[320];
		const char *base = strrchr(g.gl_pathv[planned], '/') + 1;
		snprintf(said, sizeof said, "tune: %s: MSCCL %s, %d instance", base, want_proto,
		         want_inst);
		assert_named(strstr(err, said) != NULL, __LINE__, __FILE__,
		             "the plan says %d instances for %s; standard error: %s", want_inst, base,
		             err);
		walked++;
		picked += first >= 0;
	}
	/* ranked by the program, the largest range is Simple (the executor model
	 * has no per-step latency, so LL does not win the small sizes either:
	 * docs/cli.md, tune) */
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
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	free(out), free(err);
}

/* tune --msccl-dir of a file with two allreduces on the same 64 ranks:
 * refused, naming both (the executor would run the first file matching a
 * call, whichever plan it came from), and nothing written; one of them
 * alone is a plan whose file names carry the chosen schedule. */
void
test_tune_msccl_dir_two_plans(void)
{
	char args[1024], *out, *err, dir[256];
	snprintf(dir, sizeof dir, "%s/algos-two", cli_tmpdir);
	snprintf(args, sizeof args, "tune examples/torus-8x8-compare.coll --sizes 1MiB --mode flow "
	         "--msccl-dir %s", dir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "error: tune --msccl-dir: 'SP' and 'SP_forest' are both "
	                                   "allreduce plans for 64 ranks"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "note: 'SP' is declared here"));
	CU_ASSERT_NOT_EQUAL(access(dir, F_OK), 0);
	free(out), free(err);
	snprintf(args, sizeof args, "tune examples/torus-8x8-compare.coll --collective SP --sizes "
	         "1MiB --mode flow --msccl-dir %s", dir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	/* ranked by the program (with the executor's latencies), the plan's
	 * choice at 1 MiB is SWB's swing under LL (by the schedule alone,
	 * SP_forest's); the file is named after it */
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "SWB: swing"));
	char path[400];
	snprintf(path, sizeof path, "%s/SP-00-SWB-swing-1048576-1048576.xml", dir);
	assert_named(access(path, F_OK) == 0, __LINE__, __FILE__, "no %s: %s", path, err);
	/* and says what runs outside it */
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "NCCL's own algorithm runs"));
	free(out), free(err);
}

/* tune --msccl-dir where no program can be built (8 instances x 8
 * channels is over the executor's 32): exit status 1 (it was 255), the
 * reason and the size said, and neither the plan (-o) nor the directory
 * written. */
void
test_tune_msccl_dir_fails(void)
{
	char args[1024], *out, *err, dir[256], plan[256];
	snprintf(dir, sizeof dir, "%s/algos-wide", cli_tmpdir);
	snprintf(plan, sizeof plan, "%s/plan-wide.txt", cli_tmpdir);
	snprintf(args, sizeof args, "tune examples/torus-8x8-compare.coll --collective SP --sizes "
	         "1MiB --mode flow --instances 8 --channels 8 --msccl-dir %s -o %s", dir, plan);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "is 64 channels; the executor runs at most 32"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "error: tune: no candidate of 'SP' has a program that fits "
	                                   "MSCCL's limits at 1048576 bytes"));
	CU_ASSERT_NOT_EQUAL(access(dir, F_OK), 0);
	CU_ASSERT_NOT_EQUAL(access(plan, F_OK), 0);
	free(out), free(err);
}

/* tune --msccl-dir on ring(4): recursive doubling wins the small sizes in
 * the rank form tune builds (base transfers, no group), which the MSCCL
 * lowering read as a group's copies and crashed on; it lowers from its
 * messages, and the executor model runs the file and checks its results. */
void
test_tune_msccl_rank_form(void)
{
	write_in(cli_tmpdir, "r4.coll", "topology T = ring(4);\n"
	                                "collective allreduce AR on T { algorithm ring; }\n");
	char args[512], *out, *err;
	snprintf(args, sizeof args, "tune %s/r4.coll --sizes 1KiB..1MiB --mode flow --msccl-dir "
	         "%s/r4dir", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "MSCCL files in"));
	free(out), free(err);
	snprintf(args, sizeof args, "run %s/r4dir/AR-00-recursive_doubling-1024-16383.xml", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	free(out), free(err);
}

/* tune --msccl-dir at 64 MiB, by dependencies. On six ranks (three
 * package pairs in a ring, every rank on a switch) the fastest schedule, a
 * packing, cuts the vector into 6 blocks x k copies x M segments, which no
 * power of two divides (nor does any allreduce's in six whole blocks), so
 * ranked by the program it is left out with a note giving that reason
 * (prog_fastest's own), the file holds the fastest program that cuts the
 * size, and the plan is written (it failed, status 1, before). On the 2 x 8
 * cluster the packing's segments are a power of two (2 copies per root, 16
 * blocks), so its programs fit and nothing is left out (halving-doubling's
 * LL128 program on 8 channels is the fastest there, docs/sim.md 7), and the
 * plan and the file say which box and GPU each rank is. (The 16-GCD box's
 * 7 copies per root were this test's uncut packing until to_msccl_fit.c
 * gave them a power of two of units: test_tune_msccl_pow2.) */
void
test_tune_msccl_unfit(void)
{
	char args[512], *out, *err;
	write_in(cli_tmpdir, "six.coll",
	         "network { link_bandwidth = 200 Gbps; link_latency = 300 ns; }\n"
	         "topology X = graph {\n nodes 7;\n switches 6;\n"
	         " link 0 <-> 1 { link_bandwidth = 1600 Gbps; }\n"
	         " link 2 <-> 3 { link_bandwidth = 1600 Gbps; }\n"
	         " link 4 <-> 5 { link_bandwidth = 1600 Gbps; }\n"
	         " link 1 <-> 2 { link_bandwidth = 800 Gbps; }\n"
	         " link 3 <-> 4 { link_bandwidth = 800 Gbps; }\n"
	         " link 5 <-> 0 { link_bandwidth = 800 Gbps; }\n"
	         " link 0 <-> 6; link 1 <-> 6; link 2 <-> 6; link 3 <-> 6; link 4 <-> 6; link 5 <-> 6;\n"
	         "}\ncollective allreduce AR on X { algorithm packing; }\n");
	snprintf(args, sizeof args, "tune %s/six.coll --collective AR --sizes 64MiB --sync deps "
	         "--msccl-dir %s/unfit", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	assert_named(strstr(err, "note: tune: AR: packing is left out at 67108864 bytes: faster by "
	                         "its schedule than the choice, but its programs do not cut the size "
	                         "into their chunks in whole bytes") &&
	             strstr(err, "1 MSCCL files in"), __LINE__, __FILE__, "%s", err);
	free(out), free(err);
	glob_t g;
	char pat[512];
	snprintf(pat, sizeof pat, "%s/unfit/AR-00-*-67108864-67108864.xml", cli_tmpdir);
	assert_named(glob(pat, 0, NULL, &g) == 0 && g.gl_pathc == 1 && !strstr(g.gl_pathv[0], "packing"),
	             __LINE__, __FILE__, "one file, not the packing's: %s", pat);
	globfree(&g);
	snprintf(args, sizeof args, "tune examples/gpu-cluster-2x8.coll --collective AR --sizes 64MiB "
	         "--sync deps --msccl-dir %s/fit", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	assert_named(!strstr(err, "is left out") && strstr(err, "1 MSCCL files in"), __LINE__,
	             __FILE__, "%s", err);
	const char *map = "AR on rails(boxes 2, gpus 8, nic_gbps 400): rank r runs on GPU (box, gpu) = "
	                  "(r / 8, r % 8), box-major";
	char line[256];
	snprintf(line, sizeof line, "\n  ranks: %s", map);
	assert_named(strstr(out, line) != NULL, __LINE__, __FILE__, "%s", out);
	free(out), free(err);
	snprintf(pat, sizeof pat, "%s/fit/AR-00-*-67108864-67108864.xml", cli_tmpdir);
	CU_ASSERT_FATAL(glob(pat, 0, NULL, &g) == 0 && g.gl_pathc == 1);
	char *xml = slurp(g.gl_pathv[0], NULL);
	CU_ASSERT(xml && strstr(xml, map + strlen("AR")));
	free(xml);
	globfree(&g);
}

/* The chunk count of the MSCCL file at path (nchunksperloop), 0 if none. */
static long
file_chunks(const char *path)
{
	char *xml = slurp(path, NULL);
	const char *at = xml ? strstr(xml, "nchunksperloop=\"") : NULL;
	long n = at ? strtol(at + strlen("nchunksperloop=\""), NULL, 10) : 0;
	free(xml);
	return n;
}

/* tune --msccl-dir on the 16-GCD box's allreduce at 64 MiB: its packing
 * (7 copies per root: 16 x 7 x M chunks, which no power of two divides) is
 * built for MSCCL in a power of two of units a block (to_msccl_fit.c,
 * packing_units.c), so its program cuts 2^24 floats into whole chunks and
 * is the plan's choice, not left out (swing's program was chosen before,
 * at 145.12 GB/s against the packing's 225.90). One configuration (Simple,
 * 1 instance, 4 channels) for the suite's time: the full search takes
 * about 16 s of CPU and chooses the same program. */
void
test_tune_msccl_pow2(void)
{
	char args[512], *out, *err;
	snprintf(args, sizeof args, "tune examples/xgmi-box-16.coll --collective AR --sizes 64MiB "
	         "--sync deps --proto Simple --instances 1 --channels 4 --msccl-dir %s/pow2", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	assert_named(!strstr(err, "packing is left out") && strstr(err, "1 MSCCL files in"), __LINE__,
	             __FILE__, "%s", err);
	free(out), free(err);
	glob_t g;
	char pat[512];
	snprintf(pat, sizeof pat, "%s/pow2/AR-00-*packing-67108864-67108864.xml", cli_tmpdir);
	assert_named(glob(pat, 0, NULL, &g) == 0 && g.gl_pathc == 1, __LINE__, __FILE__,
	             "the packing's file: %s", pat);
	long n = g.gl_pathc == 1 ? file_chunks(g.gl_pathv[0]) : 0;
	assert_named(n > 0 && (n & (n - 1)) == 0 && (16L << 20) % n == 0, __LINE__, __FILE__,
	             "nchunksperloop %ld", n);
	globfree(&g);
}

/* build --target msccl: the 16-GCD box's allreduce packing at 64 MiB
 * (20 segments of 7 copies per root: 2240 chunks, which no power-of-two
 * size divides) is built again in a power of two of units a block, with the
 * most segments (a power of two) whose program fits (to_msccl_fit.c: 2;
 * 4 need more than 64 thread blocks), the note says so, the file cuts every
 * power-of-two size from 8 KiB into whole floats, is within every limit (at
 * most 64 thread blocks and 64 steps each, as collc run's checker reads it)
 * and runs to the allreduce's result. */
void
test_build_msccl_packing_fit(void)
{
	char args[512], *out, *err;
	snprintf(args, sizeof args, "build examples/xgmi-box-16.coll --target msccl --collective AR "
	         "--size 64MiB -o %s/fit-ar.xml", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	int tbs = 0;
	const char *at = strstr(err, "at most ");
	assert_named(strstr(err, "note: 'AR' for MSCCL: packing segments 20 of 224 trees with 7 copies "
	                         "per root cut the vector into 2240 chunks, which no power-of-two size "
	                         "divides; segments 2 of 224 trees with 7 copies per root in 64 units a "
	                         "block (busiest link 1.0063 x the bound's time) do") &&
	             at && sscanf(at, "at most %d thread blocks", &tbs) == 1 && tbs > 0 && tbs <= 64,
	             __LINE__, __FILE__, "%s", err);
	free(out), free(err);
	snprintf(args, sizeof args, "%s/fit-ar.xml", cli_tmpdir);
	long n = file_chunks(args);
	assert_named(n > 0 && (n & (n - 1)) == 0 && 2048 % n == 0, __LINE__, __FILE__,
	             "nchunksperloop %ld", n);
	snprintf(args, sizeof args, "run %s/fit-ar.xml", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	free(out), free(err);
}

/* tune --mpi-lib on a GPU cluster: the library's header says which box
 * and GPU each rank of the communicator is, under the schedule's entry. */
void
test_tune_mpi_lib_gpus(void)
{
	char args[512], *out, *err;
	snprintf(args, sizeof args, "tune examples/mi300x-cluster.coll --collective AG_ring --sizes "
	         "1MiB --mode flow --mpi-lib %s/gpus", cli_tmpdir);
	CU_ASSERT_EQUAL_FATAL(cli_collc(args, &out, &err), 0);
	free(out), free(err);
	snprintf(args, sizeof args, "%s/gpus/collc.h", cli_tmpdir);
	char *h = slurp(args, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	const char *decl = strstr(h, "int collc_AG_ring_0(");
	const char *map = strstr(h, "\n/* AG_ring_0 on xgmi_rails(boxes 2, gpus 8, nic_gbps 400): rank r "
	                            "runs on GPU (box, gpu) = (r / 8, r % 8), box-major");
	assert_named(decl && map && map > decl && !memchr(decl, '\n', (size_t)(map - decl) - 1) &&
	             strstr(map, "(the communicator's rank r) */\n"), __LINE__, __FILE__, "%s", h);
	free(h);
}

/* build --target msccl of an `auto` collective ranks the library's
 * candidates by their programs in the executor model, as tune does, and
 * writes the program it ranked: the note's program time is what `collc
 * sim` of the written file gives, to the printed hundredth of a us; LL at
 * 64 KiB, where the latencies decide, Simple at 64 MiB. */
void
test_build_auto_by_program(void)
{
	write_in(cli_tmpdir, "auto8.coll",
	         "network { link_bandwidth = 3600 Gbps; link_latency = 500 ns; }\n"
	         "topology B = graph { nodes 9; switches 8; link 0 <-> 8; link 1 <-> 8; link 2 <-> 8;\n"
	         "  link 3 <-> 8; link 4 <-> 8; link 5 <-> 8; link 6 <-> 8; link 7 <-> 8; }\n"
	         "collective allreduce AR on B { algorithm auto; }\n");
	static const struct {
		const char *size, *bytes, *proto;
	} at[] = {{"64KiB", "65536", "proto=\"LL\""}, {"64MiB", "67108864", "proto=\"Simple\""}};
	for (size_t i = 0; i < countof(at); i++) {
		char args[768], *out, *err, alg[64] = "", path[400];
		double ranked = -1;
		snprintf(path, sizeof path, "%s/auto8-%s.xml", cli_tmpdir, at[i].size);
		snprintf(args, sizeof args, "build %s/auto8.coll --target msccl --size %s -o %s",
		         cli_tmpdir, at[i].size, path);
		CU_ASSERT_EQUAL_FATAL(cli_collc(args, &out, &err), 0);
		const char *note = strstr(err, "auto for MSCCL at ");
		CU_ASSERT_PTR_NOT_NULL_FATAL(note);
		char want[64];
		snprintf(want, sizeof want, "auto for MSCCL at %s bytes: ", at[i].bytes);
		CU_ASSERT_EQUAL(strncmp(note, want, strlen(want)), 0);
		const char *prog = strstr(note, "executor model (");
		CU_ASSERT_FATAL(sscanf(note + strlen(want), "%63[^,]", alg) == 1 && prog &&
		                sscanf(prog + 16, "%lf", &ranked) == 1);
		free(out), free(err);
		char *xml = slurp(path, NULL);
		CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
		assert_named(strstr(xml, at[i].proto) != NULL, __LINE__, __FILE__, "%s: %s is not %s",
		             at[i].size, alg, at[i].proto);
		free(xml);
		snprintf(args, sizeof args, "sim %s --topology %s/auto8.coll --sizes %s --mode flow --csv",
		         path, cli_tmpdir, at[i].size);
		CU_ASSERT_EQUAL_FATAL(cli_collc(args, &out, &err), 0);
		/* the one row: the time_us field */
		int col = csv_col(out, "time_us");
		const char *f = strchr(out, '\n');
		for (int c = 0; f && c < col; c++)
			f = strchr(f + 1, ',');
		CU_ASSERT_FATAL(col > 0 && f != NULL);
		double t = atof(f + 1);
		assert_named(fabs(t - ranked) < 0.006, __LINE__, __FILE__,
		             "%s: %s ranked at %.2f us, its file simulates at %.3f us", at[i].size, alg,
		             ranked, t);
		free(out), free(err);
	}
}

/* Field `col` of CSV line `line` as a number (0 if it has none). */
static double
csv_num(const char *line, int col)
{
	for (int c = 0; c < col && line; c++)
		line = strchr(line, ',') ? strchr(line, ',') + 1 : NULL;
	return line ? atof(line) : 0;
}

/* Issue 35's done-when on the NVSwitch box and the 2 x 8 cluster: in every
 * range of tune --msccl-dir the program's busbw is within 10 % of its
 * schedule's, the schedule as the executor runs it (reference_time_us:
 * with the fixed costs every program pays, so never faster than the
 * schedule for the network alone; docs/sim.md 7, "The aim"), and at least
 * the multi-channel ring program's. Four sizes each, and the sizes a full
 * sweep found short before the fixes (box 4 and 8 MiB: 72 and 78 %, a
 * depid wait delaying a receive's latency; 2 x 8 32 KiB, 8, 16 and 32 MiB:
 * 80 to 88 %, the last receive's latency and tbs that send and receive;
 * 1.9 s of CPU more; 512 MiB at 90 % would cost 8 s). */
void
test_tune_aim(void)
{
	static const struct {
		const char *file, *sizes;
		int rows;
	} at[] = {{"examples/nvswitch-box-8.coll", "64KiB,1MiB,4MiB,8MiB,16MiB,256MiB", 6},
	          {"examples/gpu-cluster-2x8.coll --collective AR",
	           "32KiB,64KiB,2MiB,8MiB,16MiB,32MiB,64MiB,256MiB", 8}};
	for (size_t i = 0; i < countof(at); i++) {
		char args[1024], path[300], *out, *err;
		snprintf(path, sizeof path, "%s/aim%zu.csv", cli_tmpdir, i);
		snprintf(args, sizeof args, "tune %s --sizes %s --mode flow --msccl-dir %s/aim%zu --csv "
		         "-o %s", at[i].file, at[i].sizes, cli_tmpdir, i, path);
		CU_ASSERT_EQUAL_FATAL(cli_collc(args, &out, &err), 0);
		char *csv = slurp(path, NULL);
		CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
		int cs = csv_col(csv, "size"), ct = csv_col(csv, "time_us");
		int cp = csv_col(csv, "program_time_us"), cb = csv_col(csv, "program_busbw_GBps");
		int cr = csv_col(csv, "reference_time_us"), cg = csv_col(csv, "ring_program_busbw_GBps");
		CU_ASSERT_FATAL(cs >= 0 && ct > 0 && cp > 0 && cb > 0 && cr > 0 && cg > 0);
		int rows = 0;
		for (const char *l = strchr(csv, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
			const char *line = l + 1;
			double size = csv_num(line, cs), prog = csv_num(line, cp), ref = csv_num(line, cr);
			rows++;
			assert_named(csv_num(line, cb) >= csv_num(line, cg) - 0.005, __LINE__, __FILE__,
			             "%s at %.0f bytes: program %.2f GB/s below the ring's program %.2f",
			             at[i].file, size, csv_num(line, cb), csv_num(line, cg));
			assert_named(prog > 0 && ref / prog >= 0.9 && ref >= csv_num(line, ct), __LINE__,
			             __FILE__, "%s at %.0f bytes: program %.2f us, its schedule %.2f us in "
			             "the executor (%.0f%%), %.2f us for the network alone", at[i].file,
			             size, prog, ref, ref / prog * 100, csv_num(line, ct));
		}
		CU_ASSERT_EQUAL(rows, at[i].rows);
		free(csv), free(out), free(err);
	}
}
