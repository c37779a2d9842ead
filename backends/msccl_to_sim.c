/*
 * msccl_to_sim.c: an MSCCL program on a topology as the simulator's input
 * (msccl_to_sim.h).
 *
 * Needs: a program that passed msccl_read (rules 2-13 and 16: one sending
 * and one receiving tb per connection and channel, dependencies inside the
 * rank, steps in order). Establishes: one SimMsg per sending step, from
 * its rank to its tb's send peer, cnt/nchunksperloop of the vector, routed
 * as a .coll collective's messages are by default (ROUTE_FASTEST: the
 * widest path, then the fewest hops); `reduce` where the receiving step
 * reduces (rrs, rrc, rrcs); dependencies = every message received by the
 * sender before the sending step in program order (`done` sets below);
 * rounds = the longest dependency chain, messages sorted by round.
 *
 * A send matches a receive by connection order: the k-th sending step of
 * rank g's tb that sends to h on channel c is the k-th receiving step of
 * h's tb that receives from g on c (the executor's FIFO order).
 *
 * The shared chunk-layout pass (ir/layout.c) is not used here, on purpose:
 * a foreign program has no chunk sets to order, its buffers and offsets
 * are already fixed, and the executor's own step order is its semantics,
 * so the dependencies come from that order, not from msg_deps.
 */
#include <stdlib.h>
#include <string.h>

#include "to_sim.h"
#include "msccl_to_sim.h"

/* A step of the program, flattened: rank, tb index, step index. */
typedef struct StepRef {
	int rank, tb, step;
} StepRef;

typedef struct Conv {
	const MProg *p;
	int nmsg;
	int *msg_of;      /* per flat step: the message it sends, or -1 */
	int *recv_of;     /* per flat step: the message it receives, or -1 */
	int *base;        /* per rank, tb: first flat step index (rank-major) */
	int *tb_base;     /* per rank: first index into base */
	StepRef *ref;     /* per message: its sending step */
	int nstep;
	/* done sets: per flat step, a bitset over the messages its rank receives */
	int *rlocal;      /* per message: its index among its receiver's receipts */
	MType *recv_type; /* per message: the step type that receives it */
	int *nrecv;       /* per rank */
	uint64_t **done;  /* per flat step (NULL until computed) */
	char *state;      /* per flat step: 0 new, 1 computing, 2 done */
} Conv;

static int
flat(const Conv *c, int rank, int tb, int step)
{
	return c->base[c->tb_base[rank] + tb] + step;
}

static bool
receives(MType t)
{
	return mtype_recvs(t);
}

