/*
 * group.c: symmetry groups. A group is the closure of its generators; each
 * generator is first checked to be an automorphism (a permutation of the
 * nodes that maps every link to a link, parallel links counted). Elements
 * are held as affine maps x -> A x + b on coordinates (entries of row i
 * reduced mod size i) when every generator is affine on a topology whose
 * nodes are its coordinates, else as node permutations. Element 0 is the
 * identity. Links follow nodes: the k-th parallel link u->v goes to the
 * k-th parallel link g(u)->g(v).
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* MAX_GROUP_ORDER, MAX_PERM_INTS and MAX_AUTO_NODES: collc_limits.h */

static bool
coordinate_topology(const Topo *t)
{
	switch (t->kind) {
	case TK_TORUS: case TK_RING: case TK_MESH: case TK_SUPERMESH: case TK_HYPERX:
	case TK_FULL: case TK_OPTICAL_RING:
		return true;
	default:
		return false;
	}
}

static int
mod(long v, int n)
{
	long r = v % n;
	return (int)(r < 0 ? r + n : r);
}

/* The image of node v under an affine map on the topology's coordinates. */
static int
affine_node(const Topo *t, const int *mat, const int *vec, int v)
{
	int x[MAX_DIMS], y[MAX_DIMS];
	int d = t->ndim;
	topo_coords(t, v, x);
	for (int i = 0; i < d; i++) {
		long s = vec[i];
		for (int j = 0; j < d; j++)
			s += (long)mat[i * d + j] * x[j];
		y[i] = mod(s, t->size[i]);
	}
	return topo_node(t, y);
}

/* Spine-leaf: an affine map on host coordinates (leaf, host); the leaf
 * switches follow the leaf coordinate, the spines the host coordinate
 * (any permutation of spines is an automorphism). */
static int
spine_leaf_node(const Topo *t, const int *mat, const int *vec, int v)
{
	int leaves = t->size[0], hosts = t->size[1], spines = t->nnode - t->nrank - leaves;
	if (v < t->nrank)
		return affine_node(t, mat, vec, v);
	if (v < t->nrank + leaves) {
		int host = affine_node(t, mat, vec, (v - t->nrank) * hosts);
		return t->nrank + host / hosts;
	}
	int s = v - t->nrank - leaves;
	long y = (long)mat[3] * s + vec[1];
	return t->nrank + leaves + mod(y, spines);
}

/* rails, xgmi_rails: the GPUs move affinely; box switch b (rails) goes
 * where GPU (b, 0)'s box goes, rail switch k where GPU (0, kG/K)'s NIC goes,
 * shared NIC (b, k) where GPU (b, kG/K)'s NIC goes (G/K GPUs a NIC; K = G
 * without `nics`): a translation moves whole boxes, rails and NIC groups;
 * check_automorphism checks any other map (one that splits a NIC's GPUs
 * fails it). */
static int
rails_node(const Topo *t, const int *mat, const int *vec, int v)
{
	int boxes = t->size[0], gpus = t->size[1], nics = t->nics ? t->nics : gpus, per = gpus / nics;
	int rail0 = t->nrank + (t->kind == TK_RAILS ? boxes : 0), nic0 = rail0 + nics;
	if (v < t->nrank)
		return affine_node(t, mat, vec, v);
	if (v < rail0)
		return t->nrank + affine_node(t, mat, vec, (v - t->nrank) * gpus) / gpus;
	if (v < nic0)
		return rail0 + affine_node(t, mat, vec, (v - rail0) * per) % gpus / per;
	int n = v - nic0, g = affine_node(t, mat, vec, n / nics * gpus + n % nics * per);
	return nic0 + g / gpus * nics + g % gpus / per;
}

/* torus_boxes: the GPUs move affinely, box switch b where GPU (b, 0)'s box
 * goes (as rails', without rails). */
static int
torus_boxes_node(const Topo *t, const int *mat, const int *vec, int v)
{
	int gpus = t->size[t->ndim - 1];
	if (v < t->nrank)
		return affine_node(t, mat, vec, v);
	return t->nrank + affine_node(t, mat, vec, (v - t->nrank) * gpus) / gpus;
}

