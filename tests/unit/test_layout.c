/*
 * test_layout.c: the chunk layout the backends share (ir/layout.c): blocks
 * and pieces for each kind, the order's packed counts, all-to-all parking
 * rounds, and per-message read and write dependencies against a brute
 * force over the messages.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "tests.h"

/* The first schedule of text, lowered and verified, expanded if symmetric. */
static const Sched *
build(Diag *dg, const char *text, Prog *p, Checked *c)
{
	memset(p, 0, sizeof *p);
	check_str(dg, c, text);
	if (c->errors || lower(dg, c->file, p) != 0 || p->nsched < 1) {
		assert_named(0, __LINE__, __FILE__, "does not build: %s", c->diag ? c->diag : "");
		return NULL;
	}
	return p->sched[0];
}

static bool
carries(const Sched *s, const Msg *m, int c)
{
	for (int k = 0; k < m->n; k++)
		if (s->chunks[m->first + k] == c)
			return true;
	return false;
}

static bool
shares_chunk(const Sched *s, const Msg *a, const Msg *b)
{
	for (int k = 0; k < a->n; k++)
		if (carries(s, b, s->chunks[a->first + k]))
			return true;
	return false;
}

static bool
listed(const int *v, int from, int to, int x)
{
	for (int i = from; i < to; i++)
		if (v[i] == x)
			return true;
	return false;
}

/* Every message's read and write lists are exactly what the brute force finds. */
static void
check_deps(const char *label, const Sched *s)
{
	Arena a = {0};
	MsgDeps d;
	msg_deps(&a, s, true, &d);
	int bad = -1;
	for (int j = 0; j < s->nmsg && bad < 0; j++) {
		const Msg *m = &s->msg[j];
		int nr = 0, nw = 0;
		for (int k = 0; k < s->nmsg; k++) {
			const Msg *x = &s->msg[k];
			if (k == j || !shares_chunk(s, m, x))
				continue;
			/* read: an earlier delivery to the sender of a chunk it carries */
			bool r = x->round < m->round && x->dst == m->src;
			/* write: an earlier delivery to the receiver, or a read there up to its round */
			bool w = (x->round < m->round && x->dst == m->dst) ||
			         (x->round <= m->round && x->src == m->dst);
			nr += r;
			nw += w;
			if (r != listed(d.read, d.read_off[j], d.read_off[j + 1], k) ||
			    w != listed(d.write, d.write_off[j], d.write_off[j + 1], k))
				bad = j;
		}
		if (nr != d.read_off[j + 1] - d.read_off[j] || nw != d.write_off[j + 1] - d.write_off[j])
			bad = j;
	}
	assert_named(bad < 0, __LINE__, __FILE__, "%s: message %d's dependencies differ from the "
	             "brute force", label, bad);
	arena_free(&a);
}

static void
test_deps(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct { const char *label, *text; } cases[] = {
		{"ring allreduce on 5", "topology R = ring(5);\n"
		 "collective allreduce AR on R { algorithm ring; }\n"},
		{"bucket on a 3x3 torus", "topology T = torus(3, 3);\n"
		 "collective allreduce AR on T { algorithm bucket; }\n"},
		{"bruck alltoall on 6", "topology R = ring(6);\n"
		 "collective alltoall A on R { algorithm bruck; }\n"},
		{"SP on a ring of 8, expanded", "topology R = ring(8);\n"
		 "group G on R { translate; map x -> -x; }\ntree B = bfs(R, root 0);\n"
		 "collective allreduce AR on R { algorithm symmetric(trees B, group G); }\n"},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		Prog p;
		Checked c;
		const Sched *s = build(dg, cases[i].text, &p, &c);
		if (s) {
			Arena a = {0};
			check_deps(cases[i].label, s->base ? sched_expand(dg, &a, s) : s);
			arena_free(&a);
		}
		prog_free(&p);
		checked_free(&c);
	}
}

