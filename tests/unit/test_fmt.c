/*
 * test_fmt.c: the canonical form. For every example and every clean golden
 * input: fmt's output parses to an equal tree, and fmt of it is identical.
 */
#include <glob.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

/* Checks the round trip on one text; returns the canonical form (malloc'd). */
static char *
round_trip(Diag *dg, const char *name, const char *text, size_t len)
{
	Checked a, b, c;
	check_text(dg, &a, name, text, len);
	assert_named(a.errors == 0, __LINE__, __FILE__, "%s checks clean: %s", name, a.diag);
	if (a.errors) {
		checked_free(&a);
		return NULL;
	}
	char *once = fmt_string(a.file);
	check_text(dg, &b, name, once, strlen(once));
	assert_named(b.errors == 0 && ast_equal(a.file, b.file), __LINE__, __FILE__,
	             "%s: fmt's output has the same tree", name);
	char *twice = b.errors ? strdup("") : fmt_string(b.file);
	assert_named(strcmp(once, twice) == 0, __LINE__, __FILE__, "%s: fmt of fmt is identical", name);
	/* every comment survives, in order */
	check_text(dg, &c, name, twice, strlen(twice));
	int kept = c.file && c.file->ncomment == a.file->ncomment;
	for (int i = 0; kept && i < a.file->ncomment; i++)
		kept = strstr(c.file->comment[i].text, a.file->comment[i].text) != NULL ||
		       strstr(a.file->comment[i].text, c.file->comment[i].text) != NULL;
	assert_named(kept, __LINE__, __FILE__, "%s: fmt keeps every comment", name);
	checked_free(&a);
	checked_free(&b);
	checked_free(&c);
	free(twice);
	return once;
}

