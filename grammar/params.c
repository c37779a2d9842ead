/*
 * params.c: a file's parameters, `param n = 4;` (docs/language.md §3.1).
 *
 * Needs: a parsed File, and the values the command line gives (-D n=8, as
 * Defines; none for the defaults). Establishes: every parameter's value
 * (its -D value, else its default, an integer expression of numbers and the
 * parameters declared above it) and every use of its name below its
 * declaration replaced by that value: an EX_INT at the name's location that
 * keeps the name (Expr.param) for fmt. So sema, lowering, the verifier and
 * every backend see constants, and an error they find points at the use.
 * Refused with a located error: a parameter declared twice, a name a
 * declaration or a schedule's builtin takes, a use above the declaration, a
 * schedule variable (let, for) that would shadow it, arithmetic overflow.
 * Runs once per File (File.params_done): sema runs it with the defaults
 * when the driver has not run it with the command line's values.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"

typedef struct Params {
	Diag *diag;
	File *file;
	int upto;      /* decl index: parameters declared above it are in scope */
	int nparam;    /* every parameter of the file, in order */
	Decl *param[MAX_PARAMS_FILE];
} Params;

static Decl *
param_named(const Params *ps, const char *name, int *index)
{
	for (int i = 0; i < ps->nparam; i++)
		if (strcmp(ps->param[i]->name, name) == 0) {
			*index = (int)(ps->param[i] - ps->file->decl);
			return ps->param[i];
		}
	return NULL;
}

static void
subst_expr(Params *ps, Expr *e)
{
	if (!e)
		return;
	if (e->kind == EX_NAME) {
		int at;
		Decl *d = param_named(ps, e->text, &at);
		if (!d)
			return;
		if (at >= ps->upto) {
			error_at(ps->diag, e->loc, "parameter '%s' is declared at line %d, below this use: "
			         "a parameter is known from its declaration on", e->text, d->loc.line);
			return;
		}
		e->kind = EX_INT;
		e->ival = d->pval;
		e->param = d->name;
		d->pused = true;
		return;
	}
	subst_expr(ps, e->lhs);
	subst_expr(ps, e->rhs);
	for (int i = 0; i < e->nelem; i++)
		subst_expr(ps, e->elem[i]);
}

static void
subst_list(Params *ps, ExprList *l)
{
	for (int i = 0; i < l->n; i++)
		subst_expr(ps, l->v[i]);
}

static void
subst_call(Params *ps, Call *c)
{
	for (int i = 0; c && i < c->narg; i++)
		subst_list(ps, &c->arg[i].val);
}

/* A variable (a schedule's let or for, an affine map's) named as a
 * parameter above would read as the parameter's value: refused. */
static bool
no_shadow(Params *ps, const char *name, Loc loc, const char *what)
{
	int at;
	const Decl *d = param_named(ps, name, &at);
	if (d && at < ps->upto) {
		error_at(ps->diag, loc, "'%s' is a parameter of the file: %s cannot take its name", name,
		         what);
		note_at(ps->diag, d->name_loc, "the parameter is declared here");
		return false;
	}
	return true;
}

/* `map (x, y) -> (e1, e2)`: the left side's names are the map's
 * variables, not parameters; a permutation's sides are node references. */
static void
subst_map(Params *ps, Item *it)
{
	for (int i = 0; i + 1 < it->list.n; i += 2) {
		Expr *from = it->list.v[i];
		bool vars = from->kind == EX_NAME, ok = true;
		for (int k = 0; from->kind == EX_TUPLE && k < from->nelem; k++)
			vars |= from->elem[k]->kind == EX_NAME;
		if (from->kind == EX_NAME)
			ok = no_shadow(ps, from->text, from->loc, "an affine map's variable");
		for (int k = 0; from->kind == EX_TUPLE && k < from->nelem; k++)
			if (from->elem[k]->kind == EX_NAME)
				ok &= no_shadow(ps, from->elem[k]->text, from->elem[k]->loc,
				                "an affine map's variable");
		if (!vars)
			subst_expr(ps, from);
		if (ok)
			subst_expr(ps, it->list.v[i + 1]);
	}
}

static void
subst_stmts(Params *ps, StmtList *l)
{
	for (int i = 0; l && i < l->n; i++) {
		Stmt *s = l->v[i];
		if (s->kind == ST_LET || s->kind == ST_FOR)
			no_shadow(ps, s->name, s->name_loc, "a schedule variable");
		subst_expr(ps, s->value);
		subst_expr(ps, s->from);
		subst_expr(ps, s->to);
		subst_expr(ps, s->link);
		subst_call(ps, s->call);
		subst_list(ps, &s->list);
		subst_stmts(ps, s->body);
		subst_stmts(ps, s->orelse);
	}
}

static void
subst_block(Params *ps, Block *b)
{
	for (int i = 0; b && i < b->nitem; i++) {
		Item *it = &b->item[i];
		subst_expr(ps, it->value);
		if (it->kind == IT_MAP)
			subst_map(ps, it);
		else
			subst_list(ps, &it->list);
		subst_expr(ps, it->from);
		subst_expr(ps, it->to);
		subst_call(ps, it->call);
		subst_block(ps, it->body);
		if (it->sched) {
			for (int k = 0; k < it->sched->nmod; k++)
				subst_call(ps, it->sched->mod[k]);
			subst_stmts(ps, it->sched->body);
		}
	}
}

/* The names a parameter may not take: another declaration's, or one every
 * schedule body has (a parameter would hide it there). */
