/*
 * test_pipelined.c: pipelined_trees (ir/alg_pipelined.c) on SuperMeshBi and
 * SuperMeshAlter 4x4 and 6x6: the schedules verify, their round counts are
 * 9.4's M + 2h - 1 (allreduce) and the sum over root sets of M + h - 1
 * (reduce_scatter, allgather; the seed's worked example against
 * MultiTree's 9 x 2048), every message is one hop over its tree's own link
 * with no link used twice in a round of one set, the MSCCL XML runs and
 * verifies on CPU threads, and the seed's network gives the seed's ratios
 * against the mesh.
 */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "msccl_program.h"
#include "sim.h"
#include "to_sim.h"
#include "svgplot.h"
#include "tests.h"

typedef struct Built {
	Arena arena;
	File *file;
	Prog prog;
	char *diag;
	size_t len;
	int rc;
} Built;

/* Lowers and verifies every schedule for the cost model's `size` bytes
 * (what the algorithms choose by size); rc -1 with diagnostics on failure. */
static void
build_at(Diag *dg, Built *b, const char *text, double size)
{
	memset(b, 0, sizeof *b);
	b->prog.auto_size = size;
	FILE *mem = open_memstream(&b->diag, &b->len);
	diag_stream(dg, mem);
	diag_reset(dg);
	diag_source(dg, "t.coll", text, strlen(text));
	b->file = parse_text(dg, &b->arena, "t.coll", text, strlen(text));
	if (nerrors(dg) == 0)
		sema(dg, b->file);
	if (nerrors(dg) == 0)
		lower(dg, b->file, &b->prog);
	for (int i = 0; nerrors(dg) == 0 && i < b->prog.nsched; i++)
		verify(dg, b->prog.sched[i]);
	b->rc = nerrors(dg) ? -1 : 0;
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
}

static void
build(Diag *dg, Built *b, const char *text)
{
	build_at(dg, b, text, 0);
}

static void
built_free(Built *b)
{
	prog_free(&b->prog);
	arena_free(&b->arena);
	free(b->diag);
}

static const Sched *
sched_named(const Built *b, const char *name)
{
	for (int i = 0; i < b->prog.nsched; i++)
		if (strcmp(b->prog.sched[i]->name, name) == 0)
			return b->prog.sched[i];
	return NULL;
}

#define RUN_TIMEOUT 20.0 /* seconds, as test_msccl.c */
#define SEED_NET "network { link_bandwidth = 25 GBps; link_latency = 20 ns; " \
                 "energy_per_bit = 1.75 pJ; }\n"

/* A file with the k x k supermesh's root sets, and AR / RS / AG on them. */
static char *
supermesh_text(int k, const char *variant, int m)
{
	Arena a = {0};
	int size[2] = {k, k};
	Topo *t = topo_new(&a, TK_SUPERMESH, "S", 2, size, strcmp(variant, "alter") == 0,
	                   net_defaults);
	int roots[64], set[32];
	int nset = supermesh_root_sets(t, roots, set);
	size_t cap = 8192, n = 0;
	char *text = malloc(cap);
	n += (size_t)snprintf(text + n, cap - n, SEED_NET "topology S = supermesh(%d, %d, %s);\n",
	                      k, k, variant);
	char list[256] = "";
	size_t ln = 0;
	for (int i = 0, at = 0; i < nset; at += set[i++]) {
		n += (size_t)snprintf(text + n, cap - n, "trees R%d = disjoint(S, roots", i);
		for (int j = 0; j < set[i]; j++)
			n += (size_t)snprintf(text + n, cap - n, "%s %d", j ? "," : "", roots[at + j]);
		n += (size_t)snprintf(text + n, cap - n, ");\n");
		ln += (size_t)snprintf(list + ln, sizeof list - ln, "%sR%d", i ? ", " : "", i);
	}
	n += (size_t)snprintf(text + n, cap - n,
	                      "collective allreduce AR on S { algorithm pipelined_trees(trees R0, "
	                      "segments %d); }\n"
	                      "collective reduce_scatter RS on S { algorithm pipelined_trees(trees %s, "
	                      "segments %d); }\n"
	                      "collective allgather AG on S { algorithm pipelined_trees(trees %s, "
	                      "segments %d); }\n", m, list, m, list, m);
	arena_free(&a);
	return text;
}

/* The trees' heights per set, read back from the messages: in set i the
 * slots run M + h_i - 1; the test recomputes h from the disjoint trees. */
