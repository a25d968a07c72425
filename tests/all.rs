//! Every integration test in one binary: one link of pith instead of one per file, which
//! keeps a clean build small enough for a 2-core CI machine with a modest disk. The areas are
//! the modules of `suite/` (each file says what it proves); `support` is the mock provider and
//! the helpers (the `pith-test-support` crate, and the runner of the built binary).
//! Run one area with `cargo test --test all acp::`.
// test and bench code is no API: `pub` there only shares helpers between its modules
#![allow(unreachable_pub)]
#![allow(clippy::unwrap_used)] // a test may panic on what it did not expect

mod suite;
mod support;
