/*
 * base.h: the bottom layer every other layer stands on: arena memory,
 * growable arrays, located diagnostics, and small string helpers.
 * Nothing here knows about the .coll language or the IR.
 */
#ifndef COLLC_BASE_H
#define COLLC_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "collc_limits.h"

#define countof(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__) || defined(__clang__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#define NOINLINE __attribute__((noinline)) /* rare work kept out of a hot loop's code */
#else
#define PRINTF_LIKE(f, a)
#define NOINLINE
#endif

/* ---- arena.c: region allocator; one arena per phase, freed whole ---- */

typedef struct ArenaChunk ArenaChunk;
typedef struct Arena {
	ArenaChunk *head;
} Arena; /* the zero value is an empty arena */

void *arena_alloc(Arena *, size_t);         /* zeroed, max_align_t aligned */
void *arena_array(Arena *, size_t n, size_t size); /* overflow-checked n*size */
char *arena_strndup(Arena *, const char *, size_t);
char *arena_strdup(Arena *, const char *);
char *arena_printf(Arena *, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* Hands a malloc'd block to the arena, which frees it with the rest (a
 * large array built with realloc, kept without a copy); returns it. */
void *arena_own(Arena *, void *block);
void arena_free(Arena *);
/* Hands every block of `from` to `to` (an attempt that succeeded kept, the
 * others freed); `from` is left empty. */
void arena_move(Arena *to, Arena *from);
#define NEW(a, T) ((T *)arena_alloc((a), sizeof(T)))

/*
 * A growable array in an arena: `T *v; int n, cap;` grown with VEC_PUSH.
 * The old storage stays in the arena until the arena is freed, which keeps
 * the code simple; arrays here are small (AST lists), the IR sizes its
 * arrays up front.
 */
void *arena_grow(Arena *, void *old, int *cap, size_t size);
#define VEC_PUSH(a, v, n, cap, x)                                          \
	do {                                                                   \
		if ((n) == (cap))                                                  \
			(v) = arena_grow((a), (v), &(cap), sizeof *(v));              \
		(v)[(n)++] = (x);                                                  \
	} while (0)

/* ---- diag.c: file:line:col diagnostics with the source line and a caret ---- */

typedef struct Loc {
	int line, col; /* 1-based; col counts bytes; line 0 = no location */
} Loc;

enum { DIAG_MAX_ERRORS = 20 };

/* The diagnostics of one run (or of one generated text checked within it):
 * every diagnostic function takes it first, as Lua's take lua_State. The
 * driver owns the run's Diag and each pass carries it in its context. */
typedef struct Diag {
	const char *file;   /* the source diagnostics name ("<input>" by default) */
	const char *text;   /* its text, quoted under located diagnostics; NULL: none */
	size_t len;         /* the bytes of text */
	FILE *out;          /* where diagnostics go; NULL: stderr */
	int errors;         /* errors counted so far (nerrors) */
	int mute_depth;     /* > 0 in trial builds: errors neither print nor count */
	bool muted;         /* the last error was past the limit: its notes go too */
	bool announced;     /* "too many errors" was said */
	Loc building_loc;   /* what the run is building, for out_of_memory ... */
	char building[160]; /* ... and its name ("" when nothing is) */
} Diag;

/* A Diag naming "<input>", writing to stderr, with no errors. */
Diag diag_new(void);
void diag_source(Diag *, const char *file, const char *text, size_t len);
void diag_stream(Diag *, FILE *); /* where diagnostics go; stderr by default */
void diag_reset(Diag *);          /* forget the error count (tests, or a new file) */
void error_at(Diag *, Loc, const char *fmt, ...) PRINTF_LIKE(3, 4);
void note_at(Diag *, Loc, const char *fmt, ...) PRINTF_LIKE(3, 4);
/* A located warning: printed as an error is, but not counted (the exit
 * status and the outputs are unchanged). */