static int
expected_rounds(Diag *dg, const Topo *t, CollKind kind, int m)
{
	Arena a = {0};
	Routes r;
	routes_init(&r, t, ROUTE_SHORTEST);
	int roots[64], set[32];
	int nset = supermesh_root_sets(t, roots, set);
	if (kind == CK_ALLREDUCE)
		nset = 1;
	int total = 0;
	for (int i = 0, at = 0; i < nset; at += set[i++]) {
		DisjointMethod how;
		Loc loc = {0};
		Tree **tr = disjoint_trees(dg, &a, t, &r, roots + at, set[i], loc, &how);
		int h = 0;
		for (int j = 0; tr && j < set[i]; j++)
			h = tr[j]->height > h ? tr[j]->height : h;
		total += kind == CK_ALLREDUCE ? m + 2 * h - 1 : m + h - 1;
	}
	routes_free(&r);
	arena_free(&a);
	return total;
}

/* Every message one hop over a link of its sender; per round, in a
 * reduce_scatter or allgather, no link carries two messages (the trees of
 * a set are disjoint); in an allreduce at most two (a reduce and another
 * tree's broadcast, 9.4). */
static void
check_links(const Sched *s)
{
	const Topo *t = s->topo;
	int *load = calloc((size_t)t->nlink, sizeof *load), worst = 0;
	for (int i = 0, first = 0; i < s->nmsg; i++) {
		if (s->msg[i].round != s->msg[first].round) {
			for (int j = first; j < i; j++)
				load[s->route_link[s->route_off[s->msg[j].route]]] = 0;
			first = i;
		}
		CU_ASSERT_EQUAL(sched_route_len(s, s->msg[i].route), 1);
		int l = s->route_link[s->route_off[s->msg[i].route]];
		CU_ASSERT_EQUAL(t->link[l].src, s->rank_node[s->msg[i].src]);
		CU_ASSERT_EQUAL(t->link[l].dst, s->rank_node[s->msg[i].dst]);
		load[l]++;
		worst = load[l] > worst ? load[l] : worst;
	}
	assert_named(worst <= (s->kind == CK_ALLREDUCE ? 2 : 1), __LINE__, __FILE__,
	             "'%s': a link carries %d messages in one round", s->name, worst);
	free(load);
}

static void
test_round_counts(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct { int k; const char *variant; } cases[] = {
		{4, "bi"}, {4, "alter"}, {6, "bi"}, {6, "alter"}, {5, "alter"}, {5, "bi"},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		int m = 5;
		char *text = supermesh_text(cases[i].k, cases[i].variant, m);
		Built b;
		build(dg, &b, text);
		assert_named(b.rc == 0, __LINE__, __FILE__, "%dx%d %s: %s", cases[i].k, cases[i].k,
		             cases[i].variant, b.diag);
		for (int c = 0; b.rc == 0 && c < b.prog.nsched; c++) {
			const Sched *s = b.prog.sched[c];
			int want = expected_rounds(dg, s->topo, s->kind, m);
			assert_named(s->nround == want, __LINE__, __FILE__, "%dx%d %s %s: %d rounds, "
			             "want %d", cases[i].k, cases[i].k, cases[i].variant, s->name,
			             s->nround, want);
			check_links(s);
		}
		built_free(&b);
		free(text);
	}
}

/* The seed's worked example: 4x4 SMAlter, 512 MB in 16 KB segments, M =
 * 2048 per tree: about 4 x (2048 + 6) slots, more than twice as fast as
 * MultiTree's 9 x 2048. */
static void
test_seed_worked_example(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	char *text = supermesh_text(4, "alter", 2048);
	Built b;
	build(dg, &b, text);
	CU_ASSERT_EQUAL_FATAL(b.rc, 0);
	const Sched *rs = sched_named(&b, "RS");
	CU_ASSERT_PTR_NOT_NULL_FATAL(rs);
	assert_named(rs->nround >= 4 * 2048 + 4 * 3 && rs->nround <= 4 * (2048 + 6), __LINE__,
	             __FILE__, "RS: %d slots, the seed's 4 x (2048 + 6) = %d", rs->nround,
	             4 * (2048 + 6));
	CU_ASSERT(9.0 * 2048 / rs->nround > 2);
	const Sched *ar = sched_named(&b, "AR");
	CU_ASSERT_EQUAL(ar->nround, expected_rounds(dg, ar->topo, CK_ALLREDUCE, 2048));
	built_free(&b);
	free(text);
}

