/*
 * sema.c: the checks that need no topology built. Names are defined once and
 * used after their definition; every form and algorithm gets the arguments
 * its signature asks for; quantities have the unit kind their field takes;
 * node references lie inside their topology (whose shape follows from the
 * form's arguments alone); explicit trees span and have no cycle.
 * Everything found is reported; the driver stops if anything was.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "hash.h"


/* ---- what a name denotes ---- */

typedef enum SymKind { S_TOPOLOGY, S_GROUP, S_TREE, S_TREES, S_COLLECTIVE } SymKind;

static const char *const sym_kind_name[] = {
	[S_TOPOLOGY] = "topology", [S_GROUP] = "group", [S_TREE] = "tree",
	[S_TREES] = "set of trees", [S_COLLECTIVE] = "collective",
};

typedef struct Sym {
	const char *name;
	SymKind kind;
	Decl *decl;
	int topo;              /* S_TOPOLOGY: its shape; others: their topology's symbol, or -1 */
	NodeSpace shape;
} Sym;

typedef struct Sema {
	Diag *diag;  /* where this pass's diagnostics go (the run's, from the driver) */
	Arena arena;  /* freed when sema returns */
	Arena *out;   /* the File's arena: what annotates the tree */
	const File *file; /* being checked: names defined later, for "used before" */
	Sym *sym;
	int nsym, capsym;
	Hash names; /* the symbols by name */
} Sema;

/* ---- signatures: ArgKind, ParamSpec and FormSpec are registry.h's, Bound ast.h's ---- */

#define INT_ANY INT64_MIN, INT64_MAX

static const FormSpec group_forms[] = {
	{"translations", "translations(T)", {{NULL, A_TOPO, 1, 1, 0, 0, NULL}}, 0, 0},
	{"automorphisms", "automorphisms(T)", {{NULL, A_TOPO, 1, 1, 0, 0, NULL}}, 0, 0},
};

/* Trees: `kinds` is 1 for a form that makes one tree, 2 for several. */
static const FormSpec tree_forms[] = {
	{"bfs", "bfs(T, root R)",
	 {{NULL, A_TOPO, 1, 1, 0, 0, NULL}, {"root", A_NODE, 1, 1, 0, 0, NULL}}, 1, 0},
	{"khop", "khop(T, root R, depth K)",
	 {{NULL, A_TOPO, 1, 1, 0, 0, NULL}, {"root", A_NODE, 1, 1, 0, 0, NULL},
	  {"depth", A_INT, 1, 1, 1, MAX_NODES, NULL}}, 1, 0},
	{"windmill", "windmill(H, root R) on a 2D hyperx",
	 {{NULL, A_TOPO, 1, 1, 0, 0, NULL}, {"root", A_NODE, 1, 1, 0, 0, NULL}}, 1, TOPO(TK_HYPERX)},
	{"forest", "forest(T, roots A, B)",
	 {{NULL, A_TOPO, 1, 1, 0, 0, NULL}, {"roots", A_NODE, 2, 2, 0, 0, NULL}}, 1, 0},
	{"balanced_pair", "balanced_pair(T, root R) on a 2D torus",
	 {{NULL, A_TOPO, 1, 1, 0, 0, NULL}, {"root", A_NODE, 1, 1, 0, 0, NULL}}, 2, TOPO(TK_TORUS)},
	{"disjoint", "disjoint(T, roots R1, R2, ...)",
	 {{NULL, A_TOPO, 1, 1, 0, 0, NULL}, {"roots", A_NODE, 1, 0, 0, 0, NULL}}, 2, 0},
};

/* collective kinds, algorithms and network parameters: registry.h's tables */

/* ---- helpers ---- */

/* The first topology form of a TOPO mask (tree forms name one). */
static int
lowest_form(unsigned topos)
{
	int k = 0;
	while (k < NTOPOKIND - 1 && !(topos & TOPO(k)))
		k++;
	return k;
}

static void
unknown_word(Sema *s, Loc loc, const char *what, const char *word,
             const char *const *cand, int ncand, const char *valid)
{
	(void)s;
	const char *near = nearest_name(word, cand, ncand);
	if (near)
		error_at(s->diag, loc, "unknown %s '%s'; did you mean '%s'?", what, word, near);
	else if (valid)
		error_at(s->diag, loc, "unknown %s '%s' (known: %s)", what, word, valid);
	else
		error_at(s->diag, loc, "unknown %s '%s'", what, word);
}

/* The form c names in table t: n entries of `stride` bytes, each starting
 * with its FormSpec (a TopoForm does). Reports an unknown one; -1 then. */
static int
find_form(Sema *s, const Call *c, const void *t, int n, size_t stride, const char *what)
{
	const char **names = arena_array(&s->arena, (size_t)n, sizeof *names);
	const char *list = "";
	for (int i = 0; i < n; i++) {
		names[i] = ((const FormSpec *)(const void *)((const char *)t + (size_t)i * stride))->name;
		if (strcmp(names[i], c->name) == 0)
			return i;
		list = arena_printf(&s->arena, "%s%s%s", list, i ? ", " : "", names[i]);
	}
	unknown_word(s, c->loc, what, c->name, names, n, list);
	return -1;
}

static const FormSpec *
find_spec(Sema *s, const Call *c, const FormSpec *t, int n, const char *what)
{
	int i = find_form(s, c, t, n, sizeof *t, what);
	return i < 0 ? NULL : &t[i];
}

static bool
sym_is(const void *ctx, int i, const void *name)
{
	const Sema *s = ctx;
	return strcmp(s->sym[i].name, name) == 0;
}

static unsigned
sym_hash(const void *ctx, int i)
{
	const Sema *s = ctx;
	return hash_str(s->sym[i].name);
}

static int
find_sym(const Sema *s, const char *name)
{
	return hash_find(&s->names, hash_str(name), name, sym_is, s);
}

