/*
 * to_sim_rank.c: the rank form of a symmetric schedule (Sched.xor_routes:
 * halving_doubling, recursive_halving and recursive_doubling on 2^L
 * ranks) as the simulator's stream, round by round.
 * Copy m of base transfer x leaves rank src ^ m for dst ^ m, so the copies
 * leaving rank v in a round are those leaving rank 0 with their
 * destinations XOR v: each round keeps rank 0's (destination, operation)
 * pairs with their chunk counts, and the simulator's request for a round
 * makes every rank's messages then, each routed as the explicit schedule's
 * message is (route_uncached: nothing is cached) and checked to join its
 * ends (the proof holds no routes). The topology's distances
 * are closed forms (xor_rank_form_applies), which size a round's hops
 * without routing it.
 * A round's routes overlap: on a ring, rank v + 1's route at distance d is
 * rank v's moved on by one link. So the round's hops are a pool in which
 * each route is a window (SimMsg.hop, .nhop; windows may overlap): a route
 * already in the pool is reused, one that runs on past its end or starts
 * before its start adds only the links it lacks, else it is added whole at
 * the end. Routes come in rank order (every round of these algorithms has
 * one destination per rank, so consecutive routes are the ones that
 * overlap); a route added whole moves to the start when the next one runs
 * on before it (rank v + 1's route going down is rank v's with one link
 * more in front). Halving-doubling's far round on ring(16384), 16384
 * routes of 8192 links, is 49148 links in the pool instead of 1.3e8, and
 * no round holds more. Memory is the base transfers, one round's messages
 * and the pool.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "to_sim.h"

/* A round's hops: links buf[org + lo .. org + hi), positions relative to
 * org. Routes are added at either end, so org starts in the middle of room
 * for the largest round's hops on each side (malloc'd and not cleared: only
 * what the pool uses becomes resident). */
typedef struct HopPool {
	int *buf;
	long org, lo, hi;
	long *pos;         /* per link: a position holding it, if seen[l] == call */
	int *seen;
	int call;          /* rounds made so far */
	int *last_hop;     /* the window of the route placed last, when it was added
	                      whole at the end (else NULL): it may move to the start */
	int last_len;
} HopPool;

typedef struct RankStream {
	SimStream pub;
	const Sched *s;
	RankKey *key;      /* rank_form_keys: rank 0's messages, by round */
	int *first;
	SimMsg *msg;       /* the largest round's room */
	HopPool pool;
	long caphops;      /* the largest round's hops (shortest routes) */
	int64_t *order;    /* (receiver, key) of one rank's messages */
} RankStream;

static void
pool_write(HopPool *p, long at, int link)
{
	p->buf[p->org + at] = link;
	p->pos[link] = at;
	p->seen[link] = p->call;
}

/* Where link l is in the pool, or LONG_MIN. */
static long
pool_find(const HopPool *p, int l)
{
	return p->seen[l] == p->call ? p->pos[l] : LONG_MIN;
}

/* Links links[0 .. len) from the end of the pool backwards: how many match
 * the pool ending at position at. */
static long
match_back(const HopPool *p, long at, const int *links, int len)
{
	const int *b = p->buf + p->org;
	long j = 0;
	while (j < len && at - j >= p->lo && b[at - j] == links[len - 1 - j])
		j++;
	return j;
}

/* Moves the route placed last, added whole at the end, to the start, where
 * the route after it can run on before it (a ring's routes going down). */
static void
move_last_to_start(HopPool *p, int *last_hop)
{
	const int *b = p->buf + p->org;
	long from = p->hi - p->last_len;
	for (long k = p->last_len - 1; k >= 0; k--)
		pool_write(p, --p->lo, b[from + k]);
	p->hi = from;
	*last_hop = (int)p->lo;
}

/* Places route links[0 .. len) in the pool, adding only what it lacks, and
 * sets *hop to its window. */
static void
pool_place(HopPool *p, const int *links, int len, int *hop)
{
	const int *b = p->buf + p->org;
	int *last = p->last_hop;
	p->last_hop = NULL;
	long at = len ? pool_find(p, links[0]) : LONG_MIN, j = 0;
	/* forwards from its first link: inside, or running on past the end */
	if (at != LONG_MIN) {
		while (j < len && at + j < p->hi && b[at + j] == links[j])
			j++;
		if (j == len || at + j == p->hi) {
			for (; j < len; j++)
				pool_write(p, p->hi++, links[j]);
			*hop = (int)at;
			return;
		}
	}
	/* backwards from its last link: inside, or running on before the start,
	 * or before the start of the route placed last if that one can move */
	at = len ? pool_find(p, links[len - 1]) : LONG_MIN;
	if (at != LONG_MIN) {
		j = match_back(p, at, links, len);
		if (j < len && last && at >= p->hi - p->last_len && at - j == p->hi - p->last_len - 1) {
			move_last_to_start(p, last);
			at = pool_find(p, links[len - 1]);
			j = match_back(p, at, links, len);
		}
		if (j == len || at - j < p->lo) {
			for (long k = len - 1 - j; k >= 0; k--)
				pool_write(p, --p->lo, links[k]);
			*hop = (int)(at - len + 1);
			return;
		}
	}
	*hop = (int)p->hi;
	for (j = 0; j < len; j++)
		pool_write(p, p->hi++, links[j]);
	p->last_hop = hop;
	p->last_len = len;
}

