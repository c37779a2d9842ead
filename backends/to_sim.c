/*
 * to_sim.c: the IR as the simulator's input, and `build --target sim` (the
 * .sim text, docs/sim.md). Explicit schedules convert message by message,
 * with the layout pass's read dependencies (ir/layout.c: msg_deps) and
 * their instance (Msg.instance: Bucket's independent pipelines, which the
 * simulator queues apart by dependencies).
 * Symmetric ones whose group holds every translation of the coordinates
 * are, for a simulation round by round, a stream: each round's messages are
 * the translates of those leaving node 0, made when the simulator asks for
 * the round, so memory is one round's messages (ring(16384), HyperX 32x32
 * SP). Otherwise symmetric schedules are expanded when that is small, or
 * else written out as those translates (no chunk lists, so 64x64 SP fits)
 * with their dependencies carried over from the base transfers' (the layout
 * pass's base_deps; round_deps).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "to_sim.h"

typedef struct Out {
	Arena *a;
	SimMsg *msg;
	int nmsg, capmsg;
	int *hops;
	int nhop, caphop;
	int *deps;
	int ndep, capdep;
} Out;

static void
add_msg(Out *o, SimMsg m, const int *links)
{
	m.hop = o->nhop;
	for (int k = 0; k < m.nhop; k++)
		VEC_PUSH(o->a, o->hops, o->nhop, o->caphop, links[k]);
	VEC_PUSH(o->a, o->msg, o->nmsg, o->capmsg, m);
}

static void
finish(Out *o, SimColl *c)
{
	c->nmsg = o->nmsg;
	c->msg = o->msg;
	c->hops = o->hops;
	c->deps = o->deps;
}

/* An in-network operation (Msg.fuse) as the simulator runs it: its leader
 * is one flow over every link the operation loads (fuse_links: the senders'
 * links into the switch, once each, and the links out of it, once each), at
 * one rate for all of them, as a switch that streams the sum (or the copies)
 * on as it arrives; the switch, not the receiver, reduces. Its other
 * messages cross no link, and what waits for them waits for the leader. */
static const int *
fused_flow(const Sched *s, int j, SimMsg *sm, int *links)
{
	const Fuse *f = &s->fuse[s->msg[j].fuse - 1];
	sm->reduce = false;
	sm->fused = true;
	sm->nhop = f->leader == j ? fuse_links(s, s->msg[j].fuse - 1, links) : 0;
	return links;
}

/* An explicit schedule message by message: a message waits for every
 * earlier delivery, to its sender, of a chunk it carries (msg_deps). */
static void
explicit_coll(Arena *a, const Sched *s, SimColl *c)
{
	/* sized up front: grown by doubling, every copy would stay in the
	 * arena, zeroed (a third of tune's time on 64 ranks went there) */
	Out o = {.a = a, .capmsg = s->nmsg};
	int64_t hops = 0;
	for (int j = 0; j < s->nmsg; j++)
		hops += sched_route_len(s, s->msg[j].route);
	if (hops > 1 << 29) /* as arena_grow would have refused it */
		out_of_memory((size_t)hops * sizeof *o.hops);
	o.caphop = (int)hops;
	o.msg = arena_array(a, (size_t)o.capmsg, sizeof *o.msg);
	o.hops = arena_array(a, (size_t)o.caphop, sizeof *o.hops);
	int64_t mult = s->kind == CK_ALLTOALL ? s->nrank : 1;
	MsgDeps d;
	msg_deps(a, s, false, &d);
	int *fused = s->nfuse ? arena_array(a, (size_t)fuse_links_max(s), sizeof *fused) : NULL;
	for (int j = 0; j < s->nmsg; j++) {
		const Msg *m = &s->msg[j];
		SimMsg sm = {.round = m->round, .src = m->src, .dst = m->dst,
		             .num = (int64_t)m->n * mult, .den = s->nchunk,
		             .reduce = m->op == X_REDUCE, .nhop = sched_route_len(s, m->route),
		             .dep = d.read_off[j], .ndep = d.read_off[j + 1] - d.read_off[j],
		             .instance = m->instance};
		const int *links = s->route_link + s->route_off[m->route];
		if (m->fuse)
			links = fused_flow(s, j, &sm, fused);
		add_msg(&o, sm, links);
	}
	for (int k = 0; s->nfuse && k < (s->nmsg ? d.read_off[s->nmsg] : 0); k++) {
		const Msg *m = &s->msg[d.read[k]]; /* what waits for a member waits for the operation */
		if (m->fuse)
			d.read[k] = s->fuse[m->fuse - 1].leader;
	}
	o.deps = d.read;
	o.ndep = s->nmsg ? d.read_off[s->nmsg] : 0;
	c->has_deps = true;
	finish(&o, c);
}