static void
link_text(const Topo *t, int u, int v, char *buf, size_t len)
{
	char a[64], b[64];
	topo_node_name(t, u, a, sizeof a);
	topo_node_name(t, v, b, sizeof b);
	snprintf(buf, len, "%s -> %s", a, b);
}

static bool
same_params(const Link *a, const Link *b)
{
	return a->bandwidth == b->bandwidth && a->latency == b->latency &&
	       a->energy_per_bit == b->energy_per_bit;
}

/* The links u -> v as one number: their count and parameters. */
static unsigned long
pair_signature(const Topo *t, int u, int v)
{
	unsigned long h = 0;
	for (int i = t->out[u]; i < t->out[u + 1]; i++) {
		const Link *l = &t->link[i];
		if (l->dst != v)
			continue;
		double p[3] = {l->bandwidth, l->latency, l->energy_per_bit};
		unsigned long x = 1469598103934665603ul;
		const unsigned char *b = (const unsigned char *)p;
		for (size_t k = 0; k < sizeof p; k++)
			x = (x ^ b[k]) * 1099511628211ul;
		h += x | 1; /* a sum: the order of parallel links does not matter */
	}
	return h;
}

/* Checks that img is an automorphism; reports the first broken link. */
static int
check_automorphism(Diag *dg, const Topo *t, const int *img, Loc loc)
{
	char desc[128], a[64], b[64], la[160], lb[160];
	topo_describe(t, desc, sizeof desc);
	unsigned char *hit = xcalloc((size_t)t->nnode, 1);
	int rc = 0;
	for (int v = 0; v < t->nnode && rc == 0; v++) {
		if (hit[img[v]]) {
			int u = 0;
			while (img[u] != img[v])
				u++;
			topo_node_name(t, u, a, sizeof a);
			topo_node_name(t, v, b, sizeof b);
			topo_node_name(t, img[v], la, sizeof la);
			error_at(dg, loc, "this map is not a permutation of the nodes of %s: %s and %s "
			         "both map to %s", desc, a, b, la);
			rc = -1;
		}
		hit[img[v]] = 1;
		bool sw = t->is_switch && t->is_switch[v], sw2 = t->is_switch && t->is_switch[img[v]];
		if (rc == 0 && sw != sw2) {
			topo_node_name(t, v, a, sizeof a);
			topo_node_name(t, img[v], b, sizeof b);
			error_at(dg, loc, "this map is not an automorphism of %s: it maps %s %s to %s %s",
			         desc, sw ? "switch" : "rank", a, sw2 ? "switch" : "rank", b);
			rc = -1;
		}
	}
	free(hit);
	for (int i = 0; i < t->nlink && rc == 0; i++) {
		const Link *l = &t->link[i];
		int j = topo_find_link(t, img[l->src], img[l->dst], l->copy);
		if (j >= 0 && !same_params(l, &t->link[j])) {
			link_text(t, l->src, l->dst, la, sizeof la);
			link_text(t, img[l->src], img[l->dst], lb, sizeof lb);
			error_at(dg, loc, "this map is not an automorphism of %s: link %s maps to %s, "
			         "whose bandwidth, latency or energy differ", desc, la, lb);
			rc = -1;
			break;
		}
		if (l->copy != 0)
			continue;
		int want = topo_nlinks_between(t, l->src, l->dst);
		int got = topo_nlinks_between(t, img[l->src], img[l->dst]);
		if (want != got) {
			link_text(t, l->src, l->dst, la, sizeof la);
			link_text(t, img[l->src], img[l->dst], lb, sizeof lb);
			if (got == 0)
				error_at(dg, loc, "this map is not an automorphism of %s: link %s maps to %s, "
				         "which is not a link", desc, la, lb);
			else
				error_at(dg, loc, "this map is not an automorphism of %s: %s has %d parallel "
				         "links, its image %s has %d", desc, la, want, lb, got);
			rc = -1;
		}
	}
	return rc;
}

/* ---- closure ---- */

typedef struct Closure {
	const Topo *t;
	bool affine;
	int width;       /* ints per element */
	int *elem;       /* order x width */
	int order, cap;
	Hash index;      /* elements by value, unless dense */
	/* An affine group with few linear parts: element (A, b) is found at
	 * dense[lin(A) * nvec + b as a mixed-radix number], lin(A) the index of
	 * (A, 0) in the closure lin of the linear parts. One probe of an int
	 * array instead of a hash probe and a compare of the element (SP on
	 * torus(1024, 1024): 2^22 elements, 2^24 probes). */
	int *dense;
	const struct Closure *lin;
	long nvec;
} Closure;

