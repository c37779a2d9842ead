/*
 * cutbound.c: exact cut bounds of collectives (cutbound.h), on max flows
 * (flow.h). The proofs are docs/algorithms.md's, "The cut bound".
 *
 * Needs: a CutNet (plain data); ranks on distinct nodes or not (a node's
 * ranks count with their number).
 * Establishes: x* and lambda as exact fractions, each with a set S that
 * attains it.
 *
 * Scale: capacities are divided by their greatest common divisor g: 12.5,
 * 16 and 300 GB/s (100, 128 and 2400 Gb/s) become 25, 32 and 600 with
 * g = 4 Gb/s. Every max flow then runs on integers
 * (capacities times a denominator of at most N, flows up to N times the
 * rate's numerator); their size is checked against INT64_MAX before a
 * graph is built, so no sum can overflow.
 *
 * x* (allgather): the graph has a super source s joined to every rank node
 * u with capacity x w(u) (w: the ranks on u); by max-flow min-cut, the
 * least s-v cut is min over S not holding v of q B+(S) + p (N - r(S)) at
 * x = p/q (links scaled by q), which is at least N p exactly when
 * B+(S) >= x r(S) for every such S. So x is feasible (x <= x*) iff every
 * rank node v receives N p. Starting from x = min B+(u) / w(u) over rank
 * nodes (an upper bound on x*: S = {u}), each target v is checked; when
 * the flow falls short, the source side S of the minimum cut has
 * B+(S) / r(S) < x, and x becomes that (Newton's step: it strictly
 * decreases, and the targets already passed stay feasible, since lowering
 * x lowers only the source edges). x* is reached after N flows plus one per
 * step, and the last S binds.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cutbound.h"
#include "flow.h"
#include "ir.h"

static Frac
frac(int64_t num, int64_t den)
{
	int64_t g = gcd64(num < 0 ? -num : num, den);
	return g > 1 ? (Frac){num / g, den / g} : (Frac){num, den};
}

/* the products of frac_cmp pass 64 bits; gcc and clang have 128 */
__extension__ typedef __int128 Wide;

int
frac_cmp(Frac a, Frac b)
{
	Wide l = (Wide)a.num * b.den, r = (Wide)b.num * a.den;
	return (l > r) - (l < r);
}

double
frac_value(Frac a)
{
	return (double)a.num / (double)a.den;
}

/* The network as the flows see it: capacities over g, links reversed or
 * not, the ranks per node. */
typedef struct Scaled {
	int nnode, nlink, nrank;
	int64_t g;           /* the divisor of every capacity (bits/s) */
	const CutLink *link;
	bool reversed;
	bool transitive, symmetric; /* as CutNet's; the links reversed are the same */
	int *w;              /* nnode: ranks on the node */
	int64_t total;       /* the sum of the scaled capacities */
} Scaled;

static int
link_src(const Scaled *s, int l)
{
	return s->reversed ? s->link[l].dst : s->link[l].src;
}

static int
link_dst(const Scaled *s, int l)
{
	return s->reversed ? s->link[l].src : s->link[l].dst;
}

static int64_t
link_cap(const Scaled *s, int l)
{
	return s->link[l].bw > 0 ? s->link[l].bw / s->g : 0;
}

/* CUT_OK, or CUT_TOO_LARGE when N times the capacities' sum times N could
 * pass INT64_MAX (the largest product the flows form), or CUT_UNBOUNDED. */
static CutStatus
scale(const CutNet *n, bool reversed, Scaled *s)
{
	*s = (Scaled){.nnode = n->nnode, .nlink = n->nlink, .nrank = n->nrank, .link = n->link,
	              .reversed = reversed, .transitive = n->transitive};
	for (int l = 0; l < n->nlink; l++)
		if (n->link[l].bw > 0)
			s->g = gcd64(n->link[l].bw, s->g);
	s->w = xcalloc((size_t)n->nnode + 1, sizeof *s->w);
	int nodes = 0;
	for (int r = 0; r < n->nrank; r++)
		nodes += s->w[n->rank_node[r]]++ == 0;
	if (nodes < 2)
		return CUT_UNBOUNDED;
	if (s->g == 0)
		s->g = 1; /* no capacity at all: every rate is 0 */
	/* the flows' largest figure is N^2 times the scaled total; the rates
	 * back in bits/s are at most the unscaled total */
	int64_t lim = INT64_MAX / 4 / ((int64_t)n->nrank * n->nrank + 1), raw = 0;
	for (int l = 0; l < n->nlink; l++)
		if (__builtin_add_overflow(s->total, link_cap(s, l), &s->total) || s->total > lim ||
		    __builtin_add_overflow(raw, n->link[l].bw > 0 ? n->link[l].bw : 0, &raw) ||
		    raw > INT64_MAX / 4)
			return CUT_TOO_LARGE;
	return CUT_OK;
}

