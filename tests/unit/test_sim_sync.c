/*
 * test_sim_sync.c: the two synchronization modes (rounds, dependencies),
 * barriers, instances' queues, pipelines in both modes, and every cost term
 * (step overhead, latency, serialization, reduction) in closed form.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_sim.h"

void
test_modes(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* agree: ring allreduce (one message per rank per round, equal sizes
	 * and routes) with several packets per message */
	Built b;
	CU_ASSERT_EQUAL_FATAL(build_text(dg, &b, NET400 "step_overhead = 500 ns; }\n"
	                                 "topology T = ring(12);\n"
	                                 "collective allreduce AR on T { algorithm ring; }\n", "AR"), 0);
	SimResult r = run_built(&b, 1 << 20, SIM_PACKET, SIM_ROUNDS);
	SimResult d = run_built(&b, 1 << 20, SIM_PACKET, SIM_DEPS);
	CU_ASSERT_EQUAL(r.time_ps, d.time_ps);
	built_free(dg, &b);
	/* differ: a long message holds its round back in round mode, while in
	 * dependency mode an independent chain runs past it */
	Hand x;
	hand_init(&x, 4, 4096);
	x.net.step_ps = 1000000;
	hand_msg(&x, 0, 0, 1, 1, 1, 0, NULL);       /* long: the whole vector */
	hand_msg(&x, 0, 2, 3, 1, 64, 0, NULL);      /* short */
	int dep = 1;
	hand_msg(&x, 1, 2, 3, 1, 64, 1, &dep);      /* needs the short one */
	int64_t N = 1 << 20, o = 1000000, dd = 400000;
	int64_t tl = closed_form(N, 1, 4096, 400000000000, dd);
	int64_t ts = closed_form(N / 64, 1, 4096, 400000000000, dd);
	SimResult rr = hand_run(&x, N, SIM_PACKET, SIM_ROUNDS);
	SimResult rd = hand_run(&x, N, SIM_PACKET, SIM_DEPS);
	CU_ASSERT_EQUAL(rr.time_ps, o + tl + o + ts);
	CU_ASSERT_EQUAL(rd.time_ps, o + tl > 2 * (o + ts) ? o + tl : 2 * (o + ts));
	CU_ASSERT(rd.time_ps < rr.time_ps);
	arena_free(&x.a);
}

/* A barrier before round 1 (SimColl.barrier) holds the chain of test_modes
 * back by dependencies too: its second message waits for the long one, so
 * T = o + t_long + o + t_short in both sync modes, packet and flow; without
 * it, by dependencies, max(o + t_long, 2(o + t_short)). */

void
test_barrier(void)
{
	int64_t N = 1 << 20, o = 1000000, dd = 400000, bw = 400000000000;
	int64_t tl = closed_form(N, 1, 4096, bw, dd), ts = closed_form(N / 64, 1, 4096, bw, dd);
	double fl = 8.0 * N / 400e9 + 400e-9, fs = 8.0 * N / 64 / 400e9 + 400e-9;
	for (int barrier = 0; barrier <= 1; barrier++) {
		Hand x;
		hand_init(&x, 4, 4096);
		x.net.step_ps = o;
		hand_msg(&x, 0, 0, 1, 1, 1, 0, NULL);
		hand_msg(&x, 0, 2, 3, 1, 64, 0, NULL);
		int dep = 1;
		hand_msg(&x, 1, 2, 3, 1, 64, 1, &dep);
		unsigned char marks[3] = {0, 1, 0};
		x.c.barrier = barrier ? marks : NULL;
		SimResult rr = hand_run(&x, N, SIM_PACKET, SIM_ROUNDS);
		SimResult rd = hand_run(&x, N, SIM_PACKET, SIM_DEPS);
		SimResult fd = hand_run(&x, N, SIM_FLOW, SIM_DEPS);
		CU_ASSERT_EQUAL(rr.time_ps, o + tl + o + ts);
		if (barrier) {
			CU_ASSERT_EQUAL(rd.time_ps, o + tl + o + ts);
			CU_ASSERT(within(fd.time_s, 2e-6 + fl + fs, 1e-9));
		} else {
			CU_ASSERT_EQUAL(rd.time_ps, o + tl > 2 * (o + ts) ? o + tl : 2 * (o + ts));
			CU_ASSERT(within(fd.time_s, 1e-6 + fl, 1e-9));
		}
		arena_free(&x.a);
	}
}

