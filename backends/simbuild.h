/*
 * simbuild.h: schedules of the IR as the simulator's input (backends/sim.c).
 */
#ifndef COLLC_SIMBUILD_H
#define COLLC_SIMBUILD_H

#include "ir.h"
#include "sim.h"

/* The network of the schedules' topology with one collective per schedule
 * (all on one topology). 0, or -1 after reporting. */
int sim_from_scheds(Arena *, const Sched *const *, int n, SimNet *);

#endif
