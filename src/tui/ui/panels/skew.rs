//! The skew panel: the selected collective instance, one row per rank
//! (Enter on a rank selects its kernel).

use super::lines::{PanelLines, ms, shown_tag};
use crate::analysis::bandwidth::{self, InstanceBandwidth};
use crate::analysis::bandwidth_n::{BusN, uses_n};
use crate::analysis::clock::ClockMethod;
use crate::analysis::nccl_name::CollOp;
use crate::figure_text::fixed;
use crate::tui::data::Loaded;
use crate::tui::state::{App, EventRef};
use crate::tui::ui::theme::Theme;
use ratatui::text::Line;

fn bar(value: f64, max: f64, width: usize) -> String {
    if max <= 0.0 || width == 0 {
        return String::new();
    }
    let cells = value / max * width as f64;
    let full = cells.floor() as usize;
    let mut s = "█".repeat(full.min(width));
    let rest = cells - full as f64;
    if full < width && rest > 0.125 {
        s.push(['▏', '▎', '▍', '▌', '▋', '▊', '▉'][((rest * 8.0) as usize).clamp(1, 7) - 1]);
    }
    s
}

/// Ranks listed in full, latest first; beyond this many, the panel shows
/// the latest [`FEW`], the earliest [`FEW`], then the rest.
const ALL_IN_ORDER: usize = 2 * FEW + 2;
const FEW: usize = 5;

/// The panel's rank order from each rank's start: parts, each with the
/// line that names it (none when every rank fits in one latest-first
/// list). Ties: the lower device first.
fn rank_order(starts: &[i64]) -> Vec<(Option<&'static str>, Vec<usize>)> {
    let mut latest: Vec<usize> = (0..starts.len()).collect();
    latest.sort_by_key(|&d| (std::cmp::Reverse(starts[d]), d));
    if starts.len() <= ALL_IN_ORDER {
        return vec![(None, latest)];
    }
    let rest: Vec<usize> = latest[FEW..latest.len() - FEW].to_vec();
    let mut earliest: Vec<usize> = latest[latest.len() - FEW..].to_vec();
    earliest.sort_by_key(|&d| (starts[d], d));
    latest.truncate(FEW);
    vec![
        (Some("latest"), latest),
        (Some("earliest"), earliest),
        (Some("the others, latest first"), rest),
    ]
}

