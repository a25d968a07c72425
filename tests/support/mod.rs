//! What the integration tests share: the `pith-test-support` crate (the mock provider speaking
//! the real wire formats, the wire invariants, the in-process engine harness, the MCP test
//! servers, fault helpers), re-exported whole, and `pith`, which runs the built binary.
//! `tests/all.rs` declares it once; each test module reaches it as `crate::support`.

pub use pith_test_support::*;

pub mod pith;
