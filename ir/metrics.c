/*
 * metrics.c: the seed's metrics (algorithms.md 0.2) and the cost model
 * (docs/ir.md 7) for a message of N bytes. For round s, l_s(e) is the bytes
 * of that round's messages whose route uses link e, and mean_s the average
 * of l_s over all directed links.
 *
 *   S      rounds
 *   Q      sum over rounds of max_e l_s(e)
 *   volume sum of message sizes (each logical send once), bytes
 *   psi    volume / the minimum: 2N(p-1) for allreduce, N(p-1) for the rest
 *          (alltoall: every rank holds N, p blocks of N/p)
 *   theta  sum of size x route length / volume
 *   omega  sum_s max_e l_s(e) / sum_s mean_s
 *   time   sum over rounds of o + max over the round's routes of their
 *          latency (each hop: its link's latency + router_latency) +
 *          max_e 8 l_s(e) / bandwidth(e), the link's own bandwidth: the
 *          flow simulator's round when its busiest link sets the pace
 *          (exact for a round without contention). An empty round costs o.
 *
 * Needs: a built schedule (explicit, symmetric or rank form) on a topology
 * whose links carry their bandwidth and latency (topo.c). Establishes: the
 * Metrics, nothing else changed.
 *
 * A symmetric schedule is measured without expanding it: a base transfer
 * over link l' puts |G| / |orbit(l')| chunks on every link of l''s orbit,
 * and the messages of a round are the orbits of the base (sender,
 * receiver) pairs. An orbit's bandwidth is its slowest link's, its latency
 * its slowest link's (equal when the group preserves the links' values).
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

static double
min_volume(const Sched *s, double bytes)
{
	double p = s->nrank;
	return (s->kind == CK_ALLREDUCE ? 2 : 1) * bytes * (p - 1);
}

/* Per link (or per orbit): seconds per byte and the latency of a hop. */
typedef struct LinkCost {
	double *beta; /* 8 / bandwidth */
	double *hop;  /* latency + router_latency */
} LinkCost;

/* The links' costs, or (orbit non-NULL) each of norbit orbits' slowest. */
static LinkCost
link_cost(const Topo *t, const int *orbit, int norbit)
{
	int n = orbit ? norbit : t->nlink;
	LinkCost c = {xcalloc((size_t)n + 1, sizeof *c.beta), xcalloc((size_t)n + 1, sizeof *c.hop)};
	for (int l = 0; l < t->nlink; l++) {
		int i = orbit ? orbit[l] : l;
		double beta = 8 / t->link[l].bandwidth, hop = t->link[l].latency + t->net.router_latency;
		c.beta[i] = beta > c.beta[i] ? beta : c.beta[i];
		c.hop[i] = hop > c.hop[i] ? hop : c.hop[i];
	}
	return c;
}

static void
link_cost_free(LinkCost *c)
{
	free(c->beta), free(c->hop);
}

/* A route's latency: its hops' (orbit: the links' orbits, else NULL). */
static double
route_latency(const LinkCost *c, const int *l, int len, const int *orbit)
{
	double lat = 0;
	for (int k = 0; k < len; k++)
		lat += c->hop[orbit ? orbit[l[k]] : l[k]];
	return lat;
}

/* time: the rounds' sum of their latency and busiest link's time, without
 * the step overhead (finish adds o for every round, empty ones too). */
static void
finish(const Sched *s, double bytes, double vol, double phys, double q, double mean_sum,
       double time, Metrics *m)
{
	const Net *n = &s->topo->net;
	m->rounds = s->nround;
	m->volume = vol;
	m->psi = vol / min_volume(s, bytes);
	m->theta = vol > 0 ? phys / vol : 1;
	m->omega = mean_sum > 0 ? q / mean_sum : 1;
	m->model_time = n->step_overhead * m->rounds + time + sched_nreconfig(s) * n->reconfig_delay;
}

/* Bytes per chunk: the chunks cut one vector of N bytes, except in an
 * alltoall, where they cut every rank's N (p blocks of N/p each). */