/// The skew of the selected instance, one row per rank.
pub fn lines(app: &App, l: &Loaded, theme: &Theme, width: usize) -> PanelLines {
    let facts = &app.capture().facts;
    let (Some((g, k)), Some(inst)) = (facts.instance, &facts.skew) else {
        return PanelLines::one(
            "Select an NCCL kernel (Enter) or jump to a big event (]) to see its ranks.",
        );
    };
    let p = &l.profile;
    let group = &l.analysis.matching.groups[g];
    // The ranks that have the instance (the others' captures lack it).
    let present: Vec<(usize, usize, (i64, i64))> = group.members(k).collect();
    let mut out = PanelLines::one(Line::styled(
        format!(
            "{} · instance {}/{} · {}",
            group.key,
            k + 1,
            group.instances(),
            inst.op
        ),
        theme.heading(),
    ));
    out.push(Line::from(format!(
        "communicator of {} (found by {}){}",
        crate::analysis::caveats::members(p, group),
        group.found_by.name(),
        if group.lockstep_ambiguous {
            " · may be several in lockstep: skews are over all of them"
        } else {
            ""
        }
    )));

    // Times compared across files are on the reference clock.
    let starts: Vec<i64> = present.iter().map(|m| m.2.0).collect();
    let parts = rank_order(&starts);
    let many = parts.len() > 1;
    let figures = Line::from(if inst.open {
        // A rank never started it: the skew was still open at capture end.
        format!(
            "start skew ≥ {} ms · still open at capture end: {} never launched it",
            ms(inst.start_skew_ns),
            shown_tag(p, group.devices[inst.late])
        )
    } else if inst.unfinished {
        // Ends at the capture's end say nothing about the collective.
        format!(
            "start skew {} ms · still running at capture end (no end skew)",
            ms(inst.start_skew_ns)
        )
    } else {
        format!(
            "start skew {} ms · end skew {} ms",
            ms(inst.start_skew_ns),
            ms(inst.end_skew_ns)
        )
    });
    if many {
        // Hundreds of ranks: the answer before the list, not below it.
        out.push(figures.clone());
    }
    // A node-level event: the host, with what its figure measures (not a
    // rank's start skew).
    if let Some(h) = &app.capture().facts.late_host {
        out.push(Line::styled(
            format!(
                "late host {}: all {} of its ranks started {} ms after every other host's last start (start skew: its latest rank vs the first rank)",
                crate::text_safe::escape_controls(p.host_label(h.host)),
                h.ranks,
                ms(h.margin_ns)
            ),
            theme.late_label(),
        ));
    }
    // Bars over the ranks shown: an open skew's lower bound would flatten
    // them.
    let max_off = if inst.open {
        starts
            .iter()
            .map(|&t| t.saturating_sub(inst.earliest_start))
            .max()
            .unwrap_or(0) as f64
    } else {
        inst.start_skew_ns as f64
    };
    // Narrow panels (80-column terminals) get narrower columns and no bars.
    let narrow = width < 46;
    let c = if narrow { 9 } else { 10 };
    // One line per rank, always: the rank column is as wide as the longest
    // tag (`node00:3 r3`) where the panel has room, its tags ending in `…`
    // where it has not; the bar takes what is left. A panel too narrow for
    // every figure (three panels at 80 columns) drops wait, then duration,
    // and says so, rather than wrap each rank over two lines.
    let longest = present
        .iter()
        .map(|m| unicode_width::UnicodeWidthStr::width(shown_tag(p, group.devices[m.0]).as_str()))
        .max()
        .unwrap_or(0);
    let c0_min = if narrow { 5 } else { 8 };
    let shown_figures = (1..=3)
        .rev()
        .find(|n| c0_min + n * c + 6 <= width)
        .unwrap_or(1);
    let figures_w = shown_figures * c + 6;
    let c0 = (longest + 1)
        .max(c0_min)
        .min(width.saturating_sub(figures_w).max(5));
    let bar_w = width.saturating_sub(c0 + figures_w).min(20);
    let heads = ["start+ms", "dur ms", "wait ms"];
    let mut head = format!("{:<c0$}", "rank");
    for h in &heads[..shown_figures] {
        head.push_str(&format!("{h:>c$}"));
    }
    out.push(Line::styled(head, theme.dim()));
    if shown_figures < 3 {
        out.push(Line::styled(
            format!("{}: in a wider panel", heads[shown_figures..].join(", ")),
            theme.dim(),
        ));
    }
    for (name, order) in parts {
        if let Some(name) = name {
            out.push(Line::styled(
                format!("{name} ({} of {} ranks)", order.len(), present.len()),
                theme.heading(),
            ));
        }
        for i in order {
            let (d, r, span) = present[i];
            let off = span.0.saturating_sub(inst.earliest_start);
            let dur = span.1.saturating_sub(span.0);
            let late = d == inst.late;
            let figures = [format!("+{}", ms(off)), ms(dur), ms(dur - inst.baseline_ns)];
            let mut text = format!(
                "{:<c0$}",
                crate::tui::ui::labels::fit_tail(&shown_tag(p, group.devices[d]), c0 - 1)
            );
            for f in &figures[..shown_figures] {
                text.push_str(&format!("{f:>c$}"));
            }
            text.push_str(&format!(
                " {:<4} {}",
                if late { "LATE" } else { "" },
                bar(off as f64, max_off, bar_w)
            ));
            let line = if late {
                Line::styled(text, theme.late_label())
            } else {
                Line::from(text)
            };
            out.push_to(line, Some(EventRef::Gpu(r)));
        }
    }
    if !many {
        out.push(figures);
    }
    // Sizes beside the figures; their absence (most captures) a note at
    // the end.
    let sized = l.analysis.sizes.recorded();
    if sized {
        for line in bytes_lines(
            facts.bandwidth.as_ref(),
            facts.bus_n.as_ref(),
            inst.op,
            theme,
        ) {
            out.push(line);
        }
    }
    // A rank behind in a hang never launched it; the others' captures do
    // not cover it.
    let (never, lacking): (Vec<usize>, Vec<usize>) = group.missing(k).into_iter().partition(|&d| {
        crate::tui::behind::never_launched_from(&l.behind, g, d).is_some_and(|from| k >= from)
    });
    let tags = |ds: &[usize]| -> Vec<String> {
        ds.iter().map(|&d| shown_tag(p, group.devices[d])).collect()
    };
    if !never.is_empty() {
        out.push(Line::styled(
            format!(
                "never launched: {} (behind: the others wait in it; W lists who is behind)",
                tags(&never).join(" ")
            ),
            theme.warning(),
        ));
    }
    let lacking = tags(&lacking);
    if !lacking.is_empty() {
        out.push(Line::styled(
            format!(
                "not captured: {} (their captures do not cover this instance)",
                lacking.join(" ")
            ),
            theme.warning(),
        ));
    }
    if let Some(gs) = l.analysis.skews.iter().find(|s| s.group == g) {
        let f = |s: Option<crate::analysis::stats::Spread>| {
            s.map_or("-".into(), |s| {
                format!(
                    "p50 {} p90 {} max {}",
                    fixed(s.p50, 3),
                    fixed(s.p90, 3),
                    fixed(s.max, 3)
                )
            })
        };
        out.push(Line::from(format!(
            "group start skew ms: {}",
            f(gs.start_skew_ms)
        )));
        out.push(Line::from(format!(
            "group end skew ms:   {}",
            f(gs.end_skew_ms)
        )));
    }
    // Devices of the capture this instance does not span: a rank that
    // never joined is a different answer from one that joined late.
    let absent: Vec<String> = l
        .analysis
        .completeness
        .expected
        .iter()
        .filter(|d| !group.devices.contains(d))
        .map(|&d| shown_tag(p, d))
        .collect();
    if !absent.is_empty() {
        out.push(Line::styled(
            format!("not in this collective: {}", absent.join(" ")),
            theme.dim(),
        ));
    }
    if let Some(c) = group.clocks {
        let residual = c.uncertainty_ns as f64 / 1e6;
        let line = match c.method {
            ClockMethod::CollectiveEnds => {
                format!("clocks: collective ends, residual p90 {residual:.3} ms")
            }
            ClockMethod::Utc => format!("clocks: UTC only, residual p90 {residual:.3} ms"),
            _ => "clocks not aligned: skews include the offset".into(),
        };
        let style = if c.method == ClockMethod::CollectiveEnds {
            theme.dim()
        } else {
            theme.warning()
        };
        out.push(Line::styled(line, style));
    }
    if !group.end_aligned {
        out.push(Line::styled(
            "ends NOT aligned in this group: pairing unconfirmed",
            theme.warning(),
        ));
    }
    out.push(Line::styled(
        "the long kernel is the rank that waited; the late one is short",
        theme.dim(),
    ));
    out.push(Line::styled(
        "wait = duration − shortest: waiting summed, not step time to win",
        theme.dim(),
    ));
    if !sized {
        out.push(Line::styled(bandwidth::NOT_RECORDED, theme.dim()));
        if let Some(how) = l.analysis.sizes.how_to_get() {
            out.push(Line::styled(how, theme.dim()));
        }
    }
    out
}

