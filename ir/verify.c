/*
 * verify.c: proves that a schedule implements its collective, by running
 * it symbolically. The state of (rank, chunk) is the set of ranks whose
 * contribution it holds. A round reads every sender's state as the round
 * began; a reduce adds the sender's set to the receiver's and must not
 * overlap it (that would count a contribution twice), a copy replaces it.
 * At the end each collective's postcondition must hold exactly:
 *
 *   allreduce       every rank holds every chunk with all contributions
 *   reduce_scatter  the owner of each chunk holds it with all contributions
 *   allgather       every rank holds every chunk, as its owner had it
 *   alltoall        each block is at its destination, as its source had it
 *   broadcast       every rank holds the root's data
 *   reduce          the root holds every chunk with all contributions
 *
 * Sets are exact bitsets for up to 256 ranks while they fit in 256 MiB
 * (exact sets name the missing rank); beyond that each set is a
 * fingerprint, its count and two sums of random 64-bit weights, three words
 * whatever the rank count, which tells a missing or doubled contribution
 * but for a chance of about 2^-64.
 * On an optical ring the circuit configurations come first (optical.c):
 * every route must exist in the configuration of its round.
 * A symmetric schedule is proved by symmetry: each base tree is run in
 * full, and every copy is its image under an automorphism that maps the
 * ranks onto themselves (checked when the schedule was built).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

enum { EXACT_LIMIT = 256 << 20, EXACT_RANKS = 256 };

typedef struct State {
	int nrank, nchunk, words;
	bool exact;
	uint64_t *bits;   /* exact: words per (rank, chunk); fingerprints: 3 per cell */
	uint64_t *w1, *w2; /* per rank weights */
	uint64_t all[];    /* the set of every rank (set_words of them) */
} State;

/* chunk-major: the ranks a round's messages join are near in memory */
static size_t
cell(const State *st, int rank, int chunk)
{
	return (size_t)chunk * (size_t)st->nrank + (size_t)rank;
}

static uint64_t
mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15u;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
	return x ^ (x >> 31);
}

static State *
state_new(int nrank, int nchunk)
{
	int words = (nrank + 63) / 64;
	State *st = xcalloc(1, sizeof *st + (size_t)(words > 3 ? words : 3) * sizeof(uint64_t));
	st->nrank = nrank;
	st->nchunk = nchunk;
	st->words = (nrank + 63) / 64;
	double bytes = (double)nrank * nchunk * st->words * 8;
	st->exact = bytes <= EXACT_LIMIT && nrank <= EXACT_RANKS;
	size_t n = (size_t)nrank * (size_t)nchunk;
	st->bits = xcalloc(n * (size_t)(st->exact ? st->words : 3), sizeof *st->bits);
	if (!st->exact) {
		st->w1 = xmalloc((size_t)nrank * sizeof *st->w1);
		st->w2 = xmalloc((size_t)nrank * sizeof *st->w2);
		for (int r = 0; r < nrank; r++) {
			st->w1[r] = mix((uint64_t)r * 2 + 1);
			st->w2[r] = mix((uint64_t)r * 2 + 0x5851f42d4c957f2du);
		}
	}
	for (int r = 0; r < nrank; r++) {
		if (st->exact) {
			st->all[r / 64] |= 1ull << (r % 64);
		} else {
			st->all[0]++;
			st->all[1] += st->w1[r];
			st->all[2] += st->w2[r];
		}
	}
	return st;
}

static void
state_free(State *st)
{
	free(st->bits), free(st->w1), free(st->w2);
	free(st);
}

/* A set as a value: exact words, or the fingerprint in words[0..2]. */
typedef uint64_t Set;

static int
set_words(const State *st)
{
	return st->exact ? st->words : 3;
}

static int set_words(const State *);

static void
get(const State *st, int rank, int chunk, Set *out)
{
	size_t w = (size_t)set_words(st);
	memcpy(out, st->bits + cell(st, rank, chunk) * w, w * sizeof *out);
}

static void
put(State *st, int rank, int chunk, const Set *in)
{
	size_t w = (size_t)set_words(st);
	memcpy(st->bits + cell(st, rank, chunk) * w, in, w * sizeof *in);
}

static bool
empty(const State *st, const Set *s)
{
	for (int i = 0; i < set_words(st); i++)
		if (s[i])
			return false;
	return true;
}

/* The set of one rank, or (r < 0) of every rank. */
static void
singleton(const State *st, int r, Set *out)
{
	int n = set_words(st);
	if (r < 0) {
		memcpy(out, st->all, (size_t)n * sizeof *out);
		return;
	}
	memset(out, 0, (size_t)n * sizeof *out);
	if (st->exact) {
		out[r / 64] |= 1ull << (r % 64);
	} else {
		out[0] = 1;
		out[1] = st->w1[r];
		out[2] = st->w2[r];
	}
}

