/*
 * test_sim_packet.c: packet mode against the closed forms of docs/sim.md
 * (store-and-forward unless a test says otherwise): one message over h
 * hops, ring allreduce on ring(p), the arbitration rule, lone rounds and
 * contention on a torus, SP's goodput against the bound and against
 * Bucket, TTO's slots, routing, private links, and the limits before a
 * run (the time bound, the work budget).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_sim.h"

void
test_single_message(void)
{
	const int64_t sizes[] = {1, 1000, 4096, 4097, 10000, 1 << 20, (1 << 20) + 3};
	for (int h = 1; h <= 5; h++)
		for (size_t i = 0; i < countof(sizes); i++)
			for (int64_t mtu = 1024; mtu <= 4096; mtu *= 4) {
				Hand x;
				hand_init(&x, h + 1, mtu);
				hand_msg(&x, 0, 0, h, 1, 1, 0, NULL);
				SimResult r = hand_run(&x, sizes[i], SIM_PACKET, SIM_ROUNDS);
				int64_t want = closed_form(sizes[i], h, mtu, 400000000000, 400000);
				assert_named(r.time_ps == want, __LINE__, __FILE__,
				             "M=%lld h=%d mtu=%lld: %lld ps, closed form %lld ps",
				             (long long)sizes[i], h, (long long)mtu, (long long)r.time_ps,
				             (long long)want);
				/* dependency mode takes the event loop, rounds the fast path: both exact */
				SimResult rd = hand_run(&x, sizes[i], SIM_PACKET, SIM_DEPS);
				assert_named(rd.time_ps == want, __LINE__, __FILE__,
				             "deps M=%lld h=%d mtu=%lld: %lld ps, closed form %lld ps",
				             (long long)sizes[i], h, (long long)mtu, (long long)rd.time_ps,
				             (long long)want);
				arena_free(&x.a);
			}
}

/* Packet mode's work budget (MAX_PACKET_HOPS): a one-hop message alone is a
 * closed form at any size; a two-hop one, or two messages sharing a link, cost
 * a packet per link crossed and are refused past the budget, before running,
 * in both sync modes; flow mode runs the same sizes. The work counted is
 * that done (SimResult.packet_hops). */
/* Times are 64-bit picoseconds: a run that could pass MAX_SIM_SECONDS (53
 * days) is refused in every mode before it starts, where it used to wrap
 * (ring(8) at 1e18 bytes printed 233 % of the bound) or, with a fraction
 * whose bytes pass int64, loop for minutes (fuzzing find); just under the
 * limit the time is the closed form's. */
void
test_time_bound(void)
{
	const int64_t mtu = 4096;
	SimOpts modes[] = {{.mode = SIM_PACKET, .sync = SIM_ROUNDS},
	                   {.mode = SIM_PACKET, .sync = SIM_DEPS},
	                   {.mode = SIM_FLOW, .sync = SIM_ROUNDS}};
	SimResult r;
	char err[256] = "";
	Hand one, huge;
	hand_init(&one, 2, mtu);
	hand_msg(&one, 0, 0, 1, 1, 1, 0, NULL);
	hand_init(&huge, 2, mtu);
	hand_msg(&huge, 0, 0, 1, 1555555555555555555, 8, 0, NULL);
	/* 1e18 bytes at 400 Gb/s: 2e7 s; 1e17: 2e6 s, within */
	for (size_t i = 0; i < countof(modes); i++) {
		CU_ASSERT_EQUAL(sim_run(&one.a, &one.net, 0, 1000000000000000000, &modes[i], &r, err,
		                        sizeof err), -1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "collc simulates at most"));
		CU_ASSERT_EQUAL(sim_run(&huge.a, &huge.net, 0, 1024, &modes[i], &r, err, sizeof err), -1);
	}
	/* a size that wrapped negative (2^63 and more read as int64) or 0 is refused at the
	 * boundary, whatever the reader let through */
	for (size_t i = 0; i < countof(modes); i++) {
		CU_ASSERT_EQUAL(sim_run(&one.a, &one.net, 0, INT64_MIN, &modes[i], &r, err, sizeof err),
		                -1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "is not a size collc simulates"));
		CU_ASSERT_EQUAL(sim_run(&one.a, &one.net, 0, 0, &modes[i], &r, err, sizeof err), -1);
	}
	CU_ASSERT_EQUAL(sim_run(&one.a, &one.net, 0, 100000000000000000, &modes[0], &r, err,
	                        sizeof err), 0);
	CU_ASSERT_EQUAL(r.time_ps, closed_form(100000000000000000, 1, mtu, 400000000000, 400000));
	arena_free(&one.a);
	arena_free(&huge.a);
}

