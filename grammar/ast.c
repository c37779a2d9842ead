/*
 * ast.c: the builders the parser's actions call, and the unit table.
 * Builders only allocate and link; the one check made here is the purely
 * local one that a word after a number is a unit.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ast.h"

const UnitInfo unit_table[] = {
	/* value in the base unit = number * mul / div: dividing by an exact power
	 * of ten keeps 100 ns the double nearest 1e-7 */
	{"B", Q_SIZE, 1, 1},
	{"KB", Q_SIZE, 1e3, 1},
	{"MB", Q_SIZE, 1e6, 1},
	{"GB", Q_SIZE, 1e9, 1},
	{"TB", Q_SIZE, 1e12, 1},
	{"KiB", Q_SIZE, 1024.0, 1},
	{"MiB", Q_SIZE, 1024.0 * 1024, 1},
	{"GiB", Q_SIZE, 1024.0 * 1024 * 1024, 1},
	{"TiB", Q_SIZE, 1024.0 * 1024 * 1024 * 1024, 1},
	{"bps", Q_RATE, 1, 1},
	{"Kbps", Q_RATE, 1e3, 1},
	{"Mbps", Q_RATE, 1e6, 1},
	{"Gbps", Q_RATE, 1e9, 1},
	{"Tbps", Q_RATE, 1e12, 1},
	{"Bps", Q_RATE, 8, 1},
	{"KBps", Q_RATE, 8e3, 1},
	{"MBps", Q_RATE, 8e6, 1},
	{"GBps", Q_RATE, 8e9, 1},
	{"TBps", Q_RATE, 8e12, 1},
	{"KiBps", Q_RATE, 8.0 * 1024, 1},
	{"MiBps", Q_RATE, 8.0 * 1024 * 1024, 1},
	{"GiBps", Q_RATE, 8.0 * 1024 * 1024 * 1024, 1},
	{"TiBps", Q_RATE, 8.0 * 1024 * 1024 * 1024 * 1024, 1},
	{"ps", Q_TIME, 1, 1e12},
	{"ns", Q_TIME, 1, 1e9},
	{"us", Q_TIME, 1, 1e6},
	{"ms", Q_TIME, 1, 1e3},
	{"s", Q_TIME, 1, 1},
	{"fJ", Q_ENERGY, 1, 1e15},
	{"pJ", Q_ENERGY, 1, 1e12},
	{"nJ", Q_ENERGY, 1, 1e9},
	{"uJ", Q_ENERGY, 1, 1e6},
	{"mJ", Q_ENERGY, 1, 1e3},
	{"J", Q_ENERGY, 1, 1},
	{"uW", Q_POWER, 1, 1e6},
	{"mW", Q_POWER, 1, 1e3},
	{"W", Q_POWER, 1, 1},
	{"packets", Q_PACKETS, 1, 1},
	{"packet", Q_PACKETS, 1, 1},
};
const int unit_count = (int)countof(unit_table);

int
unit_find(const char *name, size_t len)
{
	for (int i = 0; i < unit_count; i++)
		if (strlen(unit_table[i].name) == len && memcmp(unit_table[i].name, name, len) == 0)
			return i;
	return -1;
}

const char *
qty_kind_name(QtyKind k)
{
	switch (k) {
	case Q_COUNT: return "a plain number";
	case Q_SIZE: return "a size (B, KB, KiB, MB, MiB, ...)";
	case Q_RATE: return "a rate (bps, Gbps, GBps, GiBps, ...)";
	case Q_TIME: return "a time (ps, ns, us, ms, s)";
	case Q_ENERGY: return "an energy (fJ, pJ, nJ, uJ, mJ, J)";
	case Q_POWER: return "a power (uW, mW, W)";
	case Q_PACKETS: return "a buffer size (packets, or B, KiB, ...)";
	}
	return "?";
}

double
expr_number(const Expr *e)
{
	double v = e->kind == EX_INT ? (double)e->ival : e->rval;
	return e->unit >= 0 ? v * unit_table[e->unit].mul / unit_table[e->unit].div : v;
}

QtyKind
expr_qty(const Expr *e)
{
	return e->unit >= 0 ? unit_table[e->unit].kind : Q_COUNT;
}

