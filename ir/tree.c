/*
 * tree.c: base trees over the ranks of a topology. Edges point child ->
 * parent; an edge may span several hops (k-hop trees, spine-leaf) and is
 * then sent along its route.
 *
 * bfs:      a node's parent is the first rank on its route to the root, so
 *           the tree is a BFS tree whose tie-breaks are the routing's (on
 *           tori: dimension 0 first, ties at n/2 towards -1; algorithms.md
 *           8.1's worked examples). On spine-leaf: BFS over hosts, two
 *           hosts adjacent when they share a leaf or a host index; a
 *           depth-2 host hangs under the depth-1 host of its own leaf, so
 *           the tree has the least total route length (algorithms.md 8.8).
 * khop:     the BFS tree compressed to depth k: BFS level L goes to tree
 *           level ceil(L k / H), and a node's parent is its nearest BFS
 *           ancestor on the previous tree level (algorithms.md 8.5).
 * windmill: HyperX n x n, depth 2 (algorithms.md 8.7).
 * forest:   two roots; every other node's parent is the first hop towards
 *           the nearer root (the first root on a tie) (algorithms.md 8.4).
 * balanced_pair: two BFS trees of a 2D torus whose x and y edges balance
 *           level by level (algorithms.md 8.6).
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

static Tree *
new_tree(Arena *a, const Topo *t, int root)
{
	Tree *tr = NEW(a, Tree);
	tr->topo = t;
	tr->nroot = 1;
	tr->root[0] = root;
	tr->parent = arena_array(a, (size_t)t->nnode, sizeof *tr->parent);
	tr->depth = arena_array(a, (size_t)t->nnode, sizeof *tr->depth);
	for (int v = 0; v < t->nnode; v++)
		tr->parent[v] = -1;
	return tr;
}

static bool
is_rank(const Topo *t, int v)
{
	return !(t->is_switch && t->is_switch[v]);
}

int
tree_finish(Tree *tr, Routes *r)
{
	const Topo *t = tr->topo;
	tr->height = 0;
	tr->weight = 0;
	for (int v = 0; v < t->nnode; v++)
		tr->depth[v] = -1;
	for (int i = 0; i < tr->nroot; i++)
		tr->depth[tr->root[i]] = 0;
	/* depths by walking up; a walk longer than the node count is a cycle */
	for (int v = 0; v < t->nnode; v++) {
		/* a rank without a parent that is no root is outside a partial tree */
		if (!is_rank(t, v) || tr->depth[v] >= 0 || tr->parent[v] < 0)
			continue;
		int u = v, n = 0;
		while (u >= 0 && tr->depth[u] < 0 && n <= t->nnode) {
			u = tr->parent[u];
			n++;
		}
		if (u < 0 || n > t->nnode)
			return -1;
		int d = tr->depth[u] + n;
		for (int w = v; tr->depth[w] < 0; w = tr->parent[w])
			tr->depth[w] = d--;
	}
	for (int v = 0; v < t->nnode; v++) {
		if (tr->depth[v] > tr->height)
			tr->height = tr->depth[v];
		if (tr->parent[v] >= 0)
			tr->weight += topo_distance(r, v, tr->parent[v]);
	}
	return 0;
}

/* The first rank after v on v's route to dst. */
static int
next_rank(Routes *r, int v, int dst)
{
	if (!r->topo->is_switch) { /* every node is a rank: the first hop's end */
		int l = route_first_link(r, v, dst);
		return l < 0 ? -1 : r->topo->link[l].dst;
	}
	const int *l;
	int n = route_get(r, v, dst, &l);
	for (int i = 0; i < n; i++) {
		int w = r->topo->link[l[i]].dst;
		if (is_rank(r->topo, w))
			return w;
	}
	return -1;
}

/* BFS over the hosts of a spine-leaf, two hosts adjacent when they share a
 * leaf or a host index. From root (j0, i0) every host sharing one of them is at
 * depth 1, under the root; every other host (j, i) at depth 2 has two BFS
 * parents, (j, i0) on its own leaf and (j0, i) across the spines, and takes
 * the one on its own leaf: a 2-hop route instead of 4, so the tree has the
 * least total route length W(T) of any spanning tree of the hosts (every host
 * off the root's leaf needs one edge, every other leaf one 4-hop edge). */
static void
spine_leaf_bfs(Tree *tr, int root)
{
	int hosts = tr->topo->size[1], n = tr->topo->nrank;
	int leaf0 = root / hosts, idx0 = root % hosts;
	for (int v = 0; v < n; v++) {
		int leaf = v / hosts, idx = v % hosts;
		if (v == root)
			continue;
		tr->parent[v] = leaf == leaf0 || idx == idx0 ? root : leaf * hosts + idx0;
	}
}

Tree *
tree_bfs(Arena *a, const Topo *t, Routes *r, int root)
{
	Tree *tr = new_tree(a, t, root);
	if (t->kind == TK_SPINE_LEAF) {
		spine_leaf_bfs(tr, root);
	} else {
		for (int v = 0; v < t->nnode; v++)
			if (v != root && is_rank(t, v))
				tr->parent[v] = next_rank(r, v, root);
	}
	if (tree_finish(tr, r) != 0)
		die("tree_bfs: routes do not reach the root");
	return tr;
}

