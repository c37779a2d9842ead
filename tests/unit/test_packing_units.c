/* test_packing_units.c: ir/packing_units.c, a packing's block cut into a
 * power of two of units for MSCCL (AlgCtx.pack_pow2; docs/algorithms.md
 * "Units a power of two"). On generated fabrics of 8 and 16 ranks (a
 * circulant of random steps and bandwidths, every rank on a switch, as the
 * 16-GCD box) whose packing has a copy count with an odd factor, the
 * allgather, reduce-scatter and allreduce built with pack_pow2 verify, cut
 * the vector into a power of two of chunks, keep the trees' messages, and
 * every link of the allgather and reduce-scatter carries at most ceil(U /
 * k) k / U times its load at the bound (exact, the claim's proof), the
 * busiest at the factor the choice prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "cutbound.h"
#include "tests.h"

__extension__ typedef __int128 Wide;

static uint64_t
next_rand(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

/* n ranks, steps 1 and two random others, each its own bandwidth (100 to
 * 800 Gb/s), both ways; every rank on switch n at 200 Gb/s. */
static int
units_graph(char *buf, size_t cap, uint64_t *seed, int n)
{
	int k = snprintf(buf, cap, "network { link_bandwidth = 200 Gbps; link_latency = 300 ns; }\n"
	                           "topology T = graph {\n nodes %d;\n switches %d;\n", n + 1, n);
	int step[3] = {1, 2 + (int)(next_rand(seed) % (unsigned)(n / 2 - 1)), 0};
	step[2] = 2 + (int)(next_rand(seed) % (unsigned)(n / 2 - 1));
	for (int s = 0; s < 3; s++) {
		if (s == 2 && step[2] == step[1])
			break;
		int gbps = 100 * (1 + (int)(next_rand(seed) % 8));
		for (int i = 0; i < n; i++) {
			int j = (i + step[s]) % n;
			if (2 * step[s] == n && j < i)
				continue; /* the opposite rank: one link pair */
			k += snprintf(buf + k, cap - (size_t)k, " link %d <-> %d { link_bandwidth = %d Gbps; }\n",
			              i, j, gbps);
		}
	}
	for (int i = 0; i < n; i++)
		k += snprintf(buf + k, cap - (size_t)k, " link %d <-> %d;\n", i, n);
	k += snprintf(buf + k, cap - (size_t)k, "}\n"
	              "collective allgather AG on T { algorithm packing; }\n"
	              "collective reduce_scatter RS on T { algorithm packing; }\n"
	              "collective allreduce AR on T { algorithm packing; }\n");
	return k;
}

/* s's trees again with a power of two of units (as to_msccl_fit.c builds
 * them), 4 segments. */
static Sched *
pow2_sched(Diag *dg, Arena *a, const Sched *s, Routes *routes, PackMemo *memo)
{
	AlgCtx c = alg_ctx_new(dg, a, s->name, s->loc, s->kind, s->topo, routes, s->rank_node, s->nrank);
	c.algorithm = "packing";
	c.pack_group = s->pack_group;
	c.segments = 4;
	c.pack_pow2 = true;
	c.pack_memo = memo; /* the trees and levels once for both builds */
	bool missing;
	return alg_build(&c, &missing);
}

/* The copies per root the choice names (k; allreduce: the phases' lcm). */
static long long
copies_of(const Sched *s)
{
	const char *at = strstr(s->choice, "with ");
	long long k = 0;
	return at && sscanf(at, "with %lld copies", &k) == 1 ? k : 0;
}

/* Each link's chunks over t, against the bound: the faults past
 * ceil(U / k) k / U; the busiest link's factor in *rho. */
static int
over_bound(const Sched *t, long long k, double *rho)
{
	const Topo *tp = t->topo;
	CutBound b;
	CU_ASSERT_EQUAL_FATAL(cutbound_topo(tp, t->rank_node, t->nrank, 0, t->kind, &b), CUT_OK);
	int64_t *chunks = calloc((size_t)tp->nlink, sizeof *chunks);
	for (int m = 0; m < t->nmsg; m++) {
		const Msg *g = &t->msg[m];
		for (int i = t->route_off[g->route]; i < t->route_off[g->route + 1]; i++)
			chunks[t->route_link[i]] += g->n;
	}
	long long units = t->nchunk / t->nrank / t->segments, ceil_q = (units + k - 1) / k;
	int over = 0;
	*rho = 0;
	for (int l = 0; l < tp->nlink; l++) {
		/* chunks (size / nchunk) over bw, against rho x the bound's block / x* */
		Wide lhs = (Wide)chunks[l] * t->nrank * b.bound.rate.num * units;
		int64_t bw = llround(tp->link[l].bandwidth);
		over += lhs > (Wide)ceil_q * k * bw * t->nchunk * b.bound.rate.den;
		double r = (double)chunks[l] * t->nrank * (double)b.bound.rate.num /
		           ((double)bw * t->nchunk * (double)b.bound.rate.den);
		*rho = r > *rho ? r : *rho;
	}
	free(chunks);
	cutbound_free(&b);
	return over;
}

