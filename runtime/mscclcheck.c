/*
 * mscclcheck.c: the spec's validation rules (msccl-xml.md section 13) on an
 * MSCCL program in memory. One implementation serves the reader (files) and
 * the backend (what it is about to write). Rules 14 and 15 need execution:
 * msccl_check_run steps the program sequentially with bounded FIFOs and
 * symbolic chunk values, so it is deterministic and needs no threads.
 */
#include <stdlib.h>
#include <string.h>

#include "msccl.h"

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

static const char *const bufname[] = {"i", "o", "s"};

static int
declared(const MGpu *g, MBuf b)
{
	return b == MB_I ? g->i_chunks : b == MB_O ? g->o_chunks : g->s_chunks;
}

/* The tb of rank g sending to (receiving from) peer on chan, or NULL. */
static const MTb *
conn_tb(const MProg *p, int g, int peer, int chan, bool send)
{
	const MGpu *gp = &p->gpu[g];
	for (int t = 0; t < gp->ntb; t++)
		if ((send ? gp->tb[t].send : gp->tb[t].recv) == peer && gp->tb[t].chan == chan)
			return &gp->tb[t];
	return NULL;
}

/* Rules 2-4: the header, the gpus and the tb ids. */
static int
check_shape(const MProg *p)
{
	int err = 0;
	Loc at = {p->line, 1};
	if (p->nchannels < 1 || p->nchannels > MSCCL_MAX_CHANNELS) {
		error_at(at, "rule 5 (channels): nchannels=%d must be in 1..%d", p->nchannels,
		         MSCCL_MAX_CHANNELS);
		err = -1;
	}
	if (p->ngpus < 2 || p->ngpus > MSCCL_MAX_GPUS) {
		error_at(at, "rule 2 (algo): ngpus=%d must be in 2..%d", p->ngpus, MSCCL_MAX_GPUS);
		return -1;
	}
	if (p->nchunksperloop < 1 || p->nchunksperloop > MSCCL_MAX_OFFSET + 1) {
		error_at(at, "rule 2 (algo): nchunksperloop=%d must be in 1..%d", p->nchunksperloop,
		         MSCCL_MAX_OFFSET + 1);
		return -1;
	}
	if (msccl_multiplier(p) > 1 && p->nchunksperloop % p->ngpus != 0) {
		error_at(at, "rule 3 (gpus): nchunksperloop=%d of %s must be a multiple of ngpus=%d",
		         p->nchunksperloop, p->coll_name, p->ngpus);
		return -1;
	}
	if ((p->inplace != 0 && p->inplace != 1) || (p->outofplace != 0 && p->outofplace != 1)) {
		error_at(at, "rule 2 (algo): inplace and outofplace are 0 or 1");
		err = -1;
	}
	if (p->min_bytes < 0 || p->max_bytes < 0 ||
	    (p->max_bytes != 0 && p->min_bytes > p->max_bytes) || (p->legacy && p->max_bytes == 0)) {
		error_at(at, "rule 16 (selection): minBytes=%lld and maxBytes=%lld select nothing%s",
		         (long long)p->min_bytes, (long long)p->max_bytes,
		         p->legacy ? " (legacy: maxBytes is exclusive and 0 means never)" : "");
		err = -1;
	}
	if (p->ngpu != p->ngpus) {
		error_at(at, "rule 3 (gpus): ngpus=%d but the file has %d <gpu> elements", p->ngpus,
		         p->ngpu);
		return -1;
	}
	for (int g = 0; g < p->ngpu; g++) {
		const MGpu *gp = &p->gpu[g];
		Loc gl = {gp->line, 1};
		if (gp->id != g) {
			error_at(gl, "rule 3 (gpus): gpu %d is %s", g,
			         g > 0 && gp->id == p->gpu[g - 1].id ? "listed twice" : "missing");
			return -1;
		}
		if (gp->s_chunks < 0 || gp->i_chunks < 0 || gp->o_chunks < 0) {
			error_at(gl, "rule 3 (gpus): chunk counts of gpu %d must not be negative", g);
			err = -1;
		}
		if (p->legacy && ((gp->i_chunks > 0 && gp->i_chunks != msccl_ichunks(p)) ||
		                  (gp->o_chunks > 0 && gp->o_chunks != msccl_ochunks(p)))) {
			error_at(gl, "rule 3 (gpus): the legacy runtime needs i_chunks=%d and o_chunks=%d "
			         "(or 0) on gpu %d", msccl_ichunks(p), msccl_ochunks(p), g);
			err = -1;
		}
		if (gp->ntb > MSCCL_MAX_TBS) {
			error_at(gl, "rule 4 (thread blocks): gpu %d has %d thread blocks; the limit is %d",
			         g, gp->ntb, MSCCL_MAX_TBS);
			err = -1;
		}
		for (int t = 0; t < gp->ntb; t++)
			if (gp->tb[t].id != t) {
				bool dup = t > 0 && gp->tb[t].id == gp->tb[t - 1].id;
				error_at((Loc){gp->tb[t].line, 1},
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
check_step_buffers(const MProg *p, int g, const MStep *st)
{
	const MGpu *gp = &p->gpu[g];
	Loc sl = {st->line, 1};
	if (st->type != MT_NOP) {
		if (st->cnt < 1 || st->cnt >= MSCCL_MAX_COUNT) {
			error_at(sl, "rule 9 (counts): count (%d) must be positive and less than %d",
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
				error_at(sl, "rule 9 (offsets): %s chunks [%d, %d) of buffer %s are outside "
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
check_step_deps(const MGpu *gp, int g, const MTb *tb, int k)
{
	const MStep *st = &tb->step[k];
	Loc sl = {st->line, 1};
	/* rule 11: dependencies */
	if ((st->depid < 0) != (st->deps < 0) || st->depid < -1 || st->deps < -1) {
		error_at(sl, "rule 11 (dependencies): depid=%d deps=%d: both -1 or both set",
		         st->depid, st->deps);
		return -1;
	}
	if (st->depid >= 0) {
		if (st->depid >= gp->ntb || st->depid > MSCCL_MAX_DEPID) {
			error_at(sl, "rule 11 (dependencies): depid=%d names no thread block of gpu %d "
			         "(ids 0..%d, and at most %d)", st->depid, g, gp->ntb - 1,
			         MSCCL_MAX_DEPID);
			return -1;
		}
		const MTb *d = &gp->tb[st->depid];
		if (st->deps >= d->nstep || (st->depid == tb->id && st->deps >= k)) {
			error_at(sl, "rule 11 (dependencies): deps=%d is not %s step of tb %d on gpu %d",
			         st->deps, st->depid == tb->id ? "an earlier" : "a", st->depid, g);
			return -1;
		}
		if (d->step[st->deps].hasdep != 1) {
			error_at(sl, "rule 11 (dependencies): step %d of tb %d on gpu %d is waited on "
			         "but has hasdep=0, so its flag is never set and the wait hangs "
			         "(line %d)", st->deps, st->depid, g, d->step[st->deps].line);
			return -1;
		}
	}
	if (st->type == MT_NOP) {
		if (st->depid < 0) {
			error_at(sl, "rule 11 (dependencies): a nop must carry a dependency");
			return -1;
		}
		int j = k + 1;
		while (j < tb->nstep && tb->step[j].type == MT_NOP)
			j++;
		if (j == tb->nstep || tb->step[j].depid < 0) {
			error_at(sl, "rule 11 (dependencies): when there is a chain of dependencies, "
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
check_tb(const MProg *p, int g, const MTb *tb)
{
	const MGpu *gp = &p->gpu[g];
	Loc at = {tb->line, 1};
	int maxsteps = p->legacy ? MSCCL_MAX_STEPS_LEGACY : MSCCL_MAX_STEPS;
	for (int side = 0; side < 2; side++) {
		int peer = side ? tb->recv : tb->send;
		if (peer < -1 || peer >= p->ngpus || peer == g) {
			error_at(at, "rule 5 (peers): %s peer %d of tb %d on gpu %d must be -1 or another "
			         "rank below ngpus=%d", side ? "recv" : "send", peer, tb->id, g, p->ngpus);
			return -1;
		}
	}
	if (tb->chan < 0 || tb->chan >= p->nchannels) {
		error_at(at, "rule 5 (channels): chan=%d of tb %d on gpu %d must be below nchannels=%d",
		         tb->chan, tb->id, g, p->nchannels);
		return -1;
	}
	if (tb->nstep > maxsteps) {
		error_at(at, "rule 7 (steps): tb %d on gpu %d has %d steps; the limit is %d", tb->id, g,
		         tb->nstep, maxsteps);
		return -1;
	}
	for (int k = 0; k < tb->nstep; k++) {
		const MStep *st = &tb->step[k];
		Loc sl = {st->line, 1};
		if (st->s != k) {
			error_at(sl, "rule 7 (steps): step s=%d is at position %d of tb %d on gpu %d; s "
			         "must count 0, 1, 2, ... in order", st->s, k, tb->id, g);
			return -1;
		}
		if (mtype_sends(st->type) && tb->send < 0) {
			error_at(sl, "rule 8 (peers): there is a send (%s) in thread block %d on gpu %d "
			         "without a send peer", mtype_name[st->type], tb->id, g);
			return -1;
		}
		if (mtype_recvs(st->type) && tb->recv < 0) {
			error_at(sl, "rule 8 (peers): there is a receive (%s) in thread block %d on gpu %d "
			         "without a recv peer", mtype_name[st->type], tb->id, g);
			return -1;
		}
		if (st->hasdep != 0 && st->hasdep != 1) {
			error_at(sl, "rule 7 (steps): hasdep=%d must be 0 or 1", st->hasdep);
			return -1;
		}
		if (check_step_buffers(p, g, st) != 0 || check_step_deps(gp, g, tb, k) != 0)
			return -1;
		/* rule 12: a run of re fused by the executor takes the last cnt */
		if (st->type == MT_RE && k > 0) {
			const MStep *pr = &tb->step[k - 1];
			if (pr->type == MT_RE && pr->dstbuf == st->dstbuf && pr->dstoff == st->dstoff &&
			    pr->srcbuf == st->srcbuf && st->depid < 0 && pr->hasdep == 0 &&
			    pr->cnt != st->cnt) {
				error_at(sl, "rule 12 (re fusion): consecutive re steps into the same chunk "
				         "are fused and must have equal cnt (%d, then %d)", pr->cnt, st->cnt);
				return -1;
			}
		}
	}
	return 0;
}

/* Rule 6: one tb per (peer, chan) each way; 32 per channel each way. */
static int
check_conns(const MProg *p, int g)
{
	const MGpu *gp = &p->gpu[g];
	for (int t = 0; t < gp->ntb; t++)
		for (int u = 0; u < t; u++)
			for (int side = 0; side < 2; side++) {
				int a = side ? gp->tb[t].recv : gp->tb[t].send;
				int b = side ? gp->tb[u].recv : gp->tb[u].send;
				if (a >= 0 && a == b && gp->tb[t].chan == gp->tb[u].chan) {
					error_at((Loc){gp->tb[t].line, 1},
					         "rule 6 (connections): tbs %d and %d of gpu %d both %s peer %d "
					         "on channel %d; one connection serves one thread block",
					         u, t, g, side ? "receive from" : "send to", a, gp->tb[t].chan);
					return -1;
				}
			}
	for (int c = 0; c < p->nchannels; c++) {
		int ns = 0, nr = 0;
		for (int t = 0; t < gp->ntb; t++) {
			ns += gp->tb[t].chan == c && gp->tb[t].send >= 0;
			nr += gp->tb[t].chan == c && gp->tb[t].recv >= 0;
		}
		if (ns > MSCCL_MAX_TBS_PER_CHAN || nr > MSCCL_MAX_TBS_PER_CHAN) {
			error_at((Loc){gp->line, 1}, "rule 6 (connections): gpu %d has %d sending and %d "
			         "receiving tbs on channel %d; the limit is %d each", g, ns, nr, c,
			         MSCCL_MAX_TBS_PER_CHAN);
			return -1;
		}
	}
	return 0;
}

/* Rule 10: each connection's sends and receives pair in order, equal cnt. */
static int
check_matching(const MProg *p)
{
	for (int a = 0; a < p->ngpus; a++)
		for (int t = 0; t < p->gpu[a].ntb; t++) {
			const MTb *s = &p->gpu[a].tb[t];
			if (s->send < 0)
				continue;
			const MTb *r = conn_tb(p, s->send, a, s->chan, false);
			int i = 0, j = 0;
			for (;;) {
				while (i < s->nstep && !mtype_sends(s->step[i].type))
					i++;
				while (r && j < r->nstep && !mtype_recvs(r->step[j].type))
					j++;
				bool si = i < s->nstep, rj = r && j < r->nstep;
				if (!si && !rj)
					break;
				if (si && !rj) {
					error_at((Loc){s->step[i].line, 1},
					         "rule 10 (matching): gpu %d tb %d step %d sends to gpu %d on "
					         "channel %d, but %s", a, t, i, s->send, s->chan,
					         r ? "no receive is left there to match it"
					           : "no thread block there receives from it on that channel");
					return -1;
				}
				if (!si) {
					error_at((Loc){r->step[j].line, 1},
					         "rule 10 (matching): gpu %d tb %d step %d receives from gpu %d on "
					         "channel %d, but no send is left there to match it", s->send,
					         r->id, j, a, s->chan);
					return -1;
				}
				if (s->step[i].cnt != r->step[j].cnt) {
					error_at((Loc){r->step[j].line, 1},
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
	/* a receiving tb whose peer has no sending tb at all */
	for (int b = 0; b < p->ngpus; b++)
		for (int t = 0; t < p->gpu[b].ntb; t++) {
			const MTb *r = &p->gpu[b].tb[t];
			if (r->recv < 0 || conn_tb(p, r->recv, b, r->chan, true))
				continue;
			for (int j = 0; j < r->nstep; j++)
				if (mtype_recvs(r->step[j].type)) {
					error_at((Loc){r->step[j].line, 1},
					         "rule 10 (matching): gpu %d tb %d step %d receives from gpu %d on "
					         "channel %d, where no thread block sends to it", b, t, j, r->recv,
					         r->chan);
					return -1;
				}
		}
	return 0;
}

/* Rule 13: program order, dependencies and send->receive pairs are acyclic. */
static int
check_acyclic(const MProg *p)
{
	/* node ids: steps numbered rank by rank, tb by tb */
	int n = 0;
	int *base = xcalloc((size_t)p->ngpus * MSCCL_MAX_TBS + 1, sizeof *base);
	for (int g = 0; g < p->ngpus; g++)
		for (int t = 0; t < p->gpu[g].ntb; t++) {
			base[g * MSCCL_MAX_TBS + t] = n;
			n += p->gpu[g].tb[t].nstep;
		}
	int *indeg = xcalloc((size_t)n + 1, sizeof *indeg);
	int *peer = xmalloc(((size_t)n + 1) * sizeof *peer); /* a send's matching receive */
	int *dep_of = xmalloc(((size_t)n + 1) * sizeof *dep_of);
	int *nexts = xmalloc(((size_t)n + 1) * sizeof *nexts); /* steps that depend on it: list */
	int *head = xmalloc(((size_t)n + 1) * sizeof *head);
	int *queue = xmalloc(((size_t)n + 1) * sizeof *queue);
	for (int i = 0; i < n; i++)
		peer[i] = dep_of[i] = head[i] = -1;
	for (int g = 0; g < p->ngpus; g++)
		for (int t = 0; t < p->gpu[g].ntb; t++) {
			const MTb *tb = &p->gpu[g].tb[t];
			int b0 = base[g * MSCCL_MAX_TBS + t];
			for (int k = 0; k < tb->nstep; k++) {
				indeg[b0 + k] += k > 0;
				const MStep *st = &tb->step[k];
				if (st->depid >= 0 && st->depid != t) {
					int d = base[g * MSCCL_MAX_TBS + st->depid] + st->deps;
					dep_of[b0 + k] = d;
					nexts[b0 + k] = head[d];
					head[d] = b0 + k;
					indeg[b0 + k]++;
				}
			}
			if (tb->send < 0)
				continue;
			const MTb *r = conn_tb(p, tb->send, g, tb->chan, false);
			int j = 0;
			for (int i = 0; r && i < tb->nstep; i++) {
				if (!mtype_sends(tb->step[i].type))
					continue;
				while (j < r->nstep && !mtype_recvs(r->step[j].type))
					j++;
				if (j < r->nstep) {
					int rid = base[tb->send * MSCCL_MAX_TBS + r->id] + j;
					peer[b0 + i] = rid;
					indeg[rid]++;
					j++;
				}
			}
		}
	int qh = 0, qt = 0;
	for (int i = 0; i < n; i++)
		if (indeg[i] == 0)
			queue[qt++] = i;
	/* a node's program successor is the next id unless it ends its tb */
	unsigned char *last = xcalloc((size_t)n + 1, 1);
	for (int g = 0; g < p->ngpus; g++)
		for (int t = 0; t < p->gpu[g].ntb; t++)
			if (p->gpu[g].tb[t].nstep)
				last[base[g * MSCCL_MAX_TBS + t] + p->gpu[g].tb[t].nstep - 1] = 1;
	while (qh < qt) {
		int v = queue[qh++];
		if (!last[v] && --indeg[v + 1] == 0)
			queue[qt++] = v + 1;
		if (peer[v] >= 0 && --indeg[peer[v]] == 0)
			queue[qt++] = peer[v];
		for (int w = head[v]; w >= 0; w = nexts[w])
			if (--indeg[w] == 0)
				queue[qt++] = w;
	}
	int rc = 0;
	if (qt < n) {
		/* report a step on the cycle's side that waits on a dependency */
		int bad = -1;
		for (int i = 0; i < n && bad < 0; i++)
			if (indeg[i] > 0 && dep_of[i] >= 0 && indeg[dep_of[i]] > 0)
				bad = i;
		for (int i = 0; i < n && bad < 0; i++)
			if (indeg[i] > 0)
				bad = i;
		int g = 0, t = 0;
		for (g = 0; g < p->ngpus; g++) {
			for (t = 0; t < p->gpu[g].ntb; t++) {
				int b0 = base[g * MSCCL_MAX_TBS + t];
				if (bad >= b0 && bad < b0 + p->gpu[g].tb[t].nstep)
					goto found;
			}
		}
found:;
		const MStep *st = &p->gpu[g].tb[t].step[bad - base[g * MSCCL_MAX_TBS + t]];
		error_at((Loc){st->line, 1},
		         "rule 13 (acyclicity): gpu %d tb %d step %d is on a cycle of program order, "
		         "dependencies and send/receive pairs (it waits on tb %d step %d), so it can "
		         "never run", g, t, st->s, st->depid, st->deps);
		rc = -1;
	}
	free(last);
	free(base);
	free(indeg);
	free(peer);
	free(dep_of);
	free(nexts);
	free(head);
	free(queue);
	return rc;
}

int
msccl_check(const MProg *p)
{
	if (check_shape(p) != 0)
		return -1;
	for (int g = 0; g < p->ngpus; g++)
		for (int t = 0; t < p->gpu[g].ntb; t++)
			if (check_tb(p, g, &p->gpu[g].tb[t]) != 0)
				return -1;
	for (int g = 0; g < p->ngpus; g++)
		if (check_conns(p, g) != 0)
			return -1;
	if (check_matching(p) != 0 || check_acyclic(p) != 0)
		return -1;
	return 0;
}
