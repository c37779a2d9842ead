/*
 * cmd_run.c: collc run FILE.xml|FILE.coll. An MSCCL algorithm file is read,
 * validated (rules 1-13, 16) and executed by the CPU interpreter in every
 * mode it declares (or the one asked); a .coll file's schedules run
 * directly on the IR. Each run is checked against a reference and timed.
 */
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "exec.h"
#include "msccl.h"

static void
report(const char *what, const char *mode, double bytes, double seconds)
{
	printf("%s%s: verified; %.3f ms, %.3f GB/s\n", what, mode, seconds * 1e3,
	       seconds > 0 ? bytes / seconds / 1e9 : 0.0);
}

static int
run_xml(const char *path, const char *text, size_t len, bool legacy, RunOpts *o, int modes,
        bool size_given)
{
	Arena a = {0};
	MProg p;
	int rc = msccl_read(&a, text, len, legacy, &p) != 0;
	if (rc == 0 && !size_given) {
		/* the default size, moved into the range the executor selects the file for */
		int64_t b = msccl_nearest_size(&p, o->bytes, rdtype_size(o->dtype));
		if (b < 0) {
			error_at((Loc){p.line, 1}, "rule 16 (selection): no size of %s is a whole "
			         "number of elements per chunk (nchunksperloop=%d) inside minBytes=%lld "
			         "maxBytes=%lld", rdtype_name(o->dtype), p.nchunksperloop,
			         (long long)p.min_bytes, (long long)p.max_bytes);
			rc = 1;
		} else {
			o->bytes = b;
		}
	}
	for (int m = 0; rc == 0 && m < 2; m++) {
		bool inplace = m == 0;
		if (!(modes & (1 << m)) || !(inplace ? p.inplace : p.outofplace))
			continue;
		o->inplace = inplace;
		RunResult res;
		if (msccl_run(&p, o, &res) != 0) {
			rc = 1;
			break;
		}
		char what[256];
		snprintf(what, sizeof what, "%s: %s, %d ranks, %lld bytes of %s, %s", path, p.coll_name,
		         p.ngpus, (long long)o->bytes, rdtype_name(o->dtype), rop_name(o->op));
		if (!res.checked)
			printf("%s, %s: ran; coll=\"%s\" has no postcondition to check; %.3f ms\n", what,
			       inplace ? "in-place" : "out-of-place", p.coll_name, res.seconds * 1e3);
		else
			report(what, inplace ? ", in-place" : ", out-of-place", (double)res.bytes,
			       res.seconds);
	}
	if (rc == 0 && !(((modes & 1) && p.inplace) || ((modes & 2) && p.outofplace))) {
		error_at((Loc){p.line, 1}, "the file is not declared for the mode asked (inplace=%d "
		         "outofplace=%d)", p.inplace, p.outofplace);
		rc = 1;
	}
	arena_free(&a);
	return rc;
}

int
cmd_run(int argc, char **argv)
{
	const char *path = NULL, *coll = NULL;
	RunOpts o = {.bytes = 1 << 20, .dtype = RD_FLOAT, .op = RO_SUM, .timeout = 2.0};
	bool legacy = false, size_given = false;
	int modes = 3;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool has = i + 1 < argc;
		if (strcmp(a, "--size") == 0 && has) {
			double v = parse_size(argv[++i]);
			if (v <= 0 || v > 1e12)
				return usage_error("run: --size takes a size such as 1MiB or 65536");
			o.bytes = (int64_t)v;
			size_given = true;
		} else if (strcmp(a, "--dtype") == 0 && has) {
			int k = rdtype_find(argv[i + 1]);
			if (k < 0)
				return usage_error("run: --dtype is float, double, int32 or int64");
			o.dtype = (RDtype)k;
			i++;
		} else if (strcmp(a, "--op") == 0 && has) {
			int k = rop_find(argv[i + 1]);
			if (k < 0)
				return usage_error("run: --op is sum, prod, max or min");
			o.op = (ROp)k;
			i++;
		} else if (strcmp(a, "--inplace") == 0) {
			modes = 1;
		} else if (strcmp(a, "--outofplace") == 0) {
			modes = 2;
		} else if (strcmp(a, "--legacy") == 0) {
			legacy = true;
		} else if (strcmp(a, "--capacity") == 0 && has) {
			o.capacity = atoi(argv[++i]);
			if (o.capacity < 1 || o.capacity > 64)
				return usage_error("run: --capacity takes 1..64 messages");
		} else if (strcmp(a, "--timeout") == 0 && has) {
			o.timeout = atof(argv[++i]);
			if (!(o.timeout > 0))
				return usage_error("run: --timeout takes seconds");
		} else if (strcmp(a, "--collective") == 0 && has) {
			coll = argv[++i];
		} else {
			int bad = file_operand("run", a, &path);
			if (bad)
				return bad;
		}
	}
	if (!path)
		return missing_file("run");
	size_t plen = strlen(path);
	if (plen > 4 && strcmp(path + plen - 4, ".xml") == 0) {
		size_t len;
		char err[512];
		char *text = read_file(path, &len, err, sizeof err);
		if (!text) {
			fprintf(stderr, "collc: error: %s\n", err);
			return 1;
		}
		diag_source(path, text, len);
		int rc = run_xml(path, text, len, legacy, &o, modes, size_given);
		free(text);
		return rc;
	}
	Input in = {0};
	int rc = load(path, &in, true, (double)o.bytes);
	int ran = 0;
	for (int i = 0; rc == 0 && i < in.prog.nsched; i++) {
		const Sched *s = in.prog.sched[i];
		if (coll && strcmp(coll, s->name) != 0)
			continue;
		if (verify(s) != 0) {
			rc = 1;
			break;
		}
		ExecOpts eo = {.bytes = o.bytes, .dtype = o.dtype, .op = o.op};
		double sec;
		if (exec_sched(s, &eo, &sec) != 0) {
			rc = 1;
			break;
		}
		char what[256];
		snprintf(what, sizeof what, "%s: '%s' (%s, %s), %d ranks, %lld bytes of %s, %s", path,
		         s->name, coll_kind_name[s->kind], s->algorithm, s->nrank, (long long)o.bytes,
		         rdtype_name(o.dtype), rop_name(o.op));
		report(what, "", (double)o.bytes, sec);
		ran++;
	}
	if (rc == 0 && coll && ran == 0) {
		error_file("no schedule named '%s' is built from this file", coll);
		rc = 1;
	}
	input_free(&in);
	return rc;
}
