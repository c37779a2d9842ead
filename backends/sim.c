/*
 * sim.c: the IR as the simulator's input, and `build --target sim` (the
 * .sim text, docs/sim.md). Explicit schedules convert message by message,
 * with dependencies derived from the chunks. Symmetric ones are expanded
 * when that is small; otherwise, when the group holds every translation,
 * the messages are the translates of those leaving node 0 (no chunk lists,
 * so 64x64 SP fits), and so are their dependencies (round_deps).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "simbuild.h"

/* Symmetric schedules up to this many (base transfer, element) pairs are
 * expanded, which gives their dependencies. */
enum { EXPAND_LIMIT = 1 << 22 };

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

/* (rank, chunk) -> the messages that delivered that chunk to that rank, as
 * linked lists in one pool, open-addressed by key. */
typedef struct Deliv {
	int64_t *key;
	int *head;
	size_t mask;
	int *pmsg, *pnext;
	size_t npool;
} Deliv;

/* The list of key (pool index + 1; 0 when empty). */
static int
deliv_first(const Deliv *d, int64_t key)
{
	size_t h = (size_t)((uint64_t)key * 0x9e3779b97f4a7c15ull >> 7) & d->mask;
	while (d->key[h] != -1 && d->key[h] != key)
		h = (h + 1) & d->mask;
	return d->key[h] == key ? d->head[h] : 0;
}

static int *
deliv_slot(Deliv *d, int64_t key)
{
	size_t h = (size_t)((uint64_t)key * 0x9e3779b97f4a7c15ull >> 7) & d->mask;
	while (d->key[h] != -1 && d->key[h] != key)
		h = (h + 1) & d->mask;
	if (d->key[h] == -1) {
		d->key[h] = key;
		d->head[h] = 0;
	}
	return &d->head[h];
}

static void
explicit_coll(Arena *a, const Sched *s, SimColl *c)
{
	Out o = {.a = a};
	int64_t mult = s->kind == CK_ALLTOALL ? s->nrank : 1;
	size_t refs = 0;
	for (int i = 0; i < s->nmsg; i++)
		refs += (size_t)s->msg[i].n;
	Deliv d = {0};
	size_t nslot = 1024;
	while (nslot < 2 * refs)
		nslot *= 2;
	d.mask = nslot - 1;
	d.key = xmalloc(nslot * sizeof *d.key);
	d.head = xmalloc(nslot * sizeof *d.head);
	d.pmsg = xmalloc((refs + 1) * sizeof *d.pmsg);
	d.pnext = xmalloc((refs + 1) * sizeof *d.pnext);
	int *stamp = xmalloc(((size_t)s->nmsg + 1) * sizeof *stamp);
	memset(d.key, 0xff, nslot * sizeof *d.key);
	for (int i = 0; i < s->nmsg; i++)
		stamp[i] = -1;
	for (int i = 0; i < s->nmsg;) {
		int round = s->msg[i].round, j = i;
		/* a message waits for every earlier delivery, to its sender, of a
		 * chunk it carries */
		for (; j < s->nmsg && s->msg[j].round == round; j++) {
			const Msg *m = &s->msg[j];
			SimMsg sm = {.round = m->round, .src = m->src, .dst = m->dst,
			             .num = (int64_t)m->n * mult, .den = s->nchunk,
			             .reduce = m->op == X_REDUCE, .nhop = sched_route_len(s, m->route),
			             .dep = o.ndep};
			for (int k = 0; k < m->n; k++) {
				int64_t key = (int64_t)m->src * s->nchunk + s->chunks[m->first + k];
				for (int p = deliv_first(&d, key) - 1; p >= 0; p = d.pnext[p] - 1) {
					int from = d.pmsg[p];
					if (stamp[from] == j)
						continue;
					stamp[from] = j;
					VEC_PUSH(a, o.deps, o.ndep, o.capdep, from);
					sm.ndep++;
				}
			}
			add_msg(&o, sm, s->route_link + s->route_off[m->route]);
		}
		for (int k = i; k < j; k++) {
			const Msg *m = &s->msg[k];
			for (int q = 0; q < m->n; q++) {
				int *h = deliv_slot(&d, (int64_t)m->dst * s->nchunk + s->chunks[m->first + q]);
				d.pmsg[d.npool] = k;
				d.pnext[d.npool] = *h;
				*h = (int)++d.npool;
			}
		}
		i = j;
	}
	free(d.key), free(d.head), free(d.pmsg), free(d.pnext), free(stamp);
	c->has_deps = true;
	finish(&o, c);
}

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
	int *slot;
	int nslot;
} Keys;