/* ---- symmetric schedules whose group holds every translation ---- */

/* The translation by delta (coordinates, sign) of node v. */
static int
translate(const Topo *t, int v, const int *delta, int sign)
{
	int x[MAX_DIMS];
	topo_coords(t, v, x);
	for (int i = 0; i < t->ndim; i++)
		x[i] += sign * delta[i];
	return topo_node(t, x);
}

static void
translate_route(const Topo *t, const int *in, int *out, int n, const int *delta, int sign)
{
	for (int k = 0; k < n; k++) {
		const Link *l = &t->link[in[k]];
		out[k] = topo_find_link(t, translate(t, l->src, delta, sign),
		                        translate(t, l->dst, delta, sign), l->copy);
	}
}

/* Distinct (op, route) keys leaving node 0 in one round, with counts. */
typedef struct Keys {
	int *data;      /* per key: op, len, links */
	int *off, *count;
	int n, cap, len, capdata;
	Hash index;     /* the keys by value */
} Keys;

static bool
key_is(const void *ctx, int i, const void *key)
{
	const Keys *ks = ctx;
	const HashInts *q = key; /* op, len, links: n = len + 2 */
	const int *x = ks->data + ks->off[i];
	return x[1] + 2 == q->n && memcmp(x, q->k, (size_t)q->n * sizeof *q->k) == 0;
}

static unsigned
key_hash(const void *ctx, int i)
{
	const Keys *ks = ctx;
	const int *x = ks->data + ks->off[i];
	return hash_ints(x, (size_t)x[1] + 2);
}

/* The index of key k, or -1. */
static int
keys_find(const Keys *ks, const int *k, int n)
{
	return hash_find(&ks->index, hash_ints(k, (size_t)n), &(HashInts){k, n}, key_is, ks);
}

static void
keys_add(Keys *ks, const int *k, int n)
{
	unsigned h = hash_ints(k, (size_t)n);
	int found = hash_find(&ks->index, h, &(HashInts){k, n}, key_is, ks);
	if (found >= 0) {
		ks->count[found]++;
		return;
	}
	/* small first: every round's keys are open at once (node0_keys), and a
	 * ring's rounds hold one or two (ring(65536): 131070 rounds, which
	 * took 200 MB at 64 keys and 256 ints of room each) */
	if (ks->n == ks->cap) {
		ks->cap = ks->cap ? 2 * ks->cap : 2;
		ks->off = xrealloc(ks->off, (size_t)ks->cap * sizeof *ks->off);
		ks->count = xrealloc(ks->count, (size_t)ks->cap * sizeof *ks->count);
	}
	if (!ks->data || ks->len + n > ks->capdata) { /* never NULL: NULL + 0 is undefined */
		ks->capdata = 2 * (ks->len + n) + 8;
		ks->data = xrealloc(ks->data, (size_t)ks->capdata * sizeof *ks->data);
	}
	copy_n(ks->data + ks->len, k, (size_t)n, sizeof *k);
	ks->off[ks->n] = ks->len;
	ks->count[ks->n] = 1;
	ks->len += n;
	hash_add(&ks->index, h, ks->n++, key_hash, ks);
}

static void
keys_free(Keys *ks)
{
	free(ks->data), free(ks->off), free(ks->count);
	hash_free(&ks->index);
}

/* Whether two rounds' keys are the same messages (but for the round). */
static bool
keys_same(const Keys *a, const Keys *b)
{
	return a->n == b->n && a->len == b->len &&
	       (a->n == 0 || (memcmp(a->data, b->data, (size_t)a->len * sizeof *a->data) == 0 &&
	                      memcmp(a->count, b->count, (size_t)a->n * sizeof *a->count) == 0));
}

/* The elements fixing node 0, when the group holds every translation of
 * the coordinates (those with the identity matrix are then exactly the
 * translations, one per node, and every element is a translation after one
 * fixing node 0); else 0. */
