/*
 * sim.h: the link-level simulator (docs/sim.md). Its input is plain data —
 * nodes, directed links, and per collective the messages with their routes,
 * sizes as fractions of the vector, rounds and dependencies — read from the
 * .sim text format (sim_text.c) or built from the IR by backends/to_sim.c,
 * which may also give a collective round by round (SimStream).
 * Nothing here sees the AST or the IR.
 *
 * Packet mode keeps time in integer picoseconds so that closed forms match
 * exactly; flow mode works in double seconds.
 */
#ifndef COLLC_SIM_H
#define COLLC_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "base.h"

enum { SIM_VERSION = 1, SIM_MAX_MTU = 1 << 20 };

/* Packet mode's switching (docs/sim.md 2.1): virtual cut-through with
 * finite input buffers and credits (the default), or store-and-forward
 * with unbounded buffers. A buffer holds what the network sets (at most
 * SIM_MAX_BUFFER packets), or by default what covers its link's credit
 * round trip, at least SIM_DEFAULT_BUFFER packets. */
typedef enum SimSwitching { SIM_CUT_THROUGH, SIM_STORE_AND_FORWARD } SimSwitching;
enum { SIM_DEFAULT_BUFFER = 32, SIM_MAX_BUFFER = 1 << 20 };

typedef struct SimLink {
	int src, dst;          /* nodes */
	int64_t bw;            /* bits per second */
	int64_t lat_ps;        /* wire latency */
	double energy_per_bit; /* joules per bit */
} SimLink;

/* Fields ordered for size (48 bytes, not 56): a large run streams millions
 * of these from memory. */
typedef struct SimMsg {
	int round;
	int src, dst;          /* communicator ranks */
	int nhop, hop;         /* route: link ids hops[hop .. hop + nhop) */
	int ndep, dep;         /* earlier messages it waits for: deps[dep .. dep + ndep) */
	bool reduce;           /* the receiver combines it (reduction cost applies) */
	bool fused;            /* an in-network reduction or multicast (docs/sim.md 2.6): its
	                        * hops are the links into one switch, then the links out
	                        * of it, crossed by one flow at one rate; it pays the hop
	                        * delay of its first link and of its last alone; one of
	                        * no hops is carried by another's flow */
	int64_t num, den;      /* size: num/den of the vector */
	int instance;          /* its independent pipeline (0..MAX_INSTANCES-1): by
	                        * dependencies, a sender queues each link's messages
	                        * per instance (docs/sim.md 3) */
} SimMsg;

/* One round of a streamed collective: its messages, in the order the whole
 * list would hold them, with hops indexing this round's hops[] (messages'
 * ranges may overlap: a stream may share links between routes). */
typedef struct SimRound {
	SimMsg *msg;
	int nmsg;
	int *hops;
} SimRound;

/* A collective given round by round (backends/to_sim.c streams symmetric
 * schedules so): the memory of one round instead of every message. The
 * buffers a call returns are the stream's, valid until its next call. */
/* A class of a stream's messages, for packet mode's work before the run:
 * messages of num/den of the vector, `single` of them crossing at most one
 * link, the others `hops` links in all. */
typedef struct SimShape {
	int64_t num, den;
	double single, hops;
} SimShape;

/* A stream may also say that its rounds are symmetric (ncopy > 0): a group
 * of ncopy permutations of the nodes and links (the translations of a torus
 * or ring) acts freely on the links, link_orbit[l] naming the orbit of link
 * l (a link id; every orbit holds ncopy links), and every round is the
 * images under it of a few representatives (round_rep: node 0's messages),
 * each image a message of the round with the image route, the same size,
 * operation and instance. The engine then runs a round whose messages
 * share no link as its representatives alone, when the links of an orbit
 * are alike (docs/sim.md 6.1), and asks for the whole round otherwise. */
typedef struct SimStream {
	void *ctx;
	SimRound (*round)(void *ctx, int round);
	int max_round_msgs;    /* the largest round's messages */
	const SimShape *shape; /* every round's messages by class (nshape), or NULL */
	int nshape;
	int64_t nmsg;          /* every round's messages (may pass an int) */
	int ncopy;             /* symmetric: the group's order, or 0 */
	const int *link_orbit; /* nlink, when ncopy > 0 */
	SimRound (*round_rep)(void *ctx, int round); /* when ncopy > 0 */
	int max_rep_msgs;      /* the most representatives of a round */
} SimStream;

/* How deps mode orders messages beyond their dependencies (docs/sim.md 3):
 * one queue per first link, receiver and instance (a thread block per peer
 * and channel, as the MSCCL executor runs a schedule: the default); one
 * queue per first link and instance (a NIC's send queue, whatever the
 * receivers: hand-made inputs); or one queue per instance whatever the
 * sender and link (a thread block of an MSCCL program in the executor
 * model, whose instance is the tb, backends/msccl_exec.c). A message
 * starts no sooner than the one before it in its queue has left its sender
 * (its last byte or packet sent; a message of no hop or byte: when it
 * started). */
typedef enum SimQueue { SIM_QUEUE_PEER, SIM_QUEUE_LINK, SIM_QUEUE_INSTANCE } SimQueue;

