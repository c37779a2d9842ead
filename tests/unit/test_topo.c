/* test_topo.c: the link sets of every topology form, and routes. */
#include <string.h>

#include "ir.h"
#include "tests.h"

static Topo *
make(Arena *a, TopoKind k, int ndim, int s0, int s1, int s2)
{
	int size[3] = {s0, s1, s2};
	return topo_new(a, k, "T", ndim, size, 0, net_defaults);
}

static Topo *
supermesh(Arena *a, int r, int c, int variant)
{
	int size[2] = {r, c};
	return topo_new(a, TK_SUPERMESH, "S", 2, size, variant, net_defaults);
}

static int
degree(const Topo *t, int v)
{
	return t->out[v + 1] - t->out[v];
}

static bool
doubled(const Topo *t, int u, int v)
{
	return topo_nlinks_between(t, u, v) == 2 && topo_nlinks_between(t, v, u) == 2;
}

static void
test_tori(void)
{
	Arena a = {0};
	Topo *t = make(&a, TK_TORUS, 2, 8, 8, 0);
	CU_ASSERT_EQUAL(t->nnode, 64);
	CU_ASSERT_EQUAL(t->nlink, 256);
	int bad = 0;
	for (int v = 0; v < 64; v++)
		bad += degree(t, v) != 4;
	CU_ASSERT_EQUAL(bad, 0);
	/* port order: dim 0 -1, dim 0 +1, dim 1 -1, dim 1 +1; node 9 = (1, 1) */
	const Link *l = &t->link[t->out[9]];
	CU_ASSERT(l[0].dst == 1 && l[0].dim == 0 && l[0].dir == -1);
	CU_ASSERT(l[1].dst == 17 && l[1].dir == +1);
	CU_ASSERT(l[2].dst == 8 && l[2].dim == 1);
	CU_ASSERT(l[3].dst == 10);
	/* size 2: two parallel links each way, so every node keeps degree 2d */
	t = make(&a, TK_TORUS, 2, 2, 4, 0);
	CU_ASSERT_EQUAL(t->nlink, 32);
	CU_ASSERT(doubled(t, 0, 4));
	CU_ASSERT_EQUAL(topo_nlinks_between(t, 0, 1), 1);
	t = make(&a, TK_TORUS, 3, 4, 4, 4);
	CU_ASSERT_EQUAL(t->nlink, 384);
	t = make(&a, TK_RING, 1, 2, 0, 0);
	CU_ASSERT_EQUAL(t->nlink, 4);
	int c[3];
	t = make(&a, TK_TORUS, 3, 2, 3, 4);
	topo_coords(t, 23, c);
	CU_ASSERT(c[0] == 1 && c[1] == 2 && c[2] == 3);
	CU_ASSERT_EQUAL(topo_node(t, c), 23);
	arena_free(&a);
}

