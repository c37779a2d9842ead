/*
 * alg_bridge.c: collectives on a reconfigurable optical ring (docs/algorithms.md,
 * "Bridge"). Every algorithm here is a list of steps, one round each, and a
 * circuit configuration per round; messages are routed on the configuration
 * of their round (optical.c), and the schedule carries the configurations as
 * phases.
 *
 *   bridge(reconfigs R)  Bruck steps; R reconfiguration points chosen by an
 *                        exact search over the step subsets; a segment of
 *                        steps runs on the subrings of its smallest offset
 *   bridge               the same with R chosen by the cost model
 *   s_bruck              Bruck on the static ring (R = 0)
 *   g_bruck              every step on its own direct circuits
 *   r_hd(reconfigs R)    halving-doubling; its R longest steps each on a
 *                        direct matching (u -> u xor 2^k), the rest on the ring
 *
 * Steps (p ranks, s = log2 p, sigma = +1, or -1 for the mirrored copy):
 *   alltoall        step k: the blocks at positions with bit k set to u + sigma 2^k
 *   reduce_scatter  step k: to u + sigma 2^k the partial sums of blocks
 *                   u + sigma o, o with lowest set bit k
 *   allgather       step j (offset d = p / 2^(j+1)): every block held,
 *                   u - sigma t 2d for t < 2^j, to u + sigma d
 *   allreduce       reduce_scatter, then allgather
 * Halving-doubling reduce-scatter step k exchanges with u xor 2^k the blocks
 * that agree with u on bits 0..k-1 and not on bit k; its allgather is the
 * time reverse.
 *
 * Cost model (one round): alpha_step + h alpha_h + L beta, h the longest
 * route in hops, L the bytes on the most loaded link, alpha_h = link plus
 * router latency; plus reconfig_delay per reconfiguration. For a fixed R the
 * points minimise sum L (the transmission term), then sum h: the model's
 * large-message limit, which does not depend on the network's parameters.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"

typedef enum BridgeAlg { BA_BRIDGE, BA_SBRUCK, BA_GBRUCK, BA_RHD } BridgeAlg;
typedef enum CfgKind { CFG_SUBRING, CFG_XOR } CfgKind;

/* A configuration: blocks b -> b + step (subrings) or b -> b xor step. */
typedef struct Cfg {
	CfgKind kind;
	int step;
} Cfg;

/* Rounds of a step list and what each round's cost was under one configuration. */
typedef struct RoundCost {
	double hops, load; /* longest route; most chunks on one link (-1: unroutable) */
} RoundCost;

typedef struct Emit {
	Gen g;
	const Topo *t;
	int p, s;
	bool build;        /* else: only costs for the configuration `fixed` */
	const int *next;   /* cost mode: the configuration */
	int **round_next;  /* build mode: per round */
	int *links;
	/* cost mode: the round being summed */
	int round;
	double *load;      /* per link, chunks this round */
	int *touched, ntouched;
	RoundCost *cost;   /* per round */
} Emit;

static Cfg
cfg_norm(const Topo *t, Cfg c)
{
	int nb = optical_nblock(t);
	if (c.step < 1 || nb == 1)
		return (Cfg){CFG_SUBRING, 1};
	if (c.kind == CFG_XOR && 2 * c.step == nb)
		c.kind = CFG_SUBRING;
	return c;
}

/* The subrings on which a step of `offset` nodes is one hop (the ring below a block). */
static Cfg
subrings(const Topo *t, int offset)
{
	return cfg_norm(t, (Cfg){CFG_SUBRING, offset / optical_block(t)});
}

static bool
cfg_eq(Cfg a, Cfg b)
{
	return a.kind == b.kind && a.step == b.step;
}

static int *
cfg_next(Arena *a, const Topo *t, Cfg c)
{
	int nb = optical_nblock(t);
	int *next = arena_array(a, (size_t)nb, sizeof *next);
	for (int b = 0; b < nb; b++)
		next[b] = c.kind == CFG_XOR ? b ^ c.step : (b + c.step) % nb;
	return next;
}

/* A route on a configuration in direction sigma; 0 (sigma) picks the
 * shorter way, ties forward. -1 if there is none. */
