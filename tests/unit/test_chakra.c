/*
 * test_chakra.c: Chakra execution traces (backends/to_chakra.c) decoded back
 * with protobuf-c and read as ASTRA-sim 2.x reads them: each attribute
 * through the one field its feeder takes (Chakra 214f2c5, the commit
 * ASTRA-sim 4f387bc pins: src/feeder/et_feeder_node.cpp), dependencies
 * through data_deps (src/feeder/et_feeder.cpp resolves no others). Held
 * against the schedule they came from: every message is one COMM_SEND_NODE
 * on its sender and one COMM_RECV_NODE on its receiver with the same
 * source, destination, tag and size; every reduced message a COMP_NODE
 * after its receive with num_ops and tensor_size; every send depends on
 * exactly the arrivals the schedule says it waits for plus the send before
 * it on its queue (same first link and instance, as `collc sim --sync deps`
 * orders them), the latter also its one control dependency; node ids count
 * up and dependencies point backwards (a DAG). network.yml is read as
 * ASTRA-sim's analytical backend reads it (dimension 0 fastest in an NPU
 * id, GB/s = 2^30 B/s) and held against the topology's links.
 */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "chakra_et.pb-c.h"
#include "ir.h"
#include "sim.h"
#include "to_sim.h"
#include "tests.h"

typedef struct RankTrace {
	ChakraProtoMsg__Node **node;
	int nnode;
	char *version;
} RankTrace;

/* Splits a varint-length-delimited stream: the metadata, then nodes. */
static int
decode_file(const char *path, RankTrace *t)
{
	size_t len;
	unsigned char *b = (unsigned char *)slurp(path, &len);
	if (!b)
		return -1;
	size_t at = 0;
	int k = 0;
	memset(t, 0, sizeof *t);
	while (at < len) {
		uint64_t n = 0;
		int shift = 0;
		while (at < len && (b[at] & 0x80)) {
			n |= (uint64_t)(b[at++] & 0x7f) << shift;
			shift += 7;
		}
		if (at == len)
			break;
		n |= (uint64_t)b[at++] << shift;
		if (at + n > len)
			break;
		if (k++ == 0) {
			ChakraProtoMsg__GlobalMetadata *g =
				chakra_proto_msg__global_metadata__unpack(NULL, n, b + at);
			if (!g)
				break;
			t->version = strdup(g->version);
			chakra_proto_msg__global_metadata__free_unpacked(g, NULL);
		} else {
			ChakraProtoMsg__Node *x = chakra_proto_msg__node__unpack(NULL, n, b + at);
			if (!x)
				break;
			t->node = realloc(t->node, (size_t)(t->nnode + 1) * sizeof *t->node);
			t->node[t->nnode++] = x;
		}
		at += n;
	}
	free(b);
	return at == len ? 0 : -1;
}

static void
trace_free(RankTrace *t)
{
	for (int i = 0; i < t->nnode; i++)
		chakra_proto_msg__node__free_unpacked(t->node[i], NULL);
	free(t->node);
	free(t->version);
}

/* An attribute as ASTRA-sim's feeder reads it: through the one field it
 * takes for that name, so a value written in another field reads 0 (the
 * protobuf getter's default); -1 if the node has no such attribute. */
typedef enum Field { F_BOOL, F_INT32, F_INT64, F_UINT64 } Field;

static const struct {
	const char *name;
	Field field;
} feeder_fields[] = {
	{"is_cpu_op", F_BOOL},      {"num_ops", F_INT64},  {"tensor_size", F_UINT64},
	{"comm_type", F_INT64},     {"comm_size", F_INT64}, {"comm_priority", F_INT32},
	{"comm_src", F_INT32},      {"comm_dst", F_INT32}, {"comm_tag", F_INT32},
};

static int64_t
feeder_value(const ChakraProtoMsg__AttributeProto *a, Field f)
{
	switch (f) {
	case F_BOOL:
		return a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL ? a->bool_val
		                                                                          : 0;
	case F_INT32:
		return a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL ? a->int32_val
		                                                                           : 0;
	case F_INT64:
		return a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL ? a->int64_val
		                                                                           : 0;
	case F_UINT64:
		return a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL
		               ? (int64_t)a->uint64_val
		               : 0;
	}
	return 0;
}

