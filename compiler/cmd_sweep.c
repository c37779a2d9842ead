/*
 * cmd_sweep.c: `collc sweep SPEC`: simulate a grid of collectives (docs/sweep.md).
 *
 * SPEC is a small line-based file: each line is a key and a comma-separated
 * list (commas inside parentheses belong to the value), e.g.
 *
 *   topology  torus(8, 8), torus(4, 4, 4)
 *   groups    2, 4, 8, 16
 *   allreduce ring, ring(ports 2), halving_doubling
 *   routing   shortest_path, dor
 *   link_bandwidth 400 GBps
 *   sizes     64KiB..4MiB
 *
 * The grid is every topology x group x (collective, algorithm) x routing x
 * network variant x size; a group of g is ranks 0..g-1 (consecutive ids,
 * row-major). Each configuration but the size is a "unit": a .coll text
 * built, verified and converted once, then simulated at its sizes. Points
 * are numbered in that nesting order (size fastest), and every point gets a
 * row, with a status when it was not simulated.
 *
 * Work is spread over worker processes (fork), one record per point coming
 * back through a pipe; the parent keeps the rows by point number, so the
 * output does not depend on which worker ran what. `--shard i/n` keeps the
 * points p with p mod n = i; `--merge` sorts shards' rows by point number,
 * which gives the one-machine file byte for byte.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "driver.h"
#include "perf.h"
#include "simbuild.h"
#include "svgplot.h"

enum { MAX_VALUES = 64, MAX_LIST = 8, MAX_WORKERS = 64, NOTE_LEN = 160 };

/* The network keys a spec may list, in column order. */
static const char *const net_keys[] = {"link_bandwidth", "link_latency", "router_latency",
                                       "step_overhead", "mtu"};
enum { NNET = 5 };

typedef struct List {
	char *v[MAX_VALUES];
	int n;
} List;

typedef struct Spec {
	List topo, groups, routing, net[NNET];
	List alg[NCOLLKIND];   /* per collective kind: its algorithms */
	double sizes[MAX_VALUES];
	int nsize;
	SimOpts opts;
	/* derived: the units in order */
	int nunit;
	int per_topo, per_group, per_pair, per_route; /* strides of the nesting */
	int npair;                                    /* (collective, algorithm) pairs */
	int pair_kind[NCOLLKIND * MAX_VALUES], pair_alg[NCOLLKIND * MAX_VALUES];
} Spec;

/* One unit decoded from its number. */
typedef struct Unit {
	int topo, group, pair, route, net[NNET];
} Unit;

typedef enum Status { ST_OK, ST_NOT_APPLICABLE, ST_NOT_BUILT, ST_ERROR, NSTATUS } Status;
static const char *const status_name[] = {"ok", "not_applicable", "not_built", "error"};

/* What a worker sends back for one point (one write, under PIPE_BUF). */
typedef struct Record {
	int point;
	int status;
	int nrank;
	double time_s;
	char note[NOTE_LEN];
} Record;

/* ---- the spec file ---- */

static char *
trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	char *e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

/* Splits at commas outside parentheses; 0, or -1 if too many values. */
static int
split_list(char *text, List *l)
{
	l->n = 0;
	int depth = 0;
	char *start = text;
	for (char *p = text;; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		if (*p == 0 || (*p == ',' && depth == 0)) {
			bool end = *p == 0;
			*p = 0;
			char *v = trim(start);
			if (*v) {
				if (l->n == MAX_VALUES)
					return -1;
				l->v[l->n++] = v;
			}
			if (end)
				return 0;
			start = p + 1;
		}
	}
}

static int spec_error(const char *path, int line, const char *fmt, ...) PRINTF_LIKE(3, 4);