static void
round_trip_glob(Diag *dg, const char *pattern, bool must_be_canonical)
{
	glob_t g;
	int found = glob(pattern, 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
	for (int i = 0; i < found; i++) {
		size_t len;
		char *text = slurp(g.gl_pathv[i], &len);
		if (!text)
			continue;
		Checked probe;
		check_text(dg, &probe, g.gl_pathv[i], text, len);
		bool clean = probe.errors == 0;
		checked_free(&probe);
		if (clean || must_be_canonical) {
			char *canon = round_trip(dg, g.gl_pathv[i], text, len);
			if (must_be_canonical && canon)
				assert_named(strcmp(canon, text) == 0, __LINE__, __FILE__,
				             "%s is in canonical form (collc fmt)", g.gl_pathv[i]);
			free(canon);
		}
		free(text);
	}
	if (found)
		globfree(&g);
	assert_named(found > 0 || !must_be_canonical, __LINE__, __FILE__, "files match %s", pattern);
}

static void
test_examples(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	round_trip_glob(dg, "examples/*.coll", true);
}

static void
test_golden_inputs(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	round_trip_glob(dg, "tests/golden/*.coll", false);
}

static void
test_layout(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	const char *in =
		"// head\n"
		"network{link_bandwidth=400Gbps;mtu=4KiB;// m\n"
		"energy_per_bit = 1.750pJ; }\n"
		"\n\n\n"
		"topology T=torus( 2,2 ) ;   /* t */\n"
		"group G on T{translate;map(x,y)->(-x,y+1*2);}\n"
		"tree E on T root(0,0){(0,1)->(0,0);(1,0)->(0,0);(1,1)->(0,1);}\n";
	const char *want =
		"// head\n"
		"network {\n"
		"    link_bandwidth = 400 Gbps;\n"
		"    mtu            = 4 KiB; // m\n"
		"    energy_per_bit = 1.750 pJ;\n"
		"}\n"
		"\n"
		"topology T = torus(2, 2); /* t */\n"
		"group G on T {\n"
		"    translate;\n"
		"    map (x, y) -> (-x, y + 1 * 2);\n"
		"}\n"
		"tree E on T root (0, 0) {\n"
		"    (0, 1) -> (0, 0);\n"
		"    (1, 0) -> (0, 0);\n"
		"    (1, 1) -> (0, 1);\n"
		"}\n";
	Checked c;
	check_str(dg, &c, in);
	CU_ASSERT_EQUAL_FATAL(c.errors, 0);
	char *out = fmt_string(c.file);
	CU_ASSERT_STRING_EQUAL(out, want);
	free(out);
	checked_free(&c);
}

static void
test_equal_sees_differences(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked a, b;
	check_str(dg, &a, "topology T = torus(4, 4);");
	check_str(dg, &b, "topology T = torus(4, 5);");
	CU_ASSERT(!ast_equal(a.file, b.file));
	checked_free(&b);
	check_str(dg, &b, "topology T = torus(4, 4); // c");
	CU_ASSERT(ast_equal(a.file, b.file));
	checked_free(&b);
	checked_free(&a);
}

/* A line comment runs to its \n, a lone \r included, as in C (fuzzing
 * find: code after a lone \r shared the comment's line, so fmt's output was
 * not a fixed point); the \r's that end a line are dropped. */
static void
test_line_comment_to_newline(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	const char *in = "topology T = torus(4, 4);\r\n// a\r\vb\rc\r\n"
	                 "collective allreduce A on T { algorithm ring; }\r\n";
	char *canon = round_trip(dg, "lone-cr", in, strlen(in));
	CU_ASSERT_PTR_NOT_NULL_FATAL(canon);
	CU_ASSERT_PTR_NOT_NULL(strstr(canon, "\n// a\r\vb\rc\ncollective"));
	free(canon);
	/* fuzzing find: of \r\r\n only the last \r was dropped, and the other
	 * ended the line in fmt's output, to be dropped by the next fmt */
	in = "topology T= torus(4, 3);\r\n//(winde; }\r\r\n//(\n/* a\r\r\nb\r */\n";
	canon = round_trip(dg, "cr-runs", in, strlen(in));
	CU_ASSERT_PTR_NOT_NULL_FATAL(canon);
	CU_ASSERT_PTR_NOT_NULL(strstr(canon, "\n//(winde; }\n//(\n/* a\nb\r */\n"));
	free(canon);
}

/* Nodes by name (docs/language.md section 6) everywhere a node stands: a
 * name first among a form's arguments, after a label and after a labelled
 * value (the parser reads `gpu (0, 1)` there as a label, ast_call_arg makes
 * it a name), ranges of names, tree edges, a schedule's ranks. */
static void
test_node_names(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	const char *in =
		"topology C = rails(boxes 2, gpus 2, nic_gbps 400);\n"
		"trees D = disjoint(C, roots gpu (0, 0), gpu(1,1));\n"
		"tree T on C root gpu(0, 0) { gpu(0, 1) -> gpu(0, 0); gpu(1, 0) -> gpu(0, 0);\n"
		"    gpu(1, 1) -> gpu(1, 0); }\n"
		"collective allgather A on C { algorithm ring; ranks gpu(1, 0)..gpu(1, 1), gpu(0, 0), gpu(0, 1); }\n"
		"collective broadcast B on C { root gpu(0, 0); schedule {\n"
		"    round { send 0 from gpu(0, 0) to gpu(1, 0) copy; send 0 from gpu(0, 0) to gpu(0, 1) copy; }\n"
		"    round { send 0 from gpu(1, 0) to gpu(1, 1) copy; } } }\n";
	char *canon = round_trip(dg, "names", in, strlen(in));
	CU_ASSERT_PTR_NOT_NULL_FATAL(canon);
	CU_ASSERT_PTR_NOT_NULL(strstr(canon, "disjoint(C, roots gpu(0, 0), gpu(1, 1))"));
	CU_ASSERT_PTR_NOT_NULL(strstr(canon, "ranks gpu(1, 0)..gpu(1, 1), gpu(0, 0), gpu(0, 1);"));
	CU_ASSERT_PTR_NOT_NULL(strstr(canon, "send 0 from gpu(1, 0) to gpu(1, 1) copy;"));
	free(canon);
}

CU_TestInfo fmt_tests[] = {
	{"nodes by name round-trip, in arguments, ranges, trees and schedules", test_node_names},
	{"every example round-trips and is canonical", test_examples},
	{"every clean golden input round-trips", test_golden_inputs},
	{"layout, alignment, comments", test_layout},
	{"tree equality", test_equal_sees_differences},
	{"a line comment runs to its newline", test_line_comment_to_newline},
	CU_TEST_INFO_NULL,
};
