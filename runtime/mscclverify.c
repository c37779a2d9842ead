/*
 * mscclverify.c: rules 14 and 15 without data. The program runs step by
 * step, one thread block at a time, with FIFOs of the given capacity (one
 * message per step) and progress flags, exactly as the interpreter model
 * (spec section 12) says; values are symbols: which chunk they are and
 * whose contributions they hold (a 64-bit rank mask). A sweep in which no
 * thread block can move is a deadlock; at the end every FIFO must be empty
 * and every output chunk must hold exactly what the collective promises.
 */
#include <stdlib.h>
#include <string.h>

#include "msccl.h"

typedef struct Sym {
	int64_t id;     /* which chunk of which origin */
	uint64_t mask;  /* contributions */
	int state;      /* 0 unwritten, 1 good, 2 mixes chunks, 3 a contribution twice */
} Sym;

typedef struct Fifo {
	Sym **msg;
	int *cnt;
	int head, n;
} Fifo;

typedef struct VState {
	const MProg *p;
	bool inplace;
	int cap;
	Sym *buf[MSCCL_MAX_GPUS][3];
	Fifo *fifo;
	int *flag;   /* rank * MSCCL_MAX_TBS + tb */
	int *pc;
	bool pieces; /* one message per chunk (the executor's calls at maxAllowedCount 1) */
	int *part;   /* pieces: chunks of the current step done */
} VState;

static Sym
sym_reduce(Sym a, Sym b)
{
	if (a.state == 0 || b.state == 0)
		return (Sym){0, 0, 0};
	Sym r = {a.id, a.mask | b.mask, 1};
	if (a.state > 1 || b.state > 1)
		r.state = a.state > b.state ? a.state : b.state;
	else if (a.id != b.id)
		r.state = 2;
	else if (a.mask & b.mask)
		r.state = 3;
	return r;
}

static Sym *
at(VState *v, int g, MBuf b, int off)
{
	MBuf real;
	int o = msccl_resolve(v->p, g, v->inplace, b, off, &real);
	return &v->buf[g][real][o];
}

static Fifo *
fifo(VState *v, int src, int dst, int chan)
{
	return &v->fifo[((size_t)src * v->p->ngpus + dst) * v->p->nchannels + chan];
}

/* The initial symbol of input chunk k of rank g, and the output's promise. */
static Sym
initial(const MProg *p, int g, int k)
{
	int n = p->nchunksperloop;
	switch (p->coll) {
	case MC_ALLGATHER:
		return (Sym){(int64_t)g * msccl_ichunks(p) + k, 1ull << g, 1};
	case MC_ALLTOALL:
		return (Sym){(int64_t)g * n + k, 1ull << g, 1};
	default:
		return (Sym){k, 1ull << g, 1};
	}
}

static Sym
expected(const MProg *p, int g, int k)
{
	int n = p->nchunksperloop, blk = n / p->ngpus;
	uint64_t all = p->ngpus == 64 ? ~0ull : (1ull << p->ngpus) - 1;
	switch (p->coll) {
	case MC_ALLGATHER:
		return (Sym){k, 1ull << (k / blk), 1};
	case MC_ALLTOALL:
		return (Sym){(int64_t)(k / blk) * n + (int64_t)g * blk + k % blk, 1ull << (k / blk), 1};
	case MC_REDUCESCATTER:
		return (Sym){(int64_t)g * blk + k, all, 1};
	default:
		return (Sym){k, all, 1};
	}
}

/* One step, or with pieces its next chunk, if it can run now: 1 the step is
 * done, 2 a piece of it, 0 blocked, -1 error reported. The executor issues a
 * step of cnt chunks as calls of maxAllowedCount chunks each, receiving and
 * sending call by call, so a piece is a message of one chunk (the smallest
 * call) that still carries its step's cnt for the matching rule. */
