/*
 * bound.c: the busbw bounds the commands print (bound.h).
 *
 * Needs: a simulator network (sim, tune) or a verified schedule (check).
 * Establishes: sim's and tune's bound, the tighter of the cut bound
 * (ir/cutbound.c, exact) and perf_bound_busbw (runtime/perf.c: injection,
 * gossip and all-to-all's hop count), computed once per network and
 * collective; check's line saying what binds, in which model. The cut
 * bound sees only links and ranks, so a network is a cache key by those.
 */
#include <stdlib.h>
#include <string.h>

#include "bound.h"
#include "cutbound.h"
#include "driver.h"
#include "perf.h"
#include "to_sim.h"

typedef struct BoundEntry {
	const SimNet *net;
	int coll;
	double busbw;
} BoundEntry;

/* Whether the cut bounds of a's collective ca and b's cb are the same
 * problem: kind, ranks, root and links (src, dst, bandwidth). */
static bool
same_problem(const SimNet *a, int ca, const SimNet *b, int cb)
{
	const SimColl *x = &a->coll[ca], *y = &b->coll[cb];
	if (a->nnode != b->nnode || a->nlink != b->nlink || x->nrank != y->nrank ||
	    a->in_network != b->in_network ||
	    x->root != y->root || strcmp(x->kind, y->kind) != 0)
		return false;
	if (x->rank_node != y->rank_node &&
	    memcmp(x->rank_node, y->rank_node, (size_t)x->nrank * sizeof *x->rank_node) != 0)
		return false;
	for (int l = 0; a->link != b->link && l < a->nlink; l++)
		if (a->link[l].src != b->link[l].src || a->link[l].dst != b->link[l].dst ||
		    a->link[l].bw != b->link[l].bw)
			return false;
	return true;
}

/* The cut bound of collective c of n, bytes/s; 0 when there is none. */
static double
cut_busbw(const SimNet *n, int c)
{
	const SimColl *sc = &n->coll[c];
	int k = coll_kind_find(sc->kind);
	if (k < 0)
		return 0;
	CutLink *link = xmalloc(((size_t)n->nlink + 1) * sizeof *link);
	for (int l = 0; l < n->nlink; l++)
		link[l] = (CutLink){n->link[l].src, n->link[l].dst, n->link[l].bw};
	CutNet cn = {.nnode = n->nnode, .nlink = n->nlink, .link = link, .nrank = sc->nrank,
	             .rank_node = sc->rank_node, .root = sc->root, .in_network = n->in_network};
	/* the translation-symmetric forms, as sim_net_of_topo names them */
	static const char *const forms[] = {"torus", "ring", "hyperx", "full"};
	for (size_t i = 0; i < countof(forms); i++)
		cn.transitive |= n->topo && strcmp(n->topo, forms[i]) == 0;
	cn.transitive = cn.transitive && sc->nrank == n->nnode && cutnet_uniform(&cn);
	cn.arc_transitive = cn.transitive && sides_equal(n->ndim, n->size);
	CutBound b;
	double bw = cutbound(&cn, (CollKind)k, &b) == CUT_OK ? b.busbw : 0;
	cutbound_free(&b);
	free(link);
	return bw;
}

double
bound_busbw(BoundCache *cache, const SimNet *n, int c)
{
	for (int i = 0; i < cache->n; i++)
		if (same_problem(cache->e[i].net, cache->e[i].coll, n, c))
			return cache->e[i].busbw;
	double today = perf_bound_busbw(n, c), cut = cut_busbw(n, c);
	double bw = cut > 0 && cut < today ? cut : today;
	if (cache->n == cache->cap) {
		cache->cap = cache->cap ? 2 * cache->cap : 8;
		cache->e = xrealloc(cache->e, (size_t)cache->cap * sizeof *cache->e);
	}
	cache->e[cache->n++] = (BoundEntry){n, c, bw};
	return bw;
}

double
bound_busbw_sched(Diag *dg, const Sched *s)
{
	Arena a = {0};
	SimNet *n = NEW(&a, SimNet);
	double bw = 0;
	if (sim_net_of_topo(dg, &a, s->topo, n) == 0) {
		SimColl *c = NEW(&a, SimColl);
		*c = (SimColl){.name = s->name, .kind = coll_kind_name[s->kind], .nrank = s->nrank,
		               .rank_node = s->rank_node, .root = s->root};
		n->ncoll = 1;
		n->coll = c;
		/* not cached: the network dies with this arena */
		BoundCache mine = {0};
		bw = bound_busbw(&mine, n, 0);
		bound_cache_free(&mine);
	}
	arena_free(&a);
	return bw;
}

typedef struct SchedBound {
	const Sched *s;
	CutStatus st;
	CutBound b;
} SchedBound;

/* The index in the cache of s's cut bound, computed once per topology,
 * kind, ranks and root. */
