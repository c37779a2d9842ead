/*
 * topo.c: builds the directed graph of every topology form. Node ids are
 * row-major over the coordinates (last coordinate fastest). Links are
 * directed; each node's links are stored together in "port order":
 *
 *   torus, ring, mesh: dimension 0 then 1 ..., in each the -1 link then +1;
 *                      a size-2 dimension of a torus has both, as two
 *                      parallel links (the wrap-around one is real cabling)
 *   supermesh:         the mesh's links, then the added perimeter copies
 *   hyperx:            dimension 0 then 1 ..., in each by offset 1..n-1
 *   full:              by destination id
 *   spine_leaf:        hosts first (id leaf * hosts + index), then leaf
 *                      switches, then spines; host -> leaf, leaf -> hosts
 *                      then spines, spine -> leaves
 *   optical_ring:      u -> u+1 (the static ring view; see docs/ir.md),
 *                      then the circuits a configuration may switch in
 *   rails:             GPUs first (id box * gpus + index), then each box's
 *                      switch (NVSwitch), then the rail switches; a GPU's
 *                      links: its box switch, then its NIC's rail switch;
 *                      box switch -> its GPUs; rail g -> GPU g of each box
 *   xgmi_rails:        GPUs first (id box * gpus + index), then the rail
 *                      switches; a GPU's links: the other GPUs of its box
 *                      by index, then its NIC's rail; rail g -> GPU g of
 *                      each box
 *   (either, nics K):  K rails, then the shared NICs last (id box * K + k
 *                      after the rails); a GPU's last link goes to its NIC,
 *                      a NIC's to its GPUs, then its rail; rail k -> NIC k
 *                      of each box
 *   leaf_spine_boxes:  GPUs first (id box * gpus + index), then the box
 *                      switches, the leaves (one per box), the spines; a
 *                      GPU's links: its box switch, then its NIC's leaf;
 *                      box switch -> its GPUs; leaf -> its box's GPUs,
 *                      then the spines; spine -> the leaves (nics K: the
 *                      NICs last as on rails, a leaf's first links to its
 *                      box's NICs)
 *   torus_boxes:       GPUs first (id box * gpus + index, the box row-major
 *                      over the torus's coordinates), then the box
 *                      switches; a GPU's links: its box switch, then its
 *                      NIC's cable to a GPU of the next box (GPU 2p to GPU
 *                      2p + 1 of the box +1 along dimension p mod k, GPU
 *                      2p + 1 to GPU 2p of the box -1 there); box switch
 *                      -> its GPUs
 *   graph:             in the order the links were written
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

const Net net_defaults = {
	.bandwidth = 400e9,
	.link_latency = 100e-9,
	.router_latency = 0,
	.step_overhead = 0,
	.mtu = 4096,
	.energy_per_bit = 1e-12,
	.reconfig_delay = 10e-6,
};

typedef struct Builder {
	Arena *arena;
	Topo *t;
	int cap;
} Builder;

static void
add_link(Builder *b, int src, int dst, int dim, int dir)
{
	Topo *t = b->t;
	if (t->nlink == b->cap)
		t->link = arena_grow(b->arena, t->link, &b->cap, sizeof *t->link);
	t->link[t->nlink++] = (Link){
		.src = src, .dst = dst, .dim = dim, .dir = dir,
		.bandwidth = t->net.bandwidth, .latency = t->net.link_latency,
		.energy_per_bit = t->net.energy_per_bit,
	};
}

/* Sorts links by source (stable), then indexes them and numbers parallel copies. */
static void
finish(Builder *b)
{
	Topo *t = b->t;
	t->out = arena_array(b->arena, (size_t)t->nnode + 1, sizeof *t->out);
	for (int i = 0; i < t->nlink; i++)
		t->out[t->link[i].src + 1]++;
	for (int v = 0; v < t->nnode; v++)
		t->out[v + 1] += t->out[v];
	Link *sorted = arena_array(b->arena, (size_t)t->nlink, sizeof *sorted);
	int *fill = arena_array(b->arena, (size_t)t->nnode, sizeof *fill);
	for (int i = 0; i < t->nlink; i++) {
		int v = t->link[i].src;
		sorted[t->out[v] + fill[v]++] = t->link[i];
	}
	t->link = sorted;
	for (int v = 0; v < t->nnode; v++)
		for (int i = t->out[v]; i < t->out[v + 1]; i++) {
			t->link[i].copy = 0;
			for (int j = t->out[v]; j < i; j++)
				if (t->link[j].dst == t->link[i].dst)
					t->link[i].copy++;
		}
}

static Topo *
new_topo(Builder *b, Arena *a, TopoKind kind, const char *name, int ndim, const int *size,
         Net net)
{
	b->arena = a;
	b->cap = 0;
	Topo *t = b->t = NEW(a, Topo);
	t->name = name;
	t->kind = kind;
	t->ndim = ndim;
	t->nnode = 1;
	for (int i = 0; i < ndim; i++) {
		t->size[i] = size[i];
		t->nnode *= size[i];
	}
	t->nrank = t->nnode;
	t->net = net;
	return t;
}

