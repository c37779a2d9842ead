/*
 * test_alg.c: the classic algorithm library. Every algorithm and every
 * collective it implements is verified for every rank count 2..64 it
 * supports, placed row-major on a ring, a 2D torus, a 3D torus and a full
 * graph; round counts, volumes and theta match algorithms.md's closed
 * forms; the 64-chip evaluation's configurations build and verify.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "ir.h"
#include "tests.h"

typedef struct Place {
	Arena arena;
	Topo *t;
	Routes routes;
	int rank_node[4096];
} Place;

static void
place_init(Place *pl, TopoKind k, int ndim, int s0, int s1, int s2)
{
	memset(pl, 0, sizeof *pl);
	int size[3] = {s0, s1, s2};
	pl->t = topo_new(&pl->arena, k, "T", ndim, size, 0, net_defaults);
	routes_init(&pl->routes, pl->t, ROUTE_SHORTEST);
	for (int i = 0; i < pl->t->nnode; i++)
		pl->rank_node[i] = i;
}

static void
place_free(Place *pl)
{
	routes_free(&pl->routes);
	arena_free(&pl->arena);
}

/* Builds and verifies; returns the schedule (in a's arena) or NULL, with
 * diagnostics in *diag. */
static Sched *
build_ctx(const AlgCtx *c, char **diag)
{
	size_t len;
	FILE *mem = open_memstream(diag, &len);
	diag_stream(c->diag, mem);
	diag_reset(c->diag);
	diag_source(c->diag, "x", "x\n", 2);
	bool missing;
	Sched *s = alg_build(c, &missing);
	if (s && verify(c->diag, s) != 0)
		s = NULL;
	diag_stream(c->diag, NULL);
	fclose(mem);
	diag_reset(c->diag);
	return s;
}

static Sched *
build(Diag *dg, Place *pl, Arena *a, const char *alg, CollKind kind, int p, int ports, bool latency,
      char **diag)
{
	AlgCtx c = {.diag = dg, .arena = a, .name = "X", .loc = {1, 1}, .kind = kind, .topo = pl->t,
	            .routes = &pl->routes, .rank_node = pl->rank_node, .nrank = p,
	            .whole = p == pl->t->nrank, .algorithm = alg, .ports = ports,
	            .latency = latency};
	return build_ctx(&c, diag);
}

/* The registry's algorithms that run on any rank count of a ring, torus or
 * full graph are built for every kind the registry gives them; these are
 * the other variants, and the algorithms with a narrower domain, each
 * with the test that covers it. test_registry_covered checks every
 * algorithm is in one list or the other. */
static const struct {
	const char *alg;
	int ports;
	bool latency;
	CollKind kind;   /* the variant's one kind */
} variants[] = {
	{"ring", 2, false, CK_ALLREDUCE}, {"ring", 2, false, CK_REDUCE_SCATTER},
	{"ring", 2, false, CK_ALLGATHER}, {"swing", 0, true, CK_ALLREDUCE},
	{"trivance", 0, true, CK_ALLREDUCE},
};

static const struct {
	const char *alg, *covered_by;
} narrower[] = {
	{"symmetric", "test_symm (no generator: lowering builds it from trees and a group)"},
	{"multiport_ring", "test_multiport_ring: a whole ring or 2D torus"},
	{"bucket", "test_closed_forms, test_bucket_instances: every rank of a torus"},
	{"tto", "test_tto_*: a k x k mesh or supermesh"},
	{"pipelined_trees", "the pipelined suite: disjoint trees"},
	{"hierarchical", "test_hierarchical: one algorithm per dimension"},
	{"bridge", "the optical suite: optical rings"},
	{"s_bruck", "the optical suite"}, {"g_bruck", "the optical suite"},
	{"r_hd", "the optical suite"},
	{"packing", "the packing suite: its work grows with the switches' links"},
	{"nccl_ring", "the nccl_ring suite: rails, xgmi_rails, leaf_spine_boxes clusters"},
	{"nccl_tree", "the packing suite's test_nccl_tree_closed_form: allreduce on rails clusters"},
	{"nccl_nvls", "the nvls suite's test_nvls_closed_form: allreduce on boxes with switch_reduction"},
	{"nccl_nvls_tree", "the nvls suite's test_nvls_tree_closed_form: allreduce on rails, NVLS"},
};

static bool
is_narrower(const char *alg)
{
	for (size_t i = 0; i < countof(narrower); i++)
		if (strcmp(narrower[i].alg, alg) == 0)
			return true;
	return false;
}

/* Every registry algorithm is built on every rank count here or named
 * with the test of its narrower domain. */
static void
test_registry_covered(void)
{
	for (int a = 0; a < NALG; a++) {
		int in = is_narrower(alg_forms[a].name);
		for (size_t i = 0; i < countof(narrower); i++)
			CU_ASSERT(alg_find(narrower[i].alg) >= 0); /* no stale name */
		assert_named(in || alg_forms[a].topos == ANY_TOPO, __LINE__, __FILE__,
		             "%s runs on some topology forms only: name its test in narrower[]",
		             alg_forms[a].name);
	}
}

/* Builds alg (a variant) for kind on p ranks of every place; the count built. */
static int
build_everywhere(Diag *dg, Place *pls, int npl, const char *alg, int ports, bool latency, CollKind kind)
{
	int built = 0;
	bool threes = strcmp(alg, "trivance") == 0; /* 3^t ranks */
	for (int p = 2; p <= 64; p++) {
		if (threes && !(p == 3 || p == 9 || p == 27))
			continue;
		for (int t = 0; t < npl; t++) {
			Arena ar = {0};
			char *diag = NULL;
			Sched *s = build(dg, &pls[t], &ar, alg, kind, p, ports, latency, &diag);
			assert_named(s != NULL, __LINE__, __FILE__, "%s%s%s %s, %d ranks on %s: %s", alg,
			             ports == 2 ? "(ports 2)" : "", latency ? "(latency)" : "",
			             coll_kind_name[kind], p, topo_kind_name(pls[t].t->kind), diag);
			built += s != NULL;
			free(diag);
			arena_free(&ar);
		}
	}
	return built;
}

static void
test_every_rank_count(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Place pls[4];
	place_init(&pls[0], TK_RING, 1, 64, 0, 0);
	place_init(&pls[1], TK_TORUS, 2, 8, 8, 0);
	place_init(&pls[2], TK_TORUS, 3, 4, 4, 4);
	place_init(&pls[3], TK_FULL, 1, 64, 0, 0);
	int built = 0, algs = 0;
	for (int a = 0; a < NALG; a++) {
		if (is_narrower(alg_forms[a].name))
			continue;
		algs++;
		for (int k = 0; k < NCOLLKIND; k++)
			if (alg_implements((AlgId)a, (CollKind)k))
				built += build_everywhere(dg, pls, 4, alg_forms[a].name, 0, false, (CollKind)k);
	}
	for (size_t v = 0; v < countof(variants); v++)
		built += build_everywhere(dg, pls, 4, variants[v].alg, variants[v].ports, variants[v].latency,
		                          variants[v].kind);
	CU_ASSERT_EQUAL(algs + (int)countof(narrower), NALG);
	CU_ASSERT(built > 4000);
	for (int t = 0; t < 4; t++)
		place_free(&pls[t]);
}

/* Rounds and psi of one build (whole topology or the first p ranks). */
static bool
measure(Diag *dg, Place *pl, const char *alg, CollKind kind, int p, bool latency, Metrics *m)
{
	Arena a = {0};
	char *diag = NULL;
	Sched *s = build(dg, pl, &a, alg, kind, p, 0, latency, &diag);
	if (s)
		metrics(s, 1 << 20, m);
	else
		fprintf(stderr, "%s\n", diag);
	free(diag);
	arena_free(&a);
	return s != NULL;
}

