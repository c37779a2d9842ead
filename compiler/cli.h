/*
 * cli.h: the command line as getopt_long parses it (cli.c). Each command
 * is one CliCommand: its name, a one-line summary, its options with their
 * help, and the function that runs it. main.c lists the commands in one
 * table; `collc help CMD`, `collc CMD --help`, the usage text, the man
 * page's option lists and "did you mean" hints all come from these tables.
 */
#ifndef COLLC_CLI_H
#define COLLC_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "base.h"

typedef struct CliOpt {
	const char *name;   /* the long name, without "--" */
	char letter;        /* a short form ("-o"), or 0 */
	const char *arg;    /* the value's placeholder ("S"); NULL for a flag */
	const char *help;   /* one line */
} CliOpt;

typedef struct CliCommand {
	const char *name;
	const char *operands;  /* "FILE", "FILE.xml|FILE.coll" */
	const char *summary;   /* one line */
	const char *details;   /* paragraphs after the options (or NULL) */
	const CliOpt *opt;
	int nopt;
	int (*run)(Diag *, int argc, char **argv); /* argv[0] is the command's name */
	void (*more_help)(FILE *); /* after the details: a list from a table (or NULL) */
} CliCommand;

/* "collc: CMD: MESSAGE" and "Try 'collc CMD --help'." on stderr; 2. */
int cmd_usage_error(const char *cmd, const char *fmt, ...) PRINTF_LIKE(2, 3);

/* One option met: name is its long name, value NULL for a flag. Returns 0,
 * or the exit status of a usage error it reported. */
typedef int (*CliOnOpt)(void *ctx, const char *name, const char *value);

/* Parses argv[1..argc) by cmd's options (`--opt value`, `--opt=value`,
 * unambiguous prefixes, short letters), calling on_opt for each and taking
 * the one operand into *file. -h/--help prints the command's help: then
 * returns -1 (the command exits 0). 0 when parsed, 2 after a usage error
 * (with a suggestion for a misspelt option). */
int cli_parse(const CliCommand *cmd, int argc, char **argv, void *ctx, CliOnOpt on_opt,
              const char **file);
/* The index of value in choices[], or -1 after a usage error naming the
 * choices (and the nearest one). */
int cli_choice(const char *cmd, const char *opt, const char *value, const char *const *choices,
               int n);
/* A count option's value within lo..hi (decimal digits alone), or -1. */
int cli_count(const char *value, int lo, int hi);
/* A command's help: usage line, summary, options, details. */
void cli_help(const CliCommand *, FILE *);
/* The whole usage text: commands and their summaries. */
void cli_usage(const CliCommand *const *cmds, int n, FILE *);
/* The command named `name`, or NULL after a usage error with a suggestion. */
const CliCommand *cli_find(const CliCommand *const *cmds, int n, const char *name);

extern const CliCommand cli_check, cli_build, cli_fmt, cli_run, cli_sim, cli_explain;
extern const CliCommand cli_sweep; /* cmd_sweep.c */
extern const CliCommand cli_tune;  /* cmd_tune.c */
extern const CliCommand cli_nccl_topo; /* cmd_nccl_topo.c */

#endif
