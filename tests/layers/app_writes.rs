//! Who changes the app: its state changes through actions, in
//! `tui::state`. Outside it, only the frame writes back what it drew and
//! fitted (the views under `tui/ui/`, and the bench's off-screen harness
//! that sets the view it draws), and only the run loop answers the session
//! (quitting, redraws, the clipboard and exports it carries out).

use super::source;

/// Each way in to change a part of the app, and the files that may use it.
pub const WRITERS: [(&str, &[&str]); 3] = [
    (
        "session_mut",
        &["src/tui/state.rs", "src/tui/state/", "src/tui/run.rs"],
    ),
    (
        "capture_mut",
        &[
            "src/tui/state.rs",
            "src/tui/state/",
            "src/tui/ui/",
            "src/tui/offscreen.rs",
        ],
    ),
    (
        "chrome_mut",
        &[
            "src/tui/state.rs",
            "src/tui/state/",
            "src/tui/ui/",
            "src/tui/offscreen.rs",
        ],
    ),
];

/// Where `text` (the source of `file`) changes a part of the app it may
/// not: one line per use.
pub fn writes_outside(file: &str, text: &str) -> Vec<String> {
    WRITERS
        .iter()
        .flat_map(|(name, allowed)| source::names_outside(file, text, allowed, &[name]))
        .collect()
}
