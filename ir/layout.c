/*
 * layout.c: the chunk layout every backend shares. It needs a verified
 * schedule (explicit or symmetric) and establishes, without expanding a
 * symmetric one into messages:
 *
 *  - where each chunk lies in the buffers: its block (the whole vector for
 *    allreduce, broadcast and reduce; the owner's block for reduce_scatter
 *    and allgather; the (source, destination) pair's block for alltoall)
 *    and its position in the block. The position is free, so chunks are
 *    ordered to make as many messages as possible one run of the buffer:
 *    the chunk sets of the messages, heaviest first, are kept while they
 *    stay laminar (two sets nest or are disjoint), and a laminar family
 *    always has an order in which each of its sets is a run (depth first
 *    through the nesting). The order is kept only when it packs fewer
 *    chunks than the schedule's own. MSCCL makes a run one step, MPI sends
 *    and receives a run in place; both run tests pass on this order.
 *  - all-to-all parking: the last round in which each rank sends each
 *    chunk, so that a backend writing in place knows which output slot
 *    still holds input to send.
 *
 * sched_copies() walks a symmetric schedule's copies of base transfers
 * without expanding it; the layout's message sets and MSCCL's bound
 * (backends/to_msccl_bound.c) both count from it.
 *
 * msg_deps() gives an explicit schedule's per-message dependencies: what
 * a message reads at its sender and what it overwrites at its receiver.
 * The backends keep their own cost measures (steps, packed bytes, time).
 *
 * Not used by backends/msccl_to_sim.c, on purpose: a foreign MSCCL program has
 * no chunk sets to order and its buffers and offsets are fixed; the
 * executor's step order is its meaning, so its dependencies come from the
 * program as written (docs/ir.md, 7.2).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* Past this many copies of base transfers a symmetric schedule keeps its
 * own order: gathering its messages would cost more than the order saves. */
enum { ORDER_EXPAND_LIMIT = 1 << 21, ORDER_MAX_SETS = 4096 };

/* Message chunk sets, set i is chunk[off[i] .. off[i + 1]), sorted. */
typedef struct ChunkSets {
	int n, cap;
	long *off;
	int *chunk;
	long nchunk, capchunk;
} ChunkSets;

static void
sets_add(ChunkSets *cs, const int *chunk, int n)
{
	if (cs->n + 1 >= cs->cap) {
		cs->cap = cs->cap ? 2 * cs->cap : 64;
		cs->off = xrealloc(cs->off, (size_t)cs->cap * sizeof *cs->off);
	}
	if (!cs->chunk || cs->nchunk + n > cs->capchunk) { /* never NULL: NULL + 0 is undefined */
		cs->capchunk = 2 * (cs->nchunk + n);
		cs->chunk = xrealloc(cs->chunk, (size_t)cs->capchunk * sizeof *cs->chunk);
	}
	cs->off[cs->n] = cs->nchunk;
	copy_n(cs->chunk + cs->nchunk, chunk, (size_t)n, sizeof *chunk);
	sort_n(cs->chunk + cs->nchunk, (size_t)n, sizeof *chunk, cmp_int);
	cs->nchunk += n;
	cs->off[++cs->n] = cs->nchunk;
}

long
sched_copies(const Sched *s, const bool *keep, XferCopy **out)
{
	const Group *g = s->group;
	int nnode = s->topo->nnode, nused = 0;
	int *img = xmalloc(((size_t)nnode + 1) * sizeof *img);
	int *used = xmalloc(((size_t)nnode + 1) * sizeof *used);
	for (int u = 0; u < nnode; u++)
		img[u] = -1;
	for (int i = 0; i < s->nbase; i++)
		for (int k = 0; k < 2; k++) {
			int u = k ? s->base[i].dst : s->base[i].src;
			if (img[u] < 0)
				img[u] = 0, used[nused++] = u;
		}
	XferCopy *v = NULL;
	long n = 0, cap = 0;
	for (int e = 0; e < g->order; e++) {
		for (int k = 0; k < nused; k++)
			img[used[k]] = s->node_rank[group_node(g, e, used[k])];
		for (int i = 0; i < s->nbase; i++) {
			const BaseXfer *x = &s->base[i];
			int src = img[x->src], dst = img[x->dst];
			if (keep && !keep[src] && !keep[dst])
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 1024;
				v = xrealloc(v, (size_t)cap * sizeof *v);
			}
			v[n++] = (XferCopy){x->round, src, dst, (int)x->op, x->tree * g->order + e};
		}
	}
	free(img);
	free(used);
	*out = v;
	return n;
}

