/*
 * sim.c: the IR as the simulator's input, and `build --target sim` (the
 * .sim text, docs/sim.md). Explicit schedules convert message by message,
 * with dependencies derived from the chunks. Symmetric ones are expanded
 * when that is small; otherwise, when the group holds every translation,
 * the messages are the translates of those leaving node 0 (no chunk lists,
 * so 64x64 SP fits), and their dependencies are not derived.
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
	unsigned h = keys_hash(k, n) & (unsigned)(ks->nslot - 1);
	for (; ks->slot[h]; h = (h + 1) & (unsigned)(ks->nslot - 1)) {
		const int *x = ks->data + ks->off[ks->slot[h] - 1];
		if (x[1] + 2 == n && memcmp(x, k, (size_t)n * sizeof *k) == 0) {
			ks->count[ks->slot[h] - 1]++;
			return;
		}
	}
	if (ks->n == ks->cap) {
		ks->cap = ks->cap ? 2 * ks->cap : 64;
		ks->off = xrealloc(ks->off, (size_t)ks->cap * sizeof *ks->off);
		ks->count = xrealloc(ks->count, (size_t)ks->cap * sizeof *ks->count);
	}
	if (ks->len + n > ks->capdata) {
		ks->capdata = 2 * (ks->len + n) + 256;
		ks->data = xrealloc(ks->data, (size_t)ks->capdata * sizeof *ks->data);
	}
	memcpy(ks->data + ks->len, k, (size_t)n * sizeof *k);
	ks->off[ks->n] = ks->len;
	ks->count[ks->n] = 1;
	ks->len += n;
	ks->slot[h] = ++ks->n;
}

static void
keys_clear(Keys *ks)
{
	if (ks->slot)
		memset(ks->slot, 0, (size_t)ks->nslot * sizeof *ks->slot);
	ks->n = ks->len = 0;
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

static void
translates_coll(Arena *a, const Sched *s, const int *fix, int nfix, SimColl *c)
{
	const Topo *t = s->topo;
	const Group *g = s->group;
	Out o = {.a = a};
	int64_t mult = s->kind == CK_ALLTOALL ? s->nrank : 1;
	int *key = xmalloc(((size_t)t->nnode + 3) * sizeof *key);
	int *moved = xmalloc(((size_t)t->nnode + 1) * sizeof *moved);
	int *links = xmalloc(((size_t)t->nnode + 1) * sizeof *links);
	Keys ks = {0};
	for (int r = 0; r < s->nround; r++) {
		keys_clear(&ks);
		for (int i = 0; i < s->nbase; i++) {
			const BaseXfer *x = &s->base[i];
			if (x->round != r)
				continue;
			int len = sched_route_len(s, x->route);
			int delta[MAX_DIMS];
			topo_coords(t, x->src, delta);
			translate_route(t, s->route_link + s->route_off[x->route], moved, len, delta, -1);
			key[0] = x->op;
			key[1] = len;
			for (int f = 0; f < nfix; f++) {
				for (int k = 0; k < len; k++)
					key[k + 2] = group_link(g, fix[f], moved[k]);
				keys_add(&ks, key, len + 2);
			}
		}
		for (int v = 0; v < t->nnode; v++) {
			int delta[MAX_DIMS];
			topo_coords(t, v, delta);
			for (int i = 0; i < ks.n; i++) {
				const int *k = ks.data + ks.off[i];
				int len = k[1];
				translate_route(t, k + 2, links, len, delta, +1);
				SimMsg m = {.round = r, .src = s->node_rank[v],
				            .dst = s->node_rank[len ? t->link[links[len - 1]].dst : v],
				            .num = (int64_t)ks.count[i] * mult, .den = s->nchunk,
				            .reduce = k[0] == X_REDUCE, .nhop = len};
				add_msg(&o, m, links);
			}
		}
	}
	free(ks.data), free(ks.off), free(ks.count), free(ks.slot);
	free(key), free(moved), free(links);
	c->has_deps = false;
	finish(&o, c);
}

static int
coll_of_sched(Arena *a, const Sched *s, SimColl *c)
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
	if ((long)s->nbase * g->order <= EXPAND_LIMIT) {
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
		         "to expand (at most %d unless its group holds every translation of a torus)",
		         s->name, (long)s->nbase * g->order, EXPAND_LIMIT);
		return -1;
	}
	return 0;
}

int
sim_from_scheds(Arena *a, const Sched *const *s, int n, SimNet *out)
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
	out->ncoll = n;
	out->coll = arena_array(a, (size_t)n, sizeof *out->coll);
	for (int i = 0; i < n; i++)
		if (coll_of_sched(a, s[i], &out->coll[i]) != 0)
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
