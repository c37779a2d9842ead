/*
 * estimate.c: the work a declaration asks for, estimated from its numbers
 * before anything is allocated, and held against the limits of
 * collc_limits.h. Needs: the declaration's numbers only (sizes, rank and
 * chunk counts, group order), never a built object. Establishes: what
 * passes can be built within the limits' memory; what fails gets a located
 * error naming the estimate and the limit, and -1.
 *
 * Estimates are lower bounds where the exact count needs the build itself
 * (a schedule moves each chunk to every other rank at least once), so a
 * refusal is never for work that would have fitted.
 */
#include <stdio.h>

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

double
topo_link_estimate(TopoKind kind, int ndim, const int *size, int variant)
{
	double n = 1, hyperx = 0;
	for (int i = 0; i < ndim; i++)
		n *= size[i];
	for (int i = 0; i < ndim; i++)
		hyperx += n * (size[i] - 1);
	switch (kind) {
	case TK_TORUS:
	case TK_RING:
	case TK_MESH:
		return 2 * ndim * n;
	case TK_SUPERMESH: /* the doubled perimeter on top */
		return 2 * ndim * n + 4.0 * (size[0] + size[1]);
	case TK_HYPERX:
		return hyperx;
	case TK_FULL:
		return n * (n - 1);
	case TK_OPTICAL_RING:
		return 3 * n; /* optical links and the electrical ones of a block */
	case TK_SPINE_LEAF: /* size: leaves, hosts; variant: spines */
		return 2.0 * size[0] * size[1] + 2.0 * size[0] * variant;
	case TK_GRAPH:
		break;
	}
	return 0;
}

int
check_topology_links(Loc loc, const char *desc, double nlink)
{
	if (nlink <= MAX_LINKS)
		return 0;
	char n[32];
	error_at(loc, "%s has %s directed links; collc builds topologies of at most %d links "
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
check_sched_size(Loc loc, const char *name, CollKind kind, int nrank, double nchunk)
{
	char a[32], b[32];
	double cells = (double)nrank * nchunk, moves = min_transfers(kind, nrank, nchunk);
	if (moves > MAX_TRANSFERS) {
		error_at(loc, "the schedule of '%s' has at least %s chunk transfers (%s chunks over "
		         "%d ranks); collc builds at most %d (docs/limits.md)", name,
		         count_str(moves, a, sizeof a), count_str(nchunk, b, sizeof b), nrank,
		         MAX_TRANSFERS);
		return -1;
	}
	if (cells > MAX_CELLS) {
		error_at(loc, "the schedule of '%s' has %s (rank, chunk) pairs (%d ranks x %s chunks) "
		         "to verify; collc builds at most %d (docs/limits.md)", name,
		         count_str(cells, a, sizeof a), nrank, count_str(nchunk, b, sizeof b),
		         MAX_CELLS);
		return -1;
	}
	return 0;
}

int
check_symmetric_size(Loc loc, const char *name, int ntree, int order)
{
	double nchunk = (double)ntree * order;
	if (nchunk <= MAX_SYMM_CHUNKS)
		return 0;
	char a[32];
	error_at(loc, "symmetric cuts the vector of '%s' into %s chunks (%d tree%s x a group of "
	         "order %d); collc builds at most %d (docs/limits.md)", name,
	         count_str(nchunk, a, sizeof a), ntree, ntree == 1 ? "" : "s", order,
	         MAX_SYMM_CHUNKS);
	return -1;
}
