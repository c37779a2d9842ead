/*
 * sched.c: building explicit schedules. Generators add messages in any
 * order; sched_end sorts them by round and packs: all chunk transfers with
 * the same round, sender, receiver, route, operation and instance become one
 * message. Instances (Msg.instance: Bucket's 2d pipelines) are never packed
 * together, so that a backend can run them independently: a message that
 * carried two instances' chunks would wait for both and hold both back.
 * Routes are interned: a schedule holds each distinct link list once. The
 * messages sched_msg adds are routed in sched_end, once all are known, so
 * that the hops their routes need are estimated and held against
 * MAX_ROUTE_HOPS before any route is built (ir/estimate.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

Sched *
sched_new(Arena *a, const char *name, Loc loc, CollKind kind, const char *algorithm,
          const Topo *t, const int *rank_node, int nrank)
{
	Sched *s = NEW(a, Sched);
	s->name = name;
	s->loc = loc;
	s->kind = kind;
	s->algorithm = algorithm;
	s->topo = t;
	s->nrank = nrank;
	s->rank_node = arena_array(a, (size_t)nrank, sizeof *s->rank_node);
	copy_n(s->rank_node, rank_node, (size_t)nrank, sizeof *rank_node);
	s->node_rank = arena_array(a, (size_t)t->nnode, sizeof *s->node_rank);
	for (int v = 0; v < t->nnode; v++)
		s->node_rank[v] = -1;
	for (int r = 0; r < nrank; r++)
		s->node_rank[rank_node[r]] = r;
	s->route_off = arena_array(a, 1, sizeof *s->route_off);
	s->routing = ROUTE_FASTEST; /* a collective's default; lower.c sets the file's */
	return s;
}

int
sched_route_len(const Sched *s, int route)
{
	return s->route_off[route + 1] - s->route_off[route];
}

void
sched_begin(SchedBuilder *b, Arena *a, Sched *s, Routes *routes)
{
	memset(b, 0, sizeof *b);
	b->arena = a;
	b->s = s;
	b->routes = routes;
	/* route arrays grow with realloc while building; sched_end moves them to the arena */
	s->route_off = NULL;
	b->caproute = 0;
	s->nroute = 0;
}

static bool
route_is(const void *ctx, int r, const void *key)
{
	const Sched *s = ctx;
	const HashInts *q = key; /* the route's links */
	return s->route_off[r + 1] - s->route_off[r] == q->n &&
	       memcmp(s->route_link + s->route_off[r], q->k, (size_t)q->n * sizeof *q->k) == 0;
}

static unsigned
route_hash(const void *ctx, int r)
{
	const Sched *s = ctx;
	return hash_ints(s->route_link + s->route_off[r],
	                 (size_t)(s->route_off[r + 1] - s->route_off[r]));
}

int
sched_route(SchedBuilder *b, const int *links, int n)
{
	Sched *s = b->s;
	if (!s->route_off) {
		b->caproute = 64;
		s->route_off = xmalloc((size_t)(b->caproute + 1) * sizeof *s->route_off);
		s->route_off[0] = 0;
	}
	unsigned h = hash_ints(links, (size_t)n);
	int found = hash_find(&b->route_index, h, &(HashInts){links, n}, route_is, s);
	if (found >= 0)
		return found;
	if (s->nroute == b->caproute) {
		b->caproute *= 2;
		s->route_off = xrealloc(s->route_off, (size_t)(b->caproute + 1) * sizeof *s->route_off);
	}
	int used = s->route_off[s->nroute];
	if ((double)used + n > MAX_ROUTE_HOPS) { /* sched_end reports it */
		b->too_big = true;
		return 0;
	}
	if (!s->route_link || used + n > b->caplink) { /* never NULL: NULL + 0 is undefined */
		b->caplink = 2 * (used + n) + 64;
		s->route_link = xrealloc(s->route_link, (size_t)b->caplink * sizeof *s->route_link);
	}
	copy_n(s->route_link + used, links, (size_t)n, sizeof *links);
	s->route_off[s->nroute + 1] = used + n;
	hash_add(&b->route_index, h, s->nroute, route_hash, s);
	return s->nroute++;
}

