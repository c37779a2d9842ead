/*
 * alg_packing.c: `packing`, collectives streamed through the optimal tree
 * packings of ir/packing.c (docs/algorithms.md "Optimal tree packings").
 *
 * Needs: a kind with a cut bound on the ranks (cutbound.h) and switches
 * that split off (packing.h), its work within MAX_PACK_WORK.
 * Establishes an explicit schedule in which a tree copy of multiplicity m
 * in a packing of k copies per root carries m/k of its root's block (of
 * the vector for broadcast and reduce), cut into M segments, each tree
 * edge one message per segment along the edge's route:
 *   allgather, broadcast     segment j reaches a rank at depth d in slot
 *                            off + d - 1 + j;
 *   reduce_scatter, reduce   a rank at depth d sends segment j, reduced,
 *                            to its parent in slot off + h - d + j (h the
 *                            tree's height);
 *   allreduce                reduce_scatter's packing from slot 0 and
 *                            allgather's from slot H (H the reduce-scatter
 *                            trees' greatest height): its segment j leaves
 *                            a root once every reduce-scatter copy has
 *                            brought segment j there (slot h - 1 + j).
 * Every tree runs at once, so a round puts on link l at most cap_l
 * segments of 1/(kM) of a block: the link loads of the packing, whose
 * time is the cut bound's. Each copy's messages are their own instance
 * (Msg.instance): never merged, so a link's flows in a round are equal
 * units in number proportional to its capacity, which max-min fair
 * sharing (the simulator's flow mode, and a network's) ends together. M
 * is pipeline_segments_time's for the size: the phase's time at the bound
 * streamed, a round's cost the slowest route's latency, the fill the
 * copies' mean height - 1.
 */
#include <stdlib.h>

#include "alg.h"
#include "collc_limits.h"
#include "packing.h"

/* The packing of one phase, with the sub-chunks a unit of its copies owns. */
typedef struct PackPhase {
	CollPacking cp;
	int64_t per_copy; /* units of a block per copy: U / k */
	int height;
	double fill; /* a copy's height - 1, averaged over the copies */
	bool mapped; /* orbit representatives' trees mapped by the group */
} PackPhase;

/* The packings of one collective kept across sizes (AlgCtx.pack_memo):
 * tune and collc sim build every candidate at every size, and a packing
 * depends on the network, the ranks and the kind, never on the size (only
 * the segments do). An entry holds its key, so a memo handed to another
 * collective by mistake misses rather than answers. */
enum { PACK_MEMO_MAX = 4 };
struct PackMemo {
	Arena arena; /* the kept packings' trees */
	int n;
	struct PackMemoEntry {
		const Topo *topo;
		const int *rank_node;
		int nrank, root;
		CollKind kind;
		PackStatus st;
		PackPhase ph;
		double whole; /* pack_work, for a refusal's message */
	} e[PACK_MEMO_MAX];
};

PackMemo *
pack_memo_new(void)
{
	return xcalloc(1, sizeof(PackMemo));
}

void
pack_memo_free(PackMemo *m)
{
	if (!m)
		return;
	arena_free(&m->arena);
	free(m);
}

static struct PackMemoEntry *
memo_find(const AlgCtx *c, CollKind kind)
{
	PackMemo *m = c->pack_memo;
	for (int i = 0; m && i < m->n; i++) {
		struct PackMemoEntry *e = &m->e[i];
		if (e->topo == c->topo && e->rank_node == c->rank_node && e->nrank == c->nrank &&
		    e->root == c->root && e->kind == kind)
			return e;
	}
	return NULL;
}

static void
memo_add(const AlgCtx *c, CollKind kind, PackStatus st, const PackPhase *ph, double whole)
{
	PackMemo *m = c->pack_memo;
	if (m && m->n < PACK_MEMO_MAX)
		m->e[m->n++] =
			(struct PackMemoEntry){c->topo, c->rank_node, c->nrank, c->root, kind, st, *ph, whole};
}

/* Packs one kind: by orbit representatives under G where it finds them,
 * else every root when its work (whole) is within the limit. */
static PackStatus
pack_kind(Arena *a, const CutNet *n, CollKind kind, const PackGroup *G, double whole, CollPacking *cp,
          bool *mapped)
{
	PackStatus st = G ? pack_collective_orbits(a, n, kind, G, cp) : PACK_NO_BOUND;
	*mapped = st == PACK_OK;
	if (st == PACK_OK || (G && whole > MAX_PACK_WORK))
		return st;
	return pack_collective(a, n, kind, cp);
}

