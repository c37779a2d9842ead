/* test_heap.c: base/heap.h, the simulator's priority queue: pops in order,
 * ties broken by the caller's comparison, and long random runs of pushes
 * and pops against a sorted reference, with the heap property checked. */
#include <stdint.h>
#include <stdlib.h>

#include "heap.h"
#include "tests.h"

static bool
int_less(const void *a, const void *b)
{
	return *(const int *)a < *(const int *)b;
}

/* flow mode's starts: (time, id), ties by id */
typedef struct Start {
	double t;
	int id;
} Start;

static bool
start_less(const void *a, const void *b)
{
	const Start *x = a, *y = b;
	return x->t < y->t || (x->t == y->t && x->id < y->id);
}

/* packet mode's buckets: (time, kind); the id is carried, not compared */
typedef struct Bucket {
	int64_t t;
	int kind, id;
} Bucket;

static bool
bucket_less(const void *a, const void *b)
{
	const Bucket *x = a, *y = b;
	return x->t < y->t || (x->t == y->t && x->kind < y->kind);
}

/* Whether no element of the heap of n goes before its parent. */
static bool
is_heap(const void *base, size_t n, size_t size, HeapLess *less)
{
	const char *h = base;
	for (size_t i = 1; i < n; i++)
		if (less(h + i * size, h + (i - 1) / HEAP_ARITY * size))
			return false;
	return true;
}

static void
test_pops_sorted(void)
{
	int in[] = {5, 3, 9, 1, 7, 2, 8, 0, 6, 4, 12, 11, 10, -3, 100, -1};
	int h[countof(in)];
	size_t n = 0;
	for (size_t i = 0; i < countof(in); i++) {
		heap_push(h, n++, sizeof *h, &in[i], int_less);
		CU_ASSERT(is_heap(h, n, sizeof *h, int_less));
	}
	int want[] = {-3, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 100};
	for (size_t i = 0; i < countof(want); i++) {
		CU_ASSERT_EQUAL(h[0], want[i]);
		heap_pop(h, n--, sizeof *h, int_less);
		CU_ASSERT(is_heap(h, n, sizeof *h, int_less));
	}
	CU_ASSERT_EQUAL(n, 0);
}

/* equal times pop by id (the flow heap), by kind (the event queue), in
 * whatever order they were pushed */
static void
test_ties(void)
{
	Start s[8];
	size_t n = 0;
	int ids[] = {7, 3, 5, 1, 6, 0, 4, 2};
	for (int i = 0; i < 8; i++) {
		Start x = {i % 2 ? 2.5 : 1.0, ids[i]};
		heap_push(s, n++, sizeof x, &x, start_less);
	}
	/* time 1.0 holds ids 7, 5, 6, 4; time 2.5 holds 3, 1, 0, 2 */
	const Start want[] = {{1.0, 4}, {1.0, 5}, {1.0, 6}, {1.0, 7},
	                      {2.5, 0}, {2.5, 1}, {2.5, 2}, {2.5, 3}};
	for (int i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(s[0].t, want[i].t);
		CU_ASSERT_EQUAL(s[0].id, want[i].id);
		heap_pop(s, n--, sizeof *s, start_less);
	}

	Bucket b[6];
	n = 0;
	const Bucket in[] = {{10, 4, 0}, {10, 0, 1}, {5, 3, 2}, {10, 2, 3}, {5, 0, 4}, {7, 1, 5}};
	for (int i = 0; i < 6; i++)
		heap_push(b, n++, sizeof *b, &in[i], bucket_less);
	const int order[] = {4, 2, 5, 1, 3, 0}; /* (5,0) (5,3) (7,1) (10,0) (10,2) (10,4) */
	for (int i = 0; i < 6; i++) {
		CU_ASSERT_EQUAL(b[0].id, order[i]);
		heap_pop(b, n--, sizeof *b, bucket_less);
	}
	CU_ASSERT_EQUAL(n, 0);
}

static uint64_t
next_rand(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return *s;
}

static int
start_cmp(const void *a, const void *b)
{
	return start_less(a, b) ? -1 : start_less(b, a);
}

/* Random pushes and pops (few distinct times, so many ties) against a
 * reference kept sorted: every pop must be the reference's least. */
static void
test_random_against_sorted(void)
{
	enum { OPS = 40000, CAP = 50000 };
	Start *h = malloc(CAP * sizeof *h), *ref = malloc(CAP * sizeof *ref);
	size_t n = 0, nref = 0, head = 0, most = 0;
	uint64_t seed = 0x9E3779B97F4A7C15u;
	int wrong = 0, broken = 0, next_id = 0;
	for (int op = 0; op < OPS; op++) {
		/* pushes win 3 to 2 in the first half, lose 2 to 3 after */
		uint64_t r = next_rand(&seed);
		bool push = n == 0 || (int)(r % 5) < (op < OPS / 2 ? 3 : 2);
		if (push) {
			Start x = {(double)(next_rand(&seed) % 64) * 0.25, next_id++};
			if (next_rand(&seed) % 2) /* ids not in the order of pushing */
				x.id = -x.id;
			heap_push(h, n++, sizeof x, &x, start_less);
			/* the reference: a sorted run ref[head..nref), insertion */
			size_t i = nref++;
			while (i > head && start_less(&x, &ref[i - 1]))
				ref[i] = ref[i - 1], i--;
			ref[i] = x;
		} else {
			wrong += h[0].t != ref[head].t || h[0].id != ref[head].id;
			heap_pop(h, n--, sizeof *h, start_less);
			head++;
		}
		if (op % 997 == 0)
			broken += !is_heap(h, n, sizeof *h, start_less);
		most = n > most ? n : most;
		if (head == nref) /* the reference is empty: start it over */
			head = nref = 0;
	}
	while (n > 0) {
		wrong += h[0].t != ref[head].t || h[0].id != ref[head].id;
		heap_pop(h, n--, sizeof *h, start_less);
		head++;
	}
	CU_ASSERT_EQUAL(wrong, 0);
	CU_ASSERT_EQUAL(broken, 0);
	CU_ASSERT_EQUAL(head, nref);
	CU_ASSERT(most > 1000); /* the heap grew several levels deep */

	/* and a whole heap of CAP drained is the sorted array */
	n = 0;
	for (int i = 0; i < CAP; i++) {
		ref[i] = (Start){(double)(next_rand(&seed) % 1000), i};
		heap_push(h, n++, sizeof *h, &ref[i], start_less);
	}
	qsort(ref, CAP, sizeof *ref, start_cmp);
	wrong = 0;
	for (int i = 0; i < CAP; i++) {
		wrong += h[0].t != ref[i].t || h[0].id != ref[i].id;
		heap_pop(h, n--, sizeof *h, start_less);
	}
	CU_ASSERT_EQUAL(wrong, 0);
	free(h), free(ref);
}

CU_TestInfo heap_tests[] = {
	{"pops in sorted order", test_pops_sorted},
	{"ties by the caller's order", test_ties},
	{"random pushes and pops against a sorted reference", test_random_against_sorted},
	CU_TEST_INFO_NULL,
};