void
topo_coords(const Topo *t, int node, int *coord)
{
	for (int i = t->ndim - 1; i >= 0; i--) {
		coord[i] = node % t->size[i];
		node /= t->size[i];
	}
}

int
topo_node(const Topo *t, const int *coord)
{
	int id = 0;
	for (int i = 0; i < t->ndim; i++) {
		int c = coord[i] % t->size[i];
		if (c < 0)
			c += t->size[i];
		id = id * t->size[i] + c;
	}
	return id;
}

static int
step(const Topo *t, int node, int dim, int delta)
{
	int c[MAX_DIMS];
	topo_coords(t, node, c);
	c[dim] += delta;
	return topo_node(t, c);
}

/* The perimeter links that supermesh doubles, as pairs of nodes. */
static void
supermesh_extra(Builder *b)
{
	Topo *t = b->t;
	int r = t->size[0], c = t->size[1];
#define AT(i, j) ((i) * c + (j))
	if (t->variant == 0) { /* bi: every perimeter link */
		for (int j = 0; j + 1 < c; j++) {
			add_link(b, AT(0, j), AT(0, j + 1), 1, +1);
			add_link(b, AT(0, j + 1), AT(0, j), 1, -1);
			if (r > 1) {
				add_link(b, AT(r - 1, j), AT(r - 1, j + 1), 1, +1);
				add_link(b, AT(r - 1, j + 1), AT(r - 1, j), 1, -1);
			}
		}
		for (int i = 0; i + 1 < r; i++) {
			add_link(b, AT(i, 0), AT(i + 1, 0), 0, +1);
			add_link(b, AT(i + 1, 0), AT(i, 0), 0, -1);
			if (c > 1) {
				add_link(b, AT(i, c - 1), AT(i + 1, c - 1), 0, +1);
				add_link(b, AT(i + 1, c - 1), AT(i, c - 1), 0, -1);
			}
		}
		return;
	}
	if (r % 2 == 0 && c % 2 == 0) {
		/* alter, even sides: positions 2i, 2i+1 of each side from the top/left */
		for (int j = 0; j + 1 < c; j += 2)
			for (int side = 0; side < 2; side++) {
				int i = side ? r - 1 : 0;
				add_link(b, AT(i, j), AT(i, j + 1), 1, +1);
				add_link(b, AT(i, j + 1), AT(i, j), 1, -1);
			}
		for (int i = 0; i + 1 < r; i += 2)
			for (int side = 0; side < 2; side++) {
				int j = side ? c - 1 : 0;
				add_link(b, AT(i, j), AT(i + 1, j), 0, +1);
				add_link(b, AT(i + 1, j), AT(i, j), 0, -1);
			}
		return;
	}
	/* alter, an odd side: every other link of the clockwise perimeter walk from (0, 0) */
	int n = 2 * (r - 1) + 2 * (c - 1);
	int *walk = arena_array(b->arena, (size_t)n, sizeof *walk);
	int k = 0;
	for (int j = 0; j < c - 1; j++)
		walk[k++] = AT(0, j);
	for (int i = 0; i < r - 1; i++)
		walk[k++] = AT(i, c - 1);
	for (int j = c - 1; j > 0; j--)
		walk[k++] = AT(r - 1, j);
	for (int i = r - 1; i > 0; i--)
		walk[k++] = AT(i, 0);
	for (int i = 0; i < n; i += 2) {
		int u = walk[i], v = walk[(i + 1) % n];
		int dim = u / c == v / c ? 1 : 0;
		int du = dim ? u % c : u / c, dv = dim ? v % c : v / c;
		add_link(b, u, v, dim, dv > du ? +1 : -1);
		add_link(b, v, u, dim, dv > du ? -1 : +1);
	}
#undef AT
}

Topo *
topo_new(Arena *a, TopoKind kind, const char *name, int ndim, const int *size, int variant,
         Net net)
{
	Builder b;
	Topo *t = new_topo(&b, a, kind, name, ndim, size, net);
	t->variant = variant;
	switch (kind) {
	case TK_TORUS:
	case TK_RING:
	case TK_MESH:
	case TK_SUPERMESH: {
		bool wrap = kind == TK_TORUS || kind == TK_RING;
		for (int v = 0; v < t->nnode; v++) {
			int c[MAX_DIMS];
			topo_coords(t, v, c);
			for (int d = 0; d < ndim; d++) {
				if (wrap || c[d] > 0)
					add_link(&b, v, step(t, v, d, -1), d, -1);
				if (wrap || c[d] < size[d] - 1)
					add_link(&b, v, step(t, v, d, +1), d, +1);
			}
		}
		if (kind == TK_SUPERMESH)
			supermesh_extra(&b);
		break;
	}
	case TK_HYPERX:
		for (int v = 0; v < t->nnode; v++)
			for (int d = 0; d < ndim; d++)
				for (int off = 1; off < size[d]; off++)
					add_link(&b, v, step(t, v, d, off), d, off);
		break;
	case TK_FULL:
		for (int v = 0; v < t->nnode; v++)
			for (int u = 0; u < t->nnode; u++)
				if (u != v)
					add_link(&b, v, u, -1, 0);
		break;
	default:
		die("topo_new: kind %d has its own builder", kind);
	}
	finish(&b);
	return t;
}

