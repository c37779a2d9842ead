/*
 * sim.c: the simulator's engine (docs/sim.md has the model exactly).
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
enum { EV_ARRIVE, EV_INJECT, EV_DELIVER, EV_DONE, EV_PICK };

typedef struct Ev {
	int64_t t;
	uint64_t ord;  /* kind in the top bits, then the order of making */
	int id;
} Ev;

typedef struct Heap {
	Ev *v;
	size_t n, cap;
	uint64_t seq;
} Heap;

static bool
ev_less(const Ev *a, const Ev *b)
{
	return a->t < b->t || (a->t == b->t && a->ord < b->ord);
}

/* A 4-ary heap: half the depth of a binary one, and a node's children
 * share cache lines. (t, ord) orders events totally, so any heap pops them
 * in the same order. */
enum { HEAP_ARITY = 4 };

static void
heap_push(Heap *h, int64_t t, int kind, int id)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 1024;
		h->v = xrealloc(h->v, h->cap * sizeof *h->v);
	}
	Ev e = {t, (uint64_t)kind << 60 | h->seq++, id};
	size_t i = h->n++;
	while (i > 0) {
		size_t p = (i - 1) / HEAP_ARITY;
		if (!ev_less(&e, &h->v[p]))
			break;
		h->v[i] = h->v[p];
		i = p;
	}
	h->v[i] = e;
}

static Ev
heap_pop(Heap *h)
{
	Ev top = h->v[0], last = h->v[--h->n];
	size_t i = 0;
	for (;;) {
		size_t c = HEAP_ARITY * i + 1, end = c + HEAP_ARITY;
		if (c >= h->n)
			break;
		if (end > h->n)
			end = h->n;
		size_t best = c;
		for (size_t k = c + 1; k < end; k++)
			if (ev_less(&h->v[k], &h->v[best]))
				best = k;
		if (!ev_less(&h->v[best], &last))
			break;
		h->v[i] = h->v[best];
		i = best;
	}
	if (h->n)
		h->v[i] = last;
	return top;
}

typedef struct Cut {
	int64_t num, den;  /* the fraction of the vector */
	int64_t size, last;
	int64_t npkt;  /* a lone one-hop message may have 2^31 packets and more */
} Cut;

