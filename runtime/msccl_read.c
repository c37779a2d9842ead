/*
 * msccl_read.c: reads an MSCCL algorithm XML file. The executor's parser is
 * hand-written and stricter than XML (spec 2.1), so a lexical pass checks
 * rule 1 on the raw text first; libxml2 then gives the element tree with
 * line numbers, and msccl_check.c applies rules 2-13 and 16.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "msccl_program.h"

const char *const mtype_name[NMTYPE] = {"s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop"};
const char *const mproto_name[NPROTO] = {"Simple", "LL", "LL128"};

typedef struct Reader {
	Diag *diag;  /* where this pass's diagnostics go (the run's, from the driver) */
	Arena *a;
	const char *text;
	size_t len;
	bool legacy;
	int errors;
} Reader;

/* The column of the first '<' on a line: where the element starts. */
static Loc
line_loc(const Reader *r, int line)
{
	return xml_element_loc(r->text, r->len, line);
}

#define FAIL(r, line, ...)                          \
	do {                                            \
		error_at((r)->diag, line_loc((r), (line)), __VA_ARGS__); \
		(r)->errors++;                              \
	} while (0)

/* Rule 1 on the raw bytes: what the executor's parser refuses. */
static int
lex_check(Reader *r)
{
	const char *t = r->text;
	size_t n = r->len, i = 0;
	int line = 1, col = 1;
	bool seen = false;
#define ADV() (t[i] == '\n' ? (line++, col = 1) : col++, i++)
#define LEXFAIL(...)                                  \
	do {                                              \
		error_at(r->diag, (Loc){line, col}, __VA_ARGS__);       \
		return -1;                                    \
	} while (0)
	if (n >= 3 && (unsigned char)t[0] == 0xEF && (unsigned char)t[1] == 0xBB)
		LEXFAIL("rule 1 (lexical form): a byte-order mark; the executor's parser expects '<'");
	while (i < n) {
		if (t[i] == ' ' || t[i] == '\n' || t[i] == '\r') {
			ADV();
			continue;
		}
		if (t[i] != '<')
			LEXFAIL("rule 1 (lexical form): %s between elements; only spaces and newlines "
			        "are allowed there",
			        t[i] == '\t' ? "a tab" : "text");
		if (n - i >= 4 && strncmp(t + i, "<!--", 4) == 0) {
			const char *e = strstr(t + i, "-->");
			if (!e)
				LEXFAIL("rule 1 (lexical form): unterminated comment");
			while (t + i < e + 3)
				ADV();
			continue;
		}
		if (i + 1 < n && t[i + 1] == '?' && n - i >= 6 && strncmp(t + i, "<?xml", 5) == 0 &&
		    (t[i + 5] == ' ' || t[i + 5] == '?'))
			LEXFAIL("rule 1 (lexical form): an XML declaration; the executor's parser reads "
			        "'?xml' as an element and stops ('expected >, got '?'')");
		if (i + 1 < n && t[i + 1] == '?')
			LEXFAIL("rule 1 (lexical form): a processing instruction ('<?%.*s'); the executor's "
			        "parser reads it as an element and stops ('expected >, got '?'')",
			        (int)strcspn(t + i + 2, " ?>\n"), t + i + 2);
		bool closing = i + 1 < n && t[i + 1] == '/';
		ADV();
		if (closing)
			ADV();
		size_t ns = i;
		while (i < n && (t[i] == '_' || t[i] == '-' || (t[i] >= 'a' && t[i] <= 'z') ||
		                 (t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= '0' && t[i] <= '9')))
			ADV();
		if (i == ns)
			LEXFAIL("rule 1 (lexical form): expected an element name after '<'");
		if (!seen && !closing) {
			if (i - ns != 4 || strncmp(t + ns, "algo", 4) != 0)
				LEXFAIL("rule 1 (lexical form): <algo> must be the first element");
			seen = true;
		}
		if (closing) {
			if (i >= n || t[i] != '>')
				LEXFAIL("rule 1 (lexical form): a closing tag must be exactly </name>");
			ADV();
			continue;
		}
		for (;;) {
			if (i >= n)
				LEXFAIL("rule 1 (lexical form): unterminated element");
			if (t[i] == '>') {
				ADV();
				break;
			}
			if (t[i] == '/' && i + 1 < n && t[i + 1] == '>') {
				ADV();
				ADV();
				break;
			}
			if (t[i] == '\n' || t[i] == '\r')
				LEXFAIL("rule 1 (lexical form): an element's attributes must all be on one "
				        "line ('expected >, got '\\n'')");
			if (t[i] != ' ')
				LEXFAIL("rule 1 (lexical form): attributes are separated by spaces");
			ADV();
			if (t[i] == ' ' || t[i] == '>' || t[i] == '/')
				continue;
			while (i < n && t[i] != '=' && t[i] != ' ' && t[i] != '>' && t[i] != '\n')
				ADV();
			if (i >= n || t[i] != '=')
				LEXFAIL("rule 1 (lexical form): an attribute needs '=' with no spaces around it");
			ADV();
			if (i >= n || t[i] != '"')
				LEXFAIL("rule 1 (lexical form): attribute values must be in double quotes");
			ADV();
			size_t vs = i;
			int vcol = col;
			while (i < n && t[i] != '"' && t[i] != '\n')
				ADV();
			if (i >= n || t[i] != '"')
				LEXFAIL("rule 1 (lexical form): unterminated attribute value");
			if (i - vs > MSCCL_MAX_VALUE) {
				col = vcol;
				LEXFAIL("rule 1 (lexical form): an attribute value of %zu bytes; the "
				        "executor's parser holds at most %d (a longer one overflows its buffer)",
				        i - vs, MSCCL_MAX_VALUE);
			}
			ADV();
		}
	}
	if (!seen)
		LEXFAIL("rule 1 (lexical form): no <algo> element");
	return 0;
#undef ADV
#undef LEXFAIL
}

