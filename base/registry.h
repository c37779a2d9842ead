/*
 * registry.h: the concepts every layer names, each in one table: the
 * collective kinds, the topology forms, the network parameters and the
 * algorithms (algorithms.def). The language's checks, the IR, `auto`, the
 * CLI's help and suggestions, the tests and the docs' tables all read
 * these tables; nothing else lists them. Plain data: no AST, no IR.
 */
#ifndef COLLC_REGISTRY_H
#define COLLC_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collc_limits.h"

/* ---- collective kinds ---- */

typedef enum CollKind {
	CK_ALLREDUCE, CK_REDUCE_SCATTER, CK_ALLGATHER, CK_ALLTOALL, CK_BROADCAST, CK_REDUCE,
	NCOLLKIND,
} CollKind;

extern const char *const coll_kind_name[NCOLLKIND];
int coll_kind_find(const char *name); /* CollKind, or -1 */

#define KIND(k) (1u << (k)) /* a set of kinds is a mask of these bits */
#define KINDS_RSAG (KIND(CK_ALLREDUCE) | KIND(CK_REDUCE_SCATTER) | KIND(CK_ALLGATHER))
#define KINDS_ROOTED (KIND(CK_BROADCAST) | KIND(CK_REDUCE))

/* ---- quantities: what a number with a unit measures ---- */

typedef enum QtyKind {
	Q_COUNT,  /* a plain number */
	Q_SIZE,   /* bytes */
	Q_RATE,   /* bits per second */
	Q_TIME,   /* seconds */
	Q_ENERGY, /* joules */
	Q_POWER,  /* watts */
	Q_PACKETS, /* a buffer's packets (a size in bytes also serves) */
} QtyKind;

/* ---- signatures: the parameters of a form or an algorithm ---- */

typedef enum ArgKind {
	A_END,   /* no parameter: ends a signature's list (a zeroed entry) */
	A_TOPO,  /* a topology name */
	A_GROUP, /* a group name */
	A_TREES, /* tree or trees names */
	A_INT,   /* an integer in lo..hi, or one of `words` if it has them */
	A_NODE,  /* a node of the context topology */
	A_WORD,  /* one of the words in `words` */
	A_STRING, /* a string: a file's path, relative to the .coll file's folder */
	A_SOURCE, /* a topology source's call: nccl_topo("box.xml") (topo_sources) */
} ArgKind;

typedef struct ParamSpec {
	const char *label; /* NULL: positional */
	ArgKind kind;
	int min, max;      /* number of values; max 0 = no limit */
	int64_t lo, hi;    /* A_INT */
	const char *words; /* A_WORD: "bi|alter"; A_INT: the words it also takes ("auto") */
} ParamSpec;

/* leaf_spine_boxes' seven (boxes, gpus, nic_gbps, spines, nics, pcie_gbps, box) are the most */
enum { MAX_PARAMS = 7 };

/* A form of the language (a topology, group or tree form) or an algorithm. */
typedef struct FormSpec {
	const char *name;
	const char *usage;
	ParamSpec param[MAX_PARAMS];
	unsigned kinds;  /* algorithms: KIND bits it implements; tree forms: 1 a tree, 2 a set */
	unsigned topos;  /* algorithms, tree forms: TOPO bits it runs on; 0 = any */
} FormSpec;

/* ---- topology forms ---- */

typedef enum TopoKind {
	TK_TORUS, TK_MESH, TK_SUPERMESH, TK_HYPERX, TK_SPINE_LEAF, TK_RING, TK_FULL,
	TK_OPTICAL_RING, TK_RAILS, TK_XGMI_RAILS, TK_LEAF_SPINE_BOXES, TK_TORUS_BOXES, TK_GRAPH,
	NTOPOKIND,
} TopoKind;

#define TOPO(k) (1u << (k)) /* a set of topology forms is a mask of these bits */
#define ANY_TOPO 0u

/* What a topology form's parameter says about its node space: the node
 * space of every form but a block form follows from these alone. */
