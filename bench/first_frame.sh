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
    tmux new-session -d -s pith-ff -x 120 -y 40 \
        "cd '$tmp/ws' && env -i PATH='$PATH' TERM=xterm-256color HOME='$tmp/home' \
         PITH_DATA_DIR='$data' PITH_CONFIG='$tmp/pith.toml' '$bin'"
    for _ in $(seq 400); do
        grep -q "first frame drawn" "$data/logs/pith.log" 2>/dev/null && break
        sleep 0.025
    done
    tmux send-keys -t pith-ff C-c C-c 2>/dev/null || true
    for _ in $(seq 200); do tmux has-session -t pith-ff 2>/dev/null || break; sleep 0.025; done
    tmux kill-session -t pith-ff 2>/dev/null || true
    line=$(grep "first frame drawn" "$data/logs/pith.log" | tail -1) || { echo "no frame drawn" >&2; exit 1; }
    [[ $i -eq 0 ]] && continue
    sed -E 's/.*ms_since_start=([0-9.]+).*/\1/' <<<"$line" >>"$tmp/ms"
done
echo "first frame, empty session (ms): $(tr '\n' ' ' <"$tmp/ms")"
sort -n "$tmp/ms" | awk '{a[NR]=$1} END {printf "median %.1f ms, min %.1f, max %.1f (%d starts)\n", a[int((NR+1)/2)], a[1], a[NR], NR}'
