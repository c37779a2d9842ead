/*
 * symm.c: tree symmetrization (algorithms.md 8). Every group element g
 * applied to every base tree b gives the tree of chunk (b, g); the vector
 * is cut into ntree x |G| equal chunks. In a tree of height H the reduce
 * phase sends from depth h to h - 1 in round H - h + 1 and the broadcast
 * phase reverses it in round H + h (rounds counted from 1 here, stored
 * from 0). A forest (two roots) reduces its two parts in rounds 1..H-1,
 * exchanges between the roots in round H and broadcasts after it: 2H - 1
 * rounds. With S segments (symmetric(..., segments S)) each base tree is
 * taken S times, copy j on its own 1/S of the tree's share with every
 * transfer j rounds later (and instance j, a pipeline of its own): the
 * classic pipelined tree, S - 1 more rounds, in which the levels of a tree
 * (a GPU's NIC and its NVLink) work at once on different segments. It
 * stays a symmetric form: segment j's base tree is the same tree, so the
 * proof by symmetry, the metrics and every backend take it as they take
 * several trees. With `segments auto` (symmetrize_auto) S is the power of
 * two of the least model time at the size being built, within the
 * estimate's budget. The schedule is held in this compact form; sched_expand
 * writes out every message for small cases. The rank form (Sched.xor_routes) is
 * the same with the group of XOR by each rank on 2^L ranks in place of
 * automorphisms: it keeps the ranks, though not the topology's links.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* Rounds of the reduce phase: the deepest tree sets the pace. */
static int
reduce_rounds(Tree **trees, int ntree)
{
	int H = 0;
	for (int b = 0; b < ntree; b++) {
		int h = trees[b]->height + (trees[b]->nroot == 2);
		if (h > H)
			H = h;
	}
	return H;
}

static void
add_base(Arena *a, Sched *s, int *cap, BaseXfer x)
{
	if (s->nbase == *cap)
		s->base = arena_grow(a, s->base, cap, sizeof *s->base);
	s->base[s->nbase++] = x;
	if (x.round + 1 > s->nround)
		s->nround = x.round + 1;
}

double
symmetric_base_count(CollKind kind, Tree **trees, int ntree, int nnode)
{
	bool reduce = kind == CK_ALLREDUCE || kind == CK_REDUCE_SCATTER;
	bool bcast = kind == CK_ALLREDUCE || kind == CK_ALLGATHER;
	double n = 0;
	for (int b = 0; b < ntree; b++) {
		int edges = 0, forest = trees[b]->nroot == 2;
		for (int v = 0; v < nnode; v++)
			edges += trees[b]->parent[v] >= 0;
		/* each edge once a phase; a forest's roots: both ways (reduce) or once */
		n += (double)edges * (reduce + bcast) + forest * (reduce ? 2 : 1);
	}
	return n;
}

/* Segment j (0 < j < S) of base tree b is base tree b * S + j: segment
 * 0's transfers again, j rounds later, as instance j. */
static void
add_segments(Arena *a, Sched *s, int *cap, int S)
{
	int n0 = s->nbase;
	for (int i = 0; i < n0; i++)
		s->base[i].tree *= S;
	for (int j = 1; j < S; j++)
		for (int i = 0; i < n0; i++) {
			BaseXfer x = s->base[i];
			x.round += j;
			x.tree += j;
			x.instance = j;
			add_base(a, s, cap, x);
		}
}

