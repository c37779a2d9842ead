/*
 * test_globals.c: no mutable state outlives a call but what a signal
 * handler, an allocation failure or MPI's attribute API needs (issue 32).
 * Reads the sources of every layer (the .c and .h files; the code of
 * coll.l and coll.y is checked by the compiler's -Wall alone) and fails on
 * a file-scope variable, or a function-scope `static` one, that is not
 * const, unless the allow-list below names it with its reason.
 */
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

/* The only mutable statics, each with why it cannot live in a context. */
static const struct {
	const char *file, *name, *why;
} allowed[] = {
	{"base/diag.c", "oom_diag", "out_of_memory runs where malloc failed, with no Diag at hand"},
	{"base/tmpfiles.c", "held", "the signal handler removes the temporary files it holds"},
	{"compiler/cmd_sweep.c", "interrupted", "set by the SIGINT handler, read by the sweep"},
	{"backends/mpi/runtime.c", "collc_lib_keyval",
	 "the MPI drop-in's keyval: MPI's attribute API makes it process-wide"},
	{"backends/mpi/runtime.c", "collc_lib_closed",
	 "MPI_Finalize has begun: finalize is the process's, and the intercepted calls carry no "
	 "context of the drop-in's"},
	{"backends/mpi/lib.c", "collc_cal",
	 "the calibrated plan (COLLC_MPI_PLAN) the drop-in follows, read once per process: the "
	 "intercepted MPI calls carry no context of the drop-in's"},
	{"backends/mpi/lib.c", "collc_hot",
	 "the drop-in's counts and, per kind, whether the plan followed gives every call to MPI, "
	 "in one cache line a passed call reads: the intercepted MPI calls carry no context of "
	 "the drop-in's"},
	{"backends/mpi/lib.c", "collc_known",
	 "the thread level and the predefined datatypes' sizes, asked of MPI once per process so "
	 "that a call the drop-in passes asks nothing: the intercepted MPI calls carry no context "
	 "of the drop-in's"},
	{"backends/mpi/lib.c", "collc_memo",
	 "per kind, the last call the drop-in passed to MPI, in a cache line of its own, so that "
	 "a repeat passes reading it alone: the intercepted MPI calls carry no context of the "
	 "drop-in's"},
};

/* The text with comments, strings and character constants blanked (the
 * same length) and preprocessor lines removed. */
static void
blank(char *s)
{
	for (char *p = s; *p;) {
		if (p[0] == '/' && p[1] == '*') {
			char *e = strstr(p + 2, "*/");
			e = e ? e + 2 : p + strlen(p);
			for (; p < e; p++)
				*p = *p == '\n' ? '\n' : ' ';
		} else if (p[0] == '/' && p[1] == '/') {
			for (; *p && *p != '\n'; p++)
				*p = ' ';
		} else if (*p == '"' || *p == '\'') {
			char q = *p++;
			for (; *p && *p != q && *p != '\n'; p++) {
				if (*p == '\\' && p[1])
					*p++ = ' ';
				*p = ' ';
			}
			if (*p)
				p++;
		} else if (*p == '#' && (p == s || p[-1] == '\n')) {
			for (; *p && (*p != '\n' || p[-1] == '\\'); p++)
				*p = ' ';
		} else {
			p++;
		}
	}
}

/* Past the bracket matching the one at p. */
static const char *
skip_group(const char *p)
{
	char open = *p, close = open == '{' ? '}' : open == '(' ? ')' : ']';
	int depth = 0;
	for (; *p; p++)
		if (*p == open)
			depth++;
		else if (*p == close && --depth == 0)
			return p + 1;
	return p;
}

static bool
is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* Whether text [a, b) holds the word w. */
static bool
has_word(const char *a, const char *b, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = a; p + n <= b; p++)
		if (strncmp(p, w, n) == 0 && (p == a || !is_word(p[-1])) && !is_word(p[n]))
			return true;
	return false;
}

/* A declaration [a, b) (to its ';'): the name it declares into name, and
 * whether that object is mutable. Not a variable (a prototype, typedef,
 * extern, a type's definition or a static assertion): false. */
static bool
mutable_decl(const char *a, const char *b, char *name, size_t len)
{
	const char *end = b; /* the first declarator ends at '=', ',' or ';' */
	const char *w = NULL, *wend = NULL, *prev = NULL; /* the last two words outside groups */
	int nword = 0;
	for (const char *p = a; p < end; p++) {
		if (*p == '(' && (p[1] == '*' || (p[1] == ' ' && p[2] == '*')))
			continue; /* a pointer to a function: its name is inside */
		if (*p == '(') {
			const char *q = p;
			while (q > a && q[-1] == ' ')
				q--;
			if (q > a && is_word(q[-1]))
				return false; /* name(...): a prototype, or a macro's use */
			p = skip_group(p) - 1;
		} else if (*p == '{' || *p == '[') {
			p = skip_group(p) - 1;
		} else if (*p == '=' || *p == ',') {
			end = p;
		} else if (is_word(*p) && (p == a || !is_word(p[-1]))) {
			const char *e = p;
			while (is_word(*e))
				e++;
			prev = w;
			w = p, wend = e, nword++;
			p = e - 1;
		}
	}
	if (!w || nword < 2 || has_word(a, end, "typedef") || has_word(a, end, "extern") ||
	    has_word(a, end, "_Static_assert"))
		return false;
	if (prev && (has_word(prev, w, "struct") || has_word(prev, w, "union") ||
	             has_word(prev, w, "enum")) && prev + 6 >= w - 1)
		return false; /* `struct S { ... };`: a tag, not an object */
	if (has_word(w, wend, "struct") || has_word(w, wend, "union") || has_word(w, wend, "enum"))
		return false; /* `enum { ... };` */
	snprintf(name, len, "%.*s", (int)(wend - w), w);
	/* const is the object's when it follows the last '*' (or there is none) */
	const char *star = NULL;
	for (const char *p = a; p < w; p++)
		if (*p == '{' || *p == '[')
			p = skip_group(p) - 1; /* a member's '*' is not the object's */
		else if (*p == '*')
			star = p;
	return !has_word(star ? star : a, w, "const");
}

