/*
 * alg_disjoint.c: link-disjoint spanning trees, one per root, and the
 * SuperMesh root sets (algorithms.md 9.3; docs/algorithms.md "Disjoint
 * trees").
 *
 * Needs: a topology without switches whose links are sorted (topo.c) and
 * distinct roots. Establishes: K trees, tree i rooted at roots[i], each
 * spanning every node, edge parent -> v carried by the link tree->link[v],
 * no directed link in two trees; or a located error saying why no such
 * trees exist (the counting bound, or a node set with too few links in).
 *
 * Two constructions. On a square mesh or supermesh the seed's Algorithm 1
 * runs first: an interior root reaches the border by a straight path, each
 * tree then grows breadth-first over the k - 1 rows and k - 1 columns
 * nearest its root, and the trees take turns attaching one missing neighbour each, added (parallel)
 * links first. It is a heuristic and may get stuck; then, and on every other
 * topology, the general method runs: Lovász's proof of Edmonds' branching
 * theorem. K link-disjoint spanning arborescences rooted at r_1..r_K exist
 * iff every node set X has at least #{i : r_i not in X} links entering it.
 * The trees S_1..S_K grow one link at a time; a link u -> v out of S_j is
 * kept only if the unused links D' still satisfy, for every X,
 *   rho_D'(X) + #{j : S_j meets X} >= K,
 * which the proof shows some link always does. The condition is a max-flow
 * bound: a source s, one node t_j per tree (s -> t_j of capacity 1, t_j -> x
 * unbounded for x in S_j) and the unused links of capacity 1; it holds iff
 * every node receives a flow of K. Taking u -> v can only break sets that
 * contain v, so one flow into v (K augmenting paths) checks a candidate.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

typedef struct Lovasz {
	const Topo *t;
	int k, n;                /* trees, nodes */
	int *in_off, *in_link;   /* links into each node */
	unsigned char *used;     /* nlink: in a tree */
	unsigned char *flow;     /* nlink: unit of flow on the link */
	unsigned char *member;   /* k x n: node in S_j */
	int *tnode;              /* k: the node t_j's unit of flow goes to, or -1 */
	unsigned char *sflow;    /* k: flow s -> t_j */
	int *touched, ntouched;  /* links given flow by this check, to clear */
	unsigned *seen, stamp;   /* n + k: reached in the search numbered stamp */
	int *queue;              /* the search over the n + k vertices */
	int *list;               /* k x n: the nodes of S_j, in the order they joined */
	int *size;               /* |S_j| */
} Lovasz;

static void
lovasz_init(Lovasz *L, const Topo *t, int k)
{
	memset(L, 0, sizeof *L);
	L->t = t;
	L->k = k;
	L->n = t->nnode;
	int n = L->n, nv = n + k + 1;
	L->in_off = xcalloc((size_t)n + 1, sizeof *L->in_off);
	L->in_link = xmalloc((size_t)t->nlink * sizeof *L->in_link + 1);
	for (int l = 0; l < t->nlink; l++)
		L->in_off[t->link[l].dst + 1]++;
	for (int v = 0; v < n; v++)
		L->in_off[v + 1] += L->in_off[v];
	int *fill = xmalloc((size_t)n * sizeof *fill);
	memcpy(fill, L->in_off, (size_t)n * sizeof *fill);
	for (int l = 0; l < t->nlink; l++)
		L->in_link[fill[t->link[l].dst]++] = l;
	free(fill);
	L->used = xcalloc((size_t)t->nlink + 1, 1);
	L->flow = xcalloc((size_t)t->nlink + 1, 1);
	L->member = xcalloc((size_t)k * (size_t)n, 1);
	L->tnode = xcalloc((size_t)k, sizeof *L->tnode);
	L->sflow = xcalloc((size_t)k, 1);
	L->touched = xmalloc(((size_t)t->nlink + 1) * sizeof *L->touched * (size_t)k);
	L->seen = xcalloc((size_t)nv, sizeof *L->seen);
	L->list = xmalloc((size_t)k * (size_t)n * sizeof *L->list);
	L->queue = xmalloc((size_t)nv * sizeof *L->queue);
	L->size = xcalloc((size_t)k, sizeof *L->size);
}

