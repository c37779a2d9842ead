/*
 * packing.c: spanning out-trees packed into integer link capacities
 * (packing.h; the method and its proof: docs/algorithms.md "Optimal tree
 * packings").
 *
 * Needs: a graph whose capacities meet the cut condition: with a source s
 * joined to each rank r by quota[r] and K = sum(quota), every rank t has
 * lambda(s, t) >= K (flow.h's max flows decide it).
 * Establishes: trees with multiplicities, quota[r] copies rooted at each
 * rank r, each spanning every rank, no link used by more copies than its
 * capacity; every tree edge is a route of links.
 *
 * Two phases, both keeping the cut condition at every step:
 *   1. Switches are split off (Mader; Bang-Jensen, Frank and Jackson): a
 *      pair u -> w -> v at switch w is replaced by an arc u -> v of as much
 *      capacity gamma as keeps lambda(s, t) >= K for every rank t; gamma is
 *      found by trying the most and backing off to the violated cut. The
 *      arc remembers its routes (pieces: an amount and a link path).
 *   2. Trees are grown one at a time on the ranks alone (Lovasz's proof of
 *      Edmonds' theorem, with multiplicities): a tree of m copies rooted at
 *      r takes the arc a -> b (a in it, b not) that keeps every set X it
 *      enters with in-capacity >= K after its m copies leave; when no arc
 *      keeps all m copies, m drops to the most some arc keeps and the other
 *      copies make later trees. Candidate arcs are tried shallowest tail
 *      first: few trees first, low height second.
 * Finally each tree's edges take routes from their arcs' pieces; a tree
 * whose edge meets two pieces is cut into copies, one per route choice.
 */
#include <stdlib.h>
#include <string.h>

#include "collc_limits.h"

#include "flow.h"
#include "packing.h"

typedef struct Piece {
	int64_t amount;
	int nhop;
	const int *link;
	int next; /* the next piece of its arc, or -1 */
} Piece;

/* Violated sets phase 2 met (most_copies' failed flows), kept to bound
 * later candidates without a flow: a set's source side, its capacity
 * before the tree being grown loses copies (base), and the bound on the
 * copies it allows that tree now (ub). */
typedef struct CutMemo {
	int n, next, room;    /* sets held; the slot to overwrite next; slots */
	unsigned char *side;  /* MAX_PACK_CUTS * (nnode + 1) */
	int64_t *base, *ub;   /* MAX_PACK_CUTS */
} CutMemo;

/* Each rank's last flow of value >= K from s (a certificate): while the
 * capacities still hold it, lambda(s, rank) >= K without a max flow. None
 * where they would pass MAX_PACK_CERT values. */
typedef struct Cert {
	bool on;
	int64_t **flow;  /* nrank: per flow edge */
	int *n, *cap;    /* nrank: edges held (0: none), room */
	int64_t *value;  /* nrank */
} Cert;

/* One skeleton tree of phase 2, before routes. */
typedef struct Skel {
	int root;
	int64_t mult;
	int *parent, *depth; /* nrank */
} Skel;

typedef struct Pk {
	const PackInput *in;
	Arena scratch;        /* piece routes and skeletons */
	int n, s;             /* n graph nodes; node n is the source s */
	FlowGraph *g;
	int *eid;             /* n * n: the flow edge of arc u -> v, or -1 */
	int *head, *tail;     /* n * n: its pieces, or -1 */
	Piece *piece;
	int npiece, cappiece;
	int *quota_e, *help_e; /* nrank: edges s -> rank: the quota, a helper (cap 0 but in tests) */
	int64_t K;            /* sum of the remaining quotas */
	int64_t cut;          /* the flow value of the last failed check */
	unsigned char *side;  /* n + 1: the source side of that cut */
	Piece *ta, *tb;       /* pieces taken from two arcs (split) */
	int capta, captb;
	CutMemo cm;
	Cert cert;
} Pk;

static size_t
pair(const Pk *p, int u, int v)
{
	return (size_t)u * (size_t)p->n + (size_t)v;
}

static int64_t
arc_cap(const Pk *p, int u, int v)
{
	int e = p->eid[pair(p, u, v)];
	return e < 0 ? 0 : flow_edge_cap(p->g, e);
}

static void
set_arc_cap(Pk *p, int u, int v, int64_t c)
{
	size_t k = pair(p, u, v);
	if (p->eid[k] < 0)
		p->eid[k] = flow_add_edge(p->g, u, v, c);
	else
		flow_set_cap(p->g, p->eid[k], c);
}

static void
push_piece(Pk *p, int u, int v, int64_t amount, int nhop, const int *link)
{
	if (p->npiece == p->cappiece) {
		p->cappiece = p->cappiece ? 2 * p->cappiece : 64;
		p->piece = xrealloc(p->piece, (size_t)p->cappiece * sizeof *p->piece);
	}
	int id = p->npiece++;
	p->piece[id] = (Piece){amount, nhop, link, -1};
	size_t k = pair(p, u, v);
	if (p->tail[k] < 0)
		p->head[k] = id;
	else
		p->piece[p->tail[k]].next = id;
	p->tail[k] = id;
}