static void
test_meshes(void)
{
	Arena a = {0};
	Topo *m = make(&a, TK_MESH, 2, 4, 4, 0);
	CU_ASSERT_EQUAL(m->nlink, 48); /* 4k(k-1) */
	CU_ASSERT_EQUAL(degree(m, 0), 2);
	CU_ASSERT_EQUAL(degree(m, 5), 4);
	/* SMBi: every perimeter link doubled; corners 4, other border nodes 5 */
	Topo *bi = supermesh(&a, 4, 4, 0);
	CU_ASSERT_EQUAL(bi->nlink, 48 + 24);
	CU_ASSERT_EQUAL(degree(bi, 0), 4);
	CU_ASSERT_EQUAL(degree(bi, 1), 5);
	CU_ASSERT_EQUAL(degree(bi, 5), 4);
	CU_ASSERT(doubled(bi, 1, 2) && doubled(bi, 4, 8) && doubled(bi, 13, 14));
	CU_ASSERT(!doubled(bi, 5, 6));
	/* SMAlter 4x4 (algorithms.md 9.2): 4k added directed links, all degree 4 */
	Topo *alt = supermesh(&a, 4, 4, 1);
	CU_ASSERT_EQUAL(alt->nlink, 64);
	int bad = 0;
	for (int v = 0; v < 16; v++)
		bad += degree(alt, v) != 4;
	CU_ASSERT_EQUAL(bad, 0);
	static const int pairs4[][2] = {{0, 1}, {2, 3}, {12, 13}, {14, 15}, {0, 4}, {8, 12},
	                                {3, 7}, {11, 15}};
	for (size_t i = 0; i < countof(pairs4); i++)
		assert_named(doubled(alt, pairs4[i][0], pairs4[i][1]), __LINE__, __FILE__,
		             "SMAlter 4x4 doubles %d-%d", pairs4[i][0], pairs4[i][1]);
	CU_ASSERT(!doubled(alt, 1, 2));
	/* SMAlter 5x5: the clockwise walk; corners end with degree 3 */
	Topo *alt5 = supermesh(&a, 5, 5, 1);
	static const int pairs5[][2] = {{0, 1}, {2, 3}, {4, 9}, {14, 19}, {24, 23}, {22, 21},
	                                {20, 15}, {10, 5}};
	for (size_t i = 0; i < countof(pairs5); i++)
		assert_named(doubled(alt5, pairs5[i][0], pairs5[i][1]), __LINE__, __FILE__,
		             "SMAlter 5x5 doubles %d-%d", pairs5[i][0], pairs5[i][1]);
	CU_ASSERT_EQUAL(alt5->nlink, 4 * 5 * 4 + 16);
	CU_ASSERT_EQUAL(degree(alt5, 0), 3);
	CU_ASSERT_EQUAL(degree(alt5, 1), 4);
	/* 3x3: {0,1},{2,5},{8,7},{6,3} */
	Topo *alt3 = supermesh(&a, 3, 3, 1);
	CU_ASSERT(doubled(alt3, 0, 1) && doubled(alt3, 2, 5) && doubled(alt3, 8, 7) &&
	          doubled(alt3, 6, 3));
	CU_ASSERT_EQUAL(alt3->nlink, 24 + 8);
	arena_free(&a);
}

static void
test_others(void)
{
	Arena a = {0};
	Topo *h = make(&a, TK_HYPERX, 2, 4, 4, 0);
	CU_ASSERT_EQUAL(h->nlink, 16 * 6);
	CU_ASSERT_EQUAL(degree(h, 5), 6);
	Topo *h3 = make(&a, TK_HYPERX, 3, 3, 4, 5);
	CU_ASSERT_EQUAL(degree(h3, 0), 2 + 3 + 4);
	Topo *f = make(&a, TK_FULL, 1, 8, 0, 0);
	CU_ASSERT_EQUAL(f->nlink, 56);
	Topo *s = topo_spine_leaf(&a, "F", 4, 8, 4, net_defaults);
	CU_ASSERT_EQUAL(s->nnode, 32 + 8 + 4);
	CU_ASSERT_EQUAL(s->nrank, 32);
	CU_ASSERT_EQUAL(s->nlink, 64 + 64);
	CU_ASSERT(s->is_switch[32] && s->is_switch[43] && !s->is_switch[31]);
	CU_ASSERT_EQUAL(topo_find_link(s, 5, 32 + 1, 0) >= 0, 1); /* host 5 is on leaf 1 */
	Topo *o = topo_optical_ring(&a, "O", 8, 16, net_defaults);
	/* the static ring, then switchable circuits: offsets +1, -1, +2, -2, +4
	 * forward (but +1) and as reverse fibers */
	CU_ASSERT_EQUAL(o->nlink, 8 + 8 * 4 + 8 * 5);
	int fixed = 0;
	for (int i = 0; i < o->nlink; i++)
		fixed += o->link[i].dim != 1;
	CU_ASSERT_EQUAL(fixed, 8);
	CU_ASSERT(topo_find_link(o, 7, 0, 0) >= 0 && o->link[topo_find_link(o, 0, 7, 0)].dim == 1);
	Topo *o2 = topo_optical_ring(&a, "O", 8, 8, net_defaults);
	/* 4 optical, 2 electrical per block of 2; circuits between 4 blocks */
	CU_ASSERT_EQUAL(o2->nlink, 4 + 8 + 4 * 2 + 4 * 3);
	CU_ASSERT(topo_find_link(o2, 1, 2, 0) >= 0 && topo_find_link(o2, 0, 1, 0) >= 0 &&
	          topo_find_link(o2, 1, 0, 0) >= 0 && o2->link[topo_find_link(o2, 0, 7, 0)].dim == 1);
	Link links[] = {{.src = 0, .dst = 1}, {.src = 1, .dst = 0}, {.src = 0, .dst = 1},
	                {.src = 1, .dst = 2}};
	unsigned char sw[3] = {0, 0, 1};
	Topo *g = topo_graph(&a, "G", 3, sw, 4, links, net_defaults);
	CU_ASSERT_EQUAL(g->nrank, 2);
	CU_ASSERT_EQUAL(topo_nlinks_between(g, 0, 1), 2);
	CU_ASSERT_EQUAL(topo_find_link(g, 0, 1, 1), 1);
	char buf[64];
	topo_describe(s, buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "spine_leaf(spines 4, leaves 8, hosts 4)");
	topo_node_name(h3, 59, buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "(2, 3, 4)");
	arena_free(&a);
}

