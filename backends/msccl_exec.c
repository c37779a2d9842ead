/*
 * msccl_exec.c: the executor model (docs/sim.md 7): an MSCCL program, at
 * one size, as msccl-executor-nccl runs it, lowered to the simulator's
 * input so that flow (or packet) mode shares the links.
 *
 * Needs: a program that passed msccl_read (rules 2-13 and 16: one sending
 * and one receiving tb per connection and channel, dependencies inside the
 * rank), a topology and each rank's node. Establishes: one SimMsg per
 * slice operation ("op") of every thread block, in the executor's order
 * (loop iteration, step, primitive call, slice); an op that sends is a
 * message of its slice's wire bytes to the tb's send peer on the route a
 * .coll collective's message takes by default (the widest path, then the
 * fewest hops), any other op a message of no bytes and no
 * hop (it completes as soon as it may start). Each op waits for
 *   - the op before it in its tb to have left (a tb runs its steps in
 *     order; a send is done for its tb when its last byte has left, as a
 *     GPU's stores into the peer's buffer do not wait for the far end):
 *     the tb's queue, SimMsg.instance = the tb, SIM_QUEUE_INSTANCE,
 *   - the slice it receives (the k-th receiving op of a connection takes
 *     the k-th sending op's slice), on its arrival,
 *   - at the first op of a step with depid/deps: the last op of that step
 *     of tb depid in the same iteration (the flag the executor polls),
 *   - when it sends the k-th slice of its connection, k >= window: the
 *     receiving op of slice k - window (the slot it reuses is free only
 *     when that op is done: NCCL_STEPS slots, StepPerSlice per slice).
 * Latencies (SimColl.wait_ps; NCCL's ring model, src/graph/tuning.cc):
 * an op that waits on another rank (the slice it receives, the slot it
 * reuses) starts the protocol's per-step latency of that connection's
 * class after that wait ends (the flag's trip and poll, which LL folds
 * into its data lines; an op that also waits on its own rank's depid has
 * its remote waits as flag ops of their own: split_waits), less the
 * route's wire latency that the slice it receives has already paid
 * (NCCL's figure is end to end, the wire in it: counted once), and an
 * op that waits on nothing (a tb's first, without deps) the protocol's
 * base latency after the start (the call's fixed cost), so every op of
 * the program starts after it. The step overhead is
 * 0 (the kernel is launched once). Rounds are the longest chain of these
 * waits, messages sorted by round; a cycle is a deadlock under the slots'
 * flow control and is reported at a step of it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "to_sim.h"
#include "msccl_to_sim.h"

/* Constants of msccl-executor-nccl (docs/sim.md 7 cites each): NCCL_STEPS
 * (src/include/device.h), MSCCL_CHUNKSTEPS = NCCL_STEPS / 2 and
 * MSCCL_SLICESTEPS = NCCL_STEPS / 4 (src/include/msccl/msccl_struct.h), the
 * default buffers of src/init.cc: Simple 4 MiB; LL 8 lines x 512 threads x
 * NCCL_STEPS x 16 bytes; LL128 120 elements x 640 threads x NCCL_STEPS x 8
 * bytes. */
enum {
	NCCL_STEPS = 8,
	CHUNK_STEPS = NCCL_STEPS / 2,
	SLICE_STEPS = NCCL_STEPS / 4,
	SIMPLE_BUFF = 1 << 22,
	LL_BUFF = 8 * 512 * NCCL_STEPS * 16,
	LL128_BUFF = 120 * 640 * NCCL_STEPS * 8,
	MIN_SLICE_DIV = 32,  /* Simple: a slice is at least stepSize x StepPerSlice / 32 */
	SLICE_ALIGN = 64,    /* Simple: 16 elements of 4 bytes */
};

/* NCCL's latencies in ns (src/graph/tuning.cc at 5067397c,
 * ncclTunerConstantsDefaults, the Ring column of each protocol):
 * baseLatencies LL 6.6, LL128 14.0, Simple 8.4 us; hwLatencies NVLINK LL
 * 0.6, LL128 1.9, Simple 3.4 us, NET LL 2.7, LL128 4.0, Simple 14.0 us. */