/* Names defined anywhere in the file, for "used before definition". */
static const Decl *
find_decl(const File *f, const char *name)
{
	for (int i = 0; i < f->ndecl; i++)
		if (f->decl[i].name && strcmp(f->decl[i].name, name) == 0)
			return &f->decl[i];
	return NULL;
}

/* Resolves a use of `name`; reports unknown, later-defined and wrong-kind names. */
static int
use_sym(Sema *s, const char *name, Loc loc, unsigned want, const char *what)
{
	int i = find_sym(s, name);
	if (i < 0) {
		const Decl *later = find_decl(s->file, name);
		if (later && (later->loc.line > loc.line ||
		              (later->loc.line == loc.line && later->loc.col > loc.col))) {
			error_at(s->diag, loc, "'%s' is used before its definition", name);
			note_at(s->diag, later->name_loc, "'%s' is defined here", name);
			return -1;
		}
		const char **cand = arena_array(&s->arena, (size_t)s->nsym + 1, sizeof *cand);
		int n = 0;
		for (int j = 0; j < s->nsym; j++)
			if (want & (1u << s->sym[j].kind))
				cand[n++] = s->sym[j].name;
		const char *near = nearest_name(name, cand, n);
		if (near)
			error_at(s->diag, loc, "unknown %s '%s'; did you mean '%s'?", what, name, near);
		else
			error_at(s->diag, loc, "unknown %s '%s'", what, name);
		return -1;
	}
	if (!(want & (1u << s->sym[i].kind))) {
		error_at(s->diag, loc, "'%s' is a %s, not a %s", name, sym_kind_name[s->sym[i].kind], what);
		return -1;
	}
	return i;
}

static void
define_sym(Sema *s, Decl *d, SymKind kind, int topo)
{
	int old = find_sym(s, d->name);
	if (old >= 0) {
		error_at(s->diag, d->name_loc, "'%s' is already defined", d->name);
		note_at(s->diag, s->sym[old].decl->name_loc, "the first definition of '%s' is here", d->name);
		return;
	}
	Sym sym = {.name = d->name, .kind = kind, .decl = d, .topo = topo};
	VEC_PUSH(&s->arena, s->sym, s->nsym, s->capsym, sym);
	hash_add(&s->names, hash_str(d->name), s->nsym - 1, sym_hash, s);
	if (kind != S_TOPOLOGY && topo >= 0)
		d->topo = s->sym[topo].decl;
}

static const NodeSpace *
topo_shape(const Sema *s, int topo)
{
	if (topo < 0 || !s->sym[topo].shape.ok)
		return NULL;
	return &s->sym[topo].shape;
}

/* Binds a call's arguments to a signature and checks each value (bind.c). */
static bool
bind_call(Sema *s, const Call *c, const FormSpec *f, const NodeSpace *ctx, Bound *out)
{
	return ast_bind_check(s->diag, &s->arena, c, f, ctx, out);
}

/* The first positional topology argument, resolved: the context of node references. */
static int
call_topology(Sema *s, const Call *c)
{
	if (c->narg == 0 || c->arg[0].label || c->arg[0].val.v[0]->kind != EX_NAME)
		return -1;
	const Expr *e = c->arg[0].val.v[0];
	return use_sym(s, e->text, e->loc, 1u << S_TOPOLOGY, "topology");
}

/* ---- network blocks ---- */

static bool
check_quantity(Diag *dg, const Item *it, const NetParam *pi)
{
	const Expr *e = it->value;
	bool neg = false;
	if (e->kind == EX_NEG) {
		neg = true;
		e = e->lhs;
	}
	if (e->kind != EX_INT && e->kind != EX_REAL) {
		error_at(dg, it->value->loc, "'%s' takes %s", pi->name, qty_kind_name(pi->kind));
		return false;
	}
	QtyKind k = expr_qty(e);
	double v = expr_number(e);
	if (k != pi->kind && !(k == Q_COUNT && v == 0) && !(pi->kind == Q_PACKETS && k == Q_SIZE)) {
		error_at(dg, e->loc, "'%s' takes %s, got %s", pi->name, qty_kind_name(pi->kind),
		         qty_kind_name(k));
		return false;
	}
	if (neg && v != 0) {
		error_at(dg, it->value->loc, "'%s' must not be negative", pi->name);
		return false;
	}
	if (pi->positive && v <= 0) {
		error_at(dg, e->loc, "'%s' must be greater than zero", pi->name);
		return false;
	}
	if ((k == Q_SIZE || k == Q_PACKETS) && v != floor(v)) {
		error_at(dg, e->loc, "'%s' must be a whole number of %s", pi->name,
		         k == Q_SIZE ? "bytes" : "packets");
		return false;
	}
	return true;
}

/* switching = cut_through | store_and_forward (docs/sim.md 2.1) */
static void
check_switching(Diag *dg, const Item *it)
{
	const Expr *e = it->value;
	if (e->kind != EX_NAME || (strcmp(e->text, "cut_through") != 0 &&
	                           strcmp(e->text, "store_and_forward") != 0))
		error_at(dg, e->loc, "'switching' is cut_through or store_and_forward");
}

/* switch_reduction = none | nvls | sharp | nvls_sharp (docs/gpu-clusters.md) */
static void
check_reduction(Diag *dg, const Item *it)
{
	const Expr *e = it->value;
	if (e->kind != EX_NAME || switch_reduction_find(e->text) < 0)
		error_at(dg, e->loc, "'switch_reduction' is none, nvls, sharp or nvls_sharp");
}

