/*
 * test_docs.c: the documentation as a user reads it.
 *
 * Every command a page shows runs as printed and prints what the page shows
 * (docs/testing.md, "The docs' commands"). A command is a "$ " line of a
 * ```console block (a line ending in a backslash goes on), run from the
 * repository root after `make` with bin/ first on the PATH and nothing else
 * in the environment (the convention the top of each page states); the
 * lines after it, up to the next "$ " or the block's end, are everything it
 * prints (stdout and stderr), compared line by line. A line "..." stands
 * for any number of lines; a field "~TEXT" for any one field (a time of a
 * real run), allowed only for the commands docs/testing.md's table lists
 * with its reason. A command whose output shows an error (or a line of
 * collc's own, "collc: ...", but for its notes) must fail, any other must
 * succeed. A ```coll block whose first line is "// build/NAME.coll"
 * is that file. Each page runs in a scratch copy of the root (links to the
 * repository's files, its own bin/ and empty build/), so nothing it writes
 * reaches the checkout, which git status must find as it was. The commands of the pages that run MPI programs or
 * sweeps, and the few others of seconds, are the slow tier's (slow_docs,
 * slow_cmds). No link leaves the repository and nothing cites ../shared.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <ctype.h>
#include <dirent.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "registry.h"
#include "tests.h"

#ifndef COLLC_BIN
#define COLLC_BIN "bin/collc"
#endif
/* how root runs a command as the unprivileged user (nobody) */
#define AS_USER "setpriv --reuid=65534 --regid=65534 --clear-groups --"

/* What each page with commands says before its first one (README.md says it
 * in its set-up section). */
#define CONVENTION "run from the repository root after `make`, with `export PATH=$PWD/bin:$PATH`"

/* The slow tier's commands: every one of the pages that run MPI programs
 * (mpirun), sweeps and msccl.md's 1024-GPU build (25, 4 and 16 s at load
 * average 9), and the commands of other pages that took over 1.5 s there
 * (reproduce.md's search of a grid of models 72 s).
 * None of the latter reads what an earlier command of its page wrote (the
 * quick tier does not run them, the slow tier runs nothing else there). */
static const char *const slow_docs[] = {"docs/mpi.md", "docs/msccl.md", "docs/sweep.md", NULL};
static const struct {
	const char *page, *prefix;
} slow_cmds[] = {
	{"docs/cli.md", "collc tune examples/torus-8x8-compare.coll --collective SP --sizes 1KiB,32KiB"},
	{"docs/bridge.md", "sh examples/bridge-sweep.sh"},
	{"docs/sim.md", "collc sim build/ring4096.coll"},
	{"docs/reproduce.md", "python3 tests/ev_search.py"},
	{NULL, NULL},
};

/* A page as lines: line[i] is line i + 1 (the fence's indentation is taken
 * off a block's lines as they are read). */
typedef struct Page {
	const char *name;
	char *text;
	char **line;
	int n;
} Page;

/* One command of a console block and what the page shows it printing. */
typedef struct Cmd {
	int line;           /* the "$ " line */
	char text[4096];    /* the command, continuation lines included */
	const char **shown; /* its output lines */
	int nshown, first;  /* how many; the page's line of the first */
} Cmd;

typedef struct Visit Visit;
struct Visit {
	void (*cmd)(Visit *, const Page *, const Cmd *);
	void (*coll)(Visit *, const Page *, int line, const char *text); /* a build/ file */
	void (*other)(Visit *, const Page *, int line, const char *lang, const char *l);
	const char *root;  /* scratch root (runs) */
	const char *work;  /* where the command script and its output go */
	char *jtext;       /* docs/testing.md, cut up by read_justified */
	char **justified;  /* its table: page, command prefix, ... */
	int njustified;
	int commands, markers, failed;
	bool used[64];     /* rows of justified in use */
	bool saw_console, saw_convention;
	bool script;       /* the block being read is a script file ("#!") */
	int tier;          /* the commands run: 0 quick, 1 slow, -1 all */
	bool as_user;      /* run as an unprivileged user (the tests run as root) */
	bool slow_used[sizeof slow_cmds / sizeof *slow_cmds]; /* slow_cmds matched */
};

static bool
load_page(Page *p, const char *name)
{
	p->name = name;
	p->text = slurp(name, NULL);
	if (!p->text)
		return false;
	size_t cap = 64;
	p->line = malloc(cap * sizeof *p->line);
	p->n = 0;
	for (char *l = p->text, *next; l; l = next) {
		next = strchr(l, '\n');
		if (next)
			*next++ = 0;
		if (!next && !*l)
			break;
		if ((size_t)p->n == cap)
			p->line = realloc(p->line, (cap *= 2) * sizeof *p->line);
		p->line[p->n++] = l;
	}
	return true;
}

static void
free_page(Page *p)
{
	free(p->line);
	free(p->text);
}

static int
indent_of(const char *l)
{
	return (int)strspn(l, " ");
}

/* A block line without the fence's indentation. */
static const char *
unindent(const char *l, int indent)
{
	int k = 0;
	while (k < indent && l[k] == ' ')
		k++;
	return l + k;
}

static bool
is_fence(const char *l)
{
	return strncmp(l + indent_of(l), "```", 3) == 0;
}

/* The commands of a console block, lines [from, to), in order. */
static void
walk_console(Visit *v, const Page *p, int from, int to, int indent)
{
	const char **shown = malloc((size_t)(to - from + 1) * sizeof *shown);
	for (int k = from; k < to;) {
		const char *l = unindent(p->line[k], indent);
		Cmd c = {.line = k + 1, .shown = shown};
		if (strncmp(l, "$ ", 2) != 0) {
			assert_named(0, k + 1, p->name, "%s:%d: output before any command in a console block:"
			             " %s", p->name, k + 1, l);
			k++;
			continue;
		}
		snprintf(c.text, sizeof c.text, "%s", l + 2);
		size_t len;
		while ((len = strlen(c.text)) > 0 && c.text[len - 1] == '\\' && k + 1 < to)
			snprintf(c.text + len, sizeof c.text - len, "\n%s", unindent(p->line[++k], indent));
		c.first = k + 2;
		for (k++; k < to && strncmp(unindent(p->line[k], indent), "$ ", 2) != 0; k++)
			shown[c.nshown++] = unindent(p->line[k], indent);
		v->cmd(v, p, &c);
	}
	free(shown);
}

