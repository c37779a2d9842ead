/*
 * test_hostile.c: the findings of issue 38's hostile-input review, one test
 * each (docs/testing.md): an input that gave a silently wrong result, left a
 * file behind, or an unclear message, run through the binary as a user
 * would, with the located error, the whole-or-absent output and the message
 * that replaced it asserted.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests.h"

#ifndef COLLC_BIN
#define COLLC_BIN "bin/collc"
#endif

static char tmpdir[] = "/tmp/collc-hostile-XXXXXX";

/* Runs `collc ARGS` (a shell line), capturing stdout and stderr; the exit
 * status, or -1 when killed. */
static int
collc(const char *args, char **out, char **err)
{
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "cd %s && %s/%s %s >out 2>err", tmpdir, getenv("PWD"), COLLC_BIN,
	         args);
	int st = system(cmd);
	char path[256];
	snprintf(path, sizeof path, "%s/out", tmpdir);
	*out = slurp(path, NULL);
	snprintf(path, sizeof path, "%s/err", tmpdir);
	*err = slurp(path, NULL);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* collc ARGS exits with `status` and its stderr holds `want`. */
static void
expect(int line, const char *args, int status, const char *want)
{
	char *out, *err;
	int st = collc(args, &out, &err);
	assert_named(st == status && err && strstr(err, want), line, __FILE__,
	             "collc %s: expected exit %d and\n%s\ngot exit %d and\n%s%s", args, status, want,
	             st, out ? out : "", err ? err : "");
	free(out), free(err);
}
#define EXPECT(args, status, want) expect(__LINE__, args, status, want)

int
hostile_setup(void)
{
	if (!mkdtemp(tmpdir))
		return -1;
	char link[512], examples[512];
	snprintf(link, sizeof link, "%s/examples", tmpdir);
	snprintf(examples, sizeof examples, "%s/examples", getenv("PWD"));
	if (symlink(examples, link) != 0) /* the examples, as from the root */
		return -1;
	write_in(tmpdir, "r4.coll", "network { link_bandwidth = 400 Gbps; link_latency = 100 ns; }\n"
	                            "topology R = ring(4);\n"
	                            "collective allreduce AR on R { algorithm ring; }\n");
	return 0;
}

int
hostile_teardown(void)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A: a size of 2^53 bytes or more is refused where it is read (it printed a
 * busbw of 5.4e12 GB/s and a negative energy at 2^63), naming the limit;
 * 2^53 - 1 still runs. */
static void
test_size_limit(void)
{
	static const char *const over[] = {"9223372036854775808", "9007199254740992", "1e19",
	                                   "1e16"};
	for (size_t i = 0; i < sizeof over / sizeof *over; i++) {
		char args[256];
		snprintf(args, sizeof args, "sim --mode flow --sizes %s r4.coll", over[i]);
		EXPECT(args, 2, "is beyond 2^53 - 1 bytes (just under 8 PiB), the largest size collc "
		                "represents exactly (docs/limits.md)");
		snprintf(args, sizeof args, "sim --mode packet --sizes 1KiB..%s r4.coll", over[i]);
		EXPECT(args, 2, "is beyond 2^53 - 1 bytes");
		snprintf(args, sizeof args, "check --size %s r4.coll", over[i]);
		EXPECT(args, 2, "check: --size");
		EXPECT(args, 2, "beyond 2^53 - 1 bytes");
		snprintf(args, sizeof args, "build --size %s r4.coll", over[i]);
		EXPECT(args, 2, "beyond 2^53 - 1 bytes");
		char spec[256];
		snprintf(spec, sizeof spec, "file r4.coll\nmode flow\nsizes 1KiB, %s\n", over[i]);
		write_in(tmpdir, "big.sweep", spec);
		EXPECT("sweep big.sweep -o big.csv", 1,
		       "big.sweep:3:13: error: sizes: '");
		EXPECT("sweep big.sweep -o big.csv", 1, "' is beyond 2^53 - 1 bytes");
		struct stat st;
		char path[256];
		snprintf(path, sizeof path, "%s/big.csv", tmpdir);
		CU_ASSERT_NOT_EQUAL(stat(path, &st), 0);
	}
	char *out, *err;
	CU_ASSERT_EQUAL(collc("sim --mode flow --sizes 9007199254740991 r4.coll", &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, " 9007199254740991 "));
	CU_ASSERT_PTR_NULL(strstr(out, " -")); /* no negative figure */
	free(out), free(err);
}

