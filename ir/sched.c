/*
 * sched.c: building explicit schedules. Generators add messages in any
 * order; sched_end sorts them by round and packs: all chunk transfers with
 * the same round, sender, receiver, route and operation become one message.
 * Routes are interned: a schedule holds each distinct link list once.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

const char *const coll_kind_name[] = {
	[CK_ALLREDUCE] = "allreduce", [CK_REDUCE_SCATTER] = "reduce_scatter",
	[CK_ALLGATHER] = "allgather", [CK_ALLTOALL] = "alltoall",
	[CK_BROADCAST] = "broadcast", [CK_REDUCE] = "reduce",
};

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
	memcpy(s->rank_node, rank_node, (size_t)nrank * sizeof *rank_node);
	s->node_rank = arena_array(a, (size_t)t->nnode, sizeof *s->node_rank);
	for (int v = 0; v < t->nnode; v++)
		s->node_rank[v] = -1;
	for (int r = 0; r < nrank; r++)
		s->node_rank[rank_node[r]] = r;
	s->route_off = arena_array(a, 1, sizeof *s->route_off);
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
	b->nslot = 256;
	b->slot = xcalloc((size_t)b->nslot, sizeof *b->slot);
	/* route arrays grow with realloc while building; sched_end moves them to the arena */
	s->route_off = NULL;
	b->caproute = 0;
	s->nroute = 0;
}

static unsigned
links_hash(const int *l, int n)
{
	unsigned h = 2166136261u ^ (unsigned)n;
	for (int i = 0; i < n; i++)
		h = (h ^ (unsigned)l[i]) * 16777619u;
	return h;
}

static int *
route_slot(SchedBuilder *b, const int *l, int n)
{
	Sched *s = b->s;
	unsigned mask = (unsigned)b->nslot - 1;
	for (unsigned h = links_hash(l, n) & mask;; h = (h + 1) & mask) {
		int r = b->slot[h] - 1;
		if (r < 0)
			return &b->slot[h];
		int len = s->route_off[r + 1] - s->route_off[r];
		if (len == n && memcmp(s->route_link + s->route_off[r], l, (size_t)n * sizeof *l) == 0)
			return &b->slot[h];
	}
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
	int *slot = route_slot(b, links, n);
	if (*slot)
		return *slot - 1;
	if (s->nroute == b->caproute) {
		b->caproute *= 2;
		s->route_off = xrealloc(s->route_off, (size_t)(b->caproute + 1) * sizeof *s->route_off);
	}
	int used = s->route_off[s->nroute];
	if (used + n > b->caplink) {
		b->caplink = 2 * (used + n) + 64;
		s->route_link = xrealloc(s->route_link, (size_t)b->caplink * sizeof *s->route_link);
	}
	memcpy(s->route_link + used, links, (size_t)n * sizeof *links);
	s->route_off[s->nroute + 1] = used + n;
	*slot = ++s->nroute;
	if (2 * s->nroute > b->nslot) {
		free(b->slot);
		b->nslot *= 2;
		b->slot = xcalloc((size_t)b->nslot, sizeof *b->slot);
		for (int r = 0; r < s->nroute; r++)
			*route_slot(b, s->route_link + s->route_off[r], s->route_off[r + 1] - s->route_off[r]) =
				r + 1;
	}
	return s->nroute - 1;
}

void
sched_msg_route(SchedBuilder *b, int round, int src, int dst, XferOp op, const int *chunks,
                int n, const int *links, int nlink)
{
	Sched *s = b->s;
	if (s->nmsg == b->capmsg) {
		b->capmsg = b->capmsg ? 2 * b->capmsg : 256;
		s->msg = xrealloc(s->msg, (size_t)b->capmsg * sizeof *s->msg);
	}
	int used = s->nmsg ? s->msg[s->nmsg - 1].first + s->msg[s->nmsg - 1].n : 0;
	if (used + n > b->capchunk) {
		b->capchunk = 2 * (used + n) + 256;
		s->chunks = xrealloc(s->chunks, (size_t)b->capchunk * sizeof *s->chunks);
	}
	memcpy(s->chunks + used, chunks, (size_t)n * sizeof *chunks);
	s->msg[s->nmsg++] = (Msg){.round = round, .src = src, .dst = dst, .op = op,
	                          .route = sched_route(b, links, nlink), .first = used, .n = n};
	if (round + 1 > s->nround)
		s->nround = round + 1;
}

