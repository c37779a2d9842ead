/*
 * targets.c: one body per reader for the fuzz targets (targets.h). Each
 * takes arbitrary bytes: the readers must report bad input with a located
 * error and never crash, hang or exhaust memory; what they accept must go
 * through the rest of the pipeline as collc itself runs it.
 */
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "backend.h"
#include "ir.h"
#include "msccl_program.h"
#include "msccl_to_sim.h"
#include "sim.h"
#include "targets.h"

/* The input as a NUL-terminated string, as read_file gives it. */
static char *
text_of(const uint8_t *data, size_t size)
{
	char *t = xmalloc(size + 1);
	if (size)
		memcpy(t, data, size);
	t[size] = '\0';
	return t;
}

static void
start(Diag *dg, const char *name, const char *text, size_t len, FILE *diag)
{
	diag_stream(dg, diag);
	diag_reset(dg);
	diag_source(dg, name, text, len);
}

static void
finish(Diag *dg)
{
	diag_stream(dg, NULL);
	diag_reset(dg);
}

static _Noreturn void
broken(const char *what)
{
	fprintf(stderr, "fuzz: invariant broken: %s\n", what);
	abort();
}

/* What a writer makes of x, in memory (malloc'd); a writer that fails on
 * what its reader accepted is a find. */
typedef int (*Writer)(const void *x, FILE *);

static char *
to_text(Writer w, const void *x, size_t *len)
{
	char *buf = NULL;
	FILE *mem = open_memstream(&buf, len);
	if (w(x, mem) != 0)
		broken("what was read cannot be written");
	fclose(mem);
	return buf;
}

/* Written, read back and written again, the text is the same. */
static void
same_text(const char *once, size_t len1, const char *twice, size_t len2, const char *what)
{
	if (len1 != len2 || memcmp(once, twice, len1) != 0)
		broken(what);
}

/* What reads a written text back into *obj (in arena a if it needs one); 0
 * on success. */
typedef int (*Reader)(Diag *, Arena *a, const char *text, size_t len, void *obj);

/* Writes x, reads the text back into *y and writes that again: the text
 * must read back and come out the same. `format` names it in the finds. */
static void
round_trip(Diag *dg, Writer w, const void *x, Reader r, void *y, FILE *diag, const char *format)
{
	char find[128];
	size_t len1, len2;
	char *once = to_text(w, x, &len1);
	Arena b = {0};
	start(dg, "written", once, len1, diag);
	if (r(dg, &b, once, len1, y) != 0 || nerrors(dg) != 0) {
		snprintf(find, sizeof find, "written %s does not read back", format);
		broken(find);
	}
	char *twice = to_text(w, y, &len2);
	snprintf(find, sizeof find, "%s is not written back the same", format);
	same_text(once, len1, twice, len2, find);
	free(twice);
	free(once);
	arena_free(&b);
}

static int
write_fmt(const void *f, FILE *out)
{
	fmt_file(f, out);
	return 0;
}

static int
write_ir(const void *p, FILE *out)
{
	BuildOpts o = {0};
	Diag none = diag_new(); /* writing the IR text reports nothing */
	return ir_backend.emit(&none, p, &o, out);
}

static int
write_sim(const void *n, FILE *out)
{
	sim_write(n, out);
	return 0;
}

static int
read_ir(Diag *dg, Arena *a, const char *text, size_t len, void *p)
{
	(void)a; /* a Prog holds its own arena */
	return ir_read(dg, text, len, p);
}

static int
read_sim(Diag *dg, Arena *a, const char *text, size_t len, void *n)
{
	return sim_read(dg, a, text, len, n);
}

void
fuzz_coll(const char *name, const uint8_t *data, size_t size, FILE *diag)
{
	Diag d = diag_new(), *dg = &d; /* this input's diagnostics */
	char *text = text_of(data, size);
	Arena a = {0};
	start(dg, name, text, size, diag);
	File *f = parse_text(dg, &a, name, text, size);
	if (nerrors(dg) == 0)
		check_file(dg, f, NULL, &(int){0}); /* as every command checks a file */
	if (nerrors(dg) == 0) {
		Prog p = {0};
		p.auto_size = 1 << 20;
		if (lower(dg, f, &p) == 0)
			for (int i = 0; i < p.nsched; i++)
				verify(dg, p.sched[i]); /* as check does: a failure is reported */
		prog_free(&p);
	}
	if (nerrors(dg) == 0) {
		/* the canonical form parses to the same file and is a fixed point */
		size_t len1, len2;
		char *once = to_text(write_fmt, f, &len1);
		Arena b = {0};
		start(dg, "fmt", once, len1, diag);
		File *g = parse_text(dg, &b, "fmt", once, len1);
		if (g)
			g->path = f->path; /* its topology files named from the same folder */
		if (nerrors(dg) == 0)
			check_file(dg, g, NULL, &(int){0});
		if (nerrors(dg) != 0 || !ast_equal(f, g))
			broken("fmt output does not parse back to the same file");
		char *twice = to_text(write_fmt, g, &len2);
		same_text(once, len1, twice, len2, "fmt is not a fixed point");
		free(twice);
		free(once);
		arena_free(&b);
	}
	finish(dg);
	arena_free(&a);
	free(text);
}

