/* test_model.c: the cost model (ir/metrics.c) ranks `auto`'s candidates as
 * the simulator does (issue 33 item 5). For each collective, every
 * candidate of `auto` is built for 1 GiB and simulated in flow mode, round
 * by round (what `collc sim`'s auto does); the one the model prefers (least
 * model time, the earlier on a tie, as `check`'s auto) must be the
 * simulator's fastest or within 5 % of its time, and no candidate's model
 * time is below the cut bound's. On the examples whose links differ (GPU
 * boxes, clusters, xGMI) and a few small uniform ones (the tori of 16 and
 * 64 ranks and nccl-topo-h100 take 1.4 to 9 s CPU each, too much for the
 * suite), and on generated heterogeneous graphs of up to 32 ranks: GPU
 * boxes on an NVSwitch with a NIC per GPU on rail switches, xGMI-like
 * weighted meshes with a slow shared switch, and random graphs with
 * switches and mixed link bandwidths. Flow mode's cost does not grow with
 * the size, so 1 GiB costs what 1 MiB does. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "cutbound.h"
#include "driver.h"
#include "ir.h"
#include "perf.h"
#include "tests.h"

#define GIB 1073741824.0
#define MAX_RANKS_EXAMPLE 64

/* The cut bound's time for s's collective of N bytes (no schedule is
 * faster): nccl-tests' bus factor x N / busbw; 0 where there is none. */
static double
bound_time(const Sched *s, double bytes)
{
	CutBound b;
	double t = 0;
	if (cutbound_topo(s->topo, s->rank_node, s->nrank, s->root, s->kind, &b) == CUT_OK && b.busbw > 0)
		t = perf_busbw_factor(coll_kind_name[s->kind], s->nrank) * bytes / b.busbw;
	cutbound_free(&b);
	return t;
}

/* The model's pick among cand[0..n): least model time, the first on a tie.
 * Each candidate's model time is at least the cut bound's (docs/ir.md 7:
 * a cut's bytes over its capacity are at most its busiest link's time). */
static int
model_pick(const Simulated *cand, int n, const char *what)
{
	int pick = -1;
	double best = 0, floor = n > 0 ? bound_time(cand[0].s, GIB) : 0;
	for (int i = 0; i < n; i++) {
		Metrics m;
		metrics(cand[i].s, GIB, &m);
		assert_named(m.model_time >= floor * (1 - 1e-9), __LINE__, __FILE__,
		             "%s %s: %s's model time %.1f us is below the cut bound's %.1f us", what,
		             cand[i].s->name, cand[i].s->algorithm, m.model_time * 1e6, floor * 1e6);
		if (pick < 0 || m.model_time < best) {
			pick = i;
			best = m.model_time;
		}
	}
	return pick;
}

/* s's candidates at 1 GiB: the model's pick within 5 % of the fastest.
 * Returns the candidates simulated. */
static int
pick_agrees(Diag *dg, const Sched *s, const char *what)
{
	Arena a = {0};
	Routes routes;
	routes_init(&routes, s->topo, s->routing);
	SimOpts o = {.mode = SIM_FLOW, .sync = SIM_ROUNDS};
	Simulated *cand = arena_array(&a, NALG, sizeof *cand);
	int n = simulate_candidates(dg, &a, &routes, NULL, s, GIB, &o, cand);
	int best = fastest(cand, n), pick = model_pick(cand, n, what);
	if (n > 0)
		assert_named(cand[pick].r.time_s <= 1.05 * cand[best].r.time_s, __LINE__, __FILE__,
		             "%s %s (%s): the model picks %s, %.1f us; the simulator's fastest is %s, "
		             "%.1f us (%.3fx)",
		             what, s->name, coll_kind_name[s->kind], cand[pick].s->algorithm,
		             cand[pick].r.time_s * 1e6, cand[best].s->algorithm,
		             cand[best].r.time_s * 1e6, cand[pick].r.time_s / cand[best].r.time_s);
	routes_free(&routes);
	arena_free(&a);
	return n;
}

/* Every collective of the text (of at most max_ranks ranks) through
 * pick_agrees; the count of collectives checked. */
