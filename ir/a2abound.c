/*
 * a2abound.c: the throughput bound of all-to-all on any network, as the
 * maximum concurrent multicommodity flow lambda* (cutbound.h; the proofs
 * are docs/algorithms.md's, "All-to-all: the concurrent flow").
 *
 * Needs: a CutNet (plain data): nodes, directed links with bits/s, the
 * ranks' nodes (a node's ranks count with their number).
 * Establishes: an interval [lo, hi] holding lambda*, the rate every ordered
 * pair of ranks can be given at once (bits/s per pair), with hi/lo at most
 * 1 + A2A_GAP when A2A_PHASES phases reach it (else the interval reached;
 * a network past MAX_A2A_WORK is refused before any). Both ends
 * are certificates computed from what they certify, not from the
 * algorithm's theory:
 *   lo  a flow: every pair routed sum_t scale_t times its demand, divided by
 *       the flow's worst load over capacity (so it fits every link);
 *   hi  a length function l >= 0 on the links: lambda* <= D(l) / alpha(l),
 *       D = sum l(e) c(e), alpha = sum over pairs of their l-shortest path
 *       (weak LP duality; lengths 1 on every link give perf.c's hop bound,
 *       1 on the links leaving a set S its sparsest-cut ratio).
 * The flow and the lengths are Garg and Koenemann's (1998) with Fleischer's
 * (2000) and Karakostas' (2002) grouping by source: per phase, each source
 * routes its demands on its l-shortest-path tree, as much as the links
 * take at once, and each link's length grows by (1 + eps load / capacity).
 * Every source's tree is found by Dijkstra's algorithm with ties to the
 * lower node and link, so the result is deterministic.
 *
 * On a network whose automorphisms map every link to every other (rings,
 * full graphs, tori and HyperX of equal sides, uniform links: CutNet's
 * arc_transitive) the hop bound is exact (docs), lo = hi, and no flow runs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cutbound.h"
#include "heap.h"
#include "ir.h"

/* The network as the phases see it: links with capacity (a fraction of
 * the largest), adjacency by source, the ranks per node. */
typedef struct Mcf {
	int nnode, nlink;
	const CutLink *link;
	double *cap;   /* nlink; 0 for a link of no bandwidth (never used) */
	int *first;    /* nnode + 1: links out of v are out[first[v] .. first[v+1]) */
	int *out;      /* nlink, in the order of the links */
	int *in_first, *in; /* the same for the links into v */
	unsigned char *side; /* nnode: a ball's nodes */
	double cut;    /* the least B+(S) / demand(S) of the balls seen */
	unsigned char *best; /* nnode: its S */
	int *w;        /* nnode: ranks on the node */
	int *src;      /* the rank nodes, ascending */
	int nsrc;
	double *len;   /* nlink: the length function l */
	double *flow;  /* nlink: the flow routed so far */
	double *load;  /* nlink: this step's load */
	double *dist;  /* nnode */
	int *pred;     /* nnode: the tree's link into v, -1 */
	int *order;    /* nnode: the nodes as Dijkstra settled them */
	double *rem;   /* nnode: the source's demand still to route to v */
	double *acc;   /* nnode: the demand below v in the tree */
} Mcf;

typedef struct Item {
	double d;
	int v;
} Item;

static bool
item_less(const void *a, const void *b)
{
	const Item *x = a, *y = b;
	return x->d < y->d || (x->d == y->d && x->v < y->v);
}

/* l-shortest paths from s (links of no capacity left out); the settled
 * nodes into m->order; returns how many. */
static int
dijkstra(Mcf *m, int s, Item *heap)
{
	for (int v = 0; v < m->nnode; v++) {
		m->dist[v] = INFINITY;
		m->pred[v] = -1;
	}
	size_t n = 0;
	int settled = 0;
	m->dist[s] = 0;
	heap_push(heap, n++, sizeof *heap, &(Item){0, s}, item_less);
	while (n > 0) {
		Item it = heap[0];
		heap_pop(heap, n--, sizeof *heap, item_less);
		if (it.d > m->dist[it.v])
			continue;
		m->order[settled++] = it.v;
		for (int k = m->first[it.v]; k < m->first[it.v + 1]; k++) {
			int e = m->out[k], u = m->link[e].dst;
			if (m->cap[e] <= 0)
				continue;
			double d = it.d + m->len[e];
			if (d < m->dist[u]) {
				m->dist[u] = d;
				m->pred[u] = e;
				heap_push(heap, n++, sizeof *heap, &(Item){d, u}, item_less);
			}
		}
	}
	return settled;
}

