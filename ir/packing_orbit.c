/*
 * packing_orbit.c: tree packings by orbit representatives (packing.h's
 * pack_orbits; the argument: docs/algorithms.md "Orbit representatives").
 *
 * Needs: links oriented as the kind packs them (reduce-scatter's reversed),
 * their bandwidths, the cut bound's rate, and a group of automorphisms as
 * tables (PackGroup: each element's image of every node and link), checked
 * here: every element maps rank nodes to rank nodes and each link to a link
 * between the images of its ends, of the same bandwidth.
 * Establishes: k = l K copies rooted at every rank, l the least common
 * multiple of the rank stabilisers' orders, every link carrying at most
 * floor(k b / rate) copies (the cut bound's time), made of K trees grown for
 * one representative rank per orbit within the budgets of the link orbits
 * (a use of orbit A by a tree of rank orbit O costs l / |Stab(O)|; A holds
 * floor(l K b rate.den / (rate.num |Stab(A)|))) and mapped by every
 * element; or PACK_NO_ORBITS when no K up to MAX_PACK_TRIES fits (the
 * growth is greedy: it never exceeds a budget, it may miss a packing).
 *
 * A tree is grown as Prim's algorithm would, its edges routes through
 * nodes that hold no rank of the collective (switches, relays): the next
 * rank is the one whose cheapest route from the tree costs least, a link
 * costing w / (its orbit's budget left) as the tree starts: scarce orbits
 * dear, so later trees take the orbits earlier ones left.
 */
#include <stdlib.h>
#include <string.h>

#include "collc_limits.h"
#include "heap.h"

#include "packing.h"

__extension__ typedef __int128 Wide;

typedef struct HeapItem {
	double key;
	int node;
	int seq;
} HeapItem;

static bool
item_less(const void *a, const void *b)
{
	const HeapItem *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key;
	if (x->node != y->node)
		return x->node < y->node;
	return x->seq < y->seq;
}

/* One representative's tree: parents and each edge's route (links from
 * the parent), as grown. */
typedef struct RepTree {
	int root;
	int64_t w;        /* its copies' weight in the budgets: l / |Stab(root)| */
	int *parent, *depth; /* nrank */
	int *beg, *len;       /* nrank: the route to each rank, in link */
	int *link;
	int nlink, cap, height;
} RepTree;

typedef struct Orb {
	const CutNet *n;
	const PackGroup *G;
	const int *src, *dst;
	int *rank_of;       /* node -> rank, -1 */
	int *out_off, *out; /* links by source node */
	int *lorb, nlorb;   /* link -> its orbit */
	int64_t *lsize;     /* nlorb: links in the orbit */
	int64_t *budget, *rem;
	int *rep, nrep;     /* a rank per rank orbit */
	int64_t *rsize;     /* nrep: ranks in the orbit */
	int64_t ell;
	/* the growth */
	double *dist;
	bool fair;          /* costs by each tree's fair share, else by the budget left */
	double *target;     /* nlorb: this tree's share of each orbit's budget left,
	                     * or (not fair) the budget left as it starts */
	int64_t *used;      /* nlorb: what this tree took of it */
	int *from;
	unsigned char *in;
	HeapItem *heap;
	size_t nheap, capheap;
	int seq;
	int *path;
} Orb;

static void
push(Orb *o, int v, double key)
{
	if (o->nheap == o->capheap) {
		o->capheap = o->capheap ? 2 * o->capheap : 256;
		o->heap = xrealloc(o->heap, (o->capheap + 1) * sizeof *o->heap);
	}
	HeapItem x = {key, v, o->seq++};
	heap_push(o->heap, o->nheap++, sizeof x, &x, item_less);
}

/* Union-find root with path halving. */
static int
uf_root(int *p, int a)
{
	while (p[a] != a)
		a = p[a] = p[p[a]];
	return a;
}

/* The rank and link orbits; false when an element is not an automorphism
 * of the ranks and the links' bandwidths (the argument needs one). */
