/*
 * irtext_read.c: reads the IR text format (docs/ir.md) back into a Prog, the
 * inverse of to_irtext.c. The reader lives beside its writer so that the
 * format changes in one folder; it is here, not in ir/, because the writer
 * is a backend (ir_backend in the table of backend.h) and ir/ includes no
 * backend header, while a reader needs only the IR. A symmetric schedule's group is rebuilt
 * from its generators (checked again to be automorphisms) and its trees
 * from their parents, so reading back and verifying proves the same
 * schedule. Every malformed line is a located error; nothing is trusted
 * that would make a later pass read out of bounds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

typedef struct Reader {
	Diag *diag;  /* where this pass's diagnostics go (the run's, from the driver) */
	Prog *p;
	Arena *a;
	const char *text, *end;
	const char *line;     /* the current line */
	const char *at;       /* the next token */
	int lineno;
	bool failed;
	Sched *s;             /* the schedule being read */
	SchedBuilder sb;
	int nxchunk, capbase, tree_cap;
	int *chunkbuf;
} Reader;

static Loc
here(const Reader *r)
{
	return (Loc){r->lineno, (int)(r->at - r->line) + 1};
}

static void
fail(Reader *r, const char *what)
{
	if (!r->failed)
		error_at(r->diag, here(r), "%s", what);
	r->failed = true;
}

/* Moves to the next non-empty, non-comment line; false at the end. */
static bool
next_line(Reader *r)
{
	while (r->line < r->end) {
		const char *nl = memchr(r->line, '\n', (size_t)(r->end - r->line));
		const char *eol = nl ? nl : r->end;
		if (r->lineno > 0)
			r->line = eol + (nl != NULL);
		r->lineno++;
		if (r->line >= r->end)
			return false;
		r->at = r->line;
		while (r->at < r->end && (*r->at == ' ' || *r->at == '\t' || *r->at == '\r'))
			r->at++;
		if (r->at < r->end && *r->at != '\n' && *r->at != '#')
			return true;
	}
	return false;
}

static void
skip_space(Reader *r)
{
	while (r->at < r->end && (*r->at == ' ' || *r->at == '\t' || *r->at == '\r'))
		r->at++;
}