static void
mcf_free(Mcf *m)
{
	free(m->cap), free(m->first), free(m->out), free(m->w), free(m->src), free(m->len);
	free(m->flow), free(m->load), free(m->dist), free(m->pred), free(m->order);
	free(m->rem), free(m->acc), free(m->in_first), free(m->in), free(m->side);
	free(m->best);
}

static void
mcf_init(const CutNet *n, Mcf *m)
{
	size_t nn = (size_t)n->nnode + 1, nl = (size_t)n->nlink + 1;
	*m = (Mcf){.nnode = n->nnode, .nlink = n->nlink, .link = n->link};
	m->cap = xcalloc(nl, sizeof *m->cap);
	m->first = xcalloc(nn + 1, sizeof *m->first);
	m->out = xcalloc(nl, sizeof *m->out);
	m->w = xcalloc(nn, sizeof *m->w);
	m->src = xcalloc(nn, sizeof *m->src);
	m->len = xcalloc(nl, sizeof *m->len);
	m->flow = xcalloc(nl, sizeof *m->flow);
	m->load = xcalloc(nl, sizeof *m->load);
	m->dist = xcalloc(nn, sizeof *m->dist);
	m->pred = xcalloc(nn, sizeof *m->pred);
	m->order = xcalloc(nn, sizeof *m->order);
	m->rem = xcalloc(nn, sizeof *m->rem);
	m->acc = xcalloc(nn, sizeof *m->acc);
	int64_t top = 1;
	for (int l = 0; l < n->nlink; l++)
		top = n->link[l].bw > top ? n->link[l].bw : top;
	for (int l = 0; l < n->nlink; l++) {
		m->cap[l] = n->link[l].bw > 0 ? (double)n->link[l].bw / (double)top : 0;
		m->first[n->link[l].src + 1]++;
	}
	for (int v = 0; v < n->nnode; v++)
		m->first[v + 1] += m->first[v];
	m->in_first = xcalloc(nn + 1, sizeof *m->in_first);
	m->in = xcalloc(nl, sizeof *m->in);
	m->side = xcalloc(nn, 1);
	m->best = xcalloc(nn, 1);
	for (int l = 0; l < n->nlink; l++)
		m->in_first[n->link[l].dst + 1]++;
	for (int v = 0; v < n->nnode; v++)
		m->in_first[v + 1] += m->in_first[v];
	int *fill = xcalloc(2 * nn, sizeof *fill);
	for (int l = 0; l < n->nlink; l++) {
		m->out[m->first[n->link[l].src] + fill[n->link[l].src]++] = l;
		m->in[m->in_first[n->link[l].dst] + fill[nn + n->link[l].dst]++] = l;
	}
	free(fill);
	m->cut = INFINITY;
	for (int r = 0; r < n->nrank; r++)
		m->w[n->rank_node[r]]++;
	for (int v = 0; v < n->nnode; v++)
		if (m->w[v])
			m->src[m->nsrc++] = v;
}

/* a ball that binds more than any before */
static void
keep(Mcf *m, double ratio)
{
	m->cut = ratio;
	memcpy(m->best, m->side, (size_t)m->nnode);
}

/* The balls around the source Dijkstra just ran from, each a set S of
 * the nodes nearest to it (m->order's prefixes): lambda* <= B+(S) /
 * (W(S) (W - W(S))), W the ranks, for each (the cut's dual: 1 on the links
 * leaving S). B+ grows by a node's links out to the rest and loses its
 * links in from S as it joins. */
static void
balls(Mcf *m, int settled, double wall)
{
	memset(m->side, 0, (size_t)m->nnode);
	double b = 0, win = 0;
	for (int k = 0; k < m->nnode; k++) {
		if (k == settled) {
			if (win > 0 && win < wall) /* a rank out of reach */
				keep(m, 0);
			return;
		}
		int v = m->order[k];
		m->side[v] = 1;
		win += m->w[v];
		for (int j = m->first[v]; j < m->first[v + 1]; j++)
			b += m->side[m->link[m->out[j]].dst] ? 0 : m->cap[m->out[j]];
		for (int j = m->in_first[v]; j < m->in_first[v + 1]; j++)
			b -= m->side[m->link[m->in[j]].src] && m->link[m->in[j]].src != v
			         ? m->cap[m->in[j]] : 0;
		if (win > 0 && win < wall && fmax(b, 0) / (win * (wall - win)) < m->cut)
			keep(m, fmax(b, 0) / (win * (wall - win)));
	}
}

