/*
 * test_sim_cut_through.c: virtual cut-through (docs/sim.md 2.1.1): a message
 * over h hops, links of different rates, the .sim text's switching and
 * buffer, back-pressure and buffer contention by hand, all-to-all on tori
 * without deadlock, and collc against BookSim2 (2.5.1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_sim.h"

/*
 * One message over h equal hops: the serialization once plus h hop delays,
 * T = h d + sum of ser(packet), by the closed form (rounds) and the event
 * loop (deps) alike. With a buffer of one packet every packet waits for the
 * one before to leave the next router: S_j(k) = j d + k (d + s), so
 * T = h d + (k - 1)(d + s) + ser(last) for h >= 2.
 */
void
test_vct_single_message(void)
{
	const int64_t bw = 400000000000, d = 400000, mtu = 4096, s = sim_ser_ps(mtu, bw);
	const int64_t sizes[] = {100, 4096, 10000, 65536, 3 * 4096 + 1};
	for (int hops = 1; hops <= 5; hops++)
		for (size_t i = 0; i < countof(sizes); i++)
			for (int64_t buffer = 1; buffer <= 8; buffer += 7) {
				int64_t M = sizes[i], k = (M + mtu - 1) / mtu, last = M - (k - 1) * mtu;
				int64_t sum = (k - 1) * s + sim_ser_ps(last, bw);
				int64_t want = hops * d + sum;
				if (buffer == 1 && hops >= 2)
					want = hops * d + (k - 1) * (d + s) + sim_ser_ps(last, bw);
				for (int sync = 0; sync < 2; sync++) {
					Hand h;
					hand_vct(&h, hops + 1, mtu, buffer);
					hand_msg(&h, 0, 0, hops, 1, 1, 0, NULL);
					SimResult r = hand_run(&h, M, SIM_PACKET, sync ? SIM_DEPS : SIM_ROUNDS);
					assert_named(r.time_ps == want, __LINE__, __FILE__,
					             "h = %d, M = %lld, buffer %lld, %s: %lld ps, want %lld",
					             hops, (long long)M, (long long)buffer,
					             sync ? "deps" : "rounds", (long long)r.time_ps,
					             (long long)want);
					arena_free(&h.a);
				}
			}
}

/*
 * Links of different rates: a packet goes on as its head arrives onto a
 * link as slow or slower, and onto a faster one so that its tail does not
 * outrun it, so a message alone with room in every buffer crosses at its
 * slowest link's rate, once: T = h d + sum of ser_slowest(packet), by the
 * closed form (rounds) and the event loop (deps). With buffers of 2 packets
 * behind a slower link the closed form does not apply, and the event loop
 * gives the same time round by round as by dependencies.
 */
void
test_vct_unequal_links(void)
{
	static const int64_t rates[][3] = {{400, 800, 800}, {800, 400, 0}, {800, 400, 800},
	                                   {400, 400, 200}};
	const int64_t mtu = 4096, d = 400000, M = 16 * mtu - 100;
	for (size_t i = 0; i < countof(rates); i++)
		for (int64_t buffer = 0; buffer <= 2; buffer += 2) {
			int hops = rates[i][2] ? 3 : 2;
			int64_t slow = rates[i][0];
			for (int j = 0; j < hops; j++)
				slow = rates[i][j] < slow ? rates[i][j] : slow;
			int64_t want = hops * d + 15 * sim_ser_ps(mtu, slow * 1000000000) +
			               sim_ser_ps(mtu - 100, slow * 1000000000);
			int64_t got[2];
			for (int sync = 0; sync < 2; sync++) {
				Hand h;
				hand_vct(&h, hops + 1, mtu, buffer);
				for (int j = 0; j < hops; j++)
					h.net.link[j].bw = rates[i][j] * 1000000000;
				hand_msg(&h, 0, 0, hops, 1, 1, 0, NULL);
				got[sync] = hand_run(&h, M, SIM_PACKET, sync ? SIM_DEPS : SIM_ROUNDS).time_ps;
				arena_free(&h.a);
			}
			assert_named(got[0] == got[1] && (buffer || got[0] == want), __LINE__, __FILE__,
			             "rates %lld/%lld/%lld, buffer %lld: rounds %lld ps, deps %lld, want %lld",
			             (long long)rates[i][0], (long long)rates[i][1], (long long)rates[i][2],
			             (long long)buffer, (long long)got[0], (long long)got[1],
			             (long long)want);
		}
}