/* Every fenced block of a page: console blocks' commands, build/ files,
 * and the other blocks' lines. */
static void
walk_page(Visit *v, const Page *p)
{
	for (int i = 0; i < p->n; i++) {
		if (!v->saw_console && strstr(p->line[i], CONVENTION))
			v->saw_convention = true;
		if (!is_fence(p->line[i]))
			continue;
		int indent = indent_of(p->line[i]), j = i + 1;
		char lang[32];
		snprintf(lang, sizeof lang, "%s", p->line[i] + indent + 3);
		while (j < p->n && !is_fence(p->line[j]))
			j++;
		if (strcmp(lang, "console") == 0) {
			if (!v->saw_console)
				assert_named(v->saw_convention, i + 1, p->name, "%s: no \"%s\" before its "
				             "first command (line %d)", p->name, CONVENTION, i + 1);
			v->saw_console = true;
			walk_console(v, p, i + 1, j, indent);
		} else if (strcmp(lang, "coll") == 0 && i + 1 < j &&
		           (strncmp(unindent(p->line[i + 1], indent), "// build/", 9) == 0 ||
		            strncmp(unindent(p->line[i + 1], indent), "// examples/", 12) == 0)) {
			size_t len = 0;
			for (int k = i + 1; k < j; k++)
				len += strlen(p->line[k]) + 1;
			char *text = malloc(len + 1), *w = text;
			for (int k = i + 1; k < j; k++)
				w += sprintf(w, "%s\n", unindent(p->line[k], indent));
			*w = 0;
			if (v->coll)
				v->coll(v, p, i + 1, text);
			free(text);
		} else if (v->other) {
			v->script = false;
			for (int k = i + 1; k < j; k++)
				v->other(v, p, k + 1, lang, unindent(p->line[k], indent));
		}
		i = j;
	}
}

/* A field "~TEXT" of a shown line: any one field of the output. */
static bool
is_marker(const char *field)
{
	return field[0] == '~' && field[1] && field[1] != ' ';
}

static int
markers_in(const char *l)
{
	int n = 0;
	for (const char *f = l; *f; f += strcspn(f, " "), f += strspn(f, " "))
		if ((f == l || f[-1] == ' ') && is_marker(f))
			n++;
	return n;
}

static bool
is_ellipsis(const char *l)
{
	return strcmp(l + strspn(l, " "), "...") == 0;
}

/* A shown line against an output line: the same text, or with markers the
 * same fields but for the marked ones (the widths of the columns vary with
 * the values). In a block with markers (varies) every line compares by its
 * fields: a table's header widens with a value that varies (a time of
 * 1234567.8 us). Trailing blanks never count. */
static bool
line_matches(const char *want, const char *got, bool varies)
{
	size_t wn = strlen(want), gn = strlen(got);
	while (wn && want[wn - 1] == ' ')
		wn--;
	while (gn && (got[gn - 1] == ' ' || got[gn - 1] == '\r'))
		gn--;
	if (!varies && !markers_in(want))
		return wn == gn && strncmp(want, got, wn) == 0;
	const char *w = want + strspn(want, " "), *g = got + strspn(got, " ");
	while (*w && *g) {
		size_t a = strcspn(w, " "), b = strcspn(g, " ");
		if (!is_marker(w) && (a != b || strncmp(w, g, a) != 0))
			return false;
		w += a, g += b;
		w += strspn(w, " "), g += strspn(g, " ");
	}
	return !*w && !*g;
}

/* The shown lines against the output's, "..." matching any run of lines (the
 * usual wildcard walk, backtracking to the last "..."). On a mismatch, *at
 * and *got are the furthest shown line reached and the output line there. */
static bool
output_matches(const char *const *want, int nw, char *const *got, int ng, int *at, int *gat)
{
	int i = 0, j = 0, star = -1, mark = 0;
	bool varies = false;
	for (int k = 0; k < nw && !varies; k++)
		varies = markers_in(want[k]) > 0;
	*at = 0, *gat = 0;
	while (j < ng) {
		if (i < nw && is_ellipsis(want[i])) {
			star = i++, mark = j;
		} else if (i < nw && line_matches(want[i], got[j], varies)) {
			i++, j++;
		} else if (star >= 0) {
			i = star + 1, j = ++mark;
		} else {
			break;
		}
		if (i > *at)
			*at = i, *gat = j;
	}
	while (i < nw && is_ellipsis(want[i]))
		i++;
	if (i > *at)
		*at = i, *gat = j;
	return i == nw && j == ng;
}

static bool
is_slow(const char *doc)
{
	for (int i = 0; slow_docs[i]; i++)
		if (strcmp(slow_docs[i], doc) == 0)
			return true;
	return false;
}

/* Whether a command is the slow tier's; marks the slow_cmds entry it matches. */
static bool
cmd_is_slow(Visit *v, const Page *p, const Cmd *c)
{
	for (int i = 0; slow_cmds[i].page; i++)
		if (strcmp(slow_cmds[i].page, p->name) == 0 &&
		    strncmp(c->text, slow_cmds[i].prefix, strlen(slow_cmds[i].prefix)) == 0) {
			v->slow_used[i] = true;
			return true;
		}
	return is_slow(p->name);
}

/* The row of docs/testing.md's table that allows this command's markers. */
static int
justification(const Visit *v, const Page *p, const Cmd *c)
{
	for (int r = 0; r < v->njustified; r++)
		if (strcmp(v->justified[2 * r], p->name) == 0 &&
		    strncmp(c->text, v->justified[2 * r + 1], strlen(v->justified[2 * r + 1])) == 0)
			return r;
	return -1;
}

