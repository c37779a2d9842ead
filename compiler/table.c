/*
 * table.c: text tables sized to their contents (table.h). A cell that
 * starts with '\1' is a note: it runs to the end of its row unaligned.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

static void
push(Table *t, char *s)
{
	if (t->ncell == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->cell = xrealloc(t->cell, (size_t)t->cap * sizeof *t->cell);
	}
	t->cell[t->ncell++] = s;
}

static char *
dup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

void
table_init(Table *t, int ncol, const char *const *head, const char *align)
{
	*t = (Table){.ncol = ncol, .align = align};
	for (int i = 0; i < ncol; i++)
		push(t, dup(head[i]));
}

void
table_cell(Table *t, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	push(t, dup(buf));
}

void
table_note(Table *t, const char *text)
{
	size_t n = strlen(text) + 2;
	char *s = xmalloc(n);
	s[0] = '\1';
	memcpy(s + 1, text, n - 1);
	push(t, s);
	while (t->ncell % t->ncol)
		push(t, NULL);
}

void
table_print(const Table *t, FILE *f)
{
	int *w = xcalloc((size_t)t->ncol, sizeof *w);
	for (int i = 0; i < t->ncell; i++) {
		const char *s = t->cell[i];
		if (s && s[0] != '\1' && (int)strlen(s) > w[i % t->ncol])
			w[i % t->ncol] = (int)strlen(s);
	}
	for (int i = 0; i < t->ncell; i++) {
		int c = i % t->ncol;
		const char *s = t->cell[i];
		if (s && s[0] == '\1') {
			fputs(s + 1, f);
		} else if (s) {
			bool last = c == t->ncol - 1 || i + 1 >= t->ncell || !t->cell[i + 1];
			if (t->align[c] == 'r')
				fprintf(f, "%*s", w[c], s);
			else if (last)
				fputs(s, f);
			else
				fprintf(f, "%-*s", w[c], s);
			if (!last)
				fputs("  ", f);
		}
		if (c == t->ncol - 1)
			fputc('\n', f);
	}
	free(w);
}

void
table_free(Table *t)
{
	for (int i = 0; i < t->ncell; i++)
		free(t->cell[i]);
	free(t->cell);
	*t = (Table){0};
}
