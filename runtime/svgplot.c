/*
 * svgplot.c: the SVG charts of `collc sim --plot`, `--plot-time` and
 * `--plot-links`, and of `collc sweep --plots`. Plain SVG 1.1 text with
 * inline styles, no scripts or fonts to fetch, so a file opens the same in
 * any browser.
 */
#include <math.h>
#include <string.h>

#include "registry.h"
#include "svgplot.h"

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                      "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

static void
esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else
			fputc(*s, f);
	}
}

static void
size_label(double b, char *buf, size_t len)
{
	bytes_in_units(b, 1, false, buf, len);
}

/* A step of 1, 2 or 5 times a power of ten giving about n ticks. */
static double
nice_step(double range, int n)
{
	double raw = range / n, p = pow(10, floor(log10(raw)));
	double m = raw / p;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static void
head(FILE *f, int w, int h, const char *title)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	           "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
	           "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
	           "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n"
	           "<text x=\"%d\" y=\"24\" font-size=\"16\" text-anchor=\"middle\">",
	        w, h, w, h, w, h, w / 2);
	esc(f, title);
	fputs("</text>\n", f);
}

/* A chart's frame: plot area, x on a log2 scale, y linear from 0 or on a
 * log10 scale over whole decades. */
typedef struct Frame {
	double L, T, pw, ph;
	double lx0, lx1;    /* log2 of the x range */
	double y0, y1;      /* the y range: values, or log10 of them */
	bool ylog;
} Frame;

static double
frame_x(const Frame *g, double v)
{
	return g->L + (log2(v) - g->lx0) / (g->lx1 - g->lx0) * g->pw;
}

static double
frame_y(const Frame *g, double v)
{
	double t = g->ylog ? log10(v) : v;
	return g->T + g->ph - (t - g->y0) / (g->y1 - g->y0) * g->ph;
}

/* Whether y is drawn: measured (>= 0), and positive on a log scale. */
static bool
drawn(const Frame *g, double y)
{
	return g->ylog ? y > 0 : y >= 0;
}

/* The y grid and its labels: 0 to the top in steps of 1, 2 or 5 x 10^k,
 * or one line per decade (labelled every few when there are many). */
static void
y_grid(FILE *f, const Frame *g)
{
	if (g->ylog) {
		int n = (int)lround(g->y1 - g->y0), every = n > 8 ? (n + 7) / 8 : 1;
		for (int k = 0; k <= n; k++) {
			double v = pow(10, g->y0 + k), y = frame_y(g, v);
			fprintf(f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			           "stroke=\"#ddd\"/>\n", g->L, y, g->L + g->pw, y);
			if (k % every == 0)
				fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"12\" "
				           "text-anchor=\"end\">%g</text>\n", g->L - 6, y + 4, v);
		}
		return;
	}
	double step = nice_step(g->y1, 6);
	for (double v = 0; v <= g->y1 + 1e-9; v += step) {
		double y = frame_y(g, v);
		fprintf(f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
		        g->L, y, g->L + g->pw, y);
		fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">%g</text>\n",
		        g->L - 6, y + 4, v);
	}
}

/* The x grid at the sizes, labelled with units (at most about 12). */
static void
x_grid(FILE *f, const Frame *g, const double *x, int nx)
{
	int every = nx > 12 ? (nx + 11) / 12 : 1;
	for (int j = 0; j < nx; j++) {
		double px = frame_x(g, x[j]);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n", px,
		        g->T, px, g->T + g->ph);
		if (j % every)
			continue;
		char lab[32];
		size_label(x[j], lab, sizeof lab);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%s"
		           "</text>\n", px, g->T + g->ph + 18, lab);
	}
}

