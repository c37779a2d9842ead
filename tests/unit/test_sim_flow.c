/*
 * test_sim_flow.c: flow mode: its start order by dependencies, against
 * packet mode on large messages, and where the two differ by design.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_sim.h"

void
test_flow_vs_packet(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char *const texts[] = {
		NET400 "}\ntopology R = ring(8);\ncollective allreduce X on R { algorithm ring; }\n",
		NET400 "}\ntopology T = torus(4, 4);\ngroup G on T { translate; map (x, y) -> (-x, -y); "
		"map (x, y) -> (y, x); }\ntree B = bfs(T, root (0, 0));\n"
		"collective allreduce X on T { algorithm symmetric(trees B, group G); }\n",
		NET400 "}\ntopology T = torus(4, 4);\n"
		"collective allreduce X on T { algorithm halving_doubling; }\n",
		NET400 "}\ntopology T = mesh(4, 4);\ncollective allgather X on T { algorithm bruck; }\n",
	};
	for (size_t i = 0; i < countof(texts); i++) {
		Built b;
		CU_ASSERT_EQUAL_FATAL(build_text(dg, &b, texts[i], "X"), 0);
		for (int sync = 0; sync < 2; sync++) {
			SimResult p = run_built(&b, 64 << 20, SIM_PACKET, (SimSync)sync);
			SimResult f = run_built(&b, 64 << 20, SIM_FLOW, (SimSync)sync);
			assert_named(within(p.time_s, f.time_s, 0.02), __LINE__, __FILE__,
			             "case %zu sync %d: packet %.6g s, flow %.6g s", i, sync, p.time_s,
			             f.time_s);
		}
		built_free(dg, &b);
	}
	/* two messages sharing a link: fair shares in both modes */
	Hand x;
	hand_init(&x, 3, 4096);
	hand_msg(&x, 0, 0, 2, 1, 2, 0, NULL);
	hand_msg(&x, 0, 1, 2, 1, 2, 0, NULL);
	SimResult p = hand_run(&x, 64 << 20, SIM_PACKET, SIM_ROUNDS);
	SimResult f = hand_run(&x, 64 << 20, SIM_FLOW, SIM_ROUNDS);
	CU_ASSERT(within(p.time_s, f.time_s, 0.02));
	arena_free(&x.a);
}

/* Flow mode, by dependencies: a message starts when its data is in, even
 * behind an earlier-numbered one that waits longer. Messages 0 (3 -> 2)
 * and 1 (0 -> 1, 100 us of wire) drain together at t = ser; 2 waits for 1
 * (starts at ser + 100 us), 3 for 0 (starts at ser) and has 200 us of wire:
 * T = ser + ser + 200 us, with ser = 262144 B at 1 GB/s. Message 3 must
 * not wait for 2's later start (the start heap's order). */
void
test_flow_start_order(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char text[] =
		"collc-sim 1\nnet mtu 4096 router_ps 0 step_ps 0\n"
		"topology graph 1 4 nodes 4 links 4\n"
		"link 0 1 8000000000 100000000 0\nlink 1 2 8000000000 0 0\n"
		"link 2 0 8000000000 200000000 0\nlink 3 2 8000000000 0 0\n"
		"collective allreduce X test ranks 4 rounds 3 messages 4 deps yes\nranks 0 1 2 3\n"
		"m 0 3 2 1 4 copy 1 3 0\nm 0 0 1 1 4 copy 1 0 0\n"
		"m 1 1 2 1 4 copy 1 1 1 1\nm 2 2 0 1 4 copy 1 2 1 0\n";
	Arena a = {0};
	SimNet net;
	diag_source(dg, "t.sim", text, strlen(text));
	CU_ASSERT_EQUAL_FATAL(sim_read(dg, &a, text, strlen(text), &net), 0);
	SimOpts o = {.mode = SIM_FLOW, .sync = SIM_DEPS};
	SimResult res;
	char err[256];
	CU_ASSERT_EQUAL_FATAL(sim_run(&a, &net, 0, 1 << 20, &o, &res, err, sizeof err), 0);
	double ser = 262144 / 1e9;
	assert_named(fabs(res.time_s - (2 * ser + 200e-6)) < 1e-12, __LINE__, __FILE__,
	             "T = %.9f s, want %.9f s", res.time_s, 2 * ser + 200e-6);
	CU_ASSERT(fabs(res.round_end[1] - (2 * ser + 100e-6)) < 1e-12);
	arena_free(&a);
}

