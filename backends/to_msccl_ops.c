/*
 * to_msccl_ops.c: one instance of a schedule's messages as ops, with the
 * dependencies the IR's semantics give. Needs the positions
 * (to_msccl_layout.c) and the width's choices in Lower. Establishes
 * L->op: a send per run of chunks contiguous at the sender and at the
 * receiver, its receive, the copies home; each (rank, chunk) a location
 * (input at first, its output or scratch chunk once written); a send waits
 * for the last write of what it reads (from earlier rounds), a write for
 * the last write and every read since. An in-place alltoall parks what
 * would overwrite input still to send. Then keep_flows: a run passed on
 * hop after hop keeps one channel, so its receives and sends can fuse.
 * Ops rather than steps: thread blocks and step numbers come later
 * (to_msccl_tbs.c, to_msccl_emit.c), once every dependency is known.
 */
#include <stdlib.h>
#include <string.h>

#include "to_msccl.h"

void
add_dep(Lower *L, int o, int d)
{
	if (d < 0 || d == o)
		return;
	Op *x = &L->op[o];
	for (int i = 0; i < x->ndep; i++)
		if (x->dep[i] == d)
			return;
	VEC_PUSH(L->a, x->dep, x->ndep, x->capdep, d);
}

int
new_op(Lower *L, int rank, int peer, OpKind kind, int round, OpPhase phase)
{
	if (L->nop == L->capop) {
		/* realloc'd, not arena_grow: a large program's ops would be copied
		 * and zeroed at every doubling, each copy kept (build hands the
		 * block to the arena once lowered) */
		if (L->capop > (1 << 29))
			out_of_memory((size_t)L->capop * 2 * sizeof *L->op);
		L->capop = L->capop ? 2 * L->capop : 1024;
		L->op = xrealloc(L->op, (size_t)L->capop * sizeof *L->op);
	}
	Op *o = &L->op[L->nop];
	memset(o, 0, sizeof *o);
	*o = (Op){.rank = rank, .peer = peer, .kind = kind, .round = round, .phase = phase,
	          .seq = L->nop, .fused = -1, .first = L->ncl, .reader = -1, .host = -1,
	          .mate = -1, .fwd = -1};
	return L->nop++;
}

void
push_chunk(Lower *L, int o, int c)
{
	VEC_PUSH(L->a, L->cl, L->ncl, L->capcl, c);
	L->op[o].n++;
}

void
read_chunk(Lower *L, int o, int r, int c)
{
	int k = r * L->s->nchunk + c;
	add_dep(L, o, L->lastw[k]);
	VEC_PUSH(L->a, L->readers[k], L->nreaders[k], L->capreaders[k], o);
	if (L->lastw[k] >= 0) {
		Op *w = &L->op[L->lastw[k]];
		w->reader = w->reader == -1 || w->reader == o ? o : -2;
	}
}

void
write_chunk(Lower *L, int o, int r, int c, BLoc to)
{
	int k = r * L->s->nchunk + c;
	add_dep(L, o, L->lastw[k]);
	for (int i = 0; i < L->nreaders[k]; i++)
		add_dep(L, o, L->readers[k][i]);
	L->nreaders[k] = 0;
	if (L->lastw[k] >= 0)
		L->op[L->lastw[k]].overwritten++;
	L->lastw[k] = o;
	L->loc[k] = to;
}

/* In place, an alltoall's output chunk k is its input chunk k: a write
 * there also waits for every read of the input chunk it replaces. */
static void
clobber_alias(Lower *L, int o, int r, int off)
{
	int c = L->s->kind == CK_ALLTOALL ? L->occupant[r * L->N + off] : -1;
	if (c < 0)
		return;
	int k = r * L->s->nchunk + c;
	for (int i = 0; i < L->nreaders[k]; i++)
		add_dep(L, o, L->readers[k][i]);
}

/* A copy home writes where the chunk may already lie in place (an
 * allgather's own chunk: i[k] is o[rank*N/R + k]), so it waits for every
 * read of the chunk since its last write, as a write does. */
static void
copy_reads_first(Lower *L, int o, int r, int c)
{
	int k = r * L->s->nchunk + c;
	for (int i = 0; i < L->nreaders[k]; i++)
		add_dep(L, o, L->readers[k][i]);
}

