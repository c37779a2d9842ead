/*
 * hostile.c: an ordinary MPI program (no collc header) that the tests run
 * with the drop-in of tests/mpi/hostile.coll LD_PRELOADed, under Open MPI
 * and MPICH (tests/unit/test_mpi.c, issue 37): the calls a drop-in must
 * pass to MPI or take over without being seen. One case per run, named by
 * the first argument:
 *
 *   big       MPI_Bcast of 2^31 + 64 bytes on 2 ranks (past what a schedule
 *             represents: MPI's own must run it, and the data must arrive)
 *   finalize  an MPI_COMM_SELF attribute, set before the first collective,
 *             whose delete callback calls MPI_Allreduce in MPI_Finalize
 *   session   an MPI-4 session without MPI_Init (MPI_Allreduce on a
 *             communicator of the session); under an MPI before 4 it says so
 *   threads   MPI_THREAD_MULTIPLE: two threads, each allreducing on its own
 *             duplicate of MPI_COMM_WORLD, at once
 *   bytes     broadcast, allgather and alltoall on every predefined type,
 *             counts 0 to 1000, reduce-scatter with counts per rank (equal
 *             and not), every kind at count 0
 *   vector    MPI_Allgatherv and MPI_Alltoallv with equal counts (0 to
 *             1000, blocks end to end or reversed with gaps, in place or
 *             not: the plan's) and counts that differ (MPI's)
 *   osu       as OSU's and IMB's collective benchmarks measure (warm-up
 *             calls, then iterations from a barrier, the slowest rank's
 *             mean), every result validated: allreduce, reduce-scatter
 *             (block and counts) of floats, allgather(v), alltoall(v) and
 *             broadcast of MPI_CHAR, at 64 B, 4 KiB and 64 KiB, each
 *             through the drop-in and straight to MPI's (PMPI_) in turn,
 *             with the ratio; with COLLC_MPI_PLAN it counts as the
 *             drop-in's the calls that plan gives collc (docs/mpi.md).
 *             osu ITERS ROUNDS WARMUP: iterations (10), rounds (2, the
 *             best) and warm-up calls (2) of each way
 *
 * Rank 0 prints "ok: CASE N checks" when every result is right and
 * "calls: covered C other O at once E": C the calls the drop-in should run
 * itself (as docs/mpi.md defines them), O those it should pass to MPI, E
 * the calls of no element it should return at once ("Count 0"); the test
 * compares them with the drop-in's COLLC_MPI_REPORT lines. Exit 1 on a
 * wrong result.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, np, checks, bad, covered, other, at_once;

static void
expect(const char *what, int ok, long at)
{
	checks++;
	if (!ok && !bad++)
		fprintf(stderr, "rank %d: %s: wrong at %ld\n", me, what, at);
}

/* The byte at i of rank r's data: any value a type may hold as bytes. */
static unsigned char
pattern(int r, size_t i)
{
	return (unsigned char)(r * 37 + i * 11 + (i >> 8));
}

/* ---- big ---- */

/* 2^31 + 64 bytes as ints: only a few pages are written at the root, so
 * only the other rank holds the memory MPI writes (about 2 GiB). */