static bool
orbits(Orb *o)
{
	const CutNet *n = o->n;
	const PackGroup *G = o->G;
	int nn = n->nnode, nl = n->nlink;
	int *up = xmalloc((size_t)(nl > nn ? nl : nn) * sizeof *up);
	bool ok = true;
	for (int e = 0; e < G->order && ok; e++) {
		const int *img = G->node + (size_t)e * nn, *limg = G->link + (size_t)e * nl;
		for (int v = 0; v < nn && ok; v++)
			ok = img[v] >= 0 && img[v] < nn && (o->rank_of[v] < 0) == (o->rank_of[img[v]] < 0);
		for (int l = 0; l < nl && ok; l++) {
			int m = limg[l];
			ok = m >= 0 && m < nl && o->src[m] == img[o->src[l]] && o->dst[m] == img[o->dst[l]] &&
			     n->link[m].bw == n->link[l].bw;
		}
	}
	if (ok) {
		for (int l = 0; l < nl; l++)
			up[l] = l;
		for (int e = 0; e < G->order; e++)
			for (int l = 0; l < nl; l++) {
				int a = uf_root(up, l), b = uf_root(up, G->link[(size_t)e * nl + l]);
				if (a != b)
					up[a > b ? a : b] = a < b ? a : b;
			}
		int *id = xmalloc((size_t)nl * sizeof *id);
		o->lorb = xmalloc((size_t)nl * sizeof *o->lorb);
		o->lsize = xcalloc((size_t)nl + 1, sizeof *o->lsize);
		for (int l = 0; l < nl; l++) {
			int r = uf_root(up, l);
			id[l] = r == l ? o->nlorb++ : -1;
			o->lorb[l] = id[r];
			o->lsize[o->lorb[l]]++;
		}
		free(id);
		/* rank orbits: the least rank of each */
		for (int v = 0; v < nn; v++)
			up[v] = v;
		for (int e = 0; e < G->order; e++)
			for (int v = 0; v < nn; v++) {
				int a = uf_root(up, v), b = uf_root(up, G->node[(size_t)e * nn + v]);
				if (a != b)
					up[a > b ? a : b] = a < b ? a : b;
			}
		o->rep = xmalloc((size_t)n->nrank * sizeof *o->rep);
		o->rsize = xcalloc((size_t)n->nrank, sizeof *o->rsize);
		int *which = xmalloc((size_t)nn * sizeof *which);
		for (int v = 0; v < nn; v++)
			which[v] = -1;
		for (int r = 0; r < n->nrank; r++) {
			int root = uf_root(up, n->rank_node[r]);
			if (which[root] < 0) {
				which[root] = o->nrep;
				o->rep[o->nrep++] = r;
			}
			o->rsize[which[root]]++;
		}
		free(which);
		/* l: the lcm of |Stab(rep)| = order / |orbit| */
		o->ell = 1;
		for (int i = 0; i < o->nrep && ok; i++) {
			int64_t s = G->order / o->rsize[i];
			o->ell = o->ell / gcd64(o->ell, s) * s;
			ok = G->order % o->rsize[i] == 0 && o->ell <= G->order;
		}
	}
	free(up);
	return ok;
}

/* Each orbit's budget for K: floor(l K b rate.den / (rate.num |Stab(A)|)),
 * |Stab(A)| = order / |A|; false past MAX_PACK_CAP. */
static bool
budgets(Orb *o, Frac rate, int64_t K)
{
	for (int l = 0; l < o->n->nlink; l++) {
		int a = o->lorb[l];
		if (o->budget[a] >= 0)
			continue;
		Wide c = (Wide)o->ell * K * o->lsize[a] * ((Wide)o->n->link[l].bw * rate.den) /
		         ((Wide)rate.num * o->G->order);
		if (c > MAX_PACK_CAP)
			return false;
		o->budget[a] = (int64_t)c;
	}
	return true;
}

/* A link's cost now: w over what is left of its orbit's share for this
 * tree (at least a quarter of a use: past its share an orbit is dear, not
 * closed); -1 when the budget cannot hold another use. */
