#!/bin/sh
# seeds.sh COLLC DIR: the fuzz targets' seed corpora in DIR/{coll,msccl,ir,sim,ncclxml}:
# the examples and golden files as they are, the MSCCL and NCCL topology fixtures, and each
# example and clean golden file built to MSCCL XML, schedule text and .sim.
# Left out: inputs over 64 KiB (the targets run with -max_len=65536) and
# .coll files that the instrumented collc (COLLC) does not check within
# 2 s: a seed that takes the fuzzer's whole time limit finds nothing (the
# large examples are the benchmarks' business, `make bench`).
set -eu
collc=$1
dir=$2
rm -rf "$dir"
mkdir -p "$dir/coll" "$dir/msccl" "$dir/ir" "$dir/sim" "$dir/ncclxml"
small() { [ "$(wc -c <"$1")" -le 65536 ]; }
quick() { timeout 2 "$collc" check "$1" >/dev/null 2>&1 || [ $? -ne 124 ]; }
take() { # take FILE TARGET
	if small "$1"; then cp "$1" "$dir/$2/$(echo "$1" | tr / _)"; fi
}
for f in examples/*.coll tests/golden/*.coll; do
	if quick "$f"; then take "$f" coll; fi
done
for f in tests/fixtures/msccl/*/*.xml tests/golden/*.xml; do [ -e "$f" ] && take "$f" msccl; done
for f in tests/fixtures/nccl-topo/*.xml; do take "$f" ncclxml; done
for f in tests/golden/*.ir; do [ -e "$f" ] && take "$f" ir; done
for f in tests/golden/*.sim; do [ -e "$f" ] && take "$f" sim; done
for f in examples/*.coll tests/golden/ok-*.coll tests/golden/msccl-*.coll; do
	quick "$f" || continue
	b=$(basename "$f" .coll)
	for t in msccl ir sim; do
		out="$dir/$t/built_$b"
		if timeout 20 "$collc" build "$f" --target "$t" -o "$out" >/dev/null 2>&1 && small "$out"; then
			:
		else
			rm -f "$out"
		fi
	done
done
for t in coll msccl ir sim ncclxml; do
	echo "seeds: $t $(ls "$dir/$t" | wc -l)"
done
