/*
 * schedule.c: user schedules in the front end. The builders the parser's
 * actions call for `schedule { ... }` bodies, and sema_schedule, the checks
 * that need nothing built: every name is bound (by let, for, or one of the
 * builtin names) before its use and bound once, every helper is known and
 * gets its number of arguments, integers carry no unit, ranges stand only
 * where a range is taken, a send says reduce or copy and stands inside a
 * round, rounds (and use, and together) do not nest inside rounds. What
 * needs the built topology and values (ranks in range, chunks in range,
 * links that exist) is checked when ir/usersched.c runs the body.
 */
#include <stdlib.h>
#include <string.h>

#include "ast.h"

const char *const sched_builtin_names[] = {"p", "nchunks", "dims", "root"};
const int sched_nbuiltin_names = (int)countof(sched_builtin_names);

const Helper sched_helpers[] = {
	{"coord", 2, "coord(r, d): coordinate d of rank r's node"},
	{"size", 1, "size(d): the size of dimension d"},
	{"rank", -1, "rank(c1, ..., cd): the rank at those coordinates (taken modulo the sizes)"},
	{"neighbor", 3, "neighbor(r, d, dir): the rank one step from r along dimension d, dir +1 or -1"},
	{"owner", 1, "owner(c): the rank chunk c belongs to (reduce_scatter, allgather)"},
	{"xor", 2, "xor(a, b): bitwise exclusive or"},
	{"pow", 2, "pow(a, b): a to the power b (b >= 0)"},
	{"log2", 1, "log2(a): floor of log2 a (a >= 1)"},
	{"clog2", 1, "clog2(a): ceiling of log2 a (a >= 1)"},
	{"bit", 2, "bit(a, k): bit k of a (0 or 1)"},
	{"min", 2, "min(a, b)"},
	{"max", 2, "max(a, b)"},
	{"abs", 1, "abs(a)"},
};
const int sched_nhelpers = (int)countof(sched_helpers);

/* ---- builders ---- */

Expr *
ast_call_expr(Parse *p, Loc loc, const char *name, ExprList *args)
{
	ExprList none = {0};
	Expr *e = ast_tuple(p, loc, args ? args : &none);
	e->kind = EX_CALL;
	e->text = name;
	return e;
}

Stmt *
ast_stmt(Parse *p, StmtKind kind, Loc loc)
{
	Stmt *s = NEW(p->arena, Stmt);
	s->kind = kind;
	s->loc = loc;
	return s;
}

StmtList *
ast_stmts(Parse *p, StmtList *l, Stmt *s)
{
	if (!l)
		l = NEW(p->arena, StmtList);
	if (s)
		VEC_PUSH(p->arena, l->v, l->n, l->cap, s);
	return l;
}

Schedule *
ast_schedule_mod(Parse *p, Schedule *s, Call *mod)
{
	if (!s)
		s = NEW(p->arena, Schedule);
	if (mod)
		VEC_PUSH(p->arena, s->mod, s->nmod, s->capmod, mod);
	return s;
}

/* ---- checks ---- */

typedef struct Scope {
	const char *name[MAX_SCHED_SCOPE];
	Loc loc[MAX_SCHED_SCOPE];
	int n;
	bool overflow;
} Scope;

static int
find_name(const Scope *sc, const char *name)
{
	for (int i = sc->n - 1; i >= 0; i--)
		if (strcmp(sc->name[i], name) == 0)
			return i;
	return -1;
}

static const Helper *
find_helper(const char *name)
{
	for (int i = 0; i < sched_nhelpers; i++)
		if (strcmp(sched_helpers[i].name, name) == 0)
			return &sched_helpers[i];
	return NULL;
}

static void
unknown_name(Diag *dg, const Scope *sc, const Expr *e)
{
	const char *cand[MAX_SCHED_SCOPE + 8];
	int n = 0;
	for (int i = 0; i < sc->n; i++)
		cand[n++] = sc->name[i];
	const char *near = nearest_name(e->text, cand, n);
	if (near)
		error_at(dg, e->loc, "unknown name '%s' in this schedule; did you mean '%s'?", e->text, near);
	else
		error_at(dg, e->loc, "unknown name '%s' in this schedule (bound here: p, nchunks, dims, "
		         "root, and the variables of let and for above)", e->text);
}

static void
check_call(Diag *, const Scope *sc, const Expr *e);

