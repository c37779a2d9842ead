/* test_arena.c: alignment, zeroing, large blocks, growth, strings. */
#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include "tests.h"

static void
test_alignment_and_zero(void)
{
	Arena a = {0};
	int bad = 0;
	for (size_t n = 1; n < 1000; n++) {
		unsigned char *p = arena_alloc(&a, n);
		if ((uintptr_t)p % alignof(max_align_t) != 0)
			bad++;
		for (size_t i = 0; i < n; i++)
			if (p[i] != 0)
				bad++;
		memset(p, 0xab, n);
	}
	CU_ASSERT_EQUAL(bad, 0);
	arena_free(&a);
	CU_ASSERT_PTR_NULL(a.head);
}

static void
test_large_block(void)
{
	Arena a = {0};
	size_t n = 3u << 20, dirty = 0;
	unsigned char *p = arena_alloc(&a, n);
	for (size_t i = 0; i < n; i++)
		dirty += p[i] != 0;
	CU_ASSERT_EQUAL(dirty, 0);
	memset(p, 0xab, n);
	/* the next allocation comes from a new chunk: outside the block, zeroed,
	 * and writing it leaves the block as it was */
	unsigned char *q = arena_alloc(&a, 16);
	uintptr_t pb = (uintptr_t)p, qb = (uintptr_t)q;
	CU_ASSERT(qb + 16 <= pb || qb >= pb + n);
	for (size_t i = 0; i < 16; i++)
		dirty += q[i] != 0;
	memset(q, 0x5a, 16);
	for (size_t i = 0; i < n; i++)
		dirty += p[i] != 0xab;
	CU_ASSERT_EQUAL(dirty, 0);
	arena_free(&a);
}

static void
test_vec_push(void)
{
	Arena a = {0};
	int *v = NULL, n = 0, cap = 0;
	for (int i = 0; i < 10000; i++)
		VEC_PUSH(&a, v, n, cap, i * 3);
	CU_ASSERT_EQUAL(n, 10000);
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += v[i] != i * 3;
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(cap >= n);
	arena_free(&a);
}

static void
test_strings(void)
{
	Arena a = {0};
	CU_ASSERT_STRING_EQUAL(arena_strndup(&a, "torus(8, 8)", 5), "torus");
	CU_ASSERT_STRING_EQUAL(arena_strdup(&a, "mesh"), "mesh");
	CU_ASSERT_STRING_EQUAL(arena_printf(&a, "%s(%d, %d)", "torus", 4, 16), "torus(4, 16)");
	arena_free(&a);
}

CU_TestInfo arena_tests[] = {
	{"alignment and zeroing", test_alignment_and_zero},
	{"block larger than a chunk", test_large_block},
	{"growable arrays", test_vec_push},
	{"strings", test_strings},
	CU_TEST_INFO_NULL,
};