/* The output file as lines (blanks at their ends kept for the message). */
static int
split_lines(char *text, char ***lines)
{
	int n = 0;
	size_t cap = 16;
	*lines = malloc(cap * sizeof **lines);
	for (char *l = text, *next; l && *l; l = next) {
		next = strchr(l, '\n');
		if (next)
			*next++ = 0;
		if ((size_t)n == cap)
			*lines = realloc(*lines, (cap *= 2) * sizeof **lines);
		(*lines)[n++] = l;
	}
	return n;
}

static bool
shows_error(const Cmd *c)
{
	for (int i = 0; i < c->nshown; i++)
		if (strstr(c->shown[i], "error:") ||
		    (strncmp(c->shown[i], "collc: ", 7) == 0 && !strstr(c->shown[i], ": note: ")))
			return true;
	return false;
}

/* Runs one command in a fresh shell: the scratch root as its directory, an
 * environment of PATH (bin/ first) and HOME alone (the user's: a fresh one
 * costs Graphviz's font cache tens of seconds), Open MPI's consent to
 * run as root when the tests run as root. */
static int
run_cmd(const Visit *v, const Cmd *c)
{
	char path[PATH_MAX], sh[6 * PATH_MAX];
	snprintf(path, sizeof path, "%s/cmd.sh", v->work);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%s\n", c->text);
	fclose(f);
	const char *home = getenv("HOME");
	snprintf(sh, sizeof sh, "cd %s && env -i PATH=%s/bin:/usr/local/bin:/usr/bin:/bin HOME=%s "
	         "LANG=C.UTF-8 timeout %d %s bash --noprofile --norc %s/cmd.sh >%s/out.txt 2>&1 "
	         "</dev/null", v->root, v->root,
	         !v->as_user && home && *home && !strchr(home, ' ') ? home : v->work,
	         load_scaled(1800), v->as_user ? AS_USER : "", v->work, v->work);
	int st = system(sh);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Prints the page's lines against the output's (diff -u) for whoever fixes it. */
static void
print_diff(const Visit *v, const Page *p, const Cmd *c)
{
	char path[PATH_MAX], sh[3 * PATH_MAX + 8192];
	snprintf(path, sizeof path, "%s/shown.txt", v->work);
	FILE *f = fopen(path, "w");
	if (!f)
		return;
	for (int i = 0; i < c->nshown; i++)
		fprintf(f, "%s\n", c->shown[i]);
	fclose(f);
	printf("\n%s:%d: $ %s\n", p->name, c->line, c->text);
	fflush(stdout);
	snprintf(sh, sizeof sh, "cd %s && diff -u --label '%s:%d (shown)' --label 'printed' "
	         "shown.txt out.txt | head -60", v->work, p->name, c->first);
	if (system(sh) != 0)
		printf("(diff failed)\n");
}

static void
run_one(Visit *v, const Page *p, const Cmd *c)
{
	if (v->tier >= 0 && cmd_is_slow(v, p, c) != (v->tier == 1))
		return;
	/* an address-space limit stops a sanitized collc before main (its shadow memory) */
	if (UNDER_ASAN && strstr(c->text, "ulimit -v"))
		return;
	v->commands++;
	int marks = 0;
	for (int i = 0; i < c->nshown; i++)
		marks += markers_in(c->shown[i]);
	v->markers += marks;
	if (marks)
		assert_named(justification(v, p, c) >= 0, c->line, p->name, "%s:%d: `%s` shows %d "
		             "~ fields, but docs/testing.md's table of output that varies does not list "
		             "it", p->name, c->line, c->text, marks);
	int rc = run_cmd(v, c);
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/out.txt", v->work);
	char *out = slurp(path, NULL), **got;
	int ng = split_lines(out ? out : (char[]){""}, &got), at, gat;
	bool ok = output_matches(c->shown, c->nshown, got, ng, &at, &gat);
	bool want_fail = shows_error(c);
	bool rc_ok = want_fail ? rc != 0 && rc != 124 && rc < 126 : rc == 0;
	if (!ok)
		assert_named(0, c->first + at, p->name, "%s:%d: `%s`: the page's line %d shows\n"
		             "  %s\nbut output line %d is\n  %s", p->name, c->line, c->text,
		             c->first + at, at < c->nshown ? c->shown[at] : "(the end of the output)",
		             gat + 1, gat < ng ? got[gat] : "(the end of the output)");
	if (!rc_ok)
		assert_named(0, c->line, p->name, "%s:%d: `%s` exits %d; the page shows %s", p->name,
		             c->line, c->text, rc, want_fail ? "an error" : "no error");
	if (!ok || !rc_ok) {
		v->failed++;
		print_diff(v, p, c);
	}
	free(got);
	free(out);
}

/* A ```coll block headed "// build/NAME.coll": written there for the commands
 * after it. One headed "// examples/NAME.coll" is that example, as shipped:
 * the block must equal the file, so a reader can run it without saving it. */
static void
write_coll(Visit *v, const Page *p, int line, const char *text)
{
	char name[256];
	snprintf(name, sizeof name, "%.*s", (int)strcspn(text + 3, " \n:"), text + 3);
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", v->root, name);
	if (strncmp(name, "examples/", 9) == 0) {
		char *shipped = slurp(name, NULL);
		assert_named(shipped && strcmp(shipped, text) == 0, line, p->name,
		             "%s:%d: the block differs from %s", p->name, line, name);
		free(shipped);
		return;
	}
	FILE *f = fopen(path, "w");
	assert_named(f != NULL, line, p->name, "%s:%d: cannot write %s", p->name, line, path);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* docs/testing.md's table of output that varies: "| `PAGE` | `COMMAND...` | why |"
 * rows after the heading "### Output that varies" (pairs in v->justified). */
static void
read_justified(Visit *v)
{
	v->jtext = slurp("docs/testing.md", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v->jtext);
	char *sec = strstr(v->jtext, "\n### Output that varies");
	CU_ASSERT_PTR_NOT_NULL_FATAL(sec);
	char *end = strstr(sec + 1, "\n#");
	if (end)
		*end = 0;
	v->justified = malloc(2 * 64 * sizeof *v->justified);
	for (char *save, *l = strtok_r(sec, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *a = strstr(l, "| `"), *b = a ? strchr(a + 3, '`') : NULL;
		char *c = b ? strstr(b, "| `") : NULL, *d = c ? strchr(c + 3, '`') : NULL;
		if (a != l || !d || v->njustified == 64)
			continue;
		*b = 0, *d = 0;
		v->justified[2 * v->njustified] = a + 3;
		v->justified[2 * v->njustified + 1] = c + 3;
		v->njustified++;
	}
	CU_ASSERT(v->njustified > 0);
}

/* A scratch root for one page: a link to each entry of the repository's root
 * but bin/ and build/, its own bin/collc and an empty build/. */
static bool
make_root(const char *root, const char *cwd)
{
	char cmd[6 * PATH_MAX + 64];
	const char *bin = COLLC_BIN;
	snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s/bin %s/build && ln -s %s%s%s %s/bin/collc",
	         root, root, root, bin[0] == '/' ? "" : cwd, bin[0] == '/' ? "" : "/", bin, root);
	if (system(cmd) != 0)
		return false;
	DIR *d = opendir(cwd);
	if (!d)
		return false;
	for (struct dirent *e; (e = readdir(d));) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    strcmp(e->d_name, "bin") == 0 || strcmp(e->d_name, "build") == 0)
			continue;
		char from[2 * PATH_MAX], to[2 * PATH_MAX];
		snprintf(from, sizeof from, "%s/%s", cwd, e->d_name);
		snprintf(to, sizeof to, "%s/%s", root, e->d_name);
		if (symlink(from, to) != 0) {
			closedir(d);
			return false;
		}
	}
	closedir(d);
	return true;
}

