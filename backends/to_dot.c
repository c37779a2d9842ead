/*
 * to_dot.c: Graphviz DOT of a topology with its trees drawn over it, for
 * teaching. Nodes of 2D topologies are pinned at their coordinates, and
 * those of 3D tori as a row of 2D slices (render with `neato -n2` or
 * `dot -Kneato`); circles are as wide as the longest node name and the
 * grid as wide as the circles. Each pair of linked nodes gets one grey line
 * per parallel link, except a torus's wrap-around links, which would cross
 * the grid: each is two short curved stubs leaving it at both ends, towards
 * each other. The trees are copy N (--tree-copy N) of each base tree of the
 * first symmetric schedule selected (base tree b moved by group element
 * N mod |G|; copy 0 is the first base tree itself), one colour per tree,
 * arrows from child to parent, dashed where an edge spans several hops.
 * Without a symmetric schedule, a pipelined one's link-disjoint trees are
 * drawn instead, one colour per tree over the very link each edge owns:
 * trees N .. N + 3 (a root set; N = --tree-copy).
 * An optical ring is drawn in its initial configuration; with --collective
 * naming a schedule that rewires it, each of its configurations; naming one
 * that reduces in the network, its in-network operations (draw_fused).
 */
#include <stdlib.h>
#include <string.h>

#include "backend.h"

static const char *const tree_colour[] = {"red", "blue", "darkgreen", "darkorange",
                                          "purple", "brown", "deeppink", "teal"};
static const char *const root_fill[] = {"#ffcccc", "#ccccff", "#ccffcc", "#ffe0b0",
                                        "#e8ccff", "#f0d8c8", "#ffd0e8", "#c8f0f0"};

static void
node_id(const Topo *t, int v, FILE *f)
{
	char name[64];
	topo_node_name(t, v, name, sizeof name);
	fprintf(f, "\"%s\"", name);
}

/* A node's position in points: 2D at its coordinates; a 3D torus as its
 * slices along the first dimension side by side. false: left to neato. */
static bool
node_pos(const Topo *t, int v, int grid, int *x, int *y)
{
	int c[MAX_DIMS];
	if (t->is_switch && t->is_switch[v])
		return false;
	if (t->ndim == 2) {
		topo_coords(t, v, c);
		*x = c[1] * grid, *y = -c[0] * grid;
		return true;
	}
	if (t->ndim == 3 && t->kind == TK_TORUS) {
		topo_coords(t, v, c);
		*x = (c[0] * (t->size[2] + 1) + c[2]) * grid, *y = -c[1] * grid;
		return true;
	}
	return false;
}

/* The dimension along which link u-v wraps around a torus (its ends at
 * opposite sides of the grid), or -1. */
static int
wrap_dim(const Topo *t, int u, int v)
{
	if (t->kind != TK_TORUS || t->ndim < 2)
		return -1;
	int a[MAX_DIMS], b[MAX_DIMS];
	topo_coords(t, u, a);
	topo_coords(t, v, b);
	for (int d = 0; d < t->ndim; d++)
		if (a[d] != b[d] && (a[d] - b[d] == t->size[d] - 1 || b[d] - a[d] == t->size[d] - 1) &&
		    t->size[d] > 2)
			return d;
	return -1;
}

/* A stub of the wrap-around link from u (towards its other end, which lies
 * beyond the grid's edge): a curved line to an invisible point outside. */
static void
wrap_stub(const Topo *t, int u, int v, int d, int grid, int id, FILE *f)
{
	int x, y, c[MAX_DIMS];
	if (!node_pos(t, u, grid, &x, &y))
		return;
	topo_coords(t, u, c);
	int out = c[d] == 0 ? -1 : 1; /* away from the grid */
	int dx = 0, dy = 0;
	if ((t->ndim == 2 && d == 1) || (t->ndim == 3 && d == 2))
		dx = out * grid / 2, dy = grid / 6;
	else if ((t->ndim == 2 && d == 0) || (t->ndim == 3 && d == 1))
		dy = -out * grid / 2, dx = grid / 6;
	else
		dy = grid / 2, dx = out * grid / 4; /* between slices */
	fprintf(f, "\t\"wrap%d\" [shape=point, width=0.04, color=gray60, pos=\"%d,%d!\"];\n", id,
	        x + dx, y + dy);
	fputc('\t', f);
	node_id(t, u, f);
	fprintf(f, " -> \"wrap%d\" [style=dashed, tooltip=\"", id);
	char a[64], b[64];
	topo_node_name(t, u, a, sizeof a);
	topo_node_name(t, v, b, sizeof b);
	fprintf(f, "%s - %s, around the torus\"];\n", a, b);
}

