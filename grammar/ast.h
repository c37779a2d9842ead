/*
 * ast.h: the front end's one header. The abstract syntax tree of a .coll
 * file, the builders the parser's actions call, and the passes that work on
 * the tree alone: parse_text (coll.l, coll.y, ast.c), sema (sema.c, the
 * checks that need no topology built) and fmt (fmt.c, canonical printing).
 *
 * The tree is deliberately uniform: every declaration has an optional
 * `= form(args)` call and an optional block of items, and every block holds
 * items of any kind in source order. The grammar stays small and
 * conflict-free, the formatter keeps the user's order, and sema says which
 * items and forms belong where with messages a person can act on.
 * Every node carries the location of its first token.
 */
#ifndef COLLC_AST_H
#define COLLC_AST_H

#include <stdbool.h>

#include "base.h"
#include "registry.h"


/* ---- quantities ---- */

typedef struct UnitInfo {
	const char *name;
	QtyKind kind;
	double mul, div; /* to the base unit of its kind: * mul / div */
} UnitInfo;

extern const UnitInfo unit_table[];
extern const int unit_count;
int unit_find(const char *name, size_t len); /* index, or -1 */
const char *qty_kind_name(QtyKind);

/* ---- expressions ---- */

typedef enum ExprKind {
	EX_INT,   /* 42, 4 KiB: ival and an optional unit */
	EX_REAL,  /* 1.75 pJ: rval, text as written, optional unit */
	EX_NAME,  /* x, B, bandwidth */
	EX_TUPLE, /* (a, b, ...); a 1-tuple also groups in arithmetic */
	EX_RANGE, /* a..b, inclusive */
	EX_NEG,   /* -a (lhs) */
	EX_ADD,
	EX_SUB,
	EX_MUL,
	/* schedule bodies only (section 13 of docs/language.md) */
	EX_DIV,   /* a / b, floor division */
	EX_MOD,   /* a mod b, in 0..b-1 */
	EX_EQ, EX_NE, EX_LT, EX_LE, EX_GT, EX_GE, /* comparisons: 1 or 0 */
	EX_AND, EX_OR, /* logic on 0 / non-0 */
	EX_NOT,   /* not a (lhs) */
	EX_CALL,  /* helper(a, b): text the name, elem the arguments */
	EX_STRING, /* "path.xml": text, its escapes read (no NUL, at most MAX_STRING bytes) */
} ExprKind;

typedef struct Expr Expr;

typedef struct ExprList {
	Expr **v;
	int n, cap;
} ExprList;

struct Expr {
	ExprKind kind;
	Loc loc;
	int64_t ival;     /* EX_INT */
	double rval;      /* EX_REAL */
	const char *text; /* EX_REAL: digits as written; EX_NAME: the name; EX_STRING: its bytes */
	int unit;         /* index into unit_table, -1 for none */
	Expr *lhs, *rhs;  /* EX_RANGE, binary operators; EX_NEG uses lhs */
	Expr **elem;      /* EX_TUPLE */
	int nelem;
	int depth;        /* nesting depth, bounded by the parser */
	const char *param; /* EX_INT that params.c put for a parameter's name: the name (fmt) */
};

/* A number literal's value in its kind's base unit. */
double expr_number(const Expr *);
QtyKind expr_qty(const Expr *);
/* Constant integer arithmetic, overflow-checked; reports when `report`. */
bool ast_eval_int(Diag *, const Expr *, int64_t *, bool report);

/* A topology's node space: enough to resolve node references without building it. */
typedef struct NodeSpace {
	TopoKind kind;
	const char *form;      /* topo_forms[kind]'s word */
	int ndim;              /* coordinates of a rank; 0: ids only */
	int64_t size[MAX_DIMS];
	int64_t nodes;         /* ranks and switches */
	int64_t ranks;         /* ids 0..ranks-1 unless `switches` says otherwise */
	unsigned char *is_switch; /* graph with switches: per node, else NULL */
	bool translations;     /* has a translation group (the form's entry says) */
	bool ok;               /* the shape is known (no error in the form) */
	int64_t arg[MAX_PARAMS]; /* the first value of each integer parameter */
	int64_t switches;      /* after the ranks (a form's TR_SWITCHES parameters) */
	int64_t variant;       /* Topo.variant (the TR_VARIANT parameter) */
	int *pairs;            /* a TR_PAIRS parameter's links per pair, or NULL: one each */
	int nics, nic_link_gbps; /* TR_NICS and TR_NIC_LINK given: shared NICs as nodes; else 0 */
} NodeSpace;

