/*
 * main.c: the collc driver. Reads the input whole, runs the front end
 * (parse, sema) and then the command. Exit status: 0 success, 1 an error in
 * the input (reported as file:line:col), 2 a usage error.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bound.h"
#include "cli.h"
#include "driver.h"
#include "msccl_program.h"
#include "table.h"
#include "tune_prog.h"

#ifndef COLLC_VERSION
#define COLLC_VERSION "0.1.0"
#endif

static const char *
algorithm_of(const Decl *d)
{
	for (int j = 0; j < d->body->nitem; j++)
		if (d->body->item[j].kind == IT_ALGORITHM)
			return d->body->item[j].flag ? "auto" : d->body->item[j].call->name;
	return "?";
}

typedef struct Row {
	const char *name, *kind, *algorithm;
	const Sched *s;  /* NULL: not built */
	Metrics m;
} Row;

static void
print_json(const Row *rows, int n, FILE *out)
{
	BoundCache cache = {0};
	fprintf(out, "{\"collectives\": [");
	for (int i = 0; i < n; i++) {
		const Row *r = &rows[i];
		const Sched *s = r->s;
		fprintf(out, "%s\n  {\"name\": ", i ? "," : "");
		json_string(out, r->name);
		fprintf(out, ", \"kind\": ");
		json_string(out, r->kind);
		fprintf(out, ", \"algorithm\": ");
		json_string(out, r->algorithm);
		if (!s) {
			fprintf(out, ", \"ranks\": null, \"chunks\": null, \"rounds\": null, "
			             "\"messages\": null, \"volume_bytes\": null, \"psi\": null, "
			             "\"theta\": null, \"omega\": null, \"group_order\": null, "
			             "\"link_orbits\": null, \"model_time_s\": null, \"cut_bound\": null}");
			continue;
		}
		fprintf(out, ", \"ranks\": %d, \"chunks\": %d, \"rounds\": %d, \"messages\": %ld, "
		             "\"volume_bytes\": %.17g, \"psi\": %.17g, \"theta\": %.17g, "
		             "\"omega\": %.17g, ",
		        s->nrank, s->nchunk, r->m.rounds, r->m.messages, r->m.volume, r->m.psi,
		        r->m.theta, r->m.omega);
		if (s->group)
			fprintf(out, "\"group_order\": %d, \"link_orbits\": %d, ", s->group->order,
			        s->group->nlink_orbits);
		else
			fprintf(out, "\"group_order\": null, \"link_orbits\": null, ");
		fprintf(out, "\"model_time_s\": %.17g, \"cut_bound\": ", r->m.model_time);
		bound_json(&cache, s, out);
		fputc('}', out);
	}
	fprintf(out, "\n]}\n");
	bound_cache_free(&cache);
}

/* The link-disjoint trees a pipelined schedule streams through: height,
 * and with `edges` (check --trees) the edges (parent -> child; '+' marks a
 * pair's added parallel link); without, one line for all of them. */
static void
print_disjoint_trees(const Sched *s, bool edges, FILE *out)
{
	const Topo *t = s->topo;
	if (!edges) {
		int lo = s->tree[0]->height, hi = lo;
		for (int b = 1; b < s->ntree; b++) {
			lo = s->tree[b]->height < lo ? s->tree[b]->height : lo;
			hi = s->tree[b]->height > hi ? s->tree[b]->height : hi;
		}
		fprintf(out, "  %s: %d link-disjoint trees of height %d", s->name, s->ntree, lo);
		if (hi > lo)
			fprintf(out, "..%d", hi);
		fprintf(out, " (their edges: collc check --trees)\n");
		return;
	}
	for (int b = 0; b < s->ntree; b++) {
		const Tree *tr = s->tree[b];
		char root[32], u[32], v[32];
		topo_node_name(t, tr->root[0], root, sizeof root);
		fprintf(out, "  %s: tree %d%s%s rooted at %s: height %d, %d edges", s->name, b + 1,
		        tr->name ? " of " : "", tr->name ? tr->name : "", root, tr->height,
		        t->nnode - 1);
		for (int w = 0, k = 0; tr->link && t->nnode <= 64 && w < t->nnode; w++) {
			if (tr->link[w] < 0)
				continue;
			topo_node_name(t, tr->parent[w], u, sizeof u);
			topo_node_name(t, w, v, sizeof v);
			fprintf(out, "%s%s->%s%s", k++ ? " " : ": ", u, v,
			        t->link[tr->link[w]].copy > 0 ? "+" : "");
		}
		fputc('\n', out);
	}
}

