/*
 * estimate.c: the work a declaration asks for, estimated from its numbers
 * before anything is allocated, and held against the limits of
 * collc_limits.h. Needs: the declaration's numbers only (sizes, rank and
 * chunk counts, group order and generators), never a built object; the
 * route-hop estimate alone takes a generator's messages before any is
 * routed (their (source, destination) pairs). Establishes: what passes can
 * be built within the limits' memory; what fails gets a located error
 * naming the estimate and the limit, and -1.
 *
 * Estimates are lower bounds where the exact count needs the build itself
 * (a schedule moves each chunk to every other rank at least once), so a
 * refusal is never for work that would have fitted.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ir.h"

/* A count as people read it: exact below ten million, else "1.4e11". */
static const char *
count_str(double v, char *buf, size_t len)
{
	if (v < 1e7) {
		snprintf(buf, len, "%.0f", v);
		return buf;
	}
	int e = 0;
	while (v >= 10) {
		v /= 10;
		e++;
	}
	snprintf(buf, len, "%.1fe%d", v, e);
	return buf;
}

int
check_topology_links(Diag *dg, Loc loc, const char *desc, double nlink)
{
	if (nlink <= MAX_LINKS)
		return 0;
	char n[32];
	error_at(dg, loc, "%s has %s directed links; collc builds topologies of at most %d links "
	         "(docs/limits.md)", desc, count_str(nlink, n, sizeof n), MAX_LINKS);
	return -1;
}

/* The fewest chunk transfers that can implement the collective: every
 * chunk reaches (or comes from) every other rank; an allreduce sends
 * 2 (p - 1) / p of the vector from every rank at least (the bandwidth
 * bound of reduce_scatter then allgather); an alltoall block moves unless
 * it is its own rank's. */
static double
min_transfers(CollKind kind, int nrank, double nchunk)
{
	if (kind == CK_ALLTOALL)
		return nchunk - nchunk / nrank;
	return nchunk * (nrank - 1) * (kind == CK_ALLREDUCE ? 2 : 1);
}

double
sched_min_chunks(CollKind kind, int nrank, int chunks)
{
	if (chunks > 0)
		return chunks;
	if (kind == CK_ALLTOALL)
		return (double)nrank * nrank; /* a block per (source, destination) */
	if (kind == CK_REDUCE_SCATTER || kind == CK_ALLGATHER)
		return nrank; /* a block per owner */
	return 1;
}

int
check_sched_size(Diag *dg, Loc loc, const char *name, CollKind kind, int nrank, double nchunk)
{
	char a[32], b[32];
	double cells = (double)nrank * nchunk, moves = min_transfers(kind, nrank, nchunk);
	if (moves > MAX_TRANSFERS) {
		error_at(dg, loc, "the schedule of '%s' has at least %s chunk transfers (%s chunks over "
		         "%d ranks); collc builds at most %d (docs/limits.md)", name,
		         count_str(moves, a, sizeof a), count_str(nchunk, b, sizeof b), nrank,
		         MAX_TRANSFERS);
		return -1;
	}
	if (cells > MAX_CELLS) {
		error_at(dg, loc, "the schedule of '%s' has %s (rank, chunk) pairs (%d ranks x %s chunks) "
		         "to verify; collc builds at most %d (docs/limits.md)", name,
		         count_str(cells, a, sizeof a), nrank, count_str(nchunk, b, sizeof b),
		         MAX_CELLS);
		return -1;
	}
	return 0;
}

int
check_expand_size(Diag *dg, Loc loc, const char *name, CollKind kind, int nrank, double nchunk,
                  double copies)
{
	if (copies > MAX_TRANSFERS) {
		char a[32];
		error_at(dg, loc, "expanding the symmetric schedule of '%s' makes %s messages (copies of "
		         "its base transfers); collc expands at most %d (docs/limits.md)", name,
		         count_str(copies, a, sizeof a), MAX_TRANSFERS);
		return -1;
	}
	return check_sched_size(dg, loc, name, kind, nrank, nchunk);
}

int
check_symmetric_size(Diag *dg, Loc loc, const char *name, int ntree, int order)
{
	double nchunk = (double)ntree * order;
	if (nchunk <= MAX_SYMM_CHUNKS)
		return 0;
	char a[32];
	error_at(dg, loc, "symmetric cuts the vector of '%s' into %s chunks (%d tree%s x a group of "
	         "order %d); collc builds at most %d (docs/limits.md)", name,
	         count_str(nchunk, a, sizeof a), ntree, ntree == 1 ? "" : "s", order,
	         MAX_SYMM_CHUNKS);
	return -1;
}

