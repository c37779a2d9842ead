/*
 * tune_print.c: `collc tune`'s outputs: the per-size table with the plan,
 * CSV, JSON and the plot (docs/cli.md, tune). Needs a Tuner whose choice is
 * made (cmd_tune.c); with --msccl-dir, its files built, so the plan shows
 * the instances they hold. Establishes nothing: it prints.
 */
#include <stdlib.h>
#include <string.h>

#include "tune.h"
#include "msccl_program.h"
#include "svgplot.h"
#include "table.h"

static void
print_pick(const MscclPick *m, FILE *f)
{
	fprintf(f, "MSCCL %s%s, %d instance%s%s", mproto_name[m->proto],
	        m->proto_fixed ? " (--proto)" : "", m->instances, m->instances == 1 ? "" : "s",
	        m->instances_fixed                        ? " (--instances)"
	        : m->instances < m->model_instances ? " (fewer than the model's: limits)"
	                                            : "");
	if (m->nchannels > 0)
		fprintf(f, ", %d channel%s%s", m->nchannels, m->nchannels == 1 ? "" : "s",
		        m->channels_fixed ? " (--channels)" : "");
	if (m->split)
		fprintf(f, ", thread blocks that only send or only receive");
}

/* The candidate the plan runs at sample k: its MSCCL file's (the next
 * fastest that fits where the choice does not), else the choice. */
static int
plan_choice(const Tuned *t, int k)
{
	return t->built_choice[k] >= 0 ? t->built_choice[k] : t->best[k];
}

double
tune_busbw_at(const Tuned *t, const TuneArgs *a, int k)
{
	double time = t->cand[t->best[k]].time_s[k];
	return time > 0 ? a->sizes[k] / time / 1e9 * t->busbw_factor : 0;
}

static double
margin_at(const Tuned *t, int k)
{
	if (t->second[k] < 0)
		return -1;
	double b = tune_rank_time(t, t->best[k], k), s = tune_rank_time(t, t->second[k], k);
	return b > 0 ? (s - b) / b * 100 : 0;
}

/* the choice's busbw as a share of the bound (0 without one) */
static double
share_at(const Tuned *t, const TuneArgs *a, int k)
{
	return t->bound > 0 ? tune_busbw_at(t, a, k) / t->bound : 0;
}

/* busbw of a time at size k (0: none) */
double
tune_busbw_of(const Tuned *t, const TuneArgs *a, int k, double time)
{
	return time > 0 ? a->sizes[k] / time / 1e9 * t->busbw_factor : 0;
}

bool
tune_ring_baseline(const char *key)
{
	return strcmp(key, "ring") == 0 || strcmp(key, "nccl_ring") == 0;
}

/* The multi-channel ring's program at size k: its busbw, the faster of
 * ring's and nccl_ring's (a ring per channel, each on its own rail), or 0
 * (neither, or none fits). On a rails cluster ring's channels all cross
 * between boxes through one NIC; NCCL's rings are the baseline there. */
static double
ring_prog_busbw(const Tuned *t, const TuneArgs *a, int k)
{
	double best = 0;
	for (int i = 0; i < t->ncand; i++)
		if (tune_ring_baseline(t->cand[i].key) && t->cand[i].prog[k].time_s > 0) {
			double b = tune_busbw_of(t, a, k, t->cand[i].prog[k].time_s);
			best = b > best ? b : best;
		}
	return best;
}

/* A GPU cluster where NCCL's rings run (nccl_ring: rails, xgmi_rails,
 * leaf_spine_boxes): the table compares with NCCL's choice there. */
static bool
nccl_cluster(const Topo *t)
{
	return t->kind == TK_RAILS || t->kind == TK_XGMI_RAILS || t->kind == TK_LEAF_SPINE_BOXES;
}