static int
stabilizer(const Group *g, const Topo *t, int *fix)
{
	bool kind = t->kind == TK_TORUS || t->kind == TK_RING || t->kind == TK_HYPERX ||
	            t->kind == TK_FULL;
	if (!g->affine || !kind)
		return 0;
	int d = t->ndim, n = 0;
	long ntrans = 0;
	for (int e = 0; e < g->order; e++) {
		bool zero = true, identity = true;
		for (int i = 0; i < d; i++) {
			zero &= g->vec[e * d + i] == 0;
			for (int j = 0; j < d; j++)
				identity &= g->mat[(e * d + i) * d + j] == (i == j);
		}
		if (zero)
			fix[n++] = e;
		ntrans += identity;
	}
	return ntrans == t->nnode && (long)n * t->nnode == g->order ? n : 0;
}

/* A key's first int: the operation and the instance (BaseXfer.instance),
 * which keep messages apart as the explicit schedule's do. */
static int
key_head(XferOp op, int instance)
{
	return instance * 2 + (op == X_REDUCE ? 0 : 1);
}

static bool
key_reduces(const int *k)
{
	return k[0] % 2 == 0;
}

static int
key_instance(const int *k)
{
	return k[0] / 2;
}

/* The key (op and instance, length, links) of base transfer x under the element
 * f o (translation by -delta), translated back so that it leaves node 0;
 * *from is the node it leaves. Its length. */
static int
image_key(const Sched *s, const BaseXfer *x, const int *delta, int f, int *key, int *from)
{
	const Topo *t = s->topo;
	int len = sched_route_len(s, x->route);
	int *moved = key + 2, at[MAX_DIMS];
	translate_route(t, s->route_link + s->route_off[x->route], moved, len, delta, -1);
	for (int k = 0; k < len; k++)
		moved[k] = group_link(s->group, f, moved[k]);
	*from = group_node(s->group, f, translate(t, x->src, delta, -1));
	topo_coords(t, *from, at);
	translate_route(t, moved, moved, len, at, -1);
	key[0] = key_head(x->op, x->instance);
	key[1] = len;
	return len + 2;
}

/* Every round's keys of the messages leaving node 0: each copy of a base
 * transfer leaving node 0 is f o (translation by -src) of it, f fixing
 * node 0. key: room for a key. */
static Keys *
node0_keys(const Sched *s, const int *fix, int nfix, int *key)
{
	Keys *ks = xcalloc((size_t)s->nround + 1, sizeof *ks);
	for (int i = 0; i < s->nbase; i++) {
		const BaseXfer *x = &s->base[i];
		int delta[MAX_DIMS], from;
		topo_coords(s->topo, x->src, delta);
		for (int f = 0; f < nfix; f++)
			keys_add(&ks[x->round], key, image_key(s, x, delta, fix[f], key, &from));
	}
	return ks;
}

/* A dependency of node 0's message `key` (of its round): message `idx` of
 * round `round`, leaving node `node`. */
typedef struct Dep {
	int key, round, node, idx;
} Dep;

static int
dep_order(const void *pa, const void *pb)
{
	const Dep *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->round != b->round)
		return a->round < b->round ? -1 : 1;
	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Growable scratch for one round's dependencies. */
typedef struct Deps {
	Dep *v;
	int n, cap;
} Deps;

/*
 * The dependencies of node 0's messages in round r, sorted by key, without
 * repeats. The copy of base transfer x by element e waits for the copies
 * by e of the base transfers x reads (base_deps: the layout pass's
 * msg_deps on the base transfers). For node 0's messages e = f o
 * (translation by -x.src), f fixing node 0; the copy of y by e leaves node
 * w = e(y.src) with key e(y) translated by -w. A message of node v waits
 * for the translates by v. -1 when a key is not found (the group is not
 * what stabilizer() checked).
 */
static int
round_deps(const Sched *s, const Keys *ks, const MsgDeps *bd, const int *fix, int nfix, int r,
           int *key, Deps *out)
{
	out->n = 0;
	for (int i = 0; i < s->nbase; i++) {
		const BaseXfer *x = &s->base[i];
		if (x->round != r)
			continue;
		int delta[MAX_DIMS], from;
		topo_coords(s->topo, x->src, delta);
		for (int f = 0; f < nfix; f++) {
			int xk = keys_find(&ks[r], key, image_key(s, x, delta, fix[f], key, &from));
			for (int k = bd->read_off[i]; k < bd->read_off[i + 1]; k++) {
				const BaseXfer *by = &s->base[bd->read[k]];
				int n = image_key(s, by, delta, fix[f], key, &from);
				Dep d = {xk, by->round, from, keys_find(&ks[by->round], key, n)};
				if (d.key < 0 || d.idx < 0)
					return -1;
				if (out->n == out->cap) {
					out->cap = out->cap ? 2 * out->cap : 256;
					out->v = xrealloc(out->v, (size_t)out->cap * sizeof *out->v);
				}
				out->v[out->n++] = d;
			}
		}
	}
	if (out->n == 0)
		return 0; /* (and out->v may be NULL, which qsort must not see) */
	qsort(out->v, (size_t)out->n, sizeof *out->v, dep_order);
	int n = 0;
	for (int i = 0; i < out->n; i++)
		if (n == 0 || dep_order(&out->v[n - 1], &out->v[i]) != 0)
			out->v[n++] = out->v[i];
	out->n = n;
	return 0;
}

