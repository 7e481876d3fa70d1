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
            .session
            .messages
            .worst()
            .is_some_and(|w| w >= crate::tui::messages::Level::Warn);
        // A hang is the answer a hung job's owner opened the capture for:
        // said first, whatever else is.
        if let Some(notice) = hang_notice(
            l,
            &self
                .session
                .keymap
                .keys_for(Mode::Timeline, Action::BehindList),
        ) {
            self.session
                .messages
                .answer(crate::tui::messages::Level::Warn, notice);
            return;
        }
        if self.session.messages.answered().is_none() && !load_trouble {
            let key = self
                .session
                .keymap
                .keys_for(Mode::Timeline, Action::BigEventList);
            if let Some(notice) = big_events_notice(l, &key) {
                self.say(notice);
            }
        }
    }
}

/// `hang: s16 #9 AllGather, 7 waiting, behind hang01:2 — press W`, or
/// `None` when no rank is behind.
pub fn hang_notice(l: &Loaded, key: &str) -> Option<String> {
    let x = l.behind.groups.iter().find(|x| x.is_hang())?;
    let g = &l.analysis.matching.groups[x.group];
    let p = &l.profile;
    let behind: Vec<String> = x
        .behind
        .iter()
        .take(4)
        .map(|&d| p.device_label(g.devices[d]).tag())
        .collect();
    let more = x.behind.len().saturating_sub(behind.len());
    let press = if key.is_empty() {
        String::new()
    } else {
        format!(" — press {key}")
    };
    Some(format!(
        "hang: {} #{} {}, {} waiting, behind {}{}{press}",
        g.key,
        x.diverges_at,
        g.ops.get(x.diverges_at - 1).map_or("?", |o| o.name()),
        x.waiting.len(),
        behind.join(" "),
        if more > 0 {
            format!(" +{more}")
        } else {
            String::new()
        },
    ))
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
    // One delay that holds up several groups at once is one event.
    let events =
        crate::analysis::events::events(&l.profile, &l.analysis.matching, &l.analysis.skews).len();
    let press = if key.is_empty() {
        String::new()
    } else {
        format!(" — press {key}")
    };
    let count = if events < n {
        format!(
            "{events} big-skew event{} ({n} instances)",
            if events == 1 { "" } else { "s" }
        )
    } else {
        format!("{n} big-skew event{}", if n == 1 { "" } else { "s" })
    };
    Some(format!(
        "{count}, worst {}:{} late {} +{:.1} ms{press}",
        group.key,
        e.instance + 1,
        p.device_label(group.devices[late]).tag(),
        e.skew_ns as f64 / 1e6,
    ))
}
