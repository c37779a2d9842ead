/*
 * cmd_sweep.c: `collc sweep SPEC`: simulate a grid of collectives (docs/sweep.md).
 *
 * The grid is every topology x group x (collective, algorithm) x routing x
 * network variant x size, or a .coll file's collectives x routing x network
 * x size (sweep_spec.c reads and checks the spec). Each configuration but
 * the size is a unit, built and simulated by a worker at each of its sizes
 * (sweep_unit.c). Points are numbered in that nesting order (size fastest).
 * A point that cannot be built or simulated is an error located at the
 * spec value to blame; nothing is written.
 *
 * Work is spread over worker processes (fork), one record per point coming
 * back through a pipe; the parent keeps the rows by point number, so the
 * output does not depend on which worker ran what. Units run in unit_at's
 * order, which samples the whole grid evenly, so the progress line's
 * estimate (the cost of the points done per point_weight) holds for the
 * points left.
 * `--shard i/n` keeps the points p with p mod n = i; `--merge` sorts
 * shards' rows by point number, which gives the one-machine file byte for
 * byte. SIGINT or SIGTERM stops the run: the rows done so far are written (a partial
 * CSV, whole rows only) and `--resume` runs the rest into the same bytes
 * an uninterrupted run writes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "cli.h"
#include "perf.h"
#include "svgplot.h"
#include "sweep.h"

/* ---- workers and the progress line ---- */

typedef struct Progress {
	double t0, last;
	long done, total;
	double wdone, wtotal; /* point_weight's sums: of the points back, of all */
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
		snprintf(left, sizeof left, ", about %.0f s left", sweep_left(p->wdone, p->wtotal, el));
	fprintf(stderr, "%ssweep: %ld of %ld points, %.0f s elapsed%s%s", p->tty ? "\r" : "",
	        p->done, p->total, el, left, p->tty && !final ? "\033[K" : "\n");
	if (p->tty && final)
		fputs("\033[K", stderr);
}

/* Golden-ratio strides visit 0..n-1 evenly at every length (the
 * three-gap theorem): the units run first are spread over every topology,
 * group, algorithm and network value, never the grid's cheap corner. */
int
unit_at(int nunit, int i)
{
	long k = lround(nunit * 0.6180339887498949);
	for (; k > 1; k++) { /* the next stride prime to nunit */
		long a = nunit, b = k;
		while (b) {
			long t = a % b;
			a = b, b = t;
		}
		if (a == 1)
			break;
	}
	if (k < 1)
		k = 1;
	return (int)((long)i * k % nunit);
}

double
point_weight(const Spec *s, long p)
{
	if (s->cf.f)
		return 1; /* a file's collectives: their ranks are known once built */
	double most = 1;
	for (int g = 0; g < s->groups.n; g++)
		if (atof(s->groups.v[g]) > most)
			most = atof(s->groups.v[g]);
	const char *g = s->groups.v[unit_of(s, (int)(p / s->nsize)).group];
	return strcmp(g, "all") == 0 ? most : atof(g);
}

double
sweep_left(double done, double total, double elapsed)
{
	return done > 0 ? elapsed / done * (total - done) : 0;
}

/* The unit's routing (when the spec lists it) and network values, each
 * ", key value", as the spec writes them. */
static int
axes_desc(const Spec *s, const Unit *x, char *buf, size_t len)
{
	int n = 0;
	buf[0] = 0;
	if (s->nparam) {
		char combo[256];
		combo_label(s, x->topo, combo, sizeof combo);
		n += snprintf(buf, len, ", %s", combo);
	}
	if (s->route_given && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ", routing %s", s->routing.v[x->route]);
	for (int k = 0; k < NNET; k++)
		if (s->net[k].n && n >= 0 && (size_t)n < len)
			n += snprintf(buf + n, len - (size_t)n, ", %s %s", net_key(k),
			              s->net[k].v[x->net[k]]);
	return n;
}

/* The point a record is about, as the spec's values name it. */
static void
point_desc(const Spec *s, const Record *r, char *buf, size_t len)
{
	Unit x = unit_of(s, r->point / s->nsize);
	const Pair *p = &s->pair[x.pair];
	char size[32], axes[512];
	human_bytes(s->sizes[r->point % s->nsize], size, sizeof size);
	axes_desc(s, &x, axes, sizeof axes);
	if (s->cf.f)
		snprintf(buf, len, "%s %s on %s%s, %s", coll_kind_name[p->kind], p->name, p->topo, axes,
		         size);
	else
		snprintf(buf, len, "%s %s on %s, ranks %s%s, %s", coll_kind_name[p->kind], p->alg,
		         s->topo.v[x.topo], s->groups.v[x.group], axes, size);
}

