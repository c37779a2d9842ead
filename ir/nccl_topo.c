/*
 * nccl_topo.c: NCCL's topology XML (what NCCL_TOPO_DUMP_FILE writes and
 * NCCL_TOPO_FILE reads) as a box: plain data (ir.h's NcclBox), then a graph.
 *
 * Needs: the file's text, with the Diag's source set to it. Establishes: the
 * nodes and links NCCL's src/graph/topo.cc builds from the same file (the
 * rules and their NCCL sources in docs/nccl-topo.md), GPUs sorted by rank
 * and numbered 0..n-1, every link's bandwidth in GB/s as NCCL gives it;
 * or a located error for anything it cannot use. libxml2 reads the text
 * with no network, no DTD and no entity substitution (a DOCTYPE is refused).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "hash.h"
#include "ir.h"

const char *const nccl_node_kind_name[NNCCLNODE] = {"GPU", "CPU", "PCI", "NIC", "NVS"};
const char *const nccl_link_kind_name[NNCCLLINK] = {"NVLink", "PCI", "SYS", "C2C", "LOC"};

/* NCCL's constants (src/graph/topo.h), GB/s */
#define LOC_GBS 5000.0

typedef struct Reader {
	Diag *dg;
	Arena *a;
	const char *text;
	size_t len;
	NcclBox *box;
	int ncap, lcap, gcap, ncap_net;
	int errors;
	Hash links;       /* box->link by (src, dst, kind) */
	XmlLines lines;   /* elements are located in document order: one pass */
	struct BusGpu *bus; /* the GPUs by busid (case aside), then rank: nvlink targets */
} Reader;

typedef struct BusGpu {
	const char *bus;
	int gpu;
} BusGpu;

static int
by_bus(const void *x, const void *y)
{
	const BusGpu *a = x, *b = y;
	int c = strcasecmp(a->bus, b->bus);
	return c ? c : (a->gpu > b->gpu) - (a->gpu < b->gpu);
}

static int
by_name(const void *x, const void *y)
{
	return strcasecmp(*(const char *const *)x, *(const char *const *)y);
}

typedef struct CpuInfo {
	int node;
	double sys_gbs; /* ncclTopoGetInterCpuBw */
} CpuInfo;

/* The column of the first '<' on a line: libxml2 gives elements a line only. */
static Loc
line_loc(Reader *r, int line)
{
	return xml_lines_loc(&r->lines, line);
}

static Loc
node_loc(Reader *r, const xmlNode *x)
{
	long line = xmlGetLineNo(x);
	return line_loc(r, line > 0 && line < 2147483647L ? (int)line : 1);
}

#define FAIL(r, x, ...)                             \
	do {                                            \
		error_at((r)->dg, node_loc((r), (x)), __VA_ARGS__); \
		(r)->errors++;                              \
	} while (0)

static bool
is(const xmlNode *x, const char *name)
{
	return x->type == XML_ELEMENT_NODE && strcmp((const char *)x->name, name) == 0;
}

/* An attribute's value in the reader's arena, or NULL when absent. */
static const char *
attr(Reader *r, const xmlNode *x, const char *name)
{
	xmlChar *v = xmlGetProp(x, (const xmlChar *)name);
	if (!v)
		return NULL;
	char *s = arena_strdup(r->a, (const char *)v);
	xmlFree(v);
	return s;
}

/* An integer attribute (decimal, or hex with 0x as NCCL's strtol(.., 0)
 * reads it); def when absent and not required. */