static void
print_table(const char *path, const Row *rows, int n, double size, bool trees, FILE *out)
{
	char sz[32];
	human_bytes(size, sz, sizeof sz);
	int built = 0;
	for (int i = 0; i < n; i++)
		built += rows[i].s != NULL;
	fprintf(out, "%s: %d collective%s, %d built and verified; model for %s\n", path, n,
	        n == 1 ? "" : "s", built, sz);
	if (n == 0)
		return;
	static const char *const head[] = {"collective", "kind", "algorithm", "ranks", "chunks",
	                                   "rounds", "messages", "volume", "psi", "theta",
	                                   "omega", "group", "orbits", "model time"};
	Table tab;
	table_init(&tab, countof(head), head, "lllrrrrrrrrrrr");
	for (int i = 0; i < n; i++) {
		const Row *r = &rows[i];
		table_cell(&tab, "%s", r->name);
		table_cell(&tab, "%s", r->kind);
		table_cell(&tab, "%s", r->algorithm);
		if (!r->s) {
			table_note(&tab, "(no generator for this algorithm in this version)");
			continue;
		}
		char vol[32], tm[32], grp[16] = "-", orb[16] = "-";
		human_bytes_fixed(r->m.volume, vol, sizeof vol);
		human_time(r->m.model_time, tm, sizeof tm);
		if (r->s->group) {
			snprintf(grp, sizeof grp, "%d", r->s->group->order);
			snprintf(orb, sizeof orb, "%d", r->s->group->nlink_orbits);
		}
		table_cell(&tab, "%d", r->s->nrank);
		table_cell(&tab, "%d", r->s->nchunk);
		table_cell(&tab, "%d", r->m.rounds);
		table_cell(&tab, "%ld", r->m.messages);
		table_cell(&tab, "%s", vol);
		table_cell(&tab, "%.3f", r->m.psi);
		table_cell(&tab, "%.3f", r->m.theta);
		table_cell(&tab, "%.3f", r->m.omega);
		table_cell(&tab, "%s", grp);
		table_cell(&tab, "%s", orb);
		table_cell(&tab, "%s", tm);
	}
	table_print(&tab, out);
	table_free(&tab);
	/* what the symmetric schedules stand on: their base trees */
	for (int i = 0; i < n; i++) {
		const Sched *s = rows[i].s;
		if (s && !s->base && s->ntree > 0)
			print_disjoint_trees(s, trees, out);
		/* in segments each tree is base trees b * S .. b * S + S - 1 (symm.c): once */
		int S = s && s->base && s->segments > 1 ? s->segments : 1;
		char segs[32] = "";
		if (S > 1)
			snprintf(segs, sizeof segs, ", in %d segments", S);
		for (int b = 0; s && s->base && b < s->ntree / S; b++) {
			const Tree *t = s->tree[b * S];
			fprintf(out, "  %s: base tree %d%s%s: %s%d, W(T) = %ld hops over %d edges%s\n",
			        s->name, b + 1, t->name ? " " : "", t->name ? t->name : "",
			        t->nroot == 2 ? "a two-root forest of depth " : "depth ", t->height, t->weight,
			        s->nrank - t->nroot, segs);
		}
	}
	if (built == 0)
		return;
	const Sched **built_s = xcalloc((size_t)n + 1, sizeof *built_s);
	for (int i = 0, k = 0; i < n; i++)
		if (rows[i].s)
			built_s[k++] = rows[i].s;
	bound_print(built_s, built, out);
	free(built_s);
}

/* The rows of a check: every collective of a .coll file (built or not), or
 * every schedule of an IR file. */
