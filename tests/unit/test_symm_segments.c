/*
 * test_symm_segments.c: `symmetric(trees ..., group G, segments S)`, the
 * symmetric form in S segments (ir/symm.c; docs/algorithms.md "symmetric").
 * The parameter is range-checked where it is written; on generated
 * instances (rails clusters, tori with a forest and a balanced pair) the
 * schedule takes the closed form's rounds, H + S - 1 (allreduce 2H + S - 1,
 * a forest's 2H + S - 2), cuts the vector into trees x S x |G| chunks, is
 * proved by symmetry and again on its expansion with the same metrics; the
 * simulator's time at 1 GiB falls with S towards the bound on a rails
 * cluster, whose NIC and NVLink then work in the same rounds; and the work
 * is estimated and refused at `segments` past the limits. `segments auto`
 * chooses S per size: 1 at small sizes, more at 1 GiB, never slower under
 * the model than a power of two it could have taken; `collc sim` rebuilds
 * it per size, and MSCCL takes fewer where the choice does not fit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collc_limits.h"
#include "tests.h"

static void
test_parameter_checked(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct {
		int segments;
		const char *want;
	} cases[] = {
		{0, "t.coll:4:79: error: the segments of symmetric must be at least 1, got 0"},
		{MAX_INSTANCES + 1, "t.coll:4:79: error: the segments of symmetric must be at most 32768, "
		                    "got 32769"},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		char text[512];
		snprintf(text, sizeof text, "topology T = torus(4, 4);\ngroup G on T { translate; }\n"
		         "tree B = bfs(T, root 0);\ncollective allgather AG on T { algorithm "
		         "symmetric(trees B, group G, segments %d); }\n", cases[i].segments);
		Checked c;
		check_str(dg, &c, text);
		CU_ASSERT_EQUAL(c.errors, 1);
		ASSERT_DIAG(&c, cases[i].want);
		checked_free(&c);
	}
	/* a word where the count goes, and the usage that names it */
	Checked c;
	check_str(dg, &c, "topology T = torus(4, 4);\ngroup G on T { translate; }\n"
	          "tree B = bfs(T, root 0);\ncollective allgather AG on T { algorithm "
	          "symmetric(trees B, group G, segment 2); }\n");
	ASSERT_DIAG(&c, "t.coll:4:70: error: symmetric has no argument 'segment'; did you mean "
	                "'segments'? (usage: symmetric(trees B1, B2, ..., group G[, segments S | auto]))");
	checked_free(&c);
}

/* The rounds of one segment by the closed form of docs/ir.md 5.2: H the
 * deepest tree's height (+1 for a forest). */
static int
one_segment_rounds(const Sched *s, int S)
{
	int H = 0;
	bool forest = false;
	for (int b = 0; b < s->ntree; b += S) {
		int h = s->tree[b]->height + (s->tree[b]->nroot == 2);
		H = h > H ? h : H;
		forest |= s->tree[b]->nroot == 2;
	}
	return s->kind == CK_ALLREDUCE ? 2 * H - forest : H;
}

