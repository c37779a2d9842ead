/* test_repeat.c: the repeated form of a pipelined schedule (Sched.repeat,
 * ir/repeat.c; docs/ir.md "The repeated form"), as packing builds it. On
 * rails clusters of 2 to 4 boxes, for allgather, reduce-scatter and
 * allreduce at 1 GiB: the repeated form listed (sched_listed) is the listed
 * form message for message (rounds, ends, routes, chunks, instances), both
 * verify, their metrics agree, and the simulator's stream of the repeated
 * form gives the listed form's times and link bytes in flow and packet
 * mode; a broken repeated form is refused by verify. On 512 GPUs, where
 * MAX_PACK_MSGS bound the listed form's segments, collc sim's form reaches
 * the model's count and verifies; and `--sync deps`, which lists them,
 * builds as many as that cap holds and runs them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "collc_limits.h"
#include "sim.h"
#include "tests.h"
#include "driver.h"
#include "to_sim.h"

/* One collective of a lowered file and a context to build packing for it. */
typedef struct Built {
	char text[512]; /* the file: the Diag quotes it while b lives */
	Checked c;
	Prog p;
	Routes routes;
	Arena a;
	AlgCtx ctx;
} Built;

static bool
built(Diag *dg, const char *topo, const char *kind, Built *b)
{
	memset(b, 0, sizeof *b);
	char *text = b->text;
	snprintf(text, sizeof b->text, "network { link_bandwidth = 3600 Gbps; link_latency = 500 ns; }\n"
	         "topology C = %s;\ncollective %s X on C { algorithm packing; }\n", topo, kind);
	check_text(dg, &b->c, "r.coll", text, strlen(text));
	if (b->c.errors || lower(dg, b->c.file, &b->p) != 0 || b->p.nsched != 1)
		return false;
	const Sched *s = b->p.sched[0];
	routes_init(&b->routes, s->topo, ROUTE_FASTEST);
	b->ctx = alg_ctx_new(dg, &b->a, s->name, s->loc, s->kind, s->topo, &b->routes, s->rank_node,
	                     s->nrank);
	b->ctx.algorithm = "packing";
	b->ctx.size = 1 << 30;
	b->ctx.pack_group = s->pack_group;
	return true;
}

static void
built_free(Built *b)
{
	routes_free(&b->routes);
	arena_free(&b->a);
	prog_free(&b->p);
	checked_free(&b->c);
}

/* Whether x and y are the same explicit schedule, message for message. */
static bool
same_listed(const Sched *x, const Sched *y)
{
	if (x->nmsg != y->nmsg || x->nround != y->nround || x->nchunk != y->nchunk ||
	    x->nroute != y->nroute || x->segments != y->segments)
		return false;
	for (int i = 0; i < x->nmsg; i++) {
		const Msg *a = &x->msg[i], *b = &y->msg[i];
		if (a->round != b->round || a->src != b->src || a->dst != b->dst || a->route != b->route ||
		    a->first != b->first || a->n != b->n || a->op != b->op || a->instance != b->instance ||
		    a->fuse != b->fuse)
			return false;
		for (int k = 0; k < a->n; k++)
			if (x->chunks[a->first + k] != y->chunks[b->first + k])
				return false;
	}
	for (int c = 0; x->owner && c < x->nchunk; c++)
		if (!y->owner || x->owner[c] != y->owner[c])
			return false;
	for (int r = 0; r <= x->nroute; r++)
		if (x->route_off[r] != y->route_off[r])
			return false;
	for (int k = 0; k < x->route_off[x->nroute]; k++)
		if (x->route_link[k] != y->route_link[k])
			return false;
	return true;
}

