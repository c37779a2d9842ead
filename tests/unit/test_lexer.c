/* test_lexer.c: token positions, numbers and units, comments, bad bytes. */
#include <math.h>
#include <string.h>

#include "tests.h"

static const Expr *
param_value(const Checked *c, int item)
{
	return c->file->decl[0].body->item[item].value;
}

static void
test_units(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	check_str(dg, &c, "network {\n"
	              "  link_bandwidth = 400 Gbps;\n"
	              "  link_latency = 25ns;\n"
	              "  mtu = 4 KiB;\n"
	              "  energy_per_bit = 1.75 pJ;\n"
	              "  step_overhead = 1.7us;\n"
	              "  reconfig_delay = 0;\n"
	              "}\n");
	CU_ASSERT_EQUAL_FATAL(c.errors, 0);
	CU_ASSERT_DOUBLE_EQUAL(expr_number(param_value(&c, 0)), 400e9, 1);
	CU_ASSERT_EQUAL(expr_qty(param_value(&c, 0)), Q_RATE);
	CU_ASSERT_DOUBLE_EQUAL(expr_number(param_value(&c, 1)), 25e-9, 1e-18);
	CU_ASSERT_EQUAL(expr_qty(param_value(&c, 1)), Q_TIME);
	CU_ASSERT_DOUBLE_EQUAL(expr_number(param_value(&c, 2)), 4096, 0);
	CU_ASSERT_DOUBLE_EQUAL(expr_number(param_value(&c, 3)), 1.75e-12, 1e-20);
	CU_ASSERT_STRING_EQUAL(param_value(&c, 3)->text, "1.75");
	CU_ASSERT_DOUBLE_EQUAL(expr_number(param_value(&c, 4)), 1.7e-6, 1e-15);
	CU_ASSERT_EQUAL(expr_qty(param_value(&c, 5)), Q_COUNT);
	checked_free(&c);
}

static void
test_bits_and_bytes(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* rates are in bits per second: GBps is 8 Gbps, GiBps 8 * 2^30 bps */
	static const struct { const char *unit; double bps; } t[] = {
		{"bps", 1}, {"Kbps", 1e3}, {"Mbps", 1e6}, {"Gbps", 1e9}, {"Tbps", 1e12},
		{"Bps", 8}, {"KBps", 8e3}, {"MBps", 8e6}, {"GBps", 8e9}, {"TBps", 8e12},
		{"KiBps", 8192}, {"MiBps", 8.0 * 1048576}, {"GiBps", 8.0 * 1073741824},
		{"TiBps", 8.0 * 1099511627776.0},
	};
	for (size_t i = 0; i < countof(t); i++) {
		char text[128];
		snprintf(text, sizeof text, "network { link_bandwidth = 2 %s; }", t[i].unit);
		Checked c;
		check_str(dg, &c, text);
		assert_named(c.errors == 0 && fabs(expr_number(param_value(&c, 0)) - 2 * t[i].bps) < 1e-3,
		             __LINE__, __FILE__, "2 %s is %g bps", t[i].unit, 2 * t[i].bps);
		checked_free(&c);
	}
}

static void
test_sizes(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct { const char *unit; double bytes; } t[] = {
		{"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"KiB", 1024}, {"MiB", 1048576},
		{"GiB", 1073741824},
	};
	for (size_t i = 0; i < countof(t); i++) {
		char text[128];
		snprintf(text, sizeof text, "network { mtu = 3%s; }", t[i].unit);
		Checked c;
		check_str(dg, &c, text);
		assert_named(c.errors == 0 && expr_number(param_value(&c, 0)) == 3 * t[i].bytes,
		             __LINE__, __FILE__, "3%s is %g bytes", t[i].unit, 3 * t[i].bytes);
		checked_free(&c);
	}
}

static void
test_positions(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	check_str(dg, &c, "// header\n"
	              "topology  T = torus(8,\n"
	              "\t8);\n"
	              "/* a\n   b */ tree B = bfs(T, root (0, 0));\n");
	CU_ASSERT_EQUAL_FATAL(c.errors, 0);
	const Decl *t = &c.file->decl[0];
	CU_ASSERT_EQUAL(t->loc.line, 2);
	CU_ASSERT_EQUAL(t->loc.col, 1);
	CU_ASSERT_EQUAL(t->name_loc.col, 11);
	CU_ASSERT_EQUAL(t->form->loc.col, 15);
	CU_ASSERT_EQUAL(t->form->arg[1].loc.line, 3);
	CU_ASSERT_EQUAL(t->form->arg[1].loc.col, 2); /* a tab is one byte */
	CU_ASSERT_EQUAL(t->end_line, 3);
	const Decl *b = &c.file->decl[1];
	CU_ASSERT_EQUAL(b->loc.line, 5);
	CU_ASSERT_EQUAL(b->loc.col, 9);
	CU_ASSERT_EQUAL(c.file->ncomment, 2);
	CU_ASSERT_STRING_EQUAL(c.file->comment[0].text, "// header");
	CU_ASSERT_STRING_EQUAL(c.file->comment[1].text, "/* a\n   b */");
	CU_ASSERT_EQUAL(c.file->comment[1].loc.line, 4);
	CU_ASSERT_EQUAL(c.file->comment[1].end_line, 5);
	checked_free(&c);
}

static void
test_int_limits(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	check_str(dg, &c, "topology T = ring(9223372036854775807);");
	CU_ASSERT_EQUAL(c.errors, 1);
	ASSERT_DIAG(&c, "t.coll:1:19: error: each size of ring must be at most 1048576");
	checked_free(&c);
	check_str(dg, &c, "topology T = ring(9223372036854775808);");
	ASSERT_DIAG(&c, "t.coll:1:19: error: integer '9223372036854775808' does not fit in 64 bits");
	checked_free(&c);
}

static void
test_bad_bytes(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	check_str(dg, &c, "topology T = ring(4); @@@ $");
	CU_ASSERT_EQUAL(c.errors, 2);
	ASSERT_DIAG(&c, "t.coll:1:23: error: 3 unexpected bytes, starting with '@'");
	ASSERT_DIAG(&c, "t.coll:1:27: error: unexpected '$'");
	checked_free(&c);
}

static void
test_range_is_not_a_decimal(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	check_str(dg, &c, "topology T = ring(8); collective allgather A on T { algorithm ring; ranks 1..5; }");
	CU_ASSERT_EQUAL_FATAL(c.errors, 0);
	const Item *r = &c.file->decl[1].body->item[1];
	CU_ASSERT_EQUAL(r->kind, IT_RANKS);
	CU_ASSERT_EQUAL(r->list.v[0]->kind, EX_RANGE);
	CU_ASSERT_EQUAL(r->list.v[0]->lhs->ival, 1);
	CU_ASSERT_EQUAL(r->list.v[0]->rhs->ival, 5);
	checked_free(&c);
}

CU_TestInfo lexer_tests[] = {
	{"units and their values", test_units},
	{"rates in bits and bytes", test_bits_and_bytes},
	{"sizes decimal and binary", test_sizes},
	{"token positions and comments", test_positions},
	{"64-bit integer limits", test_int_limits},
	{"bad bytes reported once per run", test_bad_bytes},
	{"1..5 is a range", test_range_is_not_a_decimal},
	CU_TEST_INFO_NULL,
};
