/*
 * test_cli_sweep.c: `collc sweep` as a user runs it (the cli suite, whose
 * table is in test_cli.c): shards and merges, sizes, a .coll file's axes,
 * the registry's network axes, SIGINT and --resume, the progress estimate.
 */
#include <glob.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver.h"
#include "sweep.h"
#include "test_cli.h"
#include "tests.h"

#ifndef COLLC_BIN
#define COLLC_BIN "bin/collc"
#endif

/* sweep: one machine and three merged shards give the same bytes; the rows
 * carry nccl-tests' bus bandwidth; a bad spec names its line. */
void
test_sweep(void)
{
	write_in(cli_tmpdir, "g.sweep", "# a small grid\n"
	                     "topology torus(8, 8), torus(4, 4)\n"
	                     "groups 4, 16\n"
	                     "allreduce ring, halving_doubling, swing\n"
	                     "alltoall bruck\n"
	                     "routing shortest_path, dor\n"
	                     "link_bandwidth 400 GBps\n"
	                     "link_latency 0.025 us, 0.5 us\n"
	                     "sizes 64KiB..4MiB\n");
	char *out, *err, args[1024];
	snprintf(args, sizeof args, "sweep %s/g.sweep -j 2 -o %s/all.csv --json %s/all.json "
	         "--plots %s/plots", cli_tmpdir, cli_tmpdir, cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "sweep: 448 of 448 points"));
	free(out), free(err);
	/* bridge on the optical ring, in a grid of its own */
	write_in(cli_tmpdir, "o.sweep", "topology optical_ring(16)\nallreduce bridge\n"
	                            "link_bandwidth 400 GBps\nlink_latency 0.025 us\nsizes 64KiB\n");
	snprintf(args, sizeof args, "sweep %s/o.sweep -o %s/o.csv", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	free(out), free(err);
	for (int i = 0; i < 3; i++) {
		snprintf(args, sizeof args, "sweep %s/g.sweep --shard %d/3 -j 1 -o %s/s%d.csv "
		         "--json %s/s%d.json", cli_tmpdir, i, cli_tmpdir, i, cli_tmpdir, i);
		CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
		free(out), free(err);
	}
	snprintf(args, sizeof args, "sweep --merge %s/s2.csv %s/s0.csv %s/s1.csv", cli_tmpdir, cli_tmpdir,
	         cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	char path[256];
	snprintf(path, sizeof path, "%s/all.csv", cli_tmpdir);
	char *all = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(all);
	CU_ASSERT_STRING_EQUAL(out, all);
	free(out), free(err);
	snprintf(args, sizeof args, "sweep --merge %s/s1.json %s/s0.json %s/s2.json", cli_tmpdir,
	         cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	snprintf(path, sizeof path, "%s/all.json", cli_tmpdir);
	char *js = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(js);
	CU_ASSERT_STRING_EQUAL(out, js);
	free(out), free(err), free(js);
	/* a shard missing: the merge refuses */
	snprintf(args, sizeof args, "sweep --merge %s/s0.csv %s/s1.csv", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "in no shard"));
	free(out), free(err);
	/* point 0: ring allreduce of 4 ranks at 64 KiB; busbw = algbw x 2(p-1)/p */
	double t, alg, bus;
	const char *row = strstr(all, "\n0,");
	CU_ASSERT_PTR_NOT_NULL_FATAL(row);
	CU_ASSERT_EQUAL(sscanf(strstr(row, "65536,16384,float,sum,") + 22, "%lf,%lf,%lf", &t, &alg,
	                       &bus), 3);
	CU_ASSERT_DOUBLE_EQUAL(alg, 65536 / (t * 1e3), 0.01 * alg);
	CU_ASSERT_DOUBLE_EQUAL(bus, alg * 1.5, 0.002);
	/* bridge runs on the optical ring and reports its time; it does not run
	 * on a torus */
	snprintf(path, sizeof path, "%s/o.csv", cli_tmpdir);
	char *opt = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(opt);
	static const char bridge_row[] = "optical_ring(16),all,allreduce,bridge,shortest_path,"
	                                 "400 GBps,0.025 us,,,,65536,16384,float,sum,";
	const char *br = strstr(opt, bridge_row);
	CU_ASSERT_PTR_NOT_NULL_FATAL(br);
	const char *ok = strstr(br, ",ok,"), *eol = strchr(br, '\n');
	double bt = 0;
	CU_ASSERT_EQUAL(sscanf(br + strlen(bridge_row), "%lf", &bt), 1);
	CU_ASSERT_TRUE(bt > 0 && ok && eol && ok < eol);
	free(opt);
	/* ... and not on a torus: an error at bridge in the spec, nothing written */
	write_in(cli_tmpdir, "mixed.sweep", "topology torus(8, 8), optical_ring(16)\n"
	                                "allreduce ring, bridge\nsizes 64KiB\n");
	snprintf(args, sizeof args, "sweep %s/mixed.sweep -o %s/mixed.csv", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "mixed.sweep:2:17: error: point 1 (allreduce bridge "
	                                   "on torus(8, 8), ranks all, 64 KiB) cannot be simulated: "
	                                   "bridge runs on an optical_ring topology"));
	CU_ASSERT(!cli_exists("mixed.csv"));
	free(out), free(err);
	/* plots named and titled by their configuration, the network values too */
	CU_ASSERT_TRUE(cli_exists("plots/allreduce-torus-8-8-ranks-4-shortest-path-link-bandwidth-"
	                          "400-gbps-link-latency-0-025-us.svg"));
	CU_ASSERT_TRUE(cli_exists("plots/alltoall-torus-4-4-ranks-16-dor-link-bandwidth-400-gbps-"
	                          "link-latency-0-5-us.svg"));
	CU_ASSERT_FALSE(cli_exists("plots/sweep-00000.svg"));
	snprintf(path, sizeof path, "%s/plots/allreduce-torus-8-8-ranks-4-shortest-path-link-"
	         "bandwidth-400-gbps-link-latency-0-5-us.svg", cli_tmpdir);
	char *svg = slurp(path, NULL);
	CU_ASSERT(svg && strstr(svg, ">allreduce torus(8, 8), ranks 4, shortest_path, "
	                             "link_bandwidth 400 GBps, link_latency 0.5 us<") != NULL);
	free(svg);
	free(all);
	/* links private: Bruck's six steps of 2 MiB on 2x32 take 6 x 2 MiB / 400 GB/s
	 * (no latency), however many of them cross one link */
	write_in(cli_tmpdir, "p.sweep", "topology torus(2, 32)\ngroups 64\nalltoall bruck\n"
	                            "link_bandwidth 400 GBps\nlink_latency 0 us\nsizes 4MiB\n"
	                            "mode flow\nlinks private\n");
	snprintf(args, sizeof args, "sweep %s/p.sweep", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, ",4194304,1048576,float,none,31.457,"));
	free(out), free(err);
	write_in(cli_tmpdir, "bad.sweep", "topology torus(4, 4)\nsizes 1MiB\nallreduce ring\nlinks some\n");
	snprintf(args, sizeof args, "sweep %s/bad.sweep", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "bad.sweep:4:1: error: 'links' takes"));
	free(out), free(err);
	write_in(cli_tmpdir, "bad.sweep", "topology torus(4, 4)\nsizes 1MiB\nallreduce ring\nspeed 3\n");
	snprintf(args, sizeof args, "sweep %s/bad.sweep", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "bad.sweep:4:1: error: unknown key 'speed'"));
	CU_ASSERT_STRING_EQUAL(out, "");
	free(out), free(err);
}

