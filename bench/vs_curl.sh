#!/usr/bin/env bash
# One headless turn against the floor: `pith run hello` and a bare `curl` of the very same
# streamed request to the same local mock (bench/mock_server.py), paired A B A B, PAIRS pairs.
# Prints the medians of wall time, CPU (user + system) and peak RSS (each run's own wait4), and the
# ratios pith / curl (issue 32: wall ≤ 1.5×, CPU ≤ 2×, RSS ≤ 16 MiB), once per model window:
# the window decides where pith's token counts have to be exact (issue 39: 16k is the size of
# many local models, where the fixed prompt is ~12% of the window).
#
#   bash bench/vs_curl.sh [PITH_BINARY]     # default target/release/pith
#   WINDOWS="16000 128000" PAIRS=21 bash bench/vs_curl.sh   # the defaults
set -euo pipefail
PAIRS=${PAIRS:-21}
WINDOWS=${WINDOWS:-16000 128000}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pith=${1:-$root/target/release/pith}
tmp=$(mktemp -d)
mock=
trap '[[ -n $mock ]] && kill $mock 2>/dev/null; rm -rf "$tmp"' EXIT
python3 "$root/bench/mock_server.py" --port-file "$tmp/port" --dump "$tmp/body.json" >/dev/null &
mock=$!
for _ in $(seq 50); do [[ -s $tmp/port ]] && break; sleep 0.1; done
port=$(cat "$tmp/port")
mkdir -p "$tmp/ws" "$tmp/home"
export HOME=$tmp/home
cd "$tmp/ws"
for window in $WINDOWS; do
cat >"$tmp/pith-$window.toml" <<TOML
model = "mock/test-model"
[provider.mock]
kind = "openai"
base_url = "http://127.0.0.1:$port/v1"
[models."mock/test-model"]
context = $window
output = 4096
TOML
export PITH_CONFIG=$tmp/pith-$window.toml PITH_DATA_DIR=$tmp/data-$window
rm -f "$tmp/body.json"
"$pith" run hello >/dev/null # creates the data dir; the request body is dumped
echo "== window $window"
url="http://127.0.0.1:$port/v1/chat/completions"
# Each run is timed by its own wait4: wall (monotonic), CPU (user + system) and peak RSS.
python3 - "$PAIRS" "$pith" "$tmp/body.json" "$url" <<'PY'
import os, shutil, statistics as st, sys, time
pairs, pith, body, url = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
cmds = {
    "pith": [pith, "run", "hello"],
    "curl": [shutil.which("curl"), "-sN", "-H", "Content-Type: application/json", "--data-binary", "@" + body, url],
}
rows = {k: [] for k in cmds}
quiet = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
         (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
for _ in range(pairs):
    for name, cmd in cmds.items():
        t0 = time.perf_counter()
        # posix_spawn (vfork): the child's peak RSS is the program's, not a copy of Python's
        pid = os.posix_spawn(cmd[0], cmd, os.environ, file_actions=quiet)
        _, status, ru = os.wait4(pid, 0)
        wall = (time.perf_counter() - t0) * 1000
        assert os.waitstatus_to_exitcode(status) == 0, f"{name} failed: {status}"
        rows[name].append((wall, (ru.ru_utime + ru.ru_stime) * 1000, ru.ru_maxrss / 1024))
med = {k: [st.median(r[i] for r in v) for i in range(3)] for k, v in rows.items()}
print(f"pairs: {pairs} (A B A B)")
print(f"{'':6} {'wall ms':>8} {'cpu ms':>8} {'peak MiB':>9}")
for k in cmds:
    print(f"{k:6} {med[k][0]:8.1f} {med[k][1]:8.1f} {med[k][2]:9.1f}")
p, c = med["pith"], med["curl"]
print(f"{'ratio':6} {p[0]/c[0]:8.2f} {p[1]/max(c[1], 0.1):8.2f} {p[2]/c[2]:9.2f}")
v = []
for _ in range(pairs):
    t0 = time.perf_counter()
    pid = os.posix_spawn(pith, [pith, "--version"], os.environ, file_actions=quiet)
    os.wait4(pid, 0)
    v.append((time.perf_counter() - t0) * 1000)
print(f"pith --version: {st.median(v):.2f} ms wall (median of {pairs})")
PY
done
