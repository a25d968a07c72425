#!/usr/bin/env bash
# Times the real pith binary (release build): wall time and peak RSS, medians of RUNS runs.
#
#   bash bench/run.sh            # print the table
#   bash bench/run.sh --write    # also put it into BENCHMARKS.md (between the run.sh markers)
#
# (a) `pith --version`                          target < 20 ms  / 15 MiB
# (b) `pith run` one short turn against a mock  target < 150 ms / 40 MiB
# (c) `pith run` consuming a 5,000 tokens/s stream of 10,000 tokens: CPU share of the stream
# (d) `pith -c` on a stored session of 100,000 parts, in tmux (120×40): start to first frame,
#     as the binary logs it ("first frame drawn ms_since_start=…"), and peak RSS
#     target < 300 ms. The session is written by `cargo run --example bench_session`.
#
# The mock is bench/mock_server.py (python3, stdlib only) on a free port of 127.0.0.1. Every run
# gets a temp HOME, PITH_DATA_DIR and PITH_CONFIG, so nothing of the user's setup is read.
set -euo pipefail

RUNS=${RUNS:-10}
WRITE=0
[[ "${1:-}" == "--write" ]] && WRITE=1

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source "$root/bench/tmux_frame.sh"

apt_install() { # PACKAGE
    echo "installing $1 (Debian package)" >&2
    if [[ $(id -u) -eq 0 ]]; then apt-get install -y "$1" >/dev/null; else sudo apt-get install -y "$1" >/dev/null; fi
}
[[ -x /usr/bin/time ]] || apt_install time
command -v tmux >/dev/null || apt_install tmux

echo "building release…" >&2
cargo build --release --quiet --bin pith --example bench_session
bin="$root/target/release/pith"

tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT

start_mock() { # NAME ARGS… → sets port_NAME
    local name=$1; shift
    python3 "$root/bench/mock_server.py" --port-file "$tmp/$name.port" "$@" >/dev/null 2>"$tmp/$name.log" &
    pids+=($!)
    for _ in $(seq 100); do [[ -s "$tmp/$name.port" ]] && break; sleep 0.05; done
    [[ -s "$tmp/$name.port" ]] || { echo "mock $name did not start" >&2; cat "$tmp/$name.log" >&2; exit 1; }
    printf -v "port_$name" '%s' "$(cat "$tmp/$name.port")"
}

write_config() { # PATH PORT
    cat >"$1" <<TOML
model = "mock/test-model"

[provider.mock]
kind = "openai"
base_url = "http://127.0.0.1:$2/v1"

[models."mock/test-model"]
context = 128000
output = 8192
TOML
}

start_mock short --tokens 8
start_mock stream --tokens 10000 --rate 5000

mkdir -p "$tmp/home/.config" "$tmp/ws"
write_config "$tmp/short.toml" "$port_short"
write_config "$tmp/stream.toml" "$port_stream"

