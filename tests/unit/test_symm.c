/*
 * test_symm.c: tree symmetrization end to end, from .coll text to verified
 * schedules with the metrics algorithms.md derives (section numbers below).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "tests.h"

static bool
near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(1, fmax(fabs(a), fabs(b)));
}
#define NEAR(a, b) near((a), (b))

/* Compiles text into a Prog; returns its diagnostics (malloc'd) in *diag. */
static int
build(const char *text, Checked *c, Prog *p)
{
	memset(p, 0, sizeof *p);
	check_str(c, text);
	if (c->errors)
		return -1;
	size_t len;
	char *more = NULL;
	FILE *mem = open_memstream(&more, &len);
	diag_stream(mem);
	diag_source("t.coll", text, strlen(text));
	int rc = lower(c->file, p);
	for (int i = 0; rc == 0 && i < p->nsched; i++)
		rc = verify(p->sched[i]);
	diag_stream(NULL);
	fclose(mem);
	diag_reset();
	free(c->diag);
	c->diag = more;
	return rc;
}

/* build, and the first schedule's metrics at 1 MiB (all zero if it fails). */
static int
build_measured(const char *text, Checked *c, Prog *p, Metrics *m)
{
	int rc = build(text, c, p);
	*m = (Metrics){0};
	if (rc == 0)
		metrics(p->sched[0], 1 << 20, m);
	return rc;
}

static void
done(Checked *c, Prog *p)
{
	prog_free(p);
	checked_free(c);
}

static void
sp_case(int d, int n)
{
	static const char *const swap[] = {"", "(x) -> (x)", "(x, y) -> (y, x)",
	                                   "(x, y, z) -> (y, z, x)", "(x, y, z, w) -> (y, z, w, x)"};
	static const char *const neg[] = {"", "(x) -> (-x)", "(x, y) -> (-x, -y)",
	                                  "(x, y, z) -> (-x, -y, -z)",
	                                  "(x, y, z, w) -> (-x, -y, -z, -w)"};
	char text[512], sizes[64] = "", root[32] = "0";
	for (int i = 0; i < d; i++)
		sprintf(sizes + strlen(sizes), "%s%d", i ? ", " : "", n);
	snprintf(text, sizeof text,
	         "topology T = torus(%s);\n"
	         "group G on T { translate; map %s; map %s; }\n"
	         "tree B = bfs(T, root %s);\n"
	         "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n",
	         sizes, neg[d], swap[d], root);
	Checked c;
	Prog p;
	Metrics m;
	int rc = build_measured(text, &c, &p, &m);
	long p_ = 1;
	for (int i = 0; i < d; i++)
		p_ *= n;
	const Sched *s = rc == 0 ? p.sched[0] : NULL;
	assert_named(rc == 0 && m.rounds == 2 * d * (n / 2) && s->nchunk == 2 * d * p_ &&
	             NEAR(m.psi, 1) && NEAR(m.theta, 1) && NEAR(m.omega, 1) &&
	             s->group->order == 2 * d * p_ && s->group->nlink_orbits == 1,
	             __LINE__, __FILE__,
	             "SP on T_%d^%d: rounds %d (want %d), chunks %d, psi %g theta %g omega %g, "
	             "order %d, orbits %d %s", n, d, m.rounds, 2 * d * (n / 2), s ? s->nchunk : -1,
	             m.psi, m.theta, m.omega, s ? s->group->order : -1,
	             s ? s->group->nlink_orbits : -1, c.diag);
	done(&c, &p);
}

static void
test_sp_tori(void)
{
	for (int n = 3; n <= 10; n++)
		sp_case(2, n);
	for (int n = 3; n <= 6; n++)
		sp_case(3, n);
	for (int n = 3; n <= 5; n++)
		sp_case(4, n);
}

static void
rect_case(int m, int n, int want_rounds)
{
	char text[512];
	snprintf(text, sizeof text,
	         "topology T = torus(%d, %d);\n"
	         "group G on T { translate; map (x, y) -> (-x, -y); }\n"
	         "trees P = balanced_pair(T, root (0, 0));\n"
	         "collective allreduce AR on T { algorithm symmetric(trees P, group G); }\n", m, n);
	Checked c;
	Prog p;
	int rc = build(text, &c, &p);
	Metrics mt = {0};
	if (rc == 0)
		metrics(p.sched[0], 1 << 20, &mt);
	assert_named(rc == 0 && mt.rounds == want_rounds && NEAR(mt.psi, 1) && NEAR(mt.theta, 1) &&
	             NEAR(mt.omega, 1) && p.sched[0]->nchunk == 4 * m * n,
	             __LINE__, __FILE__, "rectangle %dx%d: rounds %d (want %d), psi %g theta %g "
	             "omega %g %s", m, n, mt.rounds, want_rounds, mt.psi, mt.theta, mt.omega, c.diag);
	done(&c, &p);
}

