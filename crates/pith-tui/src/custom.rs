//! Custom slash commands in the TUI: their entries in the slash popup, and running one (its
//! expansion is sent as the user's message, labelled with the command).

#[cfg(test)]
#[path = "custom_tests.rs"]
mod tests;
