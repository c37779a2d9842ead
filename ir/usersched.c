/*
 * usersched.c: a collective's `schedule { ... }` block (docs/language.md
 * section 13) run into an explicit schedule, the same IR every library
 * algorithm builds, so every backend, the simulator and the metrics take it
 * unchanged.
 *
 * Needs: a body sema_schedule passed (names bound, helpers known, sends in
 * rounds), the built topology and the communicator. Establishes: a Sched
 * whose messages are the body's sends, or a located error.
 *
 * Three steps. (1) Estimate: before anything is expanded, the body is
 * walked once with each loop's trip count taken at its bounds' extremes
 * (the loop variable set to the first and the last value of its range), so
 * a loop nest that would make more than MAX_SCHED_SENDS chunk transfers, or run
 * more than MAX_SCHED_ITERS iterations, is refused at the statement that crosses
 * the limit, naming the estimate. (2) Run: statements execute in order with
 * a round cursor; `round` takes the next round, `together` starts every
 * round and `use` inside it at the same round, `use` appends a library
 * schedule. Every value is checked where it is computed (ranks in 0..p-1,
 * chunks in 0..nchunks-1, links that exist), so errors point at the
 * expression. (3) Teach: on small cases (at most TEACH_RANKS ranks) the
 * transfers, each with its source location and the loop variables it ran
 * with, go to the teacher (teach.c), which reports the first fault at the
 * send that caused it; a contention_free schedule's links are checked there
 * too. verify() then proves the built schedule as it proves every other.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "ast.h"

enum {
	TEACH_RANKS = 64,      /* the teacher's exact sets are one word */
	TEACH_CELLS = 1 << 20, /* ranks x chunks */
	TEACH_SENDS = 1 << 18, /* transfers it keeps with their source */
	EST_SPLIT_DEPTH = 6,   /* loops deeper than this estimate from their first value */
	NAME_CACHE = 1024,     /* name uses remembered with their binding (direct-mapped) */
};

typedef struct Run {
	Diag *diag;  /* where this pass's diagnostics go (the run's, from the driver) */
	const AlgCtx *c;
	const Topo *t;
	const Item *item;
	const UserSymmetry *sym; /* a symmetric schedule: the body is its base transfers */
	Arena *a;
	Sched *s;
	SchedBuilder b;
	int p, nchunk;
	bool contention_free;
	/* the environment: builtins first */
	const char *name[MAX_SCHED_VARS];
	int64_t val[MAX_SCHED_VARS];
	int nvar;
	/* where a name was last found: a use always finds the same binding at
	 * the same place (bindings are never shadowed, blocks unwind in order),
	 * checked by the binder's own name pointer */
	struct { const Expr *use; const char *binder; int slot; } cache[NAME_CACHE];
	/* rounds */
	int cursor;            /* the next round */
	int round;             /* inside a round: its number, else -1 */
	bool together;
	int tog_base, tog_end;
	/* budgets */
	long sends, iters, uses;
	bool failed;
	int *buf;              /* a send's chunks */
	int capbuf;
	/* the transfers with their source, for the teacher and contention_free */
	bool teach, keep;
	TransferList tl;
} Run;

/* ---- values ---- */

static bool eval(Run *, const Expr *, int64_t *);

static bool
fail(Run *u)
{
	u->failed = true;
	return false;
}

static bool
lookup(Run *u, const Expr *e, int64_t *out)
{
	unsigned h = (unsigned)(((uintptr_t)e >> 4) * 2654435761u) % NAME_CACHE;
	int hit = u->cache[h].slot;
	if (u->cache[h].use == e && hit < u->nvar && u->name[hit] == u->cache[h].binder &&
	    hit != 3) {
		*out = u->val[hit];
		return true;
	}
	for (int i = u->nvar - 1; i >= 0; i--)
		if (u->name[i][0] == e->text[0] && strcmp(u->name[i], e->text) == 0) {
			u->cache[h].use = e;
			u->cache[h].binder = u->name[i];
			u->cache[h].slot = i;
			if (i == 3 && u->c->kind != CK_BROADCAST && u->c->kind != CK_REDUCE) {
				error_at(u->diag, e->loc, "'root' is the root of a broadcast or reduce; a %s has none",
				         coll_kind_name[u->c->kind]);
				return fail(u);
			}
			*out = u->val[i];
			return true;
		}
	die("usersched: '%s' is not bound", e->text);
}

static bool
rank_arg(Run *u, const Expr *e, int64_t *r)
{
	if (!eval(u, e, r))
		return false;
	if (*r < 0 || *r >= u->p) {
		error_at(u->diag, e->loc, "rank %lld is outside 0..%d (p = %d); wrap it with mod p",
		         (long long)*r, u->p - 1, u->p);
		return fail(u);
	}
	return true;
}

static bool
need_coords(Run *u, const Expr *e)
{
	if (u->t->ndim > 0)
		return true;
	error_at(u->diag, e->loc, "%s: '%s' has no coordinates (its nodes are named by id)", e->text,
	         u->t->name);
	return fail(u);
}

static bool
dim_arg(Run *u, const Expr *e, int64_t *d)
{
	if (!eval(u, e, d))
		return false;
	if (*d < 0 || *d >= u->t->ndim) {
		error_at(u->diag, e->loc, "dimension %lld is outside 0..%d ('%s' has %d)", (long long)*d,
		         u->t->ndim - 1, u->t->name, u->t->ndim);
		return fail(u);
	}
	return true;
}

