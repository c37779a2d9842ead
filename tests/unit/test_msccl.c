/*
 * test_msccl.c: the MSCCL reader, checker and CPU interpreter on the
 * fixtures (tests/fixtures/msccl, or $COLLC_FIXTURES), and the backend
 * on every example: built, checked, read back, run and verified; its
 * options, its limit errors and its checks. The suite's table lists the
 * tests of test_msccl_lower.c too (test_msccl.h).
 */
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "to_msccl.h"
#include "test_msccl.h"
#include "tests.h"

static const char *
fixtures(void)
{
	const char *e = getenv("COLLC_FIXTURES");
	return e ? e : "tests/fixtures/msccl";
}

/* Seconds without a completed step before a run that should pass is called a
 * deadlock: generous, since thousands of threads share two busy cores; the
 * deadlock test sets its own. */
#define RUN_TIMEOUT 20.0

/* Reads (and with run, runs in every declared mode) one file; returns 0 and
 * the diagnostics in *diag. With fit, the size run is the one nearest to
 * `bytes` that the file is selected for, as `collc run` picks it. */
int
run_sized(Diag *dg, const char *name, const char *text, size_t len, bool legacy, bool run, int64_t bytes,
          bool fit, RDtype dt, char **diag)
{
	size_t dlen;
	FILE *mem = open_memstream(diag, &dlen);
	diag_stream(dg, mem);
	diag_reset(dg);
	diag_source(dg, name, text, len);
	Arena a = {0};
	MProg p;
	int rc = msccl_read(dg, &a, text, len, legacy, &p);
	if (rc == 0 && fit)
		bytes = msccl_nearest_size(&p, bytes, rdtype_size(dt));
	for (int m = 0; rc == 0 && run && m < 2; m++) {
		if (!(m == 0 ? p.inplace : p.outofplace))
			continue;
		RunOpts o = {.bytes = bytes, .dtype = dt, .op = RO_SUM, .inplace = m == 0,
		             .timeout = RUN_TIMEOUT};
		RunResult res;
		rc = msccl_run(dg, &p, &o, &res);
		if (rc == 0 && p.coll != MC_CUSTOM && !res.verified)
			rc = -1;
	}
	arena_free(&a);
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
	return rc;
}

int
run_text(Diag *dg, const char *name, const char *text, size_t len, bool legacy, bool run, int64_t bytes,
         RDtype dt, char **diag)
{
	return run_sized(dg, name, text, len, legacy, run, bytes, false, dt, diag);
}

static void
test_fixtures_run(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	char pat[512];
	int n = 0;
	for (int d = 0; d < 2; d++) {
		snprintf(pat, sizeof pat, "%s/%s/*.xml", fixtures(), d ? "collected" : "generated");
		glob_t g;
		int gr = glob(pat, 0, NULL, &g);
		assert_named(gr == 0, __LINE__, __FILE__, "fixtures in %s (set COLLC_FIXTURES)", pat);
		if (gr != 0)
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++) {
			size_t len;
			char *text = slurp(g.gl_pathv[i], &len);
			bool legacy = strstr(g.gl_pathv[i], "/legacy-") != NULL;
			char *diag = NULL;
			/* near 1536 KiB, inside the sizes each file is selected for */
			int rc = text ? run_sized(dg, g.gl_pathv[i], text, len, legacy, true, 1536 << 10,
			                          true, RD_FLOAT, &diag) : -1;
			assert_named(rc == 0, __LINE__, __FILE__, "%s runs and verifies: %s",
			             g.gl_pathv[i], diag ? diag : "");
			if (legacy && text) {
				free(diag);
				diag = NULL;
				rc = run_text(dg, g.gl_pathv[i], text, len, false, false, 0, RD_FLOAT, &diag);
				assert_named(rc != 0 && strstr(diag, "rule 2"), __LINE__, __FILE__,
				             "%s is refused without --legacy: %s", g.gl_pathv[i], diag);
			}
			free(diag);
			free(text);
			n++;
		}
		globfree(&g);
	}
	assert_named(n >= 36, __LINE__, __FILE__, "36 fixtures ran (%d)", n);
}

