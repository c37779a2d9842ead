/*
 * sim_engine.c: the simulator's engine (docs/sim.md has the model exactly).
 *
 * Packet mode: a message of M bytes is cut into ceil(M / mtu) packets that
 * move store-and-forward along its route. A link sends one packet at a time;
 * the messages with a packet waiting at a link take turns, one packet per
 * turn (round-robin, newcomers at the end of the rotation), so no message
 * can hold a link while another waits. A packet that leaves link l at t is
 * ready at the next link at t + latency(l) + router latency. Times are
 * integer picoseconds; events at equal times run arrivals before link
 * completions, then in the order they were made, so runs are deterministic.
 *
 * Flow mode: messages are fluids sharing links max-min fairly (progressive
 * filling), rates recomputed whenever a flow starts or drains; a message
 * arrives its path latency after its last byte left.
 *
 * Round by round, each round runs as a collective of its own (round_view):
 * a slice of the message list, or a streamed collective's round made when
 * asked, so per-message state is one round's and a stream never holds more.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "sim.h"

__extension__ typedef unsigned __int128 u128;

static int64_t
muldiv_ceil(int64_t a, int64_t b, int64_t c)
{
	u128 x = (u128)(uint64_t)a * (uint64_t)b;
	return (int64_t)((x + (uint64_t)c - 1) / (uint64_t)c);
}

int64_t
sim_msg_bytes(const SimMsg *m, int64_t bytes)
{
	return muldiv_ceil(bytes, m->num, m->den);
}

int64_t
sim_coll_nmsg(const SimColl *c)
{
	return c->stream ? c->stream->nmsg : c->nmsg;
}

int64_t
sim_ser_ps(int64_t b, int64_t bw)
{
	return muldiv_ceil(b, 8000000000000, bw);
}

double
sim_injection_bw(const SimNet *n, int c)
{
	const SimColl *sc = &n->coll[c];
	double *out = xcalloc((size_t)n->nnode, sizeof *out);
	for (int l = 0; l < n->nlink; l++)
		out[n->link[l].src] += (double)n->link[l].bw;
	double best = 0;
	for (int r = 0; r < sc->nrank; r++)
		if (r == 0 || out[sc->rank_node[r]] < best)
			best = out[sc->rank_node[r]];
	free(out);
	return best;
}

/* ---- packet mode ---- */

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

/* The buckets' order in their heap (base/heap.h's HeapLess). */
static bool
ev_less(const void *pa, const void *pb)
{
	const Ev *a = pa, *b = pb;
	return a->t < b->t || (a->t == b->t && a->kind < b->kind);
}

static unsigned
ev_hash(int64_t t, int kind, int mask)
{
	uint64_t x = ((uint64_t)t ^ (uint64_t)kind << 59) * 0x9E3779B97F4A7C15u;
	return (unsigned)(x >> 32) & (unsigned)mask;
}

/* The hash table grows at half full; open addressing, linear probing. */
static void
ev_rehash(EvQueue *q, int nslot)
{
	free(q->slot);
	q->nslot = nslot;
	q->slot = xmalloc((size_t)nslot * sizeof *q->slot);
	for (int i = 0; i < nslot; i++)
		q->slot[i] = -1;
	for (int b = 0; b < q->bcap; b++) {
		Bucket *k = &q->bucket[b];
		if (k->kind < 0)
			continue;
		unsigned i = ev_hash(k->t, k->kind, nslot - 1);
		while (q->slot[i] >= 0)
			i = (i + 1) & (unsigned)(nslot - 1);
		q->slot[i] = b;
		k->slot = (int)i;
	}
}

/* Removes bucket b from the hash table, moving later entries of its probe
 * run back so that no lookup stops early (no tombstones). */
static void
ev_unhash(EvQueue *q, int b)
{
	unsigned mask = (unsigned)q->nslot - 1, i = (unsigned)q->bucket[b].slot, j = i;
	q->slot[i] = -1;
	for (;;) {
		j = (j + 1) & mask;
		int x = q->slot[j];
		if (x < 0)
			return;
		unsigned home = ev_hash(q->bucket[x].t, q->bucket[x].kind, (int)mask);
		/* x may move to i if its home is not cyclically in (i, j] */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			q->slot[i] = x;
			q->bucket[x].slot = (int)i;
			q->slot[j] = -1;
			i = j;
		}
	}
}

/* The buckets' heap (base/heap.h); buckets are unique by (t, kind), so
 * ev_less orders them totally. A bucket leaves the heap once for its
 * thousands of events, so its pop stays out of the event loop's code:
 * inlined into drain it made the loop slower (docs/testing.md, "Measured
 * choices in the code"). */
static void
ev_heap_push(EvQueue *q, Ev e)
{
	heap_push(q->heap, (size_t)q->nheap++, sizeof e, &e, ev_less);
}

static NOINLINE void
ev_heap_pop(EvQueue *q)
{
	heap_pop(q->heap, (size_t)q->nheap--, sizeof *q->heap, ev_less);
}

/* The bucket of (t, kind), made if there is none. */
static int
ev_bucket(EvQueue *q, int64_t t, int kind)
{
	int b = q->last[kind];
	if (b >= 0 && q->bucket[b].t == t && q->bucket[b].kind == kind)
		return b;
	unsigned mask = (unsigned)q->nslot - 1, i = ev_hash(t, kind, q->nslot - 1);
	for (; (b = q->slot[i]) >= 0; i = (i + 1) & mask)
		if (q->bucket[b].t == t && q->bucket[b].kind == kind)
			return q->last[kind] = b;
	if (q->bfree < 0) {
		int old = q->bcap;
		q->bcap = 2 * old;
		q->bucket = xrealloc(q->bucket, (size_t)q->bcap * sizeof *q->bucket);
		q->heap = xrealloc(q->heap, (size_t)q->bcap * sizeof *q->heap);
		for (int k = q->bcap - 1; k >= old; k--)
			q->bucket[k] = (Bucket){.kind = -1, .head = q->bfree}, q->bfree = k;
		ev_rehash(q, 2 * q->bcap);
		return ev_bucket(q, t, kind);
	}
	b = q->bfree;
	q->bfree = q->bucket[b].head;
	q->bucket[b] = (Bucket){.t = t, .kind = kind, .head = -1, .tail = -1, .slot = (int)i};
	q->slot[i] = b;
	ev_heap_push(q, (Ev){t, kind, b});
	return q->last[kind] = b;
}

static void
ev_init(EvQueue *q)
{
	*q = (EvQueue){.nfree = -1, .bfree = -1, .bcap = 16};
	for (int k = 0; k < EV_KINDS; k++)
		q->last[k] = -1;
	q->bucket = xmalloc((size_t)q->bcap * sizeof *q->bucket);
	q->heap = xmalloc((size_t)q->bcap * sizeof *q->heap);
	for (int k = q->bcap - 1; k >= 0; k--)
		q->bucket[k] = (Bucket){.kind = -1, .head = q->bfree}, q->bfree = k;
	ev_rehash(q, 2 * q->bcap);
}

static void
ev_free(EvQueue *q)
{
	free(q->node), free(q->bucket), free(q->heap), free(q->slot);
}

static void
ev_push(EvQueue *q, int64_t t, int kind, int id)
{
	int b = ev_bucket(q, t, kind);
	if (q->nfree < 0) {
		int old = q->ncap;
		q->ncap = old ? 2 * old : 1024;
		q->node = xrealloc(q->node, (size_t)q->ncap * sizeof *q->node);
		for (int k = q->ncap - 1; k >= old; k--)
			q->node[k].next = q->nfree, q->nfree = k;
	}
	int x = q->nfree;
	q->nfree = q->node[x].next;
	q->node[x] = (EvNode){id, -1};
	Bucket *k = &q->bucket[b];
	if (k->tail < 0)
		k->head = x;
	else
		q->node[k->tail].next = x;
	k->tail = x;
	q->n++;
}

static Ev
ev_pop(EvQueue *q)
{
	int b = q->heap[0].id;
	Bucket *k = &q->bucket[b];
	int x = k->head;
	Ev e = {k->t, k->kind, q->node[x].id};
	k->head = q->node[x].next;
	q->node[x].next = q->nfree;
	q->nfree = x;
	q->n--;
	if (k->head < 0) {
		ev_heap_pop(q);
		ev_unhash(q, b);
		if (q->last[k->kind] == b)
			q->last[k->kind] = -1;
		k->kind = -1;
		k->head = q->bfree;
		q->bfree = b;
	}
	return e;
}

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

typedef struct SimRun {
	const SimNet *net;
	const SimColl *c;
	const SimOpts *o;
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
} SimRun;

/* The stall before a round: the reconfiguration delay if the circuits are
 * rewired before it. */
static int64_t
stall_ps(const SimRun *r, int round)
{
	const SimColl *c = r->c;
	return c->reconfig && round < c->nround && c->reconfig[round] ? r->net->reconfig_ps : 0;
}

/* The stalls of rounds (a, b]: reconfigurations between two messages' rounds. */
static int64_t
stall_between(const SimRun *r, int a, int b)
{
	int64_t t = 0;
	for (int round = a + 1; round <= b; round++)
		t += stall_ps(r, round);
	return t;
}

/* Whether a barrier stands before one of rounds (a, b]. */
static bool
barrier_between(const SimRun *r, int a, int b)
{
	for (int round = a + 1; r->c->barrier && round <= b; round++)
		if (round < r->c->nround && r->c->barrier[round])
			return true;
	return false;
}

/* Deps mode runs in epochs, the rounds up to the next reconfiguration or
 * barrier: a message of a later epoch starts no earlier than its epoch,
 * which starts when every message before it has arrived, plus the delay (a
 * barrier has none). Returns the first message after the epoch that
 * message lo starts. */
static int
epoch_end(const SimRun *r, int lo)
{
	const SimMsg *msg = r->c->msg;
	int end = lo + 1;
	while (end < r->c->nmsg && !stall_between(r, msg[end - 1].round, msg[end].round) &&
	       !barrier_between(r, msg[end - 1].round, msg[end].round))
		end++;
	return end;
}

