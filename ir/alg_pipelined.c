/*
 * alg_pipelined.c: pipelined_trees, collectives streamed in segments
 * through sets of link-disjoint spanning trees (algorithms.md 9.3, 9.4;
 * docs/algorithms.md "Pipelined trees").
 *
 * Needs: sets of trees from disjoint_trees (every tree spans every node and
 * records the link of each edge), or none: then the SuperMesh root sets of
 * a square (super)mesh are built here (the corner set for allreduce, every
 * set for reduce_scatter and allgather). Establishes an explicit schedule
 * whose every message is one hop over the link its tree edge owns (reduce
 * runs over the reverse link of the same copy).
 *
 * With h a tree's height and M segments, the node at depth d sends segment
 * c to its parent in slot (h - d) + c and receives it back in slot
 * h + (d - 1) + c:
 *   allreduce       one set; tree j reduces and broadcasts share j of the
 *                   vector, reduce and broadcast of different segments
 *                   overlapped: M + 2h - 1 slots;
 *   reduce_scatter  the tree rooted at r reduces block r to r; the sets run
 *                   one after another, M + h - 1 slots each;
 *   allgather       the tree rooted at r broadcasts block r; likewise.
 * Without `segments`, M is pipeline_segments_levels' (alg.c) for the
 * file's message size: fill 2h - 1 (allreduce) or h - 1, a tree's share of
 * the vector, each level paced by the slowest link the trees send over in it.
 */
#include <math.h>
#include <stdlib.h>

#include "alg.h"

/* The sets of a square (super)mesh: the corners for allreduce, all for the
 * rest. NULL after a located error. */
static Tree **
root_set_trees(const AlgCtx *c, int *set_size, int *nset)
{
	const Topo *t = c->topo;
	if (!((t->kind == TK_MESH || t->kind == TK_SUPERMESH) && t->ndim == 2 &&
	      t->size[0] == t->size[1])) {
		error_at(c->diag, c->loc, "pipelined_trees without trees builds the SuperMesh root sets of a "
		         "square mesh or supermesh; give it `trees` of disjoint(...) on '%s'", t->name);
		return NULL;
	}
	if (c->kind != CK_ALLREDUCE && t->nnode > MAX_ROOT_SET_NODES) {
		error_at(c->diag, c->loc, "pipelined_trees builds all %d root sets only up to %d nodes; '%s' has "
		         "%d: give the sets as `trees` of disjoint(...)", t->nnode / 4,
		         MAX_ROOT_SET_NODES, t->name, t->nnode);
		return NULL;
	}
	int *roots = xmalloc((size_t)t->nnode * sizeof *roots);
	int n = supermesh_root_sets(t, roots, set_size);
	if (c->kind == CK_ALLREDUCE)
		n = 1;
	Tree **all = arena_array(c->arena, (size_t)t->nnode, sizeof *all);
	int at = 0;
	for (int i = 0; i < n; i++) {
		DisjointMethod m;
		Tree **tr = disjoint_trees(c->diag, c->arena, t, c->routes, roots + at, set_size[i], c->loc, &m);
		if (!tr) {
			free(roots);
			return NULL;
		}
		for (int j = 0; j < set_size[i]; j++)
			all[at + j] = tr[j];
		at += set_size[i];
	}
	free(roots);
	*nset = n;
	return all;
}

/* Checks what the schedule stands on; -1 after reporting. */
static int
check_sets(const AlgCtx *c, Tree **tr, const int *set_size, int nset)
{
	const Topo *t = c->topo;
	if (!c->whole) {
		error_at(c->diag, c->ranks_loc.line ? c->ranks_loc : c->loc, "pipelined_trees runs on every "
		         "node of '%s' (its trees span them all); leave out the `ranks` clause",
		         t->name);
		return -1;
	}
	if (c->kind == CK_ALLREDUCE && nset != 1) {
		error_at(c->diag, c->loc, "pipelined_trees streams an allreduce through one set of disjoint "
		         "trees (the corner set on a supermesh); '%s' gives %d sets", c->name, nset);
		return -1;
	}
	int total = 0;
	for (int i = 0; i < nset; i++)
		total += set_size[i];
	if (c->kind != CK_ALLREDUCE) {
		/* one tree per block: every node is a root exactly once */
		int *seen = xcalloc((size_t)t->nnode, sizeof *seen);
		int missing = -1, twice = -1;
		for (int j = 0; j < total; j++)
			if (seen[tr[j]->root[0]]++)
				twice = tr[j]->root[0];
		for (int v = 0; v < t->nnode && missing < 0; v++)
			if (!seen[v])
				missing = v;
		free(seen);
		if (twice >= 0 || missing >= 0) {
			char node[64];
			topo_node_name(t, twice >= 0 ? twice : missing, node, sizeof node);
			error_at(c->diag, c->loc, "pipelined_trees %s: the tree rooted at r carries block r, so "
			         "the sets need every node as a root exactly once; %s is a root %s",
			         coll_kind_name[c->kind], node, twice >= 0 ? "twice" : "of none");
			return -1;
		}
	}
	for (int j = 0; j < total; j++)
		for (int v = 0; v < t->nnode; v++) {
			int l = tr[j]->link[v];
			if (l >= 0 && c->kind != CK_ALLGATHER &&
			    topo_find_link(t, v, tr[j]->parent[v], t->link[l].copy) < 0) {
				char a[64], b[64];
				topo_node_name(t, v, a, sizeof a);
				topo_node_name(t, tr[j]->parent[v], b, sizeof b);
				error_at(c->diag, c->loc, "pipelined_trees reduces over the reverse of each tree link; "
				         "'%s' has no link %s -> %s of copy %d", t->name, a, b,
				         t->link[l].copy);
				return -1;
			}
		}
	return 0;
}