/* The rows of a sweep's CSV without their point numbers, in size order
 * of `order` (the row of sizes[order[k]] k-th): what a row says of its
 * point, whatever else the spec lists. */
static char *
sweep_rows(const char *spec, const char *const *order, int n)
{
	char args[512], *out, *err;
	snprintf(args, sizeof args, "sweep %s/%s -j 2", cli_tmpdir, spec);
	if (cli_collc(args, &out, &err) != 0) {
		free(out), free(err);
		return NULL;
	}
	size_t len = strlen(out) + 1;
	char *rows = xcalloc(len, 1);
	for (int k = 0; k < n; k++)
		for (char *l = strchr(out, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
			char *eol = strchr(l + 1, '\n'), *comma = strchr(l + 1, ',');
			char want[64];
			snprintf(want, sizeof want, ",%s,", order[k]);
			char *at = strstr(comma, want);
			if (at && at < eol)
				strncat(rows, comma, (size_t)(eol - comma + 1));
		}
	free(out), free(err);
	return rows;
}

/* A row for a size is the same bytes whatever else the sizes line holds:
 * auto, pipelined_trees (SuperMesh) and bridge (optical ring) choose for
 * each size; and the choices differ by size. */
void
test_sweep_sizes(void)
{
	static const char body[] = "topology supermesh(6, 6, bi)\n"
	                           "allreduce auto, pipelined_trees, pipelined_trees(segments 1)\n"
	                           "reduce_scatter pipelined_trees\nmode flow\n";
	static const char opt[] = "topology optical_ring(16)\nallreduce bridge\nalltoall bridge\n"
	                          "link_bandwidth 800 Gbps\nstep_overhead 1.7 us\nmode flow\n";
	char text[512];
	const char *sizes[][3] = {{"4KiB, 64MiB", "4096", "67108864"},
	                          {"64MiB, 4KiB", "4096", "67108864"},
	                          {"64MiB", "67108864", NULL}};
	char *rows[3], *orows[3];
	for (int i = 0; i < 3; i++) {
		snprintf(text, sizeof text, "%ssizes %s\n", body, sizes[i][0]);
		write_in(cli_tmpdir, "sz.sweep", text);
		rows[i] = sweep_rows("sz.sweep", sizes[i] + 1, sizes[i][2] ? 2 : 1);
		snprintf(text, sizeof text, "%ssizes %s\n", opt, sizes[i][0]);
		write_in(cli_tmpdir, "szo.sweep", text);
		orows[i] = sweep_rows("szo.sweep", sizes[i] + 1, sizes[i][2] ? 2 : 1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(rows[i]);
		CU_ASSERT_PTR_NOT_NULL_FATAL(orows[i]);
	}
	CU_ASSERT_STRING_EQUAL(rows[0], rows[1]);
	CU_ASSERT_STRING_EQUAL(orows[0], orows[1]);
	CU_ASSERT(strlen(rows[0]) > 0 && strlen(orows[0]) > 0);
	/* the 64 MiB rows alone are the 64 MiB rows of the pair */
	for (char *l = rows[2]; *l; l = strchr(l, '\n') + 1) {
		char line[512];
		snprintf(line, sizeof line, "%.*s", (int)(strchr(l, '\n') - l + 1), l);
		CU_ASSERT_PTR_NOT_NULL(strstr(rows[0], line));
	}
	for (char *l = orows[2]; *l; l = strchr(l, '\n') + 1) {
		char line[512];
		snprintf(line, sizeof line, "%.*s", (int)(strchr(l, '\n') - l + 1), l);
		CU_ASSERT_PTR_NOT_NULL(strstr(orows[0], line));
	}
	/* auto chooses per size, and says what; pipelined_trees' segments for
	 * 64 MiB beat one segment */
	CU_ASSERT_PTR_NOT_NULL(strstr(rows[0], ",4096,1024,float,sum,"));
	/* auto is simulated per size, as collc sim does: the same pick, built for
	 * each size; the packing's shallow trees (2.095 us) beat pipelined_trees
	 * (2.410) at 4 KiB in one segment, and at 64 MiB (683.6 us against 722.2)
	 * in 145 */
	CU_ASSERT_PTR_NOT_NULL(strstr(rows[0], ",ok,auto:packing (segments 1 of 288 trees"));
	CU_ASSERT_PTR_NOT_NULL(strstr(rows[0], ",ok,auto:packing (segments 145 of 288 trees"));
	double seg = 0, one = 0;
	const char *a = strstr(rows[2], ",pipelined_trees,"), *b = strstr(rows[2], "segments 1)");
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_EQUAL(sscanf(strstr(a, ",float,sum,") + 11, "%lf", &seg), 1);
	CU_ASSERT_EQUAL(sscanf(strstr(b, ",float,sum,") + 11, "%lf", &one), 1);
	CU_ASSERT_TRUE(seg > 0 && seg * 2 < one);
	for (int i = 0; i < 3; i++)
		free(rows[i]), free(orows[i]);
}

/* A spec naming a .coll file: SP (a group and a tree), a user schedule and
 * a library algorithm, over routing and network values; the rows are
 * collc sim's and the library grid's; shards merge; errors are located. */
void
test_sweep_file(void)
{
	static const char coll[] =
	    "network { link_bandwidth = 400 Gbps; link_latency = 100 ns; }\n"
	    "topology T = torus(4, 4);\n"
	    "group G on T { translate; map (x, y) -> (-x, -y); map (x, y) -> (y, x); }\n"
	    "tree B = bfs(T, root (0, 0));\n"
	    "collective allreduce SP on T { algorithm symmetric(trees B, group G); }\n"
	    "collective allreduce HD on T { algorithm halving_doubling; }\n"
	    "topology R = ring(4);\n"
	    "collective allgather UR on R {\n"
	    "    schedule { for s in 0..p - 2 { round { for r in 0..p - 1 {\n"
	    "        send (r - s) mod p from r to (r + 1) mod p copy; } } } }\n"
	    "}\n";
	write_in(cli_tmpdir, "f.coll", coll);
	write_in(cli_tmpdir, "f.sweep", "file f.coll\ncollectives SP, HD, UR\n"
	                            "routing shortest_path, dor\nlink_bandwidth 800 Gbps\n"
	                            "sizes 1MiB, 4MiB\nmode flow\n");
	char *out, *err, args[1024], path[256];
	snprintf(args, sizeof args, "sweep %s/f.sweep -j 2 -o %s/f.csv --plots %s/fplots", cli_tmpdir,
	         cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "sweep: 12 of 12 points"));
	free(out), free(err);
	snprintf(path, sizeof path, "%s/f.csv", cli_tmpdir);
	char *all = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(all);
	CU_ASSERT_PTR_NOT_NULL(strstr(all, "point,topology,ranks,collective,name,algorithm,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(all, "\n0,\"torus(4, 4)\",16,allreduce,SP,\"symmetric(trees B, "
	                                   "group G)\",shortest_path,800 Gbps,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(all, "\n8,ring(4),4,allgather,UR,schedule,shortest_path,"));
	CU_ASSERT_TRUE(cli_exists("fplots/allreduce-f-coll-routing-shortest-path-link-bandwidth-"
	                          "800-gbps.svg") &&
	               cli_exists("fplots/allgather-f-coll-routing-dor-link-bandwidth-800-gbps.svg"));
	/* the file as the spec names it: no directory of the run in the title */
	snprintf(path, sizeof path, "%s/fplots/allreduce-f-coll-routing-dor-link-bandwidth-800-"
	         "gbps.svg", cli_tmpdir);
	char *svg = slurp(path, NULL);
	CU_ASSERT(svg && strstr(svg, ">allreduce, f.coll, routing dor, link_bandwidth 800 Gbps<") &&
	          !strstr(svg, cli_tmpdir));
	free(svg);
	/* SP at 800 Gb/s is collc sim's on the file with that bandwidth */
	char *sp = strstr(all, "\n0,"), *tail;
	double t = 0, want = 0;
	CU_ASSERT_EQUAL(sscanf(strstr(sp, ",float,sum,") + 11, "%lf", &t), 1);
	snprintf(args, sizeof args, "sim %s/f800.coll --collective SP --sizes 1MiB --mode flow --csv",
	         cli_tmpdir);
	char text[2048];
	snprintf(text, sizeof text, "network { link_bandwidth = 800 Gbps; link_latency = 100 ns; }\n%s",
	         strstr(coll, "topology T"));
	write_in(cli_tmpdir, "f800.coll", text);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	tail = strstr(out, ",float,sum,");
	CU_ASSERT_PTR_NOT_NULL_FATAL(tail);
	CU_ASSERT_EQUAL(sscanf(tail + 11, "%lf", &want), 1);
	CU_ASSERT_DOUBLE_EQUAL(t, want, 0.0006);
	free(out), free(err);
	/* HD with dor at 800 Gb/s is the library grid's row */
	write_in(cli_tmpdir, "hd.sweep", "topology torus(4, 4)\nallreduce halving_doubling\n"
	                             "routing dor\nlink_bandwidth 800 Gbps\nlink_latency 100 ns\n"
	                             "sizes 1MiB\nmode flow\n");
	snprintf(args, sizeof args, "sweep %s/hd.sweep", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	const char *lib = strstr(out, ",1048576,262144,float,sum,");
	const char *hd = strstr(all, ",HD,halving_doubling,dor,800 Gbps,,,,,1048576,262144,float,sum,");
	CU_ASSERT_PTR_NOT_NULL_FATAL(lib);
	CU_ASSERT_PTR_NOT_NULL_FATAL(hd);
	CU_ASSERT_EQUAL(strncmp(lib, strstr(hd, ",1048576,"), strcspn(lib, "\n")), 0);
	free(out), free(err);
	/* shards merge byte-identically */
	for (int i = 0; i < 2; i++) {
		snprintf(args, sizeof args, "sweep %s/f.sweep --shard %d/2 -j 1 -o %s/fs%d.csv", cli_tmpdir,
		         i, cli_tmpdir, i);
		CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
		free(out), free(err);
	}
	snprintf(args, sizeof args, "sweep --merge %s/fs1.csv %s/fs0.csv", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_STRING_EQUAL(out, all);
	free(out), free(err), free(all);
	/* errors: located in the spec, nothing written */
	static const struct { const char *spec, *want; } bad[] = {
	    {"file f.coll\ntopology torus(4, 4)\nsizes 1MiB\n",
	     "e.sweep:2:1: error: 'topology' does not combine with `file`"},
	    {"file f.coll\ncollectives SP, HX\nsizes 1MiB\n",
	     "e.sweep:2:17: error: "},
	    {"file f.coll\nrouting dor\ncollectives UR\nsizes 1MiB\n", NULL},
	    {"file nothere.coll\nsizes 1MiB\n", "e.sweep:1:6: error: cannot open"},
	    {"topology torus(4, 4)\nallreduce symmetric(trees B, group G)\nsizes 1MiB\n",
	     "e.sweep:2:27: error: point 0 (allreduce symmetric(trees B, group G) on torus(4, 4), "
	     "ranks all, 1 MiB) cannot be simulated: unknown tree 'B' (declare trees and groups in "
	     "a .coll file and name it with `file`)"},
	};
	for (size_t i = 0; i < countof(bad); i++) {
		write_in(cli_tmpdir, "e.sweep", bad[i].spec);
		snprintf(args, sizeof args, "sweep %s/e.sweep -o %s/e.csv", cli_tmpdir, cli_tmpdir);
		int rc = cli_collc(args, &out, &err);
		if (bad[i].want) {
			CU_ASSERT_EQUAL(rc, 1);
			CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].want));
			CU_ASSERT(!cli_exists("e.csv"));
		} else { /* dor on a ring: UR runs */
			CU_ASSERT_EQUAL(rc, 0);
			char *e = slurp(strcat(strcpy(path, cli_tmpdir), "/e.csv"), NULL);
			CU_ASSERT_TRUE(e && strstr(e, ",allgather,UR,schedule,dor,"));
			free(e);
			unlink(path);
		}
		free(out), free(err);
	}
	/* a topology's own value is not overridden silently */
	write_in(cli_tmpdir, "own.coll", "topology T = torus(4, 4) { network { link_latency = 1 us; } }\n"
	                             "collective allreduce A on T { algorithm ring; }\n");
	write_in(cli_tmpdir, "e.sweep", "file own.coll\nlink_latency 0.5 us\nsizes 1MiB\n");
	snprintf(args, sizeof args, "sweep %s/e.sweep", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "e.sweep:2:1: error: topology 'T' sets its own "
	                                   "link_latency"));
	free(out), free(err);
}

/* A file without a network block takes the spec's values as one: the
 * user's ring schedule is the library ring's row for row; the failed point
 * reported is the same whatever --jobs is. */
void
test_sweep_file_network(void)
{
	char cwd[1024], text[2048], args[1024], *out, *err, *lib, *lerr;
	CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
	snprintf(text, sizeof text, "file %s/examples/user-ring.coll\ncollectives RING\n"
	         "link_bandwidth 800 Gbps, 100 Gbps\nsizes 1MiB\n", cwd);
	write_in(cli_tmpdir, "u.sweep", text);
	write_in(cli_tmpdir, "l.sweep", "topology ring(8)\nallreduce ring\n"
	                            "link_bandwidth 800 Gbps, 100 Gbps\nsizes 1MiB\n");
	snprintf(args, sizeof args, "sweep %s/u.sweep", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	snprintf(args, sizeof args, "sweep %s/l.sweep", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &lib, &lerr), 0);
	/* from the bandwidth on, each row is the library's */
	for (int bw = 0; bw < 2; bw++) {
		const char *key = bw ? ",100 Gbps," : ",800 Gbps,";
		const char *u = strstr(out, key), *l = strstr(lib, key);
		CU_ASSERT_PTR_NOT_NULL_FATAL(u);
		CU_ASSERT_PTR_NOT_NULL_FATAL(l);
		CU_ASSERT_EQUAL(strncmp(strstr(u, ",1048576,"), strstr(l, ",1048576,"),
		                        strcspn(strstr(l, ",1048576,"), "\n")), 0);
	}
	free(out), free(err), free(lib), free(lerr);
	write_in(cli_tmpdir, "e2.sweep", "topology torus(4, 4), optical_ring(16)\ngroups 4, 16\n"
	                             "allreduce ring, bridge\nrouting shortest_path, dor\n"
	                             "sizes 1MiB\n");
	char *e[2];
	for (int j = 0; j < 2; j++) {
		snprintf(args, sizeof args, "sweep %s/e2.sweep -j %d", cli_tmpdir, j + 1);
		CU_ASSERT_EQUAL(cli_collc(args, &out, &e[j]), 1);
		CU_ASSERT_STRING_EQUAL(out, "");
		free(out);
	}
	CU_ASSERT_PTR_NOT_NULL(strstr(e[0], "e2.sweep:3:17: error: point 2 (allreduce bridge on "
	                                    "torus(4, 4), ranks 4, routing shortest_path, 1 MiB)"));
	CU_ASSERT_STRING_EQUAL(strstr(e[0], "e2.sweep:"), strstr(e[1], "e2.sweep:"));
	free(e[0]), free(e[1]);
}

/* The sweep's network axes are the registry's swept parameters, NNET of
 * them, each a parameter the language knows. */
void
test_sweep_axes_registry(void)
{
	for (int k = 0; k < NNET; k++) {
		CU_ASSERT_PTR_NOT_NULL_FATAL(net_key(k));
		CU_ASSERT_PTR_NOT_NULL(net_param_find(net_key(k)));
	}
	CU_ASSERT_PTR_NULL(net_key(NNET));
}

/* sweep stopped by SIGINT (the test hook has the first worker send it, as a
 * terminal would, once it has sent 3 points): exit 130, a CSV of whole rows
 * each the full run's, the command that resumes it; --resume finishes it into
 * the uninterrupted run's bytes, and refuses another spec's rows. */
void
test_sweep_interrupt(void)
{
	write_in(cli_tmpdir, "i.sweep", "topology torus(4, 4), torus(2, 8)\ngroups 2, 4, 8, 16\n"
	                            "allreduce ring, halving_doubling\nallgather ring\n"
	                            "routing shortest_path, dor\nsizes 64KiB, 1MiB, 4MiB\n"
	                            "links private\nmode flow\n");
	char *out, *err, args[1024], path[256];
	snprintf(args, sizeof args, "sweep %s/i.sweep -j 2 -o %s/i-full.csv", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	free(out), free(err);
	snprintf(path, sizeof path, "%s/i-full.csv", cli_tmpdir);
	char *full = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(full);
	setenv("COLLC_SWEEP_INTERRUPT", "3", 1);
	snprintf(args, sizeof args, "sweep %s/i.sweep -j 2 -o %s/i-part.csv", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 130);
	unsetenv("COLLC_SWEEP_INTERRUPT");
	char want[512];
	snprintf(want, sizeof want, "points done, written to %s/i-part.csv; resume with: collc sweep "
	         "%s/i.sweep --resume %s/i-part.csv -o %s/i-part.csv\n", cli_tmpdir, cli_tmpdir, cli_tmpdir, cli_tmpdir);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
	long done = -1, total = -1;
	const char *st = strstr(err, "collc: sweep stopped: ");
	CU_ASSERT_PTR_NOT_NULL_FATAL(st);
	CU_ASSERT_EQUAL(sscanf(st, "collc: sweep stopped: %ld of %ld", &done, &total), 2);
	CU_ASSERT(done >= 3 && done < total && total == 144);
	free(out), free(err);
	snprintf(path, sizeof path, "%s/i-part.csv", cli_tmpdir);
	char *part = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(part);
	long rows = -1;
	for (char *l = part; *l; rows++) { /* every line (the header too) is one of the full run's */
		char *e = strchr(l, '\n');
		CU_ASSERT_PTR_NOT_NULL_FATAL(e);
		*e = 0;
		char line[600];
		snprintf(line, sizeof line, "%s%s\n", l == part ? "" : "\n", l);
		assert_named(strstr(full, line) != NULL || (l == part && strncmp(full, l, strlen(l)) == 0),
		             __LINE__, __FILE__, "a stopped run's row is the full run's: %s", l);
		l = e + 1;
	}
	CU_ASSERT_EQUAL(rows, done);
	free(part);
	/* resumed into the file it reads: the uninterrupted run's bytes */
	snprintf(args, sizeof args, "sweep %s/i.sweep -j 2 --resume %s/i-part.csv -o %s/i-part.csv",
	         cli_tmpdir, cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
	snprintf(want, sizeof want, "sweep: %ld of %ld points", total - done, total - done);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
	free(out), free(err);
	char *resumed = slurp(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(resumed);
	CU_ASSERT_STRING_EQUAL(resumed, full);
	free(resumed);
	/* another spec's rows are refused at their line; --json needs a whole run */
	write_in(cli_tmpdir, "j.sweep", "topology torus(4, 4), torus(2, 8)\ngroups 2, 4, 8, 16\n"
	                            "allreduce ring, halving_doubling\nallgather ring\n"
	                            "routing shortest_path, dor\nsizes 64KiB, 1MiB, 8MiB\n"
	                            "links private\nmode flow\n");
	snprintf(args, sizeof args, "sweep %s/j.sweep --resume %s/i-full.csv", cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 1);
	snprintf(want, sizeof want, "i-full.csv:4: a row that is not this spec's point: 2,");
	CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
	free(out), free(err);
	snprintf(args, sizeof args, "sweep %s/i.sweep --resume %s/i-full.csv --json %s/x.json",
	         cli_tmpdir, cli_tmpdir, cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 2);
	free(out), free(err), free(full);
}

/* The work (messages built and simulated) of every point of SPEC, unit by
 * unit as a worker runs them. */
static double *
sweep_work(Diag *dg, const char *spec, Spec *s, char **text)
{
	CU_ASSERT_EQUAL_FATAL(spec_read(dg, spec, s, text), 0);
	double *work = calloc((size_t)s->nunit * s->nsize, sizeof *work);
	for (int u = 0; u < s->nunit; u++) {
		int fds[2];
		CU_ASSERT_EQUAL_FATAL(pipe(fds), 0);
		CU_ASSERT_EQUAL(run_unit(dg, s, u, 0, 1, NULL, fds[1]), s->nsize);
		close(fds[1]);
		Record r;
		while (read(fds[0], &r, sizeof r) == (ssize_t)sizeof r) {
			CU_ASSERT(r.ok && r.work >= 1);
			work[r.point] = r.work;
		}
		close(fds[0]);
	}
	return work;
}

typedef struct Arrival {
	double t, weight;
} Arrival;

static int
by_time(const void *a, const void *b)
{
	double x = ((const Arrival *)a)->t, y = ((const Arrival *)b)->t;
	return (x > y) - (x < y);
}

/* The progress line's estimate against the time truly left, two workers
 * running the units in `order`'s order and each point taking its work: the
 * largest ratio, *lo the smallest, over the points back once a tenth of the
 * points are and while a tenth of the time is left. */
static double
eta_ratio(const Spec *s, const double *work, int (*order)(int, int), double *lo)
{
	long n = (long)s->nunit * s->nsize;
	Arrival *a = malloc((size_t)n * sizeof *a);
	double clock[2] = {0, 0}, wtotal = 0;
	for (int i = 0, k = 0; i < s->nunit; i++) {
		int u = order(s->nunit, i);
		for (int z = 0; z < s->nsize; z++, k++) {
			long p = (long)u * s->nsize + z;
			a[k] = (Arrival){clock[i % 2] += work[p], point_weight(s, p)};
			wtotal += a[k].weight;
		}
	}
	sort_n(a, (size_t)n, sizeof *a, by_time);
	double end = a[n - 1].t, hi = 0, wdone = 0;
	*lo = INFINITY;
	for (long k = 0; k < n; k++) {
		wdone += a[k].weight;
		double left = end - a[k].t, r = sweep_left(wdone, wtotal, a[k].t) / left;
		if (k + 1 < n / 10 || left < end / 10)
			continue;
		*lo = r < *lo ? r : *lo;
		hi = r > hi ? r : hi;
	}
	free(a);
	return hi;
}

static int
in_order(int nunit, int i)
{
	(void)nunit;
	return i;
}

/* The progress estimate's model on counted work, on the 64-chip evaluation
 * (points of 2 to 8064 messages): run in unit_at's order and weighed by
 * their ranks, the points done predict the points left, within 2x of the
 * time left; in the grid's order (small groups first, what the sweep did)
 * the estimate was optimistic many times over. */
void
test_sweep_estimate(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Spec *s = calloc(1, sizeof *s);
	char *text = NULL;
	double *work = sweep_work(dg, "examples/reproduce/torus64-eval.sweep", s, &text);
	double most = 0, least = INFINITY;
	for (long p = 0; p < (long)s->nunit * s->nsize; p++)
		most = work[p] > most ? work[p] : most, least = work[p] < least ? work[p] : least;
	CU_ASSERT(most > 1000 * least);
	double lo, hi = eta_ratio(s, work, unit_at, &lo);
	assert_named(lo >= 0.5 && hi <= 2, __LINE__, __FILE__,
	             "estimate / time left in unit_at's order: %.2f .. %.2f", lo, hi);
	double lo0, hi0 = eta_ratio(s, work, in_order, &lo0);
	assert_named(lo0 < 0.2, __LINE__, __FILE__, "in the grid's order: %.2f .. %.2f", lo0, hi0);
	/* unit_at visits every unit once, for any count */
	for (int n = 1; n <= s->nunit; n += n < 40 ? 1 : 97) {
		bool *seen = calloc((size_t)n, 1);
		for (int i = 0; i < n; i++)
			seen[unit_at(n, i)] = true;
		int all = 0;
		for (int u = 0; u < n; u++)
			all += seen[u];
		CU_ASSERT_EQUAL(all, n);
		free(seen);
	}
	free(work);
	spec_free(s, text);
}

/* The field `col` (0-based) of CSV row `l`, no quotes in the fields before. */
static double
csv_num(const char *l, int col)
{
	for (int i = 0; i < col; i++) {
		if (*l == '"')
			l = strchr(l + 1, '"') + 1;
		l = strchr(l, ',') + 1;
	}
	return atof(l);
}

/* Issue 36's "done when": one user-schedule file verifies and simulates on
 * 2x2 through 8x8 tori with -D (its rounds, messages and ranks the closed
 * form's: 4(n-1) rounds of n^2 messages), and a sweep runs it over sizes
 * and parameter values in one spec, each row the time `collc sim -D` gives. */
void
test_sweep_params(void)
{
	char args[1024], *out, *err, cwd[1024];
	for (int n = 2; n <= 8; n++) {
		snprintf(args, sizeof args, "check examples/user-torus-2d.coll -D n=%d", n);
		CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
		const char *l = strstr(out, "\nAR2D ");
		int ranks = 0, chunks = 0, rounds = 0, msgs = 0;
		CU_ASSERT_PTR_NOT_NULL_FATAL(l);
		CU_ASSERT_EQUAL(sscanf(l, " AR2D allreduce schedule %d %d %d %d", &ranks, &chunks, &rounds,
		                       &msgs), 4);
		assert_named(ranks == n * n && chunks == n * n && rounds == 4 * (n - 1) &&
		             msgs == 4 * (n - 1) * n * n, __LINE__, __FILE__, "n = %d: %s", n, out);
		free(out), free(err);
		snprintf(args, sizeof args, "sim examples/user-torus-2d.coll -D n=%d --collective AR2D "
		         "--mode flow", n);
		CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "\nAR2D        schedule   1048576  262144  float  sum"));
		free(out), free(err);
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
	char text[2048];
	snprintf(text, sizeof text, "file %s/examples/user-torus-2d.coll\ncollectives AR2D\n"
	         "param n = 2, 8\nsizes 64KiB, 1MiB\nmode flow\n", cwd);
	write_in(cli_tmpdir, "p.sweep", text);
	snprintf(args, sizeof args, "sweep %s/p.sweep --jobs 2", cli_tmpdir);
	CU_ASSERT_EQUAL_FATAL(cli_collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, ",name,params,algorithm,"));
	const char *row = strchr(out, '\n');
	int rows = 0;
	for (int n = 2; n <= 8; n += 6)
		for (int k = 0; k < 2; k++, rows++) {
			CU_ASSERT_PTR_NOT_NULL_FATAL(row);
			row++;
			char tag[32], *sim, *serr;
			snprintf(tag, sizeof tag, ",AR2D,n=%d,", n);
			CU_ASSERT_PTR_NOT_NULL(strstr(row, tag));
			CU_ASSERT_EQUAL(csv_num(row, 2), n * n); /* ranks */
			snprintf(args, sizeof args, "sim examples/user-torus-2d.coll -D n=%d --collective "
			         "AR2D --sizes %s --mode flow --csv", n, k ? "1MiB" : "64KiB");
			CU_ASSERT_EQUAL(cli_collc(args, &sim, &serr), 0);
			/* sim's CSV: collective, kind, algorithm, size, count, type, redop, time_us, ... */
			const char *srow = strchr(sim, '\n');
			CU_ASSERT_PTR_NOT_NULL_FATAL(srow);
			assert_named(fabs(csv_num(srow + 1, 7) - csv_num(row, 17)) < 1e-3, __LINE__, __FILE__,
			             "n = %d: sweep's time %s, sim's %s", n, row, srow + 1);
			free(sim), free(serr);
			row = strchr(row, '\n');
		}
	CU_ASSERT_EQUAL(rows, 4);
	free(out), free(err);
	/* a value the file cannot take: an error naming it, and nothing written */
	snprintf(text, sizeof text, "file %s/examples/user-torus-2d.coll\nparam n = 3, 1\n"
	         "sizes 1MiB\n", cwd);
	write_in(cli_tmpdir, "p1.sweep", text);
	snprintf(args, sizeof args, "sweep %s/p1.sweep --jobs 1", cli_tmpdir);
	CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "n=1, 1 MiB) cannot be simulated: each size of torus must "
	                                   "be at least 2, got 1"));
	CU_ASSERT_STRING_EQUAL(out, "");
	free(out), free(err);
}

