/*
 * cmd_tune.c: `collc tune FILE`, the choice per size. For each collective
 * of the file (or --collective), every candidate is simulated at every
 * size; the fastest is chosen per size, and neighbouring sizes with the
 * same choice merge into byte ranges: the plan, as NCCL's tuner or an MPI
 * library's tuned collectives choose. The candidates:
 *   - the collective's own schedule (not under `auto`: the library has it),
 *   - the file's other collectives of the same kind on the same ranks, so
 *     that SP (symmetric) and user schedules take part,
 *   - every library algorithm the language accepts for it (the registry's
 *     rule, as `auto`).
 * Each candidate is built for each size where it chooses by size
 * (Sched.size_chosen), so a size's choice depends on that size alone.
 * Needs: a file that loads and verifies. Gives: per size the choice, its
 * time and busbw, the runner-up and its margin; the plan's ranges cover
 * the sizes asked, from the first to the last, once (a range holds the
 * sizes from its first sample up to the next range's first, less one
 * byte; the last ends at the last sample).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bound.h"
#include "cli.h"
#include "backend.h"
#include "driver.h"
#include "mpi_lib.h"
#include "msccl_program.h"
#include "msccl_to_sim.h"
#include "perf.h"
#include "svgplot.h"
#include "tune.h"



static int
add_cand(Tuner *u, Tuned *t, const char *key)
{
	for (int i = 0; i < t->ncand; i++)
		if (strcmp(t->cand[i].key, key) == 0)
			return i;
	if (t->ncand == TUNE_MAX_CANDS)
		return -1;
	int n = u->a->nsize;
	Cand *c = &t->cand[t->ncand];
	c->key = arena_strdup(&u->arena, key);
	c->label = arena_array(&u->arena, (size_t)n, sizeof *c->label);
	c->time_s = arena_array(&u->arena, (size_t)n, sizeof *c->time_s);
	c->sched = arena_array(&u->arena, (size_t)n, sizeof *c->sched);
	c->prog = arena_array(&u->arena, (size_t)n, sizeof *c->prog);
	for (int k = 0; k < n; k++)
		c->time_s[k] = c->prog[k].time_s = -1;
	return t->ncand++;
}

static void
progress(Tuner *u, const Sched *s, int k, const char *what)
{
	if (!u->tty)
		return;
	fprintf(stderr, "\r\033[Ktune: %s, size %d/%d: %s", s->name, k + 1, u->a->nsize, what);
	u->shown = true;
}

/* Candidate `key` of t ran at size k as x (a candidate the simulator
 * cannot run at a size is left out there, as `auto` leaves out what does
 * not build). */
static void
record(Tuner *u, Tuned *t, const char *key, const Simulated *x, int k)
{
	int i = add_cand(u, t, key);
	if (i < 0)
		return;
	Cand *c = &t->cand[i];
	c->time_s[k] = x->r.time_s;
	c->sched[k] = x->s;
	c->label[k] = sched_label(&u->arena, strcmp(key, x->s->algorithm) ? arena_printf(&u->arena,
	                          "%s: ", x->s->name) : "", x->s);
}

/* Same kind, same ranks in the same order, same root: one may stand in
 * for the other. */
static bool
same_collective(const Sched *a, const Sched *b)
{
	if (a->kind != b->kind || a->topo != b->topo || a->nrank != b->nrank || a->root != b->root)
		return false;
	for (int r = 0; r < a->nrank; r++)
		if (a->rank_node[r] != b->rank_node[r])
			return false;
	return true;
}

/* Every candidate of s (and of the file's collectives like it) at size k. */
static int
tune_size(Diag *dg, Tuner *u, Tuned *t, const Prog *p, int k)
{
	double size = u->a->sizes[k];
	Simulated x;
	bool file_sp = false;
	for (int j = 0; j < p->nsched; j++) {
		const Sched *o = p->sched[j];
		if (!same_collective(o, t->s) || strncmp(o->algorithm, "auto:", 5) == 0)
			continue;
		file_sp |= o->group && strcmp(o->algorithm, "symmetric") == 0;
		const Sched *built = sched_for_size(dg, &u->sized, size, o);
		if (!built)
			return -1;
		const char *key = arena_printf(&u->arena, "%s: %s", o->name, o->algorithm);
		progress(u, t->s, k, key);
		add_cand(u, t, key); /* its place in the order, even where it cannot run */
		if (simulate_one(dg, &u->arena, built, size, &u->a->opts, &x))
			record(u, t, key, &x, k);
	}
	progress(u, t->s, k, "the library");
	Simulated *lib = arena_array(&u->arena, NALG, sizeof *lib);
	int n = simulate_candidates(dg, &u->arena, &t->routes, t->pack_memo, t->s, size, &u->a->opts, lib);
	/* auto's own SP (alg_auto_sp.c) stands in for the SP a file lacks: where
	 * the file has its own, that one is weighed and auto's is not (a second
	 * SP took a place among the programs tune searches, PROG_TOP) */
	for (int i = 0; i < n; i++)
		if (!file_sp || strcmp(lib[i].s->algorithm, "symmetric") != 0)
			record(u, t, lib[i].s->algorithm, &lib[i], k);
	return 0;
}

/* What candidate i is ranked by at size k: its schedule's simulated time,
 * or by the program, its program's (< 0: left out there). */
double
tune_rank_time(const Tuned *t, int i, int k)
{
	return t->by_program ? t->cand[i].prog[k].time_s : t->cand[i].time_s[k];
}

/* The fastest and the runner-up at every size; ties keep the first met. */
static void
choose(Tuned *t, int nsize)
{
	for (int k = 0; k < nsize; k++) {
		int b = -1, s2 = -1;
		for (int i = 0; i < t->ncand; i++) {
			double x = tune_rank_time(t, i, k);
			if (x < 0)
				continue;
			if (b < 0 || x < tune_rank_time(t, b, k)) {
				s2 = b;
				b = i;
			} else if (s2 < 0 || x < tune_rank_time(t, s2, k)) {
				s2 = i;
			}
		}
		t->best[k] = b;
		t->second[k] = s2;
	}
}

