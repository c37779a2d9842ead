#!/usr/bin/env python3
"""osu_imb_compare.py: the unmodified OSU Micro-Benchmarks and IMB-MPI1, with
and without collc's calibrated PMPI drop-in preloaded (issue 37; `make bench`
runs it; docs/mpi.md, Calibration).

For each MPI that a given benchmark binary links (Open MPI or MPICH, told by
`ldd`): collc builds the drop-in of tests/mpi/osu.coll (every kind on 4
ranks; tests/mpi/osu-2.coll with OSU_IMB_RANKS=2) with that MPI's mpicc, calibrates it on this machine
(COLLC_MPI_CALIBRATE at MPI_Finalize of a short osu_barrier or IMB Barrier run,
sizes up to the largest run below), then runs each benchmark with
validation (OSU's -c, IMB built with -DCHECK), without the drop-in
and with it (COLLC_MPI_PLAN: the calibration followed), alternating which goes
first round by round, every rank bound to a core both ways. A size's time is its best round (OSU's average latency,
IMB's t_avg, in us). Printed per benchmark and size: MPI us, drop-in us, their
ratio, the calibration's noise at that size (the spread of its rounds), MPI's
own spread over its rounds, PASS where drop-in <= MPI x (1 + noise), else
OVER, and the same by the larger of the noise and the spread; then each way's median
round with its spread (least, most) and the medians' ratio. A failed validation, a
crash or a timeout makes the exit status 1; an OVER does not (it is a figure:
the machine is shared), but the summary counts them. First, what the drop-in
adds to a call it passes to MPI, in CPU time (tests/mpi/passthru.c on 1 rank:
no load noise), and after each run rank 0's report of the drop-in (calls its
schedules ran, calls passed to MPI).

OSU and IMB are not part of collc: build them outside the repository and
point OSU_DIR at the directories holding osu_allreduce etc. (OSU 7.4's
c/mpi/collective/blocking) and IMB_DIR at those holding IMB-MPI1 (built
with CPPFLAGS=-DCHECK), several separated by ':' (one per MPI). Without them
the script says so and exits 0 (a skip, not a failure).

Knobs (environment): OSU_IMB_ROUNDS (default 2), OSU_IMB_ITERS (OSU -i and
IMB -iter; default 20 under Open MPI, 5 under MPICH, whose ranks poll; 0:
the benchmarks' own counts: OSU's 1000 to 8 KiB and 100 above, after a
tenth as warm-up; IMB's 1000, fewer where they would move over 40 MiB or
take over 10 s),
OSU_IMB_MAX (largest size in bytes; default 1 MiB under Open MPI, 64 KiB
under MPICH), OSU_IMB_CAL_TIME (the calibration's seconds a size,
COLLC_MPI_CALIBRATE_TIME; default 2), OSU_IMB_CAL_LAUNCHES (launches added
into the calibration, COLLC_MPI_CALIBRATE_ADD; default 1), OSU_IMB_OUT (work directory; default build/osu_imb), OSU_IMB_ONLY
(comma-separated: only these OSU labels, e.g. "osu_bcast", and IMB benchmarks,
e.g. "Bcast"; default every one).

usage: python3 tests/osu_imb_compare.py
"""
import os
import re
import statistics
import subprocess
import sys

COLLC = os.environ.get("COLLC", "bin/collc")
RANKS = int(os.environ.get("OSU_IMB_RANKS", "4"))
PLAN = {4: "tests/mpi/osu.coll", 2: "tests/mpi/osu-2.coll"}.get(RANKS)
TIMEOUT = 900

# the MPIs: compiler, launcher, how it passes an environment variable
# Each rank bound to a core, the same cores every run, both ways: unbound,
# the scheduler places 4 ranks on 2 cores anew at every launch, and one
# launch of the same benchmark can take 1.6x another's time (osu_reduce -c
# -T mpi_float at 512 KiB under Open MPI: 337 to 575 us unbound, 509 to
# 532 bound, five launches each).
MPIS = {
    "openmpi": ("mpicc", ["mpirun", "--oversubscribe", "--allow-run-as-root",
                          "--bind-to", "core:overload-allowed", "--map-by", "core",
                          "-np", str(RANKS)],
                lambda k, v: ["-x", "%s=%s" % (k, v)], 20, 1 << 20),
    "mpich": ("mpicc.mpich", ["mpiexec.mpich", "-bind-to", "core", "-n", str(RANKS)],
              lambda k, v: ["-genv", k, v], 5, 1 << 16),
}

