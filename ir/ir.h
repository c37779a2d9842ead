/*
 * ir.h: the one IR header. Topologies (nodes, directed links, network
 * parameters), routes, symmetry groups, trees, and schedules (rounds of
 * messages carrying chunk sets), with the passes that build, verify and
 * measure them. Nothing here sees the AST except lower.c and usersched.c
 * (the run of a user's schedule block).
 *
 * Conventions: arrays with counts, integer ids (node, link, rank, chunk,
 * element), memory from the Prog's arena. A pass returns 0, or -1 after
 * reporting through error_at().
 */
#ifndef COLLC_IR_H
#define COLLC_IR_H

#include <stdbool.h>

#include "base.h"
#include "registry.h"
#include "hash.h"

/* ---- network parameters: Net and its parameters are in registry.h ---- */

extern const Net net_defaults;

/* ---- topologies (topo.c) ---- */

typedef struct Link {
	int src, dst;      /* nodes */
	int dim;           /* torus, mesh, hyperx: the coordinate that changes; else -1 */
	int dir;           /* torus, mesh: +1 or -1 (the step along dim); else 0 */
	int copy;          /* parallel links u->v numbered 0, 1, ... in port order */
	double bandwidth, latency, energy_per_bit;
} Link;

typedef struct Topo {
	const char *name;
	Loc loc;
	TopoKind kind;
	int ndim;
	int size[MAX_DIMS];   /* coordinates of ranks (row-major, last fastest) */
	int variant;          /* supermesh: 0 bi, 1 alter; optical_ring: ports */
	int nics, nic_link_gbps; /* rails, xgmi_rails with `nics K, pcie_gbps P`: K NIC nodes a
	                            box, the GPUs' links to them at P Gbit/s; 0: a NIC per GPU,
	                            its link (docs/gpu-clusters.md) */
	int nnode;            /* ranks and switches */
	int nrank;            /* nodes that hold data: ids 0..nrank-1 unless is_switch says */
	unsigned char *is_switch; /* nnode, or NULL when every node is a rank */
	int nlink;
	Link *link;           /* sorted by src, then port order */
	int *out;             /* nnode + 1: links of v are [out[v], out[v+1]) */
	Net net;
} Topo;

/* A form's numbers: what its arguments say (sema's NodeSpace) and what a
 * built topology keeps (topo_shape_of). */
typedef struct TopoShape {
	int ndim, size[MAX_DIMS]; /* the ranks' coordinates */
	int switches;             /* nodes after the ranks */
	int variant;              /* Topo.variant */
	const int *pairs;         /* xgmi_rails: links per pair of a box's GPUs, or NULL */
	int nics, nic_link_gbps;  /* Topo's: shared NICs as nodes, or 0 */
} TopoShape;

/* How the IR builds each form and estimates its links first: indexed by
 * TopoKind, {NULL, NULL} exactly for block forms (lower.c builds a graph
 * from its block); test_topo checks the table against the registry. */
typedef struct TopoBuilder {
	Topo *(*build)(Arena *, const char *name, const TopoShape *, Net);
	double (*links)(const TopoShape *); /* directed links, before building */
} TopoBuilder;
extern const TopoBuilder topo_builders[NTOPOKIND];
TopoShape topo_shape_of(const Topo *);

/* Builders; each returns a topology whose links are sorted and indexed. */
/* torus, ring, mesh, supermesh (variant 0 bi, 1 alter), hyperx, full */
Topo *topo_new(Arena *, TopoKind, const char *name, int ndim, const int *size, int variant,
               Net);
Topo *topo_spine_leaf(Arena *, const char *name, int spines, int leaves, int hosts, Net);
/* rails: boxes x gpus GPUs (box-major), a switch per box, a rail switch per
 * GPU index; NIC links at nic_gbps Gbit/s, the others at net.bandwidth. */
Topo *topo_rails(Arena *, const char *name, int boxes, int gpus, int nic_gbps, Net);
/* xgmi_rails: as rails, but each box's GPUs fully connected, a link per
 * pair at net.bandwidth (xGMI), no box switch. */
/* pairs: links per pair of a box's GPUs by rows (0-1, 0-2, ...), NULL: one each */
Topo *topo_xgmi_rails(Arena *, const char *name, int boxes, int gpus, int nic_gbps,
                      const int *pairs, Net);
/* leaf_spine_boxes: rails' boxes, a box's NICs on its own leaf switch, each
 * leaf joined to every spine by a link at nic_gbps (oversubscription G:S). */
Topo *topo_leaf_spine_boxes(Arena *, const char *name, int boxes, int gpus, int nic_gbps,
                            int spines, Net);
/* torus_boxes: rails' boxes (dims[0] x ... x dims[k-1], row-major), joined
 * as a k-D torus by the GPUs' NICs: GPU 2p to GPU 2p + 1 of the next box
 * along dimension p mod k, at nic_gbps; gpus a multiple of 2k. */
Topo *topo_torus_boxes(Arena *, const char *name, int k, const int *dims, int gpus, int nic_gbps,
                       Net);
/* optical_ring: the static ring (dim 0) plus every circuit the algorithms
 * may switch in (dim 1; optical.c). */
Topo *topo_optical_ring(Arena *, const char *name, int n, int ports, Net);
/* A graph: links given as pairs (both directions listed for <->). */
Topo *topo_graph(Arena *, const char *name, int nnode, const unsigned char *is_switch,
                 int nlink, const Link *links, Net);
/* Any kind from its parts (the IR reader): links as given, in port order. */
Topo *topo_assemble(Arena *, TopoKind, const char *name, int ndim, const int *size, int variant,
                    int nnode, const unsigned char *is_switch, int nlink, const Link *links,
                    Net);
void topo_coords(const Topo *, int node, int *coord);
int topo_node(const Topo *, const int *coord); /* coordinates taken modulo the sizes */
int topo_find_link(const Topo *, int src, int dst, int copy); /* -1 if none */
int topo_nlinks_between(const Topo *, int src, int dst);
bool topo_has_parallel_links(const Topo *); /* some u -> v has copy 1 */
const char *topo_kind_name(TopoKind);
void topo_describe(const Topo *, char *buf, size_t len); /* "torus(8, 8)" */
/* A node as messages, drawings and the IR text's comments name it: by its
 * name where the form names its nodes ("gpu(0, 3)", "rail(2)",
 * base/registry.h's NodeClass), else by coordinates or id ("(0, 3)", "5"). */
void topo_node_name(const Topo *, int node, char *buf, size_t len);
/* The value of each parameter of the form (arg[MAX_PARAMS]), as declared. */
void topo_form_args(const Topo *, int64_t *arg);
/* In-network reduction (docs/gpu-clusters.md, "In-switch reduction"): the
 * REDUCE_ bit by which the node reduces what enters it and multicasts the
 * result, or 0 (a rank, or a switch that only forwards), from the
 * network's switch_reduction: REDUCE_NVLS for a box's switch (rails,
 * leaf_spine_boxes), REDUCE_SHARP for a rail, leaf or spine (and
 * spine_leaf's switches), either for a graph's switches. Its bandwidth is
 * its ports': a reducing switch keeps pace with its links. */