static int
text_agrees(Diag *dg, const char *name, const char *text, size_t len, int max_ranks)
{
	Checked c;
	check_text(dg, &c, name, text, len);
	assert_named(c.errors == 0, __LINE__, __FILE__, "%s: %s", name, c.diag);
	int checked = 0;
	if (c.errors == 0) {
		diag_source(dg, name, text, len);
		Prog p = {0};
		diag_mute(dg, true);
		int rc = lower_verified(dg, c.file, &p, NULL, false, false);
		diag_mute(dg, false);
		assert_named(rc == 0, __LINE__, __FILE__, "%s does not build", name);
		for (int i = 0; rc == 0 && i < p.nsched; i++)
			if (p.sched[i]->nrank <= max_ranks && pick_agrees(dg, p.sched[i], name) > 0)
				checked++;
		prog_free(&p);
		diag_reset(dg);
	}
	checked_free(&c);
	return checked;
}

static void
test_examples(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char *const path[] = {
		"examples/full-affine-group.coll", "examples/gpu-boxes-cut.coll",
		"examples/gpu-cluster-2x8.coll",   "examples/graph-custom.coll",
		"examples/graph-gpu-box.coll",     "examples/graph-petersen.coll",
		"examples/ring-classic.coll",      "examples/sp-torus-3x3-explicit.coll",
		"examples/spine-leaf.coll",        "examples/xgmi-box-16.coll",
	};
	int checked = 0;
	for (size_t i = 0; i < countof(path); i++) {
		size_t len;
		char *text = slurp(path[i], &len);
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		checked += text_agrees(dg, path[i], text, len, MAX_RANKS_EXAMPLE);
		free(text);
	}
	CU_ASSERT(checked >= (int)countof(path));
}

static uint64_t
next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* The collectives every generated graph carries (their algorithm is only
 * the template: the candidates are auto's). */
static void
add_collectives(FILE *f)
{
	fputs("collective allgather AG on T { algorithm auto; }\n"
	      "collective reduce_scatter RS on T { algorithm auto; }\n"
	      "collective allreduce AR on T { algorithm auto; }\n"
	      "collective broadcast BC on T { algorithm auto; root 1; }\n",
	      f);
}

/* B boxes of G GPUs on an NVSwitch (nv Gbps), GPU g of every box on rail g
 * by a NIC (nic Gbps). */
static void
write_cluster(FILE *f, int boxes, int gpus, int nv, int nic)
{
	int n = boxes * gpus;
	fprintf(f, "network { link_bandwidth = %d Gbps; link_latency = 500 ns; }\n", nv);
	fprintf(f, "topology T = graph {\n nodes %d;\n switches %d..%d;\n", n + boxes + gpus, n,
	        n + boxes + gpus - 1);
	for (int v = 0; v < n; v++)
		fprintf(f, " link %d <-> %d;\n link %d <-> %d { link_bandwidth = %d Gbps; }\n", v,
		        n + v / gpus, v, n + boxes + v % gpus, nic);
	fputs("}\n", f);
}

/* n GCDs (n even): pairs at 4x, g <-> g + 2 at 2x, g <-> g + 4 at 1x (when
 * n > 8), every GCD on a shared switch at sw Gbps; x Gbps the unit. */
static void
write_xgmi(FILE *f, int n, int x, int sw)
{
	fprintf(f, "network { link_bandwidth = %d Gbps; link_latency = 300 ns; }\n", sw);
	fprintf(f, "topology T = graph {\n nodes %d;\n switches %d;\n", n + 1, n);
	for (int g = 0; g < n; g++) {
		fprintf(f, " link %d <-> %d;\n", g, n);
		if (g % 2 == 0)
			fprintf(f, " link %d <-> %d { link_bandwidth = %d Gbps; }\n", g, g + 1, 4 * x);
		if ((g + 2) % n > g)
			fprintf(f, " link %d <-> %d { link_bandwidth = %d Gbps; }\n", g, (g + 2) % n, 2 * x);
		if (n > 8 && (g + 4) % n > g)
			fprintf(f, " link %d <-> %d { link_bandwidth = %d Gbps; }\n", g, (g + 4) % n, x);
	}
	fputs("}\n", f);
}

/* r ranks on a random spanning tree plus extra links, some through one
 * switch, bandwidths drawn from 100..3200 Gbps. */
static void
write_random(FILE *f, uint64_t *seed, int r)
{
	static const int bw[] = {100, 200, 400, 800, 1600, 3200};
	fputs("network { link_bandwidth = 400 Gbps; link_latency = 200 ns; }\n", f);
	fprintf(f, "topology T = graph {\n nodes %d;\n switches %d;\n", r + 1, r);
	for (int v = 1; v < r; v++)
		fprintf(f, " link %d <-> %d { link_bandwidth = %d Gbps; }\n", v,
		        (int)(next_rand(seed) % (uint64_t)v), bw[next_rand(seed) % countof(bw)]);
	for (int k = 0; k < r; k++) {
		int u = (int)(next_rand(seed) % (uint64_t)r), v = (int)(next_rand(seed) % (uint64_t)(r + 1));
		if (u != v)
			fprintf(f, " link %d <-> %d { link_bandwidth = %d Gbps; }\n", u, v,
			        bw[next_rand(seed) % countof(bw)]);
	}
	fputs("}\n", f);
}

static int
generated_agrees(Diag *dg, char *text, size_t len)
{
	return text_agrees(dg, "generated.coll", text, len, 32);
}

static void
test_generated(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const int cluster[][4] = {
		{2, 4, 3600, 400}, {4, 4, 2400, 400}, {2, 8, 3600, 400}, {3, 2, 1600, 800},
	};
	static const int xgmi[][3] = {{8, 400, 128}, {8, 800, 200}};
	int checked = 0, cases = 0;
	uint64_t seed = 0x33c0ffee;
	for (size_t i = 0; i < countof(cluster) + countof(xgmi) + 4; i++) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		if (i < countof(cluster))
			write_cluster(f, cluster[i][0], cluster[i][1], cluster[i][2], cluster[i][3]);
		else if (i < countof(cluster) + countof(xgmi))
			write_xgmi(f, xgmi[i - countof(cluster)][0], xgmi[i - countof(cluster)][1],
			           xgmi[i - countof(cluster)][2]);
		else
			write_random(f, &seed, 5 + (int)(next_rand(&seed) % 4));
		add_collectives(f);
		fclose(f);
		checked += generated_agrees(dg, text, len);
		cases++;
		free(text);
	}
	CU_ASSERT(checked >= 3 * cases);
}

