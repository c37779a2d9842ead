/*
 * sweep.h: `collc sweep`'s spec and points, shared by its three files:
 * sweep_spec.c reads and checks a spec (and the .coll file it names) into
 * the grid, sweep_unit.c builds and simulates the points of one unit in a
 * worker, cmd_sweep.c runs the workers and writes the rows
 * (docs/sweep.md).
 */
#ifndef COLLC_SWEEP_H
#define COLLC_SWEEP_H

#include <stdbool.h>

#include "driver.h"
#include "sim.h"

enum { NOTE_LEN = 160, MAX_PAIRS = NCOLLKIND * MAX_SWEEP_VALUES, MAX_SWEEP_PARAMS = 8 };

/* The network keys a spec may list, in column order (sweep_spec.c). */
/* The network parameters a sweep varies: the registry's `swept` ones. */
enum { NNET = 5 };
const char *net_key(int k); /* k < NNET */

typedef struct List {
	const char *v[MAX_SWEEP_VALUES];
	Loc at[MAX_SWEEP_VALUES]; /* where each value is in the spec */
	Loc key;            /* its key's line (line 0: not in the spec) */
	int n;
} List;

/* One (collective, algorithm) of the grid: a library algorithm of a kind,
 * or a collective of the spec's .coll file. */
typedef struct Pair {
	int kind;           /* CollKind */
	const char *alg;    /* the `algorithm` column: as written */
	const char *name;   /* file: the collective's name */
	const char *topo;   /* file: its topology's form */
	const char *route;  /* file: its own routing */
	int decl;           /* file: its declaration */
	Loc at;             /* where the spec names it */
} Pair;

/* The spec's .coll file, parsed and checked once (workers inherit it). */
typedef struct CollFile {
	const char *path;
	char *text;
	size_t len;
	Arena arena;
	File *f;
} CollFile;

typedef struct Spec {
	const char *path;
	char *orig;                /* the spec as read, for diagnostics */
	size_t orig_len;
	List topo, groups, routing, net[NNET], file, colls;
	List alg[NCOLLKIND];       /* per collective kind: its algorithms */
	double sizes[MAX_SWEEP_VALUES];
	Loc sizes_at;
	int nsize;
	SimOpts opts;
	bool route_given;          /* a routing line (file: else each collective's own) */
	CollFile cf;               /* file mode when cf.f */
	const Block *net_block[NNET][MAX_SWEEP_VALUES]; /* file: `network { key = value; }` */
	/* file: `param NAME = A, B, ...` lines, the file's parameters swept; a
	 * combination of their values (the last fastest) is the unit's topo
	 * coordinate, ncombo of them (1 without param lines) */
	const char *param_name[MAX_SWEEP_PARAMS];
	List param[MAX_SWEEP_PARAMS];
	int nparam, ncombo;
	Arena mem;                 /* labels, net blocks */
	/* derived: the units in order */
	int nunit;
	int per_topo, per_group, per_pair, per_route; /* strides of the nesting */
	int npair;
	Pair pair[MAX_PAIRS];
} Spec;

/* One unit decoded from its number. */
typedef struct Unit {
	int topo, group, pair, route, net[NNET];
} Unit;

/* What a worker sends back for one point (one write, under PIPE_BUF). */
typedef struct Record {
	int point;
	bool ok;
	int nrank;
	double time_s;
	double work;       /* ok: the messages it built and simulated (the progress
	                    * estimate's model of a point's cost is checked on it) */
	Loc at;            /* failed: the spec's value to blame */
	Loc coll_at;       /* failed in the .coll file: where collc's message points */
	char note[NOTE_LEN]; /* ok: auto's choice; failed: collc's message */
} Record;

/* Reads SPEC into s (the grid checked, a named .coll file parsed and
 * checked); the text stays allocated in *text (the lists point into it).
 * 0, or -1 after a located error. */
int spec_read(Diag *, const char *path, Spec *s, char **text);
void spec_free(Spec *, char *text);
/* A located error in the spec (its line quoted, a caret); -1. */
int spec_error(Diag *, const Spec *, Loc, const char *fmt, ...) PRINTF_LIKE(4, 5);
/* The first error of a captured diagnostic: its message (after "error: ")
 * into note (NOTE_LEN), and where it points in the file `name` (line 0:
 * nowhere). */
Loc first_error(const char *diag, const char *name, char *note);
/* File mode: the -D values of parameter combination c (Unit.topo), and
 * its label ("n=4 k=2"; "" without param lines). */
void spec_combo(const Spec *, int c, Defines *out);
void combo_label(const Spec *, int c, char *buf, size_t len);
/* Unit u's coordinates in the grid. */
Unit unit_of(const Spec *, int u);
/* Builds unit u and simulates its points in the shard but those `skip`
 * marks (NULL: none), one Record each written to fd: how many, or -1 once
 * a point failed (the worker stops there). */
int run_unit(Diag *, const Spec *, int u, int shard, int nshard, const bool *skip, int fd);
/* The unit a sweep runs i-th (cmd_sweep.c): a stride of about 0.618 nunit,
 * prime to nunit, so every stretch of the run samples the whole grid (small
 * and large groups, every topology and algorithm) and the points done so
 * far cost what the average point costs. */
int unit_at(int nunit, int i);
/* The progress estimate's model of point p's cost, up to a factor: its
 * ranks (a ring moves p messages a round; the grid's points cost 2 to 8064
 * messages from 2 to 64 ranks), the largest group for `all`, 1 for a
 * .coll file's collectives (not known before they are built). */
double point_weight(const Spec *, long p);
/* The seconds left when points of weight `done` of `total` took `elapsed`:
 * the done points' cost per weight times the weight left (unit_at makes
 * the done points a fair sample of the grid). */
double sweep_left(double done, double total, double elapsed);

#endif
