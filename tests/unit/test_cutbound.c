/* test_cutbound.c: ir/cutbound.h, the cut bound of every kind. Closed forms
 * on rings, tori, meshes, full graphs and a spine-leaf fabric; two GPU boxes
 * joined by NIC links (hand-computed, heterogeneous and one-way); and random
 * small graphs (switches, one-way and parallel links, rational capacities)
 * on which every kind's rate must equal, as a fraction, the least ratio
 * over every node subset, and the cut returned must attain it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cutbound.h"
#include "ir.h"
#include "tests.h"

#define GBPS 8000000000LL /* 1 GB/s in bits/s */

/* busbw in GB/s of every kind on t: ag, rs, ar upper, ar achievable, bcast, reduce */
static void
closed_form(const Topo *t, double ag, double ar_upper, double ar_comp, double bcast,
            const char *what)
{
	CutBound b[NCOLLKIND];
	for (int k = 0; k < NCOLLKIND; k++)
		if (k != CK_ALLTOALL)
			b[k] = cut_bound_of(t, (CollKind)k);
	assert_named(near_rel(b[CK_ALLGATHER].busbw / 1e9, ag, 1e-9), __LINE__, __FILE__,
	             "%s allgather %.6g, want %.6g", what, b[CK_ALLGATHER].busbw / 1e9, ag);
	assert_named(near_rel(b[CK_REDUCE_SCATTER].busbw / 1e9, ag, 1e-9), __LINE__, __FILE__,
	             "%s reduce_scatter %.6g, want %.6g", what, b[CK_REDUCE_SCATTER].busbw / 1e9,
	             ag);
	assert_named(near_rel(b[CK_ALLREDUCE].busbw / 1e9, ar_upper, 1e-9), __LINE__, __FILE__,
	             "%s allreduce upper %.6g, want %.6g", what, b[CK_ALLREDUCE].busbw / 1e9,
	             ar_upper);
	assert_named(near_rel(b[CK_ALLREDUCE].achievable / 1e9, ar_comp, 1e-9), __LINE__, __FILE__,
	             "%s allreduce composition %.6g, want %.6g", what,
	             b[CK_ALLREDUCE].achievable / 1e9, ar_comp);
	assert_named(near_rel(b[CK_BROADCAST].busbw / 1e9, bcast, 1e-9) && near_rel(b[CK_REDUCE].busbw / 1e9, bcast, 1e-9),
	             __LINE__, __FILE__, "%s broadcast %.6g reduce %.6g, want %.6g", what,
	             b[CK_BROADCAST].busbw / 1e9, b[CK_REDUCE].busbw / 1e9, bcast);
	for (int k = 0; k < NCOLLKIND; k++)
		if (k != CK_ALLTOALL)
			cutbound_free(&b[k]);
}

/* Links of bandwidth B (400 Gb/s = 50 GB/s, the defaults): with degree d
 * both ways, allgather's busbw is the node's d B (the cut of all but one
 * node), allreduce's upper bound the smaller of 2(N-1)/N lambda and gossip's
 * mean out-bandwidth of a rank, d B on regular graphs, and its composition
 * d B. */
static void
test_closed_forms(void)
{
	Arena a = {0};
	const double B = 50;
	for (int n = 2; n <= 12; n++) {
		int size[1] = {n};
		Topo *t = topo_new(&a, TK_RING, "R", 1, size, 0, net_defaults);
		double d = 2, lam = d * B; /* ring(2) too: its two directions are two links */
		char what[32];
		snprintf(what, sizeof what, "ring(%d)", n);
		closed_form(t, d * B, d * B, d * B, lam, what);
		t = topo_new(&a, TK_FULL, "F", 1, size, 0, net_defaults);
		snprintf(what, sizeof what, "full(%d)", n);
		closed_form(t, (n - 1) * B, (n - 1) * B, (n - 1) * B, (n - 1) * B, what);
	}
	for (int k = 3; k <= 6; k++) {
		int size[2] = {k, k};
		char what[32];
		Topo *t = topo_new(&a, TK_TORUS, "T", 2, size, 0, net_defaults);
		snprintf(what, sizeof what, "torus(%d, %d)", k, k);
		closed_form(t, 4 * B, 4 * B, 4 * B, 4 * B, what);
		/* a mesh: the corner's two links bind all but allreduce's upper
		 * bound, gossip's: the mean degree 4(k - 1)/k */
		t = topo_new(&a, TK_MESH, "M", 2, size, 0, net_defaults);
		snprintf(what, sizeof what, "mesh(%d, %d)", k, k);
		closed_form(t, 2 * B, 4.0 * (k - 1) / k * B, 2 * B, 2 * B, what);
	}
	/* spine-leaf: a host's one link binds, however few the spines */
	for (int spines = 1; spines <= 4; spines++) {
		Topo *t = topo_spine_leaf(&a, "S", spines, 4, 4, net_defaults);
		closed_form(t, B, B, B, B, "spine_leaf");
	}
	arena_free(&a);
}