/* Packs one kind on the ranks (n NULL: the memo holds it); -1 after
 * reporting. */
static int
pack_phase(const AlgCtx *c, const CutNet *n, CollKind kind, PackPhase *ph, const PackGroup *G,
           double whole)
{
	struct PackMemoEntry *e = memo_find(c, kind);
	PackStatus st = e ? e->st : pack_kind(c->pack_memo ? &c->pack_memo->arena : c->arena, n, kind,
	                                      G, whole, &ph->cp, &ph->mapped);
	whole = e ? e->whole : whole;
	if (st != PACK_OK) {
		if (!e)
			memo_add(c, kind, st, ph, whole);
		if (st == PACK_NO_ORBITS || st == PACK_NOT_GROUP)
			error_at(c->diag, c->loc, "packing cannot pack %s trees on '%s' by the orbits of '%s': %s; "
			         "packing every root would do about %.3g units of work, and the limit is %d "
			         "(MAX_PACK_WORK)", coll_kind_name[kind], c->topo->name, c->pack_group->name,
			         pack_status_text[st], whole, MAX_PACK_WORK);
		else
			error_at(c->diag, c->loc, "packing cannot pack %s trees on '%s': %s", coll_kind_name[kind],
			         c->topo->name, pack_status_text[st]);
		return -1;
	}
	if (e) {
		*ph = e->ph;
		return 0;
	}
	ph->height = 0;
	double copies = 0, fill = 0;
	for (int t = 0; t < ph->cp.pk.ntree; t++) {
		const PackTree *tr = &ph->cp.pk.tree[t];
		if (tr->height > ph->height)
			ph->height = tr->height;
		copies += (double)tr->mult;
		fill += (double)tr->mult * (tr->height - 1);
	}
	ph->fill = fill / copies;
	memo_add(c, kind, st, ph, whole);
	return 0;
}

/* One phase's messages from slot off: every copy's segments down (copy)
 * or up (reduce) its tree. */
static void
phase_messages(Gen *g, const PackPhase *ph, int M, int off, bool rooted, bool up)
{
	int p = g->p;
	int64_t *base = xcalloc((size_t)p, sizeof *base); /* next unit of each root's block */
	int inst = 0;
	for (int t = 0; t < ph->cp.pk.ntree; t++) {
		const PackTree *tr = &ph->cp.pk.tree[t];
		int block = rooted ? 0 : tr->root;
		int64_t units = tr->mult * ph->per_copy;
		for (int x = 0; x < p; x++) {
			if (x == tr->root)
				continue;
			int d = tr->depth[x], par = tr->parent[x];
			for (int j = 0; j < M; j++) {
				for (int64_t cpy = 0; cpy < tr->mult; cpy++) {
					g->b.instance = inst + (int)cpy;
					int64_t u0 = base[tr->root] + cpy * ph->per_copy;
					for (int64_t u = u0; u < u0 + ph->per_copy; u++)
						gen_block(g, block, (int)(u * M + j));
					if (up)
						gen_send_route(g, off + tr->height - d + j, x, par, X_REDUCE,
						               tr->route[x], tr->nhop[x]);
					else
						gen_send_route(g, off + d - 1 + j, par, x, X_COPY, tr->route[x],
						               tr->nhop[x]);
				}
			}
		}
		base[tr->root] += units;
		inst += (int)tr->mult;
	}
	g->b.instance = 0;
	free(base);
}

/* A phase's time at its bound, unpipelined: a copy carries 1/k of its
 * root's block (of the vector when rooted) and the capacities make every
 * link done in block / rate (packing.h). */
static double
phase_stream_time(const AlgCtx *c, const PackPhase *ph, bool rooted)
{
	double block = rooted ? c->size : c->size / c->nrank;
	return 8 * block * (double)ph->cp.rate.den / (double)ph->cp.rate.num;
}

/* A round's fixed cost: the step overhead and the latency of the slowest
 * route of the phase's tree edges (a route through a switch pays each hop). */
static double
phase_alpha(const AlgCtx *c, const PackPhase *ph)
{
	const Net *n = &c->topo->net;
	double worst = 0;
	for (int t = 0; t < ph->cp.pk.ntree; t++) {
		const PackTree *tr = &ph->cp.pk.tree[t];
		for (int x = 0; x < c->nrank; x++) {
			double lat = 0;
			for (int h = 0; h < tr->nhop[x]; h++)
				lat += c->topo->link[tr->route[x][h]].latency + n->router_latency;
			worst = lat > worst ? lat : worst;
		}
	}
	return n->step_overhead + worst;
}

