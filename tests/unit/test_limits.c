/*
 * test_limits.c: work too big for the machine is refused before it is
 * built, with a located error and exit 1 (base/collc_limits.h,
 * docs/limits.md): the golden limit-*.coll files run through the binary,
 * a schedule text file, `collc run --size`, the input limit, an allocation
 * that fails under a small RLIMIT_AS, and the estimates against what the
 * builders make. The times of the refusals are in bench_limits.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <glob.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "ir.h"
#include "tests.h"

#ifndef COLLC_BIN
#define COLLC_BIN "bin/collc"
#endif

static char tmpdir[] = "/tmp/collc-limits-XXXXXX";
static char bin[4096];

int
limits_setup(void)
{
	if (!mkdtemp(tmpdir) || !realpath(COLLC_BIN, bin))
		return -1;
	return 0;
}

int
limits_teardown(void)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Runs `cd DIR && [PREFIX] collc ARGS`, stderr into *err; the exit status. */
static int
collc_in(const char *dir, const char *prefix, const char *args, char **err)
{
	char cmd[8192], path[256];
	snprintf(path, sizeof path, "%s/err", tmpdir);
	snprintf(cmd, sizeof cmd, "cd %s && %s %s %s >/dev/null 2>%s", dir, prefix, bin, args, path);
	int st = system(cmd);
	*err = slurp(path, NULL);
	if (!*err)
		*err = strdup("");
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Each golden limit file (a .coll, or a schedule text file .ir), through
 * the binary: exit 1, its exact errors. Their times: bench_limits. */
static void
test_golden_limits(void)
{
	glob_t g;
	CU_ASSERT_EQUAL_FATAL(glob("tests/golden/limit-*.coll", 0, NULL, &g), 0);
	CU_ASSERT_EQUAL_FATAL(glob("tests/golden/limit-*.ir", GLOB_APPEND, NULL, &g), 0);
	CU_ASSERT(g.gl_pathc >= 10);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char *copy = strdup(g.gl_pathv[i]), args[512], *err;
		snprintf(args, sizeof args, "check %s", basename(copy));
		int rc = collc_in("tests/golden", "", args, &err);
		const char *dot = strrchr(g.gl_pathv[i], '.');
		char want_path[512];
		snprintf(want_path, sizeof want_path, "%.*s.err", (int)(dot - g.gl_pathv[i]),
		         g.gl_pathv[i]);
		char *want = slurp(want_path, NULL);
		assert_named(rc == 1 && want && strcmp(err, want) == 0, __LINE__, __FILE__,
		             "%s: exit %d (want 1), stderr\n%s\nwant\n%s", g.gl_pathv[i], rc, err,
		             want ? want : "(missing)");
		free(want);
		free(err);
		free(copy);
	}
	globfree(&g);
}

/* A schedule text file of under 1 KB that declares 2^30 chunks. */
static void
test_ir_chunks(void)
{
	write_in(tmpdir, "bc.coll", "topology R = ring(4);\n"
	                     "collective broadcast B on R { algorithm binomial_tree; }\n");
	char *err;
	CU_ASSERT_EQUAL(collc_in(tmpdir, "", "build bc.coll --target ir -o bc.ir", &err), 0);
	free(err);
	char path[256];
	snprintf(path, sizeof path, "%s/bc.ir", tmpdir);
	char *ir = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ir);
	char *at = strstr(ir, " chunks 1 ");
	CU_ASSERT_PTR_NOT_NULL_FATAL(at);
	size_t head = (size_t)(at - ir);
	char *big = malloc(strlen(ir) + 32);
	snprintf(big, strlen(ir) + 32, "%.*s chunks 1073741824 %s", (int)head, ir,
	         at + strlen(" chunks 1 "));
	CU_ASSERT(strlen(big) < 1024);
	write_in(tmpdir, "big.ir", big);
	int rc = collc_in(tmpdir, "", "check big.ir", &err);
	assert_named(rc == 1 && strstr(err, "big.ir:") && strstr(err, "collc builds at most"),
	             __LINE__, __FILE__, "exit %d, %s", rc, err);
	free(err);
	free(big);
	free(ir);
}