unsigned topo_reduces(const Topo *, int node);
bool topo_any_reduces(const Topo *);

/* ---- routes (route.c) ---- */

/* ROUTE_SHORTEST: one fixed minimal path (first closer port), used to build
 * trees; ROUTE_ECMP: what `routing shortest_path` means for a collective's
 * messages, a minimal path chosen per flow by hashing (route.c);
 * ROUTE_FASTEST: `routing fastest` and a collective's default, the widest
 * paths (largest least bandwidth), of those the fewest hops, chosen among
 * as ROUTE_ECMP chooses: the same routes as ROUTE_ECMP where the links
 * are alike. */
typedef enum RoutePolicy {
	ROUTE_SHORTEST, ROUTE_DOR, ROUTE_ECMP, ROUTE_FASTEST, NROUTE_POLICY
} RoutePolicy;

/* Routes are computed on demand and cached per (src, dst): no all-pairs table. */
typedef struct Route {
	int src, dst;
	int len;        /* hops */
	int *link;      /* len links, src to dst; stable for the Routes' life */
} Route;

typedef struct Routes {
	const Topo *topo;
	RoutePolicy policy;
	Arena arena;
	int *slot;      /* open-addressed (src, dst) -> route id + 1 */
	int nslot;
	Route *route;
	int nroute, caproute;
	int *scratch;   /* one route being built (nnode links at most) */
	int *dist;      /* generic graphs: BFS distances to one destination */
	int dist_to;    /* the destination dist[] holds, or -1 */
	double dist_floor; /* ... over the links of at least this bandwidth */
	double min_bw;  /* the least bandwidth of a routable link */
	bool uniform;   /* every routable link has that bandwidth */
	double *width;  /* ROUTE_FASTEST: each node's widest path to width_to */
	int width_to;   /* the destination width[] holds, or -1 */
} Routes;

void routes_init(Routes *, const Topo *, RoutePolicy);
void routes_free(Routes *);
/* The route from src to dst (its id), computed once; -1 if unreachable. */
int route_id(Routes *, int src, int dst);
/* Its links; returns the hop count, or -1 if dst is unreachable. */
int route_get(Routes *, int src, int dst, const int **links);
int topo_distance(Routes *, int src, int dst);
/* The hops between positions a and b of a ring of n: the shorter way round. */
int ring_distance(int a, int b, int n);
/* Whether some rank of the list cannot reach another (*from, *to: indices). */
bool routes_split(Routes *, const int *rank_node, int nrank, int *from, int *to);
/* A lower bound of the hops of a route from src to dst, found without a
 * search: the distance on tori, rings, meshes, supermeshes, HyperX and
 * full; 1 elsewhere (0 from a node to itself). */
int route_min_hops(const Topo *, int src, int dst);
/* The route src -> dst as route_get gives it, but not cached when it is not
 * already: the links are valid until the next call. For the rank form's
 * copies (sim streams meet most pairs once). Hops, or -1. */
int route_uncached(Routes *, int src, int dst, const int **links);
/* Whether distances are closed forms (tori, rings, meshes, supermeshes,
 * HyperX, full): no search per destination. */
bool routes_closed_form(const Topo *);
/* The first link of the route src -> dst; -1 if none. Routes of grids are
 * not cached by it: a tree asks it of every node. */
int route_first_link(Routes *, int src, int dst);

/* ---- groups (group.c) ---- */

/*
 * A group of automorphisms, closed and enumerated. Elements are held as
 * affine maps x -> A x + b on coordinates when every generator is affine
 * (tori, meshes, HyperX: a few ints per element, whatever the node count),
 * or as node permutations otherwise. Links follow nodes: the image of the
 * k-th parallel link u->v is the k-th parallel link g(u)->g(v), with
 * (dim, dir) carried through A on tori.
 */
typedef struct GroupGen GroupGen;

typedef struct Group {
	const char *name;
	Loc loc;
	const Topo *topo;
	int order;
	int ngen;
	GroupGen *gen;       /* generators (translate expanded): the closure's seed */
	bool affine;
	int *mat;   /* affine: order x ndim x ndim */
	int *vec;   /* affine: order x ndim */
	int *perm;  /* permutation groups: order x nnode */
	int *link_orbit;     /* nlink: the orbit of each directed link */
	int nlink_orbits;
	int *orbit_size;     /* nlink_orbits */
	bool node_transitive;
} Group;

struct GroupGen {
	Loc loc;
	bool affine;
	int mat[MAX_DIMS * MAX_DIMS]; /* affine: x -> mat x + vec */
	int vec[MAX_DIMS];
	int *perm;                    /* else a node permutation (nnode) */
	bool all_translations;        /* `translate;` with no vector */
};


/* Checks each generator is an automorphism, closes, finds link orbits. */
Group *group_build(Diag *, Arena *, const Topo *, const char *name, Loc, const GroupGen *, int ngen);
/* The same, keeping the generators (arena memory of the same arena, none
 * `translate;`) as the group's rather than a copy: a file's generators are
 * held once. */
Group *group_build_keeping(Diag *, Arena *, const Topo *, const char *name, Loc, GroupGen *, int ngen);
/* `translate;` as unit translations, one per dimension (a spine-leaf's
 * two): their number, and them in out unless it is NULL. */
int group_unit_translations(const Topo *, Loc, GroupGen *out);
Group *group_automorphisms(Diag *, Arena *, const Topo *, const char *name, Loc);
int group_node(const Group *, int elem, int node);
int group_link(const Group *, int elem, int link);
/* The index of each element's inverse (order ints; the caller frees). */
int *group_inverses(const Group *);

/* ---- trees (tree.c) ---- */

/* A rooted tree (or forest) over ranks; edges child -> parent, routed. */
typedef struct Tree {
	const char *name;
	Loc loc;
	const Topo *topo;
	int nroot;
	int root[2];     /* forest: two roots joined by the exchange round */
	int *parent;     /* nnode: parent node, -1 for roots and switches */
	int *depth;      /* nnode: -1 for switches */
	int height;      /* max depth */
	long weight;     /* W(T): total hops of the tree's edges */
	int *link;       /* disjoint trees: nnode, the link parent -> v of v's edge (-1 at the
	                    root); NULL for trees whose edges are routed */
} Tree;

Tree *tree_bfs(Arena *, const Topo *, Routes *, int root);
Tree *tree_khop(Arena *, const Topo *, Routes *, int root, int depth);
Tree *tree_windmill(Arena *, const Topo *, int root);
Tree *tree_forest(Arena *, const Topo *, Routes *, int a, int b);
int tree_balanced_pair(Arena *, const Topo *, int root, Tree **out); /* 2 trees */
Tree *tree_spine_leaf(Arena *, const Topo *);
/* Explicit: parent[] given (one root, or a forest's two); reports a cycle. */
Tree *tree_from_parents(Diag *, Arena *, const Topo *, Routes *, const int *roots, int nroot,
                        int *parent, Loc);
