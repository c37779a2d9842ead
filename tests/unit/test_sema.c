/*
 * test_sema.c: what sema accepts. Rejections, each with its exact message,
 * live in tests/golden (NAME.coll beside NAME.err), run by the golden suite.
 */
#include <stdio.h>
#include <string.h>

#include "tests.h"

/* Every form of every declaration, in a file that must be clean. */
static const char *const accepted[] = {
	"topology T = torus(3, 4, 5, 2); tree B = bfs(T, root (2, 3, 4, 1));",
	"topology M = mesh(4, 4); collective allreduce A on M { algorithm tto; }",
	"topology S = supermesh(4, 4, bi); trees D = disjoint(S, roots 0, 3, 15, 12);",
	"topology S = supermesh(5, 5, alter); trees D = disjoint(S, roots (0, 1), (1, 4));",
	"topology H = hyperx(8, 8); tree W = windmill(H, root (0, 0)); group Tr = translations(H);",
	"topology F = spine_leaf(spines 4, leaves 8, hosts 4); tree B = bfs(F, root (0, 0));"
	" collective allreduce A on F { algorithm ring; ranks 0..31; }",
	"topology R = ring(16); group G on R { translate; map x -> -x; }",
	"topology R = ring(16); group G on R { translate 2; map (x) -> (15 - x); }",
	"topology K = full(8); group A = automorphisms(K); tree B = bfs(K, root 0);",
	"topology O = optical_ring(64, ports 128);"
	" collective alltoall A on O { algorithm bridge(reconfigs 2); }",
	"topology O = optical_ring(16); collective reduce_scatter A on O { algorithm bridge; }",
	"topology C = graph { nodes 3; link 0 <-> 1; link 1 -> 2 { link_bandwidth = 1 Tbps; "
	"link_latency = 5 ns; energy_per_bit = 2 pJ; } link 2 -> 0; }"
	" group G on C { map 0 -> 1, 1 -> 2, 2 -> 0; }",
	"topology T = torus(4, 4); group G on T { translate (1, 0); } group H on T { include G;"
	" map (x, y) -> (y, x); }",
	"topology T = torus(8, 8); tree K = khop(T, root (0, 0), depth 5);"
	" tree F = forest(T, roots (0, 0), (1, 0)); trees P = balanced_pair(T, root (0, 0));",
	"topology T = torus(3, 3); tree E on T root (0, 0) { (0, 1) -> (0, 0); (0, 2) -> (0, 0);"
	" (1, 0) -> (0, 0); (2, 0) -> (0, 0); (1, 1) -> (0, 1); (2, 1) -> (0, 1);"
	" (1, 2) -> (0, 2); (2, 2) -> (0, 2); }",
	"topology T = torus(4, 4); collective allreduce A on T { algorithm auto; chunks auto;"
	" routing dor; ranks all; }",
	"topology T = torus(4, 4); collective allreduce A on T { algorithm swing; chunks 64; }",
	"topology T = torus(9, 9); collective reduce_scatter A on T { algorithm trivance(latency); }",
	"topology T = torus(4, 4); collective allreduce A on T { algorithm ring(ports 2);"
	" ranks 0..3, 8, 12..13; }",
	"topology T = torus(4, 4); collective broadcast A on T { algorithm binomial_tree;"
	" root (1, 1); }",
	"topology T = torus(4, 4); collective reduce A on T { algorithm chain; ranks 0..7; root 7; }",
	"topology T = torus(4, 4); collective alltoall A on T { algorithm pairwise; }"
	" collective alltoall B on T { algorithm bruck; }",
	"topology T = torus(4, 4, 4); collective allreduce A on T { algorithm bucket; }"
	" collective allreduce B on T { algorithm multiport_ring; }",
	"topology T = torus(2, 32); collective allreduce A on T { algorithm halving_doubling; }"
	" collective allreduce B on T { algorithm double_binary_tree; }"
	" collective allgather C on T { algorithm recursive_doubling; }"
	" collective reduce_scatter D on T { algorithm recursive_halving; }",
	"topology S = supermesh(4, 4, bi); trees D = disjoint(S, roots 0, 3, 15, 12);"
	" collective allreduce A on S { algorithm pipelined_trees(trees D, segments 64); }",
	"network { link_bandwidth = 25 GBps; link_latency = 20 ns; router_latency = 0 ns;"
	" step_overhead = 0; mtu = 4 KiB; energy_per_bit = 1.75 pJ; reconfig_delay = 10 us; }",
	"network { link_latency = -0 ns; }",
	"network { router_energy_per_bit = 0.5 pJ; port_static_power = 2 W; "
	"link_static_power = 250 mW; }\ntopology T = ring(4);\n"
	"collective allreduce A on T { algorithm ring; }",
	"network { port_static_power = 0; link_static_power = 3 uW; }",
};

static void
test_accepted(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	for (size_t i = 0; i < countof(accepted); i++) {
		Checked c;
		check_str(dg, &c, accepted[i]);
		assert_named(c.errors == 0, __LINE__, __FILE__, "accepted[%zu]: %s", i, c.diag);
		checked_free(&c);
	}
}

