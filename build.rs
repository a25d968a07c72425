//! Links the `pith` binary with packed relative relocations (`-z pack-relative-relocs`, DT_RELR)
//! where the C library it is built against can load them (glibc 2.36 and later).
//!
//! A position-independent binary of pith's size carries about 50,000 relative relocations: 1.2 MB
//! of `.rela.dyn` that the dynamic loader reads, and applies, at every start. Packed, they take a
//! few kilobytes, and the start of `pith run` is measurably shorter and smaller (BENCHMARKS.md §10).
//! A binary with DT_RELR refuses to start on an older glibc, so the flag is only given when the
//! glibc of the machine that builds (which is the one `cargo install` runs it on) is new enough,
//! and never when cross-compiling, nor for the portable release binary (`PITH_PORTABLE=1`, set by
//! dist/build.sh: it is linked against glibc 2.17 and must start on any glibc from there on).

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PITH_PORTABLE");
    // The release host the binary updates from, set by whoever publishes it (the release
    // workflow: its repository's releases); unset, src/update/release.rs has its default.
    println!("cargo:rerun-if-env-changed=PITH_RELEASE_BASE");
    let target = std::env::var("TARGET").unwrap_or_default();
    // `pith --version` and `pith update` (src/update): the platform, and whether this is the
    // release archive's binary (which may update itself) or a source build.
    println!("cargo:rustc-env=PITH_TARGET={target}");
    let portable = std::env::var_os("PITH_PORTABLE").is_some_and(|v| v == "1");
    let kind = if portable { "release" } else { "source" };
    println!("cargo:rustc-env=PITH_BUILD_KIND={kind}");
    if portable {
        return;
    }
    let host = std::env::var("HOST").unwrap_or_default();
    if target != host || !target.ends_with("-linux-gnu") {
        return;
    }
    if glibc_version().is_some_and(|v| v >= (2, 36)) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// The build machine's glibc, from `getconf GNU_LIBC_VERSION` ("glibc 2.36").
fn glibc_version() -> Option<(u32, u32)> {
    let out = Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let mut numbers = text.trim().strip_prefix("glibc ")?.split('.');
    let major = numbers.next()?.parse().ok()?;
    let minor = numbers.next()?.parse().ok()?;
    Some((major, minor))
}
