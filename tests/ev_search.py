#!/usr/bin/env python3
"""ev_search.py: how many of the torus evaluation's claims each point of a grid of models reproduces.

Usage: tests/ev_search.py [--collc bin/collc] [--out DIR] [KEY=VALUES ...]

Runs examples/reproduce/torus64-eval.sweep once, with every KEY=VALUES given replacing
(or adding) that line of the spec: a comma-separated list as in a sweep file, for example
`step_overhead=0.30 us, 0.35 us, 0.40 us` or `links=shared` or `sync=deps`. Every
combination of network values (link_bandwidth, link_latency, router_latency,
step_overhead, mtu) is one model; for each it checks the EV rows of
examples/reproduce/claims.tsv exactly as `make reproduce` does (tests/reproduce.py), and
prints how many reproduce, best first, with the misses of the best. It tunes nothing:
it is the search behind docs/reproduce.md ("The torus evaluation and its one
calibration"), to show what a family of models can and cannot reach.

Default grid: step_overhead 0.20 .. 0.50 us (step 0.02), router_latency 0, 0.01, 0.025 us.
"""
import csv, os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reproduce as rp

NETWORK = ("link_bandwidth", "link_latency", "router_latency", "step_overhead", "mtu")


def spec_text(changes):
    text = open(os.path.join(rp.EX, "torus64-eval.sweep")).read()
    for key, values in changes:
        line = "%s %s" % (key, values)
        if re.search(r"(?m)^%s\b" % key, text):
            text = re.sub(r"(?m)^%s\b.*$" % key, lambda _: line, text)
        else:
            text += line + "\n"
    return text


def main():
    args = sys.argv[1:]
    exe = os.path.join(rp.ROOT, "bin", "collc")
    out = os.path.join(rp.ROOT, "build", "ev-search")
    changes = [("step_overhead", ", ".join("%.2f us" % (0.20 + 0.02 * i) for i in range(16))),
               ("router_latency", "0 us, 0.01 us, 0.025 us")]
    i = 0
    while i < len(args):
        if args[i] in ("--collc", "--out") and i + 1 < len(args):
            exe, out = (args[i + 1], out) if args[i] == "--collc" else (exe, args[i + 1])
            i += 2
            continue
        if "=" not in args[i]:
            print(__doc__.strip(), file=sys.stderr)
            return 2
        key, values = args[i].split("=", 1)
        changes = [c for c in changes if c[0] != key] + [(key, values)]
        i += 1
    out = os.path.abspath(out)
    cc = rp.Collc(os.path.abspath(exe), out)
    spec = cc.gen("ev-search.sweep", spec_text(changes))
    csv_out = os.path.join(out, "ev-search.csv")
    subprocess.run([cc.exe, "sweep", spec, "-o", csv_out], check=True)
    models = {}
    for r in csv.DictReader(open(csv_out)):
        key = (r["topology"].replace(" ", ""), r["ranks"], r["collective"], r["algorithm"],
               r["routing"], int(r["size"]))
        models.setdefault(tuple(r[k] for k in NETWORK), {})[key] = r

    table = [r for r in csv.DictReader(open(os.path.join(rp.EX, "claims.tsv")), delimiter="\t")
             if r["id"].startswith("EV-") and r["check"].strip() != "-"]
    results = []
    for net, index in models.items():
        def ev(topo, g, coll, alg, size, routing="shortest_path", index=index):
            r = index[(topo.replace(" ", ""), str(g), coll, alg, routing, rp.nbytes(size))]
            if r["status"] != "ok":
                raise ValueError("%s: %s" % (r["status"], r["note"]))
            return float(r["time_us"])
        env = {"ev": ev, "max_hops": cc.max_hops, "hops": cc.hops, "steps": cc.steps,
               "frac": cc.frac, "gencoll": cc.gencoll, "sum": sum, "max": max, "min": min,
               "abs": abs, "all": all, "any": any, "len": len, "round": round}
        missed = []
        for row in table:
            try:
                ours = eval(row["check"], dict(env, __builtins__={}))
                ok = rp.within(rp.parse_seed(row["seed_value"]), ours, row["tolerance"])
            except (RuntimeError, ValueError, KeyError):
                ok = False
            if not ok:
                missed.append(row["id"])
        results.append((len(table) - len(missed), net, missed))
    results.sort(key=lambda x: -x[0])
    print("%-10s %s" % ("reproduced", "  ".join("%-14s" % k for k in NETWORK)))
    for n, net, _ in results:
        print("%4d of %d  %s" % (n, len(table), "  ".join("%-14s" % (v or "-") for v in net)))
    print("misses of the best: %s" % " ".join(results[0][2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
