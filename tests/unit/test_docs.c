/*
 * test_docs.c: the documentation as a user reads it. Every collc command
 * shown in README.md and the pages of docs/ runs as printed: lines after a "$ "
 * prompt in a fenced block and the lines of ```sh blocks, run from a
 * scratch directory that holds the repository's examples/ and tests/ and
 * the files the same page shows in ```coll blocks (the last one before the
 * command, under the .coll name the command uses). A command whose printed
 * output shows an error must fail, any other must succeed, and the first
 * line printed after it must be in its output. No link leaves the
 * repository and nothing cites ../shared.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "registry.h"
#include "tests.h"

#ifndef COLLC_BIN
#define COLLC_BIN "bin/collc"
#endif

static char scratch[] = "/tmp/collc-docs-XXXXXX";

static bool
exists_in(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return stat(path, &st) == 0;
}

/* Writes the page's last ```coll block under every .coll name in cmd that
 * the scratch directory does not have. */
static void
provide_files(const char *cmd, const char *coll)
{
	char word[256];
	for (const char *p = cmd; *p;) {
		while (*p == ' ')
			p++;
		size_t n = strcspn(p, " ");
		if (n > 5 && n < sizeof word && strncmp(p + n - 5, ".coll", 5) == 0) {
			snprintf(word, sizeof word, "%.*s", (int)n, p);
			if (coll && !strchr(word, '/') && !exists_in(scratch, word)) {
				char path[PATH_MAX];
				snprintf(path, sizeof path, "%s/%s", scratch, word);
				FILE *f = fopen(path, "w");
				if (f) {
					fputs(coll, f);
					fclose(f);
				}
			}
		}
		p += n;
	}
}

static void
run_shown(const char *doc, int line, const char *cmd, const char *shown, const char *coll)
{
	provide_files(cmd, coll);
	char full[4096];
	snprintf(full, sizeof full, "cd %s && PATH=%s/bin:$PATH %s >out.txt 2>&1", scratch, scratch,
	         cmd);
	int st = system(full);
	int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/out.txt", scratch);
	char *out = slurp(path, NULL);
	/* collc's own messages (not a file's) fail too, except its notes */
	bool want_fail = shown && (strstr(shown, "error") ||
	                           (strncmp(shown, "collc: ", 7) == 0 && !strstr(shown, ": note: ")));
	assert_named(want_fail ? rc != 0 : rc == 0, line, doc, "%s:%d: '%s' exits %d:\n%s", doc,
	             line, cmd, rc, out ? out : "");
	if (shown && *shown) {
		char first[512];
		snprintf(first, sizeof first, "%.*s", (int)strcspn(shown, "\n"), shown);
		assert_named(out && strstr(out, first) != NULL, line, doc,
		             "%s:%d: '%s' does not print\n%s\nbut\n%s", doc, line, cmd, first,
		             out ? out : "");
	}
	free(out);
}

/* The command of a line, or NULL: collc commands only (make, mpicc and
 * mpirun lines need the build and MPI around them). */
static const char *
collc_command(const char *line)
{
	if (strncmp(line, "bin/collc ", 10) == 0 || strncmp(line, "collc ", 6) == 0)
		return line;
	return NULL;
}

static void
check_doc(const char *doc)
{
	char *text = slurp(doc, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	char *coll = NULL, lang[32] = "";
	bool in = false;
	char *block = NULL;
	size_t blen = 0;
	int lineno = 0, start = 0;
	for (char *l = text, *next; l && *l; l = next) {
		next = strchr(l, '\n');
		if (next)
			*next++ = 0;
		lineno++;
		const char *t = l + strspn(l, " ");
		if (strncmp(t, "```", 3) == 0) {
			if (!in) {
				in = true;
				snprintf(lang, sizeof lang, "%s", t + 3);
				free(block);
				block = calloc(1, 1);
				blen = 0;
				start = lineno;
				continue;
			}
			in = false;
			if (strcmp(lang, "coll") == 0) {
				free(coll);
				coll = block;
				block = NULL;
			} else if (block) {
				/* run the block's commands */
				int ln = start;
				char *save = block;
				for (char *b = block, *bn; b && *b; b = bn, ln++) {
					bn = strchr(b, '\n');
					if (bn)
						*bn++ = 0;
					const char *cmd = NULL;
					if (strncmp(b, "$ ", 2) == 0)
						cmd = collc_command(b + 2);
					else if (strcmp(lang, "sh") == 0 && b[0] != '#')
						cmd = collc_command(b);
					if (!cmd)
						continue;
					/* what is shown after a prompt, up to the next one */
					char shown[2048] = "";
					if (b[0] == '$' && bn && strncmp(bn, "$ ", 2) != 0) {
						size_t n = strcspn(bn, "$");
						snprintf(shown, sizeof shown, "%.*s", (int)n, bn);
					}
					run_shown(doc, ln + 1, cmd, b[0] == '$' ? shown : NULL, coll);
				}
				free(save);
				block = NULL;
			}
			continue;
		}
		if (in && block) {
			size_t n = strlen(l);
			block = realloc(block, blen + n + 2);
			memcpy(block + blen, l, n);
			blen += n;
			block[blen++] = '\n';
			block[blen] = 0;
		}
	}
	free(block), free(coll), free(text);
}

static void
test_commands_run(void)
{
	char cmd[PATH_MAX * 8], cwd[PATH_MAX];
	CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(scratch));
	const char *bin = COLLC_BIN;
	snprintf(cmd, sizeof cmd, "mkdir -p %s/bin && ln -s %s/examples %s/tests %s/ && "
	         "ln -s %s%s%s %s/bin/collc", scratch, cwd, cwd, scratch, bin[0] == '/' ? "" : cwd,
	         bin[0] == '/' ? "" : "/", bin, scratch);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	glob_t g;
	check_doc("README.md");
	CU_ASSERT_EQUAL_FATAL(glob("docs/*.md", 0, NULL, &g), 0);
	for (size_t i = 0; i < g.gl_pathc; i++)
		check_doc(g.gl_pathv[i]);
	globfree(&g);
	snprintf(cmd, sizeof cmd, "rm -rf %s", scratch);
	CU_ASSERT_EQUAL(system(cmd), 0);
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

CU_TestInfo docs_tests[] = {
	{"every collc command in README and docs runs as printed", test_commands_run},
	{"no link leaves the repository; nothing cites ../shared", test_links_inside},
	{"language.md's algorithm table is the registry's", test_algorithm_table},
	CU_TEST_INFO_NULL,
};