static unsigned
keys_hash(const int *k, int n)
{
	unsigned h = 2166136261u;
	for (int i = 0; i < n; i++)
		h = (h ^ (unsigned)k[i]) * 16777619u;
	return h;
}

/* The slot of key k: where it is, or the empty slot where it would go. */
static unsigned
keys_probe(const Keys *ks, const int *k, int n)
{
	unsigned h = keys_hash(k, n) & (unsigned)(ks->nslot - 1);
	for (; ks->slot[h]; h = (h + 1) & (unsigned)(ks->nslot - 1)) {
		const int *x = ks->data + ks->off[ks->slot[h] - 1];
		if (x[1] + 2 == n && memcmp(x, k, (size_t)n * sizeof *k) == 0)
			break;
	}
	return h;
}

/* The index of key k, or -1. */
static int
keys_find(const Keys *ks, const int *k, int n)
{
	return ks->nslot ? ks->slot[keys_probe(ks, k, n)] - 1 : -1;
}

static void
keys_add(Keys *ks, const int *k, int n)
{
	if (2 * (ks->n + 1) > ks->nslot) {
		ks->nslot = ks->nslot ? 2 * ks->nslot : 256;
		free(ks->slot);
		ks->slot = xcalloc((size_t)ks->nslot, sizeof *ks->slot);
		for (int i = 0; i < ks->n; i++) {
			const int *x = ks->data + ks->off[i];
			unsigned h = keys_hash(x, x[1] + 2) & (unsigned)(ks->nslot - 1);
			while (ks->slot[h])
				h = (h + 1) & (unsigned)(ks->nslot - 1);
			ks->slot[h] = i + 1;
		}
	}
	unsigned h = keys_probe(ks, k, n);
	if (ks->slot[h]) {
		ks->count[ks->slot[h] - 1]++;
		return;
	}
	if (ks->n == ks->cap) {
		ks->cap = ks->cap ? 2 * ks->cap : 64;
		ks->off = xrealloc(ks->off, (size_t)ks->cap * sizeof *ks->off);
		ks->count = xrealloc(ks->count, (size_t)ks->cap * sizeof *ks->count);
	}
	if (!ks->data || ks->len + n > ks->capdata) { /* never NULL: NULL + 0 is undefined */
		ks->capdata = 2 * (ks->len + n) + 256;
		ks->data = xrealloc(ks->data, (size_t)ks->capdata * sizeof *ks->data);
	}
	copy_n(ks->data + ks->len, k, (size_t)n, sizeof *k);
	ks->off[ks->n] = ks->len;
	ks->count[ks->n] = 1;
	ks->len += n;
	ks->slot[h] = ++ks->n;
}

static void
keys_free(Keys *ks)
{
	free(ks->data), free(ks->off), free(ks->count), free(ks->slot);
}

/* The elements fixing node 0, when with the translations they make the
 * whole group (then every element is a translation after one of them). */
static int
stabilizer(const Group *g, const Topo *t, int *fix)
{
	int n = 0;
	for (int e = 0; g->affine && t->kind == TK_TORUS && e < g->order; e++) {
		bool zero = true;
		for (int i = 0; i < t->ndim; i++)
			zero &= g->vec[e * t->ndim + i] == 0;
		if (zero)
			fix[n++] = e;
	}
	return g->affine && (long)n * t->nnode == g->order ? n : 0;
}

/* The key (op, length, links) of base transfer x under the element
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
	key[0] = x->op;
	key[1] = len;
	return len + 2;
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

/*
 * The dependencies of node 0's messages in round r, sorted by key, without
 * repeats. As in explicit_coll, the copy of base transfer x by element e
 * waits for every earlier copy by e of a transfer y of the same tree into
 * x's sender (y.dst == x.src): they deliver the chunk (tree, e). For node
 * 0's messages e = f o (translation by -x.src), f fixing node 0; the copy of
 * y by e leaves node w = e(y.src) with key e(y) translated by -w. A message
 * of node v waits for the translates by v. -1 when a key is not found (the
 * group is not what stabilizer() checked).
 */
