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
	MAX_NIC_GBPS = 1 << 20,    /* rails(..., nic_gbps N): 1 Pbit/s, beyond any NIC made */
	MAX_PAIR_LINKS = 64,       /* xgmi_rails(..., links ...): links of one pair of GPUs */
	MAX_GPU_PAIRS = 2016,         /* values of `links`: the pairs of a box of 64 GPUs */
	MAX_STRING = 4095,         /* bytes of a string ("path.xml"): a path as PATH_MAX holds it */
	MAX_CHUNKS = 1 << 30,      /* `chunks N`, `segments S`: fits an int with room */
	/* Independent pipelines of one schedule (Msg.instance, a short:
	 * Bucket has 2d, packing one per tree copy); the simulator keeps a
	 * queue per link and instance. */
	MAX_INSTANCES = 32768,

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
	 * (runtime/sim_engine.h, Hop: 64 bytes), live from when the first leaves the
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
	/* All-to-all's concurrent flow (ir/a2abound.c): at most A2A_PHASES
	 * phases, each a Dijkstra per rank node and step and another for the
	 * dual (a2abound_work: 3 per rank node, each (nodes + links) log
	 * nodes), estimated before any; past MAX_A2A_WORK the flow is left
	 * out and said so. The work is an upper estimate: the phases stop
	 * once hi / lo <= 1 + A2A_GAP (docs/limits.md has the figures). */
	A2A_PHASES = 4000,
	MAX_A2A_WORK = 1 << (30 - LIMIT_SHIFT),
	/* The simulator's input (backends/to_sim.c). A symmetric schedule is
	 * expanded into messages, which gives their dependencies, up to this
	 * many (base transfer, element) pairs (4M messages with their
	 * dependencies, about 0.5 GiB); past it, it must be streamed (the
	 * translation kind), else it is refused with the count. */
	MAX_SIM_EXPAND = 1 << 22,
	/* A streamed collective's messages that the simulator makes, in all (a
	 * round run by its representatives makes only those), and the hops of
	 * one round (held at once, 4 bytes each: 4 GiB). */
	MAX_STREAM_MSGS = 1 << 30,
	/* An MSCCL XML file given to `collc sim`: its messages, and the
	 * dependency entries the conversion writes (ints, 64 MiB). */
	SIMXML_MAX_MSGS = 1 << 20,
	SIMXML_MAX_DEPS = 1 << 24,
	/* The executor model's slice operations of one program at one size
	 * (docs/sim.md 7): a message each, with at most four dependencies; flow
	 * mode's work grows with them times the flows at once. */
	SIMXML_EXEC_MAX_OPS = 1 << 19,

	/* The language's nesting: brackets and braces open at once (the parser
	 * keeps where each opened) and an expression's depth, so that nothing
	 * recurses without bound. */
	MAX_NESTING = 256,
	/* A schedule block: names bound at once when it is checked (the scope
	 * is a fixed array searched by name), and when it runs (builtins
	 * included); its chunk transfers and loop iterations, estimated before
	 * its loops are expanded (4M transfers hold the teacher's sets; 64M
	 * iterations are a few seconds); the library schedules it uses. */
	MAX_SCHED_SCOPE = 512,
	MAX_SCHED_VARS = 600,
	MAX_SCHED_SENDS = 1 << 22,
	MAX_SCHED_ITERS = 1 << 26,
	MAX_SCHED_USES = 1 << 16,

	/* Library algorithms. A pipeline's messages (pipelined_trees, chain,
	 * tto): the segment count the cost model picks keeps them within
	 * MAX_PIPELINE_MSGS (2M); a user's `segments` may go to 64 times that
	 * (pipelined_trees), about 4 GiB of messages. */
	MAX_PIPELINE_MSGS = 1 << 21,
	/* packing's segments keep its listed messages within MAX_PACK_MSGS
	 * (8M): 1024 ranks' copies are 1,047,552 messages a segment, and 8
	 * segments listed took 1.23 GiB in collc sim. There (AlgCtx.compact),
	 * where the model's segments would pass it, packing holds segment 0
	 * alone (the repeated form, ir/repeat.c) and its segments' messages
	 * in all are held to MAX_STREAM_MSGS instead, which the simulator
	 * streams a round at a time (docs/algorithms.md, "Orbit
	 * representatives"). */
	MAX_PACK_MSGS = 1 << 23,
	/* pipelined_trees without `trees` builds every SuperMesh root set
	 * (k^2 / 4 sets of trees on a k x k mesh, each tree a search over the
	 * mesh); docs/algorithms.md and the pipelined suite cover it up to
	 * 16 x 16, larger meshes give their sets as `trees`. */
	MAX_ROOT_SET_NODES = 16 * 16,
	/* bridge, s_bruck, g_bruck, r_hd on an optical ring: a power of two of
	 * ranks up to this; bridge's exact search over reconfiguration points
	 * is over subsets of the log2 p steps, so it grows with p. */
	BRIDGE_MAX_RANKS = 256,
	/* optical_ring: port pairs whose circuits (offsets +-2^k blocks, 2
	 * log2 blocks of them per block) the topology lists; past it, none
	 * are listed and only the static ring routes. */
	OPTICAL_MAX_BLOCKS = 4096,

	/* MSCCL's rule 17 (runtime/msccl_verify.c): the race check keeps a
	 * vector clock over a gpu's thread blocks at each step that waits;
	 * 2^26 int16 entries are 128 MiB (a 256-rank SP file needs about 10^6). */
	MAX_RACE_CLOCKS = 1 << 26,

	/* Value lists: `collc sim` and `collc tune` --sizes, and each key of a
	 * sweep spec (its sizes included), held in fixed arrays; a sweep runs
	 * at most MAX_SWEEP_JOBS workers (a pipe and a process each). */
	MAX_SIZES = 64,
	MAX_PARAMS_FILE = 64,      /* `param` declarations of a file, and -D values */
	MAX_SWEEP_VALUES = 64,
	MAX_SWEEP_JOBS = 64,
};

