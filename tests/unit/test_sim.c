/*
 * test_sim.c: the link-level simulator's suite ("sim") against the closed
 * forms of docs/sim.md, in files by topic: test_sim_packet.c (packet mode's
 * closed forms and limits), test_sim_sync.c (rounds and dependencies, cost
 * terms), test_sim_symmetric.c (streamed and symmetric runs),
 * test_sim_flow.c, test_sim_cut_through.c, test_sim_energy.c and
 * test_sim_text.c (the .sim text, plots). Here: the helpers they share
 * (test_sim.h) and the suite's table.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_sim.h"

/* ---- building inputs ---- */

/* Lowers a .coll text and converts schedule `which` (by name). */
int
build_text(Diag *dg, Built *b, const char *text, const char *which)
{
	return build_as(dg, b, text, which, WAY_EXPANDED);
}

int
build_as(Diag *dg, Built *b, const char *text, const char *which, Way way)
{
	memset(b, 0, sizeof *b);
	diag_reset(dg);
	b->prog.compact = way != WAY_EXPANDED;
	b->file = parse_text(dg, &b->arena, "t.coll", text, strlen(text));
	if (nerrors(dg) == 0)
		sema(dg, b->file);
	if (nerrors(dg) == 0)
		lower(dg, b->file, &b->prog);
	if (nerrors(dg))
		return -1;
	for (int i = 0; i < b->prog.nsched; i++)
		if (strcmp(b->prog.sched[i]->name, which) == 0) {
			const Sched *s = b->prog.sched[i];
			if (verify(dg, s) != 0)
				return -1;
			int rc = way == WAY_STREAMED ? sim_stream_scheds(dg, &b->sim, &s, 1, &b->net)
			                             : sim_from_scheds(dg, &b->sim, &s, 1, &b->net);
			/* the closed forms below are store-and-forward's unless a test
			 * says otherwise (docs/sim.md 2.1) */
			b->net.switching = SIM_STORE_AND_FORWARD;
			return rc;
		}
	return -1;
}

void
built_free(Diag *dg, Built *b)
{
	prog_free(&b->prog);
	arena_free(&b->arena);
	arena_free(&b->sim);
	diag_reset(dg);
}

SimResult
run_built(Built *b, int64_t bytes, SimMode mode, SimSync sync)
{
	SimOpts o = {.mode = mode, .sync = sync};
	SimResult r;
	char err[256];
	int rc = sim_run(&b->sim, &b->net, 0, bytes, &o, &r, err, sizeof err);
	CU_ASSERT_EQUAL(rc, 0);
	return r;
}

void
hand_init(Hand *h, int nnode, int64_t mtu)
{
	memset(h, 0, sizeof *h);
	h->net = (SimNet){.topo = "graph", .nnode = nnode, .nlink = nnode - 1, .mtu = mtu,
	                  .router_ps = 300000, .switching = SIM_STORE_AND_FORWARD, .ncoll = 1,
	                  .coll = &h->c};
	h->net.link = arena_array(&h->a, (size_t)nnode, sizeof *h->net.link);
	for (int i = 0; i + 1 < nnode; i++)
		h->net.link[i] = (SimLink){i, i + 1, 400000000000, 100000, 1e-12};
	for (int i = 0; i < nnode; i++)
		h->rank_node[i] = i;
	h->c = (SimColl){.name = "x", .kind = "allgather", .algorithm = "hand", .nrank = nnode,
	                 .rank_node = h->rank_node, .msg = h->msg, .hops = h->hops, .deps = h->deps,
	                 .has_deps = true};
}

/* A message src -> dst along the chain, num/den of the vector. */
void
hand_msg(Hand *h, int round, int src, int dst, int64_t num, int64_t den, int ndep,
         const int *deps)
{
	SimMsg m = {.round = round, .src = src, .dst = dst, .num = num, .den = den,
	            .nhop = dst - src, .hop = h->nhop, .ndep = ndep, .dep = h->ndep};
	for (int l = src; l < dst; l++)
		h->hops[h->nhop++] = l;
	for (int i = 0; i < ndep; i++)
		h->deps[h->ndep++] = deps[i];
	h->msg[h->c.nmsg++] = m;
	if (round + 1 > h->c.nround)
		h->c.nround = round + 1;
}

