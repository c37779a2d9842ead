/*
 * registry.c: the tables of registry.h. Each concept is listed here once
 * (the algorithms in algorithms.def); lookups are linear, the tables short.
 */
#include "registry.h"

#include <stdio.h>
#include <string.h>

const char *const coll_kind_name[NCOLLKIND] = {
	[CK_ALLREDUCE] = "allreduce", [CK_REDUCE_SCATTER] = "reduce_scatter",
	[CK_ALLGATHER] = "allgather", [CK_ALLTOALL] = "alltoall",
	[CK_BROADCAST] = "broadcast", [CK_REDUCE] = "reduce",
};

int
coll_kind_find(const char *name)
{
	for (int k = 0; k < NCOLLKIND; k++)
		if (strcmp(coll_kind_name[k], name) == 0)
			return k;
	return -1;
}

/* The cluster forms' node classes: boxes are parameter 0, GPUs 1 */
#define GPU {"gpu", {0, 1}, "GPU", false, 0}
#define NIC(what) {"nic", {0, 1}, what, true, 0}
/* shared NICs: K a box (parameter k), nodes when pcie_gbps (parameter p - 1) is given */
#define NIC_NODES(what, k, p) {"nic", {0, k}, what, true, p}
#define NVSWITCH {"nvswitch", {0, -1}, "box switch (NVSwitch)", false, 0}
#define RAIL(k) {"rail", {k, -1}, "rail switch", false, 0} /* one per NIC index */
#define NICS {"nics", A_INT, 0, 1, 1, MAX_NODES, NULL}
#define PCIE {"pcie_gbps", A_INT, 0, 1, 1, MAX_NIC_GBPS, NULL}
#define SIZES {NULL, A_INT, 1, MAX_DIMS, 2, MAX_NODES, NULL}
#define COUNT(label, lo) {label, A_INT, 1, 1, lo, MAX_NODES, NULL}
/* a box from NCCL's topology XML; with it `gpus` and `nic_gbps` may go unsaid */
#define BOX {"box", A_SOURCE, 0, 1, 0, 0, NULL}
#define GPUS_OR_BOX {"gpus", A_INT, 0, 1, 2, MAX_NODES, NULL}
#define NIC_GBPS_OR_BOX {"nic_gbps", A_INT, 0, 1, 1, MAX_NIC_GBPS, NULL}
const TopoForm topo_forms[NTOPOKIND] = {
	[TK_TORUS] = {{"torus", "torus(n1, n2, ...), each size at least 2", {SIZES}, 0, 0},
	              {TR_DIMS}, .translations = true, .grid = true},
	[TK_MESH] = {{"mesh", "mesh(n1, n2, ...), each size at least 2", {SIZES}, 0, 0},
	             {TR_DIMS}, .grid = true},
	[TK_SUPERMESH] = {{"supermesh", "supermesh(rows, cols, bi | alter)",
	                   {{NULL, A_INT, 2, 2, 2, MAX_NODES, NULL},
	                    {NULL, A_WORD, 1, 1, 0, 0, "bi|alter"}}, 0, 0},
	                  {TR_DIMS, TR_VARIANT}, .grid = true},
	[TK_HYPERX] = {{"hyperx", "hyperx(n1, n2, ...), each size at least 2", {SIZES}, 0, 0},
	               {TR_DIMS}, .translations = true},
	[TK_SPINE_LEAF] = {{"spine_leaf", "spine_leaf(spines S, leaves L, hosts H)",
	                    {COUNT("spines", 1), COUNT("leaves", 1), COUNT("hosts", 1)}, 0, 0},
	                   {TR_SWITCHES, TR_DIM_SWITCHES, TR_DIMS}, .translations = true, .hosts_last = true},
	[TK_RING] = {{"ring", "ring(n), n at least 2", {COUNT(NULL, 2)}, 0, 0},
	             {TR_DIMS}, .translations = true},
	[TK_FULL] = {{"full", "full(n), n at least 2", {COUNT(NULL, 2)}, 0, 0},
	             {TR_DIMS}, .translations = false},
	[TK_OPTICAL_RING] = {{"optical_ring", "optical_ring(n, ports P), n at least 2, P in 2..2n",
	                      {COUNT(NULL, 2), {"ports", A_INT, 0, 1, 2, 2 * (int64_t)MAX_NODES, NULL}},
	                      0, 0},
	                     {TR_DIMS, TR_VARIANT}, .variant_per_rank = 2},
	[TK_RAILS] = {{"rails", "rails(boxes B, gpus G, nic_gbps N[, nics K, pcie_gbps P]) or rails(boxes "
	                          "B, box nccl_topo(\"FILE.xml\")[, nic_gbps N]): B boxes of G GPUs on a "
	                          "switch, NIC g of every box on rail switch g (with nics: K NICs a box, "
	                          "each the node G/K GPUs reach at P Gbit/s; with box: the GPUs, NICs and "
	                          "speeds NCCL's topology file gives)",
	               {COUNT("boxes", 1), GPUS_OR_BOX, NIC_GBPS_OR_BOX, NICS, PCIE, BOX}, 0, 0},
	              {TR_DIM_SWITCHES, TR_DIM_SWITCHES, TR_VARIANT, TR_NICS, TR_NIC_LINK, TR_BOX},
	              .translations = true, .hosts_last = true,
	              .node_class = {GPU, NVSWITCH, RAIL(3), NIC_NODES("GPU's link to its rail", 3, 5)}},
	[TK_XGMI_RAILS] = {{"xgmi_rails", "xgmi_rails(boxes B, gpus G, nic_gbps N[, links L01, L02, "
	                                  "..., L(G-2)(G-1)][, nics K, pcie_gbps P]) or xgmi_rails(boxes "
	                                  "B, box nccl_topo(\"FILE.xml\")[, nic_gbps N]): B boxes of G "
	                                  "GPUs fully connected by xGMI, pair i-j by Lij links (default "
	                                  "1), NIC g of every box on rail switch g (with nics: K NICs a "
	                                  "box, each the node G/K GPUs reach at P Gbit/s; with box: the "
	                                  "GPUs, their NVLinks pair by pair, NICs and speeds NCCL's "
	                                  "topology file gives)",
	                    {COUNT("boxes", 1), GPUS_OR_BOX, NIC_GBPS_OR_BOX,
	                     {"links", A_INT, 0, MAX_GPU_PAIRS, 1, MAX_PAIR_LINKS, NULL}, NICS, PCIE, BOX},
	                    0, 0},
	                   {TR_DIMS, TR_DIM_SWITCHES, TR_VARIANT, TR_PAIRS, TR_NICS, TR_NIC_LINK, TR_BOX},
	                   .translations = true, .hosts_last = true,
	                   .node_class = {GPU, RAIL(4), NIC_NODES("GPU's link to its rail", 4, 6)}},
	[TK_LEAF_SPINE_BOXES] = {{"leaf_spine_boxes",
	                          "leaf_spine_boxes(boxes B, gpus G, nic_gbps N, spines S[, nics K, "
	                          "pcie_gbps P]) or leaf_spine_boxes(boxes B, box nccl_topo(\"FILE.xml\"), "
	                          "spines S[, nic_gbps N]): B boxes of G GPUs on a switch, the box's NICs "
	                          "on its leaf, each leaf joined to the S spines at N (oversubscription "
	                          "G:S, with nics K:S; with nics: K NICs a box, each the node G/K GPUs "
	                          "reach at P Gbit/s; with box: the GPUs, NICs and speeds NCCL's "
	                          "topology file gives)",
	                          {COUNT("boxes", 1), GPUS_OR_BOX, NIC_GBPS_OR_BOX, COUNT("spines", 1),
	                           NICS, PCIE, BOX},
	                          0, 0},
	                         {TR_DIM_SWITCHES, TR_DIMS, TR_VARIANT, TR_SWITCHES, TR_NICS, TR_NIC_LINK,
	                          TR_BOX},
	                         .hosts_last = true, .switches_per_dim = 2,
	                         .node_class = {GPU, NVSWITCH,
	                                        {"leaf", {0, -1}, "leaf switch of a box", false, 0},
	                                        {"spine", {3, -1}, "spine switch", false, 0},
	                                        NIC_NODES("GPU's link to its leaf", 4, 6)}},
	[TK_TORUS_BOXES] = {{"torus_boxes",
	                     "torus_boxes(boxes A1, A2, ..., gpus G, nic_gbps N) or torus_boxes(boxes A1, "
	                     "A2, ..., box nccl_topo(\"FILE.xml\")[, nic_gbps N]): A1 x A2 x ... boxes of G "
	                     "GPUs on a switch, joined as a torus: GPU 2p's NIC cabled to GPU 2p + 1 of the "
	                     "next box along dimension p mod k (G a multiple of 2k; with box: the GPUs, "
	                     "their NICs and speeds NCCL's topology file gives, a NIC per GPU)",
	                     {{"boxes", A_INT, 1, MAX_DIMS - 1, 2, MAX_NODES, NULL}, GPUS_OR_BOX,
	                      NIC_GBPS_OR_BOX, BOX}, 0, 0},
	                    {TR_BOX_DIMS, TR_DIMS, TR_VARIANT, TR_BOX}, .translations = true, .hosts_last = true,
	                    .node_class = {GPU, NIC("GPU's link to a GPU of the next box on the torus"),
	                                   NVSWITCH}},
	[TK_GRAPH] = {{"graph", "graph { nodes N; link a -> b; ... }", {{0}}, 0, 0},
	              {TR_NONE}, .block = true},
};
#undef SIZES
#undef COUNT
#undef GPU
#undef NIC
#undef NVSWITCH
#undef RAIL
#undef NIC_NODES
#undef NICS
#undef PCIE
#undef BOX
#undef GPUS_OR_BOX
#undef NIC_GBPS_OR_BOX

