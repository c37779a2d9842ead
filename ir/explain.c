/*
 * explain.c: a schedule shown round by round, for people learning or
 * designing one (`collc explain`). Needs a verified explicit schedule small
 * enough to read (explain_check_size); runs it on exact contribution sets,
 * the verifier's model (sched_small_expected), and prints after every round
 * what each rank holds of each chunk and whose contributions it carries,
 * with the round's messages and its busiest links. The SVG timeline draws
 * the same messages: ranks down, rounds across.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

bool
explain_text_fits(const Sched *s)
{
	return s->nrank <= EXPLAIN_MAX_RANKS && s->nchunk <= EXPLAIN_MAX_CHUNKS &&
	       s->nround <= EXPLAIN_MAX_ROUNDS;
}

int
explain_check_size(Diag *dg, const Sched *s)
{
	long chunks = s->nchunk;
	const char *what = NULL;
	long have = 0;
	if (s->nrank > EXPLAIN_MAX_RANKS)
		what = "ranks", have = s->nrank;
	else if (chunks > EXPLAIN_MAX_CHUNKS)
		what = "chunks", have = chunks;
	else if (s->nround > EXPLAIN_MAX_ROUNDS)
		what = "rounds", have = s->nround;
	if (!what)
		return 0;
	error_at(dg, s->loc, "explain shows schedules of at most %d ranks, %d chunks and %d rounds; "
	         "'%s' has %ld %s (explain a smaller instance of it, or draw it with --html)",
	         EXPLAIN_MAX_RANKS, EXPLAIN_MAX_CHUNKS, EXPLAIN_MAX_ROUNDS, s->name, have, what);
	return -1;
}

int
explain_check_page(Diag *dg, const Sched *s)
{
	double cells = (double)s->nrank * s->nchunk;
	if (s->nrank <= EXPLAIN_PAGE_RANKS && s->nchunk <= EXPLAIN_PAGE_CHUNKS &&
	    s->nround <= EXPLAIN_MAX_ROUNDS)
		return 1;
	if (s->nrank <= EXPLAIN_AGG_RANKS && cells <= EXPLAIN_AGG_CELLS &&
	    s->nround <= EXPLAIN_MAX_ROUNDS)
		return 0;
	const char *what = s->nrank > EXPLAIN_AGG_RANKS ? "ranks"
	                   : s->nround > EXPLAIN_MAX_ROUNDS ? "rounds" : "(rank, chunk) cells";
	double have = s->nrank > EXPLAIN_AGG_RANKS ? s->nrank
	              : s->nround > EXPLAIN_MAX_ROUNDS ? s->nround : cells;
	error_at(dg, s->loc, "explain --html shows schedules of at most %d ranks, %d rounds and %d "
	         "(rank, chunk) cells (every cell up to %d ranks and %d chunks); '%s' has %.0f %s",
	         EXPLAIN_AGG_RANKS, EXPLAIN_MAX_ROUNDS, EXPLAIN_AGG_CELLS, EXPLAIN_PAGE_RANKS,
	         EXPLAIN_PAGE_CHUNKS, s->name, have, what);
	return -1;
}

/* ---- the replay: every round on contribution sets ---- */

/* What cell (r, c) starts with and must end with, as counts: the
 * verifier's model (sched_small_expected) for any number of ranks. */
static void
expected_count(const Sched *s, int r, int c, int *init, int *want)
{
	int p = s->nrank;
	switch (s->kind) {
	case CK_ALLREDUCE: *init = 1, *want = p; break;
	case CK_REDUCE_SCATTER: *init = 1, *want = s->owner[c] == r ? p : -1; break;
	case CK_ALLGATHER: *init = s->owner[c] == r, *want = 1; break;
	case CK_ALLTOALL: *init = s->a2a_src[c] == r, *want = s->a2a_dst[c] == r ? 1 : -1; break;
	case CK_BROADCAST: *init = r == s->root, *want = 1; break;
	case CK_REDUCE: *init = 1, *want = r == s->root ? p : -1; break;
	default: *init = 0, *want = -1; break;
	}
}