/* The next token on the line into buf; false at the line's end. */
static bool
word(Reader *r, char *buf, size_t len)
{
	skip_space(r);
	const char *s = r->at;
	while (r->at < r->end && *r->at != ' ' && *r->at != '\t' && *r->at != '\n' && *r->at != '\r')
		r->at++;
	size_t n = (size_t)(r->at - s);
	if (n == 0 || n >= len) {
		r->at = s;
		return false;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	return true;
}

static bool
expect(Reader *r, const char *w)
{
	char buf[64];
	skip_space(r);
	const char *at = r->at;
	if (!word(r, buf, sizeof buf) || strcmp(buf, w) != 0) {
		r->at = at;
		char msg[96];
		snprintf(msg, sizeof msg, "expected '%s'", w);
		fail(r, msg);
		return false;
	}
	return true;
}

static long
integer(Reader *r, long lo, long hi)
{
	char buf[32];
	skip_space(r);
	const char *at = r->at;
	if (!word(r, buf, sizeof buf)) {
		fail(r, "expected a number");
		return lo;
	}
	char *end;
	errno = 0;
	long v = strtol(buf, &end, 10);
	if (*end || errno || v < lo || v > hi) {
		r->at = at;
		char msg[96];
		snprintf(msg, sizeof msg, "expected an integer in %ld..%ld", lo, hi);
		fail(r, msg);
		return lo;
	}
	return v;
}

static double
real(Reader *r)
{
	char buf[64];
	if (!word(r, buf, sizeof buf)) {
		fail(r, "expected a number");
		return 0;
	}
	char *end;
	double v = strtod(buf, &end);
	if (*end) {
		fail(r, "expected a number");
		return 0;
	}
	return v;
}

/* A network or link value: finite, and positive (`positive`) or zero or
 * more; a located error at the value otherwise (a NaN was reported at the
 * schedule line, where the topology's values were checked together). */
static double
quantity(Reader *r, bool positive, const char *what)
{
	skip_space(r);
	const char *at = r->at;
	double v = real(r);
	if (!r->failed && !(positive ? v > 0 && v <= 1e300 : v >= 0 && v <= 1e300)) {
		char msg[160];
		snprintf(msg, sizeof msg, "%s must be %s and finite", what,
		         positive ? "positive" : "zero or more");
		r->at = at;
		fail(r, msg);
	}
	return v;
}

static void
line_end(Reader *r)
{
	char buf[8];
	if (word(r, buf, sizeof buf))
		fail(r, "unexpected text at the end of the line");
}

static Topo *
find_topology(Reader *r, const char *name, const char *at)
{
	for (int i = 0; i < r->p->ntopo; i++)
		if (strcmp(r->p->topo[i]->name, name) == 0)
			return r->p->topo[i];
	r->at = at;
	fail(r, "unknown topology");
	return NULL;
}

/* A topology being read: its header, then net, switch and link lines. */
typedef struct Pending {
	bool active;
	char name[4096];
	int kind, ndim, size[MAX_DIMS], variant, nnode;
	int nics, nic_link_gbps; /* shared NICs as nodes, or 0 */
	Net net;
	unsigned char *sw;
	bool any_switch;
	Link *links;
	int nlink, cap;
} Pending;

static void
topology_header(Reader *r, Pending *t)
{
	char kind[32];
	memset(t, 0, sizeof *t);
	t->net = net_defaults;
	if (!word(r, t->name, sizeof t->name) || !word(r, kind, sizeof kind)) {
		fail(r, "expected: topology NAME KIND dims ...");
		return;
	}
	t->kind = topo_form_find(kind);
	if (t->kind < 0) {
		fail(r, "unknown topology kind");
		return;
	}
	expect(r, "dims");
	t->ndim = (int)integer(r, 0, MAX_DIMS);
	for (int i = 0; i < t->ndim; i++)
		t->size[i] = (int)integer(r, 1, MAX_NODES);
	expect(r, "variant");
	t->variant = (int)integer(r, 0, 2L * MAX_NODES);
	expect(r, "nodes");
	t->nnode = (int)integer(r, 1, MAX_NODES);
	const char *at = r->at;
	char w[16];
	if (word(r, w, sizeof w) && strcmp(w, "nics") == 0) { /* the form's shared NICs */
		t->nics = (int)integer(r, 1, MAX_NODES);
		expect(r, "nic_link_gbps");
		t->nic_link_gbps = (int)integer(r, 1, MAX_NIC_GBPS);
	} else {
		r->at = at;
	}
	t->sw = arena_alloc(r->a, (size_t)t->nnode);
	t->active = !r->failed;
}

static bool dims_give_nodes(const TopoForm *tf, const Pending *t, long cells);

/* The ranks the dims give, or MAX_NODES + 1 where they give more (each
 * dim may be up to MAX_NODES: their product could pass a long). */
static long
pending_cells(const Pending *t)
{
	long cells = 1;
	for (int i = 0; i < t->ndim; i++)
		cells = cells * t->size[i] > MAX_NODES ? MAX_NODES + 1L : cells * t->size[i];
	return cells;
}

/* `switch ID NAME`: the name the writer gave (a form that names its nodes,
 * to_irtext.c) must be the one the header's form gives that id. A file
 * without names reads as before. */
static void
switch_name(Reader *r, const Pending *t, int id)
{
	char got[64], want[64];
	skip_space(r);
	/* the rest of the line: a name of two indices has a space, "nic(0, 1)" */
	size_t n = 0;
	while (r->at + n < r->end && r->at[n] != '\n' && r->at[n] != '\r')
		n++;
	while (n > 0 && (r->at[n - 1] == ' ' || r->at[n - 1] == '\t'))
		n--;
	if (r->failed || n == 0)
		return;
	if (n >= sizeof got) {
		fail(r, "a switch's name is too long");
		return;
	}
	memcpy(got, r->at, n);
	got[n] = '\0';
	const char *at = r->at;
	r->at += n;
	/* the name follows from the dims, which must first give the node count
	 * (a rails topology of no dims has no GPUs per box to name by) */
	if (!dims_give_nodes(&topo_forms[t->kind], t, pending_cells(t))) {
		r->at = at;
		fail(r, "the topology's dims do not give its node count");
		return;
	}
	Topo h = {.kind = (TopoKind)t->kind, .ndim = t->ndim, .variant = t->variant,
	          .nnode = t->nnode, .nrank = 1, .nics = t->nics, .nic_link_gbps = t->nic_link_gbps};
	for (int i = 0; i < t->ndim; i++)
		h.nrank *= h.size[i] = t->size[i];
	topo_node_name(&h, id, want, sizeof want);
	if (strcmp(got, want) != 0) {
		char msg[192];
		snprintf(msg, sizeof msg, "switch %d of this %s is %s, not '%s'", id,
		         topo_kind_name(h.kind), want, got);
		r->at = at;
		fail(r, msg);
	}
}

static void
topology_line(Reader *r, Pending *t, const char *w)
{
	if (!t->active) {
		fail(r, "a topology line outside a topology");
		return;
	}
	if (strcmp(w, "net") == 0) {
		Net *n = &t->net;
		n->bandwidth = quantity(r, true, "the bandwidth");
		n->link_latency = quantity(r, false, "the link latency");
		n->router_latency = quantity(r, false, "the router latency");
		n->step_overhead = quantity(r, false, "the step overhead");
		n->mtu = quantity(r, true, "the mtu");
		n->energy_per_bit = quantity(r, false, "the energy per bit");
		n->reconfig_delay = quantity(r, false, "the reconfiguration delay");
	} else if (strcmp(w, "energy") == 0) {
		Net *n = &t->net;
		n->router_energy_per_bit = quantity(r, false, "the router energy per bit");
		n->port_static_power = quantity(r, false, "the port static power");
		n->link_static_power = quantity(r, false, "the link static power");
	} else if (strcmp(w, "switching") == 0) {
		Net *n = &t->net;
		char kind[32] = "";
		if (!word(r, kind, sizeof kind) ||
		    (strcmp(kind, "cut_through") != 0 && strcmp(kind, "store_and_forward") != 0))
			fail(r, "expected cut_through or store_and_forward");
		n->store_and_forward = strcmp(kind, "store_and_forward") == 0;
		n->buffer_packets = quantity(r, false, "the buffer's packets");
		n->buffer_bytes = quantity(r, false, "the buffer's bytes");
	} else if (strcmp(w, "reduction") == 0) {
		char kind[32] = "";
		int bits = word(r, kind, sizeof kind) ? switch_reduction_find(kind) : -1;
		if (bits < 0)
			fail(r, "expected none, nvls, sharp or nvls_sharp");
		t->net.reduction = bits < 0 ? 0 : (unsigned)bits;
	} else if (strcmp(w, "switch") == 0) {
		int id = (int)integer(r, 0, t->nnode - 1);
		t->sw[id] = 1;
		t->any_switch = true;
		switch_name(r, t, id);
	} else {
		Link l = {.src = (int)integer(r, 0, t->nnode - 1), .dst = (int)integer(r, 0, t->nnode - 1),
		          .dim = (int)integer(r, -1, MAX_DIMS - 1),
		          .dir = (int)integer(r, -MAX_NODES, MAX_NODES)};
		l.bandwidth = quantity(r, true, "a link's bandwidth");
		l.latency = quantity(r, false, "a link's latency");
		l.energy_per_bit = quantity(r, false, "a link's energy per bit");
		if (l.src == l.dst)
			fail(r, "a link from a node to itself");
		if (t->nlink > 0 && l.src < t->links[t->nlink - 1].src)
			fail(r, "links must be in order of their source");
		VEC_PUSH(r->a, t->links, t->nlink, t->cap, l);
	}
}

static bool
finite_nonneg(double v)
{
	return v >= 0 && v <= 1e300; /* false for nan and inf */
}

/* The form's parameters' roles against the parts: a form with switches has
 * one coordinate per dimension parameter and at least its least switches
 * after the ranks; a block form (graph) no dimensions, or one of its nodes
 * (topo_graph: affine maps read node coordinates through them); any other
 * form exactly its cells. */
static bool
dims_give_nodes(const TopoForm *tf, const Pending *t, long cells)
{
	int dims = 0;
	long least = 0;
	for (int i = 0; i < MAX_PARAMS; i++) {
		if (tf->role[i] == TR_DIM_SWITCHES && dims < t->ndim)
			least += (long)t->size[dims] * (tf->switches_per_dim ? tf->switches_per_dim : 1);
		if (tf->role[i] == TR_SWITCHES)
			least += tf->form.param[i].lo;
		if (tf->role[i] == TR_BOX_DIMS) { /* a switch per box, the GPUs the last coordinate */
			if (t->ndim < 2)
				return false;
			least += cells / t->size[t->ndim - 1];
			dims += t->ndim - 1;
		}
		dims += tf->role[i] == TR_DIMS || tf->role[i] == TR_DIM_SWITCHES;
	}
	if (t->nics) { /* shared NICs: exactly the nodes the form's classes name */
		int64_t arg[MAX_PARAMS];
		Topo h = {.kind = (TopoKind)t->kind, .ndim = t->ndim, .variant = t->variant,
		          .nnode = t->nnode, .nrank = (int)cells, .nics = t->nics,
		          .nic_link_gbps = t->nic_link_gbps};
		for (int i = 0; i < t->ndim; i++)
			h.size[i] = t->size[i];
		bool has = false;
		for (int i = 0; i < MAX_PARAMS; i++)
			has |= tf->role[i] == TR_NICS;
		if (!has || t->ndim != dims || t->size[t->ndim - 1] % t->nics)
			return false;
		topo_form_args(&h, arg);
		return node_class_total((TopoKind)t->kind, arg) == t->nnode;
	}
	if (least > 0)
		return t->ndim == dims && cells + least <= t->nnode;
	return cells == t->nnode || (tf->block && t->ndim == 0);
}

static void
topology_end(Reader *r, Pending *t)
{
	if (!t->active || r->failed)
		return;
	t->active = false;
	/* what group and route code will assume of the parts */
	long cells = pending_cells(t);
	if (!dims_give_nodes(&topo_forms[t->kind], t, cells))
		fail(r, "the topology's dims do not give its node count");
	const Net *n = &t->net;
	if (!(n->bandwidth > 0 && n->bandwidth <= 1e300) || !finite_nonneg(n->link_latency) ||
	    !finite_nonneg(n->router_latency) || !finite_nonneg(n->step_overhead) ||
	    !(n->mtu >= 1 && n->mtu <= 1e300) || !finite_nonneg(n->energy_per_bit) ||
	    !finite_nonneg(n->reconfig_delay) || !finite_nonneg(n->router_energy_per_bit) ||
	    !finite_nonneg(n->port_static_power) || !finite_nonneg(n->link_static_power) ||
	    !finite_nonneg(n->buffer_packets) || !finite_nonneg(n->buffer_bytes))
		fail(r, "a network parameter is out of range (bandwidth and mtu positive, the rest "
		        "zero or more, all finite)");
	for (int i = 0; i < t->nlink && !r->failed; i++) {
		const Link *l = &t->links[i];
		if (l->src == l->dst || !(l->bandwidth <= 1e300) || !finite_nonneg(l->latency) ||
		    !finite_nonneg(l->energy_per_bit))
			fail(r, "a link is a loop or has parameters out of range");
	}
	if (r->failed)
		return;
	Topo *topo = topo_assemble(r->a, (TopoKind)t->kind, arena_strdup(r->a, t->name), t->ndim,
	                           t->size, t->variant, t->nnode, t->any_switch ? t->sw : NULL,
	                           t->nlink, t->links, t->net);
	topo->nics = t->nics;
	topo->nic_link_gbps = t->nic_link_gbps;
	Prog *p = r->p;
	p->topo = xrealloc(p->topo, (size_t)(p->ntopo + 1) * sizeof *p->topo);
	p->topo[p->ntopo++] = topo;
}

static int *
int_list(Reader *r, const char *head, int n, long lo, long hi)
{
	int *v = arena_array(r->a, (size_t)n + 1, sizeof *v);
	if (!next_line(r) || !expect(r, head))
		return v;
	for (int i = 0; i < n && !r->failed; i++)
		v[i] = (int)integer(r, lo, hi);
	line_end(r);
	return v;
}

/* phase ROUND rewired|kept NEXT...: a circuit configuration (verify checks it). */
static void
read_phase(Reader *r, Sched *s, int nround)
{
	int nb = optical_nblock(s->topo);
	Phase ph = {.round = (int)integer(r, 0, nround > 0 ? nround - 1 : 0)};
	char how[16];
	if (!word(r, how, sizeof how) || (strcmp(how, "rewired") && strcmp(how, "kept")))
		fail(r, "expected 'rewired' or 'kept' after the phase's round");
	ph.reconfig = how[0] == 'r';
	ph.next = arena_array(r->a, (size_t)nb, sizeof *ph.next);
	for (int b = 0; b < nb && !r->failed; b++)
		ph.next[b] = (int)integer(r, 0, nb - 1);
	if (r->failed)
		return;
	Phase *grown = arena_array(r->a, (size_t)s->nphase + 1, sizeof *grown);
	copy_n(grown, s->phase, (size_t)s->nphase, sizeof *grown);
	grown[s->nphase++] = ph;
	s->phase = grown;
}

/* What the lines of one schedule's body build up before its end. */
typedef struct SchedBody {
	Sched *s;
	const Topo *t;
	int nrank, nchunk, nround;
	bool sym;
	int *links;         /* one route being read */
	int *chunks;        /* one message's chunks */
	int ntree, capbase;
	GroupGen *gens;
	int ngen, capgen;
	char gname[4096];
	int declared_gens;  /* the group line's count, -1 before it */
} SchedBody;

/* The header line: schedule NAME KIND ALGORITHM topology T ranks N chunks
 * C rounds R form F, then the rank_nodes line. The Sched, or NULL after
 * reporting. */
static Sched *
read_sched_header(Reader *r, SchedBody *b)
{
	char name[4096], kind[32], alg[4096], topo[4096], form[16];
	skip_space(r);
	const char *name_at = r->at;
	if (!word(r, name, sizeof name) || !word(r, kind, sizeof kind) || !word(r, alg, sizeof alg)) {
		fail(r, "expected: schedule NAME KIND ALGORITHM topology T ...");
		return NULL;
	}
	for (int i = 0; i < r->p->nsched; i++)
		if (strcmp(r->p->sched[i]->name, name) == 0) {
			/* names a collective, as a .coll file's do: every backend keys on it */
			char what[4200];
			snprintf(what, sizeof what, "'%s' is already defined above: a schedule's name is "
			         "its collective's, and names are unique", name);
			r->at = name_at;
			fail(r, what);
			return NULL;
		}
	int k = -1;
	for (int i = 0; i < NCOLLKIND; i++)
		if (strcmp(coll_kind_name[i], kind) == 0)
			k = i;
	if (k < 0) {
		fail(r, "unknown collective kind");
		return NULL;
	}
	expect(r, "topology");
	skip_space(r);
	const char *at = r->at;
	if (!word(r, topo, sizeof topo)) {
		fail(r, "expected a topology name");
		return NULL;
	}
	Topo *t = find_topology(r, topo, at);
	if (!t)
		return NULL;
	expect(r, "ranks");
	b->nrank = (int)integer(r, 1, t->nnode);
	expect(r, "chunks");
	b->nchunk = (int)integer(r, 1, MAX_CHUNKS);
	expect(r, "rounds");
	b->nround = (int)integer(r, 0, MAX_ROUNDS);
	expect(r, "form");
	b->sym = word(r, form, sizeof form) && strcmp(form, "symmetric") == 0;
	if (!b->sym && strcmp(form, "explicit") != 0)
		fail(r, "expected form explicit or symmetric");
	line_end(r);
	if (r->failed)
		return NULL;
	/* the work declared, before anything is sized by it */
	Loc head = {r->lineno, 1};
	if (b->sym && b->nchunk > MAX_SYMM_CHUNKS) {
		error_at(r->diag, head, "the symmetric schedule '%s' declares %d chunks; collc builds at most %d "
		         "(docs/limits.md)", name, b->nchunk, MAX_SYMM_CHUNKS);
		r->failed = true;
		return NULL;
	}
	if (!b->sym && check_sched_size(r->diag, head, name, (CollKind)k, b->nrank, b->nchunk) != 0) {
		r->failed = true;
		return NULL;
	}
	int *rank_node = int_list(r, "rank_nodes", b->nrank, 0, t->nnode - 1);
	if (r->failed)
		return NULL;
	Sched *s = sched_new(r->a, arena_strdup(r->a, name), (Loc){r->lineno, 1}, (CollKind)k,
	                     arena_strdup(r->a, alg), t, rank_node, b->nrank);
	/* sched_new kept the last rank of each node: any other rank is a repeat */
	for (int i = 0; i < b->nrank; i++)
		if (s->node_rank[rank_node[i]] != i)
			fail(r, "a node is listed twice in rank_nodes");
	s->nchunk = b->nchunk;
	b->s = s;
	b->t = t;
	return s;
}

/* route ID LEN LINKS...: the routes numbered in order. */
static void
read_route_line(Reader *r, SchedBody *b)
{
	int id = (int)integer(r, 0, 1 << 30), len = (int)integer(r, 0, b->t->nnode);
	for (int i = 0; i < len && !r->failed; i++)
		b->links[i] = (int)integer(r, 0, b->t->nlink - 1);
	if (!r->failed && sched_route(&r->sb, b->links, len) != id)
		fail(r, "routes must be numbered 0, 1, ... in order, each once");
}

/* r or c: the transfer's operation. */
static XferOp
read_op(Reader *r)
{
	char op[4];
	if (!word(r, op, sizeof op) || (op[0] != 'r' && op[0] != 'c') || op[1])
		fail(r, "expected the operation r (reduce) or c (copy)");
	return op[0] == 'r' ? X_REDUCE : X_COPY;
}

/* msg ROUND SRC DST OP ROUTE N CHUNKS... (explicit form). */
static void
read_msg_line(Reader *r, SchedBody *b)
{
	Sched *s = b->s;
	int round = (int)integer(r, 0, b->nround - 1);
	int src = (int)integer(r, 0, b->nrank - 1), dst = (int)integer(r, 0, b->nrank - 1);
	XferOp op = read_op(r);
	int route = (int)integer(r, 0, s->nroute > 0 ? s->nroute - 1 : 0);
	int n = (int)integer(r, 1, b->nchunk);
	for (int i = 0; i < n && !r->failed; i++)
		b->chunks[i] = (int)integer(r, 0, b->nchunk - 1);
	char w[16];
	const char *at = r->at;
	r->sb.instance = 0;
	r->sb.fuse = 0;
	while (!r->failed && word(r, w, sizeof w)) {
		if (strcmp(w, "instance") == 0 && !r->sb.instance && !r->sb.fuse) {
			r->sb.instance = (int)integer(r, 1, MAX_INSTANCES - 1);
		} else if (strcmp(w, "fuse") == 0 && !r->sb.fuse && s->nfuse > 0) {
			r->sb.fuse = (int)integer(r, 1, s->nfuse);
		} else {
			r->at = at; /* line_end reports it */
			break;
		}
		at = r->at;
	}
	if (!r->failed && s->nroute == 0)
		fail(r, "a message before any route");
	if (!r->failed)
		sched_msg_route(&r->sb, round, src, dst, op, b->chunks, n,
		                s->route_link + s->route_off[route],
		                s->route_off[route + 1] - s->route_off[route]);
}

/* fuse NODE reduce|multicast|allreduce [self]: an in-network operation (before the
 * messages; verify checks the switch and the messages). */
static void
read_fuse_line(Reader *r, SchedBody *b)
{
	int node = (int)integer(r, 0, b->t->nnode - 1);
	char kind[16] = "";
	static const char *const kinds[] = {"reduce", "multicast", "allreduce"};
	int k = -1;
	if (word(r, kind, sizeof kind))
		for (int i = 0; i < 3; i++)
			k = strcmp(kind, kinds[i]) == 0 ? i : k;
	if (k < 0)
		fail(r, "expected reduce, multicast or allreduce");
	const char *at = r->at;
	char self[16] = "";
	if (!r->failed && word(r, self, sizeof self) && strcmp(self, "self") != 0) {
		r->at = at; /* line_end reports it */
		self[0] = 0;
	}
	if (r->failed)
		return;
	sched_fuse_begin(&r->sb, node, (FuseKind)k, self[0] != 0);
	sched_fuse_end(&r->sb);
}

/* generator affine MAT... VEC... | generator perm IMAGES... (symmetric form). */
static void
read_generator_line(Reader *r, SchedBody *b)
{
	const Topo *t = b->t;
	char how[16];
	GroupGen x = {.loc = here(r)};
	if (!word(r, how, sizeof how) || (strcmp(how, "affine") && strcmp(how, "perm")))
		fail(r, "expected generator affine ... or generator perm ...");
	else if (how[0] == 'a') {
		x.affine = true;
		for (int i = 0; i < t->ndim * t->ndim; i++)
			x.mat[i] = (int)integer(r, -MAX_NODES, MAX_NODES);
		for (int i = 0; i < t->ndim; i++)
			x.vec[i] = (int)integer(r, -MAX_NODES, MAX_NODES);
	} else {
		x.perm = arena_array(r->a, (size_t)t->nnode, sizeof *x.perm);
		for (int i = 0; i < t->nnode; i++)
			x.perm[i] = (int)integer(r, 0, t->nnode - 1);
	}
	VEC_PUSH(r->a, b->gens, b->ngen, b->capgen, x);
}

/* tree B roots N R... parent P... (symmetric form): the trees in order. */
static void
read_tree_line(Reader *r, SchedBody *b)
{
	const Topo *t = b->t;
	Sched *s = b->s;
	int id = (int)integer(r, 0, 63);
	if (id != b->ntree)
		fail(r, "trees must be numbered 0, 1, ... in order");
	expect(r, "roots");
	int nroot = (int)integer(r, 1, 2);
	int roots[2] = {0, 0};
	for (int i = 0; i < nroot; i++)
		roots[i] = (int)integer(r, 0, t->nnode - 1);
	expect(r, "parent");
	int *parent = arena_array(r->a, (size_t)t->nnode, sizeof *parent);
	for (int v = 0; v < t->nnode && !r->failed; v++)
		parent[v] = (int)integer(r, -1, t->nnode - 1);
	for (int i = 0; i < nroot && !r->failed; i++) /* the walk up stops at a root */
		if (parent[roots[i]] != -1) {
			char what[128];
			snprintf(what, sizeof what, "tree %d: its root %d has parent %d; a root's parent is -1",
			         id, roots[i], parent[roots[i]]);
			fail(r, what);
		}
	if (r->failed)
		return;
	if (!s->tree)
		s->tree = arena_array(r->a, 64, sizeof *s->tree);
	Routes routes;
	routes_init(&routes, t, ROUTE_SHORTEST);
	Tree *tr = tree_from_parents(r->diag, r->a, t, &routes, roots, nroot, parent, here(r));
	routes_free(&routes);
	if (!tr) {
		r->failed = true;
		return;
	}
	s->tree[b->ntree++] = tr;
}

/* base ROUND TREE SRC DST OP ROUTE (symmetric form). */
static void
read_base_line(Reader *r, SchedBody *b)
{
	const Topo *t = b->t;
	Sched *s = b->s;
	BaseXfer x = {.round = (int)integer(r, 0, b->nround - 1),
	              .tree = (int)integer(r, 0, b->ntree > 0 ? b->ntree - 1 : 0),
	              .src = (int)integer(r, 0, t->nnode - 1),
	              .dst = (int)integer(r, 0, t->nnode - 1)};
	x.op = read_op(r);
	x.route = (int)integer(r, 0, s->nroute > 0 ? s->nroute - 1 : 0);
	if (b->ntree == 0)
		fail(r, "a base transfer before any tree");
	if (s->node_rank[x.src] < 0 || s->node_rank[x.dst] < 0)
		fail(r, "a base transfer between nodes that are not ranks");
	if (s->nbase == b->capbase)
		s->base = arena_grow(r->a, s->base, &b->capbase, sizeof *s->base);
	s->base[s->nbase++] = x;
}

/* One line of the body; false at its end line. */
static bool
read_body_line(Reader *r, SchedBody *b)
{
	char w[16];
	if (!word(r, w, sizeof w))
		return true;
	if (strcmp(w, "end") == 0) {
		line_end(r);
		return false;
	} else if (strcmp(w, "owner") == 0 || strcmp(w, "a2a_src") == 0 ||
	           strcmp(w, "a2a_dst") == 0) {
		int *v = arena_array(r->a, (size_t)b->nchunk, sizeof *v);
		for (int i = 0; i < b->nchunk && !r->failed; i++)
			v[i] = (int)integer(r, 0, b->nrank - 1);
		*(w[0] == 'o' ? &b->s->owner : w[4] == 's' ? &b->s->a2a_src : &b->s->a2a_dst) = v;
	} else if (strcmp(w, "root") == 0) {
		b->s->root = (int)integer(r, 0, b->nrank - 1);
	} else if (strcmp(w, "route") == 0) {
		read_route_line(r, b);
	} else if (strcmp(w, "phase") == 0 && !b->sym && b->t->kind == TK_OPTICAL_RING) {
		read_phase(r, b->s, b->nround);
	} else if (strcmp(w, "barriers") == 0 && !b->s->barrier) {
		/* barriers K R1 .. RK (verify checks their order) */
		int k = (int)integer(r, 1, b->nround > 1 ? b->nround - 1 : 1);
		b->s->barrier = arena_array(r->a, (size_t)k, sizeof *b->s->barrier);
		for (int i = 0; i < k && !r->failed; i++)
			b->s->barrier[i] = (int)integer(r, 1, b->nround > 1 ? b->nround - 1 : 1);
		b->s->nbarrier = r->failed ? 0 : k;
	} else if (strcmp(w, "msg") == 0 && !b->sym) {
		read_msg_line(r, b);
	} else if (strcmp(w, "fuse") == 0 && !b->sym && b->s->nmsg == 0) {
		read_fuse_line(r, b);
	} else if (strcmp(w, "group") == 0 && b->sym) {
		if (!word(r, b->gname, sizeof b->gname))
			fail(r, "expected a group name");
		expect(r, "generators");
		b->declared_gens = (int)integer(r, 0, 1 << 30);
	} else if (strcmp(w, "generator") == 0 && b->sym) {
		read_generator_line(r, b);
	} else if (strcmp(w, "tree") == 0 && b->sym) {
		read_tree_line(r, b);
		if (r->failed)
			return false;
	} else if (strcmp(w, "base") == 0 && b->sym) {
		read_base_line(r, b);
	} else {
		fail(r, "unknown line in a schedule");
	}
	line_end(r);
	return true;
}

/* After the end line: what the body must have said, the group built and
 * what the proof by symmetry stands on checked. */
static void
finish_schedule(Reader *r, SchedBody *b)
{
	Sched *s = b->s;
	if (sched_end(r->diag, &r->sb) != 0) {
		r->failed = true;
		return;
	}
	s->nround = b->nround;
	if ((s->kind == CK_REDUCE_SCATTER || s->kind == CK_ALLGATHER) && !s->owner)
		fail(r, "reduce_scatter and allgather schedules need an owner line");
	if (s->kind == CK_ALLTOALL && (!s->a2a_src || !s->a2a_dst))
		fail(r, "alltoall schedules need a2a_src and a2a_dst lines");
	if (!b->sym)
		return;
	s->group = group_build(r->diag, r->a, b->t, arena_strdup(r->a, b->gname), s->loc, b->gens, b->ngen);
	s->ntree = b->ntree;
	if (!s->group)
		r->failed = true;
	else if (sched_check_symmetric(r->diag, s) != 0)
		r->failed = true;
	else if (s->nchunk != b->ntree * s->group->order)
		fail(r, "a symmetric schedule has trees x group order chunks");
	for (int i = 0; i < s->nbase && !r->failed; i++)
		if (sched_route_len(s, s->base[i].route) < 1)
			fail(r, "a base transfer over an empty route");
	s->msg = NULL;
	s->nmsg = 0;
}

static void
read_schedule(Reader *r)
{
	SchedBody b = {.declared_gens = -1, .gname = "G"};
	Sched *s = read_sched_header(r, &b);
	if (!s)
		return;
	r->s = s;
	sched_begin(&r->sb, r->a, s, NULL);
	b.links = xmalloc(((size_t)b.t->nnode + 1) * sizeof *b.links);
	b.chunks = xmalloc(((size_t)b.nchunk + 1) * sizeof *b.chunks);
	bool ended = false;
	while (!r->failed && next_line(r))
		if (!read_body_line(r, &b)) {
			ended = !r->failed;
			break;
		}
	free(b.links);
	free(b.chunks);
	if (!r->failed && !ended)
		fail(r, "the schedule has no 'end' line");
	if (!r->failed && b.sym && b.declared_gens != b.ngen)
		fail(r, "the group line's generator count differs from its generator lines");
	for (int i = 0; i < b.nrank && !r->failed; i++)
		if (b.t->is_switch && b.t->is_switch[s->rank_node[i]])
			fail(r, "rank_nodes names a switch");
	if (r->failed) {
		sched_abort(&r->sb);
		return;
	}
	finish_schedule(r, &b);
	if (r->failed)
		return;
	Prog *p = r->p;
	p->sched = xrealloc(p->sched, (size_t)(p->nsched + 1) * sizeof *p->sched);
	p->sched[p->nsched++] = s;
}

int
ir_read(Diag *dg, const char *text, size_t len, Prog *p)
{
	Reader r = {.diag = dg, .p = p, .a = &p->arena, .text = text, .end = text + len, .line = text};
	if (text_only(dg, text, len) != 0)
		return -1;
	if (!next_line(&r) || !expect(&r, "collc-ir") || integer(&r, 1, 1) != 1 || r.failed) {
		if (!r.failed)
			fail(&r, "not a collc IR file (it starts with 'collc-ir 1')");
		return -1;
	}
	line_end(&r);
	Pending t = {0};
	while (!r.failed && next_line(&r)) {
		char w[16];
		if (!word(&r, w, sizeof w))
			continue;
		if (strcmp(w, "topology") == 0) {
			topology_end(&r, &t);
			topology_header(&r, &t);
		} else if (strcmp(w, "net") == 0 || strcmp(w, "energy") == 0 || strcmp(w, "switch") == 0 ||
		           strcmp(w, "switching") == 0 || strcmp(w, "reduction") == 0 || strcmp(w, "link") == 0) {
			topology_line(&r, &t, w);
		} else if (strcmp(w, "schedule") == 0) {
			topology_end(&r, &t);
			read_schedule(&r);
			continue; /* it read its lines through 'end' */
		} else {
			fail(&r, "expected 'topology', 'net', 'switch', 'link' or 'schedule'");
		}
		line_end(&r);
	}
	topology_end(&r, &t);
	return r.failed ? -1 : 0;
}

bool
ir_is_text(const char *text, size_t len)
{
	return input_kind("", text, len) == IN_SCHED_TEXT;
}
