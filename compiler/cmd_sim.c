/*
 * cmd_sim.c: `collc sim FILE`: simulate every collective of a .sim file or
 * a .coll file (built and verified first) for a range of vector sizes, and
 * print time, goodput and its ratio to the bound, energy; as a table, CSV
 * or JSON, with SVG plots on request (docs/sim.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "simbuild.h"
#include "svgplot.h"

enum { MAX_SIZES = 64 };

typedef struct SimArgs {
	const char *path, *out, *plot, *plot_links, *collective;
	double sizes[MAX_SIZES];
	int nsize;
	double link_size;
	bool csv, json;
	SimOpts opts;
} SimArgs;

/* "64KiB..256MiB" (every power of two between) or "1KiB,4KiB,1MiB". */
static int
parse_sizes(const char *arg, SimArgs *a)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", arg);
	char *dots = strstr(buf, "..");
	if (dots) {
		*dots = 0;
		double lo = parse_size(buf), hi = parse_size(dots + 2);
		if (lo < 1 || hi < lo)
			return -1;
		a->nsize = 0;
		for (double s = lo; s <= hi * (1 + 1e-12) && a->nsize < MAX_SIZES; s *= 2)
			a->sizes[a->nsize++] = floor(s);
		return 0;
	}
	a->nsize = 0;
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		double s = parse_size(tok);
		if (s < 1 || a->nsize == MAX_SIZES)
			return -1;
		a->sizes[a->nsize++] = floor(s);
	}
	return a->nsize ? 0 : -1;
}

static double
parse_rate(const char *text)
{
	double v = parse_quantity(text, Q_RATE);
	return v > 0 ? v / 8 : -1; /* bits to bytes */
}

/* ---- progress on a terminal ---- */

typedef struct Progress {
	double t0;
	bool shown, tty;
	const char *what;
	char size[32];
} Progress;

static void
on_progress(void *ctx, double done)
{
	Progress *p = ctx;
	if (!p->tty || wall_seconds() - p->t0 < 1)
		return;
	fprintf(stderr, "\rsim: %s, %s: %3.0f%%", p->what, p->size, done * 100);
	p->shown = true;
}

/* ---- one simulated collective and size ---- */

typedef struct Row {
	const char *name, *kind, *algorithm;
	double size;
	SimResult r;
	const SimNet *net;
	int coll;
} Row;

typedef struct Runner {
	Arena arena;       /* results and converted networks */
	Row *rows;
	int nrow, caprow;
	Progress prog;
	int rc;
} Runner;

static int
simulate(Runner *u, const SimArgs *a, const SimNet *net, int c, double size, const char *alg,
         Row *out)
{
	char err[256];
	u->prog.what = net->coll[c].name;
	human_bytes(size, u->prog.size, sizeof u->prog.size);
	SimOpts o = a->opts;
	o.progress = on_progress;
	o.progress_ctx = &u->prog;
	*out = (Row){.name = net->coll[c].name, .kind = net->coll[c].kind,
	             .algorithm = alg ? alg : net->coll[c].algorithm, .size = size, .net = net,
	             .coll = c};
	if (sim_run(&u->arena, net, c, (int64_t)size, &o, &out->r, err, sizeof err) != 0) {
		error_file("%s", err);
		return -1;
	}
	return 0;
}

static void
add_row(Runner *u, Row r)
{
	VEC_PUSH(&u->arena, u->rows, u->nrow, u->caprow, r);
}

/* The AlgCtx of a library schedule, to rebuild it with another algorithm. */
static AlgCtx
ctx_of(Arena *a, const Sched *s, Routes *routes)
{
	AlgCtx c = {.arena = a, .name = s->name, .loc = s->loc, .kind = s->kind, .topo = s->topo,
	            .routes = routes, .rank_node = s->rank_node, .nrank = s->nrank, .root = s->root};
	c.whole = s->nrank == s->topo->nrank;
	for (int i = 0; c.whole && i < s->nrank; i++)
		c.whole = s->rank_node[i] == i;
	return c;
}

/* `algorithm auto`: every applicable algorithm simulated at each size; the
 * fastest is reported as auto:NAME. */
