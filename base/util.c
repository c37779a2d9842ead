/*
 * util.c: string distance for "did you mean" hints, a worker's exit, and whole-file I/O:
 * inputs are read whole (the diagnostics quote them), outputs are written
 * to a temporary name and renamed so that a failure never leaves half a file.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"

#ifdef COLLC_COVERAGE
void __gcov_dump(void); /* libgcov's: writes the counters of this process */
#endif

void
worker_exit(int status)
{
#ifdef COLLC_COVERAGE
	__gcov_dump();
#endif
	_exit(status);
}

/* Optimal string alignment distance: insertions, deletions, substitutions
 * and transpositions of neighbours ("tours" is one edit from "torus"). */
int
edit_distance(const char *a, const char *b)
{
	enum { MAX = 64 };
	size_t la = strlen(a), lb = strlen(b);
	if (la > MAX || lb > MAX)
		return la > lb ? (int)la : (int)lb; /* not worth comparing */
	int d[MAX + 1][MAX + 1]; /* 17 KB on the stack: no state between calls */
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[la][lb];
}

const char *
nearest_name(const char *name, const char *const *cand, int ncand)
{
	const char *best = NULL;
	int bestd = 0;
	size_t len = strlen(name);
	/* Allow about one edit per three characters, at least one. */
	int limit = (int)((len + 1) / 3) > 1 ? (int)((len + 1) / 3) : 1;
	for (int i = 0; i < ncand; i++) {
		int d = edit_distance(name, cand[i]);
		if (d <= limit && (!best || d < bestd)) {
			best = cand[i];
			bestd = d;
		}
	}
	return best;
}

double
memory_budget(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || page <= 0)
		return 4.0 * (1 << 30); /* unknown: assume a small machine */
	return (double)pages * (double)page / 2;
}

/* What each input format costs to read (collc_limits.h, docs/limits.md). */
static const struct {
	const char *what;
	int per_byte;
	size_t cap;
} input_format[NINPUT_KINDS] = {
	[IN_COLL] = {".coll files", COLL_BYTES_PER_INPUT_BYTE, MAX_COLL_INPUT_BYTES},
	[IN_SCHED_TEXT] = {"schedule text files", SCHED_TEXT_BYTES_PER_INPUT_BYTE,
	                   MAX_TEXT_INPUT_BYTES},
	[IN_SIM_TEXT] = {".sim files", SIM_TEXT_BYTES_PER_INPUT_BYTE, MAX_TEXT_INPUT_BYTES},
	[IN_MSCCL_XML] = {"MSCCL XML files", MSCCL_XML_BYTES_PER_INPUT_BYTE, MAX_XML_INPUT_BYTES},
};

size_t
input_limit(InputKind kind)
{
	double parsable = memory_budget() / input_format[kind].per_byte;
	size_t cap = input_format[kind].cap;
	return parsable < (double)cap ? (size_t)parsable : cap;
}

InputKind
input_kind(const char *path, const char *head, size_t len)
{
	size_t plen = strlen(path);
	if (plen > 4 && strcmp(path + plen - 4, ".xml") == 0)
		return IN_MSCCL_XML;
	if (len >= 9 && memcmp(head, "collc-ir ", 9) == 0)
		return IN_SCHED_TEXT;
	if (len >= 9 && memcmp(head, "collc-sim", 9) == 0)
		return IN_SIM_TEXT;
	return IN_COLL;
}

/* size: the file's, or (known) false when reading stopped at the limit. */
static void
input_too_large(const char *path, InputKind kind, size_t size, bool known, char *err,
                size_t errlen)
{
	size_t limit = input_limit(kind);
	bool in = strcmp(path, "-") == 0; /* reading stopped at the limit: nothing more was read */
	snprintf(err, errlen, "%s%s%s is %s%zu MiB; collc reads %s of at most %zu MiB here "
	         "(reading one takes up to %d bytes of memory per byte, and a run may use %.1f GiB, "
	         "half the physical memory; docs/limits.md)", in ? "" : "'",
	         in ? "standard input" : path, in ? "" : "'", known ? "" : "over ",
	         known ? (size + (1 << 20) - 1) >> 20 : size >> 20, input_format[kind].what,
	         limit >> 20, input_format[kind].per_byte, memory_budget() / (1 << 30));
}

/* The first bytes, enough to tell the format: a regular file's size is then
 * held against its format's limit before the rest is read. */
enum { HEAD_BYTES = 16 };

