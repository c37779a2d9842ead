/*
 * test_disjoint.c: link-disjoint spanning trees (ir/alg_disjoint.c) and the
 * SuperMesh root sets. Every set of trees is checked here independently of
 * the builder: each tree is rooted where asked, reaches every node over its
 * recorded links, and no directed link serves two trees. Absence is proved
 * where the counting bound or a cut says so.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "tests.h"

#ifndef COLLC_BIN
#define COLLC_BIN "bin/collc"
#endif

/* The independent check: 0 when the trees are spanning arborescences on
 * their links, pairwise link-disjoint; else a line number of the failure. */
static int
check_trees(const Topo *t, Tree **tr, const int *roots, int k)
{
	unsigned char *used = calloc((size_t)t->nlink, 1);
	int bad = 0;
	for (int j = 0; j < k && !bad; j++) {
		if (tr[j]->root[0] != roots[j] || tr[j]->parent[roots[j]] != -1)
			bad = __LINE__;
		for (int v = 0; v < t->nnode && !bad; v++) {
			if (v == roots[j])
				continue;
			int l = tr[j]->link[v];
			if (l < 0 || l >= t->nlink || t->link[l].dst != v ||
			    t->link[l].src != tr[j]->parent[v])
				bad = __LINE__;
			else if (used[l]++)
				bad = __LINE__;
			/* reaches the root in fewer than n steps */
			int u = v, steps = 0;
			while (!bad && u != roots[j] && u >= 0 && steps++ <= t->nnode)
				u = tr[j]->parent[u];
			if (!bad && u != roots[j])
				bad = __LINE__;
		}
	}
	free(used);
	return bad;
}

typedef struct Case {
	Arena arena;
	Topo *t;
	Routes routes;
	Tree **tr;
	DisjointMethod method;
	char *diag;
	size_t len;
} Case;

static void
build(Diag *dg, Case *c, const int *roots, int k)
{
	if (c->routes.topo) /* built before: start afresh */
		routes_free(&c->routes);
	free(c->diag);
	c->diag = NULL;
	FILE *mem = open_memstream(&c->diag, &c->len);
	diag_stream(dg, mem);
	diag_reset(dg);
	diag_source(dg, "x", "x\n", 2);
	routes_init(&c->routes, c->t, ROUTE_SHORTEST);
	Loc at = {.line = 1, .col = 1};
	c->tr = disjoint_trees(dg, &c->arena, c->t, &c->routes, roots, k, at, &c->method);
	diag_stream(dg, NULL);
	fclose(mem);
}

static void
case_free(Case *c)
{
	if (c->routes.topo)
		routes_free(&c->routes);
	arena_free(&c->arena);
	free(c->diag);
	memset(c, 0, sizeof *c);
}

static Topo *
grid(Case *c, TopoKind kind, int ndim, int a, int b, int variant)
{
	memset(c, 0, sizeof *c);
	int size[2] = {a, b};
	c->t = topo_new(&c->arena, kind, "T", ndim, size, variant, net_defaults);
	return c->t;
}

static void
expect_trees(Diag *dg, Case *c, const int *roots, int k, int max_height)
{
	build(dg, c, roots, k);
	assert_named(c->tr != NULL, __LINE__, __FILE__, "no trees: %s", c->diag ? c->diag : "");
	if (!c->tr)
		return;
	int bad = check_trees(c->t, c->tr, roots, k);
	assert_named(bad == 0, __LINE__, __FILE__, "check failed at line %d", bad);
	for (int j = 0; j < k; j++)
		assert_named(c->tr[j]->height <= max_height, __LINE__, __FILE__,
		             "tree %d has height %d > %d", j, c->tr[j]->height, max_height);
}

