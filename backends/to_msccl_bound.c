/*
 * to_msccl_bound.c: schedules that can never fit the MSCCL executor's limits,
 * refused before to_msccl_search.c builds a single width. It needs a verified
 * schedule (explicit or symmetric, not expanded) and its shared layout
 * (ir/layout.c); it establishes nothing but a diagnostic: 0 when the
 * schedule may fit, -1 after reporting a lower bound over a limit.
 *
 * Why the bound holds whatever the lowering chooses (channels, spread or pinned,
 * paired or unpaired tbs, sending steps of 71, 2 or 1 chunks):
 *  - every message of every instance is lowered on its own, one send step
 *    per run of chunks that lie at consecutive offsets of the receiver's
 *    home (and of the sender's buffer), at most 71 chunks a run; a chunk
 *    with no home on the receiver (a partial sum in scratch, an alltoall
 *    relay, a reduce's non-root) is a run of its own. Home offsets grow
 *    strictly with the layout's positions, so a message takes at least
 *    the sum, over the maximal blocks of consecutive positions of its
 *    chunks, of ceil(block / 71) steps. Grouping messages coarser than
 *    to_msccl_ops.c does (by round, sender, receiver and op only) can only merge
 *    blocks, so the count stays a lower bound;
 *  - a send step sits on a thread block whose send peer is its receiver
 *    (fusion folds it into a receive step of that same tb), a receive step
 *    on one whose receive peer is its sender, and a tb has one send peer,
 *    one receive peer and at most 64 steps (rule 7; 256 legacy). So a
 *    rank needs at least sum over peers of ceil(steps to that peer / 64)
 *    tbs, the same for receives, and ceil(max(sends, receives) / 64),
 *    against the 64 tbs per rank collc writes (rule 4);
 *  - a connection has at most one tb per channel (rule 6), so it carries at
 *    most (channels x 64) steps, with at most 32 channels in all.
 * An allgather or reduce-scatter may be lowered staged (to_msccl_stage.c: receives
 * land in scratch in arrival order, its input copied there first), where a
 * message's chunks may be one run whatever their homes: it is refused only
 * if it cannot fit even with every (round, sender, receiver) one run of at
 * most 71 chunks a step (MscclBound.staged).
 * A symmetric schedule is bounded on one rank of each orbit of its group
 * (a few of them): any rank's need is a lower bound on the worst rank's,
 * and counting a rank's messages costs one pass over the copies of the
 * base transfers, keeping only those that touch the chosen ranks.
 * The same counts, made for sending steps of at most 71, 2 and 1 chunks
 * (the maxcnt the lowering uses), tell per width whether a width can fit
 * at all (msccl_bound_hopeless): to_msccl_search.c's searches skip those that
 * cannot, and one channel's count says which wider widths a build there
 * would have ruled out (msccl_bound_excess). And they give the search its
 * estimate of the configuration: the longest runs two ranks send each
 * other in one round (exchange_run) say whether paired tbs, both sending
 * first, stop chunk by chunk, so that the search which cannot is skipped.
 * Cost: the group's images of every node, one pass over the copies and a
 * sort of the chosen ranks' few; 64x16 SP (8.4 million copies) in about
 * 0.05 s and 7 MB.
 */
#include <stdlib.h>
#include <string.h>

#include "to_msccl.h"

enum { BOUND_MAX_REPS = 16 }; /* ranks of distinct orbits bounded, at most */

/* The sending steps' largest counts the searches lower with (first_search, lower_checked). */
const int msccl_bound_maxcnt[MSCCL_BOUND_NCNT] = {MSCCL_MAX_COUNT - 1, 2, 1};

/* One chunk a message moves: grouped by (round, src, dst, op), then the
 * position that decides its runs (-1: a run of its own). */
typedef struct BoundCopy {
	int round, src, dst, op, key;
	int skey; /* where the sender holds it, in an order its runs follow; -1 unknown */
} BoundCopy;

