#!/usr/bin/env bash
# Builds pith's release artefacts for one platform and leaves them in dist/out/, laid out as the
# release host serves them (GitHub releases; `python3 -m http.server -d dist/out` is a complete
# release host for install.sh, `pith update`, npm and pip):
#
#   dist/out/latest/download/VERSION                      the version ("0.1.0")
#   dist/out/latest/download/install.sh                   the install script
#   dist/out/download/vVERSION/pith-VERSION-TARGET.tar.gz  pith-VERSION-TARGET/{pith,README.md,LICENSE}
#   dist/out/download/vVERSION/pith-VERSION-TARGET.tar.gz.sha256
#   dist/out/download/vVERSION/pith-agent-VERSION.tgz          npm: the launcher package
#   dist/out/download/vVERSION/pith-agent-OS-CPU-VERSION.tgz   npm: the platform's binary
#   dist/out/download/vVERSION/pith_agent-VERSION-py3-none-PLATFORM.whl   pip
#
#   dist/build.sh                      x86_64 Linux, for glibc 2.17 and later (cargo zigbuild)
#   TARGET=aarch64-apple-darwin dist/build.sh    another platform, on a machine that builds it
#   PITH_DIST_BIN=path dist/build.sh   pack an already built binary (no build)
#   PITH_DIST_OUT=dir                  write there instead of dist/out (the tests)
#   PITH_RELEASE_BASE=url              the release host the binary and install.sh download from
#                                      (the release workflow: its repository's releases)
#
# Needs: cargo, and for Linux targets zig and cargo-zigbuild (`pip install ziglang
# cargo-zigbuild`); npm to pack the npm packages (skipped without it); objdump for the glibc
# check. The build runs niced: this is a 2-core machine's whole afternoon otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
fail() { echo "dist/build.sh: error: $*" >&2; exit 1; }

TARGET=${TARGET:-x86_64-unknown-linux-gnu}
GLIBC=2.17
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
[[ -n $VERSION ]] || fail "no [workspace.package] version in Cargo.toml"
case $TARGET in
    x86_64-unknown-linux-gnu) npm_os=linux npm_cpu=x64 wheel_tag=manylinux_2_17_x86_64.manylinux2014_x86_64 ;;
    aarch64-unknown-linux-gnu) npm_os=linux npm_cpu=arm64 wheel_tag=manylinux_2_17_aarch64.manylinux2014_aarch64 ;;
    x86_64-apple-darwin) npm_os=darwin npm_cpu=x64 wheel_tag=macosx_10_12_x86_64 ;;
    aarch64-apple-darwin) npm_os=darwin npm_cpu=arm64 wheel_tag=macosx_11_0_arm64 ;;
    *) fail "unknown target $TARGET" ;;
esac

# 1. The binary: the dist profile (today's release profile), PITH_PORTABLE=1 (no DT_RELR, and
#    `pith update` may replace it: build.rs).
if [[ -n ${PITH_DIST_BIN:-} ]]; then
    bin=$PITH_DIST_BIN
elif [[ $TARGET == *-linux-gnu ]]; then
    command -v cargo-zigbuild >/dev/null || fail "cargo-zigbuild is missing: pip install ziglang cargo-zigbuild"
    echo "== cargo zigbuild --profile dist --target $TARGET.$GLIBC"
    PITH_PORTABLE=1 nice -n 19 cargo zigbuild --locked --profile dist --target "$TARGET.$GLIBC" --bin pith
    bin=target/$TARGET/dist/pith
else
    echo "== cargo build --profile dist --target $TARGET"
    PITH_PORTABLE=1 nice -n 19 cargo build --locked --profile dist --target "$TARGET" --bin pith
    bin=target/$TARGET/dist/pith
fi
[[ -x $bin ]] || fail "no binary at $bin"