static int
run_auto(Runner *u, const SimArgs *a, const Sched *s)
{
	const char *names[32];
	int n = alg_candidates(s->kind, names, 32);
	Routes routes;
	routes_init(&routes, s->topo, ROUTE_SHORTEST);
	SimNet *nets = arena_array(&u->arena, (size_t)n + 1, sizeof *nets);
	bool *ok = arena_array(&u->arena, (size_t)n + 1, 1);
	Arena tmp = {0};
	for (int i = 0; i < n; i++) {
		AlgCtx c = ctx_of(&tmp, s, &routes);
		c.algorithm = names[i];
		bool missing = false;
		diag_mute(true);
		Sched *x = alg_build(&c, &missing);
		ok[i] = x && verify(x) == 0;
		if (ok[i])
			ok[i] = sim_from_scheds(&u->arena, (const Sched *const *)&x, 1, &nets[i]) == 0;
		diag_mute(false);
		if (ok[i])
			nets[i].coll[0].name = s->name;
	}
	int rc = 0;
	for (int k = 0; k < a->nsize && rc == 0; k++) {
		Row best = {0};
		bool have = false;
		for (int i = 0; i < n; i++) {
			Row r;
			if (!ok[i] || (a->opts.sync == SIM_DEPS && !nets[i].coll[0].has_deps))
				continue;
			if (simulate(u, a, &nets[i], 0, a->sizes[k],
			             arena_printf(&u->arena, "auto:%s", names[i]), &r) != 0) {
				rc = -1;
				break;
			}
			if (!have || r.r.time_s < best.r.time_s)
				best = r;
			have = true;
		}
		if (!have && rc == 0) {
			error_at(s->loc, "auto: no algorithm of the library applies to '%s'", s->name);
			rc = -1;
		}
		if (rc == 0)
			add_row(u, best);
	}
	arena_free(&tmp);
	routes_free(&routes);
	return rc;
}

static int
run_net(Runner *u, const SimArgs *a, const SimNet *net)
{
	for (int c = 0; c < net->ncoll; c++) {
		if (a->collective && strcmp(net->coll[c].name, a->collective) != 0)
			continue;
		for (int k = 0; k < a->nsize; k++) {
			Row r;
			if (simulate(u, a, net, c, a->sizes[k], NULL, &r) != 0)
				return -1;
			add_row(u, r);
		}
	}
	return 0;
}

/* ---- output ---- */

static void
print_table(const Runner *u, FILE *f)
{
	int w = 10;
	for (int i = 0; i < u->nrow; i++)
		if ((int)strlen(u->rows[i].name) > w)
			w = (int)strlen(u->rows[i].name);
	bool rewires = false; /* a column for optical reconfigurations, when there are any */
	for (int i = 0; i < u->nrow; i++)
		rewires |= u->rows[i].r.nreconfig > 0;
	fprintf(f, "%-*s %-20s %10s %12s %14s %8s %12s%s\n", w, "collective", "algorithm", "size",
	        "time", "goodput", "bound", "energy", rewires ? "   reconfigurations" : "");
	for (int i = 0; i < u->nrow; i++) {
		const Row *r = &u->rows[i];
		char sz[32], tm[32], rt[32];
		human_bytes(r->size, sz, sizeof sz);
		human_time(r->r.time_s, tm, sizeof tm);
		human_time(r->r.reconfig_s, rt, sizeof rt);
		fprintf(f, "%-*s %-20s %10s %12s %9.2f Gb/s %7.1f%% %10.3g J", w, r->name,
		        r->algorithm, sz, tm, r->r.goodput_bps / 1e9, r->r.bound_ratio * 100,
		        r->r.energy_j);
		if (rewires)
			fprintf(f, " %6d in %10s", r->r.nreconfig, rt);
		fputc('\n', f);
	}
}

static void
print_csv(const Runner *u, FILE *f)
{
	fprintf(f, "collective,kind,algorithm,size_bytes,time_s,goodput_bps,bound_bps,"
	           "bound_ratio,energy_j,reconfigs,reconfig_s\n");
	for (int i = 0; i < u->nrow; i++) {
		const Row *r = &u->rows[i];
		fprintf(f, "%s,%s,%s,%.0f,%.12g,%.12g,%.12g,%.12g,%.12g,%d,%.12g\n", r->name, r->kind,
		        r->algorithm, r->size, r->r.time_s, r->r.goodput_bps, r->r.bound_bps,
		        r->r.bound_ratio, r->r.energy_j, r->r.nreconfig, r->r.reconfig_s);
	}
}

static void
print_json(const Runner *u, FILE *f)
{
	fputs("{\"results\": [", f);
	for (int i = 0; i < u->nrow; i++) {
		const Row *r = &u->rows[i];
		fprintf(f, "%s\n  {\"collective\": ", i ? "," : "");
		json_string(f, r->name);
		fputs(", \"kind\": ", f);
		json_string(f, r->kind);
		fputs(", \"algorithm\": ", f);
		json_string(f, r->algorithm);
		fprintf(f, ", \"size_bytes\": %.0f, \"time_s\": %.12g, \"goodput_bps\": %.12g, "
		           "\"bound_bps\": %.12g, \"bound_ratio\": %.12g, \"energy_j\": %.12g, "
		           "\"reconfigs\": %d, \"reconfig_s\": %.12g, \"round_end_s\": [",
		        r->size, r->r.time_s, r->r.goodput_bps, r->r.bound_bps, r->r.bound_ratio,
		        r->r.energy_j, r->r.nreconfig, r->r.reconfig_s);
		for (int k = 0; k < r->r.nround; k++)
			fprintf(f, "%s%.12g", k ? ", " : "", r->r.round_end[k]);
		fputs("], \"link_bytes\": [", f);
		for (int k = 0; k < r->r.nlink; k++)
			fprintf(f, "%s%.0f", k ? ", " : "", r->r.link_bytes[k]);
		fputs("], \"link_utilization\": [", f);
		for (int k = 0; k < r->r.nlink; k++)
			fprintf(f, "%s%.6g", k ? ", " : "",
			        r->r.time_s > 0 ? r->r.link_busy[k] / r->r.time_s : 0);
		fputs("]}", f);
	}
	fputs("\n]}\n", f);
}

