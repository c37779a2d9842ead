/*
 * arena.c: region allocation. Each phase allocates from its own arena and
 * frees it whole, so error paths (parser recovery above all) never leak and
 * never need a destructor.
 */
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

/* Under AddressSanitizer each allocation is followed by a poisoned redzone,
 * so that reading or writing one element past an arena array is reported
 * as it is for malloc'd memory (the arena's block would hide it). */
#if defined(__SANITIZE_ADDRESS__)
#define ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_ASAN 1
#endif
#endif
#ifdef ARENA_ASAN
#include <sanitizer/asan_interface.h>
enum { REDZONE = 16 };
#else
#define ASAN_POISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
enum { REDZONE = 0 };
#endif

enum { CHUNK_MIN = 64 * 1024 };

struct ArenaChunk {
	ArenaChunk *next;
	size_t used, cap;
	void *owned; /* a malloc'd block the arena frees (arena_own), or NULL */
	alignas(max_align_t) unsigned char mem[];
};

void *
arena_alloc(Arena *a, size_t n)
{
	const size_t align = alignof(max_align_t);
	if (n > SIZE_MAX / 2)
		out_of_memory(n);
	size_t want = n;
	n = (n + align - 1) & ~(align - 1);
	if (n == 0)
		n = align;
	n += REDZONE;
	ArenaChunk *c = a->head;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > CHUNK_MIN ? n : CHUNK_MIN;
		c = xmalloc(sizeof *c + cap);
		c->next = a->head;
		c->used = 0;
		c->cap = cap;
		c->owned = NULL;
		a->head = c;
	}
	unsigned char *p = c->mem + c->used;
	c->used += n;
	memset(p, 0, n);
	ASAN_POISON_MEMORY_REGION(p + want, n - want);
	return p;
}

void *
arena_array(Arena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / 2 / size)
		out_of_memory(SIZE_MAX);
	return arena_alloc(a, n * size);
}

void *
arena_grow(Arena *a, void *old, int *cap, size_t size)
{
	int ncap = *cap ? *cap * 2 : 8;
	if (*cap > (1 << 29))
		out_of_memory((size_t)*cap * 2 * size);
	void *p = arena_array(a, (size_t)ncap, size);
	if (old)
		memcpy(p, old, (size_t)*cap * size);
	*cap = ncap;
	return p;
}

void *
arena_own(Arena *a, void *block)
{
	ArenaChunk *c = xmalloc(sizeof *c);
	c->used = c->cap = 0;
	c->owned = block;
	/* behind the chunk being filled, which stays the one allocations use */
	if (a->head) {
		c->next = a->head->next;
		a->head->next = c;
	} else {
		c->next = NULL;
		a->head = c;
	}
	return block;
}

char *
arena_strndup(Arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
arena_strdup(Arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *
arena_printf(Arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("bad format");
	char *p = arena_alloc(a, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

void
arena_move(Arena *to, Arena *from)
{
	ArenaChunk *c = from->head;
	if (!c)
		return;
	while (c->next)
		c = c->next;
	c->next = to->head;
	to->head = from->head;
	from->head = NULL;
}

void
arena_free(Arena *a)
{
	for (ArenaChunk *c = a->head, *next; c; c = next) {
		next = c->next;
		ASAN_UNPOISON_MEMORY_REGION(c->mem, c->cap);
		free(c->owned);
		free(c);
	}
	a->head = NULL;
}
