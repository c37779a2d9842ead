/* backend.c: the table of backends behind --target. */
#include <string.h>

#include "mpi_lib.h"

static const Backend *const backends[] = {&dot_backend, &ir_backend, &mpi_backend,
                                             &sim_backend, &msccl_backend};
static const DirBackend *const dir_backends[] = {&chakra_backend, &mpi_lib_backend};
static const char *const names[] = {"dot", "ir", "mpi", "sim", "msccl", "chakra", "mpi-lib"};

const Backend *
backend_find(const char *name)
{
	for (size_t i = 0; i < countof(backends); i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}

const DirBackend *
backend_find_dir(const char *name)
{
	for (size_t i = 0; i < countof(dir_backends); i++)
		if (strcmp(dir_backends[i]->name, name) == 0)
			return dir_backends[i];
	return NULL;
}

const char *
backend_names(void)
{
	return "dot, ir, mpi, sim, msccl, chakra, mpi-lib";
}

const char *const *
backend_name_list(int *n)
{
	*n = (int)countof(names);
	return names;
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