static void
test_closed_forms(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Place ring;
	place_init(&ring, TK_RING, 1, 64, 0, 0);
	Metrics m;
	bool ok;
	for (int p = 2; p <= 64; p++) {
		ok = measure(dg, &ring, "ring", CK_ALLREDUCE, p, false, &m);
		assert_named(ok &&
		             m.rounds == 2 * (p - 1) && near_rel(m.psi, 1, 1e-12), __LINE__, __FILE__,
		             "ring allreduce on %d ranks: %d rounds, psi %g", p, m.rounds, m.psi);
		ok = measure(dg, &ring, "bruck", CK_ALLTOALL, p, false, &m);
		assert_named(ok &&
		             m.rounds == (int)ceil(log2(p)), __LINE__, __FILE__,
		             "bruck alltoall on %d ranks: %d rounds", p, m.rounds);
		ok = measure(dg, &ring, "pairwise", CK_ALLTOALL, p, false, &m);
		assert_named(ok &&
		             m.rounds == p - 1 && near_rel(m.psi, 1, 1e-12), __LINE__, __FILE__,
		             "pairwise on %d ranks: %d rounds, psi %g", p, m.rounds, m.psi);
		if ((p & (p - 1)) == 0) {
			int L = (int)log2(p);
			ok = measure(dg, &ring, "halving_doubling", CK_ALLREDUCE, p, false, &m);
			assert_named(ok &&
			             m.rounds == 2 * L && near_rel(m.psi, 1, 1e-12), __LINE__, __FILE__,
			             "halving-doubling on %d ranks: %d rounds, psi %g", p, m.rounds, m.psi);
			ok = measure(dg, &ring, "swing", CK_ALLREDUCE, p, false, &m);
			assert_named(ok &&
			             m.rounds == 2 * L && near_rel(m.psi, 1, 1e-12), __LINE__, __FILE__,
			             "swing(bandwidth) on %d ranks: %d rounds, psi %g", p, m.rounds, m.psi);
		}
	}
	/* a non-power of two folds: two more rounds */
	ok = measure(dg, &ring, "halving_doubling", CK_ALLREDUCE, 12, false, &m);
	assert_named(ok &&
	             m.rounds == 2 * 3 + 2, __LINE__, __FILE__, "halving-doubling on 12: %d rounds",
	             m.rounds);
	place_free(&ring);
	/* Bucket on T_n^d: 2d(n-1) rounds, psi = theta = omega = 1 */
	static const int tori[][3] = {{2, 3, 3}, {2, 4, 4}, {2, 5, 5}, {2, 6, 6}, {3, 3, 3}, {3, 4, 4}};
	for (size_t i = 0; i < countof(tori); i++) {
		Place pl;
		int d = tori[i][0], n = tori[i][1];
		place_init(&pl, TK_TORUS, d, n, n, n);
		ok = measure(dg, &pl, "bucket", CK_ALLREDUCE, pl.t->nrank, false, &m);
		assert_named(ok &&
		             m.rounds == 2 * d * (n - 1) && near_rel(m.psi, 1, 1e-12) &&
		             near_rel(m.theta, 1, 1e-12) && near_rel(m.omega, 1, 1e-12), __LINE__, __FILE__,
		             "bucket on T_%d^%d: %d rounds, psi %g theta %g omega %g", n, d, m.rounds,
		             m.psi, m.theta, m.omega);
		place_free(&pl);
	}
}

/* Bucket's 2d instances are independent pipelines: on a rectangle the
 * instances that start on the short side reach the long one while the
 * others are still there, and their sends over one link in one round stay
 * separate messages (sched_end packs within an instance only). So every
 * rank sends exactly one message per instance and step, 2(m-1) + 2(n-1)
 * steps each: 4 p (2(m-1) + 2(n-1)) messages, instance k's on its own
 * link class throughout its first dimension. The schedule runs phase by
 * phase, 4 phases of max(m, n) - 1 rounds. */
static void
test_bucket_instances(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const int rect[][2] = {{4, 8}, {8, 4}, {3, 5}, {6, 6}};
	for (size_t i = 0; i < countof(rect); i++) {
		int m = rect[i][0], n = rect[i][1], p = m * n;
		Place pl;
		place_init(&pl, TK_TORUS, 2, m, n, 0);
		Arena a = {0};
		char *diag = NULL;
		Sched *s = build(dg, &pl, &a, "bucket", CK_ALLREDUCE, p, 0, false, &diag);
		CU_ASSERT_PTR_NOT_NULL_FATAL(s);
		int per = 2 * (m - 1) + 2 * (n - 1), count[4] = {0}, bad = 0;
		for (int k = 0; k < s->nmsg; k++) {
			const Msg *x = &s->msg[k];
			if (x->instance < 0 || x->instance > 3) {
				bad++;
				continue;
			}
			count[x->instance]++;
			/* instance 2j + (e < 0) sends along dimension j first */
			int dim = x->instance / 2, first = dim == 0 ? m - 1 : n - 1;
			const Link *l = &pl.t->link[s->route_link[s->route_off[x->route]]];
			if (x->round < first && (l->dim != dim || l->dir != (x->instance % 2 ? -1 : 1)))
				bad++;
		}
		assert_named(bad == 0 && s->nmsg == 4 * p * per && count[0] == p * per &&
		             count[1] == p * per && count[2] == p * per && count[3] == p * per &&
		             s->nround == 4 * ((m > n ? m : n) - 1), __LINE__, __FILE__,
		             "bucket on torus(%d, %d): %d messages (instances %d %d %d %d), %d rounds, "
		             "%d out of place; expected %d per instance", m, n, s->nmsg, count[0],
		             count[1], count[2], count[3], s->nround, bad, p * per);
		free(diag);
		arena_free(&a);
		place_free(&pl);
	}
}

/* SwingB's theta and theta * omega on a 2^a x 2^b torus, from the cycling
 * rule alone (algorithms.md 5.3): port j starts with dimension j and takes
 * the next dimension with steps left. A (port, mirror) pair at per-dimension
 * step k loads every directed link of its dimension with delta(k) messages
 * of the step's size N/(4 * 2^(s+1)), so a round's busiest link carries the
 * sum over the pairs on the busier dimension: once the short side's steps
 * are used up both pairs run on the long side and its links carry 2 delta
 * while the short side's idle. Returns theta; *theta_omega the product. */
static double
swing_rect_closed_form(const int side[2], double *theta_omega)
{
	int left[2], L = 0;
	for (int i = 0; i < 2; i++) {
		left[i] = (int)lround(log2(side[i]));
		L += left[i];
	}
	int used[2][2] = {{0}}, dim[2] = {0, 1};
	double load = 0, hops = 0, weight = 0;
	for (int s = 0; s < L; s++) {
		double per_dim[2] = {0, 0};
		for (int j = 0; j < 2; j++) {
			while (used[j][dim[j]] == left[dim[j]])
				dim[j] = 1 - dim[j];
			int k = used[j][dim[j]]++, delta = abs((1 - (int)pow(-2, k + 1)) / 3);
			per_dim[dim[j]] += delta;
			hops += ldexp(delta, -s - 2); /* two of the four ports */
			dim[j] = 1 - dim[j];
		}
		load += ldexp(fmax(per_dim[0], per_dim[1]), -s - 1);
		weight += ldexp(1, -s - 1);
	}
	*theta_omega = load / weight;
	return hops / weight;
}

