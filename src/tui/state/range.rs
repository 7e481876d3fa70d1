//! Marking a range on the ruler (`,` `.`, or a drag on it), clearing it
//! (Esc), copying it as a `--window` (`y`).

use super::App;
use crate::tui::panel::PanelKind;
use crate::tui::range::window_arg;
use crate::tui::timescale::format_duration;

impl App {
    /// Marks the range's start (or end) at `at`, else at the cursor (▼);
    /// with both marked, the range panel opens.
    pub(super) fn mark_range(&mut self, start: bool, at: Option<i64>) {
        let t = at.unwrap_or(self.capture.view.center() as i64);
        let r = &mut self.capture.range;
        if start {
            r.start = Some(t);
        } else {
            r.end = Some(t);
        }
        match r.window() {
            Some(w) => {
                if !self.panels.is_open(PanelKind::Range) {
                    self.panels.toggle(PanelKind::Range);
                }
                self.say(format!(
                    "range {} long: panel 7 shows what is in it (Esc clears it)",
                    format_duration(w.end - w.start)
                ));
            }
            None if start => self.say("range start marked: `.` at the cursor marks its end"),
            None => self.say("range end marked: `,` at the cursor marks its start"),
        }
        self.capture.range_key = None;
    }

    pub(super) fn clear_range(&mut self) {
        self.capture.range = Default::default();
        self.capture.range_facts = None;
        self.capture.range_key = None;
        if self.panels.is_open(PanelKind::Range) {
            self.panels.toggle(PanelKind::Range);
        }
        self.say("range cleared");
    }

    /// What `y` copies while a range is marked.
    pub(super) fn range_reference(&self) -> Option<String> {
        self.capture.range.window().map(window_arg)
    }
}