/* The stall before the epoch that starts at message lo. */
static int64_t
epoch_stall(const SimRun *r, int lo)
{
	return stall_between(r, lo > 0 ? r->c->msg[lo - 1].round : -1, r->c->msg[lo].round);
}

/* Serialization of a packet; the full-MTU time is per link, and messages of
 * a round are mostly one size, so one remembered odd size covers the rest. */
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

/* Cut-through: when a packet that starts on link l at t may start on the
 * next link, nl: after the hop delay, and on a faster link no sooner than
 * sending it there at that link's rate ends as its tail arrives (the tail
 * cannot overtake the bytes still coming). */
static inline int64_t
vct_next_ps(SimRun *r, int64_t b, int l, int nl, int64_t t, int64_t ser)
{
	int64_t next = packet_ps(r, b, nl), wait = ser > next ? ser - next : 0;
	return t + r->hop_ps[l] + wait;
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

static void
push_tail(SimRun *r, int l, int x)
{
	*rotation_next(r, x) = -1;
	if (r->head[l] == -1)
		r->head[l] = x;
	else
		*rotation_next(r, r->tail[l]) = x;
	r->tail[l] = x;
}

/* Hop h's link; its window holds the block of the route it is in. */
static inline int
hop_link(const Hop *h)
{
	return h->win[h->j % HOP_WINDOW];
}

/* Moves hop h's window to the block of the route that hop j is in. */
static void
hop_window(const SimRun *r, Hop *h, int j)
{
	int at = j - j % HOP_WINDOW, n = h->nhop - at < HOP_WINDOW ? h->nhop - at : HOP_WINDOW;
	memcpy(h->win, r->c->hops + h->route + at, (size_t)n * sizeof *h->win);
}

/* A new live hop j of message m's route, ahead of hop `behind` (or -1): its
 * first packet is packet `next`. The pool may move. */
/* Doubles the pool of hops, aligned to cache lines. Past the limit there
 * is room for the event at hand only: the loop stops after it (drain) and
 * the run is refused. */
static void
hop_grow(SimRun *r)
{
	int old = r->nhop_cap, most = MAX_LOOP_LIVE_HOPS;
	r->nhop_cap = old ? 2 * old : 1024;
	if (r->nhop_cap > most)
		r->nhop_cap = old < most ? most : old + 1024;
	r->over_memory |= old >= most;
	Hop *grown = aligned_alloc(sizeof *grown, (size_t)r->nhop_cap * sizeof *grown);
	if (!grown) /* reports the failure as xmalloc does */
		grown = xmalloc((size_t)r->nhop_cap * sizeof *grown);
	if (old)
		memcpy(grown, r->hop, (size_t)old * sizeof *grown);
	free(r->hop);
	r->hop = grown;
	for (int i = r->nhop_cap - 1; i >= old; i--)
		r->hop[i].qnext = r->hop_free, r->hop_free = i;
}

static int
hop_new(SimRun *r, int m, int j, int behind, int next)
{
	if (r->hop_free < 0)
		hop_grow(r);
	int e = r->hop_free;
	Hop *h = &r->hop[e];
	r->hop_free = h->qnext;
	if (behind >= 0) {
		*h = r->hop[behind];
		h->ahead = r->hop[behind].ahead;
		r->hop[behind].ahead = e;
		if (h->ahead >= 0)
			r->hop[h->ahead].behind = e;
	} else {
		const SimMsg *msg = &r->c->msg[m];
		const Cut *cut = msg_cut(r, m);
		*h = (Hop){.msg = m, .route = msg->hop, .nhop = msg->nhop, .npkt = (int)cut->npkt,
		           .lastb = (int)cut->last, .ahead = -1};
	}
	h->behind = behind;
	h->j = j;
	if (behind < 0 || j % HOP_WINDOW == 0)
		hop_window(r, h, j);
	h->w = h->in = 0;
	h->next = next;
	return e;
}

static void
hop_release(SimRun *r, int e)
{
	Hop *h = &r->hop[e];
	if (h->behind >= 0)
		r->hop[h->behind].ahead = h->ahead;
	if (h->ahead >= 0)
		r->hop[h->ahead].behind = h->behind;
	h->qnext = r->hop_free;
	r->hop_free = e;
}

static void
pick(SimRun *r, int l, int64_t t)
{
	int e = r->head[l];
	if (e == -1) {
		r->busy[l] = false;
		return;
	}
	r->head[l] = *rotation_next(r, e);
	if (e < 0) { /* a message's first packet leaves */
		int m = -2 - e;
		e = hop_new(r, m, 0, -1, 0);
		r->hop[e].w = r->hop[e].npkt;
	}
	Hop *h = &r->hop[e];
	int k = h->next++;
	if (--h->w > 0)
		push_tail(r, l, e);
	int64_t b = k == h->npkt - 1 ? h->lastb : r->net->mtu;
	int64_t ser = packet_ps(r, b, l);
	r->busy[l] = true;
	r->cur[l] = e;
	r->busy_ps[l] += ser;
	r->link_bytes[l] += b;
	ev_push(&r->q, t + ser, EV_DONE, l);
}

/* An idle link with a packet waiting chooses after every arrival at t. */
static void
wake(SimRun *r, int l, int64_t t)
{
	if (r->busy[l])
		return;
	r->busy[l] = true;
	ev_push(&r->q, t, EV_PICK, l);
}

/* ---- cut-through: buffers and credits ---- */

static unsigned
cred_hash(int link, int cls, int cap)
{
	/* a full mix: links and classes come in runs, which low bits of a
	 * product alone would cluster under linear probing */
	uint32_t h = (uint32_t)link * 0x9E3779B1u + (uint32_t)cls;
	h ^= h >> 16;
	h *= 0x85EBCA6Bu;
	h ^= h >> 13;
	return h & (unsigned)(cap - 1);
}

/* The slot of buffer (link, cls), or of the empty slot where it would go. */
static int
cred_slot(const Credits *t, int link, int cls)
{
	int i = (int)cred_hash(link, cls, t->cap);
	while (t->slot[i].link >= 0 && (t->slot[i].link != link || t->slot[i].cls != cls))
		i = (i + 1) & (t->cap - 1);
	return i;
}

static void
cred_resize(Credits *t, int cap)
{
	Credit *old = t->slot;
	int ocap = t->cap;
	t->slot = xmalloc((size_t)cap * sizeof *t->slot);
	t->cap = cap;
	for (int i = 0; i < cap; i++)
		t->slot[i].link = -1;
	for (int i = 0; i < ocap; i++)
		if (old[i].link >= 0)
			t->slot[cred_slot(t, old[i].link, old[i].cls)] = old[i];
	free(old);
}

/* Buffer (link, cls), made empty if it was not in use. */
static Credit *
cred_get(Credits *t, int link, int cls)
{
	if (2 * (t->n + 1) > t->cap)
		cred_resize(t, t->cap ? 2 * t->cap : 256);
	int i = cred_slot(t, link, cls);
	if (t->slot[i].link < 0) {
		t->slot[i] = (Credit){link, cls, 0, -1, -1};
		t->n++;
	}
	return &t->slot[i];
}

/* Forgets slot i (a buffer empty and with nobody waiting): the entries
 * after it in its run move back so that every probe still finds them. */
static void
cred_drop(Credits *t, int i)
{
	int mask = t->cap - 1;
	t->slot[i].link = -1;
	t->n--;
	for (int j = (i + 1) & mask; t->slot[j].link >= 0; j = (j + 1) & mask) {
		int home = (int)cred_hash(t->slot[j].link, t->slot[j].cls, t->cap);
		/* j may move to i when its home is not in (i, j] (cyclically) */
		if ((i <= j) ? (home <= i || home > j) : (home <= i && home > j)) {
			t->slot[i] = t->slot[j];
			t->slot[j].link = -1;
			i = j;
		}
	}
}

/* Whether the hop `cls` of a route may send its next packet over link l
 * into the buffer at its far end; if not, entry x waits there, parked. */
static bool
cred_take(SimRun *r, int l, int cls, int x)
{
	Credit *k = cred_get(&r->cred, l, cls);
	if (k->used < r->nbuf[l]) {
		k->used++;
		return true;
	}
	*rotation_next(r, x) = -1;
	if (k->phead == -1)
		k->phead = x;
	else
		*rotation_next(r, k->ptail) = x;
	k->ptail = x;
	return false;
}

/* A packet's tail left buffer (l, cls) at t: its slot is free, and the
 * first entry parked there goes back to the end of l's rotation. */
static void
cred_give(SimRun *r, int l, int cls, int64_t t)
{
	Credits *tab = &r->cred;
	int i = cred_slot(tab, l, cls);
	Credit *k = &tab->slot[i];
	if (k->link < 0)
		die("sim: a credit for a buffer not in use");
	k->used--;
	int x = k->phead;
	if (x != -1) {
		k->phead = *rotation_next(r, x);
		push_tail(r, l, x);
		wake(r, l, t);
	}
	if (k->used == 0 && k->phead == -1)
		cred_drop(tab, i);
}

static void
progress(SimRun *r, double done)
{
	if (r->o->progress)
		r->o->progress(r->o->progress_ctx, done);
}

/* Message d lost one reason to wait; when none is left it starts after the
 * step overhead, and not before its queue's previous message has left. */
static void
waited_ps(SimRun *r, int d)
{
	if (--r->waiting[d] > 0 || d >= r->epoch_hi) /* a later epoch's starts with it */
		return;
	int64_t t = r->ready_ps[d] + r->net->step_ps;
	if (r->qfree_ps[d] > t)
		t = r->qfree_ps[d];
	ev_push(&r->q, t, EV_INJECT, d);
}

/* Message m's last byte left its first link at t: the next message posted
 * on that link (the sender's queue, in issue order) may go. */
static void
sent_ps(SimRun *r, int m, int64_t t)
{
	int d = r->qnext ? r->qnext[m] : -1;
	if (d < 0)
		return;
	r->qfree_ps[d] = t;
	waited_ps(r, d);
}

/* Message m has arrived at t. Round mode needs only the latest arrival (the
 * round's end); deps mode also keeps each round's and starts dependants. */
static void
complete_ps(SimRun *r, int m, int64_t t)
{
	const SimMsg *msg = &r->c->msg[m];
	if (msg->reduce && r->o->reduce_rate > 0) {
		int node = r->c->rank_node[msg->dst];
		int64_t cost = (int64_t)ceil((double)msg_cut(r, m)->size * 1e12 / r->o->reduce_rate);
		if (r->red_free[node] > t)
			t = r->red_free[node];
		t += cost;
		r->red_free[node] = t;
	}
	if (t > r->latest_ps)
		r->latest_ps = t;
	if (r->o->sync != SIM_DEPS)
		return;
	if (t > r->round_end_ps[msg->round])
		r->round_end_ps[msg->round] = t;
	if (++r->ncompleted % 8192 == 0)
		progress(r, (double)r->ncompleted / r->c->nmsg);
	for (int i = r->rdep_off[m]; i < r->rdep_off[m + 1]; i++) {
		int d = r->rdep[i];
		if (t > r->ready_ps[d])
			r->ready_ps[d] = t;
		waited_ps(r, d);
	}
}

/* Message m leaves at t: all its packets wait at its first link. */
static void
inject(SimRun *r, int m, int64_t t)
{
	if (msg_cut(r, m)->npkt == 0 || r->c->msg[m].nhop == 0) {
		sent_ps(r, m, t);
		complete_ps(r, m, t);
		return;
	}
	int l = r->c->hops[r->c->msg[m].hop];
	push_tail(r, l, -2 - m);
	wake(r, l, t);
}

/* Link l finished sending a packet at t: the packet goes on to the next hop
 * (or is delivered), the hop is freed if nothing of it is left, and the
 * link chooses again. Only a message's last packet is delivered as an
 * event: the others arrive before it, in order, and change nothing. */
static void
link_done(SimRun *r, int l, int64_t t)
{
	int e = r->cur[l];
	Hop *h = &r->hop[e];
	int m = h->msg, k = h->next - 1;
	int64_t arrive = t + r->hop_ps[l];
	bool last = k == h->npkt - 1;
	if (h->j == 0 && last)
		sent_ps(r, m, t);
	bool empty = h->w == 0 && h->in == 0; /* nothing of it is left behind */
	if (h->j + 1 < h->nhop) {
		int d = h->ahead;
		if (d >= 0 && r->hop[d].j == h->j + 1) {
			/* the hop ahead is live: the packet joins it */
		} else if (empty) {
			/* the hop moves on with its packet (a message of one packet
			 * is one hop all the way) */
			d = e, empty = false;
			if (++h->j % HOP_WINDOW == 0)
				hop_window(r, h, h->j);
			h->next = k;
		} else {
			d = hop_new(r, m, h->j + 1, e, k);
		}
		r->hop[d].in++;
		ev_push(&r->q, arrive, EV_ARRIVE, d);
	} else if (last) {
		ev_push(&r->q, arrive, EV_DELIVER, m);
	}
	if (empty)
		hop_release(r, e);
	pick(r, l, t);
}

/*
 * Cut-through. Link l sends the next packet of hop e (its rotation's
 * entry) at t: the packet's head goes on at once, to be at the next hop
 * (and free to leave it) after the hop delay (vct_next_ps), while its tail
 * takes the link's serialization, which is when the link is free again,
 * when the buffer the packet leaves gets its slot back (link_done_vct)
 * and, at the last hop, when the packet is delivered (plus the hop delay).
 */
static void
send_vct(SimRun *r, int l, int e, int64_t t)
{
	if (e < 0) { /* a message's first packet leaves */
		int m = -2 - e;
		e = hop_new(r, m, 0, -1, 0);
		r->hop[e].w = r->hop[e].npkt;
	}
	Hop *h = &r->hop[e];
	int k = h->next++, j = h->j, m = h->msg;
	if (--h->w > 0)
		push_tail(r, l, e);
	bool last = k == h->npkt - 1;
	int64_t b = last ? h->lastb : r->net->mtu;
	int64_t ser = packet_ps(r, b, l);
	r->busy[l] = true;
	r->cur[l] = m;
	r->cur_j[l] = 2 * j + last;
	r->busy_ps[l] += ser;
	r->link_bytes[l] += b;
	ev_push(&r->q, t + ser, EV_DONE, l);
	bool empty = h->w == 0 && h->in == 0;
	if (j + 1 == h->nhop) {
		if (empty)
			hop_release(r, e);
		return;
	}
	int nl = (j + 1) % HOP_WINDOW ? h->win[(j + 1) % HOP_WINDOW] : r->c->hops[h->route + j + 1];
	int64_t at = vct_next_ps(r, b, l, nl, t, ser);
	int d = h->ahead;
	if (d >= 0 && r->hop[d].j == j + 1) {
		/* the hop ahead is live: the packet joins it */
	} else if (empty) {
		d = e, empty = false;
		if (++h->j % HOP_WINDOW == 0)
			hop_window(r, h, h->j);
		h->next = k;
	} else {
		d = hop_new(r, m, j + 1, e, k);
	}
	r->hop[d].in++;
	ev_push(&r->q, at, EV_ARRIVE, d);
	if (empty)
		hop_release(r, e);
}

/* Link l chooses at t: the first entry of its rotation whose packet has a
 * slot in the buffer it goes to (the last hop needs none: the receiver
 * takes it); the others wait parked at their buffer, out of the rotation. */
static void
pick_vct(SimRun *r, int l, int64_t t)
{
	for (;;) {
		int e = r->head[l];
		if (e == -1) {
			r->busy[l] = false;
			return;
		}
		r->head[l] = *rotation_next(r, e);
		int j = e < 0 ? 0 : r->hop[e].j;
		int nhop = e < 0 ? r->c->msg[-2 - e].nhop : r->hop[e].nhop;
		if (j + 1 == nhop || cred_take(r, l, j, e)) {
			send_vct(r, l, e, t);
			return;
		}
	}
}

/* Link l finished sending at t: the packet's tail has left the buffer it
 * came from (its slot is free), a message's last packet leaving its first
 * link frees the sender's queue, and one leaving its last link is
 * delivered a hop delay later. */
static void
link_done_vct(SimRun *r, int l, int64_t t)
{
	int m = r->cur[l], j = r->cur_j[l] >> 1;
	bool last = r->cur_j[l] & 1;
	const SimMsg *msg = &r->c->msg[m];
	if (j == 0 && last)
		sent_ps(r, m, t);
	if (j > 0)
		cred_give(r, r->c->hops[msg->hop + j - 1], j - 1, t);
	if (j + 1 == msg->nhop && last)
		ev_push(&r->q, t + r->hop_ps[l], EV_DELIVER, m);
	pick_vct(r, l, t);
}

static void
drain(SimRun *r)
{
	while (r->q.n && !r->over_memory) {
		Ev ev = ev_pop(&r->q);
		switch (ev.kind) {
		case EV_INJECT:
			inject(r, ev.id, ev.t);
			break;
		case EV_ARRIVE: {
			Hop *h = &r->hop[ev.id];
			h->in--;
			if (h->w++ == 0)
				push_tail(r, hop_link(h), ev.id);
			wake(r, hop_link(h), ev.t);
			break;
		}
		case EV_PICK:
			if (r->vct)
				pick_vct(r, ev.id, ev.t);
			else
				pick(r, ev.id, ev.t);
			break;
		case EV_DELIVER:
			complete_ps(r, ev.id, ev.t);
			break;
		case EV_DONE:
			if (r->vct)
				link_done_vct(r, ev.id, ev.t);
			else
				link_done(r, ev.id, ev.t);
			break;
		default:
			die("sim: bad event");
		}
	}
	r->stuck |= r->vct && r->cred.n > 0 && !r->over_memory;
}

/*
 * A round whose messages share no link (and with no reduction cost to
 * queue at the receivers) is simulated without events: each message is a
 * tandem of its links, where packet k leaves link j at
 *   D_j(k) = max(D_{j-1}(k) + hop(l_{j-1}), D_j(k-1)) + ser_j(k),
 * exactly what the event loop computes for a message alone, in the same
 * integer picoseconds. This is what makes rings of a thousand ranks fast.
 *
 * The check and the computation share one pass over the round (read from
 * memory once): run_lone_round computes each message as lone while checking
 * that it shares no link with those before it; on the first shared link it
 * puts the links' counts back as they were and the round goes to the event
 * loop. run_alone gives when message m, leaving at t, arrives.
 */
/*
 * Cut-through, a message alone: packet k starts on link j at
 *   S_j(k) = max(S_{j-1}(k) + hop(l_{j-1}) + max(0, ser_{j-1}(k) - ser_j(k)),
 *                S_j(k-1) + ser_j(k-1))
 * (vct_next_ps) and arrives a hop delay after its tail left the last link.
 * Credits never hold it up when it has at most a buffer of packets, or
 * when no link after the first is slower (its packets then never wait past
 * the first link, one ser_0 apart) and a buffer covers a hop delay and a
 * packet: (nbuf - 1) ser_0(mtu) >= hop(l_j). Otherwise -1: the event loop
 * runs it. With private links buffers are not modelled.
 */
static int64_t
run_alone_vct(SimRun *r, int m, int64_t t)
{
	const SimMsg *msg = &r->c->msg[m];
	const Cut *cut = msg_cut(r, m);
	const int *route = r->c->hops + msg->hop;
	const SimLink *link = r->net->link;
	int nhop = msg->nhop;
	int64_t np = cut->npkt, bw0 = link[route[0]].bw;
	bool binds = false; /* some buffer could fill */
	for (int j = 0; j + 1 < nhop && !r->o->private_links; j++) {
		int64_t nb = r->nbuf[route[j]];
		int64_t ser = r->full_ser[route[0]]; /* >= 1; divided, as nb x ser may pass 2^63 */
		if (np > nb && (r->hop_ps[route[j]] + ser - 1) / ser > nb - 1)
			return -1;
		binds |= np > nb;
	}
	for (int j = 1; binds && j < nhop; j++)
		if (link[route[j]].bw < bw0)
			return -1;
	int64_t *done = r->done_ps_link, *busy = r->busy_ps, *bytes = r->link_bytes;
	for (int64_t k = 0; k < np; k++) {
		int64_t b = k == np - 1 ? cut->last : r->net->mtu, arrive = t;
		for (int j = 0; j < nhop; j++) {
			int l = route[j];
			int64_t ser = packet_ps(r, b, l);
			int64_t start = k > 0 && done[l] > arrive ? done[l] : arrive;
			done[l] = start + ser;
			busy[l] += ser;
			bytes[l] += b;
			if (j + 1 < nhop)
				arrive = vct_next_ps(r, b, l, route[j + 1], start, ser);
		}
	}
	return done[route[nhop - 1]] + r->hop_ps[route[nhop - 1]];
}

static int64_t
run_alone(SimRun *r, int m, int64_t t)
{
	const SimMsg *msg = &r->c->msg[m];
	const Cut *cut = msg_cut(r, m);
	int nhop = msg->nhop;
	int64_t np = cut->npkt;
	if (np == 0 || nhop == 0)
		return t;
	/* locals: the compiler cannot tell the link arrays from SimRun's fields */
	const int *route = r->c->hops + msg->hop;
	const int64_t *hop_ps = r->hop_ps, mtu = r->net->mtu, lastb = cut->last;
	int64_t *done = r->done_ps_link, *busy = r->busy_ps, *bytes = r->link_bytes;
	if (nhop == 1) {
		/* one link: the packets leave back to back (the recurrence summed) */
		int l = route[0];
		int64_t ser = (np - 1) * r->full_ser[l] + packet_ps(r, lastb, l);
		busy[l] += ser;
		bytes[l] += cut->size;
		return t + ser + hop_ps[l];
	}
	if (r->vct)
		return run_alone_vct(r, m, t);
	int64_t arrive = t;
	for (int64_t k = 0; k < np; k++) {
		int64_t b = k == np - 1 ? lastb : mtu;
		arrive = t; /* every packet is at the first link at t */
		for (int j = 0; j < nhop; j++) {
			int l = route[j];
			int64_t ser = packet_ps(r, b, l);
			/* the link is free for the first packet; later ones wait for it */
			int64_t leave = (k > 0 && done[l] > arrive ? done[l] : arrive) + ser;
			done[l] = leave;
			busy[l] += ser;
			bytes[l] += b;
			arrive = leave + hop_ps[l];
		}
	}
	return arrive;
}

/* Puts back the counts of every link that messages first..last (inclusive)
 * touched in this round (those stamped `mark`). */
static void
undo_lone(SimRun *r, int first, int last, int mark)
{
	const SimColl *c = r->c;
	for (int m = first; m <= last; m++)
		for (int j = 0; j < c->msg[m].nhop; j++) {
			int l = c->hops[c->msg[m].hop + j];
			if (r->stamp[l] == mark) {
				r->busy_ps[l] = r->saved_busy_ps[l];
				r->link_bytes[l] = r->saved_bytes[l];
			}
		}
}

/* The round of messages from `first`, all starting at t: returns where it
 * ends; *lone tells whether it was computed (else nothing has changed). */
static int
run_lone_round(SimRun *r, int first, int64_t t, int mark, bool *lone)
{
	const SimColl *c = r->c;
	const SimMsg *msg = c->msg;
	int *stamp = r->stamp;
	int64_t *saved_busy = r->saved_busy_ps, *saved_bytes = r->saved_bytes;
	int round = first < c->nmsg ? msg[first].round : -1, m = first;
	int64_t latest = r->latest_ps;
	bool alone = r->o->reduce_rate <= 0;
	for (; m < c->nmsg && msg[m].round == round; m++) {
		if (!alone)
			continue;
		const int *route = c->hops + msg[m].hop;
		for (int j = 0; alone && !r->o->private_links && j < msg[m].nhop; j++) {
			int l = route[j];
			alone = stamp[l] != mark;
			if (alone) {
				stamp[l] = mark;
				saved_busy[l] = r->busy_ps[l];
				saved_bytes[l] = r->link_bytes[l];
			}
		}
		/* what complete_ps does in round mode without reduction cost (-1:
		 * cut-through's buffers might hold it up) */
		int64_t arrive = alone ? run_alone(r, m, t) : -1;
		alone = arrive >= 0;
		if (!alone)
			undo_lone(r, first, m, mark);
		else if (arrive > latest)
			latest = arrive;
	}
	r->latest_ps = latest;
	*lone = alone;
	return m;
}


/* Round `round` of the whole collective as a collective of its own, for
 * rounds mode: the stream's round, or the whole list's slice from message
 * *next (advanced past it). Its bytes are added for the router energy. */
static void
round_view(SimRun *r, const SimColl *whole, int round, int *next, SimColl *view)
{
	*view = *whole;
	view->deps = NULL;
	view->stream = NULL;
	if (whole->stream) {
		SimRound x = whole->stream->round(whole->stream->ctx, round);
		view->msg = x.msg;
		view->nmsg = x.nmsg;
		view->hops = x.hops;
	} else {
		int m = *next;
		while (m < whole->nmsg && whole->msg[m].round == round)
			m++;
		view->msg = whole->msg + *next;
		view->nmsg = m - *next;
		*next = m;
	}
	if (r->net->router_energy_per_bit > 0)
		for (int m = 0; m < view->nmsg; m++)
			r->msg_bytes += (double)sim_msg_bytes(&view->msg[m], r->bytes);
}

/* The most messages of one round. */
static int
max_round_msgs(const SimColl *c)
{
	if (c->stream)
		return c->stream->max_round_msgs;
	int most = 0;
	for (int m = 0, k; m < c->nmsg; m = k) {
		for (k = m + 1; k < c->nmsg && c->msg[k].round == c->msg[m].round; k++)
			;
		if (k - m > most)
			most = k - m;
	}
	return most;
}

/*
 * Packet mode's work budget. The work is a packet per link crossed, except
 * for a lone message of one hop, which counts 1 (run_alone sums it); it is
 * paid in two currencies, since a packet-hop costs several times more in
 * the event loop than in the closed forms of lone messages: the budget is
 *   closed / MAX_PACKET_HOPS + loop / MAX_LOOP_PACKET_HOPS <= 1,
 * each limit being what its engine does in about 15 s of CPU (docs/limits.md
 * has the measured rates). Work is added up before it runs; past the
 * budget the run stops and sim_run refuses it, so no input (a huge size, a
 * huge fraction in a .sim file, a congested schedule) keeps packet mode
 * busy for minutes or holds the memory of that many packets. Cut-through's
 * loop took 1.6 to 2.4 times store-and-forward's time a packet-hop (its
 * buffers and credits: a hash probe per credit taken and given, mostly a
 * cache miss; bench_sim engines), so its limit is MAX_LOOP_PACKET_HOPS /
 * VCT_LOOP_COST, with room for the worst measured.
 */
enum { VCT_LOOP_COST = 3 };

static double
loop_cost(const SimRun *r)
{
	return r->net->switching == SIM_CUT_THROUGH ? VCT_LOOP_COST : 1;
}

static double
work_share(const SimRun *r, Work w)
{
	return w.closed / (double)MAX_PACKET_HOPS +
	       w.loop * loop_cost(r) / (double)MAX_LOOP_PACKET_HOPS;
}

/* Packets of a message of num/den of the vector (at least 1: an empty
 * message costs a step too). */
static double
packets_of(const SimRun *r, int64_t num, int64_t den)
{
	int64_t mtu = r->net->mtu > 0 ? r->net->mtu : 1;
	SimMsg m = {.num = num, .den = den};
	double np = (double)((sim_msg_bytes(&m, r->bytes) + mtu - 1) / mtu);
	return np > 1 ? np : 1;
}

/* The work of messages msg[0 .. n): computed as lone messages, or (loop)
 * in the event loop, where one-hop messages cost their packets too. */
static Work
packet_work(const SimRun *r, const SimMsg *msg, int n, bool loop)
{
	Work w = {0, 0};
	for (int m = 0; m < n; m++) {
		int nhop = msg[m].nhop;
		double np = packets_of(r, msg[m].num, msg[m].den);
		if (loop)
			w.loop += np * (nhop > 1 ? nhop : 1);
		else
			w.closed += nhop > 1 ? np * nhop : 1;
	}
	return w;
}

static bool
packet_budget(SimRun *r, Work add)
{
	r->work.closed += add.closed;
	r->work.loop += add.loop;
	r->over_budget = work_share(r, r->work) > 1;
	return !r->over_budget;
}

/*
 * Rounds mode: the least work of the whole run, before its first round, so
 * that a run past the budget is refused before it starts. Which rounds go
 * to the event loop is known only as they run, but lone rounds hold at
 * most nround x nlink hops in all (each link once a round), so the least
 * work puts there the hops that would cost most in the loop (a fractional
 * knapsack: a lower bound) and the rest in the loop. A hop of a one-hop
 * message of np packets costs 1 lone and np in the loop, a hop of a longer
 * one np either way, at the loop's dearer rate. With a reduction cost every
 * round goes to the loop; with private links none does. Messages come as
 * classes of one size and kind (one-hop or longer): a stream's SimShape, or
 * a message list's runs, so that both give the same bound.
 */
typedef struct HopClass {
	double np, slots; /* packets of each message, hops of them all */
	double lnp;       /* the loop's work a hop of them (np x loop_cost) */
	bool single;      /* one-hop messages (closed work 1 a hop, else np) */
	double share;     /* the part of a lone hop's closed work done: 1, or 1 / ncopy
	                   * when a symmetric stream runs lone rounds by their
	                   * representatives */
} HopClass;

static double
hop_class_closed(const HopClass *k)
{
	return (k->single ? 1 : k->np) * k->share;
}

static double
hop_class_save(const HopClass *k)
{
	return k->lnp / (double)MAX_LOOP_PACKET_HOPS - hop_class_closed(k) / (double)MAX_PACKET_HOPS;
}

/* Most saving first; equal classes in one order, so a class split in two
 * gives the same bound. */
static int
cmp_hop_class(const void *pa, const void *pb)
{
	const HopClass *a = pa, *b = pb;
	double sa = hop_class_save(a), sb = hop_class_save(b);
	if (sa != sb)
		return sa > sb ? -1 : 1;
	if (a->np != b->np)
		return a->np > b->np ? -1 : 1;
	return (int)b->single - (int)a->single;
}

static Work
least_work_of(const SimRun *r, HopClass *k, int n)
{
	double cap = r->o->reduce_rate > 0 ? 0
	             : r->o->private_links ? INFINITY
	                                   : (double)r->c->nround * r->net->nlink;
	Work w = {0, 0};
	for (int i = 0; i < n; i++)
		w.loop += k[i].np * k[i].slots;
	qsort(k, (size_t)n, sizeof *k, cmp_hop_class);
	for (int i = 0; i < n && cap > 0 && hop_class_save(&k[i]) > 0; i++) {
		double x = k[i].slots < cap ? k[i].slots : cap;
		w.loop -= x * k[i].np;
		w.closed += x * hop_class_closed(&k[i]);
		cap -= x;
	}
	return w;
}

static Work
least_packet_work(const SimRun *r)
{
	const SimColl *c = r->c;
	int n = 0;
	HopClass *k;
	if (c->stream) {
		k = xcalloc(2 * (size_t)c->stream->nshape + 1, sizeof *k);
		double share = r->ncopy ? 1.0 / r->ncopy : 1;
		for (int i = 0; i < c->stream->nshape; i++) {
			const SimShape *x = &c->stream->shape[i];
			double np = packets_of(r, x->num, x->den);
			k[n++] = (HopClass){np, x->single, np * loop_cost(r), true, share};
			k[n++] = (HopClass){np, x->hops, np * loop_cost(r), false, share};
		}
	} else {
		/* runs of one fraction and kind: few in any schedule, one per
		 * message at worst (24 bytes beside its 48) */
		k = xcalloc((size_t)c->nmsg + 1, sizeof *k);
		for (int m = 0; m < c->nmsg; m++) {
			const SimMsg *x = &c->msg[m];
			bool single = x->nhop <= 1;
			if (m == 0 || x->num != x[-1].num || x->den != x[-1].den ||
			    single != (x[-1].nhop <= 1))
				k[n++] = (HopClass){packets_of(r, x->num, x->den), 0,
				                    packets_of(r, x->num, x->den) * loop_cost(r), single, 1};
			k[n - 1].slots += single ? 1 : x->nhop;
		}
	}
	Work w = least_work_of(r, k, n);
	free(k);
	return w;
}

/*
 * Cut-through's buffers, in packets, per link (the buffer at its far end):
 * the network's, or by default enough to keep the link busy through a
 * slot's round trip, at least SIM_DEFAULT_BUFFER: a slot taken when a
 * packet starts on l comes back when its tail leaves the next router, a
 * hop delay and at most the slowest packet time out of it later, so
 *   ceil((hop(l) + max ser(mtu) out of l's far end) / ser_l(mtu)) + 1
 * packets cover it (docs/sim.md 2.1).
 */
static int64_t *
buffer_sizes(const SimNet *n, const int64_t *full_ser, const int64_t *hop_ps)
{
	int64_t *nbuf = xcalloc((size_t)n->nlink + 1, sizeof *nbuf);
	int64_t fixed = n->buffer_pkts > 0    ? n->buffer_pkts
	                : n->buffer_bytes > 0 ? (n->buffer_bytes >= n->mtu ? n->buffer_bytes / n->mtu : 1)
	                                      : 0;
	int64_t *out_ser = xcalloc((size_t)n->nnode + 1, sizeof *out_ser);
	for (int l = 0; l < n->nlink; l++)
		if (full_ser[l] > out_ser[n->link[l].src])
			out_ser[n->link[l].src] = full_ser[l];
	for (int l = 0; l < n->nlink; l++) {
		/* in doubles: a link nothing uses may have any latency and rate */
		double ser = full_ser[l] > 0 ? (double)full_ser[l] : 1;
		double cover = ceil(((double)hop_ps[l] + (double)out_ser[n->link[l].dst]) / ser) + 1;
		cover = cover > SIM_MAX_BUFFER ? SIM_MAX_BUFFER : cover;
		nbuf[l] = fixed ? fixed : cover > SIM_DEFAULT_BUFFER ? (int64_t)cover : SIM_DEFAULT_BUFFER;
		if (nbuf[l] > SIM_MAX_BUFFER)
			nbuf[l] = SIM_MAX_BUFFER;
	}
	free(out_ser);
	return nbuf;
}

/*
 * Symmetric rounds (SimStream.ncopy, docs/sim.md 6.1). When a stream's
 * group acts freely on the links and the links of each orbit are alike, a
 * round whose messages share no link is its representatives' round ncopy
 * times over: each image crosses links like its representative's, alone,
 * so it arrives when its representative does and adds the same to its
 * links. The round is then run on the representatives only, and what they
 * added to their links is kept per orbit and given to every link of the
 * orbit at the end (sym_unfold): the same integers as the whole round's,
 * so the results are the same to the bit. Rounds whose messages share
 * links are run whole (the event loop's order of arbitration is not the
 * same under the group).
 */
static void
sym_init(SimRun *r)
{
	const SimStream *st = r->c->stream;
	const SimNet *n = r->net;
	if (r->o->sync != SIM_ROUNDS || !st || st->ncopy <= 0 || !st->link_orbit || !st->round_rep)
		return;
	int *count = xcalloc((size_t)n->nlink + 1, sizeof *count);
	bool ok = true;
	for (int l = 0; l < n->nlink && ok; l++) {
		int o = st->link_orbit[l];
		ok = o >= 0 && o < n->nlink && st->link_orbit[o] == o;
		if (!ok)
			break;
		count[o]++;
		const SimLink *a = &n->link[l], *b = &n->link[o];
		ok = a->bw == b->bw && a->lat_ps == b->lat_ps && (!r->nbuf || r->nbuf[l] == r->nbuf[o]);
	}
	for (int l = 0; l < n->nlink && ok; l++)
		ok = count[l] == 0 || count[l] == st->ncopy;
	free(count);
	if (!ok)
		return;
	r->ncopy = st->ncopy;
	r->orbit = st->link_orbit;
	r->orbit_stamp = xcalloc((size_t)n->nlink + 1, sizeof *r->orbit_stamp);
	r->sym_stamp = xcalloc((size_t)n->nlink + 1, sizeof *r->sym_stamp);
	r->orbit_busy_ps = xcalloc((size_t)n->nlink + 1, sizeof *r->orbit_busy_ps);
	r->orbit_bytes = xcalloc((size_t)n->nlink + 1, sizeof *r->orbit_bytes);
}

static void
sym_free(SimRun *r)
{
	free(r->orbit_stamp), free(r->sym_stamp), free(r->orbit_busy_ps), free(r->orbit_bytes);
	free(r->sym_link), free(r->sym_busy0), free(r->sym_bytes0);
}

/* Round `round`'s representatives as a collective of their own. */
static void
rep_view(const SimColl *whole, int round, SimColl *view)
{
	SimRound x = whole->stream->round_rep(whole->stream->ctx, round);
	*view = *whole;
	view->deps = NULL;
	view->stream = NULL;
	view->msg = x.msg;
	view->nmsg = x.nmsg;
	view->hops = x.hops;
}

/* Whether the images of view's representatives share no link (no orbit is
 * crossed twice; with private links they never share) and, with a
 * reduction rate, at most one of them reduces (so each node's reduction
 * engine takes one image a round, as the representative's does); then the
 * links they cross are listed with their counts before the round. */
static bool
sym_lone(SimRun *r, const SimColl *view, int mark)
{
	int nred = 0;
	r->nsym = 0;
	for (int m = 0; m < view->nmsg; m++) {
		const SimMsg *x = &view->msg[m];
		nred += x->reduce;
		for (int j = 0; j < x->nhop; j++) {
			int l = view->hops[x->hop + j], o = r->orbit[l];
			if (r->orbit_stamp[o] == mark && !r->o->private_links)
				return false;
			r->orbit_stamp[o] = mark;
			if (r->sym_stamp[l] == mark)
				continue;
			r->sym_stamp[l] = mark;
			if (r->nsym == r->capsym) {
				r->capsym = r->capsym ? 2 * r->capsym : 64;
				r->sym_link = xrealloc(r->sym_link, (size_t)r->capsym * sizeof *r->sym_link);
				r->sym_busy0 = xrealloc(r->sym_busy0, (size_t)r->capsym * sizeof *r->sym_busy0);
				r->sym_bytes0 = xrealloc(r->sym_bytes0, (size_t)r->capsym * sizeof *r->sym_bytes0);
			}
			r->sym_link[r->nsym] = l;
			r->sym_busy0[r->nsym] = r->busy_ps ? r->busy_ps[l] : 0;
			r->sym_bytes0[r->nsym++] = r->link_bytes[l];
		}
	}
	return r->o->reduce_rate <= 0 || nred <= 1;
}

/* What the representatives added to their links goes to their orbits, and
 * the router energy counts every image's bytes. */
static void
sym_fold(SimRun *r, const SimColl *view)
{
	for (int i = 0; i < r->nsym; i++) {
		int l = r->sym_link[i], o = r->orbit[l];
		if (r->busy_ps) {
			r->orbit_busy_ps[o] += r->busy_ps[l] - r->sym_busy0[i];
			r->busy_ps[l] = r->sym_busy0[i];
		}
		r->orbit_bytes[o] += r->link_bytes[l] - r->sym_bytes0[i];
		r->link_bytes[l] = r->sym_bytes0[i];
	}
	if (r->net->router_energy_per_bit > 0) {
		double sum = 0;
		for (int m = 0; m < view->nmsg; m++)
			sum += (double)sim_msg_bytes(&view->msg[m], r->bytes);
		r->msg_bytes += sum * r->ncopy;
	}
}

/* Every link gets what its orbit got. */
static void
sym_unfold(SimRun *r)
{
	for (int l = 0; l < r->net->nlink && r->ncopy; l++) {
		int o = r->orbit[l];
		if (r->busy_ps)
			r->busy_ps[l] += r->orbit_busy_ps[o];
		r->link_bytes[l] += r->orbit_bytes[o];
	}
}

/* Runs the symmetric path's round on its representatives: r->c becomes
 * `view` (node 0's messages of `round`) when the stream is symmetric and
 * no two images share a link; false (r->c unchanged) otherwise. */
static bool
sym_enter(SimRun *r, const SimColl *whole, int round, SimColl *view)
{
	if (!r->ncopy)
		return false;
	rep_view(whole, round, view);
	if (!sym_lone(r, view, round + 1))
		return false;
	r->c = view;
	return true;
}

/* Packet mode: round `round` by its representatives, when their images
 * share no link and each is computed alone (lone messages: no reduction
 * rate, and under cut-through no buffer that could fill). True with
 * r->latest_ps its end; else nothing has changed. */
static bool
sym_packet_round(SimRun *r, const SimColl *whole, int round, int64_t start)
{
	SimColl view;
	if (r->o->reduce_rate > 0 || !sym_enter(r, whole, round, &view))
		return false;
	Work w = packet_work(r, view.msg, view.nmsg, false);
	bool lone = false;
	if (packet_budget(r, w))
		run_lone_round(r, 0, start, -(round + 1), &lone); /* r->stamp's marks are its own */
	r->c = whole;
	if (!lone) {
		r->work.closed -= w.closed;
		return false;
	}
	sym_fold(r, &view);
	return true;
}

/* Rounds mode, packets: each round alone (lone messages computed, else the
 * event loop), starting when the one before has ended. */
static int64_t
packet_rounds(SimRun *r)
{
	const SimColl *whole = r->c;
	const SimNet *n = r->net;
	SimColl view;
	int64_t end = 0;
	for (int m = 0, round = 0; round < whole->nround; round++) {
		int64_t start = end + stall_ps(r, round) + n->step_ps;
		r->latest_ps = start;
		if (sym_packet_round(r, whole, round, start)) {
			end = r->latest_ps;
			r->res->round_end[round] = (double)end * 1e-12;
			progress(r, (double)(round + 1) / whole->nround);
			continue;
		}
		round_view(r, whole, round, &m, &view);
		r->c = &view;
		bool lone = false;
		Work lone_work = packet_work(r, view.msg, view.nmsg, false);
		if (packet_budget(r, lone_work))
			run_lone_round(r, 0, start, round + 1, &lone);
		if (!lone) {
			/* the event loop's work in place of the closed forms' */
			r->work.closed -= lone_work.closed;
			if (r->over_budget || !packet_budget(r, packet_work(r, view.msg, view.nmsg, true))) {
				r->c = whole;
				break;
			}
			r->latest_ps = start;
			for (int i = 0; i < view.nmsg && !r->over_memory; i++)
				inject(r, i, start);
			drain(r);
			if (r->over_memory) {
				r->c = whole;
				break;
			}
		}
		r->c = whole;
		end = r->latest_ps;
		r->res->round_end[round] = (double)end * 1e-12;
		progress(r, (double)(round + 1) / whole->nround);
	}
	return end;
}

static void
run_packets(SimRun *r)
{
	const SimColl *c = r->c;
	const SimNet *n = r->net;
	r->hop_free = -1;
	ev_init(&r->q);
	size_t nqueued = (size_t)(r->o->sync == SIM_ROUNDS ? max_round_msgs(c) : c->nmsg) + 1;
	r->mnext = xcalloc(nqueued, sizeof *r->mnext);
	r->head = xcalloc((size_t)n->nlink, sizeof *r->head);
	r->tail = xcalloc((size_t)n->nlink, sizeof *r->tail);
	r->cur = xcalloc((size_t)n->nlink, sizeof *r->cur);
	r->busy = xcalloc((size_t)n->nlink, sizeof *r->busy);
	r->full_ser = xcalloc((size_t)n->nlink, sizeof *r->full_ser);
	r->hop_ps = xcalloc((size_t)n->nlink, sizeof *r->hop_ps);
	r->busy_ps = xcalloc((size_t)n->nlink, sizeof *r->busy_ps);
	r->red_free = xcalloc((size_t)n->nnode, sizeof *r->red_free);
	r->done_ps_link = xcalloc((size_t)n->nlink, sizeof *r->done_ps_link);
	r->vct = n->switching == SIM_CUT_THROUGH;
	if (r->vct)
		r->cur_j = xcalloc((size_t)n->nlink, sizeof *r->cur_j);
	for (int l = 0; l < n->nlink; l++) {
		r->head[l] = -1;
		r->full_ser[l] = sim_ser_ps(n->mtu, n->link[l].bw);
		r->hop_ps[l] = n->link[l].lat_ps + n->router_ps;
	}
	if (r->vct)
		r->nbuf = buffer_sizes(n, r->full_ser, r->hop_ps);
	sym_init(r);
	int64_t end = 0;
	r->stamp = xcalloc((size_t)n->nlink, sizeof *r->stamp);
	r->saved_busy_ps = xcalloc((size_t)n->nlink, sizeof *r->saved_busy_ps);
	r->saved_bytes = xcalloc((size_t)n->nlink, sizeof *r->saved_bytes);
	if (r->o->sync == SIM_ROUNDS) {
		Work least = least_packet_work(r);
		if (work_share(r, least) > 1)
			r->work = least, r->over_budget = true;
		else
			end = packet_rounds(r);
	} else if (packet_budget(r, packet_work(r, c->msg, c->nmsg, true))) {
		r->ready_ps = xcalloc((size_t)c->nmsg, sizeof *r->ready_ps);
		r->round_end_ps = xcalloc((size_t)c->nround + 1, sizeof *r->round_end_ps);
		for (int lo = 0; lo < c->nmsg && !r->over_memory; lo = r->epoch_hi) {
			r->epoch_hi = epoch_end(r, lo);
			int64_t t0 = r->latest_ps + epoch_stall(r, lo);
			for (int m = lo; m < r->epoch_hi; m++)
				if (r->waiting[m] == 0)
					ev_push(&r->q, (r->ready_ps[m] > t0 ? r->ready_ps[m] : t0) + n->step_ps,
					          EV_INJECT, m);
			drain(r);
		}
		end = r->latest_ps;
		for (int round = 0; round < c->nround; round++)
			r->res->round_end[round] = (double)r->round_end_ps[round] * 1e-12;
		free(r->ready_ps), free(r->round_end_ps);
	}
	sym_unfold(r);
	r->res->time_ps = end;
	r->res->time_s = (double)end * 1e-12;
	for (int l = 0; l < n->nlink; l++)
		r->res->link_busy[l] = (double)r->busy_ps[l] * 1e-12;
	free(r->hop), free(r->mnext);
	free(r->head), free(r->tail), free(r->cur), free(r->busy), free(r->full_ser);
	free(r->hop_ps), free(r->busy_ps), free(r->red_free);
	ev_free(&r->q);
	free(r->done_ps_link), free(r->stamp), free(r->saved_busy_ps), free(r->saved_bytes);
	free(r->cur_j), free(r->cred.slot), free(r->nbuf);
	sym_free(r);
}

/* ---- flow mode ---- */

/* The messages waiting to start, by (time, id): ties by id keep the order
 * deterministic (base/heap.h). By dependencies the heap holds thousands,
 * and base/heap.h's pop takes half the mispredicted branches of the binary
 * heap written here before (docs/testing.md, "Measured choices in the
 * code"). */
typedef struct FStart {
	double t;
	int id;
} FStart;

typedef struct FHeap {
	FStart *e;
	size_t n, cap;
} FHeap;

static bool
fstart_less(const void *a, const void *b)
{
	const FStart *x = a, *y = b;
	return x->t < y->t || (x->t == y->t && x->id < y->id);
}

static void
fheap_push(FHeap *h, double t, int id)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 1024;
		h->e = xrealloc(h->e, h->cap * sizeof *h->e);
	}
	FStart x = {t, id};
	heap_push(h->e, h->n++, sizeof x, &x, fstart_less);
}