/* NCCL's choice at size k on a GPU cluster: the fastest of the nccl_ring,
 * nccl_tree and (where switches reduce) nccl_nvls(_tree) candidates there (NCCL's
 * tuner runs its fastest algorithm per size, src/graph/tuning.cc); -1 off
 * such clusters or where none ran. */
static int
nccl_choice(const Tuned *t, int k)
{
	if (!nccl_cluster(t->s->topo))
		return -1;
	int b = -1;
	for (int i = 0; i < t->ncand; i++) {
		const Cand *c = &t->cand[i];
		if ((strcmp(c->key, "nccl_ring") == 0 || strcmp(c->key, "nccl_tree") == 0 ||
		     strcmp(c->key, "nccl_nvls") == 0 || strcmp(c->key, "nccl_nvls_tree") == 0) &&
		    c->time_s[k] > 0 && (b < 0 || c->time_s[k] < t->cand[b].time_s[k]))
			b = i;
	}
	return b;
}

/* The gain of the choice at size k over NCCL's choice n: n's time over the
 * choice's; 0 where there is none. */
static double
nccl_gain(const Tuned *t, int n, int k)
{
	double b = t->cand[t->best[k]].time_s[k];
	return n < 0 || b <= 0 ? 0 : t->cand[n].time_s[k] / b;
}

/* The table's two cells against NCCL's choice: which, and the gain (its
 * time / the choice's). */
static void
nccl_cells(Table *tab, const Tuned *t, int k)
{
	int n = nccl_choice(t, k);
	if (nccl_gain(t, n, k) <= 0) {
		table_cell(tab, "-");
		table_cell(tab, "-");
		return;
	}
	table_cell(tab, "%s", t->cand[n].key);
	table_cell(tab, "%.2fx", nccl_gain(t, n, k));
}

/* The per-size table; ranked by the program, its time and busbw, as a
 * share of the schedule's, and the ring's program busbw beside; on a
 * GPU cluster, NCCL's choice and the gain over it. */
static void
size_table(const Tuned *t, const TuneArgs *a, FILE *f)
{
	static const char *const head[] = {"size", "choice", "time(us)", "busbw", "bound",
	                                   "program(us)", "prog busbw", "of sched", "ring prog",
	                                   "runner-up", "margin", "NCCL's choice", "gain"};
	static const char *const head_s[] = {"size", "choice", "time(us)", "busbw", "bound",
	                                     "runner-up", "margin", "NCCL's choice", "gain"};
	bool rails = nccl_cluster(t->s->topo);
	int drop = rails ? 0 : 2; /* the NCCL columns, on GPU clusters only */
	Table tab;
	if (t->by_program)
		table_init(&tab, (int)countof(head) - drop, head, "rlrrrrrrrlrlr");
	else
		table_init(&tab, (int)countof(head_s) - drop, head_s, "rlrrrlrlr");
	for (int k = 0; k < a->nsize; k++) {
		const Cand *b = &t->cand[t->best[k]];
		table_cell(&tab, "%.0f", a->sizes[k]);
		table_cell(&tab, "%s", b->label[k]);
		table_cell(&tab, "%.2f", b->time_s[k] * 1e6);
		table_cell(&tab, "%.2f", tune_busbw_at(t, a, k));
		table_cell(&tab, "%.1f%%", share_at(t, a, k) * 100);
		if (t->by_program) {
			double pb = tune_busbw_of(t, a, k, b->prog[k].time_s), rb = ring_prog_busbw(t, a, k);
			table_cell(&tab, "%.2f", b->prog[k].time_s * 1e6);
			table_cell(&tab, "%.2f", pb);
			table_cell(&tab, "%.1f%%", tune_busbw_at(t, a, k) > 0 ? pb / tune_busbw_at(t, a, k) * 100 : 0);
			if (rb > 0)
				table_cell(&tab, "%.2f", rb);
			else
				table_cell(&tab, "-");
		}
		if (t->second[k] >= 0) {
			table_cell(&tab, "%s", t->cand[t->second[k]].label[k]);
			table_cell(&tab, "+%.1f%%", margin_at(t, k));
		} else {
			table_cell(&tab, "-");
			table_cell(&tab, "-");
		}
		if (rails)
			nccl_cells(&tab, t, k);
	}
	table_print(&tab, f);
	table_free(&tab);
}