/* A point that failed: an error at the spec value to blame, and a note
 * where collc's message points in the .coll file. */
static void
report_failure(Diag *dg, const Spec *s, const Record *r)
{
	char desc[768];
	point_desc(s, r, desc, sizeof desc);
	diag_reset(dg);
	/* a tree or a group cannot be declared in a spec: the file can */
	bool decl = !s->cf.f && (strncmp(r->note, "unknown tree", 12) == 0 ||
	                         strncmp(r->note, "unknown group", 13) == 0);
	spec_error(dg, s, r->at, "point %d (%s) cannot be simulated: %s%s", r->point, desc, r->note,
	           decl ? " (declare trees and groups in a .coll file and name it with `file`)" : "");
	if (s->cf.f && r->coll_at.line) {
		diag_source(dg, s->cf.path, s->cf.text, s->cf.len);
		note_at(dg, r->coll_at, "in '%s'", s->pair[unit_of(s, r->point / s->nsize).pair].name);
	}
}

/* SIGINT or SIGTERM during a run: the signal, set by the handler and read
 * between polls; either keeps the finished rows. */
static volatile sig_atomic_t interrupted;

static void
on_stop(int sig)
{
	interrupted = sig;
}

/* A worker dies with its parent, whatever ends the parent (even SIGKILL,
 * which leaves no handler a chance to end the workers): on Linux the
 * kernel sends it SIGKILL (PR_SET_PDEATHSIG), and a parent gone before
 * that was set is seen by getppid. SIGTERM, which the parent holds and
 * handles, is the worker's to die by again. */
static void
worker_start(pid_t parent)
{
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
	if (getppid() != parent)
		_exit(1);
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGTERM, &dfl, NULL);
	sigset_t term;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &term, NULL);
}

/* The test hook COLLC_SWEEP_INTERRUPT=N[:SIG]: the first worker, once it
 * has sent N points, sends its parent SIGINT (or signal SIG) as a terminal
 * or a job scheduler would and waits to be ended, so that a test stops a
 * run part way through the real handler. */
static long
interrupt_after(int w, int *sig)
{
	const char *v = getenv("COLLC_SWEEP_INTERRUPT");
	const char *colon = v ? strchr(v, ':') : NULL;
	*sig = colon ? atoi(colon + 1) : SIGINT;
	return v && w == 0 ? atol(v) : -1;
}

/* Worker w's units, in unit_at's order; after a failed point only the
 * units below it (one of them may fail lower: the lowest is reported). */
static void
worker(Diag *dg, const Spec *s, int w, int workers, int shard, int nshard, const bool *skip, int fd)
{
	int below = s->nunit;
	int sig;
	long sent = 0, stop = interrupt_after(w, &sig);
	for (int i = w; i < s->nunit; i += workers) {
		int u = unit_at(s->nunit, i);
		int n = u < below ? run_unit(dg, s, u, shard, nshard, skip, fd) : 0;
		if (n < 0)
			below = u;
		sent += n > 0 ? n : 0;
		if (stop >= 0 && sent >= stop) {
			kill(getppid(), sig);
			for (;;)
				pause();
		}
	}
	worker_exit(0);
}

/* Reads one record from a worker's pipe; false at the pipe's end. */
static bool
take_record(const Spec *s, int fd, Record *rec, bool *have, Record *failed, Progress *pg)
{
	Record r;
	ssize_t n = read(fd, &r, sizeof r);
	if (n == (ssize_t)sizeof r && r.point >= 0 && r.point < s->nunit * s->nsize) {
		if (!r.ok && (failed->point < 0 || r.point < failed->point))
			*failed = r;
		rec[r.point] = r;
		have[r.point] = true;
		pg->done++;
		pg->wdone += point_weight(s, r.point);
		progress_show(pg, false);
	}
	return n > 0;
}

