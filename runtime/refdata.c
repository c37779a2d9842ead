/*
 * refdata.c: the reference data every runtime check uses (collc run of a
 * schedule or of an MSCCL file): deterministic inputs per rank, the
 * reduction operators, the expected reduced value, and a comparison that
 * names the first wrong element.
 */
#include <string.h>

#include "refdata.h"

size_t
rdtype_size(RDtype t)
{
	return t == RD_FLOAT || t == RD_INT32 ? 4 : 8;
}

const char *const rdtype_names[RD_NTYPES] = {"float", "double", "int32", "int64"};
const char *const rop_names[RO_NOPS] = {"sum", "prod", "max", "min"};

const char *
rdtype_name(RDtype t)
{
	return rdtype_names[t];
}

const char *
rop_name(ROp o)
{
	return rop_names[o];
}

/* Input values are small integers, so every reduction order gives the
 * exact same float; sums count contributions (a missing or doubled one
 * changes them), products use +-1 so they never overflow. */
static int64_t
val(int rank, int64_t e, ROp op)
{
	if (op == RO_PROD)
		return (rank + e) % 5 == 0 ? -1 : 1;
	if (op == RO_SUM)
		return 1 + (rank * 7 + e * 13) % 9;
	return (rank * 31 + e * 17) % 1000;
}

#define FOR_TYPES(X) X(RD_FLOAT, float) X(RD_DOUBLE, double) X(RD_INT32, int32_t) X(RD_INT64, int64_t)

void
rt_op_fill(void *buf, RDtype t, ROp op, int rank, int64_t first, int64_t n)
{
	switch (t) {
#define F(K, T)                                          \
	case K:                                              \
		for (int64_t i = 0; i < n; i++)                  \
			((T *)buf)[i] = (T)val(rank, first + i, op); \
		break;
		FOR_TYPES(F)
#undef F
	}
}


#define RED_LOOP(T)                                                                     \
	do {                                                                                \
		T *d = dst;                                                                     \
		const T *x = a, *y = b;                                                         \
		switch (op) {                                                                   \
		case RO_SUM:                                                                    \
			for (int64_t i = 0; i < n; i++)                                             \
				d[i] = (T)(x[i] + y[i]);                                                \
			break;                                                                      \
		case RO_PROD:                                                                   \
			for (int64_t i = 0; i < n; i++)                                             \
				d[i] = (T)(x[i] * y[i]);                                                \
			break;                                                                      \
		case RO_MAX:                                                                    \
			for (int64_t i = 0; i < n; i++)                                             \
				d[i] = x[i] > y[i] ? x[i] : y[i];                                       \
			break;                                                                      \
		case RO_MIN:                                                                    \
			for (int64_t i = 0; i < n; i++)                                             \
				d[i] = x[i] < y[i] ? x[i] : y[i];                                       \
			break;                                                                      \
		}                                                                               \
	} while (0)

void
rt_reduce(void *dst, const void *a, const void *b, int64_t n, RDtype t, ROp op)
{
	switch (t) {
	case RD_FLOAT: RED_LOOP(float); break;
	case RD_DOUBLE: RED_LOOP(double); break;
	case RD_INT32: RED_LOOP(int32_t); break;
	case RD_INT64: RED_LOOP(int64_t); break;
	}
}

void
rt_expect_reduced(void *out, RDtype t, ROp op, int nrank, int64_t e)
{
	int64_t acc = val(0, e, op);
	for (int r = 1; r < nrank; r++) {
		int64_t v = val(r, e, op);
		acc = op == RO_SUM ? acc + v : op == RO_PROD ? acc * v : op == RO_MAX ? (v > acc ? v : acc)
		                                                                     : (v < acc ? v : acc);
	}
	switch (t) {
#define F(K, T)              \
	case K:                  \
		*(T *)out = (T)acc;  \
		break;
		FOR_TYPES(F)
#undef F
	}
}

int
rt_compare(const void *got, const void *want, int64_t n, RDtype t, int64_t *bad)
{
	size_t es = rdtype_size(t);
	if (memcmp(got, want, (size_t)n * es) == 0)
		return 0;
	for (int64_t i = 0; i < n; i++)
		if (memcmp((const char *)got + i * es, (const char *)want + i * es, es) != 0) {
			*bad = i;
			return -1;
		}
	return 0;
}
