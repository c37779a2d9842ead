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

#include "bound.h"
#include "cli.h"
#include "driver.h"
#include "perf.h"
#include "to_sim.h"
#include "msccl_to_sim.h"
#include "svgplot.h"
#include "table.h"

typedef struct SimArgs {
	const char *path, *out, *plot, *plot_time, *plot_links, *collective;
	const char *compare;   /* baselines, "A,B,C": a comparison table after the rows */
	const char *topology, *ranks; /* FILE.xml: where its ranks run */
	bool legacy;                  /* FILE.xml: the microsoft/msccl dialect */
	bool steps;                   /* FILE.xml: --model steps (a message per step) */
	bool mode_set;                /* --mode was given */
	double sizes[MAX_SIZES];
	int nsize;
	double link_size;
	bool csv, json;
	SimOpts opts;
	Defines defs;
} SimArgs;

/* A rate with a unit (100GBps, 800Gbps), or a bare number of bytes per
 * second; in bytes per second, or -1. */
static double
parse_rate(const char *text)
{
	char *end;
	double bare = strtod(text, &end);
	while (*end == ' ')
		end++;
	if (end != text && !*end)
		return bare > 0 && bare < 1e300 ? bare : -1;
	double v = parse_quantity(text, Q_RATE);
	return v > 0 ? v / 8 : -1; /* bits to bytes */
}

/* ---- progress on a terminal ---- */

typedef struct Progress {
	double t0;         /* the command's start: quiet for its first second */
	double t_run;      /* this run's start, for the estimate */
	bool shown, tty;
	const char *what;
	char size[32];
	int k, n;          /* size k of n */
} Progress;

static void
on_progress(void *ctx, double done)
{
	Progress *p = ctx;
	double now = wall_seconds();
	if (!p->tty || now - p->t0 < 1)
		return;
	char left[48] = "";
	if (done > 0.01 && done < 1) {
		char t[32];
		human_time((now - p->t_run) * (1 - done) / done, t, sizeof t);
		snprintf(left, sizeof left, ", about %s left", t);
	}
	fprintf(stderr, "\r\033[Ksim: %s, %s (size %d/%d): %3.0f%%%s", p->what, p->size, p->k,
	        p->n, done * 100, left);
	p->shown = true;
}

/* ---- one simulated collective and size ---- */

typedef struct Row {
	const char *name, *kind, *algorithm;
	double size;
	SimResult r;
	const SimNet *net;
	int coll;
	double bound;      /* busbw bound, bytes/s (bound.h), set by add_row */
} Row;

typedef struct Runner {
	Arena arena;       /* results and converted networks */
	Row *rows;
	int nrow, caprow;
	Progress prog;
	int rc;
	const char *compare; /* --compare's baselines, or NULL */
	SizedFile sized;     /* the file lowered for other sizes (freed at the end) */
	BoundCache bounds;   /* each network's bound, computed once */
} Runner;

/* a's options, with the progress line saying `what` runs at `size` */
static SimOpts
progress_opts(Runner *u, const SimArgs *a, const char *what, double size)
{
	u->prog.what = what;
	human_bytes(size, u->prog.size, sizeof u->prog.size);
	u->prog.t_run = wall_seconds();
	u->prog.n = a->nsize;
	for (int k = 0; k < a->nsize; k++)
		if (a->sizes[k] == size)
			u->prog.k = k + 1;
	SimOpts o = a->opts;
	o.progress = on_progress;
	o.progress_ctx = &u->prog;
	return o;
}

static int
simulate(Diag *dg, Runner *u, const SimArgs *a, const SimNet *net, int c, double size, const char *alg,
         Row *out)
{
	char err[512];
	SimOpts o = progress_opts(u, a, net->coll[c].name, size);
	*out = (Row){.name = net->coll[c].name, .kind = net->coll[c].kind,
	             .algorithm = alg ? alg : net->coll[c].algorithm, .size = size, .net = net,
	             .coll = c};
	if (sim_run(&u->arena, net, c, (int64_t)size, &o, &out->r, err, sizeof err) != 0) {
		if (net->coll[c].loc.line > 0)
			error_at(dg, net->coll[c].loc, "%s", err);
		else
			error_file(dg, "%s", err);
		return -1;
	}
	return 0;
}

static void
add_row(Runner *u, Row r)
{
	r.bound = bound_busbw(&u->bounds, r.net, r.coll);
	VEC_PUSH(&u->arena, u->rows, u->nrow, u->caprow, r);
}

