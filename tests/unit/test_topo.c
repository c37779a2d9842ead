/* test_topo.c: the link sets of every topology form, and routes. */
#include <float.h>
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

/* rails(boxes B, gpus G, nic_gbps N) on generated sizes: GPU (b, g) is
 * b * G + g with two links each way, to its box switch at link_bandwidth
 * and to rail switch g at N Gbit/s; rails join only GPU g of every box;
 * two boxes of 8 are the graph examples/gpu-cluster-2x8.coll once wrote. */
static void
test_rails(void)
{
	Arena a = {0};
	for (int boxes = 1; boxes <= 5; boxes++)
		for (int gpus = 2; gpus <= 9; gpus++) {
			int ranks = boxes * gpus, nic = 100 * gpus;
			Topo *t = topo_rails(&a, "C", boxes, gpus, nic, net_defaults);
			CU_ASSERT_EQUAL(t->nnode, ranks + boxes + gpus);
			CU_ASSERT_EQUAL(t->nrank, ranks);
			CU_ASSERT_EQUAL(t->nlink, 4 * ranks);
			CU_ASSERT_EQUAL(t->nlink, (int)topo_link_estimate(TK_RAILS, &(TopoShape){
			                    .ndim = 2, .size = {boxes, gpus}}));
			for (int r = 0; r < ranks; r++) {
				int box = ranks + r / gpus, rail = ranks + boxes + r % gpus;
				CU_ASSERT(!t->is_switch[r] && t->is_switch[box] && t->is_switch[rail]);
				CU_ASSERT_EQUAL(degree(t, r), 2);
				int up = topo_find_link(t, r, box, 0), nl = topo_find_link(t, r, rail, 0);
				CU_ASSERT_FATAL(up >= 0 && nl >= 0);
				CU_ASSERT_EQUAL(t->link[up].bandwidth, net_defaults.bandwidth);
				CU_ASSERT_EQUAL(t->link[nl].bandwidth, nic * 1e9);
				CU_ASSERT(topo_find_link(t, box, r, 0) >= 0 && topo_find_link(t, rail, r, 0) >= 0);
			}
			for (int g = 0; g < gpus; g++)
				CU_ASSERT_EQUAL(degree(t, ranks + boxes + g), boxes);
			for (int b = 0; b < boxes; b++)
				CU_ASSERT_EQUAL(degree(t, ranks + b), gpus);
		}
	/* the graph of the 2 x 8 example as it was written, link by link */
	Link links[4 * 16];
	unsigned char sw[26] = {0};
	int n = 0;
	for (int v = 16; v < 26; v++)
		sw[v] = 1;
	for (int r = 0; r < 16; r++) {
		int nvs = 16 + r / 8, rail = 18 + r % 8;
		links[n++] = (Link){.src = r, .dst = nvs, .bandwidth = 3600e9};
		links[n++] = (Link){.src = nvs, .dst = r, .bandwidth = 3600e9};
		links[n++] = (Link){.src = r, .dst = rail, .bandwidth = 400e9};
		links[n++] = (Link){.src = rail, .dst = r, .bandwidth = 400e9};
	}
	Net net = net_defaults;
	net.bandwidth = 3600e9;
	Topo *g = topo_graph(&a, "G", 26, sw, n, links, net);
	Topo *c = topo_rails(&a, "C", 2, 8, 400, net);
	CU_ASSERT_EQUAL_FATAL(c->nlink, g->nlink);
	for (int i = 0; i < c->nlink; i++)
		CU_ASSERT(c->link[i].src == g->link[i].src && c->link[i].dst == g->link[i].dst &&
		          c->link[i].bandwidth == g->link[i].bandwidth);
	char buf[64];
	topo_describe(c, buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "rails(boxes 2, gpus 8, nic_gbps 400)");
	topo_node_name(c, 11, buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "gpu(1, 3)");
	arena_free(&a);
}

/* xgmi_rails(boxes B, gpus G, nic_gbps N) on generated sizes: GPU (b, g)
 * is b * G + g, one link each way to every other GPU of its box at
 * link_bandwidth and none to another box's, and one to rail switch g at N
 * Gbit/s; the rails join only GPU g of every box; no box switches. */
