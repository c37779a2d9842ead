/*
 * test_usersched.c: user schedules (grammar/schedule.c, ir/usersched.c).
 * The examples written as user schedules equal the library's schedules
 * message for message and simulate to the same time; composition (use,
 * together) builds what it says; the work estimate refuses large loop
 * nests before expanding them; a 1024-rank ring is expanded exactly.
 * The teacher's counterexamples are golden files (tests/golden/user-*).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "to_sim.h"
#include "tests.h"

/* Lowers text; the Prog (caller frees) and the diagnostics (malloc'd). */
static int
build(Diag *dg, const char *text, Checked *c, Prog *p)
{
	memset(p, 0, sizeof *p);
	check_text(dg, c, "t.coll", text, strlen(text));
	if (c->errors)
		return -1;
	size_t dlen;
	free(c->diag);
	FILE *mem = open_memstream(&c->diag, &dlen);
	diag_stream(dg, mem);
	diag_reset(dg);
	diag_source(dg, "t.coll", text, strlen(text));
	int rc = lower(dg, c->file, p);
	for (int i = 0; rc == 0 && i < p->nsched; i++)
		rc = verify(dg, p->sched[i]);
	c->errors = nerrors(dg);
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
	return rc;
}

static const Sched *
named(const Prog *p, const char *name)
{
	for (int i = 0; i < p->nsched; i++)
		if (strcmp(p->sched[i]->name, name) == 0)
			return p->sched[i];
	return NULL;
}

