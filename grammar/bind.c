/*
 * bind.c: a call's arguments onto a form's signature (registry.h's
 * FormSpec), and a topology form's node space from its bound arguments.
 * Needs: a parsed Call; for ast_topo_space, arguments sema has checked.
 * Establishes: the one reading of a call that sema checks and lowering
 * builds from, so a value is read only as the parameter its form declares.
 */
#include <stdio.h>
#include <string.h>

#include "ast.h"

/* A label the form does not have: the nearest one it has, if any. */
static void
unknown_label(Diag *dg, const FormSpec *f, const Arg *arg)
{
	const char *labels[MAX_PARAMS];
	int nl = 0;
	for (int i = 0; i < MAX_PARAMS; i++)
		if (f->param[i].label)
			labels[nl++] = f->param[i].label;
	const char *near = nearest_name(arg->label, labels, nl);
	if (near)
		error_at(dg, arg->loc, "%s has no argument '%s'; did you mean '%s'? (usage: %s)", f->name,
		         arg->label, near, f->usage);
	else
		error_at(dg, arg->loc, "%s has no argument '%s' (usage: %s)", f->name, arg->label,
		         f->usage);
}

static int
label_index(const FormSpec *f, const char *label)
{
	for (int i = 0; i < MAX_PARAMS; i++)
		if (f->param[i].label && strcmp(f->param[i].label, label) == 0)
			return i;
	return -1;
}

int
ast_bind(Diag *dg, Arena *a, const Call *c, const FormSpec *f, Bound *out, bool report, bool *bad_label)
{
	int ok = 1, npos = 0, posi = 0;
	const ParamSpec *pos[MAX_PARAMS];
	memset(out, 0, sizeof(Bound) * MAX_PARAMS);
	*bad_label = false;
	for (int i = 0; i < MAX_PARAMS && f->param[i].kind != A_END; i++)
		if (!f->param[i].label)
			pos[npos++] = &f->param[i];
	for (int k = 0; k < c->narg; k++) {
		const Arg *arg = &c->arg[k];
		if (arg->label) {
			int pi = label_index(f, arg->label);
			if (pi < 0 || out[pi].n > 0) {
				if (report && pi < 0)
					unknown_label(dg, f, arg);
				else if (report)
					error_at(dg, arg->loc, "'%s' is given twice", arg->label);
				*bad_label |= pi < 0;
				ok = 0;
				continue;
			}
			out[pi] = (Bound){arg->val.v, arg->val.n, arg->loc};
			continue;
		}
		while (posi < npos && pos[posi]->max && out[pos[posi] - f->param].n >= pos[posi]->max)
			posi++;
		if (posi >= npos) {
			if (report)
				error_at(dg, arg->loc, "too many arguments to %s (usage: %s)", f->name, f->usage);
			return -1;
		}
		Bound *b = &out[pos[posi] - f->param];
		if (b->n == 0) {
			b->v = arena_array(a, (size_t)c->narg, sizeof *b->v);
			b->loc = arg->loc;
		}
		b->v[b->n++] = arg->val.v[0];
	}
	return ok;
}

/* "bi|alter" as "'bi' or 'alter'" (without the outer quotes) */
static const char *
words_text(const char *words, char *buf, size_t len)
{
	size_t w = 0;
	for (const char *q = words; *q && w + 8 < len; q++)
		w += (size_t)snprintf(buf + w, len - w, "%s", *q == '|' ? "' or '" : (char[]){*q, 0});
	return buf;
}

/* How many values parameter ps got, against its min and max. */
static bool
check_count(Diag *dg, const Call *c, const FormSpec *f, const ParamSpec *ps, const Bound *b,
            bool bad_label)
{
	if (b->n < ps->min) {
		if (bad_label)
			; /* the misspelt label was reported; "needs X" would say it twice */
		else if (b->n == 0 && ps->label)
			error_at(dg, c->loc, "%s needs '%s' (usage: %s)", f->name, ps->label, f->usage);
		else if (b->n == 0 && ps->kind == A_WORD)
			error_at(dg, c->loc, "%s needs '%s' (usage: %s)", f->name,
			         words_text(ps->words, (char[64]){0}, 64), f->usage);
		else if (b->n == 0)
			error_at(dg, c->loc, "%s needs %s (usage: %s)", f->name,
			         c->narg ? "more arguments" : "arguments", f->usage);
		else
			error_at(dg, b->loc, "%s needs %s%d %s (usage: %s)", f->name,
			         ps->min == ps->max ? "" : "at least ", ps->min,
			         ps->label ? ps->label : "arguments", f->usage);
		return false;
	}
	if (ps->max && b->n > ps->max) {
		error_at(dg, b->v[ps->max]->loc, "%s takes at most %d %s (usage: %s)", f->name, ps->max,
		         ps->label ? ps->label : "arguments", f->usage);
		return false;
	}
	return true;
}