static int
write_mem(const char *path, void (*fn)(const Runner *, FILE *), const Runner *u)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	if (!mem)
		die("open_memstream failed");
	fn(u, mem);
	fclose(mem);
	int rc = write_output(path, buf, len);
	free(buf);
	return rc;
}

static int
plot_goodput(const Runner *u, const SimArgs *a)
{
	/* one series per collective, in the order first met */
	const char **names = arena_array((Arena *)&u->arena, (size_t)u->nrow + 1, sizeof *names);
	int ns = 0;
	for (int i = 0; i < u->nrow; i++) {
		int k = 0;
		while (k < ns && strcmp(names[k], u->rows[i].name) != 0)
			k++;
		if (k == ns)
			names[ns++] = u->rows[i].name;
	}
	PlotSeries *s = xcalloc((size_t)ns + 1, sizeof *s);
	double *y = xmalloc(((size_t)ns * a->nsize + 1) * sizeof *y);
	double bound = 0;
	for (int k = 0; k < ns; k++) {
		s[k].y = y + (size_t)k * a->nsize;
		s[k].name = names[k];
		for (int j = 0; j < a->nsize; j++)
			y[(size_t)k * a->nsize + j] = -1;
	}
	for (int i = 0; i < u->nrow; i++) {
		const Row *r = &u->rows[i];
		int k = 0, j = 0;
		while (strcmp(names[k], r->name) != 0)
			k++;
		while (a->sizes[j] != r->size)
			j++;
		y[(size_t)k * a->nsize + j] = r->r.goodput_bps;
		if (r->r.bound_bps > bound)
			bound = r->r.bound_bps;
		/* auto names the pick per size; the legend keeps the collective */
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	if (!mem)
		die("open_memstream failed");
	svg_goodput(mem, "goodput by message size", a->sizes, a->nsize, s, ns, bound);
	fclose(mem);
	int rc = write_output(a->plot, buf, len);
	free(buf), free(s), free(y);
	return rc;
}

static int
plot_links(const Runner *u, const SimArgs *a)
{
	const Row *r = NULL;
	for (int i = 0; i < u->nrow && !r; i++)
		if (u->rows[i].size == a->link_size)
			r = &u->rows[i];
	if (!r) {
		error_file("--plot-links: nothing was simulated at that --size");
		return 1;
	}
	double *util = xmalloc(((size_t)r->r.nlink + 1) * sizeof *util);
	for (int l = 0; l < r->r.nlink; l++)
		util[l] = r->r.time_s > 0 ? r->r.link_busy[l] / r->r.time_s : 0;
	char sz[32], title[256];
	human_bytes(r->size, sz, sizeof sz);
	snprintf(title, sizeof title, "%s (%s), %s: link utilization", r->name, r->algorithm, sz);
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	if (!mem)
		die("open_memstream failed");
	int ok = svg_links(mem, r->net, util, title);
	fclose(mem);
	int rc = 1;
	if (!ok)
		error_file("--plot-links draws 2D tori, meshes and supermeshes; '%s' is on a %s", r->name,
		           r->net->topo);
	else
		rc = write_output(a->plot_links, buf, len);
	free(buf), free(util);
	return rc;
}

static int
parse_args(int argc, char **argv, SimArgs *a)
{
	a->sizes[0] = 1 << 20;
	a->nsize = 1;
	a->link_size = -1;
	for (int i = 0; i < argc; i++) {
		const char *s = argv[i];
		bool has = i + 1 < argc;
		if (strcmp(s, "--sizes") == 0 && has) {
			if (parse_sizes(argv[++i], a) != 0)
				return usage_error("sim: --sizes takes A..B (powers of two from A to B) or "
				                   "a list A,B,C of sizes such as 64KiB");
		} else if (strcmp(s, "--size") == 0 && has) {
			if ((a->link_size = parse_size(argv[++i])) < 1)
				return usage_error("sim: --size takes a size such as 1MiB");
			a->link_size = floor(a->link_size);
		} else if (strcmp(s, "--mode") == 0 && has) {
			const char *m = argv[++i];
			if (strcmp(m, "packet") && strcmp(m, "flow"))
				return usage_error("sim: --mode is packet or flow");
			a->opts.mode = m[0] == 'f' ? SIM_FLOW : SIM_PACKET;
		} else if (strcmp(s, "--sync") == 0 && has) {
			const char *m = argv[++i];
			if (strcmp(m, "rounds") && strcmp(m, "deps"))
				return usage_error("sim: --sync is rounds or deps");
			a->opts.sync = m[0] == 'd' ? SIM_DEPS : SIM_ROUNDS;
		} else if (strcmp(s, "--reduce-rate") == 0 && has) {
			if ((a->opts.reduce_rate = parse_rate(argv[++i])) <= 0)
				return usage_error("sim: --reduce-rate takes a rate such as 100GBps or 800Gbps");
		} else if (strcmp(s, "--collective") == 0 && has) {
			a->collective = argv[++i];
		} else if (strcmp(s, "--plot") == 0 && has) {
			a->plot = argv[++i];
		} else if (strcmp(s, "--plot-links") == 0 && has) {
			a->plot_links = argv[++i];
		} else if (strcmp(s, "-o") == 0 && has) {
			a->out = argv[++i];
		} else if (strcmp(s, "--csv") == 0) {
			a->csv = true;
		} else if (strcmp(s, "--json") == 0) {
			a->json = true;
		} else {
			int bad = file_operand("sim", s, &a->path);
			if (bad)
				return bad;
		}
	}
	if (!a->path)
		return missing_file("sim");
	if (a->csv && a->json)
		return usage_error("sim: %s", "--csv or --json, not both");
	if (a->plot_links) {
		if (a->link_size < 0)
			return usage_error("sim: %s", "--plot-links needs --size S");
		bool found = false;
		for (int k = 0; k < a->nsize; k++)
			found |= a->sizes[k] == a->link_size;
		if (!found && a->nsize < MAX_SIZES)
			a->sizes[a->nsize++] = a->link_size;
	}
	return 0;
}

int
cmd_sim(int argc, char **argv)
{
	SimArgs a = {0};
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc;
	Runner u = {0};
	u.prog = (Progress){.t0 = wall_seconds(), .tty = isatty(2)};
	Input in = {0};
	size_t len;
	char err[512];
	char *text = read_file(a.path, &len, err, sizeof err);
	if (!text) {
		fprintf(stderr, "collc: error: %s\n", err);
		return 1;
	}
	if (sim_is_text(text, len)) {
		diag_source(strcmp(a.path, "-") ? a.path : "<stdin>", text, len);
		SimNet *net = NEW(&u.arena, SimNet);
		rc = sim_read(&u.arena, text, len, net) != 0 || nerrors() > 0;
		if (rc == 0 && a.collective) {
			bool found = false;
			for (int c = 0; c < net->ncoll; c++)
				found |= strcmp(net->coll[c].name, a.collective) == 0;
			if (!found) {
				error_file("no collective named '%s' in this file", a.collective);
				rc = 1;
			}
		}
		if (rc == 0)
			rc = run_net(&u, &a, net) != 0;
	} else {
		/* stdin cannot be read twice: load reads the path itself */
		if (strcmp(a.path, "-") == 0) {
			free(text);
			fprintf(stderr, "collc: error: sim reads a .coll file by name, not from stdin\n");
			return 1;
		}
		rc = load(a.path, &in, true, a.sizes[0]);
		bool any = false;
		for (int i = 0; rc == 0 && i < in.prog.nsched; i++) {
			const Sched *s = in.prog.sched[i];
			if (a.collective && strcmp(s->name, a.collective) != 0)
				continue;
			any = true;
			if (verify(s) != 0) {
				rc = 1;
				break;
			}
			if (strncmp(s->algorithm, "auto:", 5) == 0 && !s->base) {
				rc = run_auto(&u, &a, s) != 0;
				continue;
			}
			SimNet *net = NEW(&u.arena, SimNet);
			rc = sim_from_scheds(&u.arena, &s, 1, net) != 0 || run_net(&u, &a, net) != 0;
		}
		if (rc == 0 && !any) {
			error_file(a.collective ? "no schedule named '%s' is built from this file"
			                        : "no schedule is built from this file%s",
			           a.collective ? a.collective : "");
			rc = 1;
		}
	}
	if (u.prog.shown)
		fputs("\r\033[K", stderr);
	if (rc == 0)
		rc = write_mem(a.out, a.json ? print_json : a.csv ? print_csv : print_table, &u);
	if (rc == 0 && a.plot)
		rc = plot_goodput(&u, &a);
	if (rc == 0 && a.plot_links)
		rc = plot_links(&u, &a);
	free(text);
	input_free(&in);
	arena_free(&u.arena);
	return rc;
}