/* The last op reading the input chunk that output chunk off of rank r
 * replaces in place (an alltoall's send), or -1. */
static int
alias_last_reader(const Lower *L, int r, int off)
{
	int c = L->s->kind == CK_ALLTOALL ? L->occupant[r * L->N + off] : -1;
	int k = r * L->s->nchunk + c;
	return c >= 0 && L->nreaders[k] > 0 ? L->readers[k][L->nreaders[k] - 1] : -1;
}

/* Whether writing output chunks [off, off + n) of rank r after `round`
 * would, in place, destroy an input chunk a later round still sends. */
static bool
alias_still_read(Lower *L, int r, int off, int n, int round)
{
	for (int j = 0; L->s->kind == CK_ALLTOALL && j < n; j++) {
		int c = L->occupant[r * L->N + off + j];
		if (c >= 0 && L->lastsend[r * L->s->nchunk + c] > round)
			return true;
	}
	return false;
}

/* The per-(rank, chunk) state lower_instance() keeps. Needs L->N. */
void
alloc_state(Lower *L)
{
	Arena *a = L->a;
	size_t R = (size_t)L->R, nc = (size_t)L->s->nchunk;
	L->loc = arena_array(a, R * nc, sizeof *L->loc);
	L->lastw = arena_array(a, R * nc, sizeof(int));
	L->readers = arena_array(a, R * nc, sizeof(int *));
	L->nreaders = arena_array(a, R * nc, sizeof(int));
	L->capreaders = arena_array(a, R * nc, sizeof(int));
	L->scratch = arena_array(a, R, sizeof(int));
	L->connseq = arena_array(a, R * R, sizeof(int));
	L->rwritten = arena_array(a, R * nc, sizeof(int));
	L->nred = arena_array(a, R * nc, sizeof(int));
	L->has0 = arena_array(a, R * nc, sizeof(bool));
	L->ch = arena_array(a, R, sizeof(Chains));
	if (L->s->kind == CK_ALLTOALL)
		L->occupant = arena_array(a, R * (size_t)L->N, sizeof(int));
}

/* Every rank's chunks where the instance starts: locations, no writer, no
 * readers, and (alltoall) which input slot holds which chunk. */
void
start_instance(Lower *L, int inst)
{
	const Sched *s = L->s;
	int nc = s->nchunk;
	if (s->kind == CK_ALLTOALL)
		for (int k = 0; k < L->R * L->N; k++)
			L->occupant[k] = -1;
	for (int r = 0; r < L->R; r++)
		for (int c = 0; c < nc; c++) {
			L->loc[r * nc + c] = initial(L, r, c, inst);
			L->lastw[r * nc + c] = -1;
			L->nreaders[r * nc + c] = 0;
			if (s->kind == CK_ALLTOALL && L->loc[r * nc + c].buf == MB_I)
				L->occupant[r * L->N + L->loc[r * nc + c].off] = c;
		}
}

static int
keyed_cmp(const void *x, const void *y)
{
	const KeyedChunk *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->c > b->c) - (a->c < b->c);
}

/* The receive whose run send op o passes on unchanged (the same chunks in
 * the same order, read where it wrote them, waiting for nothing else), or
 * -1: a candidate for fusion into rcs, rrs or rrcs (fuse), if the two share
 * a tb, which keep_flows() arranges. */
static int
passed_on(const Lower *L, int o)
{
	const Op *x = &L->op[o];
	if (x->ndep != 1)
		return -1;
	const Op *w = &L->op[x->dep[0]];
	if (!is_recv(w->kind) || w->n != x->n || w->dst.buf != x->src.buf ||
	    w->dst.off != x->src.off || w->rank != x->rank)
		return -1;
	if (memcmp(&L->cl[w->first], &L->cl[x->first], (size_t)x->n * sizeof(int)) != 0)
		return -1;
	return x->dep[0];
}

/* The sends of message g: one op per run of its chunks contiguous at the
 * sender, at the receiver's target and (reduce) at the receiver's operand,
 * each reading its chunks. Needs plan_chains for the round. */
