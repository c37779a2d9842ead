/*
 * test_optical.c: reconfigurable optical rings (ir/optical.c,
 * ir/alg_bridge.c): the subrings of a reconfiguration (the worked example of
 * 16 nodes, and the subring structure for every k), the reconfiguration
 * points the search chooses for 64 nodes, the search checked against every
 * other set of points, the verifier's checks on configurations, and every
 * algorithm and kind verified.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "backend.h"
#include "exec.h"
#include "sim.h"
#include "to_sim.h"
#include "tests.h"

typedef struct Ring {
	Arena arena;
	Topo *t;
	Routes routes;
	int rank_node[1024];
	Diag diag; /* c's diagnostics */
	AlgCtx c;
} Ring;

/* The seed's network: 800 Gb/s, 1 us per hop, alpha_step 1.7 us, delta 10 us. */
static void
ring_init(Ring *r, int n, int ports, CollKind kind, const char *alg, int reconfigs)
{
	memset(r, 0, sizeof *r);
	r->diag = diag_new();
	Net net = net_defaults;
	net.bandwidth = 800e9;
	net.link_latency = 1e-6;
	net.step_overhead = 1.7e-6;
	net.reconfig_delay = 10e-6;
	r->t = topo_optical_ring(&r->arena, "O", n, ports ? ports : 2 * n, net);
	routes_init(&r->routes, r->t, ROUTE_SHORTEST);
	for (int i = 0; i < n; i++)
		r->rank_node[i] = i;
	r->c = (AlgCtx){.diag = &r->diag, .arena = &r->arena, .name = "X", .kind = kind, .topo = r->t,
	                .routes = &r->routes, .rank_node = r->rank_node, .nrank = n, .whole = true,
	                .algorithm = alg, .reconfigs = reconfigs, .size = 1 << 20};
}

static void
ring_free(Ring *r)
{
	routes_free(&r->routes);
	arena_free(&r->arena);
}

static Sched *
quiet_build(const AlgCtx *c, bool points, unsigned mask)
{
	diag_mute(c->diag, true);
	bool missing;
	Sched *s = points ? alg_bridge_points(c, mask) : alg_build(c, &missing);
	if (s && verify(c->diag, s) != 0)
		s = NULL;
	diag_mute(c->diag, false);
	return s;
}

/* The reconfiguration points (rounds > 0 rewired before), as a mask. */
static unsigned
points_of(const Sched *s, int lo, int hi)
{
	unsigned m = 0;
	for (int i = 0; i < s->nphase; i++)
		if (s->phase[i].reconfig && s->phase[i].round > lo && s->phase[i].round < hi)
			m |= 1u << (s->phase[i].round - lo - 1);
	return m;
}

static const Msg *
find_msg(const Sched *s, int round, int src, int dst)
{
	for (int i = 0; i < s->nmsg; i++)
		if (s->msg[i].round == round && s->msg[i].src == src && s->msg[i].dst == dst)
			return &s->msg[i];
	return NULL;
}

static void
test_worked_example(void)
{
	Ring r;
	ring_init(&r, 16, 0, CK_ALLTOALL, "bridge", 1);
	Sched *s = quiet_build(&r.c, false, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->nround, 4);
	CU_ASSERT_EQUAL(sched_nreconfig(s), 1);
	CU_ASSERT_EQUAL(points_of(s, 0, 4), 1u << 1); /* before step 2 */
	CU_ASSERT_EQUAL_FATAL(s->nphase, 2);
	/* 4 subrings of 4: {0,4,8,12}, {1,5,9,13}, ... */
	for (int u = 0; u < 16; u++)
		CU_ASSERT_EQUAL(s->phase[1].next[u], (u + 4) % 16);
	const Msg *m2 = find_msg(s, 2, 0, 4), *m3 = find_msg(s, 3, 0, 8);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m3);
	CU_ASSERT_EQUAL(sched_route_len(s, m2->route), 1);
	CU_ASSERT_EQUAL(sched_route_len(s, m3->route), 2);
	/* hops per step 1, 2, then 1, 2: 6 instead of 15 */
	int hops = 0;
	for (int k = 0; k < 4; k++)
		hops += sched_route_len(s, find_msg(s, k, 0, 1 << k)->route);
	CU_ASSERT_EQUAL(hops, 6);
	ring_free(&r);
}

