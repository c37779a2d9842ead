/*
 * alg_tto.c: TTO, "Three Tree Overlap" pipelined allreduce on a k x k mesh
 * (algorithms.md 9.1, 9.4). Three link-disjoint trees rooted at corners:
 * TL (root (0, 0)), BR (root (k-1, k-1)) and the staircase TR (root
 * (0, k-1)), which cannot reach (k-1, 0). So that chiplet is no rank of the
 * collective (the `ranks` clause says so); it still forwards: in TL and BR
 * its children send to its parent over two hops through it, along links
 * those trees own. That shortens TL and BR to TR's height, 2k - 3.
 *
 * Each tree carries a third of the vector in M pipeline chunks. With h the
 * tree height over the ranks, the rank at depth d sends chunk c up in slot
 * (h - d) + c and receives it back in slot h + (d - 1) + c: reduce and
 * broadcast of different chunks overlap, M + 2h - 1 slots (= rounds).
 * Without `chunks` (3M), M is pipeline_segments_levels' (alg.c) for the
 * file's message size: fill 2h - 1 with h = 2k - 3, a third of the vector,
 * each level paced by its edges' routes' slowest link.
 * Reduce and broadcast of different trees share some links (9.4); on a
 * supermesh the broadcast crosses a doubled pair over its added link.
 */
#include <math.h>
#include <stdlib.h>

#include "alg.h"

enum { TREE_TL, TREE_BR, TREE_TR, NTREE };

void
tto_tree_parents(const Topo *t, int which, int *parent)
{
	int k = t->size[0];
	for (int v = 0; v < t->nnode; v++)
		parent[v] = -1;
#define AT(r, c) ((r) * k + (c))
	for (int r = 0; r < k; r++)
		for (int c = 0; c < k; c++) {
			if (which == TREE_TL)
				parent[AT(r, c)] = c > 0 ? AT(r, c - 1) : r > 0 ? AT(r - 1, c) : -1;
			if (which == TREE_BR)
				parent[AT(r, c)] = r < k - 1 ? AT(r + 1, c) : c < k - 1 ? AT(r, c + 1) : -1;
		}
	if (which == TREE_TR) {
		/* corner i = (i, k-1-i) hangs N off the previous corner's row (the root
		 * for i = 0); its row to the west feeds E into it, its column below N */
		for (int i = 0; i <= k - 2; i++) {
			int cc = k - 1 - i;
			if (i > 0)
				parent[AT(i, cc)] = AT(i - 1, cc);
			for (int c = 0; c < cc; c++)
				parent[AT(i, c)] = AT(i, c + 1);
			for (int r = i + 1; r < k; r++)
				parent[AT(r, cc)] = AT(r - 1, cc);
		}
	}
#undef AT
}

/* Checks the communicator is every chiplet but (k-1, 0); marks members.
 * Errors point at the `ranks` clause when there is one. */
static int
check_ranks(const AlgCtx *c, bool *member)
{
	const Topo *t = c->topo;
	Loc at = c->ranks_loc.line ? c->ranks_loc : c->loc;
	int k = t->size[0], out = (k - 1) * k;
	for (int i = 0; i < c->nrank; i++)
		member[c->rank_node[i]] = true;
	char node[64], fix[96];
	if (out + 1 == k * k - 1)
		snprintf(fix, sizeof fix, "ranks 0..%d, %d;", out - 1, out + 1);
	else
		snprintf(fix, sizeof fix, "ranks 0..%d, %d..%d;", out - 1, out + 1, k * k - 1);
	topo_node_name(t, out, node, sizeof node);
	if (member[out]) {
		error_at(c->diag, at, "tto leaves chiplet %s out (its staircase tree, rooted at (0, %d), "
		         "cannot reach it); give '%s' the other %d chiplets: `%s`", node, k - 1, c->name,
		         k * k - 1, fix);
		return -1;
	}
	for (int v = 0; v < t->nnode; v++)
		if (v != out && !member[v]) {
			char missing[64];
			topo_node_name(t, v, missing, sizeof missing);
			error_at(c->diag, at, "tto runs on every chiplet of '%s' but %s; '%s' leaves out %s too "
			         "(`%s` gives it the others)", t->name, node, c->name, missing, fix);
			return -1;
		}
	return 0;
}

/* One tree's messages: every rank's edge to its nearest rank ancestor,
 * over the tree's links (two hops past the excluded chiplet). */