# 2. The glibc floor: no symbol newer than GLIBC_2.17.
if [[ $TARGET == *-linux-gnu ]] && command -v objdump >/dev/null; then
    floor=$( (objdump -T "$bin" 2>/dev/null || true) | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -Vu | tail -n 1)
    [[ -n $floor ]] || fail "$bin has no GLIBC symbol versions (objdump -T): not a dynamic glibc binary"
    newest=$(printf '%s\n%s\n' "$floor" "$GLIBC" | sort -V | tail -n 1)
    [[ $newest == "$GLIBC" ]] || fail "$bin needs glibc $floor, newer than $GLIBC"
    echo "== glibc floor: $floor (at most $GLIBC)"
fi

# 3. The archive and its checksum.
out=${PITH_DIST_OUT:-dist/out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
rel=$out/download/v$VERSION
mkdir -p "$rel" "$out/latest/download"
name=pith-$VERSION-$TARGET
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/$name"
cp "$bin" "$stage/$name/pith"
cp README.md LICENSE "$stage/$name/"
tar --owner=0 --group=0 --numeric-owner --sort=name --mtime=@0 \
    -czf "$rel/$name.tar.gz" -C "$stage" "$name"
(cd "$rel" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
echo "$VERSION" >"$out/latest/download/VERSION"
# the install script downloads from where it is published (PITH_RELEASE_BASE, as the binary)
if [ -n "${PITH_RELEASE_BASE:-}" ]; then
    repo=${PITH_RELEASE_BASE%/}
    sed -e "s|https://github.com/pith-dev/pith/releases|$repo|g" \
        -e "s|https://github.com/pith-dev/pith|${repo%/releases}|g" install.sh >"$stage/install.sh"
else
    cp install.sh "$stage/install.sh"
fi
cp "$stage/install.sh" "$out/latest/download/install.sh"
cp "$stage/install.sh" "$rel/install.sh"

# 4. npm: the platform package (the binary) and the launcher package that names every platform
#    package as an optional dependency.
if command -v npm >/dev/null; then
    plat=pith-agent-$npm_os-$npm_cpu
    mkdir -p "$stage/npm-plat/bin" "$stage/npm-main/bin"
    cp "$bin" "$stage/npm-plat/bin/pith"
    cp LICENSE "$stage/npm-plat/"
    cat >"$stage/npm-plat/package.json" <<JSON
{
  "name": "$plat",
  "version": "$VERSION",
  "description": "The pith binary for $npm_os $npm_cpu (installed by pith-agent)",
  "license": "MIT",
  "os": ["$npm_os"],
  "cpu": ["$npm_cpu"],
  "files": ["bin/pith", "LICENSE"]
}
JSON
    cp dist/npm/bin/pith.js "$stage/npm-main/bin/pith.js"
    cp dist/npm/README.md LICENSE "$stage/npm-main/"
    optional=""
    for p in linux-x64 linux-arm64 darwin-x64 darwin-arm64; do
        optional+="${optional:+,}
    \"pith-agent-$p\": \"$VERSION\""
    done
    cat >"$stage/npm-main/package.json" <<JSON
{
  "name": "pith-agent",
  "version": "$VERSION",
  "description": "pith: a terminal coding agent that never runs into the context window",
  "license": "MIT",
  "bin": { "pith": "bin/pith.js" },
  "files": ["bin/pith.js", "README.md", "LICENSE"],
  "engines": { "node": ">=16" },
  "optionalDependencies": {$optional
  }
}
JSON
    (cd "$stage/npm-plat" && npm pack --silent --pack-destination "$rel" >/dev/null)
    (cd "$stage/npm-main" && npm pack --silent --pack-destination "$rel" >/dev/null)
else
    echo "== npm is missing: no npm packages"
fi

# 5. pip: a wheel with the binary as its script.
python3 dist/wheel.py "$bin" "$VERSION" "$wheel_tag" "$rel" >/dev/null

echo "== dist/out:"
(cd "$out" && find . -type f | sort | while read -r f; do
    printf '%10s  %s\n' "$(stat -c %s "$f" 2>/dev/null || stat -f %z "$f")" "${f#./}"
done)
