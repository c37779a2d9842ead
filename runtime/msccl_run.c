/*
 * msccl_run.c: the CPU interpreter of MSCCL programs (spec section 12). One
 * thread per (rank, tb); real input, output and scratch buffers per rank,
 * aliased as the runtime aliases them in place; a FIFO per (src, dst, chan)
 * holding at most `capacity` messages; progress flags for dependencies.
 * Like the GPU kernel, every tb runs its whole program once per tile of
 * each chunk, and flags carry (tile, step): tiles keep the working set in
 * cache. A watchdog declares a deadlock when no step completes for a while
 * and reports every blocked tb with what it waits for.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msccl_program.h"

enum { TILE_BYTES = 256 << 10, FLAG_TILE = 1 << 16, TB_STACK = 256 << 10 };

/* ---- the interpreter ---- */

typedef struct Fifo {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char **slot;
	int *cnt;
	int head, n;
} Fifo;

typedef enum Wait { W_NONE, W_FLAG, W_RECV, W_SEND, W_DONE } Wait;

typedef struct Tb {
	struct Run *run;
	int rank;
	const MTb *tb;
	pthread_t th;
	_Atomic int64_t flag;  /* tile * FLAG_TILE + step, -1 before any */
	_Atomic int wait;      /* what it blocks on (for the deadlock report) */
	_Atomic int step, tile;
	int error;
	/* its flag's waiters: one condition per tb, so a flag wakes only the
	 * tbs waiting on it, not every tb of the rank */
	pthread_mutex_t fmu;
	pthread_cond_t fcv;
} Tb;

typedef struct Run {
	const MProg *p;
	const RunOpts *o;
	int cap;
	size_t es;
	int64_t S;          /* elements per chunk */
	int64_t T;          /* elements per tile of a chunk */
	int ntile;
	char *(*buf)[3];    /* per rank: i, o, s */
	MIndex ix;          /* tbs numbered over the program; who sends to whom */
	Fifo *fifo;         /* per sending tb (global id) */
	size_t nfifo;
	Tb **tbs;           /* global tb id */
	_Atomic long progress;
	_Atomic int stop;
	_Atomic int running;
	int64_t slot_bytes;
	char errmsg[256];
	int errline;
	pthread_mutex_t errmu;
} Run;


static char *
addr(Run *r, int g, MBuf b, int off, int tile)
{
	MBuf real;
	int o = msccl_resolve(r->p, g, r->o->inplace, b, off, &real);
	return r->buf[g][real] + ((int64_t)o * r->S + (int64_t)tile * r->T) * (int64_t)r->es;
}

/* Stops every tb: waits have no timeout (thousands of tbs polling would
 * cost more than the run), so each waiter is woken; under its mutex, so a
 * waiter that has not yet seen stop is already waiting. Called holding no
 * FIFO or flag mutex. */
static void
stop_run(Run *r)
{
	atomic_store(&r->stop, 1);
	for (size_t f = 0; f < r->nfifo; f++) {
		pthread_mutex_lock(&r->fifo[f].mu);
		pthread_cond_broadcast(&r->fifo[f].cv);
		pthread_mutex_unlock(&r->fifo[f].mu);
	}
	for (int i = 0; i < r->ix.ntb; i++)
		if (r->tbs[i]) {
			pthread_mutex_lock(&r->tbs[i]->fmu);
			pthread_cond_broadcast(&r->tbs[i]->fcv);
			pthread_mutex_unlock(&r->tbs[i]->fmu);
		}
}

static void
run_error(Run *r, int line, const char *msg)
{
	pthread_mutex_lock(&r->errmu);
	if (!r->errmsg[0]) {
		snprintf(r->errmsg, sizeof r->errmsg, "%s", msg);
		r->errline = line;
	}
	pthread_mutex_unlock(&r->errmu);
	stop_run(r);
}

/* The FIFO tb (of rank g) receives from: its peer's sending tb's; NULL
 * when no tb sends to it (the checker refuses such files first). */
static Fifo *
in_fifo(Run *r, int g, const MTb *tb)
{
	int s = r->ix.sender[r->ix.base[g] + tb->id];
	return s >= 0 ? &r->fifo[s] : NULL;
}

