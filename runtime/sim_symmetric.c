/*
 * sim_symmetric.c: rounds run by their representatives (docs/sim.md 6.1),
 * for every engine that runs rounds of a symmetric stream.
 *
 * Needs: rounds mode and a stream that says its rounds are symmetric
 * (SimStream.ncopy, link_orbit, round_rep). Establishes: sym_init checks
 * that the group acts freely on the links and that an orbit's links are
 * alike (rate, latency, buffer); then a round whose images share no link
 * is run on node 0's messages (sym_enter), what they added to their links
 * kept per orbit (sym_fold) and given to every link of the orbit at the
 * end (sym_unfold): the same integers as the whole round's. Why a file of
 * its own: it is the one proof by symmetry the engines share; each engine
 * runs the representatives its own way (sym_packet_round, sym_flow_round).
 */
#include <stdlib.h>

#include "sim_engine.h"

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
void
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

/* Frees what sym_init made (nothing when it made nothing). */
void
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
void
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
void
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
bool
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
