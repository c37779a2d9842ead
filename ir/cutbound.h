/*
 * cutbound.h: the throughput bound of a collective on a network, from the
 * capacities of its cuts (cutbound.c; docs/algorithms.md, "The cut bound").
 *
 * Needs: plain data (nodes, directed links with bits/s, the ranks' nodes),
 * so that the IR's topologies (check) and the simulator's networks (sim,
 * tune) are measured by the same code.
 * Establishes, for a set S of nodes, B+(S) the capacity of the links
 * leaving S and r(S) the ranks on its nodes, N ranks in all:
 *   allgather       x* = min B+(S) / r(S) over S holding a rank and missing
 *                   one; busbw <= (N - 1) x*, attained (ForestColl)
 *   reduce_scatter  the same on the reversed links
 *   allreduce       upper: busbw <= 2(N - 1)/N lambda, lambda = min B+(S)
 *                   over S holding a rank and missing one, and <= the ranks'
 *                   summed outgoing bandwidth over N (gossip; none where a
 *                   switch reduces: in_network); achievable: the
 *                   reduce-scatter then allgather composition,
 *                   2(N - 1) / (1/x*_rs + 1/x*_ag)
 *   broadcast       busbw <= min over ranks v of maxflow(root, v)
 *   reduce          the same on the reversed links
 *   alltoall        busbw <= (N - 1) lambda*, the maximum concurrent flow,
 *                   within a certified interval (a2abound.c)
 * every rate exact: capacities are divided by their greatest common divisor
 * and every x* is a fraction of integers, found by Newton's (Dinkelbach's)
 * iteration on minimum cuts (ir/flow.h), with the cut that binds.
 */
#ifndef COLLC_CUTBOUND_H
#define COLLC_CUTBOUND_H

#include <stdbool.h>
#include <stdint.h>

#include "registry.h"

typedef struct CutLink {
	int src, dst;
	int64_t bw; /* bits per second, >= 0 */
} CutLink;

typedef struct CutNet {
	int nnode, nlink;
	const CutLink *link;
	int nrank;
	const int *rank_node; /* rank -> node */
	int root;             /* broadcast, reduce: the root rank */
	bool in_network;      /* some switch reduces (in-network reduction): allreduce has
	                       * no gossip bound, only lambda's (docs/algorithms.md) */
	bool transitive;      /* every rank node is mapped to every other by an
	                       * automorphism of the links and their bandwidths (the
	                       * translations of a torus, ring, hyperx or full
	                       * topology): one target of x*'s flows stands for all */
	bool arc_transitive;  /* also every link to every other (rings, full graphs,
	                       * tori and HyperX of equal sides): all-to-all's hop
	                       * bound is exact (a2abound.c) */
} CutNet;

/* An exact rate in bits per second: num / den, den > 0, in lowest terms. */
typedef struct Frac {
	int64_t num, den;
} Frac;

typedef enum CutStatus {
	CUT_OK,        /* rate and cut below hold */
	CUT_NONE,      /* no cut bound for this kind (none now: alltoall has its flow) */
	CUT_UNBOUNDED, /* no set separates two ranks: one rank, or all on one node */
	CUT_TOO_LARGE, /* the work or the integers would pass their limits */
} CutStatus;

/* All-to-all (a2abound.c): lambda*, the maximum concurrent flow that
 * gives every ordered pair of ranks the same rate, in bits/s per pair,
 * within lo <= lambda* <= hi, each end a certificate (a flow; a length
 * function's dual). busbw = (N - 1) lambda* (nccl-tests' (N-1)/N times
 * algbw, algbw = N lambda*). */
typedef struct A2ABound {
	double lo, hi;   /* bits/s per ordered pair of ranks */
	int phases;      /* the flow's phases run (0: the closed form) */
	bool closed;     /* arc-transitive: the hop bound, lo = hi */
	unsigned char *cut; /* nnode, malloc'd: the set S whose cut gives hi (hi =
	                     * B+(S) / (r(S) (N - r(S)))), or NULL: lengths give it */
	int64_t cut_bw;  /* B+(S), bits/s */
	int cut_ranks;   /* r(S) */
} A2ABound;
/* The interval on n: CUT_OK, CUT_UNBOUNDED (fewer than two rank nodes) or
 * CUT_TOO_LARGE (a2abound_work past MAX_A2A_WORK, before any flow). The
 * caller frees out->cut. */
CutStatus a2abound(const CutNet *n, A2ABound *out);
/* the work's estimate: Dijkstra passes' (nodes + links) log nodes */
double a2abound_work(const CutNet *n);

/* The binding rate of one bound and a set S that attains it. */
typedef struct CutRate {
	Frac rate;            /* allgather, reduce_scatter: x* per rank; else lambda */
	unsigned char *cut;   /* nnode: S (side 1), malloc'd; NULL unless CUT_OK */
	int64_t cut_bw;       /* B+(S) (reduce_scatter, reduce: the reversed links'), bits/s */
	int cut_ranks;        /* r(S) */
} CutRate;

typedef struct CutBound {
	CollKind kind;
	CutStatus status;
	CutRate bound;        /* the kind's bound; allreduce: lambda (upper) */
	CutRate rs, ag;       /* allreduce: the two phases' x* (achievable) */
	double busbw;         /* the upper bound on busbw, bytes/s (nccl-tests' factors) */
	bool gossip;          /* allreduce: the gossip bound (the ranks' summed outgoing
	                       * bandwidth over N) is below 2(N-1)/N lambda and is busbw */
	double achievable;    /* a busbw some schedule reaches when links carry any
	                       * fraction of a chunk: allgather, reduce_scatter the
	                       * bound (ForestColl); allreduce the composition; 0 else */
	A2ABound a2a;        /* alltoall: lambda*'s interval (busbw its hi, achievable its lo) */
} CutBound;

/* The bound of a collective of kind k on n. Returns its status; the caller
 * frees with cutbound_free. */
CutStatus cutbound(const CutNet *n, CollKind k, CutBound *out);
void cutbound_free(CutBound *);
/* The same on a topology's links (bandwidth rounded to whole bits/s). */
struct Topo;
CutStatus cutbound_topo(const struct Topo *, const int *rank_node, int nrank, int root,
                        CollKind k, CutBound *out);
/* The CutNet cutbound_topo measures, into *n; returns its links (malloc'd,
 * the caller frees them once done with n). */
CutLink *cutnet_topo(const struct Topo *, const int *rank_node, int nrank, int root, CutNet *n);

/* The work of cutbound: its max flows (one per target of x*, one per rank
 * for lambda, as the kind needs them), each counted as one pass over the
 * graph (nodes + links + ranks); cutbound refuses more than MAX_CUT_WORK
 * (CUT_TOO_LARGE) before any flow. */
double cutbound_work(const CutNet *n, CollKind k);

/* Whether every link has the same bandwidth and every node as many links
 * out, and in, as every other: what a transitive CutNet must have. */
bool cutnet_uniform(const CutNet *);

/* Whether a transitive form's sides are all equal (torus(8, 8), not
 * torus(4, 8)): then its automorphisms (translations, coordinate swaps and
 * reflections) map every link to every other, so arc_transitive. */
bool sides_equal(int ndim, const int *size);

/* a/b < c/d, exactly */
int frac_cmp(Frac a, Frac b);
double frac_value(Frac);

#endif