int tree_finish(Tree *, Routes *); /* depths, height, weight; -1 on a cycle */

/* alg_disjoint.c: one spanning tree per root, no directed link in two of
 * them (algorithms.md 9.3). NULL after a located error at loc that proves
 * none exist. */
typedef enum DisjointMethod { DISJOINT_ALGORITHM1, DISJOINT_GENERAL } DisjointMethod;
Tree **disjoint_trees(Diag *, Arena *, const Topo *, Routes *, const int *roots, int nroot, Loc,
                      DisjointMethod *);
/* The SuperMesh root sets of a square (super)mesh, outer ring inwards:
 * roots[] in set order (every node once), set_size[] per set; returns the
 * number of sets. */
int supermesh_root_sets(const Topo *, int *roots, int *set_size);

/* ---- circuit configurations of an optical ring (optical.c) ---- */

/*
 * An optical_ring(n, ports P) puts blocks of B = ceil(2n/P) consecutive
 * nodes behind one optical port pair (B = 1 with 2n ports): block b sends
 * from its last node and receives at its first. A configuration says which
 * in-port each out-port feeds: block b -> next[b], a permutation of the
 * blocks, so the circuits form directed cycles. Circuits are duplex: the
 * reverse fiber carries first(next[b]) -> last(b). The initial
 * configuration is the ring b -> b + 1.
 *
 * The topology holds every circuit the switch may be asked for: offsets
 * +-2^k blocks (the dim 0 links are the initial ring's forward circuits;
 * dim 1 the others, dir +1 forward, -1 the reverse fiber). Only the static
 * ring (dim 0 and electrical links) routes schedules without phases.
 */

typedef struct Phase {
	int round;      /* in force from this round to the next phase's */
	bool reconfig;  /* the switch is rewired before `round` (costs reconfig_delay) */
	int *next;      /* nblock: block b's out-port feeds block next[b]'s in-port */
} Phase;

int optical_block(const Topo *);  /* B: nodes per port pair */
int optical_nblock(const Topo *); /* port pairs in use: ceil(n / B) */
/* The route src -> dst on configuration next (forward circuits, or with
 * reverse the reverse fibers; electrical links inside blocks): hops written
 * to links (room for n + nblock), or -1 if dst is on another cycle. */
int optical_route(const Topo *, const int *next, bool reverse, int src, int dst, int *links);
/* 0 if next is a set of directed cycles over the blocks; else -1 with why. */
int optical_check_config(const Topo *, const int *next, char *why, size_t len);

/* ---- schedules ---- */

typedef enum XferOp { X_REDUCE, X_COPY } XferOp;

/* One message: a chunk set sent src -> dst in one round, over one route. */
typedef struct Msg {
	int round;
	int src, dst;     /* communicator ranks */
	int route;        /* the Sched's route table */
	int first, n;     /* chunks: sched->chunks[first .. first + n) */
	int fuse;         /* 0, or 1 + the index in Sched.fuse of the in-network operation
	                   * it is part of; never packed with a message of another */
	short instance;   /* the independent pipeline it belongs to (Bucket's 2d instances,
	                   * < MAX_INSTANCES); 0 when the schedule has one. Never packed
	                   * with another instance's message; the simulator queues each
	                   * apart. */
	unsigned char op; /* XferOp; with instance, 32 bytes a message as before fuse */
} Msg;

/*
 * An in-network operation (docs/gpu-clusters.md, "In-switch reduction"):
 * the messages of one round with the same Msg.fuse pass through a switch
 * that reduces (topo_reduces). They move the chunks unicast messages would
 * (so the verifier proves them as such), but the links carry less:
 * FUSE_REDUCE: one receiver, every message X_REDUCE with the same chunks;
 *   the switch adds the senders' copies and sends the sum on once, so the
 *   links after the switch carry it once.
 * FUSE_MULTICAST: one sender, X_COPY, the same chunks; sent once to the
 *   switch, which copies it to every receiver.
 * FUSE_ALLREDUCE: a set of ranks, a message from each to each other,
 *   X_REDUCE, the same chunks; each sends its copy once, the switch adds
 *   them and sends every rank the sum once (SHARP's allreduce).
 * self: the receiver's own copy (reduce) or the sender's (multicast) goes
 *   through the switch too, as NCCL's multimem loads and stores on the
 *   group's multicast address do (its link carries it once more).
 * The links the operation loads, each once: fuse_links.
 */
typedef enum FuseKind { FUSE_REDUCE, FUSE_MULTICAST, FUSE_ALLREDUCE } FuseKind;

typedef struct Fuse {
	int node;         /* the switch */
	FuseKind kind;
	bool self;
	int leader;       /* its first message (sched_end); the simulator's one flow */
} Fuse;

/*
 * The symmetric form (tree symmetrization): transfer t of base tree b in
 * round r, applied by every group element g, moves chunk (b, g) along
 * g(src) -> g(dst) over the image of the base route. Held compactly and
 * expanded on demand (sched_expand).
 */
typedef struct BaseXfer {
	int round;
	int tree;
	int src, dst;      /* nodes of the base tree */
	int route;         /* the base route, in the Sched's route table; -1 in the
	                    * rank form (xor_routes routes every copy when made) */
	XferOp op;
	int instance;      /* Msg.instance of its copies (Bucket's pipelines); 0 elsewhere */
} BaseXfer;

