/*
 * to_msccl_search.c: the channel and width search. Needs a schedule the
 * bound did not refuse, its layout and bound (to_msccl_bound.c).
 * Establishes one program that fits the executor's limits and passes every
 * check (or the error of the attempt closest to fitting): one width built
 * by the passes in order (build), the widths tried (1, 2, 4, ... channels
 * per instance, each with every connection spread over the channels, then
 * pinned to one), plain or staged (first_search), and when the program
 * stops chunk by chunk at large sizes, the second search (lower_checked).
 * The bound says which search comes first and which widths are not worth
 * building, so that one program is normally built and checked.
 *
 * The passes of one width (build): place_chunks, lower_instance per
 * instance (start_instance, then per round plan_chains, lower_sends,
 * lower_receives, merge_chains; copy_home) and keep_flows, form_tbs
 * (assign_tbs, fuse, fuse_re), and per rank plan_rank (live_positions,
 * cross_tb_waits, number_steps), then nodes_over, emit_rank, mark_hasdep
 * and fill_header; build_best keeps the better of a width with flows and
 * without.
 */
#include <stdlib.h>
#include <string.h>

#include "to_msccl.h"

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
build(Diag *dg, Arena *a, const Sched *s, const Layout *lay, const BuildOpts *o, Width wd, Built *b)
{
	Lower L0 = {.diag = dg, .a = a, .s = s, .R = s->nrank, .inst = o->instances > 0 ? o->instances : 1,
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
build_best(Diag *dg, Arena *ta, const Search *S, Width wd, Built *b)
{
	wd.flows = !wd.pinned && !wd.unpaired;
	int rc = build(dg, ta, S->s, S->lay, S->o, wd, b);
	if (rc < 0 || b->flows == 0 || b->any_width || (rc == 0 && total_steps(&b->p) == b->floor))
		return rc; /* no flows, or none can do better (a ring: every hop fused, no nop) */
	Arena ta2 = {0};
	Built *b2 = xcalloc(1, sizeof *b2);
	wd.flows = false;
	S->stats->widths++;
	int rc2 = build(dg, &ta2, S->s, S->lay, S->o, wd, b2);
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

/* How a width's connections take its channels: each spread over them (the
 * peers' sum staggers the channels, so a rank's many peers spread), or each
 * pinned to one (fewer tbs for many peers; Lower.pinned). */
typedef enum ConnMode { CONN_SPREAD, CONN_PINNED, NCONN_MODE } ConnMode;

/* The order search_widths tries the modes in at each width: spread first. */
static const ConnMode conn_order[NCONN_MODE] = {CONN_SPREAD, CONN_PINNED};

/* Each mode in words, for the errors. */
static const char *const conn_how[NCONN_MODE] = {
	[CONN_SPREAD] = "each connection spread over the channels",
	[CONN_PINNED] = "each connection pinned to one channel",
};

/* One attempt of search_widths: nch channels per instance, in a mode. */
typedef struct Try {
	int nch;
	ConnMode mode;
} Try;

/* The attempts search_widths makes, each width in every mode (conn_order):
 * the given one, or 1, 2, 4, ... channels per instance up to the
 * executor's. */
static int
width_tries(const BuildOpts *o, int inst, Try tries[16])
{
	int widths[8], nwidth = 0, ntry = 0;
	if (o->channels > 0 && (int64_t)o->channels * inst > MSCCL_MAX_CHANNELS)
		return 0; /* the instances copy every channel: too many */
	if (o->channels > 0)
		widths[nwidth++] = o->channels;
	else
		for (int nch = 1; nch * inst <= MSCCL_MAX_CHANNELS; nch *= 2)
			widths[nwidth++] = nch;
	for (int w = 0; w < nwidth; w++)
		for (int m = 0; m < NCONN_MODE; m++)
			tries[ntry++] = (Try){widths[w], conn_order[m]};
	return ntry;
}

/* Why width_tries found no width: the instances alone, or times the
 * --channels given, are over the executor's channels. */
static void
no_width(Diag *dg, const Sched *sched, const BuildOpts *o, int inst)
{
	if (o->channels > 0)
		error_at(dg, sched->loc,
		         "'%s': --instances %d x --channels %d is %lld channels; the executor runs at "
		         "most %d",
		         sched->name, inst, o->channels, (long long)inst * o->channels,
		         MSCCL_MAX_CHANNELS);
	else
		error_at(dg, sched->loc, "'%s': --instances %d leaves no channel: at most %d channels",
		         sched->name, inst, MSCCL_MAX_CHANNELS);
}

/* Builds the program at the first width that fits, sending steps of at most
 * maxcnt chunks; with pieces it must also pass rule 14 chunk by chunk.
 * 0, -1 after an error, or (without pieces) 1: the program fits and passes
 * with a message per step but stops chunk by chunk (check_width). */
static int
search_widths(Diag *dg, const Search *S, int maxcnt, bool unpaired, bool mirror, bool pieces, MProg *out)
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
	Try tries[16];
	int ntry = width_tries(o, inst, tries);
	if (ntry == 0) {
		no_width(dg, sched, o, inst);
		return -1;
	}
	char why[NCONN_MODE][400] = {"", ""}; /* --channels: each mode's limit */
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
		bool last = t == ntry - 1, pinned = tries[t].mode == CONN_PINNED;
		int nch = tries[t].nch;
		if (pinned && nch == 1 && !last)
			continue; /* one channel: pinned is the same program */
		if (!last && (nch < skip_below || (pinned && pinned_over)))
			continue;
		if (pieces && pinned && pair_over) {
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
		    msccl_bound_hopeless(S->bound, nch, inst, pinned, unpaired, maxcnt,
		                         maxsteps)) {
			double excess = msccl_bound_excess(S->bound, maxcnt, maxsteps);
			if (nch == 1 && excess > 1)
				skip_below = excess / width_slack;
			if (last)
				return -1;
			continue;
		}
		if (!last)
			diag_mute(dg, true); /* a nesting count: undone below */
		memset(&b, 0, sizeof b);
		/* each attempt in its own arena: only the one written is kept */
		Arena ta = {0};
		S->stats->widths++;
		Width wd = {nch, pinned, maxcnt, unpaired, mirror, false, S->staged};
		int rc = build_best(dg, &ta, S, wd, &b);
		if (rc == 1 && b.any_width && !last) {
			diag_mute(dg, false);
			last = true;
		}
		if (rc == 1 && b.by_steps && !pinned)
			skip_below = nch * b.excess / width_slack;
		pinned_over |= rc == 1 && b.by_steps && pinned;
		/* one channel or pinned, the two directions of an exchange share a
		 * tb whose ops are the same at every width: over the step limit
		 * with its ops alone, no pinned width fits, the last one neither */
		pair_over |= rc == 1 && b.pair_over && (nch == 1 || pinned);
		if (rc == 1 && !b.any_width) {
			snprintf(why[tries[t].mode], sizeof why[0], "%s", b.why);
			if (closest_excess == 0 || b.excess < closest_excess) {
				closest_excess = b.excess;
				closest_try = t;
				snprintf(closest, sizeof closest, "%s", b.why);
			}
		}
		if (rc == 1 && last && b.any_width)
			error_at(dg, sched->loc, "'%s' does not fit MSCCL's limits: %s", sched->name, b.why);
		else if (rc == 1 && last && o->channels > 0) {
			ConnMode c = tries[closest_try].mode;
			ConnMode oc = c == CONN_SPREAD ? CONN_PINNED : CONN_SPREAD;
			error_at(dg, sched->loc, "'%s' does not fit MSCCL's limits over %d channel%s: %s",
			         sched->name, nch * inst, nch * inst == 1 ? "" : "s", closest);
			if (why[oc][0] && strcmp(why[oc], closest) != 0)
				note_at(dg, sched->loc, "that is with %s; with %s: %s", conn_how[c], conn_how[oc],
				        why[oc]);
		} else if (rc == 1 && last)
			error_at(dg, sched->loc, "'%s' does not fit MSCCL's limits at any width up to %d "
			         "channels; the closest, %d channel%s with %s: %s", sched->name,
			         nch * inst, tries[closest_try].nch * inst,
			         tries[closest_try].nch * inst == 1 ? "" : "s", conn_how[tries[closest_try].mode],
			         closest);
		S->stats->programs += rc == 0;
		stops = rc == 0 ? check_width(dg, &b.p, sched, pieces, last) : 0;
		if (stops < 0)
			rc = -1;
		if (!last)
			diag_mute(dg, false);
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
first_search(Diag *dg, Search *S, MProg *out)
{
	diag_mute(dg, true);
	int stops = -1;
	bool first = S->staged;
	for (int i = 0; i < 2 && stops < 0; i++) {
		S->staged = i == 0 ? first : !first;
		if (S->staged && !staging_helps(S->s))
			continue;
		if (S->staged && search_widths(dg, S, MSCCL_MAX_COUNT - 1, true, false, true, out) == 0)
			stops = 0;
		else
			stops = search_widths(dg, S, MSCCL_MAX_COUNT - 1, false, false, false, out);
	}
	if (stops == 0 && first) {
		/* staged first: a plain program that fits as it is and has fewer
		 * steps (no copies) is kept instead */
		MProg plain;
		S->staged = false;
		if (search_widths(dg, S, MSCCL_MAX_COUNT - 1, false, false, false, &plain) == 0 &&
		    total_steps(&plain) < total_steps(out))
			*out = plain;
		else
			S->staged = true;
	}
	if (stops < 0)
		S->staged = false;
	diag_mute(dg, false);
	if (stops < 0) {
		S->skip = false;
		stops = search_widths(dg, S, MSCCL_MAX_COUNT - 1, false, false, false, out);
		S->skip = true;
	}
	return stops;
}

/* The program with tbs that only send or only receive (BuildOpts.split_tbs),
 * checked chunk by chunk: a tb that sends to a peer and receives from it
 * runs a send queued behind a receive that waits for its slice and the
 * step's latency, where the schedule's messages to the peer leave as they
 * are ready. On the 2 x 8 cluster at 16 MiB packing's LL128 program takes
 * 112.64 us with paired tbs on 4 channels and 86.97 with split ones (its
 * schedule as the executor runs it: 92.94; docs/sim.md 7). Staged first
 * where the search would be, then plain. 0, or -1 (reported unless
 * muted). */
static int
split_search(Diag *dg, Search *S, MProg *out)
{
	bool staged = S->staged;
	diag_mute(dg, true);
	int rc = -1;
	for (int i = 0; i < 2 && rc != 0; i++) {
		S->staged = i == 0 ? staged : false;
		if (i == 1 && !staged)
			break;
		rc = search_widths(dg, S, MSCCL_MAX_COUNT - 1, true, false, true, out);
	}
	S->stats->staged = S->staged;
	diag_mute(dg, false);
	if (rc != 0)
		error_at(dg, S->sched->loc, "'%s' does not fit MSCCL's limits with thread blocks that "
		         "only send or only receive at any width", S->sched->name);
	return rc == 0 ? 0 : -1;
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
int
lower_checked(Diag *dg, Arena *a, const Sched *sched, const Layout *layp, const MscclBound *bound,
              const BuildOpts *o, MProg *out, MscclStats *stats)
{
	Layout lay = *layp;
	Search S = {a, sched, sched->base ? sched_expand(dg, a, sched) : sched, &lay, bound, o, true,
	            stats, false};
	S.staged = staging_helps(S.s) && msccl_bound_staging_gain(bound) >= STAGING_FIRST_GAIN;
	if (o->split_tbs)
		return split_search(dg, &S, out);
	int exchange = bound->exchange_run[o->instances > 1];
	bool stops_likely = o->channels <= 0 && exchange > msccl_capacity(build_proto(o));
	int stops = stops_likely ? 1 : first_search(dg, &S, out);
	stats->staged = S.staged;
	if (stops <= 0)
		return stops;
	diag_mute(dg, true);
	bool safe = false;
	for (int m = 3; !safe && m >= 0; m--) {
		MProg other;
		bool unpaired = m == 3, mirror = m == 0;
		if (search_widths(dg, &S, unpaired || mirror ? MSCCL_MAX_COUNT - 1 : m, unpaired, mirror,
		                  true, &other) == 0) {
			*out = other;
			safe = true;
		}
	}
	stats->staged = S.staged;
	diag_mute(dg, false);
	if (safe)
		return 0;
	if (stops_likely && (stops = first_search(dg, &S, out)) <= 0) {
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
	error_at(dg, sched->loc, "'%s' does not fit MSCCL's limits without a deadlock at large "
	         "sizes: its sending steps of up to %d chunks stop when the executor moves them "
	         "a chunk per call (rule 14: a connection holds %d calls), and with tbs that "
	         "only send or only receive, steps of 1 or 2 chunks, or exchanges received "
	         "first on one side, it exceeds the limits or still stops at every width",
	         sched->name, largest, msccl_capacity(out->proto));
	return -1;
}
