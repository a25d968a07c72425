//! The ratatui front end.
