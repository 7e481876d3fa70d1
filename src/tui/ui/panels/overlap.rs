//! The overlap panel: compute/NCCL overlap per device, whole file and
//! visible window.

use super::lines::{PanelLines, ms, shown_tag};
use crate::analysis::Window;
use crate::analysis::overlap::overlap;
use crate::tui::data::Loaded;
use crate::tui::state::App;
use crate::tui::ui::theme::Theme;
use ratatui::text::Line;

/// Compute/NCCL overlap per device, whole file and visible window.
pub fn lines(app: &App, l: &Loaded, theme: &Theme) -> PanelLines {
    let p = &l.profile;
    let w = Window {
        start: app.view.t0 as i64,
        end: app.view.end() as i64,
    };
    let visible = overlap(p, &l.analysis.classes, &l.analysis.clock, w);
    let mut out = PanelLines::one(Line::styled(
        format!(
            "{:<6}{:>9}{:>9}{:>9}{:>9}{:>9}{:>7}",
            "dev", "comp", "nccl", "ovl", "copy", "idle", "hid%"
        ),
        theme.heading(),
    ));
    for (title, rows) in [
        ("whole file, ms", &l.analysis.overlap),
        ("visible window, ms", &visible),
    ] {
        out.push(Line::styled(title.to_string(), theme.dim()));
        for d in rows {
            out.push(Line::from(format!(
                "{:<6}{:>9}{:>9}{:>9}{:>9}{:>9}{:>7}",
                shown_tag(p, d.device),
                ms(d.compute_only_ns),
                ms(d.nccl_only_ns),
                ms(d.overlap_ns),
                ms(d.copy_only_ns),
                ms(d.idle_ns),
                d.nccl_overlapped_pct()
                    .map_or("-".into(), |v| format!("{v:.1}"))
            )));
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
