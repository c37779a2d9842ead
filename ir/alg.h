/*
 * alg.h: shared by the classic algorithm generators (alg_*.c) only. Each
 * generator builds an explicit schedule over communicator ranks 0..p-1;
 * the vector is cut into blocks (one per rank for reduce_scatter,
 * allgather and allreduce; one per (source, destination) pair for
 * alltoall), and a block may be cut further into `m` sub-chunks that
 * independent rings or ports carry: chunk = block * m + sub.
 */
#ifndef COLLC_ALG_H
#define COLLC_ALG_H

#include "ir.h"

typedef struct Gen {
	const AlgCtx *ctx;
	Sched *s;
	SchedBuilder b;
	int p, m;          /* ranks, sub-chunks per block (rings, ports) */
	int mult;          /* `chunks N` beyond the natural count: each sub-chunk is cut again */
	int *buf;          /* a message's chunks */
	int nbuf, capbuf;
} Gen;

/* Starts a schedule of nblock blocks of m sub-chunks each; `chunks N` must
 * be a multiple of nblock * m. -1 after reporting. */
int gen_begin(Gen *, const AlgCtx *, int nblock, int m);
Sched *gen_end(Diag *, Gen *);
/* Collects chunks for the next message. */
void gen_block(Gen *, int block, int sub);      /* one sub-chunk; sub < 0: all m */
void gen_send(Gen *, int round, int src, int dst, XferOp);  /* routed by the ctx */
void gen_send_link(Gen *, int round, int src, int dst, XferOp, int link);
void gen_send_route(Gen *, int round, int src, int dst, XferOp, const int *links, int nlink);
/* The link from rank src along (dim, dir) of a torus; -1 if none. */
int gen_link(const Gen *, int src, int dim, int dir);
int ilog2(int p);                 /* floor */
int clog2(int p);                 /* ceil */
bool is_pow(int p, int base);
int imod(int a, int n);

/* A pipeline's segment count left to the cost model (pipelined_trees'
 * segments, chain's segments, tto's chunks): M minimising
 * (M + fill)(alpha + beta share / M) for the size AlgCtx.size assumes, i.e.
 * sqrt(fill beta share / alpha), with fill the slots beyond M (the pipeline's
 * depth) and share the bytes one pipeline carries; capped so that the
 * schedule's M msgs_per_seg messages stay within MAX_PIPELINE_MSGS
 * (collc_limits.h); at least 1. */
int pipeline_segments(const AlgCtx *, double fill, double share, double msgs_per_seg);
/* The same with the pipeline paced by links of bandwidth bw (bit/s), not the
 * network's one link_bandwidth. */
int pipeline_segments_bw(const AlgCtx *, double fill, double share, double msgs_per_seg, double bw);
/* The least bandwidth (bit/s) of the route src -> dst; HUGE_VAL if empty. */
double route_bw(Routes *, const Topo *, int src, int dst);
/* A tree pipeline's rounds as levels (pipelined_trees, tto, nccl_tree):
 * the edge at depth d of a tree of height ht reduces in level ht - d and
 * copies in level (up ? ht : 0) + d - 1 of every segment's rounds;
 * bw[level] is lowered to the hop's bandwidth (levels past nlevel - 1
 * count as the last). bw starts at HUGE_VAL. */
void level_hop(double *bw, int nlevel, int ht, int d, bool up, bool down, double up_bw, double down_bw);
/* The segments of such a pipeline by its levels' own links, as chain's
 * (alg_rooted.c): a segment's level l takes D / M times 8 / bw[l], so the
 * M rounds with the slowest level active cost alpha + D t_max / M each and
 * the fill and drain about the other levels' times once: the run about
 * (M + L - 1) alpha + D t_max + D (sum t - t_max) / M, least at
 * M = sqrt(D (sum t - t_max) / alpha). Where every level has the same
 * bandwidth, exactly pipeline_segments_bw's with fill rounds beyond M. */
int pipeline_segments_levels(const AlgCtx *, const double *bw, int nlevel, double fill, double share,
                             double msgs_per_seg);
/* The same from the time the whole stream takes unpipelined (seconds) and a
 * round's fixed cost alpha: sqrt(fill * stream / alpha), at least 1, the
 * messages per segment times the segments within MAX_PIPELINE_MSGS. */
int pipeline_segments_time(double fill, double stream, double alpha, double msgs_per_seg);
/* A pipeline over `shares` shares of the vector (tto's trees, nccl_tree's
 * trees x channels, NVLS's ranks): the user's `chunks` divided among them, or
 * m where the file gives none. -1 after a located error that names alg and
 * what a share is (why, e.g. "2 trees x 8 channels") where they do not divide. */
int chunks_per_share(const AlgCtx *, const char *alg, int shares, const char *why, int m);

