/*
 * perf.h: bandwidth figures as nccl-tests reports them (perf.c), for every
 * command that prints one. For a collective moving `size` bytes in `time`
 * seconds (size: the whole vector of allreduce, reduce-scatter, allgather,
 * broadcast and reduce; each rank's send buffer of all-to-all):
 *   algbw = size / time
 *   busbw = algbw x factor: allreduce 2(p-1)/p; reduce-scatter, allgather
 *           and all-to-all (p-1)/p; broadcast and reduce 1
 * both in GB/s (10^9 bytes per second). busbw is comparable across kinds
 * and rank counts: a schedule that keeps every rank's links busy moving
 * useful data reaches the bound below.
 */
#ifndef COLLC_PERF_H
#define COLLC_PERF_H

#include <stdbool.h>

#include "sim.h"

/* kind: "allreduce", "reduce_scatter" (or "reducescatter"), "allgather",
 * "alltoall", "broadcast", "reduce"; 0 for an unknown kind. */
double perf_busbw_factor(const char *kind, int nranks);
/* nccl-tests' redop column: the op for kinds that reduce, "none" else. */
const char *perf_redop(const char *kind, const char *op);
bool perf_reduces(const char *kind);

/* The largest busbw (bytes/s) any schedule of collective c of net can
 * reach: every kind but all-to-all is bounded by B_v, the smallest total
 * outgoing link bandwidth of a rank's node; all-to-all also by the links'
 * total capacity over the hops its data must cross on shortest paths:
 * C (p-1) / sum over ordered pairs of hop distance. */
double perf_bound_busbw(const SimNet *, int c);

#endif
