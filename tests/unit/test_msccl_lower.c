/*
 * test_msccl_lower.c: the msccl suite's tests of the lowering's programs
 * (backends/to_msccl*.c): fused steps, accumulator chains, copies home,
 * the layout's runs, in-place alltoall and allgather, every library
 * algorithm, the width search's errors and its one program, and the shape
 * of large schedules (128 to 1024 ranks) against the executor's limits;
 * each built, and where it says so read back and run. Listed in
 * test_msccl.c's table (test_msccl.h).
 */
#include <stdlib.h>
#include <string.h>

#include "to_msccl.h"
#include "test_msccl.h"
#include "tests.h"

/* Runs xml in every declared mode with `bytes` of dt, asserting (at line)
 * that it runs to the right result; what names it. */
static void
runs_right(Diag *dg, int line, const char *name, const char *xml, size_t xlen, int64_t bytes, RDtype dt,
           const char *what)
{
	char *diag = NULL;
	int rc = run_text(dg, name, xml, xlen, false, true, bytes, dt, &diag);
	assert_named(rc == 0, line, __FILE__, "%s: %s", what, diag);
	free(diag);
}

/* runs_right four ways: float and int32, at 1 and at 37 elements per chunk
 * of the nchunk a loop moves. */
static void
runs_right_four_ways(Diag *dg, int line, const char *name, const char *xml, size_t xlen, int64_t nchunk,
                     const char *what)
{
	for (int k = 0; k < 4; k++) {
		char how[600];
		snprintf(how, sizeof how, "%s (%s, %d elements per chunk)", what,
		         k < 2 ? "float" : "int32", k % 2 ? 37 : 1);
		runs_right(dg, line, name, xml, xlen, nchunk * 4 * (k % 2 ? 37 : 1),
		           k < 2 ? RD_FLOAT : RD_INT32, how);
	}
}

/* The nchunksperloop the XML declares (0 if none). */
static int64_t
nchunks_per_loop(const char *xml)
{
	const char *n = strstr(xml, "nchunksperloop=\"");
	return n ? atoi(n + strlen("nchunksperloop=\"")) : 0;
}

/* The nchannels the XML declares (0 if none). */
static int
nchannels_of(const char *xml)
{
	const char *n = strstr(xml, "nchannels=\"");
	return n ? atoi(n + strlen("nchannels=\"")) : 0;
}

static int
count_of(const char *text, const char *what)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, what)) != NULL; p++)
		n++;
	return n;
}

/* Lines of text holding both a and b. */
static int
lines_with(const char *text, const char *a, const char *b)
{
	int n = 0;
	for (const char *l = text; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		const char *pa = strstr(l, a), *pb = strstr(l, b);
		n += pa && pb && pa < l + len && pb < l + len;
		l += len + (e != NULL);
	}
	return n;
}

/* Ring allreduce on 8 ranks lowers to RCCL's ring program: each rank sends,
 * passes 6 partial sums on without storing them (rrs), stores and forwards
 * the full sum (rrcs), forwards 6 full sums (rcs) and receives the last. */
void
test_fused_steps(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	const char *ring = "topology R = ring(8);\n"
	                   "collective allreduce AR on R { algorithm ring; }\n";
	BuildOpts bo = {0};
	size_t xlen;
	char *xml = built_xml(dg, __LINE__, ring, &bo, &xlen, "ring");
	if (!xml)
		return;
	CU_ASSERT_EQUAL(count_of(xml, "type=\"s\""), 8);
	CU_ASSERT_EQUAL(count_of(xml, "type=\"rrs\""), 48);
	CU_ASSERT_EQUAL(count_of(xml, "type=\"rrcs\""), 8);
	CU_ASSERT_EQUAL(count_of(xml, "type=\"rcs\""), 48);
	CU_ASSERT_EQUAL(count_of(xml, "type=\"r\""), 8);
	CU_ASSERT_EQUAL(count_of(xml, "type=\"rrc\""), 0);
	CU_ASSERT_EQUAL(count_of(xml, "type=\"nop\""), 0);
	runs_right(dg, __LINE__, "ring.xml", xml, xlen, 8 * 4 * 1024, RD_INT32, "ring with rrs runs");
	free(xml);
}

/* Ring allreduce at 64, 128 and 256 ranks against msccl-tools' ring at
 * the channel count collc chooses: Azure/msccl-tools @ 7e7d6bf,
 * examples/mscclang/allreduce_a100_ring.py N C 1 --protocol Simple (C = 2,
 * 4, 8: 1 instance, 2C-1 chunks a rank on each of its C channels), run
 * with Debian's python3 packages on 2026-12-02 (docs/msccl.md, "Against
 * msccl-tools"). collc's file has no more bytes, <step>s or <tb>s, and runs
 * right (64 ranks here; 128 and 256 by collc run, in the docs). */