/* Two boxes of 4 GPUs (nodes 0-3, 4-7), each behind a switch (8, 9) with
 * 300 GB/s links; the switches joined by a NIC link of `ab` GB/s from box A
 * to box B and `ba` back. */
static CutNet
two_boxes(CutLink *l, int *rn, int64_t ab, int64_t ba)
{
	int m = 0;
	for (int g = 0; g < 8; g++) {
		int sw = g < 4 ? 8 : 9;
		l[m++] = (CutLink){g, sw, 300 * GBPS};
		l[m++] = (CutLink){sw, g, 300 * GBPS};
		rn[g] = g;
	}
	l[m++] = (CutLink){8, 9, ab};
	l[m++] = (CutLink){9, 8, ba};
	return (CutNet){.nnode = 10, .nlink = m, .link = l, .nrank = 8, .rank_node = rn};
}

static void
test_two_boxes(void)
{
	CutLink l[18];
	int rn[8];
	CutBound b;
	/* 12.5 GB/s each way: allgather x* = 12.5 / 4 per rank, busbw 7 x that */
	CutNet n = two_boxes(l, rn, 100000000000LL, 100000000000LL);
	CU_ASSERT_EQUAL(cutbound(&n, CK_ALLGATHER, &b), CUT_OK);
	CU_ASSERT_EQUAL(b.bound.rate.num, 25000000000LL); /* bits/s per rank */
	CU_ASSERT_EQUAL(b.bound.rate.den, 1);
	CU_ASSERT(near_rel(b.busbw, 21.875e9, 1e-9));
	CU_ASSERT_EQUAL(b.bound.cut_ranks, 4);
	CU_ASSERT_EQUAL(b.bound.cut_bw, 100000000000LL);
	CU_ASSERT(b.bound.cut[8] != b.bound.cut[9]); /* one box */
	cutbound_free(&b);
	CU_ASSERT_EQUAL(cutbound(&n, CK_ALLREDUCE, &b), CUT_OK);
	CU_ASSERT(near_rel(b.busbw, 2.0 * 7 / 8 * 12.5e9, 1e-9));
	CU_ASSERT(near_rel(b.achievable, 21.875e9, 1e-9));
	cutbound_free(&b);
	/* A -> B at 12.5 GB/s, B -> A at 25: allgather bound by A's way out,
	 * reduce-scatter by its way in (B -> A, 25 GB/s over 4 ranks = 6.25 but
	 * A -> B bounds B's ranks: 12.5 / 4); broadcast from rank 0 (in A)
	 * 12.5, reduce to rank 0 25. */
	n = two_boxes(l, rn, 100000000000LL, 200000000000LL);
	CU_ASSERT_EQUAL(cutbound(&n, CK_ALLGATHER, &b), CUT_OK);
	CU_ASSERT(near_rel(b.busbw, 21.875e9, 1e-9));
	CU_ASSERT(b.bound.cut[0] && !b.bound.cut[4]); /* box A */
	cutbound_free(&b);
	CU_ASSERT_EQUAL(cutbound(&n, CK_REDUCE_SCATTER, &b), CUT_OK);
	CU_ASSERT(near_rel(b.busbw, 21.875e9, 1e-9));
	CU_ASSERT(!b.bound.cut[0] && b.bound.cut[4]); /* box B's reduced blocks come in slowly */
	cutbound_free(&b);
	CU_ASSERT_EQUAL(cutbound(&n, CK_BROADCAST, &b), CUT_OK);
	CU_ASSERT(near_rel(b.busbw, 12.5e9, 1e-9));
	cutbound_free(&b);
	CU_ASSERT_EQUAL(cutbound(&n, CK_REDUCE, &b), CUT_OK);
	CU_ASSERT(near_rel(b.busbw, 25e9, 1e-9));
	cutbound_free(&b);
	n.root = 4; /* from box B: the fast way */
	CU_ASSERT_EQUAL(cutbound(&n, CK_BROADCAST, &b), CUT_OK);
	CU_ASSERT(near_rel(b.busbw, 25e9, 1e-9));
	cutbound_free(&b);
	/* a heterogeneous NIC that still binds: 16 GB/s and 300 GB/s in box A;
	 * allgather's composition with 12.5: x = 12.5/4; and an unbounded net */
	/* all-to-all: box A's 16 pairs to B over 12.5 GB/s, 0.78125 GB/s a
	 * pair, busbw 7 x that; the interval closes on it, the cut named */
	CU_ASSERT_EQUAL(cutbound(&n, CK_ALLTOALL, &b), CUT_OK);
	CU_ASSERT(near_rel(b.busbw / 1e9, 5.46875, 1e-9) && near_rel(b.achievable / 1e9, 5.46875, 1e-9));
	CU_ASSERT(b.bound.cut && b.bound.cut[0] && !b.bound.cut[4] && b.bound.cut_ranks == 4 &&
	          b.bound.cut_bw == 100000000000LL);
	cutbound_free(&b);
	n.nrank = 1;
	CU_ASSERT_EQUAL(cutbound(&n, CK_ALLGATHER, &b), CUT_UNBOUNDED);
}

