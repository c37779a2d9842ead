/*
 * to_msccl.h: the MSCCL backend's internals, shared by its two files
 * (to_msccl.c, the lowering and its width search; to_msccl_bound.c, the lower
 * bounds that steer it) and by the tests that look inside them. Nothing
 * else includes it: the backend's interface is msccl_backend and
 * msccl_lower in backend.h, the program form is runtime/msccl_program.h.
 */
#ifndef COLLC_MSCCL_LOWER_H
#define COLLC_MSCCL_LOWER_H

#include "backend.h"
#include "msccl_program.h"

/* What msccl_lower did to find its program: emission is linear in the XML
 * when one program is built and checked (the bound's estimate was right). */
typedef struct MscclStats {
	int widths;    /* width attempts lowered (a limit over stops one before its steps) */
	int programs;  /* programs built whole and checked */
	bool staged;   /* the program found is staged (receives through scratch) */
} MscclStats;
int msccl_lower_counted(Arena *, const Sched *, const BuildOpts *, MProg *,
                        MscclStats *);
/* to_msccl_bound.c: lower bounds on a schedule's MSCCL steps per connection
 * (per instance, a step per run of chunks), counted before any width is
 * built on the chosen ranks (one of each orbit of a symmetric schedule's
 * group; every rank of an explicit one). */
enum { MSCCL_BOUND_NCNT = 3 };
extern const int msccl_bound_maxcnt[MSCCL_BOUND_NCNT]; /* 71, 2, 1 chunks a sending step */
typedef struct MscclBound {
	int nrank;
	/* [m][src * nrank + dst]: at least this many steps with sending steps of
	 * at most msccl_bound_maxcnt[m] chunks, for chosen src or dst */
	long *conn[MSCCL_BOUND_NCNT];
	/* allgather, reduce-scatter (else NULL): the same with each (round, src,
	 * dst)'s chunks one run, as staged lowering may make them; the refusal's
	 * bound (msccl_refuse_unfit) */
	long *staged;
	bool *chosen;      /* the ranks bounded */
	/* the largest k such that two ranks (one chosen) send each other runs
	 * of k chunks in one round (at 71 a step; contiguous at both ends, as
	 * far as the layout tells): an exchange whose tbs both send first
	 * stops chunk by chunk once k exceeds a connection's calls. [0] with
	 * one instance, [1] with several (their homes interleave blocks) */
	int exchange_run[2];
} MscclBound;
void msccl_bound_build(const Sched *, const Layout *, MscclBound *);
/* The busiest connection's steps, plain over staged (0: not an allgather or
 * reduce-scatter, or nothing sent): how much staging may save. */
double msccl_bound_staging_gain(const MscclBound *);
void msccl_bound_free(MscclBound *);
/* Refuses a schedule that can never fit the executor's limits; 0, or -1
 * after reporting (the estimate and the limit, at the collective). */
int msccl_refuse_unfit(const Sched *, const MscclBound *, const BuildOpts *);
/* Whether no program of nch channels per instance (each connection pinned
 * to one, or spread; tbs paired or not; sending steps of at most maxcnt
 * chunks) can fit: a rank over its tbs, or pinned or on one channel, a tb
 * over maxsteps, whatever the lowering chooses. */
bool msccl_bound_hopeless(const MscclBound *, int nch, int inst, bool pinned, bool unpaired,
                          int maxcnt, int maxsteps);
/* The busiest connection's steps over maxsteps (at most maxcnt chunks a
 * step): at one channel, the worst tb's steps over the limit are at least
 * this. */
double msccl_bound_excess(const MscclBound *, int maxcnt, int maxsteps);
/* Checks a program msccl_lower built by every rule (pieces: rule 14 chunk
 * by chunk too); -1 if it fails. With report, the errors are printed with
 * the XML it would write as their source (named "<MSCCL XML for 'NAME'>"),
 * then a note at the collective. */
int msccl_check_built(const MProg *, const Sched *, bool pieces, bool report);
#endif
