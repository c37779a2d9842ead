/* test_flow.c: ir/flow.h, Dinic's max flow: a textbook network, the limit,
 * parallel and one-way edges, capacity changes and resets, and random
 * graphs whose max flow must equal the least s-t cut found by trying every
 * node subset, with capacity and conservation checked on the flow itself. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flow.h"
#include "tests.h"

/* CLRS's figure 26.1 network: max flow 23 from 0 to 5. */
static FlowGraph *
clrs(void)
{
	static const int e[][3] = {{0, 1, 16}, {0, 2, 13}, {1, 3, 12}, {2, 1, 4}, {2, 4, 14},
	                           {3, 2, 9},  {3, 5, 20}, {4, 3, 7},  {4, 5, 4}};
	FlowGraph *g = flow_new(6);
	for (size_t i = 0; i < sizeof e / sizeof e[0]; i++)
		flow_add_edge(g, e[i][0], e[i][1], e[i][2]);
	return g;
}

/* Whether the flow respects capacities and is conserved at every node but
 * s and t, where the net outflow is value and -value. */
static bool
valid_flow(const FlowGraph *g, int s, int t, int64_t value)
{
	int n = flow_nnode(g);
	int64_t *net = calloc((size_t)n, sizeof *net);
	bool ok = true;
	for (int e = 0; e < flow_nedge(g); e++) {
		int64_t f = flow_edge_flow(g, e);
		ok &= f >= 0 && f <= flow_edge_cap(g, e);
		net[flow_edge_src(g, e)] += f;
		net[flow_edge_dst(g, e)] -= f;
	}
	for (int v = 0; v < n; v++)
		ok &= net[v] == (v == s ? value : v == t ? -value : 0);
	free(net);
	return ok;
}

static void
test_textbook(void)
{
	FlowGraph *g = clrs();
	CU_ASSERT_EQUAL(flow_max(g, 0, 5, FLOW_INF), 23);
	CU_ASSERT(valid_flow(g, 0, 5, 23));
	unsigned char side[6];
	CU_ASSERT_EQUAL(flow_source_side(g, 0, side), 4); /* {0, 1, 2, 4} */
	CU_ASSERT(side[0] && side[1] && side[2] && side[4] && !side[3] && !side[5]);
	CU_ASSERT_EQUAL(flow_cut_cap(g, side), 23);
	/* again from a max flow: nothing more */
	CU_ASSERT_EQUAL(flow_max(g, 0, 5, FLOW_INF), 0);
	flow_reset(g);
	CU_ASSERT(valid_flow(g, 0, 5, 0));
	CU_ASSERT_EQUAL(flow_max(g, 5, 0, FLOW_INF), 0); /* one-way edges */
	flow_free(g);
}

static void
test_limit_and_continue(void)
{
	FlowGraph *g = clrs();
	CU_ASSERT_EQUAL(flow_max(g, 0, 5, 10), 10);
	CU_ASSERT(valid_flow(g, 0, 5, 10));
	CU_ASSERT_EQUAL(flow_max(g, 0, 5, 5), 5);
	CU_ASSERT_EQUAL(flow_max(g, 0, 5, FLOW_INF), 8);
	CU_ASSERT(valid_flow(g, 0, 5, 23));
	/* raise the bottleneck 4 -> 5 (edge 8, 4 -> 5): the flow continues */
	CU_ASSERT(flow_set_cap(g, 8, 10));
	int64_t more = flow_max(g, 0, 5, FLOW_INF);
	CU_ASSERT(more > 0);
	CU_ASSERT(valid_flow(g, 0, 5, 23 + more));
	/* lower an edge below its flow: every flow is reset */
	int e = 0;
	while (flow_edge_flow(g, e) == 0)
		e++;
	CU_ASSERT_FALSE(flow_set_cap(g, e, flow_edge_flow(g, e) - 1));
	CU_ASSERT(valid_flow(g, 0, 5, 0));
	flow_free(g);
}

static void
test_parallel_and_infinite(void)
{
	FlowGraph *g = flow_new(3);
	flow_add_edge(g, 0, 1, FLOW_INF);
	flow_add_edge(g, 0, 1, FLOW_INF);
	flow_add_edge(g, 1, 2, 3);
	flow_add_edge(g, 1, 2, 4);
	flow_add_edge(g, 1, 1, 9); /* a loop carries nothing */
	CU_ASSERT_EQUAL(flow_max(g, 0, 2, FLOW_INF), 7);
	CU_ASSERT(valid_flow(g, 0, 2, 7));
	unsigned char side[3];
	CU_ASSERT_EQUAL(flow_source_side(g, 0, side), 2);
	CU_ASSERT_EQUAL(flow_cut_cap(g, side), 7);
	/* unbounded: the flow stops at the limit, never overflows */
	flow_set_cap(g, 2, FLOW_INF);
	flow_reset(g);
	CU_ASSERT_EQUAL(flow_max(g, 0, 2, FLOW_INF), FLOW_INF);
	flow_free(g);
}

static uint64_t
next_rand(uint64_t *s)
{
	*s = *s * 6364136223846793005u + 1442695040888963407u;
	return *s >> 33;
}

/* Random graphs of 2..9 nodes with parallel and one-way edges: the max flow
 * of every ordered pair is the least cut over all 2^(n-2) subsets, and the
 * source side found is a cut of that capacity. */
static void
test_random_against_every_cut(void)
{
	uint64_t seed = 33;
	int wrong = 0, cases = 0;
	for (int round = 0; round < 300; round++) {
		int n = 2 + (int)(next_rand(&seed) % 8), m = (int)(next_rand(&seed) % (3 * n + 1));
		FlowGraph *g = flow_new(n);
		for (int i = 0; i < m; i++)
			flow_add_edge(g, (int)(next_rand(&seed) % n), (int)(next_rand(&seed) % n),
			              (int64_t)(next_rand(&seed) % 20));
		for (int s = 0; s < n; s++)
			for (int t = 0; t < n; t++) {
				if (s == t)
					continue;
				flow_reset(g);
				int64_t f = flow_max(g, s, t, FLOW_INF);
				int64_t best = FLOW_INF;
				unsigned char side[16];
				for (unsigned mask = 0; mask < 1u << n; mask++) {
					if (!(mask >> s & 1) || (mask >> t & 1))
						continue;
					for (int v = 0; v < n; v++)
						side[v] = mask >> v & 1;
					int64_t c = flow_cut_cap(g, side);
					best = c < best ? c : best;
				}
				flow_source_side(g, s, side);
				wrong += f != best || !valid_flow(g, s, t, f) || side[t] ||
				         flow_cut_cap(g, side) != f;
				/* with a limit below the max: exactly the limit */
				flow_reset(g);
				if (f > 1)
					wrong += flow_max(g, s, t, f - 1) != f - 1;
				cases++;
			}
		flow_free(g);
	}
	CU_ASSERT(cases > 1000);
	CU_ASSERT_EQUAL(wrong, 0);
}

CU_TestInfo flow_tests[] = {
	{"a textbook network: 23, its cut, one-way edges", test_textbook},
	{"a limit stops the flow; more capacity continues it; less resets it", test_limit_and_continue},
	{"parallel edges, loops, unbounded capacities", test_parallel_and_infinite},
	{"random graphs: max flow = least cut over every subset", test_random_against_every_cut},
	CU_TEST_INFO_NULL,
};