static void
big(void)
{
	const size_t bytes = ((size_t)1 << 31) + 64, count = bytes / sizeof(int);
	unsigned char *buf = calloc(bytes, 1); /* fresh pages: untouched until written */
	if (!buf) {
		fprintf(stderr, "rank %d: no memory for 2 GiB\n", me);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	/* the bytes that tell: the first, about 2^31, the last */
	const size_t at[] = {0, 4095, ((size_t)1 << 31) - 8, ((size_t)1 << 31) + 8, bytes - 1};
	for (size_t k = 0; k < sizeof at / sizeof *at; k++)
		buf[at[k]] = me == 0 ? pattern(0, at[k]) : 0xee;
	int rc = MPI_Bcast(buf, (int)count, MPI_INT, 0, MPI_COMM_WORLD);
	expect("MPI_Bcast of 2^31 + 64 bytes returns MPI_SUCCESS", rc == MPI_SUCCESS, rc);
	if (np == 2)
		other++;
	else
		covered += np == 4; /* hostile.coll's 4-rank broadcast: never; counted to show it */
	for (size_t k = 0; k < sizeof at / sizeof *at; k++)
		expect("2^31 + 64 bytes broadcast", buf[at[k]] == pattern(0, at[k]), (long)at[k]);
	free(buf);
}

/* ---- finalize ---- */

static int at_finalize = -1; /* what the callback's allreduce gave, -1 until it ran */

static int
delete_self(MPI_Comm comm, int keyval, void *attr, void *extra)
{
	(void)comm;
	(void)keyval;
	(void)attr;
	(void)extra;
	int one = 1, sum = 0;
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	at_finalize = sum;
	return MPI_SUCCESS;
}

static int finalize_key = MPI_KEYVAL_INVALID;

static void
finalize_set(void)
{
	MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_self, &finalize_key, NULL);
	MPI_Comm_set_attr(MPI_COMM_SELF, finalize_key, NULL);
	MPI_Comm_free_keyval(&finalize_key); /* the attribute keeps it until deleted */
	int x = me + 1, y = 0; /* the first collective, after the attribute */
	MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	covered += np == 4;
	other += np != 4;
	expect("allreduce before MPI_Finalize", y == np * (np + 1) / 2, y);
}

/* ---- threads ---- */

typedef struct {
	MPI_Comm comm;
	int bad;
} Thread;

static void *
thread_run(void *arg)
{
	Thread *t = arg;
	enum { N = 4099 };
	int *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out);
	for (int it = 0; it < 20 && in && out; it++) {
		for (int i = 0; i < N; i++)
			in[i] = (me + 1) * (i % 13 + it);
		MPI_Allreduce(in, out, N, MPI_INT, MPI_SUM, t->comm);
		for (int i = 0; i < N; i++)
			t->bad += out[i] != np * (np + 1) / 2 * (i % 13 + it);
	}
	free(in);
	free(out);
	return NULL;
}

static void
threads(int provided)
{
	Thread t[2];
	for (int k = 0; k < 2; k++) {
		MPI_Comm_dup(MPI_COMM_WORLD, &t[k].comm);
		t[k].bad = 0;
	}
	if (provided == MPI_THREAD_MULTIPLE) {
		pthread_t id[2];
		for (int k = 0; k < 2; k++)
			pthread_create(&id[k], NULL, thread_run, &t[k]);
		for (int k = 0; k < 2; k++)
			pthread_join(id[k], NULL);
		other += 40; /* passed to MPI: the drop-in does not run concurrent calls */
	} else {
		if (me == 0)
			printf("threads: this MPI provides thread level %d, not MPI_THREAD_MULTIPLE (%d): "
			       "the calls run one at a time\n", provided, MPI_THREAD_MULTIPLE);
		for (int k = 0; k < 2; k++)
			thread_run(&t[k]);
		covered += np == 4 ? 40 : 0;
		other += np == 4 ? 0 : 40;
	}
	for (int k = 0; k < 2; k++) {
		expect("allreduce in a thread", t[k].bad == 0, t[k].bad);
		MPI_Comm_free(&t[k].comm);
	}
}

/* ---- bytes ---- */

/* Whether the drop-in takes t as bytes: predefined, contiguous. */
static int
as_bytes(MPI_Datatype t)
{
	int size;
	MPI_Aint lb, extent;
	MPI_Type_size(t, &size);
	MPI_Type_get_extent(t, &lb, &extent);
	return size > 0 && lb == 0 && extent == size;
}

/* ours: a call of a kind, type and counts the plan takes; hostile.coll
 * has every kind on 4 ranks and a broadcast from 0 on 2 */
static void
tally(MPI_Comm comm, int ours, int bcast)
{
	int p;
	MPI_Comm_size(comm, &p);
	if ((p == 4 || (p == 2 && bcast)) && ours)
		covered++;
	else
		other++;
}

/* A call of no element that the drop-in returns at once (none), or else
 * one tally counts. */
static void
tally_none(MPI_Comm comm, int ours, int none)
{
	if (none)
		at_once++;
	else
		tally(comm, ours, 0);
}

