/* test_nic_nodes.c: shared NICs as nodes on rails, xgmi_rails and
 * leaf_spine_boxes (`nics K, pcie_gbps P`; ir/topo.c, docs/gpu-clusters.md,
 * "Shared NICs"): the cabling and the names on generated clusters, the language's errors, the
 * translations, the cut bound's closed form checked against ir/cutbound.c
 * on generated clusters, and a packing simulated near it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cutbound.h"
#include "ir.h"
#include "tests.h"

/* L (NVLink), P (PCIe), N (NIC) in Gbit/s; leaf_spine_boxes with `spines` spines */
static Topo *
make_ls(Arena *a, TopoKind kind, int boxes, int gpus, int nics, int pcie, int nic, double link_gbps,
        int spines)
{
	Net net = net_defaults;
	net.bandwidth = link_gbps * 1e9;
	TopoShape s = {.ndim = 2, .size = {boxes, gpus}, .variant = nic, .nics = nics,
	               .nic_link_gbps = pcie};
	if (kind == TK_LEAF_SPINE_BOXES)
		s.switches = 2 * boxes + spines + boxes * nics;
	Topo *t = topo_builders[kind].build(a, "C", &s, net);
	CU_ASSERT_EQUAL(t->nlink, (int)topo_link_estimate(kind, &s));
	return t;
}

static Topo *
make(Arena *a, TopoKind kind, int boxes, int gpus, int nics, int pcie, int nic, double link_gbps)
{
	return make_ls(a, kind, boxes, gpus, nics, pcie, nic, link_gbps, 2);
}

/* Every GPU reaches NIC i / (G/K) of its box at P, each way; NIC k reaches
 * rail k at N; each node's name resolves back to its id (node_class_id),
 * NIC nodes last; NICs never reduce. */
static void
test_cabling_and_names(void)
{
	Arena a = {0};
	int checked = 0;
	static const TopoKind kinds[] = {TK_RAILS, TK_XGMI_RAILS, TK_LEAF_SPINE_BOXES};
	for (size_t ki = 0; ki < countof(kinds); ki++)
		for (int boxes = 1; boxes <= 3; boxes++)
			for (int gpus = 2; gpus <= 8; gpus *= 2)
				for (int nics = 1; nics <= gpus; nics *= 2, checked++) {
					int kind = kinds[ki];
					bool leaves = kind == TK_LEAF_SPINE_BOXES;
					Topo *t = make(&a, (TopoKind)kind, boxes, gpus, nics, 256, 400, 3600);
					int per = gpus / nics, nic0 = t->nnode - boxes * nics;
					/* the switch NIC k of box b is cabled to: rail k, or leaf b */
					int rail0 = leaves ? t->nrank + boxes : nic0 - nics;
					CU_ASSERT_EQUAL(rail0, t->nrank + (kind != TK_XGMI_RAILS ? boxes : 0));
					int64_t arg[MAX_PARAMS];
					topo_form_args(t, arg);
					CU_ASSERT_EQUAL(node_class_total((TopoKind)kind, arg), t->nnode);
					for (int r = 0; r < t->nrank; r++) {
						int nic = nic0 + r / gpus * nics + r % gpus / per;
						int l = topo_find_link(t, r, nic, 0), back = topo_find_link(t, nic, r, 0);
						CU_ASSERT_FATAL(l >= 0 && back >= 0);
						CU_ASSERT(t->link[l].bandwidth == 256e9 && t->link[back].bandwidth == 256e9);
						for (int k = rail0; k < nic0; k++) /* no GPU on a rail, leaf, spine */
							CU_ASSERT(topo_find_link(t, r, k, 0) < 0);
					}
					for (int n = nic0; n < t->nnode; n++) {
						int sw = rail0 + (leaves ? (n - nic0) / nics : (n - nic0) % nics);
						int l = topo_find_link(t, n, sw, 0);
						CU_ASSERT_FATAL(l >= 0);
						CU_ASSERT(t->link[l].bandwidth == 400e9 && t->is_switch[n]);
						CU_ASSERT_EQUAL(t->out[n + 1] - t->out[n], per + 1);
						char name[64], want[64];
						topo_node_name(t, n, name, sizeof name);
						snprintf(want, sizeof want, "nic(%d, %d)", (n - nic0) / nics, (n - nic0) % nics);
						CU_ASSERT_STRING_EQUAL(name, want);
						int c = node_class_find((TopoKind)kind, "nic");
						int64_t idx[2] = {(n - nic0) / nics, (n - nic0) % nics};
						CU_ASSERT_EQUAL(node_class_id((TopoKind)kind, c, arg, idx), n);
						t->net.reduction = REDUCE_NVLS | REDUCE_SHARP;
						CU_ASSERT_EQUAL(topo_reduces(t, n), 0);
						CU_ASSERT_NOT_EQUAL(topo_reduces(t, rail0), 0); /* a rail, a leaf */
						t->net.reduction = 0;
					}
				}
	CU_ASSERT_EQUAL(checked, 3 * 3 * (2 + 3 + 4));
	arena_free(&a);
}