typedef enum TopoRole {
	TR_NONE,
	TR_DIMS,         /* each value the size of a coordinate of the ranks */
	TR_DIM_SWITCHES, /* one coordinate's size, and as many switches after the ranks */
	TR_SWITCHES,     /* that many switches after the ranks */
	TR_VARIANT,      /* Topo.variant: a word's index in its words, or the integer */
	TR_BOX_DIMS,     /* the sizes of the boxes' torus, a coordinate each before the GPUs' (the
	                    next parameter), a box switch per box; its value (Topo's `arg`) is
	                    the number of boxes; the GPUs split evenly over the 2k directions */
	TR_PAIRS,        /* per pair of a box's GPUs (the last coordinate), by rows: 0-1, 0-2,
	                    ..., 1-2, ...: the number of links joining them (none given: one) */
	TR_NICS,         /* NICs a box, K, each shared by G/K GPUs (Topo.nics): given with
	                    TR_NIC_LINK, the NICs are nodes (after every other node) and the
	                    rails one per NIC index; absent, its value is G (a NIC per GPU,
	                    each its GPU's link) */
	TR_NIC_LINK,     /* with TR_NICS: the Gbit/s of each GPU's link to its NIC (PCIe) */
	TR_BOX,          /* a box read from a file (A_SOURCE: NCCL's topology XML): it gives the
	                    GPUs, the NICs shared or not with their GPUs' PCIe links (TR_NICS,
	                    TR_NIC_LINK), the NIC speed unless the form says it (TR_VARIANT), and
	                    the GPUs' NVSwitch bandwidth (docs/gpu-clusters.md) */
} TopoRole;

/* A class of a form's nodes by name, as the language writes them:
 * `gpu(b, i)`, `rail(g)`. A form's classes take consecutive ids in the
 * order listed, each row-major over its indices, and index k ranges over
 * 0..v-1 for v the value of the form's parameter dim[k]. A class marked
 * `link` has a name but no node: the form models that part as a link (a
 * NIC is its GPU's link to the switch it is cabled to), so naming it where
 * a node is expected is an error that says so. */
enum { MAX_NODE_CLASSES = 5 };
typedef struct NodeClass {
	const char *word;  /* NULL: no more classes */
	signed char dim[2]; /* parameter indices; -1: one index only */
	const char *what;  /* for messages and docs: "GPU", "box switch (NVSwitch)" */
	bool link;         /* a name only: the part is the link to `what` */
	signed char node_when; /* a link class that is nodes when parameter node_when - 1
	                          is given (nonzero); 0: never */
} NodeClass;

/* A topology form: everything the language and the IR text say of it
 * (ir/topo.c's topo_builders[] adds how to build it). */
typedef struct TopoForm {
	FormSpec form;                  /* the word, the usage, the parameters */
	unsigned char role[MAX_PARAMS]; /* TopoRole per parameter */
	bool translations;              /* has a translation group (translations(T)) */
	bool block;                     /* no arguments: nodes, switches and links in a block */
	bool grid;                      /* links join neighbours on the ranks' grid (+-1 along a
	                                   dimension): router ports, link plots */
	bool hosts_last;                /* the last dimension is the ranks of one box or leaf:
	                                   hierarchical works inside it first */
	int variant_per_rank;           /* a TR_VARIANT integer: when absent this many per
	                                   rank, and at most that many */
	int switches_per_dim;           /* switches per unit of a TR_DIM_SWITCHES coordinate
	                                   (0: one); leaf_spine_boxes: a box's switch and leaf */
	NodeClass node_class[MAX_NODE_CLASSES]; /* the nodes' names, in id order; none:
	                                   nodes are named by coordinates and ids only */
} TopoForm;

extern const TopoForm topo_forms[NTOPOKIND]; /* indexed by TopoKind */
/* Node names. `arg` holds the value of each of the form's parameters. */
int node_class_find(TopoKind, const char *word); /* its index in node_class[], or -1 */
int node_class_nidx(const NodeClass *);          /* its number of indices, 1 or 2 */
/* Whether class c names nodes (not a link) with these arguments. */
bool node_class_is_node(TopoKind, int c, const int64_t *arg);
/* The nodes every class of the form names together (ranks and switches). */
int64_t node_class_total(TopoKind, const int64_t *arg);
/* The number of indices a word takes in any form that names nodes by it, or
 * 0 for a word that names no node class. */
int node_word_nidx(const char *word);
/* The id of class c's node at idx (each index checked by the caller), or
 * -1 for a `link` class. */
int64_t node_class_id(TopoKind, int c, const int64_t *arg, const int64_t *idx);
/* Node id's name, "gpu(0, 3)" or "rail(2)", into buf; false (buf untouched)
 * when the form names no nodes or id is past its named ones. */
