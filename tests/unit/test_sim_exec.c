/*
 * test_sim_exec.c: the executor model (docs/sim.md 7, backends/msccl_exec.c)
 * against its closed forms: a chain of thread blocks pipelines its slices,
 * the protocols carry their shares of a link, a ring allreduce on 1, 2, 4
 * and 8 channels takes the ring's time, a tree of chains pipelines like one
 * chain, and a foreign tree program pipelines by its loop's iterations.
 * Programs are written as XML here and read as `collc sim` reads them; links
 * have no latency unless a test says, so times are bytes over bandwidth.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msccl_to_sim.h"
#include "test_sim.h"

enum { XML_CAP = 1 << 16 };
static const double BW = 8e9; /* bits/s: 1e9 bytes/s, so a byte takes a nanosecond */

typedef struct Xml {
	char buf[XML_CAP];
	size_t len;
} Xml;

static void PRINTF_LIKE(2, 3)
put(Xml *x, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(x->buf + x->len, XML_CAP - x->len, fmt, ap);
	va_end(ap);
	CU_ASSERT_FATAL(n >= 0 && x->len + (size_t)n < XML_CAP);
	x->len += (size_t)n;
}

static void
head(Xml *x, const char *proto, int ncpl, int nchan, int ngpus, const char *coll)
{
	x->len = 0;
	put(x, "<algo name=\"t\" proto=\"%s\" nchannels=\"%d\" nchunksperloop=\"%d\" ngpus=\"%d\" "
	    "coll=\"%s\" inplace=\"1\" outofplace=\"0\" minBytes=\"0\" maxBytes=\"0\">\n", proto,
	    nchan, ncpl, ngpus, coll);
}

static void
step(Xml *x, int s, const char *type, int off, int cnt, int depid, int deps, int hasdep)
{
	put(x, "<step s=\"%d\" type=\"%s\" srcbuf=\"i\" srcoff=\"%d\" dstbuf=\"i\" dstoff=\"%d\" "
	    "cnt=\"%d\" depid=\"%d\" deps=\"%d\" hasdep=\"%d\"/>\n", s, type, off, off, cnt, depid,
	    deps, hasdep);
}

/* One tb on gpu g with a single step: a chain's link. */
static void
one_step_gpu(Xml *x, int g, int nchunks, int send, int recv, const char *type, int cnt)
{
	put(x, "<gpu id=\"%d\" i_chunks=\"%d\" o_chunks=\"0\" s_chunks=\"0\">\n", g, nchunks);
	put(x, "<tb id=\"0\" send=\"%d\" recv=\"%d\" chan=\"0\">\n", send, recv);
	step(x, 0, type, 0, cnt, -1, -1, 0);
	put(x, "</tb>\n</gpu>\n");
}

/* A chain 0 -> 1 -> ... -> h: rank 0 sends C chunks, ranks 1 .. h - 1 pass
 * them on (rcs), rank h receives. */
static void
chain_xml(Xml *x, const char *proto, int h, int c)
{
	head(x, proto, c, 1, h + 1, "broadcast");
	for (int g = 0; g <= h; g++)
		one_step_gpu(x, g, c, g < h ? g + 1 : -1, g > 0 ? g - 1 : -1,
		             g == 0 ? "s" : g < h ? "rcs" : "r", c);
	put(x, "</algo>\n");
}

/* A ring allreduce on p ranks and k channels: channel c reduces and
 * gathers chunks c p .. c p + p - 1 around the ring r -> r + 1. */
static void
ring_xml(Xml *x, const char *proto, int p, int k)
{
	head(x, proto, p * k, k, p, "allreduce");
	for (int r = 0; r < p; r++) {
		put(x, "<gpu id=\"%d\" i_chunks=\"%d\" o_chunks=\"0\" s_chunks=\"0\">\n", r, p * k);
		for (int c = 0; c < k; c++) {
			put(x, "<tb id=\"%d\" send=\"%d\" recv=\"%d\" chan=\"%d\">\n", c, (r + 1) % p,
			    (r + p - 1) % p, c);
			for (int t = 0; t <= 2 * p - 2; t++) {
				const char *type = t == 0 ? "s" : t < p - 1 ? "rrs" : t == p - 1 ? "rrcs"
				                   : t < 2 * p - 2 ? "rcs" : "r";
				step(x, t, type, c * p + ((r - t) % p + p) % p, 1, -1, -1, 0);
			}
			put(x, "</tb>\n");
		}
		put(x, "</gpu>\n");
	}
	put(x, "</algo>\n");
}

