/*
 * teach.c: the verifier as a teacher. Runs a user schedule's transfers, each
 * with the source location of the send that made it and the loop variables
 * it ran with, on exact contribution sets (one bit per rank: at most 64
 * ranks), and reports the first fault at the send at fault: a chunk sent
 * before the sender holds any of it, a contribution added twice (with a note
 * at the transfer that brought it into the receiver's chunk, with its loop
 * variables: found by replaying that one cell, since the chunk's last writer
 * is often another send), a chunk received twice in a round with one of them
 * a copy, or a rank's chunk that ends wrong (what it lacks or holds that does
 * not belong, the last transfer into it, and in notes the first transfer on
 * the path its data took and the copy that dropped a contribution it had). Also checks the promise of
 * a contention_free schedule: no directed link carries two messages in one
 * round. Needs the schedule's layout (kind, chunks, owners) and the
 * transfers sorted by round; sees no AST. verify() proves the built
 * schedule afterwards, as every schedule is proved. The first fault is
 * kept, when asked, for collc explain to show the rounds up to it.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

typedef struct TeachIn {
	const Sched *s;             /* the layout: kind, ranks, chunks, owners */
	const TransferList *list;
	Loc whole;                  /* where a fault no transfer made is reported */
	Arena *arena;
	TeachTrace *trace;          /* where the first fault is kept, or NULL */
} TeachIn;

typedef uint64_t Bits;

/* Room for a set of ranks as text: "0, 1, ..., 63" is 244 characters, so
 * with bits_text's margin of 16 no set of up to 64 ranks is cut short. */
enum { BITS_TEXT = 264 };

static void
bits_text(Bits b, char *buf, size_t len)
{
	int n = 0, k = 0;
	buf[0] = 0;
	for (int r = 0; r < 64 && n < (int)len - 16; r++)
		if (b >> r & 1)
			n += snprintf(buf + n, len - (size_t)n, "%s%d", k++ ? ", " : "", r);
	if (k == 0)
		snprintf(buf, len, "none");
}

void
sched_small_expected(const Sched *s, int r, int c, uint64_t *init, uint64_t *want, bool *care)
{
	Bits all = s->nrank == 64 ? ~0ull : (1ull << s->nrank) - 1, me = 1ull << r;
	*init = *want = 0;
	*care = true;
	switch (s->kind) {
	case CK_ALLREDUCE: *init = me; *want = all; break;
	case CK_REDUCE_SCATTER: *init = me; *want = all; *care = s->owner[c] == r; break;
	case CK_ALLGATHER: *init = s->owner[c] == r ? me : 0; *want = 1ull << s->owner[c]; break;
	case CK_ALLTOALL:
		*init = s->a2a_src[c] == r ? me : 0;
		*want = 1ull << s->a2a_src[c];
		*care = s->a2a_dst[c] == r;
		break;
	case CK_BROADCAST: *init = r == s->root ? me : 0; *want = 1ull << s->root; break;
	case CK_REDUCE: *init = me; *want = all; *care = r == s->root; break;
	default: break;
	}
}

typedef struct Teach {
	Diag *diag;  /* where this pass's diagnostics go (the run's, from the driver) */
	const TeachIn *u;
	Bits *state;    /* rank * nchunk + chunk */
	int *writer;    /* the transfer that last wrote the cell, or -1 */
	int *wround;    /* the round of that write, -1 */
	Bits *payload;  /* per pool entry, what it carried */
	int *prov;      /* per pool entry, the writer of the cell it was read from */
	int empty_reduce, nempty; /* the first reduce into a cell holding nothing (-1), and
	                           * how many chunks such reduces moved */
	int empty_chunk;          /* the chunk of the first */
} Teach;

static int
order_by_round(const void *pa, const void *pb)
{
	const Transfer *a = pa, *b = pb;
	if (a->round != b->round)
		return a->round < b->round ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first; /* program order */
}