static int
sched_bound(BoundCache *cache, const Sched *s)
{
	for (int i = 0; i < cache->nsb; i++) {
		const Sched *o = cache->sb[i].s;
		if (o->topo == s->topo && o->kind == s->kind && o->root == s->root &&
		    o->nrank == s->nrank &&
		    memcmp(o->rank_node, s->rank_node, (size_t)s->nrank * sizeof *s->rank_node) == 0)
			return i;
	}
	if (cache->nsb == cache->capsb) {
		cache->capsb = cache->capsb ? 2 * cache->capsb : 8;
		cache->sb = xrealloc(cache->sb, (size_t)cache->capsb * sizeof *cache->sb);
	}
	SchedBound *e = &cache->sb[cache->nsb];
	e->s = s;
	e->st = cutbound_topo(s->topo, s->rank_node, s->nrank, s->root, s->kind, &e->b);
	return cache->nsb++;
}

void
bound_cache_free(BoundCache *cache)
{
	for (int i = 0; i < cache->nsb; i++)
		cutbound_free(&cache->sb[i].b);
	free(cache->sb);
	free(cache->e);
	*cache = (BoundCache){0};
}

/* "{0, 1, 2, 3, 8}", "all but {5}" or "12 nodes: {0, 1, 2, 3, ...}" */
static void
name_cut(const Topo *t, const unsigned char *cut, char *buf, size_t len)
{
	int in = 0;
	for (int v = 0; v < t->nnode; v++)
		in += cut[v] != 0;
	bool rest = in > 6 && t->nnode - in <= 6;
	int shown = 0, want = rest ? t->nnode - in : in;
	size_t at = 0;
	if (rest)
		at += (size_t)snprintf(buf, len, "all but {");
	else if (in > 6)
		at += (size_t)snprintf(buf, len, "%d nodes: {", in);
	else
		at += (size_t)snprintf(buf, len, "{");
	for (int v = 0; v < t->nnode && at < len && shown < (want > 6 ? 4 : want); v++) {
		if ((cut[v] != 0) == rest)
			continue;
		char nm[48];
		topo_node_name(t, v, nm, sizeof nm);
		at += (size_t)snprintf(buf + at, len - at, "%s%s", shown++ ? ", " : "", nm);
	}
	if (at < len)
		snprintf(buf + at, len - at, "%s}", want > 6 ? ", ..." : "");
}

static void
gbps(double bytes_per_s, char *buf, size_t len)
{
	snprintf(buf, len, "%.2f GB/s", bytes_per_s / 1e9);
}

/* Whether every switch sends as much as it receives: then tree packing
 * attains allgather's and reduce-scatter's bound (docs/algorithms.md). */
static bool
switches_balanced(const Topo *t)
{
	double *net = xcalloc((size_t)t->nnode + 1, sizeof *net);
	for (int l = 0; l < t->nlink; l++) {
		net[t->link[l].src] += t->link[l].bandwidth;
		net[t->link[l].dst] -= t->link[l].bandwidth;
	}
	bool ok = true;
	for (int v = 0; v < t->nnode; v++)
		ok &= !t->is_switch || !t->is_switch[v] || net[v] == 0;
	free(net);
	return ok;
}

/* all-to-all's line: the concurrent flow's interval (docs/algorithms.md,
 * "All-to-all: the concurrent flow") */
static void
print_a2a(const Sched *s, const SchedBound *e, FILE *out)
{
	const CutBound *b = &e->b;
	if (e->st != CUT_OK) {
		fprintf(out, "%s\n", e->st == CUT_UNBOUNDED ? "no flow bound: no link separates two ranks"
		                     : "no flow bound: the network passes MAX_A2A_WORK (collc sim's "
		                       "bound counts hops; docs/limits.md)");
		return;
	}
	char hi[32], lo[32], pair[32];
	gbps(b->busbw, hi, sizeof hi);
	gbps(b->achievable, lo, sizeof lo);
	gbps(b->a2a.hi / 8, pair, sizeof pair);
	fprintf(out, "alltoall busbw <= %s", hi);
	if (b->a2a.closed)
		fprintf(out, ", attained (the hop bound, exact on a network whose links are all alike "
		             "under its automorphisms: %s per pair of %d ranks)\n", pair, s->nrank);
	else
		fprintf(out, " (the concurrent flow; a routing reaches %s, within %.2f %%, after %d "
		             "phase%s", lo, b->a2a.lo > 0 ? (b->a2a.hi / b->a2a.lo - 1) * 100 : 0.0,
		        b->a2a.phases, b->a2a.phases == 1 ? "" : "s");
	if (b->a2a.closed)
		return;
	if (b->bound.cut) {
		char cut[160], cbw[32];
		name_cut(s->topo, b->bound.cut, cut, sizeof cut);
		gbps((double)b->bound.cut_bw / 8, cbw, sizeof cbw);
		fprintf(out, "; %s out of %s, %d rank%s to %d)\n", cbw, cut, b->bound.cut_ranks,
		        b->bound.cut_ranks == 1 ? "" : "s", s->nrank - b->bound.cut_ranks);
	} else {
		fputs("; links' lengths bind, no one cut)\n", out);
	}
}