enum {
	LL_BASE_NS = 6600, LL128_BASE_NS = 14000, SIMPLE_BASE_NS = 8400,
	LL_NVL_NS = 600, LL128_NVL_NS = 1900, SIMPLE_NVL_NS = 3400,
	LL_NET_NS = 2700, LL128_NET_NS = 4000, SIMPLE_NET_NS = 14000,
	PS_PER_NS = 1000,
};

ExecProto
exec_proto(MProto p)
{
	switch (p) {
	case MP_LL: /* a 16-byte line carries 8 bytes of data and 8 of flags */
		return (ExecProto){LL_BUFF / NCCL_STEPS, LL_BUFF / NCCL_STEPS / 2, 1, NCCL_STEPS, 2, 1,
		                   (int64_t)LL_BASE_NS * PS_PER_NS,
		                   {(int64_t)LL_NVL_NS * PS_PER_NS, (int64_t)LL_NET_NS * PS_PER_NS}};
	case MP_LL128: /* a 128-byte line carries 120 bytes of data */
		return (ExecProto){LL128_BUFF / NCCL_STEPS, LL128_BUFF / NCCL_STEPS / 16 * 15, 1,
		                   NCCL_STEPS, 16, 15, (int64_t)LL128_BASE_NS * PS_PER_NS,
		                   {(int64_t)LL128_NVL_NS * PS_PER_NS, (int64_t)LL128_NET_NS * PS_PER_NS}};
	case MP_SIMPLE:
	case NPROTO:
		break;
	}
	return (ExecProto){SIMPLE_BUFF / NCCL_STEPS, (int64_t)SIMPLE_BUFF / NCCL_STEPS * CHUNK_STEPS,
	                   CHUNK_STEPS / SLICE_STEPS, NCCL_STEPS / SLICE_STEPS, 1, 1,
	                   (int64_t)SIMPLE_BASE_NS * PS_PER_NS,
	                   {(int64_t)SIMPLE_NVL_NS * PS_PER_NS, (int64_t)SIMPLE_NET_NS * PS_PER_NS}};
}

int
exec_hw_class(const Topo *t, int a, int b)
{
	switch (t->kind) {
	case TK_RAILS:
	case TK_XGMI_RAILS:
	case TK_LEAF_SPINE_BOXES:
	case TK_TORUS_BOXES: /* GPUs first, box-major: the last size is the GPUs' */
		return a / t->size[t->ndim - 1] == b / t->size[t->ndim - 1] ? EXEC_NVLINK : EXEC_NET;
	case TK_GRAPH:
	case TK_FULL:
		return EXEC_NVLINK;
	default:
		return EXEC_NET;
	}
}

ExecShape
exec_shape(const MProg *p, int64_t bytes)
{
	ExecProto x = exec_proto(p->proto);
	ExecShape s = {.chunk = (bytes + p->nchunksperloop - 1) / p->nchunksperloop};
	if (s.chunk < 1)
		s.chunk = 1;
	s.iters = (s.chunk + x.chunk_data - 1) / x.chunk_data;
	int64_t mac = x.chunk_data / s.chunk;
	s.max_count = mac < 1 ? 1 : mac >= MSCCL_MAX_COUNT ? MSCCL_MAX_COUNT - 1 : (int)mac;
	return s;
}

typedef struct Exec {
	Diag *dg;
	const MProg *p;
	ExecProto x;
	ExecShape sh;
	int64_t bytes;
	MIndex ix;
	int *step_base;    /* per global tb: its first entry in step_off */
	int *step_off;     /* per (tb, step): its first op within an iteration; then the total */
	int64_t *op_base;  /* per global tb: its first op; op_base[ntb] = every op */
	int nop;           /* every op: the slice ops, then the flag ops (split_waits) */
	int nslice;        /* the slice ops, 0 .. nslice - 1 */
	int *tb_of;        /* per op: its global tb */
	int *step_of;      /* per op: its step */
	int64_t *data;     /* per op: the bytes of data its slice moves */
	int *from;         /* per op: the sending op whose slice it receives, or -1 */
	int *slot;         /* per op: the receiving op that frees its slot, or -1 */
	int *dep;          /* per op: up to 4 ops it waits for (-1: none) */
} Exec;

static int
step_ops(const Exec *e, const MStep *st)
{
	if (st->type == MT_NOP)
		return 1;
	int calls = (st->cnt + e->sh.max_count - 1) / e->sh.max_count;
	return calls * e->x.slices;
}

