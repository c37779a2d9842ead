/*
 * boxes.c: the files a .coll file's topology sources name, read before sema:
 * `topology B = nccl_topo("box.xml");` reads NCCL's topology XML with
 * nccl_topo.c's reader, the one `collc nccl-topo` runs, so the language and
 * the command see the same box.
 *
 * Needs: a parsed file (parameters applied) and its path as the driver names
 * it. Establishes: every topology source called with one string has its box
 * (Call.box, its GPU and node counts) or a located error: for a file that
 * cannot be read, at the string; for what the reader cannot use, in the XML
 * at its line, with a note at the string that names the file. A call of
 * another shape is left alone: sema reports it against the registry's
 * signature. A path is taken relative to the .coll file's folder (the
 * working directory for standard input), and only a regular file is read (a
 * FIFO or a device would block or never end). check_file, at the end, is
 * the one sequence every command (the driver, sweep's spec values and
 * units) and the fuzz target run: params, this pass, sema.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ast.h"
#include "ir.h"

/* The path a string names, for a .coll file at `from`. */
static const char *
source_path(Arena *a, const char *from, const char *path)
{
	if (path[0] == '/')
		return path;
	const char *slash = strrchr(from, '/');
	if (!slash || strcmp(from, "<stdin>") == 0)
		return arena_printf(a, "./%s", path); /* never "-", read_file's stdin */
	return arena_printf(a, "%.*s/%s", (int)(slash - from), from, path);
}

/* Each node's nearest NIC over PCIe (and a CPU's own NIC) links, by hops,
 * the first NIC in the box's order on a tie, and the narrowest link on the
 * way to it in GB/s: one breadth-first search from every NIC at once, along
 * links into the node reached, so O(nodes + links). */
static void
nearest_nics(Arena *a, const NcclBox *b, int *nic, double *gbs)
{
	int *first = arena_array(a, (size_t)b->nnode + 1, sizeof *first);
	int *into = arena_array(a, (size_t)b->nlink, sizeof *into);
	int *queue = arena_array(a, (size_t)b->nnode, sizeof *queue);
	for (int i = 0; i < b->nlink; i++)
		first[b->link[i].dst + 1]++;
	for (int v = 0; v < b->nnode; v++)
		first[v + 1] += first[v];
	int *fill = arena_array(a, (size_t)b->nnode, sizeof *fill);
	for (int i = 0; i < b->nlink; i++)
		into[first[b->link[i].dst] + fill[b->link[i].dst]++] = i;
	int head = 0, tail = 0;
	for (int v = 0; v < b->nnode; v++) {
		nic[v] = b->node[v].kind == NCCL_NIC ? v : -1;
		gbs[v] = 1e300;
		if (nic[v] >= 0)
			queue[tail++] = v;
	}
	while (head < tail) {
		int u = queue[head++];
		for (int k = first[u]; k < first[u + 1]; k++) {
			const NcclLink *l = &b->link[into[k]]; /* l->src -> u: toward u's NIC */
			if ((l->kind != NCCL_PCI_LINK && l->kind != NCCL_LOC) || nic[l->src] >= 0)
				continue;
			nic[l->src] = nic[u];
			gbs[l->src] = l->gbs < gbs[u] ? l->gbs : gbs[u];
			queue[tail++] = l->src;
		}
	}
}


/* The Gbit/s a cluster form takes (an integer), from GB/s; -1 if not whole. */
static int
whole_gbps(double gbs)
{
	double g = gbs * 8;
	return g >= 1 && g <= MAX_NIC_GBPS && g == (double)(long)g ? (int)g : -1;
}

/* The NVSwitch side of a box for a cluster form: every GPU on NCCL's NVS
 * node alike, none joined to another GPU. 0, or -1 after an error in xd. */
