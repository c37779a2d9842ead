/*
 * to_chakra.c: `build --target chakra -o DIR`: each schedule as Chakra
 * execution traces, the input ASTRA-sim 2.x replays, plus the ASTRA-sim
 * network and system files for its topology (docs/astra-sim.md).
 *
 * Needs: verified schedules; their messages come from the simulator's
 * plain-data view (sim_from_scheds), so the traces carry exactly the
 * messages, sizes and dependencies `collc sim` simulates.
 * Establishes: DIR/NAME.R.et for every rank R of every schedule, each a
 * stream of varint-length-prefixed messages (chakra_et.proto): a
 * GlobalMetadata, then the rank's nodes in an order where every node comes
 * after the nodes it depends on. A message is a COMM_SEND_NODE on its
 * sender and a COMM_RECV_NODE on its receiver with the same
 * (comm_src, comm_dst, comm_tag, comm_size); a reduced message adds a
 * COMP_NODE after the receive. A send depends on the arrivals (receive, or
 * its reduction) of the messages it waits for; a schedule known only by
 * rounds waits for every arrival at its rank in earlier rounds. A send
 * also waits for the send before it on its queue (the sender's first link
 * and instance, the issue order of `collc sim --sync deps`, sim_queue_prev):
 * a control dependency (ctrl_deps) that data_deps repeat, because the
 * feeder ASTRA-sim 2.x pins (Chakra 214f2c5, src/feeder) resolves only
 * data_deps. Attribute types are the ones that feeder reads (tensor_size
 * uint64_val; comm_size, num_ops int64_val; comm_src/dst/tag int32_val).
 * network.yml follows ASTRA-sim's analytical backend: its first dimension
 * varies fastest in an NPU id (collc's last), and its GB/s are 2^30 B/s.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend.h"
#include "chakra_et.pb-c.h"
#include "sim.h"
#include "to_sim.h"

enum { DEFAULT_BYTES = 1 << 20 };

/* One rank's trace being built. */
typedef struct Trace {
	MemOut out;
	uint64_t next_id;
} Trace;

static void
put_varint(FILE *f, uint64_t v)
{
	do {
		unsigned char b = v & 0x7f;
		v >>= 7;
		fputc(b | (v ? 0x80 : 0), f);
	} while (v);
}

static void
put_message(FILE *f, const ProtobufCMessage *m)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *b = xmalloc(n + 1);
	protobuf_c_message_pack(m, b);
	put_varint(f, n);
	fwrite(b, 1, n, f);
	free(b);
}

typedef struct Attrs {
	ChakraProtoMsg__AttributeProto a[6], *p[6];
	int n;
} Attrs;

static ChakraProtoMsg__AttributeProto *
attr(Attrs *as, const char *name)
{
	ChakraProtoMsg__AttributeProto *a = &as->a[as->n];
	chakra_proto_msg__attribute_proto__init(a);
	a->name = (char *)name;
	as->p[as->n++] = a;
	return a;
}

static void
attr_int32(Attrs *as, const char *name, int32_t v)
{
	ChakraProtoMsg__AttributeProto *a = attr(as, name);
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL;
	a->int32_val = v;
}

static void
attr_int64(Attrs *as, const char *name, int64_t v)
{
	ChakraProtoMsg__AttributeProto *a = attr(as, name);
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
	a->int64_val = v;
}

static void
attr_uint64(Attrs *as, const char *name, uint64_t v)
{
	ChakraProtoMsg__AttributeProto *a = attr(as, name);
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL;
	a->uint64_val = v;
}

/* Appends a node to rank's trace; returns its id. ctrl, if not NULL, is
 * the one control dependency (already among deps). */
static uint64_t
add_node(Trace *t, ChakraProtoMsg__NodeType type, const char *name, Attrs *as,
         const uint64_t *deps, size_t ndep, const uint64_t *ctrl)
{
	ChakraProtoMsg__Node n;
	chakra_proto_msg__node__init(&n);
	n.id = t->next_id++;
	n.name = (char *)name;
	n.type = type;
	n.data_deps = (uint64_t *)deps;
	n.n_data_deps = ndep;
	n.ctrl_deps = (uint64_t *)ctrl;
	n.n_ctrl_deps = ctrl != NULL;
	n.attr = as->p;
	n.n_attr = (size_t)as->n;
	put_message(t->out.f, &n.base);
	return n.id;
}

/* A message's nodes: its send, and the node at which its data is usable
 * at its receiver (the receive, or the reduction after it). */
typedef struct Arrival {
	uint64_t send, node;
	bool done;
} Arrival;

static void
push_dep(uint64_t **deps, size_t *nd, size_t *cap, uint64_t id)
{
	if (*nd == *cap)
		*deps = xrealloc(*deps, (*cap = 2 * *cap + 8) * sizeof **deps);
	(*deps)[(*nd)++] = id;
}

/* Message i's nodes; prev[i] is the message before it on its queue or -1
 * (NULL: a schedule known only by rounds, which has no queues). */