typedef struct SimColl {
	const char *name, *kind, *algorithm;
	Loc loc;               /* where the input declares it (a .coll schedule, a .sim
	                        * 'collective' line), or line 0 (refusals name it) */
	int nrank;
	int *rank_node;
	int root;              /* broadcast, reduce: the root rank (0 when the input
	                        * does not say); only the bound reads it */
	int nround;
	int nmsg;              /* every round's (0 when streamed: SimStream.nmsg) */
	SimMsg *msg;           /* sorted by round; NULL when streamed */
	int *hops;
	int *deps;
	bool has_deps;         /* dependencies are known (else only rounds) */
	const int64_t *wait_ps; /* nmsg, or NULL: by dependencies, message m starts
	                        * wait_ps[m] after what it waits for has arrived, besides
	                        * the step overhead (the executor model's per-step
	                        * latencies, docs/sim.md 7); not in the .sim text */
	SimQueue queue;        /* deps mode's issue queues */
	const SimStream *stream; /* or NULL; streamed: no msg, hops or deps, rounds mode only */
	unsigned char *reconfig; /* nround, or NULL: an optical switch is rewired before
	                          * the round; every link idles reconfig_ps after the
	                          * rounds before it have ended, in both sync modes */
	unsigned char *barrier;  /* nround, or NULL: a barrier before the round, which
	                          * no message of it or later passes before every
	                          * earlier message has arrived (round by round every
	                          * round is one; with --sync deps only these) */
} SimColl;

typedef struct SimNet {
	const char *topo;      /* "torus", "mesh", ... (the layout of link plots) */
	int ndim;
	int size[MAX_DIMS];
	int nnode;
	int nlink;
	SimLink *link;
	int64_t mtu;           /* bytes per packet */
	int64_t router_ps;     /* per hop */
	int64_t step_ps;       /* step overhead */
	int64_t reconfig_ps;   /* an optical switch's reconfiguration delay */
	SimSwitching switching;
	bool in_network;       /* some switch reduces what enters it (switch_reduction): an
	                        * allreduce's bound has no gossip part (docs/sim.md 2.6) */
	int64_t buffer_pkts;   /* cut-through: packets per input buffer (port and virtual
	                        * channel), or 0 */
	int64_t buffer_bytes;  /* or bytes (whole packets of an mtu, at least one), or 0:
	                        * SIM_DEFAULT_BUFFER packets */
	double router_energy_per_bit; /* joules per bit per router passed (ends included) */
	double port_static_w;         /* watts per router port */
	int64_t nport;                /* router ports of all nodes (docs/sim.md 4) */
	double link_static_w;         /* watts per directed link */
	int ncoll;
	SimColl *coll;
} SimNet;

/* sim_text.c: the .sim text (located errors through error_at; the caller sets
 * diag_source). 0, or -1 after reporting. */
int sim_read(Diag *, Arena *, const char *text, size_t len, SimNet *);
bool sim_is_text(const char *text, size_t len);
/* The .sim text of a network and its collectives. */
void sim_write(const SimNet *, FILE *);

typedef enum SimMode { SIM_PACKET, SIM_FLOW } SimMode;
typedef enum SimSync { SIM_ROUNDS, SIM_DEPS } SimSync;

typedef struct SimOpts {
	SimMode mode;
	SimSync sync;
	double reduce_rate;    /* bytes per second at the receiver; 0 = free */
	bool private_links;    /* messages never share a link's bandwidth: each runs as if
	                        * alone on its route (a fabric model without link
	                        * contention; round-synchronous packet mode or flow mode) */
	void (*progress)(void *ctx, double done); /* 0..1, or NULL */
	void *progress_ctx;
} SimOpts;

typedef struct SimResult {
	int64_t time_ps;       /* packet mode: completion, exact */
	double time_s;         /* completion, seconds (both modes) */
	int nround;
	double *round_end;     /* nround: when the round's last message arrived (s) */
	int nlink;
	double *link_bytes;    /* nlink */
	double *link_busy;     /* nlink: seconds transmitting */
	double energy_j;       /* the sum of the three below */
	double energy_link_j;  /* bits x hops x energy_per_bit */
	double energy_router_j; /* bits x (hops + 1) x router_energy_per_bit */
	double energy_static_j; /* time x (ports x port_static_w + links x link_static_w) */
	double goodput_bps;    /* N (p - 1) / (p T), bits per second */
	double bound_bps;      /* B_v / 2 */
	double bound_ratio;
	int nreconfig;         /* reconfigurations of the circuits */
	double reconfig_s;     /* the time spent in them (nreconfig x the delay) */
	double packet_hops;    /* packet mode's work: packets x links crossed, a one-hop
	                        * message alone counting 1 (the closed forms' and the
	                        * event loop's together) */
	double loop_hops;      /* the event loop's part of it (MAX_LOOP_PACKET_HOPS) */
} SimResult;

/* Runs collective c of net for a vector of `bytes`; results in arena memory.
 * 0, or -1 with a message in err (e.g. dependencies unknown). */
int sim_run(Arena *, const SimNet *, int c, int64_t bytes, const SimOpts *, SimResult *,
            char *err, size_t errlen);
/* The bytes of a message for a vector of `bytes`: ceil(bytes x num / den). */
int64_t sim_msg_bytes(const SimMsg *, int64_t bytes);
/* Every round's messages of c, streamed or not. */
int64_t sim_coll_nmsg(const SimColl *c);
/* Serialization of b bytes on a link: ceil(8 b 10^12 / bw) picoseconds. */
int64_t sim_ser_ps(int64_t b, int64_t bw);
/* Deps mode's issue order (docs/sim.md 3): prev[m] (nmsg) = the message
 * posted just before m on its queue (SimColl.queue), or -1. */
void sim_queue_prev(const SimColl *, int nlink, int *prev);
/* B_v: the smallest total outgoing bandwidth of a rank's node (bits/s). */
double sim_injection_bw(const SimNet *, int c);

#endif
