/*
 * test_sim_symmetric.c: schedules simulated without expanding them (docs/sim.md
 * 6.1): streamed rings, rounds run by node 0's messages against the expanded
 * runs to the bit, compact against expanded inputs, the rank forms
 * (halving-doubling, recursive doubling), Bucket, and the translates'
 * messages and dependencies.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_sim.h"

/* collc sim's ring on ring(p): the symmetric form (the translations and
 * one chain), streamed a round at a time, against the closed form
 * T = 2(p - 1)(o + d + ser(N / p)), one packet per block, in packet mode,
 * and T = 2(p - 1)(o + d + 8 (N / p) / B) in flow mode. */
static void
check_ring_closed_form(Diag *dg, int p)
{
	char text[512];
	snprintf(text, sizeof text,
	         NET400 "step_overhead = 1 us; }\ntopology R = ring(%d);\n"
	         "collective allreduce AR on R { algorithm ring; }\n", p);
	Built b;
	CU_ASSERT_EQUAL_FATAL(build_as(dg, &b, text, "AR", WAY_STREAMED), 0);
	const Sched *s = b.prog.sched[0];
	const SimColl *c = &b.net.coll[0];
	CU_ASSERT(s->base != NULL && s->nbase == 2 * (p - 1) && s->group->order == p);
	CU_ASSERT(c->stream != NULL && c->msg == NULL && c->nmsg == 0);
	CU_ASSERT(c->stream != NULL && c->stream->nmsg == 2 * (int64_t)(p - 1) * p);
	CU_ASSERT_EQUAL(c->stream->max_round_msgs, p);
	int64_t o = 1000000, d = 400000, bw = 400000000000, N = (int64_t)p * 1024;
	int64_t want = 2 * (p - 1) * (o + d + sim_ser_ps(N / p, bw));
	SimResult r = run_built(&b, N, SIM_PACKET, SIM_ROUNDS);
	assert_named(r.time_ps == want, __LINE__, __FILE__, "ring(%d) streamed: %lld, want %lld", p,
	             (long long)r.time_ps, (long long)want);
	/* every forward link carries 2(p - 1) blocks, the backward ones nothing */
	double most = 0, total = 0;
	for (int l = 0; l < r.nlink; l++) {
		most = r.link_bytes[l] > most ? r.link_bytes[l] : most;
		total += r.link_bytes[l];
	}
	CU_ASSERT(most == 2.0 * (p - 1) * 1024 && total == most * p);
	if (p > 1024) { /* the flow mode's closed form is checked on the smaller rings */
		built_free(dg, &b);
		return;
	}
	double fwant = 2.0 * (p - 1) * (1e-6 + 400e-9 + 8.0 * 1024 / 400e9);
	SimResult f = run_built(&b, N, SIM_FLOW, SIM_ROUNDS);
	assert_named(fabs(f.time_s - fwant) <= 1e-9 * fwant, __LINE__, __FILE__,
	             "ring(%d) streamed, flow: %.12g s, want %.12g s", p, f.time_s, fwant);
	/* and a dependency run is refused, not wrong */
	SimOpts od = {.mode = SIM_PACKET, .sync = SIM_DEPS};
	SimResult rd;
	char err[256];
	CU_ASSERT_EQUAL(sim_run(&b.sim, &b.net, 0, N, &od, &rd, err, sizeof err), -1);
	built_free(dg, &b);
}

void
test_ring_streamed(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	for (int p = 3; p <= 16; p++)
		check_ring_closed_form(dg, p);
	check_ring_closed_form(dg, 1024);
}

/* ring(16384), which collc sim could not hold expanded (537M messages):
 * the stream holds one round, 16384 messages, and the closed form holds. */
void
test_ring_16384(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	check_ring_closed_form(dg, 16384);
	/* --sync deps holds every message: ring(8192)'s 134M are refused, located */
	Built b;
	diag_mute(dg, true);
	CU_ASSERT_EQUAL(build_as(dg, &b, "topology R = ring(8192);\n"
	                         "collective allreduce AR on R { algorithm ring; }\n", "AR",
	                         WAY_COMPACT), -1);
	diag_mute(dg, false);
	/* built and verified in its symmetric form: the conversion refused it */
	CU_ASSERT(b.prog.nsched == 1 && b.prog.sched[0]->base != NULL);
	CU_ASSERT(b.prog.nsched == 1 && verify(dg, b.prog.sched[0]) == 0);
	built_free(dg, &b);
}

/* Two results of one collective, equal to the last bit. */
static void
assert_same_result(const SimResult *x, const SimResult *y, const char *what)
{
	bool same = x->time_ps == y->time_ps && x->time_s == y->time_s &&
	            x->nround == y->nround && x->nlink == y->nlink && x->energy_j == y->energy_j &&
	            x->energy_router_j == y->energy_router_j;
	for (int k = 0; same && k < x->nround; k++)
		same = x->round_end[k] == y->round_end[k];
	for (int l = 0; same && l < x->nlink; l++)
		same = x->link_bytes[l] == y->link_bytes[l] && x->link_busy[l] == y->link_busy[l];
	assert_named(same, __LINE__, __FILE__, "%s: %lld ps and %lld ps, or rounds, links, energy "
	             "differ", what, (long long)x->time_ps, (long long)y->time_ps);
}

