/*
 * bench_packing.c: `make bench`, synthesizing optimal tree packings (issue
 * 33): the CPU time and peak memory of lowering an allgather with
 * `algorithm packing` (the cut bound, the packing of ir/packing.c and its
 * schedule), each case in its own process. Targets are the issue's: 1 s for
 * 32 ranks (about 100 nodes), 60 s and 4 GiB for 1024 GPUs (128 boxes of 8
 * with a NIC per GPU, rails and a spine). A case the packing refuses
 * (MAX_PACK_WORK) is a failed case, with the refusal shown. The rails form
 * with `group G = translations(C)`, or with no group (the form's own
 * translations), packs by orbit representatives (ir/packing_orbit.c); the
 * graph form has no group unless written, so every root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "ast.h"
#include "bench_child.h"
#include "bench_target.h"
#include "ir.h"

typedef struct Case {
	const char *name;
	int boxes, gpus; /* a cluster, or 0 boxes: text below */
	bool group;      /* the cluster's group: boxes and GPU indices rotated */
	const char *text;
	double target_s, target_mib;
} Case;

static const Case cases[] = {
	{"32 ranks on torus(10, 10)", 0, 0, false,
	 "topology T = torus(10, 10);\n"
	 "collective allgather AG on T { ranks 0..31; algorithm packing; }\n",
	 1.0, 4096},
	{"32 hosts, spine_leaf(8, 16, 2)", 0, 0, false,
	 "topology T = spine_leaf(spines 8, leaves 16, hosts 2);\n"
	 "collective allgather AG on T { algorithm packing; }\n",
	 1.0, 4096},
	{"4 boxes x 8 GPUs, rails, spine", 4, 8, false, NULL, 1.0, 4096},
	/* with their group: orbit representatives (ir/packing_orbit.c); without
	 * it 128 boxes are refused (docs/algorithms.md, "Orbit representatives") */
	{"4 x 8 GPUs, rails, spine, group", 4, 8, true, NULL, 1.0, 4096},
	{"128 x 8 GPUs, rails, spine, group", 128, 8, true, NULL, 60.0, 4096},
	/* the rails form with its translations: orbit representatives */
	{"4 x 8 GPUs, rails, translations", 0, 0, false,
	 "network { link_bandwidth = 3600 Gbps; link_latency = 500 ns; }\n"
	 "topology C = rails(boxes 4, gpus 8, nic_gbps 400);\n"
	 "group G = translations(C);\n"
	 "collective allgather AG on C { algorithm packing; }\n",
	 1.0, 4096},
	{"128 x 8 GPUs, rails, translations", 0, 0, false,
	 "network { link_bandwidth = 3600 Gbps; link_latency = 500 ns; }\n"
	 "topology C = rails(boxes 128, gpus 8, nic_gbps 400);\n"
	 "group G = translations(C);\n"
	 "collective allgather AG on C { algorithm packing; }\n",
	 60.0, 4096},
	/* nothing but the topology: the form's own translations */
	{"128 x 8 GPUs, rails, no group", 0, 0, false,
	 "network { link_bandwidth = 3600 Gbps; link_latency = 500 ns; }\n"
	 "topology C = rails(boxes 128, gpus 8, nic_gbps 400);\n"
	 "collective allgather AG on C { algorithm packing; }\n",
	 60.0, 4096},
};

/* Boxes of GPUs at an NVSwitch (450 GB/s), GPU g of every box on rail
 * switch g by its NIC (50 GB/s), the rails on one spine switch (each at
 * the rail's whole NIC bandwidth). Nodes: GPUs, NVSwitches, rails, spine. */