/* A broadcast tree of two chains from rank 0: 0 -> 1 -> 2 and 0 -> 3 -> 4,
 * rank 0 a tb per child. */
static void
tree_xml(Xml *x, int c)
{
	head(x, "Simple", c, 1, 5, "broadcast");
	put(x, "<gpu id=\"0\" i_chunks=\"%d\" o_chunks=\"0\" s_chunks=\"0\">\n", c);
	put(x, "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n");
	step(x, 0, "s", 0, c, -1, -1, 0);
	put(x, "</tb>\n<tb id=\"1\" send=\"3\" recv=\"-1\" chan=\"0\">\n");
	step(x, 0, "s", 0, c, -1, -1, 0);
	put(x, "</tb>\n</gpu>\n");
	one_step_gpu(x, 1, c, 2, 0, "rcs", c);
	one_step_gpu(x, 2, c, -1, 1, "r", c);
	one_step_gpu(x, 3, c, 4, 0, "rcs", c);
	one_step_gpu(x, 4, c, -1, 3, "r", c);
	put(x, "</algo>\n");
}

/* The program's time at `bytes` on t (rank r on node r), flow mode by
 * dependencies, in seconds; -1 if it fails. */
static double
exec_time(const char *text, size_t len, const Topo *t, int64_t bytes)
{
	Arena a = {0};
	MProg p;
	Diag d = diag_new(), *dg = &d; /* this read's diagnostics */
	diag_source(dg, "t.xml", text, len);
	double s = -1;
	if (msccl_read(dg, &a, text, len, false, &p) == 0) {
		int node[64];
		for (int r = 0; r < p.ngpus && r < 64; r++)
			node[r] = r;
		SimNet net;
		SimResult res;
		SimOpts o = {.mode = SIM_FLOW, .sync = SIM_DEPS};
		char err[256];
		if (sim_from_msccl_exec(dg, &a, &p, t, node, bytes, &net) == 0 &&
		    sim_run(&a, &net, 0, bytes, &o, &res, err, sizeof err) == 0)
			s = res.time_s;
	}
	arena_free(&a);
	return s;
}

/* The latencies a program of protocol pr pays along a path of n steps of
 * class hw: the call's base and n step latencies, in seconds. */
static double
lat_s(MProto pr, int n, int hw)
{
	ExecProto e = exec_proto(pr);
	return (double)(e.base_ps + n * e.step_ps[hw]) * 1e-12;
}

static Topo *
full_topo(Arena *a, int n, double latency)
{
	Net net = net_defaults;
	net.bandwidth = BW;
	net.link_latency = latency;
	net.router_latency = 0;
	return topo_new(a, TK_FULL, "F", 1, &n, 0, net);
}

/* h thread blocks in a chain moving C chunks in S slices: (S + h - 1)
 * slice times, whatever C, the loop's iterations I and h (Simple: 2 slices
 * of a call, a call a 2 MiB chunk at these sizes, so S = 2 C I), plus the
 * latencies: the call's base and one step latency per hop (full(n) is one
 * box: NVLink's). */
