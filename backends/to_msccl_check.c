/*
 * to_msccl_check.c: whether a built program fits the executor. Needs an
 * MProg (or, for nodes_over, the planned thread blocks). Establishes the
 * verdict of the executor's parser limit (elements a rank) and of every
 * rule files are read back with (runtime/msccl_check.c): static rules, the
 * flow with bounded FIFOs (chunk by chunk too, rule 14), values and races
 * in every mode; cheapest first, and on a failure the report with the XML
 * collc would write as its source. Nothing is written that fails here.
 */
#include <stdlib.h>
#include <string.h>

#include "to_msccl.h"

/* Whether a rank's elements, as the executor's parser stores them (<algo>,
 * every <gpu>, the rank's <tb>s and <step>s), are over its limit; the
 * worst rank is named in b->why. Needs plan_rank. */
bool
nodes_over(const RankB *rb, int R, Built *b)
{
	long worst = 0;
	for (int r = 0; r < R; r++) {
		long nodes = 1 + R + rb[r].ntb, steps = 0;
		for (int t = 0; t < rb[r].ntb; t++)
			steps += rb[r].tb[t].nstep;
		nodes += steps;
		if (nodes > MSCCL_MAX_NODES && nodes > worst) {
			worst = nodes;
			snprintf(b->why, sizeof b->why, "rank %d has %ld elements (<algo>, %d <gpu>, %d "
			         "<tb> and %ld <step>); the executor's parser stores at most %d per rank "
			         "(rule 7)", r, nodes, R, rb[r].ntb, steps, MSCCL_MAX_NODES);
		}
	}
	b->excess = (double)worst / MSCCL_MAX_NODES;
	return worst > 0;
}

static int
check_rules(Diag *dg, const MProg *p, bool pieces)
{
	int cap = msccl_capacity(p->proto);
	return msccl_check(dg, p) != 0 || msccl_check_run(dg, p, cap, false) != 0 ||
	       (pieces && msccl_check_run(dg, p, cap, true) != 0) ? -1 : 0;
}

int
msccl_check_built(Diag *dg, const MProg *p, const Sched *sched, bool pieces, bool report)
{
	diag_mute(dg, true);
	int rc = check_rules(dg, p, pieces);
	diag_mute(dg, false);
	if (rc == 0 || !report)
		return rc;
	/* again, with the XML as the diagnostics' source */
	char name[200];
	MemOut xml;
	write_xml(p, memout_open(&xml));
	memout_close(&xml);
	snprintf(name, sizeof name, "<MSCCL XML for '%s'>", sched->name);
	/* a second Diag for the XML: the run's state (stream, count, limit)
	 * with the XML as its source; what it counted is the run's */
	Diag xd = *dg;
	diag_source(&xd, name, xml.buf, xml.len);
	check_rules(&xd, p, pieces);
	dg->errors = xd.errors;
	dg->muted = xd.muted;
	dg->announced = xd.announced;
	note_at(dg, sched->loc, "in the MSCCL program built for '%s' over %d channel%s: the errors "
	        "above cite the XML collc would write", sched->name, p->nchannels,
	        p->nchannels == 1 ? "" : "s");
	free(xml.buf);
	return rc;
}

/* The runs with values and races (rules 15, 17) in every mode, which
 * include the flow with whole messages: what check_width has not already
 * passed. On a failure with report, every rule again, for its report. */
static int
check_values(Diag *dg, const MProg *p, const Sched *sched, bool pieces, bool report)
{
	diag_mute(dg, true);
	int rc = msccl_check_run(dg, p, msccl_capacity(p->proto), false) != 0 ? -1 : 0;
	diag_mute(dg, false);
	return rc == 0 || !report ? rc : msccl_check_built(dg, p, sched, pieces, true);
}

/* The checks of a width that builds, each run once, cheapest first: the
 * static rules, then the flow alone chunk by chunk (rule 14, no values)
 * decide most failures; the runs with values and races (rules 15, 17) are
 * made only on a program that passes them, and include the flow with whole
 * messages. That flow is run alone only in the first search on a program
 * that stops chunk by chunk: passing it, the program is discarded for the
 * second search. A failure at the last width is checked again in full,
 * for its report. 0 passes, -1 fails, 1 (without pieces) passes with a
 * message per step but stops chunk by chunk. */
int
check_width(Diag *dg, const MProg *p, const Sched *sched, bool pieces, bool last)
{
	int cap = msccl_capacity(p->proto);
	diag_mute(dg, true);
	bool rules = msccl_check(dg, p) == 0;
	bool chunkwise = rules && msccl_check_flow(dg, p, cap, true) == 0;
	bool flows = chunkwise || (rules && !pieces && msccl_check_flow(dg, p, cap, false) == 0);
	diag_mute(dg, false);
	if (flows && !chunkwise)
		return 1;
	if (!flows && !last)
		return -1;
	if (!flows)
		return msccl_check_built(dg, p, sched, pieces, true);
	return check_values(dg, p, sched, pieces, last);
}
