/*
 * test_cli_nccl.c: NCCL's choice as the comparison on a rails cluster (the
 * cli suite, whose table is in test_cli.c): `collc sim --compare` with
 * nccl_ring and nccl_tree both listed, and `collc tune`'s table, compare
 * with the faster of the two at each size (docs/gpu-clusters.md). The 2 x 8
 * example at 2 sizes in flow mode (about a second).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_cli.h"
#include "tests.h"

static const char *const sizes[2] = {"1048576", "1073741824"};

/* The time_us (CSV field 7) of collective NAME at SIZE in sim's CSV. */
static double
csv_time(const char *csv, const char *name, const char *size)
{
	size_t n = strlen(name);
	for (const char *l = csv; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (strncmp(l, name, n) != 0 || l[n] != ',')
			continue;
		const char *f[8];
		const char *p = l;
		int k = 0;
		for (; k < 8 && p; k++, p = strchr(p, ','), p = p ? p + 1 : NULL)
			f[k] = p;
		if (k == 8 && strncmp(f[3], size, strlen(size)) == 0 && f[3][strlen(size)] == ',')
			return atof(f[7]);
	}
	return -1;
}

/* The whitespace-separated tokens of one line (up to 64). */
static int
tokens(const char *line, char tok[][96], int max)
{
	int n = 0;
	for (const char *p = line; *p && *p != '\n' && n < max;) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			break;
		size_t len = strcspn(p, " \n");
		snprintf(tok[n++], 96, "%.*s", (int)(len < 95 ? len : 95), p);
		p += len;
	}
	return n;
}

/* sim --compare AR_nccl_ring,AR_nccl_tree: AR's baseline at each size is
 * the faster of the two there, and the speedup its time over AR's. */
static void
sim_against_nccl(const char *csv)
{
	char *out, *err;
	CU_ASSERT_EQUAL(cli_collc("sim examples/gpu-cluster-2x8.coll --sizes 1MiB,1GiB --mode flow "
	                          "--compare AR_nccl_ring,AR_nccl_tree", &out, &err), 0);
	const char *table = out ? strstr(out, "\ncollective  baseline") : NULL;
	CU_ASSERT_PTR_NOT_NULL_FATAL(table);
	int rows = 0;
	for (const char *l = strchr(table + 1, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
		char name[32], base[32], size[32];
		double speedup;
		if (sscanf(l + 1, "%31s %31s %31s %lfx", name, base, size, &speedup) != 4)
			break;
		rows++;
		double ring = csv_time(csv, "AR_nccl_ring", size), tree = csv_time(csv, "AR_nccl_tree", size);
		double t = csv_time(csv, name, size), b = ring < tree ? ring : tree;
		CU_ASSERT_STRING_EQUAL(name, "AR");
		assert_named(strcmp(base, ring < tree ? "AR_nccl_ring" : "AR_nccl_tree") == 0 &&
		             t > 0 && fabs(speedup - b / t) < 2e-3, __LINE__, __FILE__,
		             "%s: baseline %s %.3fx; nccl_ring %.2f, nccl_tree %.2f, AR %.2f us", size, base,
		             speedup, ring, tree, t);
	}
	CU_ASSERT_EQUAL(rows, 2);
	free(out), free(err);
}

/* tune's table on the cluster: NCCL's choice and the gain, its time over
 * the choice's, at each size. */
static void
tune_against_nccl(const char *csv)
{
	char *out, *err;
	CU_ASSERT_EQUAL(cli_collc("tune examples/gpu-cluster-2x8.coll --collective AR_nccl_ring --sizes "
	                          "1MiB,1GiB --mode flow", &out, &err), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "NCCL's choice   gain"));
	for (int k = 0; k < 2; k++) {
		char key[32];
		snprintf(key, sizeof key, "\n%10s  ", sizes[k]);
		const char *l = strstr(out, key);
		CU_ASSERT_PTR_NOT_NULL_FATAL(l);
		char tok[64][96];
		int n = tokens(l + 1, tok, 64), bound = 0;
		for (int i = 1; i < n && !bound; i++)
			if (tok[i][strlen(tok[i]) - 1] == '%' && tok[i][0] != '+')
				bound = i;
		CU_ASSERT_FATAL(bound >= 3 && n >= 4);
		double chosen = atof(tok[bound - 2]), gain = atof(tok[n - 1]);
		double ring = csv_time(csv, "AR_nccl_ring", sizes[k]), tree = csv_time(csv, "AR_nccl_tree", sizes[k]);
		const char *want = ring < tree ? "nccl_ring" : "nccl_tree";
		double ratio = (ring < tree ? ring : tree) / chosen;
		/* the gain is printed to 0.01, and the chosen time read back to 0.01 us */
		double slack = 5e-3 + ratio * 5e-3 / chosen + 1e-3;
		assert_named(strcmp(tok[n - 2], want) == 0 && fabs(gain - ratio) < slack, __LINE__, __FILE__,
		             "tune at %s: NCCL's choice %s %s, want %s %.3fx", sizes[k], tok[n - 2], tok[n - 1],
		             want, ratio);
	}
	free(out), free(err);
}