SimResult
hand_run(Hand *h, int64_t bytes, SimMode mode, SimSync sync)
{
	SimOpts o = {.mode = mode, .sync = sync};
	SimResult r;
	char err[256];
	CU_ASSERT_EQUAL(sim_run(&h->a, &h->net, 0, bytes, &o, &r, err, sizeof err), 0);
	return r;
}

/* ---- closed forms (docs/sim.md) ---- */

/* One message of M bytes over h equal hops, alone:
 * T = h d + (h - 1) ser(min(M, mtu)) + sum over packets of ser(packet). */
int64_t
closed_form(int64_t M, int h, int64_t mtu, int64_t bw, int64_t d)
{
	int64_t k = (M + mtu - 1) / mtu, last = M - (k - 1) * mtu;
	int64_t first = M < mtu ? M : mtu;
	return h * d + (h - 1) * sim_ser_ps(first, bw) + (k - 1) * sim_ser_ps(mtu, bw) +
	       sim_ser_ps(last, bw);
}

/* ---- cut-through (docs/sim.md 2.1) ---- */

/* A chain's hand-made network set to cut-through with `buffer` packets. */
void
hand_vct(Hand *h, int nnode, int64_t mtu, int64_t buffer)
{
	hand_init(h, nnode, mtu);
	h->net.switching = SIM_CUT_THROUGH;
	h->net.buffer_pkts = buffer;
}

bool
within(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fmax(a, b);
}

const char sp8[] = NET400 "}\ntopology T = torus(8, 8);\n"
	"group G on T { translate; map (x, y) -> (-x, -y); map (x, y) -> (y, x); }\n"
	"tree B = bfs(T, root (0, 0));\n"
	"collective allreduce SP on T { algorithm symmetric(trees B, group G); }\n"
	"collective allreduce BK on T { algorithm bucket; }\n";