static Expr *
new_expr(Parse *p, ExprKind kind, Loc loc)
{
	Expr *e = NEW(p->arena, Expr);
	e->kind = kind;
	e->loc = loc;
	e->unit = -1;
	e->depth = 1;
	return e;
}

Expr *
ast_int(Parse *p, Loc loc, int64_t v)
{
	Expr *e = new_expr(p, EX_INT, loc);
	e->ival = v;
	return e;
}

Expr *
ast_real(Parse *p, Loc loc, const char *text, double v)
{
	Expr *e = new_expr(p, EX_REAL, loc);
	e->text = text;
	e->rval = v;
	return e;
}

Expr *
ast_with_unit(Parse *p, Expr *num, const char *unit, Loc loc)
{
	(void)p;
	int u = unit_find(unit, strlen(unit));
	if (num->unit >= 0)
		error_at(p->diag, loc, "'%s' after a number that already has the unit '%s'", unit,
		         unit_table[num->unit].name);
	else if (u < 0) {
		const char *names[64];
		for (int i = 0; i < unit_count; i++)
			names[i] = unit_table[i].name;
		const char *near = NULL;
		for (int i = 0; i < unit_count && !near; i++)
			if (strcasecmp(unit_table[i].name, unit) == 0)
				near = unit_table[i].name; /* gbps -> Gbps, before any other guess */
		/* spellings of other tools */
		static const char *const spelled[][2] = {
			{"nsec", "ns"}, {"usec", "us"}, {"msec", "ms"}, {"psec", "ps"}, {"sec", "s"},
			{"secs", "s"}, {"seconds", "s"}, {"bytes", "B"}, {"byte", "B"}, {"Gbit/s", "Gbps"},
			{"GB/s", "GBps"}, {"Gb/s", "Gbps"}, {"MB/s", "MBps"}, {"Mb/s", "Mbps"},
			{"TB/s", "TBps"}, {"Tb/s", "Tbps"}, {"GiB/s", "GiBps"}, {"joules", "J"},
		};
		/* the exact spelling first: Gb/s is bits, GB/s bytes */
		for (size_t i = 0; i < countof(spelled) && !near; i++)
			if (strcmp(spelled[i][0], unit) == 0)
				near = spelled[i][1];
		for (size_t i = 0; i < countof(spelled) && !near; i++)
			if (strcasecmp(spelled[i][0], unit) == 0)
				near = spelled[i][1];
		if (!near)
			near = nearest_name(unit, names, unit_count);
		if (near)
			error_at(p->diag, loc, "unknown unit '%s'; did you mean '%s'?", unit, near);
		else
			error_at(p->diag, loc, "unknown unit '%s'", unit);
	} else
		num->unit = u;
	return num;
}

Expr *
ast_name(Parse *p, Loc loc, const char *name)
{
	Expr *e = new_expr(p, EX_NAME, loc);
	e->text = name;
	return e;
}

Expr *
ast_string(Parse *p, Loc loc, const char *text)
{
	Expr *e = new_expr(p, EX_STRING, loc);
	e->text = text;
	return e;
}

/* Every pass recurses over expressions: bound their depth here, once. */
static Expr *
bounded(Parse *p, Expr *e)
{
	if (e->depth > MAX_NESTING && !p->stop) {
		error_at(p->diag, e->loc, "expression nested more than %d deep", MAX_NESTING);
		p->stop = true;
	}
	return e;
}

Expr *
ast_unary(Parse *p, Loc loc, ExprKind kind, Expr *a)
{
	Expr *e = new_expr(p, kind, loc);
	e->lhs = a;
	e->depth = a->depth + 1;
	return bounded(p, e);
}

Expr *
ast_binary(Parse *p, Loc loc, ExprKind kind, Expr *a, Expr *b)
{
	Expr *e = new_expr(p, kind, loc);
	e->lhs = a;
	e->rhs = b;
	e->depth = (a->depth > b->depth ? a->depth : b->depth) + 1;
	return bounded(p, e);
}

ExprList *
ast_list(Parse *p, ExprList *l, Expr *e)
{
	if (!l)
		l = NEW(p->arena, ExprList);
	VEC_PUSH(p->arena, l->v, l->n, l->cap, e);
	return l;
}