static int
copy_cmp(const void *a, const void *b)
{
	const BoundCopy *x = a, *y = b;
	const int kx[] = {x->round, x->src, x->dst, x->op, x->key};
	const int ky[] = {y->round, y->src, y->dst, y->op, y->key};
	for (int i = 0; i < 5; i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	return 0;
}

/* Where chunk c lands on receiver d, in an order in which to_msccl_layout.c's home
 * offsets grow strictly; -1 where it has no home there (scratch). */
static int
run_key(const Sched *s, const Layout *lay, int c, int d)
{
	switch (s->kind) {
	case CK_ALLTOALL:
		return s->a2a_dst[c] == d ? s->a2a_src[c] * lay->per + lay->run_piece[c] : -1;
	case CK_REDUCE_SCATTER:
		return s->owner[c] == d ? lay->run_pos[c] : -1;
	case CK_REDUCE:
		return d == s->root ? lay->run_pos[c] : -1;
	default:
		return lay->run_pos[c];
	}
}

/* Runs of one (round, src, dst) seen while counting: its longest run. */
typedef struct BoundGroup {
	int round, src, dst;
	int run[2]; /* one instance; several (runs end at a block of the layout) */
} BoundGroup;

/* The counts being made: steps per connection at each maxcnt, and the
 * groups with their longest run (at 71 chunks a step). */
typedef struct Counting {
	int R;
	int block;  /* several instances interleave blocks of this many positions (0: none) */
	long *conn[MSCCL_BOUND_NCNT];
	long *staged;  /* steps if each group were one run (71 chunks a step), or NULL */
	BoundGroup *group;
	long ngroup, capgroup;
} Counting;

static void
add_group(Counting *k, const BoundCopy *c, const long *run)
{
	BoundGroup *last = k->ngroup ? &k->group[k->ngroup - 1] : NULL;
	if (last && last->round == c->round && last->src == c->src && last->dst == c->dst) {
		for (int w = 0; w < 2; w++) /* another op, same peers */
			last->run[w] = run[w] > last->run[w] ? (int)run[w] : last->run[w];
		return;
	}
	if (k->ngroup == k->capgroup) {
		k->capgroup = k->capgroup ? 2 * k->capgroup : 1024;
		k->group = xrealloc(k->group, (size_t)k->capgroup * sizeof *k->group);
	}
	k->group[k->ngroup++] = (BoundGroup){c->round, c->src, c->dst, {(int)run[0], (int)run[1]}};
}

static bool
same_group(const BoundCopy *x, const BoundCopy *y)
{
	return x->round == y->round && x->src == y->src && x->dst == y->dst && x->op == y->op;
}

/* Whether copy v[i] continues the run of v[i - 1] (len chunks so far). */
static bool
continues(const BoundCopy *v, long i, long len, int maxcnt)
{
	return i > 0 && same_group(&v[i], &v[i - 1]) && v[i].key >= 0 && v[i - 1].key >= 0 &&
	       v[i].key == v[i - 1].key + 1 && len < maxcnt;
}

/* Where sender d holds chunk c, in an order in which to_msccl_ops.c's runs at the
 * sender grow, when the layout alone says so: an alltoall's own chunk in
 * its input, an allreduce's, allgather's or broadcast's chunk at its
 * position (in i or o); -1 where lowering decides (a relayed or partially
 * reduced chunk in scratch). Only the estimate (exchange_run) uses it. */
static int
send_key(const Sched *s, const Layout *lay, int c, int d)
{
	switch (s->kind) {
	case CK_ALLTOALL:
		return s->a2a_src[c] == d ? s->a2a_dst[c] * lay->per + lay->run_piece[c] : -1;
	case CK_REDUCE_SCATTER:
	case CK_REDUCE:
		return -1;
	default:
		return lay->run_pos[c];
	}
}

/* Steps of the messages in v[0..n), sorted by copy_cmp: per group, its
 * blocks of consecutive keys at maxcnt chunks a step, added to conn; and
 * each group's longest run at the widest maxcnt, contiguous at the sender
 * too, with one instance and with several (whose homes interleave blocks
 * of k->block positions, so that a run ends with its block). */
static void
count_runs(const BoundCopy *v, long n, Counting *k)
{
	for (int m = 0; m < MSCCL_BOUND_NCNT; m++)
		for (long i = 0, len = 0; i < n; i++) {
			if (continues(v, i, len, msccl_bound_maxcnt[m])) {
				len++;
				continue;
			}
			k->conn[m][(long)v[i].src * k->R + v[i].dst]++;
			len = 1;
		}
	long len[2] = {0, 0}, run[2] = {0, 0}, size = 0;
	for (long i = 0; i < n; i++) {
		size++;
		bool sent = i > 0 && v[i].skey >= 0 && v[i - 1].skey >= 0 &&
		            v[i].skey == v[i - 1].skey + 1; /* contiguous at the sender too */
		bool block = k->block == 0 || (i > 0 && v[i].key / k->block == v[i - 1].key / k->block);
		for (int w = 0; w < 2; w++) {
			bool on = sent && (w == 0 || block) && continues(v, i, len[w], msccl_bound_maxcnt[0]);
			len[w] = on ? len[w] + 1 : 1;
			run[w] = len[w] > run[w] ? len[w] : run[w];
		}
		if (i + 1 == n || !same_group(&v[i + 1], &v[i])) {
			add_group(k, &v[i], run);
			run[0] = run[1] = 0;
			if (k->staged)
				k->staged[(long)v[i].src * k->R + v[i].dst] +=
				    (size + msccl_bound_maxcnt[0] - 1) / msccl_bound_maxcnt[0];
			size = 0;
		}
	}
}

static int
group_cmp(const void *a, const void *b)
{
	const BoundGroup *x = a, *y = b;
	const int kx[] = {x->round, x->src < x->dst ? x->src : x->dst,
	                  x->src < x->dst ? x->dst : x->src};
	const int ky[] = {y->round, y->src < y->dst ? y->src : y->dst,
	                  y->src < y->dst ? y->dst : y->src};
	for (int i = 0; i < 3; i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	return 0;
}

/* The longest run each way between two ranks in one round, the smaller of
 * the two: the largest such over the groups (0: nothing goes both ways),
 * with one instance (w 0) and several (w 1). Needs the groups sorted. */
static int
exchange_run(const Counting *k, int w)
{
	int best = 0;
	for (long i = 0, j; i < k->ngroup; i = j) {
		int up = 0, down = 0; /* lower rank to higher, and back */
		for (j = i; j < k->ngroup && group_cmp(&k->group[i], &k->group[j]) == 0; j++) {
			const BoundGroup *g = &k->group[j];
			int *dir = g->src < g->dst ? &up : &down;
			*dir = g->run[w] > *dir ? g->run[w] : *dir;
		}
		int both = up < down ? up : down;
		best = both > best ? both : best;
	}
	return best;
}

/* An explicit schedule: every message, every rank. */
static void
explicit_steps(const Sched *s, const Layout *lay, Counting *k)
{
	BoundCopy *v = NULL;
	long cap = 0;
	for (int i = 0; i < s->nmsg; i++) {
		const Msg *m = &s->msg[i];
		if (m->n > cap) {
			cap = 2L * m->n;
			v = xrealloc(v, (size_t)cap * sizeof *v);
		}
		for (int j = 0; j < m->n; j++)
			v[j] = (BoundCopy){m->round, m->src, m->dst, 0,
			                   run_key(s, lay, s->chunks[m->first + j], m->dst),
			                   send_key(s, lay, s->chunks[m->first + j], m->src)};
		sort_n(v, (size_t)m->n, sizeof *v, copy_cmp);
		count_runs(v, m->n, k);
	}
	free(v);
}

/* Marks one rank of each orbit of the group, the first BOUND_MAX_REPS. */
static void
choose_reps(const Sched *s, bool *chosen)
{
	const Group *g = s->group;
	bool *seen = xcalloc((size_t)s->nrank + 1, 1);
	for (int r = 0, nrep = 0; r < s->nrank && nrep < BOUND_MAX_REPS; r++) {
		if (seen[r])
			continue;
		chosen[r] = true;
		nrep++;
		for (int e = 0; e < g->order; e++) {
			int q = s->node_rank[group_node(g, e, s->rank_node[r])];
			if (q >= 0)
				seen[q] = true;
		}
	}
	free(seen);
}

/* A symmetric schedule: the copies of its base transfers sent or received
 * by the chosen ranks (sched_copies, the walk the layout makes too). */
static void
symmetric_steps(const Sched *s, const Layout *lay, const bool *chosen, Counting *cnt)
{
	XferCopy *x;
	long n = sched_copies(s, chosen, &x);
	BoundCopy *v = xmalloc(((size_t)n + 1) * sizeof *v);
	for (long i = 0; i < n; i++)
		v[i] = (BoundCopy){x[i].round, x[i].src, x[i].dst, x[i].op,
		                   run_key(s, lay, x[i].chunk, x[i].dst),
		                   send_key(s, lay, x[i].chunk, x[i].src)};
	free(x);
	if (n > 0)
		sort_n(v, (size_t)n, sizeof *v, copy_cmp);
	count_runs(v, n, cnt);
	free(v);
}

/* What rank r needs at least, from its steps per connection. */
typedef struct RankNeed {
	long sends, recvs, tbs;
	int peers;
	long conn;      /* its busiest sending connection's steps, */
	int conn_peer;  /* ... to this rank */
} RankNeed;

static RankNeed
rank_need(const long *conn, int R, int r, int inst, int maxsteps)
{
	RankNeed k = {.conn_peer = -1};
	long stb = 0, rtb = 0;
	for (int p = 0; p < R; p++) {
		long out = conn[(long)r * R + p] * inst, in = conn[(long)p * R + r] * inst;
		k.sends += out;
		k.recvs += in;
		k.peers += out > 0;
		stb += (out + maxsteps - 1) / maxsteps;
		rtb += (in + maxsteps - 1) / maxsteps;
		if (out > k.conn) {
			k.conn = out;
			k.conn_peer = p;
		}
	}
	long most = k.sends > k.recvs ? k.sends : k.recvs;
	k.tbs = (most + maxsteps - 1) / maxsteps;
	k.tbs = stb > k.tbs ? stb : k.tbs;
	k.tbs = rtb > k.tbs ? rtb : k.tbs;
	return k;
}

static void
report(Diag *dg, const Sched *s, const char *width, int r, RankNeed k, int maxsteps, int W)
{
	const char *base = "estimated from the schedule's messages before building: a step per "
	                   "run of at most 71 chunks at consecutive offsets";
	if (k.tbs > MSCCL_MAX_TBS)
		error_at(dg, s->loc, "'%s' does not fit MSCCL's limits %s: rank %d sends at least %ld "
		         "steps to %d peers and receives at least %ld (%s); a thread block has one "
		         "send peer, one receive peer and at most %d steps, so the rank needs at least "
		         "%ld thread blocks; the limit is %d per rank (rule 4)", s->name, width, r,
		         k.sends, k.peers, k.recvs, base, maxsteps, k.tbs, MSCCL_MAX_TBS);
	else
		error_at(dg, s->loc, "'%s' does not fit MSCCL's limits %s: rank %d sends at least %ld "
		         "steps to rank %d (%s); a connection has one thread block of at most %d "
		         "steps per channel, so it needs at least %ld channels; the limit is %d "
		         "(rules 6, 7)", s->name, width, r, k.conn, k.conn_peer, base, maxsteps,
		         (k.conn + maxsteps - 1) / maxsteps, W);
}

void
msccl_bound_build(const Sched *s, const Layout *lay, MscclBound *b)
{
	int R = s->nrank;
	memset(b, 0, sizeof *b);
	b->nrank = R;
	/* to_msccl_layout.c's blocks: an allreduce's instance takes the whole vector */
	Counting k = {.R = R, .block = s->kind == CK_ALLREDUCE ? 0 : lay->per};
	for (int m = 0; m < MSCCL_BOUND_NCNT; m++)
		b->conn[m] = k.conn[m] = xcalloc((size_t)R * R + 1, sizeof(long));
	if (s->kind == CK_ALLGATHER || s->kind == CK_REDUCE_SCATTER)
		b->staged = k.staged = xcalloc((size_t)R * R + 1, sizeof(long));
	b->chosen = xcalloc((size_t)R + 1, 1);
	if (lay->short_block >= 0)
		return; /* no layout: nothing counted, nothing refused (place_chunks names it) */
	if (s->base) {
		choose_reps(s, b->chosen);
		symmetric_steps(s, lay, b->chosen, &k);
	} else {
		memset(b->chosen, 1, (size_t)R);
		explicit_steps(s, lay, &k);
	}
	if (k.ngroup > 1)
		sort_n(k.group, (size_t)k.ngroup, sizeof *k.group, group_cmp);
	for (int w = 0; w < 2; w++)
		b->exchange_run[w] = exchange_run(&k, w);
	free(k.group);
}

double
msccl_bound_staging_gain(const MscclBound *b)
{
	long plain = 0, staged = 0;
	for (long k = 0; b->staged && k < (long)b->nrank * b->nrank; k++) {
		plain = b->conn[0][k] > plain ? b->conn[0][k] : plain;
		staged = b->staged[k] > staged ? b->staged[k] : staged;
	}
	return staged > 0 ? (double)plain / staged : 0;
}

void
msccl_bound_free(MscclBound *b)
{
	for (int m = 0; m < MSCCL_BOUND_NCNT; m++)
		free(b->conn[m]);
	free(b->staged);
	free(b->chosen);
}

int
msccl_refuse_unfit(Diag *dg, const Sched *s, const MscclBound *b, const BuildOpts *o)
{
	int R = s->nrank, inst = o->instances > 0 ? o->instances : 1;
	int maxsteps = o->legacy ? MSCCL_MAX_STEPS_LEGACY : MSCCL_MAX_STEPS;
	/* the widest the search tries: the channels of every instance */
	int W = o->channels > 0 ? o->channels * inst : 0;
	for (int nch = 1; o->channels <= 0 && nch * inst <= MSCCL_MAX_CHANNELS; nch *= 2)
		W = nch * inst;
	if (W == 0)
		return 0; /* search_widths names it */
	int worst = -1;
	RankNeed wk = {0};
	for (int r = 0; r < R; r++) {
		if (!b->chosen[r])
			continue;
		/* staged, a message may be one run in scratch: the weaker bound holds */
		RankNeed k = rank_need(b->staged ? b->staged : b->conn[0], R, r, inst, maxsteps);
		bool over = k.tbs > MSCCL_MAX_TBS || (k.conn + maxsteps - 1) / maxsteps > W;
		if (over && (worst < 0 || k.tbs > wk.tbs)) {
			worst = r;
			wk = k;
		}
	}
	if (worst < 0)
		return 0;
	char width[64];
	if (o->channels > 0)
		snprintf(width, sizeof width, "over %d channel%s", W, W == 1 ? "" : "s");
	else
		snprintf(width, sizeof width, "at any width");
	report(dg, s, width, worst, wk, maxsteps, W);
	return -1;
}

/* One chosen rank's connections at one width: whether the rank needs more
 * tbs than the limit, or more than 32 sending or receiving tbs on a
 * channel, or (pinned, or one channel) some tb more than maxsteps steps. A spread width over the step limit is not called
 * hopeless: search_widths learns from that failure which widths to skip
 * next (from one channel: msccl_bound_excess). */
static bool
rank_hopeless(const MscclBound *b, int r, int nch, int inst, bool pinned, bool unpaired,
              int cnt, int maxsteps)
{
	int R = b->nrank, per = pinned ? 1 : nch; /* channels a connection spreads over */
	long stbs = 0, rtbs = 0;
	int sends[MSCCL_MAX_CHANNELS] = {0}, recvs[MSCCL_MAX_CHANNELS] = {0}; /* tbs a channel */
	for (int p = 0; p < R; p++) {
		long out = b->conn[cnt][(long)r * R + p], in = b->conn[cnt][(long)p * R + r];
		/* run j of a connection goes to channel j + src + dst mod nch
		 * (pinned: all to one): min(runs, nch) tbs each way. Flows that
		 * keep one channel (to_msccl_ops.c keep_flows) may take fewer; a width
		 * skipped here is then one whose plain spread cannot fit, and
		 * the search goes on wider, so the skip costs a width, never a
		 * wrong program */
		if (per == 1 && (out > maxsteps || in > maxsteps))
			return true;
		stbs += out < per ? out : per;
		rtbs += in < per ? in : per;
		for (long j = 0; nch <= MSCCL_MAX_CHANNELS && j < out && j < per; j++)
			sends[(r + p + j) % nch]++;
		for (long j = 0; nch <= MSCCL_MAX_CHANNELS && j < in && j < per; j++)
			recvs[(r + p + j) % nch]++;
	}
	/* rule 6: a connection has a tb of its own on each channel it uses */
	for (int c = 0; c < nch && c < MSCCL_MAX_CHANNELS; c++)
		if (sends[c] > MSCCL_MAX_TBS_PER_CHAN || recvs[c] > MSCCL_MAX_TBS_PER_CHAN)
			return true;
	long tbs = unpaired ? stbs + rtbs : stbs > rtbs ? stbs : rtbs;
	return tbs * inst > MSCCL_MAX_TBS;
}

static int
cnt_index(int maxcnt)
{
	int m = 0;
	while (m + 1 < MSCCL_BOUND_NCNT && msccl_bound_maxcnt[m] != maxcnt)
		m++;
	return msccl_bound_maxcnt[m] == maxcnt ? m : 0;
}

bool
msccl_bound_hopeless(const MscclBound *b, int nch, int inst, bool pinned, bool unpaired,
                     int maxcnt, int maxsteps)
{
	int m = cnt_index(maxcnt);
	for (int r = 0; r < b->nrank; r++)
		if (b->chosen[r] && rank_hopeless(b, r, nch, inst, pinned, unpaired, m, maxsteps))
			return true;
	return false;
}

double
msccl_bound_excess(const MscclBound *b, int maxcnt, int maxsteps)
{
	long most = 0;
	const long *conn = b->conn[cnt_index(maxcnt)];
	for (long i = 0; i < (long)b->nrank * b->nrank; i++)
		most = conn[i] > most ? conn[i] : most;
	return (double)most / maxsteps;
}