Sched *
symmetrize(Diag *dg, Arena *a, const char *name, Loc loc, CollKind kind, const Topo *t, Routes *routes,
           Tree **trees, int ntree, int segments, const Group *g, const int *rank_node, int nrank)
{
	Sched *s = sched_new(a, name, loc, kind, "symmetric", t, rank_node, nrank);
	int S = segments > 1 ? segments : 1;
	s->group = g;
	s->ntree = ntree * S;
	s->tree = arena_array(a, (size_t)s->ntree, sizeof *s->tree);
	for (int k = 0; k < s->ntree; k++)
		s->tree[k] = trees[k / S];
	s->segments = S > 1 ? S : 0;
	if (S > 1) /* given by the file; no commas (a CSV cell) */
		s->choice = arena_printf(a, "fixed segments %d", S);
	s->nchunk = s->ntree * g->order;
	SchedBuilder sb;
	sched_begin(&sb, a, s, routes);
	int H = reduce_rounds(trees, ntree), cap = 0;
	bool reduce = kind == CK_ALLREDUCE || kind == CK_REDUCE_SCATTER;
	bool bcast = kind == CK_ALLREDUCE || kind == CK_ALLGATHER;
	/* the broadcast phase starts after the reduce phase, or at once */
	int bfirst = reduce ? H : 0;
	for (int b = 0; b < ntree; b++) {
		const Tree *tr = trees[b];
		bool forest = tr->nroot == 2;
		for (int v = 0; v < t->nnode; v++) {
			int u = tr->parent[v];
			if (u < 0)
				continue;
			int d = tr->depth[v];
			const int *l;
			if (reduce) {
				int n = route_get(routes, v, u, &l);
				/* round H - d + 1 (forest: H - d), from 0 */
				add_base(a, s, &cap, (BaseXfer){.round = H - d - forest, .tree = b, .src = v,
				                                .dst = u, .op = X_REDUCE,
				                                .route = sched_route(&sb, l, n)});
			}
			if (bcast) {
				int n = route_get(routes, u, v, &l);
				add_base(a, s, &cap, (BaseXfer){.round = bfirst + d - 1,
				                                .tree = b, .src = u, .dst = v, .op = X_COPY,
				                                .route = sched_route(&sb, l, n)});
			}
		}
		if (forest) {
			/* the roots swap their parts: a reduce both ways in round H (RS, AR),
			 * or root 0 copies to root 1 before the broadcast (AG) */
			int ra = tr->root[0], rb = tr->root[1];
			const int *l;
			int n = route_get(routes, ra, rb, &l);
			int r = reduce ? H - 1 : 0;
			add_base(a, s, &cap, (BaseXfer){.round = r, .tree = b, .src = ra, .dst = rb,
			                                .op = reduce ? X_REDUCE : X_COPY,
			                                .route = sched_route(&sb, l, n)});
			if (reduce) {
				n = route_get(routes, rb, ra, &l);
				add_base(a, s, &cap, (BaseXfer){.round = r, .tree = b, .src = rb, .dst = ra,
				                                .op = X_REDUCE,
				                                .route = sched_route(&sb, l, n)});
			}
		}
	}
	if (!reduce) {
		/* AG of a forest: its broadcast waits one round for the roots' copy */
		for (int i = 0; i < s->nbase; i++)
			if (trees[s->base[i].tree]->nroot == 2 && s->base[i].op == X_COPY &&
			    !(s->base[i].src == trees[s->base[i].tree]->root[0] &&
			      s->base[i].dst == trees[s->base[i].tree]->root[1]))
				s->base[i].round++;
		s->nround = 0;
		for (int i = 0; i < s->nbase; i++)
			if (s->base[i].round + 1 > s->nround)
				s->nround = s->base[i].round + 1;
	}
	if (S > 1)
		add_segments(a, s, &cap, S);
	sched_end(dg, &sb);
	/* chunk (b, g) ends (RS) or starts (AG) at the image of b's first root */
	s->owner = arena_array(a, (size_t)s->nchunk, sizeof *s->owner);
	for (int b = 0; b < s->ntree; b++)
		for (int e = 0; e < g->order; e++)
			s->owner[b * g->order + e] = s->node_rank[group_node(g, e, s->tree[b]->root[0])];
	return s;
}

