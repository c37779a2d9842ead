/*
 * msccl_verify.c: rules 14, 15 and 17 without data. The program runs step
 * by step, one thread block at a time, with FIFOs of the given capacity
 * (one message per step, or per chunk) and progress flags, exactly as the
 * interpreter model (spec section 12) says; values are symbols: which chunk
 * they are and whose contributions they hold. A sweep in which no thread
 * block can move is a deadlock; at the end every FIFO must be empty and
 * every output chunk must hold exactly what the collective promises.
 *
 * Scale: a contribution set is one rank, all ranks, or a shared bitset of
 * ngpus bits (reference counted, so a copy costs nothing), and a reduction
 * that would count a rank twice is caught when it happens; so the work is
 * O(steps x chunks x ngpus / 64) and memory holds only the partial sums
 * alive at once. FIFOs and flags are per thread block, never per pair of
 * ranks.
 *
 * Rule 17 (races): steps of one rank run concurrently unless program order
 * or dependencies order them. Each thread block carries a vector clock over
 * its rank's thread blocks (merged at each dependency wait), and every
 * chunk remembers its last write and the reads since; a read must come
 * after the last write and a write after the last write and every read,
 * in that order, else the two steps race (an in-place allgather's
 * self-copy writing the chunk a send still reads was one). Races are
 * looked for in one mode only: in place when the program runs in place.
 * Which steps are ordered does not depend on the mode, and out of place
 * every chunk is a chunk of its own that in place it may share with
 * another (i aliases o), so two steps racing out of place touch one chunk
 * in place too; the check finds a race whenever there is one (its
 * happens-before is transitive: a write between the two is unordered with
 * one of them). So the second mode's run has values and no clocks.
 */
#include <stdlib.h>
#include <string.h>

#include "msccl_program.h"

enum {
	SET_NONE = 0,  /* unwritten (zeroed memory), or a value already wrong */
	SET_ALL = -2,  /* every rank */
	SET_ONE = -1,  /* one rank: Sym.one */
};

typedef struct Sym {
	int64_t id;  /* which chunk of which origin */
	int set;     /* SET_*, or k + 1 for bitset k of the pool */
	int n;       /* contributions */
	int one;     /* SET_ONE: the rank */
	int state;   /* 0 unwritten, 1 good, 2 mixes chunks, 3 a contribution twice */
} Sym;

/* Shared contribution sets of R bits. */
typedef struct Pool {
	int words;
	uint64_t *bits;
	int *ref;
	int n, cap;
	int *free_;
	int nfree;
} Pool;

typedef struct Fifo {
	Sym **msg;
	int *cnt;
	int head, n;
} Fifo;

/* Rule 17's state of one rank (see the opening comment). */
typedef struct Races {
	bool on;
	int *clock_base;   /* gpu -> its tbs' clocks in clock[] (ntb x ntb) */
	int16_t *clock;
	int *merged;       /* as clock: the snapshot of tb u that tb t last took, + 1 */
	/* per tb: clocks at the steps where a wait changed them */
	int **snap_step;
	size_t **snap_at;
	int *nsnap, *capsnap;
	int16_t *snap;
	size_t nsnapv, capsnapv;
	int *chunk_base;   /* gpu -> its real chunks (i, o, s) in the tables below */
	size_t nchunk;
	int *lastw;        /* tb id (global) << 16 | step, -1 */
	int **readers;
	int *nreaders, *capreaders;
} Races;

typedef struct VState {
	const MProg *p;
	MIndex ix;
	bool inplace;
	int cap;
	Sym *(*buf)[3];
	Fifo *fifo;  /* per sending tb (global id) */
	int *flag;   /* per tb */
	int *pc;
	bool pieces; /* one message per chunk (the executor's calls at maxAllowedCount 1) */
	bool flow;   /* FIFOs and flags only: no values, no races (msccl_check_flow) */
	int *part;   /* pieces: chunks of the current step done */
	Pool pool;
	int root;    /* broadcast, reduce: the root found, -1 */
	Races race;
	int err;
} VState;

/* ---- contribution sets ---- */

static int
pool_new(Pool *P)
{
	int k;
	if (P->nfree)
		k = P->free_[--P->nfree];
	else {
		if (P->n == P->cap) {
			P->cap = P->cap ? 2 * P->cap : 256;
			P->bits = xrealloc(P->bits, (size_t)P->cap * P->words * sizeof *P->bits);
			P->ref = xrealloc(P->ref, (size_t)P->cap * sizeof *P->ref);
			P->free_ = xrealloc(P->free_, (size_t)P->cap * sizeof *P->free_);
		}
		k = P->n++;
	}
	P->ref[k] = 1;
	memset(&P->bits[(size_t)k * P->words], 0, (size_t)P->words * sizeof *P->bits);
	return k + 1;
}

static Sym
sym_ref(VState *v, Sym s)
{
	if (s.set > 0)
		v->pool.ref[s.set - 1]++;
	return s;
}

static void
sym_drop(VState *v, Sym s)
{
	if (s.set > 0 && --v->pool.ref[s.set - 1] == 0)
		v->pool.free_[v->pool.nfree++] = s.set - 1;
}

/* Stores s (a reference the caller gives up) into *slot. */
static void
sym_put(VState *v, Sym *slot, Sym s)
{
	sym_drop(v, *slot);
	*slot = s;
}