static void
test_rectangles(void)
{
	static const int shapes[][2] = {{3, 4}, {3, 5}, {4, 6}, {5, 8}, {6, 4}, {7, 3}, {4, 16},
	                                {3, 3}, {5, 7}, {8, 4}, {9, 3}};
	for (size_t i = 0; i < countof(shapes); i++)
		rect_case(shapes[i][0], shapes[i][1], 2 * (shapes[i][0] / 2 + shapes[i][1] / 2));
	rect_case(64, 16, 80);
	rect_case(128, 8, 136);
	rect_case(256, 4, 260);
}

static void
test_hyperx_windmill(void)
{
	for (int n = 3; n <= 8; n++) {
		char text[512];
		snprintf(text, sizeof text,
		         "topology H = hyperx(%d, %d);\n"
		         "group G on H { translate; map (x, y) -> (-y, x); }\n"
		         "tree W = windmill(H, root (0, 0));\n"
		         "collective allreduce AR on H { algorithm symmetric(trees W, group G); }\n",
		         n, n);
		Checked c;
		Prog p;
		Metrics m;
		int rc = build_measured(text, &c, &p, &m);
		assert_named(rc == 0 && m.rounds == 4 && NEAR(m.psi, 1) && NEAR(m.theta, 1) &&
		             NEAR(m.omega, 1), __LINE__, __FILE__,
		             "windmill on hyperx(%d, %d): rounds %d, psi %g theta %g omega %g %s", n, n,
		             m.rounds, m.psi, m.theta, m.omega, c.diag);
		done(&c, &p);
	}
}

/* The 4x4 windmill of algorithms.md 8.7, parent by parent. */
static void
test_windmill_4x4(void)
{
	Arena a = {0};
	int size[2] = {4, 4};
	Topo *t = topo_new(&a, TK_HYPERX, "H", 2, size, 0, net_defaults);
	Tree *w = tree_windmill(&a, t, 0);
	static const int child[][2] = {{1, 1}, {1, 2}, {1, 3}, {2, 1}, {2, 2}, {2, 3}, {3, 1},
	                               {3, 2}, {3, 3}};
	static const int parent[][2] = {{0, 1}, {0, 2}, {1, 0}, {0, 1}, {0, 2}, {2, 0}, {3, 0},
	                                {3, 0}, {0, 3}};
	for (size_t i = 0; i < countof(child); i++)
		assert_named(w->parent[topo_node(t, child[i])] == topo_node(t, parent[i]), __LINE__,
		             __FILE__, "windmill 4x4: (%d, %d) -> (%d, %d)", child[i][0], child[i][1],
		             parent[i][0], parent[i][1]);
	CU_ASSERT_EQUAL(w->height, 2);
	arena_free(&a);
}

static void
test_forest(void)
{
	static const int ns[] = {4, 6, 8};
	for (size_t i = 0; i < countof(ns); i++) {
		int n = ns[i];
		char text[512];
		snprintf(text, sizeof text,
		         "topology T = torus(%d, %d);\n"
		         "group G on T { translate; map (x, y) -> (-x, -y); map (x, y) -> (y, x); }\n"
		         "tree F = forest(T, roots (0, 0), (1, 0));\n"
		         "collective allreduce AR on T { algorithm symmetric(trees F, group G); }\n",
		         n, n);
		Checked c;
		Prog p;
		Metrics m;
		int rc = build_measured(text, &c, &p, &m);
		int H = 2 * (n / 2);
		assert_named(rc == 0 && m.rounds == 2 * H - 1 && NEAR(m.psi, 1) && NEAR(m.theta, 1) &&
		             NEAR(m.omega, 1), __LINE__, __FILE__,
		             "forest on %dx%d: rounds %d (want %d), psi %g theta %g omega %g %s", n, n,
		             m.rounds, 2 * H - 1, m.psi, m.theta, m.omega, c.diag);
		done(&c, &p);
	}
}

