/*
 * msccl_check.c: the spec's validation rules (msccl-xml.md section 13) on an
 * MSCCL program in memory. One implementation serves the reader (files) and
 * the backend (what it is about to write). Rules 14, 15 and 17 need
 * execution and are in msccl_verify.c: msccl_check_run steps the program
 * sequentially with bounded FIFOs and symbolic chunk values, so it is
 * deterministic and needs no threads.
 */
#include <stdlib.h>
#include <string.h>

#include "msccl_program.h"

bool
mtype_sends(MType t)
{
	return t == MT_S || t == MT_RCS || t == MT_RRS || t == MT_RRCS;
}

bool
mtype_recvs(MType t)
{
	return t == MT_R || t == MT_RCS || t == MT_RRS || t == MT_RRC || t == MT_RRCS;
}

bool
mtype_reads_src(MType t)
{
	return t == MT_S || t == MT_RRS || t == MT_RRC || t == MT_RRCS || t == MT_CPY || t == MT_RE;
}

bool
mtype_writes_dst(MType t)
{
	return t == MT_R || t == MT_RCS || t == MT_RRC || t == MT_RRCS || t == MT_CPY || t == MT_RE;
}

int
msccl_capacity(MProto p)
{
	return p == MP_SIMPLE ? 2 : 8;
}

int
msccl_multiplier(const MProg *p)
{
	return p->coll == MC_ALLGATHER || p->coll == MC_REDUCESCATTER || p->coll == MC_ALLTOALL
	           ? p->ngpus
	           : 1;
}

/* The inclusive byte range the executor selects from: [lo, hi], hi < 0 for
 * no upper bound. */
static void
selection_range(const MProg *p, int64_t *lo, int64_t *hi)
{
	*lo = p->min_bytes;
	if (p->legacy)
		*hi = p->max_bytes - 1; /* exclusive, and 0 selects nothing */
	else
		*hi = p->max_bytes == 0 ? -1 : p->max_bytes;
}

bool
msccl_selects(const MProg *p, int64_t bytes, size_t es)
{
	int64_t lo, hi, step = (int64_t)es * p->nchunksperloop;
	selection_range(p, &lo, &hi);
	return bytes > 0 && step > 0 && bytes % step == 0 && bytes >= lo && (hi < 0 || bytes <= hi);
}

int64_t
msccl_nearest_size(const MProg *p, int64_t want, size_t es)
{
	int64_t lo, hi, step = (int64_t)es * p->nchunksperloop;
	selection_range(p, &lo, &hi);
	if (step <= 0)
		return -1;
	if (lo < step)
		lo = step; /* count > 0 */
	int64_t first = (lo + step - 1) / step * step, last = hi < 0 ? INT64_MAX / step * step
	                                                              : hi / step * step;
	if (first > last)
		return -1;
	if (want <= first)
		return first;
	if (want >= last)
		return last;
	int64_t below = want / step * step, above = below == want ? want : below + step;
	return want - below <= above - want ? below : above;
}

int
msccl_ichunks(const MProg *p)
{
	return p->coll == MC_ALLGATHER ? p->nchunksperloop / p->ngpus : p->nchunksperloop;
}

int
msccl_ochunks(const MProg *p)
{
	return p->coll == MC_REDUCESCATTER ? p->nchunksperloop / p->ngpus : p->nchunksperloop;
}

int
msccl_resolve(const MProg *p, int rank, bool inplace, MBuf b, int off, MBuf *real)
{
	*real = b;
	if (!inplace || b == MB_S)
		return off;
	int blk = p->nchunksperloop / p->ngpus;
	switch (p->coll) {
	case MC_ALLGATHER: /* i[k] is o[rank*N/R + k] */
		if (b == MB_I) {
			*real = MB_O;
			return rank * blk + off;
		}
		return off;
	case MC_REDUCESCATTER: /* o[k] is i[rank*N/R + k] */
		if (b == MB_O) {
			*real = MB_I;
			return rank * blk + off;
		}
		return off;
	default: /* o is i */
		*real = MB_I;
		return off;
	}
}

