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
	FILE *notes;            /* where a backend says what it chose (msccl: channels,
	                           instances, protocol), or NULL: `collc build` passes stderr */
	bool by_program;        /* msccl: channels, instances and protocol are the fastest
	                           program's in the executor model (auto, tune_prog.c) */
	bool split_tbs;         /* msccl: tbs that only send or only receive, never both
	                           (tune's program search, tune_prog.c) */
} BuildOpts;

typedef struct Backend {
	const char *name;   /* --target NAME */
	const char *summary; /* one line of `collc help build`'s target list */
	const char *suffix; /* default output suffix */
	/* 0, or -1 after reporting (the driver's diag source is the .coll) */
	int (*emit)(Diag *, const Prog *, const BuildOpts *, FILE *);
} Backend;

/* A backend that writes a directory of files (one per rank): it writes
 * them under a temporary name and renames the directory when complete. */
typedef struct DirBackend {
	const char *name;
	const char *summary;
	int (*emit_dir)(Diag *, const Prog *, const BuildOpts *, const char *dir);
} DirBackend;
extern const DirBackend chakra_backend;
const DirBackend *backend_find_dir(const char *name);

extern const Backend dot_backend, ir_backend, mpi_backend, msccl_backend;
/* irtext_read.c: the schedule text that ir_backend (to_irtext.c) writes, back into
 * a Prog; -1 after reporting. */
int ir_read(Diag *, const char *text, size_t len, Prog *);
bool ir_is_text(const char *text, size_t len);
/* to_msccl.c: a schedule as an MSCCL program, checked by every rule; -1 after
 * reporting (a limit names its value and the collective's line). The
 * backend's internals (its search, the bound) are in to_msccl.h. */
struct MProg;
int msccl_lower(Diag *, Arena *, const Sched *, const BuildOpts *, struct MProg *);
/* to_msccl.c: program p, lowered from sched with o, as `collc build --target
 * msccl` writes it: the note of what was chosen on o->notes (staged: its
 * receives go through scratch), then the XML with its comments. 0, or -1
 * after reporting. */
int msccl_write(Diag *, const Sched *, const struct MProg *, const BuildOpts *, bool staged,
                FILE *);
extern const Backend sim_backend;
const Backend *backend_find(const char *name);
/* The targets, in backend.c's one table: their names (up to max; the
 * count), "ir, dot, ..." into buf, and the help's list, a line each. */
int backend_target_names(const char **names, int max);
void backend_names(char *buf, size_t len);
void backend_print_targets(FILE *);

/* A backend with no operation for in-network reduction (Sched.fuse: NVLS,
 * SHARP) refuses such a schedule: -1 after a located error naming the
 * target, else 0. */
int backend_refuse_in_network(Diag *, const Sched *, const char *target);

/* Which schedules a build covers: the named one, or all. -1 if no match. */
int backend_select(const Prog *, const BuildOpts *, const Sched **out, int max);

#endif