/* ---- calls: forms such as torus(8, 8), bfs(T, root (0, 0)), ring ---- */

typedef struct Arg {
	Loc loc;
	const char *label; /* "root" in `root (0, 0)`; NULL for a positional value */
	ExprList val;      /* a label takes every value up to the next label */
} Arg;

struct NcclBox; /* ir.h's: what a topology source read */

typedef struct Call {
	Loc loc;
	const char *name;
	bool parens; /* `ring()` as opposed to `ring` */
	Arg *arg;
	int narg, caparg;
	/* A topology source (registry.h's topo_sources: nccl_topo("box.xml")),
	 * itself or as a cluster form's `box`, read by ir/boxes.c before sema:
	 * the box (NULL: not read), its GPUs (ranks 0..gpus-1) and nodes, for
	 * sema's node space; box_failed: the reading reported its error. As a
	 * cluster's box also: its NICs, each NIC's Gbit/s, the Gbit/s of a GPU's
	 * path to its NIC (the PCIe tree's narrowest link on it) and the GB/s
	 * the form's link_bandwidth stands for: a GPU's to the NVSwitch, or on
	 * xgmi_rails one NVLink's, each pair's count in box_pairs (pair 0-1,
	 * 0-2, ..., as `links`) (docs/gpu-clusters.md). */
	const struct NcclBox *box;
	int box_gpus, box_nodes;
	bool box_failed;
	int box_nics, box_nic_gbps, box_pcie_gbps;
	double box_link_gbs;
	int *box_pairs;
} Call;

/* ---- binding a call to a signature (bind.c), shared by sema and lowering ---- */

typedef struct Bound { /* the values bound to one ParamSpec */
	Expr **v;
	int n;
	Loc loc;
} Bound;

/* The call's arguments onto the form's parameters: a labelled one to its
 * label, a positional one to the current positional parameter up to its
 * max. 1 when all bind, 0 after errors (*bad_label: a label was unknown),
 * -1 after too many arguments. Reports only when `report`; values are not
 * checked here (sema does). */
int ast_bind(Diag *, Arena *, const Call *, const FormSpec *, Bound *out, bool report,
             bool *bad_label);
/* ast_bind reporting, then each parameter's count and each value checked
 * against its ParamSpec (kind, range, words; nodes inside ctx when given).
 * What sema does to every call of a form or an algorithm, and to `use`. */
bool ast_bind_check(Diag *, Arena *, const Call *, const FormSpec *, const NodeSpace *ctx, Bound *out);
/* A topology form's node space from its bound (checked) arguments, by the
 * roles of its registry entry; reports sizes over MAX_NODES and a
 * TR_VARIANT over its per-rank most. Not for block forms. */
void ast_topo_space(Diag *, Arena *, TopoKind, const Bound *, NodeSpace *);
/* The index of word in "a|b|c", or -1. */
int ast_word_index(const char *word, const char *words);

/* ---- blocks and their items ---- */

typedef enum ItemKind {
	IT_PARAM,     /* name = value;          network parameters */
	IT_NETWORK,   /* network { ... }        overrides inside a topology */
	IT_NODES,     /* nodes N;               graph */
	IT_SWITCHES,  /* switches a, b..c;      graph: nodes that are not ranks */
	IT_LINK,      /* link a -> b; link a <-> b { params }   graph */
	IT_TRANSLATE, /* translate; translate (1, 0);           group */
	IT_MAP,       /* map (x, y) -> (y, x); map 0 -> 1, 1 -> 0;   group */
	IT_INCLUDE,   /* include G;             group: G's generators */
	IT_EDGE,      /* child -> parent;       explicit tree */
	IT_ALGORITHM, /* algorithm ring(ports 2); algorithm auto;   collective */
	IT_CHUNKS,    /* chunks 64; chunks auto; */
	IT_ROUTING,   /* routing dor; */
	IT_RANKS,     /* ranks all; ranks 0..15, 32; */
	IT_ROOT,      /* root (0, 0); */
	IT_SCHEDULE,  /* schedule [modifiers] { statements }   collective: a user schedule */
} ItemKind;