# the plan's entries (tests/mpi/osu.coll's order) by schedule name
KIND_OF = {"AR": "allreduce", "RS": "reduce_scatter", "AG": "allgather", "A2A": "alltoall",
           "BC": "bcast", "RD": "reduce"}

# (label, binary, extra args, kind). OSU's default type is MPI_CHAR, which
# the reducing kinds cannot take (the drop-in passes it to MPI): those run
# both ways, by default and with -T mpi_float. OSU 7.4's -c check of an
# MPI_CHAR sum fails from 16 B on 4 ranks under Open MPI 4.1.4 alone, no
# drop-in (MPICH's passes; MPI defines MPI_SUM for MPI_SIGNED_CHAR, not
# MPI_CHAR), so the default-type runs of the reducing kinds are timed
# without -c; every other run validates.
OSU = [("osu_allreduce", "osu_allreduce", [], "allreduce", False),
       ("osu_allreduce -T mpi_float", "osu_allreduce", ["-T", "mpi_float"], "allreduce", True),
       ("osu_reduce", "osu_reduce", [], "reduce", False),
       ("osu_reduce -T mpi_float", "osu_reduce", ["-T", "mpi_float"], "reduce", True),
       ("osu_reduce_scatter -T mpi_float", "osu_reduce_scatter", ["-T", "mpi_float"],
        "reduce_scatter", True),
       ("osu_bcast", "osu_bcast", [], "bcast", True),
       ("osu_allgather", "osu_allgather", [], "allgather", True),
       ("osu_alltoall", "osu_alltoall", [], "alltoall", True)]
IMB = [("Allreduce", "allreduce"), ("Reduce", "reduce"), ("Reduce_scatter", "reduce_scatter"),
       ("Bcast", "bcast"), ("Allgather", "allgather"), ("Alltoall", "alltoall")]


def mpi_of(binary):
    """'openmpi', 'mpich' or None: the MPI library the binary links."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    if "libmpich" in out:
        return "mpich"
    if "libmpi.so" in out:
        return "openmpi"
    return None


def found(var, name):
    """{mpi: path} of the binaries called name in the directories of var."""
    got = {}
    for d in filter(None, os.environ.get(var, "").split(":")):
        path = os.path.join(d, name)
        if os.access(path, os.X_OK):
            mpi = mpi_of(path)
            if mpi and mpi not in got:
                got[mpi] = path
    return got


def run(cmd, log):
    """(exit status, stdout, stderr); a timeout is status 124."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = 124, e.stdout or "", e.stderr or ""
        out, err = [x.decode() if isinstance(x, bytes) else x for x in (out, err)]
    with open(log, "a") as f:
        f.write("$ %s\n%s%s(exit %d)\n" % (" ".join(cmd), out, err, rc))
    return rc, out, err


def build_dropin(mpi, work):
    """The drop-in's path for mpi, or None (said why)."""
    lib = os.path.join(work, "lib")
    so = os.path.join(work, "libosu-%s.so" % mpi)
    log = os.path.join(work, "build.log")
    if run([COLLC, "build", PLAN, "--target", "mpi-lib", "--prefix", "osu", "-o", lib], log)[0]:
        print("cannot build the drop-in: see %s" % log)
        return None
    if run([MPIS[mpi][0], "-std=c11", "-O2", "-fPIC", "-shared", "-DCOLLC_PMPI",
            os.path.join(lib, "osu.c"), "-o", so], log)[0]:
        print("cannot compile the drop-in with %s: see %s" % (MPIS[mpi][0], log))
        return None
    return so