/* alpha(l): the demands times their l-shortest paths, all sources; 0 < it
 * unless some pair has no path (then INFINITY). The balls' cuts on the way. */
static double
alpha(Mcf *m, Item *heap)
{
	double sum = 0, wall = 0;
	for (int i = 0; i < m->nsrc; i++)
		wall += m->w[m->src[i]];
	for (int i = 0; i < m->nsrc; i++) {
		int s = m->src[i];
		balls(m, dijkstra(m, s, heap), wall);
		for (int j = 0; j < m->nsrc; j++)
			if (j != i)
				sum += (double)m->w[s] * m->w[m->src[j]] * m->dist[m->src[j]];
	}
	return sum;
}

/* D(l) / alpha(l): an upper bound on lambda* (scaled capacities) */
static double
dual_value(Mcf *m, Item *heap)
{
	double d = 0;
	for (int e = 0; e < m->nlink; e++)
		d += m->len[e] * m->cap[e];
	double a = alpha(m, heap);
	return fmin(m->cut, a > 0 ? d / a : INFINITY);
}

/* The flow's worst load over capacity (0 when nothing is routed). */
static double
congestion(const Mcf *m)
{
	double worst = 0;
	for (int e = 0; e < m->nlink; e++)
		if (m->flow[e] > 0)
			worst = fmax(worst, m->cap[e] > 0 ? m->flow[e] / m->cap[e] : INFINITY);
	return worst;
}

/* Routes scale times source s's demands on l-shortest-path trees, in
 * steps of as much as every link takes (Fleischer's), lengthening each
 * link used by (1 + eps load / capacity). */
static void
route_source(Mcf *m, int si, double scale, double eps, Item *heap)
{
	int s = m->src[si];
	for (int v = 0; v < m->nnode; v++)
		m->rem[v] = v != s && m->w[v] ? scale * m->w[s] * m->w[v] : 0;
	for (int step = 0; step < m->nlink + 1; step++) {
		int settled = dijkstra(m, s, heap);
		for (int v = 0; v < m->nnode; v++)
			m->acc[v] = m->rem[v];
		double sigma = 1;
		for (int k = settled - 1; k > 0; k--) {
			int v = m->order[k], e = m->pred[v];
			m->load[e] = m->acc[v];
			m->acc[m->link[e].src] += m->acc[v];
			if (m->acc[v] > 0)
				sigma = fmin(sigma, m->cap[e] / m->acc[v]);
		}
		for (int k = settled - 1; k > 0; k--) {
			int e = m->pred[m->order[k]];
			double f = sigma * m->load[e];
			m->flow[e] += f;
			m->len[e] *= 1 + eps * f / m->cap[e];
		}
		bool done = sigma >= 1;
		for (int v = 0; v < m->nnode; v++)
			m->rem[v] = done ? 0 : m->rem[v] * (1 - sigma);
		if (done)
			return;
	}
	/* each step saturates a link, whose length then grows by 1 + eps;
	 * the last step routes the rest whatever it loads (the certificate
	 * counts it) */
	int settled = dijkstra(m, s, heap);
	for (int k = settled - 1; k > 0; k--) {
		int v = m->order[k], e = m->pred[v];
		m->flow[e] += m->rem[v];
		m->rem[m->link[e].src] += m->rem[v];
	}
}

/* Lengths scaled so the largest is 1: the ratios and the trees stay, and
 * no length overflows. */
static void
renormalize(Mcf *m)
{
	double top = 0;
	for (int e = 0; e < m->nlink; e++)
		top = fmax(top, m->len[e]);
	for (int e = 0; top > 0 && e < m->nlink; e++)
		m->len[e] /= top;
}

double
a2abound_work(const CutNet *n)
{
	if (n->arc_transitive)
		return (double)n->nnode * (n->nnode + n->nlink);
	int nsrc = 0;
	unsigned char *seen = xcalloc((size_t)n->nnode + 1, 1);
	for (int r = 0; r < n->nrank; r++)
		if (!seen[n->rank_node[r]]) {
			seen[n->rank_node[r]] = 1;
			nsrc++;
		}
	free(seen);
	/* a Dijkstra costs about (nodes + links) log nodes; a phase one per
	 * source and step, the dual another per source */
	double pass = ((double)n->nnode + n->nlink) * log2(n->nnode + 2.0);
	return (double)A2A_PHASES * 3 * nsrc * pass;
}