void
test_packet_budget(void)
{
	const int64_t mtu = 4096, over = ((int64_t)MAX_PACKET_HOPS / 2 + 1) * mtu;
	SimOpts packet = {.mode = SIM_PACKET, .sync = SIM_ROUNDS};
	SimOpts deps = {.mode = SIM_PACKET, .sync = SIM_DEPS};
	SimOpts flow = {.mode = SIM_FLOW, .sync = SIM_ROUNDS};
	SimResult r;
	char err[256] = "";
	Hand one, two;
	hand_init(&one, 2, mtu);
	hand_msg(&one, 0, 0, 1, 1, 1, 0, NULL);
	CU_ASSERT_EQUAL(sim_run(&one.a, &one.net, 0, 64 * over, &packet, &r, err, sizeof err), 0);
	/* 2^35 packets and more: the closed form, not a count cut to an int */
	CU_ASSERT_EQUAL(r.time_ps, closed_form(64 * over, 1, mtu, 400000000000, 400000));
	hand_init(&two, 3, mtu);
	hand_msg(&two, 0, 0, 2, 1, 1, 0, NULL); /* 2 hops: packets x 2 */
	CU_ASSERT_EQUAL(sim_run(&two.a, &two.net, 0, 1 << 20, &packet, &r, err, sizeof err), 0);
	CU_ASSERT_EQUAL(r.time_ps, closed_form(1 << 20, 2, mtu, 400000000000, 400000));
	CU_ASSERT_EQUAL(sim_run(&two.a, &two.net, 0, over, &packet, &r, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "packet mode (store-and-forward) simulates at most"));
	CU_ASSERT_EQUAL(sim_run(&two.a, &two.net, 0, over, &deps, &r, err, sizeof err), -1);
	CU_ASSERT_EQUAL(sim_run(&two.a, &two.net, 0, over, &flow, &r, err, sizeof err), 0);
	arena_free(&one.a);
	arena_free(&two.a);
	/* the work counted is the work done: a round that leaves the closed
	 * forms for the event loop counts the loop's packets only (3 packets
	 * over 2 and 1 links: 9), a lone round's one-hop message 1 */
	Hand share;
	hand_init(&share, 3, mtu);
	hand_msg(&share, 0, 0, 2, 1, 1, 0, NULL);
	hand_msg(&share, 0, 1, 2, 1, 1, 0, NULL);
	hand_msg(&share, 1, 1, 2, 1, 1, 0, NULL);
	CU_ASSERT_EQUAL(sim_run(&share.a, &share.net, 0, 3 * mtu, &packet, &r, err, sizeof err), 0);
	CU_ASSERT_EQUAL(r.packet_hops, 3 * 2 + 3 * 1 + 1);
	/* refused before the first round when even the closed forms' work is
	 * past the budget: no round has run */
	Hand late;
	hand_init(&late, 3, mtu);
	hand_msg(&late, 0, 0, 1, 1, 1, 0, NULL);
	hand_msg(&late, 1, 0, 2, 1, 1, 0, NULL);
	CU_ASSERT_EQUAL(sim_run(&late.a, &late.net, 0, over, &packet, &r, err, sizeof err), -1);
	CU_ASSERT_EQUAL(r.packet_hops, 1 + 2.0 * (double)(over / mtu));
	CU_ASSERT_EQUAL(r.round_end[0], 0);
	arena_free(&share.a);
	arena_free(&late.a);
}

/* The budget is a cost model: a packet-hop of the event loop costs
 * MAX_PACKET_HOPS / MAX_LOOP_PACKET_HOPS of the closed forms', and a run may
 * spend both in a mix. Before the first round the least work counts the
 * rounds as lone as far as the links allow (each link once a round), the
 * rest in the loop: here 2 rounds of 2 links hold 4 hops, the big lone
 * message takes 2, two hops of the second round's 8 go lone and 6 to the
 * loop. Each part is under its own limit, the two together are not: refused
 * before any round ran. */
