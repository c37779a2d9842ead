/*
 * alg_nvls.c: NCCL's NVLS allreduce (docs/gpu-clusters.md, "In-switch
 * reduction"): the box's NVSwitch reduces and multicasts. Needs an
 * allreduce whose ranks each hang off a switch that reduces (the network's
 * switch_reduction; topo_reduces), the same number on each such switch (a
 * box); across boxes, the i-th rank of every box on one switch that
 * reduces (a rail with SHARP). Establishes a schedule of in-network
 * operations (Msg.fuse) on G shards (G ranks a box) of C pipeline chunks:
 *
 *   one box:   chunk k of shard i is reduced at the switch into rank i in
 *              round k (FUSE_REDUCE, every rank's copy read through the
 *              switch, rank i's own too), and multicast from rank i to the
 *              box in round k + 1 (FUSE_MULTICAST, rank i's copy written
 *              through the switch too): C + 1 rounds.
 *   B boxes:   the same, with the box's sum of shard i reduced across the
 *              boxes at rail i's switch between the two (FUSE_ALLREDUCE:
 *              CollNet on SHARP), round k + 1, the multicast in round k + 2.
 *   nccl_nvls_tree (NCCL_ALGO_NVLS_TREE), where only the boxes' switches
 *              reduce: each half of shard i up and down one of NCCL's two
 *              trees across the boxes (dbt_parent, as nccl_tree) between the
 *              box's reduce and its multicast: C + 2h + 1 rounds.
 *
 * As NCCL runs it (src/device/all_reduce.h, RunWorkColl for NCCL_ALGO_NVLS):
 * on one node the head of each shard reduces it through the multicast
 * object and stores the sum through it (directRecvDirectSend on nvls->down:
 * multimem loads and stores, so every GPU's copy, its own included, crosses
 * its NVLink); on several nodes the head sends the box's sum to the network
 * (nvls->out, CollNet) and multicasts what returns. Without `chunks` (G C),
 * C is pipeline_segments' for the file's size.
 */
#include <stdlib.h>
#include <string.h>

#include "alg.h"

/* Each rank's reducing switch of the kind wanted (a graph's any) next to
 * it, linked both ways, other than `not` (or -1); -1 if none. */
static int
reducing_neighbour(const Topo *t, int node, unsigned want, int not)
{
	for (int i = t->out[node]; i < t->out[node + 1]; i++) {
		int w = t->link[i].dst;
		unsigned r = topo_reduces(t, w);
		if (w != not && r && (t->kind == TK_GRAPH || (r & want)) && topo_find_link(t, w, node, 0) >= 0)
			return w;
	}
	return -1;
}

typedef struct Boxes {
	int nbox, gpus;
	int *sw;      /* nbox: each box's switch */
	int *member;  /* nbox x gpus: the box's ranks, in rank order */
	int *rail;    /* gpus: the switch joining the i-th rank of every box (nbox > 1) */
} Boxes;

/* The ranks by box switch; -1 after reporting why not. */
static int
find_boxes(const AlgCtx *c, Boxes *b)
{
	const Topo *t = c->topo;
	int p = c->nrank, *box = xmalloc((size_t)p * sizeof *box);
	b->sw = xmalloc((size_t)p * sizeof *b->sw);
	b->nbox = 0;
	for (int r = 0; r < p; r++) {
		int w = reducing_neighbour(t, c->rank_node[r], REDUCE_NVLS, -1);
		if (w < 0) {
			error_at(c->diag, c->loc, "%s needs every rank of '%s' on a switch that reduces "
			         "(switch_reduction = nvls in the network block: a box's NVSwitch); rank %d is "
			         "on none", c->algorithm, c->name, r);
			free(box);
			return -1;
		}
		box[r] = -1;
		for (int k = 0; k < b->nbox && box[r] < 0; k++)
			box[r] = b->sw[k] == w ? k : -1;
		if (box[r] < 0)
			b->sw[box[r] = b->nbox++] = w;
	}
	b->gpus = 0;
	int *fill = xcalloc((size_t)b->nbox, sizeof *fill);
	for (int r = 0; r < p; r++)
		fill[box[r]]++;
	b->gpus = fill[0];
	for (int k = 1; k < b->nbox; k++)
		if (fill[k] != b->gpus) {
			error_at(c->diag, c->loc, "%s needs as many ranks of '%s' on each box's switch: "
			         "%d on node %d, %d on node %d", c->algorithm, c->name, b->gpus, b->sw[0], fill[k],
			         b->sw[k]);
			free(box), free(fill);
			return -1;
		}
	if (b->gpus < 2) {
		error_at(c->diag, c->loc, "%s needs at least 2 ranks of '%s' on each box's switch; "
		         "node %d has 1", c->algorithm, c->name, b->sw[0]);
		free(box), free(fill);
		return -1;
	}
	b->member = xmalloc((size_t)p * sizeof *b->member);
	memset(fill, 0, (size_t)b->nbox * sizeof *fill);
	for (int r = 0; r < p; r++)
		b->member[box[r] * b->gpus + fill[box[r]]++] = r;
	free(box), free(fill);
	return 0;
}

