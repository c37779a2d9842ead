/* test_nccl_ring.c: NCCL's rings per channel (nccl_ring, ir/alg_ring.c;
 * docs/gpu-clusters.md) on every cluster form it runs on: its closed form
 * against the schedules' link volumes on generated clusters (rails with
 * shared NICs, xgmi_rails, leaf_spine_boxes), the simulator within 5 % of
 * it on the clusters (the 2 x 8 H100 rails, the MI300X-like and
 * the 2:1 leaf-spine examples, a cluster of shared NICs), and where it
 * refuses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir.h"
#include "tests.h"

/* text's two collectives (allgather, allreduce), lowered and verified:
 * their busbw by link volumes, the allreduce's x2 (its ring twice). */
static void
volumes(Diag *dg, const char *text, double *ag, double *ar)
{
	Checked c;
	check_text(dg, &c, "n.coll", text, strlen(text));
	CU_ASSERT_EQUAL_FATAL(c.errors, 0);
	Prog p = {0};
	CU_ASSERT_EQUAL_FATAL(lower(dg, c.file, &p), 0);
	CU_ASSERT(verify(dg, p.sched[0]) == 0 && verify(dg, p.sched[1]) == 0);
	*ag = volume_busbw(p.sched[0]);
	*ar = 2 * volume_busbw(p.sched[1]);
	prog_free(&p);
	diag_reset(dg);
	checked_free(&c);
}

/* nccl_ring's closed form on shared NICs (docs/gpu-clusters.md, "The
 * baseline"): each of the G channels enters and leaves a box through one
 * NIC, K q of them a NIC, one a GPU's PCIe link, and a GPU sends G - 1 of
 * its G channels' shares through its NVSwitch link, so by link volumes
 * busbw = min(K N, G P, G/(G - 1) L) for allgather and allreduce alike.
 * Generated rails clusters, every K < G dividing G; every schedule
 * verifies. */
static void
test_nccl_ring_closed_form(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	const double L = 3600e9, N = 400e9;
	int checked = 0;
	for (int boxes = 2; boxes <= 4; boxes++)
		for (int gpus = 2; gpus <= 8; gpus *= 2)
			for (int nics = 1; nics < gpus; nics *= 2)
				for (int pcie = 128; pcie <= 512; pcie *= 4, checked++) {
					char text[512];
					snprintf(text, sizeof text,
					         "network { link_bandwidth = 3600 Gbps; }\n"
					         "topology C = rails(boxes %d, gpus %d, nic_gbps 400, nics %d, "
					         "pcie_gbps %d);\n"
					         "collective allgather G on C { algorithm nccl_ring; }\n"
					         "collective allreduce R on C { algorithm nccl_ring; }\n",
					         boxes, gpus, nics, pcie);
					Checked c;
					check_text(dg, &c, "n.coll", text, strlen(text));
					CU_ASSERT_EQUAL_FATAL(c.errors, 0);
					Prog p = {0};
					CU_ASSERT_EQUAL_FATAL(lower(dg, c.file, &p), 0);
					double want = fmin(fmin(nics * N, gpus * pcie * 1e9), gpus / (gpus - 1.0) * L);
					double ag = volume_busbw(p.sched[0]), ar = 2 * volume_busbw(p.sched[1]);
					assert_named(verify(dg, p.sched[0]) == 0 && verify(dg, p.sched[1]) == 0 &&
					             near_rel(ag, want, 1e-9) && near_rel(ar, want, 1e-9), __LINE__,
					             __FILE__, "rails(%d, %d, nics %d, pcie %d): nccl_ring %.6g and "
					             "%.6g bit/s, closed form %.6g", boxes, gpus, nics, pcie, ag, ar, want);
					prog_free(&p);
					diag_reset(dg);
					checked_free(&c);
				}
	CU_ASSERT_EQUAL(checked, 3 * (1 + 2 + 3) * 2);
}