void
test_packet_budget_mix(void)
{
	const int64_t mtu = 4096, np_a = (int64_t)MAX_PACKET_HOPS * 3 / 10,
	              np_b = (int64_t)MAX_LOOP_PACKET_HOPS / 10;
	Hand h;
	hand_init(&h, 3, mtu);
	hand_msg(&h, 0, 0, 2, 1, 1, 0, NULL);
	for (int i = 0; i < 4; i++)
		hand_msg(&h, 1, 0, 2, np_b, np_a, 0, NULL);
	SimOpts packet = {.mode = SIM_PACKET, .sync = SIM_ROUNDS};
	SimResult r;
	char err[512] = "";
	CU_ASSERT_EQUAL(sim_run(&h.a, &h.net, 0, np_a * mtu, &packet, &r, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "packet mode (store-and-forward) simulates at most"));
	CU_ASSERT_EQUAL(r.loop_hops, 6.0 * (double)np_b);
	CU_ASSERT_EQUAL(r.packet_hops - r.loop_hops, 2.0 * (double)np_a + 2.0 * (double)np_b);
	CU_ASSERT(r.loop_hops < MAX_LOOP_PACKET_HOPS &&
	          r.packet_hops - r.loop_hops < MAX_PACKET_HOPS);
	CU_ASSERT_EQUAL(r.round_end[0], 0);
	arena_free(&h.a);
}

/* Halving-doubling on ring(16384) at 1 MiB: its far rounds share links, so
 * nearly all its 5.6e8 packet-hops are the event loop's, and before its
 * first round the least work (every round as lone as the links allow) is
 * over the loop's limit: refused at once, where it was accepted and ran for
 * minutes. The estimate is asserted, not the time; bench_sim times it. */
void
test_packet_budget_refuses_hd(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Built b;
	CU_ASSERT_EQUAL_FATAL(build_as(dg, &b, "topology R = ring(16384);\n"
	                                   "collective allreduce HD on R { algorithm "
	                                   "halving_doubling; }\n", "HD", WAY_STREAMED), 0);
	CU_ASSERT_PTR_NOT_NULL(b.net.coll[0].stream);
	SimOpts packet = {.mode = SIM_PACKET, .sync = SIM_ROUNDS};
	SimResult r;
	char err[512] = "";
	CU_ASSERT_EQUAL(sim_run(&b.sim, &b.net, 0, 1 << 20, &packet, &r, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "packet mode (store-and-forward) simulates at most"));
	/* 16384 ranks, rounds of distance 2^k: 5.4e8 hops in messages of more
	 * than one; at most 28 rounds x 32768 links of them lone */
	CU_ASSERT(r.loop_hops > 5.2e8 && r.loop_hops > MAX_LOOP_PACKET_HOPS);
	CU_ASSERT(r.packet_hops < 5.6e8);
	for (int k = 0; k < r.nround; k++)
		CU_ASSERT_EQUAL(r.round_end[k], 0);
	built_free(dg, &b);
}

void
test_ring_allreduce(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	for (int p = 2; p <= 16; p++) {
		char text[512];
		snprintf(text, sizeof text,
		         NET400 "step_overhead = 1 us; }\ntopology R = ring(%d);\n"
		         "collective allreduce AR on R { algorithm ring; }\n", p);
		Built b;
		CU_ASSERT_EQUAL_FATAL(build_text(dg, &b, text, "AR"), 0);
		int64_t o = 1000000, d = 400000, bw = 400000000000;
		/* one packet holds the block */
		int64_t N = (int64_t)p * 1024;
		int64_t want = 2 * (p - 1) * (o + d + sim_ser_ps(N / p, bw));
		SimResult r = run_built(&b, N, SIM_PACKET, SIM_ROUNDS);
		assert_named(r.time_ps == want, __LINE__, __FILE__, "ring(%d), one packet: %lld, want %lld",
		             p, (long long)r.time_ps, (long long)want);
		SimResult rd = run_built(&b, N, SIM_PACKET, SIM_DEPS);
		assert_named(rd.time_ps == want, __LINE__, __FILE__, "ring(%d) deps: %lld, want %lld", p,
		             (long long)rd.time_ps, (long long)want);
		/* several packets per block: the pipelined form over one hop */
		N = (int64_t)p * 10000 + p;
		int64_t blk = N / p;
		want = 2 * (p - 1) * (o + closed_form(blk, 1, 4096, bw, d));
		r = run_built(&b, N, SIM_PACKET, SIM_ROUNDS);
		assert_named(r.time_ps == want, __LINE__, __FILE__, "ring(%d), pipelined: %lld, want %lld",
		             p, (long long)r.time_ps, (long long)want);
		built_free(dg, &b);
	}
}