typedef struct SimRun {
	const SimNet *net;
	const SimColl *c;
	const SimOpts *o;
	int64_t bytes;
	SimResult *res;
	/* messages */
	int64_t *last;
	int64_t latest_ps; /* the latest completion so far (of the round, in round mode) */
	double *done_s;
	int *npkt, *delivered, *eoff;
	int *waiting;      /* deps mode: dependencies not yet arrived */
	int64_t *ready_ps; /* deps mode: when the last one arrived */
	double *ready_s;
	int *rdep_off, *rdep;
	int *qnext;        /* deps mode: the next message posted on the same first link
	                    * by the same instance, or -1 */
	int64_t *qfree_ps; /* deps mode: when the one before it on that link finished sending */
	double *qfree_s;
	/* hop entries (message, hop) */
	int *emsg, *elink, *w, *sent, *enext;
	/* links */
	int *head, *tail, *cur;
	int64_t *full_ser, *hop_ps, *busy_ps;
	int64_t *link_bytes; /* exact; copied to the result's doubles at the end */
	int64_t *round_end_ps; /* deps mode: the latest arrival of each round */
	int64_t *done_ps_link; /* lone messages: when each link last finished a packet */
	int *stamp;            /* lone messages: the round (+1) that last used each link */
	int64_t *saved_busy_ps, *saved_bytes; /* and the link's counts before it */
	int64_t memo_b, memo_bw, memo_ser; /* packet_ps's one remembered size */
	Cut cut;                           /* msg_cut's one remembered fraction */
	double packet_hops;                /* the event loop's work so far (packet_budget) */
	bool over_budget;                  /* packet_hops passed MAX_PACKET_HOPS: stopped */
	bool *busy;
	int64_t *red_free; /* per node: the reduction engine is free from */
	double *red_free_s;
	Heap h;
	double msg_bytes;  /* every message's bytes, summed in order (router energy) */
	int ncompleted;
	int epoch_hi;      /* deps mode: messages from here wait for a reconfiguration
	                    * or a barrier */
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

static void
push_tail(SimRun *r, int l, int e)
{
	r->enext[e] = -1;
	if (r->head[l] < 0)
		r->head[l] = e;
	else
		r->enext[r->tail[l]] = e;
	r->tail[l] = e;
}

static void
pick(SimRun *r, int l, int64_t t)
{
	int e = r->head[l];
	if (e < 0) {
		r->busy[l] = false;
		return;
	}
	r->head[l] = r->enext[e];
	int m = r->emsg[e];
	int k = r->sent[e]++;
	if (--r->w[e] > 0)
		push_tail(r, l, e);
	int64_t b = k == r->npkt[m] - 1 ? r->last[m] : r->net->mtu;
	int64_t ser = packet_ps(r, b, l);
	r->busy[l] = true;
	r->cur[l] = e;
	r->busy_ps[l] += ser;
	r->link_bytes[l] += b;
	heap_push(&r->h, t + ser, EV_DONE, l);
}

/* An idle link with a packet waiting chooses after every arrival at t. */
static void
wake(SimRun *r, int l, int64_t t)
{
	if (r->busy[l])
		return;
	r->busy[l] = true;
	heap_push(&r->h, t, EV_PICK, l);
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
	heap_push(&r->h, t, EV_INJECT, d);
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

static void
inject(SimRun *r, int m, int64_t t)
{
	if (r->npkt[m] == 0 || r->c->msg[m].nhop == 0) {
		sent_ps(r, m, t);
		complete_ps(r, m, t);
		return;
	}
	int e = r->eoff[m];
	int l = r->elink[e];
	if (r->w[e] == 0)
		push_tail(r, l, e);
	r->w[e] += r->npkt[m];
	wake(r, l, t);
}

static void
drain(SimRun *r)
{
	while (r->h.n) {
		Ev ev = heap_pop(&r->h);
		int kind = (int)(ev.ord >> 60);
		switch (kind) {
		case EV_INJECT:
			inject(r, ev.id, ev.t);
			break;
		case EV_ARRIVE: {
			int e = ev.id, l = r->elink[e];
			if (r->w[e]++ == 0)
				push_tail(r, l, e);
			wake(r, l, ev.t);
			break;
		}
		case EV_PICK:
			pick(r, ev.id, ev.t);
			break;
		case EV_DELIVER:
			if (++r->delivered[ev.id] == r->npkt[ev.id])
				complete_ps(r, ev.id, ev.t);
			break;
		case EV_DONE: {
			int l = ev.id, e = r->cur[l], m = r->emsg[e];
			int64_t arrive = ev.t + r->hop_ps[l];
			if (e == r->eoff[m] && r->sent[e] == r->npkt[m])
				sent_ps(r, m, ev.t);
			if (e + 1 < r->eoff[m] + r->c->msg[m].nhop)
				heap_push(&r->h, arrive, EV_ARRIVE, e + 1);
			else
				heap_push(&r->h, arrive, EV_DELIVER, m);
			pick(r, l, ev.t);
			break;
		}
		default:
			die("sim: bad event");
		}
	}
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
		if (alone) {
			/* what complete_ps does in round mode without reduction cost */
			int64_t arrive = run_alone(r, m, t);
			if (arrive > latest)
				latest = arrive;
		} else {
			undo_lone(r, first, m, mark);
		}
	}
	r->latest_ps = latest;
	*lone = alone;
	return m;
}

/* The per-hop state of the event loop, made only when a round needs it. */
static void
free_events(SimRun *r)
{
	free(r->eoff), free(r->emsg), free(r->elink), free(r->w), free(r->sent), free(r->enext);
	free(r->npkt), free(r->delivered), free(r->last);
	r->eoff = r->emsg = r->elink = r->w = r->sent = r->enext = NULL;
	r->npkt = r->delivered = NULL;
	r->last = NULL;
}

static void
prepare_events(SimRun *r)
{
	const SimColl *c = r->c;
	free_events(r);
	int H = 0;
	r->eoff = xcalloc((size_t)c->nmsg + 1, sizeof *r->eoff);
	for (int m = 0; m < c->nmsg; m++) {
		r->eoff[m] = H;
		H += c->msg[m].nhop;
	}
	r->eoff[c->nmsg] = H;
	r->emsg = xcalloc((size_t)H + 1, sizeof *r->emsg);
	r->elink = xcalloc((size_t)H + 1, sizeof *r->elink);
	r->w = xcalloc((size_t)H + 1, sizeof *r->w);
	r->sent = xcalloc((size_t)H + 1, sizeof *r->sent);
	r->enext = xcalloc((size_t)H + 1, sizeof *r->enext);
	r->delivered = xcalloc((size_t)c->nmsg, sizeof *r->delivered);
	r->npkt = xcalloc((size_t)c->nmsg, sizeof *r->npkt);
	r->last = xcalloc((size_t)c->nmsg, sizeof *r->last);
	for (int m = 0; m < c->nmsg; m++)
		/* the budget holds the event loop's packets under 2^30 */
		r->npkt[m] = (int)msg_cut(r, m)->npkt, r->last[m] = msg_cut(r, m)->last;
	for (int m = 0; m < c->nmsg; m++)
		for (int j = 0; j < c->msg[m].nhop; j++) {
			r->emsg[r->eoff[m] + j] = m;
			r->elink[r->eoff[m] + j] = c->hops[c->msg[m].hop + j];
		}
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

/* Packet mode's work is a packet per link crossed, except for a lone message
 * of one hop, computed in closed form (run_alone). Before messages run, their
 * work is added up; past MAX_PACKET_HOPS the run stops and sim_run refuses it,
 * so no input (a huge size, a huge fraction in a .sim file) keeps packet mode
 * busy for hours. `loop`: the messages go to the event loop, where one-hop
 * messages cost their packets too. */
static double
packet_work(const SimRun *r, const SimColl *c, bool loop)
{
	int64_t mtu = r->net->mtu > 0 ? r->net->mtu : 1;
	double work = 0;
	for (int m = 0; m < c->nmsg; m++) {
		int nhop = c->msg[m].nhop;
		double np = (double)((sim_msg_bytes(&c->msg[m], r->bytes) + mtu - 1) / mtu);
		work += nhop > 1 || loop ? (np > 1 ? np : 1) * (nhop > 1 ? nhop : 1) : 1;
	}
	return work;
}

static bool
packet_budget(SimRun *r, double work)
{
	r->packet_hops += work;
	r->over_budget = r->packet_hops > (double)MAX_PACKET_HOPS;
	return !r->over_budget;
}

/* Rounds mode: the least work of the whole run, every message counted as
 * if alone (what the closed forms cost; the event loop costs more), so a
 * run past the budget is refused before its first round. A stream gives
 * its messages by class (SimShape). */
static double
least_packet_work(const SimRun *r)
{
	const SimColl *c = r->c;
	if (!c->stream)
		return packet_work(r, c, false);
	int64_t mtu = r->net->mtu > 0 ? r->net->mtu : 1;
	double work = 0;
	for (int i = 0; i < c->stream->nshape; i++) {
		const SimShape *k = &c->stream->shape[i];
		SimMsg m = {.num = k->num, .den = k->den};
		double np = (double)((sim_msg_bytes(&m, r->bytes) + mtu - 1) / mtu);
		work += k->single + (np > 1 ? np : 1) * k->hops;
	}
	return work;
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
		round_view(r, whole, round, &m, &view);
		r->c = &view;
		bool lone = false;
		r->latest_ps = start;
		double lone_work = packet_work(r, &view, false);
		if (packet_budget(r, lone_work))
			run_lone_round(r, 0, start, round + 1, &lone);
		if (!lone) {
			/* the event loop's work in place of the closed forms' */
			r->packet_hops -= lone_work;
			if (r->over_budget || !packet_budget(r, packet_work(r, &view, true))) {
				r->c = whole;
				break;
			}
			r->latest_ps = start;
			prepare_events(r);
			for (int i = 0; i < view.nmsg; i++)
				inject(r, i, start);
			drain(r);
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
	r->head = xcalloc((size_t)n->nlink, sizeof *r->head);
	r->tail = xcalloc((size_t)n->nlink, sizeof *r->tail);
	r->cur = xcalloc((size_t)n->nlink, sizeof *r->cur);
	r->busy = xcalloc((size_t)n->nlink, sizeof *r->busy);
	r->full_ser = xcalloc((size_t)n->nlink, sizeof *r->full_ser);
	r->hop_ps = xcalloc((size_t)n->nlink, sizeof *r->hop_ps);
	r->busy_ps = xcalloc((size_t)n->nlink, sizeof *r->busy_ps);
	r->red_free = xcalloc((size_t)n->nnode, sizeof *r->red_free);
	r->done_ps_link = xcalloc((size_t)n->nlink, sizeof *r->done_ps_link);
	for (int l = 0; l < n->nlink; l++) {
		r->head[l] = -1;
		r->full_ser[l] = sim_ser_ps(n->mtu, n->link[l].bw);
		r->hop_ps[l] = n->link[l].lat_ps + n->router_ps;
	}
	int64_t end = 0;
	r->stamp = xcalloc((size_t)n->nlink, sizeof *r->stamp);
	r->saved_busy_ps = xcalloc((size_t)n->nlink, sizeof *r->saved_busy_ps);
	r->saved_bytes = xcalloc((size_t)n->nlink, sizeof *r->saved_bytes);
	if (r->o->sync == SIM_ROUNDS) {
		double least = least_packet_work(r);
		if (least > (double)MAX_PACKET_HOPS)
			r->packet_hops = least, r->over_budget = true;
		else
			end = packet_rounds(r);
	} else if (packet_budget(r, packet_work(r, c, true))) {
		prepare_events(r);
		r->ready_ps = xcalloc((size_t)c->nmsg, sizeof *r->ready_ps);
		r->round_end_ps = xcalloc((size_t)c->nround + 1, sizeof *r->round_end_ps);
		for (int lo = 0; lo < c->nmsg; lo = r->epoch_hi) {
			r->epoch_hi = epoch_end(r, lo);
			int64_t t0 = r->latest_ps + epoch_stall(r, lo);
			for (int m = lo; m < r->epoch_hi; m++)
				if (r->waiting[m] == 0)
					heap_push(&r->h, (r->ready_ps[m] > t0 ? r->ready_ps[m] : t0) + n->step_ps,
					          EV_INJECT, m);
			drain(r);
		}
		end = r->latest_ps;
		for (int round = 0; round < c->nround; round++)
			r->res->round_end[round] = (double)r->round_end_ps[round] * 1e-12;
		free(r->ready_ps), free(r->round_end_ps);
	}
	r->res->time_ps = end;
	r->res->time_s = (double)end * 1e-12;
	for (int l = 0; l < n->nlink; l++)
		r->res->link_busy[l] = (double)r->busy_ps[l] * 1e-12;
	free_events(r);
	free(r->head), free(r->tail), free(r->cur), free(r->busy), free(r->full_ser);
	free(r->hop_ps), free(r->busy_ps), free(r->red_free), free(r->h.v);
	free(r->done_ps_link), free(r->stamp), free(r->saved_busy_ps), free(r->saved_bytes);
}

/* ---- flow mode ---- */

typedef struct FHeap {
	double *t;
	int *id;
	size_t n, cap;
} FHeap;

static void
fheap_push(FHeap *h, double t, int id)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 1024;
		h->t = xrealloc(h->t, h->cap * sizeof *h->t);
		h->id = xrealloc(h->id, h->cap * sizeof *h->id);
	}
	size_t i = h->n++;
	/* ties by id keep the order deterministic */
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (h->t[p] < t || (h->t[p] == t && h->id[p] < id))
			break;
		h->t[i] = h->t[p], h->id[i] = h->id[p];
		i = p;
	}
	h->t[i] = t, h->id[i] = id;
}

