//! What a panel gives the frame: its lines and, for each, where Enter goes;
//! and the number formats the panels share.

use crate::profile::{DevId, Profile};
use crate::tui::panel::PanelTarget;
use crate::tui::state::EventRef;
use ratatui::text::Line;

/// A panel's content: its lines and, for each, where Enter goes.
#[derive(Default)]
pub struct PanelLines {
    pub lines: Vec<Line<'static>>,
    pub targets: Vec<Option<PanelTarget>>,
}

impl PanelLines {
    pub(super) fn one(line: impl Into<Line<'static>>) -> PanelLines {
        let mut p = PanelLines::default();
        p.push(line);
        p
    }

    pub(super) fn push(&mut self, line: impl Into<Line<'static>>) {
        self.push_to(line, None);
    }

    pub(super) fn push_to(&mut self, line: impl Into<Line<'static>>, target: Option<EventRef>) {
        self.push_target(line, target.map(PanelTarget::Event));
    }

    pub(super) fn push_target(
        &mut self,
        line: impl Into<Line<'static>>,
        target: Option<PanelTarget>,
    ) {
        self.lines.push(line.into());
        self.targets.push(target);
    }
}

/// The device's tag (`D3`, `node03:3 r4`), control characters shown.
pub(super) fn shown_tag(p: &Profile, d: DevId) -> String {
    crate::text_safe::escape_controls(&p.device_label(d).tag()).into_owned()
}

pub(super) fn ms(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

pub(super) fn secs(ns: i64) -> String {
    format!("{:.6}s", ns as f64 / 1e9)
}
