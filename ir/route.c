/*
 * route.c: routes, computed on demand and cached per (src, dst), so that a
 * 64x64 torus never builds an all-pairs table.
 *
 * shortest_path: from the source, repeatedly take the first link in port
 *   order (topo.c) that brings the packet one hop closer. On tori, meshes
 *   and HyperX this is dimension order with the shorter way round, ties at
 *   n/2 broken towards -1: the same routes as dor there. Distances are in
 *   closed form on those topologies and by BFS (one destination cached) on
 *   the others.
 * ecmp (`routing shortest_path` of a collective): the minimal paths an ECMP
 *   fabric uses. At every hop the packet may take any link that brings it one
 *   hop closer (on a torus: either way round at a tie at n/2, and the
 *   dimensions in any order). Like a fabric's source-based ECMP (d-mod-k,
 *   as spine_leaf below), a flow from src takes the (src mod c)-th of the c
 *   closer links in port order: every flow keeps one path (no reordering)
 *   and the flows of neighbouring sources spread over all minimal paths, so
 *   halving-doubling's exchanges at distance n/2 use both ways round where
 *   dor sends them all one way. On nearest-neighbour traffic there is one
 *   minimal path and ecmp = dor.
 *   Applies to tori, rings, meshes and HyperX; elsewhere it is shortest_path.
 * fastest (`routing fastest`, and a collective's default): the widest paths
 *   first (the largest least bandwidth on the way: a message of many
 *   packets streams at its slowest link's rate, in the simulator's packet
 *   and flow modes alike), of those the fewest hops, and among those as
 *   ecmp (or shortest_path) chooses, over the links at least that wide. The
 *   widths are found by a bottleneck Dijkstra per destination (cached) and
 *   compared as given, never summed: exact. Where every link has one
 *   bandwidth nothing is searched and no link is left out, so the routes
 *   are ecmp's to the link (docs/ir.md 2).
 * dor: dimension order, written out explicitly (tori, rings, meshes,
 *   supermeshes on their mesh links, HyperX); a cross-check of the above.
 * spine_leaf: between hosts of one leaf through the leaf; between leaves
 *   up through the spine whose index is the sending host's index modulo
 *   the spines (source-based d-mod-k), so that the hosts of a leaf spread
 *   over the spines (algorithms.md 8.8). leaf_spine_boxes the same: a
 *   route between leaves (the policy's) takes spine (GPU index mod S).
 * Parallel links (a supermesh's doubled perimeter, a graph's repeated
 *   `link` lines) are capacity: a route crossing a pair with k parallel
 *   links takes copy (src + dst) mod k there, so routes between different
 *   pairs spread over the copies the way ECMP hashing does (docs/ir.md
 *   "Parallel links"); under fastest, k counts the copies at least as wide
 *   as the route. Tori of side 2 keep their two directions apart.
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

static bool
closed_form(const Topo *t)
{
	return t->kind == TK_TORUS || t->kind == TK_RING || t->kind == TK_MESH ||
	       t->kind == TK_SUPERMESH || t->kind == TK_HYPERX || t->kind == TK_FULL;
}

static bool
ecmp_topology(const Topo *t)
{
	return t->kind == TK_TORUS || t->kind == TK_RING || t->kind == TK_MESH ||
	       t->kind == TK_HYPERX;
}

/* The static view routes over every link but an optical ring's switchable
 * circuits (dim 1), which only a schedule's configurations bring up. */
static bool
routable(const Topo *t, int link)
{
	return t->kind != TK_OPTICAL_RING || t->link[link].dim != 1;
}

/* A link a route of least bandwidth `floor` may take: routable, and at
 * least that wide (floor 0: every routable link). */
static bool
usable(const Topo *t, int link, double floor)
{
	return routable(t, link) && t->link[link].bandwidth >= floor;
}

void
routes_init(Routes *r, const Topo *t, RoutePolicy policy)
{
	memset(r, 0, sizeof *r);
	r->topo = t;
	r->policy = policy;
	r->nslot = 1024;
	r->slot = arena_array(&r->arena, (size_t)r->nslot, sizeof *r->slot);
	r->scratch = arena_array(&r->arena, (size_t)t->nnode + 1, sizeof *r->scratch);
	r->dist_to = -1;
	r->width_to = -1;
	r->min_bw = 0;
	for (int i = 0; i < t->nlink; i++)
		if (routable(t, i) && (r->min_bw == 0 || t->link[i].bandwidth < r->min_bw))
			r->min_bw = t->link[i].bandwidth;
	r->uniform = true;
	for (int i = 0; i < t->nlink; i++)
		if (routable(t, i) && t->link[i].bandwidth != r->min_bw)
			r->uniform = false;
}

