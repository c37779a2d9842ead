/* backend.c: the table of backends behind --target. */
#include <string.h>

#include "backend.h"

static const Backend *const backends[] = {&dot_backend, &ir_backend, &mpi_backend,
                                             &sim_backend, &msccl_backend};

const Backend *
backend_find(const char *name)
{
	for (size_t i = 0; i < countof(backends); i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}

const char *
backend_names(void)
{
	return "dot, ir, mpi, sim, msccl";
}

int
backend_select(const Prog *p, const BuildOpts *o, const Sched **out, int max)
{
	int n = 0;
	for (int i = 0; i < p->nsched && n < max; i++)
		if (!o->collective || strcmp(p->sched[i]->name, o->collective) == 0)
			out[n++] = p->sched[i];
	return n;
}