static void
lovasz_free(Lovasz *L)
{
	free(L->in_off);
	free(L->in_link);
	free(L->used);
	free(L->flow);
	free(L->member);
	free(L->tnode);
	free(L->sflow);
	free(L->touched);
	free(L->seen);
	free(L->list);
	free(L->queue);
	free(L->size);
}

/*
 * The flows searched backwards from the target v: a vertex is "reached"
 * when it has a residual path to v. Each t_j has one unit at most (its arc
 * from s has capacity 1), so its flow goes to one node, tnode[j]. Most
 * searches end a hop or two from v, at a node of a tree whose t_j is still
 * unused: far cheaper than a search from s that fans out over whole trees.
 * next[] holds, per reached vertex, the vertex after it on the path to v and
 * how: nxt_link[x] = 1 + l forward over link l, -1 - l backwards over it,
 * 0 along an arc at some t_j. Vertices: nodes 0..n-1, t_j = n + j.
 */
static bool
augment(Lovasz *L, int to, int *next, int *nxt_link)
{
	const Topo *t = L->t;
	int n = L->n, k = L->k;
	L->stamp++;
	int qh = 0, qt = 0;
	L->seen[to] = L->stamp;
	next[to] = -1;
	L->queue[qt++] = to;
	int found = -1; /* the t_j whose s -> t_j arc is free */
	while (qh < qt && found < 0) {
		int b = L->queue[qh++];
		if (b >= n) { /* t_j: from s if free, else from its flow's reverse */
			int j = b - n;
			if (!L->sflow[j]) {
				found = j;
				break;
			}
			int x = L->tnode[j]; /* residual x -> t_j */
			if (x >= 0 && L->seen[x] != L->stamp) {
				L->seen[x] = L->stamp;
				next[x] = b;
				nxt_link[x] = 0;
				L->queue[qt++] = x;
			}
			continue;
		}
		for (int j = 0; j < k; j++) /* t_j -> b, unbounded */
			if (L->member[j * n + b] && L->seen[n + j] != L->stamp) {
				L->seen[n + j] = L->stamp;
				next[n + j] = b;
				nxt_link[n + j] = 0;
				L->queue[qt++] = n + j;
			}
		for (int i = L->in_off[b]; i < L->in_off[b + 1]; i++) { /* a -> b forward */
			int l = L->in_link[i], a = t->link[l].src;
			if (!L->used[l] && !L->flow[l] && L->seen[a] != L->stamp) {
				L->seen[a] = L->stamp;
				next[a] = b;
				nxt_link[a] = 1 + l;
				L->queue[qt++] = a;
			}
		}
		for (int l = t->out[b]; l < t->out[b + 1]; l++) { /* b -> a carries flow: a -> b */
			int a = t->link[l].dst;
			if (L->flow[l] && L->seen[a] != L->stamp) {
				L->seen[a] = L->stamp;
				next[a] = b;
				nxt_link[a] = -1 - l;
				L->queue[qt++] = a;
			}
		}
	}
	if (found < 0)
		return false;
	L->sflow[found] = 1;
	for (int x = n + found; next[x] >= 0; x = next[x]) {
		int y = next[x];
		if (x >= n) { /* t_j -> y */
			L->tnode[x - n] = y;
		} else if (y >= n) { /* x -> t_j undoes t_j's flow to x */
			if (L->tnode[y - n] == x)
				L->tnode[y - n] = -1;
		} else if (nxt_link[x] > 0) {
			L->flow[nxt_link[x] - 1] = 1;
			L->touched[L->ntouched++] = nxt_link[x] - 1;
		} else {
			L->flow[-1 - nxt_link[x]] = 0;
		}
	}
	return true;
}