/* One bound's line: what limits busbw, and where. */
static void
print_one(const Sched *s, const SchedBound *e, FILE *out)
{
	const CutBound *b = &e->b;
	if (s->kind == CK_ALLTOALL) {
		print_a2a(s, e, out);
		return;
	}
	if (e->st != CUT_OK) {
		fprintf(out, "%s\n", e->st == CUT_UNBOUNDED ? "no cut bound: no link separates two ranks"
		                     : "no cut bound: the network passes MAX_CUT_WORK (docs/limits.md)");
		return;
	}
	char bw[32], cut[160], cbw[32], ach[32];
	gbps(b->busbw, bw, sizeof bw);
	gbps(b->achievable, ach, sizeof ach);
	name_cut(s->topo, b->bound.cut, cut, sizeof cut);
	gbps((double)b->bound.cut_bw / 8, cbw, sizeof cbw);
	const char *way = s->kind == CK_REDUCE_SCATTER || s->kind == CK_REDUCE ? "into" : "out of";
	fprintf(out, "%s busbw <= %s", coll_kind_name[s->kind], bw);
	switch (s->kind) {
	case CK_ALLREDUCE:
		if (b->gossip) {
			gbps(b->busbw * s->nrank, cbw, sizeof cbw);
			fprintf(out, " (upper bound: gossip, the ranks' %s out over %d)", cbw, s->nrank);
		} else {
			fprintf(out, " (upper bound: %s out of %s%s)", cbw, cut,
			        topo_any_reduces(s->topo) ? "; switches reduce: no gossip bound" : "");
		}
		fprintf(out, "; reduce-scatter + allgather reach %s\n", ach);
		break;
	case CK_ALLGATHER:
	case CK_REDUCE_SCATTER:
		fprintf(out, "%s (%s %s %s, %d rank%s)\n",
		        switches_balanced(s->topo) ? ", attained" : "", cbw, way, cut,
		        b->bound.cut_ranks, b->bound.cut_ranks == 1 ? "" : "s");
		break;
	default:
		fprintf(out, " (%s %s %s, the root's side)\n", cbw, way, cut);
	}
}

void
bound_print(const Sched *const *s, int n, FILE *out)
{
	BoundCache cache = {0};
	bool *done = xcalloc((size_t)n + 1, sizeof *done);
	fprintf(out, "bounds from the links' cuts (docs/algorithms.md, \"The cut bound\"):\n");
	for (int i = 0; i < n; i++) {
		if (done[i])
			continue;
		int e = sched_bound(&cache, s[i]);
		/* the collectives of the same problem share the line */
		for (int j = i, k = 0; j < n; j++)
			if (!done[j] && sched_bound(&cache, s[j]) == e) {
				fprintf(out, "%s%s", k++ ? ", " : "  ", s[j]->name);
				done[j] = true;
			}
		fputs(": ", out);
		print_one(s[i], &cache.sb[e], out);
	}
	free(done);
	bound_cache_free(&cache);
}

void
bound_json(BoundCache *cache, const Sched *s, FILE *out)
{
	int at = sched_bound(cache, s); /* before reading sb, which it may move */
	const SchedBound *e = &cache->sb[at];
	const CutBound b = e->b;
	if (e->st != CUT_OK) {
		fputs("null", out);
		return;
	}
	if (s->kind == CK_ALLTOALL) {
		fprintf(out, "{\"busbw_GBps\": %.17g, \"achievable_busbw_GBps\": %.17g, "
		             "\"pair_bps\": [%.17g, %.17g], \"phases\": %d, \"closed_form\": %s, "
		             "\"cut_bps\": %lld, \"cut_ranks\": %d, \"cut\": ",
		        b.busbw / 1e9, b.achievable / 1e9, b.a2a.lo, b.a2a.hi, b.a2a.phases,
		        b.a2a.closed ? "true" : "false", (long long)b.bound.cut_bw, b.bound.cut_ranks);
		if (!b.bound.cut) {
			fputs("null}", out);
			return;
		}
	} else {
		fprintf(out, "{\"busbw_GBps\": %.17g, \"achievable_busbw_GBps\": %.17g, "
		             "\"gossip\": %s, \"rate_bps\": [%lld, %lld], \"cut_bps\": %lld, "
		             "\"cut_ranks\": %d, \"cut\": ",
		        b.busbw / 1e9, b.achievable / 1e9, b.gossip ? "true" : "false",
		        (long long)b.bound.rate.num, (long long)b.bound.rate.den,
		        (long long)b.bound.cut_bw, b.bound.cut_ranks);
	}
	fputs("[", out);
	for (int v = 0, k = 0; v < s->topo->nnode; v++)
		if (b.bound.cut[v])
			fprintf(out, "%s%d", k++ ? ", " : "", v);
	fputs("]}", out);
}
