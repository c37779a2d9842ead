/*
 * test_chakra.c: Chakra execution traces (backends/chakra.c) decoded back
 * with protobuf-c and held against the schedule they came from: ring(8)
 * allreduce and SP on torus(4, 4). Every message is one COMM_SEND_NODE on
 * its sender and one COMM_RECV_NODE on its receiver with the same source,
 * destination, tag and size; every reduced message a COMP_NODE after its
 * receive; every send depends on exactly the arrivals the schedule says it
 * waits for; node ids count up and dependencies point backwards (a DAG).
 */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "chakra_et.pb-c.h"
#include "ir.h"
#include "sim.h"
#include "simbuild.h"
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

static int64_t
attr_int(const ChakraProtoMsg__Node *n, const char *name)
{
	for (size_t i = 0; i < n->n_attr; i++)
		if (strcmp(n->attr[i]->name, name) == 0)
			switch (n->attr[i]->value_case) {
			case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL:
				return n->attr[i]->int32_val;
			case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL:
				return n->attr[i]->int64_val;
			default:
				return -2;
			}
	return -1;
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
			    attr_int(t->node[n->data_deps[0]], "comm_tag") != tag)
				continue;
		} else if (attr_int(n, "comm_tag") != tag) {
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

static void
check_traces(const char *text, const char *name, int64_t bytes)
{
	Checked c;
	check_built(&c, "t.coll", text, strlen(text));
	CU_ASSERT_EQUAL_FATAL(c.errors, 0);
	Prog prog = {0};
	lower(c.file, &prog);
	CU_ASSERT_EQUAL_FATAL(prog.nsched, 1);
	const Sched *s = prog.sched[0];
	char dir[] = "/tmp/collc-chakra-XXXXXX";
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	BuildOpts o = {.bytes = bytes};
	CU_ASSERT_EQUAL_FATAL(chakra_backend.emit_dir(&prog, &o, dir), 0);
	Arena a = {0};
	SimNet net;
	CU_ASSERT_EQUAL_FATAL(sim_from_scheds(&a, &s, 1, &net), 0);
	const SimColl *sc = &net.coll[0];
	RankTrace *tr = calloc((size_t)sc->nrank, sizeof *tr);
	int nodes = 0;
	for (int r = 0; r < sc->nrank; r++) {
		char path[512];
		snprintf(path, sizeof path, "%s/%s.%d.et", dir, name, r);
		CU_ASSERT_EQUAL_FATAL(decode_file(path, &tr[r]), 0);
		CU_ASSERT_STRING_EQUAL(tr[r].version, "0.0.4");
		/* ids count up from 0; dependencies point backwards: a DAG in order */
		for (int i = 0; i < tr[r].nnode; i++) {
			CU_ASSERT_EQUAL(tr[r].node[i]->id, (uint64_t)i);
			for (size_t d = 0; d < tr[r].node[i]->n_data_deps; d++)
				CU_ASSERT(tr[r].node[i]->data_deps[d] < (uint64_t)i);
		}
		nodes += tr[r].nnode;
	}
	int want = 0, bad_pair = 0, bad_deps = 0;
	for (int i = 0; i < sc->nmsg; i++) {
		const SimMsg *m = &sc->msg[i];
		int ns, nr, nc;
		const ChakraProtoMsg__Node *snd =
			find(&tr[m->src], CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE, i, &ns);
		const ChakraProtoMsg__Node *rcv =
			find(&tr[m->dst], CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE, i, &nr);
		find(&tr[m->dst], CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, i, &nc);
		want += 2 + m->reduce;
		int64_t size = sim_msg_bytes(m, bytes);
		if (ns != 1 || nr != 1 || nc != (int)m->reduce || attr_int(snd, "comm_src") != m->src ||
		    attr_int(snd, "comm_dst") != m->dst || attr_int(rcv, "comm_src") != m->src ||
		    attr_int(rcv, "comm_dst") != m->dst || attr_int(snd, "comm_size") != size ||
		    attr_int(rcv, "comm_size") != size) {
			bad_pair++;
			continue;
		}
		/* the send waits for exactly the arrivals of the messages it depends on */
		uint64_t expect[256];
		size_t ne = 0;
		for (int k = 0; sc->has_deps && k < m->ndep && ne < 256; k++) {
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
		uint64_t got[256];
		size_t ng = snd->n_data_deps < 256 ? snd->n_data_deps : 256;
		if (ng)
			memcpy(got, snd->data_deps, ng * sizeof *got);
		qsort(expect, ne, sizeof *expect, cmp_u64);
		qsort(got, ng, sizeof *got, cmp_u64);
		if (sc->has_deps && (ne != ng || memcmp(expect, got, ne * sizeof *got) != 0))
			bad_deps++;
	}
	assert_named(bad_pair == 0, __LINE__, __FILE__, "%s: %d of %d messages not paired", name,
	             bad_pair, sc->nmsg);
	assert_named(bad_deps == 0, __LINE__, __FILE__, "%s: %d sends with other dependencies",
	             name, bad_deps);
	assert_named(nodes == want, __LINE__, __FILE__, "%s: %d nodes, want %d", name, nodes, want);
	CU_ASSERT(sc->has_deps);
	for (int r = 0; r < sc->nrank; r++)
		trace_free(&tr[r]);
	free(tr);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
	arena_free(&a);
	prog_free(&prog);
	checked_free(&c);
}

static void
test_ring8(void)
{
	check_traces("topology R = ring(8);\n"
	             "collective allreduce AR on R { algorithm ring; }\n",
	             "AR", 1 << 20);
}

static void
test_sp_4x4(void)
{
	check_traces("topology T = torus(4, 4);\n"
	             "group G on T { translate; map (x, y) -> (y, x); }\n"
	             "tree B = bfs(T, root 0);\n"
	             "collective allreduce SP on T {algorithm symmetric(trees B, group G);}\n",
	             "SP", 1 << 20);
}

CU_TestInfo chakra_tests[] = {
	{"ring(8) allreduce: sends pair with receives, reductions, dependency DAG", test_ring8},
	{"SP on torus(4, 4): the same against its 16 ranks' schedule", test_sp_4x4},
	CU_TEST_INFO_NULL,
};
