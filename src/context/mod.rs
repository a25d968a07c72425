//! Context management logic (DESIGN.md §3–4). Pure: no I/O, no async.