/* The bytes of data of slice k of a step in iteration it. */
static int64_t
slice_data(const Exec *e, const MStep *st, int64_t it, int k)
{
	if (st->type == MT_NOP)
		return 0;
	int64_t off = it * e->x.chunk_data;
	int64_t nelem = e->sh.chunk - off < e->x.chunk_data ? e->sh.chunk - off : e->x.chunk_data;
	int call = k / e->x.slices, j = k % e->x.slices;
	int count = st->cnt - call * e->sh.max_count;
	count = count < e->sh.max_count ? count : e->sh.max_count;
	int64_t callbytes = nelem * count;
	if (e->x.slices == 1)
		return callbytes;
	/* Simple's genericOp: SlicePerChunk slices of about callbytes / slices,
	 * whole 16-element groups, at least a 32nd of a full slice */
	int64_t slice = (callbytes + (int64_t)e->x.slices * SLICE_ALIGN - 1) /
	                ((int64_t)e->x.slices * SLICE_ALIGN) * SLICE_ALIGN;
	int64_t least = e->x.slot_bytes * SLICE_STEPS / MIN_SLICE_DIV;
	slice = slice > least ? slice : least;
	int64_t left = callbytes - j * slice;
	return left <= 0 ? 0 : left < slice ? left : slice;
}

/* Each tb's ops within an iteration, and every op's place. */
static int
lay_out(Exec *e)
{
	const MProg *p = e->p;
	int ntb = e->ix.ntb;
	e->step_base = xcalloc((size_t)ntb + 1, sizeof *e->step_base);
	int nsteps = 0;
	for (int g = 0; g < p->ngpu; g++)
		for (int t = 0; t < p->gpu[g].ntb; t++) {
			e->step_base[e->ix.base[g] + t] = nsteps;
			nsteps += p->gpu[g].tb[t].nstep + 1;
		}
	e->step_off = xcalloc((size_t)nsteps + 1, sizeof *e->step_off);
	e->op_base = xcalloc((size_t)ntb + 1, sizeof *e->op_base);
	int64_t total = 0;
	for (int g = 0; g < p->ngpu; g++)
		for (int t = 0; t < p->gpu[g].ntb; t++) {
			const MTb *tb = &p->gpu[g].tb[t];
			int *off = e->step_off + e->step_base[e->ix.base[g] + t];
			for (int s = 0; s < tb->nstep; s++)
				off[s + 1] = off[s] + step_ops(e, &tb->step[s]);
			e->op_base[e->ix.base[g] + t] = total;
			total += (int64_t)off[tb->nstep] * e->sh.iters;
			if (total > SIMXML_EXEC_MAX_OPS) {
				error_at(e->dg, (Loc){p->line, 1}, "at %lld bytes the program's thread blocks run "
				         "more than %d slice operations in the executor model (%lld loop "
				         "iterations of %lld-byte chunks); the simulator refuses it: try a "
				         "smaller size or --model steps", (long long)e->bytes,
				         SIMXML_EXEC_MAX_OPS, (long long)e->sh.iters, (long long)e->sh.chunk);
				return -1;
			}
		}
	e->op_base[ntb] = total;
	e->nop = (int)total;
	return 0;
}

/* Every op's tb, step and data, in each tb's order. */
static void
fill_ops(Exec *e)
{
	const MProg *p = e->p;
	size_t n = (size_t)e->nop + 1;
	e->tb_of = xmalloc(n * sizeof *e->tb_of);
	e->step_of = xmalloc(n * sizeof *e->step_of);
	e->data = xmalloc(n * sizeof *e->data);
	for (int g = 0; g < p->ngpu; g++)
		for (int t = 0; t < p->gpu[g].ntb; t++) {
			const MTb *tb = &p->gpu[g].tb[t];
			int id = e->ix.base[g] + t, o = (int)e->op_base[id];
			for (int64_t it = 0; it < e->sh.iters; it++)
				for (int s = 0; s < tb->nstep; s++)
					for (int k = 0, nk = step_ops(e, &tb->step[s]); k < nk; k++, o++) {
						e->tb_of[o] = id;
						e->step_of[o] = s;
						e->data[o] = slice_data(e, &tb->step[s], it, k);
					}
		}
}