static int
fheap_pop(FHeap *h, double *t)
{
	FStart top = h->e[0];
	heap_pop(h->e, h->n--, sizeof top, fstart_less);
	*t = top.t;
	return top.id;
}

typedef struct Flows {
	int *act;          /* active messages */
	int nact;
	double *rem, *rate, *size; /* per active flow: bytes left, rate, bytes */
	double *cap;       /* per link, bytes/s left while filling */
	int *cnt;          /* per link, unfrozen flows crossing it */
	bool *frozen;
	int *used;         /* links touched by active flows */
	int nused;
	bool *in_used;
	double *lat_s;     /* per link: latency + router latency */
	FHeap starts;
} Flows;

/* Max-min fair rates by progressive filling: the most constrained link's
 * fair share goes to every flow through it, repeatedly. */
static void
fair_rates(SimRun *r, Flows *f)
{
	const SimNet *n = r->net;
	const SimColl *c = r->c;
	for (int i = 0; i < f->nused; i++)
		f->in_used[f->used[i]] = false;
	f->nused = 0;
	for (int i = 0; i < f->nact; i++) {
		const SimMsg *m = &c->msg[f->act[i]];
		f->frozen[i] = false;
		for (int j = 0; j < m->nhop; j++) {
			int l = c->hops[m->hop + j];
			if (!f->in_used[l]) {
				f->in_used[l] = true;
				f->used[f->nused++] = l;
				f->cap[l] = (double)n->link[l].bw / 8;
				f->cnt[l] = 0;
			}
			f->cnt[l]++;
		}
	}
	int left = f->nact;
	for (int i = 0; i < f->nact && r->o->private_links; i++) {
		/* private links: every flow at its route's slowest link, alone */
		const SimMsg *m = &c->msg[f->act[i]];
		f->rate[i] = INFINITY;
		for (int j = 0; j < m->nhop; j++) {
			double bw = (double)n->link[c->hops[m->hop + j]].bw / 8;
			f->rate[i] = bw < f->rate[i] ? bw : f->rate[i];
		}
		f->frozen[i] = true;
		left--;
	}
	while (left > 0) {
		double share = INFINITY;
		for (int i = 0; i < f->nused; i++) {
			int l = f->used[i];
			if (f->cnt[l] > 0 && f->cap[l] / f->cnt[l] < share)
				share = f->cap[l] / f->cnt[l];
		}
		if (share < 0)
			share = 0;
		double limit = share * (1 + 1e-12);
		for (int i = 0; i < f->nact; i++) {
			if (f->frozen[i])
				continue;
			const SimMsg *m = &c->msg[f->act[i]];
			bool hit = false;
			for (int j = 0; j < m->nhop && !hit; j++) {
				int l = c->hops[m->hop + j];
				hit = f->cap[l] / f->cnt[l] <= limit;
			}
			if (!hit)
				continue;
			f->rate[i] = share;
			f->frozen[i] = true;
			left--;
			for (int j = 0; j < m->nhop; j++) {
				int l = c->hops[m->hop + j];
				f->cap[l] -= share;
				f->cnt[l]--;
			}
		}
	}
}