static Row *
make_rows(Diag *dg, const Input *in, int *nrows)
{
	const Prog *p = &in->prog;
	int n = in->is_ir ? p->nsched : 0;
	for (int i = 0; !in->is_ir && i < in->file->ndecl; i++)
		n += in->file->decl[i].kind == DC_COLLECTIVE;
	Row *rows = xcalloc((size_t)n + 1, sizeof *rows);
	if (in->is_ir) {
		for (int i = 0; i < n; i++)
			rows[i] = (Row){.name = p->sched[i]->name, .kind = coll_kind_name[p->sched[i]->kind],
			                .algorithm = p->sched[i]->algorithm, .s = p->sched[i]};
	} else {
		int k = 0, si = 0;
		for (int i = 0; i < in->file->ndecl; i++) {
			const Decl *d = &in->file->decl[i];
			if (d->kind != DC_COLLECTIVE)
				continue;
			rows[k] = (Row){.name = d->name, .kind = d->ckind, .algorithm = algorithm_of(d)};
			if (si < p->nsched && strcmp(p->sched[si]->name, d->name) == 0) {
				rows[k].s = p->sched[si++];
				rows[k].algorithm = rows[k].s->algorithm; /* auto says which */
			}
			else
				note_at(dg, d->name_loc, "'%s' is checked but not built: collc has no generator "
				        "for algorithm '%s' yet", d->name, rows[k].algorithm);
			k++;
		}
	}
	*nrows = n;
	return rows;
}

typedef struct CheckArgs {
	double size;
	bool json, trees, full_verify;
	Defines defs;
} CheckArgs;

static int
check_opt(void *ctx, const char *name, const char *value)
{
	CheckArgs *a = ctx;
	if (strcmp(name, "json") == 0)
		a->json = true;
	else if (strcmp(name, "trees") == 0)
		a->trees = true;
	else if (strcmp(name, "full-verify") == 0)
		a->full_verify = true;
	else if (strcmp(name, "define") == 0)
		return define_opt("check", &a->defs, value);
	else if ((a->size = parse_bytes(value)) < 1)
		return size_usage("check", name, value, a->size,
		                  "a whole number of bytes, such as 1MiB or 65536");
	return 0;
}

static const CliOpt check_opts[] = {
	{"size", 0, "S", "the vector size of the model time (default 1MiB)"},
	{"json", 0, NULL, "print JSON instead of the table"},
	{"trees", 0, NULL, "list every edge of the link-disjoint trees pipelined schedules use"},
	{"full-verify", 0, NULL, "prove symmetric schedules copy by copy, not by symmetry"},
	DEFINE_OPT,
};

static int
cmd_check(Diag *dg, int argc, char **argv)
{
	const char *path = NULL;
	CheckArgs a = {.size = 1 << 20};
	int bad = cli_parse(&cli_check, argc, argv, &a, check_opt, &path);
	if (bad)
		return bad < 0 ? 0 : bad;
	double size = a.size;
	bool json = a.json;
	/* large files take seconds: on a terminal, say what is being done */
	bool tty = isatty(2);
	if (tty)
		fprintf(stderr, "check: building %s ...\r", path); /* diagnostics overwrite it */
	Input in = {.progress = true, .full_verify = a.full_verify, .defs = &a.defs};
	int rc = load(dg, path, &in, true, size);
	Row *rows = NULL;
	int n = 0;
	if (rc == 0) {
		rows = make_rows(dg, &in, &n);
		for (int i = 0; i < n; i++)
			if (rows[i].s)
				metrics(rows[i].s, size, &rows[i].m);
	}
	if (tty)
		fputs("\033[K", stderr);
	if (rc == 0) {
		const char *shown = in.is_ir ? (strcmp(path, "-") ? path : "<stdin>") : in.file->path;
		if (json)
			print_json(rows, n, stdout);
		else
			print_table(shown, rows, n, size, a.trees, stdout);
	}
	free(rows);
	input_free(&in);
	return rc;
}

typedef struct BuildArgs {
	const char *out, *target;
	BuildOpts opts;
	double size;
	Defines defs;
} BuildArgs;

