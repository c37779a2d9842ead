/*
 * bench_run.c: collc run's interpreter on an 8-rank ring allreduce of
 * 64 MiB of floats (the MSCCL program the backend writes for
 * examples/ring-classic.coll), beside OpenMPI's MPI_Allreduce with 8 ranks
 * on this machine (when mpirun and mpicc are installed) and beside memcpy
 * bandwidth. Prints figures and ratios; a run slower than MPI's is a
 * missed target (exit status 1), a machine without MPI skips the comparison.
 */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bench_target.h"
#include "driver.h"
#include "msccl_program.h"

static const char mpi_src[] =
	"#include <mpi.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
	"int main(int c, char **v) { MPI_Init(&c, &v); int n = 16 << 20;\n"
	" float *a = malloc(n * 4), *b = malloc(n * 4); for (int i = 0; i < n; i++) a[i] = 1;\n"
	" MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);\n"
	" MPI_Barrier(MPI_COMM_WORLD); double t = MPI_Wtime();\n"
	" MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);\n"
	" t = MPI_Wtime() - t; int r; MPI_Comm_rank(MPI_COMM_WORLD, &r);\n"
	" if (r == 0) printf(\"%f\\n\", t); MPI_Finalize(); return 0; }\n";

static double
mpi_time(void)
{
	if (system("command -v mpicc >/dev/null && command -v mpirun >/dev/null") != 0)
		return -1;
	FILE *f = fopen("/tmp/collc_bench_mpi.c", "w");
	if (!f)
		return -1;
	fputs(mpi_src, f);
	fclose(f);
	if (system("mpicc -O2 -o /tmp/collc_bench_mpi /tmp/collc_bench_mpi.c 2>/dev/null") != 0)
		return -1;
	FILE *p = popen("mpirun --oversubscribe --allow-run-as-root -np 8 /tmp/collc_bench_mpi "
	                "2>/dev/null", "r");
	if (!p)
		return -1;
	double t = -1;
	if (fscanf(p, "%lf", &t) != 1)
		t = -1;
	pclose(p);
	return t;
}

int
main(void)
{
	Diag diag = diag_new(), *dg = &diag; /* the bench's diagnostics */
	diag_on_oom(dg);
	Input in = {0};
	diag_reset(dg);
	if (load(dg, "examples/ring-classic.coll", &in, true, 64 << 20) != 0) {
		printf("bench_run: cannot build examples/ring-classic.coll; skipped\n");
		return 0;
	}
	BuildOpts bo = {.collective = "AR"};
	const Sched *s;
	backend_select(&in.prog, &bo, &s, 1);
	Arena a = {0};
	MProg p;
	if (msccl_lower(dg, &a, s, &bo, &p) != 0) {
		printf("bench_run: the ring does not lower; skipped\n");
		return 0;
	}
	int64_t bytes = 64 << 20;
	RunOpts o = {.bytes = bytes, .dtype = RD_FLOAT, .op = RO_SUM, .inplace = false,
	             .timeout = 30};
	RunResult res;
	if (msccl_run(dg, &p, &o, &res) != 0) {
		printf("bench_run: the run failed\n");
		return bench_summary("bench_run", 0, 1);
	}
	/* memcpy bandwidth on the same machine: one 64 MiB copy */
	char *x = malloc((size_t)bytes), *y = malloc((size_t)bytes);
	memset(x, 1, (size_t)bytes);
	memset(y, 2, (size_t)bytes);
	/* through a volatile pointer: the compiler cannot drop or fold the copy */
	void *(*volatile copy)(void *, const void *, size_t) = memcpy;
	double t0 = wall_seconds();
	copy(y, x, (size_t)bytes);
	double tm = wall_seconds() - t0;
	free(x);
	free(y);
	double mpi = mpi_time();
	printf("collc run, 8-rank ring allreduce, 64 MiB float: %.1f ms, %.2f GB/s (verified)\n",
	       res.seconds * 1e3, (double)bytes / res.seconds / 1e9);
	printf("memcpy 64 MiB: %.2f GB/s; collc run's bytes per second are %.3fx of it\n",
	       (double)bytes / tm / 1e9, tm / res.seconds);
	int missed = 0;
	if (mpi > 0) {
		printf("OpenMPI MPI_Allreduce, 8 ranks, 64 MiB float: %.1f ms; collc run / MPI = "
		       "%.2fx (target <= 1.0x)\n", mpi * 1e3, res.seconds / mpi);
		missed = missed_target("8-rank ring allreduce, 64 MiB float", "collc run / MPI time",
		                       res.seconds / mpi, 1.0, "x");
	} else {
		printf("OpenMPI comparison skipped: mpirun/mpicc not installed or the run failed\n");
	}
	arena_free(&a);
	input_free(&in);
	return bench_summary("bench_run", missed, 0);
}