/* One polyline with its points per series, and the legend at the right. */
static void
series_lines(FILE *f, const Frame *g, const double *x, int nx, const PlotSeries *s, int ns)
{
	for (int i = 0; i < ns; i++) {
		const char *col = palette[i % countof(palette)];
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", col);
		for (int j = 0; j < nx; j++)
			if (drawn(g, s[i].y[j]))
				fprintf(f, "%.1f,%.1f ", frame_x(g, x[j]), frame_y(g, s[i].y[j]));
		fputs("\"/>\n", f);
		for (int j = 0; j < nx; j++)
			if (drawn(g, s[i].y[j]))
				fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
				        frame_x(g, x[j]), frame_y(g, s[i].y[j]), col);
		double ly = g->T + 10 + 20 * i;
		fprintf(f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"%s\" "
		           "stroke-width=\"2\"/>\n", g->L + g->pw + 14, ly, g->L + g->pw + 38, ly, col);
		fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"12\">", g->L + g->pw + 44, ly + 4);
		esc(f, s[i].name);
		fputs("</text>\n", f);
	}
}

/* A chart of the series against x (bytes, log2 scale); bound > 0 draws a
 * dashed line at that y. */
static void
chart(FILE *f, const char *title, const double *x, int nx, const PlotSeries *s, int ns,
      bool ylog, const char *xlabel, const char *ylabel, double bound)
{
	const int W = 820, H = 520;
	Frame g = {.L = 80, .T = 50, .pw = W - 80 - 200, .ph = H - 50 - 60, .ylog = ylog};
	double lo = INFINITY, hi = bound;
	for (int i = 0; i < ns; i++)
		for (int j = 0; j < nx; j++)
			if (drawn(&g, s[i].y[j])) {
				lo = s[i].y[j] < lo ? s[i].y[j] : lo;
				hi = s[i].y[j] > hi ? s[i].y[j] : hi;
			}
	if (ylog) { /* whole decades around the values */
		g.y0 = hi > 0 ? floor(log10(lo)) : 0;
		g.y1 = hi > 0 ? ceil(log10(hi)) : 1;
		if (g.y1 <= g.y0)
			g.y1 = g.y0 + 1;
	} else {
		g.y1 = hi > 0 ? hi * 1.08 : 1;
	}
	g.lx0 = log2(x[0]), g.lx1 = log2(x[nx - 1]);
	if (g.lx1 <= g.lx0)
		g.lx0 -= 1, g.lx1 += 1;
	head(f, W, H, title);
	y_grid(f, &g);
	x_grid(f, &g, x, nx);
	fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
	           "stroke=\"black\"/>\n", g.L, g.T, g.pw, g.ph);
	fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\">%s</text>\n",
	        g.L + g.pw / 2, H - 16, xlabel);
	fprintf(f, "<text x=\"18\" y=\"%.1f\" font-size=\"13\" text-anchor=\"middle\" "
	           "transform=\"rotate(-90 18 %.1f)\">%s</text>\n", g.T + g.ph / 2, g.T + g.ph / 2,
	        ylabel);
	if (bound > 0) {
		fprintf(f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\" "
		           "stroke-dasharray=\"6,4\"/>\n", g.L, frame_y(&g, bound), g.L + g.pw,
		        frame_y(&g, bound));
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">bound "
		           "%g GB/s</text>\n", g.L + g.pw - 4, frame_y(&g, bound) - 5, bound);
	}
	series_lines(f, &g, x, nx, s, ns);
	fputs("</svg>\n", f);
}

void
svg_busbw(FILE *f, const char *title, const double *x, int nx, const PlotSeries *s, int ns,
          double bound)
{
	chart(f, title, x, nx, s, ns, false, "message size (log scale)", "busbw (GB/s)", bound);
}

void
svg_time(FILE *f, const char *title, const double *x, int nx, const PlotSeries *s, int ns)
{
	chart(f, title, x, nx, s, ns, true, "size (bytes)", "time (us)", 0);
}