static int
cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	return (a > b) - (a < b);
}

/* The route links[0 .. len) leads from rank src's node to rank dst's (the
 * proof took it for granted: ir/verify.c). */
static bool
joins(const Sched *s, const int *links, int len, int src, int dst)
{
	const Link *l = s->topo->link;
	int at = s->rank_node[src];
	for (int k = 0; k < len; k++) {
		if (l[links[k]].src != at)
			return false;
		at = l[links[k]].dst;
	}
	return len > 0 && at == s->rank_node[dst];
}

static SimRound
rank_round(void *ctx, int r)
{
	RankStream *st = ctx;
	const Sched *s = st->s;
	const RankKey *key = st->key + st->first[r];
	int nkey = st->first[r + 1] - st->first[r], n = 0;
	long h = 0;
	HopPool *pool = &st->pool;
	pool->call++;
	pool->lo = pool->hi = 0;
	pool->last_hop = NULL;
	for (int v = 0; v < s->nrank; v++) {
		for (int i = 0; i < nkey; i++)
			st->order[i] = (int64_t)(v ^ key[i].dst) << 32 | i;
		sort_n(st->order, (size_t)nkey, sizeof *st->order, cmp_i64);
		for (int j = 0; j < nkey; j++) {
			const RankKey *k = &key[st->order[j] & 0xffffffff];
			int dst = v ^ k->dst;
			const int *links;
			int len = route_uncached(s->xor_routes, s->rank_node[v], s->rank_node[dst], &links);
			if (len < 0 || h + len > st->caphops || !joins(s, links, len, v, dst))
				die("rank form: the route from rank %d to rank %d does not join them or is "
				    "not a shortest one", v, dst);
			st->msg[n] = (SimMsg){.round = r, .src = v, .dst = dst, .nhop = len,
			                      .num = k->count, .den = s->nchunk,
			                      .reduce = k->op == X_REDUCE};
			pool_place(pool, links, len, &st->msg[n++].hop);
			h += len;
		}
	}
	for (int i = 0; i < n; i++) /* windows from the pool's start */
		st->msg[i].hop -= (int)pool->lo;
	return (SimRound){st->msg, n, pool->buf + pool->org + pool->lo};
}

int
rank_stream_coll(Diag *dg, Arena *a, const Sched *s, SimColl *c)
{
	RankStream *st = NEW(a, RankStream);
	*st = (RankStream){.s = s};
	int most_keys = rank_form_keys(s, &st->key, &st->first);
	arena_own(a, st->key), arena_own(a, st->first);
	/* each round's messages and hops: distances are closed forms, and every
	 * route of these topologies is a shortest one */
	long total = 0, most = 0, most_hops = 0;
	SimShape *shape = arena_array(a, (size_t)st->first[s->nround] + 1, sizeof *shape);
	for (int r = 0; r < s->nround; r++) {
		long hops = 0, nmsg = (long)(st->first[r + 1] - st->first[r]) * s->nrank;
		for (int i = st->first[r]; i < st->first[r + 1]; i++) {
			shape[i] = (SimShape){.num = st->key[i].count, .den = s->nchunk};
			for (int v = 0; v < s->nrank; v++) {
				int len = topo_distance(s->xor_routes, s->rank_node[v],
				                        s->rank_node[v ^ st->key[i].dst]);
				hops += len;
				if (len > 1)
					shape[i].hops += len;
				else
					shape[i].single++;
			}
		}
		total += nmsg;
		most = nmsg > most ? nmsg : most;
		most_hops = hops > most_hops ? hops : most_hops;
	}
	if (total > MAX_STREAM_MSGS || most_hops > MAX_STREAM_MSGS) {
		error_at(dg, s->loc, "'%s' sends %ld messages over %ld hops in a round at most; the "
		         "simulator takes at most %d", s->name, total, most_hops, MAX_STREAM_MSGS);
		return -1;
	}
	st->msg = arena_array(a, (size_t)most + 1, sizeof *st->msg);
	/* room for the largest round's hops on either side of org, untouched
	 * until used */
	st->pool.buf = arena_own(a, xmalloc(((size_t)most_hops + 1) * 2 * sizeof *st->pool.buf));
	st->pool.org = most_hops + 1;
	st->pool.pos = arena_array(a, (size_t)s->topo->nlink + 1, sizeof *st->pool.pos);
	st->pool.seen = arena_array(a, (size_t)s->topo->nlink + 1, sizeof *st->pool.seen);
	st->caphops = most_hops;
	st->order = arena_array(a, (size_t)most_keys + 1, sizeof *st->order);
	st->pub = (SimStream){.ctx = st, .round = rank_round, .max_round_msgs = (int)most,
	                      .shape = shape, .nshape = st->first[s->nround], .nmsg = total};
	c->stream = &st->pub;
	c->nmsg = 0;
	c->has_deps = false;
	return 0;
}