static void
check_params(Sema *s, const Block *b, bool per_link)
{
	const char **names = arena_array(&s->arena, (size_t)nnet_params, sizeof *names);
	for (int i = 0; i < nnet_params; i++)
		names[i] = net_params[i].name;
	for (int i = 0; i < b->nitem; i++) {
		const Item *it = &b->item[i];
		if (it->kind != IT_PARAM) {
			error_at(s->diag, it->loc, "only 'name = value;' parameters belong in a %s",
			         per_link ? "link's block" : "network block");
			continue;
		}
		const NetParam *pi = net_param_find(it->name);
		if (!pi) {
			unknown_word(s, it->name_loc, "network parameter", it->name, names, nnet_params,
			             NULL);
			continue;
		}
		if (per_link && !pi->per_link) {
			error_at(s->diag, it->name_loc, "'%s' cannot be set per link (per link: link_bandwidth, "
			                       "link_latency, energy_per_bit)", it->name);
			continue;
		}
		for (int j = 0; j < i; j++)
			if (b->item[j].kind == IT_PARAM && strcmp(b->item[j].name, it->name) == 0) {
				error_at(s->diag, it->name_loc, "'%s' is set twice", it->name);
				note_at(s->diag, b->item[j].name_loc, "first set here");
				break;
			}
		if (pi->value == NV_SWITCHING)
			check_switching(s->diag, it);
		else if (pi->value == NV_REDUCTION)
			check_reduction(s->diag, it);
		else
			check_quantity(s->diag, it, pi);
	}
}

/* ---- topologies ---- */

static const char *
item_word(ItemKind k)
{
	switch (k) {
	case IT_PARAM: return "a parameter";
	case IT_NETWORK: return "'network'";
	case IT_NODES: return "'nodes'";
	case IT_SWITCHES: return "'switches'";
	case IT_LINK: return "'link'";
	case IT_TRANSLATE: return "'translate'";
	case IT_MAP: return "'map'";
	case IT_INCLUDE: return "'include'";
	case IT_EDGE: return "a tree edge";
	case IT_ALGORITHM: return "'algorithm'";
	case IT_CHUNKS: return "'chunks'";
	case IT_ROUTING: return "'routing'";
	case IT_RANKS: return "'ranks'";
	case IT_ROOT: return "'root'";
	case IT_SCHEDULE: return "'schedule'";
	}
	return "?";
}

static void
check_graph_body(Sema *s, Decl *d, NodeSpace *sh)
{
	const Item *nodes = NULL;
	for (int i = 0; i < d->body->nitem; i++) {
		const Item *it = &d->body->item[i];
		if (it->kind != IT_NODES)
			continue;
		if (nodes) {
			error_at(s->diag, it->loc, "'nodes' is given twice");
			note_at(s->diag, nodes->loc, "first given here");
			continue;
		}
		nodes = it;
		int64_t n;
		if (ast_eval_int(s->diag, it->value, &n, true)) {
			if (n < 2 || n > MAX_NODES)
				error_at(s->diag, it->value->loc, "a graph has 2..%d nodes, got %lld", MAX_NODES,
				         (long long)n);
			else {
				sh->nodes = sh->ranks = n;
				sh->ok = true;
			}
		}
	}
	if (!nodes) {
		error_at(s->diag, d->form->loc, "a graph needs 'nodes N;'");
		return;
	}
	if (!sh->ok)
		return;
	for (int i = 0; i < d->body->nitem; i++) {
		const Item *it = &d->body->item[i];
		if (it->kind == IT_SWITCHES) {
			if (!sh->is_switch)
				sh->is_switch = arena_alloc(s->out, (size_t)sh->nodes);
			for (int j = 0; j < it->list.n; j++) {
				const Expr *e = it->list.v[j];
				int64_t lo, hi;
				if (e->kind == EX_RANGE) {
					lo = ast_resolve_node(s->diag, sh, e->lhs, false);
					hi = ast_resolve_node(s->diag, sh, e->rhs, false);
				} else {
					lo = hi = ast_resolve_node(s->diag, sh, e, false);
				}
				if (lo < 0 || hi < 0)
					continue;
				if (lo > hi)
					error_at(s->diag, e->loc, "empty range %lld..%lld", (long long)lo, (long long)hi);
				for (int64_t v = lo; v <= hi; v++) {
					if (!sh->is_switch[v])
						sh->ranks--;
					sh->is_switch[v] = 1;
				}
			}
		}
	}
	if (sh->ranks < 1)
		error_at(s->diag, d->form->loc, "every node of this graph is a switch: it has no ranks");
	for (int i = 0; i < d->body->nitem; i++) {
		const Item *it = &d->body->item[i];
		if (it->kind != IT_LINK)
			continue;
		int64_t a = ast_resolve_node(s->diag, sh, it->from, false);
		int64_t b = ast_resolve_node(s->diag, sh, it->to, false);
		if (a >= 0 && a == b)
			error_at(s->diag, it->to->loc, "link from node %lld to itself", (long long)a);
		if (it->body)
			check_params(s, it->body, true);
	}
}

/* A topology source (nccl_topo("box.xml")): a graph of the box boxes.c
 * read, its GPUs the ranks 0..gpus-1 and every other node a switch. */
static void
check_source(Sema *s, Decl *d, const FormSpec *f, NodeSpace *sh)
{
	Bound b[MAX_PARAMS];
	const Call *c = d->form;
	if (!bind_call(s, c, f, NULL, b) || c->box_failed)
		return;
	if (!c->box) { /* a caller that did not run check_file (every command does) */
		error_at(s->diag, c->loc, "%s: the file was not read (collc's commands read it)", f->name);
		return;
	}
	sh->kind = TK_GRAPH;
	sh->form = f->name;
	sh->nodes = c->box_nodes;
	sh->ranks = c->box_gpus;
	sh->is_switch = arena_alloc(s->out, (size_t)sh->nodes);
	memset(sh->is_switch + sh->ranks, 1, (size_t)(sh->nodes - sh->ranks));
	sh->ok = true;
}

/* An integer a box gives, as if written at loc. */
static Bound
box_value(Sema *s, Loc loc, int64_t v)
{
	Expr *e = NEW(s->out, Expr);
	*e = (Expr){.kind = EX_INT, .loc = loc, .ival = v, .unit = -1};
	Expr **one = NEW(s->out, Expr *);
	*one = e;
	return (Bound){one, 1, loc};
}