/* `algorithm auto`: at each size, every candidate built for that size and
 * simulated (simulate_candidates); the fastest is the row, auto:NAME. A
 * size's row depends on nothing else in --sizes. The candidates stay in
 * u's arena: the rows' nets point into them. */
static int
run_auto(Diag *dg, Runner *u, const SimArgs *a, const Prog *p, const Sched *s)
{
	Simulated *cand = arena_array(&u->arena, NALG + (size_t)p->nsched, sizeof *cand);
	Routes routes;
	routes_init(&routes, s->topo, s->routing); /* the file's routing */
	PackMemo *memo = pack_memo_new();
	int rc = 0;
	for (int k = 0; k < a->nsize && rc == 0; k++) {
		SimOpts o = progress_opts(u, a, s->name, a->sizes[k]);
		int n = simulate_candidates(dg, &u->arena, &routes, memo, s, a->sizes[k], &o, cand);
		/* and the file's own SP of its kind (lower.c's auto weighs it too) */
		for (int j = 0; j < p->nsched; j++)
			if (auto_may_take(s, p->sched[j]) &&
			    simulate_one(dg, &u->arena, p->sched[j], a->sizes[k], &o, &cand[n]))
				cand[n++].net->coll[0].name = s->name;
		int best = fastest(cand, n);
		if (best < 0) {
			error_at(dg, s->loc, "auto: no algorithm of the library applies to '%s'", s->name);
			rc = -1;
			break;
		}
		add_row(u, (Row){.name = s->name, .kind = cand[best].net->coll[0].kind,
		                 .algorithm = sched_label(&u->arena, "auto:", cand[best].s),
		                 .size = a->sizes[k], .net = cand[best].net, .coll = 0,
		                 .r = cand[best].r});
	}
	routes_free(&routes); /* the rows hold the nets, which copy the routes */
	pack_memo_free(memo);
	return rc;
}

static int
run_net(Diag *dg, Runner *u, const SimArgs *a, const SimNet *net)
{
	/* before any simulation: a plot that cannot be drawn fails now */
	if (a->plot_links && !svg_links_draws(net)) {
		error_file(dg, "--plot-links draws 2D tori and meshes; this network is a %s", net->topo);
		return -1;
	}
	for (int c = 0; c < net->ncoll; c++) {
		if (a->collective && strcmp(net->coll[c].name, a->collective) != 0)
			continue;
		for (int k = 0; k < a->nsize; k++) {
			Row r;
			if (simulate(dg, u, a, net, c, a->sizes[k], NULL, &r) != 0)
				return -1;
			add_row(u, r);
		}
	}
	return 0;
}

/* ---- a .coll file: each size gets its own choices ---- */

/* One collective of the file at every size. */
static int
run_sched(Diag *dg, Runner *u, const SimArgs *a, SizedFile *z, const Prog *p, const Sched *s)
{
	if (strncmp(s->algorithm, "auto:", 5) == 0)
		return run_auto(dg, u, a, p, s);
	if (!s->size_chosen) {
		SimNet *net = NEW(&u->arena, SimNet);
		if (sched_to_sim(dg, &u->arena, s, a->opts.sync, net) != 0)
			return -1;
		net->coll[0].algorithm = sched_label(&u->arena, "", s);
		return run_net(dg, u, a, net);
	}
	for (int k = 0; k < a->nsize; k++) {
		const Sched *sk = sched_for_size(dg, z, a->sizes[k], s);
		SimNet *net = NEW(&u->arena, SimNet);
		Row r;
		if (!sk || sched_to_sim(dg, &u->arena, sk, a->opts.sync, net) != 0 ||
		    simulate(dg, u, a, net, 0, a->sizes[k], sched_label(&u->arena, "", sk), &r) != 0)
			return -1;
		add_row(u, r);
	}
	return 0;
}

/* Every selected collective of the .coll file at a->path (in: its first
 * load, kept by the caller). */
static int
run_coll(Diag *dg, Runner *u, const SimArgs *a, Input *in)
{
	in->prog.compact = true; /* the ring on a ring: symmetric, then streamed */
	in->prog.listed = a->opts.sync == SIM_DEPS; /* packing's segments listed */
	in->only = a->collective;
	int rc = load(dg, a->path, in, true, a->sizes[0]);
	SizedFile z = {.path = a->path, .base = a->sizes[0], .defs = &a->defs,
	               .listed = in->prog.listed};
	bool any = false;
	for (int i = 0; rc == 0 && i < in->prog.nsched; i++) {
		const Sched *s = in->prog.sched[i];
		if (a->collective && strcmp(s->name, a->collective) != 0)
			continue;
		any = true;
		rc = run_sched(dg, u, a, &z, &in->prog, s) != 0;
	}
	if (rc == 0 && !any) {
		if (a->collective)
			no_schedule_named(dg, &in->prog, a->collective);
		else
			error_file(dg, "no schedule is built from this file");
		rc = 1;
	}
	/* freed after the output: the rows' nets point into these schedules */
	u->sized = z;
	return rc;
}

