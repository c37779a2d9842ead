/*
 * test_nccl_topo.c: NCCL's topology XML (ir/nccl_topo.c) on the public
 * dumps of tests/fixtures/nccl-topo (each box against what its file says),
 * NCCL's bandwidth tables, located errors, and the graph that
 * `collc nccl-topo` writes loading, checking and building.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ast.h"
#include "ir.h"
#include "targets.h"
#include "tests.h"

#ifndef COLLC_BIN
#define COLLC_BIN "bin/collc"
#endif
#define FIX "tests/fixtures/nccl-topo/"

typedef struct Read {
	Arena arena;
	NcclBox box;
	int rc;
	char *diag;
} Read;

static void
read_text(Read *r, const char *name, const char *text, size_t len)
{
	memset(r, 0, sizeof *r);
	size_t dlen;
	FILE *mem = open_memstream(&r->diag, &dlen);
	Diag d = diag_new(), *dg = &d; /* this read's diagnostics */
	diag_stream(dg, mem);
	diag_source(dg, name, text, len);
	r->rc = nccl_box_read(dg, &r->arena, text, len, &r->box);
	fclose(mem);
}

static void
read_fixture(Read *r, const char *path, char **text)
{
	size_t len = 0;
	*text = slurp(path, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(*text);
	read_text(r, path, *text, len);
}

static void
read_free(Read *r, char *text)
{
	arena_free(&r->arena);
	free(r->diag);
	free(text);
}

/* The link src -> dst's GB/s, or -1. */
static double
link_gbs(const NcclBox *b, int src, int dst)
{
	for (int i = 0; i < b->nlink; i++)
		if (b->link[i].src == src && b->link[i].dst == dst)
			return b->link[i].gbs;
	return -1;
}

/* Every GPU: nvs NVLinks of 20.6 GB/s (sm 90) to the one NVS node, both
 * ways, its PCIe link at pci GB/s; the counts the file gives. */
static void
check_box(const NcclBox *b, int ngpu, int targets, int ncpu, int npci, int nnic, double net_gbs,
          double pci)
{
	CU_ASSERT_EQUAL(b->ngpu, ngpu);
	CU_ASSERT_EQUAL(b->nvswitch_targets, targets);
	CU_ASSERT_EQUAL(b->ncpu, ncpu);
	CU_ASSERT_EQUAL(b->npci, npci);
	CU_ASSERT_EQUAL(b->nnic, nnic);
	CU_ASSERT_EQUAL(b->nnet, nnic);
	CU_ASSERT_FATAL(b->nvs >= 0);
	for (int g = 0; g < b->ngpu; g++) {
		const NcclGpu *x = &b->gpu[g];
		CU_ASSERT_EQUAL(x->rank, g);
		CU_ASSERT_EQUAL(x->sm, 90);
		CU_ASSERT_EQUAL(x->nvs_links, 18);
		CU_ASSERT_EQUAL(x->gpu_links, 0);
		CU_ASSERT(near_rel(x->nvlink_gbs, 20.6, 1e-9));
		CU_ASSERT(near_rel(x->pci_gbs, pci, 1e-9));
		CU_ASSERT(near_rel(link_gbs(b, x->node, b->nvs), 370.8, 1e-9));
		CU_ASSERT(near_rel(link_gbs(b, b->nvs, x->node), 370.8, 1e-9));
	}
	for (int i = 0; i < b->nnet; i++)
		CU_ASSERT(near_rel(b->net[i].gbs, net_gbs, 1e-9));
}

static void
test_ibm_h100(void)
{
	Read r;
	char *text;
	read_fixture(&r, FIX "ibm-h100-topo.xml", &text);
	CU_ASSERT_EQUAL_FATAL(r.rc, 0);
	const NcclBox *b = &r.box;
	/* 8 GPUs, 4 NVSwitches named, 2 CPUs, 8 PCIe switches, 8 NICs of 200 Gb/s */
	check_box(b, 8, 4, 2, 8, 8, 25.0, 48.0);
	int cpu0 = -1, cpu1 = -1, bridges = 0;
	for (int v = 0; v < b->nnode; v++)
		if (b->node[v].kind == NCCL_CPU)
			*(cpu0 < 0 ? &cpu0 : &cpu1) = v;
	/* modelid 143 = 0x8F: NCCL's Sapphire Rapids figure; 2.5 GT/s x1 bridges */
	CU_ASSERT(near_rel(link_gbs(b, cpu0, cpu1), 22.0, 1e-9));
	CU_ASSERT(near_rel(link_gbs(b, cpu1, cpu0), 22.0, 1e-9));
	for (int i = 0; i < b->nlink; i++)
		bridges += b->link[i].kind == NCCL_PCI_LINK && near_rel(b->link[i].gbs, 0.1875, 1e-9);
	CU_ASSERT_EQUAL(bridges, 16);
	CU_ASSERT_STRING_EQUAL(b->node[b->gpu[7].node].label, "0000:ea:00.0");
	CU_ASSERT_EQUAL(b->gpu[7].loc.line, 117);
	Topo *t = nccl_box_topo(&r.arena, "B", b, net_defaults);
	CU_ASSERT_EQUAL(t->nnode, 27);
	CU_ASSERT_EQUAL(t->nrank, 8);
	CU_ASSERT_EQUAL(t->nlink, b->nlink);
	int nvs = nccl_box_topo_node(b, b->nvs);
	CU_ASSERT_EQUAL(nvs, 26);
	for (int g = 0; g < 8; g++) {
		int l = topo_find_link(t, g, nvs, 0);
		CU_ASSERT_FATAL(l >= 0);
		CU_ASSERT(near_rel(t->link[l].bandwidth, 370.8 * 8e9, 1e-9));
	}
	read_free(&r, text);
}

static void
test_issue_256(void)
{
	Read r;
	char *text;
	read_fixture(&r, FIX "nccl-tests-256-h200-baremetal.xml", &text);
	CU_ASSERT_EQUAL_FATAL(r.rc, 0);
	check_box(&r.box, 3, 4, 1, 3, 3, 50.0, 48.0);
	read_free(&r, text);
	/* the VM: every NVLink to one virtual target; PCIe Gen4 x16 */
	read_fixture(&r, FIX "nccl-tests-256-h200-vm.xml", &text);
	CU_ASSERT_EQUAL_FATAL(r.rc, 0);
	check_box(&r.box, 1, 1, 1, 0, 1, 50.0, 24.0);
	read_free(&r, text);
}

static void
test_no_gpus(void)
{
	Read r;
	char *text;
	read_fixture(&r, FIX "azure-ndv4-topo.xml", &text);
	CU_ASSERT_EQUAL(r.rc, -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.diag, "azure-ndv4-topo.xml:1:1: error: no <gpu> element"));
	read_free(&r, text);
}

