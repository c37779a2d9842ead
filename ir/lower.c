/*
 * lower.c: the AST of a checked file to the IR. The only ir/ file that
 * sees the AST. Sema has already resolved names and checked arguments, so
 * this pass reads values without re-checking them; what it reports is what
 * only the built objects can show: maps that are not automorphisms, trees
 * that do not span a collective's ranks, groups that move ranks out of a
 * sub-communicator, routing that does not apply to the topology.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "ast.h"
#include "ir.h"

typedef struct TreeSet {
	int n;
	Tree **tree;
	bool disjoint;    /* disjoint(...): link-disjoint trees for pipelined_trees */
} TreeSet;

typedef struct GenList {
	int n, cap;
	GroupGen *gen;
} GenList;

typedef struct Lowering {
	Diag *diag;  /* where this pass's diagnostics go (the run's, from the driver) */
	Prog *p;
	Arena *a;
	const File *f;
	Net net;
	Topo **topo;      /* per declaration */
	Group **group;
	GenList *gens;
	TreeSet *trees;
	Routes **routes;  /* per declaration: [fixed shortest, dor, ecmp] */
	Group **form_group;     /* per topology declaration: form_group's, or NULL */
	bool *form_group_tried; /* per topology declaration: form_group built (or failed) */
} Lowering;

static int
decl_index(const Lowering *L, const Decl *d)
{
	return (int)(d - L->f->decl);
}

static const Decl *
find(const Lowering *L, const char *name)
{
	for (int i = 0; i < L->f->ndecl; i++)
		if (L->f->decl[i].name && strcmp(L->f->decl[i].name, name) == 0)
			return &L->f->decl[i];
	die("lower: '%s' was not resolved", name);
}

static Routes *
routes_for(Lowering *L, const Decl *topo, RoutePolicy policy)
{
	int i = decl_index(L, topo) * NROUTE_POLICY + (int)policy;
	if (!L->routes[i]) {
		L->routes[i] = NEW(L->a, Routes);
		routes_init(L->routes[i], L->topo[decl_index(L, topo)], policy);
	}
	return L->routes[i];
}

static int
int_of(Diag *dg, const Expr *e)
{
	int64_t v = 0;
	if (!ast_eval_int(dg, e, &v, false))
		die("lower: not an integer");
	return (int)v;
}

/* ---- network parameters ---- */

static void
apply_params(Net *n, const Block *b)
{
	for (int i = 0; i < b->nitem; i++) {
		const Item *it = &b->item[i];
		const NetParam *p = it->kind == IT_PARAM ? net_param_find(it->name) : NULL;
		if (!p)
			continue;
		if (p->value == NV_SWITCHING) {
			n->store_and_forward = strcmp(it->value->text, "store_and_forward") == 0;
			continue;
		}
		if (p->value == NV_REDUCTION) {
			n->reduction = (unsigned)switch_reduction_find(it->value->text);
			continue;
		}
		const Expr *e = it->value->kind == EX_NEG ? it->value->lhs : it->value;
		double v = expr_number(e) * (it->value->kind == EX_NEG ? -1 : 1);
		if (p->value == NV_BUFFER && expr_qty(e) == Q_SIZE)
			n->buffer_bytes = v, n->buffer_packets = 0;
		else if (p->value == NV_BUFFER)
			n->buffer_packets = v, n->buffer_bytes = 0;
		else
			*net_field(n, p) = v;
	}
}

/* ---- topologies ---- */

static const Arg *
labelled(const Call *c, const char *label)
{
	for (int i = 0; i < c->narg; i++)
		if (c->arg[i].label && strcmp(c->arg[i].label, label) == 0)
			return &c->arg[i];
	return NULL;
}

/* The links the declaration asks for, against MAX_LINKS, before building. */
static int
check_topology_size(Diag *dg, const Decl *d, double links)
{
	char desc[128];
	snprintf(desc, sizeof desc, "topology '%s' (%s)", d->name, d->form->name);
	return check_topology_links(dg, d->loc, desc, links);
}

/* A block form (graph): its links as written, each with its parameters. */
static Topo *
lower_graph(Lowering *L, const Decl *d, Net net)
{
	const NodeSpace *sp = d->space;
	int nlink = 0, cap = 0;
	Link *links = NULL;
	for (int i = 0; i < d->body->nitem; i++) {
		const Item *it = &d->body->item[i];
		if (it->kind != IT_LINK)
			continue;
		Net ln = net;
		if (it->body)
			apply_params(&ln, it->body);
		int a = (int)ast_resolve_node(L->diag, sp, it->from, false);
		int b = (int)ast_resolve_node(L->diag, sp, it->to, false);
		for (int dir = 0; dir < (it->flag ? 2 : 1); dir++) {
			Link l = {.src = dir ? b : a, .dst = dir ? a : b, .dim = -1,
			          .bandwidth = ln.bandwidth, .latency = ln.link_latency,
			          .energy_per_bit = ln.energy_per_bit};
			VEC_PUSH(L->a, links, nlink, cap, l);
		}
	}
	if (check_topology_size(L->diag, d, nlink) != 0)
		return NULL;
	return topo_graph(L->a, d->name, (int)sp->nodes, sp->is_switch, nlink, links, net);
}

/* Any form: from the node space sema bound (Decl.space) by the form's
 * builder, or from its block. */