/* The ring on ring(p) by its representatives (docs/sim.md 6.1): every round
 * is node 0's message translated by every node, on links alike, sharing no
 * link, so node 0's message stands for the round. Against the plain
 * expanded schedule, to the bit (times, round ends, link loads, energy), in
 * packet mode (store-and-forward and cut-through) and flow mode, round by
 * round, and by dependencies (expanded: the ring's two modes agree, every
 * message of a round being alike); the work done is node 0's 2(p - 1)
 * messages, where the expanded run computes all 2(p - 1)p. */
static void
check_ring_rep_equals_expanded(Diag *dg, int p)
{
	char text[512];
	snprintf(text, sizeof text,
	         NET400 "step_overhead = 1 us; router_energy_per_bit = 1 pJ; link_static_power = "
	         "1 mW; }\ntopology R = ring(%d);\ncollective allreduce AR on R { algorithm ring; }\n",
	         p);
	static const int64_t sizes[] = {1000, 65539, 1 << 20};
	Built e, c;
	CU_ASSERT_EQUAL_FATAL(build_as(dg, &e, text, "AR", WAY_EXPANDED), 0);
	CU_ASSERT_EQUAL_FATAL(build_as(dg, &c, text, "AR", WAY_STREAMED), 0);
	const SimStream *st = c.net.coll[0].stream;
	CU_ASSERT_FATAL(st != NULL && e.net.coll[0].stream == NULL);
	CU_ASSERT(st->ncopy == p && st->max_rep_msgs == 1);
	for (int sw = SIM_CUT_THROUGH; sw <= SIM_STORE_AND_FORWARD; sw++)
		for (size_t k = 0; k < countof(sizes); k++)
			for (int mode = SIM_PACKET; mode <= SIM_FLOW; mode++) {
				e.net.switching = c.net.switching = (SimSwitching)sw;
				SimOpts o = {.mode = (SimMode)mode, .sync = SIM_ROUNDS};
				SimResult re, rc, rd;
				char err[256], what[160];
				CU_ASSERT_EQUAL(sim_run(&e.sim, &e.net, 0, sizes[k], &o, &re, err, sizeof err), 0);
				CU_ASSERT_EQUAL(sim_run(&c.sim, &c.net, 0, sizes[k], &o, &rc, err, sizeof err), 0);
				snprintf(what, sizeof what, "ring(%d), %lld B, %s, %s", p, (long long)sizes[k],
				         mode == SIM_PACKET ? "packet" : "flow",
				         sw == SIM_CUT_THROUGH ? "cut-through" : "store-and-forward");
				assert_same_result(&re, &rc, what);
				if (mode == SIM_PACKET) {
					CU_ASSERT_EQUAL(rc.packet_hops, 2.0 * (p - 1));
					CU_ASSERT_EQUAL(re.packet_hops, 2.0 * (p - 1) * p);
				}
				o.sync = SIM_DEPS;
				CU_ASSERT_EQUAL(sim_run(&e.sim, &e.net, 0, sizes[k], &o, &rd, err, sizeof err), 0);
				assert_named(fabs(rd.time_s - rc.time_s) <= 1e-12 * rc.time_s, __LINE__, __FILE__,
				             "%s: by dependencies %.15g s, by representatives %.15g s", what,
				             rd.time_s, rc.time_s);
				CU_ASSERT(mode == SIM_FLOW || rd.time_ps == rc.time_ps);
			}
	/* a link unlike its orbit (half the bandwidth): node 0's messages no
	 * longer stand for a round, so every round is made whole, and the run
	 * is still the expanded one's */
	e.net.link[3].bw /= 2, c.net.link[3].bw /= 2;
	for (int mode = SIM_PACKET; mode <= SIM_FLOW; mode++) {
		SimOpts o = {.mode = (SimMode)mode, .sync = SIM_ROUNDS};
		SimResult re, rc;
		char err[256];
		CU_ASSERT_EQUAL(sim_run(&e.sim, &e.net, 0, 65539, &o, &re, err, sizeof err), 0);
		CU_ASSERT_EQUAL(sim_run(&c.sim, &c.net, 0, 65539, &o, &rc, err, sizeof err), 0);
		assert_same_result(&re, &rc, "a link unlike its orbit");
		CU_ASSERT(mode == SIM_FLOW || rc.packet_hops == 2.0 * (p - 1) * p);
	}
	built_free(dg, &e), built_free(dg, &c);
}

/* The ring on ring(p) at N bytes, by its representatives, against the
 * closed form: 2(p - 1) rounds of one block of ceil(N / p) bytes over one
 * link, T = 2(p - 1)(o + d + ser(N / p)) with d = link + router latency,
 * in packet mode under both switchings (one hop: the serialization once),
 * and T = 2(p - 1)(o + d + 8 (N / p) / B) in flow mode; every forward link
 * carries 2(p - 1) blocks; node 0's messages alone were computed. */