static bool
elem_is(const void *ctx, int i, const void *e)
{
	const Closure *c = ctx;
	return memcmp(c->elem + (size_t)i * (size_t)c->width, e, (size_t)c->width * sizeof(int)) == 0;
}

static unsigned
elem_hash(const void *ctx, int i)
{
	const Closure *c = ctx;
	return hash_ints(c->elem + (size_t)i * (size_t)c->width, (size_t)c->width);
}

/* e's slot in c->dense. */
static long
dense_slot(const Closure *c, const int *e)
{
	const Topo *t = c->t;
	int d = t->ndim, key[MAX_DIMS * MAX_DIMS + MAX_DIMS] = {0};
	memcpy(key, e, (size_t)(d * d) * sizeof *key);
	int lin = hash_find(&c->lin->index, hash_ints(key, (size_t)c->width), key, elem_is, c->lin);
	if (lin < 0)
		die("group closure: a linear part outside the generators' closure");
	long b = 0;
	for (int i = 0; i < d; i++)
		b = b * t->size[i] + e[d * d + i];
	return lin * c->nvec + b;
}

/* Adds e if new; returns -1 when the group grows past the limit. */
static int
closure_add(Closure *c, const int *e)
{
	unsigned h = 0;
	long slot = -1;
	if (c->dense) {
		slot = dense_slot(c, e);
		if (c->dense[slot] >= 0)
			return 0;
	} else {
		h = hash_ints(e, (size_t)c->width);
		if (hash_find(&c->index, h, e, elem_is, c) >= 0)
			return 0;
	}
	if (c->order >= MAX_GROUP_ORDER ||
	    (long)(c->order + 1) * c->width > (long)MAX_PERM_INTS)
		return -1;
	if (c->order == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		c->elem = xrealloc(c->elem, (size_t)c->cap * (size_t)c->width * sizeof *c->elem);
	}
	memcpy(c->elem + (size_t)c->order * (size_t)c->width, e, (size_t)c->width * sizeof *e);
	if (c->dense)
		c->dense[slot] = c->order++;
	else
		hash_add(&c->index, h, c->order++, elem_hash, c);
	return 0;
}

/* out = s after e (apply e, then s) */
static void
compose(const Closure *c, const int *s, const int *e, int *out)
{
	const Topo *t = c->t;
	if (!c->affine) {
		for (int v = 0; v < t->nnode; v++)
			out[v] = s[e[v]];
		return;
	}
	int d = t->ndim;
	const int *sm = s, *sv = s + d * d, *em = e, *ev = e + d * d;
	int *om = out, *ov = out + d * d;
	for (int i = 0; i < d; i++) {
		for (int j = 0; j < d; j++) {
			long x = 0;
			for (int k = 0; k < d; k++)
				x += (long)sm[i * d + k] * em[k * d + j];
			om[i * d + j] = mod(x, t->size[i]);
		}
		long y = sv[i];
		for (int k = 0; k < d; k++)
			y += (long)sm[i * d + k] * ev[k];
		ov[i] = mod(y, t->size[i]);
	}
}

static void
find_union(int *parent, int a, int b)
{
	while (parent[a] != a)
		a = parent[a] = parent[parent[a]];
	while (parent[b] != b)
		b = parent[b] = parent[parent[b]];
	if (a != b)
		parent[a > b ? a : b] = a < b ? a : b;
}

static int
find_root(int *parent, int a)
{
	while (parent[a] != a)
		a = parent[a] = parent[parent[a]];
	return a;
}

