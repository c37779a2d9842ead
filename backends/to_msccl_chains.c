/*
 * to_msccl_chains.c: accumulator chains for a large fan-in of reducing
 * receives (see Chains in to_msccl.h). Needs a round's messages and the
 * homes (to_msccl_layout.c). Establishes, per rank and round, the chains'
 * scratch (plan_chains), the receive of a run into its chain
 * (lower_chain_receive) and the `re` ops that add the chains into their
 * chunks once the round's receives are in (merge_chains). Without them, 63
 * receives into one chunk (k-SP's star) would each wait for the one before.
 */

#include "to_msccl.h"

enum {
	CHAIN_MIN_FANIN = 8,  /* fewer receives per chunk stay one chain */
	CHAIN_LEN = 4,        /* receives per chain: a hand-over between tbs costs far more than a re */
	CHAIN_MAX = MSCCL_MAX_REDUCE_FUSION, /* chains per rank: the re of a run fuse into one */
};

/* The chain on which rank dst adds chunk c received from src: 0 unless the
 * chunk has a large fan-in this round, a home and a chain-0 receive. */
int
chain_of(const Lower *L, int dst, int c, int src)
{
	const Chains *h = &L->ch[dst];
	int k = dst * L->s->nchunk + c;
	if (h->G <= 1 || L->nred[k] < CHAIN_MIN_FANIN || !L->has0[k])
		return 0;
	return src % h->G;
}

/* Chain g's accumulator of chunk c on rank r: its last receive, and where. */
int *
chain_last(Lower *L, int r, int c, int g, int inst, BLoc *at)
{
	const Chains *h = &L->ch[r];
	int k = (g - 1) * h->span + home(L, r, c, inst).off - h->lo;
	if (at)
		*at = (BLoc){MB_S, h->base + k};
	return &h->last[k];
}

/* Sets up the chains of the round of messages [m, end) (see Chains). */
void
plan_chains(Lower *L, int m, int end, int inst)
{
	const Sched *s = L->s;
	int nc = s->nchunk;
	for (int r = 0; r < L->R; r++)
		L->ch[r] = (Chains){.G = 1};
	if (s->kind != CK_ALLREDUCE && s->kind != CK_REDUCE_SCATTER && s->kind != CK_REDUCE)
		return;
	for (int pass = 0; pass < 4; pass++)
		for (int i = m; i < end; i++) {
			const Msg *g = &s->msg[i];
			Chains *h = &L->ch[g->dst];
			for (int j = 0; g->op == X_REDUCE && j < g->n; j++) {
				int c = s->chunks[g->first + j], k = g->dst * nc + c;
				if (pass == 0) {
					L->nred[k] = 0;
					L->has0[k] = false;
				} else if (pass == 1) {
					L->nred[k]++;
				} else if (pass == 2) {
					int G = (L->nred[k] + CHAIN_LEN - 1) / CHAIN_LEN;
					G = G < CHAIN_MAX ? G : CHAIN_MAX;
					if (L->nred[k] >= CHAIN_MIN_FANIN && G > h->G)
						h->G = G;
				} else if (home(L, g->dst, c, inst).buf != MB_O) {
					L->nred[k] = 0; /* no home: stays one chain */
				} else {
					L->has0[k] |= g->src % h->G == 0;
				}
			}
		}
	for (int i = m; i < end; i++) {
		const Msg *g = &s->msg[i];
		Chains *h = &L->ch[g->dst];
		for (int j = 0; g->op == X_REDUCE && j < g->n; j++) {
			int c = s->chunks[g->first + j];
			if (h->G > 1 && L->nred[g->dst * nc + c] >= CHAIN_MIN_FANIN &&
			    L->has0[g->dst * nc + c]) {
				int off = home(L, g->dst, c, inst).off;
				if (h->span == 0 || off < h->lo) {
					h->span += h->span ? h->lo - off : 1;
					h->lo = off;
				} else if (off >= h->lo + h->span)
					h->span = off - h->lo + 1;
			}
		}
	}
	for (int r = 0; r < L->R; r++) {
		Chains *h = &L->ch[r];
		if (h->span == 0) {
			h->G = 1;
			continue;
		}
		h->base = L->scratch[r];
		L->scratch[r] += (h->G - 1) * h->span;
		h->last = arena_array(L->a, (size_t)(h->G - 1) * h->span, sizeof(int));
		for (int k = 0; k < (h->G - 1) * h->span; k++)
			h->last[k] = -1;
		h->chunk = arena_array(L->a, (size_t)h->span, sizeof(int));
		for (int c = 0; c < nc; c++) {
			BLoc hm = home(L, r, c, inst);
			if (hm.buf == MB_O && hm.off >= h->lo && hm.off < h->lo + h->span)
				h->chunk[hm.off - h->lo] = c;
		}
	}
}

/* After the round's receives: each chain's accumulators added into their
 * chunks, a `re` per run of chunks. */
void
merge_chains(Lower *L, int round, int inst)
{
	int nc = L->s->nchunk;
	for (int r = 0; r < L->R; r++) {
		Chains *h = &L->ch[r];
		for (int g = 1; g < h->G; g++) {
			int open = -1;
			for (int off = 0; off < h->span; off++) {
				int last = h->last[(g - 1) * h->span + off], c = h->chunk[off];
				if (last < 0) {
					open = -1;
					continue;
				}
				BLoc at = L->loc[r * nc + c];
				if (open < 0 || L->op[open].cnt >= MSCCL_MAX_COUNT - 1 ||
				    !next_to((BLoc){L->op[open].dst.buf, L->op[open].dst.off + L->op[open].cnt - 1}, at)) {
					open = new_op(L, r, -1, OP_LOCAL_REDUCE, round, PH_MERGE);
					L->op[open].src = (BLoc){MB_S, h->base + (g - 1) * h->span + off};
					L->op[open].dst = at;
					L->op[open].cnt = 1;
					L->op[open].chan = inst * L->nch;
				} else
					L->op[open].cnt++;
				push_chunk(L, open, c);
				add_dep(L, open, last);
				read_chunk(L, open, r, c);
				write_chunk(L, open, r, c, at);
			}
		}
	}
}

/* The receive of send op so, into its chain's accumulators: after the
 * chain's previous receive. */
void
lower_chain_receive(Lower *L, int o, int so, int chain, int inst)
{
	Op *x = &L->op[o];
	const Op *sx = &L->op[so];
	int dst = x->rank;
	chain_last(L, dst, L->cl[sx->first], chain, inst, &x->dst);
	x->src = x->dst;
	for (int j = 0; j < sx->n; j++) {
		int c = L->cl[sx->first + j], *last = chain_last(L, dst, c, chain, inst, NULL);
		push_chunk(L, o, c);
		add_dep(L, o, *last);
		*last = o;
	}
}