/* An integer expression; a range only where range_ok. */
static void
check_expr(Diag *dg, const Scope *sc, const Expr *e, bool range_ok)
{
	switch (e->kind) {
	case EX_INT:
		if (e->unit >= 0)
			error_at(dg, e->loc, "expected a plain integer, got %s", qty_kind_name(expr_qty(e)));
		return;
	case EX_REAL:
		error_at(dg, e->loc, "a schedule computes with integers; '%s' is not one", e->text);
		return;
	case EX_NAME:
		if (find_name(sc, e->text) < 0)
			unknown_name(dg, sc, e);
		return;
	case EX_TUPLE:
		if (e->nelem != 1) {
			error_at(dg, e->loc, "a tuple is not a value in a schedule (coordinates go to "
			         "rank(c1, ..., cd))");
			return;
		}
		check_expr(dg, sc, e->elem[0], false);
		return;
	case EX_CALL:
		check_call(dg, sc, e);
		return;
	case EX_RANGE:
		if (!range_ok)
			error_at(dg, e->loc, "a range lo..hi stands only after send, in for and in use's "
			         "ranks");
		check_expr(dg, sc, e->lhs, false);
		check_expr(dg, sc, e->rhs, false);
		return;
	case EX_NEG:
	case EX_NOT:
		check_expr(dg, sc, e->lhs, false);
		return;
	default:
		check_expr(dg, sc, e->lhs, false);
		check_expr(dg, sc, e->rhs, false);
		return;
	}
}

static void
check_call(Diag *dg, const Scope *sc, const Expr *e)
{
	const Helper *h = find_helper(e->text);
	int nidx = node_word_nidx(e->text); /* gpu(b, i): a node's rank (usersched.c) */
	if (!h && nidx > 0) {
		if (e->nelem != nidx)
			error_at(dg, e->loc, "%s takes %d ind%s, got %d", e->text, nidx,
			         nidx == 1 ? "ex" : "ices", e->nelem);
	} else if (!h) {
		const char *cand[32];
		for (int i = 0; i < sched_nhelpers; i++)
			cand[i] = sched_helpers[i].name;
		const char *near = nearest_name(e->text, cand, sched_nhelpers);
		if (near)
			error_at(dg, e->loc, "unknown helper '%s'; did you mean '%s'?", e->text, near);
		else
			error_at(dg, e->loc, "unknown helper '%s' (the helpers are coord, size, rank, neighbor, "
			         "owner, xor, pow, log2, clog2, bit, min, max, abs, and a cluster's node "
			         "names such as gpu(b, i))", e->text);
	} else if (h->nargs >= 0 ? e->nelem != h->nargs : e->nelem < 1) {
		error_at(dg, e->loc, "%s takes %s argument%s, got %d (usage: %s)", h->name,
		         h->nargs < 0 ? "one or more" : h->nargs == 1 ? "1" : h->nargs == 2 ? "2" : "3",
		         h->nargs == 1 ? "" : "s", e->nelem, h->usage);
	}
	for (int i = 0; i < e->nelem; i++)
		check_expr(dg, sc, e->elem[i], false);
}

static void
bind(Diag *dg, Scope *sc, const char *name, Loc loc)
{
	int at = find_name(sc, name);
	if (at >= 0) {
		if (at < sched_nbuiltin_names)
			error_at(dg, loc, "'%s' is a builtin name of schedules; choose another", name);
		else {
			error_at(dg, loc, "'%s' is already bound", name);
			note_at(dg, sc->loc[at], "bound here");
		}
		return;
	}
	if (sc->n == MAX_SCHED_SCOPE) {
		if (!sc->overflow)
			error_at(dg, loc, "more than %d names bound at once in a schedule", MAX_SCHED_SCOPE);
		sc->overflow = true;
		return;
	}
	sc->name[sc->n] = name;
	sc->loc[sc->n++] = loc;
}

static const char *const coll_kinds[] = {"allreduce", "reduce_scatter", "allgather",
                                         "alltoall", "broadcast", "reduce"};

