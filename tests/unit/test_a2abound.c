/* test_a2abound.c: ir/a2abound.c, all-to-all's concurrent flow. The
 * interval's ends are checked against closed forms (rings both ways and one
 * way, tori, full graphs: the flow is run there too, with the closed form
 * withheld) and, on random small graphs with switches, one-way links and
 * random capacities, against two independent methods: every vertex set's
 * sparsest-cut ratio is at least lo (lo is a flow), and the hop-shortest
 * routing, measured here, is at most hi (hi is a dual). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cutbound.h"
#include "ir.h"
#include "tests.h"

#define GBPS 8000000000LL /* 1 GB/s in bits/s */

static double sparsest_cut(const CutNet *n, const int *w);

/* The interval of n with the closed form withheld (the flow runs). */
static A2ABound
by_flow(const CutNet *n)
{
	CutNet m = *n;
	m.arc_transitive = false;
	A2ABound b;
	CU_ASSERT_EQUAL(a2abound(&m, &b), CUT_OK);
	free(b.cut);
	b.cut = NULL;
	return b;
}

/* lo <= want <= hi within rounding, and hi / lo <= 1 + A2A_GAP */
static void
holds(A2ABound b, double want, const char *what)
{
	assert_named(b.lo <= want * (1 + 1e-9) && want <= b.hi * (1 + 1e-9) &&
	                     b.hi <= b.lo * (1 + A2A_GAP) * (1 + 1e-12),
	             __LINE__, __FILE__, "%s: [%.9g, %.9g] against %.9g (%d phases)", what, b.lo,
	             b.hi, want, b.phases);
}

/* ring(p) both ways, links of c: sum of distances p (p^2 - (p odd)) / 4,
 * 2p links: lambda* = 8c / (p^2 - (p odd)); one way: p(p-1)/2 hops per
 * source, p links, 2c / (p(p-1)) -- its sparsest cut (an arc of p/2) is
 * 4c / p^2, so the flow-cut gap is 2(p-1)/p, 1.75 at p = 8 */
static void
test_rings(void)
{
	Arena a = {0};
	const double c = 50 * 8e9;
	for (int p = 3; p <= 12; p++) {
		int size[1] = {p};
		Topo *t = topo_new(&a, TK_RING, "R", 1, size, 0, net_defaults);
		int *rn = malloc((size_t)p * sizeof *rn);
		for (int v = 0; v < p; v++)
			rn[v] = v;
		CutNet n;
		CutLink *l = cutnet_topo(t, rn, p, 0, &n);
		CU_ASSERT(n.arc_transitive);
		double want = 8 * c / (p * p - (p % 2));
		CutBound cb;
		CU_ASSERT_EQUAL(cutbound(&n, CK_ALLTOALL, &cb), CUT_OK);
		CU_ASSERT(cb.a2a.closed && cb.a2a.lo == cb.a2a.hi);
		CU_ASSERT(fabs(cb.a2a.hi - want) <= 1e-9 * want && !cb.bound.cut);
		CU_ASSERT(fabs(cb.busbw - want * (p - 1) / 8) <= 1e-9 * cb.busbw);
		cutbound_free(&cb);
		char what[48];
		snprintf(what, sizeof what, "ring(%d) by the flow", p);
		holds(by_flow(&n), want, what);
		/* one way: every link i -> i + 1 */
		CutLink *one = malloc((size_t)p * sizeof *one);
		for (int v = 0; v < p; v++)
			one[v] = (CutLink){v, (v + 1) % p, (int64_t)c};
		CutNet m = {.nnode = p, .nlink = p, .link = one, .nrank = p, .rank_node = rn};
		snprintf(what, sizeof what, "one-way ring(%d)", p);
		A2ABound b = by_flow(&m);
		holds(b, 2 * c / (p * (p - 1.0)), what);
		/* the cut alone would overstate it by 2(p-1)/p (p even) */
		int w[12] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
		if (p % 2 == 0)
			CU_ASSERT(fabs(sparsest_cut(&m, w) / b.hi - 2.0 * (p - 1) / p) <= 0.011 * 2);
		free(one);
		free(l);
		free(rn);
	}
	arena_free(&a);
}

/* torus(k, k), k even: 4k^2 links, k^3/2 hops per source: 8c / k^3, the
 * bisection's too (2k links each way, (k^2/2)^2 pairs); full(n): c */