/* Across boxes: rail i, the switch that reduces (SHARP) next to the i-th
 * rank of every box; -1 after reporting. */
static int
find_rails(const AlgCtx *c, Boxes *b)
{
	const Topo *t = c->topo;
	b->rail = xmalloc((size_t)b->gpus * sizeof *b->rail);
	for (int i = 0; i < b->gpus; i++) {
		int r0 = b->member[i], w = reducing_neighbour(t, c->rank_node[r0], REDUCE_SHARP, b->sw[0]);
		for (int k = 1; k < b->nbox && w >= 0; k++) {
			int node = c->rank_node[b->member[k * b->gpus + i]];
			w = topo_find_link(t, node, w, 0) >= 0 && topo_find_link(t, w, node, 0) >= 0 ? w : -1;
		}
		if (w < 0) {
			error_at(c->diag, c->loc, "nccl_nvls across %d boxes reduces in the network (CollNet "
			         "on SHARP): the ranks at place %d of every box of '%s' need one switch that "
			         "reduces (switch_reduction = nvls_sharp, as on rails)", b->nbox, i, c->name);
			return -1;
		}
		b->rail[i] = w;
	}
	return 0;
}

/* Chunk k of blocks first .. first + nb - 1 through box's switch: every
 * rank of the box sends it to `to` (reduce) or `to` sends it to every rank
 * (multicast). */
static void
box_step(Gen *g, const Boxes *b, int box, int round, int first, int nb, int k, int to, bool reduce)
{
	const Topo *t = g->ctx->topo;
	int w = b->sw[box], at = g->ctx->rank_node[to];
	sched_fuse_begin(&g->b, w, reduce ? FUSE_REDUCE : FUSE_MULTICAST, true);
	for (int j = 0; j < b->gpus; j++) {
		int r = b->member[box * b->gpus + j], node = g->ctx->rank_node[r];
		if (r == to)
			continue;
		int links[2] = {topo_find_link(t, reduce ? node : at, w, 0),
		                topo_find_link(t, w, reduce ? at : node, 0)};
		for (int x = first; x < first + nb; x++)
			gen_block(g, x, k);
		gen_send_route(g, round, reduce ? r : to, reduce ? to : r, reduce ? X_REDUCE : X_COPY,
		               links, 2);
	}
	sched_fuse_end(&g->b);
}

/* Chunk k of shard i across the boxes at rail i's switch. */
static void
rail_step(Gen *g, const Boxes *b, int round, int shard, int k)
{
	const Topo *t = g->ctx->topo;
	int w = b->rail[shard];
	sched_fuse_begin(&g->b, w, FUSE_ALLREDUCE, false);
	for (int x = 0; x < b->nbox; x++)
		for (int y = 0; y < b->nbox; y++) {
			if (x == y)
				continue;
			int from = b->member[x * b->gpus + shard], to = b->member[y * b->gpus + shard];
			int links[2] = {topo_find_link(t, g->ctx->rank_node[from], w, 0),
			                topo_find_link(t, w, g->ctx->rank_node[to], 0)};
			gen_block(g, shard, k);
			gen_send_route(g, round, from, to, X_REDUCE, links, 2);
		}
	sched_fuse_end(&g->b);
}

static void
boxes_free(Boxes *b)
{
	free(b->sw), free(b->member), free(b->rail);
}