/* Takes `amount` units from the front of arc u -> v's pieces into *out. */
static int
take_front(Pk *p, int u, int v, int64_t amount, Piece **out, int *cap)
{
	size_t k = pair(p, u, v);
	int n = 0;
	while (amount > 0 && p->head[k] >= 0) {
		Piece *f = &p->piece[p->head[k]];
		int64_t d = f->amount < amount ? f->amount : amount;
		if (n == *cap) {
			*cap = *cap ? 2 * *cap : 16;
			*out = xrealloc(*out, (size_t)*cap * sizeof **out);
		}
		(*out)[n++] = (Piece){d, f->nhop, f->link, -1};
		f->amount -= d;
		amount -= d;
		if (f->amount == 0) {
			p->head[k] = f->next;
			if (f->next < 0)
				p->tail[k] = -1;
		}
	}
	if (amount > 0)
		die("packing: arc %d -> %d holds fewer units than its capacity", u, v);
	return n;
}

/* Whether rank i's certificate fits the capacities as they are now. */
static bool
cert_holds(const Pk *p, int i)
{
	const Cert *c = &p->cert;
	if (!c->on || c->n[i] == 0 || c->value[i] < p->K)
		return false;
	for (int e = 0; e < c->n[i]; e++)
		if (c->flow[i][e] > flow_edge_cap(p->g, e))
			return false;
	return true;
}

/* Room for every flow edge in rank i's certificate (new ones carry 0). */
static void
cert_grow(Cert *c, int i, int nedge)
{
	if (nedge > c->cap[i]) {
		c->cap[i] = 2 * nedge;
		c->flow[i] = xrealloc(c->flow[i], (size_t)c->cap[i] * sizeof **c->flow);
	}
	for (int e = c->n[i]; e < nedge; e++)
		c->flow[i][e] = 0;
	c->n[i] = nedge;
}

/* min(lambda(s, rank i), K) as a max flow from 0 would find it when the
 * certificate does not settle it: the failed flow's value and its least
 * minimum cut (p->side) are the max flow's, whichever flow certified the
 * earlier checks, so the packing is the same as with a flow every time. */
static int64_t
rank_flow(Pk *p, int i)
{
	if (cert_holds(p, i))
		return p->cert.value[i];
	flow_reset(p->g);
	int64_t f = flow_max(p->g, p->s, p->in->rank_node[i], p->K);
	if (p->cert.on && f >= p->K) {
		cert_grow(&p->cert, i, flow_nedge(p->g));
		flow_get(p->g, p->cert.flow[i]);
		p->cert.value[i] = f;
	}
	return f;
}

/* A split of gamma > 0 units u -> w -> v: each certificate's flow along
 * u -> w -> v moves to u -> v (as much as gamma), which keeps it a flow
 * of the same value and often within the new capacities. */
static void
cert_shortcut(Pk *p, int u, int w, int v, int64_t gamma)
{
	Cert *c = &p->cert;
	int eu = p->eid[pair(p, u, w)], ev = p->eid[pair(p, w, v)], euv = p->eid[pair(p, u, v)];
	for (int i = 0; c->on && i < p->in->nrank; i++) {
		if (c->n[i] == 0)
			continue;
		cert_grow(c, i, flow_nedge(p->g));
		int64_t *f = c->flow[i], d = gamma < f[eu] ? gamma : f[eu];
		d = f[ev] < d ? f[ev] : d;
		f[eu] -= d;
		f[ev] -= d;
		f[euv] += d;
	}
}

/* The first rank t with lambda(s, t) < K, its cut in p->side and p->cut;
 * -1 when there is none. */
static int
first_short_rank(Pk *p)
{
	for (int i = 0; i < p->in->nrank; i++) {
		int64_t f = rank_flow(p, i);
		if (f < p->K) {
			p->cut = f;
			flow_source_side(p->g, p->s, p->side);
			return i;
		}
	}
	return -1;
}

static void
apply_split(Pk *p, int u, int w, int v, int64_t gamma)
{
	set_arc_cap(p, u, w, arc_cap(p, u, w) - gamma);
	set_arc_cap(p, w, v, arc_cap(p, w, v) - gamma);
	set_arc_cap(p, u, v, arc_cap(p, u, v) + gamma);
	if (gamma > 0)
		cert_shortcut(p, u, w, v, gamma);
}

/* The routes of gamma units u -> w -> v: pieces of u -> w joined to pieces
 * of w -> v, in order. */
static void
move_pieces(Pk *p, int u, int w, int v, int64_t gamma)
{
	int na = take_front(p, u, w, gamma, &p->ta, &p->capta);
	int nb = take_front(p, w, v, gamma, &p->tb, &p->captb);
	int i = 0, j = 0;
	while (i < na && j < nb) {
		Piece *a = &p->ta[i], *b = &p->tb[j];
		int64_t d = a->amount < b->amount ? a->amount : b->amount;
		int *link = arena_array(&p->scratch, (size_t)(a->nhop + b->nhop), sizeof *link);
		memcpy(link, a->link, (size_t)a->nhop * sizeof *link);
		memcpy(link + a->nhop, b->link, (size_t)b->nhop * sizeof *link);
		push_piece(p, u, v, d, a->nhop + b->nhop, link);
		a->amount -= d;
		b->amount -= d;
		i += a->amount == 0;
		j += b->amount == 0;
	}
}