/* Runs every unit of the shard on `workers` processes; rec[point] filled,
 * the points `skip` marks left out. A failed point stops its worker; the
 * lowest failed point is reported. The signal when SIGINT or SIGTERM
 * stopped the run (the points back are in rec), 0 when every point is
 * back, -1 after an error. */
static int
run_all(Diag *dg, const Spec *s, int shard, int nshard, int workers, const bool *skip, Record *rec,
        bool *have)
{
	Record failed = {.point = -1};
	long total = 0;
	double wtotal = 0;
	for (long p = 0; p < (long)s->nunit * s->nsize; p++)
		if (p % nshard == shard && !skip[p]) {
			total++;
			wtotal += point_weight(s, p);
		}
	Progress pg = {.t0 = wall_seconds(), .total = total, .wtotal = wtotal, .tty = isatty(2)};
	struct pollfd pfd[MAX_SWEEP_JOBS];
	pid_t pid[MAX_SWEEP_JOBS];
	/* SIGINT and SIGTERM are held but in ppoll: the workers, which inherit
	 * SIGINT's mask (a terminal's Ctrl-C reaches them too), are ended by the
	 * parent once it has their finished points */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	struct sigaction sa = {.sa_handler = on_stop}, prev, prev_term;
	sigemptyset(&sa.sa_mask);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGINT, &sa, &prev);
	sigaction(SIGTERM, &sa, &prev_term);
	interrupted = 0;
	pid_t parent = getpid();
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
			worker_start(parent);
			worker(dg, s, w, workers, shard, nshard, skip, fds[1]);
		}
		close(fds[1]);
		pfd[w] = (struct pollfd){.fd = fds[0], .events = POLLIN};
	}
	int open = workers, rc = 0;
	bool stopped = false;
	while (open > 0) {
		if (interrupted && !stopped) {
			stopped = true; /* what is in the pipes is kept; nothing more runs */
			for (int w = 0; w < workers; w++)
				if (pfd[w].fd >= 0)
					kill(pid[w], SIGTERM);
		}
		if (ppoll(pfd, (nfds_t)workers, NULL, &old) < 0) {
			if (errno != EINTR)
				die("poll: %s", strerror(errno));
			continue;
		}
		for (int w = 0; w < workers; w++) {
			if (pfd[w].fd < 0 || !(pfd[w].revents & (POLLIN | POLLHUP)))
				continue;
			if (!take_record(s, pfd[w].fd, rec, have, &failed, &pg)) {
				close(pfd[w].fd);
				pfd[w].fd = -1;
				open--;
			}
		}
	}
	for (int w = 0; w < workers; w++) {
		int st;
		if (waitpid(pid[w], &st, 0) < 0 || (!stopped && (!WIFEXITED(st) || WEXITSTATUS(st) != 0)))
			rc = -1;
	}
	/* a signal after the last poll is taken here, not by the old handler */
	struct timespec zero = {0, 0};
	int late = sigtimedwait(&block, NULL, &zero);
	if (late == SIGINT || late == SIGTERM)
		interrupted = late;
	sigaction(SIGINT, &prev, NULL);
	sigaction(SIGTERM, &prev_term, NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	progress_show(&pg, true);
	if (failed.point >= 0) {
		report_failure(dg, s, &failed);
		return -1;
	}
	if (interrupted && pg.done < total)
		return interrupted;
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
    "point", "topology", "ranks", "collective", "name", "params", "algorithm", "routing",
    "link_bandwidth", "link_latency", "router_latency", "step_overhead", "mtu", "size", "count",
    "type", "redop", "time_us", "algbw_GBps", "busbw_GBps", "status", "note"};
enum { NCOL = 22, COL_NAME = 4, COL_PARAMS = 5, COL_SIZE = 13, COL_NOTE = 21 };

/* Whether column c is written: `name` only for a spec's .coll file,
 * `params` only when it sweeps the file's parameters. */
static bool
has_col(const Spec *s, int c)
{
	return (c != COL_NAME || s->cf.f) && (c != COL_PARAMS || s->nparam);
}