/* The pages of docs/ (README.md comes first, by the callers). */
static int
all_pages(glob_t *g)
{
	return glob("docs/*.md", 0, NULL, g);
}

static double
seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* What git says of the checkout (files changed or new), "" without git. */
static char *
checkout_state(void)
{
	FILE *f = popen("git status --porcelain --untracked-files=all 2>/dev/null", "r");
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	if (f && mem)
		for (int ch; (ch = getc(f)) != EOF;)
			putc(ch, mem);
	if (f)
		pclose(f);
	if (mem)
		fclose(mem);
	return text;
}

static void
run_page(const char *name, const char *base, const char *cwd, int tier, bool as_user)
{
	char root[PATH_MAX], work[PATH_MAX];
	snprintf(root, sizeof root, "%s/root", base);
	snprintf(work, sizeof work, "%s/work", base);
	CU_ASSERT_FATAL(make_root(root, cwd));
	char cmd[4 * PATH_MAX + 64];
	snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", work, work);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	if (as_user) { /* the user writes build/ and its home (work); reads the rest */
		snprintf(cmd, sizeof cmd, "chmod 755 %s %s && chmod 777 %s/build %s", base, root, root,
		         work);
		CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	}
	Visit v = {.cmd = run_one, .coll = write_coll, .root = root, .work = work, .tier = tier,
	           .as_user = as_user};
	read_justified(&v);
	Page p;
	CU_ASSERT_FATAL(load_page(&p, name));
	double t0 = seconds();
	char *before = checkout_state();
	walk_page(&v, &p);
	char *after = checkout_state();
	assert_named(before && after && strcmp(before, after) == 0, __LINE__, __FILE__,
	             "%s: its commands changed the checkout (they write into build/ only):\n"
	             "before:\n%s\nafter:\n%s", name, before ? before : "", after ? after : "");
	free(before);
	free(after);
	if (v.commands)
		printf("\n  docs: %s: %d commands in %.1f s%s%s", name, v.commands, seconds() - t0,
		       as_user ? " as an unprivileged user" : "",
		       v.failed ? " (some FAILED: the page's lines against the output above)" : "");
	free_page(&p);
	free(v.justified);
	free(v.jtext);
}

/* Whether the unprivileged user can read the checkout and run collc (a
 * checkout under a private home cannot be read: then that pass is skipped,
 * with a note). */
static bool
user_can_read(const char *cwd)
{
	char cmd[3 * PATH_MAX + 256];
	/* by absolute paths, as the commands' PATH names collc: a relative
	 * path from the inherited directory would pass under a private parent */
	snprintf(cmd, sizeof cmd, "cd %s && %s test -r %s/Makefile -a -x %s/%s 2>/dev/null", cwd,
	         AS_USER, cwd, cwd, COLLC_BIN);
	return system(cmd) == 0;
}

/* The pages of one tier, each in its own scratch root: as whoever runs the
 * tests and, when that is root, again as an unprivileged user, so that a
 * command runs as printed for both (Open MPI's mpirun, say, refuses root
 * unless told). */
static void
run_tier(bool slow)
{
	char cwd[PATH_MAX], base[] = "/tmp/collc-docs-XXXXXX";
	CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(base));
	glob_t g;
	CU_ASSERT_EQUAL_FATAL(all_pages(&g), 0);
	/* COLLC_DOCS_PAGE=docs/X.md: every command of that page alone, whichever
	 * tier's test runs */
	const char *only = getenv("COLLC_DOCS_PAGE");
	bool both = geteuid() == 0 && user_can_read(cwd);
	if (geteuid() == 0 && !both)
		printf("\n  docs: note: the unprivileged user cannot read %s: its pass skipped", cwd);
#ifdef __SANITIZE_ADDRESS__
	both = false; /* permissions are the same in every build: the plain build's run checks them */
#endif
	for (int user = 0; user <= both; user++)
		for (size_t i = 0; i <= g.gl_pathc; i++) {
			const char *page = i == 0 ? "README.md" : g.gl_pathv[i - 1];
			if (!only || !*only)
				run_page(page, base, cwd, slow, user);
			else if (strcmp(only, page) == 0)
				run_page(page, base, cwd, -1, user);
		}
	globfree(&g);
	char cmd[PATH_MAX];
	snprintf(cmd, sizeof cmd, "rm -rf %s", base);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

