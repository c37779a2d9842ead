/*
 * hash.c: adding to and growing hash.h's index. Needs the caller's HashOf
 * only when it grows: every item held is placed again in twice the slots.
 */
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "hash.h"

enum { HASH_MIN_SLOTS = 16 };

/* Puts item in the first free slot from h's (the key is known absent). */
static void
place(Hash *t, unsigned h, int item)
{
	size_t mask = t->nslot - 1, i = h & mask;
	while (t->slot[i])
		i = (i + 1) & mask;
	t->slot[i] = item + 1;
}

/* Grows to the least power of two (HASH_MIN_SLOTS at least) with room for
 * n items at most half full, placing again the items held. */
static void
grow(Hash *t, size_t n, HashOf *of, const void *ctx)
{
	size_t nslot = t->nslot ? t->nslot : HASH_MIN_SLOTS;
	while (nslot < 2 * n)
		nslot *= 2;
	if (nslot == t->nslot)
		return;
	int *old = t->slot;
	size_t nold = t->nslot;
	t->slot = xcalloc(nslot, sizeof *t->slot);
	t->nslot = nslot;
	for (size_t i = 0; i < nold; i++)
		if (old[i])
			place(t, of(ctx, old[i] - 1), old[i] - 1);
	free(old);
}

void
hash_add(Hash *t, unsigned h, int item, HashOf *of, const void *ctx)
{
	if (2 * ((size_t)t->n + 1) > t->nslot)
		grow(t, (size_t)t->n + 1, of, ctx);
	place(t, h, item);
	t->n++;
}

void
hash_reserve(Hash *t, int n, HashOf *of, const void *ctx)
{
	if (n > 0 && 2 * (size_t)n > t->nslot)
		grow(t, (size_t)n, of, ctx);
}

void
hash_clear(Hash *t)
{
	if (t->nslot)
		memset(t->slot, 0, t->nslot * sizeof *t->slot);
	t->n = 0;
}

void
hash_free(Hash *t)
{
	free(t->slot);
	*t = (Hash){0};
}