const FormSpec topo_sources[NTOPOSOURCE] = {
	[TS_NCCL_TOPO] = {"nccl_topo", "nccl_topo(\"FILE.xml\"): the box NCCL's topology XML "
	                  "(NCCL_TOPO_DUMP_FILE) describes, as a graph; the path relative to the "
	                  ".coll file's folder", {{NULL, A_STRING, 1, 1, 0, 0, NULL}}, 0, 0},
};

int
topo_source_find(const char *name)
{
	for (int k = 0; k < NTOPOSOURCE; k++)
		if (strcmp(topo_sources[k].name, name) == 0)
			return k;
	return -1;
}

int
node_class_find(TopoKind k, const char *word)
{
	const NodeClass *nc = topo_forms[k].node_class;
	for (int c = 0; c < MAX_NODE_CLASSES && nc[c].word; c++)
		if (strcmp(nc[c].word, word) == 0)
			return c;
	return -1;
}

int
node_class_nidx(const NodeClass *nc)
{
	return nc->dim[1] < 0 ? 1 : 2;
}

int
node_word_nidx(const char *word)
{
	for (int k = 0; k < NTOPOKIND; k++) {
		int c = node_class_find((TopoKind)k, word);
		if (c >= 0)
			return node_class_nidx(&topo_forms[k].node_class[c]);
	}
	return 0;
}

