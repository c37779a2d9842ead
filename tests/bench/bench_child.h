/*
 * bench_child.h: a bench case in its own process, so that its peak memory
 * is its own, and the CPU clocks the benches read. Header-only: each
 * bench_*.c is linked on its own.
 */
#ifndef COLLC_BENCH_CHILD_H
#define COLLC_BENCH_CHILD_H

#include <stdbool.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Runs fn(arg, fd) in a child that writes one line of figures to fd; the
 * line in buf. false if the child failed or wrote nothing. */
static inline bool
in_child(int (*fn)(const void *arg, int fd), const void *arg, char *buf, size_t len)
{
	int fds[2];
	buf[0] = '\0';
	if (pipe(fds) != 0)
		return false;
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		_exit(fn(arg, fds[1]));
	}
	close(fds[1]);
	ssize_t n = read(fds[0], buf, len - 1);
	close(fds[0]);
	int st;
	waitpid(pid, &st, 0);
	if (n > 0)
		buf[n] = '\0';
	return n > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* The user and system CPU seconds a struct rusage counts. */
static inline double
rusage_cpu(const struct rusage *ru)
{
	return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) +
	       (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * 1e-6;
}

/* CPU seconds of the children waited for so far (the wall clock counts the
 * other users of a shared machine too). */
static inline double
children_cpu(void)
{
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	return rusage_cpu(&ru);
}

/* CPU seconds of this process so far. */
static inline double
process_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
