/*
 * alg_translate.c: the symmetric form of the algorithms that are the same
 * under every translation of a whole ring or torus (ring, bucket), built
 * for collc sim and sweep. The group is the translations; chunk (b, g) is
 * the translate by g of base tree b's chunk, which starts at node 0; the
 * base transfers are every transfer of that chunk, so the copies by the
 * group are exactly the explicit schedule's transfers. Needs: a whole ring
 * or torus whose translations are automorphisms (translations_apply).
 * Establishes: a symmetric schedule whose base trees are the chunks'
 * allgather trees (its reduce tree when nothing is copied), which the
 * verifier proves by symmetry and backends/to_sim.c streams round by round,
 * never holding more than one round's messages.
 */
#include <string.h>

#include "alg.h"

bool
translations_apply(const Topo *t)
{
	if (t->kind != TK_RING && t->kind != TK_TORUS)
		return false;
	/* one link each way between neighbours (a side of 2 has two) */
	for (int i = 0; i < t->ndim; i++) {
		int x[MAX_DIMS] = {0};
		x[i] = 1;
		int nb = topo_node(t, x);
		if (t->size[i] < 3 || topo_nlinks_between(t, 0, nb) != 1 ||
		    topo_nlinks_between(t, nb, 0) != 1)
			return false;
	}
	for (int l = 1; l < t->nlink; l++)
		if (t->link[l].bandwidth != t->link[0].bandwidth ||
		    t->link[l].latency != t->link[0].latency ||
		    t->link[l].energy_per_bit != t->link[0].energy_per_bit)
			return false;
	return true;
}

int
translates_begin(Translates *tr, const AlgCtx *c, int ntree)
{
	const Topo *t = c->topo;
	memset(tr, 0, sizeof *tr);
	if (check_symmetric_size(c->diag, c->loc, c->name, ntree, c->nrank) != 0)
		return -1;
	GroupGen gen = {.loc = c->loc, .affine = true, .all_translations = true};
	Group *g = group_build(c->diag, c->arena, t, "translations", c->loc, &gen, 1);
	if (!g)
		return -1;
	Sched *s = sched_new(c->arena, c->name, c->loc, c->kind, c->algorithm, t, c->rank_node,
	                     c->nrank);
	s->group = g;
	s->ntree = ntree;
	s->nchunk = ntree * g->order;
	s->tree = arena_array(c->arena, (size_t)ntree, sizeof *s->tree);
	tr->c = c;
	tr->s = s;
	sched_begin(&tr->sb, c->arena, s, c->routes);
	return 0;
}

void
translates_xfer(Translates *tr, int tree, int round, int src, int dst, XferOp op,
                const int *links, int n)
{
	Sched *s = tr->s;
	if (s->nbase == tr->cap)
		s->base = arena_grow(tr->c->arena, s->base, &tr->cap, sizeof *s->base);
	s->base[s->nbase++] = (BaseXfer){.round = round, .tree = tree, .src = src, .dst = dst,
	                                 .op = op, .route = sched_route(&tr->sb, links, n),
	                                 .instance = tr->instance};
	if (round >= s->nround)
		s->nround = round + 1;
}

Tree *
transfers_tree(const AlgCtx *c, const Sched *s, int b, int root)
{
	bool copies = false;
	for (int i = 0; i < s->nbase && !copies; i++)
		copies = s->base[i].tree == b && s->base[i].op == X_COPY;
	int *parent = arena_array(c->arena, (size_t)c->topo->nnode, sizeof *parent);
	for (int v = 0; v < c->topo->nnode; v++)
		parent[v] = -1;
	for (int i = 0; i < s->nbase; i++) {
		const BaseXfer *x = &s->base[i];
		if (x->tree != b || (x->op == X_COPY) != copies)
			continue;
		if (copies)
			parent[x->dst] = x->src;
		else
			parent[x->src] = x->dst;
	}
	return tree_from_parents(c->diag, c->arena, c->topo, c->routes, &root, 1, parent, c->loc);
}

Sched *
translates_end(Diag *dg, Translates *tr)
{
	const AlgCtx *c = tr->c;
	Sched *s = tr->s;
	const Group *g = s->group;
	int root = c->rank_node[0];
	for (int b = 0; b < s->ntree; b++)
		if (!(s->tree[b] = transfers_tree(c, s, b, root)))
			return NULL;
	if (sched_end(dg, &tr->sb) != 0)
		return NULL;
	s->owner = arena_array(c->arena, (size_t)s->nchunk, sizeof *s->owner);
	for (int b = 0; b < s->ntree; b++)
		for (int e = 0; e < g->order; e++)
			s->owner[b * g->order + e] = s->node_rank[group_node(g, e, root)];
	return s;
}
