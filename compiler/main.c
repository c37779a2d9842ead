/*
 * main.c: the collc driver. Reads the input whole, runs the front end
 * (parse, sema) and then the command. Exit status: 0 success, 1 an error in
 * the input (reported as file:line:col), 2 a usage error.
 */
#include <stdlib.h>
#include <string.h>

#include "driver.h"

#ifndef COLLC_VERSION
#define COLLC_VERSION "0.1.0"
#endif

static const char usage[] =
	"usage: collc <command> [options] FILE\n"
	"\n"
	"collc compiles collective-communication schedules from .coll files.\n"
	"\n"
	"commands:\n"
	"  check FILE [--size S] [--json]\n"
	"                        parse and check FILE, build and verify every schedule, and\n"
	"                        print each one's rounds, volume, psi, theta, omega and\n"
	"                        model time for a vector of S bytes (default 1MiB)\n"
	"  build FILE --target dot|ir|mpi|msccl|sim [-o OUT] [--collective NAME] [--size S]\n"
	"                        build and verify the schedules, then write them:\n"
	"                          ir     the schedule text format (check reads it back)\n"
	"                          dot    the topology with a tree [--tree-copy N]\n"
	"                          mpi    a C function for MPI [--with-main: and a main that\n"
	"                                 checks it against MPI's own collective]\n"
	"                          msccl  MSCCL XML for the executor [--channels N]\n"
	"                                 [--proto Simple|LL|LL128] [--instances N] [--legacy]\n"
	"                                 [--min-bytes S] [--max-bytes S]: the sizes the\n"
	"                                 executor selects it for (default: all)\n"
	"                          sim    the simulator's input (docs/sim.md)\n"
	"  run FILE.xml|FILE.coll [--size S] [--dtype float|double|int32|int64]\n"
	"      [--op sum|prod|max|min] [--inplace|--outofplace] [--legacy]\n"
	"                        run an MSCCL algorithm file (or a .coll file's schedules)\n"
	"                        on CPU threads with real buffers, check the result, and\n"
	"                        print the time and bytes per second (docs/msccl.md)\n"
	"  sim FILE.sim|FILE.coll [--sizes A..B|A,B,..] [--mode packet|flow]\n"
	"      [--sync rounds|deps] [--reduce-rate R] [--collective NAME] [--csv|--json]\n"
	"      [-o OUT] [--plot G.svg] [--plot-links L.svg --size S]\n"
	"                        simulate each collective on its links for every size:\n"
	"                        time, goodput, bound ratio, energy (docs/sim.md)\n"
	"  fmt FILE [-o OUT]     print FILE in canonical form (to OUT, written whole)\n"
	"  explain FILE [--collective NAME] [--svg OUT.svg]\n"
	"                        show a small schedule round by round: messages, the chunks\n"
	"                        each rank holds with their contributions, busiest links;\n"
	"                        --svg writes a timeline of one collective\n"
	"  sweep SPEC [-o OUT.csv] [--json OUT.json] [--plots DIR] [--jobs N]\n"
	"      [--shard i/n|mpi]    simulate a grid of topologies, groups, algorithms,\n"
	"                        routing, network parameters and sizes on all cores\n"
	"  sweep --merge SHARD... [-o OUT]  join shards byte-identically (docs/sweep.md)\n"
	"\n"
	"options:\n"
	"  -h, --help            this text\n"
	"  --version             collc's version\n"
	"\n"
	"FILE is a .coll file, or for check a schedule written by 'build --target ir';\n"
	"'-' is standard input. Exit status: 0 success, 1 errors in the input, 2 bad\n"
	"usage. See docs/language.md, docs/cli.md, docs/ir.md and docs/algorithms.md.\n";

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
			             "\"link_orbits\": null, \"model_time_s\": null}");
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
		fprintf(out, "\"model_time_s\": %.17g}", r->m.model_time);
	}
	fprintf(out, "\n]}\n");
}

/* The link-disjoint trees a pipelined schedule streams through: height,
 * edges (parent -> child; '+' marks a pair's added parallel link). */