static void
bytes_kinds(MPI_Comm comm, MPI_Datatype t, int count)
{
	int r, p, size;
	MPI_Aint lb, extent;
	MPI_Comm_rank(comm, &r);
	MPI_Comm_size(comm, &p);
	MPI_Type_size(t, &size);
	MPI_Type_get_extent(t, &lb, &extent);
	size_t n = (size_t)count * (size_t)extent, all = (size_t)p * n;
	unsigned char *in = malloc(all + 1), *out = malloc(all + 1), *want = malloc(all + 1);
	/* broadcast from 0: the root's bytes everywhere (a type's gaps aside,
	 * which the only non-contiguous types here leave as they were) */
	for (size_t i = 0; i < n; i++)
		out[i] = r == 0 ? pattern(0, i) : 0xee;
	MPI_Bcast(out, count, t, 0, comm);
	tally(comm, as_bytes(t) && count > 0, 1); /* count 0 of a rooted kind: MPI's */
	for (size_t i = 0; as_bytes(t) && i < n; i++)
		expect("bcast", out[i] == pattern(0, i), (long)i);
	/* allgather: block s is rank s's */
	for (size_t i = 0; i < n; i++)
		in[i] = pattern(r, i);
	memset(out, 0xee, all);
	MPI_Allgather(in, count, t, out, count, t, comm);
	tally_none(comm, as_bytes(t), count == 0 && as_bytes(t));
	for (size_t i = 0; as_bytes(t) && i < all; i++)
		expect("allgather", out[i] == pattern((int)(i / (n ? n : 1)), i % (n ? n : 1)), (long)i);
	/* alltoall: block d of rank s's input arrives as block s at rank d */
	for (size_t i = 0; i < all; i++)
		in[i] = pattern(r * 8 + (int)(i / (n ? n : 1)), i);
	for (int s = 0; s < p; s++)
		for (size_t i = 0; i < n; i++)
			want[(size_t)s * n + i] = pattern(s * 8 + r, (size_t)r * n + i);
	memset(out, 0xee, all);
	MPI_Alltoall(in, count, t, out, count, t, comm);
	tally_none(comm, as_bytes(t), count == 0 && as_bytes(t));
	for (size_t i = 0; as_bytes(t) && i < all; i++)
		expect("alltoall", out[i] == want[i], (long)i);
	free(in);
	free(out);
	free(want);
}

/* MPI_Reduce_scatter with counts[] per rank; equal counts are the plan's */
static void
reduce_scatter(MPI_Comm comm, const int *counts)
{
	int r, p, total = 0, before = 0;
	MPI_Comm_rank(comm, &r);
	MPI_Comm_size(comm, &p);
	for (int s = 0; s < p; s++) {
		before += s < r ? counts[s] : 0;
		total += counts[s];
	}
	int *in = malloc((size_t)total * sizeof *in + 1), *out = malloc((size_t)counts[r] * sizeof *out + 1);
	for (int i = 0; i < total; i++)
		in[i] = (r + 1) * (i % 11 + 1);
	MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, comm);
	int equal = 1;
	for (int s = 1; s < p; s++)
		equal &= counts[s] == counts[0];
	tally_none(comm, equal, counts[0] == 0 && equal && p == 4); /* needs an entry: p's */
	for (int i = 0; i < counts[r]; i++)
		expect("reduce_scatter", out[i] == p * (p + 1) / 2 * ((before + i) % 11 + 1), i);
	free(in);
	free(out);
}