/* The simulator keeps packet times in 64-bit picoseconds: a run whose time
 * could pass 2^62 ps (53 days) is refused before it starts (runtime/sim_engine.c,
 * time_bound_s), rather than wrapping. */
/* all-to-all's interval: the target hi / lo - 1; the flow's step (Garg
 * and Koenemann's epsilon) from A2A_EPS0, halved whenever the gap is below
 * A2A_REFINE times it, down to A2A_EPS_MIN (docs/algorithms.md) */
#define A2A_GAP 0.01
#define A2A_EPS0 0.1
#define A2A_REFINE 1.2
#define A2A_EPS_MIN 0.001
#define MAX_SIM_SECONDS 4611686.018427388

/* A vector size (--size, --sizes, a sweep spec's sizes), in bytes: sizes
 * travel as doubles, which hold every whole number exactly only up to 2^53,
 * and the simulator takes them as 64-bit bytes, multiplied by 8e12 into
 * bit-picoseconds (128-bit) and by 8 into bits (doubles, exact up to 2^56).
 * From 2^53 a size may be rounded silently (2^53 + 1 reads as 2^53); from
 * 2^63 it wraps negative. So a size of 2^53 bytes (8 PiB) or more is
 * refused where it is read. */
#define MAX_SIZE_BYTES 9007199254740991.0 /* 2^53 - 1 */
/* Tree packings (ir/packing.c): copies per root tried one by one up to
 * MAX_PACK_TRIES, then the exact count if within MAX_PACK_COPIES; a link
 * carries at most MAX_PACK_CAP copies (sums of them stay in int64). */
enum {
	MAX_PACK_TRIES = 16,
	MAX_PACK_COPIES = 1 << 20,
	MAX_PACK_CAP = 1 << 30,
	/* violated sets the packing remembers to skip max flows (a ring) */
	MAX_PACK_CUTS = 64,
	/* flow values the packing keeps as certificates, each rank's last
	 * flow of value K (8 bytes each: 256 MiB); past it, a flow per check */
	MAX_PACK_CERT = 1 << 25,
	/* pack_work's estimate (link visits of its max flows) */
	MAX_PACK_WORK = 1 << (30 - LIMIT_SHIFT),
	/* the levels' local search (ir/alg_packing.c): its passes, and its
	 * work (link-levels read); past it, the trees keep their windows' ends */
	PACK_LEVEL_PASSES = 4,
	MAX_PACK_LEVEL_WORK = 1 << (28 - LIMIT_SHIFT),
	/* the exchanges that make trees shallower (ir/packing_shallow.c):
	 * passes over every pair of trees, and their work (subtree steps);
	 * past it, the trees stay as grown */
	PACK_SHALLOW_PASSES = 8,
	MAX_PACK_SHALLOW_WORK = 1 << (28 - LIMIT_SHIFT),
	/* units a power of two (MSCCL, ir/packing_units.c): the powers of two
	 * tried from the least at or above the copies' unit count */
	PACK_POW2_TRIES = 4,
};

#endif
