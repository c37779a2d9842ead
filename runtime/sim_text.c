/*
 * sim_text.c: the .sim text format (docs/sim.md, "The .sim format"),
 * version 1: read into the engine's input, and written from it. Line
 * based, one record per line, tokens separated by blanks, '#' starts a
 * comment line. Every error is located (line:col) and the file is rejected
 * whole: the engine only ever sees a checked network.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collc_limits.h"
#include "sim.h"

static const char magic[] = "collc-sim";

bool
sim_is_text(const char *text, size_t len)
{
	return input_kind("", text, len) == IN_SIM_TEXT;
}

typedef struct Rd {
	Diag *diag;  /* where this pass's diagnostics go (the run's, from the driver) */
	Arena *a;
	const char *p, *end, *line_start;
	int line;
	Loc tok;           /* where the last token started */
	char buf[256];     /* the last token */
	bool long_tok;     /* it did not fit in buf */
} Rd;

static void
skip_blank(Rd *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\r'))
		r->p++;
}

static Loc
here(Rd *r)
{
	return (Loc){r->line, (int)(r->p - r->line_start) + 1};
}

/* The next token on this line, or NULL at the end of the line. */
static const char *
token(Rd *r)
{
	skip_blank(r);
	r->tok = here(r);
	if (r->p >= r->end || *r->p == '\n')
		return NULL;
	size_t n = 0;
	r->long_tok = false;
	while (r->p < r->end && *r->p != ' ' && *r->p != '\t' && *r->p != '\r' && *r->p != '\n') {
		if (n + 1 < sizeof r->buf)
			r->buf[n++] = *r->p;
		else
			r->long_tok = true;
		r->p++;
	}
	r->buf[n] = 0;
	return r->buf;
}

/* Moves to the next line that is not blank or a comment; false at EOF. */
static bool
next_line(Rd *r)
{
	for (;;) {
		while (r->p < r->end && *r->p != '\n')
			r->p++;
		if (r->p >= r->end)
			return false;
		r->p++;
		r->line++;
		r->line_start = r->p;
		skip_blank(r);
		if (r->p < r->end && *r->p != '\n' && *r->p != '#')
			return true;
	}
}

static int
fail(Rd *r, const char *what)
{
	error_at(r->diag, r->tok, "%s", what);
	return -1;
}

/* Shortest lines of the counted kinds: "link 0 1 1 0 0" and
 * "m 0 0 0 0 1 copy 0", newline included. */
enum { MIN_LINK_LINE = 15, MIN_MSG_LINE = 19 };

/* A count the file announces, held against the bytes left to carry it,
 * before anything is sized by it: a short file cannot ask for gigabytes. */
static int
want_room(Rd *r, int64_t count, int min_line, const char *what)
{
	int64_t room = (int64_t)(r->end - r->p) / min_line;
	if (count <= room)
		return 0;
	error_at(r->diag, r->tok, "the file announces %lld %s, but what is left of it holds at most %lld",
	         (long long)count, what, (long long)room);
	return -1;
}

static int
want_word(Rd *r, const char *w)
{
	const char *t = token(r);
	if (!t || strcmp(t, w) != 0) {
		error_at(r->diag, r->tok, "expected '%s'%s%s%s", w, t ? ", found '" : " here", t ? t : "",
		         t ? "'" : "");
		return -1;
	}
	return 0;
}

static int
want_int(Rd *r, int64_t lo, int64_t hi, int64_t *out, const char *what)
{
	const char *t = token(r);
	if (!t) {
		error_at(r->diag, r->tok, "expected %s", what);
		return -1;
	}
	char *e;
	errno = 0;
	long long v = strtoll(t, &e, 10);
	if (*e || errno || v < lo || v > hi) {
		error_at(r->diag, r->tok, "%s must be an integer in %lld..%lld, not '%s'", what, (long long)lo,
		         (long long)hi, t);
		return -1;
	}
	*out = v;
	return 0;
}

static int
want_i(Rd *r, int lo, int hi, int *out, const char *what)
{
	int64_t v;
	if (want_int(r, lo, hi, &v, what) != 0)
		return -1;
	*out = (int)v;
	return 0;
}

static int
want_name(Rd *r, const char **out, const char *what)
{
	const char *t = token(r);
	if (!t) {
		error_at(r->diag, r->tok, "expected %s", what);
		return -1;
	}
	if (r->long_tok) {
		error_at(r->diag, r->tok, "%s is at most %zu bytes", what, sizeof r->buf - 1);
		return -1;
	}
	*out = arena_strdup(r->a, t);
	return 0;
}