/* The fastest time among JSON candidates labelled KEY or "KEY (...)". */
static double
json_cand_time(const char *json, const char *key)
{
	double best = -1;
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s", key);
	for (const char *p = json; (p = strstr(p, pat)); p++) {
		const char *after = p + strlen(pat);
		const char *colon = strstr(after, "\": ");
		if ((*after != '"' && strncmp(after, " (", 2) != 0) || !colon)
			continue;
		double v = atof(colon + 3);
		if (v > 0 && (best < 0 || v < best))
			best = v;
	}
	return best;
}

/* tune's CSV and JSON carry NCCL's choice as its table does: the faster of
 * nccl_ring and nccl_tree at the size, and the choice's gain over it, the
 * same in both, checked against the candidates' times (2 x 8, 1 size). */
void
test_nccl_choice_csv_json(void)
{
	const char *cmd = "tune examples/gpu-cluster-2x8.coll --collective AR_nccl_ring --sizes 1MiB "
	                  "--mode flow";
	char args[256], *json, *csv, *err;
	snprintf(args, sizeof args, "%s --json", cmd);
	CU_ASSERT_EQUAL_FATAL(cli_collc(args, &json, &err), 0);
	free(err);
	snprintf(args, sizeof args, "%s --csv", cmd);
	CU_ASSERT_EQUAL_FATAL(cli_collc(args, &csv, &err), 0);
	free(err);
	char want[16], got[16];
	const char *cands = strstr(json, "\"candidates\": {");
	CU_ASSERT_PTR_NOT_NULL_FATAL(cands);
	double ring = json_cand_time(cands, "nccl_ring"), tree = json_cand_time(cands, "nccl_tree");
	const char *time = strstr(json, "\"time_us\": "), *nc = strstr(json, "\"nccl_choice\": \"");
	CU_ASSERT_FATAL(ring > 0 && tree > 0 && time && nc);
	snprintf(want, sizeof want, "%s", ring < tree ? "nccl_ring" : "nccl_tree");
	double gain = (ring < tree ? ring : tree) / atof(time + 11), jgain = -1, cgain = -1;
	CU_ASSERT_EQUAL(sscanf(nc, "\"nccl_choice\": \"%15[a-z_]\", \"nccl_gain\": %lf", got, &jgain), 2);
	assert_named(strcmp(got, want) == 0 && fabs(jgain - gain) < 1e-4 * gain, __LINE__, __FILE__,
	             "tune --json: NCCL's choice %s %.6g, want %s %.6g", got, jgain, want, gain);
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",bound_ratio,nccl_choice,nccl_gain\n"));
	const char *row = strchr(csv, '\n'), *end = row ? strchr(row + 1, '\n') : NULL;
	CU_ASSERT_FATAL(end != NULL);
	const char *last = end;
	for (int commas = 0; last > row && commas < 2; last--)
		commas += last[-1] == ',';
	CU_ASSERT_EQUAL(sscanf(last + 1, "%15[a-z_],%lf", got, &cgain), 2);
	CU_ASSERT(strcmp(got, want) == 0 && fabs(cgain - jgain) < 1e-9);
	free(json), free(csv);
}

void
test_nccl_choice(void)
{
	char *csv, *err;
	CU_ASSERT_EQUAL(cli_collc("sim examples/gpu-cluster-2x8.coll --sizes 1MiB,1GiB --mode flow --csv",
	                          &csv, &err), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
	free(err);
	for (int k = 0; k < 2; k++)
		CU_ASSERT(csv_time(csv, "AR_nccl_ring", sizes[k]) > 0 && csv_time(csv, "AR_nccl_tree", sizes[k]) > 0);
	sim_against_nccl(csv);
	tune_against_nccl(csv);
	free(csv);
}