static int
lower_topology(Lowering *L, const Decl *d)
{
	Net net = L->net;
	if (d->body)
		for (int i = 0; i < d->body->nitem; i++)
			if (d->body->item[i].kind == IT_NETWORK)
				apply_params(&net, d->body->item[i].body);
	const NodeSpace *sp = d->space;
	const TopoBuilder *b = &topo_builders[sp->kind];
	Topo *t;
	if (d->form->box && topo_source_find(d->form->name) < 0) /* a cluster's box: its GPUs' */
		net.bandwidth = d->form->box_link_gbs * 8e9;         /* links as NCCL rates them */
	if (d->form->box && topo_source_find(d->form->name) >= 0) {
		/* a topology source: the box boxes.c read, as collc nccl-topo has it */
		t = check_topology_size(L->diag, d, d->form->box->nlink) == 0
		        ? nccl_box_topo(L->a, d->name, d->form->box, net)
		        : NULL;
	} else if (topo_forms[sp->kind].block) {
		t = lower_graph(L, d, net);
	} else {
		if (!b->build) /* test_topo's "every form has a builder" fails first */
			die("lower: no builder for %s in topo_builders[]", sp->form);
		TopoShape shape = {.ndim = sp->ndim, .switches = (int)sp->switches,
		                   .variant = (int)sp->variant, .pairs = sp->pairs, .nics = sp->nics,
		                   .nic_link_gbps = sp->nic_link_gbps};
		for (int i = 0; i < sp->ndim; i++)
			shape.size[i] = (int)sp->size[i];
		t = check_topology_size(L->diag, d, b->links(&shape)) == 0 ? b->build(L->a, d->name, &shape, net)
		                                                   : NULL;
	}
	if (!t)
		return -1;
	t->loc = d->loc;
	L->topo[decl_index(L, d)] = t;
	Prog *p = L->p;
	p->topo = xrealloc(p->topo, (size_t)(p->ntopo + 1) * sizeof *p->topo);
	p->topo[p->ntopo++] = t;
	return 0;
}

/* ---- groups ---- */

/* An affine expression at integer values of the map's variables, into
 * *out; false after a located error when a step overflows (a coefficient
 * like 9223372036854775807 * x) or the value leaves an int (the group's
 * matrices hold ints). */
static bool
eval_affine(Diag *dg, const Expr *e, const Expr *vars, const long *val, long *out)
{
	long a = 0, b = 0;
	bool ovf = false;
	switch (e->kind) {
	case EX_INT:
		*out = e->ival;
		break;
	case EX_NAME:
		for (int i = 0; i < vars->nelem; i++)
			if (strcmp(vars->elem[i]->text, e->text) == 0)
				*out = val[i];
		break;
	case EX_TUPLE:
		return eval_affine(dg, e->elem[0], vars, val, out);
	case EX_NEG:
	case EX_ADD:
	case EX_SUB:
	case EX_MUL:
		if (!eval_affine(dg, e->lhs, vars, val, &a) ||
		    (e->kind != EX_NEG && !eval_affine(dg, e->rhs, vars, val, &b)))
			return false;
		ovf = e->kind == EX_NEG   ? __builtin_sub_overflow(0L, a, out)
		      : e->kind == EX_ADD ? __builtin_add_overflow(a, b, out)
		      : e->kind == EX_SUB ? __builtin_sub_overflow(a, b, out)
		                          : __builtin_mul_overflow(a, b, out);
		break;
	default:
		die("lower: not affine");
	}
	if (ovf || *out < INT_MIN || *out > INT_MAX) {
		if (ovf)
			error_at(dg, e->loc, "integer overflow in the map: a step is beyond 64 bits");
		else
			error_at(dg, e->loc, "integer overflow in the map: %ld is beyond 2^31 - 1 in size", *out);
		return false;
	}
	return true;
}

static void
push_gen(Lowering *L, GenList *g, GroupGen x)
{
	VEC_PUSH(L->a, g->gen, g->n, g->cap, x);
}

/* `translate;`: a unit translation per dimension */
static void
push_translations(Lowering *L, GenList *g, const Topo *t, Loc loc)
{
	GroupGen unit[MAX_DIMS];
	int n = group_unit_translations(t, loc, unit);
	for (int i = 0; i < n; i++)
		push_gen(L, g, unit[i]);
}

static int
map_generator(Lowering *L, const Topo *t, const NodeSpace *sp, const Item *it, GenList *out)
{
	const Expr *from = it->list.v[0];
	bool affine = from->kind == EX_NAME ||
	              (from->kind == EX_TUPLE && from->nelem > 0 && from->elem[0]->kind == EX_NAME);
	GroupGen g = {.loc = it->loc};
	if (affine) {
		/* x -> A x + b: b is the image of 0, column j of A that of e_j minus b */
		Expr one = {.kind = EX_TUPLE, .elem = (Expr **)&it->list.v[0], .nelem = 1};
		const Expr *vars = from->kind == EX_TUPLE ? from : &one;
		const Expr *to = it->list.v[1];
		int d = vars->nelem;
		g.affine = true;
		long val[MAX_DIMS] = {0}, x;
		for (int i = 0; i < d; i++) {
			const Expr *ei = to->kind == EX_TUPLE && to->nelem == d && d > 1 ? to->elem[i] : to;
			if (!eval_affine(L->diag, ei, vars, val, &x))
				return -1;
			g.vec[i] = (int)x;
		}
		for (int j = 0; j < d; j++) {
			val[j] = 1;
			for (int i = 0; i < d; i++) {
				const Expr *ei = to->kind == EX_TUPLE && to->nelem == d && d > 1 ? to->elem[i] : to;
				if (!eval_affine(L->diag, ei, vars, val, &x))
					return -1;
				if (x - g.vec[i] < INT_MIN || x - g.vec[i] > INT_MAX) {
					error_at(L->diag, ei->loc, "integer overflow in the map: a coefficient is beyond "
					         "2^31 - 1 in size");
					return -1;
				}
				g.mat[i * d + j] = (int)(x - g.vec[i]);
			}
			val[j] = 0;
		}
	} else {
		g.perm = arena_array(L->a, (size_t)t->nnode, sizeof *g.perm);
		for (int v = 0; v < t->nnode; v++)
			g.perm[v] = v;
		for (int i = 0; i + 1 < it->list.n; i += 2)
			g.perm[ast_resolve_node(L->diag, sp, it->list.v[i], false)] =
				(int)ast_resolve_node(L->diag, sp, it->list.v[i + 1], false);
	}
	push_gen(L, out, g);
	return 0;
}

