/*
 * test_mpi_cal.c: the checker of the calibration the MPI library writes
 * (docs/mpi.md, "Calibration"), which test_mpi.c's hostile cases run: a
 * launch's rows, and a second launch's added to them
 * (COLLC_MPI_CALIBRATE_ADD).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

/* One row: entry, range, who, size, the eight times (collc's then MPI's;
 * slowest rank, mean; in a loop, touched), the noise in %, the
 * iterations and the launches; whether it reads whole. */
typedef struct {
	int e, iters, launches;
	unsigned long long lo, hi, size;
	char who[8];
	double t[8], noise;
} CalRow;

static bool
cal_row(const char *line, CalRow *r)
{
	char name[16];
	double *t = r->t;
	return sscanf(line, "%d %llu %llu %7s %15[^:]: %llu B collc %lf us MPI %lf us noise %lf %% "
	              "iters %d mean collc %lf us MPI %lf us touched collc %lf us MPI %lf us mean "
	              "collc %lf us MPI %lf us launches %d", &r->e, &r->lo, &r->hi, r->who, name,
	              &r->size, &t[0], &t[1], &r->noise, &r->iters, &t[2], &t[3], &t[4], &t[5], &t[6],
	              &t[7], &r->launches) == 17;
}

/* The row of entry e at size in a calibration's text; whether there is one. */
static bool
cal_find(const char *text, int e, unsigned long long size, CalRow *r)
{
	for (const char *line = text; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (cal_row(line, r) && r->e == e && r->size == size)
			return true;
	return false;
}

/* A second launch's row against the first's: each time the better of the
 * two (to the 0.01 us printed), the noise at least the first's. */
static bool
cal_added(const CalRow *now, const char *first)
{
	CalRow b;
	if (!first || !cal_find(first, now->e, now->size, &b))
		return false;
	bool ok = now->noise >= b.noise - 0.05;
	for (int k = 0; k < 8; k++)
		ok &= now->t[k] <= b.t[k] + 0.005;
	return ok;
}

const char *
calibration_wrong(const char *path, int fixed, const char *before)
{
	static char why[256];
	char *text = slurp(path, NULL), *line = text ? strchr(text, '\n') : NULL;
	char *first = before ? slurp(before, NULL) : NULL;
	unsigned long long next[6] = {0}, end = 9223372036854775807ULL;
	bool done[6] = {false};
	snprintf(why, sizeof why, "no calibration");
	if (!text || strncmp(text, "# hostile: 6 entries; 4 ranks;", 30) != 0 || !line ||
	    (before && !first)) {
		free(text), free(first);
		return why;
	}
	why[0] = 0;
	for (line++; *line && !why[0]; line = strchr(line, '\n') + 1) {
		CalRow r;
		double least = 1e30;
		/* iterations fixed (COLLC_MPI_CALIBRATE_ITERS), or within OSU's count */
		bool read = cal_row(line, &r) &&
		            (fixed ? r.iters == fixed : r.iters >= 1 && r.iters <= (r.size <= 8192 ? 1000 : 100)) &&
		            r.launches == (before ? 2 : 1) && (!before || cal_added(&r, first));
		/* collc only where faster by more than the noise in every time; the
		 * times are printed to 0.01 us: a comparison closer than that is not
		 * checked. Sizes step by 2, as OSU's and IMB's. */
		for (int k = 0; k < 8; k += 2)
			if (r.t[k + 1] - r.t[k] * (1 + r.noise / 100) < least)
				least = r.t[k + 1] - r.t[k] * (1 + r.noise / 100);
		if (!read || r.e < 0 || r.e > 4 || done[r.e] || r.lo != next[r.e] || r.hi <= r.lo ||
		    r.size < r.lo || r.size >= r.hi || (r.hi != end && r.hi != 2 * r.size) ||
		    (fabs(least) > 0.02 && strcmp(r.who, least > 0 ? "collc" : "mpi") != 0)) {
			snprintf(why, sizeof why, "row %.120s", line);
			break;
		}
		next[r.e] = r.hi;
		done[r.e] = r.hi == end;
		if (!strchr(line, '\n'))
			break;
	}
	for (int e = 0; e < 5 && !why[0]; e++)
		if (!done[e])
			snprintf(why, sizeof why, "entry %d's rows do not reach every size", e);
	free(text), free(first);
	return why;
}