static void
test_swing_rectangles(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* 16x4: rounds 1-4 one hop on both sides, rounds 5 and 6 all four ports
	 * on the 16-ring at distances 3 and 5 (link loads 6 and 10): theta
	 * 1.1270, theta * omega 1.3016 */
	static const int sides[][2] = {{16, 4}, {4, 16}, {32, 8}, {64, 16}, {64, 4}};
	for (size_t i = 0; i < countof(sides); i++) {
		Place pl;
		place_init(&pl, TK_TORUS, 2, sides[i][0], sides[i][1], 0);
		double to, theta = swing_rect_closed_form(sides[i], &to);
		int L = (int)lround(log2(sides[i][0] * sides[i][1]));
		Metrics m = {0};
		/* measured first: the message's arguments are read when the call is made */
		bool built = measure(dg, &pl, "swing", CK_ALLREDUCE, pl.t->nrank, false, &m);
		assert_named(built && m.rounds == 2 * L && near_rel(m.psi, 1, 1e-12) && near_rel(m.theta, theta, 1e-9) &&
		             near_rel(m.theta * m.omega, to, 1e-9), __LINE__, __FILE__,
		             "swing(bandwidth) on %dx%d: rounds %d psi %g theta %.4f (want %.4f) "
		             "theta*omega %.4f (want %.4f)", sides[i][0], sides[i][1], m.rounds, m.psi,
		             m.theta, theta, m.theta * m.omega, to);
		if (sides[i][0] == 16 && sides[i][1] == 4)
			CU_ASSERT(fabs(theta - 1.1270) < 5e-5 && fabs(to - 1.3016) < 5e-5);
		place_free(&pl);
	}
}

static void
test_swing_trivance_theta(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* SwingB multiport on 2^m x 2^m: omega 1, theta as algorithms.md 5.3 */
	static const struct { int n; double theta; } sw[] = {{4, 1.000}, {8, 1.095}, {16, 1.141}};
	Metrics m;
	bool ok;
	for (size_t i = 0; i < countof(sw); i++) {
		Place pl;
		place_init(&pl, TK_TORUS, 2, sw[i].n, sw[i].n, 0);
		int L = 2 * (int)log2(sw[i].n);
		ok = measure(dg, &pl, "swing", CK_ALLREDUCE, pl.t->nrank, false, &m);
		assert_named(ok &&
		             m.rounds == 2 * L && near_rel(m.psi, 1, 1e-12) && near_rel(m.omega, 1, 1e-9) &&
		             fabs(m.theta - sw[i].theta) < 0.0005, __LINE__, __FILE__,
		             "swing(bandwidth) on %dx%d: rounds %d psi %g theta %.4f (want %.3f) omega %g",
		             sw[i].n, sw[i].n, m.rounds, m.psi, m.theta, sw[i].theta, m.omega);
		place_free(&pl);
	}
	/* on a whole HyperX every Swing peer is one direct link away (theta 1);
	 * the 2d = 4 ports use 4 of a node's 2(n-1) links: omega 2(n-1)/4 */
	for (int n = 4; n <= 8; n *= 2) {
		Place pl;
		place_init(&pl, TK_HYPERX, 2, n, n, 0);
		int L = 2 * (int)log2(n);
		ok = measure(dg, &pl, "swing", CK_ALLREDUCE, pl.t->nrank, false, &m);
		assert_named(ok &&
		             m.rounds == 2 * L && near_rel(m.psi, 1, 1e-12) && near_rel(m.theta, 1, 1e-12) &&
		             near_rel(m.omega, 2.0 * (n - 1) / 4, 1e-9), __LINE__, __FILE__,
		             "swing(bandwidth) on hyperx(%d, %d): rounds %d psi %g theta %g omega %g", n,
		             n, m.rounds, m.psi, m.theta, m.omega);
		place_free(&pl);
	}
	/* TrivanceB: ring of 9 theta 1.5, 9x9 1.2, 27x27 1.286; psi 1, omega 1 */
	static const struct { int d, n; double theta; } tv[] = {{1, 9, 1.5}, {2, 9, 1.2}, {2, 3, 1.0},
	                                                       {2, 27, 1.286}};
	for (size_t i = 0; i < countof(tv); i++) {
		Place pl;
		place_init(&pl, tv[i].d == 1 ? TK_RING : TK_TORUS, tv[i].d, tv[i].n, tv[i].n, 0);
		int t = (int)lround(log(tv[i].n) / log(3)) * tv[i].d;
		ok = measure(dg, &pl, "trivance", CK_ALLREDUCE, pl.t->nrank, false, &m);
		assert_named(ok &&
		             m.rounds == 2 * t && near_rel(m.psi, 1, 1e-12) && near_rel(m.omega, 1, 1e-9) &&
		             fabs(m.theta - tv[i].theta) < 0.0005, __LINE__, __FILE__,
		             "trivance(bandwidth) on %d^%d: rounds %d psi %g theta %.4f (want %.3f) "
		             "omega %g", tv[i].n, tv[i].d, m.rounds, m.psi, m.theta, tv[i].theta, m.omega);
		place_free(&pl);
	}
}

static void
test_multiport_ring(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* 2d Hamiltonian rings: psi = theta = omega = 1, 2(p-1) rounds */
	static const int shapes[][2] = {{3, 3}, {4, 4}, {5, 5}, {8, 8}, {8, 4}, {9, 3}, {16, 4}};
	Metrics m;
	bool ok;
	for (size_t i = 0; i < countof(shapes); i++) {
		Place pl;
		place_init(&pl, TK_TORUS, 2, shapes[i][0], shapes[i][1], 0);
		int p = pl.t->nrank;
		ok = measure(dg, &pl, "multiport_ring", CK_ALLREDUCE, p, false, &m);
		assert_named(ok &&
		             m.rounds == 2 * (p - 1) && near_rel(m.psi, 1, 1e-12) &&
		             near_rel(m.theta, 1, 1e-12) && near_rel(m.omega, 1, 1e-9), __LINE__, __FILE__,
		             "multiport_ring on %dx%d: rounds %d psi %g theta %g omega %g",
		             shapes[i][0], shapes[i][1], m.rounds, m.psi, m.theta, m.omega);
		place_free(&pl);
	}
}

/* algorithms.md 0.4: hop distances of rank-space algorithms on groups of
 * consecutive chips, row-major. */