Expr *
ast_tuple(Parse *p, Loc loc, ExprList *l)
{
	Expr *e = new_expr(p, EX_TUPLE, loc);
	e->elem = l->v;
	e->nelem = l->n;
	for (int i = 0; i < l->n; i++)
		if (l->v[i]->depth + 1 > e->depth)
			e->depth = l->v[i]->depth + 1;
	return bounded(p, e);
}

Call *
ast_call(Parse *p, Loc loc, const char *name, bool parens)
{
	Call *c = NEW(p->arena, Call);
	c->loc = loc;
	c->name = name;
	c->parens = parens;
	return c;
}

Call *
ast_call_arg(Parse *p, Call *c, Loc loc, const char *label, Expr *e)
{
	/* The parser reads `gpu (0, 3)` in arguments as a label and a tuple: a
	 * node class's word (never a form's label) with a tuple is a name. */
	if (label && e->kind == EX_TUPLE && node_word_nidx(label) > 0) {
		e->kind = EX_CALL;
		e->text = label;
		e->loc = loc;
		label = NULL;
	}
	/* A positional value after a labelled one continues the label's list:
	 * roots (0, 0), (0, 3) is one argument with two values. */
	if (!label && c->narg > 0 && c->arg[c->narg - 1].label) {
		Arg *last = &c->arg[c->narg - 1];
		VEC_PUSH(p->arena, last->val.v, last->val.n, last->val.cap, e);
		return c;
	}
	Arg a = {.loc = loc, .label = label};
	VEC_PUSH(p->arena, a.val.v, a.val.n, a.val.cap, e);
	VEC_PUSH(p->arena, c->arg, c->narg, c->caparg, a);
	return c;
}

Block *
ast_block(Parse *p, Loc loc)
{
	Block *b = NEW(p->arena, Block);
	b->loc = loc;
	return b;
}

/* A block's items are held once: a file of a million one-line items is
 * mostly items. The array grows by realloc (no copies left behind), the
 * item built for the grammar is reused for the next one once copied, and
 * the '}' moves the array into the arena at its exact size. */
Block *
ast_block_add(Parse *p, Block *b, Item *it)
{
	if (b->nitem == b->capitem) {
		if (b->capitem == 0) {
			if (p->ngrowing == p->capgrowing) {
				p->capgrowing = p->capgrowing ? 2 * p->capgrowing : 8;
				p->growing = xrealloc(p->growing, (size_t)p->capgrowing * sizeof *p->growing);
			}
			p->growing[p->ngrowing++] = b;
		}
		if (b->capitem > (1 << 29))
			out_of_memory((size_t)b->capitem * 2 * sizeof *b->item);
		b->capitem = b->capitem ? 2 * b->capitem : 8;
		b->item = xrealloc(b->item, (size_t)b->capitem * sizeof *b->item);
	}
	b->item[b->nitem++] = *it;
	p->spare = it;
	return b;
}

Block *
ast_block_close(Parse *p, Block *b)
{
	if (b->capitem == 0)
		return b;
	for (int i = p->ngrowing - 1; i >= 0; i--)
		if (p->growing[i] == b) {
			p->growing[i] = p->growing[--p->ngrowing];
			break;
		}
	b->item = arena_own(p->arena, xrealloc(b->item, (size_t)b->nitem * sizeof *b->item));
	b->capitem = b->nitem;
	return b;
}

void
ast_parse_end(Parse *p)
{
	for (int i = 0; i < p->ngrowing; i++) {
		free(p->growing[i]->item);
		p->growing[i]->item = NULL;
		p->growing[i]->nitem = p->growing[i]->capitem = 0;
	}
	free(p->growing);
	p->growing = NULL;
	p->ngrowing = p->capgrowing = 0;
}

Item *
ast_item(Parse *p, ItemKind kind, Loc loc)
{
	Item *it = p->spare ? p->spare : NEW(p->arena, Item);
	p->spare = NULL;
	memset(it, 0, sizeof *it);
	it->kind = kind;
	it->loc = loc;
	it->end_line = loc.line;
	return it;
}

Decl *
ast_decl(Parse *p, DeclKind kind, Loc loc, int end_line)
{
	File *f = p->file;
	Decl d = {.kind = kind, .loc = loc, .end_line = end_line};
	VEC_PUSH(p->arena, f->decl, f->ndecl, f->capdecl, d);
	return &f->decl[f->ndecl - 1];
}