/* Orbits of links and nodes under the generators (as node images). */
static void
orbits(Arena *a, Group *g, int **img, int nimg)
{
	const Topo *t = g->topo;
	int *lp = xmalloc((size_t)t->nlink * sizeof *lp), *np = xmalloc((size_t)t->nnode * sizeof *np);
	for (int i = 0; i < t->nlink; i++)
		lp[i] = i;
	for (int v = 0; v < t->nnode; v++)
		np[v] = v;
	for (int k = 0; k < nimg; k++) {
		for (int v = 0; v < t->nnode; v++)
			find_union(np, v, img[k][v]);
		for (int i = 0; i < t->nlink; i++) {
			const Link *l = &t->link[i];
			int j = topo_find_link(t, img[k][l->src], img[k][l->dst], l->copy);
			find_union(lp, i, j);
		}
	}
	g->link_orbit = arena_array(a, (size_t)t->nlink, sizeof *g->link_orbit);
	int *id = xmalloc((size_t)t->nlink * sizeof *id);
	for (int i = 0; i < t->nlink; i++)
		id[i] = -1;
	g->nlink_orbits = 0;
	for (int i = 0; i < t->nlink; i++) {
		int r = find_root(lp, i);
		if (id[r] < 0)
			id[r] = g->nlink_orbits++;
		g->link_orbit[i] = id[r];
	}
	g->orbit_size = arena_array(a, (size_t)g->nlink_orbits + 1, sizeof *g->orbit_size);
	for (int i = 0; i < t->nlink; i++)
		g->orbit_size[g->link_orbit[i]]++;
	g->node_transitive = true;
	for (int v = 0; v < t->nnode; v++)
		if (!(t->is_switch && t->is_switch[v]) && find_root(np, v) != find_root(np, 0))
			g->node_transitive = false;
	free(lp), free(np), free(id);
}

/* The closure from the identity id: every element times every generator,
 * in the order found (element 0 is the identity). -1 past the limit. */
static int
walk(Closure *c, int **gens, int ngen, const int *id)
{
	int *tmp = xmalloc((size_t)c->width * sizeof *tmp), rc = closure_add(c, id);
	for (int done = 0; done < c->order && rc == 0; done++)
		for (int k = 0; k < ngen && rc == 0; k++) {
			compose(c, gens[k], c->elem + (size_t)done * (size_t)c->width, tmp);
			rc = closure_add(c, tmp);
		}
	free(tmp);
	return rc;
}

/* Sets c up to find elements in a dense table when the linear parts of the
 * generators close to a group lin small enough that lin x the translation
 * vectors fit under MAX_GROUP_ORDER; else c keeps its hash index. The
 * walk's order, and so the elements' numbers, is the same either way. */
static void
dense_index(Closure *c, Closure *lin, int **gens, int ngen, const int *id)
{
	const Topo *t = c->t;
	int d = t->ndim;
	long nvec = 1;
	for (int i = 0; i < d && nvec <= MAX_GROUP_ORDER; i++)
		nvec *= t->size[i];
	if (nvec > MAX_GROUP_ORDER)
		return;
	int **lgens = xmalloc(((size_t)ngen + 1) * sizeof *lgens);
	for (int k = 0; k < ngen; k++) {
		lgens[k] = xcalloc((size_t)c->width, sizeof **lgens);
		memcpy(lgens[k], gens[k], (size_t)(d * d) * sizeof **lgens);
	}
	if (walk(lin, lgens, ngen, id) == 0 && (long)lin->order * nvec <= MAX_GROUP_ORDER) {
		c->lin = lin;
		c->nvec = nvec;
		c->dense = xmalloc((size_t)lin->order * (size_t)nvec * sizeof *c->dense);
		memset(c->dense, 0xff, (size_t)lin->order * (size_t)nvec * sizeof *c->dense);
	}
	for (int k = 0; k < ngen; k++)
		free(lgens[k]);
	free(lgens);
}

