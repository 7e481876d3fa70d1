//! The summary panel: capture completeness and the NCCL breakdown of the
//! cursor's device.

use super::lines::{PanelLines, ms};
use crate::tui::data::Loaded;
use crate::tui::lanes::row_device;
use crate::tui::state::App;
use crate::tui::ui::theme::Theme;
use ratatui::text::Line;

/// Capture completeness and the NCCL breakdown of the cursor's device.
pub fn lines(app: &App, l: &Loaded, theme: &Theme) -> PanelLines {
    let p = &l.profile;
    let c = &l.analysis.completeness;
    let list = |ds: &[u32]| {
        ds.iter()
            .map(|&d| p.device_label(d).tag())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = PanelLines::one(Line::styled("capture completeness", theme.heading()));
    out.push(format!("expected: {}", list(&c.expected)));
    out.push(format!("with kernels: {}", list(&c.with_kernels)));
    if !c.missing.is_empty() {
        out.push(Line::styled(
            format!("MISSING: {}", list(&c.missing)),
            theme.warning(),
        ));
    }
    if let (Some(world), false) = (c.world_size, c.ranks_missing.is_empty()) {
        out.push(Line::styled(
            format!(
                "MISSING: rank{} {} (no file; the world is {world} ranks)",
                if c.ranks_missing.len() == 1 { "" } else { "s" },
                c.ranks_missing
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            theme.warning(),
        ));
    }
    if !c.listed_unused.is_empty() {
        out.push(Line::styled(
            format!("listed but unused: {}", list(&c.listed_unused)),
            theme.warning(),
        ));
    }
    for w in c.warnings.iter().chain(&l.analysis.clock.said(&l.profile)) {
        out.push(Line::styled(format!("! {w}"), theme.warning()));
    }
    let dev = app
        .capture()
        .lanes
        .at_cursor()
        .and_then(|r| row_device(p, &l.index, r.kind));
    let Some(dev) = dev else {
        out.push(Line::from("move to a device row for its NCCL breakdown"));
        return out;
    };
    out.push(Line::from(""));
    match l.analysis.nccl.iter().find(|d| d.device == dev) {
        None => out.push(Line::from(format!(
            "{}: no NCCL kernels",
            p.device_label(dev).tag()
        ))),
        Some(d) => {
            out.push(Line::styled(
                format!(
                    "NCCL on {}: {} ms (kernel time)",
                    p.device_label(dev).tag(),
                    ms(d.total_ns)
                ),
                theme.heading(),
            ));
            for s in &d.streams {
                for o in &s.ops {
                    out.push(Line::from(format!(
                        "S{:<4} {:<13} {:<5} {:>5} {:>10} ms {:>5.1}%",
                        p.lanes[s.lane as usize].stream,
                        o.op.name(),
                        o.dtype.unwrap_or("-"),
                        o.count,
                        ms(o.total_ns),
                        100.0 * o.total_ns as f64 / d.total_ns as f64
                    )));
                }
            }
            out.push(Line::styled(
                "name tokens (RING/LL) are hints, not the algorithm used",
                theme.dim(),
            ));
        }
    }
    out
}