static void
test_khop(void)
{
	/* algorithms.md 8.5: W(T) on 8x8 by the compression heuristic */
	static const int k[] = {1, 2, 3, 4, 5, 6, 8};
	static const long W[] = {256, 156, 115, 94, 84, 78, 63};
	for (size_t i = 0; i < countof(k); i++) {
		char text[512];
		snprintf(text, sizeof text,
		         "topology T = torus(8, 8);\n"
		         "group G on T { translate; map (x, y) -> (-x, -y); map (x, y) -> (y, x); }\n"
		         "tree K = khop(T, root (0, 0), depth %d);\n"
		         "collective allreduce AR on T { algorithm symmetric(trees K, group G); }\n",
		         k[i]);
		Checked c;
		Prog p;
		Metrics m;
		int rc = build_measured(text, &c, &p, &m);
		const Tree *t = rc == 0 ? p.sched[0]->tree[0] : NULL;
		assert_named(rc == 0 && t->height <= k[i] && m.rounds == 2 * t->height &&
		             t->weight == W[i] && NEAR(m.theta, (double)W[i] / 63) &&
		             NEAR(m.psi, 1) && NEAR(m.omega, 1), __LINE__, __FILE__,
		             "8x8 %d-SP: depth %d, rounds %d, W %ld (want %ld), theta %g, omega %g %s",
		             k[i], t ? t->height : -1, m.rounds, t ? t->weight : -1, W[i], m.theta,
		             m.omega, c.diag);
		done(&c, &p);
	}
}

/* Expanding a symmetric schedule gives the same verdict and the same numbers. */
static void
test_expansion_agrees(void)
{
	static const char *const cases[] = {
		"topology T = torus(4, 4); group G on T { translate; map (x, y) -> (-x, -y); "
		"map (x, y) -> (y, x); } tree B = bfs(T, root 0);",
		"topology T = torus(3, 4); group G on T { translate; map (x, y) -> (-x, -y); } "
		"trees B = balanced_pair(T, root 0);",
		"topology T = torus(4, 4); group G on T { translate; map (x, y) -> (-x, -y); "
		"map (x, y) -> (y, x); } tree B = forest(T, roots 0, 4);",
		"topology T = torus(6, 6); group G on T { translate; map (x, y) -> (-x, -y); "
		"map (x, y) -> (y, x); } tree B = khop(T, root 0, depth 2);",
		"topology H = hyperx(4, 4); group G on H { translate; map (x, y) -> (-y, x); } "
		"tree B = windmill(H, root 0);",
		"topology F = spine_leaf(spines 3, leaves 4, hosts 3); group G on F { translate; } "
		"tree B = bfs(F, root 0);",
		"topology T = torus(4, 4); group G on T { translate; } tree B = bfs(T, root 0);",
		"topology R = ring(6); group G = automorphisms(R); tree B = bfs(R, root 0);",
	};
	static const char *const kinds[] = {"allreduce", "reduce_scatter", "allgather"};
	for (size_t i = 0; i < countof(cases); i++)
		for (size_t k = 0; k < countof(kinds); k++) {
			char text[1024];
			const char *topo = strstr(cases[i], "topology ") + 9;
			snprintf(text, sizeof text, "%s\ncollective %s X on %c { algorithm symmetric(trees B, "
			         "group G); }\n", cases[i], kinds[k], topo[0]);
			Checked c;
			Prog p;
			int rc = build(text, &c, &p);
			assert_named(rc == 0, __LINE__, __FILE__, "case %zu %s: %s", i, kinds[k], c.diag);
			if (rc != 0) {
				done(&c, &p);
				continue;
			}
			Arena a = {0};
			Sched *x = sched_expand(&a, p.sched[0]);
			Metrics ms, mx;
			metrics(p.sched[0], 3 << 20, &ms);
			metrics(x, 3 << 20, &mx);
			size_t len;
			char *d2 = NULL;
			FILE *mem = open_memstream(&d2, &len);
			diag_stream(mem);
			int vx = verify(x);
			diag_stream(NULL);
			fclose(mem);
			diag_reset();
			assert_named(vx == 0 && ms.rounds == mx.rounds && ms.messages == mx.messages &&
			             NEAR(ms.volume, mx.volume) && NEAR(ms.psi, mx.psi) &&
			             NEAR(ms.theta, mx.theta) && NEAR(ms.omega, mx.omega) &&
			             NEAR(ms.model_time, mx.model_time), __LINE__, __FILE__,
			             "case %zu %s: symmetric rounds %d msgs %ld vol %g psi %g theta %g omega %g "
			             "time %g, expanded rounds %d msgs %ld vol %g psi %g theta %g omega %g "
			             "time %g %s", i, kinds[k], ms.rounds, ms.messages, ms.volume, ms.psi,
			             ms.theta, ms.omega, ms.model_time, mx.rounds, mx.messages, mx.volume,
			             mx.psi, mx.theta, mx.omega, mx.model_time, d2);
			free(d2);
			arena_free(&a);
			done(&c, &p);
		}
}