/* Blocks by kind; pieces a permutation of each block; the order's counts. */
static void
test_blocks(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const struct { const char *text; int nblock; long packed, own; } cases[] = {
		{"topology R = ring(8);\ngroup G on R { translate; map x -> -x; }\n"
		 "tree B = bfs(R, root 0);\n"
		 "collective allreduce AR on R { algorithm symmetric(trees B, group G); }\n", 1, 0, 192},
		{"topology T = torus(4, 4);\n"
		 "group G on T { translate; map (x, y) -> (-x, -y); map (x, y) -> (y, x); }\n"
		 "tree B = bfs(T, root (0, 0));\n"
		 "collective allreduce AR on T { algorithm symmetric(trees B, group G); }\n", 1, 1280,
		 1792},
		{"topology R = ring(6);\ncollective allgather AG on R { algorithm ring; }\n", 6, 0, 0},
		{"topology R = ring(7);\ncollective alltoall A on R { algorithm bruck; }\n", 49, 63, 63},
		/* the evens and the odds, three messages each, are runs; {0, 1}, sent
		 * first and once, crosses both and is left out of the nesting */
		{"topology F = full(4);\n"
		 "collective broadcast B on F {\n    root 0;\n    chunks 8;\n    schedule {\n"
		 "        round { send 0..1 from 0 to 1 copy; }\n"
		 "        round { for c in 0..3 { send 2 * c from 0 to 2 copy; }\n"
		 "                for c in 0..3 { send 2 * c + 1 from 0 to 3 copy; } }\n"
		 "        round { for c in 0..3 { send 2 * c from 2 to 3 copy;\n"
		 "                                send 2 * c from 2 to 1 copy; }\n"
		 "                for c in 0..3 { send 2 * c + 1 from 3 to 2 copy;\n"
		 "                                send 2 * c + 1 from 3 to 1 copy; } }\n"
		 "    }\n}\n", 1, 2, 24},
	};
	for (size_t i = 0; i < countof(cases); i++) {
		Prog p;
		Checked c;
		const Sched *s = build(dg, cases[i].text, &p, &c);
		if (!s) {
			prog_free(&p);
			checked_free(&c);
			continue;
		}
		Arena a = {0};
		Layout L;
		layout_build(&a, s, &L);
		int R = s->nrank, bad = -1;
		char *seen = calloc((size_t)s->nchunk, 1);
		for (int ch = 0; ch < s->nchunk; ch++) {
			int want = s->kind == CK_ALLGATHER ? s->owner[ch]
			           : s->kind == CK_ALLTOALL ? s->a2a_src[ch] * R + s->a2a_dst[ch] : 0;
			int pos = L.block[ch] * L.per + L.piece[ch];
			if (L.block[ch] != want || L.piece[ch] < 0 || L.piece[ch] >= L.per ||
			    L.pos[ch] != pos || seen[pos]++)
				bad = ch;
		}
		free(seen);
		assert_named(bad < 0 && L.nblock == cases[i].nblock && L.short_block < 0 &&
		             L.packed == cases[i].packed && L.own == cases[i].own, __LINE__, __FILE__,
		             "case %zu: chunk %d misplaced, or %d blocks (want %d), packed %ld / own %ld "
		             "(want %ld / %ld)", i, bad, L.nblock, cases[i].nblock, L.packed, L.own,
		             cases[i].packed, cases[i].own);
		/* parking: the last round each rank sends each chunk */
		for (int r = 0; s->kind == CK_ALLTOALL && r < R; r++)
			for (int ch = 0; ch < s->nchunk; ch++) {
				int last = -1;
				for (int m = 0; m < s->nmsg; m++)
					if (s->msg[m].src == r && carries(s, &s->msg[m], ch))
						last = s->msg[m].round;
				if (L.last_send[r * s->nchunk + ch] != last)
					bad = ch;
			}
		assert_named(bad < 0, __LINE__, __FILE__, "case %zu: last_send of chunk %d", i, bad);
		arena_free(&a);
		prog_free(&p);
		checked_free(&c);
	}
}

CU_TestInfo layout_tests[] = {
	{"blocks, pieces, packed counts and parking rounds", test_blocks},
	{"per-message read and write dependencies against a brute force", test_deps},
	CU_TEST_INFO_NULL,
};