/* B+(S) (scaled) of the node set side[] */
static int64_t
out_cap(const Scaled *s, const unsigned char *side)
{
	int64_t sum = 0;
	for (int l = 0; l < s->nlink; l++)
		if (side[link_src(s, l)] && !side[link_dst(s, l)])
			sum += link_cap(s, l);
	return sum;
}

/* A flow graph of the links (edge l is link l) and, when super, node nnode
 * as a super source with an edge to every rank node (edge nlink + u... in
 * the order of the nodes; *src_edge[u] its id or -1). */
static FlowGraph *
graph_of(const Scaled *s, bool super, int *src_edge)
{
	FlowGraph *g = flow_new(s->nnode + super);
	for (int l = 0; l < s->nlink; l++)
		flow_add_edge(g, link_src(s, l), link_dst(s, l), link_cap(s, l));
	for (int u = 0; super && u < s->nnode; u++)
		src_edge[u] = s->w[u] ? flow_add_edge(g, s->nnode, u, 0) : -1;
	return g;
}

/* The rate of the set S (the flow graph's source side minus the super
 * source): B+(S) / r(S), kept as the binding one. */
static void
take_cut(const Scaled *s, const unsigned char *side, CutRate *best)
{
	memcpy(best->cut, side, (size_t)s->nnode);
	int k = 0;
	for (int u = 0; u < s->nnode; u++)
		k += side[u] ? s->w[u] : 0;
	int64_t b = out_cap(s, side);
	best->cut_ranks = k;
	best->cut_bw = b; /* scaled; multiplied by g at the end */
	best->rate = frac(b, k);
}

/* x* by Newton's iteration over the targets (the file's opening). */
static void
rate_per_rank(const Scaled *s, CutRate *best)
{
	best->cut = xcalloc((size_t)s->nnode + 1, 1);
	unsigned char *side = xcalloc((size_t)s->nnode + 2, 1);
	/* start: the best single rank node */
	bool have = false;
	for (int u = 0; u < s->nnode; u++) {
		if (!s->w[u])
			continue;
		memset(side, 0, (size_t)s->nnode);
		side[u] = 1;
		int64_t b = out_cap(s, side);
		if (!have || frac_cmp(frac(b, s->w[u]), best->rate) < 0) {
			take_cut(s, side, best);
			have = true;
		}
	}
	int *src_edge = xmalloc(((size_t)s->nnode + 1) * sizeof *src_edge);
	FlowGraph *g = graph_of(s, true, src_edge);
	int ss = s->nnode;
	bool one = s->transitive;
	for (int v = 0; v < s->nnode; v++) {
		if (!s->w[v])
			continue;
		for (;;) {
			int64_t p = best->rate.num, q = best->rate.den;
			flow_reset(g);
			for (int l = 0; l < s->nlink; l++)
				flow_set_cap(g, l, link_cap(s, l) * q);
			for (int u = 0; u < s->nnode; u++)
				if (src_edge[u] >= 0)
					flow_set_cap(g, src_edge[u], p * s->w[u]);
			int64_t need = p * s->nrank;
			if (flow_max(g, ss, v, need) >= need)
				break;
			flow_source_side(g, ss, side);
			take_cut(s, side, best);
		}
		if (one)
			break; /* every other target is this one's image */
	}
	flow_free(g);
	free(src_edge);
	free(side);
}

/* lambda: min B+(S) over S holding a rank and missing one; with root >= 0
 * only the S holding the root's node (broadcast). Without a root: every S
 * either holds rank 0's node, and misses some rank node v (an S of the flow
 * 0 -> v), or misses it and holds some v (v -> 0). */
static void
rank_connectivity(const Scaled *s, int root_node, CutRate *best)
{
	best->cut = xcalloc((size_t)s->nnode + 1, 1);
	unsigned char *side = xcalloc((size_t)s->nnode + 1, 1);
	FlowGraph *g = graph_of(s, false, NULL);
	int a = root_node;
	if (a < 0)
		for (a = 0; !s->w[a]; a++)
			;
	bool have = false;
	for (int v = 0; v < s->nnode; v++) {
		if (!s->w[v] || v == a)
			continue;
		/* symmetric links: every cut's capacity is the same both ways */
		for (int dir = 0; dir < 1 + (root_node < 0 && !s->symmetric); dir++) {
			int from = dir ? v : a, to = dir ? a : v;
			flow_reset(g);
			int64_t f = flow_max(g, from, to, have ? best->rate.num : FLOW_INF);
			if (have && f >= best->rate.num)
				continue;
			flow_source_side(g, from, side);
			memcpy(best->cut, side, (size_t)s->nnode);
			int k = 0;
			for (int u = 0; u < s->nnode; u++)
				k += side[u] ? s->w[u] : 0;
			best->cut_ranks = k;
			best->cut_bw = f;
			best->rate = (Frac){f, 1};
			have = true;
		}
	}
	flow_free(g);
	free(side);
}

