/*
 * to_msccl.c: a schedule -> an MSCCL program -> XML for the MSCCL executor
 * (docs/msccl.md). Chunks lie where the shared layout puts them
 * (ir/layout.c: those travelling together are neighbours); every message
 * becomes a send on the sender and a receive on the receiver, one step per
 * run of chunks contiguous on both sides; each (rank, chunk) has a location
 * (input at first, its output or scratch chunk once written) and the
 * dependencies follow the IR's semantics: a send waits for the last write
 * of what it reads (from earlier rounds), a write waits for the last write
 * and every read since. A large fan-in of reducing receives is split over
 * accumulator chains joined by `re`, and an in-place alltoall parks what
 * would overwrite input still to send. Thread blocks pair a send peer with
 * a receive peer per channel; steps go round by round, a tb alternating
 * its sends and receives inside a round (a receive after the sends it
 * waits for), so FIFOs of depth 2 suffice on exchanges. The program is
 * checked with the same rules as files read back (runtime/msccl_check.c),
 * including a run with bounded FIFOs that proves it deadlock-free and
 * correct in every mode, before a byte is written; a width that fails is
 * retried wider or with each connection pinned. Which search comes first,
 * and which widths are not worth building, the bound of to_msccl_bound.c
 * estimates, so that one program is normally built and checked
 * (lower_checked). An allgather or reduce-scatter that fits no width is
 * searched again staged (Lower.staged: receives in scratch in arrival
 * order, copied home at the end; stage_inputs): its homes are fixed by
 * the ranks' blocks, which a hierarchical schedule's sets cross strided.
 *
 * The passes of one width (build): place_chunks, lower_instance per
 * instance (start_instance, then per round lower_sends, lower_receives,
 * merge_chains; copy_home) and keep_flows (a run passed on hop after hop
 * keeps one channel, so its receives and sends fuse), form_tbs
 * (assign_tbs, fuse, fuse_re), and per rank emit_rank (live_positions,
 * cross_tb_waits, number_steps, emit_tb), then mark_hasdep and
 * fill_header; build_best keeps the better of a width with flows and
 * without. The XML is written directly (write_xml), within the executor
 * parser's limits (4095 elements a rank, values of 255 bytes).
 */
#include <stdlib.h>
#include <string.h>

#include "to_msccl.h"

typedef struct BLoc {
	int buf, off; /* MBuf, chunk; buf -1: not held */
} BLoc;

/* What an op does; a receive or local op's MSCCL type follows from it and
 * from fusion (see emit_op). */
typedef enum OpKind {
	OP_SEND, OP_RECV_COPY, OP_RECV_REDUCE, OP_LOCAL_COPY, OP_LOCAL_REDUCE,
} OpKind;

/* Where an op goes in its round: the sends, the receives, then the `re`
 * that merge accumulator chains. */
typedef enum OpPhase { PH_SEND, PH_RECV, PH_MERGE } OpPhase;

static bool
is_recv(OpKind k)
{
	return k == OP_RECV_COPY || k == OP_RECV_REDUCE;
}

typedef struct Op {
	int rank, peer;     /* peer: send peer (send), recv peer (recv), -1 local */
	OpKind kind;
	int round;
	OpPhase phase;
	int seq, chan;
	BLoc src, dst;
	int cnt;
	int *dep;           /* ops of the same rank it waits for */
	int ndep, capdep;
	int tb, step;       /* its tb; its position among the tb's live ops (live_positions) */
	int fused;          /* a recv fused with the send that follows: its op id */
	bool dead;          /* fused into the op before it */
	int hasdep;
	int first, n;       /* its IR chunks: chunk ids in Lower.cl */
	int xop;            /* send: the message's X_REDUCE or X_COPY */
	int reader;         /* the one op reading what it wrote, -1 none, -2 several */
	int overwritten;    /* chunks it wrote that a later op writes again */
	bool nostore;       /* a fused reduce whose value only travels on: rrs */
	int chain;          /* send: the receive's accumulator chain (0: the chunk itself) */
	int host;           /* a local op run in this op's tb, not the local one; -1 */
	int lane;           /* a local op: its local tb (staged: many), 0 otherwise */
	bool chainfirst;    /* ... whose first receive it is: r, not rrc */
	int mate;           /* send: its receive; receive: its send; -1 */
	int fwd;            /* send: the receive whose run it passes on unchanged, -1 */
	bool forwarded;     /* receive: a later send passes its run on (fwd) */
} Op;

/* Many reducing receives of one chunk in one round (k-SP's star: 63 into
 * each root chunk) would each wait for the one before, a chain as long as
 * the fan-in. Instead peer p adds into accumulator chain p mod G: chain 0
 * is the chunk itself, chains 1..G-1 scratch chunks (base + (g-1) * span +
 * home offset - lo), which `re` steps add into the chunk once the round's
 * receives are in. Per rank and round. */
typedef struct Chains {
	int G;              /* 1: no chains */
	int lo, span, base;
	int *last;          /* (g-1) * span + offset: the last receive into it, -2 formed, -1 none */
	int *chunk;         /* offset -> chunk */
} Chains;

enum {
	CHAIN_MIN_FANIN = 8,  /* fewer receives per chunk stay one chain */
	CHAIN_LEN = 4,        /* receives per chain: a hand-over between tbs costs far more than a re */
	CHAIN_MAX = MSCCL_MAX_REDUCE_FUSION, /* chains per rank: the re of a run fuse into one */
};