static void
lower_sends(Lower *L, const Msg *g, int round, int inst)
{
	const Sched *s = L->s;
	int nc = s->nchunk;
	/* its chunks in the sender's buffer order, so runs can form */
	KeyedChunk *kc = xmalloc(((size_t)g->n + 1) * sizeof *kc);
	int *mc = xmalloc(((size_t)g->n + 1) * sizeof *mc);
	for (int j = 0; j < g->n; j++) {
		int c = s->chunks[g->first + j];
		BLoc at = L->loc[g->src * nc + c];
		kc[j] = (KeyedChunk){at.buf * (MSCCL_MAX_OFFSET + 1) + at.off, c};
	}
	qsort(kc, (size_t)g->n, sizeof *kc, keyed_cmp);
	for (int j = 0; j < g->n; j++)
		mc[j] = kc[j].c;
	free(kc);
	int k = 0;
	while (k < g->n) {
		/* a run: contiguous at the sender, at the receiver's target and
		 * (reduce) at the receiver's local operand */
		int c0 = mc[k];
		BLoc sl = L->loc[g->src * nc + c0];
		int len = 1;
		/* (reduce) the chain, and whether the run starts its accumulators */
		int chain = g->op == X_REDUCE ? chain_of(L, g->dst, c0, g->src) : 0;
		bool cfirst = chain && *chain_last(L, g->dst, c0, chain, inst, NULL) == -1;
		while (k + len < g->n && len < L->maxcnt) {
			int c = mc[k + len], cp = mc[k + len - 1];
			if (!next_to(L->loc[g->src * nc + cp], L->loc[g->src * nc + c]))
				break;
			BLoc hp = home(L, g->dst, cp, inst), hc = home(L, g->dst, c, inst);
			if (L->staged ? !staged_next(L, g->dst, cp, c) : hp.buf == -2 || !next_to(hp, hc))
				break;
			if (g->op == X_REDUCE && chain_of(L, g->dst, c, g->src) != chain)
				break;
			if (chain && (*chain_last(L, g->dst, c, chain, inst, NULL) == -1) != cfirst)
				break;
			if (g->op == X_REDUCE && !chain &&
			    !next_to(recv_sees(L, g->dst, cp, inst), recv_sees(L, g->dst, c, inst)))
				break;
			len++;
		}
		for (int j = 0; j < len; j++) {
			if (chain)
				*chain_last(L, g->dst, mc[k + j], chain, inst, NULL) = -2;
			else
				L->rwritten[g->dst * nc + mc[k + j]] = L->batch;
		}
		int o = new_op(L, g->src, g->dst, OP_SEND, round, PH_SEND);
		L->op[o].src = sl;
		L->op[o].cnt = len;
		L->op[o].xop = g->op;
		L->op[o].chain = chain;
		L->op[o].chainfirst = cfirst;
		int seq = L->connseq[g->src * L->R + g->dst]++;
		/* the peers' sum staggers the channels, so a rank's many peers spread;
		 * pinned, the two directions of a pair share their one channel */
		L->op[o].chan = inst * L->nch + ((L->pinned ? 0 : seq) + g->src + g->dst) % L->nch;
		for (int j = 0; j < len; j++) {
			push_chunk(L, o, mc[k + j]);
			read_chunk(L, o, g->src, mc[k + j]);
		}
		L->op[o].fwd = passed_on(L, o);
		L->npassed += L->op[o].fwd >= 0;
		k += len;
	}
	free(mc);
}

/* The receives of the round's sends [sfirst, send_end), in the same order
 * (FIFO order on each connection), each writing its chunks' targets (an
 * alltoall run parked in scratch when, in place, its output slots still
 * hold input to send). -1 after an error. */
