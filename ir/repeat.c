/*
 * repeat.c: the repeated form of a pipelined schedule (Sched.repeat; docs/ir.md,
 * "The repeated form"). A pipeline of M segments whose segment j is segment 0
 * shifted by j rounds and j chunks is held as segment 0's messages and M:
 * `packing` on 1024 GPUs sends 1,047,552 messages a segment, so listing 50
 * segments would take 52 million messages and gigabytes, where segment 0
 * takes what one segment does.
 *
 * Needs: a built schedule whose repeat > 1 (alg_packing.c makes them).
 * Establishes: its rules checked (sched_repeat_check); segment 0 as an
 * explicit schedule of its own (sched_repeat_view), which verify proves;
 * any round's messages in the order the listed form holds them
 * (sched_repeat_round: a merge of the base rounds it spans, each sorted
 * as sched_end sorts a round), which the simulator's stream and
 * sched_listed (every segment listed, for the backends that read messages)
 * share, so the three see the same messages in the same order.
 *
 * Why proving segment 0 proves the whole (docs/ir.md): the verifier runs
 * chunk by chunk, and chunk c = c0 + j (c0 a multiple of M, 0 <= j < M)
 * moves exactly by segment 0's messages of c0, each j rounds later, with
 * the same owner (checked here). A shift of every transfer of a chunk by
 * the same number of rounds keeps which round reads what an earlier one
 * wrote, so c's run is c0's, and c0's is the view's chunk c0 / M.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "collc_limits.h"

static int
repeat_base_rounds(const Sched *s)
{
	return s->nround - s->repeat + 1;
}

/* Two messages with the same key (src, dst, route, op, instance) less than
 * M rounds apart would meet in one round of the listed form, where
 * sched_end merges a key into one message; the form keeps them apart, so
 * it holds none. Checked per key, by a sort of the indices. */
static int
by_key_round(const void *pa, const void *pb, void *ctx)
{
	const Msg *m = ctx, *a = &m[*(const int *)pa], *b = &m[*(const int *)pb];
	int k[5] = {a->src - b->src, a->dst - b->dst, a->route - b->route, a->op - b->op,
	            a->instance - b->instance};
	for (int i = 0; i < 5; i++)
		if (k[i])
			return k[i] < 0 ? -1 : 1;
	return (a->round > b->round) - (a->round < b->round);
}

static bool
keys_apart(const Sched *s)
{
	int *idx = xmalloc(((size_t)s->nmsg + 1) * sizeof *idx);
	for (int i = 0; i < s->nmsg; i++)
		idx[i] = i;
	sort_with(idx, (size_t)s->nmsg, sizeof *idx, by_key_round, s->msg);
	bool ok = true;
	for (int i = 1; i < s->nmsg && ok; i++) {
		const Msg *a = &s->msg[idx[i - 1]], *b = &s->msg[idx[i]];
		ok = !(a->src == b->src && a->dst == b->dst && a->route == b->route && a->op == b->op &&
		       a->instance == b->instance && b->round - a->round < s->repeat);
	}
	free(idx);
	return ok;
}

int
sched_repeat_check(Diag *dg, const Sched *s)
{
	int M = s->repeat;
	const char *why = NULL;
	if (s->nchunk % M != 0)
		why = "its chunk count is not a multiple of the segments";
	else if (s->nfuse || s->nphase || s->nbarrier || s->base)
		why = "it has in-network operations, circuit phases, barriers or base transfers";
	for (int i = 0; !why && i < s->nmsg; i++) {
		const Msg *m = &s->msg[i];
		if (m->round < 0 || m->round >= repeat_base_rounds(s))
			why = "a message of segment 0 lies in the repeats' last rounds";
		for (int k = 0; !why && k < m->n; k++)
			if (s->chunks[m->first + k] % M != 0)
				why = "segment 0 carries a chunk that is not a multiple of the segments";
	}
	for (int c = 0; !why && s->owner && c < s->nchunk; c++)
		if (s->owner[c] != s->owner[c - c % M])
			why = "a segment's chunk has another owner than segment 0's";
	for (int c = 0; !why && s->a2a_src && c < s->nchunk; c++)
		if (s->a2a_src[c] != s->a2a_src[c - c % M] || s->a2a_dst[c] != s->a2a_dst[c - c % M])
			why = "a segment's chunk has another block than segment 0's";
	if (!why && !keys_apart(s))
		why = "two of its messages would meet in one round as one message";
	if (!why)
		return 0;
	error_at(dg, s->loc, "the repeated form of '%s' (%d segments) is malformed: %s", s->name, M,
	         why);
	return -1;
}