static bool
sym_has(const VState *v, Sym s, int rank)
{
	if (s.set == SET_ALL)
		return true;
	if (s.set == SET_ONE)
		return s.one == rank;
	if (s.set <= 0)
		return false;
	return v->pool.bits[(size_t)(s.set - 1) * v->pool.words + rank / 64] >> (rank % 64) & 1;
}

static void
set_bits(VState *v, int into, Sym s)
{
	uint64_t *d = &v->pool.bits[(size_t)(into - 1) * v->pool.words];
	if (s.set == SET_ONE)
		d[s.one / 64] |= 1ull << (s.one % 64);
	else
		for (int w = 0; w < v->pool.words; w++)
			d[w] |= v->pool.bits[(size_t)(s.set - 1) * v->pool.words + w];
}

static bool
sets_meet(const VState *v, Sym a, Sym b)
{
	if (a.set == SET_ALL || b.set == SET_ALL)
		return true;
	if (a.set == SET_ONE)
		return sym_has(v, b, a.one);
	if (b.set == SET_ONE)
		return sym_has(v, a, b.one);
	for (int w = 0; w < v->pool.words; w++)
		if (v->pool.bits[(size_t)(a.set - 1) * v->pool.words + w] &
		    v->pool.bits[(size_t)(b.set - 1) * v->pool.words + w])
			return true;
	return false;
}

/* a (+) b, a new reference. */
static Sym
sym_reduce(VState *v, Sym a, Sym b)
{
	if (a.state == 0 || b.state == 0)
		return (Sym){0, SET_NONE, 0, 0, 0};
	Sym r = {a.id, SET_NONE, a.n + b.n, 0, 1};
	if (a.state > 1 || b.state > 1)
		r.state = a.state > b.state ? a.state : b.state;
	else if (a.id != b.id)
		r.state = 2;
	else if (sets_meet(v, a, b))
		r.state = 3;
	if (r.state != 1)
		return r;
	if (r.n == v->p->ngpus) {
		r.set = SET_ALL;
		return r;
	}
	r.set = pool_new(&v->pool);
	set_bits(v, r.set, a);
	set_bits(v, r.set, b);
	return r;
}

/* ---- the symbolic machine ---- */

static Sym *
at(VState *v, int g, MBuf b, int off)
{
	MBuf real;
	int o = msccl_resolve(v->p, g, v->inplace, b, off, &real);
	return &v->buf[g][real][o];
}

static int
tb_id(const VState *v, int g, int t)
{
	return v->ix.base[g] + t;
}

/* The initial symbol of input chunk k of rank g. */
static Sym
initial(const MProg *p, int g, int k)
{
	int n = p->nchunksperloop;
	switch (p->coll) {
	case MC_ALLGATHER:
		return (Sym){(int64_t)g * msccl_ichunks(p) + k, SET_ONE, 1, g, 1};
	case MC_ALLTOALL:
	case MC_BROADCAST:
		return (Sym){(int64_t)g * n + k, SET_ONE, 1, g, 1};
	default:
		return (Sym){k, SET_ONE, 1, g, 1};
	}
}

/* What output chunk k of rank g must hold (n: contributions; set SET_ONE
 * names the one, SET_ALL every rank); state 0: nothing is promised. */
static Sym
expected(const VState *v, int g, int k)
{
	const MProg *p = v->p;
	int n = p->nchunksperloop, blk = n / p->ngpus, R = p->ngpus;
	switch (p->coll) {
	case MC_ALLGATHER:
		return (Sym){(int64_t)(k / blk) * blk + k % blk, SET_ONE, 1, k / blk, 1};
	case MC_ALLTOALL:
		return (Sym){(int64_t)(k / blk) * n + (int64_t)g * blk + k % blk, SET_ONE, 1, k / blk, 1};
	case MC_REDUCESCATTER:
		return (Sym){(int64_t)g * blk + k, SET_ALL, R, 0, 1};
	case MC_BROADCAST:
		return (Sym){(int64_t)v->root * n + k, SET_ONE, 1, v->root, 1};
	case MC_REDUCE:
		return g == v->root ? (Sym){k, SET_ALL, R, 0, 1} : (Sym){0, SET_NONE, 0, 0, 0};
	default:
		return (Sym){k, SET_ALL, R, 0, 1};
	}
}

/* ---- rule 17: races between the thread blocks of one rank ---- */

/* Sets up the clocks and chunk tables, or leaves the check off when a
 * program is too large for it (reported: -1). */