/* A: --sizes of any length (a list of 259 characters was cut at 255 and a
 * 419-byte size simulated); more than 64 sizes names the cap. */
static void
test_sizes_any_length(void)
{
	char list[1024] = "100", args[1200];
	int n = 1;
	while (strlen(list) < 250)
		n++, strcat(list, ",1048576");
	strcat(list, ",4194304");
	n++;
	CU_ASSERT(strlen(list) > 255);
	snprintf(args, sizeof args, "sim --mode flow --csv --sizes %s r4.coll", list);
	char *out, *err;
	CU_ASSERT_EQUAL(collc(args, &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, ",4194304,"));
	CU_ASSERT_PTR_NULL(strstr(out, ",419,"));
	free(out), free(err);
	char many[512] = "1"; /* 65 sizes: 174 bytes */
	for (int i = 2; i <= 65; i++)
		snprintf(many + strlen(many), sizeof many - strlen(many), ",%d", i);
	snprintf(args, sizeof args, "sim --sizes %s r4.coll", many);
	EXPECT(args, 2, "sim: --sizes: more than 64 sizes, the most one run takes");
	EXPECT("sim --sizes 1..1e30 r4.coll", 2, "beyond 2^53 - 1 bytes");
	EXPECT("tune --sizes 1..1e30 r4.coll", 2, "'1e30' is beyond 2^53 - 1 bytes");
}

/* A: sim FILE.xml --ranks with a node twice put ranks on one node and
 * printed 0.00 us, exit 0. */
static void
test_ranks_twice(void)
{
	static const struct { const char *ranks, *want; } bad[] = {
	    {"0,0,0,0", "error: --ranks: node 0 is listed twice (for XML ranks 0 and 1); each rank "
	                "needs a node of its own"},
	    {"0..2,1", "error: --ranks: node 1 is listed twice (for XML ranks 1 and 3)"},
	    {"3..0", NULL},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char line[600];
		snprintf(line, sizeof line, "sim %s/tests/fixtures/msccl/generated/"
		         "msccltools_allpairs_allgather_4r_ll.xml --topology r4.coll --ranks %s",
		         getenv("PWD"), bad[i].ranks);
		if (bad[i].want) {
			EXPECT(line, 1, bad[i].want);
		} else {
			char *out, *err;
			CU_ASSERT_EQUAL(collc(line, &out, &err), 0);
			free(out), free(err);
		}
	}
}

/* ---- B: outputs whole or absent ---- */