static int
spec_error(const char *path, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (line > 0)
		fprintf(stderr, "%s:%d: error: ", path, line);
	else
		fprintf(stderr, "%s: error: ", path);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static int
spec_sizes(const char *path, int line, char *text, Spec *s)
{
	List l;
	split_list(text, &l);
	s->nsize = 0;
	for (int i = 0; i < l.n; i++) {
		char *dots = strstr(l.v[i], "..");
		double lo, hi;
		if (dots) {
			*dots = 0;
			lo = parse_size(l.v[i]), hi = parse_size(dots + 2);
		} else {
			lo = hi = parse_size(l.v[i]);
		}
		if (lo < 1 || hi < lo)
			return spec_error(path, line, "sizes: '%s' is not a size or a range A..B", l.v[i]);
		for (double v = lo; v <= hi * (1 + 1e-12); v *= 2) {
			if (s->nsize == MAX_VALUES)
				return spec_error(path, line, "sizes: more than %s sizes", "64");
			s->sizes[s->nsize++] = floor(v);
		}
	}
	return 0;
}

static int
spec_option(const char *path, int line, const char *key, char *val, Spec *s)
{
	if (strcmp(key, "mode") == 0 && (strcmp(val, "packet") == 0 || strcmp(val, "flow") == 0)) {
		s->opts.mode = val[0] == 'p' ? SIM_PACKET : SIM_FLOW;
		return 0;
	}
	if (strcmp(key, "sync") == 0 && (strcmp(val, "rounds") == 0 || strcmp(val, "deps") == 0)) {
		s->opts.sync = val[0] == 'r' ? SIM_ROUNDS : SIM_DEPS;
		return 0;
	}
	if (strcmp(key, "links") == 0 && (strcmp(val, "shared") == 0 || strcmp(val, "private") == 0)) {
		s->opts.private_links = val[0] == 'p';
		return 0;
	}
	if (strcmp(key, "mode") == 0 || strcmp(key, "sync") == 0 || strcmp(key, "links") == 0)
		return spec_error(path, line, "'%s' takes packet|flow, rounds|deps or shared|private",
		                  key);
	return spec_error(path, line, "unknown key '%s' (topology, groups, a collective kind, "
	                  "routing, link_bandwidth, link_latency, router_latency, step_overhead, "
	                  "mtu, sizes, mode, sync, links)", key);
}

static List *
spec_list(Spec *s, const char *key)
{
	if (strcmp(key, "topology") == 0)
		return &s->topo;
	if (strcmp(key, "groups") == 0)
		return &s->groups;
	if (strcmp(key, "routing") == 0)
		return &s->routing;
	for (int k = 0; k < NNET; k++)
		if (strcmp(key, net_keys[k]) == 0)
			return &s->net[k];
	for (int k = 0; k < NCOLLKIND; k++)
		if (strcmp(key, coll_kind_name[k]) == 0)
			return &s->alg[k];
	return NULL;
}

/* The strides of the unit numbering and the (collective, algorithm) pairs. */
static int
spec_finish(const char *path, Spec *s)
{
	static char dflt_route[] = "shortest_path", dflt_group[] = "all";
	if (!s->topo.n || !s->nsize)
		return spec_error(path, 0, "%s", "a spec needs a topology line and a sizes line");
	if (!s->routing.n)
		s->routing.v[s->routing.n++] = dflt_route;
	if (!s->groups.n)
		s->groups.v[s->groups.n++] = dflt_group;
	s->npair = 0;
	for (int k = 0; k < NCOLLKIND; k++)
		for (int i = 0; i < s->alg[k].n; i++) {
			s->pair_kind[s->npair] = k;
			s->pair_alg[s->npair++] = i;
		}
	if (!s->npair)
		return spec_error(path, 0, "%s", "a spec needs a line of algorithms for a collective "
		                  "kind, e.g. 'allreduce ring, halving_doubling'");
	for (int i = 0; i < s->groups.n; i++) {
		char *end;
		long g = strtol(s->groups.v[i], &end, 10);
		if (strcmp(s->groups.v[i], "all") != 0 && (*end || g < 1 || g > 1 << 20))
			return spec_error(path, 0, "groups: '%s' is not a rank count or 'all'",
			                  s->groups.v[i]);
	}
	int nnet = 1;
	for (int k = 0; k < NNET; k++)
		nnet *= s->net[k].n ? s->net[k].n : 1;
	s->per_route = nnet;
	s->per_pair = s->per_route * s->routing.n;
	s->per_group = s->per_pair * s->npair;
	s->per_topo = s->per_group * s->groups.n;
	double units = (double)s->per_topo * s->topo.n;
	if (units * s->nsize > 1e7)
		return spec_error(path, 0, "%s", "the grid has more than 10^7 points");
	s->nunit = (int)units;
	return 0;
}

/* Reads SPEC; the text stays allocated (the lists point into it). */
static int
spec_read(const char *path, Spec *s, char **textp)
{
	char err[512];
	size_t len;
	char *text = read_file(path, &len, err, sizeof err);
	if (!text) {
		fprintf(stderr, "collc: error: %s\n", err);
		return -1;
	}
	*textp = text;
	memset(s, 0, sizeof *s);
	int line = 0;
	for (char *p = text, *nl; p && *p; p = nl) {
		nl = strchr(p, '\n');
		if (nl)
			*nl++ = 0;
		line++;
		char *hash = strchr(p, '#');
		if (hash)
			*hash = 0;
		char *l = trim(p);
		if (!*l)
			continue;
		char *key = l;
		while (*l && *l != ' ' && *l != '\t' && *l != ':')
			l++;
		if (*l)
			*l++ = 0;
		if (*l == ':')
			l++;
		char *val = trim(l);
		List *list = spec_list(s, key);
		if (strcmp(key, "sizes") == 0) {
			if (spec_sizes(path, line, val, s) != 0)
				return -1;
		} else if (list) {
			if (split_list(val, list) != 0)
				return spec_error(path, line, "'%s': more than 64 values", key);
		} else if (spec_option(path, line, key, val, s) != 0) {
			return -1;
		}
	}
	return spec_finish(path, s);
}

static Unit
unit_of(const Spec *s, int u)
{
	Unit x = {.topo = u / s->per_topo, .group = u % s->per_topo / s->per_group,
	          .pair = u % s->per_group / s->per_pair, .route = u % s->per_pair / s->per_route};
	int rest = u % s->per_route;
	for (int k = NNET - 1; k >= 0; k--) {
		int n = s->net[k].n ? s->net[k].n : 1;
		x.net[k] = rest % n;
		rest /= n;
	}
	return x;
}

/* ---- one unit: a .coll text, built and simulated ---- */

static char *
unit_coll(const Spec *s, const Unit *x)
{
	MemOut m;
	FILE *f = memout_open(&m);
	fputs("network {", f);
	for (int k = 0; k < NNET; k++)
		if (s->net[k].n)
			fprintf(f, " %s = %s;", net_keys[k], s->net[k].v[x->net[k]]);
	fputs(" }\n", f);
	int kind = s->pair_kind[x->pair];
	fprintf(f, "topology T = %s;\ncollective %s X on T {\n    algorithm %s;\n",
	        s->topo.v[x->topo], coll_kind_name[kind], s->alg[kind].v[s->pair_alg[x->pair]]);
	if (strcmp(s->groups.v[x->group], "all") != 0)
		fprintf(f, "    ranks 0..%ld;\n", strtol(s->groups.v[x->group], NULL, 10) - 1);
	fprintf(f, "    routing %s;\n}\n", s->routing.v[x->route]);
	memout_close(&m);
	return m.buf;
}

/* The first line of a captured diagnostic, after "error: ". */
static void
first_error(const char *diag, char *note)
{
	const char *e = strstr(diag, "error: ");
	e = e ? e + 7 : diag;
	size_t n = strcspn(e, "\n");
	if (n >= NOTE_LEN)
		n = NOTE_LEN - 1;
	memcpy(note, e, n);
	note[n] = 0;
	for (char *c = note; *c; c++)
		if (*c == '"' || *c == '\\')
			*c = '\'';
}

/* Builds unit u and simulates the sizes whose point is in the shard. */
static void
run_unit(const Spec *s, int u, int shard, int nshard, int fd)
{
	Unit x = unit_of(s, u);
	char *text = unit_coll(s, &x);
	MemOut diag;
	FILE *df = memout_open(&diag);
	diag_reset();
	diag_stream(df);
	Arena ast = {0}, sim = {0};
	Prog prog = {0};
	SimNet net = {0};
	Record r = {.status = ST_OK};
	/* as collc sim: round by round, large symmetric schedules and rings stream */
	bool rounds = s->opts.sync == SIM_ROUNDS;
	prog.compact = rounds;
	diag_source("sweep.coll", text, strlen(text));
	File *file = parse_text(&ast, "sweep.coll", text, strlen(text));
	if (nerrors() == 0)
		sema(file);
	if (nerrors() == 0)
		lower(file, &prog);
	if (nerrors() == 0 && prog.nskipped)
		r.status = ST_NOT_BUILT;
	else if (nerrors() || prog.nsched != 1 || verify(prog.sched[0]) != 0 ||
	         (rounds ? sim_stream_scheds : sim_from_scheds)(
	             &sim, (const Sched *const *)prog.sched, 1, &net) != 0)
		r.status = ST_NOT_APPLICABLE;
	fflush(df);
	if (r.status == ST_NOT_BUILT)
		snprintf(r.note, sizeof r.note, "collc has no generator for this algorithm yet");
	else if (r.status != ST_OK)
		first_error(diag.buf ? diag.buf : "", r.note);
	r.nrank = r.status == ST_OK ? net.coll[0].nrank : 0;
	for (int k = 0; k < s->nsize; k++) {
		r.point = u * s->nsize + k;
		if (r.point % nshard != shard)
			continue;
		Record out = r;
		char err[256];
		SimResult res;
		if (r.status == ST_OK) {
			if (sim_run(&sim, &net, 0, (int64_t)s->sizes[k], &s->opts, &res, err,
			            sizeof err) != 0) {
				out.status = ST_ERROR;
				first_error(err, out.note);
			} else {
				out.time_s = res.time_s;
			}
		}
		if (write(fd, &out, sizeof out) != (ssize_t)sizeof out)
			_exit(3);
	}
	diag_stream(stderr);
	memout_drop(&diag);
	prog_free(&prog);
	arena_free(&ast);
	arena_free(&sim);
	free(text);
}

/* ---- workers and the progress line ---- */

typedef struct Progress {
	double t0, last;
	long done, total;
	bool tty;
} Progress;

static void
progress_show(Progress *p, bool final)
{
	double now = wall_seconds(), el = now - p->t0;
	if (!final && now - p->last < (p->tty ? 0.2 : 5))
		return;
	p->last = now;
	char left[48] = "";
	if (p->done > 0 && p->done < p->total)
		snprintf(left, sizeof left, ", about %.0f s left",
		         el / (double)p->done * (double)(p->total - p->done));
	fprintf(stderr, "%ssweep: %ld of %ld points, %.0f s elapsed%s%s", p->tty ? "\r" : "",
	        p->done, p->total, el, left, p->tty && !final ? "\033[K" : "\n");
	if (p->tty && final)
		fputs("\033[K", stderr);
}

/* Runs every unit of the shard on `workers` processes; rec[point] filled. */
static int
run_all(const Spec *s, int shard, int nshard, int workers, Record *rec, bool *have)
{
	long total = 0;
	for (long p = 0; p < (long)s->nunit * s->nsize; p++)
		total += p % nshard == shard;
	Progress pg = {.t0 = wall_seconds(), .total = total, .tty = isatty(2)};
	struct pollfd pfd[MAX_WORKERS];
	pid_t pid[MAX_WORKERS];
	fflush(NULL);
	for (int w = 0; w < workers; w++) {
		int fds[2];
		if (pipe(fds) != 0)
			die("pipe: %s", strerror(errno));
		pid[w] = fork();
		if (pid[w] < 0)
			die("fork: %s", strerror(errno));
		if (pid[w] == 0) {
			close(fds[0]);
			for (int u = w; u < s->nunit; u += workers)
				run_unit(s, u, shard, nshard, fds[1]);
			_exit(0);
		}
		close(fds[1]);
		pfd[w] = (struct pollfd){.fd = fds[0], .events = POLLIN};
	}
	int open = workers, rc = 0;
	while (open > 0) {
		if (poll(pfd, (nfds_t)workers, -1) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		for (int w = 0; w < workers; w++) {
			if (pfd[w].fd < 0 || !(pfd[w].revents & (POLLIN | POLLHUP)))
				continue;
			Record r;
			ssize_t n = read(pfd[w].fd, &r, sizeof r);
			if (n == (ssize_t)sizeof r && r.point >= 0 && r.point < s->nunit * s->nsize) {
				rec[r.point] = r;
				have[r.point] = true;
				pg.done++;
				progress_show(&pg, false);
			} else if (n <= 0) {
				close(pfd[w].fd);
				pfd[w].fd = -1;
				open--;
			}
		}
	}
	for (int w = 0; w < workers; w++) {
		int st;
		if (waitpid(pid[w], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			rc = -1;
	}
	progress_show(&pg, true);
	if (rc != 0 || pg.done != total) {
		fprintf(stderr, "collc: error: sweep: a worker failed (%ld of %ld points back)\n",
		        pg.done, total);
		return -1;
	}
	return 0;
}

/* ---- output ---- */

static void
csv_field(FILE *f, const char *v)
{
	if (strpbrk(v, ",\"")) {
		fputc('"', f);
		for (; *v; v++) {
			if (*v == '"')
				fputc('"', f);
			fputc(*v, f);
		}
		fputc('"', f);
	} else {
		fputs(v, f);
	}
}

static const char *const columns[] = {
    "point", "topology", "ranks", "collective", "algorithm", "routing", "link_bandwidth",
    "link_latency", "router_latency", "step_overhead", "mtu", "size", "count", "type", "redop",
    "time_us", "algbw_GBps", "busbw_GBps", "status", "note"};
enum { NCOL = 20 };

/* The fields of one row as strings (numbers already formatted). */
static void
row_fields(const Spec *s, const Record *r, char (*v)[64], const char **note)
{
	Unit x = unit_of(s, r->point / s->nsize);
	int kind = s->pair_kind[x.pair];
	double size = s->sizes[r->point % s->nsize];
	snprintf(v[0], 64, "%d", r->point);
	snprintf(v[1], 64, "%s", s->topo.v[x.topo]);
	snprintf(v[2], 64, "%s", s->groups.v[x.group]);
	snprintf(v[3], 64, "%s", coll_kind_name[kind]);
	snprintf(v[4], 64, "%s", s->alg[kind].v[s->pair_alg[x.pair]]);
	snprintf(v[5], 64, "%s", s->routing.v[x.route]);
	for (int k = 0; k < NNET; k++)
		snprintf(v[6 + k], 64, "%s", s->net[k].n ? s->net[k].v[x.net[k]] : "");
	snprintf(v[11], 64, "%.0f", size);
	snprintf(v[12], 64, "%.0f", floor(size / 4));
	snprintf(v[13], 64, "float");
	snprintf(v[14], 64, "%s", perf_redop(coll_kind_name[kind], "sum"));
	bool ok = r->status == ST_OK && r->time_s > 0;
	double algbw = ok ? size / r->time_s / 1e9 : 0;
	double num[3] = {r->time_s * 1e6, algbw,
	                 algbw * perf_busbw_factor(coll_kind_name[kind], r->nrank)};
	for (int k = 0; k < 3; k++) /* empty when not simulated */
		snprintf(v[15 + k], 64, "%.3f", num[k]), v[15 + k][ok ? 63 : 0] = 0;
	snprintf(v[18], 64, "%s", status_name[r->status]);
	*note = r->note;
}

static void
write_csv(const Spec *s, const Record *rec, const bool *have, FILE *f)
{
	for (int c = 0; c < NCOL; c++)
		fprintf(f, "%s%s", c ? "," : "", columns[c]);
	fputc('\n', f);
	char v[NCOL][64];
	const char *note;
	for (long p = 0; p < (long)s->nunit * s->nsize; p++) {
		if (!have[p])
			continue;
		row_fields(s, &rec[p], v, &note);
		for (int c = 0; c < NCOL - 1; c++) {
			if (c)
				fputc(',', f);
			csv_field(f, v[c]);
		}
		fputc(',', f);
		csv_field(f, note);
		fputc('\n', f);
	}
}

static void
write_json(const Spec *s, const Record *rec, const bool *have, FILE *f)
{
	fputs("{\"points\": [\n", f);
	char v[NCOL][64];
	const char *note;
	bool first = true;
	for (long p = 0; p < (long)s->nunit * s->nsize; p++) {
		if (!have[p])
			continue;
		row_fields(s, &rec[p], v, &note);
		fputs(first ? "  {" : ",\n  {", f);
		first = false;
		for (int c = 0; c < NCOL; c++) {
			fprintf(f, "%s\"%s\": ", c ? ", " : "", columns[c]);
			const char *val = c == NCOL - 1 ? note : v[c];
			bool number = c == 0 || c == 11 || c == 12 || (c >= 15 && c <= 17);
			if (number && *val)
				fputs(val, f);
			else if (number)
				fputs("null", f);
			else
				json_string(f, val);
		}
		fputc('}', f);
	}
	fputs(first ? "]}\n" : "\n]}\n", f);
}

/* One busbw plot per unit family (all but the algorithm), series per
 * algorithm of the collective. */
static int
write_plots(const Spec *s, const Record *rec, const bool *have, const char *dir)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "collc: error: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	int rc = 0;
	double *y = xmalloc(((size_t)MAX_VALUES * s->nsize + 1) * sizeof *y);
	PlotSeries ser[MAX_VALUES];
	for (int u = 0; u < s->nunit && rc == 0; u++) {
		Unit x = unit_of(s, u);
		int kind = s->pair_kind[x.pair];
		if (s->pair_alg[x.pair] != 0)
			continue; /* the family is drawn once, from its first algorithm */
		int ns = 0;
		for (int a = 0; a < s->alg[kind].n; a++) {
			int uu = u + a * s->per_pair;
			ser[ns].name = s->alg[kind].v[a];
			ser[ns].y = y + (size_t)ns * s->nsize;
			bool any = false;
			for (int k = 0; k < s->nsize; k++) {
				long p = (long)uu * s->nsize + k;
				bool ok = have[p] && rec[p].status == ST_OK;
				y[(size_t)ns * s->nsize + k] =
				    ok ? s->sizes[k] / rec[p].time_s / 1e9 *
				             perf_busbw_factor(coll_kind_name[kind], rec[p].nrank)
				       : -1;
				any |= ok;
			}
			ns += any;
		}
		if (!ns)
			continue;
		char title[256], path[4096];
		snprintf(title, sizeof title, "%s %s, ranks %s, %s", coll_kind_name[kind],
		         s->topo.v[x.topo], s->groups.v[x.group], s->routing.v[x.route]);
		snprintf(path, sizeof path, "%s/sweep-%05d.svg", dir, u);
		MemOut m;
		svg_busbw(memout_open(&m), title, s->sizes, s->nsize, ser, ns, 0);
		rc = write_output(path, &m);
	}
	free(y);
	return rc;
}

static int
emit(const char *out, void (*fn)(const Spec *, const Record *, const bool *, FILE *),
     const Spec *s, const Record *rec, const bool *have)
{
	MemOut m;
	fn(s, rec, have, memout_open(&m));
	return write_output(out, &m);
}

/* ---- --merge: shards' rows sorted by point number ---- */

typedef struct Line {
	long point;
	char *text;
} Line;

static int
by_point(const void *a, const void *b)
{
	long x = ((const Line *)a)->point, y = ((const Line *)b)->point;
	return (x > y) - (x < y);
}

/* The point number of a row: CSV "N,..." or JSON "  {"point": N, ...". */
static long
row_point(const char *l, bool json)
{
	if (json) {
		const char *p = strstr(l, "{\"point\": ");
		return p ? strtol(p + 10, NULL, 10) : -1;
	}
	char *end;
	long v = strtol(l, &end, 10);
	return end != l && *end == ',' ? v : -1;
}

static int
merge(char **files, int n, const char *out)
{
	Line *rows = NULL;
	size_t nrow = 0, cap = 0;
	char *head = NULL, **texts = xcalloc((size_t)n + 1, sizeof *texts);
	bool json = false;
	int rc = 0;
	for (int i = 0; i < n && rc == 0; i++) {
		char err[512];
		size_t len;
		texts[i] = read_file(files[i], &len, err, sizeof err);
		if (!texts[i]) {
			fprintf(stderr, "collc: error: %s\n", err);
			rc = 1;
			break;
		}
		char *nl = strchr(texts[i], '\n');
		if (!nl) {
			fprintf(stderr, "collc: error: %s: not a sweep output\n", files[i]);
			rc = 1;
			break;
		}
		*nl = 0;
		if (i == 0) {
			head = texts[0];
			json = strcmp(head, "{\"points\": [") == 0;
		} else if (strcmp(head, texts[i]) != 0) {
			fprintf(stderr, "collc: error: %s: its header differs from %s's\n", files[i],
			        files[0]);
			rc = 1;
			break;
		}
		for (char *l = nl + 1, *e; *l; l = e) {
			e = strchr(l, '\n');
			if (e)
				*e++ = 0;
			else
				e = l + strlen(l);
			size_t ll = strlen(l);
			if (json && ll && l[ll - 1] == ',')
				l[--ll] = 0;
			if (json && strcmp(l, "]}") == 0)
				continue;
			long p = row_point(l, json);
			if (p < 0) {
				fprintf(stderr, "collc: error: %s: a row without a point number: %.60s\n",
				        files[i], l);
				rc = 1;
				break;
			}
			if (nrow == cap) {
				cap = cap ? 2 * cap : 1024;
				rows = xrealloc(rows, cap * sizeof *rows);
			}
			rows[nrow++] = (Line){p, l};
		}
	}
	if (rc == 0) {
		qsort(rows, nrow, sizeof *rows, by_point);
		for (size_t i = 0; i < nrow && rc == 0; i++)
			if (rows[i].point != (long)i) {
				fprintf(stderr, "collc: error: merge: point %zu is %s\n", i,
				        rows[i].point < (long)i ? "in two shards" : "in no shard");
				rc = 1;
			}
	}
	if (rc == 0) {
		MemOut m;
		FILE *mem = memout_open(&m);
		fprintf(mem, "%s\n", head);
		for (size_t i = 0; i < nrow; i++)
			fprintf(mem, "%s%s\n", rows[i].text, json && i + 1 < nrow ? "," : "");
		if (json)
			fputs("]}\n", mem);
		rc = write_output(out, &m);
	}
	for (int i = 0; i < n; i++)
		free(texts[i]);
	free(texts), free(rows);
	return rc;
}

/* ---- the command ---- */

typedef struct SweepArgs {
	const char *spec, *out, *json, *plots;
	int shard, nshard, jobs;
	bool merge;
} SweepArgs;

/* The shard from --shard i/n, or from the MPI launcher's rank and size. */
static int
parse_shard(const char *arg, SweepArgs *a)
{
	if (strcmp(arg, "mpi") == 0) {
		const char *r = getenv("OMPI_COMM_WORLD_RANK"), *n = getenv("OMPI_COMM_WORLD_SIZE");
		if (!r || !n)
			r = getenv("PMI_RANK"), n = getenv("PMI_SIZE");
		if (!r || !n)
			return -1;
		a->shard = atoi(r), a->nshard = atoi(n);
	} else if (sscanf(arg, "%d/%d", &a->shard, &a->nshard) != 2) {
		return -1;
	}
	return a->nshard >= 1 && a->shard >= 0 && a->shard < a->nshard ? 0 : -1;
}

static const CliOpt sweep_opts[] = {
	{"output", 'o', "OUT.csv", "write the CSV to OUT.csv (default: standard output)"},
	{"json", 0, "OUT.json", "also write the rows as JSON"},
	{"plots", 0, "DIR", "one SVG busbw plot per configuration in DIR"},
	{"jobs", 'j', "N", "worker processes (default: the online cores)"},
	{"shard", 0, "i/n|mpi", "only the points whose number is i modulo n (mpi: i and n from "
	                        "the MPI launcher)"},
	{"merge", 0, NULL, "join the shard files given as operands, in point order"},
};

int cmd_sweep(int argc, char **argv);

const CliCommand cli_sweep = {
	"sweep", "SPEC | --merge SHARD...",
	"simulate a grid of topologies, groups, algorithms, routing, networks and sizes",
	"SPEC lists, one key per line, the values of each grid dimension (docs/sweep.md).\n"
	"Rows have nccl-tests' columns (size, count, type, redop, time_us, algbw, busbw).\n",
	sweep_opts, countof(sweep_opts), cmd_sweep};

/* argv[0] is "sweep"; -1 after --help, else 0 or a usage error's status. */
static int
sweep_args(int argc, char **argv, SweepArgs *a)
{
	static const struct option opts[] = {
	    {"output", required_argument, 0, 'o'}, {"json", required_argument, 0, 'J'},
	    {"plots", required_argument, 0, 'P'},  {"shard", required_argument, 0, 'S'},
	    {"jobs", required_argument, 0, 'j'},   {"merge", no_argument, 0, 'M'},
	    {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
	*a = (SweepArgs){.nshard = 1};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	a->jobs = ncpu > 0 ? (int)(ncpu < MAX_WORKERS ? ncpu : MAX_WORKERS) : 1;
	optind = 0;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "o:j:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': a->out = optarg; break;
		case 'J': a->json = optarg; break;
		case 'P': a->plots = optarg; break;
		case 'M': a->merge = true; break;
		case 'h': cli_help(&cli_sweep, stdout); return -1;
		case 'S':
			if (parse_shard(optarg, a) != 0)
				return usage_error("sweep: --shard takes i/n with 0 <= i < n, or 'mpi' "
				                   "(the launcher's rank and size)");
			break;
		case 'j':
			a->jobs = atoi(optarg);
			if (a->jobs < 1 || a->jobs > MAX_WORKERS)
				return usage_error("sweep: --jobs takes 1..%d", MAX_WORKERS);
			break;
		default:
			return usage_error("sweep: unknown option '%s' (collc help sweep)",
			                   argv[optind - 1]);
		}
	}
	if (!a->merge && optind + 1 != argc)
		return usage_error("sweep: one SPEC file expected");
	if (a->merge && optind >= argc)
		return usage_error("sweep --merge: shard files expected");
	a->spec = argv[optind];
	return 0;
}

int
cmd_sweep(int argc, char **argv)
{
	SweepArgs a;
	int rc = sweep_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (a.merge)
		return merge(argv + optind, argc - optind, a.out ? a.out : "-");
	Spec *s = xcalloc(1, sizeof *s);
	char *text = NULL;
	if (spec_read(a.spec, s, &text) != 0) {
		free(text), free(s);
		return 1;
	}
	long npoint = (long)s->nunit * s->nsize;
	Record *rec = xcalloc((size_t)npoint + 1, sizeof *rec);
	bool *have = xcalloc((size_t)npoint + 1, sizeof *have);
	int workers = a.jobs < s->nunit ? a.jobs : s->nunit;
	rc = run_all(s, a.shard, a.nshard, workers > 0 ? workers : 1, rec, have) != 0;
	if (rc == 0)
		rc = emit(a.out ? a.out : "-", write_csv, s, rec, have);
	if (rc == 0 && a.json)
		rc = emit(a.json, write_json, s, rec, have);
	if (rc == 0 && a.plots)
		rc = write_plots(s, rec, have, a.plots);
	free(rec), free(have), free(text), free(s);
	return rc;
}
