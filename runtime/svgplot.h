/*
 * svgplot.h: self-contained SVG charts of simulation results (svgplot.c).
 */
#ifndef COLLC_SVGPLOT_H
#define COLLC_SVGPLOT_H

#include <stdio.h>

#include "sim.h"

typedef struct PlotSeries {
	const char *name;
	const double *y;    /* one value per x; negative: no point */
} PlotSeries;

/* busbw (GB/s) against message size (bytes, log scale), one line per
 * series, with the bound as a dashed line (0: none). */
void svg_busbw(FILE *, const char *title, const double *x, int nx, const PlotSeries *,
                 int ns, double bound);
/* Time (us) against message size (bytes), both on log scales (the y axis
 * over whole decades), one line per series; y <= 0: no point. */
void svg_time(FILE *, const char *title, const double *x, int nx, const PlotSeries *, int ns);
/* Whether svg_links draws this network (2D tori and meshes). */
bool svg_links_draws(const SimNet *);
/* Link utilization (0..1 per link) drawn on a 2D torus or mesh; false when
 * the network is not one. */
int svg_links(FILE *, const SimNet *, const double *util, const char *title);

#endif
