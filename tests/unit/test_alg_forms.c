/*
 * test_alg_forms.c: every algorithm of the registry (base/algorithms.def),
 * for every kind it implements, on a small topology of every form it runs
 * on (helpers.c's topo_form_decl), through the driver's path: checked, lowered
 * and verified. A generator that builds a wrong schedule fails here in the
 * quick tier; an instance a generator refuses must be one listed below with
 * its message. And `auto`'s note on a candidate that fails verification.
 */
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "ir.h"
#include "tests.h"

#define ALL_FORMS ((1u << NTOPOKIND) - 1)
#define ONE_DIM (TOPO(TK_RING) | TOPO(TK_FULL) | TOPO(TK_OPTICAL_RING) | TOPO(TK_GRAPH))

/* What an algorithm needs on a form beyond `algorithm NAME;`: declarations
 * before the collective, its call, lines in the collective. The first entry
 * matching the algorithm, kind and form applies. */
static const struct {
	const char *alg;
	unsigned kinds, forms;
	const char *decls, *call, *lines;
} needs[] = {
	{"symmetric", ~0u, ALL_FORMS, "tree B = bfs(T, root 0);\ngroup G = automorphisms(T);\n",
	 "symmetric(trees B, group G)", ""},
	{"pipelined_trees", KIND(CK_ALLREDUCE), ALL_FORMS, "trees D = disjoint(T, roots 0, 1);\n",
	 "pipelined_trees(trees D)", ""},
	{"trivance", ~0u, ALL_FORMS, "", "trivance", "    ranks 0..2;\n"}, /* 3^t ranks */
	{"tto", ~0u, ALL_FORMS, "", "tto", "    ranks 0..11, 13..15;\n"}, /* its trees miss (3, 0) */
	{"hierarchical", ~0u, ONE_DIM, "", "hierarchical(ring)", ""},
	{"hierarchical", ~0u, TOPO(TK_TORUS_BOXES), "", "hierarchical(ring, ring, ring)", ""}, /* 2 x 2 */
	{"hierarchical", ~0u, ALL_FORMS, "", "hierarchical(ring, ring)", ""},
};

/* The instances a generator or the lowering refuses, with why: each must
 * refuse with this message, and each entry must be met. */
static const struct {
	const char *alg;
	unsigned kinds, forms;
	const char *message;
} refusals[] = {
	{"pipelined_trees", KIND(CK_ALLREDUCE), TOPO(TK_SPINE_LEAF) | TOPO(TK_RAILS) | TOPO(TK_XGMI_RAILS) |
	     TOPO(TK_LEAF_SPINE_BOXES) | TOPO(TK_TORUS_BOXES),
	 "disjoint trees span every node; 'T' has switches"},
	{"pipelined_trees", KIND(CK_REDUCE_SCATTER) | KIND(CK_ALLGATHER), TOPO(TK_MESH),
	 "no 4 link-disjoint spanning trees on 'T'"},
	{"pipelined_trees", KIND(CK_REDUCE_SCATTER) | KIND(CK_ALLGATHER),
	 ALL_FORMS & ~TOPO(TK_MESH) & ~TOPO(TK_SUPERMESH),
	 "pipelined_trees without trees builds the SuperMesh root sets of a square mesh"},
	/* the forms' declarations set no switch_reduction: the nvls suite builds it with one */
	{"nccl_nvls", KIND(CK_ALLREDUCE), TOPO(TK_RAILS) | TOPO(TK_LEAF_SPINE_BOXES) | TOPO(TK_GRAPH),
	 "nccl_nvls needs every rank of 'X' on a switch that reduces"},
	{"nccl_nvls_tree", KIND(CK_ALLREDUCE), TOPO(TK_RAILS) | TOPO(TK_LEAF_SPINE_BOXES) | TOPO(TK_GRAPH),
	 "nccl_nvls_tree needs every rank of 'X' on a switch that reduces"},
};

static char *
instance(TopoKind t, CollKind k, AlgId a)
{
	const char *decls = "", *call = alg_forms[a].name, *lines = "";
	for (size_t i = 0; i < countof(needs); i++)
		if (strcmp(needs[i].alg, alg_forms[a].name) == 0 && (needs[i].kinds & KIND(k)) &&
		    (needs[i].forms & TOPO(t))) {
			decls = needs[i].decls, call = needs[i].call, lines = needs[i].lines;
			break;
		}
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	fprintf(f, "topology T = %s;\n%scollective %s X on T {\n    algorithm %s;\n%s%s}\n",
	        topo_form_decl[t], decls, coll_kind_name[k], call, lines,
	        KIND(k) & KINDS_ROOTED ? "    root 0;\n" : "");
	fclose(f);
	return text;
}