static void
waited_s(SimRun *r, Flows *f, int d)
{
	if (--r->waiting[d] > 0 || d >= r->epoch_hi) /* a later epoch's starts with it */
		return;
	double t = r->ready_s[d] + (double)r->net->step_ps * 1e-12;
	fheap_push(&f->starts, r->qfree_s[d] > t ? r->qfree_s[d] : t, d);
}

/* As sent_ps: message m drained at t. */
static void
sent_s(SimRun *r, Flows *f, int m, double t)
{
	int d = r->qnext ? r->qnext[m] : -1;
	if (d < 0)
		return;
	r->qfree_s[d] = t;
	waited_s(r, f, d);
}

static void
complete_s(SimRun *r, Flows *f, int m, double bytes, double t)
{
	const SimMsg *msg = &r->c->msg[m];
	if (msg->reduce && r->o->reduce_rate > 0) {
		int node = r->c->rank_node[msg->dst];
		if (r->red_free_s[node] > t)
			t = r->red_free_s[node];
		t += bytes / r->o->reduce_rate;
		r->red_free_s[node] = t;
	}
	r->done_s[m] = t;
	if (t > r->res->round_end[msg->round])
		r->res->round_end[msg->round] = t;
	if (++r->ncompleted % 8192 == 0 && r->o->sync == SIM_DEPS)
		progress(r, (double)r->ncompleted / r->c->nmsg);
	if (r->o->sync != SIM_DEPS)
		return;
	for (int i = r->rdep_off[m]; i < r->rdep_off[m + 1]; i++) {
		int d = r->rdep[i];
		if (t > r->ready_s[d])
			r->ready_s[d] = t;
		waited_s(r, f, d);
	}
}