/* The integers a box gives for a list parameter (xgmi_rails' links). */
static Bound
box_list(Sema *s, Loc loc, const int *v, int n)
{
	Expr **all = arena_array(s->out, (size_t)n, sizeof *all);
	for (int i = 0; i < n; i++) {
		all[i] = NEW(s->out, Expr);
		*all[i] = (Expr){.kind = EX_INT, .loc = loc, .ival = v[i], .unit = -1};
	}
	return (Bound){all, n, loc};
}

/* A cluster form's `box` (TR_BOX): the values it gives (boxes.c read them)
 * in place of gpus, nics and pcie_gbps, and of nic_gbps unless written;
 * without one, gpus and nic_gbps are needed. False after an error. */
static bool
box_values(Sema *s, const Call *c, const TopoForm *tf, Bound *b)
{
	int box = -1;
	for (int i = 0; i < MAX_PARAMS; i++)
		box = tf->role[i] == TR_BOX ? i : box;
	if (box < 0)
		return true;
	bool ok = true;
	for (int i = 0; i < MAX_PARAMS && tf->form.param[i].kind != A_END; i++) {
		const ParamSpec *ps = &tf->form.param[i];
		bool given = ps->min == 0 && ps->kind == A_INT && tf->role[i] != TR_NICS &&
		             tf->role[i] != TR_NIC_LINK; /* gpus, nic_gbps, links: the box's */
		if (!b[box].n && given && !b[i].n && tf->role[i] != TR_PAIRS) { /* needed without one */
			error_at(s->diag, c->loc, "%s needs '%s' (usage: %s)", tf->form.name, ps->label,
			         tf->form.usage);
			ok = false;
		}
		if (b[box].n && b[i].n && i != box && (tf->role[i] == TR_NICS ||
		                                       tf->role[i] == TR_NIC_LINK ||
		                                       (given && tf->role[i] != TR_VARIANT))) {
			error_at(s->diag, b[i].loc, "%s: the box gives '%s' (nccl_topo's file says it)",
			         tf->form.name, ps->label);
			ok = false;
		}
	}
	if (!ok || !b[box].n)
		return ok;
	if (c->box_failed)
		return false; /* boxes.c said why */
	if (!c->box) {
		error_at(s->diag, b[box].loc, "%s: the file was not read (collc's commands read it)",
		         b[box].v[0]->text);
		return false;
	}
	Loc at = b[box].v[0]->loc;
	bool nic_nodes = false; /* a form without shared NICs: each NIC is its GPU's link */
	for (int i = 0; i < MAX_PARAMS; i++)
		nic_nodes |= tf->role[i] == TR_NICS;
	if (!nic_nodes && c->box_nics != c->box_gpus) {
		error_at(s->diag, at, "%s: the box's %d GPUs share %d NIC%s; this form cables one NIC per "
		         "GPU to the next box, so it takes a box with a NIC per GPU "
		         "(docs/gpu-clusters.md, \"A box from NCCL's topology file\")", tf->form.name,
		         c->box_gpus, c->box_nics, c->box_nics == 1 ? "" : "s");
		return false;
	}
	/* without NIC nodes a NIC's link is its GPU's whole path out: the PCIe
	 * path to the NIC limits it where it is narrower */
	int nic_gbps = nic_nodes || c->box_nic_gbps < c->box_pcie_gbps ? c->box_nic_gbps
	                                                              : c->box_pcie_gbps;
	for (int i = 0; i < MAX_PARAMS; i++) {
		TopoRole r = (TopoRole)tf->role[i];
		if (r == TR_PAIRS && c->box_pairs)
			b[i] = box_list(s, at, c->box_pairs, c->box_gpus * (c->box_gpus - 1) / 2);
		else if (r == TR_PAIRS)
			continue;
		else if (r == TR_NICS)
			b[i] = box_value(s, at, c->box_nics);
		else if (r == TR_NIC_LINK)
			b[i] = box_value(s, at, c->box_pcie_gbps);
		else if (r == TR_VARIANT && !b[i].n)
			b[i] = box_value(s, at, nic_gbps);
		else if (tf->form.param[i].kind == A_INT && tf->form.param[i].min == 0 && !b[i].n)
			b[i] = box_value(s, at, c->box_gpus); /* gpus */
	}
	return true;
}

static void
check_topology(Sema *s, Decl *d)
{
	NodeSpace sh = {0};
	int src = topo_source_find(d->form->name);
	int k = src >= 0 ? TK_GRAPH
	                 : find_form(s, d->form, topo_forms, NTOPOKIND, sizeof *topo_forms, "topology form");
	const TopoForm *tf = k >= 0 ? &topo_forms[k] : NULL;
	Bound b[MAX_PARAMS];
	if (src >= 0) {
		check_source(s, d, &topo_sources[src], &sh);
		tf = NULL; /* its block takes a network block only, as a form's */
	} else if (tf && tf->block) {
		sh.kind = (TopoKind)k;
		sh.form = tf->form.name;
		if (d->form->narg > 0)
			error_at(s->diag, d->form->arg[0].loc, "%s takes no arguments; give its nodes and links in a "
			         "block", sh.form);
		else if (!d->body)
			error_at(s->diag, d->form->loc, "a %s needs a block: %s { nodes N; link a -> b; }", sh.form,
			         sh.form);
		else
			check_graph_body(s, d, &sh);
	} else if (tf && bind_call(s, d->form, &tf->form, NULL, b) && box_values(s, d->form, tf, b)) {
		ast_topo_space(s->diag, s->out, (TopoKind)k, b, &sh);
	}
	if (d->body) {
		bool graph = tf && tf->block;
		int networks = 0;
		for (int i = 0; i < d->body->nitem; i++) {
			const Item *it = &d->body->item[i];
			if (it->kind == IT_NETWORK) {
				if (networks++)
					error_at(s->diag, it->loc, "a topology has one network block");
				check_params(s, it->body, false);
			} else if (!(graph && (it->kind == IT_NODES || it->kind == IT_SWITCHES ||
			                       it->kind == IT_LINK))) {
				if (graph || (!tf && src < 0))
					error_at(s->diag, it->loc, "%s does not belong in a topology block",
					         item_word(it->kind));
				else
					error_at(s->diag, it->loc, "%s belongs only in a graph topology; %s's block "
					         "takes only 'network { ... }'", item_word(it->kind), d->form->name);
			}
		}
	}
	define_sym(s, d, S_TOPOLOGY, -1);
	if (s->nsym > 0 && s->sym[s->nsym - 1].decl == d) {
		s->sym[s->nsym - 1].shape = sh;
		s->sym[s->nsym - 1].topo = s->nsym - 1;
		if (sh.ok) {
			d->space = NEW(s->out, NodeSpace);
			*d->space = sh;
		}
	}
}