static int
build_opt(void *ctx, const char *name, const char *value)
{
	BuildArgs *a = ctx;
	BuildOpts *opts = &a->opts;
	if (strcmp(name, "output") == 0) {
		a->out = value;
	} else if (strcmp(name, "target") == 0) {
		a->target = value;
	} else if (strcmp(name, "with-main") == 0) {
		opts->with_main = true;
	} else if (strcmp(name, "size") == 0) {
		if ((a->size = parse_bytes(value)) < 1)
			return size_usage("build", name, value, a->size,
			                  "a whole number of bytes, such as 1MiB");
	} else if (strcmp(name, "channels") == 0) {
		if ((opts->channels = cli_count(value, 1, 32)) < 0)
			return usage_error("build: --channels takes 1..32");
	} else if (strcmp(name, "instances") == 0) {
		if ((opts->instances = cli_count(value, 1, 32)) < 0)
			return usage_error("build: --instances takes 1..32");
	} else if (strcmp(name, "proto") == 0) {
		int k = cli_choice("build", name, value, mproto_name, NPROTO);
		if (k < 0)
			return 2;
		opts->proto = mproto_name[k];
	} else if (strcmp(name, "legacy") == 0) {
		opts->legacy = true;
	} else if (strcmp(name, "min-bytes") == 0 || strcmp(name, "max-bytes") == 0) {
		bool unbounded = name[1] == 'a' && strcmp(value, "0") == 0; /* maxBytes="0": no bound */
		double v = unbounded ? 0 : parse_bytes(value);
		if (!unbounded && (v < 1 || v > 1e15))
			return usage_error("build: --%s takes a size such as 64KiB or 65536%s", name,
			                   name[1] == 'a' ? " (0: no upper bound)" : "");
		*(name[1] == 'i' ? &opts->min_bytes : &opts->max_bytes) = (int64_t)v;
	} else if (strcmp(name, "collective") == 0) {
		opts->collective = value;
	} else if (strcmp(name, "prefix") == 0) {
		opts->prefix = value;
	} else if (strcmp(name, "tree-copy") == 0) {
		if ((opts->tree_copy = cli_count(value, 0, 1 << 30)) < 0)
			return usage_error("build: --tree-copy takes a copy number");
	} else if (strcmp(name, "define") == 0) {
		return define_opt("build", &a->defs, value);
	}
	return 0;
}

static const CliOpt build_opts[] = {
	{"target", 0, "T", "what to write: one of the targets below"},
	{"output", 'o', "OUT", "write to OUT (written whole; chakra, mpi-lib: a directory) instead of stdout"},
	{"collective", 0, "NAME", "only the collective NAME"},
	DEFINE_OPT,
	{"size", 0, "S", "the vector size 'algorithm auto' chooses for (default 1MiB)"},
	{"with-main", 0, NULL, "mpi: add a main that checks it against MPI's own collective"},
	{"prefix", 0, "P", "mpi-lib: write DIR/P.c and DIR/P.h, names P_... (default collc)"},
	{"tree-copy", 0, "N", "dot: draw copy N of the base tree"},
	{"channels", 0, "N", "msccl: channels (1..32)"},
	{"instances", 0, "N", "msccl: instances (1..32)"},
	{"proto", 0, "P", "msccl: Simple, LL or LL128"},
	{"legacy", 0, NULL, "msccl: the older format without the reduce-copy step types"},
	{"min-bytes", 0, "S", "msccl: the smallest size the executor selects it for"},
	{"max-bytes", 0, "S", "msccl: the largest size the executor selects it for"},
};

static int
backend_unknown(const char *target)
{
	const char *names[32];
	int n = backend_target_names(names, 32);
	return cli_choice("build", "target", target, names, n) < 0 ? 2 : 0;
}

static int
cmd_build(Diag *dg, int argc, char **argv)
{
	const char *path = NULL;
	BuildArgs a = {.size = 1 << 20};
	int bad = cli_parse(&cli_build, argc, argv, &a, build_opt, &path);
	if (bad)
		return bad < 0 ? 0 : bad;
	const char *out = a.out, *target = a.target;
	BuildOpts opts = a.opts;
	double size = a.size;
	opts.bytes = (int64_t)size;
	opts.notes = stderr;
	if (opts.max_bytes && opts.min_bytes > opts.max_bytes)
		return usage_error("build: --min-bytes %lld is above --max-bytes %lld",
		                   (long long)opts.min_bytes, (long long)opts.max_bytes);
	if (!target)
	{
		char names[256];
		backend_names(names, sizeof names);
		return usage_error("build: --target is one of %s", names);
	}
	const Backend *b = backend_find(target);
	const DirBackend *dirb = b ? NULL : backend_find_dir(target);
	if (!b && !dirb)
		return backend_unknown(target);
	if (dirb && !out)
		return usage_error("build: --target %s writes a directory: give -o DIR", target);
	Input in = {.only = opts.collective, .defs = &a.defs};
	int rc = load(dg, path, &in, true, size);
	if (rc == 0 && opts.collective) {
		const Sched *one;
		if (backend_select(&in.prog, &opts, &one, 1) == 0) {
			no_schedule_named(dg, &in.prog, opts.collective);
			rc = 1;
		}
	}
	/* nothing unverified leaves the compiler: load proved every schedule */
	if (rc == 0 && dirb) {
		rc = dirb->emit_dir(dg, &in.prog, &opts, out) != 0;
	} else if (rc == 0) {
		MemOut m;
		const Sched *sel[1];
		/* auto for MSCCL: ranked by the program it deploys (tune_prog.c) */
		if (b == &msccl_backend && backend_select(&in.prog, &opts, sel, 1) == 1 &&
		    strncmp(sel[0]->algorithm, "auto:", 5) == 0)
			rc = prog_build_auto(dg, sel[0], &opts, size, memout_open(&m)) != 0;
		else
			rc = b->emit(dg, &in.prog, &opts, memout_open(&m)) != 0;
		if (rc == 0)
			rc = write_output(out, &m);
		else
			memout_drop(&m);
	}
	input_free(&in);
	return rc;
}