static void
test_supermesh_corners(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	for (int variant = 0; variant < 2; variant++) {
		Case c;
		grid(&c, TK_SUPERMESH, 2, 4, 4, variant);
		int roots[4] = {0, 3, 15, 12};
		/* the authors' saved trees: height 6 on 4x4, SMBi and SMAlter; on SMBi
		 * Algorithm 1 builds them, on SMAlter (4 spare links) it gets stuck
		 * and the general method does */
		expect_trees(dg, &c, roots, 4, 6);
		for (int j = 0; c.tr && j < 4; j++)
			CU_ASSERT_EQUAL(c.tr[j]->height, 6);
		CU_ASSERT_EQUAL(c.method, variant ? DISJOINT_GENERAL : DISJOINT_ALGORITHM1);
		case_free(&c);
		/* 6x6 corners: 2(k - 1) = 10, as the authors' */
		grid(&c, TK_SUPERMESH, 2, 6, 6, variant);
		int r6[4] = {0, 5, 35, 30};
		expect_trees(dg, &c, r6, 4, 10);
		for (int j = 0; c.tr && j < 4; j++)
			CU_ASSERT_EQUAL(c.tr[j]->height, 10);
		case_free(&c);
	}
}

static void
test_supermesh_root_sets_build(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* every root set of 4x4 and 6x6 SMBi / SMAlter, and 5x5 SMAlter's sets of 3 */
	static const int sides[] = {4, 6, 5};
	for (size_t s = 0; s < countof(sides); s++)
		for (int variant = 0; variant < 2; variant++) {
			Case c;
			int k = sides[s];
			grid(&c, TK_SUPERMESH, 2, k, k, variant);
			int roots[64], size[32];
			int nset = supermesh_root_sets(c.t, roots, size);
			for (int i = 0, at = 0; i < nset; at += size[i++]) {
				Case one = {0};
				one.t = c.t;
				expect_trees(dg, &one, roots + at, size[i], 4 * k);
				routes_free(&one.routes);
				arena_free(&one.arena);
				free(one.diag);
			}
			case_free(&c);
		}
}

static void
test_root_sets(void)
{
	Case c;
	grid(&c, TK_SUPERMESH, 2, 4, 4, 1);
	int roots[64], size[32];
	int n = supermesh_root_sets(c.t, roots, size);
	static const int want4[] = {0, 3, 15, 12, 1, 7, 14, 8, 2, 11, 13, 4, 5, 6, 10, 9};
	CU_ASSERT_EQUAL(n, 4);
	CU_ASSERT(memcmp(roots, want4, sizeof want4) == 0);
	case_free(&c);
	/* 6x6 (the seed's Figure 8): the outer ring's 5 sets, the inner ring's 3, the centre */
	grid(&c, TK_SUPERMESH, 2, 6, 6, 1);
	n = supermesh_root_sets(c.t, roots, size);
	CU_ASSERT_EQUAL(n, 9);
	static const int want6[] = {0, 5, 35, 30, 1, 11, 34, 24, 2, 17, 33, 18, 3, 23, 32, 12,
	                            4, 29, 31, 6, 7, 10, 28, 25, 8, 16, 27, 19, 9, 22, 26, 13,
	                            14, 15, 21, 20};
	CU_ASSERT(memcmp(roots, want6, sizeof want6) == 0);
	case_free(&c);
	/* 5x5 SMAlter: corners, then sets of three (algorithms.md 9.3) */
	grid(&c, TK_SUPERMESH, 2, 5, 5, 1);
	n = supermesh_root_sets(c.t, roots, size);
	static const int want5[] = {0, 4, 24, 20, 1, 9, 23, 15, 2, 14, 22, 10, 3, 19, 21, 5,
	                            6, 8, 18, 16, 7, 13, 17, 11, 12};
	CU_ASSERT_EQUAL(n, 8);
	CU_ASSERT_EQUAL(size[0], 4);
	CU_ASSERT_EQUAL(size[1], 3);
	CU_ASSERT_EQUAL(size[7], 3);
	CU_ASSERT(memcmp(roots, want5, sizeof want5) == 0);
	case_free(&c);
}