void
tune_print_table(const Tuner *u, FILE *f)
{
	const TuneArgs *a = u->a;
	for (int i = 0; i < u->nt; i++) {
		const Tuned *t = &u->t[i];
		char desc[128];
		topo_describe(t->s->topo, desc, sizeof desc);
		fprintf(f, "%s%s: %s on %d ranks of %s, %d candidates; busbw bound %.2f GB/s\n",
		        i ? "\n" : "", t->s->name, coll_kind_name[t->s->kind], t->s->nrank, desc,
		        t->ncand, t->bound);
		size_table(t, a, f);
		fprintf(f, "plan:\n");
		double plan_lo = 0, plan_hi = 0;
		for (int k = 0; k < a->nsize;) {
			int j = tune_range_end(a, t, k, true);
			double lo, hi;
			tune_range_of(a, k, j, &lo, &hi);
			plan_lo = k == 0 ? lo : plan_lo;
			plan_hi = hi;
			char l[32], h[32];
			human_bytes(lo, l, sizeof l);
			human_bytes(j + 1 < a->nsize ? hi + 1 : hi, h, sizeof h);
			char span[80];
			snprintf(span, sizeof span, "%s to %s%s", l, j + 1 < a->nsize ? "under " : "", h);
			fprintf(f, "  %12.0f .. %-12.0f %-28s %s", lo, hi, span,
			        t->cand[plan_choice(t, k)].label[k]);
			const Sched *run = t->cand[plan_choice(t, k)].sched[k];
			if (run && run->nfuse) { /* the executor has no operation for it */
				fputs("  [in the network: no MSCCL file]", f);
			} else if (tune_msccl_kind(t->s->kind)) {
				MscclPick m = tune_msccl_pick(a, t, k);
				fputs("  [", f);
				print_pick(&m, f);
				fputs("]", f);
			}
			fputs("\n", f);
			k = j + 1;
		}
		MemOut gm; /* on a GPU cluster, which box and GPU each rank is */
		bool cluster = sched_gpu_map(t->s, memout_open(&gm));
		memout_close(&gm);
		if (cluster)
			fprintf(f, "  ranks: %.*s\n", (int)gm.len, gm.buf);
		free(gm.buf);
		if (tune_msccl_kind(t->s->kind)) {
			char l[32], h[32];
			human_bytes(plan_lo, l, sizeof l);
			human_bytes(plan_hi, h, sizeof h);
			fprintf(f, "  outside the plan (MSCCL): below %s, above %s, and at a size that does "
			        "not cut into its\n  range's file's chunks in whole elements, NCCL's own "
			        "algorithm runs\n", l, h);
		}
	}
	for (int i = 0; i < u->nt; i++)
		if (nccl_cluster(u->t[i].s->topo)) {
			fprintf(f, "NCCL's choice (GPU clusters): the %s at the size; gain:\nits time / the "
			           "choice's\n", topo_any_reduces(u->t[i].s->topo)
			                              ? "fastest of nccl_ring, nccl_tree, nccl_nvls and nccl_nvls_tree"
			                              : "faster of nccl_ring and nccl_tree");
			break;
		}
	fprintf(f, "size in bytes; time of the choice; busbw in GB/s as nccl-tests computes it;\n"
	           "bound: busbw as a share of the most any schedule can reach (collc sim's bound);\n"
	           "margin: how much slower the runner-up is; [MSCCL ...]: the protocol and\n"
	           "instances of the range's MSCCL file (--msccl-dir; docs/cli.md, tune)\n");
	if (u->progs)
		fprintf(f, "ranked by the program (--msccl-dir): program(us) and prog busbw, the choice's\n"
		           "MSCCL program in the executor model; of sched: its busbw over the schedule's;\n"
		           "ring prog: the multi-channel ring's fastest program (busbw; ring's or\n"
		           "nccl_ring's, the faster)\n");
}