static bool
close_to(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

/* The simulator's run of s round by round (the stream where s is
 * repeated); -1 when it does not run. */
static int
simulated(Diag *dg, Arena *a, const Sched *s, SimMode mode, SimResult *res)
{
	SimNet net;
	char err[256];
	SimOpts o = {.mode = mode, .sync = SIM_ROUNDS};
	if (sim_stream_scheds(dg, a, &s, 1, &net) != 0)
		return -1;
	int64_t bytes = mode == SIM_FLOW ? (int64_t)1 << 30 : (int64_t)1 << 20;
	return sim_run(a, &net, 0, bytes, &o, res, err, sizeof err);
}

static void
same_runs(Diag *dg, const Sched *listed, const Sched *rep)
{
	for (int mode = 0; mode < 2; mode++) {
		Arena a = {0};
		SimResult x, y;
		CU_ASSERT_FATAL(simulated(dg, &a, listed, (SimMode)mode, &x) == 0);
		CU_ASSERT_FATAL(simulated(dg, &a, rep, (SimMode)mode, &y) == 0);
		CU_ASSERT(x.time_s == y.time_s);
		CU_ASSERT(x.time_ps == y.time_ps);
		CU_ASSERT(x.nround == y.nround);
		for (int l = 0; l < x.nlink; l++)
			CU_ASSERT(x.link_bytes[l] == y.link_bytes[l]);
		arena_free(&a);
	}
}

static void
test_equal_listed(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	const char *topo[] = {"rails(boxes 2, gpus 8, nic_gbps 400)",
	                      "rails(boxes 3, gpus 4, nic_gbps 200)",
	                      "rails(boxes 4, gpus 8, nic_gbps 400)"};
	const char *kind[] = {"allgather", "reduce_scatter", "allreduce"};
	int checked = 0;
	for (int t = 0; t < 3; t++)
		for (int k = 0; k < 3; k++) {
			Built b;
			CU_ASSERT_FATAL(built(dg, topo[t], kind[k], &b));
			Sched *listed = alg_packing_form(&b.ctx, PACK_FORM_LISTED);
			Sched *rep = alg_packing_form(&b.ctx, PACK_FORM_REPEATED);
			CU_ASSERT_FATAL(listed && rep);
			CU_ASSERT(listed->repeat == 0);
			CU_ASSERT(rep->repeat == listed->segments && rep->repeat > 1);
			CU_ASSERT(rep->nmsg * rep->repeat == listed->nmsg);
			CU_ASSERT(verify(dg, listed) == 0);
			CU_ASSERT(verify(dg, rep) == 0);
			const Sched *unfolded = sched_listed(dg, &b.a, rep);
			CU_ASSERT_FATAL(unfolded != NULL);
			CU_ASSERT(same_listed(listed, unfolded));
			Metrics ml, mr;
			metrics(listed, 1 << 30, &ml);
			metrics(rep, 1 << 30, &mr);
			CU_ASSERT(ml.rounds == mr.rounds && ml.messages == mr.messages);
			CU_ASSERT(close_to(ml.volume, mr.volume) && close_to(ml.psi, mr.psi));
			CU_ASSERT(close_to(ml.theta, mr.theta) && close_to(ml.omega, mr.omega));
			CU_ASSERT(close_to(ml.model_time, mr.model_time));
			if (t < 2)
				same_runs(dg, listed, rep);
			checked++;
			built_free(&b);
		}
	CU_ASSERT(checked == 9);
}

/* A repeated form broken each way verify must see. */
static void
test_broken_refused(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Built b;
	CU_ASSERT_FATAL(built(dg, "rails(boxes 2, gpus 4, nic_gbps 400)", "allgather", &b));
	Sched *rep = alg_packing_form(&b.ctx, PACK_FORM_REPEATED);
	CU_ASSERT_FATAL(rep && rep->repeat > 1 && rep->nmsg > 2);
	char why[256];
	CU_ASSERT(verify_quiet(dg, rep, why, sizeof why) == 0);
	Sched bad = *rep;
	int *chunks = arena_array(&b.a, (size_t)rep->msg[rep->nmsg - 1].first + rep->msg[rep->nmsg - 1].n,
	                          sizeof *chunks);
	memcpy(chunks, rep->chunks, (size_t)(rep->msg[rep->nmsg - 1].first + rep->msg[rep->nmsg - 1].n) *
	       sizeof *chunks);
	bad.chunks = chunks;
	chunks[0] += 1; /* a chunk of segment 1 in segment 0 */
	CU_ASSERT(verify_quiet(dg, &bad, why, sizeof why) != 0);
	CU_ASSERT(strstr(why, "repeated form") != NULL);
	chunks[0] = rep->chunks[0] + rep->repeat; /* another unit's chunk: a wrong delivery */
	CU_ASSERT(verify_quiet(dg, &bad, why, sizeof why) != 0);
	bad = *rep;
	bad.nmsg--; /* a transfer missing from every segment */
	CU_ASSERT(verify_quiet(dg, &bad, why, sizeof why) != 0);
	bad = *rep;
	bad.nround = rep->nround - 1; /* the last segment cut off */
	CU_ASSERT(verify_quiet(dg, &bad, why, sizeof why) != 0);
	bad = *rep;
	bad.repeat = rep->repeat * 2; /* chunks that no segment 0 covers */
	CU_ASSERT(verify_quiet(dg, &bad, why, sizeof why) != 0);
	built_free(&b);
}

/* Listing a repeated form (for MSCCL, an MPI library, --sync deps) past
 * MAX_PACK_MSGS messages is refused before anything is listed, at the
 * collective, naming the limit: segment 0 of 2 x 4 GPUs given 2^18
 * segments (its chunks and owners remade so that the form holds). */
static void
test_listing_refused(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Built b;
	CU_ASSERT_FATAL(built(dg, "rails(boxes 2, gpus 4, nic_gbps 400)", "allgather", &b));
	Sched *rep = alg_packing_form(&b.ctx, PACK_FORM_REPEATED);
	CU_ASSERT_FATAL(rep && rep->repeat > 1);
	int M = rep->repeat, R = 1 << 18;
	Sched big = *rep;
	size_t total = (size_t)rep->msg[rep->nmsg - 1].first + (size_t)rep->msg[rep->nmsg - 1].n;
	int *chunks = arena_array(&b.a, total, sizeof *chunks);
	for (size_t k = 0; k < total; k++)
		chunks[k] = rep->chunks[k] / M * R;
	big.chunks = chunks;
	big.repeat = R;
	big.nchunk = rep->nchunk / M * R;
	big.nround = rep->nround - M + R;
	int *owner = arena_array(&b.a, (size_t)big.nchunk, sizeof *owner);
	for (int c = 0; c < big.nchunk; c++)
		owner[c] = rep->owner[c / R * M];
	big.owner = owner;
	CU_ASSERT((double)big.nmsg * R > MAX_PACK_MSGS);
	CU_ASSERT(verify(dg, &big) == 0);
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	diag_stream(dg, mem);
	CU_ASSERT(sched_listed(dg, &b.a, &big) == NULL);
	diag_stream(dg, NULL);
	fclose(mem);
	CU_ASSERT(strstr(text, "r.coll:3:") == text);
	CU_ASSERT(strstr(text, "MAX_PACK_MSGS") != NULL);
	free(text);
	built_free(&b);
}

/* 64 boxes of 8: one copy per root is 261,632 messages a segment, so
 * MAX_PACK_MSGS held the listed form to 32 segments; collc sim's form
 * takes the model's count, which is more. */
static void
test_past_the_cap(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Built b;
	CU_ASSERT_FATAL(built(dg, "rails(boxes 64, gpus 8, nic_gbps 400)", "allgather", &b));
	b.ctx.compact = true;
	Sched *s = alg_packing(&b.ctx);
	CU_ASSERT_FATAL(s != NULL);
	double edges = (double)s->nmsg;
	CU_ASSERT(s->repeat > 1 && s->repeat == s->segments);
	CU_ASSERT(edges * s->repeat > MAX_PACK_MSGS);
	char want[64];
	snprintf(want, sizeof want, "segments %d of", s->repeat);
	CU_ASSERT(strncmp(s->choice, want, strlen(want)) == 0);
	CU_ASSERT(verify(dg, s) == 0);
	built_free(&b);
}

/* The same 512 GPUs as collc sim --sync deps builds them: every message at
 * once, so packing lists its segments (AlgCtx.listed), as many as
 * MAX_PACK_MSGS holds; they verify, and the simulator runs them by
 * dependencies as it runs them by rounds, each at most 1.05x the other
 * (docs/algorithms.md: 97.6 % of the bound by dependencies). */
static void
test_listed_deps(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Built b;
	CU_ASSERT_FATAL(built(dg, "rails(boxes 64, gpus 8, nic_gbps 400)", "allgather", &b));
	b.ctx.compact = true;
	b.ctx.listed = true;
	Sched *s = alg_packing(&b.ctx);
	CU_ASSERT_FATAL(s != NULL);
	double per = (double)s->nmsg / s->segments; /* one segment's messages */
	CU_ASSERT(s->repeat == 0 && s->segments > 1 && s->nmsg <= MAX_PACK_MSGS);
	CU_ASSERT(2 * s->segments * per > MAX_PACK_MSGS); /* the cap's, not fewer */
	CU_ASSERT_FATAL(verify(dg, s) == 0);
	double t[2];
	for (int sync = 0; sync < 2; sync++) {
		Arena a = {0};
		SimNet net;
		SimResult r;
		char err[256];
		SimOpts o = {.mode = SIM_FLOW, .sync = (SimSync)sync};
		CU_ASSERT_FATAL(sched_to_sim(dg, &a, s, (SimSync)sync, &net) == 0);
		CU_ASSERT_FATAL(sync == SIM_ROUNDS || net.coll[0].has_deps);
		CU_ASSERT_FATAL(sim_run(&a, &net, 0, (int64_t)1 << 30, &o, &r, err, sizeof err) == 0);
		t[sync] = r.time_s;
		arena_free(&a);
	}
	printf("[%d segments: %.2f us by rounds, %.2f by dependencies] ", s->segments, t[0] * 1e6,
	       t[1] * 1e6);
	CU_ASSERT(t[1] <= 1.05 * t[0] && t[0] <= 1.05 * t[1]);
	built_free(&b);
}

CU_TestInfo repeat_tests[] = {
	{"repeated form listed is the listed form, 2-4 boxes, AG RS AR", test_equal_listed},
	{"a broken repeated form is refused", test_broken_refused},
	{"listing past MAX_PACK_MSGS is a located error", test_listing_refused},
	{"512 GPUs: past MAX_PACK_MSGS the model's segments", test_past_the_cap},
	{"512 GPUs, --sync deps: the segments MAX_PACK_MSGS holds, listed and run", test_listed_deps},
	CU_TEST_INFO_NULL,
};
