/*
 * alg_ring.c: ring algorithms (algorithms.md 1). A ring runs over an order
 * of the ranks (position i sends to position i + dir); reduce-scatter
 * takes p - 1 rounds, allgather p - 1, allreduce both.
 *   ring            one ring in rank order (ring(ports 1))
 *   ring(ports 2)   two opposite rings, each on half of every block
 *   ring(halfway)   two ports (as ring(ports 2)) on whole blocks, each block covering half the
 *                   ring each way: floor(p/2) rounds per phase instead of
 *                   p - 1, each round sending a block (N/p) on both ports
 *   nccl_ring       on rails(boxes B, gpus G, ...): G channels, as NCCL's ring
 *                   search builds them on rail-connected boxes, each on 1/G of
 *                   every block; channel c visits each box's GPUs from c up,
 *                   so its ring leaves every box through a different NIC
 *   multiport_ring  2d directed Hamiltonian cycles of a torus that use
 *                   every directed link once (the staircase decomposition
 *                   of 2D tori), each on 1/2d of every block
 */
#include <stdlib.h>
#include <string.h>

#include "alg.h"

/* One ring: order[i] is the rank at position i; links[i], if given, is the
 * link from position i to position i + dir. Returns the rounds used. */
static int
run_ring(Gen *g, const int *order, int dir, int sub, int round0, const int *links)
{
	int p = g->p, r = round0;
	CollKind k = g->ctx->kind;
	if (k == CK_ALLREDUCE || k == CK_REDUCE_SCATTER) {
		for (int s = 0; s < p - 1; s++, r++)
			for (int i = 0; i < p; i++) {
				gen_block(g, order[imod(i - dir * (s + 1), p)], sub);
				int to = order[imod(i + dir, p)];
				if (links)
					gen_send_link(g, r, order[i], to, X_REDUCE, links[i]);
				else
					gen_send(g, r, order[i], to, X_REDUCE);
			}
	}
	if (k == CK_ALLREDUCE || k == CK_ALLGATHER) {
		for (int s = 0; s < p - 1; s++, r++)
			for (int i = 0; i < p; i++) {
				gen_block(g, order[imod(i - dir * s, p)], sub);
				int to = order[imod(i + dir, p)];
				if (links)
					gen_send_link(g, r, order[i], to, X_COPY, links[i]);
				else
					gen_send(g, r, order[i], to, X_COPY);
			}
	}
	return r - round0;
}

/* ring(halfway), in rank order, from round r. With P = floor(p/2)
 * and Q = p - 1 - P: reduce-scatter reduces block j along +1 from rank j - P
 * (rounds 1..P) and along -1 from rank j + Q (rounds P-Q+1..P), both chains
 * ending at j in round P; allgather sends block j P ranks along +1 and Q
 * along -1. Each round, rank i sends one block to each neighbour. */
static void
run_halfway(Gen *g, int r)
{
	int p = g->p, P = p / 2, Q = p - 1 - P;
	CollKind k = g->ctx->kind;
	if (k == CK_ALLREDUCE || k == CK_REDUCE_SCATTER) {
		for (int s = 1; s <= P; s++, r++)
			for (int i = 0; i < p; i++) {
				gen_block(g, imod(i + P - s + 1, p), 0);
				gen_send(g, r, i, imod(i + 1, p), X_REDUCE);
				if (s > P - Q) {
					gen_block(g, imod(i - (P - s + 1), p), 0);
					gen_send(g, r, i, imod(i - 1, p), X_REDUCE);
				}
			}
	}
	if (k == CK_ALLREDUCE || k == CK_ALLGATHER) {
		for (int s = 1; s <= P; s++, r++)
			for (int i = 0; i < p; i++) {
				gen_block(g, imod(i - (s - 1), p), 0);
				gen_send(g, r, i, imod(i + 1, p), X_COPY);
				if (s <= Q) {
					gen_block(g, imod(i + (s - 1), p), 0);
					gen_send(g, r, i, imod(i - 1, p), X_COPY);
				}
			}
	}
}