void
replay_start(Replay *R, const Sched *s)
{
	size_t cells = (size_t)s->nrank * (size_t)s->nchunk;
	memset(R, 0, sizeof *R);
	R->s = s;
	R->round = -1;
	R->exact = s->nrank <= 64;
	R->count = xmalloc((cells + 1) * sizeof *R->count);
	R->want = xmalloc((cells + 1) * sizeof *R->want);
	R->changed = xmalloc((cells + 1) * sizeof *R->changed);
	R->mark = xcalloc(cells + 1, 1);
	if (R->exact) {
		R->set = xmalloc((cells + 1) * sizeof *R->set);
		R->want_set = xmalloc((cells + 1) * sizeof *R->want_set);
	}
	for (int i = 0, round = -1, held = 0; i < s->nmsg; i++) { /* the most chunks a round sends */
		held = s->msg[i].round == round ? held + s->msg[i].n : s->msg[i].n;
		round = s->msg[i].round;
		R->npool = held > R->npool ? held : R->npool;
	}
	R->pay_set = xmalloc(((size_t)R->npool + 1) * sizeof *R->pay_set);
	R->pay_count = xmalloc(((size_t)R->npool + 1) * sizeof *R->pay_count);
	R->load = xcalloc((size_t)s->topo->nlink + 1, sizeof *R->load);
	R->total = xcalloc((size_t)s->topo->nlink + 1, sizeof *R->total);
	for (int r = 0; r < s->nrank; r++)
		for (int c = 0; c < s->nchunk; c++) {
			size_t cell = (size_t)r * (size_t)s->nchunk + (size_t)c;
			expected_count(s, r, c, &R->count[cell], &R->want[cell]);
			if (R->exact) {
				uint64_t init, want;
				bool care;
				sched_small_expected(s, r, c, &init, &want, &care);
				R->set[cell] = init;
				R->want_set[cell] = want;
			}
		}
}

/* Message i's chunks on each link of its route; an in-network operation's
 * (Msg.fuse) on each link it loads, once, at its leader (as metrics.c). */
static void
add_load(const Sched *s, int i, long *load)
{
	const Msg *m = &s->msg[i];
	if (m->fuse) {
		if (s->fuse[m->fuse - 1].leader != i)
			return;
		int *l = xmalloc(((size_t)fuse_links_max(s) + 1) * sizeof *l);
		int n = fuse_links(s, m->fuse - 1, l);
		for (int k = 0; k < n; k++)
			load[l[k]] += m->n;
		free(l);
		return;
	}
	const int *l = s->route_link + s->route_off[m->route];
	for (int k = 0; k < sched_route_len(s, m->route); k++)
		load[l[k]] += m->n;
}

bool
replay_step(Replay *R)
{
	const Sched *s = R->s;
	if (R->round + 1 >= s->nround)
		return false;
	int nc = s->nchunk, i = R->end, j = i;
	R->round++;
	while (j < s->nmsg && s->msg[j].round == R->round)
		j++;
	R->first = i, R->end = j;
	memset(R->load, 0, (size_t)s->topo->nlink * sizeof *R->load);
	for (int m = i, o = 0; m < j; m++) { /* a round reads what senders held as it began */
		const Msg *x = &s->msg[m];
		add_load(s, m, R->load);
		add_load(s, m, R->total);
		for (int k = 0; k < x->n; k++, o++) {
			size_t cell = (size_t)x->src * (size_t)nc + (size_t)s->chunks[x->first + k];
			R->pay_count[o] = R->count[cell];
			if (R->exact)
				R->pay_set[o] = R->set[cell];
		}
	}
	for (int c = 0; c < R->nchanged; c++)
		R->mark[R->changed[c]] = 0;
	R->nchanged = 0;
	for (int m = i, o = 0; m < j; m++) {
		const Msg *x = &s->msg[m];
		for (int k = 0; k < x->n; k++, o++) {
			int cell = x->dst * nc + s->chunks[x->first + k];
			bool copy = x->op == X_COPY;
			R->count[cell] = copy ? R->pay_count[o] : R->count[cell] + R->pay_count[o];
			if (R->exact) { /* the sets' count: a contribution added twice is one */
				R->set[cell] = copy ? R->pay_set[o] : R->set[cell] | R->pay_set[o];
				R->count[cell] = __builtin_popcountll(R->set[cell]);
			}
			if (!R->mark[cell])
				R->changed[R->nchanged++] = cell;
			R->mark[cell] = 1;
		}
	}
	sort_n(R->changed, (size_t)R->nchanged, sizeof *R->changed, cmp_int);
	return true;
}

