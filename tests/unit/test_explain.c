/*
 * test_explain.c: collc explain (ir/explain.c, ir/explain_html.c,
 * compiler/cmd_explain.c). The page's numbers (its JSON: the holdings at the
 * start and the cells each round changes, the messages of each round) equal
 * the text form's, round by round; a wrong schedule is shown up to its fault
 * in text, SVG and page; the limits refuse, located. In headless Chromium
 * (when /usr/bin/chromium is present; skipped with a message otherwise) each
 * page is loaded from disk with #round=0&dump, which makes the page step
 * through every round with its own controls and write back what it drew:
 * the cells and the arrows must be the text form's, with no script error.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ir.h"
#include "tests.h"

#define CHROMIUM "/usr/bin/chromium"

/* The output of a shell command (malloc'd) and its exit status. */
static char *
run(const char *cmd, int *status)
{
	FILE *p = popen(cmd, "r");
	char *out = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&out, &len);
	char buf[65536];
	size_t n;
	while (p && (n = fread(buf, 1, sizeof buf, p)) > 0)
		fwrite(buf, 1, n, mem);
	int st = p ? pclose(p) : -1;
	fclose(mem);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return out;
}

/* The suite's scratch directory; "@/" in a path or a command stands for
 * it (a few paths live at once: 8 rotating buffers). */
static char tmpdir[] = "/tmp/collc-explain-XXXXXX";

int
explain_setup(void)
{
	return mkdtemp(tmpdir) ? 0 : 1;
}

int
explain_teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	return system(cmd) != 0;
}

static const char *
X(const char *s)
{
	static char buf[8][2048];
	static int next;
	char *out = buf[next++ % 8];
	size_t n = 0;
	for (; *s && n + sizeof tmpdir + 2 < sizeof buf[0]; s++) {
		if (s[0] == '@' && s[1] == '/')
			n += (size_t)snprintf(out + n, sizeof buf[0] - n, "%s", tmpdir), s++, out[n++] = '/';
		else
			out[n++] = *s;
	}
	out[n] = 0;
	return out;
}

/* How many contributions a set of the text form names: "-" none, "*"
 * every rank, "{0,3}" two. */
static int
set_count(const char *s, int p)
{
	if (*s == '-')
		return 0;
	if (*s == '*')
		return p;
	int n = 1;
	for (; *s && *s != '}'; s++)
		n += *s == ',';
	return n;
}

/* The text form's holdings after every round (round 0: the start), as
 * counts, rank * nc + chunk per round, and the messages per round. Returns
 * the rounds read (-1 if the text is not as expected). */
typedef struct TextForm {
	int p, nc, rounds;
	int *count;  /* (rounds + 1) * p * nc */
	int *msgs;   /* rounds + 1; msgs[0] = 0 */
} TextForm;

static int
parse_state(const char **q, TextForm *T, int k)
{
	for (int r = 0; r < T->p; r++) {
		const char *line = strstr(*q, "\n  rank ");
		if (!line)
			return -1;
		line += 8;
		while (*line == ' ' || (*line >= '0' && *line <= '9'))
			line++;
		for (int c = 0; c < T->nc; c++) {
			while (*line == ' ')
				line++;
			const char *colon = strchr(line, ':');
			if (!colon || atoi(line) != c)
				return -1;
			T->count[((size_t)k * T->p + r) * T->nc + c] = set_count(colon + 1, T->p);
			line = strpbrk(colon, " \n");
		}
		*q = line;
	}
	return 0;
}

static int
text_form(const char *text, TextForm *T)
{
	const char *q = strstr(text, " ranks, "); /* "'AR': allreduce on torus(4, 4), 16 ranks, " */
	while (q && q > text && q[-1] != ' ')
		q--;
	if (!q || sscanf(q, "%d ranks, %d chunks, %d rounds", &T->p, &T->nc, &T->rounds) != 3)
		return -1;
	T->count = xcalloc((size_t)(T->rounds + 1) * T->p * T->nc, sizeof *T->count);
	T->msgs = xcalloc((size_t)T->rounds + 1, sizeof *T->msgs);
	q = strstr(q, "\nstart\n");
	if (!q || parse_state(&q, T, 0) != 0)
		return -1;
	int k = 0;
	const char *r;
	while ((r = strstr(q, "\nround ")) != NULL) {
		int round, n;
		if (sscanf(r, "\nround %d: %d message", &round, &n) != 2 || round != k + 1)
			return -1;
		k = round;
		T->msgs[k] = n;
		q = r + 1;
		for (int m = 0; m < n; m++) /* skip the messages */
			q = strchr(q, '\n') + 1;
		q--;
		if (parse_state(&q, T, k) != 0)
			return -1;
	}
	return k;
}

static void
text_free(TextForm *T)
{
	free(T->count);
	free(T->msgs);
}

/* The page's JSON: the ints of array `key` (the first after `from`),
 * nested arrays flattened. */
static int *
json_ints(const char *from, const char *key, int *n)
{
	const char *q = strstr(from, key);
	int cap = 1024, k = 0, depth = 0;
	int *v = xmalloc((size_t)cap * sizeof *v);
	if (q) {
		q += strlen(key);
		while (*q && (*q != ']' || depth > 0)) {
			depth += (*q == '[') - (*q == ']');
			char *end;
			long x = strtol(q, &end, 10);
			if (end == q) {
				q++;
				continue;
			}
			if (k == cap)
				v = xrealloc(v, (size_t)(cap *= 2) * sizeof *v);
			v[k++] = (int)x;
			q = end;
		}
	}
	*n = k;
	return v;
}