/* "round 7 (s = 6, r = 7)": when a transfer ran, in the user's terms */
static const char *
when(const TeachIn *u, const Transfer *x)
{
	return x->vars[0] ? arena_printf(u->arena, "round %d (%s)", x->round + 1, x->vars)
	                  : arena_printf(u->arena, "round %d", x->round + 1);
}

/* Transfer x's first chunk, 0 if its chunks were not kept (past the
 * teacher's ranks a contention_free check keeps only links: the list may
 * hold none, and be NULL). */
static int
first_chunk(const TransferList *l, const Transfer *x)
{
	return x->n > 0 ? l->chunk[x->first] : 0;
}

/* Keeps the first fault for explain: in round `round`, transfer x (NULL:
 * none) moving `chunk`, and the cell (rank, chunk) found wrong (rank -1:
 * none). */
static void
keep_fault(const TeachIn *u, int round, const Transfer *x, int chunk, int rank)
{
	if (!u->trace || u->trace->s)
		return;
	*u->trace = (TeachTrace){.s = u->s, .round = round, .src = x ? x->src : -1,
	                         .dst = x ? x->dst : -1, .chunk = chunk, .rank = rank,
	                         .xround = x ? x->round : -1};
}

/* Reads every payload of the round [i, j); false after reporting. */
static bool
teach_read(Teach *T, int i, int j)
{
	const TeachIn *u = T->u;
	for (int k = i; k < j; k++) {
		const Transfer *x = &u->list->x[k];
		for (int m = 0; m < x->n; m++) {
			int c = u->list->chunk[x->first + m];
			size_t cell = (size_t)x->src * (size_t)u->s->nchunk + (size_t)c;
			T->payload[x->first + m] = T->state[cell];
			T->prov[x->first + m] = T->writer[cell];
			if (T->state[cell] == 0) {
				error_at(T->diag, x->loc, "in %s, rank %d sends chunk %d to rank %d, but it holds "
				         "nothing of chunk %d yet", when(u, x), x->src, c, x->dst, c);
				keep_fault(u, x->round, x, c, x->src);
				return false;
			}
		}
	}
	return true;
}

/* Where rank `rank`'s chunk `chunk` got the contribution of rank `from`:
 * replays the transfers before `end` into that cell (their payloads were
 * kept when read) and returns the one that last brought the contribution
 * in, -1 if the rank held it from the start. *lost is the copy that later
 * replaced it, if one did (-1). */
static int
contribution_origin(const Teach *T, int end, int rank, int chunk, int from, int *lost)
{
	const TeachIn *u = T->u;
	Bits init, want, bit = 1ull << from;
	bool care;
	sched_small_expected(u->s, rank, chunk, &init, &want, &care);
	bool held = init & bit;
	int origin = -1;
	*lost = -1;
	for (int k = 0; k < end; k++) {
		const Transfer *x = &u->list->x[k];
		for (int m = 0; x->dst == rank && m < x->n; m++) {
			if (u->list->chunk[x->first + m] != chunk)
				continue;
			bool in = T->payload[x->first + m] & bit;
			if (in && !held)
				origin = k, *lost = -1;
			else if (!in && held && x->op == X_COPY)
				*lost = k;
			held = in || (held && x->op != X_COPY);
		}
	}
	return origin;
}

/* The note under "counted twice": the transfer that first brought one of
 * the doubled contributions into the receiver's chunk, in the user's terms.
 * Skipped when the only doubled contribution is the receiver's own. */
static void
note_origin(const Teach *T, int k, int rank, int chunk, Bits twice)
{
	const TeachIn *u = T->u;
	for (int r = 0; r < 64; r++) {
		int lost, o = twice >> r & 1 ? contribution_origin(T, k, rank, chunk, r, &lost) : -1;
		if (o < 0)
			continue;
		const Transfer *x = &u->list->x[o];
		note_at(T->diag, x->loc, "rank %d's chunk %d got rank %d's contribution from this transfer, sent by "
		        "rank %d in %s", rank, chunk, r, x->src, when(u, x));
		return;
	}
}