/* into += add; false if they overlap (exact mode only can tell) */
static bool
add(const State *st, Set *into, const Set *addend)
{
	bool ok = true;
	if (st->exact) {
		for (int i = 0; i < st->words; i++) {
			ok &= (into[i] & addend[i]) == 0;
			into[i] |= addend[i];
		}
	} else {
		for (int i = 0; i < 3; i++)
			into[i] += addend[i];
	}
	return ok;
}

static bool
equal(const State *st, const Set *a, const Set *b)
{
	return memcmp(a, b, (size_t)set_words(st) * sizeof *a) == 0;
}

/* A short account of how a set differs from what it should be. */
static void
describe(const State *st, const Set *got, const Set *want, char *buf, size_t len)
{
	if (!st->exact) {
		snprintf(buf, len, "it holds %llu of %llu contributions or holds others",
		         (unsigned long long)got[0], (unsigned long long)want[0]);
		return;
	}
	int missing = -1, extra = -1, nmiss = 0;
	for (int r = 0; r < st->nrank; r++) {
		bool g = got[r / 64] >> (r % 64) & 1, w = want[r / 64] >> (r % 64) & 1;
		if (w && !g) {
			nmiss++;
			if (missing < 0)
				missing = r;
		}
		if (g && !w && extra < 0)
			extra = r;
	}
	if (missing >= 0)
		snprintf(buf, len, "it lacks the contribution of rank %d (%d missing)", missing, nmiss);
	else if (extra >= 0)
		snprintf(buf, len, "it holds a contribution of rank %d that does not belong there",
		         extra);
	else
		snprintf(buf, len, "it differs");
}

static bool
check_routes(const Sched *s)
{
	const Topo *t = s->topo;
	for (int i = 0; i < s->nmsg; i++) {
		const Msg *m = &s->msg[i];
		int len = sched_route_len(s, m->route);
		const int *l = s->route_link + s->route_off[m->route];
		int at = s->rank_node[m->src];
		bool ok = len > 0 && m->src != m->dst;
		for (int k = 0; k < len && ok; k++) {
			ok = t->link[l[k]].src == at;
			at = t->link[l[k]].dst;
		}
		if (!ok || at != s->rank_node[m->dst]) {
			error_at(s->loc, "schedule of '%s': the message from rank %d to rank %d in round "
			         "%d has no valid route", s->name, m->src, m->dst, m->round + 1);
			return false;
		}
	}
	return true;
}

/* The sets each (rank, chunk) starts with and must end with; want NULL-set
 * (all zero words, flagged by *care = false) where the collective does not
 * say. */
static void
expected(const Sched *s, const State *st, int rank, int chunk, Set *init, Set *want, bool *care)
{
	int n = set_words(st);
	memset(init, 0, (size_t)n * sizeof *init);
	memset(want, 0, (size_t)n * sizeof *want);
	*care = true;
	switch (s->kind) {
	case CK_ALLREDUCE:
		singleton(st, rank, init);
		singleton(st, -1, want);
		break;
	case CK_REDUCE_SCATTER:
		singleton(st, rank, init);
		if (s->owner[chunk] == rank)
			singleton(st, -1, want);
		else
			*care = false;
		break;
	case CK_ALLGATHER:
		if (s->owner[chunk] == rank)
			singleton(st, rank, init);
		singleton(st, s->owner[chunk], want);
		break;
	case CK_ALLTOALL:
		if (s->a2a_src[chunk] == rank)
			singleton(st, rank, init);
		if (s->a2a_dst[chunk] == rank)
			singleton(st, s->a2a_src[chunk], want);
		else
			*care = false;
		break;
	case CK_BROADCAST:
		if (rank == s->root)
			singleton(st, rank, init);
		singleton(st, s->root, want);
		break;
	case CK_REDUCE:
		singleton(st, rank, init);
		if (rank == s->root)
			singleton(st, -1, want);
		else
			*care = false;
		break;
	default:
		break;
	}
}