static void
test_xgmi_rails(void)
{
	Arena a = {0};
	for (int boxes = 1; boxes <= 4; boxes++)
		for (int gpus = 2; gpus <= 8; gpus++) {
			int ranks = boxes * gpus, nic = 100 * gpus;
			Topo *t = topo_xgmi_rails(&a, "C", boxes, gpus, nic, NULL, net_defaults);
			CU_ASSERT_EQUAL(t->nnode, ranks + gpus);
			CU_ASSERT_EQUAL(t->nrank, ranks);
			CU_ASSERT_EQUAL(t->nlink, ranks * (gpus + 1));
			CU_ASSERT_EQUAL(t->nlink, (int)topo_link_estimate(TK_XGMI_RAILS, &(TopoShape){
			                    .ndim = 2, .size = {boxes, gpus}}));
			for (int r = 0; r < ranks; r++) {
				int rail = ranks + r % gpus;
				CU_ASSERT(!t->is_switch[r] && t->is_switch[rail]);
				CU_ASSERT_EQUAL(degree(t, r), gpus);
				for (int u = 0; u < ranks; u++) {
					int l = topo_find_link(t, r, u, 0);
					CU_ASSERT_EQUAL(l >= 0, u != r && u / gpus == r / gpus);
					CU_ASSERT(l < 0 || t->link[l].bandwidth == net_defaults.bandwidth);
					CU_ASSERT_EQUAL(topo_nlinks_between(t, r, u), l >= 0);
				}
				int nl = topo_find_link(t, r, rail, 0);
				CU_ASSERT_FATAL(nl >= 0);
				CU_ASSERT_EQUAL(t->link[nl].bandwidth, nic * 1e9);
				CU_ASSERT(topo_find_link(t, rail, r, 0) >= 0);
			}
			for (int g = 0; g < gpus; g++)
				CU_ASSERT_EQUAL(degree(t, ranks + g), boxes);
		}
	Topo *c = topo_xgmi_rails(&a, "C", 4, 8, 400, NULL, net_defaults);
	char buf[64];
	topo_describe(c, buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "xgmi_rails(boxes 4, gpus 8, nic_gbps 400)");
	topo_node_name(c, 11, buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "gpu(1, 3)");
	arena_free(&a);
}

/* leaf_spine_boxes(boxes B, gpus G, nic_gbps N, spines S) on generated
 * sizes: GPU (b, g) to box switch b at link_bandwidth and to leaf b at N;
 * leaf b to its G GPUs and to every spine at N; the estimate exact. */
static void
test_leaf_spine_boxes(void)
{
	Arena a = {0};
	for (int boxes = 1; boxes <= 4; boxes++)
		for (int gpus = 2; gpus <= 8; gpus += 3)
			for (int spines = 1; spines <= gpus; spines++) {
				int ranks = boxes * gpus, leaf0 = ranks + boxes, spine0 = ranks + 2 * boxes;
				Topo *t = topo_leaf_spine_boxes(&a, "C", boxes, gpus, 400, spines, net_defaults);
				CU_ASSERT_EQUAL(t->nnode, spine0 + spines);
				CU_ASSERT_EQUAL(t->nrank, ranks);
				CU_ASSERT_EQUAL(t->nlink, (int)topo_link_estimate(TK_LEAF_SPINE_BOXES, &(TopoShape){
				                    .ndim = 2, .size = {boxes, gpus}, .switches = 2 * boxes + spines}));
				for (int r = 0; r < ranks; r++) {
					int up = topo_find_link(t, r, ranks + r / gpus, 0);
					int nl = topo_find_link(t, r, leaf0 + r / gpus, 0);
					CU_ASSERT_FATAL(up >= 0 && nl >= 0 && degree(t, r) == 2);
					CU_ASSERT(t->link[up].bandwidth == net_defaults.bandwidth &&
					          t->link[nl].bandwidth == 400e9);
				}
				for (int l = 0; l < boxes; l++) {
					CU_ASSERT_EQUAL(degree(t, leaf0 + l), gpus + spines);
					for (int k = 0; k < spines; k++)
						CU_ASSERT(topo_find_link(t, leaf0 + l, spine0 + k, 0) >= 0 &&
						          topo_find_link(t, spine0 + k, leaf0 + l, 0) >= 0);
				}
				for (int k = 0; k < spines; k++)
					CU_ASSERT_EQUAL(degree(t, spine0 + k), boxes);
			}
	char buf[96];
	Topo *c = topo_leaf_spine_boxes(&a, "C", 4, 8, 400, 4, net_defaults);
	topo_describe(c, buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "leaf_spine_boxes(boxes 4, gpus 8, nic_gbps 400, spines 4)");
	/* nodes by name (base/registry.c's node classes) */
	static const struct {
		int node;
		const char *name;
	} names[] = {{9, "gpu(1, 1)"}, {32, "nvswitch(0)"}, {35, "nvswitch(3)"}, {36, "leaf(0)"},
	             {39, "leaf(3)"}, {40, "spine(0)"}, {43, "spine(3)"}};
	for (size_t i = 0; i < countof(names); i++) {
		topo_node_name(c, names[i].node, buf, sizeof buf);
		CU_ASSERT_STRING_EQUAL(buf, names[i].name);
	}
	Topo *r = topo_rails(&a, "R", 2, 8, 400, net_defaults);
	topo_node_name(r, 17, buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "nvswitch(1)");
	topo_node_name(r, 25, buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "rail(7)");
	topo_node_name(topo_xgmi_rails(&a, "X", 2, 8, 400, NULL, net_defaults), 16, buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "rail(0)");
	arena_free(&a);
}