void
test_ring_vs_msccl_tools(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct {
		int ranks, nchannels, tbs, steps;
		long bytes;
	} tools[] = {
		{64, 2, 128, 8128, 966426},
		{128, 4, 512, 32640, 3892152},
		{256, 8, 2048, 130816, 15696456},
	};
	/* under the sanitizers the 128- and 256-rank builds and checks take most
	 * of an hour (test_scale_128_256): there ring(64) alone */
	size_t n = UNDER_ASAN ? 1 : countof(tools);
	for (size_t i = 0; i < n; i++) {
		char text[200];
		snprintf(text, sizeof text, "topology R = ring(%d);\n"
		         "collective allreduce AR on R { algorithm ring; }\n", tools[i].ranks);
		BuildOpts bo = {0};
		size_t xlen;
		char *xml = built_xml(dg, __LINE__, text, &bo, &xlen, "ring(%d)", tools[i].ranks);
		if (!xml)
			continue;
		int nch = nchannels_of(xml), tbs = count_of(xml, "<tb "), steps = count_of(xml, "<step ");
		assert_named(nch == tools[i].nchannels && tbs <= tools[i].tbs &&
		             steps <= tools[i].steps && (long)xlen <= tools[i].bytes, __LINE__, __FILE__,
		             "ring(%d): %d channels, %d tbs, %d steps, %zu bytes; msccl-tools: %d, %d, "
		             "%d, %ld", tools[i].ranks, nch, tbs, steps, xlen, tools[i].nchannels,
		             tools[i].tbs, tools[i].steps, tools[i].bytes);
		if (tools[i].ranks == 64)
			runs_right(dg, __LINE__, "ring64.xml", xml, xlen, 64 * 4 * 16, RD_INT32, "ring(64)");
		free(xml);
	}
}

/* A star (k-SP at depth 1) on a 4x4 torus, allreduce and reduce_scatter:
 * every root chunk gets 15 reducing receives in one round. Instead of one
 * chain of 15 tbs each waiting for the one before, peer p adds into
 * accumulator p mod 4 (the chunk itself, or a scratch chunk that a plain r
 * starts), at most 4 receives long, and a local tb adds the 3 scratch
 * accumulators in with re steps the executor fuses into one reduction. */
void
test_fan_in_chains(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char *const kinds[] = {"allreduce", "reduce_scatter"};
	for (size_t n = 0; n < countof(kinds); n++) {
		char star[400];
		snprintf(star, sizeof star, "topology T = torus(4, 4);\n"
		         "group Tr = translations(T);\n"
		         "tree K1 = khop(T, root (0, 0), depth 1);\n"
		         "collective %s S on T { algorithm symmetric(trees K1, group Tr); }\n", kinds[n]);
		BuildOpts bo = {0};
		size_t xlen;
		char *xml = built_xml(dg, __LINE__, star, &bo, &xlen, "the %s star", kinds[n]);
		if (!xml)
			continue;
		/* chain 0: the root's input plus peers 0, 4, 8, 12 (not itself) */
		CU_ASSERT_EQUAL(count_of(xml, "type=\"rrc\" srcbuf=\"i\""), 16);
		CU_ASSERT_EQUAL(count_of(xml, "type=\"rrc\" srcbuf=\"o\""), 60 - 16);
		/* chains 1..3: an r starts each, then 3 rrc (2 on the root's own residue) */
		CU_ASSERT_EQUAL(lines_with(xml, "type=\"r\"", "dstbuf=\"s\""), 16 * 3);
		CU_ASSERT_EQUAL(count_of(xml, "type=\"rrc\" srcbuf=\"s\""), 4 * 9 + 12 * 8);
		CU_ASSERT_EQUAL(count_of(xml, "type=\"re\""), 16 * 3);
		/* one fused reduction per root: the first re waits (3 nops: for chain 0
		 * and two accumulators, its own depid: the third), the others do not */
		CU_ASSERT_EQUAL(count_of(xml, "type=\"nop\""), 16 * 3);
		CU_ASSERT_EQUAL(lines_with(xml, "type=\"re\"", "depid=\"-1\""), 16 * 2);
		CU_ASSERT(strstr(xml, "s_chunks=\"3\"") != NULL);
		char what[64];
		snprintf(what, sizeof what, "the %s star runs in both modes", kinds[n]);
		runs_right_four_ways(dg, __LINE__, "star.xml", xml, xlen, 16, what);
		free(xml);
	}
}

/* Every algorithm of the library on small topologies (odd counts fold),
 * for each collective the target writes: built, read back, run in every
 * declared mode, float and int32, two sizes. */
