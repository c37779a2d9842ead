/*
 * alg.c: the classic algorithm library's front door: dispatch by name,
 * the candidates of `auto`, and the helpers every generator uses.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"

/* The generators, by AlgId, from the one table (algorithms.def). */
typedef Sched *Generator(const AlgCtx *);
#define NO_GENERATOR NULL
static Generator *const generator[NALG] = {
#define ALG(name, kinds, topos, usage, params, gen) [ALG_##name] = gen,
#include "algorithms.def"
#undef ALG
};

Sched *
alg_build(const AlgCtx *c, bool *missing)
{
	*missing = false;
	int a = alg_find(c->algorithm);
	if (a < 0 || !generator[a]) {
		*missing = true;
		return NULL;
	}
	Generator *gen = generator[a];
	if (!alg_implements((AlgId)a, c->kind)) {
		error_at(c->diag, c->loc, "%s does not implement %s", c->algorithm, coll_kind_name[c->kind]);
		return NULL;
	}
	if (c->compact && gen == alg_ring && ring_symmetric_applies(c))
		return alg_ring_symmetric(c);
	if (c->compact && gen == alg_bucket && bucket_symmetric_applies(c))
		return alg_bucket_symmetric(c);
	if (c->compact && gen == alg_recursive && xor_rank_form_applies(c))
		return alg_xor_rank_form(c);
	/* before the generator sizes anything (p * p blocks may not fit an int) */
	if (check_sched_size(c->diag, c->loc, c->name, c->kind, c->nrank,
	                     sched_min_chunks(c->kind, c->nrank, c->chunks)) != 0)
		return NULL;
	return gen(c);
}

AlgCtx
alg_ctx_new(Diag *dg, Arena *a, const char *name, Loc loc, CollKind kind, const Topo *t, Routes *routes,
            const int *rank_node, int nrank)
{
	AlgCtx c = {.diag = dg, .arena = a, .name = name, .loc = loc, .kind = kind, .topo = t, .routes = routes,
	            .rank_node = rank_node, .nrank = nrank, .reconfigs = -1};
	c.whole = nrank == t->nrank;
	for (int i = 0; c.whole && i < nrank; i++)
		c.whole = rank_node[i] == i;
	return c;
}

bool
alg_auto_candidate(AlgId a, CollKind kind, const Topo *t)
{
	return generator[a] && alg_applies(a, kind, t->kind);
}

int
alg_auto(const AlgCtx *c, Sched **out, const char **names, int max)
{
	return alg_auto_checked(c, out, names, max, verify_quiet);
}

/* A candidate x of auto into out[*n] if it passes its proof. A refusal (x
 * NULL) is the generator saying the instance is not its own; a schedule
 * that fails its proof is a bug, named. */
static void
keep_checked(const AlgCtx *c, AutoCheck *check, Sched *x, AlgId a, Sched **out, const char **names,
             int *n)
{
	char why[600];
	if (x && check(c->diag, x, why, sizeof why) != 0) {
		note_at(c->diag, c->loc, "auto: left out %s, whose schedule fails verification: %s",
		        alg_forms[a].name, why);
	} else if (x) {
		out[*n] = x;
		names[(*n)++] = alg_forms[a].name;
	}
}

/* packing on a mesh the file gives no group, by the mesh's reflections and
 * turns (mesh_group), beside every root's: neither is always the faster
 * (docs/algorithms.md, "auto": the two phases' busiest links differ under
 * the group, and overlapped they can beat every root's by 1.35x). NULL
 * where it does not apply or is refused. */
static Sched *
mesh_packing(const AlgCtx *c)
{
	if (c->topo->kind != TK_MESH || c->pack_group || !alg_auto_candidate(ALG_packing, c->kind, c->topo))
		return NULL;
	AlgCtx try = *c;
	try.algorithm = alg_forms[ALG_packing].name;
	try.chunks = 0;
	bool missing = false;
	diag_mute(c->diag, true);
	try.pack_group = mesh_group(c->diag, c->arena, c->topo, c->loc,
	                            arena_printf(c->arena, "reflections(%s)", c->topo->name));
	Sched *x = try.pack_group ? alg_build(&try, &missing) : NULL;
	diag_mute(c->diag, false);
	return x;
}