/* The page's rounds replayed from its JSON: per round the messages and the
 * cells (count * 2 + final) after it; compared with the text form. */
static void
compare_page(const char *page, const TextForm *T, int shown, const char *what)
{
	int cells = T->p * T->nc, n;
	int *st = json_ints(page, "\"init\":[", &n);
	assert_named(n == cells, __LINE__, __FILE__, "%s: the page holds %d cells at the start, "
	             "the text %d", what, n, cells);
	const char *q = strstr(page, "\"steps\":[");
	int bad = 0, k;
	for (k = 0; n == cells && k <= shown && !bad; k++) {
		if (k > 0) {
			q = strstr(q, "{\"m\":[");
			if (!q)
				break;
			int msgs = 0, depth = 0; /* [src,dst,copy,"chunks",[links]] at depth 1 */
			for (const char *c = q + 6; *c && depth >= 0; c++) {
				msgs += *c == '[' && depth == 0;
				depth += (*c == '[') - (*c == ']');
			}
			bad |= msgs != T->msgs[k];
			assert_named(msgs == T->msgs[k], __LINE__, __FILE__, "%s round %d: %d messages on "
			             "the page, %d in the text", what, k, msgs, T->msgs[k]);
			int nc2;
			int *ch = json_ints(q, "\"c\":[", &nc2);
			for (int i = 0; i + 1 < nc2; i += 2)
				st[ch[i]] = ch[i + 1];
			free(ch);
			q++;
		}
		for (int c = 0; c < cells && !bad; c++)
			if (st[c] >> 1 != T->count[(size_t)k * cells + c]) {
				assert_named(0, __LINE__, __FILE__, "%s round %d: rank %d chunk %d holds %d "
				             "contributions on the page, %d in the text", what, k, c / T->nc,
				             c % T->nc, st[c] >> 1, T->count[(size_t)k * cells + c]);
				bad = 1;
			}
	}
	assert_named(k == shown + 1, __LINE__, __FILE__, "%s: the page has %d rounds, the text %d",
	             what, k - 1, shown);
	free(st);
}

static char *
explain_cmd(const char *args, int *status)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "%s explain %s 2>/dev/null", COLLC_BIN, X(args));
	return run(cmd, status);
}

/* The page of each small case against its text form, round by round. */
static void
test_page_matches_text(void)
{
	static const struct {
		const char *file, *coll, *page;
		int status;
	} cases[] = {
		{"examples/user-ring.coll", "RING", "@/ring.html", 0},
		{"examples/sp-torus-4x4.coll", "AR", "@/sp4.html", 0},
		{"examples/user-sp-ring.coll", "SP", "@/spring.html", 0},
		{"examples/wrong/ring-extra-round.coll", "WRONG", "@/wrong.html", 1},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		char args[512];
		int status;
		snprintf(args, sizeof args, "%s --collective %s --html %s", cases[i].file, cases[i].coll,
		         cases[i].page);
		char *text = explain_cmd(args, &status);
		assert_named(status == cases[i].status, __LINE__, __FILE__, "explain %s: status %d",
		             args, status);
		TextForm T = {0};
		int rounds = text_form(text, &T);
		size_t len;
		char *page = slurp(X(cases[i].page), &len);
		assert_named(rounds > 0 && page != NULL, __LINE__, __FILE__, "explain %s: %d rounds "
		             "read from the text, page %s", args, rounds, page ? "written" : "missing");
		if (rounds > 0 && page)
			compare_page(page, &T, rounds, cases[i].file);
		free(page);
		free(text);
		text_free(&T);
	}
}

/* Builds a file in process: its Prog (the caller frees), 0 when clean. */
static int
build_file(Diag *dg, const char *path, Checked *c, Prog *p)
{
	size_t len;
	char *text = slurp(path, &len);
	memset(p, 0, sizeof *p);
	check_built(dg, c, path, text ? text : "", text ? len : 0);
	int rc = c->errors || !text ? -1 : 0;
	if (rc == 0) {
		diag_source(dg, path, text, len);
		rc = lower(dg, c->file, p);
	}
	free(text);
	return rc;
}

/* SP on the 8x8 torus: past the text command's limits, so the text form
 * is asked of the library; the page (64 ranks, 256 chunks) has every cell,
 * stays under 2 MB, and agrees with it. */
static void
test_page_8x8(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Checked c;
	Prog p;
	CU_ASSERT_FATAL(build_file(dg, "examples/sp-torus-8x8.coll", &c, &p) == 0);
	const Sched *s = p.sched[0];
	CU_ASSERT_EQUAL(explain_check_page(dg, s), 1);
	Arena a = {0};
	const Sched *x = sched_expand(dg, &a, s);
	char *text = NULL, *page = NULL;
	size_t tlen, plen;
	FILE *f = open_memstream(&text, &tlen);
	explain_text(x, f);
	fclose(f);
	f = open_memstream(&page, &plen);
	explain_html(x, s, NULL, 1 << 20, true, f);
	fclose(f);
	TextForm T = {0};
	int rounds = text_form(text, &T);
	CU_ASSERT_EQUAL(rounds, 16);
	if (rounds == 16)
		compare_page(page, &T, rounds, "sp-torus-8x8");
	assert_named(plen < 2u << 20, __LINE__, __FILE__, "the 8x8 page is %zu bytes", plen);
	/* self-contained: nothing fetched */
	CU_ASSERT(strstr(page, "src=") == NULL && strstr(page, "href=") == NULL &&
	          strstr(page, "http://") == strstr(page, "http://www.w3.org/2000/svg"));
	free(text);
	free(page);
	text_free(&T);
	arena_free(&a);
	prog_free(&p);
	checked_free(&c);
}

