#!/usr/bin/env python3
"""forestcoll_compare.py: collc's tree packing beside ForestColl's published
Python implementation (arXiv 2402.06787; liangyuRain/ForestColl on GitHub) on
the same graphs, CPU time side by side (issue 33 item 7; `make bench` runs it).

The graphs: B boxes of 8 GPUs, each GPU at 450 GB/s to its box's NVSwitch and
by a 50 GB/s NIC to rail switch g (collc's `rails(boxes B, gpus 8, nic_gbps
400)`). ForestColl packs the allgather's trees (optimal_pipeline_spanning_trees,
its own process CPU time); collc lowers `algorithm packing` on the same
topology without a group (every root) and with `translations(C)` (orbit
representatives), the CPU time of `collc check` (parse, pack, schedule, verify,
bound: an upper figure for the packing). Both optimal rates are printed as
algbw (GB/s); they must agree.

ForestColl is not part of collc: fetch and run it outside the repository and
point FORESTCOLL_DIR at its checkout (it needs networkx). Without it the script
says so and exits 0 (a skip, not a failure).

usage: python3 tests/forestcoll_compare.py [BOXES ...]   (default: 2 4)
"""
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

COLLC = os.environ.get("COLLC", "bin/collc")


def rails_nx(nx, boxes, gpus=8):
    g = nx.DiGraph()
    ranks = []
    for b in range(boxes):
        for i in range(gpus):
            u = (b, "GPU", i)
            ranks.append(u)
            for s, bw in (((b, "NVSwitch", 0), 450), ((-1, "rail", i), 50)):
                g.add_edge(u, s, capacity=bw)
                g.add_edge(s, u, capacity=bw)
    return g, ranks


def forestcoll(boxes):
    """(cpu s, algbw GB/s), or the reason it did not run."""
    where = os.environ.get("FORESTCOLL_DIR")
    if not where or not os.path.isfile(os.path.join(where, "pipeline_allgather.py")):
        return "FORESTCOLL_DIR is not a ForestColl checkout"
    sys.path.insert(0, where)
    try:
        import networkx as nx
        from pipeline_allgather import optimal_pipeline_spanning_trees
    except ImportError as e:
        return "cannot import it: %s" % e
    g, ranks = rails_nx(nx, boxes)
    t = time.process_time()
    (U, k), _ = optimal_pipeline_spanning_trees(g, compute_nodes=ranks)
    return time.process_time() - t, len(ranks) * k / U


def collc(boxes, group):
    """(cpu s, algbw GB/s) of `collc check` on the same graph."""
    text = ("network { link_bandwidth = 3600 Gbps; link_latency = 500 ns; }\n"
            "topology C = rails(boxes %d, gpus 8, nic_gbps 400);\n%s"
            "collective allgather AG on C { algorithm packing; }\n"
            % (boxes, "group G = translations(C);\n" if group else ""))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "rails.coll")
        with open(path, "w") as f:
            f.write(text)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run([COLLC, "check", path], capture_output=True, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        return "refused: " + out.stderr.strip().splitlines()[0]
    m = re.search(r"allgather busbw <= ([0-9.]+) GB/s", out.stdout)
    n = boxes * 8
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return cpu, float(m.group(1)) * n / (n - 1)


def cell(r):
    return "%9.3f %9.2f" % r if isinstance(r, tuple) else "%19s" % "-"


def main():
    boxes = [int(a) for a in sys.argv[1:]] or [2, 4]
    print("%6s %5s %19s %19s %19s" % ("boxes", "GPUs", "ForestColl (Python)", "collc, every root",
                                      "collc, orbits"))
    print("%6s %5s %19s %19s %19s" % ("", "", "cpu s    algbw", "cpu s    algbw", "cpu s    algbw"))
    notes = []
    for b in boxes:
        row = [forestcoll(b), collc(b, False), collc(b, True)]
        print("%6d %5d %s %s %s" % (b, 8 * b, cell(row[0]), cell(row[1]), cell(row[2])), flush=True)
        notes += [r for r in row if isinstance(r, str) and r not in notes]
        rates = [r[1] for r in row if isinstance(r, tuple)]
        if rates and max(rates) - min(rates) > 1e-6 * max(rates):
            print("the optimal rates differ: %s" % rates)
            return 1
    for n in notes:
        print("skipped: %s" % n)
    print("algbw: the optimal allgather's, GB/s (busbw = algbw (N-1)/N); cpu s: process CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
