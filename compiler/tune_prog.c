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
 *   2. for each protocol that ran, 2, 4, 8, ... channels per instance
 *      above the fewest, while a doubling is faster (the executor's 32
 *      channels at most);
 *   3. for each protocol's fastest of step 2, twice its instances (with
 *      step 2's channels) while its chunks take more than one iteration of
 *      the executor's loop and the doubling is faster, up to
 *      PROG_MAX_INSTANCES; the fastest of all;
 *   4. that one with tbs that only send or only receive, and its channels
 *      as in step 2, if faster (split_tbs).
 * A program does not depend on the size (the executor's loop and slices
 * do), so each (schedule form, protocol, instances, channels, layout) is lowered
 * once and kept (ProgCache); only the simulation runs per size. A packing
 * none of whose programs fits is lowered with fewer segments, the most
 * that fit (msccl_lower_fit, backends/to_msccl_fit.c).
 */
#include <stdlib.h>
#include <string.h>

#include "tune_prog.h"
#include "driver.h"
#include "msccl_to_sim.h"
#include "to_msccl.h"

/* One lowering: a key and configuration, its program or that it failed. */
typedef struct ProgEntry {
	const char *key;
	int proto, instances, channels;
	bool split, fits, staged;
	MProg p;
	double t_lo, t_hi;  /* its times at ITER_LO and ITER_HI iterations (0: not yet run) */
} ProgEntry;

struct ProgCache {
	Arena arena;        /* the keys and programs */
	ProgEntry *e;
	int n, cap;
	long lowered, simulated;
	MscclFitCache *fit; /* packings' fits, paid once per collective */
};

ProgCache *
prog_cache_new(void)
{
	ProgCache *c = xcalloc(1, sizeof(ProgCache));
	c->fit = msccl_fit_cache_new();
	return c;
}

void
prog_cache_free(ProgCache *c)
{
	if (!c)
		return;
	msccl_fit_cache_free(c->fit); /* before the arena its schedules are in */
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
find(ProgCache *c, const char *key, int proto, int inst, int ch, bool split)
{
	for (int i = 0; i < c->n; i++) {
		ProgEntry *e = &c->e[i];
		if (e->proto == proto && e->instances == inst && e->channels == ch &&
		    e->split == split && strcmp(e->key, key) == 0)
			return e;
	}
	return NULL;
}

static ProgEntry *
lowered(Diag *dg, ProgCache *c, const Sched *s, const BuildOpts *base, const char *key, int proto,
        int inst, int ch, bool split)
{
	ProgEntry *hit = find(c, key, proto, inst, ch, split);
	if (hit)
		return hit;
	/* the lowering reads the protocol only for a connection's capacity
	 * (msccl_capacity: LL and LL128 alike), so a program lowered for the
	 * other protocol of the same capacity is this one but for its proto */
	ProgEntry *twin = NULL;
	for (int q = 0; q < NPROTO && !twin; q++)
		if (q != proto && msccl_capacity((MProto)q) == msccl_capacity((MProto)proto))
			twin = find(c, key, q, inst, ch, split);
	long at = twin ? twin - c->e : -1;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 32;
		c->e = xrealloc(c->e, (size_t)c->cap * sizeof *c->e);
	}
	ProgEntry *e = &c->e[c->n++];
	if (at >= 0) {
		*e = c->e[at];
		e->proto = proto;
		e->p.proto = (MProto)proto;
		e->t_lo = e->t_hi = 0;
		return e;
	}
	*e = (ProgEntry){.key = arena_strdup(&c->arena, key), .proto = proto, .instances = inst,
	                 .channels = ch, .split = split};
	BuildOpts o = base ? *base : (BuildOpts){0};
	o.collective = s->name, o.proto = mproto_name[proto], o.instances = inst, o.channels = ch;
	o.split_tbs = split;
	o.notes = NULL; /* a configuration tried, not yet the one written */
	MscclStats st;
	const Sched *used; /* a packing that fits none: its trees with fewer segments */
	diag_mute(dg, true);
	e->fits = msccl_lower_fit(dg, &c->arena, s, &o, c->fit, &e->p, &st, &used) == 0;
	diag_mute(dg, false);
	e->staged = st.staged;
	c->lowered++;
	return e;
}

/* The program's time at `size` in the executor model; < 0 if it cannot run
 * there (a deadlock under the slots, more ops than the model takes). */