static void
check_ring_rep_closed_form(Diag *dg, int p, int64_t N)
{
	char text[512];
	snprintf(text, sizeof text,
	         NET400 "step_overhead = 1 us; }\ntopology R = ring(%d);\n"
	         "collective allreduce AR on R { algorithm ring; }\n", p);
	Built b;
	CU_ASSERT_EQUAL_FATAL(build_as(dg, &b, text, "AR", WAY_STREAMED), 0);
	const SimStream *st = b.net.coll[0].stream;
	CU_ASSERT_FATAL(st != NULL && st->ncopy == p);
	CU_ASSERT(st->nmsg == 2 * (int64_t)(p - 1) * p);
	int64_t o = 1000000, d = 400000, bw = 400000000000, block = (N + p - 1) / p;
	int64_t want = 2 * (int64_t)(p - 1) * (o + d + sim_ser_ps(block, bw));
	for (int sw = SIM_CUT_THROUGH; sw <= SIM_STORE_AND_FORWARD; sw++) {
		b.net.switching = (SimSwitching)sw;
		SimResult r = run_built(&b, N, SIM_PACKET, SIM_ROUNDS);
		assert_named(r.time_ps == want, __LINE__, __FILE__, "ring(%d), %lld B: %lld ps, want %lld",
		             p, (long long)N, (long long)r.time_ps, (long long)want);
		CU_ASSERT_EQUAL(r.packet_hops, 2.0 * (p - 1));
		double most = 0, total = 0;
		for (int l = 0; l < r.nlink; l++) {
			most = r.link_bytes[l] > most ? r.link_bytes[l] : most;
			total += r.link_bytes[l];
		}
		CU_ASSERT(most == 2.0 * (p - 1) * (double)block && total == most * p);
	}
	double fwant = 2.0 * (p - 1) * (1e-6 + 400e-9 + 8.0 * (double)block / 400e9);
	SimResult f = run_built(&b, N, SIM_FLOW, SIM_ROUNDS);
	assert_named(fabs(f.time_s - fwant) <= 1e-9 * fwant, __LINE__, __FILE__,
	             "ring(%d), flow: %.12g s, want %.12g s", p, f.time_s, fwant);
	built_free(dg, &b);
}

void
test_ring_rep(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const int ps[] = {8, 64, 256};
	for (size_t i = 0; i < countof(ps); i++)
		check_ring_rep_equals_expanded(dg, ps[i]);
	check_ring_rep_closed_form(dg, 4096, 1 << 20);
	check_ring_rep_closed_form(dg, 4096, 1000003);
}

/* ring(65536) at 1 MiB (issue 27): 8.6e9 messages, of which the simulator
 * makes node 0's 131070, one a round. */
void
test_ring_65536(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	check_ring_rep_closed_form(dg, 65536, 1 << 20);
}

/* Collective `which` of text simulated from its symmetric form, streamed
 * (and, for dependencies, unstreamed), and from the expanded explicit
 * form: the same times, round ends, link loads and energy, in both modes,
 * with and without a reduction cost, at sizes of one and many packets. */
static void
check_compact_equals_expanded(Diag *dg, const char *text, const char *which)
{
	static const int64_t sizes[] = {1000, 65539, 1 << 20};
	Built e, c, d;
	CU_ASSERT_EQUAL_FATAL(build_as(dg, &e, text, which, WAY_EXPANDED), 0);
	CU_ASSERT_EQUAL_FATAL(build_as(dg, &c, text, which, WAY_STREAMED), 0);
	CU_ASSERT_EQUAL_FATAL(build_as(dg, &d, text, which, WAY_COMPACT), 0);
	CU_ASSERT(c.net.coll[0].stream != NULL);
	for (size_t k = 0; k < countof(sizes); k++)
		for (int mode = SIM_PACKET; mode <= SIM_FLOW; mode++)
			for (int cost = 0; cost < 2; cost++) {
				SimOpts o = {.mode = (SimMode)mode, .sync = SIM_ROUNDS,
				             .reduce_rate = cost ? 20e9 : 0};
				SimResult re, rc, rde, rdc;
				char err[256], what[160];
				CU_ASSERT_EQUAL(sim_run(&e.sim, &e.net, 0, sizes[k], &o, &re, err, sizeof err), 0);
				CU_ASSERT_EQUAL(sim_run(&c.sim, &c.net, 0, sizes[k], &o, &rc, err, sizeof err), 0);
				snprintf(what, sizeof what, "%s, %lld B, %s, rounds, reduce cost %d", which,
				         (long long)sizes[k], mode == SIM_PACKET ? "packet" : "flow", cost);
				assert_same_result(&re, &rc, what);
				o.sync = SIM_DEPS;
				CU_ASSERT_EQUAL(sim_run(&e.sim, &e.net, 0, sizes[k], &o, &rde, err, sizeof err), 0);
				CU_ASSERT_EQUAL(sim_run(&d.sim, &d.net, 0, sizes[k], &o, &rdc, err, sizeof err), 0);
				snprintf(what, sizeof what, "%s, %lld B, %s, deps, reduce cost %d", which,
				         (long long)sizes[k], mode == SIM_PACKET ? "packet" : "flow", cost);
				CU_ASSERT(rde.time_ps > 0);
				assert_same_result(&rde, &rdc, what);
			}
	/* packet mode's least work, from the stream's classes of messages (the
	 * run refused before it starts, or run) is the message list's; at 2^50
	 * bytes, or 2^40 where 2^50 already passes the time bound (recursive
	 * doubling's allreduce sends the whole vector every step), which refuses
	 * before any work is counted */
	SimOpts huge = {.mode = SIM_PACKET, .sync = SIM_ROUNDS};
	SimResult he = {0}, hc = {0};
	char err[256];
	int rce = -1, rcc = -1;
	for (int shift = 50; shift >= 40 && he.packet_hops == 0; shift -= 10) {
		rce = sim_run(&e.sim, &e.net, 0, (int64_t)1 << shift, &huge, &he, err, sizeof err);
		rcc = sim_run(&c.sim, &c.net, 0, (int64_t)1 << shift, &huge, &hc, err, sizeof err);
	}
	bool sym = c.net.coll[0].stream->ncopy > 0; /* its lone rounds by node 0's messages */
	CU_ASSERT(sym || (rce == rcc && he.packet_hops == hc.packet_hops));
	CU_ASSERT(hc.packet_hops <= he.packet_hops && hc.packet_hops > 0);
	/* and round by round under cut-through, whose lone rounds may go to the
	 * event loop (a buffer that could fill) */
	e.net.switching = c.net.switching = SIM_CUT_THROUGH;
	for (int mode = SIM_PACKET; mode <= SIM_FLOW; mode++) {
		SimOpts o = {.mode = (SimMode)mode, .sync = SIM_ROUNDS};
		SimResult re, rc;
		char what[160];
		CU_ASSERT_EQUAL(sim_run(&e.sim, &e.net, 0, 65539, &o, &re, err, sizeof err), 0);
		CU_ASSERT_EQUAL(sim_run(&c.sim, &c.net, 0, 65539, &o, &rc, err, sizeof err), 0);
		snprintf(what, sizeof what, "%s, 65539 B, %s, cut-through, rounds", which,
		         mode == SIM_PACKET ? "packet" : "flow");
		assert_same_result(&re, &rc, what);
	}
	built_free(dg, &e), built_free(dg, &c), built_free(dg, &d);
}

