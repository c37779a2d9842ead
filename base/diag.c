/*
 * diag.c: diagnostics in the form compilers share,
 *
 *     file:line:col: error: message
 *     <the source line>
 *     <spaces and tabs up to the column>^
 *
 * Errors are counted, not fatal: each phase reports all it finds and the
 * driver stops between phases, so nothing is written once an error exists.
 * All of it is per run, in the Diag the caller passes (base.h); the one
 * global is the Diag out_of_memory reports through.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

/* The one process-wide pointer: malloc may fail anywhere, in code that
 * has no Diag at hand (xmalloc, the arenas), as a signal may arrive
 * anywhere; main registers the run's Diag here once (diag_on_oom). */
static Diag *oom_diag;

Diag
diag_new(void)
{
	return (Diag){.file = "<input>"};
}

void
diag_mute(Diag *d, bool on)
{
	d->mute_depth += on ? 1 : -1;
}

static void put_shown(FILE *, const char *s, size_t n);
static void put_file(FILE *, const Diag *);

/* Lines longer than this are quoted as a window around the column. */
enum { QUOTE_WIDTH = 120 };

void
diag_source(Diag *d, const char *file, const char *text, size_t len)
{
	d->file = file;
	d->text = text;
	d->len = len;
}

void
diag_stream(Diag *d, FILE *f)
{
	d->out = f;
}

void
diag_reset(Diag *d)
{
	d->errors = 0;
	d->muted = d->announced = false;
}

static FILE *
stream(const Diag *d)
{
	return d->out ? d->out : stderr;
}

void
diag_stopping(Diag *d)
{
	if (d->announced)
		return;
	d->announced = true;
	put_file(stream(d), d);
	fprintf(stream(d), ": error: too many errors (%d), stopping\n", DIAG_MAX_ERRORS);
}

int
nerrors(const Diag *d)
{
	return d->errors;
}

int
diag_too_many(const Diag *d)
{
	return d->errors >= DIAG_MAX_ERRORS;
}

/* One character of a quoted line as a terminal may show it, into buf (at
 * least 16 bytes), and its columns; the bytes it takes. A control
 * character (C0, DEL, C1) and a byte that is not UTF-8 are shown escaped,
 * "\x01", and so is a bidirectional control, "\u202E", which would
 * otherwise reorder what the reader sees (CVE-2021-42574); a tab is kept. */