static void
bytes(void)
{
	const MPI_Datatype types[] = {
		MPI_CHAR, MPI_BYTE, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_WCHAR, MPI_SHORT,
		MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG,
		MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_C_BOOL, MPI_INT8_T,
		MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T,
		MPI_UINT64_T, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_AINT, MPI_OFFSET, MPI_PACKED,
		MPI_2INT, MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_SHORT_INT, MPI_LONG_INT,
	};
	static const int counts[] = {0, 1, 7, 1000};
	MPI_Comm half;
	MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
	for (size_t k = 0; k < sizeof types / sizeof *types; k++)
		for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
			bytes_kinds(MPI_COMM_WORLD, types[k], counts[c]);
			if (k < 2)
				bytes_kinds(half, types[k], counts[c]); /* no plan there */
		}
	MPI_Comm_free(&half);
	static const int same[4] = {5, 5, 5, 5}, differ[4] = {5, 0, 7, 1}, none[4] = {0, 0, 0, 0};
	reduce_scatter(MPI_COMM_WORLD, same);
	reduce_scatter(MPI_COMM_WORLD, differ);
	reduce_scatter(MPI_COMM_WORLD, none);
	/* count 0 of the reducing kinds: nothing to do */
	int x = 0;
	MPI_Allreduce(&x, &x, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	tally_none(MPI_COMM_WORLD, 1, 1);
	MPI_Reduce_scatter_block(&x, &x, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	tally_none(MPI_COMM_WORLD, 1, 1);
	MPI_Allreduce(MPI_IN_PLACE, &x, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	tally(MPI_COMM_WORLD, 0, 0); /* in place: MPI's, which tells intra from inter */
}

/* ---- vector ---- */

/* Rank s's count to rank d: c everywhere, or (c < 0) counts that differ */
static int
vcount(int c, int s, int d)
{
	return c >= 0 ? c : (s + 2 * d) % 3 * 5 + 1;
}

/* displs[] for p blocks of counts[] elements: end to end from 0, or (gap)
 * in reverse order with gap elements between; returns the elements the
 * buffer needs. */
static int
vplace(const int *counts, int p, int gap, int *displs)
{
	int at = 0;
	for (int k = 0; k < p; k++) {
		int i = gap ? p - 1 - k : k;
		displs[i] = at;
		at += counts[i] + gap;
	}
	return at;
}

/* MPI_Allgatherv with c elements from every rank (c < 0: counts that
 * differ), blocks placed end to end or not, in place or not */
static void
v_allgather(MPI_Comm comm, MPI_Datatype t, int c, int gap, int place)
{
	int r, p, counts[8], displs[8], check = as_bytes(t);
	MPI_Aint lb, size;
	MPI_Comm_rank(comm, &r);
	MPI_Comm_size(comm, &p);
	MPI_Type_get_extent(t, &lb, &size);
	for (int i = 0; i < p; i++)
		counts[i] = vcount(c, i, 0);
	size_t e = (size_t)size, all = (size_t)vplace(counts, p, gap, displs) * e;
	unsigned char *in = malloc((size_t)counts[r] * e + 1), *out = malloc(all + 1);
	for (size_t i = 0; i < (size_t)counts[r] * e; i++)
		in[i] = pattern(r, i);
	memset(out, 0xee, all);
	if (place)
		memcpy(out + (size_t)displs[r] * e, in, (size_t)counts[r] * e);
	MPI_Allgatherv(place ? MPI_IN_PLACE : in, counts[r], t, out, counts, displs, t, comm);
	tally_none(comm, c >= 0 && check, c == 0 && check && p == 4);
	for (int s = 0; s < p && check; s++) /* a type with gaps: only that MPI ran it */
		for (size_t i = 0; i < (size_t)counts[s] * e; i++)
			expect("allgatherv", out[(size_t)displs[s] * e + i] == pattern(s, i), (long)i);
	for (int s = 0; s < p && gap && check; s++) /* the gaps as they were */
		expect("allgatherv's gaps", out[(size_t)(displs[s] + counts[s]) * e] == 0xee, s);
	free(in);
	free(out);
}

/* MPI_Alltoallv: rank s sends vcount(c, s, d) elements to rank d; blocks
 * end to end or not (both sides), in place (equal counts) or not */
static void
v_alltoall(MPI_Comm comm, MPI_Datatype t, int c, int gap, int place)
{
	int r, p, sc[8], sd[8], rc[8], rd[8], check = as_bytes(t);
	MPI_Aint lb, size;
	MPI_Comm_rank(comm, &r);
	MPI_Comm_size(comm, &p);
	MPI_Type_get_extent(t, &lb, &size);
	for (int i = 0; i < p; i++) {
		sc[i] = vcount(c, r, i);
		rc[i] = vcount(c, i, r);
	}
	size_t e = (size_t)size, nin = (size_t)vplace(sc, p, gap, sd) * e,
	       nout = (size_t)vplace(rc, p, gap, rd) * e;
	unsigned char *in = malloc(nin + 1), *out = malloc(nout + 1);
	memset(out, 0xee, nout);
	for (int d = 0; d < p; d++) /* block d, to rank d */
		for (size_t i = 0; i < (size_t)sc[d] * e; i++)
			(place ? out + (size_t)rd[d] * e : in + (size_t)sd[d] * e)[i] = pattern(r * 8 + d, i);
	MPI_Alltoallv(place ? MPI_IN_PLACE : in, sc, sd, t, out, rc, rd, t, comm);
	tally_none(comm, c >= 0 && check, c == 0 && check && p == 4);
	for (int s = 0; s < p && check; s++)
		for (size_t i = 0; i < (size_t)rc[s] * e; i++)
			expect("alltoallv", out[(size_t)rd[s] * e + i] == pattern(s * 8 + r, i), (long)i);
	free(in);
	free(out);
}

static void
vector(void)
{
	const MPI_Datatype types[] = {MPI_CHAR, MPI_INT, MPI_DOUBLE, MPI_SHORT_INT};
	static const int counts[] = {0, 1, 7, 1000, -1};
	MPI_Comm half;
	MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
	for (size_t k = 0; k < sizeof types / sizeof *types; k++)
		for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
			for (int way = 0; way < 4; way++) { /* gap, in place */
				int gap = way & 1 ? 3 : 0, place = way >> 1 && counts[c] >= 0;
				if (way >> 1 && !place)
					continue;
				v_allgather(MPI_COMM_WORLD, types[k], counts[c], gap, place);
				v_alltoall(MPI_COMM_WORLD, types[k], counts[c], gap, place);
				if (k == 0 && way == 1) /* no plan on 2 ranks */
					v_allgather(half, types[k], counts[c], gap, place);
			}
	MPI_Comm_free(&half);
}

/* ---- osu ---- */

/* Who runs a call of kind `name` of `size` bytes under the plan the drop-in
 * follows (COLLC_MPI_PLAN, the calibration's rows "entry lo hi who NAME: ..."):
 * 1 collc, 0 MPI; every call collc's without a plan, MPI's with a file that
 * is not hostile.coll's calibration. */
static int
planned(const char *name, unsigned long long size)
{
	const char *path = getenv("COLLC_MPI_PLAN");
	if (!path)
		return 1;
	FILE *f = fopen(path, "r");
	char line[512], who[8], sched[32];
	int entry, found = 0, ours = 0;
	unsigned long long lo, hi;
	if (!f)
		return 0;
	if (!fgets(line, sizeof line, f) || strncmp(line, "# hostile: 6 entries;", 21) != 0) {
		fclose(f);
		return 0;
	}
	while (!found && fgets(line, sizeof line, f))
		if (sscanf(line, "%d %llu %llu %7s %31[^:]", &entry, &lo, &hi, who, sched) == 5 &&
		    strcmp(sched, name) == 0 && lo <= size && size < hi) {
			found = 1;
			ours = strcmp(who, "collc") == 0;
		}
	fclose(f);
	return ours;
}

enum { OSU_KINDS = 8 };

/* Kind k's call once, of size bytes (nccl-tests' size) on floats (the
 * reducing kinds) or MPI_CHAR (OSU's default type): through the drop-in
 * (MPI_) or straight to the MPI library (PMPI_, which the drop-in does
 * not define). */
static void
osu_call(int kind, int lib, int size, unsigned char *in, unsigned char *out)
{
	int n = size / np, counts[8], displs[8];
	for (int i = 0; i < np; i++) {
		counts[i] = kind == 7 ? n / 4 : n;
		displs[i] = i * n;
	}
	switch (kind * 2 + lib) {
	case 0: MPI_Allreduce(in, out, size / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
	case 1: PMPI_Allreduce(in, out, size / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
	case 2: MPI_Reduce_scatter_block(in, out, n / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
	case 3: PMPI_Reduce_scatter_block(in, out, n / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
	case 4: MPI_Allgather(in, n, MPI_CHAR, out, n, MPI_CHAR, MPI_COMM_WORLD); break;
	case 5: PMPI_Allgather(in, n, MPI_CHAR, out, n, MPI_CHAR, MPI_COMM_WORLD); break;
	case 6: MPI_Alltoall(in, n, MPI_CHAR, out, n, MPI_CHAR, MPI_COMM_WORLD); break;
	case 7: PMPI_Alltoall(in, n, MPI_CHAR, out, n, MPI_CHAR, MPI_COMM_WORLD); break;
	case 8: MPI_Bcast(out, size, MPI_CHAR, 0, MPI_COMM_WORLD); break;
	case 9: PMPI_Bcast(out, size, MPI_CHAR, 0, MPI_COMM_WORLD); break;
	case 10: MPI_Allgatherv(in, n, MPI_CHAR, out, counts, displs, MPI_CHAR, MPI_COMM_WORLD); break;
	case 11: PMPI_Allgatherv(in, n, MPI_CHAR, out, counts, displs, MPI_CHAR, MPI_COMM_WORLD); break;
	case 12: MPI_Alltoallv(in, counts, displs, MPI_CHAR, out, counts, displs, MPI_CHAR, MPI_COMM_WORLD); break;
	case 13: PMPI_Alltoallv(in, counts, displs, MPI_CHAR, out, counts, displs, MPI_CHAR, MPI_COMM_WORLD); break;
	case 14: MPI_Reduce_scatter(in, out, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
	default: PMPI_Reduce_scatter(in, out, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	}
}

/* One kind at one size, through the drop-in (lib 0) or MPI's (1): the
 * slowest rank's mean time in us (IMB's t_max, reduced by PMPI_Allreduce
 * so that the drop-in's counts are the program's calls); every
 * iteration's result checked. */
static double
osu_one(int kind, int lib, int size, int warmup, int iters, unsigned char *in, unsigned char *out,
        unsigned char *want)
{
	double sum = 0, worst = 0;
	/* the result to check: a rank's block of the reduce-scatters */
	size_t bytes = kind == 1 || kind == 7 ? (size_t)(size / np) : (size_t)size;
	for (int it = -warmup; it < iters; it++) {
		memset(out, 0xee, (size_t)size + 64);
		if (kind == 4)
			memcpy(out, in, (size_t)size); /* the root's data; 0xee elsewhere */
		MPI_Barrier(MPI_COMM_WORLD);
		double t = MPI_Wtime();
		osu_call(kind, lib, size, in, out);
		t = MPI_Wtime() - t;
		if (it >= 0)
			sum += t;
		expect("osu", memcmp(out, want, bytes) == 0, kind * 100000 + size);
	}
	sum /= iters;
	PMPI_Allreduce(&sum, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return worst * 1e6;
}

/* Kind k's inputs at size bytes, and what each rank must get. */
static void
osu_data(int kind, int size, unsigned char *in, unsigned char *want)
{
	int n = size / np;
	for (int i = 0; i < size; i++) {
		if (kind <= 1 || kind == 7) { /* floats: rank r's element i is (r + 1) (i % 5) */
			if (i % 4 == 0) {
				/* a reduce-scatter: this rank's block starts at element me n / 4 */
				float v = (float)((me + 1) * (i / 4 % 5)),
				      w = (float)(np * (np + 1) / 2 * (((kind ? me * n / 4 : 0) + i / 4) % 5));
				memcpy(in + i, &v, 4);
				memcpy(want + i, &w, 4);
			}
		} else if (kind == 2 || kind == 5) {
			in[i] = pattern(me, (size_t)i);
			want[i] = pattern(i / n, (size_t)(i % n));
		} else if (kind == 3 || kind == 6) {
			in[i] = pattern(me * 8 + i / n, (size_t)i);
			want[i] = pattern(i / n * 8 + me, (size_t)(me * n + i % n));
		} else {
			in[i] = me == 0 ? pattern(0, (size_t)i) : 0xee;
			want[i] = pattern(0, (size_t)i);
		}
	}
}

/* osu [ITERS [ROUNDS [WARMUP]]]: every kind the drop-in takes at 64 B,
 * 4 KiB and 64 KiB, through the drop-in and straight to MPI's, in turn
 * ROUNDS times (each way's best round), WARMUP calls and ITERS iterations
 * each (default 10, 2 and 2). */
static void
osu(int iters, int rounds, int warmup)
{
	static const char *const names[OSU_KINDS] = {"AR", "RS", "AG", "A2A", "BC", "AG", "A2A", "RS"};
	static const char *const kinds[OSU_KINDS] = {"allreduce", "reduce_scatter_block",
	                                             "allgather", "alltoall", "bcast", "allgatherv",
	                                             "alltoallv", "reduce_scatter"};
	static const int sizes[] = {64, 4096, 65536};
	size_t cap = 65536 + 64;
	unsigned char *in = malloc(cap), *out = malloc(cap), *want = malloc(cap);
	if (me == 0)
		printf("# %d ranks; %d warm-up calls, %d iterations, the slowest rank's mean, best of %d "
		       "rounds\n# %-20s %9s %12s %12s %7s %s\n", np, warmup, iters, rounds,
		       "collective", "size (B)", "drop-in (us)", "MPI (us)", "ratio", "plan");
	for (int kind = 0; kind < OSU_KINDS; kind++)
		for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
			int size = sizes[z], ours = planned(names[kind], (unsigned long long)size);
			double best[2] = {1e30, 1e30};
			osu_data(kind, size, in, want);
			for (int r = 0; r < rounds; r++)
				for (int lib = 0; lib < 2; lib++) {
					double us = osu_one(kind, lib, size, warmup, iters, in, out, want);
					best[lib] = us < best[lib] ? us : best[lib];
				}
			if (me == 0)
				printf("  %-20s %9d %12.2f %12.2f %7.2f %s\n", kinds[kind], size, best[0], best[1],
				       best[0] / best[1], ours ? "collc" : "mpi");
			if (ours)
				covered += rounds * (warmup + iters);
			else
				other += rounds * (warmup + iters);
		}
	free(in);
	free(out);
	free(want);
}

/* ---- session ---- */

#if MPI_VERSION >= 4
static int
session(void)
{
	MPI_Session s;
	MPI_Group g;
	MPI_Comm comm;
	MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &s);
	MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
	MPI_Comm_create_from_group(g, "collc.hostile", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &comm);
	MPI_Comm_rank(comm, &me);
	MPI_Comm_size(comm, &np);
	int x = me + 1, y = 0;
	MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm);
	expect("allreduce on a session's communicator", y == np * (np + 1) / 2, y);
	int mine = bad, worst = 0;
	MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm);
	if (me == 0 && worst == 0)
		printf("ok: session %d checks\n", checks);
	MPI_Comm_free(&comm);
	MPI_Group_free(&g);
	MPI_Session_finalize(&s);
	return worst != 0;
}
#endif

int
main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	if (strcmp(what, "session") == 0) {
#if MPI_VERSION >= 4
		return session();
#else
		printf("ok: session 0 checks: MPI %d.%d has no sessions (MPI-4), nothing to run\n", MPI_VERSION,
		       MPI_SUBVERSION);
		return 0;
#endif
	}
	int provided = MPI_THREAD_SINGLE;
	if (strcmp(what, "threads") == 0)
		MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	else
		MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (strcmp(what, "big") == 0)
		big();
	else if (strcmp(what, "finalize") == 0)
		finalize_set();
	else if (strcmp(what, "threads") == 0)
		threads(provided);
	else if (strcmp(what, "bytes") == 0)
		bytes();
	else if (strcmp(what, "vector") == 0)
		vector();
	else if (strcmp(what, "osu") == 0)
		osu(argc > 2 && atoi(argv[2]) > 0 ? atoi(argv[2]) : 10,
		    argc > 3 && atoi(argv[3]) > 0 ? atoi(argv[3]) : 2, argc > 4 ? atoi(argv[4]) : 2);
	else {
		if (me == 0)
			fprintf(stderr, "usage: hostile big|finalize|session|threads|bytes|vector|osu [ITERS [ROUNDS [WARMUP]]]\n");
		MPI_Finalize();
		return 2;
	}
	int mine = bad, worst = 0;
	MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (np == 4 && provided != MPI_THREAD_MULTIPLE && planned("AR", sizeof(int)))
		covered++;
	else
		other++;
	if (me == 0) {
		if (worst == 0 && strcmp(what, "finalize") != 0)
			printf("ok: %s %d checks\n", what, checks);
		printf("calls: covered %d other %d at once %d\n", covered, other, at_once);
		fflush(stdout);
	}
	MPI_Finalize();
	if (strcmp(what, "finalize") == 0) { /* the callback ran in MPI_Finalize */
		if (at_finalize != np)
			fprintf(stderr, "rank %d: the allreduce in MPI_Finalize gave %d, not %d\n", me,
			        at_finalize, np);
		else if (me == 0 && worst == 0)
			printf("ok: finalize %d checks\n", checks + 1);
		return worst != 0 || at_finalize != np;
	}
	return worst != 0;
}
