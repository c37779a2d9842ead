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

int
explain_check_size(const Sched *s)
{
	long chunks = s->nchunk;
	const char *what = NULL;
	long have = 0, limit = 0;
	if (s->nrank > EXPLAIN_MAX_RANKS)
		what = "ranks", have = s->nrank, limit = EXPLAIN_MAX_RANKS;
	else if (chunks > EXPLAIN_MAX_CHUNKS)
		what = "chunks", have = chunks, limit = EXPLAIN_MAX_CHUNKS;
	else if (s->nround > EXPLAIN_MAX_ROUNDS)
		what = "rounds", have = s->nround, limit = EXPLAIN_MAX_ROUNDS;
	if (!what)
		return 0;
	error_at(s->loc, "explain shows schedules of at most %d ranks, %d chunks and %d rounds; "
	         "'%s' has %ld %s (explain a smaller instance of it)", EXPLAIN_MAX_RANKS,
	         EXPLAIN_MAX_CHUNKS, EXPLAIN_MAX_ROUNDS, s->name, have, what);
	(void)limit;
	return -1;
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
	unsigned char in[EXPLAIN_MAX_CHUNKS] = {0};
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

static void
add_load(const Sched *s, const Msg *m, long *load)
{
	const int *l = s->route_link + s->route_off[m->route];
	for (int k = 0; k < sched_route_len(s, m->route); k++)
		load[l[k]] += m->n;
}

void
explain_text(const Sched *s, FILE *f)
{
	const Topo *t = s->topo;
	int p = s->nrank, nc = s->nchunk;
	uint64_t all = p == 64 ? ~0ull : (1ull << p) - 1;
	uint64_t *st = xcalloc((size_t)p * (size_t)nc, sizeof *st);
	uint64_t *pay = xcalloc((size_t)s->nmsg * EXPLAIN_MAX_CHUNKS + 1, sizeof *pay);
	long *load = xcalloc((size_t)t->nlink + 1, sizeof *load);
	long *total = xcalloc((size_t)t->nlink + 1, sizeof *total);
	char topo[96], buf[512];
	topo_describe(t, topo, sizeof topo);
	fprintf(f, "'%s': %s on %s, %d ranks, %d chunks, %d rounds (%s)\n", s->name,
	        coll_kind_name[s->kind], topo, p, nc, s->nround, s->algorithm);
	fprintf(f, "each rank's chunks as chunk:contributions: {0,3} holds the data of ranks 0 and "
	           "3, * of every rank, - nothing yet\n\nstart\n");
	for (int r = 0; r < p; r++)
		for (int c = 0; c < nc; c++) {
			uint64_t init, want;
			bool care;
			sched_small_expected(s, r, c, &init, &want, &care);
			st[r * nc + c] = init;
		}
	print_state(s, st, all, f);
	for (int i = 0, round = 0; round < s->nround; round++) {
		int j = i;
		while (j < s->nmsg && s->msg[j].round == round)
			j++;
		memset(load, 0, (size_t)t->nlink * sizeof *load);
		for (int m = i; m < j; m++) { /* a round reads what senders held as it began */
			add_load(s, &s->msg[m], load);
			add_load(s, &s->msg[m], total);
			for (int k = 0; k < s->msg[m].n; k++)
				pay[(size_t)m * EXPLAIN_MAX_CHUNKS + (size_t)k] =
					st[s->msg[m].src * nc + s->chunks[s->msg[m].first + k]];
		}
		busiest(s, load, buf, sizeof buf);
		fprintf(f, "\nround %d: %d message%s; busiest link%s %s\n", round + 1, j - i,
		        j - i == 1 ? "" : "s", strchr(buf, ',') ? "s" : "", buf);
		for (int m = i; m < j; m++) {
			const Msg *x = &s->msg[m];
			chunks_text(s, x, buf, sizeof buf);
			fprintf(f, "  rank %d -> rank %d  %-6s chunk%s %s  (%d hop%s)\n", x->src, x->dst,
			        x->op == X_REDUCE ? "reduce" : "copy", x->n == 1 ? "" : "s", buf,
			        sched_route_len(s, x->route), sched_route_len(s, x->route) == 1 ? "" : "s");
			for (int k = 0; k < x->n; k++) {
				uint64_t *cell = &st[x->dst * nc + s->chunks[x->first + k]];
				uint64_t in = pay[(size_t)m * EXPLAIN_MAX_CHUNKS + (size_t)k];
				*cell = x->op == X_COPY ? in : *cell | in;
			}
		}
		print_state(s, st, all, f);
		i = j;
	}
	busiest(s, total, buf, sizeof buf);
	fprintf(f, "\nbusiest link%s over all rounds: %s\n", strchr(buf, ',') ? "s" : "", buf);
	free(st), free(pay), free(load), free(total);
}

/* ---- the SVG timeline ---- */

/* Chunk c of n as a colour around the hue circle (HSV, S = V = 0.8). */
static void
chunk_colour(int c, int n, char *buf, size_t len)
{
	double h = 6.0 * c / (n > 0 ? n : 1), x = 1 - fabs(fmod(h, 2) - 1);
	static const int pick[6][2] = {{0, 1}, {1, 0}, {1, 2}, {2, 1}, {2, 0}, {0, 2}};
	double rgb[3] = {0, 0, 0};
	int sector = (int)h % 6;
	rgb[pick[sector][0]] = 1;
	rgb[pick[sector][1]] = x;
	snprintf(buf, len, "#%02x%02x%02x", (int)(40 + 164 * rgb[0]), (int)(40 + 164 * rgb[1]),
	         (int)(40 + 164 * rgb[2]));
}

void
explain_svg(const Sched *s, FILE *f)
{
	enum { LEFT = 80, TOP = 60, COL = 90, ROW = 32, PAD = 14 };
	int p = s->nrank, w = LEFT + s->nround * COL + 40;
	int legend = TOP + p * ROW + 20;
	int h = legend + 40 + ((s->nchunk + 15) / 16) * 22;
	char col[16];
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	           "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
	           "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
	           "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", w, h, w, h, w, h);
	fprintf(f, "<defs>\n");
	for (int c = 0; c < s->nchunk; c++) {
		chunk_colour(c, s->nchunk, col, sizeof col);
		fprintf(f, "<marker id=\"a%d\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
		           "markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0 L10,5 "
		           "L0,10 z\" fill=\"%s\"/></marker>\n", c, col);
	}
	fprintf(f, "</defs>\n<text x=\"%d\" y=\"26\" font-size=\"16\" text-anchor=\"middle\">'%s': "
	           "%s, %d ranks, %d chunks, %d rounds</text>\n", w / 2, s->name,
	        coll_kind_name[s->kind], p, s->nchunk, s->nround);
	for (int r = 0; r < p; r++) {
		int y = TOP + r * ROW;
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\">rank %d</text>\n"
		           "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#dddddd\"/>\n",
		        LEFT - 10, y + 4, r, LEFT, y, LEFT + s->nround * COL, y);
	}
	for (int k = 0; k <= s->nround; k++) {
		int x = LEFT + k * COL;
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#bbbbbb\"/>\n", x,
		        TOP - 14, x, TOP + (p - 1) * ROW + 14);
		if (k < s->nround)
			fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">round "
			           "%d</text>\n", x + COL / 2, TOP - 22, k + 1);
	}
	for (int i = 0; i < s->nmsg; i++) {
		const Msg *m = &s->msg[i];
		int c = s->chunks[m->first];
		char list[256];
		chunks_text(s, m, list, sizeof list);
		chunk_colour(c, s->nchunk, col, sizeof col);
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
		           "stroke-width=\"%d\"%s marker-end=\"url(#a%d)\"><title>round %d: rank %d -> "
		           "rank %d, %s chunk%s %s</title></line>\n",
		        LEFT + m->round * COL + PAD, TOP + m->src * ROW, LEFT + (m->round + 1) * COL - PAD,
		        TOP + m->dst * ROW, col, m->n > 1 ? 3 : 2,
		        m->op == X_COPY ? " stroke-dasharray=\"6,3\"" : "", c, m->round + 1, m->src,
		        m->dst, m->op == X_COPY ? "copy" : "reduce", m->n == 1 ? "" : "s", list);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\">solid: reduce, dashed: copy, thick: "
	           "several chunks (coloured by the first); chunks:</text>\n", LEFT, legend);
	for (int c = 0; c < s->nchunk; c++) {
		int x = LEFT + (c % 16) * 40, y = legend + 12 + (c / 16) * 22;
		chunk_colour(c, s->nchunk, col, sizeof col);
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\"/><text "
		           "x=\"%d\" y=\"%d\" font-size=\"11\">%d</text>\n", x, y, col, x + 17, y + 11, c);
	}
	fprintf(f, "</svg>\n");
}
