/*
 * plan.c: compiled with a symmetric schedule's program that collc wrote
 * (-DCOLLC_FILE="path"), checks the plan each rank derives through the
 * group's inverses against the definition: every element of the group
 * applied to every base transfer (NBASE x ORDER copies), each copy kept at
 * the ranks it leaves from or arrives at. Every rank is checked, or 64
 * spread over the ranks when all of them would take more than a few
 * seconds. Also that each message's chunks are in buffer order and that
 * ops are in round order. Needs no MPI launcher: no MPI call is made.
 * Prints "ok: N ranks" or the first difference (exit 1).
 */
#include COLLC_FILE
#if !COLLC_SYMMETRIC
#error "for the symmetric form only"
#endif
#include <stdio.h>

typedef struct {
	int round, peer, kind, chunk;
} entry;

static int
entry_order(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	if (x->round != y->round)
		return x->round < y->round ? -1 : 1;
	if (x->peer != y->peer)
		return x->peer < y->peer ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return (x->chunk > y->chunk) - (x->chunk < y->chunk);
}

/* The definition: every copy, kept where it touches rank me's node. */
static int
by_definition(int me, const int *rank_of, entry *out)
{
	int n = 0, mynode = rank_node[me];
	for (int i = 0; i < NBASE; i++) {
		const int *b = base_table + 5 * i;
		for (int e = 0; e < ORDER; e++) {
			int src = collc_apply(e, rank_node[b[2]]), dst = collc_apply(e, rank_node[b[3]]);
			if (src == mynode)
				out[n++] = (entry){b[0], rank_of[dst], 0, b[1] * ORDER + e};
			if (dst == mynode)
				out[n++] = (entry){b[0], rank_of[src], b[4], b[1] * ORDER + e};
		}
	}
	return n;
}

/* The plan's ops, one entry per chunk; -1 if its order is wrong. */
static int
from_plan(const collc_plan *pl, entry *out, long cap)
{
	int n = 0;
	for (int k = 0; k < pl->nop; k++) {
		const collc_op *o = &pl->op[k];
		if (k > 0 && o->round < pl->op[k - 1].round)
			return -1;
		for (int c = 0; c < o->n; c++) {
			int ch = pl->chunk[o->first + c];
			if ((c > 0 && collc_pos(ch) <= collc_pos(pl->chunk[o->first + c - 1])) || n >= cap)
				return -1;
			out[n++] = (entry){o->round, o->peer, o->kind, ch};
		}
	}
	return n;
}

static void
plan_free(collc_plan *pl)
{
	free(pl->op);
	free(pl->chunk);
	free(pl->type);
	free(pl->req);
	free(pl->at);
	free(pl->arrived);
	free(pl->status);
}

int
main(void)
{
	long cap = 2L * NBASE * ORDER + 1;
	entry *want = malloc((size_t)cap * sizeof *want), *got = malloc((size_t)cap * sizeof *got);
	int *rank_of = malloc((size_t)NNODE * sizeof *rank_of);
	if (!want || !got || !rank_of)
		return 2;
	for (int v = 0; v < NNODE; v++)
		rank_of[v] = -1;
	for (int r = 0; r < NRANK; r++)
		rank_of[rank_node[r]] = r;
	double work = (double)NBASE * ORDER * NRANK;
	int step = work <= 2e8 ? 1 : NRANK / 64 > 1 ? NRANK / 64 : 1, checked = 0;
	for (int me = 0; me < NRANK; me += step, checked++) {
		collc_plan pl;
		if (collc_make_plan(me, &pl) != 0) {
			printf("rank %d: no plan (out of memory)\n", me);
			return 1;
		}
		int nw = by_definition(me, rank_of, want), ng = from_plan(&pl, got, cap);
		plan_free(&pl);
		if (ng < 0) {
			printf("rank %d: ops out of round order or a message's chunks out of buffer order\n",
			       me);
			return 1;
		}
		qsort(want, (size_t)nw, sizeof *want, entry_order);
		qsort(got, (size_t)ng, sizeof *got, entry_order);
		for (int i = 0; i < (nw > ng ? nw : ng); i++)
			if (i >= nw || i >= ng || entry_order(&want[i], &got[i]) != 0) {
				printf("rank %d: %d copies by definition, %d in the plan; first difference at "
				       "%d\n", me, nw, ng, i);
				return 1;
			}
	}
	printf("ok: %d ranks\n", checked);
	free(want);
	free(got);
	free(rank_of);
	return 0;
}