char *
read_file(const char *path, size_t *lenp, char *err, size_t errlen)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	bool have_stat = fstat(fileno(f), &st) == 0;
	if (have_stat && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "cannot read '%s': it is a directory", path);
		if (f != stdin)
			fclose(f);
		return NULL;
	}
	size_t cap = 4096;
	char *buf = xmalloc(cap + 1);
	size_t len = fread(buf, 1, HEAD_BYTES, f);
	InputKind kind = input_kind(path, buf, len);
	size_t limit = input_limit(kind);
	if (have_stat && S_ISREG(st.st_mode) && (size_t)st.st_size > limit) {
		input_too_large(path, kind, (size_t)st.st_size, true, err, errlen);
		goto fail;
	}
	for (size_t n = len; n > 0;) {
		if (len == cap) {
			if (cap >= limit) {
				input_too_large(path, kind, limit, false, err, errlen);
				goto fail;
			}
			cap = cap * 2 < limit ? cap * 2 : limit;
			buf = xrealloc(buf, cap + 1);
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		goto fail;
	}
	if (f != stdin)
		fclose(f);
	buf[len] = '\0';
	*lenp = len;
	return buf;
fail:
	if (f != stdin)
		fclose(f);
	free(buf);
	return NULL;
}

/* Writes all of data to f; 0 on success. */
static int
write_all(FILE *f, const char *data, size_t len)
{
	int ok = fwrite(data, 1, len, f) == len;
	ok &= fflush(f) == 0;
	ok &= !ferror(f);
	return ok ? 0 : -1;
}

/* The file a symbolic link whose target does not exist names (malloc'd),
 * followed link by link (at most 40, as the kernel does), relative to each
 * link's directory; NULL when path is no such link. */
static char *
dangling_target(const char *path)
{
	struct stat st;
	char *cur = NULL;
	for (int hops = 0; hops < 40 && lstat(cur ? cur : path, &st) == 0 && S_ISLNK(st.st_mode);
	     hops++) {
		const char *at = cur ? cur : path;
		char link[4096];
		ssize_t n = readlink(at, link, sizeof link - 1);
		if (n < 0)
			break;
		link[n] = 0;
		const char *slash = strrchr(at, '/');
		size_t dir = link[0] == '/' || !slash ? 0 : (size_t)(slash - at) + 1;
		char *next = xmalloc(dir + (size_t)n + 1);
		memcpy(next, at, dir);
		memcpy(next + dir, link, (size_t)n + 1);
		free(cur);
		cur = next;
	}
	return cur;
}

int
write_file_atomic(const char *path, const char *data, size_t len,
                  char *err, size_t errlen)
{
	if (strcmp(path, "-") == 0) {
		if (write_all(stdout, data, len) != 0) {
			snprintf(err, errlen, "cannot write to standard output");
			return -1;
		}
		return 0;
	}
	/* A symbolic link is written through: the temporary goes beside its
	 * target, and the link stays, even when its target does not exist yet. */
	char *real = realpath(path, NULL);
	if (!real)
		real = dangling_target(path);
	const char *target = real ? real : path;
	struct stat st;
	bool exists = stat(target, &st) == 0;
	if (exists && !S_ISREG(st.st_mode)) {
		/* a device or a pipe cannot be replaced: write to it directly */
		FILE *f = fopen(target, "wb");
		int rc = f ? write_all(f, data, len) : -1;
		if (f && fclose(f) != 0)
			rc = -1;
		if (rc != 0)
			snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
		free(real);
		return rc;
	}
	size_t n = strlen(target) + 32;
	char *tmp = xmalloc(n);
	snprintf(tmp, n, "%s.%ld.tmp", target, (long)getpid());
	int held = tmp_hold(tmp); /* removed if SIGINT or SIGTERM ends the run */
	FILE *f = fopen(tmp, "wb");
	if (!f) {
		snprintf(err, errlen, "cannot create '%s': %s", tmp, strerror(errno));
		tmp_release(held);
		free(tmp);
		free(real);
		return -1;
	}
	int ok = write_all(f, data, len) == 0;
	if (ok && exists)
		ok = fchmod(fileno(f), st.st_mode & 07777) == 0; /* keep the file's mode */
	ok = ok && fsync(fileno(f)) == 0; /* the bytes on the disk before the rename */
	ok &= fclose(f) == 0;
	if (ok && rename(tmp, target) != 0)
		ok = 0;
	if (ok)
		sync_parent(target);
	if (!ok) {
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
		remove(tmp);
	}
	tmp_release(held);
	free(tmp);
	free(real);
	return ok ? 0 : -1;
}