/* The data of step st on one tile of len elements: from the received
 * message msg and the buffers, into the buffers and the FIFO slot oslot. */
static void
apply_step(Tb *me, const MStep *st, int tile, int64_t len, char *msg, char *oslot)
{
	Run *r = me->run;
	int g = me->rank;
	int64_t bytes = len * (int64_t)r->es;
	for (int c = 0; c < st->cnt; c++) {
		char *src = mtype_reads_src(st->type) ? addr(r, g, st->srcbuf, st->srcoff + c, tile) : NULL;
		char *dst = mtype_writes_dst(st->type) ? addr(r, g, st->dstbuf, st->dstoff + c, tile) : NULL;
		char *m = msg ? msg + c * bytes : NULL;
		char *o = oslot ? oslot + c * bytes : NULL;
		switch (st->type) {
		case MT_S:
			memcpy(o, src, (size_t)bytes);
			break;
		case MT_R:
			memcpy(dst, m, (size_t)bytes);
			break;
		case MT_RCS:
			memcpy(dst, m, (size_t)bytes);
			memcpy(o, m, (size_t)bytes);
			break;
		case MT_RRS:
			rt_reduce(o, m, src, len, r->o->dtype, r->o->op);
			break;
		case MT_RRC:
			rt_reduce(dst, m, src, len, r->o->dtype, r->o->op);
			break;
		case MT_RRCS:
			rt_reduce(dst, m, src, len, r->o->dtype, r->o->op);
			memcpy(o, dst, (size_t)bytes);
			break;
		case MT_CPY:
			memmove(dst, src, (size_t)bytes);
			break;
		case MT_RE:
			rt_reduce(dst, dst, src, len, r->o->dtype, r->o->op);
			break;
		default:
			break;
		}
	}
}

/* One step on one tile; 0, or -1 when the run stops. */
static int
exec_step(Tb *me, const MStep *st, int tile)
{
	Run *r = me->run;
	int g = me->rank;
	int64_t len = r->T;
	if ((int64_t)(tile + 1) * r->T > r->S)
		len = r->S - (int64_t)tile * r->T;
	if (st->depid >= 0) {
		Tb *d = r->tbs[r->ix.base[g] + st->depid];
		int64_t want = (int64_t)tile * FLAG_TILE + st->deps;
		if (atomic_load_explicit(&d->flag, memory_order_acquire) < want) {
			atomic_store(&me->wait, W_FLAG);
			pthread_mutex_lock(&d->fmu);
			while (atomic_load_explicit(&d->flag, memory_order_acquire) < want &&
			       !atomic_load(&r->stop))
				pthread_cond_wait(&d->fcv, &d->fmu);
			pthread_mutex_unlock(&d->fmu);
			if (atomic_load(&r->stop))
				return -1;
		}
	}
	if (st->type == MT_NOP)
		return 0;
	const MTb *tb = me->tb;
	Fifo *in = mtype_recvs(st->type) ? in_fifo(r, g, tb) : NULL;
	Fifo *out = mtype_sends(st->type) ? &r->fifo[r->ix.base[g] + tb->id] : NULL;
	if (mtype_recvs(st->type) && !in) {
		run_error(r, st->line, "rule 10 (matching): no thread block sends to this receive");
		return -1;
	}
	char *msg = NULL;
	if (in) {
		atomic_store(&me->wait, W_RECV);
		pthread_mutex_lock(&in->mu);
		while (in->n == 0 && !atomic_load(&r->stop))
			pthread_cond_wait(&in->cv, &in->mu);
		if (atomic_load(&r->stop)) {
			pthread_mutex_unlock(&in->mu);
			return -1;
		}
		int c = in->cnt[in->head];
		msg = in->slot[in->head];
		pthread_mutex_unlock(&in->mu);
		if (c != st->cnt) {
			char m[200];
			snprintf(m, sizeof m, "rule 10 (matching): gpu %d tb %d step %d receives cnt=%d "
			         "but the message from gpu %d holds %d chunks", g, tb->id, st->s, st->cnt,
			         tb->recv, c);
			run_error(r, st->line, m);
			return -1;
		}
	}
	char *oslot = NULL;
	if (out) {
		atomic_store(&me->wait, W_SEND);
		pthread_mutex_lock(&out->mu);
		while (out->n == r->cap && !atomic_load(&r->stop))
			pthread_cond_wait(&out->cv, &out->mu);
		if (atomic_load(&r->stop)) {
			pthread_mutex_unlock(&out->mu);
			return -1;
		}
		/* the slot after the last message is free and only its producer
		 * (this tb) writes it, so it is filled outside the lock */
		oslot = out->slot[(out->head + out->n) % r->cap];
		pthread_mutex_unlock(&out->mu);
	}
	atomic_store(&me->wait, W_NONE);
	apply_step(me, st, tile, len, msg, oslot);
	if (in) {
		pthread_mutex_lock(&in->mu);
		in->head = (in->head + 1) % r->cap;
		in->n--;
		pthread_cond_broadcast(&in->cv);
		pthread_mutex_unlock(&in->mu);
	}
	if (out) {
		pthread_mutex_lock(&out->mu);
		out->cnt[(out->head + out->n) % r->cap] = st->cnt;
		out->n++;
		pthread_cond_broadcast(&out->cv);
		pthread_mutex_unlock(&out->mu);
	}
	if (st->hasdep) {
		pthread_mutex_lock(&me->fmu);
		atomic_store_explicit(&me->flag, (int64_t)tile * FLAG_TILE + st->s, memory_order_release);
		pthread_cond_broadcast(&me->fcv);
		pthread_mutex_unlock(&me->fmu);
	}
	return 0;
}