static void
test_every_rank_checked(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* a sub-communicator covers exactly the ranks listed, each once */
	Checked c;
	check_str(dg, &c, "topology T = torus(4, 4);\n"
	              "collective allreduce A on T { algorithm ring; ranks 0..7, 3; }\n");
	CU_ASSERT_EQUAL(c.errors, 1);
	ASSERT_DIAG(&c, "t.coll:2:59: error: rank 3 is listed twice");
	checked_free(&c);
}

static void
test_tree_span_and_cycle(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	check_str(dg, &c, "topology R = ring(5);\n"
	              "tree E on R root 0 { 1 -> 0; 2 -> 1; 3 -> 4; 4 -> 3; }\n");
	CU_ASSERT_EQUAL(c.errors, 1);
	ASSERT_DIAG(&c, "t.coll:2:38: error: tree 'E' has a cycle through node 3");
	checked_free(&c);
	check_str(dg, &c, "topology R = ring(5);\n"
	              "tree E on R root 0 { 1 -> 0; 2 -> 4; 3 -> 2; }\n");
	CU_ASSERT_EQUAL(c.errors, 1);
	ASSERT_DIAG(&c, "t.coll:2:6: error: tree 'E' is not connected: node 4 is a parent but has "
	                "no parent itself");
	checked_free(&c);
	/* a tree over part of the nodes is fine here (a sub-communicator's tree) */
	check_str(dg, &c, "topology R = ring(5);\n"
	              "tree E on R root 0 { 1 -> 0; 2 -> 1; 3 -> 2; }\n");
	CU_ASSERT_EQUAL(c.errors, 0);
	checked_free(&c);
}

static void
test_switches_are_not_ranks(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	check_str(dg, &c, "topology K = graph { nodes 4; switches 3; link 0 <-> 3; link 1 <-> 3;"
	              " link 2 <-> 3; }\n"
	              "tree E on K root 0 { 1 -> 0; 2 -> 0; }\n"
	              "collective allreduce A on K { algorithm ring; ranks 0, 3; }\n");
	CU_ASSERT_EQUAL(c.errors, 1);
	ASSERT_DIAG(&c, "t.coll:3:56: error: node 3 is a switch, not a rank");
	checked_free(&c);
}

static void
test_errors_are_all_reported(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* sema goes on after an error: three independent mistakes, three messages */
	Checked c;
	check_str(dg, &c, "topology T = torus(4, 4);\n"
	              "tree B = bfs(T, root (4, 0));\n"
	              "group G = translations(T2);\n"
	              "collective allreduce A on T { algorithm pairwise; }\n");
	CU_ASSERT_EQUAL(c.errors, 3);
	ASSERT_DIAG(&c, "t.coll:2:23: error: coordinate 1 of this node is 4");
	ASSERT_DIAG(&c, "t.coll:3:24: error: unknown topology 'T2'; did you mean 'T'?");
	ASSERT_DIAG(&c, "t.coll:4:41: error: pairwise does not implement allreduce");
	checked_free(&c);
}

/* Whether word is an item of the list after "exist on " in msg ("a, b
 * and c", up to ')'). */
static bool
listed(const char *msg, const char *word)
{
	const char *at = strstr(msg, "exist on ");
	char list[512];
	if (!at)
		return false;
	at += strlen("exist on ");
	snprintf(list, sizeof list, "%.*s", (int)strcspn(at, ")"), at);
	for (char *p = strtok(list, " ,"); p; p = strtok(NULL, " ,"))
		if (strcmp(p, word) == 0)
			return true;
	return false;
}

/* Both messages on a form without translations name every form whose
 * registry entry has them, and no other (issue 34: one list for both). */
static void
test_translations_listed(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	check_str(dg, &c, "topology T = mesh(4, 4);\ngroup G on T { translate; }\n"
	              "group H = translations(T);\n");
	CU_ASSERT_EQUAL_FATAL(c.errors, 2);
	const char *one = strstr(c.diag, "has no translations (they exist on ");
	const char *two = strstr(c.diag, "has no translation group (translations exist on ");
	CU_ASSERT_FATAL(one && two);
	int with = 0;
	for (int k = 0; k < NTOPOKIND; k++) {
		const char *name = topo_forms[k].form.name;
		with += topo_forms[k].translations;
		assert_named(listed(one, name) == topo_forms[k].translations &&
		             listed(two, name) == topo_forms[k].translations, __LINE__, __FILE__,
		             "%s (translations %d) in: %s", name, topo_forms[k].translations, c.diag);
	}
	CU_ASSERT(with >= 7);
	checked_free(&c);
}

CU_TestInfo sema_tests[] = {
	{"every form accepted", test_accepted},
	{"ranks listed once", test_every_rank_checked},
	{"explicit trees: connected, without cycles", test_tree_span_and_cycle},
	{"switches are not ranks", test_switches_are_not_ranks},
	{"every error reported", test_errors_are_all_reported},
	{"the forms with translations, from the registry, in both messages", test_translations_listed},
	CU_TEST_INFO_NULL,
};