/* ... and simulated: on 2 boxes of 4 GPUs, 2 GPUs a NIC (P 32, N 50 GB/s),
 * nccl_ring's allgather and allreduce reach 95 % of min(K N, G P) = 100
 * GB/s at 1 GiB in flow mode (one ring per NIC crossed through the other
 * NIC's GPUs reached 63.9). */
static void
test_nccl_ring_simulated(void)
{
	char dir[] = "/tmp/collc-nicring-XXXXXX", path[64];
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	write_in(dir, "c.coll",
	         "network { link_bandwidth = 3600 Gbps; link_latency = 500 ns; }\n"
	         "topology C = rails(boxes 2, gpus 4, nic_gbps 400, nics 2, pcie_gbps 256);\n"
	         "collective allgather AG on C { algorithm nccl_ring; }\n"
	         "collective allreduce AR on C { algorithm nccl_ring; }\n");
	snprintf(path, sizeof path, "%s/c.coll", dir);
	static const char *const coll[] = {"AG", "AR"};
	for (size_t i = 0; i < countof(coll); i++) {
		double busbw, bnd;
		sim_busbw(path, coll[i], &busbw, &bnd);
		assert_named(busbw >= 0.95 * 100 && busbw <= 100 * (1 + 1e-9), __LINE__, __FILE__,
		             "%s: nccl_ring busbw %.2f GB/s, closed form 100", coll[i], busbw);
	}
	remove(path);
	rmdir(dir);
}

/* On xgmi_rails (a NIC per GPU, G and B even) each channel's path through
 * a box is Walecki's, the G paths using each ordered pair's link once, so
 * busbw = G min(N, L), L one xGMI link: generated boxes of 2 to 8 GPUs,
 * xGMI above and below the NIC, and with `links` counts (the least pair's
 * binds). */
static void
test_xgmi_closed_form(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	const double N = 400e9;
	int checked = 0;
	for (int boxes = 2; boxes <= 4; boxes += 2)
		for (int gpus = 2; gpus <= 8; gpus += 2)
			for (int link = 256; link <= 1024; link *= 4, checked++) {
				char text[512];
				snprintf(text, sizeof text,
				         "network { link_bandwidth = %d Gbps; }\n"
				         "topology C = xgmi_rails(boxes %d, gpus %d, nic_gbps 400);\n"
				         "collective allgather G on C { algorithm nccl_ring; }\n"
				         "collective allreduce R on C { algorithm nccl_ring; }\n",
				         link, boxes, gpus);
				double ag, ar, want = gpus * fmin(N, link * 1e9);
				volumes(dg, text, &ag, &ar);
				assert_named(near_rel(ag, want, 1e-9) && near_rel(ar, want, 1e-9), __LINE__, __FILE__,
				             "xgmi_rails(%d, %d), L %d: nccl_ring %.6g and %.6g bit/s, closed form "
				             "%.6g", boxes, gpus, link, ag, ar, want);
			}
	CU_ASSERT_EQUAL(checked, 2 * 4 * 2);
	/* 4 GPUs, pairs 0-1 and 2-3 of 4 links, the others 1: L 256 Gbit/s binds */
	double ag, ar;
	volumes(dg, "network { link_bandwidth = 256 Gbps; }\n"
	            "topology C = xgmi_rails(boxes 2, gpus 4, nic_gbps 400, links 4, 1, 1, 1, 1, 4);\n"
	            "collective allgather G on C { algorithm nccl_ring; }\n"
	            "collective allreduce R on C { algorithm nccl_ring; }\n", &ag, &ar);
	assert_named(near_rel(ag, 4 * 256e9, 1e-9) && near_rel(ar, 4 * 256e9, 1e-9), __LINE__, __FILE__,
	             "links 4, 1, 1, 1, 1, 4: %.6g and %.6g bit/s", ag, ar);
}

/* On leaf_spine_boxes a channel leaves its box from GPU c - 1 (shared NICs:
 * from a GPU of NIC c mod K), up through spine (its index) mod S, so where S
 * divides G or passes it busbw = min(min(G, S) N, G/(G - 1) L), and with
 * shared NICs also at most K N and G P. */
