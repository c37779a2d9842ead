/*
 * targets.h: what each fuzz target does with one input (targets.c). The
 * libFuzzer entry points (fuzz_*.c) call these, and so does the golden
 * test, which replays tests/golden/NAME.{ir,xml,sim} (the finds) and
 * compares the diagnostics with NAME.err. Diagnostics go to `diag` under
 * the given file name. A broken invariant (a round trip that does not
 * hold, an unverified schedule leaving) aborts: that is the find.
 */
#ifndef COLLC_FUZZ_TARGETS_H
#define COLLC_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* .coll: parse, sema, lower, verify; fmt output parses to an equal AST and
 * is a fixed point. */
void fuzz_coll(const char *name, const uint8_t *data, size_t size, FILE *diag);
/* MSCCL XML: read and check (rules 1-13, 16) in both dialects; a valid
 * program also runs rules 14-15 symbolically. */
void fuzz_msccl(const char *name, const uint8_t *data, size_t size, FILE *diag);
/* Schedule text: read, verify, write back; the written text reads back and
 * is written the same. */
void fuzz_ir(const char *name, const uint8_t *data, size_t size, FILE *diag);
/* .sim: read, run each collective at two tiny sizes in both modes and both
 * synchronisations; written back, it reads the same. */
void fuzz_sim(const char *name, const uint8_t *data, size_t size, FILE *diag);
/* NCCL topology XML: read as a box; a box read is built as a graph whose
 * ranks are its GPUs by rank and whose links are its links. */
void fuzz_ncclxml(const char *name, const uint8_t *data, size_t size, FILE *diag);

#endif