void
ast_comment(Parse *p, Loc loc, int end_line, const char *text, size_t len)
{
	File *f = p->file;
	/* comments are printed back as strings: a NUL byte would cut one short */
	const char *nul = memchr(text, '\0', len);
	if (nul) {
		Loc at = loc;
		for (const char *c = text; c < nul; c++) {
			at.col++;
			if (*c == '\n')
				at = (Loc){at.line + 1, 1};
		}
		error_at(p->diag, at, "unexpected byte 0x00 in a comment");
		return;
	}
	char *copy = arena_alloc(p->arena, len + 1);
	size_t n = 0;
	bool line = len >= 2 && text[1] == '/';
	/* canonical line ends: drop every \r that ends a line, a run of them
	 * before a \n (or the end of a line comment, which stops before its \n),
	 * so that what fmt prints reads back the same; a lone \r is not a line
	 * end, as in C, or code after it would share the comment's line, which
	 * fmt cannot print */
	for (size_t i = 0; i < len;) {
		size_t j = i;
		while (j < len && text[j] == '\r')
			j++;
		bool ends = j < len ? text[j] == '\n' : line;
		if (j == i)
			copy[n++] = text[i++];
		else if (ends)
			i = j;
		else
			while (i < j)
				copy[n++] = text[i++];
	}
	copy[n] = '\0';
	Comment c = {.loc = loc, .end_line = end_line, .text = copy};
	VEC_PUSH(p->arena, f->comment, f->ncomment, f->capcomment, c);
}

/* Constant integer arithmetic, overflow-checked. */
bool
ast_eval_int(Diag *dg, const Expr *e, int64_t *out, bool report)
{
	int64_t a, b;
	switch (e->kind) {
	case EX_INT:
		if (e->unit >= 0) {
			if (report)
				error_at(dg, e->loc, "expected a plain integer, got %s",
				         qty_kind_name(expr_qty(e)));
			return false;
		}
		*out = e->ival;
		return true;
	case EX_TUPLE:
		if (e->nelem == 1)
			return ast_eval_int(dg, e->elem[0], out, report);
		break;
	case EX_NEG:
		if (!ast_eval_int(dg, e->lhs, &a, report))
			return false;
		*out = -a;
		return true;
	case EX_ADD:
	case EX_SUB:
	case EX_MUL:
		if (!ast_eval_int(dg, e->lhs, &a, report) || !ast_eval_int(dg, e->rhs, &b, report))
			return false;
		bool ovf = e->kind == EX_ADD   ? __builtin_add_overflow(a, b, out)
		           : e->kind == EX_SUB ? __builtin_sub_overflow(a, b, out)
		                               : __builtin_mul_overflow(a, b, out);
		if (ovf) {
			if (report)
				error_at(dg, e->loc, "integer overflow");
			return false;
		}
		return true;
	case EX_NAME:
		if (!report)
			return false;
		if (strcmp(e->text, "p") == 0 || strcmp(e->text, "nchunks") == 0 ||
		    strcmp(e->text, "dims") == 0)
			error_at(dg, e->loc, "'%s' is known only inside a schedule%s; here an integer is a "
			         "number, a parameter or + - * of them", e->text,
			         e->text[0] == 'p' ? " and in a collective's 'chunks'" : "");
		else
			error_at(dg, e->loc, "expected an integer: '%s' is not a parameter (declare it above "
			         "with 'param %s = VALUE;')", e->text, e->text);
		return false;
	case EX_STRING:
		if (report)
			error_at(dg, e->loc, "expected an integer, got the string \"%.40s%s\"", e->text,
			         strlen(e->text) > 40 ? "..." : "");
		return false;
	default:
		break;
	}
	if (report)
		error_at(dg, e->loc, "expected an integer");
	return false;
}

/* The form with the arguments that size it (its TR_DIMS, TR_DIM_SWITCHES
 * and TR_SWITCHES parameters, labelled as written): "torus(8, 8)". */