/* The rank at a node, or a located error. */
static bool
rank_at(Run *u, const Expr *e, int node, int64_t *out)
{
	int r = u->s->node_rank[node];
	if (r < 0) {
		char name[64];
		topo_node_name(u->t, node, name, sizeof name);
		error_at(u->diag, e->loc, "node %s is not a rank of '%s'", name, u->c->name);
		return fail(u);
	}
	*out = r;
	return true;
}

static bool
topo_helper(Run *u, const Expr *e, const int64_t *v, int64_t *out)
{
	const Topo *t = u->t;
	int coord[MAX_DIMS];
	if (strcmp(e->text, "size") == 0) {
		*out = t->size[v[0]];
	} else if (strcmp(e->text, "coord") == 0) {
		topo_coords(t, u->c->rank_node[v[0]], coord);
		*out = coord[v[1]];
	} else if (strcmp(e->text, "rank") == 0) {
		if (e->nelem != t->ndim) {
			error_at(u->diag, e->loc, "rank takes %d coordinates on '%s', got %d", t->ndim, t->name,
			         e->nelem);
			return fail(u);
		}
		for (int i = 0; i < t->ndim; i++)
			coord[i] = (int)(v[i] % t->size[i]);
		return rank_at(u, e, topo_node(t, coord), out);
	} else { /* neighbor */
		if (v[2] != 1 && v[2] != -1) {
			error_at(u->diag, e->elem[2]->loc, "neighbor's direction is +1 or -1, got %lld",
			         (long long)v[2]);
			return fail(u);
		}
		topo_coords(t, u->c->rank_node[v[0]], coord);
		int next = coord[v[1]] + (int)v[2];
		if (t->kind == TK_MESH && (next < 0 || next >= t->size[v[1]])) {
			error_at(u->diag, e->loc, "rank %lld has no neighbour in direction %+lld of dimension %lld "
			         "(the edge of mesh '%s')", (long long)v[0], (long long)v[2],
			         (long long)v[1], t->name);
			return fail(u);
		}
		coord[v[1]] = next;
		return rank_at(u, e, topo_node(t, coord), out);
	}
	return true;
}

static bool
math_helper(Run *u, const Expr *e, const int64_t *v, int64_t *out)
{
	const char *f = e->text;
	if (strcmp(f, "xor") == 0) {
		*out = v[0] ^ v[1];
	} else if (strcmp(f, "min") == 0 || strcmp(f, "max") == 0) {
		*out = (v[0] < v[1]) == (f[1] == 'i') ? v[0] : v[1];
	} else if (strcmp(f, "abs") == 0) {
		if (v[0] == INT64_MIN) { /* its absolute value is not an int64 */
			error_at(u->diag, e->loc, "integer overflow: abs(%lld) is beyond 2^63 - 1", (long long)v[0]);
			return fail(u);
		}
		*out = v[0] < 0 ? -v[0] : v[0];
	} else if (strcmp(f, "bit") == 0) {
		if (v[1] < 0 || v[1] > 62) {
			error_at(u->diag, e->elem[1]->loc, "bit takes a bit number in 0..62, got %lld", (long long)v[1]);
			return fail(u);
		}
		*out = v[0] >> v[1] & 1;
	} else if (strcmp(f, "pow") == 0) {
		int64_t r = 1, base = v[0];
		if (v[1] < 0) {
			error_at(u->diag, e->elem[1]->loc, "pow takes an exponent of at least 0, got %lld",
			         (long long)v[1]);
			return fail(u);
		}
		for (int64_t k = v[1]; k > 0; k >>= 1) { /* by squaring: 63 steps at most */
			bool ovf = (k & 1) && __builtin_mul_overflow(r, base, &r);
			if (!ovf && k > 1)
				ovf = __builtin_mul_overflow(base, base, &base);
			if (ovf) {
				error_at(u->diag, e->loc, "integer overflow");
				return fail(u);
			}
		}
		*out = r;
	} else { /* log2, clog2 */
		if (v[0] < 1) {
			error_at(u->diag, e->elem[0]->loc, "%s takes a number of at least 1, got %lld", f,
			         (long long)v[0]);
			return fail(u);
		}
		int64_t l = 0;
		while (l < 62 && (INT64_C(1) << (l + 1)) <= v[0])
			l++;
		*out = l + (f[0] == 'c' && (INT64_C(1) << l) < v[0]);
	}
	return true;
}

/* gpu(b, i), rail(g): the rank at the node of that name, the name checked
 * as the language checks it outside schedules (ast_resolve_node). */
static bool
named_rank(Run *u, const Expr *e, int64_t *out)
{
	const Topo *t = u->t;
	Expr idx[2], *elem[2], name = *e;
	for (int i = 0; i < e->nelem && i < 2; i++) { /* sema checked the count */
		idx[i] = (Expr){.kind = EX_INT, .loc = e->elem[i]->loc, .unit = -1};
		if (!eval(u, e->elem[i], &idx[i].ival))
			return false;
		elem[i] = &idx[i];
	}
	name.elem = elem;
	NodeSpace sp = {.kind = t->kind, .form = topo_kind_name(t->kind), .ndim = t->ndim,
	                .nodes = t->nnode, .ranks = t->nrank, .ok = true};
	for (int i = 0; i < t->ndim; i++)
		sp.size[i] = t->size[i];
	topo_form_args(t, sp.arg);
	int64_t node = ast_resolve_node(u->diag, &sp, &name, false);
	if (node < 0)
		return fail(u);
	return rank_at(u, e, (int)node, out);
}

