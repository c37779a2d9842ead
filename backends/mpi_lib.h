/*
 * mpi_lib.h: the MPI library target (to_mpi_lib.c) and what it shares with the
 * MPI target (to_mpi.c). A library is written from a plan: a list of entries,
 * each a collective kind on a rank count (to a root, for the rooted kinds)
 * over a range of sizes, and the verified schedule that runs it. `build
 * --target mpi-lib` makes a plan of a file's collectives (each its own
 * entry over every size); a tuner that chooses per size makes plans of
 * several ranges per collective and writes them with mpi_lib_write.
 */
#ifndef COLLC_MPI_LIB_H
#define COLLC_MPI_LIB_H

#include <stdio.h>

#include "backend.h"

#define MPI_LIB_ANY_SIZE INT64_MAX /* an entry's hi: no upper bound */

typedef struct MpiLibEntry {
	CollKind kind;
	int nrank;
	int root;           /* broadcast and reduce: the root rank; the other kinds: -1 */
	int64_t lo, hi;     /* sizes [lo, hi) in bytes, as nccl-tests counts them (docs/mpi.md) */
	const Sched *sched; /* of this kind, rank count and root */
} MpiLibEntry;

typedef struct MpiLibPlan {
	int nentry;
	const MpiLibEntry *entry; /* a call runs the first entry it matches */
} MpiLibPlan;

/* The plan of the collectives o selects in p (all, or --collective's),
 * each its own entry over every size, in the file's order (allocated in
 * the arena). 0, or -1 after reporting. */
int mpi_lib_plan_of(Diag *, Arena *, const Prog *, const BuildOpts *, MpiLibPlan *);

/* Writes plan's library: the source to c, the header to h (which c
 * includes as "header"); every external name starts with prefix and '_'.
 * 0, or -1 after reporting (nothing useful was written): a prefix that is
 * not a C identifier, an entry that does not match its schedule, an empty
 * range, two schedules of one name, a name that is one of the library's
 * own. Two entries of one kind, rank count and root whose ranges overlap
 * are noted: each schedule keeps its entry point, the dispatchers take the
 * first, and the PMPI drop-in refuses to compile. */
int mpi_lib_write(Diag *, FILE *c, FILE *h, const MpiLibPlan *, const char *prefix, const char *header);

/* The same into dir (made if missing): dir/PREFIX.c and dir/PREFIX.h, each
 * written whole (nothing is written when the plan is refused). 0, or -1
 * after reporting. */
int mpi_lib_write_dir(Diag *, const MpiLibPlan *, const char *prefix, const char *dir);

extern const DirBackend mpi_lib_backend;

/* ---- to_mpi.c's parts, which the library writes too ---- */

/* The MPI runtime, the library's part and --with-main's main
 * (backends/mpi/runtime.c, lib.c and main.c), embedded at build time. */
extern const char collc_mpi_runtime_text[], collc_mpi_lib_text[], collc_mpi_main_text[];
/* Text's lines from the one holding `from` to the one before the line
 * holding `to` (NULL: to the end): where they start, and *len bytes. */
const char *mpi_part(const char *text, const char *from, const char *to, size_t *len);
/* Writes them, after a blank line. */
void mpi_write_part(FILE *, const char *text, const char *from, const char *to);
/* The runtime's part both targets write once: collc_lib_own, the
 * duplicate communicator a schedule runs on. */
#define MPI_COMM_FROM "/* ---- the communicator ---- */"
#define MPI_COMM_TO "/* ---- end of the communicator ---- */"
/* The schedule's constants (NRANK, NCHUNK, ...) and tables, as the
 * interpreter reads them. */
void mpi_write_tables(const Sched *, FILE *);
/* The function running s on a duplicate of its communicator, named fn,
 * after `storage` ("" or "static "). */
void mpi_write_function(const Sched *s, const char *fn, const char *storage, FILE *);
/* Whether fn is a name the runtime defines (an entry point named so would
 * not compile). */
bool mpi_name_taken(const char *fn);
/* Its parameters, those of MPI's counterpart with size_t counts. */
const char *mpi_signature(CollKind);

#endif
