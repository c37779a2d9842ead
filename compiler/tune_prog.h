/*
 * tune_prog.h: tune's ranking by the MSCCL program (tune_prog.c): a
 * candidate schedule lowered to MSCCL programs, each simulated in the
 * executor model (backends/msccl_exec.c, docs/sim.md 7), the fastest that
 * fits kept (docs/cli.md, tune: "Ranked by the program").
 */
#ifndef COLLC_TUNE_PROG_H
#define COLLC_TUNE_PROG_H

#include "ir.h"
#include "sim.h"

/* What the search may vary; an option that fixes one says so. */
typedef struct ProgSearch {
	unsigned protos;   /* bit p: protocol p (MProto) is tried */
	int instances;     /* > 0: fixed (--instances) */
	int inst_hint;     /* the size's instances by tune's model (fewer where they do not fit) */
	int channels;      /* > 0: fixed per instance (--channels); else searched */
	SimOpts opts;      /* the simulator's (mode, reduce rate); sync is deps */
} ProgSearch;

/* The fastest program found for one schedule at one size. */
typedef struct ProgPick {
	double time_s;
	int proto, instances;
	int channels;      /* per instance, as --channels gives it (0: the fewest that fit) */
	int nchannels;     /* the program's, every instance's */
} ProgPick;

typedef struct ProgCache ProgCache;
ProgCache *prog_cache_new(void);
void prog_cache_free(ProgCache *);
/* Programs lowered and simulations run so far (the cost, for tests). */
void prog_cache_counts(const ProgCache *, long *lowered, long *simulated);

/* The fastest program of s at `size` that fits MSCCL's limits, over the
 * configurations ps allows; key names s's form (a candidate and what it
 * chose for the size), so a program is lowered once per key and
 * configuration and simulated per size. 0 with *out; 1 when no
 * configuration fits or runs (why: the first reason met). Quiet. */
int prog_fastest(Diag *, ProgCache *, const Sched *s, const char *key, double size,
                 const ProgSearch *ps, ProgPick *out, char *why, size_t whylen);

/* The time of pick's program of s at `size` without the executor's
 * latencies (their share of the gap to the schedule, for tune's notes);
 * -1 past ITER_HI iterations, where the latencies are not what parts them,
 * or if it cannot run. */
double prog_time_unlatent(Diag *, ProgCache *, const Sched *s, const char *key, double size,
                          const ProgSearch *ps, const ProgPick *pick);

#endif
