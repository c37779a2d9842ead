/*
 * lib.c: what a library of the mpi-lib target adds to the interpreter
 * (backends/mpi/runtime.c), embedded into collc at build time like it.
 * backends/to_mpi_lib.c writes, after the schedules, the lines between the
 * "---- the library ----" markers (a plan entry's type, the lookup of the
 * entry a call matches, the counts' report), after the plan the lines
 * between the "---- the calibration ----" markers (measuring each entry
 * against the MPI library's collective, following what was measured), and
 * then those between the "---- the v variants ----" markers (MPI_Allgatherv
 * and MPI_Alltoallv with equal counts as the plan's allgather and alltoall).
 * What they need before them: the runtime's shared part and communicator,
 * and for the calibration and the v variants COLLC_MPI (MPI_ or PMPI_).
 *
 * Compiled alone (make mpi-runtime-check), the runtime above it stands in
 * for a schedule and the check at the end uses every function.
 */
#include "runtime.c"

#include <stdatomic.h>

/* ---- the library ---- */

/* What a library of the mpi-lib target adds once (backends/to_mpi_lib.c writes
 * the interpreter above once per schedule, its names renamed, and the plan,
 * entry points and dispatchers after this): choosing a plan entry for a
 * call, and the counts' report. */
enum { COLLC_K_ALLREDUCE, COLLC_K_REDUCE_SCATTER, COLLC_K_ALLGATHER, COLLC_K_ALLTOALL,
       COLLC_K_BCAST, COLLC_K_REDUCE };

/* A plan entry: calls of `kind` on communicators of nrank ranks (to `root`
 * for bcast and reduce, else -1) whose size in bytes (nccl-tests': the whole
 * vector of allreduce, reduce-scatter and allgather, a rank's whole buffer
 * of alltoall, the vector of bcast and reduce) lies in [lo, hi) run schedule
 * `sched` (an index into the file's schedules). */
typedef struct { int kind, nrank, root; unsigned long long lo, hi; int sched; } collc_entry;

enum { COLLC_KNOWN_TYPES = 16 };

/* What the library asked MPI once and keeps for the process, since after a
 * barrier a rank's caches are cold and each question costs a walk through
 * MPI's objects (under MPICH the nine a passed broadcast asked took 7 us
 * at the root, twice MPI's own small broadcast: docs/mpi.md). The level, 0
 * until MPI is initialized the world way, then 1 below
 * MPI_THREAD_MULTIPLE or 2 at it (fixed from MPI_Init on; atomic, as
 * threads may ask at once). The predefined datatypes whose elements lie
 * end to end (collc_bytes_type) and their sizes: a predefined handle
 * stands for its type as long as MPI runs (it is never freed, and no other
 * type takes it); filled only at level 1, so never by two calls at once. */
static struct {
	_Atomic int level;
	int n;
	MPI_Datatype type[COLLC_KNOWN_TYPES];
	size_t size[COLLC_KNOWN_TYPES];
} collc_known;

/* What a call the drop-in passes to MPI reads and writes, in one cache
 * line (after a barrier every line and page touched is a miss: docs/mpi.md,
 * "The passed broadcast under MPICH"): per kind, whether the plan followed
 * gives every call of it to MPI (set with collc_cal's spans: a kind with
 * none), and the counts of calls passed to MPI and of calls of no element
 * returned at once (collc_lib_none). Atomic counts: under
 * MPI_THREAD_MULTIPLE threads pass calls at once. single: MPI initialized
 * below MPI_THREAD_MULTIPLE (calls never concurrent; set with
 * collc_known.level), where collc_count adds without a lock. */
static struct {
	_Atomic long long passed, empty;
	unsigned char mpi[COLLC_K_REDUCE + 1];
	unsigned char single;
} collc_hot;

/* One more call in count c. A locked add (an atomic read-modify-write)
 * waits until every store before it has drained from the core: after a
 * program has written its buffers, about 100 ns, where MPI's own call of
 * no element costs nothing measurable (docs/mpi.md, "The locked count").
 * So where calls are never concurrent it is a load and a store, and an
 * atomic add only where threads may pass calls at once (or before MPI
 * says which). */
