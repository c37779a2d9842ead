/*
 * collc_limits.h: every size limit of collc, in one place. Each bounds the memory
 * or the time of one structure, so that work too big for the machine is
 * refused before it is allocated, with a located error naming the estimate
 * and the limit. docs/limits.md gives each one's reason and what a value
 * costs; change both together.
 */
#ifndef COLLC_COLLC_LIMITS_H
#define COLLC_COLLC_LIMITS_H

/* A fuzzing build (libFuzzer's convention: FUZZING_BUILD_MODE_UNSAFE_FOR_
 * PRODUCTION) divides every limit on the size of work by 2^LIMIT_SHIFT. The
 * largest work the real limits let through takes minutes under the
 * sanitizers, far past the fuzzer's time limit; scaled down it fits, so a
 * timeout or out-of-memory find means work the estimates do not bound. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define LIMIT_SHIFT 8
#else
#define LIMIT_SHIFT 0
#endif

enum {
	/* The language (sema checks them as it reads the file). */
	MAX_DIMS = 8,              /* coordinates of a torus, mesh or hyperx */
	MAX_NODES = 1 << (20 - LIMIT_SHIFT),       /* nodes of a topology, switches included */
	MAX_CHUNKS = 1 << 30,      /* `chunks N`, `segments S`: fits an int with room */
	/* Independent pipelines of one schedule (Msg.instance: Bucket has 2d);
	 * the simulator keeps a queue per link and instance. */
	MAX_INSTANCES = 2 * MAX_DIMS,

	/* A topology's directed links: 48 bytes each plus routing state, so
	 * 2^24 links take about 1 GiB (full(4096) has 16,773,120). */
	MAX_LINKS = 1 << (24 - LIMIT_SHIFT),

	/* An explicit schedule: its (rank, chunk) cells, which the verifier
	 * holds as a set each (about 28 bytes), and its chunk transfers (a
	 * chunk id of 4 bytes, a 32-byte message at worst, the sort's copy):
	 * 2^26 of either is about 2 GiB (transfers 2.25 GiB). ring(4096) allreduce has 16.8M cells
	 * and 33.5M transfers; ring(8192) has 134M. */
	MAX_CELLS = 1 << (26 - LIMIT_SHIFT),
	MAX_TRANSFERS = 1 << (26 - LIMIT_SHIFT),

	/* A symmetry group: elements, and their node permutations held at
	 * once (ints), 256 MiB at most; automorphisms() searches all node
	 * permutations, so it is kept to small graphs. */
	MAX_GROUP_ORDER = 1 << (22 - LIMIT_SHIFT),
	MAX_PERM_INTS = 1 << (26 - LIMIT_SHIFT),
	MAX_AUTO_NODES = 64,
	/* A group's generators (`translate` counted per dimension) times the
	 * topology's nodes and links: each generator's node image is held
	 * (ints) and every link's image checked, before the closure. */
	MAX_GENERATOR_IMAGES = 1 << (28 - LIMIT_SHIFT),

	/* A symmetric schedule's chunks are trees x group order; each is a
	 * chunk of every explicit form (MSCCL, MPI, simulator). */
	MAX_SYMM_CHUNKS = 1 << (24 - LIMIT_SHIFT),

	/* Inputs: a file is read whole, and reading, checking and lowering it
	 * take up to a format's bytes of memory per byte read, measured on its
	 * densest inputs (docs/limits.md); a format's input limit is the
	 * smaller of its MAX_*_BYTES and what the memory budget can hold at
	 * that rate. A .coll file: 69 for a list of `map x -> -x;`, 64 for
	 * a list of ranks, 52 for tree edges `1->0;` (the AST and the lowered
	 * group). A schedule text
	 * file: 7.0 for an `owner` list of 2^24 chunks (the verifier's cells),
	 * 4.5 for one-chunk messages; a .sim file: 5.3 for one-hop messages
	 * without dependencies; MSCCL XML: 48 for elements of one-letter empty
	 * attributes (libxml2's tree). The caps:
	 * the .coll lexer's, line and column numbers in an int, and the MSCCL
	 * reader's (libxml2 takes an int length). */
	COLL_BYTES_PER_INPUT_BYTE = 112,
	SCHED_TEXT_BYTES_PER_INPUT_BYTE = 8,
	SIM_TEXT_BYTES_PER_INPUT_BYTE = 8,
	MSCCL_XML_BYTES_PER_INPUT_BYTE = 64,
	MAX_COLL_INPUT_BYTES = 256 << 20,
	MAX_TEXT_INPUT_BYTES = 2047 << 20, /* line and column numbers stay in an int */
	MAX_XML_INPUT_BYTES = 1 << 30,

	/* The links of a schedule's distinct routes, listed once each (ints),
	 * and as many again in the route cache: 2^27 are 1 GiB in all. Only a
	 * schedule of long routes between far ranks meets it (binomial_tree
	 * on ring(40000)); a library algorithm's routes are estimated before
	 * any is built (check_route_hops), and every route is counted as it
	 * is built. */
	MAX_ROUTE_HOPS = 1 << (27 - LIMIT_SHIFT),

	/* Rounds of a schedule: simulators and executors keep a few values
	 * per round (2^24 rounds of doubles are 128 MiB each). */
	MAX_ROUNDS = 1 << (24 - LIMIT_SHIFT),

	/* Packet mode's work: packets times the links each crosses, a lone
	 * one-hop message counting 1, in two currencies, each limit about
	 * PACKET_BUDGET_SECONDS of one core's CPU: the closed forms of lone
	 * messages (MAX_PACKET_HOPS) and the event loop, which costs more per
	 * packet-hop (MAX_LOOP_PACKET_HOPS); a run may spend the two in any mix
	 * (closed / MAX_PACKET_HOPS + loop / MAX_LOOP_PACKET_HOPS <= 1). The
	 * event loop's memory is its packets in flight, under its limit too.
	 * Calibrated by bench_sim (docs/limits.md has the figures). A larger
	 * run is refused before its first round when its least work passes
	 * the budget, else before the round that passes it (flow mode
	 * computes the same sizes in closed form per flow). */
	PACKET_BUDGET_SECONDS = 15,
	MAX_LOOP_PACKET_HOPS = 1 << (27 - LIMIT_SHIFT),
	/* The event loop's memory: a message's packets at one hop of its route
	 * (runtime/sim_engine.c, Hop: 64 bytes), live from when the first leaves the
	 * hop before to when the last leaves. A message has at most min(its
	 * packets, its hops) at once, one for a packet alone; 2^24 are 1 GiB.
	 * A run that needs more is stopped when it would, and refused. */
	MAX_LOOP_LIVE_HOPS = 1 << (24 - LIMIT_SHIFT),
	MAX_PACKET_HOPS = 1 << (30 - LIMIT_SHIFT),

	/* The cut bound (ir/cutbound.c): its max flows times a pass over the
	 * graph each (cutbound_work), estimated before any is run; past the
	 * limit the bound is left out, and said so. Dinic's flows take a few
	 * passes each: about 16 ns per unit on spine_leaf(32, 256, 8) (2048
	 * ranks, 1.0e8 units, 1.6 s of CPU), so the limit is about 2 s. */
	MAX_CUT_WORK = 1 << (27 - LIMIT_SHIFT),
};

/* The simulator keeps packet times in 64-bit picoseconds: a run whose time
 * could pass 2^62 ps (53 days) is refused before it starts (runtime/sim_engine.c,
 * time_bound_s), rather than wrapping. */
#define MAX_SIM_SECONDS 4611686.018427388

/* Tree packings (ir/packing.c): copies per root tried one by one up to
 * MAX_PACK_TRIES, then the exact count if within MAX_PACK_COPIES; a link
 * carries at most MAX_PACK_CAP copies (sums of them stay in int64). */
enum {
	MAX_PACK_TRIES = 16,
	MAX_PACK_COPIES = 1 << 20,
	MAX_PACK_CAP = 1 << 30,
	/* pack_work's estimate (link visits of its max flows) */
	MAX_PACK_WORK = 1 << (30 - LIMIT_SHIFT),
};

#endif