/* NCCL's tables (src/graph/topo.h and topo.cc at 5067397c). */
static void
test_tables(void)
{
	CU_ASSERT(near_rel(nccl_nvlink_gbs(60), 18.0, 1e-9));
	CU_ASSERT(near_rel(nccl_nvlink_gbs(70), 20.0, 1e-9));
	CU_ASSERT(near_rel(nccl_nvlink_gbs(80), 20.0, 1e-9));
	CU_ASSERT(near_rel(nccl_nvlink_gbs(86), 12.0, 1e-9));
	CU_ASSERT(near_rel(nccl_nvlink_gbs(89), 20.0, 1e-9));
	CU_ASSERT(near_rel(nccl_nvlink_gbs(90), 20.6, 1e-9));
	CU_ASSERT(near_rel(nccl_nvlink_gbs(100), 40.1, 1e-9));
	CU_ASSERT(near_rel(nccl_nvlink_gbs(50), 20.0, 1e-9));
	CU_ASSERT(near_rel(nccl_pci_gbs("32.0 GT/s PCIe", 16), 48.0, 1e-9));
	CU_ASSERT(near_rel(nccl_pci_gbs("16 GT/s", 16), 24.0, 1e-9));
	CU_ASSERT(near_rel(nccl_pci_gbs("8.0 GT/s PCIe", 0), 12.0, 1e-9)); /* width 0 is 16 */
	CU_ASSERT(near_rel(nccl_pci_gbs("2.5 GT/s PCIe", 1), 0.1875, 1e-9));
	CU_ASSERT(near_rel(nccl_pci_gbs("64.0 GT/s PCIe", 2), 12.0, 1e-9));
	CU_ASSERT(near_rel(nccl_pci_gbs("unknown", 16), 12.0, 1e-9)); /* NCCL's fallback: Gen3 */
}

static const char *const head =
	"<system version=\"1\">\n"
	"  <cpu numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\">\n";

/* A small box with one line changed: the error and where it points. */
static void
expect_error(const char *body, const char *where_what)
{
	char text[2048];
	snprintf(text, sizeof text, "%s%s  </cpu>\n</system>\n", head, body);
	Read r;
	read_text(&r, "t.xml", text, strlen(text));
	CU_ASSERT_EQUAL(r.rc, -1);
	if (!strstr(r.diag, where_what))
		fprintf(stderr, "\nexpected '%s' in:\n%s", where_what, r.diag);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.diag, where_what));
	read_free(&r, NULL);
}