static bool
call(Run *u, const Expr *e, int64_t *out)
{
	if (node_word_nidx(e->text) > 0)
		return named_rank(u, e, out);
	int64_t v[MAX_DIMS + 1] = {0};
	const char *f = e->text;
	bool topo = strcmp(f, "coord") == 0 || strcmp(f, "size") == 0 || strcmp(f, "rank") == 0 ||
	            strcmp(f, "neighbor") == 0;
	if (topo && !need_coords(u, e))
		return false;
	if (e->nelem > MAX_DIMS + 1) {
		error_at(u->diag, e->loc, "%s takes at most %d values", f, MAX_DIMS);
		return fail(u);
	}
	for (int i = 0; i < e->nelem; i++) {
		bool ok = (strcmp(f, "coord") == 0 || strcmp(f, "neighbor") == 0) && i == 0
		              ? rank_arg(u, e->elem[i], &v[i])
		          : (strcmp(f, "size") == 0 && i == 0) ||
		                  ((strcmp(f, "coord") == 0 || strcmp(f, "neighbor") == 0) && i == 1)
		              ? dim_arg(u, e->elem[i], &v[i])
		              : eval(u, e->elem[i], &v[i]);
		if (!ok)
			return false;
	}
	if (topo)
		return topo_helper(u, e, v, out);
	if (strcmp(f, "owner") == 0) {
		if (u->c->kind != CK_REDUCE_SCATTER && u->c->kind != CK_ALLGATHER) {
			error_at(u->diag, e->loc, "owner(c) is the rank a chunk belongs to in a reduce_scatter or "
			         "allgather; a %s has no owners", coll_kind_name[u->c->kind]);
			return fail(u);
		}
		if (v[0] < 0 || v[0] >= u->nchunk) {
			error_at(u->diag, e->elem[0]->loc, "chunk %lld is outside 0..%d", (long long)v[0],
			         u->nchunk - 1);
			return fail(u);
		}
		*out = u->s->owner[v[0]];
		return true;
	}
	return math_helper(u, e, v, out);
}

static bool
arith(Run *u, const Expr *e, int64_t a, int64_t b, int64_t *out)
{
	bool ovf = false;
	switch (e->kind) {
	case EX_ADD: ovf = __builtin_add_overflow(a, b, out); break;
	case EX_SUB: ovf = __builtin_sub_overflow(a, b, out); break;
	case EX_MUL: ovf = __builtin_mul_overflow(a, b, out); break;
	case EX_DIV:
	case EX_MOD:
		if (e->kind == EX_DIV ? b == 0 : b <= 0) {
			error_at(u->diag, e->rhs->loc, e->kind == EX_DIV ? "division by zero"
			                                        : "mod takes a positive right side, got %lld",
			         (long long)b);
			return fail(u);
		}
		if (a == INT64_MIN && b == -1) {
			ovf = true;
			break;
		}
		*out = e->kind == EX_DIV ? a / b - ((a % b != 0) && ((a < 0) != (b < 0))) : (a % b + b) % b;
		break;
	case EX_EQ: *out = a == b; break;
	case EX_NE: *out = a != b; break;
	case EX_LT: *out = a < b; break;
	case EX_LE: *out = a <= b; break;
	case EX_GT: *out = a > b; break;
	case EX_GE: *out = a >= b; break;
	default: die("usersched: operator %d", (int)e->kind);
	}
	if (ovf) {
		error_at(u->diag, e->loc, "integer overflow");
		return fail(u);
	}
	return true;
}

static bool
eval(Run *u, const Expr *e, int64_t *out)
{
	int64_t a, b;
	switch (e->kind) {
	case EX_INT:
		*out = e->ival;
		return true;
	case EX_NAME:
		return lookup(u, e, out);
	case EX_TUPLE:
		return eval(u, e->elem[0], out);
	case EX_CALL:
		return call(u, e, out);
	case EX_NEG:
		if (!eval(u, e->lhs, &a))
			return false;
		if (a == INT64_MIN) {
			error_at(u->diag, e->loc, "integer overflow");
			return fail(u);
		}
		*out = -a;
		return true;
	case EX_NOT:
		if (!eval(u, e->lhs, &a))
			return false;
		*out = !a;
		return true;
	case EX_AND:
	case EX_OR:
		if (!eval(u, e->lhs, &a))
			return false;
		if ((e->kind == EX_AND) != (a != 0)) { /* decided by the left side */
			*out = a != 0;
			return true;
		}
		if (!eval(u, e->rhs, &b))
			return false;
		*out = b != 0;
		return true;
	case EX_RANGE:
	case EX_REAL:
		die("usersched: a range or a decimal where sema allows none");
	default:
		if (!eval(u, e->lhs, &a) || !eval(u, e->rhs, &b))
			return false;
		return arith(u, e, a, b, out);
	}
}

