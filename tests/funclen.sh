#!/bin/sh
# funclen.sh [MAX [DIR...]]: lists every function in DIR (default backends/
# and runtime/) whose body is over MAX lines (default 120) and fails if there
# is one. A function is the house style's: its name at column 0 followed by
# '(', its body between a '{' and a '}' at column 0. Long functions doing
# several jobs were split into passes; this keeps them split.
max=${1:-120}
[ $# -gt 0 ] && shift
dirs=${*:-backends backends/mpi runtime}
files=$(for d in $dirs; do ls "$d"/*.c; done)
# shellcheck disable=SC2086
awk -v max="$max" '
FNR == 1 { start = 0 }
/^[A-Za-z_][A-Za-z0-9_]*\(/ { name = $0; sub(/\(.*/, "", name) }
/^\{/ { start = FNR }
/^\}/ {
	if (start && FNR - start + 1 > max) {
		printf "%s:%d: %s is %d lines (at most %d)\n", FILENAME, start, name, FNR - start + 1, max
		bad = 1
	}
	start = 0
}
END { exit bad }' $files