static const char rings[] =
	"network { link_bandwidth = 100 Gbps; link_latency = 500 ns; router_latency = 100 ns; "
	"step_overhead = 1 us; router_energy_per_bit = 1 pJ; }\n"
	"topology R = ring(12);\ntopology T = torus(10);\n"
	"collective allreduce A1 on R { algorithm ring; }\n"
	"collective allreduce A2 on R { algorithm ring(ports 2); }\n"
	"collective allreduce A3 on R { algorithm ring(ports 2); chunks 48; }\n"
	"collective reduce_scatter RS on R { algorithm ring; chunks 24; }\n"
	"collective allgather AG on R { algorithm ring(ports 2); }\n"
	"collective allreduce TA on T { algorithm ring; }\n"
	"collective allgather TG on T { algorithm ring; chunks 30; }\n";

static const char buckets[] =
	NET400 "}\ntopology T = torus(4, 5);\ntopology U = torus(3, 4, 3);\ntopology R = torus(7);\n"
	"collective allreduce B1 on T { algorithm bucket; }\n"
	"collective reduce_scatter B2 on T { algorithm bucket; chunks 80; }\n"
	"collective allgather B3 on U { algorithm bucket; }\n"
	"collective allreduce B4 on U { algorithm bucket; chunks 432; }\n"
	"collective allreduce B5 on R { algorithm bucket; }\n";

static const char hds[] =
	NET400 "}\ntopology R = ring(16);\ntopology T = torus(4, 4);\ntopology S = ring(12);\n"
	"topology M = mesh(4, 2);\ntopology N = torus(8, 4);\n"
	"collective allreduce H1 on R { algorithm halving_doubling; }\n"
	"collective allreduce H2 on T { algorithm halving_doubling; }\n"
	"collective allreduce H3 on R { algorithm halving_doubling; chunks 16; ranks 0..7; }\n"
	"collective allreduce H4 on S { algorithm halving_doubling; ranks 2..9; }\n"
	"collective allreduce H5 on M { algorithm halving_doubling; }\n"
	"collective allgather G1 on R { algorithm recursive_doubling; }\n"
	"collective allgather G2 on T { algorithm recursive_doubling; chunks 32; }\n"
	"collective allgather G3 on S { algorithm recursive_doubling; ranks 2..9; }\n"
	"collective reduce_scatter S1 on R { algorithm recursive_halving; }\n"
	"collective reduce_scatter S2 on T { algorithm recursive_halving; chunks 32; }\n"
	"collective reduce_scatter S3 on M { algorithm recursive_halving; }\n"
	"collective allreduce D1 on R { algorithm recursive_doubling; }\n"
	"collective allreduce D2 on T { algorithm recursive_doubling; chunks 32; }\n"
	"collective allreduce D3 on M { algorithm recursive_doubling; }\n"
	"collective allreduce D4 on S { algorithm recursive_doubling; ranks 2..9; }\n"
	"collective allreduce D5 on N { algorithm recursive_doubling; }\n";

void
test_compact_equals_expanded(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char *const ring_names[] = {"A1", "A2", "A3", "RS", "AG", "TA", "TG"};
	for (size_t i = 0; i < countof(ring_names); i++)
		check_compact_equals_expanded(dg, rings, ring_names[i]);
	check_compact_equals_expanded(dg, sp8, "SP");
	check_compact_equals_expanded(dg, NET400 "}\ntopology H = hyperx(4, 4);\n"
	                              "group G on H { translate; map (x, y) -> (-y, x); }\n"
	                              "tree W = windmill(H, root (0, 0));\n"
	                              "collective allreduce SP on H { algorithm symmetric(trees W, "
	                              "group G); }\n", "SP");
	check_compact_equals_expanded(dg, NET400 "}\ntopology T = torus(4, 6);\n"
	                              "group G on T { translate; map (x, y) -> (-x, -y); }\n"
	                              "tree B = bfs(T, root (0, 0));\n"
	                              "collective reduce_scatter SP on T { algorithm symmetric(trees B, "
	                              "group G); }\n", "SP");
	static const char *const bucket_names[] = {"B1", "B2", "B3", "B4", "B5"};
	for (size_t i = 0; i < countof(bucket_names); i++)
		check_compact_equals_expanded(dg, buckets, bucket_names[i]);
	static const char *const hd_names[] = {"H1", "H2", "H3", "H4", "H5", "G1", "G2", "G3",
	                                       "S1", "S2", "S3", "D1", "D2", "D3", "D4", "D5"};
	for (size_t i = 0; i < countof(hd_names); i++)
		check_compact_equals_expanded(dg, hds, hd_names[i]);
}

