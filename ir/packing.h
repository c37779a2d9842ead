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

typedef struct PackInput {
	int nnode;            /* ranks and switches, 0 .. nnode - 1 */
	int nrank;
	const int *rank_node; /* rank i is node rank_node[i]; every other node is a switch */
	int nlink;
	const int *src, *dst; /* link l goes from src[l] to dst[l] */
	const int64_t *cap;   /* link l carries at most cap[l] tree copies */
	const int64_t *quota; /* nrank: the copies of trees rooted at each rank */
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
} PackStatus;

/* The trees, allocated in the arena; the packing is empty unless PACK_OK. */
PackStatus pack_trees(Arena *, const PackInput *, Packing *);

/* Whether every rank t can receive sum(quota) units of flow (the cut
 * condition pack_trees needs), switches kept as they are. */
bool pack_feasible(const PackInput *);

#endif