static int
int_order(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Same rounds, and the same messages: round, ends, operation, links and
 * chunk set. Both are sorted by (round, src, dst, route, op) by sched_end;
 * route ids differ between schedules, so links are compared. */
static bool
same_messages(const Sched *a, const Sched *b, char *why, size_t len)
{
	if (a->nround != b->nround || a->nmsg != b->nmsg || a->nchunk != b->nchunk) {
		snprintf(why, len, "rounds %d/%d, messages %d/%d, chunks %d/%d", a->nround, b->nround,
		         a->nmsg, b->nmsg, a->nchunk, b->nchunk);
		return false;
	}
	for (int i = 0; i < a->nmsg; i++) {
		const Msg *x = &a->msg[i], *y = &b->msg[i];
		int lx = sched_route_len(a, x->route), ly = sched_route_len(b, y->route);
		bool ok = x->round == y->round && x->src == y->src && x->dst == y->dst &&
		          x->op == y->op && x->n == y->n && lx == ly &&
		          memcmp(a->route_link + a->route_off[x->route],
		                 b->route_link + b->route_off[y->route], (size_t)lx * sizeof(int)) == 0;
		if (ok) {
			int *cx = malloc((size_t)x->n * sizeof *cx), *cy = malloc((size_t)x->n * sizeof *cy);
			memcpy(cx, a->chunks + x->first, (size_t)x->n * sizeof *cx);
			memcpy(cy, b->chunks + y->first, (size_t)x->n * sizeof *cy);
			qsort(cx, (size_t)x->n, sizeof *cx, int_order);
			qsort(cy, (size_t)x->n, sizeof *cy, int_order);
			ok = memcmp(cx, cy, (size_t)x->n * sizeof *cx) == 0;
			free(cx);
			free(cy);
		}
		if (!ok) {
			snprintf(why, len, "message %d differs: round %d, %d -> %d, %d chunks against round "
			         "%d, %d -> %d, %d chunks", i, x->round + 1, x->src, x->dst, x->n,
			         y->round + 1, y->src, y->dst, y->n);
			return false;
		}
	}
	return true;
}

static double
sim_time(Diag *dg, const Sched *s)
{
	Arena a = {0};
	SimNet net;
	const Sched *one[1] = {s};
	double t = -1;
	if (sim_from_scheds(dg, &a, one, 1, &net) == 0) {
		SimOpts o = {.mode = SIM_PACKET, .sync = SIM_ROUNDS};
		SimResult r;
		char err[256];
		if (sim_run(&a, &net, 0, 1 << 20, &o, &r, err, sizeof err) == 0)
			t = r.time_s;
	}
	arena_free(&a);
	return t;
}

/* Each example's user collective against the library algorithm it restates. */
static void
test_examples_equal_library(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct { const char *file, *user, *kind, *alg, *extra, *pre; } cases[] = {
		{"examples/user-ring.coll", "RING", "allreduce", "ring", "", ""},
		{"examples/user-ring-bidirectional.coll", "BIRING", "allreduce", "ring(ports 2)", "", ""},
		{"examples/user-recursive-doubling.coll", "RD", "allreduce", "recursive_doubling", "", ""},
		{"examples/user-recursive-doubling.coll", "AG", "allgather", "recursive_doubling", "", ""},
		{"examples/user-bruck.coll", "BRUCK", "allreduce", "bruck", "", ""},
		{"examples/user-swing-2d.coll", "SWING", "allreduce", "swing", " chunks 64;", ""},
		{"examples/user-sp-ring.coll", "SP", "allreduce", "symmetric(trees LIBRARY_TREE, group G)",
		 "", "tree LIBRARY_TREE = bfs(R, root 0);\n"},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		char *text = slurp(cases[i].file, NULL);
		CU_ASSERT_FATAL(text != NULL);
		const char *topo = strstr(text, "topology ") + 9;
		char *both = NULL;
		size_t len;
		FILE *f = open_memstream(&both, &len);
		fprintf(f, "%s\n%scollective %s LIBRARY_%zu on %.*s { algorithm %s;%s }\n", text,
		        cases[i].pre, cases[i].kind, i, (int)strcspn(topo, " "), topo, cases[i].alg,
		        cases[i].extra);
		fclose(f);
		Checked c;
		Prog p;
		int rc = build(dg, both, &c, &p);
		assert_named(rc == 0, __LINE__, __FILE__, "%s builds: %s", cases[i].file, c.diag);
		char lib[32], why[256] = "";
		snprintf(lib, sizeof lib, "LIBRARY_%zu", i);
		const Sched *u = rc == 0 ? named(&p, cases[i].user) : NULL, *l = named(&p, lib);
		Arena ex = {0};
		if (u && l && u->base && l->base) { /* symmetric: both written out in full */
			CU_ASSERT(u->group == l->group && u->ntree == l->ntree);
			u = sched_expand(dg, &ex, u);
			l = sched_expand(dg, &ex, l);
		}
		bool same = u && l && !u->base && !l->base && same_messages(u, l, why, sizeof why);
		assert_named(same, __LINE__, __FILE__, "%s '%s' equals %s message for message: %s",
		             cases[i].file, cases[i].user, cases[i].alg, why);
		if (same) {
			double tu = sim_time(dg, u), tl = sim_time(dg, l);
			assert_named(tu > 0 && tu == tl, __LINE__, __FILE__, "%s simulates as %s does: "
			             "%g s against %g s", cases[i].user, cases[i].alg, tu, tl);
		}
		arena_free(&ex);
		prog_free(&p);
		checked_free(&c);
		free(both);
		free(text);
	}
}

/* Hierarchical allreduce by composition: a ring per row at once, then a
 * ring per column at once (contention-free: rows and columns use their own
 * links); and reduce-scatter then allgather by two algorithms. Both
 * verify, with the rounds composition promises. */
static void
test_composition(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	Prog p;
	int rc = build(dg, "topology T = torus(4, 4);\n"
	               "collective allreduce H on T {\n"
	               "    chunks 4;\n"
	               "    schedule contention_free {\n"
	               "        together { for i in 0..3 { use ring for allreduce ranks 4 * i..4 * i + 3; } }\n"
	               "        together { for j in 0..3 { use ring for allreduce ranks j, j + 4, j + 8, j + 12; } }\n"
	               "    }\n"
	               "}\n"
	               "collective allreduce RSAG on T {\n"
	               "    schedule {\n"
	               "        use ring for reduce_scatter;\n"
	               "        use recursive_doubling for allgather;\n"
	               "    }\n"
	               "}\n", &c, &p);
	assert_named(rc == 0, __LINE__, __FILE__, "composition builds and verifies: %s", c.diag);
	const Sched *h = named(&p, "H"), *r = named(&p, "RSAG");
	/* a ring allreduce of 4 takes 6 rounds; rows at once, then columns at once */
	CU_ASSERT(h && h->nround == 12);
	CU_ASSERT(h && h->nmsg == 12 * 16);
	/* ring reduce_scatter on 16: 15 rounds; recursive doubling allgather: 4 */
	CU_ASSERT(r && r->nround == 19);
	prog_free(&p);
	checked_free(&c);
}

/* The estimate refuses before expanding; small loops with empty bodies
 * still count; the limit is named with the estimate. */
static void
test_estimate(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	Prog p;
	build(dg, "topology R = ring(1024);\n"
	      "collective allreduce A on R {\n"
	      "    schedule {\n"
	      "        for s in 0..1000000 { round { for r in 0..p - 1 { send 0 from r to (r + 1) mod p reduce; } } }\n"
	      "    }\n"
	      "}\n", &c, &p);
	ASSERT_DIAG(&c, "t.coll:4:9: error: this schedule would send about 1024001024 chunk "
	                "transfers; the limit is 4194304 (estimated before expanding its loops)");
	prog_free(&p);
	checked_free(&c);
	build(dg, "topology R = ring(4);\n"
	      "collective allreduce A on R {\n"
	      "    schedule {\n"
	      "        for i in 0..1000000000 { for j in 0..i { } }\n"
	      "    }\n"
	      "}\n", &c, &p);
	ASSERT_DIAG(&c, "would run about");
	prog_free(&p);
	checked_free(&c);
	/* pow by squaring: a huge exponent of 1 or -1 is quick; uses are counted */
	int rc = build(dg, "topology R = ring(4);\n"
	               "collective allreduce A on R {\n"
	               "    schedule {\n"
	               "        let x = pow(1, 1000000000000000) + pow(-1, 999999999999) + pow(2, 62) / pow(2, 61);\n"
	               "        round { for r in 0..p - 1 { send 0..nchunks - 1 from r to xor(r, x - 1) reduce; } }\n"
	               "        round { for r in 0..p - 1 { send 0..nchunks - 1 from r to xor(r, 2) reduce; } }\n"
	               "    }\n"
	               "}\n", &c, &p);
	assert_named(rc == 0, __LINE__, __FILE__, "pow: %s", c.diag);
	prog_free(&p);
	checked_free(&c);
	build(dg, "topology R = ring(4);\n"
	      "collective allreduce A on R {\n"
	      "    schedule { for i in 0..100000000 { use ring for allreduce ranks 0..1; } }\n"
	      "}\n", &c, &p);
	ASSERT_DIAG(&c, "t.coll:3:16: error: this schedule would send about 200000002 chunk transfers");
	prog_free(&p);
	checked_free(&c);
}

/* The ring allreduce as a user schedule: p - 1 rounds reducing around the
 * ring, then p - 1 passing the sums on (the text of a collective's body). */
#define RING_ALLREDUCE_SCHEDULE                                                   \
	"    schedule {\n"                                                             \
	"        for s in 0..p - 2 { round { for r in 0..p - 1 {\n"                    \
	"            send (r - s - 1) mod p from r to (r + 1) mod p reduce; } } }\n"   \
	"        for s in 0..p - 2 { round { for r in 0..p - 1 {\n"                    \
	"            send (r - s) mod p from r to (r + 1) mod p copy; } } }\n"         \
	"    }\n"

/* The 1024-rank ring allreduce (2046 rounds) is expanded exactly: every
 * rank sends once per round, and it verifies (by fingerprints). */
static void
test_large_ring(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	Prog p;
	int rc = build(dg, "topology R = ring(1024);\n"
	               "collective allreduce A on R {\n" RING_ALLREDUCE_SCHEDULE "}\n", &c, &p);
	assert_named(rc == 0, __LINE__, __FILE__, "1024-rank ring: %s", c.diag);
	CU_ASSERT(rc == 0 && p.sched[0]->nround == 2046 && p.sched[0]->nmsg == 2046 * 1024);
	prog_free(&p);
	checked_free(&c);
}

/* fmt prints every statement form canonically, and its output parses to
 * the same tree and prints the same again. */
static void
test_fmt_roundtrip(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	const char *text =
		"topology T = torus(4, 4);\n"
		"collective allgather A on T {\n"
		"    schedule contention_free {   // a comment\n"
		"        let h = p/2;\n"
		"        for k in 0 .. log2(p)-1 { round {\n"
		"            for r in 0..p-1 {\n"
		"                if bit(r, k) == 0 and not (r < 0) { send r from r to xor(r, pow(2, k)) copy over link; }\n"
		"                else if r >= h or r != -1 { send owner(r) from r to xor(r, pow(2,k)) copy; }\n"
		"                else { send r mod 3..max(r, 1) from r to neighbor(r, 0, -1) copy over link 0; }\n"
		"            }\n"
		"        } }\n"
		"        together { use ring(ports 2) for allgather ranks 0..3, 7; }\n"
		"    }\n"
		"}\n";
	Checked a, b;
	check_str(dg, &a, text);
	CU_ASSERT_EQUAL_FATAL(a.errors, 0);
	char *once = fmt_string(a.file);
	check_str(dg, &b, once);
	CU_ASSERT_EQUAL(b.errors, 0);
	char *twice = fmt_string(b.file);
	CU_ASSERT(ast_equal(a.file, b.file));
	CU_ASSERT_STRING_EQUAL(once, twice);
	CU_ASSERT(strstr(once, "        for k in 0..log2(p) - 1 {\n            round {\n") != NULL);
	CU_ASSERT(strstr(once, "} else if r >= h or r != -1 {\n") != NULL);
	CU_ASSERT(strstr(once, "copy over link 0;\n") != NULL);
	CU_ASSERT(strstr(once, "schedule contention_free { // a comment\n") != NULL);
	free(once);
	free(twice);
	checked_free(&a);
	checked_free(&b);
}

/* explain: the state after each round on the exact model, the busiest
 * links, a timeline with an arrow per message, and the size limit. */
static void
test_explain(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	Prog p;
	int rc;
	rc = build(dg, "topology R = ring(4);\n"
	           "collective allreduce A on R {\n" RING_ALLREDUCE_SCHEDULE "}\n"
	           "topology T = torus(8, 8);\n"
	           "collective allreduce BIG on T { algorithm ring; }\n"
	           "topology Q = ring(2);\n"
	           "collective allreduce PAIR on Q {\n"
	           "    chunks 5;\n"
	           "    schedule {\n"
	           "        round { send 1..3 from 0 to 1 reduce; send 0 from 1 to 0 reduce;\n"
	           "                send 4 from 1 to 0 reduce; }\n"
	           "        round { send 1..3 from 1 to 0 copy; send 0 from 0 to 1 copy;\n"
	           "                send 4 from 0 to 1 copy; }\n"
	           "    }\n"
	           "}\n", &c, &p);
	CU_ASSERT_FATAL(rc == 0);
	char *text = NULL, *svg = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	explain_text(p.sched[0], f);
	fclose(f);
	/* after round 1, rank 1's chunk 3 carries ranks 0 and 1; after round 3
	 * rank 0 holds chunk 0 complete; at the end every chunk everywhere */
	CU_ASSERT(strstr(text, "round 1: 4 messages; busiest links 0 -> 1, 1 -> 2, 2 -> 3, ... "
	                       "(1 chunk each on 4 links)\n") != NULL);
	CU_ASSERT(strstr(text, "  rank 1   0:{1} 1:{1} 2:{1} 3:{0,1}\n") != NULL);
	CU_ASSERT(strstr(text, "  rank 0   0:* 1:{0,2,3} 2:{0,3} 3:{0}\n") != NULL);
	CU_ASSERT(strstr(text, "  rank 3   0:* 1:* 2:* 3:*\n\nbusiest links over all rounds: "
	                       "0 -> 1, 1 -> 2, 2 -> 3, ... (6 chunks each on 4 links)\n") != NULL);
	CU_ASSERT(strstr(text, "  rank 2 -> rank 3  copy   chunk 2  (1 hop)\n") != NULL);
	f = open_memstream(&svg, &len);
	explain_svg(p.sched[0], f);
	fclose(f);
	int arrows = 0;
	for (const char *q = svg; (q = strstr(q, "marker-end=")) != NULL; q++)
		arrows++;
	CU_ASSERT_EQUAL(arrows, p.sched[0]->nmsg);
	CU_ASSERT(strstr(svg, "<title>round 6: rank 3 -> rank 0, copy chunk 1</title>") != NULL);
	/* rounds left to right, 146 pt each (a holdings strip of 4 chunks of
	 * 9 pt and 110 pt for the arrows) from x = 94: the last rule at 970 */
	CU_ASSERT(strstr(svg, "<line x1=\"970\" y1=\"72\" x2=\"970\" y2=\"272\" stroke=\"#bbbbbb\"/>\n")
	          != NULL);
	CU_ASSERT(strstr(svg, "<text x=\"897\" y=\"62\" font-size=\"12\" text-anchor=\"middle\">round "
	                      "6</text>\n") != NULL);
	CU_ASSERT(strncmp(svg, "<?xml", 5) == 0 && strstr(svg, "</svg>\n") != NULL);
	/* a message of several chunks lists them as runs */
	free(text);
	f = open_memstream(&text, &len);
	explain_text(p.sched[2], f);
	fclose(f);
	CU_ASSERT(strstr(text, "  rank 0 -> rank 1  reduce chunks 1-3  (1 hop)\n") != NULL);
	CU_ASSERT(strstr(text, "  rank 1 -> rank 0  copy   chunks 1-3  (1 hop)\n") != NULL);
	/* 64 ranks: refused at the collective, naming the limit */
	size_t dlen;
	char *diag = NULL;
	FILE *mem = open_memstream(&diag, &dlen);
	diag_stream(dg, mem);
	CU_ASSERT_EQUAL(explain_check_size(dg, p.sched[1]), -1);
	CU_ASSERT_EQUAL(explain_check_size(dg, p.sched[0]), 0);
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
	CU_ASSERT(strstr(diag, "explain shows schedules of at most 16 ranks, 64 chunks and 256 "
	                       "rounds; 'BIG' has 64 ranks") != NULL);
	free(diag);
	free(text);
	free(svg);
	prog_free(&p);
	checked_free(&c);
	/* the command: a timeline written whole; a large case refused, located */
	char cmd[512];
	snprintf(cmd, sizeof cmd, "%s explain examples/user-ring.coll --collective RING --svg "
	         "/tmp/collc-explain-test.svg >/dev/null && grep -c 'marker-end=' "
	         "/tmp/collc-explain-test.svg && rm -f /tmp/collc-explain-test.svg", COLLC_BIN);
	FILE *out = popen(cmd, "r");
	int lines = 0;
	CU_ASSERT(out && fscanf(out, "%d", &lines) == 1 && pclose(out) == 0);
	CU_ASSERT_EQUAL(lines, 112); /* an arrow per message, one line each */
	snprintf(cmd, sizeof cmd, "%s explain examples/sp-torus-8x8.coll 2>&1", COLLC_BIN);
	out = popen(cmd, "r");
	char msg[512] = "";
	CU_ASSERT(out && fgets(msg, sizeof msg, out) != NULL);
	char rest[512];
	while (out && fgets(rest, sizeof rest, out)) /* read it all: no SIGPIPE */
		;
	int status = out ? pclose(out) : -1;
	assert_named(WIFEXITED(status) && WEXITSTATUS(status) == 1, __LINE__, __FILE__, "explain of 64 ranks exits 1: status %d, %s", status, msg);
	CU_ASSERT(strstr(msg, "examples/sp-torus-8x8.coll:") == msg &&
	          strstr(msg, ": error: explain shows schedules of at most 16 ranks") != NULL);
}

/* `collc run` executes every user example with real data and checks it. */
static void
test_examples_run(void)
{
	static const char *const files[] = {
		"examples/user-ring.coll", "examples/user-ring-bidirectional.coll",
		"examples/user-recursive-doubling.coll", "examples/user-bruck.coll",
		"examples/user-swing-2d.coll", "examples/user-sp-ring.coll",
	};
	for (size_t i = 0; i < countof(files); i++) {
		char cmd[512], line[512];
		snprintf(cmd, sizeof cmd, "%s run %s --size 48KiB 2>&1", COLLC_BIN, files[i]);
		FILE *out = popen(cmd, "r");
		int verified = 0, lines = 0;
		/* the table's rows: the file's name, the header and the note under
		 * the table (its two lines) are not runs */
		while (out && fgets(line, sizeof line, out)) {
			if (line[0] == '#' || strncmp(line, "collective ", 11) == 0 ||
			    strncmp(line, "time, algbw and busbw: ", 23) == 0 ||
			    strncmp(line, "results, not a GPU's", 20) == 0)
				continue;
			lines++;
			verified += strstr(line, "  verified\n") != NULL;
		}
		int status = out ? pclose(out) : -1;
		assert_named(WIFEXITED(status) && WEXITSTATUS(status) == 0 && verified == lines &&
		             lines > 0, __LINE__, __FILE__, "collc run %s: status %d, %d of %d lines "
		             "verified", files[i], status, verified, lines);
	}
}

/* test_other_kinds' collectives, built alone and with a wrong one */
#define OTHER_KINDS                                                                          \
	"topology T = torus(2, 4);\n"                                                            \
	"collective broadcast B on T {\n"                                                        \
	"    root 5;\n"                                                                          \
	"    schedule { for k in 0..log2(p) - 1 { round { for v in 0..pow(2, k) - 1 {\n"         \
	"        send 0 from (root + v) mod p to (root + v + pow(2, k)) mod p copy; } } } }\n"   \
	"}\n"                                                                                    \
	"collective alltoall A on T {\n"                                                         \
	"    schedule { for k in 1..p - 1 { round { for r in 0..p - 1 {\n"                       \
	"        send r * p + xor(r, k) from r to xor(r, k) copy; } } } }\n"                     \
	"}\n"                                                                                    \
	"collective alltoall LIB on T { algorithm pairwise; }\n"

/* Rooted and alltoall kinds: a binomial broadcast from a root that is not
 * rank 0, and pairwise exchange, equal to the library's pairwise. */
static void
test_other_kinds(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	Prog p;
	/* a broadcast whose rank 0 sends what it does not hold yet is refused */
	int rc = build(dg, OTHER_KINDS
	               "collective broadcast WRONG on T {\n"
	               "    root 5;\n"
	               "    schedule { round { send 0 from 0 to 1 copy; } }\n"
	               "}\n", &c, &p);
	CU_ASSERT(rc != 0);
	ASSERT_DIAG(&c, "t.coll:14:24: error: in round 1, rank 0 sends chunk 0 to rank 1, but it "
	                "holds nothing of chunk 0 yet");
	prog_free(&p);
	checked_free(&c);
	rc = build(dg, OTHER_KINDS, &c, &p);
	assert_named(rc == 0, __LINE__, __FILE__, "broadcast and alltoall: %s", c.diag);
	char why[256] = "";
	CU_ASSERT(rc == 0 && p.sched[0]->root == 5 && p.sched[0]->nround == 3);
	assert_named(rc == 0 && same_messages(p.sched[1], p.sched[2], why, sizeof why), __LINE__,
	             __FILE__, "alltoall equals pairwise: %s", why);
	prog_free(&p);
	checked_free(&c);
}

/* `use` passes an algorithm's options as `algorithm` does: bound to the
 * registry's PARAMS and checked there (ranges, labels, words), trees not. */
static void
test_use_options(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	check_str(dg, &c, "topology T = ring(8);\n"
	              "collective allgather A on T {\n"
	              "    schedule {\n"
	              "        use ring(ports 3) for allgather;\n"
	              "        use s_bruck(reconfigs 1) for allgather;\n"
	              "        use swing(sideways) for allgather;\n"
	              "        use pipelined_trees(trees X) for allgather;\n"
	              "        use ring(halfway) for allgather;\n"
	              "    }\n"
	              "}\n");
	CU_ASSERT_EQUAL(c.errors, 4);
	ASSERT_DIAG(&c, ":4:24: error: the ports of ring must be at most 2, got 3");
	ASSERT_DIAG(&c, ":5:21: error: s_bruck has no argument 'reconfigs'");
	ASSERT_DIAG(&c, ":6:19: error: swing takes 'bandwidth' or 'latency' here");
	ASSERT_DIAG(&c, ":7:29: error: use passes an algorithm's numbers and words; its 'trees'");
	checked_free(&c);
}

CU_TestInfo usersched_tests[] = {
	{"use: an algorithm's options checked by its registry entry", test_use_options},
	{"broadcast from a root, alltoall equal to pairwise", test_other_kinds},
	{"collc run executes the user examples", test_examples_run},
	{"explain: round by round, busiest links, timeline, limit", test_explain},
	{"examples equal the library message for message", test_examples_equal_library},
	{"composition: use and together", test_composition},
	{"the work estimate refuses large loop nests", test_estimate},
	{"a 1024-rank ring of 2046 rounds", test_large_ring},
	{"fmt round-trips every statement", test_fmt_roundtrip},
	CU_TEST_INFO_NULL,
};