/// The instance's bytes and bandwidth with how they are timed and what
/// busbw is not; or why it has none.
fn bytes_lines<'a>(
    b: Option<&InstanceBandwidth>,
    n: Option<&BusN>,
    op: CollOp,
    theme: &Theme,
) -> Vec<Line<'a>> {
    let Some(b) = b else {
        return vec![Line::styled(
            "message size not recorded for this instance (grouped calls that cannot be split, or no NCCL call with a payload around its launches)",
            theme.dim(),
        )];
    };
    let gbps = |v: Option<f64>| v.map_or("-".into(), |v| format!("{} GB/s", fixed(v, 1)));
    let mut out = vec![Line::from(format!(
        "{} ({}){}",
        crate::figure_text::bytes(b.bytes),
        bandwidth::size_convention(op),
        if b.sizes_differ {
            " · ranks recorded different sizes: the most common"
        } else {
            ""
        }
    ))];
    out.push(Line::from(match b.transfer_ns {
        Some(ns) => format!(
            "algbw {} · busbw {} over {} ms from the latest start to the end",
            gbps(b.algbw_gbps),
            gbps(b.busbw_gbps),
            ms(ns)
        ),
        None => "algbw, busbw: not timed (a rank's kernel is missing or was still running)".into(),
    }));
    if let Some(note) = n.and_then(|n| n.note.as_ref()).filter(|_| uses_n(op)) {
        out.push(Line::styled(note.clone(), theme.warning()));
    }
    let naive: Vec<f64> = b.naive_gbps.iter().map(|x| x.1).collect();
    if let (Some(lo), Some(hi)) = (
        naive.iter().copied().reduce(f64::min),
        naive.iter().copied().reduce(f64::max),
    ) {
        out.push(Line::styled(
            format!(
                "naive bytes ÷ each rank's kernel {}–{} GB/s (includes the wait)",
                fixed(lo, 1),
                fixed(hi, 1)
            ),
            theme.dim(),
        ));
    }
    out.push(Line::styled(bandwidth::CAVEAT, theme.dim()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_ranks_are_listed_latest_first() {
        assert_eq!(rank_order(&[5, 9, 1, 9]), vec![(None, vec![1, 3, 0, 2])]);
    }

    #[test]
    fn many_ranks_list_the_latest_then_the_earliest_then_the_rest() {
        // 20 ranks starting at 0, 10, …; rank 7 is the latest.
        let mut starts: Vec<i64> = (0..20).map(|d| d * 10).collect();
        starts[7] = 1000;
        let parts = rank_order(&starts);
        let names: Vec<_> = parts.iter().map(|p| p.0).collect();
        assert_eq!(
            names,
            [
                Some("latest"),
                Some("earliest"),
                Some("the others, latest first")
            ]
        );
        assert_eq!(parts[0].1, [7, 19, 18, 17, 16]);
        assert_eq!(parts[1].1, [0, 1, 2, 3, 4]);
        assert_eq!(parts[2].1, [15, 14, 13, 12, 11, 10, 9, 8, 6, 5]);
    }
}