static bool
teach_write(Teach *T, int k)
{
	const TeachIn *u = T->u;
	const Transfer *x = &u->list->x[k];
	char held[BITS_TEXT];
	for (int m = 0; m < x->n; m++) {
		int c = u->list->chunk[x->first + m];
		size_t cell = (size_t)x->dst * (size_t)u->s->nchunk + (size_t)c;
		Bits in = T->payload[x->first + m];
		if (T->wround[cell] == x->round &&
		    (x->op == X_COPY || u->list->x[T->writer[cell]].op == X_COPY)) {
			error_at(T->diag, x->loc, "in %s, rank %d receives chunk %d twice, and one of the two "
			         "is a copy: which one wins?", when(u, x), x->dst, c);
			note_at(T->diag, u->list->x[T->writer[cell]].loc, "the other transfer of chunk %d to rank %d in "
			        "that round", c, x->dst);
			keep_fault(u, x->round, x, c, x->dst);
			return false;
		}
		if (x->op == X_REDUCE && (T->state[cell] & in)) {
			Bits twice = T->state[cell] & in;
			bits_text(twice, held, sizeof held);
			error_at(T->diag, x->loc, "in %s, rank %d adds chunk %d from rank %d, but both already "
			         "hold the contribution of rank%s %s: it would be counted twice", when(u, x),
			         x->dst, c, x->src, __builtin_popcountll(twice) > 1 ? "s" : "", held);
			note_origin(T, k, x->dst, c, twice);
			keep_fault(u, x->round, x, c, x->dst);
			return false;
		}
		if (x->op == X_REDUCE && T->state[cell] == 0 && T->nempty++ == 0) {
			T->empty_reduce = k;
			T->empty_chunk = c;
		}
		T->state[cell] = x->op == X_COPY ? in : T->state[cell] | in;
		T->writer[cell] = k;
		T->wround[cell] = x->round;
	}
	return true;
}

/* The first transfer on the path the data of (dst, chunk) took to its
 * last writer w: follow what each transfer read back to where it began. */
static int
path_origin(const Teach *T, int w, int chunk)
{
	const TeachIn *u = T->u;
	for (int hops = 0; hops < u->list->n; hops++) {
		const Transfer *x = &u->list->x[w];
		int prev = -1;
		for (int m = 0; m < x->n; m++)
			if (u->list->chunk[x->first + m] == chunk)
				prev = T->prov[x->first + m];
		if (prev < 0)
			return w;
		w = prev;
	}
	return w;
}

/* The note under a chunk that ends lacking contributions: the copy that
 * replaced one it had held (the lowest rank's first), unless that copy is
 * the chunk's last transfer, which the error names. (A chunk never ends
 * holding too much: every kind's data starts where it belongs.) */
static void
note_lost_contribution(const Teach *T, int rank, int chunk, Bits lacks, int last)
{
	const TeachIn *u = T->u;
	for (int r = 0; r < 64; r++) {
		int lost;
		if (!(lacks >> r & 1) || (contribution_origin(T, u->list->n, rank, chunk, r, &lost), lost < 0))
			continue;
		if (lost == last)
			return; /* the error names the copy already */
		const Transfer *x = &u->list->x[lost];
		note_at(T->diag, x->loc, "rank %d's chunk %d held rank %d's contribution until this copy from rank "
		        "%d replaced it, in %s", rank, chunk, r, x->src, when(u, x));
		return;
	}
}