/* Issue 33: on tori, meshes and HyperX `auto` (built for 1 GiB, as
 * `collc sim` builds it), with nothing but the topology in the file, is
 * never slower in flow mode than the best of the library and of SP written
 * by hand (a group and a tree of the file's own: the torus's translations
 * and two maps with bfs, the HyperX's quarter turn with windmill; on the
 * generated tori and HyperX of sides 3 x 3 and 5 x 3 bfs with a swap and a
 * sign, or two signs where the sides differ: not the group auto makes,
 * alg_auto_sp.c); and on torus(4, 4) and hyperx(4, 4) neither is `auto` in
 * a file that has that SP (lower.c weighs it). tune chooses among the same
 * schedules by the simulator, so this is also tune's floor. Small
 * instances, for the suite's time: 9 to 16 ranks. */
typedef struct Shape {
	const char *topo, *sp; /* sp: SP's group G and tree B, or NULL (no group: a mesh) */
	bool weigh;            /* the file with SP has auto too (lower.c weighs the file's SP) */
} Shape;

static const char *const nb_kind[] = {"allreduce", "reduce_scatter", "allgather"};

/* The shape's file: the topology, then auto of each kind (A0..A2); with
 * SP, its group, tree and a symmetric collective of each kind (S0..S2),
 * and the autos only where the shape weighs them. */
static int
shape_text(const Shape *sh, bool with_sp, char *buf, size_t cap)
{
	int len = snprintf(buf, cap, "topology T = %s;\n%s", sh->topo, with_sp ? sh->sp : "");
	for (int k = 0; k < 3; k++) {
		if (!with_sp || sh->weigh)
			len += snprintf(buf + len, cap - (size_t)len,
			                "collective %s A%d on T { algorithm auto; }\n", nb_kind[k], k);
		if (with_sp)
			len += snprintf(buf + len, cap - (size_t)len,
			                "collective %s S%d on T { algorithm symmetric(trees B, group G); }\n",
			                nb_kind[k], k);
	}
	return len;
}

/* s simulated at 1 GiB in flow mode, round by round: its time. */
static double
gib_time(Diag *dg, Arena *a, const Sched *s)
{
	SimOpts o = {.mode = SIM_FLOW, .sync = SIM_ROUNDS};
	Simulated x;
	CU_ASSERT_FATAL(simulate_one(dg, a, s, GIB, &o, &x));
	return x.r.time_s;
}

