//! The overlap panel: compute/NCCL overlap per device over the whole
//! capture and over the window the view shows (derived by the state when
//! the view changes, on the reference clock: every file's devices).

use super::lines::{PanelLines, ms, shown_tag};
use crate::analysis::overlap::DeviceOverlap;
use crate::figure_text::fixed;
use crate::tui::data::Loaded;
use crate::tui::state::App;
use crate::tui::ui::theme::Theme;
use ratatui::text::Line;

const HEADS: [&str; 7] = ["dev", "comp", "nccl", "ovl", "copy", "idle", "hid%"];

/// One device's cells, in [`HEADS`] order.
fn cells(l: &Loaded, d: &DeviceOverlap) -> [String; 7] {
    [
        shown_tag(&l.profile, d.device),
        ms(d.compute_only_ns),
        ms(d.nccl_only_ns),
        ms(d.overlap_ns),
        ms(d.copy_only_ns),
        ms(d.idle_ns),
        d.nccl_overlapped_pct().map_or("-".into(), |v| fixed(v, 1)),
    ]
}

/// Compute/NCCL overlap per device, whole capture and visible window.
pub fn lines(app: &App, l: &Loaded, theme: &Theme) -> PanelLines {
    // The window's figures are derived off the UI thread: until they
    // arrive, the section says so.
    let sections = [
        ("whole capture, ms", Some(&l.analysis.overlap)),
        ("visible window, ms", app.capture().window_overlap()),
    ];
    let rows: Vec<Option<Vec<[String; 7]>>> = sections
        .iter()
        .map(|(_, ds)| ds.map(|ds| ds.iter().map(|d| cells(l, d)).collect()))
        .collect();
    // Every column as wide as its widest cell, one space apart: figures
    // never run into each other, however large.
    let mut width = HEADS.map(|h| h.chars().count());
    for row in rows.iter().flatten().flatten() {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String; 7]| {
        let mut s = format!("{:<w$}", cells[0], w = width[0]);
        for (c, w) in cells.iter().zip(width).skip(1) {
            s += &format!(" {c:>w$}");
        }
        s
    };
    let mut out = PanelLines::one(Line::styled(
        line(&HEADS.map(String::from)),
        theme.heading(),
    ));
    for ((title, _), rows) in sections.iter().zip(&rows) {
        out.push(Line::styled(title.to_string(), theme.dim()));
        match rows {
            Some(rows) => {
                for r in rows {
                    out.push(Line::from(line(r)));
                }
            }
            None => out.push(Line::styled("computing…", theme.dim())),
        }
    }
    out.push(Line::styled(
        "unions per device; nccl-only is an upper bound on savings",
        theme.dim(),
    ));
    out.push(Line::styled(
        "copy = memcpy/memset while no kernel runs",
        theme.dim(),
    ));
    out
}