void
tune_print_csv(const Tuner *u, FILE *f)
{
	const TuneArgs *a = u->a;
	fprintf(f, "collective,kind,size,choice,time_us,busbw_GBps,runner_up,margin_pct,"
	           "range_min_bytes,range_max_bytes,msccl_proto,msccl_instances,bound_busbw_GBps,"
	           "bound_ratio%s,nccl_choice,nccl_gain\n",
	        u->progs ? ",program_time_us,program_busbw_GBps,msccl_channels,reference_time_us,"
	                   "ring_program_busbw_GBps" : "");
	for (int i = 0; i < u->nt; i++) {
		const Tuned *t = &u->t[i];
		for (int k = 0; k < a->nsize;) {
			int j = tune_range_end(a, t, k, true);
			double lo, hi;
			tune_range_of(a, k, j, &lo, &hi);
			MscclPick pk = tune_msccl_pick(a, t, k);
			bool ms = tune_msccl_kind(t->s->kind);
			for (int m = k; m <= j; m++) {
				const Cand *b = &t->cand[t->best[m]];
				fprintf(f, "%s,%s,%.0f,%s,%.12g,%.12g,%s,%.6g,%.0f,%.0f,", t->s->name,
				        coll_kind_name[t->s->kind], a->sizes[m], b->label[m],
				        b->time_s[m] * 1e6, tune_busbw_at(t, a, m),
				        t->second[m] >= 0 ? t->cand[t->second[m]].label[m] : "",
				        t->second[m] >= 0 ? margin_at(t, m) : 0, lo, hi);
				if (ms)
					fprintf(f, "%s,%d,", mproto_name[pk.proto], pk.instances);
				else
					fputs(",,", f);
				fprintf(f, "%.12g,%.12g", t->bound, share_at(t, a, m));
				if (t->by_program)
					fprintf(f, ",%.12g,%.12g,%d,%.12g,%.12g", b->prog[m].time_s * 1e6,
					        tune_busbw_of(t, a, m, b->prog[m].time_s), pk.nchannels,
					        tune_ref_time(a, t, m) * 1e6, ring_prog_busbw(t, a, m));
				else if (u->progs) /* a kind MSCCL does not run */
					fputs(",,,,,", f);
				int n = nccl_choice(t, m); /* empty off GPU clusters */
				if (nccl_gain(t, n, m) > 0)
					fprintf(f, ",%s,%.6g\n", t->cand[n].key, nccl_gain(t, n, m));
				else
					fputs(",,\n", f);
			}
			k = j + 1;
		}
	}
}