void
routes_free(Routes *r)
{
	arena_free(&r->arena);
	memset(r, 0, sizeof *r);
}

int
ring_distance(int a, int b, int n)
{
	int d = ((b - a) % n + n) % n;
	return d < n - d ? d : n - d;
}

/* Hop distance on the closed-form topologies. */
static int
grid_distance(const Topo *t, int src, int dst)
{
	if (t->kind == TK_FULL)
		return src != dst;
	int a[MAX_DIMS], b[MAX_DIMS], d = 0;
	topo_coords(t, src, a);
	topo_coords(t, dst, b);
	for (int i = 0; i < t->ndim; i++) {
		if (t->kind == TK_HYPERX)
			d += a[i] != b[i];
		else if (t->kind == TK_TORUS || t->kind == TK_RING)
			d += ring_distance(a[i], b[i], t->size[i]);
		else
			d += abs(a[i] - b[i]);
	}
	return d;
}

/* The links into each node: link ids in[off[v] .. off[v + 1]) end at v,
 * in port order of their sources. The caller frees both. */
static int *
in_links(const Topo *t, int **off)
{
	int *in_off = xcalloc((size_t)t->nnode + 1, sizeof *in_off);
	int *in = xmalloc((size_t)t->nlink * sizeof *in + 1);
	int *fill = xcalloc((size_t)t->nnode, sizeof *fill);
	for (int i = 0; i < t->nlink; i++)
		in_off[t->link[i].dst + 1]++;
	for (int v = 0; v < t->nnode; v++)
		in_off[v + 1] += in_off[v];
	for (int i = 0; i < t->nlink; i++)
		in[in_off[t->link[i].dst] + fill[t->link[i].dst]++] = i;
	free(fill);
	*off = in_off;
	return in;
}

/* BFS over reversed links of at least `floor` bandwidth: the distance of
 * every node to `dst` over them. */
static void
bfs_to(Routes *r, int dst, double floor)
{
	const Topo *t = r->topo;
	if (r->dist_to == dst && r->dist_floor == floor)
		return;
	if (!r->dist)
		r->dist = arena_array(&r->arena, (size_t)t->nnode, sizeof *r->dist);
	int *in_off, *in = in_links(t, &in_off);
	int *queue = xmalloc((size_t)t->nnode * sizeof *queue);
	for (int v = 0; v < t->nnode; v++)
		r->dist[v] = -1;
	int head = 0, tail = 0;
	r->dist[dst] = 0;
	queue[tail++] = dst;
	while (head < tail) {
		int v = queue[head++];
		for (int i = in_off[v]; i < in_off[v + 1]; i++) {
			int u = t->link[in[i]].src;
			if (usable(t, in[i], floor) && r->dist[u] < 0) {
				r->dist[u] = r->dist[v] + 1;
				queue[tail++] = u;
			}
		}
	}
	free(queue), free(in_off), free(in);
	r->dist_to = dst;
	r->dist_floor = floor;
}

/* A max-heap of nodes by the width of their best path found so far. */
typedef struct Wide {
	double w;
	int v;
} Wide;