void
sched_msg(SchedBuilder *b, int round, int src, int dst, XferOp op, const int *chunks, int n)
{
	const Sched *s = b->s;
	const int *links;
	int len = route_get(b->routes, s->rank_node[src], s->rank_node[dst], &links);
	if (len < 0)
		die("sched_msg: no route from rank %d to rank %d", src, dst);
	sched_msg_route(b, round, src, dst, op, chunks, n, links, len);
}

static int
msg_order(const void *pa, const void *pb)
{
	const Msg *a = pa, *b = pb;
	if (a->round != b->round)
		return a->round < b->round ? -1 : 1;
	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	if (a->dst != b->dst)
		return a->dst < b->dst ? -1 : 1;
	if (a->route != b->route)
		return a->route < b->route ? -1 : 1;
	if (a->op != b->op)
		return a->op < b->op ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

static bool
same_key(const Msg *a, const Msg *b)
{
	return a->round == b->round && a->src == b->src && a->dst == b->dst &&
	       a->route == b->route && a->op == b->op;
}

/* msg_order's order: rounds by counting (a pipeline has millions of
 * messages in hundreds of rounds), then each round's few by qsort. */
static void
sort_by_round(Sched *s)
{
	if (s->nmsg == 0)
		return;
	int *start = xcalloc((size_t)s->nround + 2, sizeof *start);
	for (int i = 0; i < s->nmsg; i++)
		start[s->msg[i].round + 1]++;
	for (int r = 0; r < s->nround; r++)
		start[r + 1] += start[r];
	Msg *by = xmalloc((size_t)s->nmsg * sizeof *by);
	int *fill = xmalloc(((size_t)s->nround + 1) * sizeof *fill);
	memcpy(fill, start, ((size_t)s->nround + 1) * sizeof *fill);
	for (int i = 0; i < s->nmsg; i++)
		by[fill[s->msg[i].round]++] = s->msg[i];
	for (int r = 0; r < s->nround; r++)
		if (start[r + 1] - start[r] > 1)
			qsort(by + start[r], (size_t)(start[r + 1] - start[r]), sizeof *by, msg_order);
	memcpy(s->msg, by, (size_t)s->nmsg * sizeof *by);
	free(by);
	free(fill);
	free(start);
}

void
sched_end(SchedBuilder *b)
{
	Sched *s = b->s;
	bool sorted = true; /* generators often add in order: skip the sort then */
	for (int i = 1; i < s->nmsg && sorted; i++)
		sorted = msg_order(&s->msg[i - 1], &s->msg[i]) <= 0;
	if (!sorted)
		sort_by_round(s);
	/* pack: one message per (round, src, dst, route, op), chunks in order */
	Msg *msg = arena_array(b->arena, (size_t)s->nmsg + 1, sizeof *msg);
	int total = 0;
	for (int i = 0; i < s->nmsg; i++)
		total += s->msg[i].n;
	int *chunks = arena_array(b->arena, (size_t)total + 1, sizeof *chunks);
	int m = 0, used = 0;
	for (int i = 0; i < s->nmsg; i++) {
		const Msg *x = &s->msg[i];
		if (m == 0 || !same_key(&msg[m - 1], x)) {
			msg[m] = *x;
			msg[m].first = used;
			msg[m].n = 0;
			m++;
		}
		memcpy(chunks + used, s->chunks + x->first, (size_t)x->n * sizeof *chunks);
		used += x->n;
		msg[m - 1].n += x->n;
	}
	free(s->msg);
	free(s->chunks);
	s->msg = msg;
	s->nmsg = m;
	s->chunks = chunks;
	/* routes into the arena */
	int nlink = s->route_off ? s->route_off[s->nroute] : 0;
	int *off = arena_array(b->arena, (size_t)s->nroute + 1, sizeof *off);
	int *link = arena_array(b->arena, (size_t)nlink + 1, sizeof *link);
	if (s->route_off) {
		memcpy(off, s->route_off, (size_t)(s->nroute + 1) * sizeof *off);
		memcpy(link, s->route_link, (size_t)nlink * sizeof *link);
	}
	free(s->route_off);
	free(s->route_link);
	s->route_off = off;
	s->route_link = link;
	free(b->slot);
	b->slot = NULL;
}

void
sched_abort(SchedBuilder *b)
{
	Sched *s = b->s;
	free(s->msg);
	free(s->chunks);
	free(s->route_off);
	free(s->route_link);
	free(b->slot);
	s->msg = NULL;
	s->chunks = NULL;
	s->route_off = s->route_link = NULL;
	s->nmsg = s->nroute = 0;
	b->slot = NULL;
}