static int
route_on(const Topo *t, const int *next, int src, int dst, int sigma, int *links)
{
	if (sigma != 0)
		return optical_route(t, next, sigma < 0, src, dst, links);
	int fwd = optical_route(t, next, false, src, dst, links);
	int *alt = xmalloc(((size_t)t->nnode + (size_t)optical_nblock(t) + 1) * sizeof *alt);
	int rev = optical_route(t, next, true, src, dst, alt);
	if (rev >= 0 && (fwd < 0 || rev < fwd)) {
		memcpy(links, alt, (size_t)rev * sizeof *links);
		fwd = rev;
	}
	free(alt);
	return fwd;
}

static void
close_round(Emit *e)
{
	RoundCost *c = &e->cost[e->round];
	for (int i = 0; i < e->ntouched; i++) {
		int l = e->touched[i];
		if (c->load >= 0 && e->load[l] > c->load)
			c->load = e->load[l];
		e->load[l] = 0;
	}
	e->ntouched = 0;
}

/* Sends the collected chunks src -> dst in round r along direction sigma. */
static void
emit(Emit *e, int round, int src, int dst, XferOp op, int sigma)
{
	Gen *g = &e->g;
	if (g->nbuf == 0 || src == dst) {
		g->nbuf = 0;
		return;
	}
	const int *next = e->build ? e->round_next[round] : e->next;
	int len = route_on(e->t, next, src, dst, sigma, e->links);
	if (e->build) {
		if (len < 0)
			die("bridge: no route from %d to %d in round %d", src, dst, round);
		gen_send_route(g, round, src, dst, op, e->links, len);
		return;
	}
	if (round != e->round) {
		close_round(e);
		e->round = round;
	}
	RoundCost *c = &e->cost[round];
	if (len < 0 || c->load < 0) {
		c->load = -1;
		g->nbuf = 0;
		return;
	}
	if (len > c->hops)
		c->hops = len;
	for (int i = 0; i < len; i++) {
		int l = e->links[i];
		if (e->load[l] == 0)
			e->touched[e->ntouched++] = l;
		e->load[l] += g->nbuf;
	}
	g->nbuf = 0;
}

/* ---- the steps ---- */

static int
sub_of(int sigma, bool mirrored)
{
	return !mirrored ? -1 : sigma > 0 ? 0 : 1;
}

static void
steps_alltoall(Emit *e, int sigma, bool mirrored)
{
	int p = e->p;
	int *holder = xmalloc((size_t)p * (size_t)p * sizeof *holder);
	int *moved = xmalloc((size_t)p * (size_t)p * sizeof *moved);
	for (int r = 0; r < p; r++)
		for (int i = 0; i < p; i++)
			holder[r * p + i] = r * p + imod(r + sigma * i, p);
	for (int k = 0; k < e->s; k++) {
		memcpy(moved, holder, (size_t)p * (size_t)p * sizeof *moved);
		for (int r = 0; r < p; r++) {
			int to = imod(r + sigma * (1 << k), p);
			for (int i = 0; i < p; i++)
				if (i >> k & 1) {
					gen_block(&e->g, holder[r * p + i], sub_of(sigma, mirrored));
					moved[to * p + i] = holder[r * p + i];
				}
			emit(e, k, r, to, X_COPY, sigma);
		}
		int *tmp = holder;
		holder = moved;
		moved = tmp;
	}
	free(holder);
	free(moved);
}

static void
steps_reduce_scatter(Emit *e, int round, int sigma, bool mirrored)
{
	int p = e->p;
	for (int k = 0; k < e->s; k++)
		for (int u = 0; u < p; u++) {
			for (int o = 1 << k; o < p; o += 2 << k)
				gen_block(&e->g, imod(u + sigma * o, p), sub_of(sigma, mirrored));
			emit(e, round + k, u, imod(u + sigma * (1 << k), p), X_REDUCE, sigma);
		}
}