def passthru(mpi, so, work):
    """Prints what the drop-in adds to a call it passes to MPI (CPU time,
    tests/mpi/passthru.c on 1 rank, best of 3 runs each way): with no plan
    to follow (the plan's spans hold the call's size, so the drop-in asks
    MPI about the communicator: collc_lib_pick) and following a plan that
    gives every size to MPI (collc_lib_quick passes it asking nothing)."""
    exe = os.path.join(work, "passthru")
    log = os.path.join(work, "build.log")
    allmpi = os.path.join(work, "all-mpi.txt")
    with open(allmpi, "w") as f:
        f.write("# osu: 6 entries; every size MPI's\n")
        f.writelines("%d 0 9223372036854775807 mpi\n" % e for e in range(6))
    if run([MPIS[mpi][0], "-std=c11", "-O2", "tests/mpi/passthru.c", "-o", exe], log)[0]:
        print("cannot compile tests/mpi/passthru.c: see %s" % log)
        return 1
    best = [[], [], []]
    for _ in range(3):
        for way in (0, 1, 2):
            cmd = MPIS[mpi][1][:-2] + ["-n" if mpi == "mpich" else "-np", "1"]
            cmd += MPIS[mpi][2]("LD_PRELOAD", so) if way else []
            cmd += MPIS[mpi][2]("COLLC_MPI_PLAN", allmpi) if way == 2 else []
            rc, out, _ = run(cmd + [exe], log)
            m = re.search(r"bcast ([0-9.]+) ns allreduce ([0-9.]+) ns after stores (-?[0-9.]+) ns",
                          out)
            if rc or not m:
                print("tests/mpi/passthru.c failed (exit %d): see %s" % (rc, log))
                return 1
            best[way].append(tuple(float(m.group(i)) for i in (1, 2, 3)))
    lib, pick, quick = [[min(b) for b in zip(*best[w])] for w in (0, 1, 2)]
    print("passed to MPI (tests/mpi/passthru.c, 1 rank, CPU time a call, best of 3): bcast "
          "%.1f ns, %.1f with the drop-in asking, %.1f following a plan of MPI's; allreduce "
          "%.1f ns, %.1f, %.1f; allreduce after 4 KiB written %.1f ns, %.1f, %.1f"
          % (lib[0], pick[0], quick[0], lib[1], pick[1], quick[1], lib[2], pick[2], quick[2]))
    return 0


def launch(mpi, env, argv):
    cmd = list(MPIS[mpi][1])
    for k, v in env:
        cmd += MPIS[mpi][2](k, v)
    return cmd + argv


CAL_ROW = re.compile(r"^(\d+) (\d+) (\d+) (collc|mpi) (\w+): (?:\d+ B collc [0-9.]+ us MPI "
                     r"[0-9.]+ us noise ([0-9.]+) %)?")


def calibrate(mpi, so, argv, work, top):
    """The calibration's rows [(kind, lo, hi, who, noise)], or None."""
    cal = os.path.join(work, "cal-%s.txt" % mpi)
    if os.path.exists(cal):
        os.remove(cal)
    env = [("LD_PRELOAD", so), ("COLLC_MPI_CALIBRATE", cal), ("COLLC_MPI_CALIBRATE_MAX", str(top)),
           ("COLLC_MPI_CALIBRATE_TIME", os.environ.get("OSU_IMB_CAL_TIME", "2")),
           ("COLLC_MPI_CALIBRATE_ADD", "1")]
    # launches added to one calibration: its noise then holds how far
    # launches differ, which one launch cannot see
    for _ in range(max(1, int(os.environ.get("OSU_IMB_CAL_LAUNCHES", "1")))):
        rc, _, err = run(launch(mpi, env, argv), os.path.join(work, "run-%s.log" % mpi))
        if rc or not os.path.isfile(cal):
            print("calibration failed (exit %d): %s" % (rc, err.strip()[-300:]))
            return None
    rows = []
    with open(cal) as f:
        for line in f:
            m = CAL_ROW.match(line)
            if m:
                noise = float(m.group(6)) / 100 if m.group(6) else None
                rows.append((KIND_OF.get(m.group(5)), int(m.group(2)), int(m.group(3)),
                             m.group(4), noise))
    print("calibration: %s (%d rows, up to %d B)" % (cal, len(rows), top))
    return cal, rows


def cal_at(rows, kind, nbytes):
    """(who, noise) of the calibration's row for a call of kind and size."""
    for k, lo, hi, who, noise in rows:
        if k == kind and lo <= nbytes < hi:
            return who, noise
    return "none", None


def osu_parse(out):
    """({size: us}, validation failures)."""
    times, bad = {}, 0
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0].isdigit():
            times[int(f[0])] = float(f[1])
            bad += "Fail" in f[2:]
    return times, bad


def imb_parse(out):
    """{benchmark: {bytes: t_avg us}}, defects (IMB -DCHECK's column)."""
    res, cur, bad = {}, None, 0
    for line in out.splitlines():
        m = re.match(r"# Benchmarking (\w+)", line)
        if m:
            cur = res.setdefault(m.group(1), {})
        f = line.split()
        if cur is not None and len(f) >= 6 and f[0].isdigit():
            cur[int(f[0])] = float(f[4])  # t_avg[usec]
            bad += float(f[5]) != 0
    return res, bad


def call_bytes(kind, size):
    """The drop-in's size of a call (nccl-tests': a rank's whole buffer of
    allgather and alltoall) from the size the benchmark prints (a rank's
    block)."""
    return size * RANKS if kind in ("allgather", "alltoall") else size