/* The wrong ring: text and SVG up to round 8, the send at fault marked,
 * the counterexample on stderr and in the page. */
static void
test_wrong_schedule(void)
{
	int status;
	char *text = explain_cmd("examples/wrong/ring-extra-round.coll --svg "
	                         "@/wrong.svg --html @/wrong.html",
	                         &status);
	CU_ASSERT_EQUAL(status, 1);
	CU_ASSERT(strstr(text, "\nround 8: 8 messages;") != NULL && strstr(text, "\nround 9") == NULL);
	CU_ASSERT(strstr(text, "  rank 0 -> rank 1  reduce chunk 0  (1 hop)  <- the fault\n") != NULL);
	CU_ASSERT(strstr(text, "stopped in round 8, at the fault (rank 1's chunk 0)") != NULL);
	size_t len;
	char *svg = slurp(X("@/wrong.svg"), &len);
	CU_ASSERT_FATAL(svg != NULL);
	CU_ASSERT(strstr(svg, "<title>round 8: rank 0 -> rank 1, reduce chunk 0 (the fault)</title>")
	          != NULL);
	CU_ASSERT(strstr(svg, ">round 8</text>") != NULL && strstr(svg, ">round 9</text>") == NULL);
	char *page = slurp(X("@/wrong.html"), &len);
	CU_ASSERT_FATAL(page != NULL);
	CU_ASSERT(strstr(page, "\"fault\":{\"round\":7,\"mround\":7,\"msg\":0,\"rank\":1,\"chunk\":0,") !=
	          NULL);
	CU_ASSERT(strstr(page, "it would be counted twice") != NULL);
	char cmd[512];
	snprintf(cmd, sizeof cmd, "%s explain examples/wrong/ring-extra-round.coll 2>&1 >/dev/null",
	         COLLC_BIN);
	char *err = run(cmd, &status);
	CU_ASSERT(strstr(err, "examples/wrong/ring-extra-round.coll:14:21: error: in round 8 "
	                      "(s = 7, r = 0), rank 1 adds chunk 0 from rank 0") == err);
	free(err);
	free(page);
	free(svg);
	free(text);
}

/* The SVG of the tutorial's SP ring: coloured by operation (16 chunks are
 * too many colours), one arrowhead marker per colour, wrap-around as two
 * stubs, a holdings strip per rank and round. */
static void
test_svg(void)
{
	int status;
	char *text = explain_cmd("examples/user-sp-ring.coll --svg @/sp.svg",
	                         &status);
	CU_ASSERT_EQUAL(status, 0);
	size_t len;
	char *svg = slurp(X("@/sp.svg"), &len);
	CU_ASSERT_FATAL(svg != NULL);
	CU_ASSERT(strstr(svg, "coloured by operation (16 chunks") != NULL);
	CU_ASSERT(strstr(svg, "width=\"1850\" height=\"596\"") != NULL);
	int strips = 0, wraps = 0;
	for (const char *q = svg; (q = strstr(q, "<g><title>rank ")) != NULL; q++)
		strips++;
	CU_ASSERT_EQUAL(strips, 8 * 9); /* 8 ranks, the start and 8 rounds */
	for (const char *q = svg; (q = strstr(q, "rank 7 -> rank 0")) != NULL; q++)
		wraps += strstr(q, "</g>") > strstr(q, "/><path d=");
	CU_ASSERT(wraps > 0);
	CU_ASSERT(strstr(svg, "stroke=\"#ffff") == NULL); /* no faint yellow or cyan */
	free(svg);
	free(text);
	/* a narrow timeline (2 rounds) is still as wide as its legend's longest
	 * line, 7 px a character from its left edge: no legend cut short */
	text = explain_cmd("tests/golden/user-double-count.coll --svg @/narrow.svg", &status);
	svg = slurp(X("@/narrow.svg"), &len);
	CU_ASSERT_FATAL(svg != NULL);
	const char *line = strstr(svg, ">under each rank after each round");
	const char *x = line ? strstr(line - 40, "x=\"") : NULL;
	int width = 0, left = x ? atoi(x + 3) : 0;
	CU_ASSERT_FATAL(line != NULL && x != NULL);
	const char *w = strstr(svg, "<svg ");
	CU_ASSERT(w && sscanf(strstr(w, "width=\"") + 7, "%d", &width) == 1);
	CU_ASSERT(width >= left + 7 * (int)(strstr(line, "</text>") - line - 1));
	free(svg);
	free(text);
}

/* DOT: copy 9 of SP's tree on the 8x8 torus (rooted at (0, 2)); its edges
 * over the wrap-around links are stubs (out of the grid at the child, in at
 * the parent), never a line across the grid. */