/* Room for every generator of d's body at once: grown by doubling, the
 * arena would keep each smaller copy too (up to four generators' room per
 * generator, 300 bytes each, where a file lists thousands of maps). The
 * group keeps this array as its generators (group_build_keeping), so
 * `translate;` is expanded here, into its unit translations. */
static int
reserve_gens(Lowering *L, const Decl *d, const Topo *t, GenList *gens)
{
	long n = 0;
	for (int i = 0; d->body && i < d->body->nitem; i++) {
		const Item *it = &d->body->item[i];
		if (it->kind == IT_TRANSLATE)
			n += it->value ? 1 : group_unit_translations(t, it->loc, NULL);
		else if (it->kind == IT_MAP)
			n++;
		else if (it->kind == IT_INCLUDE)
			n += L->gens[decl_index(L, find(L, it->name))].n;
	}
	if (d->form)
		n += group_unit_translations(t, d->loc, NULL);
	/* before the room is taken: group_build checks the same count */
	if (check_group_generators(L->diag, d->loc, d->name, n < INT_MAX ? (int)n : INT_MAX, t->nnode,
	                           t->nlink) != 0)
		return -1;
	if (n > gens->cap && n < INT_MAX) {
		gens->gen = arena_array(L->a, (size_t)n, sizeof *gens->gen);
		gens->cap = (int)n;
	}
	return 0;
}

static void
lower_group(Lowering *L, const Decl *d)
{
	int idx = decl_index(L, d);
	const Topo *t = L->topo[decl_index(L, d->topo)];
	const NodeSpace *sp = d->topo->space;
	GenList *gens = &L->gens[idx];
	Group *g = NULL;
	if (d->form && strcmp(d->form->name, "automorphisms") == 0) {
		g = group_automorphisms(L->diag, L->a, t, d->name, d->loc);
		/* as generators of groups that include it: every element, as the
		 * group holds them (not copied: there may be millions) */
		if (g)
			*gens = (GenList){.n = g->ngen, .cap = g->ngen, .gen = g->gen};
	} else {
		if (reserve_gens(L, d, t, gens) != 0) {
			L->group[idx] = NULL;
			return;
		}
		if (d->form) { /* translations(T) */
			push_translations(L, gens, t, d->loc);
		} else {
			for (int i = 0; i < d->body->nitem; i++) {
				const Item *it = &d->body->item[i];
				if (it->kind == IT_TRANSLATE && !it->value) {
					push_translations(L, gens, t, it->loc);
				} else if (it->kind == IT_TRANSLATE) {
					GroupGen x = {.loc = it->loc, .affine = true};
					for (int k = 0; k < t->ndim; k++)
						x.mat[k * t->ndim + k] = 1;
					if (it->value->kind == EX_TUPLE && it->value->nelem > 1)
						for (int k = 0; k < it->value->nelem; k++)
							x.vec[k] = int_of(L->diag, it->value->elem[k]);
					else
						x.vec[0] = int_of(L->diag, it->value);
					push_gen(L, gens, x);
				} else if (it->kind == IT_MAP && map_generator(L, t, sp, it, gens) != 0) {
					L->group[idx] = NULL;
					return;
				} else if (it->kind == IT_INCLUDE) {
					const GenList *inc = &L->gens[decl_index(L, find(L, it->name))];
					for (int k = 0; k < inc->n; k++)
						push_gen(L, gens, inc->gen[k]);
				}
			}
		}
		g = group_build_keeping(L->diag, L->a, t, d->name, d->loc, gens->gen, gens->n);
	}
	L->group[idx] = g; /* NULL after its error */
}

/* ---- trees ---- */

static int
node_arg(Diag *dg, const Decl *topo, const Call *c, const char *label, int k)
{
	return (int)ast_resolve_node(dg, topo->space, labelled(c, label)->val.v[k], true);
}