/* ---- user schedules: statements of a `schedule { ... }` block ---- */

typedef enum StmtKind {
	ST_LET,      /* let x = e; */
	ST_FOR,      /* for x in lo..hi { ... } */
	ST_IF,       /* if c { ... } [else { ... }] */
	ST_ROUND,    /* round { ... }: the next round */
	ST_SEND,     /* send CHUNKS from A to B reduce|copy [over link [K]]; */
	ST_USE,      /* use ALGORITHM for KIND [ranks LIST]; a library schedule */
	ST_TOGETHER, /* together { ... }: each statement starts at the same round */
} StmtKind;

typedef struct Stmt Stmt;

typedef struct StmtList {
	Stmt **v;
	int n, cap;
	Loc open, end;      /* the braces; open.line 0 for the `if` of an `else if` */
} StmtList;

struct Stmt {
	StmtKind kind;
	Loc loc;
	int end_line;
	const char *name;   /* ST_LET, ST_FOR: the variable; ST_SEND: reduce or copy;
	                       ST_USE: the collective kind */
	Loc name_loc;
	Expr *value;        /* ST_LET: value; ST_FOR: the range; ST_IF: condition;
	                       ST_SEND: the chunks (an index or a range) */
	Expr *from, *to;    /* ST_SEND: ranks */
	bool over;          /* ST_SEND: `over link` */
	Expr *link;         /* ST_SEND: `over link K`, or NULL */
	Call *call;         /* ST_USE: the algorithm */
	ExprList list;      /* ST_USE: ranks of a sub-communicator (empty: all) */
	StmtList *body;     /* ST_FOR, ST_IF, ST_ROUND, ST_TOGETHER */
	StmtList *orelse;   /* ST_IF: else, or NULL */
};

typedef struct Schedule {
	Call **mod;         /* symmetric(group G), contention_free */
	int nmod, capmod;
	StmtList *body;
} Schedule;

typedef struct Item Item;

typedef struct Block {
	Loc loc, end; /* the braces */
	Item *item;
	int nitem, capitem;
} Block;

struct Item {
	ItemKind kind;
	Loc loc;
	int end_line;
	const char *name;   /* IT_PARAM: field; IT_ROUTING: policy; IT_INCLUDE: group */
	Loc name_loc;
	Expr *value;        /* IT_PARAM, IT_NODES, IT_CHUNKS (NULL = auto), IT_ROOT,
	                       IT_TRANSLATE (NULL = every translation) */
	ExprList list;      /* IT_SWITCHES, IT_RANKS; IT_MAP: from, to, from, to ... */
	bool flag;          /* IT_LINK: both ways; IT_RANKS: all; IT_ALGORITHM: auto */
	Expr *from, *to;    /* IT_LINK, IT_EDGE (child, parent) */
	Call *call;         /* IT_ALGORITHM (NULL for auto) */
	Block *body;        /* IT_NETWORK, IT_LINK overrides (NULL if none) */
	Schedule *sched;    /* IT_SCHEDULE */
};

/* ---- declarations ---- */

typedef enum DeclKind {
	DC_NETWORK,    /* network { params }                                 */
	DC_TOPOLOGY,   /* topology T = form [{ items }]                      */
	DC_GROUP,      /* group G on T { items }   |  group G = form;       */
	DC_TREE,       /* tree B = form;  |  tree E on T root R { edges }    */
	DC_TREES,      /* trees D = form;                                    */
	DC_COLLECTIVE, /* collective KIND NAME on T { items }                */
	DC_PARAM,      /* param N = expr;   (params.c substitutes its value)  */
} DeclKind;