/* Splits off as much of u -> w -> v as keeps the cut condition; whether
 * any was. A failed try's violated set T (s in T, a rank not) has u, v on
 * one side and w on the other, so it lost exactly gamma: it allows its old
 * surplus. */
static bool
split_pair(Pk *p, int u, int w, int v, int64_t want)
{
	int64_t cu = arc_cap(p, u, w), cv = arc_cap(p, w, v);
	int64_t gamma = cu < cv ? cu : cv;
	gamma = want < gamma ? want : gamma;
	while (gamma > 0) {
		apply_split(p, u, w, v, gamma);
		if (first_short_rank(p) < 0) {
			move_pieces(p, u, w, v, gamma);
			return true;
		}
		apply_split(p, u, w, v, -gamma);
		int64_t allowed = p->cut + gamma - p->K;
		gamma = allowed < gamma ? allowed : gamma - 1;
	}
	return false;
}

/* Splits in-arc u -> w evenly over w's out-arcs, starting at the
 * start-th, all of it checked at once (one pass of max flows), or none of
 * it when a cut forbids that (split_switch's pairs then take it whole: trying
 * the even shares pair by pair made 32 ranks on a 10 x 10 torus 10 times
 * slower). g holds nout amounts. */
static void
spread_arc(Pk *p, int u, int w, const int *outs, int nout, int start, int64_t *g)
{
	int64_t left = arc_cap(p, u, w);
	int nv = nout - (arc_cap(p, w, u) > 0);
	for (int jj = 0; jj < nout; jj++) {
		int j = (start + jj) % nout, v = outs[j];
		g[j] = 0;
		if (v == u || nv == 0)
			continue;
		int64_t want = (left + nv - 1) / nv, cv = arc_cap(p, w, v);
		g[j] = want < cv ? want : cv;
		left -= g[j];
		nv--;
	}
	for (int j = 0; j < nout; j++)
		if (g[j] > 0)
			apply_split(p, u, w, outs[j], g[j]);
	if (first_short_rank(p) < 0) {
		for (int j = 0; j < nout; j++)
			if (g[j] > 0)
				move_pieces(p, u, w, outs[j], g[j]);
		return;
	}
	for (int j = 0; j < nout; j++)
		if (g[j] > 0)
			apply_split(p, u, w, outs[j], -g[j]);
}

/* Splits the pairs at switch w, again while a pass splits any (a split
 * elsewhere may free a pair tried before), then drops what is left. */
static PackStatus
split_switch(Pk *p, int w, bool spread, int *ins, int *outs)
{
	int nin = 0, nout = 0;
	for (int v = 0; v < p->n; v++) {
		if (v != w && arc_cap(p, v, w) > 0)
			ins[nin++] = v;
		if (v != w && arc_cap(p, w, v) > 0)
			outs[nout++] = v;
	}
	/* First, at a star (spread), each in-arc spread evenly over the
	 * out-arcs (the i-th starting at the i-th, so that remainders spread
	 * too): the star becomes a complete graph of its ranks rather than a
	 * chain of whole arcs, and the trees grown on it are shallow (pipeline
	 * fill). Elsewhere (a torus's relays, a fabric's leaves and spines) it
	 * would make many long arcs through chains of switches, each round
	 * paying the longest: 32 ranks on a 10 x 10 torus 82.9 % of the bound
	 * at 1 GiB in flow mode spread, 97.0 % not. */
	if (spread) {
		int64_t *g = xmalloc((size_t)nout * sizeof *g);
		for (int i = 0; i < nin; i++)
			spread_arc(p, ins[i], w, outs, nout, i, g);
		free(g);
	}
	for (bool again = true; again;) {
		again = false;
		for (int j = 0; j < nout; j++)
			for (int i = 0; i < nin; i++)
				if (ins[i] != outs[j] && arc_cap(p, ins[i], w) > 0 &&
				    arc_cap(p, w, outs[j]) > 0)
					again |= split_pair(p, ins[i], w, outs[j], INT64_MAX);
	}
	for (int v = 0; v < p->n; v++) {
		if (p->eid[pair(p, v, w)] >= 0)
			set_arc_cap(p, v, w, 0);
		if (p->eid[pair(p, w, v)] >= 0)
			set_arc_cap(p, w, v, 0);
	}
	return first_short_rank(p) < 0 ? PACK_OK : PACK_STUCK;
}

/* ---- phase 2: trees on the ranks ---- */