/* Numbers the sending steps and pairs the receiving ones. */
static int
pair_messages(Diag *dg, Conv *c, Arena *a)
{
	const MProg *p = c->p;
	int ntb = 0;
	for (int g = 0; g < p->ngpus; g++)
		ntb += p->gpu[g].ntb;
	c->tb_base = arena_array(a, (size_t)p->ngpus + 1, sizeof *c->tb_base);
	c->base = arena_array(a, (size_t)ntb + 1, sizeof *c->base);
	int k = 0;
	c->nstep = 0;
	for (int g = 0; g < p->ngpus; g++) {
		c->tb_base[g] = k;
		for (int t = 0; t < p->gpu[g].ntb; t++, k++) {
			c->base[k] = c->nstep;
			c->nstep += p->gpu[g].tb[t].nstep;
		}
	}
	c->msg_of = arena_array(a, (size_t)c->nstep + 1, sizeof *c->msg_of);
	c->recv_of = arena_array(a, (size_t)c->nstep + 1, sizeof *c->recv_of);
	for (int i = 0; i < c->nstep; i++)
		c->msg_of[i] = c->recv_of[i] = -1;
	c->nmsg = 0;
	for (int g = 0; g < p->ngpus; g++)
		for (int t = 0; t < p->gpu[g].ntb; t++)
			for (int s = 0; s < p->gpu[g].tb[t].nstep; s++)
				if (mtype_sends(p->gpu[g].tb[t].step[s].type))
					c->msg_of[flat(c, g, t, s)] = c->nmsg++;
	if (c->nmsg > SIMXML_MAX_MSGS) {
		error_at(dg, (Loc){p->line, 1}, "the program sends %d messages; the simulator takes at "
		         "most %d from one XML file", c->nmsg, SIMXML_MAX_MSGS);
		return -1;
	}
	c->ref = arena_array(a, (size_t)c->nmsg + 1, sizeof *c->ref);
	c->rlocal = arena_array(a, (size_t)c->nmsg + 1, sizeof *c->rlocal);
	c->recv_type = arena_array(a, (size_t)c->nmsg + 1, sizeof *c->recv_type);
	c->nrecv = arena_array(a, (size_t)p->ngpus + 1, sizeof *c->nrecv);
	for (int g = 0; g < p->ngpus; g++)
		for (int t = 0; t < p->gpu[g].ntb; t++) {
			const MTb *tb = &p->gpu[g].tb[t];
			for (int s = 0; s < tb->nstep; s++)
				if (c->msg_of[flat(c, g, t, s)] >= 0)
					c->ref[c->msg_of[flat(c, g, t, s)]] = (StepRef){g, t, s};
			if (tb->recv < 0)
				continue;
			/* the tb on the peer that sends here on this channel */
			const MGpu *peer = &p->gpu[tb->recv];
			int st = -1;
			for (int u = 0; u < peer->ntb && st < 0; u++)
				if (peer->tb[u].send == g && peer->tb[u].chan == tb->chan)
					st = u;
			int next = 0;
			for (int s = 0; s < tb->nstep; s++) {
				if (!receives(tb->step[s].type))
					continue;
				/* the next sending step of the peer's tb */
				while (st >= 0 && next < peer->tb[st].nstep &&
				       !mtype_sends(peer->tb[st].step[next].type))
					next++;
				if (st < 0 || next >= peer->tb[st].nstep) {
					error_at(dg, (Loc){tb->step[s].line, 1}, "this step receives from rank %d on "
					         "channel %d, which sends nothing more to rank %d there", tb->recv,
					         tb->chan, g);
					return -1;
				}
				int m = c->msg_of[flat(c, tb->recv, st, next++)];
				c->recv_of[flat(c, g, t, s)] = m;
				c->recv_type[m] = tb->step[s].type;
				c->rlocal[m] = c->nrecv[g]++;
			}
		}
	return 0;
}

/* The set of messages rank g has received when flat step i completes. */
static const uint64_t *
done_set(Diag *dg, Conv *c, Arena *a, int g, int t, int s)
{
	int i = flat(c, g, t, s);
	if (c->state[i] == 2)
		return c->done[i];
	if (c->state[i] == 1) {
		error_at(dg, (Loc){c->p->gpu[g].tb[t].step[s].line, 1}, "this step depends on itself "
		         "through depid/deps: the program cannot run");
		return NULL;
	}
	c->state[i] = 1;
	size_t words = ((size_t)c->nrecv[g] + 63) / 64 + 1;
	uint64_t *d = arena_array(a, words, sizeof *d);
	const MStep *st = &c->p->gpu[g].tb[t].step[s];
	if (s > 0) {
		const uint64_t *prev = done_set(dg, c, a, g, t, s - 1);
		if (!prev)
			return NULL;
		for (size_t w = 0; w < words; w++)
			d[w] |= prev[w];
	}
	if (st->depid >= 0 && st->deps >= 0) {
		const uint64_t *dep = done_set(dg, c, a, g, st->depid, st->deps);
		if (!dep)
			return NULL;
		for (size_t w = 0; w < words; w++)
			d[w] |= dep[w];
	}
	if (c->recv_of[i] >= 0) {
		int r = c->rlocal[c->recv_of[i]];
		d[r / 64] |= (uint64_t)1 << (r % 64);
	}
	c->done[i] = d;
	c->state[i] = 2;
	return d;
}