static int
try_step(VState *v, int g, const MTb *tb)
{
	const MStep *st = &tb->step[v->pc[g * MSCCL_MAX_TBS + tb->id]];
	int *part = &v->part[g * MSCCL_MAX_TBS + tb->id];
	int first = v->pieces ? *part : 0, n = v->pieces ? 1 : st->cnt;
	if (first == 0 && st->depid >= 0 && v->flag[g * MSCCL_MAX_TBS + st->depid] < st->deps)
		return 0;
	if (st->type == MT_NOP)
		return 1;
	Fifo *in = mtype_recvs(st->type) ? fifo(v, tb->recv, g, tb->chan) : NULL;
	Fifo *out = mtype_sends(st->type) ? fifo(v, g, tb->send, tb->chan) : NULL;
	if ((in && in->n == 0) || (out && out->n == v->cap))
		return 0;
	Sym *msg = NULL;
	if (in) {
		int slot = in->head;
		if (in->cnt[slot] != st->cnt) {
			error_at((Loc){st->line, 1}, "rule 10 (matching): gpu %d tb %d step %d receives "
			         "cnt=%d but the message from gpu %d holds %d chunks", g, tb->id, st->s,
			         st->cnt, tb->recv, in->cnt[slot]);
			return -1;
		}
		msg = in->msg[slot];
		in->msg[slot] = NULL;
		in->head = (in->head + 1) % v->cap;
		in->n--;
	}
	Sym *val = xmalloc((size_t)n * sizeof *val);
	for (int i = 0; i < n; i++) {
		int c = first + i;
		switch (st->type) {
		case MT_S:
		case MT_CPY:
			val[i] = *at(v, g, st->srcbuf, st->srcoff + c);
			break;
		case MT_R:
		case MT_RCS:
			val[i] = msg[i];
			break;
		case MT_RE:
			val[i] = sym_reduce(*at(v, g, st->dstbuf, st->dstoff + c),
			                    *at(v, g, st->srcbuf, st->srcoff + c));
			break;
		default: /* rrs, rrc, rrcs: the local operand is src */
			val[i] = sym_reduce(msg[i], *at(v, g, st->srcbuf, st->srcoff + c));
			break;
		}
	}
	if (mtype_writes_dst(st->type))
		for (int i = 0; i < n; i++)
			*at(v, g, st->dstbuf, st->dstoff + first + i) = val[i];
	free(msg);
	if (out) {
		int slot = (out->head + out->n) % v->cap;
		out->msg[slot] = val;
		out->cnt[slot] = st->cnt;
		out->n++;
	} else {
		free(val);
	}
	if (first + n < st->cnt) {
		*part = first + n;
		return 2;
	}
	*part = 0;
	if (st->hasdep)
		v->flag[g * MSCCL_MAX_TBS + tb->id] = st->s;
	return 1;
}

static void
report_deadlock(VState *v)
{
	const MProg *p = v->p;
	int shown = 0;
	for (int g = 0; g < p->ngpus; g++)
		for (int t = 0; t < p->gpu[g].ntb; t++) {
			const MTb *tb = &p->gpu[g].tb[t];
			int pc = v->pc[g * MSCCL_MAX_TBS + t];
			if (pc >= tb->nstep)
				continue;
			const MStep *st = &tb->step[pc];
			char why[160];
			if (st->depid >= 0 && v->flag[g * MSCCL_MAX_TBS + st->depid] < st->deps)
				snprintf(why, sizeof why, "waits for tb %d step %d (its flag is at %d)",
				         st->depid, st->deps, v->flag[g * MSCCL_MAX_TBS + st->depid]);
			else if (mtype_recvs(st->type) && fifo(v, tb->recv, g, tb->chan)->n == 0)
				snprintf(why, sizeof why, "waits for a message from gpu %d on channel %d "
				         "(FIFO empty)", tb->recv, tb->chan);
			else
				snprintf(why, sizeof why, "waits for room to send to gpu %d on channel %d "
				         "(FIFO full, %d messages)", tb->send, tb->chan, v->cap);
			if (shown == 0)
				error_at((Loc){st->line, 1}, "rule 14 (deadlock): %s run with FIFO capacity "
				         "%d%s stops: gpu %d tb %d step %d (%s) %s",
				         v->inplace ? "an in-place" : "an out-of-place", v->cap,
				         v->pieces ? ", a message per chunk," : "", g, t, st->s,
				         mtype_name[st->type], why);
			else if (shown < 8)
				note_at((Loc){st->line, 1}, "blocked too: gpu %d tb %d step %d (%s) %s", g, t,
				        st->s, mtype_name[st->type], why);
			shown++;
		}
	if (shown > 8)
		note_at((Loc){p->line, 1}, "%d thread blocks are blocked in all", shown);
}