/* lo..hi, or a single value as lo = hi. */
static bool
eval_range(Run *u, const Expr *e, int64_t *lo, int64_t *hi)
{
	if (e->kind != EX_RANGE) {
		if (!eval(u, e, lo))
			return false;
		*hi = *lo;
		return true;
	}
	return eval(u, e->lhs, lo) && eval(u, e->rhs, hi);
}

static void
bind(Run *u, const char *name, int64_t v)
{
	if (u->nvar == MAX_SCHED_VARS)
		die("usersched: more names than sema allows");
	u->name[u->nvar] = name;
	u->val[u->nvar++] = v;
}

/* ---- (1) the estimate ---- */

typedef struct Work {
	double sends, iters;
} Work;

static Work est_stmts(Run *, const StmtList *, int depth);

static Work
work_max(Work a, Work b)
{
	return (Work){a.sends > b.sends ? a.sends : b.sends, a.iters > b.iters ? a.iters : b.iters};
}

static Work
est_for(Run *u, const Stmt *s, int depth)
{
	int64_t lo, hi;
	Work w = {0, 0};
	if (!eval_range(u, s->value, &lo, &hi) || hi < lo)
		return w;
	double trips = (double)hi - (double)lo + 1;
	int n = u->nvar;
	bind(u, s->name, lo);
	Work body = est_stmts(u, s->body, depth + 1);
	u->nvar = n;
	if (depth < EST_SPLIT_DEPTH && hi != lo) {
		bind(u, s->name, hi);
		body = work_max(body, est_stmts(u, s->body, depth + 1));
		u->nvar = n;
	}
	w.sends = trips * body.sends;
	w.iters = trips * (1 + body.iters);
	return w;
}

static Work
est_stmt(Run *u, const Stmt *s, int depth)
{
	int64_t lo, hi;
	Work w = {0, 1};
	switch (s->kind) {
	case ST_LET:
		bind(u, s->name, eval(u, s->value, &lo) ? lo : 0);
		break;
	case ST_FOR:
		return est_for(u, s, depth);
	case ST_IF: {
		Work a = est_stmts(u, s->body, depth), b = {0, 0};
		if (s->orelse)
			b = est_stmts(u, s->orelse, depth);
		w = work_max(a, b);
		w.iters += 1;
		break;
	}
	case ST_ROUND:
	case ST_TOGETHER:
		w = est_stmts(u, s->body, depth);
		w.iters += 1;
		break;
	case ST_SEND:
		w.sends = eval_range(u, s->value, &lo, &hi) && hi >= lo ? (double)hi - (double)lo + 1 : 1;
		break;
	case ST_USE: /* at least a transfer per rank; counted in full when built */
		w.sends = s->list.n ? 2 * s->list.n : u->p;
		break;
	}
	return w;
}

static Work
est_stmts(Run *u, const StmtList *l, int depth)
{
	Work w = {0, 0};
	int n = u->nvar;
	for (int i = 0; i < l->n; i++) {
		Work x = est_stmt(u, l->v[i], depth);
		w.sends += x.sends;
		w.iters += x.iters;
	}
	u->nvar = n;
	return w;
}

/* Refuses a body whose estimate passes a limit, at the top-level statement
 * that crosses it. Values that fail to evaluate are reported by the run. */
static int
estimate(Run *u)
{
	const StmtList *l = u->item->sched->body;
	Work total = {0, 0};
	int n = u->nvar;
	diag_mute(u->diag, true);
	int at = -1;
	for (int i = 0; i < l->n && at < 0; i++) {
		Work x = est_stmt(u, l->v[i], 0);
		total.sends += x.sends;
		total.iters += x.iters;
		if (total.sends > MAX_SCHED_SENDS || total.iters > MAX_SCHED_ITERS)
			at = i;
	}
	diag_mute(u->diag, false);
	u->nvar = n;
	u->failed = false;
	if (at < 0) {
		u->teach = u->p <= TEACH_RANKS && (long)u->p * u->nchunk <= TEACH_CELLS &&
		           total.sends <= TEACH_SENDS;
		u->keep = u->teach || u->contention_free || topo_has_parallel_links(u->t);
		return 0;
	}
	if (total.sends > MAX_SCHED_SENDS)
		error_at(u->diag, l->v[at]->loc, "this schedule would send about %.0f chunk transfers; the limit "
		         "is %d (estimated before expanding its loops)", total.sends, MAX_SCHED_SENDS);
	else
		error_at(u->diag, l->v[at]->loc, "this schedule would run about %.0f loop iterations; the limit "
		         "is %d (estimated before expanding its loops)", total.iters, MAX_SCHED_ITERS);
	return -1;
}

/* ---- (2) the run ---- */

static bool exec_stmts(Run *, const StmtList *);

static const char *
vars_text(Run *u)
{
	char buf[256];
	int n = 0;
	buf[0] = 0;
	for (int i = sched_nbuiltin_names; i < u->nvar && n < (int)sizeof buf - 40; i++)
		n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%s = %lld", n ? ", " : "", u->name[i],
		              (long long)u->val[i]);
	return n ? arena_strdup(u->a, buf) : "";
}