static uint64_t
next_rand(uint64_t *s)
{
	*s = *s * 6364136223846793005u + 1442695040888963407u;
	return *s >> 33;
}

static int64_t
gcd(int64_t a, int64_t b)
{
	return b ? gcd(b, a % b) : a;
}

/* B+(mask) on the links, reversed or not */
static int64_t
out_bw(const CutNet *n, unsigned mask, bool rev)
{
	int64_t s = 0;
	for (int l = 0; l < n->nlink; l++) {
		int u = rev ? n->link[l].dst : n->link[l].src, v = rev ? n->link[l].src : n->link[l].dst;
		if ((mask >> u & 1) && !(mask >> v & 1))
			s += n->link[l].bw;
	}
	return s;
}

/* By every subset: per-rank min B+(S)/r(S) (per_rank) or min B+(S)
 * (root >= 0: S holds the root's node) over S holding a rank node and
 * missing one. */
static Frac
brute(const CutNet *n, bool rev, bool per_rank, int root)
{
	unsigned ranks = 0;
	for (int r = 0; r < n->nrank; r++)
		ranks |= 1u << n->rank_node[r];
	Frac best = {-1, 1};
	for (unsigned m = 1; m < 1u << n->nnode; m++) {
		if (!(m & ranks) || (m & ranks) == ranks)
			continue;
		if (root >= 0 && !(m >> n->rank_node[root] & 1))
			continue;
		int k = 0;
		for (int r = 0; r < n->nrank; r++)
			k += m >> n->rank_node[r] & 1;
		Frac x = {out_bw(n, m, rev), per_rank ? k : 1};
		if (best.num < 0 || frac_cmp(x, best) < 0)
			best = x;
	}
	int64_t g = gcd(best.num, best.den);
	return (Frac){best.num / g, best.den / g};
}

/* The cut returned attains the rate. */
static bool
cut_attains(const CutNet *n, const CutRate *c, bool rev, bool per_rank)
{
	unsigned m = 0;
	int k = 0;
	for (int v = 0; v < n->nnode; v++)
		m |= (unsigned)(c->cut[v] != 0) << v;
	for (int r = 0; r < n->nrank; r++)
		k += c->cut[n->rank_node[r]] != 0;
	int64_t b = out_bw(n, m, rev);
	return b == c->cut_bw && k == c->cut_ranks &&
	       frac_cmp((Frac){b, per_rank ? k : 1}, c->rate) == 0;
}

