/*
 * to_msccl_emit.c: the MProg of one width. Needs the thread blocks and
 * fusion (to_msccl_tbs.c). Establishes each live op's step number, its
 * wait on another tb (a nop before it for each wait past the first), the
 * steps (their MSCCL types from op kind and fusion), hasdep, and the
 * <algo> header and buffer sizes. Step numbers are planned for every rank
 * before any is emitted (plan_rank), so that a width over the step limit
 * stops before it costs its steps.
 */
#include <stdlib.h>
#include <string.h>

#include "to_msccl.h"

static int
final_op(const Lower *L, int o)
{
	/* a fused send lives on in the receive before it */
	return L->op[o].dead ? L->op[o].fused : o;
}

static void
set_step(MStep *st, int s, MType t, BLoc src, BLoc dst, int cnt)
{
	*st = (MStep){.s = s, .type = t, .srcbuf = src.buf < 0 ? MB_I : (MBuf)src.buf,
	              .srcoff = src.buf < 0 ? -1 : src.off, .dstbuf = dst.buf < 0 ? MB_O : (MBuf)dst.buf,
	              .dstoff = dst.buf < 0 ? -1 : dst.off, .cnt = cnt, .depid = -1, .deps = -1};
}

/* Each live op's position among its tb's live ops, in op->step. */
static void
live_positions(Lower *L, const RankB *k)
{
	for (int t = 0; t < k->ntb; t++) {
		int pos = 0;
		for (int i = 0; i < k->tb[t].nops; i++) {
			Op *x = &L->op[k->tb[t].ops[i]];
			if (!x->dead)
				x->step = pos++;
		}
	}
}

/* The cross-tb waits of each live op of one rank: its dependencies and
 * those of the send fused into it, the latest per tb. Needs live_positions. */
static void
cross_tb_waits(Lower *L, const RankB *k, Waits *w)
{
	/* best[u]: the latest step of tb u waited for, -1; only the tbs an op
	 * touches are visited and reset, so an op costs its dependencies, not
	 * the rank's tbs */
	int *best = xmalloc(((size_t)k->ntb + 1) * sizeof *best);
	int *touched = xmalloc(((size_t)k->ntb + 1) * sizeof *touched);
	for (int u = 0; u < k->ntb; u++)
		best[u] = -1;
	for (int t = 0; t < k->ntb; t++)
		for (int i = 0; i < k->tb[t].nops; i++) {
			int oid = k->tb[t].ops[i], n = 0;
			const Op *x = &L->op[oid];
			if (x->dead)
				continue;
			for (int pass = 0; pass < 2; pass++) {
				const Op *src = pass ? (x->fused >= 0 ? &L->op[x->fused] : NULL) : x;
				for (int d = 0; src && d < src->ndep; d++) {
					int f = final_op(L, src->dep[d]);
					const Op *y = &L->op[f];
					if (f == oid || y->tb == x->tb)
						continue;
					if (best[y->tb] < 0)
						touched[n++] = y->tb;
					if (y->step > best[y->tb])
						best[y->tb] = y->step;
				}
			}
			sort_n(touched, (size_t)n, sizeof *touched, cmp_int); /* in tb order */
			w->ref[oid] = n ? arena_array(L->a, (size_t)n, sizeof(StepRef)) : NULL;
			for (int j = 0; j < n; j++) {
				w->ref[oid][w->n[oid]++] = (StepRef){touched[j], best[touched[j]]};
				best[touched[j]] = -1;
			}
		}
	free(best);
	free(touched);
}

/* Final step numbers of one rank: each wait past the first takes a nop
 * before its op. Establishes each tb's nstep and stepof[tb][live position]. */