/* halving_doubling on 2^L ranks in the rank form: one base tree per piece,
 * 2(p - 1) transfers each, 2 log2 p rounds (recursive doubling and halving:
 * p - 1 and log2 p; recursive doubling's allreduce p log2 p and log2 p);
 * no base transfer holds a route; proved by the verifier (a fault in a base
 * transfer is found); 12 ranks (a fold) stay explicit. */
void
test_hd_rank_form(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Built b;
	CU_ASSERT_EQUAL_FATAL(build_as(dg, &b, hds, "H3", WAY_STREAMED), 0);
	const Sched *s = b.prog.sched[2];
	CU_ASSERT(s->base != NULL && s->group == NULL && s->xor_routes != NULL);
	CU_ASSERT_EQUAL(s->ntree, 2);
	CU_ASSERT_EQUAL(s->nbase, 2 * 2 * 7);
	CU_ASSERT_EQUAL(s->nround, 6);
	CU_ASSERT(b.net.coll[0].stream != NULL && b.net.coll[0].msg == NULL);
	/* recursive doubling (allgather) and halving (reduce_scatter): one
	 * phase, p - 1 transfers per piece, log2 p rounds */
	const Sched *g2 = b.prog.sched[6], *s2 = b.prog.sched[9];
	CU_ASSERT(g2->xor_routes != NULL && g2->ntree == 2 && g2->nbase == 2 * 15 && g2->nround == 4);
	CU_ASSERT(s2->xor_routes != NULL && s2->ntree == 2 && s2->nbase == 2 * 15 && s2->nround == 4);
	/* recursive doubling's allreduce: every rank reduces the whole vector
	 * into its partner at every step; its base tree is the binomial one by
	 * which rank 0 first gets each contribution (7 through 6, 6 through 4) */
	const Sched *d2 = b.prog.sched[12];
	CU_ASSERT(d2->xor_routes != NULL && d2->ntree == 2 && d2->nbase == 2 * 16 * 4 &&
	          d2->nround == 4 && d2->nroute == 0);
	CU_ASSERT(d2->tree[0]->height == 4 && d2->tree[0]->parent[d2->rank_node[7]] == d2->rank_node[6] &&
	          d2->tree[0]->parent[d2->rank_node[6]] == d2->rank_node[4]);
	for (int i = 0; i < d2->nbase; i++)
		CU_ASSERT(d2->base[i].route == -1 && d2->base[i].op == X_REDUCE &&
		          (d2->node_rank[d2->base[i].src] ^ d2->node_rank[d2->base[i].dst]) ==
		          1 << d2->base[i].round);
	CU_ASSERT_EQUAL(verify(dg, d2), 0);
	/* the figures `algorithm auto` ranks by: those of the expanded schedule */
	for (int i = 0; i < b.prog.nsched; i++) {
		Metrics mr, me;
		Arena a = {0};
		const Sched *r = b.prog.sched[i];
		CU_ASSERT_PTR_NOT_NULL(r->xor_routes);
		metrics(r, 1 << 20, &mr);
		metrics(sched_expand(dg, &a, r), 1 << 20, &me);
		CU_ASSERT_EQUAL(mr.rounds, me.rounds);
		CU_ASSERT_EQUAL(mr.messages, me.messages);
		CU_ASSERT_DOUBLE_EQUAL(mr.volume, me.volume, 1e-9 * me.volume);
		CU_ASSERT_DOUBLE_EQUAL(mr.theta, me.theta, 1e-12);
		CU_ASSERT_DOUBLE_EQUAL(mr.omega, me.omega, 1e-12);
		CU_ASSERT_DOUBLE_EQUAL(mr.model_time, me.model_time, 1e-12 * me.model_time);
		arena_free(&a);
	}
	/* a base transfer that copies instead of reducing: the proof fails */
	BaseXfer *x = &b.prog.sched[2]->base[0];
	x->op = X_COPY;
	diag_mute(dg, true);
	CU_ASSERT_NOT_EQUAL(verify(dg, s), 0);
	/* recursive halving's last reduce into rank 0 goes to rank 2: rank 0
	 * misses rank 1's part */
	CU_ASSERT_EQUAL(verify(dg, s2), 0);
	b.prog.sched[9]->base[s2->nbase - 1].dst = s2->rank_node[2];
	CU_ASSERT_NOT_EQUAL(verify(dg, s2), 0);
	/* recursive doubling's allreduce: a rank that copies in place of
	 * reducing in the last step loses its own half of the contributions */
	b.prog.sched[12]->base[d2->nbase - 1].op = X_COPY;
	CU_ASSERT_NOT_EQUAL(verify(dg, d2), 0);
	diag_mute(dg, false);
	built_free(dg, &b);
	CU_ASSERT_EQUAL_FATAL(build_as(dg, &b, NET400 "}\ntopology R = ring(12);\n"
	                               "collective allreduce H on R { algorithm halving_doubling; }\n",
	                               "H", WAY_STREAMED), 0);
	CU_ASSERT(b.prog.sched[0]->base == NULL && b.prog.sched[0]->nmsg > 0);
	built_free(dg, &b);
}

