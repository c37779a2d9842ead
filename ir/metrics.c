/*
 * metrics.c: the seed's cost model (algorithms.md 0.2) for a message of N
 * bytes. For round s, l_s(e) is the bytes of that round's messages whose
 * route uses link e, and mean_s the average of l_s over all directed links.
 *
 *   S      rounds
 *   Q      sum over rounds of max_e l_s(e)
 *   volume sum of message sizes (each logical send once), bytes
 *   psi    volume / the minimum: 2N(p-1) for allreduce, N(p-1) for the rest
 *   theta  sum of size x route length / volume
 *   omega  sum_s max_e l_s(e) / sum_s mean_s
 *   time   alpha S + beta Q, alpha = step_overhead + link_latency +
 *          router_latency, beta = 8 / bandwidth (seconds per byte)
 *
 * A symmetric schedule is measured without expanding it: a base transfer
 * over link l' puts |G| / |orbit(l')| chunks on every link of l''s orbit,
 * and the messages of a round are the orbits of the base (sender,
 * receiver) pairs.
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

static void
finish(const Sched *s, double bytes, double vol, double phys, double q, double mean_sum,
       Metrics *m)
{
	const Net *n = &s->topo->net;
	m->rounds = s->nround;
	m->volume = vol;
	m->psi = vol / min_volume(s, bytes);
	m->theta = vol > 0 ? phys / vol : 1;
	m->omega = mean_sum > 0 ? q / mean_sum : 1;
	double alpha = n->step_overhead + n->link_latency + n->router_latency;
	m->model_time = alpha * m->rounds + q * 8 / n->bandwidth;
}

static void
explicit_metrics(const Sched *s, double bytes, Metrics *m)
{
	const Topo *t = s->topo;
	double chunk = bytes / s->nchunk;
	double *load = calloc((size_t)t->nlink, sizeof *load);
	if (!load)
		die("out of memory");
	double vol = 0, phys = 0, q = 0, mean_sum = 0;
	for (int i = 0; i < s->nmsg;) {
		int round = s->msg[i].round, j = i;
		double total = 0;
		for (; j < s->nmsg && s->msg[j].round == round; j++) {
			const Msg *msg = &s->msg[j];
			double size = msg->n * chunk;
			int len = sched_route_len(s, msg->route);
			const int *l = s->route_link + s->route_off[msg->route];
			vol += size;
			phys += size * len;
			total += size * len;
			for (int k = 0; k < len; k++)
				load[l[k]] += size;
		}
		double max = 0;
		for (int k = 0; k < t->nlink; k++) {
			if (load[k] > max)
				max = load[k];
			load[k] = 0;
		}
		q += max;
		mean_sum += total / t->nlink;
		i = j;
	}
	free(load);
	m->messages = s->nmsg;
	m->by_symmetry = false;
	finish(s, bytes, vol, phys, q, mean_sum, m);
}

/* ---- messages of a symmetric schedule ---- */

/* Whether the group holds every translation (then orbits of pairs are
 * orbits of differences under the linear parts). */
static int
linear_parts(const Group *g, int **mats)
{
	int d = g->topo->ndim, n = 0;
	*mats = malloc((size_t)g->order * (size_t)(d * d) * sizeof **mats);
	for (int e = 0; e < g->order; e++) {
		const int *m = g->mat + e * d * d;
		bool seen = false;
		for (int k = 0; k < n && !seen; k++)
			seen = memcmp(*mats + k * d * d, m, (size_t)(d * d) * sizeof *m) == 0;
		if (!seen)
			memcpy(*mats + (n++) * d * d, m, (size_t)(d * d) * sizeof *m);
	}
	return n;
}