static const MTb *
tb_at(const Exec *e, int id)
{
	int g = e->ix.rank[id];
	return &e->p->gpu[g].tb[id - e->ix.base[g]];
}

static const MStep *
step_at(const Exec *e, int o)
{
	return &tb_at(e, e->tb_of[o])->step[e->step_of[o]];
}

/* The ops of tb id whose step sends (or receives), in order, into out;
 * their count. */
static int
conn_ops(const Exec *e, int id, bool sends, int *out)
{
	int n = 0;
	for (int64_t o = e->op_base[id]; o < e->op_base[id + 1]; o++) {
		MType y = step_at(e, (int)o)->type;
		if (sends ? mtype_sends(y) : mtype_recvs(y))
			out[n++] = (int)o;
	}
	return n;
}

/* Sends and receives matched in order on each connection; the slots. */
static int
match(Exec *e)
{
	size_t n = (size_t)e->nop + 1;
	e->from = xmalloc(n * sizeof *e->from);
	e->slot = xmalloc(n * sizeof *e->slot);
	for (int o = 0; o < e->nop; o++)
		e->from[o] = e->slot[o] = -1;
	int *s = xmalloc(n * sizeof *s), *r = xmalloc(n * sizeof *r);
	int rc = 0;
	for (int id = 0; id < e->ix.ntb && rc == 0; id++) {
		const MTb *tb = tb_at(e, id);
		int ns = conn_ops(e, id, true, s);
		if (ns == 0)
			continue;
		int peer = e->ix.receiver[id];
		int nr = peer >= 0 ? conn_ops(e, peer, false, r) : 0;
		if (nr != ns) {
			error_at(e->dg, (Loc){tb->line, 1}, "this tb sends %d slices to rank %d on channel %d, "
			         "which receives %d there in the executor model", ns, tb->send, tb->chan,
			         nr);
			rc = -1;
			break;
		}
		for (int k = 0; k < ns; k++) {
			e->from[r[k]] = s[k];
			if (k >= e->x.window)
				e->slot[s[k]] = r[k - e->x.window];
		}
	}
	free(s), free(r);
	return rc;
}

/* Each op's waits: the op before in its tb, the slice it receives, its
 * step's depid/deps, its slot. */
static void
wire_deps(Exec *e)
{
	e->dep = xmalloc(((size_t)e->nop * 4 + 1) * sizeof *e->dep);
	for (int o = 0; o < e->nop; o++) {
		int *d = e->dep + 4 * (size_t)o, id = e->tb_of[o];
		d[0] = o > e->op_base[id] ? o - 1 : -1;
		d[1] = e->from[o];
		d[2] = -1;
		d[3] = e->slot[o];
		const MStep *st = step_at(e, o);
		const int *off = e->step_off + e->step_base[id];
		int64_t rel = o - e->op_base[id], per = off[tb_at(e, id)->nstep];
		if (st->depid < 0 || st->deps < 0 || rel % per != off[e->step_of[o]])
			continue;
		int g = e->ix.rank[id], other = e->ix.base[g] + st->depid;
		const int *ooff = e->step_off + e->step_base[other];
		int64_t it = rel / per;
		d[2] = (int)(e->op_base[other] + it * ooff[tb_at(e, other)->nstep] + ooff[st->deps + 1] -
		             1);
	}
}

/* An op that waits both on another rank (the slice it receives, the slot
 * it reuses) and on its own (depid/deps) pays the step's latency after the
 * remote wait, not after whichever ends last: the executor polls the
 * connection's flag, set when the slice arrived (or the slot was freed), so
 * a tb that reaches the step late, its depid's step having ended later,
 * finds it set; a flag of its own rank costs nothing in the model. The
 * engines add one latency to a message, after all its waits, so each
 * remote wait of such an op moves to a flag op of its own (no bytes, no
 * hop) with that wait's latency, in the tb's queue just before it; the op
 * then waits for the flags and its depid with none. On the NVSwitch box
 * at 4 MiB, packing's 7 receives that reduce into a chunk, chained by
 * depid, each paid Simple's step latency after the one before: 45.91 us,
 * against 29.11 for the schedule as the executor runs it (docs/sim.md 7). */