void
test_exec_chain(void)
{
	Arena a = {0};
	Xml *x = malloc(sizeof *x);
	for (int h = 1; h <= 5; h += 2)
		for (int c = 1; c <= 3; c += 2)
			for (int it = 1; it <= 2; it++) {
				chain_xml(x, "Simple", h, c);
				int64_t bytes = (int64_t)c * it * (2 << 20);
				double tau = (1 << 20) * 8 / BW, s = 2.0 * c * it;
				double got = exec_time(x->buf, x->len, full_topo(&a, h + 1, 0), bytes);
				double want = (s + h - 1) * tau + lat_s(MP_SIMPLE, h, EXEC_NVLINK);
				assert_named(within(got, want, 1e-9), __LINE__, __FILE__,
				             "h %d, C %d, %d iterations: %.9g s, want (%g + %d - 1) x %.6g + "
				             "8.4 us + %d x 3.4 us", h, c, it, got, s, h, tau, h);
			}
	/* with a hop latency d: NCCL's step latency is end to end, the wire in
	 * it, so a hop costs max(d, 3.4 us) once: d = 1 us is within the
	 * step's latency (no change), d = 5 us is past it (+ h (d - 3.4 us)) */
	chain_xml(x, "Simple", 3, 2);
	double tau = (1 << 20) * 8 / BW, lam = lat_s(MP_SIMPLE, 1, EXEC_NVLINK) - lat_s(MP_SIMPLE, 0,
	                                                                             EXEC_NVLINK);
	for (double d = 1e-6; d < 6e-6; d += 4e-6) {
		double got = exec_time(x->buf, x->len, full_topo(&a, 4, d), 2 * (2 << 20));
		double want = (4 + 3 - 1) * tau + lat_s(MP_SIMPLE, 0, EXEC_NVLINK) + 3 * (d > lam ? d : lam);
		assert_named(within(got, want, 1e-9), __LINE__, __FILE__,
		             "hop latency %.1f us: %.9g s, want %.9g", d * 1e6, got, want);
	}
	free(x);
	arena_free(&a);
}

/* A gather that reduces: ranks 1 .. k each send one chunk to rank 0,
 * whose k tbs receive and reduce it into one buffer (rrc), each after the
 * one before (depid). The slices arrive together, one slice time after
 * the call's base latency; each tb's flag is set then and seen a step
 * latency later, whatever the tb before it did, and the reductions take no
 * time: b + tau + λ, not k latencies in a row (the local waits cost
 * nothing; before, each tb paid λ after the one before: packing on the
 * NVSwitch box at 4 MiB lost 7 x 2.4 us so). A chunk of 4 KiB is one
 * slice (Simple's least slice is 32 KiB). */
void
test_exec_reduce_chain(void)
{
	static const MProto protos[] = {MP_SIMPLE, MP_LL128};
	const int k = 7;
	Arena a = {0};
	Xml *x = malloc(sizeof *x);
	for (size_t i = 0; i < countof(protos); i++) {
		head(x, mproto_name[protos[i]], 1, 1, k + 1, "allreduce");
		put(x, "<gpu id=\"0\" i_chunks=\"1\" o_chunks=\"0\" s_chunks=\"0\">\n");
		for (int j = 1; j <= k; j++) {
			put(x, "<tb id=\"%d\" send=\"-1\" recv=\"%d\" chan=\"0\">\n", j - 1, j);
			step(x, 0, "rrc", 0, 1, j > 1 ? j - 2 : -1, j > 1 ? 0 : -1, j < k);
			put(x, "</tb>\n");
		}
		put(x, "</gpu>\n");
		for (int j = 1; j <= k; j++)
			one_step_gpu(x, j, 1, 0, -1, "s", 1);
		put(x, "</algo>\n");
		ExecProto e = exec_proto(protos[i]);
		int64_t bytes = 4096;
		double tau = ceil((double)bytes * e.wire_num / e.wire_den) * 8 / BW;
		double got = exec_time(x->buf, x->len, full_topo(&a, k + 1, 0), bytes);
		double want = tau + lat_s(protos[i], 1, EXEC_NVLINK);
		assert_named(within(got, want, 1e-9), __LINE__, __FILE__, "%s: %.9g s, want %.9g",
		             mproto_name[protos[i]], got, want);
	}
	free(x);
	arena_free(&a);
}

/* A protocol's share of a link: Simple all of it, LL half (a 16-byte line
 * carries 8 bytes of data), LL128 120/128; one hop and a chain of three,
 * each (S + h - 1) times its slice's wire bytes. */