static int
lower_receives(Lower *L, int sfirst, int send_end, int round, int inst)
{
	const Sched *s = L->s;
	int nc = s->nchunk;
	for (int so = sfirst; so < send_end; so++) {
		int src = L->op[so].rank, dst = L->op[so].peer;
		bool red = L->op[so].xop == X_REDUCE;
		int chain = L->op[so].chain;
		int o = new_op(L, dst, src, red && !L->op[so].chainfirst ? OP_RECV_REDUCE : OP_RECV_COPY,
		               round, PH_RECV);
		Op *x = &L->op[o];
		L->op[so].mate = o;
		x->mate = so;
		const Op *sx = &L->op[so];
		x->cnt = sx->cnt;
		x->chan = sx->chan;
		int c0 = L->cl[sx->first];
		if (chain) {
			lower_chain_receive(L, o, so, chain, inst);
			continue;
		}
		if (red) {
			x->src = L->loc[dst * nc + c0];
			if (x->src.buf < 0) {
				error_at(L->diag, s->loc, "'%s': rank %d reduces into chunk %d before holding it",
				         s->name, dst, c0);
				return -1;
			}
		}
		x->dst = write_target(L, dst, c0, inst);
		bool parked = x->dst.buf == MB_O &&
		              alias_still_read(L, dst, x->dst.off, sx->n, round);
		if (parked) {
			/* in place that output is input still to send: park the run in
			 * scratch; the copies home at the end wait for its sends */
			x->dst = (BLoc){MB_S, L->scratch[dst]};
			L->scratch[dst] += sx->n;
		}
		for (int j = 0; j < sx->n; j++) {
			int c = L->cl[sx->first + j];
			push_chunk(L, o, c);
			BLoc to = j == 0 ? x->dst : (BLoc){x->dst.buf, x->dst.off + j};
			if (j > 0 && !parked && to.buf == MB_S && L->loc[dst * nc + c].buf != MB_S)
				L->scratch[dst]++;
			if (to.buf == MB_O)
				clobber_alias(L, o, dst, to.off);
			write_chunk(L, o, dst, c, to);
		}
	}
	return 0;
}

/* After the last round: a local copy home of each promised chunk that does
 * not end where the output wants it, one per run. */
static void
copy_home(Lower *L, int inst)
{
	const Sched *s = L->s;
	int nc = s->nchunk;
	int phase_round = s->nmsg ? s->msg[s->nmsg - 1].round + 1 : 0;
	for (int r = 0; r < L->R; r++) {
		int open = -1;
		for (int c = 0; c < nc; c++) {
			BLoc h = home(L, r, c, inst), at = L->loc[r * nc + c];
			if (h.buf == -2 || at.buf < 0 || (at.buf == h.buf && at.off == h.off)) {
				open = -1;
				continue;
			}
			if (s->kind == CK_ALLREDUCE || s->kind == CK_REDUCE_SCATTER || s->kind == CK_REDUCE) {
				/* a reduced chunk still in the input never got everyone's part */
				if (L->lastw[r * nc + c] < 0)
					continue;
			}
			/* a parked alltoall chunk is copied home by the tb of the send that
			 * frees its slot, after it: no local tb, no wait on the tail */
			int host = at.buf == MB_S ? alias_last_reader(L, r, h.off) : -1;
			/* staged, the copies of scratch spread over a local tb per channel;
			 * they write outputs nothing reads, so a read of scratch is no race */
			bool spread = L->staged && at.buf == MB_S;
			int chan = inst * L->nch, lane = spread ? staged_lane(at.off) : 0;
			Op *po = open >= 0 ? &L->op[open] : NULL;
			if (po && next_to((BLoc){po->src.buf, po->src.off + po->cnt - 1}, at) &&
			    next_to((BLoc){po->dst.buf, po->dst.off + po->cnt - 1}, h) &&
			    po->cnt < MSCCL_MAX_COUNT - 1 && po->host == host && po->lane == lane) {
				po->cnt++;
				push_chunk(L, open, c);
				read_chunk(L, open, r, c);
				if (!spread)
					copy_reads_first(L, open, r, c);
				clobber_alias(L, open, r, h.off);
				continue;
			}
			if (L->ncl && open >= 0 && L->op[open].first + L->op[open].n != L->ncl)
				open = -1;
			open = new_op(L, r, -1, OP_LOCAL_COPY, phase_round, PH_SEND);
			L->op[open].src = at;
			L->op[open].dst = h;
			L->op[open].cnt = 1;
			L->op[open].chan = chan;
			L->op[open].lane = lane;
			L->op[open].host = host;
			push_chunk(L, open, c);
			read_chunk(L, open, r, c);
			if (!spread)
				copy_reads_first(L, open, r, c);
			clobber_alias(L, open, r, h.off);
		}
	}
}

