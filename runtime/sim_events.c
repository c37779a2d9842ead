/*
 * sim_events.c: packet mode's event queue (both switchings' event loops run
 * on it; sim_engine.h declares it).
 *
 * Needs: events as (time, kind, id), kinds EV_* in the order they run at
 * equal times. Establishes: events come out in the order (time, kind,
 * order of making), exactly a heap's of (time, kind, sequence), so runs are
 * deterministic; memory is the events queued and their distinct (time,
 * kind) pairs. Why a file of its own: it is a data structure the engines
 * use, not a model, and a further event-driven engine uses it as it is.
 */
#include <stdlib.h>

#include "heap.h"
#include "sim_engine.h"

/* The buckets' order in their heap (base/heap.h's HeapLess). */
static bool
ev_less(const void *pa, const void *pb)
{
	const Ev *a = pa, *b = pb;
	return a->t < b->t || (a->t == b->t && a->kind < b->kind);
}

static unsigned
ev_hash(int64_t t, int kind, int mask)
{
	uint64_t x = ((uint64_t)t ^ (uint64_t)kind << 59) * 0x9E3779B97F4A7C15u;
	return (unsigned)(x >> 32) & (unsigned)mask;
}

/* The hash table grows at half full; open addressing, linear probing. */
static void
ev_rehash(EvQueue *q, int nslot)
{
	free(q->slot);
	q->nslot = nslot;
	q->slot = xmalloc((size_t)nslot * sizeof *q->slot);
	for (int i = 0; i < nslot; i++)
		q->slot[i] = -1;
	for (int b = 0; b < q->bcap; b++) {
		Bucket *k = &q->bucket[b];
		if (k->kind < 0)
			continue;
		unsigned i = ev_hash(k->t, k->kind, nslot - 1);
		while (q->slot[i] >= 0)
			i = (i + 1) & (unsigned)(nslot - 1);
		q->slot[i] = b;
		k->slot = (int)i;
	}
}

/* Removes bucket b from the hash table, moving later entries of its probe
 * run back so that no lookup stops early (no tombstones). */
static void
ev_unhash(EvQueue *q, int b)
{
	unsigned mask = (unsigned)q->nslot - 1, i = (unsigned)q->bucket[b].slot, j = i;
	q->slot[i] = -1;
	for (;;) {
		j = (j + 1) & mask;
		int x = q->slot[j];
		if (x < 0)
			return;
		unsigned home = ev_hash(q->bucket[x].t, q->bucket[x].kind, (int)mask);
		/* x may move to i if its home is not cyclically in (i, j] */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			q->slot[i] = x;
			q->bucket[x].slot = (int)i;
			q->slot[j] = -1;
			i = j;
		}
	}
}

/* The buckets' heap (base/heap.h); buckets are unique by (t, kind), so
 * ev_less orders them totally. A bucket leaves the heap once for its
 * thousands of events, so its pop stays out of the event loop's code:
 * inlined into drain it made the loop slower (docs/testing.md, "Measured
 * choices in the code"). */
static void
ev_heap_push(EvQueue *q, Ev e)
{
	heap_push(q->heap, (size_t)q->nheap++, sizeof e, &e, ev_less);
}

static NOINLINE void
ev_heap_pop(EvQueue *q)
{
	heap_pop(q->heap, (size_t)q->nheap--, sizeof *q->heap, ev_less);
}

/* The bucket of (t, kind), made if there is none. */
static int
ev_bucket(EvQueue *q, int64_t t, int kind)
{
	int b = q->last[kind];
	if (b >= 0 && q->bucket[b].t == t && q->bucket[b].kind == kind)
		return b;
	unsigned mask = (unsigned)q->nslot - 1, i = ev_hash(t, kind, q->nslot - 1);
	for (; (b = q->slot[i]) >= 0; i = (i + 1) & mask)
		if (q->bucket[b].t == t && q->bucket[b].kind == kind)
			return q->last[kind] = b;
	if (q->bfree < 0) {
		int old = q->bcap;
		q->bcap = 2 * old;
		q->bucket = xrealloc(q->bucket, (size_t)q->bcap * sizeof *q->bucket);
		q->heap = xrealloc(q->heap, (size_t)q->bcap * sizeof *q->heap);
		for (int k = q->bcap - 1; k >= old; k--)
			q->bucket[k] = (Bucket){.kind = -1, .head = q->bfree}, q->bfree = k;
		ev_rehash(q, 2 * q->bcap);
		return ev_bucket(q, t, kind);
	}
	b = q->bfree;
	q->bfree = q->bucket[b].head;
	q->bucket[b] = (Bucket){.t = t, .kind = kind, .head = -1, .tail = -1, .slot = (int)i};
	q->slot[i] = b;
	ev_heap_push(q, (Ev){t, kind, b});
	return q->last[kind] = b;
}

void
ev_init(EvQueue *q)
{
	*q = (EvQueue){.nfree = -1, .bfree = -1, .bcap = 16};
	for (int k = 0; k < EV_KINDS; k++)
		q->last[k] = -1;
	q->bucket = xmalloc((size_t)q->bcap * sizeof *q->bucket);
	q->heap = xmalloc((size_t)q->bcap * sizeof *q->heap);
	for (int k = q->bcap - 1; k >= 0; k--)
		q->bucket[k] = (Bucket){.kind = -1, .head = q->bfree}, q->bfree = k;
	ev_rehash(q, 2 * q->bcap);
}

void
ev_free(EvQueue *q)
{
	free(q->node), free(q->bucket), free(q->heap), free(q->slot);
}

void
ev_push(EvQueue *q, int64_t t, int kind, int id)
{
	int b = ev_bucket(q, t, kind);
	if (q->nfree < 0) {
		int old = q->ncap;
		q->ncap = old ? 2 * old : 1024;
		q->node = xrealloc(q->node, (size_t)q->ncap * sizeof *q->node);
		for (int k = q->ncap - 1; k >= old; k--)
			q->node[k].next = q->nfree, q->nfree = k;
	}
	int x = q->nfree;
	q->nfree = q->node[x].next;
	q->node[x] = (EvNode){id, -1};
	Bucket *k = &q->bucket[b];
	if (k->tail < 0)
		k->head = x;
	else
		q->node[k->tail].next = x;
	k->tail = x;
	q->n++;
}

Ev
ev_pop(EvQueue *q)
{
	int b = q->heap[0].id;
	Bucket *k = &q->bucket[b];
	int x = k->head;
	Ev e = {k->t, k->kind, q->node[x].id};
	k->head = q->node[x].next;
	q->node[x].next = q->nfree;
	q->nfree = x;
	q->n--;
	if (k->head < 0) {
		ev_heap_pop(q);
		ev_unhash(q, b);
		if (q->last[k->kind] == b)
			q->last[k->kind] = -1;
		k->kind = -1;
		k->head = q->bfree;
		q->bfree = b;
	}
	return e;
}