/* Whether any name in dir ends in ".tmp" (a temporary left behind). */
static bool
tmp_left(const char *dir, char *name, size_t len)
{
	DIR *d = opendir(dir);
	bool found = false;
	for (struct dirent *e; d && !found && (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		found = n > 4 && strcmp(e->d_name + n - 4, ".tmp") == 0;
		if (found)
			snprintf(name, len, "%s", e->d_name);
	}
	if (d)
		closedir(d);
	return found;
}

/* Runs `collc ARGS` in tmpdir and sends it `sig` as soon as its temporary
 * OUT.PID.tmp (a file being written, or a directory being built) appears:
 * the signal lands mid-write. Its wait status, or -1 when it finished
 * before the temporary was seen. */
static int
kill_mid_write(const char *args, const char *out, int sig)
{
	fflush(stdout), fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		/* a suite started in the background (`cmd &` in a script) inherits
		 * SIGINT ignored, and collc rightly keeps a signal ignored that it
		 * was given ignored: the test wants the interactive case */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		char cmd[4096];
		snprintf(cmd, sizeof cmd, "cd %s && exec %s/%s %s >/dev/null 2>&1", tmpdir,
		         getenv("PWD"), COLLC_BIN, args);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	char tmp[512];
	snprintf(tmp, sizeof tmp, "%s/%s.%ld.tmp", tmpdir, out, (long)pid);
	struct stat st;
	int status = 0;
	const struct timespec nap = {0, 20000};
	for (long i = 0; i < 3000000; i++) { /* a minute at most */
		if (stat(tmp, &st) == 0) {
			kill(pid, sig);
			break;
		}
		if (waitpid(pid, &status, WNOHANG) == pid)
			return -1;
		nanosleep(&nap, NULL);
	}
	waitpid(pid, &status, 0);
	return status;
}

/* Each kind of output: a file (-o of the schedule text) and each
 * directory output (chakra's traces, an MPI library, tune's MSCCL files,
 * sweep's plots). `args` ends in the option that takes the output's path;
 * `old` is a file of a previous output, relative to the output's
 * directory; `room`, the free bytes of the full-disk test: room for the
 * output's first file (a trace of 280 KiB, collc.h, a 145 KB MSCCL file, a
 * plot) and not for the rest. */
static const struct { const char *args, *out, *old; long room; } output_kinds[] = {
    {"build r512.coll --target ir -o", "out.ir", "out.ir", 64 << 10},
    {"build r512.coll --target chakra -o", "traces", "traces/AR.0.et", 1 << 20},
    {"build r512.coll --target mpi-lib -o", "lib", "lib/collc.h", 64 << 10},
    {"tune examples/torus-4x4-compare.coll --collective SP --sizes 1KiB..64KiB --mode flow "
     "--msccl-dir", "algos", "algos/SP-00-RD-recursive_doubling-1024-4095.xml", 256 << 10},
    {"sweep p.sweep --plots", "plots", "plots/allreduce-torus-4-4-ranks-all-shortest-path.svg",
     4 << 10},
};
enum { NKIND = sizeof output_kinds / sizeof *output_kinds };

/* Kind k's command line writing to dir/out ("": in tmpdir). */
static void
kind_args(char *buf, size_t len, size_t k, const char *dir)
{
	snprintf(buf, len, "%s %s%s%s", output_kinds[k].args, dir, *dir ? "/" : "",
	         output_kinds[k].out);
}

/* What the kinds read, in tmpdir. */
static void
write_kind_inputs(void)
{
	write_in(tmpdir, "r512.coll", "topology R = ring(512);\n"
	                              "collective allreduce AR on R { algorithm ring; }\n");
	write_in(tmpdir, "p.sweep", "topology torus(4, 4), ring(16)\nallreduce ring\n"
	                            "sizes 1KiB..1MiB\nmode flow\n");
}

/* dir/old of kind k holds "old\n", as it was. */
static void
assert_old_kept(size_t k, const char *dir, const char *when)
{
	char path[600];
	snprintf(path, sizeof path, "%s/%s", dir, output_kinds[k].old);
	char *old = slurp(path, NULL);
	assert_named(old && strcmp(old, "old\n") == 0, __LINE__, __FILE__,
	             "collc %s, %s: the old output is not intact", output_kinds[k].args, when);
	free(old);
}

/* SIGINT and SIGTERM mid-write, each kind of output: the run ends by the
 * signal, no temporary remains, and the previous output is as it was. */
static void
test_signal_mid_write(void)
{
	write_kind_inputs();
	static const int sigs[] = {SIGINT, SIGTERM};
	char cmd[1024], args[1024];
	for (size_t k = 0; k < NKIND; k++)
		for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
			snprintf(cmd, sizeof cmd, "cd %s && rm -rf %s && mkdir -p $(dirname %s) && "
			         "echo old >%s", tmpdir, output_kinds[k].out, output_kinds[k].old,
			         output_kinds[k].old);
			kind_args(args, sizeof args, k, "");
			/* a loaded machine may not run this poll while a short write's
			 * temporary exists (sweep's plots take milliseconds): a run that
			 * finished first landed no signal, so it is tried again */
			int st = -1;
			for (int try = 0; try < 8 && st == -1; try++) {
				CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
				st = kill_mid_write(args, output_kinds[k].out, sigs[i]);
			}
			assert_named(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == sigs[i], __LINE__,
			             __FILE__, "collc %s: not ended by signal %d mid-write (status %d)",
			             args, sigs[i], st);
			char left[256] = "", when[64];
			assert_named(!tmp_left(tmpdir, left, sizeof left), __LINE__, __FILE__,
			             "collc %s, signal %d: '%s' left behind", args, sigs[i], left);
			snprintf(when, sizeof when, "signal %d", sigs[i]);
			assert_old_kept(k, tmpdir, when);
		}
}