static void
test_mesh_refused(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Case c;
	grid(&c, TK_MESH, 2, 4, 4, 0);
	int roots[4] = {0, 3, 15, 12};
	build(dg, &c, roots, 4);
	CU_ASSERT_PTR_NULL(c.tr);
	CU_ASSERT_PTR_NOT_NULL(strstr(c.diag, "4 x 15 = 60 directed links, and it has 48"));
	CU_ASSERT_PTR_NOT_NULL(strstr(c.diag, "4N^2 - 4N"));
	/* three corner trees fit the count (45 <= 48) but not the cut at (3, 0) */
	build(dg, &c, roots, 3);
	CU_ASSERT_PTR_NULL(c.tr);
	CU_ASSERT_PTR_NOT_NULL(strstr(c.diag, "coming in from the other nodes"));
	case_free(&c);
}

static void
test_torus_hyperx(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Case c;
	grid(&c, TK_TORUS, 2, 4, 4, 0);
	int roots[6] = {0, 5, 10, 15};
	expect_trees(dg, &c, roots, 4, 15);
	CU_ASSERT_EQUAL(c.method, DISJOINT_GENERAL);
	case_free(&c);
	grid(&c, TK_TORUS, 2, 8, 8, 0);
	int r8[4] = {0, 9, 18, 27};
	expect_trees(dg, &c, r8, 4, 63);
	case_free(&c);
	grid(&c, TK_HYPERX, 2, 4, 4, 0); /* degree 6 */
	int rh[6] = {0, 1, 2, 3, 4, 8};
	expect_trees(dg, &c, rh, 6, 15);
	case_free(&c);
	/* a fifth tree on the 4x4 torus: 5 x 15 = 75 > 64 links */
	grid(&c, TK_TORUS, 2, 4, 4, 0);
	int r5[5] = {0, 1, 2, 3, 4};
	build(dg, &c, r5, 5);
	CU_ASSERT_PTR_NULL(c.tr);
	case_free(&c);
}

/* A random d-regular multigraph-free graph by the pairing model with restarts. */
static Topo *
random_regular(Arena *a, int n, int d, unsigned seed)
{
	int *stub = malloc((size_t)n * d * sizeof *stub);
	Link *links = malloc((size_t)n * d * sizeof *links);
	for (int attempt = 0;; attempt++) {
		int m = n * d;
		for (int i = 0; i < m; i++)
			stub[i] = i / d;
		for (int i = m - 1; i > 0; i--) {
			seed = seed * 1103515245u + 12345u;
			int j = (int)((seed >> 8) % (unsigned)(i + 1)), x = stub[i];
			stub[i] = stub[j];
			stub[j] = x;
		}
		bool ok = true;
		int nl = 0;
		for (int i = 0; i < m && ok; i += 2) {
			int u = stub[i], v = stub[i + 1];
			ok = u != v;
			for (int e = 0; e < nl && ok; e++)
				ok = !(links[e].src == u && links[e].dst == v);
			links[nl++] = (Link){.src = u, .dst = v, .dim = -1};
			links[nl++] = (Link){.src = v, .dst = u, .dim = -1};
		}
		if (ok || attempt > 20000) {
			CU_ASSERT(ok);
			Topo *t = topo_graph(a, "R", n, NULL, nl, links, net_defaults);
			free(stub);
			free(links);
			return t;
		}
	}
}

/* Edmonds' condition by brute force over every node set (small n): true
 * when some X has fewer links in than trees rooted outside it. */
static bool
cut_violated(const Topo *t, const int *roots, int k)
{
	for (unsigned x = 1; x < (1u << t->nnode); x++) {
		int in = 0, out = 0;
		for (int l = 0; l < t->nlink; l++)
			in += ((x >> t->link[l].dst) & 1) && !((x >> t->link[l].src) & 1);
		for (int j = 0; j < k; j++)
			out += !((x >> roots[j]) & 1);
		if (in < out)
			return true;
	}
	return false;
}