/* ---- groups ---- */

/* An affine coordinate expression: integers, the map's variables, + - and
 * multiplication by a constant. */
static bool
check_affine(Diag *dg, const Expr *e, const Expr *vars)
{
	int64_t v;
	switch (e->kind) {
	case EX_INT:
		return ast_eval_int(dg, e, &v, true);
	case EX_NAME:
		for (int i = 0; i < vars->nelem; i++)
			if (strcmp(vars->elem[i]->text, e->text) == 0)
				return true;
		error_at(dg, e->loc, "'%s' is not a coordinate of this map", e->text);
		return false;
	case EX_TUPLE:
		if (e->nelem == 1)
			return check_affine(dg, e->elem[0], vars);
		error_at(dg, e->loc, "expected a coordinate expression");
		return false;
	case EX_NEG:
		return check_affine(dg, e->lhs, vars);
	case EX_ADD:
	case EX_SUB:
	{
		bool left = check_affine(dg, e->lhs, vars); /* both sides report */
		bool right = check_affine(dg, e->rhs, vars);
		return left && right;
	}
	case EX_MUL:
		if (ast_eval_int(dg, e->lhs, &v, false))
			return check_affine(dg, e->rhs, vars);
		if (ast_eval_int(dg, e->rhs, &v, false))
			return check_affine(dg, e->lhs, vars);
		error_at(dg, e->loc, "a map is affine: multiply coordinates by constants only");
		return false;
	default:
		error_at(dg, e->loc, "expected a coordinate expression");
		return false;
	}
}

static bool
is_var_tuple(const Expr *e)
{
	if (e->kind == EX_NAME)
		return true;
	if (e->kind != EX_TUPLE)
		return false;
	for (int i = 0; i < e->nelem; i++)
		if (e->elem[i]->kind != EX_NAME)
			return false;
	return true;
}

static void
check_map(Sema *s, const Item *it, const NodeSpace *sh)
{
	const Expr *from = it->list.v[0];
	if (is_var_tuple(from)) {
		if (it->list.n > 2) {
			error_at(s->diag, it->list.v[2]->loc, "an affine map has one pair: map (x, y) -> (...)");
			return;
		}
		Expr one = {.kind = EX_TUPLE, .loc = from->loc, .elem = (Expr **)&it->list.v[0], .nelem = 1};
		const Expr *vars = from->kind == EX_TUPLE ? from : &one;
		if (sh && sh->ndim == 0) {
			error_at(s->diag, from->loc, "nodes of a graph have no coordinates; map node ids: "
			                    "map 0 -> 1, 1 -> 0;");
			return;
		}
		if (sh && vars->nelem != sh->ndim) {
			error_at(s->diag, from->loc, "this map has %d coordinates; the topology has %d",
			         vars->nelem, sh->ndim);
			return;
		}
		for (int i = 0; i < vars->nelem; i++)
			for (int j = 0; j < i; j++)
				if (strcmp(vars->elem[i]->text, vars->elem[j]->text) == 0)
					error_at(s->diag, vars->elem[i]->loc, "coordinate '%s' is named twice",
					         vars->elem[i]->text);
		const Expr *to = it->list.v[1];
		int nto = to->kind == EX_TUPLE ? to->nelem : 1;
		if (nto != vars->nelem) {
			error_at(s->diag, to->loc, "the image has %d coordinates; the map takes %d", nto,
			         vars->nelem);
			return;
		}
		if (to->kind == EX_TUPLE && to->nelem > 1) {
			for (int i = 0; i < to->nelem; i++)
				check_affine(s->diag, to->elem[i], vars);
		} else {
			check_affine(s->diag, to, vars);
		}
		return;
	}
	/* a permutation of nodes: every node given is mapped once and hit once */
	if (!sh)
		return;
	(void)s;
	unsigned char *seen_from = xcalloc((size_t)sh->nodes, 1);
	unsigned char *seen_to = xcalloc((size_t)sh->nodes, 1);
	int errors = nerrors(s->diag);
	for (int i = 0; i + 1 < it->list.n; i += 2) {
		int64_t a = ast_resolve_node(s->diag, sh, it->list.v[i], false);
		int64_t b = ast_resolve_node(s->diag, sh, it->list.v[i + 1], false);
		if (a >= 0 && seen_from[a]++)
			error_at(s->diag, it->list.v[i]->loc, "node %lld is mapped twice", (long long)a);
		if (b >= 0 && seen_to[b]++)
			error_at(s->diag, it->list.v[i + 1]->loc, "two nodes map to node %lld", (long long)b);
	}
	/* nodes not listed stay put, so the listed ones must permute among themselves */
	for (int i = 1; i < it->list.n && nerrors(s->diag) == errors; i += 2) {
		int64_t b = ast_resolve_node(s->diag, sh, it->list.v[i], false);
		if (b >= 0 && !seen_from[b]) /* a node outside the topology is reported below */
			error_at(s->diag, it->list.v[i]->loc, "node %lld is a target but is not mapped itself: "
			         "this map is not a permutation (say where %lld goes)", (long long)b,
			         (long long)b);
	}
	free(seen_from);
	free(seen_to);
}

