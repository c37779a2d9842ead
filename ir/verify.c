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
 * Chunks never mix, so the schedule is run one chunk at a time: its
 * transfers are grouped by chunk (a counting sort, in schedule order), and
 * the state is one set per rank, which stays in cache; time and memory are
 * linear in ranks x chunks plus transfers. Of the faults found, the one
 * the schedule meets first (by round, reads before writes, then message
 * order; the end state last, by rank then chunk) is reported.
 * A repeated form (Sched.repeat, repeat.c) is proved on segment 0 alone,
 * after its rules are checked: chunk c0 + j moves as c0 does, j rounds
 * later, with the same owner, and a uniform shift keeps every check here.
 * On an optical ring the circuit configurations come first (optical.c):
 * every route must exist in the configuration of its round.
 * A symmetric schedule is proved by symmetry: each base tree is run in
 * full, and every copy is its image under an automorphism that maps the
 * ranks onto themselves (checked when the schedule was built). The
 * argument (docs/ir.md 6.4): (1) every element g is an automorphism, so
 * the image of a base route from u to v is a route of links from g(u) to
 * g(v); (2) g permutes the ranks (pi_g) and chunk (b, g)'s owner is
 * pi_g(b's owner): sched_check_symmetric; (3) base tree b's chunk, run
 * alone here, ends in the postcondition with nothing sent before it is
 * held and nothing counted twice (so the tree spans the ranks and its
 * rounds complete the reduction and the broadcast). Chunk (b, g)'s run is
 * then b's with every rank r renamed pi_g(r): the same rounds, initial
 * sets renamed, set union and disjointness kept by renaming; each kind's
 * postcondition is invariant under a renaming that carries owner to
 * owner. Chunks never interact, so every chunk ends correct. The group
 * need not act freely or transitively: that gives balance (omega), not
 * correctness. Link loads (metrics.c, sym_round_loads) are orbit sums:
 * the elements carrying base link l' to l are a coset of l''s stabilizer,
 * |G| / |orbit(l')| of them. verify_full.c checks both on the expansion
 * (collc check --full-verify). In the rank
 * form (halving-doubling, recursive halving and doubling on 2^L ranks) a
 * copy is the image under XOR by a rank instead, a relabeling of the ranks
 * that carries the proved run of the base chunk to the copy's (contributions relabeled alike, the owner
 * XOR m: sched_check_symmetric). It holds no routes: the Routes make each
 * message's when the simulator asks for its round, and the stream checks
 * there that it joins the message's ends (backends/to_sim_rank.c), for every
 * message and not only the base transfers' (whose routes, held here,
 * would cost as much as a round's: about p^2/3 links for recursive
 * doubling on a ring).
 */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

enum { EXACT_LIMIT = 256 << 20, EXACT_RANKS = 256 };

typedef struct State {
	int nrank, nchunk, words;
	bool exact;
	uint64_t *bits;   /* the chunk being run: exact, words per rank; fingerprints 3 */
	uint64_t *w1, *w2; /* per rank weights */
	uint64_t all[];    /* the set of every rank (set_words of them) */
} State;


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
	st->bits = xcalloc((size_t)nrank * (size_t)(st->exact ? st->words : 3), sizeof *st->bits);
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

/* Word by word: a set is a few words, and a memcpy call per transfer cost
 * more than the copy. */
static void
get(const State *st, int rank, Set *out)
{
	size_t w = (size_t)set_words(st);
	const uint64_t *from = st->bits + (size_t)rank * w;
	for (size_t i = 0; i < w; i++)
		out[i] = from[i];
}

static void
put(State *st, int rank, const Set *in)
{
	size_t w = (size_t)set_words(st);
	uint64_t *to = st->bits + (size_t)rank * w;
	for (size_t i = 0; i < w; i++)
		to[i] = in[i];
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

/* Where a failure goes: reported at the collective (why NULL), or written
 * into why for a caller that reports it its own way (verify_quiet). */
typedef struct Verdict {
	char *why;
	size_t len;
} Verdict;

static void failed(Diag *, const Verdict *, const Sched *, const char *fmt, ...)
	PRINTF_LIKE(4, 5);

static void
failed(Diag *dg, const Verdict *v, const Sched *s, const char *fmt, ...)
{
	char text[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->why ? v->why : text, v->why ? v->len : sizeof text, fmt, ap);
	va_end(ap);
	if (!v->why)
		error_at(dg, s->loc, "%s", text);
}

static bool
check_routes(Diag *dg, const Sched *s, const Verdict *v)
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
			failed(dg, v, s, "schedule of '%s': the message from rank %d to rank %d in round %d "
			       "has no valid route", s->name, m->src, m->dst, m->round + 1);
			return false;
		}
	}
	return true;
}

