/*
 * to_sim.h: schedules of the IR as the simulator's input (backends/to_sim.c).
 */
#ifndef COLLC_SIMBUILD_H
#define COLLC_SIMBUILD_H

#include "ir.h"
#include "sim.h"

/* The network of the schedules' topology with one collective per schedule
 * (all on one topology). 0, or -1 after reporting. */
int sim_from_scheds(Diag *, Arena *, const Sched *const *, int n, SimNet *);
/* The links and network parameters of a topology, no collectives yet (0,
 * or -1 after reporting). */
int sim_net_of_topo(Diag *, Arena *, const Topo *, SimNet *);
/* The same, expanding symmetric schedules only up to expand_limit (base
 * transfer, element) pairs (sim_from_scheds: 2^22); larger ones whose group
 * holds every translation of a torus, ring, hyperx or full topology become
 * translates of node 0's messages. Tests use it to take that way on small tori. */
int sim_from_scheds_limit(Diag *, Arena *, const Sched *const *, int n, long expand_limit, SimNet *);

/* As sim_from_scheds, for a simulation round by round (no dependencies):
 * symmetric schedules whose group holds every translation of a torus, ring,
 * hyperx or full topology are streamed (SimStream), one round's messages
 * at a time, whatever their size. */
int sim_stream_scheds(Diag *, Arena *, const Sched *const *, int n, SimNet *);

/* The rank form (Sched.xor_routes) as a stream (to_sim_rank.c). 0, or -1 after
 * reporting. */
int rank_stream_coll(Diag *, Arena *, const Sched *, SimColl *);

/* The repeated form (Sched.repeat) as a stream, round by round
 * (to_sim_repeat.c). 0, or -1 after reporting. */
int repeat_stream_coll(Diag *, Arena *, const Sched *, SimColl *);

#endif