static double proto_time(const Tuned *t, int k, int p);
static int ranked(const Tuned *t, int k, int *order);

/* ---- by the program (--msccl-dir): tune_prog.c ----
 *
 * At each size the candidates are taken fastest schedule first, and
 * prog_rank searches their programs (which ones: tune_prog.c). The
 * protocols tried are those NCCL's model (proto_time) puts within
 * PROTO_SLACK of its best for the size: LL, a quarter of the bandwidth,
 * drops out at large sizes, where its slices are many. */
static const double PROTO_SLACK = 2.0;

static unsigned
proto_mask(const TuneArgs *a, const Tuned *t, int k)
{
	unsigned m = 0;
	for (int p = 0; p < NPROTO; p++)
		if (a->proto ? strcmp(a->proto, mproto_name[p]) == 0 : true)
			m |= 1u << p;
	if (a->proto)
		return m;
	double best = proto_time(t, k, 0);
	for (int p = 1; p < NPROTO; p++)
		if (proto_time(t, k, p) < best)
			best = proto_time(t, k, p);
	for (int p = 0; p < NPROTO; p++)
		if (proto_time(t, k, p) > PROTO_SLACK * best)
			m &= ~(1u << p);
	return m;
}

/* What the program search may vary at size k (t->best[k] by schedule). */
static ProgSearch
search_at(const TuneArgs *a, const Tuned *t, int k)
{
	int nchunk = t->cand[t->best[k]].sched[k]->nchunk, hint = 1;
	while (hint < 8 && a->sizes[k] / ((double)nchunk * hint * 2) >= 512.0 * 1024)
		hint *= 2; /* tune's model (msccl_pick) */
	ProgSearch ps = {.protos = proto_mask(a, t, k), .instances = a->instances, .inst_hint = hint,
	                 .channels = a->channels, .opts = a->opts};
	ps.opts.mode = a->mode_set ? a->opts.mode : SIM_FLOW;
	return ps;
}

/* Each candidate's fastest program at size k (t->best[k] by schedule). */
static void
rank_size(Diag *dg, Tuner *u, Tuned *t, int k, int *order)
{
	const TuneArgs *a = u->a;
	ProgSearch ps = search_at(a, t, k);
	int n = ranked(t, k, order); /* by schedule: by_program is not set yet */
	ProgCand *c = xmalloc(((size_t)n + 1) * sizeof *c);
	for (int i = 0; i < n; i++) {
		Cand *x = &t->cand[order[i]];
		c[i] = (ProgCand){.s = x->sched[k], .key = x->label[k], .sched_time = x->time_s[k],
		                  .always = tune_ring_baseline(x->key), .pick = &x->prog[k]};
	}
	progress(u, t->s, k, "the programs");
	prog_rank(dg, u->progs, c, n, a->sizes[k], &ps);
	free(c);
}

/* A note per candidate and reason where it is faster by its schedule
 * than the choice and has no program: the sizes, and the reason
 * prog_fastest gave there (ProgPick.why). */
static void
note_unfit_why(Diag *dg, const Tuner *u, const Tuned *t, int i, ProgWhy w)
{
	int first = -1, last = -1, count = 0;
	const Cand *c = &t->cand[i];
	for (int k = 0; k < u->a->nsize; k++) {
		if (c->prog[k].time_s >= 0 || c->prog[k].why != w || c->time_s[k] < 0 ||
		    t->best[k] < 0 || c->time_s[k] >= t->cand[t->best[k]].time_s[k] || c->label[k] == NULL)
			continue;
		first = first < 0 ? k : first;
		last = k;
		count++;
	}
	if (count == 0)
		return;
	char at[96];
	if (count == 1)
		snprintf(at, sizeof at, "at %.0f bytes", u->a->sizes[first]);
	else
		snprintf(at, sizeof at, "at %d sizes from %.0f to %.0f bytes", count,
		         u->a->sizes[first], u->a->sizes[last]);
	note_at(dg, t->s->loc, "tune: %s is left out %s: faster by its schedule than the choice, "
	        "but %s", c->key, at, prog_why_text(w));
}

static void
note_unfit(Diag *dg, const Tuner *u, const Tuned *t)
{
	static const ProgWhy whys[] = {PROG_UNFIT, PROG_UNCUT, PROG_UNRUN};
	for (int i = 0; i < t->ncand; i++)
		for (size_t w = 0; w < countof(whys); w++)
			note_unfit_why(dg, u, t, i, whys[w]);
}


/* The aim (issue 35): in every range the program reaches at least
 * PROG_AIM of its schedule's busbw, the schedule as the executor runs it
 * (prog_sched_time: with the fixed costs every program pays, a call's
 * base latency, a step's latency, the protocol's wire bytes, which a
 * schedule's simulation for the network alone does not have; docs/sim.md 7,
 * "The aim"). A note per range where it does not, at the size where the
 * gap is widest, with the gap's parts. */
static const double PROG_AIM = 0.9;

/* The protocols the reference may take: --proto's, else all of them (not
 * only those tune's model keeps for the search: a protocol it drops that
 * would serve the schedule better is a gap of the search). */
static unsigned
ref_protos(const TuneArgs *a)
{
	unsigned m = 0;
	for (int p = 0; p < NPROTO; p++)
		if (!a->proto || strcmp(a->proto, mproto_name[p]) == 0)
			m |= 1u << p;
	return m;
}