/* Whether message m's route passes through node. */
static bool
route_passes(const Sched *s, const Msg *m, int node)
{
	const int *l = s->route_link + s->route_off[m->route];
	for (int k = 0; k < sched_route_len(s, m->route); k++)
		if (s->topo->link[l[k]].dst == node)
			return true;
	return false;
}

/* Why message m cannot be part of in-network operation f (led by lead),
 * or NULL. */
static const char *
fuse_fault(const Sched *s, const Fuse *f, const Msg *lead, const Msg *m)
{
	bool reduce = f->kind != FUSE_MULTICAST;
	if (m->round != lead->round)
		return "has messages in different rounds";
	if (f->kind != FUSE_ALLREDUCE && (reduce ? m->dst != lead->dst : m->src != lead->src))
		return reduce ? "has messages to different ranks" : "has messages from different ranks";
	if (m->op != (reduce ? X_REDUCE : X_COPY))
		return reduce ? "has a message that does not reduce" : "has a message that reduces";
	if (m->n != lead->n || memcmp(s->chunks + m->first, s->chunks + lead->first,
	                              (size_t)m->n * sizeof *s->chunks) != 0)
		return "has messages carrying different chunks";
	if (!route_passes(s, m, f->node))
		return "has a message that does not pass through its switch";
	return NULL;
}

/* In-network operations (Msg.fuse): each at a switch that reduces, its
 * messages as fuse_fault wants them; the self copy's link exists. */
static bool
check_fuses(Diag *dg, const Sched *s, const Verdict *v)
{
	const char *why = NULL;
	int at = -1;
	for (int i = 0; i < s->nfuse && !why; i++) {
		const Fuse *f = &s->fuse[i];
		at = f->node;
		why = f->leader < 0 ? "has no message" : NULL;
		if (!why && !topo_reduces(s->topo, f->node))
			why = "is at a switch that does not reduce (the network's switch_reduction)";
		if (!why && f->self && f->kind == FUSE_ALLREDUCE)
			why = "is an allreduce with an own copy";
		if (!why && f->self) {
			const Msg *m = &s->msg[f->leader];
			int node = s->rank_node[f->kind == FUSE_REDUCE ? m->dst : m->src];
			if (topo_find_link(s->topo, f->kind == FUSE_REDUCE ? node : f->node,
			                   f->kind == FUSE_REDUCE ? f->node : node, 0) < 0)
				why = "has an own copy with no link to the switch";
		}
	}
	for (int j = 0; j < s->nmsg && !why; j++) {
		const Msg *m = &s->msg[j];
		if (!m->fuse)
			continue;
		const Fuse *f = &s->fuse[m->fuse - 1];
		at = f->node;
		why = fuse_fault(s, f, &s->msg[f->leader], m);
	}
	if (why)
		failed(dg, v, s, "schedule of '%s': an in-network operation at node %d %s", s->name, at,
		       why);
	return !why;
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

/* The fault the schedule meets first: ordered by (round, phase, place),
 * phase 0 reading payloads, 1 writing them, 2 the end state. */
typedef struct Fault {
	bool found;
	long long key[3];
	char text[512];
} Fault;

static void fault(Fault *, long long round, long long phase, long long place, const char *fmt,
                  ...) PRINTF_LIKE(5, 6);

static void
fault(Fault *f, long long round, long long phase, long long place, const char *fmt, ...)
{
	long long key[3] = {round, phase, place};
	int k = 0;
	while (f->found && k < 3 && key[k] == f->key[k])
		k++;
	if (f->found && (k == 3 || key[k] > f->key[k]))
		return; /* met after the one kept */
	f->found = true;
	memcpy(f->key, key, sizeof key);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->text, sizeof f->text, fmt, ap);
	va_end(ap);
}

/* The transfers of each chunk, in schedule order: chunk c's are
 * [start[c], start[c + 1]) of msg[] (the message) and place[] (its index in
 * s->chunks, which orders transfers as the schedule does). */
typedef struct ByChunk {
	int *start, *msg, *place;
} ByChunk;

static void
by_chunk(const Sched *s, ByChunk *b)
{
	size_t total = s->nmsg ? (size_t)s->msg[s->nmsg - 1].first + (size_t)s->msg[s->nmsg - 1].n : 0;
	b->start = xcalloc((size_t)s->nchunk + 2, sizeof *b->start);
	b->msg = xmalloc((total + 1) * sizeof *b->msg);
	b->place = xmalloc((total + 1) * sizeof *b->place);
	for (int m = 0; m < s->nmsg; m++)
		for (int x = 0; x < s->msg[m].n; x++)
			b->start[s->chunks[s->msg[m].first + x] + 1]++;
	for (int c = 0; c < s->nchunk; c++)
		b->start[c + 1] += b->start[c];
	int *at = xmalloc(((size_t)s->nchunk + 1) * sizeof *at);
	memcpy(at, b->start, (size_t)s->nchunk * sizeof *at);
	for (int m = 0; m < s->nmsg; m++)
		for (int x = 0; x < s->msg[m].n; x++) {
			int t = s->msg[m].first + x, k = at[s->chunks[t]]++;
			b->msg[k] = m;
			b->place[k] = t;
		}
	free(at);
}