static void
test_placements(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct {
		int ndim, s0, s1, s2, g;
		int hops[4];   /* HD/RD/RH partner hops for masks 1, 2, 4, 8 */
		int closure;   /* ring g-1 -> 0 */
		int dbt;       /* the longest double-binary-tree edge */
	} rows[] = {
		{2, 8, 8, 0, 4, {1, 2}, 3, 2},       {2, 8, 8, 0, 8, {1, 2, 4}, 1, 4},
		{2, 8, 8, 0, 16, {1, 2, 4, 1}, 2, 5}, {2, 4, 16, 0, 8, {1, 2, 4}, 7, 4},
		{2, 4, 16, 0, 16, {1, 2, 4, 8}, 1, 8}, {2, 2, 32, 0, 16, {1, 2, 4, 8}, 15, 8},
		{3, 4, 4, 4, 8, {1, 2, 1}, 2, 3},    {3, 4, 4, 4, 16, {1, 2, 1, 2}, 2, 3},
	};
	for (size_t i = 0; i < countof(rows); i++) {
		Place pl;
		place_init(&pl, TK_TORUS, rows[i].ndim, rows[i].s0, rows[i].s1, rows[i].s2);
		int g = rows[i].g, L = (int)log2(g);
		for (int k = 0; k < L; k++) {
			int h = 0;
			for (int r = 0; r < g; r++) {
				int d = topo_distance(&pl.routes, r, r ^ (1 << k));
				h = d > h ? d : h;
			}
			assert_named(h == rows[i].hops[k], __LINE__, __FILE__,
			             "%dx%dx%d, g = %d: mask %d partners %d hops (want %d)", rows[i].s0,
			             rows[i].s1, rows[i].s2, g, 1 << k, h, rows[i].hops[k]);
		}
		int closure = topo_distance(&pl.routes, g - 1, 0);
		assert_named(closure == rows[i].closure, __LINE__, __FILE__,
		             "%dx%dx%d, g = %d: ring closure %d hops (want %d)", rows[i].s0, rows[i].s1,
		             rows[i].s2, g, closure, rows[i].closure);
		/* the DBT's longest edge, from its built schedule's routes */
		Arena a = {0};
		char *diag = NULL;
		Sched *s = build(dg, &pl, &a, "double_binary_tree", CK_ALLREDUCE, g, 0, false, &diag);
		int longest = 0;
		for (int r = 0; s && r < s->nroute; r++)
			longest = sched_route_len(s, r) > longest ? sched_route_len(s, r) : longest;
		assert_named(s && longest == rows[i].dbt, __LINE__, __FILE__,
		             "%dx%dx%d, g = %d: longest DBT edge %d hops (want %d)", rows[i].s0,
		             rows[i].s1, rows[i].s2, g, longest, rows[i].dbt);
		free(diag);
		arena_free(&a);
		place_free(&pl);
	}
}

/* The 64-chip evaluation: every shape, group and algorithm per primitive. */
static void
test_evaluation(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const int shapes[][4] = {{2, 8, 8, 0}, {2, 4, 16, 0}, {2, 2, 32, 0}, {3, 4, 4, 4}};
	static const struct { CollKind kind; const char *alg; int ports; } per[] = {
		{CK_ALLREDUCE, "ring", 1}, {CK_ALLREDUCE, "ring", 2}, {CK_ALLREDUCE, "halving_doubling", 0},
		{CK_ALLREDUCE, "double_binary_tree", 0}, {CK_ALLGATHER, "ring", 1},
		{CK_ALLGATHER, "ring", 2}, {CK_ALLGATHER, "recursive_doubling", 0},
		{CK_REDUCE_SCATTER, "ring", 1}, {CK_REDUCE_SCATTER, "ring", 2},
		{CK_REDUCE_SCATTER, "recursive_halving", 0}, {CK_ALLTOALL, "pairwise", 0},
		{CK_ALLTOALL, "bruck", 0},
	};
	static const int groups[] = {2, 4, 8, 16};
	for (size_t s = 0; s < countof(shapes); s++) {
		Place pl;
		place_init(&pl, TK_TORUS, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3]);
		for (size_t g = 0; g < countof(groups); g++)
			for (size_t a = 0; a < countof(per); a++) {
				Arena ar = {0};
				char *diag = NULL;
				Sched *x = build(dg, &pl, &ar, per[a].alg, per[a].kind, groups[g], per[a].ports,
				                 false, &diag);
				assert_named(x != NULL, __LINE__, __FILE__, "%s on %d chips of shape %d: %s",
				             per[a].alg, groups[g], (int)s, diag);
				free(diag);
				arena_free(&ar);
			}
		place_free(&pl);
	}
}

/* ---- TTO (algorithms.md 9.1, 9.4) ---- */

/* A cell of 9.1's tables: direction to the parent and depth, R, or -. */
static void
tto_cell(const Topo *t, const int *parent, int v, char *buf, size_t len)
{
	int k = t->size[0];
	if (parent[v] < 0) {
		snprintf(buf, len, "%s", v == 0 || v == k - 1 || v == k * k - 1 ? "R" : "-");
		return;
	}
	int d = 0;
	for (int u = v; parent[u] >= 0; u = parent[u])
		d++;
	int step = parent[v] - v;
	char dir = step == -k ? 'N' : step == k ? 'S' : step == -1 ? 'W' : 'E';
	snprintf(buf, len, "%c%d", dir, d);
}

static void
test_tto_trees_4x4(void)
{
	static const char *const want[3] = {
		"R  W1 W2 W3 N1 W2 W3 W4 N2 W3 W4 W5 N3 W4 W5 W6 ",
		"S6 S5 S4 S3 S5 S4 S3 S2 S4 S3 S2 S1 E3 E2 E1 R  ",
		"E3 E2 E1 R  E4 E3 N2 N1 E5 N4 N3 N2 -  N5 N4 N3 ",
	};
	Place pl;
	place_init(&pl, TK_MESH, 2, 4, 4, 0);
	int parent[16];
	for (int tree = 0; tree < 3; tree++) {
		char got[128] = "", cell[16];
		tto_tree_parents(pl.t, tree, parent);
		for (int v = 0; v < 16; v++) {
			tto_cell(pl.t, parent, v, cell, sizeof cell);
			snprintf(got + strlen(got), sizeof got - strlen(got), "%-2s ", cell);
		}
		assert_named(strcmp(got, want[tree]) == 0, __LINE__, __FILE__,
		             "tree %d:\n got  %s\n want %s", tree, got, want[tree]);
	}
	place_free(&pl);
}

/* The mesh trees for k = 2..9: spanning (TR all but (k-1, 0)), heights
 * 2(k-1), 2(k-1), 2k-3, and no directed link in two trees' reduce edges. */
static void
test_tto_trees_disjoint(void)
{
	for (int k = 2; k <= 9; k++) {
		Place pl;
		place_init(&pl, TK_MESH, 2, k, k, 0);
		int n = k * k, *parent = xmalloc((size_t)n * sizeof *parent);
		int *owner = xmalloc((size_t)pl.t->nlink * sizeof *owner);
		for (int l = 0; l < pl.t->nlink; l++)
			owner[l] = -1;
		int clashes = 0;
		for (int tree = 0; tree < 3; tree++) {
			tto_tree_parents(pl.t, tree, parent);
			int edges = 0, height = 0;
			for (int v = 0; v < n; v++) {
				if (parent[v] < 0)
					continue;
				int l = topo_find_link(pl.t, v, parent[v], 0), d = 0;
				CU_ASSERT_FATAL(l >= 0); /* a mesh link */
				clashes += owner[l] >= 0;
				owner[l] = tree;
				edges++;
				for (int u = v; parent[u] >= 0 && d <= n; u = parent[u])
					d++;
				height = d > height ? d : height;
			}
			assert_named(edges == (tree == 2 ? n - 2 : n - 1), __LINE__, __FILE__,
			             "k=%d tree %d: %d edges", k, tree, edges);
			assert_named(height == (tree == 2 ? 2 * k - 3 : 2 * (k - 1)), __LINE__, __FILE__,
			             "k=%d tree %d: height %d", k, tree, height);
		}
		assert_named(clashes == 0, __LINE__, __FILE__, "k=%d: %d shared links", k, clashes);
		free(parent);
		free(owner);
		place_free(&pl);
	}
}

/* Builds tto on the k x k mesh without (k-1, 0); m = 0: the cost model's
 * for `size` bytes. */