static double
chunk_bytes(const Sched *s, double bytes)
{
	return bytes / s->nchunk * (s->kind == CK_ALLTOALL ? s->nrank : 1);
}

static void
explicit_metrics(const Sched *s, double bytes, Metrics *m)
{
	const Topo *t = s->topo;
	double chunk = chunk_bytes(s, bytes);
	double *load = xcalloc((size_t)t->nlink, sizeof *load);
	/* the links a round loads, so that a round costs its messages, not
	 * every link (a chain on ring(100000): 1e5 rounds x 2e5 links) */
	int *touched = xmalloc(((size_t)t->nlink + 1) * sizeof *touched);
	LinkCost c = link_cost(t, NULL, 0);
	int *fused = s->nfuse ? xmalloc((size_t)fuse_links_max(s) * sizeof *fused) : NULL;
	double vol = 0, phys = 0, q = 0, mean_sum = 0, time = 0;
	for (int i = 0; i < s->nmsg;) {
		int ntouched = 0;
		int round = s->msg[i].round, j = i;
		double total = 0, lat = 0;
		for (; j < s->nmsg && s->msg[j].round == round; j++) {
			const Msg *msg = &s->msg[j];
			double size = msg->n * chunk;
			int len = sched_route_len(s, msg->route);
			const int *l = s->route_link + s->route_off[msg->route];
			vol += size;
			phys += size * len;
			total += size * len;
			double rl = route_latency(&c, l, len, NULL);
			lat = rl > lat ? rl : lat;
			if (msg->fuse) { /* an in-network operation loads its links once */
				if (s->fuse[msg->fuse - 1].leader != j)
					continue;
				len = fuse_links(s, msg->fuse - 1, fused);
				l = fused;
			}
			for (int k = 0; k < len; k++) {
				if (load[l[k]] == 0 && size > 0)
					touched[ntouched++] = l[k];
				load[l[k]] += size;
			}
		}
		double max = 0, busiest = 0;
		for (int k = 0; k < ntouched; k++) {
			int e = touched[k];
			max = load[e] > max ? load[e] : max;
			busiest = load[e] * c.beta[e] > busiest ? load[e] * c.beta[e] : busiest;
			load[e] = 0;
		}
		q += max;
		time += lat + busiest;
		mean_sum += total / t->nlink;
		i = j;
	}
	free(load);
	free(touched);
	free(fused);
	link_cost_free(&c);
	m->messages = s->nmsg;
	m->by_symmetry = false;
	finish(s, bytes, vol, phys, q, mean_sum, time, m);
}

/* ---- messages of a symmetric schedule ---- */

/* The base transfers by round (a counting sort, in base order within a
 * round): a pass over the rounds then costs the transfers once, not rounds
 * x transfers (SP on torus(1024, 1024): 2048 rounds x 2M base transfers). */
void
base_rounds(const Sched *s, BaseRounds *br)
{
	int *f = xcalloc((size_t)s->nround + 2, sizeof *f);
	int *x = xmalloc(((size_t)s->nbase + 1) * sizeof *x);
	for (int i = 0; i < s->nbase; i++)
		f[s->base[i].round + 1]++;
	for (int r = 0; r < s->nround; r++)
		f[r + 1] += f[r];
	int *at = xmalloc(((size_t)s->nround + 1) * sizeof *at);
	memcpy(at, f, (size_t)s->nround * sizeof *at);
	for (int i = 0; i < s->nbase; i++)
		x[at[s->base[i].round]++] = i;
	free(at);
	br->first = f;
	br->idx = x;
}

/* A set of int sequences (message keys): the keys back to back, each
 * prefixed by its length, and an index of them by value. */
typedef struct KeySet {
	int *data;
	size_t len, cap;
	size_t *off;      /* key i at data + off[i] */
	int n, capoff;
	Hash index;
} KeySet;