static int
check_random(const CutNet *n)
{
	int wrong = 0;
	CutBound b;
	static const struct {
		CollKind k;
		bool rev, per_rank, rooted;
	} kinds[] = {{CK_ALLGATHER, false, true, false},  {CK_REDUCE_SCATTER, true, true, false},
	             {CK_ALLREDUCE, false, false, false}, {CK_BROADCAST, false, false, true},
	             {CK_REDUCE, true, false, true}};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		if (cutbound(n, kinds[i].k, &b) != CUT_OK)
			return 1;
		Frac want = brute(n, kinds[i].rev, kinds[i].per_rank, kinds[i].rooted ? n->root : -1);
		wrong += b.bound.rate.num != want.num || b.bound.rate.den != want.den ||
		         !cut_attains(n, &b.bound, kinds[i].rev, kinds[i].per_rank);
		if (kinds[i].k == CK_ALLREDUCE) {
			Frac rs = brute(n, true, true, -1), ag = brute(n, false, true, -1);
			wrong += frac_cmp(b.rs.rate, rs) != 0 || frac_cmp(b.ag.rate, ag) != 0;
			/* the upper bound: 2(N-1)/N lambda or gossip's, whichever is less;
			 * the composition never passes it */
			double sum = 0;
			for (int l = 0; l < n->nlink; l++)
				for (int r = 0; r < n->nrank; r++)
					sum += n->link[l].src == n->rank_node[r] ? (double)n->link[l].bw : 0;
			double lam = 2.0 * (n->nrank - 1) / n->nrank * frac_value(want);
			double upper = (sum / n->nrank < lam ? sum / n->nrank : lam) / 8;
			wrong += !near_rel(b.busbw, upper, 1e-9) || b.gossip != (sum / n->nrank < lam * (1 - 1e-12));
			wrong += b.achievable > b.busbw * (1 + 1e-12);
		}
		cutbound_free(&b);
	}
	return wrong;
}

/* Random graphs of 3..12 nodes, up to a third switches, links one-way or
 * both ways, some doubled, capacities 12.5, 16, 25, 300 GB/s or 100 Gb/s
 * times 1..3: every kind against every subset. */
static void
test_random_against_every_subset(void)
{
	static const int64_t cap[] = {100000000000LL, 128000000000LL, 200000000000LL,
	                              2400000000000LL, 100000000000LL / 8};
	uint64_t seed = 33;
	int wrong = 0, graphs = 0;
	for (int round = 0; round < 200; round++) {
		int nn = 3 + (int)(next_rand(&seed) % 10), ns = (int)(next_rand(&seed) % (nn / 3 + 1));
		CutLink l[96];
		int m = 0, rn[12], nr = 0;
		for (int v = ns; v < nn; v++)
			rn[nr++] = v; /* nodes 0..ns-1 are switches */
		int want = nn + (int)(next_rand(&seed) % (2 * nn));
		for (int i = 0; i < want && m + 2 <= 96; i++) {
			int u = (int)(next_rand(&seed) % nn), v = (int)(next_rand(&seed) % nn);
			int64_t c = cap[next_rand(&seed) % 5] * (1 + (int64_t)(next_rand(&seed) % 3));
			l[m++] = (CutLink){u, v, c};
			if (next_rand(&seed) % 3)
				l[m++] = (CutLink){v, u, c};
		}
		if (nr < 2)
			continue;
		CutNet n = {.nnode = nn, .nlink = m, .link = l, .nrank = nr, .rank_node = rn,
		            .root = (int)(next_rand(&seed) % nr)};
		wrong += check_random(&n);
		graphs++;
	}
	CU_ASSERT(graphs > 150);
	CU_ASSERT_EQUAL(wrong, 0);
}

/* A GPU cluster of 128 x 8 GPUs as a spine-leaf: 1024 ranks under the
 * work limit, the host link binding. */
static void
test_gpu_cluster(void)
{
	Arena a = {0};
	Topo *t = topo_spine_leaf(&a, "C", 16, 128, 8, net_defaults);
	CutBound b = cut_bound_of(t, CK_ALLREDUCE);
	CU_ASSERT(near_rel(b.busbw, 50e9, 1e-9) && b.gossip);
	CU_ASSERT(near_rel(b.achievable, 50e9, 1e-9));
	cutbound_free(&b);
	arena_free(&a);
}