typedef struct Sched {
	const char *name;
	Loc loc;
	CollKind kind;
	const char *algorithm;
	/* A parameter the algorithm leaves free, as built: "segments 12", or
	 * "fixed segments 16" where the file gives it (tto: "chunks 54"). With
	 * size_chosen it was chosen for the size the cost model assumed
	 * (AlgCtx.size, Prog.auto_size): `collc sim` rebuilds the schedule for
	 * every size it runs. NULL: none. No commas (a CSV cell). */
	const char *choice;
	bool size_chosen;
	/* the segments a tree pipeline cut each copy's share into, as built
	 * (packing's M: to_msccl_fit.c builds the same trees with fewer;
	 * symmetric's S, each base tree taken S times); 0 where the algorithm
	 * has none */
	int segments;
	/* the repeated form (repeat > 1; repeat.c): the messages are segment 0's
	 * of a pipeline of `repeat` segments, and segment j (0 < j < repeat) is
	 * every one of them again, j rounds later, carrying chunk c + j for each
	 * chunk c it carries (segment 0's chunks are the multiples of repeat;
	 * nround counts the repeats' rounds). No fuses, phases or barriers. 0
	 * or 1: the messages are all of them */
	int repeat;
	const Topo *topo;
	int nrank;
	int *rank_node;    /* communicator rank -> node */
	int *node_rank;    /* node -> rank, or -1 */
	int nchunk;        /* the vector is cut into nchunk equal chunks */
	int nround;
	/* what each chunk means for the collective's postcondition */
	int *owner;        /* reduce_scatter, allgather: the rank that ends (starts) with it */
	int *a2a_src, *a2a_dst; /* alltoall: whose block it is, and where it goes */
	int root;          /* broadcast, reduce: the root rank */
	/* routes: route r is route_link[route_off[r] .. route_off[r + 1]) */
	int nroute;
	int *route_off;
	int *route_link;
	RoutePolicy routing; /* the collective's routing (the file's `routing`, or
	                      * its default): what its other algorithms route by */
	const Group *pack_group; /* AlgCtx.pack_group of its collective, for rebuilds */
	/* explicit form: messages sorted by round */
	int nmsg;
	Msg *msg;
	int *chunks;
	/* symmetric form (base != NULL, no messages): chunk (b, g) is b * order + g;
	 * an explicit schedule streamed through trees (pipelined_trees) keeps
	 * them in tree/ntree too, for reports and drawings */
	const Group *group;
	int ntree;
	Tree **tree;
	int nbase;
	BaseXfer *base;
	/* the rank form of the symmetric form (halving_doubling, recursive
	 * halving and doubling on 2^L ranks, for collc sim; group NULL): copy m
	 * of base transfer x moves chunk (x.tree, m) from rank node_rank[x.src]
	 * ^ m to node_rank[x.dst] ^ m, routed by these Routes as the explicit
	 * message between them is; the base transfers hold no routes */
	Routes *xor_routes;
	/* optical_ring: the configuration per round (phase[0].round = 0), or
	 * none: the initial ring throughout */
	int nphase;
	Phase *phase;
	/* barriers: rounds before which every message of the earlier rounds has
	 * arrived (the phase boundaries of an algorithm that runs phase by phase:
	 * bucket's dimension phases); ascending, each in 1..nround-1. Round by
	 * round every round is one; collc sim --sync deps holds only these */
	int nbarrier;
	int *barrier;
	/* in-network operations (Msg.fuse), or none */
	int nfuse;
	Fuse *fuse;
} Sched;

/* sched.c: building explicit schedules. */
typedef struct SchedBuilder {
	Arena *arena;
	Sched *s;
	Routes *routes;
	int capmsg, capchunk, caproute, caplink;
	Hash route_index;  /* interned routes by their link lists */
	int *chunk_buf;    /* the chunks of the message being added */
	int *from_routes;  /* Routes' route id -> this schedule's route + 1 (sched_msg) */
	int nfrom_routes;
	bool too_big;      /* its routes passed MAX_ROUTE_HOPS: messages are dropped */
	bool unrouted;     /* sched_msg's messages wait for sched_end's routing (route -1) */
	int instance;      /* stamped on the messages added next (Msg.instance); 0 at first */
	int fuse;          /* stamped on the messages added next (Msg.fuse); 0 at first */
	int capfuse;
} SchedBuilder;

Sched *sched_new(Arena *, const char *name, Loc, CollKind, const char *algorithm,
                 const Topo *, const int *rank_node, int nrank);
void sched_begin(SchedBuilder *, Arena *, Sched *, Routes *);
/* Adds a message between communicator ranks, routed by the Routes in
 * sched_end, once the hops of all of them are estimated. */
void sched_msg(SchedBuilder *, int round, int src, int dst, XferOp, const int *chunks, int n);
/* Adds a message over the given links (nlink of them, src to dst). */
void sched_msg_route(SchedBuilder *, int round, int src, int dst, XferOp, const int *chunks,
                     int n, const int *links, int nlink);
int sched_route(SchedBuilder *, const int *links, int nlink);
/* Sorts by round, merges same (round, src, dst, route, op, instance); -1 after
 * reporting when the routes passed MAX_ROUTE_HOPS (nothing is kept). */
int sched_end(Diag *, SchedBuilder *);
void sched_abort(SchedBuilder *); /* drops what was built (after an error) */
int sched_route_len(const Sched *, int route);
/* A new in-network operation at switch `node`; the messages added until
 * sched_fuse_end are its. */
void sched_fuse_begin(SchedBuilder *, int node, FuseKind, bool self);
void sched_fuse_end(SchedBuilder *);
/* The links in-network operation f loads, each once (what its messages'
 * routes cover, the shared part once, and the self copy's link), those
 * into its switch first; returns their count, written to links (room for
 * the messages' hops + 2). */
int fuse_links(const Sched *, int f, int *links);
/* The most links fuse_links can write for any operation of s. */
int fuse_links_max(const Sched *);

/* repeat.c: the repeated form (Sched.repeat). */
/* Its rules: chunks, rounds and owners as Sched.repeat says, no fuses,
 * phases or barriers, no two copies of one message key in a round. -1
 * after a located error. */
int sched_repeat_check(Diag *, const Sched *);
/* Segment 0 alone as an explicit schedule (chunk c as c / repeat, its
 * rounds only): what verify proves. */
Sched *sched_repeat_view(Arena *, const Sched *);
/* Where each base round's messages start: first[b] .. first[b + 1] for
 * the nround - repeat + 1 base rounds (xmalloc'd; the caller frees). */
int *sched_repeat_rounds(const Sched *);
/* Round r's messages of the repeated form, in the listed form's order
 * (by (src, dst, route, op, instance), as sched_end sorts a round): the
 * base messages' indices into out (room for the largest round: the most
 * messages of `repeat` consecutive base rounds); their segment is r minus
 * their round. Returns the count. */
int sched_repeat_round(const Sched *, const int *first, int r, int *out);
/* The most messages of one round of the repeated form. */
long sched_repeat_max_round(const Sched *, const int *first);
/* Every segment's messages listed (an explicit schedule, repeat 0), its
 * size checked first as an explicit schedule's (check_sched_size) and as
 * a listed packing's (MAX_PACK_MSGS messages, MAX_TRANSFERS chunk
 * transfers); s itself when it is not repeated; NULL after a located
 * error. */
const Sched *sched_listed(Diag *, Arena *, const Sched *);
/* The order of two messages of one round (sched_end's). */
int sched_msg_order(const Msg *, const Msg *);

/* symm.c: tree symmetrization. Trees must span exactly the ranks. */
/* Whether auto's schedule s may be o: a file's own `symmetric` schedule
 * (SP) of the same kind, topology, ranks, root and routing (lower.c; auto
 * in check and build by the model, in collc sim by the simulator). */
bool auto_may_take(const Sched *s, const Sched *o);
/* With segments S > 1 base tree b * S + j is trees[b]'s segment j: its
 * transfers j rounds later (symm.c); S <= 1 is one segment. */
Sched *symmetrize(Diag *, Arena *, const char *name, Loc, CollKind, const Topo *, Routes *,
                  Tree **trees, int ntree, int segments, const Group *, const int *rank_node,
                  int nrank);
