/*
 * explain_html.c: `collc explain --html`, one self-contained page (no
 * network, no external script or font) to step through a schedule in a
 * browser. Needs an explicit schedule that explain_check_page admitted (and
 * its symmetric form when it has one). Writes the page's numbers as one
 * JSON object, every one of them from the replay the text form prints
 * (ir/explain.c): per round the messages with their routes, each link's
 * load, and the holdings cells that changed (in full detail), or per link a
 * heat level and per rank a density (aggregated). The topology's layout
 * (ring on a circle, grids with wrap-around stubs, spine-leaf in tiers) is
 * computed here; the drawing, the slider and the keys are the page's script
 * (backends/explain/page.js, embedded by the Makefile as the MPI runtime is).
 * The compare page holds two or three schedules' data, one object each as
 * the single page's, and its own script (backends/explain/compare.js).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

static const double PI = 3.14159265358979323846;

extern const char collc_explain_js[], collc_explain_css[], collc_explain_compare_js[],
	collc_explain_common_js[];

/* A JSON string, '<' escaped so that no text closes the script element. */
static void
js_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == '<' || c == '>' || c == '&')
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

typedef struct Layout2 {
	double *x, *y;   /* per node, in page units */
	double w, h;
	double grid;     /* the grid step (stubs are a share of it) */
	bool grid_kind;  /* nodes at coordinates */
} Layout2;

static bool
on_grid(const Topo *t)
{
	bool kind = t->kind == TK_TORUS || t->kind == TK_MESH || t->kind == TK_SUPERMESH ||
	            t->kind == TK_HYPERX;
	return kind && (t->ndim == 2 || (t->ndim == 3 && t->kind == TK_TORUS));
}

static void
layout_circle(const Topo *t, Layout2 *L)
{
	double r = t->nnode * 30 / (2 * PI);
	if (r < 150)
		r = 150;
	L->w = L->h = 2 * r + 80;
	for (int v = 0; v < t->nnode; v++) {
		double a = 2 * PI * v / t->nnode - PI / 2;
		L->x[v] = L->w / 2 + r * cos(a), L->y[v] = L->h / 2 + r * sin(a);
	}
	L->grid = 2 * PI * r / t->nnode;
}

static void
layout_grid(const Topo *t, Layout2 *L)
{
	int rows = t->ndim == 2 ? t->size[0] : t->size[1];
	int cols = t->ndim == 2 ? t->size[1] : t->size[0] * (t->size[2] + 1) - 1;
	double g = 640.0 / (cols > rows ? cols : rows);
	g = g > 110 ? 110 : g < 16 ? 16 : g;
	L->grid = g;
	L->grid_kind = true;
	L->w = (cols - 1) * g + 120, L->h = (rows - 1) * g + 120;
	for (int v = 0; v < t->nnode; v++) {
		int c[MAX_DIMS];
		topo_coords(t, v, c);
		double col = t->ndim == 2 ? c[1] : c[0] * (t->size[2] + 1) + c[2];
		double row = t->ndim == 2 ? c[0] : c[1];
		L->x[v] = 60 + col * g, L->y[v] = 60 + row * g;
	}
}

/* Spines on top, leaves below, hosts at the bottom (topo_spine_leaf's
 * numbering: hosts, then leaves, then spines). */
static void
layout_tiers(const Topo *t, Layout2 *L)
{
	int hosts = t->nrank, leaves = t->size[0], spines = t->nnode - hosts - leaves;
	int widest = hosts > leaves ? hosts : leaves;
	double g = 1100.0 / (widest > 1 ? widest : 1); /* a wide tier packs its nodes closer */
	g = g > 60 ? 60 : g;
	L->grid = g < 14 ? 14 : g;
	L->w = widest * g + 80, L->h = 360;
	for (int v = 0; v < t->nnode; v++) {
		int tier = v < hosts ? 2 : v < hosts + leaves ? 1 : 0;
		int i = tier == 2 ? v : tier == 1 ? v - hosts : v - hosts - leaves;
		int n = tier == 2 ? hosts : tier == 1 ? leaves : spines;
		L->x[v] = 40 + (i + 0.5) * (L->w - 80) / n, L->y[v] = 40 + tier * 140;
	}
}