static void
test_dot_wrap(void)
{
	int status;
	char cmd[512];
	snprintf(cmd, sizeof cmd, "%s build examples/sp-torus-8x8.coll --target dot --tree-copy 9 "
	         "-o -", COLLC_BIN);
	char *dot = run(cmd, &status);
	CU_ASSERT_EQUAL(status, 0);
	int stubs = 0;
	for (const char *q = dot; (q = strstr(q, "\" -> \"tw")) != NULL; q++)
		stubs++;
	CU_ASSERT_EQUAL(stubs, 9); /* row 7 to row 0, and (0, 7) to (0, 0) */
	CU_ASSERT(strstr(dot, "\"tw0_1\" -> \"(0, 0)\";\n") != NULL);
	for (int x = 0; x < 8; x++) { /* no tree edge row 7 -> row 0 across the grid */
		char edge[64];
		snprintf(edge, sizeof edge, "\"(7, %d)\" -> \"(0, %d)\"", x, x);
		CU_ASSERT(strstr(dot, edge) == NULL);
	}
	free(dot);
}

/* Past the limits: the text form points to --html, the page refuses
 * beyond 1024 ranks, located at the collective. */
static void
test_limits(void)
{
	write_in(tmpdir, "big.coll", "topology T = torus(48, 48);\n"
	         "collective allreduce BIG on T { algorithm ring; }\n");
	int status;
	char cmd[512];
	snprintf(cmd, sizeof cmd, "%s explain %s --html %s 2>&1", COLLC_BIN, X("@/big.coll"),
	         X("@/big.html"));
	char *err = run(cmd, &status);
	CU_ASSERT_EQUAL(status, 1);
	CU_ASSERT(strstr(err, X("@/big.coll:2:33: error: explain --html shows "
	                      "schedules of at most 1024 ranks, 256 rounds")) == err);
	CU_ASSERT(strstr(err, "'BIG' has 2304 ranks") != NULL);
	CU_ASSERT(access(X("@/big.html"), F_OK) != 0);
	free(err);
	snprintf(cmd, sizeof cmd, "%s explain examples/sp-torus-8x8.coll 2>&1", COLLC_BIN);
	err = run(cmd, &status);
	CU_ASSERT(status == 1 && strstr(err, "or draw it with --html") != NULL);
	free(err);
	
}


/* The compare page's refusals, located or usage (2), nothing written; the
 * source's path on the page never absolute. */
static void
test_compare_refusals(void)
{
	write_in(tmpdir, "two.coll", "topology T = torus(4, 4);\n"
	         "topology U = torus(4, 8);\n"
	         "collective allreduce A on T { algorithm ring; }\n"
	         "collective allreduce B on U { algorithm ring; }\n"
	         "collective allreduce C on T { algorithm recursive_doubling; }\n");
	static const struct {
		const char *args, *err;
		int status;
	} cases[] = {
		{"@/two.coll --collective A,B --html @/cmp.html",
		 "@/two.coll:4:31: error: 'B' is on torus(4, 8), 'A' on torus(4, 4): a compare page "
		 "steps schedules of one topology", 1},
		{"@/two.coll --collective A,C,A --html @/cmp.html", "'A' named twice", 2},
		{"@/two.coll --collective A,C,B,A --html @/cmp.html", "at most 3 schedules", 2},
		{"@/two.coll --collective A,,C --html @/cmp.html", "an empty name", 2},
		{"@/two.coll --collective A,D --html @/cmp.html", "no schedule named 'D'", 1},
		{"@/two.coll --collective A,C --svg @/cmp.svg", "--svg draws one collective", 2},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		char cmd[1024];
		int status;
		snprintf(cmd, sizeof cmd, "%s explain %s 2>&1", COLLC_BIN, X(cases[i].args));
		char *err = run(cmd, &status);
		assert_named(status == cases[i].status && strstr(err, X(cases[i].err)) != NULL,
		             __LINE__, __FILE__, "explain %s: status %d, %s", cases[i].args, status,
		             err);
		CU_ASSERT(access(X("@/cmp.html"), F_OK) != 0 && access(X("@/cmp.svg"), F_OK) != 0);
		free(err);
	}
	/* A and C share the topology: the page, and the text of both */
	int status;
	char *text = explain_cmd("@/two.coll --collective A,C --html @/cmp.html", &status);
	CU_ASSERT(status == 0 && strstr(text, "'A': allreduce on torus(4, 4)") == text &&
	          strstr(text, "\n'C': allreduce on torus(4, 4)") != NULL);
	free(text);
	/* an absolute path shows relative to the working directory */
	char abs[PATH_MAX], args[PATH_MAX + 128];
	CU_ASSERT_FATAL(realpath("examples/torus-4x4-compare.coll", abs) != NULL);
	snprintf(args, sizeof args, "%s --collective RING,SP --html @/cmp.html", abs);
	free(explain_cmd(args, &status));
	CU_ASSERT_EQUAL(status, 0);
	size_t len;
	char *page = slurp(X("@/cmp.html"), &len);
	CU_ASSERT(page && strstr(page, "{\"file\":\"examples/torus-4x4-compare.coll\",") != NULL &&
	          strstr(page, abs) == NULL);
	free(page);
	/* and so does a wrong schedule's counterexample on its page (stderr keeps it as typed) */
	CU_ASSERT_FATAL(realpath("examples/wrong/ring-extra-round.coll", abs) != NULL);
	snprintf(args, sizeof args, "%s --html @/wrongabs.html", abs);
	free(explain_cmd(args, &status));
	CU_ASSERT_EQUAL(status, 1);
	page = slurp(X("@/wrongabs.html"), &len);
	CU_ASSERT(page && strstr(page, "\"text\":\"examples/wrong/ring-extra-round.coll:14:21: "
	                                "error: in round 8") != NULL && strstr(page, abs) == NULL);
	free(page);
}