/* rounds, chunks, the proof by symmetry and the expansion's, per instance */
static void
test_closed_form(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char *const cases[] = {
		"topology C = rails(boxes 2, gpus 8, nic_gbps 400); group G = translations(C); "
		"tree B = bfs(C, root gpu(0, 0));",
		"topology C = rails(boxes 3, gpus 4, nic_gbps 400); group G = translations(C); "
		"tree B = bfs(C, root gpu(0, 0));",
		"topology C = rails(boxes 4, gpus 2, nic_gbps 200); group G = translations(C); "
		"tree B = bfs(C, root gpu(1, 1));",
		"topology C = torus(4, 4); group G on C { translate; map (x, y) -> (-x, -y); "
		"map (x, y) -> (y, x); } tree B = forest(C, roots 0, 4);",
		"topology C = torus(3, 4); group G on C { translate; map (x, y) -> (-x, -y); } "
		"trees B = balanced_pair(C, root 0);",
	};
	static const char *const kinds[] = {"allreduce", "reduce_scatter", "allgather"};
	static const int segs[] = {1, 2, 3, 5, 8};
	for (size_t i = 0; i < countof(cases); i++)
		for (size_t k = 0; k < countof(kinds); k++)
			for (size_t j = 0; j < countof(segs); j++) {
				char text[1024];
				int S = segs[j];
				snprintf(text, sizeof text, "%s\ncollective %s X on C { algorithm symmetric(trees B, "
				         "group G, segments %d); }\n", cases[i], kinds[k], S);
				Checked c;
				Prog p;
				int rc = lower_str(dg, text, 1 << 20, &c, &p);
				assert_named(rc == 0, __LINE__, __FILE__, "case %zu %s S %d: %s", i, kinds[k], S,
				             c.diag);
				if (rc != 0) {
					prog_free(&p);
					checked_free(&c);
					continue;
				}
				const Sched *s = p.sched[0];
				int ntree = s->ntree / S, want = one_segment_rounds(s, S) + S - 1;
				Metrics ms, mx;
				metrics(s, 1 << 30, &ms);
				Arena a = {0};
				Sched *x = sched_expand(dg, &a, s);
				int vx = verify_quiet(dg, x, (char[256]){0}, 256);
				metrics(x, 1 << 30, &mx);
				assert_named(ms.rounds == want && s->nround == want &&
				             s->nchunk == ntree * S * s->group->order &&
				             (S == 1 ? s->segments == 0 : s->segments == S) && vx == 0 &&
				             mx.rounds == ms.rounds && mx.messages == ms.messages &&
				             near_rel(mx.model_time, ms.model_time, 1e-9) &&
				             near_rel(mx.volume, ms.volume, 1e-9),
				             __LINE__, __FILE__, "case %zu %s S %d: rounds %d (want %d), chunks %d, "
				             "expansion verified %d, rounds %d, messages %ld / %ld, time %g / %g",
				             i, kinds[k], S, ms.rounds, want, s->nchunk, vx, mx.rounds,
				             mx.messages, ms.messages, mx.model_time, ms.model_time);
				arena_free(&a);
				prog_free(&p);
				checked_free(&c);
			}
}

/* Two boxes of 8 GPUs with a BFS tree (depth 2: a GPU's NVLink to its box,
 * its NIC to the other box's GPU, which passes it on over NVLink): in one
 * segment the NIC's round and the NVLink's follow each other (84.3 % of
 * the bound at 1 GiB); in S segments each round has both. */
static void
test_sim_towards_bound(void)
{
	char dir[] = "/tmp/collc-symseg-XXXXXX";
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	static const int segs[] = {1, 2, 4, 8};
	double last = 0, share[4] = {0};
	for (size_t j = 0; j < countof(segs); j++) {
		char name[32], text[512], path[128];
		snprintf(name, sizeof name, "s%d.coll", segs[j]);
		snprintf(text, sizeof text, "network { link_bandwidth = 3600 Gbps; link_latency = 500 ns; }\n"
		         "topology C = rails(boxes 2, gpus 8, nic_gbps 400);\n"
		         "group G = translations(C);\ntree B = bfs(C, root gpu(0, 0));\n"
		         "collective allgather AG on C { algorithm symmetric(trees B, group G, "
		         "segments %d); }\n", segs[j]);
		write_in(dir, name, text);
		snprintf(path, sizeof path, "%s/%s", dir, name);
		double busbw, bound;
		sim_busbw(path, "AG", &busbw, &bound);
		assert_named(busbw > last, __LINE__, __FILE__, "segments %d: busbw %.2f GB/s, not above "
		             "%.2f", segs[j], busbw, last);
		last = busbw;
		share[j] = bound > 0 ? 100 * busbw / bound : 0;
	}
	assert_named(share[0] > 84 && share[0] < 85 && share[3] > 94, __LINE__, __FILE__,
	             "shares of the bound: %.1f %% in 1 segment, %.1f %% in 8", share[0], share[3]);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

/* The work is estimated before it is built, and refused at `segments`. */
static void
test_limits(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"topology T = torus(32, 32);\ngroup G = translations(T);\ntree B = bfs(T, root 0);\n"
		 "collective allgather AG on T { algorithm symmetric(trees B, group G, segments 32768); }\n",
		 "t.coll:4:70: error: symmetric in 32768 segments cuts the vector of 'AG' into 3.4e7 chunks "
		 "(1 tree x 32768 segments x a group of order 1024); collc builds at most 16777216 "
		 "(MAX_SYMM_CHUNKS, docs/limits.md)"},
		{"topology T = torus(64, 64);\ngroup G on T { }\ntree B = bfs(T, root 0);\n"
		 "collective allreduce AR on T { algorithm symmetric(trees B, group G, segments 8200); }\n",
		 "t.coll:4:70: error: symmetric in 8200 segments holds 6.7e7 base transfers (8190 a "
		 "segment) for 'AR'; collc holds at most 67108864 (MAX_TRANSFERS, docs/limits.md)"},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		Checked c;
		check_built(dg, &c, "t.coll", cases[i].text, strlen(cases[i].text));
		CU_ASSERT_EQUAL(c.errors, 1);
		ASSERT_DIAG(&c, cases[i].want);
		checked_free(&c);
	}
}

