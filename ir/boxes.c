/*
 * boxes.c: the files a .coll file's topology sources name, read before sema:
 * `topology B = nccl_topo("box.xml");` reads NCCL's topology XML with
 * nccl_topo.c's reader, the one `collc nccl-topo` runs, so the language and
 * the command see the same box.
 *
 * Needs: a parsed file (parameters applied) and its path as the driver names
 * it. Establishes: every topology source called with one string has its box
 * (Call.box, its GPU and node counts) or a located error: for a file that
 * cannot be read, at the string; for what the reader cannot use, in the XML
 * at its line, with a note at the string that names the file. A call of
 * another shape is left alone: sema reports it against the registry's
 * signature. A path is taken relative to the .coll file's folder (the
 * working directory for standard input), and only a regular file is read (a
 * FIFO or a device would block or never end).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ast.h"
#include "ir.h"

/* The path a string names, for a .coll file at `from`. */
static const char *
source_path(Arena *a, const char *from, const char *path)
{
	if (path[0] == '/')
		return path;
	const char *slash = strrchr(from, '/');
	if (!slash || strcmp(from, "<stdin>") == 0)
		return arena_printf(a, "./%s", path); /* never "-", read_file's stdin */
	return arena_printf(a, "%.*s/%s", (int)(slash - from), from, path);
}

/* Reads the box c names into c->box, or reports why not. */
static void
load_nccl_topo(Diag *dg, Arena *a, const char *from, Call *c)
{
	const Expr *e = c->arg[0].val.v[0];
	const char *path = source_path(a, from, e->text);
	struct stat st;
	c->box_failed = true;
	if (e->text[0] == 0) {
		error_at(dg, e->loc, "%s: an empty path", c->name);
		return;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		error_at(dg, e->loc, "%s: '%s' is not a regular file", c->name, path);
		return;
	}
	size_t len;
	char err[512];
	char *text = read_file(path, &len, err, sizeof err);
	if (!text) {
		error_at(dg, e->loc, "%s: %s", c->name, err);
		return;
	}
	/* a second Diag with the XML as its source: the run's state, and what
	 * it counts is the run's (as to_msccl_check.c does for its XML) */
	Diag xd = *dg;
	diag_source(&xd, path, text, len);
	NcclBox *box = NEW(a, NcclBox);
	int rc = nccl_box_read(&xd, a, text, len, box);
	dg->errors = xd.errors;
	dg->muted = xd.muted;
	dg->announced = xd.announced;
	free(text);
	if (rc != 0) {
		note_at(dg, e->loc, "in the NCCL topology file %s reads here", c->name);
		return;
	}
	c->box = box;
	c->box_gpus = box->ngpu;
	c->box_nodes = box->nnode;
	c->box_failed = false;
}

int
boxes_load(Diag *dg, File *f)
{
	int before = nerrors(dg);
	for (int i = 0; i < f->ndecl; i++) {
		Call *c = f->decl[i].form;
		if (f->decl[i].kind != DC_TOPOLOGY || !c || topo_source_find(c->name) != TS_NCCL_TOPO ||
		    c->narg != 1 || c->arg[0].label || c->arg[0].val.n != 1 ||
		    c->arg[0].val.v[0]->kind != EX_STRING)
			continue;
		load_nccl_topo(dg, f->arena, f->path, c);
	}
	return nerrors(dg) > before;
}