static int
round_deps(const Sched *s, const Keys *ks, const int *by_dst, const int *fix, int nfix, int r,
           int *key, Dep **deps, int *ndep, int *cap)
{
	const Topo *t = s->topo;
	*ndep = 0;
	for (int i = 0; i < s->nbase; i++) {
		const BaseXfer *x = &s->base[i];
		if (x->round != r)
			continue;
		int delta[MAX_DIMS], from;
		topo_coords(t, x->src, delta);
		const int *ys = by_dst + by_dst[x->tree * t->nnode + x->src];
		const int *yend = by_dst + by_dst[x->tree * t->nnode + x->src + 1];
		for (int f = 0; f < nfix; f++) {
			int xk = keys_find(&ks[r], key, image_key(s, x, delta, fix[f], key, &from));
			for (const int *y = ys; y < yend; y++) {
				const BaseXfer *by = &s->base[*y];
				if (by->round >= r)
					continue;
				int n = image_key(s, by, delta, fix[f], key, &from);
				Dep d = {xk, by->round, from, keys_find(&ks[by->round], key, n)};
				if (d.key < 0 || d.idx < 0)
					return -1;
				if (*ndep == *cap) {
					*cap = *cap ? 2 * *cap : 256;
					*deps = xrealloc(*deps, (size_t)*cap * sizeof **deps);
				}
				(*deps)[(*ndep)++] = d;
			}
		}
	}
	if (*ndep == 0)
		return 0; /* (and *deps may be NULL, which qsort must not see) */
	qsort(*deps, (size_t)*ndep, sizeof **deps, dep_order);
	int n = 0;
	for (int i = 0; i < *ndep; i++)
		if (n == 0 || dep_order(&(*deps)[n - 1], &(*deps)[i]) != 0)
			(*deps)[n++] = (*deps)[i];
	*ndep = n;
	return 0;
}

/* Offsets into by_dst (then the lists): the base transfers of each (tree,
 * node) into that node, in base order. */
static int *
base_by_dst(const Sched *s)
{
	int nkey = s->ntree * s->topo->nnode;
	int *by = xcalloc((size_t)nkey + 1 + (size_t)s->nbase, sizeof *by);
	for (int i = 0; i < s->nbase; i++)
		by[s->base[i].tree * s->topo->nnode + s->base[i].dst + 1]++;
	by[0] = nkey + 1;
	for (int k = 0; k < nkey; k++)
		by[k + 1] += by[k];
	int *fill = xcalloc((size_t)nkey, sizeof *fill);
	for (int i = 0; i < s->nbase; i++) {
		int k = s->base[i].tree * s->topo->nnode + s->base[i].dst;
		by[by[k] + fill[k]++] = i;
	}
	free(fill);
	return by;
}