static void
steps_allgather(Emit *e, int round, int sigma, bool mirrored)
{
	int p = e->p;
	for (int j = 0; j < e->s; j++) {
		int d = p >> (j + 1);
		for (int u = 0; u < p; u++) {
			for (int t = 0; t < 1 << j; t++)
				gen_block(&e->g, imod(u - sigma * t * 2 * d, p), sub_of(sigma, mirrored));
			emit(e, round + j, u, imod(u + sigma * d, p), X_COPY, sigma);
		}
	}
}

/* Halving-doubling: reduce-scatter steps k = 0..s-1, allgather k = s-1..0. */
static void
steps_hd(Emit *e, CollKind kind)
{
	int p = e->p, round = 0;
	if (kind != CK_ALLGATHER)
		for (int k = 0; k < e->s; k++, round++)
			for (int u = 0; u < p; u++) {
				int low = (1 << k) - 1;
				for (int b = 0; b < p; b++)
					if ((b & low) == (u & low) && ((b ^ u) >> k & 1))
						gen_block(&e->g, b, -1);
				emit(e, round, u, u ^ (1 << k), X_REDUCE, 0);
			}
	if (kind != CK_REDUCE_SCATTER)
		for (int k = e->s - 1; k >= 0; k--, round++)
			for (int u = 0; u < p; u++) {
				int low = (2 << k) - 1;
				for (int b = 0; b < p; b++)
					if ((b & low) == (u & low))
						gen_block(&e->g, b, -1);
				emit(e, round, u, u ^ (1 << k), X_COPY, 0);
			}
}

static int
nsteps(CollKind kind, int s)
{
	return kind == CK_ALLREDUCE ? 2 * s : s;
}

static void
run_steps(Emit *e, CollKind kind, BridgeAlg alg, bool mirrored)
{
	int nsig = mirrored ? 2 : 1;
	for (int i = 0; i < nsig; i++) {
		int sigma = i == 0 ? 1 : -1;
		if (alg == BA_RHD)
			steps_hd(e, kind);
		else if (kind == CK_ALLTOALL)
			steps_alltoall(e, sigma, mirrored);
		else if (kind == CK_REDUCE_SCATTER)
			steps_reduce_scatter(e, 0, sigma, mirrored);
		else if (kind == CK_ALLGATHER)
			steps_allgather(e, 0, sigma, mirrored);
		else {
			steps_reduce_scatter(e, 0, sigma, mirrored);
			steps_allgather(e, e->s, sigma, mirrored);
		}
	}
}

/* The step's offset in nodes: what subrings make it one hop. */
static int
step_offset(CollKind kind, BridgeAlg alg, int p, int s, int r)
{
	if (alg == BA_RHD && kind == CK_ALLGATHER)
		return 1 << (s - 1 - r);
	if (alg == BA_RHD)
		return r < s ? 1 << r : 1 << (2 * s - 1 - r);
	if (kind == CK_ALLTOALL || kind == CK_REDUCE_SCATTER || (kind == CK_ALLREDUCE && r < s))
		return 1 << r;
	return p >> ((r % s) + 1);
}

/* ---- the cost model ---- */

typedef struct Model {
	int nround, ncfg;
	Cfg *cfg;          /* candidate configurations */
	RoundCost *cost;   /* nround x ncfg */
	double alpha, alpha_h, beta_chunk, delay;
} Model;

static void
model_costs(const AlgCtx *c, CollKind kind, BridgeAlg alg, Model *m)
{
	const Topo *t = c->topo;
	int p = c->nrank, s = clog2(p);
	m->nround = nsteps(kind, s);
	for (int i = 0; i < m->ncfg; i++) {
		Arena a = {0};
		Emit e = {.t = t, .p = p, .s = s, .next = cfg_next(&a, t, m->cfg[i])};
		e.g.p = p, e.g.m = 1, e.g.mult = 1;
		e.links = xmalloc(((size_t)t->nnode + (size_t)optical_nblock(t) + 1) * sizeof *e.links);
		e.load = xcalloc((size_t)t->nlink, sizeof *e.load);
		e.touched = xmalloc((size_t)t->nlink * sizeof *e.touched);
		e.cost = m->cost + (size_t)i * (size_t)m->nround;
		run_steps(&e, kind, alg, false);
		close_round(&e);
		free(e.links), free(e.load), free(e.touched), free(e.g.buf);
		arena_free(&a);
	}
	const Net *n = &t->net;
	m->alpha = n->step_overhead;
	m->alpha_h = n->link_latency + n->router_latency;
	/* the cost runs count blocks: N / p bytes (alltoall: of each rank's N) */
	m->beta_chunk = c->size / p * 8 / n->bandwidth;
	m->delay = n->reconfig_delay;
}