/* xgmi_rails with links per pair, on generated boxes: pair i-j of every box
 * is one link each way of count x link_bandwidth, the rest as with one link
 * a pair, and topo_describe gives the counts back as declared. */
static void
test_xgmi_pair_counts(void)
{
	Arena a = {0};
	unsigned seed = 7;
	for (int gpus = 2; gpus <= 6; gpus++)
		for (int boxes = 1; boxes <= 3; boxes++) {
			int pairs[15], n = gpus * (gpus - 1) / 2;
			char want[256], got[256];
			int at = snprintf(want, sizeof want, "xgmi_rails(boxes %d, gpus %d, nic_gbps 100, links ",
			                  boxes, gpus);
			for (int k = 0; k < n; k++) {
				seed = seed * 1103515245u + 12345u;
				pairs[k] = 1 + (int)(seed >> 16) % 4;
				at += snprintf(want + at, sizeof want - (size_t)at, "%s%d", k ? ", " : "", pairs[k]);
			}
			snprintf(want + at, sizeof want - (size_t)at, ")");
			pairs[0] = 2; /* not all ones */
			want[strlen("xgmi_rails(boxes 1, gpus 2, nic_gbps 100, links ")] = '2';
			TopoShape sh = {.ndim = 2, .size = {boxes, gpus}, .variant = 100, .switches = gpus,
			                .pairs = pairs};
			Topo *t = topo_builders[TK_XGMI_RAILS].build(&a, "C", &sh, net_defaults);
			Topo *one = topo_xgmi_rails(&a, "C", boxes, gpus, 100, NULL, net_defaults);
			CU_ASSERT_EQUAL_FATAL(t->nlink, one->nlink);
			for (int l = 0; l < t->nlink; l++) {
				const Link *x = &t->link[l];
				CU_ASSERT(x->src == one->link[l].src && x->dst == one->link[l].dst);
				bool xgmi = x->src < t->nrank && x->dst < t->nrank;
				int b = x->src / gpus, i = x->src % gpus, j = x->dst % gpus;
				int lo = i < j ? i : j, hi = i < j ? j : i, k = 0;
				for (int r = 0; r < lo; r++)
					k += gpus - 1 - r;
				k += hi - lo - 1;
				CU_ASSERT(x->dst / gpus == b || !xgmi);
				CU_ASSERT_DOUBLE_EQUAL(x->bandwidth,
				                       one->link[l].bandwidth * (xgmi ? pairs[k] : 1), 1e-3);
			}
			topo_describe(t, got, sizeof got);
			CU_ASSERT_STRING_EQUAL(got, want);
			topo_describe(one, got, sizeof got);
			CU_ASSERT_PTR_NULL(strstr(got, "links"));
		}
	arena_free(&a);
}

/* Node name -> id through the language's resolver (ast_resolve_node). */
static int64_t
resolve_name(const Topo *t, const char *name)
{
	char word[16];
	int i0 = 0, i1 = 0, n = sscanf(name, "%15[a-z](%d, %d)", word, &i0, &i1);
	Expr idx[2] = {{.kind = EX_INT, .ival = i0, .unit = -1}, {.kind = EX_INT, .ival = i1, .unit = -1}};
	Expr *elem[2] = {&idx[0], &idx[1]};
	Expr e = {.kind = EX_CALL, .text = word, .elem = elem, .nelem = n - 1, .unit = -1};
	NodeSpace sp = {.kind = t->kind, .form = topo_kind_name(t->kind), .ndim = t->ndim,
	                .nodes = t->nnode, .ranks = t->nrank, .ok = true};
	for (int i = 0; i < t->ndim; i++)
		sp.size[i] = t->size[i];
	topo_form_args(t, sp.arg);
	Diag dg = diag_new();
	return ast_resolve_node(&dg, &sp, &e, false);
}

/* On generated clusters of every form that names its nodes: each node's
 * name reads back as its id, GPUs are the ranks and switches the rest, and
 * each name says what the links say: gpu(b, i) is joined to nvswitch(b),
 * to rail(i) or leaf(b), and a spine to every leaf. */