static void
layout_nodes(const Topo *t, Layout2 *L)
{
	L->x = xcalloc((size_t)t->nnode, sizeof *L->x);
	L->y = xcalloc((size_t)t->nnode, sizeof *L->y);
	L->grid_kind = false;
	if (on_grid(t))
		layout_grid(t, L);
	else if (t->kind == TK_SPINE_LEAF)
		layout_tiers(t, L);
	else
		layout_circle(t, L);
}

/* A grid link's wrap-around (its ends on opposite sides): the direction,
 * in page units, a short stub leaves its source in; 0 otherwise. */
static bool
wrap_stub(const Topo *t, const Layout2 *L, const Link *l, double *dx, double *dy)
{
	if (!L->grid_kind || t->kind != TK_TORUS)
		return false;
	int a[MAX_DIMS], b[MAX_DIMS];
	topo_coords(t, l->src, a);
	topo_coords(t, l->dst, b);
	for (int d = 0; d < t->ndim; d++) {
		if (a[d] == b[d] || t->size[d] <= 2 || abs(a[d] - b[d]) != t->size[d] - 1)
			continue;
		int out = a[d] == 0 ? -1 : 1; /* away from the grid */
		bool across = (t->ndim == 2 && d == 1) || (t->ndim == 3 && d != 1);
		*dx = across ? out * L->grid * 0.42 : 0;
		*dy = across ? 0 : out * L->grid * 0.42;
		if (t->ndim == 3 && d == 0) /* between slices: down and aside */
			*dx = out * L->grid * 0.3, *dy = L->grid * 0.3;
		return true;
	}
	return false;
}

static void
page_topology(const Sched *s, FILE *f)
{
	const Topo *t = s->topo;
	Layout2 L;
	layout_nodes(t, &L);
	char desc[128], name[64];
	topo_describe(t, desc, sizeof desc);
	fprintf(f, "\"topo\":");
	js_string(f, desc);
	fprintf(f, ",\"W\":%.0f,\"H\":%.0f,\"grid\":%.1f,\n\"nodes\":[", L.w, L.h, L.grid);
	for (int v = 0; v < t->nnode; v++) {
		topo_node_name(t, v, name, sizeof name);
		fprintf(f, "%s[%.1f,%.1f,%d,", v ? "," : "", L.x[v], L.y[v], s->node_rank[v]);
		js_string(f, name);
		fputc(']', f);
	}
	fprintf(f, "],\n\"links\":[");
	for (int i = 0; i < t->nlink; i++) {
		const Link *l = &t->link[i];
		double dx = 0, dy = 0;
		bool wrap = wrap_stub(t, &L, l, &dx, &dy);
		fprintf(f, "%s[%d,%d", i ? "," : "", l->src, l->dst);
		if (wrap)
			fprintf(f, ",%.1f,%.1f", dx, dy);
		fputc(']', f);
	}
	/* an optical ring's circuits beyond the initial ring: drawn only in a
	 * round that uses them (the phase's circuits) */
	fprintf(f, "],\n\"switched\":[");
	for (int i = 0, k = 0; t->kind == TK_OPTICAL_RING && i < t->nlink; i++)
		if (t->link[i].dim > 0)
			fprintf(f, "%s%d", k++ ? "," : "", i);
	fprintf(f, "],\n");
	free(L.x), free(L.y);
}

static void
page_metrics(const Sched *s, double bytes, FILE *f)
{
	Metrics m;
	metrics(s, bytes, &m);
	fprintf(f, "\"metrics\":{\"rounds\":%d,\"messages\":%ld,\"volume\":%.0f,\"psi\":%.4f,"
	           "\"theta\":%.4f,\"omega\":%.4f,\"time\":%.9g,\"symmetry\":%s},\n", m.rounds,
	        m.messages, m.volume, m.psi, m.theta, m.omega, m.model_time,
	        m.by_symmetry ? "true" : "false");
}