static int
int_attr(Reader *r, const xmlNode *x, const char *name, bool required, long lo, long hi, long def,
         long *out)
{
	const char *s = attr(r, x, name);
	*out = def;
	if (!s) {
		if (required) {
			FAIL(r, x, "<%s> has no %s= attribute; NCCL needs it", (const char *)x->name, name);
			return -1;
		}
		return 0;
	}
	char *end;
	long v = strtol(s, &end, 0);
	if (end == s || *end != 0 || v < lo || v > hi) {
		FAIL(r, x, "<%s %s=\"%s\">: not an integer in %ld..%ld", (const char *)x->name, name, s,
		     lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

static int
add_node(Reader *r, NcclNodeKind kind, const char *label, Loc loc)
{
	NcclBox *b = r->box;
	if (b->nnode >= MAX_NODES)
		return -1;
	NcclNode n = {kind, label, loc};
	VEC_PUSH(r->a, b->node, b->nnode, r->ncap, n);
	return b->nnode - 1;
}

/* The links by (src, dst, kind), in base/hash.h's index. */
static bool
link_is(const void *ctx, int item, const void *key)
{
	const NcclLink *l = &((const NcclBox *)ctx)->link[item];
	const int *k = key;
	return l->src == k[0] && l->dst == k[1] && (int)l->kind == k[2];
}

static unsigned
link_hash(const void *ctx, int item)
{
	const NcclLink *l = &((const NcclBox *)ctx)->link[item];
	return hash_ints((const int[]){l->src, l->dst, (int)l->kind}, 3);
}

static int
find_link(const Reader *r, int src, int dst, NcclLinkKind kind)
{
	const int k[3] = {src, dst, (int)kind};
	return hash_find(&r->links, hash_ints(k, 3), k, link_is, r->box);
}

/* One direction, added to an existing link of the pair as NCCL's
 * ncclTopoConnectNodes adds bandwidth; found by hash, so a file's links
 * cost linear time (a scan per link was quadratic: 800 CPUs, whose every
 * pair NCCL joins, took minutes). */
static void
connect1(Reader *r, int src, int dst, NcclLinkKind kind, double gbs, int nvlinks)
{
	NcclBox *b = r->box;
	int i = find_link(r, src, dst, kind);
	if (i >= 0) {
		b->link[i].gbs += gbs;
		b->link[i].nvlinks += nvlinks;
		return;
	}
	NcclLink l = {src, dst, kind, gbs, nvlinks, -1};
	VEC_PUSH(r->a, b->link, b->nlink, r->lcap, l);
	hash_add(&r->links, link_hash(b, b->nlink - 1), b->nlink - 1, link_hash, b);
}

/* Each link's reverse (NcclLink.rev), by the table. */
static void
link_reverses(Reader *r)
{
	for (int i = 0; i < r->box->nlink; i++) {
		NcclLink *l = &r->box->link[i];
		l->rev = find_link(r, l->dst, l->src, l->kind);
	}
}

static void
connect2(Reader *r, int u, int v, NcclLinkKind kind, double gbs, int nvlinks)
{
	connect1(r, u, v, kind, gbs, nvlinks);
	connect1(r, v, u, kind, gbs, nvlinks);
}

/* kvDictPciGen: 100 Mb/s per lane; an unknown speed is NCCL's fallback 60. */
double
nccl_pci_gbs(const char *speed, int width)
{
	static const struct {
		const char *prefix;
		int per_lane;
	} gen[] = {{"2.5 GT/s", 15},       {"5 GT/s", 30},         {"8 GT/s", 60},
	           {"16 GT/s", 120},       {"32 GT/s", 240},       {"5.0 GT/s PCIe", 30},
	           {"8.0 GT/s PCIe", 60},  {"16.0 GT/s PCIe", 120}, {"32.0 GT/s PCIe", 240},
	           {"64.0 GT/s PCIe", 480}};
	int lane = 60;
	for (size_t i = 0; speed && i < sizeof gen / sizeof gen[0]; i++)
		if (strncmp(speed, gen[i].prefix, strlen(gen[i].prefix)) == 0) {
			lane = gen[i].per_lane;
			break;
		}
	return (width == 0 ? 16 : width) * lane / 80.0;
}

/* ncclTopoNVLinkBw: one NVLink's GB/s by the GPU's SM architecture. */
double
nccl_nvlink_gbs(int sm)
{
	return sm >= 100 ? 40.1 : sm >= 90 ? 20.6 : sm == 86 ? 12.0 : sm >= 80 ? 20.0 : sm >= 70 ? 20.0
	       : sm >= 60 ? 18.0 : 20.0;
}

/* ncclTopoGetInterCpuBw from the <cpu> attributes. */
static double
inter_cpu_gbs(Reader *r, const xmlNode *x)
{
	const char *arch = attr(r, x, "arch"), *vendor = attr(r, x, "vendor");
	long fam = 0, model = 0;
	if (!arch)
		return LOC_GBS;
	if (strncmp(arch, "ppc64", 5) == 0)
		return 32.0;
	if (strncmp(arch, "arm64", 5) == 0)
		return 6.0;
	if (strncmp(arch, "x86_64", 6) != 0 || !vendor)
		return LOC_GBS;
	if (strncmp(vendor, "GenuineIntel", 12) == 0) {
		if (int_attr(r, x, "familyid", true, 0, 1L << 30, 0, &fam) != 0 ||
		    int_attr(r, x, "modelid", true, 0, 1L << 30, 0, &model) != 0)
			return LOC_GBS;
		return fam == 6 && model >= 0xCF ? 40.0 : fam == 6 && model >= 0x8F ? 22.0
		       : fam == 6 && model >= 0x55 ? 10.0 : 6.0;
	}
	if (strncmp(vendor, "AuthenticAMD", 12) == 0)
		return 16.0;
	if (strncmp(vendor, "CentaurHauls", 12) == 0 || strncmp(vendor, "  Shanghai  ", 12) == 0) {
		if (int_attr(r, x, "familyid", true, 0, 1L << 30, 0, &fam) != 0 ||
		    int_attr(r, x, "modelid", true, 0, 1L << 30, 0, &model) != 0)
			return LOC_GBS;
		return fam == 7 && model == 0x5B ? 9.0 : 6.0;
	}
	return LOC_GBS;
}

static int
too_many(Reader *r, const xmlNode *x)
{
	FAIL(r, x, "more than %d nodes in the box (the limit on a topology's nodes, docs/limits.md)",
	     MAX_NODES);
	return -1;
}

/* <nic>'s <net> children (those with dev=, as ncclTopoAddNic). */
static void
read_nic(Reader *r, const xmlNode *x, int nic)
{
	for (const xmlNode *c = x->children; c; c = c->next) {
		if (!is(c, "net") || !xmlHasProp(c, (const xmlChar *)"dev"))
			continue;
		long dev, speed, port, gdr;
		if (int_attr(r, c, "dev", true, 0, 1L << 30, 0, &dev) != 0 ||
		    int_attr(r, c, "speed", false, -(1L << 30), 1L << 30, 0, &speed) != 0 ||
		    int_attr(r, c, "port", false, 0, 1L << 30, 0, &port) != 0 ||
		    int_attr(r, c, "gdr", false, 0, 1, 0, &gdr) != 0)
			continue;
		if (speed <= 0)
			speed = 10000; /* NCCL: some NICs say -1 */
		const char *name = attr(r, c, "name");
		NcclNet n = {nic, name ? name : "net", (int)dev, (int)port, (int)gdr, speed / 8000.0,
		             node_loc(r, c)};
		VEC_PUSH(r->a, r->box->net, r->box->nnet, r->ncap_net, n);
	}
}

static void read_pci(Reader *r, const xmlNode *x, int parent);

/* <gpu> under its <pci>: the node and its PCI link; NVLinks come later,
 * when every GPU's bus id is known. */
static void
read_gpu(Reader *r, const xmlNode *x, const char *busid, int parent, double pci_gbs)
{
	long dev, sm, rank;
	if (int_attr(r, x, "rank", true, 0, MAX_NODES - 1, 0, &rank) != 0 ||
	    int_attr(r, x, "dev", false, 0, 1L << 30, 0, &dev) != 0 ||
	    int_attr(r, x, "sm", true, 1, 10000, 0, &sm) != 0)
		return;
	int v = add_node(r, NCCL_GPU, busid, node_loc(r, x));
	if (v < 0) {
		too_many(r, x);
		return;
	}
	NcclGpu g = {v, (int)rank, (int)dev, (int)sm, 0, 0, nccl_nvlink_gbs((int)sm), pci_gbs,
	             node_loc(r, x)};
	VEC_PUSH(r->a, r->box->gpu, r->box->ngpu, r->gcap, g);
	connect2(r, v, parent, NCCL_PCI_LINK, pci_gbs, 0);
}

/* ncclTopoAddPci: a GPU, a NIC, or a PCI switch with its subtree; other
 * classes (an NVSwitch's own PCI function, a device with nothing NCCL
 * uses under it) make no node, as in NCCL. */
static void
read_pci(Reader *r, const xmlNode *x, int parent)
{
	const char *busid = attr(r, x, "busid"), *cls = attr(r, x, "class");
	if (!busid || !cls) {
		FAIL(r, x, "<pci> needs busid= and class= (NCCL reads both)");
		return;
	}
	long width;
	if (int_attr(r, x, "link_width", true, 0, 1024, 0, &width) != 0)
		return;
	double gbs = nccl_pci_gbs(attr(r, x, "link_speed"), (int)width);
	bool gpu = false;
	for (const xmlNode *c = x->children; c; c = c->next)
		if (is(c, "gpu")) {
			read_gpu(r, c, busid, parent, gbs);
			gpu = true;
		}
	if (gpu)
		return;
	for (const xmlNode *c = x->children; c; c = c->next)
		if (is(c, "nic")) {
			int v = add_node(r, NCCL_NIC, busid, node_loc(r, x));
			if (v < 0) {
				too_many(r, x);
				return;
			}
			r->box->nnic++;
			read_nic(r, c, v);
			connect2(r, v, parent, NCCL_PCI_LINK, gbs, 0);
			return;
		}
	bool pci = strncmp(cls, "0x060400", 8) == 0 || strncmp(cls, "0x080100", 8) == 0 ||
	           (strncmp(cls, "0x0680", 6) != 0 && strncmp(cls, "0x03", 4) != 0 &&
	            strncmp(cls, "0x02", 4) != 0);
	if (!pci)
		return;
	int v = add_node(r, NCCL_PCI, busid, node_loc(r, x));
	if (v < 0) {
		too_many(r, x);
		return;
	}
	r->box->npci++;
	connect2(r, v, parent, NCCL_PCI_LINK, gbs, 0);
	for (const xmlNode *c = x->children; c; c = c->next)
		if (is(c, "pci"))
			read_pci(r, c, v);
}

/* The GPUs by busid in r->bus, once they are all read and ranked. */
static void
index_buses(Reader *r)
{
	const NcclBox *b = r->box;
	r->bus = arena_array(r->a, (size_t)b->ngpu + 1, sizeof *r->bus);
	for (int g = 0; g < b->ngpu; g++)
		r->bus[g] = (BusGpu){b->node[b->gpu[g].node].label, g};
	qsort(r->bus, (size_t)b->ngpu, sizeof *r->bus, by_bus);
}

/* The first GPU by rank whose busid is this one (case aside), or -1: a
 * binary search, so every nvlink's target costs log GPUs. */
static int
find_gpu_bus(const Reader *r, const char *busid)
{
	int lo = 0, hi = r->box->ngpu;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (strcasecmp(r->bus[mid].bus, busid) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->box->ngpu && strcasecmp(r->bus[lo].bus, busid) == 0 ? r->bus[lo].gpu : -1;
}

/* ncclTopoAddNvLinks and ncclTopoAddC2c for one <gpu>. */
static void
read_gpu_links(Reader *r, const xmlNode *x, int gpu, int cpu, const char ***seen, int *nseen,
               int *seen_cap)
{
	NcclBox *b = r->box;
	NcclGpu *g = &b->gpu[gpu];
	for (const xmlNode *c = x->children; c; c = c->next) {
		if (is(c, "c2c")) {
			long bw, count;
			if (int_attr(r, c, "bw", true, 0, 1L << 30, 0, &bw) == 0 &&
			    int_attr(r, c, "count", true, 0, 1024, 0, &count) == 0)
				connect2(r, g->node, cpu, NCCL_C2C, (double)bw * (double)count / 1000.0, 0);
			continue;
		}
		if (!is(c, "nvlink"))
			continue;
		long count;
		const char *tclass = attr(r, c, "tclass"), *target = attr(r, c, "target");
		if (int_attr(r, c, "count", true, 0, 1024, 0, &count) != 0)
			continue;
		if (!tclass) {
			FAIL(r, c, "<nvlink> has no tclass= attribute; NCCL needs it");
			continue;
		}
		double gbs = (double)count * g->nvlink_gbs;
		if (strncmp(tclass, "0x03", 4) == 0) {
			int t = target ? find_gpu_bus(r, target) : -1;
			if (t < 0) {
				FAIL(r, c, "<nvlink target=\"%s\">: no GPU of this file has that busid",
				     target ? target : "");
				continue;
			}
			connect1(r, g->node, b->gpu[t].node, NCCL_NVL, gbs, (int)count);
			g->gpu_links += (int)count;
		} else if (strncmp(tclass, "0x068001", 8) == 0) {
			connect2(r, g->node, cpu, NCCL_NVL, gbs, (int)count);
		} else if (strncmp(tclass, "0x068000", 8) == 0) {
			if (b->nvs < 0 && (b->nvs = add_node(r, NCCL_NVS, "nvswitch", node_loc(r, c))) < 0) {
				too_many(r, c);
				return;
			}
			connect2(r, g->node, b->nvs, NCCL_NVL, gbs, (int)count);
			g->nvs_links += (int)count;
			const char *t = target ? target : ""; /* counted once each at the end */
			VEC_PUSH(r->a, *seen, *nseen, *seen_cap, t);
		} else {
			FAIL(r, c, "<nvlink tclass=\"%s\">: not a GPU (0x03...), an NVSwitch (0x068000) "
			     "or a CPU (0x068001)", tclass);
		}
	}
}

/* The GPUs' links, walking the tree again with each GPU's CPU at hand. */
static void
read_links(Reader *r, const xmlNode *x, int cpu, const char ***seen, int *nseen, int *cap)
{
	for (const xmlNode *c = x->children; c; c = c->next) {
		if (is(c, "pci")) {
			read_links(r, c, cpu, seen, nseen, cap);
		} else if (is(c, "gpu")) {
			const char *busid = attr(r, x, "busid");
			int g = busid ? find_gpu_bus(r, busid) : -1;
			if (g >= 0)
				read_gpu_links(r, c, g, cpu, seen, nseen, cap);
		}
	}
}

static int
by_rank(const void *x, const void *y)
{
	const NcclGpu *a = x, *b = y;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

static void
read_system(Reader *r, const xmlNode *sys)
{
	NcclBox *b = r->box;
	int ncpu = 0, cpu_cap = 0;
	CpuInfo *cpus = NULL;
	for (const xmlNode *x = sys->children; x && !r->errors; x = x->next) {
		if (!is(x, "cpu"))
			continue;
		long numa;
		if (int_attr(r, x, "numaid", true, -1, 1L << 30, 0, &numa) != 0)
			continue;
		int v = add_node(r, NCCL_CPU, arena_printf(r->a, "numa %ld", numa), node_loc(r, x));
		if (v < 0) {
			too_many(r, x);
			break;
		}
		CpuInfo ci = {v, inter_cpu_gbs(r, x)};
		VEC_PUSH(r->a, cpus, ncpu, cpu_cap, ci);
		int cpu_nic = -1; /* NICs right under <cpu> are one NIC per CPU in NCCL */
		for (const xmlNode *c = x->children; c; c = c->next) {
			if (is(c, "pci"))
				read_pci(r, c, v);
			else if (is(c, "nic")) {
				if (cpu_nic < 0) {
					if ((cpu_nic = add_node(r, NCCL_NIC, arena_printf(r->a, "numa %ld nic", numa),
					                        node_loc(r, c))) < 0) {
						too_many(r, c);
						break;
					}
					b->nnic++;
					connect2(r, v, cpu_nic, NCCL_PCI_LINK, LOC_GBS, 0);
				}
				read_nic(r, c, cpu_nic);
			}
		}
	}
	b->ncpu = ncpu;
	if (r->errors)
		return;
	if (b->ngpu == 0) {
		FAIL(r, sys, "no <gpu> element: collc needs each GPU as <gpu dev sm rank> inside its "
		     "<pci>, as NCCL_TOPO_DUMP_FILE writes it (a file with PCI devices only, for "
		     "NCCL_TOPO_FILE, leaves the GPUs for NCCL to find on the machine)");
		return;
	}
	/* ranks must name the GPUs 0..n-1 once each */
	sort_n(b->gpu, (size_t)b->ngpu, sizeof *b->gpu, by_rank);
	for (int g = 0; g < b->ngpu; g++)
		if (b->gpu[g].rank != g) {
			error_at(r->dg, b->gpu[g].loc, "<gpu rank=\"%d\">: the GPUs' ranks must be 0..%d, each once "
			         "(%s)", b->gpu[g].rank, b->ngpu - 1,
			         g > 0 && b->gpu[g - 1].rank == b->gpu[g].rank ? "this rank is taken twice"
			                                                      : "a rank is missing");
			r->errors++;
			return;
		}
	const char **seen = NULL;
	int nseen = 0, seen_cap = 0, k = 0;
	index_buses(r);
	for (const xmlNode *x = sys->children; x; x = x->next)
		if (is(x, "cpu") && k < ncpu)
			read_links(r, x, cpus[k++].node, &seen, &nseen, &seen_cap);
	/* the NVSwitch bus ids named, each once (case aside) */
	if (nseen > 1)
		qsort(seen, (size_t)nseen, sizeof *seen, by_name);
	for (int i = 0; i < nseen; i++)
		b->nvswitch_targets += i == 0 || strcasecmp(seen[i - 1], seen[i]) != 0;
	/* ncclTopoConnectCpus: every pair, each way at the sender's bandwidth */
	if ((double)ncpu * (ncpu - 1) > (double)MAX_LINKS - r->box->nlink) {
		FAIL(r, sys, "%d <cpu> elements: NCCL joins every pair, %.0f links with the box's %d, and "
		     "the limit on a topology's links is %d (docs/limits.md)", ncpu,
		     (double)ncpu * (ncpu - 1) + r->box->nlink, r->box->nlink, MAX_LINKS);
		return;
	}
	for (int i = 0; i < ncpu; i++)
		for (int j = 0; j < ncpu; j++)
			if (i != j)
				connect1(r, cpus[i].node, cpus[j].node, NCCL_SYS, cpus[i].sys_gbs, 0);
}

/* A DOCTYPE would bring a DTD and its entities: refused before parsing. */
static int
refuse_dtd(Reader *r)
{
	int line = 1;
	for (size_t i = 0; i < r->len; i++) {
		if (r->text[i] == '\n')
			line++;
		if (r->text[i] == '<' && i + 2 < r->len && r->text[i + 1] == '!' &&
		    (r->text[i + 2] == 'D' || r->text[i + 2] == 'E' || r->text[i + 2] == 'd')) {
			error_at(r->dg, line_loc(r, line), "a DOCTYPE or ENTITY declaration: NCCL's topology files "
			         "have none, and collc reads none");
			return -1;
		}
	}
	return 0;
}

int
nccl_box_read(Diag *dg, Arena *a, const char *text, size_t len, NcclBox *box)
{
	memset(box, 0, sizeof *box);
	box->nvs = -1;
	Reader r = {.dg = dg, .a = a, .text = text, .len = len, .box = box, .lines = {text, len, 0, 0}};
	if (len > (size_t)MAX_XML_INPUT_BYTES) {
		error_at(dg, (Loc){1, 1}, "the file is larger than %d bytes (docs/limits.md)",
		         MAX_XML_INPUT_BYTES);
		return -1;
	}
	if (refuse_dtd(&r) != 0)
		return -1;
	xmlDoc *doc = xml_parse(dg, text, len, 0, "");
	if (!doc)
		return -1;
	xmlNode *root = xmlDocGetRootElement(doc);
	if (!root || !is(root, "system"))
		error_at(dg, root ? node_loc(&r, root) : (Loc){1, 1}, "an NCCL topology file begins with "
		         "<system version=\"1\">");
	else
		read_system(&r, root);
	int bad = r.errors || !root || !is(root, "system");
	if (!bad)
		link_reverses(&r);
	hash_free(&r.links);
	xmlFreeDoc(doc);
	return bad ? -1 : 0;
}

/* GPUs first by rank, then every other node in the box's order. */
int
nccl_box_topo_node(const NcclBox *b, int v)
{
	if (b->node[v].kind == NCCL_GPU) {
		for (int g = 0; g < b->ngpu; g++)
			if (b->gpu[g].node == v)
				return g;
	}
	int id = b->ngpu;
	for (int u = 0; u < v; u++)
		id += b->node[u].kind != NCCL_GPU;
	return id;
}

int *
nccl_box_topo_ids(Arena *a, const NcclBox *b)
{
	int *id = arena_array(a, (size_t)b->nnode + 1, sizeof *id);
	int next = b->ngpu;
	for (int g = 0; g < b->ngpu; g++)
		id[b->gpu[g].node] = g;
	for (int v = 0; v < b->nnode; v++)
		if (b->node[v].kind != NCCL_GPU)
			id[v] = next++;
	return id;
}

Topo *
nccl_box_topo(Arena *a, const char *name, const NcclBox *b, Net net)
{
	int *id = nccl_box_topo_ids(a, b);
	unsigned char *sw = arena_alloc(a, (size_t)b->nnode + 1);
	for (int v = 0; v < b->nnode; v++)
		sw[id[v]] = b->node[v].kind != NCCL_GPU;
	Link *l = arena_array(a, (size_t)b->nlink, sizeof *l);
	for (int i = 0; i < b->nlink; i++)
		l[i] = (Link){.src = id[b->link[i].src], .dst = id[b->link[i].dst], .dim = -1,
		              .bandwidth = b->link[i].gbs * 8e9, .latency = net.link_latency,
		              .energy_per_bit = net.energy_per_bit};
	return topo_graph(a, name, b->nnode, sw, b->nlink, l, net);
}
