#!/bin/sh
# Runs the benchmark suite from the repository root, whatever the current
# directory: bench/run.sh [--quick] [--only N,M] [flags]. The suite itself
# installs wrk (apt-get), vegeta and hey (go install into bench/.tools).
set -eu
cd "$(dirname "$0")/.."
exec go run ./bench "$@"
