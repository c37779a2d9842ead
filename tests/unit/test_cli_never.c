/* test_cli_never.c: issue 33's "on tori, meshes and HyperX `algorithm auto`
 * and `collc tune`, with nothing but the topology in the file, are never
 * below SP's or the library's best", at several sizes (docs/algorithms.md,
 * "auto"). test_model's never_below checks auto at 1 GiB against the
 * library as auto builds it; this one checks `collc sim`'s auto row and
 * `collc tune`'s choice, each run on a file holding the topology alone, at
 * 64 KiB, 4 MiB and 256 MiB in flow mode, against every library algorithm
 * a user can name on the topology and SP written by hand, all in one file
 * with SP's group and tree declared (which `packing` then packs by), each
 * built for the size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "test_cli.h"
#include "tests.h"

enum { NV_KINDS = 3, NV_SIZES = 3 };
static const char *const nv_kind[NV_KINDS] = {"allreduce", "reduce_scatter", "allgather"};
static const char *const nv_size_arg = "64KiB,4MiB,256MiB";
static const double nv_size[NV_SIZES] = {65536, 4194304, 268435456};

typedef struct NvShape {
	const char *topo, *sp; /* sp: SP's group G and tree B */
} NvShape;

typedef char NvName[96];

/* The file with the shape's topology, SP's declarations and a collective
 * X of kind k by algorithm alg (or SP's symmetric); NULL alg: nothing. */
static int
nv_text(const NvShape *sh, int k, const char *alg, char *buf, size_t cap)
{
	int len = snprintf(buf, cap, "topology T = %s;\n%s", sh->topo, sh->sp ? sh->sp : "");
	if (alg)
		len += snprintf(buf + len, cap - (size_t)len, "collective %s X on T { algorithm %s; }\n",
		                nv_kind[k], alg);
	return len;
}

/* The one schedule of the file text built for `size`, simulated in flow
 * mode; its time, or -1 where the algorithm does not build there. */
static double
nv_time(Diag *dg, const char *text, double size)
{
	Checked c;
	check_text(dg, &c, "never.coll", text, strlen(text));
	double t = -1;
	Prog p = {.auto_size = size};
	diag_mute(dg, true);
	if (c.errors == 0 && lower_verified(dg, c.file, &p, NULL, false, false) == 0 && p.nsched == 1) {
		Arena a = {0};
		SimOpts o = {.mode = SIM_FLOW, .sync = SIM_ROUNDS};
		Simulated x;
		if (simulate_one(dg, &a, p.sched[0], size, &o, &x))
			t = x.r.time_s;
		arena_free(&a);
	}
	diag_mute(dg, false);
	prog_free(&p);
	diag_reset(dg);
	checked_free(&c);
	return t;
}

/* floor[k][z]: the least time of SP and of every library algorithm that
 * builds on the shape, each in a file with SP's group and tree. */
static void
nv_floor(Diag *dg, const NvShape *sh, TopoKind tk, double floor[NV_KINDS][NV_SIZES],
         NvName name[NV_KINDS][NV_SIZES])
{
	char buf[2048];
	for (int k = 0; k < NV_KINDS; k++)
		for (int a = -1; a < NALG; a++) {
			CollKind ck = k == 0 ? CK_ALLREDUCE : k == 1 ? CK_REDUCE_SCATTER : CK_ALLGATHER;
			const char *alg = a < 0 ? "symmetric(trees B, group G)" : alg_forms[a].name;
			if ((a < 0 && !sh->sp) || (a >= 0 && (a == ALG_symmetric || !alg_applies(a, ck, tk))))
				continue;
			nv_text(sh, k, alg, buf, sizeof buf);
			for (int z = 0; z < NV_SIZES; z++) {
				double t = nv_time(dg, buf, nv_size[z]);
				if (t >= 0 && t < floor[k][z]) { /* < 0: refused there */
					floor[k][z] = t;
					snprintf(name[k][z], sizeof name[k][z], "%s", a < 0 ? "SP" : alg);
				}
			}
		}
}

/* The time (us) in column `col` of the CSV row of collective `coll` at
 * `size`, from collc's output; -1 if none. */
static double
nv_csv(const char *out, const char *coll, double size, int size_col, int time_col, NvName what,
       int what_col)
{
	char *copy = strdup(out ? out : ""), *save = NULL;
	double t = -1;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[32];
		int n = csv_split(line, f, 32);
		if (n > time_col && n > size_col && n > what_col && strcmp(f[0], coll) == 0 &&
		    strtod(f[size_col], NULL) == size) {
			t = strtod(f[time_col], NULL) * 1e-6;
			snprintf(what, sizeof(NvName), "%s", f[what_col]);
		}
	}
	free(copy);
	return t;
}