/* What a command prints (stdout), malloc'd. */
static char *
run_collc(const char *args)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, COLLC_BIN " %s 2>/dev/null", args);
	FILE *p = popen(cmd, "r");
	if (!p)
		return NULL;
	size_t n = 0, cap = 1 << 16;
	char *out = malloc(cap);
	for (size_t got; (got = fread(out + n, 1, cap - 1 - n, p)) > 0;)
		if ((n += got) == cap - 1)
			out = realloc(out, cap *= 2);
	out[n] = 0;
	pclose(p);
	return out;
}

/* examples/gpu-boxes-cut.coll through the commands: check names the box as
 * the cut, sim's bound is the cut's (not the GPUs' 300 GB/s), tune's share
 * is of it. */
static void
test_commands(void)
{
	char *out = run_collc("check examples/gpu-boxes-cut.coll");
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "  AG: allgather busbw <= 21.88 GB/s, attained (12.50 GB/s "
	                                   "out of {4, 5, 6, 7, 9}, 4 ranks)\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "  AR: allreduce busbw <= 21.88 GB/s (upper bound: 12.50 "
	                                   "GB/s out of {0, 1, 2, 3, 8}); reduce-scatter + allgather "
	                                   "reach 21.88 GB/s\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "  BC: broadcast busbw <= 12.50 GB/s (12.50 GB/s out of "
	                                   "{0, 1, 2, 3, 8}, the root's side)\n"));
	free(out);
	out = run_collc("sim examples/gpu-boxes-cut.coll --sizes 64MiB --csv");
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\nAG,allgather,ring,67108864,16777216,float,none,"));
	CU_ASSERT_EQUAL(strstr(out, ",21.875,0.57117") != NULL, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, ",12.5,0.2448"));
	CU_ASSERT_PTR_NULL(strstr(out, ",300,"));
	free(out);
	out = run_collc("tune examples/gpu-boxes-cut.coll --collective AG --sizes 64MiB");
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "; busbw bound 21.88 GB/s\n"));
	free(out);
}

/* leaf_spine_boxes on generated clusters (2..4 boxes of 2, 4 or 8 GPUs,
 * NVLink 450 GB/s, 400 Gbit/s NICs): a box's leaf has G NICs down and S
 * spine links up, so broadcast's bound, the root's box's way out, is
 * S x 50 GB/s; at 2:1 (S = G / 2) it is half the 1:1 bound (S = G), and
 * allgather's bound does not rise. */
static void
test_oversubscribed(void)
{
	Arena a = {0};
	Net net = net_defaults;
	net.bandwidth = 3600e9;
	for (int boxes = 2; boxes <= 4; boxes++)
		for (int gpus = 2; gpus <= 8; gpus *= 2) {
			CutBound bc[2], ag[2];
			for (int over = 0; over < 2; over++) {
				int spines = gpus >> over;
				Topo *t = topo_leaf_spine_boxes(&a, "C", boxes, gpus, 400, spines, net);
				bc[over] = cut_bound_of(t, CK_BROADCAST);
				ag[over] = cut_bound_of(t, CK_ALLGATHER);
				assert_named(near_rel(bc[over].busbw / 1e9, spines * 50.0, 1e-9), __LINE__, __FILE__,
				             "%d x %d, %d spines: broadcast %.6g GB/s, want %d", boxes, gpus,
				             spines, bc[over].busbw / 1e9, spines * 50);
			}
			CU_ASSERT(near_rel(bc[1].busbw * 2, bc[0].busbw, 1e-9));
			CU_ASSERT(ag[1].busbw <= ag[0].busbw * (1 + 1e-12));
			for (int k = 0; k < 2; k++)
				cutbound_free(&bc[k]), cutbound_free(&ag[k]);
		}
	arena_free(&a);
}

CU_TestInfo cutbound_tests[] = {
	{"closed forms: rings, full graphs, tori, meshes, spine-leaf", test_closed_forms},
	{"two GPU boxes joined by NIC links, both ways and one-way", test_two_boxes},
	{"random graphs: every kind equals the least ratio over every subset",
	 test_random_against_every_subset},
	{"a 1024-GPU cluster within the work limit", test_gpu_cluster},
	{"leaf_spine_boxes: 2:1 halves the broadcast bound of 1:1, generated clusters",
	 test_oversubscribed},
	{"check, sim and tune on two GPU boxes: the box's cut binds", test_commands},
	CU_TEST_INFO_NULL,
};