/* The symmetric form under the translations of a whole ring or torus
 * (alg_translate.c): begin, add every transfer of each base tree's chunk
 * (nodes; the chunk starts at node 0), end. */
typedef struct Translates {
	const AlgCtx *c;
	Sched *s;
	SchedBuilder sb;
	int cap;
	int instance; /* stamped on the base transfers added next (BaseXfer.instance) */
} Translates;
/* Every side at least 3, one link each way between neighbours, links alike. */
bool translations_apply(const Topo *);
int translates_begin(Translates *, const AlgCtx *, int ntree);   /* -1 after reporting */
void translates_xfer(Translates *, int tree, int round, int src, int dst, XferOp,
                     const int *links, int nlink);
Sched *translates_end(Diag *, Translates *);                          /* NULL after reporting */
/* Base tree b of a symmetric form from its transfers: a node's parent is
 * whoever copies the chunk to it, or with no copies (a reduce_scatter),
 * whom it reduces it into. NULL after reporting. */
Tree *transfers_tree(const AlgCtx *, const Sched *, int b, int root);

/* SP on a whole torus or HyperX by the form's translations and turns and
 * its tree rule, for auto (alg_auto_sp.c); NULL where it does not apply. */
Sched *alg_auto_sp(const AlgCtx *);
/* A torus's or HyperX's natural group: its unit translations and, per set
 * of dimensions of equal size, their signed cyclic turn, named `name`
 * (alg_auto_sp.c); NULL where it is refused (the caller mutes). */
Group *natural_group(Diag *, Arena *, const Topo *, Loc, const char *name);
/* A mesh's group: the reflection of each dimension (x -> n - 1 - x) and,
 * per set of dimensions of equal size, their cyclic turn, named `name`
 * (alg_auto_sp.c); NULL where it is refused (the caller mutes). */
Group *mesh_group(Diag *, Arena *, const Topo *, Loc, const char *name);

/* the families */
Sched *alg_ring(const AlgCtx *);
Sched *alg_multiport_ring(const AlgCtx *);
Sched *alg_nccl_ring(const AlgCtx *);
Sched *alg_nccl_tree(const AlgCtx *);
Sched *alg_nccl_nvls(const AlgCtx *);
Sched *alg_nccl_nvls_tree(const AlgCtx *);
/* The ring as a symmetric schedule (the translations and one base tree per
 * piece and direction), where ring_symmetric_applies. */
bool ring_symmetric_applies(const AlgCtx *);
Sched *alg_ring_symmetric(const AlgCtx *);
Sched *alg_bucket(const AlgCtx *);
/* Bucket as a symmetric schedule (the translations; a base tree per
 * instance and piece), where bucket_symmetric_applies. */
bool bucket_symmetric_applies(const AlgCtx *);
Sched *alg_bucket_symmetric(const AlgCtx *);
Sched *alg_recursive(const AlgCtx *);   /* recursive_doubling, recursive_halving, halving_doubling */
/* halving_doubling (allreduce), recursive_halving (reduce_scatter) and
 * recursive_doubling (allgather, allreduce) on 2^L ranks in the rank form
 * (Sched.xor_routes): one base tree per piece, where xor_rank_form_applies. */
bool xor_rank_form_applies(const AlgCtx *);
Sched *alg_xor_rank_form(const AlgCtx *);
Sched *alg_dbt(const AlgCtx *);
/* The parent of r in tree 0 or 1 of the double binary tree on p ranks
 * (alg_dbt.c); -1 at the root. */
int dbt_parent(int tree, int r, int p);
Sched *alg_swing(const AlgCtx *);
Sched *alg_trivance(const AlgCtx *);
Sched *alg_bruck(const AlgCtx *);
Sched *alg_pairwise(const AlgCtx *);
Sched *alg_rooted(const AlgCtx *);      /* binomial_tree, chain */
Sched *alg_tto(const AlgCtx *);
Sched *alg_pipelined(const AlgCtx *);
Sched *alg_packing(const AlgCtx *);     /* optimal tree packings (ir/packing.c) */
/* packing's schedule with its segments listed, repeated (Sched.repeat:
 * segment 0 held once, where there is more than one segment and no
 * `chunks N` or fixed segments), or as alg_packing chooses (AUTO: repeated
 * for collc sim where listing would pass MAX_PACK_MSGS). */
typedef enum PackForm { PACK_FORM_AUTO, PACK_FORM_LISTED, PACK_FORM_REPEATED } PackForm;
Sched *alg_packing_form(const AlgCtx *, PackForm);
Sched *alg_hierarchical(const AlgCtx *);
Sched *alg_bridge(const AlgCtx *);      /* bridge, s_bruck, g_bruck, r_hd (optical rings) */
/* bridge with the reconfiguration points given: bit i, before step i + 1
 * (an allreduce's allgather takes them mirrored). */
Sched *alg_bridge_points(const AlgCtx *, unsigned mask);

#endif
