/* test_parser.c: the tree the parser builds, and error recovery. */
#include <string.h>

#include "tests.h"

static void
test_label_lists(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	check_str(dg, &c, "topology S = supermesh(6, 6, alter);\n"
	              "trees D = disjoint(S, roots (0, 0), (0, 5), (5, 5), (5, 0));\n");
	CU_ASSERT_EQUAL_FATAL(c.errors, 0);
	const Call *f = c.file->decl[1].form;
	CU_ASSERT_STRING_EQUAL(f->name, "disjoint");
	CU_ASSERT_EQUAL_FATAL(f->narg, 2);
	CU_ASSERT_PTR_NULL(f->arg[0].label);
	CU_ASSERT_STRING_EQUAL(f->arg[1].label, "roots");
	CU_ASSERT_EQUAL(f->arg[1].val.n, 4);
	CU_ASSERT_EQUAL(f->arg[1].val.v[3]->kind, EX_TUPLE);
	CU_ASSERT_EQUAL(f->arg[1].val.v[3]->elem[0]->ival, 5);
	checked_free(&c);
}

static void
test_declarations(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	check_str(dg, &c, "network { mtu = 4 KiB; }\n"
	              "topology T = torus(4, 4) { network { link_latency = 10 ns; } }\n"
	              "group G on T { translate; map (x, y) -> (y, x); }\n"
	              "group Tr = translations(T);\n"
	              "tree B = bfs(T, root 0);\n"
	              "trees P = balanced_pair(T, root (0, 0));\n"
	              "tree E on T root 0 { 1 -> 0; }\n"
	              "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n");
	CU_ASSERT_EQUAL_FATAL(c.file->ndecl, 8);
	static const DeclKind kinds[] = {DC_NETWORK, DC_TOPOLOGY, DC_GROUP, DC_GROUP,
	                                 DC_TREE, DC_TREES, DC_TREE, DC_COLLECTIVE};
	for (int i = 0; i < 8; i++)
		assert_named(c.file->decl[i].kind == kinds[i], __LINE__, __FILE__, "declaration %d's kind", i);
	const Decl *t = &c.file->decl[1];
	CU_ASSERT_EQUAL(t->body->nitem, 1);
	CU_ASSERT_EQUAL(t->body->item[0].kind, IT_NETWORK);
	const Decl *e = &c.file->decl[6];
	CU_ASSERT_STRING_EQUAL(e->on, "T");
	CU_ASSERT_EQUAL(e->root->ival, 0);
	CU_ASSERT_EQUAL(e->body->item[0].kind, IT_EDGE);
	const Decl *ar = &c.file->decl[7];
	CU_ASSERT_STRING_EQUAL(ar->ckind, "allreduce");
	CU_ASSERT_STRING_EQUAL(ar->name, "AR");
	/* E covers nodes 0 and 1 only: whether it spans is checked where it is used */
	CU_ASSERT_EQUAL(c.errors, 0);
	checked_free(&c);
}

static void
test_expressions(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	check_str(dg, &c, "topology T = torus(5, 5);\n"
	              "group G on T { map (x, y) -> (2 * x - y + 1, -(x)); }\n");
	CU_ASSERT_EQUAL_FATAL(c.errors, 0);
	const Item *m = &c.file->decl[1].body->item[0];
	CU_ASSERT_EQUAL(m->kind, IT_MAP);
	CU_ASSERT_EQUAL_FATAL(m->list.n, 2);
	const Expr *to = m->list.v[1];
	CU_ASSERT_EQUAL_FATAL(to->kind, EX_TUPLE);
	const Expr *a = to->elem[0]; /* ((2 * x) - y) + 1 */
	CU_ASSERT_EQUAL(a->kind, EX_ADD);
	CU_ASSERT_EQUAL(a->lhs->kind, EX_SUB);
	CU_ASSERT_EQUAL(a->lhs->lhs->kind, EX_MUL);
	CU_ASSERT_EQUAL(to->elem[1]->kind, EX_NEG);
	CU_ASSERT_EQUAL(to->elem[1]->lhs->kind, EX_TUPLE);
	checked_free(&c);
}

static void
test_items(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	check_str(dg, &c, "topology K = graph {\n"
	              "  nodes 6; switches 4..5;\n"
	              "  link 0 <-> 4; link 1 <-> 4; link 2 <-> 5; link 3 <-> 5;\n"
	              "  link 4 -> 5 { link_bandwidth = 800 Gbps; } link 5 -> 4;\n"
	              "}\n"
	              "collective broadcast BC on K {\n"
	              "  algorithm chain(segments 8); chunks 16; routing shortest_path;\n"
	              "  ranks 0..3; root 2;\n"
	              "}\n");
	CU_ASSERT_EQUAL_FATAL(c.errors, 0);
	const Block *g = c.file->decl[0].body;
	CU_ASSERT_EQUAL(g->nitem, 8);
	CU_ASSERT_EQUAL(g->item[1].kind, IT_SWITCHES);
	CU_ASSERT(g->item[2].flag);
	CU_ASSERT_PTR_NOT_NULL(g->item[6].body);
	CU_ASSERT(!g->item[6].flag);
	const Block *b = c.file->decl[1].body;
	static const ItemKind kinds[] = {IT_ALGORITHM, IT_CHUNKS, IT_ROUTING, IT_RANKS, IT_ROOT};
	CU_ASSERT_EQUAL_FATAL(b->nitem, 5);
	for (int i = 0; i < 5; i++)
		assert_named(b->item[i].kind == kinds[i], __LINE__, __FILE__, "collective item %d", i);
	CU_ASSERT_STRING_EQUAL(b->item[0].call->name, "chain");
	checked_free(&c);
}

static void
test_recovery(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* three statements broken three ways: all three reported, the rest parsed */
	Checked c;
	check_str(dg, &c, "topology T = torus(8 8);\n"
	              "tree B = bfs(T root 0);\n"
	              "group G on T { translate; map (x, y) -> ; translate; }\n"
	              "topology R = ring(4);\n");
	CU_ASSERT_EQUAL(c.errors, 3);
	ASSERT_DIAG(&c, "t.coll:1:22: error: syntax error, unexpected number '8'");
	ASSERT_DIAG(&c, "t.coll:2:16: error: syntax error, unexpected 'root'");
	ASSERT_DIAG(&c, "t.coll:3:41: error: syntax error, unexpected ';'");
	CU_ASSERT_EQUAL(c.file->ndecl, 2); /* G and R */
	CU_ASSERT_STRING_EQUAL(c.file->decl[1].name, "R");
	CU_ASSERT_EQUAL(c.file->decl[0].body->nitem, 2);
	checked_free(&c);
}

static void
test_recovery_stops_at_20(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	char text[4096] = "";
	for (int i = 0; i < 40; i++)
		strcat(text, "topology = ;\n");
	Checked c;
	check_str(dg, &c, text);
	CU_ASSERT_EQUAL(c.errors, 20);
	ASSERT_DIAG(&c, "t.coll:20:10: error:");
	CU_ASSERT_PTR_NULL(strstr(c.diag, "t.coll:21:"));
	ASSERT_DIAG(&c, "t.coll: error: too many errors (20), stopping");
	checked_free(&c);
}

CU_TestInfo parser_tests[] = {
	{"a label takes the values after it", test_label_lists},
	{"every declaration form", test_declarations},
	{"expression precedence", test_expressions},
	{"graph and collective items", test_items},
	{"recovery at statement boundaries", test_recovery},
	{"stops after 20 errors", test_recovery_stops_at_20},
	CU_TEST_INFO_NULL,
};