void
test_library_algorithms(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct {
		const char *topo, *kind, *alg;
	} cases[] = {
		{"ring(6)", "allreduce", "ring"},
		{"ring(6)", "reduce_scatter", "ring"},
		{"ring(6)", "allgather", "ring"},
		{"ring(6)", "allreduce", "ring(ports 2)"},
		{"ring(6)", "allreduce", "halving_doubling"},
		{"ring(6)", "allreduce", "recursive_doubling"},
		{"ring(6)", "allgather", "recursive_doubling"},
		{"ring(6)", "reduce_scatter", "recursive_halving"},
		{"ring(6)", "allreduce", "double_binary_tree"},
		{"ring(6)", "allreduce", "swing(bandwidth)"},
		{"ring(6)", "reduce_scatter", "swing(bandwidth)"},
		{"ring(6)", "allgather", "swing(bandwidth)"},
		{"ring(6)", "allreduce", "swing(latency)"},
		{"ring(6)", "alltoall", "bruck"},
		{"ring(6)", "allgather", "bruck"},
		{"ring(6)", "reduce_scatter", "bruck"},
		{"ring(6)", "allreduce", "bruck"},
		{"ring(6)", "alltoall", "pairwise"},
		{"ring(6)", "allreduce", "auto"},
		{"torus(4, 4)", "allreduce", "multiport_ring"},
		{"torus(4, 4)", "reduce_scatter", "multiport_ring"},
		{"torus(4, 4)", "allgather", "multiport_ring"},
		{"torus(4, 4)", "allreduce", "bucket"},
		{"torus(4, 4)", "reduce_scatter", "bucket"},
		{"torus(4, 4)", "allgather", "bucket"},
		{"torus(3, 3)", "allreduce", "trivance(bandwidth)"},
		{"torus(3, 3)", "reduce_scatter", "trivance(bandwidth)"},
		{"torus(3, 3)", "allgather", "trivance(bandwidth)"},
		{"torus(3, 3)", "allreduce", "trivance(latency)"},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		char text[256];
		snprintf(text, sizeof text, "topology T = %s;\ncollective %s X on T { algorithm %s; }\n",
		         cases[i].topo, cases[i].kind, cases[i].alg);
		BuildOpts bo = {0};
		size_t xlen;
		char *xml = built_xml(dg, __LINE__, text, &bo, &xlen, "%s %s on %s", cases[i].kind,
		                      cases[i].alg, cases[i].topo);
		if (!xml)
			continue;
		char what[256];
		snprintf(what, sizeof what, "%s %s on %s runs", cases[i].kind, cases[i].alg,
		         cases[i].topo);
		runs_right_four_ways(dg, __LINE__, "x.xml", xml, xlen, nchunks_per_loop(xml), what);
		free(xml);
	}
}

/* SP on a 6x6 torus spread over 8 channels: ranks reduce one run of chunks
 * from two children in one round, and the second receive must take its
 * local operands where the first left them (the output), not in the input
 * (the wrong result SP 8x8 once had at 8 and 16 channels). */
void
test_two_children_one_round(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	const char *sp = "topology T = torus(6, 6);\n"
	                 "group G on T { translate; map (x, y) -> (-x, -y); map (x, y) -> (y, x); }\n"
	                 "tree B = bfs(T, root (0, 0));\n"
	                 "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n";
	BuildOpts bo = {.channels = 8};
	size_t xlen;
	char *xml = built_xml(dg, __LINE__, sp, &bo, &xlen, "SP 6x6 over 8 channels");
	if (!xml)
		return;
	CU_ASSERT(strstr(xml, "nchannels=\"8\"") != NULL);
	runs_right(dg, __LINE__, "sp66.xml", xml, xlen, 144 * 4 * 3, RD_INT32, "SP 6x6 runs in both modes");
	free(xml);
}

/* In-place alltoall: output chunk k is input chunk k, so a receive into a
 * slot whose input chunk a later round still sends must go to scratch and
 * be copied home at the end. Bruck and pairwise on odd, even and power-of-two
 * counts, several chunks per block, several instances: each declares both
 * modes, reads back and runs in both, float and int32, two sizes. */
void
test_alltoall_in_place(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct {
		int ranks, chunks, instances;
		const char *alg;
	} cases[] = {
		{5, 0, 0, "bruck"}, {8, 0, 0, "bruck"}, {9, 0, 0, "bruck"}, {16, 0, 0, "bruck"},
		{6, 108, 0, "bruck"}, {9, 0, 2, "bruck"},
		{5, 0, 0, "pairwise"}, {8, 0, 0, "pairwise"}, {9, 0, 0, "pairwise"},
		{16, 0, 0, "pairwise"}, {6, 108, 0, "pairwise"}, {9, 0, 2, "pairwise"},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		char text[256], chunks[32] = "";
		if (cases[i].chunks)
			snprintf(chunks, sizeof chunks, " chunks %d;", cases[i].chunks);
		snprintf(text, sizeof text, "topology T = ring(%d);\ncollective alltoall X on T { "
		         "algorithm %s;%s }\n", cases[i].ranks, cases[i].alg, chunks);
		BuildOpts bo = {.instances = cases[i].instances};
		size_t xlen;
		char *xml = built_xml(dg, __LINE__, text, &bo, &xlen, "%s alltoall on %d ranks",
		                      cases[i].alg, cases[i].ranks);
		if (!xml)
			continue;
		assert_named(strstr(xml, "inplace=\"1\" outofplace=\"1\"") != NULL, __LINE__, __FILE__,
		             "%s alltoall on %d ranks declares both modes", cases[i].alg, cases[i].ranks);
		char what[128];
		snprintf(what, sizeof what, "%s alltoall on %d ranks runs in both modes", cases[i].alg,
		         cases[i].ranks);
		runs_right_four_ways(dg, __LINE__, "a2a.xml", xml, xlen, nchunks_per_loop(xml), what);
		/* pairwise on 5: each rank hears from 2 peers before it sends them
		 * their blocks, so those receives are parked and copied home by the
		 * tb that sends, right after (no wait); the own block is copied too */
		if (cases[i].ranks == 5 && strcmp(cases[i].alg, "pairwise") == 0 && !cases[i].instances &&
		    !cases[i].chunks) {
			CU_ASSERT_EQUAL(count_of(xml, "s_chunks=\"2\""), 5);
			CU_ASSERT_EQUAL(count_of(xml, "type=\"cpy\" srcbuf=\"s\""), 10);
			CU_ASSERT_EQUAL(count_of(xml, "type=\"cpy\""), 15);
			CU_ASSERT_EQUAL(count_of(xml, "type=\"nop\""), 0);
		}
		free(xml);
	}
}