typedef struct Grow {
	int root;
	int64_t m;
	unsigned char *in;    /* nrank: in the tree */
	int *parent, *depth;  /* nrank */
	int *fe;              /* the tree's flow edges: the quota edge, then its arcs */
	int64_t *fcap;        /* their capacities before this tree */
	int nf;
} Grow;

/* Remembers the violated set whose source side is in p->side: its
 * capacity before the tree's copies leave, and the copies it allows. */
static void
memo_cut(Pk *p, int64_t base, int64_t ub)
{
	CutMemo *m = &p->cm;
	size_t w = (size_t)p->n + 1;
	if (m->room == 0)
		return;
	memcpy(m->side + (size_t)m->next * w, p->side, w);
	m->base[m->next] = base;
	m->ub[m->next] = ub;
	m->next = (m->next + 1) % m->room;
	m->n += m->n < m->room;
}

/* Each set's capacity in the graph as it is between trees (a new tree,
 * other copies packed, K smaller). */
static void
memo_rebase(Pk *p)
{
	size_t w = (size_t)p->n + 1;
	for (int i = 0; i < p->cm.n; i++)
		p->cm.base[i] = flow_cut_cap(p->g, p->cm.side + (size_t)i * w);
}

/* The copies each set allows the tree as grown so far: a copy takes one
 * unit from every tree arc entering the set, and the set must keep K. */
static void
memo_bounds(Pk *p, const Grow *t)
{
	size_t w = (size_t)p->n + 1;
	for (int i = 0; i < p->cm.n; i++) {
		const unsigned char *side = p->cm.side + (size_t)i * w;
		int64_t entering = 0;
		for (int j = 0; j < t->nf; j++)
			entering += side[flow_edge_src(p->g, t->fe[j])] && !side[flow_edge_dst(p->g, t->fe[j])];
		int64_t spare = p->cm.base[i] - p->K;
		p->cm.ub[i] = spare < 0 ? 0 : entering ? spare / entering : INT64_MAX;
	}
}

/* The least bound of the sets arc a -> b (ranks) enters. */
static int64_t
memo_bound(const Pk *p, int a, int b)
{
	size_t w = (size_t)p->n + 1;
	int u = p->in->rank_node[a], v = p->in->rank_node[b];
	int64_t ub = INT64_MAX;
	for (int i = 0; i < p->cm.n; i++) {
		const unsigned char *side = p->cm.side + (size_t)i * w;
		if (side[u] && !side[v] && p->cm.ub[i] < ub)
			ub = p->cm.ub[i];
	}
	return ub;
}

static void
set_tree_caps(Pk *p, const Grow *t, int64_t mu)
{
	for (int i = 0; i < t->nf; i++)
		flow_set_cap(p->g, t->fe[i], t->fcap[i] - mu);
}

/* The most copies (<= m) of the tree that may take arc a -> b (ranks):
 * the sets X holding b, not a, must keep in-capacity >= K once mu copies
 * of the tree leave (arc a -> b itself counted whole), which is a flow
 * from {s, a} to b. A failed try's cut X bounds mu by its surplus over
 * the tree arcs entering it. */
static int64_t
most_copies(Pk *p, Grow *t, int a, int b, int64_t ub)
{
	const int *rn = p->in->rank_node;
	int64_t c = arc_cap(p, rn[a], rn[b]);
	int64_t mu = t->m < c ? t->m : c;
	mu = ub < mu ? ub : mu;
	flow_set_cap(p->g, p->help_e[a], FLOW_INF);
	while (mu > 0) {
		set_tree_caps(p, t, mu);
		int64_t f = rank_flow(p, b);
		if (f >= p->K)
			break;
		flow_source_side(p->g, p->s, p->side);
		int64_t entering = 0;
		for (int i = 0; i < t->nf; i++)
			entering += p->side[flow_edge_src(p->g, t->fe[i])] &&
			            !p->side[flow_edge_dst(p->g, t->fe[i])];
		int64_t allowed = entering ? (f + mu * entering - p->K) / entering : 0;
		memo_cut(p, f + mu * entering, allowed);
		mu = allowed < mu ? allowed : mu - 1;
	}
	set_tree_caps(p, t, 0);
	flow_set_cap(p->g, p->help_e[a], 0);
	return mu > 0 ? mu : 0;
}

/* The arc to add: the first, shallowest tail first, that keeps all m
 * copies, else the one that keeps the most. A candidate whose remembered
 * sets allow no more than the best so far is passed over without a flow:
 * most_copies would find no more (docs/algorithms.md, "Fewer max flows"). */
static bool
best_arc(Pk *p, Grow *t, int *ba, int *bb, int64_t *bmu)
{
	int nr = p->in->nrank;
	*bmu = 0;
	memo_bounds(p, t);
	for (int d = 0; d < nr; d++)
		for (int a = 0; a < nr; a++) {
			if (!t->in[a] || t->depth[a] != d)
				continue;
			for (int b = 0; b < nr; b++) {
				if (t->in[b] || arc_cap(p, p->in->rank_node[a], p->in->rank_node[b]) == 0)
					continue;
				int64_t ub = memo_bound(p, a, b);
				if (ub <= *bmu)
					continue;
				int64_t mu = most_copies(p, t, a, b, ub);
				if (mu > *bmu) {
					*bmu = mu;
					*ba = a;
					*bb = b;
					if (mu == t->m)
						return true;
				}
			}
		}
	return *bmu > 0;
}