void
ast_space_name(char *buf, size_t len, const NodeSpace *sh)
{
	if (sh->ndim == 0) {
		snprintf(buf, len, "%s of %lld nodes", sh->form, (long long)sh->nodes);
		return;
	}
	const TopoForm *tf = &topo_forms[sh->kind];
	int labelled = 0, d = 0; /* labelled parameters take one coordinate each */
	for (int i = 0; i < MAX_PARAMS; i++)
		labelled += tf->form.param[i].label &&
		            (tf->role[i] == TR_DIMS || tf->role[i] == TR_DIM_SWITCHES);
	size_t n = (size_t)snprintf(buf, len, "%s(", sh->form);
	const char *sep = "";
	for (int i = 0; i < MAX_PARAMS && n < len; i++) {
		const ParamSpec *ps = &tf->form.param[i];
		TopoRole r = (TopoRole)tf->role[i];
		if (r != TR_DIMS && r != TR_DIM_SWITCHES && r != TR_SWITCHES && r != TR_BOX_DIMS)
			continue;
		if (r == TR_BOX_DIMS) { /* every coordinate but the GPUs' (the last) */
			for (int k = 0; k < sh->ndim - 1 && n < len; k++, d++)
				n += (size_t)snprintf(buf + n, len - n, "%s%s%s%lld", k ? ", " : sep,
				                      k ? "" : ps->label, k ? "" : " ", (long long)sh->size[d]);
		} else if (ps->label) {
			n += (size_t)snprintf(buf + n, len - n, "%s%s %lld", sep, ps->label,
			                      (long long)sh->arg[i]);
			d += r != TR_SWITCHES;
		} else {
			for (int k = 0; k < sh->ndim - labelled && n < len; k++, d++)
				n += (size_t)snprintf(buf + n, len - n, "%s%lld", k ? ", " : sep,
				                      (long long)sh->size[d]);
		}
		sep = ", ";
	}
	if (n < len)
		snprintf(buf + n, len - n, ")");
}

/* "gpu(0..1, 0..7), nvswitch(0..1), rail(0..7)": the names a space's form
 * gives its nodes, with their ranges. */
static void
space_names(char *buf, size_t len, const NodeSpace *sh)
{
	const NodeClass *nc = topo_forms[sh->kind].node_class;
	size_t n = 0;
	buf[0] = 0;
	for (int c = 0; c < MAX_NODE_CLASSES && nc[c].word && n < len; c++) {
		n += (size_t)snprintf(buf + n, len - n, "%s%s(", c ? ", " : "", nc[c].word);
		for (int i = 0; i < node_class_nidx(&nc[c]) && n < len; i++)
			n += (size_t)snprintf(buf + n, len - n, "%s0..%lld", i ? ", " : "",
			                      (long long)sh->arg[nc[c].dim[i]] - 1);
		if (n < len)
			n += (size_t)snprintf(buf + n, len - n, ")");
	}
}

/* A node by its name, `gpu(0, 3)`: its id, or -1 after an error. */
static int64_t
resolve_name(Diag *dg, const NodeSpace *sh, const Expr *e, bool rank_only, const char *space)
{
	char names[256];
	int c = node_class_find(sh->kind, e->text);
	if (c < 0) {
		space_names(names, sizeof names, sh);
		if (names[0])
			error_at(dg, e->loc, "%s names no node '%s'; its names are %s", space, e->text,
			         names);
		else
			error_at(dg, e->loc, "nodes of %s have no names; name them by id%s", space,
			         sh->ndim > 1 ? " or coordinates" : "");
		return -1;
	}
	const NodeClass *nc = &topo_forms[sh->kind].node_class[c];
	int nidx = node_class_nidx(nc);
	if (e->nelem != nidx) {
		error_at(dg, e->loc, "%s of %s takes %d ind%s, got %d", nc->word, space, nidx,
		         nidx == 1 ? "ex" : "ices", e->nelem);
		return -1;
	}
	int64_t idx[2];
	for (int i = 0; i < nidx; i++) {
		int64_t top = sh->arg[nc->dim[i]];
		if (!ast_eval_int(dg, e->elem[i], &idx[i], true))
			return -1;
		if (idx[i] < 0 || idx[i] >= top) {
			const TopoForm *tf = &topo_forms[sh->kind];
			error_at(dg, e->elem[i]->loc, "index %d of %s is %lld; %s has %s 0..%lld",
			         i + 1, nc->word, (long long)idx[i], space,
			         tf->role[nc->dim[i]] == TR_NICS && !sh->nics ? "NICs (one a GPU)"
			                                                      : tf->form.param[nc->dim[i]].label,
			         (long long)top - 1);
			return -1;
		}
	}
	if (!node_class_is_node(sh->kind, c, sh->arg)) {
		error_at(dg, e->loc, "%s(%lld, %lld) is no node: %s models a NIC as its %s, not a node "
		         "(docs/gpu-clusters.md); name its GPU or the node at its far end%s", nc->word,
		         (long long)idx[0], (long long)idx[1], sh->form, nc->what,
		         nc->node_when ? ", or give the form 'nics' and 'pcie_gbps' to make NICs nodes" : "");
		return -1;
	}
	int64_t id = node_class_id(sh->kind, c, sh->arg, idx);
	if (rank_only && id >= sh->ranks) {
		node_name(sh->kind, sh->arg, id, names, sizeof names);
		error_at(dg, e->loc, "%s is a switch, not a rank", names);
		return -1;
	}
	return id;
}