static void *
tb_main(void *arg)
{
	Tb *me = arg;
	Run *r = me->run;
	for (int t = 0; t < r->ntile; t++)
		for (int k = 0; k < me->tb->nstep; k++) {
			atomic_store(&me->tile, t);
			atomic_store(&me->step, k);
			if (exec_step(me, &me->tb->step[k], t) != 0)
				return NULL;
			atomic_fetch_add(&r->progress, 1);
		}
	atomic_store(&me->wait, W_DONE);
	atomic_fetch_sub(&r->running, 1);
	return NULL;
}

/* The watchdog's report: every blocked thread block and the wait its
 * thread declared (Tb.wait, step, tile, read atomically). msccl_verify.c's
 * report_deadlock prints the same shape but cannot share this one: it
 * works the wait out from the sequential verifier's state (pc, flags, FIFO
 * counts), which the threads here do not keep. */
static void
report_deadlock(Diag *dg, Run *r)
{
	const MProg *p = r->p;
	int shown = 0;
	for (int g = 0; g < p->ngpus; g++)
		for (int t = 0; t < p->gpu[g].ntb; t++) {
			Tb *me = r->tbs[r->ix.base[g] + t];
			int w = atomic_load(&me->wait);
			if (w == W_DONE)
				continue;
			const MStep *st = &me->tb->step[atomic_load(&me->step)];
			char why[160];
			if (w == W_FLAG)
				snprintf(why, sizeof why, "waits for tb %d step %d", st->depid, st->deps);
			else if (w == W_RECV)
				snprintf(why, sizeof why, "waits for a message from gpu %d on channel %d "
				         "(FIFO empty)", me->tb->recv, me->tb->chan);
			else if (w == W_SEND)
				snprintf(why, sizeof why, "waits for room to send to gpu %d on channel %d "
				         "(FIFO full)", me->tb->send, me->tb->chan);
			else
				snprintf(why, sizeof why, "is running");
			if (shown == 0)
				error_at(dg, (Loc){st->line, 1}, "deadlock: no step completed for %.1f s: gpu %d "
				         "tb %d step %d (%s, tile %d) %s", r->o->timeout, g, t, st->s,
				         mtype_name[st->type], atomic_load(&me->tile), why);
			else if (shown < 8)
				note_at(dg, (Loc){st->line, 1}, "blocked too: gpu %d tb %d step %d (%s) %s", g, t,
				        st->s, mtype_name[st->type], why);
			shown++;
		}
	if (shown > 8)
		note_at(dg, (Loc){p->line, 1}, "%d thread blocks are blocked in all", shown);
}

