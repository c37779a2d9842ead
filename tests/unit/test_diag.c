/* test_diag.c: the diagnostic format, caret placement, limits. */
#include <stdlib.h>
#include <string.h>

#include "tests.h"

static char *
capture(Diag *dg, const char *text, Loc loc, const char *msg)
{
	char *buf = NULL;
	size_t len;
	FILE *mem = open_memstream(&buf, &len);
	diag_stream(dg, mem);
	diag_reset(dg);
	diag_source(dg, "f.coll", text, strlen(text));
	error_at(dg, loc, "%s", msg);
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
	return buf;
}

static void
test_format_and_caret(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	char *s = capture(dg, "network {\n    mtu = 4 XB;\n}\n", (Loc){2, 13}, "unknown unit 'XB'");
	CU_ASSERT_STRING_EQUAL(s, "f.coll:2:13: error: unknown unit 'XB'\n"
	                          "    mtu = 4 XB;\n"
	                          "            ^\n");
	free(s);
}

static void
test_tabs_kept(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	char *s = capture(dg, "\t\tring(1);\n", (Loc){1, 3}, "m");
	CU_ASSERT_STRING_EQUAL(s, "f.coll:1:3: error: m\n\t\tring(1);\n\t\t^\n");
	free(s);
}

static void
test_last_line_without_newline(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	char *s = capture(dg, "a\nbc", (Loc){2, 2}, "m");
	CU_ASSERT_STRING_EQUAL(s, "f.coll:2:2: error: m\nbc\n ^\n");
	free(s);
}

/* Control characters, bidirectional controls and bytes that are not
 * UTF-8 are escaped in the quoted line (they were '?', or passed through:
 * a U+202E reversed the line on the reader's terminal), the caret under
 * the column as shown. */
static void
test_control_bytes_shown(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	char *s = capture(dg, "a\x01\x7f" "b\n", (Loc){1, 4}, "m");
	CU_ASSERT_STRING_EQUAL(s, "f.coll:1:4: error: m\na\\x01\\x7Fb\n         ^\n");
	free(s);
	s = capture(dg, "x \xe2\x80\xae" "cba y\n", (Loc){1, 9}, "m"); /* U+202E */
	CU_ASSERT_STRING_EQUAL(s, "f.coll:1:9: error: m\nx \\u202Ecba y\n           ^\n");
	free(s);
	s = capture(dg, "\xff\xc3(\xed\xa0\x80\xc2\x85z\n", (Loc){1, 10}, "m"); /* bad, C1 */
	CU_ASSERT_STRING_EQUAL(s, "f.coll:1:10: error: m\n\\xFF\\xC3(\\xED\\xA0\\x80\\u0085z\n"
	                          "                            ^\n");
	free(s);
}

static void
test_utf8_caret(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* "é" is two bytes but one column on a terminal */
	char *s = capture(dg, "// \xc3\xa9\nx \xc3\xa9 y\n", (Loc){2, 6}, "m");
	CU_ASSERT_STRING_EQUAL(s, "f.coll:2:6: error: m\nx \xc3\xa9 y\n    ^\n");
	free(s);
}

static void
test_long_line_window(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	size_t n = 100000;
	char *text = malloc(n + 1);
	memset(text, 'a', n);
	text[n] = '\0';
	text[50000] = 'X';
	char *s = capture(dg, text, (Loc){1, 50001}, "m");
	const char *line2 = strchr(s, '\n') + 1;
	const char *line3 = strchr(line2, '\n') + 1;
	CU_ASSERT(strlen(s) < 400);
	CU_ASSERT_NSTRING_EQUAL(line2, "...", 3);
	/* the caret stands under the X */
	const char *x = strchr(line2, 'X');
	const char *caret = strchr(line3, '^');
	CU_ASSERT_PTR_NOT_NULL_FATAL(x);
	CU_ASSERT_PTR_NOT_NULL_FATAL(caret);
	CU_ASSERT_EQUAL(x - line2, caret - line3);
	free(s);
	free(text);
}

static void
test_error_limit(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	char *buf = NULL;
	size_t len;
	FILE *mem = open_memstream(&buf, &len);
	diag_stream(dg, mem);
	diag_reset(dg);
	diag_source(dg, "f.coll", "x\n", 2);
	for (int i = 0; i < 50; i++)
		error_at(dg, (Loc){1, 1}, "e%d", i);
	CU_ASSERT_EQUAL(nerrors(dg), DIAG_MAX_ERRORS);
	CU_ASSERT(diag_too_many(dg));
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "e19\n"));
	CU_ASSERT_PTR_NULL(strstr(buf, "e20\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "too many errors (20), stopping"));
	free(buf);
}

static void
test_nearest_name(void)
{
	const char *cand[] = {"torus", "mesh", "hyperx", "ring"};
	CU_ASSERT_STRING_EQUAL(nearest_name("tours", cand, 4), "torus");
	CU_ASSERT_STRING_EQUAL(nearest_name("rng", cand, 4), "ring");
	CU_ASSERT_PTR_NULL(nearest_name("butterfly", cand, 4));
	CU_ASSERT_EQUAL(edit_distance("kitten", "sitting"), 3);
}

CU_TestInfo diag_tests[] = {
	{"file:line:col, source line, caret", test_format_and_caret},
	{"tabs kept in the caret line", test_tabs_kept},
	{"last line without newline", test_last_line_without_newline},
	{"control, bidi and invalid UTF-8 escaped in the quoted line", test_control_bytes_shown},
	{"UTF-8 takes one column", test_utf8_caret},
	{"long lines quoted as a window", test_long_line_window},
	{"at most 20 errors", test_error_limit},
	{"nearest name", test_nearest_name},
	CU_TEST_INFO_NULL,
};