/* Runs an explicit schedule; reports the first fault. what: "" or " (tree 2)". */
static int
run_explicit(const Sched *s, const char *what)
{
	if (!check_routes(s))
		return -1;
	State *st = state_new(s->nrank, s->nchunk);
	int n = set_words(st);
	Set *a = xmalloc((size_t)n * 2 * sizeof *a);
	Set *b = a + n;
	bool care;
	for (int r = 0; r < s->nrank; r++)
		for (int c = 0; c < s->nchunk; c++) {
			expected(s, st, r, c, a, b, &care);
			put(st, r, c, a);
		}
	/* a round reads what senders held when it began: payloads first */
	Set *payload = NULL;
	int *written = xmalloc((size_t)s->nrank * (size_t)s->nchunk * sizeof *written);
	for (size_t i = 0; i < (size_t)s->nrank * (size_t)s->nchunk; i++)
		written[i] = -2; /* round * 2 + op of the last write */
	int rc = 0;
	for (int i = 0; i < s->nmsg && rc == 0;) {
		int round = s->msg[i].round, j = i, total = 0;
		while (j < s->nmsg && s->msg[j].round == round)
			total += s->msg[j++].n;
		payload = xrealloc(payload, ((size_t)total + 1) * (size_t)n * sizeof *payload);
		int k = 0;
		for (int m = i; m < j && rc == 0; m++)
			for (int x = 0; x < s->msg[m].n; x++, k++) {
				int c = s->chunks[s->msg[m].first + x];
				get(st, s->msg[m].src, c, payload + (size_t)k * (size_t)n);
				if (empty(st, payload + (size_t)k * (size_t)n)) {
					error_at(s->loc, "schedule of '%s'%s: rank %d sends chunk %d in round %d "
					         "before it holds any of it", s->name, what, s->msg[m].src, c,
					         round + 1);
					rc = -1;
				}
			}
		k = 0;
		for (int m = i; m < j && rc == 0; m++)
			for (int x = 0; x < s->msg[m].n && rc == 0; x++, k++) {
				const Msg *msg = &s->msg[m];
				int c = s->chunks[msg->first + x];
				size_t w = cell(st, msg->dst, c);
				/* two writes to one chunk in one round: only reduces commute */
				if (written[w] / 2 == round && (msg->op == X_COPY || written[w] % 2 == X_COPY)) {
					error_at(s->loc, "schedule of '%s'%s: rank %d receives chunk %d twice in "
					         "round %d, one of them a copy", s->name, what, msg->dst, c,
					         round + 1);
					rc = -1;
					break;
				}
				written[w] = round * 2 + (int)msg->op;
				const Set *p = payload + (size_t)k * (size_t)n;
				if (msg->op == X_COPY) {
					put(st, msg->dst, c, p);
					continue;
				}
				get(st, msg->dst, c, a);
				if (!add(st, a, p)) {
					error_at(s->loc, "schedule of '%s'%s: in round %d rank %d adds to chunk %d "
					         "a contribution it already holds (from rank %d)", s->name, what,
					         round + 1, msg->dst, c, msg->src);
					rc = -1;
				}
				put(st, msg->dst, c, a);
			}
		i = j;
	}
	Set *got = xmalloc((size_t)n * 3 * sizeof *got), *init = got + n, *want = got + 2 * n;
	for (int r = 0; r < s->nrank && rc == 0; r++)
		for (int c = 0; c < s->nchunk && rc == 0; c++) {
			expected(s, st, r, c, init, want, &care);
			get(st, r, c, got);
			if (care && !equal(st, got, want)) {
				char why[160];
				describe(st, got, want, why, sizeof why);
				error_at(s->loc, "schedule of '%s'%s does not implement %s: at the end rank %d's "
				         "chunk %d is wrong: %s", s->name, what, coll_kind_name[s->kind], r, c,
				         why);
				rc = -1;
			}
		}
	free(got);
	free(payload);
	free(written);
	free(a);
	state_free(st);
	return rc;
}

/* The base schedule of one tree, as an explicit schedule of one chunk. */
static Sched *
tree_schedule(Arena *a, const Sched *s, int tree)
{
	Sched *t = sched_new(a, s->name, s->loc, s->kind, s->algorithm, s->topo, s->rank_node,
	                     s->nrank);
	t->nchunk = 1;
	t->owner = arena_array(a, 1, sizeof *t->owner);
	t->owner[0] = s->node_rank[s->tree[tree]->root[0]];
	SchedBuilder b;
	sched_begin(&b, a, t, NULL);
	int zero = 0;
	for (int i = 0; i < s->nbase; i++) {
		const BaseXfer *x = &s->base[i];
		if (x->tree != tree)
			continue;
		sched_msg_route(&b, x->round, s->node_rank[x->src], s->node_rank[x->dst], x->op, &zero,
		                1, s->route_link + s->route_off[x->route], sched_route_len(s, x->route));
	}
	sched_end(&b);
	return t;
}

int
verify(const Sched *s)
{
	if (verify_phases(s) != 0)
		return -1;
	if (!s->base)
		return run_explicit(s, "");
	if (sched_check_symmetric(s) != 0)
		return -1;
	Arena a = {0};
	int rc = 0;
	for (int b = 0; b < s->ntree && rc == 0; b++) {
		char what[48];
		snprintf(what, sizeof what, " (base tree %d)", b + 1);
		rc = run_explicit(tree_schedule(&a, s, b), what);
	}
	arena_free(&a);
	return rc;
}