static int
lower_tree(Lowering *L, const Decl *d)
{
	int idx = decl_index(L, d);
	const Topo *t = L->topo[decl_index(L, d->topo)];
	Routes *r = routes_for(L, d->topo, ROUTE_SHORTEST);
	TreeSet *set = &L->trees[idx];
	set->tree = arena_array(L->a, 2, sizeof *set->tree);
	set->n = 0; /* until a tree is built: a failed one is skipped by its users */
	int n = 1;
	const Call *c = d->form;
	if (!c) {
		int *parent = arena_array(L->a, (size_t)t->nnode, sizeof *parent);
		for (int v = 0; v < t->nnode; v++)
			parent[v] = -1;
		for (int i = 0; i < d->body->nitem; i++) {
			const Item *it = &d->body->item[i];
			parent[ast_resolve_node(L->diag, d->topo->space, it->from, true)] =
				(int)ast_resolve_node(L->diag, d->topo->space, it->to, true);
		}
		int root = (int)ast_resolve_node(L->diag, d->topo->space, d->root, true);
		set->tree[0] = tree_from_parents(L->diag, L->a, t, r, &root, 1, parent, d->loc);
		if (!set->tree[0])
			return -1;
	} else if (strcmp(c->name, "bfs") == 0) {
		set->tree[0] = tree_bfs(L->a, t, r, node_arg(L->diag, d->topo, c, "root", 0));
	} else if (strcmp(c->name, "khop") == 0) {
		set->tree[0] = tree_khop(L->a, t, r, node_arg(L->diag, d->topo, c, "root", 0),
		                         int_of(L->diag, labelled(c, "depth")->val.v[0]));
	} else if (strcmp(c->name, "windmill") == 0) {
		if (t->size[0] != t->size[1]) {
			error_at(L->diag, c->loc, "windmill needs a square hyperx (n x n)");
			return -1;
		}
		set->tree[0] = tree_windmill(L->a, t, node_arg(L->diag, d->topo, c, "root", 0));
	} else if (strcmp(c->name, "forest") == 0) {
		int a = node_arg(L->diag, d->topo, c, "roots", 0), b = node_arg(L->diag, d->topo, c, "roots", 1);
		if (topo_distance(r, a, b) != 1 || topo_distance(r, b, a) != 1) {
			error_at(L->diag, labelled(c, "roots")->loc, "the two roots of a forest must be neighbours "
			         "(they swap their halves over one link)");
			return -1;
		}
		set->tree[0] = tree_forest(L->a, t, r, a, b);
	} else if (strcmp(c->name, "balanced_pair") == 0) {
		if (t->ndim != 2 || t->size[0] < 3 || t->size[1] < 3) {
			error_at(L->diag, c->loc, "balanced_pair needs a 2D torus with both sides at least 3");
			return -1;
		}
		n = 2;
		if (tree_balanced_pair(L->a, t, node_arg(L->diag, d->topo, c, "root", 0), set->tree) != 0) {
			error_at(L->diag, c->loc, "balanced_pair found no balanced split on %s (a level has more "
			         "nodes on one axis than the free nodes can offset)", t->name);
			return -1;
		}
	} else { /* disjoint */
		const Arg *ra = labelled(c, "roots");
		int *roots = arena_array(L->a, (size_t)ra->val.n, sizeof *roots);
		for (int i = 0; i < ra->val.n; i++)
			roots[i] = node_arg(L->diag, d->topo, c, "roots", i);
		set->disjoint = true;
		DisjointMethod how;
		set->tree = disjoint_trees(L->diag, L->a, t, r, roots, ra->val.n, c->loc, &how);
		if (!set->tree)
			return -1;
		n = ra->val.n;
	}
	set->n = n;
	for (int i = 0; i < set->n; i++) {
		set->tree[i]->name = d->name;
		set->tree[i]->loc = d->loc;
	}
	return 0;
}

/* ---- collectives ---- */

static const Item *
item_of(const Decl *d, ItemKind k)
{
	for (int i = 0; i < d->body->nitem; i++)
		if (d->body->item[i].kind == k)
			return &d->body->item[i];
	return NULL;
}

static bool
grid_topology(const Topo *t)
{
	return t->kind == TK_TORUS || t->kind == TK_RING || t->kind == TK_MESH ||
	       t->kind == TK_SUPERMESH || t->kind == TK_HYPERX;
}

/* Every tree must cover exactly the collective's ranks. */
static int
check_span(Diag *dg, const Sched *s, const Tree *tr, const char *tree, Loc loc)
{
	const Topo *t = s->topo;
	char node[64];
	for (int v = 0; v < t->nnode; v++) {
		bool in_tree = tr->depth[v] >= 0, in_coll = s->node_rank[v] >= 0;
		if (in_tree == in_coll)
			continue;
		topo_node_name(t, v, node, sizeof node);
		if (in_coll)
			error_at(dg, loc, "tree '%s' does not span the ranks of '%s': node %s is not in it",
			         tree, s->name, node);
		else
			error_at(dg, loc, "tree '%s' reaches node %s, which is not a rank of '%s'", tree, node,
			         s->name);
		return -1;
	}
	return 0;
}

static void
add_sched(Lowering *L, Sched *s)
{
	Prog *p = L->p;
	p->sched = xrealloc(p->sched, (size_t)(p->nsched + 1) * sizeof *p->sched);
	p->sched[p->nsched++] = s;
}

/* pipelined_trees(trees D, ...): the sets of disjoint trees, in order. */
static int
pipelined_sets(Lowering *L, const Arg *trees, AlgCtx *c)
{
	int total = 0;
	for (int i = 0; i < trees->val.n; i++) {
		const TreeSet *set = &L->trees[decl_index(L, find(L, trees->val.v[i]->text))];
		if (set->n == 0 && set->disjoint)
			return -1; /* its error was reported where it was declared */
		if (!set->disjoint) {
			error_at(L->diag, trees->val.v[i]->loc, "pipelined_trees streams through sets of "
			         "link-disjoint trees; '%s' is not one: declare it `trees %s = "
			         "disjoint(T, roots ...)`", trees->val.v[i]->text, trees->val.v[i]->text);
			return -1;
		}
		total += set->n;
	}
	Tree **all = arena_array(L->a, (size_t)total, sizeof *all);
	int *size = arena_array(L->a, (size_t)trees->val.n, sizeof *size);
	int at = 0;
	for (int i = 0; i < trees->val.n; i++) {
		const TreeSet *set = &L->trees[decl_index(L, find(L, trees->val.v[i]->text))];
		for (int k = 0; k < set->n; k++)
			all[at++] = set->tree[k];
		size[i] = set->n;
	}
	c->trees = all;
	c->set_size = size;
	c->nset = trees->val.n;
	return 0;
}