int
alg_auto_checked(const AlgCtx *c, Sched **out, const char **names, int max, AutoCheck *check)
{
	int n = 0;
	for (int a = 0; a < NALG && n < max; a++) {
		if (!alg_auto_candidate((AlgId)a, c->kind, c->topo))
			continue;
		AlgCtx try = *c;
		try.algorithm = alg_forms[a].name;
		try.chunks = 0;
		bool missing = false;
		diag_mute(c->diag, true);
		Sched *x = alg_build(&try, &missing);
		diag_mute(c->diag, false);
		keep_checked(c, check, x, (AlgId)a, out, names, &n);
	}
	/* SP by the form's own group and tree, last: a tie keeps the library's
	 * pick (alg_auto_sp.c) */
	if (n < max)
		keep_checked(c, check, alg_auto_sp(c), ALG_symmetric, out, names, &n);
	if (n < max)
		keep_checked(c, check, mesh_packing(c), ALG_packing, out, names, &n);
	return n;
}

/* ---- helpers ---- */

int
imod(int a, int n)
{
	int r = a % n;
	return r < 0 ? r + n : r;
}

int
ilog2(int p)
{
	int l = 0;
	while ((1 << (l + 1)) <= p)
		l++;
	return l;
}

int
clog2(int p)
{
	int l = 0;
	while ((1 << l) < p)
		l++;
	return l;
}

bool
is_pow(int p, int base)
{
	while (p > 1 && p % base == 0)
		p /= base;
	return p == 1;
}

int
pipeline_segments(const AlgCtx *c, double fill, double share, double msgs_per_seg)
{
	return pipeline_segments_bw(c, fill, share, msgs_per_seg, c->topo->net.bandwidth);
}

int
pipeline_segments_bw(const AlgCtx *c, double fill, double share, double msgs_per_seg, double bw)
{
	const Net *n = &c->topo->net;
	double alpha = n->step_overhead + n->link_latency + n->router_latency;
	return pipeline_segments_time(fill, 8 * share / bw, alpha, msgs_per_seg);
}

int
chunks_per_share(const AlgCtx *c, const char *alg, int shares, const char *why, int m)
{
	if (!c->chunks)
		return m;
	if (c->chunks % shares == 0)
		return c->chunks / shares;
	error_at(c->diag, c->loc, "%s cuts the vector into %d shares (%s) of C pipeline chunks each; chunks %d "
	         "is not a multiple of %d", alg, shares, why, c->chunks, shares);
	return -1;
}

double
route_bw(Routes *r, const Topo *t, int src, int dst)
{
	const int *l;
	int n = route_get(r, src, dst, &l);
	double bw = HUGE_VAL;
	for (int i = 0; i < n; i++)
		bw = t->link[l[i]].bandwidth < bw ? t->link[l[i]].bandwidth : bw;
	return bw;
}

void
level_hop(double *bw, int nlevel, int ht, int d, bool up, bool down, double up_bw, double down_bw)
{
	int u = ht - d, w = (up ? ht : 0) + d - 1;
	u = u < nlevel ? u : nlevel - 1;
	w = w < nlevel ? w : nlevel - 1;
	if (up && u >= 0 && up_bw < bw[u])
		bw[u] = up_bw;
	if (down && w >= 0 && down_bw < bw[w])
		bw[w] = down_bw;
}

int
pipeline_segments_levels(const AlgCtx *c, const double *bw, int nlevel, double fill, double share,
                         double msgs_per_seg)
{
	double sum = 0, most = 0;
	bool alike = true;
	for (int l = 0; l < nlevel; l++) {
		if (bw[l] == HUGE_VAL)
			continue; /* no hop in that round */
		alike &= bw[l] == bw[0];
		sum += 8 / bw[l];
		most = 8 / bw[l] > most ? 8 / bw[l] : most;
	}
	if (alike || nlevel < 2) /* links alike: the network's rule at their bandwidth */
		return pipeline_segments_bw(c, fill, share, msgs_per_seg,
		                            nlevel > 0 && bw[0] < HUGE_VAL ? bw[0] : c->topo->net.bandwidth);
	const Net *n = &c->topo->net;
	double alpha = n->step_overhead + n->link_latency + n->router_latency;
	return pipeline_segments_time(1, share * (sum - most), alpha, msgs_per_seg);
}