static void
test_random_regular(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct { int n, d; } g[] = {{12, 3}, {20, 4}, {30, 5}, {40, 4}};
	for (size_t i = 0; i < countof(g); i++)
		for (unsigned seed = 1; seed <= 3; seed++) {
			Case c = {0};
			c.t = random_regular(&c.arena, g[i].n, g[i].d, seed * 7919u + (unsigned)i);
			int roots[8];
			for (int j = 0; j < g[i].d; j++)
				roots[j] = j * 2;
			/* random d-regular graphs are d-edge-connected (with high
			 * probability, and for these seeds), so d trees exist */
			build(dg, &c, roots, g[i].d);
			if (!c.tr && g[i].n <= 16) /* then some set must violate the cut condition */
				assert_named(cut_violated(c.t, roots, g[i].d), __LINE__, __FILE__,
				             "graph %zu seed %u: refused but every cut holds: %s", i, seed,
				             c.diag);
			else
				assert_named(c.tr != NULL, __LINE__, __FILE__, "graph %zu seed %u: %s", i,
				             seed, c.diag);
			if (c.tr) {
				int bad = check_trees(c.t, c.tr, roots, g[i].d);
				assert_named(bad == 0, __LINE__, __FILE__, "graph %zu seed %u: line %d", i,
				             seed, bad);
			}
			case_free(&c);
		}
}

static void
test_cut_proves_absence(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* two 4-cycles (both directions) joined by one pair of links: every set
	 * on one side has 1 link in, so 2 trees rooted on the other side fail */
	Link l[20];
	int n = 0;
	static const int e[][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {4, 5}, {5, 6}, {6, 7}, {7, 4},
	                           {3, 4}};
	for (size_t i = 0; i < countof(e); i++) {
		l[n++] = (Link){.src = e[i][0], .dst = e[i][1], .dim = -1};
		l[n++] = (Link){.src = e[i][1], .dst = e[i][0], .dim = -1};
	}
	Case c = {0};
	c.t = topo_graph(&c.arena, "G", 8, NULL, n, l, net_defaults);
	int roots[2] = {0, 1};
	build(dg, &c, roots, 2);
	CU_ASSERT_PTR_NULL(c.tr);
	CU_ASSERT_PTR_NOT_NULL(strstr(c.diag, "{4, 5, 6, 7} have 1 link coming in"));
	case_free(&c);
}

/* The count the refusal prints is of the trees rooted outside the set, not
 * of all trees: two K4s joined by one pair of links, roots 0 and 1 on the
 * left and 4 on the right. The right side is the only set with fewer links
 * in (1) than trees rooted outside it (2 of the 3). */
static void
test_cut_counts_roots_outside(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Link l[32];
	int n = 0;
	for (int side = 0; side < 8; side += 4)
		for (int u = side; u < side + 4; u++)
			for (int v = side; v < side + 4; v++)
				if (u != v)
					l[n++] = (Link){.src = u, .dst = v, .dim = -1};
	l[n++] = (Link){.src = 3, .dst = 4, .dim = -1};
	l[n++] = (Link){.src = 4, .dst = 3, .dim = -1};
	Case c = {0};
	c.t = topo_graph(&c.arena, "G", 8, NULL, n, l, net_defaults);
	int roots[3] = {0, 1, 4};
	CU_ASSERT(cut_violated(c.t, roots, 3));
	build(dg, &c, roots, 3);
	CU_ASSERT_PTR_NULL(c.tr);
	assert_named(strstr(c.diag, "the nodes {4, 5, 6, 7} have 1 link coming in from the other "
	                            "nodes, but the 2 trees rooted outside them need one each") != NULL,
	             __LINE__, __FILE__, "%s", c.diag);
	case_free(&c);
}

/* Which root sets the seed's Algorithm 1 builds (A) and which it leaves to
 * the general method (g), set by set in the order of supermesh_root_sets,
 * with the trees checked independently either way. Algorithm 1 is a greedy
 * that never takes a link back: on SMBi it builds the outer ring's sets and
 * most inner ones; on even SMAlter, 4 directed links beyond the 4(P - 1)
 * the trees need, an early choice always leaves some tree without a free
 * link into the nodes it lacks (docs/algorithms.md, "Disjoint trees"). */
