/*
 * exec.h: runs an IR schedule round by round on real data (exec.c; collc
 * run FILE.coll) and checks every promised chunk against the reference
 * data of refdata.h.
 */
#ifndef COLLC_EXEC_H
#define COLLC_EXEC_H

#include "ir.h"
#include "refdata.h"

typedef struct ExecOpts {
	int64_t bytes;  /* the whole vector */
	RDtype dtype;
	ROp op;
} ExecOpts;

/* -1 after reporting a wrong result. */
int exec_sched(Diag *, const Sched *, const ExecOpts *, double *seconds);

#endif