Sched *
sched_repeat_view(Arena *a, const Sched *s)
{
	int M = s->repeat;
	Sched *v = NEW(a, Sched);
	*v = *s;
	v->repeat = 0;
	v->nchunk = s->nchunk / M;
	v->nround = repeat_base_rounds(s);
	size_t total = s->nmsg ? (size_t)s->msg[s->nmsg - 1].first + (size_t)s->msg[s->nmsg - 1].n : 0;
	int *chunks = arena_array(a, total + 1, sizeof *chunks);
	for (size_t k = 0; k < total; k++)
		chunks[k] = s->chunks[k] / M;
	v->chunks = chunks;
	if (s->owner) {
		v->owner = arena_array(a, (size_t)v->nchunk + 1, sizeof *v->owner);
		for (int c = 0; c < v->nchunk; c++)
			v->owner[c] = s->owner[c * M];
	}
	if (s->a2a_src) {
		v->a2a_src = arena_array(a, (size_t)v->nchunk + 1, sizeof *v->a2a_src);
		v->a2a_dst = arena_array(a, (size_t)v->nchunk + 1, sizeof *v->a2a_dst);
		for (int c = 0; c < v->nchunk; c++) {
			v->a2a_src[c] = s->a2a_src[c * M];
			v->a2a_dst[c] = s->a2a_dst[c * M];
		}
	}
	return v;
}

int *
sched_repeat_rounds(const Sched *s)
{
	int nb = repeat_base_rounds(s);
	int *first = xcalloc((size_t)nb + 2, sizeof *first);
	for (int i = 0; i < s->nmsg; i++)
		first[s->msg[i].round + 1]++;
	for (int b = 0; b < nb; b++)
		first[b + 1] += first[b];
	return first;
}

/* The base rounds round r spans: [lo, hi]. */
static void
window(const Sched *s, int r, int *lo, int *hi)
{
	*lo = r - s->repeat + 1 > 0 ? r - s->repeat + 1 : 0;
	*hi = r < repeat_base_rounds(s) - 1 ? r : repeat_base_rounds(s) - 1;
}

int
sched_repeat_round(const Sched *s, const int *first, int r, int *out)
{
	int lo, hi, n = 0;
	window(s, r, &lo, &hi);
	if (lo > hi)
		return 0;
	/* a merge of the window's rounds, each in order; ties (none in a
	 * checked form) go to the earlier segment, the later base round */
	int k = hi - lo + 1;
	int *at = xmalloc((size_t)k * sizeof *at);
	for (int i = 0; i < k; i++)
		at[i] = first[lo + i];
	for (;;) {
		int best = -1;
		for (int i = k - 1; i >= 0; i--) {
			if (at[i] == first[lo + i + 1])
				continue;
			if (best < 0 || sched_msg_order(&s->msg[at[i]], &s->msg[at[best]]) < 0)
				best = i;
		}
		if (best < 0)
			break;
		out[n++] = at[best]++;
	}
	free(at);
	return n;
}

long
sched_repeat_max_round(const Sched *s, const int *first)
{
	long most = 0;
	for (int r = 0; r < s->nround; r++) {
		int lo, hi;
		window(s, r, &lo, &hi);
		long n = lo <= hi ? first[hi + 1] - first[lo] : 0;
		most = n > most ? n : most;
	}
	return most;
}

const Sched *
sched_listed(Diag *dg, Arena *a, const Sched *s)
{
	if (s->repeat <= 1)
		return s;
	int M = s->repeat;
	double msgs = (double)s->nmsg * M;
	size_t total = s->nmsg ? (size_t)s->msg[s->nmsg - 1].first + (size_t)s->msg[s->nmsg - 1].n : 0;
	if (check_sched_size(dg, s->loc, s->name, s->kind, s->nrank, s->nchunk) != 0)
		return NULL;
	if (msgs > MAX_PACK_MSGS || (double)total * M > MAX_TRANSFERS) {
		error_at(dg, s->loc, "'%s' would list %.0f messages (%.0f chunk transfers) in its %d "
		         "segments; collc lists at most %d (MAX_PACK_MSGS) and %d (MAX_TRANSFERS); round "
		         "by round (--sync rounds) collc sim streams it", s->name, msgs, (double)total * M,
		         M, MAX_PACK_MSGS, MAX_TRANSFERS);
		return NULL;
	}
	Sched *x = NEW(a, Sched);
	*x = *s;
	x->repeat = 0;
	x->nmsg = s->nmsg * M;
	x->msg = arena_array(a, (size_t)x->nmsg + 1, sizeof *x->msg);
	x->chunks = arena_array(a, total * (size_t)M + 1, sizeof *x->chunks);
	int *first = sched_repeat_rounds(s);
	int *idx = xmalloc(((size_t)sched_repeat_max_round(s, first) + 1) * sizeof *idx);
	int n = 0, used = 0;
	for (int r = 0; r < s->nround; r++) {
		int k = sched_repeat_round(s, first, r, idx);
		for (int i = 0; i < k; i++) {
			const Msg *m = &s->msg[idx[i]];
			int j = r - m->round;
			x->msg[n] = *m;
			x->msg[n].round = r;
			x->msg[n].first = used;
			for (int c = 0; c < m->n; c++)
				x->chunks[used + c] = s->chunks[m->first + c] + j;
			used += m->n;
			n++;
		}
	}
	free(first), free(idx);
	return x;
}