/* symmetrize with the segments S (1, 2, 4, ...) of the least model time
 * for `size` bytes, searched up while the time falls and within
 * check_symmetric_segments' budget; Sched.choice says which and
 * size_chosen is set (sim, tune and sweep build it again per size). */
Sched *symmetrize_auto(Diag *, Arena *, const char *name, Loc, CollKind, const Topo *, Routes *,
                       Tree **trees, int ntree, const Group *, const int *rank_node, int nrank,
                       double size);
/* The base transfers symmetrize makes a segment, from the trees alone
 * (nnode: their topology's nodes), for the estimate before building. */
double symmetric_base_count(CollKind, Tree **trees, int ntree, int nnode);
/* Expands a symmetric schedule into explicit messages (small cases, tests). */
Sched *sched_expand(Diag *, Arena *, const Sched *);
/* What a symmetric schedule's proof by symmetry stands on, checked: every
 * group element keeps the ranks, and each chunk's owner is its tree's root
 * moved by its element. -1 after reporting. */
int sched_check_symmetric(Diag *, const Sched *);
/* Every element of g maps the schedule's ranks to ranks; else reports at loc. */
int group_keeps_ranks(Diag *, const Sched *, const Group *, Loc);

/* ---- layout.c: where chunks lie, and what each message waits for ---- */

/*
 * The buffer layout every backend uses: the vector is nblock blocks of
 * `per` chunks (allreduce, broadcast, reduce: one block; reduce_scatter,
 * allgather: block r is rank r's; alltoall: block s * nrank + d is what
 * rank s sends rank d), and chunk c lies at position piece[c] of block
 * block[c], ordered so that messages are runs where the schedule allows.
 */
typedef struct Layout {
	int nblock;
	int per;           /* chunks per block */
	int *block;        /* nchunk: the chunk's block */
	int *piece;        /* nchunk: its place in the block, 0..per-1 */
	int *pos;          /* nchunk: block * per + piece, its place in the vector */
	int short_block;   /* a block not holding `per` chunks (then no order), or -1 */
	int short_count;   /* ... how many it holds */
	long packed, own;  /* chunks in messages that are not one run, in this order and in the
	                      schedule's own; -1 when there were too many messages to count */
	/* The candidate order (same candidates) that splits the messages into
	 * the fewest runs: MSCCL's measure, a step per run. Same as piece/pos
	 * when there was nothing to count. */
	int *run_piece, *run_pos;
	long runs;         /* ... its runs over all messages, -1 as packed */
	int *last_send;    /* alltoall: rank * nchunk + chunk -> the last round the rank sends
	                      it, -1 never (an output slot in place holds input until then) */
} Layout;

/* The layout of a verified schedule (symmetric ones are not expanded). */
void layout_build(Arena *, const Sched *, Layout *);

/* A copy of a symmetric schedule's base transfer: group element e maps
 * base transfer i (of tree t) to ranks src -> dst, moving chunk t * order
 * + e. sched_copies lists them element by element, the image of each node
 * the base transfers use computed once per element, keeping only those
 * whose src or dst is in keep (NULL: every one); *out is malloc'd (free
 * it), the count is returned. The walk the layout (message sets) and
 * MSCCL's bound (steps per connection) share. */
typedef struct XferCopy {
	int round, src, dst, op, chunk;
} XferCopy;
long sched_copies(const Sched *, const bool *keep, XferCopy **out);

/* An explicit schedule's dependencies, per message i: read[read_off[i] ..
 * read_off[i + 1]) are the earlier messages that delivered a chunk it
 * carries to its sender (latest first per chunk, each once); write[...]
 * (when asked) the earlier ones that delivered a chunk it delivers to its
 * receiver, and those up to its round that read one there. */
typedef struct MsgDeps {
	int *read_off, *read;
	int *write_off, *write; /* NULL unless asked */
} MsgDeps;

void msg_deps(Arena *, const Sched *, bool writes, MsgDeps *);
/* The same for a symmetric schedule's base transfers, by base index: what
 * base transfer i reads (earlier ones of its tree delivering to its
 * sender). The copy of i by element g waits for the copies by g of these. */
void base_deps(Arena *, const Sched *, MsgDeps *);

/* ---- the classic algorithm library (alg.c and alg_*.c) ---- */

/* What a generator needs: the communicator and the algorithm's options. */
typedef struct AlgCtx {
	Diag *diag;  /* where this pass's diagnostics go (the run's, from the driver) */
	Arena *arena;
	const char *name;     /* the collective */
	Loc loc;              /* where errors about it point */
	CollKind kind;
	const Topo *topo;
	Routes *routes;
	const int *rank_node; /* communicator rank -> node */
	int nrank;
	Loc ranks_loc;        /* the `ranks` clause; line 0 without one */
	bool whole;           /* the communicator is every rank of the topology, in id order */
	/* options */
	const char *algorithm;
	int ports;            /* ring(ports N); 0 = the algorithm's default */
	bool halfway;         /* ring(halfway): two ports, whole blocks, half the ring each way */
	bool latency;         /* swing / trivance (latency) */
	int segments;         /* chain(segments S); packing: S (to_msccl_fit.c); 0 = the cost
	                       * model's for size */
	int chunks;           /* `chunks N`; 0 = auto (tto: the cost model's for size) */
	int root;             /* broadcast, reduce: communicator rank */
	int reconfigs;        /* bridge(reconfigs R), r_hd(reconfigs R); -1 = choose */
	bool mirrored;        /* bridge(..., mirrored): a copy on the reverse fibers */
	double size;          /* bytes the cost model assumes (default segment counts, bridge's R) */
	bool compact;         /* a symmetric form is welcome where the algorithm has one (the
	                         ring on a whole ring: collc sim streams it) */
	bool listed;          /* with compact: every message is held at once (collc sim
	                       * --sync deps), so packing lists its segments (no Sched.repeat) */
	/* pipelined_trees: nset sets of disjoint trees, set i the next set_size[i]
	 * of trees[]; NULL: the generator builds the SuperMesh root sets */
	Tree **trees;
	const int *set_size;
	int nset;
	const char *dim_alg[MAX_DIMS]; /* hierarchical(A, B, ...): per dimension */
	int ndim_alg;
	struct TeachTrace *trace; /* a user schedule's first fault is kept here (explain), or NULL */
	struct PackMemo *pack_memo; /* packings kept across the sizes of this collective, or NULL */
	bool pack_pow2;       /* packing: a block cut into a power of two of units, the copies'
	                       * shares within one of each other (MSCCL: to_msccl_fit.c) */
	const Group *pack_group; /* packing's orbits: the file's largest group on the topology
	                          * declared before the collective, or NULL */
} AlgCtx;

/* `packing`'s trees for one collective, kept while tune or collc sim build
 * its candidates at every size (the trees do not depend on the size); the
 * caller owns it (alg_packing.c). */
typedef struct PackMemo PackMemo;
PackMemo *pack_memo_new(void);
void pack_memo_free(PackMemo *);