/* ---- output ---- */

/* Whether name is one of the comma-separated names in list. */
static bool
in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == 0))
			return true;
	}
	return false;
}

/* The baseline row for r: the fastest --compare collective of r's kind at
 * r's size (with nccl_ring and nccl_tree both listed, NCCL's choice there:
 * NCCL's tuner also runs the faster of its algorithms at each size). */
static const Row *
baseline_of(const Runner *u, const char *list, const Row *r)
{
	const Row *best = NULL;
	for (int i = 0; i < u->nrow; i++) {
		const Row *b = &u->rows[i];
		if (b != r && b->size == r->size && strcmp(b->kind, r->kind) == 0 &&
		    in_list(list, b->name) && !in_list(list, r->name) && b->r.time_s > 0 &&
		    (!best || b->r.time_s < best->r.time_s))
			best = b;
	}
	return best;
}

/* --compare: every other row against the baseline of its kind and size:
 * speedup (baseline time / time), energy ratio, and the row's energy split
 * into its three terms, each as a share of the baseline's total energy. */
static void
print_comparison(const Runner *u, const char *list, FILE *f)
{
	static const char *const head[] = {"collective", "baseline", "size", "speedup", "energy",
	                                   "link", "router", "static"};
	Table t;
	table_init(&t, countof(head), head, "llrrrrrr");
	for (int i = 0; i < u->nrow; i++) {
		const Row *r = &u->rows[i], *b = baseline_of(u, list, r);
		if (!b)
			continue;
		double e = b->r.energy_j > 0 ? b->r.energy_j : 1;
		table_cell(&t, "%s", r->name);
		table_cell(&t, "%s", b->name);
		table_cell(&t, "%.0f", r->size);
		table_cell(&t, "%.3fx", r->r.time_s > 0 ? b->r.time_s / r->r.time_s : 0);
		table_cell(&t, "%.3fx", r->r.energy_j / e);
		table_cell(&t, "%.3f", r->r.energy_link_j / e);
		table_cell(&t, "%.3f", r->r.energy_router_j / e);
		table_cell(&t, "%.3f", r->r.energy_static_j / e);
	}
	fputs("\nagainst the baseline of the same kind and size (the fastest listed there): speedup =\n"
	      "its time / this time; energy, and its link, router and static parts, as shares of the\n"
	      "baseline's energy\n", f);
	table_print(&t, f);
	table_free(&t);
}

/* nccl-tests' figures of a row (runtime/perf.h); the simulator moves
 * bytes, so count and type are those of float */
typedef struct Figures {
	double count, algbw, busbw, bound, ratio; /* GB/s for the bandwidths */
	const char *redop;
} Figures;

static Figures
figures(const Row *r)
{
	const SimColl *c = &r->net->coll[r->coll];
	Figures f = {.count = floor(r->size / 4), .redop = perf_redop(r->kind, "sum")};
	f.algbw = r->r.time_s > 0 ? r->size / r->r.time_s / 1e9 : 0;
	f.busbw = f.algbw * perf_busbw_factor(r->kind, c->nrank);
	f.bound = r->bound / 1e9;
	f.ratio = f.bound > 0 ? f.busbw / f.bound : 0;
	return f;
}

static void
human_energy(double j, char *buf, size_t len)
{
	if (j < 1e-3)
		snprintf(buf, len, "%.3f uJ", j * 1e6);
	else if (j < 1)
		snprintf(buf, len, "%.3f mJ", j * 1e3);
	else
		snprintf(buf, len, "%.3f J", j);
}

