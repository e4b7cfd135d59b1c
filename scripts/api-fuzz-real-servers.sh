#!/usr/bin/env bash
# api-fuzz-real-servers.sh: issue 18's opt-in run of API-aware fuzzing
# against the real servers of interop/: go-ethereum's rpc package (its
# test services, with interop/testdata/geth-openrpc.json), mcp-go, the
# go-sdk, server-everything and gopls (the tests TestAPIFuzz* of
# interop/apifuzz_test.go and apifuzz_gopls_test.go), each for DURATION
# instead of CI's 15 s, with the baselines of
# interop/testdata/fuzz-baselines/api-*.txt: every finding must be
# explained there (or be a known oracle false positive, logged as TODO).
# The servers listen on 127.0.0.1 or are child processes; run
# .ci/interop-deps first (server-everything, gopls): a missing server
# fails the run (RPCLOAD_INTEROP_STRICT=1).
#
# usage: scripts/api-fuzz-real-servers.sh [-d DURATION] [-o DIR]
#   -d DURATION  each server's run, a Go duration (default 2m: about 7
#                minutes in all, two runs at a time)
#   -o DIR       keep each run's output (summary.json, findings) in
#                DIR/api-NAME, and the test's whole log in DIR/test.log
#                (default: a temporary directory, printed at the end)
#
# It prints per server the inputs sent and their rate, each method's calls
# (valid, invalid, unjudged), results, errors by code and findings, the
# findings (accepted by which #accept line, or an oracle false positive),
# and whether the test passed. Exit status 1 when a test failed.
set -euo pipefail

duration=2m
out=""
usage() { sed -n '2,25s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while getopts d:o:h opt; do
	case $opt in
	d) duration=$OPTARG ;;
	o) out=$OPTARG ;;
	*) usage ;;
	esac
done
cd "$(dirname "$0")/../interop"
[ -n "$out" ] || out=$(mktemp -d)
mkdir -p "$out"
status=0
RPCLOAD_INTEROP_STRICT=1 RPCLOAD_INTEROP_API_FUZZ_DURATION=$duration RPCLOAD_INTEROP_FUZZ_KEEP=$out \
	go test -count=1 -timeout 90m -v -run 'TestAPIFuzz' . >"$out/test.log" 2>&1 || status=$?
# The figures: rpcfuzz's summary line of each run, the API's coverage
# lines, the findings and how the test judged them, the verdicts.
grep -E '^\s+[a-z_]+_test\.go:[0-9]+: (rpcfuzz api-|api |accepted |oracle false positive|finding |warning |baselined |never reached|the API has)|^\s*--- (PASS|FAIL|SKIP)|^(ok|FAIL|panic)' "$out/test.log" |
	sed -E 's/^\s+[a-z_]+_test\.go:[0-9]+: /  /' || true
echo "the test's whole log: $out/test.log; each run's output: $out/api-NAME"
exit "$status"
