/* test_torus_boxes.c: torus_boxes (ir/topo.c), boxes of G GPUs joined as a
 * k-D torus by their NICs (docs/gpu-clusters.md, "A torus of boxes"): the
 * cabling on generated tori, the translations' order, and the cut bound's
 * closed form, checked against ir/cutbound.c on generated clusters. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cutbound.h"
#include "ir.h"
#include "tests.h"

/* The generated tori: k = 1..3 dimensions of 2..4 boxes (2 x 2 x 2 at k = 3) */
static const int tori[][4] = {
	{1, 2}, {1, 3}, {1, 5}, {2, 2, 2}, {2, 2, 3}, {2, 4, 3}, {3, 2, 2, 2}, {3, 2, 3, 2},
};

static Topo *
make(Arena *a, const int *torus, int gpus, double link_gbps, int nic_gbps)
{
	Net net = net_defaults;
	net.bandwidth = link_gbps * 1e9;
	return topo_torus_boxes(a, "C", torus[0], torus + 1, gpus, nic_gbps, net);
}

static int
boxes_of(const int *torus)
{
	int n = 1;
	for (int i = 0; i < torus[0]; i++)
		n *= torus[1 + i];
	return n;
}

/* Every GPU: a link each way to its box's switch and one NIC cable, which
 * joins GPU 2p of box b and GPU 2p + 1 of the box +1 along dimension
 * p mod k; so every box has G/2k cables to each of its 2k neighbours (both
 * to the same box along a dimension of 2). */
static void
test_cabling(void)
{
	Arena a = {0};
	for (size_t i = 0; i < countof(tori); i++) {
		const int *torus = tori[i];
		int k = torus[0], nb = boxes_of(torus);
		for (int gpus = 2 * k; gpus <= 4 * k; gpus += 2 * k) {
			Topo *t = make(&a, torus, gpus, 3600, 400);
			CU_ASSERT_EQUAL(t->nrank, nb * gpus);
			CU_ASSERT_EQUAL(t->nnode, nb * (gpus + 1));
			CU_ASSERT_EQUAL(t->nlink, (int)topo_link_estimate(TK_TORUS_BOXES, &(TopoShape){
				                            .ndim = t->ndim, .size = {t->size[0], t->size[1],
				                                                      t->size[2], t->size[3]}}));
			int *cables = calloc((size_t)nb * (size_t)nb, sizeof *cables);
			for (int r = 0; r < t->nrank; r++) {
				CU_ASSERT_EQUAL_FATAL(t->out[r + 1] - t->out[r], 2);
				const Link *sw = &t->link[t->out[r]], *nic = &t->link[t->out[r] + 1];
				CU_ASSERT_EQUAL(sw->dst, t->nrank + r / gpus);
				CU_ASSERT(nic->dst < t->nrank && nic->bandwidth == 400e9);
				int g = r % gpus, peer = nic->dst;
				CU_ASSERT_EQUAL(peer % gpus, g % 2 ? g - 1 : g + 1);
				CU_ASSERT(topo_find_link(t, peer, r, 0) >= 0); /* a cable, both ways */
				int c[MAX_DIMS], pc[MAX_DIMS], off = 0, along = -1;
				topo_coords(t, r, c), topo_coords(t, peer, pc);
				for (int d = 0; d < k; d++)
					if (c[d] != pc[d])
						off++, along = d;
				CU_ASSERT(off == 1 && along == g / 2 % k);
				cables[(r / gpus) * nb + peer / gpus]++;
			}
			for (int b = 0; b < nb; b++) /* G/2k out of each of 2k directions */
				for (int d = 0; d < k; d++) {
					int up = -1, c[MAX_DIMS];
					topo_coords(t, b * gpus, c);
					c[d] = (c[d] + 1) % torus[1 + d];
					up = topo_node(t, c) / gpus;
					int want = torus[1 + d] == 2 ? 2 * gpus / (2 * k) : gpus / (2 * k);
					CU_ASSERT_EQUAL(cables[b * nb + up], want);
				}
			free(cables);
		}
	}
	arena_free(&a);
}

/* `translate;`: the boxes by 1 along each dimension, the GPUs by 2k; the
 * group they generate has A1...Ak G/2k elements, each an automorphism. */