/* packing's group as tables (PackGroup), its orbits on the ranks counted;
 * none (order 0) unless it keeps the collective's ranks. */
typedef struct OrbitGroup {
	PackGroup pg;
	int *node, *link;
	int nrep;
	bool transitive;
} OrbitGroup;

/* The link u -> v, its copy-th: by binary search in links sorted by
 * (src, dst, copy); -1 if none. */
static int
find_link(const Topo *t, const int *sorted, int u, int v, int copy)
{
	int lo = t->out[u], hi = t->out[u + 1];
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		const Link *m = &t->link[sorted[mid]];
		if (m->dst < v || (m->dst == v && m->copy < copy))
			lo = mid + 1;
		else
			hi = mid;
	}
	const Link *f = lo < t->out[u + 1] ? &t->link[sorted[lo]] : NULL;
	return f && f->dst == v && f->copy == copy ? sorted[lo] : -1;
}

static int
by_dst_copy(const void *ctx, const int *a, const int *b)
{
	const Link *x = &((const Topo *)ctx)->link[*a], *y = &((const Topo *)ctx)->link[*b];
	return x->dst != y->dst ? (x->dst < y->dst ? -1 : 1) : (x->copy > y->copy) - (x->copy < y->copy);
}

/* Insertion sort of one node's out-links (a switch's few hundred). */
static void
sort_links(const Topo *t, int *a, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && by_dst_copy(t, &a[j], &a[j - 1]) < 0; j--) {
			int x = a[j];
			a[j] = a[j - 1];
			a[j - 1] = x;
		}
}

static bool
orbit_group(const AlgCtx *c, OrbitGroup *og)
{
	const Group *g = c->pack_group;
	const Topo *t = c->topo;
	*og = (OrbitGroup){0};
	if (!g || g->topo != t || c->kind == CK_BROADCAST || c->kind == CK_REDUCE)
		return false;
	size_t nn = (size_t)t->nnode, nl = (size_t)t->nlink;
	/* tables past the work limit: a group too large to use (pack_orbit_work
	 * counts them) */
	if ((double)g->order * ((double)nn + (double)nl) * 2 > MAX_PACK_WORK)
		return false;
	og->node = xmalloc((size_t)g->order * nn * sizeof *og->node);
	og->link = xmalloc((size_t)g->order * nl * sizeof *og->link);
	int *sorted = xmalloc((nl + 1) * sizeof *sorted), *member = xmalloc(nn * sizeof *member);
	for (size_t l = 0; l < nl; l++)
		sorted[l] = (int)l;
	for (size_t v = 0; v < nn; v++) {
		sort_links(t, sorted + t->out[v], t->out[v + 1] - t->out[v]);
		member[v] = -1;
	}
	for (int r = 0; r < c->nrank; r++)
		member[c->rank_node[r]] = 0;
	bool ok = true;
	for (int e = 0; e < g->order && ok; e++) {
		int *img = og->node + (size_t)e * nn, *limg = og->link + (size_t)e * nl;
		for (size_t v = 0; v < nn; v++)
			img[v] = group_node(g, e, (int)v);
		for (size_t v = 0; v < nn && ok; v++)
			ok = (member[v] < 0) == (member[img[v]] < 0);
		for (size_t l = 0; l < nl && ok; l++) {
			const Link *k = &t->link[l];
			limg[l] = find_link(t, sorted, img[k->src], img[k->dst], k->copy);
			ok = limg[l] >= 0;
		}
	}
	/* the orbits of the ranks: member[v] = 1 once v's is counted */
	for (int r = 0; r < c->nrank && ok; r++) {
		int v = c->rank_node[r];
		if (member[v] > 0)
			continue;
		og->nrep++;
		for (int e = 0; e < g->order; e++)
			member[og->node[(size_t)e * nn + (size_t)v]] = 1;
	}
	og->transitive = og->nrep == 1;
	og->pg = (PackGroup){g->order, og->node, og->link};
	free(sorted);
	free(member);
	if (!ok) {
		free(og->node), free(og->link);
		*og = (OrbitGroup){0};
	}
	return ok;
}