static const char rails_2x8[] =
	"network { link_bandwidth = 3600 Gbps; link_latency = 500 ns; }\n"
	"topology C = rails(boxes 2, gpus 8, nic_gbps 400);\n"
	"group G = translations(C);\ntree B = bfs(C, root gpu(0, 0));\n";

static void
test_auto_parsed(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct {
		const char *alg, *want; /* want NULL: no error */
	} cases[] = {
		{"symmetric(trees B, group G, segments auto)", NULL},
		{"symmetric(segments auto, trees B, group G)", NULL},
		{"symmetric(trees B, group G, segments fast)",
		 "t.coll:5:79: error: symmetric's segments takes a number or 'auto', got 'fast' (usage: "
		 "symmetric(trees B1, B2, ..., group G[, segments S | auto]))"},
		{"ring(ports auto)",
		 "t.coll:5:53: error: ring's ports takes a number, not 'auto' (usage: ring, ring(ports 1 | "
		 "2) or ring(halfway))"},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		char text[1024];
		snprintf(text, sizeof text, "%scollective allgather AG on C { algorithm %s; }\n", rails_2x8,
		         cases[i].alg);
		Checked c;
		check_str(dg, &c, text);
		assert_named(c.errors == (cases[i].want != NULL), __LINE__, __FILE__, "%s: %d errors: %s",
		             cases[i].alg, c.errors, c.diag);
		if (cases[i].want)
			ASSERT_DIAG(&c, cases[i].want);
		checked_free(&c);
	}
}

/* The model time of `kind` in S segments (0: auto) at size; its
 * segments (1 for one) in *chosen. */
static double
model_at(Diag *dg, const char *kind, int S, double size, int *chosen)
{
	char text[1024], seg[32];
	snprintf(seg, sizeof seg, S ? "%d" : "auto", S);
	snprintf(text, sizeof text, "%scollective %s X on C { algorithm symmetric(trees B, group G, "
	         "segments %s); }\n", rails_2x8, kind, seg);
	Checked c;
	Prog p;
	int rc = lower_str(dg, text, size, &c, &p);
	assert_named(rc == 0 && (S || p.sched[0]->size_chosen), __LINE__, __FILE__, "%s S %d: %s",
	             kind, S, c.diag);
	Metrics m = {0};
	if (rc == 0) {
		metrics(p.sched[0], size, &m);
		*chosen = p.sched[0]->segments ? p.sched[0]->segments : 1;
	}
	prog_free(&p);
	checked_free(&c);
	return m.model_time;
}