def ratio_of(ours, lib):
    return ours / lib if lib > 0 else float("inf") if ours > 0 else 1.0


def compare(mpi, label, kind, rounds, rows, summary):
    """Prints one benchmark's table from each way's rounds ([MPI's, the
    drop-in's], each a list of {size: us}): the best round of each, their
    ratio, the calibration's noise at that size, MPI's own spread over its
    rounds (its slowest / its best - 1: what launching the same benchmark
    again moves, which the calibration, inside one launch, cannot see) and
    two verdicts: by the calibration's noise alone, and by the larger of it
    and MPI's spread; then each way's median round with its spread (the
    least and the most) and the medians' ratio, which the load moves less
    than the best's; adds to summary [sizes, PASS by the noise, PASS by
    the noise or the spread, medians at most MPI's]."""
    best = [best_of(rounds[0]), best_of(rounds[1])]
    print("\n# %s, %s, %d ranks" % (label, mpi, RANKS))
    print("#%11s %12s %12s %7s %8s %8s %5s %7s %7s %27s %27s %7s" % (
        "size (B)", "MPI (us)", "drop-in (us)", "ratio", "noise", "spread", "plan", "noise",
        "spread", "MPI median [spread]", "drop-in median [spread]", "ratio"))
    for size in sorted(set(best[0]) & set(best[1])):
        lib, ours = best[0][size], best[1][size]
        who, noise = cal_at(rows, kind, call_bytes(kind, size))
        way = [sorted(r[size] for r in rounds[w] if size in r) for w in (0, 1)]
        spread = way[0][-1] / way[0][0] - 1 if way[0][0] > 0 else 0
        ok = noise is not None and ours <= lib * (1 + noise) or ours <= lib
        ok_spread = ok or ours <= lib * (1 + spread)
        med = [statistics.median(v) for v in way]
        summary[0] += 1
        summary[1] += ok
        summary[2] += ok_spread
        summary[3] += med[1] <= med[0]
        print("%12d %12.2f %12.2f %7.2f %7.1f%% %7.1f%% %5s %7s %7s %27s %27s %7.2f" % (
            size, lib, ours, ratio_of(ours, lib), noise * 100 if noise is not None else 0,
            spread * 100, who, "PASS" if ok else "OVER", "PASS" if ok_spread else "OVER",
            "%.2f [%.2f, %.2f]" % (med[0], way[0][0], way[0][-1]),
            "%.2f [%.2f, %.2f]" % (med[1], way[1][0], way[1][-1]), ratio_of(med[1], med[0])))


def both_ways(mpi, argv_of, env_ours, rounds, log, parse):
    """Runs argv with and without the drop-in, alternating which goes first;
    returns ([best MPI, best drop-in] as parse's, failures, rank 0's report
    of the drop-in's last run: the calls its schedules ran and passed)."""
    got, fails, report = [[], []], 0, ""
    for r in range(rounds):
        for ours in ((0, 1) if r % 2 == 0 else (1, 0)):
            rc, out, err = run(launch(mpi, env_ours if ours else [], argv_of()), log)
            res, bad = parse(out)
            if rc or bad:
                print("FAILED: %s, %s (exit %d, %d validation failures): %s" % (
                    " ".join(argv_of()), "drop-in" if ours else "MPI", rc, bad,
                    (err.strip() or out.strip())[-300:]))
                fails += 1
            got[ours].append(res)
            m = re.search(r"^osu: rank 0: (.*)$", err, re.M)
            report = m.group(1) if ours and m else report
    return got, fails, report


def best_of(results):
    """{size: best time} over rounds of {size: us}."""
    best = {}
    for res in results:
        for size, t in res.items():
            best[size] = min(t, best.get(size, t))
    return best


def chosen():
    """The OSU labels and IMB benchmarks OSU_IMB_ONLY names, or None: all."""
    only = os.environ.get("OSU_IMB_ONLY")
    return set(filter(None, only.split(","))) if only else None