/* ---- in the browser ---- */

/* Loads path#fragment in headless Chromium (its own profile, no network
 * needed) and returns the DOM once the page's script ran; *console holds
 * what the page printed on the console. */
static char *
browse(const char *path, const char *fragment, const char *extra, char **console)
{
	char dir[] = "/tmp/collc-chromium-XXXXXX", abs[PATH_MAX], cmd[PATH_MAX + 1024], log[64];
	if (!mkdtemp(dir) || !realpath(X(path), abs))
		return NULL;
	snprintf(log, sizeof log, "%s/stderr", dir);
	snprintf(cmd, sizeof cmd, "%s --headless --no-sandbox --disable-gpu --no-first-run "
	         "--user-data-dir=%s --enable-logging=stderr --v=0 --virtual-time-budget=10000 %s "
	         "'file://%s#%s' 2>%s", CHROMIUM, dir, X(extra), abs, fragment, log);
	int status;
	char *dom = run(cmd, &status);
	size_t len;
	char *err = slurp(log, &len);
	*console = xcalloc(1, 1);
	for (const char *q = err; q && (q = strstr(q, ":CONSOLE")) != NULL; q++) {
		const char *e = strchr(q, '\n');
		size_t n = e ? (size_t)(e - q) : strlen(q), have = strlen(*console);
		*console = xrealloc(*console, have + n + 2);
		memcpy(*console + have, q, n);
		strcpy(*console + have + n, "\n");
	}
	free(err);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return dom;
}

/* The page's #dump: per round the arrows drawn and every cell's value
 * (count * 2 + final) read back from the page, against the text form. */
static void
compare_dump(const char *dom, const TextForm *T, int shown, bool full, const char *what)
{
	const char *q = dom ? strstr(dom, "<pre id=\"dump\">") : NULL;
	assert_named(q != NULL, __LINE__, __FILE__, "%s: the page wrote no dump", what);
	int k = 0, cells = T->p * T->nc, bad = 0;
	while (q && !bad && (q = strstr(q, "round ")) != NULL && k <= shown) {
		int round, arrows, at;
		if (sscanf(q, "round %d arrows %d cells %n", &round, &arrows, &at) != 2)
			break;
		q += at;
		bad |= round != k;
		int want_arrows = full ? T->msgs[k] : 0;
		assert_named(arrows == want_arrows, __LINE__, __FILE__, "%s round %d: %d arrows drawn, "
		             "%d messages", what, k, arrows, want_arrows);
		for (int c = 0; full && c < cells && !bad; c++) {
			char *end;
			long v = strtol(q, &end, 10);
			if (end == q || v >> 1 != T->count[(size_t)k * cells + c]) {
				assert_named(0, __LINE__, __FILE__, "%s round %d: rank %d chunk %d shows %ld "
				             "contributions, the text %d", what, k, c / T->nc, c % T->nc, v >> 1,
				             T->count[(size_t)k * cells + c]);
				bad = 1;
			}
			q = end + (*end == ',');
		}
		k++;
	}
	assert_named(k == shown + 1, __LINE__, __FILE__, "%s: the page showed %d rounds, %d wanted",
	             what, k - 1, shown);
}

static void
browser_case(const char *page, const char *text_args, bool full, const char *what)
{
	int status;
	char *text = explain_cmd(text_args, &status);
	TextForm T = {0};
	int rounds = full ? text_form(text, &T) : 0;
	char *console;
	char *dom = browse(page, "round=0&dump", "--dump-dom", &console);
	CU_ASSERT_FATAL(dom != NULL);
	if (full)
		compare_dump(dom, &T, rounds, true, what);
	assert_named(strstr(dom, "<div id=\"errors\"></div>") != NULL && console[0] == 0,
	             __LINE__, __FILE__, "%s: the page reported errors: %s", what, console);
	const char *ms = strstr(dom, "data-ms=\"");
	struct stat sb;
	CU_ASSERT(stat(X(page), &sb) == 0 && sb.st_size < 2 << 20);
	printf("\n    %s: %ld bytes, drawn in %d ms (with the dump) ", what, (long)sb.st_size,
	       ms ? atoi(ms + 9) : -1);
	free(console);
	free(dom);
	free(text);
	text_free(&T);
}

static bool
have_chromium(void)
{
	if (access(CHROMIUM, X_OK) == 0)
		return true;
	printf("\n    skipped: %s is not installed (Debian package chromium) ", CHROMIUM);
	return false;
}