static void
emit_message(const SimColl *c, int i, const int *prev, int64_t bytes, Trace *tr, Arrival *arr,
             uint64_t **deps, size_t *cap)
{
	const SimMsg *m = &c->msg[i];
	int64_t size = sim_msg_bytes(m, bytes);
	size_t nd = 0;
	/* what the sender waits for */
	if (c->has_deps) {
		for (int k = 0; k < m->ndep; k++) {
			int d = c->deps[m->dep + k];
			if (c->msg[d].dst == m->src && arr[d].done)
				push_dep(deps, &nd, cap, arr[d].node);
		}
	} else {
		for (int d = 0; d < i && c->msg[d].round < m->round; d++)
			if (c->msg[d].dst == m->src)
				push_dep(deps, &nd, cap, arr[d].node);
	}
	/* the send before it on its queue: an earlier message from the same
	 * rank, so an earlier node of this trace */
	int before = prev ? prev[i] : -1;
	uint64_t order = before >= 0 ? arr[before].send : 0;
	if (before >= 0)
		push_dep(deps, &nd, cap, order);
	char name[96];
	for (int side = 0; side < 2; side++) {
		Attrs as = {.n = 0};
		ChakraProtoMsg__AttributeProto *cpu = attr(&as, "is_cpu_op");
		cpu->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
		cpu->bool_val = 0;
		attr_int32(&as, "comm_src", m->src);
		attr_int32(&as, "comm_dst", m->dst);
		attr_int64(&as, "comm_size", size);
		attr_int32(&as, "comm_tag", i);
		snprintf(name, sizeof name, "%s %d->%d round %d tag %d", side ? "recv" : "send", m->src,
		         m->dst, m->round, i);
		if (side == 0)
			arr[i].send = add_node(&tr[m->src], CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE,
			                       name, &as, *deps, nd, before >= 0 ? &order : NULL);
		else
			arr[i].node = add_node(&tr[m->dst], CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE,
			                       name, &as, NULL, 0, NULL);
	}
	if (m->reduce) {
		Attrs as = {.n = 0};
		attr_int64(&as, "num_ops", size / 4); /* one add per float */
		attr_uint64(&as, "tensor_size", (uint64_t)size);
		snprintf(name, sizeof name, "reduce %d->%d round %d tag %d", m->src, m->dst, m->round, i);
		uint64_t recv = arr[i].node;
		arr[i].node = add_node(&tr[m->dst], CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, name, &as,
		                       &recv, 1, NULL);
	}
	arr[i].done = true;
}

/* The ASTRA-sim analytical network of the topology, or NULL (and why). */
static const char *
astra_dim_kind(const Sched *s, const char **why)
{
	switch (s->topo->kind) {
	case TK_TORUS:
	case TK_RING:
		return "Ring";
	case TK_FULL:
		return "FullyConnected";
	case TK_SPINE_LEAF:
		return "Switch";
	default:
		*why = "ASTRA-sim's analytical network has rings, full meshes and switches per dimension";
		return NULL;
	}
}

/* ASTRA-sim's analytical backend (astra-network-analytical) turns its
 * "GB/s" into bytes with 2^30 (bw_GBps_to_Bpns): a figure in 10^9 B/s
 * would be read as 7.4 % more bandwidth than the link has. */
#define ASTRA_GB 1073741824.0

static void
write_network(const Sched *s, FILE *f)
{
	const char *why = NULL, *kind = astra_dim_kind(s, &why);
	const Topo *t = s->topo;
	int nd = t->kind == TK_TORUS ? t->ndim : 1;
	fprintf(f, "# ASTRA-sim analytical network for %s (written by collc)\n", t->name);
	fputs("topology: [ ", f);
	for (int d = 0; d < nd; d++)
		fprintf(f, "%s%s", d ? ", " : "", kind);
	/* ASTRA-sim's dimension 0 is the fastest-varying part of an NPU id,
	 * collc's the slowest (row-major ranks): list the sizes backwards */
	fputs(" ]\nnpus_count: [ ", f);
	for (int d = 0; d < nd; d++)
		fprintf(f, "%s%d", d ? ", " : "", t->kind == TK_TORUS ? t->size[nd - 1 - d] : s->nrank);
	fputs(" ]\nbandwidth: [ ", f);
	for (int d = 0; d < nd; d++)
		fprintf(f, "%s%.10g", d ? ", " : "", t->net.bandwidth / 8 / ASTRA_GB);
	fputs(" ]  # ASTRA-sim's GB/s (2^30 B/s) per link and direction\nlatency: [ ", f);
	for (int d = 0; d < nd; d++)
		fprintf(f, "%s%.6g", d ? ", " : "",
		        (t->net.link_latency + t->net.router_latency) * 1e9);
	fputs(" ]  # ns per hop\n", f);
}