static void
test_fixtures_negative(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct {
		const char *file, *want;
		bool legacy, run;
	} neg[] = {
		{"handmade_xml_declaration.xml", "rule 1 (lexical form): an XML declaration", 0, 0},
		{"handmade_attrs_multiline.xml", "must all be on one line", 0, 0},
		{"handmade_single_quotes.xml", "double quotes", 0, 0},
		{"handmade_missing_outofplace.xml", "attribute 'outofplace' of <algo> not found", 0, 0},
		{"handmade_coll_reduce_scatter_name.xml", "unsupported collective: reduce_scatter", 0, 0},
		{"handmade_tb_id_gap.xml", "thread block 1 is missing", 0, 0},
		{"handmade_peer_is_self.xml", "rule 5 (peers)", 0, 0},
		{"handmade_send_without_peer.xml", "without a send peer", 0, 0},
		{"handmade_cnt_72.xml", "count (72) must be positive and less than 72", 0, 0},
		{"handmade_bad_type.xml", "type of transfer is not supported: red", 0, 0},
		{"handmade_offset_out_of_bounds.xml", "rule 9 (offsets)", 0, 0},
		{"handmade_nop_chain_unclosed.xml", "chain of dependencies", 0, 0},
		{"handmade_missing_hasdep.xml", "has hasdep=0", 0, 0},
		{"handmade_dependency_cycle.xml", "rule 13 (acyclicity)", 0, 0},
		{"handmade_cnt_mismatch.xml", "rule 10 (matching)", 0, 0},
		{"handmade_send_order_mismatch.xml", "wrong result", 0, 1},
		{"handmade_shared_send_connection.xml", "rule 6 (connections)", 0, 0},
		{"handmade_chan_not_below_nchannels.xml", "rule 5 (channels)", 0, 0},
		{"handmade_unmatched_send.xml", "rule 10 (matching)", 0, 0},
		{"legacy-msccl_ar_ll_old_UNCLOSEDNOP.xml", "chain of dependencies", 1, 0},
		{"legacy-msccltools_ar_ndv2_1_SHAREDRECVCONN.xml", "rule 6 (connections)", 1, 0},
		{"msccltools_pcie_hier_allreduce_4r_ll_WRONGRESULT.xml", "wrong result", 0, 1},
	};
	for (size_t i = 0; i < countof(neg); i++) {
		char path[512];
		snprintf(path, sizeof path, "%s/negative/%s", fixtures(), neg[i].file);
		size_t len;
		char *text = slurp(path, &len);
		assert_named(text != NULL, __LINE__, __FILE__, "read %s", path);
		if (!text)
			continue;
		char *diag = NULL;
		int rc = run_text(dg, path, text, len, neg[i].legacy, neg[i].run, 1 << 16, RD_INT32, &diag);
		assert_named(rc != 0 && strstr(diag, neg[i].want) && strstr(diag, ": error: "),
		             __LINE__, __FILE__, "%s fails with '%s': %s", neg[i].file, neg[i].want, diag);
		free(diag);
		free(text);
	}
}

/* The interpreter's watchdog names the blocked steps: a hasdep removed
 * from a valid program (no validation, straight to the run). */
static void
test_deadlock_report(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	char path[512];
	snprintf(path, sizeof path, "%s/generated/msccltools_allpairs_allreduce_2r_1inst_ll.xml",
	         fixtures());
	size_t len;
	char *text = slurp(path, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	Arena a = {0};
	MProg p;
	diag_source(dg, path, text, len);
	CU_ASSERT_EQUAL_FATAL(msccl_read(dg, &a, text, len, false, &p), 0);
	p.gpu[0].tb[1].step[1].hasdep = 0;
	char *diag = NULL;
	size_t dlen;
	FILE *mem = open_memstream(&diag, &dlen);
	diag_stream(dg, mem);
	RunOpts o = {.bytes = 1 << 12, .dtype = RD_INT32, .op = RO_SUM, .inplace = true,
	             .timeout = 0.3};
	RunResult res;
	int rc = msccl_run(dg, &p, &o, &res);
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
	assert_named(rc != 0 && strstr(diag, "deadlock") && strstr(diag, "gpu 0 tb 0 step 0") &&
	                 strstr(diag, "waits for tb 1 step 1"),
	             __LINE__, __FILE__, "deadlock named: %s", diag);
	free(diag);
	arena_free(&a);
	free(text);
}

/* Every example schedule of at most 64 ranks (the larger examples take
 * minutes here on 2 cores; test_scale_128_256 covers 128 and 256) must
 * fit, every collective included: build (the
 * bounded-FIFO symbolic run in every mode included), read back, run on CPU
 * threads and verify. Up to 16 ranks: both modes, float and int32, two
 * sizes each. Larger ones start a thread per tb on 2 cores, so they run
 * twice: float in place at 1 element per chunk, int32 out of place at 3. */
static void
test_examples_roundtrip(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	glob_t g;
	CU_ASSERT_EQUAL_FATAL(glob("examples/*.coll", 0, NULL, &g), 0);
	int built = 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		size_t len;
		char *text = slurp(g.gl_pathv[i], &len);
		Checked c;
		check_text(dg, &c, g.gl_pathv[i], text, len);
		Prog p = {0};
		char *diag = NULL;
		size_t dlen;
		FILE *mem = open_memstream(&diag, &dlen);
		diag_stream(dg, mem);
		if (c.errors == 0 && lower(dg, c.file, &p) == 0) {
			for (int k = 0; k < p.nsched; k++) {
				const Sched *s = p.sched[k];
				/* in-network schedules are refused by design (test_nvls) */
				if (s->nrank > 64 || s->nfuse > 0)
					continue;
				BuildOpts bo = {.collective = s->name};
				char *xml = NULL;
				size_t xlen;
				FILE *x = open_memstream(&xml, &xlen);
				diag_source(dg, g.gl_pathv[i], text, len);
				int rc = msccl_backend.emit(dg, &p, &bo, x);
				fclose(x);
				fflush(mem);
				assert_named(rc == 0, __LINE__, __FILE__, "%s '%s' fits MSCCL: %s",
				             g.gl_pathv[i], s->name, diag);
				if (rc != 0) {
					free(xml);
					continue;
				}
				CU_ASSERT(strncmp(xml, "<algo ", 6) == 0);
				Arena a = {0};
				MProg mp;
				diag_source(dg, "built.xml", xml, xlen);
				int r2 = msccl_read(dg, &a, xml, xlen, false, &mp);
				assert_named(r2 == 0, __LINE__, __FILE__, "%s '%s' reads back",
				             g.gl_pathv[i], s->name);
				/* (dtype int32?, elements per chunk, out of place?) */
				static const int plan[][3] = {{0, 1, 0}, {1, 3, 1}, {0, 37, 1}, {1, 37, 0},
				                              {0, 1, 1}, {1, 3, 0}, {0, 37, 0}, {1, 37, 1}};
				int nrun = s->nrank > 16 ? 2 : 8;
				for (int j = 0; r2 == 0 && j < nrun; j++) {
					bool oop = plan[j][2] || !mp.inplace;
					RunOpts o = {.bytes = (int64_t)mp.nchunksperloop * 4 * plan[j][1],
					             .dtype = plan[j][0] ? RD_INT32 : RD_FLOAT, .op = RO_SUM,
					             .inplace = !oop, .timeout = RUN_TIMEOUT};
					RunResult res;
					r2 = msccl_run(dg, &mp, &o, &res);
					assert_named(r2 == 0, __LINE__, __FILE__, "%s '%s' runs and verifies (%s, "
					             "%s, %d elements per chunk)", g.gl_pathv[i], s->name,
					             oop ? "out of place" : "in place", plan[j][0] ? "int32" : "float",
					             plan[j][1]);
				}
				arena_free(&a);
				built++;
				free(xml);
			}
		}
		diag_stream(dg, NULL);
		fclose(mem);
		free(diag);
		diag_reset(dg);
		prog_free(&p);
		checked_free(&c);
		free(text);
	}
	globfree(&g);
	/* every one the target writes, SP and k-SP on 64 ranks included */
	assert_named(built >= 79, __LINE__, __FILE__, "at least 79 example schedules built (%d)", built);
}