static double
link_cost(const Orb *o, int l, int64_t w)
{
	int a = o->lorb[l];
	if (o->rem[a] < w)
		return -1;
	double left = o->target[a] - (o->fair ? (double)o->used[a] : 0);
	return (double)w / (left > 0.25 * (double)w ? left : 0.25 * (double)w);
}

/* The cost of o->path's len links now. */
static double
path_cost(const Orb *o, int len, int64_t w)
{
	double c = 0;
	for (int i = 0; i < len; i++)
		c += link_cost(o, o->path[i], w);
	return c;
}

/* Every tree rank a source again (after links ran out of budget). */
static void
restart(Orb *o, const RepTree *t, int64_t w)
{
	const CutNet *n = o->n;
	(void)w;
	for (int v = 0; v < n->nnode; v++) {
		o->dist[v] = -1;
		o->from[v] = -1;
	}
	o->nheap = 0;
	for (int r = 0; r < n->nrank; r++)
		if (o->in[r] && (r == t->root || t->parent[r] >= 0)) {
			o->dist[n->rank_node[r]] = 0;
			push(o, n->rank_node[r], 0);
		}
}

/* The route to node v from the tree (o->path, links from the tree's end),
 * its length; -1 if it needs more of an orbit than is left. */
static int
route_to(Orb *o, int v, int64_t w)
{
	int len = 0;
	for (int u = v; o->from[u] >= 0 && (o->rank_of[u] < 0 || u == v); u = o->src[o->from[u]])
		o->path[len++] = o->from[u];
	for (int i = 0, j = len - 1; i < j; i++, j--) {
		int x = o->path[i];
		o->path[i] = o->path[j];
		o->path[j] = x;
	}
	for (int i = 0; i < len; i++) {
		int64_t uses = 0;
		for (int j = 0; j < len; j++)
			uses += o->lorb[o->path[j]] == o->lorb[o->path[i]];
		if (o->rem[o->lorb[o->path[i]]] < uses * w)
			return -1;
	}
	return len;
}

static void
add_edge(Orb *o, RepTree *t, int b, int len)
{
	int a = o->rank_of[o->src[o->path[0]]];
	t->parent[b] = a;
	t->depth[b] = t->depth[a] + 1;
	t->height = t->depth[b] > t->height ? t->depth[b] : t->height;
	if (t->nlink + len > t->cap) {
		t->cap = 2 * (t->nlink + len);
		t->link = xrealloc(t->link, (size_t)t->cap * sizeof *t->link);
	}
	t->beg[b] = t->nlink;
	t->len[b] = len;
	for (int i = 0; i < len; i++) {
		t->link[t->nlink++] = o->path[i];
		o->rem[o->lorb[o->path[i]]] -= t->w;
		o->used[o->lorb[o->path[i]]] += t->w;
	}
}

/* Grows one tree from rank root, its share of each orbit's budget left
 * w / units of it (units: the weights of the trees still to grow, this
 * one's included); false when some rank cannot be reached within the
 * budgets left. Costs rise as the tree takes its shares, so a rank's key
 * may be stale: it is priced again when it comes out, and put back if it
 * went up (Prim's algorithm, lazily). */