/* auto's rows (collc sim) and tune's choices on the topology alone, at
 * most the floor at every kind and size; the pairs checked. */
static int
nv_check(Diag *dg, const NvShape *sh, TopoKind tk)
{
	double floor[NV_KINDS][NV_SIZES];
	NvName fname[NV_KINDS][NV_SIZES];
	for (int k = 0; k < NV_KINDS; k++)
		for (int z = 0; z < NV_SIZES; z++)
			floor[k][z] = 1e30, fname[k][z][0] = 0;
	nv_floor(dg, sh, tk, floor, fname);
	char buf[1024];
	int len = snprintf(buf, sizeof buf, "topology T = %s;\n", sh->topo);
	for (int k = 0; k < NV_KINDS; k++)
		len += snprintf(buf + len, sizeof buf - (size_t)len,
		                "collective %s A%d on T { algorithm auto; }\n", nv_kind[k], k);
	write_in(cli_tmpdir, "never.coll", buf);
	char args[512], *sim, *tune, *err;
	snprintf(args, sizeof args, "sim %s/never.coll --mode flow --sizes %s --csv", cli_tmpdir,
	         nv_size_arg);
	CU_ASSERT_EQUAL_FATAL(cli_collc(args, &sim, &err), 0);
	free(err);
	snprintf(args, sizeof args, "tune %s/never.coll --mode flow --sizes %s --csv", cli_tmpdir,
	         nv_size_arg);
	CU_ASSERT_EQUAL_FATAL(cli_collc(args, &tune, &err), 0);
	free(err);
	int checked = 0;
	for (int k = 0; k < NV_KINDS; k++)
		for (int z = 0; z < NV_SIZES; z++) {
			char coll[8];
			snprintf(coll, sizeof coll, "A%d", k);
			NvName a, t;
			/* sim: collective,kind,algorithm,size,...,time_us (8th);
			 * tune: collective,kind,size,choice,time_us */
			double ta = nv_csv(sim, coll, nv_size[z], 3, 7, a, 2);
			double tt = nv_csv(tune, coll, nv_size[z], 2, 4, t, 3);
			/* the CSVs print times to the hundredth of a ns */
			assert_named(ta > 0 && ta <= floor[k][z] * (1 + 1e-6), __LINE__, __FILE__,
			             "%s %s at %.0f B: auto is %s, %.3f us; %s takes %.3f us", sh->topo, nv_kind[k],
			             nv_size[z], a, ta * 1e6, fname[k][z], floor[k][z] * 1e6);
			assert_named(tt > 0 && tt <= floor[k][z] * (1 + 1e-6), __LINE__, __FILE__,
			             "%s %s at %.0f B: tune chooses %s, %.3f us; %s takes %.3f us", sh->topo,
			             nv_kind[k], nv_size[z], t, tt * 1e6, fname[k][z], floor[k][z] * 1e6);
			checked += ta > 0 && tt > 0;
		}
	free(sim), free(tune);
	return checked;
}

void
test_never_below_sizes(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* sides that differ: the turns are two signs (x -> -x, y -> -y) */
	static const char *const signs = "group G on T { translate; map (x, y) -> (-x, y); "
	                                 "map (x, y) -> (x, -y); }\ntree B = bfs(T, root (0, 0));\n";
	static const char *const mesh_group = "group G = automorphisms(T);\n"
	                                      "tree B = bfs(T, root (0, 0));\n";
	static const struct {
		NvShape sh;
		TopoKind tk;
	} shape[] = {
		{{"torus(4, 3)", signs}, TK_TORUS},
		{{"hyperx(4, 3)", signs}, TK_HYPERX},
		/* a mesh's: `packing` then packs by its reflections (and turns) */
		{{"mesh(4, 3)", mesh_group}, TK_MESH},
		{{"mesh(4, 4)", mesh_group}, TK_MESH},
		{{"torus(3, 3)", "group G on T { translate; map (x, y) -> (y, x); map (x, y) -> (-x, y); }\n"
		                 "tree B = bfs(T, root (0, 0));\n"}, TK_TORUS},
	};
	int checked = 0;
	for (size_t i = 0; i < countof(shape); i++)
		checked += nv_check(dg, &shape[i].sh, shape[i].tk);
	CU_ASSERT_EQUAL(checked, (int)countof(shape) * NV_KINDS * NV_SIZES);
}
