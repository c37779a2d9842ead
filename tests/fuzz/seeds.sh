#!/bin/sh
# seeds.sh COLLC DIR: the fuzz targets' seed corpora in DIR/{coll,msccl,ir,sim}:
# the examples and golden files as they are, the MSCCL fixtures, and each
# example and clean golden file built to MSCCL XML, schedule text and .sim. Inputs over 64 KiB
# are left out (the targets run with -max_len=65536).
set -eu
collc=$1
dir=$2
rm -rf "$dir"
mkdir -p "$dir/coll" "$dir/msccl" "$dir/ir" "$dir/sim"
small() { [ "$(wc -c <"$1")" -le 65536 ]; }
take() { # take FILE TARGET
	if small "$1"; then cp "$1" "$dir/$2/$(echo "$1" | tr / _)"; fi
}
for f in examples/*.coll tests/golden/*.coll; do take "$f" coll; done
for f in tests/fixtures/msccl/*/*.xml tests/golden/*.xml; do [ -e "$f" ] && take "$f" msccl; done
for f in tests/golden/*.ir; do [ -e "$f" ] && take "$f" ir; done
for f in tests/golden/*.sim; do [ -e "$f" ] && take "$f" sim; done
for f in examples/*.coll tests/golden/ok-*.coll tests/golden/msccl-*.coll; do
	b=$(basename "$f" .coll)
	for t in msccl ir sim; do
		out="$dir/$t/built_$b"
		if "$collc" build "$f" --target "$t" -o "$out" >/dev/null 2>&1 && small "$out"; then
			:
		else
			rm -f "$out"
		fi
	done
done
for t in coll msccl ir sim; do
	echo "seeds: $t $(ls "$dir/$t" | wc -l)"
done