Sched *
symmetrize_auto(Diag *dg, Arena *a, const char *name, Loc loc, CollKind kind, const Topo *t,
                Routes *routes, Tree **trees, int ntree, const Group *g, const int *rank_node,
                int nrank, double size)
{
	double base = symmetric_base_count(kind, trees, ntree, t->nnode);
	Sched *best = NULL;
	double best_time = 0;
	for (int S = 1; S <= MAX_INSTANCES; S *= 2) {
		/* past the budget the estimate refuses it: fewer segments were the most */
		diag_mute(dg, true);
		bool over = S > 1 && check_symmetric_segments(dg, loc, name, ntree, S, g->order, base) != 0;
		diag_mute(dg, false);
		if (over)
			break;
		Sched *s = symmetrize(dg, a, name, loc, kind, t, routes, trees, ntree, S, g, rank_node,
		                      nrank);
		if (!s)
			return best;
		Metrics m;
		metrics(s, size, &m);
		/* the time falls with S while the links' overlap gains more than
		 * the S - 1 rounds of fill cost, then rises: the first S that
		 * gains nothing ends the search */
		if (best && m.model_time >= best_time)
			break;
		best = s;
		best_time = m.model_time;
	}
	if (best) {
		char words[32]; /* "1 GiB": no commas (a CSV cell) */
		bytes_in_units(size, 2, false, words, sizeof words);
		best->choice = arena_printf(a, "segments %d chosen for %s",
		                            best->segments ? best->segments : 1, words);
		best->size_chosen = true;
	}
	return best;
}

/* The rank form: copy m of base transfer x between ranks src ^ m and
 * dst ^ m, routed as an explicit schedule's message is. */
static Sched *
expand_ranks(Diag *dg, Arena *a, const Sched *sym, Sched *s)
{
	SchedBuilder sb;
	sched_begin(&sb, a, s, sym->xor_routes);
	for (int i = 0; i < sym->nbase; i++) {
		const BaseXfer *x = &sym->base[i];
		int src = sym->node_rank[x->src], dst = sym->node_rank[x->dst];
		for (int m = 0; m < sym->nrank; m++) {
			int chunk = x->tree * sym->nrank + m;
			sb.instance = x->instance;
			sched_msg(&sb, x->round, src ^ m, dst ^ m, x->op, &chunk, 1);
		}
	}
	sched_end(dg, &sb);
	s->nround = sym->nround;
	s->nbarrier = sym->nbarrier;
	s->barrier = sym->barrier;
	return s;
}

Sched *
sched_expand(Diag *dg, Arena *a, const Sched *sym)
{
	const Group *g = sym->group;
	const Topo *t = sym->topo;
	Sched *s = sched_new(a, sym->name, sym->loc, sym->kind, sym->algorithm, t, sym->rank_node,
	                     sym->nrank);
	s->nchunk = sym->nchunk;
	s->owner = sym->owner;
	s->root = sym->root;
	if (sym->xor_routes)
		return expand_ranks(dg, a, sym, s);
	SchedBuilder sb;
	sched_begin(&sb, a, s, NULL);
	int *links = xmalloc(((size_t)t->nnode + 1) * sizeof *links);
	for (int i = 0; i < sym->nbase; i++) {
		const BaseXfer *x = &sym->base[i];
		int n = sched_route_len(sym, x->route);
		const int *base = sym->route_link + sym->route_off[x->route];
		for (int e = 0; e < g->order; e++) {
			for (int k = 0; k < n; k++)
				links[k] = group_link(g, e, base[k]);
			int chunk = x->tree * g->order + e;
			sb.instance = x->instance;
			sched_msg_route(&sb, x->round, s->node_rank[group_node(g, e, x->src)],
			                s->node_rank[group_node(g, e, x->dst)], x->op, &chunk, 1, links, n);
		}
	}
	free(links);
	sched_end(dg, &sb);
	s->nround = sym->nround;
	s->nbarrier = sym->nbarrier;
	s->barrier = sym->barrier;
	return s;
}

int
group_keeps_ranks(Diag *dg, const Sched *s, const Group *g, Loc loc)
{
	if (s->nrank == s->topo->nrank)
		return 0; /* automorphisms map ranks to ranks */
	char a[64], b[64];
	for (int e = 0; e < g->order; e++)
		for (int r = 0; r < s->nrank; r++) {
			int w = group_node(g, e, s->rank_node[r]);
			if (s->node_rank[w] < 0) {
				topo_node_name(s->topo, s->rank_node[r], a, sizeof a);
				topo_node_name(s->topo, w, b, sizeof b);
				error_at(dg, loc, "group '%s' moves node %s of '%s' to node %s, outside its ranks",
				         g->name, a, s->name, b);
				return -1;
			}
		}
	return 0;
}

