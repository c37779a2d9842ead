#!/bin/sh
# mutate.sh: a mutation sample over the passes. Flips one operator or
# constant at a time (+ and -, < and <=, > and >=, == and !=, && and ||,
# 0 and 1, N and N + 1) in ir/, the simulator's engine (runtime/sim_*.c but
# its text reader) and backends/, rebuilds the
# test runner in a copy of the tree, runs the suites that cover the file,
# and lists the mutants no test noticed (survivors). A survivor is either a
# missing test or a change that cannot matter: close it with a test, or say
# why in docs/testing.md.
#
#   tests/mutate.sh [COUNT [SEED]]       (make mutate MUTANTS=40 SEED=1)
#
# The sample is deterministic for a COUNT and SEED. Lines with string
# literals and comments are left alone, and so are preprocessor lines.
# Work happens in build/mutate (the tree is copied there); the report is
# build/mutate/report.txt. Exit status 0 whatever survives: survivors are
# for reading, not a gate.
set -eu
count=${1:-40}
seed=${2:-1}
root=$(pwd)
work=$root/build/mutate
src=$work/src
files=${MUTATE_FILES:-$(ls ir/*.c runtime/sim_*.c backends/*.c | grep -v sim_text)}
# every suite but the slow ones (msccl, mpi, cli, limits, docs), quickest
# first: a pass's own suite (layout, usersched, optical, ...) must run, or
# what only it checks shows up as a survivor
fast=${MUTATE_SUITES:-"topo layout group backend symm robust perf chakra disjoint pipelined usersched optical alg golden sim"}
# a suite's limits: MUTATE_CPU seconds of CPU per process (ulimit -t: a
# mutant that loops is stopped after the same work however loaded the
# machine is), and a wall-clock backstop for one that waits without working
# (a deadlock): MUTATE_TIMEOUT seconds times 1 + the load average per core
cpu_limit=${MUTATE_CPU:-300}
per_suite_timeout=${MUTATE_TIMEOUT:-300}
# MUTATE_SAN=1: build the mutants with the sanitizers, so that a flip that
# only reads out of bounds is caught too (slower)
if [ -n "${MUTATE_SAN:-}" ]; then
	mk="make -s -j2 SAN=1 build/san/tests/run build/san/bin/collc"
	runner=build/san/tests/run
else
	mk="make -s -j2 build/default/tests/run bin/collc"
	runner=build/default/tests/run
fi

rm -rf "$work"
mkdir -p "$src"
git ls-files | while read -r f; do
	mkdir -p "$src/$(dirname "$f")"
	cp "$f" "$src/$f"
done
cd "$src" # from here on the copy alone: edits to the tree meanwhile do not matter

# every site: FILE LINE COL FROM TO
# shellcheck disable=SC2086
awk -v seed="$seed" '
function site(from, to, at) { printf "%s\t%d\t%d\t%s\t%s\n", FILENAME, FNR, at, from, to }
{
	line = $0
	if (line ~ /^[ \t]*(#|\/\*|\*|\/\/)/ || index(line, "\"") || index(line, "\047"))
		next
	cut = index(line, "/*"); if (cut) line = substr(line, 1, cut - 1)
	cut = index(line, "//"); if (cut) line = substr(line, 1, cut - 1)
	n = length(line)
	for (i = 1; i <= n; i++) {
		c = substr(line, i, 1); two = substr(line, i, 2)
		prev = i > 1 ? substr(line, i - 1, 1) : " "
		nx = substr(line, i + 1, 1)
		if (two == "&&") { site("&&", "||", i); i++; continue }
		if (two == "||") { site("||", "&&", i); i++; continue }
		if (two == "==") { site("==", "!=", i); i++; continue }
		if (two == "!=") { site("!=", "==", i); i++; continue }
		if (two == "<=") { site("<=", "<", i); i++; continue }
		if (two == ">=") { site(">=", ">", i); i++; continue }
		if (two == "<<" || two == ">>" || two == "->" || two == "++" || two == "--" || \
		    two == "+=" || two == "-=") { i++; continue }
		if (c == "<" && prev != "<") { site("<", "<=", i); continue }
		if (c == ">" && prev != ">" && prev != "-") { site(">", ">=", i); continue }
		if (c == "+" && prev == " " && nx == " ") { site("+", "-", i); continue }
		if (c == "-" && prev == " " && nx == " ") { site("-", "+", i); continue }
		if (c ~ /[0-9]/ && prev !~ /[A-Za-z0-9_.]/) {
			j = i
			while (j <= n && substr(line, j, 1) ~ /[0-9]/) j++
			after = substr(line, j, 1)
			if (after !~ /[A-Za-z_.xX]/) {
				num = substr(line, i, j - i)
				site(num, num == "1" ? "0" : num == "0" ? "1" : sprintf("%.0f", num + 1), i)
			}
			i = j - 1
		}
	}
}' $files >"$work/sites"

# a deterministic sample of COUNT sites
awk -v seed="$seed" 'BEGIN { srand(seed) } { printf "%.9f\t%s\n", rand(), $0 }' "$work/sites" |
	sort -k1,1 | head -n "$count" | cut -f2- >"$work/sample"

echo "mutate: $(wc -l <"$work/sites") sites in $(echo "$files" | wc -w) files; sampling $count (seed $seed)"
if ! nice $mk >"$work/build.log" 2>&1; then
	echo "mutate: the unmutated tree does not build (see $work/build.log)"
	exit 1
fi
limited() {
	wall=$(awk -v t="$per_suite_timeout" -v n="$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)" \
		'{ printf "%d", t * (1 + $1 / n) }' /proc/loadavg 2>/dev/null || echo "$per_suite_timeout")
	(ulimit -t "$cpu_limit" && exec timeout "$wall" nice "$@")
}
suites_for() {
	case $1 in
	backends/to_msccl*.c) echo "$fast msccl" ;;
	backends/to_mpi.c) echo "$fast mpi" ;;
	backends/to_dot.c | backends/backend.c) echo "$fast cli" ;;
	*) echo "$fast" ;;
	esac
}
for s in $fast; do
	if ! limited $runner "$s" >"$work/base.log" 2>&1; then
		echo "mutate: suite $s fails before any mutation (see $work/base.log)"
		exit 1
	fi
done

: >"$work/report.txt"
k=0 caught=0 survived=0 stillborn=0
while IFS="$(printf '\t')" read -r file line col from to <&3; do
	k=$((k + 1))
	cp "$file" "$file.orig"
	awk -v l="$line" -v c="$col" -v f="$from" -v t="$to" \
		'NR == l { $0 = substr($0, 1, c - 1) t substr($0, c + length(f)) } { print }' \
		"$file.orig" >"$file"
	what="$file:$line:$col '$from' -> '$to': $(sed -n "${line}p" "$file" | sed 's/^[ \t]*//')"
	if ! nice $mk >"$work/m.log" 2>&1; then
		verdict=stillborn
		stillborn=$((stillborn + 1))
	else
		verdict=survived
		for s in $(suites_for "$file"); do
			if ! limited $runner "$s" >"$work/m.log" 2>&1; then
				verdict="caught by $s"
				break
			fi
		done
		if [ "$verdict" = survived ]; then
			survived=$((survived + 1))
		else
			caught=$((caught + 1))
		fi
	fi
	mv "$file.orig" "$file"
	touch "$file"
	printf '%3d %-14s %s\n' "$k" "$verdict" "$what" | tee -a "$work/report.txt"
done 3<"$work/sample" </dev/null # (mpirun reads standard input)
echo "mutate: $k mutants: $caught caught, $survived survived, $stillborn did not build" |
	tee -a "$work/report.txt"
grep ' survived ' "$work/report.txt" || true