int
pipeline_segments_time(double fill, double stream, double alpha, double msgs_per_seg)
{
	/* no depth to fill (a chain of 2), or no size: one segment */
	double m = alpha > 0 && fill > 0 && stream > 0 ? sqrt(fill * stream / alpha) : 1;
	if (msgs_per_seg > 0 && m > MAX_PIPELINE_MSGS / msgs_per_seg)
		m = MAX_PIPELINE_MSGS / msgs_per_seg;
	return m < 1 ? 1 : (int)m;
}

int
gen_begin(Gen *g, const AlgCtx *c, int nblock, int m)
{
	memset(g, 0, sizeof *g);
	g->ctx = c;
	g->p = c->nrank;
	g->m = m;
	g->mult = 1;
	if (c->chunks) {
		if (c->chunks % (nblock * m) != 0) {
			error_at(c->diag, c->loc, "%s cuts the vector into %d chunks here (%d blocks x %d); chunks "
			         "%d is not a multiple of that", c->algorithm, nblock * m, nblock, m,
			         c->chunks);
			return -1;
		}
		g->mult = c->chunks / (nblock * m);
	}
	m *= g->mult;
	if (check_sched_size(c->diag, c->loc, c->name, c->kind, c->nrank, (double)nblock * m) != 0)
		return -1;
	g->s = sched_new(c->arena, c->name, c->loc, c->kind, c->algorithm, c->topo, c->rank_node,
	                 c->nrank);
	g->s->nchunk = nblock * m;
	g->s->root = c->root;
	sched_begin(&g->b, c->arena, g->s, c->routes);
	if (c->kind == CK_REDUCE_SCATTER || c->kind == CK_ALLGATHER) {
		g->s->owner = arena_array(c->arena, (size_t)g->s->nchunk, sizeof *g->s->owner);
		for (int k = 0; k < g->s->nchunk; k++)
			g->s->owner[k] = k / m;
	}
	if (c->kind == CK_ALLTOALL) {
		g->s->a2a_src = arena_array(c->arena, (size_t)g->s->nchunk, sizeof *g->s->a2a_src);
		g->s->a2a_dst = arena_array(c->arena, (size_t)g->s->nchunk, sizeof *g->s->a2a_dst);
		for (int k = 0; k < g->s->nchunk; k++) {
			g->s->a2a_src[k] = k / m / g->p;
			g->s->a2a_dst[k] = k / m % g->p;
		}
	}
	return 0;
}

Sched *
gen_end(Diag *dg, Gen *g)
{
	int rc = sched_end(dg, &g->b);
	free(g->buf);
	return rc == 0 ? g->s : NULL;
}

void
gen_block(Gen *g, int block, int sub)
{
	int per = g->m * g->mult;
	int from = sub < 0 ? 0 : sub * g->mult, to = sub < 0 ? per : (sub + 1) * g->mult;
	for (int k = from; k < to; k++) {
		if (g->nbuf == g->capbuf) {
			g->capbuf = g->capbuf ? 2 * g->capbuf : 64;
			g->buf = xrealloc(g->buf, (size_t)g->capbuf * sizeof *g->buf);
		}
		g->buf[g->nbuf++] = block * per + k;
	}
}

void
gen_send(Gen *g, int round, int src, int dst, XferOp op)
{
	if (g->nbuf > 0 && src != dst)
		sched_msg(&g->b, round, src, dst, op, g->buf, g->nbuf);
	g->nbuf = 0;
}

void
gen_send_route(Gen *g, int round, int src, int dst, XferOp op, const int *links, int nlink)
{
	if (g->nbuf > 0)
		sched_msg_route(&g->b, round, src, dst, op, g->buf, g->nbuf, links, nlink);
	g->nbuf = 0;
}

void
gen_send_link(Gen *g, int round, int src, int dst, XferOp op, int link)
{
	gen_send_route(g, round, src, dst, op, &link, 1);
}

int
gen_link(const Gen *g, int src, int dim, int dir)
{
	const Topo *t = g->ctx->topo;
	int v = g->ctx->rank_node[src];
	for (int i = t->out[v]; i < t->out[v + 1]; i++)
		if (t->link[i].dim == dim && t->link[i].dir == dir)
			return i;
	return -1;
}