/* One value of parameter ps: of the parameter's kind, and in range. */
static bool
check_value(Diag *dg, const FormSpec *f, const ParamSpec *ps, const Expr *e, const NodeSpace *ctx)
{
	int64_t v;
	switch (ps->kind) {
	case A_END:
		break;
	case A_TOPO:
	case A_GROUP:
	case A_TREES:
		if (e->kind != EX_NAME) {
			error_at(dg, e->loc, "expected the name of a %s",
			         ps->kind == A_TOPO ? "topology" : ps->kind == A_GROUP ? "group" : "tree");
			return false;
		}
		break;
	case A_INT:
		if (ps->words && e->kind == EX_NAME) { /* `segments auto`: a word it also takes */
			if (ast_word_index(e->text, ps->words) >= 0)
				break;
			char words[64];
			error_at(dg, e->loc, "%s's %s takes a number or '%s', got '%s' (usage: %s)", f->name,
			         ps->label, words_text(ps->words, words, sizeof words), e->text, f->usage);
			return false;
		}
		if (e->kind == EX_NAME && strcmp(e->text, "auto") == 0) { /* a keyword: no param's name */
			error_at(dg, e->loc, "%s's %s takes a number, not 'auto' (usage: %s)", f->name,
			         ps->label ? ps->label : "size", f->usage);
			return false;
		}
		if (!ast_eval_int(dg, e, &v, true))
			return false;
		if (v < ps->lo || v > ps->hi) {
			error_at(dg, e->loc, "%s %s of %s must be at %s %lld, got %lld",
			         ps->label ? "the" : "each", ps->label ? ps->label : "size", f->name,
			         v < ps->lo ? "least" : "most", (long long)(v < ps->lo ? ps->lo : ps->hi),
			         (long long)v);
			return false;
		}
		break;
	case A_NODE:
		if (ctx && ast_resolve_node(dg, ctx, e, true) < 0)
			return false;
		break;
	case A_STRING:
		if (e->kind != EX_STRING) {
			error_at(dg, e->loc, "%s takes a string here: a file's path in double quotes (usage: %s)",
			         f->name, f->usage);
			return false;
		}
		break;
	case A_SOURCE:
		if (e->kind != EX_CALL || topo_source_find(e->text) < 0) {
			error_at(dg, e->loc, "%s's %s takes nccl_topo(\"FILE.xml\"): NCCL's topology file of "
			         "one box (docs/gpu-clusters.md)", f->name, ps->label);
			return false;
		}
		if (e->nelem != 1 || e->elem[0]->kind != EX_STRING) {
			error_at(dg, e->loc, "%s takes one string: its file's path in double quotes (usage: %s)",
			         e->text, topo_sources[topo_source_find(e->text)].usage);
			return false;
		}
		break;
	case A_WORD:
		if (e->kind != EX_NAME || ast_word_index(e->text, ps->words) < 0) {
			char words[64];
			error_at(dg, e->loc, "%s takes '%s' here", f->name,
			         words_text(ps->words, words, sizeof words));
			return false;
		}
		break;
	}
	return true;
}

bool
ast_bind_check(Diag *dg, Arena *a, const Call *c, const FormSpec *f, const NodeSpace *ctx, Bound *out)
{
	bool bad_label;
	int bound = ast_bind(dg, a, c, f, out, true, &bad_label);
	if (bound < 0)
		return false;
	bool ok = bound == 1;
	for (int i = 0; i < MAX_PARAMS && f->param[i].kind != A_END; i++) {
		const ParamSpec *ps = &f->param[i];
		if (!check_count(dg, c, f, ps, &out[i], bad_label)) {
			ok = false;
			continue;
		}
		for (int j = 0; j < out[i].n; j++)
			ok &= check_value(dg, f, ps, out[i].v[j], ctx);
	}
	return ok;
}