static void
test_leaf_spine_closed_form(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	const double L = 3600e9, N = 400e9, P = 256e9;
	int checked = 0;
	for (int boxes = 2; boxes <= 3; boxes++)
		for (int gpus = 4; gpus <= 8; gpus *= 2)
			for (int spines = 1; spines <= 2 * gpus; spines *= 2)
				for (int nics = gpus / 2; nics <= gpus; nics += gpus / 2, checked++) {
					char text[512], shared[64] = "";
					if (nics < gpus)
						snprintf(shared, sizeof shared, ", nics %d, pcie_gbps 256", nics);
					snprintf(text, sizeof text,
					         "network { link_bandwidth = 3600 Gbps; }\n"
					         "topology C = leaf_spine_boxes(boxes %d, gpus %d, nic_gbps 400, spines "
					         "%d%s);\n"
					         "collective allgather G on C { algorithm nccl_ring; }\n"
					         "collective allreduce R on C { algorithm nccl_ring; }\n",
					         boxes, gpus, spines, shared);
					double ag, ar;
					double want = fmin(fmin(gpus, spines) * N, gpus / (gpus - 1.0) * L);
					if (nics < gpus)
						want = fmin(want, fmin(nics * N, gpus * P));
					volumes(dg, text, &ag, &ar);
					assert_named(near_rel(ag, want, 1e-9) && near_rel(ar, want, 1e-9), __LINE__,
					             __FILE__, "leaf_spine_boxes(%d, %d, spines %d, nics %d): nccl_ring "
					             "%.6g and %.6g bit/s, closed form %.6g", boxes, gpus, spines, nics,
					             ag, ar, want);
				}
	CU_ASSERT_EQUAL(checked, 2 * (4 + 5) * 2);
}

/* The clusters, simulated at 1 GiB in flow mode: the multi-channel
 * ring within 5 % of its closed form (and not above it) on the 2 x 8 H100
 * rails (8 NICs: 400 GB/s), the MI300X-like boxes (8 x min(50, 64) = 400),
 * the 2:1 leaf-spine (4 spines x 50 = 200). */
static void
test_simulated_examples(void)
{
	static const struct {
		const char *file, *coll;
		double want;
	} ex[] = {
		{"examples/gpu-cluster-2x8.coll", "AR_nccl_ring", 400},
		{"examples/mi300x-cluster.coll", "AR_nccl_ring", 400},
		{"examples/gpu-leaf-spine-2to1.coll", "AG_nccl_ring", 200},
	};
	for (size_t i = 0; i < countof(ex); i++) {
		double busbw, bnd;
		sim_busbw(ex[i].file, ex[i].coll, &busbw, &bnd);
		assert_named(busbw >= 0.95 * ex[i].want && busbw <= ex[i].want * (1 + 1e-9), __LINE__,
		             __FILE__, "%s %s: busbw %.2f GB/s, closed form %.2f", ex[i].file, ex[i].coll,
		             busbw, ex[i].want);
	}
}

/* The done-when, its first line: the 2 x 8 and 128 x 8 H100 rail
 * clusters, the MI300X-like cluster and the 2:1 leaf-spine each take at
 * most ten lines (the network block and the topology: what is left of the
 * file once comments and blank lines go, up to the topology's line), and
 * check, simulate and tune (1 MiB, flow mode). The 128 x 8 file tunes in
 * about a minute of CPU (its header says what it measured), past what the
 * suite can spend: it checks and simulates here. */
