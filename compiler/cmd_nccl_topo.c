/*
 * cmd_nccl_topo.c: `collc nccl-topo FILE.xml`: NCCL's topology XML
 * (ir/nccl_topo.c reads it as NCCL does) written as a `graph` topology
 * declaration a .coll file includes as it is: GPUs are ranks 0..n-1 by
 * their rank=, CPUs, PCI switches, NICs and NCCL's NVSwitch are switches,
 * each link with NCCL's bandwidth. Needs a readable file; writes the whole
 * declaration or nothing (docs/nccl-topo.md).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "driver.h"
#include "ir.h"

typedef struct NtArgs {
	const char *path, *out, *name;
} NtArgs;

static const CliOpt nt_opts[] = {
	{"output", 'o', "OUT", "write to OUT (written whole) instead of stdout"},
	{"name", 0, "NAME", "the topology's name in the declaration (default B)"},
};

static int
nt_opt(void *ctx, const char *name, const char *value)
{
	NtArgs *a = ctx;
	if (strcmp(name, "output") == 0)
		a->out = value;
	else {
		bool ok = value[0] != 0 && (value[0] == '_' || (value[0] | 32) >= 'a') &&
		          (value[0] | 32) <= 'z';
		for (const char *c = value; ok && *c; c++)
			ok = *c == '_' || (*c >= '0' && *c <= '9') || ((*c | 32) >= 'a' && (*c | 32) <= 'z');
		if (!ok)
			return usage_error("nccl-topo: --name '%s' is not an identifier", value);
		a->name = value;
	}
	return 0;
}

/* What the writer looks up, made once so that writing is linear in the
 * box: each node's Topo id, and the nets at each NIC (first[v], then
 * next[i]; -1 ends). */
typedef struct BoxIndex {
	int *id, *first, *next;
} BoxIndex;

static BoxIndex
box_index(Arena *a, const NcclBox *b)
{
	BoxIndex x = {nccl_box_topo_ids(a, b), arena_array(a, (size_t)b->nnode + 1, sizeof(int)),
	              arena_array(a, (size_t)b->nnet + 1, sizeof(int))};
	for (int v = 0; v < b->nnode; v++)
		x.first[v] = -1;
	for (int i = b->nnet - 1; i >= 0; i--) {
		x.next[i] = x.first[b->net[i].nic];
		x.first[b->net[i].nic] = i;
	}
	return x;
}

static void
node_comment(FILE *f, const NcclBox *b, const BoxIndex *x, int v)
{
	const NcclNode *n = &b->node[v];
	fprintf(f, "    // %d: %s %s", x->id[v], nccl_node_kind_name[n->kind], n->label);
	if (n->kind == NCCL_GPU) {
		const NcclGpu *g = &b->gpu[x->id[v]];
		fprintf(f, ", rank %d, sm %d", g->rank, g->sm);
		if (g->nvs_links + g->gpu_links > 0)
			fprintf(f, ", %d NVLinks of %.10g GB/s", g->nvs_links + g->gpu_links, g->nvlink_gbs);
	}
	for (int i = x->first[v]; i >= 0; i = x->next[i])
		fprintf(f, ", %s %.10g GB/s", b->net[i].name, b->net[i].gbs);
	fprintf(f, " (line %d)\n", n->loc.line);
}

/* u -> v written once as <-> when v -> u has the same kind and bandwidth. */
static int
reverse_of(const NcclBox *b, int i)
{
	int j = b->link[i].rev;
	return j >= 0 && b->link[j].gbs == b->link[i].gbs ? j : -1;
}

static void
write_decl(FILE *f, Arena *a, const char *path, const char *name, const NcclBox *b)
{
	BoxIndex x = box_index(a, b);
	int nvl = 0;
	for (int g = 0; g < b->ngpu; g++)
		nvl += b->gpu[g].nvs_links + b->gpu[g].gpu_links;
	fprintf(f, "// %s as NCCL reads it (collc nccl-topo, docs/nccl-topo.md):\n", path);
	fprintf(f, "// %d GPUs (%d NVLinks), %d NVSwitch bus ids (one NVS node, as in NCCL),\n"
	        "// %d CPUs, %d PCI switches, %d NICs\n",
	        b->ngpu, nvl, b->nvswitch_targets, b->ncpu, b->npci, b->nnic);
	fprintf(f, "topology %s = graph {\n    nodes %d;\n", name, b->nnode);
	if (b->nnode > b->ngpu)
		fprintf(f, "    switches %d..%d;\n", b->ngpu, b->nnode - 1);
	for (int g = 0; g < b->ngpu; g++)
		node_comment(f, b, &x, b->gpu[g].node);
	for (int v = 0; v < b->nnode; v++)
		if (b->node[v].kind != NCCL_GPU)
			node_comment(f, b, &x, v);
	for (int i = 0; i < b->nlink; i++) {
		const NcclLink *l = &b->link[i];
		int j = reverse_of(b, i);
		if (j >= 0 && j < i)
			continue; /* written with its reverse */
		fprintf(f, "    link %d %s %d { link_bandwidth = %.10g GBps; } // %s", x.id[l->src],
		        j >= 0 ? "<->" : "->", x.id[l->dst], l->gbs, nccl_link_kind_name[l->kind]);
		if (l->nvlinks)
			fprintf(f, " x%d", l->nvlinks);
		fputc('\n', f);
	}
	fprintf(f, "}\n");
}

static int
cmd_nccl_topo(Diag *dg, int argc, char **argv)
{
	NtArgs a = {.name = "B"};
	int bad = cli_parse(&cli_nccl_topo, argc, argv, &a, nt_opt, &a.path);
	if (bad)
		return bad < 0 ? 0 : bad;
	size_t len;
	char err[256];
	char *text = read_file(a.path, &len, err, sizeof err);
	if (!text) {
		fprintf(stderr, "collc: error: %s\n", err);
		return 1;
	}
	diag_source(dg, a.path, text, len);
	Arena arena = {0};
	NcclBox box;
	int rc = nccl_box_read(dg, &arena, text, len, &box) != 0;
	if (rc == 0) {
		MemOut m;
		write_decl(memout_open(&m), &arena, a.path, a.name, &box);
		rc = write_output(a.out, &m);
	}
	arena_free(&arena);
	free(text);
	return rc;
}

const CliCommand cli_nccl_topo = {
	"nccl-topo", "FILE.xml",
	"read NCCL's topology XML (NCCL_TOPO_DUMP_FILE) and write the box as a graph topology",
	"The declaration goes into a .coll file as it is: GPUs are ranks 0..n-1 by their rank=,\n"
	"CPUs, PCI switches, NICs and the NVSwitch are switches, each link with the bandwidth\n"
	"NCCL gives it (NVLinks x the SM architecture's rate, PCIe width x speed). A comment\n"
	"names every node and the line of its element (docs/nccl-topo.md).\n",
	nt_opts, countof(nt_opts), cmd_nccl_topo, NULL};
