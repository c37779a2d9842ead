/*
 * flow.c: Dinic's maximum flow (flow.h).
 *
 * Needs: edges added with capacities >= 0.
 * Establishes: flows that respect capacities and conservation, maximum (or
 * at the limit asked) when flow_max returns; the residual graph's reachable
 * set from s as the source side of a minimum cut.
 *
 * Edge e is held as two arcs, 2e (u -> v, residual cap - flow) and 2e + 1
 * (v -> u, residual flow). The arcs of each node are kept in CSR form,
 * rebuilt only when edges were added, in the order they were added: that
 * order fixes which augmenting paths are found, so results are the same on
 * every run. The blocking-flow search is iterative (a path stack), so a
 * graph of a million nodes does not need a deep C stack.
 */
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "flow.h"

struct FlowGraph {
	int nnode, nedge, capedge;
	int *src, *dst;          /* per edge */
	int64_t *cap, *flow;     /* per edge */
	bool csr_ok;             /* first/arc below match the edges */
	int *first;              /* nnode + 1: node v's arcs are arc[first[v] .. first[v+1]) */
	int *arc;                /* 2 nedge arc ids */
	int *level, *iter, *path, *queue; /* nnode each: Dinic's working state */
};

FlowGraph *
flow_new(int nnode)
{
	FlowGraph *g = xcalloc(1, sizeof *g);
	g->nnode = nnode;
	g->first = xcalloc((size_t)nnode + 1, sizeof *g->first);
	g->level = xmalloc(((size_t)nnode + 1) * sizeof *g->level);
	g->iter = xmalloc(((size_t)nnode + 1) * sizeof *g->iter);
	g->path = xmalloc(((size_t)nnode + 1) * sizeof *g->path);
	g->queue = xmalloc(((size_t)nnode + 1) * sizeof *g->queue);
	return g;
}

void
flow_free(FlowGraph *g)
{
	if (!g)
		return;
	free(g->src);
	free(g->dst);
	free(g->cap);
	free(g->flow);
	free(g->first);
	free(g->arc);
	free(g->level);
	free(g->iter);
	free(g->path);
	free(g->queue);
	free(g);
}

int
flow_nnode(const FlowGraph *g)
{
	return g->nnode;
}

int
flow_nedge(const FlowGraph *g)
{
	return g->nedge;
}

int
flow_add_edge(FlowGraph *g, int u, int v, int64_t cap)
{
	if (g->nedge == g->capedge) {
		g->capedge = g->capedge ? 2 * g->capedge : 16;
		size_t n = (size_t)g->capedge;
		g->src = xrealloc(g->src, n * sizeof *g->src);
		g->dst = xrealloc(g->dst, n * sizeof *g->dst);
		g->cap = xrealloc(g->cap, n * sizeof *g->cap);
		g->flow = xrealloc(g->flow, n * sizeof *g->flow);
	}
	int e = g->nedge++;
	g->src[e] = u;
	g->dst[e] = v;
	g->cap[e] = cap < 0 ? 0 : cap;
	g->flow[e] = 0;
	g->csr_ok = false;
	return e;
}

int
flow_edge_src(const FlowGraph *g, int e)
{
	return g->src[e];
}

int
flow_edge_dst(const FlowGraph *g, int e)
{
	return g->dst[e];
}

int64_t
flow_edge_cap(const FlowGraph *g, int e)
{
	return g->cap[e];
}

int64_t
flow_edge_flow(const FlowGraph *g, int e)
{
	return g->flow[e];
}

void
flow_reset(FlowGraph *g)
{
	if (g->nedge)
		memset(g->flow, 0, (size_t)g->nedge * sizeof *g->flow);
}

bool
flow_set_cap(FlowGraph *g, int e, int64_t cap)
{
	g->cap[e] = cap < 0 ? 0 : cap;
	if (g->flow[e] <= g->cap[e])
		return true;
	flow_reset(g);
	return false;
}

/* Counting sort of the arcs by their tail, stable: each node's arcs in the
 * order their edges were added. */
static void
build_csr(FlowGraph *g)
{
	if (g->csr_ok)
		return;
	free(g->arc);
	g->arc = xmalloc(((size_t)2 * g->nedge + 1) * sizeof *g->arc);
	memset(g->first, 0, ((size_t)g->nnode + 1) * sizeof *g->first);
	for (int e = 0; e < g->nedge; e++) {
		g->first[g->src[e] + 1]++;
		g->first[g->dst[e] + 1]++;
	}
	for (int v = 0; v < g->nnode; v++)
		g->first[v + 1] += g->first[v];
	int *fill = g->iter; /* free until the search */
	memcpy(fill, g->first, (size_t)g->nnode * sizeof *fill);
	for (int e = 0; e < g->nedge; e++) {
		g->arc[fill[g->src[e]]++] = 2 * e;
		g->arc[fill[g->dst[e]]++] = 2 * e + 1;
	}
	g->csr_ok = true;
}