static void
test_tori_full(void)
{
	Arena a = {0};
	const double c = 50 * 8e9;
	for (int k = 2; k <= 4; k += 2) {
		int size[2] = {k, k};
		Topo *t = topo_new(&a, TK_TORUS, "T", 2, size, 0, net_defaults);
		int rn[16];
		for (int v = 0; v < k * k; v++)
			rn[v] = v;
		CutNet n;
		CutLink *l = cutnet_topo(t, rn, k * k, 0, &n);
		CU_ASSERT(n.arc_transitive);
		A2ABound b;
		CU_ASSERT_EQUAL(a2abound(&n, &b), CUT_OK);
		double want = 8 * c / (k * k * k);
		CU_ASSERT(fabs(b.hi - want) <= 1e-9 * want && b.lo == b.hi && !b.cut);
		holds(by_flow(&n), want, k == 2 ? "torus(2, 2)" : "torus(4, 4)");
		free(l);
	}
	/* torus(2, 4) is not arc-transitive: the flow runs; its hop bound is
	 * not its cut (both checked by the random test's methods) */
	for (int n = 2; n <= 6; n++) {
		int size[1] = {n};
		Topo *t = topo_new(&a, TK_FULL, "F", 1, size, 0, net_defaults);
		int rn[6] = {0, 1, 2, 3, 4, 5};
		CutNet cn;
		CutLink *l = cutnet_topo(t, rn, n, 0, &cn);
		holds(by_flow(&cn), c, "full(n)");
		free(l);
	}
	arena_free(&a);
}

/* least over vertex sets S of B+(S) / (sum of w(s) w(t), s in S, t not):
 * lambda* is at most it */
static double
sparsest_cut(const CutNet *n, const int *w)
{
	double best = INFINITY;
	for (unsigned set = 1; set + 1 < 1u << n->nnode; set++) {
		double out = 0, in = 0, pairs;
		for (int v = 0; v < n->nnode; v++)
			*((set >> v) & 1 ? &in : &out) += w[v];
		pairs = in * out;
		if (pairs == 0)
			continue;
		double cap = 0;
		for (int l = 0; l < n->nlink; l++)
			if ((set >> n->link[l].src & 1) && !(set >> n->link[l].dst & 1))
				cap += (double)n->link[l].bw;
		best = fmin(best, cap / pairs);
	}
	return best;
}

/* lambda of a routing: every pair on one hop-shortest path (BFS from the
 * source, links in order), 1 over the worst load per capacity */
static double
hop_routing(const CutNet *n, const int *w)
{
	double *load = calloc((size_t)n->nlink, sizeof *load);
	int pred[16], queue[16];
	for (int s = 0; s < n->nnode; s++) {
		if (!w[s])
			continue;
		for (int v = 0; v < n->nnode; v++)
			pred[v] = -2;
		pred[s] = -1;
		int head = 0, tail = 0;
		queue[tail++] = s;
		while (head < tail) {
			int v = queue[head++];
			for (int l = 0; l < n->nlink; l++)
				if (n->link[l].src == v && n->link[l].bw > 0 && pred[n->link[l].dst] == -2) {
					pred[n->link[l].dst] = l;
					queue[tail++] = n->link[l].dst;
				}
		}
		for (int t = 0; t < n->nnode; t++)
			for (int v = t; t != s && w[t] && pred[v] >= 0; v = n->link[pred[v]].src)
				load[pred[v]] += (double)w[s] * w[t];
	}
	double worst = 0;
	for (int l = 0; l < n->nlink; l++)
		if (load[l] > 0)
			worst = fmax(worst, load[l] / (double)n->link[l].bw);
	free(load);
	return worst > 0 ? 1 / worst : INFINITY;
}

/* Random networks of 3-6 ranks and 0-3 switches: links both ways or one
 * way, 1-4 x 12.5 GB/s, some parallel; a strongly connected backbone (a
 * ring through every node) so that every pair has a path. */
