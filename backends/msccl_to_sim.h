/*
 * msccl_to_sim.h: an MSCCL algorithm (runtime/msccl_program.h) placed on a topology of
 * the IR as the simulator's input (msccl_to_sim.c), so `collc sim FILE.xml
 * --topology T.coll` compares foreign algorithms with collc's own.
 */
#ifndef COLLC_SIMXML_H
#define COLLC_SIMXML_H

#include "ir.h"
#include "msccl_program.h"
#include "sim.h"

/* The network of topology t with one collective: program p's messages,
 * rank r running on node rank_node[r] (ngpus of them). Each sending step
 * is a message of cnt/nchunksperloop of the vector, routed on shortest
 * paths; it depends on every message its rank received before it in the
 * program's order (its threadblock's earlier steps and their depid/deps,
 * transitively). 0, or -1 after reporting against the XML's lines. */
int sim_from_msccl(Diag *, Arena *, const MProg *p, const Topo *t, const int *rank_node, SimNet *);

/* msccl_exec.c: the executor model (docs/sim.md 7). A protocol's constants
 * as msccl-executor-nccl has them (the defaults of src/init.cc,
 * src/device/primitives.h, src/include/msccl/msccl_struct.h). */
typedef struct ExecProto {
	int64_t slot_bytes;    /* a connection's FIFO slot: buffSize / NCCL_STEPS, wire bytes */
	int64_t chunk_data;    /* data bytes of one MSCCL chunk per iteration (chunkSize) */
	int slices;            /* slices per primitive call (SlicePerChunk) */
	int window;            /* slices a connection holds at once: NCCL_STEPS / StepPerSlice */
	int wire_num, wire_den; /* bytes on the wire per byte of data */
	int64_t base_ps;       /* a call's fixed cost (NCCL's baseLatencies, Ring) */
	int64_t step_ps[2];    /* a step's latency across a connection inside a box
	                        * (EXEC_NVLINK) and between boxes (EXEC_NET):
	                        * NCCL's hwLatencies, Ring (src/graph/tuning.cc) */
} ExecProto;
enum { EXEC_NVLINK, EXEC_NET };
ExecProto exec_proto(MProto);
/* The class of a connection between nodes a and b of t: EXEC_NVLINK when
 * both are GPUs of one box (a box form's box; a graph or full topology is
 * one box), else EXEC_NET (other fabrics: every rank its own host). */
int exec_hw_class(const Topo *t, int a, int b);

/* A program's shape at a size: the bytes of one MSCCL chunk, the loop's
 * iterations over it, and the chunks one primitive call moves at most. */
typedef struct ExecShape {
	int64_t chunk;
	int64_t iters;
	int max_count;         /* maxAllowedCount */
} ExecShape;
ExecShape exec_shape(const MProg *p, int64_t bytes);

/* The network of topology t with program p at `bytes` (the larger buffer)
 * as the executor runs it: every thread block's steps in order, each
 * step's chunks moved in slices through its connection's slots with flow
 * control, depid/deps waits, one message per slice (a protocol's wire
 * bytes) and a message of no bytes for a slice that sends nothing. Run it
 * with --sync deps (each tb a queue: SIM_QUEUE_INSTANCE).
 * 0, or -1 after reporting against the XML's lines (a deadlock under the
 * slots' flow control, a program past SIMXML_EXEC_MAX_OPS slices). */
int sim_from_msccl_exec(Diag *, Arena *, const MProg *p, const Topo *t, const int *rank_node,
                        int64_t bytes, SimNet *);

/* The executor's fixed costs on a schedule's messages, as an ideal
 * lowering into protocol pr would pay them (docs/sim.md 7, "The
 * schedule in the executor"): net holds one collective by dependencies
 * (sim_from_scheds) on topology t. Each message becomes its protocol's wire
 * bytes; one that waits on nothing starts a call's base latency after the
 * start, one that waits on messages a step's latency after the last has
 * arrived, less the wire latency that message's route paid (NCCL's figure
 * is end to end), the largest over them; a message no other waits for is
 * received that latency after its arrival too (a message of no bytes
 * added at its receiver), as a program's last receive is. No slices,
 * thread blocks or loop: those are the lowering's. 0, or -1 if net is not
 * of that shape. */
int exec_costs_on_sched(Arena *, SimNet *net, const Topo *t, MProto pr);

#endif