bool
replay_final(const Replay *R, int cell)
{
	if (R->want[cell] < 0)
		return false;
	return R->exact ? R->set[cell] == R->want_set[cell] : R->count[cell] == R->want[cell];
}

void
replay_free(Replay *R)
{
	free(R->count), free(R->want), free(R->changed), free(R->mark), free(R->set);
	free(R->want_set), free(R->pay_set), free(R->pay_count), free(R->load), free(R->total);
	memset(R, 0, sizeof *R);
}

ExplainFault
explain_fault_of(const TeachTrace *t, const char *text)
{
	const Sched *s = t->s;
	ExplainFault f = {.round = t->round, .msg = -1, .rank = t->rank, .chunk = t->chunk,
	                  .text = text};
	for (int i = 0; t->src >= 0 && i < s->nmsg && f.msg < 0; i++) {
		const Msg *m = &s->msg[i];
		if (m->src != t->src || m->dst != t->dst)
			continue;
		for (int k = 0; k < m->n; k++)
			if (s->chunks[m->first + k] == t->chunk && m->round == t->xround)
				f.msg = i;
	}
	return f;
}

/* "{0,3}", "*" (every rank), "-" (nothing) */
static void
set_text(uint64_t set, uint64_t all, char *buf, size_t len)
{
	if (set == 0) {
		snprintf(buf, len, "-");
		return;
	}
	if (set == all) {
		snprintf(buf, len, "*");
		return;
	}
	int n = snprintf(buf, len, "{");
	for (int r = 0; r < 64 && (size_t)n < len; r++)
		if (set >> r & 1)
			n += snprintf(buf + n, len - (size_t)n, "%s%d", n > 1 ? "," : "", r);
	if ((size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "}");
}

/* "3", "0-3, 6": a message's chunks, sorted, as runs */
static void
chunks_text(const Sched *s, const Msg *m, char *buf, size_t len)
{
	unsigned char *in = xcalloc((size_t)s->nchunk + 1, 1);
	for (int i = 0; i < m->n; i++)
		in[s->chunks[m->first + i]] = 1;
	int n = 0;
	buf[0] = 0;
	for (int c = 0; c < s->nchunk && (size_t)n < len; c++) {
		if (!in[c] || (c > 0 && in[c - 1]))
			continue;
		int e = c;
		while (e + 1 < s->nchunk && in[e + 1])
			e++;
		n += snprintf(buf + n, len - (size_t)n, e > c ? "%s%d-%d" : "%s%d", n ? ", " : "", c, e);
	}
	free(in);
}

static void
print_state(const Sched *s, const uint64_t *st, uint64_t all, FILE *f)
{
	for (int r = 0; r < s->nrank; r++) {
		fprintf(f, "  rank %-3d", r);
		for (int c = 0; c < s->nchunk; c++) {
			char set[160];
			set_text(st[r * s->nchunk + c], all, set, sizeof set);
			fprintf(f, " %d:%s", c, set);
		}
		fputc('\n', f);
	}
}

/* The up to three links carrying the most chunks in load[]. */
static void
busiest(const Sched *s, const long *load, char *buf, size_t len)
{
	const Topo *t = s->topo;
	int top[3] = {-1, -1, -1};
	for (int l = 0; l < t->nlink; l++) {
		if (load[l] == 0)
			continue;
		for (int k = 0; k < 3; k++)
			if (top[k] < 0 || load[l] > load[top[k]]) {
				for (int j = 2; j > k; j--)
					top[j] = top[j - 1];
				top[k] = l;
				break;
			}
	}
	int n = 0;
	buf[0] = 0;
	for (int k = 0; k < 3 && top[k] >= 0 && load[top[k]] == load[top[0]]; k++) {
		char a[64], b[64];
		topo_node_name(t, t->link[top[k]].src, a, sizeof a);
		topo_node_name(t, t->link[top[k]].dst, b, sizeof b);
		n += snprintf(buf + n, len - (size_t)n, "%s%s -> %s", n ? ", " : "", a, b);
	}
	int ties = 0;
	for (int l = 0; top[0] >= 0 && l < t->nlink; l++)
		ties += load[l] == load[top[0]];
	if (top[0] >= 0 && ties > 3)
		snprintf(buf + n, len - (size_t)n, ", ... (%ld chunk%s each on %d links)", load[top[0]],
		         load[top[0]] == 1 ? "" : "s", ties);
	else if (top[0] >= 0)
		snprintf(buf + n, len - (size_t)n, " (%ld chunk%s%s)", load[top[0]],
		         load[top[0]] == 1 ? "" : "s", ties > 1 ? " each" : "");
	else
		snprintf(buf, len, "none");
}

/* In-network operation f (its messages from its leader to end): the
 * switch, what it does, to which chunks, from and to which ranks. */
static void
print_fused(const Sched *s, int fi, int end, const char *chunks, FILE *f)
{
	static const char *const what[] = {"reduce", "multicast", "allreduce"};
	const Fuse *x = &s->fuse[fi];
	char sw[64];
	topo_node_name(s->topo, x->node, sw, sizeof sw);
	uint64_t from = 0, to = 0;
	int n = 0;
	for (int m = x->leader; m < end; m++)
		if (s->msg[m].fuse == fi + 1) {
			from |= 1ull << s->msg[m].src, to |= 1ull << s->msg[m].dst, n++;
		}
	if (x->self && x->kind == FUSE_REDUCE) /* the receiver's own copy through the switch */
		from |= to;
	else if (x->self && x->kind == FUSE_MULTICAST)
		to |= from;
	fprintf(f, "  in switch %s: %s chunk%s %s", sw, what[x->kind], strchr(chunks, ',') ||
	        strchr(chunks, '-') ? "s" : "", chunks);
	for (int side = 0; side < 2; side++) {
		uint64_t set = side ? to : from;
		if (side && x->kind == FUSE_ALLREDUCE) {
			fputs(", the sum to each", f);
			break;
		}
		fprintf(f, " %s rank%s", side ? "to" : "from", __builtin_popcountll(set) > 1 ? "s" : "");
		for (int r = 0, k = 0; r < s->nrank && r < 64; r++)
			if (set >> r & 1)
				fprintf(f, "%s %d", k++ ? "," : "", r);
	}
	fprintf(f, "  (%d messages in one, each link loaded once)\n", n);
}

void
explain_text(const Sched *s, FILE *f)
{
	explain_text_fault(s, NULL, f);
}

void
explain_text_fault(const Sched *s, const ExplainFault *fault, FILE *f)
{
	const Topo *t = s->topo;
	int p = s->nrank;
	uint64_t all = p == 64 ? ~0ull : (1ull << p) - 1;
	char topo[96], buf[512];
	Replay R;
	replay_start(&R, s);
	topo_describe(t, topo, sizeof topo);
	fprintf(f, "'%s': %s on %s, %d ranks, %d chunks, %d rounds (%s)\n", s->name,
	        coll_kind_name[s->kind], topo, p, s->nchunk, s->nround, s->algorithm);
	fprintf(f, "each rank's chunks as chunk:contributions: {0,3} holds the data of ranks 0 and "
	           "3, * of every rank, - nothing yet\n\nstart\n");
	print_state(s, R.set, all, f);
	while ((!fault || R.round < fault->round) && replay_step(&R)) {
		int i = R.first, j = R.end;
		busiest(s, R.load, buf, sizeof buf);
		fprintf(f, "\nround %d: %d message%s; busiest link%s %s\n", R.round + 1, j - i,
		        j - i == 1 ? "" : "s", strchr(buf, ',') ? "s" : "", buf);
		for (int m = i; m < j; m++) {
			const Msg *x = &s->msg[m];
			chunks_text(s, x, buf, sizeof buf);
			if (x->fuse) { /* one line per in-network operation, at its leader */
				if (s->fuse[x->fuse - 1].leader == m)
					print_fused(s, x->fuse - 1, j, buf, f);
				continue;
			}
			fprintf(f, "  rank %d -> rank %d  %-6s chunk%s %s  (%d hop%s)%s\n", x->src, x->dst,
			        x->op == X_REDUCE ? "reduce" : "copy", x->n == 1 ? "" : "s", buf,
			        sched_route_len(s, x->route), sched_route_len(s, x->route) == 1 ? "" : "s",
			        fault && fault->msg == m ? "  <- the fault" : "");
		}
		print_state(s, R.set, all, f);
	}
	if (fault) {
		fprintf(f, "\nstopped in round %d, at the fault", fault->round + 1);
		if (fault->rank >= 0)
			fprintf(f, " (rank %d's chunk %d)", fault->rank, fault->chunk);
		fprintf(f, ": the schedule is wrong; the error says why\n");
	} else {
		busiest(s, R.total, buf, sizeof buf);
		fprintf(f, "\nbusiest link%s over all rounds: %s\n", strchr(buf, ',') ? "s" : "", buf);
	}
	replay_free(&R);
}

/* ---- the SVG timeline ---- */

/* Ten colours told apart on white, also by most colour-blind readers (no
 * yellow, no cyan): chunks when there are at most ten. */
static const char *const chunk_palette[] = {"#0072b2", "#e69f00", "#009e73", "#d55e00",
                                            "#cc79a7", "#56b4e9", "#8c6d1f", "#000000",
                                            "#7f7f7f", "#b2182b"};
enum { NPALETTE = 10 };
static const char *const op_colour[] = {"#d55e00", "#0072b2"}; /* reduce, copy */
/* every colour an arrow takes, one arrowhead marker each (SVG 1.1 has no
 * context-stroke): the palette, the operations, several chunks, the fault */
enum { COLOUR_OP = NPALETTE, COLOUR_SEVERAL = NPALETTE + 2, COLOUR_FAULT, NCOLOUR };

static const char *
colour_of(int k)
{
	return k < NPALETTE ? chunk_palette[k] : k < COLOUR_SEVERAL ? op_colour[k - COLOUR_OP]
	       : k == COLOUR_SEVERAL ? "#444444" : "#cc0000";
}

/* A message's colour: its chunk's (every chunk of it the same), grey for
 * several; by operation past ten chunks. */
static int
msg_colour(const Sched *s, const Msg *m)
{
	if (s->nchunk > NPALETTE)
		return COLOUR_OP + (m->op == X_COPY);
	int c = s->chunks[m->first];
	for (int k = 1; k < m->n; k++)
		if (s->chunks[m->first + k] != c)
			return COLOUR_SEVERAL;
	return c;
}

/* A holdings cell: white nothing, blues by the share held, navy final. */
static void
cell_colour(const Replay *R, int cell, char *buf, size_t len)
{
	int n = R->count[cell], want = R->want[cell] > 0 ? R->want[cell] : R->s->nrank;
	if (replay_final(R, cell))
		snprintf(buf, len, "#08306b");
	else if (n == 0)
		snprintf(buf, len, "#ffffff");
	else {
		double f = n < want ? (double)n / want : 1;
		snprintf(buf, len, "#%02x%02x%02x", (int)(222 - 150 * f), (int)(235 - 120 * f),
		         (int)(247 - 60 * f));
	}
}

typedef struct SvgGeom {
	int left, top, col, row, pad, cw, strip;
} SvgGeom;

/* Each rank's holdings after `round` (-1: at the start) as a strip of
 * cells under its line at the round's right edge. */
static void
svg_holdings(const Replay *R, const SvgGeom *g, const ExplainFault *fault, FILE *f)
{
	const Sched *s = R->s;
	int x0 = g->left + (R->round + 1) * g->col - g->strip / 2;
	char col[16];
	for (int r = 0; r < s->nrank; r++) {
		int y = g->top + r * g->row + 7;
		fprintf(f, "<g><title>rank %d after %s%d</title>", r, R->round < 0 ? "the start" :
		        "round ", R->round + 1);
		for (int c = 0; c < s->nchunk; c++) {
			int cell = r * s->nchunk + c;
			bool bad = fault && fault->rank == r && fault->chunk == c &&
			           R->round == fault->round;
			cell_colour(R, cell, col, sizeof col);
			fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"8\" fill=\"%s\" "
			           "stroke=\"%s\" stroke-width=\"%s\"/>", x0 + c * g->cw, y, g->cw, col,
			        bad ? "#cc0000" : "#9e9e9e", bad ? "2" : "0.3");
		}
		fprintf(f, "</g>\n");
	}
}