static Group *
close_group(Diag *dg, Arena *a, const Topo *t, const char *name, Loc loc, bool affine, int **gens,
            int ngen, int **img)
{
	Closure c = {.t = t, .affine = affine};
	c.width = affine ? t->ndim * t->ndim + t->ndim : t->nnode;
	int *id = xcalloc((size_t)c.width, sizeof *id);
	for (int v = 0; v < c.width; v++)
		id[v] = affine ? 0 : v;
	if (affine)
		for (int i = 0; i < t->ndim; i++)
			id[i * t->ndim + i] = 1 % t->size[i];
	Closure lin = {.t = t, .affine = true, .width = c.width};
	if (affine)
		dense_index(&c, &lin, gens, ngen, id);
	int rc = walk(&c, gens, ngen, id);
	Group *g = NULL;
	if (rc != 0) {
		error_at(dg, loc, "the group '%s' has more than %d elements (or is too large to hold); "
		         "name fewer generators", name, c.order);
	} else {
		g = NEW(a, Group);
		g->name = name;
		g->loc = loc;
		g->topo = t;
		g->order = c.order;
		g->affine = affine;
		size_t n = (size_t)c.order * (size_t)c.width;
		int *copy = arena_array(a, n, sizeof *copy);
		copy_n(copy, c.elem, n, sizeof *copy);
		if (affine) {
			int d = t->ndim;
			g->mat = arena_array(a, (size_t)c.order * (size_t)(d * d), sizeof *g->mat);
			g->vec = arena_array(a, (size_t)c.order * (size_t)d, sizeof *g->vec);
			for (int e = 0; e < c.order; e++) {
				memcpy(g->mat + e * d * d, copy + (size_t)e * (size_t)c.width,
				       (size_t)(d * d) * sizeof(int));
				memcpy(g->vec + e * d, copy + (size_t)e * (size_t)c.width + d * d,
				       (size_t)d * sizeof(int));
			}
		} else {
			g->perm = copy;
		}
		orbits(a, g, img, ngen);
	}
	free(c.elem), free(id), free(c.dense), free(lin.elem);
	hash_free(&c.index);
	hash_free(&lin.index);
	return g;
}

/* One unit translation per dimension. On torus_boxes the boxes' torus
 * translates by 1 and the GPUs of every box by 2k (a GPU's NIC serves
 * dimension (g / 2) mod k: only a step of 2k keeps its cable's direction),
 * left out when 2k is all of them. */
int
group_unit_translations(const Topo *t, Loc loc, GroupGen *out)
{
	int d = t->ndim, dims = t->kind == TK_SPINE_LEAF ? 2 : d;
	/* torus_boxes: a GPU's NIC serves dimension (g / 2) mod k; shared NICs:
	 * G/K GPUs a NIC; a step of either keeps the GPUs' cabling */
	int gpu_step = t->kind == TK_TORUS_BOXES ? 2 * (d - 1) : t->nics ? t->size[d - 1] / t->nics : 1;
	if (gpu_step > 1 && gpu_step == t->size[d - 1])
		dims--;
	for (int i = 0; out && i < dims; i++) {
		out[i] = (GroupGen){.loc = loc, .affine = true};
		for (int j = 0; j < d; j++)
			out[i].mat[j * d + j] = 1;
		out[i].vec[i] = i == d - 1 ? gpu_step : 1;
	}
	return dims;
}

/* keep: gen itself, to be the group's generators when no `translate;` needs
 * expanding (else NULL: the group holds a copy). */