/* Every message, the translates of node 0's by each node, with their
 * dependencies: what `build --target sim` writes and --sync deps runs. */
static int
translates_coll(Diag *dg, Arena *a, const Sched *s, const int *fix, int nfix, SimColl *c)
{
	const Topo *t = s->topo;
	Out o = {.a = a};
	int64_t mult = s->kind == CK_ALLTOALL ? s->nrank : 1;
	int *key = xmalloc(((size_t)t->nnode + 3) * sizeof *key);
	/* every round's keys first: dependencies point into earlier rounds */
	Keys *ks = node0_keys(s, fix, nfix, key);
	long total = 0;
	for (int r = 0; r < s->nround; r++)
		total += (long)t->nnode * ks[r].n;
	if (total > MAX_TRANSFERS) {
		error_at(dg, s->loc, "'%s' sends %ld messages; the simulator holds at most %d at once, as "
		         "--sync deps and a .sim file need (round by round it takes them a round at a "
		         "time)", s->name, total, MAX_TRANSFERS);
		for (int r = 0; r < s->nround; r++)
			keys_free(&ks[r]);
		free(ks), free(key);
		return -1;
	}
	int *links = xmalloc(((size_t)t->nnode + 1) * sizeof *links);
	int *first = xcalloc((size_t)s->nround + 1, sizeof *first); /* message index */
	for (int r = 0; r < s->nround; r++)
		first[r + 1] = first[r] + t->nnode * ks[r].n;
	Arena tmp = {0};
	MsgDeps bd;
	base_deps(&tmp, s, &bd);
	Deps deps = {0};
	c->has_deps = true;
	for (int r = 0; r < s->nround; r++) {
		if (c->has_deps && round_deps(s, ks, &bd, fix, nfix, r, key, &deps) != 0) {
			c->has_deps = false;
			o.ndep = 0;
			for (int m = 0; m < o.nmsg; m++)
				o.msg[m].ndep = o.msg[m].dep = 0;
		}
		for (int v = 0; v < t->nnode; v++) {
			int delta[MAX_DIMS];
			topo_coords(t, v, delta);
			for (int i = 0, d = 0; i < ks[r].n; i++) {
				const int *k = ks[r].data + ks[r].off[i];
				int len = k[1];
				translate_route(t, k + 2, links, len, delta, +1);
				SimMsg m = {.round = r, .src = s->node_rank[v],
				            .dst = s->node_rank[len ? t->link[links[len - 1]].dst : v],
				            .num = (int64_t)ks[r].count[i] * mult, .den = s->nchunk,
				            .reduce = key_reduces(k), .instance = key_instance(k), .nhop = len,
				            .dep = o.ndep};
				for (; c->has_deps && d < deps.n && deps.v[d].key == i; d++, m.ndep++) {
					const Dep *e = &deps.v[d];
					int w = translate(t, e->node, delta, +1);
					VEC_PUSH(a, o.deps, o.ndep, o.capdep,
					         first[e->round] + w * ks[e->round].n + e->idx);
				}
				add_msg(&o, m, links);
			}
		}
	}
	for (int r = 0; r < s->nround; r++)
		keys_free(&ks[r]);
	arena_free(&tmp);
	free(ks), free(first), free(deps.v), free(key), free(links);
	finish(&o, c);
	return 0;
}

/* ---- the same, streamed round by round (rounds mode) ---- */

typedef struct Stream {
	SimStream pub;
	const Sched *s;
	Keys *ks;          /* per round, node 0's keys (arena copies) */
	int64_t mult;
	int built;         /* the round whose messages the buffers hold, or -1 */
	int nmsg;
	SimMsg *msg;       /* the largest round's room */
	int *hops;
	int *kdst;         /* per key of a round: its receiver from the node at hand */
	int64_t *korder;   /* (receiver, key): the keys in the order of the explicit form */
	int rep_rank;      /* node 0's rank, whose messages represent a round */
	SimMsg *rmsg;      /* its messages in a round (the most keys' room) */
	int *rhops;        /* and their routes (the longest round's keys' links) */
} Stream;