/* Scratch for running one chunk. */
typedef struct Run {
	const Sched *s;
	const char *what;
	State *st;
	Set *a, *b, *payload;
	int *written;      /* per rank: round * 2 + op of the last write */
	size_t cappayload;
} Run;

/* One round of chunk c's transfers [i, j): payloads as the round began,
 * then the writes. false after a fault. */
static bool
run_round(Run *u, const ByChunk *bc, int c, int i, int j, Fault *f)
{
	const Sched *s = u->s;
	State *st = u->st;
	size_t n = (size_t)set_words(st);
	int round = s->msg[bc->msg[i]].round;
	if ((size_t)(j - i) > u->cappayload) {
		u->cappayload = (size_t)(j - i) * 2;
		u->payload = xrealloc(u->payload, u->cappayload * n * sizeof *u->payload);
	}
	for (int k = i; k < j; k++) {
		const Msg *m = &s->msg[bc->msg[k]];
		get(st, m->src, u->payload + (size_t)(k - i) * n);
		if (empty(st, u->payload + (size_t)(k - i) * n)) {
			fault(f, round, 0, bc->place[k], "schedule of '%s'%s: rank %d sends chunk %d in "
			      "round %d before it holds any of it", s->name, u->what, m->src, c, round + 1);
			return false;
		}
	}
	for (int k = i; k < j; k++) {
		const Msg *m = &s->msg[bc->msg[k]];
		int *w = &u->written[m->dst];
		/* two writes to one chunk in one round: only reduces commute */
		if (*w / 2 == round && (m->op == X_COPY || *w % 2 == X_COPY)) {
			fault(f, round, 1, bc->place[k], "schedule of '%s'%s: rank %d receives chunk %d "
			      "twice in round %d, one of them a copy", s->name, u->what, m->dst, c,
			      round + 1);
			return false;
		}
		*w = round * 2 + (int)m->op;
		const Set *p = u->payload + (size_t)(k - i) * n;
		if (m->op == X_COPY) {
			put(st, m->dst, p);
			continue;
		}
		get(st, m->dst, u->a);
		if (!add(st, u->a, p)) {
			fault(f, round, 1, bc->place[k], "schedule of '%s'%s: in round %d rank %d adds to "
			      "chunk %d a contribution it already holds (from rank %d)", s->name, u->what,
			      round + 1, m->dst, c, m->src);
			return false;
		}
		put(st, m->dst, u->a);
	}
	return true;
}

/* Runs chunk c from its initial state and checks where it ends. */
static void
run_chunk(Run *u, const ByChunk *bc, int c, Fault *f)
{
	const Sched *s = u->s;
	State *st = u->st;
	bool care;
	for (int r = 0; r < s->nrank; r++) {
		expected(s, st, r, c, u->a, u->b, &care);
		put(st, r, u->a);
		u->written[r] = -2;
	}
	for (int i = bc->start[c], j; i < bc->start[c + 1]; i = j) {
		int round = s->msg[bc->msg[i]].round;
		for (j = i + 1; j < bc->start[c + 1] && s->msg[bc->msg[j]].round == round; j++)
			;
		if (f->found && round > f->key[0])
			return; /* a fault met earlier stops the run there */
		if (!run_round(u, bc, c, i, j, f))
			return;
	}
	Set *got = u->payload; /* free after the rounds */
	Set *init = u->a, *want = u->b;
	for (int r = 0; r < s->nrank; r++) {
		expected(s, st, r, c, init, want, &care);
		get(st, r, got);
		if (care && !equal(st, got, want)) {
			char why[160];
			describe(st, got, want, why, sizeof why);
			fault(f, LLONG_MAX, r, c, "schedule of '%s'%s does not implement %s: at the end "
			      "rank %d's chunk %d is wrong: %s", s->name, u->what, coll_kind_name[s->kind],
			      r, c, why);
			return;
		}
	}
}

/* Runs an explicit schedule; reports the first fault. what: "" or " (tree 2)";
 * routed: its routes are checked (a rank form's base run has none). */