/* A full disk (a tmpfs filled to the kind's `room`), each kind of output:
 * the write fails with exit 1 and a message, no temporary remains, and
 * the previous output is as it was (an MPI library's header never
 * replaced beside its old source, no new trace beside old ones). Skipped,
 * saying so, where mount is not permitted. */
static void
test_full_disk(void)
{
	char disk[512], cmd[2048], args[1024];
	snprintf(disk, sizeof disk, "%s/disk", tmpdir);
	snprintf(cmd, sizeof cmd, "mkdir -p %s && mount -t tmpfs -o size=4m tmpfs %s 2>/dev/null",
	         disk, disk);
	if (system(cmd) != 0) {
		printf("\n    (full-disk test skipped: mounting a tmpfs is not permitted here)\n");
		return;
	}
	write_kind_inputs();
	bool ready = true; /* the disk as the kind needs it (else the tmpfs is unmounted) */
	for (size_t k = 0; k < NKIND && ready; k++) {
		snprintf(cmd, sizeof cmd, "cd %s && mkdir -p $(dirname %s) && echo old >%s", disk,
		         output_kinds[k].old, output_kinds[k].old);
		ready = system(cmd) == 0;
	}
	snprintf(cmd, sizeof cmd, "echo old >%s/lib/collc.c", disk);
	ready = ready && system(cmd) == 0;
	for (size_t k = 0; k < NKIND && ready; k++) {
		snprintf(cmd, sizeof cmd, "rm -f %s/fill", disk);
		struct statvfs fs;
		ready = system(cmd) == 0 && statvfs(disk, &fs) == 0;
		long fill = ready ? (long)(fs.f_bavail * fs.f_frsize) - output_kinds[k].room : 0;
		snprintf(cmd, sizeof cmd, "head -c %ld /dev/zero >%s/fill", fill > 0 ? fill : 0, disk);
		ready = ready && system(cmd) == 0;
		CU_ASSERT(ready);
		kind_args(args, sizeof args, k, "disk");
		EXPECT(args, 1, "No space left on device");
		char left[256] = "";
		assert_named(!tmp_left(disk, left, sizeof left), __LINE__, __FILE__,
		             "full disk: collc %s left '%s' behind", args, left);
		assert_old_kept(k, disk, "full disk");
		char path[600];
		snprintf(path, sizeof path, "%s/lib/collc.c", disk);
		char *c = slurp(path, NULL);
		CU_ASSERT(c && strcmp(c, "old\n") == 0);
		free(c);
		snprintf(cmd, sizeof cmd, "ls %s/traces | grep -c . | grep -qx 1", disk);
		assert_named(system(cmd) == 0, __LINE__, __FILE__,
		             "full disk: collc %s: a new trace beside the old one", args);
	}
	snprintf(cmd, sizeof cmd, "umount %s", disk);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

/* Whether a line of strace -y's log before `upto` is an fsync of path
 * ".../NAME" or of something in it (`name` is "/NAME"). */
static bool
fsynced_before(const char *text, size_t upto, const char *name)
{
	size_t n = strlen(name);
	for (const char *l = text; l < text + upto;) {
		size_t len = strcspn(l, "\n");
		const char *f = strstr(l, "fsync(");
		for (const char *p = f && f < l + len ? strstr(f, name) : NULL; p && p < l + len;
		     p = strstr(p + 1, name))
			if (p[n] == '>' || p[n] == '/')
				return true;
		l += len + (l[len] == '\n');
	}
	return false;
}

/* In strace's log, the rename that publishes output `out`: from a
 * temporary (not the old output set aside) to a path named `out`. The log
 * after its line, and "/NAME" of the temporary in from[]; NULL if none. */
static const char *
publishing_rename(const char *text, const char *out, char *from, size_t len)
{
	for (const char *l = text; *l;) {
		/* rename("A", "B"), or renameat and renameat2 with directories
		 * between: A and B are the line's first two quoted strings */
		const char *end = l + strcspn(l, "\n"), *q = strstr(l, "rename");
		q = q && q < end ? strchr(q, '"') : NULL;
		const char *q2 = q ? strchr(q + 1, '"') : NULL;
		q2 = q2 && q2 < end ? strchr(q2 + 1, '"') : NULL;
		char a[512], b[512];
		if (q2 && q2 < end && sscanf(q, "\"%511[^\"]", a) == 1 &&
		    sscanf(q2, "\"%511[^\"]", b) == 1) {
			const char *base = strrchr(b, '/') ? strrchr(b, '/') + 1 : b;
			if (strcmp(base, out) == 0 && strstr(a, ".tmp") && !strstr(a, ".old.tmp")) {
				snprintf(from, len, "/%s", strrchr(a, '/') ? strrchr(a, '/') + 1 : a);
				return end;
			}
		}
		l = *end ? end + 1 : end;
	}
	return NULL;
}

/* Each kind of output reaches the disk before it is published and its
 * publication does too: under strace, an fsync of the temporary (a file,
 * or the directory built and its files) precedes the rename that moves
 * it into place, and an fsync of the directory holding the output follows
 * it. Skipped, saying so, where strace cannot trace (no strace, or
 * ptrace not permitted). */
static void
test_fsync_before_rename(void)
{
	char cmd[2048], args[1024], log[600], real[4096];
	if (system("strace -qq -o /dev/null true 2>/dev/null") != 0) {
		printf("\n    (fsync test skipped: strace cannot trace here)\n");
		return;
	}
	write_kind_inputs();
	CU_ASSERT_FATAL(realpath(tmpdir, real) != NULL);
	snprintf(log, sizeof log, "%s/strace.log", tmpdir);
	for (size_t k = 0; k < NKIND; k++) {
		kind_args(args, sizeof args, k, "");
		/* LeakSanitizer (make SAN=1) cannot run under ptrace: off here */
		snprintf(cmd, sizeof cmd, "cd %s && rm -rf %s && ASAN_OPTIONS=${ASAN_OPTIONS:+"
		         "$ASAN_OPTIONS:}detect_leaks=0 strace -f -qq -y -o strace.log "
		         "-e trace=fsync,fdatasync,rename,renameat,renameat2 %s/%s %s >/dev/null 2>&1",
		         tmpdir, output_kinds[k].out, getenv("PWD"), COLLC_BIN, args);
		CU_ASSERT_EQUAL(system(cmd), 0);
		char *text = slurp(log, NULL);
		CU_ASSERT_FATAL(text != NULL);
		/* the fsyncs of the temporary before the rename that publishes
		 * it; -y names each fsync's file as <PATH>, the directory's after */
		char from[520], fsync_dir[4200];
		const char *after = publishing_rename(text, output_kinds[k].out, from, sizeof from);
		snprintf(fsync_dir, sizeof fsync_dir, "<%s>)", real);
		bool published = after != NULL;
		bool synced = published && fsynced_before(text, (size_t)(after - text), from);
		bool dir_after = published && strstr(after, fsync_dir) != NULL;
		assert_named(published, __LINE__, __FILE__, "collc %s: no rename into place", args);
		assert_named(synced, __LINE__, __FILE__,
		             "collc %s: the temporary is not fsynced before its rename", args);
		assert_named(dir_after, __LINE__, __FILE__,
		             "collc %s: no fsync of %s after the rename", args, real);
		free(text);
	}
}

/* A chakra build into the directory of a larger earlier one: the earlier
 * ranks' traces are gone, not left beside the new ones; a file of the
 * user's there stays. */
static void
test_chakra_smaller_over_larger(void)
{
	write_in(tmpdir, "r8.coll", "topology R = ring(8);\n"
	                            "collective allreduce AR on R { algorithm ring; }\n");
	char *out, *err, et[512];
	CU_ASSERT_EQUAL(collc("build r8.coll --target chakra -o et", &out, &err), 0);
	free(out), free(err);
	snprintf(et, sizeof et, "%s/et", tmpdir);
	write_in(et, "notes.txt", "mine\n");
	CU_ASSERT_EQUAL(collc("build r4.coll --target chakra -o et", &out, &err), 0);
	free(out), free(err);
	char path[512];
	for (int r = 0; r < 8; r++) {
		struct stat st;
		snprintf(path, sizeof path, "%s/et/AR.%d.et", tmpdir, r);
		assert_named((stat(path, &st) == 0) == (r < 4), __LINE__, __FILE__,
		             "chakra of ring(4) over ring(8)'s traces: AR.%d.et %s", r,
		             r < 4 ? "missing" : "left behind");
	}
	snprintf(path, sizeof path, "%s/et/notes.txt", tmpdir);
	char *mine = slurp(path, NULL);
	CU_ASSERT(mine && strcmp(mine, "mine\n") == 0);
	free(mine);
}

/* SIGTERM stops a sweep as SIGINT does: the finished rows written whole,
 * how to resume, and exit 143 (128 + 15). */
static void
test_sweep_sigterm(void)
{
	write_in(tmpdir, "t.sweep", "topology torus(4, 4), torus(2, 8)\n"
	                            "allreduce ring, halving_doubling\nallgather ring\n"
	                            "sizes 64KiB, 1MiB, 4MiB\nmode flow\n");
	char *out, *err;
	CU_ASSERT_EQUAL(collc("sweep t.sweep -j 2 -o full.csv", &out, &err), 0);
	free(out), free(err);
	setenv("COLLC_SWEEP_INTERRUPT", "2:15", 1);
	int st = collc("sweep t.sweep -j 2 -o part.csv", &out, &err);
	unsetenv("COLLC_SWEEP_INTERRUPT");
	CU_ASSERT_EQUAL(st, 143);
	CU_ASSERT(err && strstr(err, "collc: sweep stopped: "));
	CU_ASSERT(err && strstr(err, "resume with: collc sweep t.sweep --resume part.csv"));
	free(out), free(err);
	char path[512];
	snprintf(path, sizeof path, "%s/part.csv", tmpdir);
	char *part = slurp(path, NULL);
	snprintf(path, sizeof path, "%s/full.csv", tmpdir);
	char *full = slurp(path, NULL);
	CU_ASSERT_FATAL(part && full);
	long rows = 0;
	for (const char *l = strchr(part, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
		char line[600];
		size_t n = strcspn(l + 1, "\n") + 2;
		snprintf(line, n < sizeof line ? n + 0 : sizeof line, "%s", l);
		CU_ASSERT_PTR_NOT_NULL(strstr(full, line)); /* each kept row is the full run's */
		rows++;
	}
	CU_ASSERT(rows >= 2 && rows < 18);
	free(part), free(full);
}

/* Sweep workers die with their parent, even by SIGKILL, which no handler
 * sees: this process adopts the orphans (a subreaper) and finds each
 * killed at once by the kernel's SIGKILL (PR_SET_PDEATHSIG), or, a worker
 * whose parent died before it set that, ended by its own check (status
 * 1) as it starts; not ended by a broken pipe after its point, seconds
 * later. */
static void
test_sweep_workers_die(void)
{
	write_in(tmpdir, "w.sweep", "topology torus(16, 16)\nallreduce halving_doubling\n"
	                            "routing shortest_path, dor\nsizes 32MiB, 64MiB, 128MiB\n"
	                            "mode packet\n");
	CU_ASSERT_EQUAL_FATAL(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	fflush(stdout), fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		char bin[512], spec[512];
		snprintf(bin, sizeof bin, "%s/%s", getenv("PWD"), COLLC_BIN);
		snprintf(spec, sizeof spec, "%s/w.sweep", tmpdir);
		freopen("/dev/null", "w", stdout), freopen("/dev/null", "w", stderr);
		execl(bin, "collc", "sweep", spec, "-j", "2", (char *)NULL);
		_exit(127);
	}
	/* the workers running: /proc lists the parent's children */
	char kids[128], buf[256] = "";
	snprintf(kids, sizeof kids, "/proc/%ld/task/%ld/children", (long)pid, (long)pid);
	const struct timespec nap = {0, 10000000};
	for (int i = 0; i < 1000 && strchr(buf, ' ') == strrchr(buf, ' '); i++) {
		FILE *f = fopen(kids, "r");
		buf[0] = 0;
		if (f && !fgets(buf, sizeof buf, f))
			buf[0] = 0;
		if (f)
			fclose(f);
		nanosleep(&nap, NULL);
	}
	kill(pid, SIGKILL);
	int st, nworker = 0, killed = 0, orphaned = 0;
	waitpid(pid, &st, 0);
	double t0 = (double)time(NULL), last = t0;
	for (pid_t w; (double)time(NULL) - t0 < 30;) {
		w = waitpid(-1, &st, WNOHANG);
		if (w < 0 && errno == ECHILD)
			break;
		if (w > 0) {
			nworker++;
			killed += WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
			orphaned += WIFEXITED(st) && WEXITSTATUS(st) == 1;
			last = (double)time(NULL);
		} else {
			nanosleep(&nap, NULL);
		}
	}
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	/* a point takes seconds: a worker that ran on would end well after 3 s */
	assert_named(nworker == 2 && killed + orphaned == 2 && last - t0 <= 3, __LINE__, __FILE__,
	             "sweep's workers after their parent's SIGKILL: %d reaped, %d killed by SIGKILL, "
	             "%d ended finding their parent gone, the last %.0f s after (children were: %s)",
	             nworker, killed, orphaned, last - t0, buf);
}

/* ---- C: messages that say what is wrong and where ---- */

/* A sweep spec: a value with ';' or '}' (it said "cannot be simulated: "
 * with the generated file's syntax error), a NUL byte (it said "a spec
 * needs a sizes line" or ran on), a key given twice (the later won
 * silently), a byte-order mark ("unknown key"). */
static void
test_spec_messages(void)
{
	static const struct { const char *spec; size_t len; const char *want; } bad[] = {
	    {"topology torus(4, 4);\nallreduce ring\nsizes 1MiB\n", 0,
	     "s.sweep:1:21: error: 'topology': a value cannot hold ';'"},
	    {"topology torus(4, 4)\nallreduce ring}\nsizes 1MiB\n", 0,
	     "s.sweep:2:15: error: 'allreduce': a value cannot hold '}'"},
	    {"topology torus(4, 4)\nallreduce ring\x00\nsizes 1MiB\n", 48,
	     "s.sweep:2:15: error: a NUL byte: a spec is text"},
	    {"topology torus(4, 4)\nallreduce ring\nsizes 1MiB\nsizes 4MiB\n", 0,
	     "s.sweep:4:1: error: 'sizes' is given twice; give all its values on one line, the "
	     "first at line 3"},
	    {"topology torus(4, 4)\nallreduce ring\nmode flow\nsizes 1MiB\nmode packet\n", 0,
	     "s.sweep:5:1: error: 'mode' is given twice"},
	    {"topology torus(4, 4)\nallreduce ring\nallreduce swing\nsizes 1MiB\n", 0,
	     "s.sweep:3:1: error: 'allreduce' is given twice"},
	    {"\xef\xbb\xbftopology torus(4, 4)\nallreduce ring\nsizes 1MiB\n", 0,
	     "s.sweep:1:1: error: a UTF-8 byte-order mark (bytes EF BB BF) starts the file"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char path[512];
		snprintf(path, sizeof path, "%s/s.sweep", tmpdir);
		FILE *f = fopen(path, "wb");
		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		fwrite(bad[i].spec, 1, bad[i].len ? bad[i].len : strlen(bad[i].spec), f);
		fclose(f);
		EXPECT("sweep s.sweep -o s.csv", 1, bad[i].want);
	}
}

/* --resume of a CSV saved with CRLF line ends resumes (it said "its header
 * differs"), into the bytes of a whole run; a header that does differ
 * says where. */
static void
test_resume_crlf(void)
{
	write_in(tmpdir, "r.sweep", "topology torus(4, 4)\nallreduce ring, swing\n"
	                            "sizes 1MiB, 4MiB\nmode flow\n");
	char *out, *err;
	CU_ASSERT_EQUAL(collc("sweep r.sweep -o whole.csv", &out, &err), 0);
	free(out), free(err);
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "cd %s && head -3 whole.csv | sed 's/$/\\r/' >crlf.csv && "
	         "sed 's/^point,/pointx,/' whole.csv >bad.csv", tmpdir);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	CU_ASSERT_EQUAL(collc("sweep r.sweep --resume crlf.csv -o resumed.csv", &out, &err), 0);
	free(out), free(err);
	char path[512];
	snprintf(path, sizeof path, "%s/whole.csv", tmpdir);
	char *whole = slurp(path, NULL);
	snprintf(path, sizeof path, "%s/resumed.csv", tmpdir);
	char *resumed = slurp(path, NULL);
	CU_ASSERT(whole && resumed && strcmp(whole, resumed) == 0);
	free(whole), free(resumed);
	EXPECT("sweep r.sweep --resume bad.csv -o x.csv", 1,
	       "bad.csv:1:6: not a CSV of this spec's sweep: its header differs from the spec's at "
	       "column 6 (the spec's has 'point')");
}

/* Standard input over its limit is named as standard input (it was '-'),
 * and reading stops at the limit: 400 MB piped in, refused as over at
 * most 256 MiB (the .coll cap), so the rest was never read. */
static void
test_stdin_limit(void)
{
	char *out, *err;
	int st = collc("check - < /dev/null", &out, &err);
	free(out), free(err);
	CU_ASSERT_EQUAL(st, 0);
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "cd %s && { printf 'topology R = ring(4);\\n'; "
	         "head -c 400000000 /dev/zero; } | %s/%s check - 2>err", tmpdir, getenv("PWD"),
	         COLLC_BIN);
	st = system(cmd);
	CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	char path[512];
	snprintf(path, sizeof path, "%s/err", tmpdir);
	err = slurp(path, NULL);
	const char *at = err ? strstr(err, "collc: error: standard input is over ") : NULL;
	int mib = 0;
	CU_ASSERT(at && sscanf(at, "collc: error: standard input is over %d MiB", &mib) == 1 &&
	          mib > 0 && mib <= 256);
	free(err);
}

/* -o through a symbolic link whose target does not exist yet: the target
 * is written and the link stays (it was replaced by a file), as
 * docs/cli.md says of links. */
static void
test_dangling_link(void)
{
	char link[512], target[512];
	snprintf(link, sizeof link, "%s/link.coll", tmpdir);
	snprintf(target, sizeof target, "%s/sub/target.coll", tmpdir);
	snprintf(target, sizeof target, "%s/sub", tmpdir);
	mkdir(target, 0777);
	unlink(link);
	CU_ASSERT_EQUAL_FATAL(symlink("sub/target.coll", link), 0);
	char *out, *err;
	CU_ASSERT_EQUAL(collc("fmt r4.coll -o link.coll", &out, &err), 0);
	free(out), free(err);
	struct stat st;
	CU_ASSERT(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
	snprintf(target, sizeof target, "%s/sub/target.coll", tmpdir);
	char *text = slurp(target, NULL);
	CU_ASSERT(text && strstr(text, "topology R = ring(4);"));
	free(text);
}

CU_TestInfo hostile_tests[] = {
    {"A: a size of 2^53 bytes or more is refused, naming the limit", test_size_limit},
    {"A: --sizes of any length; more than 64 names the cap", test_sizes_any_length},
    {"A: sim FILE.xml --ranks naming a node twice is an error", test_ranks_twice},
    {"B: SIGINT and SIGTERM mid-write leave no temporary and the old output", test_signal_mid_write},
    {"B: a full disk leaves no temporary and the old output, each kind (tmpfs)", test_full_disk},
    {"B: each kind of output fsynced before its rename, its directory after (strace)",
     test_fsync_before_rename},
    {"B: a chakra build over a larger one's directory leaves no stale trace",
     test_chakra_smaller_over_larger},
    {"B: SIGTERM stops a sweep as SIGINT does, keeping the finished rows", test_sweep_sigterm},
    {"B: sweep workers die with their parent, even by SIGKILL", test_sweep_workers_die},
    {"C: a spec's ';' or '}', NUL byte and repeated key are located errors", test_spec_messages},
    {"C: --resume of a CRLF CSV resumes; a differing header says where", test_resume_crlf},
    {"C: standard input over its limit is named so, read no further", test_stdin_limit},
    {"C: -o through a dangling symbolic link writes its target, the link kept", test_dangling_link},
    CU_TEST_INFO_NULL,
};