static double
exec_run(Diag *dg, ProgCache *c, const Sched *s, const MProg *p, double size, const SimOpts *so)
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
 * thread block's or link's share). It fills within several iterations:
 * halving-doubling's 2-channel program on the 2 x 8 cluster adds 118.7 us
 * an iteration from the 4th to the 8th, then 131.9, 130.7 and 131.4 (8 to
 * 16, 32, 64): the line through 4 and 8 put it 7 % fast at 1 GiB, past the
 * cut bound; through 8 and 16, within 1 %. Two simulations per program
 * then serve every large size, where a full one would move up to 2^19
 * slices (a 64-rank program at 1 GiB took minutes and gigabytes).
 * test_tune_prog_line checks the line against the full model. */
enum { ITER_LO = 8, ITER_HI = 16 };

static double
exec_time(Diag *dg, ProgCache *c, const Sched *s, ProgEntry *e, double size, const SimOpts *so)
{
	ExecShape sh = exec_shape(&e->p, (int64_t)size);
	if (sh.iters <= ITER_HI)
		return exec_run(dg, c, s, &e->p, size, so);
	double piece = (double)exec_proto(e->p.proto).chunk_data * e->p.nchunksperloop;
	if (e->t_lo == 0)
		e->t_lo = exec_run(dg, c, s, &e->p, ITER_LO * piece, so);
	if (e->t_hi == 0)
		e->t_hi = exec_run(dg, c, s, &e->p, ITER_HI * piece, so);
	if (e->t_lo < 0 || e->t_hi < 0)
		return -1;
	return e->t_hi + (e->t_hi - e->t_lo) / (ITER_HI - ITER_LO) * (size / piece - ITER_HI);
}

double
prog_sched_time(Diag *dg, const Sched *s, double size, const SimOpts *so, unsigned protos,
                int *proto)
{
	double best = -1;
	for (int p = 0; p < NPROTO; p++) {
		if (!(protos >> p & 1))
			continue;
		Arena a = {0};
		SimNet *net = NEW(&a, SimNet);
		SimOpts o = *so;
		o.sync = SIM_DEPS; /* as the executor orders it: by dependencies */
		o.progress = NULL;
		SimResult r;
		char err[256];
		diag_mute(dg, true);
		bool ok = sched_to_sim(dg, &a, s, SIM_DEPS, net) == 0 &&
		          exec_costs_on_sched(&a, net, s->topo, (MProto)p) == 0 &&
		          sim_run(&a, net, 0, (int64_t)size, &o, &r, err, sizeof err) == 0;
		diag_mute(dg, false);
		arena_free(&a);
		if (ok && (best < 0 || r.time_s < best)) {
			best = r.time_s;
			*proto = p;
		}
	}
	return best;
}

const char *
prog_why_text(ProgWhy w)
{
	switch (w) {
	case PROG_UNFIT:
		return "no program of it fits MSCCL's limits (collc build --target msccl says why)";
	case PROG_UNCUT:
		return "its programs do not cut the size into their chunks in whole bytes (the executor "
		       "runs NCCL's own algorithm there)";
	case PROG_UNRUN:
		return "the executor model cannot run its programs at the size (a deadlock under the "
		       "slots, or more slice operations than it takes: collc sim FILE.xml says which)";
	case PROG_SKIPPED:
		return "it was not searched (slower by its schedule than the programs found)";
	case PROG_FOUND:
		break;
	}
	return "";
}

/* One configuration at `size` into *best if it is faster: PROG_FOUND (it
 * ran), or why not: PROG_UNFIT (no program fits its limits), PROG_UNCUT
 * (its chunks do not cut the size), PROG_UNRUN (the model cannot run it
 * at this size). */
static int
try_config(Diag *dg, ProgCache *c, const Sched *s, const char *key, double size,
           const ProgSearch *ps, ProgPick cfg, ProgPick *best)
{
	ProgEntry *e = lowered(dg, c, s, ps->build, key, cfg.proto, cfg.instances, cfg.channels,
	                       cfg.split);
	if (!e->fits)
		return PROG_UNFIT;
	/* a size the program's chunks do not cut in whole bytes is never
	 * selected by its file: the executor runs NCCL's own algorithm there */
	if (e->p.nchunksperloop <= 0 || (int64_t)size % e->p.nchunksperloop != 0)
		return PROG_UNCUT;
	cfg.time_s = exec_time(dg, c, s, e, size, &ps->opts);
	cfg.nchannels = e->p.nchannels;
	if (cfg.time_s < 0)
		return PROG_UNRUN;
	if (best->time_s < 0 || cfg.time_s < best->time_s)
		*best = cfg;
	return PROG_FOUND;
}