static void
test_errors(void)
{
	const char *gpu0 = "    <pci busid=\"0000:01:00.0\" class=\"0x030200\" link_speed=\"16 GT/s\" "
	                   "link_width=\"16\">\n      <gpu dev=\"0\" sm=\"80\" rank=\"0\">\n";
	char b[1024];
	snprintf(b, sizeof b, "%s        <nvlink target=\"0000:09:00.0\" count=\"4\" "
	         "tclass=\"0x030200\"/>\n      </gpu>\n    </pci>\n", gpu0);
	expect_error(b, "t.xml:5:9: error: <nvlink target=\"0000:09:00.0\">: no GPU");
	snprintf(b, sizeof b, "%s        <nvlink target=\"x\" count=\"4\" tclass=\"0x010000\"/>\n"
	         "      </gpu>\n    </pci>\n", gpu0);
	expect_error(b, "t.xml:5:9: error: <nvlink tclass=\"0x010000\">");
	snprintf(b, sizeof b, "%s        <nvlink target=\"x\" count=\"many\" tclass=\"0x068000\"/>\n"
	         "      </gpu>\n    </pci>\n", gpu0);
	expect_error(b, "t.xml:5:9: error: <nvlink count=\"many\">: not an integer");
	expect_error("    <pci busid=\"0000:01:00.0\" class=\"0x030200\" link_width=\"16\">\n"
	             "      <gpu dev=\"0\" rank=\"0\"/>\n    </pci>\n",
	             "t.xml:4:7: error: <gpu> has no sm= attribute");
	expect_error("    <pci busid=\"0000:01:00.0\" class=\"0x030200\" link_width=\"16\">\n"
	             "      <gpu sm=\"90\" rank=\"0\"/>\n    </pci>\n"
	             "    <pci busid=\"0000:02:00.0\" class=\"0x030200\" link_width=\"16\">\n"
	             "      <gpu sm=\"90\" rank=\"0\"/>\n    </pci>\n",
	             "this rank is taken twice");
	expect_error("    <pci busid=\"0000:01:00.0\" class=\"0x030200\" link_width=\"16\">\n"
	             "      <gpu sm=\"90\" rank=\"1\"/>\n    </pci>\n", "a rank is missing");
	expect_error("    <pci class=\"0x060400\" link_width=\"16\"/>\n",
	             "t.xml:3:5: error: <pci> needs busid= and class=");
	expect_error("    <pci busid=\"0000:01:00.0\" class=\"0x030200\" link_width=\"16\">\n",
	             "t.xml:6:1: error: not well-formed XML");

	Read r;
	const char *dtd = "<!DOCTYPE system [<!ENTITY x \"y\">]>\n<system version=\"1\"/>\n";
	read_text(&r, "t.xml", dtd, strlen(dtd));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.diag, "t.xml:1:1: error: a DOCTYPE or ENTITY declaration"));
	read_free(&r, NULL);
	const char *other = "<algo name=\"x\"/>\n";
	read_text(&r, "t.xml", other, strlen(other));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.diag, "t.xml:1:1: error: an NCCL topology file begins"));
	read_free(&r, NULL);
}

/* Bytes libxml2 cannot read: its encoding layer printed its own lines
 * ("encoding error : input conversion failed ...", "I/O error : encoder
 * error") on collc's standard error, under XML_PARSE_NOERROR, before the
 * located error; and its words on an attribute name of invalid UTF-8 were
 * printed raw in the message. Now the located error alone, escaped. */
static void
test_unreadable_bytes(void)
{
	static const struct {
		const char *text, *error;
	} at[] = {
		{"<?xml version=\"1.0\" encoding=\"EUC-JP\"?><system>\x8e\xff\x01\xa1</system>\n",
		 ":1:48: error: not well-formed XML: Premature end of data in tag system line 1\n"},
		{"<system version=\"1\"><cpu numaid=\"0\" \xff\xfe></cpu></system>\n",
		 ":1:39: error: not well-formed XML: Specification mandates value for attribute "
		 "\\xFF\\xFE\n"},
	};
	for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
		char path[] = "/tmp/collc-bytes-XXXXXX", cmd[256];
		FILE *f = temp_file(path);
		fputs(at[i].text, f);
		fclose(f);
		snprintf(cmd, sizeof cmd, COLLC_BIN " nccl-topo %s 2>&1 >/dev/null", path);
		int st = -1;
		char *err = run_all(cmd, &st), want[256];
		snprintf(want, sizeof want, "%s%s", path, at[i].error);
		assert_named(st == 1 && err && strncmp(err, want, strlen(want)) == 0, __LINE__, __FILE__,
		             "case %zu: status %d, standard error:\n%s", i, st, err ? err : "");
		free(err);
		remove(path);
	}
}

/* Direct GPU-to-GPU NVLinks (a DGX-1-like hybrid cube mesh pair) and a c2c
 * link: the counts and NCCL's bandwidths, one way each as the file lists. */
static void
test_direct_nvlinks(void)
{
	const char *text =
		"<system version=\"1\">\n"
		"  <cpu numaid=\"0\" arch=\"arm64\">\n"
		"    <pci busid=\"0000:01:00.0\" class=\"0x030200\" link_speed=\"8.0 GT/s PCIe\" link_width=\"16\">\n"
		"      <gpu dev=\"0\" sm=\"70\" rank=\"0\">\n"
		"        <nvlink target=\"0000:02:00.0\" count=\"2\" tclass=\"0x030200\"/>\n"
		"        <c2c bw=\"20000\" count=\"3\"/>\n"
		"      </gpu>\n"
		"    </pci>\n"
		"    <pci busid=\"0000:02:00.0\" class=\"0x030200\" link_speed=\"8.0 GT/s PCIe\" link_width=\"16\">\n"
		"      <gpu dev=\"1\" sm=\"70\" rank=\"1\">\n"
		"        <nvlink target=\"0000:01:00.0\" count=\"2\" tclass=\"0x030200\"/>\n"
		"      </gpu>\n"
		"    </pci>\n"
		"  </cpu>\n"
		"  <cpu numaid=\"1\" arch=\"arm64\"/>\n"
		"</system>\n";
	Read r;
	read_text(&r, "t.xml", text, strlen(text));
	CU_ASSERT_EQUAL_FATAL(r.rc, 0);
	const NcclBox *b = &r.box;
	CU_ASSERT_EQUAL(b->ngpu, 2);
	CU_ASSERT_EQUAL(b->nvs, -1);
	CU_ASSERT_EQUAL(b->gpu[0].gpu_links, 2);
	CU_ASSERT(near_rel(link_gbs(b, b->gpu[0].node, b->gpu[1].node), 40.0, 1e-9));
	CU_ASSERT(near_rel(link_gbs(b, b->gpu[1].node, b->gpu[0].node), 40.0, 1e-9));
	CU_ASSERT(near_rel(link_gbs(b, b->gpu[0].node, 0), 12.0, 1e-9)); /* PCIe Gen3 x16 */
	int c2c = 0;
	for (int i = 0; i < b->nlink; i++)
		c2c += b->link[i].kind == NCCL_C2C && near_rel(b->link[i].gbs, 60.0, 1e-9);
	CU_ASSERT_EQUAL(c2c, 2);
	CU_ASSERT(near_rel(link_gbs(b, 0, b->nnode - 1), 6.0, 1e-9)); /* arm64: NCCL's ARM_BW */
	read_free(&r, NULL);
}