static int
set_height(Tree **tr, int n)
{
	int h = 0;
	for (int j = 0; j < n; j++)
		if (tr[j]->height > h)
			h = tr[j]->height;
	return h;
}

/* M from the cost model (module comment), within the message budget, by
 * the links of the levels the trees send over (pipeline_segments_levels):
 * each edge's own link down (allgather, allreduce), its reverse up
 * (reduce-scatter, allreduce). */
static int
default_segments(const AlgCtx *c, Tree **tr, const int *set_size, int nset)
{
	const Topo *t = c->topo;
	int p = t->nnode, h = set_height(tr, set_size[0]), ntree = 0;
	bool ar = c->kind == CK_ALLREDUCE, up = c->kind != CK_ALLGATHER, down = c->kind != CK_REDUCE_SCATTER;
	for (int i = 0; i < (ar ? 1 : nset); i++)
		ntree += set_size[i];
	int nlevel = ar ? 2 * h : h;
	double *bw = xmalloc(((size_t)nlevel + 1) * sizeof *bw);
	for (int l = 0; l < nlevel; l++)
		bw[l] = HUGE_VAL;
	for (int j = 0; j < ntree; j++)
		for (int v = 0; v < p; v++) {
			int l = tr[j]->link[v];
			if (l < 0)
				continue;
			int rev = topo_find_link(t, v, tr[j]->parent[v], t->link[l].copy);
			level_hop(bw, nlevel, tr[j]->height, tr[j]->depth[v], up, down,
			          rev >= 0 ? t->link[rev].bandwidth : HUGE_VAL, t->link[l].bandwidth);
		}
	double fill = ar ? 2 * h - 1 : h - 1;
	double share = ar ? c->size / set_size[0] : c->size / p;
	double msgs_per_seg = (double)(ar ? 2 : 1) * (p - 1) * (ar ? set_size[0] : p);
	int m = pipeline_segments_levels(c, bw, nlevel, fill, share, msgs_per_seg);
	free(bw);
	return m;
}

/* One tree's messages from slot `off`: up (reduce) and/or down (broadcast). */
static void
tree_messages(Gen *g, const Tree *tr, int block, int m, int off, bool up, bool down)
{
	const Topo *t = g->ctx->topo;
	const int *rank = g->s->node_rank;
	int h = tr->height;
	for (int v = 0; v < t->nnode; v++) {
		int l = tr->link[v];
		if (l < 0)
			continue;
		int d = tr->depth[v], par = tr->parent[v];
		int rev = topo_find_link(t, v, par, t->link[l].copy);
		for (int seg = 0; seg < m; seg++) {
			if (up) {
				gen_block(g, block, seg);
				gen_send_link(g, off + h - d + seg, rank[v], rank[par], X_REDUCE, rev);
			}
			if (down) {
				gen_block(g, block, seg);
				gen_send_link(g, off + (up ? h : 0) + d - 1 + seg, rank[par], rank[v], X_COPY, l);
			}
		}
	}
}

Sched *
alg_pipelined(const AlgCtx *c)
{
	const int *set_size = c->set_size;
	int nset = c->nset;
	Tree **tr = c->trees;
	if (!tr) {
		int *sizes = arena_array(c->arena, (size_t)c->topo->nnode, sizeof *sizes);
		tr = root_set_trees(c, sizes, &nset);
		if (!tr)
			return NULL;
		set_size = sizes;
	}
	if (check_sets(c, tr, set_size, nset) != 0)
		return NULL;
	int m = c->segments ? c->segments : default_segments(c, tr, set_size, nset);
	double msgs = (double)m * (c->kind == CK_ALLREDUCE ? 2 : 1) * (c->topo->nnode - 1) *
	              (c->kind == CK_ALLREDUCE ? set_size[0] : c->topo->nnode);
	if (msgs > 64.0 * MAX_PIPELINE_MSGS) {
		error_at(c->diag, c->loc, "pipelined_trees with %d segments makes %.0f messages; the limit is %d "
		         "(fewer segments, or leave `segments` out)", m, msgs, 64 * MAX_PIPELINE_MSGS);
		return NULL;
	}
	int nblock = c->kind == CK_ALLREDUCE ? set_size[0] : c->topo->nnode;
	Gen g;
	if (gen_begin(&g, c, nblock, m) != 0)
		return NULL;
	if (c->kind == CK_ALLREDUCE) {
		for (int j = 0; j < set_size[0]; j++)
			tree_messages(&g, tr[j], j, m, 0, true, true);
	} else {
		int off = 0;
		for (int i = 0, at = 0; i < nset; at += set_size[i++]) {
			for (int j = at; j < at + set_size[i]; j++)
				tree_messages(&g, tr[j], g.s->node_rank[tr[j]->root[0]], m, off,
				              c->kind == CK_REDUCE_SCATTER, c->kind == CK_ALLGATHER);
			off += m + set_height(tr + at, set_size[i]) - 1;
		}
	}
	g.s->choice = arena_printf(c->arena, "%ssegments %d", c->segments ? "fixed " : "", m);
	g.s->size_chosen = !c->segments;
	/* for check's report and the DOT drawing */
	g.s->tree = tr;
	g.s->ntree = c->kind == CK_ALLREDUCE ? set_size[0] : c->topo->nnode;
	return gen_end(c->diag, &g);
}