/* Reconfiguring at step k: 2^k subrings of n / 2^k nodes (the residue
 * classes), holding every current and later peer at 2^(j-k) hops, and no
 * earlier one. */
static void
test_subrings(void)
{
	for (int n = 4; n <= 64; n *= 2) {
		Ring r;
		ring_init(&r, n, 0, CK_ALLTOALL, "bridge", -1);
		int s = 0;
		while ((1 << s) < n)
			s++;
		int *links = xmalloc((size_t)(2 * n + 2) * sizeof *links);
		for (int k = 1; k < s; k++) {
			Sched *sc = quiet_build(&r.c, true, 1u << (k - 1));
			CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
			CU_ASSERT_EQUAL_FATAL(sc->nphase, 2);
			const int *next = sc->phase[1].next;
			CU_ASSERT_EQUAL(sc->phase[1].round, k);
			/* cycles: count and length */
			char *seen = xcalloc((size_t)n, 1);
			int cycles = 0;
			for (int u = 0; u < n; u++) {
				if (seen[u])
					continue;
				int len = 0;
				for (int v = u; !seen[v]; v = next[v], len++) {
					seen[v] = 1;
					assert_named(v % (1 << k) == u % (1 << k), __LINE__, __FILE__,
					             "n %d k %d: %d and %d share a subring", n, k, u, v);
				}
				CU_ASSERT_EQUAL(len, n >> k);
				cycles++;
			}
			CU_ASSERT_EQUAL(cycles, 1 << k);
			free(seen);
			for (int u = 0; u < n; u++)
				for (int j = 0; j < s; j++) {
					int h = optical_route(sc->topo, next, false, u, (u + (1 << j)) % n, links);
					assert_named(j >= k ? h == 1 << (j - k) : h < 0, __LINE__, __FILE__,
					             "n %d k %d: %d -> %d + 2^%d in %d hops", n, k, u, u, j, h);
				}
		}
		free(links);
		ring_free(&r);
	}
}

/* A route crosses each block once at most: to a block on another cycle of
 * the configuration it is -1, having written no more than the n + nblock
 * hops the caller has room for (B = 5 > nblock = 3 here, where one more
 * turn round the cycle would not fit). */
static void
test_route_room(void)
{
	Ring r;
	ring_init(&r, 15, 6, CK_ALLTOALL, "bridge", -1);
	CU_ASSERT_EQUAL_FATAL(optical_block(r.t), 5);
	CU_ASSERT_EQUAL_FATAL(optical_nblock(r.t), 3);
	enum { ROOM = 15 + 3, GUARD = 16 };
	int links[ROOM + GUARD];
	for (int i = 0; i < ROOM + GUARD; i++)
		links[i] = -7;
	const int cycle[] = {1, 2, 0}, apart[] = {1, 0, 2}; /* blocks 0 and 1 swap; 2 alone */
	CU_ASSERT_EQUAL(optical_route(r.t, cycle, false, 0, 14, links), 4 + 1 + 4 + 1 + 4);
	CU_ASSERT_EQUAL(optical_route(r.t, apart, false, 0, 14, links), -1);
	CU_ASSERT_EQUAL(optical_route(r.t, apart, true, 0, 14, links), -1);
	int spilled = 0;
	for (int i = ROOM; i < ROOM + GUARD; i++)
		spilled += links[i] != -7;
	assert_named(spilled == 0, __LINE__, __FILE__, "%d hops written past the room", spilled);
	ring_free(&r);
}

/* Table 1 (n = 64): A2A periodic, RS one step earlier, AG later; and the
 * other rows of the reconstruction. */