static void
split_waits(Exec *e)
{
	int nf = 0;
	for (int o = 0; o < e->nop; o++) {
		const int *d = e->dep + 4 * (size_t)o;
		if (d[2] >= 0)
			nf += (d[1] >= 0) + (d[3] >= 0);
	}
	e->nslice = e->nop;
	if (nf == 0)
		return;
	size_t n = (size_t)e->nop + (size_t)nf + 1;
	e->tb_of = xrealloc(e->tb_of, n * sizeof *e->tb_of);
	e->step_of = xrealloc(e->step_of, n * sizeof *e->step_of);
	e->data = xrealloc(e->data, n * sizeof *e->data);
	e->from = xrealloc(e->from, n * sizeof *e->from);
	e->slot = xrealloc(e->slot, n * sizeof *e->slot);
	e->dep = xrealloc(e->dep, 4 * n * sizeof *e->dep);
	int f = e->nop;
	for (int o = 0; o < e->nslice; o++) {
		int *d = e->dep + 4 * (size_t)o;
		if (d[2] < 0 || (d[1] < 0 && d[3] < 0))
			continue;
		for (int k = 1; k < 4; k += 2) {
			if (d[k] < 0)
				continue;
			int *fd = e->dep + 4 * (size_t)f;
			fd[0] = d[0], fd[1] = fd[2] = fd[3] = -1;
			fd[k] = d[k];
			e->tb_of[f] = e->tb_of[o], e->step_of[f] = e->step_of[o];
			e->data[f] = 0, e->from[f] = e->slot[f] = -1;
			d[0] = f++;
			d[k] = -1;
		}
	}
	e->nop = f;
}

/* Levels by Kahn's order (each op one past its latest wait); -1 after
 * reporting a cycle (a deadlock under flow control). */
static int
levels(Exec *e, int *level, int *nlevel)
{
	size_t n = (size_t)e->nop + 1;
	int *indeg = xcalloc(n, sizeof *indeg), *off = xcalloc(n + 1, sizeof *off);
	for (int o = 0; o < e->nop; o++)
		for (int k = 0; k < 4; k++)
			if (e->dep[4 * (size_t)o + k] >= 0) {
				indeg[o]++;
				off[e->dep[4 * (size_t)o + k] + 1]++;
			}
	for (int o = 0; o < e->nop; o++)
		off[o + 1] += off[o];
	int *out = xmalloc(((size_t)off[e->nop] + 1) * sizeof *out), *fill = xcalloc(n, sizeof *fill);
	for (int o = 0; o < e->nop; o++)
		for (int k = 0; k < 4; k++) {
			int d = e->dep[4 * (size_t)o + k];
			if (d >= 0)
				out[off[d] + fill[d]++] = o;
		}
	int *queue = xmalloc(n * sizeof *queue), head = 0, tail = 0;
	for (int o = 0; o < e->nop; o++) {
		level[o] = 0;
		if (indeg[o] == 0)
			queue[tail++] = o;
	}
	*nlevel = 0;
	while (head < tail) {
		int o = queue[head++];
		if (level[o] + 1 > *nlevel)
			*nlevel = level[o] + 1;
		for (int i = off[o]; i < off[o + 1]; i++) {
			int m = out[i];
			if (level[o] + 1 > level[m])
				level[m] = level[o] + 1;
			if (--indeg[m] == 0)
				queue[tail++] = m;
		}
	}
	int rc = 0;
	for (int o = 0; o < e->nop && tail < e->nop; o++)
		if (indeg[o] > 0) {
			const MTb *tb = tb_at(e, e->tb_of[o]);
			error_at(e->dg, (Loc){step_at(e, o)->line, 1}, "in the executor model this step of "
			         "rank %d's tb %d never runs: its thread blocks wait on each other through "
			         "depid/deps and the %d slices a connection holds (%s): the program "
			         "deadlocks", e->ix.rank[e->tb_of[o]], tb->id, e->x.window,
			         mproto_name[e->p->proto]);
			rc = -1;
			break;
		}
	free(indeg), free(off), free(out), free(fill), free(queue);
	return rc;
}

static int64_t
wire_bytes(const Exec *e, int64_t data)
{
	return (data * e->x.wire_num + e->x.wire_den - 1) / e->x.wire_den;
}

/* The wire latency the simulator charges a message from node a to node b
 * on its route (each hop's link and router latency, as the engines add). */