/* The switching and the buffer through the .sim text as collc sim reads it:
 * written only when set, read back, and a bad word refused. */
void
test_vct_text(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct { SimSwitching sw; int64_t pkts, bytes; const char *words; } cases[] = {
		{SIM_CUT_THROUGH, 0, 0, NULL},
		{SIM_CUT_THROUGH, 3, 0, " buffer_packets 3\n"},
		{SIM_STORE_AND_FORWARD, 0, 10000, " switching store_and_forward buffer_bytes 10000\n"},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		Hand h;
		hand_vct(&h, 3, 4096, cases[i].pkts);
		h.net.switching = cases[i].sw;
		h.net.buffer_bytes = cases[i].bytes;
		hand_msg(&h, 0, 0, 2, 1, 1, 0, NULL);
		char *buf = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&buf, &len);
		sim_write(&h.net, mem);
		fclose(mem);
		CU_ASSERT(cases[i].words ? strstr(buf, cases[i].words) != NULL
		                         : strstr(buf, "switching") == NULL && strstr(buf, "buffer") == NULL);
		SimNet back;
		diag_source(dg, "t.sim", buf, len);
		CU_ASSERT_EQUAL_FATAL(sim_read(dg, &h.a, buf, len, &back), 0);
		CU_ASSERT(back.switching == cases[i].sw && back.buffer_pkts == cases[i].pkts &&
		          back.buffer_bytes == cases[i].bytes);
		/* the net line with a switching no router has */
		char *at = strstr(buf, " step_ps 0");
		CU_ASSERT_PTR_NOT_NULL_FATAL(at);
		at += strlen(" step_ps 0");
		size_t n = len + 32;
		char *bad = malloc(n);
		int blen = snprintf(bad, n, "%.*s switching wormhole%s", (int)(at - buf), buf, at);
		diag_mute(dg, true);
		CU_ASSERT_EQUAL(sim_read(dg, &h.a, bad, (size_t)blen, &back), -1);
		diag_mute(dg, false);
		diag_reset(dg);
		free(bad), free(buf);
		arena_free(&h.a);
	}
}

/*
 * Back-pressure through a chain 0 -> 1 -> 2 -> 3 whose last link is 4 times
 * slower (no latencies): message A (8 packets, 0 -> 3) and then, queued
 * behind it on the sender's link, B (one packet, 0 -> 1). With buffers of
 * 2 packets, A's packets back up through link 1 into link 0: by hand, A's
 * packet k >= 4 starts on link 0 at (4k - 11) s, so its last leaves link 0
 * at 18 s and B arrives at 19 s; A arrives at 32 s. With 8 packets of
 * buffer nothing backs up: A leaves link 0 at 8 s, B arrives at 9 s.
 */