static void
record(Run *u, int round, int src, int dst, XferOp op, const int *chunks, int n,
       const int *links, int nlink, Loc loc)
{
	if (!u->keep)
		return;
	/* malloc'd, freed when the schedule is built; contention_free alone
	 * needs neither the chunks nor the loop variables */
	TransferList *l = &u->tl;
	if (!u->teach)
		n = 0;
	Transfer x = {.round = round, .src = src, .dst = dst, .op = op, .first = l->nchunk, .n = n,
	              .lfirst = l->nlink, .nlink = nlink, .loc = loc,
	              .vars = u->teach ? vars_text(u) : ""};
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->x = xrealloc(l->x, (size_t)l->cap * sizeof *l->x);
	}
	l->x[l->n++] = x;
	if (l->nchunk + n > l->capchunk) {
		l->capchunk = 2 * (l->nchunk + n) + 256;
		l->chunk = xrealloc(l->chunk, (size_t)l->capchunk * sizeof *l->chunk);
	}
	if (n > 0) /* none kept past the teacher's ranks: the list may be NULL */
		memcpy(l->chunk + l->nchunk, chunks, (size_t)n * sizeof *chunks);
	l->nchunk += n;
	if (l->nlink + nlink > l->caplink) {
		l->caplink = 2 * (l->nlink + nlink) + 256;
		l->link = xrealloc(l->link, (size_t)l->caplink * sizeof *l->link);
	}
	if (nlink > 0)
		memcpy(l->link + l->nlink, links, (size_t)nlink * sizeof *links);
	l->nlink += nlink;
}

static bool
exec_send(Run *u, const Stmt *s)
{
	int64_t lo, hi, src, dst;
	if (!eval_range(u, s->value, &lo, &hi) || !rank_arg(u, s->from, &src) ||
	    !rank_arg(u, s->to, &dst))
		return false;
	if (hi < lo) {
		error_at(u->diag, s->value->loc, "empty chunk range %lld..%lld", (long long)lo, (long long)hi);
		return fail(u);
	}
	if (lo < 0 || hi >= u->nchunk) {
		error_at(u->diag, s->value->loc, "chunk %lld is outside 0..%d (nchunks = %d)",
		         (long long)(lo < 0 ? lo : hi), u->nchunk - 1, u->nchunk);
		return fail(u);
	}
	if (src == dst) {
		error_at(u->diag, s->loc, "rank %lld sends to itself", (long long)src);
		return fail(u);
	}
	u->sends += hi - lo + 1;
	if (u->sends > MAX_SCHED_SENDS) {
		error_at(u->diag, s->loc, "the schedule sends more than %d chunk transfers (its loop bounds "
		         "grow past the estimate)", MAX_SCHED_SENDS);
		return fail(u);
	}
	int n = (int)(hi - lo + 1);
	if (n > u->capbuf) {
		u->capbuf = n;
		u->buf = xrealloc(u->buf, (size_t)n * sizeof *u->buf);
	}
	for (int i = 0; i < n; i++)
		u->buf[i] = (int)lo + i;
	int a = u->c->rank_node[src], b = u->c->rank_node[dst], one, nlink;
	const int *links;
	char na[64], nb[64];
	if (s->over) {
		int64_t copy = 0;
		if (s->link && !eval(u, s->link, &copy))
			return false;
		one = copy >= 0 && copy < 1 << 20 ? topo_find_link(u->t, a, b, (int)copy) : -1;
		if (one < 0) {
			topo_node_name(u->t, a, na, sizeof na);
			topo_node_name(u->t, b, nb, sizeof nb);
			error_at(u->diag, s->link ? s->link->loc : s->loc, "there is no link%s from node %s (rank "
			         "%lld) to node %s (rank %lld); leave out 'over link' to route it",
			         s->link ? " of that number" : "", na, (long long)src, nb, (long long)dst);
			return fail(u);
		}
		links = &one;
		nlink = 1;
	} else if ((nlink = route_get(u->c->routes, a, b, &links)) < 0) {
		topo_node_name(u->t, a, na, sizeof na);
		topo_node_name(u->t, b, nb, sizeof nb);
		error_at(u->diag, s->loc, "node %s cannot reach node %s", na, nb);
		return fail(u);
	}
	XferOp op = strcmp(s->name, "reduce") == 0 ? X_REDUCE : X_COPY;
	sched_msg_route(&u->b, u->round, (int)src, (int)dst, op, u->buf, n, links, nlink);
	record(u, u->round, (int)src, (int)dst, op, u->buf, n, links, nlink, s->loc);
	return true;
}

/* The round a `round` or `use` starts at, and the cursor after it. */
static int
take_rounds(Run *u, int n)
{
	if (u->together) {
		if (u->tog_base + n > u->tog_end)
			u->tog_end = u->tog_base + n;
		return u->tog_base;
	}
	u->cursor += n;
	return u->cursor - n;
}

