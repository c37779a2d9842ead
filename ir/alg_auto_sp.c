/*
 * alg_auto_sp.c: the SP schedule `auto` synthesizes for itself on a whole
 * torus or HyperX, so that a file with nothing but the topology gets SP's
 * optimum where it has one (issue 33; docs/algorithms.md, "auto").
 * Needs: an allreduce, reduce-scatter or allgather on every node of a
 * torus or HyperX, in id order. Establishes: the tree symmetrization
 * (symm.c) of one base tree from node 0 by the form's natural group: the
 * unit translations and, per set of dimensions of equal size, the signed
 * cyclic turn of those dimensions (a quarter turn on a square; x -> -x on
 * a dimension of its own), which moves every link direction of the set
 * into every other; the tree is windmill on a square 2D HyperX, bfs
 * elsewhere (the SP paper's rules). NULL, saying nothing, where the group
 * or its size is refused (links that differ are no automorphism); auto's
 * verifier proves what it returns, as every candidate's. Also a mesh's
 * reflections and turns (mesh_group), which auto packs by beside every
 * root (alg.c).
 */
#include <string.h>

#include "alg.h"

/* The form's tree rule: windmill where it is defined (a square 2D
 * HyperX), bfs from node 0 elsewhere. */
static Tree *
natural_tree(const AlgCtx *c, const char **rule)
{
	const Topo *t = c->topo;
	if (t->kind == TK_HYPERX && t->ndim == 2 && t->size[0] == t->size[1]) {
		*rule = "windmill";
		return tree_windmill(c->arena, t, 0);
	}
	*rule = "bfs";
	return tree_bfs(c->arena, t, c->routes, 0);
}

/* The signed cyclic turn of the dimensions of size n: x_first -> -x_last,
 * and each other dimension of the set takes the one before it; identity
 * on the rest. Its affine generator in g; false where no dimension has
 * size n. */
static bool
turn_of_size(const Topo *t, int n, Loc loc, GroupGen *g)
{
	int d = t->ndim, dim[MAX_DIMS], k = 0;
	for (int i = 0; i < d; i++)
		if (t->size[i] == n)
			dim[k++] = i;
	if (k == 0)
		return false;
	*g = (GroupGen){.loc = loc, .affine = true};
	for (int i = 0; i < d; i++)
		if (t->size[i] != n)
			g->mat[i * d + i] = 1;
	g->mat[dim[0] * d + dim[k - 1]] = -1;
	for (int j = 1; j < k; j++)
		g->mat[dim[j] * d + dim[j - 1]] = 1;
	return true;
}

Group *
natural_group(Diag *dg, Arena *a, const Topo *t, Loc loc, const char *name)
{
	GroupGen gen[2 * MAX_DIMS];
	int ngen = group_unit_translations(t, loc, gen);
	for (int i = 0; i < t->ndim; i++) {
		bool first = true; /* one turn per size: its first dimension makes it */
		for (int j = 0; j < i; j++)
			first &= t->size[j] != t->size[i];
		if (first && turn_of_size(t, t->size[i], loc, &gen[ngen]))
			ngen++;
	}
	if (check_group_generators(dg, loc, name, ngen, t->nnode, t->nlink) != 0)
		return NULL;
	return group_build(dg, a, t, name, loc, gen, ngen);
}

Group *
mesh_group(Diag *dg, Arena *a, const Topo *t, Loc loc, const char *name)
{
	GroupGen gen[2 * MAX_DIMS];
	int d = t->ndim, ngen = 0;
	for (int i = 0; i < d; i++) { /* x_i -> (n_i - 1) - x_i */
		gen[ngen] = (GroupGen){.loc = loc, .affine = true};
		for (int j = 0; j < d; j++)
			gen[ngen].mat[j * d + j] = j == i ? -1 : 1;
		gen[ngen++].vec[i] = t->size[i] - 1;
	}
	for (int i = 0; i < d; i++) { /* the dimensions of i's size after it, cycled */
		int dim[MAX_DIMS], k = 0;
		for (int j = i; j < d; j++)
			if (t->size[j] == t->size[i])
				dim[k++] = j;
		bool first = true;
		for (int j = 0; j < i; j++)
			first &= t->size[j] != t->size[i];
		if (!first || k < 2)
			continue;
		gen[ngen] = (GroupGen){.loc = loc, .affine = true};
		for (int j = 0; j < d; j++)
			if (t->size[j] != t->size[i])
				gen[ngen].mat[j * d + j] = 1;
		for (int j = 0; j < k; j++)
			gen[ngen].mat[dim[(j + 1) % k] * d + dim[j]] = 1;
		ngen++;
	}
	if (check_group_generators(dg, loc, name, ngen, t->nnode, t->nlink) != 0)
		return NULL;
	return group_build(dg, a, t, name, loc, gen, ngen);
}

Sched *
alg_auto_sp(const AlgCtx *c)
{
	const Topo *t = c->topo;
	bool rsag = c->kind == CK_ALLREDUCE || c->kind == CK_REDUCE_SCATTER || c->kind == CK_ALLGATHER;
	if (!rsag || !c->whole || (t->kind != TK_TORUS && t->kind != TK_HYPERX))
		return NULL;
	diag_mute(c->diag, true);
	Group *g = natural_group(c->diag, c->arena, t, c->loc, "auto_sp");
	Sched *s = NULL;
	if (g && check_symmetric_size(c->diag, c->loc, c->name, 1, g->order) == 0) {
		const char *rule;
		Tree **tree = arena_array(c->arena, 1, sizeof *tree);
		tree[0] = natural_tree(c, &rule);
		s = symmetrize(c->diag, c->arena, c->name, c->loc, c->kind, t, c->routes, tree, 1, 1, g,
		               c->rank_node, c->nrank);
		if (s)
			/* no commas: the choice is a CSV field of collc sim and tune */
			s->choice = arena_printf(c->arena, "%s tree with a group of order %d", rule, g->order);
	}
	diag_mute(c->diag, false);
	return s;
}