static void
test_names_generated(void)
{
	Arena a = {0};
	char buf[64], other[64];
	int checked = 0;
	for (int k = 0; k < NTOPOKIND; k++) {
		if (!topo_forms[k].node_class[0].word)
			continue;
		for (int boxes = 1; boxes <= 3; boxes++)
			for (int gpus = 2; gpus <= 5; gpus += k == TK_TORUS_BOXES ? 2 : 3) /* even there */
				for (int spines = 1; spines <= 3; spines += 2) {
					if (k == TK_TORUS_BOXES && boxes < 2)
						continue; /* a torus dimension has at least 2 */
					TopoShape sh = {.ndim = 2, .size = {boxes, gpus}, .variant = 400,
					                .switches = 2 * boxes + spines};
					Topo *t = topo_builders[k].build(&a, "C", &sh, net_defaults);
					for (int v = 0; v < t->nnode; v++, checked++) {
						topo_node_name(t, v, buf, sizeof buf);
						CU_ASSERT_EQUAL_FATAL(resolve_name(t, buf), v);
						CU_ASSERT_EQUAL(strncmp(buf, "gpu(", 4) == 0, v < t->nrank);
						for (int l = t->out[v]; l < t->out[v + 1]; l++) {
							int w = t->link[l].dst, b = v / gpus, g = v % gpus;
							topo_node_name(t, w, other, sizeof other);
							int x = 0, y = 0;
							if (sscanf(other, "nvswitch(%d)", &x) == 1 ||
							    sscanf(other, "leaf(%d)", &x) == 1) {
								CU_ASSERT(v < t->nrank ? x == b : strncmp(buf, "spine(", 6) == 0);
							} else if (sscanf(other, "rail(%d)", &x) == 1) {
								CU_ASSERT_EQUAL(x, g);
							} else if (sscanf(other, "gpu(%d, %d)", &x, &y) == 2 && k == TK_TORUS_BOXES &&
							           v < t->nrank) {
								int up = g % 2 ? -1 : 1; /* the cable to the next box, GPU 2p to 2p + 1 */
								CU_ASSERT(x == (b + up + boxes) % boxes && y == g + up);
							} else if (sscanf(other, "gpu(%d, %d)", &x, &y) == 2 && v < t->nrank) {
								CU_ASSERT_EQUAL(x, b); /* xGMI: within the box */
							}
						}
					}
				}
	}
	CU_ASSERT(checked > 300);
	arena_free(&a);
}