/* Round-robin between messages on a link, except that one sender's
 * messages on one link go in issue order (deps mode). */
void
test_arbitration(void)
{
	Hand x;
	int64_t s = sim_ser_ps(4096, 400000000000), d = 400000;
	/* A: 3 packets and B: 1 packet, both 0 -> 1 from time 0, A issued first:
	 * deps mode serves the sender's queue in order, A0 A1 A2 B0 */
	hand_init(&x, 2, 4096);
	hand_msg(&x, 0, 0, 1, 3, 4, 0, NULL);
	hand_msg(&x, 1, 0, 1, 1, 4, 0, NULL);
	SimResult r = hand_run(&x, 4 * 4096, SIM_PACKET, SIM_DEPS);
	CU_ASSERT_EQUAL(r.round_end[0], (double)(3 * s + d) * 1e-12);
	CU_ASSERT_EQUAL(r.round_end[1], (double)(4 * s + d) * 1e-12);
	/* the same in flow mode: B starts when A has drained */
	r = hand_run(&x, 4 * 4096, SIM_FLOW, SIM_DEPS);
	CU_ASSERT_DOUBLE_EQUAL(r.round_end[1], (double)(4 * s + d) * 1e-12, 1e-15);
	arena_free(&x.a);
	/* in one round, round mode: A0 B0 A1 A2 (B leaves with A: one turn each) */
	hand_init(&x, 2, 4096);
	hand_msg(&x, 0, 0, 1, 3, 4, 0, NULL);
	hand_msg(&x, 0, 0, 1, 1, 4, 0, NULL);
	r = hand_run(&x, 4 * 4096, SIM_PACKET, SIM_ROUNDS);
	CU_ASSERT_EQUAL(r.time_ps, 4 * s + d);
	arena_free(&x.a);
	/* A: 0 -> 2 and B: 1 -> 2, 2 packets each. A's first packet reaches
	 * link 1 at s + d, when B has sent B0 (0..s) and B1 (s..2s): B first */
	hand_init(&x, 3, 4096);
	hand_msg(&x, 0, 0, 2, 1, 2, 0, NULL);
	hand_msg(&x, 1, 1, 2, 1, 2, 0, NULL);
	r = hand_run(&x, 4 * 4096, SIM_PACKET, SIM_DEPS);
	/* link 1: B0 [0, s), B1 [s, 2s); A's packets are ready at s + d and
	 * 2s + d (d = 400 ns > s = 81.92 ns) */
	int64_t a0 = s + d, a1 = 2 * s + d; /* ready times of A's packets at link 1 */
	int64_t end_a = (a1 > a0 + s ? a1 : a0 + s) + s + d;
	CU_ASSERT_EQUAL(r.round_end[1], (double)(2 * s + d) * 1e-12);
	CU_ASSERT_EQUAL(r.time_ps, end_a);
	arena_free(&x.a);
	/* both ready together: equal shares, the newcomer after */
	hand_init(&x, 2, 4096);
	hand_msg(&x, 0, 0, 1, 1, 2, 0, NULL);
	hand_msg(&x, 0, 0, 1, 1, 2, 0, NULL);
	r = hand_run(&x, 8 * 4096, SIM_PACKET, SIM_ROUNDS);
	/* 4 packets each, interleaved: the first finishes one packet early */
	CU_ASSERT_EQUAL(r.time_ps, 8 * s + d);
	arena_free(&x.a);
}

/* A round whose third message shares a link with the first: the fast path
 * has computed the first two when it finds out, and must leave no trace of
 * them; the event loop's results, counts not doubled. */