static void
check_group(Sema *s, Decl *d)
{
	int topo = -1;
	if (d->form) {
		const FormSpec *f = find_spec(s, d->form, group_forms, (int)countof(group_forms),
		                              "group form");
		if (f) {
			Bound b[MAX_PARAMS];
			if (bind_call(s, d->form, f, NULL, b)) {
				topo = use_sym(s, b[0].v[0]->text, b[0].v[0]->loc, 1u << S_TOPOLOGY, "topology");
				const NodeSpace *sh = topo_shape(s, topo);
				char forms[256];
				topo_forms_with_translations(forms, sizeof forms);
				if (sh && strcmp(f->name, "translations") == 0 && !sh->translations)
					error_at(s->diag, d->form->loc, "%s has no translation group (translations exist on "
					         "%s)", sh->form, forms);
			}
		}
	} else {
		topo = use_sym(s, d->on, d->on_loc, 1u << S_TOPOLOGY, "topology");
		const NodeSpace *sh = topo_shape(s, topo);
		for (int i = 0; i < d->body->nitem; i++) {
			const Item *it = &d->body->item[i];
			switch (it->kind) {
			case IT_TRANSLATE:
				if (sh && !sh->translations) {
					char forms[256];
					topo_forms_with_translations(forms, sizeof forms);
					error_at(s->diag, it->loc, "%s has no translations (they exist on %s); use 'map'",
					         sh->form, forms);
					break;
				}
				if (it->value && sh) {
					int n = it->value->kind == EX_TUPLE ? it->value->nelem : 1;
					if (n != sh->ndim) {
						error_at(s->diag, it->value->loc, "a translation of %s has %d coordinates",
						         sh->form, sh->ndim);
						break;
					}
					int64_t v;
					if (n == 1)
						ast_eval_int(s->diag, it->value, &v, true);
					else
						for (int j = 0; j < n; j++)
							ast_eval_int(s->diag, it->value->elem[j], &v, true);
				}
				break;
			case IT_MAP:
				check_map(s, it, sh);
				break;
			case IT_INCLUDE: {
				int g = use_sym(s, it->name, it->name_loc, 1u << S_GROUP, "group");
				if (g >= 0 && topo >= 0 && s->sym[g].topo != topo)
					error_at(s->diag, it->name_loc, "group '%s' acts on '%s', not on '%s'", it->name,
					         s->sym[g].topo >= 0 ? s->sym[s->sym[g].topo].name : "?", d->on);
				break;
			}
			default:
				error_at(s->diag, it->loc, "%s does not belong in a group block (it takes translate, "
				         "map and include)", item_word(it->kind));
				break;
			}
		}
	}
	define_sym(s, d, S_GROUP, topo);
}

/* ---- trees ---- */

static void
check_explicit_tree(Sema *s, Decl *d, int topo)
{
	const NodeSpace *sh = topo_shape(s, topo);
	int64_t root = sh ? ast_resolve_node(s->diag, sh, d->root, true) : -1;
	int64_t *parent = NULL;
	const Item **by = NULL;
	if (sh) {
		parent = arena_array(&s->arena, (size_t)sh->nodes, sizeof *parent);
		by = arena_array(&s->arena, (size_t)sh->nodes, sizeof *by);
		for (int64_t v = 0; v < sh->nodes; v++)
			parent[v] = -1;
	}
	bool ok = sh && root >= 0;
	for (int i = 0; i < d->body->nitem; i++) {
		const Item *it = &d->body->item[i];
		if (it->kind != IT_EDGE) {
			error_at(s->diag, it->loc, "%s does not belong in a tree block (it takes edges: child -> "
			         "parent;)", item_word(it->kind));
			ok = false;
			continue;
		}
		if (!sh)
			continue;
		int64_t c = ast_resolve_node(s->diag, sh, it->from, true);
		int64_t p = ast_resolve_node(s->diag, sh, it->to, true);
		if (c < 0 || p < 0) {
			ok = false;
			continue;
		}
		if (c == p) {
			error_at(s->diag, it->from->loc, "edge from node %lld to itself", (long long)c);
			ok = false;
		} else if (c == root) {
			error_at(s->diag, it->from->loc, "the root has no parent");
			ok = false;
		} else if (parent[c] >= 0) {
			error_at(s->diag, it->from->loc, "node %lld has a second parent", (long long)c);
			note_at(s->diag, by[c]->loc, "its first parent is given here");
			ok = false;
		} else {
			parent[c] = p;
			by[c] = it;
		}
	}
	if (!ok)
		return;
	/* following parents from any node of the tree reaches the root: each node
	 * is walked once (state 1 on the current walk, 2 known to reach the root).
	 * Whether the tree spans is checked where it is used, against the
	 * collective's ranks (a tree may cover a sub-communicator). */
	if (root < 0 || root >= sh->nodes)
		return;
	unsigned char *state = xcalloc((size_t)sh->nodes, 1);
	state[root] = 2;
	for (int64_t v = 0; v < sh->nodes; v++) {
		if (parent[v] < 0)
			continue;
		int64_t u = v;
		while (parent[u] >= 0 && state[u] == 0) {
			state[u] = 1;
			u = parent[u];
		}
		bool cycle = state[u] == 1, stray = state[u] == 0 && u != root;
		for (int64_t w = v; state[w] == 1; w = parent[w])
			state[w] = cycle || stray ? 3 : 2;
		if (cycle) {
			error_at(s->diag, by[u]->loc, "tree '%s' has a cycle through node %lld", d->name,
			         (long long)u);
			break;
		}
		if (stray) {
			error_at(s->diag, d->name_loc, "tree '%s' is not connected: node %lld is a parent but "
			         "has no parent itself, so it does not reach the root", d->name,
			         (long long)u);
			break;
		}
	}
	free(state);
}

