/* backend.c: the table of backends behind --target. */
#include <string.h>

#include "mpi_lib.h"

/* The targets of --target, in the order the help lists them: each a
 * backend writing a stream or one writing a directory. */
static const struct {
	const Backend *stream;
	const DirBackend *dir;
} targets[] = {
	{&ir_backend, NULL},    {&dot_backend, NULL}, {&mpi_backend, NULL},   {NULL, &mpi_lib_backend},
	{&msccl_backend, NULL}, {&sim_backend, NULL}, {NULL, &chakra_backend},
};

static const char *
target_name(size_t i)
{
	return targets[i].stream ? targets[i].stream->name : targets[i].dir->name;
}

const Backend *
backend_find(const char *name)
{
	for (size_t i = 0; i < countof(targets); i++)
		if (targets[i].stream && strcmp(target_name(i), name) == 0)
			return targets[i].stream;
	return NULL;
}

const DirBackend *
backend_find_dir(const char *name)
{
	for (size_t i = 0; i < countof(targets); i++)
		if (targets[i].dir && strcmp(target_name(i), name) == 0)
			return targets[i].dir;
	return NULL;
}

int
backend_target_names(const char **names, int max)
{
	int n = 0;
	for (size_t i = 0; i < countof(targets) && n < max; i++)
		names[n++] = target_name(i);
	return n;
}

void
backend_names(char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (size_t i = 0; i < countof(targets) && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", target_name(i));
}

void
backend_print_targets(FILE *f)
{
	fprintf(f, "targets:\n");
	for (size_t i = 0; i < countof(targets); i++)
		fprintf(f, "  %-7s %s\n", target_name(i),
		        targets[i].stream ? targets[i].stream->summary : targets[i].dir->summary);
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

int
backend_refuse_in_network(Diag *dg, const Sched *s, const char *target)
{
	if (!s->nfuse)
		return 0;
	char sw[48];
	topo_node_name(s->topo, s->fuse[0].node, sw, sizeof sw);
	error_at(dg, s->loc, "'%s' reduces in the network (%s: %d in-network operations, the first at "
	         "switch %s); %s has no operation for a switch that reduces or multicasts (NVLS, "
	         "SHARP): simulate it (collc sim) or write the IR text", s->name, s->algorithm,
	         s->nfuse, sw, target);
	return -1;
}
