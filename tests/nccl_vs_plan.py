#!/usr/bin/env python3
"""Predicted against measured busbw, per size: collc's plan beside nccl-tests.

usage: python3 tests/nccl_vs_plan.py PLAN NCCL_OUT [--collective NAME] [--in-place]

PLAN is what `collc tune ... --csv -o PLAN` or `--json -o PLAN` wrote; NCCL_OUT
what an nccl-tests binary (all_reduce_perf, all_gather_perf, ...) printed, or -
for standard input. nccl-tests prints a row per size:

    size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong
                                 out-of-place             in-place

(older versions have no root column and an `error` column for #wrong; rows
are read from their end, so both are read). The measured busbw is the
out-of-place one (--in-place: the in-place one). The predicted busbw is the
plan's at the same size: its program's in the executor model where tune
ranked by the program (tune --msccl-dir: column program_busbw_GBps), else
its schedule's (busbw_GBps). A measured size tune did not simulate has no
prediction: tune with the sizes nccl-tests runs (-b 1K -e 1G -f 2 is
--sizes 1KiB..1GiB). The ratio is measured over predicted. Exit status 0,
1 for a file that cannot be read as either, 2 for a usage error.
"""
import csv
import json
import re
import sys

USAGE = "usage: nccl_vs_plan.py PLAN NCCL_OUT [--collective NAME] [--in-place]"


def fail(msg, status=1):
    sys.stderr.write("nccl_vs_plan.py: %s\n" % msg)
    sys.exit(status)


def read_text(path):
    try:
        if path == "-":
            return sys.stdin.read()
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        fail("%s: %s" % (path, e.strerror))


def number(s):
    try:
        return float(s)
    except ValueError:
        return None


def read_nccl(text, in_place):
    """{size: busbw} from nccl-tests' rows; the last row of a size wins."""
    rows = {}
    for line in text.splitlines():
        line = re.sub(r"^\s*\[\d+\]\s*", "", line)  # mpirun --tag-output
        f = line.split()
        if not f or f[0].startswith("#") or len(f) < 10:
            continue
        size = number(f[0])
        # out-of-place: time algbw busbw wrong, then in-place the same
        busbw = number(f[-2] if in_place else f[-6])
        if size is None or busbw is None or size != int(size):
            continue
        rows[int(size)] = busbw
    return rows


def read_plan(text, only):
    """(name, {size: (choice, predicted busbw, ranked by)}) of one collective."""
    per = {}
    if text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
        except ValueError as e:
            fail("the plan is not JSON tune wrote: %s" % e)
        for c in doc.get("collectives", []):
            for s in c.get("sizes", []):
                prog = s.get("program_busbw_GBps")
                per.setdefault(c["name"], {})[int(s["size"])] = (
                    s["choice"], prog if prog is not None else s["busbw_GBps"],
                    "program" if prog is not None else "schedule")
    else:
        rows = list(csv.DictReader(text.splitlines()))
        if not rows or "busbw_GBps" not in rows[0] or "size" not in rows[0]:
            fail("the plan is neither tune's CSV (a busbw_GBps column) nor its JSON")
        for r in rows:
            prog = r.get("program_busbw_GBps") or ""
            per.setdefault(r["collective"], {})[int(float(r["size"]))] = (
                r["choice"], float(prog) if prog else float(r["busbw_GBps"]),
                "program" if prog else "schedule")
    if only:
        if only not in per:
            fail("the plan has no collective %s (it has %s)" % (only, ", ".join(sorted(per))))
        return only, per[only]
    if len(per) != 1:
        fail("the plan has %d collectives (%s): choose one with --collective NAME"
             % (len(per), ", ".join(sorted(per))))
    name = next(iter(per))
    return name, per[name]


def main(argv):
    args, only, in_place = [], None, False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--collective" and i + 1 < len(argv):
            only = argv[i + 1]
            i += 1
        elif a == "--in-place":
            in_place = True
        elif a in ("-h", "--help"):
            print(USAGE)
            return 0
        elif a.startswith("--"):
            fail("unknown option %s\n%s" % (a, USAGE), 2)
        else:
            args.append(a)
        i += 1
    if len(args) != 2:
        fail(USAGE, 2)
    name, plan = read_plan(read_text(args[0]), only)
    measured = read_nccl(read_text(args[1]), in_place)
    if not measured:
        fail("%s: no nccl-tests rows (size count type ... busbw #wrong)" % args[1])
    place = "in-place" if in_place else "out-of-place"
    print("%s: predicted (collc tune) against measured (nccl-tests, %s) busbw in GB/s"
          % (name, place))
    width = max([len("choice")] + [len(c) for c, _, _ in plan.values()])
    print("%12s  %-*s  %9s  %9s  %6s" % ("size", width, "choice", "predicted", "measured",
                                        "ratio"))
    matched, ratios = 0, []
    for size in sorted(measured):
        m = measured[size]
        if size not in plan:
            print("%12d  %-*s  %9s  %9.2f  %6s" % (size, width, "-", "-", m, "-"))
            continue
        choice, p, _ = plan[size]
        ratio = m / p if p > 0 else 0
        matched += 1
        ratios.append(ratio)
        print("%12d  %-*s  %9.2f  %9.2f  %6.2f" % (size, width, choice, p, m, ratio))
    by = sorted({b for _, _, b in plan.values()})
    print("predicted: the plan's busbw by its %s; ratio: measured / predicted" % " and ".join(by))
    if matched:
        print("%d sizes in both; ratio from %.2f to %.2f" % (matched, min(ratios), max(ratios)))
    else:
        print("no size in both: tune with the sizes nccl-tests ran (--sizes A..B)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