/* The shape's file built for 1 GiB (auto picks for it, as collc sim's
 * does): SP's time and, without SP, each kind's fastest candidate of auto
 * (the library's and auto's own SP) lower floor[k]; auto's pick's time in
 * pick[k] (without SP, the candidate of its name: the same schedule, built
 * for the same size, simulated once). */
typedef char AlgName[64]; /* a schedule's algorithm, kept past its program */

static void
shape_times(Diag *dg, const Shape *sh, bool with_sp, double *floor, AlgName *floor_alg,
            double *pick, AlgName *pick_alg)
{
	char buf[2048];
	int len = shape_text(sh, with_sp, buf, sizeof buf);
	Checked c;
	check_text(dg, &c, "never-below.coll", buf, (size_t)len);
	assert_named(c.errors == 0, __LINE__, __FILE__, "%s", c.diag);
	diag_source(dg, "never-below.coll", buf, (size_t)len);
	Prog p = {.auto_size = GIB};
	CU_ASSERT_EQUAL_FATAL(lower_verified(dg, c.file, &p, NULL, false, false), 0);
	Arena a = {0};
	for (int i = 0; i < p.nsched; i++) {
		const Sched *s = p.sched[i];
		int k = s->name[1] - '0';
		double t = with_sp ? gib_time(dg, &a, s) : 0;
		if (s->name[0] == 'S' && t < floor[k]) {
			floor[k] = t;
			snprintf(floor_alg[k], sizeof *floor_alg, "SP");
		}
		if (s->name[0] != 'A')
			continue;
		pick[k] = t;
		snprintf(pick_alg[k], sizeof *pick_alg, "%s", s->algorithm);
		if (with_sp)
			continue;
		Routes routes;
		routes_init(&routes, s->topo, s->routing);
		SimOpts o = {.mode = SIM_FLOW, .sync = SIM_ROUNDS};
		Simulated *cand = arena_array(&a, NALG, sizeof *cand);
		int n = simulate_candidates(dg, &a, &routes, NULL, s, GIB, &o, cand), best = fastest(cand, n);
		CU_ASSERT_FATAL(n > 0);
		if (cand[best].r.time_s < floor[k]) {
			floor[k] = cand[best].r.time_s;
			snprintf(floor_alg[k], sizeof *floor_alg, "%s", cand[best].s->algorithm);
		}
		for (int j = 0; j < n; j++)
			if (strcmp(cand[j].s->algorithm, s->algorithm + strlen("auto:")) == 0)
				pick[k] = cand[j].r.time_s;
		assert_named(pick[k] > 0, __LINE__, __FILE__, "%s: auto's %s is not a candidate", sh->topo,
		             s->algorithm);
		routes_free(&routes);
	}
	arena_free(&a);
	prog_free(&p);
	diag_reset(dg);
	checked_free(&c);
}

/* auto's pick in the file without SP, and in the file with it, at most the
 * least of the library's and SP's times; the kinds checked. */
static int
never_below(Diag *dg, const Shape *sh)
{
	double floor[3] = {1e30, 1e30, 1e30}, bare[3] = {0}, with[3] = {0};
	AlgName floor_alg[3] = {""}, bare_alg[3] = {""}, with_alg[3] = {""};
	shape_times(dg, sh, false, floor, floor_alg, bare, bare_alg);
	if (sh->sp)
		shape_times(dg, sh, true, floor, floor_alg, with, with_alg);
	for (int k = 0; k < 3; k++) {
		/* the simulator's times are exact to the picosecond */
		assert_named(bare[k] <= floor[k] + 1e-11, __LINE__, __FILE__,
		             "%s %s, the topology alone: auto picks %s, %.2f us; %s takes %.2f us",
		             sh->topo, nb_kind[k], bare_alg[k], bare[k] * 1e6, floor_alg[k], floor[k] * 1e6);
		if (sh->weigh)
			assert_named(with[k] <= floor[k] + 1e-11, __LINE__, __FILE__,
			             "%s %s, with SP: auto picks %s, %.2f us; %s takes %.2f us", sh->topo,
			             nb_kind[k], with_alg[k], with[k] * 1e6, floor_alg[k], floor[k] * 1e6);
	}
	return 3;
}

/* SP as a user writes it on a generated torus or HyperX of sides a x b:
 * bfs, the translations with a swap and a sign (a square), or two signs. */