/* --size beyond what memory holds: refused with the file's location. */
static void
test_run_size(void)
{
	char *err;
	int rc = collc_in(".", "", "run examples/ring-classic.coll --collective AR --size 1e12",
	                  &err);
	assert_named(rc == 1 && strstr(err, "ring-classic.coll:") &&
	             strstr(err, "collc run allows"), __LINE__, __FILE__, "exit %d, %s", rc, err);
	free(err);
	char args[4200], cwd[4096];
	CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
	snprintf(args, sizeof args, "build %s/examples/ring-classic.coll --target msccl "
	         "--collective AR -o ar.xml", cwd);
	CU_ASSERT_EQUAL(collc_in(tmpdir, "", args, &err), 0);
	free(err);
	rc = collc_in(tmpdir, "", "run ar.xml --size 1e12", &err);
	assert_named(rc == 1 && strstr(err, "ar.xml:1:1:") && strstr(err, "collc run allows"),
	             __LINE__, __FILE__, "exit %d, %s", rc, err);
	free(err);
	/* a size that fits still runs */
	rc = collc_in(tmpdir, "", "run ar.xml --size 64KiB", &err);
	assert_named(rc == 0, __LINE__, __FILE__, "exit %d, %s", rc, err);
	free(err);
}

/* An input over its format's limit is refused from its size, before it is
 * read: the exact message for each format, told by its name or first line
 * (sparse files, so nothing is written). */
static void
test_input_limit(void)
{
	static const struct {
		const char *file, *head, *cmd, *what;
		InputKind kind;
		int per_byte;
	} cases[] = {
		{"huge.coll", "topology", "check", ".coll files", IN_COLL, COLL_BYTES_PER_INPUT_BYTE},
		{"huge.ir", "collc-ir 1\n", "check", "schedule text files", IN_SCHED_TEXT,
		 SCHED_TEXT_BYTES_PER_INPUT_BYTE},
		{"huge.sim", "collc-sim 1\n", "sim", ".sim files", IN_SIM_TEXT,
		 SIM_TEXT_BYTES_PER_INPUT_BYTE},
		{"huge.xml", "<algo", "run", "MSCCL XML files", IN_MSCCL_XML,
		 MSCCL_XML_BYTES_PER_INPUT_BYTE},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		char path[256], args[300], want[1024];
		snprintf(path, sizeof path, "%s/%s", tmpdir, cases[i].file);
		FILE *f = fopen(path, "w");
		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		size_t limit = input_limit(cases[i].kind);
		fputs(cases[i].head, f);
		fflush(f);
		CU_ASSERT_EQUAL(ftruncate(fileno(f), (off_t)limit + 1), 0); /* sparse */
		fclose(f);
		snprintf(want, sizeof want, "collc: error: '%s' is %zu MiB; collc reads %s of at most "
		         "%zu MiB here (reading one takes up to %d bytes of memory per byte, and a run "
		         "may use %.1f GiB, half the physical memory; docs/limits.md)\n", cases[i].file,
		         (limit + 1 + (1 << 20) - 1) >> 20, cases[i].what, limit >> 20,
		         cases[i].per_byte, memory_budget() / (1 << 30));
		snprintf(args, sizeof args, "%s %s", cases[i].cmd, cases[i].file);
		char *err;
		int rc = collc_in(tmpdir, "", args, &err);
		assert_named(rc == 1 && strcmp(err, want) == 0, __LINE__, __FILE__,
		             "collc %s: exit %d, expected\n%sgot\n%s", args, rc, want, err);
		free(err);
		remove(path);
	}
}