static void
print_table(const Runner *u, FILE *f)
{
	static const char *const head[] = {"collective", "algorithm", "size", "count", "type",
	                                   "redop", "time(us)", "algbw", "busbw", "bound",
	                                   "energy", "reconfigurations"};
	bool rewires = false; /* a column for optical reconfigurations, when there are any */
	for (int i = 0; i < u->nrow; i++)
		rewires |= u->rows[i].r.nreconfig > 0;
	Table t;
	table_init(&t, (int)countof(head) - !rewires, head, "llrrllrrrrrr");
	for (int i = 0; i < u->nrow; i++) {
		const Row *r = &u->rows[i];
		Figures g = figures(r);
		char en[32];
		human_energy(r->r.energy_j, en, sizeof en);
		table_cell(&t, "%s", r->name);
		table_cell(&t, "%s", r->algorithm);
		table_cell(&t, "%.0f", r->size);
		table_cell(&t, "%.0f", g.count);
		table_cell(&t, "float");
		table_cell(&t, "%s", g.redop);
		table_cell(&t, "%.2f", r->r.time_s * 1e6);
		table_cell(&t, "%.2f", g.algbw);
		table_cell(&t, "%.2f", g.busbw);
		table_cell(&t, "%.1f%%", g.ratio * 100);
		table_cell(&t, "%s", en);
		if (rewires) {
			char rt[32];
			human_time(r->r.reconfig_s, rt, sizeof rt);
			if (r->r.nreconfig)
				table_cell(&t, "%d in %s", r->r.nreconfig, rt);
			else
				table_cell(&t, "-");
		}
	}
	table_print(&t, f);
	table_free(&t);
	fputs("size in bytes; algbw and busbw in GB/s as nccl-tests computes them; bound: busbw "
	      "as a\nshare of the most any schedule of this kind can reach on these links, by "
	      "their cuts\nand the ranks' injection (docs/sim.md)\n", f);
	if (u->compare)
		print_comparison(u, u->compare, f);
}

static void
print_csv(const Runner *u, FILE *f)
{
	fprintf(f, "collective,kind,algorithm,size,count,type,redop,time_us,algbw_GBps,busbw_GBps,"
	           "bound_busbw_GBps,bound_ratio,energy_j,sp_goodput_Gbps,reconfigs,reconfig_s\n");
	for (int i = 0; i < u->nrow; i++) {
		const Row *r = &u->rows[i];
		Figures g = figures(r);
		fprintf(f, "%s,%s,%s,%.0f,%.0f,float,%s,%.12g,%.12g,%.12g,%.12g,%.12g,%.12g,%.12g,%d,"
		           "%.12g\n",
		        r->name, r->kind, r->algorithm, r->size, g.count, g.redop, r->r.time_s * 1e6,
		        g.algbw, g.busbw, g.bound, g.ratio, r->r.energy_j, r->r.goodput_bps / 1e9,
		        r->r.nreconfig, r->r.reconfig_s);
	}
}

static void
print_json(const Runner *u, FILE *f)
{
	fputs("{\"results\": [", f);
	for (int i = 0; i < u->nrow; i++) {
		const Row *r = &u->rows[i];
		Figures g = figures(r);
		fprintf(f, "%s\n  {\"collective\": ", i ? "," : "");
		json_string(f, r->name);
		fputs(", \"kind\": ", f);
		json_string(f, r->kind);
		fputs(", \"algorithm\": ", f);
		json_string(f, r->algorithm);
		fprintf(f, ", \"size\": %.0f, \"count\": %.0f, \"type\": \"float\", \"redop\": \"%s\", "
		           "\"time_us\": %.12g, \"algbw_GBps\": %.12g, \"busbw_GBps\": %.12g, "
		           "\"bound_busbw_GBps\": %.12g, \"bound_ratio\": %.12g, \"energy_j\": %.12g, "
		           "\"energy_link_j\": %.12g, \"energy_router_j\": %.12g, \"energy_static_j\": %.12g, "
		           "\"sp_goodput_Gbps\": %.12g, \"reconfigs\": %d, \"reconfig_s\": %.12g, "
		           "\"round_end_s\": [",
		        r->size, g.count, g.redop, r->r.time_s * 1e6, g.algbw, g.busbw, g.bound, g.ratio,
		        r->r.energy_j, r->r.energy_link_j, r->r.energy_router_j, r->r.energy_static_j,
		        r->r.goodput_bps / 1e9, r->r.nreconfig, r->r.reconfig_s);
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

/* Every name given to --compare is a collective that was simulated. */
static int
check_compare(Diag *dg, const Runner *u, const char *list)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", list);
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		bool found = false;
		for (int i = 0; i < u->nrow && !found; i++)
			found = strcmp(u->rows[i].name, tok) == 0;
		if (!found) {
			error_file(dg, "--compare: no collective named '%s' was simulated", tok);
			return 1;
		}
	}
	return 0;
}

static int
write_mem(const char *path, void (*fn)(const Runner *, FILE *), const Runner *u)
{
	MemOut m;
	fn(u, memout_open(&m));
	return write_output(path, &m);
}