static void
wide_push(Wide *h, int *n, Wide x)
{
	int i = (*n)++;
	for (; i > 0 && h[(i - 1) / 2].w < x.w; i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = x;
}

static Wide
wide_pop(Wide *h, int *n)
{
	Wide top = h[0], x = h[--*n];
	int i = 0;
	for (int c = 1; c < *n; i = c, c = 2 * c + 1) {
		if (c + 1 < *n && h[c + 1].w > h[c].w)
			c++;
		if (h[c].w <= x.w)
			break;
		h[i] = h[c];
	}
	h[i] = x;
	return top;
}

/* Dijkstra over reversed links for the bottleneck: width[v] is the largest
 * least bandwidth of a path v -> dst (0: none). Widths are minima of the
 * links' own values, never sums: compared exactly. */
static void
widths_to(Routes *r, int dst)
{
	const Topo *t = r->topo;
	if (!r->width)
		r->width = arena_array(&r->arena, (size_t)t->nnode, sizeof *r->width);
	for (int v = 0; v < t->nnode; v++)
		r->width[v] = 0;
	int *in_off, *in = in_links(t, &in_off);
	Wide *heap = xmalloc(((size_t)t->nlink + 1) * sizeof *heap);
	unsigned char *done = xcalloc((size_t)t->nnode, 1);
	int n = 0;
	r->width[dst] = DBL_MAX;
	wide_push(heap, &n, (Wide){DBL_MAX, dst});
	while (n > 0) {
		Wide x = wide_pop(heap, &n);
		if (done[x.v])
			continue;
		done[x.v] = 1;
		for (int i = in_off[x.v]; i < in_off[x.v + 1]; i++) {
			const Link *l = &t->link[in[i]];
			double w = l->bandwidth < x.w ? l->bandwidth : x.w;
			if (routable(t, in[i]) && !done[l->src] && w > r->width[l->src]) {
				r->width[l->src] = w; /* a strict gain: at most one push per link */
				wide_push(heap, &n, (Wide){w, l->src});
			}
		}
	}
	free(in_off), free(in), free(heap), free(done);
	r->width_to = dst;
}

/* The bandwidth of the widest path src -> dst: every link's where they are
 * alike (no search), 0 when there is none. */
static double
widest(Routes *r, int src, int dst)
{
	if (r->uniform)
		return r->min_bw;
	if (r->width_to != dst)
		widths_to(r, dst);
	return r->width[src];
}

int
route_min_hops(const Topo *t, int src, int dst)
{
	if (src == dst)
		return 0;
	return closed_form(t) ? grid_distance(t, src, dst) : 1;
}

int
topo_distance(Routes *r, int src, int dst)
{
	if (closed_form(r->topo))
		return grid_distance(r->topo, src, dst);
	bfs_to(r, dst, 0);
	return r->dist[src];
}

/* The hops from v to dst over the links of at least `floor` bandwidth: the
 * distance itself when no link is narrower than floor. */
static int
hops_to(Routes *r, int v, int dst, double floor)
{
	if (floor <= r->min_bw)
		return topo_distance(r, v, dst);
	bfs_to(r, dst, floor);
	return r->dist[v];
}

/* Whether some rank cannot reach another: every rank must reach rank 0 and
 * be reached from it (a graph need not be connected). Sets *from and *to to
 * a pair with no route. Grids and the built-in networks are connected. */
bool
routes_split(Routes *r, const int *rank_node, int nrank, int *from, int *to)
{
	const Topo *t = r->topo;
	if (closed_form(t) || nrank < 2)
		return false;
	bfs_to(r, rank_node[0], 0);
	for (int i = 1; i < nrank; i++)
		if (r->dist[rank_node[i]] < 0) {
			*from = i, *to = 0;
			return true;
		}
	unsigned char *seen = xcalloc((size_t)t->nnode, 1);
	int *queue = xmalloc((size_t)t->nnode * sizeof *queue);
	int head = 0, tail = 0;
	seen[rank_node[0]] = 1;
	queue[tail++] = rank_node[0];
	while (head < tail) {
		int v = queue[head++];
		for (int i = t->out[v]; i < t->out[v + 1]; i++)
			if (routable(t, i) && !seen[t->link[i].dst]) {
				seen[t->link[i].dst] = 1;
				queue[tail++] = t->link[i].dst;
			}
	}
	bool split = false;
	for (int i = 1; i < nrank && !split; i++)
		if (!seen[rank_node[i]]) {
			*from = 0, *to = i;
			split = true;
		}
	free(seen), free(queue);
	return split;
}

/* The link from v along (dim, dir); on a size-2 torus dimension -1 and +1
 * are parallel links to the same neighbour, told apart by dir. */
static int
link_along(const Topo *t, int v, int dim, int dir)
{
	for (int i = t->out[v]; i < t->out[v + 1]; i++)
		if (t->link[i].dim == dim && t->link[i].dir == dir)
			return i;
	return -1;
}

static int
dor(Routes *r, int src, int dst)
{
	const Topo *t = r->topo;
	int c[MAX_DIMS], goal[MAX_DIMS];
	topo_coords(t, src, c);
	topo_coords(t, dst, goal);
	int v = src, hops = 0;
	for (int d = 0; d < t->ndim; d++) {
		int n = t->size[d];
		while (c[d] != goal[d]) {
			int link;
			if (t->kind == TK_HYPERX) {
				link = link_along(t, v, d, ((goal[d] - c[d]) % n + n) % n);
				c[d] = goal[d];
			} else {
				int dir;
				if (t->kind == TK_TORUS || t->kind == TK_RING) {
					int fwd = ((goal[d] - c[d]) % n + n) % n;
					dir = fwd < n - fwd ? +1 : -1; /* a tie at n/2 goes -1 */
				} else {
					dir = goal[d] > c[d] ? +1 : -1;
				}
				link = link_along(t, v, d, dir);
				c[d] = ((c[d] + dir) % n + n) % n;
			}
			if (link < 0)
				die("dor: no link from node %d along dimension %d", v, d);
			r->scratch[hops++] = link;
			v = t->link[link].dst;
		}
	}
	return hops;
}

/* The fewest-hop path over links of at least `floor` bandwidth: at each
 * hop the first such link in port order that brings it one hop closer. */
static int
greedy(Routes *r, int src, int dst, double floor)
{
	const Topo *t = r->topo;
	int left = hops_to(r, src, dst, floor);
	if (left < 0)
		return -1;
	int v = src, hops = 0;
	while (v != dst) {
		int next = -1;
		for (int i = t->out[v]; i < t->out[v + 1] && next < 0; i++)
			if (usable(t, i, floor) && hops_to(r, t->link[i].dst, dst, floor) == left - 1)
				next = i;
		if (next < 0)
			die("route: no link closer to %d from %d", dst, v);
		r->scratch[hops++] = next;
		v = t->link[next].dst;
		left--;
	}
	return hops;
}

/* One of the minimal paths over links of at least `floor` bandwidth: at
 * each hop the (src mod c)-th of the c closer such links. */
static int
ecmp(Routes *r, int src, int dst, double floor)
{
	const Topo *t = r->topo;
	int left = hops_to(r, src, dst, floor), v = src, hops = 0;
	if (left < 0)
		return -1;
	while (v != dst) {
		int closer[2 * MAX_DIMS * 2], n = 0;
		for (int i = t->out[v]; i < t->out[v + 1]; i++)
			if (usable(t, i, floor) && hops_to(r, t->link[i].dst, dst, floor) == left - 1 &&
			    n < (int)(sizeof closer / sizeof *closer))
				closer[n++] = i;
		if (n == 0)
			die("ecmp route: no link closer to %d from %d", dst, v);
		int next = closer[src % n];
		r->scratch[hops++] = next;
		v = t->link[next].dst;
		left--;
	}
	return hops;
}

int
route_first_link(Routes *r, int src, int dst)
{
	const Topo *t = r->topo;
	if (src == dst)
		return -1;
	if (closed_form(t) && r->policy == ROUTE_SHORTEST) {
		/* greedy's first step, without routing (and caching) the rest */
		int left = grid_distance(t, src, dst);
		for (int i = t->out[src]; i < t->out[src + 1]; i++)
			if (grid_distance(t, t->link[i].dst, dst) == left - 1)
				return i;
		return -1;
	}
	const int *l;
	return route_get(r, src, dst, &l) > 0 ? l[0] : -1;
}

static int
spine_leaf(Routes *r, int src, int dst)
{
	const Topo *t = r->topo;
	int hosts = t->size[1], leaves = t->size[0], ranks = t->nrank;
	int spines = t->nnode - ranks - leaves;
	if (src >= ranks || dst >= ranks)
		return greedy(r, src, dst, 0); /* a switch at an end: not used by schedules */
	int ls = ranks + src / hosts, ld = ranks + dst / hosts;
	int path[5] = {src, ls, -1, -1, dst}, n = 0;
	if (ls == ld) {
		path[2] = dst;
		n = 3;
	} else {
		path[2] = ranks + leaves + src % hosts % spines;
		path[3] = ld;
		n = 5;
	}
	for (int i = 0; i + 1 < n; i++) {
		int l = topo_find_link(t, path[i], path[i + 1], 0);
		if (l < 0)
			die("spine_leaf route: no link %d -> %d", path[i], path[i + 1]);
		r->scratch[i] = l;
	}
	return n - 1;
}

static unsigned
pair_hash(int src, int dst)
{
	unsigned h = (unsigned)src * 2654435761u ^ (unsigned)dst * 40503u;
	return h ^ (h >> 15);
}

static int *
find_slot(const Routes *r, int src, int dst)
{
	unsigned mask = (unsigned)r->nslot - 1;
	for (unsigned h = pair_hash(src, dst) & mask;; h = (h + 1) & mask) {
		int id = r->slot[h] - 1;
		if (id < 0 || (r->route[id].src == src && r->route[id].dst == dst))
			return &r->slot[h];
	}
}

/* Each hop over a pair with k parallel links of at least `floor` bandwidth
 * moves to the ((src + dst) mod k)-th of them (copy (src + dst) mod k when
 * none is narrower). */
static void
spread_copies(const Topo *t, int src, int dst, int *links, int len, double floor)
{
	for (int i = 0; i < len; i++) {
		const Link *l = &t->link[links[i]];
		int u = l->src, v = l->dst, k = 0;
		for (int j = t->out[u]; j < t->out[u + 1]; j++)
			k += t->link[j].dst == v && usable(t, j, floor);
		for (int j = t->out[u], m = k > 1 ? (src + dst) % k : -1; m >= 0; j++)
			if (t->link[j].dst == v && usable(t, j, floor) && m-- == 0)
				links[i] = j;
	}
}

/* leaf_spine_boxes: a route between leaves goes up through spine (src's
 * GPU index) mod S (source-based d-mod-k, as spine_leaf's), so that the
 * GPUs of a box spread over the spines as a fabric's ECMP spreads flows;
 * greedy's first spine in port order put every box's traffic on spine 0. */
static void
spread_spines(const Topo *t, int src, int *links, int len)
{
	int boxes = t->size[0], gpus = t->size[1], ranks = t->nrank;
	int leaf0 = ranks + boxes, spine0 = ranks + 2 * boxes;
	int spines = t->nnode - spine0 - (t->nics ? boxes * t->nics : 0);
	int s = spine0 + (src < ranks ? src % gpus : src) % spines;
	for (int i = 0; i + 1 < len; i++) {
		const Link *up = &t->link[links[i]], *down = &t->link[links[i + 1]];
		if (up->src < leaf0 || up->src >= spine0 || up->dst < spine0 || up->dst >= spine0 + spines)
			continue;
		int a = topo_find_link(t, up->src, s, 0), b = topo_find_link(t, s, down->dst, 0);
		if (a >= 0 && b >= 0 && t->link[a].bandwidth >= up->bandwidth &&
		    t->link[b].bandwidth >= down->bandwidth)
			links[i] = a, links[i + 1] = b;
	}
}

/* The route src -> dst into r->scratch; its hop count, or -1. fastest
 * routes as ecmp over the links at least as wide as its widest path. */
static int
compute(Routes *r, int src, int dst)
{
	bool minimal = r->policy == ROUTE_ECMP || r->policy == ROUTE_FASTEST;
	double floor = r->policy == ROUTE_FASTEST && src != dst ? widest(r, src, dst) : 0;
	int len = src == dst                        ? 0
	          : r->topo->kind == TK_SPINE_LEAF ? spine_leaf(r, src, dst)
	          : r->policy == ROUTE_DOR         ? dor(r, src, dst)
	          : minimal && ecmp_topology(r->topo) ? ecmp(r, src, dst, floor)
	                                           : greedy(r, src, dst, floor);
	if (r->topo->kind == TK_SUPERMESH || r->topo->kind == TK_GRAPH)
		spread_copies(r->topo, src, dst, r->scratch, len, floor);
	if (r->topo->kind == TK_LEAF_SPINE_BOXES)
		spread_spines(r->topo, src, r->scratch, len);
	return len;
}

bool
routes_closed_form(const Topo *t)
{
	return closed_form(t);
}

int
route_uncached(Routes *r, int src, int dst, const int **links)
{
	int *slot = find_slot(r, src, dst);
	if (*slot) {
		*links = r->route[*slot - 1].link;
		return r->route[*slot - 1].len;
	}
	*links = r->scratch;
	return compute(r, src, dst);
}

int
route_id(Routes *r, int src, int dst)
{
	int *slot = find_slot(r, src, dst);
	if (*slot)
		return r->route[*slot - 1].len < 0 ? -1 : *slot - 1;
	int len = compute(r, src, dst);
	Route route = {.src = src, .dst = dst, .len = len};
	if (len > 0) {
		route.link = arena_array(&r->arena, (size_t)len, sizeof *route.link);
		memcpy(route.link, r->scratch, (size_t)len * sizeof *route.link);
	}
	VEC_PUSH(&r->arena, r->route, r->nroute, r->caproute, route);
	*slot = r->nroute;
	if (2 * r->nroute > r->nslot) { /* keep the table at most half full */
		r->nslot *= 2;
		r->slot = arena_array(&r->arena, (size_t)r->nslot, sizeof *r->slot);
		for (int i = 0; i < r->nroute; i++)
			*find_slot(r, r->route[i].src, r->route[i].dst) = i + 1;
	}
	return len < 0 ? -1 : r->nroute - 1;
}

int
route_get(Routes *r, int src, int dst, const int **links)
{
	int id = route_id(r, src, dst);
	if (id < 0)
		return -1;
	*links = r->route[id].link;
	return r->route[id].len;
}
