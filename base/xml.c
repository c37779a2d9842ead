/*
 * xml.c: libxml2's parse of a whole text, for collc's two XML readers
 * (ir/nccl_topo.c, runtime/msccl_read.c).
 *
 * Needs: the text (its size checked by the reader against its limit).
 * Establishes: the document, or NULL after one located error; in either
 * case nothing printed by libxml2 itself. XML_PARSE_NOERROR silences the
 * parser, but libxml2's encoding layer reports through its generic error
 * function whatever the flags ("encoding error : input conversion failed
 * due to input error, bytes 0x8E 0xFF ..." and "I/O error : encoder
 * error" for a text declared EUC-JP that is not), so that function is a
 * silent one for the parse and the caller's again after it (libxml2 keeps
 * it per thread). What libxml2 says of the text reaches the user in the
 * error, escaped as every message is (base/diag.c).
 */
#include "base.h"

#include <string.h>

#include <libxml/parser.h>
#include <libxml/xmlerror.h>

static void
xml_say_nothing(void *ctx, const char *msg, ...)
{
	(void)ctx;
	(void)msg;
}

xmlDoc *
xml_parse(Diag *dg, const char *text, size_t len, int flags, const char *rule)
{
	xmlGenericErrorFunc was = xmlGenericError;
	void *was_ctx = xmlGenericErrorContext;
	xmlSetGenericErrorFunc(NULL, xml_say_nothing);
	xmlDoc *doc = xmlReadMemory(text, (int)len, NULL, NULL,
	                            XML_PARSE_NONET | XML_PARSE_BIG_LINES | XML_PARSE_NOERROR |
	                                XML_PARSE_NOWARNING | flags);
	xmlSetGenericErrorFunc(was_ctx, was);
	if (!doc) {
		const xmlError *e = xmlGetLastError();
		char msg[256];
		snprintf(msg, sizeof msg, "%s", e && e->message ? e->message : "parse error");
		msg[strcspn(msg, "\n")] = 0;
		error_at(dg, (Loc){e && e->line > 0 ? e->line : 1, e && e->int2 > 0 ? e->int2 : 1},
		         "%snot well-formed XML: %s", rule, msg);
		xmlResetLastError();
	}
	return doc;
}