/* The index of word in "a|b|c", or -1. */
int
ast_word_index(const char *word, const char *words)
{
	size_t n = strlen(word);
	int i = 0;
	for (const char *p = words; *p; i++) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && strncmp(p, word, n) == 0)
			return i;
		if (!bar)
			break;
		p = bar + 1;
	}
	return -1;
}

/* The sizes of a TR_DIMS or TR_DIM_SWITCHES parameter onto sh's coordinates. */
static bool
add_dims(Diag *dg, NodeSpace *sh, const Bound *b, int64_t *ranks)
{
	for (int j = 0; j < b->n; j++) {
		int64_t *size = &sh->size[sh->ndim++];
		ast_eval_int(dg, b->v[j], size, false);
		if (__builtin_mul_overflow(*ranks, *size, ranks) || *ranks > MAX_NODES) {
			error_at(dg, b->v[j]->loc, "%s has more than %d nodes", sh->form, MAX_NODES);
			return false;
		}
	}
	return true;
}

/* The TR_VARIANT parameter: a word's index, the integer, or its default. */
static void
set_variant(Diag *dg, NodeSpace *sh, const TopoForm *tf, const ParamSpec *ps, const Bound *b)
{
	int64_t most = tf->variant_per_rank * sh->ranks;
	if (!b->n) {
		sh->variant = most;
	} else if (ps->kind == A_WORD) {
		sh->variant = ast_word_index(b->v[0]->text, ps->words);
	} else {
		ast_eval_int(dg, b->v[0], &sh->variant, false);
		if (most && sh->variant > most) {
			char name[128];
			ast_space_name(name, sizeof name, sh);
			error_at(dg, b->v[0]->loc, "%s has at most %lld %s, got %lld", name, (long long)most,
			         ps->label, (long long)sh->variant);
		}
	}
}

/* A TR_PAIRS parameter: a count for each pair of a box's G GPUs, by rows. */
static void
set_pairs(Diag *dg, Arena *a, NodeSpace *sh, const ParamSpec *ps, const Bound *b)
{
	int64_t g = sh->size[sh->ndim - 1], want = g * (g - 1) / 2;
	if (b->n != want) {
		char name[128];
		ast_space_name(name, sizeof name, sh);
		error_at(dg, b->loc, "%s has %lld pairs of GPUs in a box (0-1, 0-2, ..., %lld-%lld): "
		         "'%s' takes a link count for each, got %d", name, (long long)want,
		         (long long)g - 2, (long long)g - 1, ps->label, b->n);
		sh->ok = false;
		return;
	}
	sh->pairs = arena_array(a, (size_t)want, sizeof *sh->pairs);
	for (int i = 0; i < b->n; i++) {
		int64_t v = 1;
		ast_eval_int(dg, b->v[i], &v, false); /* checked against the ParamSpec by sema */
		sh->pairs[i] = (int)v;
	}
}

/* A torus of boxes (TR_BOX_DIMS): the G GPUs' NICs split evenly over the
 * 2k directions, so that every box has the same cables each way and the
 * torus's translations (and GPU g -> g + 2k) are automorphisms. */
static void
check_box_torus(Diag *dg, NodeSpace *sh, const Bound *boxes, const Bound *gpus)
{
	int k = boxes->n;
	int64_t g = sh->size[k];
	if (g % (2 * k) == 0)
		return;
	char name[128];
	ast_space_name(name, sizeof name, sh);
	error_at(dg, gpus->loc, "%s: the %lld GPUs' NICs of a box must split evenly over the %d "
	         "directions of its %d-D torus (a NIC each way per GPU pair); gpus must be a multiple "
	         "of %d", name, (long long)g, 2 * k, k, 2 * k);
	sh->ok = false;
}

/* Shared NICs (TR_NICS, TR_NIC_LINK): both or neither, K dividing G (every
 * NIC serves as many GPUs, so the boxes and the NIC groups stay alike); the
 * count's value is G when absent (a NIC per GPU, each its GPU's link). With
 * them the NICs are nodes: the switches are what the node classes count. */
