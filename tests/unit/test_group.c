/* test_group.c: closure, orders, link orbits, automorphism checks. */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "tests.h"

static GroupGen
affine(int d, const int *mat, const int *vec)
{
	GroupGen g = {.affine = true, .loc = {1, 1}};
	memcpy(g.mat, mat, (size_t)(d * d) * sizeof(int));
	if (vec)
		memcpy(g.vec, vec, (size_t)d * sizeof(int));
	return g;
}

static const GroupGen all_translations = {.affine = true, .all_translations = true};

static Topo *
make(Arena *a, TopoKind k, int ndim, int s0, int s1)
{
	int size[2] = {s0, s1};
	return topo_new(a, k, "T", ndim, size, 0, net_defaults);
}

/* Runs group_build with diagnostics captured; returns the group or NULL. */
static Group *
build(Diag *dg, Arena *a, const Topo *t, const GroupGen *g, int n, char **diag)
{
	size_t len;
	FILE *mem = open_memstream(diag, &len);
	diag_stream(dg, mem);
	diag_reset(dg);
	diag_source(dg, "g.coll", "map\n", 4);
	Group *grp = group_build(dg, a, t, "G", (Loc){1, 1}, g, n);
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
	return grp;
}

static void
test_sp_group(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* translations, -I and the coordinate swap: order 2d n^d, one link orbit */
	static const int neg[] = {-1, 0, 0, -1}, swap[] = {0, 1, 1, 0};
	for (int n = 3; n <= 8; n++) {
		Arena a = {0};
		Topo *t = make(&a, TK_TORUS, 2, n, n);
		GroupGen g[] = {all_translations, affine(2, neg, NULL), affine(2, swap, NULL)};
		char *diag;
		Group *grp = build(dg, &a, t, g, 3, &diag);
		assert_named(grp && grp->order == 4 * n * n && grp->nlink_orbits == 1 &&
		             grp->node_transitive, __LINE__, __FILE__,
		             "SP group on %dx%d: order %d, orbits %d", n, n, grp ? grp->order : -1,
		             grp ? grp->nlink_orbits : -1);
		/* each element maps links to links, and the identity comes first */
		int bad = 0;
		for (int e = 0; grp && e < grp->order; e++)
			for (int l = 0; l < t->nlink; l++)
				bad += group_link(grp, e, l) < 0;
		for (int v = 0; grp && v < t->nnode; v++)
			bad += group_node(grp, 0, v) != v;
		CU_ASSERT_EQUAL(bad, 0);
		free(diag);
		arena_free(&a);
	}
}