/* The rank form: XOR by every rank maps the ranks onto themselves when
 * they number a power of two; chunk (b, m)'s owner is then the root's rank
 * XOR m. */
static int
check_rank_form(Diag *dg, const Sched *s)
{
	int p = s->nrank;
	if (p < 2 || (p & (p - 1)) != 0) {
		error_at(dg, s->loc, "schedule of '%s': the rank form needs a power of two of ranks, not %d",
		         s->name, p);
		return -1;
	}
	for (int t = 0; s->owner && t < s->ntree; t++)
		for (int m = 0; m < p; m++)
			if (s->owner[t * p + m] != (s->node_rank[s->tree[t]->root[0]] ^ m)) {
				error_at(dg, s->loc, "schedule of '%s': chunk %d's owner is rank %d, not the rank "
				         "at its tree's root XOR %d", s->name, t * p + m, s->owner[t * p + m], m);
				return -1;
			}
	return 0;
}

int
sched_check_symmetric(Diag *dg, const Sched *s)
{
	const Group *g = s->group;
	char a[64];
	if (s->xor_routes ? check_rank_form(dg, s) != 0 : group_keeps_ranks(dg, s, g, s->loc) != 0)
		return -1;
	for (int t = 0; g && s->owner && t < s->ntree; t++)
		for (int e = 0; e < g->order; e++)
			if (s->owner[t * g->order + e] != s->node_rank[group_node(g, e, s->tree[t]->root[0])]) {
				error_at(dg, s->loc, "schedule of '%s': chunk %d's owner is rank %d, not the rank "
				         "at its tree's root", s->name, t * g->order + e,
				         s->owner[t * g->order + e]);
				return -1;
			}
	for (int t = 0; t < s->ntree; t++)
		for (int v = 0; v < s->topo->nnode; v++)
			if ((s->tree[t]->depth[v] >= 0) != (s->node_rank[v] >= 0)) {
				topo_node_name(s->topo, v, a, sizeof a);
				error_at(dg, s->loc, "schedule of '%s': base tree %d and the ranks differ at node %s",
				         s->name, t + 1, a);
				return -1;
			}
	return 0;
}

static int
rank_key_order(const void *pa, const void *pb)
{
	const RankKey *a = pa, *b = pb;
	if (a->dst != b->dst)
		return a->dst < b->dst ? -1 : 1;
	return (a->op > b->op) - (a->op < b->op);
}

int
rank_form_keys(const Sched *s, RankKey **keyp, int **firstp)
{
	RankKey *key = xmalloc(((size_t)s->nbase + 1) * sizeof *key);
	int *first = xcalloc((size_t)s->nround + 2, sizeof *first);
	for (int i = 0; i < s->nbase; i++)
		first[s->base[i].round + 1]++;
	for (int r = 0; r < s->nround; r++)
		first[r + 1] += first[r];
	int *at = xmalloc(((size_t)s->nround + 1) * sizeof *at);
	copy_n(at, first, (size_t)s->nround, sizeof *at);
	for (int i = 0; i < s->nbase; i++) {
		const BaseXfer *x = &s->base[i];
		key[at[x->round]++] = (RankKey){s->node_rank[x->dst] ^ s->node_rank[x->src], x->op, 1};
	}
	free(at);
	/* each round sorted, and its repeats merged in place */
	int n = 0, most = 0;
	for (int r = 0; r < s->nround; r++) {
		int lo = first[r], hi = first[r + 1], start = n;
		sort_n(key + lo, (size_t)(hi - lo), sizeof *key, rank_key_order);
		for (int i = lo; i < hi; i++)
			if (n > start && rank_key_order(&key[n - 1], &key[i]) == 0)
				key[n - 1].count++;
			else
				key[n++] = key[i];
		first[r] = start;
		most = n - start > most ? n - start : most;
	}
	first[s->nround] = n;
	*keyp = key;
	*firstp = first;
	return most;
}
