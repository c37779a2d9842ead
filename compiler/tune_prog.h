/*
 * tune_prog.h: tune's ranking by the MSCCL program (tune_prog.c): a
 * candidate schedule lowered to MSCCL programs, each simulated in the
 * executor model (backends/msccl_exec.c, docs/sim.md 7), the fastest that
 * fits kept (docs/cli.md, tune: "Ranked by the program").
 */
#ifndef COLLC_TUNE_PROG_H
#define COLLC_TUNE_PROG_H

#include "backend.h"
#include "ir.h"
#include "msccl_program.h"
#include "sim.h"

/* The most instances tune's model and the program search take. */
enum { PROG_MAX_INSTANCES = 8 };

/* What the search may vary; an option that fixes one says so. */
typedef struct ProgSearch {
	unsigned protos;   /* bit p: protocol p (MProto) is tried */
	int instances;     /* > 0: fixed (--instances) */
	int inst_hint;     /* the size's instances by tune's model (fewer where they do not fit) */
	int channels;      /* > 0: fixed per instance (--channels); else searched */
	SimOpts opts;      /* the simulator's (mode, reduce rate); sync is deps */
	const BuildOpts *build; /* or NULL: what else the lowering takes (build's --legacy,
	                         * --min-bytes, --max-bytes) */
} ProgSearch;

/* Why a schedule has no program at a size (ProgPick.why): none of its
 * configurations fits MSCCL's limits; or those that fit do not cut the
 * size into their chunks in whole bytes; or the executor model cannot
 * run them there; or it was not searched (prog_rank's pruning). */
typedef enum ProgWhy { PROG_FOUND, PROG_UNFIT, PROG_UNCUT, PROG_UNRUN, PROG_SKIPPED } ProgWhy;
/* The reason's words for a note, by ProgWhy (PROG_FOUND's empty). */
const char *prog_why_text(ProgWhy);

/* The fastest program found for one schedule at one size. */
typedef struct ProgPick {
	double time_s;
	ProgWhy why;       /* time_s < 0: why none */
	int proto, instances;
	int channels;      /* per instance, as --channels gives it (0: the fewest that fit) */
	int nchannels;     /* the program's, every instance's */
	bool split;        /* its tbs only send or only receive (BuildOpts.split_tbs) */
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
 * configuration fits or runs, out->why the most specific reason met
 * (prog_why_text words it). Quiet. */
int prog_fastest(Diag *, ProgCache *, const Sched *s, const char *key, double size,
                 const ProgSearch *ps, ProgPick *out);

/* One candidate of a collective for prog_rank: its schedule at the size,
 * its key (its form: what it chose for the size), its schedule's simulated
 * time, whether it is searched whatever its rank (the ring, the reference
 * a plan is compared with), and where its pick goes (time_s < 0: none). */
typedef struct ProgCand {
	const Sched *s;
	const char *key;
	double sched_time;
	bool always;
	ProgPick *pick;
} ProgCand;

/* The candidates c[0..n) of one collective at `size`, fastest schedule
 * first: each one's fastest program (prog_fastest), for the first
 * PROG_TOP of them while the schedule is within PROG_PRUNE of the fastest
 * program found, and those marked always; the others' picks left at -1.
 * tune ranks each size by it, and build's auto for MSCCL. */
void prog_rank(Diag *, ProgCache *, const ProgCand *c, int n, double size, const ProgSearch *ps);

/* The program prog_fastest timed for pick (lowered once, kept in the
 * cache), and whether it is staged; NULL if it was not lowered or does not
 * fit. */
const MProg *prog_of(ProgCache *, const char *key, const ProgPick *pick, bool *staged);

/* `collc build --target msccl` of an `auto` collective s at `size`: the
 * library's candidates ranked by their programs in the executor model
 * (prog_rank), the fastest written to f as build writes a program (the
 * program ranked, not lowered again), with a note of the pick. o: build's
 * options (--proto, --instances, --channels fix those). 0, or -1 after
 * reporting. */
int prog_build_auto(Diag *, const Sched *s, const BuildOpts *o, double size, FILE *f);

/* Schedule s at `size` as the executor runs it with an ideal lowering
 * (docs/sim.md 7, "The schedule in the executor"): its messages by
 * dependencies with the executor's fixed costs (a call's base latency,
 * a step's latency, the protocol's wire bytes: exec_costs_on_sched), the
 * least over the protocols in the mask `protos`, that protocol into *proto;
 * in so's mode. The aim's reference. -1 if it cannot run so. Quiet. */
double prog_sched_time(Diag *, const Sched *s, double size, const SimOpts *so, unsigned protos,
                       int *proto);

#endif