/* The golden limit errors: each its own run through the backend, with
 * --instances inst (0: the default). */
static void
limit_golden(Diag *dg, const char *name, int inst)
{
	char path[256], errpath[256];
	snprintf(path, sizeof path, "tests/golden/%s.coll", name);
	snprintf(errpath, sizeof errpath, "tests/golden/%s.msccl-err", name);
	size_t len;
	char *text = slurp(path, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	char base[256];
	snprintf(base, sizeof base, "%s.coll", name);
	Checked c;
	check_text(dg, &c, base, text, len);
	Prog p = {0};
	char *diag = NULL;
	size_t dlen;
	FILE *mem = open_memstream(&diag, &dlen);
	diag_stream(dg, mem);
	diag_reset(dg);
	diag_source(dg, base, text, len);
	int rc = -1;
	if (c.errors == 0 && lower(dg, c.file, &p) == 0) {
		BuildOpts bo = {.instances = inst};
		FILE *x = fopen("/dev/null", "w");
		rc = msccl_backend.emit(dg, &p, &bo, x);
		fclose(x);
	}
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
	CU_ASSERT_NOT_EQUAL(rc, 0);
	char *want = slurp(errpath, &len);
	if (getenv("COLLC_UPDATE_GOLDEN")) {
		FILE *f = fopen(errpath, "w");
		fputs(diag, f);
		fclose(f);
	} else {
		assert_named(want && strcmp(want, diag) == 0, __LINE__, __FILE__,
		             "golden limit error: expected\n%s\ngot\n%s", want ? want : "(missing)", diag);
	}
	free(want);
	free(diag);
	prog_free(&p);
	checked_free(&c);
	free(text);
}

/* CPU seconds this process has used. */
static double
cpu_seconds(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return (double)u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + (double)u.ru_stime.tv_sec +
	       u.ru_stime.tv_usec / 1e6;
}

static void
test_limit_golden(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	limit_golden(dg, "msccl-beyond-limits", 0);
	limit_golden(dg, "msccl-too-many-ranks", 0); /* the symbolic check's 1024 */
	/* the executor's parser: 4095 elements per rank, 255-byte values */
	limit_golden(dg, "msccl-too-many-nodes", 8);
	limit_golden(dg, "msccl-long-name", 0);
	/* never fitting, refused by the bound before any width is built: the
	 * width search took 16 s and 95 s of CPU (5.5 and 9.6 GB) to refuse
	 * them; the bound takes about 0.1 s (CPU time, which load barely moves) */
	const char *never[] = {"msccl-never-fits-torus-64x16", "msccl-never-fits-hyperx"};
	for (int i = 0; i < 2; i++) {
		double t0 = cpu_seconds();
		limit_golden(dg, never[i], 0);
		double t = cpu_seconds() - t0;
		assert_named(t < 1.0, __LINE__, __FILE__, "%s is refused in under a second of CPU "
		             "(%.2f s)", never[i], t);
	}
}

/* Builds `text`'s first collective with `bo`; the XML (malloc'd) or NULL
 * after an error, whose diagnostics go to *diag. */
char *
build_xml(Diag *dg, const char *text, const BuildOpts *bo, size_t *xlen, char **diag)
{
	Checked c;
	check_str(dg, &c, text);
	Prog p = {0};
	size_t dlen;
	FILE *mem = open_memstream(diag, &dlen);
	diag_stream(dg, mem);
	diag_source(dg, "opts.coll", text, strlen(text));
	char *xml = NULL;
	int rc = -1;
	if (c.errors == 0 && lower(dg, c.file, &p) == 0) {
		FILE *x = open_memstream(&xml, xlen);
		rc = msccl_backend.emit(dg, &p, bo, x);
		fclose(x);
	}
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
	prog_free(&p);
	checked_free(&c);
	if (rc != 0) {
		free(xml);
		return NULL;
	}
	return xml;
}

char *
built_xml(Diag *dg, int line, const char *text, const BuildOpts *bo, size_t *xlen, const char *fmt, ...)
{
	char what[512], *diag = NULL;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	char *xml = build_xml(dg, text, bo, xlen, &diag);
	assert_named(xml != NULL, line, __FILE__, "%s builds: %s", what, diag);
	free(diag);
	return xml;
}

/* --channels, --instances, --proto, --legacy and --min/--max-bytes: each shows in the XML, and
 * the file reads back (in its dialect) and runs to the right result. */
/* Rule 16 at run time: a size outside [minBytes, maxBytes] is refused (the
 * executor would not select the file), the bounds themselves run, the legacy
 * bound is exclusive; and the size `collc run` picks by default lies inside. */
static void
test_selection_range(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char ring[] = "topology R = ring(4);\n"
	                           "collective allreduce AR on R { algorithm ring; }\n";
	int64_t step = 4 * 4; /* nchunksperloop 4, int32 */
	for (int legacy = 0; legacy < 2; legacy++) {
		BuildOpts bo = {.legacy = legacy, .min_bytes = 1024, .max_bytes = 64 << 10};
		size_t xlen;
		char *xml = built_xml(dg, __LINE__, ring, &bo, &xlen, "legacy=%d", legacy);
		if (!xml)
			continue;
		struct {
			int64_t bytes;
			bool runs;
		} sizes[] = {{1024, true}, {64 << 10, true}, {1024 - step, false},
		             {(64 << 10) + step, false}, {1 << 20, false}};
		for (size_t i = 0; i < countof(sizes); i++) {
			char *diag = NULL;
			int rc = run_text(dg, "sel.xml", xml, xlen, legacy, true, sizes[i].bytes, RD_INT32, &diag);
			if (sizes[i].runs)
				assert_named(rc == 0, __LINE__, __FILE__, "legacy=%d %lld bytes run: %s", legacy,
				             (long long)sizes[i].bytes, diag);
			else
				assert_named(rc != 0 && strstr(diag, "rule 16 (selection)") &&
				             strstr(diag, "outside the file's range"), __LINE__, __FILE__,
				             "legacy=%d %lld bytes refused: %s", legacy,
				             (long long)sizes[i].bytes, diag);
			free(diag);
		}
		Arena a = {0};
		MProg p;
		CU_ASSERT_EQUAL_FATAL(msccl_read(dg, &a, xml, xlen, legacy, &p), 0);
		CU_ASSERT_EQUAL(msccl_nearest_size(&p, 1 << 20, 4), 64 << 10);
		CU_ASSERT_EQUAL(msccl_nearest_size(&p, 1, 4), 1024);
		CU_ASSERT_EQUAL(msccl_nearest_size(&p, 4000, 4), 4000);
		CU_ASSERT_EQUAL(msccl_nearest_size(&p, 4007, 4), 4000);
		CU_ASSERT_EQUAL(msccl_nearest_size(&p, 4009, 4), 4016);
		CU_ASSERT_EQUAL(msccl_nearest_size(&p, 4008, 4), 4000); /* a tie: the smaller */
		CU_ASSERT(msccl_selects(&p, 64 << 10, 4));
		CU_ASSERT(!msccl_selects(&p, (64 << 10) + 16, 4));
		CU_ASSERT(!msccl_selects(&p, 4002, 2)); /* not whole elements per chunk */
		/* a range holding no whole-chunk size */
		p.min_bytes = 1030;
		p.max_bytes = p.legacy ? 1040 : 1039;
		CU_ASSERT_EQUAL(msccl_nearest_size(&p, 1 << 20, 4), -1);
		arena_free(&a);
		free(xml);
	}
}

/* What rule 14 chunk by chunk looks at in a program's thread blocks: how
 * many both send and receive, and the longest step (count), of all and of
 * the sending ones. */
typedef struct TbFigures {
	int paired, longest, longest_send;
} TbFigures;

static TbFigures
tb_figures(const MProg *p)
{
	TbFigures f = {0};
	for (int g = 0; g < p->ngpus; g++)
		for (int t = 0; t < p->gpu[g].ntb; t++) {
			const MTb *tb = &p->gpu[g].tb[t];
			f.paired += tb->send >= 0 && tb->recv >= 0;
			for (int k = 0; k < tb->nstep; k++) {
				const MStep *st = &tb->step[k];
				if (st->cnt > f.longest)
					f.longest = st->cnt;
				if (mtype_sends(st->type) && st->cnt > f.longest_send)
					f.longest_send = st->cnt;
			}
		}
	return f;
}

/* Rule 14 at large sizes: with Simple, a step of cnt chunks goes as calls of
 * maxAllowedCount chunks (1 when chunks are large) and a connection holds 2
 * calls. An exchange of 3-chunk steps (both ranks send, then receive) is
 * deadlock-free with a message per step but stops chunk by chunk; with LL's
 * 8 calls it runs. A ring allreduce runs chunk by chunk too. */
static void
test_piecewise_deadlock(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char xml[] =
	    "<algo name=\"x\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"6\" ngpus=\"2\" "
	    "coll=\"allgather\" inplace=\"1\" outofplace=\"1\" minBytes=\"0\" maxBytes=\"0\">\n"
	    "  <gpu id=\"0\" i_chunks=\"3\" o_chunks=\"6\" s_chunks=\"0\">\n"
	    "    <tb id=\"0\" send=\"1\" recv=\"1\" chan=\"0\">\n"
	    "      <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\" cnt=\"3\" depid=\"-1\" deps=\"-1\" hasdep=\"1\"/>\n"
	    "      <step s=\"1\" type=\"r\" srcbuf=\"o\" srcoff=\"3\" dstbuf=\"o\" dstoff=\"3\" cnt=\"3\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
	    "    </tb>\n"
	    "    <tb id=\"1\" send=\"-1\" recv=\"-1\" chan=\"0\">\n"
	    "      <step s=\"0\" type=\"cpy\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"3\" depid=\"0\" deps=\"0\" hasdep=\"0\"/>\n"
	    "    </tb>\n"
	    "  </gpu>\n"
	    "  <gpu id=\"1\" i_chunks=\"3\" o_chunks=\"6\" s_chunks=\"0\">\n"
	    "    <tb id=\"0\" send=\"0\" recv=\"0\" chan=\"0\">\n"
	    "      <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\" cnt=\"3\" depid=\"-1\" deps=\"-1\" hasdep=\"1\"/>\n"
	    "      <step s=\"1\" type=\"r\" srcbuf=\"o\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"3\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
	    "    </tb>\n"
	    "    <tb id=\"1\" send=\"-1\" recv=\"-1\" chan=\"0\">\n"
	    "      <step s=\"0\" type=\"cpy\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"3\" cnt=\"3\" depid=\"0\" deps=\"0\" hasdep=\"0\"/>\n"
	    "    </tb>\n"
	    "  </gpu>\n"
	    "</algo>\n";
	char *diag = NULL;
	size_t dlen;
	FILE *mem = open_memstream(&diag, &dlen);
	diag_stream(dg, mem);
	diag_reset(dg);
	diag_source(dg, "x.xml", xml, sizeof xml - 1);
	Arena a = {0};
	MProg p;
	CU_ASSERT_EQUAL_FATAL(msccl_read(dg, &a, xml, sizeof xml - 1, false, &p), 0);
	CU_ASSERT_EQUAL(msccl_check_run(dg, &p, 2, false), 0);
	CU_ASSERT_EQUAL(msccl_check_run(dg, &p, 8, true), 0);
	CU_ASSERT_NOT_EQUAL(msccl_check_run(dg, &p, 2, true), 0);
	arena_free(&a);
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
	assert_named(strstr(diag, "rule 14 (deadlock)") && strstr(diag, "FIFO full"), __LINE__,
	             __FILE__, "the piecewise run stops on a full FIFO: %s", diag);
	free(diag);

	static const char ring[] = "topology R = ring(8);\n"
	                           "collective allreduce AR on R { algorithm ring; }\n";
	BuildOpts bo = {0};
	size_t xlen;
	char *rx = built_xml(dg, __LINE__, ring, &bo, &xlen, "ring");
	if (!rx)
		return;
	diag_source(dg, "ring.xml", rx, xlen);
	CU_ASSERT_EQUAL_FATAL(msccl_read(dg, &a, rx, xlen, false, &p), 0);
	CU_ASSERT_EQUAL(msccl_check_run(dg, &p, 2, true), 0);
	arena_free(&a);
	free(rx);

	/* SP on the 3x3 torus exchanges runs of 3 chunks between neighbours: the
	 * backend, finding that its paired tbs stop chunk by chunk, gives each
	 * peer a send-only and a receive-only tb, and the file passes */
	size_t len;
	char *sp = slurp("examples/sp-torus-3x3-explicit.coll", &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sp);
	rx = built_xml(dg, __LINE__, sp, &bo, &xlen, "SP 3x3");
	free(sp);
	if (!rx)
		return;
	diag_source(dg, "sp.xml", rx, xlen);
	CU_ASSERT_EQUAL_FATAL(msccl_read(dg, &a, rx, xlen, false, &p), 0);
	CU_ASSERT_EQUAL(msccl_check_run(dg, &p, 2, true), 0);
	TbFigures f3 = tb_figures(&p);
	CU_ASSERT(f3.longest_send > 2);
	CU_ASSERT_EQUAL(f3.paired, 0);
	arena_free(&a);
	free(rx);

	/* SP over all 5040 automorphisms of K7 fits only with long steps; they
	 * stop chunk by chunk when a tb both sends to and receives from a peer,
	 * so its tbs only send or only receive, and it passes */
	sp = slurp("examples/full-affine-group.coll", &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sp);
	BuildOpts all = {.collective = "SP_all"};
	rx = built_xml(dg, __LINE__, sp, &all, &xlen, "SP_all");
	if (rx) {
		diag_source(dg, "all.xml", rx, xlen);
		CU_ASSERT_EQUAL_FATAL(msccl_read(dg, &a, rx, xlen, false, &p), 0);
		CU_ASSERT_EQUAL(msccl_check_run(dg, &p, 2, true), 0);
		TbFigures fa = tb_figures(&p);
		CU_ASSERT_EQUAL(fa.paired, 0);
		CU_ASSERT(fa.longest > 2);
		arena_free(&a);
	}
	free(sp);
	free(rx);
}

static void
test_build_options(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	const char *ring = "topology R = ring(8);\n"
	                   "collective allreduce AR on R { algorithm ring; }\n";
	struct {
		BuildOpts bo;
		const char *attr[3]; /* what the <algo> element must say */
	} cases[] = {
		{{0}, {"nchannels=\"1\"", "proto=\"Simple\"", "coll=\"allreduce\""}},
		{{.channels = 2}, {"nchannels=\"2\"", "proto=\"Simple\"", NULL}},
		{{.instances = 2}, {"nchannels=\"2\"", NULL, NULL}},
		{{.channels = 2, .instances = 2}, {"nchannels=\"4\"", NULL, NULL}},
		{{.proto = "LL"}, {"proto=\"LL\"", NULL, NULL}},
		{{.proto = "LL128"}, {"proto=\"LL128\"", NULL, NULL}},
		{{.legacy = true}, {"coll=\"allreduce\"", "proto=\"Simple\"", "maxBytes=\"1099511627776\""}},
		{{.min_bytes = 1024, .max_bytes = 1 << 20}, {"minBytes=\"1024\"", "maxBytes=\"1048576\"", NULL}},
		/* the legacy bound is exclusive: one higher for the same sizes */
		{{.legacy = true, .max_bytes = 1 << 20}, {"minBytes=\"0\"", "maxBytes=\"1048577\"", NULL}},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		size_t xlen;
		char *xml = built_xml(dg, __LINE__, ring, &cases[i].bo, &xlen, "case %zu", i);
		if (!xml)
			continue;
		char *head_end = strchr(xml, '>');
		CU_ASSERT_PTR_NOT_NULL_FATAL(head_end);
		*head_end = 0;
		for (int k = 0; k < 3 && cases[i].attr[k]; k++)
			assert_named(strstr(xml, cases[i].attr[k]) != NULL, __LINE__, __FILE__,
			             "case %zu: %s in %s", i, cases[i].attr[k], xml);
		/* only the legacy dialect drops the new keys */
		CU_ASSERT_EQUAL(strstr(xml, "outofplace=") == NULL, cases[i].bo.legacy);
		*head_end = '>';
		for (int legacy = 0; legacy < 2; legacy++) {
			char *diag = NULL;
			int rc = run_text(dg, "opts.xml", xml, xlen, legacy, true, 8 * 4 * 1024, RD_INT32, &diag);
			/* the other dialect refuses it: a legacy file lacks outofplace, and a
			 * new one's maxBytes="0" selects nothing in the legacy runtime */
			if (legacy == (int)cases[i].bo.legacy)
				assert_named(rc == 0, __LINE__, __FILE__, "case %zu runs: %s", i, diag);
			else if (cases[i].bo.max_bytes == 0)
				assert_named(rc != 0, __LINE__, __FILE__, "case %zu, other dialect: refused", i);
			free(diag);
		}
		free(xml);
	}
	/* more instances than channels exist */
	BuildOpts bad = {.instances = 64};
	size_t xlen;
	char *diag = NULL;
	char *xml = build_xml(dg, ring, &bad, &xlen, &diag);
	CU_ASSERT_PTR_NULL(xml);
	assert_named(strstr(diag, "--instances 64 leaves no channel") != NULL, __LINE__, __FILE__,
	             "instances error: %s", diag);
	free(diag);
	free(xml);
	/* instances times channels over the executor's: named as such, not as a
	 * rule the written XML would break */
	BuildOpts wide = {.instances = 8, .channels = 8};
	diag = NULL;
	xml = build_xml(dg, ring, &wide, &xlen, &diag);
	CU_ASSERT_PTR_NULL(xml);
	assert_named(strstr(diag, "--instances 8 x --channels 8 is 64 channels; the executor runs "
	                          "at most 32") != NULL,
	             __LINE__, __FILE__, "instances x channels error: %s", diag);
	free(diag);
	free(xml);
}

/* The executor's parser stores <algo>, every <gpu> and one rank's <tb>s and
 * <step>s in 4096 slots and refuses the file once the last is taken: the
 * reader counts them (rule 7). gpu 0 here has 64 tbs of 64 nops: 4163. */
static void
test_parser_nodes(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	for (int nstep = 63; nstep <= 64; nstep++) {
		/* 1 + 2 + 64 + 64 * 63 = 4099 is over too; 62 steps: 4035, under */
		int steps = nstep == 63 ? 62 : 64;
		size_t cap = 1 << 20, len = 0;
		char *x = malloc(cap);
		len += (size_t)snprintf(x + len, cap - len, "<algo name=\"n\" proto=\"Simple\" "
		                        "nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"2\" coll=\"allreduce\" "
		                        "inplace=\"1\" outofplace=\"1\" minBytes=\"0\" maxBytes=\"0\">\n");
		for (int g = 0; g < 2; g++) {
			len += (size_t)snprintf(x + len, cap - len, "  <gpu id=\"%d\" i_chunks=\"2\" "
			                        "o_chunks=\"2\" s_chunks=\"0\">\n", g);
			for (int t = 0; g == 0 && t < 64; t++) {
				len += (size_t)snprintf(x + len, cap - len, "    <tb id=\"%d\" send=\"-1\" "
				                        "recv=\"-1\" chan=\"0\">\n", t);
				for (int k = 0; k < steps; k++)
					len += (size_t)snprintf(x + len, cap - len, "      <step s=\"%d\" "
					                        "type=\"nop\" srcbuf=\"i\" srcoff=\"-1\" dstbuf=\"o\" "
					                        "dstoff=\"-1\" cnt=\"0\" depid=\"-1\" deps=\"-1\" "
					                        "hasdep=\"0\"/>\n", k);
				len += (size_t)snprintf(x + len, cap - len, "    </tb>\n");
			}
			len += (size_t)snprintf(x + len, cap - len, "  </gpu>\n");
		}
		len += (size_t)snprintf(x + len, cap - len, "</algo>\n");
		char *diag = NULL;
		int rc = run_text(dg, "nodes.xml", x, len, false, false, 0, RD_INT32, &diag);
		bool over = strstr(diag, "rule 7 (steps): gpu 0's 64 thread blocks and their steps, "
		                         "with <algo> and the 2 <gpu> elements, make 4163 elements; "
		                         "the executor's parser stores at most 4095 per rank") != NULL;
		if (steps == 64)
			assert_named(rc != 0 && over, __LINE__, __FILE__, "4163 elements refused: %s", diag);
		else
			assert_named(!strstr(diag, "elements;"), __LINE__, __FILE__, "4035 elements pass "
			             "the count: %s", diag);
		free(diag);
		free(x);
	}
}

/* collc run promises sum, prod, max and min on float, double, int32 and
 * int64, for a .coll file's schedules (exec.c) and for MSCCL XML
 * (msccl_run.c, in place and out of place): each pair runs and verifies on
 * the reducing collectives, and alltoall moves every type. */
static void
test_run_ops_and_types(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct { const char *kind, *alg; bool xml; } cases[] = {
		{"allreduce", "ring", true},
		{"reduce_scatter", "recursive_halving", true},
		{"allreduce", "double_binary_tree", true},
		{"reduce", "binomial_tree", false},
		{"alltoall", "bruck", true},
	};
	int runs = 0;
	for (size_t i = 0; i < countof(cases); i++) {
		char text[256];
		snprintf(text, sizeof text, "topology T = ring(4);\ncollective %s X on T { algorithm %s; }\n",
		         cases[i].kind, cases[i].alg);
		Checked c;
		check_text(dg, &c, "t.coll", text, strlen(text));
		Prog p = {0};
		CU_ASSERT_FATAL(c.errors == 0 && lower(dg, c.file, &p) == 0 && p.nsched == 1);
		BuildOpts bo = {0};
		size_t xlen = 0;
		char *diag = NULL;
		char *xml = cases[i].xml ? build_xml(dg, text, &bo, &xlen, &diag) : NULL;
		free(diag);
		Arena a = {0};
		MProg mp;
		diag_source(dg, "x.xml", xml ? xml : "", xlen);
		CU_ASSERT_FATAL(!cases[i].xml || (xml && msccl_read(dg, &a, xml, xlen, false, &mp) == 0));
		for (int op = RO_SUM; op <= RO_MIN; op++)
			for (int dt = RD_FLOAT; dt <= RD_INT64; dt++) {
				diag = NULL;
				size_t dlen;
				FILE *mem = open_memstream(&diag, &dlen);
				diag_stream(dg, mem);
				double secs;
				ExecOpts eo = {.bytes = 64 * 12 * 8, .dtype = dt, .op = op};
				int rc = exec_sched(dg, p.sched[0], &eo, &secs);
				for (int m = 0; xml && rc == 0 && m < 2; m++) {
					RunOpts o = {.bytes = (int64_t)mp.nchunksperloop * 8 * 5, .dtype = dt,
					             .op = op, .inplace = m == 0, .timeout = RUN_TIMEOUT,
					             .quiet = true};
					RunResult res;
					rc = msccl_run(dg, &mp, &o, &res);
					if (rc == 0 && !res.verified)
						rc = -1;
				}
				diag_stream(dg, NULL);
				fclose(mem);
				diag_reset(dg);
				assert_named(rc == 0, __LINE__, __FILE__, "%s %s: %s on %s runs and verifies: %s",
				             cases[i].kind, cases[i].alg, rop_name(op), rdtype_name(dt), diag);
				free(diag);
				runs++;
			}
		arena_free(&a);
		free(xml);
		prog_free(&p);
		checked_free(&c);
	}
	CU_ASSERT_EQUAL(runs, 5 * 16);
}

/* When the backend's own check of a program fails, the errors cite the
 * XML collc would write (named as such, its line quoted), and a note the
 * collective in the .coll file. A built program is damaged to get there. */
static void
test_check_cites_xml(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char text[] = "topology R = ring(4);\n"
	                           "collective allreduce AR on R { algorithm ring; }\n";
	Checked c;
	check_str(dg, &c, text);
	Prog p = {0};
	char *diag = NULL;
	size_t dlen;
	FILE *mem = open_memstream(&diag, &dlen);
	diag_stream(dg, mem);
	diag_reset(dg);
	diag_source(dg, "cite.coll", text, strlen(text));
	Arena a = {0};
	MProg mp;
	BuildOpts bo = {0};
	int built = -1, rc = 0;
	if (c.errors == 0 && lower(dg, c.file, &p) == 0 &&
	    (built = msccl_lower(dg, &a, p.sched[0], &bo, &mp)) == 0) {
		mp.gpu[1].tb[0].step[0].cnt = 0; /* rule 9: counts are positive */
		rc = msccl_check_built(dg, &mp, p.sched[0], false, true);
	}
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
	const char *err = diag ? strstr(diag, "<MSCCL XML for 'AR'>:") : NULL;
	const char *quoted = err ? strchr(err, '\n') : NULL;
	assert_named(built == 0 && rc == -1 && err && strstr(err, "error: rule 9 (counts)") &&
	             quoted && strncmp(quoted + 1, "      <step s=\"0\"", 17) == 0 &&
	             strstr(diag, "cite.coll:2:") && strstr(diag, "note: in the MSCCL program built "
	                                                          "for 'AR'"),
	             __LINE__, __FILE__, "the damaged program's errors: %s", diag ? diag : "");
	free(diag);
	arena_free(&a);
	prog_free(&p);
	checked_free(&c);
}

CU_TestInfo msccl_tests[] = {
	{"128 and 256 ranks: ring and SP on 8x16, 16x16 written, read back, run", test_scale_128_256},
	{"in-place allgather: the copy home waits; a racy file is rejected", test_allgather_race},
	{"broadcast and reduce: written with their root, read back, run", test_broadcast_reduce},
	{"GPU clusters: each rank's box and GPU in a comment, read back, run", test_gpu_map},
	{"layout: MSCCL takes the order with the fewest runs", test_layout_runs},
	{"the copy home is a step per run", test_copy_home_runs},
	{"collc run: every operator and datatype, schedules and XML", test_run_ops_and_types},
	{"in-place alltoall: Bruck and pairwise in both modes", test_alltoall_in_place},
	{"SP 6x6, 8 channels: a second reduce of a run in one round", test_two_children_one_round},
	{"every library algorithm on small topologies: build, read back, run", test_library_algorithms},
	{"ring allreduce: s, rrs, rrcs, rcs, r as RCCL's ring", test_fused_steps},
	{"a 15-way fan-in: 4 accumulator chains and re", test_fan_in_chains},
	{"--channels, --instances, --proto, --legacy, --min/max-bytes: XML, read back, run", test_build_options},
	{"sizes outside minBytes..maxBytes are refused; the default size fits", test_selection_range},
	{"rule 14 chunk by chunk: an exchange of 3-chunk steps stops; the backend's files pass", test_piecewise_deadlock},
	{"fixtures under generated/ and collected/ run and verify", test_fixtures_run},
	{"negative fixtures fail for their reason", test_fixtures_negative},
	{"a deadlock names the blocked tbs and steps", test_deadlock_report},
	{"examples: build, check, read back, run, verify", test_examples_roundtrip},
	{"a schedule beyond the limits: the golden error", test_limit_golden},
	{"ring(64/128/256) allreduce: no larger than msccl-tools' ring", test_ring_vs_msccl_tools},
	{"the executor parser's 4095 elements per rank", test_parser_nodes},
	{"spine-leaf SP, 128 and 512 hosts: shape and every check", test_spine_leaf},
	{"one program built and checked: ring(128), SP 8x16", test_one_program},
	{"--channels: the error names the closest attempt, a note the other", test_channels_error_closest},
	{"the backend's check cites the XML it would write, then the collective", test_check_cites_xml},
	{"a GPU cluster of 8-GPU nodes: AR, RS and AG, 128 and 256 run, 1024 within every limit", test_gpu_cluster},
	CU_TEST_INFO_NULL,
};
