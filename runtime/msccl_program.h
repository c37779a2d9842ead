/*
 * msccl_program.h: the MSCCL program form (an algorithm XML file as plain data),
 * its reader and validator, and the CPU interpreter (collc run). The
 * format, its limits and the 16 rules are in docs/msccl.md, numbered as the
 * errors cite them. Each element keeps its
 * XML line so every message can point at it.
 */
#ifndef COLLC_MSCCL_H
#define COLLC_MSCCL_H

#include <stdbool.h>
#include <stdint.h>

#include "base.h"
#include "refdata.h"

/* The executor's limits (spec section 7) and the rules' safe values (13). */
enum {
	MSCCL_MAX_STEPS = 64,         /* steps per tb, nops included (legacy: 256) */
	MSCCL_MAX_STEPS_LEGACY = 256,
	MSCCL_MAX_TBS = 64,           /* tbs per rank collc writes (RCCL's limit, safe everywhere) */
	MSCCL_MAX_TBS_EXEC = 1024,    /* tbs per rank the executor reads (32 x MAXCHANNELS) */
	MSCCL_MAX_TBS_LEGACY = 216,   /* ... and the legacy runtime */
	MSCCL_MAX_TBS_PER_CHAN = 32,  /* sending (and receiving) tbs per channel */
	MSCCL_MAX_CHANNELS = 32,
	MSCCL_MAX_COUNT = 72,         /* cnt < 72 */
	MSCCL_MAX_REDUCE_FUSION = 16, /* re steps the executor fuses into one reduction */
	MSCCL_MAX_DEPID = 127,        /* int8 */
	MSCCL_MAX_OFFSET = 32767,     /* int16 */
	MSCCL_MAX_NODES = 4095,       /* elements the parser stores per rank: <algo>, every
	                               * <gpu>, the rank's <tb>s and <step>s (4096 slots; it
	                               * refuses the file once the last is taken) */
	MSCCL_MAX_VALUE = 255,        /* bytes of an attribute value (MAX_STR_LEN) */
	MSCCL_MAX_GPUS = 1024,        /* what collc checks and runs: the symbolic check
	                               * holds a set of up to ngpus contributions per chunk */
};

typedef enum MType {
	MT_S, MT_R, MT_RCS, MT_RRS, MT_RRC, MT_RRCS, MT_CPY, MT_RE, MT_NOP, NMTYPE,
} MType;
extern const char *const mtype_name[NMTYPE];
bool mtype_sends(MType);
bool mtype_recvs(MType);
bool mtype_reads_src(MType);  /* uses srcbuf/srcoff */
bool mtype_writes_dst(MType); /* uses dstbuf/dstoff */

typedef enum MBuf { MB_I, MB_O, MB_S } MBuf;
typedef enum MProto { MP_SIMPLE, MP_LL, MP_LL128, NPROTO } MProto;
typedef enum MColl {
	MC_ALLREDUCE, MC_ALLGATHER, MC_REDUCESCATTER, MC_ALLTOALL, MC_BROADCAST, MC_REDUCE,
	MC_CUSTOM,
} MColl;
extern const char *const mproto_name[NPROTO];

typedef struct MStep {
	int s;
	MType type;
	MBuf srcbuf, dstbuf;
	int srcoff, dstoff, cnt;
	int depid, deps;
	int hasdep;
	int line;
} MStep;

typedef struct MTb {
	int id, send, recv, chan;
	int line;
	int nstep;
	MStep *step;
} MTb;

typedef struct MGpu {
	int id;
	int i_chunks, o_chunks, s_chunks;
	int line;
	int ntb;
	MTb *tb;  /* indexed by id once validated */
} MGpu;

typedef struct MProg {
	const char *name;
	MProto proto;
	int nchannels, nchunksperloop, ngpus;
	MColl coll;
	const char *coll_name;  /* as written */
	int inplace, outofplace;
	int64_t min_bytes, max_bytes;
	bool legacy;            /* legacy dialect: no outofplace, exclusive maxBytes */
	int line;
	int ngpu;
	MGpu *gpu;              /* indexed by id once validated */
} MProg;

/* Thread blocks numbered over the whole program, and who is connected to
 * whom: tb t of gpu g is base[g] + t (base[ngpus] is the total); for each
 * tb with a recv peer, the peer's tb sending to it on its channel, and for
 * each tb with a send peer, the peer's tb receiving from it (-1: none). */