/* rounds: the longest chain of dependencies ending at each message */
static int
round_of(Diag *dg, int m, const int *ndep, int *const *dep, int *round, char *state, const MProg *p,
         const StepRef *ref)
{
	if (state[m] == 2)
		return round[m];
	if (state[m] == 1) {
		const MStep *st = &p->gpu[ref[m].rank].tb[ref[m].tb].step[ref[m].step];
		error_at(dg, (Loc){st->line, 1}, "this send waits, through other ranks, for its own "
		         "arrival: the program deadlocks");
		return -1;
	}
	state[m] = 1;
	int r = 0;
	for (int k = 0; k < ndep[m]; k++) {
		int x = round_of(dg, dep[m][k], ndep, dep, round, state, p, ref);
		if (x < 0)
			return -1;
		if (x + 1 > r)
			r = x + 1;
	}
	round[m] = r;
	state[m] = 2;
	return r;
}

typedef struct Ordered {
	int round, msg;
} Ordered;

static int
by_round(const void *pa, const void *pb)
{
	const Ordered *a = pa, *b = pb;
	if (a->round != b->round)
		return (a->round > b->round) - (a->round < b->round);
	return (a->msg > b->msg) - (a->msg < b->msg);
}

int
sim_from_msccl(Diag *dg, Arena *a, const MProg *p, const Topo *t, const int *rank_node, SimNet *out)
{
	memset(out, 0, sizeof *out);
	if (sim_net_of_topo(dg, a, t, out) != 0)
		return -1;
	Arena tmp = {0};
	Conv c = {.p = p};
	int rc = pair_messages(dg, &c, &tmp);
	if (rc == 0) {
		c.done = arena_array(&tmp, (size_t)c.nstep + 1, sizeof *c.done);
		c.state = arena_array(&tmp, (size_t)c.nstep + 1, 1);
	}
	/* per message: the messages received by its sender before it */
	int *ndep = arena_array(&tmp, (size_t)c.nmsg + 1, sizeof *ndep);
	int **dep = arena_array(&tmp, (size_t)c.nmsg + 1, sizeof *dep);
	int **received = arena_array(&tmp, (size_t)p->ngpus + 1, sizeof *received);
	for (int g = 0; rc == 0 && g < p->ngpus; g++)
		received[g] = arena_array(&tmp, (size_t)c.nrecv[g] + 1, sizeof **received);
	/* each rank's receipts, by their index in the done sets */
	for (int g = 0; rc == 0 && g < p->ngpus; g++)
		for (int tb = 0; tb < p->gpu[g].ntb; tb++)
			for (int s = 0; s < p->gpu[g].tb[tb].nstep; s++) {
				int m = c.recv_of[flat(&c, g, tb, s)];
				if (m >= 0)
					received[g][c.rlocal[m]] = m;
			}
	long total = 0;
	for (int m = 0; rc == 0 && m < c.nmsg; m++) {
		const StepRef *r = &c.ref[m];
		const uint64_t *d = done_set(dg, &c, &tmp, r->rank, r->tb, r->step);
		if (!d) {
			rc = -1;
			break;
		}
		int n = 0;
		for (int k = 0; k < c.nrecv[r->rank]; k++)
			n += (int)(d[k / 64] >> (k % 64) & 1);
		total += n;
		if (total > SIMXML_MAX_DEPS) {
			error_at(dg, (Loc){p->line, 1}, "the program's messages wait for more than %d earlier "
			         "ones in all; the simulator refuses it", SIMXML_MAX_DEPS);
			rc = -1;
			break;
		}
		dep[m] = arena_array(&tmp, (size_t)n + 1, sizeof **dep);
		for (int k = 0; k < c.nrecv[r->rank]; k++)
			if (d[k / 64] >> (k % 64) & 1)
				dep[m][ndep[m]++] = received[r->rank][k];
	}
	int *round = arena_array(&tmp, (size_t)c.nmsg + 1, sizeof *round);
	char *state = arena_array(&tmp, (size_t)c.nmsg + 1, 1);
	int nround = 0;
	for (int m = 0; rc == 0 && m < c.nmsg; m++) {
		int r = round_of(dg, m, ndep, dep, round, state, p, c.ref);
		if (r < 0)
			rc = -1;
		else if (r + 1 > nround)
			nround = r + 1;
	}
	if (rc == 0) {
		Ordered *ord = arena_array(&tmp, (size_t)c.nmsg + 1, sizeof *ord);
		int *order = arena_array(&tmp, (size_t)c.nmsg + 1, sizeof *order);
		int *pos = arena_array(&tmp, (size_t)c.nmsg + 1, sizeof *pos);
		for (int m = 0; m < c.nmsg; m++)
			ord[m] = (Ordered){round[m], m};
		qsort(ord, (size_t)c.nmsg, sizeof *ord, by_round);
		for (int k = 0; k < c.nmsg; k++) {
			order[k] = ord[k].msg;
			pos[order[k]] = k;
		}
		Routes routes;
		routes_init(&routes, t, ROUTE_FASTEST); /* a .coll collective's default */
		SimColl *sc = arena_array(a, 1, sizeof *sc);
		*sc = (SimColl){.name = p->name ? p->name : "xml", .kind = p->coll_name,
		                .algorithm = "msccl-xml", .nrank = p->ngpus, .nround = nround,
		                .nmsg = c.nmsg, .has_deps = true};
		sc->rank_node = arena_array(a, (size_t)p->ngpus, sizeof *sc->rank_node);
		memcpy(sc->rank_node, rank_node, (size_t)p->ngpus * sizeof *rank_node);
		sc->msg = arena_array(a, (size_t)c.nmsg + 1, sizeof *sc->msg);
		long nhop = 0;
		for (int k = 0; k < c.nmsg && rc == 0; k++) {
			int m = order[k];
			const StepRef *r = &c.ref[m];
			const MTb *tb = &p->gpu[r->rank].tb[r->tb];
			const int *lk; /* a widest path may be longer than the fewest hops */
			int hops = route_get(&routes, rank_node[r->rank], rank_node[tb->send], &lk);
			if (hops < 0) {
				error_at(dg, (Loc){tb->step[r->step].line, 1}, "rank %d's node cannot reach rank "
				         "%d's on %s", r->rank, tb->send, t->name);
				rc = -1;
			}
			nhop += hops;
		}
		sc->hops = arena_array(a, (size_t)nhop + 1, sizeof *sc->hops);
		sc->deps = arena_array(a, (size_t)total + 1, sizeof *sc->deps);
		long h = 0, e = 0;
		for (int k = 0; k < c.nmsg && rc == 0; k++) {
			int m = order[k];
			const StepRef *r = &c.ref[m];
			const MTb *tb = &p->gpu[r->rank].tb[r->tb];
			const MStep *st = &tb->step[r->step];
			const int *links;
			int n = route_get(&routes, rank_node[r->rank], rank_node[tb->send], &links);
			copy_n(sc->hops + h, links, (size_t)n, sizeof *links);
			MType y = c.recv_type[m];
			bool reduce = y == MT_RRS || y == MT_RRC || y == MT_RRCS;
			sc->msg[k] = (SimMsg){.round = round[m], .src = r->rank, .dst = tb->send,
			                      .nhop = n, .hop = (int)h, .ndep = ndep[m], .dep = (int)e,
			                      .reduce = reduce, .num = st->cnt, .den = p->nchunksperloop};
			h += n;
			for (int q = 0; q < ndep[m]; q++)
				sc->deps[e++] = pos[dep[m][q]];
		}
		routes_free(&routes);
		out->ncoll = 1;
		out->coll = sc;
	}
	arena_free(&tmp);
	return rc;
}