static void
tree_messages(Gen *g, int tree, const int *parent, const bool *member, const int *node_rank,
              int m, int *rank_depth)
{
	const Topo *t = g->ctx->topo;
	int n = t->nnode;
	/* rank depths: walk to the root counting rank hops; n is small (k^2) */
	int h = 0;
	for (int v = 0; v < n; v++) {
		rank_depth[v] = -1;
		if (!member[v])
			continue;
		int d = 0;
		for (int u = parent[v]; u >= 0; u = parent[u])
			d += member[u];
		rank_depth[v] = d;
		if (d > h)
			h = d;
	}
	for (int v = 0; v < n; v++) {
		if (!member[v] || parent[v] < 0)
			continue;
		/* at most two hops: (k-1, 0) is the one node that is no rank */
		int up[2], down[2], len = 0, u = v;
		do {
			up[len++] = topo_find_link(t, u, parent[u], 0);
			u = parent[u];
		} while (!member[u]);
		/* the same hops reversed; on a supermesh the broadcast takes a
		 * pair's added link where there is one, so that it does not share
		 * the mesh link with another tree's reduce */
		for (int i = 0; i < len; i++) {
			int a = t->link[up[len - 1 - i]].dst, b = t->link[up[len - 1 - i]].src;
			down[i] = topo_find_link(t, a, b, topo_nlinks_between(t, a, b) - 1);
		}
		int d = rank_depth[v], child = node_rank[v], par = node_rank[u];
		for (int ch = 0; ch < m; ch++) {
			gen_block(g, tree, ch);
			gen_send_route(g, h - d + ch, child, par, X_REDUCE, up, len);
			gen_block(g, tree, ch);
			gen_send_route(g, h + d - 1 + ch, par, child, X_COPY, down, len);
		}
	}
}

/* The segments by the levels' own links (pipeline_segments_levels): each
 * tree's edges routed both ways (TL's and BR's edges past the left-out
 * chiplet take its links), at depth d over the ranks of height h. */
static int
tto_segments(const AlgCtx *c, int h)
{
	const Topo *t = c->topo;
	int *parent = xmalloc((size_t)t->nnode * sizeof *parent), nlevel = 2 * h;
	double *bw = xmalloc((size_t)nlevel * sizeof *bw);
	for (int l = 0; l < nlevel; l++)
		bw[l] = HUGE_VAL;
	for (int tree = 0; tree < NTREE; tree++) {
		tto_tree_parents(t, tree, parent);
		for (int v = 0; v < t->nnode; v++) {
			int d = 0;
			for (int u = v; parent[u] >= 0; u = parent[u])
				d++;
			if (parent[v] >= 0)
				level_hop(bw, nlevel, h, d, true, true, route_bw(c->routes, t, v, parent[v]),
				          route_bw(c->routes, t, parent[v], v));
		}
	}
	int m = pipeline_segments_levels(c, bw, nlevel, 2 * h - 1, c->size / NTREE,
	                                 2.0 * NTREE * (c->nrank - 1));
	free(parent), free(bw);
	return m;
}

Sched *
alg_tto(const AlgCtx *c)
{
	const Topo *t = c->topo;
	if ((t->kind != TK_MESH && t->kind != TK_SUPERMESH) || t->ndim != 2 ||
	    t->size[0] != t->size[1]) {
		char shape[64];
		topo_describe(t, shape, sizeof shape);
		error_at(c->diag, c->loc, "tto runs on a square k x k mesh or supermesh (its three trees are built on one); "
		         "'%s' is %s", t->name, shape);
		return NULL;
	}
	int k = t->size[0], h = 2 * k - 3;
	int m = tto_segments(c, h);
	if ((m = chunks_per_share(c, "tto", NTREE, "one per tree", m)) < 0)
		return NULL;
	bool *member = xcalloc((size_t)t->nnode, sizeof *member);
	if (check_ranks(c, member) != 0) {
		free(member);
		return NULL;
	}
	AlgCtx whole = *c;
	whole.chunks = 0;
	Gen g;
	if (gen_begin(&g, &whole, NTREE, m) != 0) {
		free(member);
		return NULL;
	}
	int *parent = xmalloc((size_t)t->nnode * sizeof *parent);
	int *rank_depth = xmalloc((size_t)t->nnode * sizeof *rank_depth);
	for (int tree = 0; tree < NTREE; tree++) {
		tto_tree_parents(t, tree, parent);
		tree_messages(&g, tree, parent, member, g.s->node_rank, m, rank_depth);
	}
	free(parent);
	free(rank_depth);
	free(member);
	g.s->choice = arena_printf(c->arena, "%schunks %d", c->chunks ? "fixed " : "", NTREE * m);
	g.s->size_chosen = !c->chunks;
	return gen_end(c->diag, &g);
}
