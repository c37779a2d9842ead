/*
 * test_symm.c: tree symmetrization end to end, from .coll text to verified
 * schedules with the metrics algorithms.md derives (section numbers below).
 */
#include <glob.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "ir.h"
#include "tests.h"

#define NEAR(a, b) near_rel((a), (b), 1e-9)

/* build, and the first schedule's metrics at 1 MiB (all zero if it fails). */
static int
build_measured(Diag *dg, const char *text, Checked *c, Prog *p, Metrics *m)
{
	int rc = lower_str(dg, text, 0, c, p);
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
sp_case(Diag *dg, int d, int n)
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
	int rc = build_measured(dg, text, &c, &p, &m);
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
	Diag dgv = diag_new(), *dg = &dgv;
	for (int n = 3; n <= 10; n++)
		sp_case(dg, 2, n);
	for (int n = 3; n <= 6; n++)
		sp_case(dg, 3, n);
	for (int n = 3; n <= 5; n++)
		sp_case(dg, 4, n);
}

static void
rect_case(Diag *dg, int m, int n, int want_rounds)
{
	char text[512];
	snprintf(text, sizeof text,
	         "topology T = torus(%d, %d);\n"
	         "group G on T { translate; map (x, y) -> (-x, -y); }\n"
	         "trees P = balanced_pair(T, root (0, 0));\n"
	         "collective allreduce AR on T { algorithm symmetric(trees P, group G); }\n", m, n);
	Checked c;
	Prog p;
	int rc = lower_str(dg, text, 0, &c, &p);
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
	Diag dgv = diag_new(), *dg = &dgv;
	static const int shapes[][2] = {{3, 4}, {3, 5}, {4, 6}, {5, 8}, {6, 4}, {7, 3}, {4, 16},
	                                {3, 3}, {5, 7}, {8, 4}, {9, 3}};
	for (size_t i = 0; i < countof(shapes); i++)
		rect_case(dg, shapes[i][0], shapes[i][1], 2 * (shapes[i][0] / 2 + shapes[i][1] / 2));
	rect_case(dg, 64, 16, 80);
	rect_case(dg, 128, 8, 136);
	rect_case(dg, 256, 4, 260);
}