/* The form's mistakes, each located. */
static void
test_rails_errors(void)
{
	static const struct {
		const char *text, *message;
	} cases[] = {
		{"topology C = rails(boxes 2, gpus 8);\n", "1:14: error: rails needs 'nic_gbps'"},
		{"topology C = rails(boxes 0, gpus 8, nic_gbps 400);\n",
		 "1:26: error: the boxes of rails must be at least 1, got 0"},
		{"topology C = rails(boxes 2, gpus 1, nic_gbps 400);\n",
		 "1:34: error: the gpus of rails must be at least 2, got 1"},
		{"topology C = rails(boxes 2000, gpus 800, nic_gbps 400);\n",
		 "1:37: error: rails has more than"},
		{"topology C = rails(boxes 2, gpus 8, nic_gbps 0);\n", "1:46: error: the nic_gbps of rails"},
		{"topology C = rails(boxes 2, gpus 8, nic_gbps 400);\n"
		 "collective broadcast B on C { algorithm packing; root 16; }\n",
		 "2:55: error: node 16 is a switch, not a rank"},
		{"topology C = rails(boxes 2, gpus 8, nic_gbps 400);\n"
		 "collective broadcast B on C { algorithm packing; root (1, 8); }\n",
		 "2:59: error: coordinate 2 of this node is 8; rails(boxes 2, gpus 8) takes 0..7"},
		{"topology C = xgmi_rails(boxes 2, gpus 8);\n", "1:14: error: xgmi_rails needs 'nic_gbps'"},
		{"topology C = xgmi_rails(boxes 2, gpus 1, nic_gbps 400);\n",
		 "1:39: error: the gpus of xgmi_rails must be at least 2, got 1"},
		{"topology C = xgmi_rails(boxes 2, gpus 8, nic_gbps 400);\n"
		 "collective broadcast B on C { algorithm packing; root 16; }\n",
		 "2:55: error: node 16 is a switch, not a rank"},
		{"topology C = xgmi_rails(boxes 2, gpus 8, nic_gbps 400);\n"
		 "collective broadcast B on C { algorithm packing; root (2, 0); }\n",
		 "2:56: error: coordinate 1 of this node is 2; xgmi_rails(boxes 2, gpus 8) takes 0..1"},
		{"topology C = leaf_spine_boxes(boxes 2, gpus 8, nic_gbps 400);\n",
		 "1:14: error: leaf_spine_boxes needs 'spines'"},
		{"topology C = leaf_spine_boxes(boxes 2, gpus 8, nic_gbps 400, spines 4);\n"
		 "collective broadcast B on C { algorithm packing; root 16; }\n",
		 "2:55: error: node 16 is a switch, not a rank"},
		{"topology C = xgmi_rails(boxes 2, gpus 4, nic_gbps 100, links 4, 2, 1);\n",
		 "1:56: error: xgmi_rails(boxes 2, gpus 4) has 6 pairs of GPUs in a box (0-1, 0-2, ..., "
		 "2-3): 'links' takes a link count for each, got 3"},
		{"topology C = xgmi_rails(boxes 2, gpus 3, nic_gbps 100, links 4, 0, 1);\n",
		 "1:65: error: the links of xgmi_rails must be at least 1, got 0"},
		/* names */
		{"topology C = rails(boxes 2, gpus 8, nic_gbps 400);\n"
		 "collective broadcast B on C { algorithm packing; root gpu(1, 8); }\n",
		 "2:62: error: index 2 of gpu is 8; rails(boxes 2, gpus 8) has gpus 0..7"},
		{"topology C = rails(boxes 2, gpus 8, nic_gbps 400);\n"
		 "collective broadcast B on C { algorithm packing; root rail(3); }\n",
		 "2:55: error: rail(3) is a switch, not a rank"},
		{"topology C = rails(boxes 2, gpus 8, nic_gbps 400);\n"
		 "collective broadcast B on C { algorithm packing; root nic(0, 3); }\n",
		 "2:55: error: nic(0, 3) is no node: rails models a NIC as its GPU's link to its rail"},
		{"topology C = rails(boxes 2, gpus 8, nic_gbps 400);\n"
		 "collective broadcast B on C { algorithm packing; root leaf(0); }\n",
		 "2:55: error: rails(boxes 2, gpus 8) names no node 'leaf'; its names are gpu(0..1, 0..7), "
		 "nvswitch(0..1), rail(0..7), nic(0..1, 0..7)"},
		{"topology C = rails(boxes 2, gpus 8, nic_gbps 400);\n"
		 "collective broadcast B on C { algorithm packing; root gpu(1); }\n",
		 "2:55: error: gpu of rails(boxes 2, gpus 8) takes 2 indices, got 1"},
		{"topology C = xgmi_rails(boxes 2, gpus 8, nic_gbps 400);\n"
		 "collective broadcast B on C { algorithm packing; root nvswitch(0); }\n",
		 "2:55: error: xgmi_rails(boxes 2, gpus 8) names no node 'nvswitch'"},
		{"topology C = leaf_spine_boxes(boxes 2, gpus 8, nic_gbps 400, spines 4);\n"
		 "trees D = disjoint(C, roots gpu(0, 0), spine(4));\n",
		 "2:46: error: index 1 of spine is 4; leaf_spine_boxes(boxes 2, gpus 8, spines 4) has spines "
		 "0..3"},
		{"topology T = torus(4, 4);\n"
		 "collective broadcast B on T { algorithm packing; root gpu(0, 0); }\n",
		 "2:55: error: nodes of torus(4, 4) have no names; name them by id or coordinates"},
		{"topology C = rails(boxes 2, gpus 2, nic_gbps 400);\n"
		 "collective broadcast B on C { root gpu(0, 0); schedule { round { send 0 from gpu(0, 0) "
		 "to gpu(0) copy; } } }\n",
		 "2:91: error: gpu takes 2 indices, got 1"},
	};
	Diag dgv = diag_new(), *dg = &dgv;
	for (size_t i = 0; i < countof(cases); i++) {
		Checked c;
		check_str(dg, &c, cases[i].text);
		CU_ASSERT(c.errors > 0);
		ASSERT_DIAG(&c, cases[i].message);
		checked_free(&c);
	}
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
	Diag dgv = diag_new(), *dg = &dgv;
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
		check_str(dg, &c, text);
		Prog p = {0};
		CU_ASSERT_EQUAL(c.errors, 0);
		if (c.errors == 0 && lower(dg, c.file, &p) == 0) {
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
	Diag dgv = diag_new(), *dg = &dgv;
	static const char *const decl[] = {
		"torus(4, 4, 2)", "mesh(3, 5)", "supermesh(4, 6, alter)", "supermesh(4, 4, bi)",
		"hyperx(3, 4)", "spine_leaf(spines 3, leaves 4, hosts 2)", "ring(8)", "full(5)",
		"optical_ring(8, ports 16)", "optical_ring(8, ports 4)",
	};
	for (size_t i = 0; i < countof(decl); i++) {
		char text[128], buf[128];
		snprintf(text, sizeof text, "topology T = %s;", decl[i]);
		Checked c;
		check_str(dg, &c, text);
		Prog p = {0};
		if (c.errors == 0 && lower(dg, c.file, &p) == 0)
			topo_describe(p.topo[0], buf, sizeof buf);
		else
			snprintf(buf, sizeof buf, "(did not build)");
		assert_named(strcmp(buf, decl[i]) == 0, __LINE__, __FILE__, "%s described as %s",
		             decl[i], buf);
		prog_free(&p);
		checked_free(&c);
	}
}

/* Bandwidths of a GPU box: xGMI links and a switch's (bits/s). */
#define XGMI 512e9 /* 64 GB/s */
#define PCIE 128e9 /* 16 GB/s */

static int
add_pair(Link *l, int n, int a, int b, double bw)
{
	l[n++] = (Link){.src = a, .dst = b, .dim = -1, .bandwidth = bw};
	l[n++] = (Link){.src = b, .dst = a, .dim = -1, .bandwidth = bw};
	return n;
}

/* The nodes a policy's route visits after src, each plus 1, as a number:
 * 0 2 -> 13. */
static int
route_digits(const Topo *t, RoutePolicy policy, int src, int dst)
{
	Routes r;
	routes_init(&r, t, policy);
	int nodes[16], n = route_nodes(&r, src, dst, nodes), v = 0;
	for (int i = 0; i < n; i++)
		v = 10 * v + nodes[i] + 1;
	routes_free(&r);
	return n < 0 ? -1 : v;
}

/* Routes by bandwidth on hand-made graphs where the fewest hops are slower. */
static void
test_routes_fastest(void)
{
	Arena a = {0};
	Link l[64];
	/* four GPUs on a ring of xGMI links, and a switch (4) whose links are
	 * written first: by hops 0 -> 2 goes through the switch (port order),
	 * by bandwidth over two xGMI hops */
	int n = 0;
	for (int g = 0; g < 4; g++)
		n = add_pair(l, n, g, 4, PCIE);
	for (int g = 0; g < 4; g++)
		n = add_pair(l, n, g, (g + 1) % 4, XGMI);
	unsigned char sw[5] = {0, 0, 0, 0, 1};
	Topo *box = topo_graph(&a, "B", 5, sw, n, l, net_defaults);
	CU_ASSERT_EQUAL(route_digits(box, ROUTE_ECMP, 0, 2), 53);    /* 4, 2 */
	CU_ASSERT_EQUAL(route_digits(box, ROUTE_FASTEST, 0, 2), 23); /* 1, 2 */
	CU_ASSERT_EQUAL(route_digits(box, ROUTE_FASTEST, 1, 3), 14); /* 0, 3 */
	CU_ASSERT_EQUAL(route_digits(box, ROUTE_FASTEST, 0, 1), 2);
	/* three xGMI hops beat one slow link; of two xGMI paths the shorter */
	n = add_pair(l, 0, 0, 1, PCIE);
	n = add_pair(l, n, 0, 3, XGMI);
	n = add_pair(l, n, 3, 4, XGMI);
	n = add_pair(l, n, 4, 1, XGMI);
	n = add_pair(l, n, 0, 2, XGMI);
	n = add_pair(l, n, 2, 1, XGMI);
	Topo *detour = topo_graph(&a, "D", 5, NULL, n, l, net_defaults);
	CU_ASSERT_EQUAL(route_digits(detour, ROUTE_ECMP, 0, 1), 2);
	CU_ASSERT_EQUAL(route_digits(detour, ROUTE_FASTEST, 0, 1), 32); /* 2, 1 */
	CU_ASSERT_EQUAL(route_digits(detour, ROUTE_FASTEST, 3, 1), 52); /* 4, 1 */
	/* one-way links: a fast cycle 1 -> 2 -> 0 and a slow pair 0 <-> 1 */
	n = add_pair(l, 0, 0, 1, PCIE);
	l[n++] = (Link){.src = 1, .dst = 2, .dim = -1, .bandwidth = XGMI};
	l[n++] = (Link){.src = 2, .dst = 0, .dim = -1, .bandwidth = XGMI};
	Topo *oneway = topo_graph(&a, "W", 3, NULL, n, l, net_defaults);
	CU_ASSERT_EQUAL(route_digits(oneway, ROUTE_ECMP, 1, 0), 1);
	CU_ASSERT_EQUAL(route_digits(oneway, ROUTE_FASTEST, 1, 0), 31); /* 2, 0 */
	CU_ASSERT_EQUAL(route_digits(oneway, ROUTE_FASTEST, 0, 1), 2);  /* the only way */
	CU_ASSERT_EQUAL(route_digits(oneway, ROUTE_FASTEST, 0, 2), 23); /* 1, 2 */
	/* parallel links 0 -> 1: a slow copy first, then two fast ones; routes
	 * spread over the fast copies alone, (src + dst) mod 2 */
	n = 0;
	l[n++] = (Link){.src = 0, .dst = 1, .dim = -1, .bandwidth = PCIE};
	l[n++] = (Link){.src = 0, .dst = 1, .dim = -1, .bandwidth = XGMI};
	l[n++] = (Link){.src = 0, .dst = 1, .dim = -1, .bandwidth = XGMI};
	n = add_pair(l, n, 1, 2, XGMI);
	l[n++] = (Link){.src = 1, .dst = 0, .dim = -1, .bandwidth = XGMI};
	Topo *par = topo_graph(&a, "P", 3, NULL, n, l, net_defaults);
	Routes r, e;
	routes_init(&r, par, ROUTE_FASTEST);
	routes_init(&e, par, ROUTE_ECMP);
	const int *lk;
	CU_ASSERT_EQUAL(route_get(&r, 0, 1, &lk), 1);
	CU_ASSERT_EQUAL(par->link[lk[0]].copy, 2);
	CU_ASSERT_EQUAL(route_get(&r, 0, 2, &lk), 2);
	CU_ASSERT_EQUAL(par->link[lk[0]].copy, 1);
	CU_ASSERT_EQUAL(route_get(&e, 0, 1, &lk), 1);
	CU_ASSERT_EQUAL(par->link[lk[0]].copy, 1); /* (0 + 1) mod 3 */
	CU_ASSERT_EQUAL(route_get(&e, 0, 2, &lk), 2);
	CU_ASSERT_EQUAL(par->link[lk[0]].copy, 2);
	routes_free(&r);
	routes_free(&e);
	arena_free(&a);
}

/* Every pair's ROUTE_FASTEST and ROUTE_ECMP routes are the same links. */
static int
fastest_differs(const Topo *t)
{
	Routes x, y;
	routes_init(&x, t, ROUTE_FASTEST);
	routes_init(&y, t, ROUTE_ECMP);
	int differ = 0;
	for (int i = 0; i < t->nnode; i++)
		for (int j = 0; j < t->nnode; j++) {
			const int *lx, *ly;
			int nx = route_get(&x, i, j, &lx), ny = route_get(&y, i, j, &ly);
			differ += nx != ny || (nx > 0 && memcmp(lx, ly, (size_t)nx * sizeof *lx) != 0);
		}
	routes_free(&x);
	routes_free(&y);
	return differ;
}

/* Where every link has one bandwidth, fastest is shortest_path to the link. */
static void
test_routes_uniform(void)
{
	Arena a = {0};
	Topo *t[] = {make(&a, TK_TORUS, 2, 5, 6, 0),  make(&a, TK_TORUS, 3, 2, 4, 3),
	             make(&a, TK_RING, 1, 8, 0, 0),   make(&a, TK_MESH, 2, 4, 5, 0),
	             make(&a, TK_HYPERX, 2, 3, 4, 0), make(&a, TK_FULL, 1, 6, 0, 0),
	             supermesh(&a, 4, 4, 0),          supermesh(&a, 4, 6, 1),
	             topo_spine_leaf(&a, "F", 4, 4, 4, net_defaults),
	             topo_optical_ring(&a, "O", 8, 16, net_defaults), NULL, NULL};
	/* the Petersen graph with one doubled edge and a one-way chord, all
	 * links at 16 GB/s; then every link at the default */
	Link l[64];
	int n = 0;
	for (int i = 0; i < 5; i++) {
		n = add_pair(l, n, i, (i + 1) % 5, PCIE);
		n = add_pair(l, n, i, i + 5, PCIE);
		n = add_pair(l, n, 5 + i, 5 + (i + 2) % 5, PCIE);
	}
	n = add_pair(l, n, 0, 1, PCIE);
	l[n++] = (Link){.src = 0, .dst = 2, .dim = -1, .bandwidth = PCIE};
	t[10] = topo_graph(&a, "P", 10, NULL, n, l, net_defaults);
	for (int i = 0; i < n; i++)
		l[i].bandwidth = net_defaults.bandwidth;
	t[11] = topo_graph(&a, "Q", 10, NULL, n, l, net_defaults);
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		char name[64];
		topo_describe(t[i], name, sizeof name);
		assert_named(fastest_differs(t[i]) == 0, __LINE__, __FILE__,
		             "fastest != shortest_path on %s (%zu)", name, i);
	}
	arena_free(&a);
}

