/*
 * to_msccl.c: a schedule -> an MSCCL program -> XML for the MSCCL executor
 * (docs/msccl.md); the driver of the lowering's passes (to_msccl.h lists
 * their files). Needs a verified schedule. Establishes a program checked by
 * every rule the executor's files are read back with (runtime/msccl_check.c),
 * including a run with bounded FIFOs that proves it deadlock-free and
 * correct in every mode, before a byte is written; or an error at the
 * collective and no file.
 *
 * Chunks lie where the shared layout puts them (ir/layout.c: those
 * travelling together are neighbours); every message becomes a send on
 * the sender and a receive on the receiver, one step per run of chunks
 * contiguous on both sides (to_msccl_ops.c). Thread blocks pair a send peer
 * with a receive peer per channel (to_msccl_tbs.c). A width that fails is
 * retried wider or with each connection pinned (to_msccl_search.c); which
 * search comes first, and which widths are not worth building, the bound
 * of to_msccl_bound.c estimates, so that one program is normally built and
 * checked. Here: what is refused before any of that (a name or rank count
 * the executor cannot hold, a schedule the bound proves can never fit),
 * and the file: the XML (to_msccl_xml.c), with a comment where the
 * executor cannot be told (a root, a rewired fabric), and the note of what
 * was chosen.
 */
#include <stdlib.h>
#include <string.h>

#include "to_msccl.h"

int
msccl_lower_counted(Diag *dg, Arena *a, const Sched *sched, const BuildOpts *o, MProg *out,
                    MscclStats *stats)
{
	MscclStats none;
	stats = stats ? stats : &none;
	memset(stats, 0, sizeof *stats);
	if (backend_refuse_in_network(dg, sched, "the MSCCL executor") != 0)
		return -1;
	if (strlen(sched->name) > MSCCL_MAX_VALUE) {
		error_at(dg, sched->loc, "'%.20s...' cannot be written for MSCCL: its name is %zu bytes, "
		         "and the executor's parser holds attribute values of at most %d bytes (a "
		         "longer name overflows its buffer)", sched->name, strlen(sched->name),
		         MSCCL_MAX_VALUE);
		return -1;
	}
	if (sched->nrank > MSCCL_MAX_GPUS) {
		error_at(dg, sched->loc, "'%s' has %d ranks: MSCCL programs here have at most %d "
		         "(ngpus; the symbolic check's limit)", sched->name, sched->nrank, MSCCL_MAX_GPUS);
		return -1;
	}
	/* a symmetric schedule in rank form (recursive doubling and halving on
	 * 2^L ranks, as tune and sim build it: base transfers and no group) is
	 * lowered from its messages; the layout and the bound read a group's
	 * copies */
	if (sched->base && !sched->group)
		sched = sched_expand(dg, a, sched);
	/* packing's repeated form (collc sim and tune on large clusters) listed */
	if (!(sched = sched_listed(dg, a, sched)))
		return -1;
	Layout lay;
	layout_build(a, sched, &lay);
	/* before expanding or building any width: what can never fit is refused
	 * in a pass over the messages (to_msccl_bound.c) */
	MscclBound bound;
	msccl_bound_build(sched, &lay, &bound);
	int rc = msccl_refuse_unfit(dg, sched, &bound, o) != 0 ? -1
	         : lower_checked(dg, a, sched, &lay, &bound, o, out, stats);
	msccl_bound_free(&bound);
	/* the executor selects a file for a size of whole elements per chunk
	 * (rule 16): a range holding no multiple of nchunksperloop bytes (the
	 * smallest element, a byte) is a file no call can select */
	if (rc == 0 && msccl_nearest_size(out, out->min_bytes, 1) < 0) {
		error_at(dg, sched->loc, "'%s' for MSCCL: the executor would never select the file: no "
		         "size from --min-bytes %lld to --max-bytes %lld is a positive multiple of %d "
		         "bytes (nchunksperloop=%d, whole bytes per chunk); widen the range",
		         sched->name, (long long)o->min_bytes, (long long)o->max_bytes,
		         out->nchunksperloop, out->nchunksperloop);
		rc = -1;
	}
	return rc;
}

int
msccl_lower(Diag *dg, Arena *a, const Sched *sched, const BuildOpts *o, MProg *out)
{
	return msccl_lower_counted(dg, a, sched, o, out, NULL);
}

/* The executor reads no root: a broadcast or reduce file is for the root
 * it was built for, and says so. */
static void
root_comment(const Sched *s, FILE *f)
{
	fprintf(f, "  <!-- %s: a %s with root %d. The executor passes no root to the program: call "
	        "it with root=%d only. -->\n", s->name, coll_kind_name[s->kind], s->root, s->root);
}

/* MSCCL cannot rewire a fabric: the file is the schedule as it runs on the
 * circuits of each round, and says where the switch is rewired. */
static void
reconfig_comment(const Sched *s, FILE *f)
{
	fprintf(f, "  <!-- %s on an optical ring: the circuit switch is rewired before round", s->name);
	for (int i = 0, k = 0; i < s->nphase; i++)
		if (s->phase[i].reconfig)
			fprintf(f, "%s %d", k++ ? "," : "", s->phase[i].round + 1);
	fprintf(f, " of %d (%d reconfigurations); every rank waits there. MSCCL cannot rewire a "
	           "fabric: this is the schedule as it runs on the circuits of each round. -->\n",
	        s->nround, sched_nreconfig(s));
}

/* What the backend chose, on o->notes: channels, instances and protocol,
 * each given by an option or chosen (the width search), and the shape. */
