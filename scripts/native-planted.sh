#!/usr/bin/env bash
# native-planted.sh: how long the native harness (package rpcfuzz under
# go test -fuzz) takes to find each bug planted in internal/fuzztarget,
# from the shipped corpus and the server's two method names only.
#
# usage: scripts/native-planted.sh [-t FUZZTIME] [-k KIND] [BUG...]
#   -t FUZZTIME  the fuzzing budget per bug (default 60s)
#   -k KIND      how the server is given to the harness: handler (default),
#                own (a Target calling Handle with the input's context) or
#                stream
#   BUG          DeepNesting HugeID DuplicateKey LoneSurrogate BigBatch Hang
#                (default: all), the suffixes of the FuzzPlanted* targets in
#                rpcfuzz/planted_test.go
#
# The test binary is built once with coverage instrumentation, and each bug
# is fuzzed in a temporary directory with a fuzz cache of its own: no
# earlier run's corpus helps, and the failing input Go writes under
# testdata/ stays out of the repository. The time to find a bug runs from
# the start of the fuzz run (baseline coverage included) to the first
# failure, before Go minimizes it. Go's minimization settings are left at
# their defaults, as a user's run has them: a shorter -fuzzminimizetime
# kills the worker whenever minimizing a new input takes longer, which
# costs more time than it saves.
set -euo pipefail

fuzztime=60s
kind=handler
usage() { sed -n '2,20s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while getopts t:k:h opt; do
	case $opt in
	t) fuzztime=$OPTARG ;;
	k) kind=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
case $kind in handler | own | stream) ;; *) usage ;; esac
bugs=("$@")
if [ ${#bugs[@]} -eq 0 ]; then
	bugs=(DeepNesting HugeID DuplicateKey LoneSurrogate BigBatch Hang)
fi

cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# -fuzz makes go test -c instrument the binary for coverage.
go test -c -fuzz . -o "$work/rpcfuzz.test" ./rpcfuzz

printf '%-14s %-8s %10s  %s\n' bug target found finding
status=0
for bug in "${bugs[@]}"; do
	dir=$work/$bug
	mkdir -p "$dir"
	start=$EPOCHREALTIME
	# Each output line is stamped with the seconds since the start.
	(cd "$dir" && RPCFUZZ_PLANTED=$kind "$work/rpcfuzz.test" -test.run '^$' \
		-test.fuzz "^FuzzPlanted${bug}\$" -test.fuzztime "$fuzztime" \
		-test.fuzzcachedir "$dir/cache" 2>&1 || true) |
		while IFS= read -r line; do
			now=$EPOCHREALTIME
			awk -v a="$start" -v b="$now" -v l="$line" 'BEGIN { printf "%.1f %s\n", b - a, l }'
		done >"$dir/log"
	found=$(awk '/fuzz: minimizing|--- FAIL/ { print $1 "s"; exit }' "$dir/log")
	finding=$(grep -m1 -o 'rpcfuzz: [a-z_]*' "$dir/log" | sed 's/rpcfuzz: //' || true)
	what=$(grep -m1 -o 'planted bug [a-z_]*' "$dir/log" || true)
	if [ -z "$found" ]; then
		found="not in $fuzztime"
		status=1
	fi
	printf '%-14s %-8s %10s  %s\n' "$bug" "$kind" "$found" "$finding${what:+ ($what)}"
done
exit $status
