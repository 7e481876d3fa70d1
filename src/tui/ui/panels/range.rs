//! The range panel (`7`, opened when a range is marked): its length and
//! `--window` (what `report` and `export` take), busy time per lane in
//! view, the kernels and NVTX ranges by time in it, the collective
//! instances inside with their skews (Enter jumps to one).

use super::lines::{PanelLines, ms, shown_tag};
use crate::analysis::name_stats::StatRow;
use crate::figure_text::fixed;
use crate::profile::names::KernelNames;
use crate::tui::action::{Action, Mode};
use crate::tui::data::Loaded;
use crate::tui::panel::PanelTarget;
use crate::tui::range::window_arg;
use crate::tui::state::App;
use crate::tui::timescale::format_duration;
use crate::tui::ui::theme::Theme;
use ratatui::text::Line;

/// Rows of each table before "… N more".
const TOP: usize = 8;

pub fn lines(app: &App, l: &Loaded, theme: &Theme) -> PanelLines {
    let c = &app.capture();
    // The timeline's keys: they mark, copy and clear the range.
    let keys = |a: Action| app.session().keymap.keys_for(Mode::Timeline, a);
    if c.range.window().is_some() && c.range_facts_shown().is_none() {
        return PanelLines::one(Line::styled("computing the range's facts…", theme.dim()));
    }
    let Some((f, current)) = c.range_facts_shown() else {
        let mut out = PanelLines::one(Line::styled("no range marked", theme.dim()));
        out.push(match c.range.start {
            Some(_) => format!(
                "start marked: `{}` at the cursor marks its end",
                keys(Action::RangeEnd)
            ),
            None => format!(
                "`{}` marks its start at the cursor (▼), `{}` its end; or drag on the ruler",
                keys(Action::RangeStart),
                keys(Action::RangeEnd)
            ),
        });
        return out;
    };
    let w = f.window;
    let len = w.end - w.start;
    let mut out = PanelLines::one(Line::styled(
        format!("range {} long", format_duration(len)),
        theme.heading(),
    ));
    out.push(format!(
        "{} ({} copies it)",
        window_arg(w),
        keys(Action::CopyReference)
    ));
    out.push(Line::styled(
        if current {
            "busy in the range, rows in view (union per row):"
        } else {
            "busy in the range, rows in view (union per row; computing for the rows now in view…):"
        },
        theme.dim(),
    ));
    let rows = &c.lanes.rows;
    for (kind, busy) in &f.busy {
        let label = rows
            .iter()
            .find(|r| r.kind == *kind)
            .map_or_else(String::new, |r| r.label.clone());
        let pct = if len > 0 {
            100.0 * *busy as f64 / len as f64
        } else {
            0.0
        };
        out.push(format!(
            "{:>10} ms {:>5}%  {label}",
            ms(*busy),
            fixed(pct, 1)
        ));
    }
    let table = |out: &mut PanelLines, title: &str, rows: &[StatRow]| {
        out.push(Line::styled(title.to_string(), theme.dim()));
        if rows.is_empty() {
            out.push("  none wholly inside");
        }
        for r in rows.iter().take(TOP) {
            let name = r.label(&l.profile.strings).into_owned();
            out.push_target(
                format!("{:>10} ms ×{:<5} {name}", ms(r.total_ns), r.count),
                Some(PanelTarget::Kernel(name.clone())).filter(|_| title.starts_with("kernels")),
            );
        }
        if rows.len() > TOP {
            out.push(Line::styled(
                format!(
                    "  … {} more ({}, {}: the stats view of the window)",
                    rows.len() - TOP,
                    keys(Action::StatsView),
                    app.session()
                        .keymap
                        .keys_for(Mode::Stats, Action::ToggleScope)
                ),
                theme.dim(),
            ));
        }
    };
    let kernels = match app.capture().show.names {
        KernelNames::Short => {
            "kernels by time, wholly inside (report stats --window --names short):"
        }
        KernelNames::Demangled => "kernels by time, wholly inside (report stats --window):",
    };
    table(&mut out, kernels, &f.kernels);
    table(&mut out, "NVTX ranges by time, wholly inside:", &f.nvtx);
    out.push(Line::styled(
        format!(
            "collective instances inside ({}), start skew:",
            f.instances.len()
        ),
        theme.dim(),
    ));
    let m = &l.analysis.matching;
    for i in f.instances.iter().take(TOP) {
        out.push_target(
            format!(
                "{:>10} ms  {}:{} late {}",
                ms(i.start_skew_ns),
                m.groups[i.group].key,
                i.index + 1,
                shown_tag(&l.profile, i.late)
            ),
            Some(PanelTarget::Instance(i.group, i.index)),
        );
    }
    if f.instances.len() > TOP {
        out.push(Line::styled(
            format!("  … {} more", f.instances.len() - TOP),
            theme.dim(),
        ));
    }
    out.push(Line::styled(
        format!(
            "sums over rows and events are not wall time; {} clears the range",
            keys(Action::ClearSelection)
        ),
        theme.dim(),
    ));
    out
}