static void
test_errors(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct { const char *text, *want; } cases[] = {
		{"topology S = supermesh(4, 4, bi);\ntree T = bfs(S, root 0);\n"
		 "collective allreduce X on S { algorithm pipelined_trees(trees T); }\n",
		 "'T' is not one: declare it `trees T = disjoint(T, roots ...)`"},
		{"topology S = supermesh(4, 4, bi);\ntrees A = disjoint(S, roots 0, 3);\n"
		 "trees B = disjoint(S, roots 12, 15);\n"
		 "collective allreduce X on S { algorithm pipelined_trees(trees A, B); }\n",
		 "through one set of disjoint trees"},
		{"topology S = supermesh(4, 4, bi);\ntrees A = disjoint(S, roots 0, 3, 15, 12);\n"
		 "collective allgather X on S { algorithm pipelined_trees(trees A); }\n",
		 "(0, 1) is a root of none"},
		{"topology S = supermesh(4, 4, bi);\ntrees A = disjoint(S, roots 0, 3, 15, 12);\n"
		 "collective allreduce X on S { algorithm pipelined_trees(trees A); ranks 0..14; }\n",
		 "leave out the `ranks` clause"},
		{"topology M = mesh(4, 4);\ntrees A = disjoint(M, roots (0, 0), (0, 3), (3, 3), (3, 0));\n",
		 "t.coll:2:11: error: no 4 link-disjoint spanning trees on 'M' (mesh(4, 4)): each needs "
		 "its own link into every node but its root, 4 x 15 = 60 directed links, and it has 48"},
		{"topology M = mesh(4, 4);\n"
		 "collective allreduce X on M { algorithm pipelined_trees; }\n",
		 "no 4 link-disjoint spanning trees"},
		{"topology S = supermesh(300, 300, bi);\n"
		 "trees A = disjoint(S, roots 0, 299, 89999, 89700);\n",
		 "the limit is 4e11"},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		Built b;
		build(dg, &b, cases[i].text);
		assert_named(b.rc != 0 && strstr(b.diag, cases[i].want), __LINE__, __FILE__,
		             "case %zu: want '%s' in: %s", i, cases[i].want, b.diag);
		built_free(&b);
	}
}

/* Without trees: the root sets are built here; auto considers it. */
static void
test_without_trees_and_auto(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Built b;
	build(dg, &b, SEED_NET "topology S = supermesh(4, 4, bi);\n"
	      "collective reduce_scatter X on S { algorithm pipelined_trees; }\n"
	      "collective allreduce Y on S { algorithm auto; }\n");
	CU_ASSERT_EQUAL_FATAL(b.rc, 0);
	const Sched *x = sched_named(&b, "X");
	CU_ASSERT_EQUAL(x->nchunk % 16, 0);
	CU_ASSERT_EQUAL(x->nround, expected_rounds(dg, x->topo, CK_REDUCE_SCATTER, x->nchunk / 16));
	const Sched *y = sched_named(&b, "Y");
	CU_ASSERT_PTR_NOT_NULL(y);
	built_free(&b);
}

/* MSCCL XML of AR, RS, AG on 4x4 SMBi / SMAlter and 6x6 SMAlter / SMBi runs and verifies. */
static void
test_msccl_runs(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct { int k; const char *variant; } cases[] = {
		{4, "bi"}, {4, "alter"}, {6, "alter"}, {6, "bi"},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		char *text = supermesh_text(cases[i].k, cases[i].variant, 2);
		Built b;
		build(dg, &b, text);
		CU_ASSERT_EQUAL_FATAL(b.rc, 0);
		for (int c = 0; c < b.prog.nsched; c++) {
			const Sched *s = b.prog.sched[c];
			BuildOpts bo = {.collective = s->name};
			char *xml = NULL, *diag = NULL;
			size_t xlen, dlen;
			FILE *x = open_memstream(&xml, &xlen), *mem = open_memstream(&diag, &dlen);
			diag_stream(dg, mem);
			diag_source(dg, "t.coll", text, strlen(text));
			int rc = msccl_backend.emit(dg, &b.prog, &bo, x);
			fclose(x);
			Arena a = {0};
			MProg mp;
			if (rc == 0) {
				diag_source(dg, "t.xml", xml, xlen);
				rc = msccl_read(dg, &a, xml, xlen, false, &mp);
			}
			RunResult res = {0};
			for (int dt = 0; rc == 0 && dt < 2; dt++) {
				RunOpts o = {.bytes = (int64_t)mp.nchunksperloop * 4 * (dt ? 3 : 1),
				             .dtype = dt ? RD_INT32 : RD_FLOAT, .op = RO_SUM,
				             .inplace = mp.inplace, .timeout = RUN_TIMEOUT};
				rc = msccl_run(dg, &mp, &o, &res);
				if (rc == 0 && !res.verified)
					rc = -1;
			}
			diag_stream(dg, NULL);
			fclose(mem);
			diag_reset(dg);
			assert_named(rc == 0, __LINE__, __FILE__, "%dx%d %s '%s': %s", cases[i].k,
			             cases[i].k, cases[i].variant, s->name, diag);
			arena_free(&a);
			free(xml);
			free(diag);
		}
		built_free(&b);
		free(text);
	}
}

