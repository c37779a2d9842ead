/*
 * fmt.c: prints a File in canonical form, comments included, and compares
 * two Files for equality. Canonical form: four-space indentation, one item
 * per line, one space around binary operators and after commas, units
 * spaced from their numbers, at most one blank line where the source had
 * any. Comments keep their place: a comment on its own line stays before
 * the item that follows it, a comment inside an item's lines follows the
 * item on its last line. fmt of fmt's output is the same text.
 */
#include <stdlib.h>
#include <string.h>

#include "ast.h"

/* One output line; alignment needs the whole run of lines, so lines are
 * collected first and written at the end. */
typedef struct Line {
	const char *code;    /* without indentation */
	int eq;              /* offset of " = " in a parameter line, or -1 */
	const char *comment; /* own-line comment (code empty) or trailing comment */
	int depth;
	bool blank;
} Line;

typedef struct Printer {
	FILE *out;    /* where items print: cur.f, the line being built (fmt_call: its stream) */
	MemOut cur;
	Arena arena;
	Line *line;
	int nline, capline;
	int eq;
	const File *f;
	int next;     /* next comment to print */
	int last;     /* last source line printed */
	int depth;
	bool fresh;   /* nothing printed yet in this block */
} Printer;

static void
push_line(Printer *p, Line l)
{
	l.depth = p->depth;
	VEC_PUSH(&p->arena, p->line, p->nline, p->capline, l);
	p->fresh = false;
}

static void
start_line(Printer *p)
{
	p->out = memout_open(&p->cur);
	p->eq = -1;
}

static void
end_line(Printer *p, const char *comment)
{
	memout_close(&p->cur);
	p->out = NULL;
	push_line(p, (Line){.code = arena_strndup(&p->arena, p->cur.buf, p->cur.len), .eq = p->eq,
	                    .comment = comment});
	free(p->cur.buf);
	p->cur.buf = NULL;
}

static void
gap(Printer *p, int line)
{
	if (!p->fresh && p->last > 0 && line > p->last + 1)
		push_line(p, (Line){.blank = true, .eq = -1});
}

/* Own-line comments that come before `line`. */
static void
comments_before(Printer *p, int line)
{
	while (p->next < p->f->ncomment && p->f->comment[p->next].loc.line < line) {
		const Comment *c = &p->f->comment[p->next++];
		gap(p, c->loc.line);
		push_line(p, (Line){.code = "", .eq = -1, .comment = c->text});
		p->last = c->end_line;
	}
}

static bool
loc_before(Loc a, Loc b)
{
	return a.line < b.line || (a.line == b.line && a.col < b.col);
}

static const Loc END_OF_FILE = {1 << 30, 0};

/* Ends the current line with the comments that start on or before `line`
 * and before `next`, the first token of what follows. Block comments join
 * on the line; after a line comment, the rest go on lines of their own. */
static void
comments_trailing(Printer *p, int line, Loc next)
{
	const char *text = NULL;
	int first = p->next;
	while (p->next < p->f->ncomment && p->f->comment[p->next].loc.line <= line &&
	       loc_before(p->f->comment[p->next].loc, next)) {
		const Comment *c = &p->f->comment[p->next];
		if (p->next > first && strncmp(p->f->comment[p->next - 1].text, "//", 2) == 0)
			break; /* a line comment ends the line */
		p->next++;
		text = text ? arena_printf(&p->arena, "%s %s", text, c->text) : c->text;
		if (c->end_line > line)
			line = c->end_line;
	}
	end_line(p, text);
	/* what a line comment cut off follows as own-line comments */
	while (p->next < p->f->ncomment && p->f->comment[p->next].loc.line <= line &&
	       loc_before(p->f->comment[p->next].loc, next)) {
		const Comment *c = &p->f->comment[p->next++];
		push_line(p, (Line){.code = "", .eq = -1, .comment = c->text});
		if (c->end_line > line)
			line = c->end_line;
	}
	p->last = line;
}

static void
begin(Printer *p, Loc loc)
{
	comments_before(p, loc.line);
	gap(p, loc.line);
	start_line(p);
}