/* A node reference: a name, a coordinate tuple or an id. Returns the id, or -1. */
int64_t
ast_resolve_node(Diag *dg, const NodeSpace *sh, const Expr *e, bool rank_only)
{
	char name[128];
	ast_space_name(name, sizeof name, sh);
	int64_t id;
	if (e->kind == EX_CALL)
		return resolve_name(dg, sh, e, rank_only, name);
	if (e->kind == EX_TUPLE && e->nelem > 1) {
		if (e->nelem != sh->ndim) {
			if (sh->ndim == 0)
				error_at(dg, e->loc, "nodes of %s have no coordinates; name them by id", name);
			else
				error_at(dg, e->loc, "node has %d coordinates; %s has %d", e->nelem, name,
				         sh->ndim);
			return -1;
		}
		id = 0;
		for (int i = 0; i < e->nelem; i++) {
			int64_t c;
			if (!ast_eval_int(dg, e->elem[i], &c, true))
				return -1;
			if (c < 0 || c >= sh->size[i]) {
				error_at(dg, e->elem[i]->loc, "coordinate %d of this node is %lld; %s takes 0..%lld",
				         i + 1, (long long)c, name, (long long)sh->size[i] - 1);
				return -1;
			}
			id = id * sh->size[i] + c;
		}
		return id;
	}
	if (!ast_eval_int(dg, e, &id, true))
		return -1;
	int64_t limit = rank_only && !sh->is_switch ? sh->ranks : sh->nodes;
	if (id < 0 || id >= limit) {
		error_at(dg, e->loc, "node %lld is outside %s (%s 0..%lld)", (long long)id, name,
		         limit == sh->nodes ? "nodes" : "ranks", (long long)limit - 1);
		return -1;
	}
	if (rank_only && sh->is_switch && sh->is_switch[id]) {
		error_at(dg, e->loc, "node %lld is a switch, not a rank", (long long)id);
		return -1;
	}
	return id;
}


int64_t
ast_expand_ranks(Diag *dg, const NodeSpace *sh, const ExprList *list, int64_t *out, unsigned char *member)
{
	int64_t count = 0;
	bool ok = true;
	for (int j = 0; j < list->n; j++) {
		const Expr *e = list->v[j];
		int64_t lo, hi;
		if (e->kind == EX_RANGE) {
			lo = ast_resolve_node(dg, sh, e->lhs, true);
			hi = ast_resolve_node(dg, sh, e->rhs, true);
		} else {
			lo = hi = ast_resolve_node(dg, sh, e, true);
		}
		if (lo < 0 || hi < 0) {
			ok = false;
			continue;
		}
		int64_t step = lo <= hi ? 1 : -1; /* 7..4 counts down: an order, e.g. a snake */
		for (int64_t v = lo;; v += step) {
			if (sh->is_switch && sh->is_switch[v]) {
				error_at(dg, e->loc, "node %lld is a switch, not a rank", (long long)v);
				ok = false;
				break;
			}
			if (member[v]) {
				error_at(dg, e->loc, "rank %lld is listed twice", (long long)v);
				ok = false;
				break;
			}
			member[v] = 1;
			out[count++] = v;
			if (v == hi)
				break;
		}
	}
	return ok ? count : -1;
}