static Sched *
tto_build_sized(Diag *dg, Place *pl, Arena *a, int k, int m, double size, char **diag)
{
	place_init(pl, TK_MESH, 2, k, k, 0);
	int p = 0;
	for (int v = 0; v < k * k; v++)
		if (v != (k - 1) * k)
			pl->rank_node[p++] = v;
	AlgCtx c = {.diag = dg, .arena = a, .name = "X", .loc = {1, 1}, .kind = CK_ALLREDUCE, .topo = pl->t,
	            .routes = &pl->routes, .rank_node = pl->rank_node, .nrank = p,
	            .algorithm = "tto", .chunks = 3 * m, .size = size};
	return build_ctx(&c, diag);
}

static Sched *
tto_build(Diag *dg, Place *pl, Arena *a, int k, int m, char **diag)
{
	return tto_build_sized(dg, pl, a, k, m, 0, diag);
}

/* Verified; M + 2h - 1 rounds with h = 2k - 3 (the excluded chiplet's
 * children skip it); 2 (k^2 - 2) M messages per tree; every reduce link
 * in one tree; at most two chunks per link and round (a reduce and
 * another tree's broadcast), two in the steady state; psi = 1. */
static void
test_tto_schedule(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* 0: twice the 2h - 1 slots of filling and draining, a steady state */
	static const int ms[] = {1, 2, 5, 0};
	for (int k = 2; k <= 7; k++)
		for (size_t i = 0; i < countof(ms); i++) {
			Place pl;
			Arena a = {0};
			char *diag = NULL;
			int h = 2 * k - 3, m = ms[i] ? ms[i] : 2 * (2 * h - 1);
			Sched *s = tto_build(dg, &pl, &a, k, m, &diag);
			assert_named(s != NULL, __LINE__, __FILE__, "k=%d M=%d: %s", k, ms[i], diag);
			free(diag);
			if (!s) {
				arena_free(&a);
				place_free(&pl);
				continue;
			}
			assert_named(s->nchunk == 3 * m && s->nround == m + 2 * h - 1, __LINE__, __FILE__,
			             "k=%d M=%d: %d chunks, %d rounds, want %d", k, m, s->nchunk, s->nround,
			             m + 2 * h - 1);
			CU_ASSERT_EQUAL(s->nmsg, 3 * 2 * (k * k - 2) * m);
			int nl = pl.t->nlink, *owner = xmalloc((size_t)nl * sizeof *owner);
			int *load = xcalloc((size_t)nl * (size_t)s->nround, sizeof *load);
			for (int l = 0; l < nl; l++)
				owner[l] = -1;
			int clashes = 0, maxload = 0;
			for (int j = 0; j < s->nmsg; j++) {
				const Msg *msg = &s->msg[j];
				CU_ASSERT_EQUAL(msg->n, 1);
				int tree = s->chunks[msg->first] / m, len = sched_route_len(s, msg->route);
				for (int e = 0; e < len; e++) {
					int l = s->route_link[s->route_off[msg->route] + e];
					int *cell = &load[(size_t)msg->round * (size_t)nl + (size_t)l];
					maxload = ++*cell > maxload ? *cell : maxload;
					if (msg->op == X_REDUCE) {
						clashes += owner[l] >= 0 && owner[l] != tree;
						owner[l] = tree;
					}
				}
			}
			CU_ASSERT_EQUAL(clashes, 0);
			/* never more than two; with M = 1 every reduce ends before the first
			 * broadcast, with the default M the pipeline's steady state shares */
			assert_named(ms[i] == 1 ? maxload == 1 : ms[i] == 0 ? maxload == 2 : maxload <= 2,
			             __LINE__, __FILE__, "k=%d M=%d: max load %d", k, m, maxload);
			Metrics mt;
			metrics(s, 3.0 * m * 1024, &mt);
			assert_named(near_rel(mt.psi, 1, 1e-9), __LINE__, __FILE__, "k=%d psi %g", k, mt.psi);
			free(owner);
			free(load);
			arena_free(&a);
			place_free(&pl);
		}
}

/* The ranks may come in any order: reversed, the same slots and messages. */
static void
test_tto_rank_order(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Place pl;
	Arena a = {0};
	char *diag = NULL;
	Sched *s = tto_build(dg, &pl, &a, 4, 3, &diag);
	CU_ASSERT_FATAL(s != NULL);
	int nround = s->nround, nmsg = s->nmsg;
	free(diag);
	diag = NULL;
	for (int i = 0, j = 14; i < j; i++, j--) {
		int x = pl.rank_node[i];
		pl.rank_node[i] = pl.rank_node[j];
		pl.rank_node[j] = x;
	}
	AlgCtx c = {.diag = dg, .arena = &a, .name = "X", .loc = {1, 1}, .kind = CK_ALLREDUCE, .topo = pl.t,
	            .routes = &pl.routes, .rank_node = pl.rank_node, .nrank = 15,
	            .algorithm = "tto", .chunks = 9};
	Sched *r = build_ctx(&c, &diag);
	assert_named(r && r->nround == nround && r->nmsg == nmsg && r->rank_node[0] == 15,
	             __LINE__, __FILE__, "reversed ranks: %s", diag);
	free(diag);
	arena_free(&a);
	place_free(&pl);
}

/* The cost model's count by hand: floor(sqrt(fill beta share / alpha)) on
 * the default network (400 Gbps, 100 ns a hop, no overheads), at least 1. */
static int
model_count(double fill, double share)
{
	double m = floor(sqrt(fill * (8 / 400e9) * share / 100e-9));
	return m < 1 ? 1 : (int)m;
}

/* chain on ring(p) from rank 0: `segments` and `chunks` as given (0: none). */
static Sched *
chain_build(Diag *dg, Place *pl, Arena *a, int p, int segments, int chunks, double size, char **diag)
{
	place_init(pl, TK_RING, 1, p, 0, 0);
	AlgCtx c = {.diag = dg, .arena = a, .name = "X", .loc = {1, 1}, .kind = CK_BROADCAST, .topo = pl->t,
	            .routes = &pl->routes, .rank_node = pl->rank_node, .nrank = p, .whole = true,
	            .algorithm = "chain", .segments = segments, .chunks = chunks, .size = size};
	return build_ctx(&c, diag);
}

/* Checks one build's count, rounds and the label the output shows. */
static void
check_chosen(int line, const Sched *s, const char *diag, int nchunk, int nround,
             const char *choice, bool size_chosen)
{
	assert_named(s != NULL, line, __FILE__, "%s", diag ? diag : "");
	if (!s)
		return;
	assert_named(s->nchunk == nchunk && s->nround == nround, line, __FILE__,
	             "%d chunks, %d rounds; want %d, %d", s->nchunk, s->nround, nchunk, nround);
	assert_named(s->choice && strcmp(s->choice, choice) == 0 && s->size_chosen == size_chosen,
	             line, __FILE__, "choice '%s' (size_chosen %d); want '%s' (%d)",
	             s->choice ? s->choice : "(none)", s->size_chosen, choice, size_chosen);
}

/* chain's segments and tto's chunks, left free, are the cost model's for
 * the size (pipeline_segments: chain fill p - 2 and the whole vector; tto
 * fill 2h - 1 with h = 2k - 3 and a third of it), growing with it; given,
 * they stay as given at every size and the label says "fixed". */
