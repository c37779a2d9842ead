/*
 * test_golden.c: golden files. tests/golden/NAME.coll is compiled as
 * "NAME.coll"; NAME.err holds the exact diagnostics expected, NAME.fmt the
 * exact canonical form. Every example must check clean. The other readers'
 * finds (fuzzing, tests/fuzz) are NAME.ir, NAME.xml and NAME.sim, run
 * through their fuzz target's body with NAME.err the exact diagnostics.
 * COLLC_UPDATE_GOLDEN=1 rewrites the expected files from what collc does
 * (then read the diff before committing it).
 */
#include <glob.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "targets.h"
#include "tests.h"

static char *
swap_suffix(const char *path, const char *suffix)
{
	size_t n = strlen(path) - strlen(".coll");
	char *p = malloc(n + strlen(suffix) + 1);
	memcpy(p, path, n);
	strcpy(p + n, suffix);
	return p;
}

static void
compare(const char *input, const char *expected_path, const char *actual)
{
	if (getenv("COLLC_UPDATE_GOLDEN")) {
		char err[256];
		write_file_atomic(expected_path, actual, strlen(actual), err, sizeof err);
		return;
	}
	char *want = slurp(expected_path, NULL);
	assert_named(want && strcmp(want, actual) == 0, __LINE__, __FILE__,
	             "golden %s: expected\n%s\ngot\n%s", input, want ? want : "(missing)", actual);
	free(want);
}

static void
test_golden(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	glob_t g;
	CU_ASSERT_EQUAL_FATAL(glob("tests/golden/*.coll", 0, NULL, &g), 0);
	int negative = 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *path = g.gl_pathv[i];
		size_t len;
		char *text = slurp(path, &len);
		assert_named(text != NULL, __LINE__, __FILE__, "read %s", path);
		if (!text)
			continue;
		char *copy = strdup(path);
		Checked c;
		check_built(dg, &c, basename(copy), text, len);
		char *err = swap_suffix(path, ".err");
		char *fmt = swap_suffix(path, ".fmt");
		FILE *probe = fopen(err, "r");
		bool expect_errors = probe != NULL;
		if (probe)
			fclose(probe);
		if (getenv("COLLC_UPDATE_GOLDEN")) {
			expect_errors = c.errors > 0;
			remove(expect_errors ? fmt : err);
		}
		if (expect_errors) {
			negative++;
			assert_named(c.errors > 0, __LINE__, __FILE__, "golden %s has errors", path);
			compare(path, err, c.diag);
		} else {
			assert_named(c.errors == 0, __LINE__, __FILE__, "golden %s checks clean: %s", path, c.diag);
			if (c.errors == 0) {
				char *out = fmt_string(c.file);
				compare(path, fmt, out);
				free(out);
			}
		}
		checked_free(&c);
		free(err);
		free(fmt);
		free(copy);
		free(text);
	}
	assert_named(negative >= 40, __LINE__, __FILE__, "at least 40 malformed inputs (%d)", negative);
	globfree(&g);
}

/* tests/golden/NAME.EXT through the fuzz target of its reader. */
static void
replay(const char *ext, void (*target)(const char *, const uint8_t *, size_t, FILE *))
{
	glob_t g;
	char pattern[64];
	snprintf(pattern, sizeof pattern, "tests/golden/*.%s", ext);
	/* every reader has regression files: none found is a failure (a moved
	 * folder or a run from elsewhere would otherwise pass, checking nothing) */
	int rc = glob(pattern, 0, NULL, &g);
	assert_named(rc == 0 && g.gl_pathc > 0, __LINE__, __FILE__,
	             "%s: no golden files (run from the repository root)", pattern);
	if (rc != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *path = g.gl_pathv[i];
		size_t len;
		char *text = slurp(path, &len);
		assert_named(text != NULL, __LINE__, __FILE__, "read %s", path);
		if (!text)
			continue;
		char *copy = strdup(path);
		char *diag = NULL;
		size_t dlen;
		FILE *mem = open_memstream(&diag, &dlen);
		target(basename(copy), (const uint8_t *)text, len, mem);
		fclose(mem);
		size_t n = strlen(path) - strlen(ext) - 1;
		char *err = malloc(n + sizeof ".err");
		memcpy(err, path, n);
		strcpy(err + n, ".err");
		compare(path, err, diag);
		free(err);
		free(diag);
		free(copy);
		free(text);
	}
	globfree(&g);
}

static void
test_golden_readers(void)
{
	replay("ir", fuzz_ir);
	replay("xml", fuzz_msccl);
	replay("sim", fuzz_sim);
}

static void
test_examples_check(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	glob_t g;
	CU_ASSERT_EQUAL_FATAL(glob("examples/*.coll", 0, NULL, &g), 0);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		size_t len;
		char *text = slurp(g.gl_pathv[i], &len);
		Checked c;
		check_built(dg, &c, g.gl_pathv[i], text ? text : "", text ? len : 0);
		assert_named(text && c.errors == 0, __LINE__, __FILE__,
		             "example %s checks clean and every schedule built verifies: %s",
		             g.gl_pathv[i], c.diag);
		checked_free(&c);
		free(text);
	}
	globfree(&g);
}

CU_TestInfo golden_tests[] = {
	{"tests/golden: diagnostics and canonical forms", test_golden},
	{"tests/golden: schedule text, MSCCL XML and .sim finds", test_golden_readers},
	{"examples check, build and verify", test_examples_check},
	CU_TEST_INFO_NULL,
};