/* Writes the lines: '=' aligned in runs of parameters, trailing comments
 * aligned in runs of commented lines, four spaces per level. */
static void
flush_lines(Printer *p, FILE *out)
{
	Line *l = p->line;
	int n = p->nline;
	for (int i = 0; i < n;) {
		int j = i, eq = -1;
		while (j < n && l[j].eq >= 0 && l[j].depth == l[i].depth) {
			if (l[j].eq > eq)
				eq = l[j].eq;
			j++;
		}
		for (int k = i; k < j; k++)
			if (l[k].eq < eq)
				l[k].code = arena_printf(&p->arena, "%.*s%*s%s", l[k].eq, l[k].code,
				                         eq - l[k].eq, "", l[k].code + l[k].eq);
		i = j > i ? j : i + 1;
	}
	for (int i = 0; i < n;) {
		int j = i, width = 0;
		while (j < n && l[j].comment && l[j].code[0] && l[j].depth == l[i].depth) {
			int w = (int)strlen(l[j].code);
			if (w > width)
				width = w;
			j++;
		}
		for (int k = i; k < j; k++)
			l[k].eq = width; /* reused: the column of the trailing comment */
		i = j > i ? j : i + 1;
	}
	for (int i = 0; i < n; i++) {
		if (l[i].blank) {
			fputc('\n', out);
			continue;
		}
		for (int d = 0; d < l[i].depth; d++)
			fputs("    ", out);
		fputs(l[i].code, out);
		if (l[i].comment) {
			if (l[i].code[0])
				fprintf(out, "%*s ", l[i].eq - (int)strlen(l[i].code), "");
			fputs(l[i].comment, out);
		}
		fputc('\n', out);
	}
}

static void expr(Printer *, const Expr *);

static void
exprs(Printer *p, const ExprList *l)
{
	for (int i = 0; i < l->n; i++) {
		if (i)
			fputs(", ", p->out);
		expr(p, l->v[i]);
	}
}

static void
expr(Printer *p, const Expr *e)
{
	static const char *const op[] = {
		[EX_ADD] = " + ", [EX_SUB] = " - ", [EX_MUL] = " * ", [EX_RANGE] = "..",
		[EX_DIV] = " / ", [EX_MOD] = " mod ", [EX_EQ] = " == ", [EX_NE] = " != ",
		[EX_LT] = " < ", [EX_LE] = " <= ", [EX_GT] = " > ", [EX_GE] = " >= ",
		[EX_AND] = " and ", [EX_OR] = " or ",
	};
	switch (e->kind) {
	case EX_INT:
		if (e->param) /* a parameter's value stands there: print the name */
			fputs(e->param, p->out);
		else
			fprintf(p->out, "%lld", (long long)e->ival);
		break;
	case EX_REAL:
	case EX_NAME:
		fputs(e->text, p->out);
		break;
	case EX_STRING: /* as the scanner reads it back: " and \ escaped */
		fputc('"', p->out);
		for (const char *c = e->text; *c; c++) {
			if (*c == '"' || *c == '\\')
				fputc('\\', p->out);
			fputc(*c, p->out);
		}
		fputc('"', p->out);
		break;
	case EX_TUPLE:
		fputc('(', p->out);
		exprs(p, &(ExprList){.v = e->elem, .n = e->nelem});
		fputc(')', p->out);
		break;
	case EX_CALL:
		fprintf(p->out, "%s(", e->text);
		exprs(p, &(ExprList){.v = e->elem, .n = e->nelem});
		fputc(')', p->out);
		break;
	case EX_NEG:
		fputc('-', p->out);
		expr(p, e->lhs);
		break;
	case EX_NOT:
		fputs("not ", p->out);
		expr(p, e->lhs);
		break;
	default:
		expr(p, e->lhs);
		fputs(op[e->kind], p->out);
		expr(p, e->rhs);
		break;
	}
	if (e->unit >= 0)
		fprintf(p->out, " %s", unit_table[e->unit].name);
}