static int
fmt_opt(void *ctx, const char *name, const char *value)
{
	(void)name;
	*(const char **)ctx = value;
	return 0;
}

static const CliOpt fmt_opts[] = {
	{"output", 'o', "OUT", "write to OUT (written whole) instead of stdout"},
};

static int
cmd_fmt(Diag *dg, int argc, char **argv)
{
	const char *path = NULL, *out = NULL;
	int bad = cli_parse(&cli_fmt, argc, argv, &out, fmt_opt, &path);
	if (bad)
		return bad < 0 ? 0 : bad;
	Input in = {0};
	int rc = load(dg, path, &in, false, 0);
	if (rc == 0) {
		MemOut m;
		fmt_file(in.file, memout_open(&m));
		rc = write_output(out, &m);
	}
	input_free(&in);
	return rc;
}

const CliCommand cli_check = {
	"check", "FILE",
	"check FILE, build and verify every schedule, print its rounds, volume and model time",
	"FILE is a .coll file or a schedule written by 'build --target ir'. The table gives\n"
	"each schedule's ranks, chunks, rounds, messages, volume, psi, theta, omega, group\n"
	"order, link orbits and model time for a vector of --size bytes (docs/cli.md).\n",
	check_opts, countof(check_opts), cmd_check, NULL};
const CliCommand cli_build = {
	"build", "FILE", "build and verify the schedules, then write them for a target",
	NULL, build_opts, countof(build_opts), cmd_build, backend_print_targets};
const CliCommand cli_fmt = {"fmt", "FILE", "print FILE in canonical form (docs/language.md)",
                            NULL, fmt_opts, countof(fmt_opts), cmd_fmt, NULL};

/* Every command: one entry each (its options and help live beside it). */
static const CliCommand *const commands[] = {&cli_check, &cli_build, &cli_fmt, &cli_run,
                                             &cli_sim, &cli_explain, &cli_sweep, &cli_tune,
                                             &cli_nccl_topo};

int
main(int argc, char **argv)
{
	enum { NCMD = countof(commands) };
	if (argc < 2) {
		cli_usage(commands, NCMD, stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 ||
	    (strcmp(cmd, "help") == 0 && argc == 2)) {
		cli_usage(commands, NCMD, stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0) {
		printf("collc %s\n", COLLC_VERSION);
		return 0;
	}
	if (strcmp(cmd, "help") == 0) {
		if (argc > 3)
			return usage_error("help takes one COMMAND");
		const CliCommand *c = cli_find(commands, NCMD, argv[2]);
		if (!c)
			return 2;
		cli_help(c, stdout);
		return 0;
	}
	const CliCommand *c = cli_find(commands, NCMD, cmd);
	if (!c)
		return 2;
	/* the run's diagnostics: handed down to every pass, and registered for
	 * out-of-memory errors, which arise where no Diag is at hand */
	Diag diag = diag_new();
	diag_on_oom(&diag);
	int rc = c->run(&diag, argc - 1, argv + 1);
	/* a full disk or a closed pipe is an error, not a success */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "collc: error: cannot write to standard output\n");
		rc = 1;
	}
	return rc;
}