void
test_vct_backpressure(void)
{
	const int64_t mtu = 4096, s = sim_ser_ps(mtu, 400000000000);
	const int64_t buffers[] = {2, 8}, b_at[] = {19 * s, 9 * s};
	for (int i = 0; i < 2; i++) {
		Hand h;
		hand_vct(&h, 4, mtu, buffers[i]);
		h.net.router_ps = 0;
		for (int l = 0; l < 3; l++)
			h.net.link[l].lat_ps = 0;
		h.net.link[2].bw = 100000000000;
		h.c.queue = SIM_QUEUE_LINK; /* B waits behind A on the link, as in a NIC */
		hand_msg(&h, 0, 0, 3, 1, 1, 0, NULL);
		hand_msg(&h, 1, 0, 1, 1, 8, 0, NULL);
		SimResult r = hand_run(&h, 8 * mtu, SIM_PACKET, SIM_DEPS);
		assert_named(r.round_end[0] == (double)(32 * s) * 1e-12 &&
		             r.round_end[1] == (double)b_at[i] * 1e-12, __LINE__, __FILE__,
		             "buffer %lld: A at %.0f ps (want %lld), B at %.0f ps (want %lld)",
		             (long long)buffers[i], r.round_end[0] * 1e12, (long long)(32 * s),
		             r.round_end[1] * 1e12, (long long)b_at[i]);
		arena_free(&h.a);
	}
}

/*
 * Two messages contending for a buffer: A (3 packets, 0 -> 2 -> 3 -> 4, the
 * last link 4 times slower) and C (1 packet, 1 -> 2 -> 3 -> 5) share link
 * 2 -> 3 as the second hop of their routes, so the same buffer at node 3.
 * No latencies; by hand (docs/sim.md 2.1), with a buffer of one packet A's
 * first packet holds it until its tail has crossed the slow link (4 s), so
 * C, whose own next link is free, waits for it and arrives at 5 s, and A at
 * 13 s; with 4 packets C passes at s and arrives at 2 s, A at 12 s.
 */
void
test_vct_buffer_contention(void)
{
	const int64_t mtu = 4096, bw = 400000000000, s = sim_ser_ps(mtu, bw);
	const int64_t buffers[] = {1, 4}, a_at[] = {13 * s, 12 * s}, c_at[] = {5 * s, 2 * s};
	for (int i = 0; i < 2; i++) {
		Hand h;
		hand_vct(&h, 6, mtu, buffers[i]);
		h.net.router_ps = 0;
		h.net.nlink = 5;
		static const int ends[5][2] = {{0, 2}, {1, 2}, {2, 3}, {3, 4}, {3, 5}};
		for (int l = 0; l < 5; l++)
			h.net.link[l] = (SimLink){ends[l][0], ends[l][1], l == 3 ? bw / 4 : bw, 0, 1e-12};
		static const int route_a[] = {0, 2, 3}, route_c[] = {1, 2, 4};
		memcpy(h.hops, route_a, sizeof route_a);
		memcpy(h.hops + 3, route_c, sizeof route_c);
		h.msg[0] = (SimMsg){.round = 0, .src = 0, .dst = 4, .nhop = 3, .hop = 0, .num = 1, .den = 1};
		h.msg[1] = (SimMsg){.round = 1, .src = 1, .dst = 5, .nhop = 3, .hop = 3, .num = 1, .den = 3};
		h.c.nmsg = 2;
		h.c.nround = 2;
		SimResult r = hand_run(&h, 3 * mtu, SIM_PACKET, SIM_DEPS);
		assert_named(r.round_end[0] == (double)a_at[i] * 1e-12 &&
		             r.round_end[1] == (double)c_at[i] * 1e-12, __LINE__, __FILE__,
		             "buffer %lld: A at %.0f ps (want %lld), C at %.0f ps (want %lld)",
		             (long long)buffers[i], r.round_end[0] * 1e12, (long long)a_at[i],
		             r.round_end[1] * 1e12, (long long)c_at[i]);
		arena_free(&h.a);
	}
}

/* Every packet crossed every link of its route: the links' bytes. */
static void
assert_all_delivered(const Built *b, const SimResult *r, int64_t bytes)
{
	const SimColl *c = &b->net.coll[0];
	double want = 0, got = 0;
	for (int m = 0; m < c->nmsg; m++)
		want += (double)sim_msg_bytes(&c->msg[m], bytes) * c->msg[m].nhop;
	for (int l = 0; l < r->nlink; l++)
		got += r->link_bytes[l];
	CU_ASSERT_EQUAL(got, want);
}