void
test_lone_then_shared(void)
{
	Hand x;
	int64_t s = sim_ser_ps(4096, 400000000000), d = 400000;
	hand_init(&x, 4, 4096);
	hand_msg(&x, 0, 0, 1, 1, 2, 0, NULL); /* link 0 */
	hand_msg(&x, 0, 2, 3, 1, 2, 0, NULL); /* link 2 */
	hand_msg(&x, 0, 0, 2, 1, 2, 0, NULL); /* links 0 and 1 */
	SimResult r = hand_run(&x, 2 * 4096, SIM_PACKET, SIM_ROUNDS);
	SimResult ev = hand_run(&x, 2 * 4096, SIM_PACKET, SIM_DEPS);
	/* link 0 sends the first message's packet, then the third's */
	CU_ASSERT_EQUAL(r.time_ps, 2 * s + d + s + d);
	CU_ASSERT_EQUAL(r.time_ps, ev.time_ps);
	CU_ASSERT_EQUAL(r.link_bytes[0], 2 * 4096);
	CU_ASSERT_EQUAL(r.link_bytes[1], 4096);
	CU_ASSERT_EQUAL(r.link_bytes[2], 4096);
	CU_ASSERT_EQUAL(r.link_busy[0], (double)(2 * s) * 1e-12);
	for (int l = 0; l < 3; l++) {
		CU_ASSERT_EQUAL(r.link_bytes[l], ev.link_bytes[l]);
		CU_ASSERT_EQUAL(r.link_busy[l], ev.link_busy[l]);
	}
	CU_ASSERT_EQUAL(r.energy_j, ev.energy_j);
	arena_free(&x.a);
}

/* The contention-free time of each round: its slowest message alone. */
static int64_t
alone(const SimNet *n, const SimColl *c, int m, int64_t bytes)
{
	const SimMsg *msg = &c->msg[m];
	return closed_form(sim_msg_bytes(msg, bytes), msg->nhop, n->mtu, n->link[0].bw,
	                   n->link[0].lat_ps + n->router_ps);
}

static int
contended_rounds(Built *b, int64_t bytes)
{
	SimResult r = run_built(b, bytes, SIM_PACKET, SIM_ROUNDS);
	const SimColl *c = &b->net.coll[0];
	int n = 0;
	double prev = 0;
	for (int round = 0, m = 0; round < c->nround; round++) {
		int64_t worst = 0;
		for (; m < c->nmsg && c->msg[m].round == round; m++)
			if (alone(&b->net, c, m, bytes) > worst)
				worst = alone(&b->net, c, m, bytes);
		double took = r.round_end[round] - prev - (double)b->net.step_ps * 1e-12;
		n += took > (double)worst * 1e-12 * (1 + 1e-9);
		prev = r.round_end[round];
	}
	return n;
}

void
test_contention_torus(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Built b;
	CU_ASSERT_EQUAL_FATAL(build_text(dg, &b, NET400 "}\ntopology T = torus(8, 8);\n"
	                                 "collective allreduce HD on T { algorithm halving_doubling; }\n",
	                                 "HD"), 0);
	int hd = contended_rounds(&b, 1 << 20);
	assert_named(hd > 0, __LINE__, __FILE__, "halving-doubling: %d contended rounds", hd);
	built_free(dg, &b);
	CU_ASSERT_EQUAL_FATAL(build_text(dg, &b, NET400 "}\ntopology T = torus(8, 8);\n"
	                                 "group G on T { translate; map (x, y) -> (-x, -y); "
	                                 "map (x, y) -> (y, x); }\ntree B = bfs(T, root (0, 0));\n"
	                                 "collective allreduce SP on T { algorithm symmetric(trees B, "
	                                 "group G); }\n", "SP"), 0);
	int sp = contended_rounds(&b, 1 << 20);
	assert_named(sp == 0, __LINE__, __FILE__, "SP: %d contended rounds", sp);
	built_free(dg, &b);
}