/* The flow into v reaches k: every set containing v keeps the condition.
 * On false, the nodes the last search reached (seen == stamp) are a set
 * with too few links in. */
static bool
flow_reaches(Lovasz *L, int v, int *next, int *nxt_link)
{
	for (int i = 0; i < L->ntouched; i++)
		L->flow[L->touched[i]] = 0;
	L->ntouched = 0;
	for (int j = 0; j < L->k; j++) {
		L->sflow[j] = 0;
		L->tnode[j] = -1;
	}
	for (int i = 0; i < L->k; i++)
		if (!augment(L, v, next, nxt_link))
			return false;
	return true;
}

static void
node_list(const Topo *t, const int *nodes, int n, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (int i = 0; i < n && at + 40 < len; i++) {
		char name[32];
		topo_node_name(t, nodes[i], name, sizeof name);
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", name);
		if (i == 7 && n > 9) {
			snprintf(buf + at, len - at, ", ... (%d nodes)", n);
			return;
		}
	}
}

/* Proves absence: the counting bound, else the set the last search could
 * not fill (the nodes it reached). -1 after reporting at loc. */
static int
report_absence(Diag *dg, Lovasz *L, const int *roots, Loc loc)
{
	const Topo *t = L->t;
	int k = L->k, n = L->n;
	char shape[64];
	topo_describe(t, shape, sizeof shape);
	if (t->nlink < k * (n - 1)) {
		char why[160] = "";
		if (t->kind == TK_MESH && t->ndim == 2 && t->size[0] == t->size[1])
			snprintf(why, sizeof why, "; an N x N mesh has 4N^2 - 4N directed links and %d "
			         "trees need 4N^2 - 4 when N = %d, so a mesh never fits 4", k, t->size[0]);
		error_at(dg, loc, "no %d link-disjoint spanning trees on '%s' (%s): each needs its own link "
		         "into every node but its root, %d x %d = %d directed links, and it has %d%s",
		         k, t->name, shape, k, n - 1, k * (n - 1), t->nlink, why);
		return -1;
	}
	int *set = xmalloc((size_t)n * sizeof *set);
	int nset = 0, rooted_out = k, in = 0;
	for (int v = 0; v < n; v++)
		if (L->seen[v] == L->stamp)
			set[nset++] = v;
	for (int i = 0; i < nset; i++)
		for (int j = 0; j < k; j++)
			rooted_out -= roots[j] == set[i];
	for (int i = 0; i < nset; i++)
		for (int e = L->in_off[set[i]]; e < L->in_off[set[i] + 1]; e++)
			in += L->seen[t->link[L->in_link[e]].src] != L->stamp;
	char list[400];
	node_list(t, set, nset, list, sizeof list);
	error_at(dg, loc, "no %d link-disjoint spanning trees with these roots on '%s' (%s): the nodes "
	         "{%s} have %d link%s coming in from the other nodes, but the %d tree%s rooted "
	         "outside them need%s one each", k, t->name, shape, list, in, in == 1 ? "" : "s",
	         rooted_out, rooted_out == 1 ? "" : "s", rooted_out == 1 ? "s" : "");
	free(set);
	return -1;
}

/* The next link for tree j: out of S_j into a node it lacks, unused, the
 * shallowest tail first, added (parallel) links before mesh links; links
 * marked in `tried` are skipped. -1 if none is left. */
static int
next_candidate(const Lovasz *L, int j, const int *depth, const unsigned char *tried)
{
	const Topo *t = L->t;
	int n = L->n, best = -1;
	for (int m = 0; m < L->size[j]; m++) {
		int u = L->list[j * n + m];
		if (best >= 0 && depth[u] > depth[t->link[best].src])
			continue;
		for (int i = t->out[u]; i < t->out[u + 1]; i++) {
			if (L->used[i] || tried[i] || L->member[j * n + t->link[i].dst])
				continue;
			if (best < 0 || depth[u] < depth[t->link[best].src] ||
			    (depth[u] == depth[t->link[best].src] && t->link[i].copy > t->link[best].copy))
				best = i;
		}
	}
	return best;
}