void
test_exec_protocols(void)
{
	static const struct {
		const char *name;
		MProto proto;
		double share;
	} pr[] = {{"Simple", MP_SIMPLE, 1}, {"LL", MP_LL, 0.5}, {"LL128", MP_LL128, 120.0 / 128}};
	Arena a = {0};
	Xml *x = malloc(sizeof *x);
	for (size_t i = 0; i < countof(pr); i++) {
		ExecProto e = exec_proto(pr[i].proto);
		int iters = 4;
		int64_t bytes = e.chunk_data * iters;
		double s = (double)e.slices * iters;
		double tau = (double)e.chunk_data / e.slices / pr[i].share * 8 / BW;
		for (int h = 1; h <= 3; h += 2) {
			chain_xml(x, pr[i].name, h, 1);
			double got = exec_time(x->buf, x->len, full_topo(&a, h + 1, 0), bytes);
			double want = (s + h - 1) * tau + lat_s(pr[i].proto, h, EXEC_NVLINK);
			assert_named(within(got, want, 1e-9), __LINE__, __FILE__,
			             "%s, h %d: %.9g s, want %.9g", pr[i].name, h, got, want);
		}
	}
	/* the constants, as docs/sim.md 7 cites them */
	CU_ASSERT_EQUAL(exec_proto(MP_SIMPLE).slot_bytes, 524288);
	CU_ASSERT_EQUAL(exec_proto(MP_SIMPLE).window, 4);
	CU_ASSERT_EQUAL(exec_proto(MP_LL).chunk_data, 32768);
	CU_ASSERT_EQUAL(exec_proto(MP_LL128).chunk_data, 576000);
	CU_ASSERT_EQUAL(exec_proto(MP_LL128).window, 8);
	/* NCCL's ring latencies (src/graph/tuning.cc), in ps */
	CU_ASSERT_EQUAL(exec_proto(MP_SIMPLE).base_ps, 8400000);
	CU_ASSERT_EQUAL(exec_proto(MP_LL).base_ps, 6600000);
	CU_ASSERT_EQUAL(exec_proto(MP_LL128).base_ps, 14000000);
	CU_ASSERT_EQUAL(exec_proto(MP_SIMPLE).step_ps[EXEC_NVLINK], 3400000);
	CU_ASSERT_EQUAL(exec_proto(MP_LL).step_ps[EXEC_NVLINK], 600000);
	CU_ASSERT_EQUAL(exec_proto(MP_LL128).step_ps[EXEC_NVLINK], 1900000);
	CU_ASSERT_EQUAL(exec_proto(MP_SIMPLE).step_ps[EXEC_NET], 14000000);
	CU_ASSERT_EQUAL(exec_proto(MP_LL).step_ps[EXEC_NET], 2700000);
	CU_ASSERT_EQUAL(exec_proto(MP_LL128).step_ps[EXEC_NET], 4000000);
	free(x);
	arena_free(&a);
}

/* A ring allreduce on p = 4 ranks of a ring, 1, 2, 4 and 8 channels: each
 * link carries 2 (p - 1) / p of the vector back to back, so the time is
 * 2 (p - 1) N / (p B) for every channel count (the channels share the
 * links fairly; a chunk is whole slices), plus the latencies: the base,
 * and one step latency (a ring is a fabric: NET's) per loop iteration of
 * a tb, I = N / (p k chunkSize): the iteration's last step receives, and
 * the next iteration's first send waits behind it in the tb. */
void
test_exec_ring_channels(void)
{
	Arena a = {0};
	Xml *x = malloc(sizeof *x);
	int p = 4;
	Net net = net_defaults;
	net.bandwidth = BW;
	net.link_latency = 0;
	net.router_latency = 0;
	Topo *t = topo_new(&a, TK_RING, "R", 1, &p, 0, net);
	int64_t bytes = 64 << 20;
	double want = 2.0 * (p - 1) / p * (double)bytes * 8 / BW;
	for (int k = 1; k <= 8; k *= 2) {
		ring_xml(x, "Simple", p, k);
		double got = exec_time(x->buf, x->len, t, bytes);
		int iters = (int)(bytes / p / k / exec_proto(MP_SIMPLE).chunk_data);
		double w = want + lat_s(MP_SIMPLE, iters, EXEC_NET);
		assert_named(within(got, w, 1e-9), __LINE__, __FILE__,
		             "%d channels: %.9g s, want %.9g", k, got, w);
	}
	free(x);
	arena_free(&a);
}