int
msccl_buf_chunks(const MProg *p, int rank, MBuf real)
{
	if (real == MB_S)
		return p->gpu[rank].s_chunks;
	return real == MB_I ? msccl_ichunks(p) : msccl_ochunks(p);
}

const MTb *
msccl_tb(const MProg *p, int rank, int id)
{
	return &p->gpu[rank].tb[id];
}

/* A connection end: (gpu, peer, channel) and the tb on it. */
typedef struct ConnKey {
	int g, peer, chan, id;
} ConnKey;

static int
conn_cmp(const void *x, const void *y)
{
	const ConnKey *a = x, *b = y;
	if (a->g != b->g)
		return a->g < b->g ? -1 : 1;
	if (a->peer != b->peer)
		return a->peer < b->peer ? -1 : 1;
	if (a->chan != b->chan)
		return a->chan < b->chan ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* The tbs with a send (or recv) peer, sorted by (gpu, peer, channel). */
static ConnKey *
conn_keys(const MProg *p, const MIndex *ix, bool send, int *n)
{
	ConnKey *k = xmalloc(((size_t)ix->ntb + 1) * sizeof *k);
	*n = 0;
	for (int g = 0; g < p->ngpu; g++)
		for (int t = 0; t < p->gpu[g].ntb; t++) {
			int peer = send ? p->gpu[g].tb[t].send : p->gpu[g].tb[t].recv;
			if (peer >= 0)
				k[(*n)++] = (ConnKey){g, peer, p->gpu[g].tb[t].chan, ix->base[g] + t};
		}
	sort_n(k, (size_t)*n, sizeof *k, conn_cmp);
	return k;
}

/* The tb of `keys` at (g, peer, chan) with the smallest id, or -1. */
static int
conn_find(const ConnKey *keys, int n, int g, int peer, int chan)
{
	int lo = 0, hi = n;
	ConnKey want = {g, peer, chan, -1};
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (conn_cmp(&keys[mid], &want) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && keys[lo].g == g && keys[lo].peer == peer && keys[lo].chan == chan)
		return keys[lo].id;
	return -1;
}

void
msccl_index(const MProg *p, MIndex *ix)
{
	memset(ix, 0, sizeof *ix);
	ix->base = xmalloc(((size_t)p->ngpu + 1) * sizeof *ix->base);
	for (int g = 0; g < p->ngpu; g++) {
		ix->base[g] = ix->ntb;
		ix->ntb += p->gpu[g].ntb;
	}
	ix->base[p->ngpu] = ix->ntb;
	size_t n = (size_t)ix->ntb + 1;
	ix->sender = xmalloc(n * sizeof(int));
	ix->receiver = xmalloc(n * sizeof(int));
	ix->rank = xmalloc(n * sizeof(int));
	int ns, nr;
	ConnKey *sk = conn_keys(p, ix, true, &ns), *rk = conn_keys(p, ix, false, &nr);
	for (int g = 0; g < p->ngpu; g++)
		for (int t = 0; t < p->gpu[g].ntb; t++) {
			const MTb *tb = &p->gpu[g].tb[t];
			int id = ix->base[g] + t;
			ix->rank[id] = g;
			/* the peer's tb whose send peer is g, on this channel */
			ix->sender[id] = tb->recv >= 0 ? conn_find(sk, ns, tb->recv, g, tb->chan) : -1;
			ix->receiver[id] = tb->send >= 0 ? conn_find(rk, nr, tb->send, g, tb->chan) : -1;
		}
	free(sk);
	free(rk);
}

void
msccl_index_free(MIndex *ix)
{
	free(ix->base);
	free(ix->sender);
	free(ix->receiver);
	free(ix->rank);
	memset(ix, 0, sizeof *ix);
}

static const char *const bufname[] = {"i", "o", "s"};

static int
declared(const MGpu *g, MBuf b)
{
	return b == MB_I ? g->i_chunks : b == MB_O ? g->o_chunks : g->s_chunks;
}

/* Rules 2-4: the header, the gpus and the tb ids. */
static int
check_shape(Diag *dg, const MProg *p)
{
	int err = 0;
	Loc at = {p->line, 1};
	if (p->nchannels < 1 || p->nchannels > MSCCL_MAX_CHANNELS) {
		error_at(dg, at, "rule 5 (channels): nchannels=%d must be in 1..%d", p->nchannels,
		         MSCCL_MAX_CHANNELS);
		err = -1;
	}
	if (p->ngpus < 2 || p->ngpus > MSCCL_MAX_GPUS) {
		error_at(dg, at, "rule 2 (algo): ngpus=%d must be in 2..%d", p->ngpus, MSCCL_MAX_GPUS);
		return -1;
	}
	if (p->nchunksperloop < 1 || p->nchunksperloop > MSCCL_MAX_OFFSET + 1) {
		error_at(dg, at, "rule 2 (algo): nchunksperloop=%d must be in 1..%d", p->nchunksperloop,
		         MSCCL_MAX_OFFSET + 1);
		return -1;
	}
	if (msccl_multiplier(p) > 1 && p->nchunksperloop % p->ngpus != 0) {
		error_at(dg, at, "rule 3 (gpus): nchunksperloop=%d of %s must be a multiple of ngpus=%d",
		         p->nchunksperloop, p->coll_name, p->ngpus);
		return -1;
	}
	if ((p->inplace != 0 && p->inplace != 1) || (p->outofplace != 0 && p->outofplace != 1)) {
		error_at(dg, at, "rule 2 (algo): inplace and outofplace are 0 or 1");
		err = -1;
	}
	if (p->min_bytes < 0 || p->max_bytes < 0 ||
	    (p->max_bytes != 0 && p->min_bytes > p->max_bytes) || (p->legacy && p->max_bytes == 0)) {
		error_at(dg, at, "rule 16 (selection): minBytes=%lld and maxBytes=%lld select nothing%s",
		         (long long)p->min_bytes, (long long)p->max_bytes,
		         p->legacy ? " (legacy: maxBytes is exclusive and 0 means never)" : "");
		err = -1;
	}
	if (p->ngpu != p->ngpus) {
		error_at(dg, at, "rule 3 (gpus): ngpus=%d but the file has %d <gpu> elements", p->ngpus,
		         p->ngpu);
		return -1;
	}
	for (int g = 0; g < p->ngpu; g++) {
		const MGpu *gp = &p->gpu[g];
		Loc gl = {gp->line, 1};
		if (gp->id != g) { /* in id order: a repeat is the id before, else g is missing */
			if (g > 0 && gp->id == p->gpu[g - 1].id)
				error_at(dg, gl, "rule 3 (gpus): gpu id %d is listed twice (first at line %d)",
				         gp->id, p->gpu[g - 1].line);
			else
				error_at(dg, gl, "rule 3 (gpus): gpu %d is missing (ids run 0 to ngpus - 1)", g);
			return -1;
		}
		if (gp->s_chunks < 0 || gp->i_chunks < 0 || gp->o_chunks < 0) {
			error_at(dg, gl, "rule 3 (gpus): chunk counts of gpu %d must not be negative", g);
			err = -1;
		}
		if (p->legacy && ((gp->i_chunks > 0 && gp->i_chunks != msccl_ichunks(p)) ||
		                  (gp->o_chunks > 0 && gp->o_chunks != msccl_ochunks(p)))) {
			error_at(dg, gl, "rule 3 (gpus): the legacy runtime needs i_chunks=%d and o_chunks=%d "
			         "(or 0) on gpu %d", msccl_ichunks(p), msccl_ochunks(p), g);
			err = -1;
		}
		int maxtbs = p->legacy ? MSCCL_MAX_TBS_LEGACY : MSCCL_MAX_TBS_EXEC;
		if (gp->ntb > maxtbs) {
			error_at(dg, gl, "rule 4 (thread blocks): gpu %d has %d thread blocks; the limit is %d",
			         g, gp->ntb, maxtbs);
			err = -1;
		}
		long nodes = 1 + p->ngpus + gp->ntb;
		for (int t = 0; t < gp->ntb; t++)
			nodes += gp->tb[t].nstep;
		if (nodes > MSCCL_MAX_NODES) {
			error_at(dg, gl, "rule 7 (steps): gpu %d's %d thread blocks and their steps, with "
			         "<algo> and the %d <gpu> elements, make %ld elements; the executor's "
			         "parser stores at most %d per rank", g, gp->ntb, p->ngpus, nodes,
			         MSCCL_MAX_NODES);
			err = -1;
		}
		for (int t = 0; t < gp->ntb; t++)
			if (gp->tb[t].id != t) {
				bool dup = t > 0 && gp->tb[t].id == gp->tb[t - 1].id;
				error_at(dg, (Loc){gp->tb[t].line, 1},
				         dup ? "rule 4 (thread blocks): duplicate thread block id %d on gpu %d"
				             : "rule 4 (thread blocks): thread block %d is missing on gpu %d",
				         dup ? gp->tb[t].id : t, g);
				return -1;
			}
	}
	return err;
}

/* Rule 9: a step's count, and the chunks it reads and writes inside the
 * buffers (as declared, and as the collective makes them). */
static int
check_step_buffers(Diag *dg, const MProg *p, int g, const MStep *st)
{
	const MGpu *gp = &p->gpu[g];
	Loc sl = {st->line, 1};
	if (st->type != MT_NOP) {
		if (st->cnt < 1 || st->cnt >= MSCCL_MAX_COUNT) {
			error_at(dg, sl, "rule 9 (counts): count (%d) must be positive and less than %d",
			         st->cnt, MSCCL_MAX_COUNT);
			return -1;
		}
		for (int side = 0; side < 2; side++) {
			bool used = side ? mtype_writes_dst(st->type) : mtype_reads_src(st->type);
			MBuf b = side ? st->dstbuf : st->srcbuf;
			int off = side ? st->dstoff : st->srcoff;
			if (!used)
				continue;
			int lim = declared(gp, b);
			if (b != MB_S) {
				int truth = b == MB_I ? msccl_ichunks(p) : msccl_ochunks(p);
				if (truth < lim)
					lim = truth;
			}
			if (off < 0 || off > MSCCL_MAX_OFFSET || off + st->cnt > lim) {
				error_at(dg, sl, "rule 9 (offsets): %s chunks [%d, %d) of buffer %s are outside "
				         "its %d chunks on gpu %d", side ? "destination" : "source", off,
				         off + st->cnt, bufname[b], lim, g);
				return -1;
			}
		}
	}
	return 0;
}

/* Rule 11: step k of tb waits on an earlier step of its own tb or any step
 * of another, which sets its flag; a nop carries a wait, and a chain of
 * nops ends in a step that waits too. */
static int
check_step_deps(Diag *dg, const MGpu *gp, int g, const MTb *tb, int k)
{
	const MStep *st = &tb->step[k];
	Loc sl = {st->line, 1};
	/* rule 11: dependencies */
	if ((st->depid < 0) != (st->deps < 0) || st->depid < -1 || st->deps < -1) {
		error_at(dg, sl, "rule 11 (dependencies): depid=%d deps=%d: both -1 or both set",
		         st->depid, st->deps);
		return -1;
	}
	if (st->depid >= 0) {
		if (st->depid >= gp->ntb || st->depid > MSCCL_MAX_DEPID) {
			error_at(dg, sl, "rule 11 (dependencies): depid=%d names no thread block of gpu %d "
			         "(ids 0..%d, and at most %d)", st->depid, g, gp->ntb - 1,
			         MSCCL_MAX_DEPID);
			return -1;
		}
		const MTb *d = &gp->tb[st->depid];
		if (st->deps >= d->nstep || (st->depid == tb->id && st->deps >= k)) {
			error_at(dg, sl, "rule 11 (dependencies): deps=%d is not %s step of tb %d on gpu %d",
			         st->deps, st->depid == tb->id ? "an earlier" : "a", st->depid, g);
			return -1;
		}
		if (d->step[st->deps].hasdep != 1) {
			error_at(dg, sl, "rule 11 (dependencies): step %d of tb %d on gpu %d is waited on "
			         "but has hasdep=0, so its flag is never set and the wait hangs "
			         "(line %d)", st->deps, st->depid, g, d->step[st->deps].line);
			return -1;
		}
	}
	if (st->type == MT_NOP) {
		if (st->depid < 0) {
			error_at(dg, sl, "rule 11 (dependencies): a nop must carry a dependency");
			return -1;
		}
		int j = k + 1;
		while (j < tb->nstep && tb->step[j].type == MT_NOP)
			j++;
		if (j == tb->nstep || tb->step[j].depid < 0) {
			error_at(dg, sl, "rule 11 (dependencies): when there is a chain of dependencies, "
			         "the last one must be part of the first step after the nops, but %s",
			         j == tb->nstep ? "the nops end the thread block"
			                        : "that step has depid=-1");
			return -1;
		}
	}
	return 0;
}

/* Rules 5-9, 11 and 12 on one tb. */
static int
check_tb(Diag *dg, const MProg *p, int g, const MTb *tb)
{
	const MGpu *gp = &p->gpu[g];
	Loc at = {tb->line, 1};
	int maxsteps = p->legacy ? MSCCL_MAX_STEPS_LEGACY : MSCCL_MAX_STEPS;
	for (int side = 0; side < 2; side++) {
		int peer = side ? tb->recv : tb->send;
		if (peer < -1 || peer >= p->ngpus || peer == g) {
			error_at(dg, at, "rule 5 (peers): %s peer %d of tb %d on gpu %d must be -1 or another "
			         "rank below ngpus=%d", side ? "recv" : "send", peer, tb->id, g, p->ngpus);
			return -1;
		}
	}
	if (tb->chan < 0 || tb->chan >= p->nchannels) {
		error_at(dg, at, "rule 5 (channels): chan=%d of tb %d on gpu %d must be below nchannels=%d",
		         tb->chan, tb->id, g, p->nchannels);
		return -1;
	}
	if (tb->nstep > maxsteps) {
		error_at(dg, at, "rule 7 (steps): tb %d on gpu %d has %d steps; the limit is %d", tb->id, g,
		         tb->nstep, maxsteps);
		return -1;
	}
	for (int k = 0; k < tb->nstep; k++) {
		const MStep *st = &tb->step[k];
		Loc sl = {st->line, 1};
		if (st->s != k) {
			error_at(dg, sl, "rule 7 (steps): step s=%d is at position %d of tb %d on gpu %d; s "
			         "must count 0, 1, 2, ... in order", st->s, k, tb->id, g);
			return -1;
		}
		if (mtype_sends(st->type) && tb->send < 0) {
			error_at(dg, sl, "rule 8 (peers): there is a send (%s) in thread block %d on gpu %d "
			         "without a send peer", mtype_name[st->type], tb->id, g);
			return -1;
		}
		if (mtype_recvs(st->type) && tb->recv < 0) {
			error_at(dg, sl, "rule 8 (peers): there is a receive (%s) in thread block %d on gpu %d "
			         "without a recv peer", mtype_name[st->type], tb->id, g);
			return -1;
		}
		if (st->hasdep != 0 && st->hasdep != 1) {
			error_at(dg, sl, "rule 7 (steps): hasdep=%d must be 0 or 1", st->hasdep);
			return -1;
		}
		if (check_step_buffers(dg, p, g, st) != 0 || check_step_deps(dg, gp, g, tb, k) != 0)
			return -1;
		/* rule 12: a run of re fused by the executor takes the last cnt */
		if (st->type == MT_RE && k > 0) {
			const MStep *pr = &tb->step[k - 1];
			if (pr->type == MT_RE && pr->dstbuf == st->dstbuf && pr->dstoff == st->dstoff &&
			    pr->srcbuf == st->srcbuf && st->depid < 0 && pr->hasdep == 0 &&
			    pr->cnt != st->cnt) {
				error_at(dg, sl, "rule 12 (re fusion): consecutive re steps into the same chunk "
				         "are fused and must have equal cnt (%d, then %d)", pr->cnt, st->cnt);
				return -1;
			}
		}
	}
	return 0;
}

/* Rule 6: one tb per (peer, chan) each way; 32 per channel each way. */
static int
check_conns(Diag *dg, const MProg *p, const MIndex *ix)
{
	for (int side = 0; side < 2; side++) {
		int n;
		ConnKey *k = conn_keys(p, ix, side == 0, &n);
		for (int i = 1; i < n; i++)
			if (k[i].g == k[i - 1].g && k[i].peer == k[i - 1].peer && k[i].chan == k[i - 1].chan) {
				const MGpu *gp = &p->gpu[k[i].g];
				int u = k[i - 1].id - ix->base[k[i].g], t = k[i].id - ix->base[k[i].g];
				error_at(dg, (Loc){gp->tb[t].line, 1},
				         "rule 6 (connections): tbs %d and %d of gpu %d both %s peer %d "
				         "on channel %d; one connection serves one thread block",
				         u, t, k[i].g, side ? "receive from" : "send to", k[i].peer, k[i].chan);
				free(k);
				return -1;
			}
		free(k);
	}
	int *ns = xmalloc(((size_t)p->nchannels + 1) * 2 * sizeof *ns), *nr = ns + p->nchannels + 1;
	int rc = 0;
	for (int g = 0; g < p->ngpus && rc == 0; g++) {
		const MGpu *gp = &p->gpu[g];
		memset(ns, 0, ((size_t)p->nchannels + 1) * 2 * sizeof *ns);
		for (int t = 0; t < gp->ntb; t++) {
			ns[gp->tb[t].chan] += gp->tb[t].send >= 0;
			nr[gp->tb[t].chan] += gp->tb[t].recv >= 0;
		}
		for (int c = 0; c < p->nchannels && rc == 0; c++)
			if (ns[c] > MSCCL_MAX_TBS_PER_CHAN || nr[c] > MSCCL_MAX_TBS_PER_CHAN) {
				error_at(dg, (Loc){gp->line, 1}, "rule 6 (connections): gpu %d has %d sending and "
				         "%d receiving tbs on channel %d; the limit is %d each", g, ns[c], nr[c],
				         c, MSCCL_MAX_TBS_PER_CHAN);
				rc = -1;
			}
	}
	free(ns);
	return rc;
}

static const MTb *
tb_at(const MProg *p, const MIndex *ix, int id)
{
	return id < 0 ? NULL : &p->gpu[ix->rank[id]].tb[id - ix->base[ix->rank[id]]];
}

/* Rule 10 on the connection of sending tb t of gpu a: its sends and the
 * peer's receives pair in order with equal cnt. */
static int
check_connection(Diag *dg, const MProg *p, const MIndex *ix, int a, int t)
{
	const MTb *s = &p->gpu[a].tb[t];
	const MTb *r = tb_at(p, ix, ix->receiver[ix->base[a] + t]);
	int i = 0, j = 0;
	for (;;) {
		while (i < s->nstep && !mtype_sends(s->step[i].type))
			i++;
		while (r && j < r->nstep && !mtype_recvs(r->step[j].type))
			j++;
		bool si = i < s->nstep, rj = r && j < r->nstep;
		if (!si && !rj)
			return 0;
		if (si && !rj) {
			error_at(dg, (Loc){s->step[i].line, 1},
			         "rule 10 (matching): gpu %d tb %d step %d sends to gpu %d on "
			         "channel %d, but %s", a, t, i, s->send, s->chan,
			         r ? "no receive is left there to match it"
			           : "no thread block there receives from it on that channel");
			return -1;
		}
		if (!si) {
			error_at(dg, (Loc){r->step[j].line, 1},
			         "rule 10 (matching): gpu %d tb %d step %d receives from gpu %d on "
			         "channel %d, but no send is left there to match it", s->send,
			         r->id, j, a, s->chan);
			return -1;
		}
		if (s->step[i].cnt != r->step[j].cnt) {
			error_at(dg, (Loc){r->step[j].line, 1},
			         "rule 10 (matching): gpu %d tb %d step %d receives cnt=%d but the "
			         "matching send (gpu %d tb %d step %d, line %d) has cnt=%d",
			         s->send, r->id, j, r->step[j].cnt, a, t, i, s->step[i].line,
			         s->step[i].cnt);
			return -1;
		}
		i++;
		j++;
	}
}

/* Rule 10: each connection's sends and receives pair in order, equal cnt. */
static int
check_matching(Diag *dg, const MProg *p, const MIndex *ix)
{
	for (int a = 0; a < p->ngpus; a++)
		for (int t = 0; t < p->gpu[a].ntb; t++)
			if (p->gpu[a].tb[t].send >= 0 && check_connection(dg, p, ix, a, t) != 0)
				return -1;
	/* a receiving tb whose peer has no sending tb at all */
	for (int b = 0; b < p->ngpus; b++)
		for (int t = 0; t < p->gpu[b].ntb; t++) {
			const MTb *r = &p->gpu[b].tb[t];
			if (r->recv < 0 || ix->sender[ix->base[b] + t] >= 0)
				continue;
			for (int j = 0; j < r->nstep; j++)
				if (mtype_recvs(r->step[j].type)) {
					error_at(dg, (Loc){r->step[j].line, 1},
					         "rule 10 (matching): gpu %d tb %d step %d receives from gpu %d on "
					         "channel %d, where no thread block sends to it", b, t, j, r->recv,
					         r->chan);
					return -1;
				}
		}
	return 0;
}

/* The step graph of rule 13: node ids numbered tb by tb over the program
 * (base: global tb -> its first node). */
typedef struct StepGraph {
	int n;
	int *base, *indeg, *peer, *dep_of, *nexts, *head;
	unsigned char *last;
} StepGraph;

static void
graph_build(const MProg *p, const MIndex *ix, StepGraph *G)
{
	G->base = xcalloc((size_t)ix->ntb + 1, sizeof *G->base);
	for (int id = 0; id < ix->ntb; id++) {
		G->base[id] = G->n;
		G->n += tb_at(p, ix, id)->nstep;
	}
	size_t n = (size_t)G->n + 1;
	G->indeg = xcalloc(n, sizeof(int));
	G->peer = xmalloc(n * sizeof(int)); /* a send's matching receive */
	G->dep_of = xmalloc(n * sizeof(int));
	G->nexts = xmalloc(n * sizeof(int)); /* steps that depend on it: a list */
	G->head = xmalloc(n * sizeof(int));
	G->last = xcalloc(n, 1); /* its program successor is the next id unless it ends its tb */
	for (int i = 0; i < G->n; i++)
		G->peer[i] = G->dep_of[i] = G->head[i] = -1;
	for (int id = 0; id < ix->ntb; id++) {
		int g = ix->rank[id], t = id - ix->base[g];
		const MTb *tb = tb_at(p, ix, id);
		int b0 = G->base[id];
		if (tb->nstep)
			G->last[b0 + tb->nstep - 1] = 1;
		for (int k = 0; k < tb->nstep; k++) {
			G->indeg[b0 + k] += k > 0;
			const MStep *st = &tb->step[k];
			if (st->depid >= 0 && st->depid != t) {
				int d = G->base[ix->base[g] + st->depid] + st->deps;
				G->dep_of[b0 + k] = d;
				G->nexts[b0 + k] = G->head[d];
				G->head[d] = b0 + k;
				G->indeg[b0 + k]++;
			}
		}
		int rid = ix->receiver[id];
		const MTb *r = tb_at(p, ix, rid);
		for (int i = 0, j = 0; r && i < tb->nstep; i++) {
			if (!mtype_sends(tb->step[i].type))
				continue;
			while (j < r->nstep && !mtype_recvs(r->step[j].type))
				j++;
			if (j < r->nstep) {
				G->peer[b0 + i] = G->base[rid] + j;
				G->indeg[G->base[rid] + j]++;
				j++;
			}
		}
	}
}

static void
graph_free(StepGraph *G)
{
	free(G->base);
	free(G->indeg);
	free(G->peer);
	free(G->dep_of);
	free(G->nexts);
	free(G->head);
	free(G->last);
}

/* Step v of the graph: its tb's index (by G->base) and the step. */
static const MStep *
step_of(const MProg *p, const MIndex *ix, const StepGraph *G, int v)
{
	int id = 0;
	while (id + 1 < ix->ntb && G->base[id + 1] <= v)
		id++;
	return &tb_at(p, ix, id)->step[v - G->base[id]];
}

typedef struct { char s[64]; } StepName;

/* "gpu 1 tb 0 step 3" */
static StepName
step_name(const MProg *p, const MIndex *ix, const StepGraph *G, int v)
{
	int id = 0;
	while (id + 1 < ix->ntb && G->base[id + 1] <= v)
		id++;
	int g = ix->rank[id];
	StepName n;
	snprintf(n.s, sizeof n.s, "gpu %d tb %d step %d", g, id - ix->base[g],
	         step_of(p, ix, G, v)->s);
	return n;
}

/* What step v, left on a cycle, waits on: a step also left there, named
 * with the edge (its dependency, the step before it in its tb, or the
 * send it receives from). */
static void
waited_on(const MProg *p, const MIndex *ix, const StepGraph *G, int v, char *out, size_t len)
{
	snprintf(out, len, "a step that never runs");
	for (int u = 0; u < G->n; u++) {
		if (G->indeg[u] <= 0)
			continue;
		const char *edge = NULL;
		for (int w = G->head[u]; w >= 0 && !edge; w = G->nexts[w])
			edge = w == v ? "its dependency" : NULL;
		if (!edge && !G->last[u] && u + 1 == v)
			edge = "the step before it in its tb";
		if (!edge && G->peer[u] == v)
			edge = "the send it receives from";
		if (edge) {
			snprintf(out, len, "%s, %s", edge, step_name(p, ix, G, u).s);
			return;
		}
	}
}

/* Rule 13: program order, dependencies and send->receive pairs are acyclic. */
static int
check_acyclic(Diag *dg, const MProg *p, const MIndex *ix)
{
	StepGraph G = {0};
	graph_build(p, ix, &G);
	int *queue = xmalloc(((size_t)G.n + 1) * sizeof *queue);
	int qh = 0, qt = 0;
	for (int i = 0; i < G.n; i++)
		if (G.indeg[i] == 0)
			queue[qt++] = i;
	while (qh < qt) {
		int v = queue[qh++];
		if (!G.last[v] && --G.indeg[v + 1] == 0)
			queue[qt++] = v + 1;
		if (G.peer[v] >= 0 && --G.indeg[G.peer[v]] == 0)
			queue[qt++] = G.peer[v];
		for (int w = G.head[v]; w >= 0; w = G.nexts[w])
			if (--G.indeg[w] == 0)
				queue[qt++] = w;
	}
	int rc = 0;
	if (qt < G.n) {
		/* report a step on the cycle's side that waits on a dependency */
		int bad = -1;
		for (int i = 0; i < G.n && bad < 0; i++)
			if (G.indeg[i] > 0 && G.dep_of[i] >= 0 && G.indeg[G.dep_of[i]] > 0)
				bad = i;
		for (int i = 0; i < G.n && bad < 0; i++)
			if (G.indeg[i] > 0)
				bad = i;
		const MStep *st = step_of(p, ix, &G, bad);
		char what[160];
		waited_on(p, ix, &G, bad, what, sizeof what);
		error_at(dg, (Loc){st->line, 1},
		         "rule 13 (acyclicity): %s is on a cycle of program order, dependencies and "
		         "send/receive pairs (it waits on %s), so it can never run",
		         step_name(p, ix, &G, bad).s, what);
		rc = -1;
	}
	graph_free(&G);
	free(queue);
	return rc;
}

int
msccl_check(Diag *dg, const MProg *p)
{
	if (check_shape(dg, p) != 0)
		return -1;
	for (int g = 0; g < p->ngpus; g++)
		for (int t = 0; t < p->gpu[g].ntb; t++)
			if (check_tb(dg, p, g, &p->gpu[g].tb[t]) != 0)
				return -1;
	MIndex ix;
	msccl_index(p, &ix);
	int rc = check_conns(dg, p, &ix) != 0 || check_matching(dg, p, &ix) != 0 ||
	         check_acyclic(dg, p, &ix) != 0 ? -1 : 0;
	msccl_index_free(&ix);
	return rc;
}