static void
draw_links(const Topo *t, int grid, FILE *f)
{
	/* one line per pair and parallel link: u -> v drawn when u < v, or when
	 * the reverse link does not exist */
	int stubs = 0;
	for (int i = 0; i < t->nlink; i++) {
		const Link *l = &t->link[i];
		if (t->kind == TK_OPTICAL_RING && l->dim >= 0) { /* circuits: the initial ring */
			if (l->dim == 0) {
				fputc('\t', f);
				node_id(t, l->src, f);
				fputs(" -> ", f);
				node_id(t, l->dst, f);
				fputs(" [arrowhead=normal];\n", f);
			}
			continue;
		}
		bool both = topo_find_link(t, l->dst, l->src, l->copy) >= 0;
		if (both && l->src > l->dst)
			continue;
		int d = wrap_dim(t, l->src, l->dst);
		int x, y;
		if (d >= 0 && node_pos(t, l->src, grid, &x, &y)) {
			wrap_stub(t, l->src, l->dst, d, grid, stubs++, f);
			wrap_stub(t, l->dst, l->src, d, grid, stubs++, f);
			continue;
		}
		fputc('\t', f);
		node_id(t, l->src, f);
		fputs(" -> ", f);
		node_id(t, l->dst, f);
		fputs(both ? ";\n" : " [arrowhead=normal];\n", f);
	}
}

/* Circles as wide as the longest name at 10 pt (about 6 pt a character),
 * in inches; the grid step in points, wide enough for them. */
static int
grid_step(const Topo *t, double *width)
{
	size_t longest = 0;
	for (int v = 0; v < t->nnode; v++) {
		char name[64];
		topo_node_name(t, v, name, sizeof name);
		if (strlen(name) > longest)
			longest = strlen(name);
	}
	*width = (double)longest * 6 + 10 > 32 ? ((double)longest * 6 + 10) / 72 : 0.45;
	return (int)(*width * 72) + 40 > 72 ? (int)(*width * 72) + 40 : 72;
}

/* Every node (pinned at its coordinates where the layout has them) and
 * one grey line per parallel link. */
static void
draw_nodes_links(const Topo *t, FILE *f)
{
	double width;
	int grid = grid_step(t, &width);
	if (t->kind == TK_TORUS)
		fputs("\tsplines=curved;\n", f);
	fprintf(f, "\tnode [shape=circle, fontsize=10, width=%.2f, fixedsize=true];\n", width);
	fputs("\tedge [arrowhead=none, color=gray60];\n", f);
	for (int v = 0; v < t->nnode; v++) {
		fputc('\t', f);
		node_id(t, v, f);
		bool sw = t->is_switch && t->is_switch[v];
		fprintf(f, " [%s", sw ? "shape=box, style=filled, fillcolor=gray90" : "");
		int x, y;
		if (node_pos(t, v, grid, &x, &y))
			fprintf(f, "%spos=\"%d,%d!\"", sw ? ", " : "", x, y);
		fputs("];\n", f);
	}
	draw_links(t, grid, f);
}

/* A pipelined schedule's trees first .. first + 3, one colour each; each
 * edge parent -> child drawn on its own link (a pair's parallel links are
 * separate lines). */
static int
draw_disjoint(Diag *dg, const Sched *s, int first, FILE *f)
{
	static const char *const colour[] = {"red", "blue", "darkgreen", "orange"};
	const Topo *t = s->topo;
	if (first < 0 || first >= s->ntree) {
		error_file(dg, "--tree-copy %d: '%s' has trees 0..%d", first, s->name, s->ntree - 1);
		return -1;
	}
	char desc[128];
	topo_describe(t, desc, sizeof desc);
	fprintf(f, "digraph \"%s\" {\n", t->name);
	fprintf(f, "\tlabel=\"%s = %s, link-disjoint trees of %s\";\n", t->name, desc, s->name);
	draw_nodes_links(t, f);
	for (int b = first; b < s->ntree && b < first + 4; b++) {
		const Tree *tr = s->tree[b];
		const char *c = colour[(b - first) % 4];
		char root[32];
		topo_node_name(t, tr->root[0], root, sizeof root);
		fprintf(f, "\t// tree %d, root %s, height %d\n", b, root, tr->height);
		for (int v = 0; v < t->nnode; v++) {
			if (tr->link[v] < 0)
				continue;
			fputc('\t', f);
			node_id(t, tr->parent[v], f);
			fputs(" -> ", f);
			node_id(t, v, f);
			fprintf(f, " [color=%s, penwidth=2, arrowhead=normal%s];\n", c,
			        t->link[tr->link[v]].copy > 0 ? ", style=dashed" : "");
		}
		fputc('\t', f);
		node_id(t, tr->root[0], f);
		fprintf(f, " [style=filled, fillcolor=%s, fontcolor=white];\n", c);
	}
	fputs("}\n", f);
	return 0;
}

