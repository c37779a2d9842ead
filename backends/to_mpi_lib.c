/*
 * to_mpi_lib.c: a plan of verified schedules as an MPI library, one .c and
 * one .h (docs/mpi.md). Needs to_mpi.c's tables, entry function and the
 * embedded runtime and library part (backends/mpi/runtime.c and lib.c);
 * establishes mpi_lib_plan_of, mpi_lib_write and the mpi-lib target.
 *
 * The source holds the runtime's schedule-independent part once (types,
 * ops, reductions; the communicator cache; the library's plan lookup and
 * counts), then per schedule its tables, the interpreter and its entry
 * point (the MPI target's function), every name of theirs renamed by #define for that schedule (the
 * interpreter is the same text for every schedule, so it is written as it
 * stands, not edited), then the plan, the calibration, the named entry
 * points, the dispatchers with MPI's signatures (with an allgather or
 * alltoall, their v variants too) and, under -DCOLLC_PMPI, MPI's own
 * names over PMPI. Every external name starts with the prefix; everything
 * else is static.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mpi_lib.h"

/* What a kind's dispatcher takes and passes on. The parameter names are
 * mpi_signature's, so one argument list serves MPI's call and the entry
 * point's. */
typedef struct LibKind {
	const char *mpi;   /* MPI_<mpi> */
	const char *key;   /* the runtime's COLLC_K_ constant */
	const char *sig;   /* MPI's parameters (int counts) */
	const char *args;  /* the arguments, but for the communicator */
	const char *pick;  /* collc_lib_pick's count, type, op and root */
	const char *cal;   /* the calibration's arguments (in, out, count; root), but comm */
	bool two_types;    /* allgather, alltoall: send and receive counts and types */
	const char *v_mpi; /* MPI's form of the kind with counts per rank, or NULL */
	const char *v_cal; /* its calibration's arguments (counts, displs: every rank's alike) */
} LibKind;

static const LibKind lib_kind[NCOLLKIND] = {
	[CK_ALLREDUCE] = {"Allreduce", "COLLC_K_ALLREDUCE",
	                  "const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, "
	                  "MPI_Comm comm",
	                  "sendbuf, recvbuf, count, type, op", "count, type, op, -1",
	                  "in, out, count, MPI_FLOAT, MPI_SUM", false, NULL, NULL},
	[CK_REDUCE_SCATTER] = {"Reduce_scatter_block", "COLLC_K_REDUCE_SCATTER",
	                       "const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type, "
	                       "MPI_Op op, MPI_Comm comm",
	                       "sendbuf, recvbuf, recvcount, type, op", "recvcount, type, op, -1",
	                       "in, out, count, MPI_FLOAT, MPI_SUM", false, "Reduce_scatter",
	                       "in, out, counts, MPI_FLOAT, MPI_SUM"},
	[CK_ALLGATHER] = {"Allgather", "COLLC_K_ALLGATHER",
	                  "const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, "
	                  "int recvcount, MPI_Datatype recvtype, MPI_Comm comm",
	                  "sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype",
	                  "recvcount, recvtype, MPI_OP_NULL, -1",
	                  "in, count, MPI_BYTE, out, count, MPI_BYTE", true, "Allgatherv",
	                  "in, count, MPI_BYTE, out, counts, displs, MPI_BYTE"},
	[CK_ALLTOALL] = {"Alltoall", "COLLC_K_ALLTOALL",
	                 "const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, "
	                 "int recvcount, MPI_Datatype recvtype, MPI_Comm comm",
	                 "sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype",
	                 "recvcount, recvtype, MPI_OP_NULL, -1",
	                 "in, count, MPI_BYTE, out, count, MPI_BYTE", true, "Alltoallv",
	                 "in, counts, displs, MPI_BYTE, out, counts, displs, MPI_BYTE"},
	[CK_BROADCAST] = {"Bcast", "COLLC_K_BCAST",
	                  "void *buffer, int count, MPI_Datatype type, int root, MPI_Comm comm",
	                  "buffer, count, type, root", "count, type, MPI_OP_NULL, root",
	                  "out, count, MPI_BYTE, root", false, NULL, NULL},
	[CK_REDUCE] = {"Reduce", "COLLC_K_REDUCE",
	               "const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, "
	               "int root, MPI_Comm comm",
	               "sendbuf, recvbuf, count, type, op, root", "count, type, op, root",
	               "in, out, count, MPI_FLOAT, MPI_SUM, root", false, NULL, NULL},
};

/* The names the library's own functions take after the prefix. */
static const char *const lib_own_names[] = {"Allreduce", "Reduce_scatter_block", "Allgather",
                                            "Alltoall", "Bcast", "Reduce", "Reduce_scatter",
                                            "Allgatherv", "Alltoallv", "ran", "passed", "report",
                                            "calibrate"};

/* The names mpi_write_tables gives the schedule's constants and tables
 * (the interpreter's own are found in its text: every collc_ name it
 * defines). */
static const char *const table_names[] = {
	"NRANK", "NCHUNK", "NBLOCK", "CHUNKS_PER_BLOCK", "ROOT", "COLLC_TAG", "NBASE", "ORDER",
	"NNODE", "NDIM", "AFFINE", "NREWIRE", "op_start", "op_table", "op_chunks", "base_table",
	"dims", "rank_node", "elements", "inverse", "chunk_block", "chunk_piece"};

#define INTERP_FROM "/* ---- the interpreter ---- */"
#define INTERP_TO "/* ---- end of the interpreter ---- */"
#define SHARED_FROM "enum { T_FLOAT" /* the interpreter's schedule-independent part */
#define SHARED_TO "/* Elements [start, end) of chunk c"
#define LIB_FROM "/* ---- the library ---- */"
#define LIB_TO "/* ---- end of the library ---- */"
#define CAL_FROM "/* ---- the calibration ---- */"
#define CAL_TO "/* ---- end of the calibration ---- */"
#define V_FROM "/* ---- the v variants ---- */"
#define V_TO "/* ---- end of the v variants ---- */"

