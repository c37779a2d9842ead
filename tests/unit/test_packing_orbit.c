/* test_packing_orbit.c: packings by orbit representatives (ir/packing_orbit.c,
 * docs/algorithms.md "Orbit representatives"). On generated grouped graphs
 * of at most 32 ranks (rails and xgmi_rails boxes, tori with translations
 * and with a reflection (a rank's stabiliser of order 2), rings, spine-leaf,
 * random circulant graphs with and without switches, random bandwidths) the
 * group's tables are built here from group_node and group_link, the
 * allgather and reduce-scatter packed by representatives, and every mapped
 * packing checked as test_packing checks a whole one: k copies per root,
 * each tree spanning along chained routes of real links in the direction
 * data moves, and every link's load at most its bandwidth times the cut
 * bound's time (load x rate.num <= k x bw x rate.den, exact). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir.h"
#include "packing.h"
#include "tests.h"

__extension__ typedef __int128 Wide;

typedef struct Grouped {
	Checked c;
	Prog p;
	const Topo *t;
	const Group *g;
	CutLink *link;
	CutNet n;
	int *node, *lnk, *rank_node;
	PackGroup pg;
} Grouped;

/* Lowers text (a topology T, a group G on it and a collective X) and builds
 * the plain tables; false when it does not build. */
static bool
grouped(Diag *dg, const char *text, Grouped *x)
{
	memset(x, 0, sizeof *x);
	check_text(dg, &x->c, "g.coll", text, strlen(text));
	if (x->c.errors || lower(dg, x->c.file, &x->p) != 0 || x->p.nsched != 1 ||
	    !x->p.sched[0]->pack_group)
		return false;
	const Sched *s = x->p.sched[0];
	x->t = s->topo;
	x->g = s->pack_group;
	const Topo *t = x->t;
	x->link = xmalloc((size_t)t->nlink * sizeof *x->link);
	for (int l = 0; l < t->nlink; l++)
		x->link[l] = (CutLink){t->link[l].src, t->link[l].dst, (int64_t)t->link[l].bandwidth};
	x->n = (CutNet){.nnode = t->nnode, .nlink = t->nlink, .link = x->link, .nrank = s->nrank,
	                .rank_node = s->rank_node};
	x->node = xmalloc((size_t)x->g->order * (size_t)t->nnode * sizeof *x->node);
	x->lnk = xmalloc((size_t)x->g->order * (size_t)t->nlink * sizeof *x->lnk);
	for (int e = 0; e < x->g->order; e++) {
		for (int v = 0; v < t->nnode; v++)
			x->node[(size_t)e * t->nnode + v] = group_node(x->g, e, v);
		for (int l = 0; l < t->nlink; l++)
			x->lnk[(size_t)e * t->nlink + l] = group_link(x->g, e, l);
	}
	x->pg = (PackGroup){x->g->order, x->node, x->lnk};
	return true;
}

static void
grouped_free(Grouped *x)
{
	free(x->link), free(x->node), free(x->lnk);
	prog_free(&x->p);
	checked_free(&x->c);
}

/* The faults of a mapped packing on the real links (as test_packing's
 * coll_faults): copies per root, spanning along chained routes through
 * non-ranks only, loads within bw x block / rate. */
static int
faults(const CutNet *n, const CollPacking *cp, int *over)
{
	int bad = 0, nr = n->nrank;
	int64_t *per_root = calloc((size_t)nr, sizeof *per_root);
	int64_t *load = calloc((size_t)n->nlink, sizeof *load);
	int *rank_of = malloc((size_t)n->nnode * sizeof *rank_of);
	for (int v = 0; v < n->nnode; v++)
		rank_of[v] = -1;
	for (int r = 0; r < nr; r++)
		rank_of[n->rank_node[r]] = r;
	for (int t = 0; t < cp->pk.ntree; t++) {
		const PackTree *tr = &cp->pk.tree[t];
		per_root[tr->root] += tr->mult;
		bad += tr->mult <= 0 || tr->parent[tr->root] != -1;
		for (int x = 0; x < nr; x++) {
			int p = tr->parent[x];
			if (x == tr->root)
				continue;
			bad += p < 0 || tr->depth[x] != tr->depth[p] + 1 || tr->nhop[x] < 1 || tr->depth[x] > nr;
			if (p < 0)
				continue;
			int at = n->rank_node[cp->inward ? x : p];
			for (int h = 0; h < tr->nhop[x]; h++) {
				int l = tr->route[x][h];
				bad += n->link[l].src != at || (h > 0 && rank_of[at] >= 0);
				at = n->link[l].dst;
				load[l] += tr->mult;
			}
			bad += at != n->rank_node[cp->inward ? p : x];
		}
	}
	for (int i = 0; i < nr; i++)
		bad += per_root[i] != cp->k;
	*over = 0;
	for (int l = 0; l < n->nlink; l++)
		*over += (Wide)load[l] * cp->rate.num > (Wide)cp->k * n->link[l].bw * cp->rate.den;
	bad += *over;
	free(per_root), free(load), free(rank_of);
	return bad;
}