/* The keys of one round into the arena (no hash slots: the stream only
 * reads them in order). */
static Keys
keys_into(Arena *a, Keys *k)
{
	Keys out = {.n = k->n, .len = k->len};
	out.data = arena_array(a, (size_t)k->len + 1, sizeof *out.data);
	out.off = arena_array(a, (size_t)k->n + 1, sizeof *out.off);
	out.count = arena_array(a, (size_t)k->n + 1, sizeof *out.count);
	copy_n(out.data, k->data, (size_t)k->len, sizeof *out.data);
	copy_n(out.off, k->off, (size_t)k->n, sizeof *out.off);
	copy_n(out.count, k->count, (size_t)k->n, sizeof *out.count);
	keys_free(k);
	return out;
}

static int
cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	return (a > b) - (a < b);
}

/* The messages of node v (rank q) in round r into msg and hops, after *n
 * and *h of them, in the explicit form's order: by receiver, then key. */
static void
node_msgs(Stream *st, int r, int q, SimMsg *msg, int *hops, int *n, int *h)
{
	const Sched *s = st->s;
	const Topo *t = s->topo;
	const Keys *ks = &st->ks[r];
	int v = s->rank_node[q], delta[MAX_DIMS];
	topo_coords(t, v, delta);
	for (int i = 0; i < ks->n; i++) {
		const int *k = ks->data + ks->off[i];
		int len = k[1], to = len ? t->link[k[2 + len - 1]].dst : 0;
		st->kdst[i] = s->node_rank[translate(t, to, delta, +1)];
		st->korder[i] = (int64_t)st->kdst[i] << 32 | i;
	}
	if (ks->n > 1)
		qsort(st->korder, (size_t)ks->n, sizeof *st->korder, cmp_i64);
	for (int j = 0; j < ks->n; j++) {
		int i = (int)(st->korder[j] & 0xffffffff);
		const int *k = ks->data + ks->off[i];
		int len = k[1];
		translate_route(t, k + 2, hops + *h, len, delta, +1);
		msg[(*n)++] = (SimMsg){.round = r, .src = q, .dst = st->kdst[i], .nhop = len,
		                           .hop = *h, .num = (int64_t)ks->count[i] * st->mult,
		                           .den = s->nchunk, .reduce = key_reduces(k),
		                           .instance = key_instance(k)};
		*h += len;
	}
}

static SimRound
stream_round(void *ctx, int r)
{
	Stream *st = ctx;
	if (st->built >= 0 && keys_same(&st->ks[st->built], &st->ks[r])) {
		/* rings repeat one round: only the round number changes */
		for (int i = 0; i < st->nmsg; i++)
			st->msg[i].round = r;
	} else {
		int n = 0, h = 0;
		for (int q = 0; q < st->s->nrank; q++)
			node_msgs(st, r, q, st->msg, st->hops, &n, &h);
		st->nmsg = n;
	}
	st->built = r;
	return (SimRound){st->msg, st->nmsg, st->hops};
}

/* Node 0's messages of round r: the round is their translates by every
 * node (SimStream.round_rep). */
static SimRound
stream_round_rep(void *ctx, int r)
{
	Stream *st = ctx;
	int n = 0, h = 0;
	node_msgs(st, r, st->rep_rank, st->rmsg, st->rhops, &n, &h);
	return (SimRound){st->rmsg, n, st->rhops};
}

/* The orbits of the links under the translations (each link's translate
 * leaving node 0), when the translations act on the links and the links of
 * an orbit are alike; else NULL. The translations act freely on the nodes,
 * so on the links too: every orbit holds nnode links. */
static int *
link_orbits(Arena *a, const Topo *t)
{
	int *orbit = arena_array(a, (size_t)t->nlink + 1, sizeof *orbit);
	for (int l = 0; l < t->nlink; l++) {
		const Link *k = &t->link[l];
		int delta[MAX_DIMS];
		topo_coords(t, k->src, delta);
		int o = topo_find_link(t, translate(t, k->src, delta, -1),
		                       translate(t, k->dst, delta, -1), k->copy);
		if (o < 0 || t->link[o].bandwidth != k->bandwidth || t->link[o].latency != k->latency)
			return NULL;
		orbit[l] = o;
	}
	return orbit;
}