static void
write_system(const Sched *s, FILE *f)
{
	int nd = s->topo->kind == TK_TORUS ? s->topo->ndim : 1;
	static const char *const impl[] = {"all-reduce", "reduce-scatter", "all-gather",
	                                   "all-to-all"};
	/* endpoint-delay 1 (ns), not 0: ASTRA-sim's native collectives
	 * schedule their memory-bus steps that far ahead, and a step at the
	 * current time trips the analytical event queue's assertion that time
	 * moves on. The traces' sends and receives do not use it.
	 * localBWAware: ASTRA-sim's multi-dimensional collective then runs
	 * each dimension on the share the dimensions before it left, as
	 * collc's hierarchical(ring, ring, ...) does; "baseline" runs every
	 * dimension on the whole vector. */
	fputs("{\n  \"scheduling-policy\": \"FIFO\",\n  \"endpoint-delay\": 1,\n"
	      "  \"active-chunks-per-dimension\": 1,\n  \"preferred-dataset-splits\": 1,\n", f);
	for (size_t k = 0; k < countof(impl); k++) {
		fprintf(f, "  \"%s-implementation\": [", impl[k]);
		for (int d = 0; d < nd; d++)
			fprintf(f, "%s\"ring\"", d ? ", " : "");
		fputs("],\n", f);
	}
	fputs("  \"collective-optimization\": \"localBWAware\",\n  \"local-mem-bw\": 1600,\n"
	      "  \"boost-mode\": 0\n}\n", f);
}

static int
emit_traces(Diag *dg, const Sched *s, int64_t bytes, OutDir *dir)
{
	Arena a = {0};
	SimNet net;
	if (backend_refuse_in_network(dg, s, "the Chakra target (ASTRA-sim)") != 0)
		return -1;
	if (sim_from_scheds(dg, &a, &s, 1, &net) != 0) {
		arena_free(&a);
		return -1;
	}
	const SimColl *c = &net.coll[0];
	Trace *tr = xcalloc((size_t)c->nrank, sizeof *tr);
	Arrival *arr = xcalloc((size_t)c->nmsg + 1, sizeof *arr);
	for (int r = 0; r < c->nrank; r++) {
		memout_open(&tr[r].out);
		ChakraProtoMsg__GlobalMetadata g;
		chakra_proto_msg__global_metadata__init(&g);
		g.version = (char *)"0.0.4";
		put_message(tr[r].out.f, &g.base);
	}
	int *prev = NULL;
	if (c->has_deps) {
		prev = xmalloc((size_t)c->nmsg * sizeof *prev + 1);
		sim_queue_prev(c, net.nlink, prev);
	}
	uint64_t *deps = NULL;
	size_t cap = 0;
	for (int i = 0; i < c->nmsg; i++)
		emit_message(c, i, prev, bytes, tr, arr, &deps, &cap);
	int rc = 0;
	for (int r = 0; r < c->nrank; r++) {
		char name[256];
		snprintf(name, sizeof name, "%s.%d.et", s->name, r);
		if (rc == 0)
			rc = outdir_write(dg, dir, name, &tr[r].out);
		else
			memout_drop(&tr[r].out);
	}
	free(deps), free(prev), free(arr), free(tr);
	arena_free(&a);
	return rc;
}

static int
emit_config(Diag *dg, const Sched *s, OutDir *dir, void (*fn)(const Sched *, FILE *), const char *name)
{
	MemOut m;
	fn(s, memout_open(&m));
	return outdir_write(dg, dir, name, &m);
}

static int
emit_chakra(Diag *dg, const Prog *p, const BuildOpts *o, const char *target)
{
	/* built beside the target and moved into place whole: no trace of a
	 * larger earlier build survives beside the new ones */
	static const char *const written[] = {".et", "network.yml", "system.json", NULL};
	OutDir dir;
	char err[512];
	const Sched **ss = xcalloc((size_t)p->nsched + 1, sizeof *ss);
	int n = backend_select(p, o, ss, p->nsched);
	int rc = 0;
	if (n == 0) {
		error_file(dg, "no schedule is built from this file");
		rc = -1;
	}
	if (rc == 0 && outdir_begin(&dir, target, written, err, sizeof err) != 0) {
		error_file(dg, "%s", err);
		rc = -1;
	}
	bool staged = rc == 0;
	int64_t bytes = o->bytes > 0 ? o->bytes : DEFAULT_BYTES;
	for (int i = 0; rc == 0 && i < n; i++)
		rc = emit_traces(dg, ss[i], bytes, &dir);
	const char *why = NULL;
	if (rc == 0 && astra_dim_kind(ss[0], &why)) {
		rc = emit_config(dg, ss[0], &dir, write_network, "network.yml");
		if (rc == 0)
			rc = emit_config(dg, ss[0], &dir, write_system, "system.json");
	} else if (rc == 0) {
		note_at(dg, ss[0]->loc, "no network.yml for %s: %s; the traces are written",
		        ss[0]->topo->name, why);
	}
	if (rc == 0 && outdir_commit(&dir, err, sizeof err) != 0) {
		error_file(dg, "%s", err);
		rc = -1;
	} else if (rc != 0 && staged) {
		outdir_abort(&dir);
	}
	free(ss);
	return rc;
}

const DirBackend chakra_backend = {
	"chakra", "Chakra execution traces and ASTRA-sim configs (docs/astra-sim.md)", emit_chakra};