static double
path_latency(SimRun *r, Flows *f, int m)
{
	const SimMsg *msg = &r->c->msg[m];
	double s = 0;
	for (int j = 0; j < msg->nhop; j++)
		s += f->lat_s[r->c->hops[msg->hop + j]];
	return s;
}

static void
start_flow(SimRun *r, Flows *f, int m, double t)
{
	const SimMsg *msg = &r->c->msg[m];
	int64_t bytes = msg_cut(r, m)->size;
	if (bytes == 0 || msg->nhop == 0) {
		sent_s(r, f, m, t);
		complete_s(r, f, m, (double)bytes, t);
		return;
	}
	for (int j = 0; j < msg->nhop; j++)
		r->link_bytes[r->c->hops[msg->hop + j]] += bytes;
	f->act[f->nact] = m;
	f->rem[f->nact] = f->size[f->nact] = (double)bytes;
	f->nact++;
}

/* Runs until no flow is active and none waits to start. Arrivals (path
 * latency after draining) are recorded as completions right away: they
 * only feed later starts, which the start heap orders. */
static void
flow_loop(SimRun *r, Flows *f, double t)
{
	bool dirty = true;
	while (f->nact > 0 || f->starts.n > 0) {
		if (f->nact == 0) {
			double ts;
			int m = fheap_pop(&f->starts, &ts);
			t = ts > t ? ts : t;
			start_flow(r, f, m, t);
			dirty = true;
			continue;
		}
		if (dirty)
			fair_rates(r, f);
		dirty = false;
		double dt = INFINITY;
		for (int i = 0; i < f->nact; i++)
			if (f->rate[i] > 0 && f->rem[i] / f->rate[i] < dt)
				dt = f->rem[i] / f->rate[i];
		bool start = f->starts.n > 0 && f->starts.e[0].t < t + dt;
		if (start)
			dt = f->starts.e[0].t - t;
		if (dt < 0)
			dt = 0;
		t += dt;
		/* flows within a relative 1e-9 of draining drain now: symmetric
		 * schedules finish together instead of one by one */
		int k = 0;
		for (int i = 0; i < f->nact; i++) {
			int m = f->act[i];
			f->rem[i] -= f->rate[i] * dt;
			bool gone = f->rem[i] <= 1e-9 * f->size[i] ||
			            (!start && f->rate[i] > 0 && f->rem[i] / f->rate[i] <= 1e-9 * dt);
			if (gone) {
				sent_s(r, f, m, t);
				complete_s(r, f, m, f->size[i], t + path_latency(r, f, m));
				dirty = true;
			} else {
				f->act[k] = m, f->rem[k] = f->rem[i], f->rate[k] = f->rate[i];
				f->size[k] = f->size[i];
				k++;
			}
		}
		f->nact = k;
		while (f->starts.n > 0 && f->starts.e[0].t <= t) {
			double ts;
			int m = fheap_pop(&f->starts, &ts);
			start_flow(r, f, m, t);
			dirty = true;
		}
	}
}

