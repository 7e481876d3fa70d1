//! The first screen's status line: whether the capture has big-skew
//! events, and the worst.

use super::App;
use crate::tui::action::{Action, Mode};
use crate::tui::capture::facts::late_rank;
use crate::tui::data::Loaded;

impl App {
    /// Once the analyses are in: how many big-skew events, and the worst.
    /// A message already shown (a bad `--goto`) stays, and so does a load
    /// message that is a warning or an error: a failed file matters more
    /// (the big events are one `b` away).
    pub(super) fn announce_big_events(&mut self, l: &Loaded) {
        let load_trouble = self
            .messages
            .worst()
            .is_some_and(|w| w >= crate::tui::messages::Level::Warn);
        if self.messages.answered().is_none() && !load_trouble {
            let key = self.keymap.keys_for(Mode::Timeline, Action::BigEventList);
            if let Some(notice) = big_events_notice(l, &key) {
                self.say(notice);
            }
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
    let late = late_rank(l, e.group, e.instance)?;
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
        p.device_label(group.devices[late]).tag(),
        e.skew_ns as f64 / 1e6,
    ))
}