static double
ref_time_of(Diag *dg, const TuneArgs *a, const Tuned *t, int k, unsigned protos, int *proto)
{
	ProgSearch ps = search_at(a, t, k);
	return prog_sched_time(dg, t->cand[t->best[k]].sched[k], a->sizes[k], &ps.opts, protos, proto);
}

/* Each size's reference (the choice's schedule in the executor), once. */
static void
set_refs(Diag *dg, Tuner *u, Tuned *t)
{
	const TuneArgs *a = u->a;
	t->ref_s = arena_array(&u->arena, (size_t)a->nsize, sizeof *t->ref_s);
	t->ref_proto = arena_array(&u->arena, (size_t)a->nsize, sizeof *t->ref_proto);
	for (int k = 0; k < a->nsize; k++)
		t->ref_s[k] = ref_time_of(dg, a, t, k, ref_protos(a), &t->ref_proto[k]);
}

double
tune_ref_time(const TuneArgs *a, const Tuned *t, int k)
{
	(void)a;
	return t->ref_s && t->ref_s[k] > 0 ? t->ref_s[k] : t->cand[t->best[k]].time_s[k];
}

/* The note for size k, where the program takes longer than the reference:
 * the gap's parts. The protocol (the schedule in the executor with the
 * program's protocol against the reference's) and the lowering (the
 * program against the schedule in its protocol: slices through the
 * slots, a thread block per peer and channel, the loop's iterations),
 * which tune_prog.c's search is to keep small. */
static void
note_gap(Diag *dg, const Tuner *u, const Tuned *t, int k)
{
	const TuneArgs *a = u->a;
	const Cand *c = &t->cand[t->best[k]];
	const ProgPick *pp = &c->prog[k];
	int q = pp->proto;
	double ref = tune_ref_time(a, t, k), own = ref;
	if (q != t->ref_proto[k])
		own = ref_time_of(dg, a, t, k, 1u << q, &q);
	if (own < 0)
		own = ref;
	note_at(dg, t->s->loc, "tune: at %.0f bytes the program of %s (MSCCL %s, %d instance%s, %d "
	        "channel%s) reaches %.2f GB/s in the executor model, %.0f%% of its schedule's %.2f "
	        "GB/s as the executor runs it (%.2f us with %s, docs/sim.md 7; %.2f us for the "
	        "network alone): the gap of %.2f us is the protocol %.2f us (the schedule with %s "
	        "against %s) and the lowering %.2f us (the program against the schedule with %s: "
	        "slices through the slots, a thread block per peer and channel, the loop's "
	        "iterations)", a->sizes[k], c->label[k], mproto_name[pp->proto], pp->instances,
	        pp->instances == 1 ? "" : "s", pp->nchannels, pp->nchannels == 1 ? "" : "s",
	        tune_busbw_of(t, a, k, pp->time_s), ref / pp->time_s * 100,
	        tune_busbw_of(t, a, k, ref), ref * 1e6, mproto_name[t->ref_proto[k]],
	        c->time_s[k] * 1e6, (pp->time_s - ref) * 1e6, (own - ref) * 1e6,
	        mproto_name[pp->proto], mproto_name[t->ref_proto[k]], (pp->time_s - own) * 1e6,
	        mproto_name[pp->proto]);
}

static void
note_gaps(Diag *dg, const Tuner *u, const Tuned *t)
{
	const TuneArgs *a = u->a;
	for (int k = 0; k < a->nsize;) {
		int j = tune_range_end(a, t, k, true), worst = -1;
		double wr = 1;
		for (int m = k; m <= j; m++) {
			double r = tune_ref_time(a, t, m) / t->cand[t->best[m]].prog[m].time_s;
			if (r < PROG_AIM && r < wr) {
				wr = r;
				worst = m;
			}
		}
		if (worst >= 0)
			note_gap(dg, u, t, worst);
		k = j + 1;
	}
}

/* No candidate of t has a program at size k: why the fastest by its
 * schedule has none (its lowering's errors, as build reports them), and
 * that nothing else fits either. */
static void
no_program(Diag *dg, const Tuner *u, const Tuned *t, int k)
{
	const TuneArgs *a = u->a;
	int b = -1;
	for (int i = 0; i < t->ncand; i++)
		if (t->cand[i].time_s[k] >= 0 && t->cand[i].sched[k] &&
		    (b < 0 || t->cand[i].time_s[k] < t->cand[b].time_s[k]))
			b = i;
	if (b >= 0) {
		BuildOpts o = {.collective = t->s->name, .proto = a->proto, .instances = a->instances,
		               .channels = a->channels};
		Arena ar = {0};
		MProg p;
		msccl_lower(dg, &ar, t->cand[b].sched[k], &o, &p);
		arena_free(&ar);
	}
	error_at(dg, t->s->loc, "tune: no candidate of '%s' has a program that fits MSCCL's limits "
	         "at %.0f bytes%s%s", t->s->name, a->sizes[k], b >= 0 ? "; the fastest by its "
	         "schedule is " : "", b >= 0 ? t->cand[b].label[k] : "");
}

/* Ranks t by its candidates' programs; the choice per size the fastest. */
static void
rank_programs(Diag *dg, Tuner *u, Tuned *t)
{
	int *order = xmalloc((size_t)TUNE_MAX_CANDS * sizeof *order);
	for (int k = 0; k < u->a->nsize; k++)
		rank_size(dg, u, t, k, order);
	free(order);
	t->by_program = true;
	choose(t, u->a->nsize);
	note_unfit(dg, u, t);
	for (int k = 0; k < u->a->nsize; k++)
		if (t->best[k] < 0)
			return; /* tune_one reports it */
	set_refs(dg, u, t);
	note_gaps(dg, u, t);
}

/* The executor runs the first file of MSCCL_ALGO_DIR that matches a call's
 * collective, GPU count and size: two plans for one kind and rank count
 * in one directory would shadow each other. -1 after reporting. */