/* Whether node 0's keys of a round cross no orbit of links twice, so that
 * their translates share no link: the simulator then runs the round by
 * node 0's messages alone (runtime/sim_symmetric.c, sym_lone). */
static bool
keys_lone(const Keys *ks, const int *orbit, int *stamp, int mark)
{
	for (int i = 0; i < ks->n; i++) {
		const int *k = ks->data + ks->off[i];
		for (int j = 0; j < k[1]; j++) {
			if (stamp[orbit[k[2 + j]]] == mark)
				return false;
			stamp[orbit[k[2 + j]]] = mark;
		}
	}
	return true;
}

/* A stream of the translates of node 0's messages, one round at a time. */
static int
stream_coll(Diag *dg, Arena *a, const Sched *s, const int *fix, int nfix, SimColl *c)
{
	int *key = xmalloc(((size_t)s->topo->nnode + 3) * sizeof *key);
	Keys *ks = node0_keys(s, fix, nfix, key);
	free(key);
	Stream *st = NEW(a, Stream);
	*st = (Stream){.s = s, .mult = s->kind == CK_ALLTOALL ? s->nrank : 1, .built = -1,
	               .rep_rank = s->node_rank[0]};
	st->ks = arena_array(a, (size_t)s->nround + 1, sizeof *st->ks);
	const Topo *t = s->topo;
	int *orbit = s->nrank == t->nnode && st->rep_rank >= 0 ? link_orbits(a, t) : NULL;
	int *stamp = xcalloc((size_t)t->nlink + 1, sizeof *stamp);
	/* messages in all, and those the simulator makes: a round whose
	 * translates share no link is made as node 0's messages alone */
	long total = 0, made = 0, most = 0, most_hops = 0, most_keys = 0, most_rep_hops = 0;
	long nshape = 0;
	for (int r = 0; r < s->nround; r++)
		nshape += ks[r].n;
	SimShape *shape = arena_array(a, (size_t)nshape + 1, sizeof *shape);
	nshape = 0;
	for (int r = 0; r < s->nround; r++) {
		long hops = (long)(ks[r].len - 2 * ks[r].n) * s->nrank;
		for (int i = 0; i < ks[r].n; i++) {
			int len = ks[r].data[ks[r].off[i] + 1];
			shape[nshape++] = (SimShape){.num = (int64_t)ks[r].count[i] * st->mult,
			                             .den = s->nchunk,
			                             .single = len > 1 ? 0 : s->nrank,
			                             .hops = len > 1 ? (double)len * s->nrank : 0};
		}
		total += (long)ks[r].n * s->nrank;
		made += orbit && keys_lone(&ks[r], orbit, stamp, r + 1) ? ks[r].n
		                                                         : (long)ks[r].n * s->nrank;
		most_rep_hops = ks[r].len > most_rep_hops ? ks[r].len : most_rep_hops;
		most = ks[r].n * (long)s->nrank > most ? ks[r].n * (long)s->nrank : most;
		most_hops = hops > most_hops ? hops : most_hops;
		most_keys = ks[r].n > most_keys ? ks[r].n : most_keys;
		st->ks[r] = keys_into(a, &ks[r]);
	}
	free(ks), free(stamp);
	if (made > MAX_STREAM_MSGS || most_hops > MAX_STREAM_MSGS) {
		error_at(dg, s->loc, "'%s' sends %ld messages (%ld hops in a round at most); the simulator "
		         "takes at most %d", s->name, made, most_hops, MAX_STREAM_MSGS);
		return -1;
	}
	st->msg = arena_array(a, (size_t)most + 1, sizeof *st->msg);
	st->hops = arena_array(a, (size_t)most_hops + 1, sizeof *st->hops);
	st->kdst = arena_array(a, (size_t)most_keys + 1, sizeof *st->kdst);
	st->korder = arena_array(a, (size_t)most_keys + 1, sizeof *st->korder);
	st->rmsg = arena_array(a, (size_t)most_keys + 1, sizeof *st->rmsg);
	st->rhops = arena_array(a, (size_t)most_rep_hops + 1, sizeof *st->rhops);
	st->pub = (SimStream){.ctx = st, .round = stream_round, .max_round_msgs = (int)most,
	                      .shape = shape, .nshape = (int)nshape, .nmsg = total,
	                      .ncopy = orbit ? s->nrank : 0, .link_orbit = orbit,
	                      .round_rep = orbit ? stream_round_rep : NULL,
	                      .max_rep_msgs = (int)most_keys};
	c->stream = &st->pub;
	c->nmsg = 0;
	c->has_deps = false;
	return 0;
}