static void
check_use(Diag *dg, const Scope *sc, const Stmt *s)
{
	bool kind = false;
	for (size_t i = 0; i < countof(coll_kinds); i++)
		kind |= strcmp(coll_kinds[i], s->name) == 0;
	if (!kind) {
		const char *near = nearest_name(s->name, coll_kinds, (int)countof(coll_kinds));
		error_at(dg, s->name_loc, "unknown collective '%s'%s%s%s", s->name,
		         near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
	}
	const Call *c = s->call;
	if (strcmp(c->name, "symmetric") == 0)
		error_at(dg, c->loc, "use takes an algorithm of the library; a symmetric schedule is a "
		         "collective of its own");
	/* the options as `algorithm` takes them (the registry's PARAMS), but
	 * trees: those are a collective's own */
	int alg = alg_find(c->name);
	if (alg >= 0 && alg != ALG_symmetric) {
		Arena a = {0};
		Bound b[MAX_PARAMS];
		const FormSpec *f = &alg_forms[alg];
		if (ast_bind_check(dg, &a, c, f, NULL, b))
			for (int i = 0; i < MAX_PARAMS && f->param[i].kind != A_END; i++)
				if (b[i].n && f->param[i].kind == A_TREES)
					error_at(dg, b[i].loc, "use passes an algorithm's numbers and words; its '%s' "
					         "are the collective's own", f->param[i].label);
		arena_free(&a);
	}
	for (int i = 0; i < s->list.n; i++)
		check_expr(dg, sc, s->list.v[i], true);
}

static void check_stmts(Diag *, Scope *, const StmtList *, bool in_round);

static void
check_stmt(Diag *dg, Scope *sc, const Stmt *s, bool in_round)
{
	switch (s->kind) {
	case ST_LET:
		check_expr(dg, sc, s->value, false);
		bind(dg, sc, s->name, s->name_loc);
		return;
	case ST_FOR: {
		if (s->value->kind != EX_RANGE)
			error_at(dg, s->value->loc, "for takes a range: for %s in lo..hi { ... }", s->name);
		check_expr(dg, sc, s->value, true);
		int n = sc->n;
		bind(dg, sc, s->name, s->name_loc);
		check_stmts(dg, sc, s->body, in_round);
		sc->n = n;
		return;
	}
	case ST_IF:
		check_expr(dg, sc, s->value, false);
		check_stmts(dg, sc, s->body, in_round);
		if (s->orelse)
			check_stmts(dg, sc, s->orelse, in_round);
		return;
	case ST_ROUND:
	case ST_TOGETHER:
	case ST_USE:
		if (in_round)
			error_at(dg, s->loc, "%s cannot stand inside a round (rounds do not nest; a round is one step of the schedule)",
			         s->kind == ST_ROUND ? "a round" : s->kind == ST_USE ? "use" : "together");
		if (s->kind == ST_USE)
			check_use(dg, sc, s);
		else
			check_stmts(dg, sc, s->body, s->kind == ST_ROUND || in_round);
		return;
	case ST_SEND:
		if (!in_round)
			error_at(dg, s->loc, "a send belongs inside a round { ... } (it says when it happens)");
		if (strcmp(s->name, "reduce") != 0 && strcmp(s->name, "copy") != 0)
			error_at(dg, s->name_loc, "a send ends with reduce or copy, not '%s'", s->name);
		check_expr(dg, sc, s->value, true);
		check_expr(dg, sc, s->from, false);
		check_expr(dg, sc, s->to, false);
		if (s->link)
			check_expr(dg, sc, s->link, false);
		return;
	}
}

static void
check_stmts(Diag *dg, Scope *sc, const StmtList *l, bool in_round)
{
	int n = sc->n; /* a let is visible to the end of its block */
	for (int i = 0; i < l->n; i++)
		check_stmt(dg, sc, l->v[i], in_round);
	sc->n = n;
}

/* symmetric(group G, roots R1, R2, ...): a group and the base trees' roots. */
static void
check_symmetric(Diag *dg, const Call *m, const NodeSpace *space,
                bool (*group_ok)(void *, const Expr *), void *ctx)
{
	const Arg *group = NULL, *roots = NULL;
	for (int i = 0; i < m->narg; i++) {
		const Arg *a = &m->arg[i];
		const Arg **slot = !a->label ? NULL
		                   : strcmp(a->label, "group") == 0 ? &group
		                   : strcmp(a->label, "roots") == 0 ? &roots : NULL;
		if (!slot || *slot) {
			error_at(dg, a->loc, "%s (usage: symmetric(group G, roots R1, R2, ...))",
			         slot ? "given twice" : "symmetric takes a group and roots");
			return;
		}
		*slot = a;
	}
	if (!group || !roots || group->val.n != 1) {
		error_at(dg, m->loc, "symmetric needs one group and one or more roots (usage: "
		         "symmetric(group G, roots R1, R2, ...))");
		return;
	}
	if (group->val.v[0]->kind != EX_NAME)
		error_at(dg, group->val.v[0]->loc, "expected the name of a group");
	else
		group_ok(ctx, group->val.v[0]);
	int64_t seen[64];
	for (int i = 0; space && i < roots->val.n; i++) {
		int64_t v = ast_resolve_node(dg, space, roots->val.v[i], true);
		for (int j = 0; v >= 0 && j < i && j < 64; j++)
			if (seen[j] == v)
				error_at(dg, roots->val.v[i]->loc, "root given twice");
		if (i < 64)
			seen[i] = v;
	}
	if (roots->val.n > 64)
		error_at(dg, roots->val.v[64]->loc, "a symmetric schedule has at most 64 base trees");
}

void
sema_schedule(Diag *dg, const Item *it, const NodeSpace *space,
              bool (*group_ok)(void *, const Expr *), void *ctx)
{
	const Schedule *sch = it->sched;
	for (int i = 0; i < sch->nmod; i++) {
		const Call *m = sch->mod[i];
		if (strcmp(m->name, "symmetric") == 0)
			check_symmetric(dg, m, space, group_ok, ctx);
		else if (strcmp(m->name, "contention_free") != 0 || m->parens)
			error_at(dg, m->loc, "unknown schedule modifier '%s' (a schedule may be declared "
			         "symmetric(group G, roots ...) and contention_free)", m->name);
		for (int j = 0; j < i; j++)
			if (strcmp(sch->mod[j]->name, m->name) == 0)
				error_at(dg, m->loc, "'%s' is given twice", m->name);
	}
	Scope *sc = xcalloc(1, sizeof *sc);
	for (int i = 0; i < sched_nbuiltin_names; i++)
		sc->name[sc->n++] = sched_builtin_names[i];
	check_stmts(dg, sc, sch->body, false);
	free(sc);
}