Tree *
tree_khop(Arena *a, const Topo *t, Routes *r, int root, int k)
{
	Tree *bfs = tree_bfs(a, t, r, root);
	Tree *tr = new_tree(a, t, root);
	int H = bfs->height;
	if (k >= H) {
		memcpy(tr->parent, bfs->parent, (size_t)t->nnode * sizeof *tr->parent);
	} else {
		for (int v = 0; v < t->nnode; v++) {
			if (v == root || bfs->depth[v] < 0)
				continue;
			int level = (bfs->depth[v] * k + H - 1) / H; /* ceil(L k / H) */
			int u = bfs->parent[v];
			while (u != root && (bfs->depth[u] * k + H - 1) / H != level - 1)
				u = bfs->parent[u];
			tr->parent[v] = u;
		}
	}
	tree_finish(tr, r);
	return tr;
}

/* An offset is "positive" in 1..n/2 (n/2 included for even n). */
static bool
positive(int off, int n)
{
	return off >= 1 && off <= n / 2;
}

Tree *
tree_windmill(Arena *a, const Topo *t, int root)
{
	Tree *tr = new_tree(a, t, root);
	int n0 = t->size[0], n1 = t->size[1];
	int rc[2];
	topo_coords(t, root, rc);
	for (int v = 0; v < t->nnode; v++) {
		int c[2];
		topo_coords(t, v, c);
		int x = ((c[0] - rc[0]) % n0 + n0) % n0, y = ((c[1] - rc[1]) % n1 + n1) % n1;
		int p[2] = {rc[0], rc[1]};
		if (x == 0 && y == 0)
			continue;
		if (x != 0 && y != 0) {
			if (positive(x, n0) == positive(y, n1))
				p[1] = c[1];   /* (0, b): the cross node in its column */
			else
				p[0] = c[0];   /* (a, 0): the cross node in its row */
		}
		tr->parent[v] = topo_node(t, p);
	}
	Routes r;
	routes_init(&r, t, ROUTE_SHORTEST);
	tree_finish(tr, &r);
	routes_free(&r);
	return tr;
}

Tree *
tree_forest(Arena *a, const Topo *t, Routes *r, int ra, int rb)
{
	Tree *tr = new_tree(a, t, ra);
	tr->nroot = 2;
	tr->root[1] = rb;
	for (int v = 0; v < t->nnode; v++) {
		if (v == ra || v == rb || !is_rank(t, v))
			continue;
		int to = topo_distance(r, v, rb) < topo_distance(r, v, ra) ? rb : ra;
		tr->parent[v] = next_rank(r, v, to);
	}
	tree_finish(tr, r);
	return tr;
}

/* The neighbour of v one step closer to the root along dimension d (ties -1). */
static int
towards(const Topo *t, int v, int root, int d)
{
	int c[2], rc[2];
	topo_coords(t, v, c);
	topo_coords(t, root, rc);
	int n = t->size[d];
	int fwd = ((rc[d] - c[d]) % n + n) % n;
	c[d] += fwd < n - fwd ? +1 : -1;
	return topo_node(t, c);
}

/* The hops from the root (at coordinates rc) to v along x and along y. */
static void
torus_hops(const Topo *t, int v, const int rc[2], int *dx, int *dy)
{
	int c[2];
	topo_coords(t, v, c);
	*dx = ring_distance(rc[0], c[0], t->size[0]);
	*dy = ring_distance(rc[1], c[1], t->size[1]);
}

int
tree_balanced_pair(Arena *a, const Topo *t, int root, Tree **out)
{
	int m = t->size[0], n = t->size[1];
	Tree *t1 = new_tree(a, t, root), *t2 = new_tree(a, t, root);
	int rc[2];
	topo_coords(t, root, rc);
	int H = m / 2 + n / 2;
	Routes r;
	routes_init(&r, t, ROUTE_SHORTEST);
	int rc_ok = 0;
	for (int L = 1; L <= H; L++) {
		/* nodes of level L in id order: a (x-parent only), b (y only), f (free) */
		int na = 0, nb = 0, nf = 0;
		for (int v = 0; v < t->nnode; v++) {
			int dx, dy;
			torus_hops(t, v, rc, &dx, &dy);
			if (dx + dy != L)
				continue;
			if (dy == 0) {
				na++;
				t1->parent[v] = t2->parent[v] = towards(t, v, root, 0);
			} else if (dx == 0) {
				nb++;
				t1->parent[v] = t2->parent[v] = towards(t, v, root, 1);
			} else {
				nf++;
			}
		}
		int h = nf + nb - na; /* free slots (over both trees) that take an x-parent */
		if (h < 0 || h > 2 * nf)
			rc_ok = -1;
		int in1 = h < nf ? h : nf, in2 = h - in1, k = 0;
		for (int v = 0; v < t->nnode; v++) {
			int dx, dy;
			torus_hops(t, v, rc, &dx, &dy);
			if (dx + dy != L || dx == 0 || dy == 0)
				continue;
			t1->parent[v] = towards(t, v, root, k < in1 ? 0 : 1);
			t2->parent[v] = towards(t, v, root, k < in2 ? 0 : 1);
			k++;
		}
	}
	tree_finish(t1, &r);
	tree_finish(t2, &r);
	routes_free(&r);
	out[0] = t1;
	out[1] = t2;
	return rc_ok;
}

Tree *
tree_from_parents(Diag *dg, Arena *a, const Topo *t, Routes *r, const int *roots, int nroot, int *parent,
                  Loc loc)
{
	Tree *tr = new_tree(a, t, roots[0]);
	tr->nroot = nroot;
	tr->root[1] = nroot > 1 ? roots[1] : -1;
	memcpy(tr->parent, parent, (size_t)t->nnode * sizeof *parent);
	tr->loc = loc;
	if (tree_finish(tr, r) != 0) {
		error_at(dg, loc, "this tree has a cycle or a node that does not reach the root");
		return NULL;
	}
	return tr;
}