/* A tree of two chains from the root pipelines as one chain of its depth:
 * (S + 2 - 1) slice times and its 2 step latencies, the root's two thread
 * blocks on their own links. */
void
test_exec_tree(void)
{
	Arena a = {0};
	Xml *x = malloc(sizeof *x);
	for (int c = 1; c <= 4; c *= 2) {
		tree_xml(x, c);
		double tau = (1 << 20) * 8 / BW, s = 2.0 * c;
		double got = exec_time(x->buf, x->len, full_topo(&a, 5, 0), (int64_t)c * (2 << 20));
		double want = (s + 1) * tau + lat_s(MP_SIMPLE, 2, EXEC_NVLINK);
		assert_named(within(got, want, 1e-9), __LINE__, __FILE__,
		             "C %d: %.9g s, want %.9g", c, got, want);
	}
	free(x);
	arena_free(&a);
}

/* msccl-scheduler's tree allreduce for 4 GPUs (LL, 24 channels, a tb per
 * chunk and hop, one step each) on full(4) at 100 GB/s: a tb cannot pass a
 * step on before it is whole, so one loop iteration is its 6 hops one
 * after another, 12 chunks sharing each hop's link; the iterations
 * pipeline, each adding what the busiest link carries per iteration (24
 * chunks): T(I) = (6 x 12 + (I - 1) x 24) x w / B, w = 2 x 32 KiB on the
 * wire for a 32 KiB chunk of data; plus LL's base and the step latencies
 * of the 6 hops of one iteration, of which from I = 2 on one falls inside
 * the busiest link's busy time (the later iterations' all do). */