Topo *
topo_spine_leaf(Arena *a, const char *name, int spines, int leaves, int hosts, Net net)
{
	Builder b;
	int size[2] = {leaves, hosts};
	Topo *t = new_topo(&b, a, TK_SPINE_LEAF, name, 2, size, net);
	int ranks = leaves * hosts;
	t->nnode = ranks + leaves + spines;
	t->nrank = ranks;
	t->is_switch = arena_alloc(a, (size_t)t->nnode);
	for (int v = ranks; v < t->nnode; v++)
		t->is_switch[v] = 1;
	for (int h = 0; h < ranks; h++)
		add_link(&b, h, ranks + h / hosts, -1, 0);
	for (int l = 0; l < leaves; l++) {
		for (int i = 0; i < hosts; i++)
			add_link(&b, ranks + l, l * hosts + i, -1, 0);
		for (int s = 0; s < spines; s++)
			add_link(&b, ranks + l, ranks + leaves + s, -1, 0);
	}
	for (int s = 0; s < spines; s++)
		for (int l = 0; l < leaves; l++)
			add_link(&b, ranks + leaves + s, ranks + l, -1, 0);
	finish(&b);
	return t;
}

/* A GPU's NIC: its link to the switch it is cabled to (a rail, a leaf) and
 * back, both at the NIC's bandwidth (the NIC holds no data, so it is the
 * GPU's link, not a node). */
static void
add_nic(Builder *b, int gpu, int sw, double bandwidth)
{
	add_link(b, gpu, sw, -1, 0);
	b->t->link[b->t->nlink - 1].bandwidth = bandwidth;
	add_link(b, sw, gpu, -1, 0);
	b->t->link[b->t->nlink - 1].bandwidth = bandwidth;
}

/* The index of pair i-j (i != j) of G GPUs by rows: 0-1, 0-2, ..., 1-2, ... */
static int
pair_index(int g, int i, int j)
{
	if (i > j) {
		int x = i;
		i = j;
		j = x;
	}
	return i * (2 * g - i - 1) / 2 + (j - i - 1);
}

/* A box form's topology (size boxes x GPUs): its shape fields and nodes,
 * GPUs and switches up to nic0, then a box's `nics` NICs each (if any);
 * every node past the GPUs marked a switch (a NIC forwards, as one). */
static Topo *
new_box_topo(Builder *b, Arena *a, TopoKind kind, const char *name, const TopoShape *s, Net net,
             int nic0)
{
	int ranks = s->size[0] * s->size[1];
	Topo *t = new_topo(b, a, kind, name, 2, s->size, net);
	t->variant = s->variant;
	t->nics = s->nics;
	t->nic_link_gbps = s->nics ? s->nic_link_gbps : 0;
	t->nnode = nic0 + s->size[0] * s->nics;
	t->is_switch = arena_alloc(a, (size_t)t->nnode);
	memset(t->is_switch + ranks, 1, (size_t)(t->nnode - ranks));
	return t;
}

/* B boxes of G GPUs on rails, the box inside as its form says:
 *   rails:      the GPUs meet at the box's switch at the network's
 *               link_bandwidth (NVLink, as DGX-like boxes);
 *   xgmi_rails: the GPUs fully connected by xGMI at link_bandwidth per link
 *               (no switch: a GPU's G - 1 links are its own, as MI300X-like
 *               boxes); a pair joined by k links (an MI250X-like box: 4 in
 *               a package, 1 or 2 between) is one link of k times that, as
 *               NCCL's topology sums parallel NVLinks (nccl_topo.c).
 * Without `nics` GPU g's NIC, at nic_gbps, goes to rail switch g and is the
 * GPU's link to it (a NIC has no data of its own). With `nics K` a box has
 * K NICs, nodes after every other node, NIC k shared by GPUs kG/K ..
 * (k + 1)G/K - 1 over their links at nic_link_gbps (a PCIe switch's port,
 * as MI250X and PCIe A100/H100 nodes are built) and cabled to rail k: the
 * GPUs behind one NIC share its nic_gbps. */