/* By brute force: the largest b such that links of at least b join src to
 * dst (0: none), and the fewest hops over them. */
static double
brute_widest(const Topo *t, int src, int dst, int *hops)
{
	double best = 0;
	*hops = -1;
	for (int k = 0; k < t->nlink; k++) {
		double b = t->link[k].bandwidth;
		int dist[16], queue[16], head = 0, tail = 0;
		for (int v = 0; v < t->nnode; v++)
			dist[v] = -1;
		dist[src] = 0;
		queue[tail++] = src;
		while (head < tail) {
			int v = queue[head++];
			for (int i = t->out[v]; i < t->out[v + 1]; i++)
				if (t->link[i].bandwidth >= b && dist[t->link[i].dst] < 0) {
					dist[t->link[i].dst] = dist[v] + 1;
					queue[tail++] = t->link[i].dst;
				}
		}
		if (dist[dst] >= 0 && b > best) {
			best = b;
			*hops = dist[dst];
		}
	}
	return best;
}

/* Generated graphs (one-way and parallel links, four bandwidths): every
 * fastest route is a path from src to dst as wide as any, and of the
 * widest paths one with the fewest hops. */
static void
test_routes_fastest_generated(void)
{
	static const double bw[4] = {64e9, 128e9, 256e9, 512e9};
	unsigned seed = 33;
	int bad = 0, pairs = 0, detours = 0;
	for (int g = 0; g < 200; g++) {
		Arena a = {0};
		Link l[48];
		int nnode = 4 + g % 9, n = 0;
		while (n < 12 + g % 30) {
			seed = seed * 1103515245u + 12345u;
			int u = (int)(seed >> 8) % nnode, v = (int)(seed >> 16) % nnode;
			double b = bw[(seed >> 24) % 4];
			if (u == v)
				continue;
			l[n++] = (Link){.src = u, .dst = v, .dim = -1, .bandwidth = b};
			if ((seed >> 28) % 4 != 0 && n < 48) /* a quarter one-way */
				l[n++] = (Link){.src = v, .dst = u, .dim = -1, .bandwidth = b};
		}
		Topo *t = topo_graph(&a, "G", nnode, NULL, n, l, net_defaults);
		Routes r, e;
		routes_init(&r, t, ROUTE_FASTEST);
		routes_init(&e, t, ROUTE_ECMP);
		for (int s = 0; s < nnode; s++)
			for (int d = 0; d < nnode; d++) {
				if (s == d)
					continue;
				int hops;
				double w = brute_widest(t, s, d, &hops), least = DBL_MAX;
				const int *lk, *le;
				int len = route_get(&r, s, d, &lk), elen = route_get(&e, s, d, &le);
				int at = s;
				for (int i = 0; i < len; i++) {
					bad += t->link[lk[i]].src != at;
					at = t->link[lk[i]].dst;
					least = t->link[lk[i]].bandwidth < least ? t->link[lk[i]].bandwidth : least;
				}
				bad += len != hops || (len > 0 && (at != d || least != w));
				detours += len > elen;
				pairs += len > 0;
			}
		routes_free(&r);
		routes_free(&e);
		arena_free(&a);
	}
	assert_named(bad == 0, __LINE__, __FILE__, "%d of %d fastest routes not widest-then-fewest",
	             bad, pairs);
	/* the instances hold routes that are longer than the fewest hops */
	assert_named(detours > 100 && pairs > 2000, __LINE__, __FILE__, "%d detours, %d pairs",
	             detours, pairs);
}