static bool
teach_end(Teach *T)
{
	const TeachIn *u = T->u;
	const Sched *s = u->s;
	for (int r = 0; r < u->s->nrank; r++)
		for (int c = 0; c < u->s->nchunk; c++) {
			Bits init, want;
			bool care;
			sched_small_expected(s, r, c, &init, &want, &care);
			size_t cell = (size_t)r * (size_t)u->s->nchunk + (size_t)c;
			Bits got = T->state[cell];
			if (!care || got == want)
				continue;
			char miss[BITS_TEXT], have[BITS_TEXT], why[2 * BITS_TEXT + 100];
			bits_text(want & ~got, miss, sizeof miss);
			bits_text(got, have, sizeof have);
			if (want & ~got)
				snprintf(why, sizeof why, "it lacks the contribution%s of rank%s %s (it holds "
				         "%s)", __builtin_popcountll(want & ~got) > 1 ? "s" : "",
				         __builtin_popcountll(want & ~got) > 1 ? "s" : "", miss, have);
			else
				snprintf(why, sizeof why, "it holds the contribution of rank%s %s, where only %s "
				         "belong%s", __builtin_popcountll(got & ~want) > 1 ? "s" : "",
				         (bits_text(got & ~want, miss, sizeof miss), miss), (bits_text(want, have,
				         sizeof have), have), __builtin_popcountll(want) > 1 ? "" : "s");
			int w = T->writer[cell];
			if (w < 0) {
				error_at(T->diag, u->whole, "schedule of '%s' does not implement %s: at the end rank "
				         "%d's chunk %d is wrong: %s; no transfer ever delivers chunk %d to rank "
				         "%d", s->name, coll_kind_name[s->kind], r, c, why, c, r);
				keep_fault(u, s->nround - 1, NULL, c, r);
				return false;
			}
			const Transfer *x = &u->list->x[w];
			error_at(T->diag, x->loc, "schedule of '%s' does not implement %s: at the end rank %d's chunk "
			         "%d is wrong: %s; the last transfer into it is this one, from rank %d in %s%s",
			         s->name, coll_kind_name[s->kind], r, c, why, x->src, when(u, x),
			         x->op == X_COPY ? ", a copy: it replaced what the rank held" : "");
			int o = path_origin(T, w, c);
			if (o != w)
				note_at(T->diag, u->list->x[o].loc, "its data started on its way here: rank %d sent chunk %d to "
				        "rank %d in %s, the first transfer on its path", u->list->x[o].src, c,
				        u->list->x[o].dst, when(u, &u->list->x[o]));
			note_lost_contribution(T, r, c, want & ~got, w);
			keep_fault(u, s->nround - 1, x, c, r);
			return false;
		}
	return true;
}

/* contention_free: no directed link carries two messages in one round
 * (transfers with the same ends and operation are one message). The
 * transfers are in round order. */
static int
check_contention(Diag *dg, const TeachIn *u)
{
	const Topo *t = u->s->topo;
	int *round = xmalloc((size_t)t->nlink * sizeof *round), *user = xmalloc((size_t)t->nlink * sizeof *user);
	for (int l = 0; l < t->nlink; l++)
		round[l] = -1;
	int rc = 0;
	for (int i = 0; i < u->list->n && rc == 0; i++) {
		const Transfer *x = &u->list->x[i];
		for (int k = 0; k < x->nlink && rc == 0; k++) {
			int l = u->list->link[x->lfirst + k];
			const Transfer *o = round[l] == x->round ? &u->list->x[user[l]] : NULL;
			if (o && (o->src != x->src || o->dst != x->dst || o->op != x->op)) {
				char a[64], b[64];
				topo_node_name(t, t->link[l].src, a, sizeof a);
				topo_node_name(t, t->link[l].dst, b, sizeof b);
				error_at(dg, x->loc, "the schedule is declared contention_free, but in %s link %s -> "
				         "%s carries two transfers: this one (rank %d to rank %d) and another",
				         when(u, x), a, b, x->src, x->dst);
				note_at(dg, o->loc, "the other transfer over it: rank %d to rank %d in %s", o->src,
				        o->dst, when(u, o));
				keep_fault(u, x->round, x, first_chunk(u->list, x), -1);
				rc = -1;
			}
			round[l] = x->round;
			user[l] = i;
		}
	}
	free(round);
	free(user);
	return rc;
}

