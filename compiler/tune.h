/*
 * tune.h: what `collc tune`'s files share (cmd_tune.c: the candidates, the
 * choice, the plan and its deployment; tune_print.c: the table, CSV, JSON
 * and plot). Nothing outside them includes it.
 */
#ifndef COLLC_TUNE_H
#define COLLC_TUNE_H

#include "driver.h"
#include "tune_prog.h"

enum { TUNE_MAX_CANDS = NALG + 64 };

typedef struct TuneArgs {
	const char *path, *out, *plot, *collective;
	const char *msccl_dir;  /* --msccl-dir DIR: one XML per range */
	const char *mpi_lib, *prefix; /* --mpi-lib DIR [--prefix P]: P.c and P.h */
	double sizes[MAX_SIZES];
	int nsize;
	bool csv, json;
	SimOpts opts;
	bool mode_set;          /* --mode given (the programs' default is flow) */
	/* MSCCL per range: --proto, --instances, --channels fix them (0 / NULL:
	 * chosen per range, msccl_pick; channels by the backend's width search) */
	const char *proto;
	int instances, channels;
	Defines defs;           /* -D NAME=V: the file's parameters */
} TuneArgs;

/* One candidate of one collective: its figures at every size. */
typedef struct Cand {
	const char *key;     /* "ring", "AR: symmetric" (the plot's series) */
	const char **label;  /* per size: the key with what it chose, NULL if it did not run */
	double *time_s;      /* per size; < 0: did not run there */
	const Sched **sched; /* per size: the schedule that ran (for a deployment) */
	ProgPick *prog;      /* --msccl-dir, per size: its fastest program (time_s < 0: none
	                      * fits, or not ranked: slower by its schedule; rank_programs) */
} Cand;

/* One collective's tuning. */
typedef struct Tuned {
	const Sched *s;
	Cand *cand;
	int ncand;
	int *best, *second;  /* per size: candidate indices; second -1 if alone */
	Routes routes;       /* the library candidates' (kept with them, for deployment) */
	PackMemo *pack_memo; /* packing's trees, the same at every size (kept with them too) */
	double busbw_factor;
	double bound;        /* GB/s: the busbw bound on its topology (bound.h) */
	int *built_instances; /* per size: the instances its range's MSCCL file was built
	                       * with (--msccl-dir; fewer than the model's where those did
	                       * not fit), 0 before it is built */
	int *built_choice;    /* per size: the candidate its range's file holds (the next
	                       * fastest that fits where the choice does not), -1 before */
	bool by_program;      /* ranked by the MSCCL program (--msccl-dir; rank_programs) */
	double *ref_s;        /* by the program, per size: the aim's reference, the choice's
	                       * schedule as the executor runs it (prog_sched_time), < 0 if
	                       * it cannot run so; NULL before */
	int *ref_proto;       /* its protocol (MProto) */
} Tuned;

typedef struct Tuner {
	Arena arena;         /* candidates, nets, results */
	TuneArgs *a;
	SizedFile sized;
	Tuned *t;
	int nt, capt;
	bool tty, shown;
	ProgCache *progs;    /* --msccl-dir: the programs lowered, reused across sizes */
} Tuner;

typedef struct MscclPick {
	int proto, instances;
	int channels;        /* per instance, by the program (0: the backend's fewest) */
	int nchannels;       /* by the program: its channels, every instance's (0: not ranked) */
	int model_instances; /* the model's, where the file was built with fewer */
	bool split;          /* by the program: tbs that only send or only receive */
	bool proto_fixed, instances_fixed, channels_fixed;
} MscclPick;

/* cmd_tune.c */
/* What candidate i is ranked by at size k: its schedule's simulated time,
 * or by the program, its program's (< 0: left out there). */
double tune_rank_time(const Tuned *t, int i, int k);
bool tune_msccl_kind(CollKind k);
/* The aim's reference at size k (by the program): the choice's schedule
 * as the executor runs it (Tuned.ref_s), else its simulated time. */
double tune_ref_time(const TuneArgs *a, const Tuned *t, int k);
MscclPick tune_msccl_pick(const TuneArgs *a, const Tuned *t, int k);
int tune_range_end(const TuneArgs *a, const Tuned *t, int i, bool by_msccl);
void tune_range_of(const TuneArgs *a, int i, int j, double *lo, double *hi);
/* tune_print.c */
double tune_busbw_at(const Tuned *t, const TuneArgs *a, int k);
double tune_busbw_of(const Tuned *t, const TuneArgs *a, int k, double time);
/* The candidates the plan's programs are compared with, the multi-channel
 * ring (ring; nccl_ring on rails): each gets its program at every size. */
bool tune_ring_baseline(const char *key);
void tune_print_table(const Tuner *u, FILE *f);
void tune_print_csv(const Tuner *u, FILE *f);
void tune_print_json(const Tuner *u, FILE *f);
int tune_plot(Diag *dg, const Tuner *u);

#endif