static bool
key_is(const void *ctx, int i, const void *key)
{
	const KeySet *ks = ctx;
	const HashInts *q = key;
	const int *x = ks->data + ks->off[i];
	return x[0] == q->n && memcmp(x + 1, q->k, (size_t)q->n * sizeof *q->k) == 0;
}

static unsigned
key_hash(const void *ctx, int i)
{
	const KeySet *ks = ctx;
	const int *x = ks->data + ks->off[i];
	return hash_ints(x + 1, (size_t)x[0]);
}

/* Adds a key; returns whether it was new. */
static bool
key_add(KeySet *ks, const int *k, int n)
{
	unsigned h = hash_ints(k, (size_t)n);
	if (hash_find(&ks->index, h, &(HashInts){k, n}, key_is, ks) >= 0)
		return false;
	if (ks->len + (size_t)n + 1 > ks->cap) {
		ks->cap = 2 * (ks->len + (size_t)n + 1) + 1024;
		ks->data = xrealloc(ks->data, ks->cap * sizeof *ks->data);
	}
	if (ks->n == ks->capoff) {
		ks->capoff = ks->capoff ? 2 * ks->capoff : 256;
		ks->off = xrealloc(ks->off, (size_t)ks->capoff * sizeof *ks->off);
	}
	ks->data[ks->len] = n;
	copy_n(ks->data + ks->len + 1, k, (size_t)n, sizeof *k);
	ks->off[ks->n] = ks->len;
	ks->len += (size_t)n + 1;
	hash_add(&ks->index, h, ks->n++, key_hash, ks);
	return true;
}

static void
key_clear(KeySet *ks)
{
	hash_clear(&ks->index);
	ks->len = 0;
	ks->n = 0;
}

/* The translation by -delta of node v. */
static int
shift(const Topo *t, int v, const int *delta)
{
	int c[MAX_DIMS];
	topo_coords(t, v, c);
	for (int i = 0; i < t->ndim; i++)
		c[i] -= delta[i];
	return topo_node(t, c);
}

/* Whether round r's base transfers share one (operation, instance): then
 * a route alone keys its messages. Segments (symm.c) mix them. */
static bool
round_uniform(const Sched *s, const BaseRounds *br, int r)
{
	for (int j = br->first[r] + 1; j < br->first[r + 1]; j++) {
		const BaseXfer *a = &s->base[br->idx[br->first[r]]], *b = &s->base[br->idx[j]];
		if (a->op != b->op || a->instance != b->instance)
			return false;
	}
	return true;
}

/*
 * Messages are distinct (round, sender, receiver, route, operation,
 * instance) among all copies, as sched_end packs them. When the group
 * holds every translation, a message is a translate of one that leaves
 * node 0, so the count is nnode times the number of distinct routes from
 * node 0 (with their operation and instance where a round mixes them)
 * among the images of the base routes under the elements that fix 0.
 * Otherwise every copy is enumerated.
 */
