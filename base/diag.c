/*
 * diag.c: diagnostics in the form compilers share,
 *
 *     file:line:col: error: message
 *     <the source line>
 *     <spaces and tabs up to the column>^
 *
 * Errors are counted, not fatal: each phase reports all it finds and the
 * driver stops between phases, so nothing is written once an error exists.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

static const char *src_file = "<input>";
static const char *src_text;
static size_t src_len;
static FILE *out;
static int error_count;
static bool muted;     /* the last error was past the limit: its notes go too */
static bool announced; /* "too many errors" was said */
static int mute_depth;
static Loc building_loc; /* what the run is building, for out_of_memory */
static char building[160];

void
diag_mute(bool on)
{
	mute_depth += on ? 1 : -1;
}

/* Lines longer than this are quoted as a window around the column. */
enum { QUOTE_WIDTH = 120 };

void
diag_source(const char *file, const char *text, size_t len)
{
	src_file = file;
	src_text = text;
	src_len = len;
}

DiagSource
diag_current(void)
{
	return (DiagSource){src_file, src_text, src_len};
}

void
diag_restore(DiagSource d)
{
	diag_source(d.file, d.text, d.len);
}

void
diag_stream(FILE *f)
{
	out = f;
}

void
diag_reset(void)
{
	error_count = 0;
	muted = announced = false;
}

void
diag_stopping(void)
{
	if (announced)
		return;
	announced = true;
	fprintf(out ? out : stderr, "%s: error: too many errors (%d), stopping\n", src_file,
	        DIAG_MAX_ERRORS);
}

int
nerrors(void)
{
	return error_count;
}

int
diag_too_many(void)
{
	return error_count >= DIAG_MAX_ERRORS;
}

static FILE *
stream(void)
{
	return out ? out : stderr;
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

static void
quote(Loc loc)
{
	FILE *f = stream();
	const char *p = src_text, *end = src_text + src_len;
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
	char g[16];
	int cols;
	for (const char *q = from; q < to;) {
		q += glyph((const unsigned char *)q, (const unsigned char *)to, g, &cols);
		fputs(g, f);
	}
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

static void report(const char *kind, Loc loc, const char *fmt, va_list ap) PRINTF_LIKE(3, 0);

static void
report(const char *kind, Loc loc, const char *fmt, va_list ap)
{
	FILE *f = stream();
	if (loc.line > 0)
		fprintf(f, "%s:%d:%d: %s: ", src_file, loc.line, loc.col, kind);
	else
		fprintf(f, "%s: %s: ", src_file, kind);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	if (loc.line > 0 && src_text)
		quote(loc);
}

void
error_at(Loc loc, const char *fmt, ...)
{
	if (mute_depth > 0)
		return;
	if (error_count >= DIAG_MAX_ERRORS) {
		muted = true;
		diag_stopping();
		return;
	}
	muted = false;
	va_list ap;
	va_start(ap, fmt);
	report("error", loc, fmt, ap);
	va_end(ap);
	error_count++;
}

void
warning_at(Loc loc, const char *fmt, ...)
{
	if (mute_depth > 0 || error_count >= DIAG_MAX_ERRORS)
		return;
	muted = false; /* its notes follow it */
	va_list ap;
	va_start(ap, fmt);
	report("warning", loc, fmt, ap);
	va_end(ap);
}

void
note_at(Loc loc, const char *fmt, ...)
{
	if (mute_depth > 0)
		return;
	if (muted)
		return;
	va_list ap;
	va_start(ap, fmt);
	report("note", loc, fmt, ap);
	va_end(ap);
}

void
error_file(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report("error", (Loc){0, 0}, fmt, ap);
	va_end(ap);
	error_count++;
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
diag_building(Loc loc, const char *what)
{
	building_loc = loc;
	snprintf(building, sizeof building, "%s", what);
}

void
diag_built(void)
{
	building_loc = (Loc){0, 0};
	building[0] = 0;
}

/* Called when malloc has failed: prints from fixed storage only. */
void
out_of_memory(size_t bytes)
{
	double mib = (double)bytes / (1 << 20);
	if (building[0])
		error_at(building_loc, "out of memory building %s (an allocation of %.1f MiB failed)",
		         building, mib);
	else
		error_file("out of memory (an allocation of %.1f MiB failed)", mib);
	exit(1);
}