static int
route_nodes(Routes *r, int src, int dst, int *nodes)
{
	const int *l;
	int n = route_get(r, src, dst, &l);
	for (int i = 0; i < n; i++)
		nodes[i] = r->topo->link[l[i]].dst;
	return n;
}

static void
test_routes(void)
{
	Arena a = {0};
	Topo *t = make(&a, TK_TORUS, 2, 8, 8, 0);
	Routes r;
	routes_init(&r, t, ROUTE_SHORTEST);
	int nodes[64];
	/* (0,0) -> (3,5): dimension 0 first (+), then dimension 1 the short way (-) */
	CU_ASSERT_EQUAL(route_nodes(&r, 0, 3 * 8 + 5, nodes), 6);
	CU_ASSERT_EQUAL(nodes[0], 8);
	CU_ASSERT_EQUAL(nodes[2], 24);
	CU_ASSERT_EQUAL(nodes[3], 31);
	/* a tie at n/2 goes -1: (0,0) -> (4,0) via 7, 6, 5 */
	CU_ASSERT_EQUAL(route_nodes(&r, 0, 32, nodes), 4);
	CU_ASSERT_EQUAL(nodes[0], 56);
	/* cached: the same id, and no new route */
	int id = route_id(&r, 0, 29), n = r.nroute;
	CU_ASSERT_EQUAL(route_id(&r, 0, 29), id);
	CU_ASSERT_EQUAL(r.nroute, n);
	CU_ASSERT_EQUAL(route_nodes(&r, 5, 5, nodes), 0);
	routes_free(&r);
	/* dor and shortest_path agree on tori, every pair of 5x6 and 2x4x3 */
	int shapes[2][3] = {{5, 6, 0}, {2, 4, 3}};
	for (int s = 0; s < 2; s++) {
		Topo *u = make(&a, TK_TORUS, shapes[s][2] ? 3 : 2, shapes[s][0], shapes[s][1], shapes[s][2]);
		Routes x, y;
		routes_init(&x, u, ROUTE_SHORTEST);
		routes_init(&y, u, ROUTE_DOR);
		int differ = 0;
		for (int i = 0; i < u->nnode; i++)
			for (int j = 0; j < u->nnode; j++) {
				const int *lx, *ly;
				int nx = route_get(&x, i, j, &lx), ny = route_get(&y, i, j, &ly);
				differ += nx != ny || (nx > 0 && memcmp(lx, ly, (size_t)nx * sizeof *lx) != 0);
				differ += nx != topo_distance(&x, i, j);
			}
		assert_named(differ == 0, __LINE__, __FILE__, "dor = shortest_path on torus %d", s);
		routes_free(&x);
		routes_free(&y);
	}
	/* spine-leaf: same leaf 2 hops, other leaf 4 hops via the first spine */
	Topo *sl = topo_spine_leaf(&a, "F", 4, 8, 4, net_defaults);
	routes_init(&r, sl, ROUTE_SHORTEST);
	CU_ASSERT_EQUAL(route_nodes(&r, 0, 1, nodes), 2);
	CU_ASSERT_EQUAL(nodes[0], 32);
	CU_ASSERT_EQUAL(route_nodes(&r, 0, 13, nodes), 4);
	CU_ASSERT(nodes[0] == 32 && nodes[1] == 40 && nodes[2] == 35 && nodes[3] == 13);
	routes_free(&r);
	/* the unidirectional optical ring: 7 hops from 1 to 0 */
	Topo *o = topo_optical_ring(&a, "O", 8, 16, net_defaults);
	routes_init(&r, o, ROUTE_SHORTEST);
	CU_ASSERT_EQUAL(route_nodes(&r, 1, 0, nodes), 7);
	routes_free(&r);
	arena_free(&a);
}