static char *
cluster_text(int boxes, int gpus, bool group)
{
	size_t cap = 256 + (size_t)boxes * gpus * 160 + (size_t)gpus * 64 + (size_t)boxes * 40, n = 0;
	char *t = malloc(cap);
	int ng = boxes * gpus, nodes = ng + boxes + gpus + 1;
	n += (size_t)snprintf(t + n, cap - n,
	                      "network { link_bandwidth = 3600 Gbps; link_latency = 500 ns; }\n"
	                      "topology C = graph {\n nodes %d;\n switches %d..%d;\n",
	                      nodes, ng, nodes - 1);
	for (int v = 0; v < ng; v++)
		n += (size_t)snprintf(t + n, cap - n,
		                      " link %d <-> %d;\n link %d <-> %d { link_bandwidth = 400 Gbps; }\n",
		                      v, ng + v / gpus, v, ng + boxes + v % gpus);
	for (int g = 0; g < gpus; g++)
		n += (size_t)snprintf(t + n, cap - n, " link %d <-> %d { link_bandwidth = %d Gbps; }\n",
		                      ng + boxes + g, nodes - 1, 400 * boxes);
	n += (size_t)snprintf(t + n, cap - n, "}\n");
	/* the next box (its switch too), the next GPU index (its rail too) */
	for (int k = 0; group && k < 2; k++) {
		n += (size_t)snprintf(t + n, cap - n, "group %s on C { map ", k ? "I" : "B");
		for (int v = 0; v < ng; v++) {
			int b = v / gpus, g = v % gpus;
			int w = k ? b * gpus + (g + 1) % gpus : (b + 1) % boxes * gpus + g;
			n += (size_t)snprintf(t + n, cap - n, "%d -> %d, ", v, w);
		}
		for (int i = 0; i < (k ? gpus : boxes); i++) {
			int base = k ? ng + boxes : ng, m = k ? gpus : boxes;
			n += (size_t)snprintf(t + n, cap - n, "%d -> %d%s", base + i, base + (i + 1) % m,
			                      i + 1 < m ? ", " : "; }\n");
		}
	}
	if (group)
		n += (size_t)snprintf(t + n, cap - n, "group G on C { include B; include I; }\n");
	snprintf(t + n, cap - n, "collective allgather AG on C { algorithm packing; }\n");
	return t;
}

/* In the child: prints "lower_s peak_kib messages", or the refusal. */
static int
run(const void *arg, int fd)
{
	const Case *c = arg;
	char *text = c->boxes ? cluster_text(c->boxes, c->gpus, c->group) : strdup(c->text);
	Arena a = {0};
	Diag diag = diag_new(), *dg = &diag; /* the child's diagnostics */
	diag_on_oom(dg);
	diag_source(dg, "bench.coll", text, strlen(text));
	File *f = parse_text(dg, &a, "bench.coll", text, strlen(text));
	if (nerrors(dg) || sema(dg, f))
		return 1;
	double t0 = process_cpu();
	Prog p = {0};
	if (lower(dg, f, &p) != 0 || p.nsched != 1) {
		dprintf(fd, "refused\n");
		return 1;
	}
	double t1 = process_cpu();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	dprintf(fd, "%.6f %ld %d\n", t1 - t0, ru.ru_maxrss, p.sched[0]->nmsg);
	prog_free(&p);
	arena_free(&a);
	free(text);
	return 0;
}

int
main(void)
{
	printf("%-36s %8s %7s %6s %8s %7s %6s %9s\n", "case", "lower s", "target", "ratio",
	       "peak MiB", "target", "ratio", "messages");
	int missed = 0, failed = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char buf[128];
		bool ok = in_child(run, &cases[i], buf, sizeof buf);
		double tl = 0;
		long kib = 0;
		int nmsg = 0;
		if (!ok || sscanf(buf, "%lf %ld %d", &tl, &kib, &nmsg) != 3) {
			printf("%-36s %s\n", cases[i].name,
			       strncmp(buf, "refused", 7) == 0 ? "refused (the error above)" : "failed");
			failed++;
			continue;
		}
		const Case *c = &cases[i];
		double mib = (double)kib / 1024;
		printf("%-36s %8.3f %7.2f %6.3f %8.1f %7.0f %6.3f %9d\n", c->name, tl, c->target_s,
		       tl / c->target_s, mib, c->target_mib, mib / c->target_mib, nmsg);
		missed += missed_target(c->name, "lower time", tl, c->target_s, "s");
		missed += missed_target(c->name, "peak memory", mib, c->target_mib, "MiB");
	}
	return bench_summary("bench_packing", missed, failed);
}
