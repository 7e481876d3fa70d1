//! The lists that open over the timeline and are not finders: the largest
//! start skews (`b`, sortable with `s`) and the session's messages (`!`).

use super::{App, Overlay};
use crate::tui::action::Action;
use crate::tui::data::{Loaded, SkewRow};

impl App {
    /// The `b` list in the order shown: by skew, largest first, or by time.
    pub fn big_list(&self, l: &Loaded) -> Vec<SkewRow> {
        let mut rows = l.top_skews.clone();
        if self.big_list_by_time {
            rows.sort_by_key(|r| (r.start, r.group, r.instance));
        }
        rows
    }

    pub(super) fn open_messages(&mut self) {
        if self.messages.is_empty() {
            self.message = Some("no messages: every input loaded".into());
        } else {
            self.overlay = Overlay::Messages { scroll: 0 };
        }
    }

    pub(super) fn apply_messages(&mut self, a: Action, scroll: usize) {
        let last = self.messages.len().saturating_sub(1);
        match a {
            Action::Up => {
                self.overlay = Overlay::Messages {
                    scroll: scroll.saturating_sub(1),
                }
            }
            Action::Down => {
                self.overlay = Overlay::Messages {
                    scroll: (scroll + 1).min(last),
                }
            }
            Action::Cancel | Action::Accept | Action::Messages => self.overlay = Overlay::None,
            _ => {}
        }
    }
}
