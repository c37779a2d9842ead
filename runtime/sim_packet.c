/*
 * sim_packet.c: packet mode (docs/sim.md 2.1), store-and-forward, and the
 * packet machinery cut-through shares (sim_cut_through.c adds its buffers).
 *
 * Needs: a SimRun from sim_run (sim_engine.c). Establishes: the result's
 * time in exact integer picoseconds, each round's end and each link's busy
 * time and bytes, or the run stopped past the work budget (sim_work.c) or
 * the live hops' memory.
 *
 * A message of M bytes is cut into ceil(M / mtu) packets that move along
 * its route. A link sends one packet at a time; the messages with a packet
 * waiting at a link take turns, one packet per turn (round-robin,
 * newcomers at the end of the rotation), so no message can hold a link
 * while another waits. Store-and-forward: a packet that leaves link l at t
 * is ready at the next link at t + latency(l) + router latency. Events at
 * equal times run arrivals before link completions, then in the order they
 * were made (sim_events.c), so runs are deterministic. A round whose
 * messages share no link runs without events (run_lone_round). Why one
 * file for both switchings' loop: the rotation, the live hops and the
 * rounds are one machine; cut-through changes only how a link chooses and
 * finishes a packet and a lone message's recurrence.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_engine.h"

/* Hop h's link; its window holds the block of the route it is in. */
static inline int
hop_link(const Hop *h)
{
	return h->win[h->j % HOP_WINDOW];
}

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

/* A new live hop j of message m's route, ahead of hop `behind` (or -1): its
 * first packet is packet `next`. The pool may move. */
int
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

/* Frees live hop e, unlinked from its message's list. */
void
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

/* Message d lost one reason to wait; when none is left it starts after the
 * step overhead, and not before its queue's previous message has left. */
static void
waited_ps(SimRun *r, int d)
{
	if (--r->waiting[d] > 0 || d >= r->epoch_hi) /* a later epoch's starts with it */
		return;
	int64_t t = r->ready_ps[d] + r->net->step_ps + sim_wait_ps(r, d);
	if (r->qfree_ps[d] > t)
		t = r->qfree_ps[d];
	ev_push(&r->q, t, EV_INJECT, d);
}

/* Message m's last byte left its first link at t: the next message posted
 * on that link (the sender's queue, in issue order) may go. */
void
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
		sim_progress(r, (double)r->ncompleted / r->c->nmsg);
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
	int64_t arrive = t + hop_delay(r, &r->c->msg[m], h->j, l);
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
			arrive = leave + (msg->fused ? hop_delay(r, msg, j, l) : hop_ps[l]);
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
			sim_progress(r, (double)(round + 1) / whole->nround);
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
		sim_progress(r, (double)(round + 1) / whole->nround);
	}
	return end;
}

/* By dependencies: the whole list in the event loop, an epoch at a time,
 * each message injected when what it waits for has arrived. */
static int64_t
packet_deps(SimRun *r)
{
	const SimColl *c = r->c;
	r->ready_ps = xcalloc((size_t)c->nmsg, sizeof *r->ready_ps);
	r->round_end_ps = xcalloc((size_t)c->nround + 1, sizeof *r->round_end_ps);
	for (int lo = 0; lo < c->nmsg && !r->over_memory; lo = r->epoch_hi) {
		r->epoch_hi = epoch_end(r, lo);
		int64_t t0 = r->latest_ps + epoch_stall(r, lo);
		for (int m = lo; m < r->epoch_hi; m++)
			if (r->waiting[m] == 0)
				ev_push(&r->q, (r->ready_ps[m] > t0 ? r->ready_ps[m] : t0) + r->net->step_ps +
				          sim_wait_ps(r, m), EV_INJECT, m);
		drain(r);
	}
	for (int round = 0; round < c->nround; round++)
		r->res->round_end[round] = (double)r->round_end_ps[round] * 1e-12;
	free(r->ready_ps), free(r->round_end_ps);
	return r->latest_ps;
}

/* The packet engine's run, store-and-forward or (r->vct) cut-through: the
 * links' state, then round by round or by dependencies, then the result. */
void
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
	for (int l = 0; l < n->nlink; l++) {
		r->head[l] = -1;
		r->full_ser[l] = sim_ser_ps(n->mtu, n->link[l].bw);
		r->hop_ps[l] = n->link[l].lat_ps + n->router_ps;
	}
	if (r->vct)
		vct_init(r);
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
		end = packet_deps(r);
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
	if (r->vct)
		vct_free(r);
	sym_free(r);
}

const SimEngine sim_store_and_forward = {"store-and-forward", 1, run_packets};