static long
symmetric_messages(const Sched *s)
{
	const Group *g = s->group;
	const Topo *t = s->topo;
	int d = t->ndim;
	int nfix = 0, *fix = xmalloc((size_t)g->order * sizeof *fix);
	for (int e = 0; g->affine && e < g->order; e++) {
		bool zero = true;
		for (int i = 0; i < d; i++)
			zero &= g->vec[e * d + i] == 0;
		if (zero)
			fix[nfix++] = e;
	}
	/* the shortcut needs every translation in the group: the unit ones suffice */
	bool fast = g->affine && (long)nfix * t->nnode == g->order;
	for (int i = 0; fast && i < d; i++) {
		bool found = false;
		for (int e = 0; e < g->order && !found; e++) {
			found = true;
			for (int a = 0; a < d && found; a++) {
				found = g->vec[e * d + a] == (a == i ? 1 % t->size[a] : 0);
				for (int b = 0; b < d && found; b++)
					found = g->mat[e * d * d + a * d + b] == (a == b ? 1 % t->size[a] : 0);
			}
		}
		fast = found;
	}
	int *key = xmalloc(((size_t)t->nnode + 4) * sizeof *key);
	int *moved = xmalloc(((size_t)t->nnode + 2) * sizeof *moved);
	int *stamp = fast ? xcalloc((size_t)t->nlink + 1, sizeof *stamp) : NULL;
	int *seen = fast ? xcalloc((size_t)t->nlink + 1, sizeof *seen) : NULL;
	KeySet ks = {0};
	long total = 0;
	BaseRounds br;
	base_rounds(s, &br);
	for (int r = 0; r < s->nround; r++) {
		key_clear(&ks);
		bool uniform = round_uniform(s, &br, r);
		for (int j = br.first[r]; j < br.first[r + 1]; j++) {
			const BaseXfer *x = &s->base[br.idx[j]];
			int len = sched_route_len(s, x->route);
			const int *l = s->route_link + s->route_off[x->route];
			if (fast) {
				/* the base route moved to start at node 0 */
				int delta[MAX_DIMS];
				topo_coords(t, x->src, delta);
				for (int k = 0; k < len; k++) {
					const Link *lk = &t->link[l[k]];
					moved[k] = topo_find_link(t, shift(t, lk->src, delta),
					                          shift(t, lk->dst, delta), lk->copy);
				}
				/* a one-hop route moved onto a link already seen this round
				 * has its images counted */
				bool hop = len == 1 && uniform;
				if (hop && seen[moved[0]] == r + 1)
					continue;
				if (hop)
					seen[moved[0]] = r + 1;
				int pre = uniform ? 0 : 2; /* the operation and instance, where they differ */
				key[0] = (int)x->op, key[1] = x->instance;
				for (int f = 0; f < nfix; f++) {
					for (int k = 0; k < len; k++)
						key[pre + k] = group_link(g, fix[f], moved[k]);
					/* a one-hop route is its link: a stamp, not a hashed key */
					bool added = hop ? stamp[key[0]] != r + 1 : key_add(&ks, key, pre + len);
					if (hop)
						stamp[key[0]] = r + 1;
					if (added)
						total += t->nnode;
				}
			} else {
				for (int e = 0; e < g->order; e++) {
					key[0] = group_node(g, e, x->src);
					key[1] = group_node(g, e, x->dst);
					key[2] = (int)x->op, key[3] = x->instance;
					for (int k = 0; k < len; k++)
						key[k + 4] = group_link(g, e, l[k]);
					total += key_add(&ks, key, len + 4);
				}
			}
		}
	}
	free(ks.data), free(ks.off), free(key), free(moved), free(fix), free(stamp), free(seen);
	base_rounds_free(&br);
	hash_free(&ks.index);
	return total;
}

void
base_rounds_free(BaseRounds *br)
{
	free(br->first), free(br->idx);
	*br = (BaseRounds){0};
}

/* Element g carries link l' to g(l'), and the elements that carry l' to a
 * given link l of its orbit are a coset of l''s stabilizer: |G| / |orbit|
 * of them. So the copies of a base transfer over l' put |G| / |orbit(l')|
 * chunks on every link of the orbit, and none elsewhere. */
long
sym_round_loads(const Sched *s, const BaseRounds *br, int round, long *orbit_load)
{
	memset(orbit_load, 0, (size_t)s->group->nlink_orbits * sizeof *orbit_load);
	return sym_round_loads_sparse(s, br, round, orbit_load, NULL, NULL);
}

/* As sym_round_loads, adding to orbit_load as it is (zero where the caller
 * wants a round's own loads) and listing in touched[] (when given) each
 * orbit it made non-zero: a round costs its transfers' hops, not the
 * orbits, so a long chain of rounds stays linear. */
long
sym_round_loads_sparse(const Sched *s, const BaseRounds *br, int round, long *orbit_load,
                       int *touched, int *ntouched)
{
	const Group *g = s->group;
	long total = 0;
	for (int j = br->first[round]; j < br->first[round + 1]; j++) {
		const BaseXfer *x = &s->base[br->idx[j]];
		int len = sched_route_len(s, x->route);
		const int *l = s->route_link + s->route_off[x->route];
		total += (long)g->order * len;
		for (int k = 0; k < len; k++) {
			int o = g->link_orbit[l[k]];
			if (touched && orbit_load[o] == 0)
				touched[(*ntouched)++] = o;
			orbit_load[o] += g->order / g->orbit_size[o];
		}
	}
	return total;
}