static bool
is_ident(const char *s)
{
	if (!s || !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
		return false;
	for (; *s; s++)
		if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

static bool
ident_char(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* The first n bytes at needle in text[0..len), or NULL (memmem is not POSIX). */
static const char *
find(const char *text, size_t len, const char *needle, size_t n)
{
	for (size_t i = 0; i + n <= len; i++)
		if (text[i] == needle[0] && memcmp(text + i, needle, n) == 0)
			return text + i;
	return NULL;
}

/* Whether name occurs as a whole word in text[0..len). */
static bool
has_word(const char *text, size_t len, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = text; (p = find(p, len - (size_t)(p - text), name, n)); p += n)
		if ((p == text || !ident_char(p[-1])) && (p + n == text + len || !ident_char(p[n])))
			return true;
	return false;
}

bool
mpi_name_taken(const char *fn)
{
	return has_word(collc_mpi_runtime_text, strlen(collc_mpi_runtime_text), fn);
}

/* The interpreter's collc_ names that are a schedule's own (not those of
 * its schedule-independent part): each schedule renames them. *n of them,
 * xmalloc'd, pointing into the runtime's text with their lengths. */
typedef struct Word {
	const char *at;
	int len;
} Word;

static Word *
interpreter_names(int *n)
{
	size_t len, shared_len;
	const char *text = mpi_part(collc_mpi_runtime_text, INTERP_FROM, INTERP_TO, &len);
	const char *shared = mpi_part(collc_mpi_runtime_text, SHARED_FROM, SHARED_TO, &shared_len);
	Word *w = NULL;
	int cap = 0;
	*n = 0;
	for (const char *p = text; (p = find(p, len - (size_t)(p - text), "collc_", 6));) {
		const char *e = p;
		while (e < text + len && ident_char(*e))
			e++;
		bool word = p == text || !ident_char(p[-1]), seen = false;
		char name[128];
		snprintf(name, sizeof name, "%.*s", (int)(e - p), p);
		for (int i = 0; i < *n && !seen; i++)
			seen = w[i].len == (int)(e - p) && memcmp(w[i].at, p, (size_t)(e - p)) == 0;
		if (word && !seen && e - p < (long)sizeof name && !has_word(shared, shared_len, name)) {
			if (*n == cap)
				w = xrealloc(w, (size_t)(cap = cap ? 2 * cap : 32) * sizeof *w);
			w[(*n)++] = (Word){p, (int)(e - p)};
		}
		p = e;
	}
	return w;
}

/* ---- the plan ---- */

int
mpi_lib_plan_of(Diag *dg, Arena *a, const Prog *p, const BuildOpts *o, MpiLibPlan *plan)
{
	const Sched **sel = arena_array(a, (size_t)p->nsched + 1, sizeof *sel);
	int n = backend_select(p, o, sel, p->nsched);
	if (n == 0) {
		error_file(dg, "no schedule to write: the file builds none%s",
		           o->collective ? " by that name" : "");
		return -1;
	}
	MpiLibEntry *e = arena_array(a, (size_t)n, sizeof *e);
	for (int i = 0; i < n; i++) {
		bool rooted = sel[i]->kind == CK_BROADCAST || sel[i]->kind == CK_REDUCE;
		e[i] = (MpiLibEntry){sel[i]->kind, sel[i]->nrank, rooted ? sel[i]->root : -1, 0,
		                     MPI_LIB_ANY_SIZE, sel[i]};
	}
	*plan = (MpiLibPlan){n, e};
	return 0;
}

/* The plan's distinct schedules, in the order of their first entries;
 * sched_of[e]: entry e's index among them. */
typedef struct LibScheds {
	int n;
	const Sched **s;
	int *sched_of;
} LibScheds;

static void
lib_scheds(const MpiLibPlan *plan, LibScheds *ls)
{
	ls->n = 0;
	ls->s = xmalloc((size_t)plan->nentry * sizeof *ls->s);
	ls->sched_of = xmalloc((size_t)plan->nentry * sizeof *ls->sched_of);
	for (int e = 0; e < plan->nentry; e++) {
		int k = 0;
		while (k < ls->n && ls->s[k] != plan->entry[e].sched)
			k++;
		if (k == ls->n)
			ls->s[ls->n++] = plan->entry[e].sched;
		ls->sched_of[e] = k;
	}
}

static void
lib_scheds_free(LibScheds *ls)
{
	free(ls->s);
	free(ls->sched_of);
}

/* An entry that cannot be written: -1 after reporting. */
static int
check_entry(Diag *dg, const MpiLibEntry *e)
{
	const Sched *s = e->sched;
	bool rooted = s->kind == CK_BROADCAST || s->kind == CK_REDUCE;
	if (e->kind != s->kind || e->nrank != s->nrank || e->root != (rooted ? s->root : -1)) {
		error_at(dg, s->loc, "the plan's entry for %s on %d ranks (root %d) names '%s', %s on %d "
		         "ranks (root %d)", coll_kind_name[e->kind], e->nrank, e->root, s->name,
		         coll_kind_name[s->kind], s->nrank, rooted ? s->root : -1);
		return -1;
	}
	if (e->lo < 0 || e->hi <= e->lo) {
		error_at(dg, s->loc, "the plan's entry for '%s' has no sizes: [%lld, %lld)", s->name,
		         (long long)e->lo, (long long)e->hi);
		return -1;
	}
	return 0;
}

/* -1 after reporting: a bad prefix, entry or name. *ambiguous: two entries
 * of one kind, ranks and root whose ranges overlap (noted). */
static int
check_plan(Diag *dg, const MpiLibPlan *plan, const LibScheds *ls, const char *prefix, bool *ambiguous)
{
	if (!is_ident(prefix) || strlen(prefix) > 64) {
		error_file(dg, "--prefix '%s' is not a C identifier of at most 64 characters", prefix);
		return -1;
	}
	if (plan->nentry == 0) {
		error_file(dg, "no schedule to write: the plan is empty");
		return -1;
	}
	for (int e = 0; e < plan->nentry; e++)
		if (check_entry(dg, &plan->entry[e]) != 0)
			return -1;
	for (int i = 0; i < ls->n; i++) {
		for (size_t k = 0; k < countof(lib_own_names); k++)
			if (strcmp(ls->s[i]->name, lib_own_names[k]) == 0) {
				error_at(dg, ls->s[i]->loc, "'%s' would be the library's %s_%s, which dispatches "
				         "(docs/mpi.md): rename the collective", ls->s[i]->name, prefix,
				         ls->s[i]->name);
				return -1;
			}
		size_t n = strlen(prefix) + strlen(ls->s[i]->name) + 2;
		char *fn = xmalloc(n);
		snprintf(fn, n, "%s_%s", prefix, ls->s[i]->name);
		bool taken = mpi_name_taken(fn) ||
		             has_word(collc_mpi_lib_text, strlen(collc_mpi_lib_text), fn);
		if (taken)
			error_at(dg, ls->s[i]->loc, "'%s' would be the library's %s, a name of its runtime's: "
			         "rename the collective or choose another --prefix", ls->s[i]->name, fn);
		free(fn);
		if (taken)
			return -1;
		for (int j = 0; j < i; j++)
			if (strcmp(ls->s[i]->name, ls->s[j]->name) == 0) {
				error_at(dg, ls->s[i]->loc, "two schedules of the plan are named '%s'",
				         ls->s[i]->name);
				return -1;
			}
	}
	*ambiguous = false;
	for (int i = 0; i < plan->nentry; i++)
		for (int j = 0; j < i; j++) {
			const MpiLibEntry *x = &plan->entry[i], *y = &plan->entry[j];
			if (x->kind != y->kind || x->nrank != y->nrank || x->root != y->root ||
			    x->lo >= y->hi || y->lo >= x->hi || x->sched == y->sched)
				continue;
			note_at(dg, x->sched->loc, "'%s' and '%s' are both %s on %d ranks for the same sizes: "
			        "each keeps its entry point, the dispatcher takes '%s', and the PMPI "
			        "drop-in will not compile; choose by size with a plan", y->sched->name,
			        x->sched->name, coll_kind_name[x->kind], x->nrank, y->sched->name);
			*ambiguous = true;
		}
	return 0;
}

/* ---- the source ---- */

static void
write_size(FILE *f, int64_t v)
{
	if (v == MPI_LIB_ANY_SIZE)
		fputs("any", f);
	else
		fprintf(f, "%lld", (long long)v);
}

/* The plan, as the file's opening comment lists it. */
static void
write_plan_comment(FILE *f, const MpiLibPlan *plan)
{
	for (int e = 0; e < plan->nentry; e++) {
		const MpiLibEntry *x = &plan->entry[e];
		fprintf(f, " *   %s on %d ranks", coll_kind_name[x->kind], x->nrank);
		if (x->root >= 0)
			fprintf(f, " to root %d", x->root);
		fputs(", sizes [", f);
		write_size(f, x->lo);
		fputs(", ", f);
		write_size(f, x->hi);
		fprintf(f, ") bytes: %s (%s)\n", x->sched->name, x->sched->algorithm);
	}
}

static void
write_renames(FILE *f, int idx, const Word *w, int nw, bool define)
{
	for (size_t i = 0; i < countof(table_names); i++)
		if (define)
			fprintf(f, "#define %s %s__s%d\n", table_names[i], table_names[i], idx);
		else
			fprintf(f, "#undef %s\n", table_names[i]);
	for (int i = 0; i < nw; i++)
		if (define)
			fprintf(f, "#define %.*s %.*s__s%d\n", w[i].len, w[i].at, w[i].len, w[i].at, idx);
		else
			fprintf(f, "#undef %.*s\n", w[i].len, w[i].at);
	if (!define)
		fputs("#undef COLLC_SYMMETRIC\n#undef COLLC_REWIRE\n", f);
}

/* Schedule idx: its tables, interpreter and entry point, the interpreter's
 * names its own. */
static void
write_schedule(FILE *f, const Sched *s, int idx, const char *prefix, const Word *w, int nw)
{
	fprintf(f, "\n/* ==== schedule %d: %s, %s by %s on %d ranks, %d chunks, %d rounds ==== */\n",
	        idx, s->name, coll_kind_name[s->kind], s->algorithm, s->nrank, s->nchunk, s->nround);
	fputs("/* the interpreter's names, this schedule's own from here to its #undefs */\n", f);
	write_renames(f, idx, w, nw, true);
	mpi_write_tables(s, f);
	mpi_write_part(f, collc_mpi_runtime_text, INTERP_FROM, SHARED_FROM);
	mpi_write_part(f, collc_mpi_runtime_text, SHARED_TO, INTERP_TO);
	/* its entry point: the function the MPI target writes, under the prefix */
	size_t n = strlen(prefix) + strlen(s->name) + 2;
	char *fn = xmalloc(n);
	snprintf(fn, n, "%s_%s", prefix, s->name);
	mpi_write_function(s, fn, "", f);
	free(fn);
	fputc('\n', f);
	write_renames(f, idx, w, nw, false);
}

/* The plan's entries as the runtime's collc_entry, and the counts. */
static void
write_plan_table(FILE *f, const MpiLibPlan *plan, const LibScheds *ls)
{
	fprintf(f, "\n/* ==== the plan: a call runs the first entry it matches ==== */\n"
	           "enum { COLLC_LIB_NENTRY = %d, COLLC_LIB_NSCHED = %d };\n"
	           "static const collc_entry collc_lib_plan[COLLC_LIB_NENTRY] = {\n",
	        plan->nentry, ls->n);
	for (int e = 0; e < plan->nentry; e++) {
		const MpiLibEntry *x = &plan->entry[e];
		fprintf(f, "\t{%s, %d, %d, %lluULL, %lluULL, %d}, /* %s */\n", lib_kind[x->kind].key,
		        x->nrank, x->root, (unsigned long long)x->lo, (unsigned long long)x->hi,
		        ls->sched_of[e], x->sched->name);
	}
	fputs("};\nstatic const char *const collc_lib_names[COLLC_LIB_NSCHED] = {", f);
	for (int i = 0; i < ls->n; i++)
		fprintf(f, "%s\"%s\"", i ? ", " : "", ls->s[i]->name);
	fputs("};\n/* calls each schedule ran, calls passed to MPI's own collective (from\n"
	      " * concurrent threads too, under MPI_THREAD_MULTIPLE) */\n"
	      "static long long collc_lib_ran[COLLC_LIB_NSCHED];\n"
	      "/* (calls passed to MPI and calls of no element returned at once: collc_hot) */\n", f);
	fputs("\n#ifdef COLLC_PMPI\n#define COLLC_MPI(f) PMPI_##f\n#else\n#define COLLC_MPI(f) MPI_##f\n"
	      "#endif\n", f);
}

/* The start of a dispatcher: a call that no span where a schedule may run
 * holds goes to MPI's `mpi` at once, with no question to MPI
 * (collc_lib_quick's `quick`: count, type, op, root). */
static void
write_quick(FILE *f, const char *prefix, const char *key, const char *quick, const char *mpi,
            const char *mpi_args)
{
	fprintf(f, "\tif (collc_lib_quick(\"%s\", collc_lib_plan, COLLC_LIB_NENTRY, %s, %s)) {\n"
	           "\t\tcollc_count(&collc_hot.passed);\n\t\treturn COLLC_MPI(%s)(%s, comm);\n\t}\n",
	        prefix, key, quick, mpi, mpi_args);
}

/* The end of a dispatcher, from its entry e: a call of no bytes returns
 * at once, a covered one runs its schedule (a failure through comm's error
 * handler), any other is MPI's `mpi` with `args`. */
static void
write_dispatch_switch(FILE *f, CollKind kind, const LibScheds *ls, const char *prefix,
                      const char *via, const char *args, const char *mpi, const char *mpi_args)
{
	fprintf(f, "\tif (e >= 0 && bytes == 0) { /* nothing to move: no message, no duplicate */\n"
	           "\t\tcollc_count(&collc_hot.empty);\n\t\treturn MPI_SUCCESS;\n\t}\n"
	           "\te = collc_lib_follow(\"%s\", COLLC_LIB_NENTRY, e, bytes); /* the calibration's */\n"
	           "\tswitch (e < 0 ? -1 : collc_lib_plan[e].sched) {\n", prefix);
	for (int i = 0; i < ls->n; i++)
		if (ls->s[i]->kind == kind)
			fprintf(f, "\tcase %d:\n\t\tcollc_lib_ran[%d]++;\n"
			           "\t\treturn collc_lib_result(comm, %s%s%s_%s%s%s, comm));\n", i, i, via,
			        via[0] ? "(" : "", prefix, ls->s[i]->name, via[0] ? ", " : "(", args);
	fprintf(f, "\tdefault:\n\t\tcollc_count(&collc_hot.passed);\n\t\treturn COLLC_MPI(%s)(%s, comm);\n\t}\n}\n",
	        mpi, mpi_args);
}

/* MPI's v variants of the moving kinds: MPI_Allgatherv and MPI_Alltoallv
 * (their parameters, as the MPI header declares them). */
static const char agv_sig[] =
	"const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, "
	"const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm";
static const char agv_args[] = "sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype";
static const char a2av_sig[] =
	"const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, "
	"void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, "
	"MPI_Comm comm";
static const char a2av_args[] = "sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, "
                                "rdispls, recvtype";

static const char rs_sig[] = "const void *sendbuf, void *recvbuf, const int recvcounts[], "
                            "MPI_Datatype type, MPI_Op op, MPI_Comm comm";
static const char rs_args[] = "sendbuf, recvbuf, recvcounts, type, op";

/* The v variant's dispatcher of an allgather or alltoall: the plan's
 * schedule where every count is one n (docs/mpi.md), else MPI's. */
static void
write_v_dispatcher(FILE *f, CollKind kind, const LibScheds *ls, const char *prefix)
{
	bool ag = kind == CK_ALLGATHER;
	fprintf(f, "\n/* MPI_%s's parameters: equal counts are the plan's %s, else MPI's */\n"
	           "static int\ncollc_d_%s(%s)\n{\n\tunsigned long long bytes;\n\tint n;\n",
	        ag ? "Allgatherv" : "Alltoallv", ag ? "allgather" : "alltoall",
	        ag ? "Allgatherv" : "Alltoallv", ag ? agv_sig : a2av_sig);
	/* allgatherv's counts are the same at every rank; alltoallv's ranks
	 * see only their own, so only the kind is looked at */
	write_quick(f, prefix, lib_kind[kind].key,
	            ag ? "recvcounts ? recvcounts[0] : -1, recvtype, MPI_OP_NULL, -1"
	               : "-1, MPI_DATATYPE_NULL, MPI_OP_NULL, -1",
	            ag ? "Allgatherv" : "Alltoallv", ag ? agv_args : a2av_args);
	if (ag)
		fputs("\tint e = collc_v_allgather_pick(collc_lib_plan, COLLC_LIB_NENTRY, sendbuf, "
		      "sendcount, sendtype, recvcounts, recvtype, comm, &n, &bytes);\n", f);
	else
		fprintf(f, "\tint e = collc_v_alltoall_pick(\"%s\", collc_lib_plan, COLLC_LIB_NENTRY, "
		           "sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm, &n, &bytes);\n",
		        prefix);
	write_dispatch_switch(f, kind, ls, prefix, ag ? "collc_v_allgather" : "collc_v_alltoall",
	                      ag ? "sendbuf, recvbuf, n, displs, recvtype"
	                         : "sendbuf, sdispls, recvbuf, rdispls, n, recvtype",
	                      ag ? "Allgatherv" : "Alltoallv", ag ? agv_args : a2av_args);
}

/* The calibration's call of entry e: its schedule, MPI's collective, or
 * MPI's form of it with counts per rank. */
static void
write_try(FILE *f, const bool *has, const LibScheds *ls, const char *prefix)
{
	fputs("\n/* Entry e's call once, for the calibration, the way `way` says (COLLC_CAL_*),\n"
	      " * on floats (the reducing kinds) or bytes */\n"
	      "static int\ncollc_lib_try(int e, int way, const collc_cal_args *a, MPI_Comm comm)\n"
	      "{\n\tvoid *in = a->in, *out = a->out;\n"
	      "\tint count = a->count, root = collc_lib_plan[e].root, kind = collc_lib_plan[e].kind;\n"
	      "\tconst int *counts = a->counts, *displs = a->displs;\n"
	      "\t(void)in, (void)root, (void)counts, (void)displs;\n"
	      "\tswitch (way == COLLC_CAL_OURS ? collc_lib_plan[e].sched\n"
	      "\t                              : -1 - kind - 8 * (way == COLLC_CAL_MPI_V)) {\n", f);
	for (int i = 0; i < ls->n; i++)
		fprintf(f, "\tcase %d:\n\t\treturn %s_%s(%s, comm);\n", i, prefix, ls->s[i]->name,
		        lib_kind[ls->s[i]->kind].cal);
	for (int kind = 0; kind < NCOLLKIND; kind++) {
		const LibKind *k = &lib_kind[kind];
		if (!has[kind])
			continue;
		fprintf(f, "\tcase -1 - %s:\n\t\treturn COLLC_MPI(%s)(%s, comm);\n", k->key, k->mpi,
		        k->cal);
		if (k->v_mpi)
			fprintf(f, "\tcase -9 - %s:\n\t\treturn COLLC_MPI(%s)(%s, comm);\n", k->key,
			        k->v_mpi, k->v_cal);
	}
	fputs("\tdefault:\n\t\treturn MPI_ERR_ARG;\n\t}\n}\n", f);
}

/* The start of kind k's dispatcher for a call of no element: it returns at
 * once where collc_lib_none says every rank may, and is MPI's otherwise,
 * asking MPI nothing either way (docs/mpi.md, "Count 0"); a rooted kind's
 * is always MPI's (an inter-communicator's groups pass different roots). */
static void
write_none(FILE *f, CollKind kind)
{
	const LibKind *k = &lib_kind[kind];
	bool rooted = kind == CK_BROADCAST || kind == CK_REDUCE;
	if (k->two_types)
		fprintf(f, "\tif (recvcount == 0 && (sendcount == 0 || sendbuf == MPI_IN_PLACE)) {\n"
		           "\t\tif (collc_lib_none(%s, comm, sendbuf, recvbuf, sendtype, recvtype, "
		           "MPI_OP_NULL)) {\n", k->key);
	else if (!rooted)
		fprintf(f, "\tif (%s == 0) {\n\t\tif (collc_lib_none(%s, comm, sendbuf, recvbuf, type, "
		           "type, op)) {\n", kind == CK_REDUCE_SCATTER ? "recvcount" : "count", k->key);
	else
		fputs("\tif (count == 0) {\n", f);
	if (!rooted)
		fputs("\t\t\tcollc_count(&collc_hot.empty);\n\t\t\treturn MPI_SUCCESS;\n\t\t}\n", f);
	fprintf(f, "\t\tcollc_count(&collc_hot.passed);\n\t\treturn COLLC_MPI(%s)(%s, comm);\n\t}\n", k->mpi,
	        k->args);
}

/* Kind k's dispatcher: MPI's signature, the plan's schedule or MPI's own. */
static void
write_dispatcher(FILE *f, CollKind kind, const LibScheds *ls, const char *prefix)
{
	const LibKind *k = &lib_kind[kind];
	fprintf(f, "\n/* MPI_%s's parameters: the plan's schedule for a call it covers, else "
	           "MPI's own */\nstatic int\ncollc_d_%s(%s)\n{\n", k->mpi, k->mpi, k->sig);
	write_none(f, kind);
	write_quick(f, prefix, k->key, k->pick, k->mpi, k->args);
	fprintf(f, "\tunsigned long long bytes;\n"
	           "\tint e = collc_lib_pick(collc_lib_plan, COLLC_LIB_NENTRY, %s, comm, %s, &bytes);\n",
	        k->key, k->pick);
	if (k->two_types)
		fputs("\tif (e >= 0 && sendbuf != MPI_IN_PLACE && (sendcount != recvcount || "
		      "sendtype != recvtype))\n\t\te = -1; /* same signature, other types: MPI's */\n", f);
	write_dispatch_switch(f, kind, ls, prefix, "", k->args, k->mpi, k->args);
}

/* MPI_Reduce_scatter's dispatcher: counts per rank, the reduce-scatter
 * schedule's when they are all equal (MPI requires the same counts at every
 * rank, so every rank chooses alike). Counts all 0 are a call of no element
 * (collc_lib_none's; the communicator's size is the one question asked).
 * The first count alone can show a call MPI's for certain: a call whose
 * counts all equal it is MPI's, and one whose counts differ is too. */
static void
write_reduce_scatter(FILE *f, const LibScheds *ls, const char *prefix)
{
	fprintf(f, "\n/* MPI_Reduce_scatter's parameters: equal counts are %s_Reduce_scatter_block's "
	           "*/\nstatic int\ncollc_d_Reduce_scatter(%s)\n{\n", prefix, rs_sig);
	fputs("\tint none = 0;\n"
	      "\tif (recvcounts && recvcounts[0] == 0 && comm != MPI_COMM_NULL &&\n"
	      "\t    MPI_Comm_size(comm, &none) == MPI_SUCCESS) {\n"
	      "\t\tfor (int i = 1; i < none; i++)\n"
	      "\t\t\tif (recvcounts[i] != 0)\n\t\t\t\tnone = 0;\n"
	      "\t\tif (none > 0 && collc_lib_none(COLLC_K_REDUCE_SCATTER, comm, sendbuf, recvbuf, type, "
	      "type, op)) {\n"
	      "\t\t\tcollc_count(&collc_hot.empty);\n\t\t\treturn MPI_SUCCESS;\n\t\t}\n\t}\n", f);
	write_quick(f, prefix, "COLLC_K_REDUCE_SCATTER", "recvcounts ? recvcounts[0] : -1, type, op, -1",
	            "Reduce_scatter", "sendbuf, recvbuf, recvcounts, type, op");
	fputs("\tunsigned long long bytes = 0;\n"
	      "\tint e = -1, inter = 1, size = 0, n = -1;\n"
	      "\tif (collc_lib_usable() && comm != MPI_COMM_NULL && recvcounts &&\n"
	      "\t    MPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter &&\n"
	      "\t    MPI_Comm_size(comm, &size) == MPI_SUCCESS && size > 0) {\n"
	      "\t\tn = recvcounts[0];\n"
	      "\t\tfor (int i = 1; i < size && n >= 0; i++)\n"
	      "\t\t\tif (recvcounts[i] != n)\n\t\t\t\tn = -1;\n"
	      "\t\tif (n >= 0)\n"
	      "\t\t\te = collc_lib_pick(collc_lib_plan, COLLC_LIB_NENTRY, COLLC_K_REDUCE_SCATTER, comm, "
	      "n, type, op, -1, &bytes);\n\t}\n", f);
	write_dispatch_switch(f, CK_REDUCE_SCATTER, ls, prefix, "", "sendbuf, recvbuf, (size_t)n, type, op",
	                      "Reduce_scatter", "sendbuf, recvbuf, recvcounts, type, op");
}

/* The drop-in's MPI_NAME: a call of a kind the plan followed gives wholly
 * to MPI (collc_hot) goes to PMPI_NAME reading one cache line, else the
 * dispatcher, called directly (an exported P_NAME would be reached through
 * the PLT and GOT, a few pages more to fetch). After a barrier the caches
 * are cold, and the drop-in's own path measured 3,300 to 5,700 cycles at
 * a 64-byte broadcast's root before, the PLT hop 2,900 to 4,000 of them
 * (docs/mpi.md, "The passed broadcast under MPICH"). count: the count of a
 * call of no element (collc_lib_none's), which takes the dispatcher's
 * path, or NULL (the forms with counts per rank). */
static void
write_mpi_name(FILE *f, const char *name, const char *sig, const char *args, const char *key,
               const char *count)
{
	fprintf(f, "int\nMPI_%s(%s)\n{\n\tif (%s%scollc_hot.mpi[%s]) {\n\t\tcollc_count(&collc_hot.passed);\n"
	           "\t\treturn PMPI_%s(%s, comm);\n\t}\n\treturn collc_d_%s(%s, comm);\n}\n\n",
	        name, sig, count ? count : "", count ? " != 0 && " : "", key, name, args, name, args);
}

/* Each dispatcher's public name P_NAME. */
static void
write_public(FILE *f, const char *prefix, const char *name, const char *sig, const char *args)
{
	fprintf(f, "\nint\n%s_%s(%s)\n{\n\treturn collc_d_%s(%s, comm);\n}\n", prefix, name, sig, name,
	        args);
}

/* The counts, the report, and under COLLC_PMPI MPI's names. */
static void
write_tail(FILE *f, const bool *has, const char *prefix, bool ambiguous)
{
	fprintf(f, "\nlong long\n%s_ran(const char *name)\n{\n\tlong long n = 0;\n"
	           "\tfor (int i = 0; i < COLLC_LIB_NSCHED; i++)\n"
	           "\t\tif (!name || strcmp(name, collc_lib_names[i]) == 0)\n"
	           "\t\t\tn += collc_lib_ran[i];\n\treturn n;\n}\n", prefix);
	fprintf(f, "\nlong long\n%s_passed(void)\n{\n\treturn collc_hot.passed;\n}\n", prefix);
	fprintf(f, "\nvoid\n%s_report(void)\n{\n\tcollc_lib_report(\"%s\", COLLC_LIB_NSCHED, "
	           "collc_lib_names, collc_lib_ran, collc_hot.passed, collc_hot.empty);\n}\n", prefix,
	        prefix);
	fprintf(f, "\nint\n%s_calibrate(MPI_Comm comm, const char *path, unsigned long long max)\n{\n"
	           "\treturn collc_lib_calibrate(\"%s\", collc_lib_plan, COLLC_LIB_NENTRY, collc_lib_names, "
	           "collc_lib_try, comm, path, max);\n}\n", prefix, prefix);
	fputs("\n/* ==== the PMPI drop-in: MPI's names for the kinds of the plan ==== */\n"
	      "#ifdef COLLC_PMPI\n", f);
	if (ambiguous)
		fputs("#error \"two schedules of the plan cover the same calls (collc said which): the "
		      "drop-in cannot choose; choose by size with a plan\"\n", f);
	for (int kind = 0; kind < NCOLLKIND; kind++) {
		if (!has[kind])
			continue;
		const LibKind *k = &lib_kind[kind];
		const char *count = kind == CK_REDUCE_SCATTER || k->two_types ? "recvcount" : "count";
		write_mpi_name(f, k->mpi, k->sig, k->args, k->key, count);
	}
	if (has[CK_ALLGATHER])
		write_mpi_name(f, "Allgatherv", agv_sig, agv_args, "COLLC_K_ALLGATHER", NULL);
	if (has[CK_ALLTOALL])
		write_mpi_name(f, "Alltoallv", a2av_sig, a2av_args, "COLLC_K_ALLTOALL", NULL);
	if (has[CK_REDUCE_SCATTER])
		write_mpi_name(f, "Reduce_scatter", rs_sig, rs_args, "COLLC_K_REDUCE_SCATTER", NULL);
	/* from here every call is MPI's: a delete callback that MPI_Finalize
	 * runs may call collectives, and the library makes nothing then */
	fprintf(f, "int\nMPI_Finalize(void)\n{\n"
	           "\tconst char *cal = getenv(\"COLLC_MPI_CALIBRATE\"), *max = getenv(\"COLLC_MPI_CALIBRATE_MAX\");\n"
	           "\tif (cal) /* the calibration mode: every rank of MPI_COMM_WORLD measures */\n"
	           "\t\t%s_calibrate(MPI_COMM_WORLD, cal, max ? strtoull(max, NULL, 10) : 4ULL << 20);\n"
	           "\t%s_report();\n\tcollc_lib_closed = 1;\n"
	           "\treturn PMPI_Finalize();\n}\n#endif\n", prefix, prefix);
}

static void
write_source(FILE *f, const MpiLibPlan *plan, const LibScheds *ls, const char *prefix,
             const char *header, bool ambiguous)
{
	fprintf(f, "/*\n * %s.c: an MPI library generated by collc from verified schedules "
	           "(collc's\n * docs/mpi.md). The plan: a call runs the first entry it matches, "
	           "any other\n * MPI's own collective; sizes as nccl-tests counts them.\n", prefix);
	write_plan_comment(f, plan);
	fprintf(f, " * Link it with its header %s, or build the PMPI drop-in (MPI's own names):\n"
	           " *   mpicc -std=c11 -O2 -fPIC -shared -DCOLLC_PMPI %s.c -o lib%s.so\n"
	           " * and LD_PRELOAD it. Threads: under MPI_THREAD_MULTIPLE every call is MPI's;\n"
	           " * the entry points take one call at a time in a process (docs/mpi.md).\n */\n", header, prefix, prefix);
	fprintf(f, "#include \"%s\"\n\n#include <limits.h>\n#include <stdatomic.h>\n#include <stdint.h>\n"
	           "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n", header);
	mpi_write_part(f, collc_mpi_runtime_text, SHARED_FROM, SHARED_TO);
	mpi_write_part(f, collc_mpi_runtime_text, MPI_COMM_FROM, MPI_COMM_TO);
	mpi_write_part(f, collc_mpi_lib_text, LIB_FROM, LIB_TO);
	int nw;
	Word *w = interpreter_names(&nw);
	for (int i = 0; i < ls->n; i++)
		write_schedule(f, ls->s[i], i, prefix, w, nw);
	free(w);
	write_plan_table(f, plan, ls);
	mpi_write_part(f, collc_mpi_lib_text, CAL_FROM, CAL_TO);
	bool has[NCOLLKIND] = {false};
	for (int e = 0; e < plan->nentry; e++)
		has[plan->entry[e].kind] = true;
	for (int kind = 0; kind < NCOLLKIND; kind++)
		if (has[kind])
			write_dispatcher(f, (CollKind)kind, ls, prefix);
	if (has[CK_REDUCE_SCATTER])
		write_reduce_scatter(f, ls, prefix);
	if (has[CK_ALLGATHER] || has[CK_ALLTOALL])
		mpi_write_part(f, collc_mpi_lib_text, V_FROM, V_TO);
	for (int kind = CK_ALLGATHER; kind <= CK_ALLTOALL; kind++)
		if (has[kind])
			write_v_dispatcher(f, (CollKind)kind, ls, prefix);
	for (int kind = 0; kind < NCOLLKIND; kind++)
		if (has[kind])
			write_public(f, prefix, lib_kind[kind].mpi, lib_kind[kind].sig, lib_kind[kind].args);
	if (has[CK_REDUCE_SCATTER])
		write_public(f, prefix, "Reduce_scatter", rs_sig, rs_args);
	if (has[CK_ALLGATHER])
		write_public(f, prefix, "Allgatherv", agv_sig, agv_args);
	if (has[CK_ALLTOALL])
		write_public(f, prefix, "Alltoallv", a2av_sig, a2av_args);
	write_try(f, has, ls, prefix);
	write_tail(f, has, prefix, ambiguous);
}

/* ---- the header ---- */

static void
write_header(FILE *f, const MpiLibPlan *plan, const LibScheds *ls, const char *prefix,
             const char *header)
{
	fprintf(f, "/*\n * %s: the MPI library %s.c, generated by collc (collc's docs/mpi.md).\n"
	           " * Its plan:\n", header, prefix);
	write_plan_comment(f, plan);
	fprintf(f, " * Calls of the entry points are made one at a time in a process (as\n"
	           " * MPI_THREAD_SERIALIZED allows; under MPI_THREAD_MULTIPLE the dispatchers\n"
	           " * pass every call to MPI); any number of communicators.\n */\n"
	           "#ifndef %s_H\n#define %s_H\n\n#include <mpi.h>\n#include <stddef.h>\n\n"
	           "#ifdef __cplusplus\nextern \"C\" {\n#endif\n", prefix, prefix);
	fputs("\n/* Each schedule, whatever the size: MPI_SUCCESS, or MPI_ERR_COMM (another size\n"
	      " * of communicator, or an inter-communicator), MPI_ERR_TYPE, MPI_ERR_OP,\n"
	      " * MPI_ERR_ROOT, MPI_ERR_COUNT, MPI_ERR_NO_MEM as docs/mpi.md says. */\n", f);
	for (int i = 0; i < ls->n; i++) {
		fprintf(f, "int %s_%s(%s); /* %s by %s on %d ranks */\n", prefix, ls->s[i]->name,
		        mpi_signature(ls->s[i]->kind), coll_kind_name[ls->s[i]->kind],
		        ls->s[i]->algorithm, ls->s[i]->nrank);
		MemOut gm; /* on a GPU cluster, which box and GPU each rank of comm is */
		bool cluster = sched_gpu_map(ls->s[i], memout_open(&gm));
		memout_close(&gm);
		if (cluster)
			fprintf(f, "/* %.*s (the communicator's rank r) */\n", (int)gm.len, gm.buf);
		free(gm.buf);
	}
	fputs("\n/* MPI's parameters: the plan's schedule for a call it covers (communicator\n"
	      " * size, predefined datatype, op, root and size), else MPI's own collective. */\n", f);
	bool has[NCOLLKIND] = {false};
	for (int e = 0; e < plan->nentry; e++)
		has[plan->entry[e].kind] = true;
	for (int kind = 0; kind < NCOLLKIND; kind++)
		if (has[kind])
			fprintf(f, "int %s_%s(%s);\n", prefix, lib_kind[kind].mpi, lib_kind[kind].sig);
	if (has[CK_ALLGATHER])
		fprintf(f, "/* MPI_Allgatherv's: equal counts are the allgather's */\nint %s_Allgatherv(%s);\n",
		        prefix, agv_sig);
	if (has[CK_ALLTOALL])
		fprintf(f, "/* MPI_Alltoallv's: equal counts are the alltoall's */\nint %s_Alltoallv(%s);\n",
		        prefix, a2av_sig);
	if (has[CK_REDUCE_SCATTER])
		fprintf(f, "/* MPI_Reduce_scatter's: counts per rank */\nint %s_Reduce_scatter(const void "
		           "*sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op, "
		           "MPI_Comm comm);\n", prefix);
	fprintf(f, "\n/* Calls the schedule `name` ran through the dispatchers (NULL: all of\n"
	           " * them), and calls they passed to MPI, in this process. */\n"
	           "long long %s_ran(const char *name);\nlong long %s_passed(void);\n"
	           "/* With COLLC_MPI_REPORT set, prints both to stderr (the drop-in does at\n"
	           " * MPI_Finalize). */\nvoid %s_report(void);\n"
	           "/* Times each entry of comm's size, its schedule against MPI's collective,\n"
	           " * at sizes up to max bytes, and writes the plan to follow to path (rank 0);\n"
	           " * COLLC_MPI_PLAN=path makes the dispatchers follow it (docs/mpi.md). */\n"
	           "int %s_calibrate(MPI_Comm comm, const char *path, unsigned long long max);\n",
	        prefix, prefix, prefix, prefix);
	fputs("\n#ifdef __cplusplus\n}\n#endif\n#endif\n", f);
}

int
mpi_lib_write(Diag *dg, FILE *c, FILE *h, const MpiLibPlan *plan, const char *prefix, const char *header)
{
	LibScheds ls;
	lib_scheds(plan, &ls);
	bool ambiguous = false;
	int rc = check_plan(dg, plan, &ls, prefix, &ambiguous);
	if (rc == 0) {
		write_source(c, plan, &ls, prefix, header, ambiguous);
		write_header(h, plan, &ls, prefix, header);
	}
	lib_scheds_free(&ls);
	return rc;
}

/* ---- the target ---- */

int
mpi_lib_write_dir(Diag *dg, const MpiLibPlan *plan, const char *prefix, const char *target)
{
	/* built beside the target and moved into place whole: a full disk
	 * never leaves a new header beside an old source */
	MemOut c, h;
	OutDir dir;
	char err[512];
	size_t n = strlen(prefix) + 3;
	char *cname = xmalloc(n), *hname = xmalloc(n);
	snprintf(cname, n, "%s.c", prefix);
	snprintf(hname, n, "%s.h", prefix);
	const char *const written[] = {cname, hname, NULL}; /* another prefix's files stay */
	int rc = 0;
	for (int i = 0; i < plan->nentry && rc == 0; i++)
		rc = backend_refuse_in_network(dg, plan->entry[i].sched, "the MPI library");
	if (rc != 0) {
		free(cname), free(hname);
		return -1;
	}
	rc = mpi_lib_write(dg, memout_open(&c), memout_open(&h), plan, prefix, hname);
	if (rc == 0 && outdir_begin(&dir, target, written, err, sizeof err) != 0) {
		error_file(dg, "%s", err);
		rc = -1;
	}
	bool staged = rc == 0;
	if (rc == 0)
		rc = outdir_write(dg, &dir, hname, &h);
	else
		memout_drop(&h);
	if (rc == 0)
		rc = outdir_write(dg, &dir, cname, &c);
	else
		memout_drop(&c);
	if (rc == 0 && outdir_commit(&dir, err, sizeof err) != 0) {
		error_file(dg, "%s", err);
		rc = -1;
	} else if (rc != 0 && staged) {
		outdir_abort(&dir);
	}
	free(cname);
	free(hname);
	return rc;
}

static int
emit_lib(Diag *dg, const Prog *p, const BuildOpts *o, const char *dir)
{
	Arena a = {0};
	MpiLibPlan plan;
	int rc = mpi_lib_plan_of(dg, &a, p, o, &plan);
	if (rc == 0)
		rc = mpi_lib_write_dir(dg, &plan, o->prefix ? o->prefix : "collc", dir);
	arena_free(&a);
	return rc;
}

const DirBackend mpi_lib_backend = {
	"mpi-lib", "an MPI library and PMPI drop-in, P.c and P.h in -o DIR (docs/mpi.md)", emit_lib};