static PackStatus
grow_tree(Pk *p, Grow *t, int root, int64_t most, Skel *out)
{
	int nr = p->in->nrank;
	const int *rn = p->in->rank_node;
	memset(t->in, 0, (size_t)nr);
	t->root = root;
	t->m = flow_edge_cap(p->g, p->quota_e[root]);
	t->m = most < t->m ? most : t->m;
	t->in[root] = 1;
	t->parent[root] = -1;
	t->depth[root] = 0;
	t->fe[0] = p->quota_e[root];
	t->fcap[0] = flow_edge_cap(p->g, p->quota_e[root]);
	t->nf = 1;
	memo_rebase(p);
	for (int added = 1; added < nr; added++) {
		int a = -1, b = -1;
		int64_t mu;
		if (!best_arc(p, t, &a, &b, &mu))
			return PACK_STUCK;
		t->m = mu;
		t->in[b] = 1;
		t->parent[b] = a;
		t->depth[b] = t->depth[a] + 1;
		t->fe[t->nf] = p->eid[pair(p, rn[a], rn[b])];
		t->fcap[t->nf++] = arc_cap(p, rn[a], rn[b]);
	}
	set_tree_caps(p, t, t->m);
	p->K -= t->m;
	out->root = root;
	out->mult = t->m;
	out->parent = arena_array(&p->scratch, (size_t)nr, sizeof *out->parent);
	out->depth = arena_array(&p->scratch, (size_t)nr, sizeof *out->depth);
	memcpy(out->parent, t->parent, (size_t)nr * sizeof *out->parent);
	memcpy(out->depth, t->depth, (size_t)nr * sizeof *out->depth);
	return PACK_OK;
}

/* ---- routes ---- */

/* Copies of the skeleton, one per choice of pieces along its edges. */
static void
route_skeleton(Pk *p, Arena *a, const Skel *sk, Packing *out, int *cap)
{
	int nr = p->in->nrank;
	const int *rn = p->in->rank_node;
	int64_t m = sk->mult;
	while (m > 0) {
		int64_t d = m;
		for (int x = 0; x < nr; x++)
			if (x != sk->root) {
				const Piece *f = &p->piece[p->head[pair(p, rn[sk->parent[x]], rn[x])]];
				d = f->amount < d ? f->amount : d;
			}
		if (out->ntree == *cap) {
			PackTree *old = out->tree;
			*cap = *cap ? 2 * *cap : 16;
			out->tree = arena_array(a, (size_t)*cap, sizeof *out->tree);
			if (old)
				memcpy(out->tree, old, (size_t)out->ntree * sizeof *old);
		}
		PackTree *t = &out->tree[out->ntree++];
		*t = (PackTree){.root = sk->root, .mult = d};
		t->parent = arena_array(a, (size_t)nr, sizeof *t->parent);
		t->depth = arena_array(a, (size_t)nr, sizeof *t->depth);
		t->nhop = arena_array(a, (size_t)nr, sizeof *t->nhop);
		t->route = arena_array(a, (size_t)nr, sizeof *t->route);
		memcpy(t->parent, sk->parent, (size_t)nr * sizeof *t->parent);
		memcpy(t->depth, sk->depth, (size_t)nr * sizeof *t->depth);
		for (int x = 0; x < nr; x++) {
			t->height = sk->depth[x] > t->height ? sk->depth[x] : t->height;
			if (x == sk->root)
				continue;
			size_t k = pair(p, rn[sk->parent[x]], rn[x]);
			Piece *f = &p->piece[p->head[k]];
			t->nhop[x] = f->nhop;
			t->route[x] = arena_array(a, (size_t)f->nhop, sizeof **t->route);
			memcpy(t->route[x], f->link, (size_t)f->nhop * sizeof **t->route);
			f->amount -= d;
			if (f->amount == 0) {
				p->head[k] = f->next;
				if (f->next < 0)
					p->tail[k] = -1;
			}
		}
		m -= d;
	}
}

/* ---- the graph ---- */

