/*
 * test_robust.c: hostile input, made here rather than stored (some is
 * megabytes). The front end must report, never crash, hang or read out of
 * bounds; the sanitizer build (make SAN=1 test) checks the last part.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"

#ifndef COLLC_BIN
#define COLLC_BIN "bin/collc"
#endif

static char *
repeat(const char *head, const char *unit, size_t times, const char *tail)
{
	size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
	char *s = malloc(hl + ul * times + tl + 1);
	memcpy(s, head, hl);
	for (size_t i = 0; i < times; i++)
		memcpy(s + hl + i * ul, unit, ul);
	memcpy(s + hl + ul * times, tail, tl + 1);
	return s;
}

static void
run(Diag *dg, const char *what, const char *text, size_t len, int errors, const char *needle)
{
	Checked c;
	check_text(dg, &c, "r.coll", text, len);
	assert_named(c.errors == errors, __LINE__, __FILE__, "%s: %d errors, expected %d: %.500s", what,
	             c.errors, errors, c.diag);
	if (needle)
		assert_named(strstr(c.diag, needle) != NULL, __LINE__, __FILE__, "%s: '%s' in %.500s", what,
		             needle, c.diag);
	checked_free(&c);
}

static void
test_empty_and_comments(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	run(dg, "empty file", "", 0, 0, NULL);
	run(dg, "only whitespace", " \n\t\n", 4, 0, NULL);
	run(dg, "only comments", "// a\n/* b */", 12, 0, NULL);
	run(dg, "unterminated comment", "topology T = ring(4);\n/* never closed", 37, 1,
	    "r.coll:2:1: error: unterminated comment");
}

static void
test_nul_bytes(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	const char text[] = "topology T\0 = ring(4);";
	run(dg, "NUL byte", text, sizeof text - 1, 1, "r.coll:1:11: error: unexpected byte 0x00");
	char zeros[4096] = {0};
	run(dg, "all NUL", zeros, sizeof zeros, 1, "4096 unexpected bytes, starting with byte 0x00");
}

static void
test_binary_garbage(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* a fixed pseudo-random stream: the same garbage on every run */
	size_t n = 1 << 16;
	char *g = malloc(n);
	uint32_t x = 2463534242u;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		g[i] = (char)(x & 0xff);
	}
	Checked c;
	check_text(dg, &c, "r.coll", g, n);
	CU_ASSERT_EQUAL(c.errors, DIAG_MAX_ERRORS);
	ASSERT_DIAG(&c, "too many errors (20), stopping");
	checked_free(&c);
	free(g);
}

static void
test_long_lines(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	char *s = repeat("topology T = ring(4); ", " ", 1 << 20, "topology = ;");
	run(dg, "1 MiB line", s, strlen(s), 1, "r.coll:1:1048608: error: syntax error, unexpected '='");
	free(s);
	s = repeat("topology ", "a", 1 << 20, " = ring(4);");
	run(dg, "1 MiB identifier", s, strlen(s), 0, NULL);
	free(s);
	s = repeat("/*", "*", 1 << 20, "");
	run(dg, "1 MiB unterminated comment", s, strlen(s), 1, "r.coll:1:1: error: unterminated comment");
	free(s);
}

static void
test_numbers(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	run(dg, "64-bit overflow", "network { mtu = 18446744073709551616 B; }", 41, 1,
	    "integer '18446744073709551616' does not fit in 64 bits");
	char *s = repeat("network { energy_per_bit = ", "9", 400, ".5 pJ; }");
	run(dg, "huge decimal", s, strlen(s), 1, "is too large");
	free(s);
	run(dg, "overflow in arithmetic",
	    "topology T = ring(4); tree E on T root 4611686018427387904 * 4 { }", 66, 1,
	    "r.coll:1:40: error: integer overflow");
}

static void
test_deep_nesting(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	char *s = repeat("topology T = ring(4); tree E on T root ", "(", 100000, "0");
	run(dg, "100000 open brackets", s, strlen(s), 1, "brackets nested more than 256 deep");
	free(s);
	s = repeat("topology T = ring(4); tree E on T root ", "-", 100000, "0 { }");
	run(dg, "100000 unary minus", s, strlen(s), 1, "expression nested too deeply");
	free(s);
	s = repeat("topology T = ring(4); tree E on T root 0", " + 0", 100000, " { }");
	run(dg, "a sum of 100000 terms", s, strlen(s), 1, "expression nested more than 256 deep");
	free(s);
	s = repeat("network ", "{ ", 1000, "");
	/* the second brace is already a syntax error; the depth limit still holds */
	run(dg, "1000 open braces", s, strlen(s), 2, "brackets nested more than 256 deep");
	free(s);
}

static void
test_many_declarations(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	size_t n = 20000;
	char *text = malloc(n * 40);
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(text + len, "topology T%zu = ring(%zu);\n", i, i % 100 + 2);
	Checked c;
	check_text(dg, &c, "r.coll", text, len);
	CU_ASSERT_EQUAL(c.errors, 0);
	CU_ASSERT_EQUAL(c.file->ndecl, (int)n);
	checked_free(&c);
	free(text);
}