static const char *
attr(Reader *r, xmlNode *n, const char *name, bool required)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
	if (!v) {
		if (required)
			FAIL(r, (int)xmlGetLineNo(n), "rule %d (attributes): attribute '%s' of <%s> not found",
			     strcmp((const char *)n->name, "algo") == 0 ? 2
			     : strcmp((const char *)n->name, "gpu") == 0 ? 3
			     : strcmp((const char *)n->name, "step") == 0 ? 7 : 4,
			     name, (const char *)n->name);
		return NULL;
	}
	char *s = arena_strdup(r->a, (const char *)v);
	xmlFree(v);
	return s;
}

/* Numbers as the executor reads them must mean what they say: no leading
 * zeros (octal to strtol), no hex, nothing after the digits. */
static int64_t
num(Reader *r, xmlNode *n, const char *name, bool required, int64_t dflt)
{
	const char *v = attr(r, n, name, required);
	if (!v)
		return dflt;
	const char *d = v[0] == '-' ? v + 1 : v;
	bool ok = *d >= '0' && *d <= '9' && !(d[0] == '0' && d[1]);
	for (const char *c = d; ok && *c; c++)
		ok = *c >= '0' && *c <= '9';
	errno = 0;
	long long x = ok ? strtoll(v, NULL, 10) : 0;
	if (!ok || errno) {
		FAIL(r, (int)xmlGetLineNo(n),
		     "rule 1 (lexical form): %s=\"%s\" of <%s> is not a plain decimal number "
		     "(the executor reads '010' as octal and unparsable values as 0)",
		     name, v, (const char *)n->name);
		return dflt;
	}
	return x;
}

static int
inum(Reader *r, xmlNode *n, const char *name)
{
	int64_t v = num(r, n, name, true, 0);
	if (v < -(1 << 30) || v > (1 << 30)) {
		FAIL(r, (int)xmlGetLineNo(n), "%s=\"%lld\" of <%s> is out of range", name, (long long)v,
		     (const char *)n->name);
		return 0;
	}
	return (int)v;
}

