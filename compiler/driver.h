/*
 * driver.h: the command line's shared pieces (driver.c). Each command is a
 * function `int cmd_NAME(int argc, char **argv)` returning the exit status:
 * 0 success, 1 errors in the input, 2 bad usage.
 */
#ifndef COLLC_DRIVER_H
#define COLLC_DRIVER_H

#include <stdbool.h>

#include "ast.h"
#include "backend.h"
#include "ir.h"
#include "sim.h"

typedef struct Input {
	Arena arena;
	char *text;
	File *file;  /* a .coll file */
	Prog prog;   /* built (build), or read from an IR file */
	bool is_ir;
	const char *only; /* set before load: verify only this collective (--collective) */
	bool progress;    /* set before load: "verifying 'X' (i of n)" on a terminal */
	bool full_verify; /* set before load: symmetric schedules proved on their expansion too
	                     (check --full-verify; verify_full) */
	const Defines *defs; /* set before load: the command line's -D values (or NULL) */
} Input;

/* The -D option of the commands that load a .coll file (check, build, sim,
 * tune, explain, run), and its handler: defs takes value; 0, or 2 after a
 * usage error naming cmd. */
#define DEFINE_OPT {"define", 'D', "NAME=V", "set the file's parameter NAME to the integer V (repeatable)"}
int define_opt(const char *cmd, Defines *, const char *value);

/* "collc: MESSAGE" and a hint on stderr; returns 2. */
int usage_error(const char *fmt, ...) PRINTF_LIKE(1, 2);
/* Reads, parses and checks path; with `build` lowers it to the IR too (an
 * IR file is read instead), `auto` choosing for `size` bytes, and verifies
 * every schedule (or in->only's): the one place schedules are proven, so
 * nothing unverified reaches a command. 0 if clean. */
int load(Diag *, const char *path, Input *, bool build, double size);
void input_free(Input *);
/* The one way from a checked file to schedules (load and sweep take it):
 * lowered, then every schedule (or only's) verified; 1 after reporting. */
int lower_verified(Diag *, File *, Prog *, const char *only, bool progress, bool full);
/* The verifier over p's schedules (or only's); an IR file's too. A
 * symmetric schedule is proved by symmetry (verify), and with `full` on
 * its expansion as well (verify_full). */
int verify_prog(Diag *, const Prog *, const char *only, bool progress, bool full);
/* The error for --collective NAME naming no built schedule, with the
 * nearest name. */
void no_schedule_named(Diag *, const Prog *, const char *name);
/* "1MiB", "64 KiB", "1048576": bytes, or -1. */
double parse_size(const char *);
/* A size on the command line: a whole number of bytes, at least 1; -1 if
 * not one, -2 beyond MAX_SIZE_BYTES (collc_limits.h). */
double parse_bytes(const char *);
/* The limit, as messages name it. */
#define SIZE_LIMIT_TEXT \
	"2^53 - 1 bytes (just under 8 PiB), the largest size collc represents exactly (docs/limits.md)"
/* The usage error for --opt value refused by parse_bytes (got): its limit
 * for -2, else "CMD: --OPT takes WANT"; returns 2. */
int size_usage(const char *cmd, const char *opt, const char *value, double got, const char *want);
/* A number with an optional unit of the given kind, in the kind's base
 * unit (bytes, bits/s, seconds, joules); a plain number as is; -1 if bad. */
double parse_quantity(const char *, QtyKind);
/* s as a JSON string. */
void json_string(FILE *, const char *s);
/* "64 KiB", "1.50 MiB"; "16.722 us" */
void human_bytes(double bytes, char *buf, size_t len);
void human_time(double seconds, char *buf, size_t len);
/* "64.00 KiB", "1.50 MiB": two decimals above bytes, for table columns */
void human_bytes_fixed(double bytes, char *buf, size_t len);
/* "64KiB..256MiB" (every power of two from A to B) or "1KiB,4KiB,1MiB",
 * of any length: whole numbers of bytes into sizes (at most max); their
 * count, or -1 with what is wrong in err. */