/* Adds a message over the schedule's route `route`. */
static void
sched_msg_at(SchedBuilder *b, int round, int src, int dst, XferOp op, const int *chunks, int n,
             int route)
{
	Sched *s = b->s;
	if (b->too_big)
		return;
	if (s->nmsg == b->capmsg) {
		b->capmsg = b->capmsg ? 2 * b->capmsg : 256;
		s->msg = xrealloc(s->msg, (size_t)b->capmsg * sizeof *s->msg);
	}
	int used = s->nmsg ? s->msg[s->nmsg - 1].first + s->msg[s->nmsg - 1].n : 0;
	if (!s->chunks || used + n > b->capchunk) {
		b->capchunk = 2 * (used + n) + 256;
		s->chunks = xrealloc(s->chunks, (size_t)b->capchunk * sizeof *s->chunks);
	}
	copy_n(s->chunks + used, chunks, (size_t)n, sizeof *chunks);
	s->msg[s->nmsg++] = (Msg){.round = round, .src = src, .dst = dst, .op = op,
	                          .route = route, .first = used, .n = n,
	                          .instance = b->instance, .fuse = b->fuse};
	if (round + 1 > s->nround)
		s->nround = round + 1;
}

void
sched_msg_route(SchedBuilder *b, int round, int src, int dst, XferOp op, const int *chunks,
                int n, const int *links, int nlink)
{
	sched_msg_at(b, round, src, dst, op, chunks, n, sched_route(b, links, nlink));
}

/* The schedule's route from rank src to rank dst, computed by the Routes
 * and interned once. */
static int
route_of(SchedBuilder *b, int src, int dst)
{
	const Sched *s = b->s;
	int id = route_id(b->routes, s->rank_node[src], s->rank_node[dst]);
	if (id < 0)
		die("sched_msg: no route from rank %d to rank %d", src, dst);
	/* a route met before is not interned again (hashing its links) */
	if (id >= b->nfrom_routes) {
		int cap = b->nfrom_routes ? b->nfrom_routes : 256;
		while (cap <= id)
			cap *= 2;
		b->from_routes = xrealloc(b->from_routes, (size_t)cap * sizeof *b->from_routes);
		memset(b->from_routes + b->nfrom_routes, 0,
		       (size_t)(cap - b->nfrom_routes) * sizeof *b->from_routes);
		b->nfrom_routes = cap;
	}
	if (b->from_routes[id] == 0) {
		const Route *r = &b->routes->route[id];
		b->from_routes[id] = sched_route(b, r->link, r->len) + 1;
	}
	return b->from_routes[id] - 1;
}

/* Routed in sched_end, once every message is known: their routes' hops are
 * estimated first and refused before any route is built. */
void
sched_msg(SchedBuilder *b, int round, int src, int dst, XferOp op, const int *chunks, int n)
{
	sched_msg_at(b, round, src, dst, op, chunks, n, -1);
	b->unrouted = true;
}

/* Route q of s as route k of (off, link), which hold routes 0..k-1. */
static void
copy_route(const Sched *s, int q, int *off, int *link, int k)
{
	int len = s->route_off[q + 1] - s->route_off[q];
	copy_n(link + off[k], s->route_link + s->route_off[q], (size_t)len, sizeof *link);
	off[k + 1] = off[k] + len;
}

/* Routes numbered by first use in the messages' order: the numbers routing
 * each message as it came (sched_msg_route's and sched_msg's in turn) gave. */
