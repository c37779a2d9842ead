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
 * copies' mean height - 1; its messages within MAX_PACK_MSGS, and a power
 * of two where that makes the chunk count one (deployable_segments); or
 * AlgCtx.segments where that is set (MSCCL's limits, to_msccl_fit.c).
 * For collc sim round by round (AlgCtx.compact, not listed), where the
 * model's M would pass
 * MAX_PACK_MSGS, the schedule is the repeated form (Sched.repeat,
 * ir/repeat.c): segment 0's messages and M, its messages within
 * MAX_STREAM_MSGS, which the simulator streams a round at a time.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "collc_limits.h"
#include "packing.h"

/* The packing of one phase, with the sub-chunks a unit of its copies owns. */
typedef struct PackPhase {
	CollPacking cp;
	int64_t per_copy; /* units of a block per copy: U / k */
	int64_t *share;   /* units a power of two (pow2_units): each copy's, in
	                   * instance order; NULL: per_copy each */
	int64_t units;    /* U, the units of a block (with share) */
	int height;
	bool mapped; /* orbit representatives' trees mapped by the group */
} PackPhase;

/* The packings of one collective kept across sizes (AlgCtx.pack_memo):
 * tune and collc sim build every candidate at every size, and a packing
 * depends on the network, the ranks and the kind, never on the size (only
 * the segments do). An entry holds its key, so a memo handed to another
 * collective by mistake misses rather than answers. */
enum { PACK_MEMO_MAX = 4 };
typedef struct {
	const char *name; /* NULL: no group (every root) */
	int order;
} GroupKey;
struct PackMemo {
	Arena arena; /* the kept packings' trees */
	int n;
	struct PackMemoEntry {
		const Topo *topo;
		const int *rank_node;
		int nrank, root;
		CollKind kind;
		GroupKey group; /* AlgCtx.pack_group's: auto packs a mesh both ways */
		PackStatus st;
		PackPhase ph;
		double whole; /* pack_work, for a refusal's message */
	} e[PACK_MEMO_MAX];
	/* the levels chosen for the collective's own kind (they depend on its
	 * packings alone; tune and sim choose them once, not per size) */
	struct PackMemoLevels {
		const Topo *topo;
		const int *rank_node;
		int nrank, root;
		CollKind kind;
		GroupKey group;
		int *lv0; /* NULL: none kept */
		double imbalance;
	} lv;
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
	free(m->lv.lv0);
	free(m);
}

/* A packing's group as the memo keeps it: its name (a copy in the memo's
 * arena) and order, or none. auto builds a mesh's group again at every
 * size, in an arena that does not outlive the size, so the memo keeps no
 * pointer to it; a name stands for one group within one collective. */
static GroupKey
group_key(Arena *a, const Group *g)
{
	return g ? (GroupKey){arena_strdup(a, g->name), g->order} : (GroupKey){NULL, 0};
}

static bool
same_group(GroupKey k, const Group *g)
{
	return g ? k.name && k.order == g->order && strcmp(k.name, g->name) == 0 : !k.name;
}

static struct PackMemoEntry *
memo_find(const AlgCtx *c, CollKind kind)
{
	PackMemo *m = c->pack_memo;
	for (int i = 0; m && i < m->n; i++) {
		struct PackMemoEntry *e = &m->e[i];
		if (e->topo == c->topo && e->rank_node == c->rank_node && e->nrank == c->nrank &&
		    e->root == c->root && e->kind == kind && same_group(e->group, c->pack_group))
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
			(struct PackMemoEntry){c->topo, c->rank_node, c->nrank, c->root, kind,
			                       group_key(&m->arena, c->pack_group), st, *ph, whole};
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

/* Why a kind was not packed, located: each limit by name. */
static void
report_refusal(const AlgCtx *c, CollKind kind, PackStatus st, const CollPacking *cp, double whole)
{
	long long copies = (long long)cp->k * (kind == CK_BROADCAST || kind == CK_REDUCE ? 1 : c->nrank);
	if (st == PACK_NO_ORBITS || st == PACK_NOT_GROUP)
		error_at(c->diag, c->loc, "packing cannot pack %s trees on '%s' by the orbits of '%s': %s; "
		         "packing every root would do about %.3g units of work, and the limit is %d "
		         "(MAX_PACK_WORK)", coll_kind_name[kind], c->topo->name, c->pack_group->name,
		         pack_status_text[st], whole, MAX_PACK_WORK);
	else if (st == PACK_TOO_MANY)
		error_at(c->diag, c->loc, "packing needs %lld tree copies, each its own pipeline "
		         "(Msg.instance); the limit is %d", copies, MAX_INSTANCES);
	else if (st == PACK_TOO_MUCH)
		error_at(c->diag, c->loc, "packing needs %lld copies of %s trees on '%s'; growing them would "
		         "do about %.3g units of work, and the limit is %d (MAX_PACK_WORK)", copies,
		         coll_kind_name[kind], c->topo->name, cp->work, MAX_PACK_WORK);
	else
		error_at(c->diag, c->loc, "packing cannot pack %s trees on '%s': %s", coll_kind_name[kind],
		         c->topo->name, pack_status_text[st]);
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
		report_refusal(c, kind, st, e ? &e->ph.cp : &ph->cp, whole);
		return -1;
	}
	if (e) {
		*ph = e->ph;
		return 0;
	}
	/* the same loads, shallower trees: a shorter fill and drain */
	pack_shallow(&ph->cp.pk);
	ph->height = 0;
	for (int t = 0; t < ph->cp.pk.ntree; t++)
		if (ph->cp.pk.tree[t].height > ph->height)
			ph->height = ph->cp.pk.tree[t].height;
	memo_add(c, kind, st, ph, whole);
	return 0;
}

/* One phase's messages: every copy's segments down (copy) or up (reduce)
 * its tree, tree t's edge at depth d in slot lv0[t] + d - 1 + j going down,
 * lv0[t] + h - d + j going up (the levels above). */
static void
phase_messages(Gen *g, const PackPhase *ph, int M, const int *lv0, bool rooted, bool up)
{
	int p = g->p;
	int64_t *base = xcalloc((size_t)p, sizeof *base); /* next unit of each root's block */
	int inst = 0;
	for (int t = 0; t < ph->cp.pk.ntree; t++) {
		const PackTree *tr = &ph->cp.pk.tree[t];
		int block = rooted ? 0 : tr->root;
		int64_t units = 0;
		for (int64_t cpy = 0; cpy < tr->mult; cpy++)
			units += ph->share ? ph->share[inst + cpy] : ph->per_copy;
		for (int x = 0; x < p; x++) {
			if (x == tr->root)
				continue;
			int d = tr->depth[x], par = tr->parent[x];
			for (int j = 0; j < M; j++) {
				int64_t u0 = base[tr->root];
				for (int64_t cpy = 0; cpy < tr->mult; cpy++) {
					g->b.instance = inst + (int)cpy;
					int64_t n = ph->share ? ph->share[inst + cpy] : ph->per_copy;
					/* with shares, segment-major: a copy's units of a
					 * segment are one run of chunks (an MSCCL step) */
					for (int64_t u = u0; u < u0 + n; u++)
						gen_block(g, block, (int)(ph->share ? j * ph->units + u : u * M + j));
					u0 += n;
					if (up)
						gen_send_route(g, lv0[t] + tr->height - d + j, x, par, X_REDUCE,
						               tr->route[x], tr->nhop[x]);
					else
						gen_send_route(g, lv0[t] + d - 1 + j, par, x, X_COPY, tr->route[x],
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

/*
 * Levels. A tree's edge at depth d sends segment j in slot lv + j, its
 * level lv = lv0 + d - 1 going down (lv0 + h - d going up), lv0 the
 * tree's start within its phase's window of `height` levels (allreduce:
 * reduce-scatter's [0, H_rs), allgather's [H_rs, H_rs + H_ag), so an
 * allgather copy leaves a root after every reduce-scatter copy arrived).
 * Rounds lv < span - 1 (the fill) hold only the edges of level <= r and
 * rounds M + r (the drain) the others: per link the two add up to one
 * steady round, so the pair takes at least a steady round and exactly
 * one only if every link has the same share of its copies at levels
 * <= r. The imbalance, sum over r of (max_l A_l(r) + max_l (1 - A_l(r)) -
 * 1) in steady rounds (A_l(r) link l's time for its load at levels <= r
 * over the busiest link's time for a steady round), is what the fill and
 * drain cost beyond the stream (measured on the 16-GCD box: with the
 * rounds' latency it gives the simulator's flow time within 0.05 %);
 * M = sqrt(imbalance T / alpha)
 * minimises the sum. A local search moves whole trees within their
 * windows while neither the imbalance nor a smooth 16-norm of the same
 * maxima grows (the maxima alone are flat to one tree's move).
 */
typedef struct LevelSearch {
	int nl, span, ntree;
	const double *inv_bw; /* nl: 1 / bandwidth, 0 where no link */
	double *load;         /* span * nl: units at each level on each link */
	double *full;         /* nl: every level's load */
	int *first;           /* ntree + 1: the tree's items */
	int *lv, *link;       /* items: level from lv0, link */
	double *units;
	int *lo, *hi;         /* ntree: lv0's window */
	int *lv0;
} LevelSearch;

static double
norm16(double sum16, double top)
{
	return top > 0 ? top * pow(sum16, 1.0 / 16) : 0;
}

/* The exact imbalance and its smooth companion, in steady rounds. */
static void
level_cost(const LevelSearch *s, double *exact, double *smooth)
{
	double steady = 0;
	for (int l = 0; l < s->nl; l++)
		steady = fmax(steady, s->full[l] * s->inv_bw[l]);
	double *cum = xcalloc((size_t)s->nl, sizeof *cum);
	*exact = *smooth = 0;
	for (int r = 0; steady > 0 && r < s->span - 1; r++) {
		double ma = 0, mb = 0, sa = 0, sb = 0;
		for (int l = 0; l < s->nl; l++) {
			cum[l] += s->load[(size_t)r * s->nl + l];
			double a = cum[l] * s->inv_bw[l] / steady, b = (s->full[l] - cum[l]) * s->inv_bw[l] / steady;
			ma = fmax(ma, a);
			mb = fmax(mb, b);
		}
		/* the 16-norm scaled by the maximum, so no power underflows */
		for (int l = 0; l < s->nl && ma > 0 && mb > 0; l++) {
			double a = cum[l] * s->inv_bw[l] / steady / ma, b = (s->full[l] - cum[l]) * s->inv_bw[l] / steady / mb;
			a *= a, a *= a, a *= a, b *= b, b *= b, b *= b;
			sa += a * a;
			sb += b * b;
		}
		*exact += ma + mb - 1;
		*smooth += norm16(sa, ma) + norm16(sb, mb);
	}
	free(cum);
}

static void
move_tree(LevelSearch *s, int t, int to)
{
	for (int i = s->first[t]; i < s->first[t + 1]; i++) {
		s->load[(size_t)(s->lv[i] + s->lv0[t]) * s->nl + s->link[i]] -= s->units[i];
		s->load[(size_t)(s->lv[i] + to) * s->nl + s->link[i]] += s->units[i];
	}
	s->lv0[t] = to;
}

/* Passes of the local search; each tree to the start that lowers the
 * smooth cost most without raising the exact one. */
static void
level_search(LevelSearch *s, double *imbalance)
{
	double ex, sm;
	level_cost(s, &ex, &sm);
	for (int pass = 0; pass < PACK_LEVEL_PASSES; pass++) {
		bool moved = false;
		for (int t = 0; t < s->ntree; t++) {
			int from = s->lv0[t], best = from;
			double bex = ex, bsm = sm;
			for (int o = s->lo[t]; o <= s->hi[t]; o++) {
				if (o == from)
					continue;
				move_tree(s, t, o);
				double e, m;
				level_cost(s, &e, &m);
				if (e < bex - 1e-9 || (e <= bex + 1e-9 && m < bsm - 1e-9))
					best = o, bex = e, bsm = m;
				move_tree(s, t, from);
			}
			if (best != from) {
				move_tree(s, t, best);
				ex = bex, sm = bsm, moved = true;
			}
		}
		if (!moved)
			break;
	}
	*imbalance = ex;
}

/* Every tree's items (a link of an edge's route, its level from lv0, the
 * copies' units) and window; the start lv0 for in-trees their window's
 * end (every copy reaches its root in the window's last level), for
 * out-trees its beginning. Returns the items. */
static int
level_items(const AlgCtx *c, const PackPhase *ph, int nph, LevelSearch *s)
{
	int nitem = 0, t = 0, win = 0;
	for (int i = 0; i < nph; i++) {
		for (int k = 0; k < ph[i].cp.pk.ntree; k++, t++) {
			const PackTree *tr = &ph[i].cp.pk.tree[k];
			s->first[t] = nitem;
			s->lo[t] = win;
			s->hi[t] = win + ph[i].height - tr->height;
			s->lv0[t] = ph[i].cp.inward ? s->hi[t] : s->lo[t];
			for (int x = 0; x < c->nrank; x++) {
				if (x == tr->root)
					continue;
				int d = tr->depth[x];
				for (int h = 0; h < tr->nhop[x]; h++, nitem++) {
					s->lv[nitem] = ph[i].cp.inward ? tr->height - d : d - 1;
					s->link[nitem] = tr->route[x][h];
					s->units[nitem] = (double)(tr->mult * ph[i].per_copy);
				}
			}
		}
		win += ph[i].height;
	}
	s->first[t] = nitem;
	return nitem;
}

/* Each tree's start (lv0, over the phases' trees in order) and the
 * imbalance: searched when the search's work is within
 * MAX_PACK_LEVEL_WORK, else the windows' ends as they are. */
static int *
choose_levels(const AlgCtx *c, const PackPhase *ph, int nph, double *imbalance)
{
	LevelSearch s = {.nl = c->topo->nlink};
	size_t nitem = 0;
	for (int i = 0; i < nph; i++) {
		s.span += ph[i].height;
		s.ntree += ph[i].cp.pk.ntree;
		for (int k = 0; k < ph[i].cp.pk.ntree; k++)
			for (int x = 0; x < c->nrank; x++)
				nitem += (size_t)ph[i].cp.pk.tree[k].nhop[x];
	}
	s.inv_bw = NULL;
	double *inv_bw = xcalloc((size_t)s.nl, sizeof *inv_bw);
	for (int l = 0; l < s.nl; l++)
		inv_bw[l] = c->topo->link[l].bandwidth > 0 ? 1 / c->topo->link[l].bandwidth : 0;
	s.inv_bw = inv_bw;
	s.load = xcalloc((size_t)s.span * (size_t)s.nl, sizeof *s.load);
	s.full = xcalloc((size_t)s.nl, sizeof *s.full);
	s.first = xcalloc((size_t)s.ntree + 1, sizeof *s.first);
	s.lo = xcalloc((size_t)s.ntree, sizeof *s.lo);
	s.hi = xcalloc((size_t)s.ntree, sizeof *s.hi);
	s.lv0 = xcalloc((size_t)s.ntree, sizeof *s.lv0);
	s.lv = xcalloc(nitem + 1, sizeof *s.lv);
	s.link = xcalloc(nitem + 1, sizeof *s.link);
	s.units = xcalloc(nitem + 1, sizeof *s.units);
	level_items(c, ph, nph, &s);
	for (int t = 0; t < s.ntree; t++)
		for (int i = s.first[t]; i < s.first[t + 1]; i++) {
			s.load[(size_t)(s.lv[i] + s.lv0[t]) * s.nl + s.link[i]] += s.units[i];
			s.full[s.link[i]] += s.units[i];
		}
	/* each evaluation reads every level of every link, for every start of every tree */
	double work = (double)s.ntree * s.span * s.span * s.nl * PACK_LEVEL_PASSES;
	if (work <= MAX_PACK_LEVEL_WORK)
		level_search(&s, imbalance);
	else {
		double sm;
		level_cost(&s, imbalance, &sm);
	}
	free(inv_bw);
	free(s.load);
	free(s.full);
	free(s.first);
	free(s.lo);
	free(s.hi);
	free(s.lv);
	free(s.link);
	free(s.units);
	return s.lv0;
}

/* choose_levels once per collective (the memo keeps them across sizes);
 * *own what the caller frees. */
static const int *
kept_levels(const AlgCtx *c, const PackPhase *ph, int nph, double *imbalance, int **own)
{
	struct PackMemoLevels *m = c->pack_memo ? &c->pack_memo->lv : NULL;
	*own = NULL;
	if (m && m->lv0 && m->topo == c->topo && m->rank_node == c->rank_node && m->nrank == c->nrank &&
	    m->root == c->root && m->kind == c->kind && same_group(m->group, c->pack_group)) {
		*imbalance = m->imbalance;
		return m->lv0;
	}
	int *lv0 = choose_levels(c, ph, nph, imbalance);
	if (m && !m->lv0)
		*m = (struct PackMemoLevels){c->topo, c->rank_node, c->nrank, c->root, c->kind,
		                             group_key(&c->pack_memo->arena, c->pack_group), lv0,
		                             *imbalance};
	else
		*own = lv0;
	return lv0;
}

/* The segments M, as a power of two where the chunk count nblock U M can
 * be one (nblock and U powers of two): an MSCCL file's chunks then cut
 * every power-of-two size in whole bytes, so tune can deploy it there
 * (tune_prog.c). Of the powers of two either side of the optimum m, the
 * one the model T + M alpha + I T / M prices lower, within the messages'
 * cap (m itself is within it). */
static int
deployable_segments(int m, int64_t chunks, double fill, double stream, double alpha, double edges,
                    double cap)
{
	if (chunks <= 0 || (chunks & (chunks - 1)) != 0)
		return m; /* no M makes the count a power of two */
	int lo = 1;
	while (lo <= m / 2)
		lo *= 2;
	if (lo == m || lo > INT32_MAX / 2)
		return lo;
	int hi = 2 * lo;
	bool fits = (edges <= 0 || hi <= cap / edges) && chunks <= MAX_PIPELINE_MSGS / hi;
	double cost_lo = lo * alpha + fill * stream / lo, cost_hi = hi * alpha + fill * stream / hi;
	return fits && cost_hi < cost_lo ? hi : lo;
}

static bool
pow2(int64_t n)
{
	return n > 0 && (n & (n - 1)) == 0;
}

/* The units of a block as a power of two, for a packing whose U (every
 * phase's k divides it) has an odd factor: of PACK_POW2_TRIES powers of two
 * from the least at or above U, the one whose shares (pack_unit_shares)
 * leave the phases' busiest links least above the bound (the sum of their
 * rho; the fewer units on a tie). Sets each phase's share, units and
 * rho[i]; returns the units. */
static int64_t
pow2_units(const AlgCtx *c, PackPhase *ph, int nph, int64_t U, double *rho)
{
	int nl = c->topo->nlink;
	double *bw = xmalloc(((size_t)nl + 1) * sizeof *bw);
	for (int l = 0; l < nl; l++)
		bw[l] = c->topo->link[l].bandwidth;
	int64_t lo = 1, best = 0;
	while (lo < U)
		lo *= 2;
	double best_cost = 0;
	int64_t *try[2] = {NULL, NULL}, ncopy[2] = {0, 0};
	for (int i = 0; i < nph; i++) {
		for (int t = 0; t < ph[i].cp.pk.ntree; t++)
			ncopy[i] += ph[i].cp.pk.tree[t].mult;
		try[i] = xmalloc(((size_t)ncopy[i] + 1) * sizeof *try[i]);
		ph[i].share = arena_array(c->arena, (size_t)ncopy[i] + 1, sizeof *ph[i].share);
	}
	for (int a = 0; a < PACK_POW2_TRIES && lo << a <= MAX_PIPELINE_MSGS; a++) {
		double cost = 0, r[2] = {1, 1};
		for (int i = 0; i < nph; i++) {
			r[i] = pack_unit_shares(&ph[i].cp.pk, nl, bw, ph[i].cp.rate, ph[i].cp.k, lo << a, try[i]);
			cost += r[i];
		}
		if (best == 0 || cost < best_cost - 1e-12) {
			best = lo << a, best_cost = cost;
			for (int i = 0; i < nph; i++) {
				rho[i] = r[i];
				for (int64_t x = 0; x < ncopy[i]; x++)
					ph[i].share[x] = try[i][x];
			}
		}
	}
	for (int i = 0; i < nph; i++) {
		ph[i].units = best;
		free(try[i]);
	}
	free(bw);
	return best;
}

/* The repeated form's chunks from segment 0's as built (block b's unit u
 * was chunk b U + u; now b U M + u M, segment j's that plus j), its rounds
 * with the repeats'. */
static void
repeat_segments(const AlgCtx *c, Sched *s, int M)
{
	size_t total = s->nmsg ? (size_t)s->msg[s->nmsg - 1].first + (size_t)s->msg[s->nmsg - 1].n : 0;
	for (size_t k = 0; k < total; k++)
		s->chunks[k] *= M;
	if (s->owner) {
		int *owner = arena_array(c->arena, (size_t)s->nchunk * M + 1, sizeof *owner);
		for (int k = 0; k < s->nchunk * M; k++)
			owner[k] = s->owner[k / M];
		s->owner = owner;
	}
	s->nchunk *= M;
	s->nround += M - 1;
	s->repeat = M;
}

Sched *
alg_packing(const AlgCtx *c)
{
	return alg_packing_form(c, PACK_FORM_AUTO);
}

Sched *
alg_packing_form(const AlgCtx *c, PackForm form)
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
		double phase_copies = 0; /* instances 0 .. phase_copies - 1 */
		for (int t = 0; t < ph[i].cp.pk.ntree; t++)
			phase_copies += (double)ph[i].cp.pk.tree[t].mult;
		if (phase_copies > MAX_INSTANCES) {
			error_at(c->diag, c->loc, "packing needs %.0f tree copies, each its own pipeline "
			         "(Msg.instance); the limit is %d", phase_copies, MAX_INSTANCES);
			return NULL;
		}
		copies += phase_copies;
	}
	bool rooted = c->kind == CK_BROADCAST || c->kind == CK_REDUCE;
	int nblock = rooted ? 1 : c->nrank;
	/* MSCCL asks a power-of-two chunk count (to_msccl_fit.c): the units
	 * one too, the copies' shares within one of each other (pow2_units) */
	double rho[2] = {1, 1};
	bool shares = c->pack_pow2 && pow2(nblock) && !pow2(U);
	if (shares)
		U = pow2_units(c, ph, nph, U, rho);
	else
		ph[0].share = ph[1].share = NULL;
	double edges = copies * (c->nrank - 1); /* messages per segment: one per copy and edge */
	double stream = 0, alpha = 0, imbalance;
	for (int i = 0; i < nph; i++) {
		stream += phase_stream_time(c, &ph[i], rooted) * rho[i];
		alpha = phase_alpha(c, &ph[i]) > alpha ? phase_alpha(c, &ph[i]) : alpha;
	}
	/* Allreduce's phases overlap (the allgather's segment j leaves a root
	 * once the reduce-scatter's has reached it), so the streams add; the
	 * fill and drain cost the levels' imbalance in steady rounds. */
	int *own;
	const int *lv0 = kept_levels(c, ph, nph, &imbalance, &own);
	int M = pipeline_segments_time(imbalance, stream, alpha, 0);
	/* collc sim (compact) holds segment 0 alone where listing the model's
	 * segments would pass MAX_PACK_MSGS; segments a caller fixes and
	 * `chunks N` stay listed */
	bool repeated = c->chunks == 0 && c->segments == 0 &&
	                (form == PACK_FORM_REPEATED ||
	                 (form == PACK_FORM_AUTO && c->compact && !c->listed && edges > 0 &&
	                  M > MAX_PACK_MSGS / edges));
	double cap = repeated ? MAX_STREAM_MSGS : MAX_PACK_MSGS;
	if (edges > 0 && M > cap / edges)
		M = cap / edges < 1 ? 1 : (int)(cap / edges);
	M = deployable_segments(M, nblock * U, imbalance, stream, alpha, edges, cap);
	/* as the caller fixes them (MSCCL's limits: to_msccl_fit.c) */
	M = c->segments > 0 ? c->segments : M;
	repeated = repeated && M > 1;
	int gm = repeated ? 1 : M; /* the segments generated */
	if (U > MAX_PIPELINE_MSGS || (double)U * M > MAX_PIPELINE_MSGS) {
		error_at(c->diag, c->loc, "packing cuts each block into %lld x %d sub-chunks; the limit is %d",
		         (long long)U, M, MAX_PIPELINE_MSGS);
		free(own);
		return NULL;
	}
	Gen g;
	if (gen_begin(&g, c, nblock, (int)U * gm) != 0) {
		free(own);
		return NULL;
	}
	if (c->kind == CK_ALLREDUCE) {
		phase_messages(&g, &ph[0], gm, lv0, false, true);
		phase_messages(&g, &ph[1], gm, lv0 + ph[0].cp.pk.ntree, false, false);
	} else {
		phase_messages(&g, &ph[0], gm, lv0, rooted, ph[0].cp.inward);
	}
	free(own);
	/* no commas: the choice is a CSV field of collc sim */
	g.s->choice = arena_printf(c->arena, "segments %d of %d trees with %lld copies per root%s%s", M,
	                           ntree, (long long)(shares ? ph[0].cp.k : U),
	                           ph[0].mapped ? " mapped by group " : "",
	                           ph[0].mapped ? c->pack_group->name : "");
	if (shares)
		g.s->choice = arena_printf(c->arena, "%s in %lld units a block (busiest link %.4f x the "
		                           "bound's time)", g.s->choice, (long long)U,
		                           rho[0] > rho[nph - 1] ? rho[0] : rho[nph - 1]);
	g.s->size_chosen = true;
	g.s->segments = M;
	Sched *s = gen_end(c->diag, &g);
	if (s && repeated)
		repeat_segments(c, s, M);
	return s;
}