static void
test_commands_quick(void)
{
	run_tier(false);
}

static void
test_commands_slow(void)
{
	for (int i = 0; slow_docs[i]; i++)
		assert_named(access(slow_docs[i], R_OK) == 0, __LINE__, __FILE__, "slow_docs: no %s",
		             slow_docs[i]);
	run_tier(true);
}

/* The page's conventions, without running anything: every command is in a
 * console block (no "$ " line elsewhere; a collc line elsewhere is a usage
 * synopsis, with a placeholder such as FILE or a description aligned after
 * it, or a line of a script file,
 * which starts "#!"); commands are written `collc`, not bin/collc; no command
 * or ```sh line names a scratch or home folder outside the repository; mpirun
 * gets --oversubscribe (Open MPI runs no more ranks than cores without it);
 * every ~ field is justified, and every row of the table is used. */
/* A path a command would read or write outside the repository, which a
 * reader's machine need not have (a scratch or home folder), or NULL.
 * (`make install PREFIX=...` writes outside by design and names none.) */
static const char *
outside_path(const char *l)
{
	static const char *const dirs[] = {"/tmp/", "/work/", "/home/", "/root/", "~/"};
	for (size_t i = 0; i < countof(dirs); i++) {
		const char *at = strstr(l, dirs[i]);
		if (at && (at == l || strchr(" =:'\"(", at[-1])))
			return at;
	}
	return NULL;
}

static void
static_cmd(Visit *v, const Page *p, const Cmd *c)
{
	v->commands++;
	cmd_is_slow(v, p, c);
	int marks = 0;
	for (int i = 0; i < c->nshown; i++)
		marks += markers_in(c->shown[i]);
	v->markers += marks;
	int r = justification(v, p, c);
	if (r >= 0 && marks)
		v->used[r] = true;
	assert_named(strncmp(c->text, "bin/collc", 9) != 0 && !strstr(c->text, " bin/collc"),
	             c->line, p->name, "%s:%d: `%s`: the pages write collc (bin/ is on the PATH)",
	             p->name, c->line, c->text);
	const char *mpirun = strstr(c->text, "mpirun ");
	assert_named(!mpirun || strstr(mpirun, "--oversubscribe"), c->line, p->name,
	             "%s:%d: `%s`: Open MPI's mpirun needs --oversubscribe for more ranks than "
	             "cores", p->name, c->line, c->text);
	assert_named(!mpirun || strstr(mpirun, "--allow-run-as-root"), c->line, p->name,
	             "%s:%d: `%s`: Open MPI's mpirun needs --allow-run-as-root to run as printed "
	             "for root", p->name, c->line, c->text);
	assert_named(!outside_path(c->text), c->line, p->name, "%s:%d: `%s`: a path outside the "
	             "repository (files go to build/)", p->name, c->line, c->text);
}

static void
static_other(Visit *v, const Page *p, int line, const char *lang, const char *l)
{
	if (strncmp(l, "#!", 2) == 0)
		v->script = true;
	assert_named(strcmp(lang, "sh") != 0 || !outside_path(l), line, p->name, "%s:%d: a path "
	             "outside the repository (files go to build/, other projects beside it in ../): "
	             "%s", p->name, line, l);
	assert_named(strncmp(l, "$ ", 2) != 0, line, p->name, "%s:%d: a command outside a "
	             "```console block: %s", p->name, line, l);
	if (strncmp(l, "collc ", 6) != 0 && strncmp(l, "bin/collc ", 10) != 0)
		return;
	bool placeholder = false;
	for (const char *w = l; *w; w++)
		if (isupper((unsigned char)w[0]) && isupper((unsigned char)w[1]) &&
		    isupper((unsigned char)w[2]) && (w == l || !isalnum((unsigned char)w[-1])))
			placeholder = true;
	/* a synopsis: a placeholder, or a description aligned after the command */
	placeholder = placeholder || strstr(l, "  ") != NULL;
	assert_named(placeholder || v->script, line, p->name, "%s:%d: a collc command outside a "
	             "```console block (a synopsis names FILE or the like): %s", p->name, line, l);
}

static void
test_conventions(void)
{
	Visit v = {.cmd = static_cmd, .other = static_other};
	read_justified(&v);
	glob_t g;
	CU_ASSERT_EQUAL_FATAL(all_pages(&g), 0);
	for (size_t i = 0; i <= g.gl_pathc; i++) {
		Page p;
		CU_ASSERT_FATAL(load_page(&p, i == 0 ? "README.md" : g.gl_pathv[i - 1]));
		v.saw_console = v.saw_convention = false;
		walk_page(&v, &p);
		free_page(&p);
	}
	globfree(&g);
	for (int r = 0; r < v.njustified; r++)
		assert_named(v.used[r], __LINE__, __FILE__, "docs/testing.md lists `%s` of %s as output "
		             "that varies, but no ~ field of that command is shown", v.justified[2 * r + 1],
		             v.justified[2 * r]);
	for (int i = 0; slow_cmds[i].page; i++)
		assert_named(v.slow_used[i], __LINE__, __FILE__, "slow_cmds: %s shows no `%s...`",
		             slow_cmds[i].page, slow_cmds[i].prefix);
	CU_ASSERT(v.commands > 50);
	printf("\n  docs: %d commands, %d ~ fields (for %d commands)", v.commands, v.markers,
	       v.njustified);
	free(v.justified);
	free(v.jtext);
}