static void
test_points_table(void)
{
	static const struct {
		int n, R;
		CollKind kind;
		unsigned points; /* bit i: before step i + 1 */
	} rows[] = {
		{16, 1, CK_ALLTOALL, 1u << 1},
		{64, 1, CK_ALLTOALL, 1u << 2},
		{64, 2, CK_ALLTOALL, 1u << 1 | 1u << 3},
		{64, 1, CK_REDUCE_SCATTER, 1u << 1},
		{64, 2, CK_REDUCE_SCATTER, 1u << 0 | 1u << 2},
		{64, 1, CK_ALLGATHER, 1u << 3},
		{64, 2, CK_ALLGATHER, 1u << 2 | 1u << 4},
		{128, 2, CK_REDUCE_SCATTER, 1u << 0 | 1u << 2},
		{128, 2, CK_ALLGATHER, 1u << 3 | 1u << 5},
		{256, 1, CK_ALLTOALL, 1u << 3},
		{256, 1, CK_REDUCE_SCATTER, 1u << 1},
		{256, 1, CK_ALLGATHER, 1u << 5},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		Ring r;
		ring_init(&r, rows[i].n, 0, rows[i].kind, "bridge", rows[i].R);
		Sched *s = quiet_build(&r.c, false, 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(s);
		unsigned got = points_of(s, 0, s->nround);
		assert_named(got == rows[i].points, __LINE__, __FILE__, "n %d R %d %s: points %#x, want %#x",
		             rows[i].n, rows[i].R, coll_kind_name[rows[i].kind], got, rows[i].points);
		ring_free(&r);
	}
	/* allreduce: the allgather's points mirror the reduce-scatter's, and it
	 * starts on the subrings the reduce-scatter ends on: 2R reconfigurations */
	Ring r;
	ring_init(&r, 64, 0, CK_ALLREDUCE, "bridge", 1);
	Sched *s = quiet_build(&r.c, false, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(points_of(s, 0, 6), 1u << 1);
	CU_ASSERT_EQUAL(points_of(s, 6, 12), 1u << 3); /* AG step 4 = round 10 */
	CU_ASSERT_EQUAL(sched_nreconfig(s), 2);
	ring_free(&r);
}

/* The round of messages from *i (moved past it): its most loaded link's
 * load, counting each chunk as `chunk`, and its longest route. */
static void
round_cost(const Sched *s, int *i, double chunk, double *on, double *most, int *far)
{
	int round = s->msg[*i].round, j = *i;
	*most = 0, *far = 0;
	for (; j < s->nmsg && s->msg[j].round == round; j++) {
		const Msg *m = &s->msg[j];
		int len = sched_route_len(s, m->route);
		*far = len > *far ? len : *far;
		for (int k = 0; k < len; k++) {
			int l = s->route_link[s->route_off[m->route] + k];
			on[l] += m->n * chunk;
			*most = on[l] > *most ? on[l] : *most;
		}
	}
	memset(on, 0, (size_t)s->topo->nlink * sizeof *on);
	*i = j;
}

/* The transmission (chunks) and hop sums of a schedule, from its messages. */
static void
measure(const Sched *s, double *load, double *hops)
{
	*load = *hops = 0;
	double *on = xcalloc((size_t)s->topo->nlink, sizeof *on);
	for (int i = 0; i < s->nmsg;) {
		double most;
		int far;
		round_cost(s, &i, 1, on, &most, &far);
		*load += most;
		*hops += far;
	}
	free(on);
}

static double
model(const Sched *s, double bytes)
{
	double load, hops;
	measure(s, &load, &hops);
	const Net *n = &s->topo->net;
	double chunk = bytes / s->nchunk * (s->kind == CK_ALLTOALL ? s->nrank : 1);
	return s->nround * n->step_overhead + hops * (n->link_latency + n->router_latency) +
	       load * chunk * 8 / n->bandwidth + sched_nreconfig(s) * n->reconfig_delay;
}

/* Every set of points built and measured: the choice for a given R has the
 * least transmission (then hops) of the sets of R points, and bridge
 * without R the least model time of all sets, at several sizes. */
static void
test_search_exhaustive(void)
{
	static const CollKind kinds[] = {CK_ALLTOALL, CK_REDUCE_SCATTER, CK_ALLGATHER, CK_ALLREDUCE};
	static const double sizes[] = {1024, 1 << 20, 64 << 20};
	for (int n = 4; n <= 64; n *= 2)
		for (size_t k = 0; k < 4; k++) {
			Ring r;
			ring_init(&r, n, 0, kinds[k], "bridge", -1);
			int s = 0;
			while ((1 << s) < n)
				s++;
			int nmask = 1 << (s - 1);
			double *load = xmalloc((size_t)nmask * sizeof *load);
			double *hops = xmalloc((size_t)nmask * sizeof *hops);
			Sched **all = xmalloc((size_t)nmask * sizeof *all);
			for (int m = 0; m < nmask; m++) {
				all[m] = quiet_build(&r.c, true, (unsigned)m);
				CU_ASSERT_PTR_NOT_NULL_FATAL(all[m]);
				measure(all[m], &load[m], &hops[m]);
			}
			for (int R = 0; R < s; R++) {
				r.c.reconfigs = R;
				Sched *best = quiet_build(&r.c, false, 0);
				CU_ASSERT_PTR_NOT_NULL_FATAL(best);
				double bl, bh;
				measure(best, &bl, &bh);
				for (int m = 0; m < nmask; m++)
					if (__builtin_popcount((unsigned)m) == R)
						assert_named(bl < load[m] || (bl == load[m] && bh <= hops[m]), __LINE__,
						             __FILE__, "n %d %s R %d: chosen (%g, %g), points %#x (%g, %g)",
						             n, coll_kind_name[kinds[k]], R, bl, bh, m, load[m], hops[m]);
			}
			r.c.reconfigs = -1;
			for (size_t z = 0; z < 3; z++) {
				r.c.size = sizes[z];
				Sched *best = quiet_build(&r.c, false, 0);
				CU_ASSERT_PTR_NOT_NULL_FATAL(best);
				double bt = model(best, sizes[z]);
				for (int m = 0; m < nmask; m++)
					assert_named(bt <= model(all[m], sizes[z]) * (1 + 1e-12), __LINE__, __FILE__,
					             "n %d %s size %g: chosen %g s, points %#x %g s", n,
					             coll_kind_name[kinds[k]], sizes[z], bt, m,
					             model(all[m], sizes[z]));
			}
			free(load), free(hops), free(all);
			ring_free(&r);
		}
}

/* Every algorithm, kind, mirrored or not, on 2..64 nodes and with fewer ports. */
static void
test_every_variant(void)
{
	static const char *const algs[] = {"bridge", "s_bruck", "g_bruck", "r_hd"};
	static const CollKind kinds[] = {CK_ALLTOALL, CK_REDUCE_SCATTER, CK_ALLGATHER, CK_ALLREDUCE};
	for (int n = 2; n <= 64; n *= 2)
		for (int ports = 2 * n; ports >= 2 * n / 4 && ports >= 2; ports /= 2)
			for (size_t a = 0; a < 4; a++)
				for (size_t k = 0; k < 4; k++)
					for (int mir = 0; mir < 2; mir++) {
						if ((a == 3 && (mir || kinds[k] == CK_ALLTOALL)))
							continue;
						Ring r;
						ring_init(&r, n, ports, kinds[k], algs[a], -1);
						r.c.mirrored = mir;
						Sched *s = quiet_build(&r.c, false, 0);
						assert_named(s != NULL, __LINE__, __FILE__, "%s%s %s on %d nodes, %d ports",
						             algs[a], mir ? "(mirrored)" : "", coll_kind_name[kinds[k]], n,
						             ports);
						ring_free(&r);
					}
}

/* collc run's executor on real data: every algorithm and kind, mirrored
 * and with blocks of 2 nodes per port pair, int32 sums (exact). */
static void
test_executes(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char *const algs[] = {"bridge", "s_bruck", "g_bruck", "r_hd"};
	static const CollKind kinds[] = {CK_ALLTOALL, CK_REDUCE_SCATTER, CK_ALLGATHER, CK_ALLREDUCE};
	for (int ports = 32; ports >= 16; ports /= 2)
		for (size_t a = 0; a < 4; a++)
			for (size_t k = 0; k < 4; k++)
				for (int mir = 0; mir < 2; mir++) {
					if (a == 3 && (mir || kinds[k] == CK_ALLTOALL))
						continue;
					Ring r;
					ring_init(&r, 16, ports, kinds[k], algs[a], a == 0 ? 2 : -1);
					r.c.mirrored = mir;
					Sched *s = quiet_build(&r.c, false, 0);
					CU_ASSERT_PTR_NOT_NULL_FATAL(s);
					ExecOpts o = {.bytes = 16 * 1024 + 4 * 37, .dtype = RD_INT32, .op = RO_SUM};
					double sec;
					diag_mute(dg, true);
					int rc = exec_sched(dg, s, &o, &sec);
					diag_mute(dg, false);
					assert_named(rc == 0, __LINE__, __FILE__, "%s%s %s, ports %d: wrong result",
					             algs[a], mir ? "(mirrored)" : "", coll_kind_name[kinds[k]], ports);
					ring_free(&r);
				}
}

/* G-Bruck: every step one hop; S-Bruck: 2^k hops, no reconfiguration;
 * mirrored: half of each message's chunks on the reverse fibers. */
static void
test_baselines(void)
{
	Ring r;
	ring_init(&r, 64, 0, CK_ALLTOALL, "g_bruck", -1);
	Sched *g = quiet_build(&r.c, false, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	double load, hops;
	measure(g, &load, &hops);
	CU_ASSERT_EQUAL(hops, 6);
	CU_ASSERT_EQUAL(sched_nreconfig(g), 5);
	r.c.algorithm = "s_bruck";
	Sched *s = quiet_build(&r.c, false, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	measure(s, &load, &hops);
	CU_ASSERT_EQUAL(hops, 63);
	CU_ASSERT_EQUAL(load, 63 * 32); /* 2^k messages of 32 blocks on every link */
	CU_ASSERT_EQUAL(sched_nreconfig(s), 0);
	r.c.mirrored = true;
	Sched *m = quiet_build(&r.c, false, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	double ml, mh;
	measure(m, &ml, &mh);
	CU_ASSERT_EQUAL(mh, 63);
	CU_ASSERT_EQUAL(ml, 63 * 32); /* twice the chunks, each half the size */
	CU_ASSERT_EQUAL(m->nchunk, 2 * s->nchunk);
	ring_free(&r);
	/* R-HD: static HD has static Bruck's hops; each reconfiguration makes
	 * one of the longest steps one hop */
	ring_init(&r, 16, 0, CK_REDUCE_SCATTER, "r_hd", 0);
	Sched *h0 = quiet_build(&r.c, false, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h0);
	measure(h0, &load, &hops);
	CU_ASSERT_EQUAL(hops, 15);
	r.c.reconfigs = 1;
	Sched *h1 = quiet_build(&r.c, false, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h1);
	measure(h1, &load, &hops);
	CU_ASSERT_EQUAL(hops, 8); /* 1 + 2 + 4, then 1 */
	CU_ASSERT_EQUAL(sched_nreconfig(h1), 1);
	ring_free(&r);
}

/* Errors: not a power of two; too many reconfigurations; a configuration
 * that is not a permutation; a route on a circuit not in force. */
static void
test_errors(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Ring r;
	ring_init(&r, 12, 0, CK_ALLTOALL, "bridge", 1);
	CU_ASSERT_PTR_NULL(quiet_build(&r.c, false, 0));
	ring_free(&r);
	ring_init(&r, 16, 0, CK_ALLTOALL, "bridge", 4);
	CU_ASSERT_PTR_NULL(quiet_build(&r.c, false, 0));
	r.c.reconfigs = 1;
	Sched *s = quiet_build(&r.c, false, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	char why[160];
	int bad[16];
	for (int u = 0; u < 16; u++)
		bad[u] = (u + 4) % 16;
	CU_ASSERT_EQUAL(optical_check_config(s->topo, bad, why, sizeof why), 0);
	bad[3] = 11; /* 11 fed by 3 and 7 */
	CU_ASSERT_EQUAL(optical_check_config(s->topo, bad, why, sizeof why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "two out-ports"));
	/* the subrings brought in a round early: round 1's routes break */
	int keep = s->phase[1].round;
	s->phase[1].round = 1;
	diag_mute(dg, true);
	CU_ASSERT_EQUAL(verify_phases(dg, s), -1);
	diag_mute(dg, false);
	s->phase[1].round = keep;
	CU_ASSERT_EQUAL(verify_phases(dg, s), 0);
	ring_free(&r);
}

/* One run of a schedule in the simulator: picoseconds, and the reconfigurations. */
static int64_t
simulate(Diag *dg, const Sched *s, int64_t bytes, SimMode mode, SimSync sync, int *nrec)
{
	Arena a = {0};
	SimNet net;
	CU_ASSERT_EQUAL_FATAL(sim_from_scheds(dg, &a, &s, 1, &net), 0);
	/* the closed form is store-and-forward's (cut-through overlaps a round's
	 * longest route with its busiest link: docs/sim.md 2.1) */
	net.switching = SIM_STORE_AND_FORWARD;
	SimOpts o = {.mode = mode, .sync = sync};
	SimResult res;
	char err[256];
	CU_ASSERT_EQUAL_FATAL(sim_run(&a, &net, 0, bytes, &o, &res, err, sizeof err), 0);
	*nrec = res.nreconfig;
	CU_ASSERT(fabs(res.reconfig_s - res.nreconfig * s->topo->net.reconfig_delay) < 1e-15);
	arena_free(&a);
	return res.time_ps;
}

/* The closed form: sum over steps of alpha_step + h alpha_h + L beta, plus
 * R delta, in integer picoseconds (800 Gb/s: 10 ps per byte). */
static int64_t
closed_form_ps(const Sched *s, int64_t bytes)
{
	int64_t t = 0;
	double chunk = (double)bytes / s->nchunk * (s->kind == CK_ALLTOALL ? s->nrank : 1);
	double *on = xcalloc((size_t)s->topo->nlink, sizeof *on);
	for (int i = 0; i < s->nmsg;) {
		double most;
		int far;
		round_cost(s, &i, chunk, on, &most, &far);
		t += 1700000 + far * (int64_t)1000000 + (int64_t)llround(most) * 10;
	}
	free(on);
	return t + sched_nreconfig(s) * (int64_t)10000000;
}

/* Simulated times equal the closed form to the picosecond: packet mode with
 * one packet per message, flow mode at any size; both sync modes. */
static void
test_sim_closed_form(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const CollKind kinds[] = {CK_ALLTOALL, CK_REDUCE_SCATTER, CK_ALLGATHER, CK_ALLREDUCE};
	static const char *const algs[] = {"bridge", "s_bruck", "g_bruck"};
	for (size_t k = 0; k < 4; k++)
		for (size_t a = 0; a < 3; a++)
			for (int R = 0; R < 4; R++) {
				if (a > 0 && R > 0)
					continue;
				Ring r;
				ring_init(&r, 16, 0, kinds[k], algs[a], R);
				r.t->net.mtu = 1 << 20;
				Sched *s = quiet_build(&r.c, false, 0);
				CU_ASSERT_PTR_NOT_NULL_FATAL(s);
				int64_t bytes = 16 << 10; /* 1 KiB blocks */
				int64_t want = closed_form_ps(s, bytes);
				for (int mode = 0; mode < 2; mode++)
					for (int sync = 0; sync < 2; sync++) {
						int nrec;
						int64_t got = simulate(dg, s, bytes, (SimMode)mode, (SimSync)sync, &nrec);
						assert_named(got == want && nrec == sched_nreconfig(s), __LINE__,
						             __FILE__, "%s %s R %d %s %s: %lld ps, closed form %lld ps, "
						             "%d reconfigurations", algs[a], coll_kind_name[kinds[k]], R,
						             mode ? "flow" : "packet", sync ? "deps" : "rounds",
						             (long long)got, (long long)want, nrec);
					}
				/* flow mode at 64 MiB, many packets per message */
				int nrec;
				int64_t big = 64 << 20;
				int64_t got = simulate(dg, s, big, SIM_FLOW, SIM_ROUNDS, &nrec);
				assert_named(llabs(got - closed_form_ps(s, big)) <= 1, __LINE__, __FILE__,
				             "%s %s R %d flow 64 MiB: %lld ps, closed form %lld ps", algs[a],
				             coll_kind_name[kinds[k]], R, (long long)got,
				             (long long)closed_form_ps(s, big));
				ring_free(&r);
			}
}

/* The simulated time (flow mode, by rounds) of a's schedule over b's; b's
 * reconfigurations in *nb. */
static double
speedup(const AlgCtx *a, const AlgCtx *b, int64_t bytes, int *nb)
{
	Sched *x = quiet_build(a, false, 0), *y = quiet_build(b, false, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(x);
	CU_ASSERT_PTR_NOT_NULL_FATAL(y);
	int nx;
	double tx = (double)simulate(a->diag, x, bytes, SIM_FLOW, SIM_ROUNDS, &nx);
	return tx / (double)simulate(a->diag, y, bytes, SIM_FLOW, SIM_ROUNDS, nb);
}

/* n = 64, 800 Gb/s, 1 us per hop, alpha_step 1.7 us: Bridge alltoall
 * (R chosen for the size) against static Bruck, simulated (flow mode). At
 * delta = 10 us and 128 MiB it is an order of magnitude faster (63 hops of
 * transmission against 6); the advantage shrinks as delta grows. */
static void
test_speedup_vs_static(void)
{
	static const double deltas[] = {10e-6, 100e-6, 1e-3, 5e-3};
	int64_t bytes = 128 << 20;
	double last = INFINITY;
	for (size_t i = 0; i < 4; i++) {
		Ring r;
		ring_init(&r, 64, 0, CK_ALLTOALL, "bridge", -1);
		r.t->net.reconfig_delay = deltas[i];
		r.c.size = (double)bytes;
		AlgCtx sb = r.c;
		sb.algorithm = "s_bruck";
		int nb;
		double gain = speedup(&sb, &r.c, bytes, &nb);
		if (i == 0)
			assert_named(gain > 10 && nb == 5, __LINE__, __FILE__,
			             "delta 10 us: %.2fx with %d reconfigurations", gain, nb);
		assert_named(gain < last && gain > 1, __LINE__, __FILE__,
		             "delta %g s: %.2fx, not below %.2fx", deltas[i], gain, last);
		last = gain;
		ring_free(&r);
	}
	/* the mirrored copy on the reverse fibers: 2x for every variant (less
	 * the delay, which both pay) */
	static const char *const algs[] = {"bridge", "s_bruck", "g_bruck"};
	for (size_t a = 0; a < 3; a++) {
		Ring r;
		ring_init(&r, 64, 0, CK_ALLTOALL, algs[a], a == 0 ? 2 : -1);
		AlgCtx two = r.c;
		two.mirrored = true;
		int n2;
		double gain = speedup(&r.c, &two, bytes, &n2);
		assert_named(gain > 1.95 && gain <= 2, __LINE__, __FILE__, "%s mirrored: %.3fx", algs[a],
		             gain);
		ring_free(&r);
	}
}

/* A user schedule composes Bridge's schedules that keep the initial ring,
 * and refuses one that rewires it (it would need its configurations). */
static void
test_composition(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char ok[] =
		"topology O = optical_ring(8);\n"
		"collective allreduce B on O { chunks 16; schedule {\n"
		"  use s_bruck(mirrored) for reduce_scatter; use bridge(reconfigs 0) for allgather; } }\n";
	static const char bad[] =
		"topology O = optical_ring(8);\n"
		"collective allreduce A on O { schedule {\n"
		"  use bridge(reconfigs 1) for reduce_scatter; use s_bruck for allgather; } }\n";
	Checked c;
	check_built(dg, &c, "ok.coll", ok, sizeof ok - 1);
	assert_named(c.errors == 0, __LINE__, __FILE__, "%s", c.diag);
	checked_free(&c);
	check_built(dg, &c, "bad.coll", bad, sizeof bad - 1);
	CU_ASSERT(c.errors > 0);
	ASSERT_DIAG(&c, "bad.coll:3:7: error: use bridge: a schedule that rewires the optical "
	                "circuits cannot be composed");
	checked_free(&c);
}

/* Schedule text in memory (ir_backend), or NULL. */
static char *
ir_text(const Prog *p)
{
	char *buf = NULL;
	size_t len;
	FILE *mem = open_memstream(&buf, &len);
	BuildOpts o = {0};
	Diag none = diag_new(); /* writing the IR text reports nothing */
	int rc = ir_backend.emit(&none, p, &o, mem);
	fclose(mem);
	if (rc != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Reads schedule text and verifies every schedule, diagnostics muted; 0 when both pass. */
static int
ir_back(Diag *dg, const char *text, Prog *q)
{
	memset(q, 0, sizeof *q);
	diag_mute(dg, true);
	diag_reset(dg);
	diag_source(dg, "o.ir", text, strlen(text));
	int rc = ir_read(dg, text, strlen(text), q);
	for (int i = 0; rc == 0 && i < q->nsched; i++)
		rc = verify(dg, q->sched[i]);
	diag_mute(dg, false);
	diag_reset(dg);
	return rc;
}

/* The circuit configurations of bridge schedules (16 nodes on 8 port pairs),
 * written as schedule text and read back: the same phases (round, rewired or
 * kept, every block's next), and the routes are checked against them: a
 * phase read back wrong is refused. */
static void
test_phases_ir_round_trip(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char text[] =
		"topology O = optical_ring(16, ports 16);\n"
		"collective alltoall A on O { algorithm bridge(reconfigs 2); }\n"
		"collective allreduce B on O { algorithm bridge(reconfigs 1); }\n";
	Checked c;
	check_text(dg, &c, "o.coll", text, strlen(text));
	CU_ASSERT_EQUAL_FATAL(c.errors, 0);
	Prog p = {0}, q;
	diag_mute(dg, true);
	int built = lower(dg, c.file, &p);
	diag_mute(dg, false);
	CU_ASSERT_EQUAL_FATAL(built, 0);
	CU_ASSERT_EQUAL_FATAL(p.nsched, 2);
	char *ir = ir_text(&p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ir);
	CU_ASSERT_EQUAL_FATAL(ir_back(dg, ir, &q), 0);
	CU_ASSERT_EQUAL_FATAL(q.nsched, 2);
	int nb = optical_nblock(p.sched[0]->topo);
	CU_ASSERT_EQUAL(nb, 8);
	for (int k = 0; k < 2; k++) {
		const Sched *a = p.sched[k], *b = q.sched[k];
		/* the initial ring, then one phase per reconfiguration: A's two, and
		 * B's reduce-scatter and allgather halves one each */
		CU_ASSERT_EQUAL(a->nphase, 3);
		CU_ASSERT_EQUAL(sched_nreconfig(b), 2);
		int same = a->nphase == b->nphase;
		for (int i = 0; same && i < a->nphase; i++) {
			same = a->phase[i].round == b->phase[i].round &&
			       a->phase[i].reconfig == b->phase[i].reconfig;
			for (int u = 0; same && u < nb; u++)
				same = a->phase[i].next[u] == b->phase[i].next[u];
		}
		assert_named(same, __LINE__, __FILE__, "%s: the phases read back are those written",
		             a->name);
	}
	/* and the text read back writes the same bytes */
	char *again = ir_text(&q);
	CU_ASSERT(again && strcmp(ir, again) == 0);
	free(again);
	prog_free(&q);
	/* A's last phase (4 subrings of 2 blocks) turned back into the initial
	 * ring: its rounds' routes use circuits that no longer exist */
	char *last = strstr(ir, "phase 3 rewired 4 5 6 7 0 1 2 3\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(last);
	memcpy(last, "phase 3 rewired 1 2 3 4 5 6 7 0\n", strlen("phase 3 rewired 1 2 3 4 5 6 7 0\n"));
	CU_ASSERT_NOT_EQUAL(ir_back(dg, ir, &q), 0);
	prog_free(&q);
	free(ir);
	prog_free(&p);
	checked_free(&c);
}

CU_TestInfo optical_tests[] = {
	{"circuit configurations read back from schedule text", test_phases_ir_round_trip},
	{"a route crosses each block once at most", test_route_room},
	{"user schedules compose s_bruck, refuse a rewiring bridge", test_composition},
	{"n = 64, delta = 10 us: 10x over static Bruck, shrinking with delta; mirrored 2x",
	 test_speedup_vs_static},
	{"simulated times equal the closed form, delay included", test_sim_closed_form},
	{"n = 16, R = 1: subrings of 4, 0 reaches 4 in 1 hop and 8 in 2", test_worked_example},
	{"reconfiguring at k: 2^k subrings holding every later peer", test_subrings},
	{"n = 64 points: A2A periodic, RS earlier, AG later", test_points_table},
	{"the search against every set of points, n <= 64", test_search_exhaustive},
	{"every algorithm, kind, mirror and port count verifies", test_every_variant},
	{"S-Bruck, G-Bruck, mirrored, R-HD hop counts", test_baselines},
	{"every algorithm and kind runs on real data (collc run's executor)", test_executes},
	{"errors: shapes, configurations, routes", test_errors},
	CU_TEST_INFO_NULL,
};