/* How coll_of_sched may convert a symmetric schedule. */
typedef struct Conversion {
	long expand_limit; /* (base transfer, element) pairs expanded at most */
	bool stream;       /* translation-symmetric ones round by round */
} Conversion;

static int
coll_of_sched(Diag *dg, Arena *a, const Sched *s, const Conversion *how, SimColl *c)
{
	c->name = s->name;
	c->loc = s->loc;
	c->kind = coll_kind_name[s->kind];
	c->algorithm = s->algorithm;
	c->nrank = s->nrank;
	c->rank_node = s->rank_node;
	c->root = s->root;
	c->nround = s->nround;
	if (s->repeat > 1 && how->stream)
		return repeat_stream_coll(dg, a, s, c);
	if (s->repeat > 1) { /* every message at once: listed */
		Arena tmp = {0};
		const Sched *x = sched_listed(dg, &tmp, s);
		if (x)
			explicit_coll(a, x, c);
		arena_free(&tmp);
		return x ? 0 : -1;
	}
	if (!s->base) {
		explicit_coll(a, s, c);
		return 0;
	}
	if (s->xor_routes && how->stream)
		return rank_stream_coll(dg, a, s, c);
	const Group *g = s->group;
	long order = g ? g->order : s->nrank; /* the rank form's copies: one per rank */
	int *fix = xmalloc((size_t)order * sizeof *fix);
	int nfix = s->nphase || !g ? 0 : stabilizer(g, s->topo, fix), rc = 0;
	if (nfix && how->stream) {
		rc = stream_coll(dg, a, s, fix, nfix, c);
	} else if ((long)s->nbase * order <= how->expand_limit) {
		Arena tmp = {0};
		explicit_coll(a, sched_expand(dg, &tmp, s), c);
		arena_free(&tmp);
	} else if (nfix) {
		rc = translates_coll(dg, a, s, fix, nfix, c);
	} else if (!g) {
		error_at(dg, s->loc, "'%s' is too large to expand for the simulator: %ld copies of base "
		         "transfers (at most %ld); round by round (--sync rounds) it is streamed",
		         s->name, (long)s->nbase * order, how->expand_limit);
		rc = -1;
	} else {
		error_at(dg, s->loc, "'%s' is too large for the simulator: %ld copies of base transfers "
		         "to expand (at most %ld unless its group holds every translation of a torus, "
		         "ring, hyperx or full topology)", s->name, (long)s->nbase * order,
		         how->expand_limit);
		rc = -1;
	}
	free(fix);
	return rc;
}

/* The router ports of all nodes, for static power: a node's router has a
 * local port and one per link leaving it (each parallel link its own), and
 * on a mesh, torus or supermesh at least one per direction, border or not
 * (a chiplet's router is built alike everywhere: 5 ports on a 2D mesh and
 * on SuperMeshAlter, 6 on SuperMeshBi's border routers). */
static int64_t
router_ports(const Topo *t)
{
	int *deg = xcalloc((size_t)t->nnode + 1, sizeof *deg);
	for (int l = 0; l < t->nlink; l++)
		deg[t->link[l].src]++;
	bool grid = topo_forms[t->kind].grid;
	int64_t ports = 0;
	for (int v = 0; v < t->nnode; v++)
		ports += 1 + (grid && deg[v] < 2 * t->ndim ? 2 * t->ndim : deg[v]);
	free(deg);
	return ports;
}

