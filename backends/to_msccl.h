/*
 * to_msccl.h: the MSCCL backend's internals, shared by its files and by the
 * tests that look inside them. Nothing else includes it: the backend's
 * interface is msccl_backend and msccl_lower in backend.h, the program form
 * is runtime/msccl_program.h.
 *
 * The lowering's passes, one file each, in the order a width runs them:
 *   to_msccl.c         the driver: msccl_lower's refusals, the bound, the
 *                      searches; the backend that writes the file
 *   to_msccl_bound.c   lower bounds on the steps, before any width is built
 *   to_msccl_search.c  the width search: one width built (build), the
 *                      widths and connection modes tried, staged or plain
 *   to_msccl_layout.c  where chunks lie: positions, homes, write targets
 *   to_msccl_ops.c     the messages of one instance as ops with their
 *                      dependencies; flows that keep their channel
 *   to_msccl_chains.c  a large fan-in's accumulator chains and their `re`
 *   to_msccl_stage.c   staged lowering: receives through scratch
 *   to_msccl_tbs.c     thread blocks per rank, their order and fusion
 *   to_msccl_emit.c    step numbers, waits and nops: the MProg
 *   to_msccl_check.c   the executor's limits and rules, checked before a
 *                      byte is written
 *   to_msccl_xml.c     the XML as the executor's parser reads it
 * and, around them, to_msccl_fit.c: a packing that fits none built again
 * with fewer segments; to_msccl_symfit.c: the same for a symmetric
 * schedule's segments the model chose (`segments auto`).
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
int msccl_lower_counted(Diag *, Arena *, const Sched *, const BuildOpts *, MProg *,
                        MscclStats *);
/* to_msccl_fit.c: what fitting packings learned, kept across the
 * configurations tune lowers a collective's schedules in: per collective,
 * its trees (a PackMemo), the schedules built by segment count, verified
 * once, and the count the last fit chose. Its schedules live in the arena
 * the fits are given, which must outlive it. */
typedef struct MscclFitCache MscclFitCache;
MscclFitCache *msccl_fit_cache_new(void);
void msccl_fit_cache_free(MscclFitCache *);
/* s a packing whose program does not fit: the same trees with the most
 * segments that fit, verified, in *out with its program; -1 (nothing
 * reported) when s is no packing or no segment count fits. With a cache
 * (NULL: none kept) the count the last fit of the collective chose is
 * tried first, and only a refusal there searches below it. */
int msccl_fit_packing(Diag *, Arena *, const Sched *s, const BuildOpts *, MscclFitCache *,
                      const Sched **out, MProg *, MscclStats *);
/* One try of a refit: the schedule of m segments whose program fits (its
 * program into the MProg and stats), or NULL. */
typedef const Sched *(*MscclFitTry)(void *ctx, int m, MProg *, MscclStats *);
/* The most segments that fit, by bisection (fewer segments, fewer steps:
 * what fits at m fits below it): among m = i for i in [lo, hi), or with
 * pow2 m = 2^i, where i = lo's schedule `best` fits (its program in the
 * MProg and stats) or is NULL. *chosen (if not NULL): the m found,
 * unchanged if none. */
const Sched *msccl_fit_most(MscclFitTry try_fit, void *ctx, bool pow2, int lo, int hi,
                            const Sched *best, MProg *, MscclStats *, int *chosen);
/* Whether s is a packing whose chunk count no power of two divides while
 * its blocks are a power of two: msccl_fit_packing builds its trees again
 * with a power of two of units a block (AlgCtx.pack_pow2). */
bool msccl_packing_uncut(const Sched *s);
/* to_msccl_symfit.c: whether s is a symmetric schedule in segments the
 * model chose (`segments auto`), which msccl_fit_symmetric may build again
 * in fewer; and that fit: the most segments, a power of two below s's,
 * whose program fits, verified, in *out with its program; -1 (nothing
 * reported) when none does. */
bool msccl_symmetric_refits(const Sched *s);
int msccl_fit_symmetric(Diag *, Arena *, const Sched *s, const BuildOpts *, const Sched **out,
                        MProg *, MscclStats *);
/* The lowering of s, or, for a packing that fits none, of the same trees
 * with fewer segments (msccl_fit_packing; a note on o->notes says so): the
 * schedule lowered in *used. Reports the first refusal when neither fits. */
