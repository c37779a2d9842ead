/*
 * bench_sweep.c: `make bench`. The progress estimate of `collc sweep`
 * (sweep_left over point_weight, units in unit_at's order) against the
 * time truly left, on the 64-chip evaluation (examples/reproduce/
 * torus64-eval.sweep, flow mode) and on the same grid in packet mode with
 * shared links. The units run one after another in this process, each
 * timed by the process's CPU clock (the machine is shared: wall time would
 * measure the neighbours); after each unit the estimate is compared with
 * what the run then still took. Printed: the smallest and largest ratio
 * once a tenth of the points are done and while a tenth of the time is
 * left; target: within 2x either way. The grid's own order (what sweep
 * did before: small groups first) is printed beside it, without a target.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_child.h"
#include "bench_target.h"
#include "sweep.h"

static int
in_order(int nunit, int i)
{
	(void)nunit;
	return i;
}

/* Runs every unit in `order`, one process; *lo and *hi the estimate's
 * ratios to the CPU time left; the run's CPU seconds. */
static double
run(Diag *dg, const Spec *s, int (*order)(int, int), double *lo, double *hi)
{
	if (s->nunit < 1)
		return 0;
	double *t = calloc((size_t)s->nunit + 1, sizeof *t);
	double *w = malloc(((size_t)s->nunit + 1) * sizeof *w), wtotal = 0;
	double c0 = process_cpu();
	for (int i = 0; i < s->nunit; i++) {
		int u = order(s->nunit, i), fds[2];
		if (pipe(fds) != 0)
			exit(1);
		run_unit(dg, s, u, 0, 1, NULL, fds[1]);
		close(fds[1]);
		Record r;
		while (read(fds[0], &r, sizeof r) == (ssize_t)sizeof r)
			;
		close(fds[0]);
		t[i] = process_cpu() - c0;
		w[i] = 0;
		for (int k = 0; k < s->nsize; k++)
			w[i] += point_weight(s, (long)u * s->nsize + k);
		wtotal += w[i];
	}
	double end = t[s->nunit - 1], wdone = 0;
	*lo = INFINITY, *hi = 0;
	for (int i = 0; i < s->nunit; i++) {
		wdone += w[i];
		double left = end - t[i];
		if (i + 1 < s->nunit / 10 || left < end / 10)
			continue;
		double r = sweep_left(wdone, wtotal, t[i]) / left;
		*lo = r < *lo ? r : *lo;
		*hi = r > *hi ? r : *hi;
	}
	free(t), free(w);
	return end;
}

int
main(void)
{
	Diag diag = diag_new(), *dg = &diag; /* the bench's diagnostics */
	diag_on_oom(dg);
	static const char *const cases[][2] = {
	    {"torus64-eval.sweep (flow, private links)", NULL},
	    {"torus64-eval.sweep in packet mode, shared links", "mode packet\nlinks shared\n"},
	};
	char *base = NULL;
	{
		FILE *f = fopen("examples/reproduce/torus64-eval.sweep", "r");
		size_t n = 0;
		if (!f || getdelim(&base, &n, 0, f) < 0)
			return 1;
		fclose(f);
	}
	printf("%-48s %7s %15s %15s %7s %6s\n", "case", "cpu s", "estimate/truth",
	       "grid order", "target", "ratio");
	int missed = 0;
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		char path[] = "/tmp/collc-bench-sweep-XXXXXX";
		int fd = mkstemp(path);
		FILE *f = fdopen(fd, "w");
		/* the evaluation's lines, the case's mode and links in place of its own */
		for (char *l = base, *e; *l; l = e) {
			e = l + strcspn(l, "\n");
			e += *e == '\n';
			if (cases[c][1] && (strncmp(l, "mode", 4) == 0 || strncmp(l, "links", 5) == 0))
				continue;
			fwrite(l, 1, (size_t)(e - l), f);
		}
		if (cases[c][1])
			fputs(cases[c][1], f);
		fclose(f);
		Spec *s = calloc(1, sizeof *s);
		char *text = NULL;
		if (spec_read(dg, path, s, &text) != 0)
			return 1;
		double lo, hi, lo0, hi0;
		double cpu = run(dg, s, unit_at, &lo, &hi);
		run(dg, s, in_order, &lo0, &hi0);
		double worst = hi > 1 / lo ? hi : 1 / lo;
		char a[32], b[32];
		snprintf(a, sizeof a, "%.2f .. %.2f", lo, hi);
		snprintf(b, sizeof b, "%.2f .. %.2f", lo0, hi0);
		printf("%-48s %7.2f %15s %15s %7.1f %6.2f\n", cases[c][0], cpu, a, b, 2.0, worst / 2);
		missed += missed_target(cases[c][0], "estimate off by", worst, 2, "x");
		spec_free(s, text);
		unlink(path);
	}
	free(base);
	return bench_summary("bench_sweep", missed, 0);
}
