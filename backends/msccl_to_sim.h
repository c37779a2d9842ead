/*
 * msccl_to_sim.h: an MSCCL algorithm (runtime/msccl_program.h) placed on a topology of
 * the IR as the simulator's input (msccl_to_sim.c), so `collc sim FILE.xml
 * --topology T.coll` compares foreign algorithms with collc's own.
 */
#ifndef COLLC_SIMXML_H
#define COLLC_SIMXML_H

#include "ir.h"
#include "msccl_program.h"
#include "sim.h"

/* The network of topology t with one collective: program p's messages,
 * rank r running on node rank_node[r] (ngpus of them). Each sending step
 * is a message of cnt/nchunksperloop of the vector, routed on shortest
 * paths; it depends on every message its rank received before it in the
 * program's order (its threadblock's earlier steps and their depid/deps,
 * transitively). 0, or -1 after reporting against the XML's lines. */
int sim_from_msccl(Diag *, Arena *, const MProg *p, const Topo *t, const int *rank_node, SimNet *);

#endif
