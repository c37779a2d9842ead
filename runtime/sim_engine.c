/*
 * sim_engine.c: the simulator's entry (sim_run) and what its engines share
 * (docs/sim.md has the model exactly; sim_engine.h lists the files).
 *
 * Needs: a SimNet and a collective of it (runtime/sim.h: plain data, read
 * by sim_text.c or built by backends/to_sim.c), a size and the options.
 * Establishes: the run refused with a reason before it starts when it
 * could pass the simulated time limit or its options do not apply, else
 * run by the engine its mode selects and its result completed (link
 * bytes, energy, goodput against the bound, reconfigurations), or refused
 * after it when an engine stopped (packet mode's work budget or memory).
 *
 * Every engine shares: round by round, each round runs as a collective of
 * its own (round_view): a slice of the message list, or a streamed
 * collective's round made when asked, so per-message state is one round's
 * and a stream never holds more; by dependencies, the rounds up to a
 * reconfiguration or barrier run as an epoch (epoch_end), each message
 * waiting for its dependencies and its queue (issue_queues).
 *
 * How an engine plugs in (the MSCCL executor model is to be the next): a
 * file defining a `const SimEngine` (sim_engine.h: its name, its loop cost
 * if it counts packet mode's work, and run()), declared in sim_engine.h; a
 * SimMode value in sim.h for the command line to name; and a case in
 * engine_of below, the one place a mode (and packet mode's switching)
 * selects an engine (the switch has no default, so the compiler names a
 * mode left without one). run() gets the
 * SimRun sim_run set up (the net, the collective, the options, the size,
 * the result's arrays; by dependencies each message's waiting count, its
 * dependants and its issue queue) and must fill the result's time_ps,
 * time_s, round_end[] and link_busy[], and r->link_bytes[]; it may use
 * the rounds' views, stalls and epochs here, the symmetric path
 * (sim_symmetric.c) and the event queue (sim_events.c).
 */
#include <stdlib.h>
#include <string.h>

#include "sim_engine.h"

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

/* ---- rounds, stalls, barriers, epochs ---- */

/* The stall before a round: the reconfiguration delay if the circuits are
 * rewired before it. */
int64_t
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
int
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
int64_t
epoch_stall(const SimRun *r, int lo)
{
	return stall_between(r, lo > 0 ? r->c->msg[lo - 1].round : -1, r->c->msg[lo].round);
}

/* Tells the caller how far the run is (0..1), if it asked. */
void
sim_progress(SimRun *r, double done)
{
	if (r->o->progress)
		r->o->progress(r->o->progress_ctx, done);
}

/* Round `round` of the whole collective as a collective of its own, for
 * rounds mode: the stream's round, or the whole list's slice from message
 * *next (advanced past it). Its bytes are added for the router energy. */
void
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
int
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

/* ---- dependencies, energy, the time bound, the entry ---- */

/* Deps mode: a sender posts its messages on a link's queue in issue order
 * (message order: by round, then as built) and the link serves that queue
 * first in, first out; each message waits for the one before it. Each
 * instance (an independent pipeline, SimMsg.instance) has its own queue on
 * a link, so one instance's messages never wait behind another's. Different
 * queues (senders, links, instances) still share fairly. The Chakra backend
 * writes the same order as control dependencies, so both use this. */
/* A message's queue: its first link, its receiver (SIM_QUEUE_PEER) and its
 * instance, or the instance alone (SIM_QUEUE_INSTANCE). */
typedef struct QKey {
	int link, dst, instance, m;
} QKey;

static int
qkey_cmp(const void *pa, const void *pb)
{
	const QKey *a = pa, *b = pb;
	if (a->link != b->link)
		return (a->link > b->link) - (a->link < b->link);
	if (a->dst != b->dst)
		return (a->dst > b->dst) - (a->dst < b->dst);
	if (a->instance != b->instance)
		return (a->instance > b->instance) - (a->instance < b->instance);
	return (a->m > b->m) - (a->m < b->m);
}