/* The plots' series: one per collective in the order first met, the
 * legend saying what it ran (auto: its first pick), y its busbw or its
 * time (us) at each of a's sizes, -1 where not simulated; *bound the
 * largest bound. The caller frees the series and *y. */
static PlotSeries *
size_series(const Runner *u, const SimArgs *a, bool time, double **y, int *ns, double *bound)
{
	const char **names = arena_array((Arena *)&u->arena, (size_t)u->nrow + 1, sizeof *names);
	*ns = 0;
	for (int i = 0; i < u->nrow; i++) {
		int k = 0;
		while (k < *ns && strcmp(names[k], u->rows[i].name) != 0)
			k++;
		if (k == *ns)
			names[(*ns)++] = u->rows[i].name;
	}
	PlotSeries *s = xcalloc((size_t)*ns + 1, sizeof *s);
	*y = xmalloc(((size_t)*ns * a->nsize + 1) * sizeof **y);
	*bound = 0;
	for (int k = 0; k < *ns; k++) {
		s[k].y = *y + (size_t)k * a->nsize;
		for (int j = 0; j < a->nsize; j++)
			(*y)[(size_t)k * a->nsize + j] = -1;
		for (int i = 0; i < u->nrow && !s[k].name; i++)
			if (strcmp(u->rows[i].name, names[k]) == 0)
				s[k].name = arena_printf((Arena *)&u->arena, "%s: %s", names[k],
				                         u->rows[i].algorithm);
	}
	for (int i = 0; i < u->nrow; i++) {
		const Row *r = &u->rows[i];
		int k = 0, j = 0;
		while (strcmp(names[k], r->name) != 0)
			k++;
		while (a->sizes[j] != r->size)
			j++;
		Figures g = figures(r);
		(*y)[(size_t)k * a->nsize + j] = time ? r->r.time_s * 1e6 : g.busbw;
		if (g.bound > *bound)
			*bound = g.bound;
	}
	return s;
}

/* "torus 8x8": a network's form and its dimensions (when it has them). */
static const char *
net_title(Arena *a, const SimNet *n)
{
	char dims[64] = "";
	for (int k = 0, at = 0; k < n->ndim && at < (int)sizeof dims - 12; k++)
		at += snprintf(dims + at, sizeof dims - (size_t)at, "%s%d", k ? "x" : " ", n->size[k]);
	return arena_printf(a, "%s%s", n->topo, dims);
}

/* --plot (busbw) or --plot-time (time), titled with the network and mode;
 * the legend names each collective's algorithm. */
static int
plot_sizes(const Runner *u, const SimArgs *a, bool time)
{
	double *y, bound;
	int ns;
	PlotSeries *s = size_series(u, a, time, &y, &ns, &bound);
	MemOut m;
	Arena *ar = (Arena *)&u->arena;
	const char *title = arena_printf(ar, "%s by message size on %s (%s mode)",
	                                 time ? "time (us)" : "busbw (GB/s)",
	                                 u->nrow ? net_title(ar, u->rows[0].net) : "?",
	                                 a->opts.mode == SIM_FLOW ? "flow" : "packet");
	if (time)
		svg_time(memout_open(&m), title, a->sizes, a->nsize, s, ns);
	else
		svg_busbw(memout_open(&m), title, a->sizes, a->nsize, s, ns, bound);
	free(s), free(y);
	return write_output(time ? a->plot_time : a->plot, &m);
}

static int
plot_links(Diag *dg, const Runner *u, const SimArgs *a)
{
	const Row *r = NULL;
	for (int i = 0; i < u->nrow && !r; i++)
		if (u->rows[i].size == a->link_size)
			r = &u->rows[i];
	if (!r) {
		error_file(dg, "--plot-links: nothing was simulated at that --size");
		return 1;
	}
	double *util = xmalloc(((size_t)r->r.nlink + 1) * sizeof *util);
	for (int l = 0; l < r->r.nlink; l++)
		util[l] = r->r.time_s > 0 ? r->r.link_busy[l] / r->r.time_s : 0;
	char sz[32], title[256];
	human_bytes(r->size, sz, sizeof sz);
	snprintf(title, sizeof title, "%s (%s), %s: link utilization", r->name, r->algorithm, sz);
	MemOut m;
	int ok = svg_links(memout_open(&m), r->net, util, title);
	free(util);
	if (ok)
		return write_output(a->plot_links, &m);
	memout_drop(&m);
	error_file(dg, "--plot-links draws 2D tori, meshes and supermeshes; '%s' is on a %s", r->name,
	           r->net->topo);
	return 1;
}