typedef struct MIndex {
	int *base;
	int ntb;
	int *sender, *receiver;
	int *rank;         /* global tb -> its gpu */
} MIndex;
void msccl_index(const MProg *p, MIndex *ix);
void msccl_index_free(MIndex *ix);

/* msccl_read.c: reads an algorithm file into p (memory from a), checking
 * the lexical form of rule 1 and rules 2-13 and 16 (msccl_check.c).
 * Diagnostics go through error_at against diag_source(path, text). 0 or -1. */
int msccl_read(Diag *, Arena *a, const char *text, size_t len, bool legacy, MProg *p);

/* msccl_check.c: rules 2-13 and 16 on a program in memory (read, or built by
 * the backend), each failure reported with its rule and XML line. */
int msccl_check(Diag *, const MProg *p);
/* Rules 14, 15 and 17 without data: runs the program step by step with
 * bounded FIFOs (capacity in messages) and symbolic values in every
 * declared mode. With pieces, a step moves chunk by chunk, a message per
 * chunk (the executor's Simple calls at large sizes, spec rule 14), and
 * only the flow is run (msccl_check_flow: call it on a program that
 * passed without pieces). Else a message per step, and steps of one rank
 * that touch the same chunk unordered (rule 17) are found. Reports a
 * deadlock, a race or a wrong result; 0 or -1. Work O(steps x chunks x
 * ngpus / 64). */
int msccl_check_run(Diag *, const MProg *p, int capacity, bool pieces);
/* Rule 14 and the matching of cnt alone: FIFOs and flags, no values, no
 * races, in one declared mode. Whether a step can move depends on flags
 * and FIFOs only, never on the data or the aliasing, so one mode decides
 * the deadlock for both. O(steps), or O(steps x cnt) with pieces. */
int msccl_check_flow(Diag *, const MProg *p, int capacity, bool pieces);
/* The root of a broadcast (the one gpu that receives nothing) or a reduce
 * (the one that sends nothing); -1 if none or several, or another coll. */
int msccl_root(const MProg *p);
int msccl_capacity(MProto);   /* Simple 2, LL and LL128 8 (spec section 5) */
/* The true buffer sizes in chunks (spec section 4). */
int msccl_ichunks(const MProg *p);
int msccl_ochunks(const MProg *p);
/* The size multiplier: ngpus for allgather, reducescatter and alltoall. */
int msccl_multiplier(const MProg *p);
/* Rule 16 at run time: whether the executor selects the program for a total
 * of `bytes` (the larger buffer) of elements of es bytes: a whole number of
 * elements per chunk, inside [minBytes, maxBytes] (legacy: maxBytes
 * exclusive). */
bool msccl_selects(const MProg *p, int64_t bytes, size_t es);
/* The selected size nearest to `want` (the smaller one on a tie), or -1 if
 * the program's range holds none. */
int64_t msccl_nearest_size(const MProg *p, int64_t want, size_t es);
/* Where chunk off of buffer b lives on a rank, with the runtime's in-place
 * aliases applied (spec section 4): the real buffer, and the offset in it. */
int msccl_resolve(const MProg *p, int rank, bool inplace, MBuf b, int off, MBuf *real);
/* The real buffer's length in chunks on a rank (scratch: s_chunks). */
int msccl_buf_chunks(const MProg *p, int rank, MBuf real);
/* The tb of a rank with the given id (validated programs: tb[id]). */
const MTb *msccl_tb(const MProg *p, int rank, int id);

/* msccl_run.c: the CPU interpreter. */
typedef struct RunOpts {
	int64_t bytes;    /* total bytes of the larger buffer (count * multiplier * size) */
	RDtype dtype;
	ROp op;
	bool inplace;
	int capacity;     /* FIFO slots per connection; 0 = the protocol's */
	double timeout;   /* seconds without progress before a deadlock is declared */
	bool quiet;       /* no per-run lines on stdout */
} RunOpts;

typedef struct RunResult {
	double seconds;   /* the collective alone, threads started */
	int64_t bytes;    /* of the larger buffer */
	bool verified;    /* the postcondition was checked and holds */
	bool checked;     /* a postcondition exists (not coll="custom") */
} RunResult;

/* Runs the program with one thread per (rank, tb) on real buffers and
 * checks every rank's output against a reference. Errors (deadlock, wrong
 * result, unmatched sends) are reported with error_at at the XML lines
 * involved; 0 or -1. */
int msccl_run(Diag *, const MProg *p, const RunOpts *o, RunResult *r);

#endif
