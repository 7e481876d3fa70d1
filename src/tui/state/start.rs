//! What the command line sets before the first frame: mouse capture, a
//! `--goto` to apply once the analyses are in, a baseline to wait for, a
//! banner and the notes of the options read.

use super::{App, Baseline};
use crate::tui::messages::Level;

impl App {
    /// Mouse capture on (`--mouse`) or off.
    pub fn set_mouse(&mut self, on: bool) {
        self.session.mouse = on;
    }

    /// `--goto`: applied once the analyses are in.
    pub fn set_goto(&mut self, goto: Option<String>) {
        self.session.pending_goto = goto;
    }

    /// A `--baseline` capture is coming: its side shows as loading.
    pub fn expect_baseline(&mut self) {
        self.baseline = Some(Baseline::loading());
    }

    /// A line above the status bar for the whole session (the demo's).
    pub fn set_banner(&mut self, text: impl Into<String>) {
        self.session.banner = Some(text.into());
    }

    /// A warning from reading the options, kept in the messages.
    pub fn warn(&mut self, note: impl Into<String>) {
        self.session.messages.push(Level::Warn, note);
    }
}