static bool
use_ranks(Run *u, const Stmt *s, int *rank_node, int *nrank)
{
	unsigned char *seen = xcalloc((size_t)u->p, 1);
	bool ok = true;
	*nrank = 0;
	for (int i = 0; i < s->list.n && ok; i++) {
		const Expr *e = s->list.v[i];
		int64_t lo, hi;
		ok = eval_range(u, e, &lo, &hi);
		int64_t step = lo <= hi ? 1 : -1; /* ranges count down as in `ranks` */
		for (int64_t r = lo; ok; r += step) {
			if (r < 0 || r >= u->p || seen[r]) {
				error_at(u->diag, e->loc, r < 0 || r >= u->p ? "rank %lld is outside 0..%d"
				                                     : "rank %lld is listed twice",
				         (long long)r, u->p - 1);
				ok = fail(u);
				break;
			}
			seen[r] = 1;
			rank_node[(*nrank)++] = u->c->rank_node[r];
			if (r == hi)
				break;
		}
	}
	free(seen);
	if (ok && *nrank < 2) {
		error_at(u->diag, s->loc, "use needs at least 2 ranks");
		ok = fail(u);
	}
	return ok;
}

/* A library algorithm's schedule on all ranks or a sub-communicator, its
 * rounds appended at the cursor, its ranks and chunks the collective's. */
static bool
exec_use(Run *u, const Stmt *s)
{
	if (++u->uses > MAX_SCHED_USES) {
		error_at(u->diag, s->loc, "the schedule uses more than %d library schedules", MAX_SCHED_USES);
		return fail(u);
	}
	int *rank_node = xmalloc((size_t)u->p * sizeof *rank_node), nrank = u->p;
	if (s->list.n == 0)
		memcpy(rank_node, u->c->rank_node, (size_t)u->p * sizeof *rank_node);
	else if (!use_ranks(u, s, rank_node, &nrank)) {
		free(rank_node);
		return false;
	}
	AlgCtx c = *u->c;
	c.loc = s->loc;
	c.rank_node = rank_node;
	c.nrank = nrank;
	c.chunks = u->nchunk;
	c.algorithm = s->call->name;
	for (int k = 0; k < NCOLLKIND; k++)
		if (strcmp(coll_kind_name[k], s->name) == 0)
			c.kind = (CollKind)k;
	c.whole = nrank == u->t->nrank;
	for (int i = 0; c.whole && i < nrank; i++)
		c.whole = rank_node[i] == i;
	c.root = 0;
	if (!alg_call_options(u->a, &c, s->call)) {
		free(rank_node);
		return fail(u);
	}
	bool missing = false;
	Sched *x = alg_build(&c, &missing);
	if (missing)
		error_at(u->diag, s->call->loc, "unknown algorithm '%s' (use takes a library algorithm)",
		         s->call->name);
	if (x && sched_nreconfig(x) > 0) {
		/* its rounds would need the switch's configurations in the composed schedule */
		error_at(u->diag, s->call->loc, "use %s: a schedule that rewires the optical circuits cannot be "
		         "composed; use one without reconfigurations (s_bruck, bridge(reconfigs 0))",
		         s->call->name);
		x = NULL;
	}
	if (!x) {
		free(rank_node);
		return fail(u);
	}
	int base = take_rounds(u, x->nround);
	for (int i = 0; i < x->nmsg; i++) {
		const Msg *m = &x->msg[i];
		int src = u->s->node_rank[rank_node[m->src]], dst = u->s->node_rank[rank_node[m->dst]];
		u->sends += m->n;
		sched_msg_route(&u->b, base + m->round, src, dst, m->op, x->chunks + m->first, m->n,
		                x->route_link + x->route_off[m->route], sched_route_len(x, m->route));
		record(u, base + m->round, src, dst, m->op, x->chunks + m->first, m->n,
		       x->route_link + x->route_off[m->route], sched_route_len(x, m->route), s->loc);
	}
	free(rank_node);
	if (u->sends > MAX_SCHED_SENDS) {
		error_at(u->diag, s->loc, "the schedule sends more than %d chunk transfers", MAX_SCHED_SENDS);
		return fail(u);
	}
	return true;
}

static bool
exec_for(Run *u, const Stmt *s)
{
	int64_t lo, hi;
	if (!eval_range(u, s->value, &lo, &hi))
		return false;
	int n = u->nvar;
	bind(u, s->name, lo);
	for (int64_t i = lo; i <= hi && !u->failed; i++) {
		u->val[n] = i;
		if (++u->iters > MAX_SCHED_ITERS) {
			error_at(u->diag, s->loc, "the schedule runs more than %d loop iterations (its loop bounds "
			         "grow past the estimate)", MAX_SCHED_ITERS);
			return fail(u);
		}
		exec_stmts(u, s->body);
		if (i == INT64_MAX)
			break;
	}
	u->nvar = n;
	return !u->failed;
}

static bool
exec_stmt(Run *u, const Stmt *s)
{
	int64_t v;
	switch (s->kind) {
	case ST_LET:
		if (!eval(u, s->value, &v))
			return false;
		bind(u, s->name, v);
		return true;
	case ST_FOR:
		return exec_for(u, s);
	case ST_IF:
		if (!eval(u, s->value, &v))
			return false;
		return v ? exec_stmts(u, s->body) : !s->orelse || exec_stmts(u, s->orelse);
	case ST_ROUND:
		u->round = take_rounds(u, 1);
		exec_stmts(u, s->body);
		u->round = -1;
		return !u->failed;
	case ST_TOGETHER: {
		bool was = u->together;
		int base = u->tog_base, end = u->tog_end;
		if (!was)
			u->tog_base = u->tog_end = u->cursor;
		u->together = true;
		exec_stmts(u, s->body);
		u->together = was;
		if (!was) {
			u->cursor = u->tog_end;
			u->tog_base = base;
			u->tog_end = end;
		}
		return !u->failed;
	}
	case ST_SEND:
		return exec_send(u, s);
	case ST_USE:
		return exec_use(u, s);
	}
	return false;
}