/* Bucket on torus(8, 4) runs phase by phase: by dependencies each instance
 * goes round its ring at its own pace, on links of its own, and waits at the
 * phase's barrier, so T is the sum over the four phases of the slowest
 * ring's steps, each o + d + 8M/B (flow mode): reduce-scatter phase 1 is
 * x-first instances' 7 steps of N/32 against y-first ones' 3 of N/16, phase
 * 2 their 3 and 7 steps of N/128; the allgather mirrors it. Round by round
 * the instances move in lock step, 28 rounds of 4 phases x 7. */
void
test_bucket_phases(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Built b;
	CU_ASSERT_EQUAL_FATAL(build_as(dg, &b, NET400 "step_overhead = 500 ns; }\n"
	                               "topology T = torus(8, 4);\n"
	                               "collective allreduce B on T { algorithm bucket; }\n",
	                               "B", WAY_COMPACT), 0);
	CU_ASSERT_EQUAL(b.prog.sched[0]->nround, 28);
	double N = 1 << 20, o = 500e-9, d = 400e-9, B = 400e9;
	double p1 = 7 * (o + d + 8 * N / 32 / B), p1y = 3 * (o + d + 8 * N / 16 / B);
	double p2 = 7 * (o + d + 8 * N / 128 / B);
	double want = 2 * ((p1 > p1y ? p1 : p1y) + p2);
	SimResult r = run_built(&b, 1 << 20, SIM_FLOW, SIM_DEPS);
	CU_ASSERT(within(r.time_s, want, 1e-9));
	SimResult lock = run_built(&b, 1 << 20, SIM_FLOW, SIM_ROUNDS);
	CU_ASSERT(lock.time_s > want * 1.05);
	built_free(dg, &b);
}

/* Instances (SimMsg.instance) are queued apart by dependencies. On the chain
 * 0 -> 1 -> 2: a long message L (N) and a short one S (N/64) leave node 0
 * over link 0 together, and C (N/64) goes on from node 1 once S is there.
 * One instance: S waits behind L (issue order), T = (b + 2a) s + 2d in
 * packet mode (a, b packets of S and L, s one packet's time, d a hop's
 * delay). Two: S shares link 0 round-robin from the start, arriving at
 * 2a s + d (L was first in the rotation), C at 3a s + 2d, and L last at
 * (a + b) s + d. Flow mode: 8N/B + 2 (8N/64)/B + 2d against max(3 (8N/64)/B
 * + 2d, 8(N + N/64)/B + d). Rounds mode ignores instances. */

void
test_instance_queues(void)
{
	int64_t N = 1 << 20, mtu = 4096, bw = 400000000000, d = 400000;
	int64_t s = sim_ser_ps(mtu, bw), a = N / 64 / mtu, b = N / mtu;
	double B = 400e9, dl = 400e-9, tl = 8.0 * N / B, ts = 8.0 * N / 64 / B;
	for (int inst = 0; inst <= 1; inst++) {
		Hand x;
		hand_init(&x, 3, mtu);
		hand_msg(&x, 0, 0, 1, 1, 1, 0, NULL);
		hand_msg(&x, 1, 0, 1, 1, 64, 0, NULL);
		int dep = 1;
		hand_msg(&x, 2, 1, 2, 1, 64, 1, &dep);
		x.msg[1].instance = x.msg[2].instance = inst;
		SimResult p = hand_run(&x, N, SIM_PACKET, SIM_DEPS);
		SimResult f = hand_run(&x, N, SIM_FLOW, SIM_DEPS);
		SimResult r = hand_run(&x, N, SIM_PACKET, SIM_ROUNDS);
		if (inst == 0) {
			CU_ASSERT_EQUAL(p.time_ps, (b + 2 * a) * s + 2 * d);
			CU_ASSERT(within(f.time_s, tl + 2 * ts + 2 * dl, 1e-9));
		} else {
			int64_t c = 3 * a * s + 2 * d, l = (a + b) * s + d;
			CU_ASSERT_EQUAL(p.time_ps, c > l ? c : l);
			CU_ASSERT(within(f.time_s, fmax(3 * ts + 2 * dl, tl + ts + dl), 1e-9));
		}
		/* round by round: L, then S, then C, whatever the instances */
		CU_ASSERT_EQUAL(r.time_ps, (b + 2 * a) * s + 3 * d);
		arena_free(&x.a);
	}
}