static void
say_choice(const Sched *s, const MProg *p, const BuildOpts *o, bool staged)
{
	int inst = o->instances > 0 ? o->instances : 1, tbs = 0, steps = 0;
	for (int g = 0; g < p->ngpus; g++) {
		int n = 0;
		for (int t = 0; t < p->gpu[g].ntb; t++)
			n += p->gpu[g].tb[t].nstep;
		tbs = p->gpu[g].ntb > tbs ? p->gpu[g].ntb : tbs;
		steps = n > steps ? n : steps;
	}
	const char *prog = "the fastest program";
	fprintf(o->notes, "collc: build: note: '%s' for MSCCL: %d channel%s (%d per instance, %s), "
	        "%d instance%s (%s), protocol %s (%s)%s%s; at most %d thread block%s and %d step%s a "
	        "rank\n", s->name, p->nchannels, p->nchannels == 1 ? "" : "s", p->nchannels / inst,
	        o->by_program ? prog : o->channels > 0 ? "--channels" : "the fewest that fit", inst,
	        inst == 1 ? "" : "s", o->by_program ? prog : o->instances > 0 ? "--instances" : "default",
	        mproto_name[p->proto], o->by_program ? prog : o->proto ? "--proto" : "default",
	        o->split_tbs ? ", thread blocks that only send or only receive" : "",
	        staged ? ", staged through scratch" : "", tbs, tbs == 1 ? "" : "s", steps,
	        steps == 1 ? "" : "s");
}

static int
emit_msccl(Diag *dg, const Prog *prog, const BuildOpts *o, FILE *f)
{
	const Sched *sel[2];
	int n = backend_select(prog, o, sel, 2);
	if (n == 0) {
		error_file(dg, "no schedule to write: the file builds none");
		return -1;
	}
	if (n > 1 && !o->collective) {
		/* one algorithm per file: the executor loads each file as one */
		n = 1;
	}
	Arena a = {0};
	MProg p;
	MscclStats st;
	const Sched *used;
	int rc = msccl_lower_fit(dg, &a, sel[0], o, NULL, &p, &st, &used);
	if (rc == 0)
		rc = msccl_write(dg, used, &p, o, st.staged, f);
	arena_free(&a);
	return rc;
}

int
msccl_lower_fit(Diag *dg, Arena *a, const Sched *s, const BuildOpts *o, MscclFitCache *fc, MProg *p,
                MscclStats *st, const Sched **used)
{
	*used = s;
	bool packing = strstr(s->algorithm, "packing") != NULL, symm = msccl_symmetric_refits(s);
	/* a chunk count no power of two divides: its file would run at no
	 * power-of-two size, so the units become a power of two first */
	bool uncut = msccl_packing_uncut(s);
	if (packing || symm)
		diag_mute(dg, true); /* a refusal is reported below if no fit is found */
	int rc = uncut ? -1 : msccl_lower_counted(dg, a, s, o, p, st);
	if (packing || symm)
		diag_mute(dg, false);
	if ((packing || symm) && rc != 0) {
		const Sched *t;
		if (symm ? msccl_fit_symmetric(dg, a, s, o, &t, p, st) == 0
		         : msccl_fit_packing(dg, a, s, o, fc, &t, p, st) == 0) {
			if (o->notes && uncut)
				fprintf(o->notes, "collc: build: note: '%s' for MSCCL: %s %s cut the vector into %d "
				        "chunks, which no power-of-two size divides; %s do (to_msccl_fit.c)\n",
				        s->name, s->algorithm, s->choice, s->nchunk, t->choice);
			else if (o->notes)
				fprintf(o->notes, "collc: build: note: '%s' for MSCCL: %s %s fit none of its "
				        "programs in the executor's limits; %s do (%s)\n", s->name,
				        s->algorithm, s->choice, t->choice,
				        symm ? "to_msccl_symfit.c" : "to_msccl_fit.c");
			*used = t;
			return 0;
		}
		rc = msccl_lower_counted(dg, a, s, o, p, st); /* reports why */
	}
	return rc;
}

int
msccl_write(Diag *dg, const Sched *s, const MProg *p, const BuildOpts *o, bool staged, FILE *f)
{
	(void)dg; /* the program passed every check: only the stream can fail, later */
	if (o->notes)
		say_choice(s, p, o, staged);
	bool rooted = s->kind == CK_BROADCAST || s->kind == CK_REDUCE;
	/* on a GPU cluster, which box and GPU each rank is (docs/msccl.md, "Ranks
	 * and GPUs"), for a launcher to agree */
	MemOut gm;
	bool cluster = sched_gpu_map(s, memout_open(&gm));
	memout_close(&gm);
	int rc = 0;
	if (sched_nreconfig(s) > 0 || rooted || cluster) {
		/* the comment goes first inside <algo>, which stays the file's start */
		MemOut m;
		rc = write_xml(p, memout_open(&m));
		memout_close(&m);
		const char *xml = m.buf, *nl = rc == 0 ? memchr(xml, '\n', m.len) : NULL;
		if (nl) {
			fwrite(xml, 1, (size_t)(nl + 1 - xml), f);
			if (cluster)
				fprintf(f, "  <!-- %.*s -->\n", (int)gm.len, gm.buf);
			if (rooted)
				root_comment(s, f);
			if (sched_nreconfig(s) > 0)
				reconfig_comment(s, f);
			fwrite(nl + 1, 1, m.len - (size_t)(nl + 1 - xml), f);
		}
		free(m.buf);
	} else {
		rc = write_xml(p, f);
	}
	free(gm.buf);
	return rc;
}

const Backend msccl_backend = {"msccl", "MSCCL XML for the executor (docs/msccl.md)", ".xml",
                               emit_msccl};
