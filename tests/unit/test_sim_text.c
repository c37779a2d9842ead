/*
 * test_sim_text.c: the simulator's input and output as text: the .sim
 * round trip and a damaged file, and the --plot-time SVG.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svgplot.h"
#include "test_sim.h"

/* The .sim text reads back as the same network: same times. */
void
test_text_round_trip(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Built b;
	CU_ASSERT_EQUAL_FATAL(build_text(dg, &b, sp8, "BK"), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	sim_write(&b.net, mem);
	fclose(mem);
	CU_ASSERT(sim_is_text(buf, len));
	Arena a = {0};
	SimNet back;
	diag_source(dg, "t.sim", buf, len);
	CU_ASSERT_EQUAL_FATAL(sim_read(dg, &a, buf, len, &back), 0);
	CU_ASSERT_EQUAL(back.nlink, b.net.nlink);
	CU_ASSERT_EQUAL(back.coll[0].nmsg, b.net.coll[0].nmsg);
	/* Bucket's four instances survive the text */
	int same = 0, most = 0;
	for (int i = 0; i < back.coll[0].nmsg; i++) {
		same += back.coll[0].msg[i].instance == b.net.coll[0].msg[i].instance;
		if (back.coll[0].msg[i].instance > most)
			most = back.coll[0].msg[i].instance;
	}
	CU_ASSERT_EQUAL(same, b.net.coll[0].nmsg);
	CU_ASSERT_EQUAL(most, 3);
	/* and its phase barriers (8x8: before rounds 7, 14, 21) */
	int bars = 0;
	for (int r = 0; back.coll[0].barrier && r < back.coll[0].nround; r++)
		bars += back.coll[0].barrier[r] ? r : 0;
	CU_ASSERT_EQUAL(bars, 7 + 14 + 21);
	SimOpts o = {.mode = SIM_PACKET, .sync = SIM_DEPS};
	SimResult r1, r2;
	char err[256];
	CU_ASSERT_EQUAL(sim_run(&a, &back, 0, 1 << 20, &o, &r1, err, sizeof err), 0);
	CU_ASSERT_EQUAL(sim_run(&a, &b.net, 0, 1 << 20, &o, &r2, err, sizeof err), 0);
	CU_ASSERT_EQUAL(r1.time_ps, r2.time_ps);
	CU_ASSERT_EQUAL(r1.energy_j, r2.energy_j);
	/* a damaged copy: a route that does not follow its links */
	char *m = strstr(buf, "\nm ");
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	char *bad = malloc(len + 16);
	size_t at = (size_t)(m - buf) + 1;
	memcpy(bad, buf, at);
	int n = sprintf(bad + at, "m 0 0 1 1 64 copy 1 %d\n", b.net.nlink - 1);
	char *eol = strchr(m + 1, '\n');
	memcpy(bad + at + n, eol + 1, len - (size_t)(eol + 1 - buf));
	size_t blen = at + (size_t)n + len - (size_t)(eol + 1 - buf);
	char *diag = NULL;
	size_t dlen = 0;
	FILE *dm = open_memstream(&diag, &dlen);
	diag_stream(dg, dm);
	diag_reset(dg);
	diag_source(dg, "bad.sim", bad, blen);
	Arena a2 = {0};
	CU_ASSERT_EQUAL(sim_read(dg, &a2, bad, blen, &back), -1);
	diag_stream(dg, NULL);
	fclose(dm);
	CU_ASSERT(strstr(diag, "bad.sim:") != NULL && strstr(diag, "error: ") != NULL &&
	          strstr(diag, "does not start where the route is") != NULL);
	diag_reset(dg);
	free(diag), free(bad), free(buf);
	arena_free(&a2);
	arena_free(&a);
	built_free(dg, &b);
}

/* The points of the n-th polyline of an SVG (x, y pairs); their count. */
static int
polyline_points(const char *svg, int n, double *x, double *y, int max)
{
	const char *p = svg;
	for (int k = 0; k <= n; k++) {
		p = strstr(p, "<polyline ");
		if (!p)
			return -1;
		p += 10;
	}
	p = strstr(p, "points=\"") + 8;
	int np = 0;
	char *end;
	while (np < max && *p != '"') {
		x[np] = strtod(p, &end);
		y[np] = strtod(end + 1, &end);
		np++;
		p = end + (*end == ' ');
	}
	return np;
}

/* --plot-time's chart: log-log, so times a decade apart at sizes 4x apart
 * are equally spaced on both axes, a larger time higher up, the axes
 * labelled in us and bytes with unit ticks, an unsimulated size no point. */
void
test_time_plot(void)
{
	double x[] = {4096, 16384, 65536, 262144};
	double a[] = {1, 10, 100, 1000}, b[] = {5, 5, 50, -1};
	PlotSeries s[] = {{"A: ring", a}, {"B: bucket", b}};
	char *svg = NULL;
	size_t len;
	FILE *f = open_memstream(&svg, &len);
	svg_time(f, "time (us) by message size on torus 4x4 (flow mode)", x, 4, s, 2);
	fclose(f);
	double px[8], py[8];
	CU_ASSERT_EQUAL_FATAL(polyline_points(svg, 0, px, py, 8), 4);
	for (int j = 1; j < 4; j++) {
		CU_ASSERT(px[j] > px[j - 1]);
		CU_ASSERT(py[j] < py[j - 1]); /* SVG y grows downwards */
		CU_ASSERT_DOUBLE_EQUAL(px[j] - px[j - 1], px[1] - px[0], 0.11);
		CU_ASSERT_DOUBLE_EQUAL(py[j] - py[j - 1], py[1] - py[0], 0.11);
	}
	/* the axis spans the whole decades 1..1000 us: the extremes at its ends */
	CU_ASSERT_DOUBLE_EQUAL(py[0], 460, 0.01);
	CU_ASSERT_DOUBLE_EQUAL(py[3], 50, 0.01);
	double qx[8], qy[8];
	CU_ASSERT_EQUAL_FATAL(polyline_points(svg, 1, qx, qy, 8), 3);
	CU_ASSERT_DOUBLE_EQUAL(qy[0], qy[1], 1e-9);   /* equal times, equal heights */
	CU_ASSERT(qy[0] < py[0] && qy[0] > py[1]);    /* 5 us between 1 and 10 */
	CU_ASSERT_DOUBLE_EQUAL(qy[2] - qy[1], py[2] - py[1], 0.11); /* x10: one decade */
	CU_ASSERT_DOUBLE_EQUAL(qx[2], px[2], 1e-9);
	const char *want[] = {">time (us)</text>", ">size (bytes)</text>", ">4 KiB</text>",
	                      ">256 KiB</text>", ">1</text>", ">1000</text>", ">A: ring</text>",
	                      "on torus 4x4 (flow mode)</text>"};
	for (size_t k = 0; k < sizeof want / sizeof *want; k++)
		assert_named(strstr(svg, want[k]) != NULL, __LINE__, __FILE__, "time plot has %s", want[k]);
	free(svg);
}