static int
fheap_pop(FHeap *h, double *t)
{
	int top = h->id[0];
	*t = h->t[0];
	double lt = h->t[--h->n];
	int lid = h->id[h->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && (h->t[c + 1] < h->t[c] || (h->t[c + 1] == h->t[c] &&
		                                                h->id[c + 1] < h->id[c])))
			c++;
		if (lt < h->t[c] || (lt == h->t[c] && lid < h->id[c]))
			break;
		h->t[i] = h->t[c], h->id[i] = h->id[c];
		i = c;
	}
	if (h->n)
		h->t[i] = lt, h->id[i] = lid;
	return top;
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
		bool start = f->starts.n > 0 && f->starts.t[0] < t + dt;
		if (start)
			dt = f->starts.t[0] - t;
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
		while (f->starts.n > 0 && f->starts.t[0] <= t) {
			double ts;
			int m = fheap_pop(&f->starts, &ts);
			start_flow(r, f, m, t);
			dirty = true;
		}
	}
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
	double step = (double)n->step_ps * 1e-12, end = 0;
	if (r->o->sync == SIM_ROUNDS) {
		SimColl view;
		for (int m = 0, round = 0; round < c->nround; round++) {
			double start = end + (double)stall_ps(r, round) * 1e-12 + step;
			r->res->round_end[round] = start;
			round_view(r, c, round, &m, &view);
			r->c = &view;
			for (int i = 0; i < view.nmsg; i++)
				start_flow(r, &f, i, start);
			flow_loop(r, &f, start);
			r->c = c;
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
	r->res->time_s = end;
	r->res->time_ps = (int64_t)llround(end * 1e12);
	for (int l = 0; l < n->nlink; l++)
		r->res->link_busy[l] = (double)r->link_bytes[l] * 8 / (double)n->link[l].bw;
	free(f.act), free(f.rem), free(f.rate), free(f.size), free(f.frozen), free(f.cap), free(f.cnt);
	free(f.used), free(f.in_used), free(f.lat_s), free(f.starts.t), free(f.starts.id);
	free(r->done_s), free(r->red_free_s);
}

/* Deps mode: a sender posts its messages on a link's queue in issue order
 * (message order: by round, then as built) and the link serves that queue
 * first in, first out; each message waits for the one before it. Each
 * instance (an independent pipeline, SimMsg.instance) has its own queue on
 * a link, so one instance's messages never wait behind another's. Different
 * queues (senders, links, instances) still share fairly. */
static void
issue_queues(SimRun *r)
{
	const SimColl *c = r->c;
	int ninst = 1;
	for (int m = 0; m < c->nmsg; m++)
		if (c->msg[m].instance >= ninst)
			ninst = c->msg[m].instance + 1;
	size_t nq = (size_t)r->net->nlink * (size_t)ninst;
	int *last = xmalloc((nq + 1) * sizeof *last);
	for (size_t q = 0; q < nq; q++)
		last[q] = -1;
	r->qnext = xmalloc((size_t)c->nmsg * sizeof *r->qnext + 1);
	r->qfree_ps = xcalloc((size_t)c->nmsg + 1, sizeof *r->qfree_ps);
	r->qfree_s = xcalloc((size_t)c->nmsg + 1, sizeof *r->qfree_s);
	for (int m = 0; m < c->nmsg; m++) {
		r->qnext[m] = -1;
		if (c->msg[m].nhop == 0)
			continue;
		size_t q = (size_t)c->hops[c->msg[m].hop] * (size_t)ninst + (size_t)c->msg[m].instance;
		if (last[q] >= 0) {
			r->qnext[last[q]] = m;
			r->waiting[m]++;
		}
		last[q] = m;
	}
	free(last);
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
	res->packet_hops = r.packet_hops;
	if (r.over_budget) {
		snprintf(err, errlen, "'%s' at %lld bytes crosses links with at least %.3g packets; "
		         "packet mode simulates at most %.3g (simulate it in flow mode)", c->name,
		         (long long)bytes, r.packet_hops, (double)MAX_PACKET_HOPS);
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