/* A collective's context with no options chosen (reconfigs -1: choose;
 * `whole` from the ranks): lowering adds the file's options, `auto` and
 * tune's candidates in collc sim and tune take it as it is. */
AlgCtx alg_ctx_new(Diag *, Arena *, const char *name, Loc, CollKind, const Topo *, Routes *,
                   const int *rank_node, int nrank);
/* Builds the named algorithm's schedule; NULL after a located error that
 * says why it cannot run here. 1 in *missing when collc has no generator. */
Sched *alg_build(const AlgCtx *, bool *missing);
/* TTO's trees on a k x k mesh (alg_tto.c, algorithms.md 9.1) as parents
 * over every node: which 0 TL, 1 BR, 2 TR; -1 at the root and, in TR, at
 * (k-1, 0), which it does not reach. */
void tto_tree_parents(const Topo *, int which, int *parent);
/* Whether `auto` tries algorithm a for a collective of this kind on t:
 * it has a generator and the language accepts it there (alg_applies). */
bool alg_auto_candidate(AlgId, CollKind, const Topo *);
/* `algorithm auto`: every candidate that builds for c's collective and
 * verifies (errors muted), each with its own chunk count; one that builds
 * but fails verification is left out with a note at c->loc saying what
 * failed (a bug in its generator, not a refusal); out[i] named
 * names[i]. The count (at most NALG). collc check picks among them by the
 * cost model (lower.c), collc sim by simulating each (cmd_sim.c). */
int alg_auto(const AlgCtx *c, Sched **out, const char **names, int max);
/* alg_auto with the proof given (verify_quiet's form): a test's own, to
 * see the note on a candidate that fails. */
typedef int AutoCheck(Diag *, const Sched *, char *why, size_t len);
int alg_auto_checked(const AlgCtx *c, Sched **out, const char **names, int max, AutoCheck *);

/* ---- lower.c: an algorithm call's options, for `algorithm` and `use` ---- */

struct Call;
struct Bound;
/* How one parameter of an algorithm (algorithms.def's PARAMS) sets AlgCtx:
 * read NULL when lowering takes it elsewhere (trees, group). */
typedef struct AlgOption {
	const char *key; /* the parameter's label, or its words if positional */
	bool (*read)(AlgCtx *, const ParamSpec *, const struct Bound *);
} AlgOption;
const AlgOption *alg_option(const ParamSpec *); /* NULL: no entry (a test fails) */
/* The call bound to its algorithm's registry signature, each parameter
 * read into c by its AlgOption: a word only as the parameter the algorithm
 * declares. false after reporting a value that is not an integer. */
bool alg_call_options(Arena *, AlgCtx *c, const struct Call *call);

/* ---- usersched.c: a collective's `schedule { ... }` block ---- */

struct Item;
/* `schedule symmetric(group G, roots R1, ...)`: the body's sends are the
 * base transfers, chunk b being base tree b (rooted at root[b], a node). */
typedef struct UserSymmetry {
	const Group *group;
	int nroot;
	int *root;
	Loc loc;           /* the modifier */
} UserSymmetry;
/* Runs the block (an IT_SCHEDULE item that sema passed) for the
 * communicator and options of c into an explicit schedule, or with sym a
 * symmetric one (its base transfers must form a tree per root over the
 * ranks); NULL after a located error (a counterexample, on small cases, at
 * the send at fault). */
Sched *usersched_build(const AlgCtx *c, const struct Item *schedule, const UserSymmetry *sym);
/* ---- teach.c: a user schedule's transfers, checked one by one ---- */

typedef struct Transfer {
	int round, src, dst;   /* communicator ranks */
	XferOp op;
	int first, n;          /* chunks: the list's chunk[first .. first + n) */
	int lfirst, nlink;     /* its route: the list's link[lfirst .. lfirst + nlink) */
	Loc loc;               /* the send (or use) that made it */
	const char *vars;      /* "s = 1, r = 2": the loop variables it ran with, or "" */
} Transfer;

typedef struct TransferList {
	Transfer *x;
	int n, cap;
	int *chunk;
	int nchunk, capchunk;
	int *link;
	int nlink, caplink;
} TransferList;

/* A wrong user schedule kept to be shown up to its fault (collc explain):
 * the schedule as its sends built it (explicit, every round) and where the
 * teacher stopped. */
typedef struct TeachTrace {
	const Sched *s;          /* NULL until a fault is kept */
	int round;               /* the fault's round, from 0 */
	int src, dst, chunk;     /* the transfer at fault; src -1 when no transfer made it */
	int xround;              /* ... its round (an end fault's: before `round`) */
	int rank;                /* the (rank, chunk) cell found wrong, or -1 */
} TeachTrace;

/* By round, and in the order they were made within a round. */
void transfers_sort(TransferList *);
/* A contention_free schedule: no directed link carries two messages in a
 * round; else a located error at the second transfer and -1 (and the fault
 * in *trace unless it is NULL or holds one). Sorted list. */
int teach_contention(Diag *, const Sched *, const TransferList *, Arena *, TeachTrace *);
/* Two sends of one round merged into one message (same ends, operation and
 * route) on a route with parallel links: a warning, or under contention_free
 * an error (-1), at the later send with a note at the other. */
int teach_merged(Diag *, const Sched *, const TransferList *, Arena *, bool contention_free,
                 TeachTrace *);
/* Runs the (sorted) transfers on exact sets against the collective s
 * describes (at most 64 ranks); -1 after a located counterexample, kept in
 * *trace as teach_contention does. A chunk that ends wrong with no transfer
 * into it is reported at `whole`. */
int teach_transfers(Diag *, const Sched *, const TransferList *, Loc whole, Arena *, TeachTrace *);
/* For schedules of at most 64 ranks: the set of ranks whose contribution
 * (rank r, chunk c) starts with and must end with, one bit per rank (the
 * verifier's model, docs/ir.md section 6); *care false where the collective
 * does not say. The teacher and the explainer share it. */
void sched_small_expected(const Sched *, int r, int c, uint64_t *init, uint64_t *want,
                          bool *care); /* teach.c */

/* ---- explain.c: a schedule round by round, for people ---- */

/* The text form and the SVG timeline show every contribution by name: at
 * most EXPLAIN_MAX_RANKS ranks, EXPLAIN_MAX_CHUNKS chunks and
 * EXPLAIN_MAX_ROUNDS rounds. The page (--html) shows every cell up to
 * EXPLAIN_PAGE_RANKS ranks and EXPLAIN_PAGE_CHUNKS chunks, and aggregates
 * (link heat, holdings as a density) up to EXPLAIN_AGG_RANKS ranks and
 * EXPLAIN_AGG_CELLS (rank, chunk) cells; EXPLAIN_MAX_ROUNDS rounds both. The
 * compare page steps up to EXPLAIN_MAX_COMPARE schedules, each in full. */