/* The expected output of rank g, element e of its output buffer. */
static void
expect(const MProg *p, const RunOpts *o, int64_t S, int g, int root, int64_t e, void *out)
{
	int64_t blk = (int64_t)(p->nchunksperloop / p->ngpus) * S;
	switch (p->coll) {
	case MC_BROADCAST: /* the root's input */
		rt_op_fill(out, o->dtype, o->op, root, e, 1);
		break;
	case MC_ALLGATHER:
		rt_op_fill(out, o->dtype, o->op, (int)(e / blk), e % blk, 1);
		break;
	case MC_ALLTOALL:
		rt_op_fill(out, o->dtype, o->op, (int)(e / blk), g * blk + e % blk, 1);
		break;
	case MC_REDUCESCATTER:
		rt_expect_reduced(out, o->dtype, o->op, p->ngpus, g * blk + e);
		break;
	default:
		rt_expect_reduced(out, o->dtype, o->op, p->ngpus, e);
		break;
	}
}

static int
verify_output(Diag *dg, Run *r)
{
	const MProg *p = r->p;
	int64_t n = (int64_t)msccl_ochunks(p) * r->S;
	char *want = xmalloc((size_t)n * r->es + 8);
	char *got = xmalloc((size_t)n * r->es + 8);
	int rc = 0;
	/* one reference serves every rank */
	bool same = p->coll == MC_ALLREDUCE || p->coll == MC_BROADCAST || p->coll == MC_REDUCE;
	int root = msccl_root(p);
	for (int g = 0; g < p->ngpus && rc == 0; g++) {
		if (p->coll == MC_REDUCE && g != root)
			continue; /* only the root's output is promised */
		if (g == 0 || g == root || !same)
			for (int64_t e = 0; e < n; e++)
				expect(p, r->o, r->S, g, root, e, want + e * (int64_t)r->es);
		for (int k = 0; k < msccl_ochunks(p); k++)
			memcpy(got + (int64_t)k * r->S * (int64_t)r->es, addr(r, g, MB_O, k, 0),
			       (size_t)(r->S * (int64_t)r->es));
		int64_t bad;
		if (rt_compare(got, want, n, r->o->dtype, &bad) != 0) {
			error_at(dg, (Loc){p->gpu[g].line, 1}, "wrong result: %s %s %s of %s: gpu %d output "
			         "element %lld (chunk %lld) differs from the reference",
			         r->o->inplace ? "in-place" : "out-of-place", p->coll_name,
			         rop_name(r->o->op), rdtype_name(r->o->dtype), g, (long long)bad,
			         (long long)(bad / r->S));
			rc = -1;
		}
	}
	free(want);
	free(got);
	return rc;
}

/* Rule 16 and the declared modes: whether the executor would run the file
 * at o->bytes in o's mode; -1 after reporting why not. */
static int
check_selected(Diag *dg, const MProg *p, const RunOpts *o, size_t es)
{
	int64_t total = o->bytes / (int64_t)es;
	/* what to run instead: the nearest size the executor selects it for */
	char near[96] = "";
	int64_t b = msccl_nearest_size(p, o->bytes, es);
	if (b > 0)
		snprintf(near, sizeof near, "; the nearest size it runs is %lld bytes (--size %lld)",
		         (long long)b, (long long)b);
	if (total <= 0 || total % p->nchunksperloop != 0 || total * (int64_t)es != o->bytes) {
		error_at(dg, (Loc){p->line, 1}, "rule 16 (selection): %lld bytes of %s are not a whole "
		         "number of elements per chunk for nchunksperloop=%d; the executor would not "
		         "select this algorithm%s", (long long)o->bytes, rdtype_name(o->dtype),
		         p->nchunksperloop, near);
		return -1;
	}
	if (!msccl_selects(p, o->bytes, es)) {
		error_at(dg, (Loc){p->line, 1}, "rule 16 (selection): %lld bytes are outside the file's "
		         "range minBytes=%lld maxBytes=%lld (%s); the executor would not select this "
		         "algorithm%s", (long long)o->bytes, (long long)p->min_bytes,
		         (long long)p->max_bytes,
		         p->legacy ? "legacy: maxBytes exclusive"
		                   : "inclusive, maxBytes=0 unlimited", near);
		return -1;
	}
	if ((o->inplace && !p->inplace) || (!o->inplace && !p->outofplace)) {
		error_at(dg, (Loc){p->line, 1}, "the file declares %s=0: it is not run %s",
		         o->inplace ? "inplace" : "outofplace",
		         o->inplace ? "in place" : "out of place");
		return -1;
	}
	return 0;
}

