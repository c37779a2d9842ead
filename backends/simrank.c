/*
 * simrank.c: the rank form of a symmetric schedule (Sched.xor_routes:
 * halving_doubling, recursive_halving and recursive_doubling on 2^L
 * ranks) as the simulator's stream, round by round.
 * Copy m of base transfer x leaves rank src ^ m for dst ^ m, so the copies
 * leaving rank v in a round are those leaving rank 0 with their
 * destinations XOR v: each round keeps rank 0's (destination, operation)
 * pairs with their chunk counts, and the simulator's request for a round
 * makes every rank's messages then, each routed as the explicit schedule's
 * message is (route_uncached: nothing is cached). Memory is the base
 * transfers and one round's messages and hops. The topology's distances
 * are closed forms (xor_rank_form_applies), which size a round's hops
 * without routing it.
 */
#include <stdlib.h>
#include <string.h>

#include "simbuild.h"

typedef struct RankStream {
	SimStream pub;
	const Sched *s;
	RankKey *key;      /* rank_form_keys: rank 0's messages, by round */
	int *first;
	SimMsg *msg;       /* the largest round's room */
	int *hops;
	long caphops;      /* the largest round's hops (shortest routes) */
	int64_t *order;    /* (receiver, key) of one rank's messages */
} RankStream;

static int
cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	return (a > b) - (a < b);
}

static SimRound
rank_round(void *ctx, int r)
{
	RankStream *st = ctx;
	const Sched *s = st->s;
	const RankKey *key = st->key + st->first[r];
	int nkey = st->first[r + 1] - st->first[r], n = 0, h = 0;
	for (int v = 0; v < s->nrank; v++) {
		for (int i = 0; i < nkey; i++)
			st->order[i] = (int64_t)(v ^ key[i].dst) << 32 | i;
		sort_n(st->order, (size_t)nkey, sizeof *st->order, cmp_i64);
		for (int j = 0; j < nkey; j++) {
			const RankKey *k = &key[st->order[j] & 0xffffffff];
			int dst = v ^ k->dst;
			const int *links;
			int len = route_uncached(s->xor_routes, s->rank_node[v], s->rank_node[dst], &links);
			if (len < 0 || h + len > st->caphops)
				die("rank form: the route from rank %d to rank %d is not a shortest one", v,
				    dst);
			copy_n(st->hops + h, links, (size_t)len, sizeof *links);
			st->msg[n++] = (SimMsg){.round = r, .src = v, .dst = dst, .nhop = len, .hop = h,
			                        .num = k->count, .den = s->nchunk,
			                        .reduce = k->op == X_REDUCE};
			h += len;
		}
	}
	return (SimRound){st->msg, n, st->hops};
}

int
rank_stream_coll(Arena *a, const Sched *s, SimColl *c)
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
		error_at(s->loc, "'%s' sends %ld messages over %ld hops in a round at most; the "
		         "simulator takes at most %d", s->name, total, most_hops, MAX_STREAM_MSGS);
		return -1;
	}
	st->msg = arena_array(a, (size_t)most + 1, sizeof *st->msg);
	st->hops = arena_array(a, (size_t)most_hops + 1, sizeof *st->hops);
	st->caphops = most_hops;
	st->order = arena_array(a, (size_t)most_keys + 1, sizeof *st->order);
	st->pub = (SimStream){.ctx = st, .round = rank_round, .max_round_msgs = (int)most,
	                      .shape = shape, .nshape = st->first[s->nround]};
	c->stream = &st->pub;
	c->nmsg = (int)total;
	c->has_deps = false;
	return 0;
}