/* A cluster form's own translations (boxes, and GPU indices with their
 * rails), built once per topology when a collective on it finds no group
 * declared: packing then packs one root per orbit on `rails(boxes 128,
 * ...)` with nothing but the topology, as with `group G =
 * translations(C);` written. Built muted: a group it cannot build is no
 * error of the file's (packing then packs every root, or refuses by its
 * work estimate). */
static const Group *
form_group(Lowering *L, const Topo *t)
{
	const TopoForm *form = &topo_forms[t->kind];
	/* a torus or HyperX: its translations and turns (alg_auto_sp.c), whose
	 * orbits pack more copies, better balanced, than every root alone */
	bool grid = t->kind == TK_TORUS || t->kind == TK_HYPERX;
	if (!form->translations || (!form->node_class[0].word && !grid))
		return NULL;
	int i = 0;
	while (i < L->f->ndecl && L->topo[i] != t)
		i++;
	if (i == L->f->ndecl)
		return NULL;
	if (!L->form_group_tried[i]) {
		L->form_group_tried[i] = true;
		GroupGen unit[MAX_DIMS];
		int n = group_unit_translations(t, L->f->decl[i].loc, unit);
		diag_mute(L->diag, true);
		L->form_group[i] = grid ? natural_group(L->diag, L->a, t, L->f->decl[i].loc,
		                                        arena_printf(L->a, "turns(%s)", t->name))
		                        : group_build(L->diag, L->a, t,
		                                      arena_printf(L->a, "translations(%s)", t->name),
		                                      L->f->decl[i].loc, unit, n);
		diag_mute(L->diag, false);
	}
	return L->form_group[i];
}

/* packing's orbits: the largest group on t the file declares before d
 * (the first of the largest), else t's form's translations (form_group),
 * or NULL. */
static const Group *
file_group(Lowering *L, const Decl *d, const Topo *t)
{
	const Group *best = NULL;
	for (int i = 0; i < L->f->ndecl && &L->f->decl[i] != d; i++) {
		const Group *g = L->group[i];
		if (L->f->decl[i].kind == DC_GROUP && g && g->topo == t && (!best || g->order > best->order))
			best = g;
	}
	return best ? best : form_group(L, t);
}

/* What a generator (library or user schedule) needs of a collective. */
static AlgCtx
alg_ctx(Lowering *L, const Decl *d, CollKind kind, const Topo *t, Routes *routes,
        const int *rank_node, int nrank, Loc loc)
{
	AlgCtx c = alg_ctx_new(L->diag, L->a, d->name, loc, kind, t, routes, rank_node, nrank);
	c.pack_group = file_group(L, d, t);
	c.size = L->p->auto_size;
	c.compact = L->p->compact;
	c.listed = L->p->listed;
	c.trace = L->p->trace;
	const Item *ranks = item_of(d, IT_RANKS);
	if (ranks)
		c.ranks_loc = ranks->loc;
	const Item *chunks = item_of(d, IT_CHUNKS);
	if (chunks && !chunks->flag)
		c.chunks = int_of(L->diag, chunks->value);
	const Item *root = item_of(d, IT_ROOT);
	c.root = 0; /* without `root`, rank 0 of the collective */
	if (root) {
		int node = (int)ast_resolve_node(L->diag, d->topo->space, root->value, true);
		for (int i = 0; i < nrank; i++)
			if (rank_node[i] == node)
				c.root = i;
	}
	return c;
}

/* ---- an algorithm call's options ---- */

static bool
opt_int(Diag *dg, const Bound *b, int *out)
{
	int64_t v;
	if (!ast_eval_int(dg, b->v[0], &v, true)) /* sema checked it: reports only if not */
		return false;
	*out = (int)v;
	return true;
}

/* The bound word's index in the parameter's words, or -1 (sema refuses
 * such a word, for `algorithm` and `use` alike). */
static int
opt_word(const ParamSpec *ps, const Bound *b)
{
	return b->v[0]->kind == EX_NAME ? ast_word_index(b->v[0]->text, ps->words) : -1;
}

static bool
opt_ports(AlgCtx *c, const ParamSpec *ps, const Bound *b)
{
	(void)ps;
	return opt_int(c->diag, b, &c->ports);
}

static bool
opt_segments(AlgCtx *c, const ParamSpec *ps, const Bound *b)
{
	(void)ps;
	return opt_int(c->diag, b, &c->segments);
}

static bool
opt_reconfigs(AlgCtx *c, const ParamSpec *ps, const Bound *b)
{
	(void)ps;
	return opt_int(c->diag, b, &c->reconfigs);
}

static bool
opt_halfway(AlgCtx *c, const ParamSpec *ps, const Bound *b)
{
	c->halfway = opt_word(ps, b) == 0;
	return true;
}

static bool
opt_latency(AlgCtx *c, const ParamSpec *ps, const Bound *b)
{
	c->latency = opt_word(ps, b) == 1; /* bandwidth|latency */
	return true;
}

