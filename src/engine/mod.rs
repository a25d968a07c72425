//! The session loop: ops in, events out.