static void
take(Lovasz *L, Tree **tr, int j, int l, int *depth_j)
{
	const Link *e = &L->t->link[l];
	L->used[l] = 1;
	L->member[j * L->n + e->dst] = 1;
	L->list[j * L->n + L->size[j]++] = e->dst;
	tr[j]->parent[e->dst] = e->src;
	tr[j]->link[e->dst] = l;
	depth_j[e->dst] = depth_j[e->src] + 1;
}

/* The general method; 0, or -1 after reporting. Trees start as set up in tr
 * (a root each, or what Algorithm 1 left): the condition is checked first. */
static int
lovasz(Diag *dg, Lovasz *L, Tree **tr, const int *roots, Loc loc)
{
	int k = L->k, n = L->n;
	int *next = xmalloc((size_t)(n + k) * sizeof *next);
	int *how = xmalloc((size_t)(n + k) * sizeof *how);
	int *depth = xmalloc((size_t)k * (size_t)n * sizeof *depth);
	unsigned char *tried = xcalloc((size_t)L->t->nlink + 1, 1);
	int rc = 0;
	for (int j = 0; j < k; j++)
		for (int v = 0; v < n; v++)
			depth[j * n + v] = L->member[j * n + v] ? tr[j]->depth[v] : -1;
	for (int v = 0; v < n && rc == 0; v++)
		if (!flow_reaches(L, v, next, how))
			rc = report_absence(dg, L, roots, loc);
	while (rc == 0) {
		int j = -1;
		for (int i = 0; i < k; i++)
			if (L->size[i] < n && (j < 0 || L->size[i] < L->size[j]))
				j = i;
		if (j < 0)
			break;
		memset(tried, 0, (size_t)L->t->nlink);
		for (;;) {
			int l = next_candidate(L, j, depth + j * n, tried);
			if (l < 0)
				die("disjoint: Edmonds' condition held but no link extends tree %d", j);
			int v = L->t->link[l].dst;
			L->used[l] = 1;
			L->member[j * n + v] = 1;
			L->list[j * n + L->size[j]++] = v;
			bool ok = flow_reaches(L, v, next, how);
			L->used[l] = 0;
			L->member[j * n + v] = 0;
			L->size[j]--;
			if (ok) {
				take(L, tr, j, l, depth + j * n);
				break;
			}
			tried[l] = 1;
		}
	}
	free(how);
	free(next);
	free(depth);
	free(tried);
	return rc;
}

/* ---- the seed's Algorithm 1 on square (super)meshes ---- */

/* The link u -> v not yet used, an added copy first; -1 if none. */
static int
free_link(const Lovasz *L, int u, int v)
{
	const Topo *t = L->t;
	int best = -1;
	for (int i = t->out[u]; i < t->out[u + 1]; i++)
		if (t->link[i].dst == v && !L->used[i] && (best < 0 || t->link[i].copy > t->link[best].copy))
			best = i;
	return best;
}

/* Steps 1 - 4 of Algorithm 1; true when every tree spans. On false the trees
 * are left as built and the caller starts over from the roots. */