/* Every page stepped through in the browser against its text form. */
static void
test_browser_rounds(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	if (!have_chromium())
		return;
	browser_case("@/ring.html", "examples/user-ring.coll --collective RING",
	             true, "ring allreduce on 8");
	browser_case("@/sp4.html", "examples/sp-torus-4x4.coll", true,
	             "SP on a 4x4 torus");
	browser_case("@/wrong.html", "examples/wrong/ring-extra-round.coll", true,
	             "the wrong ring");
	/* 8x8: the text form from the library (past the command's limits) */
	Checked c;
	Prog p;
	CU_ASSERT_FATAL(build_file(dg, "examples/sp-torus-8x8.coll", &c, &p) == 0);
	Arena a = {0};
	const Sched *x = sched_expand(dg, &a, p.sched[0]);
	char *text = NULL, *page = NULL;
	size_t tlen, plen;
	FILE *f = open_memstream(&text, &tlen);
	explain_text(x, f);
	fclose(f);
	f = open_memstream(&page, &plen);
	explain_html(x, p.sched[0], NULL, 1 << 20, true, f);
	fclose(f);
	FILE *out = fopen(X("@/sp8.html"), "w");
	CU_ASSERT_FATAL(out != NULL);
	fwrite(page, 1, plen, out);
	fclose(out);
	TextForm T = {0};
	int rounds = text_form(text, &T);
	char *console;
	char *dom = browse("@/sp8.html", "round=0&dump", "--dump-dom", &console);
	compare_dump(dom, &T, rounds, true, "SP on an 8x8 torus");
	CU_ASSERT(dom && strstr(dom, "<div id=\"errors\"></div>") != NULL && console[0] == 0);
	free(dom);
	free(console);
	/* opened without the dump: the time to the first drawing, reported */
	dom = browse("@/sp8.html", "round=5", "--dump-dom", &console);
	const char *ms = dom ? strstr(dom, "data-ms=\"") : NULL;
	printf("\n    SP on an 8x8 torus (64 ranks, 256 chunks): %zu bytes, opened in %d ms ", plen,
	       ms ? atoi(ms + 9) : -1);
	CU_ASSERT(plen < 2u << 20);
	free(dom);
	free(console);
	free(text);
	free(page);
	text_free(&T);
	arena_free(&a);
	prog_free(&p);
	checked_free(&c);
}

/* #round=N opens round N: its label, its arrows, a cell's holdings; an
 * aggregated page (256 ranks) draws densities and no arrows; a screenshot
 * has the window's size. */