/* Collective c of n at `bytes`, in packet and flow mode under each of the
 * nsync synchronizations, with a reduction rate; what it reports is the
 * simulator's business, a crash or a hang a find. */
static void
simulate(const SimNet *n, int c, int64_t bytes, const SimSync *sync, int nsync)
{
	for (int s = 0; s < nsync; s++)
		for (int m = 0; m < 2; m++) {
			SimOpts o = {.mode = m ? SIM_FLOW : SIM_PACKET, .sync = sync[s],
			             .reduce_rate = 1e9};
			SimResult r;
			char err[256];
			Arena run = {0};
			sim_run(&run, n, c, bytes, &o, &r, err, sizeof err);
			arena_free(&run);
		}
}

/* What `collc sim FILE.xml --topology T.coll` does with a program it read:
 * the executor model at a small and a large size, rank r on node r of a
 * ring (routes of several hops), each lowering run in flow and in packet
 * mode. */
static void
exec_model(Diag *dg, Arena *a, const MProg *p)
{
	static const int64_t sizes[] = {1024, 1 << 20};
	int n = p->ngpu < 2 ? 2 : p->ngpu;
	Topo *t = topo_new(a, TK_RING, "R", 1, &n, 0, net_defaults);
	int *node = arena_array(a, (size_t)n, sizeof *node);
	for (int r = 0; r < n; r++)
		node[r] = r;
	for (int k = 0; k < 2; k++) {
		SimNet net;
		if (sim_from_msccl_exec(dg, a, p, t, node, sizes[k], &net) == 0)
			simulate(&net, 0, sizes[k], &(SimSync){SIM_DEPS}, 1);
	}
}

void
fuzz_msccl(const char *name, const uint8_t *data, size_t size, FILE *diag)
{
	Diag d = diag_new(), *dg = &d; /* this input's diagnostics */
	char *text = text_of(data, size);
	for (int legacy = 0; legacy <= 1; legacy++) {
		Arena a = {0};
		MProg p;
		start(dg, name, text, size, diag);
		if (msccl_read(dg, &a, text, size, legacy, &p) == 0 && p.ngpu <= 64) {
			msccl_check_run(dg, &p, msccl_capacity(p.proto), false);
			msccl_check_run(dg, &p, msccl_capacity(p.proto), true);
			exec_model(dg, &a, &p);
		}
		finish(dg);
		arena_free(&a);
	}
	free(text);
}

void
fuzz_ncclxml(const char *name, const uint8_t *data, size_t size, FILE *diag)
{
	Diag d = diag_new(), *dg = &d; /* this input's diagnostics */
	char *text = text_of(data, size);
	Arena a = {0};
	NcclBox b;
	start(dg, name, text, size, diag);
	if (nccl_box_read(dg, &a, text, size, &b) == 0) {
		Topo *t = nccl_box_topo(&a, "B", &b, net_defaults);
		if (t->nrank != b.ngpu || t->nnode != b.nnode || t->nlink != b.nlink)
			abort();
		for (int g = 0; g < b.ngpu; g++)
			if (b.gpu[g].rank != g || nccl_box_topo_node(&b, b.gpu[g].node) != g)
				abort();
	}
	finish(dg);
	arena_free(&a);
	free(text);
}

void
fuzz_ir(const char *name, const uint8_t *data, size_t size, FILE *diag)
{
	Diag d = diag_new(), *dg = &d; /* this input's diagnostics */
	char *text = text_of(data, size);
	Prog p = {0};
	start(dg, name, text, size, diag);
	if (ir_read(dg, text, size, &p) == 0 && nerrors(dg) == 0) {
		bool ok = true;
		for (int i = 0; i < p.nsched; i++)
			ok &= verify(dg, p.sched[i]) == 0;
		if (ok && p.nsched > 0) {
			Prog q = {0};
			round_trip(dg, write_ir, &p, read_ir, &q, diag, "schedule text");
			prog_free(&q);
		}
	}
	finish(dg);
	prog_free(&p);
	free(text);
}

void
fuzz_sim(const char *name, const uint8_t *data, size_t size, FILE *diag)
{
	Diag d = diag_new(), *dg = &d; /* this input's diagnostics */
	char *text = text_of(data, size);
	Arena a = {0};
	SimNet n;
	start(dg, name, text, size, diag);
	if (sim_read(dg, &a, text, size, &n) == 0 && nerrors(dg) == 0) {
		static const SimSync both[] = {SIM_ROUNDS, SIM_DEPS};
		for (int c = 0; c < n.ncoll; c++) {
			simulate(&n, c, 64, both, 2);
			simulate(&n, c, 1024, both, 2);
		}
		SimNet m;
		round_trip(dg, write_sim, &n, read_sim, &m, diag, ".sim text");
	}
	finish(dg);
	arena_free(&a);
	free(text);
}