Sched *
alg_ring(const AlgCtx *c)
{
	int ports = c->ports ? c->ports : c->halfway ? 2 : 1;
	if (c->halfway && ports != 2) {
		error_at(c->diag, c->loc, "ring(halfway) sends every block both ways round: it takes ports 2, "
		         "not 1, in '%s'", c->name);
		return NULL;
	}
	if (c->halfway) {
		Gen g;
		if (gen_begin(&g, c, c->nrank, 1) != 0)
			return NULL;
		run_halfway(&g, 0);
		return gen_end(c->diag, &g);
	}
	Gen g;
	if (gen_begin(&g, c, c->nrank, ports) != 0)
		return NULL;
	int *order = xmalloc((size_t)c->nrank * sizeof *order);
	for (int i = 0; i < c->nrank; i++)
		order[i] = i;
	run_ring(&g, order, +1, 0, 0, NULL);
	if (ports == 2)
		run_ring(&g, order, -1, 1, 0, NULL);
	free(order);
	return gen_end(c->diag, &g);
}

/* The staircase decomposition of a 2D torus into two Hamiltonian cycles
 * (algorithms.md 1.3): H1 goes (i, j) -> (i, j+1) except when
 * j = -i-1 (mod n), where it goes (i+1, j); H2 takes the other + links.
 * Fills the cycles as node orders with the link of each hop; -1 if a
 * cycle is not Hamiltonian. */
static int
staircase(const Gen *g, int cyc, int *order, int *links)
{
	const Topo *t = g->ctx->topo;
	int m = t->size[0], n = t->size[1], p = m * n;
	int i = 0, j = 0;
	unsigned char *seen = xcalloc((size_t)p, 1);
	int rc = 0;
	for (int k = 0; k < p; k++) {
		int v = i * n + j;
		if (seen[v]) {
			rc = -1;
			break;
		}
		seen[v] = 1;
		order[k] = v;
		bool corner = imod(j, n) == imod(-i - 1, n);
		/* H1: along j except at the corner; H2: along i except at the corner */
		int dim = (cyc == 0) == corner ? 0 : 1;
		links[k] = gen_link(g, v, dim, +1);
		if (dim == 0)
			i = (i + 1) % m;
		else
			j = (j + 1) % n;
	}
	if (rc == 0 && (i != 0 || j != 0))
		rc = -1;
	free(seen);
	return rc;
}

Sched *
alg_multiport_ring(const AlgCtx *c)
{
	const Topo *t = c->topo;
	bool torus = t->kind == TK_TORUS || t->kind == TK_RING;
	if (!torus || !c->whole || t->ndim > 2 || (t->ndim == 2 && (t->size[0] < 3 || t->size[1] < 3))) {
		error_at(c->diag, c->loc, "multiport_ring needs a whole 1D or 2D torus (sides at least 3) to "
		         "decompose into directed Hamiltonian cycles; '%s' is not one", c->name);
		return NULL;
	}
	int p = c->nrank, ncyc = 2 * t->ndim;
	Gen g;
	if (gen_begin(&g, c, p, ncyc) != 0)
		return NULL;
	int *order = xmalloc((size_t)p * sizeof *order), *links = xmalloc((size_t)p * sizeof *links);
	int *rorder = xmalloc((size_t)p * sizeof *rorder), *rlinks = xmalloc((size_t)p * sizeof *rlinks);
	for (int cyc = 0; cyc < t->ndim; cyc++) {
		if (t->ndim == 1) {
			for (int i = 0; i < p; i++) {
				order[i] = i;
				links[i] = gen_link(&g, i, 0, +1);
			}
		} else if (staircase(&g, cyc, order, links) != 0) {
			error_at(c->diag, c->loc, "multiport_ring: the staircase decomposition does not split "
			         "torus(%d, %d) into Hamiltonian cycles (it works on n x n and on some "
			         "m x n with m >= n); use bucket or symmetric here", t->size[0], t->size[1]);
			free(order), free(links), free(rorder), free(rlinks);
			sched_abort(&g.b);
			free(g.buf);
			return NULL;
		}
		/* the cycle and its reverse, each on its own sub-chunk */
		for (int i = 0; i < p; i++) {
			rorder[i] = order[(p - i) % p];
			int from = rorder[i], to = order[(p - i - 1 + p) % p];
			const Link *l = &t->link[links[(p - i - 1 + p) % p]];
			rlinks[i] = gen_link(&g, from, l->dim, -l->dir);
			(void)to;
		}
		run_ring(&g, order, +1, 2 * cyc, 0, links);
		run_ring(&g, rorder, +1, 2 * cyc + 1, 0, rlinks);
	}
	free(order), free(links), free(rorder), free(rlinks);
	return gen_end(c->diag, &g);
}