/* Chunk, tile and FIFO slot sizes. Needs a selected size. */
static void
size_run(Run *r)
{
	const MProg *p = r->p;
	r->S = r->o->bytes / (int64_t)r->es / p->nchunksperloop;
	int64_t tile_elems = TILE_BYTES / (int64_t)r->es;
	r->T = r->S < tile_elems ? r->S : tile_elems;
	r->ntile = (int)((r->S + r->T - 1) / r->T);
	int maxcnt = 1;
	for (int g = 0; g < p->ngpus; g++)
		for (int t = 0; t < p->gpu[g].ntb; t++)
			for (int k = 0; k < p->gpu[g].tb[t].nstep; k++)
				if (p->gpu[g].tb[t].step[k].cnt > maxcnt)
					maxcnt = p->gpu[g].tb[t].step[k].cnt;
	r->slot_bytes = (int64_t)maxcnt * r->T * (int64_t)r->es;
}

/* Buffers, poisoned, with the input filled through the in-place aliases;
 * a FIFO of cap slots per connection some tb sends on. Needs size_run. */
static void
alloc_run(Run *r)
{
	const MProg *p = r->p;
	msccl_index(p, &r->ix);
	r->buf = xcalloc((size_t)p->ngpus, sizeof *r->buf);
	int root = msccl_root(p);
	for (int g = 0; g < p->ngpus; g++) {
		for (int b = 0; b < 3; b++) {
			int64_t n = (int64_t)msccl_buf_chunks(p, g, (MBuf)b) * r->S * (int64_t)r->es;
			r->buf[g][b] = xmalloc((size_t)n + 8);
			memset(r->buf[g][b], 0xA5, (size_t)n); /* poison: not a value the fill makes */
		}
		/* a broadcast's other ranks pass no input: theirs stays poison */
		for (int k = 0; k < msccl_ichunks(p) && (p->coll != MC_BROADCAST || g == root); k++)
			rt_op_fill(addr(r, g, MB_I, k, 0), r->o->dtype, r->o->op, g, (int64_t)k * r->S,
			           r->S);
	}
	r->nfifo = (size_t)r->ix.ntb;
	r->fifo = xcalloc(r->nfifo + 1, sizeof *r->fifo);
	for (size_t f = 0; f < r->nfifo; f++) {
		pthread_mutex_init(&r->fifo[f].mu, NULL);
		pthread_cond_init(&r->fifo[f].cv, NULL);
		const MTb *tb = &p->gpu[r->ix.rank[f]].tb[f - (size_t)r->ix.base[r->ix.rank[f]]];
		if (tb->send < 0)
			continue;
		r->fifo[f].slot = xcalloc((size_t)r->cap, sizeof(char *));
		r->fifo[f].cnt = xcalloc((size_t)r->cap, sizeof(int));
		for (int s = 0; s < r->cap; s++)
			r->fifo[f].slot[s] = xmalloc((size_t)r->slot_bytes + 8);
	}
	pthread_mutex_init(&r->errmu, NULL);
}

/* A thread per tb, started; a tb whose thread cannot start is an error. */
static void
start_tbs(Run *r)
{
	const MProg *p = r->p;
	r->tbs = xcalloc((size_t)r->ix.ntb + 1, sizeof *r->tbs);
	int nthreads = 0;
	for (int g = 0; g < p->ngpus; g++)
		for (int t = 0; t < p->gpu[g].ntb; t++) {
			Tb *me = xcalloc(1, sizeof *me);
			me->run = r;
			me->rank = g;
			me->tb = &p->gpu[g].tb[t];
			atomic_init(&me->flag, -1);
			atomic_init(&me->wait, W_NONE);
			pthread_mutex_init(&me->fmu, NULL);
			pthread_cond_init(&me->fcv, NULL);
			r->tbs[r->ix.base[g] + t] = me;
			nthreads++;
		}
	atomic_init(&r->running, nthreads);
	/* thousands of tbs at 256 ranks: small stacks (a tb needs a few frames) */
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, TB_STACK);
	for (int i = 0; i < r->ix.ntb; i++)
		if (r->tbs[i] && pthread_create(&r->tbs[i]->th, &attr, tb_main, r->tbs[i]) != 0) {
			char m[200];
			snprintf(m, sizeof m, "cannot start thread %d of %d (one per thread block): the "
			         "system's thread limit (pid_max, ulimit -u) or memory", i + 1, r->ix.ntb);
			run_error(r, p->line, m);
			atomic_fetch_sub(&r->running, 1);
			r->tbs[i]->error = 1;
		}
	pthread_attr_destroy(&attr);
}