static int
shadowed_plan(Diag *dg, const Prog *p, const char *only, int i)
{
	const Sched *b = p->sched[i];
	for (int j = 0; j < i; j++) {
		const Sched *a = p->sched[j];
		if (only || !tune_msccl_kind(b->kind) || a->kind != b->kind || a->nrank != b->nrank)
			continue;
		error_at(dg, b->loc,
		         "tune --msccl-dir: '%s' and '%s' are both %s plans for %d ranks; the "
		         "executor runs the first file that matches a call, so one would shadow "
		         "the other: tune one of them (--collective NAME)",
		         a->name, b->name, coll_kind_name[b->kind], b->nrank);
		note_at(dg, a->loc, "'%s' is declared here", a->name);
		return -1;
	}
	return 0;
}

static int
tune_one(Diag *dg, Tuner *u, const Prog *p, const Sched *s)
{
	Tuned *t = &u->t[u->nt++];
	int n = u->a->nsize;
	*t = (Tuned){.s = s};
	t->cand = arena_array(&u->arena, TUNE_MAX_CANDS, sizeof *t->cand);
	t->best = arena_array(&u->arena, (size_t)n, sizeof *t->best);
	t->second = arena_array(&u->arena, (size_t)n, sizeof *t->second);
	t->built_instances = arena_array(&u->arena, (size_t)n, sizeof *t->built_instances);
	t->built_choice = arena_array(&u->arena, (size_t)n, sizeof *t->built_choice);
	for (int k = 0; k < n; k++)
		t->built_choice[k] = -1;
	t->busbw_factor = perf_busbw_factor(coll_kind_name[s->kind], s->nrank);
	t->bound = bound_busbw_sched(dg, s) / 1e9;
	routes_init(&t->routes, s->topo, s->routing); /* the file's routing */
	t->pack_memo = pack_memo_new();
	int rc = 0;
	for (int k = 0; k < n && rc == 0; k++)
		rc = tune_size(dg, u, t, p, k);
	choose(t, n);
	for (int k = 0; rc == 0 && k < n; k++)
		if (t->best[k] < 0) {
			error_at(dg, s->loc, "tune: nothing runs '%s' at %.0f bytes", s->name, u->a->sizes[k]);
			rc = -1;
		}
	if (rc == 0 && u->progs && tune_msccl_kind(s->kind))
		rank_programs(dg, u, t);
	for (int k = 0; rc == 0 && k < n; k++)
		if (t->best[k] < 0) {
			no_program(dg, u, t, k);
			rc = -1;
		}
	return rc;
}

/* ---- the plan ---- */

/* The range sizes[i..j] stands for: from its first sample to the next
 * range's first less one byte; the last ends at the last sample. */
void
tune_range_of(const TuneArgs *a, int i, int j, double *lo, double *hi)
{
	*lo = a->sizes[i];
	*hi = j + 1 < a->nsize ? a->sizes[j + 1] - 1 : a->sizes[j];
}

/* ---- MSCCL per range: the protocol and the instances ----
 *
 * The model is NCCL's ring model (src/graph/tuning.cc, ncclTopoTuneModel,
 * the network rows): a protocol p costs a base latency, a latency per
 * step of the schedule, and its share of the bandwidth: LL moves 4 bytes
 * of data in each 8-byte store with its flag and NCCL rates it at 1/4 of
 * the bandwidth across nodes, LL128 120 bytes of each 128 (NCCL: 0.92),
 * Simple all of it. At sample k, with t_k the simulated time of the
 * range's choice and R its rounds, T_p = base_p + R * step_p + t_k / eff_p
 * (the simulated time stands for the bandwidth term: at full bandwidth,
 * as Simple runs). Each sample takes the protocol of least T_p, and the
 * plan's ranges split where it changes. Instances, Simple only: the most
 * (1, 2, 4 or 8) that keep a chunk of the sample's size at 512 KiB or more
 * (NCCL's Simple slot: a 4 MiB buffer in 8 steps), so that large sizes
 * fill more channels while a step stays past its latency; the backend's
 * width search then chooses the channels, the fewest that fit. With
 * --msccl-dir, the fastest program's protocol, instances and channels
 * replace these (rank_programs, tune_prog.c). */
bool
tune_msccl_kind(CollKind k)
{
	return k == CK_ALLREDUCE || k == CK_REDUCE_SCATTER || k == CK_ALLGATHER || k == CK_ALLTOALL;
}

/* indexed by MProto (msccl_program.h; mproto_name its names); the
 * latencies are the executor model's table (exec_proto: NCCL's base and
 * network step latencies, one table for both) */
static const double proto_eff[NPROTO] = {1.0, 0.25, 0.92};
static const double instance_min_chunk = 512.0 * 1024;

static double
proto_time(const Tuned *t, int k, int p)
{
	const Cand *b = &t->cand[t->best[k]];
	ExecProto x = exec_proto((MProto)p);
	return (double)(x.base_ps + b->sched[k]->nround * x.step_ps[EXEC_NET]) * 1e-12 +
	       b->time_s[k] / proto_eff[p];
}

/* The MSCCL configuration at sample k of t: the protocol of least T_p
 * there (ties: Simple, LL, LL128), the instances for its size (once its
 * file is built, the instances it was built with); or what the options
 * fix. */