/* `collc nccl-topo` on every fixture that has GPUs: the declaration it
 * writes checks, and an allreduce ring builds and verifies on it. */
static void
test_cli_loads(void)
{
	const char *files[] = {"ibm-h100-topo.xml", "nccl-tests-256-h200-baremetal.xml",
	                       "nccl-tests-256-h200-vm.xml"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char cmd[512];
		snprintf(cmd, sizeof cmd, COLLC_BIN " nccl-topo " FIX "%s", files[i]);
		FILE *p = popen(cmd, "r");
		CU_ASSERT_PTR_NOT_NULL_FATAL(p);
		char *out = NULL;
		size_t len = 0, cap = 0;
		char buf[4096];
		for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) {
			if (len + n + 256 > cap) {
				cap = 2 * (len + n + 256);
				out = realloc(out, cap);
			}
			memcpy(out + len, buf, n);
			len += n;
		}
		CU_ASSERT_EQUAL(pclose(p), 0);
		CU_ASSERT_FATAL(out != NULL);
		const char *coll = i == 2 ? "" : "collective allreduce AR on B {\n    algorithm ring;\n}\n";
		memcpy(out + len, coll, strlen(coll) + 1);
		Checked c;
		Diag d = diag_new(); /* this build's diagnostics */
		check_built(&d, &c, files[i], out, strlen(out));
		CU_ASSERT_EQUAL(c.errors, 0);
		if (c.errors)
			fprintf(stderr, "\n%s", c.diag);
		checked_free(&c);
		free(out);
	}
}

/* The fuzz target on every fixture and on each cut short: no abort. */
static void
test_fuzz_target(void)
{
	const char *files[] = {"ibm-h100-topo.xml", "nccl-tests-256-h200-baremetal.xml",
	                       "nccl-tests-256-h200-vm.xml", "azure-ndv4-topo.xml"};
	FILE *null = fopen("/dev/null", "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(null);
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char path[256];
		size_t len = 0;
		snprintf(path, sizeof path, FIX "%s", files[i]);
		char *text = slurp(path, &len);
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		for (size_t cut = len; cut > 0; cut = cut > 997 ? cut - 997 : 0)
			fuzz_ncclxml(path, (const uint8_t *)text, cut, null);
		free(text);
	}
	fclose(null);
	/* the coll target reads a file's boxes as the commands do: both .coll
	 * files naming a fixture lower without a word (it said "the file was
	 * not read" before) */
	const char *colls[] = {FIX "h100-box.coll", FIX "h100-rails-2.coll"};
	for (int i = 0; i < 2; i++) {
		size_t len = 0, dlen = 0;
		char *text = slurp(colls[i], &len), *said = NULL;
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		FILE *mem = open_memstream(&said, &dlen);
		fuzz_coll(colls[i], (const uint8_t *)text, len, mem);
		fclose(mem);
		assert_named(dlen == 0, __LINE__, __FILE__, "%s: %s", colls[i], said);
		free(said);
		free(text);
	}
}

