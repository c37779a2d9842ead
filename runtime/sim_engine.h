/*
 * sim_engine.h: the simulator's private header, shared by its files and
 * seen by nothing else (runtime/sim.h is the public plain-data boundary):
 * the run's state (SimRun), the engine interface (SimEngine), the event
 * queue, packet mode's live hops and cut-through's buffers, the small
 * helpers the hot loops inline, and what each file gives the others.
 *
 * The files: sim_engine.c (the entry sim_run, the choice of engine, what
 * every engine shares: rounds, stalls, barriers, epochs, dependencies,
 * energy, the time bound), sim_events.c (the event queue), sim_packet.c
 * (packet mode, store-and-forward, and the packet machinery cut-through
 * shares), sim_cut_through.c (virtual cut-through: buffers, credits),
 * sim_work.c (packet mode's work budget), sim_symmetric.c (rounds run by
 * their representatives), sim_flow.c (flow mode).
 */
#ifndef COLLC_SIM_ENGINE_H
#define COLLC_SIM_ENGINE_H

#include <string.h>

#include "sim.h"

typedef struct SimRun SimRun;

/* An engine: what a mode (and packet mode's switching) runs. run() gets a
 * SimRun that sim_run set up (sim_engine.c says what it holds) and fills
 * the result's time_ps, time_s, round_end[] and link_busy[], and the run's
 * link_bytes[]; sim_run adds what every mode shares. */
typedef struct SimEngine {
	const char *name;      /* in refusals: "store-and-forward", "cut-through", "flow" */
	double loop_cost;      /* packet mode: an event-loop packet-hop's cost against
	                        * store-and-forward's (the work budget, sim_work.c) */
	void (*run)(SimRun *);
} SimEngine;

extern const SimEngine sim_store_and_forward; /* sim_packet.c */
extern const SimEngine sim_cut_through;       /* sim_cut_through.c */
extern const SimEngine sim_flow;              /* sim_flow.c */

/* ---- the event queue (sim_events.c) ---- */

/* at equal times: arrivals first, then links choose, so that messages
 * arriving together all take part in the first turn */
enum { EV_ARRIVE, EV_INJECT, EV_DELIVER, EV_DONE, EV_PICK, EV_KINDS };

/*
 * The event queue. Events run in the order (time, kind, order of making).
 * A collective's links move in step, so most events share their time and
 * kind with many others (halving-doubling on ring(4096): 99.97% with the
 * event before): the queue keeps one bucket per distinct (time, kind), a
 * first-in first-out list of its events, which is their order of making,
 * and a heap of the buckets only. A push finds its bucket through a hash
 * table (or the last bucket of its kind); a pop takes the least bucket's
 * first event. The order is exactly a heap's of (time, kind, sequence).
 */
typedef struct Ev {
	int64_t t;
	int kind;
	int id;
} Ev;

typedef struct EvNode {
	int id, next;
} EvNode;

typedef struct Bucket {
	int64_t t;
	int kind;          /* -1: free */
	int head, tail;    /* its events (EvNode), first to last */
	int slot;          /* its place in the hash table */
} Bucket;

typedef struct EvQueue {
	size_t n;          /* events */
	EvNode *node;
	int ncap, nfree;   /* nodes allocated; the free list */
	Bucket *bucket;
	int bcap, bfree;
	Ev *heap;          /* the live buckets by (t, kind); id: the bucket */
	int nheap;
	int *slot;         /* hash table: a bucket or -1; nslot is a power of two */
	int nslot;
	int last[EV_KINDS]; /* the bucket each kind pushed to last, or -1 */
} EvQueue;

void ev_init(EvQueue *q);
void ev_free(EvQueue *q);
void ev_push(EvQueue *q, int64_t t, int kind, int id);
Ev ev_pop(EvQueue *q);

/* ---- a run's state ---- */

/* A message's bytes and packets for the run's vector size (msg_cut). */
typedef struct Cut {
	int64_t num, den;  /* the fraction of the vector */
	int64_t size, last;
	int64_t npkt;  /* a lone one-hop message may have 2^31 packets and more */
} Cut;

/* A message's packets at one hop of its route, in the event loop: those
 * waiting at the hop's link, those on their way to it, and the one the link
 * is sending. A hop is made when the first of them leaves the hop before
 * (at the first link, when the link first sends one) and freed when none is
 * left, so the loop holds what is in flight, not every hop of every route:
 * a message of one packet has one hop at a time, wherever its packet is. Packets of a message never overtake each other,
 * so its live hops form a list in route order, and the hop a packet goes
 * to next is the neighbour ahead, or a new one. All of a hop's fields sit
 * in one cache line (64 bytes, the pool aligned to them), since each
 * packet-hop reads most of them. */
enum { HOP_WINDOW = 4 };

