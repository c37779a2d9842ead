/*
 * optical.c: the circuit configurations of an optical ring (ir.h has the
 * model): routes on a configuration, and the check that a schedule's
 * phases are valid and that every message runs on circuits in force in its
 * round.
 *
 * Needs: a topology built by topo_optical_ring (its switchable circuits
 * listed); establishes, for verify: every configuration is a permutation of
 * the blocks (directed cycles, under the one port pair per block), phases
 * start at round 0 in increasing order, and each message's route uses only
 * electrical links and the circuits (forward, or reverse fibers) of the
 * configuration of its round.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

int
optical_block(const Topo *t)
{
	int n = t->nnode, ports = t->variant > 0 ? t->variant : 2 * n;
	return (2 * n + ports - 1) / ports;
}

int
optical_nblock(const Topo *t)
{
	int b = optical_block(t);
	return (t->nnode + b - 1) / b;
}

static int
first_of(const Topo *t, int block)
{
	return block * optical_block(t);
}

static int
last_of(const Topo *t, int block)
{
	int v = (block + 1) * optical_block(t) - 1;
	return v < t->nnode ? v : t->nnode - 1;
}

/* The circuit link src -> dst in direction dir (+1 forward, -1 reverse). */
static int
circuit_link(const Topo *t, int src, int dst, int dir)
{
	for (int i = t->out[src]; i < t->out[src + 1]; i++)
		if (t->link[i].dst == dst && t->link[i].dim >= 0 && t->link[i].dir == dir)
			return i;
	return -1;
}

/* The electrical link v -> v + step (step +1 or -1) inside a block. */
static int
electrical_link(const Topo *t, int v, int step)
{
	for (int i = t->out[v]; i < t->out[v + 1]; i++)
		if (t->link[i].dim == -1 && t->link[i].dir == step)
			return i;
	return -1;
}

/* Walks electrically from *at to `to` inside one block; false if a link is missing. */
static bool
walk_block(const Topo *t, int *at, int to, int *links, int *len)
{
	while (*at != to) {
		int step = to > *at ? 1 : -1, l = electrical_link(t, *at, step);
		if (l < 0)
			return false;
		links[(*len)++] = l;
		*at += step;
	}
	return true;
}

int
optical_route(const Topo *t, const int *next, bool reverse, int src, int dst, int *links)
{
	int B = optical_block(t), nb = optical_nblock(t), len = 0, at = src;
	/* each block is entered once at most, so nb - 1 circuits reach any
	 * block of src's cycle; a further one only goes round the cycle again
	 * (and would write past the n + nblock hops the caller has room for) */
	for (int circuits = 0; circuits < nb; circuits++) {
		int b = at / B;
		if (b == dst / B)
			return walk_block(t, &at, dst, links, &len) ? len : -1;
		int exit = reverse ? first_of(t, b) : last_of(t, b), to = -1, entry = -1;
		if (!reverse) {
			to = next[b];
			entry = first_of(t, to);
		} else {
			for (int c = 0; c < nb && to < 0; c++)
				if (next[c] == b)
					to = c;
			entry = to < 0 ? -1 : last_of(t, to);
		}
		if (to < 0 || !walk_block(t, &at, exit, links, &len))
			return -1;
		int l = circuit_link(t, exit, entry, reverse ? -1 : +1);
		if (l < 0)
			return -1;
		links[len++] = l;
		at = entry;
	}
	return -1;
}

int
optical_check_config(const Topo *t, const int *next, char *why, size_t len)
{
	int nb = optical_nblock(t);
	char *fed = xcalloc((size_t)nb, 1);
	int rc = 0;
	for (int b = 0; b < nb && rc == 0; b++) {
		int c = next[b];
		if (c < 0 || c >= nb)
			snprintf(why, len, "port pair %d feeds %d, which does not exist", b, c), rc = -1;
		else if (fed[c]++)
			snprintf(why, len, "two out-ports feed the in-port of port pair %d", c), rc = -1;
		else if (c == b && nb > 1)
			snprintf(why, len, "port pair %d feeds itself", b), rc = -1;
		else if (circuit_link(t, last_of(t, b), first_of(t, c), +1) < 0 && nb > 1)
			snprintf(why, len, "the switch cannot join port pair %d to %d (offsets are +-2^k)",
			         b, c), rc = -1;
	}
	free(fed);
	return rc;
}

/* Is link l usable on configuration next (with its reverse fibers)? */
static bool
live(const Topo *t, const int *next, int l)
{
	const Link *k = &t->link[l];
	if (k->dim < 0)
		return true;
	int B = optical_block(t), from = k->src / B, to = k->dst / B;
	if (k->dir > 0)
		return k->src == last_of(t, from) && k->dst == first_of(t, to) && next[from] == to;
	return k->src == first_of(t, from) && k->dst == last_of(t, to) && next[to] == from;
}

int
sched_nreconfig(const Sched *s)
{
	int n = 0;
	for (int i = 0; i < s->nphase; i++)
		n += s->phase[i].reconfig;
	return n;
}

static int
check_phase_list(Diag *dg, const Sched *s)
{
	char why[160];
	for (int i = 0; i < s->nphase; i++) {
		const Phase *p = &s->phase[i];
		int bad = i == 0 ? p->round != 0 : p->round <= s->phase[i - 1].round;
		if (bad || p->round >= (s->nround > 0 ? s->nround : 1)) {
			error_at(dg, s->loc, "schedule of '%s': configuration %d starts at round %d, out of "
			         "order", s->name, i + 1, p->round + 1);
			return -1;
		}
		if (optical_check_config(s->topo, p->next, why, sizeof why) != 0) {
			error_at(dg, s->loc, "schedule of '%s': configuration %d (from round %d) is not a set "
			         "of directed cycles: %s", s->name, i + 1, p->round + 1, why);
			return -1;
		}
	}
	return 0;
}

int
verify_phases(Diag *dg, const Sched *s)
{
	const Topo *t = s->topo;
	if (t->kind != TK_OPTICAL_RING) {
		if (s->nphase == 0)
			return 0;
		error_at(dg, s->loc, "schedule of '%s': circuit configurations on %s, which has no "
		         "optical switch", s->name, topo_kind_name(t->kind));
		return -1;
	}
	if (check_phase_list(dg, s) != 0)
		return -1;
	int nb = optical_nblock(t);
	int *ring = xmalloc((size_t)nb * sizeof *ring);
	for (int b = 0; b < nb; b++)
		ring[b] = (b + 1) % nb;
	int rc = 0;
	for (int i = 0, ph = 0; i < s->nmsg && rc == 0; i++) {
		const Msg *m = &s->msg[i];
		while (ph + 1 < s->nphase && s->phase[ph + 1].round <= m->round)
			ph++;
		const int *next = s->nphase ? s->phase[ph].next : ring;
		for (int k = s->route_off[m->route]; k < s->route_off[m->route + 1] && rc == 0; k++)
			if (!live(t, next, s->route_link[k])) {
				const Link *l = &t->link[s->route_link[k]];
				error_at(dg, s->loc, "schedule of '%s': the message from rank %d to rank %d in round "
				         "%d uses the circuit %d -> %d, which the configuration of that round "
				         "does not set up", s->name, m->src, m->dst, m->round + 1, l->src,
				         l->dst);
				rc = -1;
			}
	}
	free(ring);
	return rc;
}