static void
translates_coll(Arena *a, const Sched *s, const int *fix, int nfix, SimColl *c)
{
	const Topo *t = s->topo;
	Out o = {.a = a};
	int64_t mult = s->kind == CK_ALLTOALL ? s->nrank : 1;
	int *key = xmalloc(((size_t)t->nnode + 3) * sizeof *key);
	int *links = xmalloc(((size_t)t->nnode + 1) * sizeof *links);
	/* every round's keys first: dependencies point into earlier rounds */
	Keys *ks = xcalloc((size_t)s->nround + 1, sizeof *ks);
	int *first = xcalloc((size_t)s->nround + 1, sizeof *first); /* message index */
	for (int i = 0; i < s->nbase; i++) {
		const BaseXfer *x = &s->base[i];
		int delta[MAX_DIMS], from;
		topo_coords(t, x->src, delta);
		for (int f = 0; f < nfix; f++)
			keys_add(&ks[x->round], key, image_key(s, x, delta, fix[f], key, &from));
	}
	for (int r = 0; r < s->nround; r++)
		first[r + 1] = first[r] + t->nnode * ks[r].n;
	int *by_dst = base_by_dst(s);
	Dep *deps = NULL;
	int ndep = 0, capdep = 0;
	c->has_deps = true;
	for (int r = 0; r < s->nround; r++) {
		if (c->has_deps && round_deps(s, ks, by_dst, fix, nfix, r, key, &deps, &ndep,
		                              &capdep) != 0) {
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
				            .reduce = k[0] == X_REDUCE, .nhop = len, .dep = o.ndep};
				for (; c->has_deps && d < ndep && deps[d].key == i; d++, m.ndep++) {
					const Dep *e = &deps[d];
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
	free(ks), free(first), free(by_dst), free(deps), free(key), free(links);
	finish(&o, c);
}

static int
coll_of_sched(Arena *a, const Sched *s, long expand_limit, SimColl *c)
{
	c->name = s->name;
	c->kind = coll_kind_name[s->kind];
	c->algorithm = s->algorithm;
	c->nrank = s->nrank;
	c->rank_node = s->rank_node;
	c->nround = s->nround;
	if (!s->base) {
		explicit_coll(a, s, c);
		return 0;
	}
	const Group *g = s->group;
	if ((long)s->nbase * g->order <= expand_limit) {
		Arena tmp = {0};
		explicit_coll(a, sched_expand(&tmp, s), c);
		arena_free(&tmp);
		return 0;
	}
	int *fix = xmalloc((size_t)g->order * sizeof *fix);
	int nfix = stabilizer(g, s->topo, fix);
	if (nfix)
		translates_coll(a, s, fix, nfix, c);
	free(fix);
	if (!nfix) {
		error_at(s->loc, "'%s' is too large for the simulator: %ld copies of base transfers "
		         "to expand (at most %ld unless its group holds every translation of a torus)",
		         s->name, (long)s->nbase * g->order, expand_limit);
		return -1;
	}
	return 0;
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
	bool grid = t->kind == TK_MESH || t->kind == TK_TORUS || t->kind == TK_SUPERMESH;
	int64_t ports = 0;
	for (int v = 0; v < t->nnode; v++)
		ports += 1 + (grid && deg[v] < 2 * t->ndim ? 2 * t->ndim : deg[v]);
	free(deg);
	return ports;
}

int
sim_net_of_topo(Arena *a, const Topo *t, SimNet *out)
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
		error_at(t->loc, "the simulator takes an mtu of 1 B to 1 MiB, not %.0f B", t->net.mtu);
		return -1;
	}
	out->router_ps = llround(t->net.router_latency * 1e12);
	out->step_ps = llround(t->net.step_overhead * 1e12);
	out->router_energy_per_bit = t->net.router_energy_per_bit;
	out->port_static_w = t->net.port_static_power;
	out->link_static_w = t->net.link_static_power;
	out->nport = router_ports(t);
	return 0;
}

int
sim_from_scheds(Arena *a, const Sched *const *s, int n, SimNet *out)
{
	return sim_from_scheds_limit(a, s, n, EXPAND_LIMIT, out);
}

int
sim_from_scheds_limit(Arena *a, const Sched *const *s, int n, long expand_limit, SimNet *out)
{
	memset(out, 0, sizeof *out);
	if (n == 0) {
		error_file("no schedule to simulate");
		return -1;
	}
	const Topo *t = s[0]->topo;
	for (int i = 1; i < n; i++)
		if (s[i]->topo != t) {
			error_at(s[i]->loc, "'%s' is on topology '%s' and '%s' on '%s': a .sim file holds "
			         "one topology (choose with --collective)", s[0]->name, t->name, s[i]->name,
			         s[i]->topo->name);
			return -1;
		}
	if (sim_net_of_topo(a, t, out) != 0)
		return -1;
	out->ncoll = n;
	out->coll = arena_array(a, (size_t)n, sizeof *out->coll);
	for (int i = 0; i < n; i++)
		if (coll_of_sched(a, s[i], expand_limit, &out->coll[i]) != 0)
			return -1;
	return 0;
}

static int
emit_sim(const Prog *p, const BuildOpts *o, FILE *f)
{
	const Sched **sel = xmalloc(((size_t)p->nsched + 1) * sizeof *sel);
	int n = backend_select(p, o, sel, p->nsched);
	Arena a = {0};
	SimNet net;
	int rc = sim_from_scheds(&a, sel, n, &net);
	if (rc == 0)
		sim_write(&net, f);
	arena_free(&a);
	free(sel);
	return rc;
}

const Backend sim_backend = {"sim", ".sim", emit_sim};