typedef struct Hop {
	int msg;
	int route, nhop;  /* the message's route: link ids hops[route .. route + nhop) */
	int j;            /* this hop: link hops[route + j] */
	int npkt, lastb;  /* the message's packets (the budget keeps them in an int)
	                   * and its last packet's bytes (at most an mtu) */
	int w;            /* packets waiting at the link */
	int in;           /* packets that left the hop before and have not yet arrived */
	int next;         /* the packet the link sends next, 0 .. npkt - 1 */
	int qnext;        /* the next hop in the link's rotation, or -1; the free list's link */
	int ahead, behind; /* the message's live hops further on and further back, or -1 */
	int win[HOP_WINDOW]; /* the route's links of hops j - j % HOP_WINDOW on: a route
	                      * is read a block at a time, since routes are long and many
	                      * and reading a link per packet-hop missed the TLB each time */
} Hop;
_Static_assert(sizeof(Hop) == 64, "a hop is one cache line");

/* Cut-through's input buffers: the buffer at the far end of link `link` for
 * the packets that cross it as the hop `cls` of their route (a virtual
 * channel per hop index, so buffers wait only on buffers of a higher class
 * and no cycle of full buffers can form: docs/sim.md 2.1), with the
 * packets it holds or has promised (used) and the entries (rotation
 * entries, parked: their next packet found it full) waiting for a slot.
 * Only buffers in use are kept, in a hash table with linear probing
 * (link -1: empty), so memory is what is in flight. */
typedef struct Credit {
	int link, cls;
	int64_t used;
	int phead, ptail;  /* parked entries, first to last (through rotation_next), or -1 */
} Credit;

typedef struct Credits {
	Credit *slot;
	int cap, n;        /* cap a power of two */
} Credits;

/* Packet mode's work: packet-hops in closed form and in the event loop. */
typedef struct Work {
	double closed, loop;
} Work;

/* One run of one collective at one size: what sim_run sets up for every
 * engine (net, c, o, engine, bytes, res, link_bytes; by dependencies
 * waiting, rdep_off, rdep, qnext, qfree_ps, qfree_s and msg_bytes), and
 * each engine's own state beside it (packet mode's links, hops and queue,
 * cut-through's buffers, the symmetric path's orbits; flow mode keeps most
 * of its own in Flows). */
struct SimRun {
	const SimNet *net;
	const SimColl *c;
	const SimOpts *o;
	const SimEngine *engine;
	int64_t bytes;
	SimResult *res;
	/* messages */
	int64_t latest_ps; /* the latest completion so far (of the round, in round mode) */
	double *done_s;
	int *waiting;      /* deps mode: dependencies not yet arrived */
	int64_t *ready_ps; /* deps mode: when the last one arrived */
	double *ready_s;
	int *rdep_off, *rdep;
	int *qnext;        /* deps mode: the next message posted on the same first link
	                    * by the same instance, or -1 */
	int64_t *qfree_ps; /* deps mode: when the one before it on that link finished sending */
	double *qfree_s;
	/* the event loop's live hops (Hop), a pool with a free list */
	Hop *hop;
	int nhop_cap, hop_free;
	/* links */
	int *head, *tail, *cur;
	int *mnext;        /* messages in a rotation before their first packet leaves:
	                    * the next entry (push_tail) */
	int64_t *full_ser, *hop_ps, *busy_ps;
	int64_t *link_bytes; /* exact; copied to the result's doubles at the end */
	int64_t *round_end_ps; /* deps mode: the latest arrival of each round */
	int64_t *done_ps_link; /* lone messages: when each link last finished a packet */
	int *stamp;            /* lone messages: the round (+1) that last used each link */
	int64_t *saved_busy_ps, *saved_bytes; /* and the link's counts before it */
	int64_t memo_b, memo_bw, memo_ser; /* packet_ps's one remembered size */
	Cut cut;                           /* msg_cut's one remembered fraction */
	Work work;                         /* packet mode's work so far (packet_budget) */
	bool over_budget;                  /* the work passed the budget: stopped */
	bool over_memory;                  /* the live hops passed MAX_LOOP_LIVE_HOPS: stopped */
	bool *busy;
	/* cut-through (vct): the buffers in use and what each link is sending */
	bool vct;
	int64_t *nbuf;     /* per link: the packets of a buffer at its far end */
	Credits cred;
	int *cur_j;        /* 2 x the hop index of the packet a link sends, + 1 if it is
	                    * its message's last (cur: the message) */
	bool stuck;        /* a drain ended with buffers held: a deadlock (a bug) */
	int64_t *red_free; /* per node: the reduction engine is free from */
	double *red_free_s;
	EvQueue q;
	double msg_bytes;  /* every message's bytes, summed in order (router energy) */
	int ncompleted;
	int epoch_hi;      /* deps mode: messages from here wait for a reconfiguration
	                    * or a barrier */
	/* symmetric rounds (SimStream.ncopy): what every link of an orbit got in
	 * the rounds run by their representatives, added to the links at the
	 * end; the links the round at hand's representatives cross, each once,
	 * with their counts before it */
	int ncopy;         /* or 0: every round is run whole */
	const int *orbit;
	int *orbit_stamp, *sym_stamp;
	int64_t *orbit_busy_ps, *orbit_bytes;
	int *sym_link;
	int64_t *sym_busy0, *sym_bytes0;
	int nsym, capsym;
};

/* ---- what the hot loops inline ---- */