int
sim_net_of_topo(Diag *dg, Arena *a, const Topo *t, SimNet *out)
{
	out->topo = topo_kind_name(t->kind);
	out->ndim = t->ndim;
	memcpy(out->size, t->size, sizeof out->size);
	out->nnode = t->nnode;
	out->nlink = t->nlink;
	out->link = arena_array(a, (size_t)t->nlink + 1, sizeof *out->link);
	for (int l = 0; l < t->nlink; l++) {
		const Link *k = &t->link[l];
		out->link[l] = (SimLink){.src = k->src, .dst = k->dst, .bw = llround(k->bandwidth),
		                         .lat_ps = llround(k->latency * 1e12),
		                         .energy_per_bit = k->energy_per_bit};
	}
	out->mtu = llround(t->net.mtu);
	if (out->mtu < 1 || out->mtu > SIM_MAX_MTU) {
		error_at(dg, t->loc, "the simulator takes an mtu of 1 B to 1 MiB, not %.0f B", t->net.mtu);
		return -1;
	}
	out->router_ps = llround(t->net.router_latency * 1e12);
	out->step_ps = llround(t->net.step_overhead * 1e12);
	out->router_energy_per_bit = t->net.router_energy_per_bit;
	out->port_static_w = t->net.port_static_power;
	out->link_static_w = t->net.link_static_power;
	out->nport = router_ports(t);
	out->switching = t->net.store_and_forward ? SIM_STORE_AND_FORWARD : SIM_CUT_THROUGH;
	out->in_network = topo_any_reduces(t);
	if (t->net.buffer_packets > SIM_MAX_BUFFER) {
		error_at(dg, t->loc, "the simulator takes a buffer of at most %d packets, not %.0f",
		         SIM_MAX_BUFFER, t->net.buffer_packets);
		return -1;
	}
	out->buffer_pkts = llround(t->net.buffer_packets);
	out->buffer_bytes = t->net.buffer_bytes < 1e18 ? llround(t->net.buffer_bytes) : (int64_t)1e18;
	return 0;
}


/* An optical schedule's reconfigurations: the rounds before which it rewires. */
static void
reconfig_rounds(Arena *a, const Sched *s, SimColl *c)
{
	if (sched_nreconfig(s) == 0)
		return;
	c->reconfig = arena_array(a, (size_t)c->nround + 1, 1);
	for (int i = 0; i < s->nphase; i++)
		if (s->phase[i].reconfig)
			c->reconfig[s->phase[i].round] = 1;
}

/* A schedule's barriers: the rounds before which everything earlier arrives. */
static void
barrier_rounds(Arena *a, const Sched *s, SimColl *c)
{
	if (s->nbarrier == 0)
		return;
	c->barrier = arena_array(a, (size_t)c->nround + 1, 1);
	for (int i = 0; i < s->nbarrier; i++)
		c->barrier[s->barrier[i]] = 1;
}

static int
convert(Diag *dg, Arena *a, const Sched *const *s, int n, const Conversion *how, SimNet *out)
{
	memset(out, 0, sizeof *out);
	if (n == 0) {
		error_file(dg, "no schedule to simulate");
		return -1;
	}
	const Topo *t = s[0]->topo;
	for (int i = 1; i < n; i++)
		if (s[i]->topo != t) {
			error_at(dg, s[i]->loc, "'%s' is on topology '%s' and '%s' on '%s': a .sim file holds "
			         "one topology (choose with --collective)", s[0]->name, t->name, s[i]->name,
			         s[i]->topo->name);
			return -1;
		}
	if (sim_net_of_topo(dg, a, t, out) != 0)
		return -1;
	out->ncoll = n;
	out->coll = arena_array(a, (size_t)n, sizeof *out->coll);
	for (int i = 0; i < n; i++) {
		if (coll_of_sched(dg, a, s[i], how, &out->coll[i]) != 0)
			return -1;
		reconfig_rounds(a, s[i], &out->coll[i]);
		barrier_rounds(a, s[i], &out->coll[i]);
	}
	out->reconfig_ps = llround(t->net.reconfig_delay * 1e12);
	return 0;
}

int
sim_from_scheds(Diag *dg, Arena *a, const Sched *const *s, int n, SimNet *out)
{
	return convert(dg, a, s, n, &(Conversion){MAX_SIM_EXPAND, false}, out);
}

int
sim_from_scheds_limit(Diag *dg, Arena *a, const Sched *const *s, int n, long expand_limit, SimNet *out)
{
	return convert(dg, a, s, n, &(Conversion){expand_limit, false}, out);
}

int
sim_stream_scheds(Diag *dg, Arena *a, const Sched *const *s, int n, SimNet *out)
{
	return convert(dg, a, s, n, &(Conversion){MAX_SIM_EXPAND, true}, out);
}

static int
emit_sim(Diag *dg, const Prog *p, const BuildOpts *o, FILE *f)
{
	const Sched **sel = xmalloc(((size_t)p->nsched + 1) * sizeof *sel);
	int n = backend_select(p, o, sel, p->nsched);
	Arena a = {0};
	SimNet net;
	int rc = sim_from_scheds(dg, &a, sel, n, &net);
	if (rc == 0)
		sim_write(&net, f);
	arena_free(&a);
	free(sel);
	return rc;
}

const Backend sim_backend = {"sim", "the simulator's input (docs/sim.md)", ".sim", emit_sim};
