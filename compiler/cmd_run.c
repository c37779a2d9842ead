/*
 * cmd_run.c: collc run FILE.xml|FILE.coll. An MSCCL algorithm file is read,
 * validated (rules 1-13, 16) and executed by the CPU interpreter in every
 * mode it declares (or the one asked); a .coll file's schedules run
 * directly on the IR. Each run is checked against a reference and timed.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "driver.h"
#include "exec.h"
#include "msccl_program.h"
#include "perf.h"
#include "refdata.h"
#include "table.h"

/* Rows as nccl-tests prints them (runtime/perf.h): size is the larger
 * buffer in bytes (allreduce's vector, allgather's output), time in us,
 * algbw and busbw in GB/s. */
static void
run_table(Table *t, const char *how)
{
	const char *const head[] = {"collective", "kind", "ranks", how, "size", "count",
	                            "type", "redop", "time(us)", "algbw", "busbw", "check"};
	table_init(t, countof(head), head, "llrlrrllrrrl");
}

static void
run_row(Table *t, const char *name, const char *kind, int p, const char *mode, double bytes,
        const RunOpts *o, double seconds, const char *check)
{
	double algbw = seconds > 0 ? bytes / seconds / 1e9 : 0;
	double factor = perf_busbw_factor(kind, p);
	table_cell(t, "%s", name);
	table_cell(t, "%s", kind);
	table_cell(t, "%d", p);
	table_cell(t, "%s", mode);
	table_cell(t, "%.0f", bytes);
	table_cell(t, "%.0f", bytes / (double)rdtype_size(o->dtype));
	table_cell(t, "%s", rdtype_name(o->dtype));
	table_cell(t, "%s", perf_redop(kind, rop_name(o->op)));
	table_cell(t, "%.1f", seconds * 1e6);
	table_cell(t, "%.3f", algbw);
	if (factor > 0)
		table_cell(t, "%.3f", algbw * factor);
	else
		table_cell(t, "-");
	table_cell(t, "%s", check);
}

/* The buffers a run holds at once against the memory budget; a located
 * error naming both when they do not fit (docs/limits.md). */
static int
check_run_memory(Diag *dg, Loc loc, const char *what, double need, double bytes)
{
	double budget = memory_budget();
	if (need <= budget)
		return 0;
	char n[32], b[32], sz[32];
	human_bytes(need, n, sizeof n);
	human_bytes(budget, b, sizeof b);
	human_bytes(bytes, sz, sizeof sz);
	error_at(dg, loc, "%s at --size %s holds %s of buffers; collc run allows %s here (half the "
	         "physical memory; docs/limits.md)", what, sz, n, b);
	return -1;
}

/* An MSCCL program's buffers on every gpu at o->bytes, and a round of
 * messages in flight (at most one output's worth per gpu). */
static double
xml_run_bytes(const MProg *p, const RunOpts *o)
{
	double per_chunk = (double)o->bytes / p->nchunksperloop, chunks = 0;
	for (int g = 0; g < p->ngpus; g++)
		for (int b = 0; b < 3; b++)
			chunks += msccl_buf_chunks(p, g, (MBuf)b);
	return chunks * per_chunk + (double)p->ngpus * (double)o->bytes;
}