/* Every relative link of a page names a file of the repository. */
static void
check_links(const char *doc, const char *root)
{
	char *text = slurp(doc, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	assert_named(strstr(text, "../shared") == NULL, __LINE__, doc, "%s cites ../shared", doc);
	assert_named(strstr(text, "seeds' doc") == NULL, __LINE__, doc,
	             "%s cites the seeds' documentation", doc);
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", doc);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof dir, ".");
	for (const char *p = strstr(text, "]("); p; p = strstr(p + 1, "](")) {
		char target[512];
		size_t n = strcspn(p + 2, ")# ");
		if (n == 0 || n >= sizeof target)
			continue;
		snprintf(target, sizeof target, "%.*s", (int)n, p + 2);
		if (strstr(target, "://")) {
			assert_named(0, __LINE__, doc, "%s links outside the repository: %s", doc, target);
			continue;
		}
		char path[2 * PATH_MAX], real[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", dir, target);
		bool ok = realpath(path, real) && strncmp(real, root, strlen(root)) == 0;
		assert_named(ok, __LINE__, doc, "%s: link to %s, not a file of the repository", doc,
		             target);
	}
	free(text);
}

static void
test_links_inside(void)
{
	char root[PATH_MAX];
	CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(".", root));
	check_links("README.md", root);
	glob_t g;
	CU_ASSERT_EQUAL_FATAL(glob("docs/*.md", 0, NULL, &g), 0);
	for (size_t i = 0; i < g.gl_pathc; i++)
		check_links(g.gl_pathv[i], root);
	globfree(&g);
	/* nor do the messages: no source file names the reference material */
	CU_ASSERT_NOT_EQUAL(system("grep -rl '\\.\\./shared' base compiler grammar ir backends runtime "
	                           "examples docs/contrib >/dev/null"), 0);
}

/* The KIND bits of a table cell "AR, RS, AG" (language.md's abbreviations). */
static unsigned
kinds_of_cell(const char *cell)
{
	static const char *const abbrev[NCOLLKIND] = {
		[CK_ALLREDUCE] = "AR", [CK_REDUCE_SCATTER] = "RS", [CK_ALLGATHER] = "AG",
		[CK_ALLTOALL] = "A2A", [CK_BROADCAST] = "BC", [CK_REDUCE] = "RD",
	};
	unsigned kinds = 0;
	char buf[128];
	snprintf(buf, sizeof buf, "%s", cell);
	for (char *save, *w = strtok_r(buf, ", ", &save); w; w = strtok_r(NULL, ", ", &save))
		for (int k = 0; k < NCOLLKIND; k++)
			if (strcmp(w, abbrev[k]) == 0)
				kinds |= KIND(k);
	return kinds;
}

/* The TOPO bits of a cell "`mesh`, `supermesh`"; "any" is 0. */
static unsigned
topos_of_cell(const char *cell)
{
	unsigned topos = 0;
	for (const char *p = strchr(cell, '`'); p; p = strchr(p, '`')) {
		const char *end = strchr(p + 1, '`');
		if (!end)
			break;
		char name[32];
		snprintf(name, sizeof name, "%.*s", (int)(end - p - 1), p + 1);
		int t = topo_form_find(name);
		CU_ASSERT(t >= 0);
		if (t >= 0)
			topos |= TOPO(t);
		p = end + 1;
	}
	return topos;
}

/* language.md §9's table against the registry: a row for every algorithm,
 * with the registry's kinds and topology forms. */
static void
test_algorithm_table(void)
{
	char *text = slurp("docs/language.md", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	char *sec = strstr(text, "\n## 9. Algorithms");
	CU_ASSERT_PTR_NOT_NULL_FATAL(sec);
	char *end = strstr(sec + 1, "\n## ");
	if (end)
		*end = 0;
	bool seen[NALG] = {0};
	int rows = 0;
	for (char *save, *line = strtok_r(sec, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "| `", 3) != 0)
			continue;
		char *cell[5] = {0};
		int n = 0;
		/* cells split at " | " (escaped bars inside cells are "\|") */
		for (char *p = line + 1; n < 5 && p; n++) {
			while (*p == ' ')
				p++;
			cell[n] = p;
			char *bar = p;
			while ((bar = strchr(bar, '|')) && bar[-1] == '\\')
				bar++;
			if (bar)
				*bar++ = 0;
			p = bar;
		}
		char name[64];
		if (n < 5 || sscanf(cell[0], "`%63[a-z_0-9]`", name) != 1 || strcmp(name, "auto") == 0)
			continue;
		int a = alg_find(name);
		assert_named(a >= 0, __LINE__, __FILE__, "language.md §9 lists '%s', not an algorithm",
		             name);
		if (a < 0)
			continue;
		rows++;
		seen[a] = true;
		assert_named(kinds_of_cell(cell[2]) == alg_forms[a].kinds, __LINE__, __FILE__,
		             "language.md: %s's kinds '%s' differ from the registry's", name, cell[2]);
		assert_named(topos_of_cell(cell[3]) == alg_forms[a].topos, __LINE__, __FILE__,
		             "language.md: %s's topologies '%s' differ from the registry's", name, cell[3]);
	}
	for (int a = 0; a < NALG; a++)
		assert_named(seen[a], __LINE__, __FILE__, "language.md §9 has no row for %s",
		             alg_forms[a].name);
	CU_ASSERT(rows >= NALG);
	free(text);
}

/* language.md §7.2's table of topology forms against the registry: one row
 * per form, in the registry's order, its signature the form's word with its
 * arguments (or its block). */
static void
test_topology_table(void)
{
	char *text = slurp("docs/language.md", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	char *sec = strstr(text, "\n### 7.2 `topology`");
	CU_ASSERT_PTR_NOT_NULL_FATAL(sec);
	char *end = strstr(sec + 1, "\n### ");
	if (end)
		*end = 0;
	int row = 0;
	for (char *save, *line = strtok_r(sec, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char word[32], sig[64];
		if (sscanf(line, "| `%31[a-z_]` | `%63[a-z_]", word, sig) != 2)
			continue;
		const char *want = row < NTOPOKIND ? topo_forms[row].form.name : "(none)";
		assert_named(strcmp(word, want) == 0 && strcmp(sig, want) == 0, __LINE__, __FILE__,
		             "language.md §7.2 row %d is %s (%s...); the registry's form %d is %s",
		             row + 1, word, sig, row + 1, want);
		row++;
	}
	assert_named(row == NTOPOKIND, __LINE__, __FILE__,
	             "language.md §7.2 has %d form rows; the registry %d forms", row, NTOPOKIND);
	free(text);
}

/* Whether the libFuzzer dictionary has the quoted word. */
static bool
dict_has(const char *dict, const char *word)
{
	char quoted[80];
	snprintf(quoted, sizeof quoted, "\"%s\"\n", word);
	return strstr(dict, quoted) != NULL;
}

/* The .coll fuzz target's dictionary (tests/fuzz/coll.dict) has every word
 * of the registry: each topology form and algorithm with its labels, each
 * network parameter. A form added without its words would leave the
 * fuzzer to find them byte by byte. */
static void
test_fuzz_dictionary(void)
{
	char *dict = slurp("tests/fuzz/coll.dict", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dict);
	const FormSpec *form[NTOPOKIND + NALG];
	int n = 0;
	for (int k = 0; k < NTOPOKIND; k++)
		form[n++] = &topo_forms[k].form;
	for (int k = 0; k < NALG; k++)
		form[n++] = &alg_forms[k];
	for (int i = 0; i < n; i++) {
		assert_named(dict_has(dict, form[i]->name), __LINE__, __FILE__,
		             "tests/fuzz/coll.dict lacks the form '%s'", form[i]->name);
		for (int j = 0; j < MAX_PARAMS && form[i]->param[j].kind != A_END; j++)
			if (form[i]->param[j].label)
				assert_named(dict_has(dict, form[i]->param[j].label), __LINE__, __FILE__,
				             "tests/fuzz/coll.dict lacks '%s' of %s", form[i]->param[j].label,
				             form[i]->name);
	}
	for (int k = 0; k < nnet_params; k++)
		assert_named(dict_has(dict, net_params[k].name), __LINE__, __FILE__,
		             "tests/fuzz/coll.dict lacks the network parameter '%s'", net_params[k].name);
	free(dict);
}

/* ---- the commands and targets: collc's help, the man page, cli.md ---- */

/* What `collc ARGS` prints, stdout and stderr together (malloc'd). */
static char *
collc_says(const char *args)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "%s %s 2>&1", COLLC_BIN, args);
	FILE *f = popen(cmd, "r");
	if (!f)
		return strdup("");
	char *text = NULL;
	size_t len = 0, cap = 0, n;
	char buf[4096];
	while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
		if (len + n + 1 > cap) {
			cap = 2 * (len + n + 1);
			text = realloc(text, cap);
		}
		memcpy(text + len, buf, n);
		len += n;
	}
	pclose(f);
	if (!text)
		return strdup("");
	text[len] = 0;
	return text;
}

