/*
 * bench_a2abound.c: `make bench`, all-to-all's concurrent-flow bound
 * (ir/a2abound.c): the CPU time of the interval [lo, hi] on networks where
 * the flow runs (no closed form), each case in its own process, with the
 * gap and the phases it took. Target: 1 s a case (the bound runs inside
 * check, sim and tune). A case refused by MAX_A2A_WORK is a failed case.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_child.h"
#include "bench_target.h"
#include "cutbound.h"
#include "ir.h"

typedef struct Case {
	const char *name;
	int ndim, size[3], ranks; /* a torus and its first ranks, or 0 dims: a cluster */
	int boxes, gpus;
	double target_s;
} Case;

static const Case cases[] = {
	{"32 of torus(8, 8)", 2, {8, 8}, 32, 0, 0, 1.0},
	{"32 of torus(4, 4, 4)", 3, {4, 4, 4}, 32, 0, 0, 1.0},
	{"torus(4, 8)", 2, {4, 8}, 32, 0, 0, 1.0},
	{"4 boxes x 8 GPUs, rails, spine", 0, {0}, 0, 4, 8, 1.0},
};

/* Boxes of GPUs at an NVSwitch (450 GB/s), GPU g of every box on rail
 * switch g by its NIC (50 GB/s), the rails on a spine at half their NICs'
 * bandwidth (2:1). Nodes: GPUs, NVSwitches, rails, spine. */
static CutLink *
cluster(int boxes, int gpus, CutNet *n, int *rn)
{
	int ng = boxes * gpus, nodes = ng + boxes + gpus + 1, m = 0;
	CutLink *l = malloc(((size_t)ng * 4 + (size_t)gpus * 2) * sizeof *l);
	const int64_t gb = 8000000000LL;
	for (int v = 0; v < ng; v++) {
		int nv = ng + v / gpus, rail = ng + boxes + v % gpus;
		l[m++] = (CutLink){v, nv, 450 * gb};
		l[m++] = (CutLink){nv, v, 450 * gb};
		l[m++] = (CutLink){v, rail, 50 * gb};
		l[m++] = (CutLink){rail, v, 50 * gb};
		rn[v] = v;
	}
	for (int g = 0; g < gpus; g++) {
		l[m++] = (CutLink){ng + boxes + g, nodes - 1, 25 * gb * boxes};
		l[m++] = (CutLink){nodes - 1, ng + boxes + g, 25 * gb * boxes};
	}
	*n = (CutNet){.nnode = nodes, .nlink = m, .link = l, .nrank = ng, .rank_node = rn};
	return l;
}

/* In the child: prints "seconds lo hi phases", or "refused". */
static int
run(const void *arg, int fd)
{
	const Case *c = arg;
	Arena a = {0};
	int rn[1024];
	CutNet n;
	CutLink *l;
	if (c->ndim) {
		Topo *t = topo_new(&a, TK_TORUS, "T", c->ndim, c->size, 0, net_defaults);
		for (int r = 0; r < c->ranks; r++)
			rn[r] = r;
		l = cutnet_topo(t, rn, c->ranks, 0, &n);
	} else {
		l = cluster(c->boxes, c->gpus, &n, rn);
	}
	double t0 = process_cpu();
	A2ABound b;
	CutStatus st = a2abound(&n, &b);
	double t1 = process_cpu();
	if (st != CUT_OK)
		dprintf(fd, "refused\n");
	else
		dprintf(fd, "%.6f %.9g %.9g %d\n", t1 - t0, b.lo, b.hi, b.phases);
	free(b.cut);
	free(l);
	arena_free(&a);
	return st != CUT_OK;
}

int
main(void)
{
	printf("%-34s %8s %7s %6s %12s %12s %7s %7s\n", "case", "cpu s", "target", "ratio",
	       "lo GB/s", "hi GB/s", "gap %", "phases");
	int missed = 0, failed = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const Case *c = &cases[i];
		char buf[160];
		double s, lo, hi;
		int ph;
		if (!in_child(run, c, buf, sizeof buf) ||
		    sscanf(buf, "%lf %lf %lf %d", &s, &lo, &hi, &ph) != 4) {
			printf("%-34s %s\n", c->name, strncmp(buf, "refused", 7) == 0
			                                   ? "refused (MAX_A2A_WORK)" : "failed");
			failed++;
			continue;
		}
		/* busbw = (N - 1) lambda, bits to bytes */
		int nr = c->ndim ? c->ranks : c->boxes * c->gpus;
		printf("%-34s %8.3f %7.2f %6.3f %12.3f %12.3f %7.3f %7d\n", c->name, s, c->target_s,
		       s / c->target_s, lo * (nr - 1) / 8e9, hi * (nr - 1) / 8e9, (hi / lo - 1) * 100,
		       ph);
		missed += missed_target(c->name, "cpu time", s, c->target_s, "s");
	}
	return bench_summary("bench_a2abound", missed, failed);
}