/* Each format's limit is what the budget holds at its measured rate, under
 * its cap; so a schedule text file is read back up to 24 times the size of
 * the largest .coll file, not refused at the .coll rate as it once was. */
static void
test_input_limit_arithmetic(void)
{
	static const struct {
		InputKind kind;
		int per_byte;
		double cap;
	} formats[] = {
		{IN_COLL, COLL_BYTES_PER_INPUT_BYTE, MAX_COLL_INPUT_BYTES},
		{IN_SCHED_TEXT, SCHED_TEXT_BYTES_PER_INPUT_BYTE, MAX_TEXT_INPUT_BYTES},
		{IN_SIM_TEXT, SIM_TEXT_BYTES_PER_INPUT_BYTE, MAX_TEXT_INPUT_BYTES},
		{IN_MSCCL_XML, MSCCL_XML_BYTES_PER_INPUT_BYTE, MAX_XML_INPUT_BYTES},
	};
	double budget = memory_budget();
	for (size_t i = 0; i < countof(formats); i++) {
		double limit = (double)input_limit(formats[i].kind);
		CU_ASSERT(limit <= formats[i].cap);
		CU_ASSERT(limit * formats[i].per_byte <= budget + formats[i].per_byte);
		/* either the cap or the budget binds, to the byte */
		CU_ASSERT(limit == formats[i].cap || limit > budget / formats[i].per_byte - 1);
	}
	double coll = (double)input_limit(IN_COLL), text = (double)input_limit(IN_SCHED_TEXT);
	CU_ASSERT(text == MAX_TEXT_INPUT_BYTES ||
	          text >= coll * (COLL_BYTES_PER_INPUT_BYTE / SCHED_TEXT_BYTES_PER_INPUT_BYTE) - 24);
	/* the format is told by the name (.xml) or the first line */
	CU_ASSERT_EQUAL(input_kind("a.xml", "collc-ir 1", 10), IN_MSCCL_XML);
	CU_ASSERT_EQUAL(input_kind("a", "collc-ir 1", 10), IN_SCHED_TEXT);
	CU_ASSERT_EQUAL(input_kind("a.ir", "collc-sim 1", 11), IN_SIM_TEXT);
	CU_ASSERT_EQUAL(input_kind("a.ir", "collc-i", 7), IN_COLL);
}

/* Out of memory under a small address-space limit: a located error naming
 * what was being built, exit 1, and no output file. (AddressSanitizer
 * reserves terabytes of address space: there the limit cannot be set.) */
static void
test_out_of_memory(void)
{
	if (UNDER_ASAN)
		return;
	write_in(tmpdir, "r4k.coll", "topology R = ring(4096);\n"
	                      "collective allreduce AR on R { algorithm ring; }\n");
	char *err;
	int rc = collc_in(tmpdir, "ulimit -v 300000;", "build r4k.coll --target msccl -o r4k.xml",
	                  &err);
	assert_named(rc == 1 && strstr(err, "r4k.coll:2:1: error: out of memory building 'AR'"),
	             __LINE__, __FILE__, "exit %d, %s", rc, err);
	free(err);
	glob_t g;
	char pat[256];
	snprintf(pat, sizeof pat, "%s/r4k.xml*", tmpdir);
	CU_ASSERT_EQUAL(glob(pat, 0, NULL, &g), GLOB_NOMATCH);
	globfree(&g);
	/* in the verifier: named as the proof */
	write_in(tmpdir, "r1k.coll", "topology R = ring(1024);\n"
	                      "collective allreduce AR on R { algorithm ring; }\n");
	rc = collc_in(tmpdir, "ulimit -v 120000;", "check r1k.coll", &err);
	assert_named(rc == 1 && strstr(err, "out of memory building") && !strstr(err, "internal"),
	             __LINE__, __FILE__, "exit %d, %s", rc, err);
	free(err);
}

/* A large schedule text file is read in linear time: 200,000 ranks (the
 * duplicate-rank check was quadratic: minutes). Its time: bench_limits. */