static void
pk_init(Pk *p, const PackInput *in)
{
	memset(p, 0, sizeof *p);
	p->in = in;
	p->n = in->nnode;
	p->s = in->nnode;
	p->g = flow_new(in->nnode + 1);
	size_t nn = (size_t)p->n * (size_t)p->n;
	p->eid = xmalloc(nn * sizeof *p->eid);
	p->head = xmalloc(nn * sizeof *p->head);
	p->tail = xmalloc(nn * sizeof *p->tail);
	memset(p->eid, -1, nn * sizeof *p->eid);
	memset(p->head, -1, nn * sizeof *p->head);
	memset(p->tail, -1, nn * sizeof *p->tail);
	p->side = xmalloc((size_t)p->n + 1);
	p->cm.side = xmalloc((size_t)MAX_PACK_CUTS * ((size_t)p->n + 1));
	p->cm.base = xmalloc(MAX_PACK_CUTS * sizeof *p->cm.base);
	p->cm.ub = xmalloc(MAX_PACK_CUTS * sizeof *p->cm.ub);
	p->cm.room = in->plain ? 0 : MAX_PACK_CUTS;
	/* the graph has at most n * n arcs besides the 2 nrank from s */
	double nedge = (double)p->n * p->n + 2.0 * in->nrank;
	p->cert.on = !in->plain && nedge * in->nrank <= MAX_PACK_CERT;
	p->cert.flow = xcalloc((size_t)in->nrank, sizeof *p->cert.flow);
	p->cert.n = xcalloc((size_t)in->nrank, sizeof *p->cert.n);
	p->cert.cap = xcalloc((size_t)in->nrank, sizeof *p->cert.cap);
	p->cert.value = xcalloc((size_t)in->nrank, sizeof *p->cert.value);
	p->quota_e = xmalloc((size_t)in->nrank * sizeof *p->quota_e);
	p->help_e = xmalloc((size_t)in->nrank * sizeof *p->help_e);
	for (int i = 0; i < in->nrank; i++) {
		p->quota_e[i] = flow_add_edge(p->g, p->s, in->rank_node[i], in->quota[i]);
		p->help_e[i] = flow_add_edge(p->g, p->s, in->rank_node[i], 0);
		p->K += in->quota[i];
	}
	for (int l = 0; l < in->nlink; l++) {
		if (in->src[l] == in->dst[l] || in->cap[l] <= 0)
			continue;
		set_arc_cap(p, in->src[l], in->dst[l], arc_cap(p, in->src[l], in->dst[l]) + in->cap[l]);
		int *link = arena_array(&p->scratch, 1, sizeof *link);
		*link = l;
		push_piece(p, in->src[l], in->dst[l], in->cap[l], 1, link);
	}
}

static void
pk_free(Pk *p)
{
	flow_free(p->g);
	free(p->eid);
	free(p->head);
	free(p->tail);
	free(p->piece);
	free(p->side);
	free(p->cm.side);
	free(p->cm.base);
	free(p->cm.ub);
	for (int i = 0; i < p->in->nrank; i++)
		free(p->cert.flow[i]);
	free(p->cert.flow);
	free(p->cert.n);
	free(p->cert.cap);
	free(p->cert.value);
	free(p->quota_e);
	free(p->help_e);
	free(p->ta);
	free(p->tb);
	arena_free(&p->scratch);
}

bool
pack_feasible(const PackInput *in)
{
	Pk p;
	pk_init(&p, in);
	bool ok = first_short_rank(&p) < 0;
	pk_free(&p);
	return ok;
}

static PackStatus
split_switches(Pk *p)
{
	unsigned char *is_rank = xcalloc((size_t)p->n, 1);
	for (int i = 0; i < p->in->nrank; i++)
		is_rank[p->in->rank_node[i]] = 1;
	int *ins = xmalloc((size_t)p->n * sizeof *ins), *outs = xmalloc((size_t)p->n * sizeof *outs);
	PackStatus st = PACK_OK;
	/* a star: a switch whose links all end at ranks (an NVSwitch, a rail) */
	unsigned char *star = xmalloc((size_t)p->n);
	memset(star, 1, (size_t)p->n);
	for (int l = 0; l < p->in->nlink; l++) {
		star[p->in->src[l]] &= is_rank[p->in->dst[l]];
		star[p->in->dst[l]] &= is_rank[p->in->src[l]];
	}
	for (int w = 0; w < p->n && st == PACK_OK; w++)
		if (!is_rank[w])
			st = split_switch(p, w, star[w], ins, outs);
	free(star);
	free(is_rank);
	free(ins);
	free(outs);
	return st;
}

/* Phase 2 over every root's quota; the skeletons in *sk. */
static PackStatus
grow_all(Pk *p, Skel **sk, int *nsk)
{
	int nr = p->in->nrank, cap = 0;
	Grow t = {0};
	t.in = xmalloc((size_t)nr);
	t.parent = xmalloc((size_t)nr * sizeof *t.parent);
	t.depth = xmalloc((size_t)nr * sizeof *t.depth);
	t.fe = xmalloc((size_t)nr * sizeof *t.fe);
	t.fcap = xmalloc((size_t)nr * sizeof *t.fcap);
	PackStatus st = PACK_OK;
	*sk = NULL;
	*nsk = 0;
	/* Several roots take turns, one copy each: a root that packed all its
	 * copies first would leave the later roots the long ways round, deep
	 * trees and a long pipeline fill (2 x 8 GPUs, allgather at 1 GiB in
	 * flow mode: 96.6 % of the bound in turns, 94.4 % root by root). One
	 * root (broadcast, reduce) packs as many copies per tree as it can:
	 * fewer trees. */
	int nroot = 0;
	for (int r = 0; r < nr; r++)
		nroot += flow_edge_cap(p->g, p->quota_e[r]) > 0;
	int64_t most = nroot > 1 ? 1 : INT64_MAX;
	for (bool left = true; left && st == PACK_OK;) {
		left = false;
		for (int r = 0; r < nr && st == PACK_OK; r++) {
			if (flow_edge_cap(p->g, p->quota_e[r]) == 0)
				continue;
			left = true;
			if (*nsk == cap) {
				cap = cap ? 2 * cap : 16;
				*sk = xrealloc(*sk, (size_t)cap * sizeof **sk);
			}
			st = grow_tree(p, &t, r, most, &(*sk)[*nsk]);
			*nsk += st == PACK_OK;
		}
	}
	free(t.in);
	free(t.parent);
	free(t.depth);
	free(t.fe);
	free(t.fcap);
	return st;
}

