//! Loading and merging configuration sources.