/* One schedule of the file: its pow2 build checked; 1 when its copy count
 * has an odd factor (else nothing to check: 0). */
static int
check_one(Diag *dg, const Sched *s)
{
	long long k = copies_of(s);
	if (k <= 0 || (k & (k - 1)) == 0)
		return 0;
	Arena a = {0};
	Routes routes;
	routes_init(&routes, s->topo, s->routing);
	PackMemo *memo = pack_memo_new();
	Sched *t = pow2_sched(dg, &a, s, &routes, memo);
	assert_named(t && verify(dg, t) == 0, __LINE__, __FILE__, "%s: %s", s->name, s->choice);
	if (t) {
		int n = t->nchunk;
		const char *at = strstr(t->choice, "busiest link ");
		double said = 0;
		assert_named(n > 0 && (n & (n - 1)) == 0 && at && sscanf(at, "busiest link %lf", &said) == 1,
		             __LINE__, __FILE__, "%s: %d chunks: %s", s->name, n, t->choice);
		/* the same trees and segments: one message per copy, edge and segment */
		Sched *e = NULL;
		AlgCtx c = alg_ctx_new(dg, &a, s->name, s->loc, s->kind, s->topo, &routes, s->rank_node,
		                       s->nrank);
		c.algorithm = "packing", c.pack_group = s->pack_group, c.segments = 4, c.pack_memo = memo;
		bool missing;
		e = alg_build(&c, &missing);
		CU_ASSERT_FATAL(e != NULL);
		assert_named(e->nmsg == t->nmsg, __LINE__, __FILE__, "%s: %d messages, exact %d", s->name,
		             t->nmsg, e->nmsg);
		if (s->kind != CK_ALLREDUCE) {
			double rho;
			int over = over_bound(t, k, &rho);
			assert_named(over == 0 && rho > 0.99 && rho < said + 6e-5 && rho > said - 6e-5, __LINE__,
			             __FILE__, "%s: %d links over ceil(U/k) k/U; busiest %.5f, printed %.4f (%s)",
			             s->name, over, rho, said, t->choice);
		}
	}
	pack_memo_free(memo);
	routes_free(&routes);
	arena_free(&a);
	return 1;
}

static void
test_units_generated(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	uint64_t seed = 9; /* copies per root 17 and 19 on 8 ranks, 1 on 16 */
	int checked = 0, files = 0;
	char buf[16384];
	for (int i = 0; i < 12 && checked < 6; i++) {
		int n = i % 2 ? 16 : 8, len = units_graph(buf, sizeof buf, &seed, n);
		Checked c;
		check_text(dg, &c, "units.coll", buf, (size_t)len);
		assert_named(c.errors == 0, __LINE__, __FILE__, "%s", c.diag);
		diag_source(dg, "units.coll", buf, (size_t)len);
		Prog p = {.auto_size = 64.0 * 1024 * 1024};
		if (c.errors == 0 && lower(dg, c.file, &p) == 0) {
			files++;
			for (int j = 0; j < p.nsched; j++)
				checked += check_one(dg, p.sched[j]);
		}
		prog_free(&p);
		diag_reset(dg);
		checked_free(&c);
	}
	/* the examples' own: the 16-GCD box's 7 copies per root */
	size_t len;
	char *text = slurp("examples/xgmi-box-16.coll", &len);
	Checked c;
	check_text(dg, &c, "examples/xgmi-box-16.coll", text, len);
	diag_source(dg, "examples/xgmi-box-16.coll", text, len);
	Prog p = {.auto_size = 64.0 * 1024 * 1024};
	CU_ASSERT_EQUAL_FATAL(lower(dg, c.file, &p), 0);
	int box = 0;
	for (int j = 0; j < p.nsched; j++)
		box += strcmp(p.sched[j]->algorithm, "packing") == 0 ? check_one(dg, p.sched[j]) : 0;
	CU_ASSERT_EQUAL(box, 3);
	prog_free(&p);
	checked_free(&c);
	free(text);
	assert_named(checked >= 6, __LINE__, __FILE__, "%d of %d files' schedules had an odd copy count",
	             checked, files);
}

CU_TestInfo packing_units_tests[] = {
	{"units a power of two: whole chunks, the same messages, links within ceil(U/k) k/U",
	 test_units_generated},
	CU_TEST_INFO_NULL,
};