static int64_t
route_lat_ps(Routes *routes, const Topo *t, int a, int b)
{
	const int *lk;
	int h = route_get(routes, a, b, &lk);
	double s = 0;
	for (int i = 0; i < h; i++)
		s += t->link[lk[i]].latency + t->net.router_latency;
	return h > 0 ? llround(s * 1e12) : 0;
}

/* Whether op o is a slice op whose step sends (a flag op never does). */
static bool
op_sends(const Exec *e, int o)
{
	return o < e->nslice && mtype_sends(step_at(e, o)->type);
}

/* What op o waits beyond what it waits for (SimColl.wait_ps): a step's
 * latency across each connection it waits on, or the base latency when it
 * waits on nothing. NCCL's hwLatencies are a step's whole fixed cost,
 * measured end to end, the wire's latency in it (docs/sim.md 7), while the
 * slice the op receives arrives after its route's latency already: that
 * wait adds only what the step's latency has beyond the route's. The
 * slot's flag has no wire in the model, so that wait adds all of it. One
 * value serves both waits (the engines add it after the later one): an op
 * that receives takes the receive's, which binds unless the receiver has
 * fallen a window behind, where the links' time dominates. A wait on the
 * op's own rank (depid) adds nothing: split_waits gives such an op's
 * remote waits flag ops of their own, and the op itself none. */
static int64_t
op_wait(const Exec *e, const Topo *t, Routes *routes, const int *rank_node, int o)
{
	const int *d = e->dep + 4 * (size_t)o;
	const MTb *tb = tb_at(e, e->tb_of[o]);
	int g = e->ix.rank[e->tb_of[o]];
	if (d[0] < 0 && d[1] < 0 && d[2] < 0 && d[3] < 0)
		return e->x.base_ps;
	if (d[1] >= 0 && tb->recv >= 0) {
		int a = rank_node[tb->recv], b = rank_node[g];
		int64_t w = e->x.step_ps[exec_hw_class(t, a, b)] - route_lat_ps(routes, t, a, b);
		return w > 0 ? w : 0;
	}
	if (d[3] >= 0 && tb->send >= 0)
		return e->x.step_ps[exec_hw_class(t, rank_node[g], rank_node[tb->send])];
	return 0;
}

/* The collective: messages by level, routes, dependencies. */
static int
emit(Exec *e, Arena *a, const Topo *t, const int *rank_node, const int *level, int nlevel,
     SimColl *sc)
{
	const MProg *p = e->p;
	size_t n = (size_t)e->nop + 1;
	int *cnt = xcalloc((size_t)nlevel + 1, sizeof *cnt), *order = xmalloc(n * sizeof *order);
	int *pos = xmalloc(n * sizeof *pos);
	for (int o = 0; o < e->nop; o++)
		cnt[level[o] + 1]++;
	for (int l = 0; l < nlevel; l++)
		cnt[l + 1] += cnt[l];
	for (int o = 0; o < e->nop; o++) {
		pos[o] = cnt[level[o]]++;
		order[pos[o]] = o;
	}
	Routes routes;
	routes_init(&routes, t, ROUTE_FASTEST); /* a .coll collective's default */
	long nhop = 0, ndep = 0;
	int rc = 0;
	for (int o = 0; o < e->nop && rc == 0; o++) {
		const MTb *tb = tb_at(e, e->tb_of[o]);
		for (int k = 1; k < 4; k++)
			ndep += e->dep[4 * (size_t)o + k] >= 0;
		if (!op_sends(e, o))
			continue;
		int g = e->ix.rank[e->tb_of[o]];
		/* the route's own length: a widest path can be longer than the
		 * fewest hops, and the hops below are sized by it */
		const int *lk;
		int h = route_get(&routes, rank_node[g], rank_node[tb->send], &lk);
		if (h < 0) {
			error_at(e->dg, (Loc){step_at(e, o)->line, 1}, "rank %d's node cannot reach rank %d's on %s",
			         g, tb->send, t->name);
			rc = -1;
		}
		nhop += h;
	}
	*sc = (SimColl){.name = p->name ? p->name : "xml", .kind = p->coll_name,
	                .algorithm = "msccl-executor", .nrank = p->ngpus, .nround = nlevel,
	                .nmsg = e->nop, .has_deps = true, .queue = SIM_QUEUE_INSTANCE};
	sc->rank_node = arena_array(a, (size_t)p->ngpus + 1, sizeof *sc->rank_node);
	memcpy(sc->rank_node, rank_node, (size_t)p->ngpus * sizeof *rank_node);
	sc->msg = arena_array(a, n, sizeof *sc->msg);
	sc->hops = arena_array(a, (size_t)nhop + 1, sizeof *sc->hops);
	sc->deps = arena_array(a, (size_t)ndep + 1, sizeof *sc->deps);
	int64_t *wait = arena_array(a, n, sizeof *wait);
	sc->wait_ps = wait;
	long h = 0, d = 0;
	for (int k = 0; k < e->nop && rc == 0; k++) {
		int o = order[k], g = e->ix.rank[e->tb_of[o]];
		const MTb *tb = tb_at(e, e->tb_of[o]);
		SimMsg m = {.round = level[o], .src = g, .dst = g, .hop = (int)h, .dep = (int)d,
		            .num = 0, .den = 1};
		if (op_sends(e, o)) {
			const int *links;
			m.dst = tb->send;
			m.nhop = route_get(&routes, rank_node[g], rank_node[tb->send], &links);
			memcpy(sc->hops + h, links, (size_t)m.nhop * sizeof *links);
			h += m.nhop;
			m.num = wire_bytes(e, e->data[o]);
			m.den = e->bytes;
		}
		m.instance = e->tb_of[o]; /* the tb's queue orders it after the op before */
		for (int j = 1; j < 4; j++) {
			int w = e->dep[4 * (size_t)o + j];
			if (w >= 0)
				sc->deps[d++] = pos[w];
		}
		m.ndep = (int)(d - m.dep);
		sc->msg[k] = m;
		wait[k] = op_wait(e, t, &routes, rank_node, o);
	}
	/* a message is reduced where the op receiving it reduces */
	for (int o = 0; o < e->nop && rc == 0; o++) {
		MType y = step_at(e, o)->type;
		if (e->from[o] >= 0)
			sc->msg[pos[e->from[o]]].reduce = y == MT_RRS || y == MT_RRC || y == MT_RRCS;
	}
	routes_free(&routes);
	free(cnt), free(order), free(pos);
	return rc;
}