void
test_every_form_builds(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	int built = 0, refused = 0, met[countof(refusals)] = {0};
	for (int a = 0; a < NALG; a++)
		for (int t = 0; t < NTOPOKIND; t++)
			for (int k = 0; k < NCOLLKIND; k++) {
				if (!alg_applies((AlgId)a, (CollKind)k, (TopoKind)t))
					continue;
				char *text = instance((TopoKind)t, (CollKind)k, (AlgId)a);
				Checked c;
				check_built(dg, &c, "forms.coll", text, strlen(text));
				int r = -1;
				for (size_t i = 0; i < countof(refusals) && r < 0; i++)
					if (strcmp(refusals[i].alg, alg_forms[a].name) == 0 &&
					    (refusals[i].kinds & KIND(k)) && (refusals[i].forms & TOPO(t)))
						r = (int)i;
				if (r < 0) {
					assert_named(c.errors == 0, __LINE__, __FILE__, "%s %s on %s: %s\n%s",
					             alg_forms[a].name, coll_kind_name[k], topo_form_decl[t], c.diag, text);
					built += c.errors == 0;
				} else {
					assert_named(c.errors > 0 && strstr(c.diag, refusals[r].message), __LINE__,
					             __FILE__, "%s %s on %s: expected the refusal '%s', got: %s",
					             alg_forms[a].name, coll_kind_name[k], topo_form_decl[t],
					             refusals[r].message, c.diag);
					met[r]++;
					refused++;
				}
				checked_free(&c);
				free(text);
			}
	for (size_t i = 0; i < countof(refusals); i++)
		assert_named(met[i] > 0, __LINE__, __FILE__, "refusals[%zu] (%s) is met by no instance",
		             i, refusals[i].alg);
	/* every algorithm built somewhere, and most instances built */
	CU_ASSERT(built > 4 * refused);
	for (int a = 0; a < NALG; a++) {
		bool any = false;
		for (int t = 0; t < NTOPOKIND && !any; t++)
			for (int k = 0; k < NCOLLKIND && !any; k++)
				any = alg_applies((AlgId)a, (CollKind)k, (TopoKind)t);
		CU_ASSERT(any);
	}
}

/* A proof that fails the ring's schedules and passes the others': what a
 * ring generator that dropped a message would meet. */
static int
fail_ring(Diag *dg, const Sched *s, char *why, size_t len)
{
	if (strcmp(s->algorithm, "ring") != 0)
		return verify_quiet(dg, s, why, len);
	snprintf(why, len, "schedule of '%s': a test's failure", s->name);
	return -1;
}

/* `auto` leaves out a candidate whose schedule fails its proof, with a
 * located note naming the algorithm and the failure; the others stay. And
 * verify_quiet says what fails in a schedule with a message dropped. */
void
test_auto_notes_failed_candidate(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	Arena a = {0};
	int size[1] = {8}, rank_node[8];
	Topo *t = topo_new(&a, TK_RING, "R", 1, size, 0, net_defaults);
	Routes routes;
	routes_init(&routes, t, ROUTE_SHORTEST);
	for (int i = 0; i < 8; i++)
		rank_node[i] = i;
	AlgCtx c = alg_ctx_new(dg, &a, "AR", (Loc){2, 5}, CK_ALLREDUCE, t, &routes, rank_node, 8);
	char *diag = NULL;
	size_t dlen;
	FILE *mem = open_memstream(&diag, &dlen);
	diag_stream(dg, mem);
	diag_reset(dg);
	const char *src = "topology R = ring(8);\n    algorithm auto;\n";
	diag_source(dg, "auto.coll", src, strlen(src));
	Sched *honest[NALG], *cand[NALG];
	const char *hnames[NALG], *names[NALG];
	int nh = alg_auto(&c, honest, hnames, NALG);
	int n = alg_auto_checked(&c, cand, names, NALG, fail_ring);
	/* a schedule of the ring with its last message dropped */
	Sched *ring = NULL;
	for (int i = 0; i < nh; i++)
		if (strcmp(hnames[i], "ring") == 0)
			ring = honest[i];
	CU_ASSERT_PTR_NOT_NULL_FATAL(ring);
	char why[600] = "";
	CU_ASSERT_EQUAL(verify_quiet(dg, ring, why, sizeof why), 0);
	ring->nmsg--;
	int rc = verify_quiet(dg, ring, why, sizeof why);
	ring->nmsg++;
	int errors = nerrors(dg);
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
	CU_ASSERT_EQUAL(errors, 0); /* a note, not an error */
	CU_ASSERT_EQUAL(n, nh - 1);
	for (int i = 0; i < n; i++)
		CU_ASSERT(strcmp(names[i], "ring") != 0);
	ASSERT_DIAG(&((Checked){.diag = diag}), "auto.coll:2:5: note: auto: left out ring, whose "
	            "schedule fails verification: schedule of 'AR': a test's failure\n"
	            "    algorithm auto;\n    ^");
	/* the honest run noted nothing: one note in all */
	int notes = 0;
	for (const char *q = diag; (q = strstr(q, ": note: ")); q++)
		notes++;
	CU_ASSERT_EQUAL(notes, 1);
	/* the dropped message: the verifier's own words, a rank that ends without its result */
	CU_ASSERT_EQUAL(rc, -1);
	assert_named(strstr(why, "schedule of 'AR' does not implement allreduce: at the end rank ") &&
	             strstr(why, "lacks the contribution of rank"), __LINE__, __FILE__, "why: %s", why);
	free(diag);
	routes_free(&routes);
	arena_free(&a);
}