static bool
exec_stmts(Run *u, const StmtList *l)
{
	int n = u->nvar;
	for (int i = 0; i < l->n && !u->failed; i++)
		exec_stmt(u, l->v[i]);
	u->nvar = n;
	return !u->failed;
}

/* ---- the pass ---- */

static int
natural_chunks(const AlgCtx *c)
{
	switch (c->kind) {
	case CK_ALLTOALL: return c->nrank * c->nrank;
	case CK_BROADCAST:
	case CK_REDUCE: return 1;
	default: return c->nrank;
	}
}

/* A symmetric schedule: an allreduce, reduce_scatter or allgather whose
 * roots are ranks, with chunks (if given) trees x the group's order. Its
 * body runs on one chunk per base tree, owned by (ending or starting at)
 * the tree's root. */
static int
symmetric_layout(Run *u)
{
	const UserSymmetry *y = u->sym;
	const AlgCtx *c = u->c;
	Sched *s = u->s;
	char node[64];
	if (c->kind != CK_ALLREDUCE && c->kind != CK_REDUCE_SCATTER && c->kind != CK_ALLGATHER) {
		error_at(u->diag, y->loc, "a symmetric schedule implements allreduce, reduce_scatter or "
		         "allgather, not %s", coll_kind_name[c->kind]);
		return -1;
	}
	for (int b = 0; b < y->nroot; b++)
		if (s->node_rank[y->root[b]] < 0) {
			topo_node_name(u->t, y->root[b], node, sizeof node);
			error_at(u->diag, y->loc, "root %s is not a rank of '%s'", node, c->name);
			return -1;
		}
	long whole = (long)y->nroot * y->group->order;
	if (c->chunks && c->chunks != whole) {
		error_at(u->diag, y->loc, "symmetric cuts the vector into %ld chunks (%d tree%s x a group of "
		         "order %d); chunks %d is not that", whole, y->nroot, y->nroot == 1 ? "" : "s",
		         y->group->order, c->chunks);
		return -1;
	}
	u->nchunk = s->nchunk = y->nroot;
	s->owner = arena_array(u->a, (size_t)y->nroot, sizeof *s->owner);
	for (int b = 0; b < y->nroot; b++)
		s->owner[b] = s->node_rank[y->root[b]];
	return 0;
}

/* The chunk layout: what each chunk means for the postcondition. */
static int
layout(Run *u)
{
	const AlgCtx *c = u->c;
	Sched *s = u->s;
	if (u->sym)
		return symmetric_layout(u);
	int per = c->kind == CK_ALLTOALL ? u->p * u->p : u->p;
	if ((c->kind == CK_ALLTOALL || c->kind == CK_REDUCE_SCATTER || c->kind == CK_ALLGATHER) &&
	    u->nchunk % per != 0) {
		error_at(u->diag, u->item->loc, "a %s schedule cuts the vector into a multiple of %d chunks (%s "
		         "per rank%s); chunks %d is not one", coll_kind_name[c->kind], per,
		         c->kind == CK_ALLTOALL ? "p blocks" : "a block",
		         c->kind == CK_ALLTOALL ? ", one per destination" : "", u->nchunk);
		return -1;
	}
	s->nchunk = u->nchunk;
	s->root = c->root;
	int m = u->nchunk / per;
	if (c->kind == CK_REDUCE_SCATTER || c->kind == CK_ALLGATHER) {
		s->owner = arena_array(u->a, (size_t)u->nchunk, sizeof *s->owner);
		for (int k = 0; k < u->nchunk; k++)
			s->owner[k] = k / m;
	}
	if (c->kind == CK_ALLTOALL) {
		s->a2a_src = arena_array(u->a, (size_t)u->nchunk, sizeof *s->a2a_src);
		s->a2a_dst = arena_array(u->a, (size_t)u->nchunk, sizeof *s->a2a_dst);
		for (int k = 0; k < u->nchunk; k++) {
			s->a2a_src[k] = k / m / u->p;
			s->a2a_dst[k] = k / m % u->p;
		}
	}
	return 0;
}

/* Base tree b of a symmetric schedule, read off its transfers: a reduce
 * makes its receiver the sender's parent, a copy its sender the receiver's
 * (the first transfer that says so counts). It must span the ranks. */