/* Full detail: the cells at the start, and what each must end with. */
static void
page_cells(const Replay *R, FILE *f)
{
	size_t cells = (size_t)R->s->nrank * (size_t)R->s->nchunk;
	fprintf(f, "\"init\":[");
	for (size_t c = 0; c < cells; c++)
		fprintf(f, "%s%d", c ? "," : "", R->count[c] * 2 + replay_final(R, (int)c));
	fprintf(f, "],\n\"want\":[");
	for (size_t c = 0; c < cells; c++)
		fprintf(f, "%s%d", c ? "," : "", R->want[c]);
	fprintf(f, "],\n");
}

/* One round in full detail: messages [src, dst, copy, "chunks", [links]],
 * loads [link, chunks], changed cells [cell, count * 2 + final]. */
static void
page_round_full(const Replay *R, FILE *f)
{
	const Sched *s = R->s;
	fprintf(f, "{\"m\":[");
	for (int i = R->first; i < R->end; i++) {
		const Msg *m = &s->msg[i];
		char list[1024];
		int n = 0;
		list[0] = 0;
		for (int k = 0; k < m->n && n < (int)sizeof list - 16; k++)
			n += snprintf(list + n, sizeof list - (size_t)n, "%s%d", k ? " " : "",
			              s->chunks[m->first + k]);
		fprintf(f, "%s[%d,%d,%d,\"%s\",[", i > R->first ? "," : "", m->src, m->dst,
		        m->op == X_COPY, list);
		const int *l = s->route_link + s->route_off[m->route];
		for (int k = 0; k < sched_route_len(s, m->route); k++)
			fprintf(f, "%s%d", k ? "," : "", l[k]);
		fprintf(f, "]]");
	}
	fprintf(f, "],\"l\":[");
	for (int l = 0, k = 0; l < s->topo->nlink; l++)
		if (R->load[l])
			fprintf(f, "%s[%d,%ld]", k++ ? "," : "", l, R->load[l]);
	fprintf(f, "],\"c\":[");
	for (int i = 0; i < R->nchanged; i++) {
		int c = R->changed[i];
		fprintf(f, "%s[%d,%d]", i ? "," : "", c, R->count[c] * 2 + replay_final(R, c));
	}
	fprintf(f, "]}");
}

/* Aggregated: per link a heat level 0..9 of the round's busiest (a digit
 * each), per rank the share of what it must end with that it holds, in
 * percent. */
static void
page_round_agg(const Replay *R, FILE *f)
{
	const Sched *s = R->s;
	long top = 0;
	for (int l = 0; l < s->topo->nlink; l++)
		top = R->load[l] > top ? R->load[l] : top;
	fprintf(f, "{\"n\":%d,\"top\":%ld,\"h\":\"", R->end - R->first, top);
	for (int l = 0; l < s->topo->nlink; l++)
		fputc(R->load[l] == 0 ? '.' : '0' + (int)(R->load[l] * 9 / (top ? top : 1)), f);
	fprintf(f, "\",\"d\":[");
	for (int r = 0; r < s->nrank; r++) {
		double have = 0, want = 0;
		for (int c = 0; c < s->nchunk; c++) {
			int cell = r * s->nchunk + c;
			if (R->want[cell] <= 0)
				continue;
			have += R->count[cell] < R->want[cell] ? R->count[cell] : R->want[cell];
			want += R->want[cell];
		}
		fprintf(f, "%s%d", r ? "," : "", want > 0 ? (int)floor(100 * have / want) : 100);
	}
	fprintf(f, "]}");
}

/* Base trees and the first copies under the group: parents per node for
 * each base tree, and each element's node map. */
static void
page_trees(const Sched *sym, FILE *f)
{
	const Topo *t = sym->topo;
	int copies = sym->group->order < 64 ? sym->group->order : 64;
	fprintf(f, "\"trees\":{\"order\":%d,\"copies\":%d,\"base\":[", sym->group->order, copies);
	for (int b = 0; b < sym->ntree; b++) {
		fprintf(f, "%s[", b ? "," : "");
		for (int v = 0; v < t->nnode; v++)
			fprintf(f, "%s%d", v ? "," : "", sym->tree[b]->parent[v]);
		fprintf(f, "]");
	}
	fprintf(f, "],\"map\":[");
	for (int e = 0; e < copies; e++) {
		fprintf(f, "%s[", e ? "," : "");
		for (int v = 0; v < t->nnode; v++)
			fprintf(f, "%s%d", v ? "," : "", group_node(sym->group, e, v));
		fprintf(f, "]");
	}
	fprintf(f, "]},\n");
}