static void
test_algorithm1_coverage(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct { int side, variant; const char *want; } cases[] = {
		{4, 0, "AAAA"}, {4, 1, "gggg"},
		{5, 0, "AAAAAAA"}, {5, 1, "gAAggggg"},
		{6, 0, "AAAAAAgAA"}, {6, 1, "ggggggggg"},
		{8, 0, "AAAAAAAAggAgAgAA"}, {8, 1, "gggggggggggggggg"},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		Case c;
		int k = cases[i].side;
		grid(&c, TK_SUPERMESH, 2, k, k, cases[i].variant);
		int roots[256], size[128];
		int nset = supermesh_root_sets(c.t, roots, size);
		char got[128] = "";
		for (int s = 0, at = 0; s < nset; at += size[s++]) {
			Case one = {0};
			one.t = c.t;
			expect_trees(dg, &one, roots + at, size[s], 4 * k);
			got[s] = one.method == DISJOINT_ALGORITHM1 ? 'A' : 'g';
			got[s + 1] = 0;
			routes_free(&one.routes);
			arena_free(&one.arena);
			free(one.diag);
		}
		assert_named(strcmp(got, cases[i].want) == 0, __LINE__, __FILE__,
		             "%dx%d %s: Algorithm 1 built %s, want %s", k, k,
		             cases[i].variant ? "alter" : "bi", got, cases[i].want);
		case_free(&c);
	}
}

/* Step 3's block is the k - 1 rows and columns on the root's near side
 * (Figure 6: root 5 of 4x4 takes rows and columns 0 - 2): on 4x4 SMBi the
 * inner set {5, 6, 10, 9} is built by Algorithm 1 with trees of height 7
 * (the authors' 6; the whole grid as the block gave 8). */
static void
test_algorithm1_block(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Case c;
	grid(&c, TK_SUPERMESH, 2, 4, 4, 0);
	int roots[4] = {5, 6, 10, 9};
	expect_trees(dg, &c, roots, 4, 7);
	CU_ASSERT_EQUAL(c.method, DISJOINT_ALGORITHM1);
	/* the root walks to its nearest border first: 5 -> 1 */
	CU_ASSERT(c.tr && c.tr[0]->parent[1] == 5);
	case_free(&c);
}

/* One tree line of `collc check`'s printout on the 4x4 SuperMeshAlter:
 * "  NAME: tree K of SET rooted at (r, c): height H, 15 edges: (r, c)->(r, c)[+] ...".
 * checked on its own terms: it spans the 16 chiplets from its root over mesh
 * links ('+', the pair's added parallel link, only where the file doubles a
 * pair), with the height printed. Its directed links are marked in used[],
 * which is how two trees of one set are found to share one. 0, or the line
 * of the check that failed. */
static int
check_tree_line(const char *l, int k, char *set, int *root, unsigned char used[16][16][2])
{
	static const int doubled[][2] = {{0, 1}, {2, 3}, {12, 13}, {14, 15},
	                                 {0, 4}, {8, 12}, {3, 7}, {11, 15}};
	int num, r, c, height, nedge, n;
	if (sscanf(l, "%*s tree %d of %15s rooted at (%d, %d): height %d, %d edges:%n", &num, set,
	           &r, &c, &height, &nedge, &n) != 6 || num != k || nedge != 15)
		return __LINE__;
	*root = 4 * r + c;
	int parent[16], seen = 0;
	for (int v = 0; v < 16; v++)
		parent[v] = -1;
	for (const char *p = l + n;;) {
		int a, b, x, y, m;
		if (sscanf(p, " (%d, %d)->(%d, %d)%n", &a, &b, &x, &y, &m) != 4)
			break;
		p += m;
		bool plus = *p == '+';
		p += plus;
		int u = 4 * a + b, v = 4 * x + y, pair = 0;
		if (a < 0 || a > 3 || b < 0 || b > 3 || x < 0 || x > 3 || y < 0 || y > 3 ||
		    abs(a - x) + abs(b - y) != 1 || v == *root || parent[v] >= 0)
			return __LINE__;
		for (size_t i = 0; i < countof(doubled); i++)
			pair |= (doubled[i][0] == u && doubled[i][1] == v) ||
			        (doubled[i][0] == v && doubled[i][1] == u);
		if ((plus && !pair) || used[u][v][plus]++)
			return __LINE__;
		parent[v] = u;
		seen++;
	}
	if (seen != 15)
		return __LINE__;
	int most = 0;
	for (int v = 0; v < 16; v++) {
		int depth = 0;
		for (int w = v; w != *root; w = parent[w])
			if (w < 0 || ++depth > 16)
				return __LINE__; /* not reaching the root */
		most = depth > most ? depth : most;
	}
	return most == height ? 0 : __LINE__;
}

