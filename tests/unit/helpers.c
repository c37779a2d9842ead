/* helpers.c: running the front end on text with diagnostics captured. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver.h"
#include "ir.h"
#include "tests.h"

void
check_text(Diag *dg, Checked *c, const char *name, const char *text, size_t len)
{
	memset(c, 0, sizeof *c);
	size_t dlen;
	FILE *mem = open_memstream(&c->diag, &dlen);
	diag_stream(dg, mem);
	diag_reset(dg);
	diag_source(dg, name, text, len);
	c->file = parse_text(dg, &c->arena, name, text, len);
	if (nerrors(dg) == 0)
		check_file(dg, c->file, NULL, &(int){0});
	c->errors = nerrors(dg);
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
}

void
check_built(Diag *dg, Checked *c, const char *name, const char *text, size_t len)
{
	check_text(dg, c, name, text, len);
	if (c->errors)
		return;
	size_t dlen;
	free(c->diag);
	c->diag = NULL;
	FILE *mem = open_memstream(&c->diag, &dlen);
	diag_stream(dg, mem);
	diag_reset(dg);
	diag_source(dg, name, text, len);
	Prog p = {0};
	lower_verified(dg, c->file, &p, NULL, false, false); /* the driver's path (load) */
	prog_free(&p);
	c->errors = nerrors(dg);
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
}

void
check_str(Diag *dg, Checked *c, const char *text)
{
	check_text(dg, c, "t.coll", text, strlen(text));
}

int
lower_str(Diag *dg, const char *text, double size, Checked *c, Prog *p)
{
	memset(p, 0, sizeof *p);
	p->auto_size = size;
	check_str(dg, c, text);
	if (c->errors)
		return -1;
	size_t len;
	char *more = NULL;
	FILE *mem = open_memstream(&more, &len);
	diag_stream(dg, mem);
	diag_source(dg, "t.coll", text, strlen(text));
	int rc = lower(dg, c->file, p);
	for (int i = 0; rc == 0 && i < p->nsched; i++)
		rc = verify(dg, p->sched[i]);
	diag_stream(dg, NULL);
	fclose(mem);
	diag_reset(dg);
	free(c->diag);
	c->diag = more;
	return rc;
}

void
checked_free(Checked *c)
{
	arena_free(&c->arena);
	free(c->diag);
}

char *
fmt_string(const File *f)
{
	char *buf = NULL;
	size_t len;
	FILE *mem = open_memstream(&buf, &len);
	fmt_file(f, mem);
	fclose(mem);
	return buf;
}

char *
slurp(const char *path, size_t *lenp)
{
	char err[256];
	size_t len;
	char *text = read_file(path, &len, err, sizeof err);
	if (text && lenp)
		*lenp = len;
	return text;
}

const char *
diag_msg(const Checked *c, const char *needle)
{
	static char msg[2048];
	snprintf(msg, sizeof msg, "expected diagnostic '%s', got: %s", needle,
	         c->diag[0] ? c->diag : "(none)");
	return msg;
}

void
assert_named(int ok, int line, const char *file, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, (unsigned)line, msg, file, "", CU_FALSE);
}

void
write_in(const char *dir, const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

/* One small topology of every form, indexed by TopoKind: a form added to
 * the registry without one here fails to compile (test_alg builds every
 * algorithm on each, test_backend round-trips each through the IR text). */
const char *const topo_form_decl[] = {
	[TK_TORUS] = "torus(4, 4)",
	[TK_MESH] = "mesh(4, 4)",
	[TK_SUPERMESH] = "supermesh(4, 4, bi)",
	[TK_HYPERX] = "hyperx(4, 4)",
	[TK_SPINE_LEAF] = "spine_leaf(spines 2, leaves 4, hosts 2)",
	[TK_RING] = "ring(8)",
	[TK_FULL] = "full(8)",
	[TK_OPTICAL_RING] = "optical_ring(8, ports 4)",
	[TK_RAILS] = "rails(boxes 2, gpus 4, nic_gbps 400)",
	[TK_XGMI_RAILS] = "xgmi_rails(boxes 2, gpus 4, nic_gbps 400)",
	[TK_LEAF_SPINE_BOXES] = "leaf_spine_boxes(boxes 2, gpus 4, nic_gbps 400, spines 2)",
	[TK_TORUS_BOXES] = "torus_boxes(boxes 2, 2, gpus 4, nic_gbps 400)",
	[TK_GRAPH] = "graph { nodes 4; link 0 <-> 1; link 1 <-> 2; link 2 <-> 3; link 3 <-> 0; }",
};
_Static_assert(countof(topo_form_decl) == NTOPOKIND, "a topology of every form");
int
load_scaled(int seconds)
{
	double load = 0;
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &load) != 1)
			load = 0;
		fclose(f);
	}
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	return (int)(seconds * (1 + load / (ncpu > 0 ? (double)ncpu : 1)));
}

