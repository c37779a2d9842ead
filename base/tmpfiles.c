/*
 * tmpfiles.c: outputs whole or absent when SIGINT or SIGTERM ends the run.
 * Needs: nothing but POSIX. Establishes: every temporary held here (a file
 * being written before its rename, a directory being built beside its
 * target, the files in it) is removed if either signal ends the process,
 * and a directory output replaces the previous one as one rename.
 *
 * The list of held paths is the one piece of process-wide mutable state:
 * a signal handler can reach nothing else. It is changed only with both
 * signals blocked, and the handler uses only async-signal-safe calls
 * (unlink, rmdir, getpid, sigaction, raise). SIGKILL cannot be caught: a
 * killed run may leave NAME.PID.tmp beside its output (docs/cli.md).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"

static struct {
	char **path;           /* held paths, NULL where released */
	volatile sig_atomic_t n; /* the handler reads path[0 .. n) */
	int cap;
	pid_t owner;           /* a forked worker removes nothing of its parent's */
	bool installed;
} held;

static void
on_signal(int sig)
{
	if (getpid() == held.owner)
		for (int i = held.n - 1; i >= 0; i--) /* files before the directory holding them */
			if (held.path[i] && unlink(held.path[i]) != 0)
				rmdir(held.path[i]);
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigaction(sig, &dfl, NULL);
	raise(sig); /* ends the run as the signal would have */
}

/* Blocks (or unblocks) SIGINT and SIGTERM around a change to the list. */
static void
block(bool on, sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(on ? SIG_BLOCK : SIG_SETMASK, on ? &set : old, on ? old : NULL);
}

/* The handler takes a signal whose disposition is the default only: a
 * command's own (sweep's SIGINT) or an ignored signal stays as it is. */
static void
install(void)
{
	static const int sigs[] = {SIGINT, SIGTERM};
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
		struct sigaction now, sa = {.sa_handler = on_signal};
		if (sigaction(sigs[i], NULL, &now) == 0 && now.sa_handler == SIG_DFL)
			sigaction(sigs[i], &sa, NULL);
	}
	held.installed = true;
}

int
tmp_hold(const char *path)
{
	sigset_t old;
	block(true, &old);
	if (!held.installed || held.owner != getpid()) {
		held.owner = getpid();
		install();
	}
	if (held.n == held.cap) {
		int cap = held.cap ? 2 * held.cap : 16;
		char **p = xmalloc((size_t)cap * sizeof *p);
		copy_n(p, held.path, (size_t)held.n, sizeof *p);
		free(held.path);
		held.path = p, held.cap = cap;
	}
	size_t len = strlen(path) + 1;
	held.path[held.n] = memcpy(xmalloc(len), path, len);
	int slot = held.n;
	held.n = held.n + 1;
	block(false, &old);
	return slot;
}

void
tmp_release(int slot)
{
	if (slot < 0)
		return;
	sigset_t old;
	block(true, &old);
	free(held.path[slot]);
	held.path[slot] = NULL;
	while (held.n > 0 && !held.path[held.n - 1])
		held.n = held.n - 1;
	block(false, &old);
}

/* ---- a directory output, built beside its target ---- */

/* Removes a directory this module built or set aside: its files, then it
 * (an output directory holds files only). */
static int
remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	size_t n = strlen(dir) + 2;
	for (struct dirent *e; (e = readdir(d));) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char *p = xmalloc(n + strlen(e->d_name));
		snprintf(p, n + strlen(e->d_name), "%s/%s", dir, e->d_name);
		unlink(p);
		free(p);
	}
	closedir(d);
	return rmdir(dir);
}

/* Whether a file name is one this output writes: a pattern starting with
 * '.' is a suffix ("*.et"), any other a whole name ("drop.c"). */
static bool
owned(const char *name, const char *const *pattern)
{
	size_t len = strlen(name);
	for (int k = 0; pattern[k]; k++) {
		size_t n = strlen(pattern[k]);
		if (pattern[k][0] == '.' ? len > n && strcmp(name + len - n, pattern[k]) == 0
		                         : strcmp(name, pattern[k]) == 0)
			return true;
	}
	return false;
}

/* Moves every entry of `from` that this output does not write into `to`:
 * the user's files in an output directory (a compiled library, notes)
 * stay in it across a rebuild, while the output's own files are replaced
 * as a set. 0, or -1 at the first that cannot move. */
static int
carry(const char *from, const char *to, const char *const *pattern)
{
	DIR *d = opendir(from);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	int rc = 0;
	for (struct dirent *e; rc == 0 && (e = readdir(d));) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    owned(e->d_name, pattern))
			continue;
		char a[4096], b[4096];
		snprintf(a, sizeof a, "%s/%s", from, e->d_name);
		snprintf(b, sizeof b, "%s/%s", to, e->d_name);
		rc = rename(a, b);
	}
	closedir(d);
	return rc;
}