MscclPick
tune_msccl_pick(const TuneArgs *a, const Tuned *t, int k)
{
	MscclPick m = {.proto = 0, .instances = 1, .proto_fixed = a->proto != NULL,
	               .instances_fixed = a->instances > 0, .channels_fixed = a->channels > 0};
	for (int p = 1; !m.proto_fixed && p < NPROTO; p++)
		if (proto_time(t, k, p) < proto_time(t, k, m.proto))
			m.proto = p;
	for (int p = 0; m.proto_fixed && p < NPROTO; p++)
		if (strcmp(a->proto, mproto_name[p]) == 0)
			m.proto = p;
	if (m.instances_fixed) {
		m.instances = a->instances;
	} else if (m.proto == 0) {
		int nchunk = t->cand[t->best[k]].sched[k]->nchunk;
		while (m.instances < PROG_MAX_INSTANCES &&
		       a->sizes[k] / ((double)nchunk * m.instances * 2) >= instance_min_chunk)
			m.instances *= 2;
	}
	const ProgPick *pp = &t->cand[t->best[k]].prog[k];
	if (t->by_program && pp->time_s >= 0) { /* the fastest program's */
		m.proto = pp->proto;
		m.instances = pp->instances;
		m.channels = pp->channels;
		m.nchannels = pp->nchannels;
		m.split = pp->split;
	}
	m.model_instances = m.instances;
	if (t->built_instances[k] > 0)
		m.instances = t->built_instances[k];
	return m;
}

/* The end of the range starting at sample i: the last sample with the
 * same choice (label, so a schedule rebuilt per size splits a range) and,
 * by_msccl for a kind MSCCL runs, the same MSCCL protocol and instances
 * (the plan and its MSCCL files; an MPI library's ranges need not split). */
int
tune_range_end(const TuneArgs *a, const Tuned *t, int i, bool by_msccl)
{
	const char *l = t->cand[t->best[i]].label[i];
	MscclPick m = tune_msccl_pick(a, t, i);
	int j = i;
	while (j + 1 < a->nsize && strcmp(t->cand[t->best[j + 1]].label[j + 1], l) == 0) {
		MscclPick n = tune_msccl_pick(a, t, j + 1);
		if (by_msccl && tune_msccl_kind(t->s->kind) &&
		    (n.proto != m.proto || n.model_instances != m.model_instances ||
		     n.channels != m.channels || n.split != m.split))
			break;
		j++;
	}
	return j;
}

/* ---- deployment: an MSCCL algorithm directory ---- */

/* The executor loads every file of MSCCL_ALGO_DIR in path order and runs
 * the first whose coll, ngpus and minBytes..maxBytes (inclusive) match a
 * call: each range of the plan is one file with its range, so exactly one
 * file matches a planned size. Each is built with msccl_backend, checked
 * by every rule before it is written. Everything is built in memory
 * first; the directory must be new (a file left from another plan would
 * be selected too). */
typedef struct DirFile {
	char name[256];
	MemOut m;
} DirFile;

/* What a file of the directory carries, on stderr: the protocol and the
 * instances (the model's, or fewer where the model's did not fit), the
 * channels (the backend's width search, or --channels), each marked when
 * an option fixed it, and the thread blocks where they only send or only
 * receive. */
static void
say_file(const char *name, MemOut *m, const MscclPick *pk, int instances, bool channels_fixed)
{
	fflush(m->f);
	const char *nc = m->buf ? strstr(m->buf, "nchannels=\"") : NULL;
	fprintf(stderr, "tune: %s: MSCCL %s%s, %d instance%s%s, %d channel%s%s%s\n", name,
	        mproto_name[pk->proto], pk->proto_fixed ? " (--proto)" : "", instances,
	        instances == 1 ? "" : "s", pk->instances_fixed ? " (--instances)"
	        : instances < pk->model_instances ? " (fewer than the model's: limits)" : "",
	        nc ? atoi(nc + 11) : 0, nc && atoi(nc + 11) == 1 ? "" : "s",
	        channels_fixed ? " (--channels)" : "",
	        pk->split ? ", thread blocks that only send or only receive" : "");
}

/* The choice as a file name's part: "SP_forest: symmetric" ->
 * "SP_forest-symmetric" (letters, digits and '_' kept, any run of others
 * one '-'). */
static void
choice_slug(const char *key, char *out, size_t cap)
{
	size_t n = 0;
	for (const char *p = key; *p && n + 1 < cap; p++) {
		bool word = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		            (*p >= '0' && *p <= '9') || *p == '_';
		if (word)
			out[n++] = *p;
		else if (n > 0 && out[n - 1] != '-')
			out[n++] = '-';
	}
	while (n > 0 && out[n - 1] == '-')
		n--;
	out[n] = 0;
}

/* Schedule x as range lo..hi's file in f: the model's instances, else
 * fewer (one always fits if anything does). Quiet: no diagnostic at all
 * (a trial). 0, with the instances used, or -1. */
static int
emit_range(Diag *dg, const TuneArgs *a, const Sched *x, const MscclPick *pk, double lo,
           double hi, bool quiet, DirFile *f, int *instances)
{
	BuildOpts o = {.collective = x->name, .min_bytes = (int64_t)lo, .max_bytes = (int64_t)hi,
	               .proto = mproto_name[pk->proto],
	               .channels = pk->channels > 0 ? pk->channels : a->channels};
	Prog one = {.sched = (Sched **)&x, .nsched = 1};
	int rc = -1;
	for (int inst = pk->instances; rc != 0 && inst >= 1; inst /= 2) {
		bool last = inst == 1 || pk->instances_fixed;
		o.instances = inst;
		FILE *mem = memout_open(&f->m);
		if (!last || quiet)
			diag_mute(dg, true);
		rc = msccl_backend.emit(dg, &one, &o, mem);
		if (!last || quiet)
			diag_mute(dg, false);
		if (rc != 0 && (!last || quiet)) /* else the caller drops it, unwritten */
			memout_drop(&f->m);
		if (last)
			break;
	}
	*instances = o.instances;
	return rc;
}

/* Range lo..hi's file from the program tune ranked for its first size k
 * (tune_prog.c's cache): emit_range's first try has the same options, so
 * this is its program, not lowered again; its range set and checked as the
 * lowering checks it (rule 16). 0, or -1 (not ranked by program, or no size
 * of the range selects it: emit_range then says why). */