static const RoundCost *
cost_at(const Model *m, int round, Cfg c)
{
	for (int i = 0; i < m->ncfg; i++)
		if (cfg_eq(m->cfg[i], c))
			return &m->cost[(size_t)i * (size_t)m->nround + (size_t)round];
	return NULL;
}

typedef struct Score {
	double load, hops; /* sums over the rounds; load < 0: unroutable */
	int reconfigs;
} Score;

static Score
score(const Model *m, const Cfg *plan)
{
	Score sc = {0};
	Cfg cur = {CFG_SUBRING, 1};
	for (int r = 0; r < m->nround; r++) {
		const RoundCost *c = cost_at(m, r, plan[r]);
		if (!c || c->load < 0) {
			sc.load = -1;
			return sc;
		}
		sc.load += c->load;
		sc.hops += c->hops;
		sc.reconfigs += !cfg_eq(cur, plan[r]);
		cur = plan[r];
	}
	return sc;
}

static double
model_time(const Model *m, Score sc)
{
	return m->nround * m->alpha + sc.hops * m->alpha_h + sc.load * m->beta_chunk +
	       sc.reconfigs * m->delay;
}

/* The configurations of rounds [lo, hi) for reconfiguration points `mask`
 * (bit i: before round lo + 1 + i): each segment on the subrings of its
 * smallest offset. */
static void
plan_segments(const AlgCtx *c, CollKind kind, int lo, int hi, unsigned mask, Cfg *plan)
{
	int p = c->nrank, s = clog2(p);
	for (int a = lo; a < hi;) {
		int b = a + 1;
		while (b < hi && !(mask >> (b - lo - 1) & 1))
			b++;
		int off = p;
		for (int r = a; r < b; r++) {
			int o = step_offset(kind, BA_BRIDGE, p, s, r);
			off = o < off ? o : off;
		}
		for (int r = a; r < b; r++)
			plan[r] = subrings(c->topo, off);
		a = b;
	}
}

static int
popcount(unsigned x)
{
	int n = 0;
	for (; x; x &= x - 1)
		n++;
	return n;
}

/* The allgather half of an allreduce: the reduce-scatter's points reversed,
 * so it starts on the subrings the reduce-scatter ends on. */
static unsigned
mirror_points(unsigned mask, int s)
{
	unsigned out = 0;
	for (int i = 0; i < s - 1; i++)
		if (mask >> i & 1) /* before RS round i + 1 -> before AG round s - 1 - i */
			out |= 1u << (s - 2 - i);
	return out;
}

/* The plan of points `mask` over the first s rounds (an allreduce's
 * allgather takes them mirrored). */
static void
plan_bridge(const AlgCtx *c, CollKind kind, unsigned mask, Cfg *plan)
{
	int s = clog2(c->nrank);
	plan_segments(c, kind, 0, s, mask, plan);
	if (kind == CK_ALLREDUCE)
		plan_segments(c, kind, s, 2 * s, mirror_points(mask, s), plan);
}

/*
 * The exact search over the 2^(s-1) sets of points. With R >= 0: the sets
 * of R points, least transmission (sum of the most loaded link's chunks),
 * then fewest hops. With R < 0: every set, least model time at the size
 * asked for. Ties keep the first in mask order.
 */
static unsigned
bridge_points(const AlgCtx *c, const Model *m, int R)
{
	int s = clog2(c->nrank);
	Cfg *plan = xmalloc((size_t)m->nround * sizeof *plan);
	unsigned best = 0;
	Score bs = {-1, 0, 0};
	double bt = INFINITY;
	for (unsigned mask = 0; mask < 1u << (s - 1); mask++) {
		if (R >= 0 && popcount(mask) != R)
			continue;
		plan_bridge(c, c->kind, mask, plan);
		Score sc = score(m, plan);
		if (sc.load < 0)
			continue;
		double tm = model_time(m, sc);
		bool better = R >= 0 ? bs.load < 0 || sc.load < bs.load ||
		                           (sc.load == bs.load && sc.hops < bs.hops)
		                     : tm < bt;
		if (better) {
			bs = sc, bt = tm;
			best = mask;
		}
	}
	free(plan);
	return best;
}