static bool
opt_mirrored(AlgCtx *c, const ParamSpec *ps, const Bound *b)
{
	c->mirrored = opt_word(ps, b) == 0;
	return true;
}

static bool
opt_dim_algs(AlgCtx *c, const ParamSpec *ps, const Bound *b)
{
	(void)ps;
	for (int k = 0; k < b->n && c->ndim_alg < MAX_DIMS; k++)
		if (b->v[k]->kind == EX_NAME)
			c->dim_alg[c->ndim_alg++] = b->v[k]->text;
	return true;
}

/* Where each parameter of algorithms.def lands in AlgCtx, keyed by its
 * label, or by its words for a positional word parameter; NULL: lowered
 * with the trees (symmetric's in lower_collective, pipelined_trees' in
 * pipelined_sets). test_alg checks every parameter of the registry has one. */
static const AlgOption alg_options[] = {
	{"ports", opt_ports},
	{"segments", opt_segments},
	{"reconfigs", opt_reconfigs},
	{"halfway", opt_halfway},
	{"bandwidth|latency", opt_latency},
	{"mirrored", opt_mirrored},
	{"ring|direct|halving_doubling|double_binary_tree", opt_dim_algs},
	{"trees", NULL},
	{"group", NULL},
};

const AlgOption *
alg_option(const ParamSpec *ps)
{
	const char *key = ps->label ? ps->label : ps->words;
	for (size_t i = 0; key && i < countof(alg_options); i++)
		if (strcmp(alg_options[i].key, key) == 0)
			return &alg_options[i];
	return NULL;
}

bool
alg_call_options(Arena *a, AlgCtx *c, const Call *call)
{
	int id = alg_find(call->name);
	if (id < 0)
		return true; /* alg_build says it is missing */
	const FormSpec *f = &alg_forms[id];
	Bound b[MAX_PARAMS];
	bool bad_label;
	ast_bind(c->diag, a, call, f, b, false, &bad_label);
	for (int i = 0; i < MAX_PARAMS && f->param[i].kind != A_END; i++) {
		const AlgOption *o = b[i].n ? alg_option(&f->param[i]) : NULL;
		if (o && o->read && !o->read(c, &f->param[i], &b[i]))
			return false;
	}
	return true;
}

/* An algorithm of the classic library, or `auto`: every one that applies,
 * the fastest under the cost model for the file's message size. */
static int
lower_library(Lowering *L, const Decl *d, CollKind kind, const Topo *t, Routes *routes,
              const int *rank_node, int nrank, const Item *alg)
{
	AlgCtx c = alg_ctx(L, d, kind, t, routes, rank_node, nrank, alg->loc);
	Sched *s = NULL;
	bool missing = false;
	if (!alg->flag) {
		const Call *call = alg->call;
		c.algorithm = call->name;
		if (alg_find(call->name) == ALG_pipelined_trees && labelled(call, "trees") &&
		    pipelined_sets(L, labelled(call, "trees"), &c) != 0)
			return -1;
		alg_call_options(L->a, &c, call); /* sema checked the values */
		s = alg_build(&c, &missing);
		if (missing)
			return 1;
	} else {
		const char *names[NALG];
		Sched *cand[NALG];
		int n = alg_auto(&c, cand, names, NALG);
		double best = 0;
		for (int i = 0; i < n; i++) {
			Metrics m;
			metrics(cand[i], L->p->auto_size, &m);
			if (!s || m.model_time < best) {
				s = cand[i];
				best = m.model_time;
			}
		}
		if (!s) {
			error_at(L->diag, alg->loc, "auto: no algorithm of the library applies to '%s'", d->name);
			return -1;
		}
		s->algorithm = arena_printf(L->a, "auto:%s", s->algorithm);
		s->size_chosen = true; /* the pick itself is the cost model's for auto_size */
	}
	if (!s)
		return -1;
	add_sched(L, s);
	return 0;
}

/* `schedule symmetric(group G, roots ...)`: the built group and the roots;
 * -1 when the group failed to build (reported where it is declared). */
static int
user_symmetry(Lowering *L, const Decl *d, const Item *user, UserSymmetry *out)
{
	const Schedule *sch = user->sched;
	for (int i = 0; i < sch->nmod; i++) {
		const Call *m = sch->mod[i];
		if (strcmp(m->name, "symmetric") != 0)
			continue;
		const Arg *g = labelled(m, "group"), *roots = labelled(m, "roots");
		out->group = L->group[decl_index(L, find(L, g->val.v[0]->text))];
		if (!out->group)
			return -1;
		out->loc = m->loc;
		out->nroot = roots->val.n;
		out->root = arena_array(L->a, (size_t)out->nroot, sizeof *out->root);
		for (int k = 0; k < out->nroot; k++)
			out->root[k] = (int)ast_resolve_node(L->diag, d->topo->space, roots->val.v[k], true);
	}
	return 0;
}

/* A collective's `routing`: fastest (route.c) without one. */
static RoutePolicy
routing_policy(const Decl *d)
{
	const Item *routing = item_of(d, IT_ROUTING);
	return !routing                                   ? ROUTE_FASTEST
	       : strcmp(routing->name, "dor") == 0           ? ROUTE_DOR
	       : strcmp(routing->name, "shortest_path") == 0 ? ROUTE_ECMP
	                                                     : ROUTE_FASTEST;
}

/* `symmetric(trees ..., group G[, segments S | auto])`: the trees
 * symmetrized by the group (symm.c), each in S segments (auto: chosen for
 * Prog.auto_size); 0, or -1 after a located error. */