typedef struct Decl {
	DeclKind kind;
	Loc loc;
	int end_line;
	const char *name;  /* NULL for network */
	Loc name_loc;
	const char *ckind; /* DC_COLLECTIVE: allreduce, ... */
	Loc ckind_loc;
	const char *on;    /* `on T`, or NULL */
	Loc on_loc;
	Expr *root;        /* explicit tree */
	Expr *value;       /* DC_PARAM: its default */
	int64_t pval;      /* DC_PARAM, set by params.c: its value ... */
	int pdef;          /* ... the -D that gave it (Defines index), or -1 ... */
	bool pused;        /* ... and whether a name below took it */
	Call *form;        /* `= form`, or NULL */
	Block *body;       /* or NULL */
	/* set by sema on a clean file: */
	NodeSpace *space;  /* DC_TOPOLOGY: its nodes */
	const struct Decl *topo; /* groups, trees, collectives: their topology */
} Decl;

typedef struct Comment {
	Loc loc;
	int end_line;
	const char *text; /* with its // or slash-star markers */
} Comment;

typedef struct File {
	Arena *arena;     /* owns the tree */
	const char *path;
	Decl *decl;
	int ndecl, capdecl;
	Comment *comment; /* in source order */
	int ncomment, capcomment;
	bool params_done; /* params_apply has run */
} File;

/* ---- params.c: parameters ---- */

/* One -D NAME=VALUE of the command line. */
typedef struct Define {
	char name[64];
	int64_t value;
	const char *arg; /* as given, for notes */
} Define;

typedef struct Defines {
	Define v[MAX_PARAMS_FILE];
	int n;
	const char *cmd; /* the command they were given to, for usage errors */
} Defines;

/* arg ("n=8") into defs: 0, or -1 with what is wrong in err (a usage error). */
int defines_add(Defines *, const char *arg, char *err, size_t errlen);
/* Evaluates f's parameters (defs' values over their defaults; defs may be
 * NULL) and replaces every use of one by its value. 0; 1 after located
 * errors; 2 when defs->v[*unknown] names no parameter of f (nothing said:
 * a usage error for the caller). */
int params_apply(Diag *, File *, const Defines *, int *unknown);
/* After an error, when defs gives a value: a note at each parameter a name
 * took, with its value and where it came from ("with n = 7 (-D n=7)"). */
void params_note(Diag *, const File *, const Defines *);
/* Every EX_NAME `name` in e becomes v (Expr.param keeps the name): `p` in
 * a collective's `chunks`. */
void ast_subst_name(Expr *, const char *name, int64_t v);

/* ---- coll.y's side: the parser's context and the builders (ast.c) its actions call ---- */


typedef struct Parse {
	Diag *diag;  /* where this pass's diagnostics go (the run's, from the driver) */
	Arena *arena;
	File *file;
	const char *src; /* the text being parsed */
	size_t len;
	size_t off;      /* scanner: byte offset of the end of the last match */
	size_t tok_off, tok_len; /* the last token returned, for syntax errors */
	Loc tok_loc;
	bool tok_ident;
	size_t prev_off, prev_len; /* the token before it: a misspelt keyword shows there */
	Loc prev_loc;
	bool prev_ident;
	Loc comment_loc; /* scanner: where the open block comment began */
	size_t comment_off;
	int nesting;     /* open brackets and braces */
	Loc open[MAX_NESTING];       /* where each is */
	size_t open_off[MAX_NESTING];
	bool stop;       /* an error ended the parse: no "unexpected end" after it */
	/* Blocks being read grow their items in malloc'd memory (realloc leaves
	 * no copies behind, as doubling in the arena would) until their '}'
	 * hands it to the arena; those an error left open are freed at the end. */
	Block **growing;
	int ngrowing, capgrowing;
	Item *spare;     /* an item already copied into its block, for the next one */
} Parse;

