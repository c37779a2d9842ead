/*
 * verify_full.c: a symmetric schedule proved on its expansion (collc check
 * --full-verify), as a second opinion on the proof by symmetry (verify.c).
 *
 * Needs: a schedule lowered or read (explicit ones go to verify() as they
 * are). Establishes, for a symmetric one: its expansion's size is within
 * MAX_TRANSFERS and MAX_CELLS (estimated from the base transfers and the
 * group order before anything is built: a located error naming the limit
 * otherwise); every copy of every base transfer, run as an explicit
 * schedule's messages are (routes joined, no chunk sent before it is held,
 * the postcondition at every rank for every chunk); and the expansion's
 * rounds and per-link loads in every round equal the ones symmetry gives
 * (sym_round_loads: |G| / |orbit(l)| chunks on each link of l's orbit per
 * base hop over l), so that the figures collc check prints from the
 * compact form are the expansion's. A disagreement is a located error.
 *
 * The same structural check comes first on both paths
 * (sched_check_symmetric: every element maps the ranks onto themselves,
 * each chunk's owner is its tree's root's image), since the expansion is
 * not defined without it; after it, the verdict is the expansion's alone.
 * When it rejects, the error shown is the proof by symmetry's (the base
 * tree's counterexample, which the user fixes) if that proof rejects too,
 * so both paths print the same located error; if only the expansion
 * rejects, its own fault is shown: a fault of the proof by symmetry. The
 * rank form (XOR copies) is checked for its verdict and rounds; it has no
 * link orbits.
 */
#include <stdlib.h>

#include "ir.h"

/* The expansion's messages, and its chunks' cells, against the limits an
 * explicit schedule meets. */
static int
check_expansion(Diag *dg, const Sched *s)
{
	long copies = s->group ? s->group->order : s->nrank;
	return check_expand_size(dg, s->loc, s->name, s->kind, s->nrank, s->nchunk,
	                         (double)s->nbase * copies);
}

/* The first link whose load in the expansion x differs from what the
 * symmetric s gives, per round; 0 when none does. */
static int
compare_loads(Diag *dg, const Sched *s, const Sched *x)
{
	const Group *g = s->group;
	const Topo *t = s->topo;
	BaseRounds br;
	base_rounds(s, &br);
	long *orbit = xcalloc((size_t)g->nlink_orbits + 1, sizeof *orbit);
	long *load = xcalloc((size_t)t->nlink + 1, sizeof *load);
	int *touched = xmalloc(((size_t)t->nlink + 1) * sizeof *touched);
	int rc = 0;
	for (int r = 0, i = 0; r < s->nround && rc == 0; r++) {
		long want = sym_round_loads(s, &br, r, orbit), got = 0;
		int ntouched = 0;
		for (; i < x->nmsg && x->msg[i].round == r; i++) {
			const Msg *m = &x->msg[i];
			int len = sched_route_len(x, m->route);
			const int *l = x->route_link + x->route_off[m->route];
			for (int k = 0; k < len; k++) {
				if (load[l[k]] == 0)
					touched[ntouched++] = l[k];
				load[l[k]] += m->n;
				got += m->n;
			}
		}
		/* touched links as predicted and the same chunk-hops in all: the
		 * others' predictions sum to 0, so each is 0 */
		for (int k = 0; k < ntouched && rc == 0; k++) {
			int l = touched[k];
			if (load[l] != orbit[g->link_orbit[l]]) {
				char a[64], b[64];
				topo_node_name(t, t->link[l].src, a, sizeof a);
				topo_node_name(t, t->link[l].dst, b, sizeof b);
				error_at(dg, s->loc, "schedule of '%s': its expansion puts %ld chunks on link %s->%s "
				         "in round %d, symmetry %ld", s->name, load[l], a, b, r + 1,
				         orbit[g->link_orbit[l]]);
				rc = -1;
			}
		}
		if (rc == 0 && got != want) {
			error_at(dg, s->loc, "schedule of '%s': its expansion sends %ld chunk-hops in round %d, "
			         "symmetry %ld", s->name, got, r + 1, want);
			rc = -1;
		}
		for (int k = 0; k < ntouched; k++)
			load[touched[k]] = 0;
	}
	base_rounds_free(&br);
	free(orbit), free(load), free(touched);
	return rc;
}

/* The expansion proved and its figures compared; -1 after reporting. */
static int
check_expanded(Diag *dg, const Sched *s)
{
	Arena a = {0};
	const Sched *x = sched_expand(dg, &a, s);
	int rc = verify(dg, x);
	if (rc == 0 && x->nround != s->nround) {
		error_at(dg, s->loc, "schedule of '%s': its expansion has %d rounds, the symmetric form %d",
		         s->name, x->nround, s->nround);
		rc = -1;
	}
	if (rc == 0 && s->group)
		rc = compare_loads(dg, s, x);
	arena_free(&a);
	return rc;
}

int
verify_full(Diag *dg, const Sched *s)
{
	if (!s->base)
		return verify(dg, s);
	if (sched_check_symmetric(dg, s) != 0 || check_expansion(dg, s) != 0)
		return -1;
	diag_mute(dg, true);
	int rc = check_expanded(dg, s);
	diag_mute(dg, false);
	if (rc == 0)
		return 0;
	/* Rejected: the base tree's counterexample is the one to show, when the
	 * proof by symmetry finds it (the expansion's first fault is one of its
	 * images, under another chunk and rank); else the expansion's own,
	 * which would be a fault of that proof. */
	if (verify(dg, s) != 0)
		return -1;
	return check_expanded(dg, s);
}