static int
run_xml(Diag *dg, Table *t, const char *text, size_t len, bool legacy, RunOpts *o, int modes,
        bool size_given)
{
	Arena a = {0};
	MProg p;
	int rc = msccl_read(dg, &a, text, len, legacy, &p) != 0;
	if (rc == 0 && !size_given) {
		/* the default size, moved into the range the executor selects the file for */
		int64_t b = msccl_nearest_size(&p, o->bytes, rdtype_size(o->dtype));
		if (b < 0) {
			error_at(dg, (Loc){p.line, 1}, "rule 16 (selection): no size of %s is a whole "
			         "number of elements per chunk (nchunksperloop=%d) inside minBytes=%lld "
			         "maxBytes=%lld", rdtype_name(o->dtype), p.nchunksperloop,
			         (long long)p.min_bytes, (long long)p.max_bytes);
			rc = 1;
		} else {
			if (b != o->bytes)
				fprintf(stderr, "collc: run: note: %lld B is not a size this file runs (a whole "
				        "number of %s per chunk, nchunksperloop=%d, inside its minBytes..maxBytes); "
				        "running %lld B, %s (give --size to choose)\n",
				        (long long)o->bytes, rdtype_name(o->dtype), p.nchunksperloop,
				        (long long)b, b > o->bytes ? "the smallest size it is selected for"
				                                   : "the nearest that is");
			o->bytes = b;
		}
	}
	if (rc == 0 && check_run_memory(dg, (Loc){p.line, 1}, "this program", xml_run_bytes(&p, o),
	                                (double)o->bytes) != 0)
		rc = 1;
	/* the symbolic run first: it names a race (rule 17), which threads may
	 * never show, and a deadlock or wrong result by step and rule */
	if (rc == 0 && msccl_check_run(dg, &p, o->capacity > 0 ? o->capacity : msccl_capacity(p.proto),
	                               false) != 0)
		rc = 1;
	for (int m = 0; rc == 0 && m < 2; m++) {
		bool inplace = m == 0;
		if (!(modes & (1 << m)) || !(inplace ? p.inplace : p.outofplace))
			continue;
		o->inplace = inplace;
		RunResult res;
		if (msccl_run(dg, &p, o, &res) != 0) {
			rc = 1;
			break;
		}
		run_row(t, p.name ? p.name : "(xml)", p.coll_name, p.ngpus, inplace ? "in-place" : "out-of-place",
		        (double)res.bytes, o, res.seconds,
		        res.checked ? "verified" : "ran (custom: no check)");
	}
	if (rc == 0 && !(((modes & 1) && p.inplace) || ((modes & 2) && p.outofplace))) {
		error_at(dg, (Loc){p.line, 1}, "the file is not declared for the mode asked (inplace=%d "
		         "outofplace=%d)", p.inplace, p.outofplace);
		rc = 1;
	}
	arena_free(&a);
	return rc;
}

typedef struct RunArgs {
	const char *coll;
	RunOpts o;
	bool legacy, size_given;
	int modes;  /* bit 0 in-place, bit 1 out-of-place */
	Defines defs;
} RunArgs;

static int
run_opt(void *ctx, const char *name, const char *value)
{
	RunArgs *a = ctx;
	if (strcmp(name, "size") == 0) {
		double v = parse_bytes(value);
		if (v < 1 || v > 1e12)
			return usage_error("run: --size takes a whole number of bytes up to 1 TB, such as "
			                   "1MiB");
		a->o.bytes = (int64_t)v;
		a->size_given = true;
	} else if (strcmp(name, "dtype") == 0) {
		int k = cli_choice("run", name, value, rdtype_names, RD_NTYPES);
		if (k < 0)
			return 2;
		a->o.dtype = (RDtype)k;
	} else if (strcmp(name, "op") == 0) {
		int k = cli_choice("run", name, value, rop_names, RO_NOPS);
		if (k < 0)
			return 2;
		a->o.op = (ROp)k;
	} else if (strcmp(name, "inplace") == 0) {
		a->modes = 1;
	} else if (strcmp(name, "outofplace") == 0) {
		a->modes = 2;
	} else if (strcmp(name, "legacy") == 0) {
		a->legacy = true;
	} else if (strcmp(name, "capacity") == 0) {
		char *end;
		long v = strtol(value, &end, 10);
		if (*end || v < 1 || v > 64)
			return usage_error("run: --capacity takes 1..64 messages");
		a->o.capacity = (int)v;
	} else if (strcmp(name, "timeout") == 0) {
		char *end;
		a->o.timeout = strtod(value, &end);
		if (*end || !(a->o.timeout > 0 && a->o.timeout < 1e6))
			return usage_error("run: --timeout takes seconds");
	} else if (strcmp(name, "collective") == 0) {
		a->coll = value;
	} else if (strcmp(name, "define") == 0) {
		return define_opt("run", &a->defs, value);
	}
	return 0;
}