static void
symmetric_metrics(const Sched *s, double bytes, Metrics *m)
{
	const Group *g = s->group;
	const Topo *t = s->topo;
	double chunk = chunk_bytes(s, bytes);
	long *orbit_load = xcalloc((size_t)g->nlink_orbits, sizeof *orbit_load);
	int *touched = xmalloc(((size_t)g->nlink_orbits + 1) * sizeof *touched);
	LinkCost c = link_cost(t, g->link_orbit, g->nlink_orbits);
	BaseRounds br;
	base_rounds(s, &br);
	double vol = 0, phys = 0, q = 0, mean_sum = 0, time = 0;
	for (int r = 0; r < s->nround; r++) {
		int nt = 0;
		double total = (double)sym_round_loads_sparse(s, &br, r, orbit_load, touched, &nt) * chunk;
		vol += (double)g->order * (br.first[r + 1] - br.first[r]) * chunk;
		phys += total;
		double lat = 0; /* the copies' routes are the base's images: their orbits' hops */
		for (int j = br.first[r]; j < br.first[r + 1]; j++) {
			const BaseXfer *x = &s->base[br.idx[j]];
			double rl = route_latency(&c, s->route_link + s->route_off[x->route],
			                          sched_route_len(s, x->route), g->link_orbit);
			lat = rl > lat ? rl : lat;
		}
		long max = 0;
		double busiest = 0;
		for (int i = 0; i < nt; i++) { /* the round's orbits, then zero again */
			int o = touched[i];
			max = orbit_load[o] > max ? orbit_load[o] : max;
			double bt = (double)orbit_load[o] * chunk * c.beta[o];
			busiest = bt > busiest ? bt : busiest;
			orbit_load[o] = 0;
		}
		q += (double)max * chunk;
		time += lat + busiest;
		mean_sum += total / t->nlink;
	}
	free(orbit_load), free(touched);
	link_cost_free(&c);
	base_rounds_free(&br);
	m->messages = symmetric_messages(s);
	m->by_symmetry = true;
	finish(s, bytes, vol, phys, q, mean_sum, time, m);
}

/* The rank form: each round's messages, rank 0's with destinations XOR v
 * for every rank v, routed as they are sent (route_uncached), their link
 * loads a round at a time. */
static void
rank_metrics(const Sched *s, double bytes, Metrics *m)
{
	const Topo *t = s->topo;
	double chunk = chunk_bytes(s, bytes);
	RankKey *key;
	int *first;
	rank_form_keys(s, &key, &first);
	double *load = xcalloc((size_t)t->nlink + 1, sizeof *load);
	LinkCost c = link_cost(t, NULL, 0);
	double vol = 0, phys = 0, q = 0, mean_sum = 0, time = 0;
	for (int r = 0; r < s->nround; r++) {
		double total = 0, lat = 0;
		memset(load, 0, (size_t)t->nlink * sizeof *load);
		for (int i = first[r]; i < first[r + 1]; i++)
			for (int v = 0; v < s->nrank; v++) {
				const int *l;
				int len = route_uncached(s->xor_routes, s->rank_node[v],
				                         s->rank_node[v ^ key[i].dst], &l);
				double b = key[i].count * chunk;
				vol += b;
				phys += len * b;
				total += len * b;
				double rl = route_latency(&c, l, len, NULL);
				lat = rl > lat ? rl : lat;
				for (int k = 0; k < len; k++)
					load[l[k]] += b;
			}
		double max = 0, busiest = 0;
		for (int l = 0; l < t->nlink; l++) {
			max = load[l] > max ? load[l] : max;
			busiest = load[l] * c.beta[l] > busiest ? load[l] * c.beta[l] : busiest;
		}
		q += max;
		time += lat + busiest;
		mean_sum += total / t->nlink;
	}
	m->messages = (long)first[s->nround] * s->nrank;
	m->by_symmetry = true;
	free(load), free(key), free(first);
	link_cost_free(&c);
	finish(s, bytes, vol, phys, q, mean_sum, time, m);
}

