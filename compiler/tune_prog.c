/*
 * tune_prog.c: tune's ranking by the MSCCL program. Needs a verified
 * candidate schedule, a size and what the search may vary (ProgSearch).
 * Establishes the fastest program of the schedule at that size that fits
 * MSCCL's limits, as the executor model times it (backends/msccl_exec.c,
 * docs/sim.md 7, flow mode unless --mode packet), with its protocol,
 * instances and channels; or that none fits.
 *
 * Why a search: the schedule's simulated time is not the program's. The
 * backend alone builds the fewest channels that fit; on the 2 x 8 cluster
 * halving-doubling's program at 256 MiB reaches 284 GB/s on one channel
 * and 482 on two, and Simple beats LL128 there although NCCL's model
 * (tune's protocol pick) prefers LL128. The search, per size:
 *   1. every protocol ps allows, at the instances of tune's model (fewer
 *      where none fits), on the fewest channels that fit;
 *   2. the fastest of those with 2, 4, 8, ... channels per instance above
 *      the fewest, while a doubling is faster (the executor's 32 channels
 *      at most).
 * A program does not depend on the size (the executor's loop and slices
 * do), so each (schedule form, protocol, instances, channels) is lowered
 * once and kept (ProgCache); only the simulation runs per size.
 */
#include <stdlib.h>
#include <string.h>

#include "tune_prog.h"
#include "backend.h"
#include "msccl_program.h"
#include "msccl_to_sim.h"

/* One lowering: a key and configuration, its program or that it failed. */
typedef struct ProgEntry {
	const char *key;
	int proto, instances, channels;
	bool fits;
	MProg p;
	double t_lo, t_hi;  /* its times at ITER_LO and ITER_HI iterations (0: not yet run) */
} ProgEntry;

struct ProgCache {
	Arena arena;        /* the keys and programs */
	ProgEntry *e;
	int n, cap;
	long lowered, simulated;
};

ProgCache *
prog_cache_new(void)
{
	return xcalloc(1, sizeof(ProgCache));
}

void
prog_cache_free(ProgCache *c)
{
	if (!c)
		return;
	arena_free(&c->arena);
	free(c->e);
	free(c);
}

void
prog_cache_counts(const ProgCache *c, long *lowered, long *simulated)
{
	*lowered = c->lowered;
	*simulated = c->simulated;
}

/* The program of s in a configuration, lowered on first use (quietly: a
 * configuration that does not fit is a candidate left out, not an error). */
static ProgEntry *
lowered(Diag *dg, ProgCache *c, const Sched *s, const char *key, int proto, int inst, int ch)
{
	for (int i = 0; i < c->n; i++) {
		ProgEntry *e = &c->e[i];
		if (e->proto == proto && e->instances == inst && e->channels == ch &&
		    strcmp(e->key, key) == 0)
			return e;
	}
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 32;
		c->e = xrealloc(c->e, (size_t)c->cap * sizeof *c->e);
	}
	ProgEntry *e = &c->e[c->n++];
	*e = (ProgEntry){.key = arena_strdup(&c->arena, key), .proto = proto, .instances = inst,
	                 .channels = ch};
	BuildOpts o = {.collective = s->name, .proto = mproto_name[proto], .instances = inst,
	               .channels = ch};
	diag_mute(dg, true);
	e->fits = msccl_lower(dg, &c->arena, s, &o, &e->p) == 0;
	diag_mute(dg, false);
	c->lowered++;
	return e;
}

/* The program's time at `size` in the executor model; < 0 if it cannot run
 * there (a deadlock under the slots, more ops than the model takes). */
static double
exec_run(Diag *dg, ProgCache *c, const Sched *s, const MProg *p, double size, const SimOpts *so,
         bool latencies)
{
	Arena a = {0};
	SimNet *net = NEW(&a, SimNet);
	SimOpts o = *so;
	o.sync = SIM_DEPS; /* a program is ordered by its dependencies */
	o.progress = NULL;
	SimResult r;
	char err[256];
	diag_mute(dg, true);
	bool ok = sim_from_msccl_exec(dg, &a, p, s->topo, s->rank_node, (int64_t)size, net) == 0;
	if (ok && !latencies)
		net->coll[0].wait_ps = NULL;
	ok = ok && sim_run(&a, net, 0, (int64_t)size, &o, &r, err, sizeof err) == 0;
	diag_mute(dg, false);
	arena_free(&a);
	c->simulated++;
	return ok ? r.time_s : -1;
}