# Runs pith in the sandbox: CONFIG ARGS…
sandbox() {
    local cfg=$1; shift
    rm -rf "$tmp/data"
    (cd "$tmp/ws" && env -i PATH="$PATH" HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" \
        XDG_DATA_HOME="$tmp/home/.local/share" PITH_DATA_DIR="$tmp/data" PITH_CONFIG="$cfg" \
        "$@")
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# measure NAME CONFIG ARGS… : RUNS timed runs (wall, ms), then RUNS runs under /usr/bin/time -v
# (peak RSS, user+sys CPU). One untimed warm-up run first.
measure() {
    local name=$1 cfg=$2; shift 2
    sandbox "$cfg" "$bin" "$@" >/dev/null 2>"$tmp/err" || { echo "pith $* failed:" >&2; cat "$tmp/err" >&2; exit 1; }
    : >"$tmp/$name.wall"; : >"$tmp/$name.rss"; : >"$tmp/$name.cpu"
    for _ in $(seq "$RUNS"); do
        local t0=$EPOCHREALTIME
        sandbox "$cfg" "$bin" "$@" >/dev/null 2>&1
        local t1=$EPOCHREALTIME
        awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f\n", (b-a)*1000}' >>"$tmp/$name.wall"
    done
    for _ in $(seq "$RUNS"); do
        sandbox "$cfg" /usr/bin/time -v -o "$tmp/tv" "$bin" "$@" >/dev/null 2>&1
        awk -F': ' '/Maximum resident set size/ {printf "%.1f\n", $2/1024}' "$tmp/tv" >>"$tmp/$name.rss"
        awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {printf "%.0f\n", (u+s)*1000}' "$tmp/tv" >>"$tmp/$name.cpu"
    done
    printf -v "wall_$name" '%s' "$(median <"$tmp/$name.wall")"
    printf -v "rss_$name" '%s' "$(median <"$tmp/$name.rss")"
    printf -v "cpu_$name" '%s' "$(median <"$tmp/$name.cpu")"
}

verdict() { awk -v v="$1" -v t="$2" 'BEGIN {print (v < t) ? "pass" : "MISS"}'; }

load0=$(cut -d' ' -f1 /proc/loadavg)
echo "timing ($RUNS runs each)…" >&2
measure version "$tmp/short.toml" --version
measure turn "$tmp/short.toml" run "Say hello."
saved=$RUNS; RUNS=${STREAM_RUNS:-3}
measure stream "$tmp/stream.toml" run "Stream a long answer."
RUNS=$saved

# (d) resume: `pith -c` in a detached tmux pane on a session of 100,000 parts; each run waits
# for the binary's "first frame drawn" log line, then quits it with two Ctrl+C.
echo "writing a session of 100,000 parts…" >&2
mkdir -p "$tmp/resume-ws" "$tmp/resume-data"
resume_ws=$(cd "$tmp/resume-ws" && pwd -P)
"$root/target/release/examples/bench_session" "$tmp/resume-data" "$resume_ws" 100000 >/dev/null
resume_log="$tmp/resume-data/logs/pith.log"
: >"$tmp/resume.ms"; : >"$tmp/resume.rss"
for i in $(seq 0 "$RUNS"); do # run 0 warms the page cache and is not counted
    line=$(first_frame pith-bench "$resume_log" \
        "cd '$resume_ws' && env -i PATH='$PATH' TERM=xterm-256color HOME='$tmp/home' \
         XDG_CONFIG_HOME='$tmp/home/.config' PITH_DATA_DIR='$tmp/resume-data' \
         ANTHROPIC_API_KEY=bench-unused PITH_CONFIG='$tmp/short.toml' /usr/bin/time -v -o '$tmp/resume.tv' '$bin' -c") ||
        { echo "pith -c drew no frame" >&2; tail -5 "$resume_log" >&2; exit 1; }
    [[ $i -eq 0 ]] && continue
    frame_ms "$line" >>"$tmp/resume.ms"
    cells=$(sed -E 's/.*cells=([0-9]+).*/\1/' <<<"$line")
    awk -F': ' '/Maximum resident set size/ {printf "%.1f\n", $2/1024}' "$tmp/resume.tv" >>"$tmp/resume.rss"
done
ms_resume=$(median <"$tmp/resume.ms" | awk '{printf "%.1f", $1}')
rss_resume=$(median <"$tmp/resume.rss")

share=$(awk -v c="$cpu_stream" -v w="$wall_stream" 'BEGIN {printf "%.1f", c*100/w}')
table=$(cat <<MD
| binary run (release) | wall, median | peak RSS, median | CPU (user+sys), median | target | result |
|---|---|---|---|---|---|
| \`pith --version\` | ${wall_version} ms | ${rss_version} MiB | ${cpu_version} ms | < 20 ms / 15 MiB | $(verdict "$wall_version" 20) / $(verdict "$rss_version" 15) |
| \`pith run\`, one short turn (mock, 8 tokens) | ${wall_turn} ms | ${rss_turn} MiB | ${cpu_turn} ms | < 150 ms / 40 MiB | $(verdict "$wall_turn" 150) / $(verdict "$rss_turn" 40) |
| \`pith run\`, 10,000 tokens streamed at 5,000 tokens/s | ${wall_stream} ms | ${rss_stream} MiB | ${cpu_stream} ms | — | ${share}% of one core |
| \`pith -c\`, a session of 100,000 parts: start to first frame (${cells} cells drawn from the newest page) | ${ms_resume} ms | ${rss_resume} MiB | — | < 300 ms | $(verdict "$ms_resume" 300) |

Medians of $RUNS runs (the stream: ${STREAM_RUNS:-3} runs), $(date -u +%Y-%m-%d), load average before the runs: ${load0}; wall time from bash \`EPOCHREALTIME\` around the process, RSS and CPU from \`/usr/bin/time -v\`; \`pith -c\`: the time from \`main\` to the end of the first \`terminal.draw\` that the binary logs, in a 120×40 tmux pane.
MD
)
echo "$table"

if [[ $WRITE -eq 1 ]]; then
    python3 - "$root/BENCHMARKS.md" "$table" <<'PY'
import sys
path, table = sys.argv[1], sys.argv[2]
begin, end = "<!-- run.sh:begin -->", "<!-- run.sh:end -->"
text = open(path).read()
i, j = text.index(begin) + len(begin), text.index(end)
open(path, "w").write(text[:i] + "\n" + table + "\n" + text[j:])
PY
    echo "written to BENCHMARKS.md" >&2
fi