static Topo *
boxes_on_rails(Arena *a, TopoKind kind, const char *name, const TopoShape *s, Net net)
{
	Builder b;
	int boxes = s->size[0], gpus = s->size[1], ranks = boxes * gpus;
	int nics = s->nics ? s->nics : gpus, per = gpus / nics, box_sw = kind == TK_RAILS;
	int rail0 = ranks + (box_sw ? boxes : 0), nic0 = rail0 + nics;
	Topo *t = new_box_topo(&b, a, kind, name, s, net, nic0);
	for (int r = 0; r < ranks; r++) {
		int box0 = r / gpus * gpus;
		if (box_sw) {
			add_link(&b, r, ranks + r / gpus, -1, 0);
			add_link(&b, ranks + r / gpus, r, -1, 0);
		}
		for (int k = 0; !box_sw && k < gpus; k++)
			if (box0 + k != r) {
				add_link(&b, r, box0 + k, -1, 0);
				if (s->pairs)
					t->link[t->nlink - 1].bandwidth *= s->pairs[pair_index(gpus, r - box0, k)];
			}
		if (s->nics)
			add_nic(&b, r, nic0 + r / gpus * nics + r % gpus / per, s->nic_link_gbps * 1e9);
		else
			add_nic(&b, r, rail0 + r % gpus, s->variant * 1e9);
	}
	for (int n = 0; s->nics && n < boxes * nics; n++)
		add_nic(&b, nic0 + n, rail0 + n % nics, s->variant * 1e9);
	finish(&b);
	return t;
}

Topo *
topo_rails(Arena *a, const char *name, int boxes, int gpus, int nic_gbps, Net net)
{
	TopoShape s = {.ndim = 2, .size = {boxes, gpus}, .variant = nic_gbps};
	return boxes_on_rails(a, TK_RAILS, name, &s, net);
}

Topo *
topo_xgmi_rails(Arena *a, const char *name, int boxes, int gpus, int nic_gbps,
                const int *pairs, Net net)
{
	TopoShape s = {.ndim = 2, .size = {boxes, gpus}, .variant = nic_gbps, .pairs = pairs};
	return boxes_on_rails(a, TK_XGMI_RAILS, name, &s, net);
}

/* B boxes of G GPUs on a leaf-spine network: a box's GPUs meet at its
 * switch at link_bandwidth (as rails'); GPU g's NIC, at nic_gbps, goes to
 * the box's leaf (top-of-rack) switch, which has one link at nic_gbps to
 * each of the S spines: G NICs down and S links up, oversubscription G:S
 * (S = G is 1:1, S = G / 2 is 2:1), so the boxes together reach each
 * other at S x nic_gbps a box where rails give them G x nic_gbps. With
 * `nics K` the box's K NICs are nodes after every other node, shared as on
 * rails (boxes_on_rails), each on the box's leaf: K:S. */
static Topo *
boxes_on_leaves(Arena *a, const char *name, const TopoShape *s, int spines, Net net)
{
	Builder b;
	int boxes = s->size[0], gpus = s->size[1], ranks = boxes * gpus;
	int nics = s->nics ? s->nics : gpus, per = gpus / nics;
	int leaf0 = ranks + boxes, spine0 = ranks + 2 * boxes, nic0 = spine0 + spines;
	double nic = s->variant * 1e9;
	Topo *t = new_box_topo(&b, a, TK_LEAF_SPINE_BOXES, name, s, net, nic0);
	for (int r = 0; r < ranks; r++) {
		add_link(&b, r, ranks + r / gpus, -1, 0);
		add_link(&b, ranks + r / gpus, r, -1, 0);
		if (s->nics)
			add_nic(&b, r, nic0 + r / gpus * nics + r % gpus / per, s->nic_link_gbps * 1e9);
		else
			add_nic(&b, r, leaf0 + r / gpus, nic);
	}
	for (int n = 0; s->nics && n < boxes * nics; n++)
		add_nic(&b, nic0 + n, leaf0 + n / nics, nic);
	for (int l = 0; l < boxes; l++)
		for (int k = 0; k < spines; k++) {
			add_link(&b, leaf0 + l, spine0 + k, -1, 0);
			t->link[t->nlink - 1].bandwidth = nic;
			add_link(&b, spine0 + k, leaf0 + l, -1, 0);
			t->link[t->nlink - 1].bandwidth = nic;
		}
	finish(&b);
	return t;
}

Topo *
topo_leaf_spine_boxes(Arena *a, const char *name, int boxes, int gpus, int nic_gbps, int spines,
                      Net net)
{
	TopoShape s = {.ndim = 2, .size = {boxes, gpus}, .variant = nic_gbps};
	return boxes_on_leaves(a, name, &s, spines, net);
}

/* The box next to `box` along dimension d of the boxes' torus, dir +-1. */
static int
next_box(const int *dims, int k, int box, int d, int dir)
{
	int c[MAX_DIMS], id = 0;
	for (int i = k - 1; i >= 0; i--) {
		c[i] = box % dims[i];
		box /= dims[i];
	}
	c[d] = (c[d] + dir + dims[d]) % dims[d];
	for (int i = 0; i < k; i++)
		id = id * dims[i] + c[i];
	return id;
}

/* Boxes of G GPUs (a switch inside each, as rails') joined as a k-D torus
 * with no network switch: a box has 2k neighbours, and its G NICs split
 * evenly over them, pair p of GPUs (2p, 2p + 1) serving dimension p mod k,
 * GPU 2p cabled to GPU 2p + 1 of the next box up that dimension (so GPU
 * 2p + 1 to GPU 2p of the box below). A NIC is its GPU's link to the GPU
 * at the cable's far end, at nic_gbps each way; G a multiple of 2k (sema)
 * gives every box G / 2k cables each way along every dimension. */