static int
sim_opt(void *ctx, const char *name, const char *value)
{
	SimArgs *a = ctx;
	if (strcmp(name, "sizes") == 0) {
		return sizes_opt("sim", value, a->sizes, &a->nsize);
	} else if (strcmp(name, "size") == 0) {
		if ((a->link_size = parse_bytes(value)) < 1)
			return size_usage("sim", name, value, a->link_size,
			                  "a whole number of bytes such as 1MiB");
	} else if (strcmp(name, "mode") == 0 || strcmp(name, "sync") == 0) {
		a->mode_set |= strcmp(name, "mode") == 0;
		return sim_mode_opt("sim", name, value, &a->opts);
	} else if (strcmp(name, "model") == 0) {
		static const char *const models[] = {"executor", "steps"};
		int k = cli_choice("sim", name, value, models, 2);
		if (k < 0)
			return 2;
		a->steps = k == 1;
	} else if (strcmp(name, "links") == 0) {
		static const char *const links[] = {"shared", "private"};
		int k = cli_choice("sim", name, value, links, 2);
		if (k < 0)
			return 2;
		a->opts.private_links = k == 1;
	} else if (strcmp(name, "reduce-rate") == 0) {
		if ((a->opts.reduce_rate = parse_rate(value)) <= 0)
			return usage_error("sim: --reduce-rate takes a rate such as 100GBps or 800Gbps "
			                   "(a bare number is bytes per second)");
	} else if (strcmp(name, "collective") == 0) {
		a->collective = value;
	} else if (strcmp(name, "compare") == 0) {
		a->compare = value;
	} else if (strcmp(name, "plot") == 0) {
		a->plot = value;
	} else if (strcmp(name, "plot-time") == 0) {
		a->plot_time = value;
	} else if (strcmp(name, "plot-links") == 0) {
		a->plot_links = value;
	} else if (strcmp(name, "output") == 0) {
		a->out = value;
	} else if (strcmp(name, "csv") == 0) {
		a->csv = true;
	} else if (strcmp(name, "json") == 0) {
		a->json = true;
	} else if (strcmp(name, "topology") == 0) {
		a->topology = value;
	} else if (strcmp(name, "ranks") == 0) {
		a->ranks = value;
	} else if (strcmp(name, "legacy") == 0) {
		a->legacy = true;
	} else if (strcmp(name, "define") == 0) {
		return define_opt("sim", &a->defs, value);
	}
	return 0;
}

static const CliOpt sim_opts[] = {
	{"sizes", 0, "A..B|A,B,..", "vector sizes: powers of two from A to B, or a list "
	                            "(default 1MiB)"},
	SIM_MODE_OPTS,
	{"links", 0, "L", "shared (default) or private: no link contention"},
	{"reduce-rate", 0, "R", "bytes reduced per second at a receiver (100GBps, 800Gbps; "
	                        "bare: B/s)"},
	{"collective", 0, "NAME", "only the collective NAME"},
	{"compare", 0, "A,B,..", "speedup and energy against the baseline of each kind"},
	{"topology", 0, "T.coll", "FILE.xml: the .coll file whose topology runs the XML"},
	{"ranks", 0, "LIST", "FILE.xml: the node of each XML rank (default 0..p-1)"},
	{"legacy", 0, NULL, "FILE.xml: read the older microsoft/msccl dialect"},
	{"model", 0, "M", "FILE.xml: executor (default; flow mode) or steps (a message a step)"},
	{"csv", 0, NULL, "print CSV"},
	{"json", 0, NULL, "print JSON (with per-round and per-link figures)"},
	{"output", 'o', "OUT", "write the table, CSV or JSON to OUT"},
	DEFINE_OPT,
	{"plot", 0, "G.svg", "plot busbw against size"},
	{"plot-time", 0, "T.svg", "plot time against size (log-log)"},
	{"plot-links", 0, "L.svg", "draw link utilization at --size (2D tori and meshes)"},
	{"size", 0, "S", "the size --plot-links draws"},
};

static int cmd_sim(Diag *, int argc, char **argv);

const CliCommand cli_sim = {
	"sim", "FILE.sim|FILE.coll|FILE.xml",
	"simulate each collective on its links: time, algbw, busbw, bound, energy",
	"The columns are nccl-tests': size (bytes), count (elements of float), type, redop,\n"
	"time(us), algbw = size / time and busbw = algbw x the collective's factor (GB/s);\n"
	"bound is busbw over the topology's bound for the collective kind (docs/sim.md).\n",
	sim_opts, countof(sim_opts), cmd_sim, NULL};