/* `translate;`: boxes by 1, GPUs by G/K (a NIC's group); order B K, every
 * generator an automorphism (group_build checks). */
static void
test_translations(void)
{
	Arena a = {0};
	Diag dgv = diag_new(), *dg = &dgv;
	for (int kind = TK_RAILS; kind <= TK_XGMI_RAILS; kind++)
		for (int boxes = 1; boxes <= 3; boxes++)
			for (int nics = 1; nics <= 8; nics *= 2) {
				Topo *t = make(&a, (TopoKind)kind, boxes, 8, nics, 256, 400, 3600);
				GroupGen gen = {.all_translations = true};
				Group *g = group_build(dg, &a, t, "G", (Loc){0}, &gen, 1);
				CU_ASSERT_PTR_NOT_NULL_FATAL(g);
				CU_ASSERT_EQUAL(g->order, boxes * nics);
			}
	CU_ASSERT_EQUAL(nerrors(dg), 0);
	arena_free(&a);
}

/* The language: a NIC by name is a node (a switch: not a root), the two
 * parameters go together, K divides G, and without them `nic(b, i)` is
 * still a link that says how to make it a node. */
static void
test_language(void)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"topology C = rails(boxes 2, gpus 8, nic_gbps 400, nics 4, pcie_gbps 256);\n"
		 "collective broadcast B on C { algorithm packing; root nic(1, 3); }\n",
		 "2:55: error: nic(1, 3) is a switch, not a rank"},
		{"topology C = rails(boxes 2, gpus 8, nic_gbps 400, nics 4, pcie_gbps 256);\n"
		 "collective broadcast B on C { algorithm packing; root nic(1, 4); }\n",
		 "2:62: error: index 2 of nic is 4; rails(boxes 2, gpus 8) has nics 0..3"},
		{"topology C = rails(boxes 2, gpus 8, nic_gbps 400, nics 4, pcie_gbps 256);\n"
		 "collective broadcast B on C { algorithm packing; root rail(4); }\n",
		 "2:60: error: index 1 of rail is 4; rails(boxes 2, gpus 8) has nics 0..3"},
		{"topology C = rails(boxes 2, gpus 8, nic_gbps 400);\n"
		 "collective broadcast B on C { algorithm packing; root rail(8); }\n",
		 "2:60: error: index 1 of rail is 8; rails(boxes 2, gpus 8) has NICs (one a GPU) 0..7"},
		{"topology C = rails(boxes 2, gpus 8, nic_gbps 400);\n"
		 "collective broadcast B on C { algorithm packing; root nic(0, 3); }\n",
		 "or give the form 'nics' and 'pcie_gbps' to make NICs nodes"},
		{"topology C = rails(boxes 2, gpus 8, nic_gbps 400, nics 4);\n",
		 "1:51: error: rails(boxes 2, gpus 8): 'nics' and 'pcie_gbps' go together"},
		{"topology C = xgmi_rails(boxes 2, gpus 8, nic_gbps 400, pcie_gbps 256);\n",
		 "1:56: error: xgmi_rails(boxes 2, gpus 8): 'nics' and 'pcie_gbps' go together"},
		{"topology C = rails(boxes 2, gpus 8, nic_gbps 400, nics 3, pcie_gbps 256);\n",
		 "1:56: error: rails(boxes 2, gpus 8): nics 3 does not divide a box's 8 GPUs"},
		{"topology C = rails(boxes 2, gpus 8, nic_gbps 400, nics 16, pcie_gbps 256);\n",
		 "1:56: error: rails(boxes 2, gpus 8): nics 16 does not divide a box's 8 GPUs"},
	};
	Diag dgv = diag_new(), *dg = &dgv;
	for (size_t i = 0; i < countof(cases); i++) {
		Checked c;
		check_built(dg, &c, "t.coll", cases[i].text, strlen(cases[i].text));
		assert_named(c.errors > 0 && strstr(c.diag, cases[i].want) != NULL, __LINE__, __FILE__,
		             "case %zu: want '%s', got '%s'", i, cases[i].want, c.diag);
		checked_free(&c);
	}
}