static int
arc_head(const FlowGraph *g, int a)
{
	return a & 1 ? g->src[a >> 1] : g->dst[a >> 1];
}

static int64_t
arc_residual(const FlowGraph *g, int a)
{
	int e = a >> 1;
	return a & 1 ? g->flow[e] : g->cap[e] - g->flow[e];
}

/* BFS levels from s over arcs with residual capacity; whether t is reached. */
static bool
levels(FlowGraph *g, int s, int t)
{
	for (int v = 0; v < g->nnode; v++)
		g->level[v] = -1;
	int head = 0, tail = 0;
	g->level[s] = 0;
	g->queue[tail++] = s;
	while (head < tail) {
		int u = g->queue[head++];
		for (int i = g->first[u]; i < g->first[u + 1]; i++) {
			int a = g->arc[i], v = arc_head(g, a);
			if (g->level[v] < 0 && arc_residual(g, a) > 0) {
				g->level[v] = g->level[u] + 1;
				g->queue[tail++] = v;
			}
		}
	}
	return g->level[t] >= 0;
}

/* Pushes `amount` along the path's arcs; returns how many arcs of the path
 * remain usable (the index of the first one saturated). */
static int
push_path(FlowGraph *g, int depth, int64_t amount)
{
	int keep = depth;
	for (int k = 0; k < depth; k++) {
		int a = g->path[k], e = a >> 1;
		g->flow[e] += a & 1 ? -amount : amount;
		if (keep == depth && arc_residual(g, a) == 0)
			keep = k;
	}
	return keep;
}

/* One blocking flow on the current levels, at most `want` units. */
static int64_t
blocking_flow(FlowGraph *g, int s, int t, int64_t want)
{
	for (int v = 0; v < g->nnode; v++)
		g->iter[v] = g->first[v];
	int64_t sent = 0;
	int depth = 0, u = s;
	while (sent < want) {
		if (u == t) {
			int64_t amount = want - sent;
			for (int k = 0; k < depth; k++) {
				int64_t r = arc_residual(g, g->path[k]);
				amount = r < amount ? r : amount;
			}
			sent += amount;
			depth = push_path(g, depth, amount);
			u = depth ? arc_head(g, g->path[depth - 1]) : s;
			continue;
		}
		int i = g->iter[u];
		for (; i < g->first[u + 1]; i++) {
			int a = g->arc[i], v = arc_head(g, a);
			if (g->level[v] == g->level[u] + 1 && arc_residual(g, a) > 0)
				break;
		}
		g->iter[u] = i;
		if (i < g->first[u + 1]) {
			g->path[depth++] = g->arc[i];
			u = arc_head(g, g->arc[i]);
			continue;
		}
		/* u is a dead end on these levels: retreat past the arc into it. */
		g->level[u] = -1;
		if (depth == 0)
			break;
		depth--;
		u = depth ? arc_head(g, g->path[depth - 1]) : s;
		g->iter[u]++;
	}
	return sent;
}

int64_t
flow_max(FlowGraph *g, int s, int t, int64_t limit)
{
	if (s == t || limit <= 0)
		return 0;
	build_csr(g);
	int64_t sent = 0;
	while (sent < limit && levels(g, s, t))
		sent += blocking_flow(g, s, t, limit - sent);
	return sent;
}

int
flow_source_side(FlowGraph *g, int s, unsigned char *side)
{
	build_csr(g);
	memset(side, 0, (size_t)g->nnode);
	int head = 0, tail = 0;
	side[s] = 1;
	g->queue[tail++] = s;
	while (head < tail) {
		int u = g->queue[head++];
		for (int i = g->first[u]; i < g->first[u + 1]; i++) {
			int a = g->arc[i], v = arc_head(g, a);
			if (!side[v] && arc_residual(g, a) > 0) {
				side[v] = 1;
				g->queue[tail++] = v;
			}
		}
	}
	return tail;
}

int64_t
flow_cut_cap(const FlowGraph *g, const unsigned char *side)
{
	int64_t sum = 0;
	for (int e = 0; e < g->nedge; e++)
		if (side[g->src[e]] && !side[g->dst[e]] &&
		    __builtin_add_overflow(sum, g->cap[e], &sum))
			return FLOW_INF;
	return sum;
}

void
flow_get(const FlowGraph *g, int64_t *flow)
{
	if (g->nedge)
		memcpy(flow, g->flow, (size_t)g->nedge * sizeof *flow);
}
