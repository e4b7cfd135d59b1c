#!/usr/bin/env bash
# Regenerates docs/report.png, the picture of the HTML report in the README:
# builds rpcload from this tree, starts its reference server on 127.0.0.1,
# runs scenarios/demo.yaml against it for a few seconds, renders the result
# with `rpcload report --html` and screenshots the page in headless Chromium.
#
#   bash scripts/report-picture.sh [SECONDS]     # default 5
#
# Needs Go and /usr/bin/chromium (bash .ci/browser-deps installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

seconds="${1:-5}"
chromium=/usr/bin/chromium
[ -x "$chromium" ] || { echo "report-picture: $chromium is missing; run bash .ci/browser-deps" >&2; exit 1; }

work=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then kill -INT "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/rpcload" ./cmd/rpcload

# Port 0: the server picks a free port and prints its URL.
"$work/rpcload" serve --tcp 127.0.0.1:0 > "$work/serve.out" 2>&1 &
server=$!
url=""
for _ in $(seq 100); do
  url=$(sed -n 's/^serving JSON-RPC over TCP on //p' "$work/serve.out")
  [ -n "$url" ] && break
  kill -0 "$server" 2>/dev/null || { cat "$work/serve.out" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "report-picture: the reference server did not start" >&2; cat "$work/serve.out" >&2; exit 1; }

# The run's exit code says whether it saw findings; the picture wants the
# report either way, so only a missing result file stops the script.
"$work/rpcload" run -f scenarios/demo.yaml "$url" --duration "${seconds}s" --interval 250ms -q -o "$work/demo.json" > /dev/null || true
[ -s "$work/demo.json" ] || { echo "report-picture: the run wrote no result file" >&2; exit 1; }
"$work/rpcload" report "$work/demo.json" --html "$work/report.html"

"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$work/profile" --hide-scrollbars --force-device-scale-factor=1 \
  --window-size=1280,2400 --screenshot="$work/report.png" "file://$work/report.html" 2> "$work/chromium.log" \
  || { cat "$work/chromium.log" >&2; exit 1; }
mkdir -p docs
mv "$work/report.png" docs/report.png
echo "wrote docs/report.png"
