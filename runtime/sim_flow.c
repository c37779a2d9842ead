/*
 * sim_flow.c: flow mode (docs/sim.md 2.2): messages as fluids.
 *
 * Needs: a SimRun from sim_run (sim_engine.c). Establishes: the result's
 * time in double seconds, each round's end and each link's bytes and busy
 * time. Messages share links max-min fairly (progressive filling), rates
 * recomputed whenever a flow starts or drains; a message arrives its path
 * latency after its last byte left. Why a file of its own: nothing of
 * packet mode's state is used, only the rounds, epochs and queues every
 * engine shares.
 */
#include <math.h>
#include <stdlib.h>

#include "heap.h"
#include "sim_engine.h"

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
	double t = r->ready_s[d] + (double)(r->net->step_ps + sim_wait_ps(r, d)) * 1e-12;
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
		sim_progress(r, (double)r->ncompleted / r->c->nmsg);
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
	for (int j = 0; j < msg->nhop; j++) /* a fused message's middle links: side by side */
		s += msg->fused && j > 0 && j + 1 < msg->nhop ? 0 : f->lat_s[r->c->hops[msg->hop + j]];
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

/* The flow engine's run: round by round or by dependencies, an epoch at a
 * time; link busy times from the bytes each link carried. */
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
			sim_progress(r, (double)(round + 1) / c->nround);
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
					fheap_push(&f.starts, (r->ready_s[m] > t0 ? r->ready_s[m] : t0) + step +
					           (double)sim_wait_ps(r, m) * 1e-12, m);
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

const SimEngine sim_flow = {"flow", 0, run_flows};