static void
test_hyperx_windmill(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
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
		int rc = build_measured(dg, text, &c, &p, &m);
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
	Diag dgv = diag_new(), *dg = &dgv;
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
		int rc = build_measured(dg, text, &c, &p, &m);
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
	Diag dgv = diag_new(), *dg = &dgv;
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
		int rc = build_measured(dg, text, &c, &p, &m);
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
	Diag dgv = diag_new(), *dg = &dgv;
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
			int rc = lower_str(dg, text, 0, &c, &p);
			assert_named(rc == 0, __LINE__, __FILE__, "case %zu %s: %s", i, kinds[k], c.diag);
			if (rc != 0) {
				done(&c, &p);
				continue;
			}
			Arena a = {0};
			Sched *x = sched_expand(dg, &a, p.sched[0]);
			Metrics ms, mx;
			metrics(p.sched[0], 3 << 20, &ms);
			metrics(x, 3 << 20, &mx);
			size_t len;
			char *d2 = NULL;
			FILE *mem = open_memstream(&d2, &len);
			diag_stream(dg, mem);
			int vx = verify(dg, x);
			diag_stream(dg, NULL);
			fclose(mem);
			diag_reset(dg);
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
	Diag dgv = diag_new(), *dg = &dgv;
	const char *text = "topology F = spine_leaf(spines 4, leaves 8, hosts 4);\n"
	                   "group G on F { translate; }\n"
	                   "tree B = bfs(F, root (0, 0));\n"
	                   "collective allreduce AR on F { algorithm symmetric(trees B, group G); }\n";
	Checked c;
	Prog p;
	int rc = lower_str(dg, text, 0, &c, &p);
	assert_named(rc == 0, __LINE__, __FILE__, "spine-leaf builds: %s", c.diag);
	if (rc != 0) {
		done(&c, &p);
		return;
	}
	const Sched *s = p.sched[0];
	CU_ASSERT_EQUAL(s->nround, 4);
	CU_ASSERT_EQUAL(s->nchunk, 32);
	Arena a = {0};
	Sched *x = sched_expand(dg, &a, s);
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
build_box(Diag *dg, const char *generators, Checked *c, Prog *p)
{
	char text[512];
	snprintf(text, sizeof text, "topology T = torus(4, 4);\n"
	         "group G on T { %s }\n"
	         "tree E on T root 0 { 1 -> 0; 2 -> 1; 3 -> 0; 4 -> 0; 5 -> 4; 6 -> 5; 7 -> 4; }\n"
	         "collective allreduce AR on T { algorithm symmetric(trees E, group G); "
	         "ranks 0..7; }\n", generators);
	return lower_str(dg, text, 0, c, p);
}

static void
test_sub_communicator(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* the translations of a 4x4 torus move rank 0..7's rows: not allowed */
	Checked c;
	Prog p;
	int rc = build_box(dg, "translate;", &c, &p);
	CU_ASSERT_EQUAL(rc, -1);
	ASSERT_DIAG(&c, "t.coll:4:61: error: group 'G' moves node (");
	ASSERT_DIAG(&c, "of 'AR' to node (2, 0), outside its ranks");
	done(&c, &p);
	/* the same ranks with a group that keeps them: translations along y only */
	rc = build_box(dg, "translate (0, 1); map (x, y) -> (1 - x, y);", &c, &p);
	assert_named(rc == 0, __LINE__, __FILE__, "a 2x4 box of a 4x4 torus: %s", c.diag);
	done(&c, &p);
	/* a tree that misses a rank of the collective */
	rc = lower_str(dg, "topology T = torus(3, 3);\n"
	           "group G on T { translate; }\n"
	           "tree E on T root 0 { 1 -> 0; 2 -> 0; }\n"
	           "collective allreduce AR on T { algorithm symmetric(trees E, group G); }\n", 0, &c, &p);
	CU_ASSERT_EQUAL(rc, -1);
	ASSERT_DIAG(&c, "t.coll:4:52: error: tree 'E' does not span the ranks of 'AR': node (1, 0) "
	                "is not in it");
	done(&c, &p);
}

/* Two groups whose messages a shortcut could miscount: expanded and compact agree. */
static void
test_message_counts(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
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
		int rc = lower_str(dg, cases[i], 0, &c, &p);
		assert_named(rc == 0, __LINE__, __FILE__, "case %zu: %s", i, c.diag);
		if (rc == 0) {
			Arena a = {0};
			Sched *x = sched_expand(dg, &a, p.sched[0]);
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
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	Prog p;
	int rc = lower_str(dg, "topology R = ring(3);\nnetwork { link_bandwidth = 100 Gbps; }\n", 0, &c, &p);
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
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	Prog p;
	int rc = lower_str(dg, "topology T = torus(4, 4);\n"
	               "group Tr = translations(T);\n"
	               "group G on T {\n    include Tr;\n    map (x, y) -> (-x, -y);\n"
	               "    map (x, y) -> (y, x);\n}\n"
	               "tree K = khop(T, root (0, 0), depth 4);\n"
	               "collective allreduce A on T {\n    algorithm symmetric(trees K, group G);\n}\n",
	               0, &c, &p);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_EQUAL_FATAL(p.nsched, 1);
	assert_named(p.sched[0]->group->order == 64, __LINE__, __FILE__, "order %d, not 64",
	             p.sched[0]->group->order);
	CU_ASSERT_EQUAL(p.sched[0]->nchunk, 64);
	done(&c, &p);
}


/* ---- the proof by symmetry against the expansion (verify_full.c) ---- */

/* Runs f(s) with the diagnostics captured in *diag (malloc'd). */
static int
captured(Diag *dg, int (*f)(Diag *, const Sched *), const Sched *s, char **diag)
{
	size_t len;
	*diag = NULL;
	FILE *mem = open_memstream(diag, &len);
	diag_stream(dg, mem);
	int rc = f(dg, s);
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
	return rc;
}

/* The expansion's chunks on every link in round r, counted here from its
 * messages [*next, end of round r) (sorted by round), against
 * sym_round_loads'. The number of links that differ. */
static int
loads_differ(const Sched *s, const Sched *x, const BaseRounds *br, int r, int *next)
{
	const Topo *t = s->topo;
	long *orbit = calloc((size_t)s->group->nlink_orbits, sizeof *orbit);
	long *load = calloc((size_t)t->nlink, sizeof *load);
	sym_round_loads(s, br, r, orbit);
	int i = *next;
	for (; i < x->nmsg && x->msg[i].round == r; i++)
		for (int k = 0; k < sched_route_len(x, x->msg[i].route); k++)
			load[x->route_link[x->route_off[x->msg[i].route] + k]] += x->msg[i].n;
	*next = i;
	int bad = 0;
	for (int l = 0; l < t->nlink; l++)
		bad += load[l] != orbit[s->group->link_orbit[l]];
	free(orbit), free(load);
	return bad;
}

/* One symmetric schedule of an example: both proofs accept it, and the
 * expansion's rounds, messages, figures and per-link loads in every round
 * are the ones the symmetric form gives. */
static void
orbit_agrees(Diag *dg, const char *path, const Sched *s)
{
	char *d1, *d2;
	int vo = captured(dg, verify, s, &d1), vf = captured(dg, verify_full, s, &d2);
	assert_named(vo == 0 && vf == 0, __LINE__, __FILE__, "%s '%s': by symmetry %d (%s), "
	             "expanded %d (%s)", path, s->name, vo, d1, vf, d2);
	free(d1), free(d2);
	Arena a = {0};
	const Sched *x = sched_expand(dg, &a, s);
	Metrics ms, mx;
	metrics(s, 1 << 20, &ms);
	metrics(x, 1 << 20, &mx);
	assert_named(ms.rounds == mx.rounds && ms.messages == mx.messages &&
	             NEAR(ms.volume, mx.volume) && NEAR(ms.psi, mx.psi) &&
	             NEAR(ms.theta, mx.theta) && NEAR(ms.omega, mx.omega) &&
	             NEAR(ms.model_time, mx.model_time), __LINE__, __FILE__,
	             "%s '%s': symmetric %d rounds %ld messages omega %g, expanded %d %ld %g", path,
	             s->name, ms.rounds, ms.messages, ms.omega, mx.rounds, mx.messages, mx.omega);
	BaseRounds br;
	base_rounds(s, &br);
	for (int r = 0, next = 0; r < s->nround; r++) {
		int bad = loads_differ(s, x, &br, r, &next);
		assert_named(bad == 0, __LINE__, __FILE__, "%s '%s' round %d: %d links' loads differ",
		             path, s->name, r + 1, bad);
	}
	base_rounds_free(&br);
	arena_free(&a);
}

/* The whole output of a command line (stdout and its status; stderr
 * dropped), malloc'd. */
static char *
run_collc(const char *args, int *status)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", COLLC_BIN, args);
	FILE *f = popen(cmd, "r");
	char *out = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&out, &len);
	int ch;
	while (f && (ch = fgetc(f)) != EOF)
		fputc(ch, mem);
	fclose(mem);
	*status = f ? pclose(f) : -1;
	return out;
}