typedef struct Lower {
	Arena *a;
	const Sched *s;
	int R, N, inst, nch, bs;
	bool pinned;        /* each connection keeps one channel: many peers, few tbs */
	int maxcnt;         /* chunks per sending step at most */
	bool unpaired;      /* tbs send or receive, never both: exchanges stream */
	bool mirror;        /* an exchange's higher rank receives first (interleave) */
	bool staged;        /* receives land in scratch, in arrival order, and are copied home
	                       at the end; a reduce-scatter's input is first copied to scratch
	                       in the order its messages take it (stage_inputs) */
	int *pos;           /* IR chunk -> position in the MSCCL vector (allreduce, AG, RS) */
	int *ipos, *opos;   /* alltoall: positions on the source and on the destination */
	BLoc *loc;          /* rank * nchunk + chunk */
	int *lastw;         /* last writing op, -1 */
	int **readers;      /* ops reading since the last write */
	int *nreaders, *capreaders;
	int *scratch;       /* scratch slots used per rank */
	Op *op;
	int nop, capop;
	int *cl;
	int ncl, capcl;
	int *connseq;       /* (src, dst) -> messages so far */
	int *rwritten;      /* (rank, chunk) -> the round batch whose receives write it */
	int batch;          /* the round being lowered, counted over instances */
	int *lastsend;      /* alltoall: (rank, chunk) -> the last round the rank sends it, -1 */
	int *nred;          /* (rank, chunk) -> reducing receives of it this round */
	bool *has0;         /* (rank, chunk) -> one of them comes in on chain 0 */
	Chains *ch;         /* per rank, this round */
	int *occupant;      /* alltoall: rank * N + input offset -> the chunk it holds at first */
	long npassed;       /* sends that pass a receive's run on (passed_on): fusions at most */
} Lower;

static void
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

static BLoc
home(Lower *L, int r, int c, int inst)
{
	const Sched *s = L->s;
	int N1 = L->N / L->inst; /* one instance's chunks */
	(void)N1;
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

static BLoc
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

static BLoc
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

static int
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

static void
push_chunk(Lower *L, int o, int c)
{
	VEC_PUSH(L->a, L->cl, L->ncl, L->capcl, c);
	L->op[o].n++;
}

static void
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

static void
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

static bool
next_to(BLoc a, BLoc b)
{
	return a.buf == b.buf && a.off + 1 == b.off;
}

/* Where a receive of this round will find chunk c on rank r: a receive
 * earlier in the round may already have moved it to its write target (two
 * children reducing into one parent in one round), and the receives run
 * after every send of the round is formed. Chunks of multi-chunk runs have
 * a home, which is then their write target. */
static BLoc
recv_sees(Lower *L, int r, int c, int inst)
{
	int k = r * L->s->nchunk + c;
	/* staged, a chunk reduced into is in scratch already and stays there */
	return L->rwritten[k] == L->batch && !L->staged ? home(L, r, c, inst) : L->loc[k];
}

/* Staged: whether the receiver's targets of chunks cp and c (in that order
 * in a run) are neighbours: both already in its scratch, next to each
 * other, or both new to it (new chunks take consecutive scratch slots). */
static bool
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
static int
staged_lane(int q)
{
	return q / STAGE_LANE;
}

typedef struct KeyedChunk {
	int key, c;
} KeyedChunk;

static int
keyed_cmp(const void *x, const void *y)
{
	const KeyedChunk *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->c > b->c) - (a->c < b->c);
}

/* The chain on which rank dst adds chunk c received from src: 0 unless the
 * chunk has a large fan-in this round, a home and a chain-0 receive. */
static int
chain_of(const Lower *L, int dst, int c, int src)
{
	const Chains *h = &L->ch[dst];
	int k = dst * L->s->nchunk + c;
	if (h->G <= 1 || L->nred[k] < CHAIN_MIN_FANIN || !L->has0[k])
		return 0;
	return src % h->G;
}

/* Chain g's accumulator of chunk c on rank r: its last receive, and where. */
static int *
chain_last(Lower *L, int r, int c, int g, int inst, BLoc *at)
{
	const Chains *h = &L->ch[r];
	int k = (g - 1) * h->span + home(L, r, c, inst).off - h->lo;
	if (at)
		*at = (BLoc){MB_S, h->base + k};
	return &h->last[k];
}

/* Sets up the chains of the round of messages [m, end) (see Chains). */
static void
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
static void
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

/* Every rank's chunks where the instance starts: locations, no writer, no
 * readers, and (alltoall) which input slot holds which chunk. */
static void
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

/* The receive of send op so, into its chain's accumulators: after the
 * chain's previous receive. */