static bool
algorithm1(Lovasz *L, Tree **tr, const int *roots, int *depth)
{
	const Topo *t = L->t;
	int k = L->k, n = L->n, side = t->size[0];
	/* 2: an interior root walks straight to the nearest border */
	int *far_row = xmalloc((size_t)k * 2 * sizeof *far_row), *far_col = far_row + k;
	for (int j = 0; j < k; j++) {
		int r = roots[j] / side, c = roots[j] % side;
		int dist[4] = {r, side - 1 - c, side - 1 - r, c}; /* N, E, S, W */
		int dir = 0;
		for (int d = 1; d < 4; d++)
			if (dist[d] < dist[dir])
				dir = d;
		/* step 3's block: the k - 1 rows and columns on the root's near
		 * side, leaving out the far row and column (a tie, in the middle
		 * of an odd side, goes the way the root walked) */
		far_row[j] = dist[0] < dist[2] || (dist[0] == dist[2] && dir != 2) ? side - 1 : 0;
		far_col[j] = dist[3] < dist[1] || (dist[3] == dist[1] && dir != 1) ? side - 1 : 0;
		static const int dr[4] = {-1, 0, 1, 0}, dc[4] = {0, 1, 0, -1};
		for (int s = 0; s < dist[dir]; s++) {
			int u = r * side + c;
			r += dr[dir];
			c += dc[dir];
			int l = free_link(L, u, r * side + c);
			if (l < 0) {
				free(far_row);
				return false;
			}
			take(L, tr, j, l, depth + j * n);
		}
	}
	/* 3: breadth-first over the k - 1 rows and k - 1 columns nearest the
	 * root (the seed's block: Figure 6's root 5 takes rows and columns 0 -
	 * 2 of 4x4); the far row and column are step 4's */
	int *queue = xmalloc((size_t)n * sizeof *queue);
	for (int j = 0; j < k; j++) {
		int qh = 0, qt = 0;
		for (int v = 0; v < n; v++)
			if (L->member[j * n + v])
				queue[qt++] = v;
		while (qh < qt) {
			int u = queue[qh++];
			for (int pass = 1; pass >= 0; pass--) /* added links first */
				for (int i = t->out[u]; i < t->out[u + 1]; i++) {
					int v = t->link[i].dst;
					if (t->link[i].copy != pass || L->used[i] || L->member[j * n + v])
						continue;
					if (v / side == far_row[j] || v % side == far_col[j])
						continue; /* outside the block */
					take(L, tr, j, i, depth + j * n);
					queue[qt++] = v;
				}
		}
	}
	free(queue);
	free(far_row);
	/* 4: round robin, one missing neighbour per tree per turn */
	for (bool grew = true; grew;) {
		grew = false;
		for (int j = 0; j < k; j++) {
			int best = -1;
			for (int u = 0; u < n; u++) {
				if (!L->member[j * n + u])
					continue;
				for (int i = t->out[u]; i < t->out[u + 1]; i++)
					if (!L->used[i] && !L->member[j * n + t->link[i].dst] &&
					    (best < 0 || depth[j * n + u] < depth[j * n + t->link[best].src] ||
					     (depth[j * n + u] == depth[j * n + t->link[best].src] &&
					      t->link[i].copy > t->link[best].copy)))
						best = i;
			}
			if (best >= 0) {
				take(L, tr, j, best, depth + j * n);
				grew = true;
			}
		}
	}
	for (int j = 0; j < k; j++)
		if (L->size[j] < n)
			return false;
	return true;
}

static void
reset_trees(Lovasz *L, Tree **tr, const int *roots)
{
	int k = L->k, n = L->n;
	memset(L->used, 0, (size_t)L->t->nlink);
	memset(L->member, 0, (size_t)k * (size_t)n);
	for (int j = 0; j < k; j++) {
		for (int v = 0; v < n; v++) {
			tr[j]->parent[v] = -1;
			tr[j]->link[v] = -1;
			tr[j]->depth[v] = -1;
		}
		tr[j]->depth[roots[j]] = 0;
		L->member[j * n + roots[j]] = 1;
		L->list[j * n] = roots[j];
		L->size[j] = 1;
	}
}

static bool
square_grid(const Topo *t)
{
	return (t->kind == TK_MESH || t->kind == TK_SUPERMESH) && t->ndim == 2 &&
	       t->size[0] == t->size[1];
}