/*
 * TTO (4x4 mesh) and pipelined trees (4x4 SuperMeshBi corner trees) in both
 * sync modes. Rounds: (M + 2h - 1) slots of o plus a slot's transfer.
 * Deps: each link queue streams its segments back to back, so the time is
 * at least the pipeline's M + 2h - 1 slots without the overhead, and no
 * more than the round-synchronous time (it was 1.6x more with plain
 * round-robin, which started all of a leaf's segments at once).
 */
void
test_pipelines_both_modes(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char *const text[] = {
		NET400 "step_overhead = 1 us; }\ntopology M = mesh(4, 4);\ncollective allreduce X on M {"
		" algorithm tto; ranks 0..11, 13..15; chunks 54; }\n",
		NET400 "step_overhead = 1 us; }\ntopology S = supermesh(4, 4, bi);\n"
		"trees C = disjoint(S, roots 0, 3, 15, 12);\ncollective allreduce X on S {"
		" algorithm pipelined_trees(trees C, segments 24); }\n",
	};
	for (size_t i = 0; i < countof(text); i++) {
		Built b;
		CU_ASSERT_EQUAL_FATAL(build_text(dg, &b, text[i], "X"), 0);
		const Sched *x = b.prog.sched[0];
		int ntree = i == 0 ? 3 : 4, m = x->nchunk / ntree, h = (x->nround - m + 1) / 2;
		CU_ASSERT_EQUAL(x->nround, m + 2 * h - 1);
		int q = 2;
		int64_t d = 400000, sp = sim_ser_ps(4096, 400000000000);
		int64_t bytes = (int64_t)x->nchunk * q * 4096;
		SimResult rr = run_built(&b, bytes, SIM_PACKET, SIM_ROUNDS);
		SimResult rd = run_built(&b, bytes, SIM_PACKET, SIM_DEPS);
		int64_t floor = (int64_t)(m + 2 * h - 1) * q * sp + (2 * h - 1) * d;
		assert_named(rd.time_ps >= floor && rd.time_ps <= rr.time_ps, __LINE__, __FILE__,
		             "%s: deps %lld ps, rounds %lld, pipeline floor %lld", i ? "pipelined_trees"
		             : "tto", (long long)rd.time_ps, (long long)rr.time_ps, (long long)floor);
		SimResult fd = run_built(&b, bytes, SIM_FLOW, SIM_DEPS);
		assert_named(fd.time_s <= rr.time_s * 1.02, __LINE__, __FILE__, "flow deps %g s, "
		             "rounds %g s", fd.time_s, rr.time_s);
		built_free(dg, &b);
	}
}

/* Every term of each mode's cost against its closed form, in both
 * synchronisations: a reduced message over h hops, then (round 2, after it)
 * a copy of half the size. Each case sets the terms apart (bandwidth, link
 * latency, router latency, step overhead, reduction rate), some to zero,
 * so a term dropped or counted twice changes the time.
 *   packet: T = 2 o + P(N, d) + ceil(N 10^12 / R) + P(N / 2, d), d = lat + router,
 *           P the lone-message form (closed_form)
 *   flow:   T = 2 o + 2 h d + 8 N / B + N / R + 8 (N / 2) / B */
