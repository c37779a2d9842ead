/*
 * to_msccl_tbs.c: the thread blocks of every rank. Needs the ops of every
 * instance, with their channels. Establishes rb[r] (per channel, a send
 * peer paired with a receive peer; local tbs for local copies), each op's
 * tb and its order in it, and fusion: a receive and the send that passes
 * its run on become one step (rcs, rrs, rrcs), consecutive `re` one
 * multi-source reduction. Steps go round by round, a tb alternating its
 * sends and receives inside a round (a receive after the sends it waits
 * for), so FIFOs of depth 2 suffice on exchanges. A rank over the
 * executor's tbs stops the width here (b->why).
 */
#include <stdlib.h>
#include <string.h>

#include "to_msccl.h"

/* Program order inside a tb before interleave(): round, sends first, message. */
static int
op_cmp(const void *x, const void *y, void *ctx)
{
	const Lower *L = ctx;
	const Op *a = &L->op[*(const int *)x], *b = &L->op[*(const int *)y];
	if (a->round != b->round)
		return a->round < b->round ? -1 : 1;
	if (a->phase != b->phase)
		return a->phase < b->phase ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

static int
tb_for(Lower *L, RankB *rb, int send, int recv, int chan)
{
	(void)L;
	for (int t = 0; t < rb->ntb; t++)
		if (rb->tb[t].chan == chan && ((send >= 0 && rb->tb[t].send == send) ||
		                               (recv >= 0 && rb->tb[t].recv == recv)))
			return t;
	return -1;
}

static int
local_tb(const RankB *rb, int lane)
{
	for (int t = 0; t < rb->ntb; t++)
		if (rb->tb[t].send < 0 && rb->tb[t].recv < 0 && rb->tb[t].lane == lane)
			return t;
	return -1;
}

static bool
depends_on(const Op *x, int d)
{
	for (int i = 0; i < x->ndep; i++)
		if (x->dep[i] == d)
			return true;
	return false;
}

/* Whether a receive of ops[i, end) (a round of a tb, its nsend sends
 * first) must follow one of those sends: it writes a chunk they read. */
static bool
round_blocked(const Lower *L, const TbB *t, int i, int nsend, int end)
{
	for (int r = i + nsend; r < end; r++)
		for (int j = i; j < i + nsend; j++)
			if (depends_on(&L->op[t->ops[r]], t->ops[j]))
				return true;
	return false;
}

/* Inside each round of a tb, alternate its sends and receives (send first):
 * a tb that sent all its messages of a round before receiving any would
 * need a FIFO as deep as that count on an exchange, and Simple guarantees
 * 2. A receive still goes after every send of the tb it must wait for.
 *
 * With L->mirror, the higher rank of an exchange (a tb sending to and
 * receiving from one peer) alternates receive first, so that its round is
 * the peer's with sends and receives swapped: each step then meets its
 * matching step at the same place, and a step of any count streams chunk by
 * chunk through a FIFO of any depth (the executor at large sizes), where send
 * against send stops once 2 chunks wait. This is done only in a round with
 * no receive that must follow a send of the tb (a chunk the round's sends
 * read, which the receive overwrites): the round's sends read the state as
 * it began, and a receive writes nothing they read, so moving every
 * receive before them changes no value. Where the peer's round is not
 * the plain alternation (one of its receives must follow a send) the two
 * no longer mirror, and a wait through another tb may close a cycle: the
 * checks of the width (rules 13 and 14 chunk by chunk) decide. */
static void
interleave(Lower *L, TbB *t)
{
	int *out = xmalloc(((size_t)t->nops + 1) * sizeof *out);
	bool exchange = L->mirror && t->nops > 0 && t->send >= 0 && t->send == t->recv &&
	                L->op[t->ops[0]].rank > t->send;
	int i = 0;
	while (i < t->nops) {
		int round = L->op[t->ops[i]].round, end = i, nsend = 0;
		while (end < t->nops && L->op[t->ops[end]].round == round)
			nsend += L->op[t->ops[end++]].phase == PH_SEND;
		/* sorted: the round's sends are ops[i, i+nsend), its receives follow */
		int s = i, r = i + nsend, k = i;
		bool want_send = !(exchange && !round_blocked(L, t, i, nsend, end));
		while (s < i + nsend || r < end) {
			bool blocked = false;
			for (int j = s; r < end && j < i + nsend && !blocked; j++)
				blocked = depends_on(&L->op[t->ops[r]], t->ops[j]);
			bool take_send = s < i + nsend && (want_send || blocked || r == end);
			out[k++] = t->ops[take_send ? s++ : r++];
			want_send = !take_send;
		}
		i = end;
	}
	memcpy(t->ops, out, (size_t)t->nops * sizeof *out);
	free(out);
}

/* Thread blocks of one rank: per channel, a send peer p is paired with the
 * receive peer p (an exchange), else 2r - p (a ring's neighbour), else any
 * left; local copies get a tb of their own (staged, one per channel: they
 * are many). */
static void
assign_tbs(Lower *L, int r, const int *ops, int nops, RankB *rb)
{
	int R = L->R, nchan = L->nch * L->inst;
	bool *sp = xcalloc((size_t)R * nchan, 1), *rp = xcalloc((size_t)R * nchan, 1);
	int nlane = 0;
	for (int i = 0; i < nops; i++)
		nlane = L->op[ops[i]].lane >= nlane ? L->op[ops[i]].lane + 1 : nlane;
	bool *local = xcalloc((size_t)nlane + 1, 1);
	for (int i = 0; i < nops; i++) {
		const Op *x = &L->op[ops[i]];
		if (x->kind == OP_SEND)
			sp[x->chan * R + x->peer] = true;
		else if (is_recv(x->kind))
			rp[x->chan * R + x->peer] = true;
		else if (x->host < 0)
			local[x->lane] = true;
	}
	for (int ch = 0; ch < nchan; ch++) {
		for (int pass = 0; pass < (L->unpaired ? 0 : 3); pass++)
			for (int p = 0; p < R; p++) {
				if (!sp[ch * R + p])
					continue;
				int q = pass == 0 ? p : pass == 1 ? ((2 * r - p) % R + R) % R : -1;
				if (pass == 2)
					for (int k = 0; k < R && q < 0; k++)
						if (rp[ch * R + k])
							q = k;
				if (q < 0 || !rp[ch * R + q])
					continue;
				sp[ch * R + p] = rp[ch * R + q] = false;
				TbB t = {.send = p, .recv = q, .chan = ch};
				VEC_PUSH(L->a, rb->tb, rb->ntb, rb->captb, t);
			}
		for (int p = 0; p < R; p++) {
			if (sp[ch * R + p]) {
				TbB t = {.send = p, .recv = -1, .chan = ch};
				VEC_PUSH(L->a, rb->tb, rb->ntb, rb->captb, t);
			}
			if (rp[ch * R + p]) {
				TbB t = {.send = -1, .recv = p, .chan = ch};
				VEC_PUSH(L->a, rb->tb, rb->ntb, rb->captb, t);
			}
		}
	}
	for (int k = 0; k < nlane; k++)
		if (local[k]) {
			TbB t = {.send = -1, .recv = -1, .chan = k % nchan, .lane = k};
			VEC_PUSH(L->a, rb->tb, rb->ntb, rb->captb, t);
		}
	for (int i = 0; i < nops; i++) {
		int o = ops[i];
		Op *x = &L->op[o];
		int t = x->kind == OP_SEND ? tb_for(L, rb, x->peer, -1, x->chan)
		        : is_recv(x->kind) ? tb_for(L, rb, -1, x->peer, x->chan)
		        : x->host >= 0 ? L->op[x->host].tb
		                       : local_tb(rb, x->lane);
		x->tb = t;
		VEC_PUSH(L->a, rb->tb[t].ops, rb->tb[t].nops, rb->tb[t].capops, o);
	}
	for (int t = 0; t < rb->ntb; t++) {
		sort_with(rb->tb[t].ops, (size_t)rb->tb[t].nops, sizeof(int), op_cmp, L);
		interleave(L, &rb->tb[t]);
	}
	free(sp);
	free(rp);
	free(local);
}

/* A receive followed in its tb by a send of exactly what it wrote, which
 * waits for nothing else, becomes one fused step (rcs or rrcs); a reduce
 * whose value nothing but that send reads, and which is written again
 * later (a partial sum passed up a tree), need not store it: rrs. */
static void
fuse(Lower *L, TbB *t)
{
	for (int i = 0; i + 1 < t->nops; i++) {
		Op *a = &L->op[t->ops[i]], *b = &L->op[t->ops[i + 1]];
		if (a->dead || !is_recv(a->kind) || b->kind != OP_SEND || a->cnt != b->cnt ||
		    a->n != b->n || a->dst.buf != b->src.buf || a->dst.off != b->src.off)
			continue;
		if (memcmp(&L->cl[a->first], &L->cl[b->first], (size_t)a->n * sizeof(int)) != 0)
			continue;
		bool only = true;
		for (int d = 0; d < b->ndep; d++)
			only &= b->dep[d] == t->ops[i];
		if (!only)
			continue;
		a->fused = t->ops[i + 1];
		b->fused = t->ops[i]; /* where the dead send lives on */
		b->dead = true;
		a->nostore = a->kind == OP_RECV_REDUCE && a->reader == t->ops[i + 1] && a->overwritten == a->n;
	}
}

/* Consecutive re into the same chunks from scratch with equal cnt are one
 * multi-source reduction in the executor (up to MSCCL_MAX_REDUCE_FUSION),
 * if only the first waits: it takes the waits of the whole run. Waiting
 * earlier is safe: nothing but the tb's own later steps follows them. */
static void
fuse_re(Lower *L, TbB *t)
{
	int head = -1, len = 0;
	for (int i = 0; i < t->nops; i++) {
		Op *x = &L->op[t->ops[i]], *h = head >= 0 ? &L->op[head] : NULL;
		if (x->kind != OP_LOCAL_REDUCE) {
			head = -1;
			continue;
		}
		if (h && len < MSCCL_MAX_REDUCE_FUSION && h->dst.buf == x->dst.buf &&
		    h->dst.off == x->dst.off && h->src.buf == x->src.buf && h->cnt == x->cnt) {
			for (int d = 0; d < x->ndep; d++)
				add_dep(L, head, x->dep[d]);
			x->ndep = 0;
			len++;
			continue;
		}
		head = t->ops[i];
		len = 1;
	}
}

/* Thread blocks of every rank, then fusion inside each. Needs the ops;
 * establishes rb[r] and each op's tb, fused, dead. 1 with b->why set when
 * a rank needs more tbs than the executor has. */
int
form_tbs(Lower *L, RankB *rb, Built *b)
{
	int worst = 0;
	/* the ops of each rank, in id order: a counting sort */
	int *first = xcalloc((size_t)L->R + 1, sizeof *first);
	int *byrank = xmalloc(((size_t)L->nop + 1) * sizeof *byrank);
	for (int o = 0; o < L->nop; o++)
		first[L->op[o].rank + 1]++;
	for (int r = 0; r < L->R; r++)
		first[r + 1] += first[r];
	int *fill = xmalloc(((size_t)L->R + 1) * sizeof *fill);
	memcpy(fill, first, (size_t)L->R * sizeof *fill);
	for (int o = 0; o < L->nop; o++)
		byrank[fill[L->op[o].rank]++] = o;
	free(fill);
	for (int r = 0; r < L->R; r++) {
		assign_tbs(L, r, byrank + first[r], first[r + 1] - first[r], &rb[r]);
		if (rb[r].ntb > MSCCL_MAX_TBS && rb[r].ntb > worst) {
			worst = rb[r].ntb;
			snprintf(b->why, sizeof b->why, "rank %d needs %d thread blocks; the limit is %d "
			         "per rank (rule 4)", r, rb[r].ntb, MSCCL_MAX_TBS);
		}
		for (int t = 0; t < rb[r].ntb; t++) {
			fuse(L, &rb[r].tb[t]);
			fuse_re(L, &rb[r].tb[t]);
		}
	}
	free(first);
	free(byrank);
	if (worst)
		b->excess = (double)worst / MSCCL_MAX_TBS;
	return worst ? 1 : 0;
}