/* ---- building ---- */

static void
set_phases(const AlgCtx *c, Sched *s, const Cfg *plan, int nround)
{
	Cfg cur = {CFG_SUBRING, 1};
	s->phase = arena_array(c->arena, (size_t)nround + 1, sizeof *s->phase);
	s->nphase = 0;
	for (int r = 0; r < nround; r++)
		if (r == 0 || !cfg_eq(plan[r], plan[r - 1])) {
			Phase *ph = &s->phase[s->nphase++];
			ph->round = r;
			ph->reconfig = !cfg_eq(cur, plan[r]);
			ph->next = cfg_next(c->arena, c->topo, plan[r]);
			cur = plan[r];
		}
}

static Sched *
build(const AlgCtx *c, CollKind kind, BridgeAlg alg, const Cfg *plan, int nround)
{
	const Topo *t = c->topo;
	int p = c->nrank;
	Emit e = {.t = t, .p = p, .s = clog2(p), .build = true};
	if (gen_begin(&e.g, c, kind == CK_ALLTOALL ? p * p : p, c->mirrored ? 2 : 1) != 0)
		return NULL;
	e.round_next = xmalloc((size_t)nround * sizeof *e.round_next);
	for (int r = 0; r < nround; r++)
		e.round_next[r] = cfg_next(c->arena, t, plan[r]);
	e.links = xmalloc(((size_t)t->nnode + (size_t)optical_nblock(t) + 1) * sizeof *e.links);
	run_steps(&e, kind, alg, c->mirrored);
	free(e.links);
	free(e.round_next);
	Sched *s = gen_end(c->diag, &e.g);
	set_phases(c, s, plan, nround);
	return s;
}

static int
check_shape(const AlgCtx *c, BridgeAlg alg)
{
	const Topo *t = c->topo;
	int p = c->nrank, B = optical_block(t);
	if (t->kind != TK_OPTICAL_RING) {
		error_at(c->diag, c->loc, "%s runs on an optical_ring; '%s' is %s", c->algorithm, t->name,
		         topo_kind_name(t->kind));
		return -1;
	}
	if (!c->whole) {
		error_at(c->diag, c->loc, "%s needs every node of '%s' in id order as its ranks", c->algorithm,
		         t->name);
		return -1;
	}
	if (!is_pow(p, 2) || p < 2 || p > BRIDGE_MAX_RANKS) {
		error_at(c->diag, c->loc, "%s needs a power of two from 2 to %d nodes; '%s' has %d",
		         c->algorithm, BRIDGE_MAX_RANKS, t->name, p);
		return -1;
	}
	if (!is_pow(B, 2)) {
		error_at(c->diag, c->loc, "%s needs port pairs shared by a power of two of nodes; '%s' puts %d "
		         "behind each (ports %d)", c->algorithm, t->name, B, t->variant);
		return -1;
	}
	if (alg == BA_RHD && c->mirrored) {
		error_at(c->diag, c->loc, "r_hd uses both directions already; it has no mirrored copy");
		return -1;
	}
	int s = clog2(p), most = alg == BA_RHD ? s : s - 1;
	if (c->reconfigs > most) {
		error_at(c->diag, c->loc, "%s(reconfigs %d) on %d nodes: at most %d (one before each of the "
		         "%d steps %s)", c->algorithm, c->reconfigs, p, most, most,
		         alg == BA_RHD ? "" : "after the first");
		return -1;
	}
	/* A step of fewer than B nodes stays behind one port pair: it runs on the
	 * ring whatever the circuits, so only the steps of B nodes or more have a
	 * configuration of their own to switch to (bridge: offsets 2B .. p/2;
	 * r_hd: B .. p/2, none when two blocks make the matching the ring). */
	int nb = optical_nblock(t), b = clog2(B);
	int can = alg == BA_RHD ? (nb > 2 ? s - b : 0) : (s - 1 - b > 0 ? s - 1 - b : 0);
	if (c->reconfigs > can) {
		error_at(c->diag, c->loc, "%s(reconfigs %d) on '%s': at most %d, as its ports %d put %d nodes "
		         "behind each port pair (%d pair%s): a step within them runs on the ring "
		         "whatever the circuits", c->algorithm, c->reconfigs, t->name, can, t->variant,
		         B, nb, nb == 1 ? "" : "s");
		return -1;
	}
	return 0;
}