int
outdir_begin(OutDir *o, const char *target, const char *const *pattern, char *err,
             size_t errlen)
{
	*o = (OutDir){.slot = -1};
	struct stat st, cwd;
	/* a link to a directory is followed: the directory it names is replaced */
	char *real = realpath(target, NULL);
	const char *path = real ? real : target;
	bool exists = stat(path, &st) == 0;
	if (exists && !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "cannot write '%s': it exists and is not a directory", target);
		free(real);
		return -1;
	}
	if (exists && stat(".", &cwd) == 0 && st.st_dev == cwd.st_dev && st.st_ino == cwd.st_ino) {
		snprintf(err, errlen, "cannot write '%s': it is the current directory, which a directory "
		         "output would replace; give a directory of its own", target);
		free(real);
		return -1;
	}
	size_t n = strlen(path) + 32;
	o->pattern = pattern;
	o->target = xmalloc(n);
	snprintf(o->target, n, "%s", path);
	o->stage = xmalloc(n);
	snprintf(o->stage, n, "%s.%ld.tmp", path, (long)getpid());
	free(real);
	remove_dir(o->stage); /* a killed run's of this pid, if any */
	o->slot = tmp_hold(o->stage); /* before it exists: a signal never finds it unheld */
	if (mkdir(o->stage, 0777) != 0) {
		snprintf(err, errlen, "cannot create '%s': %s", o->stage, strerror(errno));
		tmp_release(o->slot);
		free(o->target), free(o->stage);
		return -1;
	}
	return 0;
}

char *
outdir_path(OutDir *o, const char *name)
{
	size_t n = strlen(o->stage) + strlen(name) + 2;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/%s", o->stage, name);
	if (o->nfile == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 16;
		o->file = xrealloc(o->file, (size_t)o->cap * sizeof *o->file);
	}
	o->file[o->nfile++] = tmp_hold(p);
	return p;
}

int
outdir_write(Diag *dg, OutDir *o, const char *name, MemOut *m)
{
	char err[512], *path = outdir_path(o, name);
	int rc = memout_write(m, path, err, sizeof err);
	if (rc != 0)
		error_file(dg, "%s", err);
	free(path);
	return rc;
}

/* fsync of a path (a file or a directory): its bytes on the disk before
 * the rename that publishes them. */
static int
sync_path(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	int rc = fsync(fd);
	close(fd);
	return rc;
}

void
sync_parent(const char *path)
{
	size_t n = strlen(path) + 1;
	char *dir = memcpy(xmalloc(n), path, n), *slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = 0; /* "/f" is in "/" */
	sync_path(slash ? dir : ".");
	free(dir);
}

static void
outdir_free(OutDir *o)
{
	for (int i = 0; i < o->nfile; i++)
		tmp_release(o->file[i]);
	tmp_release(o->slot);
	free(o->file), free(o->target), free(o->stage);
	*o = (OutDir){.slot = -1};
}

int
outdir_commit(OutDir *o, char *err, size_t errlen)
{
	int rc = 0;
	DIR *d = opendir(o->stage);
	for (struct dirent *e; d && rc == 0 && (e = readdir(d));) {
		char p[4096];
		snprintf(p, sizeof p, "%s/%s", o->stage, e->d_name);
		if (strcmp(e->d_name, "..") != 0 && sync_path(p) != 0)
			rc = -1;
	}
	if (d)
		closedir(d);
	if (!d || rc != 0) {
		snprintf(err, errlen, "cannot write '%s': %s", o->target, strerror(errno));
		outdir_abort(o);
		return -1;
	}
	/* the user's files carried into the new output, the old output aside,
	 * the new one in, the old removed, with SIGINT and SIGTERM held until
	 * done: at every moment the target is the old output whole or the new
	 * one whole, and a signal leaves no copy aside */
	size_t n = strlen(o->target) + 40;
	char *old = xmalloc(n), *target = xmalloc(n); /* o->target, kept past outdir_free */
	snprintf(old, n, "%s.%ld.old.tmp", o->target, (long)getpid());
	snprintf(target, n, "%s", o->target);
	sigset_t mask;
	block(true, &mask);
	bool stranded = false; /* the user's files could not go back: the stage is kept */
	if (carry(o->target, o->stage, o->pattern) != 0) {
		snprintf(err, errlen, "cannot replace '%s': %s", o->target, strerror(errno)), rc = -1;
		stranded = carry(o->stage, o->target, o->pattern) != 0; /* what moved goes back */
	}
	bool had = rc == 0 && rename(o->target, old) == 0;
	if (rc == 0 && !had && errno != ENOENT)
		snprintf(err, errlen, "cannot replace '%s': %s", o->target, strerror(errno)), rc = -1;
	if (rc == 0 && rename(o->stage, o->target) != 0) {
		snprintf(err, errlen, "cannot write '%s': %s", o->target, strerror(errno)), rc = -1;
		if (had && rename(old, o->target) == 0) /* the old one goes back */
			stranded = carry(o->stage, o->target, o->pattern) != 0;
	}
	if (rc == 0 && had)
		remove_dir(old);
	if (rc == 0 || stranded)
		outdir_free(o);
	block(false, &mask);
	if (rc == 0)
		sync_parent(target); /* the renames on the disk */
	else if (!stranded)
		outdir_abort(o);
	free(old), free(target);
	return rc;
}

void
outdir_abort(OutDir *o)
{
	if (o->stage)
		remove_dir(o->stage);
	outdir_free(o);
}