/* fmt, the IR text (written, read, written the same, with the NICs'
 * `switch` names and the header's count) and DOT name the NICs, on each
 * form that takes them: its declaration, its header, its last NIC. */
static void
test_round_trips(void)
{
	static const struct {
		const char *form, *header, *last;
	} cases[] = {
		{"xgmi_rails(boxes 2, gpus 4, nic_gbps 200, links 4, 1, 1, 1, 1, 4, nics 2, pcie_gbps 256)",
		 "xgmi_rails dims 2 2 4 variant 200 nodes 14 nics 2", "13 nic(1, 1)"},
		{"rails(boxes 3, gpus 4, nic_gbps 400, nics 1, pcie_gbps 512)",
		 "rails dims 2 3 4 variant 400 nodes 19 nics 1", "18 nic(2, 0)"},
		{"leaf_spine_boxes(boxes 2, gpus 4, nic_gbps 400, spines 1, nics 2, pcie_gbps 256)",
		 "leaf_spine_boxes dims 2 2 4 variant 400 nodes 17 nics 2", "16 nic(1, 1)"},
	};
	char dir[] = "/tmp/collc-nic-XXXXXX", cmd[2048], text[256];
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	for (size_t i = 0; i < countof(cases); i++) {
		snprintf(text, sizeof text, "topology C = %s;\ncollective allgather AG on C {\n"
		         "    algorithm packing;\n}\n", cases[i].form);
		write_in(dir, "c.coll", text);
		snprintf(cmd, sizeof cmd,
		         "%s fmt %s/c.coll > %s/f.coll && cmp -s %s/c.coll %s/f.coll && "
		         "%s build %s/c.coll --target ir -o %s/a.collir && "
		         "%s build %s/a.collir --target ir -o %s/b.collir && cmp -s %s/a.collir %s/b.collir && "
		         "grep -q '^topology C %s nic_link_gbps [0-9]*$' %s/a.collir && "
		         "grep -q '^switch %s$' %s/a.collir && "
		         "%s build %s/c.coll --target dot | grep -q '\"nic(0, 0)\"' && "
		         "%s build %s/a.collir --target dot | grep -qF 'C = %s'",
		         COLLC_BIN, dir, dir, dir, dir, COLLC_BIN, dir, dir, COLLC_BIN, dir, dir, dir, dir,
		         cases[i].header, dir, cases[i].last, dir, COLLC_BIN, dir, COLLC_BIN, dir,
		         cases[i].form);
		assert_named(system(cmd) == 0, __LINE__, __FILE__, "%s", cmd);
	}
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

/* The closed form (docs/gpu-clusters.md, "Shared NICs"): B >= 2 boxes of G
 * GPUs, K NICs of q = G/K GPUs each, L a GPU's NVLink (large: no cut inside
 * a box binds), P its PCIe link, N a NIC, c = min(N, qP) what a NIC moves
 * out of (or into) its box, n = BG. A GPU's way in, L + min(P, (q - 1)P + N)
 * (its own PCIe link, or its NIC's other GPUs and rail); a box's, Kc.
 * Allgather and reduce-scatter: min(gpu, (n - 1) Kc / (n - G)) (all but one
 * box); lambda = min(gpu, Kc); allreduce's upper bound min(2(n - 1)/n lambda,
 * L + P) (gossip: a GPU's links out), reached by reduce-scatter + allgather
 * at the allgather's; broadcast and reduce lambda. */
static void
test_closed_form(void)
{
	Arena a = {0};
	const int pcie[] = {128, 512}, nicbw[] = {200, 400};
	int checked = 0;
	for (int boxes = 2; boxes <= 4; boxes++)
		for (int gpus = 2; gpus <= 8; gpus *= 2)
			for (int nics = 1; nics <= gpus; nics *= 2)
				for (size_t pi = 0; pi < countof(pcie); pi++)
					for (size_t ni = 0; ni < countof(nicbw); ni++, checked++) {
						Topo *t = make(&a, TK_RAILS, boxes, gpus, nics, pcie[pi], nicbw[ni], 3600);
						double L = 450, P = pcie[pi] / 8.0, N = nicbw[ni] / 8.0;
						double n = boxes * gpus, q = gpus / nics, c = fmin(N, q * P);
						double gpu = L + fmin(P, (q - 1) * P + N), box = nics * c;
						double ag = fmin(gpu, (n - 1) * box / (n - gpus));
						double lambda = fmin(gpu, box);
						double ar = fmin(2 * (n - 1) / n * lambda, L + P);
						CutBound b[NCOLLKIND];
						for (int k = 0; k < NCOLLKIND; k++)
							if (k != CK_ALLTOALL)
								b[k] = cut_bound_of(t, (CollKind)k);
						char what[160];
						topo_describe(t, what, sizeof what);
						assert_named(near_rel(b[CK_ALLGATHER].busbw / 1e9, ag, 1e-9) &&
						             near_rel(b[CK_REDUCE_SCATTER].busbw / 1e9, ag, 1e-9), __LINE__, __FILE__,
						             "%s: allgather %.6g, reduce_scatter %.6g, want %.6g", what,
						             b[CK_ALLGATHER].busbw / 1e9, b[CK_REDUCE_SCATTER].busbw / 1e9, ag);
						assert_named(near_rel(b[CK_ALLREDUCE].busbw / 1e9, ar, 1e-9) &&
						             near_rel(b[CK_ALLREDUCE].achievable / 1e9, ag, 1e-9), __LINE__, __FILE__,
						             "%s: allreduce %.6g (reached %.6g), want %.6g (%.6g)", what,
						             b[CK_ALLREDUCE].busbw / 1e9, b[CK_ALLREDUCE].achievable / 1e9,
						             ar, ag);
						assert_named(near_rel(b[CK_BROADCAST].busbw / 1e9, lambda, 1e-9) &&
						             near_rel(b[CK_REDUCE].busbw / 1e9, lambda, 1e-9), __LINE__, __FILE__,
						             "%s: broadcast %.6g, reduce %.6g, want %.6g", what,
						             b[CK_BROADCAST].busbw / 1e9, b[CK_REDUCE].busbw / 1e9, lambda);
						for (int k = 0; k < NCOLLKIND; k++)
							if (k != CK_ALLTOALL)
								cutbound_free(&b[k]);
					}
	CU_ASSERT_EQUAL(checked, 3 * 9 * 4);
	arena_free(&a);
}

/* On leaf_spine_boxes with shared NICs a box's way out is its leaf's too,
 * x = min(K c, S N) (K NICs down, S spines up), and the closed form is
 * rails' with x for K c: allgather min(gpu, (n - 1) x / (n - G)), the
 * least over sets of whole boxes with or without the spines; broadcast
 * min(gpu, x). Generated: 2 and 3 boxes of 4 and 8 GPUs, 2 to G NICs, 1
 * spine or K, P 128 or 512 Gbit/s. */
static void
test_closed_form_leaves(void)
{
	Arena a = {0};
	const int pcie[] = {128, 512};
	int checked = 0;
	for (int boxes = 2; boxes <= 3; boxes++)
		for (int gpus = 4; gpus <= 8; gpus *= 2)
			for (int nics = 2; nics <= gpus; nics *= 2)
				for (int spines = 1; spines <= nics; spines += nics - 1)
					for (size_t pi = 0; pi < countof(pcie); pi++, checked++) {
						Topo *t = make_ls(&a, TK_LEAF_SPINE_BOXES, boxes, gpus, nics, pcie[pi], 400,
						                  3600, spines);
						double L = 450, P = pcie[pi] / 8.0, N = 50, n = boxes * gpus;
						double q = gpus / nics, x = fmin(nics * fmin(N, q * P), spines * N);
						double gpu = L + fmin(P, (q - 1) * P + N);
						double ag = fmin(gpu, (n - 1) * x / (n - gpus)), lambda = fmin(gpu, x);
						CutBound g = cut_bound_of(t, CK_ALLGATHER), bc = cut_bound_of(t, CK_BROADCAST);
						char what[160];
						topo_describe(t, what, sizeof what);
						assert_named(near_rel(g.busbw / 1e9, ag, 1e-9) && near_rel(bc.busbw / 1e9, lambda, 1e-9),
						             __LINE__, __FILE__, "%s: allgather %.6g (want %.6g), broadcast "
						             "%.6g (want %.6g)", what, g.busbw / 1e9, ag, bc.busbw / 1e9,
						             lambda);
						cutbound_free(&g);
						cutbound_free(&bc);
					}
	CU_ASSERT_EQUAL(checked, 2 * (2 * 2 + 3 * 2) * 2);
	arena_free(&a);
}

/* Issue 34's test: on 2 boxes of 4 GPUs, 2 GPUs a NIC (L 450, P 32, N 50
 * GB/s), packing's allgather and allreduce reach 95 % of the closed form,
 * (n - 1) K c / (n - G) = 7 x 100 / 4 = 175 GB/s, at 1 GiB. */
static void
test_packing_simulated(void)
{
	char dir[] = "/tmp/collc-nicsim-XXXXXX", path[64];
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	write_in(dir, "c.coll",
	         "network { link_bandwidth = 3600 Gbps; link_latency = 500 ns; }\n"
	         "topology C = rails(boxes 2, gpus 4, nic_gbps 400, nics 2, pcie_gbps 256);\n"
	         "collective allgather AG on C { algorithm packing; }\n"
	         "collective allreduce AR on C { algorithm packing; }\n");
	snprintf(path, sizeof path, "%s/c.coll", dir);
	static const char *const coll[] = {"AG", "AR"};
	for (size_t i = 0; i < countof(coll); i++) {
		double busbw, bnd;
		sim_busbw(path, coll[i], &busbw, &bnd);
		assert_named(near_rel(bnd, 175, 1e-9) && busbw >= 0.95 * 175 && busbw <= 175 * (1 + 1e-9), __LINE__,
		             __FILE__, "%s: packing busbw %.2f GB/s, bound %.2f, closed form 175", coll[i],
		             busbw, bnd);
	}
	remove(path);
	rmdir(dir);
}

CU_TestInfo nic_nodes_tests[] = {
	{"cabling and names: G/K GPUs a NIC node, NIC k on rail k", test_cabling_and_names},
	{"translations: boxes by 1, GPUs by G/K, order B K", test_translations},
	{"the language: nic(b, k) a node, the parameters' errors", test_language},
	{"fmt, the IR text and DOT keep and name the NICs", test_round_trips},
	{"cut bound: the closed form on generated clusters with shared NICs", test_closed_form},
	{"cut bound: the closed form on leaf-spine clusters with shared NICs", test_closed_form_leaves},
	{"packing at 95 % of the bound at 1 GiB, 2 GPUs a NIC", test_packing_simulated},
	CU_TEST_INFO_NULL,
};