static size_t
glyph(const unsigned char *q, const unsigned char *end, char *buf, int *cols)
{
	unsigned c = q[0];
	size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
	         : (c & 0xf8) == 0xf0 ? 4 : 0;
	unsigned cp = n == 1 ? c : n ? c & (0x7fu >> n) : 0;
	for (size_t i = 1; i < n; i++) {
		if (q + i >= end || (q[i] & 0xc0) != 0x80) {
			n = 0; /* a sequence cut short */
			break;
		}
		cp = cp << 6 | (q[i] & 0x3fu);
	}
	static const unsigned least[] = {0, 0, 0x80, 0x800, 0x10000};
	if (n == 0 || cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
		*cols = snprintf(buf, 16, "\\x%02X", c); /* not UTF-8: the byte alone */
		return 1;
	}
	bool control = (cp < 0x20 && cp != '\t') || (cp >= 0x7f && cp < 0xa0);
	bool bidi = (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	            cp == 0x200e || cp == 0x200f || cp == 0x061c;
	if (control && cp < 0x80)
		*cols = snprintf(buf, 16, "\\x%02X", cp);
	else if (control || bidi)
		*cols = snprintf(buf, 16, "\\u%04X", cp);
	else
		memcpy(buf, q, n), buf[n] = 0, *cols = 1;
	return n;
}

/* s[0..n) as glyph shows it: what a message says of the input (a name, a
 * path, libxml2's words on bytes it could not read) cannot send a
 * terminal control characters or reorder the line. */
static void
put_shown(FILE *f, const char *s, size_t n)
{
	char g[16];
	int cols;
	for (const char *q = s, *end = s + n; q < end;) {
		q += glyph((const unsigned char *)q, (const unsigned char *)end, g, &cols);
		fputs(g, f);
	}
}

/* The file a diagnostic names, shown as its message is. */
static void
put_file(FILE *f, const Diag *d)
{
	const char *file = d->file ? d->file : "collc";
	put_shown(f, file, strlen(file));
}

static void
quote(const Diag *d, Loc loc)
{
	FILE *f = stream(d);
	const char *p = d->text, *end = d->text + d->len;
	for (int l = 1; p < end && l < loc.line; p++)
		if (*p == '\n')
			l++;
	const char *eol = memchr(p, '\n', (size_t)(end - p));
	if (!eol)
		eol = end;
	if (eol > p && eol[-1] == '\r')
		eol--; /* CRLF files */
	const char *at = p + (loc.col > 0 ? loc.col - 1 : 0);
	if (at > eol)
		at = eol;
	const char *from = p, *to = eol;
	if (to - from > QUOTE_WIDTH) {
		from = at - QUOTE_WIDTH / 2 > p ? at - QUOTE_WIDTH / 2 : p;
		to = from + QUOTE_WIDTH < eol ? from + QUOTE_WIDTH : eol;
	}
	if (from > p)
		fputs("...", f);
	put_shown(f, from, (size_t)(to - from));
	char g[16];
	int cols;
	if (to < eol)
		fputs("...", f);
	fputc('\n', f);
	if (from > p)
		fputs("   ", f);
	/* the caret under the column: a tab as a tab, each character as the
	 * columns it was shown in */
	for (const char *q = from; q < at;) {
		q += glyph((const unsigned char *)q, (const unsigned char *)to, g, &cols);
		if (g[0] == '\t')
			fputc('\t', f);
		else
			fprintf(f, "%*s", cols, "");
	}
	fputs("^\n", f);
}

static void report(const Diag *, const char *kind, Loc loc, const char *fmt, va_list ap)
	PRINTF_LIKE(4, 0);

static void
report(const Diag *d, const char *kind, Loc loc, const char *fmt, va_list ap)
{
	FILE *f = stream(d);
	char msg[4096]; /* a message longer than this is cut, "..." after it */
	int n = vsnprintf(msg, sizeof msg, fmt, ap);
	size_t len = n < 0 ? 0 : (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1;
	put_file(f, d);
	if (loc.line > 0)
		fprintf(f, ":%d:%d: %s: ", loc.line, loc.col, kind);
	else
		fprintf(f, ": %s: ", kind);
	put_shown(f, msg, len);
	fputs(n >= 0 && (size_t)n >= sizeof msg ? "...\n" : "\n", f);
	if (loc.line > 0 && d->text)
		quote(d, loc);
}

void
error_at(Diag *d, Loc loc, const char *fmt, ...)
{
	if (d->mute_depth > 0)
		return;
	if (d->errors >= DIAG_MAX_ERRORS) {
		d->muted = true;
		diag_stopping(d);
		return;
	}
	d->muted = false;
	va_list ap;
	va_start(ap, fmt);
	report(d, "error", loc, fmt, ap);
	va_end(ap);
	d->errors++;
}

void
warning_at(Diag *d, Loc loc, const char *fmt, ...)
{
	if (d->mute_depth > 0 || d->errors >= DIAG_MAX_ERRORS)
		return;
	d->muted = false; /* its notes follow it */
	va_list ap;
	va_start(ap, fmt);
	report(d, "warning", loc, fmt, ap);
	va_end(ap);
}

void
note_at(Diag *d, Loc loc, const char *fmt, ...)
{
	if (d->mute_depth > 0)
		return;
	if (d->muted)
		return;
	va_list ap;
	va_start(ap, fmt);
	report(d, "note", loc, fmt, ap);
	va_end(ap);
}

void
error_file(Diag *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(d, "error", (Loc){0, 0}, fmt, ap);
	va_end(ap);
	d->errors++;
}

void
die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("collc: internal error: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

void
diag_building(Diag *d, Loc loc, const char *what)
{
	d->building_loc = loc;
	snprintf(d->building, sizeof d->building, "%s", what);
}

void
diag_built(Diag *d)
{
	d->building_loc = (Loc){0, 0};
	d->building[0] = 0;
}

void
diag_on_oom(Diag *d)
{
	oom_diag = d;
}

/* Called when malloc has failed: prints from fixed storage only. */
void
out_of_memory(size_t bytes)
{
	Diag fallback = diag_new();
	Diag *d = oom_diag ? oom_diag : &fallback;
	double mib = (double)bytes / (1 << 20);
	if (d->building[0])
		error_at(d, d->building_loc, "out of memory building %s (an allocation of %.1f MiB failed)",
		         d->building, mib);
	else
		error_file(d, "out of memory (an allocation of %.1f MiB failed)", mib);
	exit(1);
}