/* A tree edge u -> v over a torus's wrap-around link: not a line across
 * the grid but a stub leaving u outwards and one entering v from its own
 * edge, the arrowhead on the second; both in the current edge colour. */
static void
wrap_edge(const Topo *t, int u, int v, int d, int grid, int id, FILE *f)
{
	int end[2] = {u, v}, x, y, c[MAX_DIMS];
	for (int k = 0; k < 2; k++) {
		if (!node_pos(t, end[k], grid, &x, &y))
			return;
		topo_coords(t, end[k], c);
		int out = c[d] == 0 ? -1 : 1;
		bool across = (t->ndim == 2 && d == 1) || (t->ndim == 3 && d == 2);
		int dx = across ? out * grid * 2 / 5 : (t->ndim == 3 && d == 0) ? out * grid / 4 : 0;
		int dy = across ? -grid / 8 : (t->ndim == 3 && d == 0) ? grid / 3 : -out * grid * 2 / 5;
		fprintf(f, "\t\"tw%d_%d\" [shape=point, width=0.02, style=invis, pos=\"%d,%d!\"];\n", id,
		        k, x + dx, y + dy);
	}
	fputc('\t', f);
	node_id(t, u, f);
	fprintf(f, " -> \"tw%d_0\" [arrowhead=none];\n\t\"tw%d_1\" -> ", id, id);
	node_id(t, v, f);
	fputs(";\n", f);
}

static void
draw_trees(const Sched *s, int copy, FILE *f)
{
	const Topo *t = s->topo;
	const Group *g = s->group;
	int e = copy % g->order, wraps = 0;
	double width;
	int grid = grid_step(t, &width);
	Routes r;
	routes_init(&r, t, ROUTE_SHORTEST);
	for (int b = 0; b < s->ntree; b++) {
		const Tree *tr = s->tree[b];
		int k = b % (int)countof(tree_colour);
		fprintf(f, "\tedge [color=%s, penwidth=2, arrowhead=normal, style=solid];\n",
		        tree_colour[k]);
		for (int v = 0; v < t->nnode; v++) {
			if (tr->parent[v] < 0)
				continue;
			int c = group_node(g, e, v), pa = group_node(g, e, tr->parent[v]);
			int d = wrap_dim(t, c, pa), x, y;
			if (d >= 0 && node_pos(t, c, grid, &x, &y)) {
				wrap_edge(t, c, pa, d, grid, wraps++, f);
				continue;
			}
			fputc('\t', f);
			node_id(t, c, f);
			fputs(" -> ", f);
			node_id(t, pa, f);
			fputs(topo_distance(&r, v, tr->parent[v]) > 1 ? " [style=dashed];\n" : ";\n", f);
		}
		for (int i = 0; i < tr->nroot; i++) {
			fputc('\t', f);
			node_id(t, group_node(g, e, tr->root[i]), f);
			fprintf(f, " [style=filled, fillcolor=\"%s\"];\n", root_fill[k]);
		}
	}
	routes_free(&r);
}

/* A schedule's in-network operations (Sched.fuse: NVLS, SHARP) over the
 * topology: each switch that reduces drawn as a double octagon, and the
 * links the operations load, each (link, kind) once, in the kind's colour
 * (reduce red, multicast blue, allreduce purple: the graph's label says
 * so) and bold; other links stay grey. */
static void
draw_fused(const Sched *s, FILE *f)
{
	static const char *const kind_colour[] = {"red", "blue", "purple"};
	const Topo *t = s->topo;
	unsigned char *drawn = xcalloc((size_t)t->nlink + 1, 1); /* bit per FuseKind */
	int *links = xmalloc(((size_t)fuse_links_max(s) + 1) * sizeof *links);
	for (int v = 0; v < t->nnode; v++)
		if (topo_reduces(t, v)) {
			fputc('\t', f);
			node_id(t, v, f);
			fputs(" [shape=doubleoctagon, style=filled, fillcolor=gold];\n", f);
		}
	for (int i = 0; i < s->nfuse; i++) {
		const Fuse *x = &s->fuse[i];
		int n = fuse_links(s, i, links);
		for (int k = 0; k < n; k++) {
			const Link *l = &t->link[links[k]];
			if (drawn[links[k]] & (1u << x->kind))
				continue;
			drawn[links[k]] |= (unsigned char)(1u << x->kind);
			fputc('\t', f);
			node_id(t, l->src, f);
			fputs(" -> ", f);
			node_id(t, l->dst, f);
			fprintf(f, " [color=%s, penwidth=2, arrowhead=normal];\n", kind_colour[x->kind]);
		}
	}
	free(links);
	free(drawn);
}