CU_TestInfo sim_tests[] = {
	{"flow mode by dependencies: starts in time order", test_flow_start_order},
	{"every cost term of packet and flow, rounds and deps: closed forms", test_cost_terms},
	{"messages of no bytes take no time", test_empty_messages},
	{"one message over h hops: the closed form to the picosecond", test_single_message},
	{"packet mode's budget: the loop's and the closed forms' work in a mix",
	 test_packet_budget_mix},
	{"halving-doubling on ring(16384) at 1 MiB: refused before its first round",
	 test_packet_budget_refuses_hd},
	{"packet mode refuses more than MAX_PACKET_HOPS packet-hops, before running",
	 test_packet_budget},
	{"times that could pass 64-bit picoseconds are refused in every mode", test_time_bound},
	{"ring allreduce on ring(2..16): one packet and pipelined forms", test_ring_allreduce},
	{"collc sim's ring: symmetric, streamed, closed forms (p = 3..16, 1024)", test_ring_streamed},
	{"ring(16384) streamed: one round held, the closed form; ring(8192) with deps refused",
	 test_ring_16384},
	{"compact (streamed, symmetric) and expanded simulations agree exactly",
	 test_compact_equals_expanded},
	{"ring by node 0's messages: the expanded runs to the bit (8, 64, 256), closed forms (4096)",
	 test_ring_rep},
	{"ring(65536) at 1 MiB by node 0's messages: the closed form", test_ring_65536},
	{"Bucket in symmetric form on tori of sides >= 3, explicit on a side of 2",
	 test_bucket_compact},
	{"halving_doubling in the rank form on 2^L ranks, proved; a fold stays explicit",
	 test_hd_rank_form},
	{"recursive doubling allreduce in the rank form: closed forms on full(8) and ring(8)",
	 test_rd_allreduce_closed_forms},
	{"the rank form's routes share a round's hops, each window its route",
	 test_rank_form_shared_hops},
	{"recursive doubling allreduce folded for collc sim: one chunk, the same simulation",
	 test_rd_allreduce_fold},
	{"arbitration: round-robin between queues, issue order within one", test_arbitration},
	{"a round found to share a link after lone messages: no trace", test_lone_then_shared},
	{"contention on a torus: halving-doubling yes, SP no", test_contention_torus},
	{"SP reaches the goodput bound (8x8, 64x16, 128x8, 256x4)", test_sp_goodput},
	{"SP beats Bucket at 64 KiB by about the round ratio", test_sp_vs_bucket},
	{"round and dependency modes agree and differ where they should", test_modes},
	{"a barrier holds a dependency-driven run back as a round does", test_barrier},
	{"Bucket on a rectangle runs phase by phase by dependencies", test_bucket_phases},
	{"instances queue apart by dependencies: closed forms", test_instance_queues},
	{"flow mode within 2% of packet mode on large messages", test_flow_vs_packet},
	{".sim text round trip and a damaged file", test_text_round_trip},
	{"translates of node 0 (tori, HyperX): the expanded messages and dependencies",
	 test_translates_deps},
	{"energy per bit per hop", test_energy},
	{"energy: link, router and static terms", test_energy_terms},
	{"energy: router ports on mesh and supermeshes", test_router_ports},
	{"reduction cost at the receiver", test_reduce_cost},
	{"TTO on a 4x4 mesh: 9.4's slots, shared links arbitrated", test_tto},
	{"TTO and pipelined trees keep M + 2h - 1 in both sync modes", test_pipelines_both_modes},
	{"routing: shortest_path (ECMP) and dor differ on HD, agree on a ring", test_routing_policies},
	{"private links: each message alone on its route, closed forms", test_private_links},
	{"ring(halfway): floor(p/2) rounds per phase, closed form", test_ring_halfway},
	{"cut-through: one message over h hops, the serialization once", test_vct_single_message},
	{"cut-through: links of different rates, closed form and event loop",
	 test_vct_unequal_links},
	{"cut-through: switching and buffer through the .sim text", test_vct_text},
	{"cut-through: back-pressure through a chain, by hand", test_vct_backpressure},
	{"cut-through: two messages contending for a buffer, by hand",
	 test_vct_buffer_contention},
	{"cut-through: all-to-all on 4x4 and 8x8 tori, no deadlock, deterministic",
	 test_vct_torus_alltoall},
	{"cut-through: the SuperMesh artifact case within 5 % of BookSim, both modes",
	 test_vct_supermesh_artifact},
	{"--plot-time: log-log positions follow the times, axes in us and bytes", test_time_plot},
	{"packet and flow part: a hop before a shared link, a shared posting order",
	 test_packet_flow_differ},
	{"collc against BookSim2: SuperMesh 4x4, ring and halving-doubling on an 8x8 torus",
	 test_vs_booksim2},
	{"executor model: a chain of h tbs moves S slices in (S + h - 1) slice times",
	 test_exec_chain},
	{"executor model: k tbs reducing into one chunk by depid pay one step latency",
	 test_exec_reduce_chain},
	{"executor model: Simple, LL and LL128 carry 1, 1/2 and 120/128 of a link",
	 test_exec_protocols},
	{"executor model: ring allreduce on 1, 2, 4, 8 channels takes 2 (p - 1) N / (p B)",
	 test_exec_ring_channels},
	{"executor model: a tree of chains pipelines as one chain of its depth", test_exec_tree},
	{"executor model: a ring schedule with the executor's fixed costs, each protocol",
	 test_exec_sched_costs},
	{"executor model: a foreign tree program pipelines by its loop's iterations",
	 test_exec_foreign_tree},
	{"executor model: its latencies choose LL, LL128 and Simple by size as NCCL does",
	 test_exec_protocol_choice},
	CU_TEST_INFO_NULL,
};