Topo *
topo_torus_boxes(Arena *a, const char *name, int k, const int *dims, int gpus, int nic_gbps,
                 Net net)
{
	Builder b;
	int size[MAX_DIMS], boxes = 1;
	for (int i = 0; i < k; i++)
		boxes *= size[i] = dims[i];
	size[k] = gpus;
	Topo *t = new_topo(&b, a, TK_TORUS_BOXES, name, k + 1, size, net);
	int ranks = boxes * gpus;
	t->variant = nic_gbps;
	t->nnode = ranks + boxes;
	t->is_switch = arena_alloc(a, (size_t)t->nnode);
	memset(t->is_switch + ranks, 1, (size_t)boxes);
	for (int r = 0; r < ranks; r++) {
		int box = r / gpus, g = r % gpus, up = g % 2 == 0 ? 1 : -1;
		int peer = next_box(dims, k, box, g / 2 % k, up) * gpus + g + up;
		add_link(&b, r, ranks + box, -1, 0);
		add_link(&b, ranks + box, r, -1, 0);
		add_link(&b, r, peer, -1, 0);
		t->link[t->nlink - 1].bandwidth = nic_gbps * 1e9;
	}
	finish(&b);
	return t;
}

/* The circuits an optical ring's switch may be asked for beyond the initial
 * ring: block offsets +-2^k, forward (last node of b to first of b + d) and
 * the reverse fibers of every forward one, the ring's included (ir.h). */
static void
add_circuits(Builder *b, int n, int block)
{
	int nblock = (n + block - 1) / block;
	if (nblock > OPTICAL_MAX_BLOCKS)
		return;
	int off[64], noff = 0;
	for (int k = 0; (1 << k) < nblock; k++)
		for (int sign = 1; sign >= -1; sign -= 2) {
			int d = ((sign * (1 << k)) % nblock + nblock) % nblock, dup = 0;
			for (int i = 0; i < noff; i++)
				dup |= off[i] == d;
			if (!dup)
				off[noff++] = d;
		}
	for (int dir = 1; dir >= -1; dir -= 2)
		for (int x = 0; x < nblock; x++)
			for (int i = 0; i < noff; i++) {
				int y = (x + off[i]) % nblock;
				int last = x * block + block - 1 < n ? x * block + block - 1 : n - 1;
				if (dir > 0 && off[i] != 1)
					add_link(b, last, y * block, 1, +1);
				else if (dir < 0)
					add_link(b, y * block, last, 1, -1);
			}
}

Topo *
topo_optical_ring(Arena *a, const char *name, int n, int ports, Net net)
{
	Builder b;
	Topo *t = new_topo(&b, a, TK_OPTICAL_RING, name, 1, &n, net);
	t->variant = ports;
	/* With fewer than 2n ports, blocks of ceil(2n/ports) nodes share one
	 * optical port pair and are joined inside by electrical links. */
	int block = (2 * n + ports - 1) / ports;
	for (int v = 0; v < n; v++) {
		int first = v / block * block, last = first + block - 1;
		if (last > n - 1)
			last = n - 1;
		if (v == last)
			add_link(&b, v, (v + 1) % n, 0, +1);     /* optical */
		if (block > 1 && v < last)
			add_link(&b, v, v + 1, -1, +1);          /* electrical, both ways */
		if (block > 1 && v > first)
			add_link(&b, v, v - 1, -1, -1);
	}
	add_circuits(&b, n, block);
	finish(&b);
	return t;
}

Topo *
topo_graph(Arena *a, const char *name, int nnode, const unsigned char *is_switch, int nlink,
           const Link *links, Net net)
{
	Builder b;
	Topo *t = new_topo(&b, a, TK_GRAPH, name, 1, &nnode, net);
	t->ndim = 0;
	if (is_switch) {
		t->is_switch = arena_alloc(a, (size_t)nnode);
		memcpy(t->is_switch, is_switch, (size_t)nnode);
		for (int v = 0; v < nnode; v++)
			t->nrank -= is_switch[v] != 0;
	}
	t->link = arena_array(a, (size_t)nlink, sizeof *t->link);
	copy_n(t->link, links, (size_t)nlink, sizeof *links);
	t->nlink = nlink;
	finish(&b);
	return t;
}

Topo *
topo_assemble(Arena *a, TopoKind kind, const char *name, int ndim, const int *size, int variant,
              int nnode, const unsigned char *is_switch, int nlink, const Link *links, Net net)
{
	Topo *t = topo_graph(a, name, nnode, is_switch, nlink, links, net);
	t->kind = kind;
	t->ndim = ndim;
	for (int i = 0; i < ndim; i++)
		t->size[i] = size[i];
	t->variant = variant;
	return t;
}