/* The words of `text` after each occurrence of `lead` that start with a
 * letter (up to a char not in [a-z-]; roff's \- is a -), as one sorted,
 * space-separated list: "build check fmt". */
static void
words_after(const char *text, const char *end, const char *lead, char *out, size_t len)
{
	char w[64][32];
	int n = 0;
	for (const char *p = strstr(text, lead); p && (!end || p < end) && n < 64;
	     p = strstr(p + 1, lead)) {
		const char *q = p + strlen(lead);
		size_t k = 0;
		if (!(*q >= 'a' && *q <= 'z'))
			continue; /* an option (-o, --version) or a placeholder (COMMAND) */
		for (; k + 1 < sizeof w[0] && ((*q >= 'a' && *q <= 'z') || *q == '-' ||
		       (q[0] == '\\' && q[1] == '-')); q++)
			if (*q != '\\')
				w[n][k++] = *q;
		w[n][k] = 0;
		bool dup = k == 0;
		for (int i = 0; i < n && !dup; i++)
			dup = strcmp(w[i], w[n]) == 0;
		n += !dup;
	}
	qsort(w, (size_t)n, sizeof w[0], (int (*)(const void *, const void *))strcmp);
	out[0] = 0;
	for (int i = 0; i < n; i++)
		snprintf(out + strlen(out), len - strlen(out), "%s%s", i ? " " : "", w[i]);
}

/* `collc help` (its commands), `collc help build` (its targets: backend.c's
 * table), the man page's COMMANDS and build paragraph, and cli.md's
 * synopsis and `--target` list name the same commands and targets; the
 * messages cli.md quotes for a missing and a misspelt target are collc's. */
