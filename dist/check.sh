#!/usr/bin/env bash
# The heavy end-to-end proof of the release artefacts, by hand (not in CI): after dist/build.sh,
# serves dist/out/ with `python3 -m http.server` and, each in an empty HOME, installs pith by the
# script, by npm (a fresh prefix) and by pip (a fresh venv), timing each from nothing to a first
# `pith --version`, and runs one headless turn of each against the bench mock. Then the script
# route's failures on the real archive (corrupt, missing), `pith update` against the same
# release, the glibc floor, the sizes, and the start-up figures of BENCHMARKS.md §10/§1.
#
#   bash dist/build.sh && bash dist/check.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/dist/out
version=$(cat "$out/latest/download/VERSION")
target=x86_64-unknown-linux-gnu
rel=$out/download/v$version
tmp=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "dist/check.sh: FAIL: $*" >&2; exit 1; }
ms() { python3 -c 'import time; print(int(time.time()*1000))'; }

port_of() { for _ in $(seq 100); do [[ -s $1 ]] && break; sleep 0.1; done; cat "$1"; }
# serve DIR PORT_FILE: `python3 -m http.server` over DIR on a free port of 127.0.0.1.
serve() {
    python3 -c '
import functools, http.server, sys
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
h = functools.partial(Quiet, directory=sys.argv[1])
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), h)
open(sys.argv[2], "w").write(str(s.server_address[1]))
s.serve_forever()' "$1" "$2" &
    pids+=($!)
}
serve "$out" "$tmp/host-port"
base=http://127.0.0.1:$(port_of "$tmp/host-port")
python3 "$root/bench/mock_server.py" --port-file "$tmp/mock-port" >/dev/null &
pids+=($!)
mock=$(port_of "$tmp/mock-port")
cat >"$tmp/pith.toml" <<TOML
model = "mock/test-model"
[provider.mock]
kind = "openai"
base_url = "http://127.0.0.1:$mock/v1"
[models."mock/test-model"]
context = 128000
output = 4096
TOML

# turn ROUTE PITH: --version names the route, one headless turn answers.
turn() {
    local v
    v=$("$2" --version)
    grep -q "^pith $version\$" <<<"$v" || fail "$1: --version: $v"
    grep -q "installed: $3" <<<"$v" || fail "$1: --version does not say '$3': $v"
    mkdir -p "$tmp/ws-$1"
    (cd "$tmp/ws-$1" && HOME=$tmp/home-$1 PITH_CONFIG=$tmp/pith.toml PITH_DATA_DIR=$tmp/data-$1 \
        "$2" run hello) | grep -q "forty" || fail "$1: the headless turn"
    echo "$1: $(head -n 2 <<<"$v" | tr '\n' ' ') | one headless turn: ok"
}

# 1. The script, in an empty HOME.
mkdir -p "$tmp/home-script"
t0=$(ms)
curl -fsSL "$base/latest/download/install.sh" \
    | HOME=$tmp/home-script PITH_DOWNLOAD_BASE=$base sh >"$tmp/script.log"
"$tmp/home-script/.local/bin/pith" --version >/dev/null
t_script=$(( $(ms) - t0 ))
turn script "$tmp/home-script/.local/bin/pith" "release archive"

# The script's failures on the real archive: corrupt and missing, the old pith stays.
cp -r "$out" "$tmp/bad"
arch=$tmp/bad/download/v$version/pith-$version-$target.tar.gz
python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[len(b)//2]^=255; open(p,"wb").write(b)' "$arch"
serve "$tmp/bad" "$tmp/bad-port"
bad_port=$(port_of "$tmp/bad-port")
err=$(HOME=$tmp/home-script PITH_DOWNLOAD_BASE=http://127.0.0.1:$bad_port sh "$root/install.sh" 2>&1 >/dev/null) && fail "corrupt archive installed"
grep -q "checksum mismatch" <<<"$err" || fail "corrupt: $err"
rm "$arch"
err=$(HOME=$tmp/home-script PITH_DOWNLOAD_BASE=http://127.0.0.1:$bad_port sh "$root/install.sh" 2>&1 >/dev/null) && fail "missing archive installed"
grep -q "cannot download" <<<"$err" || fail "missing: $err"
"$tmp/home-script/.local/bin/pith" --version >/dev/null || fail "the old pith is gone"
echo "script: corrupt and missing archive refused, the installed pith kept"
up=$(PITH_DOWNLOAD_BASE=$base "$tmp/home-script/.local/bin/pith" update)
grep -q "is up to date" <<<"$up" || fail "update: $up"
echo "update: $up"

# 2. npm, a fresh prefix (the platform package and the launcher, from the release host).
if command -v npm >/dev/null; then
    t0=$(ms)
    HOME=$tmp/home-npm npm install --silent --no-audit --no-fund -g --prefix "$tmp/npm" \
        "$base/download/v$version/pith-agent-linux-x64-$version.tgz" \
        "$base/download/v$version/pith-agent-$version.tgz" >/dev/null 2>"$tmp/npm.log" \
        || { cat "$tmp/npm.log"; fail "npm install"; }
    "$tmp/npm/bin/pith" --version >/dev/null
    t_npm=$(( $(ms) - t0 ))
    turn npm "$tmp/npm/bin/pith" "npm package"
fi

# 3. pip, a fresh venv.
wheel=$(cd "$rel" && ls pith_agent-*.whl | head -n 1)
t0=$(ms)
python3 -m venv "$tmp/venv"
HOME=$tmp/home-pip "$tmp/venv/bin/pip" install --quiet --disable-pip-version-check "$base/download/v$version/$wheel"
"$tmp/venv/bin/pith" --version >/dev/null
t_pip=$(( $(ms) - t0 ))
turn pip "$tmp/venv/bin/pith" "pip package"

# 4. The binary: glibc floor, sizes, start-up.
bin=$tmp/home-script/.local/bin/pith
floor=$(objdump -T "$bin" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -Vu | tail -n 1)
size() { stat -c %s "$1"; }
echo
echo "from nothing to pith --version: script ${t_script} ms, npm ${t_npm:-n/a} ms, pip ${t_pip} ms (venv included)"
echo "archive $(size "$rel/pith-$version-$target.tar.gz") B, binary $(size "$bin") B, wheel $(size "$rel/$wheel") B, npm binary package $(size "$rel/pith-agent-linux-x64-$version.tgz") B"
echo "glibc floor: GLIBC_$floor"
python3 - "$bin" <<'PY'
import os, statistics as st, subprocess, sys, time
runs = []
for _ in range(21):
    t0 = time.perf_counter()
    pid = os.posix_spawn(sys.argv[1], [sys.argv[1], "--version"], os.environ,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    os.wait4(pid, 0)
    runs.append((time.perf_counter() - t0) * 1000)
peak = subprocess.run(["/usr/bin/time", "-f", "%M", sys.argv[1], "--version"],
                      capture_output=True, text=True).stderr.split()[-1]
print(f"pith --version: median {st.median(runs):.2f} ms (21 runs), {int(peak) / 1024:.1f} MiB peak (/usr/bin/time)")
PY
PAIRS=${PAIRS:-11} bash "$root/bench/vs_curl.sh" "$bin"
