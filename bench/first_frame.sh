#!/usr/bin/env bash
# TUI start to first frame on an empty session (issue 32: ≤ 20 ms): `pith` in a detached tmux
# pane (120×40), a fresh data dir every start (so the sandbox is probed each time, as on a first
# start after boot), timed by the binary's own "first frame drawn ms_since_start=…" log line.
# Prints each start's figure and the median of RUNS starts.
#
#   bash bench/first_frame.sh [PITH_BINARY]     # default target/release/pith
set -euo pipefail
RUNS=${RUNS:-9}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${1:-$root/target/release/pith}
command -v tmux >/dev/null || { echo "tmux is needed" >&2; exit 1; }
source "$root/bench/tmux_frame.sh"
tmp=$(mktemp -d)
trap 'tmux kill-session -t pith-ff 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/ws" "$tmp/home"
cat >"$tmp/pith.toml" <<TOML
model = "mock/test-model"
[provider.mock]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
[models."mock/test-model"]
context = 128000
output = 4096
TOML
: >"$tmp/ms"
for i in $(seq 0 "$RUNS"); do # run 0 warms the page cache and is not counted
    data="$tmp/data$i"
    line=$(first_frame pith-ff "$data/logs/pith.log" \
        "cd '$tmp/ws' && env -i PATH='$PATH' TERM=xterm-256color HOME='$tmp/home' \
         PITH_DATA_DIR='$data' PITH_CONFIG='$tmp/pith.toml' '$bin'") ||
        { echo "no frame drawn" >&2; exit 1; }
    [[ $i -eq 0 ]] && continue
    frame_ms "$line" >>"$tmp/ms"
done
echo "first frame, empty session (ms): $(tr '\n' ' ' <"$tmp/ms")"
sort -n "$tmp/ms" | awk '{a[NR]=$1} END {printf "median %.1f ms, min %.1f, max %.1f (%d starts)\n", a[int((NR+1)/2)], a[1], a[NR], NR}'