/* `collc check --trees` prints the link-disjoint trees of a pipelined schedule
 * (examples/supermesh-disjoint.coll): per collective, every tree of every
 * set in order, rooted where the file asks, spanning, of the printed
 * height, and no directed link shared by two trees of one set. */
static void
test_check_prints_trees(void)
{
	static const int roots[16] = {0, 3, 15, 12, 1, 7, 14, 8, 2, 11, 13, 4, 5, 6, 10, 9};
	static const struct {
		const char *name;
		int ntree;
	} colls[] = {{"AR", 4}, {"RS", 16}, {"AG", 16}};
	FILE *f = popen(COLLC_BIN " check examples/supermesh-disjoint.coll --trees 2>&1", "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	char line[4096];
	int count[3] = {0}, other = 0;
	unsigned char used[16][16][2];
	while (fgets(line, sizeof line, f)) {
		size_t i = 0;
		while (i < countof(colls) && !(strncmp(line, "  ", 2) == 0 &&
		                               strncmp(line + 2, colls[i].name, 2) == 0 &&
		                               strncmp(line + 4, ": tree ", 7) == 0))
			i++;
		if (i == countof(colls)) {
			other += strstr(line, " tree ") != NULL;
			continue;
		}
		int k = count[i]++;
		if (k % 4 == 0)
			memset(used, 0, sizeof used); /* a new set: its trees share no link */
		char set[16];
		int root = -1, bad = check_tree_line(line, k + 1, set, &root, used);
		static const char *const sets[] = {"C", "S1", "S2", "S3"};
		assert_named(bad == 0 && k < 16 && strcmp(set, sets[k / 4]) == 0 && root == roots[k],
		             __LINE__, __FILE__, "check at line %d, root %d: %s", bad, root, line);
	}
	CU_ASSERT_EQUAL(pclose(f), 0);
	for (size_t i = 0; i < countof(colls); i++)
		assert_named(count[i] == colls[i].ntree, __LINE__, __FILE__, "%s: %d trees printed",
		             colls[i].name, count[i]);
	CU_ASSERT_EQUAL(other, 0);
}

CU_TestInfo disjoint_tests[] = {
	{"which root sets Algorithm 1 builds", test_algorithm1_coverage},
	{"Algorithm 1's block: the near k - 1 rows and columns", test_algorithm1_block},
	{"supermesh 4x4 corner trees", test_supermesh_corners},
	{"every root set of 4x4, 5x5, 6x6 supermeshes", test_supermesh_root_sets_build},
	{"root sets (Figure 8)", test_root_sets},
	{"a 4x4 mesh has too few links", test_mesh_refused},
	{"tori and hyperx", test_torus_hyperx},
	{"random regular graphs", test_random_regular},
	{"a cut proves absence", test_cut_proves_absence},
	{"the refusal counts the trees rooted outside the set (two K4s, a root on each side)",
	 test_cut_counts_roots_outside},
	{"collc check --trees prints the trees: spanning, disjoint, heights", test_check_prints_trees},
	CU_TEST_INFO_NULL,
};