static int
run_explicit(Diag *dg, const Sched *s, const char *what, bool routed, const Verdict *v)
{
	if (routed && (!check_routes(dg, s, v) || !check_fuses(dg, s, v)))
		return -1;
	Run u = {.s = s, .what = what, .st = state_new(s->nrank, s->nchunk)};
	size_t n = (size_t)set_words(u.st);
	u.a = xmalloc(n * 2 * sizeof *u.a);
	u.b = u.a + n;
	u.cappayload = 4;
	u.payload = xmalloc(u.cappayload * n * sizeof *u.payload);
	u.written = xmalloc(((size_t)s->nrank + 1) * sizeof *u.written);
	ByChunk bc;
	by_chunk(s, &bc);
	Fault f = {0};
	for (int c = 0; c < s->nchunk; c++)
		run_chunk(&u, &bc, c, &f);
	if (f.found)
		failed(dg, v, s, "%s", f.text);
	free(bc.start), free(bc.msg), free(bc.place);
	free(u.a), free(u.payload), free(u.written);
	state_free(u.st);
	return f.found ? -1 : 0;
}

static int verify_sched(Diag *, const Sched *, const Verdict *);

/* The base schedule of one tree, as an explicit schedule of one chunk (in
 * the rank form its messages take the empty route: routes are made, and
 * checked, as the simulator asks for them). */
static Sched *
tree_schedule(Diag *dg, Arena *a, const Sched *s, int tree)
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
		const int *links = s->xor_routes ? &zero : s->route_link + s->route_off[x->route];
		sched_msg_route(&b, x->round, s->node_rank[x->src], s->node_rank[x->dst], x->op, &zero,
		                1, links, s->xor_routes ? 0 : sched_route_len(s, x->route));
	}
	sched_end(dg, &b);
	return t;
}

int
verify(Diag *dg, const Sched *s)
{
	char what[160];
	snprintf(what, sizeof what, "the proof that '%s' implements %s", s->name,
	         coll_kind_name[s->kind]);
	diag_building(dg, s->loc, what); /* named if memory runs out */
	int rc = verify_sched(dg, s, &(Verdict){0});
	diag_built(dg);
	return rc;
}

int
verify_quiet(Diag *dg, const Sched *s, char *why, size_t len)
{
	diag_mute(dg, true);
	int rc = verify_sched(dg, s, &(Verdict){why, len});
	diag_mute(dg, false);
	return rc;
}

/* Barriers ascend inside the rounds: one before round 0 or past the last
 * would hold nothing back, and a dependency-driven run takes them in order. */
static int
verify_barriers(Diag *dg, const Sched *s, const Verdict *v)
{
	for (int i = 0; i < s->nbarrier; i++) {
		int r = s->barrier[i];
		if (r < 1 || r >= s->nround || (i > 0 && r <= s->barrier[i - 1])) {
			failed(dg, v, s, "schedule of '%s': barrier %d (before round %d) is out of order or "
			       "outside rounds 2..%d", s->name, i + 1, r + 1, s->nround);
			return -1;
		}
	}
	return 0;
}

/* The repeated form (repeat.c): its rules, then segment 0 alone; every
 * other segment's chunks move as segment 0's do, shifted in rounds. */
static int
verify_repeated(Diag *dg, const Sched *s, const Verdict *v)
{
	if (sched_repeat_check(dg, s) != 0) {
		if (v->why)
			snprintf(v->why, v->len, "schedule of '%s': its repeated form", s->name);
		return -1;
	}
	Arena a = {0};
	int rc = run_explicit(dg, sched_repeat_view(&a, s), " (segment 0)", true, v);
	arena_free(&a);
	return rc;
}

static int
verify_sched(Diag *dg, const Sched *s, const Verdict *v)
{
	/* the phases' and the symmetric form's checks report for themselves:
	 * a quiet run names which failed */
	if (verify_phases(dg, s) != 0) {
		if (v->why)
			snprintf(v->why, v->len, "schedule of '%s': its circuit phases", s->name);
		return -1;
	}
	if (verify_barriers(dg, s, v) != 0)
		return -1;
	if (s->repeat > 1)
		return verify_repeated(dg, s, v);
	if (!s->base)
		return run_explicit(dg, s, "", true, v);
	if (sched_check_symmetric(dg, s) != 0) {
		if (v->why)
			snprintf(v->why, v->len, "schedule of '%s': its symmetric form (trees and group)",
			         s->name);
		return -1;
	}
	Arena a = {0};
	int rc = 0;
	for (int b = 0; b < s->ntree && rc == 0; b++) {
		char what[48];
		snprintf(what, sizeof what, " (base tree %d)", b + 1);
		rc = run_explicit(dg, tree_schedule(dg, &a, s, b), what, !s->xor_routes, v);
	}
	arena_free(&a);
	return rc;
}