static void
test_size_chosen_counts(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const double sizes[] = {4096, 1 << 20, 64.0 * (1 << 20)};
	int prev_chain = 0, prev_tto = 0;
	for (size_t i = 0; i < countof(sizes); i++) {
		double z = sizes[i];
		char want[64];
		Place pl;
		Arena a = {0};
		char *diag = NULL;
		int S = model_count(8 - 2, z);
		snprintf(want, sizeof want, "segments %d", S);
		check_chosen(__LINE__, chain_build(dg, &pl, &a, 8, 0, 0, z, &diag), diag, S, 6 + S, want,
		             true);
		CU_ASSERT(S > prev_chain);
		prev_chain = S;
		free(diag), diag = NULL, place_free(&pl);
		check_chosen(__LINE__, chain_build(dg, &pl, &a, 8, 8, 0, z, &diag), diag, 8, 6 + 8,
		             "fixed segments 8", false);
		free(diag), diag = NULL, place_free(&pl);
		check_chosen(__LINE__, chain_build(dg, &pl, &a, 8, 0, 16, z, &diag), diag, 16, 6 + 16,
		             "fixed segments 16", false);
		free(diag), diag = NULL, place_free(&pl);
		/* two ranks: nothing to fill, one segment whatever the size */
		check_chosen(__LINE__, chain_build(dg, &pl, &a, 2, 0, 0, z, &diag), diag, 1, 1,
		             "segments 1", true);
		free(diag), diag = NULL, place_free(&pl);

		int h = 2 * 4 - 3, M = model_count(2 * h - 1, z / 3);
		snprintf(want, sizeof want, "chunks %d", 3 * M);
		check_chosen(__LINE__, tto_build_sized(dg, &pl, &a, 4, 0, z, &diag), diag, 3 * M,
		             M + 2 * h - 1, want, true);
		CU_ASSERT(M > prev_tto);
		prev_tto = M;
		free(diag), diag = NULL, place_free(&pl);
		check_chosen(__LINE__, tto_build_sized(dg, &pl, &a, 4, 64, z, &diag), diag, 192,
		             64 + 2 * h - 1, "fixed chunks 192", false);
		free(diag), place_free(&pl);
		arena_free(&a);
	}
	/* the figures at the two ends */
	CU_ASSERT_EQUAL(model_count(6, 4096), 2);
	CU_ASSERT_EQUAL(prev_chain, 283);
	CU_ASSERT_EQUAL(model_count(9, 4096 / 3.0), 1);
	CU_ASSERT_EQUAL(prev_tto, 200);
	/* the message cap: M msgs_per_seg within MAX_PIPELINE_MSGS */
	Place pl;
	place_init(&pl, TK_RING, 1, 8, 0, 0);
	AlgCtx c = {.diag = dg, .topo = pl.t};
	CU_ASSERT_EQUAL(pipeline_segments(&c, 1000, 1e15, 7), MAX_PIPELINE_MSGS / 7);
	CU_ASSERT_EQUAL(pipeline_segments(&c, 6, 64.0 * (1 << 20), 7), 283);
	CU_ASSERT_EQUAL(pipeline_segments(&c, 0, 1e15, 7), 1);
	place_free(&pl);
}

static void
test_cannot_run(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct { TopoKind k; int ndim, s0, s1, p; const char *alg; bool latency;
		CollKind kind; const char *want; } bad[] = {
		{TK_RING, 1, 16, 0, 8, "trivance", false, CK_ALLREDUCE, "trivance needs 3^t ranks"},
		{TK_TORUS, 2, 4, 4, 8, "bucket", false, CK_ALLREDUCE, "bucket runs on every rank of a torus"},
		{TK_TORUS, 2, 6, 6, 36, "swing", false, CK_ALLREDUCE, "needs every side a power of 2"},
		{TK_RING, 1, 8, 0, 8, "swing", true, CK_REDUCE_SCATTER, "implements allreduce only"},
		{TK_TORUS, 3, 3, 3, 27, "multiport_ring", false, CK_ALLREDUCE, "1D or 2D torus"},
		{TK_TORUS, 2, 4, 8, 32, "multiport_ring", false, CK_ALLREDUCE, "staircase"},
		{TK_RING, 1, 8, 0, 8, "pairwise", false, CK_ALLREDUCE, "does not implement allreduce"},
		{TK_MESH, 2, 4, 4, 16, "tto", false, CK_ALLREDUCE,
		 "tto leaves chiplet (3, 0) out (its staircase tree, rooted at (0, 3), cannot reach it);"
		 " give 'X' the other 15 chiplets: `ranks 0..11, 13..15;`"},
		{TK_MESH, 2, 4, 4, 12, "tto", false, CK_ALLREDUCE,
		 "'X' leaves out (3, 1) too (`ranks 0..11, 13..15;` gives it the others)"},
		{TK_MESH, 2, 4, 6, 24, "tto", false, CK_ALLREDUCE, "'T' is mesh(4, 6)"},
		{TK_TORUS, 2, 4, 4, 16, "tto", false, CK_ALLREDUCE, "square k x k mesh"},
		{TK_MESH, 2, 4, 4, 15, "tto", false, CK_REDUCE_SCATTER, "tto does not implement"},
	};
	for (size_t i = 0; i < countof(bad); i++) {
		Place pl;
		place_init(&pl, bad[i].k, bad[i].ndim, bad[i].s0, bad[i].s1, bad[i].s1);
		Arena a = {0};
		char *diag = NULL;
		Sched *s = build(dg, &pl, &a, bad[i].alg, bad[i].kind, bad[i].p, 0, bad[i].latency, &diag);
		assert_named(!s && strstr(diag, bad[i].want), __LINE__, __FILE__,
		             "%s: want '%s', got '%s'", bad[i].alg, bad[i].want, diag);
		free(diag);
		arena_free(&a);
		place_free(&pl);
	}
}

/* sched_end puts messages in round order whatever order the generator
 * added them in, and merges those of one (round, src, dst, route, op). */