static void
call(Printer *p, const Call *c)
{
	if (!c) {
		fputs("auto", p->out);
		return;
	}
	fputs(c->name, p->out);
	if (!c->parens)
		return;
	fputc('(', p->out);
	for (int i = 0; i < c->narg; i++) {
		if (i)
			fputs(", ", p->out);
		if (c->arg[i].label)
			fprintf(p->out, "%s ", c->arg[i].label);
		exprs(p, &c->arg[i].val);
	}
	fputc(')', p->out);
}

static void item(Printer *, const Item *, Loc next);
static void stmt(Printer *, const Stmt *, Loc next, bool continued);

/* " {", the statements, and "}" (the caller ends the line). */
static void
stmt_body(Printer *p, const StmtList *l)
{
	fputs(" {", p->out);
	comments_trailing(p, l->open.line, l->n ? l->v[0]->loc : l->end);
	p->depth++;
	p->fresh = true;
	for (int i = 0; i < l->n; i++)
		stmt(p, l->v[i], i + 1 < l->n ? l->v[i + 1]->loc : l->end, false);
	comments_before(p, l->end.line);
	p->depth--;
	start_line(p);
	fputc('}', p->out);
}

/* One statement of a schedule; `continued` for the `if` of an `else if`,
 * which goes on the line of the `else`. */
static void
stmt(Printer *p, const Stmt *s, Loc next, bool continued)
{
	if (!continued)
		begin(p, s->loc);
	switch (s->kind) {
	case ST_LET:
		fprintf(p->out, "let %s = ", s->name);
		expr(p, s->value);
		fputc(';', p->out);
		break;
	case ST_FOR:
		fprintf(p->out, "for %s in ", s->name);
		expr(p, s->value);
		stmt_body(p, s->body);
		break;
	case ST_IF:
		fputs("if ", p->out);
		expr(p, s->value);
		stmt_body(p, s->body);
		if (s->orelse && s->orelse->open.line == 0) {
			fputs(" else ", p->out);
			stmt(p, s->orelse->v[0], next, true);
			return;
		}
		if (s->orelse) {
			fputs(" else", p->out);
			stmt_body(p, s->orelse);
		}
		break;
	case ST_ROUND:
	case ST_TOGETHER:
		fputs(s->kind == ST_ROUND ? "round" : "together", p->out);
		stmt_body(p, s->body);
		break;
	case ST_SEND:
		fputs("send ", p->out);
		expr(p, s->value);
		fputs(" from ", p->out);
		expr(p, s->from);
		fputs(" to ", p->out);
		expr(p, s->to);
		fprintf(p->out, " %s", s->name);
		if (s->over)
			fputs(" over link", p->out);
		if (s->link) {
			fputc(' ', p->out);
			expr(p, s->link);
		}
		fputc(';', p->out);
		break;
	case ST_USE:
		fputs("use ", p->out);
		call(p, s->call);
		fprintf(p->out, " for %s", s->name);
		if (s->list.n) {
			fputs(" ranks ", p->out);
			exprs(p, &s->list);
		}
		fputc(';', p->out);
		break;
	}
	comments_trailing(p, s->end_line, next);
}

/* Prints " {", the items, and "}" with the comments of each line; `next` is
 * where what follows the block begins. */
static void
block(Printer *p, const Block *b, Loc next)
{
	fputs(" {", p->out);
	comments_trailing(p, b->loc.line, b->nitem ? b->item[0].loc : b->end);
	p->depth++;
	p->fresh = true;
	for (int i = 0; i < b->nitem; i++)
		item(p, &b->item[i], i + 1 < b->nitem ? b->item[i + 1].loc : b->end);
	comments_before(p, b->end.line);
	p->depth--;
	start_line(p);
	fputc('}', p->out);
	comments_trailing(p, b->end.line, next);
}

