//! The lists that open over the timeline and are not finders: the largest
//! start skews (`b`, sortable with `s`) and the session's messages (`!`).

use super::{App, JumpSource, Overlay, Pick};
use crate::tui::action::Action;
use crate::tui::behind;
use crate::tui::data::{Loaded, SkewRow};
use crate::tui::scroll::Scroll;

impl App {
    /// The `b` list in the order shown: by skew, largest first, or by time.
    pub fn big_list(&self, l: &Loaded) -> Vec<SkewRow> {
        let mut rows = l.top_skews.clone();
        if self.chrome.big_list_by_time {
            rows.sort_by_key(|r| (r.start, r.group, r.instance));
        }
        rows
    }

    /// `W`: Up and Down move over the rows, Enter opens a row's instance.
    pub(super) fn apply_behind_list(&mut self, a: Action, mut pick: Pick) {
        let Some(l) = self.data() else { return };
        let rows = behind::rows(&l.profile, &l.analysis.matching, &l.behind);
        match a {
            Action::Up | Action::Down => {
                pick.step(if a == Action::Up { -1 } else { 1 }, rows.len());
                self.chrome.overlay = Overlay::Behind(pick);
            }
            Action::Cancel => self.chrome.overlay = Overlay::None,
            Action::Accept => match rows.get(pick.selected).and_then(|r| r.target) {
                Some((g, k)) => {
                    self.chrome.overlay = Overlay::None;
                    self.capture.jump = Some(JumpSource::Group(g));
                    self.go_instance(g, k);
                }
                None => self.chrome.overlay = Overlay::Behind(pick),
            },
            _ => self.chrome.overlay = Overlay::Behind(pick),
        }
    }

    /// `!`: the session's messages (saying so when there are none).
    pub(super) fn open_messages(&mut self) {
        self.chrome.overlay = Overlay::Messages(Scroll::default());
    }

    pub(super) fn apply_messages(&mut self, a: Action, mut scroll: Scroll) {
        match a {
            Action::Up => scroll.by(-1),
            Action::Down => scroll.by(1),
            Action::PageUp | Action::PageDown => scroll.page(a == Action::PageDown),
            Action::Cancel | Action::Accept | Action::Messages => {
                self.chrome.overlay = Overlay::None;
                return;
            }
            _ => {}
        }
        self.chrome.overlay = Overlay::Messages(scroll);
    }
}
