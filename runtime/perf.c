/*
 * perf.c: nccl-tests' algbw and busbw, and the bound on busbw per
 * collective kind and topology (perf.h, docs/sim.md "Bandwidth").
 */
#include <stdlib.h>
#include <string.h>

#include "perf.h"

typedef struct KindFactor {
	const char *kind;
	int twice;  /* 2: allreduce's 2(p-1)/p; 1: (p-1)/p; 0: 1 */
	bool reduces;
} KindFactor;

static const KindFactor kinds[] = {
	{"allreduce", 2, true},      {"reduce_scatter", 1, true}, {"reducescatter", 1, true},
	{"allgather", 1, false},     {"alltoall", 1, false},      {"broadcast", 0, false},
	{"reduce", 0, true},
};

static const KindFactor *
kind_of(const char *kind)
{
	for (size_t i = 0; i < countof(kinds); i++)
		if (strcmp(kinds[i].kind, kind) == 0)
			return &kinds[i];
	return NULL;
}

double
perf_busbw_factor(const char *kind, int p)
{
	const KindFactor *k = kind_of(kind);
	if (!k || p < 1)
		return 0;
	return k->twice ? k->twice * (double)(p - 1) / p : 1;
}

bool
perf_reduces(const char *kind)
{
	const KindFactor *k = kind_of(kind);
	return k && k->reduces;
}

const char *
perf_redop(const char *kind, const char *op)
{
	return perf_reduces(kind) ? op : "none";
}

/* The sum over ordered rank pairs of their hop distance (BFS per rank). */
static double
pair_hops(const SimNet *n, const SimColl *c)
{
	int *first = xcalloc((size_t)n->nnode + 1, sizeof *first);
	for (int l = 0; l < n->nlink; l++)
		first[n->link[l].src + 1]++;
	for (int v = 0; v < n->nnode; v++)
		first[v + 1] += first[v];
	int *adj = xmalloc(((size_t)n->nlink + 1) * sizeof *adj), *fill = xcalloc((size_t)n->nnode + 1, sizeof *fill);
	for (int l = 0; l < n->nlink; l++)
		adj[first[n->link[l].src] + fill[n->link[l].src]++] = n->link[l].dst;
	int *dist = xmalloc(((size_t)n->nnode + 1) * sizeof *dist);
	int *queue = xmalloc(((size_t)n->nnode + 1) * sizeof *queue);
	double sum = 0;
	for (int r = 0; r < c->nrank; r++) {
		for (int v = 0; v < n->nnode; v++)
			dist[v] = -1;
		int head = 0, tail = 0;
		dist[c->rank_node[r]] = 0;
		queue[tail++] = c->rank_node[r];
		while (head < tail) {
			int v = queue[head++];
			for (int k = first[v]; k < first[v + 1]; k++)
				if (dist[adj[k]] < 0) {
					dist[adj[k]] = dist[v] + 1;
					queue[tail++] = adj[k];
				}
		}
		for (int s = 0; s < c->nrank; s++)
			if (s != r && dist[c->rank_node[s]] > 0)
				sum += dist[c->rank_node[s]];
	}
	free(first), free(adj), free(fill), free(dist), free(queue);
	return sum;
}

/* The sum over the collective's ranks of their nodes' outgoing bandwidth
 * (bytes/s). */
static double
rank_out_sum(const SimNet *n, const SimColl *c)
{
	double *out = xcalloc((size_t)n->nnode + 1, sizeof *out);
	for (int l = 0; l < n->nlink; l++)
		out[n->link[l].src] += (double)n->link[l].bw / 8;
	double sum = 0;
	for (int r = 0; r < c->nrank; r++)
		sum += out[c->rank_node[r]];
	free(out);
	return sum;
}

/*
 * The most busbw any schedule of the kind can reach (docs/sim.md, "the
 * bound"). B_v, the smallest outgoing bandwidth of a rank's node, bounds
 * every kind but allreduce: a rank must send (reduce_scatter, alltoall) or
 * receive (allgather) (p-1)/p of the vector, the root all of it. An
 * allreduce rank need only send the vector once (a tree's leaf), so its
 * own bound is 2(p-1)/p B_v; but every element must be gossiped, which
 * takes 2(p-1) one-way sends, each leaving some rank: at most the ranks'
 * summed outgoing bandwidth over p. The smaller of the two; on a regular
 * topology it is B_v. Where a switch reduces (SimNet.in_network) the
 * gossip needs no rank's sends: the bound is 2(p-1)/p B_v.
 */
double
perf_bound_busbw(const SimNet *n, int ci)
{
	const SimColl *c = &n->coll[ci];
	double bv = sim_injection_bw(n, ci) / 8; /* bits to bytes */
	if (strcmp(c->kind, "allreduce") == 0 && c->nrank >= 2) {
		double per_rank = 2.0 * (c->nrank - 1) / c->nrank * bv;
		double gossip = rank_out_sum(n, c) / c->nrank;
		return per_rank < gossip || n->in_network ? per_rank : gossip;
	}
	if (strcmp(c->kind, "alltoall") != 0 || c->nrank < 2)
		return bv;
	double cap = 0;
	for (int l = 0; l < n->nlink; l++)
		cap += (double)n->link[l].bw / 8;
	double hops = pair_hops(n, c);
	double by_links = hops > 0 ? cap * (c->nrank - 1) / hops : bv;
	return by_links < bv ? by_links : bv;
}