static int
apply_linear(const Topo *t, const int *mat, int delta_node)
{
	int x[MAX_DIMS], y[MAX_DIMS], d = t->ndim;
	topo_coords(t, delta_node, x);
	for (int i = 0; i < d; i++) {
		long v = 0;
		for (int j = 0; j < d; j++)
			v += (long)mat[i * d + j] * x[j];
		y[i] = (int)(((v % t->size[i]) + t->size[i]) % t->size[i]);
	}
	return topo_node(t, y);
}

static int
difference(const Topo *t, int u, int v)
{
	int a[MAX_DIMS], b[MAX_DIMS];
	topo_coords(t, u, a);
	topo_coords(t, v, b);
	for (int i = 0; i < t->ndim; i++)
		b[i] -= a[i];
	return topo_node(t, b);
}

static long
symmetric_messages(const Sched *s)
{
	const Group *g = s->group;
	const Topo *t = s->topo;
	int *mats = NULL, nmat = g->affine ? linear_parts(g, &mats) : 0;
	bool fast = g->affine && (long)nmat * t->nnode == g->order;
	long total = 0;
	unsigned char *seen = NULL;
	long nseen = fast ? t->nnode : (long)t->nnode * t->nnode;
	seen = calloc((size_t)nseen, 1);
	if (!seen)
		die("out of memory");
	for (int r = 0; r < s->nround; r++) {
		memset(seen, 0, (size_t)nseen);
		for (int i = 0; i < s->nbase; i++) {
			const BaseXfer *x = &s->base[i];
			if (x->round != r)
				continue;
			if (fast) {
				/* the orbit of (u, v) is every (w, w + A (v - u)) */
				int delta = difference(t, x->src, x->dst);
				if (seen[delta])
					continue;
				for (int k = 0; k < nmat; k++) {
					int image = apply_linear(t, mats + k * t->ndim * t->ndim, delta);
					if (!seen[image]) {
						seen[image] = 1;
						total += t->nnode;
					}
				}
			} else {
				for (int e = 0; e < g->order; e++) {
					long key = (long)group_node(g, e, x->src) * t->nnode +
					           group_node(g, e, x->dst);
					if (!seen[key]) {
						seen[key] = 1;
						total++;
					}
				}
			}
		}
	}
	free(seen);
	free(mats);
	return total;
}

static void
symmetric_metrics(const Sched *s, double bytes, Metrics *m)
{
	const Group *g = s->group;
	const Topo *t = s->topo;
	double chunk = bytes / s->nchunk;
	double *orbit_load = calloc((size_t)g->nlink_orbits, sizeof *orbit_load);
	if (!orbit_load)
		die("out of memory");
	double vol = 0, phys = 0, q = 0, mean_sum = 0;
	for (int r = 0; r < s->nround; r++) {
		double total = 0;
		memset(orbit_load, 0, (size_t)g->nlink_orbits * sizeof *orbit_load);
		for (int i = 0; i < s->nbase; i++) {
			const BaseXfer *x = &s->base[i];
			if (x->round != r)
				continue;
			int len = sched_route_len(s, x->route);
			const int *l = s->route_link + s->route_off[x->route];
			vol += g->order * chunk;
			phys += (double)g->order * len * chunk;
			total += (double)g->order * len * chunk;
			for (int k = 0; k < len; k++) {
				int o = g->link_orbit[l[k]];
				orbit_load[o] += (double)g->order / g->orbit_size[o] * chunk;
			}
		}
		double max = 0;
		for (int o = 0; o < g->nlink_orbits; o++)
			if (orbit_load[o] > max)
				max = orbit_load[o];
		q += max;
		mean_sum += total / t->nlink;
	}
	free(orbit_load);
	m->messages = symmetric_messages(s);
	m->by_symmetry = true;
	finish(s, bytes, vol, phys, q, mean_sum, m);
}

void
metrics(const Sched *s, double bytes, Metrics *m)
{
	memset(m, 0, sizeof *m);
	if (!s->base)
		explicit_metrics(s, bytes, m);
	else
		symmetric_metrics(s, bytes, m);
}