static void
check_tree(Sema *s, Decl *d)
{
	int topo = -1;
	SymKind kind = d->kind == DC_TREES ? S_TREES : S_TREE;
	if (d->form) {
		const FormSpec *f = find_spec(s, d->form, tree_forms, (int)countof(tree_forms),
		                              "tree form");
		if (f) {
			topo = call_topology(s, d->form);
			const NodeSpace *sh = topo_shape(s, topo);
			Bound b[MAX_PARAMS];
			bool ok = bind_call(s, d->form, f, sh, b);
			if (f->kinds == 2 && kind == S_TREE)
				error_at(s->diag, d->loc, "%s makes several trees: declare '%s' with 'trees'", f->name,
				         d->name);
			else if (f->kinds == 1 && kind == S_TREES)
				error_at(s->diag, d->loc, "%s makes one tree: declare '%s' with 'tree'", f->name,
				         d->name);
			int form = sh ? (int)sh->kind : -1;
			const char *needs = f->topos ? topo_forms[lowest_form(f->topos)].form.name : NULL;
			if (ok && sh && needs && !(form >= 0 && (f->topos & TOPO(form))))
				error_at(s->diag, d->form->loc, "%s needs a %s topology; '%s' is %s", f->name, needs,
				         s->sym[topo].name, sh->form);
			else if (ok && sh && needs && sh->ndim != 2)
				error_at(s->diag, d->form->loc, "%s needs a two-dimensional %s", f->name, needs);
			if (ok && sh && (strcmp(f->name, "forest") == 0 || strcmp(f->name, "disjoint") == 0)) {
				int ri = f->param[1].label ? 1 : 0;
				for (int i = 0; i < b[ri].n; i++)
					for (int j = 0; j < i; j++)
						if (ast_resolve_node(s->diag, sh, b[ri].v[i], true) == ast_resolve_node(s->diag, sh, b[ri].v[j], true))
							error_at(s->diag, b[ri].v[i]->loc, "root given twice");
			}
		}
	} else {
		topo = use_sym(s, d->on, d->on_loc, 1u << S_TOPOLOGY, "topology");
		check_explicit_tree(s, d, topo);
	}
	define_sym(s, d, kind, topo);
}

/* ---- collectives ---- */

static void
check_algorithm(Sema *s, Decl *d, const Item *it, int kind, int topo)
{
	if (it->flag)
		return; /* auto */
	const FormSpec *f = find_spec(s, it->call, alg_forms, NALG, "algorithm");
	if (!f)
		return;
	AlgId a = (AlgId)(f - alg_forms);
	const NodeSpace *sh = topo_shape(s, topo);
	/* where it applies first (the registry's rule), then its arguments */
	if (kind >= 0 && !alg_implements(a, (CollKind)kind)) {
		char list[128] = "";
		size_t n = 0;
		for (int k = 0; k < NCOLLKIND; k++)
			if (alg_implements(a, (CollKind)k))
				n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "",
				                      coll_kind_name[k]);
		error_at(s->diag, it->call->loc, "%s does not implement %s (it implements %s)", f->name,
		         d->ckind, list);
	}
	int form = sh ? (int)sh->kind : -1;
	if (form >= 0 && !alg_runs_on(a, (TopoKind)form)) {
		char forms[160];
		topo_forms_phrase(f->topos, forms, sizeof forms);
		error_at(s->diag, it->call->loc, "%s runs on %s topology; '%s' is %s", f->name, forms, d->on,
		         sh->form);
	}
	Bound b[MAX_PARAMS];
	if (!bind_call(s, it->call, f, sh, b))
		return;
	for (int i = 0; i < MAX_PARAMS; i++) {
		const ParamSpec *ps = &f->param[i];
		for (int j = 0; j < b[i].n; j++) {
			const Expr *e = b[i].v[j];
			int sym = -1;
			if (ps->kind == A_GROUP)
				sym = use_sym(s, e->text, e->loc, 1u << S_GROUP, "group");
			else if (ps->kind == A_TREES)
				sym = use_sym(s, e->text, e->loc, (1u << S_TREE) | (1u << S_TREES), "tree");
			if (sym >= 0 && topo >= 0 && s->sym[sym].topo >= 0 && s->sym[sym].topo != topo)
				error_at(s->diag, e->loc, "%s '%s' is on topology '%s'; the collective is on '%s'",
				         sym_kind_name[s->sym[sym].kind], e->text,
				         s->sym[s->sym[sym].topo].name, d->on);
		}
	}
}

static void
check_ranks(Diag *dg, const Item *it, const NodeSpace *sh, unsigned char *member)
{
	int errors = nerrors(dg);
	int64_t *order = xmalloc((size_t)sh->nodes * sizeof *order);
	int64_t count = ast_expand_ranks(dg, sh, &it->list, order, member);
	if (count == 1 && nerrors(dg) == errors)
		error_at(dg, it->loc, "a collective needs at least 2 ranks");
	free(order);
}

/* The collective's ranks: those its `ranks` list marks, else its topology's. */
static int64_t
rank_count(const NodeSpace *sh, const unsigned char *member)
{
	if (!member && !sh->is_switch)
		return sh->ranks;
	int64_t n = 0;
	for (int64_t i = 0; i < sh->nodes; i++)
		n += member ? member[i] != 0 : !sh->is_switch[i];
	return n;
}

/* `chunks E`: E may name p, the collective's rank count (`chunks 4 * p;`). */
static void
check_chunks(Sema *s, const Item *it, int64_t ranks)
{
	int64_t v;
	ast_subst_name(it->value, "p", ranks);
	if (ast_eval_int(s->diag, it->value, &v, true) && (v < 1 || v > MAX_CHUNKS))
		error_at(s->diag, it->value->loc, "chunks must be in 1..%d, got %lld", MAX_CHUNKS,
		         (long long)v);
}