static Group *
build(Diag *dg, Arena *a, const Topo *t, const char *name, Loc loc, const GroupGen *gen, int ngen,
      GroupGen *keep)
{
	bool affine = coordinate_topology(t);
	for (int k = 0; k < ngen; k++)
		affine &= gen[k].affine;
	int d = t->ndim;
	/* expand `translate;` into one unit translation per dimension */
	int n = 0;
	bool any_translate = false;
	for (int k = 0; k < ngen; k++) {
		n += gen[k].all_translations ? group_unit_translations(t, loc, NULL) : 1;
		any_translate |= gen[k].all_translations;
	}
	if (check_group_generators(dg, loc, name, n, t->nnode, t->nlink) != 0)
		return NULL;
	int **gens = xcalloc((size_t)n + 1, sizeof *gens), **img = xcalloc((size_t)n + 1, sizeof *img);
	/* the generators as given when none is `translate;` (a GroupGen is 300
	 * bytes: a file of a million maps would hold another copy) */
	GroupGen *expanded = any_translate ? xcalloc((size_t)n + 1, sizeof *expanded) : NULL;
	const GroupGen *unit = expanded ? expanded : gen;
	int m = expanded ? 0 : ngen;
	for (int k = 0; expanded && k < ngen; k++) {
		if (gen[k].all_translations)
			m += group_unit_translations(t, gen[k].loc, expanded + m);
		else
			expanded[m++] = gen[k];
	}
	int rc = 0;
	for (int k = 0; k < m; k++) {
		img[k] = xmalloc((size_t)t->nnode * sizeof *img[k]);
		for (int v = 0; v < t->nnode; v++) {
			if (!unit[k].affine)
				img[k][v] = unit[k].perm[v];
			else if (t->kind == TK_SPINE_LEAF)
				img[k][v] = spine_leaf_node(t, unit[k].mat, unit[k].vec, v);
			else if (t->kind == TK_RAILS || t->kind == TK_XGMI_RAILS)
				img[k][v] = rails_node(t, unit[k].mat, unit[k].vec, v);
			else if (t->kind == TK_TORUS_BOXES)
				img[k][v] = torus_boxes_node(t, unit[k].mat, unit[k].vec, v);
			else
				img[k][v] = affine_node(t, unit[k].mat, unit[k].vec, v);
		}
		if (check_automorphism(dg, t, img[k], unit[k].loc) != 0)
			rc = -1;
		if (affine) {
			gens[k] = xmalloc((size_t)(d * d + d) * sizeof *gens[k]);
			for (int i = 0; i < d; i++) {
				for (int j = 0; j < d; j++)
					gens[k][i * d + j] = mod(unit[k].mat[i * d + j], t->size[i]);
				gens[k][d * d + i] = mod(unit[k].vec[i], t->size[i]);
			}
		} else {
			gens[k] = img[k];
		}
	}
	Group *g = rc == 0 ? close_group(dg, a, t, name, loc, affine, gens, m, img) : NULL;
	if (g && keep && !expanded) { /* the caller's, its maps' permutations those of img */
		g->ngen = m;
		g->gen = keep;
	} else if (g) { /* the generators, one translation per dimension: what irtext writes */
		g->ngen = m;
		g->gen = arena_array(a, (size_t)m + 1, sizeof *g->gen);
		for (int k = 0; k < m; k++) {
			g->gen[k] = unit[k];
			g->gen[k].all_translations = false;
			if (!unit[k].affine) {
				g->gen[k].perm = arena_array(a, (size_t)t->nnode, sizeof *g->gen[k].perm);
				memcpy(g->gen[k].perm, img[k], (size_t)t->nnode * sizeof *img[k]);
			}
		}
	}
	for (int k = 0; k < m; k++) {
		if (gens[k] != img[k])
			free(gens[k]);
		free(img[k]);
	}
	free(gens), free(img), free(expanded);
	return g;
}

Group *
group_build(Diag *dg, Arena *a, const Topo *t, const char *name, Loc loc, const GroupGen *gen, int ngen)
{
	return build(dg, a, t, name, loc, gen, ngen, NULL);
}

Group *
group_build_keeping(Diag *dg, Arena *a, const Topo *t, const char *name, Loc loc, GroupGen *gen, int ngen)
{
	return build(dg, a, t, name, loc, gen, ngen, gen);
}

/* ---- inverses ---- */

static int
elem_index(Closure *c, const int *e)
{
	int i = hash_find(&c->index, hash_ints(e, (size_t)c->width), e, elem_is, c);
	if (i < 0)
		die("group_inverses: an element's inverse is not in the group");
	return i;
}

/* out = s^-1 for an affine generator s: its last power before the identity. */
static void
affine_inverse(const Closure *c, const int *s, const int *id, int *out, int *tmp)
{
	size_t w = (size_t)c->width * sizeof *out;
	memcpy(out, id, w);
	memcpy(tmp, s, w);
	for (int k = 0; k < c->order && memcmp(tmp, id, w) != 0; k++) {
		memcpy(out, tmp, w);
		compose(c, s, out, tmp);
	}
}

/* Affine: a walk over the closure from the identity, (s x)^-1 = x^-1 s^-1
 * for each generator s (whose inverse is found once): order x generators
 * compositions in all. */
