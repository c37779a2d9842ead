/*
 * test_sim.h: what the simulator's test files (test_sim*.c, one suite,
 * "sim") share: building inputs from .coll text or by hand, running them,
 * the closed forms several topics check, and every test function, which
 * test_sim.c's table lists in the suite's order.
 */
#ifndef COLLC_TEST_SIM_H
#define COLLC_TEST_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "ir.h"
#include "sim.h"
#include "tests.h"
#include "to_sim.h"

#define NET400 "network { link_bandwidth = 400 Gbps; link_latency = 100 ns; " \
               "router_latency = 300 ns; "

typedef struct Built {
	Arena arena;   /* the AST */
	Arena sim;     /* the simulator's input and results */
	File *file;
	Prog prog;
	SimNet net;
} Built;

/* How build_as lowers and converts: what collc sim does (the ring's
 * symmetric form, streamed), or the explicit, expanded input of before. */
typedef enum Way { WAY_EXPANDED, WAY_COMPACT, WAY_STREAMED } Way;

/* A hand-made network: a chain 0 -> 1 -> ... -> n-1 of 400 Gb/s links,
 * 100 ns each, 300 ns routers, and messages given by the caller. */
typedef struct Hand {
	Arena a;
	SimNet net;
	SimColl c;
	SimMsg msg[16];
	int hops[64], deps[16], rank_node[16];
	int nhop, ndep;
} Hand;

/* Lowers a .coll text and converts schedule `which` (by name), as `way`
 * says (build_text: expanded); the network is store-and-forward unless a
 * test sets it. 0, or -1. */
int build_as(Diag *, Built *b, const char *text, const char *which, Way way);
int build_text(Diag *, Built *b, const char *text, const char *which);
void built_free(Diag *, Built *b);
/* Runs the built collective at `bytes`, asserting that it ran. */
SimResult run_built(Built *b, int64_t bytes, SimMode mode, SimSync sync);
void hand_init(Hand *h, int nnode, int64_t mtu);
void hand_msg(Hand *h, int round, int src, int dst, int64_t num, int64_t den, int ndep,
              const int *deps);
SimResult hand_run(Hand *h, int64_t bytes, SimMode mode, SimSync sync);
/* The chain of hand_init under cut-through with `buffer` packets a buffer. */
void hand_vct(Hand *h, int nnode, int64_t mtu, int64_t buffer);
/* One message of M bytes over h equal store-and-forward hops, alone. */
int64_t closed_form(int64_t M, int h, int64_t mtu, int64_t bw, int64_t d);
/* Whether a and b are within a relative rel of each other. */
bool within(double a, double b, double rel);
/* SP and Bucket on an 8x8 torus. */
extern const char sp8[];

/* test_sim_packet.c */
void test_single_message(void), test_time_bound(void), test_packet_budget(void),
	test_packet_budget_mix(void), test_packet_budget_refuses_hd(void),
	test_ring_allreduce(void), test_arbitration(void), test_lone_then_shared(void),
	test_contention_torus(void), test_sp_goodput(void), test_sp_vs_bucket(void),
	test_empty_messages(void), test_tto(void), test_routing_policies(void),
	test_private_links(void), test_ring_halfway(void);
/* test_sim_sync.c */
void test_modes(void), test_barrier(void), test_bucket_phases(void),
	test_instance_queues(void), test_pipelines_both_modes(void), test_cost_terms(void),
	test_reduce_cost(void);
/* test_sim_symmetric.c */
void test_ring_streamed(void), test_ring_16384(void), test_ring_rep(void),
	test_ring_65536(void), test_compact_equals_expanded(void), test_hd_rank_form(void),
	test_rd_allreduce_closed_forms(void), test_rd_allreduce_fold(void),
	test_rank_form_shared_hops(void), test_bucket_compact(void), test_translates_deps(void);
/* test_sim_flow.c */
void test_flow_vs_packet(void), test_flow_start_order(void), test_packet_flow_differ(void);
/* test_sim_energy.c */
void test_energy(void), test_energy_terms(void), test_router_ports(void);
/* test_sim_text.c */
void test_text_round_trip(void), test_time_plot(void);
/* test_sim_cut_through.c */
void test_vct_single_message(void), test_vct_unequal_links(void), test_vct_text(void),
	test_vct_backpressure(void), test_vct_buffer_contention(void),
	test_vct_torus_alltoall(void), test_vct_supermesh_artifact(void), test_vs_booksim2(void);
/* test_sim_exec.c */
void test_exec_protocol_choice(void), test_exec_sched_costs(void);
void test_exec_chain(void), test_exec_reduce_chain(void), test_exec_protocols(void),
	test_exec_ring_channels(void),
	test_exec_tree(void), test_exec_foreign_tree(void);

#endif