/* The phases of c's kind, packed; how many (0 after reporting). */
static int
pack_phases(const AlgCtx *c, PackPhase *ph)
{
	CollKind kinds[2] = {c->kind};
	int nk = 1;
	if (c->kind == CK_ALLREDUCE) {
		kinds[0] = CK_REDUCE_SCATTER;
		kinds[1] = CK_ALLGATHER;
		nk = 2;
	}
	bool kept = true;
	for (int i = 0; i < nk; i++)
		kept = kept && memo_find(c, kinds[i]);
	if (kept) {
		for (int i = 0; i < nk; i++)
			if (pack_phase(c, NULL, kinds[i], &ph[i], NULL, 0) != 0)
				return 0;
		return nk;
	}
	CutNet n;
	CutLink *link = cutnet_topo(c->topo, c->rank_node, c->nrank, c->root, &n);
	OrbitGroup og;
	bool orbits = orbit_group(c, &og);
	/* one target of x*'s flows stands for all (cutbound.h) */
	n.transitive |= orbits && og.transitive;
	int nph = 0;
	double whole = pack_work(&n), work = orbits ? pack_orbit_work(&n, &og.pg, og.nrep) : whole;
	if (work > MAX_PACK_WORK)
		error_at(c->diag, c->loc, "packing on '%s' with %d ranks would do about %.3g units of work; the "
		         "limit is %d (MAX_PACK_WORK)", c->topo->name, c->nrank, work, MAX_PACK_WORK);
	else {
		nph = nk;
		for (int i = 0; i < nk && nph; i++)
			if (pack_phase(c, &n, kinds[i], &ph[i], orbits ? &og.pg : NULL, whole) != 0)
				nph = 0;
	}
	free(og.node), free(og.link);
	free(link);
	return nph;
}

Sched *
alg_packing(const AlgCtx *c)
{
	PackPhase ph[2];
	int nph = pack_phases(c, ph);
	if (nph == 0)
		return NULL;
	/* U units per block: every phase's k divides it */
	int64_t U = ph[0].cp.k;
	if (nph == 2)
		U = U / gcd64(U, ph[1].cp.k) * ph[1].cp.k;
	int ntree = 0;
	double copies = 0;
	for (int i = 0; i < nph; i++) {
		ph[i].per_copy = U / ph[i].cp.k;
		ntree += ph[i].cp.pk.ntree;
		for (int t = 0; t < ph[i].cp.pk.ntree; t++)
			copies += (double)ph[i].cp.pk.tree[t].mult;
	}
	bool rooted = c->kind == CK_BROADCAST || c->kind == CK_REDUCE;
	int nblock = rooted ? 1 : c->nrank;
	double edges = copies * (c->nrank - 1); /* messages per segment: one per copy and edge */
	double stream = 0, alpha = 0, fill = 0;
	for (int i = 0; i < nph; i++) {
		fill += ph[i].fill;
		stream += phase_stream_time(c, &ph[i], rooted);
		alpha = phase_alpha(c, &ph[i]) > alpha ? phase_alpha(c, &ph[i]) : alpha;
	}
	/* Allreduce's phases overlap (the allgather's segment j leaves a root
	 * once the reduce-scatter's has reached it), so the streams and the
	 * fills add. The fill is the copies' mean height - 1, not the
	 * greatest: a round of the drain holds only the deep copies' last
	 * edges, which take a fraction of a full round (measured on the two
	 * examples of docs/algorithms.md at 1 GiB: the greatest's M 0.1 to 0.6
	 * points of the bound below the mean's). */
	int M = pipeline_segments_time(fill, stream, alpha, edges);
	if (U > MAX_PIPELINE_MSGS || (double)U * M > MAX_PIPELINE_MSGS) {
		error_at(c->diag, c->loc, "packing cuts each block into %lld x %d sub-chunks; the limit is %d",
		         (long long)U, M, MAX_PIPELINE_MSGS);
		return NULL;
	}
	Gen g;
	if (gen_begin(&g, c, nblock, (int)U * M) != 0)
		return NULL;
	if (c->kind == CK_ALLREDUCE) {
		phase_messages(&g, &ph[0], M, 0, false, true);
		phase_messages(&g, &ph[1], M, ph[0].height, false, false);
	} else {
		phase_messages(&g, &ph[0], M, 0, rooted, ph[0].cp.inward);
	}
	/* no commas: the choice is a CSV field of collc sim */
	g.s->choice = arena_printf(c->arena, "segments %d of %d trees with %lld copies per root%s%s", M,
	                           ntree, (long long)U, ph[0].mapped ? " mapped by group " : "",
	                           ph[0].mapped ? c->pack_group->name : "");
	g.s->size_chosen = true;
	return gen_end(c->diag, &g);
}