static void
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
				error_at(s->loc, "'%s': rank %d reduces into chunk %d before holding it",
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
static void
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

/* One instance of the schedule's messages as ops, round by round: the
 * round's sends (they read the state as it began), its receives, the
 * merges of its accumulator chains; then the copies home. */
static int
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
static int
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


typedef struct TbB {
	int send, recv, chan;
	int lane;  /* a local tb (send and recv -1): its lane */
	int *ops;
	int nops, capops;
	int nstep; /* with nops */
} TbB;

typedef struct RankB {
	TbB *tb;
	int ntb, captb;
} RankB;

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

static int
final_op(const Lower *L, int o)
{
	/* a fused send lives on in the receive before it */
	return L->op[o].dead ? L->op[o].fused : o;
}


typedef struct Built {
	MProg p;
	int nch;
	char why[400];   /* the limit exceeded most (worst rank or tb), for the error */
	double excess;   /* ... its value over the limit: how far from fitting */
	bool by_steps;   /* ... a tb's steps (which spreading over more channels divides) */
	bool pair_over;  /* an exchange's tb (send and receive peer the same) has more ops
	                    than the step limit, nops aside: pinned, at every width */
	bool any_width;  /* ... whatever the channels: no use trying more */
	int flows;       /* runs passed on that kept their flow's channel (keep_flows) */
	long floor;      /* no program of these ops has fewer steps: each fuses at most
	                    the sends that pass a run on, whatever the channels */
} Built;

static void
set_step(MStep *st, int s, MType t, BLoc src, BLoc dst, int cnt)
{
	*st = (MStep){.s = s, .type = t, .srcbuf = src.buf < 0 ? MB_I : (MBuf)src.buf,
	              .srcoff = src.buf < 0 ? -1 : src.off, .dstbuf = dst.buf < 0 ? MB_O : (MBuf)dst.buf,
	              .dstoff = dst.buf < 0 ? -1 : dst.off, .cnt = cnt, .depid = -1, .deps = -1};
}

/* Positions from the shared layout: blocks of bs chunks where it puts them;
 * an alltoall chunk has the same piece in its source's input and its
 * destination's output. Needs L->s, L->inst; establishes L->bs, N, pos,
 * ipos, opos, lastsend. 0, -1 after an error, or 1 with b->why set. */
static int
place_chunks(Lower *L, const Layout *lay, Built *b)
{
	const Sched *s = L->s;
	int nc = s->nchunk, R = s->nrank;
	if (lay->short_block >= 0) {
		error_at(s->loc, "'%s' cannot be written for MSCCL: rank %d owns %d of its %d "
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

/* The per-(rank, chunk) state lower_instance() keeps. Needs L->N. */
static void
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

/* Thread blocks of every rank, then fusion inside each. Needs the ops;
 * establishes rb[r] and each op's tb, fused, dead. 1 with b->why set when
 * a rank needs more tbs than the executor has. */
static int
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

/* A step waited on in another thread block: its tb and the waited op's
 * position among the tb's live ops (a step number once the tb is numbered). */
typedef struct StepRef {
	int tb, pos;
} StepRef;

/* Per op id: the steps of other tbs it waits for, the latest of each tb,
 * in tb order. Ops of different ranks never meet, so one table serves all. */
typedef struct Waits {
	StepRef **ref;
	int *n;
} Waits;

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
static int **
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

/* Whether a rank's elements, as the executor's parser stores them (<algo>,
 * every <gpu>, the rank's <tb>s and <step>s), are over its limit; the
 * worst rank is named in b->why. Needs plan_rank. */
static bool
nodes_over(const RankB *rb, int R, Built *b)
{
	long worst = 0;
	for (int r = 0; r < R; r++) {
		long nodes = 1 + R + rb[r].ntb, steps = 0;
		for (int t = 0; t < rb[r].ntb; t++)
			steps += rb[r].tb[t].nstep;
		nodes += steps;
		if (nodes > MSCCL_MAX_NODES && nodes > worst) {
			worst = nodes;
			snprintf(b->why, sizeof b->why, "rank %d has %ld elements (<algo>, %d <gpu>, %d "
			         "<tb> and %ld <step>); the executor's parser stores at most %d per rank "
			         "(rule 7)", r, nodes, R, rb[r].ntb, steps, MSCCL_MAX_NODES);
		}
	}
	b->excess = (double)worst / MSCCL_MAX_NODES;
	return worst > 0;
}

/* One rank's gpu: its tbs and their steps. Needs plan_rank. */
static void
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
static void
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

static MProto
build_proto(const BuildOpts *o)
{
	for (int p = 0; o->proto && p < NPROTO; p++)
		if (strcmp(o->proto, mproto_name[p]) == 0)
			return (MProto)p;
	return MP_SIMPLE;
}

/* The algo element's attributes and the buffer sizes. */
static void
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

/* One attempt of search_widths(): nch channels per instance, each
 * connection's messages spread over them or pinned to one, sending steps
 * of at most maxcnt chunks, tbs paired or not. */
typedef struct Width {
	int nch;
	bool pinned;
	int maxcnt;
	bool unpaired;
	bool mirror;
	bool flows;     /* spread: flows keep their channel (keep_flows) */
	bool staged;    /* receives through scratch, copied home (Lower.staged) */
} Width;

/* Lowers one schedule at one width: positions, ops per instance, thread
 * blocks and fusion, step numbers, header. 0, or 1 with b->why set when a
 * limit does not fit, or -1 after an error. */
static int
build(Arena *a, const Sched *s, const Layout *lay, const BuildOpts *o, Width wd, Built *b)
{
	Lower L0 = {.a = a, .s = s, .R = s->nrank, .inst = o->instances > 0 ? o->instances : 1,
	            .nch = wd.nch, .pinned = wd.pinned, .maxcnt = wd.maxcnt,
	            .unpaired = wd.unpaired, .mirror = wd.mirror, .staged = wd.staged};
	Lower *L = &L0;
	int R = s->nrank;
	int rc = place_chunks(L, lay, b);
	if (rc != 0)
		return rc;
	alloc_state(L);
	int lowered = 0;
	for (int i = 0; lowered == 0 && i < L->inst; i++) {
		memset(L->connseq, 0, (size_t)R * R * sizeof(int));
		int from = L->nop;
		lowered = lower_instance(L, i);
		if (lowered == 0 && wd.flows)
			b->flows += keep_flows(L, from, i);
	}
	arena_own(a, L->op); /* no op is added after this */
	if (lowered != 0)
		return -1;
	RankB *rb = arena_array(a, (size_t)R, sizeof *rb);
	if (form_tbs(L, rb, b) != 0)
		return 1;
	MProg *p = &b->p;
	memset(p, 0, sizeof *p);
	p->ngpus = p->ngpu = R;
	p->gpu = arena_array(a, (size_t)R, sizeof *p->gpu);
	Waits w = {arena_array(a, (size_t)L->nop + 1, sizeof(StepRef *)),
	           arena_array(a, (size_t)L->nop + 1, sizeof(int))};
	int line = 2, worst = 0;
	int maxsteps = o->legacy ? MSCCL_MAX_STEPS_LEGACY : MSCCL_MAX_STEPS;
	int ***stepof = arena_array(a, (size_t)R, sizeof *stepof);
	for (int r = 0; r < R; r++)
		stepof[r] = plan_rank(L, &rb[r], &w, r, maxsteps, b, &worst);
	if (worst) {
		b->excess = (double)worst / maxsteps;
		b->by_steps = true;
		return 1;
	}
	if (nodes_over(rb, R, b))
		return 1;
	for (int r = 0; r < R; r++)
		emit_rank(L, &rb[r], &w, stepof[r], r, &line, &p->gpu[r]);
	mark_hasdep(p);
	fill_header(p, L, o, wd.nch);
	b->floor = L->nop - L->npassed;
	b->nch = wd.nch;
	return 0;
}

/* The steps of a built program, nops included. */
static long
total_steps(const MProg *p)
{
	long n = 0;
	for (int g = 0; g < p->ngpus; g++)
		for (int t = 0; t < p->gpu[g].ntb; t++)
			n += p->gpu[g].tb[t].nstep;
	return n;
}

static const char *const bufs[] = {"i", "o", "s"};

/* The XML as the executor's parser reads it: no declaration, one element
 * per line, two-space indentation, each element's attributes on its line
 * in double quotes, plain decimals (what libxml2's text writer wrote, made
 * here directly: formatting each number through the writer was a third of
 * a ring(128) build). */
typedef struct XOut {
	char *buf;
	size_t len, cap;
} XOut;

static void
xo_reserve(XOut *o, size_t n)
{
	if (o->len + n <= o->cap)
		return;
	while (o->len + n > o->cap)
		o->cap = o->cap ? 2 * o->cap : 1 << 16;
	o->buf = xrealloc(o->buf, o->cap);
}

static void
xo_str(XOut *o, const char *str)
{
	size_t n = strlen(str);
	xo_reserve(o, n);
	memcpy(o->buf + o->len, str, n);
	o->len += n;
}

static void
xo_long(XOut *o, long long v)
{
	char tmp[24];
	int n = 0;
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	do
		tmp[n++] = (char)('0' + u % 10);
	while ((u /= 10) > 0);
	xo_reserve(o, (size_t)n + 1);
	if (v < 0)
		o->buf[o->len++] = '-';
	while (n > 0)
		o->buf[o->len++] = tmp[--n];
}

/* ` key="v"`, a number */
static void
xo_num(XOut *o, const char *key, long long v)
{
	xo_str(o, " ");
	xo_str(o, key);
	xo_str(o, "=\"");
	xo_long(o, v);
	xo_str(o, "\"");
}

/* ` key="v"`, a string, escaped as libxml2 escapes attribute values */
static void
xo_text(XOut *o, const char *key, const char *v)
{
	xo_str(o, " ");
	xo_str(o, key);
	xo_str(o, "=\"");
	for (; *v; v++) {
		const char *e = *v == '&' ? "&amp;" : *v == '<' ? "&lt;" : *v == '>' ? "&gt;"
		                : *v == '"' ? "&quot;" : *v == '\n' ? "&#10;" : *v == '\r' ? "&#13;"
		                : *v == '\t' ? "&#9;" : NULL;
		if (e) {
			xo_str(o, e);
		} else {
			xo_reserve(o, 1);
			o->buf[o->len++] = *v;
		}
	}
	xo_str(o, "\"");
}

static void
xo_step(XOut *o, const MStep *st)
{
	xo_str(o, "      <step");
	xo_num(o, "s", st->s);
	xo_text(o, "type", mtype_name[st->type]);
	xo_text(o, "srcbuf", bufs[st->srcbuf]);
	xo_num(o, "srcoff", st->srcoff);
	xo_text(o, "dstbuf", bufs[st->dstbuf]);
	xo_num(o, "dstoff", st->dstoff);
	xo_num(o, "cnt", st->cnt);
	xo_num(o, "depid", st->depid);
	xo_num(o, "deps", st->deps);
	xo_num(o, "hasdep", st->hasdep);
	xo_str(o, "/>\n");
}

static int
write_xml(const MProg *p, FILE *f)
{
	XOut o = {0};
	xo_str(&o, "<algo");
	xo_text(&o, "name", p->name);
	xo_text(&o, "proto", mproto_name[p->proto]);
	xo_num(&o, "nchannels", p->nchannels);
	xo_num(&o, "nchunksperloop", p->nchunksperloop);
	xo_num(&o, "ngpus", p->ngpus);
	xo_text(&o, "coll", p->coll_name);
	xo_num(&o, "inplace", p->inplace);
	if (!p->legacy)
		xo_num(&o, "outofplace", p->outofplace);
	xo_num(&o, "minBytes", p->min_bytes);
	xo_num(&o, "maxBytes", p->max_bytes);
	xo_str(&o, ">\n");
	for (int g = 0; g < p->ngpus; g++) {
		const MGpu *gp = &p->gpu[g];
		xo_str(&o, "  <gpu");
		xo_num(&o, "id", g);
		xo_num(&o, "i_chunks", gp->i_chunks);
		xo_num(&o, "o_chunks", gp->o_chunks);
		xo_num(&o, "s_chunks", gp->s_chunks);
		xo_str(&o, gp->ntb ? ">\n" : ">");
		for (int t = 0; t < gp->ntb; t++) {
			const MTb *tb = &gp->tb[t];
			xo_str(&o, "    <tb");
			xo_num(&o, "id", tb->id);
			xo_num(&o, "send", tb->send);
			xo_num(&o, "recv", tb->recv);
			xo_num(&o, "chan", tb->chan);
			xo_str(&o, tb->nstep ? ">\n" : ">");
			for (int k = 0; k < tb->nstep; k++)
				xo_step(&o, &tb->step[k]);
			xo_str(&o, tb->nstep ? "    </tb>\n" : "</tb>\n");
		}
		xo_str(&o, gp->ntb ? "  </gpu>\n" : "</gpu>\n");
	}
	xo_str(&o, "</algo>\n\n"); /* the blank line the libxml2 writer left */
	fwrite(o.buf, 1, o.len, f);
	free(o.buf);
	return 0;
}

static int
check_rules(const MProg *p, bool pieces)
{
	int cap = msccl_capacity(p->proto);
	return msccl_check(p) != 0 || msccl_check_run(p, cap, false) != 0 ||
	       (pieces && msccl_check_run(p, cap, true) != 0) ? -1 : 0;
}

int
msccl_check_built(const MProg *p, const Sched *sched, bool pieces, bool report)
{
	diag_mute(true);
	int rc = check_rules(p, pieces);
	diag_mute(false);
	if (rc == 0 || !report)
		return rc;
	/* again, with the XML as the diagnostics' source */
	char name[200];
	MemOut xml;
	write_xml(p, memout_open(&xml));
	memout_close(&xml);
	snprintf(name, sizeof name, "<MSCCL XML for '%s'>", sched->name);
	DiagSource coll = diag_current();
	diag_source(name, xml.buf, xml.len);
	check_rules(p, pieces);
	diag_restore(coll);
	note_at(sched->loc, "in the MSCCL program built for '%s' over %d channel%s: the errors "
	        "above cite the XML collc would write", sched->name, p->nchannels,
	        p->nchannels == 1 ? "" : "s");
	free(xml.buf);
	return rc;
}

/* The runs with values and races (rules 15, 17) in every mode, which
 * include the flow with whole messages: what check_width has not already
 * passed. On a failure with report, every rule again, for its report. */
static int
check_values(const MProg *p, const Sched *sched, bool pieces, bool report)
{
	diag_mute(true);
	int rc = msccl_check_run(p, msccl_capacity(p->proto), false) != 0 ? -1 : 0;
	diag_mute(false);
	return rc == 0 || !report ? rc : msccl_check_built(p, sched, pieces, true);
}

/* The checks of a width that builds, each run once, cheapest first: the
 * static rules, then the flow alone chunk by chunk (rule 14, no values)
 * decide most failures; the runs with values and races (rules 15, 17) are
 * made only on a program that passes them, and include the flow with whole
 * messages. That flow is run alone only in the first search on a program
 * that stops chunk by chunk: passing it, the program is discarded for the
 * second search. A failure at the last width is checked again in full,
 * for its report. 0 passes, -1 fails, 1 (without pieces) passes with a
 * message per step but stops chunk by chunk. */
static int
check_width(const MProg *p, const Sched *sched, bool pieces, bool last)
{
	int cap = msccl_capacity(p->proto);
	diag_mute(true);
	bool rules = msccl_check(p) == 0;
	bool chunkwise = rules && msccl_check_flow(p, cap, true) == 0;
	bool flows = chunkwise || (rules && !pieces && msccl_check_flow(p, cap, false) == 0);
	diag_mute(false);
	if (flows && !chunkwise)
		return 1;
	if (!flows && !last)
		return -1;
	if (!flows)
		return msccl_check_built(p, sched, pieces, true);
	return check_values(p, sched, pieces, last);
}

/* What the width searches of one schedule share. */
typedef struct Search {
	Arena *a;
	const Sched *sched, *s;   /* as declared (for diagnostics), and expanded */
	const Layout *lay;
	const MscclBound *bound;
	const BuildOpts *o;
	bool skip;                /* the first search skips what the bound proves cannot fit */
	MscclStats *stats;
	bool staged;              /* builds staged widths (the bound does not apply) */
} Search;

/* build() at a width; spread with paired tbs, flows keep their channel,
 * and where any did, the plain spread is built too and the better kept:
 * the one that fits, else the one with fewer steps (a flow kept on one
 * channel can cost elsewhere: TTO's trees on a mesh took 16 more steps of
 * 3340), else the closer to fitting. *ta holds the program kept. */
static int
build_best(Arena *ta, const Search *S, Width wd, Built *b)
{
	wd.flows = !wd.pinned && !wd.unpaired;
	int rc = build(ta, S->s, S->lay, S->o, wd, b);
	if (rc < 0 || b->flows == 0 || b->any_width || (rc == 0 && total_steps(&b->p) == b->floor))
		return rc; /* no flows, or none can do better (a ring: every hop fused, no nop) */
	Arena ta2 = {0};
	Built *b2 = xcalloc(1, sizeof *b2);
	wd.flows = false;
	S->stats->widths++;
	int rc2 = build(&ta2, S->s, S->lay, S->o, wd, b2);
	bool take2 = rc2 == 0 ? rc != 0 || total_steps(&b2->p) < total_steps(&b->p)
	             : rc2 == 1 && rc == 1 && b2->excess < b->excess;
	if (take2) {
		arena_free(ta);
		*ta = ta2;
		*b = *b2;
		rc = rc2;
	} else {
		arena_free(&ta2);
	}
	free(b2);
	return rc;
}

/* The widths search_widths tries, each twice (spread, then pinned): the
 * given one, or 1, 2, 4, ... channels per instance up to the executor's. */
static int
width_tries(const BuildOpts *o, int inst, int tries[16])
{
	int ntry = 0;
	if (o->channels > 0) {
		tries[ntry++] = o->channels;
		tries[ntry++] = o->channels;
	} else
		for (int nch = 1; nch * inst <= MSCCL_MAX_CHANNELS; nch *= 2) {
			tries[ntry++] = nch;
			tries[ntry++] = nch;
		}
	return ntry;
}

/* Builds the program at the first width that fits, sending steps of at most
 * maxcnt chunks; with pieces it must also pass rule 14 chunk by chunk.
 * 0, -1 after an error, or (without pieces) 1: the program fits and passes
 * with a message per step but stops chunk by chunk (check_width). */
static int
search_widths(const Search *S, int maxcnt, bool unpaired, bool mirror, bool pieces, MProg *out)
{
	const Sched *sched = S->sched;
	const BuildOpts *o = S->o;
	Built b;
	int inst = o->instances > 0 ? o->instances : 1;
	int maxsteps = o->legacy ? MSCCL_MAX_STEPS_LEGACY : MSCCL_MAX_STEPS;
	/* a limit or a FIFO deadlock at one width: spread the work over more
	 * channels (quietly), each width first with every connection spread over
	 * the channels, then with each pinned to one (fewer tbs for many peers);
	 * if none fits, report the attempt closest to fitting (and with
	 * --channels, the other way too) */
	int tries[16], ntry = width_tries(o, inst, tries);
	if (ntry == 0) {
		error_at(sched->loc, "'%s': --instances %d leaves no channel: at most %d channels",
		         sched->name, inst, MSCCL_MAX_CHANNELS);
		return -1;
	}
	static const char *const how[] = {"each connection spread over the channels",
	                                  "each connection pinned to one channel"};
	char why[2][400] = {"", ""}; /* --channels: spread's and pinned's limit */
	char closest[400] = "";
	double closest_excess = 0;
	int closest_try = 0;
	/* Spreading a connection over k times the channels divides its tbs'
	 * steps by k at best (rings and SP: by less): a width at which the worst
	 * tb would still be over the step limit with 1.25 times that is not
	 * built. Pinned, a connection's steps stay on one tb whatever the
	 * width: once pinned is over the step limit, it is not built again. At
	 * 256 ranks that skips most attempts. */
	const double width_slack = 1.25;
	double skip_below = 0;
	bool pinned_over = false, pair_over = false;
	int stops = 0;
	for (int t = 0; t < ntry; t++) {
		bool last = t == ntry - 1;
		if (t % 2 == 1 && tries[t] == 1 && !last)
			continue; /* one channel: pinned is the same program */
		if (!last && (tries[t] < skip_below || (t % 2 == 1 && pinned_over)))
			continue;
		if (pieces && t % 2 == 1 && pair_over) {
			if (last)
				return -1;
			continue;
		}
		/* a width the bound proves cannot fit is not built: in the second
		 * search (pieces, which reports no failure) the last one neither;
		 * in the first, when S->skip (msccl_lower runs it again without
		 * skipping if it fails, for the report). One channel over the step
		 * limit skips, as its build would, the widths it cannot reach. */
		if ((pieces || S->skip) && !S->staged &&
		    msccl_bound_hopeless(S->bound, tries[t], inst, t % 2 == 1, unpaired, maxcnt,
		                         maxsteps)) {
			double excess = msccl_bound_excess(S->bound, maxcnt, maxsteps);
			if (tries[t] == 1 && excess > 1)
				skip_below = excess / width_slack;
			if (last)
				return -1;
			continue;
		}
		if (!last)
			diag_mute(true); /* a nesting count: undone below */
		memset(&b, 0, sizeof b);
		/* each attempt in its own arena: only the one written is kept */
		Arena ta = {0};
		S->stats->widths++;
		Width wd = {tries[t], t % 2 == 1, maxcnt, unpaired, mirror, false, S->staged};
		int rc = build_best(&ta, S, wd, &b);
		if (rc == 1 && b.any_width && !last) {
			diag_mute(false);
			last = true;
		}
		if (rc == 1 && b.by_steps && t % 2 == 0)
			skip_below = tries[t] * b.excess / width_slack;
		pinned_over |= rc == 1 && b.by_steps && t % 2 == 1;
		/* one channel or pinned, the two directions of an exchange share a
		 * tb whose ops are the same at every width: over the step limit
		 * with its ops alone, no pinned width fits, the last one neither */
		pair_over |= rc == 1 && b.pair_over && (tries[t] == 1 || t % 2 == 1);
		if (rc == 1 && !b.any_width) {
			snprintf(why[t % 2], sizeof why[0], "%s", b.why);
			if (closest_excess == 0 || b.excess < closest_excess) {
				closest_excess = b.excess;
				closest_try = t;
				snprintf(closest, sizeof closest, "%s", b.why);
			}
		}
		if (rc == 1 && last && b.any_width)
			error_at(sched->loc, "'%s' does not fit MSCCL's limits: %s", sched->name, b.why);
		else if (rc == 1 && last && o->channels > 0) {
			int c = closest_try % 2;
			error_at(sched->loc, "'%s' does not fit MSCCL's limits over %d channel%s: %s",
			         sched->name, tries[t] * inst, tries[t] * inst == 1 ? "" : "s", closest);
			if (why[!c][0] && strcmp(why[!c], closest) != 0)
				note_at(sched->loc, "that is with %s; with %s: %s", how[c], how[!c], why[!c]);
		} else if (rc == 1 && last)
			error_at(sched->loc, "'%s' does not fit MSCCL's limits at any width up to %d "
			         "channels; the closest, %d channel%s with %s: %s", sched->name,
			         tries[t] * inst, tries[closest_try] * inst,
			         tries[closest_try] * inst == 1 ? "" : "s", how[closest_try % 2], closest);
		S->stats->programs += rc == 0;
		stops = rc == 0 ? check_width(&b.p, sched, pieces, last) : 0;
		if (stops < 0)
			rc = -1;
		if (!last)
			diag_mute(false);
		if (rc == 0) {
			arena_move(S->a, &ta);
			break;
		}
		arena_free(&ta);
		if (last)
			return -1;
	}
	*out = b.p;
	return stops;
}

/* Whether a staged program may fit where the plain one does not: an
 * allgather's or reduce-scatter's homes are its ranks' blocks, so a set of
 * blocks strided through the vector (a hierarchical schedule's intra-node
 * sets) is a step per block there, and one run in scratch. */
static bool
staging_helps(const Sched *s)
{
	return s->kind == CK_ALLGATHER || s->kind == CK_REDUCE_SCATTER;
}

/* Staged comes first where the bound estimates the plain program's busiest
 * connection at this many times the staged one's steps: the homes cut
 * every message into pieces (a hierarchical schedule's strided sets), and
 * the plain widths would be built only to fail or to take more steps. */
enum { STAGING_FIRST_GAIN = 4 };

/* The first search: paired tbs, sending steps of up to 71 chunks. It skips
 * the widths the bound proves cannot fit, quietly; if it finds nothing,
 * the search again without skipping, for the report of the widths tried.
 * An allgather or reduce-scatter is searched staged too, first where
 * S->staged says so (STAGING_FIRST_GAIN). Staged, a ring's steps are long
 * (a set of blocks each), and sent first on every rank they stop chunk by
 * chunk: unpaired tbs, checked chunk by chunk, are tried first, then
 * paired. A staged program found first gives way to a plain one with fewer
 * steps that passes every check as it is. S->staged ends as the program
 * found. */
static int
first_search(Search *S, MProg *out)
{
	diag_mute(true);
	int stops = -1;
	bool first = S->staged;
	for (int i = 0; i < 2 && stops < 0; i++) {
		S->staged = i == 0 ? first : !first;
		if (S->staged && !staging_helps(S->s))
			continue;
		if (S->staged && search_widths(S, MSCCL_MAX_COUNT - 1, true, false, true, out) == 0)
			stops = 0;
		else
			stops = search_widths(S, MSCCL_MAX_COUNT - 1, false, false, false, out);
	}
	if (stops == 0 && first) {
		/* staged first: a plain program that fits as it is and has fewer
		 * steps (no copies) is kept instead */
		MProg plain;
		S->staged = false;
		if (search_widths(S, MSCCL_MAX_COUNT - 1, false, false, false, &plain) == 0 &&
		    total_steps(&plain) < total_steps(out))
			*out = plain;
		else
			S->staged = true;
	}
	if (stops < 0)
		S->staged = false;
	diag_mute(false);
	if (stops < 0) {
		S->skip = false;
		stops = search_widths(S, MSCCL_MAX_COUNT - 1, false, false, false, out);
		S->skip = true;
	}
	return stops;
}

static int lower_checked(Arena *, const Sched *, const Layout *, const MscclBound *,
                         const BuildOpts *, MProg *, MscclStats *);

int
msccl_lower_counted(Arena *a, const Sched *sched, const BuildOpts *o, MProg *out,
                    MscclStats *stats)
{
	MscclStats none;
	stats = stats ? stats : &none;
	memset(stats, 0, sizeof *stats);
	if (strlen(sched->name) > MSCCL_MAX_VALUE) {
		error_at(sched->loc, "'%.20s...' cannot be written for MSCCL: its name is %zu bytes, "
		         "and the executor's parser holds attribute values of at most %d bytes (a "
		         "longer name overflows its buffer)", sched->name, strlen(sched->name),
		         MSCCL_MAX_VALUE);
		return -1;
	}
	if (sched->nrank > MSCCL_MAX_GPUS) {
		error_at(sched->loc, "'%s' has %d ranks: MSCCL programs here have at most %d "
		         "(ngpus; the symbolic check's limit)", sched->name, sched->nrank, MSCCL_MAX_GPUS);
		return -1;
	}
	Layout lay;
	layout_build(a, sched, &lay);
	/* before expanding or building any width: what can never fit is refused
	 * in a pass over the messages (to_msccl_bound.c) */
	MscclBound bound;
	msccl_bound_build(sched, &lay, &bound);
	int rc = msccl_refuse_unfit(sched, &bound, o) != 0 ? -1
	         : lower_checked(a, sched, &lay, &bound, o, out, stats);
	msccl_bound_free(&bound);
	return rc;
}

int
msccl_lower(Arena *a, const Sched *sched, const BuildOpts *o, MProg *out)
{
	return msccl_lower_counted(a, sched, o, out, NULL);
}

/* msccl_lower past the bound: the width searches.
 *
 * Rule 14 at large sizes: the executor sends a step as calls of
 * maxAllowedCount chunks, 1 when chunks are large, and a Simple connection
 * holds 2 calls (LL 8). A step of several chunks to a peer that sends to
 * this tb too can then fill the FIFO halfway through. If the first
 * search's program stops chunk by chunk, the same search with tbs that
 * only send or only receive (an exchange streams both ways; twice the
 * tbs), then with sending steps of 2 chunks, then 1 (more steps, maybe
 * more channels), then with each exchange's higher rank receiving first
 * (its steps mirror its peer's: interleave()) must pass it. The mirror
 * comes last so that every program one of the others fits stays as it
 * was.
 *
 * The estimate: where two ranks send each other, in one round, runs of
 * more chunks than a connection holds calls (the bound's exchange_run),
 * the first search's paired tbs both send first and its program stops
 * chunk by chunk; it is then not built at all, the second search comes
 * first, and only if that finds nothing does the first search run after
 * all (its program, or its error). So a torus SP builds one program, not
 * the first search's widths and then the second's. With --channels there
 * is no width to search: the first search's two attempts, and their
 * error, come first as they always did. */
static int
lower_checked(Arena *a, const Sched *sched, const Layout *layp, const MscclBound *bound,
              const BuildOpts *o, MProg *out, MscclStats *stats)
{
	Layout lay = *layp;
	Search S = {a, sched, sched->base ? sched_expand(a, sched) : sched, &lay, bound, o, true,
	            stats, false};
	S.staged = staging_helps(S.s) && msccl_bound_staging_gain(bound) >= STAGING_FIRST_GAIN;
	int exchange = bound->exchange_run[o->instances > 1];
	bool stops_likely = o->channels <= 0 && exchange > msccl_capacity(build_proto(o));
	int stops = stops_likely ? 1 : first_search(&S, out);
	stats->staged = S.staged;
	if (stops <= 0)
		return stops;
	diag_mute(true);
	bool safe = false;
	for (int m = 3; !safe && m >= 0; m--) {
		MProg other;
		bool unpaired = m == 3, mirror = m == 0;
		if (search_widths(&S, unpaired || mirror ? MSCCL_MAX_COUNT - 1 : m, unpaired, mirror,
		                  true, &other) == 0) {
			*out = other;
			safe = true;
		}
	}
	stats->staged = S.staged;
	diag_mute(false);
	if (safe)
		return 0;
	if (stops_likely && (stops = first_search(&S, out)) <= 0) {
		stats->staged = S.staged; /* first_search leaves it as the program found */
		return stops;             /* the estimate was wrong */
	}
	int largest = 0; /* for the error: the long program's longest sending step */
	for (int g = 0; g < out->ngpus; g++)
		for (int t = 0; t < out->gpu[g].ntb; t++)
			for (int k = 0; k < out->gpu[g].tb[t].nstep; k++)
				if (mtype_sends(out->gpu[g].tb[t].step[k].type) &&
				    out->gpu[g].tb[t].step[k].cnt > largest)
					largest = out->gpu[g].tb[t].step[k].cnt;
	error_at(sched->loc, "'%s' does not fit MSCCL's limits without a deadlock at large "
	         "sizes: its sending steps of up to %d chunks stop when the executor moves them "
	         "a chunk per call (rule 14: a connection holds %d calls), and with tbs that "
	         "only send or only receive, steps of 1 or 2 chunks, or exchanges received "
	         "first on one side, it exceeds the limits or still stops at every width",
	         sched->name, largest, msccl_capacity(out->proto));
	return -1;
}

/* The executor reads no root: a broadcast or reduce file is for the root
 * it was built for, and says so. */
static void
root_comment(const Sched *s, FILE *f)
{
	fprintf(f, "  <!-- %s: a %s with root %d. The executor passes no root to the program: call "
	        "it with root=%d only. -->\n", s->name, coll_kind_name[s->kind], s->root, s->root);
}

/* MSCCL cannot rewire a fabric: the file is the schedule as it runs on the
 * circuits of each round, and says where the switch is rewired. */
static void
reconfig_comment(const Sched *s, FILE *f)
{
	fprintf(f, "  <!-- %s on an optical ring: the circuit switch is rewired before round", s->name);
	for (int i = 0, k = 0; i < s->nphase; i++)
		if (s->phase[i].reconfig)
			fprintf(f, "%s %d", k++ ? "," : "", s->phase[i].round + 1);
	fprintf(f, " of %d (%d reconfigurations); every rank waits there. MSCCL cannot rewire a "
	           "fabric: this is the schedule as it runs on the circuits of each round. -->\n",
	        s->nround, sched_nreconfig(s));
}

/* What the backend chose, on o->notes: channels, instances and protocol,
 * each given by an option or chosen (the width search), and the shape. */
static void
say_choice(const Sched *s, const MProg *p, const BuildOpts *o, const MscclStats *st)
{
	int inst = o->instances > 0 ? o->instances : 1, tbs = 0, steps = 0;
	for (int g = 0; g < p->ngpus; g++) {
		int n = 0;
		for (int t = 0; t < p->gpu[g].ntb; t++)
			n += p->gpu[g].tb[t].nstep;
		tbs = p->gpu[g].ntb > tbs ? p->gpu[g].ntb : tbs;
		steps = n > steps ? n : steps;
	}
	fprintf(o->notes, "collc: build: note: '%s' for MSCCL: %d channel%s (%d per instance, %s), "
	        "%d instance%s (%s), protocol %s (%s)%s; at most %d thread block%s and %d step%s a "
	        "rank\n", s->name, p->nchannels, p->nchannels == 1 ? "" : "s", p->nchannels / inst,
	        o->channels > 0 ? "--channels" : "the fewest that fit", inst, inst == 1 ? "" : "s",
	        o->instances > 0 ? "--instances" : "default", mproto_name[p->proto],
	        o->proto ? "--proto" : "default", st->staged ? ", staged through scratch" : "", tbs,
	        tbs == 1 ? "" : "s", steps, steps == 1 ? "" : "s");
}

static int
emit_msccl(const Prog *prog, const BuildOpts *o, FILE *f)
{
	const Sched *sel[2];
	int n = backend_select(prog, o, sel, 2);
	if (n == 0) {
		error_file("no schedule to write: the file builds none");
		return -1;
	}
	if (n > 1 && !o->collective) {
		/* one algorithm per file: the executor loads each file as one */
		n = 1;
	}
	Arena a = {0};
	MProg p;
	MscclStats st;
	int rc = msccl_lower_counted(&a, sel[0], o, &p, &st);
	if (rc == 0 && o->notes)
		say_choice(sel[0], &p, o, &st);
	bool rooted = sel[0]->kind == CK_BROADCAST || sel[0]->kind == CK_REDUCE;
	if (rc == 0 && (sched_nreconfig(sel[0]) > 0 || rooted)) {
		/* the comment goes first inside <algo>, which stays the file's start */
		MemOut m;
		rc = write_xml(&p, memout_open(&m));
		memout_close(&m);
		const char *xml = m.buf, *nl = rc == 0 ? memchr(xml, '\n', m.len) : NULL;
		if (nl) {
			fwrite(xml, 1, (size_t)(nl + 1 - xml), f);
			if (rooted)
				root_comment(sel[0], f);
			if (sched_nreconfig(sel[0]) > 0)
				reconfig_comment(sel[0], f);
			fwrite(nl + 1, 1, m.len - (size_t)(nl + 1 - xml), f);
		}
		free(m.buf);
	} else if (rc == 0) {
		rc = write_xml(&p, f);
	}
	arena_free(&a);
	return rc;
}

const Backend msccl_backend = {"msccl", "MSCCL XML for the executor (docs/msccl.md)", ".xml",
                               emit_msccl};
