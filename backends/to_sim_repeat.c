/*
 * to_sim_repeat.c: the repeated form of a pipelined schedule (Sched.repeat,
 * ir/repeat.c) as the simulator's stream, round by round.
 *
 * Needs: a verified schedule in the repeated form. Establishes: a SimColl
 * whose stream gives round r as the listed form holds it (the base rounds
 * r - M + 1 .. r merged in sched_end's order, sched_repeat_round), so a
 * run round by round is the listed form's, message for message, while
 * memory is segment 0's messages and one round's (packing on 1024 GPUs:
 * about a segment's 1,047,552 messages, where 50 segments listed would
 * be 52 million). Routes are the schedule's own table: a message's hops
 * index it, nothing is copied.
 */
#include <stdlib.h>

#include "to_sim.h"

typedef struct RepeatStream {
	SimStream pub;
	const Sched *s;
	int *first;        /* the base rounds' messages (sched_repeat_rounds) */
	int *idx;          /* one round's base messages, in order */
	SimMsg *msg;       /* ... as the simulator's (the largest round's room) */
	int64_t mult;
} RepeatStream;

static SimRound
repeat_round(void *ctx, int r)
{
	RepeatStream *st = ctx;
	const Sched *s = st->s;
	int n = sched_repeat_round(s, st->first, r, st->idx);
	for (int i = 0; i < n; i++) {
		const Msg *m = &s->msg[st->idx[i]];
		st->msg[i] = (SimMsg){.round = r, .src = m->src, .dst = m->dst,
		                      .nhop = sched_route_len(s, m->route), .hop = s->route_off[m->route],
		                      .num = (int64_t)m->n * st->mult, .den = s->nchunk,
		                      .reduce = m->op == X_REDUCE, .instance = m->instance};
	}
	return (SimRound){st->msg, n, s->route_link};
}

/* The messages by size (a class per chunk count: packing has one or two),
 * each class's lone-link messages and other hops, times the segments. */
static int
repeat_shapes(Arena *a, const RepeatStream *st, SimShape **out)
{
	const Sched *s = st->s;
	int n = 0, cap = 4;
	SimShape *sh = xmalloc((size_t)cap * sizeof *sh);
	for (int i = 0; i < s->nmsg; i++) {
		const Msg *m = &s->msg[i];
		int64_t num = (int64_t)m->n * st->mult, len = sched_route_len(s, m->route);
		int k = 0;
		while (k < n && sh[k].num != num)
			k++;
		if (k == n) {
			if (n == cap)
				sh = xrealloc(sh, (size_t)(cap *= 2) * sizeof *sh);
			sh[n++] = (SimShape){.num = num, .den = s->nchunk};
		}
		if (len > 1)
			sh[k].hops += (double)len * s->repeat;
		else
			sh[k].single += s->repeat;
	}
	*out = arena_array(a, (size_t)n + 1, sizeof **out);
	copy_n(*out, sh, (size_t)n, sizeof *sh);
	free(sh);
	return n;
}

int
repeat_stream_coll(Diag *dg, Arena *a, const Sched *s, SimColl *c)
{
	double total = (double)s->nmsg * s->repeat;
	if (total > MAX_STREAM_MSGS) {
		error_at(dg, s->loc, "'%s' sends %.0f messages (%d segments of %d); the simulator takes "
		         "at most %d", s->name, total, s->repeat, s->nmsg, MAX_STREAM_MSGS);
		return -1;
	}
	RepeatStream *st = NEW(a, RepeatStream);
	*st = (RepeatStream){.s = s, .mult = s->kind == CK_ALLTOALL ? s->nrank : 1};
	st->first = arena_own(a, sched_repeat_rounds(s));
	long most = sched_repeat_max_round(s, st->first);
	st->idx = arena_array(a, (size_t)most + 1, sizeof *st->idx);
	st->msg = arena_array(a, (size_t)most + 1, sizeof *st->msg);
	SimShape *shape;
	int nshape = repeat_shapes(a, st, &shape);
	st->pub = (SimStream){.ctx = st, .round = repeat_round, .max_round_msgs = (int)most,
	                      .shape = shape, .nshape = nshape, .nmsg = (int64_t)total};
	c->stream = &st->pub;
	c->nmsg = 0;
	c->has_deps = false;
	return 0;
}