/* Protocol p's fastest program from cfg (its fewest channels, which ran):
 * 2, 4, 8, ... channels per instance (the tbs of a connection's chunks run
 * side by side) until two doublings in a row are not faster or one does
 * not fit. Not only while a doubling is faster: the time is not convex in
 * the channels. On the 2 x 8 cluster at 64 MiB halving-doubling's LL128
 * program takes 707.13 us on 1 channel, and its fastest is on 8 (309.31
 * us), past a doubling that was slower than the one before. */
static ProgPick
wider(Diag *dg, ProgCache *c, const Sched *s, const char *key, double size, const ProgSearch *ps,
      ProgPick cfg)
{
	ProgPick best = cfg;
	int per = best.nchannels / best.instances, misses = 0;
	for (int ch = 2 * (per > 0 ? per : 1); ch * best.instances <= MSCCL_MAX_CHANNELS && misses < 2;
	     ch *= 2) {
		double before = best.time_s;
		ProgPick w = best;
		w.channels = ch;
		if (try_config(dg, c, s, key, size, ps, w, &best) != PROG_FOUND)
			break;
		misses = best.time_s < before ? 0 : misses + 1;
	}
	return best;
}

/* Twice the instances of best while its chunks take more than one
 * iteration of the executor's loop and the doubling is faster: each
 * instance's chunk is a part of the size, so an iteration's steps, and
 * their latencies, run once for each part side by side instead of once
 * per piece in turn. tune's model gives instances for Simple's slot alone;
 * on the NVSwitch box LL's 32 KiB pieces made recursive doubling at 64 KiB
 * take 2 iterations on 1 instance (13.73 us) and 1 on 2 (12.27 us). */
static ProgPick
more_instances(Diag *dg, ProgCache *c, const Sched *s, const char *key, double size,
               const ProgSearch *ps, ProgPick best)
{
	for (;;) {
		bool staged;
		const MProg *p = prog_of(c, key, &best, &staged);
		int per = best.nchannels / best.instances > 0 ? best.nchannels / best.instances : 1;
		if (!p || exec_shape(p, (int64_t)size).iters < 2 ||
		    best.instances * 2 > PROG_MAX_INSTANCES ||
		    best.instances * 2 * per > MSCCL_MAX_CHANNELS)
			return best;
		ProgPick got = {.time_s = -1};
		if (try_config(dg, c, s, key, size, ps, (ProgPick){.proto = best.proto,
		               .instances = best.instances * 2, .channels = ps->channels,
		               .split = best.split}, &got) != PROG_FOUND)
			return best;
		if (ps->channels <= 0)
			got = wider(dg, c, s, key, size, ps, got);
		if (got.time_s >= best.time_s)
			return best;
		best = got;
	}
}

/* best's configuration with tbs that only send or only receive, and more
 * channels for it as wider() tries them, if faster: a tb that serves both
 * directions of a connection holds a send behind a receive that waits for
 * its slice and the step's latency (to_msccl_search.c, split_search; on
 * the 2 x 8 cluster at 16 MiB packing's LL128 program: 112.64 us paired,
 * 86.97 split). Once, at the fastest paired configuration: a search of its
 * own for the split layout would double the simulations, and trying it
 * at every protocol's fastest made test_tune_aim's eight sizes of the
 * 2 x 8 cluster take 7.82 s of CPU against 4.92, for the same choices. */
static ProgPick
split_tbs(Diag *dg, ProgCache *c, const Sched *s, const char *key, double size,
          const ProgSearch *ps, ProgPick best)
{
	ProgPick got = {.time_s = -1}, w = best;
	w.split = true;
	if (try_config(dg, c, s, key, size, ps, w, &got) != PROG_FOUND)
		return best;
	if (ps->channels <= 0)
		got = wider(dg, c, s, key, size, ps, got);
	return got.time_s < best.time_s ? got : best;
}