static int **
number_steps(Lower *L, RankB *k, const Waits *w)
{
	int **stepof = arena_array(L->a, (size_t)k->ntb + 1, sizeof(int *));
	for (int t = 0; t < k->ntb; t++) {
		TbB *tb = &k->tb[t];
		stepof[t] = arena_array(L->a, (size_t)tb->nops + 1, sizeof(int));
		int sidx = 0, pos = 0;
		for (int i = 0; i < tb->nops; i++) {
			if (L->op[tb->ops[i]].dead)
				continue;
			int nd = w->n[tb->ops[i]];
			sidx += nd > 1 ? nd - 1 : 0;
			stepof[t][pos++] = sidx++;
		}
		tb->nstep = sidx;
	}
	return stepof;
}

/* The MSCCL step of op x (fused and nostore choose among the receive types). */
static void
emit_op(const Lower *L, const Op *x, int sidx, MStep *ms)
{
	const Op *fz = x->fused >= 0 ? &L->op[x->fused] : NULL;
	/* an operand the type does not use (the executor ignores it): i 0, the
	 * fewest bytes */
	const BLoc none = {MB_I, 0};
	switch (x->kind) {
	case OP_SEND:
		set_step(ms, sidx, MT_S, x->src, none, x->cnt);
		break;
	case OP_RECV_COPY:
		set_step(ms, sidx, fz ? MT_RCS : MT_R, none, x->dst, x->cnt);
		break;
	case OP_RECV_REDUCE:
		set_step(ms, sidx, x->nostore ? MT_RRS : fz ? MT_RRCS : MT_RRC, x->src,
		         x->nostore ? none : x->dst, x->cnt);
		break;
	case OP_LOCAL_COPY:
		set_step(ms, sidx, MT_CPY, x->src, x->dst, x->cnt);
		break;
	case OP_LOCAL_REDUCE:
		set_step(ms, sidx, MT_RE, x->src, x->dst, x->cnt);
		break;
	}
}

/* The steps of one tb: a nop per extra wait, then the op waiting on its
 * last one. Needs number_steps; *line counts the XML's lines. */
static void
emit_tb(Lower *L, const TbB *tb, const Waits *w, int **stepof, MTb *mt, int *line)
{
	mt->step = arena_array(L->a, (size_t)tb->nstep + 1, sizeof *mt->step);
	int sidx = 0;
	for (int i = 0; i < tb->nops; i++) {
		int oi = tb->ops[i];
		const Op *x = &L->op[oi];
		if (x->dead)
			continue;
		for (int d = 0; d + 1 < w->n[oi]; d++) {
			StepRef ref = w->ref[oi][d];
			MStep *ns = &mt->step[sidx];
			set_step(ns, sidx, MT_NOP, (BLoc){-1, 0}, (BLoc){-1, 0}, 0);
			ns->depid = ref.tb;
			ns->deps = stepof[ref.tb][ref.pos];
			ns->line = (*line)++;
			sidx++;
		}
		MStep *ms = &mt->step[sidx];
		emit_op(L, x, sidx, ms);
		ms->line = (*line)++;
		if (w->n[oi] > 0) {
			StepRef last = w->ref[oi][w->n[oi] - 1];
			ms->depid = last.tb;
			ms->deps = stepof[last.tb][last.pos];
		}
		sidx++;
	}
}

/* The step numbers of one rank's tbs (their waits first), before any is
 * emitted: a width whose worst tb is over the step limit stops here. The
 * worst tb so far is named in b->why (*worst: its steps). */
int **
plan_rank(Lower *L, RankB *k, Waits *w, int r, int maxsteps, Built *b, int *worst)
{
	live_positions(L, k);
	cross_tb_waits(L, k, w);
	int **stepof = number_steps(L, k, w);
	for (int t = 0; t < k->ntb; t++) {
		const TbB *tb = &k->tb[t];
		int live = 0;
		for (int i = 0; tb->send >= 0 && tb->send == tb->recv && i < tb->nops; i++)
			live += !L->op[tb->ops[i]].dead;
		b->pair_over |= live > maxsteps;
		if (tb->nstep > maxsteps && tb->nstep > *worst) {
			/* the worst tb names the limit: how far this width is from fitting */
			*worst = tb->nstep;
			snprintf(b->why, sizeof b->why, "thread block %d of rank %d (send %d, recv "
			         "%d, channel %d) needs %d steps; the executor allows %d per thread "
			         "block (MSCCL_MAX_NUM_STEPS, rule 7)", t, r, tb->send, tb->recv,
			         tb->chan, tb->nstep, maxsteps);
		}
	}
	return stepof;
}