/* The chunks one rank's vector is cut into: an alltoall's vector holds a
 * block for every rank (metrics.c's model), the others every chunk. */
static double
chunks_per_vector(const Sched *x)
{
	double n = x->kind == CK_ALLTOALL ? (double)x->nchunk / x->nrank : x->nchunk;
	return n > 0 ? n : 1;
}

static void
page_data(const Sched *x, const Sched *sym, const ExplainFault *fault, double bytes, bool full,
          FILE *f)
{
	const Sched *s = sym ? sym : x;
	int shown = fault ? fault->round + 1 : x->nround;
	fprintf(f, "{\"name\":");
	js_string(f, x->name);
	fprintf(f, ",\"kind\":\"%s\",\"algorithm\":", coll_kind_name[x->kind]);
	js_string(f, s->algorithm);
	fprintf(f, ",\"ranks\":%d,\"chunks\":%d,\"rounds\":%d,\"shown\":%d,\"full\":%s,"
	           "\"bytes\":%.0f,\"chunk_bytes\":%.6g,\n", x->nrank, x->nchunk, x->nround, shown,
	        full ? "true" : "false", bytes, bytes / chunks_per_vector(x));
	page_topology(x, f);
	if (!fault)
		page_metrics(s, bytes, f);
	if (sym && sym->ntree > 0 && sym->group)
		page_trees(sym, f);
	if (fault) { /* the message at fault by its round and its place in that round */
		int k = fault->msg, mround = k >= 0 ? x->msg[k].round : -1;
		while (k > 0 && x->msg[k - 1].round == mround)
			k--;
		fprintf(f, "\"fault\":{\"round\":%d,\"mround\":%d,\"msg\":%d,\"rank\":%d,"
		           "\"chunk\":%d,\"text\":", fault->round, mround,
		        fault->msg >= 0 ? fault->msg - k : -1, fault->rank, fault->chunk);
		js_string(f, fault->text ? fault->text : "");
		fprintf(f, "},\n");
	}
	Replay R;
	replay_start(&R, x);
	if (full)
		page_cells(&R, f);
	fprintf(f, "\"steps\":[\n");
	while (R.round + 1 < shown && replay_step(&R)) {
		if (R.round > 0)
			fprintf(f, ",\n");
		if (full)
			page_round_full(&R, f);
		else
			page_round_agg(&R, f);
	}
	fprintf(f, "\n]}");
	replay_free(&R);
}

void
explain_html(const Sched *x, const Sched *sym, const ExplainFault *fault, double bytes,
             bool full, FILE *f)
{
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	           "<title>collc explain: ");
	for (const char *c = x->name; *c; c++)
		fputc(*c == '<' || *c == '&' ? '_' : *c, f);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", collc_explain_css);
	fprintf(f, "<script id=\"data\" type=\"application/json\">\n");
	page_data(x, sym, fault, bytes, full, f);
	fprintf(f, "\n</script>\n<script>\n%s</script>\n<script>\n%s</script>\n</body>\n</html>\n",
	        collc_explain_common_js, collc_explain_js);
}

void
explain_html_compare(const Sched *const x[], const Sched *const sym[], int n, double bytes,
                     const char *file, FILE *f)
{
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	           "<title>collc explain: ");
	for (int i = 0; i < n; i++) {
		fputs(i ? ", " : "", f);
		for (const char *c = x[i]->name; *c; c++)
			fputc(*c == '<' || *c == '&' ? '_' : *c, f);
	}
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body class=\"compare\">\n",
	        collc_explain_css);
	fprintf(f, "<script id=\"data\" type=\"application/json\">\n{\"file\":");
	js_string(f, file);
	fprintf(f, ",\"scheds\":[\n");
	for (int i = 0; i < n; i++) {
		fputs(i ? ",\n" : "", f);
		page_data(x[i], sym[i], NULL, bytes, true, f);
	}
	fprintf(f, "]}\n</script>\n<script>\n%s</script>\n<script>\n%s</script>\n</body>\n</html>\n",
	        collc_explain_common_js, collc_explain_compare_js);
}