int msccl_lower_fit(Diag *, Arena *, const Sched *s, const BuildOpts *, MscclFitCache *, MProg *,
                    MscclStats *, const Sched **used);
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
int msccl_refuse_unfit(Diag *, const Sched *, const MscclBound *, const BuildOpts *);
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
int msccl_check_built(Diag *, const MProg *, const Sched *, bool pieces, bool report);

/* ---- The lowering's state (to_msccl_*.c) ---- */

typedef struct BLoc {
	int buf, off; /* MBuf, chunk; buf -1: not held */
} BLoc;

/* What an op does; a receive or local op's MSCCL type follows from it and
 * from fusion (see emit_op). */
typedef enum OpKind {
	OP_SEND, OP_RECV_COPY, OP_RECV_REDUCE, OP_LOCAL_COPY, OP_LOCAL_REDUCE,
} OpKind;

/* Where an op goes in its round: the sends, the receives, then the `re`
 * that merge accumulator chains. */
typedef enum OpPhase { PH_SEND, PH_RECV, PH_MERGE } OpPhase;

static inline bool
is_recv(OpKind k)
{
	return k == OP_RECV_COPY || k == OP_RECV_REDUCE;
}

typedef struct Op {
	int rank, peer;     /* peer: send peer (send), recv peer (recv), -1 local */
	OpKind kind;
	int round;
	OpPhase phase;
	int seq, chan;
	BLoc src, dst;
	int cnt;
	int *dep;           /* ops of the same rank it waits for */
	int ndep, capdep;
	int tb, step;       /* its tb; its position among the tb's live ops (live_positions) */
	int fused;          /* a recv fused with the send that follows: its op id */
	bool dead;          /* fused into the op before it */
	int hasdep;
	int first, n;       /* its IR chunks: chunk ids in Lower.cl */
	int xop;            /* send: the message's X_REDUCE or X_COPY */
	int reader;         /* the one op reading what it wrote, -1 none, -2 several */
	int overwritten;    /* chunks it wrote that a later op writes again */
	bool nostore;       /* a fused reduce whose value only travels on: rrs */
	int chain;          /* send: the receive's accumulator chain (0: the chunk itself) */
	int host;           /* a local op run in this op's tb, not the local one; -1 */
	int lane;           /* a local op: its local tb (staged: many), 0 otherwise */
	bool chainfirst;    /* ... whose first receive it is: r, not rrc */
	int mate;           /* send: its receive; receive: its send; -1 */
	int fwd;            /* send: the receive whose run it passes on unchanged, -1 */
	bool forwarded;     /* receive: a later send passes its run on (fwd) */
} Op;

/* Many reducing receives of one chunk in one round (k-SP's star: 63 into
 * each root chunk) would each wait for the one before, a chain as long as
 * the fan-in. Instead peer p adds into accumulator chain p mod G: chain 0
 * is the chunk itself, chains 1..G-1 scratch chunks (base + (g-1) * span +
 * home offset - lo), which `re` steps add into the chunk once the round's
 * receives are in. Per rank and round. */
typedef struct Chains {
	int G;              /* 1: no chains */
	int lo, span, base;
	int *last;          /* (g-1) * span + offset: the last receive into it, -2 formed, -1 none */
	int *chunk;         /* offset -> chunk */
} Chains;

typedef struct Lower {
	Diag *diag;  /* where this pass's diagnostics go (the run's, from the driver) */
	Arena *a;
	const Sched *s;
	int R, N, inst, nch, bs;
	bool pinned;        /* each connection keeps one channel: many peers, few tbs */
	int maxcnt;         /* chunks per sending step at most */
	bool unpaired;      /* tbs send or receive, never both: exchanges stream */
	bool mirror;        /* an exchange's higher rank receives first (interleave) */
	bool staged;        /* receives land in scratch, in arrival order, and are copied home
	                       at the end; a reduce-scatter's input is first copied to scratch
	                       in the order its messages take it (stage_inputs) */
	int *pos;           /* IR chunk -> position in the MSCCL vector (allreduce, AG, RS) */
	int *ipos, *opos;   /* alltoall: positions on the source and on the destination */
	BLoc *loc;          /* rank * nchunk + chunk */
	int *lastw;         /* last writing op, -1 */
	int **readers;      /* ops reading since the last write */
	int *nreaders, *capreaders;
	int *scratch;       /* scratch slots used per rank */
	Op *op;
	int nop, capop;
	int *cl;
	int ncl, capcl;
	int *connseq;       /* (src, dst) -> messages so far */
	int *rwritten;      /* (rank, chunk) -> the round batch whose receives write it */
	int batch;          /* the round being lowered, counted over instances */
	int *lastsend;      /* alltoall: (rank, chunk) -> the last round the rank sends it, -1 */
	int *nred;          /* (rank, chunk) -> reducing receives of it this round */
	bool *has0;         /* (rank, chunk) -> one of them comes in on chain 0 */
	Chains *ch;         /* per rank, this round */
	int *occupant;      /* alltoall: rank * N + input offset -> the chunk it holds at first */
	long npassed;       /* sends that pass a receive's run on (passed_on): fusions at most */
} Lower;