static void
test_long_explicit_tree(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* a chain of 200000 edges: checking spans and cycles is linear */
	size_t n = 200000;
	char *text = malloc(n * 32 + 64);
	size_t len = (size_t)sprintf(text, "topology R = ring(%zu);\ntree E on R root 0 {\n", n);
	for (size_t v = 1; v < n; v++)
		len += (size_t)sprintf(text + len, "%zu -> %zu;\n", v, v - 1);
	len += (size_t)sprintf(text + len, "}\n");
	run(dg, "a chain tree of 200000 edges", text, len, 0, NULL);
	/* the same with the last edge closing a cycle far from the root */
	len -= 2;
	len += (size_t)sprintf(text + len, "%d -> %zu;\n}\n", 1, n - 1);
	run(dg, "a second parent", text, len, 1, "node 1 has a second parent");
	free(text);
}

/* A chain tree of 262143 edges on ring(262144), symmetric under the
 * trivial group: 524286 rounds over 524288 link orbits. Its metrics took
 * rounds x orbits (a 1,048,575-edge chain: 70 CPU minutes); now each round
 * costs its own hops. Run by the binary under a limit of CPU seconds (not
 * wall time: the machine may be loaded), which the quadratic pass overran
 * many times over (about 250 s) and the linear one meets (well under 2 s). */
static void
test_chain_metrics_linear(void)
{
	size_t n = 262144;
	char path[] = "/tmp/collc-chain-XXXXXX";
	FILE *f = temp_file(path);
	fprintf(f, "topology T = ring(%zu);\ngroup G on T { map 0 -> 0; }\ntree E on T root 0 {\n", n);
	for (size_t v = 1; v < n; v++)
		fprintf(f, "%zu -> %zu;\n", v, v - 1);
	fprintf(f, "}\ncollective allreduce AR on T { algorithm symmetric(trees E, group G); }\n");
	fclose(f);
	int st = collc_cpu_limited(30, "check %s >/dev/null 2>&1", path);
	assert_named(st == 0, __LINE__, __FILE__, "collc check of a %zu-node chain tree, symmetric: "
	             "status %d within 30 CPU seconds", n, st);
	remove(path);
}

/* collc check of packing's allgather on rails of 2 boxes of `gpus` GPUs
 * whose GPU links are `gbps` Gbit/s: refused within 3 CPU seconds with a
 * message holding `expect` (a grep pattern); `what` names the case. */
static void
packing_refused_within(int line, int gbps, int gpus, const char *expect, const char *what)
{
	char path[] = "/tmp/collc-packing-XXXXXX";
	FILE *f = temp_file(path);
	fprintf(f, "network { link_bandwidth = %d Gbps; link_latency = 500 ns; }\n"
	           "topology C = rails(boxes 2, gpus %d, nic_gbps 400);\n"
	           "collective allgather AG on C { algorithm packing; }\n", gbps, gpus);
	fclose(f);
	int st = collc_cpu_limited(3, "check %s 2>&1 | grep -q '%s'", path, expect);
	assert_named(st == 0, line, __FILE__, "collc check of packing at %d Gbit/s on %d GPUs: %s "
	             "refused within 3 CPU seconds (status %d)", gbps, 2 * gpus, what, st);
	remove(path);
}

/* Packing on rails whose GPU links are 3601 Gbit/s: the bound's rate has a
 * large denominator, so every rank would root 4001 copies (64016 in all,
 * past MAX_INSTANCES). The trees' work grows with the copies: packing them
 * took 14 s of CPU before the copy count refused them (a fuzz find); the
 * count is known before they grow, and refuses at once. */
static void
test_packing_copies_refused_first(void)
{
	packing_refused_within(__LINE__, 3601, 8, "packing needs 64016 tree copies, each its own "
	                       "pipeline (Msg.instance); the limit is 32768", "the copies");
}

/* Packing on rails of 2 boxes of 32 GPUs whose GPU links are 3580 Gbit/s:
 * every rank roots 199 copies (12736 in all, within MAX_INSTANCES), and
 * pack_work, which counts one copy a root, let their trees grow: 18.9 s
 * of CPU. Issue 38's fuzz find was the same under the fuzz build's limit
 * (cube-mesh-boxes-2 with links changed, 232 copies a root). The copies
 * are known before the trees grow; their growth is estimated then, about
 * 2 N flows a copy over the links and the arcs the splits added, and
 * refused. */
static void
test_packing_growth_refused_first(void)
{
	packing_refused_within(__LINE__, 3580, 32, "packing needs 12736 copies of allgather trees on "
	                       ".C.; growing them would do about 4.35e+09 units of work, and the limit "
	                       "is 1073741824 (MAX_PACK_WORK)", "the growth");
}

CU_TestInfo robust_tests[] = {
	{"a symmetric chain of 262143 edges: metrics linear in the rounds", test_chain_metrics_linear},
	{"packing past MAX_INSTANCES copies is refused before its trees grow", test_packing_copies_refused_first},
	{"packing whose trees' growth passes MAX_PACK_WORK is refused before they grow", test_packing_growth_refused_first},
	{"explicit trees of 200000 edges", test_long_explicit_tree},
	{"empty files and comments", test_empty_and_comments},
	{"NUL bytes", test_nul_bytes},
	{"binary garbage", test_binary_garbage},
	{"megabyte lines", test_long_lines},
	{"numbers that overflow", test_numbers},
	{"deep nesting", test_deep_nesting},
	{"20000 declarations", test_many_declarations},
	CU_TEST_INFO_NULL,
};