static inline void collc_count(_Atomic long long *c)
{
	if (collc_hot.single)
		atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
		                      memory_order_relaxed);
	else
		atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* Whether the library may run a schedule now, or must pass every call to
 * MPI: MPI initialized the world way (MPI_Init: a program of MPI-4 sessions
 * alone has no MPI_COMM_SELF for the library's attributes), not finalizing,
 * and calls never concurrent (below MPI_THREAD_MULTIPLE: a schedule keeps
 * its plan and scratch space from call to call). The level is asked until
 * MPI is initialized, then kept; MPI_Finalized at every call. */
static int collc_lib_usable(void)
{
	int init = 0, fin = 1, level = MPI_THREAD_MULTIPLE;
	if (collc_lib_closed)
		return 0;
	if (collc_known.level == 0) {
		if (MPI_Initialized(&init) != MPI_SUCCESS || !init || MPI_Finalized(&fin) != MPI_SUCCESS ||
		    fin || MPI_Query_thread(&level) != MPI_SUCCESS)
			return 0;
		collc_known.level = level == MPI_THREAD_MULTIPLE ? 2 : 1;
		collc_hot.single = level != MPI_THREAD_MULTIPLE;
	}
	return collc_known.level == 1 && MPI_Finalized(&fin) == MPI_SUCCESS && !fin;
}

/* The size of type t's elements where they lie end to end (a predefined
 * type's: collc_bytes_type), from collc_known, asking MPI only the first
 * time; 0 for any other type. Called where collc_lib_usable holds. */
static size_t collc_known_size(MPI_Datatype t)
{
	size_t size = 0;
	for (int i = 0; i < collc_known.n; i++)
		if (collc_known.type[i] == t)
			return collc_known.size[i];
	if (collc_bytes_type(t, &size) != MPI_SUCCESS)
		return 0;
	if (collc_known.n < COLLC_KNOWN_TYPES) {
		collc_known.type[collc_known.n] = t;
		collc_known.size[collc_known.n++] = size;
	}
	return size;
}

/* Per kind, in a cache line of its own, what a call the same as the last
 * needs to be decided without reading the lines the first decision read
 * (the spans, the plan's entries, the type's size, the predefined
 * handles: cold after a barrier, 0.02 to 0.1 us a call under a
 * microsecond, docs/mpi.md). A program calls one size again and again (a
 * benchmark's loop, a solver's step). count, root, type, op: the last call
 * collc_lib_quick gave to MPI (count 0: none yet); once the plan is read
 * the verdict depends on them alone. none_t, none_u, none_op: the types
 * and op of the last call of no element that collc_lib_none returned at
 * once (none: none yet), whose verdict depends on them alone while MPI
 * runs and the buffers are not MPI_IN_PLACE. A predefined handle stands
 * for its type or op while MPI runs, and one that is not predefined is
 * never kept (it is passed whatever it names). Written at level 1 only
 * (calls never concurrent). */
typedef struct {
	_Alignas(64) int count;
	int root;
	MPI_Datatype type;
	MPI_Op op;
	int none;
	MPI_Datatype none_t, none_u;
	MPI_Op none_op;
} collc_memo_line;
static collc_memo_line collc_memo[COLLC_K_REDUCE + 1];

/* Whether a call of no elements returns at once, asking MPI nothing
 * (docs/mpi.md, "Count 0"). MPI lets every collective but a barrier return
 * once the caller's part is done, and with no element there is none; but
 * every rank of the call must choose alike (a rank that calls MPI's
 * collective may wait for one that returned), and MPI would still check
 * the arguments. So it returns only where what decides is the same at
 * every rank and the arguments are valid by their handles alone: the
 * drop-in (a linked library does not see MPI_Finalize begin, and asks as
 * before), MPI initialized and not finalizing, below
 * MPI_THREAD_MULTIPLE, the communicator not MPI_COMM_NULL, no rooted kind
 * (on an inter-communicator the groups pass different roots), no
 * MPI_IN_PLACE (MPI takes it at every rank of an intra-communicator and
 * refuses it on an inter-communicator; only MPI can tell which), for the
 * reducing kinds a type and op the schedules reduce (so a pair MPI
 * defines), for the others predefined types whose elements lie end to end
 * (collc_known; MPI is asked once a type, as for any call). Anything else
 * goes to MPI, which decides and checks. A call with the types and op of
 * the last that returned at once returns reading collc_memo's line of its
 * kind (and the closing flag's). kind: the call's (COLLC_K_*); in, out: its
 * buffers; t, u: its datatypes (send, receive); op: MPI_OP_NULL for the
 * moving kinds. */
static int collc_lib_none(int kind, MPI_Comm comm, const void *in, const void *out,
                          MPI_Datatype t, MPI_Datatype u, MPI_Op op)
{
#ifdef COLLC_PMPI
	int k, ok;
	collc_memo_line *m = &collc_memo[kind];
	if (collc_lib_closed || comm == MPI_COMM_NULL || in == MPI_IN_PLACE || out == MPI_IN_PLACE)
		return 0;
	if (m->none && m->none_t == t && m->none_u == u && m->none_op == op)
		return 1;
	if ((collc_known.level == 0 && !collc_lib_usable()) || collc_known.level != 1)
		return 0;
	if (op != MPI_OP_NULL)
		ok = collc_type_kind(t) >= 0 && collc_opkind(op, &k) == MPI_SUCCESS;
	else
		ok = collc_known_size(t) != 0 && collc_known_size(u) != 0;
	if (ok)
		m->none = 1, m->none_t = t, m->none_u = u, m->none_op = op;
	return ok;
#else
	(void)kind, (void)comm, (void)in, (void)out, (void)t, (void)u, (void)op;
	return 0;
#endif
}

/* The first of the plan's n entries that a call matches, or -1: it is then
 * MPI's. Everything looked at is the same at every rank of a call (MPI
 * requires it), so every rank makes the same choice. op: MPI_OP_NULL for
 * the kinds without one, which move any predefined contiguous type as
 * bytes; root: -1 for the kinds without one. *bytes: the call's size. A
 * call whose working buffer passes INT_MAX bytes is MPI's: one message of
 * the schedule could then pass MPI's int count, which the schedule would
 * find only at that round, with other ranks already waiting. */
static int collc_lib_pick(const collc_entry *plan, int n, int kind, MPI_Comm comm, int count,
                          MPI_Datatype type, MPI_Op op, int root, unsigned long long *bytes)
{
	int size, inter, type_kind = -1, op_kind;
	size_t esize;
	*bytes = 0;
	if (!collc_lib_usable() || comm == MPI_COMM_NULL || count < 0)
		return -1;
	if (op != MPI_OP_NULL && ((type_kind = collc_type_kind(type)) < 0 ||
	                          collc_opkind(op, &op_kind) != MPI_SUCCESS))
		return -1;
	if ((esize = collc_known_size(type)) == 0 ||
	    (op != MPI_OP_NULL && !collc_type_fits(type_kind, (long long)esize)))
		return -1;
	if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
		return -1;
	MPI_Comm_size(comm, &size);
	*bytes = (unsigned long long)count * esize;
	if (kind == COLLC_K_REDUCE_SCATTER || kind == COLLC_K_ALLGATHER || kind == COLLC_K_ALLTOALL)
		*bytes *= (unsigned long long)size;
	if ((kind == COLLC_K_ALLTOALL ? *bytes * (unsigned long long)size : *bytes) > INT_MAX)
		return -1;
	for (int e = 0; e < n; e++)
		if (plan[e].kind == kind && plan[e].nrank == size && plan[e].root == root &&
		    plan[e].lo <= *bytes && *bytes < plan[e].hi)
			return e;
	return -1;
}

/* A schedule's result as MPI gives it: a failure goes through comm's error
 * handler (MPI_ERRORS_ARE_FATAL aborts, as MPI's own collective would),
 * then returns. */
static int collc_lib_result(MPI_Comm comm, int rc)
{
	if (rc != MPI_SUCCESS)
		MPI_Comm_call_errhandler(comm, rc);
	return rc;
}

/* With COLLC_MPI_REPORT set in the environment, one line per rank on
 * stderr: the calls each entry point ran and those passed to MPI (the
 * drop-in prints it at MPI_Finalize, where an unmodified program cannot ask). */
static void collc_lib_report(const char *lib, int nsched, const char *const *names,
                             const long long *ran, long long passed, long long none)
{
	if (!getenv("COLLC_MPI_REPORT"))
		return;
	char line[1024];
	int me = -1, n;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	n = snprintf(line, sizeof line, "%s: rank %d: ran", lib, me);
	for (int i = 0; i < nsched && n > 0 && (size_t)n < sizeof line; i++)
		n += snprintf(line + n, sizeof line - (size_t)n, " %s %lld", names[i], ran[i]);
	if (n > 0 && (size_t)n < sizeof line)
		n += snprintf(line + n, sizeof line - (size_t)n, "; passed to MPI %lld", passed);
	if (none > 0 && n > 0 && (size_t)n < sizeof line) /* calls of no element (collc_lib_none) */
		n += snprintf(line + n, sizeof line - (size_t)n, "; returned at once %lld", none);
	if (n > 0 && (size_t)n < sizeof line)
		snprintf(line + n, sizeof line - (size_t)n, "\n");
	fputs(line, stderr);
}
/* ---- end of the library ---- */

/* ---- the calibration ---- */

/* What a library adds after its plan (it needs the plan's COLLC_MPI):
 * measuring each entry's schedule against MPI's own collective on this
 * machine, and following what was measured (docs/mpi.md, Calibration).
 * try(e, way, a, comm) makes entry e's call once on a's buffers and count,
 * the way `way` says, on float (the reducing kinds) or byte elements: MPI's
 * collective, the schedule, or MPI's form of the kind with counts per rank
 * (MPI_Reduce_scatter, MPI_Allgatherv, MPI_Alltoallv: every count a's
 * count, the blocks end to end at displs). The drop-in runs the schedule
 * for those forms' equal counts too, on the same verdict, and MPI runs
 * them by algorithms of their own (Open MPI's MPI_Reduce_scatter on 4
 * ranks at 64 B: 2.1 us where its MPI_Reduce_scatter_block took 4.2), so
 * MPI's time for those kinds is the faster form's. */
enum { COLLC_CAL_MPI, COLLC_CAL_OURS, COLLC_CAL_MPI_V };
typedef struct {
	void *in, *out;
	int count;
	const int *counts, *displs; /* the ranks' counts, all `count`, and their blocks' starts */
} collc_cal_args;
typedef int (*collc_try_fn)(int e, int way, const collc_cal_args *a, MPI_Comm comm);

/* OSU's collective benchmarks make 1000 iterations a size up to 8 KiB and
 * 100 above, after 100 and 10 warm-up calls (osu_util.h: COLL_LOOP_SMALL,
 * COLL_LOOP_LARGE, COLL_SKIP_SMALL, COLL_SKIP_LARGE, LARGE_MESSAGE_SIZE);
 * IMB gives a size at most a time (SECS_PER_SAMPLE, 10 s) and makes fewer
 * iterations where they would not fit. The calibration does both within
 * COLLC_CAL_BUDGET seconds a size by default (both ways, every round). */
enum { COLLC_CAL_ROWS = 4096, COLLC_CAL_WARMUP = 2, COLLC_CAL_ROUNDS = 3,
       COLLC_CAL_SMALL = 8192, COLLC_CAL_LOOP_SMALL = 1000, COLLC_CAL_LOOP_LARGE = 100,
       COLLC_CAL_BUDGET = 2 };

/* A range of an entry's sizes and who runs it: 1 the schedule, 0 MPI. */
typedef struct { int entry, ours; unsigned long long lo, hi; } collc_cal_row;

/* The plan followed (COLLC_MPI_PLAN): its rows, or none read yet (-1);
 * a file that cannot be followed makes every covered call MPI's (-2).
 * From them (or, with no file, the plan's entries), the spans where a
 * schedule may run, by kind: kind k's are live[from[k] .. from[k + 1]),
 * none made yet while nlive is -1, too many to keep when it is
 * COLLC_CAL_ROWS + 1 (then every call asks collc_lib_pick). The counts
 * first: a call of a kind with no span reads their 36 bytes alone. */
static struct {
	int n, nlive, from[COLLC_K_REDUCE + 2];
	collc_cal_row row[COLLC_CAL_ROWS], live[COLLC_CAL_ROWS];
} collc_cal = {-1, -1, {0}, {{0, 0, 0, 0}}, {{0, 0, 0, 0}}};

static int collc_cal_reduces(int kind)
{
	return kind == COLLC_K_ALLREDUCE || kind == COLLC_K_REDUCE_SCATTER || kind == COLLC_K_REDUCE;
}

/* The ways a kind's size is measured: MPI's, the schedule's, and MPI's
 * form with counts per rank where the kind has one (COLLC_CAL_MPI_V). */
static int collc_cal_ways(int kind)
{
	return kind == COLLC_K_REDUCE_SCATTER || kind == COLLC_K_ALLGATHER ||
	       kind == COLLC_K_ALLTOALL ? 3 : 2;
}

/* The bytes that one element of a call's count stands for at this size
 * (elements of 4 bytes or 1, times the ranks for the kinds whose size is
 * every rank's). */
static unsigned long long collc_cal_unit(int kind, int p)
{
	unsigned long long u = collc_cal_reduces(kind) ? 4 : 1;
	if (kind == COLLC_K_REDUCE_SCATTER || kind == COLLC_K_ALLGATHER || kind == COLLC_K_ALLTOALL)
		u *= (unsigned long long)p;
	return u;
}

/* What a program does between two calls, outside the timed call: it writes
 * the next call's input and reads the last one's result, `bytes` of each.
 * IMB's validation (-DCHECK) does, and an application computes there; a
 * call then finds its buffers as computation leaves them, not as a loop of
 * calls does, and the two can rank the ways apart (IMB's broadcast of 256
 * KiB on 4 ranks: the schedule 1.63x MPI's, where OSU's loop measured it
 * faster; docs/mpi.md). */
static void collc_cal_touch(char *in, const char *out, size_t bytes)
{
	unsigned char acc = 0;
	memset(in, 1, bytes); /* the values the calibration's input holds */
	for (size_t i = 0; i < bytes; i += 64)
		acc ^= (unsigned char)out[i];
	volatile unsigned char sink = acc; /* the reads are kept */
	(void)sink;
}

/* A call's time two ways, in seconds: t[0] the slowest rank's mean (IMB's
 * t_max), t[1] the ranks' mean of their means (OSU's average latency,
 * IMB's t_avg); warm warm-up calls first, each call from a barrier, and
 * before the barrier, with touch > 0, collc_cal_touch's `touch` bytes. */
static void collc_cal_time(collc_try_fn f, int e, int way, const collc_cal_args *a, size_t touch,
                           MPI_Comm comm, int warm, int iters, double t[2])
{
	double sum = 0;
	int p;
	for (int i = -warm; i < iters; i++) {
		if (touch > 0)
			collc_cal_touch(a->in, a->out, touch);
		COLLC_MPI(Barrier)(comm);
		double t0 = MPI_Wtime();
		f(e, way, a, comm);
		if (i >= 0)
			sum += MPI_Wtime() - t0;
	}
	sum /= iters;
	MPI_Comm_size(comm, &p);
	COLLC_MPI(Allreduce)(&sum, &t[0], 1, MPI_DOUBLE, MPI_MAX, comm);
	COLLC_MPI(Allreduce)(&sum, &t[1], 1, MPI_DOUBLE, MPI_SUM, comm);
	t[1] /= p;
}

/* The iterations a round at a size of `bytes` (*n) and the warm-up calls
 * before them (*warm): OSU's counts, fewer where the size's rounds would
 * pass `budget` seconds, timed by COLLC_CAL_WARMUP calls each way (each
 * from a barrier, the slowest rank's), so that a size costs about the
 * budget whatever a call costs on this machine; a tenth of them as warm-up
 * (OSU's ratio), COLLC_CAL_WARMUP at least. Every rank gets the same
 * times, so every rank makes the same number of calls. */
static void collc_cal_count(collc_try_fn f, int e, const collc_cal_args *a, int ways,
                            unsigned long long bytes, double budget, MPI_Comm comm, int *n,
                            int *warm)
{
	double mine = 0, worst = 0;
	for (int way = 0; way < ways; way++) {
		double t = MPI_Wtime();
		for (int i = 0; i < COLLC_CAL_WARMUP; i++) {
			COLLC_MPI(Barrier)(comm);
			f(e, way, a, comm);
		}
		mine += MPI_Wtime() - t;
	}
	COLLC_MPI(Allreduce)(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, comm);
	double each = worst / COLLC_CAL_WARMUP, fit = each > 0 ? budget / (COLLC_CAL_ROUNDS * each) : 1e9;
	int most = bytes <= COLLC_CAL_SMALL ? COLLC_CAL_LOOP_SMALL : COLLC_CAL_LOOP_LARGE;
	*n = fit / 1.1 < most ? (int)(fit / 1.1) : most; /* a tenth more: the warm-up */
	*n = *n < 1 ? 1 : *n;
	*warm = *n / 10 < COLLC_CAL_WARMUP ? COLLC_CAL_WARMUP : *n / 10;
}

/* A size's row from the launches before this one (COLLC_MPI_CALIBRATE_ADD),
 * rank 0's: its eight times in seconds as a row prints them (collc, MPI;
 * slowest rank, mean; in a loop, touched), its noise (a fraction) and how
 * many launches measured it. */
typedef struct {
	int entry;
	unsigned long long size;
	double t[8], noise;
	int launches;
} collc_cal_past;

/* fgets of a whole line: the part that fits in line (its start is all a
 * reader looks at), the rest up to the newline skipped; NULL at the end. */
static char *collc_cal_line(char *line, int size, FILE *in)
{
	if (!fgets(line, size, in))
		return NULL;
	if (!strchr(line, '\n'))
		for (int c = getc(in); c != EOF && c != '\n'; c = getc(in))
			;
	return line;
}

/* The rows of path's calibration, if it is this library's for p ranks:
 * their count (0 when there is no file), each in *rows (malloc'd); -1
 * when the file is another's or cannot be read whole. */
static int collc_cal_past_read(const char *lib, int n, int p, const char *path,
                               collc_cal_past **rows)
{
	FILE *in = fopen(path, "r");
	char line[1024], want[128];
	int k = 0, ok = 1;
	*rows = NULL;
	if (!in)
		return 0;
	snprintf(want, sizeof want, "# %s: %d entries; %d ranks;", lib, n, p);
	*rows = malloc(COLLC_CAL_ROWS * sizeof **rows);
	ok = *rows && collc_cal_line(line, sizeof line, in) && strncmp(line, want, strlen(want)) == 0;
	while (ok && collc_cal_line(line, sizeof line, in)) {
		collc_cal_past r = {0};
		double *t = r.t;
		ok = k < COLLC_CAL_ROWS &&
		     sscanf(line, "%d %*u %*u %*s %*[^:]: %llu B collc %lf us MPI %lf us noise %lf %% "
		            "iters %*d mean collc %lf us MPI %lf us touched collc %lf us MPI %lf us "
		            "mean collc %lf us MPI %lf us launches %d", &r.entry, &r.size, &t[0], &t[1],
		            &r.noise, &t[2], &t[3], &t[4], &t[5], &t[6], &t[7], &r.launches) == 12 &&
		     r.entry >= 0 && r.entry < n && r.launches >= 1;
		for (int i = 0; i < 8; i++)
			t[i] *= 1e-6;
		r.noise /= 100;
		if (ok)
			(*rows)[k++] = r;
	}
	ok = ok && !ferror(in);
	fclose(in);
	if (!ok) {
		free(*rows);
		*rows = NULL;
	}
	return ok ? k : -1;
}

/* Writes the row of size now->size: its times, each the best of this
 * launch's and the launches' before it (past, the same entry and size),
 * and a noise that is the largest of their rounds' spreads and of how far
 * this launch's best lies from theirs, either way: a size whose time moves
 * from launch to launch (the scheduler places ranks anew, other jobs come
 * and go) has that in its noise. The schedule takes the size only where
 * it is faster by more than that noise in every time. */
static void collc_cal_row_out(FILE *out, collc_cal_past *now, const collc_cal_past *past,
                              int npast, unsigned long long lo, unsigned long long hi,
                              const char *name, int iters)
{
	for (int i = 0; i < npast; i++) {
		const collc_cal_past *b = &past[i];
		if (b->entry != now->entry || b->size != now->size)
			continue;
		now->launches += b->launches;
		now->noise = b->noise > now->noise ? b->noise : now->noise;
		for (int c = 0; c < 8; c++) {
			double x = b->t[c], y = now->t[c], apart = x > 0 && y > 0 ?
			                                         (x > y ? x / y : y / x) - 1 : 0;
			now->noise = apart > now->noise ? apart : now->noise;
			now->t[c] = x > 0 && x < y ? x : y;
		}
	}
	int faster = 1;
	for (int c = 0; c < 8; c += 2)
		faster &= now->t[c] * (1 + now->noise) < now->t[c + 1];
	const double *t = now->t;
	fprintf(out, "%d %llu %llu %s %s: %llu B collc %.2f us MPI %.2f us noise %.1f %% iters %d "
	        "mean collc %.2f us MPI %.2f us touched collc %.2f us MPI %.2f us mean collc %.2f us "
	        "MPI %.2f us launches %d\n", now->entry, lo, hi, faster ? "collc" : "mpi", name,
	        now->size, t[0] * 1e6, t[1] * 1e6, now->noise * 100, iters, t[2] * 1e6, t[3] * 1e6,
	        t[4] * 1e6, t[5] * 1e6, t[6] * 1e6, t[7] * 1e6, now->launches);
}

/* Entry e's sizes from lo up to max, each a power of 2 times the unit
 * (every size of [lo, hi) below the first is the first's), measured both
 * ways in turn COLLC_CAL_ROUNDS times, in a loop of calls (as OSU's) and
 * with the buffers touched between calls (collc_cal_touch), one row a size
 * to rank 0's out. A way's times (the slowest rank's and the ranks' mean:
 * OSU prints the mean, IMB both) are its best rounds; the noise is the
 * largest spread of a way's time over its rounds (slowest / best - 1), and
 * the schedule runs a size only when it was faster by more than that in
 * every time: within the noise, or faster by one measure only (a
 * broadcast whose root returns early has a low mean) or in one condition
 * only, the MPI library's own. Powers of 2, as OSU and
 * IMB step, so that no size a benchmark runs lies inside a row measured at
 * another. The rows end at hi; a range with no size to measure is MPI's.
 * iters: iterations a round after COLLC_CAL_WARMUP warm-up calls (0:
 * collc_cal_count's within budget seconds a size). past: the rows of
 * launches before (rank 0's; collc_cal_row_out adds this one's to them). */
static int collc_cal_entry(FILE *out, const collc_entry *x, int e, const char *name,
                           collc_try_fn f, unsigned long long max, int iters, double budget,
                           const collc_cal_past *past, int npast, MPI_Comm comm)
{
	int p;
	MPI_Comm_size(comm, &p);
	unsigned long long unit = collc_cal_unit(x->kind, p), s = unit;
	while (s < x->lo) /* from one element a rank: OSU and IMB measure from 1 B */
		s *= 2;
	if (s >= x->hi || s > max || s / unit > INT_MAX) {
		if (out)
			fprintf(out, "%d %llu %llu mpi %s: no size to measure\n", e, x->lo, x->hi, name);
		return MPI_SUCCESS;
	}
	size_t cap = (size_t)(max < x->hi ? max : x->hi) * 2 + 64;
	char *in = malloc(cap), *buf = malloc(cap);
	int *counts = malloc(2 * (size_t)p * sizeof *counts), ways = collc_cal_ways(x->kind);
	int have = in && buf && counts, all = 0; /* every rank goes on, or none: no rank waits alone */
	COLLC_MPI(Allreduce)(&have, &all, 1, MPI_INT, MPI_MIN, comm);
	if (!all) {
		free(in);
		free(buf);
		free(counts);
		return MPI_ERR_NO_MEM;
	}
	memset(in, 1, cap); /* small floats: no overflow, no denormals */
	for (unsigned long long lo = x->lo; s < x->hi && s <= max; s *= 2) {
		int count = (int)(s / unit), n = iters, warm = COLLC_CAL_WARMUP;
		for (int i = 0; i < p; i++)
			counts[i] = count, counts[p + i] = i * count;
		collc_cal_args a = {in, buf, count, counts, counts + p};
		/* [condition][way][measure]: condition 0 a loop of calls, 1 the
		 * buffers touched between calls; way COLLC_CAL_*; measure 0 the
		 * slowest rank's, 1 the ranks' mean */
		double best[2][3][2], worst[2][3][2] = {{{0}}}, noise = 0;
		for (int c = 0; c < 12; c++)
			best[c / 6][c / 2 % 3][c % 2] = 1e30;
		if (iters <= 0) /* the budget shared by the two conditions */
			collc_cal_count(f, e, &a, ways, s, budget / 2, comm, &n, &warm);
		for (int r = 0; r < COLLC_CAL_ROUNDS; r++)
			for (int touched = 0; touched < 2; touched++)
				for (int way = 0; way < ways; way++) {
					double v[2];
					collc_cal_time(f, e, way, &a, touched ? (size_t)s : 0, comm, warm, n, v);
					for (int m = 0; m < 2; m++) {
						double *b = &best[touched][way][m], *w = &worst[touched][way][m];
						*b = v[m] < *b ? v[m] : *b;
						*w = v[m] > *w ? v[m] : *w;
					}
				}
		for (int c = 0; c < 12; c++) {
			double b = best[c / 6][c / 2 % 3][c % 2], w = worst[c / 6][c / 2 % 3][c % 2];
			if (b > 0 && w < 1e30 && w / b - 1 > noise)
				noise = w / b - 1;
		}
		/* as a row prints them: collc, MPI (its faster form); slowest, mean;
		 * loop, touched */
		collc_cal_past now = {e, s, {0}, noise, 1};
		for (int c = 0; c < 8; c++) {
			int touched = c / 4, m = c / 2 % 2;
			double mpi = best[touched][COLLC_CAL_MPI][m], v = best[touched][COLLC_CAL_MPI_V][m];
			now.t[c] = c % 2 == 0 ? best[touched][COLLC_CAL_OURS][m]
			                      : ways == 3 && v < mpi ? v : mpi;
		}
		unsigned long long hi = s * 2 < x->hi && s * 2 <= max ? s * 2 : x->hi;
		if (out)
			collc_cal_row_out(out, &now, past, npast, lo, hi, name, n);
		lo = hi;
	}
	free(in);
	free(buf);
	free(counts);
	return MPI_SUCCESS;
}

/* Measures every entry of comm's size and writes the plan to follow to
 * path (rank 0). Every rank gets the same times (the slowest rank's), so
 * the rows are the same everywhere. */
static int collc_lib_calibrate(const char *lib, const collc_entry *plan, int n,
                               const char *const *names, collc_try_fn f, MPI_Comm comm,
                               const char *path, unsigned long long max)
{
	int p, me, rc = MPI_SUCCESS;
	MPI_Comm_size(comm, &p);
	MPI_Comm_rank(comm, &me);
	if (max > (1ULL << 30)) /* 1 GiB: what a calibration on one machine can hold */
		max = 1ULL << 30;
	/* with COLLC_MPI_CALIBRATE_ADD (rank 0's), this launch adds to the
	 * file's rows: read whole before it is written again */
	collc_cal_past *past = NULL;
	int npast = 0;
	if (me == 0 && getenv("COLLC_MPI_CALIBRATE_ADD"))
		npast = collc_cal_past_read(lib, n, p, path, &past);
	FILE *out = me == 0 && npast >= 0 ? fopen(path, "w") : NULL;
	if (me == 0 && npast < 0)
		fprintf(stderr, "%s: %s is not a calibration of this library on %d ranks, or cannot be "
		        "read whole: COLLC_MPI_CALIBRATE_ADD adds to none\n", lib, path, p);
	/* rank 0's word for every rank: {opened, iterations, ms a size} */
	const char *it = getenv("COLLC_MPI_CALIBRATE_ITERS"), *tm = getenv("COLLC_MPI_CALIBRATE_TIME");
	double want = tm ? strtod(tm, NULL) : COLLC_CAL_BUDGET;
	int say[3] = {me != 0 || out != NULL, it ? atoi(it) : 0,
	              want > 0 && want <= 3600 ? (int)(want * 1000 + 0.5) : COLLC_CAL_BUDGET * 1000};
	COLLC_MPI(Bcast)(say, 3, MPI_INT, 0, comm);
	int opened = say[0], iters = say[1] > 0 && say[1] <= 1000 ? say[1] : 0;
	double budget = say[2] > 0 ? say[2] / 1000.0 : 0.001;
	if (!opened) {
		if (me == 0 && npast >= 0)
			fprintf(stderr, "%s: cannot write the calibration to %s\n", lib, path);
		free(past);
		return MPI_ERR_FILE;
	}
	if (out && iters > 0)
		fprintf(out, "# %s: %d entries; %d ranks; times: the slowest rank's mean and (mean) the "
		        "ranks' mean, best of %d rounds of %d iterations (after %d warm-up calls); ",
		        lib, n, p, COLLC_CAL_ROUNDS, iters, COLLC_CAL_WARMUP);
	else if (out)
		fprintf(out, "# %s: %d entries; %d ranks; times: the slowest rank's mean and (mean) the "
		        "ranks' mean, best of %d rounds of iters iterations (OSU's %d to %d B, %d "
		        "above, fewer where a size's rounds would pass %.3g s; a tenth more as warm-up "
		        "calls); ", lib, n, p,
		        COLLC_CAL_ROUNDS, COLLC_CAL_LOOP_SMALL, COLLC_CAL_SMALL, COLLC_CAL_LOOP_LARGE,
		        budget);
	if (out)
		fputs("touched: the same with the buffers written and read between calls; MPI: of "
		      "reduce-scatter, allgather and alltoall the faster of MPI's collective and its "
		      "form with counts per rank; noise: the rounds' spread, and the launches'; who: "
		      "collc where faster by more than the noise in every time; launches: how many "
		      "measured the size; entry lo hi (bytes) who\n", out);
	for (int e = 0; e < n && rc == MPI_SUCCESS; e++)
		if (plan[e].nrank == p && plan[e].root < p)
			rc = collc_cal_entry(out, &plan[e], e, names[plan[e].sched], f, max, iters,
			                     budget, past, npast, comm);
	if (out && fclose(out) != 0)
		rc = MPI_ERR_FILE;
	free(past);
	return rc;
}

/* Reads the plan to follow from path: -2 (every covered call MPI's, with
 * a word on stderr) when it is not the calibration of this library. */
static int collc_cal_read(const char *lib, int n, const char *path)
{
	FILE *in = fopen(path, "r");
	char line[512], want[128];
	int rows = 0, ok = in != NULL;
	snprintf(want, sizeof want, "# %s: %d entries;", lib, n);
	if (ok)
		ok = collc_cal_line(line, sizeof line, in) && strncmp(line, want, strlen(want)) == 0;
	while (ok && collc_cal_line(line, sizeof line, in)) {
		collc_cal_row r;
		char who[8];
		if (rows == COLLC_CAL_ROWS ||
		    sscanf(line, "%d %llu %llu %7s", &r.entry, &r.lo, &r.hi, who) != 4 || r.entry < 0 ||
		    r.entry >= n || (strcmp(who, "collc") != 0 && strcmp(who, "mpi") != 0))
			ok = 0;
		r.ours = strcmp(who, "collc") == 0;
		if (ok)
			collc_cal.row[rows++] = r;
	}
	if (in)
		fclose(in);
	if (!ok)
		fprintf(stderr, "%s: %s is not a calibration of this library (docs/mpi.md): every call "
		        "is MPI's\n", lib, path);
	return ok ? rows : -2;
}

/* The plan to follow, read once: its rows, -2 (a file that is not this
 * library's calibration: every covered call MPI's) or -3 (COLLC_MPI_PLAN
 * unset: every entry its schedule). */
static int collc_cal_load(const char *lib, int n)
{
	if (collc_cal.n == -1) {
		const char *path = getenv("COLLC_MPI_PLAN");
		collc_cal.n = path ? collc_cal_read(lib, n, path) : -3;
	}
	return collc_cal.n;
}

/* Entry e for a call of `bytes`, as the plan to follow says: e, or -1
 * where MPI measured faster or nothing was measured. */
static int collc_lib_follow(const char *lib, int n, int e, unsigned long long bytes)
{
	if (e < 0 || collc_cal_load(lib, n) == -3)
		return e;
	for (int i = 0; i < collc_cal.n; i++)
		if (collc_cal.row[i].entry == e && collc_cal.row[i].lo <= bytes &&
		    bytes < collc_cal.row[i].hi)
			return collc_cal.row[i].ours ? e : -1;
	return -1;
}

/* The spans where a schedule may run, by kind (collc_cal's live, from):
 * the rows of the plan followed that say collc, or with no plan to follow
 * every entry of the plan whole. */
static void collc_cal_spans(const collc_entry *plan, int n)
{
	int at = 0, rows = collc_cal.n;
	for (int k = 0; k <= COLLC_K_REDUCE; k++) {
		collc_cal.from[k] = at;
		for (int i = 0; i < (rows == -3 ? n : rows > 0 ? rows : 0); i++) {
			collc_cal_row r = rows == -3 ? (collc_cal_row){i, 1, plan[i].lo, plan[i].hi}
			                             : collc_cal.row[i];
			if (!r.ours || plan[r.entry].kind != k)
				continue;
			if (at == COLLC_CAL_ROWS) {
				collc_cal.nlive = COLLC_CAL_ROWS + 1;
				return;
			}
			collc_cal.live[at++] = r;
		}
	}
	collc_cal.from[COLLC_K_REDUCE + 1] = at;
	collc_cal.nlive = at;
	for (int k = 0; k <= COLLC_K_REDUCE; k++)
		collc_hot.mpi[k] = collc_cal.from[k] == collc_cal.from[k + 1];
}

/* Whether a call is MPI's for certain, found without asking MPI anything
 * (after the first call): no span where a schedule may run holds it
 * (collc_cal_spans), or its type or op rules a schedule out. 0: ask
 * collc_lib_pick, which decides as before; so a rank passes here exactly
 * calls that the pick would pass, and ranks still choose alike. kind,
 * count, type, op and root as collc_lib_pick takes them; count -1: not
 * known before the communicator's size (counts per rank), and type
 * MPI_DATATYPE_NULL: not to be looked at (MPI_Alltoallv's, whose ranks
 * agree only later): only the kind and root are. A call of no bytes is
 * left to the pick (one an entry covers returns at once). */
static int collc_lib_quick_verdict(const char *lib, const collc_entry *plan, int n, int kind,
                                   int count, MPI_Datatype type, MPI_Op op, int root)
{
	if (collc_cal.n == -1) { /* the plan to follow, read once MPI may run a schedule */
		if (!collc_lib_usable())
			return 0;
		collc_cal_load(lib, n);
	}
	if (collc_cal.nlive < 0)
		collc_cal_spans(plan, n);
	if (collc_cal.nlive > COLLC_CAL_ROWS || count == 0)
		return 0;
	int from = collc_cal.from[kind], to = collc_cal.from[kind + 1], reduces = collc_cal_reduces(kind);
	if (from == to)
		return 1;
	size_t esize = 0;
	if (type != MPI_DATATYPE_NULL) {
		int tk = reduces ? collc_type_kind(type) : -1, ok;
		if (reduces && (tk < 0 || collc_opkind(op, &ok) != MPI_SUCCESS))
			return 1;
		if ((esize = collc_known_size(type)) == 0) /* as collc_lib_pick's */
			return 1;
		if (reduces && !collc_type_fits(tk, (long long)esize))
			return 1;
	}
	for (int i = from; i < to; i++) {
		const collc_cal_row *r = &collc_cal.live[i];
		const collc_entry *x = &plan[r->entry];
		unsigned long long b = (unsigned long long)(count > 0 ? count : 0) * esize;
		if (kind == COLLC_K_REDUCE_SCATTER || kind == COLLC_K_ALLGATHER || kind == COLLC_K_ALLTOALL)
			b *= (unsigned long long)x->nrank;
		if (x->root == root && (count < 0 || esize == 0 || (r->lo <= b && b < r->hi)))
			return 0;
	}
	return 1;
}

/* collc_lib_quick_verdict's answer, the last call's when it is the same */
static int collc_lib_quick(const char *lib, const collc_entry *plan, int n, int kind, int count,
                           MPI_Datatype type, MPI_Op op, int root)
{
	collc_memo_line *m = &collc_memo[kind];
	if (count > 0 && m->count == count && m->type == type && m->op == op && m->root == root)
		return 1;
	int mpi = collc_lib_quick_verdict(lib, plan, n, kind, count, type, op, root);
	if (mpi && count > 0 && type != MPI_DATATYPE_NULL && collc_known.level == 1)
		m->count = count, m->root = root, m->type = type, m->op = op;
	return mpi;
}

/* Whether some size of a call of `kind` on p ranks may run a schedule: an
 * entry for it, and a row of it saying collc in the plan followed. */
static inline int collc_cal_may(const char *lib, const collc_entry *plan, int n, int kind, int p)
{
	int rows = collc_cal_load(lib, n);
	for (int e = 0; e < n; e++) {
		if (plan[e].kind != kind || plan[e].nrank != p)
			continue;
		if (rows == -3)
			return 1;
		for (int i = 0; i < rows; i++)
			if (collc_cal.row[i].entry == e && collc_cal.row[i].ours)
				return 1;
	}
	return 0;
}
/* ---- end of the calibration ---- */

/* ---- the v variants ---- */

/* MPI_Allgatherv and MPI_Alltoallv whose counts are all one n are the
 * plan's allgather and alltoall of n elements a block; the displacements
 * are this rank's alone (MPI lets each rank place its blocks), so blocks
 * not end to end go through a buffer of the whole output. Anything else is
 * MPI's. An entry point of the allgather and alltoall schedules: */
typedef int (*collc_move_fn)(const void *sendbuf, size_t sendcount, MPI_Datatype sendtype,
                             void *recvbuf, size_t recvcount, MPI_Datatype recvtype, MPI_Comm comm);

/* The count all p of counts[] hold, or -1. */
static inline int collc_v_count(const int *counts, int p)
{
	if (!counts || p <= 0 || counts[0] < 0)
		return -1;
	for (int i = 1; i < p; i++)
		if (counts[i] != counts[0])
			return -1;
	return counts[0];
}

/* Whether displs[] put p blocks of n elements end to end from 0. */
static inline int collc_v_packed(const int *displs, int p, int n)
{
	for (int i = 0; i < p; i++)
		if ((long long)displs[i] != (long long)i * n)
			return 0;
	return 1;
}

/* Allgatherv's entry, or -1 (MPI's): recvcounts are the same at every rank
 * (MPI requires it), so every rank chooses alike with no message. *n: the
 * count. */
static inline int collc_v_allgather_pick(const collc_entry *plan, int nentry, const void *sendbuf,
                                         int sendcount, MPI_Datatype sendtype,
                                         const int *recvcounts, MPI_Datatype recvtype,
                                         MPI_Comm comm, int *n, unsigned long long *bytes)
{
	int p, inter;
	*bytes = 0;
	*n = -1;
	if (!collc_lib_usable() || comm == MPI_COMM_NULL ||
	    MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
	    MPI_Comm_size(comm, &p) != MPI_SUCCESS)
		return -1;
	int c = collc_v_count(recvcounts, p);
	if (c < 0 || (sendbuf != MPI_IN_PLACE && (sendcount != c || sendtype != recvtype)))
		return -1;
	*n = c;
	return collc_lib_pick(plan, nentry, COLLC_K_ALLGATHER, comm, c, recvtype, MPI_OP_NULL, -1,
	                      bytes);
}

/* Alltoallv's entry, or -1 (MPI's). Each rank sees only its own counts,
 * which can be all equal at one rank and not at another, so the ranks
 * agree (an allreduce of two numbers on comm) where the plan, and the
 * calibration followed, could run a schedule on comm's size at all. */
static inline int collc_v_alltoall_pick(const char *lib, const collc_entry *plan, int nentry,
                                        const void *sendbuf, const int *sendcounts,
                                        MPI_Datatype sendtype, const int *recvcounts,
                                        MPI_Datatype recvtype, MPI_Comm comm, int *n,
                                        unsigned long long *bytes)
{
	int p, inter, e = -1;
	*bytes = 0;
	*n = -1;
	if (!collc_lib_usable() || comm == MPI_COMM_NULL ||
	    MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
	    MPI_Comm_size(comm, &p) != MPI_SUCCESS ||
	    !collc_cal_may(lib, plan, nentry, COLLC_K_ALLTOALL, p))
		return -1;
	int c = collc_v_count(recvcounts, p);
	if (c >= 0 && (sendbuf == MPI_IN_PLACE ||
	               (collc_v_count(sendcounts, p) == c && sendtype == recvtype)))
		e = collc_lib_pick(plan, nentry, COLLC_K_ALLTOALL, comm, c, recvtype, MPI_OP_NULL, -1,
		                   bytes);
	/* the least of every rank's bytes and of their negatives: all equal
	 * when the one is minus the other; a rank that cannot gives -1 */
	long long mine[2] = {e >= 0 ? (long long)*bytes : -1, e >= 0 ? -(long long)*bytes : 0},
	          least[2];
	if (COLLC_MPI(Allreduce)(mine, least, 2, MPI_LONG_LONG, MPI_MIN, comm) != MPI_SUCCESS ||
	    least[0] < 0 || least[0] != -least[1])
		return -1;
	*n = c;
	return e;
}

/* The allgather of n elements a rank by schedule f, each rank's block put
 * at displs[] (elements of type) in recvbuf. */
static inline int collc_v_allgather(collc_move_fn f, const void *sendbuf, void *recvbuf, int n,
                                    const int *displs, MPI_Datatype type, MPI_Comm comm)
{
	int p, me;
	size_t esize = 1;
	MPI_Comm_size(comm, &p);
	MPI_Comm_rank(comm, &me);
	collc_bytes_type(type, &esize);
	if (collc_v_packed(displs, p, n))
		return f(sendbuf, (size_t)n, type, recvbuf, (size_t)n, type, comm);
	size_t block = (size_t)n * esize;
	char *all = malloc((size_t)p * block + 1), *out = recvbuf;
	if (!all)
		return MPI_ERR_NO_MEM;
	memcpy(all + (size_t)me * block,
	       sendbuf == MPI_IN_PLACE ? out + (long long)displs[me] * (long long)esize : sendbuf, block);
	int rc = f(MPI_IN_PLACE, (size_t)n, type, all, (size_t)n, type, comm);
	for (int i = 0; i < p && rc == MPI_SUCCESS; i++)
		memmove(out + (long long)displs[i] * (long long)esize, all + (size_t)i * block, block);
	free(all);
	return rc;
}

/* The alltoall of n elements a block by schedule f, the blocks sent taken
 * from sdispls[] (MPI_IN_PLACE: recvbuf's at rdispls[]) and those received
 * put at rdispls[]. */
static inline int collc_v_alltoall(collc_move_fn f, const void *sendbuf, const int *sdispls,
                                   void *recvbuf, const int *rdispls, int n, MPI_Datatype type,
                                   MPI_Comm comm)
{
	int p;
	size_t esize = 1;
	MPI_Comm_size(comm, &p);
	collc_bytes_type(type, &esize);
	int place = sendbuf == MPI_IN_PLACE;
	if (collc_v_packed(rdispls, p, n) && (place || collc_v_packed(sdispls, p, n)))
		return f(sendbuf, (size_t)n, type, recvbuf, (size_t)n, type, comm);
	const char *in = place ? recvbuf : sendbuf;
	const int *from = place ? rdispls : sdispls;
	size_t block = (size_t)n * esize;
	char *all = malloc((size_t)p * block + 1), *out = recvbuf;
	if (!all)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < p; i++)
		memcpy(all + (size_t)i * block, in + (long long)from[i] * (long long)esize, block);
	int rc = f(MPI_IN_PLACE, (size_t)n, type, all, (size_t)n, type, comm);
	for (int i = 0; i < p && rc == MPI_SUCCESS; i++)
		memmove(out + (long long)rdispls[i] * (long long)esize, all + (size_t)i * block, block);
	free(all);
	return rc;
}
/* ---- end of the v variants ---- */