static void
item(Printer *p, const Item *it, Loc next)
{
	static const char *const head[] = {
		[IT_NODES] = "nodes ", [IT_SWITCHES] = "switches ", [IT_LINK] = "link ",
		[IT_TRANSLATE] = "translate", [IT_MAP] = "map ", [IT_INCLUDE] = "include ",
		[IT_ALGORITHM] = "algorithm ", [IT_CHUNKS] = "chunks ", [IT_ROUTING] = "routing ",
		[IT_RANKS] = "ranks ", [IT_ROOT] = "root ", [IT_PARAM] = "", [IT_EDGE] = "",
		[IT_NETWORK] = "network", [IT_SCHEDULE] = "schedule",
	};
	begin(p, it->loc);
	fputs(head[it->kind], p->out);
	switch (it->kind) {
	case IT_PARAM:
		fputs(it->name, p->out);
		fflush(p->out);
		p->eq = (int)p->cur.len;
		fputs(" = ", p->out);
		expr(p, it->value);
		break;
	case IT_NETWORK:
		block(p, it->body, next);
		return;
	case IT_NODES:
	case IT_ROOT:
		expr(p, it->value);
		break;
	case IT_SWITCHES:
		exprs(p, &it->list);
		break;
	case IT_LINK:
	case IT_EDGE:
		expr(p, it->from);
		fputs(it->flag ? " <-> " : " -> ", p->out);
		expr(p, it->to);
		if (it->body) {
			block(p, it->body, next);
			return;
		}
		break;
	case IT_TRANSLATE:
		if (it->value) {
			fputc(' ', p->out);
			expr(p, it->value);
		}
		break;
	case IT_MAP:
		for (int i = 0; i + 1 < it->list.n; i += 2) {
			if (i)
				fputs(", ", p->out);
			expr(p, it->list.v[i]);
			fputs(" -> ", p->out);
			expr(p, it->list.v[i + 1]);
		}
		break;
	case IT_INCLUDE:
	case IT_ROUTING:
		fputs(it->name, p->out);
		break;
	case IT_ALGORITHM:
		if (it->flag)
			fputs("auto", p->out);
		else
			call(p, it->call);
		break;
	case IT_CHUNKS:
		if (it->flag)
			fputs("auto", p->out);
		else
			expr(p, it->value);
		break;
	case IT_RANKS:
		if (it->flag)
			fputs("all", p->out);
		else
			exprs(p, &it->list);
		break;
	case IT_SCHEDULE:
		for (int i = 0; i < it->sched->nmod; i++) {
			fputc(' ', p->out);
			call(p, it->sched->mod[i]);
		}
		stmt_body(p, it->sched->body);
		comments_trailing(p, it->end_line, next);
		return;
	}
	fputc(';', p->out);
	comments_trailing(p, it->end_line, next);
}

static void
decl(Printer *p, const Decl *d, Loc next)
{
	begin(p, d->loc);
	switch (d->kind) {
	case DC_NETWORK:
		fputs("network", p->out);
		break;
	case DC_TOPOLOGY:
		fprintf(p->out, "topology %s = ", d->name);
		call(p, d->form);
		break;
	case DC_GROUP:
		fprintf(p->out, "group %s", d->name);
		break;
	case DC_TREE:
	case DC_TREES:
		fprintf(p->out, "%s %s", d->kind == DC_TREE ? "tree" : "trees", d->name);
		break;
	case DC_COLLECTIVE:
		fprintf(p->out, "collective %s %s", d->ckind, d->name);
		break;
	case DC_PARAM:
		fprintf(p->out, "param %s = ", d->name);
		expr(p, d->value);
		break;
	}
	if (d->on)
		fprintf(p->out, " on %s", d->on);
	if (d->root) {
		fputs(" root ", p->out);
		expr(p, d->root);
	}
	if (d->form && d->kind != DC_TOPOLOGY) {
		fputs(" = ", p->out);
		call(p, d->form);
	}
	if (d->body) {
		block(p, d->body, next);
		return;
	}
	fputc(';', p->out);
	comments_trailing(p, d->end_line, next);
}

void
fmt_call(const Call *c, FILE *out)
{
	Printer p = {.out = out};
	call(&p, c);
}

void
fmt_file(const File *f, FILE *out)
{
	Printer p = {.f = f, .fresh = true};
	for (int i = 0; i < f->ndecl; i++)
		decl(&p, &f->decl[i], i + 1 < f->ndecl ? f->decl[i + 1].loc : END_OF_FILE);
	comments_before(&p, 1 << 30);
	flush_lines(&p, out);
	arena_free(&p.arena);
}