/* One rank's gpu: its tbs and their steps. Needs plan_rank. */
void
emit_rank(Lower *L, RankB *k, Waits *w, int **stepof, int r, int *line, MGpu *g)
{
	g->id = r;
	g->line = (*line)++;
	g->ntb = k->ntb;
	g->tb = arena_array(L->a, (size_t)k->ntb + 1, sizeof *g->tb);
	for (int t = 0; t < k->ntb; t++) {
		const TbB *tb = &k->tb[t];
		MTb *mt = &g->tb[t];
		*mt = (MTb){.id = t, .send = tb->send, .recv = tb->recv, .chan = tb->chan,
		            .line = (*line)++, .nstep = tb->nstep};
		emit_tb(L, tb, w, stepof, mt, line);
		(*line)++; /* </tb> */
	}
	(*line)++; /* </gpu> */
}

/* hasdep on every step something waits on. */
void
mark_hasdep(MProg *p)
{
	for (int r = 0; r < p->ngpus; r++)
		for (int t = 0; t < p->gpu[r].ntb; t++)
			for (int k = 0; k < p->gpu[r].tb[t].nstep; k++) {
				const MStep *st = &p->gpu[r].tb[t].step[k];
				if (st->depid >= 0)
					p->gpu[r].tb[st->depid].step[st->deps].hasdep = 1;
			}
}

MProto
build_proto(const BuildOpts *o)
{
	for (int p = 0; o->proto && p < NPROTO; p++)
		if (strcmp(o->proto, mproto_name[p]) == 0)
			return (MProto)p;
	return MP_SIMPLE;
}

/* The algo element's attributes and the buffer sizes. */
void
fill_header(MProg *p, const Lower *L, const BuildOpts *o, int nch)
{
	int smax = 0;
	for (int r = 0; r < L->R; r++)
		smax = L->scratch[r] > smax ? L->scratch[r] : smax;
	static const MColl coll[] = {[CK_ALLREDUCE] = MC_ALLREDUCE, [CK_ALLGATHER] = MC_ALLGATHER,
	                             [CK_REDUCE_SCATTER] = MC_REDUCESCATTER,
	                             [CK_ALLTOALL] = MC_ALLTOALL, [CK_BROADCAST] = MC_BROADCAST,
	                             [CK_REDUCE] = MC_REDUCE};
	static const char *const name[] = {[MC_ALLREDUCE] = "allreduce", [MC_ALLGATHER] = "allgather",
	                                   [MC_REDUCESCATTER] = "reducescatter",
	                                   [MC_ALLTOALL] = "alltoall", [MC_BROADCAST] = "broadcast",
	                                   [MC_REDUCE] = "reduce"};
	p->name = L->s->name;
	p->coll = coll[L->s->kind];
	p->coll_name = p->coll == MC_REDUCESCATTER && o->legacy ? "reduce_scatter" : name[p->coll];
	p->proto = build_proto(o);
	p->nchunksperloop = L->N;
	p->nchannels = nch * L->inst;
	/* every program runs in place (alltoall parks what would overwrite input
	 * still to send) and out of place; the legacy dialect declares one mode */
	p->inplace = 1;
	p->outofplace = o->legacy ? 0 : 1;
	/* --max-bytes is inclusive; the legacy dialect's bound is exclusive and
	 * must be non-zero */
	p->min_bytes = o->min_bytes;
	p->max_bytes = !o->legacy ? o->max_bytes : o->max_bytes ? o->max_bytes + 1 : (int64_t)1 << 40;
	p->legacy = o->legacy;
	p->line = 1;
	for (int r = 0; r < L->R; r++) {
		p->gpu[r].i_chunks = msccl_ichunks(p);
		p->gpu[r].o_chunks = msccl_ochunks(p);
		p->gpu[r].s_chunks = smax;
	}
}