static int
cluster_nvswitch(Diag *xd, Arena *a, const NcclBox *b, Call *c)
{
	double *to_nvs = arena_array(a, (size_t)b->nnode, sizeof *to_nvs); /* each node's GB/s */
	for (int i = 0; i < b->nlink; i++)
		if (b->link[i].dst == b->nvs)
			to_nvs[b->link[i].src] = b->link[i].gbs;
	if (b->ngpu < 2) {
		error_at(xd, b->gpu[0].loc, "a cluster's box has at least 2 GPUs; this file has %d",
		         b->ngpu);
		return -1;
	}
	for (int g = 0; g < b->ngpu; g++) {
		const NcclGpu *x = &b->gpu[g];
		double bw = b->nvs >= 0 ? to_nvs[x->node] : 0;
		if (x->gpu_links > 0 || bw <= 0) {
			error_at(xd, x->loc, "GPU rank %d %s: this form's box joins its GPUs by one "
			         "NVSwitch (xgmi_rails takes GPUs joined pair by pair; collc nccl-topo reads any box "
			         "as a graph)", x->rank,
			         x->gpu_links ? "has NVLinks to other GPUs" : "has no NVLink to an NVSwitch");
			return -1;
		}
		if (g == 0)
			c->box_link_gbs = bw;
		else if (fabs(bw - c->box_link_gbs) > 1e-9 * bw) { /* NVLink rows summed in any order */
			error_at(xd, x->loc, "GPU rank %d reaches the NVSwitch at %.10g GB/s, GPU 0 at %.10g: "
			         "a cluster form's GPUs reach their switch alike", x->rank, bw,
			         c->box_link_gbs);
			return -1;
		}
	}
	return 0;
}

/* An xgmi_rails box: no NVSwitch, every pair of GPUs joined by NVLinks
 * (NCCL's <nvlink> to a GPU, tclass 0x03...), as many each way, at one
 * rate (one SM): each pair's count in c->box_pairs, by rows as `links`
 * takes them. 0, or -1 after an error in xd. */
static int
cluster_mesh(Diag *xd, Arena *a, const NcclBox *b, Call *c)
{
	int G = b->ngpu;
	if (G < 2 || (int64_t)G * (G - 1) / 2 > MAX_GPU_PAIRS) {
		error_at(xd, b->gpu[0].loc, "xgmi_rails takes a box of 2 to 64 GPUs (MAX_GPU_PAIRS); "
		         "this file has %d", G);
		return -1;
	}
	int *rank = arena_array(a, (size_t)b->nnode, sizeof *rank); /* a node's GPU + 1 */
	int *count = arena_array(a, (size_t)G * G, sizeof *count);
	for (int g = 0; g < G; g++)
		rank[b->gpu[g].node] = g + 1;
	for (int i = 0; i < b->nlink; i++) {
		const NcclLink *l = &b->link[i];
		if (l->kind == NCCL_NVL && rank[l->src] && rank[l->dst])
			count[(rank[l->src] - 1) * G + rank[l->dst] - 1] += l->nvlinks;
	}
	c->box_pairs = arena_array(a, (size_t)G * (G - 1) / 2, sizeof *c->box_pairs);
	c->box_link_gbs = b->gpu[0].nvlink_gbs;
	for (int i = 0, k = 0; i < G; i++) {
		const NcclGpu *x = &b->gpu[i];
		if (x->nvs_links > 0 || x->nvlink_gbs != c->box_link_gbs) {
			error_at(xd, x->loc, "GPU rank %d %s: xgmi_rails' box joins its GPUs pair by pair "
			         "at one rate", x->rank, x->nvs_links ? "has NVLinks to an NVSwitch (a rails box)"
			                                              : "has another SM's NVLink rate than GPU 0");
			return -1;
		}
		for (int j = i + 1; j < G; j++, k++) {
			int n = count[i * G + j];
			if (n < 1 || n > MAX_PAIR_LINKS || n != count[j * G + i]) {
				error_at(xd, x->loc, "GPU ranks %d and %d: %d NVLinks one way, %d the other; "
				         "xgmi_rails' box joins every pair of its GPUs by 1 to %d links each way",
				         i, j, n, count[j * G + i], MAX_PAIR_LINKS);
				return -1;
			}
			c->box_pairs[k] = n;
		}
	}
	return 0;
}