static void
test_random(void)
{
	srand(33);
	int gaps = 0, cuts = 0;
	for (int it = 0; it < 60; it++) {
		int nr = 3 + rand() % 6, ns = rand() % 5, nn = nr + ns, m = 0;
		CutLink link[64];
		int rn[16], w[16] = {0};
		for (int v = 0; v < nn; v++)
			link[m++] = (CutLink){v, (v + 1) % nn, (1 + rand() % 4) * 100000000000LL};
		for (int k = 0; k < 10; k++) {
			int u = rand() % nn, v = rand() % nn;
			if (u == v)
				continue;
			int64_t bw = (1 + rand() % 4) * 100000000000LL;
			link[m++] = (CutLink){u, v, bw};
			if (rand() % 2)
				link[m++] = (CutLink){v, u, bw};
		}
		for (int r = 0; r < nr; r++)
			w[rn[r] = r] = 1;
		CutNet n = {.nnode = nn, .nlink = m, .link = link, .nrank = nr, .rank_node = rn};
		A2ABound b;
		CU_ASSERT_EQUAL(a2abound(&n, &b), CUT_OK);
		double cut = sparsest_cut(&n, w), hop = hop_routing(&n, w);
		assert_named(b.lo <= cut * (1 + 1e-9) && hop <= b.hi * (1 + 1e-9) && b.lo > 0 &&
		                     b.hi <= b.lo * (1 + A2A_GAP) * (1 + 1e-12),
		             __LINE__, __FILE__,
		             "graph %d: [%.9g, %.9g], sparsest cut %.9g, hop routing %.9g (%d phases)", it,
		             b.lo, b.hi, cut, hop, b.phases);
		gaps += b.hi * (1 + A2A_GAP) < cut; /* the cut is not lambda* */
		if (b.cut) { /* the cut named gives hi */
			double out = 0, in = 0;
			for (int l = 0; l < m; l++)
				out += b.cut[link[l].src] && !b.cut[link[l].dst] ? (double)link[l].bw : 0;
			for (int v = 0; v < nn; v++)
				in += b.cut[v] ? w[v] : 0;
			CU_ASSERT(in == b.cut_ranks && out == (double)b.cut_bw);
			CU_ASSERT(fabs(out / (in * (nr - in)) - b.hi) <= 1e-9 * b.hi);
			cuts++;
			free(b.cut);
		}
	}
	/* the flow-cut gap shows on some of them: cuts alone would overstate */
	CU_ASSERT(gaps >= 5);
	CU_ASSERT(cuts >= 5 && cuts + gaps <= 60);
}

/* Refused before any flow past MAX_A2A_WORK; no pair: CUT_UNBOUNDED;
 * a rank no link reaches: lambda* = 0 */
static void
test_edges(void)
{
	CutLink link[2] = {{0, 1, GBPS}, {1, 0, GBPS}};
	int rn[3] = {0, 0, 1};
	CutNet n = {.nnode = 2, .nlink = 2, .link = link, .nrank = 2, .rank_node = rn};
	A2ABound b;
	CU_ASSERT_EQUAL(a2abound(&n, &b), CUT_UNBOUNDED); /* both ranks on node 0 */
	n.nrank = 3;
	CU_ASSERT_EQUAL(a2abound(&n, &b), CUT_OK);
	/* 2 x 1 ranks each way over one link of 1 GB/s: half of it per pair */
	CU_ASSERT(fabs(b.hi - GBPS / 2.0) <= 1e-9 * GBPS && b.hi <= b.lo * (1 + A2A_GAP));
	free(b.cut);
	link[1].bw = 0;
	CU_ASSERT_EQUAL(a2abound(&n, &b), CUT_OK);
	CU_ASSERT(b.lo == 0 && b.hi == 0);
	free(b.cut);
	CutNet big = {.nnode = 1 << 16, .nlink = 1 << 18, .link = link, .nrank = 3, .rank_node = rn};
	/* the estimate alone: no link is read */
	CU_ASSERT(a2abound_work(&big) > MAX_A2A_WORK);
}

CU_TestInfo a2abound_tests[] = {
	{"rings both ways and one way: the closed form, and the flow's interval holds it",
	 test_rings},
	{"tori and full graphs: the closed form, and the flow's interval holds it", test_tori_full},
	{"random graphs: the sparsest cut >= lo, hop routing <= hi, hi/lo <= 1 + A2A_GAP",
	 test_random},
	{"ranks on one node, an unreachable rank, the work's limit", test_edges},
	CU_TEST_INFO_NULL,
};