/* Past ITER_HI iterations of the executor's loop, the time is taken as
 * affine in the iterations, through the times at ITER_LO and ITER_HI: each
 * iteration runs the same steps on the next piece of every chunk, and once
 * the pipeline of iterations is full each adds the same time (the busiest
 * thread block's or link's share). It fills within a few iterations:
 * halving-doubling's 2-channel program on the 2 x 8 cluster adds 135, 85,
 * 85, 128, 130, 130, ... us per iteration from the first, 130.5 from the
 * eighth to the 32nd; the line through 4 and 8 is 0.6 % short there. Two simulations per program then serve
 * every large size, where a full one would move up to 2^19 slices (a
 * 64-rank program at 1 GiB took minutes and gigabytes). test_tune_prog
 * checks the line against full simulations at 8 and 16 iterations. */
enum { ITER_LO = 4, ITER_HI = 8 };

static double
exec_time(Diag *dg, ProgCache *c, const Sched *s, ProgEntry *e, double size, const SimOpts *so)
{
	ExecShape sh = exec_shape(&e->p, (int64_t)size);
	if (sh.iters <= ITER_HI)
		return exec_run(dg, c, s, &e->p, size, so, true);
	double piece = (double)exec_proto(e->p.proto).chunk_data * e->p.nchunksperloop;
	if (e->t_lo == 0)
		e->t_lo = exec_run(dg, c, s, &e->p, ITER_LO * piece, so, true);
	if (e->t_hi == 0)
		e->t_hi = exec_run(dg, c, s, &e->p, ITER_HI * piece, so, true);
	if (e->t_lo < 0 || e->t_hi < 0)
		return -1;
	return e->t_hi + (e->t_hi - e->t_lo) / (ITER_HI - ITER_LO) * (size / piece - ITER_HI);
}

double
prog_time_unlatent(Diag *dg, ProgCache *c, const Sched *s, const char *key, double size,
                   const ProgSearch *ps, const ProgPick *pick)
{
	ProgEntry *e = lowered(dg, c, s, key, pick->proto, pick->instances, pick->channels);
	if (!e->fits || exec_shape(&e->p, (int64_t)size).iters > ITER_HI)
		return -1;
	return exec_run(dg, c, s, &e->p, size, &ps->opts, false);
}

/* One configuration at `size` into *best if it is faster: TRY_RAN, or
 * TRY_UNFIT (no program fits its limits), or TRY_STOPPED (the model cannot
 * run it at this size). */
enum { TRY_RAN, TRY_UNFIT, TRY_STOPPED };

static int
try_config(Diag *dg, ProgCache *c, const Sched *s, const char *key, double size,
           const ProgSearch *ps, ProgPick cfg, ProgPick *best)
{
	ProgEntry *e = lowered(dg, c, s, key, cfg.proto, cfg.instances, cfg.channels);
	if (!e->fits)
		return TRY_UNFIT;
	cfg.time_s = exec_time(dg, c, s, e, size, &ps->opts);
	cfg.nchannels = e->p.nchannels;
	if (cfg.time_s < 0)
		return TRY_STOPPED;
	if (best->time_s < 0 || cfg.time_s < best->time_s)
		*best = cfg;
	return TRY_RAN;
}

int
prog_fastest(Diag *dg, ProgCache *c, const Sched *s, const char *key, double size,
             const ProgSearch *ps, ProgPick *out, char *why, size_t whylen)
{
	ProgPick best = {.time_s = -1};
	/* the instances of tune's model, fewer only where those fit nowhere
	 * (a program of 8 instances is 8 times the simulation: trying 1 too
	 * tripled tune's time on 64 ranks at 1 GiB) */
	int inst = ps->instances > 0 ? ps->instances : ps->inst_hint > 1 ? ps->inst_hint : 1;
	for (; best.time_s < 0 && inst >= 1; inst = ps->instances > 0 ? 0 : inst / 2) {
		/* the limits hardly depend on the protocol, and a lowering that
		 * fails has tried every width (seconds on 64 ranks): the first
		 * protocol unfit, the others are not tried at these instances */
		bool unfit = false;
		for (int p = 0; !unfit && p < NPROTO; p++)
			if (ps->protos >> p & 1)
				unfit = try_config(dg, c, s, key, size, ps,
				                   (ProgPick){.proto = p, .instances = inst,
				                              .channels = ps->channels}, &best) == TRY_UNFIT;
	}
	if (best.time_s < 0) {
		snprintf(why, whylen, "no program of it fits MSCCL's limits and runs in the executor "
		         "model (collc build --target msccl says why)");
		return 1;
	}
	/* more channels per instance while a doubling is faster: the tbs of a
	 * connection's chunks run side by side */
	if (ps->channels <= 0) {
		int per = best.nchannels / best.instances;
		for (int ch = 2 * (per > 0 ? per : 1); ch * best.instances <= MSCCL_MAX_CHANNELS; ch *= 2) {
			double before = best.time_s;
			ProgPick cfg = best;
			cfg.channels = ch;
			if (try_config(dg, c, s, key, size, ps, cfg, &best) != TRY_RAN || best.time_s >= before)
				break;
		}
	}
	*out = best;
	return 0;
}