/* Recursive doubling's allreduce in the rank form against closed forms: on
 * full(8) every partner is one link away and no two messages share one, so
 * each of the log2 p rounds takes o + d + sum of ser(b_i) (N cut into 16
 * packets; flow: o + d + 8N/B); on ring(8) with private links each round
 * takes its partners' distance h = 1, 2, 4: o + h (d + ser(N)) with one
 * packet per message (flow: o + h d + 8N/B). */
void
test_rd_allreduce_closed_forms(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char net[] = "network { link_bandwidth = 400 GBps; link_latency = 0.1 us; "
	                          "router_latency = 0 ns; step_overhead = 0.5 us; mtu = %s; }\n"
	                          "topology T = %s;\n"
	                          "collective allreduce X on T { algorithm recursive_doubling; }\n";
	int64_t N = 1 << 20, bw = 400000000000LL * 8, d = 100000, o = 500000;
	char text[512];
	Built b;
	snprintf(text, sizeof text, net, "64 KiB", "full(8)");
	CU_ASSERT_EQUAL_FATAL(build_as(dg, &b, text, "X", WAY_STREAMED), 0);
	CU_ASSERT(b.prog.sched[0]->xor_routes != NULL && b.net.coll[0].stream != NULL);
	int64_t want = 3 * (o + d + 16 * sim_ser_ps(N / 16, bw));
	double fwant = 3 * (o * 1e-12 + d * 1e-12 + 8.0 * (double)N / (double)bw);
	SimResult r = run_built(&b, N, SIM_PACKET, SIM_ROUNDS);
	assert_named(r.time_ps == want, __LINE__, __FILE__, "full(8), packet: %lld ps, closed "
	             "form %lld", (long long)r.time_ps, (long long)want);
	r = run_built(&b, N, SIM_FLOW, SIM_ROUNDS);
	assert_named(fabs(r.time_s - fwant) <= 1e-9 * fwant, __LINE__, __FILE__, "full(8), flow: "
	             "%.9g s, closed form %.9g", r.time_s, fwant);
	built_free(dg, &b);
	snprintf(text, sizeof text, net, "1 MiB", "ring(8)");
	CU_ASSERT_EQUAL_FATAL(build_as(dg, &b, text, "X", WAY_STREAMED), 0);
	CU_ASSERT(b.prog.sched[0]->xor_routes != NULL && b.net.coll[0].stream != NULL);
	want = 0, fwant = 0;
	for (int k = 0; k < 3; k++) {
		int64_t h = 1 << k;
		want += o + h * (d + sim_ser_ps(N, bw));
		fwant += o * 1e-12 + (double)h * d * 1e-12 + 8.0 * (double)N / (double)bw;
	}
	for (int mode = 0; mode < 2; mode++) {
		SimOpts po = {.mode = mode ? SIM_FLOW : SIM_PACKET, .sync = SIM_ROUNDS,
		              .private_links = true};
		char err[256];
		CU_ASSERT_EQUAL_FATAL(sim_run(&b.sim, &b.net, 0, N, &po, &r, err, sizeof err), 0);
		if (mode == 0)
			assert_named(r.time_ps == want, __LINE__, __FILE__, "ring(8), packet, private "
			             "links: %lld ps, closed form %lld", (long long)r.time_ps,
			             (long long)want);
		else
			assert_named(fabs(r.time_s - fwant) <= 1e-9 * fwant, __LINE__, __FILE__,
			             "ring(8), flow, private links: %.9g s, closed form %.9g", r.time_s,
			             fwant);
	}
	built_free(dg, &b);
}

/* Recursive doubling's allreduce on ranks that are not a power of two (the
 * fold) for collc sim: one chunk, the whole vector, in every message, so
 * p (L + 2) chunk transfers; simulated equal to the last bit to the
 * schedule of p chunks other commands build, in both modes and both sync
 * modes, on ring(12) and on torus(3, 4). */
void
test_rd_allreduce_fold(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char *const topos[] = {"ring(12)", "torus(3, 4)"};
	for (size_t i = 0; i < countof(topos); i++) {
		char text[256];
		snprintf(text, sizeof text, NET400 "}\ntopology T = %s;\n"
		         "collective allreduce X on T { algorithm recursive_doubling; }\n", topos[i]);
		Built e, c;
		CU_ASSERT_EQUAL_FATAL(build_as(dg, &e, text, "X", WAY_EXPANDED), 0);
		CU_ASSERT_EQUAL_FATAL(build_as(dg, &c, text, "X", WAY_COMPACT), 0);
		const Sched *se = e.prog.sched[0], *sc = c.prog.sched[0];
		CU_ASSERT(se->nchunk == 12 && sc->nchunk == 1 && sc->base == NULL);
		CU_ASSERT(se->nmsg == sc->nmsg && sc->nmsg == 4 + 8 * 3 + 4);
		for (int mode = SIM_PACKET; mode <= SIM_FLOW; mode++)
			for (int sync = SIM_ROUNDS; sync <= SIM_DEPS; sync++) {
				SimResult re = run_built(&e, 1 << 20, (SimMode)mode, (SimSync)sync);
				SimResult rc = run_built(&c, 1 << 20, (SimMode)mode, (SimSync)sync);
				char what[96];
				snprintf(what, sizeof what, "recursive doubling on %s, %s, %s", topos[i],
				         mode == SIM_PACKET ? "packet" : "flow",
				         sync == SIM_ROUNDS ? "rounds" : "deps");
				assert_same_result(&re, &rc, what);
			}
		built_free(dg, &e), built_free(dg, &c);
	}
}