/* Serialization of a packet; the full-MTU time is per link, and messages of
 * a round are mostly one size, so one remembered odd size covers the rest. */
/* By dependencies: what message m waits beyond its dependencies' arrival
 * (SimColl.wait_ps), in ps. */
static inline int64_t
sim_wait_ps(const SimRun *r, int m)
{
	return r->c->wait_ps ? r->c->wait_ps[m] : 0;
}

static inline int64_t
packet_ps(SimRun *r, int64_t b, int l)
{
	if (b == r->net->mtu)
		return r->full_ser[l];
	int64_t bw = r->net->link[l].bw;
	if (b != r->memo_b || bw != r->memo_bw) {
		r->memo_b = b;
		r->memo_bw = bw;
		r->memo_ser = sim_ser_ps(b, bw);
	}
	return r->memo_ser;
}

/* The hop delay after hop j (link l) of msg: a fused message's links
 * between its first and its last are crossed side by side (the switch's
 * other inputs or outputs), so they add none. */
static inline int64_t
hop_delay(const SimRun *r, const SimMsg *msg, int j, int l)
{
	return msg->fused && j > 0 && j + 1 < msg->nhop ? 0 : r->hop_ps[l];
}

/* Message m's bytes and packets: npkt = ceil(size / mtu), npkt - 1 of an MTU
 * and a last one. Messages come mostly in runs of one fraction, so one
 * remembered fraction spares the divisions (and per-message arrays that
 * would be written and read once per run). */
static inline const Cut *
msg_cut(SimRun *r, int m)
{
	const SimMsg *msg = &r->c->msg[m];
	Cut *k = &r->cut;
	if (msg->num != k->num || msg->den != k->den) {
		int64_t mtu = r->net->mtu;
		k->num = msg->num;
		k->den = msg->den;
		k->size = sim_msg_bytes(msg, r->bytes);
		k->npkt = (k->size + mtu - 1) / mtu;
		k->last = k->size - (k->npkt - 1) * mtu;
	}
	return k;
}

/* A link's rotation holds hops (ids from 0) and, as -2 - m, messages m
 * whose packets all wait at their first link: the hop is made when the
 * first packet leaves, so that a round of many messages queued at once
 * holds an int each until they start. -1 ends the rotation. */
static inline int *
rotation_next(SimRun *r, int x)
{
	return x >= 0 ? &r->hop[x].qnext : &r->mnext[-2 - x];
}

static inline void
push_tail(SimRun *r, int l, int x)
{
	*rotation_next(r, x) = -1;
	if (r->head[l] == -1)
		r->head[l] = x;
	else
		*rotation_next(r, r->tail[l]) = x;
	r->tail[l] = x;
}

/* Moves hop h's window to the block of the route that hop j is in. */
static inline void
hop_window(const SimRun *r, Hop *h, int j)
{
	int at = j - j % HOP_WINDOW, n = h->nhop - at < HOP_WINDOW ? h->nhop - at : HOP_WINDOW;
	memcpy(h->win, r->c->hops + h->route + at, (size_t)n * sizeof *h->win);
}

/* An idle link with a packet waiting chooses after every arrival at t. */
static inline void
wake(SimRun *r, int l, int64_t t)
{
	if (r->busy[l])
		return;
	r->busy[l] = true;
	ev_push(&r->q, t, EV_PICK, l);
}

/* ---- what the files give each other ---- */

/* sim_engine.c: progress, the rounds' stalls, deps mode's epochs, a round
 * as a collective of its own */
void sim_progress(SimRun *r, double done);
int64_t stall_ps(const SimRun *r, int round);
int epoch_end(const SimRun *r, int lo);
int64_t epoch_stall(const SimRun *r, int lo);
void round_view(SimRun *r, const SimColl *whole, int round, int *next, SimColl *view);
int max_round_msgs(const SimColl *c);

/* sim_packet.c: the live hops and a message's first link freed, which
 * cut-through's sending shares; the packet engine's run, which it wraps */
int hop_new(SimRun *r, int m, int j, int behind, int next);
void hop_release(SimRun *r, int e);
void sent_ps(SimRun *r, int m, int64_t t);
void run_packets(SimRun *r);

/* sim_cut_through.c: the buffers' set-up, the link's choice and its end of
 * a packet under credits, and a message alone when no buffer can fill it */
void vct_init(SimRun *r);
void vct_free(SimRun *r);
void pick_vct(SimRun *r, int l, int64_t t);
void link_done_vct(SimRun *r, int l, int64_t t);
int64_t run_alone_vct(SimRun *r, int m, int64_t t);

/* sim_work.c: packet mode's work budget */
Work packet_work(const SimRun *r, const SimMsg *msg, int n, bool loop);
bool packet_budget(SimRun *r, Work add);
double work_share(const SimRun *r, Work w);
Work least_packet_work(const SimRun *r);

/* sim_symmetric.c: rounds run by their representatives (SimStream.ncopy) */
void sym_init(SimRun *r);
void sym_free(SimRun *r);
bool sym_enter(SimRun *r, const SimColl *whole, int round, SimColl *view);
void sym_fold(SimRun *r, const SimColl *view);
void sym_unfold(SimRun *r);

#endif