static uint64_t
next_rand(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

/* A circulant graph on n ranks: i -> i + s for each s of a random set, the
 * bandwidth a random multiple of 12.5 Gb/s per s; with switches, rank i
 * reaches its own switch i, which carries the links instead. The group:
 * the rotation i -> i + 1 (of the switches too). */
static void
circulant(char *buf, size_t cap, uint64_t *seed, int n, bool switches)
{
	size_t k = 0;
	int nn = switches ? 2 * n : n;
	k += (size_t)snprintf(buf + k, cap - k, "topology T = graph {\n nodes %d;\n", nn);
	if (switches)
		k += (size_t)snprintf(buf + k, cap - k, " switches %d..%d;\n", n, nn - 1);
	int base = switches ? n : 0, ns = 0;
	for (int s = 1; s < n; s++) {
		if (s > 1 && next_rand(seed) % 3 != 0)
			continue; /* s = 1 always: connected */
		int gbps = 100 * (1 + (int)(next_rand(seed) % 4));
		ns++;
		for (int i = 0; i < n; i++)
			k += (size_t)snprintf(buf + k, cap - k, " link %d -> %d { link_bandwidth = %d Gbps; }\n",
			                      base + i, base + (i + s) % n, gbps);
	}
	for (int i = 0; switches && i < n; i++)
		k += (size_t)snprintf(buf + k, cap - k, " link %d <-> %d { link_bandwidth = 800 Gbps; }\n", i,
		                      n + i);
	k += (size_t)snprintf(buf + k, cap - k, "}\ngroup G on T { map ");
	for (int v = 0; v < nn; v++) {
		int w = v < n ? (v + 1) % n : n + (v - n + 1) % n;
		k += (size_t)snprintf(buf + k, cap - k, "%s%d -> %d", v ? ", " : "", v, w);
	}
	snprintf(buf + k, cap - k, "; }\ncollective allgather X on T { algorithm packing; }\n");
	(void)ns;
}

/* The grouped topologies, generated: up to 32 ranks. */
static int
grouped_texts(char **out, int max)
{
	int n = 0;
	char buf[8192];
	const char *net = "network { link_bandwidth = 3600 Gbps; }\n";
	for (int boxes = 1; boxes <= 4; boxes++)
		for (int gpus = 2; gpus <= 8; gpus++) {
			if (boxes * gpus > 32 || (gpus > 4 && gpus != 8) || n + 2 > max)
				continue;
			for (int x = 0; x < 2; x++) {
				snprintf(buf, sizeof buf, "%stopology T = %s(boxes %d, gpus %d, nic_gbps %d);\n"
				         "group G = translations(T);\n"
				         "collective allgather X on T { algorithm packing; }\n",
				         net, x ? "xgmi_rails" : "rails", boxes, gpus, 100 * (1 + (boxes + gpus) % 4));
				out[n++] = strdup(buf);
			}
		}
	static const char *const fixed[] = {
		"topology T = torus(3, 3);\ngroup G = translations(T);\n",
		"topology T = torus(4, 4);\ngroup G = translations(T);\n",
		"topology T = torus(3, 5);\ngroup G = translations(T);\n",
		"topology T = torus(4, 4);\ngroup G on T { translate; map (x, y) -> (-x, -y); }\n",
		"topology T = torus(2, 2, 2);\ngroup G = translations(T);\n",
		"topology T = ring(7);\ngroup G = translations(T);\n",
		"topology T = ring(12);\ngroup G on T { translate; map x -> -x; }\n",
		"topology T = spine_leaf(spines 2, leaves 4, hosts 4);\ngroup G = translations(T);\n",
		"topology T = spine_leaf(spines 4, leaves 4, hosts 8);\ngroup G = translations(T);\n",
	};
	for (size_t i = 0; i < countof(fixed) && n < max; i++) {
		snprintf(buf, sizeof buf, "%s%scollective allgather X on T { algorithm packing; }\n", net,
		         fixed[i]);
		out[n++] = strdup(buf);
	}
	uint64_t seed = 33;
	for (int i = 0; i < 16 && n < max; i++) {
		circulant(buf, sizeof buf, &seed, 3 + (int)(next_rand(&seed) % 14), i % 2);
		out[n++] = strdup(buf);
	}
	return n;
}

/* Allgather and reduce-scatter by representatives on every generated
 * graph: every mapped packing within the bound's loads; every graph of the
 * named forms packs by representatives (the greedy growth finds trees on
 * each); a circulant it misses falls back to the whole packing, which
 * builds and verifies (57 graphs, 114 packings: 112 by representatives;
 * Z15 with steps 1 and 3, whose budgets leave no slack, falls back). */
static void
test_generated(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	char *text[64];
	int ntext = grouped_texts(text, 64), cases = 0, packed = 0, bad = 0, stabilised = 0, missed = 0;
	for (int i = 0; i < ntext; i++) {
		Grouped x;
		bool ok = grouped(dg, text[i], &x), graph = strstr(text[i], "graph {") != NULL;
		assert_named(ok, __LINE__, __FILE__, "%s: %s", text[i], x.c.diag);
		for (int k = 0; ok && k < 2; k++, cases++) {
			CollKind kind = k ? CK_REDUCE_SCATTER : CK_ALLGATHER;
			Arena a = {0};
			CollPacking cp;
			PackStatus st = pack_collective_orbits(&a, &x.n, kind, &x.pg, &cp);
			assert_named(st == PACK_OK || (graph && st == PACK_NO_ORBITS), __LINE__, __FILE__,
			             "%.120s %s: %s", text[i], coll_kind_name[kind], pack_status_text[st]);
			if (st == PACK_OK) {
				int over, f = faults(&x.n, &cp, &over);
				assert_named(f == 0, __LINE__, __FILE__, "%.120s %s: %d faults", text[i],
				             coll_kind_name[kind], f);
				bad += f;
				packed++;
				stabilised += cp.k % 2 == 0 && x.g->order > x.n.nrank;
			} else if (k == 0) { /* the algorithm packs every root instead */
				Checked c;
				check_built(dg, &c, "g.coll", text[i], strlen(text[i]));
				assert_named(c.errors == 0, __LINE__, __FILE__, "%.120s: %s", text[i], c.diag);
				missed++;
				checked_free(&c);
			}
			arena_free(&a);
		}
		grouped_free(&x);
		free(text[i]);
		diag_reset(dg);
	}
	CU_ASSERT(cases >= 60);
	CU_ASSERT(packed >= cases - 2);
	CU_ASSERT(missed <= 1);
	CU_ASSERT(stabilised >= 2);
	CU_ASSERT_EQUAL(bad, 0);
}

/* The check fails a load over capacity, and a table that is not an
 * automorphism is refused rather than mapped. */
static void
test_checks_fail(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	const char *text = "network { link_bandwidth = 3600 Gbps; }\n"
	                   "topology T = rails(boxes 2, gpus 4, nic_gbps 400);\n"
	                   "group G = translations(T);\n"
	                   "collective allgather X on T { algorithm packing; }\n";
	Grouped x;
	CU_ASSERT_FATAL(grouped(dg, text, &x));
	Arena a = {0};
	CollPacking cp;
	CU_ASSERT_EQUAL_FATAL(pack_collective_orbits(&a, &x.n, CK_ALLGATHER, &x.pg, &cp), PACK_OK);
	int over;
	CU_ASSERT_EQUAL(faults(&x.n, &cp, &over), 0);
	CU_ASSERT_EQUAL(over, 0);
	cp.pk.tree[0].mult += cp.k; /* more copies than the links hold */
	CU_ASSERT(faults(&x.n, &cp, &over) > 0);
	CU_ASSERT(over > 0);
	cp.pk.tree[0].mult -= cp.k;
	cp.rate.num += cp.rate.num / 50; /* the same loads at a rate 2 % past the bound */
	CU_ASSERT(faults(&x.n, &cp, &over) > 0);
	CU_ASSERT(over > 0);
	arena_free(&a);
	/* element 1 sends link 0 where it does not go */
	int keep = x.lnk[x.n.nlink];
	x.lnk[x.n.nlink] = x.lnk[x.n.nlink + 1];
	CU_ASSERT_EQUAL(pack_collective_orbits(&a, &x.n, CK_ALLGATHER, &x.pg, &cp), PACK_NOT_GROUP);
	CU_ASSERT_EQUAL(cp.pk.ntree, 0);
	x.lnk[x.n.nlink] = keep;
	arena_free(&a);
	grouped_free(&x);
}

/* Whether two schedules send the same messages: rounds, ranks, operation,
 * instance, chunks and the links of each route. */
static bool
same_messages(const Sched *a, const Sched *b)
{
	if (a->nmsg != b->nmsg || a->nround != b->nround || a->nchunk != b->nchunk)
		return false;
	for (int i = 0; i < a->nmsg; i++) {
		const Msg *x = &a->msg[i], *y = &b->msg[i];
		if (x->round != y->round || x->src != y->src || x->dst != y->dst || x->op != y->op ||
		    x->instance != y->instance || x->n != y->n ||
		    memcmp(a->chunks + x->first, b->chunks + y->first, (size_t)x->n * sizeof *a->chunks))
			return false;
		int la = a->route_off[x->route + 1] - a->route_off[x->route];
		int lb = b->route_off[y->route + 1] - b->route_off[y->route];
		if (la != lb || memcmp(a->route_link + a->route_off[x->route],
		                       b->route_link + b->route_off[y->route], (size_t)la * sizeof(int)))
			return false;
	}
	return true;
}

/* Every kind packing builds, on a topology T. */
static const char *const pack_kinds[] = {
	"collective allgather X on T { algorithm packing; }",
	"collective reduce_scatter X on T { algorithm packing; }",
	"collective allreduce X on T { algorithm packing; }",
	"collective broadcast X on T { algorithm packing; root 3; }",
};

/* The algorithm: a file with a group packs by it (the choice says so),
 * builds and verifies every kind. On a cluster form with translations
 * (rails; xgmi_rails where they keep the xGMI links) a file without a group
 * packs by the form's own (lower.c's form_group), and the schedule is the
 * one the file with `group G = translations(T);` written gets; where they
 * are no group (xGMI links that differ, leaf_spine_boxes) every root is
 * packed, as before. */
static void
test_algorithm(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char *const topo[] = {
		"rails(boxes 3, gpus 4, nic_gbps 400)",
		"xgmi_rails(boxes 2, gpus 4, nic_gbps 400, links 2, 2, 2, 2, 2, 2)",
		/* no translations: xGMI links that differ; a form without them */
		"xgmi_rails(boxes 2, gpus 4, nic_gbps 400, links 2, 1, 1, 1, 1, 2)",
		"leaf_spine_boxes(boxes 4, gpus 2, nic_gbps 400, spines 1)",
	};
	for (size_t f = 0; f < countof(topo); f++) {
		bool form = f < 2; /* translations(T) is a group of T */
		for (size_t k = 0; k < countof(pack_kinds); k++) {
			Checked c[2];
			memset(c, 0, sizeof c);
			Prog p[2];
			memset(p, 0, sizeof p);
			bool ok = true;
			for (int with = 0; with < 1 + form; with++) {
				char text[512];
				snprintf(text, sizeof text, "network { link_bandwidth = 3600 Gbps; }\n"
				         "topology T = %s;\n%s%s\n", topo[f],
				         with ? "group G = translations(T);\n" : "", pack_kinds[k]);
				check_built(dg, &c[with], "t.coll", text, strlen(text));
				assert_named(c[with].errors == 0, __LINE__, __FILE__, "%s: %s", text, c[with].diag);
				ok &= c[with].errors == 0 && lower(dg, c[with].file, &p[with]) == 0 &&
				      p[with].nsched == 1;
				assert_named(ok, __LINE__, __FILE__, "%s: does not lower", text);
				if (!ok)
					break;
				const char *choice = p[with].sched[0]->choice;
				bool mapped = choice && strstr(choice, with ? "mapped by group G" :
				                                              "mapped by group translations(T)");
				assert_named(mapped == (form && k < 3), __LINE__, __FILE__, "%s: %s", text,
				             choice ? choice : "(no choice)");
			}
			if (ok && form)
				assert_named(same_messages(p[0].sched[0], p[1].sched[0]), __LINE__, __FILE__,
				             "%s on %s: the form's translations pack otherwise than the group "
				             "written", pack_kinds[k], topo[f]);
			for (int with = 0; with < 2; with++) {
				prog_free(&p[with]);
				checked_free(&c[with]);
			}
			diag_reset(dg);
		}
	}
}

/* MSCCL-deployable segments: on 2 x 8 GPUs (16 blocks, 2 copies per
 * root) every kind's chunk count is a power of two at every size from 4 KiB
 * to 1 GiB, so each size a power of two cuts into whole chunks (tune's
 * check, tune_prog.c); at 1 GiB the segments are more than one. */
static void
test_deployable_segments(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	for (size_t k = 0; k < countof(pack_kinds); k++)
		for (int64_t size = 4096; size <= (int64_t)1 << 30; size *= 8) {
			char text[512];
			snprintf(text, sizeof text, "network { link_bandwidth = 3600 Gbps; link_latency = 500 ns; }\n"
			         "topology T = rails(boxes 2, gpus 8, nic_gbps 400);\n%s\n", pack_kinds[k]);
			Checked c;
			check_built(dg, &c, "t.coll", text, strlen(text));
			Prog p;
			memset(&p, 0, sizeof p);
			p.auto_size = (double)size;
			bool ok = c.errors == 0 && lower(dg, c.file, &p) == 0 && p.nsched == 1;
			assert_named(ok, __LINE__, __FILE__, "%s: does not lower: %s", pack_kinds[k], c.diag);
			if (ok) {
				const Sched *s = p.sched[0];
				int n = s->nchunk;
				assert_named(n > 0 && (n & (n - 1)) == 0 && size % n == 0, __LINE__, __FILE__,
				             "%s at %lld B: %d chunks (%s)", pack_kinds[k], (long long)size, n, s->choice);
				if (size == (int64_t)1 << 30)
					assert_named(!strstr(s->choice, "segments 1 "), __LINE__, __FILE__, "%s: %s",
					             pack_kinds[k], s->choice);
			}
			prog_free(&p);
			checked_free(&c);
			diag_reset(dg);
		}
}

/* A packing's messages carry an instance per tree copy (47 on 3 boxes of
 * 8): the IR text it writes reads back and checks (the reader refused
 * instances over 15, Bucket's limit, before). */
static void
test_irtext_instances(void)
{
	char dir[] = "/tmp/collc-pack-XXXXXX";
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	write_in(dir, "r3.coll", "topology C = rails(boxes 3, gpus 8, nic_gbps 400);\n"
	                         "collective allgather AG on C { algorithm packing; }\n");
	char cmd[1024], path[256];
	snprintf(cmd, sizeof cmd, "%s build %s/r3.coll --target ir -o %s/r3.ir && %s check %s/r3.ir "
	         ">/dev/null 2>&1", COLLC_BIN, dir, dir, COLLC_BIN, dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
	snprintf(path, sizeof path, "%s/r3.ir", dir);
	size_t len;
	char *ir = slurp(path, &len);
	CU_ASSERT(ir && strstr(ir, " instance 16\n"));
	free(ir);
	remove(path);
	snprintf(path, sizeof path, "%s/r3.coll", dir);
	remove(path);
	rmdir(dir);
}

CU_TestInfo packing_orbit_tests[] = {
	{"generated grouped graphs: mapped trees span, loads fit x*", test_generated},
	{"the checks catch an overload; a non-automorphism is refused", test_checks_fail},
	{"packs by the file's group, else by a cluster form's translations, alike", test_algorithm},
	{"segments a power of two: whole chunks at every power-of-two size", test_deployable_segments},
	{"an instance per tree copy: the IR text reads back", test_irtext_instances},
	CU_TEST_INFO_NULL,
};