/* The fields of one row as strings (numbers already formatted). */
static void
row_fields(const Spec *s, const Record *r, char (*v)[64], const char **note)
{
	Unit x = unit_of(s, r->point / s->nsize);
	const Pair *p = &s->pair[x.pair];
	const char *kind = coll_kind_name[p->kind];
	double size = s->sizes[r->point % s->nsize];
	snprintf(v[0], 64, "%d", r->point);
	snprintf(v[1], 64, "%s", s->cf.f ? p->topo : s->topo.v[x.topo]);
	if (s->cf.f)
		snprintf(v[2], 64, "%d", r->nrank);
	else
		snprintf(v[2], 64, "%s", s->groups.v[x.group]);
	snprintf(v[3], 64, "%s", kind);
	snprintf(v[4], 64, "%s", p->name ? p->name : "");
	combo_label(s, x.topo, v[5], 64);
	snprintf(v[6], 64, "%s", p->alg);
	snprintf(v[7], 64, "%s", s->route_given ? s->routing.v[x.route] : p->route ? p->route
	                                                                           : s->routing.v[0]);
	for (int k = 0; k < NNET; k++)
		snprintf(v[8 + k], 64, "%s", s->net[k].n ? s->net[k].v[x.net[k]] : "");
	snprintf(v[COL_SIZE], 64, "%.0f", size);
	snprintf(v[14], 64, "%.0f", floor(size / 4));
	snprintf(v[15], 64, "float");
	snprintf(v[16], 64, "%s", perf_redop(kind, "sum"));
	bool ok = r->ok && r->time_s > 0;
	double algbw = ok ? size / r->time_s / 1e9 : 0;
	double num[3] = {r->time_s * 1e6, algbw, algbw * perf_busbw_factor(kind, r->nrank)};
	for (int k = 0; k < 3; k++) /* empty when not simulated */
		snprintf(v[17 + k], 64, "%.3f", num[k]), v[17 + k][ok ? 63 : 0] = 0;
	snprintf(v[20], 64, "%s", "ok");
	*note = r->note;
}

static void
csv_header(const Spec *s, FILE *f)
{
	const char *sep = "";
	for (int c = 0; c < NCOL; c++)
		if (has_col(s, c))
			fprintf(f, "%s%s", sep, columns[c]), sep = ",";
	fputc('\n', f);
}

/* The rows in point order: those run now (have), and those a stopped run
 * wrote, as it wrote them (kept, or NULL). */