static bool
grow(Orb *o, RepTree *t, int root, int64_t units)
{
	const CutNet *n = o->n;
	int nr = n->nrank;
	t->root = root;
	t->height = 0;
	t->nlink = 0;
	memset(o->in, 0, (size_t)nr);
	for (int r = 0; r < nr; r++)
		t->parent[r] = -1;
	for (int a = 0; a < o->nlorb; a++) {
		o->target[a] = (double)o->rem[a] * (o->fair ? (double)t->w / (double)units : 1);
		o->used[a] = 0;
	}
	o->in[root] = 1;
	t->depth[root] = 0;
	restart(o, t, t->w);
	int added = 1;
	bool fresh = true; /* no join since the last restart */
	while (added < nr) {
		if (o->nheap == 0)
			return false;
		HeapItem x = o->heap[0];
		heap_pop(o->heap, o->nheap--, sizeof x, item_less);
		int v = x.node, r = o->rank_of[v];
		if (x.key > o->dist[v])
			continue;
		if (r >= 0 && !o->in[r]) {
			int len = route_to(o, v, t->w);
			if (len < 0) {
				if (fresh)
					return false;
				restart(o, t, t->w);
				fresh = true;
				continue;
			}
			double now = path_cost(o, len, t->w);
			if (now > x.key * (1 + 1e-9)) {
				o->dist[v] = now;
				push(o, v, now);
				continue;
			}
			add_edge(o, t, r, len);
			o->in[r] = 1;
			added++;
			fresh = false;
			o->dist[v] = 0;
			o->from[v] = -1;
			push(o, v, 0);
			continue;
		}
		for (int i = o->out_off[v]; i < o->out_off[v + 1]; i++) {
			int l = o->out[i], u = o->dst[l];
			double c = link_cost(o, l, t->w);
			if (c < 0)
				continue;
			double d = o->dist[v] + c;
			if (o->dist[u] < 0 || d < o->dist[u]) {
				o->dist[u] = d;
				o->from[u] = l;
				push(o, u, d);
			}
		}
	}
	return true;
}

/* The representatives' trees mapped by every element into out. */
static void
map_trees(Orb *o, Arena *a, const RepTree *rt, int ntree, Packing *out)
{
	const CutNet *n = o->n;
	const PackGroup *G = o->G;
	int nr = n->nrank, nn = n->nnode, nl = n->nlink;
	out->ntree = ntree * G->order;
	out->tree = arena_array(a, (size_t)out->ntree, sizeof *out->tree);
	int k = 0;
	for (int e = 0; e < G->order; e++) {
		const int *img = G->node + (size_t)e * nn, *limg = G->link + (size_t)e * nl;
		for (int i = 0; i < ntree; i++) {
			const RepTree *t = &rt[i];
			PackTree *m = &out->tree[k++];
			*m = (PackTree){.root = o->rank_of[img[n->rank_node[t->root]]], .mult = t->w,
			                .height = t->height};
			m->parent = arena_array(a, (size_t)nr, sizeof *m->parent);
			m->depth = arena_array(a, (size_t)nr, sizeof *m->depth);
			m->nhop = arena_array(a, (size_t)nr, sizeof *m->nhop);
			m->route = arena_array(a, (size_t)nr, sizeof *m->route);
			int *links = arena_array(a, (size_t)t->nlink + 1, sizeof *links);
			for (int x = 0; x < nr; x++) {
				int y = o->rank_of[img[n->rank_node[x]]];
				m->depth[y] = t->depth[x];
				m->parent[y] = t->parent[x] < 0 ? -1 : o->rank_of[img[n->rank_node[t->parent[x]]]];
				if (t->parent[x] < 0)
					continue;
				m->nhop[y] = t->len[x];
				m->route[y] = links + t->beg[x];
				for (int h = t->beg[x]; h < t->beg[x] + t->len[x]; h++)
					links[h] = limg[t->link[h]];
			}
		}
	}
}

static void
orb_free(Orb *o)
{
	free(o->rank_of), free(o->out_off), free(o->out), free(o->lorb), free(o->lsize);
	free(o->budget), free(o->rem), free(o->rep), free(o->rsize);
	free(o->dist), free(o->target), free(o->used), free(o->from), free(o->in), free(o->heap), free(o->path);
}

static void
orb_init(Orb *o, const CutNet *n, const int *src, const int *dst, const PackGroup *G)
{
	memset(o, 0, sizeof *o);
	o->n = n;
	o->G = G;
	o->src = src;
	o->dst = dst;
	int nn = n->nnode, nl = n->nlink;
	o->rank_of = xmalloc((size_t)nn * sizeof *o->rank_of);
	for (int v = 0; v < nn; v++)
		o->rank_of[v] = -1;
	for (int r = 0; r < n->nrank; r++)
		o->rank_of[n->rank_node[r]] = r;
	o->out_off = xcalloc((size_t)nn + 1, sizeof *o->out_off);
	o->out = xmalloc(((size_t)nl + 1) * sizeof *o->out);
	for (int l = 0; l < nl; l++)
		o->out_off[src[l] + 1]++;
	for (int v = 0; v < nn; v++)
		o->out_off[v + 1] += o->out_off[v];
	int *fill = xmalloc(((size_t)nn + 1) * sizeof *fill);
	memcpy(fill, o->out_off, ((size_t)nn + 1) * sizeof *fill);
	for (int l = 0; l < nl; l++)
		o->out[fill[src[l]]++] = l;
	free(fill);
	o->dist = xmalloc((size_t)nn * sizeof *o->dist);
	o->from = xmalloc((size_t)nn * sizeof *o->from);
	o->in = xmalloc((size_t)n->nrank + 1);
	o->path = xmalloc((size_t)nn * sizeof *o->path);
}