void
test_sp_goodput(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Built b;
	CU_ASSERT_EQUAL_FATAL(build_text(dg, &b, sp8, "SP"), 0);
	SimResult r = run_built(&b, 256 << 20, SIM_FLOW, SIM_ROUNDS);
	assert_named(r.bound_ratio >= 0.95, __LINE__, __FILE__, "SP 8x8 256 MiB: %.4f of the bound",
	             r.bound_ratio);
	CU_ASSERT(r.bound_ratio <= 1);
	CU_ASSERT_EQUAL(r.bound_bps, 800e9);
	built_free(dg, &b);
	/* the rectangles, with the two-tree construction (seed's figures) */
	static const struct { int x, y; double seed; } rect[] = {
		{64, 16, 0.972}, {128, 8, 0.955}, {256, 4, 0.914}};
	for (size_t i = 0; i < countof(rect); i++) {
		char text[512];
		snprintf(text, sizeof text, NET400 "}\ntopology T = torus(%d, %d);\n"
		         "group G on T { translate; map (x, y) -> (-x, -y); }\n"
		         "trees P = balanced_pair(T, root (0, 0));\n"
		         "collective allreduce SP on T { algorithm symmetric(trees P, group G); }\n",
		         rect[i].x, rect[i].y);
		CU_ASSERT_EQUAL_FATAL(build_text(dg, &b, text, "SP"), 0);
		r = run_built(&b, 256 << 20, SIM_FLOW, SIM_ROUNDS);
		assert_named(r.bound_ratio >= rect[i].seed, __LINE__, __FILE__,
		             "SP %dx%d 256 MiB: %.4f of the bound, seed %.3f", rect[i].x, rect[i].y,
		             r.bound_ratio, rect[i].seed);
		built_free(dg, &b);
	}
}

void
test_sp_vs_bucket(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Built sp, bk;
	CU_ASSERT_EQUAL_FATAL(build_text(dg, &sp, sp8, "SP"), 0);
	CU_ASSERT_EQUAL_FATAL(build_text(dg, &bk, sp8, "BK"), 0);
	SimResult a = run_built(&sp, 64 << 10, SIM_PACKET, SIM_ROUNDS);
	SimResult c = run_built(&bk, 64 << 10, SIM_PACKET, SIM_ROUNDS);
	double speedup = c.time_s / a.time_s;
	double rounds = (double)bk.net.coll[0].nround / sp.net.coll[0].nround;
	/* about the round ratio (the seed measured 1.74x on 8x8) */
	assert_named(speedup > 1.5 && speedup <= rounds * 1.05, __LINE__, __FILE__,
	             "SP over Bucket at 64 KiB: %.3fx, round ratio %.3f", speedup, rounds);
	built_free(dg, &sp);
	built_free(dg, &bk);
}

/* Messages of no bytes (a fraction 0 of the vector) take no time in
 * either mode, on the lone-message path and in the event loop alike. */
void
test_empty_messages(void)
{
	for (int h = 1; h <= 2; h++)
		for (int mode = 0; mode < 2; mode++)
			for (int sync = 0; sync < 2; sync++) {
				Hand x;
				hand_init(&x, h + 1, 4096);
				x.net.step_ps = 500000;
				hand_msg(&x, 0, 0, h, 0, 1, 0, NULL);
				SimResult r = hand_run(&x, 1 << 20, (SimMode)mode, (SimSync)sync);
				assert_named(r.time_s == 500000e-12 && (mode == SIM_FLOW || r.time_ps == 500000),
				             __LINE__, __FILE__, "h=%d mode %d sync %d: %.9g s, want the step "
				             "overhead alone", h, mode, sync, r.time_s);
				arena_free(&x.a);
			}
}

/* TTO on the 4x4 mesh (algorithms.md 9.4), packet mode, rounds in step:
 * chunks of q whole packets, so a message of H hops whose busiest link
 * carries L messages of its round ends at H d + (H - 1) s + L q s (s: one
 * packet's time; docs/sim.md's lone-message and arbitration forms), and the
 * collective takes the sum over rounds of o plus the slowest. With no link
 * shared that is 9.4's ideal (M + 2h - 1)(o + T_c), T_c = d + q s; reduce
 * and broadcast of different trees share links, at most two per link. */