/* The rank form's rounds share links between routes: every message's
 * window of the round's hops is its route (link by link from its sender's
 * node to its receiver's, as the Routes give it), and on ring(64) a round
 * holds at most a few links per rank where its routes hold up to 32 each
 * (halving-doubling, recursive doubling and halving, both directions). */
void
test_rank_form_shared_hops(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char *const names[] = {"H", "G", "S", "D"};
	static const char text[] =
		NET400 "}\ntopology R = ring(64);\n"
		"collective allreduce H on R { algorithm halving_doubling; }\n"
		"collective allgather G on R { algorithm recursive_doubling; }\n"
		"collective reduce_scatter S on R { algorithm recursive_halving; }\n"
		"collective allreduce D on R { algorithm recursive_doubling; }\n";
	for (size_t i = 0; i < countof(names); i++) {
		Built b;
		CU_ASSERT_EQUAL_FATAL(build_as(dg, &b, text, names[i], WAY_STREAMED), 0);
		const Sched *s = NULL;
		for (int k = 0; k < b.prog.nsched; k++)
			if (strcmp(b.prog.sched[k]->name, names[i]) == 0)
				s = b.prog.sched[k];
		const SimColl *c = &b.net.coll[0];
		CU_ASSERT_FATAL(s != NULL && s->xor_routes != NULL && c->stream != NULL);
		long most_pool = 0, most_route = 0;
		bool routes_ok = true;
		for (int r = 0; r < c->nround; r++) {
			SimRound x = c->stream->round(c->stream->ctx, r);
			long pool = 0, routes = 0;
			for (int m = 0; m < x.nmsg; m++) {
				const SimMsg *msg = &x.msg[m];
				const int *want;
				int len = route_uncached(s->xor_routes, s->rank_node[msg->src],
				                         s->rank_node[msg->dst], &want);
				routes_ok = routes_ok && msg->hop >= 0 && len == msg->nhop &&
				            memcmp(want, x.hops + msg->hop, (size_t)len * sizeof *want) == 0;
				pool = msg->hop + msg->nhop > pool ? msg->hop + msg->nhop : pool;
				routes += msg->nhop;
			}
			most_pool = pool > most_pool ? pool : most_pool;
			most_route = routes > most_route ? routes : most_route;
		}
		assert_named(routes_ok, __LINE__, __FILE__, "%s: a message's window is not its route",
		             names[i]);
		assert_named(most_route == 64 * 32 && most_pool <= 3 * 64, __LINE__, __FILE__,
		             "%s: a round's routes take %ld links, held in %ld", names[i], most_route,
		             most_pool);
		built_free(dg, &b);
	}
}

/* Bucket in symmetric form where every side is at least 3: a base tree per
 * (dimension, direction) and piece, 2(p - 1) transfers each for an
 * allreduce; a side of 2 (two links between neighbours) keeps it explicit.
 * Both are verified first. */
void
test_bucket_compact(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Built b;
	CU_ASSERT_EQUAL_FATAL(build_as(dg, &b, buckets, "B4", WAY_STREAMED), 0);
	const Sched *s = b.prog.sched[3];
	CU_ASSERT(s->base != NULL && s->group->order == 36 && s->ntree == 12);
	CU_ASSERT_EQUAL(s->nbase, 12 * 2 * 35);
	/* six phases of 3 rounds (the longest ring's steps), barriers between */
	CU_ASSERT_EQUAL(s->nround, 2 * 3 * 3);
	CU_ASSERT(s->nbarrier == 5 && s->barrier[0] == 3 && s->barrier[4] == 15);
	CU_ASSERT(b.net.coll[0].stream != NULL && b.net.coll[0].msg == NULL);
	built_free(dg, &b);
	CU_ASSERT_EQUAL_FATAL(build_as(dg, &b, NET400 "}\ntopology T = torus(2, 4);\n"
	                               "collective allreduce B on T { algorithm bucket; }\n",
	                               "B", WAY_STREAMED), 0);
	CU_ASSERT(b.prog.sched[0]->base == NULL && b.prog.sched[0]->nmsg > 0);
	built_free(dg, &b);
}

/* The aggregated message (round, sender, op, route) of c, or -1; `from`
 * holds each (round, sender)'s first message (messages sorted so). */
static int
find_msg(const SimColl *c, const int *from, const SimColl *e, const SimMsg *m)
{
	int b = from[m->round * c->nrank + m->src], end = from[m->round * c->nrank + m->src + 1];
	for (int i = b; i < end; i++) {
		const SimMsg *x = &c->msg[i];
		if (x->reduce == m->reduce && x->nhop == m->nhop &&
		    memcmp(c->hops + x->hop, e->hops + m->hop, (size_t)m->nhop * sizeof(int)) == 0)
			return i;
	}
	return -1;
}

static int
pair_order(const void *pa, const void *pb)
{
	const int64_t *a = pa, *b = pb;
	return (*a > *b) - (*a < *b);
}

/* The (dependency, message) pairs of c, as sorted numbers without repeats;
 * through `to` (message -> message of another conversion) when given. */