void warning_at(Diag *, Loc, const char *fmt, ...) PRINTF_LIKE(3, 4);
void error_file(Diag *, const char *fmt, ...) PRINTF_LIKE(2, 3); /* no location */
int nerrors(const Diag *);
int diag_too_many(const Diag *); /* the error limit was reached: stop parsing */
void diag_stopping(Diag *);      /* says once that the limit stopped the run */
void diag_mute(Diag *, bool on); /* trial builds: errors neither print nor count */
_Noreturn void die(const char *fmt, ...) PRINTF_LIKE(1, 2); /* internal bug */
/* xml.c: text[0..len) parsed by libxml2 (no network, lines past 65535,
 * `flags` besides), printing nothing itself; NULL after an error located
 * where libxml2 stopped, "RULE" "not well-formed XML: " and its words. */
struct _xmlDoc;
struct _xmlDoc *xml_parse(Diag *, const char *text, size_t len, int flags, const char *rule);
/* What the run is building, for an out-of-memory error: "schedule 'AR'"
 * at its declaration; diag_built() forgets it. */
void diag_building(Diag *, Loc, const char *what);
void diag_built(Diag *);
/* The Diag out_of_memory reports through: registered once at start-up by
 * main (and the test runner, fuzzers, benches); NULL: a default one. */
void diag_on_oom(Diag *);
/* An allocation of `bytes` failed: a located error naming what was being
 * built, exit 1. Outputs are written whole at the end, so none is left. */
_Noreturn void out_of_memory(size_t bytes);

/* ---- util.c ---- */
/* "64 KiB", "1.50 MiB": bytes in the largest binary unit (up to TiB) they
 * reach; a whole number without decimals, else with `decimals` (with
 * fixed, every size but bytes with them: table columns). */
void bytes_in_units(double bytes, int decimals, bool fixed, char *buf, size_t len);

/* malloc, calloc and realloc that never return NULL (out of memory ends the
 * run with out_of_memory) and give a usable block for a zero size. */
void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);

/* memcpy and qsort for arrays that may be empty: a count of 0 may come with
 * a NULL pointer, which the C library functions must not be given. */