/* The NIC side: each GPU's nearest NIC over the PCIe tree; the GPUs sharing
 * one are consecutive ranks, G/K of them (NIC k is that of GPUs k G/K...),
 * every NIC with one port of one speed, every GPU's path as narrow. Linear
 * in the GPUs, nets and links, as every check here (a file may hold a
 * million nodes). */
static int
cluster_nics(Diag *xd, Arena *a, const NcclBox *b, Call *c)
{
	int *nic = arena_array(a, (size_t)b->nnode, sizeof *nic);
	double *gbs = arena_array(a, (size_t)b->nnode, sizeof *gbs);
	nearest_nics(a, b, nic, gbs);
	int G = b->ngpu, K = 0;
	for (int g = 0; g < G; g++) {
		const NcclGpu *x = &b->gpu[g];
		if (nic[x->node] < 0) {
			error_at(xd, x->loc, "GPU rank %d reaches no NIC over PCIe: a cluster form's GPUs "
			         "each have a NIC", x->rank);
			return -1;
		}
		K += g == 0 || nic[x->node] != nic[b->gpu[g - 1].node];
	}
	int *group = arena_array(a, (size_t)b->nnode, sizeof *group); /* a NIC's GPU group + 1 */
	int *nports = arena_array(a, (size_t)b->nnode, sizeof *nports); /* a NIC's <net>s */
	int *nspeed = arena_array(a, (size_t)b->nnode, sizeof *nspeed); /* and its Gbit/s */
	for (int i = 0; i < b->nnet; i++) {
		nports[b->net[i].nic]++;
		nspeed[b->net[i].nic] = whole_gbps(b->net[i].gbs);
	}
	for (int g = 0; g < G; g++) {
		const NcclGpu *x = &b->gpu[g];
		int lead = b->gpu[g - g % (G / K)].node, *seen = &group[nic[x->node]];
		bool apart = *seen && *seen != g / (G / K) + 1; /* the NIC serves another group too */
		*seen = g / (G / K) + 1;
		if (G % K || nic[x->node] != nic[lead] || apart) {
			error_at(xd, x->loc, "GPU rank %d's nearest NIC (line %d) breaks the pattern a cluster "
			         "form takes: NIC k shared by GPUs k G/K to (k + 1) G/K - 1, here %d GPUs over "
			         "%d NICs", x->rank, b->node[nic[x->node]].loc.line, G, K);
			return -1;
		}
		int pcie = whole_gbps(gbs[x->node]), ports = nports[nic[x->node]];
		int speed = nspeed[nic[x->node]];
		const NcclNode *n = &b->node[nic[x->node]];
		if (ports != 1 || speed < 0) {
			error_at(xd, n->loc, "%s: a cluster form's NIC has one <net> port of whole Gbit/s; this "
			         "one has %d port%s%s", n->label, ports, ports == 1 ? "" : "s",
			         ports == 1 ? " of a fraction of a Gbit/s" : "");
			return -1;
		}
		if (pcie < 0 || (g > 0 && (pcie != c->box_pcie_gbps || speed != c->box_nic_gbps))) {
			error_at(xd, x->loc, "GPU rank %d: %.10g GB/s to its NIC over PCIe, the NIC at %d Gbit/s; "
			         "a cluster form's GPUs reach their NICs alike (GPU 0: %d and %d Gbit/s), in "
			         "whole Gbit/s", x->rank, gbs[x->node], speed, c->box_pcie_gbps,
			         c->box_nic_gbps);
			return -1;
		}
		c->box_pcie_gbps = pcie;
		c->box_nic_gbps = speed;
	}
	c->box_nics = K;
	return 0;
}