static bool
is_node(const NodeClass *nc, const int64_t *arg)
{
	return !nc->link || (nc->node_when && arg[nc->node_when - 1] != 0);
}

static int64_t
class_count(const NodeClass *nc, const int64_t *arg)
{
	return !is_node(nc, arg) ? 0 : nc->dim[1] < 0 ? arg[nc->dim[0]] : arg[nc->dim[0]] * arg[nc->dim[1]];
}

bool
node_class_is_node(TopoKind k, int c, const int64_t *arg)
{
	return is_node(&topo_forms[k].node_class[c], arg);
}

int64_t
node_class_total(TopoKind k, const int64_t *arg)
{
	const NodeClass *nc = topo_forms[k].node_class;
	int64_t n = 0;
	for (int c = 0; c < MAX_NODE_CLASSES && nc[c].word; c++)
		n += class_count(&nc[c], arg);
	return n;
}

int64_t
node_class_id(TopoKind k, int c, const int64_t *arg, const int64_t *idx)
{
	const NodeClass *nc = topo_forms[k].node_class;
	if (!is_node(&nc[c], arg))
		return -1;
	int64_t id = 0;
	for (int i = 0; i < c; i++)
		id += class_count(&nc[i], arg);
	return nc[c].dim[1] < 0 ? id + idx[0] : id + idx[0] * arg[nc[c].dim[1]] + idx[1];
}

bool
node_name(TopoKind k, const int64_t *arg, int64_t id, char *buf, size_t len)
{
	const NodeClass *nc = topo_forms[k].node_class;
	for (int c = 0; c < MAX_NODE_CLASSES && nc[c].word && id >= 0; c++) {
		int64_t n = class_count(&nc[c], arg);
		if (id >= n) {
			id -= n;
			continue;
		}
		if (nc[c].dim[1] < 0)
			snprintf(buf, len, "%s(%lld)", nc[c].word, (long long)id);
		else
			snprintf(buf, len, "%s(%lld, %lld)", nc[c].word, (long long)(id / arg[nc[c].dim[1]]),
			         (long long)(id % arg[nc[c].dim[1]]));
		return true;
	}
	return false;
}

