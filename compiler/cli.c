/*
 * cli.c: the command line. Options are parsed by getopt_long from each
 * command's table (cli.h), so `--opt value`, `--opt=value`, unambiguous
 * prefixes and options after the FILE all work as in other GNU tools.
 * Usage errors name the command, suggest the nearest option or command,
 * point at the command's help and exit 2.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "cli.h"

enum { MAX_OPTS = 64, OPT_HELP = 1000, OPT_BASE = 256 };

int
cmd_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "collc: %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry 'collc %s --help'.\n", cmd);
	va_end(ap);
	return 2;
}

/* "--name" of the option argv[i] starts with, without any "=value". */
static void
option_word(const char *arg, char *buf, size_t len)
{
	snprintf(buf, len, "%s", arg);
	char *eq = strchr(buf, '=');
	if (eq)
		*eq = 0;
}

static int
unknown_option(const CliCommand *cmd, const char *arg)
{
	char word[128];
	option_word(arg, word, sizeof word);
	const char *names[MAX_OPTS + 1];
	int n = 0;
	for (int i = 0; i < cmd->nopt; i++)
		names[n++] = cmd->opt[i].name;
	names[n++] = "help";
	const char *bare = word + (word[1] == '-' ? 2 : 1);
	int matches = 0;
	for (int i = 0; word[1] == '-' && i < n; i++)
		matches += strncmp(names[i], bare, strlen(bare)) == 0;
	if (matches > 1)
		return cmd_usage_error(cmd->name, "option '%s' is ambiguous", word);
	const char *near = nearest_name(bare, names, n);
	if (near)
		return cmd_usage_error(cmd->name, "unknown option '%s'; did you mean '--%s'?", word,
		                       near);
	return cmd_usage_error(cmd->name, "unknown option '%s'", word);
}

/* The option table entry a getopt_long result stands for, or NULL. */
static const CliOpt *
option_of(const CliCommand *cmd, int c)
{
	if (c >= OPT_BASE && c < OPT_BASE + cmd->nopt)
		return &cmd->opt[c - OPT_BASE];
	for (int i = 0; i < cmd->nopt; i++)
		if (cmd->opt[i].letter && cmd->opt[i].letter == c)
			return &cmd->opt[i];
	return NULL;
}

int
cli_parse(const CliCommand *cmd, int argc, char **argv, void *ctx, CliOnOpt on_opt,
          const char **file)
{
	if (cmd->nopt > MAX_OPTS)
		die("%s: too many options", cmd->name);
	struct option lo[MAX_OPTS + 2];
	char shorts[2 * MAX_OPTS + 4] = ":h";
	size_t ns = 2;
	for (int i = 0; i < cmd->nopt; i++) {
		const CliOpt *o = &cmd->opt[i];
		lo[i] = (struct option){o->name, o->arg ? required_argument : no_argument, NULL,
		                        OPT_BASE + i};
		if (o->letter) {
			shorts[ns++] = o->letter;
			if (o->arg)
				shorts[ns++] = ':';
		}
	}
	shorts[ns] = 0;
	lo[cmd->nopt] = (struct option){"help", no_argument, NULL, OPT_HELP};
	lo[cmd->nopt + 1] = (struct option){0, 0, 0, 0};
	opterr = 0;
	optind = 0; /* glibc: start afresh */
	int c;
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		const char *arg = argv[optind - 1];
		if (c == 'h' || c == OPT_HELP) {
			cli_help(cmd, stdout);
			return -1;
		}
		if (c == ':') {
			char word[128];
			option_word(arg, word, sizeof word);
			const CliOpt *o = optopt ? option_of(cmd, optopt) : NULL;
			return cmd_usage_error(cmd->name, "option '%s' needs a value (%s)",
			                       optopt && !o ? word : arg, o ? o->arg : "see --help");
		}
		if (c == '?') {
			if (optopt && optopt < OPT_BASE) {
				char w[3] = {'-', (char)optopt, 0};
				return unknown_option(cmd, w);
			}
			if (optopt >= OPT_BASE)
				return cmd_usage_error(cmd->name, "option '--%s' takes no value",
				                       option_of(cmd, optopt)->name);
			return unknown_option(cmd, arg);
		}
		const CliOpt *o = option_of(cmd, c);
		if (!o)
			die("getopt_long returned %d", c);
		int rc = on_opt(ctx, o->name, o->arg ? optarg : NULL);
		if (rc)
			return rc;
	}
	for (int i = optind; i < argc; i++) {
		if (*file)
			return cmd_usage_error(cmd->name, "one %s, got also '%s'", cmd->operands, argv[i]);
		*file = argv[i];
	}
	if (!*file)
		return cmd_usage_error(cmd->name, "missing %s", cmd->operands);
	return 0;
}