/* algorithms.md 8.8: q = 4 spines and hosts per leaf, l = 8 leaves. Every host
 * up-link carries (q-1)(l-1) chunks in reduce round 1 and q+l-2 in round 2.
 * The bfs tree keeps round 1 within the leaves (no leaf-to-spine link used) and
 * crosses the spines only in round 2, l-1 chunks on every leaf-to-spine link:
 * W(T) = 2(p-1) + 2(l-1) = 76 hops, the least of any spanning tree. */
static void
test_spine_leaf(void)
{
	const char *text = "topology F = spine_leaf(spines 4, leaves 8, hosts 4);\n"
	                   "group G on F { translate; }\n"
	                   "tree B = bfs(F, root (0, 0));\n"
	                   "collective allreduce AR on F { algorithm symmetric(trees B, group G); }\n";
	Checked c;
	Prog p;
	int rc = build(text, &c, &p);
	assert_named(rc == 0, __LINE__, __FILE__, "spine-leaf builds: %s", c.diag);
	if (rc != 0) {
		done(&c, &p);
		return;
	}
	const Sched *s = p.sched[0];
	CU_ASSERT_EQUAL(s->nround, 4);
	CU_ASSERT_EQUAL(s->nchunk, 32);
	Arena a = {0};
	Sched *x = sched_expand(&a, s);
	const Topo *t = s->topo;
	int bad = 0;
	for (int r = 0; r < 2; r++) {
		int *load = calloc((size_t)t->nlink, sizeof *load);
		for (int i = 0; i < x->nmsg; i++) {
			if (x->msg[i].round != r)
				continue;
			for (int k = x->route_off[x->msg[i].route]; k < x->route_off[x->msg[i].route + 1]; k++)
				load[x->route_link[k]] += x->msg[i].n;
		}
		int want = r == 0 ? 3 * 7 : 4 + 8 - 2, want_spine = r == 0 ? 0 : 8 - 1;
		int spine0 = t->nrank + 8; /* hosts, then the 8 leaves, then the spines */
		for (int l = 0; l < t->nlink; l++)
			if (t->link[l].src < t->nrank)
				bad += load[l] != want;
			else if (t->link[l].dst >= spine0)
				bad += load[l] != want_spine;
		free(load);
	}
	CU_ASSERT_EQUAL(bad, 0);
	Metrics m;
	metrics(s, 1 << 20, &m);
	CU_ASSERT(NEAR(m.theta, 76.0 / 31.0));
	arena_free(&a);
	done(&c, &p);
}

/* An allreduce on ranks 0..7 of a 4x4 torus (a 2x4 box) over one tree,
 * symmetrized by the group with the given generators. */
static int
build_box(const char *generators, Checked *c, Prog *p)
{
	char text[512];
	snprintf(text, sizeof text, "topology T = torus(4, 4);\n"
	         "group G on T { %s }\n"
	         "tree E on T root 0 { 1 -> 0; 2 -> 1; 3 -> 0; 4 -> 0; 5 -> 4; 6 -> 5; 7 -> 4; }\n"
	         "collective allreduce AR on T { algorithm symmetric(trees E, group G); "
	         "ranks 0..7; }\n", generators);
	return build(text, c, p);
}

static void
test_sub_communicator(void)
{
	/* the translations of a 4x4 torus move rank 0..7's rows: not allowed */
	Checked c;
	Prog p;
	int rc = build_box("translate;", &c, &p);
	CU_ASSERT_EQUAL(rc, -1);
	ASSERT_DIAG(&c, "t.coll:4:61: error: group 'G' moves node (");
	ASSERT_DIAG(&c, "of 'AR' to node (2, 0), outside its ranks");
	done(&c, &p);
	/* the same ranks with a group that keeps them: translations along y only */
	rc = build_box("translate (0, 1); map (x, y) -> (1 - x, y);", &c, &p);
	assert_named(rc == 0, __LINE__, __FILE__, "a 2x4 box of a 4x4 torus: %s", c.diag);
	done(&c, &p);
	/* a tree that misses a rank of the collective */
	rc = build("topology T = torus(3, 3);\n"
	           "group G on T { translate; }\n"
	           "tree E on T root 0 { 1 -> 0; 2 -> 0; }\n"
	           "collective allreduce AR on T { algorithm symmetric(trees E, group G); }\n", &c, &p);
	CU_ASSERT_EQUAL(rc, -1);
	ASSERT_DIAG(&c, "t.coll:4:52: error: tree 'E' does not span the ranks of 'AR': node (1, 0) "
	                "is not in it");
	done(&c, &p);
}

