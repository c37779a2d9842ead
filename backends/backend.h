/*
 * backend.h: the backends layer. Each backend writes a built program
 * (read-only) to a stream; the driver owns files, writing them whole.
 */
#ifndef COLLC_BACKEND_H
#define COLLC_BACKEND_H

#include "ir.h"

typedef struct BuildOpts {
	const char *collective; /* --collective NAME, or NULL for every one (or the first) */
	int tree_copy;          /* --tree-copy N: dot draws copy N of the base trees */
	int channels;           /* msccl --channels N: spread each connection over N (0: 1) */
	int instances;          /* msccl --instances N: replicate the program (0: 1) */
	const char *proto;      /* msccl --proto Simple|LL|LL128 (NULL: Simple) */
	bool legacy;            /* msccl --legacy: the microsoft/msccl dialect */
	int64_t min_bytes;      /* msccl --min-bytes: selected from this size (0: any) */
	int64_t max_bytes;      /* msccl --max-bytes: up to this size, inclusive (0: any) */
	bool with_main;         /* --with-main: mpi adds a main that checks against MPI */
	const char *prefix;     /* mpi-lib --prefix P: P.c, P.h, names P_... (NULL: collc) */
	int64_t bytes;          /* --size: the vector of size-dependent outputs (chakra) */
} BuildOpts;

typedef struct Backend {
	const char *name;   /* --target NAME */
	const char *suffix; /* default output suffix */
	/* 0, or -1 after reporting (the driver's diag source is the .coll) */
	int (*emit)(const Prog *, const BuildOpts *, FILE *);
} Backend;

/* A backend that writes a directory of files (one per rank): it writes
 * them under a temporary name and renames the directory when complete. */
typedef struct DirBackend {
	const char *name;
	int (*emit_dir)(const Prog *, const BuildOpts *, const char *dir);
} DirBackend;
extern const DirBackend chakra_backend;
const DirBackend *backend_find_dir(const char *name);

extern const Backend dot_backend, ir_backend, mpi_backend, msccl_backend;
/* irread.c: the schedule text that ir_backend (irtext.c) writes, back into
 * a Prog; -1 after reporting. */
int ir_read(const char *text, size_t len, Prog *);
bool ir_is_text(const char *text, size_t len);
/* msccl.c: a schedule as an MSCCL program, checked by every rule; -1 after
 * reporting (a limit names its value and the collective's line). */
struct MProg;
int msccl_lower(Arena *, const Sched *, const BuildOpts *, struct MProg *);
/* What msccl_lower did to find its program: emission is linear in the XML
 * when one program is built and checked (the bound's estimate was right). */
typedef struct MscclStats {
	int widths;    /* width attempts lowered (a limit over stops one before its steps) */
	int programs;  /* programs built whole and checked */
} MscclStats;
int msccl_lower_counted(Arena *, const Sched *, const BuildOpts *, struct MProg *,
                        MscclStats *);
/* msccl_bound.c: lower bounds on a schedule's MSCCL steps per connection
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
	bool *chosen;      /* the ranks bounded */
	/* the largest k such that two ranks (one chosen) send each other runs
	 * of k chunks in one round (at 71 a step; contiguous at both ends, as
	 * far as the layout tells): an exchange whose tbs both send first
	 * stops chunk by chunk once k exceeds a connection's calls. [0] with
	 * one instance, [1] with several (their homes interleave blocks) */
	int exchange_run[2];
} MscclBound;
void msccl_bound_build(const Sched *, const Layout *, MscclBound *);
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
int msccl_check_built(const struct MProg *, const Sched *, bool pieces, bool report);
extern const Backend sim_backend;
const Backend *backend_find(const char *name);
const char *backend_names(void); /* "dot, ir" */
const char *const *backend_name_list(int *n); /* the names of backend_names() */

/* Which schedules a build covers: the named one, or all. -1 if no match. */
int backend_select(const Prog *, const BuildOpts *, const Sched **out, int max);

#endif