int
topo_form_find(const char *name)
{
	for (int k = 0; k < NTOPOKIND; k++)
		if (strcmp(topo_forms[k].form.name, name) == 0)
			return k;
	return -1;
}

void
topo_forms_phrase(unsigned topos, char *buf, size_t len)
{
	int left = 0;
	for (int k = 0; k < NTOPOKIND; k++)
		left += (topos & TOPO(k)) != 0;
	size_t n = 0;
	buf[0] = 0;
	for (int k = 0; k < NTOPOKIND && n < len; k++)
		if (topos & TOPO(k)) {
			const char *name = topo_forms[k].form.name;
			left--;
			const char *sep = !n ? strchr("aeiou", name[0]) ? "an " : "a " : left ? ", " : " or ";
			n += (size_t)snprintf(buf + n, len - n, "%s%s", sep, name);
		}
}

void
topo_forms_with_translations(char *buf, size_t len)
{
	int last = -1, n = 0;
	for (int k = 0; k < NTOPOKIND; k++)
		if (topo_forms[k].translations)
			last = k;
	buf[0] = 0;
	for (int k = 0; k < NTOPOKIND && (size_t)n < len; k++)
		if (topo_forms[k].translations)
			n += snprintf(buf + n, len - (size_t)n, "%s%s", !n ? "" : k == last ? " and " : ", ",
			              topo_forms[k].form.name);
}

const char *const switch_reduction_words[4] = {"none", "nvls", "sharp", "nvls_sharp"};

int
switch_reduction_find(const char *word)
{
	for (int i = 0; i < 4; i++)
		if (strcmp(switch_reduction_words[i], word) == 0)
			return i;
	return -1;
}

#define PARAM(name, kind, positive, per_link, swept, field) \
	{name, NV_NUMBER, kind, positive, per_link, swept, offsetof(Net, field)}
const NetParam net_params[] = {
	PARAM("link_bandwidth", Q_RATE, true, true, true, bandwidth),
	PARAM("link_latency", Q_TIME, false, true, true, link_latency),
	PARAM("router_latency", Q_TIME, false, false, true, router_latency),
	PARAM("step_overhead", Q_TIME, false, false, true, step_overhead),
	PARAM("mtu", Q_SIZE, true, false, true, mtu),
	PARAM("energy_per_bit", Q_ENERGY, false, true, false, energy_per_bit),
	PARAM("reconfig_delay", Q_TIME, false, false, false, reconfig_delay),
	PARAM("router_energy_per_bit", Q_ENERGY, false, false, false, router_energy_per_bit),
	PARAM("port_static_power", Q_POWER, false, false, false, port_static_power),
	PARAM("link_static_power", Q_POWER, false, false, false, link_static_power),
	{"switching", NV_SWITCHING, Q_COUNT, false, false, false, 0}, /* a word */
	{"buffer", NV_BUFFER, Q_PACKETS, true, false, false, 0},
	{"switch_reduction", NV_REDUCTION, Q_COUNT, false, false, false, 0}, /* a word */
};
#undef PARAM
const int nnet_params = (int)(sizeof net_params / sizeof net_params[0]);

const NetParam *
net_param_find(const char *name)
{
	for (int i = 0; i < nnet_params; i++)
		if (strcmp(net_params[i].name, name) == 0)
			return &net_params[i];
	return NULL;
}

double *
net_field(Net *n, const NetParam *p)
{
	return (double *)(void *)((char *)n + p->offset);
}

#define PARAMS(...) {__VA_ARGS__}
#define NO_PARAMS {{0}}
const FormSpec alg_forms[NALG] = {
#define ALG(name, kinds, topos, usage, params, generator) \
	[ALG_##name] = {#name, usage, params, kinds, topos},
#include "algorithms.def"
#undef ALG
};

int
alg_find(const char *name)
{
	for (int a = 0; a < NALG; a++)
		if (strcmp(alg_forms[a].name, name) == 0)
			return a;
	return -1;
}

bool
alg_implements(AlgId a, CollKind k)
{
	return (alg_forms[a].kinds & KIND(k)) != 0;
}

bool
alg_runs_on(AlgId a, TopoKind t)
{
	return !alg_forms[a].topos || (alg_forms[a].topos & TOPO(t));
}

bool
alg_applies(AlgId a, CollKind k, TopoKind t)
{
	return alg_implements(a, k) && alg_runs_on(a, t);
}
