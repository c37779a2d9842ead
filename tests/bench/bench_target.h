/*
 * bench_target.h: a bench's figures against their targets. A figure above
 * its target gets a "missed target" line under its table row; a bench ends
 * with a summary line and exit status 1 when a target was missed or a case
 * failed, so `make bench` stops there. Header-only: each bench_*.c is
 * linked on its own.
 */
#ifndef COLLC_BENCH_TARGET_H
#define COLLC_BENCH_TARGET_H

#include <stdio.h>

/* 1 (after saying so) when value is over target; targets <= 0 are none. */
static inline int
missed_target(const char *name, const char *figure, double value, double target,
              const char *unit)
{
	if (!(target > 0) || value <= target)
		return 0;
	printf("  missed target: %s: %s %.3f %s, target %.3f %s (%.2fx)\n", name, figure, value, unit,
	       target, unit, value / target);
	return 1;
}

/* The exit status: 0 when every target was met and every case ran; else 1,
 * after one line counting the misses and failures. */
static inline int
bench_summary(const char *bench, int missed, int failed)
{
	if (missed == 0 && failed == 0)
		return 0;
	printf("%s: %d target%s missed, %d case%s failed\n", bench, missed, missed == 1 ? "" : "s",
	       failed, failed == 1 ? "" : "s");
	return 1;
}

#endif
