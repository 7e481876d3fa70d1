//! The NVTX tree view (`T`): a thread's ranges indented by nesting, with
//! time, kernels launched and GPU time; the kernels launched directly in
//! a range as its leaves.

use super::labels::fit_name;
use super::popup::{centered, list_popup};
use super::theme::Theme;
use crate::figure_text::fixed;
use crate::text_safe::escape_controls;
use crate::tui::data::Loaded;
use crate::tui::nvtx_view::TreeRow;
use crate::tui::scroll::Scroll;
use crate::tui::state::{App, Pick};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;

pub fn draw(f: &mut Frame, area: Rect, app: &App, l: &Loaded, theme: &Theme, pick: Pick) -> Scroll {
    let Some(tree) = app.capture().nvtx_tree_now() else {
        // Derived off the UI thread: said until it arrives.
        let r = centered(area, area.width.min(60), 3);
        let wait = vec![Line::styled("computing the NVTX tree…", theme.dim())];
        list_popup(f, r, " NVTX tree ", wait, theme, false);
        return pick.scroll;
    };
    let p = &l.profile;
    let width = area.width.min(140);
    let inner = usize::from(width.saturating_sub(2));
    let th = &p.threads[tree.thread];
    let mut head = vec![
        Line::styled(
            format!(
                "thread T{} · {} ranges · gpu_ms: the union of the launched kernels' intervals (nsys's GPU projection)",
                th.tid,
                tree.nodes.len()
            ),
            theme.dim(),
        ),
        Line::styled(
            format!("{:>11} {:>7} {:>11}  name", "ms", "kernels", "gpu_ms"),
            theme.heading(),
        ),
    ];
    head = head
        .into_iter()
        .flat_map(|l| super::panels::wrap::wrap(l, inner))
        .collect();
    let row_text = |r: &TreeRow| -> String {
        match *r {
            TreeRow::Range(i) => {
                let n = &tree.nodes[i];
                let lead = format!(
                    "{:>11} {:>7} {:>11}  {}",
                    fixed((n.end - n.start) as f64 / 1e6, 3),
                    n.kernels.len(),
                    fixed(n.gpu_ns as f64 / 1e6, 3),
                    "  ".repeat(n.level.min(30))
                );
                let room = inner.saturating_sub(lead.chars().count());
                let name = escape_controls(p.strings.get(p.nvtx.name(n.row)));
                format!("{lead}{}", fit_name(&name, room).unwrap_or_default())
            }
            TreeRow::Kernel(k, level) => {
                let (s, e) = l.analysis.clock.gpu_span(p, k);
                let lead = format!(
                    "{:>11} {:>7} {:>11}  {}↳ ",
                    fixed((e - s) as f64 / 1e6, 3),
                    "",
                    "",
                    "  ".repeat(level.min(30))
                );
                let room = inner.saturating_sub(lead.chars().count());
                let name =
                    escape_controls(p.strings.get(p.gpu.name_as(k, app.capture().show.names)));
                format!("{lead}{}", fit_name(&name, room).unwrap_or_default())
            }
        }
    };
    let height = area.height.saturating_sub(2);
    let r = centered(area, width, height);
    // The head and the foot stay; the keys are in the status line.
    let foot = super::panels::wrap::wrap(
        Line::styled("↳ a kernel launched in the range above", theme.dim()),
        inner,
    );
    let room = usize::from(height.saturating_sub(2)).saturating_sub(head.len() + foot.len());
    let mut scroll = pick.scroll;
    scroll.fit(tree.rows.len(), room.max(1));
    scroll.show(pick.selected);
    let mut lines = head;
    for (i, row) in tree
        .rows
        .iter()
        .enumerate()
        .skip(scroll.top)
        .take(scroll.visible)
    {
        let style = if i == pick.selected {
            theme.cursor_label()
        } else if matches!(row, TreeRow::Kernel(..)) {
            theme.dim()
        } else {
            Style::default()
        };
        lines.push(Line::styled(row_text(row), style));
    }
    lines.extend(foot);
    list_popup(f, r, " NVTX tree ", lines, theme, scroll.more_below());
    scroll
}
