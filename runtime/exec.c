/*
 * exec.c: runs an explicit IR schedule on real data, round by round, and
 * checks the result against a reference (collc run FILE.coll). Each rank
 * holds the whole vector cut into nchunk chunks; chunk c is elements
 * [c*E/nchunk, (c+1)*E/nchunk), so E need not divide evenly. A round's
 * messages read their senders' values as the round began (docs/ir.md 6.1):
 * every message is gathered first, then applied. Symmetric schedules are
 * expanded first.
 */
#include <stdlib.h>
#include <string.h>

#include "exec.h"

static int64_t
chunk_lo(int64_t E, int n, int c)
{
	return E * c / n;
}

/* Whether (rank, chunk) starts with the rank's own data. */
static bool
starts(const Sched *s, int r, int c)
{
	switch (s->kind) {
	case CK_ALLGATHER:
		return s->owner[c] == r;
	case CK_ALLTOALL:
		return s->a2a_src[c] == r;
	case CK_BROADCAST:
		return s->root == r;
	default:
		return true;
	}
}

/* Whose input chunk c of rank r must equal at the end: -1 the reduction
 * over all ranks, -2 anything, else that rank's own value. */
static int
promise(const Sched *s, int r, int c)
{
	switch (s->kind) {
	case CK_ALLREDUCE:
		return -1;
	case CK_REDUCE_SCATTER:
		return s->owner[c] == r ? -1 : -2;
	case CK_ALLGATHER:
		return s->owner[c];
	case CK_ALLTOALL:
		return s->a2a_dst[c] == r ? s->a2a_src[c] : -2;
	case CK_BROADCAST:
		return s->root;
	case CK_REDUCE:
		return s->root == r ? -1 : -2;
	default:
		return -2;
	}
}

int
exec_sched(Diag *dg, const Sched *sched, const ExecOpts *o, double *seconds)
{
	Arena a = {0};
	const Sched *s = sched->base ? sched_expand(dg, &a, sched) : sched;
	RDtype dt = o->dtype;
	ROp op = o->op;
	size_t es = rdtype_size(dt);
	int64_t E = o->bytes / (int64_t)es;
	if (E < s->nchunk) {
		error_at(dg, sched->loc, "'%s' cuts the vector into %d chunks: --size must give at least "
		         "that many %s elements", sched->name, s->nchunk, rdtype_name(dt));
		arena_free(&a);
		return -1;
	}
	int R = s->nrank;
	char **buf = xcalloc((size_t)R, sizeof *buf);
	for (int r = 0; r < R; r++) {
		buf[r] = xmalloc((size_t)E * es + 8);
		memset(buf[r], 0xA5, (size_t)E * es);
		for (int c = 0; c < s->nchunk; c++)
			if (starts(s, r, c)) {
				int64_t lo = chunk_lo(E, s->nchunk, c), hi = chunk_lo(E, s->nchunk, c + 1);
				rt_op_fill(buf[r] + lo * (int64_t)es, dt, op, r, lo, hi - lo);
			}
	}
	double t0 = wall_seconds();
	int m = 0;
	char *tmp = NULL;
	size_t tmpcap = 0;
	while (m < s->nmsg) {
		int round = s->msg[m].round, end = m;
		size_t need = 0;
		while (end < s->nmsg && s->msg[end].round == round) {
			for (int k = 0; k < s->msg[end].n; k++) {
				int c = s->chunks[s->msg[end].first + k];
				need += (size_t)(chunk_lo(E, s->nchunk, c + 1) - chunk_lo(E, s->nchunk, c)) * es;
			}
			end++;
		}
		if (need > tmpcap) {
			free(tmp);
			tmpcap = need;
			tmp = xmalloc(tmpcap + 8);
		}
		/* gather every message of the round, then apply them */
		size_t at = 0;
		for (int i = m; i < end; i++)
			for (int k = 0; k < s->msg[i].n; k++) {
				int c = s->chunks[s->msg[i].first + k];
				int64_t lo = chunk_lo(E, s->nchunk, c), len = chunk_lo(E, s->nchunk, c + 1) - lo;
				memcpy(tmp + at, buf[s->msg[i].src] + lo * (int64_t)es, (size_t)len * es);
				at += (size_t)len * es;
			}
		at = 0;
		for (int i = m; i < end; i++)
			for (int k = 0; k < s->msg[i].n; k++) {
				int c = s->chunks[s->msg[i].first + k];
				int64_t lo = chunk_lo(E, s->nchunk, c), len = chunk_lo(E, s->nchunk, c + 1) - lo;
				char *d = buf[s->msg[i].dst] + lo * (int64_t)es;
				if (s->msg[i].op == X_COPY)
					memcpy(d, tmp + at, (size_t)len * es);
				else
					rt_reduce(d, d, tmp + at, len, dt, op);
				at += (size_t)len * es;
			}
		m = end;
	}
	*seconds = wall_seconds() - t0;
	free(tmp);
	/* check every promised chunk against values computed directly */
	int rc = 0;
	char *want = xmalloc((size_t)E * es / (size_t)s->nchunk + 2 * es + 8);
	for (int r = 0; r < R && rc == 0; r++)
		for (int c = 0; c < s->nchunk && rc == 0; c++) {
			int who = promise(s, r, c);
			if (who == -2)
				continue;
			int64_t lo = chunk_lo(E, s->nchunk, c), len = chunk_lo(E, s->nchunk, c + 1) - lo;
			for (int64_t e = 0; e < len; e++) {
				if (who == -1)
					rt_expect_reduced(want + e * (int64_t)es, dt, op, R, lo + e);
				else
					rt_op_fill(want + e * (int64_t)es, dt, op, who, lo + e, 1);
			}
			int64_t bad;
			if (rt_compare(buf[r] + lo * (int64_t)es, want, len, dt, &bad) != 0) {
				error_at(dg, sched->loc, "wrong result: '%s' (%s) leaves rank %d's chunk %d wrong "
				         "at element %lld (%s %s)", sched->name, coll_kind_name[s->kind], r, c,
				         (long long)(lo + bad), rdtype_name(dt), rop_name(op));
				rc = -1;
			}
		}
	free(want);
	for (int r = 0; r < R; r++)
		free(buf[r]);
	free(buf);
	arena_free(&a);
	return rc;
}