/* ---- the ring in symmetric form (for collc sim) ---- */

/* Whether the ring is the same under every translation: a whole ring(p)
 * or 1D torus in rank order, one link each way between neighbours, links
 * alike, `chunks` a multiple of the natural count. */
bool
ring_symmetric_applies(const AlgCtx *c)
{
	const Topo *t = c->topo;
	int p = c->nrank, ports = c->ports ? c->ports : 1;
	bool ring = t->kind == TK_RING || (t->kind == TK_TORUS && t->ndim == 1);
	if (!ring || !c->whole || p < 3 || ports > 2 || (c->chunks && c->chunks % (p * ports)) ||
	    c->kind == CK_ALLTOALL || c->kind == CK_BROADCAST || c->kind == CK_REDUCE)
		return false;
	return translations_apply(t);
}

/* Base tree b's transfers: the chunk of the block at node 0 on a ring in
 * direction dir, the chunk run_ring sends from position i in step s when
 * i - dir (s + 1) = 0 (reduce) or i - dir s = 0 (allgather). */
static void
ring_base_transfers(const AlgCtx *c, Translates *tr, int b, int dir)
{
	int p = c->nrank, r = 0;
	bool reduce = c->kind == CK_ALLREDUCE || c->kind == CK_REDUCE_SCATTER;
	bool gather = c->kind == CK_ALLREDUCE || c->kind == CK_ALLGATHER;
	for (int phase = 0; phase < 2; phase++) {
		if (phase == 0 ? !reduce : !gather)
			continue;
		for (int step = 0; step < p - 1; step++, r++) {
			int src = imod(dir * (step + 1 - phase), p), dst = imod(src + dir, p);
			const int *l;
			int n = route_get(c->routes, c->rank_node[src], c->rank_node[dst], &l);
			translates_xfer(tr, b, r, c->rank_node[src], c->rank_node[dst],
			                phase == 0 ? X_REDUCE : X_COPY, l, n);
		}
	}
	tr->s->nround = r;
}

/*
 * The ring as tree symmetrization: chunk (b, g) is the block of node g
 * (translation by g), base tree b one piece of it on one of the `ports`
 * rings, and its transfers are the chain run_ring sends it along. The
 * messages are exactly alg_ring's; the schedule is held in its compact
 * form, p^2 messages in 2(p - 1) base transfers per tree, so that collc
 * sim streams it (ring(16384)). NULL after reporting.
 */
Sched *
alg_ring_symmetric(const AlgCtx *c)
{
	int p = c->nrank, ports = c->ports ? c->ports : 1;
	int mult = c->chunks ? c->chunks / (p * ports) : 1, ntree = ports * mult;
	Translates tr;
	if (translates_begin(&tr, c, ntree) != 0)
		return NULL;
	for (int b = 0; b < ntree; b++) {
		int dir = b / mult == 0 ? +1 : -1;
		ring_base_transfers(c, &tr, b, dir);
	}
	return translates_end(c->diag, &tr);
}

/* Channel ch's order through the GPUs of a box of G GPUs and K NICs, q =
 * G/K GPUs a NIC. With a NIC per GPU (q = 1) the order c, c + 1, ...,
 * c + G - 1 (mod G): the ring leaves the box from GPU c - 1 and enters the
 * next at GPU c. With shared NICs NCCL's ring search (search.cc,
 * ncclTopoSearchRecNet) gives channel ch NET nets[ch mod K], enters at a
 * GPU local to it and leaves from another GPU back to the same NET (crossNic
 * 0): here channel ch takes NIC k = ch mod K, enters at GPU kq + j (j =
 * ch / K), visits the other NICs' GPUs, and ends at GPU kq + (j - 1 mod q),
 * so every GPU enters one channel and leaves one, and NIC k carries q. */