static int
lower_symmetric(Lowering *L, const Decl *d, CollKind kind, const Topo *t, Routes *routes,
                const int *rank_node, int nrank, const Item *alg)
{
	const Arg *trees = labelled(alg->call, "trees");
	const Arg *group = labelled(alg->call, "group");
	Group *g = L->group[decl_index(L, find(L, group->val.v[0]->text))];
	int ntree = 0, cap = 0;
	for (int i = 0; i < trees->val.n; i++)
		cap += L->trees[decl_index(L, find(L, trees->val.v[i]->text))].n;
	Tree **list = arena_array(L->a, (size_t)cap + 1, sizeof *list);
	int rc = g ? 0 : -1;
	for (int i = 0; i < trees->val.n && rc == 0; i++) {
		const TreeSet *set = &L->trees[decl_index(L, find(L, trees->val.v[i]->text))];
		if (set->n == 0 && !set->disjoint)
			rc = -1; /* its error was reported where it was declared */
		else if (set->n == 0) {
			error_at(L->diag, trees->val.v[i]->loc, "symmetric takes bfs, khop, windmill, forest, "
			         "balanced_pair or explicit trees; '%s' is a set of disjoint trees "
			         "(for pipelined_trees)", trees->val.v[i]->text);
			rc = -1;
		}
		for (int k = 0; k < set->n; k++)
			list[ntree++] = set->tree[k];
	}
	Sched *s = NULL;
	const Arg *seg = labelled(alg->call, "segments");
	/* `segments auto`: the one word sema lets it take; its S is per size */
	bool seg_auto = seg && seg->val.v[0]->kind == EX_NAME;
	int S = seg && !seg_auto ? int_of(L->diag, seg->val.v[0]) : 1; /* sema checked its range */
	if (rc == 0 && g)
		rc = check_symmetric_size(L->diag, alg->loc, d->name, ntree, g->order);
	if (rc == 0 && g && S > 1)
		rc = check_symmetric_segments(L->diag, seg->loc, d->name, ntree, S, g->order,
		                              symmetric_base_count(kind, list, ntree, t->nnode));
	if (rc == 0) {
		s = sched_new(L->a, d->name, d->loc, kind, alg_forms[ALG_symmetric].name, t, rank_node,
		              nrank);
		for (int i = 0; i < ntree && rc == 0; i++)
			rc = check_span(L->diag, s, list[i], list[i]->name, trees->loc);
		if (rc == 0)
			rc = group_keeps_ranks(L->diag, s, g, group->loc);
	}
	if (rc == 0) {
		s = seg_auto ? symmetrize_auto(L->diag, L->a, d->name, d->loc, kind, t, routes, list,
		                               ntree, g, rank_node, nrank, L->p->auto_size)
		             : symmetrize(L->diag, L->a, d->name, d->loc, kind, t, routes, list, ntree, S,
		                          g, rank_node, nrank);
		S = s->segments > 1 ? s->segments : 1;
		const Item *chunks = item_of(d, IT_CHUNKS);
		if (chunks && !chunks->flag && int_of(L->diag, chunks->value) != s->nchunk) {
			error_at(L->diag, chunks->value->loc, "symmetric cuts the vector into %d chunks (%d "
			         "tree%s x %sa group of order %d); chunks %d is not that", s->nchunk,
			         ntree, ntree == 1 ? "" : "s",
			         S > 1 ? arena_printf(L->a, "%d segments x ", S) : "", g->order,
			         int_of(L->diag, chunks->value));
			rc = -1;
		} else {
			add_sched(L, s);
		}
	}
	return rc;
}

static int
lower_collective(Lowering *L, const Decl *d)
{
	int ti = decl_index(L, d->topo);
	const Topo *t = L->topo[ti];
	CollKind kind = CK_ALLREDUCE;
	for (int k = 0; k < NCOLLKIND; k++)
		if (strcmp(coll_kind_name[k], d->ckind) == 0)
			kind = (CollKind)k;
	const Item *routing = item_of(d, IT_ROUTING);
	RoutePolicy policy = routing_policy(d);
	if (policy == ROUTE_DOR && !grid_topology(t)) {
		error_at(L->diag, routing->name_loc, "dor routing needs a torus, ring, mesh, supermesh or hyperx; "
		         "'%s' is %s", t->name, topo_kind_name(t->kind));
		return -1;
	}
	Routes *routes = routes_for(L, d->topo, policy);
	/* the communicator: listed ranks in order, or every rank in id order */
	const Item *ranks = item_of(d, IT_RANKS);
	int *rank_node = xmalloc((size_t)t->nnode * sizeof *rank_node);
	int nrank = 0;
	if (ranks && !ranks->flag) {
		int64_t *order = xmalloc((size_t)t->nnode * sizeof *order);
		unsigned char *member = xcalloc((size_t)t->nnode, 1);
		nrank = (int)ast_expand_ranks(L->diag, d->topo->space, &ranks->list, order, member);
		for (int i = 0; i < nrank; i++)
			rank_node[i] = (int)order[i];
		free(order);
		free(member);
	} else {
		for (int v = 0; v < t->nnode; v++)
			if (!(t->is_switch && t->is_switch[v]))
				rank_node[nrank++] = v;
	}
	int from, to;
	if (routes_split(routes, rank_node, nrank, &from, &to)) {
		error_at(L->diag, d->loc, "in '%s', rank %d (node %d) has no route to rank %d (node %d): every "
		         "rank of a collective must reach every other", t->name, from, rank_node[from],
		         to, rank_node[to]);
		free(rank_node);
		return -1;
	}
	const Item *alg = item_of(d, IT_ALGORITHM), *user = item_of(d, IT_SCHEDULE);
	if (user) { /* the user's own schedule (usersched.c) */
		AlgCtx c = alg_ctx(L, d, kind, t, routes, rank_node, nrank, d->loc);
		UserSymmetry sym = {0};
		Sched *s = NULL;
		if (user_symmetry(L, d, user, &sym) == 0)
			s = usersched_build(&c, user, sym.group ? &sym : NULL);
		if (s)
			add_sched(L, s);
		free(rank_node);
		return s ? 0 : -1;
	}
	int rc = 1; /* 1: no generator for this algorithm in this version */
	if (!alg->flag && alg_find(alg->call->name) == ALG_symmetric)
		rc = lower_symmetric(L, d, kind, t, routes, rank_node, nrank, alg);
	if (alg->flag || alg_find(alg->call->name) != ALG_symmetric)
		rc = lower_library(L, d, kind, t, routes, rank_node, nrank, alg);
	free(rank_node);
	return rc;
}