/* Base round b's messages added to (sign +1) or taken from (-1) the
 * window's loads, in chunks (integers: a window moves without rounding). */
static void
window_add(const Sched *s, const int *first, int b, long sign, long *load, bool *used)
{
	for (int i = first[b]; i < first[b + 1]; i++) {
		const Msg *msg = &s->msg[i];
		int len = sched_route_len(s, msg->route);
		const int *l = s->route_link + s->route_off[msg->route];
		for (int k = 0; k < len; k++) {
			load[l[k]] += sign * msg->n;
			used[l[k]] = true;
		}
	}
}

/* The repeated form (repeat.c) without listing it: round r holds base
 * rounds r - M + 1 .. r, so its loads are a window's sum, kept as the
 * window moves (a base round in, one out); volume and hops are M times
 * segment 0's. Each round's figures are the listed form's. */
static void
repeated_metrics(const Sched *s, double bytes, Metrics *m)
{
	const Topo *t = s->topo;
	int M = s->repeat, nb = s->nround - M + 1;
	double chunk = chunk_bytes(s, bytes);
	int *first = sched_repeat_rounds(s);
	long *load = xcalloc((size_t)t->nlink + 1, sizeof *load);
	bool *used = xcalloc((size_t)t->nlink + 1, sizeof *used);
	int *active = xmalloc(((size_t)t->nlink + 1) * sizeof *active), nactive = 0;
	double *lat = xcalloc((size_t)nb + 1, sizeof *lat);
	LinkCost c = link_cost(t, NULL, 0);
	double vol = 0, phys = 0;
	for (int i = 0; i < s->nmsg; i++) {
		const Msg *msg = &s->msg[i];
		int len = sched_route_len(s, msg->route);
		double rl = route_latency(&c, s->route_link + s->route_off[msg->route], len, NULL);
		lat[msg->round] = rl > lat[msg->round] ? rl : lat[msg->round];
		vol += msg->n * chunk;
		phys += msg->n * chunk * len;
	}
	double q = 0, time = 0;
	for (int r = 0; r < s->nround; r++) {
		if (r < nb) { /* the links ever loaded, listed again as a base round comes in */
			window_add(s, first, r, 1, load, used);
			nactive = 0;
			for (int l = 0; l < t->nlink; l++)
				if (used[l])
					active[nactive++] = l;
		}
		if (r - M >= 0)
			window_add(s, first, r - M, -1, load, used);
		double max = 0, busiest = 0, rl = 0;
		for (int k = 0; k < nactive; k++) {
			int e = active[k];
			double b = (double)load[e] * chunk;
			max = b > max ? b : max;
			busiest = b * c.beta[e] > busiest ? b * c.beta[e] : busiest;
		}
		for (int b = r - M + 1 > 0 ? r - M + 1 : 0; b <= r && b < nb; b++)
			rl = lat[b] > rl ? lat[b] : rl;
		q += max;
		time += rl + busiest;
	}
	free(first), free(load), free(used), free(active), free(lat);
	link_cost_free(&c);
	m->messages = (long)s->nmsg * M;
	m->by_symmetry = false;
	finish(s, bytes, vol * M, phys * M, q, phys * M / t->nlink, time, m);
}

void
metrics(const Sched *s, double bytes, Metrics *m)
{
	memset(m, 0, sizeof *m);
	if (s->repeat > 1)
		repeated_metrics(s, bytes, m);
	else if (!s->base)
		explicit_metrics(s, bytes, m);
	else if (s->xor_routes)
		rank_metrics(s, bytes, m);
	else
		symmetric_metrics(s, bytes, m);
}
