/*
 * bench_usersched.c: `make bench`. A user schedule of 1024 ranks x 2046
 * rounds (the ring allreduce written in .coll, 2,095,104 transfers) is
 * parsed, checked and lowered to the schedule IR; target under 1 s. The
 * proof (verify) that follows in `collc check` is timed beside it, without
 * a target. Wall clock on a shared machine: read it as a rough figure; the
 * process's CPU time beside it says what the work itself took.
 */
#include <stdio.h>
#include <string.h>

#include "ast.h"
#include "bench_child.h"
#include "bench_target.h"
#include "ir.h"

static const char text[] =
	"topology R = ring(1024);\n"
	"collective allreduce A on R {\n"
	"    schedule {\n"
	"        for s in 0..p - 2 {\n"
	"            round {\n"
	"                for r in 0..p - 1 {\n"
	"                    send (r - s - 1) mod p from r to (r + 1) mod p reduce;\n"
	"                }\n"
	"            }\n"
	"        }\n"
	"        for s in 0..p - 2 {\n"
	"            round {\n"
	"                for r in 0..p - 1 {\n"
	"                    send (r - s) mod p from r to (r + 1) mod p copy;\n"
	"                }\n"
	"            }\n"
	"        }\n"
	"    }\n"
	"}\n";

int
main(void)
{
	Diag diag = diag_new(), *dg = &diag; /* the bench's diagnostics */
	diag_on_oom(dg);
	const double target = 1.0;
	double t0 = wall_seconds(), c0 = process_cpu();
	Arena a = {0};
	diag_source(dg, "bench.coll", text, strlen(text));
	File *f = parse_text(dg, &a, "bench.coll", text, strlen(text));
	if (nerrors(dg) || sema(dg, f))
		return 1;
	Prog p = {0};
	if (lower(dg, f, &p) != 0 || p.nsched != 1)
		return 1;
	double t1 = wall_seconds(), c1 = process_cpu();
	if (verify(dg, p.sched[0]) != 0)
		return 1;
	double t2 = wall_seconds();
	const Sched *s = p.sched[0];
	printf("%-44s %7s %7s %7s %6s %7s %8s %9s\n", "case (parse, check, lower)", "time s",
	       "cpu s", "target", "ratio", "rounds", "messages", "verify s");
	printf("%-44s %7.3f %7.3f %7.1f %6.3f %7d %8d %9.3f\n",
	       "user schedule: ring allreduce, 1024 ranks", t1 - t0, c1 - c0, target,
	       (t1 - t0) / target, s->nround, s->nmsg, t2 - t1);
	int wrong = s->nround != 2046;
	if (wrong)
		printf("  the schedule has %d rounds, not 2046\n", s->nround);
	int missed = missed_target("user schedule: ring allreduce, 1024 ranks", "time", t1 - t0,
	                           target, "s");
	prog_free(&p);
	arena_free(&a);
	return bench_summary("bench_usersched", missed, wrong);
}