static bool
name_free(Params *ps, const Decl *d)
{
	for (int i = 0; i < sched_nbuiltin_names; i++)
		if (strcmp(d->name, sched_builtin_names[i]) == 0) {
			error_at(ps->diag, d->name_loc, "'%s' is a name every schedule has (%s): a parameter "
			         "needs another name", d->name,
			         strcmp(d->name, "p") == 0 ? "the rank count" : "docs/language.md §13");
			return false;
		}
	for (int i = 0; i < ps->file->ndecl; i++) {
		const Decl *o = &ps->file->decl[i];
		if (o != d && o->name && strcmp(o->name, d->name) == 0 &&
		    (o->kind != DC_PARAM || o < d)) {
			error_at(ps->diag, d->name_loc, "'%s' is declared twice", d->name);
			note_at(ps->diag, o->name_loc, "the other declaration is here");
			return false;
		}
	}
	return true;
}

/* A parameter's value: the command line's, else its default. */
static void
param_value(Params *ps, Decl *d, const Defines *defs)
{
	int64_t v = 0;
	bool ok = ast_eval_int(ps->diag, d->value, &v, true);
	d->pdef = -1;
	for (int k = 0; defs && k < defs->n; k++)
		if (strcmp(defs->v[k].name, d->name) == 0)
			d->pdef = k; /* the last -D of a name wins, as cc's do */
	if (d->pdef >= 0)
		v = defs->v[d->pdef].value;
	d->pval = ok || d->pdef >= 0 ? v : 0;
}

int
params_apply(Diag *dg, File *f, const Defines *defs, int *unknown)
{
	int before = nerrors(dg);
	Params ps = {.diag = dg, .file = f};
	f->params_done = true;
	for (int i = 0; i < f->ndecl; i++) {
		Decl *d = &f->decl[i];
		if (d->kind != DC_PARAM)
			continue;
		if (ps.nparam == MAX_PARAMS_FILE) {
			error_at(dg, d->loc, "a file declares at most %d parameters (MAX_PARAMS_FILE, "
			         "docs/limits.md)", MAX_PARAMS_FILE);
			return 1;
		}
		if (name_free(&ps, d))
			ps.param[ps.nparam++] = d;
	}
	for (int k = 0; defs && k < defs->n; k++) {
		int at;
		if (!param_named(&ps, defs->v[k].name, &at)) {
			*unknown = k;
			return 2;
		}
	}
	for (int i = 0; i < f->ndecl; i++) {
		Decl *d = &f->decl[i];
		ps.upto = i;
		subst_expr(&ps, d->root);
		subst_expr(&ps, d->value);
		subst_call(&ps, d->form);
		subst_block(&ps, d->body);
		if (d->kind == DC_PARAM)
			param_value(&ps, d, defs);
	}
	return nerrors(dg) > before;
}

void
ast_subst_name(Expr *e, const char *name, int64_t v)
{
	if (!e)
		return;
	if (e->kind == EX_NAME && strcmp(e->text, name) == 0) {
		e->kind = EX_INT;
		e->ival = v;
		e->param = e->text;
		return;
	}
	ast_subst_name(e->lhs, name, v);
	ast_subst_name(e->rhs, name, v);
	for (int i = 0; i < e->nelem; i++)
		ast_subst_name(e->elem[i], name, v);
}

void
params_note(Diag *dg, const File *f, const Defines *defs)
{
	/* without -D the values are the file's own, which its text shows */
	for (int i = 0; f && f->params_done && defs && defs->n > 0 && i < f->ndecl; i++) {
		const Decl *d = &f->decl[i];
		if (d->kind != DC_PARAM || !d->pused)
			continue;
		if (d->pdef >= 0)
			note_at(dg, d->name_loc, "with %s = %lld (-D %s)", d->name, (long long)d->pval,
			        defs->v[d->pdef].arg);
		else
			note_at(dg, d->name_loc, "with %s = %lld (its default)", d->name, (long long)d->pval);
	}
}

int
defines_add(Defines *defs, const char *arg, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
	bool ident = n > 0 && n < sizeof defs->v[0].name && !(arg[0] >= '0' && arg[0] <= '9');
	for (size_t i = 0; i < n && ident; i++)
		ident = (arg[i] >= 'a' && arg[i] <= 'z') || (arg[i] >= 'A' && arg[i] <= 'Z') ||
		        (arg[i] >= '0' && arg[i] <= '9') || arg[i] == '_';
	if (!ident) {
		snprintf(err, errlen, "-D takes NAME=VALUE with NAME a parameter's name, got '%s'", arg);
		return -1;
	}
	if (!eq) {
		snprintf(err, errlen, "-D %s has no value: write -D %s=VALUE", arg, arg);
		return -1;
	}
	/* strictly an int64: optional sign, decimal digits, nothing after */
	const char *v = eq + 1;
	const char *digits = v + (*v == '-' || *v == '+');
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (!*digits || strspn(digits, "0123456789") != strlen(digits) || errno == ERANGE) {
		snprintf(err, errlen, "-D %s: '%s' is not an integer in -2^63..2^63-1", arg, v);
		return -1;
	}
	if (defs->n == MAX_PARAMS_FILE) {
		snprintf(err, errlen, "at most %d -D values", MAX_PARAMS_FILE);
		return -1;
	}
	Define *d = &defs->v[defs->n++];
	memcpy(d->name, arg, n);
	d->name[n] = 0;
	d->value = x;
	d->arg = arg;
	return 0;
}
