/*
 * flow.h: maximum flow on a directed graph with integer capacities (flow.c).
 *
 * Needs: nothing but base.h; it does not see the IR, so any pass (cut
 * bounds, spanning-tree packing) builds its own graph on it.
 * Establishes: max flows s -> t by Dinic's algorithm (blocking flows on BFS
 * levels, O(V^2 E)), optionally stopped at a limit; the source side of a
 * minimum cut; flows reset or capacities changed without rebuilding.
 *
 * Capacities are int64_t >= 0. A flow value never exceeds the limit given
 * (INT64_MAX for none) nor the sum of the capacities leaving s, and every
 * sum is overflow-checked: a sum that would pass INT64_MAX stops at it, so
 * FLOW_INF is safe as an "unbounded" capacity. Edges are visited in the
 * order they were added, so every result (flows, cuts) is deterministic.
 */
#ifndef COLLC_FLOW_H
#define COLLC_FLOW_H

#include <stdbool.h>
#include <stdint.h>

#define FLOW_INF INT64_MAX

typedef struct FlowGraph FlowGraph;

/* A graph of nnode nodes (0..nnode-1) and no edges. */
FlowGraph *flow_new(int nnode);
void flow_free(FlowGraph *);
int flow_nnode(const FlowGraph *);
int flow_nedge(const FlowGraph *);

/* Adds the edge u -> v of capacity cap (>= 0); returns its id (0, 1, ...
 * in the order added). Parallel edges and edges u -> u are allowed. */
int flow_add_edge(FlowGraph *, int u, int v, int64_t cap);
int flow_edge_src(const FlowGraph *, int e);
int flow_edge_dst(const FlowGraph *, int e);
int64_t flow_edge_cap(const FlowGraph *, int e);
/* The flow the edge carries now (0 <= flow <= cap). */
int64_t flow_edge_flow(const FlowGraph *, int e);

/* Changes an edge's capacity. The flow stays when it still fits (so a
 * larger capacity lets flow_max continue from the flow it has); when the
 * edge carried more than cap, every flow is reset to 0 and false returned. */
bool flow_set_cap(FlowGraph *, int e, int64_t cap);
/* Sets every edge's flow to 0. */
void flow_reset(FlowGraph *);

/* Augments the current flow from s to t (s != t) until it is maximum or
 * `limit` more units have been sent; returns the units sent by this call.
 * From a reset graph that is min(max flow, limit). */
int64_t flow_max(FlowGraph *, int s, int t, int64_t limit);
/* The nodes reachable from s in the residual graph (side[v] = 1, else 0).
 * After a flow_max that returned less than its limit, they are the source
 * side of a minimum s-t cut (the one with the fewest nodes); returns how
 * many there are. */
int flow_source_side(FlowGraph *, int s, unsigned char *side);
/* Every edge's flow now, into flow[] (nedge values). */
void flow_get(const FlowGraph *, int64_t *flow);
/* The capacity of the edges leaving the node set side[] (side[v] != 0). */
int64_t flow_cut_cap(const FlowGraph *, const unsigned char *side);

#endif