/* Reads the box c names into c->box, or reports why not; with cluster (a
 * TopoKind, or -1), the box also as that cluster form takes it. */
static void
load_nccl_topo(Diag *dg, Arena *a, const char *from, Call *c, const Expr *e, int cluster)
{
	const char *path = source_path(a, from, e->text);
	struct stat st;
	c->box_failed = true;
	if (e->text[0] == 0) {
		error_at(dg, e->loc, "%s: an empty path", topo_sources[TS_NCCL_TOPO].name);
		return;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		error_at(dg, e->loc, "%s: '%s' is not a regular file", topo_sources[TS_NCCL_TOPO].name, path);
		return;
	}
	size_t len;
	char err[512];
	char *text = read_file(path, &len, err, sizeof err);
	if (!text) {
		error_at(dg, e->loc, "%s: %s", topo_sources[TS_NCCL_TOPO].name, err);
		return;
	}
	/* a second Diag with the XML as its source: the run's state, and what
	 * it counts is the run's (as to_msccl_check.c does for its XML) */
	Diag xd = *dg;
	diag_source(&xd, path, text, len);
	NcclBox *box = NEW(a, NcclBox);
	int rc = nccl_box_read(&xd, a, text, len, box);
	if (rc == 0 && cluster >= 0)
		rc = (cluster == TK_XGMI_RAILS ? cluster_mesh(&xd, a, box, c)
		                               : cluster_nvswitch(&xd, a, box, c)) != 0 ||
		             cluster_nics(&xd, a, box, c) != 0
		         ? -1
		         : 0;
	dg->errors = xd.errors;
	dg->muted = xd.muted;
	dg->announced = xd.announced;
	free(text);
	if (rc != 0) {
		note_at(dg, e->loc, "in the NCCL topology file %s reads here",
		        topo_sources[TS_NCCL_TOPO].name);
		return;
	}
	c->box = box;
	c->box_gpus = box->ngpu;
	c->box_nodes = box->nnode;
	c->box_failed = false;
}

/* nccl_topo("PATH") as written: a call of one string, or NULL. */
static const Expr *
source_string(const char *name, int n, const Expr *const *v)
{
	return topo_source_find(name) == TS_NCCL_TOPO && n == 1 && v[0]->kind == EX_STRING ? v[0]
	                                                                                    : NULL;
}

static int
boxes_load(Diag *dg, File *f)
{
	int before = nerrors(dg);
	for (int i = 0; i < f->ndecl; i++) {
		Call *c = f->decl[i].form;
		if (f->decl[i].kind != DC_TOPOLOGY || !c)
			continue;
		const Expr *e = NULL;
		int form = topo_form_find(c->name);
		bool cluster = topo_source_find(c->name) < 0;
		bool takes_box = false;
		for (int k = 0; form >= 0 && k < MAX_PARAMS; k++)
			takes_box |= topo_forms[form].role[k] == TR_BOX;
		if (!cluster && c->narg == 1 && !c->arg[0].label)
			e = source_string(c->name, c->arg[0].val.n, (const Expr *const *)c->arg[0].val.v);
		for (int k = 0; takes_box && k < c->narg; k++) { /* a cluster form's `box` */
			const Arg *g = &c->arg[k];
			if (g->label && strcmp(g->label, "box") == 0 && g->val.n == 1 &&
			    g->val.v[0]->kind == EX_CALL && !e)
				e = source_string(g->val.v[0]->text, g->val.v[0]->nelem,
				                  (const Expr *const *)g->val.v[0]->elem);
		}
		if (e)
			load_nccl_topo(dg, f->arena, f->path, c, e, cluster ? form : -1);
	}
	return nerrors(dg) > before;
}

int
check_file(Diag *dg, File *f, const Defines *defs, int *unknown)
{
	int rc = params_apply(dg, f, defs, unknown);
	if (rc != 0)
		return rc;
	boxes_load(dg, f);
	sema(dg, f);
	return nerrors(dg) > 0;
}