int
check_symmetric_segments(Diag *dg, Loc loc, const char *name, int ntree, int segments, int order,
                         double base)
{
	double nchunk = (double)ntree * segments * order, nbase = base * segments;
	char a[32];
	if (nchunk > MAX_SYMM_CHUNKS) {
		error_at(dg, loc, "symmetric in %d segments cuts the vector of '%s' into %s chunks (%d "
		         "tree%s x %d segments x a group of order %d); collc builds at most %d "
		         "(MAX_SYMM_CHUNKS, docs/limits.md)", segments, name, count_str(nchunk, a, sizeof a),
		         ntree, ntree == 1 ? "" : "s", segments, order, MAX_SYMM_CHUNKS);
		return -1;
	}
	if (nbase > MAX_TRANSFERS) {
		error_at(dg, loc, "symmetric in %d segments holds %s base transfers (%.0f a segment) for "
		         "'%s'; collc holds at most %d (MAX_TRANSFERS, docs/limits.md)", segments,
		         count_str(nbase, a, sizeof a), base, name, MAX_TRANSFERS);
		return -1;
	}
	return 0;
}

int
check_group_generators(Diag *dg, Loc loc, const char *name, int ngen, int nnode, int nlink)
{
	/* each generator is also held, a GroupGen (its ints counted as images):
	 * on a small topology that is most of a generator's memory */
	double record = (double)(sizeof(GroupGen) / sizeof(int));
	double images = (double)ngen * ((double)nnode + nlink + record);
	if (images <= MAX_GENERATOR_IMAGES)
		return 0;
	char a[32];
	error_at(dg, loc, "the group '%s' has %d generators on %d nodes and %d links: %s node and link "
	         "images to check, with the generators; collc checks at most %d (docs/limits.md)",
	         name, ngen, nnode, nlink, count_str(images, a, sizeof a), MAX_GENERATOR_IMAGES);
	return -1;
}

/* A set of (source, destination) pairs, open-addressed, growing with what
 * it holds (keys are the pair plus one: 0 is an empty slot). */
typedef struct PairSet {
	unsigned long long *key;
	size_t n, cap;
} PairSet;

static size_t
pair_hash(unsigned long long k, size_t mask)
{
	k ^= k >> 31;
	k *= 0x9e3779b97f4a7c15ull;
	return (size_t)(k >> 17) & mask;
}

/* Adds (src, dst); true if it was not there. */
static bool
pair_add(PairSet *ps, int src, int dst)
{
	unsigned long long k = ((unsigned long long)(unsigned)src << 32 | (unsigned)dst) + 1;
	if (2 * (ps->n + 1) > ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 1024;
		unsigned long long *key = xcalloc(cap, sizeof *key);
		for (size_t i = 0; i < ps->cap; i++)
			if (ps->key[i]) {
				size_t h = pair_hash(ps->key[i], cap - 1);
				while (key[h])
					h = (h + 1) & (cap - 1);
				key[h] = ps->key[i];
			}
		free(ps->key);
		ps->key = key;
		ps->cap = cap;
	}
	size_t h = pair_hash(k, ps->cap - 1);
	for (; ps->key[h]; h = (h + 1) & (ps->cap - 1))
		if (ps->key[h] == k)
			return false;
	ps->key[h] = k;
	ps->n++;
	return true;
}

/* Past this many distinct pairs (128 MiB of the set) the count stops and
 * the routing's own count (sched_route) is the check. */
enum { MAX_ESTIMATED_PAIRS = 1 << 24 };

double
route_hops_estimate(const Topo *t, const int *rank_node, const Msg *msg, int nmsg, size_t *pairs)
{
	PairSet ps = {0};
	double hops = 0;
	int nrank = 0;
	for (int i = 0; i < nmsg; i++)
		nrank = msg[i].src >= nrank ? msg[i].src + 1 : nrank;
	/* most senders keep to a few partners: the last one each met skips the set */
	int *last = xmalloc(((size_t)nrank + 1) * sizeof *last);
	for (int r = 0; r < nrank; r++)
		last[r] = -1;
	for (int i = 0; i < nmsg && ps.n < MAX_ESTIMATED_PAIRS; i++) {
		const Msg *m = &msg[i];
		if (m->route >= 0 || last[m->src] == m->dst)
			continue;
		last[m->src] = m->dst;
		if (pair_add(&ps, m->src, m->dst))
			hops += route_min_hops(t, rank_node[m->src], rank_node[m->dst]);
	}
	*pairs = ps.n;
	free(ps.key);
	free(last);
	return hops;
}

int
check_route_hops(Diag *dg, Loc loc, const char *name, const Topo *t, const int *rank_node, const Msg *msg,
                 int nmsg, double interned)
{
	size_t pairs;
	double hops = interned + route_hops_estimate(t, rank_node, msg, nmsg, &pairs);
	if (hops <= MAX_ROUTE_HOPS)
		return 0;
	char a[32], b[32];
	error_at(dg, loc, "the routes of '%s' take at least %s hops (%s distinct (source, destination) "
	         "pairs, each at least its distance apart); collc builds at most %d (docs/limits.md)",
	         name, count_str(hops, a, sizeof a), count_str((double)pairs, b, sizeof b),
	         MAX_ROUTE_HOPS);
	return -1;
}