static void
affine_inverses(const Group *g, Closure *c, int *inv)
{
	const Topo *t = g->topo;
	int d = t->ndim, w = c->width, n = g->ngen;
	int *gen = xmalloc((size_t)(2 * n + 3) * (size_t)w * sizeof *gen);
	int *ginv = gen + (size_t)n * (size_t)w, *tmp = ginv + (size_t)n * (size_t)w;
	int *out = tmp + w, *queue = xmalloc((size_t)c->order * sizeof *queue);
	for (int k = 0; k < n; k++) {
		for (int i = 0; i < d; i++) {
			for (int j = 0; j < d; j++)
				gen[k * w + i * d + j] = mod(g->gen[k].mat[i * d + j], t->size[i]);
			gen[k * w + d * d + i] = mod(g->gen[k].vec[i], t->size[i]);
		}
		affine_inverse(c, gen + k * w, c->elem, ginv + k * w, tmp);
	}
	for (int e = 0; e < c->order; e++)
		inv[e] = -1;
	inv[0] = 0; /* element 0 is the identity */
	int head = 0, tail = 0;
	queue[tail++] = 0;
	while (head < tail) {
		int x = queue[head++];
		for (int k = 0; k < n; k++) {
			compose(c, gen + k * w, c->elem + (size_t)x * (size_t)w, tmp);
			int y = elem_index(c, tmp);
			if (inv[y] >= 0)
				continue;
			compose(c, c->elem + (size_t)inv[x] * (size_t)w, ginv + k * w, out);
			inv[y] = elem_index(c, out);
			queue[tail++] = y;
		}
	}
	if (tail != c->order)
		die("group_inverses: the generators do not reach every element");
	free(gen), free(queue);
}

int *
group_inverses(const Group *g)
{
	const Topo *t = g->topo;
	Closure c = {.t = t, .affine = g->affine, .order = g->order};
	c.width = g->affine ? t->ndim * t->ndim + t->ndim : t->nnode;
	hash_reserve(&c.index, g->order, elem_hash, &c);
	size_t w = (size_t)c.width;
	int d = t->ndim;
	if (g->affine) {
		c.elem = xmalloc((size_t)g->order * w * sizeof *c.elem);
		for (int e = 0; e < g->order; e++) {
			memcpy(c.elem + e * w, g->mat + e * d * d, (size_t)(d * d) * sizeof *c.elem);
			memcpy(c.elem + e * w + (size_t)(d * d), g->vec + e * d, (size_t)d * sizeof *c.elem);
		}
	} else {
		c.elem = g->perm; /* read only */
	}
	for (int e = 0; e < g->order; e++)
		hash_add(&c.index, hash_ints(c.elem + e * w, w), e, elem_hash, &c);
	int *inv = xmalloc((size_t)g->order * sizeof *inv);
	if (g->affine) {
		affine_inverses(g, &c, inv);
		free(c.elem);
	} else {
		int *p = xmalloc(w * sizeof *p);
		for (int e = 0; e < g->order; e++) {
			for (int v = 0; v < t->nnode; v++)
				p[c.elem[e * w + (size_t)v]] = v;
			inv[e] = elem_index(&c, p);
		}
		free(p);
	}
	hash_free(&c.index);
	return inv;
}

/* ---- automorphisms(T): every automorphism, by backtracking ---- */

typedef struct Search {
	const Topo *t;
	int n;
	unsigned long *cnt; /* n x n: the links u -> v, counted with their parameters */
	int *order;     /* nodes in BFS order */
	int *img, *used;
	int *found;
	int nfound, cap;
	bool overflow;
} Search;

static bool
consistent(const Search *s, int i, int c)
{
	int n = s->n, u = s->order[i];
	if (s->cnt[u * n + u] != s->cnt[c * n + c])
		return false;
	bool su = s->t->is_switch && s->t->is_switch[u], sc = s->t->is_switch && s->t->is_switch[c];
	if (su != sc || s->t->out[u + 1] - s->t->out[u] != s->t->out[c + 1] - s->t->out[c])
		return false;
	for (int j = 0; j < i; j++) {
		int w = s->order[j], iw = s->img[w];
		if (s->cnt[u * n + w] != s->cnt[c * n + iw] || s->cnt[w * n + u] != s->cnt[iw * n + c])
			return false;
	}
	return true;
}

static void
search(Search *s, int i)
{
	if (s->overflow)
		return;
	if (i == s->n) {
		if (s->nfound >= MAX_GROUP_ORDER || (long)(s->nfound + 1) * s->n > MAX_PERM_INTS) {
			s->overflow = true;
			return;
		}
		if (s->nfound == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 64;
			s->found = xrealloc(s->found, (size_t)s->cap * (size_t)s->n * sizeof *s->found);
		}
		memcpy(s->found + (size_t)s->nfound * (size_t)s->n, s->img, (size_t)s->n * sizeof(int));
		s->nfound++;
		return;
	}
	for (int c = 0; c < s->n; c++) {
		if (s->used[c] || !consistent(s, i, c))
			continue;
		s->used[c] = 1;
		s->img[s->order[i]] = c;
		search(s, i + 1);
		s->used[c] = 0;
	}
}