enum {
	EXPLAIN_MAX_RANKS = 16, EXPLAIN_MAX_CHUNKS = 64, EXPLAIN_MAX_ROUNDS = 256,
	EXPLAIN_PAGE_RANKS = 64, EXPLAIN_PAGE_CHUNKS = 256, EXPLAIN_AGG_RANKS = 1024,
	EXPLAIN_AGG_CELLS = 1 << 22, EXPLAIN_MAX_COMPARE = 3,
};

/* 0 if an explicit or symmetric schedule is small enough for the text form
 * and the SVG (the limits above, chunks counted after expansion); else a
 * located error at the collective naming the limit, and -1. */
int explain_check_size(Diag *, const Sched *);
/* The same for the page: 1 in full detail, 0 aggregated, -1 refused after
 * a located error naming the limit. */
int explain_check_page(Diag *, const Sched *);
/* Whether the text form's limits hold, without reporting. */
bool explain_text_fits(const Sched *);

/* A schedule run round by round on contribution sets (ir/explain.c): what
 * the text form, the SVG and the page all show. An explicit schedule. */
typedef struct Replay {
	const Sched *s;
	int round;            /* the round last run; -1 at the start */
	int first, end;       /* its messages: s->msg[first .. end) */
	bool exact;           /* at most 64 ranks: set[] names the contributions */
	uint64_t *set;        /* exact: rank * nchunk + chunk -> the ranks whose data it holds */
	int *count;           /* the number of contributions each cell holds */
	int *want;            /* the number a finished cell holds; -1 where the collective
	                         does not say */
	uint64_t *want_set;   /* exact: the set a finished cell holds */
	long *load, *total;   /* chunks per link: this round, and every round so far */
	int *changed;         /* the cells this round wrote, each once, ascending */
	int nchanged;
	/* the round's payloads, read before any is written (npool: the most
	 * chunks one round sends) */
	uint64_t *pay_set;
	int *pay_count;
	unsigned char *mark;
	int npool;
} Replay;

void replay_start(Replay *, const Sched *);
/* Runs the next round; false when every round has run. */
bool replay_step(Replay *);
/* Whether cell (rank * nchunk + chunk) holds what the collective wants. */
bool replay_final(const Replay *, int cell);
void replay_free(Replay *);

/* A wrong schedule shown up to its fault: its rounds 0..round, the message
 * at fault (msg, or -1) and the cell found wrong (rank -1: none). */
typedef struct ExplainFault {
	int round, msg, rank, chunk;
	const char *text;     /* the counterexample as collc printed it */
} ExplainFault;
/* The fault a teacher's trace names, on its schedule. */
ExplainFault explain_fault_of(const TeachTrace *, const char *text);

/* Round by round: the messages, which chunks each rank holds with whose
 * contributions, and the busiest links. An explicit schedule; with a
 * fault, its rounds up to the fault's, the faulty message marked. */
void explain_text(const Sched *, FILE *);
void explain_text_fault(const Sched *, const ExplainFault *, FILE *);
/* A timeline: ranks down, rounds across, an arrow per message (dashed:
 * copy), coloured by chunk, tree or operation as the legend says, each
 * rank's holdings after every round; self-contained SVG 1.1. */
void explain_svg(const Sched *, FILE *);
void explain_svg_fault(const Sched *, const ExplainFault *, FILE *);
/* The interactive page (ir/explain_html.c): one self-contained HTML file.
 * x is the explicit schedule, sym its symmetric form or NULL, bytes the
 * size the metrics and link loads assume, full from explain_check_page. */
void explain_html(const Sched *x, const Sched *sym, const ExplainFault *, double bytes,
                  bool full, FILE *);
/* The compare page: n (2..EXPLAIN_MAX_COMPARE) schedules of one topology
 * stepped in lockstep, each in full detail (explain_check_page 1); x[i]
 * explicit, sym[i] its symmetric form or NULL; file is the source's path as
 * the page shows it (relative). */
void explain_html_compare(const Sched *const x[], const Sched *const sym[], int n,
                          double bytes, const char *file, FILE *);

/* ---- nccl_topo.c: NCCL's topology XML (NCCL_TOPO_DUMP_FILE) as a box ---- */

/* What NCCL's topo.cc builds from the file, as plain data: nodes, and
 * directed links with NCCL's bandwidths (GB/s, merged per pair as
 * ncclTopoConnectNodes adds them). Every NVSwitch target is NCCL's one NVS
 * node; nvswitch_targets counts the distinct bus ids the GPUs name. */
typedef enum NcclNodeKind { NCCL_GPU, NCCL_CPU, NCCL_PCI, NCCL_NIC, NCCL_NVS, NNCCLNODE } NcclNodeKind;
typedef enum NcclLinkKind { NCCL_NVL, NCCL_PCI_LINK, NCCL_SYS, NCCL_C2C, NCCL_LOC, NNCCLLINK } NcclLinkKind;
typedef struct NcclNode {
	NcclNodeKind kind;
	const char *label; /* "0000:18:00.0", "numa 0", "mlx5_0", "nvswitch" */
	Loc loc;           /* its element in the XML */
} NcclNode;
typedef struct NcclLink {
	int src, dst;      /* NcclBox nodes */
	NcclLinkKind kind;
	double gbs;        /* GB/s, this direction */
	int nvlinks;       /* NVL: the NVLinks it stands for */
	int rev;           /* the link dst -> src of the same kind, or -1 */
} NcclLink;
typedef struct NcclGpu {
	int node, rank, dev, sm;
	int nvs_links, gpu_links; /* NVLinks to NVSwitches, to other GPUs */
	double nvlink_gbs;        /* one NVLink, NCCL's table for sm */
	double pci_gbs;           /* its PCI link */
	Loc loc;
} NcclGpu;
typedef struct NcclNet {
	int nic;                  /* its NIC node */
	const char *name;
	int dev, port, gdr;
	double gbs;               /* speed (Mb/s) / 8000, as NCCL */
	Loc loc;
} NcclNet;
typedef struct NcclBox {
	NcclNode *node;
	int nnode;
	NcclLink *link;
	int nlink;
	NcclGpu *gpu;             /* by rank: gpu[r].rank == r */
	int ngpu;
	NcclNet *net;
	int nnet;
	int ncpu, npci, nnic;     /* CPU (NUMA) nodes, PCI switches, NICs */
	int nvs;                  /* the NVS node, or -1 */
	int nvswitch_targets;
} NcclBox;
extern const char *const nccl_node_kind_name[NNCCLNODE];
extern const char *const nccl_link_kind_name[NNCCLLINK];
/* Reads text (diagnostics located in it; the caller set diag_source).
 * 0, or -1 after errors; the box lives in the arena. */
int nccl_box_read(Diag *, Arena *, const char *text, size_t len, NcclBox *);
double nccl_nvlink_gbs(int sm);                      /* ncclTopoNVLinkBw */
double nccl_pci_gbs(const char *link_speed, int width); /* width x speed / 80 */
/* The box as a graph: GPUs are ranks 0..ngpu-1 by rank, every other node a
 * switch after them in the box's order; a link's bandwidth is NCCL's. */
