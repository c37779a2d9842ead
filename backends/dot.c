/*
 * dot.c: Graphviz DOT of a topology with one tree drawn over it, for
 * teaching. Nodes of 2D topologies are pinned at their coordinates (render
 * with `neato -n2` or `dot -Kneato`); each pair of linked nodes gets one
 * grey line per parallel link; the tree's edges are red arrows from child
 * to parent, dashed where an edge spans several hops. The tree is copy N
 * (--tree-copy N) of the first symmetric schedule selected: base tree
 * N / |G| moved by group element N mod |G|; copy 0 is the first base tree.
 * Without a symmetric schedule, a pipelined one's link-disjoint trees are
 * drawn instead, one colour per tree over the very link each edge owns:
 * trees N .. N + 3 (a root set; N = --tree-copy).
 * An optical ring is drawn in its initial configuration; with --collective
 * naming a schedule that rewires it, each of its configurations.
 */
#include <string.h>

#include "backend.h"

static void
node_id(const Topo *t, int v, FILE *f)
{
	char name[64];
	topo_node_name(t, v, name, sizeof name);
	fprintf(f, "\"%s\"", name);
}

/* Every node (pinned at its coordinates in 2D) and one grey line per
 * parallel link. */
static void
draw_nodes_links(const Topo *t, FILE *f)
{
	fputs("\tnode [shape=circle, fontsize=10, width=0.45, fixedsize=true];\n", f);
	fputs("\tedge [arrowhead=none, color=gray60];\n", f);
	for (int v = 0; v < t->nnode; v++) {
		fputc('\t', f);
		node_id(t, v, f);
		bool sw = t->is_switch && t->is_switch[v];
		fprintf(f, " [%s", sw ? "shape=box, style=filled, fillcolor=gray90" : "");
		if (t->ndim == 2 && !sw) {
			int c[2];
			topo_coords(t, v, c);
			fprintf(f, "%spos=\"%d,%d!\"", sw ? ", " : "", c[1] * 72, -c[0] * 72);
		}
		fputs("];\n", f);
	}
	/* one line per pair and parallel link: u -> v drawn when u < v, or when
	 * the reverse link does not exist */
	for (int i = 0; i < t->nlink; i++) {
		const Link *l = &t->link[i];
		if (t->kind == TK_OPTICAL_RING && l->dim >= 0) { /* circuits: the initial ring */
			if (l->dim == 0)
				fprintf(f, "\t\"%d\" -> \"%d\" [arrowhead=normal];\n", l->src, l->dst);
			continue;
		}
		bool both = topo_find_link(t, l->dst, l->src, l->copy) >= 0;
		if (both && l->src > l->dst)
			continue;
		fputc('\t', f);
		node_id(t, l->src, f);
		fputs(" -> ", f);
		node_id(t, l->dst, f);
		fputs(both ? ";\n" : " [arrowhead=normal];\n", f);
	}
}

/* A pipelined schedule's trees first .. first + 3, one colour each; each
 * edge parent -> child drawn on its own link (a pair's parallel links are
 * separate lines). */
static int
draw_disjoint(const Sched *s, int first, FILE *f)
{
	static const char *const colour[] = {"red", "blue", "darkgreen", "orange"};
	const Topo *t = s->topo;
	if (first < 0 || first >= s->ntree) {
		error_file("--tree-copy %d: '%s' has trees 0..%d", first, s->name, s->ntree - 1);
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
emit_dot(const Prog *p, const BuildOpts *o, FILE *f)
{
	const Sched *sel[64];
	int n = backend_select(p, o, sel, 64);
	if (o->collective && n == 1 && sel[0]->nphase > 0) {
		emit_configurations(sel[0], f);
		return 0;
	}
	const Sched *s = NULL, *piped = NULL;
	for (int i = 0; i < n && !s; i++)
		if (sel[i]->base)
			s = sel[i];
	for (int i = 0; i < n && !s && !piped; i++)
		if (sel[i]->ntree > 0 && sel[i]->tree[0]->link)
			piped = sel[i];
	if (piped)
		return draw_disjoint(piped, o->tree_copy, f);
	const Topo *t = s ? s->topo : p->ntopo ? p->topo[0] : NULL;
	if (!t) {
		error_file("nothing to draw: the file has no topology");
		return -1;
	}
	if (o->collective && !s) {
		error_file("'%s' is not a symmetric collective of this file", o->collective);
		return -1;
	}
	int copy = o->tree_copy;
	if (s && (copy < 0 || copy >= s->ntree * s->group->order)) {
		error_file("--tree-copy %d: '%s' has copies 0..%d", copy, s->name,
		           s->ntree * s->group->order - 1);
		return -1;
	}
	char desc[128];
	topo_describe(t, desc, sizeof desc);
	fprintf(f, "digraph \"%s\" {\n", t->name);
	fprintf(f, "\tlabel=\"%s = %s%s%s\";\n", t->name, desc, s ? ", a tree of " : "",
	        s ? s->name : "");
	draw_nodes_links(t, f);
	if (s) {
		const Group *g = s->group;
		int b = copy / g->order, e = copy % g->order;
		const Tree *tr = s->tree[b];
		Routes r;
		routes_init(&r, t, ROUTE_SHORTEST);
		fputs("\tedge [color=red, penwidth=2, arrowhead=normal];\n", f);
		for (int v = 0; v < t->nnode; v++) {
			if (tr->parent[v] < 0)
				continue;
			int c = group_node(g, e, v), pa = group_node(g, e, tr->parent[v]);
			fputc('\t', f);
			node_id(t, c, f);
			fputs(" -> ", f);
			node_id(t, pa, f);
			fputs(topo_distance(&r, v, tr->parent[v]) > 1 ? " [style=dashed];\n" : ";\n", f);
		}
		for (int i = 0; i < tr->nroot; i++) {
			fputc('\t', f);
			node_id(t, group_node(g, e, tr->root[i]), f);
			fputs(" [style=filled, fillcolor=\"#ffcccc\"];\n", f);
		}
		routes_free(&r);
	}
	fputs("}\n", f);
	return 0;
}

const Backend dot_backend = {"dot", ".dot", emit_dot};