/* ---- equality, ignoring locations and comments ---- */

static bool
str_eq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool
expr_eq(const Expr *a, const Expr *b)
{
	if (!a || !b)
		return a == b;
	if (a->kind != b->kind || a->unit != b->unit)
		return false;
	switch (a->kind) {
	case EX_INT:
		return a->ival == b->ival && str_eq(a->param, b->param);
	case EX_REAL:
		return a->rval == b->rval;
	case EX_NAME:
	case EX_STRING:
		return str_eq(a->text, b->text);
	case EX_TUPLE:
	case EX_CALL:
		if (a->nelem != b->nelem || !str_eq(a->text, b->text))
			return false;
		for (int i = 0; i < a->nelem; i++)
			if (!expr_eq(a->elem[i], b->elem[i]))
				return false;
		return true;
	default:
		return expr_eq(a->lhs, b->lhs) && expr_eq(a->rhs, b->rhs);
	}
}

static bool
list_eq(const ExprList *a, const ExprList *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++)
		if (!expr_eq(a->v[i], b->v[i]))
			return false;
	return true;
}

static bool
call_eq(const Call *a, const Call *b)
{
	if (!a || !b)
		return a == b;
	if (!str_eq(a->name, b->name) || a->parens != b->parens || a->narg != b->narg)
		return false;
	for (int i = 0; i < a->narg; i++)
		if (!str_eq(a->arg[i].label, b->arg[i].label) || !list_eq(&a->arg[i].val, &b->arg[i].val))
			return false;
	return true;
}

static bool block_eq(const Block *, const Block *);
static bool stmts_eq(const StmtList *, const StmtList *);

static bool
stmt_eq(const Stmt *a, const Stmt *b)
{
	return a->kind == b->kind && str_eq(a->name, b->name) && expr_eq(a->value, b->value) &&
	       expr_eq(a->from, b->from) && expr_eq(a->to, b->to) && a->over == b->over &&
	       expr_eq(a->link, b->link) && call_eq(a->call, b->call) &&
	       list_eq(&a->list, &b->list) && stmts_eq(a->body, b->body) &&
	       stmts_eq(a->orelse, b->orelse);
}

static bool
stmts_eq(const StmtList *a, const StmtList *b)
{
	if (!a || !b)
		return a == b;
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++)
		if (!stmt_eq(a->v[i], b->v[i]))
			return false;
	return true;
}

static bool
sched_eq(const Schedule *a, const Schedule *b)
{
	if (!a || !b)
		return a == b;
	if (a->nmod != b->nmod)
		return false;
	for (int i = 0; i < a->nmod; i++)
		if (!call_eq(a->mod[i], b->mod[i]))
			return false;
	return stmts_eq(a->body, b->body);
}

static bool
item_eq(const Item *a, const Item *b)
{
	return a->kind == b->kind && str_eq(a->name, b->name) && expr_eq(a->value, b->value) &&
	       list_eq(&a->list, &b->list) && a->flag == b->flag && expr_eq(a->from, b->from) &&
	       expr_eq(a->to, b->to) && call_eq(a->call, b->call) && block_eq(a->body, b->body) &&
	       sched_eq(a->sched, b->sched);
}

static bool
block_eq(const Block *a, const Block *b)
{
	if (!a || !b)
		return a == b;
	if (a->nitem != b->nitem)
		return false;
	for (int i = 0; i < a->nitem; i++)
		if (!item_eq(&a->item[i], &b->item[i]))
			return false;
	return true;
}

bool
ast_equal(const File *a, const File *b)
{
	if (a->ndecl != b->ndecl)
		return false;
	for (int i = 0; i < a->ndecl; i++) {
		const Decl *x = &a->decl[i], *y = &b->decl[i];
		if (x->kind != y->kind || !str_eq(x->name, y->name) || !str_eq(x->ckind, y->ckind) ||
		    !str_eq(x->on, y->on) || !expr_eq(x->root, y->root) || !expr_eq(x->value, y->value) || !call_eq(x->form, y->form) ||
		    !block_eq(x->body, y->body))
			return false;
	}
	return true;
}