static void
test_translations(void)
{
	Arena a = {0};
	Diag dgv = diag_new(), *dg = &dgv;
	for (size_t i = 0; i < countof(tori); i++) {
		int k = tori[i][0];
		for (int gpus = 2 * k; gpus <= 4 * k; gpus += 2 * k) {
			Topo *t = make(&a, tori[i], gpus, 3600, 400);
			GroupGen gen = {.all_translations = true};
			Group *g = group_build(dg, &a, t, "G", (Loc){0}, &gen, 1);
			CU_ASSERT_PTR_NOT_NULL_FATAL(g);
			CU_ASSERT_EQUAL(g->order, boxes_of(tori[i]) * gpus / (2 * k));
		}
	}
	CU_ASSERT_EQUAL(nerrors(dg), 0);
	arena_free(&a);
}

/* The closed form (docs/gpu-clusters.md): L a GPU's link to its switch, N
 * a NIC, n = A1...Ak G ranks. Allgather and reduce-scatter: the least of a
 * GPU's way in, L + N, a cable's two GPUs', 2L (n - 1)/(n - 2), and a
 * box's, G N (n - 1)/(n - G); allreduce's upper bound min(L + N,
 * 2(n - 1)/n lambda), lambda = min(L + N, 2L, G N), and what reduce-scatter
 * then allgather reach, the allgather's; broadcast and reduce lambda. The
 * torus's slabs (2 A1...Ak/Ad G/2k N) never bind. Generated clusters with
 * NVLink-like, equal and slower box links (where the cable's pair binds). */
static void
test_closed_form(void)
{
	Arena a = {0};
	const double links[] = {3600, 400, 200}; /* Gbit/s: L = 9 N, N, N / 2 */
	int checked = 0;
	for (size_t i = 0; i < countof(tori); i++) {
		int k = tori[i][0], nb = boxes_of(tori[i]);
		for (int gpus = 2 * k; gpus <= 4 * k; gpus += 2 * k)
			for (size_t l = 0; l < countof(links); l++, checked++) {
				Topo *t = make(&a, tori[i], gpus, links[l], 400);
				double L = links[l] / 8, N = 50, n = nb * gpus, gpu = L + N, box = gpus * N;
				double ag = fmin(fmin(gpu, 2 * L * (n - 1) / (n - 2)), box * (n - 1) / (n - gpus));
				double lambda = fmin(fmin(gpu, 2 * L), box);
				double ar = 2 * (n - 1) / n * lambda < gpu ? 2 * (n - 1) / n * lambda : gpu;
				CutBound b[NCOLLKIND];
				for (int c = 0; c < NCOLLKIND; c++)
					if (c != CK_ALLTOALL)
						b[c] = cut_bound_of(t, (CollKind)c);
				char what[96];
				topo_describe(t, what, sizeof what);
				assert_named(near_rel(b[CK_ALLGATHER].busbw / 1e9, ag, 1e-9) &&
				             near_rel(b[CK_REDUCE_SCATTER].busbw / 1e9, ag, 1e-9), __LINE__, __FILE__,
				             "%s at L %g GB/s: allgather %.6g, reduce_scatter %.6g, want %.6g",
				             what, L, b[CK_ALLGATHER].busbw / 1e9,
				             b[CK_REDUCE_SCATTER].busbw / 1e9, ag);
				assert_named(near_rel(b[CK_ALLREDUCE].busbw / 1e9, ar, 1e-9) &&
				             near_rel(b[CK_ALLREDUCE].achievable / 1e9, ag, 1e-9), __LINE__, __FILE__,
				             "%s at L %g GB/s: allreduce %.6g (reached %.6g), want %.6g (%.6g)",
				             what, L, b[CK_ALLREDUCE].busbw / 1e9,
				             b[CK_ALLREDUCE].achievable / 1e9, ar, ag);
				assert_named(near_rel(b[CK_BROADCAST].busbw / 1e9, lambda, 1e-9) &&
				             near_rel(b[CK_REDUCE].busbw / 1e9, lambda, 1e-9), __LINE__, __FILE__,
				             "%s at L %g GB/s: broadcast %.6g, reduce %.6g, want %.6g", what, L,
				             b[CK_BROADCAST].busbw / 1e9, b[CK_REDUCE].busbw / 1e9, lambda);
				for (int c = 0; c < NCOLLKIND; c++)
					if (c != CK_ALLTOALL)
						cutbound_free(&b[c]);
			}
	}
	CU_ASSERT_EQUAL(checked, 48);
	arena_free(&a);
}

CU_TestInfo torus_boxes_tests[] = {
	{"cabling: a NIC cable per GPU, G/2k to each of a box's 2k neighbours", test_cabling},
	{"translations: boxes by 1, GPUs by 2k, order A1...Ak G/2k", test_translations},
	{"cut bound: the closed form on generated tori of boxes", test_closed_form},
	CU_TEST_INFO_NULL,
};