typedef struct KeyedChunk {
	int key, c;
} KeyedChunk;

typedef struct TbB {
	int send, recv, chan;
	int lane;  /* a local tb (send and recv -1): its lane */
	int *ops;
	int nops, capops;
	int nstep; /* with nops */
} TbB;

typedef struct RankB {
	TbB *tb;
	int ntb, captb;
} RankB;

typedef struct Built {
	MProg p;
	int nch;
	char why[400];   /* the limit exceeded most (worst rank or tb), for the error */
	double excess;   /* ... its value over the limit: how far from fitting */
	bool by_steps;   /* ... a tb's steps (which spreading over more channels divides) */
	bool pair_over;  /* an exchange's tb (send and receive peer the same) has more ops
	                    than the step limit, nops aside: pinned, at every width */
	bool any_width;  /* ... whatever the channels: no use trying more */
	int flows;       /* runs passed on that kept their flow's channel (keep_flows) */
	long floor;      /* no program of these ops has fewer steps: each fuses at most
	                    the sends that pass a run on, whatever the channels */
} Built;

/* A step waited on in another thread block: its tb and the waited op's
 * position among the tb's live ops (a step number once the tb is numbered). */
typedef struct StepRef {
	int tb, pos;
} StepRef;

/* Per op id: the steps of other tbs it waits for, the latest of each tb,
 * in tb order. Ops of different ranks never meet, so one table serves all. */
typedef struct Waits {
	StepRef **ref;
	int *n;
} Waits;

/* to_msccl_layout.c */
int place_chunks(Lower *, const Layout *, Built *);
BLoc home(Lower *, int r, int c, int inst);
BLoc initial(Lower *, int r, int c, int inst);
BLoc write_target(Lower *, int r, int c, int inst);
BLoc recv_sees(Lower *, int r, int c, int inst);
bool next_to(BLoc a, BLoc b);

/* to_msccl_ops.c */
void add_dep(Lower *, int o, int d);
int new_op(Lower *, int rank, int peer, OpKind, int round, OpPhase);
void push_chunk(Lower *, int o, int c);
void read_chunk(Lower *, int o, int r, int c);
void write_chunk(Lower *, int o, int r, int c, BLoc to);
void alloc_state(Lower *);
void start_instance(Lower *, int inst);
int lower_instance(Lower *, int inst);
int keep_flows(Lower *, int from, int inst);

/* to_msccl_chains.c */
int chain_of(const Lower *, int dst, int c, int src);
int *chain_last(Lower *, int r, int c, int g, int inst, BLoc *at);
void plan_chains(Lower *, int m, int end, int inst);
void merge_chains(Lower *, int round, int inst);
void lower_chain_receive(Lower *, int o, int so, int chain, int inst);

/* to_msccl_stage.c */
bool staged_next(const Lower *, int r, int cp, int c);
int staged_lane(int q);
void stage_inputs(Lower *, int inst);

/* to_msccl_tbs.c */
int form_tbs(Lower *, RankB *, Built *);

/* to_msccl_emit.c */
int **plan_rank(Lower *, RankB *, Waits *, int r, int maxsteps, Built *, int *worst);
void emit_rank(Lower *, RankB *, Waits *, int **stepof, int r, int *line, MGpu *);
void mark_hasdep(MProg *);
MProto build_proto(const BuildOpts *);
void fill_header(MProg *, const Lower *, const BuildOpts *, int nch);

/* to_msccl_check.c */
bool nodes_over(const RankB *, int R, Built *);
int check_width(Diag *, const MProg *, const Sched *, bool pieces, bool last);

/* to_msccl_xml.c */
int write_xml(const MProg *, FILE *);

/* to_msccl_search.c: msccl_lower past the bound (its refusal): the searches */
int lower_checked(Diag *, Arena *, const Sched *, const Layout *, const MscclBound *,
                  const BuildOpts *, MProg *, MscclStats *);
#endif