/* The mutable statics of one file's blanked text, each reported (with
 * report) unless allowed; how many were not allowed. */
static int
scan(const char *path, const char *s, int *seen, bool report)
{
	int bad = 0, depth = 0;
	const char *stmt = s; /* where the current statement began */
	for (const char *p = s; *p; p++) {
		if (*p == '{') {
			/* an initializer belongs to its declaration, and so does a
			 * type's body at file scope; a function's body or a block
			 * opens a scope */
			const char *q = p;
			while (q > stmt && (q[-1] == ' ' || q[-1] == '\n' || q[-1] == '\t'))
				q--;
			bool init = false;
			for (const char *r = stmt; r < p; r++)
				init |= *r == '=';
			if (init || (depth == 0 && q > stmt && q[-1] != ')')) {
				p = skip_group(p) - 1;
				continue;
			}
			depth++;
			stmt = p + 1;
		} else if (*p == '}') {
			depth--;
			stmt = p + 1;
		} else if (*p == ';') {
			const char *a = stmt;
			while (*a == ' ' || *a == '\n' || *a == '\t')
				a++;
			stmt = p + 1;
			/* in a function, only a `static` declaration outlives the call */
			bool candidate = depth == 0 || (strncmp(a, "static", 6) == 0 && !is_word(a[6]));
			char name[64];
			if (!candidate || !mutable_decl(a, p, name, sizeof name))
				continue;
			(*seen)++;
			bool ok = false;
			for (size_t i = 0; i < countof(allowed); i++)
				ok |= strcmp(path, allowed[i].file) == 0 && strcmp(name, allowed[i].name) == 0;
			if (ok)
				continue;
			bad++;
			int line = 1;
			for (const char *r = s; r < a; r++)
				line += *r == '\n';
			if (report)
				assert_named(false, __LINE__, __FILE__, "%s:%d: '%s' is mutable state "
				             "outside a context (give it to the pass's context, or allow it "
				             "in test_globals.c with its reason)", path, line, name);
		}
	}
	return bad;
}

static void
test_no_mutable_globals(void)
{
	static const char *const pattern[] = {
		"base/*.[ch]", "grammar/*.[ch]", "ir/*.[ch]", "backends/*.[ch]",
		"backends/mpi/*.[ch]", "runtime/*.[ch]", "compiler/*.[ch]",
	};
	int files = 0, seen = 0;
	for (size_t i = 0; i < countof(pattern); i++) {
		glob_t g;
		if (glob(pattern[i], 0, NULL, &g) != 0)
			continue;
		for (size_t k = 0; k < g.gl_pathc; k++) {
			char *text = slurp(g.gl_pathv[k], NULL);
			if (!text)
				continue;
			files++;
			blank(text);
			scan(g.gl_pathv[k], text, &seen, true);
			free(text);
		}
		globfree(&g);
	}
	/* each allowed one is found: the scan sees through their declarations */
	assert_named(files >= 100 && seen == (int)countof(allowed), __LINE__, __FILE__,
	             "%d files read, %d mutable statics found, %zu allowed", files, seen,
	             countof(allowed));
}

/* The scanner itself, on declarations it must tell apart. */
static void
test_scanner(void)
{
	static const struct {
		const char *text;
		int bad;
	} cases[] = {
		{"static int count;\n", 1},
		{"static const char *name = \"x\";\n", 1},
		{"static const char *const names[] = {\"a\", \"b\"};\n", 0},
		{"static const int limits[2][3] = {{1, 2, 3}, {4, 5, 6}};\n", 0},
		{"int total = 0;\n", 1},
		{"static int (*hook)(void);\n", 1},
		{"static int (*const hook)(void) = f;\n", 0},
		{"static void f(int);\nint g(void) { return 0; }\n", 0},
		{"typedef struct S { int a; } S;\nextern int x;\n", 0},
		{"void f(void) { static int calls; int local = 0; (void)local; calls++; }\n", 1},
		{"void f(void) { static const double k[] = {1, 2}; (void)k; }\n", 0},
		{"struct { int a; } anon;\n", 1},
		{"enum { N = 3 };\nconst Backend b = {\"x\", f};\n", 0},
		{"static const struct { const char *s; int *p; } t[] = {{\"a\", 0}};\n", 0},
		{"static struct { char **path; int n; } held;\n", 1},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		char *s = strdup(cases[i].text);
		blank(s);
		int seen = 0;
		int bad = scan("(case)", s, &seen, false);
		assert_named(seen == cases[i].bad && bad == seen, __LINE__, __FILE__,
		             "%d mutable in: %s", seen, cases[i].text);
		free(s);
	}
}

CU_TestInfo globals_tests[] = {
	{"the scanner tells mutable statics from constants", test_scanner},
	{"no mutable global outside the allow-list (signal handlers, OOM, MPI keyval)",
	 test_no_mutable_globals},
	CU_TEST_INFO_NULL,
};