/* An optical schedule: one cluster per circuit configuration, the
 * forward circuits in force as arrows (the reverse fibers run back along
 * them), electrical links grey. */
static void
emit_configurations(const Sched *s, FILE *f)
{
	const Topo *t = s->topo;
	char desc[128];
	topo_describe(t, desc, sizeof desc);
	fprintf(f, "digraph \"%s\" {\n", s->name);
	fprintf(f, "\tlabel=\"%s on %s = %s: %d configurations, %d reconfigurations\";\n", s->name,
	        t->name, desc, s->nphase, sched_nreconfig(s));
	fputs("\tnode [shape=circle, fontsize=10, width=0.45, fixedsize=true];\n", f);
	for (int k = 0; k < s->nphase; k++) {
		const Phase *ph = &s->phase[k];
		int last = k + 1 < s->nphase ? s->phase[k + 1].round : s->nround;
		fprintf(f, "\tsubgraph cluster_%d {\n\t\tlabel=\"rounds %d..%d%s\";\n", k, ph->round + 1,
		        last, ph->reconfig ? " (rewired before)" : "");
		for (int v = 0; v < t->nnode; v++)
			fprintf(f, "\t\t\"%d:%d\" [label=\"%d\"];\n", k, v, v);
		for (int i = 0; i < t->nlink; i++) {
			const Link *l = &t->link[i];
			int b = l->src / optical_block(t);
			if (l->dim < 0 && l->dir > 0)
				fprintf(f, "\t\t\"%d:%d\" -> \"%d:%d\" [arrowhead=none, color=gray60];\n", k,
				        l->src, k, l->dst);
			else if (l->dim >= 0 && l->dir > 0 && ph->next[b] == l->dst / optical_block(t))
				fprintf(f, "\t\t\"%d:%d\" -> \"%d:%d\";\n", k, l->src, k, l->dst);
		}
		fputs("\t}\n", f);
	}
	fputs("}\n", f);
}

static int
emit_dot(Diag *dg, const Prog *p, const BuildOpts *o, FILE *f)
{
	const Sched *sel[64];
	int n = backend_select(p, o, sel, 64);
	if (o->collective && n == 1 && sel[0]->nphase > 0) {
		emit_configurations(sel[0], f);
		return 0;
	}
	const Sched *s = NULL, *piped = NULL, *fused = NULL;
	for (int i = 0; i < n && !s; i++)
		if (sel[i]->base)
			s = sel[i];
	for (int i = 0; i < n && !s && !fused && o->collective; i++)
		fused = sel[i]->nfuse > 0 ? sel[i] : NULL;
	if (fused) {
		char desc[128];
		topo_describe(fused->topo, desc, sizeof desc);
		fprintf(f, "digraph \"%s\" {\n", fused->topo->name);
		fprintf(f, "\tlabel=\"%s = %s, %s's %d in-network operations (%s): gold, a switch that "
		        "reduces; red, reduced in it; blue, multicast; purple, allreduced\";\n",
		        fused->topo->name, desc, fused->name, fused->nfuse, fused->algorithm);
		draw_nodes_links(fused->topo, f);
		draw_fused(fused, f);
		fputs("}\n", f);
		return 0;
	}
	for (int i = 0; i < n && !s && !piped; i++)
		if (sel[i]->ntree > 0 && sel[i]->tree[0]->link)
			piped = sel[i];
	if (piped)
		return draw_disjoint(dg, piped, o->tree_copy, f);
	const Topo *t = s ? s->topo : p->ntopo ? p->topo[0] : NULL;
	if (!t) {
		error_file(dg, "nothing to draw: the file has no topology");
		return -1;
	}
	if (o->collective && !s) {
		error_file(dg, "'%s' is not a symmetric collective of this file", o->collective);
		return -1;
	}
	int copy = o->tree_copy;
	if (s && (copy < 0 || copy >= s->ntree * s->group->order)) {
		error_file(dg, "--tree-copy %d: '%s' has copies 0..%d", copy, s->name,
		           s->ntree * s->group->order - 1);
		return -1;
	}
	char desc[128];
	topo_describe(t, desc, sizeof desc);
	fprintf(f, "digraph \"%s\" {\n", t->name);
	fprintf(f, "\tlabel=\"%s = %s%s%s\";\n", t->name, desc, s ? ", trees of " : "",
	        s ? s->name : "");
	draw_nodes_links(t, f);
	if (s)
		draw_trees(s, copy, f);
	fputs("}\n", f);
	return 0;
}

const Backend dot_backend = {"dot", "the topology with a tree", ".dot", emit_dot};