static int
emit_ranked(Diag *dg, const Tuner *u, const Tuned *t, int k, double lo, double hi, DirFile *f,
            int *instances)
{
	const Cand *c = &t->cand[t->best[k]];
	const ProgPick *pp = &c->prog[k];
	bool staged = false;
	const MProg *p = u->progs && t->by_program && pp->time_s >= 0
	                     ? prog_of(u->progs, c->label[k], pp, &staged) : NULL;
	if (!p)
		return -1;
	MProg w = *p;
	w.min_bytes = (int64_t)lo;
	w.max_bytes = (int64_t)hi;
	if (msccl_nearest_size(&w, w.min_bytes, 1) < 0)
		return -1;
	BuildOpts o = {.collective = c->sched[k]->name, .min_bytes = w.min_bytes,
	               .max_bytes = w.max_bytes, .proto = mproto_name[pp->proto],
	               .instances = pp->instances, .channels = pp->channels, .split_tbs = pp->split};
	if (msccl_write(dg, c->sched[k], &w, &o, staged, memout_open(&f->m)) != 0) {
		memout_drop(&f->m);
		return -1;
	}
	*instances = pp->instances;
	return 0;
}

/* The candidates of t at size k, fastest first (ties by index), that ran
 * there: into order; their count. */
static int
ranked(const Tuned *t, int k, int *order)
{
	int n = 0;
	for (int c = 0; c < t->ncand; c++)
		if (tune_rank_time(t, c, k) >= 0 && t->cand[c].sched[k])
			order[n++] = c;
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && tune_rank_time(t, order[j], k) < tune_rank_time(t, order[j - 1], k);
		     j--) {
			int x = order[j];
			order[j] = order[j - 1];
			order[j - 1] = x;
		}
	return n;
}

/* Builds every file of the plan's MSCCL directory in memory, and records
 * in each Tuned the instances each range was built with (for the plan's
 * text, printed after). 0, or -1 after reporting. */
static int
build_dir_files(Diag *dg, Tuner *u, DirFile **out, int *nout)
{
	const TuneArgs *a = u->a;
	int n = 0, cap = 0;
	DirFile *f = NULL;
	*out = NULL, *nout = 0;
	int *order = xmalloc((size_t)TUNE_MAX_CANDS * sizeof *order);
	for (int i = 0; i < u->nt; i++) {
		Tuned *t = &u->t[i];
		if (!tune_msccl_kind(t->s->kind))
			continue;
		for (int k = 0, r = 0; k < a->nsize; r++) {
			int j = tune_range_end(a, t, k, true);
			double lo, hi;
			tune_range_of(a, k, j, &lo, &hi);
			if (n == cap) {
				cap = cap ? 2 * cap : 8;
				f = xrealloc(f, (size_t)cap * sizeof *f);
			}
			memset(&f[n], 0, sizeof f[n]);
			MscclPick pk = tune_msccl_pick(a, t, k);
			n++;
			/* the plan's choice; if it does not fit MSCCL's limits, the next
			 * fastest candidate at the range's first size that does, with a
			 * note: one candidate never fails the plan */
			int nr = ranked(t, k, order), inst = 0, used = t->best[k];
			int rc = emit_ranked(dg, u, t, k, lo, hi, &f[n - 1], &inst);
			for (int c = -1; rc != 0 && c < nr; c++) {
				int cand = c < 0 ? t->best[k] : order[c];
				if (c >= 0 && cand == t->best[k])
					continue;
				rc = emit_range(dg, a, t->cand[cand].sched[k], &pk, lo, hi, true, &f[n - 1],
				                &inst);
				used = cand;
			}
			if (rc != 0) { /* nothing fits: the choice's own errors */
				used = t->best[k];
				rc = emit_range(dg, a, t->cand[used].sched[k], &pk, lo, hi, false, &f[n - 1],
				                &inst);
			}
			/* in path order, the executor's: the range's number first, then
			 * the schedule the file holds */
			char choice[128];
			choice_slug(t->cand[used].key, choice, sizeof choice);
			snprintf(f[n - 1].name, sizeof f[n - 1].name, "%s-%02d-%s-%.0f-%.0f.xml", t->s->name,
			         r, choice, lo, hi);
			if (rc == 0 && used != t->best[k])
				note_at(dg, t->s->loc, "%s, the plan's choice for %.0f..%.0f bytes of '%s', does "
				        "not fit MSCCL's limits (collc build --target msccl says why); %s holds "
				        "the fastest that fits, %s", t->cand[t->best[k]].label[k], lo, hi,
				        t->s->name, f[n - 1].name, t->cand[used].label[k]);
			if (rc == 0) {
				say_file(f[n - 1].name, &f[n - 1].m, &pk, inst, a->channels > 0);
				/* closed before f grows: realloc moves the MemOut its stream
				 * writes back to (ASan: use after free under make SAN=1 test) */
				memout_close(&f[n - 1].m);
				for (int m = k; m <= j; m++) {
					t->built_instances[m] = inst;
					t->built_choice[m] = used;
				}
			}
			if (rc != 0) {
				note_at(dg, t->s->loc, "the plan's choice for %.0f..%.0f bytes of '%s' is %s", lo, hi,
				        t->s->name, t->cand[t->best[k]].label[k]);
				*out = f, *nout = n;
				free(order);
				return -1;
			}
			k = j + 1;
		}
	}
	free(order);
	*out = f, *nout = n;
	if (n == 0) {
		error_file(dg, "tune: --msccl-dir: no collective of the plan is one MSCCL runs "
		           "(allreduce, reduce_scatter, allgather, alltoall)");
		return -1;
	}
	return 0;
}