static bool symmetric(const CutNet *);

/* The rates back in bits/s: times g. */
static void
unscale(const Scaled *s, CutRate *r)
{
	r->cut_bw *= s->g;
	r->rate = frac(r->rate.num * s->g, r->rate.den);
}

static double
ag_busbw(Frac x, int nrank)
{
	return frac_value(x) * (nrank - 1) / 8;
}

/* allreduce's composition: M/N at x*_rs, then M/N at x*_ag; its busbw is
 * 2(N-1)/N x M / T = 2(N-1) / (1/x_rs + 1/x_ag) (bits to bytes). */
static double
composition_busbw(Frac rs, Frac ag, int nrank)
{
	if (rs.num == 0 || ag.num == 0)
		return 0;
	double inv = (double)rs.den / (double)rs.num + (double)ag.den / (double)ag.num;
	return 2.0 * (nrank - 1) / inv / 8;
}

double
cutbound_work(const CutNet *n, CollKind k)
{
	double pass = (double)n->nnode + n->nlink + n->nrank + 1, x = 0, lam = 0;
	if (k == CK_ALLGATHER || k == CK_REDUCE_SCATTER || k == CK_ALLREDUCE)
		x = n->transitive ? 1 : n->nrank;
	if (k == CK_REDUCE_SCATTER || (k == CK_ALLREDUCE && !symmetric(n)))
		x *= 2; /* allreduce: both phases */
	if (k == CK_BROADCAST || k == CK_REDUCE)
		lam = n->nrank;
	if (k == CK_ALLREDUCE)
		lam = symmetric(n) ? n->nrank : 2.0 * n->nrank;
	return (x + lam + 1) * pass;
}

static CutStatus
run_kind(const CutNet *n, CollKind k, CutBound *out)
{
	bool rev = k == CK_REDUCE_SCATTER || k == CK_REDUCE;
	Scaled s;
	CutStatus st = scale(n, rev, &s);
	s.symmetric = k == CK_ALLREDUCE && symmetric(n);
	int root = k == CK_BROADCAST || k == CK_REDUCE ? n->rank_node[n->root] : -1;
	if (st == CUT_OK) {
		switch (k) {
		case CK_ALLGATHER:
		case CK_REDUCE_SCATTER:
			rate_per_rank(&s, &out->bound);
			unscale(&s, &out->bound);
			out->busbw = out->achievable = ag_busbw(out->bound.rate, n->nrank);
			break;
		case CK_BROADCAST:
		case CK_REDUCE:
		case CK_ALLREDUCE:
			rank_connectivity(&s, root, &out->bound);
			unscale(&s, &out->bound);
			out->busbw = frac_value(out->bound.rate) / 8;
			if (k == CK_ALLREDUCE)
				out->busbw *= 2.0 * (n->nrank - 1) / n->nrank;
			break;
		default:
			st = CUT_NONE;
		}
	}
	free(s.w);
	return st;
}

static int
cmp_link(const void *a, const void *b)
{
	const CutLink *x = a, *y = b;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	return (x->bw > y->bw) - (x->bw < y->bw);
}

/* Whether the links reversed are the same links (every link has a twin the
 * other way of its bandwidth): then reduce-scatter's cuts are allgather's. */
static bool
symmetric(const CutNet *n)
{
	size_t m = (size_t)n->nlink;
	CutLink *a = xmalloc((m + 1) * sizeof *a), *b = xmalloc((m + 1) * sizeof *b);
	for (size_t l = 0; l < m; l++) {
		a[l] = n->link[l];
		b[l] = (CutLink){n->link[l].dst, n->link[l].src, n->link[l].bw};
	}
	sort_n(a, m, sizeof *a, cmp_link);
	sort_n(b, m, sizeof *b, cmp_link);
	bool same = m == 0 || memcmp(a, b, m * sizeof *a) == 0;
	free(a);
	free(b);
	return same;
}

/* The gossip bound of allreduce (docs/algorithms.md): every element takes
 * 2(N - 1) sends from rank to rank, each leaving a rank's node, so busbw
 * is at most the ranks' summed outgoing bandwidth over N. Bits/s times N. */
static Wide
gossip_sum(const CutNet *n)
{
	int64_t *out = xcalloc((size_t)n->nnode + 1, sizeof *out);
	Wide sum = 0;
	for (int l = 0; l < n->nlink; l++)
		out[n->link[l].src] += n->link[l].bw > 0 ? n->link[l].bw : 0;
	for (int r = 0; r < n->nrank; r++)
		sum += out[n->rank_node[r]];
	free(out);
	return sum;
}

