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
	size_t n = 3u << 20;
	unsigned char *p = arena_alloc(&a, n);
	p[0] = 1;
	p[n - 1] = 2;
	unsigned char *q = arena_alloc(&a, 16);
	CU_ASSERT(q != NULL);
	CU_ASSERT_EQUAL(p[n - 1], 2);
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