/* Writes the files build_dir_files built (rc its result) and frees them. */
static int
write_msccl_dir(Diag *dg, const Tuner *u, DirFile *f, int n, int rc)
{
	/* built beside the target and moved into place whole: the executor
	 * loads every file in it, so no file of an earlier plan may stay */
	static const char *const written[] = {".xml", NULL};
	const char *target = u->a->msccl_dir;
	OutDir dir;
	char err[512];
	if (rc == 0 && outdir_begin(&dir, target, written, err, sizeof err) != 0) {
		error_file(dg, "%s", err);
		rc = 1;
	}
	bool staged = rc == 0;
	for (int i = 0; i < n; i++) {
		if (rc != 0)
			memout_drop(&f[i].m);
		else if (outdir_write(dg, &dir, f[i].name, &f[i].m) != 0)
			rc = 1;
	}
	if (rc == 0 && outdir_commit(&dir, err, sizeof err) != 0) {
		error_file(dg, "%s", err);
		rc = 1;
	} else if (rc != 0 && staged) {
		outdir_abort(&dir); /* no half a plan */
	}
	free(f);
	if (rc == 0)
		fprintf(stderr, "tune: %d MSCCL files in %s; run with MSCCL_ALGO_DIR=%s\n", n, target,
		        target);
	return rc;
}

/* ---- deployment: an MPI library ---- */

/* The plan as mpi_lib_write's entries: a range of a collective runs its
 * choice, under the name NAME_R (the range's number: two ranges may run
 * schedules of one name, or one schedule). The first range reaches down to
 * 0 bytes and the last up without bound: a library takes every size of
 * what the plan covers (its kinds, rank counts and roots); calls of
 * anything else pass through to the MPI's own collective. */
static int
write_mpi_lib(Diag *dg, Tuner *u)
{
	const TuneArgs *a = u->a;
	int n = 0, cap = 0;
	MpiLibEntry *e = NULL;
	for (int i = 0; i < u->nt; i++) {
		const Tuned *t = &u->t[i];
		for (int k = 0, r = 0; k < a->nsize; r++) {
			int j = tune_range_end(a, t, k, false);
			double lo, hi;
			tune_range_of(a, k, j, &lo, &hi);
			const Sched *chosen = t->cand[t->best[k]].sched[k];
			Sched *x = NEW(&u->arena, Sched);
			/* simulated in the rank form (no group: a copy's routes made as it is
			 * expanded), which the MPI target writes out explicitly */
			*x = chosen->base && !chosen->group ? *sched_expand(dg, &u->arena, chosen) : *chosen;
			const Sched *listed = sched_listed(dg, &u->arena, x); /* a repeated form */
			if (!listed) {
				free(e);
				return -1;
			}
			*x = *listed;
			x->name = arena_printf(&u->arena, "%s_%d", t->s->name, r);
			if (n == cap) {
				cap = cap ? 2 * cap : 8;
				e = xrealloc(e, (size_t)cap * sizeof *e);
			}
			bool rooted = KIND(x->kind) & KINDS_ROOTED;
			/* below the plan, its smallest size's choice; above, its largest's */
			e[n++] = (MpiLibEntry){.kind = x->kind, .nrank = x->nrank, .root = rooted ? x->root : -1,
			                       .lo = k == 0 ? 0 : (int64_t)lo,
			                       .hi = j + 1 == a->nsize ? MPI_LIB_ANY_SIZE : (int64_t)hi + 1,
			                       .sched = x};
			k = j + 1;
		}
	}
	MpiLibPlan plan = {.nentry = n, .entry = e};
	int rc = mpi_lib_write_dir(dg, &plan, a->prefix ? a->prefix : "collc", a->mpi_lib) != 0;
	free(e);
	if (rc == 0)
		fprintf(stderr, "tune: %d ranges in %s/%s.c and %s.h (docs/mpi.md)\n", n, a->mpi_lib,
		        a->prefix ? a->prefix : "collc", a->prefix ? a->prefix : "collc");
	return rc;
}

/* ---- the command ---- */

static int
cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static int
tune_opt(void *ctx, const char *name, const char *value)
{
	TuneArgs *a = ctx;
	if (strcmp(name, "sizes") == 0) {
		return sizes_opt("tune", value, a->sizes, &a->nsize);
	} else if (strcmp(name, "mode") == 0 || strcmp(name, "sync") == 0) {
		a->mode_set |= name[0] == 'm';
		return sim_mode_opt("tune", name, value, &a->opts);
	} else if (strcmp(name, "collective") == 0) {
		a->collective = value;
	} else if (strcmp(name, "plot") == 0) {
		a->plot = value;
	} else if (strcmp(name, "msccl-dir") == 0) {
		a->msccl_dir = value;
	} else if (strcmp(name, "mpi-lib") == 0) {
		a->mpi_lib = value;
	} else if (strcmp(name, "prefix") == 0) {
		a->prefix = value;
	} else if (strcmp(name, "output") == 0) {
		a->out = value;
	} else if (strcmp(name, "csv") == 0) {
		a->csv = true;
	} else if (strcmp(name, "json") == 0) {
		a->json = true;
	} else if (strcmp(name, "proto") == 0) {
		int k = cli_choice("tune", name, value, mproto_name, NPROTO);
		if (k < 0)
			return 2;
		a->proto = mproto_name[k];
	} else if (strcmp(name, "instances") == 0 || strcmp(name, "channels") == 0) {
		int v = cli_count(value, 1, 32);
		if (v < 0)
			return usage_error("tune: --%s takes 1..32", name);
		*(name[0] == 'i' ? &a->instances : &a->channels) = v;
	} else if (strcmp(name, "define") == 0) {
		return define_opt("tune", &a->defs, value);
	}
	return 0;
}