/* Flow mode: round `round` by its representatives, when their images share
 * no link (each flow then has its links to itself, and its image the same
 * rates and times). True with the round's end in the result; else nothing
 * has changed. */
static bool
sym_flow_round(SimRun *r, Flows *f, const SimColl *whole, int round, double start)
{
	SimColl view;
	if (!sym_enter(r, whole, round, &view))
		return false;
	for (int i = 0; i < view.nmsg; i++)
		start_flow(r, f, i, start);
	flow_loop(r, f, start);
	r->c = whole;
	sym_fold(r, &view);
	return true;
}

static void
run_flows(SimRun *r)
{
	const SimColl *c = r->c;
	const SimNet *n = r->net;
	Flows f = {0};
	/* rounds mode holds one round's flows at a time */
	size_t nflow = (size_t)(r->o->sync == SIM_ROUNDS ? max_round_msgs(c) : c->nmsg) + 1;
	f.act = xcalloc(nflow, sizeof *f.act);
	f.rem = xcalloc(nflow, sizeof *f.rem);
	f.rate = xcalloc(nflow, sizeof *f.rate);
	f.size = xcalloc(nflow, sizeof *f.size);
	f.frozen = xcalloc(nflow, sizeof *f.frozen);
	f.cap = xcalloc((size_t)n->nlink, sizeof *f.cap);
	f.cnt = xcalloc((size_t)n->nlink, sizeof *f.cnt);
	f.used = xcalloc((size_t)n->nlink, sizeof *f.used);
	f.in_used = xcalloc((size_t)n->nlink, sizeof *f.in_used);
	f.lat_s = xcalloc((size_t)n->nlink, sizeof *f.lat_s);
	r->done_s = xcalloc(nflow, sizeof *r->done_s);
	r->red_free_s = xcalloc((size_t)n->nnode, sizeof *r->red_free_s);
	for (int l = 0; l < n->nlink; l++)
		f.lat_s[l] = (double)(n->link[l].lat_ps + n->router_ps) * 1e-12;
	sym_init(r);
	double step = (double)n->step_ps * 1e-12, end = 0;
	if (r->o->sync == SIM_ROUNDS) {
		SimColl view;
		for (int m = 0, round = 0; round < c->nround; round++) {
			double start = end + (double)stall_ps(r, round) * 1e-12 + step;
			r->res->round_end[round] = start;
			if (!sym_flow_round(r, &f, c, round, start)) {
				round_view(r, c, round, &m, &view);
				r->c = &view;
				for (int i = 0; i < view.nmsg; i++)
					start_flow(r, &f, i, start);
				flow_loop(r, &f, start);
				r->c = c;
			}
			end = r->res->round_end[round];
			progress(r, (double)(round + 1) / c->nround);
		}
	} else {
		r->ready_s = xcalloc((size_t)c->nmsg, sizeof *r->ready_s);
		double t = 0;
		for (int lo = 0; lo < c->nmsg; lo = r->epoch_hi) {
			r->epoch_hi = epoch_end(r, lo);
			for (int m = 0; m < lo; m++)
				t = r->done_s[m] > t ? r->done_s[m] : t;
			double t0 = t + (double)epoch_stall(r, lo) * 1e-12;
			for (int m = lo; m < r->epoch_hi; m++)
				if (r->waiting[m] == 0)
					fheap_push(&f.starts, (r->ready_s[m] > t0 ? r->ready_s[m] : t0) + step, m);
			flow_loop(r, &f, t0);
		}
		free(r->ready_s);
		for (int m = 0; m < c->nmsg; m++)
			if (r->done_s[m] > end)
				end = r->done_s[m];
	}
	sym_unfold(r);
	sym_free(r);
	r->res->time_s = end;
	r->res->time_ps = (int64_t)llround(end * 1e12);
	for (int l = 0; l < n->nlink; l++)
		r->res->link_busy[l] = (double)r->link_bytes[l] * 8 / (double)n->link[l].bw;
	free(f.act), free(f.rem), free(f.rate), free(f.size), free(f.frozen), free(f.cap), free(f.cnt);
	free(f.used), free(f.in_used), free(f.lat_s), free(f.starts.e);
	free(r->done_s), free(r->red_free_s);
}