/* allreduce beyond lambda: the phases' x* and the gossip bound */
static CutStatus
allreduce_parts(const CutNet *n, CutBound *out)
{
	CutBound rs = {0}, ag = {0};
	CutStatus st = run_kind(n, CK_ALLGATHER, &ag);
	if (st == CUT_OK && symmetric(n)) {
		rs = ag;
		rs.bound.cut = xmalloc((size_t)n->nnode + 1);
		memcpy(rs.bound.cut, ag.bound.cut, (size_t)n->nnode);
	} else if (st == CUT_OK) {
		st = run_kind(n, CK_REDUCE_SCATTER, &rs);
	}
	out->rs = rs.bound;
	out->ag = ag.bound;
	if (st != CUT_OK)
		return st;
	out->achievable = composition_busbw(rs.bound.rate, ag.bound.rate, n->nrank);
	/* gossip < 2(N-1)/N lambda, compared exactly: sum < 2(N-1) lambda */
	Wide sum = gossip_sum(n);
	Wide lam2 = (Wide)2 * (n->nrank - 1) * out->bound.rate.num;
	if (!n->in_network && (Wide)sum * out->bound.rate.den < lam2) {
		out->gossip = true;
		out->busbw = (double)sum / n->nrank / 8;
	}
	return CUT_OK;
}

CutStatus
cutbound(const CutNet *n, CollKind k, CutBound *out)
{
	*out = (CutBound){.kind = k};
	if (k == CK_ALLTOALL) {
		CutStatus st = a2abound(n, &out->a2a);
		out->bound.cut = out->a2a.cut; /* cutbound_free's */
		out->a2a.cut = NULL;
		out->bound.cut_bw = out->a2a.cut_bw;
		out->bound.cut_ranks = out->a2a.cut_ranks;
		out->busbw = out->a2a.hi * (n->nrank - 1) / 8;
		out->achievable = out->a2a.lo * (n->nrank - 1) / 8;
		return out->status = st;
	}
	if (cutbound_work(n, k) > MAX_CUT_WORK)
		return out->status = CUT_TOO_LARGE;
	CutStatus st = run_kind(n, k, out);
	if (st == CUT_OK && k == CK_ALLREDUCE)
		st = allreduce_parts(n, out);
	if (st != CUT_OK) {
		cutbound_free(out);
		*out = (CutBound){.kind = k};
	}
	return out->status = st;
}

void
cutbound_free(CutBound *b)
{
	free(b->bound.cut);
	free(b->rs.cut);
	free(b->ag.cut);
	b->bound.cut = b->rs.cut = b->ag.cut = NULL;
}

/* Whether every link has the same bandwidth and every node the same
 * number of links out and in (what translations keep). */
bool
cutnet_uniform(const CutNet *n)
{
	int *deg = xcalloc(2 * (size_t)n->nnode + 1, sizeof *deg);
	bool ok = true;
	for (int l = 0; l < n->nlink; l++) {
		ok &= n->link[l].bw == n->link[0].bw;
		deg[2 * n->link[l].src]++;
		deg[2 * n->link[l].dst + 1]++;
	}
	for (int v = 0; v < 2 * n->nnode; v++)
		ok &= deg[v] == deg[v & 1];
	free(deg);
	return ok;
}

bool
sides_equal(int ndim, const int *size)
{
	for (int d = 1; d < ndim; d++)
		if (size[d] != size[0])
			return false;
	return true;
}

CutLink *
cutnet_topo(const Topo *t, const int *rank_node, int nrank, int root, CutNet *n)
{
	CutLink *link = xmalloc(((size_t)t->nlink + 1) * sizeof *link);
	for (int l = 0; l < t->nlink; l++)
		link[l] = (CutLink){t->link[l].src, t->link[l].dst, llround(t->link[l].bandwidth)};
	*n = (CutNet){.nnode = t->nnode, .nlink = t->nlink, .link = link, .nrank = nrank,
	              .rank_node = rank_node, .root = root};
	bool translations = t->kind == TK_TORUS || t->kind == TK_RING || t->kind == TK_HYPERX ||
	                    t->kind == TK_FULL;
	n->transitive = translations && !t->is_switch && nrank == t->nnode && cutnet_uniform(n);
	n->in_network = topo_any_reduces(t);
	n->arc_transitive = n->transitive && sides_equal(t->ndim, t->size);
	return link;
}

CutStatus
cutbound_topo(const Topo *t, const int *rank_node, int nrank, int root, CollKind k,
              CutBound *out)
{
	CutNet n;
	CutLink *link = cutnet_topo(t, rank_node, nrank, root, &n);
	CutStatus st = cutbound(&n, k, out);
	free(link);
	return st;
}