static void
tree_alloc(RepTree *t, int nr)
{
	*t = (RepTree){0};
	t->parent = xmalloc((size_t)nr * sizeof *t->parent);
	t->depth = xmalloc((size_t)nr * sizeof *t->depth);
	t->beg = xcalloc((size_t)nr, sizeof *t->beg);
	t->len = xcalloc((size_t)nr, sizeof *t->len);
}

static void
tree_free(RepTree *t)
{
	free(t->parent), free(t->depth), free(t->beg), free(t->len), free(t->link);
}

/* Every representative's K trees, in turns; false if one cannot grow. */
static bool
grow_all(Orb *o, RepTree *rt, int64_t K)
{
	int64_t units = 0;
	for (int i = 0; i < o->nrep; i++)
		units += K * (o->ell / (o->G->order / o->rsize[i]));
	for (int64_t j = 0; j < K; j++)
		for (int i = 0; i < o->nrep; i++) {
			RepTree *t = &rt[j * o->nrep + i];
			t->w = o->ell / (o->G->order / o->rsize[i]);
			if (!grow(o, t, o->rep[i], units))
				return false;
			units -= t->w;
		}
	return true;
}

PackStatus
pack_orbits(Arena *a, const CutNet *n, const int *src, const int *dst, const PackGroup *G, Frac rate,
            int64_t *k, Packing *out)
{
	*out = (Packing){.nrank = n->nrank};
	Orb o;
	orb_init(&o, n, src, dst, G);
	PackStatus st = orbits(&o) ? PACK_NO_ORBITS : PACK_NOT_GROUP;
	o.budget = xmalloc(((size_t)o.nlorb + 1) * sizeof *o.budget);
	o.rem = xmalloc(((size_t)o.nlorb + 1) * sizeof *o.rem);
	o.target = xmalloc(((size_t)o.nlorb + 1) * sizeof *o.target);
	o.used = xmalloc(((size_t)o.nlorb + 1) * sizeof *o.used);
	int64_t ntree = 0;
	RepTree *rt = NULL;
	for (int64_t K = 1; st == PACK_NO_ORBITS && K <= MAX_PACK_TRIES; K++) {
		for (int i = 0; i < o.nlorb; i++)
			o.budget[i] = -1;
		if (!budgets(&o, rate, K)) {
			st = PACK_TOO_LARGE;
			break;
		}
		memcpy(o.rem, o.budget, (size_t)o.nlorb * sizeof *o.rem);
		rt = xrealloc(rt, (size_t)(K * o.nrep) * sizeof *rt);
		for (int64_t i = ntree; i < K * o.nrep; i++)
			tree_alloc(&rt[i], n->nrank);
		ntree = K * o.nrep;
		o.fair = false;
		bool grown = grow_all(&o, rt, K);
		if (!grown) { /* the other prices, from the whole budgets again */
			memcpy(o.rem, o.budget, (size_t)o.nlorb * sizeof *o.rem);
			o.fair = true;
			grown = grow_all(&o, rt, K);
		}
		if (grown) {
			map_trees(&o, a, rt, (int)ntree, out);
			*k = o.ell * K;
			st = PACK_OK;
		}
	}
	for (int64_t i = 0; i < ntree; i++)
		tree_free(&rt[i]);
	free(rt);
	orb_free(&o);
	return st;
}