static void
print_disjoint_trees(const Sched *s, FILE *out)
{
	const Topo *t = s->topo;
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
print_table(const char *path, const Row *rows, int n, double size, FILE *out)
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
	int w = 10;
	for (int i = 0; i < n; i++)
		if ((int)strlen(rows[i].name) > w)
			w = (int)strlen(rows[i].name);
	fprintf(out, "%-*s %-14s %-18s %6s %7s %6s %9s %12s %6s %6s %6s %6s %6s %12s\n", w,
	        "collective", "kind", "algorithm", "ranks", "chunks", "rounds", "messages", "volume",
	        "psi", "theta", "omega", "group", "orbits", "model time");
	for (int i = 0; i < n; i++) {
		const Row *r = &rows[i];
		fprintf(out, "%-*s %-14s %-18s ", w, r->name, r->kind, r->algorithm);
		if (!r->s) {
			fprintf(out, "(no generator for this algorithm in this version)\n");
			continue;
		}
		char vol[32], tm[32], grp[16] = "-", orb[16] = "-";
		human_bytes(r->m.volume, vol, sizeof vol);
		human_time(r->m.model_time, tm, sizeof tm);
		if (r->s->group) {
			snprintf(grp, sizeof grp, "%d", r->s->group->order);
			snprintf(orb, sizeof orb, "%d", r->s->group->nlink_orbits);
		}
		fprintf(out, "%6d %7d %6d %9ld %12s %6.3f %6.3f %6.3f %6s %6s %12s\n", r->s->nrank,
		        r->s->nchunk, r->m.rounds, r->m.messages, vol, r->m.psi, r->m.theta, r->m.omega,
		        grp, orb, tm);
	}
	/* what the symmetric schedules stand on: their base trees */
	for (int i = 0; i < n; i++) {
		const Sched *s = rows[i].s;
		if (s && !s->base && s->ntree > 0)
			print_disjoint_trees(s, out);
		for (int b = 0; s && s->base && b < s->ntree; b++) {
			const Tree *t = s->tree[b];
			fprintf(out, "  %s: base tree %d%s%s: %s%d, W(T) = %ld hops over %d edges\n",
			        s->name, b + 1, t->name ? " " : "", t->name ? t->name : "",
			        t->nroot == 2 ? "a two-root forest of depth " : "depth ", t->height, t->weight,
			        s->nrank - t->nroot);
		}
	}
}

/* The rows of a check: every collective of a .coll file (built or not), or
 * every schedule of an IR file. */
static Row *
make_rows(const Input *in, int *nrows)
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
				note_at(d->name_loc, "'%s' is checked but not built: collc has no generator "
				        "for algorithm '%s' yet", d->name, rows[k].algorithm);
			k++;
		}
	}
	*nrows = n;
	return rows;
}

int
cmd_check(int argc, char **argv)
{
	const char *path = NULL;
	double size = 1 << 20;
	bool json = false;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--size") == 0) {
			if (++i >= argc || (size = parse_size(argv[i])) <= 0)
				return usage_error("check: --size takes a size such as 1MiB or 65536");
		} else {
			int bad = file_operand("check", argv[i], &path);
			if (bad)
				return bad;
		}
	}
	if (!path)
		return missing_file("check");
	Input in = {0};
	int rc = load(path, &in, true, size);
	Row *rows = NULL;
	int n = 0;
	if (rc == 0) {
		rows = make_rows(&in, &n);
		for (int i = 0; i < n; i++)
			if (rows[i].s) {
				if (verify(rows[i].s) != 0)
					rc = 1;
				metrics(rows[i].s, size, &rows[i].m);
			}
	}
	if (rc == 0) {
		const char *shown = in.is_ir ? (strcmp(path, "-") ? path : "<stdin>") : in.file->path;
		if (json)
			print_json(rows, n, stdout);
		else
			print_table(shown, rows, n, size, stdout);
	}
	free(rows);
	input_free(&in);
	return rc;
}

