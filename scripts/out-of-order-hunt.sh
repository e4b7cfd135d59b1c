#!/usr/bin/env bash
# out-of-order-hunt.sh: the false-positive hunt of issue 16. rpcfuzz fuzzes
# the reference server answering every message of an input in a random
# order (testsrv.Config.Shuffle) on every stream transport (tcp, tcp+lsp,
# ws, stdio), with eight workers, again and again until the time is up.
# Every failure finding is a false positive: the server is correct.
#
# usage: scripts/out-of-order-hunt.sh [-d DURATION] [-n EXECS] [-b BURNERS] [-o DIR]
#   -d DURATION  how long to hunt: seconds, or a number with s, m or h
#                (default 10m); a round under way is finished
#   -n EXECS     inputs per transport per round (default 3000)
#   -b BURNERS   run beside this many CPU burners (../shared/tools/busy),
#                as on a crowded CI runner (default 0: none)
#   -o DIR       keep every round's findings under DIR (default: a
#                temporary directory, printed at the end)
#
# It prints one line per round and, at the end, the rounds, the inputs sent
# and every failure finding with its directory (finding.json, input,
# reply.txt: the raw exchange that would prove it). Exit status 1 when a
# failure was found.
set -euo pipefail

duration=10m
execs=3000
burners=0
out=""
usage() { sed -n '2,20s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while getopts d:n:b:o:h opt; do
	case $opt in
	d) duration=$OPTARG ;;
	n) execs=$OPTARG ;;
	b) burners=$OPTARG ;;
	o) out=$OPTARG ;;
	*) usage ;;
	esac
done
cd "$(dirname "$0")/.."
[ -n "$out" ] || out=$(mktemp -d)
mkdir -p "$out"
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
go test -c -o "$bin" ./internal/fuzz
case $duration in
*h) seconds=$((${duration%h} * 3600)) ;;
*m) seconds=$((${duration%m} * 60)) ;;
*s) seconds=${duration%s} ;;
*) seconds=$duration ;;
esac
busy=()
if [ "$burners" -gt 0 ]; then
	busy=(../shared/tools/busy "$burners" --)
fi

end=$((SECONDS + seconds))
rounds=0
failed=0
while [ $SECONDS -lt $end ]; do
	rounds=$((rounds + 1))
	if RPCFUZZ_OUT_OF_ORDER_EXECS=$execs RPCFUZZ_OUT_OF_ORDER_OUT="$out" \
		"${busy[@]}" "$bin" -test.run '^TestOutOfOrderServer$' -test.count=1 >"$out/round-$rounds.txt" 2>&1; then
		echo "round $rounds: clean"
	else
		failed=$((failed + 1))
		echo "round $rounds: FAILED (see $out/round-$rounds.txt)"
	fi
done
echo "rounds: $rounds, inputs sent: $((rounds * execs * 4)), rounds with a failure finding: $failed"
grep -h "finding " "$out"/round-*.txt || true
echo "findings kept in $out"
[ "$failed" -eq 0 ]