static int
run_mode(const MProg *p, bool inplace, int cap, bool pieces)
{
	VState v = {.p = p, .inplace = inplace, .cap = cap, .pieces = pieces};
	int R = p->ngpus, rc = 0;
	for (int g = 0; g < R; g++) {
		v.buf[g][MB_I] = xcalloc((size_t)msccl_ichunks(p) + 1, sizeof(Sym));
		v.buf[g][MB_O] = xcalloc((size_t)msccl_ochunks(p) + 1, sizeof(Sym));
		v.buf[g][MB_S] = xcalloc((size_t)p->gpu[g].s_chunks + 1, sizeof(Sym));
		for (int k = 0; k < msccl_ichunks(p); k++)
			*at(&v, g, MB_I, k) = initial(p, g, k);
	}
	size_t nf = (size_t)R * R * p->nchannels;
	v.fifo = xcalloc(nf, sizeof *v.fifo);
	for (size_t f = 0; f < nf; f++) {
		v.fifo[f].msg = xcalloc((size_t)cap, sizeof(Sym *));
		v.fifo[f].cnt = xcalloc((size_t)cap, sizeof(int));
	}
	v.flag = xmalloc((size_t)R * MSCCL_MAX_TBS * sizeof *v.flag);
	v.pc = xcalloc((size_t)R * MSCCL_MAX_TBS, sizeof *v.pc);
	v.part = xcalloc((size_t)R * MSCCL_MAX_TBS, sizeof *v.part);
	for (int i = 0; i < R * MSCCL_MAX_TBS; i++)
		v.flag[i] = -1;
	for (;;) {
		bool moved = false, left = false;
		for (int g = 0; g < R && rc == 0; g++)
			for (int t = 0; t < p->gpu[g].ntb && rc == 0; t++) {
				const MTb *tb = &p->gpu[g].tb[t];
				int *pc = &v.pc[g * MSCCL_MAX_TBS + t];
				int r;
				while (*pc < tb->nstep && (r = try_step(&v, g, tb)) != 0) {
					if (r < 0) {
						rc = -1;
						break;
					}
					*pc += r == 1;
					moved = true;
				}
				left |= *pc < tb->nstep;
			}
		if (rc != 0 || !left)
			break;
		if (!moved) {
			report_deadlock(&v);
			rc = -1;
			break;
		}
	}
	for (size_t f = 0; rc == 0 && f < nf; f++)
		if (v.fifo[f].n) {
			int src = (int)(f / p->nchannels / R), dst = (int)(f / p->nchannels % R);
			error_at((Loc){p->gpu[src].line, 1}, "rule 10 (matching): %d message%s from gpu %d "
			         "to gpu %d on channel %d %s never received", v.fifo[f].n,
			         v.fifo[f].n == 1 ? "" : "s", src, dst, (int)(f % p->nchannels),
			         v.fifo[f].n == 1 ? "is" : "are");
			rc = -1;
		}
	static const char *const what[] = {"is never written", "", "mixes different chunks",
	                                   "holds a contribution twice"};
	for (int g = 0; rc == 0 && p->coll != MC_CUSTOM && g < R; g++)
		for (int k = 0; k < msccl_ochunks(p); k++) {
			Sym got = *at(&v, g, MB_O, k), want = expected(p, g, k);
			if (got.state == 1 && got.id == want.id && got.mask == want.mask)
				continue;
			char why[160];
			if (got.state != 1)
				snprintf(why, sizeof why, "%s", what[got.state]);
			else if (got.id != want.id)
				snprintf(why, sizeof why, "holds the wrong chunk");
			else
				snprintf(why, sizeof why, "holds contributions %#llx instead of %#llx",
				         (unsigned long long)got.mask, (unsigned long long)want.mask);
			error_at((Loc){p->gpu[g].line, 1}, "rule 15 (correctness): %s %s: output chunk %d "
			         "of gpu %d %s", inplace ? "in-place" : "out-of-place", p->coll_name, k, g,
			         why);
			rc = -1;
			break;
		}
	for (size_t f = 0; f < nf; f++) {
		for (int s = 0; s < cap; s++)
			free(v.fifo[f].msg[s]);
		free(v.fifo[f].msg);
		free(v.fifo[f].cnt);
	}
	for (int g = 0; g < R; g++)
		for (int b = 0; b < 3; b++)
			free(v.buf[g][b]);
	free(v.fifo);
	free(v.flag);
	free(v.pc);
	free(v.part);
	return rc;
}

int
msccl_check_run(const MProg *p, int capacity, bool pieces)
{
	if (!p->inplace && !p->outofplace) {
		error_at((Loc){p->line, 1}, "rule 2 (algo): inplace=0 and outofplace=0: never used");
		return -1;
	}
	if (p->inplace && run_mode(p, true, capacity, pieces) != 0)
		return -1;
	if (p->outofplace && run_mode(p, false, capacity, pieces) != 0)
		return -1;
	return 0;
}