Topo *nccl_box_topo(Arena *, const char *name, const NcclBox *, Net);
int nccl_box_topo_node(const NcclBox *, int box_node); /* its Topo node */
int *nccl_box_topo_ids(Arena *, const NcclBox *);     /* every node's, at once */

/* ---- verify.c and metrics.c ---- */

typedef struct Metrics {
	int rounds;
	long messages;
	double volume;      /* absolute volume, bytes, for the message size given */
	double psi, theta, omega;
	double model_time;  /* alpha * S + beta * Q (docs/ir.md) */
	bool by_symmetry;   /* proved on the base trees and the group */
} Metrics;

/* Proves the schedule implements its collective; reports what fails at the
 * collective's location. */
int verify(Diag *, const Sched *);
/* verify with nothing reported: -1 and what failed first in why (a located
 * message's text, without the location), for `auto`'s note on a candidate
 * that fails. */
int verify_quiet(Diag *, const Sched *, char *why, size_t len);
/* The phases of an optical schedule: valid configurations, every route on
 * the configuration of its round (optical.c; verify runs it). */
int verify_phases(Diag *, const Sched *);
int sched_nreconfig(const Sched *);
/* On a GPU cluster form (rails, xgmi_rails, leaf_spine_boxes): writes which
 * box and GPU each rank of s is, one line without a newline, '>' or two
 * dashes (an XML comment carries it), and returns true; false elsewhere. */
bool sched_gpu_map(const Sched *, FILE *);
void metrics(const Sched *, double bytes, Metrics *);

/* A symmetric schedule's base transfers by round (metrics.c): round r's are
 * base[idx[first[r] .. first[r + 1])], in base order. */
typedef struct BaseRounds {
	int *first, *idx;
} BaseRounds;
void base_rounds(const Sched *, BaseRounds *);
void base_rounds_free(BaseRounds *);
/* Round r's link loads of a symmetric schedule (not the rank form) by
 * symmetry, in chunks: orbit_load[o] (nlink_orbits, overwritten) is what
 * every link of link orbit o carries. Returns the round's chunk-hops. */
long sym_round_loads(const Sched *, const BaseRounds *, int round, long *orbit_load);
/* The same added to orbit_load as it is, each orbit it makes non-zero
 * listed in touched[] (*ntouched counts them): linear in the round's hops,
 * for callers that zero only those again. */
long sym_round_loads_sparse(const Sched *, const BaseRounds *, int round, long *orbit_load,
                            int *touched, int *ntouched);
/* Proves a symmetric schedule on its expansion, every copy run as an
 * explicit schedule's messages are, and checks that the expansion's link
 * loads and rounds are the ones symmetry gives (verify_full.c). The
 * expansion's size is estimated first, against MAX_TRANSFERS and
 * MAX_CELLS: a located error naming the limit and -1. Explicit schedules
 * go to verify(). */
int verify_full(Diag *, const Sched *);

/* The rank form's messages leaving rank 0, per round: rank v's are the same
 * with dst XOR v (symm.c). Round r's are key[first[r] .. first[r + 1]),
 * by (dst, op), each with the chunks it carries. The caller frees both.
 * Returns the most keys in a round. */
typedef struct RankKey {
	int dst, op, count;
} RankKey;
int rank_form_keys(const Sched *, RankKey **key, int **first);

/* ---- estimate.c: work estimated from a declaration's numbers, against
 * the limits of collc_limits.h; each check reports at loc and returns -1 ---- */

/* Directed links of a form built from its shape (topo_builders[]'s estimate). */
double topo_link_estimate(TopoKind, const TopoShape *);
int check_topology_links(Diag *, Loc, const char *desc, double nlink);
/* The fewest chunks a schedule of this kind has (`chunks N` if given). */
double sched_min_chunks(CollKind, int nrank, int chunks);
/* An explicit schedule's (rank, chunk) pairs and chunk transfers. */
int check_sched_size(Diag *, Loc, const char *name, CollKind, int nrank, double nchunk);
/* A symmetric schedule's expansion: its copies of base transfers (each a
 * message of the explicit form) against MAX_TRANSFERS, then its cells and
 * transfers as check_sched_size counts them. */
int check_expand_size(Diag *, Loc, const char *name, CollKind, int nrank, double nchunk, double copies);
/* A symmetric schedule's chunks: trees x group order. */
int check_symmetric_size(Diag *, Loc, const char *name, int ntree, int order);
/* The same in S segments: trees x S x group order chunks, and `base` base
 * transfers a segment (the compact form holds S times them) against
 * MAX_TRANSFERS. */
int check_symmetric_segments(Diag *, Loc, const char *name, int ntree, int segments, int order,
                             double base);
/* A group's generators times the topology's nodes and links, each
 * generator's images to hold and check, against MAX_GENERATOR_IMAGES. */
int check_group_generators(Diag *, Loc, const char *name, int ngen, int nnode, int nlink);
/* The hops of the routes the messages still to be routed (route < 0, ranks
 * src and dst) need, each distinct (source, destination) pair at least its
 * distance apart, plus the `interned` hops already held, against
 * MAX_ROUTE_HOPS: before any of them is built. -1 after reporting. */
int check_route_hops(Diag *, Loc, const char *name, const Topo *, const int *rank_node, const Msg *,
                     int nmsg, double interned);
/* That estimate alone (routes of the messages with route < 0) and the
 * distinct pairs it counted. */
double route_hops_estimate(const Topo *, const int *rank_node, const Msg *, int nmsg,
                           size_t *pairs);

/* ---- lower.c: the AST of a checked file to the IR ---- */

struct File;
struct Defines;
struct Decl;

typedef struct Prog {
	Arena arena;
	int ntopo;
	Topo **topo;       /* every topology, in file order */
	int nsched;
	Sched **sched;     /* one per collective built, in file order */
	int nskipped;
	const struct Decl **skipped; /* collectives whose algorithm has no generator yet */
	Routes **routes;   /* per topology and policy, owned here */
	int nroutes;
	double auto_size;  /* `algorithm auto` picks the fastest for this size (bytes) */
	bool compact;      /* AlgCtx.compact for every collective (collc sim) */
	bool listed;       /* AlgCtx.listed for every collective (--sync deps) */
	TeachTrace *trace; /* AlgCtx.trace for every collective (collc explain), or NULL */
} Prog;

/* boxes.c: the checks a parsed file passes before lowering, each after what it needs:
 * its parameters (defs' values, or NULL for the defaults), the boxes its
 * topology sources name (boxes_load), sema. Every command and the fuzz
 * target check a file through this one path. 0; 1 after reporting; 2 when
 * defs->v[*unknown] names no parameter (params_apply's usage case). */
int check_file(Diag *, struct File *, const struct Defines *, int *unknown);
/* Builds every topology, group, tree and schedule; -1 after reporting. */
int lower(Diag *, const struct File *, Prog *);
void prog_free(Prog *);

#endif