void
test_tto(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Built b;
	CU_ASSERT_EQUAL_FATAL(build_text(dg, &b, NET400 "step_overhead = 1 us; }\n"
	                                 "topology M = mesh(4, 4);\ncollective allreduce TTO on M {"
	                                 " algorithm tto; ranks 0..11, 13..15; chunks 54; }\n", "TTO"), 0);
	const Sched *x = b.prog.sched[0];
	int m = x->nchunk / 3, h = 2 * 4 - 3, q = 2;
	CU_ASSERT_EQUAL_FATAL(x->nround, m + 2 * h - 1);
	int64_t o = 1000000, d = 400000, sp = sim_ser_ps(4096, 400000000000);
	int nl = x->topo->nlink, *load = xmalloc((size_t)nl * sizeof *load);
	int64_t want = 0;
	for (int r = 0, j = 0; r < x->nround; r++) {
		int first = j;
		for (int l = 0; l < nl; l++)
			load[l] = 0;
		for (; j < x->nmsg && x->msg[j].round == r; j++)
			for (int e = x->route_off[x->msg[j].route]; e < x->route_off[x->msg[j].route + 1]; e++)
				load[x->route_link[e]]++;
		int64_t slowest = 0;
		for (int i = first; i < j; i++) {
			int hops = sched_route_len(x, x->msg[i].route), busiest = 0;
			for (int e = 0; e < hops; e++) {
				int l = x->route_link[x->route_off[x->msg[i].route] + e];
				busiest = load[l] > busiest ? load[l] : busiest;
			}
			int64_t t = hops * d + (hops - 1) * sp + busiest * q * sp;
			slowest = t > slowest ? t : slowest;
		}
		want += o + slowest;
	}
	free(load);
	SimResult r = run_built(&b, (int64_t)x->nchunk * q * 4096, SIM_PACKET, SIM_ROUNDS);
	int64_t ideal = x->nround * (o + d + q * sp), shared = x->nround * (o + 2 * d + sp + 2 * q * sp);
	assert_named(r.time_ps == want && ideal < want && want <= shared, __LINE__, __FILE__,
	             "TTO 4x4, M = %d: %lld ps, per-round form %lld, ideal %lld, all shared %lld", m,
	             (long long)r.time_ps, (long long)want, (long long)ideal, (long long)shared);
	built_free(dg, &b);
}

/* shortest_path (ECMP over minimal paths) sends halving-doubling's exchanges
 * at distance 4 of a ring of 8 both ways round, dor all one way; on the
 * nearest-neighbour ring of row 0 they take the same links. */
void
test_routing_policies(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char *const src[] = {
	    "network { link_bandwidth = 400 GBps; link_latency = 0.025 us; }\n"
	    "topology T = torus(8, 8);\n"
	    "collective allreduce X on T { algorithm halving_doubling; ranks 0..15; "
	    "routing shortest_path; }\n",
	    "network { link_bandwidth = 400 GBps; link_latency = 0.025 us; }\n"
	    "topology T = torus(8, 8);\n"
	    "collective allreduce X on T { algorithm ring(ports 2); ranks 0..7; "
	    "routing shortest_path; }\n"};
	for (int k = 0; k < 2; k++) {
		char dor[512];
		snprintf(dor, sizeof dor, "%.*sdor; }\n", (int)(strstr(src[k], "shortest_path") -
		         src[k]), src[k]);
		Built a, b;
		CU_ASSERT_EQUAL_FATAL(build_text(dg, &a, src[k], "X"), 0);
		CU_ASSERT_EQUAL_FATAL(build_text(dg, &b, dor, "X"), 0);
		SimResult ra = run_built(&a, 4 << 20, SIM_PACKET, SIM_ROUNDS);
		SimResult rb = run_built(&b, 4 << 20, SIM_PACKET, SIM_ROUNDS);
		if (k == 0)
			assert_named(ra.time_ps * 1.1 < rb.time_ps, __LINE__, __FILE__,
			             "HD 16 of 8x8, 4 MiB: shortest_path %lld ps, dor %lld ps",
			             (long long)ra.time_ps, (long long)rb.time_ps);
		else
			assert_named(ra.time_ps == rb.time_ps, __LINE__, __FILE__, "ring of row 0: "
			             "shortest_path %lld ps, dor %lld ps", (long long)ra.time_ps,
			             (long long)rb.time_ps);
		built_free(dg, &a);
		built_free(dg, &b);
	}
}

/* Private links (a fabric without link contention): halving-doubling on
 * ring(8), where shared links make the distance-2 and distance-4 exchanges
 * queue 2 and 4 deep, takes with private links the lone-message time of each
 * round: with one packet per message (mtu above every message) or in flow
 * mode, sum over the 6 rounds of o + h.d + 8M/B, M = N/2^(k+1) over h = 2^k
 * hops (packet: h serializations of the one packet). */
