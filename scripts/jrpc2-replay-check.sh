#!/usr/bin/env bash
# jrpc2-replay-check.sh: issue 16's check of rpcfuzz against
# creachadair/jrpc2 over TCP (interop/servers/jrpc2tcp, a server command
# rpcfuzz starts and restarts after each crash). For each of the seeds 1,
# 2 and 3 in turn: rpcfuzz with 8 workers for DURATION, then every finding
# replayed three times with one worker (as `rpcfuzz replay` does, a fresh
# process each time). It fails when a failure finding's replay is not
# REPRODUCED (3/3), unless it is a known oracle false positive (listed in
# interop/fuzz_test.go, logged as TODO), or when a finding's directory
# lacks the raw exchange (input.bin, and reply.txt unless nothing came
# back). It is interop's TestJRPC2TCPReplayCheck, which CI runs for 10 s
# per seed.
#
# usage: scripts/jrpc2-replay-check.sh [-d DURATION] [-o DIR]
#   -d DURATION  each seed's run, a Go duration (default 5m: about 20
#                minutes in all, with the replays)
#   -o DIR       keep each seed's findings in DIR/jrpc2-tcp-seed-N
#                (default: a temporary directory, printed at the end)
#
# It prints the test's log: per seed the inputs sent, the findings by rule,
# each finding with its replay verdict, key, input and reply, and a line
#   seed N: F findings, K failures, D replays that disagree (P of them known oracle false positives)
# Exit status 1 when the check failed.
set -euo pipefail

duration=5m
out=""
usage() { sed -n '2,24s/^# \{0,1\}//p' "$0" >&2; exit 2; }
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
RPCLOAD_INTEROP_JRPC2_CHECK=$duration RPCLOAD_INTEROP_FUZZ_KEEP=$out \
	go test -count=1 -timeout 90m -v -run '^TestJRPC2TCPReplayCheck$' . || status=$?
echo "findings kept in $out"
exit "$status"