static void
test_browser_fragment(void)
{
	if (!have_chromium())
		return;
	int status;
	char *text = explain_cmd("examples/user-ring.coll --collective RING --html "
	                         "@/ring.html", &status);
	char *console;
	char *dom = browse("@/ring.html", "round=3", "--dump-dom", &console);
	CU_ASSERT_FATAL(dom != NULL);
	CU_ASSERT(strstr(dom, ">round 3 of 14</span>") != NULL);
	int arrows = 0;
	for (const char *q = dom; (q = strstr(q, "class=\"arrow\"")) != NULL; q++)
		arrows++;
	CU_ASSERT_EQUAL(arrows, 8);
	/* after round 3 rank 1's chunk 7 holds ranks 6, 7 and 0 and 1: {0,1,6,7} */
	CU_ASSERT(strstr(text, "  rank 1   0:{1} 1:{1} 2:{1} 3:{1} 4:{1} 5:{0,1,6,7} 6:{0,1,7} "
	                       "7:{0,1}\n") != NULL);
	/* round 3's message list: 8 lines, rank 0 sending chunk 5 to rank 1 (the text form's) */
	CU_ASSERT(strstr(text, "  rank 0 -> rank 1  reduce chunk 5  (1 hop)\n") != NULL);
	CU_ASSERT(strstr(dom, "<li>rank 0 \u2192 rank 1: reduce chunk 5 (1 hop)</li>") != NULL);
	int items = 0;
	for (const char *q = strstr(dom, "id=\"msglist\""); q && (q = strstr(q, "<li")) != NULL; q++)
		items++;
	CU_ASSERT_EQUAL(items, 8);
	CU_ASSERT(strstr(dom, "data-r=\"1\" data-c=\"5\" data-v=\"8\"") != NULL);
	CU_ASSERT(strstr(dom, "data-r=\"1\" data-c=\"7\" data-v=\"4\"") != NULL);
	CU_ASSERT(console[0] == 0);
	free(dom);
	free(console);
	free(text);
	/* SP on the 4x4 torus: the base tree (copy 0), then copy 5 under the
	 * group: 15 edges each (16 nodes), rooted elsewhere */
	free(explain_cmd("examples/sp-torus-4x4.coll --html @/sp4.html", &status));
	dom = browse("@/sp4.html", "round=0&tree=0", "--dump-dom", &console);
	CU_ASSERT_FATAL(dom != NULL);
	int edges = 0;
	for (const char *q = dom; (q = strstr(q, "class=\"tree\"")) != NULL; q++)
		edges++;
	CU_ASSERT_EQUAL(edges, 15);
	CU_ASSERT(strstr(dom, ">base tree 0</div>") != NULL);
	free(dom);
	free(console);
	dom = browse("@/sp4.html", "round=0&tree=5", "--dump-dom", &console);
	CU_ASSERT_FATAL(dom != NULL);
	edges = 0;
	for (const char *q = dom; (q = strstr(q, "class=\"tree\"")) != NULL; q++)
		edges++;
	CU_ASSERT_EQUAL(edges, 15);
	CU_ASSERT(strstr(dom, ">base tree 0, copy by group element 5</div>") != NULL);
	free(dom);
	free(console);
	/* aggregated: SP on a 16x16 torus */
	write_in(tmpdir, "sp16.coll", "topology T = torus(16, 16);\n"
	         "group G on T { translate; map (x, y) -> (-x, -y); map (x, y) -> (y, x); }\n"
	         "tree B = bfs(T, root (0, 0));\n"
	         "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n");
	text = explain_cmd("@/sp16.coll --html @/sp16.html",
	                   &status);
	CU_ASSERT_EQUAL(status, 0);
	dom = browse("@/sp16.html", "round=32", "--dump-dom", &console);
	CU_ASSERT_FATAL(dom != NULL);
	CU_ASSERT(strstr(dom, "aggregated: too many ranks or chunks") != NULL);
	CU_ASSERT(strstr(dom, "class=\"arrow\"") == NULL);
	int final = 0;
	for (const char *q = dom; (q = strstr(q, "data-v=\"100\"")) != NULL; q++)
		final++;
	CU_ASSERT_EQUAL(final, 256); /* every rank holds its whole result at the end */
	CU_ASSERT(console[0] == 0 && strstr(dom, "<div id=\"errors\"></div>") != NULL);
	free(dom);
	free(console);
	free(text);
	/* a screenshot: the page at its window's size (the layout, not pixels) */
	dom = browse("@/sp4.html", "round=2",
	             "--hide-scrollbars --window-size=900,700 --screenshot=@/sp4.png",
	             &console);
	size_t len;
	char *png = slurp(X("@/sp4.png"), &len);
	CU_ASSERT(png && len > 24 && memcmp(png + 1, "PNG", 3) == 0 && len > 20000);
	if (png && len > 24) {
		unsigned char *u = (unsigned char *)png;
		CU_ASSERT_EQUAL((u[16] << 24 | u[17] << 16 | u[18] << 8 | u[19]), 900);
		CU_ASSERT_EQUAL((u[20] << 24 | u[21] << 16 | u[22] << 8 | u[23]), 700);
	}
	free(png);
	free(dom);
	free(console);
	/* against the reference layouts (tests/golden/explain/NAME.layout, made
	 * by tests/explain_layout.py grid): where the panels, links, arrows and
	 * grid are, compared loosely, not the pixels */
	free(explain_cmd("examples/user-ring.coll --collective RING --html @/ring.html", &status));
	free(browse("@/ring.html", "round=3",
	            "--hide-scrollbars --window-size=900,700 --screenshot=@/ring.png", &console));
	free(console);
	static const char *const shots[][2] = {{"@/sp4.png", "sp4-round2"}, {"@/ring.png", "ring-round3"}};
	for (size_t i = 0; i < countof(shots); i++) {
		char cmd[PATH_MAX + 256];
		if (getenv("COLLC_UPDATE_GOLDEN")) { /* make update-goldens: new references */
			snprintf(cmd, sizeof cmd, "python3 tests/explain_layout.py grid %s "
			         ">tests/golden/explain/%s.layout", X(shots[i][0]), shots[i][1]);
			CU_ASSERT_EQUAL(system(cmd), 0);
		}
		snprintf(cmd, sizeof cmd, "python3 tests/explain_layout.py compare %s "
		         "tests/golden/explain/%s.layout >&2", X(shots[i][0]), shots[i][1]);
		assert_named(system(cmd) == 0, __LINE__, __FILE__, "the layout of %s is not %s's",
		             shots[i][0], shots[i][1]);
	}
	/* and the two differ: the comparison tells pages apart */
	char cmd[PATH_MAX + 256];
	snprintf(cmd, sizeof cmd, "python3 tests/explain_layout.py compare %s "
	         "tests/golden/explain/sp4-round2.layout >/dev/null", X("@/ring.png"));
	CU_ASSERT_NOT_EQUAL(system(cmd), 0);
}


/* The compare page of ring, recursive doubling and SP on torus(4, 4):
 * stepped through every round in the browser, each column's arrows and
 * message lines are its text form's, round by round (a column past its
 * last round draws nothing); #tree=K draws SP's tree above dimmed arrows. */