/* Whether m goes round a ring's wrap-around link (last rank to rank 0, or
 * back): drawn as two stubs leaving the picture, not across every row. */
static bool
wraps(const Sched *s, const Msg *m)
{
	const Topo *t = s->topo;
	bool ring = t->kind == TK_RING || (t->kind == TK_TORUS && t->ndim == 1);
	return ring && s->nrank > 2 && abs(m->src - m->dst) == s->nrank - 1 &&
	       sched_route_len(s, m->route) == 1;
}

/* The messages of the round R has just run: arrows whose ends are spread
 * over the rank line (no two arrowheads on one point). */
static void
svg_messages(const Replay *R, const SvgGeom *g, const ExplainFault *fault, FILE *f)
{
	const Sched *s = R->s;
	int *nin = xcalloc((size_t)s->nrank, sizeof *nin), *nout = xcalloc((size_t)s->nrank,
	                                                                         sizeof *nout);
	int *kin = xcalloc((size_t)s->nrank, sizeof *kin), *kout = xcalloc((size_t)s->nrank,
	                                                                         sizeof *kout);
	for (int i = R->first; i < R->end; i++)
		nin[s->msg[i].dst]++, nout[s->msg[i].src]++;
	int x1 = g->left + R->round * g->col + g->strip / 2 + g->pad;
	int x2 = g->left + (R->round + 1) * g->col - g->strip / 2 - g->pad;
	int spread = g->row / 2 - 8;
	for (int i = R->first; i < R->end; i++) {
		const Msg *m = &s->msg[i];
		char list[256];
		chunks_text(s, m, list, sizeof list);
		int ya = g->top + m->src * g->row - spread / 2 +
		         (nout[m->src] > 1 ? spread * kout[m->src]++ / (nout[m->src] - 1) : spread / 2);
		int yb = g->top + m->dst * g->row - spread / 2 +
		         (nin[m->dst] > 1 ? spread * kin[m->dst]++ / (nin[m->dst] - 1) : spread / 2);
		bool bad = fault && fault->msg == i;
		int col = bad ? COLOUR_FAULT : msg_colour(s, m);
		int width = bad ? 4 : m->n > 1 ? 3 : 2;
		fprintf(f, "<g stroke=\"%s\" stroke-width=\"%d\" fill=\"none\"%s><title>round %d: "
		           "rank %d -> rank %d, %s chunk%s %s%s</title>", colour_of(col), width,
		        m->op == X_COPY ? " stroke-dasharray=\"6,3\"" : "", m->round + 1, m->src, m->dst,
		        m->op == X_COPY ? "copy" : "reduce", m->n == 1 ? "" : "s", list,
		        bad ? " (the fault)" : "");
		if (wraps(s, m)) { /* out past one edge, back in at the other */
			int out = m->src > m->dst ? 1 : -1, xm = (x1 + x2) / 2;
			int edge_a = out > 0 ? g->top + (s->nrank - 1) * g->row + g->row / 2 : g->top - 22;
			int edge_b = out > 0 ? g->top - 22 : g->top + (s->nrank - 1) * g->row + g->row / 2;
			fprintf(f, "<path d=\"M%d,%d L%d,%d\"/><path d=\"M%d,%d L%d,%d\" "
			           "marker-end=\"url(#h%d)\"/>", x1, ya, xm, edge_a, xm, edge_b, x2, yb, col);
		} else {
			fprintf(f, "<path d=\"M%d,%d L%d,%d\" marker-end=\"url(#h%d)\"/>", x1, ya, x2, yb,
			        col);
		}
		fprintf(f, "</g>\n");
	}
	free(nin), free(nout), free(kin), free(kout);
}