FILE *
memout_open(MemOut *m)
{
	*m = (MemOut){0};
	m->f = open_memstream(&m->buf, &m->len);
	if (!m->f)
		die("open_memstream failed");
	return m->f;
}

void
memout_close(MemOut *m)
{
	if (m->f)
		fclose(m->f);
	m->f = NULL;
}

int
memout_write(MemOut *m, const char *path, char *err, size_t errlen)
{
	memout_close(m);
	int rc = write_file_atomic(path, m->buf, m->len, err, errlen);
	free(m->buf);
	m->buf = NULL;
	return rc;
}

void
memout_drop(MemOut *m)
{
	memout_close(m);
	free(m->buf);
	m->buf = NULL;
}

void *
xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	if (!p)
		out_of_memory(size);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		out_of_memory(size && n > SIZE_MAX / size ? SIZE_MAX : n * size);
	return p;
}

void *
xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p)
		out_of_memory(size);
	return p;
}

double
wall_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void
copy_n(void *dst, const void *src, size_t n, size_t size)
{
	if (n > 0)
		memcpy(dst, src, n * size);
}

void
sort_n(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Sorts [lo, hi) of base through tmp; runs of equal keys keep their order. */
static void
merge_sort(char *base, char *tmp, size_t lo, size_t hi, size_t size,
           int (*cmp)(const void *, const void *, void *), void *ctx)
{
	if (hi - lo < 2)
		return;
	size_t mid = lo + (hi - lo) / 2;
	merge_sort(base, tmp, lo, mid, size, cmp, ctx);
	merge_sort(base, tmp, mid, hi, size, cmp, ctx);
	if (cmp(base + (mid - 1) * size, base + mid * size, ctx) <= 0)
		return; /* already in order */
	size_t i = lo, j = mid, k = 0;
	while (i < mid && j < hi) {
		size_t from = cmp(base + j * size, base + i * size, ctx) < 0 ? j++ : i++;
		memcpy(tmp + k++ * size, base + from * size, size);
	}
	while (i < mid)
		memcpy(tmp + k++ * size, base + i++ * size, size);
	while (j < hi)
		memcpy(tmp + k++ * size, base + j++ * size, size);
	memcpy(base + lo * size, tmp, k * size);
}

void
sort_with(void *base, size_t n, size_t size,
          int (*cmp)(const void *, const void *, void *ctx), void *ctx)
{
	if (n < 2)
		return;
	char *tmp = xmalloc(n * size);
	merge_sort(base, tmp, 0, n, size, cmp, ctx);
	free(tmp);
}

bool
starts_with_bom(const char *text, size_t len)
{
	return len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0;
}

int
text_only(Diag *dg, const char *text, size_t len)
{
	Loc at = {1, 1};
	for (size_t i = 0; i < len; i++) {
		unsigned char b = (unsigned char)text[i];
		if ((b < 0x20 && b != '\n' && b != '\t' && b != '\r') || b == 0x7f) {
			error_at(dg, at, "unexpected byte 0x%02x", b);
			return -1;
		}
		at = b == '\n' ? (Loc){at.line + 1, 1} : (Loc){at.line, at.col + 1};
	}
	return 0;
}

int64_t
gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

Loc
xml_lines_loc(XmlLines *x, int line)
{
	if (x->line < 1 || x->line > line)
		x->line = 1, x->at = 0; /* from the start: the first time, or a line before the last */
	const char *text = x->text;
	size_t i = x->at, len = x->len;
	int l = x->line;
	while (i < len && l < line) {
		if (text[i] == '\n')
			l++;
		i++;
	}
	x->line = l, x->at = i;
	int col = 1;
	for (size_t j = i; j < len && text[j] != '\n'; j++)
		if (text[j] == '<') {
			col = (int)(j - i) + 1;
			break;
		}
	return (Loc){line, col};
}

Loc
xml_element_loc(const char *text, size_t len, int line)
{
	XmlLines x = {text, len, 0, 0};
	return xml_lines_loc(&x, line);
}

void
bytes_in_units(double b, int decimals, bool fixed, char *buf, size_t len)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int k = 0;
	while (b >= 1024 && k < 4) {
		b /= 1024;
		k++;
	}
	bool whole = b == (double)(long long)b;
	snprintf(buf, len, "%.*f %s", k == 0 || (!fixed && whole) ? 0 : decimals, b, unit[k]);
}
