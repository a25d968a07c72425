#!/usr/bin/env bash
# The cost of looking for git repositories a command created (issue 37 item 3,
# crates/pith-tools/src/sandbox/guard/nested_git.rs): the walk that runs after every sandboxed
# command, on generated trees of 10,000, 100,000 and 300,000 files (warm page cache), beside
# `find` over the same tree (the bare cost of reading the folders).
#
#   bash bench/nested_git.sh
#
# The walk runs in the test profile (the crate unoptimised: an upper bound; it is system-call
# bound, see BENCHMARKS.md §12).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
for n in 10000 100000 300000; do
    PITH_BENCH_FILES=$n cargo test -q -p pith-tools --lib nested_git_walk_cost -- --ignored --nocapture 2>/dev/null |
        grep 'nested_git walk'
done
# find over a 100,000-file tree of the same shape, for comparison.
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
python3 - "$t" <<'PY'
import os, sys
root = sys.argv[1]
for i in range(5000):
    d = os.path.join(root, f"d{i%10}", f"e{i%97}", f"f{i%13}", f"g{i}")
    os.makedirs(d, exist_ok=True)
    for j in range(20):
        open(os.path.join(d, f"file{j}.rs"), "w").close()
PY
find "$t" >/dev/null
for _ in 1 2 3; do
    s=$EPOCHREALTIME; find "$t" >/dev/null; e=$EPOCHREALTIME
    echo "find over 100000 files: $(echo "($e - $s) * 1000" | bc -l | cut -c1-6) ms"
done