CU_TestInfo topo_tests[] = {
	{"topo_describe: every form as declared", test_describe_every_form},
	{"every form has a builder and an estimate (topo_builders[])", test_builders_complete},
	{"tori and rings", test_tori},
	{"meshes and supermeshes", test_meshes},
	{"hyperx, full, spine-leaf, optical ring, graph", test_others},
	{"rails: generated sizes, and the 2 x 8 graph it replaces", test_rails},
	{"rails: every mistake located", test_rails_errors},
	{"cluster forms: every node's name reads back as its id and agrees with its links",
	 test_names_generated},
	{"xgmi_rails: generated sizes, a link per pair in a box", test_xgmi_rails},
	{"xgmi_rails: links per pair on generated boxes, described as declared", test_xgmi_pair_counts},
	{"leaf_spine_boxes: generated sizes, a leaf per box, every leaf on every spine",
	 test_leaf_spine_boxes},
	{"routes: shortest_path, dor, cache", test_routes},
	{"routes: fastest by bandwidth (xGMI detour, one-way, parallel links)", test_routes_fastest},
	{"routes: fastest = shortest_path where every link has one bandwidth", test_routes_uniform},
	{"routes: fastest is widest then fewest hops on generated graphs",
	 test_routes_fastest_generated},
	CU_TEST_INFO_NULL,
};