/* --channels 2 on SP 6x6: spread over the channels the worst tb needs 70
 * steps, pinned 121. The error names the closest (spread), a note the
 * other; it used to name only the last attempt, pinned. */
void
test_channels_error_closest(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	const char *sp = "topology T = torus(6, 6);\n"
	                 "group G on T { translate; map (x, y) -> (-x, -y); map (x, y) -> (y, x); }\n"
	                 "tree B = bfs(T, root (0, 0));\n"
	                 "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n";
	BuildOpts bo = {.channels = 2};
	size_t xlen;
	char *diag = NULL;
	char *xml = build_xml(dg, sp, &bo, &xlen, &diag);
	CU_ASSERT_PTR_NULL(xml);
	const char *err = strstr(diag, "error: 'AR' does not fit MSCCL's limits over 2 channels: "
	                         "thread block 0 of rank 33 (send 3, recv 3, channel 0) needs 70 steps");
	const char *note = strstr(diag, "note: that is with each connection spread over the channels; "
	                          "with each connection pinned to one channel: thread block 0 of "
	                          "rank 30 (send 0, recv 0, channel 0) needs 121 steps");
	assert_named(err && note && err < note, __LINE__, __FILE__, "the closest first: %s", diag);
	free(diag);
	free(xml);
}

/* The largest number following `key` (e.g. `<tb id="`) in the XML. */
static int
max_attr(const char *xml, const char *key)
{
	int best = -1;
	for (const char *q = strstr(xml, key); q; q = strstr(q + 1, key)) {
		int v = atoi(q + strlen(key));
		best = v > best ? v : best;
	}
	return best;
}

/* What a spine-leaf SP program must look like. */
typedef struct SpineLeafCase {
	const char *name, *text;
	int ngpus, nchannels, maxtb, maxstep, maxcnt;
	long steps;
} SpineLeafCase;

/* Builds the case's SP (the program, not the XML), asserts its shape and
 * that it passes every rule collc checks, from outside the backend: the
 * symbolic run in both modes and rule 14 chunk by chunk. */
static void
spine_leaf_case(Diag *dg, const SpineLeafCase *k)
{
	Checked c;
	check_text(dg, &c, k->name, k->text, strlen(k->text));
	Prog p = {0};
	Arena a = {0};
	MProg mp;
	BuildOpts bo = {.collective = "SP"};
	const Sched *sp = NULL;
	int rc = -1;
	if (c.errors == 0 && lower(dg, c.file, &p) == 0) {
		for (int i = 0; i < p.nsched; i++)
			if (strcmp(p.sched[i]->name, "SP") == 0)
				sp = p.sched[i];
		rc = sp ? msccl_lower(dg, &a, sp, &bo, &mp) : -1;
	}
	assert_named(rc == 0, __LINE__, __FILE__, "%s SP fits MSCCL", k->name);
	if (rc == 0) {
		int maxtb = 0, maxstep = 0, maxcnt = 0;
		long steps = 0;
		for (int g = 0; g < mp.ngpus; g++) {
			maxtb = mp.gpu[g].ntb > maxtb ? mp.gpu[g].ntb : maxtb;
			for (int t = 0; t < mp.gpu[g].ntb; t++) {
				const MTb *tb = &mp.gpu[g].tb[t];
				steps += tb->nstep;
				maxstep = tb->nstep > maxstep ? tb->nstep : maxstep;
				for (int j = 0; j < tb->nstep; j++)
					if (mtype_sends(tb->step[j].type) && tb->step[j].cnt > maxcnt)
						maxcnt = tb->step[j].cnt;
			}
		}
		assert_named(mp.ngpus == k->ngpus && mp.nchannels == k->nchannels &&
		             mp.nchunksperloop == k->ngpus && maxtb == k->maxtb &&
		             maxstep == k->maxstep && maxcnt == k->maxcnt && steps == k->steps,
		             __LINE__, __FILE__, "%s: ngpus %d, %d channels, %d tbs, %d steps a tb, "
		             "sends of %d chunks, %ld steps", k->name, mp.ngpus, mp.nchannels, maxtb,
		             maxstep, maxcnt, steps);
		CU_ASSERT_EQUAL(msccl_check_built(dg, &mp, sp, true, false), 0);
	}
	arena_free(&a);
	prog_free(&p);
	checked_free(&c);
}