static void
generated_shape(const char *form, int a, int b, char *topo, size_t tlen, char *sp, size_t splen)
{
	snprintf(topo, tlen, "%s(%d, %d)", form, a, b);
	snprintf(sp, splen, "group G on T { translate; %s }\ntree B = bfs(T, root (0, 0));\n",
	         a == b ? "map (x, y) -> (y, x); map (x, y) -> (-x, y);"
	                : "map (x, y) -> (-x, y); map (x, y) -> (x, -y);");
}

static void
test_never_below(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const Shape fixed[] = {
		{"torus(4, 4)", "group G on T { translate; map (x, y) -> (-x, -y); map (x, y) -> (y, x); }\n"
		                "tree B = bfs(T, root (0, 0));\n", true},
		{"hyperx(4, 4)", "group G on T { translate; map (x, y) -> (-y, x); }\n"
		                 "tree B = windmill(T, root (0, 0));\n", true},
		{"mesh(4, 4)", NULL, false},
		{"torus(2, 2, 4)", NULL, false},
	};
	static const int sides[][2] = {{3, 3}, {5, 3}};
	int checked = 0, want = 0;
	for (size_t i = 0; i < countof(fixed); i++, want += 3)
		checked += never_below(dg, &fixed[i]);
	for (int f = 0; f < 2; f++)
		for (size_t i = 0; i < countof(sides); i++, want += 3) {
			char topo[64], sp[256];
			generated_shape(f ? "hyperx" : "torus", sides[i][0], sides[i][1], topo, sizeof topo,
			                sp, sizeof sp);
			checked += never_below(dg, &(Shape){topo, sp, false});
		}
	CU_ASSERT_EQUAL(checked, want);
}

/* docs/algorithms.md, "auto": on torus(n, ..., n), n >= 3, the group auto
 * makes (translations and the signed turn) has every link in one orbit, and
 * its SP loads every link alike in every round over the fewest hops: psi =
 * theta = omega = 1, for every kind it builds, on generated square tori of
 * 1 to 3 dimensions. Built and measured only (no simulation): milliseconds. */
static void
test_auto_sp_optimal(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const CollKind kinds[] = {CK_ALLREDUCE, CK_REDUCE_SCATTER, CK_ALLGATHER};
	int built = 0, want = 0;
	for (int ndim = 1; ndim <= 3; ndim++)
		for (int n = 3; n <= (ndim == 3 ? 4 : 7); n++) {
			Arena a = {0};
			int size[MAX_DIMS] = {n, n, n};
			Topo *t = topo_new(&a, TK_TORUS, "T", ndim, size, 0, net_defaults);
			Routes routes;
			routes_init(&routes, t, ROUTE_FASTEST);
			for (size_t k = 0; k < countof(kinds); k++, want++) {
				int *rank_node = arena_array(&a, (size_t)t->nrank, sizeof *rank_node);
				for (int i = 0; i < t->nrank; i++)
					rank_node[i] = i;
				AlgCtx c = alg_ctx_new(dg, &a, "X", (Loc){1, 1}, kinds[k], t, &routes,
				                       rank_node, t->nrank);
				const Sched *s = alg_auto_sp(&c);
				char why[600] = "";
				if (!s || verify_quiet(dg, s, why, sizeof why) != 0) {
					assert_named(false, __LINE__, __FILE__, "torus %d^%d %s: no SP (%s)", n, ndim,
					             coll_kind_name[kinds[k]], why);
					continue;
				}
				Metrics m;
				metrics(s, GIB, &m);
				assert_named(s->group->nlink_orbits == 1 && fabs(m.psi - 1) < 1e-9 &&
				             fabs(m.theta - 1) < 1e-9 && fabs(m.omega - 1) < 1e-9,
				             __LINE__, __FILE__, "torus %d^%d %s: %d link orbits, psi %.4f, theta "
				             "%.4f, omega %.4f", n, ndim, coll_kind_name[kinds[k]],
				             s->group->nlink_orbits, m.psi, m.theta, m.omega);
				built++;
			}
			routes_free(&routes);
			arena_free(&a);
		}
	CU_ASSERT_EQUAL(built, want);
}

CU_TestInfo model_tests[] = {
	{"examples: the model's pick at 1 GiB within 5 % of the simulator's fastest", test_examples},
	{"generated GPU clusters, xGMI boxes, random graphs: the same", test_generated},
	{"tori, a mesh, a HyperX: auto at 1 GiB never below SP or the library", test_never_below},
	{"auto's own SP on square tori of 1 to 3 dimensions: psi = theta = omega = 1", test_auto_sp_optimal},
	CU_TEST_INFO_NULL,
};