void
test_exec_foreign_tree(void)
{
	const char *dir = getenv("COLLC_FIXTURES");
	char path[512], err[256];
	snprintf(path, sizeof path, "%s/collected/mscclsched_ncv4_ar_tree_12_LL.xml",
	         dir ? dir : "tests/fixtures/msccl");
	size_t len;
	char *text = read_file(path, &len, err, sizeof err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	Arena a = {0};
	Net net = net_defaults;
	net.bandwidth = 800e9;
	net.link_latency = 0;
	net.router_latency = 0;
	int n = 4;
	Topo *t = topo_new(&a, TK_FULL, "F", 1, &n, 0, net);
	double w = 2 * 32768 * 8 / 800e9;
	for (int it = 1; it <= 5; it++) {
		double got = exec_time(text, len, t, (int64_t)24 * 32768 * it);
		double want = (6 * 12 + (it - 1) * 24) * w + lat_s(MP_LL, it == 1 ? 6 : 5, EXEC_NVLINK);
		assert_named(within(got, want, 1e-9), __LINE__, __FILE__,
		             "%d iterations: %.9g s, want %.9g", it, got, want);
	}
	free(text);
	/* past SIMXML_EXEC_MAX_OPS slice operations (msccl-tools' all-pairs LL
	 * allreduce at 1 GiB: 256 iterations of 128 chunks' steps), refused */
	snprintf(path, sizeof path, "%s/generated/msccltools_allpairs_allreduce_8r_2inst_ll.xml",
	         dir ? dir : "tests/fixtures/msccl");
	text = read_file(path, &len, err, sizeof err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	n = 8;
	t = topo_new(&a, TK_FULL, "F", 1, &n, 0, net);
	CU_ASSERT_EQUAL(exec_time(text, len, t, (int64_t)1 << 30), -1);
	CU_ASSERT(exec_time(text, len, t, 16 << 20) > 0);
	free(text);
	arena_free(&a);
}

/* The latencies decide the protocol as NCCL's tuning says: a ring
 * allreduce on one box of 8 GPUs at 450 GB/s takes LL at small sizes (its
 * step latency 0.6 us against Simple's 3.4), LL128 in between, and Simple
 * at large sizes (all of the link). Below, base + 2 (p - 1) step latencies
 * bound every time: the chain of a tb's 2 (p - 1) receiving steps, each on
 * the step before it on the rank upstream. */
void
test_exec_protocol_choice(void)
{
	static const char *const name[NPROTO] = {"Simple", "LL", "LL128"};
	static const struct {
		int64_t bytes;
		MProto want;
	} at[] = {{4096, MP_LL}, {1 << 20, MP_LL128}, {256 << 20, MP_SIMPLE}};
	Arena a = {0};
	Xml *x = malloc(sizeof *x);
	int p = 8;
	Net net = net_defaults;
	net.bandwidth = 3600e9;
	net.link_latency = 0;
	net.router_latency = 0;
	Topo *t = topo_new(&a, TK_FULL, "F", 1, &p, 0, net);
	for (size_t i = 0; i < countof(at); i++) {
		double tm[NPROTO];
		int best = 0;
		for (int pr = 0; pr < NPROTO; pr++) {
			ring_xml(x, name[pr], p, 1);
			tm[pr] = exec_time(x->buf, x->len, t, at[i].bytes);
			CU_ASSERT_FATAL(tm[pr] > 0);
			best = tm[pr] < tm[best] ? pr : best;
		}
		assert_named(best == (int)at[i].want, __LINE__, __FILE__, "%lld bytes: Simple %.3f us, "
		             "LL %.3f us, LL128 %.3f us; want %s fastest", (long long)at[i].bytes,
		             tm[0] * 1e6, tm[1] * 1e6, tm[2] * 1e6, name[at[i].want]);
		for (int pr = 0; i == 0 && pr < NPROTO; pr++)
			CU_ASSERT(tm[pr] >= lat_s((MProto)pr, 2 * (p - 1), EXEC_NVLINK));
	}
	free(x);
	arena_free(&a);
}

/* A schedule as the executor runs it with an ideal lowering (docs/sim.md
 * 7, "The aim"; exec_costs_on_sched): the ring allreduce on full(4) at N
 * bytes, by dependencies, is 2 (p - 1) steps in a row, each its message's
 * wire bytes (w N / p, whole) over a link and the link's latency d, each
 * received a step latency less the d its slice paid (at least 0) after it
 * arrives, the last too (its receiver polls the flag, as a program's last
 * receiving op does), after the call's base latency: b + 2 (p - 1) (w N /
 * (p B) + d + max(0, λ - d)), for LL (λ 0.6 us: d = 0.2 us within it, 1 us
 * past it) and Simple (3.4 us). */
void
test_exec_sched_costs(void)
{
	const int p = 4;
	const int64_t N = 1 << 20;
	for (int pr = 0; pr < NPROTO; pr++)
		for (int ns = 200; ns <= 1000; ns += 800) {
			char text[512];
			snprintf(text, sizeof text, "network { link_bandwidth = 8 Gbps; link_latency = %d ns; "
			         "router_latency = 0 ns; }\ntopology F = full(4);\ncollective allreduce AR "
			         "on F { algorithm ring; }\n", ns);
			Diag dgv = diag_new(), *dg = &dgv;
			Built b;
			CU_ASSERT_EQUAL_FATAL(build_text(dg, &b, text, "AR"), 0);
			b.net.switching = SIM_CUT_THROUGH;
			ExecProto x = exec_proto((MProto)pr);
			CU_ASSERT_EQUAL_FATAL(exec_costs_on_sched(&b.sim, &b.net, b.prog.sched[0]->topo,
			                                          (MProto)pr), 0);
			SimResult r = run_built(&b, N, SIM_FLOW, SIM_DEPS);
			double d = ns * 1e-9, lam = (double)x.step_ps[EXEC_NVLINK] * 1e-12;
			/* a message's wire bytes, whole (the simulator rounds up) */
			double wire = ceil((double)N * x.wire_num / ((double)p * x.wire_den)), steps = 2 * (p - 1);
			double want = (double)x.base_ps * 1e-12 + steps * (wire * 8 / BW + d) +
			              steps * (lam > d ? lam - d : 0);
			assert_named(within(r.time_s, want, 1e-6), __LINE__, __FILE__,
			             "%s, link latency %d ns: %.9g s, want %.9g", mproto_name[pr], ns,
			             r.time_s, want);
			built_free(dg, &b);
		}
}
