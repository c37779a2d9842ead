/*
 * driver.h: the command line's shared pieces (driver.c). Each command is a
 * function `int cmd_NAME(int argc, char **argv)` returning the exit status:
 * 0 success, 1 errors in the input, 2 bad usage.
 */
#ifndef COLLC_DRIVER_H
#define COLLC_DRIVER_H

#include <stdbool.h>

#include "ast.h"
#include "backend.h"
#include "ir.h"

typedef struct Input {
	Arena arena;
	char *text;
	File *file;  /* a .coll file */
	Prog prog;   /* built (build), or read from an IR file */
	bool is_ir;
} Input;

/* "collc: MESSAGE" and a hint on stderr; returns 2. */
int usage_error(const char *fmt, ...) PRINTF_LIKE(1, 2);
/* A command's argument that is not one of its options: the input file,
 * taken once into *path. 0, or the usage error's status for an unknown
 * option or a second file. */
int file_operand(const char *command, const char *arg, const char **path);
/* The usage error for a command given no FILE. */
int missing_file(const char *command);
/* Reads, parses and checks path; with `build` lowers it to the IR too (an
 * IR file is read instead), `auto` choosing for `size` bytes. 0 if clean. */
int load(const char *path, Input *, bool build, double size);
void input_free(Input *);
/* "1MiB", "64 KiB", "1048576": bytes, or -1. */
double parse_size(const char *);
/* A number with an optional unit of the given kind, in the kind's base
 * unit (bytes, bits/s, seconds, joules); a plain number as is; -1 if bad. */
double parse_quantity(const char *, QtyKind);
/* s as a JSON string. */
void json_string(FILE *, const char *s);
/* "64 KiB", "1.50 MiB"; "16.722 us" */
void human_bytes(double bytes, char *buf, size_t len);
void human_time(double seconds, char *buf, size_t len);
/* Writes buf to out ("-" or NULL: stdout) whole; 1 after reporting. */
int write_output(const char *out, const char *buf, size_t len);

int cmd_check(int argc, char **argv);
int cmd_build(int argc, char **argv);
int cmd_fmt(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_explain(int argc, char **argv); /* cmd_explain.c */
int cmd_sweep(int argc, char **argv);   /* cmd_sweep.c */

#endif
