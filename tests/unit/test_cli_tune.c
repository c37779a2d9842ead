/*
 * test_cli_tune.c: `collc tune --msccl-dir` ranked by the program (the cli
 * suite, whose table is in test_cli.c), and tests/nccl_vs_plan.py against a
 * published nccl-tests output. An 8-GPU NVSwitch box and a few sizes: each
 * test takes well under a second.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

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
 * files hold the channels the plan says; the program is at least the
 * ring's program (the ring is a candidate, never pruned) and here within
 * 10 % of its schedule's busbw or better (issue 35's aim). */
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
	int pb = csv_col(csv, "program_busbw_GBps"), sb = csv_col(csv, "busbw_GBps"),
	    ch = csv_col(csv, "msccl_channels");
	CU_ASSERT(pb > 0 && sb > 0 && ch > 0);
	const char *sizes[] = {"65536", "67108864"};
	for (int i = 0; i < 2; i++) {
		char p[64] = "", s[64] = "", c[64] = "";
		CU_ASSERT_FATAL(csv_field(csv, sizes[i], pb, p, sizeof p));
		CU_ASSERT_FATAL(csv_field(csv, sizes[i], sb, s, sizeof s));
		CU_ASSERT_FATAL(csv_field(csv, sizes[i], ch, c, sizeof c));
		assert_named(atof(p) >= 0.9 * atof(s), __LINE__, __FILE__,
		             "%s bytes: program %s GB/s, schedule %s", sizes[i], p, s);
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

/* tune's program time past 8 iterations of the executor's loop is a line
 * through the times at 4 and 8 (tune_prog.c, ITER_LO and ITER_HI); here
 * the ring's program on one channel at 256 MiB (16 iterations) against
 * `collc sim` of the file tune wrote, the full executor model: within 1 %. */
void
test_tune_prog_line(void)
{
	char args[1024], *out, *err;
	snprintf(args, sizeof args, "tune examples/nvswitch-box-8.coll --sizes 256MiB --mode flow "
	         "--instances 1 --channels 1 --msccl-dir %s/line --csv -o %s/line.csv", cli_tmpdir,
	         cli_tmpdir);
	CU_ASSERT_EQUAL_FATAL(cli_collc(args, &out, &err), 0);
	free(out), free(err);
	char path[300], t[64] = "";
	snprintf(path, sizeof path, "%s/line.csv", cli_tmpdir);
	char *csv = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
	CU_ASSERT_FATAL(csv_field(csv, "268435456", csv_col(csv, "program_time_us"), t, sizeof t));
	free(csv);
	snprintf(args, sizeof args, "sim %s/line/AR-00-*.xml --topology examples/nvswitch-box-8.coll "
	         "--sizes 256MiB", cli_tmpdir);
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