/* The legend's text, a line each, so that a narrow timeline (few rounds)
 * still has room for it: svg_legend_width says how much. */
static const char *const legend_lines[] = {
	"solid: reduce, dashed: copy, thick: several chunks",
	"under each rank after each round, its chunks: white nothing, blue part of the "
	"contributions, navy complete",
};
enum { LEGEND_CHAR_PX = 7 }; /* a 12 px sans-serif character, generously */

static int
svg_legend_width(const Sched *s)
{
	int w = 0;
	for (size_t i = 0; i < countof(legend_lines); i++)
		if ((int)strlen(legend_lines[i]) * LEGEND_CHAR_PX > w)
			w = (int)strlen(legend_lines[i]) * LEGEND_CHAR_PX;
	int chunks = s->nchunk > NPALETTE ? 100 * LEGEND_CHAR_PX : s->nchunk * 40;
	return w > chunks ? w : chunks;
}

static void
svg_legend(const Sched *s, int x, int y, FILE *f)
{
	for (size_t i = 0; i < countof(legend_lines); i++)
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\">%s</text>\n", x, y + 18 * (int)i,
		        legend_lines[i]);
	y += 18 * ((int)countof(legend_lines) - 1);
	if (s->nchunk > NPALETTE) {
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\">coloured by operation (%d chunks "
		           "are too many to tell apart by colour; hover an arrow for its chunks):"
		           "</text>\n", x, y + 20, s->nchunk);
		for (int k = 0; k < 2; k++)
			fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\"/><text "
			           "x=\"%d\" y=\"%d\" font-size=\"11\">%s</text>\n", x + k * 80, y + 28,
			        op_colour[k], x + k * 80 + 18, y + 39, k ? "copy" : "reduce");
		return;
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\">chunks (grey: a message of several):"
	           "</text>\n", x, y + 20);
	for (int c = 0; c < s->nchunk; c++)
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\"/><text "
		           "x=\"%d\" y=\"%d\" font-size=\"11\">%d</text>\n", x + c * 40, y + 28,
		        chunk_palette[c], x + c * 40 + 18, y + 39, c);
}

