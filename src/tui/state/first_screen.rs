//! The first screen: where the cursor starts, and the status line that
//! says whether the capture has big-skew events.

use super::App;
use crate::analysis::skew::instance_skew;
use crate::tui::action::{Action, Mode};
use crate::tui::data::Loaded;

impl App {
    /// Puts the cursor on the first lane that has events, so that the first
    /// Enter or Tab a new user presses does something.
    pub(super) fn start_on_first_lane_with_events(&mut self, l: &Loaded) {
        let first = self.rows.iter().position(|row| {
            Self::row_events(l, row.kind).is_some_and(|(track, _)| !track.is_empty())
        });
        if let Some(i) = first {
            self.cursor = i;
            self.keep_cursor_visible();
        }
    }

    /// Once the analyses are in: how many big-skew events, and the worst.
    /// A message already shown (a bad `--goto`) stays, and so does a load
    /// message that is a warning or an error: a failed file matters more
    /// (the big events are one `b` away).
    pub(super) fn announce_big_events(&mut self, l: &Loaded) {
        let load_trouble = self
            .messages
            .worst()
            .is_some_and(|w| w >= crate::tui::messages::Level::Warn);
        if self.message.is_none() && !load_trouble {
            let key = self.keymap.keys_for(Mode::Timeline, Action::BigEventList);
            self.message = big_events_notice(l, &key);
        }
    }
}

/// `4 big-skew events, worst s20:145 late D4 +46.6 ms — press b`, or
/// `None` when the capture has none.
pub fn big_events_notice(l: &Loaded, key: &str) -> Option<String> {
    // The largest skew; the earliest of equals.
    let e = l.big_events.iter().rev().max_by_key(|e| e.skew_ns)?;
    let p = &l.profile;
    let group = &l.analysis.matching.groups[e.group];
    let inst = instance_skew(p, group, e.instance);
    let n = l.big_events.len();
    let press = if key.is_empty() {
        String::new()
    } else {
        format!(" — press {key}")
    };
    Some(format!(
        "{n} big-skew event{}, worst {}:{} late {} +{:.1} ms{press}",
        if n == 1 { "" } else { "s" },
        group.key,
        e.instance + 1,
        p.device_label(group.devices[inst.late]).tag(),
        e.skew_ns as f64 / 1e6,
    ))
}