void
tune_print_json(const Tuner *u, FILE *f)
{
	const TuneArgs *a = u->a;
	fprintf(f, "{\"collectives\": [");
	for (int i = 0; i < u->nt; i++) {
		const Tuned *t = &u->t[i];
		fprintf(f, "%s\n {\"name\": ", i ? "," : "");
		json_string(f, t->s->name);
		fprintf(f, ", \"kind\": \"%s\", \"ranks\": %d, \"bound_busbw_GBps\": %.12g,\n  \"sizes\": [",
		        coll_kind_name[t->s->kind], t->s->nrank, t->bound);
		for (int k = 0; k < a->nsize; k++) {
			const Cand *b = &t->cand[t->best[k]];
			fprintf(f, "%s\n   {\"size\": %.0f, \"choice\": ", k ? "," : "", a->sizes[k]);
			json_string(f, b->label[k]);
			fprintf(f, ", \"time_us\": %.12g, \"busbw_GBps\": %.12g, \"bound_ratio\": %.12g, ",
			        b->time_s[k] * 1e6, tune_busbw_at(t, a, k), share_at(t, a, k));
			if (t->by_program)
				fprintf(f, "\"program_time_us\": %.12g, \"program_busbw_GBps\": %.12g, ",
				        b->prog[k].time_s * 1e6, tune_busbw_of(t, a, k, b->prog[k].time_s));
			int n = nccl_choice(t, k); /* GPU clusters only */
			if (nccl_gain(t, n, k) > 0)
				fprintf(f, "\"nccl_choice\": \"%s\", \"nccl_gain\": %.6g, ", t->cand[n].key,
				        nccl_gain(t, n, k));
			fprintf(f, "\"candidates\": {");
			for (int c = 0, first = 1; c < t->ncand; c++) {
				if (t->cand[c].time_s[k] < 0)
					continue;
				fprintf(f, "%s", first ? "" : ", ");
				json_string(f, t->cand[c].label[k]);
				fprintf(f, ": %.12g", t->cand[c].time_s[k] * 1e6);
				first = 0;
			}
			fprintf(f, "}}");
		}
		fprintf(f, "],\n  \"plan\": [");
		for (int k = 0, n = 0; k < a->nsize; n++) {
			int j = tune_range_end(a, t, k, true);
			double lo, hi;
			tune_range_of(a, k, j, &lo, &hi);
			fprintf(f, "%s\n   {\"min_bytes\": %.0f, \"max_bytes\": %.0f, \"choice\": ",
			        n ? "," : "", lo, hi);
			json_string(f, t->cand[plan_choice(t, k)].label[k]);
			if (tune_msccl_kind(t->s->kind)) {
				MscclPick m = tune_msccl_pick(a, t, k);
				fprintf(f, ", \"msccl\": {\"proto\": \"%s\", \"instances\": %d, "
				        "\"proto_fixed\": %s, \"instances_fixed\": %s", mproto_name[m.proto],
				        m.instances, m.proto_fixed ? "true" : "false",
				        m.instances_fixed ? "true" : "false");
				if (m.nchannels > 0)
					fprintf(f, ", \"channels\": %d", m.nchannels);
				fputs("}", f);
			}
			fprintf(f, "}");
			k = j + 1;
		}
		fprintf(f, "]}");
	}
	fprintf(f, "\n]}\n");
}

/* Every candidate's busbw by size, and the chosen envelope. */
int
tune_plot(Diag *dg, const Tuner *u)
{
	const TuneArgs *a = u->a;
	if (u->nt != 1) {
		error_file(dg, "tune: --plot draws one collective; choose it with --collective");
		return 1;
	}
	const Tuned *t = &u->t[0];
	PlotSeries *s = xcalloc((size_t)t->ncand + 1, sizeof *s);
	double *y = xmalloc(((size_t)t->ncand + 1) * (size_t)a->nsize * sizeof *y);
	for (int c = 0; c <= t->ncand; c++) {
		s[c].y = y + (size_t)c * (size_t)a->nsize;
		s[c].name = c < t->ncand ? t->cand[c].key : "chosen";
		for (int k = 0; k < a->nsize; k++) {
			double time = c < t->ncand ? t->cand[c].time_s[k] : t->cand[t->best[k]].time_s[k];
			y[(size_t)c * (size_t)a->nsize + (size_t)k] =
			    time > 0 ? a->sizes[k] / time / 1e9 * t->busbw_factor : -1;
		}
	}
	char desc[128], title[256];
	topo_describe(t->s->topo, desc, sizeof desc);
	snprintf(title, sizeof title, "tune %s (%s, %d ranks of %s): busbw (GB/s) by size",
	         t->s->name, coll_kind_name[t->s->kind], t->s->nrank, desc);
	MemOut m;
	svg_busbw(memout_open(&m), title, a->sizes, a->nsize, s, t->ncand + 1, 0);
	free(s), free(y);
	return write_output(a->plot, &m);
}