void
explain_svg(const Sched *s, FILE *f)
{
	explain_svg_fault(s, NULL, f);
}

void
explain_svg_fault(const Sched *s, const ExplainFault *fault, FILE *f)
{
	int p = s->nrank, nround = fault ? fault->round + 1 : s->nround;
	SvgGeom g = {.left = 80, .top = 96, .row = 52, .pad = 6};
	g.cw = s->nchunk <= 8 ? 9 : s->nchunk <= 16 ? 6 : 3;
	g.strip = g.cw * s->nchunk;
	g.col = g.strip + 110;
	g.left = 76 + g.strip / 2; /* the start's strips clear of the rank names */
	int w = g.left + nround * g.col + g.strip / 2 + 30, legend = g.top + p * g.row + 10;
	int h = legend + 56 + 18 * ((int)countof(legend_lines) - 1);
	if (w < g.left + svg_legend_width(s) + 20)
		w = g.left + svg_legend_width(s) + 20;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	           "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
	           "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
	           "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", w, h, w, h, w, h);
	fprintf(f, "<defs>\n");
	for (int k = 0; k < NCOLOUR; k++) /* markerUnits: the head grows with the line */
		fprintf(f, "<marker id=\"h%d\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
		           "markerWidth=\"4\" markerHeight=\"4\" orient=\"auto\"><path d=\"M0,0 L10,5 "
		           "L0,10 z\" fill=\"%s\" stroke=\"none\"/></marker>\n", k, colour_of(k));
	fprintf(f, "</defs>\n");
	fprintf(f, "<text x=\"%d\" y=\"26\" font-size=\"16\">'%s': %s, %d ranks, %d chunks, %d "
	           "rounds%s</text>\n", g.left, s->name, coll_kind_name[s->kind], p, s->nchunk,
	        s->nround, fault ? "; wrong: shown up to its fault (red)" : "");
	for (int r = 0; r < p; r++) {
		int y = g.top + r * g.row;
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\">rank %d</text>\n"
		           "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#dddddd\"/>\n",
		        g.left - g.strip / 2 - 8, y + 4, r, g.left, y, g.left + nround * g.col, y);
	}
	for (int k = 0; k <= nround; k++) {
		int x = g.left + k * g.col;
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#bbbbbb\"/>\n", x,
		        g.top - 24, x, g.top + (p - 1) * g.row + 20);
		if (k < nround)
			fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">round "
			           "%d</text>\n", x + g.col / 2, g.top - 34, k + 1);
	}
	Replay R;
	replay_start(&R, s);
	svg_holdings(&R, &g, fault, f);
	while (R.round + 1 < nround && replay_step(&R)) {
		svg_holdings(&R, &g, fault, f);
		svg_messages(&R, &g, fault, f);
	}
	replay_free(&R);
	svg_legend(s, g.left, legend, f);
	fprintf(f, "</svg>\n");
}