/* Takes word w if it comes next on the line; else leaves the line as it was. */
static bool
take_word(Rd *r, const char *w)
{
	const char *p = r->p;
	const char *t = token(r);
	if (t && strcmp(t, w) == 0)
		return true;
	r->p = p;
	return false;
}

/* Hop j of a fused message is link l: into the switch (*sw, the first
 * link's end) until the first link out of it, then out of it. */
static bool
fused_hop(const SimNet *n, int l, int j, int *sw)
{
	const SimLink *k = &n->link[l];
	if (j == 0)
		*sw = k->dst;
	return k->dst == *sw || k->src == *sw;
}

/* A message's optional "instance K" (0 without it). */
static int
read_instance(Rd *r, int *out)
{
	*out = 0;
	return take_word(r, "instance") ? want_i(r, 1, MAX_INSTANCES - 1, out, "the instance") : 0;
}

static int
end_line(Rd *r)
{
	const char *t = token(r);
	if (t) {
		error_at(r->diag, r->tok, "unexpected '%s' at the end of the line", t);
		return -1;
	}
	return 0;
}

/* WORD K R1 .. RK, if WORD comes next: rounds marked in *flags (nround + 1
 * bytes), each in first..nround-1. 0, or -1 after reporting. */
static int
read_marks(Rd *r, const char *word, int first, int nround, unsigned char **flags,
           const char *count_what, const char *round_what)
{
	int k;
	if (!take_word(r, word))
		return 0;
	if (want_i(r, 1, nround, &k, count_what))
		return -1;
	*flags = arena_array(r->a, (size_t)nround + 1, 1);
	for (int i = 0; i < k; i++) {
		int round;
		if (want_i(r, first, nround - 1, &round, round_what))
			return -1;
		(*flags)[round] = 1;
	}
	return 0;
}