int
cli_count(const char *value, int lo, int hi)
{
	char *end;
	long v = strtol(value, &end, 10);
	return end != value && !*end && v >= lo && v <= hi ? (int)v : -1;
}

int
cli_choice(const char *cmd, const char *opt, const char *value, const char *const *choices, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(value, choices[i]) == 0)
			return i;
	char list[256] = "";
	size_t len = 0;
	for (int i = 0; i < n && len < sizeof list; i++)
		len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
		                        i == 0 ? "" : i == n - 1 ? " or " : ", ", choices[i]);
	const char *near = nearest_name(value, choices, n);
	if (near)
		cmd_usage_error(cmd, "--%s '%s': did you mean '%s'? (it is %s)", opt, value, near, list);
	else
		cmd_usage_error(cmd, "--%s is %s, not '%s'", opt, list, value);
	return -1;
}

void
cli_help(const CliCommand *cmd, FILE *f)
{
	fprintf(f, "usage: collc %s %s [options]\n\n%s\n", cmd->name, cmd->operands, cmd->summary);
	fputs("\noptions:\n", f);
	for (int i = 0; i < cmd->nopt; i++) {
		const CliOpt *o = &cmd->opt[i];
		char head[96];
		int n = snprintf(head, sizeof head, "  %s%s--%s%s%s", o->letter ? "-" : "",
		                 o->letter ? (char[]){o->letter, ',', ' ', 0} : "", o->name,
		                 o->arg ? " " : "", o->arg ? o->arg : "");
		if (n < 26)
			fprintf(f, "%-26s%s\n", head, o->help);
		else
			fprintf(f, "%s\n%26s%s\n", head, "", o->help);
	}
	fprintf(f, "%-26s%s\n", "  -h, --help", "this text");
	if (cmd->details)
		fprintf(f, "\n%s", cmd->details);
	if (cmd->more_help) {
		fputc('\n', f);
		cmd->more_help(f);
	}
}

void
cli_usage(const CliCommand *const *cmds, int n, FILE *f)
{
	fputs("usage: collc <command> [options] FILE\n"
	      "\n"
	      "collc compiles collective-communication schedules from .coll files.\n"
	      "\n"
	      "commands:\n", f);
	for (int i = 0; i < n; i++)
		fprintf(f, "  %s %s\n      %s\n", cmds[i]->name, cmds[i]->operands, cmds[i]->summary);
	fputs("  help [COMMAND]\n      this text, or a command's options\n"
	      "\n"
	      "options:\n"
	      "  -h, --help      this text\n"
	      "  --version       collc's version\n"
	      "\n"
	      "'collc help COMMAND' or 'collc COMMAND --help' lists a command's options;\n"
	      "options take their value as '--opt value' or '--opt=value'. FILE is a .coll\n"
	      "file ('-' is standard input). Exit status: 0 success, 1 errors in the input,\n"
	      "2 bad usage. See collc(1) and docs/cli.md.\n", f);
}

const CliCommand *
cli_find(const CliCommand *const *cmds, int n, const char *name)
{
	const char *names[32];
	for (int i = 0; i < n; i++) {
		if (strcmp(cmds[i]->name, name) == 0)
			return cmds[i];
		if (i < 32)
			names[i] = cmds[i]->name;
	}
	const char *near = nearest_name(name, names, n < 32 ? n : 32);
	fprintf(stderr, "collc: unknown command '%s'", name);
	if (near)
		fprintf(stderr, "; did you mean '%s'?", near);
	fprintf(stderr, "\nTry 'collc --help'.\n");
	return NULL;
}