/* Cold to warm: blue, cyan, yellow, red as utilization goes 0 to 1. */
static void
heat(double u, char *buf, size_t len)
{
	static const double stop[4][3] = {{49, 54, 149}, {116, 196, 220}, {254, 224, 80},
	                                  {215, 25, 28}};
	u = u < 0 ? 0 : u > 1 ? 1 : u;
	double p = u * 3;
	int i = p >= 3 ? 2 : (int)p;
	double t = p - i;
	int c[3];
	for (int k = 0; k < 3; k++)
		c[k] = (int)lround(stop[i][k] + t * (stop[i + 1][k] - stop[i][k]));
	snprintf(buf, len, "#%02x%02x%02x", c[0], c[1], c[2]);
}

bool
svg_links_draws(const SimNet *n)
{
	int k = topo_form_find(n->topo);
	return n->ndim == 2 && k >= 0 && topo_forms[k].grid;
}

int
svg_links(FILE *f, const SimNet *n, const double *util, const char *title)
{
	if (!svg_links_draws(n))
		return 0;
	int rows = n->size[0], cols = n->size[1];
	double sp = rows > cols ? 560.0 / rows : 560.0 / cols;
	if (sp > 80)
		sp = 80;
	if (sp < 6)
		sp = 6;
	const double M = 50, off = sp * 0.08;
	int W = (int)(2 * M + sp * (cols - 1)) + 150, H = (int)(2 * M + sp * (rows - 1)) + 40;
	if (W < 360)
		W = 360;
	head(f, W, H, title);
	double wmax = sp * 0.22;
	for (int l = 0; l < n->nlink; l++) {
		const SimLink *k = &n->link[l];
		int ax = k->src / cols, ay = k->src % cols, bx = k->dst / cols, by = k->dst % cols;
		double x1 = M + ay * sp, y1 = M + 30 + ax * sp, x2 = M + by * sp, y2 = M + 30 + bx * sp;
		double dx = by - ay, dy = bx - ax;
		/* a wrap-around link leaves the grid and comes back on the far side:
		 * drawn as a stub out of the sender */
		if (fabs(dx) > 1 || fabs(dy) > 1) {
			dx = dx > 1 ? -1 : dx < -1 ? 1 : dx;
			dy = dy > 1 ? -1 : dy < -1 ? 1 : dy;
			x2 = x1 + dx * sp * 0.45;
			y2 = y1 + dy * sp * 0.45;
		}
		double len = sqrt(dx * dx + dy * dy);
		/* the two directions side by side: offset to the sender's right, a
		 * pair's parallel links (supermesh) each one step further out */
		int copy = 0;
		for (int e = l - 1; e >= 0 && n->link[e].src == k->src; e--)
			copy += n->link[e].dst == k->dst;
		double ox = -dy / len * off * (1 + 2 * copy), oy = dx / len * off * (1 + 2 * copy);
		char col[16];
		double u = util[l];
		heat(u, col, sizeof col);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
		           "stroke-width=\"%.2f\" stroke-linecap=\"round\"/>\n",
		        x1 + ox, y1 + oy, x2 + ox, y2 + oy, col, 0.6 + wmax * (u < 0 ? 0 : u > 1 ? 1 : u));
	}
	double r = sp * 0.12 < 1.5 ? 1.5 : sp * 0.12;
	for (int v = 0; v < n->nnode; v++)
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"#333\"/>\n",
		        M + (v % cols) * sp, M + 30 + (v / cols) * sp, r);
	/* the colour scale */
	double lx = W - 110, ly = M + 30;
	for (int i = 0; i <= 10; i++) {
		char col[16];
		heat(1 - i / 10.0, col, sizeof col);
		fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"18\" height=\"16\" fill=\"%s\"/>\n", lx,
		        ly + 16 * i, col);
		if (i % 5 == 0)
			fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">%d%%</text>\n", lx + 24,
			        ly + 16 * i + 12, 100 - 10 * i);
	}
	fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">link busy</text>\n", lx,
	        ly - 8);
	fputs("</svg>\n", f);
	return 1;
}
