//! Writes a long synthetic session into a pith data directory, for timing `pith -c` on it
//! (bench/run.sh). The session is the one the resume bench uses (benches/common).
//!
//!   cargo run --release --example bench_session -- DATA_DIR WORKSPACE [PARTS]
// test and bench code is no API: `pub` there only shares helpers between its modules
#![allow(unreachable_pub)]

#[path = "../benches/common/mod.rs"]
mod common;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(data), Some(workspace)) = (args.first(), args.get(1)) else {
        eprintln!("usage: bench_session DATA_DIR WORKSPACE [PARTS]");
        std::process::exit(2);
    };
    let parts = match args.get(2).map(|p| p.parse::<usize>()) {
        None => 100_000,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("bench_session: PARTS: {e}");
            std::process::exit(2);
        }
    };
    let id = common::build_store(std::path::Path::new(data), workspace, parts);
    println!("{id}");
}