int parse_size_list(const char *arg, double *sizes, int max, char *err, size_t errlen);
/* --sizes of sim and tune: value into sizes (at most MAX_SIZES) and *n;
 * 0, or 2 after a usage error naming cmd and the forms it takes. */
int sizes_opt(const char *cmd, const char *value, double *sizes, int *n);

/* A .coll file lowered again for each size a schedule chose something for
 * (Sched.size_chosen: auto's pick, segments, chunks, reconfigurations), so that
 * what runs at a size depends on that size alone. The caller loaded it
 * once for `base` bytes; set path and base, zero the rest. */
typedef struct SizedFile {
	const char *path;
	const Defines *defs; /* the -D values it was loaded with */
	double base;
	Input *in;      /* nin loads, for size[i] */
	double *size;
	int nin, cap;
	bool listed;    /* Prog.listed of the loads (simulated by dependencies) */
} SizedFile;
/* s as built for `size`: s itself when it chose nothing for the size (or
 * size is base), else the same collective of the file lowered and verified
 * for size. NULL after reporting. */
const Sched *sched_for_size(Diag *, SizedFile *, double size, const Sched *s);
void sized_free(SizedFile *);
/* "pipelined_trees (segments 12)": prefix, the algorithm and what it
 * chose (Sched.choice), for the algorithm column of rows and plans. */
const char *sched_label(Arena *, const char *prefix, const Sched *);
/* The AlgCtx of a schedule's collective, to build it with another
 * algorithm (auto's candidates, tune's). */
AlgCtx alg_ctx_of(Diag *, Arena *, const Sched *, Routes *);

/* s as the simulator's input: streamed round by round where it can be
 * (sync rounds), else with every message's dependencies. 0, or -1 after
 * reporting. */
int sched_to_sim(Diag *, Arena *, const Sched *, SimSync, SimNet *);

/* One candidate simulated: its schedule, input and result (arena memory). */
typedef struct Simulated {
	const Sched *s;
	SimNet *net;
	SimResult r;
} Simulated;
/* s simulated at `size` with o; false (nothing said) if the simulator
 * cannot run it there. */
bool simulate_one(Diag *, Arena *, const Sched *s, double size, const SimOpts *o, Simulated *x);
/* The library's candidates for s's collective at `size`, as `auto` has
 * them (alg_auto: what the language accepts, built for the size), each
 * simulated with o; those the simulator cannot run are left out. Their
 * count, in out[0..NALG). The candidates hold on to routes (on s's
 * topology, by s->routing: the file's, as s's own): free it after them. memo
 * (or NULL) keeps `packing`'s trees from one size to the next of the same
 * collective; it too outlives the candidates. `auto` in sim and sweep takes
 * the fastest; tune shows them all. */
int simulate_candidates(Diag *, Arena *, Routes *routes, PackMemo *memo, const Sched *s, double size,
                        const SimOpts *o, Simulated *out);
/* The fastest of out[0..n), or -1 if n is 0. */
int fastest(const Simulated *out, int n);

/* --mode packet|flow and --sync rounds|deps (sim, tune) into o; 0, or 2
 * after a usage error naming the choices. SIM_MODE_OPTS: their table rows. */
#define SIM_MODE_OPTS \
	{"mode", 0, "M", "packet (default) or flow"}, {"sync", 0, "S", "rounds (default) or deps"}
int sim_mode_opt(const char *cmd, const char *name, const char *value, SimOpts *o);
/* Whether path names an SVG file (plots are SVG only: a .png would be SVG
 * under the wrong name). */
bool is_svg_name(const char *path);

/* Writes what m holds to out ("-" or NULL: stdout) whole and frees it;
 * 1 after reporting. */
int write_output(const char *out, MemOut *m);

#endif