int
sim_from_msccl_exec(Diag *dg, Arena *a, const MProg *p, const Topo *t, const int *rank_node,
                    int64_t bytes, SimNet *out)
{
	memset(out, 0, sizeof *out);
	if (sim_net_of_topo(dg, a, t, out) != 0)
		return -1;
	out->step_ps = 0; /* one kernel launch: a slice costs its bytes and latency */
	Exec e = {.dg = dg, .p = p, .x = exec_proto(p->proto), .sh = exec_shape(p, bytes),
	          .bytes = bytes};
	msccl_index(p, &e.ix);
	int rc = lay_out(&e);
	int *level = NULL, nlevel = 0;
	if (rc == 0) {
		fill_ops(&e);
		rc = match(&e);
	}
	if (rc == 0) {
		wire_deps(&e);
		split_waits(&e);
		level = xmalloc(((size_t)e.nop + 1) * sizeof *level);
		rc = levels(&e, level, &nlevel);
	}
	SimColl *sc = arena_array(a, 1, sizeof *sc);
	if (rc == 0)
		rc = emit(&e, a, t, rank_node, level, nlevel, sc);
	if (rc == 0) {
		out->ncoll = 1;
		out->coll = sc;
	}
	free(level);
	free(e.step_base), free(e.step_off), free(e.op_base), free(e.tb_of), free(e.step_of);
	free(e.data), free(e.from), free(e.slot), free(e.dep);
	msccl_index_free(&e.ix);
	return rc;
}

/* The wire latency a message's route pays in the engines (each hop's link
 * and router latency; a fused message's middle hops side by side). */
static int64_t
msg_lat_ps(const SimNet *net, const SimColl *c, const SimMsg *m)
{
	int64_t s = 0;
	for (int j = 0; j < m->nhop; j++)
		if (!m->fused || j == 0 || j + 1 == m->nhop)
			s += net->link[c->hops[m->hop + j]].lat_ps + net->router_ps;
	return s;
}

/* A message's latency as the step that receives it pays it: the step's
 * latency of its connection's class, less the wire latency its route paid
 * (at least 0). */