void
test_cost_terms(void)
{
	static const struct {
		int64_t lat, router, step, bw;
		double rate;
		int h;
		int64_t N;
	} cases[] = {
		{100000, 300000, 500000, 400000000000, 1e9, 3, 10000},
		{100000, 0, 0, 400000000000, 0, 2, 10000},
		{0, 300000, 0, 100000000000, 0, 2, 5000},
		{0, 0, 700000, 400000000000, 0, 1, 4096},
		{0, 0, 0, 400000000000, 5e8, 2, 3000},
		{250000, 70000, 1000000, 200000000000, 2e9, 4, 1 << 20},
	};
	for (size_t i = 0; i < countof(cases); i++)
		for (int mode = 0; mode < 2; mode++)
			for (int sync = 0; sync < 2; sync++) {
				Hand x;
				hand_init(&x, cases[i].h + 1, 4096);
				x.net.router_ps = cases[i].router;
				x.net.step_ps = cases[i].step;
				for (int l = 0; l < x.net.nlink; l++) {
					x.net.link[l].lat_ps = cases[i].lat;
					x.net.link[l].bw = cases[i].bw;
				}
				hand_msg(&x, 0, 0, cases[i].h, 1, 1, 0, NULL);
				x.msg[0].reduce = true;
				int dep = 0;
				hand_msg(&x, 1, 0, cases[i].h, 1, 2, 1, &dep);
				SimOpts o = {.mode = (SimMode)mode, .sync = (SimSync)sync,
				             .reduce_rate = cases[i].rate};
				SimResult r;
				char err[256];
				CU_ASSERT_EQUAL_FATAL(sim_run(&x.a, &x.net, 0, cases[i].N, &o, &r, err,
				                              sizeof err), 0);
				int64_t N = cases[i].N, d = cases[i].lat + cases[i].router;
				int h = cases[i].h;
				double B = (double)cases[i].bw, R = cases[i].rate;
				if (mode == SIM_PACKET) {
					int64_t red = R > 0 ? (int64_t)ceil((double)N * 1e12 / R) : 0;
					int64_t want = 2 * cases[i].step + closed_form(N, h, 4096, cases[i].bw, d) +
					               red + closed_form(N / 2, h, 4096, cases[i].bw, d);
					assert_named(r.time_ps == want, __LINE__, __FILE__,
					             "case %zu packet sync %d: %lld ps, closed form %lld ps", i, sync,
					             (long long)r.time_ps, (long long)want);
				} else {
					double want = 2 * (double)cases[i].step * 1e-12 + 2 * h * (double)d * 1e-12 +
					              8.0 * (double)N / B + (R > 0 ? (double)N / R : 0) +
					              8.0 * (double)(N / 2) / B;
					assert_named(within(r.time_s, want, 1e-9), __LINE__, __FILE__,
					             "case %zu flow sync %d: %.9g s, closed form %.9g s", i, sync,
					             r.time_s, want);
				}
				arena_free(&x.a);
			}
}

/* Reduction cost: each reduced message waits for the receiver's engine. */
void
test_reduce_cost(void)
{
	Hand x;
	hand_init(&x, 2, 4096);
	hand_msg(&x, 0, 0, 1, 1, 1, 0, NULL);
	x.msg[0].reduce = true;
	SimOpts o = {.mode = SIM_PACKET, .sync = SIM_ROUNDS, .reduce_rate = 1e9};
	SimResult r;
	char err[256];
	CU_ASSERT_EQUAL(sim_run(&x.a, &x.net, 0, 1000, &o, &r, err, sizeof err), 0);
	/* 1000 B at 1 GB/s = 1 us after arrival */
	CU_ASSERT_EQUAL(r.time_ps, closed_form(1000, 1, 4096, 400000000000, 400000) + 1000000);
	arena_free(&x.a);
}