static int
races_init(Diag *dg, VState *v)
{
	const MProg *p = v->p;
	Races *rc = &v->race;
	int R = p->ngpus;
	/* at most a clock per step and one per tb, each of ntb entries */
	size_t clocks = 0;
	for (int g = 0; g < R; g++) {
		size_t steps = (size_t)p->gpu[g].ntb;
		for (int t = 0; t < p->gpu[g].ntb; t++)
			steps += (size_t)p->gpu[g].tb[t].nstep;
		clocks += steps * (size_t)p->gpu[g].ntb;
	}
	if (clocks > MAX_RACE_CLOCKS) {
		error_at(dg, (Loc){p->line, 1}, "rule 17 (races): checking races needs up to %zu clock "
		         "entries (steps times thread blocks, summed over the gpus); collc checks at "
		         "most %d", clocks, MAX_RACE_CLOCKS);
		return -1;
	}
	rc->on = true;
	rc->clock_base = xmalloc(((size_t)R + 1) * sizeof(int));
	rc->chunk_base = xmalloc(((size_t)R + 1) * sizeof(int));
	size_t cb = 0, kb = 0;
	for (int g = 0; g < R; g++) {
		rc->clock_base[g] = (int)cb;
		rc->chunk_base[g] = (int)kb;
		cb += (size_t)p->gpu[g].ntb * p->gpu[g].ntb;
		kb += (size_t)msccl_ichunks(p) + msccl_ochunks(p) + p->gpu[g].s_chunks;
	}
	rc->clock = xmalloc((cb + 1) * sizeof *rc->clock);
	for (size_t i = 0; i < cb; i++)
		rc->clock[i] = -1;
	rc->merged = xcalloc(cb + 1, sizeof *rc->merged);
	int ntb = v->ix.ntb;
	rc->snap_step = xcalloc((size_t)ntb + 1, sizeof(int *));
	rc->snap_at = xcalloc((size_t)ntb + 1, sizeof(size_t *));
	rc->nsnap = xcalloc((size_t)ntb + 1, sizeof(int));
	rc->capsnap = xcalloc((size_t)ntb + 1, sizeof(int));
	rc->lastw = xmalloc((kb + 1) * sizeof(int));
	for (size_t i = 0; i < kb; i++)
		rc->lastw[i] = -1;
	rc->readers = xcalloc(kb + 1, sizeof(int *));
	rc->nreaders = xcalloc(kb + 1, sizeof(int));
	rc->capreaders = xcalloc(kb + 1, sizeof(int));
	rc->nchunk = kb;
	return 0;
}

static void
races_free(VState *v)
{
	Races *rc = &v->race;
	if (!rc->on)
		return;
	for (int id = 0; id < v->ix.ntb; id++) {
		free(rc->snap_step[id]);
		free(rc->snap_at[id]);
	}
	for (size_t k = 0; k < rc->nchunk; k++)
		free(rc->readers[k]);
	free(rc->snap_step);
	free(rc->snap_at);
	free(rc->nsnap);
	free(rc->capsnap);
	free(rc->snap);
	free(rc->clock_base);
	free(rc->chunk_base);
	free(rc->clock);
	free(rc->merged);
	free(rc->lastw);
	free(rc->readers);
	free(rc->nreaders);
	free(rc->capreaders);
}

static int16_t *
clock_of(VState *v, int g, int t)
{
	return &v->race.clock[v->race.clock_base[g] + (size_t)t * v->p->gpu[g].ntb];
}

/* Step k of tb t of gpu g starts: its clock takes the waited step's (the
 * clock tb depid had at step deps: its last snapshot at or before it). */
