/*
 * hash.h: an open-addressed hash index from keys to the caller's items.
 * Items are integer ids (0, 1, ...) into arrays the caller keeps, with the
 * keys inside them (a schedule's routes, a group's elements, a round's
 * message keys, the names of a file's declarations): the index holds only
 * ids, so a key is never stored twice. The caller gives a key's hash (the
 * FNV-1a helpers below), whether item i has a key (HashEq) and, for the
 * rehash when the index grows, an item's hash (HashOf).
 *
 * Linear probing in a power-of-two array of slots kept at most half full:
 * a lookup looks at no more than 1.5 slots on average when the key is
 * there, 2.5 when it is not (Knuth's estimates at that load). hash_find is
 * static inline, as heap.h's functions are, so that each caller's copy is
 * compiled with its equality known and called without an indirect jump;
 * adding and growing are in hash.c. Which slot an item lands in depends on the hash, but no
 * caller reads the slots in order: outputs never depend on the hash.
 */
#ifndef COLLC_HASH_H
#define COLLC_HASH_H

#include <stdbool.h>
#include <stddef.h>

typedef struct Hash {
	int *slot;    /* item + 1; 0 = free */
	size_t nslot; /* 0 (nothing added yet) or a power of two, at least twice n */
	int n;        /* items held */
} Hash;           /* the zero value is an empty index */

/* Whether the caller's item has `key` (ctx: the caller's arrays). */
typedef bool HashEq(const void *ctx, int item, const void *key);
/* The hash of the caller's item's key, as its key was hashed when added. */
typedef unsigned HashOf(const void *ctx, int item);

/* FNV-1a, 32 bits, over ints (a word at a time) or a string's bytes. */
#define HASH_FNV_BASIS 2166136261u
#define HASH_FNV_PRIME 16777619u

static inline unsigned
hash_ints(const int *k, size_t n)
{
	unsigned h = HASH_FNV_BASIS;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned)k[i]) * HASH_FNV_PRIME;
	return h;
}

static inline unsigned
hash_str(const char *s)
{
	unsigned h = HASH_FNV_BASIS;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * HASH_FNV_PRIME;
	return h;
}

/* A key that is a sequence of ints (a route's links, a message's key):
 * what HashEq receives from the callers that index int sequences. */
typedef struct HashInts {
	const int *k;
	int n;
} HashInts;

/* The item whose key is `key` (hash h), or -1. */
static inline int
hash_find(const Hash *t, unsigned h, const void *key, HashEq *eq, const void *ctx)
{
	if (t->nslot == 0)
		return -1;
	size_t mask = t->nslot - 1;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		int item = t->slot[i] - 1;
		if (item < 0 || eq(ctx, item, key))
			return item;
	}
}

/* Adds `item`, whose key (hash h) the index does not hold yet; when the
 * index grows, the items it holds are placed again by their hash `of`. */
void hash_add(Hash *, unsigned h, int item, HashOf *of, const void *ctx);
/* Makes room for n items without growing on the way (a known count). */
void hash_reserve(Hash *, int n, HashOf *of, const void *ctx);
void hash_clear(Hash *); /* empty, keeping its slots for the next items */
void hash_free(Hash *);  /* frees the slots; the index is then empty */

#endif