/* Two groups whose messages a shortcut could miscount: expanded and compact agree. */
static void
test_message_counts(void)
{
	static const char *const cases[] = {
		"topology T = torus(4, 4); group G on T { map (x, y) -> (1 - x, y); "
		"map (x, y) -> (x, 1 - y); translate (2, 0); translate (0, 2); } "
		"tree A = bfs(T, root (0, 0)); tree B = bfs(T, root (1, 0)); "
		"collective allreduce X on T { algorithm symmetric(trees A, B, group G); }",
		"network { link_bandwidth = 100 Gbps; } topology T = torus(4, 4); group G on T { translate; } "
		"tree A = bfs(T, root (0, 0)); "
		"collective allreduce X on T { algorithm symmetric(trees A, group G); }",
	};
	for (size_t i = 0; i < countof(cases); i++) {
		Checked c;
		Prog p;
		int rc = build(cases[i], &c, &p);
		assert_named(rc == 0, __LINE__, __FILE__, "case %zu: %s", i, c.diag);
		if (rc == 0) {
			Arena a = {0};
			Sched *x = sched_expand(&a, p.sched[0]);
			Metrics ms, mx;
			metrics(p.sched[0], 1 << 20, &ms);
			metrics(x, 1 << 20, &mx);
			assert_named(ms.messages == mx.messages, __LINE__, __FILE__,
			             "case %zu: %ld messages, expanded %ld", i, ms.messages, mx.messages);
			arena_free(&a);
		}
		done(&c, &p);
	}
}

/* The network block is file-wide, even below the topologies. */
static void
test_network_file_wide(void)
{
	Checked c;
	Prog p;
	int rc = build("topology R = ring(3);\nnetwork { link_bandwidth = 100 Gbps; }\n", &c, &p);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT(p.ntopo == 1 && p.topo[0]->net.bandwidth == 100e9 &&
	          p.topo[0]->link[0].bandwidth == 100e9);
	done(&c, &p);
}

/* `include` brings every generator of the included group: translations(T)
 * (one generator standing for all 16 translations) with the reflection and
 * the swap give 16 x 4 = 64 elements; without it, 4. */
static void
test_group_include(void)
{
	Checked c;
	Prog p;
	int rc = build("topology T = torus(4, 4);\n"
	               "group Tr = translations(T);\n"
	               "group G on T {\n    include Tr;\n    map (x, y) -> (-x, -y);\n"
	               "    map (x, y) -> (y, x);\n}\n"
	               "tree K = khop(T, root (0, 0), depth 4);\n"
	               "collective allreduce A on T {\n    algorithm symmetric(trees K, group G);\n}\n",
	               &c, &p);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_EQUAL_FATAL(p.nsched, 1);
	assert_named(p.sched[0]->group->order == 64, __LINE__, __FILE__, "order %d, not 64",
	             p.sched[0]->group->order);
	CU_ASSERT_EQUAL(p.sched[0]->nchunk, 64);
	done(&c, &p);
}

CU_TestInfo symm_tests[] = {
	{"include brings every generator of the group", test_group_include},
	{"message counts of partial translation groups", test_message_counts},
	{"the network block is file-wide", test_network_file_wide},
	{"SP on T_n^d (d = 2, 3, 4)", test_sp_tori},
	{"rectangular tori: balanced pairs", test_rectangles},
	{"HyperX windmill, n = 3..8", test_hyperx_windmill},
	{"the 4x4 windmill tree", test_windmill_4x4},
	{"the 2H-1 forest", test_forest},
	{"k-SP: depth, rounds, W(T), theta", test_khop},
	{"expansion agrees with the symmetric form", test_expansion_agrees},
	{"spine-leaf host links", test_spine_leaf},
	{"sub-communicators and spanning", test_sub_communicator},
	CU_TEST_INFO_NULL,
};
