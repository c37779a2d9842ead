/*
 * test_backend.c: the IR text format round-trips (read back, verified, the
 * same metrics), its reader rejects damaged files with located errors, and
 * the DOT backend draws the topology and the tree copy asked for.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "tests.h"

/* Builds text, emits it with backend b, returns the output (malloc'd). */
static char *
emit(Diag *dg, const char *text, const Backend *b, BuildOpts o, Prog *p, Checked *c)
{
	memset(p, 0, sizeof *p);
	check_str(dg, c, text);
	if (c->errors || lower(dg, c->file, p) != 0)
		return NULL;
	char *buf = NULL;
	size_t len;
	FILE *mem = open_memstream(&buf, &len);
	int rc = b->emit(dg, p, &o, mem);
	fclose(mem);
	if (rc != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int
read_back(Diag *dg, const char *ir, Prog *q, char **diag)
{
	size_t len;
	FILE *mem = open_memstream(diag, &len);
	diag_stream(dg, mem);
	diag_reset(dg);
	diag_source(dg, "x.collir", ir, strlen(ir));
	memset(q, 0, sizeof *q);
	int rc = ir_read(dg, ir, strlen(ir), q);
	for (int i = 0; rc == 0 && i < q->nsched; i++)
		rc = verify(dg, q->sched[i]);
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
	return rc;
}

static const char *const programs[] = {
	"topology T = torus(4, 4); group G on T { translate; map (x, y) -> (-x, -y); "
	"map (x, y) -> (y, x); } tree B = bfs(T, root 0); "
	"collective allreduce AR on T { algorithm symmetric(trees B, group G); } "
	"collective reduce_scatter RS on T { algorithm symmetric(trees B, group G); routing dor; }",
	"topology T = torus(3, 5); group G on T { translate; map (x, y) -> (-x, -y); } "
	"trees P = balanced_pair(T, root 0); "
	"collective allgather AG on T { algorithm symmetric(trees P, group G); }",
	"topology F = spine_leaf(spines 2, leaves 3, hosts 2); group G on F { translate; } "
	"tree B = bfs(F, root 0); collective allreduce AR on F { algorithm symmetric(trees B, "
	"group G); }",
	"topology C = graph { nodes 4; link 0 <-> 1 { link_bandwidth = 10 Gbps; } link 1 <-> 2; "
	"link 2 <-> 3; link 3 <-> 0 { link_bandwidth = 10 Gbps; } } group A = automorphisms(C); "
	"tree B = bfs(C, root 0); collective allreduce AR on C { algorithm symmetric(trees B, "
	"group A); }",
	"topology T = torus(6, 6); group G on T { translate; map (x, y) -> (-x, -y); "
	"map (x, y) -> (y, x); } tree K = khop(T, root 0, depth 3); tree F = forest(T, roots 0, 6); "
	"collective allreduce A on T { algorithm symmetric(trees K, group G); } "
	"collective allreduce B on T { algorithm symmetric(trees F, group G); }",
	/* explicit, with Bucket's four instances (msg ... instance K) */
	"topology T = torus(4, 8); collective allreduce BK on T { algorithm bucket; }",
};

static void
test_ir_round_trip(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	for (size_t i = 0; i < countof(programs); i++) {
		Checked c;
		Prog p, q;
		char *ir = emit(dg, programs[i], &ir_backend, (BuildOpts){0}, &p, &c);
		assert_named(ir != NULL, __LINE__, __FILE__, "program %zu builds: %s", i, c.diag);
		if (!ir) {
			prog_free(&p);
			checked_free(&c);
			continue;
		}
		/* Bucket's instances are written (and, below, read back unchanged) */
		if (strstr(programs[i], "bucket"))
			assert_named(strstr(ir, " instance 3\n") != NULL, __LINE__, __FILE__,
			             "program %zu: its IR text names instance 3", i);
		char *diag = NULL;
		int rc = read_back(dg, ir, &q, &diag);
		assert_named(rc == 0 && q.nsched == p.nsched, __LINE__, __FILE__,
		             "program %zu reads back: %s", i, diag);
		for (int k = 0; rc == 0 && k < p.nsched; k++) {
			Metrics a, b;
			metrics(p.sched[k], 1 << 20, &a);
			metrics(q.sched[k], 1 << 20, &b);
			assert_named(a.rounds == b.rounds && a.messages == b.messages &&
			             a.volume == b.volume && a.psi == b.psi && a.theta == b.theta &&
			             a.omega == b.omega && a.model_time == b.model_time &&
			             p.sched[k]->nchunk == q.sched[k]->nchunk, __LINE__, __FILE__,
			             "program %zu schedule %d: the same metrics after reading back", i, k);
		}
		/* and writing what was read gives the same text */
		char *again = NULL;
		size_t len;
		FILE *mem = open_memstream(&again, &len);
		BuildOpts o = {0};
		if (rc == 0)
			ir_backend.emit(dg, &q, &o, mem);
		fclose(mem);
		assert_named(rc == 0 && strcmp(ir, again) == 0, __LINE__, __FILE__,
		             "program %zu: IR -> read -> IR is identical", i);
		free(again);
		free(diag);
		free(ir);
		prog_free(&q);
		prog_free(&p);
		checked_free(&c);
	}
}

static void
test_ir_reader_errors(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct { const char *text, *want; } bad[] = {
		{"", "x.collir: error: not a collc IR file (it starts with 'collc-ir 1')"},
		{"topology T = ring(4);\n", "x.collir:1:1: error: expected 'collc-ir'"},
		{"collc-ir 1\n\x01\n", "x.collir:2:1: error: unexpected byte 0x01"},
		{"collc-ir 2\n", "x.collir:1:10: error: expected an integer in 1..1"},
		{"collc-ir 1\nschedule A allreduce ring topology T ranks 2 chunks 2 rounds 1 form explicit\n",
		 "x.collir:2:36: error: unknown topology"},
		{"collc-ir 1\ntopology T ring dims 1 2 variant 0 nodes 2\nlink 0 1 0 1 1e9 0 0\n"
		 "link 1 0 0 1 1e9 0 0\nschedule A allreduce ring topology T ranks 2 chunks 2 rounds 1 "
		 "form explicit\nrank_nodes 0 1\nroute 0 1 0\nmsg 0 0 1 r 0 1 7\nend\n",
		 "x.collir:8:17: error: expected an integer in 0..1"},
		{"collc-ir 1\ntopology T ring dims 1 2 variant 0 nodes 2\nlink 0 1 0 1 1e9 0 0\n"
		 "link 1 0 0 1 1e9 0 0\nschedule A allreduce ring topology T ranks 2 chunks 1 rounds 1 "
		 "form explicit\nrank_nodes 0 1\nroute 0 1 0\nmsg 0 0 1 r 0 1 0\nend\n",
		 "does not implement allreduce: at the end rank 0's chunk 0 is wrong"},
		{"collc-ir 1\ntopology T ring dims 1 2 variant 0 nodes 2\nlink 0 1 0 1 1e9 0 0\n"
		 "link 1 0 0 1 1e9 0 0\nschedule A allreduce ring topology T ranks 2 chunks 1 rounds 3 "
		 "form explicit\nrank_nodes 0 1\nbarriers 2 2 1\nroute 0 1 0\nroute 1 1 1\n"
		 "msg 0 0 1 r 0 1 0\nmsg 1 1 0 c 1 1 0\nmsg 2 0 1 c 0 1 0\nend\n",
		 "barrier 2 (before round 2) is out of order or outside rounds 2..3"},
		{"collc-ir 1\ntopology T torus dims 2 3 3 variant 0 nodes 9\nlink 5 1 0 1 1e9 0 0\n"
		 "link 0 1 0 1 1e9 0 0\n", "x.collir:4:21: error: links must be in order of their source"},
	};
	for (size_t i = 0; i < countof(bad); i++) {
		Prog q;
		char *diag = NULL;
		int rc = read_back(dg, bad[i].text, &q, &diag);
		assert_named(rc != 0 && strstr(diag, bad[i].want), __LINE__, __FILE__,
		             "bad IR %zu: want '%s', got '%s'", i, bad[i].want, diag);
		free(diag);
		prog_free(&q);
	}
}

/* Damage a good IR file in ways a reader must not accept. */
static void
test_ir_reader_soundness(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	Prog p;
	char *ir = emit(dg, "topology T = torus(3, 3); group G on T { translate; map (x, y) -> (-x, -y); } "
	                "tree B = bfs(T, root 0); "
	                "collective reduce_scatter RS on T { algorithm symmetric(trees B, group G); }",
	                &ir_backend, (BuildOpts){0}, &p, &c);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ir);
	static const struct { const char *from, *to, *want; } cuts[] = {
		{"dims 2 3 3", "dims 2 3 4", "the topology's dims do not give its node count"},
		{"\nend\n", "\n", "the schedule has no 'end' line"},
		{"net 400000000000", "net nan", "x.collir:3:5: error: the bandwidth must be positive and finite"},
		{"owner 0 ", "owner 1 ", "chunk 0's owner is rank 1, not the rank at its tree's root"},
		{"generators 3", "generators 4", "generator count differs"},
	};
	for (size_t i = 0; i < countof(cuts); i++) {
		const char *at = strstr(ir, cuts[i].from);
		assert_named(at != NULL, __LINE__, __FILE__, "the IR has '%s'", cuts[i].from);
		if (!at)
			continue;
		size_t n = strlen(ir) + strlen(cuts[i].to) + 1;
		char *bad = malloc(n);
		snprintf(bad, n, "%.*s%s%s", (int)(at - ir), ir, cuts[i].to, at + strlen(cuts[i].from));
		Prog q;
		char *diag = NULL;
		int rc = read_back(dg, bad, &q, &diag);
		assert_named(rc != 0 && strstr(diag, cuts[i].want), __LINE__, __FILE__,
		             "damage %zu: want '%s', got '%s'", i, cuts[i].want, diag);
		free(diag);
		free(bad);
		prog_free(&q);
	}
	free(ir);
	prog_free(&p);
	checked_free(&c);
}

static void
test_dot(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	Prog p;
	char *dot = emit(dg, "topology T = torus(3, 3); group G on T { translate; } "
	                 "tree B = bfs(T, root 0); "
	                 "collective allreduce AR on T { algorithm symmetric(trees B, group G); }",
	                 &dot_backend, (BuildOpts){.tree_copy = 4}, &p, &c);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dot);
	CU_ASSERT_NSTRING_EQUAL(dot, "digraph \"T\" {", 13);
	CU_ASSERT_PTR_NOT_NULL(strstr(dot, "\"(1, 1)\" [pos=\"86,-86!\"];"));
	/* 36 directed links, drawn once per pair: 12 lines inside the grid, and
	 * the 6 wrap-around pairs as 2 stubs each, leaving the grid */
	int lines = 0, stubs = 0;
	for (const char *q = dot; (q = strstr(q, "\" -> \"")); q++)
		lines++;
	for (const char *q = dot; (q = strstr(q, "\" -> \"wrap")); q++)
		stubs++;
	CU_ASSERT_EQUAL(lines, 12 + 12 + 8);
	CU_ASSERT_EQUAL(stubs, 12);
	CU_ASSERT_PTR_NOT_NULL(strstr(dot, "\"(0, 0)\" -> \"wrap"));
	CU_ASSERT_PTR_NULL(strstr(dot, "\"(0, 0)\" -> \"(0, 2)\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(dot, "splines=curved;"));
	/* copy 4 is the base tree translated to (1, 1): (1, 2) hangs from (1, 1) */
	CU_ASSERT_PTR_NOT_NULL(strstr(dot, "\"(1, 2)\" -> \"(1, 1)\";"));
	CU_ASSERT_PTR_NOT_NULL(strstr(dot, "\"(1, 1)\" [style=filled, fillcolor=\"#ffcccc\"];"));
	free(dot);
	prog_free(&p);
	checked_free(&c);
	/* two base trees: one colour each; labels of 10x10 fit their circles */
	dot = emit(dg, "topology T = torus(10, 10); group G on T { translate; } "
	           "tree B = bfs(T, root 0); tree C = bfs(T, root 1); "
	           "collective allreduce AR on T { algorithm symmetric(trees B, C, group G); }",
	           &dot_backend, (BuildOpts){0}, &p, &c);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dot);
	CU_ASSERT_PTR_NOT_NULL(strstr(dot, "edge [color=red,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(dot, "edge [color=blue,"));
	/* "(0, 0)" is 6 characters: 46 pt wide, grid 86 pt */
	CU_ASSERT_PTR_NOT_NULL(strstr(dot, "width=0.64, fixedsize=true"));
	CU_ASSERT_PTR_NOT_NULL(strstr(dot, "\"(1, 1)\" [pos=\"86,-86!\"];"));
	free(dot);
	prog_free(&p);
	checked_free(&c);
	/* an optical ring's configurations: each draws the circuits it wires
	 * (node v to v + 1, then to v + 2 after the rewiring) */
	dot = emit(dg, "topology O = optical_ring(8, ports 16); "
	           "collective alltoall A on O { algorithm bridge(reconfigs 1); }",
	           &dot_backend, (BuildOpts){.collective = "A"}, &p, &c);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dot);
	int circuits = 0;
	for (const char *q = dot; (q = strstr(q, "\" -> \"")); q++)
		circuits++;
	CU_ASSERT_EQUAL(circuits, 8 + 8);
	CU_ASSERT_PTR_NOT_NULL(strstr(dot, "\t\t\"0:7\" -> \"0:0\";\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(dot, "\t\t\"1:7\" -> \"1:1\";\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(dot, "label=\"rounds 2..3 (rewired before)\";"));
	free(dot);
	prog_free(&p);
	checked_free(&c);
}

/* Whether two topologies are the same: name, form, shape, nodes, switches,
 * links in order with their parameters, network. Says what differs. */
static const char *
topo_differs(const Topo *a, const Topo *b)
{
	if (strcmp(a->name, b->name) != 0 || a->kind != b->kind)
		return "name or form";
	if (a->ndim != b->ndim || a->variant != b->variant || a->nnode != b->nnode ||
	    a->nrank != b->nrank || a->nlink != b->nlink)
		return "dims, variant, node, rank or link count";
	for (int i = 0; i < a->ndim; i++)
		if (a->size[i] != b->size[i])
			return "sizes";
	for (int v = 0; v < a->nnode; v++)
		if ((a->is_switch && a->is_switch[v]) != (b->is_switch && b->is_switch[v]))
			return "switches";
	for (int i = 0; i < a->nlink; i++) {
		const Link *x = &a->link[i], *y = &b->link[i];
		if (x->src != y->src || x->dst != y->dst || x->dim != y->dim || x->dir != y->dir ||
		    x->copy != y->copy || x->bandwidth != y->bandwidth || x->latency != y->latency ||
		    x->energy_per_bit != y->energy_per_bit)
			return "a link";
	}
	return memcmp(&a->net, &b->net, sizeof a->net) != 0 ? "network" : NULL;
}

/* Every form of the registry, from one declaration each (topo_form_decl):
 * parsed, checked, printed by fmt and checked again to the same tree,
 * lowered, written as IR text, read back to the same topology, written
 * again to the same text. A form missing from any step fails here. */
static void
test_ir_every_form(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* and the forms that take a box from a file (registry.h's topo_sources) */
#define IBM "nccl_topo(\"tests/fixtures/nccl-topo/ibm-h100-topo.xml\")"
	const char *const box_decl[] = {IBM, "rails(boxes 2, box " IBM ")",
	                                "leaf_spine_boxes(boxes 2, box " IBM ", spines 2)"};
#undef IBM
	for (int t = 0; t < NTOPOKIND + (int)countof(box_decl); t++) {
		const char *decl = t < NTOPOKIND ? topo_form_decl[t] : box_decl[t - NTOPOKIND];
		char *text = NULL;
		size_t tlen;
		FILE *f = open_memstream(&text, &tlen);
		fprintf(f, "topology T = %s;\ncollective allgather X on T {\n    algorithm ring;\n}\n",
		        decl);
		fclose(f);
		Checked c, again;
		Prog p, q = {0};
		char *ir = emit(dg, text, &ir_backend, (BuildOpts){0}, &p, &c);
		assert_named(ir != NULL, __LINE__, __FILE__, "%s builds: %s", decl, c.diag);
		char *canon = c.errors ? NULL : fmt_string(c.file);
		check_str(dg, &again, canon ? canon : "");
		assert_named(canon && again.errors == 0 && ast_equal(c.file, again.file), __LINE__,
		             __FILE__, "%s: fmt prints what reads back as the same file", decl);
		char *diag = NULL, *ir2 = NULL;
		int rc = ir ? read_back(dg, ir, &q, &diag) : -1;
		assert_named(rc == 0 && q.ntopo == 1 && p.ntopo == 1, __LINE__, __FILE__,
		             "%s reads back: %s", decl, diag ? diag : "");
		const char *why = rc == 0 && q.ntopo == 1 ? topo_differs(p.topo[0], q.topo[0]) : "unread";
		assert_named(!why, __LINE__, __FILE__, "%s: the topology read back differs (%s)",
		             decl, why ? why : "");
		if (rc == 0) {
			size_t len;
			FILE *mem = open_memstream(&ir2, &len);
			BuildOpts o = {0};
			ir_backend.emit(dg, &q, &o, mem);
			fclose(mem);
		}
		assert_named(ir && ir2 && strcmp(ir, ir2) == 0, __LINE__, __FILE__,
		             "%s: IR -> read -> IR is identical", decl);
		prog_free(&q);
		free(ir2);
		free(diag);
		free(ir);
		free(canon);
		checked_free(&again);
		prog_free(&p);
		checked_free(&c);
		free(text);
	}
}

CU_TestInfo backend_tests[] = {
	{"IR text: every topology form round-trips (fmt, lower, write, read, write), boxes from files too",
	 test_ir_every_form},
	{"IR text: write, read back, verify, same metrics", test_ir_round_trip},
	{"IR text: damaged files", test_ir_reader_errors},
	{"IR text: what the proof stands on is checked", test_ir_reader_soundness},
	{"DOT: topology, a tree copy, optical configurations", test_dot},
	CU_TEST_INFO_NULL,
};