static int64_t
recv_wait_ps(const SimNet *net, const SimColl *c, const SimMsg *d, const Topo *t,
             const ExecProto *x)
{
	int hw = exec_hw_class(t, c->rank_node[d->src], c->rank_node[d->dst]);
	int64_t w = x->step_ps[hw] - msg_lat_ps(net, c, d);
	return w > 0 ? w : 0;
}

/* The receives no message waits for: a rank's last receives end the run
 * a step's latency after their arrival, as a program's last receiving op
 * does (its flag polled), so each gets a message of no bytes and no hop
 * at its receiver that waits for it with that latency, in the last round.
 * Without them the schedule paid a step's latency fewer than its program
 * on every chain: h hops, h latencies in the program (test_exec_chain),
 * h - 1 here. */
static int
last_receives(Arena *a, const SimNet *net, SimColl *c, const Topo *t, const ExecProto *x,
              int64_t **wait)
{
	bool *waited = arena_array(a, (size_t)c->nmsg + 1, sizeof *waited);
	int ndep = 0, nlast = 0;
	for (int i = 0; i < c->nmsg; i++)
		for (int j = 0; j < c->msg[i].ndep; j++)
			waited[c->deps[c->msg[i].dep + j]] = true;
	for (int i = 0; i < c->nmsg; i++) {
		ndep = c->msg[i].dep + c->msg[i].ndep > ndep ? c->msg[i].dep + c->msg[i].ndep : ndep;
		nlast += !waited[i] && c->msg[i].nhop > 0 && recv_wait_ps(net, c, &c->msg[i], t, x) > 0;
	}
	if (nlast == 0)
		return 0;
	if (c->nmsg > INT32_MAX - nlast || ndep > INT32_MAX - nlast)
		return -1;
	int n = c->nmsg + nlast;
	SimMsg *msg = arena_array(a, (size_t)n, sizeof *msg);
	int *deps = arena_array(a, (size_t)ndep + (size_t)nlast, sizeof *deps);
	int64_t *w = arena_array(a, (size_t)n, sizeof *w);
	memcpy(msg, c->msg, (size_t)c->nmsg * sizeof *msg);
	memcpy(deps, c->deps, (size_t)ndep * sizeof *deps);
	memcpy(w, *wait, (size_t)c->nmsg * sizeof *w);
	int k = c->nmsg;
	for (int i = 0; i < c->nmsg; i++) {
		const SimMsg *d = &c->msg[i];
		int64_t lat = d->nhop > 0 && !waited[i] ? recv_wait_ps(net, c, d, t, x) : 0;
		if (lat <= 0)
			continue;
		/* the last round: the messages stay sorted by round */
		msg[k] = (SimMsg){.round = c->nround - 1, .src = d->dst, .dst = d->dst, .ndep = 1,
		                  .dep = ndep, .num = 0, .den = 1, .instance = d->instance};
		deps[ndep++] = i;
		w[k++] = lat;
	}
	c->msg = msg, c->deps = deps, c->nmsg = n;
	*wait = w;
	return 0;
}

int
exec_costs_on_sched(Arena *a, SimNet *net, const Topo *t, MProto pr)
{
	ExecProto x = exec_proto(pr);
	SimColl *c = &net->coll[0];
	if (net->ncoll != 1 || !c->has_deps || c->stream || !c->msg || c->nround < 1)
		return -1;
	int64_t *wait = arena_array(a, (size_t)c->nmsg + 1, sizeof *wait);
	for (int i = 0; i < c->nmsg; i++) {
		SimMsg *m = &c->msg[i];
		if (INT64_MAX / x.wire_den < m->den || INT64_MAX / x.wire_num < m->num)
			return -1;
		m->num *= x.wire_num; /* the protocol's wire bytes */
		m->den *= x.wire_den;
		wait[i] = m->ndep == 0 ? x.base_ps : 0;
		for (int j = 0; j < m->ndep; j++) {
			const SimMsg *d = &c->msg[c->deps[m->dep + j]];
			int64_t w = d->nhop > 0 ? recv_wait_ps(net, c, d, t, &x) : 0;
			wait[i] = w > wait[i] ? w : wait[i];
		}
	}
	if (last_receives(a, net, c, t, &x, &wait) != 0)
		return -1;
	c->wait_ps = wait;
	net->step_ps = 0; /* one kernel launch, as sim_from_msccl_exec */
	return 0;
}