void
test_private_links(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	const char *src = "network { link_bandwidth = 400 GBps; link_latency = 0.1 us; "
	                  "router_latency = 0 ns; step_overhead = 0.5 us; mtu = 1 MiB; }\n"
	                  "topology T = ring(8);\n"
	                  "collective allreduce X on T { algorithm halving_doubling; }\n";
	Built b;
	CU_ASSERT_EQUAL_FATAL(build_text(dg, &b, src, "X"), 0);
	int64_t N = 1 << 20, bw = 400000000000LL * 8, d = 100000, o = 500000;
	int64_t packet = 0;
	double flow = 0;
	for (int k = 0; k < 3; k++) {
		int64_t M = N >> (k + 1), h = 1 << k;
		packet += 2 * (o + h * (d + sim_ser_ps(M, bw)));
		flow += 2 * (o * 1e-12 + (double)h * d * 1e-12 + 8.0 * (double)M / (double)bw);
	}
	for (int mode = 0; mode < 2; mode++) {
		SimOpts po = {.mode = mode ? SIM_FLOW : SIM_PACKET, .sync = SIM_ROUNDS,
		              .private_links = true};
		SimOpts so = po;
		so.private_links = false;
		SimResult rp, rs;
		char err[256];
		CU_ASSERT_EQUAL_FATAL(sim_run(&b.sim, &b.net, 0, N, &po, &rp, err, sizeof err), 0);
		CU_ASSERT_EQUAL_FATAL(sim_run(&b.sim, &b.net, 0, N, &so, &rs, err, sizeof err), 0);
		if (mode == 0)
			assert_named(rp.time_ps == packet, __LINE__, __FILE__, "packet, private links: "
			             "%lld ps, closed form %lld", (long long)rp.time_ps, (long long)packet);
		else
			assert_named(fabs(rp.time_s - flow) <= 1e-9 * flow, __LINE__, __FILE__,
			             "flow, private links: %.9g s, closed form %.9g", rp.time_s, flow);
		/* shared flows split the links of the longer exchanges: slower (one
		 * store-and-forward packet per message is still in time for them) */
		assert_named(mode == 0 || rs.time_s > rp.time_s * 1.2, __LINE__, __FILE__, "shared %.9g s, "
		             "private %.9g s", rs.time_s, rp.time_s);
	}
	/* packet mode keeps no per-message state to run private links by dependencies */
	SimOpts dep = {.mode = SIM_PACKET, .sync = SIM_DEPS, .private_links = true};
	SimResult r;
	char err[256];
	CU_ASSERT_NOT_EQUAL(sim_run(&b.sim, &b.net, 0, N, &dep, &r, err, sizeof err), 0);
	built_free(dg, &b);
}

/* ring(halfway) on ring(p): floor(p/2) rounds per phase, every rank sends a
 * whole block (N/p) to both neighbours (one at the last round when p is
 * even), one hop: T = 2 floor(p/2) (o + d + ser(N/p)) with one packet per
 * block; ring(ports 2) takes 2(p - 1) rounds of half blocks. */
void
test_ring_halfway(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	for (int p = 2; p <= 9; p++) {
		char src[512];
		snprintf(src, sizeof src, "network { link_bandwidth = 400 GBps; link_latency = 0.1 us; "
		         "router_latency = 0 ns; step_overhead = 0.5 us; mtu = 1 MiB; }\n"
		         "topology T = ring(%d);\n"
		         "collective allreduce X on T { algorithm ring(halfway); }\n", p);
		Built b;
		CU_ASSERT_EQUAL_FATAL(build_text(dg, &b, src, "X"), 0);
		CU_ASSERT_EQUAL(b.prog.sched[0]->nround, 2 * (p / 2));
		int64_t N = (int64_t)p * 4096;
		int64_t want = 2 * (p / 2) * (500000 + 100000 + sim_ser_ps(N / p, 400000000000LL * 8));
		SimResult r = run_built(&b, N, SIM_PACKET, SIM_ROUNDS);
		assert_named(r.time_ps == want, __LINE__, __FILE__, "ring(halfway) on ring(%d): %lld ps, "
		             "closed form %lld", p, (long long)r.time_ps, (long long)want);
		built_free(dg, &b);
	}
}