bool node_name(TopoKind, const int64_t *arg, int64_t id, char *buf, size_t len);
int topo_form_find(const char *name);        /* TopoKind, or -1 */
/* "a torus", "a mesh or supermesh", "a torus, mesh or ring": the forms of a
 * TOPO mask, for messages. */
void topo_forms_phrase(unsigned topos, char *buf, size_t len);
/* "torus, hyperx, ... and torus_boxes": every form whose entry has
 * translations, in the table's order, for the messages that list them. */
void topo_forms_with_translations(char *buf, size_t len);

/* ---- topology sources: a topology read from a file another tool wrote ---- */

/* `topology B = nccl_topo("box.xml");`: the file read (ir/boxes.c, before
 * sema) by the reader of `collc nccl-topo`, the box a graph (TK_GRAPH) with
 * its GPUs as ranks 0..n-1 by their rank= (docs/nccl-topo.md). */
typedef enum TopoSource { TS_NCCL_TOPO, NTOPOSOURCE } TopoSource;
extern const FormSpec topo_sources[NTOPOSOURCE];
int topo_source_find(const char *name); /* TopoSource, or -1 */

/* ---- network parameters (SI units: bits/s, seconds, bytes, joules, watts) ---- */

typedef struct Net {
	double bandwidth;      /* per direction, per link */
	double link_latency;   /* wire delay per hop */
	double router_latency; /* per-hop switching delay */
	double step_overhead;  /* alpha: fixed cost per round */
	double mtu;            /* bytes per packet (simulator) */
	double energy_per_bit; /* per bit per hop */
	double reconfig_delay; /* optical circuit switch */
	/* the rest of the energy model (docs/sim.md 4); all 0 by default */
	double router_energy_per_bit; /* per bit per router a message passes through */
	double port_static_power;     /* watts per router port (docs/sim.md 4), over the run time */
	double link_static_power;     /* watts per directed link, over the run time */
	/* packet mode's switching (docs/sim.md 2.1): cut-through unless set */
	bool store_and_forward;
	double buffer_packets, buffer_bytes; /* a cut-through input buffer; 0: unset */
	/* in-network reduction (docs/gpu-clusters.md): the switches that reduce
	 * what enters them and multicast the result, REDUCE_NVLS | REDUCE_SHARP
	 * bits (switch_reduction = none | nvls | sharp | nvls_sharp) */
	unsigned reduction;
} Net;

/* switch_reduction's bits: a box's NVSwitch (NVLS; every switch of a graph),
 * a network switch (SHARP: rails, leaves, spines; every switch of a graph). */
enum { REDUCE_NVLS = 1, REDUCE_SHARP = 2 };
extern const char *const switch_reduction_words[4]; /* indexed by the bits */
int switch_reduction_find(const char *word);         /* the bits, or -1 */

/* How a parameter's value lands in Net. */
typedef enum NetValue {
	NV_NUMBER,    /* the quantity, in its kind's base unit, at `offset` */
	NV_SWITCHING, /* cut_through | store_and_forward: store_and_forward */
	NV_REDUCTION, /* none | nvls | sharp | nvls_sharp: reduction */
	NV_BUFFER,    /* packets (buffer_packets) or a size (buffer_bytes) */
} NetValue;

typedef struct NetParam {
	const char *name;  /* as written in a `network { }` block */
	NetValue value;
	QtyKind kind;
	bool positive;     /* > 0, else >= 0 */
	bool per_link;     /* may be set on one link of a graph */
	bool swept;        /* an axis of collc sweep (a column of its CSV, in this order) */
	size_t offset;     /* of its double in Net */
} NetParam;

extern const NetParam net_params[];
extern const int nnet_params;
const NetParam *net_param_find(const char *name); /* NULL if none */
double *net_field(Net *, const NetParam *);

/* ---- algorithms (algorithms.def) ---- */

typedef enum AlgId {
#define ALG(name, kinds, topos, usage, params, generator) ALG_##name,
#include "algorithms.def"
#undef ALG
	NALG
} AlgId;

extern const FormSpec alg_forms[NALG]; /* indexed by AlgId */
int alg_find(const char *name);       /* AlgId, or -1 */
bool alg_implements(AlgId, CollKind);
bool alg_runs_on(AlgId, TopoKind);
/* The language's rule, the one `auto` follows too: the algorithm
 * implements the kind and runs on the topology form. */
bool alg_applies(AlgId, CollKind, TopoKind);

#endif
