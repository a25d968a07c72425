#!/bin/sh
# Installs the prebuilt pith for this machine:
#
#   curl -fsSL https://github.com/pith-dev/pith/releases/latest/download/install.sh | sh
#
# PITH_VERSION        a version to install (default: the latest release)
# PITH_INSTALL_DIR    where to put `pith` (default: ~/.local/bin)
# PITH_DOWNLOAD_BASE  the release host (default: https://github.com/pith-dev/pith/releases),
#                     laid out as dist/build.sh leaves dist/out/
#
# It downloads pith-VERSION-TARGET.tar.gz and its .sha256, checks the checksum, and moves the
# binary into place in one rename: a failure anywhere leaves what was installed before as it was.
# Every failure is one line on stderr, starting with "pith install: error:".
#
# Everything is inside main, called on the last line: a download that breaks off mid-script
# runs nothing.

set -eu

fail() {
    echo "pith install: error: $*" >&2
    exit 1
}

say() {
    echo "pith install: $*"
}

target() {
    os=$(uname -s)
    arch=$(uname -m)
    case "$arch" in
        x86_64 | amd64) arch=x86_64 ;;
        aarch64 | arm64) arch=aarch64 ;;
        *) fail "no prebuilt pith for $os on $arch; build it from source: cargo install --locked --git https://github.com/pith-dev/pith" ;;
    esac
    case "$os" in
        Linux)
            if ldd --version 2>&1 | grep -qi musl; then
                fail "no prebuilt pith for musl Linux (it needs glibc 2.17 or newer); build it from source: cargo install --locked --git https://github.com/pith-dev/pith"
            fi
            echo "$arch-unknown-linux-gnu"
            ;;
        Darwin) echo "$arch-apple-darwin" ;;
        *) fail "no prebuilt pith for $os on $arch; build it from source: cargo install --locked --git https://github.com/pith-dev/pith" ;;
    esac
}

# download URL FILE: quietly, following redirects, failing on an HTTP error or a short read.
download() {
    if command -v curl >/dev/null 2>&1; then
        curl -fsL --retry 2 -o "$2" "$1"
    elif command -v wget >/dev/null 2>&1; then
        wget -q -O "$2" "$1"
    else
        fail "neither curl nor wget is installed"
    fi
}

sha256() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d' ' -f1
    else
        fail "neither sha256sum nor shasum is installed to check the download"
    fi
}

main() {
    base=${PITH_DOWNLOAD_BASE:-https://github.com/pith-dev/pith/releases}
    base=${base%/}
    dir=${PITH_INSTALL_DIR:-${HOME:?HOME is not set}/.local/bin}
    target=$(target) || exit 1
    tmp=$(mktemp -d 2>/dev/null || mktemp -d -t pith)
    trap 'rm -rf "$tmp"' EXIT
    trap 'rm -rf "$tmp"; exit 1' HUP INT TERM

    version=${PITH_VERSION:-}
    if [ -z "$version" ]; then
        download "$base/latest/download/VERSION" "$tmp/VERSION" \
            || fail "cannot download $base/latest/download/VERSION (is the release host reachable?)"
        version=$(tr -d ' \r\n' <"$tmp/VERSION")
    fi
    version=${version#v}
    case "$version" in
        '' | *[!0-9A-Za-z.+-]*) fail "not a version: '$version'" ;;
    esac

    name="pith-$version-$target"
    url="$base/download/v$version/$name.tar.gz"
    say "installing pith $version for $target into $dir"
    download "$url" "$tmp/$name.tar.gz" || fail "cannot download $url"
    download "$url.sha256" "$tmp/$name.tar.gz.sha256" || fail "cannot download $url.sha256"
    want=$(cut -d' ' -f1 <"$tmp/$name.tar.gz.sha256" | tr 'A-F' 'a-f')
    got=$(sha256 "$tmp/$name.tar.gz")
    [ "$got" = "$want" ] || fail "checksum mismatch for $name.tar.gz (expected $want, got $got); nothing was installed"
    tar -xzf "$tmp/$name.tar.gz" -C "$tmp" 2>/dev/null || fail "cannot unpack $name.tar.gz"
    [ -f "$tmp/$name/pith" ] || fail "$name.tar.gz holds no $name/pith"

    mkdir -p "$dir" 2>/dev/null || fail "cannot create $dir"
    # Copied beside the old one, then renamed over it: never a half-written pith.
    cp "$tmp/$name/pith" "$dir/.pith.tmp.$$" 2>/dev/null || {
        rm -f "$dir/.pith.tmp.$$"
        fail "cannot write to $dir (set PITH_INSTALL_DIR to a directory you may write)"
    }
    chmod 755 "$dir/.pith.tmp.$$"
    mv -f "$dir/.pith.tmp.$$" "$dir/pith" || {
        rm -f "$dir/.pith.tmp.$$"
        fail "cannot move pith into $dir"
    }
    installed=$("$dir/pith" --version 2>/dev/null | head -n 1) || fail "the installed $dir/pith does not start"
    say "installed $installed at $dir/pith"
    case ":${PATH:-}:" in
        *":$dir:"*) say "run: pith" ;;
        *)
            say "$dir is not on your PATH; add it with:"
            echo "    export PATH=\"$dir:\$PATH\"   # in ~/.bashrc, ~/.zshrc or ~/.profile"
            ;;
    esac
}

main "$@"
