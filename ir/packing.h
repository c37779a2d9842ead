/*
 * packing.h: packings of spanning out-trees whose link loads fit given
 * integer capacities (packing.c; docs/algorithms.md "Optimal tree
 * packings").
 *
 * The input is a directed graph of ranks and switches whose link l may be
 * used by at most cap[l] tree copies, and a quota of copies per root rank.
 * When every rank t can receive K = sum(quota) units of flow from a source
 * joined to each rank r by quota[r] (the cut condition; for allgather it is
 * what the optimal rate x* makes true with cap = floor(k b / x*) and quota
 * k), pack_trees returns trees over the ranks, each with a multiplicity,
 * whose multiplicities sum to quota[r] at every root r, every tree spanning
 * every rank, each tree edge a route of links (through switches, or one
 * link between two ranks), and no link used by more copies than its cap.
 */
#ifndef COLLC_PACKING_H
#define COLLC_PACKING_H

#include <stdint.h>

#include "base.h"
#include "cutbound.h"

typedef struct PackInput {
	int nnode;            /* ranks and switches, 0 .. nnode - 1 */
	int nrank;
	const int *rank_node; /* rank i is node rank_node[i]; every other node is a switch */
	int nlink;
	const int *src, *dst; /* link l goes from src[l] to dst[l] */
	const int64_t *cap;   /* link l carries at most cap[l] tree copies */
	const int64_t *quota; /* nrank: the copies of trees rooted at each rank */
	bool plain;           /* no remembered cuts: a flow for every candidate
	                       * arc (tests: the trees must be the same) */
} PackInput;

typedef struct PackTree {
	int root;     /* a rank */
	int64_t mult; /* copies of this tree */
	int height;   /* edges of its longest root-to-rank path */
	int *parent;  /* nrank: the parent rank, -1 at the root */
	int *depth;   /* nrank */
	int *nhop;    /* nrank: links of the route parent -> rank (0 at the root) */
	int **route;  /* nrank: those links, from the parent */
} PackTree;

typedef struct Packing {
	int nrank, ntree;
	PackTree *tree; /* by root, then in the order built */
} Packing;

typedef enum PackStatus {
	PACK_OK,
	PACK_INFEASIBLE, /* the cut condition fails: the capacities cannot hold the quotas */
	PACK_STUCK,      /* a switch could not be split off (a case outside the theorems) */
	PACK_NO_BOUND,   /* cutbound gives no rate (alltoall, allreduce, one rank, too large) */
	PACK_TOO_LARGE,  /* the copies per root or the capacities pass their limits */
	PACK_NO_ORBITS,  /* no representatives' trees fit the link orbits' budgets (greedy) */
	PACK_NOT_GROUP,  /* the group is not an automorphism of the ranks and bandwidths */
	PACK_TOO_MANY,   /* k copies at every root pass MAX_INSTANCES in all (each copy is a
	                  * pipeline): refused before the trees grow, whose work is in k */
	PACK_TOO_MUCH,   /* growing the k copies' trees passes MAX_PACK_WORK (pack_copies_work):
	                  * refused before they grow */
} PackStatus;

/* What each status means, for messages. */
extern const char *const pack_status_text[];

/* The trees, allocated in the arena; the packing is empty unless PACK_OK. */
PackStatus pack_trees(Arena *, const PackInput *, Packing *);

/* Whether every rank t can receive sum(quota) units of flow (the cut
 * condition pack_trees needs), switches kept as they are. */
bool pack_feasible(const PackInput *);


/*
 * A collective's trees at its cut bound (cutbound.h): allgather and
 * reduce_scatter k copies rooted at every rank, broadcast and reduce k at
 * the root. Link l carries at most cap = floor(k bw_l / rate) copies, a
 * copy 1/k of its root's block (broadcast, reduce: of the vector), so the
 * block takes block / rate on every link: the bound's time. k is the least
 * whose capacities meet the cut condition (fewest copies); rate * k / bw
 * integral for every link makes them meet it (docs/algorithms.md).
 */
typedef struct CollPacking {
	CollKind kind;
	Frac rate;   /* bits/s: x* per rank (allgather, reduce_scatter), else lambda */
	int64_t k;
	double work; /* pack_copies_work at the k copies (0 until k is known) */
	bool inward; /* reduce_scatter, reduce: in-trees; data moves child -> parent and
	              * route[x] runs from rank x to its parent */
	int64_t *cap; /* nlink: the copies each link may carry */
	Packing pk;
} CollPacking;

PackStatus pack_collective(Arena *, const CutNet *, CollKind, CollPacking *);

/*
 * A group of automorphisms as plain tables (ir/group.c's elements): element
 * e maps node v to node[e * nnode + v] and link l to link[e * nlink + l].
 */
typedef struct PackGroup {
	int order;
	const int *node, *link;
} PackGroup;

/* pack_collective by orbit representatives (packing_orbit.c): trees grown
 * for one rank per orbit of G and mapped by its elements, k copies per root
 * (docs/algorithms.md "Orbit representatives"); allgather and
 * reduce_scatter only (PACK_NO_BOUND otherwise). PACK_NO_ORBITS and
 * PACK_NOT_GROUP leave the caller to pack every root (pack_collective). */
PackStatus pack_collective_orbits(Arena *, const CutNet *, CollKind, const PackGroup *, CollPacking *);
/* The trees alone, on links src -> dst (the kind's orientation) at rate. */
PackStatus pack_orbits(Arena *, const CutNet *, const int *src, const int *dst, const PackGroup *,
                       Frac rate, int64_t *k, Packing *);
/* pack_collective_orbits' work, estimated as pack_work is: the cut bound's
 * flows (one target when G is transitive on the ranks), every tree of every
 * count tried grown with each rank's join relaxing every link, the trees
 * mapped by every element. */
double pack_orbit_work(const CutNet *, const PackGroup *, int nrep);

/* Exchanges ranks' edges (parent and route) between trees of equal
 * multiplicity where that lowers the depth profile (the pairs at the
 * greatest depth, then the next), keeping every link's load and every tree
 * spanning (packing_shallow.c); none when pack_shallow_work passes
 * MAX_PACK_SHALLOW_WORK. Returns the exchanges made. */
int pack_shallow(Packing *);
/* Its work, in subtree steps: trees^2 ranks^2 per pass. */
double pack_shallow_work(const Packing *);

/* Each copy's share of its root's block cut into `units` (>= k) units:
 * floor(units / k) or one more, summing to `units` at every root, the
 * extras where they load the busiest link least (packing_units.c). share
 * has a slot per copy, trees in order and each tree's copies in turn; bw
 * (nlink) the links' bandwidths in the rate's units. Returns rho, the
 * busiest link's time over the bound's: rho <= ceil(units / k) k / units. */
double pack_unit_shares(const Packing *, int nlink, const double *bw, Frac rate, int64_t k,
                        int64_t units, int64_t *share);

/* The work pack_collective does on n when `copies` tree copies grow in
 * all, in link visits: max flows of (nodes + links + ranks) each, 2 N per
 * pair of arcs at a switch (phase 1) and N per copy count tried; 2 N per
 * copy to grow its tree (a flow per candidate arc, the first that keeps it
 * usually taken), each over those links and the arcs the splits added, one
 * per pair at most. Against MAX_PACK_WORK once the copies are known. */
double pack_copies_work(const CutNet *n, double copies);
/* pack_copies_work at one copy per root, before the copies are known.
 * Against MAX_PACK_WORK. */
double pack_work(const CutNet *n);

#endif