int
prog_fastest(Diag *dg, ProgCache *c, const Sched *s, const char *key, double size,
             const ProgSearch *ps, ProgPick *out)
{
	ProgPick best = {.time_s = -1}, first[NPROTO];
	int why_none = PROG_UNFIT;
	/* the instances of tune's model, fewer only where those fit nowhere
	 * (a program of 8 instances is 8 times the simulation: trying 1 too
	 * tripled tune's time on 64 ranks at 1 GiB) */
	int inst = ps->instances > 0 ? ps->instances : ps->inst_hint > 1 ? ps->inst_hint : 1;
	for (; best.time_s < 0 && inst >= 1; inst = ps->instances > 0 ? 0 : inst / 2) {
		/* the limits hardly depend on the protocol, and a lowering that
		 * fails has tried every width (seconds on 64 ranks): the first
		 * protocol unfit, the others are not tried at these instances */
		bool unfit = false;
		for (int p = 0; p < NPROTO; p++) {
			first[p].time_s = -1;
			if (!unfit && ps->protos >> p & 1) {
				int r = try_config(dg, c, s, key, size, ps,
				                   (ProgPick){.proto = p, .instances = inst,
				                              .channels = ps->channels}, &first[p]);
				unfit = r == PROG_UNFIT;
				why_none = r > why_none ? r : why_none; /* the most specific */
			}
			if (first[p].time_s >= 0 && (best.time_s < 0 || first[p].time_s < best.time_s))
				best = first[p];
		}
	}
	if (best.time_s < 0) {
		*out = (ProgPick){.time_s = -1, .why = (ProgWhy)why_none};
		return 1;
	}
	/* more channels and instances for every protocol that ran, not only
	 * the fastest on the fewest: on the NVSwitch box at 1 MiB
	 * halving-doubling's LL program on 2 channels (26.56 us) beats its
	 * Simple one (28.59), which is faster on one; and packing's LL program
	 * on 1 instance (19.76 us) is slower than its Simple one (19.28), on 4
	 * faster (16.76) */
	for (int p = 0; p < NPROTO; p++)
		if (first[p].time_s >= 0) {
			ProgPick w = ps->channels <= 0 ? wider(dg, c, s, key, size, ps, first[p]) : first[p];
			if (ps->instances <= 0)
				w = more_instances(dg, c, s, key, size, ps, w);
			if (w.time_s < best.time_s)
				best = w;
		}
	*out = split_tbs(dg, c, s, key, size, ps, best);
	return 0;
}

const MProg *
prog_of(ProgCache *c, const char *key, const ProgPick *pick, bool *staged)
{
	ProgEntry *e = find(c, key, pick->proto, pick->instances, pick->channels, pick->split);
	if (!e || !e->fits)
		return NULL;
	*staged = e->staged;
	return &e->p;
}

/* Which candidates are searched: by schedule, until PROG_TOP have a
 * program (one that has none does not count: on the 2 x 8 cluster from
 * 256 MiB the three fastest schedules fit no program, and counting them
 * left the ring, at 50 GB/s where halving-doubling's program reaches
 * 281), of those only while the schedule is within PROG_PRUNE of the
 * fastest program found (a program beats its schedule by less than that
 * on the examples measured: at most 1.63x, halving-doubling's on 2 x 8 at
 * 256 MiB, 1059.12 us against 1723.00, which 1.5 left unsearched for
 * packing's 1109.35), and those marked always. Each search lowers and
 * simulates a few programs: on 64 ranks (SP on torus(8, 8)) a candidate
 * costs 0.3 to 1.5 s a size. */
static const double PROG_PRUNE = 2.0;
enum { PROG_TOP = 4 };

static bool
same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool
same_form(const ProgCand *a, const ProgCand *b)
{
	return a->sched_time == b->sched_time && a->s->nround == b->s->nround &&
	       same_str(a->s->algorithm, b->s->algorithm) && same_str(a->s->choice, b->s->choice);
}

/* Whether candidate i's schedule is another's again (a file's collective
 * that names a library algorithm is also the library's candidate) that is
 * searched: an earlier one searched, or one marked always (the library's
 * ring, so the ring keeps its name). It is not searched twice, nor counted
 * twice among the PROG_TOP (on the 2 x 8 cluster at 64 MiB the file's
 * packing and the library's took two of the three places, and
 * halving-doubling, whose program is the fastest there, was not searched). */
static bool
searched_twin(const ProgCand *c, int n, int i)
{
	for (int j = 0; j < n; j++)
		if (j != i && same_form(&c[j], &c[i]) &&
		    (c[j].always || (j < i && c[j].pick->time_s >= 0)))
			return true;
	return false;
}