int
cmd_build(int argc, char **argv)
{
	const char *path = NULL, *out = NULL, *target = NULL;
	BuildOpts opts = {0};
	double size = 1 << 20;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool has = i + 1 < argc;
		if (strcmp(a, "-o") == 0 && has) {
			out = argv[++i];
		} else if (strcmp(a, "--target") == 0 && has) {
			target = argv[++i];
		} else if (strcmp(a, "--with-main") == 0) {
			opts.with_main = true;
		} else if (strcmp(a, "--size") == 0 && has) {
			if ((size = parse_size(argv[++i])) <= 0)
				return usage_error("build: --size takes a size such as 1MiB or 65536");
		} else if (strcmp(a, "--channels") == 0 && has) {
			opts.channels = atoi(argv[++i]);
			if (opts.channels < 1 || opts.channels > 32)
				return usage_error("build: --channels takes 1..32");
		} else if (strcmp(a, "--instances") == 0 && has) {
			opts.instances = atoi(argv[++i]);
			if (opts.instances < 1 || opts.instances > 32)
				return usage_error("build: --instances takes 1..32");
		} else if (strcmp(a, "--proto") == 0 && has) {
			opts.proto = argv[++i];
			if (strcmp(opts.proto, "Simple") && strcmp(opts.proto, "LL") && strcmp(opts.proto, "LL128"))
				return usage_error("build: --proto is Simple, LL or LL128");
		} else if (strcmp(a, "--legacy") == 0) {
			opts.legacy = true;
		} else if ((strcmp(a, "--min-bytes") == 0 || strcmp(a, "--max-bytes") == 0) && has) {
			double v = parse_size(argv[++i]);
			if (v <= 0 || v > 1e15)
				return usage_error("build: %s takes a size such as 64KiB or 65536", a);
			int64_t *bound = strcmp(a, "--min-bytes") == 0 ? &opts.min_bytes : &opts.max_bytes;
			*bound = (int64_t)v;
		} else if (strcmp(a, "--collective") == 0 && has) {
			opts.collective = argv[++i];
		} else if (strcmp(a, "--tree-copy") == 0 && has) {
			char *end;
			long v = strtol(argv[++i], &end, 10);
			if (*end || v < 0 || v > 1 << 30)
				return usage_error("build: --tree-copy takes a copy number");
			opts.tree_copy = (int)v;
		} else {
			int bad = file_operand("build", a, &path);
			if (bad)
				return bad;
		}
	}
	if (!path)
		return missing_file("build");
	if (opts.max_bytes && opts.min_bytes > opts.max_bytes)
		return usage_error("build: --min-bytes %lld is above --max-bytes %lld",
		                   (long long)opts.min_bytes, (long long)opts.max_bytes);
	if (!target)
		return usage_error("build: --target is one of %s", backend_names());
	const Backend *b = backend_find(target);
	if (!b)
		return usage_error("build: unknown target '%s' (targets: %s)", target, backend_names());
	Input in = {0};
	int rc = load(path, &in, true, size);
	if (rc == 0 && opts.collective) {
		const Sched *one;
		if (backend_select(&in.prog, &opts, &one, 1) == 0) {
			error_file("no schedule named '%s' is built from this file", opts.collective);
			rc = 1;
		}
	}
	/* nothing unverified leaves the compiler */
	for (int i = 0; rc == 0 && i < in.prog.nsched; i++)
		rc = verify(in.prog.sched[i]) != 0;
	if (rc == 0) {
		char *buf = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&buf, &len);
		if (!mem)
			die("open_memstream failed");
		rc = b->emit(&in.prog, &opts, mem) != 0;
		fclose(mem);
		char err[512];
		if (rc == 0 && write_file_atomic(out ? out : "-", buf, len, err, sizeof err) != 0) {
			fprintf(stderr, "collc: error: %s\n", err);
			rc = 1;
		}
		free(buf);
	}
	input_free(&in);
	return rc;
}

int
cmd_fmt(int argc, char **argv)
{
	const char *path = NULL, *out = NULL;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0) {
			if (++i >= argc)
				return usage_error("fmt: %s", "-o needs a file name");
			out = argv[i];
		} else {
			int bad = file_operand("fmt", argv[i], &path);
			if (bad)
				return bad;
		}
	}
	if (!path)
		return missing_file("fmt");
	Input in = {0};
	int rc = load(path, &in, false, 0);
	if (rc == 0) {
		char *buf = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&buf, &len);
		if (!mem)
			die("open_memstream failed");
		fmt_file(in.file, mem);
		fclose(mem);
		char err[512];
		if (write_file_atomic(out ? out : "-", buf, len, err, sizeof err) != 0) {
			fprintf(stderr, "collc: error: %s\n", err);
			rc = 1;
		}
		free(buf);
	}
	input_free(&in);
	return rc;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
		fputs(usage, stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0) {
		printf("collc %s\n", COLLC_VERSION);
		return 0;
	}
	/* each command in its own function (driver.h); a new one adds a line here
	 * and its lines to `usage` */
	static const struct {
		const char *name;
		int (*run)(int, char **);
	} commands[] = {
		{"check", cmd_check},
		{"build", cmd_build},
		{"fmt", cmd_fmt},
		{"run", cmd_run},
		{"sim", cmd_sim},
		{"explain", cmd_explain},
		{"sweep", cmd_sweep},
	};
	int rc = -1;
	for (size_t i = 0; i < countof(commands); i++)
		if (strcmp(cmd, commands[i].name) == 0)
			rc = commands[i].run(argc - 2, argv + 2);
	if (rc < 0)
		return usage_error("unknown command '%s'", cmd);
	/* a full disk or a closed pipe is an error, not a success */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "collc: error: cannot write to standard output\n");
		rc = 1;
	}
	return rc;
}
