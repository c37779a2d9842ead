/* test_hash.c: base/hash.h, the hash index of the route, group, message-key
 * and symbol tables: FNV-1a's published values, long random runs of finds,
 * adds and clears against a linear search, under the real hash and under
 * hashes that collide everywhere or wrap around the end of the slots. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "tests.h"

/* The caller's side: int sequences back to back, as the schedule's routes. */
typedef struct Store {
	int data[1 << 14];
	int off[1 << 12], len[1 << 12];
	int n, used;
	Hash index;
	unsigned (*hash)(const int *, size_t); /* the hash under test */
	int eq_calls;
} Store;

static bool
seq_is(const void *ctx, int i, const void *key)
{
	Store *st = (Store *)ctx; /* counts its calls */
	const HashInts *q = key;
	st->eq_calls++;
	return st->len[i] == q->n &&
	       memcmp(st->data + st->off[i], q->k, (size_t)q->n * sizeof *q->k) == 0;
}

static unsigned
seq_hash(const void *ctx, int i)
{
	const Store *st = ctx;
	return st->hash(st->data + st->off[i], (size_t)st->len[i]);
}

static unsigned
fnv(const int *k, size_t n)
{
	return hash_ints(k, n);
}

static unsigned
all_collide(const int *k, size_t n)
{
	(void)k, (void)n;
	return 7;
}

/* every key starts at the last slot (any table size) and wraps to slot 0 */
static unsigned
at_the_end(const int *k, size_t n)
{
	(void)k, (void)n;
	return ~0u;
}

/* The reference: the item holding k, by looking at each. */
static int
linear_find(const Store *st, const int *k, int n)
{
	for (int i = 0; i < st->n; i++)
		if (st->len[i] == n && memcmp(st->data + st->off[i], k, (size_t)n * sizeof *k) == 0)
			return i;
	return -1;
}

static int
store_find(Store *st, const int *k, int n)
{
	return hash_find(&st->index, st->hash(k, (size_t)n), &(HashInts){k, n}, seq_is, st);
}

static void
store_add(Store *st, const int *k, int n)
{
	memcpy(st->data + st->used, k, (size_t)n * sizeof *k);
	st->off[st->n] = st->used;
	st->len[st->n] = n;
	st->used += n;
	hash_add(&st->index, st->hash(k, (size_t)n), st->n++, seq_hash, st);
}

static uint64_t
next(uint64_t *x)
{
	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	return *x;
}

/* Whether the index is a power of two of slots at most half full, holding
 * each of the store's items once. */
static bool
well_formed(const Store *st)
{
	const Hash *t = &st->index;
	if (t->n != st->n || (t->nslot & (t->nslot - 1)) != 0 || 2 * (size_t)t->n > t->nslot)
		return false;
	int held = 0;
	for (size_t i = 0; i < t->nslot; i++)
		held += t->slot[i] != 0;
	return held == st->n;
}

/* Random keys of 0..3 ints from a small alphabet (many repeats, and keys
 * that are prefixes of others): find-or-add, checked against the linear
 * search, with a clear now and then; every key is found again at the end. */
static void
random_run(unsigned (*hash)(const int *, size_t), int steps, int alphabet, uint64_t seed)
{
	static Store st;
	memset(&st, 0, sizeof st);
	st.hash = hash;
	uint64_t x = seed;
	int adds = 0, hits = 0, clears = 0;
	for (int step = 0; step < steps; step++) {
		int k[3], n = (int)(next(&x) % 4);
		for (int i = 0; i < n; i++)
			k[i] = (int)(next(&x) % (uint64_t)alphabet) - alphabet / 2;
		if (next(&x) % 500 == 0 || st.n == (int)countof(st.off) || st.used + 3 > (int)countof(st.data)) {
			hash_clear(&st.index);
			st.n = st.used = 0;
			clears++;
			CU_ASSERT_EQUAL(store_find(&st, k, n), -1);
			continue;
		}
		int want = linear_find(&st, k, n), got = store_find(&st, k, n);
		CU_ASSERT_EQUAL_FATAL(got, want);
		if (got < 0 && next(&x) % 4 != 0) { /* a quarter of the misses stay lookups */
			store_add(&st, k, n);
			adds++;
			CU_ASSERT_EQUAL(store_find(&st, k, n), st.n - 1);
		}
		hits += got >= 0;
	}
	CU_ASSERT_TRUE(well_formed(&st));
	for (int i = 0; i < st.n; i++)
		CU_ASSERT_EQUAL(store_find(&st, st.data + st.off[i], st.len[i]), i);
	/* the run did what it is for: adds, repeats and clears */
	CU_ASSERT_TRUE(adds > 100 && hits > 100 && clears > 0);
	hash_free(&st.index);
	CU_ASSERT_TRUE(st.index.nslot == 0 && st.index.slot == NULL && st.index.n == 0);
}

static void
test_random_fnv(void)
{
	random_run(fnv, 100000, 40, 0x9e3779b97f4a7c15u);
	random_run(fnv, 100000, 4, 12345); /* few distinct keys: mostly hits */
}

static void
test_random_colliding(void)
{
	random_run(all_collide, 20000, 12, 777);
	random_run(at_the_end, 20000, 12, 4242);
}

static void
test_empty_and_reserve(void)
{
	static Store st;
	memset(&st, 0, sizeof st);
	st.hash = fnv;
	int k[] = {1, 2, 3};
	CU_ASSERT_EQUAL(store_find(&st, k, 3), -1);
	CU_ASSERT_EQUAL(st.eq_calls, 0); /* an empty index compares nothing */
	hash_reserve(&st.index, 1000, seq_hash, &st);
	CU_ASSERT_TRUE(st.index.nslot >= 2000 && st.index.nslot < 4096);
	const int *slots = st.index.slot;
	for (int i = 0; i < 1000; i++) {
		int key[2] = {i, -i};
		store_add(&st, key, 2);
	}
	CU_ASSERT_PTR_EQUAL(st.index.slot, slots); /* no growth on the way */
	CU_ASSERT_TRUE(well_formed(&st));
	store_add(&st, k, 3); /* past the reservation: grows, every item kept */
	CU_ASSERT_TRUE(well_formed(&st));
	for (int i = 0; i < st.n; i++)
		CU_ASSERT_EQUAL(store_find(&st, st.data + st.off[i], st.len[i]), i);
	hash_free(&st.index);
}

/* FNV-1a 32's published values (the test vectors of its authors). */
static void
test_fnv_values(void)
{
	CU_ASSERT_EQUAL(hash_str(""), 0x811c9dc5u);
	CU_ASSERT_EQUAL(hash_str("a"), 0xe40c292cu);
	CU_ASSERT_EQUAL(hash_str("foobar"), 0xbf9cf968u);
	/* ints a word at a time: one step per int, the int's value as the octet */
	int a[] = {'a'};
	CU_ASSERT_EQUAL(hash_ints(a, 1), 0xe40c292cu);
	CU_ASSERT_EQUAL(hash_ints(NULL, 0), 0x811c9dc5u);
	int ab[] = {1, 2}, ba[] = {2, 1};
	CU_ASSERT_NOT_EQUAL(hash_ints(ab, 2), hash_ints(ba, 2));
}

CU_TestInfo hash_tests[] = {
	{"FNV-1a values", test_fnv_values},
	{"random finds and adds against a linear search", test_random_fnv},
	{"random runs where every key collides", test_random_colliding},
	{"empty index, reserve", test_empty_and_reserve},
	CU_TEST_INFO_NULL,
};