static void
set_nics(Diag *dg, TopoKind k, NodeSpace *sh, const Bound *b)
{
	const TopoForm *tf = &topo_forms[k];
	int ni = -1, li = -1;
	for (int i = 0; i < MAX_PARAMS; i++) {
		ni = tf->role[i] == TR_NICS ? i : ni;
		li = tf->role[i] == TR_NIC_LINK ? i : li;
	}
	if (ni < 0 || li < 0)
		return;
	int64_t g = sh->size[sh->ndim - 1];
	char name[128];
	ast_space_name(name, sizeof name, sh);
	if (!b[ni].n != !b[li].n) {
		const Bound *given = b[ni].n ? &b[ni] : &b[li];
		error_at(dg, given->loc, "%s: '%s' and '%s' go together: shared NICs are nodes, each "
		         "with its count a box and its GPUs' link to it (docs/gpu-clusters.md)", name,
		         tf->form.param[ni].label, tf->form.param[li].label);
		sh->ok = false;
		return;
	}
	if (!b[ni].n) {
		sh->arg[ni] = g;
		return;
	}
	if (sh->arg[ni] > g || g % sh->arg[ni]) {
		error_at(dg, b[ni].v[0]->loc, "%s: nics %lld does not divide a box's %lld GPUs; each NIC "
		         "is shared by as many GPUs (G/K)", name, (long long)sh->arg[ni], (long long)g);
		sh->ok = false;
		return;
	}
	sh->nics = (int)sh->arg[ni];
	sh->nic_link_gbps = (int)sh->arg[li];
	sh->switches = node_class_total(k, sh->arg) - sh->ranks;
}

void
ast_topo_space(Diag *dg, Arena *a, TopoKind k, const Bound *b, NodeSpace *sh)
{
	const TopoForm *tf = &topo_forms[k];
	int64_t ranks = 1;
	const Expr *first = NULL;
	int variant = -1;
	sh->kind = k;
	sh->form = tf->form.name;
	sh->translations = tf->translations;
	sh->ok = true;
	for (int i = 0; i < MAX_PARAMS && tf->form.param[i].kind != A_END; i++) {
		if (b[i].n && tf->form.param[i].kind == A_INT)
			ast_eval_int(dg, b[i].v[0], &sh->arg[i], false);
		if (tf->role[i] == TR_DIMS || tf->role[i] == TR_DIM_SWITCHES || tf->role[i] == TR_BOX_DIMS) {
			first = first ? first : b[i].v[0];
			if (!add_dims(dg, sh, &b[i], &ranks)) {
				sh->ok = false;
				return;
			}
		}
		if (tf->role[i] == TR_BOX_DIMS) /* a switch per box; the value is the box count */
			sh->switches += sh->arg[i] = ranks;
		if (tf->role[i] == TR_SWITCHES)
			sh->switches += sh->arg[i];
		if (tf->role[i] == TR_DIM_SWITCHES)
			sh->switches += sh->arg[i] * (tf->switches_per_dim ? tf->switches_per_dim : 1);
		if (tf->role[i] == TR_VARIANT)
			variant = i;
	}
	sh->ranks = ranks;
	set_nics(dg, k, sh, b);
	sh->nodes = ranks + sh->switches;
	if (sh->nodes > MAX_NODES) {
		error_at(dg, first->loc, "%s has more than %d nodes (switches included)", sh->form,
		         MAX_NODES);
		sh->ok = false;
		return;
	}
	if (sh->switches) { /* ids after the ranks are the switches */
		sh->is_switch = arena_alloc(a, (size_t)sh->nodes);
		memset(sh->is_switch + sh->ranks, 1, (size_t)sh->switches);
	}
	if (variant >= 0)
		set_variant(dg, sh, tf, &tf->form.param[variant], &b[variant]);
	for (int i = 0; i < MAX_PARAMS; i++) {
		if (tf->role[i] == TR_PAIRS && b[i].n)
			set_pairs(dg, a, sh, &tf->form.param[i], &b[i]);
		if (tf->role[i] == TR_BOX_DIMS && i + 1 < MAX_PARAMS && b[i + 1].n) /* the GPUs next */
			check_box_torus(dg, sh, &b[i], &b[i + 1]);
	}
}