static void
renumber_routes(SchedBuilder *b)
{
	Sched *s = b->s;
	int n = s->nroute, *id = xmalloc(((size_t)n + 1) * sizeof *id), k = 0;
	int *off = xmalloc(((size_t)n + 1) * sizeof *off);
	int *link = xmalloc(((size_t)s->route_off[n] + 1) * sizeof *link);
	for (int r = 0; r < n; r++)
		id[r] = -1;
	off[0] = 0;
	for (int i = 0; i < s->nmsg; i++)
		if (id[s->msg[i].route] < 0) {
			id[s->msg[i].route] = k;
			copy_route(s, s->msg[i].route, off, link, k++);
		}
	for (int r = 0; r < n; r++) /* none unused in a generator's schedule, but kept */
		if (id[r] < 0) {
			id[r] = k;
			copy_route(s, r, off, link, k++);
		}
	for (int i = 0; i < s->nmsg; i++)
		s->msg[i].route = id[s->msg[i].route];
	free(s->route_off), free(s->route_link), free(id);
	s->route_off = off;
	s->route_link = link;
	b->caproute = n;
	b->caplink = off[n];
}

/* Routes sched_msg's messages, in the order they came, after their hops
 * are held against MAX_ROUTE_HOPS (-1 after reporting). */
static int
route_messages(Diag *dg, SchedBuilder *b)
{
	Sched *s = b->s;
	double interned = s->route_off ? s->route_off[s->nroute] : 0;
	if (check_route_hops(dg, s->loc, s->name, s->topo, s->rank_node, s->msg, s->nmsg, interned) != 0)
		return -1;
	bool mixed = s->nroute > 0;
	for (int i = 0; i < s->nmsg && !b->too_big; i++)
		if (s->msg[i].route < 0)
			s->msg[i].route = route_of(b, s->msg[i].src, s->msg[i].dst);
	if (mixed && !b->too_big)
		renumber_routes(b);
	b->unrouted = false;
	return 0;
}

