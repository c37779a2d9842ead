/*
 * heap.h: a 4-ary min-heap over a caller's array of fixed-size elements,
 * ordered by a comparison the caller gives. The simulator keeps two queues
 * on its hot paths with it (runtime/sim_events.c: packet mode's buckets by
 * (time, kind); runtime/sim_flow.c: flow mode's message starts by (time, id)).
 *
 * The caller owns the array and its count and grows it (the event queue
 * sizes its heap with its buckets); the heap only orders. `less` must be a
 * strict total order on the elements that are in the heap together: then
 * the order of pops is the sorted order whatever the shape of the heap,
 * which is what keeps the simulator's output deterministic.
 *
 * Four children a node: half the depth of a binary heap, and a node's
 * children side by side in one or two cache lines. A pop takes the hole
 * down to a leaf by the least child, found by a tournament of three
 * comparisons that compile to conditional moves, and brings the last
 * element up from there (it came from the bottom, so it seldom climbs):
 * half the mispredicted branches of the textbook binary heap. Both
 * functions are static inline so that each caller's copy is compiled with
 * its own element size and comparison known, as if written for its type;
 * the measurements are in docs/testing.md ("Measured choices in the code").
 */
#ifndef COLLC_HEAP_H
#define COLLC_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

enum { HEAP_ARITY = 4 };
_Static_assert(HEAP_ARITY == 4, "heap_pop's tournament is written for four children");

/* Whether element a goes before element b. */
typedef bool HeapLess(const void *a, const void *b);

#define HEAP_AT(base, i, size) ((char *)(base) + (i) * (size))

/* Adds *x to the heap of n elements at base, which has room for n + 1;
 * x must not point into the array. The caller then counts n + 1. */
static inline void
heap_push(void *base, size_t n, size_t size, const void *x, HeapLess *less)
{
	size_t i = n;
	while (i > 0) {
		size_t p = (i - 1) / HEAP_ARITY;
		if (!less(x, HEAP_AT(base, p, size)))
			break;
		memcpy(HEAP_AT(base, i, size), HEAP_AT(base, p, size), size);
		i = p;
	}
	memcpy(HEAP_AT(base, i, size), x, size);
}

/* Removes the least element (base[0], which the caller has read) from the
 * heap of n > 0 elements at base. The caller then counts n - 1. */
static inline void
heap_pop(void *base, size_t n, size_t size, HeapLess *less)
{
	/* the last element fills the hole; it stays at base[n - 1], beyond
	 * every place the hole passes, until its place is found */
	const void *last = HEAP_AT(base, --n, size);
	size_t i = 0;
	for (;;) { /* the hole down to a leaf */
		size_t c = HEAP_ARITY * i + 1, best = c;
		if (c + HEAP_ARITY <= n) { /* four children: two pairs, then their winners */
			size_t a = c + less(HEAP_AT(base, c + 1, size), HEAP_AT(base, c, size));
			size_t b = c + 2 + less(HEAP_AT(base, c + 3, size), HEAP_AT(base, c + 2, size));
			best = less(HEAP_AT(base, b, size), HEAP_AT(base, a, size)) ? b : a;
		} else if (c < n) {
			for (size_t k = c + 1; k < n; k++)
				if (less(HEAP_AT(base, k, size), HEAP_AT(base, best, size)))
					best = k;
		} else {
			break;
		}
		memcpy(HEAP_AT(base, i, size), HEAP_AT(base, best, size), size);
		i = best;
	}
	while (i > 0) { /* the last element up to its place */
		size_t p = (i - 1) / HEAP_ARITY;
		if (!less(last, HEAP_AT(base, p, size)))
			break;
		memcpy(HEAP_AT(base, i, size), HEAP_AT(base, p, size), size);
		i = p;
	}
	if (i != n)
		memcpy(HEAP_AT(base, i, size), last, size);
}

#undef HEAP_AT

#endif