static int
read_coll(Rd *r, SimNet *n, SimColl *c)
{
	int64_t nmsg;
	if (want_name(r, &c->name, "a collective name") || want_name(r, &c->kind, "a kind") ||
	    want_name(r, &c->algorithm, "an algorithm") || want_word(r, "ranks") ||
	    want_i(r, 1, n->nnode, &c->nrank, "the rank count") || want_word(r, "rounds") ||
	    want_i(r, 0, MAX_ROUNDS, &c->nround, "the round count") || want_word(r, "messages") ||
	    want_int(r, 0, MAX_TRANSFERS, &nmsg, "the message count") ||
	    want_room(r, nmsg, MIN_MSG_LINE, "messages") || want_word(r, "deps"))
		return -1;
	const char *d = token(r);
	if (!d || (strcmp(d, "yes") && strcmp(d, "no")))
		return fail(r, "expected 'yes' or 'no' after 'deps'");
	c->has_deps = strcmp(d, "yes") == 0;
	if (read_marks(r, "reconfig", 0, c->nround, &c->reconfig, "the reconfiguration count",
	               "a round before which it reconfigures") ||
	    read_marks(r, "barrier", 1, c->nround, &c->barrier, "the barrier count",
	               "a round before which it waits") || end_line(r))
		return -1;
	if (!next_line(r) || (want_word(r, "ranks")))
		return r->p >= r->end ? fail(r, "expected the 'ranks' line") : -1;
	c->rank_node = arena_array(r->a, (size_t)c->nrank, sizeof *c->rank_node);
	unsigned char *seen = arena_array(r->a, (size_t)n->nnode, 1);
	for (int i = 0; i < c->nrank; i++) {
		if (want_i(r, 0, n->nnode - 1, &c->rank_node[i], "a node id"))
			return -1;
		if (seen[c->rank_node[i]]++)
			return fail(r, "a node holds two ranks");
	}
	if (end_line(r))
		return -1;
	c->nmsg = (int)nmsg;
	c->msg = arena_array(r->a, (size_t)c->nmsg + 1, sizeof *c->msg);
	size_t caphop = (size_t)c->nmsg * 2 + 16, capdep = c->has_deps ? (size_t)c->nmsg + 16 : 1;
	size_t nhops = 0, ndeps = 0;
	int *hops = xmalloc(caphop * sizeof *hops), *deps = xmalloc(capdep * sizeof *deps);
	int rc = -1;
	for (int i = 0; i < c->nmsg; i++) {
		SimMsg *m = &c->msg[i];
		if (!next_line(r)) {
			error_at(r->diag, here(r), "expected %d messages, found %d", c->nmsg, i);
			goto out;
		}
		const char *op;
		int64_t num, den;
		if (want_word(r, "m") || want_i(r, 0, c->nround - 1, &m->round, "the round") ||
		    want_i(r, 0, c->nrank - 1, &m->src, "the sender rank") ||
		    want_i(r, 0, c->nrank - 1, &m->dst, "the receiver rank") ||
		    want_int(r, 0, INT64_MAX / 2, &num, "the size numerator") ||
		    want_int(r, 1, INT64_MAX / 2, &den, "the size denominator"))
			goto out;
		if (i > 0 && m->round < c->msg[i - 1].round) {
			fail(r, "messages must be sorted by round");
			goto out;
		}
		m->num = num, m->den = den;
		if (!(op = token(r)) || (strcmp(op, "reduce") && strcmp(op, "copy") && strcmp(op, "fused"))) {
			fail(r, "expected 'reduce', 'copy' or 'fused'");
			goto out;
		}
		m->reduce = op[0] == 'r';
		m->fused = op[0] == 'f';
		if (want_i(r, 0, n->nlink, &m->nhop, "the hop count"))
			goto out;
		if (nhops + (size_t)m->nhop > caphop) {
			caphop = 2 * (nhops + (size_t)m->nhop);
			hops = xrealloc(hops, caphop * sizeof *hops);
		}
		m->hop = (int)nhops;
		int at = c->rank_node[m->src], sw = -1;
		for (int j = 0; j < m->nhop; j++) {
			int l;
			if (want_i(r, 0, n->nlink - 1, &l, "a link id"))
				goto out;
			if (m->fused ? !fused_hop(n, l, j, &sw) : n->link[l].src != at) {
				fail(r, m->fused ? "a fused message's links go into one switch, then out of it"
				                 : "this link does not start where the route is");
				goto out;
			}
			at = n->link[l].dst;
			hops[nhops++] = l;
		}
		if (m->fused ? m->nhop && (sw < 0 || at == sw) : at != c->rank_node[m->dst]) {
			fail(r, "the route does not end at the receiver's node");
			goto out;
		}
		if (c->has_deps) {
			if (want_i(r, 0, i, &m->ndep, "the dependency count"))
				goto out;
			if (ndeps + (size_t)m->ndep > capdep) {
				capdep = 2 * (ndeps + (size_t)m->ndep);
				deps = xrealloc(deps, capdep * sizeof *deps);
			}
			m->dep = (int)ndeps;
			for (int j = 0; j < m->ndep; j++) {
				int x;
				if (want_i(r, 0, i - 1, &x, "an earlier message's index"))
					goto out;
				deps[ndeps++] = x;
			}
		}
		if (read_instance(r, &m->instance) || end_line(r))
			goto out;
	}
	c->hops = arena_array(r->a, nhops + 1, sizeof *c->hops);
	memcpy(c->hops, hops, nhops * sizeof *hops);
	c->deps = arena_array(r->a, ndeps + 1, sizeof *c->deps);
	memcpy(c->deps, deps, ndeps * sizeof *deps);
	rc = 0;
out:
	free(hops);
	free(deps);
	return rc;
}

/* Whether the current line starts with the word w (nothing is consumed). */
static bool
at_word(const Rd *r, const char *w)
{
	size_t n = strlen(w);
	return (size_t)(r->end - r->p) > n && memcmp(r->p, w, n) == 0 &&
	       (r->p[n] == ' ' || r->p[n] == '\t');
}

static int
want_real(Rd *r, double *out, const char *what)
{
	const char *t = token(r);
	char *e;
	*out = t ? strtod(t, &e) : -1;
	if (!t || *e || !(*out >= 0 && *out <= 1e300)) {
		error_at(r->diag, r->tok, "expected %s (a finite number >= 0)", what);
		return -1;
	}
	return 0;
}

/* The net line's optional end: 'switching store_and_forward', then
 * 'buffer_packets N' or 'buffer_bytes N' (absent: cut-through, the
 * default buffer), then 'in_network_reduction'. */
static int
read_switching(Rd *r, SimNet *n)
{
	if (take_word(r, "switching")) {
		if (take_word(r, "store_and_forward"))
			n->switching = SIM_STORE_AND_FORWARD;
		else if (!take_word(r, "cut_through"))
			return fail(r, "expected cut_through or store_and_forward");
	}
	if (take_word(r, "buffer_packets") &&
	    want_int(r, 1, SIM_MAX_BUFFER, &n->buffer_pkts, "the buffer (packets)"))
		return -1;
	else if (!n->buffer_pkts && take_word(r, "buffer_bytes") &&
	         want_int(r, 1, INT64_MAX / 4, &n->buffer_bytes, "the buffer (bytes)"))
		return -1;
	n->in_network = take_word(r, "in_network_reduction");
	return 0;
}