static void
races_enter(VState *v, int g, int t, const MStep *st)
{
	Races *rc = &v->race;
	int ntb = v->p->gpu[g].ntb;
	int16_t *c = clock_of(v, g, t);
	c[t] = (int16_t)st->s;
	if (st->depid < 0 || st->depid == t)
		return;
	int u = tb_id(v, g, st->depid), lo = 0, hi = rc->nsnap[u];
	while (lo < hi) { /* the first snapshot after deps */
		int mid = (lo + hi) / 2;
		if (rc->snap_step[u][mid] <= st->deps)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* a snapshot already taken changes nothing: a tb waiting again and again
	 * on another costs O(1) per wait, not O(tbs) */
	int *merged = &rc->merged[v->race.clock_base[g] + (size_t)t * ntb + st->depid];
	bool changed = false;
	if (lo > 0 && *merged != lo) {
		const int16_t *s = &rc->snap[rc->snap_at[u][lo - 1]];
		for (int w = 0; w < ntb; w++)
			if (s[w] > c[w]) {
				c[w] = s[w];
				changed = true;
			}
		*merged = lo;
	}
	if (c[st->depid] < st->deps) {
		c[st->depid] = (int16_t)st->deps;
		changed = true;
	}
	if (!changed)
		return; /* the last snapshot (own entry aside) still holds */
	/* this tb's clock changed: keep it for whoever waits on it later */
	int me = tb_id(v, g, t);
	if (rc->nsnapv + (size_t)ntb > rc->capsnapv) {
		rc->capsnapv = 2 * (rc->capsnapv + (size_t)ntb);
		rc->snap = xrealloc(rc->snap, rc->capsnapv * sizeof *rc->snap);
	}
	if (rc->nsnap[me] == rc->capsnap[me]) {
		rc->capsnap[me] = rc->capsnap[me] ? 2 * rc->capsnap[me] : 4;
		rc->snap_step[me] = xrealloc(rc->snap_step[me], (size_t)rc->capsnap[me] * sizeof(int));
		rc->snap_at[me] = xrealloc(rc->snap_at[me], (size_t)rc->capsnap[me] * sizeof(size_t));
	}
	rc->snap_step[me][rc->nsnap[me]] = st->s;
	rc->snap_at[me][rc->nsnap[me]++] = rc->nsnapv;
	memcpy(&rc->snap[rc->nsnapv], c, (size_t)ntb * sizeof *c);
	rc->nsnapv += (size_t)ntb;
}

/* Whether step (tb u, step i) of gpu g comes before the running step of tb t. */
static bool
ordered(VState *v, int g, int u, int i, int t)
{
	return u == t || clock_of(v, g, t)[u] >= i;
}

/* One access of step st (tb t of gpu g) to a real chunk; -1 after
 * reporting a race with an earlier access. */
static int
races_access(Diag *dg, VState *v, int g, int t, const MStep *st, MBuf real, int off, bool write)
{
	const MProg *p = v->p;
	Races *rc = &v->race;
	size_t k = (size_t)rc->chunk_base[g] + (real == MB_I ? 0 : (size_t)msccl_ichunks(p)) +
	           (real == MB_S ? (size_t)msccl_ochunks(p) : 0) + (size_t)off;
	int other = -1;
	bool other_writes = false;
	int w = rc->lastw[k];
	if (w >= 0 && !ordered(v, g, w >> 16, w & 0xffff, t)) {
		other = w;
		other_writes = true;
	}
	for (int j = 0; write && other < 0 && j < rc->nreaders[k]; j++) {
		int r = rc->readers[k][j];
		if (!ordered(v, g, r >> 16, r & 0xffff, t))
			other = r;
	}
	if (other >= 0) {
		const MStep *os = &p->gpu[g].tb[other >> 16].step[other & 0xffff];
		static const char *const name[] = {"input", "output", "scratch"};
		error_at(dg, (Loc){st->line, 1}, "rule 17 (races): gpu %d tb %d step %d (%s) %s %s chunk %d%s "
		         "while tb %d step %d (%s, line %d) %s it, and neither waits for the other "
		         "(only program order and depid/deps order the thread blocks of a rank)", g, t,
		         st->s, mtype_name[st->type], write ? "writes" : "reads", name[real], off,
		         v->inplace ? " (in place)" : "", other >> 16, other & 0xffff,
		         mtype_name[os->type], os->line, other_writes ? "writes" : "reads");
		return -1;
	}
	int me = t << 16 | st->s;
	if (write) {
		rc->lastw[k] = me;
		rc->nreaders[k] = 0;
	} else if (rc->nreaders[k] == 0 || rc->readers[k][rc->nreaders[k] - 1] != me) {
		if (rc->nreaders[k] == rc->capreaders[k]) {
			rc->capreaders[k] = rc->capreaders[k] ? 2 * rc->capreaders[k] : 2;
			rc->readers[k] = xrealloc(rc->readers[k], (size_t)rc->capreaders[k] * sizeof(int));
		}
		rc->readers[k][rc->nreaders[k]++] = me;
	}
	return 0;
}

/* The accesses of step st (tb t of gpu g), reads first. */
static int
races_step(Diag *dg, VState *v, int g, int t, const MStep *st)
{
	races_enter(v, g, t, st);
	if (st->type == MT_NOP)
		return 0;
	for (int side = 0; side < 2; side++) {
		bool used = side ? mtype_writes_dst(st->type) : mtype_reads_src(st->type);
		MBuf b = side ? st->dstbuf : st->srcbuf;
		int off = side ? st->dstoff : st->srcoff;
		for (int c = 0; used && c < st->cnt; c++) {
			MBuf real;
			int o = msccl_resolve(v->p, g, v->inplace, b, off + c, &real);
			if (races_access(dg, v, g, t, st, real, o, side == 1) != 0)
				return -1;
		}
	}
	return 0;
}

/* ---- the run ---- */

static Fifo *
in_fifo(VState *v, int g, const MTb *tb)
{
	int s = v->ix.sender[tb_id(v, g, tb->id)];
	return s >= 0 ? &v->fifo[s] : NULL;
}

/* Whether step st of tb (gpu g) could run now: its wait, a message in, room out. */
static bool
step_ready(VState *v, int g, const MTb *tb, const MStep *st, int first)
{
	if (first == 0 && st->depid >= 0 && v->flag[tb_id(v, g, st->depid)] < st->deps)
		return false;
	if (st->type == MT_NOP)
		return true;
	Fifo *in = mtype_recvs(st->type) ? in_fifo(v, g, tb) : NULL;
	Fifo *out = mtype_sends(st->type) ? &v->fifo[tb_id(v, g, tb->id)] : NULL;
	if (mtype_recvs(st->type) && (!in || in->n == 0))
		return false;
	return !(out && out->n == v->cap);
}

/* The values step st computes for chunks [first, first + n): new references. */
static void
step_values(VState *v, int g, const MStep *st, int first, int n, Sym *msg, Sym *val)
{
	for (int i = 0; i < n; i++) {
		int c = first + i;
		switch (st->type) {
		case MT_S:
		case MT_CPY:
			val[i] = sym_ref(v, *at(v, g, st->srcbuf, st->srcoff + c));
			break;
		case MT_R:
		case MT_RCS:
			val[i] = sym_ref(v, msg[i]);
			break;
		case MT_RE:
			val[i] = sym_reduce(v, *at(v, g, st->dstbuf, st->dstoff + c),
			                    *at(v, g, st->srcbuf, st->srcoff + c));
			break;
		default: /* rrs, rrc, rrcs: the local operand is src */
			val[i] = sym_reduce(v, msg[i], *at(v, g, st->srcbuf, st->srcoff + c));
			break;
		}
	}
}

/* Tb id has moved chunks [0, done) of step st: 2 a piece of it, or 1 the
 * step is done (its flag set). */
static int
piece_done(VState *v, int id, const MStep *st, int done)
{
	if (done < st->cnt) {
		v->part[id] = done;
		return 2;
	}
	v->part[id] = 0;
	if (st->hasdep)
		v->flag[id] = st->s;
	return 1;
}

/* One step, or with pieces its next chunk, if it can run now: 1 the step is
 * done, 2 a piece of it, 0 blocked, -1 error reported. The executor issues a
 * step of cnt chunks as calls of maxAllowedCount chunks each, receiving and
 * sending call by call, so a piece is a message of one chunk (the smallest
 * call) that still carries its step's cnt for the matching rule. */
static int
try_step(Diag *dg, VState *v, int g, const MTb *tb)
{
	int id = tb_id(v, g, tb->id);
	const MStep *st = &tb->step[v->pc[id]];
	int *part = &v->part[id];
	int first = v->pieces ? *part : 0, n = v->pieces ? 1 : st->cnt;
	if (!step_ready(v, g, tb, st, first))
		return 0;
	if (v->race.on && races_step(dg, v, g, tb->id, st) != 0)
		return -1;
	if (st->type == MT_NOP)
		return 1;
	Fifo *in = mtype_recvs(st->type) ? in_fifo(v, g, tb) : NULL;
	Fifo *out = mtype_sends(st->type) ? &v->fifo[id] : NULL;
	Sym *msg = NULL;
	int mlen = 0;
	if (in) {
		int slot = in->head;
		if (in->cnt[slot] != st->cnt) {
			error_at(dg, (Loc){st->line, 1}, "rule 10 (matching): gpu %d tb %d step %d receives "
			         "cnt=%d but the message from gpu %d holds %d chunks", g, tb->id, st->s,
			         st->cnt, tb->recv, in->cnt[slot]);
			return -1;
		}
		msg = in->msg[slot];
		mlen = n;
		in->msg[slot] = NULL;
		in->head = (in->head + 1) % v->cap;
		in->n--;
	}
	if (v->flow) { /* FIFOs and flags alone: no values (msccl_check_flow) */
		if (out) {
			out->cnt[(out->head + out->n) % v->cap] = st->cnt;
			out->n++;
		}
		return piece_done(v, id, st, first + n);
	}
	Sym *val = xmalloc((size_t)n * sizeof *val);
	step_values(v, g, st, first, n, msg, val);
	if (mtype_writes_dst(st->type))
		for (int i = 0; i < n; i++)
			sym_put(v, at(v, g, st->dstbuf, st->dstoff + first + i), sym_ref(v, val[i]));
	for (int i = 0; i < mlen; i++)
		sym_drop(v, msg[i]);
	free(msg);
	if (out) {
		int slot = (out->head + out->n) % v->cap;
		out->msg[slot] = val;
		out->cnt[slot] = st->cnt;
		out->n++;
	} else {
		for (int i = 0; i < n; i++)
			sym_drop(v, val[i]);
		free(val);
	}
	return piece_done(v, id, st, first + n);
}

/* Rule 14's report: every blocked thread block and what it waits for,
 * worked out from the sequential run's state (its pc, the flags, the FIFOs'
 * counts). msccl_run.c's report_deadlock prints the same shape but cannot
 * share this one: there the state is live threads', each declaring its own
 * wait in atomics (Tb.wait, step, tile), and nothing here exists there. */
static void
report_deadlock(Diag *dg, VState *v)
{
	const MProg *p = v->p;
	int shown = 0;
	for (int g = 0; g < p->ngpus; g++)
		for (int t = 0; t < p->gpu[g].ntb; t++) {
			const MTb *tb = &p->gpu[g].tb[t];
			int pc = v->pc[tb_id(v, g, t)];
			if (pc >= tb->nstep)
				continue;
			const MStep *st = &tb->step[pc];
			char why[160];
			Fifo *in = in_fifo(v, g, tb);
			if (st->depid >= 0 && v->flag[tb_id(v, g, st->depid)] < st->deps)
				snprintf(why, sizeof why, "waits for tb %d step %d (its flag is at %d)",
				         st->depid, st->deps, v->flag[tb_id(v, g, st->depid)]);
			else if (mtype_recvs(st->type) && (!in || in->n == 0))
				snprintf(why, sizeof why, "waits for a message from gpu %d on channel %d "
				         "(FIFO empty)", tb->recv, tb->chan);
			else
				snprintf(why, sizeof why, "waits for room to send to gpu %d on channel %d "
				         "(FIFO full, %d messages)", tb->send, tb->chan, v->cap);
			if (shown == 0)
				error_at(dg, (Loc){st->line, 1}, "rule 14 (deadlock): %s run with FIFO capacity "
				         "%d%s stops: gpu %d tb %d step %d (%s) %s",
				         v->inplace ? "an in-place" : "an out-of-place", v->cap,
				         v->pieces ? ", a message per chunk," : "", g, t, st->s,
				         mtype_name[st->type], why);
			else if (shown < 8)
				note_at(dg, (Loc){st->line, 1}, "blocked too: gpu %d tb %d step %d (%s) %s", g, t,
				        st->s, mtype_name[st->type], why);
			shown++;
		}
	if (shown > 8)
		note_at(dg, (Loc){p->line, 1}, "%d thread blocks are blocked in all", shown);
}

/* The sweeps of run_steps without visiting thread blocks that cannot
 * move. A sweep visits the tbs in id order, each running as far as it
 * can; a tb that stopped moves again only after an event of another tb:
 * a flag it waits for set, a message into its FIFO, room in the FIFO it
 * sends to. So a stopped tb is left out until such an event wakes it,
 * into this sweep if its id is still ahead, else into the next, exactly
 * where a full sweep would have found it ready. Each sweep then costs its
 * steps and wakes, not the program's tbs (SP 16x16: 16384 tbs). */
typedef struct Sweeps {
	int *heap, nheap;   /* this sweep's tbs still ahead, a min-heap of ids */
	int *next, nnext;   /* woken for the next sweep */
	bool *queued;
	int **waiters;      /* tb -> the tbs stopped on its flag, with the step each needs */
	int *nwait, *capwait;
	int cur;            /* the tb being run */
} Sweeps;

static void
heap_push(Sweeps *w, int id)
{
	int i = w->nheap++;
	while (i > 0 && w->heap[(i - 1) / 2] > id) {
		w->heap[i] = w->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	w->heap[i] = id;
}

static int
heap_pop(Sweeps *w)
{
	int top = w->heap[0], last = w->heap[--w->nheap], i = 0;
	for (;;) {
		int c = 2 * i + 1;
		if (c >= w->nheap)
			break;
		if (c + 1 < w->nheap && w->heap[c + 1] < w->heap[c])
			c++;
		if (w->heap[c] >= last)
			break;
		w->heap[i] = w->heap[c];
		i = c;
	}
	if (w->nheap > 0)
		w->heap[i] = last;
	return top;
}

static void
wake(Sweeps *w, int id)
{
	if (id < 0 || w->queued[id])
		return;
	w->queued[id] = true;
	if (id > w->cur)
		heap_push(w, id);
	else
		w->next[w->nnext++] = id;
}

/* Tb id stopped at step st: if on a flag, it waits in that tb's list. */
static void
park(VState *v, Sweeps *w, int g, int id, const MStep *st)
{
	if (v->part[id] != 0 || st->depid < 0)
		return;
	int u = tb_id(v, g, st->depid);
	if (v->flag[u] >= st->deps)
		return; /* a FIFO stops it: its peer wakes it */
	if (w->nwait[u] + 2 > w->capwait[u]) {
		w->capwait[u] = w->capwait[u] ? 2 * w->capwait[u] : 8;
		w->waiters[u] = xrealloc(w->waiters[u], (size_t)w->capwait[u] * sizeof(int));
	}
	w->waiters[u][w->nwait[u]++] = id;
	w->waiters[u][w->nwait[u]++] = st->deps;
}

/* Tb u's flag rose: wake the tbs whose wait it now satisfies. */
static void
wake_waiters(VState *v, Sweeps *w, int u)
{
	int kept = 0;
	for (int k = 0; k < w->nwait[u]; k += 2) {
		if (v->flag[u] >= w->waiters[u][k + 1]) {
			wake(w, w->waiters[u][k]);
			continue;
		}
		w->waiters[u][kept++] = w->waiters[u][k];
		w->waiters[u][kept++] = w->waiters[u][k + 1];
	}
	w->nwait[u] = kept;
}

/* Tb id as far as it can go; wakes whom its steps unblock. 1 moved, 0 not,
 * -1 after an error. */
static int
run_tb(Diag *dg, VState *v, Sweeps *w, int id)
{
	const MProg *p = v->p;
	int g = v->ix.rank[id];
	const MTb *tb = &p->gpu[g].tb[id - v->ix.base[g]];
	int *pc = &v->pc[id], r, moved = 0;
	for (int flag = v->flag[id]; *pc < tb->nstep && (r = try_step(dg, v, g, tb)) != 0;) {
		if (r < 0)
			return -1;
		/* a message in the receiver's FIFO, room in the sender's: only a
		 * step that sends, or receives, can unblock them */
		MType type = tb->step[*pc].type;
		*pc += r == 1;
		moved = 1;
		if (mtype_sends(type))
			wake(w, v->ix.receiver[id]);
		if (mtype_recvs(type))
			wake(w, v->ix.sender[id]);
		if (v->flag[id] != flag) {
			flag = v->flag[id];
			wake_waiters(v, w, id);
		}
	}
	if (*pc < tb->nstep)
		park(v, w, g, id, &tb->step[*pc]);
	return moved;
}

/* Sweeps over the tbs, each running as far as it can, until all are done
 * (0) or none can move (a deadlock) or a step fails (-1, reported). */
static int
run_steps(Diag *dg, VState *v)
{
	int n = v->ix.ntb, rc = 0;
	Sweeps w = {.heap = xmalloc(((size_t)n + 1) * sizeof(int)),
	            .next = xmalloc(((size_t)n + 1) * sizeof(int)),
	            .queued = xcalloc((size_t)n + 1, 1),
	            .waiters = xcalloc((size_t)n + 1, sizeof(int *)),
	            .nwait = xcalloc((size_t)n + 1, sizeof(int)),
	            .capwait = xcalloc((size_t)n + 1, sizeof(int))};
	for (int id = 0; id < n; id++) { /* the first sweep visits every tb */
		w.next[w.nnext++] = id;
		w.queued[id] = true;
	}
	while (w.nnext > 0) {
		/* the next sweep, in id order: a sorted array is a min-heap */
		sort_n(w.next, (size_t)w.nnext, sizeof(int), cmp_int);
		memcpy(w.heap, w.next, (size_t)w.nnext * sizeof(int));
		w.nheap = w.nnext;
		w.nnext = 0;
		w.cur = -1;
		while (rc == 0 && w.nheap > 0) {
			w.cur = heap_pop(&w);
			w.queued[w.cur] = false;
			rc = run_tb(dg, v, &w, w.cur) < 0 ? -1 : 0;
		}
		if (rc != 0)
			break;
	}
	bool left = false;
	for (int g = 0; rc == 0 && g < v->p->ngpus; g++)
		for (int t = 0; t < v->p->gpu[g].ntb; t++)
			left |= v->pc[tb_id(v, g, t)] < v->p->gpu[g].tb[t].nstep;
	if (left) {
		report_deadlock(dg, v);
		rc = -1;
	}
	for (int id = 0; id < n; id++)
		free(w.waiters[id]);
	free(w.heap), free(w.next), free(w.queued), free(w.waiters), free(w.nwait), free(w.capwait);
	return rc;
}

int
msccl_root(const MProg *p)
{
	if (p->coll != MC_BROADCAST && p->coll != MC_REDUCE)
		return -1;
	/* a broadcast's root receives nothing, a reduce's sends nothing */
	int root = -1;
	for (int g = 0; g < p->ngpus; g++) {
		bool any = false;
		for (int t = 0; t < p->gpu[g].ntb && !any; t++)
			any = p->coll == MC_BROADCAST ? p->gpu[g].tb[t].recv >= 0 : p->gpu[g].tb[t].send >= 0;
		if (!any) {
			if (root >= 0)
				return -1;
			root = g;
		}
	}
	return root;
}

/* The root of a broadcast or reduce, and the buffers NCCL does not pass to
 * other ranks: a broadcast's sendbuff and a reduce's recvbuff are only the
 * root's (may be NULL elsewhere). -1 after reporting. */
static int
check_root(Diag *dg, VState *v)
{
	const MProg *p = v->p;
	v->root = msccl_root(p);
	if (p->coll != MC_BROADCAST && p->coll != MC_REDUCE)
		return 0;
	if (v->root < 0) {
		error_at(dg, (Loc){p->line, 1}, "rule 15 (correctness): a %s needs one root: exactly one "
		         "gpu that %s", p->coll_name,
		         p->coll == MC_BROADCAST ? "receives nothing" : "sends nothing");
		return -1;
	}
	MBuf none = p->coll == MC_BROADCAST ? MB_I : MB_O;
	for (int g = 0; g < p->ngpus; g++)
		for (int t = 0; g != v->root && t < p->gpu[g].ntb; t++)
			for (int k = 0; k < p->gpu[g].tb[t].nstep; k++) {
				const MStep *st = &p->gpu[g].tb[t].step[k];
				if ((mtype_reads_src(st->type) && st->srcbuf == none) ||
				    (mtype_writes_dst(st->type) && st->dstbuf == none)) {
					error_at(dg, (Loc){st->line, 1}, "rule 15 (correctness): gpu %d step %d of tb "
					         "%d uses buffer %s, but only the root (gpu %d) of a %s has one: "
					         "NCCL passes %s elsewhere", g, st->s, t, none == MB_I ? "i" : "o",
					         v->root, p->coll_name,
					         none == MB_I ? "no sendbuff" : "no recvbuff");
					return -1;
				}
			}
	return 0;
}

/* Output chunk k of gpu g against the promise; -1 after reporting. */
static int
check_chunk(Diag *dg, VState *v, int g, int k)
{
	const MProg *p = v->p;
	Sym got = *at(v, g, MB_O, k), want = expected(v, g, k);
	if (want.state == 0)
		return 0;
	bool same = got.state == 1 && got.id == want.id && got.n == want.n &&
	            (want.set != SET_ONE || sym_has(v, got, want.one));
	if (same)
		return 0;
	static const char *const what[] = {"is never written", "", "mixes different chunks",
	                                   "holds a contribution twice"};
	char why[160];
	if (got.state != 1)
		snprintf(why, sizeof why, "%s", what[got.state]);
	else if (got.id != want.id)
		snprintf(why, sizeof why, "holds the wrong chunk");
	else if (want.set == SET_ONE)
		snprintf(why, sizeof why, "holds gpu %d's chunk instead of gpu %d's",
		         got.set == SET_ONE ? got.one : -1, want.one);
	else {
		int miss = 0;
		while (miss < p->ngpus && sym_has(v, got, miss))
			miss++;
		snprintf(why, sizeof why, "holds %d of the %d contributions (not gpu %d's)", got.n,
		         want.n, miss);
	}
	error_at(dg, (Loc){p->gpu[g].line, 1}, "rule 15 (correctness): %s %s: output chunk %d of gpu %d "
	         "%s", v->inplace ? "in-place" : "out-of-place", p->coll_name, k, g, why);
	return -1;
}

/* After the run: FIFOs empty (rule 10), outputs as promised (rule 15). */
static int
check_end(Diag *dg, VState *v)
{
	const MProg *p = v->p;
	for (int id = 0; id < v->ix.ntb; id++)
		if (v->fifo[id].n) {
			int src = v->ix.rank[id];
			const MTb *tb = &p->gpu[src].tb[id - v->ix.base[src]];
			error_at(dg, (Loc){p->gpu[src].line, 1}, "rule 10 (matching): %d message%s from gpu %d "
			         "to gpu %d on channel %d %s never received", v->fifo[id].n,
			         v->fifo[id].n == 1 ? "" : "s", src, tb->send, tb->chan,
			         v->fifo[id].n == 1 ? "is" : "are");
			return -1;
		}
	for (int g = 0; p->coll != MC_CUSTOM && !v->flow && g < p->ngpus; g++)
		for (int k = 0; k < msccl_ochunks(p); k++)
			if (check_chunk(dg, v, g, k) != 0)
				return -1;
	return 0;
}

static void
setup(VState *v)
{
	const MProg *p = v->p;
	int R = p->ngpus, cap = v->cap;
	msccl_index(p, &v->ix);
	v->pool.words = (R + 63) / 64;
	v->buf = xcalloc((size_t)R, sizeof *v->buf);
	for (int g = 0; g < R; g++) {
		v->buf[g][MB_I] = xcalloc((size_t)msccl_ichunks(p) + 1, sizeof(Sym));
		v->buf[g][MB_O] = xcalloc((size_t)msccl_ochunks(p) + 1, sizeof(Sym));
		v->buf[g][MB_S] = xcalloc((size_t)p->gpu[g].s_chunks + 1, sizeof(Sym));
		for (int k = 0; k < msccl_ichunks(p); k++)
			if (p->coll != MC_BROADCAST || g == v->root)
				*at(v, g, MB_I, k) = initial(p, g, k);
	}
	size_t nt = (size_t)v->ix.ntb + 1;
	v->fifo = xcalloc(nt, sizeof *v->fifo);
	for (size_t f = 0; f < nt; f++) {
		v->fifo[f].msg = xcalloc((size_t)cap, sizeof(Sym *));
		v->fifo[f].cnt = xcalloc((size_t)cap, sizeof(int));
	}
	v->flag = xmalloc(nt * sizeof *v->flag);
	v->pc = xcalloc(nt, sizeof *v->pc);
	v->part = xcalloc(nt, sizeof *v->part);
	for (size_t i = 0; i < nt; i++)
		v->flag[i] = -1;
}

static void
teardown(VState *v)
{
	for (int f = 0; f <= v->ix.ntb; f++) {
		for (int s = 0; s < v->cap; s++)
			free(v->fifo[f].msg[s]);
		free(v->fifo[f].msg);
		free(v->fifo[f].cnt);
	}
	for (int g = 0; g < v->p->ngpus; g++)
		for (int b = 0; b < 3; b++)
			free(v->buf[g][b]);
	free(v->buf);
	free(v->fifo);
	free(v->flag);
	free(v->pc);
	free(v->part);
	free(v->pool.bits);
	free(v->pool.ref);
	free(v->pool.free_);
	races_free(v);
	msccl_index_free(&v->ix);
}

/* One run in one mode: the flow alone, or values too (and with races,
 * rule 17). */
static int
run_mode(Diag *dg, const MProg *p, bool inplace, int cap, bool pieces, bool flow, bool races)
{
	VState v = {.p = p, .inplace = inplace, .cap = cap, .pieces = pieces, .flow = flow,
	            .root = -1};
	if (check_root(dg, &v) != 0)
		return -1;
	setup(&v);
	int rc = 0;
	if (!flow && races)
		rc = races_init(dg, &v);
	if (rc == 0)
		rc = run_steps(dg, &v);
	if (rc == 0)
		rc = check_end(dg, &v);
	teardown(&v);
	return rc;
}

static int
check_modes(Diag *dg, const MProg *p)
{
	if (!p->inplace && !p->outofplace) {
		error_at(dg, (Loc){p->line, 1}, "rule 2 (algo): inplace=0 and outofplace=0: never used");
		return -1;
	}
	return 0;
}

int
msccl_check_flow(Diag *dg, const MProg *p, int capacity, bool pieces)
{
	if (check_modes(dg, p) != 0)
		return -1;
	/* which step can move depends on flags and FIFOs only: one mode decides */
	return run_mode(dg, p, p->inplace, capacity, pieces, true, false);
}

int
msccl_check_run(Diag *dg, const MProg *p, int capacity, bool pieces)
{
	if (pieces)
		return msccl_check_flow(dg, p, capacity, true);
	if (check_modes(dg, p) != 0)
		return -1;
	/* races in one mode (see the opening comment): in place if it runs so */
	if (p->inplace && run_mode(dg, p, true, capacity, false, false, true) != 0)
		return -1;
	if (p->outofplace && run_mode(dg, p, false, capacity, false, false, !p->inplace) != 0)
		return -1;
	return 0;
}