void
sim_queue_prev(const SimColl *c, int nlink, int *prev)
{
	(void)nlink;
	QKey *k = xmalloc(((size_t)c->nmsg + 1) * sizeof *k);
	int n = 0;
	for (int m = 0; m < c->nmsg; m++) {
		const SimMsg *x = &c->msg[m];
		prev[m] = -1;
		if (c->queue == SIM_QUEUE_INSTANCE)
			k[n++] = (QKey){-1, -1, x->instance, m};
		else if (x->nhop > 0)
			k[n++] = (QKey){c->hops[x->hop], c->queue == SIM_QUEUE_PEER ? x->dst : -1,
			                x->instance, m};
	}
	sort_n(k, (size_t)n, sizeof *k, qkey_cmp);
	for (int i = 1; i < n; i++)
		if (k[i].link == k[i - 1].link && k[i].dst == k[i - 1].dst &&
		    k[i].instance == k[i - 1].instance)
			prev[k[i].m] = k[i - 1].m;
	free(k);
}

static void
issue_queues(SimRun *r)
{
	const SimColl *c = r->c;
	r->qnext = xmalloc((size_t)c->nmsg * sizeof *r->qnext + 1);
	r->qfree_ps = xcalloc((size_t)c->nmsg + 1, sizeof *r->qfree_ps);
	r->qfree_s = xcalloc((size_t)c->nmsg + 1, sizeof *r->qfree_s);
	for (int m = 0; m < c->nmsg; m++)
		r->qnext[m] = -1;
	int *prev = xmalloc((size_t)c->nmsg * sizeof *prev + 1);
	sim_queue_prev(c, r->net->nlink, prev);
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

/* The engine of a run: the one place a mode, and packet mode's switching,
 * selects one. */
static const SimEngine *
engine_of(const SimNet *n, const SimOpts *o)
{
	switch (o->mode) {
	case SIM_PACKET:
		return n->switching == SIM_CUT_THROUGH ? &sim_cut_through : &sim_store_and_forward;
	case SIM_FLOW:
		return &sim_flow;
	}
	die("sim: no engine for mode %d", (int)o->mode);
}

/* Why collective c at `bytes` cannot run with options o, said in err: -1;
 * else 0. */
static int
refused(const SimNet *n, const SimColl *c, int64_t bytes, const SimOpts *o, char *err,
        size_t errlen)
{
	/* the plain-data boundary checks what every reader already refuses (a
	 * size wrapped negative); a large one is the time bound's below */
	if (bytes <= 0) {
		snprintf(err, errlen, "'%s': %lld bytes is not a size collc simulates", c->name,
		         (long long)bytes);
		return -1;
	}
	double bound = time_bound_s(n, c, bytes, o);
	if (!(bound <= MAX_SIM_SECONDS)) {
		snprintf(err, errlen, "'%s' at %lld bytes could take up to %.3g s of simulated time; "
		         "collc simulates at most %.3g s (53 days: times are 64-bit picoseconds)",
		         c->name, (long long)bytes, bound, MAX_SIM_SECONDS);
		return -1;
	}
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
	return 0;
}

/* Deps mode: each message's count of what it waits for, its dependants
 * (rdep_off, rdep), its issue queue, and every message's bytes (the router
 * energy; rounds mode sums them round by round). */
static void
deps_init(SimRun *r)
{
	const SimColl *c = r->c;
	r->waiting = xcalloc((size_t)c->nmsg, sizeof *r->waiting);
	r->rdep_off = xcalloc((size_t)c->nmsg + 1, sizeof *r->rdep_off);
	int total = 0;
	for (int m = 0; m < c->nmsg; m++) {
		r->waiting[m] = c->msg[m].ndep;
		for (int i = 0; i < c->msg[m].ndep; i++)
			r->rdep_off[c->deps[c->msg[m].dep + i] + 1]++;
		total += c->msg[m].ndep;
	}
	for (int m = 0; m < c->nmsg; m++)
		r->rdep_off[m + 1] += r->rdep_off[m];
	r->rdep = xcalloc((size_t)total, sizeof *r->rdep);
	int *fill = xcalloc((size_t)c->nmsg, sizeof *fill);
	for (int m = 0; m < c->nmsg; m++)
		for (int i = 0; i < c->msg[m].ndep; i++) {
			int d = c->deps[c->msg[m].dep + i];
			r->rdep[r->rdep_off[d] + fill[d]++] = m;
		}
	free(fill);
	issue_queues(r);
	if (r->net->router_energy_per_bit > 0)
		for (int m = 0; m < c->nmsg; m++)
			r->msg_bytes += (double)sim_msg_bytes(&c->msg[m], r->bytes);
}

/* Why an engine stopped, said in err: -1; else 0. */
static int
stopped(const SimRun *r, char *err, size_t errlen)
{
	const char *name = r->c->name;
	long long bytes = (long long)r->bytes;
	if (r->over_budget) {
		snprintf(err, errlen, "'%s' at %lld bytes crosses links with at least %.3g packets in "
		         "the event loop and %.3g in closed form; packet mode (%s) simulates at most "
		         "%.3g and %.3g, or a mix (%d s of CPU; try flow mode)", name, bytes,
		         r->work.loop, r->work.closed, r->engine->name,
		         (double)MAX_LOOP_PACKET_HOPS / r->engine->loop_cost,
		         (double)MAX_PACKET_HOPS, PACKET_BUDGET_SECONDS);
		return -1;
	}
	if (r->stuck) { /* cannot happen (docs/sim.md 2.1); said rather than a wrong time */
		snprintf(err, errlen, "'%s' at %lld bytes: internal error: cut-through's buffers "
		         "deadlocked", name, bytes);
		return -1;
	}
	if (r->over_memory) {
		snprintf(err, errlen, "'%s' at %lld bytes has more than %d (message, hop) pairs with "
		         "packets at once in the event loop; packet mode holds at most that many (%.0f "
		         "MiB; try flow mode)", name, bytes, MAX_LOOP_LIVE_HOPS,
		         (double)MAX_LOOP_LIVE_HOPS * sizeof(Hop) / (1 << 20));
		return -1;
	}
	return 0;
}

int
sim_run(Arena *a, const SimNet *n, int ci, int64_t bytes, const SimOpts *o, SimResult *res,
        char *err, size_t errlen)
{
	const SimColl *c = &n->coll[ci];
	if (refused(n, c, bytes, o, err, errlen))
		return -1;
	memset(res, 0, sizeof *res);
	res->nround = c->nround;
	res->round_end = arena_array(a, (size_t)c->nround + 1, sizeof *res->round_end);
	res->nlink = n->nlink;
	res->link_bytes = arena_array(a, (size_t)n->nlink + 1, sizeof *res->link_bytes);
	res->link_busy = arena_array(a, (size_t)n->nlink + 1, sizeof *res->link_busy);
	SimRun r = {.net = n, .c = c, .o = o, .engine = engine_of(n, o), .bytes = bytes,
	            .res = res};
	r.link_bytes = xcalloc((size_t)n->nlink + 1, sizeof *r.link_bytes);
	if (o->sync == SIM_DEPS)
		deps_init(&r);
	r.engine->run(&r);
	for (int l = 0; l < n->nlink; l++)
		res->link_bytes[l] = (double)r.link_bytes[l];
	sim_energy(n, r.msg_bytes, res);
	free(r.link_bytes), free(r.waiting), free(r.rdep_off), free(r.rdep);
	free(r.qnext), free(r.qfree_ps), free(r.qfree_s);
	res->packet_hops = r.work.closed + r.work.loop;
	res->loop_hops = r.work.loop;
	if (stopped(&r, err, errlen))
		return -1;
	double p = c->nrank;
	res->goodput_bps = res->time_s > 0 ? (double)bytes * 8 * (p - 1) / (p * res->time_s) : 0;
	res->bound_bps = sim_injection_bw(n, ci) / 2;
	res->bound_ratio = res->bound_bps > 0 ? res->goodput_bps / res->bound_bps : 0;
	for (int round = 0; round < c->nround; round++)
		res->nreconfig += stall_ps(&r, round) > 0;
	res->reconfig_s = (double)res->nreconfig * (double)n->reconfig_ps * 1e-12;
	return 0;
}