void copy_n(void *dst, const void *src, size_t n, size_t size);
void sort_n(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
int cmp_int(const void *a, const void *b); /* sort_n's comparison of ints, ascending */
/* A stable merge sort whose comparison takes a context (C11's qsort has
 * none, and a global would be state beside diagnostics). */
void sort_with(void *base, size_t n, size_t size,
               int (*cmp)(const void *, const void *, void *ctx), void *ctx);

/* _exit for a forked worker: a coverage build (COLLC_COVERAGE, `make
 * coverage`) first writes the worker's gcov counters, which _exit would
 * drop; any other build is _exit itself. */
_Noreturn void worker_exit(int status);

/* Line `line` of an XML text and the column of its first '<': libxml2
 * gives an element its line only (the MSCCL and NCCL topology readers).
 * An XmlLines cursor remembers where the last line asked for starts, so
 * asking for the lines in order costs one pass over the text (a reader
 * locating every element from the start was quadratic); start one with
 * {text, len} and line 0. */
typedef struct XmlLines {
	const char *text;
	size_t len;
	int line;  /* the line `at` starts (0: none yet) */
	size_t at;
} XmlLines;
Loc xml_lines_loc(XmlLines *, int line);
Loc xml_element_loc(const char *text, size_t len, int line);
int edit_distance(const char *a, const char *b);
/* The greatest common divisor of a and b (b >= 0; gcd64(a, 0) = a): exact
 * rates as fractions (the cut bound, tree packings). */
int64_t gcd64(int64_t a, int64_t b);
/* The candidate nearest to `name` (NULL if none is close enough to help). */
const char *nearest_name(const char *name, const char *const *cand, int ncand);
/* The text formats (schedule text, .sim) are text: a NUL or another control
 * byte (not tab, CR or LF) is reported at its place, since a name holding
 * one would be written back cut short. 0, or -1 after reporting. */
int text_only(Diag *, const char *text, size_t len);
/* Reads a whole file; NULL and a message in err[] on failure. "-" is stdin.
 * Its format (input_kind, from its first bytes) sets the size limit. */
char *read_file(const char *path, size_t *len, char *err, size_t errlen);
/* Seconds on the monotonic clock, for measuring how long something took. */
double wall_seconds(void);
/* The memory one run may plan for, in bytes: half the physical memory
 * (sysconf), so that work is refused before the system runs short. */
double memory_budget(void);
/* The input formats: each takes its own bytes of memory per byte read. */
typedef enum InputKind { IN_COLL, IN_SCHED_TEXT, IN_SIM_TEXT, IN_MSCCL_XML, NINPUT_KINDS } InputKind;
/* A file's format: MSCCL XML by its name (*.xml), schedule text and .sim by
 * their first line, else .coll (sweep specs and result tables too). */
InputKind input_kind(const char *path, const char *head, size_t len);
/* The largest input of a format read: its cap (collc_limits.h), or less when
 * the memory budget cannot hold its reading at its bytes per input byte. */
size_t input_limit(InputKind kind);
/* A UTF-8 byte-order mark (EF BB BF) opens text, and what a reader that
 * meets one says (an editor on Windows adds it; it was "3 unexpected
 * bytes"). */
#define BOM_MESSAGE \
	"a UTF-8 byte-order mark (bytes EF BB BF) starts the file; collc reads UTF-8 without one: " \
	"save the file without it"
bool starts_with_bom(const char *text, size_t len);
/* Writes through a temporary name then renames, so no half file is left. */
int write_file_atomic(const char *path, const char *data, size_t len,
                      char *err, size_t errlen);

/* An output built whole in memory (open_memstream), then written at once
 * with write_file_atomic: a run that fails part way writes nothing. */
typedef struct MemOut {
	FILE *f;    /* the stream, from memout_open to memout_close */
	char *buf;  /* what was written (NUL-terminated); the caller frees it */
	size_t len;
} MemOut;
FILE *memout_open(MemOut *);  /* returns m->f; no stream is an internal error */
/* m->buf and m->len then hold the bytes; closed, m may move (the open
 * stream writes to &m->buf and &m->len); a second close does nothing */
void memout_close(MemOut *);
/* Closes m, writes its bytes to path ("-": stdout) with write_file_atomic
 * and frees them; 0, or -1 and a message in err[]. */
int memout_write(MemOut *, const char *path, char *err, size_t errlen);
void memout_drop(MemOut *);   /* closes m and frees its bytes unwritten */

/* Temporaries removed if SIGINT or SIGTERM ends the run (tmpfiles.c): a
 * path held is unlinked (or, a directory, removed when empty) by the
 * signal's handler; its slot, or -1 for nothing. */
int tmp_hold(const char *path);
void tmp_release(int slot);
/* fsync of the directory holding path (the current one when path names
 * none): a rename into it reaches the disk (tmpfiles.c). */
void sync_parent(const char *path);

/* A directory output (tmpfiles.c), built in TARGET.PID.tmp beside its
 * target and moved into place whole. outdir_begin makes it; `pattern`
 * (NULL-ended) names the files the output writes (".et": a suffix;
 * "drop.c": a name). outdir_path names a file in it (malloc'd, held);
 * outdir_write writes a MemOut there whole and frees its bytes (-1 after
 * reporting).
 * outdir_commit fsyncs each file and the directory, carries the target's
 * other files (the user's) into it, renames the old output aside, the new
 * one in, and removes the old: no file of an earlier output stays.
 * outdir_abort removes the new one. 0, or -1 with a message in err. */
typedef struct OutDir {
	char *target, *stage;
	const char *const *pattern;
	int slot, *file, nfile, cap;
} OutDir;
int outdir_begin(OutDir *, const char *target, const char *const *pattern, char *err,
                 size_t errlen);
char *outdir_path(OutDir *, const char *name);
int outdir_write(Diag *, OutDir *, const char *name, MemOut *);
int outdir_commit(OutDir *, char *err, size_t errlen);
void outdir_abort(OutDir *);

#endif