static void
test_ten_lines(void)
{
	static const struct {
		const char *file, *coll;
		bool tune;
	} ex[] = {
		{"examples/gpu-cluster-2x8.coll", "AR", true},
		{"examples/gpu-cluster-128x8.coll", "AR", false},
		{"examples/mi300x-cluster.coll", "AR", true},
		{"examples/gpu-leaf-spine-2to1.coll", "AG", true},
	};
	for (size_t i = 0; i < countof(ex); i++) {
		char *text = slurp(ex[i].file, NULL), *p = text;
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		int lines = 0;
		bool comment = false, topology = false;
		while (*p && !topology) { /* the lines up to the topology's, without comments */
			char *end = strchr(p, '\n');
			size_t n = end ? (size_t)(end - p) : strlen(p);
			bool code = false;
			for (size_t k = 0; k < n; k++) {
				if (comment) {
					comment = !(p[k] == '*' && k + 1 < n && p[k + 1] == '/');
					k += !comment;
				} else if (p[k] == '/' && k + 1 < n && p[k + 1] == '*') {
					comment = true, k++;
				} else if (p[k] == '/' && k + 1 < n && p[k + 1] == '/') {
					break;
				} else if (p[k] != ' ' && p[k] != '\t') {
					code = true;
					topology |= strncmp(p + k, "topology", 8) == 0;
				}
			}
			lines += code;
			p += n + (end != NULL);
		}
		free(text);
		assert_named(topology && lines <= 10, __LINE__, __FILE__, "%s: %d lines to its topology",
		             ex[i].file, lines);
		static const char *const cmd[] = {"check", "sim", "tune"};
		for (size_t k = 0; k < countof(cmd) - !ex[i].tune; k++) {
			char line[512], args[256];
			if (k == 0)
				snprintf(args, sizeof args, "check %s", ex[i].file);
			else
				snprintf(args, sizeof args, "%s %s --collective %s --sizes 1MiB --mode flow", cmd[k],
				         ex[i].file, ex[i].coll);
			snprintf(line, sizeof line, "%s %s 2>&1", COLLC_BIN, args);
			int status;
			char *out = run_all(line, &status);
			assert_named(status == 0 && (k < 2 || strstr(out, "NCCL's choice")), __LINE__, __FILE__,
			             "collc %s: %d\n%s", args, status, out);
			free(out);
		}
	}
}

/* Where the channels' paths would share xGMI links: located errors. */
static void
test_refusals(void)
{
	Diag d = diag_new();
	Checked c;
	const char *odd = "topology C = xgmi_rails(boxes 3, gpus 8, nic_gbps 400);\n"
	                  "collective allgather G on C { algorithm nccl_ring; }\n";
	check_built(&d, &c, "r.coll", odd, strlen(odd));
	ASSERT_DIAG(&c, "r.coll:2:31: error: nccl_ring on xgmi_rails takes a NIC per GPU and an even "
	                "number of GPUs and of boxes ('G': 3 boxes of 8 GPUs, 8 NICs each)");
	checked_free(&c);
	const char *shared = "topology D = xgmi_rails(boxes 2, gpus 8, nic_gbps 400, nics 4, pcie_gbps "
	                     "512);\ncollective allgather H on D { algorithm nccl_ring; }\n";
	check_built(&d, &c, "s.coll", shared, strlen(shared));
	ASSERT_DIAG(&c, "s.coll:2:31: error: nccl_ring on xgmi_rails takes a NIC per GPU and an even "
	                "number of GPUs and of boxes ('H': 2 boxes of 8 GPUs, 4 NICs each)");
	checked_free(&c);
}

CU_TestInfo nccl_ring_tests[] = {
	{"shared NICs: a NIC per channel's way in and out, the closed form by link volumes",
	 test_nccl_ring_closed_form},
	{"shared NICs: simulated at 95 % of the closed form, 2 GPUs a NIC", test_nccl_ring_simulated},
	{"xgmi_rails: Walecki's paths, G min(N, L) by link volumes", test_xgmi_closed_form},
	{"leaf_spine_boxes: min(G, S) N by link volumes, shared NICs too", test_leaf_spine_closed_form},
	{"the issue's clusters simulated within 5 % of the closed form", test_simulated_examples},
	{"xgmi_rails where the channels would share links: located errors", test_refusals},
	{"the issue's four clusters: ten lines each; check, sim and tune run", test_ten_lines},
	CU_TEST_INFO_NULL,
};