PackStatus
pack_trees(Arena *a, const PackInput *in, Packing *out)
{
	memset(out, 0, sizeof *out);
	out->nrank = in->nrank;
	Pk p;
	pk_init(&p, in);
	PackStatus st = first_short_rank(&p) < 0 ? PACK_OK : PACK_INFEASIBLE;
	if (st == PACK_OK)
		st = split_switches(&p);
	Skel *sk = NULL;
	int nsk = 0;
	if (st == PACK_OK)
		st = grow_all(&p, &sk, &nsk);
	int cap = 0;
	for (int i = 0; st == PACK_OK && i < nsk; i++)
		route_skeleton(&p, a, &sk[i], out, &cap);
	if (st != PACK_OK)
		*out = (Packing){.nrank = in->nrank};
	free(sk);
	pk_free(&p);
	return st;
}

/* ---- a collective at its cut bound ---- */

const char *const pack_status_text[] = {
	[PACK_OK] = "packed",
	[PACK_INFEASIBLE] = "the capacities do not meet the cut condition",
	[PACK_STUCK] = "a switch could not be split off (its links in and out differ)",
	[PACK_NO_BOUND] = "no cut bound to pack at",
	[PACK_TOO_LARGE] = "the copies per root or the capacities pass their limits",
	[PACK_NO_ORBITS] = "no trees of the orbit representatives fit the link orbits' budgets",
	[PACK_NOT_GROUP] = "the group does not keep the ranks and the links' bandwidths",
	[PACK_TOO_MANY] = "more tree copies than a schedule's pipelines (MAX_INSTANCES)",
	[PACK_TOO_MUCH] = "growing the copies' trees passes the work limit (MAX_PACK_WORK)",
};

__extension__ typedef __int128 Wide;

/* floor(k bw / rate) on every link; false past the limit. */
static bool
scaled_caps(const CutNet *n, Frac rate, int64_t k, int64_t *cap)
{
	for (int l = 0; l < n->nlink; l++) {
		Wide c = (Wide)k * n->link[l].bw * rate.den / rate.num;
		if (c > MAX_PACK_CAP)
			return false;
		cap[l] = (int64_t)c;
	}
	return true;
}

/* The least k in 1 .. MAX_PACK_TRIES, else the exact k0 (within
 * MAX_PACK_COPIES), whose capacities meet the cut condition; 0 if none. */
static int64_t
least_copies(const CutNet *n, Frac rate, PackInput *in, int64_t *cap, int64_t *quota, int root)
{
	int64_t g = 0;
	for (int l = 0; l < n->nlink; l++)
		g = gcd64(g, n->link[l].bw);
	int64_t k0 = rate.num / gcd64(rate.num, (int64_t)((Wide)rate.den * g % rate.num));
	for (int64_t k = 1; k <= k0 && k <= MAX_PACK_COPIES; k = k < MAX_PACK_TRIES ? k + 1 : k0) {
		if (!scaled_caps(n, rate, k, cap))
			return 0;
		for (int i = 0; i < n->nrank; i++)
			quota[i] = root < 0 || i == root ? k : 0;
		if (pack_feasible(in))
			return k;
		if (k == k0)
			break;
	}
	return 0;
}

/* Routes from the child: the links of the reversed graph's route, backwards. */
static void
turn_inward(Packing *pk)
{
	for (int t = 0; t < pk->ntree; t++)
		for (int x = 0; x < pk->nrank; x++) {
			int *r = pk->tree[t].route[x];
			for (int i = 0, j = pk->tree[t].nhop[x] - 1; i < j; i++, j--) {
				int tmp = r[i];
				r[i] = r[j];
				r[j] = tmp;
			}
		}
}

/* The kind's rate and its links oriented as it packs them (reduce_scatter
 * and reduce reversed: in-trees), in *src, *dst (the caller frees); room for
 * the copies per link in out->cap. */