static void
test_sched_order(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Arena a = {0};
	int size[1] = {4}, rank_node[4] = {0, 1, 2, 3};
	Topo *t = topo_new(&a, TK_RING, "R", 1, size, 0, net_defaults);
	Routes routes;
	routes_init(&routes, t, ROUTE_SHORTEST);
	Sched *s = sched_new(&a, "X", (Loc){1, 1}, CK_ALLGATHER, "hand", t, rank_node, 4);
	s->nchunk = 4;
	SchedBuilder b;
	sched_begin(&b, &a, s, &routes);
	int c0 = 0, c1 = 1, c2 = 2;
	sched_msg(&b, 2, 0, 1, X_COPY, &c0, 1);
	sched_msg(&b, 0, 1, 2, X_COPY, &c1, 1);
	sched_msg(&b, 1, 2, 3, X_COPY, &c2, 1);
	sched_msg(&b, 0, 1, 2, X_COPY, &c0, 1);
	sched_end(dg, &b);
	CU_ASSERT_EQUAL_FATAL(s->nmsg, 3);
	CU_ASSERT_EQUAL(s->nround, 3);
	for (int i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(s->msg[i].round, i);
	CU_ASSERT_EQUAL(s->msg[0].src, 1);
	CU_ASSERT_EQUAL(s->msg[0].n, 2);
	CU_ASSERT_EQUAL(s->msg[2].src, 0);
	routes_free(&routes);
	arena_free(&a);
}

/* hierarchical(A, B): ASTRA-sim's dimension-by-dimension collective; every
 * schedule verifies; rounds are the phases' sums */
static void
test_hierarchical(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct {
		TopoKind k;
		int n0, n1;
		const char *a0, *a1;
		CollKind kind;
		int rounds;
	} cases[] = {
		{TK_TORUS, 4, 4, "ring", "ring", CK_ALLREDUCE, 12},
		{TK_TORUS, 8, 8, "ring", "ring", CK_ALLREDUCE, 28},
		{TK_TORUS, 4, 8, "direct", "halving_doubling", CK_ALLREDUCE, 8},
		{TK_TORUS, 4, 4, "halving_doubling", "ring", CK_REDUCE_SCATTER, 5},
		{TK_TORUS, 4, 4, "ring", "direct", CK_ALLGATHER, 4},
		{TK_MESH, 4, 4, "direct", "ring", CK_ALLREDUCE, 8},
		{TK_HYPERX, 4, 4, "direct", "direct", CK_ALLREDUCE, 4},
		{TK_TORUS, 3, 5, "ring", "direct", CK_ALLREDUCE, 6},
		/* a double binary tree on the last dimension: trees of height 2 on 4 */
		{TK_TORUS, 4, 4, "ring", "double_binary_tree", CK_ALLREDUCE, 3 + 4 + 3},
		{TK_TORUS, 8, 5, "direct", "double_binary_tree", CK_ALLREDUCE, 1 + 6 + 1},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		Place pl;
		place_init(&pl, cases[i].k, 2, cases[i].n0, cases[i].n1, 0);
		Arena a = {0};
		char *diag = NULL;
		AlgCtx c = {.diag = dg, .arena = &a, .name = "X", .loc = {1, 1}, .kind = cases[i].kind,
		            .topo = pl.t, .routes = &pl.routes, .rank_node = pl.rank_node,
		            .nrank = pl.t->nrank, .whole = true, .algorithm = "hierarchical",
		            .dim_alg = {cases[i].a0, cases[i].a1}, .ndim_alg = 2};
		Sched *s = build_ctx(&c, &diag);
		assert_named(s != NULL, __LINE__, __FILE__, "hierarchical(%s, %s) case %zu: %s",
		             cases[i].a0, cases[i].a1, i, diag);
		if (s) {
			Metrics m;
			metrics(s, 1 << 20, &m);
			assert_named(m.rounds == cases[i].rounds, __LINE__, __FILE__,
			             "case %zu: %d rounds, want %d", i, m.rounds, cases[i].rounds);
		}
		free(diag);
		arena_free(&a);
		place_free(&pl);
	}
	/* spine-leaf: the hosts of a leaf (4) first, then across the 8 leaves */
	static const struct {
		const char *a0, *a1;
		CollKind kind;
		int rounds;
	} sl[] = {
		{"ring", "ring", CK_ALLREDUCE, 2 * (3 + 7)},
		{"direct", "halving_doubling", CK_ALLREDUCE, 2 * (1 + 3)},
		{"halving_doubling", "direct", CK_REDUCE_SCATTER, 2 + 1},
	};
	for (size_t i = 0; i < countof(sl); i++) {
		Arena ta = {0}, a = {0};
		Topo *t = topo_spine_leaf(&ta, "S", 4, 8, 4, net_defaults);
		Routes routes;
		routes_init(&routes, t, ROUTE_SHORTEST);
		int rank_node[32];
		for (int r = 0; r < 32; r++)
			rank_node[r] = r;
		char *diag = NULL;
		AlgCtx c = {.diag = dg, .arena = &a, .name = "X", .loc = {1, 1}, .kind = sl[i].kind, .topo = t,
		            .routes = &routes, .rank_node = rank_node, .nrank = 32, .whole = true,
		            .algorithm = "hierarchical", .dim_alg = {sl[i].a0, sl[i].a1},
		            .ndim_alg = 2};
		Sched *s = build_ctx(&c, &diag);
		assert_named(s != NULL, __LINE__, __FILE__, "spine-leaf case %zu: %s", i, diag);
		if (s) {
			Metrics m;
			metrics(s, 1 << 20, &m);
			assert_named(m.rounds == sl[i].rounds, __LINE__, __FILE__,
			             "spine-leaf case %zu: %d rounds, want %d", i, m.rounds, sl[i].rounds);
		}
		free(diag);
		routes_free(&routes);
		arena_free(&a);
		arena_free(&ta);
	}
	/* refusals: halving_doubling on 6, one algorithm for two dimensions */
	Place pl;
	place_init(&pl, TK_TORUS, 2, 6, 4, 0);
	Arena a = {0};
	char *diag = NULL;
	AlgCtx c = {.diag = dg, .arena = &a, .name = "X", .loc = {1, 1}, .kind = CK_ALLREDUCE, .topo = pl.t,
	            .routes = &pl.routes, .rank_node = pl.rank_node, .nrank = pl.t->nrank,
	            .whole = true, .algorithm = "hierarchical",
	            .dim_alg = {"halving_doubling", "ring"}, .ndim_alg = 2};
	CU_ASSERT_PTR_NULL(build_ctx(&c, &diag));
	CU_ASSERT_PTR_NOT_NULL(strstr(diag, "halving_doubling along dimension 0 needs a power of 2"));
	free(diag);
	c.ndim_alg = 1;
	CU_ASSERT_PTR_NULL(build_ctx(&c, &diag));
	CU_ASSERT_PTR_NOT_NULL(strstr(diag, "one algorithm per dimension"));
	free(diag);
	c.ndim_alg = 2;
	c.dim_alg[0] = "double_binary_tree";
	CU_ASSERT_PTR_NULL(build_ctx(&c, &diag));
	CU_ASSERT_PTR_NOT_NULL(strstr(diag, "double_binary_tree is an allreduce: it runs along the "
	                                    "last dimension"));
	free(diag);
	arena_free(&a);
	place_free(&pl);
}

/* ---- the registry, the language and `auto` agree ---- */

static char *
coll_text(TopoKind t, CollKind k, const char *alg)
{
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	fprintf(f, "topology T = %s;\ncollective %s X on T {\n    algorithm %s;\n%s}\n",
	        topo_form_decl[t], coll_kind_name[k], alg, KIND(k) & KINDS_ROOTED ? "    root 0;\n" : "");
	fclose(f);
	return text;
}

/* Whether the language refuses the algorithm for the kind or the form
 * (its two messages), whatever it says of the arguments. */
static bool
language_refuses(Diag *dg, TopoKind t, CollKind k, AlgId a)
{
	char *text = coll_text(t, k, alg_forms[a].name);
	Checked c;
	check_str(dg, &c, text);
	bool refused = strstr(c.diag, "does not implement") || strstr(c.diag, " runs on ");
	checked_free(&c);
	free(text);
	return refused;
}

static void
test_registry_language(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	int agree = 0;
	for (int t = 0; t < NTOPOKIND; t++)
		for (int k = 0; k < NCOLLKIND; k++)
			for (int a = 0; a < NALG; a++) {
				bool applies = alg_applies((AlgId)a, (CollKind)k, (TopoKind)t);
				bool refused = language_refuses(dg, (TopoKind)t, (CollKind)k, (AlgId)a);
				assert_named(applies != refused, __LINE__, __FILE__,
				             "%s %s on %s: the registry says %s, the language %s",
				             alg_forms[a].name, coll_kind_name[k], topo_forms[t].form.name,
				             applies ? "applies" : "does not apply",
				             refused ? "refuses" : "accepts");
				agree += applies != refused;
			}
	CU_ASSERT_EQUAL(agree, NTOPOKIND * NCOLLKIND * NALG);
}

/* The collective's one schedule built at `size`; its algorithm, or NULL. */
static char *
built_algorithm(Diag *dg, const char *text, double size)
{
	Checked c;
	check_str(dg, &c, text);
	char *alg = NULL;
	if (c.errors == 0) {
		diag_mute(dg, true);
		Prog p = {.auto_size = size};
		if (lower(dg, c.file, &p) == 0 && p.nsched == 1 && verify(dg, p.sched[0]) == 0)
			alg = strdup(p.sched[0]->algorithm);
		diag_mute(dg, false);
		diag_reset(dg);
		prog_free(&p);
	}
	checked_free(&c);
	return alg;
}

static void
test_auto_picks_what_the_language_accepts(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const double sizes[] = {4096, 1 << 20, 64 << 20};
	int picks = 0;
	for (int t = 0; t < NTOPOKIND; t++)
		for (int k = 0; k < NCOLLKIND; k++) {
			for (int a = 0; a < NALG; a++)
				if (alg_auto_candidate((AlgId)a, (CollKind)k, &(Topo){.kind = (TopoKind)t}))
					assert_named(!language_refuses(dg, (TopoKind)t, (CollKind)k, (AlgId)a), __LINE__,
					             __FILE__, "auto tries %s for %s on %s, which the language refuses",
					             alg_forms[a].name, coll_kind_name[k], topo_forms[t].form.name);
			char *text = coll_text((TopoKind)t, (CollKind)k, "auto");
			for (size_t i = 0; i < countof(sizes); i++) {
				char *pick = built_algorithm(dg, text, sizes[i]);
				if (!pick || strcmp(pick, "auto:symmetric") == 0) { /* nothing applies: auto's */
					free(pick); /* own error; or auto's own SP, no name (test_model) */
					continue;
				}
				CU_ASSERT_PTR_NOT_NULL(strstr(pick, "auto:"));
				const char *name = strchr(pick, ':') ? strchr(pick, ':') + 1 : pick;
				char *named = coll_text((TopoKind)t, (CollKind)k, name);
				char *again = built_algorithm(dg, named, sizes[i]);
				assert_named(again != NULL, __LINE__, __FILE__,
				             "auto picks %s for %s on %s at %.0f bytes; 'algorithm %s' does not build",
				             name, coll_kind_name[k], topo_forms[t].form.name, sizes[i], name);
				picks++;
				free(again), free(named), free(pick);
			}
			free(text);
		}
	CU_ASSERT(picks > 3 * 20); /* most forms and kinds have a pick at every size */
}

/* The bug the one table fixed: on ring(8) at 64 MiB auto chose
 * multiport_ring, which the language refused on anything but a torus. A
 * ring is the 1D torus its generator runs on: the registry says so, and
 * it can be named. (auto picks packing now: shallower trees, 1.175 ms.) */
static void
test_auto_ring_64mib(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	char *pick = built_algorithm(dg, "topology R = ring(8);\n"
	                             "collective allreduce A on R { algorithm auto; }\n", 64 << 20);
	CU_ASSERT_PTR_NOT_NULL_FATAL(pick);
	CU_ASSERT_STRING_EQUAL(pick, "auto:packing");
	free(pick);
	char *named = built_algorithm(dg, "topology R = ring(8);\n"
	                              "collective allreduce A on R { algorithm multiport_ring; }\n",
	                              64 << 20);
	CU_ASSERT_PTR_NOT_NULL(named);
	free(named);
}

/* Every parameter of every algorithm (algorithms.def's PARAMS) is read
 * into AlgCtx by an entry of lower.c's option table; and a word is read
 * only as the parameter its algorithm declares: ring(halfway) sets halfway,
 * swing(latency) latency, and neither sets the other's field. */
static void
test_alg_options(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	for (int a = 0; a < NALG; a++)
		for (int i = 0; i < MAX_PARAMS && alg_forms[a].param[i].kind != A_END; i++)
			assert_named(alg_option(&alg_forms[a].param[i]) != NULL, __LINE__, __FILE__,
			             "%s's parameter %d has an entry in lower.c's alg_options[]",
			             alg_forms[a].name, i + 1);
	static const struct {
		const char *call;
		bool halfway, latency, mirrored;
		int ports, ndim_alg;
	} cases[] = {
		{"ring(halfway)", true, false, false, 0, 0},
		{"ring(ports 2)", false, false, false, 2, 0},
		{"swing(latency)", false, true, false, 0, 0},
		{"swing(bandwidth)", false, false, false, 0, 0},
		{"s_bruck(mirrored)", false, false, true, 0, 0},
		{"hierarchical(ring, direct)", false, false, false, 0, 2},
		{"ring(latency)", false, false, false, 0, 0}, /* as a `use` may pass it */
	};
	for (size_t k = 0; k < countof(cases); k++) {
		char text[256];
		snprintf(text, sizeof text, "topology T = ring(4); collective allreduce X on T { "
		         "algorithm %s; }", cases[k].call);
		Checked c;
		check_str(dg, &c, text);
		const Item *it = NULL;
		for (int d = 0; d < c.file->ndecl; d++)
			if (c.file->decl[d].kind == DC_COLLECTIVE)
				it = &c.file->decl[d].body->item[0];
		CU_ASSERT_PTR_NOT_NULL_FATAL(it);
		Arena ar = {0};
		AlgCtx x = {.diag = dg, .arena = &ar, .reconfigs = -1};
		CU_ASSERT(alg_call_options(&ar, &x, it->call));
		assert_named(x.halfway == cases[k].halfway && x.latency == cases[k].latency &&
		             x.mirrored == cases[k].mirrored && x.ports == cases[k].ports &&
		             x.ndim_alg == cases[k].ndim_alg, __LINE__, __FILE__,
		             "%s: halfway %d latency %d mirrored %d ports %d dims %d", cases[k].call,
		             x.halfway, x.latency, x.mirrored, x.ports, x.ndim_alg);
		arena_free(&ar);
		checked_free(&c);
	}
}

CU_TestInfo alg_tests[] = {
	{"algorithm options: read as the parameter the algorithm declares", test_alg_options},
	{"sched_end: round order and merged messages", test_sched_order},
	{"every registry algorithm of any-rank domain, every kind and rank count 2..64 verifies",
	 test_every_rank_count},
	{"every registry algorithm is built on every rank count or named with its test",
	 test_registry_covered},
	{"closed forms: ring, Bucket, HD, Swing, Bruck, pairwise", test_closed_forms},
	{"hierarchical(A, B) on tori, meshes, HyperX, spine-leaf: verified, rounds",
	 test_hierarchical},
	{"Bucket's instances stay separate messages on rectangles", test_bucket_instances},
	{"SwingB and TrivanceB theta and omega on tori", test_swing_trivance_theta},
	{"SwingB on rectangles: the long side's steps carry all four ports", test_swing_rectangles},
	{"multiport ring on 2D tori", test_multiport_ring},
	{"placements on the 64-chip tori (algorithms.md 0.4)", test_placements},
	{"the 64-chip evaluation builds", test_evaluation},
	{"TTO's 4x4 trees (algorithms.md 9.1)", test_tto_trees_4x4},
	{"TTO's trees are link-disjoint, k = 2..9", test_tto_trees_disjoint},
	{"TTO: rounds M + 2h - 1, link loads, verified", test_tto_schedule},
	{"TTO takes its ranks in any order", test_tto_rank_order},
	{"chain's segments and TTO's chunks: the cost model's per size, or fixed as given",
	 test_size_chosen_counts},
	{"algorithms that cannot run say why", test_cannot_run},
	{"the registry and the language agree: every algorithm x topology form x kind",
	 test_registry_language},
	{"auto tries and picks only what the language accepts", test_auto_picks_what_the_language_accepts},
	{"auto on ring(8) at 64 MiB: its pick, and multiport_ring, which the language accepts there",
	 test_auto_ring_64mib},
	{"every registry algorithm, kind and topology form: lowered and verified as the driver does",
	 test_every_form_builds},
	{"auto leaves out a candidate that fails verification with a located note",
	 test_auto_notes_failed_candidate},
	CU_TEST_INFO_NULL,
};