/* A .coll file's one topology, built as the driver builds it. */
static Topo *
built_topo(Diag *dg, Checked *c, Prog *p, const char *path)
{
	size_t len;
	char *text = slurp(path, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	check_text(dg, c, path, text, len);
	free(text);
	if (c->errors) {
		fprintf(stderr, "\n%s", c->diag);
		return NULL;
	}
	return lower(dg, c->file, p) == 0 && p->ntopo == 1 ? p->topo[0] : NULL;
}

static const Link *
find_link(const Topo *t, int src, int dst)
{
	for (int i = 0; i < t->nlink; i++)
		if (t->link[i].src == src && t->link[i].dst == dst)
			return &t->link[i];
	return NULL;
}

/* nccl_topo("ibm-h100-topo.xml") in a .coll file (the path relative to its
 * folder) is the graph `collc nccl-topo` writes for that file, which
 * examples/nccl-topo-h100.coll holds: the same nodes, switches and links,
 * each link's bandwidth and latency. */
static void
test_coll_source(void)
{
	Diag d = diag_new();
	Checked a, b;
	Prog pa = {0}, pb = {0};
	const Topo *x = built_topo(&d, &a, &pa, FIX "h100-box.coll");
	const Topo *y = built_topo(&d, &b, &pb, "examples/nccl-topo-h100.coll");
	CU_ASSERT_FATAL(x && y);
	CU_ASSERT_EQUAL(x->kind, TK_GRAPH);
	CU_ASSERT_EQUAL(x->nrank, 8);
	CU_ASSERT_EQUAL(x->nnode, y->nnode);
	CU_ASSERT_EQUAL(x->nlink, y->nlink);
	for (int v = 0; v < x->nnode && x->nnode == y->nnode; v++)
		CU_ASSERT_EQUAL(!x->is_switch || !x->is_switch[v], !y->is_switch || !y->is_switch[v]);
	int same = 0;
	for (int i = 0; i < x->nlink; i++) {
		const Link *l = &x->link[i], *m = find_link(y, l->src, l->dst);
		same += m && near_rel(l->bandwidth, m->bandwidth, 1e-9) && l->latency == m->latency;
	}
	CU_ASSERT_EQUAL(same, y->nlink);
	prog_free(&pa);
	prog_free(&pb);
	checked_free(&a);
	checked_free(&b);
}


/* An error in the XML a .coll file names: at its line in the XML, with a
 * note at the string naming the file; exit 1 and nothing on stdout. */
static void
test_coll_source_errors(void)
{
	int status;
	char *out = run_all(COLLC_BIN " check " FIX "bad-nvlink-target.coll 2>&1", &status);
	const char *want =
	    FIX "bad-nvlink-target.xml:5:9: error: <nvlink target=\"0000:09:00.0\">: no GPU of this "
	    "file has that busid\n"
	    "        <nvlink target=\"0000:09:00.0\" count=\"18\" tclass=\"0x030200\"/>\n"
	    "        ^\n" FIX "bad-nvlink-target.coll:3:24: note: in the NCCL topology file nccl_topo "
	    "reads here\n"
	    "topology B = nccl_topo(\"bad-nvlink-target.xml\");\n"
	    "                       ^\n";
	CU_ASSERT_EQUAL(status, 1);
	assert_named(strcmp(out, want) == 0, __LINE__, __FILE__, "expected\n%sgot\n%s", want, out);
	free(out);
	out = run_all(COLLC_BIN " check " FIX "bad-nvlink-target.coll 2>/dev/null", &status);
	CU_ASSERT_EQUAL(status, 1);
	CU_ASSERT_STRING_EQUAL(out, "");
	free(out);
}

/* The id of the node named `name` in t, or -1. */
static int
named(const Topo *t, const char *name)
{
	char buf[64];
	for (int v = 0; v < t->nnode; v++) {
		topo_node_name(t, v, buf, sizeof buf);
		if (strcmp(buf, name) == 0)
			return v;
	}
	return -1;
}

/* Bit/s of the links u -> v and v -> u, both there and equal, or -1. */
static double
both_ways(const Topo *t, int u, int v)
{
	const Link *a = u >= 0 && v >= 0 ? find_link(t, u, v) : NULL;
	const Link *b = a ? find_link(t, v, u) : NULL;
	return b && a->bandwidth == b->bandwidth ? a->bandwidth : -1;
}

/* rails(boxes 2, box nccl_topo(IBM's H100 file)) against the file: each
 * box's GPUs with their NVLinks x NCCL's rate to the box's NVSwitch, its
 * NICs at their speed, each GPU's PCIe path to its NIC, twice, plus a rail
 * per NIC; names and rank order as rails gives them; check and sim run. */
static void
test_cluster_box(void)
{
	Read r;
	char *xml;
	read_fixture(&r, FIX "ibm-h100-topo.xml", &xml);
	const NcclBox *x = &r.box;
	Diag d = diag_new();
	Checked c;
	Prog p = {0};
	const Topo *t = built_topo(&d, &c, &p, FIX "h100-rails-2.coll");
	CU_ASSERT_FATAL(t != NULL && x->ngpu == 8 && x->nnic == 8);
	CU_ASSERT_EQUAL(t->kind, TK_RAILS);
	CU_ASSERT_EQUAL(t->nrank, 2 * x->ngpu);
	CU_ASSERT_EQUAL(t->nnode, 2 * x->ngpu + 2 + x->nnic + 2 * x->nnic);
	CU_ASSERT_EQUAL(t->nlink, 2 * (2 * x->ngpu * 2 + 2 * x->nnic));
	int good = 0;
	for (int b = 0; b < 2; b++)
		for (int g = 0; g < x->ngpu; g++) {
			char gpu[32], nvs[32], nic[32], rail[32];
			snprintf(gpu, sizeof gpu, "gpu(%d, %d)", b, g);
			snprintf(nvs, sizeof nvs, "nvswitch(%d)", b);
			snprintf(nic, sizeof nic, "nic(%d, %d)", b, g);
			snprintf(rail, sizeof rail, "rail(%d)", g);
			const NcclGpu *y = &x->gpu[g];
			double nvl = (y->nvs_links + y->gpu_links) * y->nvlink_gbs * 8e9;
			double speed = x->net[g].gbs * 8e9; /* every NIC's, as the file says */
			good += named(t, gpu) == b * x->ngpu + g && y->nvs_links == 18 &&
			        near_rel(both_ways(t, named(t, gpu), named(t, nvs)), nvl, 1e-9) &&
			        both_ways(t, named(t, gpu), named(t, nic)) == 48 * 8e9 && speed == 25 * 8e9 &&
			        both_ways(t, named(t, nic), named(t, rail)) == speed;
		}
	CU_ASSERT_EQUAL(good, 2 * x->ngpu);
	prog_free(&p);
	checked_free(&c);
	read_free(&r, xml);
	int status;
	char *out = run_all(COLLC_BIN " sim " FIX "h100-rails-2.coll --sizes 1MiB 2>&1", &status);
	CU_ASSERT_EQUAL(status, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "AR          ring       1048576"));
	free(out);
}