static void
test_browser_compare(void)
{
	if (!have_chromium())
		return;
	static const char *const names[] = {"RING", "RD", "SP"};
	int status, rounds = 0;
	char *texts[3];
	for (int j = 0; j < 3; j++) {
		char args[256];
		snprintf(args, sizeof args, "examples/torus-4x4-compare.coll --collective %s",
		         names[j]);
		texts[j] = explain_cmd(args, &status);
		CU_ASSERT_EQUAL(status, 0);
		int r = 0;
		CU_ASSERT(sscanf(strstr(texts[j], " chunks, ") + 9, "%d rounds", &r) == 1);
		rounds = r > rounds ? r : rounds;
	}
	free(explain_cmd("examples/torus-4x4-compare.coll --collective RING,RD,SP --html "
	                 "@/cmp.html", &status));
	CU_ASSERT_EQUAL_FATAL(status, 0);
	char *console;
	char *dom = browse("@/cmp.html", "round=0&dump", "--dump-dom", &console);
	CU_ASSERT_FATAL(dom != NULL);
	assert_named(strstr(dom, "<div id=\"errors\"></div>") != NULL && console[0] == 0, __LINE__,
	             __FILE__, "the compare page reported errors: %s", console);
	const char *q = strstr(dom, "<pre id=\"dump\">");
	CU_ASSERT_FATAL(q != NULL);
	int checked = 0;
	for (int k = 0; k <= rounds; k++)
		for (int j = 0; j < 3; j++) {
			char head[64];
			snprintf(head, sizeof head, "round %d %s arrows ", k, names[j]);
			const char *h = strstr(q, head);
			int arrows = -1, lines = -1;
			if (!h || sscanf(h + strlen(head), "%d lines %d", &arrows, &lines) != 2) {
				assert_named(0, __LINE__, __FILE__, "no dump of round %d of %s", k, names[j]);
				continue;
			}
			/* the text form's round k: its count, then its lines */
			char rh[64];
			snprintf(rh, sizeof rh, "\nround %d: ", k);
			const char *t = k ? strstr(texts[j], rh) : NULL;
			int want = t ? atoi(t + strlen(rh)) : 0;
			assert_named(arrows == want && lines == want, __LINE__, __FILE__, "round %d of %s: "
			             "%d arrows and %d lines drawn, %d messages", k, names[j], arrows,
			             lines, want);
			const char *pl = strchr(h, '\n') + 1, *tl = t ? strchr(t + 1, '\n') + 1 : NULL;
			for (int m = 0; m < want && m < lines; m++) { /* "  rank 0 -&gt; rank 1  ..." */
				const char *pe = strchr(pl, '\n'), *te = strchr(tl, '\n');
				char page[256], text[256];
				snprintf(text, sizeof text, "%.*s", (int)(te - tl - 2), tl + 2);
				size_t n = 0;
				for (const char *c = pl + 2; c < pe && n + 1 < sizeof page; c++)
					if (strncmp(c, "&gt;", 4) == 0)
						page[n++] = '>', c += 3;
					else
						page[n++] = *c;
				page[n] = 0;
				assert_named(strcmp(page, text) == 0, __LINE__, __FILE__, "round %d of %s, "
				             "message %d: the page says '%s', the text '%s'", k, names[j], m,
				             page, text);
				checked++;
				pl = pe + 1, tl = te + 1;
			}
		}
	printf("\n    %d rounds, %d message lines against the text forms ", rounds, checked);
	CU_ASSERT(checked == 480 + 64 + 512); /* every message of the three */
	free(dom);
	free(console);
	/* #tree=5 on round 3: SP's copy 5 (15 edges) over its dimmed arrows */
	dom = browse("@/cmp.html", "round=3&tree=5", "--dump-dom", &console);
	CU_ASSERT_FATAL(dom != NULL);
	int edges = 0;
	for (const char *e = dom; (e = strstr(e, "class=\"tree\"")) != NULL; e++)
		edges++;
	CU_ASSERT_EQUAL(edges, 15);
	CU_ASSERT(strstr(dom, "class=\"topo treeon\"") != NULL);
	CU_ASSERT(strstr(dom, ">round 3 of 30</span>") != NULL);
	CU_ASSERT(strstr(dom, ">Done after round 4 (of 30)</div>") == NULL); /* RD's 3 of 4 */
	CU_ASSERT(console[0] == 0);
	free(dom);
	free(console);
	for (int j = 0; j < 3; j++)
		free(texts[j]);
}

/* Each topology layout (tiers, a graph on a circle, a mesh, HyperX, a
 * SuperMesh, a 3D torus, full, an optical ring) opens with no script error. */
static void
test_browser_kinds(void)
{
	if (!have_chromium())
		return;
	static const char *const cases[][2] = {
		{"examples/spine-leaf.coll", "SP"}, {"examples/graph-petersen.coll", "SP"},
		{"examples/mesh-tto.coll", "TTO"}, {"examples/supermesh-bi-6x6.coll", "AG"},
		{"examples/sp-torus-3d-4x4x4.coll", "SP"}, {"examples/full-affine-group.coll", "SP"},
		{"examples/bridge-optical.coll", "A2A"},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		char args[512];
		int status;
		snprintf(args, sizeof args, "%s --collective %s --html @/kind.html",
		         cases[i][0], cases[i][1]);
		free(explain_cmd(args, &status));
		assert_named(status == 0, __LINE__, __FILE__, "explain %s: status %d", args, status);
		char *console;
		char *dom = browse("@/kind.html", "round=2", "--dump-dom", &console);
		assert_named(dom && strstr(dom, "<div id=\"errors\"></div>") && console[0] == 0 &&
		             strstr(dom, ">round 2 of "), __LINE__, __FILE__, "%s in the browser: %s",
		             cases[i][0], console);
		free(dom);
		free(console);
	}
	
}

CU_TestInfo explain_tests[] = {
	{"the page's numbers are the text form's, round by round", test_page_matches_text},
	{"SP on an 8x8 torus: every cell, under 2 MB", test_page_8x8},
	{"a wrong schedule up to its fault: text, SVG, page", test_wrong_schedule},
	{"the SVG timeline: by operation, stubs, holdings", test_svg},
	{"limits: located refusals", test_limits},
	{"dot: tree edges over wrap-around links as stubs", test_dot_wrap},
	{"compare page: refusals located, the path relative", test_compare_refusals},
	{"chromium: every round of every page against the text", test_browser_rounds},
	{"chromium: #round=N, #tree=K, an aggregated page, a screenshot", test_browser_fragment},
	{"chromium: every layout opens without a script error", test_browser_kinds},
	{"chromium: the compare page, every round of ring, RD and SP against the text",
	 test_browser_compare},
	CU_TEST_INFO_NULL,
};