void
prog_rank(Diag *dg, ProgCache *cache, const ProgCand *c, int n, double size, const ProgSearch *ps)
{
	double fastest = -1;
	int found = 0;
	for (int i = 0; i < n; i++) {
		*c[i].pick = (ProgPick){.time_s = -1, .why = PROG_SKIPPED};
		if (!c[i].always &&
		    (found >= PROG_TOP || (fastest > 0 && c[i].sched_time > PROG_PRUNE * fastest) ||
		     searched_twin(c, n, i)))
			continue;
		/* the pick keeps its reason (ProgPick.why) for tune's note */
		if (prog_fastest(dg, cache, c[i].s, c[i].key, size, ps, c[i].pick) != 0)
			continue;
		found += !c[i].always;
		if (fastest < 0 || c[i].pick->time_s < fastest)
			fastest = c[i].pick->time_s;
	}
}

/* build's auto: the candidates by schedule (flow mode, by dependencies, as
 * tune ranks programs), then by program. */
static int
by_sched(const void *x, const void *y)
{
	const ProgCand *a = x, *b = y;
	return (a->sched_time > b->sched_time) - (a->sched_time < b->sched_time);
}

int
prog_build_auto(Diag *dg, const Sched *s, const BuildOpts *o, double size, FILE *f)
{
	Arena a = {0};
	Routes routes;
	routes_init(&routes, s->topo, s->routing);
	SimOpts so = {.mode = SIM_FLOW, .sync = SIM_DEPS};
	Simulated *sim = arena_array(&a, NALG, sizeof *sim);
	int n = simulate_candidates(dg, &a, &routes, NULL, s, size, &so, sim);
	ProgCand *c = arena_array(&a, (size_t)n + 1, sizeof *c);
	ProgPick *pick = arena_array(&a, (size_t)n + 1, sizeof *pick);
	for (int i = 0; i < n; i++)
		c[i] = (ProgCand){.s = sim[i].s, .key = sim[i].s->algorithm, .sched_time = sim[i].r.time_s,
		                  .always = strcmp(sim[i].s->algorithm, "ring") == 0, .pick = &pick[i]};
	qsort(c, (size_t)n, sizeof *c, by_sched);
	unsigned protos = 0;
	for (int p = 0; p < NPROTO; p++)
		if (!o->proto || strcmp(o->proto, mproto_name[p]) == 0)
			protos |= 1u << p;
	int hint = 1;
	while (n > 0 && hint < 8 && size / ((double)c[0].s->nchunk * hint * 2) >= 512.0 * 1024)
		hint *= 2; /* tune's model (tune_msccl_pick) */
	ProgSearch ps = {.protos = protos, .instances = o->instances, .inst_hint = hint,
	                 .channels = o->channels, .opts = so, .build = o};
	ProgCache *cache = prog_cache_new();
	prog_rank(dg, cache, c, n, size, &ps);
	int b = -1;
	for (int i = 0; i < n; i++)
		if (c[i].pick->time_s >= 0 && (b < 0 || c[i].pick->time_s < c[b].pick->time_s))
			b = i;
	int rc = -1;
	bool staged = false;
	const MProg *p = b >= 0 ? prog_of(cache, c[b].key, c[b].pick, &staged) : NULL;
	if (!p) {
		error_at(dg, s->loc, "auto: no candidate of '%s' has an MSCCL program that fits the "
		         "executor's limits at %.0f bytes (collc build --target msccl with a named "
		         "algorithm says why)", s->name, size);
	} else {
		if (o->notes)
			fprintf(o->notes, "collc: build: note: '%s' auto for MSCCL at %.0f bytes: %s, whose "
			        "program is the fastest in the executor model (%.2f us; its schedule "
			        "%.2f us; %s by the cost model)\n", s->name, size, c[b].key,
			        c[b].pick->time_s * 1e6, c[b].sched_time * 1e6, s->algorithm + 5);
		BuildOpts w = *o;
		w.proto = mproto_name[c[b].pick->proto];
		w.instances = c[b].pick->instances;
		w.channels = c[b].pick->channels;
		w.split_tbs = c[b].pick->split;
		w.by_program = true;
		rc = msccl_write(dg, c[b].s, p, &w, staged, f);
	}
	prog_cache_free(cache);
	routes_free(&routes);
	arena_free(&a);
	return rc;
}