/* What a cluster form cannot take from a file: an error in the XML, a note
 * at the string; and the values the box gives are not written too. */
static void
test_cluster_box_errors(void)
{
	Diag d = diag_new();
	Checked c;
	const char *vm = "topology C = rails(boxes 2, box nccl_topo(\"nccl-tests-256-h200-vm.xml\"));\n";
	check_text(&d, &c, FIX "vm.coll", vm, strlen(vm));
	CU_ASSERT_PTR_NOT_NULL(strstr(c.diag, FIX "nccl-tests-256-h200-vm.xml:4:7: error: a cluster's "
	                                      "box has at least 2 GPUs; this file has 1"));
	CU_ASSERT_PTR_NOT_NULL(strstr(c.diag, FIX "vm.coll:1:43: note: in the NCCL topology file"));
	checked_free(&c);
	const char *twice = "topology C = rails(boxes 2, box nccl_topo(\"ibm-h100-topo.xml\"), gpus 8);\n";
	check_text(&d, &c, FIX "twice.coll", twice, strlen(twice));
	CU_ASSERT_PTR_NOT_NULL(strstr(c.diag, "twice.coll:1:65: error: rails: the box gives 'gpus'"));
	checked_free(&c);
}

/* torus_boxes(boxes 3, 3, box nccl_topo(IBM's H100 file)) against the
 * file: nine boxes of its GPUs on their NVSwitch at the file's NVLinks x
 * NCCL's rate, each GPU's NIC a cable at the file's speed (its PCIe path,
 * 48 GB/s, is wider), and nothing else. */
static void
test_torus_box(void)
{
	Read r;
	char *xml;
	read_fixture(&r, FIX "ibm-h100-topo.xml", &xml);
	const NcclBox *x = &r.box;
	Diag d = diag_new();
	Checked c;
	Prog p = {0};
	const Topo *t = built_topo(&d, &c, &p, FIX "h100-torus-3x3.coll");
	CU_ASSERT_FATAL(t != NULL && x->ngpu == 8 && x->nnic == 8);
	CU_ASSERT_EQUAL(t->kind, TK_TORUS_BOXES);
	CU_ASSERT_EQUAL(t->nrank, 9 * x->ngpu);
	CU_ASSERT_EQUAL(t->nnode, 9 * x->ngpu + 9);               /* GPUs, an NVSwitch a box */
	CU_ASSERT_EQUAL(t->nlink, 9 * (2 * x->ngpu + x->nnic)); /* to the switch and back, a cable */
	int good = 0;
	for (int b = 0; b < 9; b++)
		for (int g = 0; g < x->ngpu; g++) {
			char gpu[32], nvs[32];
			snprintf(gpu, sizeof gpu, "gpu(%d, %d)", b, g);
			snprintf(nvs, sizeof nvs, "nvswitch(%d)", b);
			const NcclGpu *y = &x->gpu[g];
			int v = named(t, gpu), cables = 0;
			for (int i = 0; i < t->nlink; i++)
				cables += t->link[i].src == v && t->link[i].dst < t->nrank &&
				          t->link[i].dst / x->ngpu != b && t->link[i].bandwidth == x->net[g].gbs * 8e9;
			good += v == b * x->ngpu + g && cables == 1 && x->net[g].gbs == 25 &&
			        near_rel(both_ways(t, v, named(t, nvs)), y->nvs_links * y->nvlink_gbs * 8e9, 1e-9);
		}
	CU_ASSERT_EQUAL(good, 9 * x->ngpu);
	prog_free(&p);
	checked_free(&c);
	read_free(&r, xml);
}

/* xgmi_rails(boxes 2, box nccl_topo(a 4 x A100 mesh)) against the file:
 * each pair of a box's GPUs at its NVLinks x NCCL's 20 GB/s, each way; two
 * GPUs a NIC over their PCIe path, the NICs on rails at the file's speed. */