static PackStatus
collective_setup(Arena *a, const CutNet *n, CollKind kind, CollPacking *out, int **src, int **dst)
{
	*out = (CollPacking){.kind = kind};
	*src = *dst = NULL;
	bool rooted = kind == CK_BROADCAST || kind == CK_REDUCE;
	out->inward = kind == CK_REDUCE_SCATTER || kind == CK_REDUCE;
	if (!rooted && kind != CK_ALLGATHER && !out->inward)
		return PACK_NO_BOUND;
	CutBound b;
	if (cutbound(n, kind, &b) != CUT_OK)
		return PACK_NO_BOUND;
	out->rate = b.bound.rate;
	cutbound_free(&b);
	if (out->rate.num <= 0)
		return PACK_NO_BOUND;
	*src = xmalloc(((size_t)n->nlink + 1) * sizeof **src);
	*dst = xmalloc(((size_t)n->nlink + 1) * sizeof **dst);
	for (int l = 0; l < n->nlink; l++) {
		(*src)[l] = out->inward ? n->link[l].dst : n->link[l].src;
		(*dst)[l] = out->inward ? n->link[l].src : n->link[l].dst;
	}
	out->cap = arena_array(a, (size_t)n->nlink + 1, sizeof *out->cap);
	return PACK_OK;
}

PackStatus
pack_collective(Arena *a, const CutNet *n, CollKind kind, CollPacking *out)
{
	int *src, *dst;
	PackStatus st = collective_setup(a, n, kind, out, &src, &dst);
	if (st != PACK_OK)
		return st;
	bool rooted = kind == CK_BROADCAST || kind == CK_REDUCE;
	int64_t *quota = xmalloc((size_t)n->nrank * sizeof *quota);
	PackInput in = {n->nnode, n->nrank, n->rank_node, n->nlink, src, dst, out->cap, quota, false};
	out->k = least_copies(n, out->rate, &in, out->cap, quota, rooted ? n->root : -1);
	/* the trees' growth is in the copies, known only now: pack_work
	 * counted one a root */
	out->work = out->k ? pack_copies_work(n, (double)out->k * (rooted ? 1 : n->nrank)) : 0;
	if (!out->k)
		st = PACK_TOO_LARGE;
	else if (out->k > MAX_INSTANCES / (rooted ? 1 : n->nrank))
		st = PACK_TOO_MANY;
	else if (out->work > MAX_PACK_WORK)
		st = PACK_TOO_MUCH;
	else
		st = pack_trees(a, &in, &out->pk);
	if (st == PACK_OK && out->inward)
		turn_inward(&out->pk);
	free(src);
	free(dst);
	free(quota);
	return st;
}

PackStatus
pack_collective_orbits(Arena *a, const CutNet *n, CollKind kind, const PackGroup *G, CollPacking *out)
{
	if (kind != CK_ALLGATHER && kind != CK_REDUCE_SCATTER) {
		*out = (CollPacking){.kind = kind};
		return PACK_NO_BOUND;
	}
	int *src, *dst;
	PackStatus st = collective_setup(a, n, kind, out, &src, &dst);
	if (st == PACK_OK)
		st = pack_orbits(a, n, src, dst, G, out->rate, &out->k, &out->pk);
	/* the capacities the packing's claim is checked against */
	if (st == PACK_OK && !scaled_caps(n, out->rate, out->k, out->cap))
		st = PACK_TOO_LARGE;
	if (st == PACK_OK && out->inward)
		turn_inward(&out->pk);
	if (st != PACK_OK)
		out->pk = (Packing){.nrank = n->nrank};
	free(src);
	free(dst);
	return st;
}

double
pack_copies_work(const CutNet *n, double copies)
{
	int *in = xcalloc((size_t)n->nnode, sizeof *in), *out = xcalloc((size_t)n->nnode, sizeof *out);
	unsigned char *is_rank = xcalloc((size_t)n->nnode, 1);
	for (int l = 0; l < n->nlink; l++) {
		out[n->link[l].src]++;
		in[n->link[l].dst]++;
	}
	for (int i = 0; i < n->nrank; i++)
		is_rank[n->rank_node[i]] = 1;
	double pairs = 0, N = n->nrank;
	for (int v = 0; v < n->nnode; v++)
		if (!is_rank[v])
			pairs += (double)in[v] * out[v];
	free(in);
	free(out);
	free(is_rank);
	double pass = (double)n->nnode + n->nlink + N;
	/* the trees grow on the graph the splits left: each pair split may
	 * have added an arc (a rank's to every other at a star), which every
	 * flow of the growth passes over */
	return (2 * pairs * N + MAX_PACK_TRIES * N) * pass + 2 * N * copies * (pass + pairs);
}

double
pack_work(const CutNet *n)
{
	return pack_copies_work(n, n->nrank);
}

double
pack_orbit_work(const CutNet *n, const PackGroup *G, int nrep)
{
	double N = n->nrank, T = MAX_PACK_TRIES, pass = (double)n->nnode + n->nlink + N;
	double bound = (n->transitive ? 4 : 4 * N) * pass;       /* x*, each way */
	double tables = (double)G->order * pass * 2;                /* checked, orbits */
	double grow = nrep * T * (T + 1) / 2 * N * pass;           /* a join relaxes every link */
	double map = (double)G->order * nrep * T * (N + n->nlink); /* the images */
	return bound + tables + grow + map;
}