static void
test_orbits(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Arena a = {0};
	char *diag;
	/* translations alone: four orbits, one per (dimension, direction) */
	Topo *t = make(&a, TK_TORUS, 2, 4, 4);
	Group *g = build(dg, &a, t, &all_translations, 1, &diag);
	CU_ASSERT(g && g->order == 16 && g->nlink_orbits == 4);
	free(diag);
	/* rectangular 3x4 with the reflection: x-links and y-links (algorithms.md 8.6) */
	static const int neg[] = {-1, 0, 0, -1};
	t = make(&a, TK_TORUS, 2, 3, 4);
	GroupGen r[] = {all_translations, affine(2, neg, NULL)};
	g = build(dg, &a, t, r, 2, &diag);
	CU_ASSERT(g && g->order == 24 && g->nlink_orbits == 2);
	free(diag);
	/* 3D: translations, -I and the cyclic shift: order 6 n^3, one orbit */
	int size3[3] = {3, 3, 3};
	Topo *t3 = topo_new(&a, TK_TORUS, "T", 3, size3, 0, net_defaults);
	static const int neg3[] = {-1, 0, 0, 0, -1, 0, 0, 0, -1}, rho[] = {0, 1, 0, 0, 0, 1, 1, 0, 0};
	GroupGen g3[] = {all_translations, affine(3, neg3, NULL), affine(3, rho, NULL)};
	g = build(dg, &a, t3, g3, 3, &diag);
	CU_ASSERT(g && g->order == 6 * 27 && g->nlink_orbits == 1);
	free(diag);
	/* HyperX 4x4: translations and the quarter turn (x, y) -> (-y, x): order 4 n^2,
	 * link orbits by min(offset, n - offset): 1 and 2 */
	Topo *h = make(&a, TK_HYPERX, 2, 4, 4);
	static const int quarter[] = {0, -1, 1, 0};
	GroupGen gh[] = {all_translations, affine(2, quarter, NULL)};
	g = build(dg, &a, h, gh, 2, &diag);
	CU_ASSERT(g && g->order == 64);
	CU_ASSERT(g && g->nlink_orbits == 2);
	free(diag);
	/* spine-leaf translations: order leaves x hosts, acting on hosts transitively */
	Topo *s = topo_spine_leaf(&a, "F", 4, 8, 4, net_defaults);
	g = build(dg, &a, s, &all_translations, 1, &diag);
	CU_ASSERT(g && g->order == 32 && !g->affine && g->node_transitive);
	free(diag);
	/* rails translations on generated sizes: order boxes x gpus, transitive on
	 * the GPUs, the box switches and rails moved with them (each generator
	 * checked an automorphism) */
	for (int boxes = 1; boxes <= 4; boxes++)
		for (int gpus = 2; gpus <= 5; gpus++) {
			Topo *rt = topo_rails(&a, "C", boxes, gpus, 100, net_defaults);
			g = build(dg, &a, rt, &all_translations, 1, &diag);
			CU_ASSERT(g && g->order == boxes * gpus && g->node_transitive);
			free(diag);
			Topo *xt = topo_xgmi_rails(&a, "X", boxes, gpus, 100, NULL, net_defaults);
			g = build(dg, &a, xt, &all_translations, 1, &diag);
			CU_ASSERT(g && g->order == boxes * gpus && g->node_transitive);
			free(diag);
		}
	arena_free(&a);
}

static void
test_not_automorphisms(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Arena a = {0};
	char *diag;
	static const int id[] = {1, 0, 0, 1}, swap[] = {0, 1, 1, 0};
	static const int shift[] = {1, 0};
	Topo *m = make(&a, TK_MESH, 2, 4, 4);
	GroupGen g = affine(2, id, shift);
	CU_ASSERT_PTR_NULL(build(dg, &a, m, &g, 1, &diag));
	assert_named(strcmp(diag, "g.coll:1:1: error: this map is not an automorphism of "
	                             "mesh(4, 4): link (2, 0) -> (3, 0) maps to (3, 0) -> (0, 0), "
	                             "which is not a link\nmap\n^\n") == 0, __LINE__, __FILE__, "%s", diag);
	free(diag);
	/* swapping coordinates of a 4x8 torus is not even a permutation */
	Topo *t = make(&a, TK_TORUS, 2, 4, 8);
	g = affine(2, swap, NULL);
	CU_ASSERT_PTR_NULL(build(dg, &a, t, &g, 1, &diag));
	CU_ASSERT_PTR_NOT_NULL(strstr(diag, "is not a permutation of the nodes of torus(4, 8)"));
	free(diag);
	/* on a supermesh the added links must map to added links */
	int size[2] = {4, 4};
	Topo *sm = topo_new(&a, TK_SUPERMESH, "S", 2, size, 1, net_defaults);
	static const int transpose[] = {0, 1, 1, 0};
	g = affine(2, transpose, NULL);
	CU_ASSERT_PTR_NOT_NULL(build(dg, &a, sm, &g, 1, &diag)); /* SMAlter 4x4 is symmetric */
	free(diag);
	static const int mirror[] = {1, 0, 0, -1}, back[] = {0, 3};
	g = affine(2, mirror, back);
	Group *grp = build(dg, &a, sm, &g, 1, &diag);
	CU_ASSERT_PTR_NOT_NULL(grp);
	free(diag);
	arena_free(&a);
}