static void
test_mesh_box(void)
{
	Read r;
	char *xml;
	read_fixture(&r, FIX "a100-mesh-4.xml", &xml);
	const NcclBox *x = &r.box;
	Diag d = diag_new();
	Checked c;
	Prog p = {0};
	const Topo *t = built_topo(&d, &c, &p, FIX "a100-mesh-rails-2.coll");
	CU_ASSERT_FATAL(t != NULL && x->ngpu == 4 && x->nnic == 2);
	CU_ASSERT_EQUAL(t->kind, TK_XGMI_RAILS);
	CU_ASSERT_EQUAL(t->nrank, 2 * x->ngpu);
	CU_ASSERT_EQUAL(t->nnode, 2 * x->ngpu + x->nnic + 2 * x->nnic); /* GPUs, rails, NICs */
	/* a box: each ordered pair, GPU <-> NIC, NIC <-> rail */
	CU_ASSERT_EQUAL(t->nlink, 2 * (x->ngpu * (x->ngpu - 1) + 2 * x->ngpu + 2 * x->nnic));
	int good = 0, nvlinks = 0;
	for (int i = 0; i < x->nlink; i++)
		nvlinks += x->link[i].kind == NCCL_NVL ? x->link[i].nvlinks : 0;
	for (int b = 0; b < 2; b++)
		for (int g = 0; g < x->ngpu; g++) {
			char gpu[32], nic[32], rail[32];
			snprintf(gpu, sizeof gpu, "gpu(%d, %d)", b, g);
			snprintf(nic, sizeof nic, "nic(%d, %d)", b, g / 2);
			snprintf(rail, sizeof rail, "rail(%d)", g / 2);
			int v = named(t, gpu), pairs = 0;
			for (int h = 0; h < x->ngpu; h++)
				pairs += h != g && both_ways(t, v, b * x->ngpu + h) == 4 * 20 * 8e9;
			good += v == b * x->ngpu + g && pairs == x->ngpu - 1 &&
			        both_ways(t, v, named(t, nic)) == 24 * 8e9 &&
			        both_ways(t, named(t, nic), named(t, rail)) == x->net[g / 2].gbs * 8e9;
		}
	CU_ASSERT_EQUAL(nvlinks, 4 * x->ngpu * (x->ngpu - 1)); /* 4 a pair, each GPU lists its own */
	CU_ASSERT_EQUAL(good, 2 * x->ngpu);
	prog_free(&p);
	checked_free(&c);
	read_free(&r, xml);
}

/* The boxes torus_boxes and xgmi_rails cannot take: located errors. */
static void
test_box_refusals(void)
{
	static const char two[] = /* two H200s sharing one NIC (nccl-tests #256's VM box, twice) */
		"<system version=\"1\"><cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\" "
		"familyid=\"6\" modelid=\"207\">\n"
		"<pci busid=\"0000:05:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">"
		"<gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\"><nvlink target=\"fffffff:ff:ff.0\" count=\"18\" "
		"tclass=\"0x068000\"/></gpu></pci>\n"
		"<pci busid=\"0000:06:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">"
		"<gpu dev=\"1\" sm=\"90\" rank=\"1\" gdr=\"1\"><nvlink target=\"fffffff:ff:ff.0\" count=\"18\" "
		"tclass=\"0x068000\"/></gpu></pci>\n"
		"<pci busid=\"0000:0d:00.0\" class=\"0x020000\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">"
		"<nic><net name=\"mlx5_0\" dev=\"0\" speed=\"400000\" port=\"1\" gdr=\"1\"/></nic></pci>\n"
		"</cpu></system>\n";
	char path[] = "/tmp/collc-shared-nic-XXXXXX";
	FILE *f = temp_file(path);
	fputs(two, f);
	fclose(f);
	char text[256];
	int n = snprintf(text, sizeof text, "topology C = torus_boxes(boxes 2, box nccl_topo(\"%s\"));\n",
	                 path);
	Diag d = diag_new();
	Checked c;
	check_text(&d, &c, FIX "t.coll", text, (size_t)n);
	unlink(path);
	CU_ASSERT_PTR_NOT_NULL(strstr(c.diag, FIX "t.coll:1:39: error: torus_boxes: the box's 2 GPUs "
	                                      "share 1 NIC; this form cables one NIC per GPU"));
	checked_free(&c);
	const char *nvs = "topology C = xgmi_rails(boxes 2, box nccl_topo(\"ibm-h100-topo.xml\"));\n";
	check_text(&d, &c, FIX "x.coll", nvs, strlen(nvs));
	CU_ASSERT_PTR_NOT_NULL(strstr(c.diag, FIX "ibm-h100-topo.xml:10:9: error: GPU rank 0 has NVLinks "
	                                      "to an NVSwitch (a rails box): xgmi_rails' box joins its GPUs "
	                                      "pair by pair"));
	CU_ASSERT_PTR_NOT_NULL(strstr(c.diag, FIX "x.coll:1:48: note: in the NCCL topology file"));
	checked_free(&c);
	const char *mesh = "topology C = rails(boxes 2, box nccl_topo(\"a100-mesh-4.xml\"));\n"
	                   "topology D = xgmi_rails(boxes 2, box nccl_topo(\"a100-mesh-4.xml\"), links 1, "
	                   "1, 1, 1, 1, 1);\n";
	check_text(&d, &c, FIX "m.coll", mesh, strlen(mesh));
	CU_ASSERT_PTR_NOT_NULL(strstr(c.diag, FIX "a100-mesh-4.xml:5:9: error: GPU rank 0 has NVLinks to "
	                                      "other GPUs: this form's box joins its GPUs by one NVSwitch"));
	CU_ASSERT_PTR_NOT_NULL(strstr(c.diag, FIX "m.coll:2:68: error: xgmi_rails: the box gives 'links'"));
	checked_free(&c);
}

/* A string's escapes read and printed back: fmt's output parses to the
 * same string, and fmt of it is the same text. */