static const CliOpt run_opts[] = {
	{"size", 0, "S", "bytes per rank's vector (default 1MiB)"},
	{"dtype", 0, "T", "float, double, int32 or int64 (default float)"},
	{"op", 0, "OP", "sum, prod, max or min (default sum)"},
	{"inplace", 0, NULL, "XML: run only the in-place mode"},
	{"outofplace", 0, NULL, "XML: run only the out-of-place mode"},
	{"legacy", 0, NULL, "XML: read the older microsoft/msccl dialect"},
	{"capacity", 0, "N", "XML: messages a connection holds (1..64)"},
	{"timeout", 0, "SEC", "XML: report a deadlock after SEC seconds without progress"},
	{"collective", 0, "NAME", ".coll: only the collective NAME"},
	DEFINE_OPT,
};

static int cmd_run(Diag *, int argc, char **argv);

const CliCommand cli_run = {
	"run", "FILE.xml|FILE.coll",
	"run MSCCL XML or a .coll file's schedules on CPU threads, check and time them",
	"Every run is checked against a reference computed on the same data. The columns\n"
	"are nccl-tests': size (bytes), count (elements), type, redop, time(us),\n"
	"algbw = size / time and busbw = algbw x the collective's factor, in GB/s\n"
	"(docs/cli.md).\n",
	run_opts, countof(run_opts), cmd_run, NULL};

/* The columns are nccl-tests', the machine is not: say so under them. */
static const char cpu_note[] =
	"time, algbw and busbw: CPU threads of this machine running the schedule (a check of "
	"the\nresults, not a GPU's or a network's figures: collc sim models those)\n";

static int
cmd_run(Diag *dg, int argc, char **argv)
{
	const char *path = NULL;
	RunArgs a = {.o = {.bytes = 1 << 20, .dtype = RD_FLOAT, .op = RO_SUM, .timeout = 2.0},
	             .modes = 3};
	int bad = cli_parse(&cli_run, argc, argv, &a, run_opt, &path);
	if (bad)
		return bad < 0 ? 0 : bad;
	RunOpts o = a.o;
	const char *coll = a.coll;
	bool legacy = a.legacy, size_given = a.size_given;
	int modes = a.modes;
	size_t plen = strlen(path);
	if (plen > 4 && strcmp(path + plen - 4, ".xml") == 0) {
		size_t len;
		char err[512];
		char *text = read_file(path, &len, err, sizeof err);
		if (!text) {
			fprintf(stderr, "collc: error: %s\n", err);
			return 1;
		}
		diag_source(dg, path, text, len);
		Table t;
		run_table(&t, "mode");
		int rc = run_xml(dg, &t, text, len, legacy, &o, modes, size_given);
		if (rc == 0) {
			printf("# %s\n", path);
			table_print(&t, stdout);
			fputs(cpu_note, stdout);
		}
		table_free(&t);
		free(text);
		return rc;
	}
	Input in = {.only = coll, .defs = &a.defs};
	int rc = load(dg, path, &in, true, (double)o.bytes);
	int ran = 0;
	Table t;
	run_table(&t, "algorithm");
	for (int i = 0; rc == 0 && i < in.prog.nsched; i++) {
		const Sched *s = in.prog.sched[i];
		if (coll && strcmp(coll, s->name) != 0)
			continue;
		/* every rank's vector, and one round in flight (at most as much again) */
		if (check_run_memory(dg, s->loc, arena_printf(&in.arena, "'%s'", s->name),
		                                       2.0 * s->nrank * (double)o.bytes,
		                                       (double)o.bytes) != 0) {
			rc = 1;
			break;
		}
		ExecOpts eo = {.bytes = o.bytes, .dtype = o.dtype, .op = o.op};
		double sec;
		if (exec_sched(dg, s, &eo, &sec) != 0) {
			rc = 1;
			break;
		}
		run_row(&t, s->name, coll_kind_name[s->kind], s->nrank, s->algorithm, (double)o.bytes,
		        &o, sec, "verified");
		ran++;
	}
	if (rc == 0 && coll && ran == 0) {
		no_schedule_named(dg, &in.prog, coll);
		rc = 1;
	}
	if (rc == 0) {
		printf("# %s\n", path);
		table_print(&t, stdout);
		fputs(cpu_note, stdout);
	}
	table_free(&t);
	input_free(&in);
	return rc;
}