Expr *ast_int(Parse *, Loc, int64_t);
Expr *ast_real(Parse *, Loc, const char *text, double);
Expr *ast_with_unit(Parse *, Expr *num, const char *unit, Loc);
Expr *ast_name(Parse *, Loc, const char *);
Expr *ast_string(Parse *, Loc, const char *);
Expr *ast_unary(Parse *, Loc, ExprKind, Expr *);
Expr *ast_binary(Parse *, Loc, ExprKind, Expr *, Expr *);
ExprList *ast_list(Parse *, ExprList *, Expr *); /* NULL list: a new one */
Expr *ast_tuple(Parse *, Loc, ExprList *);
Call *ast_call(Parse *, Loc, const char *name, bool parens);
Call *ast_call_arg(Parse *, Call *, Loc, const char *label, Expr *);
Block *ast_block(Parse *, Loc);
Block *ast_block_add(Parse *, Block *, Item *);
Block *ast_block_close(Parse *, Block *); /* at its '}': the items into the arena */
void ast_parse_end(Parse *);             /* frees what blocks left open hold */
Item *ast_item(Parse *, ItemKind, Loc);
Decl *ast_decl(Parse *, DeclKind, Loc, int end_line);
/* schedule.c: the builders of schedule bodies */
Expr *ast_call_expr(Parse *, Loc, const char *name, ExprList *args); /* args may be NULL */
Stmt *ast_stmt(Parse *, StmtKind, Loc);
StmtList *ast_stmts(Parse *, StmtList *, Stmt *); /* NULL list: a new one */
Schedule *ast_schedule_mod(Parse *, Schedule *, Call *); /* NULL: a new one */
void ast_comment(Parse *, Loc, int end_line, const char *text, size_t len);

/*
 * Parses text (len bytes; it may hold NUL bytes) into a File allocated in
 * `arena`. Reports syntax errors through diag; returns NULL only when no
 * tree could be built at all. Callers stop on nerrors() > 0.
 */
File *parse_text(Diag *, Arena *, const char *path, const char *text, size_t len);

/* ---- sema.c: checks that need no topology built ---- */

/* Reports every error it finds; returns the number of errors. Annotates
 * each Decl with its node space or topology (see Decl). */
int sema(Diag *, File *);

/* schedule.c: the front-end checks of a collective's `schedule` block:
 * names bound, helpers known with their arity, reduce or copy, rounds that
 * do not nest, sends inside rounds, modifiers, `use` of library algorithms.
 * space: the collective's topology's nodes (NULL if it has an error), for
 * the roots of `symmetric(group G, roots ...)`; group_ok(ctx, name) checks
 * (and reports) the group's name against the declarations above. */
void sema_schedule(Diag *, const Item *, const NodeSpace *space,
                   bool (*group_ok)(void *ctx, const Expr *name), void *ctx);
/* The names every schedule body sees (p, nchunks, dims, root). */
extern const char *const sched_builtin_names[];
extern const int sched_nbuiltin_names;
/* The helpers a schedule body may call (name, argument count). */
typedef struct Helper {
	const char *name;
	int nargs;      /* -1: one or more */
	const char *usage;
} Helper;
extern const Helper sched_helpers[];
extern const int sched_nhelpers;

/* ---- node references (ast.c), shared by sema and the IR's lowering ---- */

/* A coordinate tuple or an id; reports and returns -1 when it is outside
 * the space (or a switch, when rank_only). */
int64_t ast_resolve_node(Diag *, const NodeSpace *, const Expr *, bool rank_only);
/* A `ranks` list in order (ranges count up or down); reports switches and
 * repeats. member (nodes bytes, zeroed) marks the ranks. -1 on an error. */
int64_t ast_expand_ranks(Diag *, const NodeSpace *, const ExprList *, int64_t *out,
                         unsigned char *member);
/* "torus(8, 8)", "graph of 12 nodes" */
void ast_space_name(char *buf, size_t len, const NodeSpace *);

/* ---- fmt.c: canonical printing ---- */

void fmt_file(const File *, FILE *);
void fmt_call(const Call *, FILE *);        /* a form as written; NULL prints auto */
bool ast_equal(const File *, const File *); /* ignores locations and comments */

#endif