/* Deps mode: a sender posts its messages on a link's queue in issue order
 * (message order: by round, then as built) and the link serves that queue
 * first in, first out; each message waits for the one before it. Each
 * instance (an independent pipeline, SimMsg.instance) has its own queue on
 * a link, so one instance's messages never wait behind another's. Different
 * queues (senders, links, instances) still share fairly. The Chakra backend
 * writes the same order as control dependencies, so both use this. */
void
sim_queue_prev(const SimColl *c, int nlink, int *prev)
{
	int ninst = 1;
	for (int m = 0; m < c->nmsg; m++)
		if (c->msg[m].instance >= ninst)
			ninst = c->msg[m].instance + 1;
	size_t nq = (size_t)nlink * (size_t)ninst;
	int *last = xmalloc((nq + 1) * sizeof *last);
	for (size_t q = 0; q < nq; q++)
		last[q] = -1;
	for (int m = 0; m < c->nmsg; m++) {
		prev[m] = -1;
		if (c->msg[m].nhop == 0)
			continue;
		size_t q = (size_t)c->hops[c->msg[m].hop] * (size_t)ninst + (size_t)c->msg[m].instance;
		prev[m] = last[q];
		last[q] = m;
	}
	free(last);
}

static void
issue_queues(SimRun *r)
{
	const SimColl *c = r->c;
	int *prev = xmalloc((size_t)c->nmsg * sizeof *prev + 1);
	sim_queue_prev(c, r->net->nlink, prev);
	r->qnext = xmalloc((size_t)c->nmsg * sizeof *r->qnext + 1);
	r->qfree_ps = xcalloc((size_t)c->nmsg + 1, sizeof *r->qfree_ps);
	r->qfree_s = xcalloc((size_t)c->nmsg + 1, sizeof *r->qfree_s);
	for (int m = 0; m < c->nmsg; m++)
		r->qnext[m] = -1;
	for (int m = 0; m < c->nmsg; m++)
		if (prev[m] >= 0) {
			r->qnext[prev[m]] = m;
			r->waiting[m]++;
		}
	free(prev);
}