bool
auto_may_take(const Sched *s, const Sched *o)
{
	return o != s && o->group && strcmp(o->algorithm, "symmetric") == 0 && o->kind == s->kind &&
	       o->topo == s->topo && o->nrank == s->nrank && o->root == s->root &&
	       o->routing == s->routing &&
	       memcmp(o->rank_node, s->rank_node, (size_t)s->nrank * sizeof *s->rank_node) == 0;
}

/* `auto` also weighs the file's own `symmetric` schedules of its kind on
 * its ranks (SP, which needs the file's trees and group): where the model
 * prefers one, auto's schedule is that one under auto's name (tune
 * chooses among the same, by the simulator). */
static void
auto_weighs_symmetric(Lowering *L)
{
	Prog *p = L->p;
	for (int i = 0; i < p->nsched; i++) {
		Sched *s = p->sched[i];
		if (strncmp(s->algorithm, "auto:", 5) != 0)
			continue;
		Metrics m;
		metrics(s, p->auto_size, &m);
		double best = m.model_time;
		for (int j = 0; j < p->nsched; j++) {
			const Sched *o = p->sched[j];
			if (!auto_may_take(s, o))
				continue;
			metrics(o, p->auto_size, &m);
			if (m.model_time < best) {
				Sched *x = arena_array(L->a, 1, sizeof *x);
				*x = *o;
				x->name = s->name;
				x->loc = s->loc;
				x->algorithm = "auto:symmetric";
				x->size_chosen = true;
				p->sched[i] = x;
				best = m.model_time;
			}
		}
	}
}

int
lower(Diag *dg, const File *f, Prog *p)
{
	Lowering L = {.diag = dg, .p = p, .a = &p->arena, .f = f, .net = net_defaults};
	size_t n = (size_t)f->ndecl + 1;
	L.topo = arena_array(L.a, n, sizeof *L.topo);
	L.group = arena_array(L.a, n, sizeof *L.group);
	L.gens = arena_array(L.a, n, sizeof *L.gens);
	L.trees = arena_array(L.a, n, sizeof *L.trees);
	L.routes = arena_array(L.a, NROUTE_POLICY * n, sizeof *L.routes);
	L.form_group = arena_array(L.a, n, sizeof *L.form_group);
	L.form_group_tried = arena_array(L.a, n, sizeof *L.form_group_tried);
	int errors = nerrors(dg);
	p->nskipped = 0;
	/* the network block is file-wide, wherever it stands */
	for (int i = 0; i < f->ndecl; i++)
		if (f->decl[i].kind == DC_NETWORK)
			apply_params(&L.net, f->decl[i].body);
	for (int i = 0; i < f->ndecl; i++) {
		const Decl *d = &f->decl[i];
		char what[160];
		snprintf(what, sizeof what, "'%s'", d->name ? d->name : "network");
		diag_building(dg, d->loc, what); /* named if memory runs out */
		switch (d->kind) {
		case DC_NETWORK:
		case DC_PARAM: /* params.c put its value where it is used */
			break;
		case DC_TOPOLOGY:
			if (lower_topology(&L, d) != 0)
				return -1; /* too large to build: what uses it cannot be built either */
			break;
		case DC_GROUP:
			lower_group(&L, d);
			break;
		case DC_TREE:
		case DC_TREES:
			lower_tree(&L, d);
			break;
		case DC_COLLECTIVE: {
			int first = p->nsched;
			if (lower_collective(&L, d) == 1) {
				p->skipped = xrealloc(p->skipped, (size_t)(p->nskipped + 1) * sizeof *p->skipped);
				p->skipped[p->nskipped++] = d;
			}
			/* what sim, tune and sweep build its other candidates with */
			for (int k = first; k < p->nsched; k++) {
				p->sched[k]->routing = routing_policy(d);
				p->sched[k]->pack_group = file_group(&L, d, p->sched[k]->topo);
			}
			break;
		}
		}
	}
	auto_weighs_symmetric(&L);
	diag_built(dg);
	p->routes = L.routes;
	p->nroutes = NROUTE_POLICY * (int)n;
	return nerrors(dg) > errors ? -1 : 0;
}

void
prog_free(Prog *p)
{
	for (int i = 0; i < p->nroutes; i++)
		if (p->routes && p->routes[i])
			routes_free(p->routes[i]);
	free(p->sched);
	free(p->skipped);
	free(p->topo);
	arena_free(&p->arena);
	memset(p, 0, sizeof *p);
}
