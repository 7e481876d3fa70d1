//! Marking a range on the ruler (`,` `.`, or a drag on it), clearing it
//! (Esc), copying it as a `--window` (`y`).

use super::App;
use crate::tui::action::{Action, Mode};
use crate::tui::panel::PanelKind;
use crate::tui::range::window_arg;
use crate::tui::timescale::format_duration;

impl App {
    /// Marks the range's start (or end) at `at`, else at the cursor (▼);
    /// with both marked, the range panel opens.
    pub(super) fn mark_range(&mut self, start: bool, at: Option<i64>) {
        let keys = |a: Action| self.session.keymap.keys_for(Mode::Timeline, a);
        let (start_key, end_key) = (keys(Action::RangeStart), keys(Action::RangeEnd));
        let (panel_key, clear_key) = (keys(Action::PanelRange), keys(Action::ClearSelection));
        let t = at.unwrap_or(self.capture.view.center() as i64);
        let r = &mut self.capture.range;
        if start {
            r.start = Some(t);
        } else {
            r.end = Some(t);
        }
        match r.window() {
            Some(w) => {
                if !self.chrome.panels.is_open(PanelKind::Range) {
                    self.chrome.panels.toggle(PanelKind::Range);
                }
                self.say(format!(
                    "range {} long: panel {panel_key} shows what is in it ({clear_key} clears it)",
                    format_duration(w.end - w.start),
                ));
            }
            None if start => self.say(format!(
                "range start marked: `{end_key}` at the cursor marks its end"
            )),
            None => self.say(format!(
                "range end marked: `{start_key}` at the cursor marks its start"
            )),
        }
    }

    pub(super) fn clear_range(&mut self) {
        self.capture.range = Default::default();
        self.capture.range_facts.forget();
        if self.chrome.panels.is_open(PanelKind::Range) {
            self.chrome.panels.toggle(PanelKind::Range);
        }
        self.say("range cleared");
    }

    /// What `y` copies while a range is marked.
    pub(super) fn range_reference(&self) -> Option<String> {
        self.capture.range.window().map(window_arg)
    }
}