static void
write_csv(const Spec *s, const Record *rec, const bool *have, char *const *kept, FILE *f)
{
	csv_header(s, f);
	char v[NCOL][64];
	const char *note;
	for (long p = 0; p < (long)s->nunit * s->nsize; p++) {
		if (kept && kept[p])
			fprintf(f, "%s\n", kept[p]);
		if (!have[p])
			continue;
		row_fields(s, &rec[p], v, &note);
		for (int c = 0; c < NCOL; c++) {
			if (!has_col(s, c))
				continue;
			if (c)
				fputc(',', f);
			csv_field(f, c == COL_NOTE ? note : v[c]);
		}
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
			if (!has_col(s, c))
				continue;
			fprintf(f, "%s\"%s\": ", c ? ", " : "", columns[c]);
			const char *val = c == COL_NOTE ? note : v[c];
			bool number = c == 0 || c == COL_SIZE || c == COL_SIZE + 1 || (c >= 17 && c <= 19);
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

/* A plot's file name from its title: letters and digits kept (lower
 * case), every other run one '-', at most 100 characters; "-U" (the
 * configuration) added when an earlier plot took the name. */
static void
plot_name(const char *title, int u, char (*taken)[112], int ntaken, char *out, size_t len)
{
	char slug[112];
	size_t n = 0;
	for (const char *c = title; *c && n < 100; c++) {
		bool word = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
		            (*c >= 'A' && *c <= 'Z');
		if (word)
			slug[n++] = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
		else if (n > 0 && slug[n - 1] != '-')
			slug[n++] = '-';
	}
	while (n > 0 && slug[n - 1] == '-')
		n--;
	slug[n] = 0;
	bool clash = false;
	for (int i = 0; i < ntaken && !clash; i++)
		clash = strcmp(taken[i], slug) == 0;
	snprintf(taken[ntaken], sizeof taken[0], "%s", slug);
	if (clash)
		snprintf(out, len, "%s-%d.svg", slug, u);
	else
		snprintf(out, len, "%s.svg", slug);
}

/* The .coll file as the spec names it (relative to the spec), or its
 * name when the spec gives an absolute path: a plot shows no directory
 * outside the project. */
static const char *
plot_file(const Spec *s)
{
	const char *v = s->file.v[0], *slash = strrchr(v, '/');
	return v[0] == '/' && slash ? slash + 1 : v;
}

/* One busbw plot per unit family (all but the pair), series per pair of
 * the same collective kind (its algorithms, or the file's collectives),
 * named and titled by its configuration. */
static int
write_plots(const Spec *s, const Record *rec, const bool *have, const char *target)
{
	/* built beside the target and moved into place whole: no plot of an
	 * earlier, larger sweep stays beside the new ones */
	static const char *const written[] = {".svg", NULL};
	OutDir dir;
	char err[512];
	if (outdir_begin(&dir, target, written, err, sizeof err) != 0) {
		fprintf(stderr, "collc: error: %s\n", err);
		return 1;
	}
	int rc = 0;
	double *y = xmalloc(((size_t)MAX_PAIRS * s->nsize + 1) * sizeof *y);
	PlotSeries *ser = xmalloc(MAX_PAIRS * sizeof *ser);
	char (*taken)[112] = xmalloc(((size_t)s->nunit + 1) * sizeof *taken);
	int ntaken = 0;
	for (int u = 0; u < s->nunit && rc == 0; u++) {
		Unit x = unit_of(s, u);
		int kind = s->pair[x.pair].kind, first = 0;
		while (s->pair[first].kind != kind)
			first++;
		if (first != x.pair)
			continue; /* the family is drawn once, from its first pair */
		int ns = 0;
		for (int a = first; a < s->npair; a++) {
			if (s->pair[a].kind != kind)
				continue;
			int uu = u + (a - first) * s->per_pair;
			ser[ns].name = s->cf.f ? s->pair[a].name : s->pair[a].alg;
			ser[ns].y = y + (size_t)ns * s->nsize;
			bool any = false;
			for (int k = 0; k < s->nsize; k++) {
				long p = (long)uu * s->nsize + k;
				bool ok = have[p] && rec[p].ok;
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
		char title[1024], path[4096];
		char axes[512];
		axes_desc(s, &x, axes, sizeof axes);
		if (s->cf.f)
			snprintf(title, sizeof title, "%s, %s%s", coll_kind_name[kind], plot_file(s), axes);
		else
			snprintf(title, sizeof title, "%s %s, ranks %s, %s%s", coll_kind_name[kind],
			         s->topo.v[x.topo], s->groups.v[x.group], s->routing.v[x.route],
			         strstr(axes, ", routing ") == axes ? axes + strcspn(axes + 2, ",") + 2
			                                            : axes);
		plot_name(title, u, taken, ntaken++, path, sizeof path);
		char *in = outdir_path(&dir, path);
		MemOut m;
		svg_busbw(memout_open(&m), title, s->sizes, s->nsize, ser, ns, 0);
		rc = write_output(in, &m);
		free(in);
	}
	if (rc == 0 && outdir_commit(&dir, err, sizeof err) != 0) {
		fprintf(stderr, "collc: error: %s\n", err);
		rc = 1;
	} else if (rc != 0) {
		outdir_abort(&dir);
	}
	free(y), free(ser), free(taken);
	return rc;
}

static int
emit_csv(const char *out, const Spec *s, const Record *rec, const bool *have, char *const *kept)
{
	MemOut m;
	write_csv(s, rec, have, kept, memout_open(&m));
	return write_output(out, &m);
}

static int
emit_json(const char *out, const Spec *s, const Record *rec, const bool *have)
{
	MemOut m;
	write_json(s, rec, have, memout_open(&m));
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
				        rows[i].point < (long)i ? "in two shards"
				                                : "in no shard (a stopped shard's file? finish "
				                                  "it first with --resume)");
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
	const char *spec, *out, *json, *plots, *resume;
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
	{"resume", 0, "PART.csv", "keep the rows of a stopped run's CSV and run the other points"},
};

int cmd_sweep(Diag *, int argc, char **argv);

const CliCommand cli_sweep = {
	"sweep", "SPEC | --merge SHARD...",
	"simulate a grid of topologies, groups, algorithms, routing, networks and sizes",
	"SPEC lists, one key per line, the values of each grid dimension (docs/sweep.md);\n"
	"`file F.coll` sweeps the collectives of a .coll file over routing, network and sizes.\n"
	"Each point is built for its own size; one that cannot be built is an error.\n"
	"Rows have nccl-tests' columns (size, count, type, redop, time_us, algbw, busbw).\n"
	"Ctrl-C writes the rows done (exit 130); --resume runs the rest.\n",
	sweep_opts, countof(sweep_opts), cmd_sweep, NULL};

/* argv[0] is "sweep"; -1 after --help, else 0 or a usage error's status. */
static int
sweep_args(int argc, char **argv, SweepArgs *a)
{
	static const struct option opts[] = {
	    {"output", required_argument, 0, 'o'}, {"json", required_argument, 0, 'J'},
	    {"plots", required_argument, 0, 'P'},  {"shard", required_argument, 0, 'S'},
	    {"jobs", required_argument, 0, 'j'},   {"merge", no_argument, 0, 'M'},
	    {"resume", required_argument, 0, 'R'}, {"help", no_argument, 0, 'h'},
	    {0, 0, 0, 0}};
	*a = (SweepArgs){.nshard = 1};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	a->jobs = ncpu > 0 ? (int)(ncpu < MAX_SWEEP_JOBS ? ncpu : MAX_SWEEP_JOBS) : 1;
	optind = 0;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "o:j:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': a->out = optarg; break;
		case 'J': a->json = optarg; break;
		case 'P': a->plots = optarg; break;
		case 'M': a->merge = true; break;
		case 'R': a->resume = optarg; break;
		case 'h': cli_help(&cli_sweep, stdout); return -1;
		case 'S':
			if (parse_shard(optarg, a) != 0)
				return usage_error("sweep: --shard takes i/n with 0 <= i < n, or 'mpi' "
				                   "(the launcher's rank and size)");
			break;
		case 'j':
			a->jobs = atoi(optarg);
			if (a->jobs < 1 || a->jobs > MAX_SWEEP_JOBS)
				return usage_error("sweep: --jobs takes 1..%d", MAX_SWEEP_JOBS);
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
	if (a->resume && (a->merge || a->json || a->plots))
		return usage_error("sweep: --resume finishes a stopped run's CSV; --json and --plots "
		                   "need every point's record: run the whole sweep for them");
	a->spec = argv[optind];
	return 0;
}

/* ---- --resume: a stopped run's rows kept as written ---- */

/* Past one CSV field (quoted or not) and its comma. */
static const char *
csv_skip(const char *p)
{
	if (*p == '"') {
		for (p++; *p && !(*p == '"' && p[1] != '"'); p += *p == '"' ? 2 : 1)
			;
		p += *p == '"';
	} else {
		p += strcspn(p, ",");
	}
	return p + (*p == ',');
}

/* Whether row `l` is point p of this spec: its fields up to the size as
 * this run would write them (the ranks column of a file's collective is
 * its rank count, read from the row). */
static bool
row_is_point(const Spec *s, const char *l, long p)
{
	const char *ranks = csv_skip(csv_skip(l));
	Record r = {.point = (int)p, .nrank = atoi(ranks)};
	char v[NCOL][64];
	const char *note;
	row_fields(s, &r, v, &note);
	MemOut m;
	FILE *f = memout_open(&m);
	for (int c = 0; c <= COL_SIZE; c++)
		if (has_col(s, c)) {
			csv_field(f, v[c]);
			fputc(',', f);
		}
	memout_close(&m);
	bool same = strncmp(l, m.buf, m.len) == 0;
	free(m.buf);
	return same;
}

/* Reads a stopped run's CSV: kept[p] the row of each point it holds (in
 * `text`, which the caller frees), skip[p] set. 0, or 1 after an error. */
static int
read_partial(const Spec *s, const char *path, int shard, int nshard, char **text, char **kept,
             bool *skip)
{
	char err[512];
	size_t len;
	if (!(*text = read_file(path, &len, err, sizeof err))) {
		fprintf(stderr, "collc: error: %s\n", err);
		return 1;
	}
	/* a file saved with CRLF line ends (an editor, a copy through Windows)
	 * is the same rows: its CRs go */
	size_t k = 0;
	for (size_t i = 0; i < len; i++)
		if (!((*text)[i] == '\r' && i + 1 < len && (*text)[i + 1] == '\n'))
			(*text)[k++] = (*text)[i];
	(*text)[len = k] = 0;
	MemOut m;
	csv_header(s, memout_open(&m));
	memout_close(&m);
	size_t col = 0;
	while (col < m.len && col < len && (*text)[col] == m.buf[col])
		col++;
	bool head = col == m.len;
	if (!head) {
		size_t bol = col; /* the header's column where they part, by field */
		while (bol > 0 && m.buf[bol - 1] != ',')
			bol--;
		fprintf(stderr, "collc: error: %s:1:%zu: not a CSV of this spec's sweep: its header "
		        "differs from the spec's at column %zu (the spec's has '%.*s')\n", path, col + 1,
		        col + 1, (int)strcspn(m.buf + bol, ",\n"), m.buf + bol);
	}
	free(m.buf);
	if (!head)
		return 1;
	long npoint = (long)s->nunit * s->nsize, line = 1;
	for (char *l = *text + m.len, *e; *l; l = e) {
		line++;
		e = l + strcspn(l, "\n");
		if (*e)
			*e++ = 0;
		long p = row_point(l, false);
		const char *why = p < 0 || p >= npoint ? "a row without one of the spec's point numbers"
		                  : p % nshard != shard ? "a point of another shard"
		                  : skip[p]              ? "a point given twice"
		                  : !row_is_point(s, l, p) ? "a row that is not this spec's point"
		                                           : NULL;
		if (why) {
			fprintf(stderr, "collc: error: %s:%ld: %s: %.60s\n", path, line, why, l);
			return 1;
		}
		kept[p] = l;
		skip[p] = true;
	}
	return 0;
}

/* After SIGINT or SIGTERM: how far the run got and the command that finishes it. */
static void
report_stop(const SweepArgs *a, const bool *have, char *const *kept, long npoint)
{
	long done = 0, total = 0;
	for (long p = 0; p < npoint; p++) {
		total += p % a->nshard == a->shard;
		done += have[p] || kept[p];
	}
	char shard[48] = "";
	if (a->nshard > 1)
		snprintf(shard, sizeof shard, " --shard %d/%d", a->shard, a->nshard);
	if (a->out && strcmp(a->out, "-") != 0)
		fprintf(stderr, "collc: sweep stopped: %ld of %ld points done, written to %s; resume "
		        "with: collc sweep %s%s --resume %s -o %s\n", done, total, a->out, a->spec, shard,
		        a->out, a->out);
	else
		fprintf(stderr, "collc: sweep stopped: %ld of %ld points done, written to standard "
		        "output; save them to a file F and resume with: collc sweep %s%s --resume F -o "
		        "OUT.csv\n", done, total, a->spec, shard);
}

int
cmd_sweep(Diag *dg, int argc, char **argv)
{
	SweepArgs a;
	int rc = sweep_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (a.merge)
		return merge(argv + optind, argc - optind, a.out ? a.out : "-");
	Spec *s = xcalloc(1, sizeof *s);
	char *text = NULL;
	if (spec_read(dg, a.spec, s, &text) != 0) {
		spec_free(s, text);
		return 1;
	}
	long npoint = (long)s->nunit * s->nsize;
	Record *rec = xcalloc((size_t)npoint + 1, sizeof *rec);
	bool *have = xcalloc((size_t)npoint + 1, sizeof *have), *skip = xcalloc((size_t)npoint + 1, 1);
	char **kept = xcalloc((size_t)npoint + 1, sizeof *kept), *part = NULL;
	if (a.resume)
		rc = read_partial(s, a.resume, a.shard, a.nshard, &part, kept, skip);
	int workers = a.jobs < s->nunit ? a.jobs : s->nunit;
	int run = rc ? -1 : run_all(dg, s, a.shard, a.nshard, workers > 0 ? workers : 1, skip, rec, have);
	/* stopped by SIGINT or SIGTERM: the rows done so far, whole, and exit
	 * 128 + the signal (130, 143) as a shell would */
	if (run >= 0)
		rc = emit_csv(a.out ? a.out : "-", s, rec, have, kept);
	if (run > 0 && rc == 0) {
		report_stop(&a, have, kept, npoint);
		rc = 128 + run;
	}
	rc = run < 0 ? 1 : rc;
	if (run == 0 && rc == 0 && a.json)
		rc = emit_json(a.json, s, rec, have);
	if (run == 0 && rc == 0 && a.plots)
		rc = write_plots(s, rec, have, a.plots);
	free(rec), free(have), free(skip), free(kept), free(part);
	spec_free(s, text);
	return rc;
}