static void
test_commands_and_targets(void)
{
	char *help = collc_says("help"), *build = collc_says("help build");
	char *man = slurp("docs/collc.1", NULL), *cli = slurp("docs/cli.md", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(man);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cli);
	char want[1024], got[1024];
	/* commands: "  NAME ..." lines of the help's "commands:" block */
	const char *cmds = strstr(help, "commands:\n"), *opts = strstr(help, "\noptions:");
	CU_ASSERT_PTR_NOT_NULL_FATAL(cmds);
	words_after(cmds, opts, "\n  ", want, sizeof want);
	CU_ASSERT(strstr(want, "check") && strstr(want, "build") && strstr(want, "help"));
	const char *man_cmds = strstr(man, ".SH COMMANDS"), *man_end = strstr(man, ".SH BANDWIDTH");
	CU_ASSERT_PTR_NOT_NULL_FATAL(man_cmds);
	words_after(man_cmds, man_end, "\n.BI \"", got, sizeof got);
	assert_named(strcmp(want, got) == 0, __LINE__, __FILE__,
	             "collc help's commands: %s; collc.1's COMMANDS: %s", want, got);
	const char *syn = strstr(cli, "\n```\ncollc "), *syn_end = syn ? strstr(syn + 5, "```") : NULL;
	CU_ASSERT_PTR_NOT_NULL_FATAL(syn);
	words_after(syn, syn_end, "\ncollc ", got, sizeof got);
	assert_named(strcmp(want, got) == 0, __LINE__, __FILE__,
	             "collc help's commands: %s; cli.md's synopsis: %s", want, got);
	/* targets: "  NAME  ..." lines of the help's "targets:" block */
	const char *tg = strstr(build, "targets:\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(tg);
	words_after(tg, NULL, "\n  ", want, sizeof want);
	CU_ASSERT(strstr(want, "msccl") && strstr(want, "ir"));
	const char *man_build = strstr(man, ".BI \"build \""), *man_next = man_build ?
	                        strstr(man_build, "\n.RS") : NULL;
	CU_ASSERT_PTR_NOT_NULL_FATAL(man_build);
	words_after(man_build, man_next, "\n.B ", got, sizeof got);
	assert_named(strcmp(want, got) == 0, __LINE__, __FILE__,
	             "collc help build's targets: %s; collc.1's build paragraph: %s", want, got);
	words_after(cli, NULL, "\n- `--target ", got, sizeof got);
	assert_named(strcmp(want, got) == 0, __LINE__, __FILE__,
	             "collc help build's targets: %s; cli.md's --target list: %s", want, got);
	/* the messages cli.md quotes, as collc prints them */
	char *none = collc_says("build examples/ring-classic.coll");
	char *typo = collc_says("build examples/ring-classic.coll --target msccal");
	static const char *const quoted[] = {"(`build: --target is one of ", "(`build: --target 'msccal'"};
	const char *said[] = {none, typo};
	for (size_t i = 0; i < countof(quoted); i++) {
		const char *q = strstr(cli, quoted[i]);
		assert_named(q != NULL, __LINE__, __FILE__, "cli.md quotes no %s...`", quoted[i] + 2);
		if (!q)
			continue;
		char msg[256];
		sscanf(q + 2, "%255[^`]", msg);
		assert_named(strstr(said[i], msg) != NULL, __LINE__, __FILE__,
		             "cli.md quotes `%s`; collc says: %s", msg, said[i]);
	}
	free(none), free(typo), free(help), free(build), free(man), free(cli);
}

/* ---- the layers: hacking.md's list against the sources' includes ---- */

enum { MAX_LAYERS = 8 };

/* The folders of hacking.md's layers block, top first ("compiler", ...). */
static int
doc_layers(const char *doc, char layer[][16])
{
	const char *p = strstr(doc, "## The layers");
	p = p ? strstr(p, "\n```\n") : NULL;
	const char *end = p ? strstr(p + 5, "\n```") : NULL;
	int n = 0;
	for (const char *l = p ? p + 5 : NULL; l && l < end && n < MAX_LAYERS;
	     l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (*l >= 'a' && *l <= 'z' && sscanf(l, "%15[a-z]/", layer[n]) == 1)
			n++;
	return n;
}

/* The layer (index, 0 the top) whose folder holds `name`, or -1: a system
 * header, a generated one or a test's own. */
static int
header_layer(const char *name, char layer[][16], int n)
{
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", layer[i], name);
		if (access(path, F_OK) == 0)
			return i;
	}
	if (strcmp(name, "coll.tab.h") == 0)
		return header_layer("ast.h", layer, n); /* grammar's bison header */
	if (strcmp(name, "chakra_et.pb-c.h") == 0)
		return header_layer("backend.h", layer, n); /* backends' protobuf-c header */
	return -1;
}

/* Every `#include "..."` of the sources names a header of the file's own
 * layer or one below it, in the order hacking.md lists them; in runtime/,
 * only the schedule executor (exec.h, exec.c) sees the IR. */
static void
test_layers(void)
{
	char *doc = slurp("docs/hacking.md", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	char layer[MAX_LAYERS][16];
	int n = doc_layers(doc, layer);
	assert_named(n == 6, __LINE__, __FILE__, "hacking.md lists %d layers, not 6", n);
	int ir = -1, files = 0, includes = 0;
	for (int i = 0; i < n; i++)
		if (strcmp(layer[i], "ir") == 0)
			ir = i;
	CU_ASSERT_FATAL(ir >= 0);
	for (int i = 0; i < n; i++) {
		static const char *const ext[] = {"c", "h", "l", "y"};
		for (size_t e = 0; e < countof(ext); e++) {
			char pattern[160];
			snprintf(pattern, sizeof pattern, "%s/*.%s", layer[i], ext[e]);
			glob_t g;
			if (glob(pattern, 0, NULL, &g) != 0)
				continue;
			for (size_t k = 0; k < g.gl_pathc; k++) {
				char *text = slurp(g.gl_pathv[k], NULL);
				if (!text)
					continue;
				files++;
				const char *base = strrchr(g.gl_pathv[k], '/') + 1;
				bool executor = strncmp(base, "exec.", 5) == 0;
				for (const char *q = strstr(text, "#include \""); q;
				     q = strstr(q + 1, "#include \"")) {
					char name[128];
					if (sscanf(q + 10, "%127[^\"]", name) != 1)
						continue;
					int at = header_layer(name, layer, n);
					if (at < 0)
						continue;
					includes++;
					assert_named(at >= i, __LINE__, __FILE__, "%s includes %s of %s/, a "
					             "layer above its own (docs/hacking.md)", g.gl_pathv[k], name,
					             layer[at]);
					bool sees_ir = at == ir || strcmp(name, "exec.h") == 0;
					assert_named(!(strcmp(layer[i], "runtime") == 0 && sees_ir && !executor),
					             __LINE__, __FILE__, "%s includes %s: in runtime/ only the "
					             "executor (exec.h) sees the IR (docs/hacking.md)",
					             g.gl_pathv[k], name);
				}
				free(text);
			}
			globfree(&g);
		}
	}
	assert_named(files >= 90 && includes >= 140, __LINE__, __FILE__,
	             "%d files and %d includes of the layers' headers read", files, includes);
	free(doc);
}

CU_TestInfo docs_tests[] = {
	{"source files include only their own layer and those below", test_layers},
	{"collc help, collc.1 and cli.md: the same commands and targets", test_commands_and_targets},
	{"language.md's topology table is the registry's", test_topology_table},
	{"the fuzz dictionary has every form, label and network parameter of the registry",
	 test_fuzz_dictionary},
	{"every command of README and docs/ runs as printed (but the slow ones)", test_commands_quick},
	{"the docs' slow commands run as printed (MPI, sweeps, large builds)", test_commands_slow},
	{"commands in console blocks, written collc; every ~ field justified", test_conventions},
	{"no link leaves the repository; nothing cites ../shared", test_links_inside},
	{"language.md's algorithm table is the registry's", test_algorithm_table},
	CU_TEST_INFO_NULL,
};