static void
channel_box_order(int gpus, int nics, int ch, int *out)
{
	int q = gpus / nics, k = ch % nics, j = ch / nics, i = 0;
	if (q == 1) {
		for (int m = 0; m < gpus; m++)
			out[m] = (ch + m) % gpus;
		return;
	}
	out[i++] = k * q + j;
	for (int m = 1; m < nics; m++)
		for (int x = 0; x < q; x++)
			out[i++] = (k + m) % nics * q + x;
	for (int x = 1; x < q; x++)
		out[i++] = k * q + (j + x) % q;
}

/* Walecki's path from GPU s through a box whose every pair of GPUs has its
 * own link (G even): s, s + 1, s - 1, s + 2, s - 2, ..., s + G/2 (mod G).
 * The G paths (one from each s) use every ordered pair's link exactly once
 * (the G/2 from s < G/2 decompose the complete graph, the others are their
 * reverses), so G channels share no xGMI link. */
static void
walecki_path(int gpus, int s, int *out)
{
	int i = 0;
	out[i++] = s;
	for (int m = 1; m <= gpus / 2; m++) {
		out[i++] = (s + m) % gpus;
		if (i < gpus)
			out[i++] = (s - m + gpus) % gpus;
	}
}

/* Reports why nccl_ring does not run on t; false if it does. */
static bool
nccl_ring_refused(const AlgCtx *c, const Topo *t)
{
	if ((t->kind != TK_RAILS && t->kind != TK_XGMI_RAILS && t->kind != TK_LEAF_SPINE_BOXES) ||
	    !c->whole) {
		error_at(c->diag, c->loc, "nccl_ring runs on every GPU of a rails, xgmi_rails or "
		         "leaf_spine_boxes cluster (a channel per NIC); '%s' is not on one", c->name);
		return true;
	}
	if (t->kind == TK_XGMI_RAILS && (t->nics || t->size[1] % 2 || t->size[0] % 2)) {
		error_at(c->diag, c->loc, "nccl_ring on xgmi_rails takes a NIC per GPU and an even number "
		         "of GPUs and of boxes ('%s': %d boxes of %d GPUs, %d NICs each): only there do its "
		         "channels' paths through a box (Walecki's, each from the GPU the last box's ended "
		         "at) share no xGMI link", c->name, t->size[0], t->size[1],
		         t->nics ? t->nics : t->size[1]);
		return true;
	}
	return false;
}

/* NCCL's rings per channel on a GPU cluster: channel c's ring goes through
 * box 0, 1, ..., each box's GPUs in channel_box_order's order (on
 * xgmi_rails, Walecki's path from GPU c + b G/2, so each box starts at the
 * GPU whose rail the last one left on), so it crosses between boxes on a
 * rail or leaf port (and with shared NICs a NIC) that spreads the G
 * channels' traffic between boxes evenly over every NIC, as NCCL's channels
 * do (docs/gpu-clusters.md). */
Sched *
alg_nccl_ring(const AlgCtx *c)
{
	const Topo *t = c->topo;
	if (nccl_ring_refused(c, t))
		return NULL;
	int boxes = t->size[0], gpus = t->size[1], p = c->nrank, nics = t->nics ? t->nics : gpus;
	Gen g;
	if (gen_begin(&g, c, p, gpus) != 0)
		return NULL;
	int *order = xmalloc((size_t)p * sizeof *order);
	for (int ch = 0; ch < gpus; ch++) {
		for (int b = 0; b < boxes; b++) {
			int *box = order + b * gpus;
			if (t->kind == TK_XGMI_RAILS)
				walecki_path(gpus, (ch + b * (gpus / 2)) % gpus, box);
			else if (b == 0)
				channel_box_order(gpus, nics, ch, box);
			else
				memcpy(box, order, (size_t)gpus * sizeof *box);
			for (int k = 0; k < gpus; k++)
				box[k] += b * gpus;
		}
		run_ring(&g, order, +1, ch, 0, NULL);
	}
	free(order);
	return gen_end(c->diag, &g);
}
