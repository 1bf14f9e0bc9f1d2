#!/bin/sh
# Runs every fuzz target of the module for a short time (default 10s each)
# beyond its seed corpus, one target at a time, and stops at the first
# failure (go test prints the failing input and where it saved it).
#
#   ./scripts/fuzz-smoke.sh [DURATION]
set -eu
dur=${1:-10s}
cd "$(dirname "$0")/.."
targets=$(grep -rl --include='*_test.go' '^func Fuzz' . | sort)
n=0
total=$(grep -rh --include='*_test.go' '^func Fuzz' . | wc -l)
for f in $targets; do
	pkg=./$(dirname "${f#./}")
	for name in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$f"); do
		n=$((n + 1))
		echo "fuzz-smoke: [$n/$total] $pkg $name ($dur)"
		go test -run '^$' -fuzz "^$name\$" -fuzztime "$dur" "$pkg"
	done
done
echo "fuzz-smoke: $n targets ran $dur each without a failure"