static void
test_auto_per_size(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char *const kinds[] = {"allgather", "allreduce", "reduce_scatter"};
	static const double sizes[] = {64 << 10, 1 << 30};
	for (size_t k = 0; k < countof(kinds); k++)
		for (size_t i = 0; i < countof(sizes); i++) {
			int S = 0, s1;
			double t = model_at(dg, kinds[k], 0, sizes[i], &S);
			assert_named(sizes[i] < 1 << 20 ? S == 1 : S > 1, __LINE__, __FILE__,
			             "%s at %.0f bytes: segments %d chosen", kinds[k], sizes[i], S);
			for (int m = 1; m <= 64; m *= 2) {
				double tm = model_at(dg, kinds[k], m, sizes[i], &s1);
				assert_named(t <= tm, __LINE__, __FILE__, "%s at %.0f bytes: segments %d (chosen) "
				             "%g s, segments %d %g s", kinds[k], sizes[i], S, t, m, tm);
			}
		}
}

/* The file of test_auto_sim and test_auto_msccl in dir. */
static void
write_auto(const char *dir)
{
	char text[1024];
	snprintf(text, sizeof text, "%scollective allgather AG on C { algorithm symmetric(trees B, "
	         "group G, segments auto); }\n", rails_2x8);
	write_in(dir, "auto.coll", text);
}

static void
test_auto_sim(void)
{
	char dir[] = "/tmp/collc-symauto-XXXXXX", cmd[512];
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	write_auto(dir);
	snprintf(cmd, sizeof cmd, "%s sim %s/auto.coll --sizes 64KiB,1GiB --mode flow --csv", COLLC_BIN,
	         dir);
	int st;
	char *out = run_all(cmd, &st);
	assert_named(st == 0 && strstr(out, ",symmetric (segments 1 chosen for 64 KiB),65536,") &&
	             strstr(out, ",symmetric (segments 16 chosen for 1 GiB),1073741824,"),
	             __LINE__, __FILE__, "collc sim: %s", out);
	free(out);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

/* The model's 16 segments at 1 GiB need 65 thread blocks on rank 0 (the
 * executor's limit is 64): the build takes 8, and says so. */
static void
test_auto_msccl(void)
{
	char dir[] = "/tmp/collc-symauto-XXXXXX", cmd[512];
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	write_auto(dir);
	snprintf(cmd, sizeof cmd, "%s build --target msccl %s/auto.coll --size 1GiB -o %s/ag.xml 2>&1",
	         COLLC_BIN, dir, dir);
	int st;
	char *out = run_all(cmd, &st);
	assert_named(st == 0 && strstr(out, "collc: build: note: 'AG' for MSCCL: symmetric segments 16 "
	                                    "chosen for 1 GiB fit none of its programs in the "
	                                    "executor's limits; segments 8 do (to_msccl_symfit.c)"),
	             __LINE__, __FILE__, "collc build: %s", out);
	free(out);
	snprintf(cmd, sizeof cmd, "%s build --target msccl %s/auto.coll --size 64KiB -o %s/ag.xml 2>&1",
	         COLLC_BIN, dir, dir);
	out = run_all(cmd, &st);
	assert_named(st == 0 && !strstr(out, "to_msccl_symfit.c"), __LINE__, __FILE__,
	             "collc build at 64 KiB: %s", out);
	free(out);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

CU_TestInfo symm_segments_tests[] = {
	{"segments: parsed and range-checked where written", test_parameter_checked},
	{"segments: H + S - 1 rounds, verified and expanded", test_closed_form},
	{"segments: the simulator's time falls towards the bound", test_sim_towards_bound},
	{"segments: the work refused past the limits", test_limits},
	{"segments auto: parsed, another word refused where written", test_auto_parsed},
	{"segments auto: the model's least time per size", test_auto_per_size},
	{"segments auto: collc sim chooses per size", test_auto_sim},
	{"segments auto: MSCCL takes the most segments that fit", test_auto_msccl},
	CU_TEST_INFO_NULL,
};