/*
 * Deadlock freedom on tori: all-to-all (pairwise, every message at once by
 * dependencies, and round by round) on 4x4 and 8x8 tori, whose shortest
 * routes go round the rings, with buffers of one packet and messages of
 * several: every cycle of the rings is a cycle of buffers that a scheme
 * without classes could fill. The run ends (sim_run reports a deadlock as
 * an error), every packet is delivered, and a rerun gives the same results
 * to the bit (determinism).
 */
void
test_vct_torus_alltoall(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	for (int side = 4; side <= 8; side += 4)
		for (int sync = 0; sync < 2; sync++) {
			char text[512];
			snprintf(text, sizeof text, NET400 "buffer = 1 packet; }\n"
			         "topology T = torus(%d, %d);\n"
			         "collective alltoall A on T { algorithm pairwise; }\n", side, side);
			Built b;
			CU_ASSERT_EQUAL_FATAL(build_text(dg, &b, text, "A"), 0);
			b.net.switching = SIM_CUT_THROUGH;
			int64_t bytes = (int64_t)side * side * 4 * 4096 + 100;
			SimSync how = sync ? SIM_DEPS : SIM_ROUNDS;
			SimResult r1 = run_built(&b, bytes, SIM_PACKET, how), r2 = run_built(&b, bytes, SIM_PACKET, how);
			assert_all_delivered(&b, &r1, bytes);
			CU_ASSERT(r1.time_ps > 0 && r1.time_ps == r2.time_ps);
			for (int l = 0; l < r1.nlink; l++)
				CU_ASSERT(r1.link_busy[l] == r2.link_busy[l] &&
				          r1.link_bytes[l] == r2.link_bytes[l]);
			for (int k = 0; k < r1.nround; k++)
				CU_ASSERT(r1.round_end[k] == r2.round_end[k]);
			built_free(dg, &b);
		}
}

/*
 * The SuperMesh seed's artifact case: 1 MiB allreduce on 4x4, TTO on the
 * mesh (192 chunks) against pipelined trees on SuperMeshBi (64 segments),
 * 25 GBps links of 20 ns. Its BookSim run gives mesh / SMBi = 1.308; collc
 * comes within 5 % of it by cut-through packets and by flows (docs/sim.md
 * 2.5 has the figures; store-and-forward gives 1.79).
 */
void
test_vct_supermesh_artifact(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char net[] =
		"network { link_bandwidth = 25 GBps; link_latency = 20 ns; }\n"
		"topology M = mesh(4, 4);\ntopology SB = supermesh(4, 4, bi);\n"
		"collective allreduce AR_mesh on M { algorithm tto; ranks 0..11, 13..15; chunks 192; }\n"
		"trees B0 = disjoint(SB, roots 0, 3, 15, 12);\n"
		"collective allreduce AR_bi on SB { algorithm pipelined_trees(trees B0, segments 64); }\n";
	for (int mode = 0; mode < 2; mode++) {
		double t[2];
		for (int i = 0; i < 2; i++) {
			Built b;
			CU_ASSERT_EQUAL_FATAL(build_text(dg, &b, net, i ? "AR_bi" : "AR_mesh"), 0);
			b.net.switching = SIM_CUT_THROUGH;
			t[i] = run_built(&b, 1 << 20, mode ? SIM_FLOW : SIM_PACKET, SIM_ROUNDS).time_s;
			built_free(dg, &b);
		}
		double ratio = t[0] / t[1];
		assert_named(fabs(ratio / 1.308 - 1) < 0.05, __LINE__, __FILE__,
		             "%s: mesh %.2f us / SMBi %.2f us = %.3f, BookSim 1.308",
		             mode ? "flow" : "packet", t[0] * 1e6, t[1] * 1e6, ratio);
	}
}