/* "0..7", "7..0", "0,2,4..6": the node of each XML rank, or -1. */
static int
parse_ranks(const char *text, int *node, int max)
{
	int n = 0;
	const char *s = text;
	while (*s) {
		char *end;
		long lo = strtol(s, &end, 10), hi = lo;
		if (end == s || lo < 0 || lo > 1 << 20)
			return -1;
		s = end;
		if (strncmp(s, "..", 2) == 0) {
			hi = strtol(s + 2, &end, 10);
			if (end == s + 2 || hi < 0 || hi > 1 << 20)
				return -1;
			s = end;
		}
		for (long v = lo;; v += hi >= lo ? 1 : -1) {
			if (n == max)
				return -1;
			node[n++] = (int)v;
			if (v == hi)
				break;
		}
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return n;
}

/* --ranks: every node a rank of t, and no node twice (two ranks on one
 * node would exchange nothing over the network and time to zero). */
static int
check_rank_nodes(Diag *dg, Arena *a, const int *node, int n, const Topo *t)
{
	int *first = arena_array(a, (size_t)t->nnode + 1, sizeof *first);
	for (int r = 0; r < n; r++) {
		if (node[r] >= t->nnode || (t->is_switch && t->is_switch[node[r]])) {
			error_file(dg, "--ranks: node %d is not a rank of %s (it has %d)", node[r], t->name,
			           t->nrank);
			return 1;
		}
		if (first[node[r]]) {
			error_file(dg, "--ranks: node %d is listed twice (for XML ranks %d and %d); each "
			           "rank needs a node of its own", node[r], first[node[r]] - 1, r);
			return 1;
		}
		first[node[r]] = r + 1;
	}
	return 0;
}

/* The executor model (docs/sim.md 7): program p lowered for each size. */
static int
run_xml_exec(Diag *dg, Runner *u, const SimArgs *a, const MProg *p, const Topo *t,
             const int *node)
{
	for (int k = 0; k < a->nsize; k++) {
		SimNet *net = NEW(&u->arena, SimNet);
		Row r;
		if (sim_from_msccl_exec(dg, &u->arena, p, t, node, (int64_t)a->sizes[k], net) != 0 ||
		    simulate(dg, u, a, net, 0, a->sizes[k], NULL, &r) != 0)
			return -1;
		add_row(u, r);
	}
	return 0;
}

/* FILE.xml on the first topology of --topology T.coll, rank r on node
 * --ranks[r] (default: the r-th node that is not a switch). */
static int
run_xml(Diag *dg, Runner *u, const SimArgs *a, const char *text, size_t len)
{
	if (!a->topology)
		return usage_error("sim: an MSCCL XML file needs --topology T.coll (the network it "
		                   "runs on)") != 0;
	Input in = {.defs = &a->defs};
	int rc = load(dg, a->topology, &in, true, a->sizes[0]);
	if (rc == 0 && in.prog.ntopo == 0) {
		error_file(dg, "%s declares no topology", a->topology);
		rc = 1;
	}
	const Topo *t = rc == 0 ? in.prog.topo[0] : NULL;
	MProg p;
	if (rc == 0) {
		diag_source(dg, a->path, text, len);
		rc = msccl_read(dg, &u->arena, text, len, a->legacy, &p) != 0;
	}
	int *node = rc == 0 ? arena_array(&u->arena, (size_t)p.ngpus + 1, sizeof *node) : NULL;
	if (rc == 0 && a->ranks) {
		int n = parse_ranks(a->ranks, node, p.ngpus + 1);
		if (n != p.ngpus) {
			error_file(dg, "--ranks '%s': give the node of each of the file's %d ranks (such as "
			           "0..%d or %d..0)", a->ranks, p.ngpus, p.ngpus - 1, p.ngpus - 1);
			rc = 1;
		}
		rc = rc == 0 ? check_rank_nodes(dg, &u->arena, node, p.ngpus, t) : rc;
	} else if (rc == 0) {
		int r = 0;
		for (int v = 0; v < t->nnode && r < p.ngpus; v++)
			if (!t->is_switch || !t->is_switch[v])
				node[r++] = v;
		if (r < p.ngpus) {
			error_file(dg, "the file has %d ranks and %s only %d", p.ngpus, t->name, t->nrank);
			rc = 1;
		}
	}
	SimArgs b = *a;
	b.opts.sync = SIM_DEPS; /* an XML program is ordered by its dependencies */
	if (rc == 0 && a->steps) {
		SimNet *net = NEW(&u->arena, SimNet);
		rc = sim_from_msccl(dg, &u->arena, &p, t, node, net) != 0;
		rc = rc == 0 ? run_net(dg, u, &b, net) != 0 : rc;
	} else if (rc == 0) {
		/* the executor model: slices and iterations depend on the size */
		if (!a->mode_set)
			b.opts.mode = SIM_FLOW;
		rc = run_xml_exec(dg, u, &b, &p, t, node) != 0;
	}
	input_free(&in);
	return rc;
}

static int
parse_args(int argc, char **argv, SimArgs *a)
{
	a->sizes[0] = 1 << 20;
	a->nsize = 1;
	a->link_size = -1;
	int bad = cli_parse(&cli_sim, argc, argv, a, sim_opt, &a->path);
	if (bad)
		return bad;

	if (a->csv && a->json)
		return usage_error("sim: %s", "--csv or --json, not both");
	if (a->compare && (a->csv || a->json))
		return usage_error("sim: %s", "--compare adds a table to the text output, not to "
		                              "--csv or --json (JSON carries the energy terms)");
	if (a->link_size >= 0 && !a->plot_links)
		return usage_error("sim: %s", "--size S is the size --plot-links draws; for the sizes to "
		                              "simulate, give --sizes");
	if ((a->plot && !is_svg_name(a->plot)) || (a->plot_time && !is_svg_name(a->plot_time)) ||
	    (a->plot_links && !is_svg_name(a->plot_links)))
		return usage_error("sim: %s", "plots are written as SVG: give --plot, --plot-time and "
		                              "--plot-links a name ending in .svg");
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

static int
cmd_sim(Diag *dg, int argc, char **argv)
{
	SimArgs a = {0};
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	Runner u = {0};
	u.prog = (Progress){.t0 = wall_seconds(), .tty = isatty(2)};
	Input in = {.defs = &a.defs};
	size_t len;
	char err[512];
	char *text = read_file(a.path, &len, err, sizeof err);
	if (!text) {
		fprintf(stderr, "collc: error: %s\n", err);
		return 1;
	}
	size_t plen = strlen(a.path);
	bool xml = plen > 4 && strcmp(a.path + plen - 4, ".xml") == 0;
	if ((a.topology || a.ranks || a.legacy || a.steps) && !xml) {
		free(text);
		return usage_error("sim: --topology, --ranks, --legacy and --model are for MSCCL XML files; "
		                   "'%s' is not one", a.path);
	}
	if (xml) {
		rc = run_xml(dg, &u, &a, text, len);
	} else if (sim_is_text(text, len)) {
		diag_source(dg, strcmp(a.path, "-") ? a.path : "<stdin>", text, len);
		SimNet *net = NEW(&u.arena, SimNet);
		rc = sim_read(dg, &u.arena, text, len, net) != 0 || nerrors(dg) > 0;
		if (rc == 0 && a.collective) {
			bool found = false;
			for (int c = 0; c < net->ncoll; c++)
				found |= strcmp(net->coll[c].name, a.collective) == 0;
			if (!found) {
				error_file(dg, "no collective named '%s' in this file", a.collective);
				rc = 1;
			}
		}
		if (rc == 0)
			rc = run_net(dg, &u, &a, net) != 0;
	} else {
		/* stdin cannot be read twice: load reads the path itself */
		if (strcmp(a.path, "-") == 0) {
			free(text);
			fprintf(stderr, "collc: error: sim reads a .coll file by name, not from stdin\n");
			return 1;
		}
		rc = run_coll(dg, &u, &a, &in);
	}
	if (u.prog.shown)
		fputs("\r\033[K", stderr);
	if (rc == 0 && a.compare)
		rc = check_compare(dg, &u, a.compare);
	u.compare = a.compare;
	if (rc == 0)
		rc = write_mem(a.out, a.json ? print_json : a.csv ? print_csv : print_table, &u);
	if (rc == 0 && a.plot)
		rc = plot_sizes(&u, &a, false);
	if (rc == 0 && a.plot_time)
		rc = plot_sizes(&u, &a, true);
	if (rc == 0 && a.plot_links)
		rc = plot_links(dg, &u, &a);
	free(text);
	input_free(&in);
	sized_free(&u.sized);
	bound_cache_free(&u.bounds);
	arena_free(&u.arena);
	return rc;
}
