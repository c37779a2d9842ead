/*
 * alg_nccl_tree.c: NCCL's tree allreduce on a rails cluster (algorithms.md,
 * docs/gpu-clusters.md "NCCL's tree"). Needs a whole rails(boxes B, gpus
 * G, ...) topology; establishes an allreduce schedule of G channels x 2
 * trees, each on 1/(2G) of the vector cut into C pipeline chunks.
 *
 * As NCCL builds it (src/graph/connect.cc, ncclTopoPreset and connectTrees;
 * src/graph/trees.cc, ncclGetDtree): channel c's tree runs a chain through
 * each box's GPUs (here c, c + 1, ..., c + G - 1 mod G, so each channel
 * leaves the box through a different NIC, as nccl_ring's do); the chain's
 * first GPU is the box's head, which joins the double binary tree across
 * boxes (ncclGetDtree: tree 0 the in-order binary tree on boxes, tree 1 its
 * mirror or shift, dbt_parent in alg_dbt.c), parent and both children on
 * the head, NIC traffic in and out on one rail (NCCL_TOPO_PATTERN_TREE).
 * Every (channel, tree) carries its share reduced up and broadcast down, a
 * rank at depth d sending chunk k up in slot (h - d) + k and its parent
 * sending it back in slot h + (d - 1) + k: 2h + C - 1 rounds (as alg_dbt).
 * Without `chunks` (2G C), C is pipeline_segments' for the file's size.
 */
#include <stdlib.h>

#include "alg.h"

/* The parent of every rank in channel ch's tree t (-1: the root), and each
 * rank's depth; the tree's height. */
static int
channel_tree(int boxes, int gpus, int ch, int t, int *parent, int *depth)
{
	for (int b = 0; b < boxes; b++)
		for (int k = 0; k < gpus; k++) {
			int r = b * gpus + (ch + k) % gpus;
			if (k > 0) {
				parent[r] = b * gpus + (ch + k - 1) % gpus;
				continue;
			}
			int up = dbt_parent(t, b, boxes);
			parent[r] = up < 0 ? -1 : up * gpus + ch;
		}
	int h = 0, p = boxes * gpus;
	for (int r = 0; r < p; r++) {
		depth[r] = 0;
		for (int u = r; parent[u] >= 0; u = parent[u])
			depth[r]++;
		if (depth[r] > h)
			h = depth[r];
	}
	return h;
}

/* The tallest (channel, tree): the pipeline's depth. */
static int
tallest(int boxes, int gpus, int *parent, int *depth)
{
	int h = 0;
	for (int ch = 0; ch < gpus; ch++)
		for (int t = 0; t < 2; t++) {
			int ht = channel_tree(boxes, gpus, ch, t, parent, depth);
			h = ht > h ? ht : h;
		}
	return h;
}

Sched *
alg_nccl_tree(const AlgCtx *c)
{
	const Topo *t = c->topo;
	if (t->kind != TK_RAILS || !c->whole) {
		error_at(c->diag, c->loc, "nccl_tree runs on every GPU of a rails cluster (a chain in each "
		         "box, a double binary tree across boxes); '%s' is not on one", c->name);
		return NULL;
	}
	int boxes = t->size[0], gpus = t->size[1], p = c->nrank, ntree = 2 * gpus;
	int *parent = xmalloc((size_t)p * sizeof *parent), *depth = xmalloc((size_t)p * sizeof *depth);
	int h = tallest(boxes, gpus, parent, depth);
	int m = pipeline_segments(c, 2 * h - 1, c->size / ntree, 2.0 * ntree * (p - 1));
	char why[64];
	snprintf(why, sizeof why, "2 trees x %d channels", gpus);
	if ((m = chunks_per_share(c, "nccl_tree", ntree, why, m)) < 0) {
		free(parent), free(depth);
		return NULL;
	}
	AlgCtx whole = *c;
	whole.chunks = 0;
	Gen g;
	if (gen_begin(&g, &whole, ntree, m) != 0) {
		free(parent), free(depth);
		return NULL;
	}
	for (int ch = 0; ch < gpus; ch++)
		for (int tr = 0; tr < 2; tr++) {
			int ht = channel_tree(boxes, gpus, ch, tr, parent, depth), share = 2 * ch + tr;
			for (int r = 0; r < p; r++) {
				if (parent[r] < 0)
					continue;
				for (int k = 0; k < m; k++) {
					gen_block(&g, share, k);
					gen_send(&g, ht - depth[r] + k, r, parent[r], X_REDUCE);
					gen_block(&g, share, k);
					gen_send(&g, ht + k + depth[r] - 1, parent[r], r, X_COPY);
				}
			}
		}
	free(parent), free(depth);
	g.s->choice = arena_printf(c->arena, "%schunks %d", c->chunks ? "fixed " : "", ntree * m);
	g.s->size_chosen = !c->chunks;
	return gen_end(c->diag, &g);
}