/* The watchdog: progress or an end, else a deadlock (reported, the run
 * stopped: -1). Then every thread joined. */
static int
watch_tbs(Diag *dg, Run *r)
{
	long last = -1;
	double since = wall_seconds();
	int rc = 0;
	while (atomic_load(&r->running) > 0 && !atomic_load(&r->stop)) {
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
		long pr = atomic_load(&r->progress);
		if (pr != last) {
			last = pr;
			since = wall_seconds();
		} else if (wall_seconds() - since > r->o->timeout) {
			report_deadlock(dg, r);
			stop_run(r);
			rc = -1;
		}
	}
	for (int i = 0; i < r->ix.ntb; i++)
		if (r->tbs[i] && !r->tbs[i]->error)
			pthread_join(r->tbs[i]->th, NULL);
	return rc;
}

/* After a clean run: an error a tb reported, or messages never received
 * (rule 10). -1 after reporting. */
static int
check_finished(Diag *dg, Run *r)
{
	const MProg *p = r->p;
	if (r->errmsg[0]) {
		error_at(dg, (Loc){r->errline, 1}, "%s", r->errmsg);
		return -1;
	}
	for (size_t f = 0; f < r->nfifo; f++)
		if (r->fifo[f].n) {
			int src = r->ix.rank[f];
			const MTb *tb = &p->gpu[src].tb[f - (size_t)r->ix.base[src]];
			error_at(dg, (Loc){p->gpu[src].line, 1}, "rule 10 (matching): %d message%s from gpu %d "
			         "to gpu %d on channel %d never received", r->fifo[f].n,
			         r->fifo[f].n == 1 ? "" : "s", src, tb->send, tb->chan);
			return -1;
		}
	return 0;
}

static void
free_run(Run *r)
{
	const MProg *p = r->p;
	for (size_t f = 0; f < r->nfifo; f++) {
		for (int s = 0; r->fifo[f].slot && s < r->cap; s++)
			free(r->fifo[f].slot[s]);
		free(r->fifo[f].slot);
		free(r->fifo[f].cnt);
		pthread_mutex_destroy(&r->fifo[f].mu);
		pthread_cond_destroy(&r->fifo[f].cv);
	}
	for (int g = 0; g < p->ngpus; g++) {
		for (int b = 0; b < 3; b++)
			free(r->buf[g][b]);
	}
	free(r->buf);
	for (int i = 0; i < r->ix.ntb; i++)
		if (r->tbs[i]) {
			pthread_mutex_destroy(&r->tbs[i]->fmu);
			pthread_cond_destroy(&r->tbs[i]->fcv);
			free(r->tbs[i]);
		}
	free(r->tbs);
	free(r->fifo);
	msccl_index_free(&r->ix);
	pthread_mutex_destroy(&r->errmu);
}

int
msccl_run(Diag *dg, const MProg *p, const RunOpts *o, RunResult *res)
{
	memset(res, 0, sizeof *res);
	Run r = {.p = p, .o = o, .cap = o->capacity > 0 ? o->capacity : msccl_capacity(p->proto),
	         .es = rdtype_size(o->dtype)};
	if (check_selected(dg, p, o, r.es) != 0)
		return -1;
	size_run(&r);
	alloc_run(&r);
	double t0 = wall_seconds();
	start_tbs(&r);
	int rc = watch_tbs(dg, &r);
	res->seconds = wall_seconds() - t0;
	if (rc == 0)
		rc = check_finished(dg, &r);
	res->bytes = o->bytes;
	res->checked = p->coll != MC_CUSTOM;
	if (rc == 0 && res->checked) {
		rc = verify_output(dg, &r);
		res->verified = rc == 0;
	}
	free_run(&r);
	return rc;
}
