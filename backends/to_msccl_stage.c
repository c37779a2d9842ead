/*
 * to_msccl_stage.c: the staged lowering (Lower.staged) of an allgather or
 * reduce-scatter: receives land in scratch in arrival order and are copied
 * home at the end; a reduce-scatter's input is first copied to scratch in
 * the order its messages take it (stage_inputs). Needs the instance's
 * starting locations (start_instance). Establishes the staging copies and
 * which local tb (lane) each takes, and tells lower_sends when two chunks
 * are neighbours in the receiver's scratch (staged_next). Exists because
 * these kinds' homes are fixed by the ranks' blocks, which a hierarchical
 * schedule's sets cross strided: a step per block at home, one run in
 * scratch.
 */
#include <stdlib.h>

#include "to_msccl.h"

/* Staged: whether the receiver's targets of chunks cp and c (in that order
 * in a run) are neighbours: both already in its scratch, next to each
 * other, or both new to it (new chunks take consecutive scratch slots). */
bool
staged_next(const Lower *L, int r, int cp, int c)
{
	BLoc a = L->loc[r * L->s->nchunk + cp], b = L->loc[r * L->s->nchunk + c];
	if (a.buf != MB_S && b.buf != MB_S)
		return a.buf < 0 && b.buf < 0;
	return next_to(a, b);
}

/* Staged: the local tb (lane) of a copy to or from scratch slot q, so that
 * consecutive slots share one (a run's copies then end on one tb: one wait
 * for them), a few steps under the limit left for nops and the copies
 * outside scratch. Local tbs take no connection, so they need not be one
 * per channel. */
enum { STAGE_LANE = MSCCL_MAX_STEPS - 4 };
int
staged_lane(int q)
{
	return q / STAGE_LANE;
}

/* By first message (key), then layout position. */
static int
first_pos_cmp(const void *x, const void *y, void *ctx)
{
	const Lower *L = ctx;
	const KeyedChunk *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (L->pos[a->c] != L->pos[b->c])
		return L->pos[a->c] < L->pos[b->c] ? -1 : 1;
	return (a->c > b->c) - (a->c < b->c);
}

/* Staged reduce-scatter: each rank's input chunks copied to scratch in the
 * order its messages first take them (sent or reduced into), each
 * message's chunks in layout order, so that a message a rank sends or
 * reduces into is one run there (the input holds them where their owners'
 * blocks lie: a hierarchical schedule's strided sets). The copies run
 * before the first round, a local tb per share of the slots. */
void
stage_inputs(Lower *L, int inst)
{
	const Sched *s = L->s;
	int nc = s->nchunk;
	/* first[r * nc + c]: the index, among rank r's messages, of the first to
	 * carry chunk c; one pass over the messages for every rank */
	int *first = xmalloc(((size_t)L->R * nc + 1) * sizeof *first);
	int *seen = xcalloc((size_t)L->R + 1, sizeof *seen);
	for (long k = 0; k < (long)L->R * nc; k++)
		first[k] = -1;
	for (int m = 0; m < s->nmsg; m++) {
		const Msg *g = &s->msg[m];
		for (int side = 0; side < 2; side++) {
			int r = side ? g->dst : g->src;
			for (int j = 0; j < g->n; j++) {
				int *f = &first[(long)r * nc + s->chunks[g->first + j]];
				if (*f < 0)
					*f = seen[r];
			}
			seen[r]++;
		}
	}
	free(seen);
	KeyedChunk *kc = xmalloc(((size_t)nc + 1) * sizeof *kc);
	for (int r = 0; r < L->R; r++) {
		int n = 0, *f = &first[(long)r * nc];
		for (int c = 0; c < nc; c++)
			if (f[c] >= 0 && L->loc[r * nc + c].buf == MB_I)
				kc[n++] = (KeyedChunk){0, c};
		for (int i = 0; i < n; i++)
			kc[i].key = f[kc[i].c];
		sort_with(kc, (size_t)n, sizeof *kc, first_pos_cmp, L);
		int round = s->nmsg ? s->msg[0].round : 0, base = L->scratch[r], open = -1;
		for (int i = 0; i < n; i++) {
			int c = kc[i].c, lane = staged_lane(base + i);
			BLoc at = L->loc[r * nc + c], to = {MB_S, base + i};
			Op *po = open >= 0 ? &L->op[open] : NULL;
			if (po && po->lane == lane && po->cnt < MSCCL_MAX_COUNT - 1 &&
			    next_to((BLoc){po->src.buf, po->src.off + po->cnt - 1}, at)) {
				po->cnt++;
			} else {
				open = new_op(L, r, -1, OP_LOCAL_COPY, round, PH_SEND);
				L->op[open].src = at;
				L->op[open].dst = to;
				L->op[open].cnt = 1;
				L->op[open].chan = inst * L->nch;
				L->op[open].lane = lane;
			}
			push_chunk(L, open, c);
			read_chunk(L, open, r, c);
			write_chunk(L, open, r, c, to);
		}
		L->scratch[r] += n;
	}
	free(first);
	free(kc);
}