/* collc check prints the same with and without --full-verify. */
static void
check_output_same(const char *path)
{
	static const char *const modes[] = {"", "--json "};
	for (size_t k = 0; k < countof(modes); k++) {
		char a[512], b[512];
		snprintf(a, sizeof a, "check %s%s", modes[k], path);
		snprintf(b, sizeof b, "check --full-verify %s%s", modes[k], path);
		int sa, sb;
		char *oa = run_collc(a, &sa), *ob = run_collc(b, &sb);
		assert_named(sa == 0 && sb == 0 && strcmp(oa, ob) == 0 && strstr(oa, "group"),
		             __LINE__, __FILE__, "%s: 'collc %s' (status %d)\n%s\n'collc %s' (status "
		             "%d)\n%s", path, a, sa, oa, b, sb, ob);
		free(oa), free(ob);
	}
}

static void
test_orbit_vs_full_examples(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	glob_t g;
	CU_ASSERT_EQUAL_FATAL(glob("examples/*.coll", 0, NULL, &g), 0);
	int nsym = 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		size_t len;
		char *text = slurp(g.gl_pathv[i], &len);
		Checked c;
		Prog p;
		int rc = lower_str(dg, text, 0, &c, &p);
		assert_named(rc == 0, __LINE__, __FILE__, "%s: %s", g.gl_pathv[i], c.diag);
		bool any = false;
		for (int j = 0; rc == 0 && j < p.nsched; j++)
			if (p.sched[j]->base && p.sched[j]->group &&
			    /* the two largest (2^23 copies) take minutes under ASAN */
			    !(UNDER_ASAN && (long)p.sched[j]->nbase * p.sched[j]->group->order > 1 << 20)) {
				orbit_agrees(dg, g.gl_pathv[i], p.sched[j]);
				any = true;
				nsym++;
			}
		if (any)
			check_output_same(g.gl_pathv[i]);
		done(&c, &p);
		free(text);
	}
	globfree(&g);
	assert_named(nsym >= 20, __LINE__, __FILE__, "%d symmetric schedules in examples/", nsym);
}