int
topo_find_link(const Topo *t, int src, int dst, int copy)
{
	for (int i = t->out[src]; i < t->out[src + 1]; i++)
		if (t->link[i].dst == dst && t->link[i].copy == copy)
			return i;
	return -1;
}

int
topo_nlinks_between(const Topo *t, int src, int dst)
{
	int n = 0;
	for (int i = t->out[src]; i < t->out[src + 1]; i++)
		n += t->link[i].dst == dst;
	return n;
}

bool
topo_has_parallel_links(const Topo *t)
{
	for (int i = 0; i < t->nlink; i++)
		if (t->link[i].copy > 0)
			return true;
	return false;
}

/* ---- the forms' builders and link estimates (topo_builders[]) ---- */

static double
ranks_of(const TopoShape *s)
{
	double n = 1;
	for (int i = 0; i < s->ndim; i++)
		n *= s->size[i];
	return n;
}

static double
grid_links(const TopoShape *s)
{
	return 2 * s->ndim * ranks_of(s);
}

static double
supermesh_links(const TopoShape *s) /* the doubled perimeter on top */
{
	return grid_links(s) + 4.0 * (s->size[0] + s->size[1]);
}

static double
hyperx_links(const TopoShape *s)
{
	double n = ranks_of(s), links = 0;
	for (int i = 0; i < s->ndim; i++)
		links += n * (s->size[i] - 1);
	return links;
}

static double
full_links(const TopoShape *s)
{
	return ranks_of(s) * (ranks_of(s) - 1);
}

static double
optical_links(const TopoShape *s) /* optical links and the electrical ones of a block */
{
	return 3 * ranks_of(s);
}

static double
spine_leaf_links(const TopoShape *s) /* size: leaves, hosts; the switches: leaves, spines */
{
	return 2.0 * s->size[0] * s->size[1] + 2.0 * s->size[0] * (s->switches - s->size[0]);
}

static double
nic_node_links(const TopoShape *s) /* shared NICs: each NIC's to its rail (leaf), each way */
{
	return 2.0 * s->size[0] * s->nics;
}

static double
rails_links(const TopoShape *s) /* size: boxes, gpus; each GPU two links each way */
{
	return 4.0 * s->size[0] * s->size[1] + nic_node_links(s);
}

static double
xgmi_rails_links(const TopoShape *s) /* size: boxes, gpus; G - 1 xGMI links, a NIC each way */
{
	return (double)s->size[0] * s->size[1] * (s->size[1] + 1) + nic_node_links(s);
}

static double
leaf_spine_boxes_links(const TopoShape *s) /* size: boxes, gpus; switches: 2 a box, spines */
{
	double boxes = s->size[0], spines = s->switches - 2.0 * boxes - boxes * s->nics;
	return 4.0 * boxes * s->size[1] + 2.0 * boxes * spines + nic_node_links(s);
}

static double
torus_boxes_links(const TopoShape *s) /* size: the boxes' torus, gpus; a GPU's 3 links out */
{
	return 3.0 * ranks_of(s);
}

#define GRID_BUILDER(fn, kind) \
	static Topo *fn(Arena *a, const char *name, const TopoShape *s, Net net) \
	{ \
		return topo_new(a, kind, name, s->ndim, s->size, s->variant, net); \
	}
GRID_BUILDER(build_torus, TK_TORUS)
GRID_BUILDER(build_mesh, TK_MESH)
GRID_BUILDER(build_supermesh, TK_SUPERMESH)
GRID_BUILDER(build_hyperx, TK_HYPERX)
GRID_BUILDER(build_ring, TK_RING)
GRID_BUILDER(build_full, TK_FULL)
#undef GRID_BUILDER

static Topo *
build_spine_leaf(Arena *a, const char *name, const TopoShape *s, Net net)
{
	return topo_spine_leaf(a, name, s->switches - s->size[0], s->size[0], s->size[1], net);
}

static Topo *
build_rails(Arena *a, const char *name, const TopoShape *s, Net net)
{
	return boxes_on_rails(a, TK_RAILS, name, s, net);
}

static Topo *
build_xgmi_rails(Arena *a, const char *name, const TopoShape *s, Net net)
{
	return boxes_on_rails(a, TK_XGMI_RAILS, name, s, net);
}

static Topo *
build_leaf_spine_boxes(Arena *a, const char *name, const TopoShape *s, Net net)
{
	return boxes_on_leaves(a, name, s, s->switches - 2 * s->size[0] - s->size[0] * s->nics, net);
}

static Topo *
build_torus_boxes(Arena *a, const char *name, const TopoShape *s, Net net)
{
	return topo_torus_boxes(a, name, s->ndim - 1, s->size, s->size[s->ndim - 1], s->variant, net);
}

static Topo *
build_optical_ring(Arena *a, const char *name, const TopoShape *s, Net net)
{
	return topo_optical_ring(a, name, s->size[0], s->variant, net);
}