/* The optional line after 'net': the energy model's router and static terms. */
static int
read_energy(Rd *r, SimNet *n)
{
	if (want_word(r, "energy") || want_word(r, "router_j_per_bit") ||
	    want_real(r, &n->router_energy_per_bit, "the router energy per bit (joules)") ||
	    want_word(r, "port_w") ||
	    want_real(r, &n->port_static_w, "the static power per router port (watts)") ||
	    want_word(r, "ports") ||
	    want_int(r, 0, INT64_MAX / 4, &n->nport, "the router port count") ||
	    want_word(r, "link_w") ||
	    want_real(r, &n->link_static_w, "the static power per link (watts)") || end_line(r))
		return -1;
	if (!next_line(r))
		return fail(r, "expected the 'topology' line");
	return 0;
}

int
sim_read(Diag *dg, Arena *a, const char *text, size_t len, SimNet *n)
{
	Rd r = {.diag = dg, .a = a, .p = text, .end = text + len, .line_start = text, .line = 1};
	memset(n, 0, sizeof *n);
	if (text_only(dg, text, len) != 0)
		return -1;
	int64_t v;
	if (want_word(&r, magic) || want_int(&r, 1, 1 << 20, &v, "the format version"))
		return -1;
	if (v != SIM_VERSION)
		return fail(&r, "this collc reads .sim version 1 only");
	if (end_line(&r))
		return -1;
	if (!next_line(&r))
		return fail(&r, "expected the 'net' line");
	if (want_word(&r, "net") || want_word(&r, "mtu") ||
	    want_int(&r, 1, SIM_MAX_MTU, &n->mtu, "the mtu (bytes)") || want_word(&r, "router_ps") ||
	    want_int(&r, 0, INT64_MAX / 4, &n->router_ps, "the router latency (ps)") ||
	    want_word(&r, "step_ps") ||
	    want_int(&r, 0, INT64_MAX / 4, &n->step_ps, "the step overhead (ps)"))
		return -1;
	if (take_word(&r, "reconfig_ps") &&
	    want_int(&r, 0, INT64_MAX / 4, &n->reconfig_ps, "the reconfiguration delay (ps)"))
		return -1;
	if (read_switching(&r, n) || end_line(&r))
		return -1;
	if (!next_line(&r))
		return fail(&r, "expected the 'topology' line");
	if (at_word(&r, "energy") && read_energy(&r, n) != 0)
		return -1;
	if (want_word(&r, "topology") || want_name(&r, &n->topo, "the topology's form") ||
	    want_i(&r, 0, MAX_DIMS, &n->ndim, "the dimension count"))
		return -1;
	for (int i = 0; i < n->ndim; i++)
		if (want_i(&r, 1, MAX_NODES, &n->size[i], "a size"))
			return -1;
	if (want_word(&r, "nodes") || want_i(&r, 1, MAX_NODES, &n->nnode, "the node count") ||
	    want_word(&r, "links") || want_i(&r, 0, MAX_LINKS, &n->nlink, "the link count") ||
	    want_room(&r, n->nlink, MIN_LINK_LINE, "links") || end_line(&r))
		return -1;
	n->link = arena_array(a, (size_t)n->nlink + 1, sizeof *n->link);
	for (int i = 0; i < n->nlink; i++) {
		SimLink *l = &n->link[i];
		if (!next_line(&r))
			return fail(&r, "fewer links than announced");
		if (want_word(&r, "link") || want_i(&r, 0, n->nnode - 1, &l->src, "a node id") ||
		    want_i(&r, 0, n->nnode - 1, &l->dst, "a node id") ||
		    want_int(&r, 1, INT64_MAX / 4, &l->bw, "the bandwidth (bits/s)") ||
		    want_int(&r, 0, INT64_MAX / 4, &l->lat_ps, "the latency (ps)"))
			return -1;
		const char *t = token(&r);
		char *e;
		l->energy_per_bit = t ? strtod(t, &e) : -1;
		if (!t || *e || !(l->energy_per_bit >= 0 && l->energy_per_bit < 1))
			return fail(&r, "expected the energy per bit (joules, >= 0)");
		if (end_line(&r))
			return -1;
		if (l->src == l->dst)
			return fail(&r, "a link joins a node to itself");
	}
	SimColl *colls = NULL;
	int cap = 0;
	while (next_line(&r)) {
		if (want_word(&r, "collective"))
			return -1;
		SimColl c = {.loc = r.tok};
		if (read_coll(&r, n, &c) != 0)
			return -1;
		VEC_PUSH(a, colls, n->ncoll, cap, c);
	}
	n->coll = colls;
	return 0;
}