/* The closed form on arc-transitive networks: every shortest-path routing
 * averaged over the automorphisms loads every link alike, so the hop
 * bound D/alpha at l = 1 is a flow too. */
static void
closed_form(Mcf *m, A2ABound *b, Item *heap)
{
	for (int e = 0; e < m->nlink; e++)
		m->len[e] = 1;
	b->lo = b->hi = dual_value(m, heap);
	b->closed = true;
}

/* the start: hi from the duals l = 1 (the hop bound) and l = 1/c, with
 * their balls (each rank node alone among them: the injection bound) */
static void
start(Mcf *m, A2ABound *b, Item *heap)
{
	for (int e = 0; e < m->nlink; e++)
		m->len[e] = 1;
	b->hi = dual_value(m, heap);
	for (int e = 0; e < m->nlink; e++)
		m->len[e] = m->cap[e] > 0 ? 1 / m->cap[e] : 1;
	b->hi = fmin(b->hi, dual_value(m, heap));
}

/* Zeroes the flow: a new window of phases, whose average is the primal. */
static void
new_window(Mcf *m)
{
	memset(m->flow, 0, (size_t)m->nlink * sizeof *m->flow);
}

/* The phases, from lengths 1/c. Each routes scale (the best hi, about the
 * most the optimum carries) times the demands, so a phase moves a loaded
 * link's length by about eps. eps starts at A2A_EPS0 and halves, with a new
 * window of flow, whenever the gap is under A2A_REFINE eps: the
 * lengths keep what they learnt, and the flow forgets the coarse steps. */
static void
phases(Mcf *m, A2ABound *b, Item *heap)
{
	double eps = A2A_EPS0, scale = b->hi, sum = 0;
	for (int e = 0; e < m->nlink; e++)
		m->len[e] = m->cap[e] > 0 ? 1 / m->cap[e] : 1;
	for (int t = 0; t < A2A_PHASES && b->hi > b->lo * (1 + A2A_GAP); t++) {
		for (int i = 0; i < m->nsrc; i++)
			route_source(m, i, scale, eps, heap);
		sum += scale;
		b->lo = fmax(b->lo, sum / congestion(m));
		b->hi = fmin(b->hi, dual_value(m, heap));
		renormalize(m);
		b->phases = t + 1;
		if (b->hi < b->lo * (1 + A2A_REFINE * eps) && eps > A2A_EPS_MIN) {
			eps /= 2;
			scale = b->hi;
			sum = 0;
			new_window(m);
		}
	}
}

CutStatus
a2abound(const CutNet *n, A2ABound *b)
{
	*b = (A2ABound){0};
	if (a2abound_work(n) > MAX_A2A_WORK)
		return CUT_TOO_LARGE;
	Mcf m;
	mcf_init(n, &m);
	if (m.nsrc < 2) {
		mcf_free(&m);
		return CUT_UNBOUNDED;
	}
	Item *heap = xmalloc(((size_t)m.nlink + m.nnode + 1) * sizeof *heap);
	double unit = 1;
	for (int l = 0; l < n->nlink; l++)
		unit = fmax(unit, (double)n->link[l].bw);
	if (n->arc_transitive) {
		closed_form(&m, b, heap);
	} else {
		start(&m, b, heap);
		if (isfinite(b->hi) && b->hi > 0)
			phases(&m, b, heap);
		if (!isfinite(b->hi))
			b->hi = 0; /* some pair has no path: nothing can be sent */
		b->lo = fmin(b->lo, b->hi);
	}
	if (b->hi == m.cut && !b->closed) {
		/* a cut binds: named, with its bandwidth and ranks */
		b->cut = xmalloc((size_t)m.nnode + 1);
		memcpy(b->cut, m.best, (size_t)m.nnode);
		for (int v = 0; v < m.nnode; v++)
			b->cut_ranks += b->cut[v] ? m.w[v] : 0;
		for (int l = 0; l < m.nlink; l++)
			if (b->cut[n->link[l].src] && !b->cut[n->link[l].dst])
				b->cut_bw += n->link[l].bw > 0 ? n->link[l].bw : 0;
	}
	b->lo *= unit;
	b->hi *= unit;
	free(heap);
	mcf_free(&m);
	return CUT_OK;
}