/* Reads an IR text into p, the diagnostics in *diag (malloc'd); 0 if clean. */
static int
read_ir(Diag *dg, const char *text, Prog *p, char **diag)
{
	memset(p, 0, sizeof *p);
	size_t len;
	FILE *mem = open_memstream(diag, &len);
	diag_stream(dg, mem);
	diag_source(dg, "sp.ir", text, strlen(text));
	int rc = ir_read(dg, text, strlen(text), p) != 0 || nerrors(dg) > 0 ? -1 : 0;
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
	return rc;
}

/* text with its line `from` (whole) replaced by `to` (malloc'd). */
static char *
replace_line(const char *text, const char *from, const char *to)
{
	char key[128];
	snprintf(key, sizeof key, "\n%s\n", from);
	const char *at = strstr(text, key);
	if (!at)
		return NULL;
	size_t head = (size_t)(at - text) + 1, n = strlen(text) + strlen(to) + 2;
	char *out = malloc(n);
	snprintf(out, n, "%.*s%s%s", (int)head, text, to, at + strlen(key) - 1);
	return out;
}

/* SP on torus(4, 4) in the IR text, mutated: the proof by symmetry and
 * the expansion reject the same inputs, with the same located error, and
 * the expansion rejects on its own (run as an explicit schedule). A
 * structural fault (a generator the owners do not follow) is the reader's,
 * before either proof (sched_check_symmetric, which both share). */