/* A spec's topology, and a swept file's, may be nccl_topo("F.xml"): the
 * file read relative to the spec's (or the .coll file's) folder, as check
 * reads it; an error in the XML blames the spec's string and names its XML
 * line. (Sweep checked and built files without reading their boxes: every
 * point failed with "the file was not read".) */
void
test_sweep_nccl_topo(void)
{
	const char *ok[] = {"h100-box.sweep", "h100-box-file.sweep"};
	for (int i = 0; i < 2; i++) {
		char args[256], *out, *err;
		snprintf(args, sizeof args, "sweep tests/fixtures/nccl-topo/%s --jobs 1", ok[i]);
		CU_ASSERT_EQUAL(cli_collc(args, &out, &err), 0);
		const char *row = strchr(out, '\n');
		assert_named(row && strstr(row, ",ok,") && strstr(row, ",1048576,262144,float,sum,"),
		             __LINE__, __FILE__, "%s: %s%s", ok[i], out, err);
		free(out), free(err);
	}
	char *out, *err;
	CU_ASSERT_EQUAL(cli_collc("sweep tests/fixtures/nccl-topo/bad-nvlink-target.sweep --jobs 1",
	                          &out, &err), 1);
	assert_named(strstr(err, "bad-nvlink-target.sweep:2:21: error: point 0 (allreduce ring on "
	                         "nccl_topo(\"bad-nvlink-target.xml\"), ranks all, 1 MiB) cannot be "
	                         "simulated: tests/fixtures/nccl-topo/bad-nvlink-target.xml:5:9: "
	                         "<nvlink target='0000:09:00.0'>: no GPU of this file has that busid") != NULL,
	             __LINE__, __FILE__, "%s", err);
	CU_ASSERT_STRING_EQUAL(out, "");
	free(out), free(err);
}
