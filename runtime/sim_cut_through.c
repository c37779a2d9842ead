/*
 * sim_cut_through.c: packet mode's virtual cut-through (docs/sim.md
 * 2.1.1), the default switching: finite input buffers and credits on the
 * packet machinery of sim_packet.c.
 *
 * Needs: a SimRun whose packet state run_packets set up (links' rotations,
 * serialization and hop delays, the live hops). Establishes: a packet's
 * head goes on a hop delay after it starts, unless the buffer at the far
 * end of its link is full; a buffer per link and route hop index (a
 * virtual channel per hop, so no cycle of full buffers can form and the
 * loop cannot deadlock; a drain that ends with buffers held says so: the
 * run's `stuck`), and a lone message's closed form when no buffer can fill.
 * Why a file of its own: buffers and credits are the whole difference
 * from store-and-forward, and change with the cut-through model alone.
 */
#include <math.h>
#include <stdlib.h>

#include "sim_engine.h"

/* The event loop's cost a packet-hop against store-and-forward's (the
 * work budget, sim_work.c): cut-through's loop took 1.6 to 2.4 times
 * store-and-forward's time a packet-hop (its buffers and credits: a hash
 * probe per credit taken and given, mostly a cache miss; bench_sim
 * engines), so its limit is MAX_LOOP_PACKET_HOPS / VCT_LOOP_COST, with
 * room for the worst measured. */
enum { VCT_LOOP_COST = 3 };

/* Cut-through: when a packet that starts on link l at t may start on the
 * next link, nl: after the hop delay, and on a faster link no sooner than
 * sending it there at that link's rate ends as its tail arrives (the tail
 * cannot overtake the bytes still coming). */
static inline int64_t
vct_next_ps(SimRun *r, int64_t delay, int64_t b, int nl, int64_t t, int64_t ser)
{
	int64_t next = packet_ps(r, b, nl), wait = ser > next ? ser - next : 0;
	return t + delay + wait;
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

/* ---- the buffers in use and their credits ---- */

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
	int64_t at = vct_next_ps(r, hop_delay(r, &r->c->msg[m], j, l), b, nl, t, ser);
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
void
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
void
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
int64_t
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
				arrive = vct_next_ps(r, hop_delay(r, msg, j, l), b, route[j + 1], start, ser);
		}
	}
	return done[route[nhop - 1]] + r->hop_ps[route[nhop - 1]];
}

/* The buffers' sizes and the per-link record of what a link sends, once
 * the links' serialization and hop delays are known (run_packets). */
void
vct_init(SimRun *r)
{
	r->cur_j = xcalloc((size_t)r->net->nlink, sizeof *r->cur_j);
	r->nbuf = buffer_sizes(r->net, r->full_ser, r->hop_ps);
}

void
vct_free(SimRun *r)
{
	free(r->cur_j), free(r->cred.slot), free(r->nbuf);
}

/* Cut-through is the packet engine with buffers. */
static void
run_cut_through(SimRun *r)
{
	r->vct = true;
	run_packets(r);
}

const SimEngine sim_cut_through = {"cut-through", VCT_LOOP_COST, run_cut_through};