/*
 * collc's packet mode against BookSim2 runs of the same messages (docs/sim.md
 * 2.5.1: BookSim2 replaying collc's .sim, source-routed, VCs by hop index,
 * 32-packet buffers, round by round or by dependencies). The BookSim2 times
 * are the measured ones of that table; collc must come within 5 % of each,
 * and the table's collc figures must be what collc computes.
 */
void
test_vs_booksim2(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char supermesh[] =
		"network { link_bandwidth = 25 GBps; link_latency = 20 ns; }\n"
		"topology M = mesh(4, 4);\ntopology SB = supermesh(4, 4, bi);\n"
		"topology SA = supermesh(4, 4, alter);\n"
		"collective allreduce AR_mesh on M { algorithm tto; ranks 0..11, 13..15; chunks 192; }\n"
		"trees B0 = disjoint(SB, roots 0, 3, 15, 12);\n"
		"collective allreduce AR_bi on SB { algorithm pipelined_trees(trees B0, segments 64); }\n"
		"trees A0 = disjoint(SA, roots 0, 3, 15, 12);\n"
		"collective allreduce AR_alter on SA { algorithm pipelined_trees(trees A0, segments 64); }\n";
	static const char torus[] =
		"network { link_bandwidth = 400 Gbps; link_latency = 100 ns; router_latency = 300 ns; }\n"
		"topology T = torus(8, 8);\n"
		"collective allreduce RING on T { algorithm ring; }\n"
		"collective allreduce HD on T { algorithm halving_doubling; }\n";
	static const struct {
		const char *net, *name;
		int64_t bytes;
		SimSync sync;
		double booksim_us, collc_us; /* docs/sim.md 2.5.1 */
	} c[] = {
		{supermesh, "AR_mesh", 1 << 20, SIM_ROUNDS, 33.264, 32.47},
		{supermesh, "AR_mesh", 16 << 20, SIM_ROUNDS, 479.344, 478.12},
		{supermesh, "AR_bi", 1 << 20, SIM_ROUNDS, 24.732, 24.11},
		{supermesh, "AR_bi", 16 << 20, SIM_ROUNDS, 364.212, 363.26},
		{supermesh, "AR_alter", 1 << 20, SIM_ROUNDS, 24.732, 24.11},
		{supermesh, "AR_alter", 16 << 20, SIM_ROUNDS, 364.212, 363.26},
		{supermesh, "AR_mesh", 1 << 20, SIM_DEPS, 29.540, 29.26},
		{supermesh, "AR_bi", 1 << 20, SIM_DEPS, 22.556, 22.46},
		{torus, "RING", 1 << 20, SIM_ROUNDS, 142.632, 142.09},
		{torus, "RING", 16 << 20, SIM_ROUNDS, 763.056, 761.40},
		{torus, "HD", 1 << 20, SIM_ROUNDS, 68.032, 66.33},
		{torus, "HD", 16 << 20, SIM_ROUNDS, 979.940, 970.43},
		{torus, "RING", 1 << 20, SIM_DEPS, 98.632, 98.09},
		{torus, "HD", 1 << 20, SIM_DEPS, 68.038, 66.33},
		{torus, "HD", 16 << 20, SIM_DEPS, 980.974, 971.07},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		Built b;
		CU_ASSERT_EQUAL_FATAL(build_text(dg, &b, c[i].net, c[i].name), 0);
		b.net.switching = SIM_CUT_THROUGH;
		double us = run_built(&b, c[i].bytes, SIM_PACKET, c[i].sync).time_s * 1e6;
		assert_named(fabs(us - c[i].collc_us) < 0.005, __LINE__, __FILE__,
		             "%s at %lld B: collc %.3f us, the docs say %.2f", c[i].name,
		             (long long)c[i].bytes, us, c[i].collc_us);
		assert_named(fabs(us / c[i].booksim_us - 1) < 0.05, __LINE__, __FILE__,
		             "%s at %lld B: collc %.2f us, BookSim2 %.2f us", c[i].name,
		             (long long)c[i].bytes, us, c[i].booksim_us);
		built_free(dg, &b);
	}
}