Group *
group_automorphisms(Diag *dg, Arena *a, const Topo *t, const char *name, Loc loc)
{
	char desc[128];
	topo_describe(t, desc, sizeof desc);
	if (t->nnode > MAX_AUTO_NODES) {
		error_at(dg, loc, "automorphisms() is computed for topologies of at most %d nodes; %s has "
		         "%d (name the generators in a group block)", MAX_AUTO_NODES, desc, t->nnode);
		return NULL;
	}
	int n = t->nnode;
	Search s = {.t = t, .n = n};
	s.cnt = xcalloc((size_t)(n * n), sizeof *s.cnt);
	s.order = xmalloc((size_t)n * sizeof *s.order);
	s.img = xmalloc((size_t)n * sizeof *s.img);
	s.used = xcalloc((size_t)n, sizeof *s.used);
	unsigned char *seen = xcalloc((size_t)n, 1);
	for (int u = 0; u < n && s.cnt; u++)
		for (int v = 0; v < n; v++)
			s.cnt[u * n + v] = pair_signature(t, u, v);
	/* BFS order (undirected), so each node meets assigned neighbours early */
	int k = 0;
	for (int start = 0; start < n; start++) {
		if (seen[start])
			continue;
		seen[start] = 1;
		s.order[k++] = start;
		for (int h = k - 1; h < k; h++)
			for (int w = 0; w < n; w++)
				if (!seen[w] && (s.cnt[s.order[h] * n + w] || s.cnt[w * n + s.order[h]])) {
					seen[w] = 1;
					s.order[k++] = w;
				}
	}
	search(&s, 0);
	Group *g = NULL;
	if (s.overflow) {
		error_at(dg, loc, "%s has more than %d automorphisms: too many to hold; name generators in "
		         "a group block", desc, s.nfound);
	} else {
		/* the identity first */
		for (int e = 0; e < s.nfound; e++) {
			int *p = s.found + (size_t)e * (size_t)n;
			bool ident = true;
			for (int v = 0; v < n && ident; v++)
				ident = p[v] == v;
			if (ident && e > 0) {
				memcpy(s.img, p, (size_t)n * sizeof(int));
				memcpy(p, s.found, (size_t)n * sizeof(int));
				memcpy(s.found, s.img, (size_t)n * sizeof(int));
			}
		}
		g = NEW(a, Group);
		g->name = name;
		g->loc = loc;
		g->topo = t;
		g->order = s.nfound;
		g->perm = arena_array(a, (size_t)s.nfound * (size_t)n, sizeof *g->perm);
		copy_n(g->perm, s.found, (size_t)s.nfound * (size_t)n, sizeof(int));
		int **img = xmalloc((size_t)s.nfound * sizeof *img);
		for (int e = 0; e < s.nfound; e++)
			img[e] = g->perm + (size_t)e * (size_t)n;
		orbits(a, g, img, s.nfound);
		free(img);
		g->ngen = s.nfound;
		g->gen = arena_array(a, (size_t)s.nfound + 1, sizeof *g->gen);
		for (int e = 0; e < s.nfound; e++)
			g->gen[e] = (GroupGen){.loc = loc, .perm = g->perm + (size_t)e * (size_t)n};
	}
	free(s.cnt), free(s.order), free(s.img), free(s.used), free(s.found), free(seen);
	return g;
}

int
group_node(const Group *g, int elem, int node)
{
	const Topo *t = g->topo;
	if (!g->affine)
		return g->perm[(size_t)elem * (size_t)t->nnode + (size_t)node];
	int d = t->ndim;
	return affine_node(t, g->mat + elem * d * d, g->vec + elem * d, node);
}

int
group_link(const Group *g, int elem, int link)
{
	const Link *l = &g->topo->link[link];
	return topo_find_link(g->topo, group_node(g, elem, l->src), group_node(g, elem, l->dst),
	                      l->copy);
}
