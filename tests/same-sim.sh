#!/bin/sh
# same-sim.sh COLLC OUTDIR [EXAMPLES...]: what tests/same-output.sh is for the
# backends, this is for the simulator: runs `collc sim` with the collc binary
# COLLC on every example (default examples/*.coll) in every variant the CLI
# and the network offer, and on MSCCL XML files, writing one file per run
# (the CSV or JSON and the diagnostics, then the exit status) into OUTDIR.
# Two binaries' directories compare with `diff -r`: a refactor of the
# simulator that changes no result leaves no difference. It prints the
# number of runs.
#   tests/same-sim.sh /tmp/collc-main /tmp/sim-main
#   tests/same-sim.sh bin/collc /tmp/sim-mine && diff -r /tmp/sim-main /tmp/sim-mine
#
# The variants, each at 4 KiB and 1 MiB with --csv (docs/cli.md, docs/sim.md):
#   packet and flow mode x --sync rounds and deps; --links private; a
#   --reduce-rate; packet mode under the network's `switching =
#   store_and_forward` and under cut-through with `buffer = 2 packets` (so
#   that credits hold packets back), each a copy of the example with the
#   setting added to its file-wide network block; the four mode and sync
#   pairs once more with --json at 1 MiB (round ends and every link's bytes).
# The MSCCL XML files: tests/fixtures/msccl/generated/*.xml on ring(8)
# (examples/ring-classic.coll) and an allreduce collc builds for it, in
# packet and flow mode, by rounds and dependencies.
set -u
if [ $# -lt 2 ]; then
	echo "usage: $0 COLLC OUTDIR [EXAMPLE.coll...]" >&2
	exit 2
fi
case $1 in
/*) collc=$1 ;;
*) collc=$(pwd)/$1 ;;
esac
mkdir -p "$2"
out=$(cd "$2" && pwd)
root=$(pwd)
shift 2
[ $# -gt 0 ] || set -- examples/*.coll
# the inputs are copied here and run by their base names, so that no
# diagnostic names a path that differs between two runs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs=0

# one run: NAME then collc's arguments; its output and exit status in NAME
run() {
	name=$1
	shift
	(cd "$tmp" && "$collc" sim "$@") >"$out/$name" 2>&1
	echo "exit $?" >>"$out/$name"
	runs=$((runs + 1))
}

# the example with a setting added to its file-wide network block (or in a
# block of its own when it has none)
with_net() {
	if grep -q '^network {' "$1"; then
		sed "s/^network {/network { $2;/" "$1"
	else
		printf 'network { %s; }\n' "$2"
		cat "$1"
	fi
}

sizes=4KiB,1MiB
for f in "$@"; do
	ex=$(basename "$f" .coll)
	cp "$f" "$tmp/$ex.coll"
	with_net "$f" "switching = store_and_forward" >"$tmp/$ex-saf.coll"
	with_net "$f" "buffer = 2 packets" >"$tmp/$ex-buf2.coll"
	for mode in packet flow; do
		for sync in rounds deps; do
			run "$ex.$mode.$sync.csv" "$ex.coll" --sizes $sizes --csv --mode $mode --sync $sync
			run "$ex.$mode.$sync.json" "$ex.coll" --sizes 1MiB --json --mode $mode --sync $sync
			run "$ex.$mode.$sync.private" "$ex.coll" --sizes $sizes --csv --mode $mode \
				--sync $sync --links private
			run "$ex.$mode.$sync.reduce" "$ex.coll" --sizes $sizes --csv --mode $mode \
				--sync $sync --reduce-rate 100GBps
		done
	done
	for sync in rounds deps; do
		run "$ex.saf.$sync" "$ex-saf.coll" --sizes $sizes --csv --sync $sync
		run "$ex.saf.$sync.reduce" "$ex-saf.coll" --sizes $sizes --csv --sync $sync \
			--reduce-rate 100GBps
		run "$ex.buf2.$sync" "$ex-buf2.coll" --sizes $sizes --csv --sync $sync
	done
	run "$ex.saf.rounds.private" "$ex-saf.coll" --sizes $sizes --csv --links private
done

cp "$root/examples/ring-classic.coll" "$tmp/ring8.coll"
(cd "$tmp" && "$collc" build ring8.coll --target msccl --collective AR -o ring8-AR.xml) \
	>"$out/xml.build" 2>&1
echo "exit $?" >>"$out/xml.build"
for x in "$root"/tests/fixtures/msccl/generated/*.xml "$tmp/ring8-AR.xml"; do
	b=$(basename "$x" .xml)
	[ "$x" = "$tmp/ring8-AR.xml" ] || cp "$x" "$tmp/$b.xml"
	legacy=
	case $b in legacy-*) legacy=--legacy ;; esac
	for mode in packet flow; do
		for sync in rounds deps; do
			run "xml.$b.$mode.$sync" "$b.xml" --topology ring8.coll $legacy --sizes $sizes \
				--csv --mode $mode --sync $sync
		done
	done
done
echo "$runs runs"