/* Two sends of one round with the same ends, operation and route are one
 * message (sched.c merges them): where a link of that route has parallel
 * siblings, the merged message loads one of them and leaves the others
 * idle, which the writer rarely means (on a size-2 torus dimension both
 * directions reach one neighbour). Same pairs sort together. */
static int
cmp_merge_key(const void *pa, const void *pb, void *ctx)
{
	const TransferList *l = ctx;
	const Transfer *a = &l->x[*(const int *)pa], *b = &l->x[*(const int *)pb];
	if (a->src != b->src || a->dst != b->dst || a->op != b->op)
		return a->src != b->src ? (a->src < b->src ? -1 : 1)
		       : a->dst != b->dst ? (a->dst < b->dst ? -1 : 1) : (a->op < b->op ? -1 : 1);
	if (a->nlink != b->nlink)
		return a->nlink < b->nlink ? -1 : 1;
	int c = memcmp(l->link + a->lfirst, l->link + b->lfirst, (size_t)a->nlink * sizeof *l->link);
	return c ? c : (*(const int *)pa > *(const int *)pb) - (*(const int *)pa < *(const int *)pb);
}

static bool
same_message(const TransferList *l, int i, int j)
{
	const Transfer *a = &l->x[i], *b = &l->x[j];
	return a->src == b->src && a->dst == b->dst && a->op == b->op && a->nlink == b->nlink &&
	       memcmp(l->link + a->lfirst, l->link + b->lfirst, (size_t)a->nlink * sizeof *l->link) == 0;
}

/* The first link of x's route with a parallel sibling, or -1. */
static int
parallel_link(const Topo *t, const TransferList *l, const Transfer *x)
{
	for (int k = 0; k < x->nlink; k++) {
		const Link *e = &t->link[l->link[x->lfirst + k]];
		if (topo_nlinks_between(t, e->src, e->dst) > 1)
			return l->link[x->lfirst + k];
	}
	return -1;
}

int
teach_merged(Diag *dg, const Sched *s, const TransferList *l, Arena *a, bool contention_free,
             TeachTrace *trace)
{
	TeachIn u = {.s = s, .list = l, .arena = a, .trace = trace};
	const Topo *t = s->topo;
	int *idx = xmalloc(((size_t)l->n + 1) * sizeof *idx);
	int first = -1, other = -1, link = -1, npairs = 0;
	for (int i = 0; i < l->n;) {
		int j = i, n = 0;
		while (j < l->n && l->x[j].round == l->x[i].round)
			idx[n++] = j++;
		sort_with(idx, (size_t)n, sizeof *idx, cmp_merge_key, (void *)l);
		for (int k = 1; k < n; k++) {
			int e = same_message(l, idx[k - 1], idx[k]) ? parallel_link(t, l, &l->x[idx[k]]) : -1;
			if (e < 0)
				continue;
			npairs++;
			/* the earliest round's first later send (idx[k - 1] < idx[k]) */
			if (first < 0 || (l->x[idx[k]].round == l->x[first].round && idx[k] < first))
				first = idx[k], other = idx[k - 1], link = e;
		}
		i = j;
	}
	free(idx);
	if (npairs == 0)
		return 0;
	const Transfer *x = &l->x[first], *o = &l->x[other];
	const Link *e = &t->link[link];
	int nlinks = topo_nlinks_between(t, e->src, e->dst);
	char na[64], nb[64], more[64] = "";
	topo_node_name(t, e->src, na, sizeof na);
	topo_node_name(t, e->dst, nb, sizeof nb);
	if (npairs > 1)
		snprintf(more, sizeof more, " (%d such pairs in all)", npairs);
	const char *what = arena_printf(a, "in %s, rank %d sends to rank %d twice, and the two sends "
	                                "are one message over link %d of the %d parallel links from "
	                                "node %s to node %s, %s idle%s; give each its own link: "
	                                "'over link 0' on one, 'over link 1' on the other",
	                                when(&u, x), x->src, x->dst, e->copy, nlinks, na, nb,
	                                nlinks == 2 ? "the other" : "the others", more);
	if (contention_free) {
		error_at(dg, x->loc, "the schedule is declared contention_free, but %s", what);
		keep_fault(&u, x->round, x, first_chunk(l, x), -1);
	} else {
		warning_at(dg, x->loc, "%s", what);
	}
	note_at(dg, o->loc, "the other send, in %s", when(&u, o));
	return contention_free ? -1 : 0;
}