/* Messages of c (all, or a streamed round's) with their hops. */
static void
write_msgs(const SimColl *c, const SimMsg *msg, int nmsg, const int *hops, FILE *f)
{
	for (int i = 0; i < nmsg; i++) {
		const SimMsg *m = &msg[i];
		fprintf(f, "m %d %d %d %lld %lld %s %d", m->round, m->src, m->dst, (long long)m->num,
		        (long long)m->den, m->fused ? "fused" : m->reduce ? "reduce" : "copy", m->nhop);
		for (int j = 0; j < m->nhop; j++)
			fprintf(f, " %d", hops[m->hop + j]);
		if (c->has_deps) {
			fprintf(f, " %d", m->ndep);
			for (int j = 0; j < m->ndep; j++)
				fprintf(f, " %d", c->deps[m->dep + j]);
		}
		if (m->instance != 0)
			fprintf(f, " instance %d", m->instance);
		fputc('\n', f);
	}
}

/* " WORD K R1 .. RK" for the K rounds marked in flags, or nothing. */
static void
write_marks(FILE *f, const char *word, const unsigned char *flags, int nround)
{
	int k = 0;
	for (int r = 0; flags && r < nround; r++)
		k += flags[r];
	if (k == 0)
		return;
	fprintf(f, " %s %d", word, k);
	for (int r = 0; r < nround; r++)
		if (flags[r])
			fprintf(f, " %d", r);
}

void
sim_write(const SimNet *n, FILE *f)
{
	fprintf(f, "%s %d\n", magic, SIM_VERSION);
	bool rewires = false;
	for (int ci = 0; ci < n->ncoll; ci++)
		rewires |= n->coll[ci].reconfig != NULL;
	fprintf(f, "net mtu %lld router_ps %lld step_ps %lld", (long long)n->mtu,
	        (long long)n->router_ps, (long long)n->step_ps);
	if (rewires) /* only then: files without optical switches read as before */
		fprintf(f, " reconfig_ps %lld", (long long)n->reconfig_ps);
	if (n->switching == SIM_STORE_AND_FORWARD) /* cut-through is the default */
		fputs(" switching store_and_forward", f);
	if (n->buffer_pkts > 0)
		fprintf(f, " buffer_packets %lld", (long long)n->buffer_pkts);
	else if (n->buffer_bytes > 0)
		fprintf(f, " buffer_bytes %lld", (long long)n->buffer_bytes);
	if (n->in_network)
		fputs(" in_network_reduction", f);
	fputc('\n', f);
	if (n->router_energy_per_bit > 0 || n->port_static_w > 0 || n->link_static_w > 0)
		fprintf(f, "energy router_j_per_bit %.17g port_w %.17g ports %lld link_w %.17g\n",
		        n->router_energy_per_bit, n->port_static_w, (long long)n->nport,
		        n->link_static_w);
	fprintf(f, "topology %s %d", n->topo, n->ndim);
	for (int i = 0; i < n->ndim; i++)
		fprintf(f, " %d", n->size[i]);
	fprintf(f, " nodes %d links %d\n", n->nnode, n->nlink);
	for (int i = 0; i < n->nlink; i++) {
		const SimLink *l = &n->link[i];
		fprintf(f, "link %d %d %lld %lld %.17g\n", l->src, l->dst, (long long)l->bw,
		        (long long)l->lat_ps, l->energy_per_bit);
	}
	for (int ci = 0; ci < n->ncoll; ci++) {
		const SimColl *c = &n->coll[ci];
		fprintf(f, "collective %s %s %s ranks %d rounds %d messages %d deps %s", c->name,
		        c->kind, c->algorithm, c->nrank, c->nround, c->nmsg, c->has_deps ? "yes" : "no");
		write_marks(f, "reconfig", c->reconfig, c->nround);
		write_marks(f, "barrier", c->barrier, c->nround);
		fputs("\nranks", f);
		for (int i = 0; i < c->nrank; i++)
			fprintf(f, " %d", c->rank_node[i]);
		fputc('\n', f);
		if (!c->stream) {
			write_msgs(c, c->msg, c->nmsg, c->hops, f);
			continue;
		}
		for (int r = 0; r < c->nround; r++) {
			SimRound x = c->stream->round(c->stream->ctx, r);
			write_msgs(c, x.msg, x.nmsg, x.hops, f);
		}
	}
}