static int64_t
feeder_attr(const ChakraProtoMsg__Node *n, const char *name)
{
	Field f = F_INT64;
	bool known = false;
	for (size_t k = 0; k < countof(feeder_fields); k++)
		if (strcmp(feeder_fields[k].name, name) == 0)
			f = feeder_fields[k].field, known = true;
	CU_ASSERT_FATAL(known);
	int64_t v = -1;
	for (size_t i = 0; i < n->n_attr; i++) /* the feeder keeps the last */
		if (strcmp(n->attr[i]->name, name) == 0)
			v = feeder_value(n->attr[i], f);
	return v;
}

/* Finds the node of `type` with comm_tag (or, for COMP, its receive) tag. */
static const ChakraProtoMsg__Node *
find(const RankTrace *t, ChakraProtoMsg__NodeType type, int tag, int *count)
{
	const ChakraProtoMsg__Node *hit = NULL;
	*count = 0;
	for (int i = 0; i < t->nnode; i++) {
		const ChakraProtoMsg__Node *n = t->node[i];
		if (n->type != type)
			continue;
		if (type == CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE) {
			if (n->n_data_deps != 1 || t->node[n->data_deps[0]]->type !=
			    CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE ||
			    feeder_attr(t->node[n->data_deps[0]], "comm_tag") != tag)
				continue;
		} else if (feeder_attr(n, "comm_tag") != tag) {
			continue;
		}
		hit = n;
		(*count)++;
	}
	return hit;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The message before m on its sender's queue: the latest earlier one with
 * the same first link and instance (docs/sim.md 3), or -1. Looked up
 * backwards here, apart from the backend's sim_queue_prev. */
static int
queue_before(const SimColl *c, int m)
{
	const SimMsg *x = &c->msg[m];
	for (int k = m - 1; x->nhop > 0 && k >= 0; k--) {
		const SimMsg *y = &c->msg[k];
		if (y->nhop > 0 && c->hops[y->hop] == c->hops[x->hop] && y->instance == x->instance)
			return k;
	}
	return -1;
}

typedef struct Tally {
	int bad_pair, bad_comp, bad_deps, bad_ctrl, ordered;
} Tally;

/* Message i's send and receive pair up as the feeder reads them; its
 * reduction carries num_ops and tensor_size. Returns its send, or NULL. */
static const ChakraProtoMsg__Node *
check_pair(const SimColl *sc, const RankTrace *tr, int i, int64_t bytes, Tally *t)
{
	const SimMsg *m = &sc->msg[i];
	int ns, nr, nc;
	const ChakraProtoMsg__Node *snd =
		find(&tr[m->src], CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE, i, &ns);
	const ChakraProtoMsg__Node *rcv =
		find(&tr[m->dst], CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE, i, &nr);
	const ChakraProtoMsg__Node *comp =
		find(&tr[m->dst], CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, i, &nc);
	int64_t size = sim_msg_bytes(m, bytes);
	if (ns != 1 || nr != 1 || nc != (int)m->reduce || feeder_attr(snd, "comm_src") != m->src ||
	    feeder_attr(snd, "comm_dst") != m->dst || feeder_attr(rcv, "comm_src") != m->src ||
	    feeder_attr(rcv, "comm_dst") != m->dst || feeder_attr(snd, "comm_size") != size ||
	    feeder_attr(rcv, "comm_size") != size || feeder_attr(snd, "is_cpu_op") != 0) {
		t->bad_pair++;
		return NULL;
	}
	if (comp && (feeder_attr(comp, "tensor_size") != size ||
	             feeder_attr(comp, "num_ops") != size / 4 || size == 0))
		t->bad_comp++;
	return snd;
}

/* A send's data_deps: the arrivals of the messages it waits for and the
 * send before it on its queue, which is also its one ctrl_deps entry. */
static void
check_deps(const SimColl *sc, const RankTrace *tr, int i, const ChakraProtoMsg__Node *snd,
           Tally *t)
{
	const SimMsg *m = &sc->msg[i];
	uint64_t expect[256];
	size_t ne = 0;
	for (int k = 0; k < m->ndep && ne < 255; k++) {
		int d = sc->deps[m->dep + k];
		if (sc->msg[d].dst != m->src)
			continue;
		int n1;
		const ChakraProtoMsg__Node *arr = find(
			&tr[m->src], sc->msg[d].reduce ? CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE
			                               : CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE,
			d, &n1);
		if (arr)
			expect[ne++] = arr->id;
	}
	int before = queue_before(sc, i), n1;
	const ChakraProtoMsg__Node *prior =
		before >= 0 ? find(&tr[m->src], CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE, before, &n1)
		            : NULL;
	if (prior) {
		expect[ne++] = prior->id;
		t->ordered++;
	}
	if (prior ? snd->n_ctrl_deps != 1 || snd->ctrl_deps[0] != prior->id ||
	                    prior->id >= snd->id
	          : snd->n_ctrl_deps != 0)
		t->bad_ctrl++;
	uint64_t got[256];
	size_t ng = snd->n_data_deps < 256 ? snd->n_data_deps : 256;
	if (ng)
		memcpy(got, snd->data_deps, ng * sizeof *got);
	qsort(expect, ne, sizeof *expect, cmp_u64);
	qsort(got, ng, sizeof *got, cmp_u64);
	if (ne != ng || memcmp(expect, got, ne * sizeof *got) != 0)
		t->bad_deps++;
}

/* Writes the traces of the one schedule in text to a new directory. */
static void
build_traces(Diag *dg, const char *text, int64_t bytes, char *dir, Checked *c, Prog *prog)
{
	check_built(dg, c, "t.coll", text, strlen(text));
	CU_ASSERT_EQUAL_FATAL(c->errors, 0);
	memset(prog, 0, sizeof *prog);
	lower(dg, c->file, prog);
	CU_ASSERT_EQUAL_FATAL(prog->nsched, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	BuildOpts o = {.bytes = bytes};
	CU_ASSERT_EQUAL_FATAL(chakra_backend.emit_dir(dg, prog, &o, dir), 0);
}

static void
remove_dir(const char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

/* Decodes every rank's file; ids count up and dependencies point back. */
static int
decode_ranks(const char *dir, const char *name, int nrank, RankTrace *tr)
{
	int nodes = 0;
	for (int r = 0; r < nrank; r++) {
		char path[512];
		snprintf(path, sizeof path, "%s/%s.%d.et", dir, name, r);
		CU_ASSERT_EQUAL_FATAL(decode_file(path, &tr[r]), 0);
		CU_ASSERT_STRING_EQUAL(tr[r].version, "0.0.4");
		for (int i = 0; i < tr[r].nnode; i++) {
			const ChakraProtoMsg__Node *n = tr[r].node[i];
			CU_ASSERT_EQUAL(n->id, (uint64_t)i);
			for (size_t d = 0; d < n->n_data_deps; d++)
				CU_ASSERT(n->data_deps[d] < (uint64_t)i);
		}
		nodes += tr[r].nnode;
	}
	return nodes;
}

/* Returns how many sends wait for the one before them on their queue. */
static int
check_traces(Diag *dg, const char *text, const char *name, int64_t bytes)
{
	Checked c;
	Prog prog;
	char dir[] = "/tmp/collc-chakra-XXXXXX";
	build_traces(dg, text, bytes, dir, &c, &prog);
	const Sched *s = prog.sched[0];
	Arena a = {0};
	SimNet net;
	CU_ASSERT_EQUAL_FATAL(sim_from_scheds(dg, &a, &s, 1, &net), 0);
	const SimColl *sc = &net.coll[0];
	CU_ASSERT_FATAL(sc->has_deps);
	RankTrace *tr = calloc((size_t)sc->nrank, sizeof *tr);
	int nodes = decode_ranks(dir, name, sc->nrank, tr), want = 0;
	Tally t = {0};
	for (int i = 0; i < sc->nmsg; i++) {
		want += 2 + sc->msg[i].reduce;
		const ChakraProtoMsg__Node *snd = check_pair(sc, tr, i, bytes, &t);
		if (snd)
			check_deps(sc, tr, i, snd, &t);
	}
	assert_named(t.bad_pair == 0, __LINE__, __FILE__, "%s: %d of %d messages not paired", name,
	             t.bad_pair, sc->nmsg);
	assert_named(t.bad_comp == 0, __LINE__, __FILE__,
	             "%s: %d reductions without num_ops/tensor_size as the feeder reads them",
	             name, t.bad_comp);
	assert_named(t.bad_deps == 0, __LINE__, __FILE__, "%s: %d sends with other data_deps",
	             name, t.bad_deps);
	assert_named(t.bad_ctrl == 0, __LINE__, __FILE__, "%s: %d sends with other ctrl_deps",
	             name, t.bad_ctrl);
	assert_named(nodes == want, __LINE__, __FILE__, "%s: %d nodes, want %d", name, nodes, want);
	for (int r = 0; r < sc->nrank; r++)
		trace_free(&tr[r]);
	free(tr);
	remove_dir(dir);
	arena_free(&a);
	prog_free(&prog);
	checked_free(&c);
	return t.ordered;
}

static void
test_ring8(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* every rank sends all its messages to its successor: one queue each */
	int ordered = check_traces(dg, "topology R = ring(8);\n"
	                           "collective allreduce AR on R { algorithm ring; }\n",
	                           "AR", 1 << 20);
	CU_ASSERT_EQUAL(ordered, 8 * (2 * 7 - 1));
}

static void
test_sp_4x4(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	CU_ASSERT(check_traces(dg, "topology T = torus(4, 4);\n"
	                       "group G on T { translate; map (x, y) -> (y, x); }\n"
	                       "tree B = bfs(T, root 0);\n"
	                       "collective allreduce SP on T {algorithm symmetric(trees B, group G);}\n",
	                       "SP", 1 << 20) > 0);
}

static void
test_pipelined(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* a leaf's segments depend on nothing: only the queue orders them */
	CU_ASSERT(check_traces(dg, "topology T = torus(4, 4);\n"
	                       "trees C = disjoint(T, roots 0, 5, 10, 15);\n"
	                       "collective allreduce PT on T {\n"
	                       "    algorithm pipelined_trees(trees C, segments 4);\n}\n",
	                       "PT", 1 << 20) > 0);
}

/* network.yml as ASTRA-sim's analytical backend reads it. */
typedef struct AstraNet {
	int nd;
	char kind[MAX_DIMS][32];
	int npus[MAX_DIMS];
	double bw[MAX_DIMS], lat[MAX_DIMS];
} AstraNet;

/* The items of the line "key: [ a, b ]" (comments after it ignored). */
static int
yml_list(const char *text, const char *key, char item[][32])
{
	char head[64];
	snprintf(head, sizeof head, "\n%s: [", key);
	const char *p = strstr(text, head);
	if (!p)
		return -1;
	p += strlen(head);
	int n = 0;
	while (n < MAX_DIMS) {
		while (*p == ' ')
			p++;
		size_t len = strcspn(p, ",] \n");
		if (len == 0 || len >= 32)
			break;
		memcpy(item[n], p, len);
		item[n++][len] = '\0';
		p += len;
		while (*p == ' ')
			p++;
		if (*p++ != ',')
			break;
	}
	return n;
}

static void
read_astra_net(const char *dir, AstraNet *a)
{
	char path[512], item[4][MAX_DIMS][32];
	snprintf(path, sizeof path, "%s/network.yml", dir);
	size_t len;
	char *text = slurp(path, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	static const char *const keys[] = {"topology", "npus_count", "bandwidth", "latency"};
	a->nd = yml_list(text, keys[0], item[0]);
	CU_ASSERT_FATAL(a->nd >= 1);
	for (int k = 1; k < 4; k++)
		CU_ASSERT_EQUAL_FATAL(yml_list(text, keys[k], item[k]), a->nd);
	for (int d = 0; d < a->nd; d++) {
		memcpy(a->kind[d], item[0][d], sizeof a->kind[d]);
		a->npus[d] = atoi(item[1][d]);
		a->bw[d] = atof(item[2][d]);
		a->lat[d] = atof(item[3][d]);
	}
	free(text);
}

/* An NPU id as MultiDimTopology::translate_address splits it: dimension 0
 * varies fastest. */
static void
astra_address(const AstraNet *a, int id, int *addr)
{
	for (int d = 0; d < a->nd; d++) {
		addr[d] = id % a->npus[d];
		id /= a->npus[d];
	}
}

/* u and v are neighbours on one Ring dimension of ASTRA-sim's network. */
static bool
astra_ring_neighbours(const AstraNet *a, int u, int v)
{
	int au[MAX_DIMS], av[MAX_DIMS], diff = 0;
	astra_address(a, u, au);
	astra_address(a, v, av);
	bool ok = false;
	for (int d = 0; d < a->nd; d++) {
		if (au[d] == av[d])
			continue;
		diff++;
		int step = ((av[d] - au[d]) % a->npus[d] + a->npus[d]) % a->npus[d];
		ok = strcmp(a->kind[d], "Ring") == 0 && (step == 1 || step == a->npus[d] - 1);
	}
	return diff == 1 && ok;
}

/* The rings of network.yml are the torus's links, both ways; units are
 * ASTRA-sim's (GB/s = 2^30 B/s, ns). */
static void
check_network(Diag *dg, const char *text)
{
	Checked c;
	Prog prog;
	char dir[] = "/tmp/collc-chakra-XXXXXX";
	build_traces(dg, text, 1 << 20, dir, &c, &prog);
	const Topo *t = prog.sched[0]->topo;
	AstraNet a;
	read_astra_net(dir, &a);
	int n = 1;
	for (int d = 0; d < a.nd; d++) {
		n *= a.npus[d];
		CU_ASSERT_DOUBLE_EQUAL(a.bw[d] * 1073741824.0 / (t->net.bandwidth / 8), 1, 1e-9);
		CU_ASSERT_DOUBLE_EQUAL(a.lat[d] / ((t->net.link_latency + t->net.router_latency) * 1e9),
		                       1, 1e-9);
	}
	CU_ASSERT_EQUAL_FATAL(n, t->nrank);
	int bad = 0;
	for (int l = 0; l < t->nlink; l++)
		bad += !astra_ring_neighbours(&a, t->link[l].src, t->link[l].dst);
	for (int u = 0; u < n; u++)
		for (int v = 0; v < n; v++)
			if (astra_ring_neighbours(&a, u, v) && topo_find_link(t, u, v, 0) < 0)
				bad++;
	assert_named(bad == 0, __LINE__, __FILE__, "%s: %d links differ from ASTRA-sim's rings",
	             t->name, bad);
	char path[512];
	snprintf(path, sizeof path, "%s/system.json", dir);
	size_t len;
	char *sys = slurp(path, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sys);
	/* ASTRA-sim's event queue refuses an event at the current time */
	const char *e = strstr(sys, "\"endpoint-delay\": ");
	CU_ASSERT_FATAL(e != NULL);
	CU_ASSERT(atoi(e + strlen("\"endpoint-delay\": ")) >= 1);
	/* ASTRA-sim's multi-dimensional collective equals collc's hierarchical
	 * (each dimension on the share the ones before it left) only under
	 * localBWAware; "baseline" runs every dimension on the whole vector
	 * (docs/astra-sim.md) */
	CU_ASSERT_PTR_NOT_NULL(strstr(sys, "\"collective-optimization\": \"localBWAware\""));
	free(sys);
	remove_dir(dir);
	prog_free(&prog);
	checked_free(&c);
}

static void
test_network_torus(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	/* not square: a transposed npus_count puts (0, 1) and (1, 0) wrong */
	check_network(dg, "network { link_bandwidth = 400 Gbps; link_latency = 150 ns;\n"
	              "  router_latency = 300 ns; }\n"
	              "topology T = torus(8, 4);\n"
	              "collective allreduce AR on T { algorithm ring; }\n");
	check_network(dg, "topology T = torus(2, 3, 4);\n"
	              "collective allreduce AR on T { algorithm ring; }\n");
}

static void
test_network_ring(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	check_network(dg, "topology R = ring(8);\n"
	              "collective allreduce AR on R { algorithm ring; }\n");
}

CU_TestInfo chakra_tests[] = {
	{"ring(8) allreduce: sends pair with receives, reductions, dependency DAG", test_ring8},
	{"SP on torus(4, 4): the same against its 16 ranks' schedule", test_sp_4x4},
	{"pipelined trees on torus(4, 4): each queue's sends in issue order", test_pipelined},
	{"network.yml of torus(8, 4), torus(2, 3, 4): rings are the links, units; system.json localBWAware", test_network_torus},
	{"network.yml of ring(8): one Ring, units", test_network_ring},
	CU_TEST_INFO_NULL,
};