static void
test_string_round_trip(void)
{
	const char *text = "topology B = nccl_topo(\"dumps/a \\\"b\\\" \\\\ c.xml\");\n";
	Diag d = diag_new();
	Arena a = {0};
	File *f = parse_text(&d, &a, "t.coll", text, strlen(text));
	CU_ASSERT_FATAL(f && nerrors(&d) == 0 && f->ndecl == 1);
	const Expr *e = f->decl[0].form->arg[0].val.v[0];
	CU_ASSERT_EQUAL(e->kind, EX_STRING);
	CU_ASSERT_STRING_EQUAL(e->text, "dumps/a \"b\" \\ c.xml");
	CU_ASSERT_EQUAL(e->loc.line, 1);
	CU_ASSERT_EQUAL(e->loc.col, 24);
	char *once = fmt_string(f);
	CU_ASSERT_STRING_EQUAL(once, text);
	File *g = parse_text(&d, &a, "t.coll", once, strlen(once));
	CU_ASSERT(g && nerrors(&d) == 0 && ast_equal(f, g));
	free(once);
	arena_free(&a);
}

/* Crafted files whose reading was quadratic or worse: 800 <cpu>s (NCCL
 * joins every pair: 639,200 links, each looked for among all before it:
 * over 200 s) and 16,000 GPUs in a ring of NVLinks (each element located
 * from the file's start, each target searched among all GPUs: about 28 s).
 * Each within a few CPU seconds now (0.4 s each in the plain build), under
 * a limit of CPU time, not wall time: the machine may be loaded. */
static void
test_crafted_linear(void)
{
	static const char cpu0[] = "<cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\" "
	                           "familyid=\"6\" modelid=\"143\">";
	for (int kind = 0; kind < 2; kind++) {
		char path[] = "/tmp/collc-crafted-XXXXXX";
		FILE *f = temp_file(path);
		int n = kind == 0 ? 2 : 16000;
		fprintf(f, "<system version=\"1\">\n%s\n", cpu0);
		for (int i = 0; i < n; i++)
			fprintf(f, "<pci busid=\"%04x:%02x:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s "
			        "PCIe\" link_width=\"16\"><gpu dev=\"%d\" sm=\"90\" rank=\"%d\"><nvlink "
			        "target=\"fffe:00:00.0\" count=\"2\" tclass=\"0x068000\"/><nvlink target=\"%04x:"
			        "%02x:00.0\" count=\"1\" tclass=\"0x030200\"/></gpu></pci>\n",
			        i >> 8, i & 255, i, i, ((i + 1) % n) >> 8, ((i + 1) % n) & 255);
		fprintf(f, "</cpu>\n");
		for (int c = 1; kind == 0 && c < 800; c++)
			fprintf(f, "<cpu numaid=\"%d\" arch=\"x86_64\" vendor=\"GenuineIntel\" "
			        "familyid=\"6\" modelid=\"143\"/>\n", c);
		fprintf(f, "</system>\n");
		fclose(f);
		int st = collc_cpu_limited(10, "nccl-topo %s >/dev/null 2>&1", path);
		assert_named(st == 0, __LINE__, __FILE__, "collc nccl-topo of %s: status %d within 10 CPU "
		             "seconds", kind == 0 ? "800 <cpu>s" : "16000 GPUs in a ring", st);
		remove(path);
	}
}

CU_TestInfo nccl_topo_tests[] = {
	{"IBM's 8 x H100 file: GPUs, NVLinks, NVSwitches, NICs, PCIe, CPUs", test_ibm_h100},
	{"nccl-tests #256: H200 bare metal and VM dumps", test_issue_256},
	{"Azure's ndv4 file (no <gpu>): a located error naming what is missing", test_no_gpus},
	{"NCCL's NVLink and PCIe bandwidth tables", test_tables},
	{"errors located in the XML", test_errors},
	{"bytes libxml2 cannot read: the located error alone, escaped", test_unreadable_bytes},
	{"direct GPU NVLinks, c2c, arm64 CPUs", test_direct_nvlinks},
	{"collc nccl-topo's declaration checks and builds", test_cli_loads},
	{"the fuzz target on the fixtures, whole and cut short", test_fuzz_target},
	{"nccl_topo(\"box.xml\") in a .coll file is collc nccl-topo's graph", test_coll_source},
	{"nccl_topo(\"box.xml\"): an error in the XML located there, a note at the .coll line",
	 test_coll_source_errors},
	{"a string's escapes read and printed back by fmt", test_string_round_trip},
	{"rails with IBM's H100 file as its box: the file's counts and speeds twice, plus rails",
	 test_cluster_box},
	{"a box a cluster form cannot take: an error in the XML, a note at the string",
	 test_cluster_box_errors},
	{"torus_boxes with IBM's H100 file as its box: the file's counts and speeds x 9, cables",
	 test_torus_box},
	{"xgmi_rails with a 4 x A100 mesh as its box: each pair's NVLinks, shared NICs, rails",
	 test_mesh_box},
	{"boxes torus_boxes and xgmi_rails cannot take: located errors", test_box_refusals},
	{"crafted files (800 CPUs, 16000 GPUs) read in linear time", test_crafted_linear},
	CU_TEST_INFO_NULL,
};