/* Copies grouped as messages by (round, src, dst, op), then by chunk. */
static int
copy_order(const void *a, const void *b)
{
	const XferCopy *x = a, *y = b;
	const int kx[] = {x->round, x->src, x->dst, x->op, x->chunk};
	const int ky[] = {y->round, y->src, y->dst, y->op, y->chunk};
	for (int i = 0; i < 5; i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	return 0;
}

/* The chunk sets of the schedule's messages; false when too many to gather. */
static bool
message_sets(const Sched *s, ChunkSets *cs)
{
	if (!s->base) {
		for (int i = 0; i < s->nmsg; i++)
			sets_add(cs, s->chunks + s->msg[i].first, s->msg[i].n);
		return true;
	}
	if ((long)s->nbase * s->group->order > ORDER_EXPAND_LIMIT)
		return false;
	XferCopy *c;
	long n = sched_copies(s, NULL, &c);
	if (n > 0)
		sort_n(c, (size_t)n, sizeof *c, copy_order);
	int *buf = xmalloc((size_t)(s->nchunk + 1) * sizeof *buf);
	for (long i = 0, j; i < n; i = j) {
		int k = 0;
		for (j = i; j < n && c[j].round == c[i].round && c[j].src == c[i].src &&
		            c[j].dst == c[i].dst && c[j].op == c[i].op; j++)
			buf[k++] = c[j].chunk;
		sets_add(cs, buf, k);
	}
	free(buf), free(c);
	return true;
}

/* Chunks of sets moved in packed messages (not one run) under the order pos. */
static long
packed_chunks(const ChunkSets *cs, const int *pos)
{
	long packed = 0;
	for (int i = 0; i < cs->n; i++) {
		long n = cs->off[i + 1] - cs->off[i];
		int lo = INT_MAX, hi = INT_MIN;
		for (long k = cs->off[i]; k < cs->off[i + 1]; k++) {
			int p = pos[cs->chunk[k]];
			lo = p < lo ? p : lo;
			hi = p > hi ? p : hi;
		}
		if (n > 1 && hi - lo != n - 1)
			packed += n;
	}
	return packed;
}

/* Runs of consecutive positions the sets fall into under the order pos:
 * a backend that moves a run in one step (MSCCL) takes this many. */
static long
runs_of(const ChunkSets *cs, const int *pos)
{
	long runs = 0;
	int *p = NULL;
	long cap = 0;
	for (int i = 0; i < cs->n; i++) {
		long n = cs->off[i + 1] - cs->off[i];
		if (n > cap) {
			cap = 2 * n;
			p = xrealloc(p, (size_t)cap * sizeof *p);
		}
		for (long k = 0; k < n; k++)
			p[k] = pos[cs->chunk[cs->off[i] + k]];
		sort_n(p, (size_t)n, sizeof *p, cmp_int);
		for (long k = 0; k < n; k++)
			runs += k == 0 || p[k] != p[k - 1] + 1;
	}
	free(p);
	return runs;
}

/* A set with what set_order compares, so qsort needs no context. */
typedef struct SetRef {
	long n;
	const int *chunk;
	int set;
} SetRef;

static SetRef
set_ref(const ChunkSets *cs, int set)
{
	return (SetRef){cs->off[set + 1] - cs->off[set], cs->chunk + cs->off[set], set};
}

/* By size (largest first), then contents: equal sets become neighbours. */
static int
set_order(const void *a, const void *b)
{
	const SetRef *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	int c = memcmp(x->chunk, y->chunk, (size_t)x->n * sizeof(int));
	return c ? c : (x->set > y->set) - (x->set < y->set);
}

typedef struct Weighted {
	int set;
	long weight; /* chunks moved in messages with this set */
} Weighted;

static int
weight_order(const void *a, const void *b)
{
	const Weighted *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return (x->set > y->set) - (x->set < y->set);
}

/* Item of the nesting: a chunk or a kept set, under its innermost kept set. */
typedef struct Item {
	int parent; /* kept set, or -1 */
	int key;    /* smallest chunk: items in the schedule's own order */
	int set;    /* -1 for a chunk */
	int chunk;
} Item;

static int
item_order(const void *a, const void *b)
{
	const Item *x = a, *y = b;
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return (x->key > y->key) - (x->key < y->key);
}

typedef struct Nesting {
	const int *blk;
	Item *item;
	int *first; /* items under kept set k: item[first[k + 1] .. first[k + 2]) */
	int *next;  /* next free piece of each block */
	int *piece;
} Nesting;

static void
place(Nesting *ns, int parent)
{
	for (int i = ns->first[parent + 1]; i < ns->first[parent + 2]; i++) {
		const Item *it = &ns->item[i];
		if (it->set < 0)
			ns->piece[it->chunk] = ns->next[ns->blk[it->chunk]]++;
		else
			place(ns, it->set);
	}
}

/* The distinct sets of two or more chunks in one block, heaviest first (a
 * set's weight: its chunks times the messages that carry it). */
static Weighted *
weighted_sets(const ChunkSets *cs, const int *blk, int *nw)
{
	SetRef *idx = xmalloc((size_t)cs->n * sizeof *idx + 1);
	for (int i = 0; i < cs->n; i++)
		idx[i] = set_ref(cs, i);
	sort_n(idx, (size_t)cs->n, sizeof *idx, set_order);
	Weighted *w = xmalloc((size_t)cs->n * sizeof *w + 1);
	*nw = 0;
	for (int i = 0, j; i < cs->n; i = j) {
		long n = idx[i].n;
		for (j = i + 1; j < cs->n && idx[j].n == n &&
		                !memcmp(idx[i].chunk, idx[j].chunk, (size_t)n * sizeof(int)); j++)
			;
		const int *ch = idx[i].chunk;
		bool one_block = true;
		for (long k = 1; k < n; k++)
			one_block &= blk[ch[k]] == blk[ch[0]];
		if (n > 1 && one_block)
			w[(*nw)++] = (Weighted){idx[i].set, n * (j - i)};
	}
	free(idx);
	sort_n(w, (size_t)*nw, sizeof *w, weight_order);
	return w;
}

/* The sets that nest with or miss every set kept before, largest first (so
 * that a set's parent comes before it). */
static SetRef *
laminar_sets(const ChunkSets *cs, const Weighted *w, int nw, int nc, int *nkept)
{
	SetRef *kept = xmalloc((size_t)(nw + 1) * sizeof *kept);
	int *mark = xcalloc((size_t)nc + 1, sizeof *mark);
	*nkept = 0;
	for (int i = 0; i < nw && i < ORDER_MAX_SETS; i++) {
		SetRef r = set_ref(cs, w[i].set);
		for (long k = 0; k < r.n; k++)
			mark[r.chunk[k]] = i + 1;
		bool laminar = true;
		for (int t = 0; t < *nkept && laminar; t++) {
			long common = 0;
			for (long k = 0; k < kept[t].n; k++)
				common += mark[kept[t].chunk[k]] == i + 1;
			laminar = common == 0 || common == r.n || common == kept[t].n;
		}
		if (laminar)
			kept[(*nkept)++] = r;
	}
	free(mark);
	sort_n(kept, (size_t)*nkept, sizeof *kept, set_order);
	return kept;
}

/* The pieces of a depth-first walk through the nesting of the kept sets. */
static void
nested_pieces(const SetRef *kept, int nkept, int nc, int nblock, const int *blk, int *piece)
{
	int *inner = xmalloc((size_t)nc * sizeof *inner + 1);
	for (int c = 0; c < nc; c++)
		inner[c] = -1;
	Item *item = xmalloc((size_t)(nkept + nc) * sizeof *item + 1);
	for (int k = 0; k < nkept; k++) {
		item[k] = (Item){inner[kept[k].chunk[0]], kept[k].chunk[0], k, -1};
		for (long i = 0; i < kept[k].n; i++)
			inner[kept[k].chunk[i]] = k;
	}
	for (int c = 0; c < nc; c++)
		item[nkept + c] = (Item){inner[c], c, -1, c};
	sort_n(item, (size_t)(nkept + nc), sizeof *item, item_order);
	int *first = xcalloc((size_t)nkept + 2, sizeof *first);
	for (int i = 0; i < nkept + nc; i++)
		first[item[i].parent + 2]++;
	for (int k = 1; k < nkept + 2; k++)
		first[k] += first[k - 1];
	int *next = xcalloc((size_t)nblock + 1, sizeof *next);
	Nesting ns = {blk, item, first, next, piece};
	place(&ns, -1);
	free(inner), free(item), free(first), free(next);
}

/* A chunk keyed by its block and the sets that carry it, in set order. */
typedef struct CarriedBy {
	int block, n;
	const int *set;
	int chunk;
} CarriedBy;

static int
carried_order(const void *x, const void *y)
{
	const CarriedBy *a = x, *b = y;
	if (a->block != b->block)
		return a->block < b->block ? -1 : 1;
	for (int i = 0; i < a->n && i < b->n; i++)
		if (a->set[i] != b->set[i])
			return a->set[i] < b->set[i] ? -1 : 1;
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	return (a->chunk > b->chunk) - (a->chunk < b->chunk);
}

/* The pieces of chunks sorted by the list of messages that carry them (in
 * schedule order): chunks sharing their early messages become neighbours,
 * so a message is few runs even where the sets do not nest. */
static void
carried_pieces(const ChunkSets *cs, int nc, int nblock, const int *blk, int *piece)
{
	int *n = xcalloc((size_t)nc + 1, sizeof *n);
	for (long k = 0; k < cs->nchunk; k++)
		n[cs->chunk[k]]++;
	int *start = xmalloc(((size_t)nc + 1) * sizeof *start);
	start[0] = 0;
	for (int c = 0; c < nc; c++)
		start[c + 1] = start[c] + n[c];
	int *set = xmalloc((size_t)cs->nchunk * sizeof *set + 1);
	memset(n, 0, (size_t)nc * sizeof *n);
	for (int i = 0; i < cs->n; i++)
		for (long k = cs->off[i]; k < cs->off[i + 1]; k++)
			set[start[cs->chunk[k]] + n[cs->chunk[k]]++] = i;
	CarriedBy *by = xmalloc((size_t)nc * sizeof *by + 1);
	for (int c = 0; c < nc; c++)
		by[c] = (CarriedBy){blk[c], n[c], set + start[c], c};
	sort_n(by, (size_t)nc, sizeof *by, carried_order);
	int *next = xcalloc((size_t)nblock + 1, sizeof *next);
	for (int i = 0; i < nc; i++)
		piece[by[i].chunk] = next[by[i].block]++;
	free(n), free(start), free(set), free(by), free(next);
}

/* Takes the candidate pieces when they pack fewer chunks than the layout's,
 * and as run_piece when they make fewer runs. */
static void
try_pieces(const ChunkSets *cs, Layout *L, int nc, const int *piece, int *pos)
{
	for (int c = 0; c < nc; c++)
		pos[c] = L->block[c] * L->per + piece[c];
	long runs = runs_of(cs, pos);
	if (L->runs < 0 || runs < L->runs) {
		copy_n(L->run_piece, piece, (size_t)nc, sizeof *piece);
		copy_n(L->run_pos, pos, (size_t)nc, sizeof *pos);
		L->runs = runs;
	}
	long packed = packed_chunks(cs, pos);
	if (packed < L->packed) {
		copy_n(L->piece, piece, (size_t)nc, sizeof *piece);
		copy_n(L->pos, pos, (size_t)nc, sizeof *pos);
		L->packed = packed;
	}
}

/* Chooses L->piece (and pos, packed, own) given L->block: of the chunks
 * in the order of the messages that carry them, the laminar order and the
 * schedule's own, the one that packs the fewest chunks (the first on a tie). */
static void
order_chunks(const Sched *s, Layout *L)
{
	int nc = s->nchunk;
	int *seen = xcalloc((size_t)L->nblock + 1, sizeof *seen);
	for (int c = 0; c < nc; c++)
		L->piece[c] = seen[L->block[c]]++;
	free(seen);
	for (int c = 0; c < nc; c++)
		L->pos[c] = L->block[c] * L->per + L->piece[c];
	ChunkSets cs = {0};
	L->packed = L->own = L->runs = -1;
	if (L->short_block < 0 && message_sets(s, &cs)) {
		L->own = packed_chunks(&cs, L->pos);
		L->packed = LONG_MAX;
		int *own = xmalloc((size_t)nc * sizeof *own + 1);
		int *trial = xmalloc((size_t)nc * sizeof *trial + 1);
		int *pos = xmalloc((size_t)nc * sizeof *pos + 1);
		copy_n(own, L->piece, (size_t)nc, sizeof *own);
		carried_pieces(&cs, nc, L->nblock, L->block, trial);
		try_pieces(&cs, L, nc, trial, pos);
		int nw, nkept;
		Weighted *w = weighted_sets(&cs, L->block, &nw);
		SetRef *kept = laminar_sets(&cs, w, nw, nc, &nkept);
		nested_pieces(kept, nkept, nc, L->nblock, L->block, trial);
		try_pieces(&cs, L, nc, trial, pos);
		try_pieces(&cs, L, nc, own, pos);
		free(w), free(kept), free(own), free(trial), free(pos);
	}
	if (L->runs < 0) {
		copy_n(L->run_piece, L->piece, (size_t)nc, sizeof *L->piece);
		copy_n(L->run_pos, L->pos, (size_t)nc, sizeof *L->pos);
	}
	free(cs.off), free(cs.chunk);
}

/* The last round each rank sends each chunk (alltoall), from the messages
 * or from the copies of the base transfers. */
static void
last_sends(Arena *a, const Sched *s, Layout *L)
{
	int nc = s->nchunk;
	L->last_send = arena_array(a, (size_t)s->nrank * nc + 1, sizeof(int));
	for (long k = 0; k < (long)s->nrank * nc; k++)
		L->last_send[k] = -1;
	for (int i = 0; !s->base && i < s->nmsg; i++)
		for (int j = 0; j < s->msg[i].n; j++)
			L->last_send[s->msg[i].src * nc + s->chunks[s->msg[i].first + j]] = s->msg[i].round;
	for (int i = 0; s->base && i < s->nbase; i++)
		for (int e = 0; e < s->group->order; e++) {
			const BaseXfer *x = &s->base[i];
			int *k = &L->last_send[s->node_rank[group_node(s->group, e, x->src)] * nc +
			                       x->tree * s->group->order + e];
			*k = x->round > *k ? x->round : *k;
		}
}

void
layout_build(Arena *a, const Sched *s, Layout *L)
{
	int nc = s->nchunk, R = s->nrank;
	memset(L, 0, sizeof *L);
	bool owned = s->kind == CK_REDUCE_SCATTER || s->kind == CK_ALLGATHER;
	L->nblock = owned ? R : s->kind == CK_ALLTOALL ? R * R : 1;
	L->per = nc / L->nblock;
	L->block = arena_array(a, (size_t)nc + 1, sizeof(int));
	L->piece = arena_array(a, (size_t)nc + 1, sizeof(int));
	L->pos = arena_array(a, (size_t)nc + 1, sizeof(int));
	L->run_piece = arena_array(a, (size_t)nc + 1, sizeof(int));
	L->run_pos = arena_array(a, (size_t)nc + 1, sizeof(int));
	for (int c = 0; c < nc; c++)
		L->block[c] = owned ? s->owner[c]
		              : s->kind == CK_ALLTOALL ? s->a2a_src[c] * R + s->a2a_dst[c] : 0;
	int *count = xcalloc((size_t)L->nblock + 1, sizeof *count);
	for (int c = 0; c < nc; c++)
		count[L->block[c]]++;
	L->short_block = -1;
	for (int b = 0; b < L->nblock && L->short_block < 0; b++)
		if (count[b] != L->per || L->per * L->nblock != nc) {
			L->short_block = b;
			L->short_count = count[b];
		}
	free(count);
	order_chunks(s, L);
	if (s->kind == CK_ALLTOALL)
		last_sends(a, s, L);
}

/* ---- per-message dependencies ---- */

/* (rank, chunk, access) -> the messages that accessed that chunk on that
 * rank (delivered it there, or read it there), as linked lists in one
 * pool, open-addressed by key; the latest first. */
typedef struct Access {
	int64_t *key;
	int *head;
	size_t mask;
	int *pmsg, *pnext;
	size_t npool;
} Access;

enum { DELIVERED, READ };

static int64_t
access_key(const Sched *s, int rank, int chunk, int how)
{
	return ((int64_t)rank * s->nchunk + chunk) * 2 + how;
}

static size_t
access_slot(const Access *d, int64_t key)
{
	size_t h = (size_t)((uint64_t)key * 0x9e3779b97f4a7c15ull >> 7) & d->mask;
	while (d->key[h] != -1 && d->key[h] != key)
		h = (h + 1) & d->mask;
	return h;
}

/* The first of key's list (pool index + 1; 0 when empty). */
static int
access_first(const Access *d, int64_t key)
{
	size_t h = access_slot(d, key);
	return d->key[h] == key ? d->head[h] : 0;
}

static void
access_add(Access *d, int64_t key, int msg)
{
	size_t h = access_slot(d, key);
	if (d->key[h] == -1) {
		d->key[h] = key;
		d->head[h] = 0;
	}
	d->pmsg[d->npool] = msg;
	d->pnext[d->npool] = d->head[h];
	d->head[h] = (int)++d->npool;
}

/* Appends to deps the messages of key's list not yet listed for message j. */
static void
add_accesses(Arena *a, const Access *d, int64_t key, int j, int *stamp, int **deps, int *n,
             int *cap)
{
	for (int p = access_first(d, key) - 1; p >= 0; p = d->pnext[p] - 1) {
		int from = d->pmsg[p];
		if (stamp[from] == j || from == j)
			continue;
		stamp[from] = j;
		VEC_PUSH(a, *deps, *n, *cap, from);
	}
}

void
msg_deps(Arena *a, const Sched *s, bool writes, MsgDeps *out)
{
	memset(out, 0, sizeof *out);
	size_t refs = 0;
	for (int i = 0; i < s->nmsg; i++)
		refs += (size_t)s->msg[i].n;
	Access d = {0};
	size_t nslot = 1024;
	while (nslot < (writes ? 4 : 2) * refs)
		nslot *= 2;
	d.mask = nslot - 1;
	d.key = xmalloc(nslot * sizeof *d.key);
	d.head = xmalloc(nslot * sizeof *d.head);
	size_t npool = (writes ? 2 : 1) * refs + 1;
	d.pmsg = xmalloc(npool * sizeof *d.pmsg);
	d.pnext = xmalloc(npool * sizeof *d.pnext);
	memset(d.key, 0xff, nslot * sizeof *d.key);
	int *rstamp = xmalloc(((size_t)s->nmsg + 1) * sizeof *rstamp);
	int *wstamp = xmalloc(((size_t)s->nmsg + 1) * sizeof *wstamp);
	for (int i = 0; i < s->nmsg; i++)
		rstamp[i] = wstamp[i] = -1;
	out->read_off = arena_array(a, (size_t)s->nmsg + 1, sizeof(int));
	if (writes)
		out->write_off = arena_array(a, (size_t)s->nmsg + 1, sizeof(int));
	int nread = 0, capread = 0, nwrite = 0, capwrite = 0;
	for (int i = 0; i < s->nmsg;) {
		int round = s->msg[i].round, j = i;
		for (; j < s->nmsg && s->msg[j].round == round; j++) {
			const Msg *m = &s->msg[j];
			const int *ch = s->chunks + m->first;
			for (int k = 0; k < m->n; k++)
				add_accesses(a, &d, access_key(s, m->src, ch[k], DELIVERED), j, rstamp,
				             &out->read, &nread, &capread);
			out->read_off[j + 1] = nread;
			if (writes)
				for (int k = 0; k < m->n; k++)
					access_add(&d, access_key(s, m->src, ch[k], READ), j);
		}
		/* a write waits for earlier writes and for every read up to its round's */
		for (int k = i; writes && k < j; k++) {
			const Msg *m = &s->msg[k];
			for (int q = 0; q < m->n; q++)
				for (int how = DELIVERED; how <= READ; how++)
					add_accesses(a, &d, access_key(s, m->dst, s->chunks[m->first + q], how), k,
					             wstamp, &out->write, &nwrite, &capwrite);
			out->write_off[k + 1] = nwrite;
		}
		for (int k = i; k < j; k++) {
			const Msg *m = &s->msg[k];
			for (int q = 0; q < m->n; q++)
				access_add(&d, access_key(s, m->dst, s->chunks[m->first + q], DELIVERED), k);
		}
		i = j;
	}
	free(d.key), free(d.head), free(d.pmsg), free(d.pnext), free(rstamp), free(wstamp);
}

/* msg_deps of a symmetric schedule's base transfers, as a schedule whose
 * messages are the base transfers (by round, in base order) and whose chunk
 * b is base tree b: what base transfer i waits for, by base index. */
void
base_deps(Arena *a, const Sched *s, MsgDeps *out)
{
	Sched b = *s;
	b.base = NULL;
	b.nbase = 0;
	b.nchunk = s->ntree;
	b.nmsg = s->nbase;
	int *order = xmalloc(((size_t)s->nbase + 1) * sizeof *order);
	int *pos = xmalloc(((size_t)s->nbase + 1) * sizeof *pos);
	int *start = xcalloc((size_t)s->nround + 2, sizeof *start);
	for (int i = 0; i < s->nbase; i++)
		start[s->base[i].round + 1]++;
	for (int r = 0; r < s->nround; r++)
		start[r + 1] += start[r];
	for (int i = 0; i < s->nbase; i++) {
		pos[i] = start[s->base[i].round]++;
		order[pos[i]] = i;
	}
	b.msg = xmalloc(((size_t)s->nbase + 1) * sizeof *b.msg);
	b.chunks = xmalloc(((size_t)s->nbase + 1) * sizeof *b.chunks);
	for (int k = 0; k < s->nbase; k++) {
		const BaseXfer *x = &s->base[order[k]];
		b.msg[k] = (Msg){.round = x->round, .src = s->node_rank[x->src],
		                 .dst = s->node_rank[x->dst], .route = x->route, .op = x->op,
		                 .first = k, .n = 1};
		b.chunks[k] = x->tree;
	}
	MsgDeps d;
	Arena tmp = {0};
	msg_deps(&tmp, &b, false, &d);
	memset(out, 0, sizeof *out);
	out->read_off = arena_array(a, (size_t)s->nbase + 1, sizeof(int));
	int n = s->nbase ? d.read_off[s->nbase] : 0;
	out->read = arena_array(a, (size_t)n + 1, sizeof(int));
	for (int i = 0, at = 0; i < s->nbase; i++) {
		for (int k = d.read_off[pos[i]]; k < d.read_off[pos[i] + 1]; k++)
			out->read[at++] = order[d.read[k]];
		out->read_off[i + 1] = at;
	}
	arena_free(&tmp);
	free(order), free(pos), free(start), free(b.msg), free(b.chunks);
}
