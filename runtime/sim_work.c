/*
 * sim_work.c: packet mode's work, counted before it runs (docs/limits.md).
 *
 * Needs: a packet-mode SimRun (its engine's loop cost, the size, the
 * messages or a stream's classes). Establishes: the run's work in packet-
 * hops, closed-form and event-loop, and whether it stays within the
 * budget; rounds mode's least work of the whole run before its first
 * round, so that a run past the budget is refused before it starts. Why a
 * file of its own: the budget is one estimate both switchings use, and it
 * changes with the limits, not with the models.
 */
#include <math.h>
#include <stdlib.h>

#include "sim_engine.h"

/*
 * Packet mode's work budget. The work is a packet per link crossed, except
 * for a lone message of one hop, which counts 1 (run_alone sums it); it is
 * paid in two currencies, since a packet-hop costs several times more in
 * the event loop than in the closed forms of lone messages: the budget is
 *   closed / MAX_PACKET_HOPS + loop x cost / MAX_LOOP_PACKET_HOPS <= 1,
 * each limit being what its engine does in about 15 s of CPU (docs/limits.md
 * has the measured rates), the cost the engine's (SimEngine.loop_cost:
 * cut-through's buffers make its loop dearer). Work is added up before it
 * runs; past the budget the run stops and sim_run refuses it, so no input
 * (a huge size, a huge fraction in a .sim file, a congested schedule)
 * keeps packet mode busy for minutes or holds the memory of that many
 * packets.
 */

static double
loop_cost(const SimRun *r)
{
	return r->engine->loop_cost;
}

double
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
Work
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

bool
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

Work
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