static BridgeAlg
which(const char *name)
{
	return strcmp(name, "s_bruck") == 0   ? BA_SBRUCK
	       : strcmp(name, "g_bruck") == 0 ? BA_GBRUCK
	       : strcmp(name, "r_hd") == 0    ? BA_RHD
	                                      : BA_BRIDGE;
}

/* R-HD: its R longest steps on direct matchings (the last R of the
 * reduce-scatter, the first R of the allgather), the others on the ring. */
static void
plan_rhd(const AlgCtx *c, CollKind kind, int R, Cfg *plan, int nround)
{
	int p = c->nrank, s = clog2(p), B = optical_block(c->topo);
	for (int r = 0; r < nround; r++) {
		int off = step_offset(kind, BA_RHD, p, s, r);
		plan[r] = off >= (p >> R) && off >= B ? cfg_norm(c->topo, (Cfg){CFG_XOR, off / B})
		                                     : subrings(c->topo, 1);
	}
}

/* bridge's reconfigurations as built: searched under the cost model for
 * c->size ("reconfigs 3"), or R given ("fixed reconfigs 2"). */
static void
set_choice(const AlgCtx *c, Sched *s)
{
	s->choice = arena_printf(c->arena, "%sreconfigs %d", c->reconfigs >= 0 ? "fixed " : "",
	                         sched_nreconfig(s));
	s->size_chosen = c->reconfigs < 0;
}

/* mask: the reconfiguration points (bit i: before round i + 1), or -1 to search. */
static Sched *
bridge_build(const AlgCtx *c, long mask)
{
	BridgeAlg alg = which(c->algorithm);
	if (check_shape(c, alg) != 0)
		return NULL;
	int p = c->nrank, s = clog2(p), nround = nsteps(c->kind, s);
	Cfg *plan = xmalloc((size_t)nround * sizeof *plan);
	if (alg == BA_RHD) {
		plan_rhd(c, c->kind, c->reconfigs < 0 ? 0 : c->reconfigs, plan, nround);
	} else if (alg == BA_SBRUCK || (alg == BA_BRIDGE && c->reconfigs == 0 && mask < 0)) {
		for (int r = 0; r < nround; r++)
			plan[r] = subrings(c->topo, 1);
	} else if (alg == BA_GBRUCK) {
		for (int r = 0; r < nround; r++)
			plan[r] = subrings(c->topo, step_offset(c->kind, alg, p, s, r));
	} else if (mask >= 0) {
		plan_bridge(c, c->kind, (unsigned)mask, plan);
	} else {
		Model m = {.ncfg = s};
		m.cfg = xmalloc((size_t)s * sizeof *m.cfg);
		for (int k = 0; k < s; k++)
			m.cfg[k] = subrings(c->topo, 1 << k);
		m.cost = xcalloc((size_t)s * (size_t)nround, sizeof *m.cost);
		model_costs(c, c->kind, alg, &m);
		plan_bridge(c, c->kind, bridge_points(c, &m, c->reconfigs), plan);
		free(m.cfg);
		free(m.cost);
	}
	Sched *sc = build(c, c->kind, alg, plan, nround);
	free(plan);
	if (sc && alg == BA_BRIDGE && mask < 0 && c->reconfigs != 0)
		set_choice(c, sc);
	return sc;
}

Sched *
alg_bridge(const AlgCtx *c)
{
	return bridge_build(c, -1);
}

Sched *
alg_bridge_points(const AlgCtx *c, unsigned mask)
{
	return bridge_build(c, (long)mask);
}