static void
test_ir_read_large(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char text[] = "topology R = ring(200000);\n"
	                           "collective broadcast B on R { algorithm chain(segments 8); }\n";
	Checked c;
	check_text(dg, &c, "big.coll", text, strlen(text));
	CU_ASSERT_EQUAL_FATAL(c.errors, 0);
	Prog p = {0};
	CU_ASSERT_EQUAL_FATAL(lower(dg, c.file, &p), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	BuildOpts o = {0};
	CU_ASSERT_EQUAL(ir_backend.emit(dg, &p, &o, mem), 0);
	fclose(mem);
	Prog q = {0};
	diag_source(dg, "big.ir", buf, len);
	CU_ASSERT_EQUAL(ir_read(dg, buf, len, &q), 0);
	CU_ASSERT_EQUAL_FATAL(q.nsched, 1);
	CU_ASSERT_EQUAL(q.sched[0]->nrank, 200000);
	CU_ASSERT_EQUAL(q.sched[0]->nmsg, p.sched[0]->nmsg);
	CU_ASSERT_EQUAL(verify(dg, q.sched[0]), 0);
	prog_free(&q);
	/* a rank listed twice is still found: the last two ranks on one node */
	char *rn = strstr(buf, "\nrank_nodes ");
	CU_ASSERT_PTR_NOT_NULL_FATAL(rn);
	char *eol = strchr(rn + 1, '\n');
	char *last = eol;
	while (last[-1] != ' ')
		last--;
	char *prev = last - 1;
	while (prev[-1] != ' ')
		prev--;
	size_t head = (size_t)(prev - buf);
	char *dup = malloc(len + 16);
	int k = snprintf(dup, len + 16, "%.*s%.*s %.*s", (int)head, buf, (int)(last - 1 - prev),
	                 prev, (int)(last - 1 - prev), prev);
	snprintf(dup + k, len + 16 - (size_t)k, "%s", eol);
	Prog d = {0};
	FILE *sink = fopen("/dev/null", "w");
	diag_stream(dg, sink);
	diag_source(dg, "dup.ir", dup, strlen(dup));
	CU_ASSERT_NOT_EQUAL(ir_read(dg, dup, strlen(dup), &d), 0);
	diag_stream(dg, NULL);
	diag_reset(dg);
	fclose(sink);
	prog_free(&d);
	free(dup);
	free(buf);
	prog_free(&p);
	checked_free(&c);
}

/* The link estimate is what the builders make (at least, for the few
 * kinds whose extra links depend on more than the sizes). */
static void
test_link_estimates(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct { const char *decl; TopoKind kind; bool exact; } cases[] = {
		{"topology T = torus(4, 5, 3);", TK_TORUS, true},
		{"topology T = ring(7);", TK_RING, true},
		{"topology T = mesh(3, 6);", TK_MESH, false},
		{"topology T = supermesh(4, 6, bi);", TK_SUPERMESH, false},
		{"topology T = hyperx(3, 4, 2);", TK_HYPERX, true},
		{"topology T = full(9);", TK_FULL, true},
		{"topology T = spine_leaf(spines 3, leaves 4, hosts 5);", TK_SPINE_LEAF, true},
		{"topology T = optical_ring(12, ports 6);", TK_OPTICAL_RING, false},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		Checked c;
		check_str(dg, &c, cases[i].decl);
		Prog p = {0};
		CU_ASSERT_EQUAL_FATAL(lower(dg, c.file, &p), 0);
		const Topo *t = p.topo[0];
		TopoShape shape = topo_shape_of(t);
		double est = topo_link_estimate(t->kind, &shape);
		assert_named(cases[i].exact ? est == t->nlink : est >= t->nlink, __LINE__, __FILE__,
		             "%s: estimate %.0f, built %d links", cases[i].decl, est, t->nlink);
		prog_free(&p);
		checked_free(&c);
	}
	/* symmetric: trees x order against MAX_SYMM_CHUNKS */
	FILE *sink = fopen("/dev/null", "w");
	diag_stream(dg, sink);
	CU_ASSERT_EQUAL(check_symmetric_size(dg, (Loc){1, 1}, "X", 4, MAX_SYMM_CHUNKS / 4), 0);
	CU_ASSERT_EQUAL(check_symmetric_size(dg, (Loc){1, 1}, "X", 5, MAX_SYMM_CHUNKS / 4), -1);
	/* ring(4096) allreduce fits, ring(8192) has 2 x 8191 x 8192 transfers at least */
	CU_ASSERT_EQUAL(check_sched_size(dg, (Loc){1, 1}, "X", CK_ALLREDUCE, 4096, 4096), 0);
	CU_ASSERT_EQUAL(check_sched_size(dg, (Loc){1, 1}, "X", CK_ALLREDUCE, 8192, 8192), -1);
	CU_ASSERT_EQUAL(check_sched_size(dg, (Loc){1, 1}, "X", CK_BROADCAST, 8192, 8192), 0);
	CU_ASSERT_EQUAL(check_sched_size(dg, (Loc){1, 1}, "X", CK_BROADCAST, 8193, 8193), -1);
	/* (rank, chunk) pairs alone */
	CU_ASSERT_EQUAL(check_sched_size(dg, (Loc){1, 1}, "X", CK_ALLTOALL, 4096, 16384), 0);
	CU_ASSERT_EQUAL(check_sched_size(dg, (Loc){1, 1}, "X", CK_ALLTOALL, 4096, 16385), -1);
	diag_stream(dg, NULL);
	diag_reset(dg);
	fclose(sink);
}

/* The route-hop estimate, made before any route is built, is the hops of
 * the routes built where routes are shortest paths on closed-form
 * topologies (one route per pair), and at most them elsewhere. */
static void
test_route_hop_estimate(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct { const char *text; bool exact; } cases[] = {
		{"topology R = ring(1000);\n"
		 "collective broadcast X on R { algorithm binomial_tree; root 17; }", true},
		{"topology R = ring(64);\ncollective allreduce X on R { algorithm halving_doubling; }",
		 true},
		{"topology T = torus(4, 4);\ncollective alltoall X on T { algorithm pairwise; }", true},
		{"topology T = torus(8, 8);\ncollective allreduce X on T { algorithm swing(bandwidth); }",
		 true},
		{"topology M = mesh(4, 6);\ncollective alltoall X on M { algorithm bruck; }", true},
		{"topology S = spine_leaf(spines 2, leaves 4, hosts 3);\n"
		 "collective allreduce X on S { algorithm recursive_doubling; }", false},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		Checked c;
		check_text(dg, &c, "hops.coll", cases[i].text, strlen(cases[i].text));
		CU_ASSERT_EQUAL_FATAL(c.errors, 0);
		Prog p = {0};
		CU_ASSERT_EQUAL_FATAL(lower(dg, c.file, &p), 0);
		const Sched *s = p.sched[0];
		Msg *unrouted = malloc(((size_t)s->nmsg + 1) * sizeof *unrouted);
		for (int k = 0; k < s->nmsg; k++) {
			unrouted[k] = s->msg[k];
			unrouted[k].route = -1;
		}
		size_t pairs;
		double est = route_hops_estimate(s->topo, s->rank_node, unrouted, s->nmsg, &pairs);
		double built = s->route_off[s->nroute];
		assert_named(cases[i].exact ? est == built && (int)pairs == s->nroute : est <= built,
		             __LINE__, __FILE__, "%s: estimate %.0f hops over %zu pairs, built %.0f over "
		             "%d routes", cases[i].text, est, pairs, built, s->nroute);
		free(unrouted);
		prog_free(&p);
		checked_free(&c);
	}
}

/* Every limit of base/collc_limits.h, with its value as compiled. The test
 * below reads the header's names: one missing here fails it. */
static const struct { const char *name; double value; } limit_values[] = {
#define L(n) {#n, (double)(n)}
	L(MAX_DIMS), L(MAX_NODES), L(MAX_NIC_GBPS), L(MAX_PAIR_LINKS), L(MAX_GPU_PAIRS), L(MAX_STRING), L(MAX_CHUNKS), L(MAX_INSTANCES), L(MAX_LINKS), L(MAX_CELLS),
	L(MAX_TRANSFERS), L(MAX_GROUP_ORDER), L(MAX_PERM_INTS), L(MAX_AUTO_NODES),
	L(MAX_GENERATOR_IMAGES), L(MAX_SYMM_CHUNKS), L(COLL_BYTES_PER_INPUT_BYTE),
	L(SCHED_TEXT_BYTES_PER_INPUT_BYTE), L(SIM_TEXT_BYTES_PER_INPUT_BYTE),
	L(MSCCL_XML_BYTES_PER_INPUT_BYTE), L(MAX_COLL_INPUT_BYTES), L(MAX_TEXT_INPUT_BYTES),
	L(MAX_XML_INPUT_BYTES), L(MAX_ROUTE_HOPS), L(MAX_ROUNDS), L(PACKET_BUDGET_SECONDS),
	L(MAX_LOOP_PACKET_HOPS), L(MAX_LOOP_LIVE_HOPS), L(MAX_PACKET_HOPS), L(MAX_SIM_EXPAND),
	L(MAX_STREAM_MSGS), L(SIMXML_MAX_MSGS), L(SIMXML_MAX_DEPS), L(SIMXML_EXEC_MAX_OPS), L(MAX_NESTING),
	L(MAX_SCHED_SCOPE), L(MAX_SCHED_VARS), L(MAX_SCHED_SENDS), L(MAX_SCHED_ITERS),
	L(MAX_SCHED_USES), L(MAX_PIPELINE_MSGS), L(MAX_PACK_MSGS), L(MAX_ROOT_SET_NODES), L(BRIDGE_MAX_RANKS),
	L(OPTICAL_MAX_BLOCKS), L(MAX_RACE_CLOCKS), L(MAX_CUT_WORK), L(A2A_PHASES), L(MAX_A2A_WORK), L(A2A_GAP), L(A2A_EPS0), L(A2A_REFINE), L(A2A_EPS_MIN), L(MAX_SIZE_BYTES), L(MAX_PACK_TRIES), L(MAX_PACK_COPIES), L(MAX_PACK_CAP), L(MAX_PACK_CUTS), L(MAX_PACK_CERT), L(MAX_PACK_WORK), L(PACK_LEVEL_PASSES), L(MAX_PACK_LEVEL_WORK), L(PACK_SHALLOW_PASSES), L(MAX_PACK_SHALLOW_WORK), L(PACK_POW2_TRIES), L(MAX_SIZES), L(MAX_PARAMS_FILE), L(MAX_SWEEP_VALUES), L(MAX_SWEEP_JOBS),
	L(MAX_SIM_SECONDS),
#undef L
};

static int
limit_index(const char *name, size_t len)
{
	for (size_t i = 0; i < countof(limit_values); i++)
		if (strlen(limit_values[i].name) == len && memcmp(limit_values[i].name, name, len) == 0)
			return (int)i;
	return -1;
}

/* The numbers of a table cell, parenthesised asides left out: "1,073,741,824
 * (2^30) and 134,217,728 (2^27)" gives 1073741824 and 134217728. */
static int
cell_numbers(const char *cell, const char *end, double *num, int max)
{
	int n = 0, paren = 0;
	for (const char *q = cell; q < end && n < max; q++) {
		paren += *q == '(' ? 1 : *q == ')' ? -1 : 0;
		if (paren || !(*q >= '0' && *q <= '9') || (q > cell && (q[-1] == '^' ||
		    q[-1] == '_' || (q[-1] >= 'A' && q[-1] <= 'Z'))))
			continue;
		double v = 0;
		for (; q < end && ((*q >= '0' && *q <= '9') || (*q == ',' && q[1] >= '0' &&
		       q[1] <= '9')); q++)
			if (*q != ',')
				v = v * 10 + (*q - '0');
		num[n++] = v;
	}
	return n;
}

/* docs/limits.md names every limit of base/collc_limits.h, and a row of its
 * tables that starts with limits' names gives their values as compiled
 * (MAX_SIM_SECONDS to the second). */
static void
test_limits_doc(void)
{
	char *h = slurp("base/collc_limits.h", NULL), *doc = slurp("docs/limits.md", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	/* the header's names: `NAME =` inside its enum, and its #defines but LIMIT_SHIFT */
	int seen = 0;
	for (char *l = h; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char name[64];
		if (sscanf(l, "\t%63[A-Z0-9_] =", name) != 1 &&
		    (sscanf(l, "#define %63[A-Z0-9_] ", name) != 1 || strncmp(name, "COLLC_", 6) == 0 ||
		     strcmp(name, "LIMIT_SHIFT") == 0))
			continue;
		seen++;
		assert_named(limit_index(name, strlen(name)) >= 0, __LINE__, __FILE__,
		             "%s (collc_limits.h) is not in test_limits.c's limit_values[]", name);
		char quoted[80];
		snprintf(quoted, sizeof quoted, "`%s`", name);
		assert_named(strstr(doc, quoted) != NULL, __LINE__, __FILE__,
		             "%s (collc_limits.h) is not named in docs/limits.md", name);
	}
	CU_ASSERT_EQUAL(seen, (int)countof(limit_values));
	/* rows "| `A`, `B` | value of A and value of B | ..." */
	int rows = 0;
	for (char *l = doc; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, "| `", 3) != 0)
			continue;
		char *cell = strstr(l + 1, " | "), *eol = strchr(l, '\n');
		if (!cell || !eol || cell > eol)
			continue;
		int which[8], k = 0;
		for (char *q = l + 2; q < cell && k < 8 && *q == '`';) {
			char *close = strchr(q + 1, '`');
			int i = close ? limit_index(q + 1, (size_t)(close - q - 1)) : -1;
			if (i < 0)
				break;
			which[k++] = i;
			q = close + 1;
			q += strspn(q, ", ");
		}
		if (k == 0)
			continue;
		cell += 3;
		char *cell_end = strstr(cell, " | ");
		double num[8];
		int n = cell_numbers(cell, cell_end ? cell_end : eol, num, k);
		for (int j = 0; j < k; j++)
			assert_named(j < n && num[j] == floor(limit_values[which[j]].value), __LINE__,
			             __FILE__, "docs/limits.md gives %s as %.0f; collc_limits.h has %.0f",
			             limit_values[which[j]].name, j < n ? num[j] : -1.0,
			             limit_values[which[j]].value);
		rows++;
	}
	CU_ASSERT(rows >= 20);
	free(h);
	free(doc);
}

CU_TestInfo limits_tests[] = {
	{"docs/limits.md names every limit of collc_limits.h with its value", test_limits_doc},
	{"golden limit files: exit 1 and their exact errors", test_golden_limits},
	{"a 1 KB schedule text file with 2^30 chunks", test_ir_chunks},
	{"collc run --size beyond memory", test_run_size},
	{"an input over its format's limit, refused from its size", test_input_limit},
	{"each format's input limit: the budget at its rate, under its cap", test_input_limit_arithmetic},
	{"out of memory is a located error, exit 1, no output", test_out_of_memory},
	{"a schedule text file of 200,000 ranks reads back", test_ir_read_large},
	{"link and size estimates", test_link_estimates},
	{"the route-hop estimate against the routes built", test_route_hop_estimate},
	CU_TEST_INFO_NULL,
};