/* One instance of the schedule's messages as ops, round by round: the
 * round's sends (they read the state as it began), its receives, the
 * merges of its accumulator chains; then the copies home. */
int
lower_instance(Lower *L, int inst)
{
	const Sched *s = L->s;
	start_instance(L, inst);
	if (L->staged && s->kind == CK_REDUCE_SCATTER)
		stage_inputs(L, inst);
	int m = 0;
	while (m < s->nmsg) {
		int round = s->msg[m].round, end = m;
		while (end < s->nmsg && s->msg[end].round == round)
			end++;
		int sfirst = L->nop;
		L->batch++;
		plan_chains(L, m, end, inst);
		for (int i = m; i < end; i++)
			lower_sends(L, &s->msg[i], round, inst);
		if (lower_receives(L, sfirst, L->nop, round, inst) != 0)
			return -1;
		merge_chains(L, round, inst);
		m = end;
	}
	copy_home(L, inst);
	return 0;
}

/* Whether each send of [from, L->nop) is its connection's only run of its
 * round: alone[o - from]. Ops are made round by round. */
static bool *
alone_runs(const Lower *L, int from)
{
	int R = L->R, n = L->nop - from;
	bool *alone = xcalloc((size_t)n + 1, 1);
	int *count = xcalloc((size_t)R * R + 1, sizeof *count);
	for (int i = 0, j; i < n; i = j) {
		int round = L->op[from + i].round;
		for (j = i; j < n && L->op[from + j].round == round; j++)
			if (L->op[from + j].kind == OP_SEND)
				count[L->op[from + j].rank * R + L->op[from + j].peer]++;
		for (int k = i; k < j; k++) {
			const Op *x = &L->op[from + k];
			if (x->kind == OP_SEND)
				alone[k] = count[x->rank * R + x->peer] == 1;
		}
		for (int k = i; k < j; k++)
			if (L->op[from + k].kind == OP_SEND)
				count[L->op[from + k].rank * R + L->op[from + k].peer] = 0;
	}
	free(count);
	return alone;
}

/* A flow: a run received and passed on unchanged, hop after hop (a ring's
 * chunk, reduced on its way round and then copied round). A hop's receive
 * fuses with the send that passes it on (rcs, rrs, rrcs) only if the two
 * share a tb, so a channel, and follow each other in it: the flow keeps
 * the channel of its first send where each hop is its connection's only
 * run of its round and is passed on in the next round (as in a ring), and
 * flows take the channels in turn at their first sender (the spread's
 * (seq + src + dst) would put every flow of a ring on channels of one
 * parity, since src + dst = 2r + 1). A send passes a run on only as its
 * one reader: a tree's run copied to several children stays spread, and
 * so do runs sharing a connection in a round (an alltoall's relays, whose
 * tbs kept together would exceed the step limit). Needs the ops of one
 * instance, [from, L->nop), in creation order; pinned or unpaired widths
 * keep the spread's channels. Returns the runs that kept a flow's channel. */
int
keep_flows(Lower *L, int from, int inst)
{
	int kept = 0;
	bool *alone = alone_runs(L, from);
	for (int o = from; o < L->nop; o++) {
		Op *x = &L->op[o];
		if (x->kind != OP_SEND)
			continue;
		const Op *w = x->fwd >= 0 ? &L->op[x->fwd] : NULL;
		if (w && w->reader == o && w->round + 1 == x->round && w->mate >= from &&
		    alone[o - from] && alone[w->mate - from])
			L->op[x->fwd].forwarded = true;
		else
			x->fwd = -1;
	}
	free(alone);
	int *heads = xcalloc((size_t)L->R + 1, sizeof *heads); /* flows begun per rank */
	for (int o = from; o < L->nop; o++) {
		Op *x = &L->op[o];
		if (x->kind != OP_SEND || x->mate < 0)
			continue;
		if (x->fwd >= 0) {
			x->chan = L->op[x->fwd].chan;
			kept++;
		}
		else if (L->op[x->mate].forwarded)
			x->chan = inst * L->nch + (heads[x->rank]++ + x->rank) % L->nch;
		L->op[x->mate].chan = x->chan;
	}
	free(heads);
	return kept;
}