static Tree *
base_tree(Run *u, const Sched *base, int b)
{
	const Topo *t = u->t;
	int *parent = arena_array(u->a, (size_t)t->nnode, sizeof *parent);
	for (int v = 0; v < t->nnode; v++)
		parent[v] = -1;
	int root = u->sym->root[b];
	for (int i = 0; i < base->nmsg; i++) {
		const Msg *m = &base->msg[i];
		int src = base->rank_node[m->src], dst = base->rank_node[m->dst];
		int child = m->op == X_REDUCE ? src : dst, up = m->op == X_REDUCE ? dst : src;
		for (int k = 0; k < m->n; k++)
			if (base->chunks[m->first + k] == b && parent[child] < 0 && child != root)
				parent[child] = up;
	}
	Tree *tr = tree_from_parents(u->diag, u->a, t, u->c->routes, &root, 1, parent, u->sym->loc);
	char node[64], rn[64];
	for (int r = 0; tr && r < u->p; r++)
		if (tr->depth[u->c->rank_node[r]] < 0) {
			topo_node_name(t, u->c->rank_node[r], node, sizeof node);
			topo_node_name(t, root, rn, sizeof rn);
			error_at(u->diag, u->sym->loc, "the base transfers of tree %d (root %s) do not reach node %s "
			         "(rank %d): a symmetric schedule's transfers of each chunk form a tree over "
			         "the ranks", b, rn, node, r);
			return NULL;
		}
	return tr;
}

/* The base schedule (one chunk per tree, verified by the teacher) as the
 * symmetric form: its transfers become base transfers between nodes, and
 * chunk (b, g) is b * order + g. NULL after reporting. */
static Sched *
symmetric_form(Run *u, const Sched *base)
{
	const UserSymmetry *y = u->sym;
	const AlgCtx *c = u->c;
	Sched *s = sched_new(u->a, c->name, c->loc, c->kind, "schedule", u->t, c->rank_node, u->p);
	s->group = y->group;
	s->ntree = y->nroot;
	s->tree = arena_array(u->a, (size_t)y->nroot, sizeof *s->tree);
	for (int b = 0; b < y->nroot; b++)
		if (!(s->tree[b] = base_tree(u, base, b)))
			return NULL;
	if (group_keeps_ranks(u->diag, s, y->group, y->loc) != 0)
		return NULL;
	s->nchunk = y->nroot * y->group->order;
	s->nround = base->nround;
	SchedBuilder sb;
	sched_begin(&sb, u->a, s, c->routes);
	int cap = 0;
	for (int i = 0; i < base->nmsg; i++) {
		const Msg *m = &base->msg[i];
		int route = sched_route(&sb, base->route_link + base->route_off[m->route],
		                        sched_route_len(base, m->route));
		for (int k = 0; k < m->n; k++) {
			BaseXfer x = {.round = m->round, .tree = base->chunks[m->first + k],
			              .src = base->rank_node[m->src], .dst = base->rank_node[m->dst],
			              .route = route, .op = m->op};
			VEC_PUSH(u->a, s->base, s->nbase, cap, x);
		}
	}
	sched_end(u->diag, &sb);
	s->owner = arena_array(u->a, (size_t)s->nchunk, sizeof *s->owner);
	for (int b = 0; b < y->nroot; b++)
		for (int e = 0; e < y->group->order; e++)
			s->owner[b * y->group->order + e] =
				s->node_rank[group_node(y->group, e, y->root[b])];
	return s;
}

static bool
has_mod(const Schedule *sch, const char *name)
{
	for (int i = 0; i < sch->nmod; i++)
		if (strcmp(sch->mod[i]->name, name) == 0)
			return true;
	return false;
}

Sched *
usersched_build(const AlgCtx *c, const Item *item, const UserSymmetry *sym)
{
	Run *u = xcalloc(1, sizeof *u);
	u->diag = c->diag;
	u->sym = sym;
	u->c = c;
	u->t = c->topo;
	u->item = item;
	u->a = c->arena;
	u->p = c->nrank;
	u->nchunk = sym ? sym->nroot : c->chunks ? c->chunks : natural_chunks(c);
	u->round = -1;
	u->contention_free = has_mod(item->sched, "contention_free");
	u->s = sched_new(c->arena, c->name, c->loc, c->kind, "schedule", c->topo, c->rank_node,
	                 c->nrank);
	Sched *s = u->s;
	int64_t builtin[] = {u->p, u->nchunk, u->t->ndim, c->root};
	for (int i = 0; i < sched_nbuiltin_names; i++)
		bind(u, sched_builtin_names[i], builtin[i]);
	int rc = layout(u);
	if (rc == 0)
		rc = estimate(u);
	if (rc == 0) {
		sched_begin(&u->b, c->arena, s, c->routes);
		rc = exec_stmts(u, item->sched->body) ? 0 : -1;
		if (rc == 0 && s->nmsg == 0) {
			error_at(c->diag, item->loc, "schedule of '%s' sends nothing", c->name);
			rc = -1;
		}
		if (rc == 0)
			rc = sched_end(c->diag, &u->b); /* -1: routes past MAX_ROUTE_HOPS, reported */
		if (rc == 0) {
			transfers_sort(&u->tl);
			if (u->keep)
				rc = teach_merged(c->diag, s, &u->tl, u->a, u->contention_free, c->trace);
			if (rc == 0 && u->contention_free)
				rc = teach_contention(c->diag, s, &u->tl, u->a, c->trace);
			if (rc == 0 && u->teach)
				rc = teach_transfers(c->diag, s, &u->tl, item->loc, u->a, c->trace);
			if (rc == 0 && sym)
				s = symmetric_form(u, s);
			if (!s)
				rc = -1;
		} else {
			sched_abort(&u->b);
		}
	}
	free(u->buf);
	free(u->tl.x), free(u->tl.chunk), free(u->tl.link);
	free(u);
	return rc == 0 ? s : NULL;
}