/* A reduce into a chunk its receiver holds nothing of adds to nothing: it
 * is a copy, and more likely a slip (an allgather written with reduce)
 * than meant. Legal, so a warning, at the first such send. */
static void
warn_empty_reduce(const Teach *T)
{
	if (T->nempty == 0)
		return;
	const TeachIn *u = T->u;
	const Transfer *x = &u->list->x[T->empty_reduce];
	char more[64] = "";
	if (T->nempty > 1)
		snprintf(more, sizeof more, " (%d chunks arrive this way in all)", T->nempty);
	warning_at(T->diag, x->loc, "in %s, rank %d reduces chunk %d from rank %d into nothing: it holds none "
	           "of chunk %d yet, so the reduce is a copy%s; write 'copy' if that is meant",
	           when(u, x), x->dst, T->empty_chunk, x->src, T->empty_chunk, more);
}

static int
teach(Diag *dg, const TeachIn *u)
{
	size_t cells = (size_t)u->s->nrank * (size_t)u->s->nchunk;
	Teach T = {.diag = dg, .u = u, .empty_reduce = -1};
	T.state = xcalloc(cells, sizeof *T.state);
	T.writer = xmalloc(cells * sizeof *T.writer);
	T.wround = xmalloc(cells * sizeof *T.wround);
	T.payload = xmalloc(((size_t)u->list->nchunk + 1) * sizeof *T.payload);
	T.prov = xmalloc(((size_t)u->list->nchunk + 1) * sizeof *T.prov);
	for (int r = 0; r < u->s->nrank; r++)
		for (int c = 0; c < u->s->nchunk; c++) {
			Bits init, want;
			bool care;
			sched_small_expected(u->s, r, c, &init, &want, &care);
			size_t cell = (size_t)r * (size_t)u->s->nchunk + (size_t)c;
			T.state[cell] = init;
			T.writer[cell] = -1;
			T.wround[cell] = -1;
		}
	bool ok = true;
	for (int i = 0; i < u->list->n && ok;) {
		int j = i;
		while (j < u->list->n && u->list->x[j].round == u->list->x[i].round)
			j++;
		ok = teach_read(&T, i, j);
		for (int k = i; k < j && ok; k++)
			ok = teach_write(&T, k);
		i = j;
	}
	ok = ok && teach_end(&T);
	warn_empty_reduce(&T);
	free(T.state), free(T.writer), free(T.wround), free(T.payload), free(T.prov);
	return ok ? 0 : -1;
}


void
transfers_sort(TransferList *l)
{
	if (l->n > 0)
		qsort(l->x, (size_t)l->n, sizeof *l->x, order_by_round);
}

int
teach_contention(Diag *dg, const Sched *s, const TransferList *l, Arena *a, TeachTrace *trace)
{
	TeachIn u = {.s = s, .list = l, .arena = a, .trace = trace};
	return check_contention(dg, &u);
}

int
teach_transfers(Diag *dg, const Sched *s, const TransferList *l, Loc whole, Arena *a, TeachTrace *trace)
{
	TeachIn u = {.s = s, .list = l, .whole = whole, .arena = a, .trace = trace};
	return teach(dg, &u);
}