/* The simulated time of one schedule, round by round; 0 if it does not run. */
static double
simulate(Diag *dg, const Sched *s, int64_t bytes, SimMode mode)
{
	Arena a = {0};
	SimNet net;
	SimResult r = {0};
	char err[256];
	SimOpts o = {.mode = mode, .sync = SIM_ROUNDS};
	int rc = s ? sim_from_scheds(dg, &a, &s, 1, &net) : -1;
	if (rc == 0)
		rc = sim_run(&a, &net, 0, bytes, &o, &r, err, sizeof err);
	CU_ASSERT_EQUAL(rc, 0);
	arena_free(&a);
	return rc == 0 ? r.time_s : 0;
}

/* The seed's network, flow mode, 256 MiB: supermesh-vs-mesh.coll's pairs. */
static void
test_seed_ratios(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	size_t len;
	char *text = slurp("examples/supermesh-vs-mesh.coll", &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	Built b;
	build(dg, &b, text);
	CU_ASSERT_EQUAL_FATAL(b.rc, 0);
	static const char *const names[] = {"AR_mesh", "AR_bi", "AR_alter", "RS_mesh", "RS_bi",
	                                    "RS_alter", "AG_mesh", "AG_bi", "AG_alter"};
	double time[9];
	for (int i = 0; i < 9; i++) {
		time[i] = simulate(dg, sched_named(&b, names[i]), 256 << 20, SIM_FLOW);
	}
	for (int c = 0; c < 3; c++)
		for (int v = 1; v <= 2; v++) {
			double ratio = time[3 * c] / time[3 * c + v];
			double lo = c == 0 ? 1.18 : 1.77, hi = c == 0 ? 1.34 : 2.22;
			assert_named(ratio >= lo && ratio <= hi, __LINE__, __FILE__, "%s / %s = %.3f, the "
			             "seed's range %.2f - %.2f", names[3 * c], names[3 * c + v], ratio, lo, hi);
		}
	built_free(&b);
	free(text);
}

/* The seed's energy setting (8x8, AllReduce, supermesh-energy-8x8.coll):
 * total energy against the mesh's in the seed's ranges, SMBi 0.74 - 0.84,
 * SMAlter 0.72 - 0.80, with the dynamic energy about the mesh's. */
static void
test_seed_energy(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	size_t len;
	char *text = slurp("examples/supermesh-energy-8x8.coll", &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	Built b;
	build(dg, &b, text);
	CU_ASSERT_EQUAL_FATAL(b.rc, 0);
	static const char *const names[] = {"AR_mesh", "AR_bi", "AR_alter"};
	SimResult r[3];
	for (int i = 0; i < 3; i++) {
		Arena a = {0};
		SimNet net;
		char err[256];
		SimOpts o = {.mode = SIM_FLOW, .sync = SIM_ROUNDS};
		const Sched *s = sched_named(&b, names[i]);
		CU_ASSERT_PTR_NOT_NULL_FATAL(s);
		CU_ASSERT_EQUAL_FATAL(sim_from_scheds(dg, &a, &s, 1, &net), 0);
		CU_ASSERT_EQUAL_FATAL(sim_run(&a, &net, 0, 64 << 20, &o, &r[i], err, sizeof err), 0);
		r[i].round_end = NULL, r[i].link_bytes = NULL, r[i].link_busy = NULL;
		arena_free(&a);
	}
	static const double lo[] = {0, 0.74, 0.72}, hi[] = {0, 0.84, 0.80};
	for (int i = 1; i < 3; i++) {
		double ratio = r[i].energy_j / r[0].energy_j;
		double dyn = (r[i].energy_link_j + r[i].energy_router_j) /
		             (r[0].energy_link_j + r[0].energy_router_j);
		assert_named(ratio >= lo[i] && ratio <= hi[i] && dyn > 0.9 && dyn < 1.1, __LINE__,
		             __FILE__, "%s: energy %.3f of the mesh's (seed %.2f - %.2f), dynamic %.3f",
		             names[i], ratio, lo[i], hi[i], dyn);
	}
	/* static energy dominates the mesh's, as in the seed's breakdown */
	CU_ASSERT(r[0].energy_static_j > 0.75 * r[0].energy_j);
	built_free(&b);
	free(text);
}

/* The same algorithm on mesh and SMBi now differs where parallel links
 * help: TTO's broadcast crosses a doubled pair over its added link (once
 * its pipeline overlaps: M chunks for 1 MiB, 79 of them). */
static void
test_tto_supermesh(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Built b;
	build_at(dg, &b, SEED_NET "topology M = mesh(4, 4);\ntopology S = supermesh(4, 4, bi);\n"
	         "collective allreduce TM on M { algorithm tto; ranks 0..11, 13..15; }\n"
	         "collective allreduce TS on S { algorithm tto; ranks 0..11, 13..15; }\n", 1 << 20);
	CU_ASSERT_STRING_EQUAL(b.prog.sched[0]->choice, "chunks 237");
	CU_ASSERT_EQUAL_FATAL(b.rc, 0);
	double t[2];
	for (int i = 0; i < 2; i++) {
		t[i] = simulate(dg, b.prog.sched[i], 1 << 20, SIM_PACKET);
	}
	assert_named(t[1] < t[0] * 0.97, __LINE__, __FILE__, "TTO mesh %g s, SMBi %g s", t[0], t[1]);
	built_free(&b);
}

/* The segments follow the trees' own links (pipeline_segments_levels),
 * not the network's one link_bandwidth: on a 6-node graph whose links are
 * all declared at 100 Gbps under a network of 400 Gbps, pipelined_trees
 * picks what it picks where the network says 100 (507 at 1 GiB), not the
 * 253 the 400 gave; that choice is faster in flow mode than the 253 fixed;
 * and where the links are the network's (uniform) the choice is 253, as
 * before. */
static char *
hexagon_text(int net_gbps, int link_gbps, int segments)
{
	static const int pair[][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 0}, {0, 3}, {1, 4}, {2, 5}};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	fprintf(f, "network { link_bandwidth = %d Gbps; link_latency = 500 ns; }\n"
	        "topology T = graph {\n nodes 6;\n", net_gbps);
	for (size_t i = 0; i < countof(pair); i++)
		fprintf(f, " link %d <-> %d { link_bandwidth = %d Gbps; }\n", pair[i][0], pair[i][1],
		        link_gbps);
	fputs("}\ntrees D = disjoint(T, roots 0, 3);\n", f);
	if (segments)
		fprintf(f, "collective allreduce AR on T { algorithm pipelined_trees(trees D, segments "
		        "%d); }\n", segments);
	else
		fputs("collective allreduce AR on T { algorithm pipelined_trees(trees D); }\n", f);
	fclose(f);
	return text;
}

static void
test_segments_by_links(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const int net_link_segs[][4] = {{400, 100, 0, 507}, {100, 100, 0, 507}, {400, 400, 0, 253},
	                                       {400, 100, 253, 253}};
	double t[4];
	for (size_t i = 0; i < countof(net_link_segs); i++) {
		char *text = hexagon_text(net_link_segs[i][0], net_link_segs[i][1], net_link_segs[i][2]);
		Built b;
		build_at(dg, &b, text, 1 << 30);
		CU_ASSERT_EQUAL_FATAL(b.rc, 0);
		char want[64];
		snprintf(want, sizeof want, "%ssegments %d", net_link_segs[i][2] ? "fixed " : "",
		         net_link_segs[i][3]);
		assert_named(strcmp(b.prog.sched[0]->choice, want) == 0, __LINE__, __FILE__,
		             "network %d Gbps, links %d Gbps: %s, not %s", net_link_segs[i][0],
		             net_link_segs[i][1], b.prog.sched[0]->choice, want);
		t[i] = simulate(dg, b.prog.sched[0], 1 << 30, SIM_FLOW);
		built_free(&b);
		free(text);
	}
	assert_named(t[0] < t[3], __LINE__, __FILE__, "by the links %.2f us, by the network's %.2f us",
	             t[0] * 1e6, t[3] * 1e6);
}

/* check says how many trees and how high; --trees lists each tree's
 * height and edges; DOT draws them one colour each. */
static void
test_report_and_dot(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	FILE *summary = popen(COLLC_BIN " check examples/supermesh-disjoint.coll 2>&1", "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(summary);
	char all[8192];
	size_t got = fread(all, 1, sizeof all - 1, summary);
	all[got] = 0;
	CU_ASSERT_EQUAL(pclose(summary), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(all, "  AR: 4 link-disjoint trees of height 6 (their edges: "
	                                   "collc check --trees)\n"));
	CU_ASSERT_PTR_NULL(strstr(all, "edges: ("));
	FILE *p = popen(COLLC_BIN " check examples/supermesh-disjoint.coll --trees 2>&1", "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	char line[4096];
	int trees = 0;
	while (fgets(line, sizeof line, p))
		if (strstr(line, "  AR: tree ") && strstr(line, ", 15 edges: (")) {
			trees++;
			int arrows = 0;
			for (char *q = line; (q = strstr(q, ")->(")); q++)
				arrows++;
			CU_ASSERT_EQUAL(arrows, 15);
		}
	CU_ASSERT_EQUAL(pclose(p), 0);
	CU_ASSERT_EQUAL(trees, 4);
	size_t len;
	char *text = slurp("examples/supermesh-disjoint.coll", &len);
	Built b;
	build(dg, &b, text);
	CU_ASSERT_EQUAL_FATAL(b.rc, 0);
	BuildOpts bo = {.collective = "AR"};
	char *dot = NULL;
	size_t dlen;
	FILE *f = open_memstream(&dot, &dlen);
	CU_ASSERT_EQUAL(dot_backend.emit(dg, &b.prog, &bo, f), 0);
	fclose(f);
	static const char *const colour[] = {"[color=red,", "[color=blue,", "[color=darkgreen,",
	                                     "[color=orange,"};
	for (int c = 0; c < 4; c++) {
		int n = 0;
		for (char *q = dot; (q = strstr(q, colour[c])); q++)
			n++;
		assert_named(n == 15, __LINE__, __FILE__, "%s: %d edges", colour[c], n);
	}
	free(dot);
	built_free(&b);
	free(text);
}

/* --plot-links draws a supermesh: one line per directed link, parallel ones apart. */
static void
test_plot_links(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Built b;
	build(dg, &b, SEED_NET "topology S = supermesh(4, 4, alter);\n"
	      "collective allreduce X on S { algorithm pipelined_trees(segments 4); }\n");
	CU_ASSERT_EQUAL_FATAL(b.rc, 0);
	const Sched *s = b.prog.sched[0];
	Arena a = {0};
	SimNet net;
	CU_ASSERT_EQUAL_FATAL(sim_from_scheds(dg, &a, &s, 1, &net), 0);
	double *util = calloc((size_t)net.nlink, sizeof *util);
	char *svg = NULL;
	size_t len;
	FILE *f = open_memstream(&svg, &len);
	CU_ASSERT_EQUAL(svg_links(f, &net, util, "X"), 1);
	fclose(f);
	int lines = 0;
	for (char *q = svg; (q = strstr(q, "<line ")); q++)
		lines++;
	CU_ASSERT_EQUAL(lines, 64);
	free(svg);
	free(util);
	arena_free(&a);
	built_free(&b);
}

CU_TestInfo pipelined_tests[] = {
	{"round counts M + 2h - 1 and sums of M + h - 1, one hop per message", test_round_counts},
	{"the seed's worked example: 4 x (2048 + 6) against 9 x 2048", test_seed_worked_example},
	{"errors", test_errors},
	{"root sets built without trees; auto", test_without_trees_and_auto},
	{"MSCCL XML runs and verifies", test_msccl_runs},
	{"the seed's network: SMBi / SMAlter against the mesh", test_seed_ratios},
	{"the seed's energy setting: 8x8 AllReduce, total energy against the mesh", test_seed_energy},
	{"TTO on a supermesh uses the added links", test_tto_supermesh},
	{"segments by the trees' own links, not the network's bandwidth", test_segments_by_links},
	{"check reports the trees; DOT draws them one colour each", test_report_and_dot},
	{"--plot-links draws a supermesh's parallel links", test_plot_links},
	CU_TEST_INFO_NULL,
};