/* The group of a symmetric user schedule: declared above, on the collective's topology. */
typedef struct GroupUse {
	Sema *s;
	const Decl *d;
	int topo;
} GroupUse;

static bool
schedule_group_ok(void *ctx, const Expr *e)
{
	GroupUse *u = ctx;
	int sym = use_sym(u->s, e->text, e->loc, 1u << S_GROUP, "group");
	if (sym >= 0 && u->topo >= 0 && u->s->sym[sym].topo >= 0 && u->s->sym[sym].topo != u->topo) {
		error_at(u->s->diag, e->loc, "group '%s' is on topology '%s'; the collective is on '%s'", e->text,
		         u->s->sym[u->s->sym[sym].topo].name, u->d->on);
		return false;
	}
	return sym >= 0;
}

static void
check_collective(Sema *s, Decl *d)
{
	int kind = coll_kind_find(d->ckind);
	if (kind < 0)
		unknown_word(s, d->ckind_loc, "collective", d->ckind, coll_kind_name, NCOLLKIND, NULL);
	int topo = use_sym(s, d->on, d->on_loc, 1u << S_TOPOLOGY, "topology");
	const NodeSpace *sh = topo_shape(s, topo);
	const Block *b = d->body;
	const Item *first[IT_SCHEDULE + 1] = {0};
	unsigned char *member = NULL;
	int64_t root = -1;
	for (int i = 0; i < b->nitem; i++) {
		const Item *it = &b->item[i];
		if (it->kind != IT_ALGORITHM && it->kind != IT_CHUNKS && it->kind != IT_ROUTING &&
		    it->kind != IT_RANKS && it->kind != IT_ROOT && it->kind != IT_SCHEDULE) {
			error_at(s->diag, it->loc, "%s does not belong in a collective block (it takes "
			         "algorithm or schedule, chunks, routing, ranks and root)",
			         item_word(it->kind));
			continue;
		}
		if (first[it->kind]) {
			error_at(s->diag, it->loc, "%s is given twice", item_word(it->kind));
			note_at(s->diag, first[it->kind]->loc, "first given here");
			continue;
		}
		first[it->kind] = it;
		switch (it->kind) {
		case IT_ALGORITHM:
			check_algorithm(s, d, it, kind, topo);
			break;
		case IT_CHUNKS: /* below: `p` is known once the ranks are */
			break;
		case IT_ROUTING:
			if (ast_word_index(it->name, "fastest|shortest_path|dor") < 0) {
				static const char *const policies[] = {"fastest", "shortest_path", "dor"};
				unknown_word(s, it->name_loc, "routing", it->name, policies, 3,
				             "fastest, shortest_path, dor");
			}
			break;
		case IT_RANKS:
			if (!it->flag && sh) {
				member = xcalloc((size_t)sh->nodes, 1);
				check_ranks(s->diag, it, sh, member);
			}
			break;
		case IT_SCHEDULE: {
			GroupUse use = {s, d, topo};
			sema_schedule(s->diag, it, sh, schedule_group_ok, &use);
			break;
		}
		case IT_ROOT:
			if (kind >= 0 && !(KIND(kind) & KINDS_ROOTED))
				error_at(s->diag, it->loc, "%s has no root (only broadcast and reduce do)", d->ckind);
			else if (sh)
				root = ast_resolve_node(s->diag, sh, it->value, true);
			break;
		default:
			break;
		}
	}
	if (!first[IT_ALGORITHM] && !first[IT_SCHEDULE])
		error_at(s->diag, d->name_loc, "collective '%s' needs an algorithm, e.g. 'algorithm ring;'",
		         d->name);
	if (first[IT_ALGORITHM] && first[IT_SCHEDULE]) {
		error_at(s->diag, first[IT_SCHEDULE]->loc, "a collective has an algorithm or a schedule, not both");
		note_at(s->diag, first[IT_ALGORITHM]->loc, "the algorithm is here");
	}
	if (first[IT_CHUNKS] && !first[IT_CHUNKS]->flag && sh)
		check_chunks(s, first[IT_CHUNKS], rank_count(sh, member));
	if (sh && !member && sh->ranks < 2)
		error_at(s->diag, d->name_loc, "a collective needs at least 2 ranks");
	if (root >= 0 && member && !member[root])
		error_at(s->diag, first[IT_ROOT]->value->loc, "the root must be one of the collective's ranks");
	free(member);
	define_sym(s, d, S_COLLECTIVE, topo);
}

int
sema(Diag *dg, File *f)
{
	int before = nerrors(dg);
	Sema s = {.diag = dg, .out = f->arena, .file = f};
	int networks = 0, unknown;
	if (!f->params_done && params_apply(dg, f, NULL, &unknown) != 0)
		return nerrors(dg) - before;
	for (int i = 0; i < f->ndecl; i++) {
		Decl *d = &f->decl[i];
		switch (d->kind) {
		case DC_NETWORK:
			if (networks++) {
				error_at(dg, d->loc, "a file has one network block");
				for (int j = 0; j < i; j++)
					if (f->decl[j].kind == DC_NETWORK) {
						note_at(dg, f->decl[j].loc, "the first one is here");
						break;
					}
			}
			check_params(&s, d->body, false);
			break;
		case DC_TOPOLOGY:
			check_topology(&s, d);
			break;
		case DC_GROUP:
			check_group(&s, d);
			break;
		case DC_TREE:
		case DC_TREES:
			check_tree(&s, d);
			break;
		case DC_COLLECTIVE:
			check_collective(&s, d);
			break;
		case DC_PARAM: /* params.c evaluated it */
			break;
		}
	}
	arena_free(&s.arena);
	hash_free(&s.names);
	return nerrors(dg) - before;
}