/* ir's table of builders against the registry's forms: a builder and a
 * link estimate for every form but a block form, and the estimate of each
 * built topology_form_decl instance at least its links. */
static void
test_builders_complete(void)
{
	for (int t = 0; t < NTOPOKIND; t++) {
		const TopoBuilder *b = &topo_builders[t];
		bool block = topo_forms[t].block;
		assert_named(!b->build == block && !b->links == block, __LINE__, __FILE__,
		             "%s: a builder and an estimate exactly when it is not a block form",
		             topo_forms[t].form.name);
		if (block || !b->build)
			continue;
		char text[256];
		snprintf(text, sizeof text, "topology T = %s;", topo_form_decl[t]);
		Checked c;
		check_str(&c, text);
		Prog p = {0};
		CU_ASSERT_EQUAL(c.errors, 0);
		if (c.errors == 0 && lower(c.file, &p) == 0) {
			const Topo *x = p.topo[0];
			TopoShape shape = topo_shape_of(x);
			assert_named(x->kind == (TopoKind)t && topo_link_estimate(x->kind, &shape) >= x->nlink,
			             __LINE__, __FILE__, "%s: the form built, its links estimated",
			             topo_form_decl[t]);
		}
		prog_free(&p);
		checked_free(&c);
	}
}

/* topo_describe from the registry's roles writes a form as it is declared
 * with every argument given. */
static void
test_describe_every_form(void)
{
	static const char *const decl[] = {
		"torus(4, 4, 2)", "mesh(3, 5)", "supermesh(4, 6, alter)", "supermesh(4, 4, bi)",
		"hyperx(3, 4)", "spine_leaf(spines 3, leaves 4, hosts 2)", "ring(8)", "full(5)",
		"optical_ring(8, ports 16)", "optical_ring(8, ports 4)",
	};
	for (size_t i = 0; i < countof(decl); i++) {
		char text[128], buf[128];
		snprintf(text, sizeof text, "topology T = %s;", decl[i]);
		Checked c;
		check_str(&c, text);
		Prog p = {0};
		if (c.errors == 0 && lower(c.file, &p) == 0)
			topo_describe(p.topo[0], buf, sizeof buf);
		else
			snprintf(buf, sizeof buf, "(did not build)");
		assert_named(strcmp(buf, decl[i]) == 0, __LINE__, __FILE__, "%s described as %s",
		             decl[i], buf);
		prog_free(&p);
		checked_free(&c);
	}
}

CU_TestInfo topo_tests[] = {
	{"topo_describe: every form as declared", test_describe_every_form},
	{"every form has a builder and an estimate (topo_builders[])", test_builders_complete},
	{"tori and rings", test_tori},
	{"meshes and supermeshes", test_meshes},
	{"hyperx, full, spine-leaf, optical ring, graph", test_others},
	{"routes: shortest_path, dor, cache", test_routes},
	CU_TEST_INFO_NULL,
};
