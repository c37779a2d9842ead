#!/bin/sh
# same-output.sh COLLC OUTDIR [EXAMPLES...]: builds every collective of every
# example (default examples/*.coll) for every target (msccl, mpi with and
# without --with-main, sim, ir, dot) with the collc binary COLLC into OUTDIR,
# one file per (example, collective, target), and the diagnostics and exit
# status of each build beside it. Two binaries' directories compare with
# `diff -r`: a refactor that changes no output leaves no difference.
#   tests/same-output.sh /tmp/collc-main /tmp/out-main
#   tests/same-output.sh bin/collc /tmp/out-mine && diff -r /tmp/out-main /tmp/out-mine
# tests/same-sim.sh does the same for the simulator's results (docs/testing.md).
set -u
if [ $# -lt 2 ]; then
	echo "usage: $0 COLLC OUTDIR [EXAMPLE.coll...]" >&2
	exit 2
fi
collc=$1
out=$2
shift 2
[ $# -gt 0 ] || set -- examples/*.coll
mkdir -p "$out"
for f in "$@"; do
	ex=$(basename "$f" .coll)
	# the collectives: the first column of check's table (rows up to the blank line)
	names=$("$collc" check "$f" 2>/dev/null | awk 'NR > 2 && /^[^ ]/ { print $1 }')
	for c in $names; do
		for t in msccl mpi mpi-main sim ir dot; do
			target=${t%-main}
			extra=
			[ "$t" = mpi-main ] && extra=--with-main
			o="$out/$ex.$c.$t"
			# shellcheck disable=SC2086
			"$collc" build "$f" --target "$target" --collective "$c" $extra -o "$o.out" \
				>"$o.log" 2>&1
			echo "exit $?" >>"$o.log"
			# the diagnostics name no temporary paths; outputs that were not written are absent
		done
	done
done