def runs_of(osu, imb, iters, top):
    """[(label, argv, parse, kind or None for IMB's several)] of the benchmarks."""
    runs, only = [], chosen()
    if osu:
        where = os.path.dirname(osu)
        for label, binary, extra, kind, check in OSU:
            if only is not None and label not in only:
                continue
            runs.append((label, [os.path.join(where, binary)] + (["-c"] if check else []) +
                         (["-i", str(iters), "-x", "2"] if iters else []) +
                         ["-m", "1:%d" % top] + extra, osu_parse, kind))
    names = [b for b, _ in IMB if only is None or b in only]
    if imb and names:
        runs.append(("IMB-MPI1", [imb, "-npmin", str(RANKS)] +
                     (["-iter", str(iters)] if iters else []) +
                     ["-msglog", "0:%d" % (top.bit_length() - 1)] + names, imb_parse, None))
    return runs


def schedules(mpi, so, runs, work):
    """Each benchmark once with the drop-in and no calibration (every call
    the plan covers runs collc's schedule), for its validation: failures."""
    env = [("LD_PRELOAD", so), ("COLLC_MPI_REPORT", "1")]
    fails = 0
    for label, argv, parse, _ in runs:
        rc, out, err = run(launch(mpi, env, argv), os.path.join(work, "schedules-%s.log" % mpi))
        bad = parse(out)[1]
        m = re.search(r"^osu: rank 0: (.*)$", err, re.M)
        print("schedules, uncalibrated: %s: %s; rank 0: %s" % (
            label, "validation passed" if rc == 0 and not bad else
            "FAILED (exit %d, %d validation failures)" % (rc, bad), m.group(1) if m else "-"))
        fails += rc != 0 or bad != 0
    return fails


def one_mpi(mpi, osu, imb, work, summary):
    rounds = int(os.environ.get("OSU_IMB_ROUNDS", "2"))
    iters = int(os.environ.get("OSU_IMB_ITERS", str(MPIS[mpi][3])))
    top = int(os.environ.get("OSU_IMB_MAX", str(MPIS[mpi][4])))
    so = build_dropin(mpi, work)
    if not so or passthru(mpi, so, work):
        return 1
    runs = runs_of(osu, imb, iters, top)
    fails = schedules(mpi, so, runs, work)
    probe = ([os.path.join(os.path.dirname(osu), "osu_barrier"), "-i", "1", "-x", "0"] if osu
             else [imb, "-npmin", str(RANKS), "-iter", "1", "Barrier"])
    cal = calibrate(mpi, so, probe, work, top)
    if not cal:
        return 1
    path, rows = cal
    env = [("LD_PRELOAD", so), ("COLLC_MPI_PLAN", path), ("COLLC_MPI_REPORT", "1")]
    log = os.path.join(work, "run-%s.log" % mpi)
    for label, argv, parse, kind in runs:
        got, bad, report = both_ways(mpi, lambda: argv, env, rounds, log, parse)
        fails += bad
        for name, k in ([(None, kind)] if kind else
                        [(b, k) for b, k in IMB if chosen() is None or b in chosen()]):
            rounds_of = [[res.get(name, {}) if name else res for res in got[w]] for w in (0, 1)]
            compare(mpi, label + (" " + name if name else ""), k, rounds_of, rows, summary)
        print("# drop-in, rank 0: %s" % report)
    return 1 if fails else 0


def main():
    if PLAN is None:
        print("OSU_IMB_RANKS takes 2 or 4 (the plans tests/mpi/osu-2.coll and osu.coll)")
        return 2
    osu, imb = found("OSU_DIR", "osu_allreduce"), found("IMB_DIR", "IMB-MPI1")
    if not osu and not imb:
        print("skipped: set OSU_DIR and/or IMB_DIR to OSU 7.4's c/mpi/collective/blocking and "
              "to IMB-MPI1's directory (built outside the repository; docs/mpi.md)")
        return 0
    work = os.path.abspath(os.environ.get("OSU_IMB_OUT", "build/osu_imb"))
    os.makedirs(work, exist_ok=True)
    rc, summary = 0, [0, 0, 0, 0]
    for mpi in MPIS:
        if mpi in osu or mpi in imb:
            print("== %s: OSU %s, IMB %s" % (mpi, osu.get(mpi, "-"), imb.get(mpi, "-")))
            os.makedirs(os.path.join(work, mpi), exist_ok=True)
            rc |= one_mpi(mpi, osu.get(mpi), imb.get(mpi), os.path.join(work, mpi), summary)
    print("\nsummary: %d of %d sizes PASS by the calibration's noise (drop-in <= MPI x (1 + "
          "noise)), %d by the larger of it and MPI's spread over its rounds; %d with the "
          "drop-in's median round at most MPI's; validation %s" % (
              summary[1], summary[0], summary[2], summary[3],
              "failed" if rc else "passed everywhere"))
    return rc


if __name__ == "__main__":
    sys.exit(main())
