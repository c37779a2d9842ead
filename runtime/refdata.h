/*
 * refdata.h: reference data for runtime checks (refdata.c): element types,
 * reduction operators, inputs that make every reduction order exact, and
 * the expected results.
 */
#ifndef COLLC_REFDATA_H
#define COLLC_REFDATA_H

#include <stddef.h>
#include <stdint.h>

typedef enum RDtype { RD_FLOAT, RD_DOUBLE, RD_INT32, RD_INT64 } RDtype;
typedef enum ROp { RO_SUM, RO_PROD, RO_MAX, RO_MIN } ROp;
enum { RD_NTYPES = RD_INT64 + 1, RO_NOPS = RO_MIN + 1 };

/* The one table of names, indexed by the enums ("float", "sum", ...). */
extern const char *const rdtype_names[RD_NTYPES];
extern const char *const rop_names[RO_NOPS];

size_t rdtype_size(RDtype);
const char *rdtype_name(RDtype);
const char *rop_name(ROp);

/* Elements first.. of rank's input (small integers, so every reduction
 * order is exact; +-1 for prod), and the reduction dst = a op b. */
void rt_op_fill(void *buf, RDtype, ROp, int rank, int64_t first, int64_t n);
void rt_reduce(void *dst, const void *a, const void *b, int64_t n, RDtype, ROp);
/* The expected value of element e (global index) after reducing over
 * nrank ranks: written into out (one element). */
void rt_expect_reduced(void *out, RDtype, ROp, int nrank, int64_t e);
/* 0 when equal; else -1 with *bad the first differing element. */
int rt_compare(const void *got, const void *want, int64_t n, RDtype, int64_t *bad);

#endif