const TopoBuilder topo_builders[NTOPOKIND] = {
	[TK_TORUS] = {build_torus, grid_links},
	[TK_MESH] = {build_mesh, grid_links},
	[TK_SUPERMESH] = {build_supermesh, supermesh_links},
	[TK_HYPERX] = {build_hyperx, hyperx_links},
	[TK_SPINE_LEAF] = {build_spine_leaf, spine_leaf_links},
	[TK_RING] = {build_ring, grid_links},
	[TK_FULL] = {build_full, full_links},
	[TK_OPTICAL_RING] = {build_optical_ring, optical_links},
	[TK_RAILS] = {build_rails, rails_links},
	[TK_XGMI_RAILS] = {build_xgmi_rails, xgmi_rails_links},
	[TK_LEAF_SPINE_BOXES] = {build_leaf_spine_boxes, leaf_spine_boxes_links},
	[TK_TORUS_BOXES] = {build_torus_boxes, torus_boxes_links},
	[TK_GRAPH] = {NULL, NULL}, /* a block form: lower.c builds it from its links */
};

double
topo_link_estimate(TopoKind kind, const TopoShape *s)
{
	return topo_builders[kind].links(s);
}

TopoShape
topo_shape_of(const Topo *t)
{
	TopoShape s = {.ndim = t->ndim, .switches = t->nnode - t->nrank, .variant = t->variant,
	               .nics = t->nics, .nic_link_gbps = t->nic_link_gbps};
	for (int i = 0; i < t->ndim; i++)
		s.size[i] = t->size[i];
	return s;
}

const char *
topo_kind_name(TopoKind k)
{
	return topo_forms[k].form.name;
}

/* Word i of "a|b|c" into buf. */
static const char *
nth_word(const char *words, int i, char *buf, size_t len)
{
	for (; i > 0 && strchr(words, '|'); i--)
		words = strchr(words, '|') + 1;
	snprintf(buf, len, "%.*s", (int)strcspn(words, "|"), words);
	return buf;
}

/* ", links 4, 1, ..." after buf[0..n): box 0's links per pair of GPUs, read
 * back from their bandwidths (k links are one link of k x link_bandwidth);
 * nothing when every pair has one. Returns the new length. */
static size_t
describe_pairs(const Topo *t, char *buf, size_t n, size_t len, const char *sep, const char *label)
{
	int g = t->size[t->ndim - 1];
	bool any = false;
	for (int i = 0; i < g; i++)
		for (int l = t->out[i]; l < t->out[i + 1]; l++)
			any |= t->link[l].dst < g && t->link[l].bandwidth != t->net.bandwidth;
	if (!any)
		return n;
	n += (size_t)snprintf(buf + n, len - n, "%s%s ", sep, label);
	for (int i = 0, k = 0; i < g && n < len; i++)
		for (int j = i + 1; j < g && n < len; j++, k++) {
			int l = topo_find_link(t, i, j, 0);
			n += (size_t)snprintf(buf + n, len - n, "%s%.0f", k ? ", " : "",
			                      l < 0 ? 0 : t->link[l].bandwidth / t->net.bandwidth);
		}
	return n < len ? n : len - 1;
}

/* The form's arguments from its registry entry's roles, as a declaration
 * writes them: "torus(8, 8)", "spine_leaf(spines 2, leaves 4, hosts 2)",
 * "optical_ring(8, ports 16)", "graph(12 nodes)". */