Sched *
alg_nccl_nvls(const AlgCtx *c)
{
	Boxes b = {0};
	if (find_boxes(c, &b) != 0 || (b.nbox > 1 && find_rails(c, &b) != 0)) {
		boxes_free(&b);
		return NULL;
	}
	int G = b.gpus, across = b.nbox > 1;
	double msgs = (double)b.nbox * G * 2 * G + (across ? (double)G * b.nbox * b.nbox : 0);
	int m = pipeline_segments(c, 1 + across, c->size / G, msgs);
	if ((m = chunks_per_share(c, "nccl_nvls", G, "a box's ranks", m)) < 0) {
		boxes_free(&b);
		return NULL;
	}
	AlgCtx whole = *c;
	whole.chunks = 0;
	Gen g;
	if (gen_begin(&g, &whole, G, m) != 0) {
		boxes_free(&b);
		return NULL;
	}
	for (int k = 0; k < m; k++)
		for (int i = 0; i < G; i++) {
			for (int x = 0; x < b.nbox; x++)
				box_step(&g, &b, x, k, i, 1, k, b.member[x * G + i], true);
			if (across)
				rail_step(&g, &b, k + 1, i, k);
			for (int x = 0; x < b.nbox; x++)
				box_step(&g, &b, x, k + 1 + across, i, 1, k, b.member[x * G + i], false);
		}
	boxes_free(&b);
	g.s->choice = arena_printf(c->arena, "%schunks %d", c->chunks ? "fixed " : "", G * m);
	g.s->size_chosen = !c->chunks;
	return gen_end(c->diag, &g);
}

/* Each box's depth in tree t of NCCL's double binary tree on n boxes. */
static int
box_depths(int t, int n, int *depth)
{
	int h = 0;
	for (int x = 0; x < n; x++) {
		depth[x] = 0;
		for (int u = x; dbt_parent(t, u, n) >= 0; u = dbt_parent(t, u, n))
			depth[x]++;
		h = depth[x] > h ? depth[x] : h;
	}
	return h;
}

/* Chunk k of shard i's half t across the boxes: up tree t to its root
 * (each box's owner of shard i reducing into its parent's), then back
 * down: a box at depth d has the sum after round base + h + d - 1. */
static void
tree_steps(Gen *g, const Boxes *b, int k, int i, int t, const int *depth, int h)
{
	int G = b->gpus, base = k + 1, block = 2 * i + t;
	for (int x = 0; x < b->nbox; x++) {
		int up = dbt_parent(t, x, b->nbox), d = depth[x], me = b->member[x * G + i];
		if (up < 0)
			continue;
		int parent = b->member[up * G + i];
		gen_block(g, block, k);
		gen_send(g, base + h - d, me, parent, X_REDUCE);
		gen_block(g, block, k);
		gen_send(g, base + h + d - 1, parent, me, X_COPY);
	}
}

Sched *
alg_nccl_nvls_tree(const AlgCtx *c)
{
	Boxes b = {0};
	if (find_boxes(c, &b) != 0) {
		boxes_free(&b);
		return NULL;
	}
	int G = b.gpus, *depth = xmalloc(2 * (size_t)b.nbox * sizeof *depth);
	int h = box_depths(0, b.nbox, depth), h1 = box_depths(1, b.nbox, depth + b.nbox);
	h = h1 > h ? h1 : h;
	double msgs = (double)b.nbox * G * 2 * G + 4.0 * b.nbox;
	int m = pipeline_segments(c, 2 * h + 1, c->size / G, msgs);
	if ((m = chunks_per_share(c, "nccl_nvls_tree", 2 * G, "a box's ranks x 2 trees", m)) < 0) {
		boxes_free(&b), free(depth);
		return NULL;
	}
	AlgCtx whole = *c;
	whole.chunks = 0;
	Gen g;
	if (gen_begin(&g, &whole, 2 * G, m) != 0) {
		boxes_free(&b), free(depth);
		return NULL;
	}
	for (int k = 0; k < m; k++)
		for (int i = 0; i < G; i++) {
			for (int x = 0; x < b.nbox; x++)
				box_step(&g, &b, x, k, 2 * i, 2, k, b.member[x * G + i], true);
			for (int t = 0; t < 2; t++)
				tree_steps(&g, &b, k, i, t, depth + t * b.nbox, h);
			for (int x = 0; x < b.nbox; x++) { /* both halves at once, when both are back */
				int d = depth[x] > depth[b.nbox + x] ? depth[x] : depth[b.nbox + x];
				box_step(&g, &b, x, k + 1 + h + d, 2 * i, 2, k, b.member[x * G + i], false);
			}
		}
	boxes_free(&b), free(depth);
	g.s->choice = arena_printf(c->arena, "%schunks %d", c->chunks ? "fixed " : "", 2 * G * m);
	g.s->size_chosen = !c->chunks;
	return gen_end(c->diag, &g);
}