static void
test_automorphisms(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Arena a = {0};
	int n6 = 6, n4 = 4;
	Topo *r = topo_new(&a, TK_RING, "R", 1, &n6, 0, net_defaults);
	Group *g = group_automorphisms(dg, &a, r, "A", (Loc){1, 1});
	CU_ASSERT(g && g->order == 12 && g->nlink_orbits == 1);
	Topo *k = topo_new(&a, TK_FULL, "K", 1, &n4, 0, net_defaults);
	g = group_automorphisms(dg, &a, k, "A", (Loc){1, 1});
	CU_ASSERT(g && g->order == 24);
	int bad = 0;
	for (int v = 0; g && v < 4; v++)
		bad += group_node(g, 0, v) != v;
	CU_ASSERT_EQUAL(bad, 0);
	Topo *h = make(&a, TK_HYPERX, 2, 3, 3);
	g = group_automorphisms(dg, &a, h, "A", (Loc){1, 1});
	CU_ASSERT(g && g->order == 72); /* (S3 x S3) x 2 */
	Topo *s = topo_spine_leaf(&a, "F", 2, 2, 2, net_defaults);
	g = group_automorphisms(dg, &a, s, "A", (Loc){1, 1});
	CU_ASSERT(g && g->order == 2 * 2 * 2 * 2); /* hosts in each leaf, leaves, spines */
	arena_free(&a);
}

/* g^-1(g(v)) = v for every element and node, and the inverses pair up:
 * affine groups (translations with turns on a torus, x -> 3x + 1 and the
 * translations on full(7)) and permutation groups (automorphisms()). */
static int
inverse_mismatches(const Group *g)
{
	int *inv = group_inverses(g), bad = 0;
	for (int e = 0; e < g->order; e++) {
		bad += inv[e] < 0 || inv[e] >= g->order || inv[inv[e]] != e;
		for (int v = 0; v < g->topo->nnode && !bad; v++)
			bad += group_node(g, inv[e], group_node(g, e, v)) != v;
	}
	free(inv);
	return bad;
}

static void
test_inverses(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Arena a = {0};
	char *diag;
	static const int neg[] = {-1, 0, 0, -1}, swap[] = {0, 1, 1, 0};
	Topo *t = make(&a, TK_TORUS, 2, 5, 3);
	GroupGen sp[] = {all_translations, affine(2, neg, NULL)};
	Group *g = build(dg, &a, t, sp, 2, &diag);
	CU_ASSERT_FATAL(g != NULL);
	CU_ASSERT_EQUAL(inverse_mismatches(g), 0);
	free(diag);
	Topo *sq = make(&a, TK_TORUS, 2, 6, 6);
	GroupGen turns[] = {all_translations, affine(2, neg, NULL), affine(2, swap, NULL)};
	g = build(dg, &a, sq, turns, 3, &diag);
	CU_ASSERT_FATAL(g != NULL && g->order == 144);
	CU_ASSERT_EQUAL(inverse_mismatches(g), 0);
	free(diag);
	static const int three[] = {3}, one[] = {1};
	Topo *k7 = make(&a, TK_FULL, 1, 7, 0);
	GroupGen mul[] = {all_translations, affine(1, three, one)};
	g = build(dg, &a, k7, mul, 2, &diag);
	CU_ASSERT_FATAL(g != NULL && g->order == 42);
	CU_ASSERT_EQUAL(inverse_mismatches(g), 0);
	free(diag);
	Topo *r6 = make(&a, TK_RING, 1, 6, 0);
	g = group_automorphisms(dg, &a, r6, "A", (Loc){1, 1});
	CU_ASSERT_FATAL(g != NULL && !g->affine && g->order == 12);
	CU_ASSERT_EQUAL(inverse_mismatches(g), 0);
	arena_free(&a);
}

CU_TestInfo group_tests[] = {
	{"the SP group on 2D tori", test_sp_group},
	{"orders and link orbits", test_orbits},
	{"generators that are not automorphisms", test_not_automorphisms},
	{"automorphisms() of small graphs", test_automorphisms},
	{"each element's inverse", test_inverses},
	CU_TEST_INFO_NULL,
};