static void
test_orbit_vs_full_mutants(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct {
		const char *what, *from, *to, *diag;
	} cases[] = {
		{"a base tree that does not span (node 1 never reduces)", "base 3 0 1 0 r 0", "",
		 "(base tree 1) does not implement allreduce: at the end rank 0's chunk 0 is wrong: "
		 "it lacks the contribution of rank 1"},
		{"an edge that is not a link (1 -> 0 routed over 2 -> 3)", "route 0 1 6", "route 0 1 11",
		 "the message from rank 1 to rank 0 in round 4 has no valid route"},
		{"a broadcast before the reduce is done", "base 4 0 0 1 c 1", "base 0 0 0 1 c 1",
		 "(base tree 1): in round 4 rank 0 adds to chunk 0 a contribution it already holds"},
		{"a reduce sent twice", "base 2 0 2 1 r 2", "base 2 0 2 1 r 2\nbase 2 0 2 1 r 2",
		 "(base tree 1): in round 3 rank 1 adds to chunk 0 a contribution it already holds"},
		{"a reduce turned into a copy", "base 0 0 10 6 r 18", "base 0 0 10 6 c 18",
		 "it lacks the contribution of rank 6"},
		{"a generator that is not the group's (owners then wrong)",
		 "generator affine 1 0 0 1 1 0", "generator affine 1 0 0 1 2 0",
		 "chunk 1's owner is rank 4, not the rank at its tree's root"},
	};
	int st;
	char *ir = run_collc("build --target ir -o - examples/sp-torus-4x4.coll", &st);
	CU_ASSERT_EQUAL_FATAL(st, 0);
	for (size_t i = 0; i < countof(cases); i++) {
		char *text = replace_line(ir, cases[i].from, cases[i].to);
		assert_named(text != NULL, __LINE__, __FILE__, "case %zu: no line '%s'", i,
		             cases[i].from);
		Prog p;
		char *dr = NULL;
		if (!text || read_ir(dg, text, &p, &dr) != 0) {
			assert_named(dr && strstr(dr, cases[i].diag) && strstr(dr, "sp.ir:69:1: error: "),
			             __LINE__, __FILE__, "case %zu (%s): the reader says\n%s", i,
			             cases[i].what, dr ? dr : "");
			free(dr), free(text);
			prog_free(&p);
			continue;
		}
		free(dr);
		const Sched *s = p.sched[0];
		char *d1, *d2, *d3 = NULL;
		int vo = captured(dg, verify, s, &d1), vf = captured(dg, verify_full, s, &d2), vx = -1;
		/* the expansion alone, where it is defined */
		if (captured(dg, sched_check_symmetric, s, &d3) == 0) {
			Arena a = {0};
			free(d3);
			vx = captured(dg, verify, sched_expand(dg, &a, s), &d3);
			arena_free(&a);
		}
		assert_named(vo != 0 && vf != 0 && vx != 0 && strcmp(d1, d2) == 0 &&
		             strstr(d1, "sp.ir:69:1: error: ") && strstr(d1, cases[i].diag),
		             __LINE__, __FILE__, "case %zu (%s): by symmetry %d\n%s\nfull %d\n%s\n"
		             "expansion alone %d\n%s", i, cases[i].what, vo, d1, vf, d2, vx, d3);
		free(d1), free(d2), free(d3), free(text);
		prog_free(&p);
	}
	free(ir);
}

/* --full-verify estimates the expansion first: SP on torus(64, 64) checks
 * by symmetry, and its 1.3e8 copies are refused, naming the limit. */
static void
test_full_verify_limit(void)
{
	char dir[] = "/tmp/collc-symm-XXXXXX";
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	write_in(dir, "sp64.coll", "topology T = torus(64, 64);\n"
	         "group G on T { translate; map (x, y) -> (-x, -y); map (x, y) -> (y, x); }\n"
	         "tree B = bfs(T, root (0, 0));\n"
	         "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n");
	char args[256], cmd[512];
	snprintf(args, sizeof args, "check %s/sp64.coll", dir);
	int st;
	char *out = run_collc(args, &st);
	assert_named(st == 0 && strstr(out, "16384") != NULL, __LINE__, __FILE__,
	             "check by symmetry: status %d\n%s", st, out);
	free(out);
	snprintf(cmd, sizeof cmd, "%s check --full-verify %s/sp64.coll 2>&1", COLLC_BIN, dir);
	FILE *f = popen(cmd, "r");
	char buf[4096] = "";
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	st = pclose(f);
	assert_named(WEXITSTATUS(st) == 1 &&
	             strstr(buf, "sp64.coll:4:1: error: expanding the symmetric schedule of 'AR' "
	                         "makes 1.3e8 messages") &&
	             strstr(buf, "collc expands at most 67108864 (docs/limits.md)"),
	             __LINE__, __FILE__, "status %d:\n%s", st, buf);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
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
	{"every example: the proof by symmetry and the expansion agree", test_orbit_vs_full_examples},
	{"mutants: the proof by symmetry rejects what the expansion rejects", test_orbit_vs_full_mutants},
	{"--full-verify estimates the expansion against the limits", test_full_verify_limit},
	CU_TEST_INFO_NULL,
};