Tree **
disjoint_trees(Diag *dg, Arena *a, const Topo *t, Routes *r, const int *roots, int k, Loc loc,
               DisjointMethod *method)
{
	int n = t->nnode;
	if (t->is_switch) {
		error_at(dg, loc, "disjoint trees span every node; '%s' has switches, which hold no data",
		         t->name);
		return NULL;
	}
	/* a check searches a hop or two as a rule, but at worst the whole graph
	 * k times, for each of the k (n - 1) links taken and the n first checks:
	 * refuse what could run for minutes rather than hang */
	double work = (double)k * k * n * (double)(2 * n + t->nlink) * k;
	if (work > 4e11) {
		error_at(dg, loc, "disjoint: %d trees on %d nodes and %d links is beyond what collc builds "
		         "(about %.0e steps of max-flow; the limit is 4e11)", k, n, t->nlink, work);
		return NULL;
	}
	Tree **tr = arena_array(a, (size_t)k, sizeof *tr);
	for (int j = 0; j < k; j++) {
		tr[j] = NEW(a, Tree);
		tr[j]->topo = t;
		tr[j]->nroot = 1;
		tr[j]->root[0] = roots[j];
		tr[j]->parent = arena_array(a, (size_t)n, sizeof *tr[j]->parent);
		tr[j]->depth = arena_array(a, (size_t)n, sizeof *tr[j]->depth);
		tr[j]->link = arena_array(a, (size_t)n, sizeof *tr[j]->link);
	}
	Lovasz L;
	lovasz_init(&L, t, k);
	reset_trees(&L, tr, roots);
	int *depth = xmalloc((size_t)k * (size_t)n * sizeof *depth);
	for (int j = 0; j < k; j++)
		for (int v = 0; v < n; v++)
			depth[j * n + v] = v == roots[j] ? 0 : -1;
	*method = DISJOINT_GENERAL;
	int rc = 0;
	if (square_grid(t) && t->nlink >= k * (n - 1) && algorithm1(&L, tr, roots, depth)) {
		*method = DISJOINT_ALGORITHM1;
	} else {
		reset_trees(&L, tr, roots);
		rc = lovasz(dg, &L, tr, roots, loc);
	}
	free(depth);
	lovasz_free(&L);
	if (rc != 0)
		return NULL;
	for (int j = 0; j < k; j++)
		if (tree_finish(tr[j], r) != 0)
			die("disjoint: tree %d has a cycle", j);
	return tr;
}

/* ---- root sets ---- */

int
supermesh_root_sets(const Topo *t, int *roots, int *set_size)
{
	int k = t->size[0], nset = 0, nroot = 0;
	bool odd_alter = t->kind == TK_SUPERMESH && t->variant == 1 && k % 2 == 1;
	/* the clockwise sequence: ring by ring, offset by offset, one root per side */
	int *seq = xmalloc((size_t)k * k * sizeof *seq);
	int nseq = 0;
	for (int ring = 0; 2 * ring < k; ring++) {
		int lo = ring, hi = k - 1 - ring, s = hi - lo + 1;
		if (s == 1) {
			seq[nseq++] = lo * k + lo;
			break;
		}
		for (int i = 0; i <= s - 2; i++) {
			seq[nseq++] = lo * k + (lo + i);       /* top, from the left */
			seq[nseq++] = (lo + i) * k + hi;       /* right, from the top */
			seq[nseq++] = hi * k + (hi - i);       /* bottom, from the right */
			seq[nseq++] = (hi - i) * k + lo;       /* left, from the bottom */
		}
	}
	int per = 4;
	for (int i = 0; i < nseq;) {
		if (odd_alter && i > 0)
			per = 3;
		int m = nseq - i < per ? nseq - i : per;
		set_size[nset++] = m;
		for (int j = 0; j < m; j++)
			roots[nroot++] = seq[i + j];
		i += m;
	}
	free(seq);
	return nset;
}