bool
near_rel(double a, double b, double tol)
{
	return fabs(a - b) <= tol * fmax(1, fmax(fabs(a), fabs(b)));
}

int
csv_split(char *line, char **field, int max)
{
	int n = 0;
	for (char *t = line; t && n < max;) {
		field[n++] = t;
		t = strchr(t, ',');
		if (t)
			*t++ = '\0';
	}
	return n;
}

CutBound
cut_bound_of(const Topo *t, CollKind k)
{
	int *rn = malloc((size_t)t->nnode * sizeof *rn), n = 0;
	for (int v = 0; v < t->nnode; v++)
		if (!t->is_switch || !t->is_switch[v])
			rn[n++] = v;
	CutBound b;
	CU_ASSERT_EQUAL(cutbound_topo(t, rn, n, 0, k, &b), CUT_OK);
	free(rn);
	return b;
}

FILE *
temp_file(char *path)
{
	int fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	FILE *f = fdopen(fd, "w");
	CU_ASSERT_FATAL(f != NULL);
	return f;
}

int
collc_cpu_limited(int seconds, const char *fmt, ...)
{
	char args[1024], cmd[1280];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof cmd, "ulimit -t %d; %s %s", seconds, COLLC_BIN, args);
	return system(cmd);
}

/* The busbw a schedule's link volumes allow: the most loaded link (bytes
 * over bandwidth) sets the time of the whole allgather of N bytes, busbw
 * (p - 1) / p x N / time, in bits/s (N cancels). */
double
volume_busbw(const Sched *s)
{
	const Topo *t = s->topo;
	double *chunks = calloc((size_t)t->nlink, sizeof *chunks), worst = 0;
	for (int m = 0; m < s->nmsg; m++)
		for (int i = s->route_off[s->msg[m].route]; i < s->route_off[s->msg[m].route + 1]; i++)
			chunks[s->route_link[i]] += s->msg[m].n;
	for (int l = 0; l < t->nlink; l++)
		worst = fmax(worst, chunks[l] / t->link[l].bandwidth);
	free(chunks);
	return (s->nrank - 1.0) / s->nrank * (double)s->nchunk / worst;
}

/* collc sim's busbw and bound (GB/s) for path's collective at 1 GiB, flow mode. */
void
sim_busbw(const char *path, const char *coll, double *busbw, double *bnd)
{
	char cmd[512], line[1024];
	snprintf(cmd, sizeof cmd, "%s sim %s --collective %s --mode flow --sizes 1GiB --csv",
	         COLLC_BIN, path, coll);
	FILE *f = popen(cmd, "r");
	*busbw = *bnd = 0;
	while (f && fgets(line, sizeof line, f)) {
		char *field[16];
		int nf = csv_split(line, field, 16);
		if (nf >= 12 && strcmp(field[0], coll) == 0)
			*busbw = atof(field[9]), *bnd = atof(field[10]);
	}
	CU_ASSERT(f && pclose(f) == 0);
}

/* Everything collc prints for `cmd`, stderr too, and its exit status. */
char *
run_all(const char *cmd, int *status)
{
	FILE *p = popen(cmd, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	char *out = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&out, &len);
	char buf[4096];
	for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;)
		fwrite(buf, 1, n, mem);
	fclose(mem);
	int st = pclose(p);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return out;
}
