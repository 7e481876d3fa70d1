//! The lists that open over the timeline and are not finders: the largest
//! start skews (`b`, sortable with `s`) and the session's messages (`!`).

use super::{App, Overlay};
use crate::tui::action::Action;
use crate::tui::data::{Loaded, SkewRow};
use crate::tui::scroll::Scroll;

impl App {
    /// The `b` list in the order shown: by skew, largest first, or by time.
    pub fn big_list(&self, l: &Loaded) -> Vec<SkewRow> {
        let mut rows = l.top_skews.clone();
        if self.big_list_by_time {
            rows.sort_by_key(|r| (r.start, r.group, r.instance));
        }
        rows
    }

    /// `!`: the session's messages (saying so when there are none).
    pub(super) fn open_messages(&mut self) {
        self.overlay = Overlay::Messages(Scroll::default());
    }

    pub(super) fn apply_messages(&mut self, a: Action, mut scroll: Scroll) {
        match a {
            Action::Up => scroll.by(-1),
            Action::Down => scroll.by(1),
            Action::PageUp | Action::PageDown => scroll.page(a == Action::PageDown),
            Action::Cancel | Action::Accept | Action::Messages => {
                self.overlay = Overlay::None;
                return;
            }
            _ => {}
        }
        self.overlay = Overlay::Messages(scroll);
    }
}