static const CliOpt tune_opts[] = {
	{"sizes", 0, "A..B|A,B,..", "vector sizes: powers of two from A to B, or a list "
	                            "(default 4KiB..256MiB)"},
	SIM_MODE_OPTS,
	{"collective", 0, "NAME", "only the collective NAME"},
	DEFINE_OPT,
	{"csv", 0, NULL, "print CSV: a row per size with its range"},
	{"json", 0, NULL, "print JSON: per size every candidate's time, and the plan"},
	{"output", 'o', "OUT", "write the table, CSV or JSON to OUT"},
	{"plot", 0, "G.svg", "plot every candidate's busbw and the chosen envelope"},
	{"msccl-dir", 0, "DIR", "write the plan as MSCCL XML, a file per range, for MSCCL_ALGO_DIR"},
	{"mpi-lib", 0, "DIR", "write the plan as an MPI library, DIR/P.c and DIR/P.h (docs/mpi.md)"},
	{"prefix", 0, "P", "--mpi-lib: the library's names start with P_ (default collc)"},
	{"proto", 0, "P", "MSCCL files: Simple, LL or LL128 for every range (default: per range)"},
	{"instances", 0, "N", "MSCCL files: N instances for every range (default: per range)"},
	{"channels", 0, "N", "MSCCL files: N channels per instance (default: the fastest program's)"},
};

static int cmd_tune(Diag *, int argc, char **argv);

const CliCommand cli_tune = {
	"tune", "FILE.coll",
	"choose the fastest schedule per size: a plan of byte ranges",
	"For each collective, simulates its own schedule, the file's other collectives of\n"
	"the same kind on the same ranks, and every library algorithm that applies, at\n"
	"every size; prints per size the choice, its time and busbw, the runner-up and\n"
	"its margin, then the plan: neighbouring sizes with the same choice merged into\n"
	"byte ranges (docs/cli.md).\n",
	tune_opts, countof(tune_opts), cmd_tune, NULL};

static int
tune_file(Diag *dg, Tuner *u, Input *in)
{
	TuneArgs *a = u->a;
	in->prog.compact = true;
	in->prog.listed = a->opts.sync == SIM_DEPS; /* packing's segments listed */
	in->only = a->collective;
	in->defs = &a->defs;
	int rc = load(dg, a->path, in, true, a->sizes[0]);
	u->sized = (SizedFile){.path = a->path, .base = a->sizes[0], .defs = &a->defs,
	                       .listed = in->prog.listed};
	/* before any simulation: a directory holds one plan per kind and ranks */
	for (int i = 0; rc == 0 && a->msccl_dir && i < in->prog.nsched; i++)
		rc = shadowed_plan(dg, &in->prog, a->collective, i) != 0;
	if (rc == 0) {
		u->t = arena_array(&u->arena, (size_t)in->prog.nsched + 1, sizeof *u->t);
		for (int i = 0; rc == 0 && i < in->prog.nsched; i++)
			if (!a->collective || strcmp(in->prog.sched[i]->name, a->collective) == 0)
				rc = tune_one(dg, u, &in->prog, in->prog.sched[i]) != 0;
	}
	if (u->shown)
		fputs("\r\033[K", stderr);
	if (rc == 0 && u->nt == 0) {
		if (a->collective)
			no_schedule_named(dg, &in->prog, a->collective);
		else
			error_file(dg, "no schedule is built from this file");
		rc = 1;
	}
	return rc;
}

static int
cmd_tune(Diag *dg, int argc, char **argv)
{
	TuneArgs a = {0};
	a.nsize = parse_size_list("4KiB..256MiB", a.sizes, MAX_SIZES, NULL, 0);
	int rc = cli_parse(&cli_tune, argc, argv, &a, tune_opt, &a.path);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (!a.path)
		return usage_error("tune: give a .coll file");
	if (strcmp(a.path, "-") == 0)
		return usage_error("tune reads a .coll file by name, not from stdin");
	if (a.plot && !is_svg_name(a.plot))
		return usage_error("tune: plots are written as SVG: give --plot a name ending in .svg");
	/* a plan for the MSCCL executor is ranked as the executor runs a schedule:
	 * by dependencies, a thread block per peer and channel (docs/sim.md 3) */
	/* ranges need the sizes in order, each once */
	qsort(a.sizes, (size_t)a.nsize, sizeof *a.sizes, cmp_double);
	int n = 0;
	for (int k = 0; k < a.nsize; k++)
		if (n == 0 || a.sizes[k] != a.sizes[n - 1])
			a.sizes[n++] = a.sizes[k];
	a.nsize = n;
	Tuner u = {.a = &a, .tty = isatty(2), .progs = a.msccl_dir ? prog_cache_new() : NULL};
	Input in = {0};
	rc = tune_file(dg, &u, &in);
	/* the MSCCL files are built before the plan is printed, which shows
	 * the instances they were built with */
	DirFile *dirf = NULL;
	int ndirf = 0;
	if (rc == 0 && a.msccl_dir && build_dir_files(dg, &u, &dirf, &ndirf) != 0)
		rc = 1;
	if (rc == 0) {
		MemOut m;
		FILE *f = memout_open(&m);
		(a.json ? tune_print_json : a.csv ? tune_print_csv : tune_print_table)(&u, f);
		rc = write_output(a.out, &m);
	}
	if (rc == 0 && a.plot)
		rc = tune_plot(dg, &u);
	if (a.msccl_dir) /* written if all went well; freed in any case */
		rc = write_msccl_dir(dg, &u, dirf, ndirf, rc);
	if (rc == 0 && a.mpi_lib)
		rc = write_mpi_lib(dg, &u);
	for (int i = 0; i < u.nt; i++) {
		routes_free(&u.t[i].routes);
		pack_memo_free(u.t[i].pack_memo);
	}
	sized_free(&u.sized);
	prog_cache_free(u.progs);
	input_free(&in);
	arena_free(&u.arena);
	return rc;
}