static bool
is(xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static MBuf
buf(Reader *r, xmlNode *n, const char *name)
{
	const char *v = attr(r, n, name, true);
	if (!v)
		return MB_I;
	if (strcmp(v, "i") == 0)
		return MB_I;
	if (strcmp(v, "o") == 0)
		return MB_O;
	if (strcmp(v, "s") == 0)
		return MB_S;
	FAIL(r, (int)xmlGetLineNo(n), "rule 7 (steps): %s=\"%s\" is not a buffer (i, o or s)", name, v);
	return MB_I;
}

static void
read_step(Reader *r, xmlNode *n, MStep *st)
{
	st->line = (int)xmlGetLineNo(n);
	st->s = inum(r, n, "s");
	const char *t = attr(r, n, "type", true);
	st->type = MT_NOP;
	if (t) {
		int k = 0;
		while (k < NMTYPE && strcmp(mtype_name[k], t) != 0)
			k++;
		if (k == NMTYPE)
			FAIL(r, st->line, "rule 7 (steps): type of transfer is not supported: %s", t);
		else
			st->type = (MType)k;
	}
	st->srcbuf = buf(r, n, "srcbuf");
	st->srcoff = inum(r, n, "srcoff");
	st->dstbuf = buf(r, n, "dstbuf");
	st->dstoff = inum(r, n, "dstoff");
	st->cnt = inum(r, n, "cnt");
	st->depid = inum(r, n, "depid");
	st->deps = inum(r, n, "deps");
	st->hasdep = inum(r, n, "hasdep");
}

static void
read_tb(Reader *r, xmlNode *n, MTb *tb)
{
	tb->line = (int)xmlGetLineNo(n);
	tb->id = inum(r, n, "id");
	tb->send = inum(r, n, "send");
	tb->recv = inum(r, n, "recv");
	tb->chan = inum(r, n, "chan");
	for (xmlNode *c = n->children; c; c = c->next)
		tb->nstep += is(c, "step");
	tb->step = arena_array(r->a, (size_t)tb->nstep + 1, sizeof *tb->step);
	int k = 0;
	for (xmlNode *c = n->children; c; c = c->next)
		if (is(c, "step"))
			read_step(r, c, &tb->step[k++]);
}

static void
read_gpu(Reader *r, xmlNode *n, MGpu *g)
{
	g->line = (int)xmlGetLineNo(n);
	g->id = inum(r, n, "id");
	g->i_chunks = inum(r, n, "i_chunks");
	g->o_chunks = inum(r, n, "o_chunks");
	g->s_chunks = inum(r, n, "s_chunks");
	for (xmlNode *c = n->children; c; c = c->next)
		g->ntb += is(c, "tb");
	g->tb = arena_array(r->a, (size_t)g->ntb + 1, sizeof *g->tb);
	int k = 0;
	for (xmlNode *c = n->children; c; c = c->next)
		if (is(c, "tb"))
			read_tb(r, c, &g->tb[k++]);
}

static void
read_algo(Reader *r, xmlNode *n, MProg *p)
{
	p->line = (int)xmlGetLineNo(n);
	p->legacy = r->legacy;
	p->name = attr(r, n, "name", r->legacy);
	const char *proto = attr(r, n, "proto", true);
	if (proto) {
		int k = 0;
		while (k < NPROTO && strcmp(mproto_name[k], proto) != 0)
			k++;
		if (k == NPROTO)
			FAIL(r, p->line, "rule 2 (algo): proto=\"%s\" is not Simple, LL or LL128", proto);
		p->proto = k < NPROTO ? (MProto)k : MP_SIMPLE;
	}
	p->nchannels = inum(r, n, "nchannels");
	p->nchunksperloop = inum(r, n, "nchunksperloop");
	p->ngpus = inum(r, n, "ngpus");
	p->coll_name = attr(r, n, "coll", true);
	if (p->coll_name) {
		static const struct {
			const char *name;
			MColl c;
			int dialect; /* 1 executor, 2 legacy, 3 both */
		} colls[] = {
			{"allreduce", MC_ALLREDUCE, 3},         {"allgather", MC_ALLGATHER, 3},
			{"reducescatter", MC_REDUCESCATTER, 1}, {"reduce_scatter", MC_REDUCESCATTER, 2},
			{"alltoall", MC_ALLTOALL, 3},           {"custom", MC_CUSTOM, 2},
			{"broadcast", MC_BROADCAST, 3},         {"reduce", MC_REDUCE, 3},
		};
		size_t k = 0;
		while (k < countof(colls) && !(strcmp(colls[k].name, p->coll_name) == 0 &&
		                                (colls[k].dialect & (r->legacy ? 2 : 1))))
			k++;
		if (k == countof(colls))
			FAIL(r, p->line,
			     "rule 2 (algo): unsupported collective: %s (%s: %s)", p->coll_name,
			     r->legacy ? "the legacy runtime takes" : "collc runs",
			     r->legacy ? "allreduce, allgather, reduce_scatter, alltoall, broadcast, reduce, "
			                 "custom"
			               : "allreduce, allgather, reducescatter, alltoall, broadcast, reduce; "
			                 "'reduce_scatter' is the legacy spelling (--legacy)");
		else
			p->coll = colls[k].c;
	}
	p->inplace = inum(r, n, "inplace");
	if (r->legacy) {
		/* the legacy runtime runs a file only in the mode inplace names */
		p->outofplace = !p->inplace;
		p->min_bytes = num(r, n, "minBytes", false, 0);
		p->max_bytes = num(r, n, "maxBytes", false, (int64_t)1 << 27);
	} else {
		p->outofplace = inum(r, n, "outofplace");
		p->min_bytes = num(r, n, "minBytes", true, 0);
		p->max_bytes = num(r, n, "maxBytes", true, 0);
	}
	for (xmlNode *c = n->children; c; c = c->next)
		p->ngpu += is(c, "gpu");
	p->gpu = arena_array(r->a, (size_t)p->ngpu + 1, sizeof *p->gpu);
	int k = 0;
	for (xmlNode *c = n->children; c; c = c->next)
		if (is(c, "gpu"))
			read_gpu(r, c, &p->gpu[k++]);
}

static int
by_gpu_id(const void *x, const void *y)
{
	const MGpu *a = x, *b = y;
	return a->id != b->id ? (a->id > b->id) - (a->id < b->id) : a->line - b->line;
}

static int
by_tb_id(const void *x, const void *y)
{
	const MTb *a = x, *b = y;
	return a->id != b->id ? (a->id > b->id) - (a->id < b->id) : a->line - b->line;
}

int
msccl_read(Diag *dg, Arena *a, const char *text, size_t len, bool legacy, MProg *p)
{
	memset(p, 0, sizeof *p);
	Reader r = {.diag = dg, .a = a, .text = text, .len = len, .legacy = legacy};
	if (lex_check(&r) != 0)
		return -1;
	if (len > (size_t)MAX_XML_INPUT_BYTES) {
		error_at(dg, (Loc){1, 1}, "the file is too large");
		return -1;
	}
	xmlDoc *doc = xml_parse(dg, text, len, XML_PARSE_HUGE, "rule 1 (lexical form): ");
	if (!doc)
		return -1;
	xmlNode *root = xmlDocGetRootElement(doc);
	if (!root || !is(root, "algo")) {
		error_at(dg, (Loc){1, 1}, "rule 1 (lexical form): <algo> must be the first element");
		xmlFreeDoc(doc);
		return -1;
	}
	read_algo(&r, root, p);
	xmlFreeDoc(doc);
	if (r.errors)
		return -1;
	/* ids index gpus and tbs; the checker reports gaps and duplicates */
	sort_n(p->gpu, (size_t)p->ngpu, sizeof *p->gpu, by_gpu_id);
	for (int g = 0; g < p->ngpu; g++)
		sort_n(p->gpu[g].tb, (size_t)p->gpu[g].ntb, sizeof *p->gpu[g].tb, by_tb_id);
	return msccl_check(dg, p);
}