/* (src, dst, route, op, first): the order inside one round */
static int
msg_order_in_round(const Msg *a, const Msg *b)
{
	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	if (a->dst != b->dst)
		return a->dst < b->dst ? -1 : 1;
	if (a->route != b->route)
		return a->route < b->route ? -1 : 1;
	if (a->op != b->op)
		return a->op < b->op ? -1 : 1;
	if (a->instance != b->instance)
		return a->instance < b->instance ? -1 : 1;
	if (a->fuse != b->fuse)
		return a->fuse < b->fuse ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

int
sched_msg_order(const Msg *a, const Msg *b)
{
	return msg_order_in_round(a, b);
}

static int
index_order(const void *pa, const void *pb, void *msgs)
{
	const Msg *m = msgs;
	return msg_order_in_round(&m[*(const int *)pa], &m[*(const int *)pb]);
}

/*
 * The order of the messages by (round, src, dst, route, op, instance, first): a
 * stable counting sort by round (linear in messages and rounds; first, the
 * insertion order, breaks ties), then each round put in order if it is not
 * already (generators mostly add a round's messages in order, so this is
 * a linear check; otherwise one round's messages are sorted).
 */
static int *
msg_sorted_order(const Sched *s)
{
	int n = s->nmsg;
	int *idx = xmalloc(((size_t)n + 1) * sizeof *idx);
	int *start = xcalloc((size_t)s->nround + 2, sizeof *start);
	for (int i = 0; i < n; i++)
		start[s->msg[i].round + 1]++;
	for (int r = 0; r < s->nround; r++)
		start[r + 1] += start[r];
	for (int i = 0; i < n; i++)
		idx[start[s->msg[i].round]++] = i;
	free(start);
	for (int i = 0, j; i < n; i = j) {
		int round = s->msg[idx[i]].round;
		bool sorted = true;
		for (j = i + 1; j < n && s->msg[idx[j]].round == round; j++)
			sorted &= msg_order_in_round(&s->msg[idx[j - 1]], &s->msg[idx[j]]) < 0;
		if (!sorted)
			sort_with(idx + i, (size_t)(j - i), sizeof *idx, index_order, s->msg);
	}
	return idx;
}

/* The messages in the given order: none moved when they are in order
 * already (the generators of rings add them so); else gathered into a new
 * array, whose independent reads the processor overlaps (following the
 * permutation's cycles in place reads one address after another). */
static Msg *
ordered_msgs(Msg *msg, const int *order, int n)
{
	int k = 0;
	while (k < n && order[k] == k)
		k++;
	if (k == n)
		return msg;
	Msg *out = xmalloc(((size_t)n + 1) * sizeof *out);
	memcpy(out, msg, (size_t)k * sizeof *out);
	for (; k < n; k++)
		out[k] = msg[order[k]];
	free(msg);
	return out;
}

static bool
same_key(const Msg *a, const Msg *b)
{
	return a->round == b->round && a->src == b->src && a->dst == b->dst &&
	       a->route == b->route && a->op == b->op && a->instance == b->instance &&
	       a->fuse == b->fuse;
}

int
sched_end(Diag *dg, SchedBuilder *b)
{
	Sched *s = b->s;
	if (b->unrouted && !b->too_big && route_messages(dg, b) != 0) {
		sched_abort(b);
		return -1;
	}
	if (b->too_big) {
		error_at(dg, s->loc, "the routes of '%s' take more than %d hops (each distinct route "
		         "counted once); collc builds at most that (docs/limits.md)", s->name,
		         MAX_ROUTE_HOPS);
		sched_abort(b);
		return -1;
	}
	int *order = msg_sorted_order(s);
	s->msg = ordered_msgs(s->msg, order, s->nmsg);
	free(order);
	/* pack in place: one message per (round, src, dst, route, op, instance), chunks in order */
	size_t total = 0;
	for (int i = 0; i < s->nmsg; i++)
		total += (size_t)s->msg[i].n;
	int *chunks = xmalloc((total + 1) * sizeof *chunks);
	int m = 0, used = 0;
	for (int i = 0; i < s->nmsg; i++) {
		Msg x = s->msg[i];
		if (m == 0 || !same_key(&s->msg[m - 1], &x)) {
			s->msg[m] = x;
			s->msg[m].first = used;
			s->msg[m].n = 0;
			m++;
		}
		for (int k = 0; k < x.n; k++) /* mostly one or two: no memcpy call */
			chunks[used + k] = s->chunks[x.first + k];
		used += x.n;
		s->msg[m - 1].n += x.n;
	}
	free(s->chunks);
	/* the arrays are the schedule's now: the arena frees them with it */
	s->msg = arena_own(b->arena, xrealloc(s->msg, ((size_t)m + 1) * sizeof *s->msg));
	s->nmsg = m;
	s->chunks = arena_own(b->arena, chunks);
	for (int f = 0; f < s->nfuse; f++)
		s->fuse[f].leader = -1;
	for (int i = s->nmsg - 1; i >= 0; i--) /* each operation's first message leads it */
		if (s->msg[i].fuse)
			s->fuse[s->msg[i].fuse - 1].leader = i;
	/* routes into the arena */
	int nlink = s->route_off ? s->route_off[s->nroute] : 0;
	int *off = arena_array(b->arena, (size_t)s->nroute + 1, sizeof *off);
	int *link = arena_array(b->arena, (size_t)nlink + 1, sizeof *link);
	if (s->route_off) {
		memcpy(off, s->route_off, (size_t)(s->nroute + 1) * sizeof *off);
		copy_n(link, s->route_link, (size_t)nlink, sizeof *link);
	}
	free(s->route_off);
	free(s->route_link);
	s->route_off = off;
	s->route_link = link;
	hash_free(&b->route_index);
	free(b->from_routes);
	b->from_routes = NULL;
	return 0;
}

void
sched_fuse_begin(SchedBuilder *b, int node, FuseKind kind, bool self)
{
	Sched *s = b->s;
	if (s->nfuse == b->capfuse)
		s->fuse = arena_grow(b->arena, s->fuse, &b->capfuse, sizeof *s->fuse);
	s->fuse[s->nfuse++] = (Fuse){.node = node, .kind = kind, .self = self, .leader = -1};
	b->fuse = s->nfuse;
}

void
sched_fuse_end(SchedBuilder *b)
{
	b->fuse = 0;
}

static void
add_link_once(int *links, int *n, int l)
{
	for (int k = 0; k < *n; k++)
		if (links[k] == l)
			return;
	links[(*n)++] = l;
}

int
fuse_links(const Sched *s, int f, int *links)
{
	const Fuse *x = &s->fuse[f];
	int n = 0, end = -1, lead = x->leader;
	for (int i = lead; i >= 0 && i < s->nmsg && s->msg[i].round == s->msg[lead].round; i++) {
		const Msg *m = &s->msg[i];
		if (m->fuse != f + 1)
			continue;
		const int *l = s->route_link + s->route_off[m->route];
		for (int k = 0; k < sched_route_len(s, m->route); k++)
			add_link_once(links, &n, l[k]);
		end = x->kind == FUSE_REDUCE ? m->dst : m->src;
	}
	if (x->self && end >= 0) { /* the endpoint's own copy: its link to or from the switch */
		int node = s->rank_node[end];
		int l = x->kind == FUSE_REDUCE ? topo_find_link(s->topo, node, x->node, 0)
		                               : topo_find_link(s->topo, x->node, node, 0);
		if (l >= 0)
			add_link_once(links, &n, l);
	}
	int in = 0; /* the links into the switch first, in order, then those out of it */
	for (int k = 0; k < n; k++)
		in += s->topo->link[links[k]].dst == x->node;
	int *out = xmalloc(((size_t)n + 1) * sizeof *out), a = 0, b = in;
	for (int k = 0; k < n; k++)
		out[s->topo->link[links[k]].dst == x->node ? a++ : b++] = links[k];
	memcpy(links, out, (size_t)n * sizeof *links);
	free(out);
	return n;
}

int
fuse_links_max(const Sched *s)
{
	int most = 2;
	for (int i = 0; i < s->nmsg; i++)
		most += s->msg[i].fuse ? sched_route_len(s, s->msg[i].route) : 0;
	return most;
}

void
sched_abort(SchedBuilder *b)
{
	Sched *s = b->s;
	free(s->msg);
	free(s->chunks);
	free(s->route_off);
	free(s->route_link);
	hash_free(&b->route_index);
	s->msg = NULL;
	s->chunks = NULL;
	s->route_off = s->route_link = NULL;
	s->nmsg = s->nroute = 0;
	free(b->from_routes);
	b->from_routes = NULL;
}

bool
sched_gpu_map(const Sched *s, FILE *f)
{
	const Topo *t = s->topo;
	if (t->kind != TK_RAILS && t->kind != TK_XGMI_RAILS && t->kind != TK_LEAF_SPINE_BOXES &&
	    t->kind != TK_TORUS_BOXES)
		return false;
	int gpus = t->size[t->ndim - 1]; /* the last coordinate; boxes row-major before it */
	bool box_major = s->nrank == t->nrank;
	for (int r = 0; r < s->nrank && box_major; r++)
		box_major = s->rank_node[r] == r;
	char desc[128];
	topo_describe(t, desc, sizeof desc);
	fprintf(f, "%s on %s: rank r runs on GPU (box, gpu)", s->name, desc);
	if (box_major) {
		fprintf(f, " = (r / %d, r %% %d), box-major: launch rank r on box r / %d with the box's "
		        "GPU r %% %d as its device", gpus, gpus, gpus, gpus);
		return true;
	}
	fputc(':', f);
	for (int r = 0; r < s->nrank; r++)
		fprintf(f, "%s rank %d (%d, %d)", r ? "," : "", r, s->rank_node[r] / gpus,
		        s->rank_node[r] % gpus);
	return true;
}
