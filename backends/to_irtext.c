/*
 * to_irtext.c: the schedule as text (docs/ir.md, "The IR text format"), the
 * format irtext_read.c (beside it) reads back. Version 1. A symmetric schedule is written
 * in its compact form (group generators, base trees, base transfers), an
 * explicit one message by message. Doubles are written
 * in the shortest form that reads back as the same bits.
 */
#include <stdlib.h>
#include <string.h>

#include "backend.h"

/* The shortest decimal that reads back as the same double. */
static void
num(FILE *f, double v)
{
	char buf[40];
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(buf, sizeof buf, "%.*g", digits, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fprintf(f, " %s", buf);
}

static void
write_topology(const Topo *t, FILE *f)
{
	fprintf(f, "topology %s %s dims %d", t->name, topo_kind_name(t->kind), t->ndim);
	for (int i = 0; i < t->ndim; i++)
		fprintf(f, " %d", t->size[i]);
	fprintf(f, " variant %d nodes %d", t->variant, t->nnode);
	if (t->nics) /* shared NICs as nodes (docs/gpu-clusters.md); written only then */
		fprintf(f, " nics %d nic_link_gbps %d", t->nics, t->nic_link_gbps);
	fputc('\n', f);
	const Net *n = &t->net;
	fputs("net", f);
	double v[] = {n->bandwidth, n->link_latency, n->router_latency, n->step_overhead, n->mtu,
	              n->energy_per_bit, n->reconfig_delay};
	for (size_t i = 0; i < countof(v); i++)
		num(f, v[i]);
	fputc('\n', f);
	/* written only when set, so files without them read as before */
	if (n->router_energy_per_bit > 0 || n->port_static_power > 0 || n->link_static_power > 0) {
		fputs("energy", f);
		num(f, n->router_energy_per_bit);
		num(f, n->port_static_power);
		num(f, n->link_static_power);
		fputc('\n', f);
	}
	if (n->store_and_forward || n->buffer_packets > 0 || n->buffer_bytes > 0) {
		fprintf(f, "switching %s", n->store_and_forward ? "store_and_forward" : "cut_through");
		num(f, n->buffer_packets);
		num(f, n->buffer_bytes);
		fputc('\n', f);
	}
	if (n->reduction)
		fprintf(f, "reduction %s\n", switch_reduction_words[n->reduction & 3]);
	for (int node = 0; node < t->nnode; node++)
		if (t->is_switch && t->is_switch[node]) {
			char name[64] = "";
			if (topo_forms[t->kind].node_class[0].word) /* a name: "rail(2)" */
				topo_node_name(t, node, name, sizeof name);
			fprintf(f, "switch %d%s%s\n", node, *name ? " " : "", name);
		}
	for (int i = 0; i < t->nlink; i++) {
		const Link *l = &t->link[i];
		fprintf(f, "link %d %d %d %d", l->src, l->dst, l->dim, l->dir);
		num(f, l->bandwidth);
		num(f, l->latency);
		num(f, l->energy_per_bit);
		fputc('\n', f);
	}
}

static void
ints(FILE *f, const char *head, const int *v, int n)
{
	fputs(head, f);
	for (int i = 0; i < n; i++)
		fprintf(f, " %d", v[i]);
	fputc('\n', f);
}

static void
write_schedule(const Sched *s, FILE *f)
{
	bool sym = s->base != NULL;
	fprintf(f, "schedule %s %s %s topology %s ranks %d chunks %d rounds %d form %s\n", s->name,
	        coll_kind_name[s->kind], s->algorithm, s->topo->name, s->nrank, s->nchunk, s->nround,
	        sym ? "symmetric" : "explicit");
	ints(f, "rank_nodes", s->rank_node, s->nrank);
	if (s->owner)
		ints(f, "owner", s->owner, s->nchunk);
	if (s->a2a_src) {
		ints(f, "a2a_src", s->a2a_src, s->nchunk);
		ints(f, "a2a_dst", s->a2a_dst, s->nchunk);
	}
	if (s->kind == CK_BROADCAST || s->kind == CK_REDUCE)
		fprintf(f, "root %d\n", s->root);
	for (int r = 0; r < s->nroute; r++) {
		fprintf(f, "route %d %d", r, sched_route_len(s, r));
		for (int k = s->route_off[r]; k < s->route_off[r + 1]; k++)
			fprintf(f, " %d", s->route_link[k]);
		fputc('\n', f);
	}
	if (s->nbarrier) {
		fprintf(f, "barriers %d", s->nbarrier);
		ints(f, "", s->barrier, s->nbarrier);
	}
	for (int i = 0; i < s->nphase; i++) {
		const Phase *ph = &s->phase[i];
		fprintf(f, "phase %d %s", ph->round, ph->reconfig ? "rewired" : "kept");
		ints(f, "", ph->next, optical_nblock(s->topo));
	}
	if (sym) {
		const Group *g = s->group;
		const Topo *t = s->topo;
		int d = t->ndim;
		fprintf(f, "group %s generators %d\n", g->name, g->ngen);
		for (int k = 0; k < g->ngen; k++) {
			const GroupGen *x = &g->gen[k];
			if (x->affine) {
				fputs("generator affine", f);
				for (int i = 0; i < d * d; i++)
					fprintf(f, " %d", x->mat[i]);
				for (int i = 0; i < d; i++)
					fprintf(f, " %d", x->vec[i]);
				fputc('\n', f);
			} else {
				ints(f, "generator perm", x->perm, t->nnode);
			}
		}
		for (int b = 0; b < s->ntree; b++) {
			const Tree *tr = s->tree[b];
			fprintf(f, "tree %d roots %d", b, tr->nroot);
			for (int i = 0; i < tr->nroot; i++)
				fprintf(f, " %d", tr->root[i]);
			ints(f, " parent", tr->parent, t->nnode);
		}
		for (int i = 0; i < s->nbase; i++) {
			const BaseXfer *x = &s->base[i];
			fprintf(f, "base %d %d %d %d %c %d\n", x->round, x->tree, x->src, x->dst,
			        x->op == X_REDUCE ? 'r' : 'c', x->route);
		}
	} else {
		for (int i = 0; i < s->nfuse; i++) /* in-network operations, numbered from 1 */
			fprintf(f, "fuse %d %s%s\n", s->fuse[i].node,
			        s->fuse[i].kind == FUSE_REDUCE      ? "reduce"
			        : s->fuse[i].kind == FUSE_MULTICAST ? "multicast"
			                                            : "allreduce",
			        s->fuse[i].self ? " self" : "");
		for (int i = 0; i < s->nmsg; i++) {
			const Msg *m = &s->msg[i];
			fprintf(f, "msg %d %d %d %c %d %d", m->round, m->src, m->dst,
			        m->op == X_REDUCE ? 'r' : 'c', m->route, m->n);
			for (int k = 0; k < m->n; k++)
				fprintf(f, " %d", s->chunks[m->first + k]);
			if (m->instance != 0)
				fprintf(f, " instance %d", m->instance);
			if (m->fuse != 0)
				fprintf(f, " fuse %d", m->fuse);
			fputc('\n', f);
		}
	}
	fputs("end\n", f);
}

static int
emit_ir(Diag *dg, const Prog *p, const BuildOpts *o, FILE *f)
{
	(void)dg; /* writing the IR text reports nothing */
	const Sched **sel = xmalloc(((size_t)p->nsched + 1) * sizeof *sel);
	int n = backend_select(p, o, sel, p->nsched);
	fputs("collc-ir 1\n", f);
	/* each topology a schedule uses, once, before the schedules */
	for (int i = 0; i < n; i++) {
		bool first = true;
		for (int j = 0; j < i; j++)
			first &= sel[j]->topo != sel[i]->topo;
		if (first)
			write_topology(sel[i]->topo, f);
	}
	for (int i = 0; i < n; i++)
		write_schedule(sel[i], f);
	free(sel);
	return 0;
}

const Backend ir_backend = {"ir", "the schedule text format (check reads it back)", ".collir",
                            emit_ir};