/* The energy model of docs/sim.md 4. Every byte of a message crosses every
 * link of its route once, so the link energy (bits x hops x energy per bit)
 * is the links' bytes x their energy; a message of h hops passes h + 1
 * routers (its own, h - 1 between, the receiver's), so the routers see the
 * links' bytes plus every message's bytes once more. Static power is paid
 * by every router port and link for the whole run, busy or idle. */
static void
sim_energy(const SimNet *n, double msg_sum, SimResult *res)
{
	double link_sum = 0;
	for (int l = 0; l < n->nlink; l++) {
		res->energy_link_j += res->link_bytes[l] * 8 * n->link[l].energy_per_bit;
		link_sum += res->link_bytes[l];
	}
	res->energy_router_j = (link_sum + msg_sum) * 8 * n->router_energy_per_bit;
	res->energy_static_j =
	    res->time_s * ((double)n->nport * n->port_static_w + n->nlink * n->link_static_w);
	res->energy_j = res->energy_link_j + res->energy_router_j + res->energy_static_j;
}

/* An upper bound on any run's time, in seconds, in double so that it cannot
 * overflow itself: every message crossing every link of its route alone,
 * one after another, at the slowest link's rate and the longest latency,
 * each packet rounded up a picosecond, plus every round's overheads. The
 * simulator is work-conserving (a link idles only when nothing may use
 * it), so no schedule takes longer. A stream counts its messages by class
 * (SimShape); one without classes is not bounded. */
static double
time_bound_s(const SimNet *n, const SimColl *c, int64_t bytes, const SimOpts *o)
{
	double min_bw = 0, max_lat = 0, mtu = n->mtu > 0 ? (double)n->mtu : 1;
	for (int l = 0; l < n->nlink; l++) {
		if (l == 0 || (double)n->link[l].bw < min_bw)
			min_bw = (double)n->link[l].bw;
		if ((double)n->link[l].lat_ps > max_lat)
			max_lat = (double)n->link[l].lat_ps;
	}
	if (min_bw <= 0)
		return 0;
	double hop_bytes = 0, hops = 0, packets = 0, reduced = 0;
	int nclass = c->stream ? (c->stream->shape ? c->stream->nshape : 0) : c->nmsg;
	for (int i = 0; i < nclass; i++) {
		double num, den, h;
		if (c->stream) {
			const SimShape *k = &c->stream->shape[i];
			num = (double)k->num, den = (double)k->den, h = k->single + k->hops;
		} else {
			const SimMsg *m = &c->msg[i];
			num = (double)m->num, den = (double)m->den, h = m->nhop > 1 ? m->nhop : 1;
			reduced += m->reduce ? (double)bytes * num / den : 0;
		}
		double b = (double)bytes * num / den;
		hop_bytes += b * h, hops += h, packets += (b / mtu + 1) * h;
	}
	double ps = hop_bytes * 8e12 / min_bw + hops * (max_lat + (double)n->router_ps) + packets +
	            (double)c->nround * ((double)n->step_ps + (double)n->reconfig_ps);
	return ps * 1e-12 + (o->reduce_rate > 0 ? reduced / o->reduce_rate : 0);
}

int
sim_run(Arena *a, const SimNet *n, int ci, int64_t bytes, const SimOpts *o, SimResult *res,
        char *err, size_t errlen)
{
	const SimColl *c0 = &n->coll[ci];
	double bound = time_bound_s(n, c0, bytes, o);
	if (!(bound <= MAX_SIM_SECONDS)) {
		snprintf(err, errlen, "'%s' at %lld bytes could take up to %.3g s of simulated time; "
		         "collc simulates at most %.3g s (53 days: times are 64-bit picoseconds)",
		         c0->name, (long long)bytes, bound, MAX_SIM_SECONDS);
		return -1;
	}
	const SimColl *c = &n->coll[ci];
	if (o->private_links && o->mode == SIM_PACKET && (o->sync == SIM_DEPS || o->reduce_rate > 0)) {
		snprintf(err, errlen, "'%s': private links are simulated round by round without a "
		         "reduction rate in packet mode (or in flow mode)", c->name);
		return -1;
	}
	if (o->sync == SIM_DEPS && (!c->has_deps || c->stream)) {
		snprintf(err, errlen, "'%s': its dependencies are not known (too large to derive); "
		         "simulate it round by round", c->name);
		return -1;
	}
	memset(res, 0, sizeof *res);
	res->nround = c->nround;
	res->round_end = arena_array(a, (size_t)c->nround + 1, sizeof *res->round_end);
	res->nlink = n->nlink;
	res->link_bytes = arena_array(a, (size_t)n->nlink + 1, sizeof *res->link_bytes);
	res->link_busy = arena_array(a, (size_t)n->nlink + 1, sizeof *res->link_busy);
	SimRun r = {.net = n, .c = c, .o = o, .bytes = bytes, .res = res};
	r.link_bytes = xcalloc((size_t)n->nlink + 1, sizeof *r.link_bytes);
	if (o->sync == SIM_DEPS) {
		r.waiting = xcalloc((size_t)c->nmsg, sizeof *r.waiting);
		r.rdep_off = xcalloc((size_t)c->nmsg + 1, sizeof *r.rdep_off);
		int total = 0;
		for (int m = 0; m < c->nmsg; m++) {
			r.waiting[m] = c->msg[m].ndep;
			for (int i = 0; i < c->msg[m].ndep; i++)
				r.rdep_off[c->deps[c->msg[m].dep + i] + 1]++;
			total += c->msg[m].ndep;
		}
		for (int m = 0; m < c->nmsg; m++)
			r.rdep_off[m + 1] += r.rdep_off[m];
		r.rdep = xcalloc((size_t)total, sizeof *r.rdep);
		int *fill = xcalloc((size_t)c->nmsg, sizeof *fill);
		for (int m = 0; m < c->nmsg; m++)
			for (int i = 0; i < c->msg[m].ndep; i++) {
				int d = c->deps[c->msg[m].dep + i];
				r.rdep[r.rdep_off[d] + fill[d]++] = m;
			}
		free(fill);
		issue_queues(&r);
		if (n->router_energy_per_bit > 0) /* rounds mode sums them round by round */
			for (int m = 0; m < c->nmsg; m++)
				r.msg_bytes += (double)sim_msg_bytes(&c->msg[m], bytes);
	}
	if (o->mode == SIM_PACKET)
		run_packets(&r);
	else
		run_flows(&r);
	for (int l = 0; l < n->nlink; l++)
		res->link_bytes[l] = (double)r.link_bytes[l];
	sim_energy(n, r.msg_bytes, res);
	free(r.link_bytes), free(r.waiting), free(r.rdep_off), free(r.rdep);
	free(r.qnext), free(r.qfree_ps), free(r.qfree_s);
	res->packet_hops = r.work.closed + r.work.loop;
	res->loop_hops = r.work.loop;
	if (r.over_budget) {
		snprintf(err, errlen, "'%s' at %lld bytes crosses links with at least %.3g packets in "
		         "the event loop and %.3g in closed form; packet mode (%s) simulates at most "
		         "%.3g and %.3g, or a mix (%d s of CPU; try flow mode)", c->name,
		         (long long)bytes, r.work.loop, r.work.closed,
		         r.vct ? "cut-through" : "store-and-forward",
		         (double)MAX_LOOP_PACKET_HOPS / loop_cost(&r),
		         (double)MAX_PACKET_HOPS, PACKET_BUDGET_SECONDS);
		return -1;
	}
	if (r.stuck) { /* cannot happen (docs/sim.md 2.1); said rather than a wrong time */
		snprintf(err, errlen, "'%s' at %lld bytes: internal error: cut-through's buffers "
		         "deadlocked", c->name, (long long)bytes);
		return -1;
	}
	if (r.over_memory) {
		snprintf(err, errlen, "'%s' at %lld bytes has more than %d (message, hop) pairs with "
		         "packets at once in the event loop; packet mode holds at most that many (%.0f "
		         "MiB; try flow mode)", c->name, (long long)bytes, MAX_LOOP_LIVE_HOPS,
		         (double)MAX_LOOP_LIVE_HOPS * sizeof(Hop) / (1 << 20));
		return -1;
	}
	double p = c->nrank;
	res->goodput_bps = res->time_s > 0 ? (double)bytes * 8 * (p - 1) / (p * res->time_s) : 0;
	res->bound_bps = sim_injection_bw(n, ci) / 2;
	res->bound_ratio = res->bound_bps > 0 ? res->goodput_bps / res->bound_bps : 0;
	for (int round = 0; round < c->nround; round++)
		res->nreconfig += stall_ps(&r, round) > 0;
	res->reconfig_s = (double)res->nreconfig * (double)n->reconfig_ps * 1e-12;
	return 0;
}