static int64_t *
dep_pairs(const SimColl *c, const int *to, int *n)
{
	size_t total = 0;
	for (int m = 0; m < c->nmsg; m++)
		total += (size_t)c->msg[m].ndep;
	int64_t *p = xmalloc((total + 1) * sizeof *p);
	*n = 0;
	for (int m = 0; m < c->nmsg; m++)
		for (int i = 0; i < c->msg[m].ndep; i++) {
			int d = c->deps[c->msg[m].dep + i];
			p[(*n)++] = (int64_t)(to ? to[d] : d) << 32 | (to ? to[m] : m);
		}
	qsort(p, (size_t)*n, sizeof *p, pair_order);
	int k = 0;
	for (int i = 0; i < *n; i++)
		if (k == 0 || p[k - 1] != p[i])
			p[k++] = p[i];
	*n = k;
	return p;
}

/* Symmetric schedules too large to expand become the translates of node
 * 0's messages, with their dependencies derived by symmetry: on a torus
 * small enough to expand both ways, every expanded message lies in the
 * translates message of its round, sender and route, the sizes add up, and
 * the dependencies are exactly the expanded ones carried over. */
static void
check_translates(Diag *dg, const char *text, int64_t bytes)
{
	Built b;
	CU_ASSERT_EQUAL_FATAL(build_text(dg, &b, text, "SP"), 0);
	const Sched *s = b.prog.sched[0];
	SimNet tr;
	CU_ASSERT_EQUAL_FATAL(sim_from_scheds_limit(dg, &b.sim, &s, 1, 0, &tr), 0);
	const SimColl *e = &b.net.coll[0], *c = &tr.coll[0];
	CU_ASSERT_FATAL(e->has_deps && c->has_deps);
	CU_ASSERT(c->nmsg <= e->nmsg);
	/* the translates come by round, then sender: where each pair starts */
	int nkey = c->nround * c->nrank, sorted = 1;
	int *from = xcalloc((size_t)nkey + 1, sizeof *from);
	for (int i = 0; i < c->nmsg; i++) {
		int k = c->msg[i].round * c->nrank + c->msg[i].src;
		sorted &= i == 0 || k >= c->msg[i - 1].round * c->nrank + c->msg[i - 1].src;
		from[k + 1]++;
	}
	CU_ASSERT_FATAL(sorted);
	for (int k = 0; k < nkey; k++)
		from[k + 1] += from[k];
	int *to = xmalloc((size_t)e->nmsg * sizeof *to);
	int64_t *num = xcalloc((size_t)c->nmsg, sizeof *num);
	int lost = 0;
	for (int m = 0; m < e->nmsg; m++) {
		to[m] = find_msg(c, from, e, &e->msg[m]);
		if (to[m] < 0) {
			lost++;
			to[m] = 0;
		} else {
			num[to[m]] += e->msg[m].num * c->msg[to[m]].den / e->msg[m].den;
		}
	}
	CU_ASSERT_EQUAL(lost, 0);
	int wrong = 0;
	for (int i = 0; i < c->nmsg; i++)
		wrong += num[i] != c->msg[i].num;
	CU_ASSERT_EQUAL(wrong, 0);
	int ne, nc;
	int64_t *pe = dep_pairs(e, to, &ne), *pc = dep_pairs(c, NULL, &nc);
	CU_ASSERT(nc > 0);
	CU_ASSERT_EQUAL(ne, nc);
	CU_ASSERT(ne == nc && memcmp(pe, pc, (size_t)ne * sizeof *pe) == 0);
	/* and the dependency mode runs on it */
	SimOpts o = {.mode = SIM_PACKET, .sync = SIM_DEPS};
	SimResult r;
	char err[256];
	CU_ASSERT_EQUAL(sim_run(&b.sim, &tr, 0, bytes, &o, &r, err, sizeof err), 0);
	CU_ASSERT(r.time_ps > 0);
	free(pe), free(pc), free(to), free(num), free(from);
	built_free(dg, &b);
}

void
test_translates_deps(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	check_translates(dg, sp8, 1 << 20);
	check_translates(dg, NET400 "}\ntopology T = torus(4, 8);\n"
	                 "group G on T { translate; map (x, y) -> (-x, -y); }\n"
	                 "tree B = bfs(T, root (0, 0));\n"
	                 "collective allreduce SP on T { algorithm symmetric(trees B, group G); }\n",
	                 64 << 10);
	/* a HyperX's translations (coordinates modulo the sizes) and quarter turns */
	check_translates(dg, NET400 "}\ntopology H = hyperx(4, 4);\n"
	                 "group G on H { translate; map (x, y) -> (-y, x); }\n"
	                 "tree W = windmill(H, root (0, 0));\n"
	                 "collective allreduce SP on H { algorithm symmetric(trees W, group G); }\n",
	                 1 << 20);
	/* transitive with one element fixing node 0, but half its elements are
	 * reflections: node v's messages are not node 0's translated, so the
	 * schedule is expanded (and refused when that is not allowed), never
	 * taken for translates */
	Built b;
	CU_ASSERT_EQUAL_FATAL(build_as(dg, &b, "topology R = ring(8);\n"
	                               "group G on R { map x -> 1 - x; translate 2; }\n"
	                               "tree B = bfs(R, root 0);\n"
	                               "collective allreduce SP on R { algorithm symmetric(trees B, "
	                               "group G); }\n", "SP", WAY_STREAMED), 0);
	CU_ASSERT(b.net.coll[0].stream == NULL && b.net.coll[0].has_deps);
	SimNet none;
	const Sched *s = b.prog.sched[0];
	diag_mute(dg, true);
	CU_ASSERT_EQUAL(sim_from_scheds_limit(dg, &b.sim, &s, 1, 0, &none), -1);
	diag_mute(dg, false);
	built_free(dg, &b);
}