/* SP on spine-leaf fabrics (khop trees, the leaf and port shifts). The
 * largest example, examples/spine-leaf.coll (512 hosts, 46 peers each): its
 * first round exchanges 31 chunks a step with each of the 15 other hosts of
 * the leaf. Its paired program stops chunk by chunk (send against send on
 * an exchange); send-only and receive-only tbs would need at least 92 a rank, and
 * sending steps of 2 chunks put more than 64 steps on a tb pinned to such a
 * peer. So it is written with each exchange's higher rank receiving first
 * (the two sides' steps mirror each other), each connection pinned to one of
 * 8 channels: 47 tbs a rank, at most 41 steps a tb, sends of 31 chunks,
 * 392,224 steps (5-8 s of CPU). A quarter of it (128 hosts, 22 peers)
 * fits on one channel with send-only and receive-only tbs. Under the
 * sanitizers the quarter alone (the whole takes minutes there). */
void
test_spine_leaf(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char quarter[] =
	    "topology F = spine_leaf(spines 8, leaves 16, hosts 8);\n"
	    "group G on F { map (l, h) -> (l + 1, h); map (l, h) -> (l, h + 1); }\n"
	    "tree K = khop(F, root (0, 0), depth 2);\n"
	    "collective allreduce SP on F {\n"
	    "    algorithm symmetric(trees K, group G); chunks auto; routing shortest_path;\n}\n";
	SpineLeafCase q = {"spine-leaf-128.coll", quarter, 128, 1, 45, 19, 15, 32944};
	spine_leaf_case(dg, &q);
	if (UNDER_ASAN)
		return;
	size_t len;
	char *text = slurp("examples/spine-leaf.coll", &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	SpineLeafCase whole = {"spine-leaf.coll", text, 512, 8, 47, 41, 31, 392224};
	spine_leaf_case(dg, &whole);
	free(text);
}

/* Emission linear in the XML (issue 13): the configuration comes from the
 * bound's estimate, so one program is built and checked. SP on torus(8, 16)
 * exchanges runs of 4 chunks both ways in a round (a connection holds 2
 * calls), which stops chunk by chunk on paired tbs: it used to build 3 widths of those (the third built
 * whole and checked, then discarded) and then 2 of send-only and
 * receive-only tbs; now it builds those alone, 2 widths of which one
 * program (4 channels). ring(128) sends one way: the paired search, whose
 * one channel the bound rules out (254 steps a connection), then 4 and 8
 * channels, the last the program. */
void
test_one_program(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct {
		const char *name, *text;
		int exchange, widths, nchannels;
	} cases[] = {
		{"ring128.coll", "topology T = ring(128);\n"
		                 "collective allreduce AR on T { algorithm ring; }\n", 0, 1, 4},
		{"sp8x16.coll", "topology T = torus(8, 16);\n"
		                "group G on T { translate; map (x, y) -> (-x, -y); }\n"
		                "tree B = bfs(T, root (0, 0));\n"
		                "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n",
		 4, 2, 4},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		Checked c;
		check_text(dg, &c, cases[i].name, cases[i].text, strlen(cases[i].text));
		Prog p = {0};
		Arena a = {0};
		MProg mp;
		BuildOpts bo = {0};
		MscclStats st = {-1, -1, false};
		MscclBound bound = {0};
		int rc = -1;
		if (c.errors == 0 && lower(dg, c.file, &p) == 0) {
			Layout lay;
			layout_build(&a, p.sched[0], &lay);
			msccl_bound_build(p.sched[0], &lay, &bound);
			rc = msccl_lower_counted(dg, &a, p.sched[0], &bo, &mp, &st);
		}
		assert_named(rc == 0 && bound.exchange_run[0] == cases[i].exchange && st.programs == 1 &&
		             st.widths == cases[i].widths && mp.nchannels == cases[i].nchannels,
		             __LINE__, __FILE__, "%s: rc %d, exchange run %d, %d programs over %d "
		             "widths, %d channels", cases[i].name, rc, bound.exchange_run[0], st.programs,
		             st.widths, rc == 0 ? mp.nchannels : -1);
		msccl_bound_free(&bound);
		arena_free(&a);
		prog_free(&p);
		checked_free(&c);
	}
}

/* 128 and 256 ranks (issue: scale): ring allreduce and SP on two tori are
 * written over several channels within the executor's limits (64 steps
 * per tb, 64 tbs per rank), read back, and run in place and out of place
 * with the reduced values verified (256 ranks at one element per chunk).
 * SP 16x16 has 16384 tbs, a thread each under collc run: more than a
 * shared machine's pid_max leaves room for (32768 here), so the test runs
 * it symbolically in both modes (as collc run does first) and the threaded
 * run is left to the command line (docs/msccl.md). */
void
test_scale_128_256(void)
{
	Diag dgv = diag_new(), *dg = &dgv;

	static const struct {
		const char *text;
		int ranks;
		int64_t bytes;
	} cases[] = {
		{"topology T = ring(128);\ncollective allreduce AR on T { algorithm ring; }\n", 128,
		 128 * 4 * 4},
		{"topology T = ring(256);\ncollective allreduce AR on T { algorithm ring; }\n", 256,
		 256 * 4},
		{"topology T = torus(8, 16);\ngroup G on T { translate; map (x, y) -> (-x, -y); }\n"
		 "tree B = bfs(T, root (0, 0));\n"
		 "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n", 128,
		 256 * 4},
		{"topology T = torus(16, 16);\ngroup G on T { translate; map (x, y) -> (-x, -y); }\n"
		 "tree B = bfs(T, root (0, 0));\n"
		 "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n", 256,
		 512 * 4},
	};
	/* under the sanitizers the build and the symbolic check of the
	 * 256-rank files take most of an hour: there ring(128) alone */
	size_t ncase = UNDER_ASAN ? 1 : countof(cases);
	for (size_t i = 0; i < ncase; i++) {
		BuildOpts bo = {0};
		size_t xlen = 0;
		char *xml = built_xml(dg, __LINE__, cases[i].text, &bo, &xlen, "case %zu", i);
		if (!xml)
			continue;
		char want[64];
		snprintf(want, sizeof want, "ngpus=\"%d\"", cases[i].ranks);
		CU_ASSERT_PTR_NOT_NULL(strstr(xml, want));
		CU_ASSERT(max_attr(xml, " s=\"") < MSCCL_MAX_STEPS);
		CU_ASSERT(max_attr(xml, "<tb id=\"") < MSCCL_MAX_TBS);
		CU_ASSERT(max_attr(xml, " chan=\"") > 0);
		char *diag = NULL;
		/* under the sanitizers thousands of threads take most of an hour:
		 * there every case runs symbolically, as collc run does first */
		bool threads = max_attr(xml, "<tb id=\"") * cases[i].ranks <= 8192 && !UNDER_ASAN;
		int rc = run_sized(dg, "big.xml", xml, xlen, false, threads, cases[i].bytes, false,
		                   RD_INT32, &diag);
		assert_named(rc == 0, __LINE__, __FILE__, "case %zu reads back and runs: %s", i, diag);
		free(diag);
		if (!threads) {
			Arena a = {0};
			MProg p;
			diag_source(dg, "big.xml", xml, xlen);
			CU_ASSERT_EQUAL(msccl_read(dg, &a, xml, xlen, false, &p), 0);
			CU_ASSERT(p.inplace && p.outofplace);
			CU_ASSERT_EQUAL(msccl_check_run(dg, &p, 2, false), 0);
			CU_ASSERT_EQUAL(msccl_check_run(dg, &p, 2, true), 0);
			arena_free(&a);
		}
		free(xml);
	}
}

/* The elements the executor's parser stores for each rank (1 <algo>, every
 * <gpu>, the rank's <tb>s and <step>s): the largest. */
static int
max_elements(const MProg *p, int *tbs, int *steps)
{
	int most = 0;
	*tbs = *steps = 0;
	for (int g = 0; g < p->ngpu; g++) {
		int nstep = 0;
		for (int t = 0; t < p->gpu[g].ntb; t++)
			nstep += p->gpu[g].tb[t].nstep;
		int n = 1 + p->ngpu + p->gpu[g].ntb + nstep;
		most = n > most ? n : most;
		*tbs = p->gpu[g].ntb > *tbs ? p->gpu[g].ntb : *tbs;
		*steps = nstep > *steps ? nstep : *steps;
	}
	return most;
}

/* One cluster file of nodes x 8 GPUs on a spine-leaf (as
 * examples/gpu-cluster-128x8.coll's allreduce, on rails): built, read back, within every limit of the
 * executor (per rank: thread blocks, steps per tb, parser elements;
 * printed), staged or not as expected (its copies out of scratch), and run
 * on CPU threads with real data (up to 32 nodes) or checked symbolically
 * from outside the backend. */
static void
cluster_case(Diag *dg, const char *kind, int nodes, int channels, bool staged)
{
	char text[256];
	snprintf(text, sizeof text, "topology C = spine_leaf(spines 16, leaves %d, hosts 8);\n"
	         "collective %s X on C { algorithm hierarchical(ring, ring); }\n", nodes, kind);
	BuildOpts bo = {.channels = channels};
	size_t xlen = 0;
	char *xml = built_xml(dg, __LINE__, text, &bo, &xlen, "%s, %d x 8 GPUs, channels %d", kind,
	                      nodes, channels);
	if (!xml)
		return;
	Arena a = {0};
	MProg p;
	diag_source(dg, "cluster.xml", xml, xlen);
	CU_ASSERT_EQUAL_FATAL(msccl_read(dg, &a, xml, xlen, false, &p), 0);
	int tbs, steps, elements = max_elements(&p, &tbs, &steps);
	assert_named(p.ngpus == nodes * 8 && tbs <= MSCCL_MAX_TBS && elements <= 4095 &&
	             max_attr(xml, " s=\"") < MSCCL_MAX_STEPS, __LINE__, __FILE__,
	             "%s, %d GPUs: %d tbs, %d steps, %d parser elements a rank at most", kind,
	             p.ngpus, tbs, steps, elements);
	assert_named((count_of(xml, "type=\"cpy\" srcbuf=\"s\"") > 0) == staged, __LINE__,
	             __FILE__, "%s, %d GPUs, channels %d: staged %d", kind, p.ngpus, channels,
	             staged);
	printf("\n    %s %d GPUs%s: %d channels, at most %d tbs, %d steps and %d parser elements "
	       "a rank, %zu bytes", kind, p.ngpus, channels ? " (--channels)" : "", p.nchannels, tbs,
	       steps, elements, xlen);
	if (nodes <= 32) {
		char *diag = NULL;
		int rc = run_sized(dg, "cluster.xml", xml, xlen, false, !UNDER_ASAN, 8 * nodes * 64, false,
		                   RD_INT32, &diag);
		assert_named(rc == 0, __LINE__, __FILE__, "%s, %d GPUs run: %s", kind, p.ngpus, diag);
		free(diag);
	} else {
		CU_ASSERT_EQUAL(msccl_check_run(dg, &p, 2, false), 0);
	}
	arena_free(&a);
	free(xml);
}

/* Hierarchical allreduce, reduce-scatter and allgather on 128, 256 and
 * 1024 GPUs. Rank 8n + g owns block 8n + g, so the blocks an intra-node
 * ring moves (8m + g' for every node m) are strided through a rank's
 * blocks: a reduce-scatter or allgather is written staged (receives in
 * scratch in arrival order, copied home at the end; the reduce-scatter's
 * input copied there first), the only way it fits at 1024 GPUs. */
void
test_gpu_cluster(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char *const kinds[] = {"allreduce", "reduce_scatter", "allgather"};
	static const int nodes[] = {16, 32, 128};
	for (size_t k = 0; k < countof(kinds); k++)
		for (size_t i = 0; i < countof(nodes); i++) {
			if (UNDER_ASAN && nodes[i] > 16)
				break; /* hours under the sanitizers */
			cluster_case(dg, kinds[k], nodes[i], 0, k > 0);
		}
}

/* An in-place allgather: i[k] is o[rank*N/R + k], so the copy home of a
 * rank's own chunk writes what its sends read. collc's files order it
 * after them; the checker finds the race in a file that does not
 * (tests/golden/msccl-allgather-race.xml: the same, with its error). */
void
test_allgather_race(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	const char *text = "topology T = ring(4);\ncollective allgather AG on T { algorithm ring; }\n";
	BuildOpts bo = {0};
	size_t xlen = 0;
	char *xml = built_xml(dg, __LINE__, text, &bo, &xlen, "ring allgather");
	CU_ASSERT_EQUAL(count_of(xml, "type=\"cpy\""), 4);
	CU_ASSERT_EQUAL(count_of(xml, "type=\"cpy\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\""), 4);
	CU_ASSERT_EQUAL(count_of(xml, "cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n    </tb>\n"
	                              "  </gpu>"), 0); /* no copy waits on nothing */
	free(xml);
	size_t len;
	char *racy = slurp("tests/golden/msccl-allgather-race.xml", &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(racy);
	char *diag = NULL;
	size_t dlen;
	FILE *mem = open_memstream(&diag, &dlen);
	diag_stream(dg, mem);
	diag_reset(dg);
	diag_source(dg, "race.xml", racy, len);
	Arena a = {0};
	MProg p;
	CU_ASSERT_EQUAL(msccl_read(dg, &a, racy, len, false, &p), 0);
	CU_ASSERT_NOT_EQUAL(msccl_check_run(dg, &p, 2, false), 0);
	arena_free(&a);
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
	assert_named(strstr(diag, "race.xml:8:1: error: rule 17 (races): gpu 0 tb 1 step 0 (cpy) "
	                          "writes output chunk 0 (in place) while tb 0 step 0 (s, line 4) "
	                          "reads it") != NULL, __LINE__, __FILE__, "located race: %s", diag);
	free(diag);
	free(racy);
}

/* Broadcast and reduce: every rooted schedule of the example is written
 * with its root named in a comment, reads back, and runs in place and out
 * of place with the root's data (broadcast) or the sum at the root
 * (reduce) verified. */
void
test_broadcast_reduce(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	size_t len;
	char *text = slurp("examples/rooted-broadcast-reduce.coll", &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	static const struct {
		const char *name, *coll;
		int root;
	} cases[] = {
		{"BC_tree", "broadcast", 0}, {"BC_chain", "broadcast", 0}, {"RD_tree", "reduce", 27},
		{"RD_plane", "reduce", 5},   {"BC_line", "broadcast", 0},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		BuildOpts bo = {.collective = cases[i].name};
		size_t xlen = 0;
		char *xml = built_xml(dg, __LINE__, text, &bo, &xlen, "%s", cases[i].name);
		if (!xml)
			continue;
		char want[160];
		snprintf(want, sizeof want, "coll=\"%s\"", cases[i].coll);
		CU_ASSERT_PTR_NOT_NULL(strstr(xml, want));
		snprintf(want, sizeof want, "a %s with root %d.", cases[i].coll, cases[i].root);
		CU_ASSERT_PTR_NOT_NULL(strstr(xml, want));
		Arena a = {0};
		MProg p;
		diag_source(dg, "r.xml", xml, xlen);
		CU_ASSERT_EQUAL(msccl_read(dg, &a, xml, xlen, false, &p), 0);
		CU_ASSERT_EQUAL(msccl_root(&p), cases[i].root);
		arena_free(&a);
		char *diag = NULL;
		int rc = run_sized(dg, "r.xml", xml, xlen, false, true, 1 << 14, true, RD_INT32, &diag);
		assert_named(rc == 0, __LINE__, __FILE__, "%s runs: %s", cases[i].name, diag);
		free(diag);
		free(xml);
	}
	free(text);
}

/* On a GPU cluster the file says which box and GPU each rank is, in a
 * comment after <algo> (the executor's parser skips it; docs/msccl.md):
 * box-major by a formula, a `ranks` list rank by rank; each file reads
 * back under the executor's rules and runs. */
void
test_gpu_map(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"topology C = xgmi_rails(boxes 2, gpus 4, nic_gbps 400);\n"
		 "collective allgather A on C { algorithm ring; }\n",
		 "<!-- A on xgmi_rails(boxes 2, gpus 4, nic_gbps 400): rank r runs on GPU (box, gpu) = "
		 "(r / 4, r % 4), box-major"},
		{"topology C = rails(boxes 2, gpus 2, nic_gbps 400);\n"
		 "collective allgather A on C { algorithm ring; ranks (1, 0), (0, 1), (0, 0), (1, 1); }\n",
		 "<!-- A on rails(boxes 2, gpus 2, nic_gbps 400): rank r runs on GPU (box, gpu): "
		 "rank 0 (1, 0), rank 1 (0, 1), rank 2 (0, 0), rank 3 (1, 1) -->"},
		{"topology C = leaf_spine_boxes(boxes 2, gpus 2, nic_gbps 400, spines 1);\n"
		 "collective allreduce A on C { algorithm ring; }\n",
		 "<!-- A on leaf_spine_boxes(boxes 2, gpus 2, nic_gbps 400, spines 1): rank r runs on GPU "
		 "(box, gpu) = (r / 2, r % 2)"},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		BuildOpts bo = {0};
		size_t xlen = 0;
		char *xml = built_xml(dg, __LINE__, cases[i].text, &bo, &xlen, "case %zu", i);
		if (!xml)
			continue;
		const char *c = strstr(xml, cases[i].want);
		assert_named(c && strncmp(xml, "<algo ", 6) == 0 && c == strchr(xml, '\n') + 3, __LINE__,
		             __FILE__, "case %zu: the comment right after <algo>: %.300s", i, xml);
		char *diag = NULL;
		int rc = run_sized(dg, "g.xml", xml, xlen, false, true, 1 << 14, true, RD_INT32, &diag);
		assert_named(rc == 0, __LINE__, __FILE__, "case %zu runs: %s", i, diag);
		free(diag);
		free(xml);
	}
}

/* The copy home after the last round is one step per run: the chain
 * broadcast's root copies its 8 segments from input to output in one cpy
 * of 8 chunks, not 8 of one; and the program runs. */
void
test_copy_home_runs(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	const char *text = "topology R = ring(4);\n"
	                   "collective broadcast B on R { algorithm chain(segments 8); root 0; }\n";
	BuildOpts bo = {0};
	size_t xlen = 0;
	char *xml = built_xml(dg, __LINE__, text, &bo, &xlen, "chain");
	if (!xml)
		return;
	CU_ASSERT_EQUAL(count_of(xml, "type=\"cpy\""), 1);
	CU_ASSERT_EQUAL(lines_with(xml, "type=\"cpy\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" "
	                                "dstoff=\"0\" cnt=\"8\"", "<step "), 1);
	char *diag = NULL;
	int rc = run_sized(dg, "b.xml", xml, xlen, false, true, 1 << 14, true, RD_INT32, &diag);
	assert_named(rc == 0, __LINE__, __FILE__, "chain runs: %s", diag);
	free(diag);
	free(xml);
}

/* The chunk order MSCCL takes from the shared layout: of its candidates,
 * the one with the fewest runs (a step per run), not the fewest packed
 * chunks (MPI's measure): SP 3x3 explicit 544 steps (684 with the packed
 * choice), the Petersen graph 371 (375 in the carried order). */
void
test_layout_runs(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct {
		const char *file, *coll;
		int steps;
	} cases[] = {
		{"examples/sp-torus-3x3-explicit.coll", "AR", 544},
		{"examples/sp-torus-3x3-explicit.coll", "AR_aut", 544},
		{"examples/graph-petersen.coll", "SP", 371},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		size_t len;
		char *text = slurp(cases[i].file, &len);
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		BuildOpts bo = {.collective = cases[i].coll};
		size_t xlen = 0;
		char *diag = NULL;
		char *xml = build_xml(dg, text, &bo, &xlen, &diag);
		assert_named(xml && count_of(xml, "<step ") == cases[i].steps, __LINE__, __FILE__,
		             "%s %s: %d steps, want %d", cases[i].file, cases[i].coll,
		             xml ? count_of(xml, "<step ") : -1, cases[i].steps);
		free(diag);
		free(xml);
		free(text);
	}
}