void
topo_describe(const Topo *t, char *buf, size_t len)
{
	const TopoForm *tf = &topo_forms[t->kind];
	size_t n = (size_t)snprintf(buf, len, "%s(", tf->form.name);
	if (tf->block) {
		snprintf(buf + n, len - n, "%d nodes)", t->nnode);
		return;
	}
	int labelled = 0, switches = t->nnode - t->nrank - t->size[0] * t->nics, d = 0;
	for (int i = 0; i < MAX_PARAMS; i++) {
		bool dim = tf->role[i] == TR_DIMS || tf->role[i] == TR_DIM_SWITCHES;
		labelled += dim && tf->form.param[i].label;
	}
	/* a TR_SWITCHES parameter is what the TR_DIM_SWITCHES ones leave */
	for (int i = 0, k = 0; i < MAX_PARAMS; i++) {
		bool dim = tf->role[i] == TR_DIMS || tf->role[i] == TR_DIM_SWITCHES;
		if (tf->role[i] == TR_DIM_SWITCHES)
			switches -= t->size[k] * (tf->switches_per_dim ? tf->switches_per_dim : 1);
		k += dim ? (tf->form.param[i].label ? 1 : t->ndim - labelled)
		         : tf->role[i] == TR_BOX_DIMS ? t->ndim - 1 : 0;
	}
	const char *sep = "";
	for (int i = 0; i < MAX_PARAMS && tf->role[i] != TR_NONE && n < len; i++, sep = ", ") {
		const ParamSpec *ps = &tf->form.param[i];
		const char *label = ps->label ? ps->label : "";
		char word[32];
		int v = 0;
		switch ((TopoRole)tf->role[i]) {
		case TR_DIMS:
		case TR_DIM_SWITCHES:
			if (!ps->label) {
				for (int k = 0; k < t->ndim - labelled && n < len; k++, d++)
					n += (size_t)snprintf(buf + n, len - n, "%s%d", k ? ", " : sep, t->size[d]);
				continue;
			}
			v = t->size[d++];
			break;
		case TR_BOX_DIMS: /* every coordinate but the GPUs' (the last) */
			for (int k = 0; k < t->ndim - 1 && n < len; k++, d++)
				n += (size_t)snprintf(buf + n, len - n, "%s%s%s%d", k ? ", " : sep, k ? "" : label,
				                      k ? "" : " ", t->size[d]);
			continue;
		case TR_SWITCHES:
			v = switches; /* one such parameter */
			break;
		case TR_VARIANT:
			if (ps->kind == A_WORD) {
				n += (size_t)snprintf(buf + n, len - n, "%s%s", sep,
				                      nth_word(ps->words, t->variant, word, sizeof word));
				continue;
			}
			v = t->variant;
			break;
		case TR_PAIRS:
			n = describe_pairs(t, buf, n, len, sep, label);
			continue;
		case TR_NICS:
		case TR_NIC_LINK: /* both or neither */
			if (!t->nics)
				continue;
			v = tf->role[i] == TR_NICS ? t->nics : t->nic_link_gbps;
			break;
		case TR_BOX: /* its numbers are the GPUs', NICs' and speeds' above */
			continue;
		case TR_NONE:
			break;
		}
		n += (size_t)snprintf(buf + n, len - n, "%s%s%s%d", sep, label, *label ? " " : "", v);
	}
	if (n < len)
		snprintf(buf + n, len - n, ")");
}

/* The value of each of the form's parameters, as its declaration gave them
 * (topo_describe's reading of the roles, for the labelled ones). */
void
topo_form_args(const Topo *t, int64_t *arg)
{
	const TopoForm *tf = &topo_forms[t->kind];
	int switches = t->nnode - t->nrank - t->size[0] * t->nics, d = 0; /* shared NICs: B K */
	for (int i = 0; i < MAX_PARAMS; i++)
		if (tf->role[i] == TR_DIM_SWITCHES)
			switches -= t->size[d++] * (tf->switches_per_dim ? tf->switches_per_dim : 1);
		else if (tf->role[i] == TR_DIMS)
			d++;
	d = 0;
	for (int i = 0; i < MAX_PARAMS; i++) {
		TopoRole r = (TopoRole)tf->role[i];
		if (r == TR_BOX_DIMS) { /* the number of boxes */
			for (arg[i] = 1; d < t->ndim - 1; d++)
				arg[i] *= t->size[d];
			continue;
		}
		arg[i] = r == TR_DIMS || r == TR_DIM_SWITCHES ? t->size[d++]
		         : r == TR_SWITCHES                  ? switches
		         : r == TR_VARIANT                   ? t->variant
		         : r == TR_NICS                      ? (t->nics ? t->nics : t->size[t->ndim - 1])
		         : r == TR_NIC_LINK                  ? t->nic_link_gbps
		                                             : 0;
	}
}

unsigned
topo_reduces(const Topo *t, int node)
{
	unsigned want = t->net.reduction;
	if (!want || node < 0 || node >= t->nnode || !t->is_switch || !t->is_switch[node])
		return 0;
	if (t->kind == TK_GRAPH)
		return want & REDUCE_NVLS ? REDUCE_NVLS : REDUCE_SHARP;
	int boxes = t->size[0], k = node - t->nrank;
	if (node >= t->nnode - boxes * t->nics) /* a shared NIC (its nodes are last) */
		return 0;
	bool box = ((t->kind == TK_RAILS || t->kind == TK_LEAF_SPINE_BOXES) && k < boxes) ||
	           t->kind == TK_TORUS_BOXES; /* its only switches */
	return want & (box ? REDUCE_NVLS : REDUCE_SHARP);
}

bool
topo_any_reduces(const Topo *t)
{
	for (int v = 0; t->net.reduction && v < t->nnode; v++)
		if (topo_reduces(t, v))
			return true;
	return false;
}

void
topo_node_name(const Topo *t, int node, char *buf, size_t len)
{
	int64_t arg[MAX_PARAMS];
	if (topo_forms[t->kind].node_class[0].word) {
		topo_form_args(t, arg);
		if (node_name(t->kind, arg, node, buf, len))
			return;
	}
	if (t->ndim < 2 || node >= t->nrank || (t->is_switch && t->is_switch[node])) {
		snprintf(buf, len, "%d", node);
		return;
	}
	int c[MAX_DIMS];
	topo_coords(t, node, c);
	int n = snprintf(buf, len, "(");
	for (int i = 0; i < t->ndim && (size_t)n < len; i++)
		n += snprintf(buf + n, len - (size_t)n, "%s%d", i ? ", " : "", c[i]);
	if ((size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ")");
}
