/*
 * to_msccl_xml.c: an MProg as the MSCCL executor's XML. Needs a built
 * program. Establishes the text, within the executor parser's limits
 * (4095 elements a rank, values of 255 bytes: checked before), written
 * directly rather than through libxml2's writer (see XOut).
 */
#include <stdlib.h>
#include <string.h>

#include "to_msccl.h"

static const char *const bufs[] = {"i", "o", "s"};

/* The XML as the executor's parser reads it: no declaration, one element
 * per line, two-space indentation, each element's attributes on its line
 * in double quotes, plain decimals (what libxml2's text writer wrote, made
 * here directly: formatting each number through the writer was a third of
 * a ring(128) build). */
typedef struct XOut {
	char *buf;
	size_t len, cap;
} XOut;

static void
xo_reserve(XOut *o, size_t n)
{
	if (o->len + n <= o->cap)
		return;
	while (o->len + n > o->cap)
		o->cap = o->cap ? 2 * o->cap : 1 << 16;
	o->buf = xrealloc(o->buf, o->cap);
}

static void
xo_str(XOut *o, const char *str)
{
	size_t n = strlen(str);
	xo_reserve(o, n);
	memcpy(o->buf + o->len, str, n);
	o->len += n;
}

static void
xo_long(XOut *o, long long v)
{
	char tmp[24];
	int n = 0;
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	do
		tmp[n++] = (char)('0' + u % 10);
	while ((u /= 10) > 0);
	xo_reserve(o, (size_t)n + 1);
	if (v < 0)
		o->buf[o->len++] = '-';
	while (n > 0)
		o->buf[o->len++] = tmp[--n];
}

/* ` key="v"`, a number */
static void
xo_num(XOut *o, const char *key, long long v)
{
	xo_str(o, " ");
	xo_str(o, key);
	xo_str(o, "=\"");
	xo_long(o, v);
	xo_str(o, "\"");
}

/* ` key="v"`, a string, escaped as libxml2 escapes attribute values */
static void
xo_text(XOut *o, const char *key, const char *v)
{
	xo_str(o, " ");
	xo_str(o, key);
	xo_str(o, "=\"");
	for (; *v; v++) {
		const char *e = *v == '&' ? "&amp;" : *v == '<' ? "&lt;" : *v == '>' ? "&gt;"
		                : *v == '"' ? "&quot;" : *v == '\n' ? "&#10;" : *v == '\r' ? "&#13;"
		                : *v == '\t' ? "&#9;" : NULL;
		if (e) {
			xo_str(o, e);
		} else {
			xo_reserve(o, 1);
			o->buf[o->len++] = *v;
		}
	}
	xo_str(o, "\"");
}

static void
xo_step(XOut *o, const MStep *st)
{
	xo_str(o, "      <step");
	xo_num(o, "s", st->s);
	xo_text(o, "type", mtype_name[st->type]);
	xo_text(o, "srcbuf", bufs[st->srcbuf]);
	xo_num(o, "srcoff", st->srcoff);
	xo_text(o, "dstbuf", bufs[st->dstbuf]);
	xo_num(o, "dstoff", st->dstoff);
	xo_num(o, "cnt", st->cnt);
	xo_num(o, "depid", st->depid);
	xo_num(o, "deps", st->deps);
	xo_num(o, "hasdep", st->hasdep);
	xo_str(o, "/>\n");
}

int
write_xml(const MProg *p, FILE *f)
{
	XOut o = {0};
	xo_str(&o, "<algo");
	xo_text(&o, "name", p->name);
	xo_text(&o, "proto", mproto_name[p->proto]);
	xo_num(&o, "nchannels", p->nchannels);
	xo_num(&o, "nchunksperloop", p->nchunksperloop);
	xo_num(&o, "ngpus", p->ngpus);
	xo_text(&o, "coll", p->coll_name);
	xo_num(&o, "inplace", p->inplace);
	if (!p->legacy)
		xo_num(&o, "outofplace", p->outofplace);
	xo_num(&o, "minBytes", p->min_bytes);
	xo_num(&o, "maxBytes", p->max_bytes);
	xo_str(&o, ">\n");
	for (int g = 0; g < p->ngpus; g++) {
		const MGpu *gp = &p->gpu[g];
		xo_str(&o, "  <gpu");
		xo_num(&o, "id", g);
		xo_num(&o, "i_chunks", gp->i_chunks);
		xo_num(&o, "o_chunks", gp->o_chunks);
		xo_num(&o, "s_chunks", gp->s_chunks);
		xo_str(&o, gp->ntb ? ">\n" : ">");
		for (int t = 0; t < gp->ntb; t++) {
			const MTb *tb = &gp->tb[t];
			xo_str(&o, "    <tb");
			xo_num(&o, "id", tb->id);
			xo_num(&o, "send", tb->send);
			xo_num(&o, "recv", tb->recv);
			xo_num(&o, "chan", tb->chan);
			xo_str(&o, tb->nstep ? ">\n" : ">");
			for (int k = 0; k < tb->nstep; k++)
				xo_step(&o, &tb->step[k]);
			xo_str(&o, tb->nstep ? "    </tb>\n" : "</tb>\n");
		}
		xo_str(&o, gp->ntb ? "  </gpu>\n" : "</gpu>\n");
	}
	xo_str(&o, "</algo>\n\n"); /* the blank line the libxml2 writer left */
	fwrite(o.buf, 1, o.len, f);
	free(o.buf);
	return 0;
}
