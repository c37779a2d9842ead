/*
 * bound.h: the busbw bound the commands print (bound.c): check's line per
 * collective, sim's bound column, tune's share of the bound.
 */
#ifndef COLLC_BOUND_H
#define COLLC_BOUND_H

#include <stdio.h>

#include "ir.h"
#include "sim.h"

/* sim and tune: the tighter of the cut bound (ir/cutbound.h; allreduce: its
 * upper bound) and runtime/perf.h's perf_bound_busbw, in bytes/s, for
 * collective c of n. Bounds are kept in the cache (networks compared by
 * their links and ranks), so that every size of a collective costs one. */
typedef struct BoundCache {
	struct BoundEntry *e;
	int n, cap;
	struct SchedBound *sb; /* check's: per topology, kind, ranks and root */
	int nsb, capsb;
} BoundCache;

double bound_busbw(BoundCache *, const SimNet *, int c);
/* The same for a schedule, on its topology. */
double bound_busbw_sched(Diag *, const Sched *);
void bound_cache_free(BoundCache *);

/* check: a line per cut bound of the schedules (those of one topology,
 * kind, ranks and root share it): what binds, upper or attained; and a
 * schedule's JSON object. */
void bound_print(const Sched *const *s, int n, FILE *);
void bound_json(BoundCache *, const Sched *s, FILE *);

#endif
