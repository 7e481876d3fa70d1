//! The one-line messages of the command line on stderr, and the exit codes they go with.

use rankline::text_safe::escape_controls;
use std::process::ExitCode;

/// One line on stderr. Messages quote paths, keymap text and names from
/// files, so control characters are shown, never sent to the terminal.
pub(super) fn say(msg: impl std::fmt::Display) {
    eprintln!("rankline: {}", escape_controls(&msg.to_string()));
}

/// A usage error (bad option, bad keymap, no terminal): one line, exit 2.
pub(super) fn fail(msg: impl std::fmt::Display) -> ExitCode {
    say(msg);
    ExitCode::from(2)
}

/// An input that could not be read or analysed: one line, exit 1.
pub(super) fn input_failed(msg: impl std::fmt::Display) -> ExitCode {
    say(msg);
    ExitCode::FAILURE
}