/*
 * Where packet and flow mode part (docs/sim.md 2.2), each in closed form;
 * cut-through, default buffers, s = ser(mtu) = 100 ns, d = 400 ns = 4 s,
 * k packets a message.
 *
 * A hop before a shared link: on the chain 0 -> 1 -> 2 -> 3, A = 1 -> 3
 * and B = 0 -> 2 share link 1 -> 2, A's first hop and B's second. A flow
 * holds its share on every link of its route from its start, so both run
 * at half rate from 0 and the hop before is paid after the drain:
 * T_flow = 2ks + 2d. By packets the shared link sends A alone until B's
 * first packet arrives, d later, and never idles: T_packet = 2ks + d.
 *
 * A posting order shared by every sender: a star (switch n, hosts 0..n-1,
 * a link each way) where every host sends k packets to every other in one
 * round. Flows: each link carries n - 1 flows at 1/(n - 1) of its rate,
 * T_flow = (n - 1)ks + 2d. By packets, when every host posts its messages
 * in receiver order (0, 1, ..., as collc's schedules do) each sender's
 * round-robin turns start at the same receivers, and host n - 1's link
 * idles until the turns reach it, n - 2 packets late: T_packet =
 * (n - 1)ks + 2d + (n - 2)s. Staggered (host h to h + 1, h + 2, ...) every
 * turn reaches every receiver once and T_packet = T_flow, round by round
 * and by dependencies.
 */
static void
star_init(Hand *h, int n, int64_t mtu, bool staggered)
{
	memset(h, 0, sizeof *h);
	h->net = (SimNet){.topo = "graph", .nnode = n + 1, .nlink = 2 * n, .mtu = mtu,
	                  .router_ps = 300000, .switching = SIM_CUT_THROUGH, .ncoll = 1,
	                  .coll = &h->c};
	h->net.link = arena_array(&h->a, (size_t)(2 * n), sizeof *h->net.link);
	for (int i = 0; i < n; i++) {
		h->net.link[i] = (SimLink){i, n, 400000000000, 100000, 1e-12};     /* up */
		h->net.link[n + i] = (SimLink){n, i, 400000000000, 100000, 1e-12}; /* down */
		h->rank_node[i] = i;
	}
	h->c = (SimColl){.name = "x", .kind = "alltoall", .algorithm = "hand", .nrank = n,
	                 .rank_node = h->rank_node, .msg = h->msg, .hops = h->hops, .deps = h->deps,
	                 .has_deps = true, .nround = 1};
	for (int src = 0; src < n; src++)
		for (int j = 1; j < n; j++) {
			int dst = staggered ? (src + j) % n : j - 1 + (j - 1 >= src);
			h->msg[h->c.nmsg++] = (SimMsg){.src = src, .dst = dst, .num = 1, .den = n,
			                               .nhop = 2, .hop = h->nhop};
			h->hops[h->nhop++] = src;
			h->hops[h->nhop++] = n + dst;
		}
}

void
test_packet_flow_differ(void)
{
	const int64_t mtu = 5000, s = 100000, d = 400000, k = 16;
	Hand x;
	hand_vct(&x, 4, mtu, 0);
	hand_msg(&x, 0, 1, 3, 1, 2, 0, NULL);
	hand_msg(&x, 0, 0, 2, 1, 2, 0, NULL);
	for (int sync = 0; sync < 2; sync++) {
		SimSync how = sync ? SIM_DEPS : SIM_ROUNDS;
		SimResult p = hand_run(&x, 2 * k * mtu, SIM_PACKET, how);
		SimResult f = hand_run(&x, 2 * k * mtu, SIM_FLOW, how);
		assert_named(p.time_ps == 2 * k * s + d && within(f.time_s, (2 * k * s + 2 * d) * 1e-12, 1e-9),
		             __LINE__, __FILE__, "hop before a shared link, sync %d: packet %lld ps, "
		             "flow %.6g s", sync, (long long)p.time_ps, f.time_s);
	}
	arena_free(&x.a);
	/* by dependencies a sender's messages on one link are a queue (docs/sim.md
	 * 3): staggered, the modes agree there too; in receiver order they part
	 * otherwise (a queue moves on when its message has left the first link,
	 * which by packets is before the switch has passed it on), not tested */
	for (int n = 3; n <= 4; n++)
		for (int staggered = 0; staggered < 2; staggered++)
			for (int sync = 0; sync <= staggered; sync++) {
				star_init(&x, n, mtu, staggered);
				SimSync how = sync ? SIM_DEPS : SIM_ROUNDS;
				SimResult p = hand_run(&x, n * k * mtu, SIM_PACKET, how);
				SimResult f = hand_run(&x, n * k * mtu, SIM_FLOW, how);
				int64_t flow = (n - 1) * k * s + 2 * d;
				int64_t want = flow + (staggered ? 0 : (n - 2) * s);
				assert_named(p.time_ps == want && within(f.time_s, flow * 1e-12, 1e-9), __LINE__,
				             __FILE__, "star of %d, %s, sync %d: packet %lld ps (want %lld), "
				             "flow %.6g s", n, staggered ? "staggered" : "receiver order", sync,
				             (long long)p.time_ps, (long long)want, f.time_s);
				arena_free(&x.a);
			}
}
