/*
 * to_msccl_layout.c: where a chunk lies in the MSCCL buffers. Needs the
 * shared layout (ir/layout.c) and, for write targets, the lowering's state
 * (Lower.loc, scratch). Establishes each chunk's position in the vector
 * (place_chunks), its home in the output and its place in the input at the
 * start (home, initial), and where a receive writes it and finds it
 * (write_target, recv_sees). One place for the buffer arithmetic: the ops,
 * the chains and the copies home all ask it, so that a run contiguous here
 * is one step everywhere.
 */

#include "to_msccl.h"

/* Positions from the shared layout: blocks of bs chunks where it puts them;
 * an alltoall chunk has the same piece in its source's input and its
 * destination's output. Needs L->s, L->inst; establishes L->bs, N, pos,
 * ipos, opos, lastsend. 0, -1 after an error, or 1 with b->why set. */
int
place_chunks(Lower *L, const Layout *lay, Built *b)
{
	const Sched *s = L->s;
	int nc = s->nchunk, R = s->nrank;
	if (lay->short_block >= 0) {
		error_at(L->diag, s->loc, "'%s' cannot be written for MSCCL: rank %d owns %d of its %d "
		         "chunks, and MSCCL's %s needs every rank to own %d", s->name, lay->short_block,
		         lay->short_count, nc, coll_kind_name[s->kind], nc / R);
		return -1;
	}
	int N = s->kind == CK_ALLTOALL ? R * lay->per : nc;
	L->bs = s->kind == CK_ALLREDUCE ? nc : lay->per;
	/* the layout's order with the fewest runs: a step per run */
	L->pos = lay->run_pos;
	L->lastsend = lay->last_send;
	if (s->kind == CK_ALLTOALL) {
		L->ipos = arena_array(L->a, (size_t)nc, sizeof(int));
		L->opos = arena_array(L->a, (size_t)nc, sizeof(int));
		for (int c = 0; c < nc; c++) {
			L->ipos[c] = s->a2a_dst[c] * lay->per + lay->run_piece[c];
			L->opos[c] = s->a2a_src[c] * lay->per + lay->run_piece[c];
		}
	}
	L->N = N * L->inst;
	if (L->N > MSCCL_MAX_OFFSET + 1) {
		snprintf(b->why, sizeof b->why, "nchunksperloop would be %d; chunk offsets are int16 in "
		         "the executor, so at most %d", L->N, MSCCL_MAX_OFFSET + 1);
		b->any_width = true;
		return 1;
	}
	return 0;
}

BLoc
home(Lower *L, int r, int c, int inst)
{
	const Sched *s = L->s;
	int p;
	switch (s->kind) {
	case CK_ALLREDUCE:
	case CK_ALLGATHER:
	case CK_BROADCAST:
		p = L->pos[c];
		break;
	case CK_REDUCE: /* NCCL passes recvbuff to the root alone: scratch elsewhere */
		if (r != s->root)
			return (BLoc){-2, 0};
		p = L->pos[c];
		break;
	case CK_REDUCE_SCATTER:
		if (s->owner[c] == r) {
			p = L->pos[c] % L->bs;
			return (BLoc){MB_O, p + inst * L->bs};
		}
		return (BLoc){-2, 0};
	default: /* alltoall */
		if (s->a2a_dst[c] == r) {
			p = L->opos[c];
			break;
		}
		return (BLoc){-2, 0};
	}
	/* blocks of bs chunks; instance i takes the i-th bs of each block */
	return (BLoc){MB_O, (p / L->bs) * L->bs * L->inst + inst * L->bs + p % L->bs};
}

BLoc
initial(Lower *L, int r, int c, int inst)
{
	const Sched *s = L->s;
	int p;
	switch (s->kind) {
	case CK_ALLREDUCE:
	case CK_REDUCE_SCATTER:
	case CK_REDUCE:
		p = L->pos[c];
		break;
	case CK_BROADCAST: /* NCCL passes sendbuff to the root alone */
		if (r != s->root)
			return (BLoc){-1, 0};
		p = L->pos[c];
		break;
	case CK_ALLGATHER:
		if (s->owner[c] != r)
			return (BLoc){-1, 0};
		return (BLoc){MB_I, inst * L->bs + L->pos[c] % L->bs};
	default:
		if (s->a2a_src[c] != r)
			return (BLoc){-1, 0};
		p = L->ipos[c];
		break;
	}
	return (BLoc){MB_I, (p / L->bs) * L->bs * L->inst + inst * L->bs + p % L->bs};
}

BLoc
write_target(Lower *L, int r, int c, int inst)
{
	BLoc h = home(L, r, c, inst);
	if (h.buf == -2 || L->staged) {
		int k = r * L->s->nchunk + c;
		if (L->loc[k].buf == MB_S)
			return L->loc[k];
		return (BLoc){MB_S, L->scratch[r]++};
	}
	return h;
}

/* Where a receive of this round will find chunk c on rank r: a receive
 * earlier in the round may already have moved it to its write target (two
 * children reducing into one parent in one round), and the receives run
 * after every send of the round is formed. Chunks of multi-chunk runs have
 * a home, which is then their write target. */
BLoc
recv_sees(Lower *L, int r, int c, int inst)
{
	int k = r * L->s->nchunk + c;
	/* staged, a chunk reduced into is in scratch already and stays there */
	return L->rwritten[k] == L->batch && !L->staged ? home(L, r, c, inst) : L->loc[k];
}

bool
next_to(BLoc a, BLoc b)
{
	return a.buf == b.buf && a.off + 1 == b.off;
}