/* Alone, a caller uses every function above (not written into programs). */
int collc_lib_check(void *work, size_t count, const int *counts, const int *displs, MPI_Comm comm);

static int collc_check_try(int e, int way, const collc_cal_args *a, MPI_Comm comm)
{
	(void)e;
	(void)way;
	return MPI_Allreduce(a->in, a->out, a->count, MPI_FLOAT, MPI_SUM, comm);
}

/* stands in for an allgather or alltoall schedule */
static int collc_check_move(const void *sendbuf, size_t sendcount, MPI_Datatype sendtype,
                            void *recvbuf, size_t recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	return MPI_Alltoall(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype, comm);
}

int
collc_lib_check(void *work, size_t count, const int *counts, const int *displs, MPI_Comm comm)
{
	static const collc_entry plan[2] = {{COLLC_K_ALLREDUCE, NRANK, -1, 0, ~0ULL, 0},
	                                    {COLLC_K_ALLTOALL, NRANK, -1, 0, ~0ULL, 0}};
	static const char *const names[1] = {"AR"};
	long long ran[1] = {0};
	int n, rc;
	unsigned long long bytes;
	if (getenv("COLLC_MPI_CALIBRATE"))
		return collc_lib_calibrate("check", plan, 2, names, collc_check_try, comm,
		                           getenv("COLLC_MPI_CALIBRATE"), 1 << 20);
	if (collc_lib_quick("check", plan, 2, COLLC_K_ALLREDUCE, (int)count, MPI_FLOAT, MPI_SUM, -1))
		return MPI_Allreduce(MPI_IN_PLACE, work, (int)count, MPI_FLOAT, MPI_SUM, comm);
	int e = collc_lib_pick(plan, 2, COLLC_K_ALLREDUCE, comm, (int)count, MPI_FLOAT, MPI_SUM, -1,
	                       &bytes);
	if (collc_lib_follow("check", 2, e, bytes) < 0)
		return collc_lib_result(comm, MPI_ERR_COMM);
	rc = collc_runtime_check(work, count, comm);
	ran[0] += rc == MPI_SUCCESS;
	if (collc_v_allgather_pick(plan, 2, work, 1, MPI_BYTE, counts, MPI_BYTE, comm, &n, &bytes) >= 0)
		rc = collc_v_allgather(collc_check_move, MPI_IN_PLACE, work, n, displs, MPI_BYTE, comm);
	if (collc_v_alltoall_pick("check", plan, 2, work, counts, MPI_BYTE, counts, MPI_BYTE, comm, &n,
	                          &bytes) >= 0)
		rc = collc_v_alltoall(collc_check_move, MPI_IN_PLACE, displs, work, displs, n, MPI_BYTE,
		                      comm);
	if (count == 0 && collc_lib_none(COLLC_K_ALLREDUCE, comm, work, work, MPI_FLOAT, MPI_FLOAT, MPI_SUM))
		return MPI_SUCCESS;
	collc_lib_report("check", 1, names, ran, collc_hot.passed, collc_hot.empty);
	return rc;
}
