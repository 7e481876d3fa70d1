//! The diff panel: the `--baseline` capture against the main one — steps,
//! exposed NCCL time as the diff gate computes it, the largest kernel
//! changes (Enter finds the kernel) and the excess of each paired skew
//! group (Enter selects its worst instance).

use super::lines::PanelLines;
use crate::analysis::diff::{Diff, ExposedPer, PairedBy, STEPS_MISS_GPU_WAITS, SkewPair};
use crate::analysis::stats::Spread;
use crate::figure_text::fixed;
use crate::text_safe::escape_controls;
use crate::tui::action::{Action, Mode};
use crate::tui::panel::PanelTarget;
use crate::tui::state::{App, BaselineStatus};
use crate::tui::ui::labels::fit_name;
use crate::tui::ui::theme::Theme;
use ratatui::text::Line;
use std::path::PathBuf;

/// Kernel names listed, largest change first (as `rankline diff` text).
const TOP_KERNELS: usize = 15;

/// The diff of the two captures, or why there is none yet.
pub fn lines(app: &App, theme: &Theme, width: usize) -> PanelLines {
    let Some(b) = &app.baseline() else {
        let mut out = PanelLines::one("No baseline to compare with. Start with");
        out.push(Line::styled(
            "  rankline AFTER... --baseline BEFORE",
            theme.heading(),
        ));
        out.push("(BEFORE: an export or a directory of them); B then switches between the two.");
        return out;
    };
    match (&b.status, &b.diff) {
        (BaselineStatus::Loading(stage), _) => {
            PanelLines::one(format!("loading the baseline: {stage}…"))
        }
        (BaselineStatus::Failed, _) => {
            PanelLines::one("The baseline could not be opened (! lists why).")
        }
        (BaselineStatus::Ready, None) => PanelLines::one("comparing the two captures…"),
        (BaselineStatus::Ready, Some(d)) => {
            let focus = app
                .session()
                .keymap
                .keys_for(Mode::Timeline, Action::FocusPanel);
            diff_lines(d, b.shown, theme, width, &focus)
        }
    }
}

/// Columns of the figures: before, after, Δ, Δ% (the last dropped when
/// narrow), each after a space; the name gets the rest.
struct Columns {
    num: usize,
    pct: bool,
    name: usize,
}

/// Columns of the Δ% figure (`+1946%`, `-12.5%`, `new`).
const PCT: usize = 7;

impl Columns {
    fn for_width(width: usize) -> Columns {
        let pct = width >= 50;
        let num = if width >= 44 { 9 } else { 8 };
        let figures = 3 * (num + 1) + if pct { PCT + 1 } else { 0 };
        Columns {
            num,
            pct,
            name: width.saturating_sub(figures).max(8),
        }
    }

    /// One row: the name (cut to fit) and the figures.
    fn row(&self, name: &str, before: &str, after: &str, delta: &str, pct: &str) -> String {
        let name = fit_name(&escape_controls(name), self.name).unwrap_or_default();
        let n = self.num;
        let mut s = format!(
            "{name:<w$} {before:>n$} {after:>n$} {delta:>n$}",
            w = self.name
        );
        if self.pct {
            s.push_str(&format!(" {pct:>PCT$}"));
        }
        s
    }
}

/// `focus`: the keys that give this panel the keys (for its last line).
fn diff_lines(
    d: &Diff,
    baseline_shown: bool,
    theme: &Theme,
    width: usize,
    focus: &str,
) -> PanelLines {
    let cols = Columns::for_width(width);
    let shown = |yes: bool| if yes { "  ◀ shown (B switches)" } else { "" };
    let mut out = PanelLines::one(Line::styled(
        format!(
            "before (baseline): {}{}",
            files(&d.before_files),
            shown(baseline_shown)
        ),
        theme.dim(),
    ));
    out.push(Line::styled(
        format!("after: {}{}", files(&d.after_files), shown(!baseline_shown)),
        theme.dim(),
    ));
    if d.completeness.differs() {
        out.push(Line::styled(
            "⚠ different devices: totals cover different sets",
            theme.warning(),
        ));
    }

    // Steps.
    let (sb, sa) = (&d.steps.before, &d.steps.after);
    out.push(Line::styled(
        cols.row("steps, ms", "before", "after", "Δ", "Δ%"),
        theme.heading(),
    ));
    out.push(cols.row(
        "count",
        &sb.count.to_string(),
        &sa.count.to_string(),
        &signed_count(sa.count as i64 - sb.count as i64),
        "",
    ));
    if let (Some(b), Some(a)) = (sb.spread_ms, sa.spread_ms) {
        for (what, f) in [
            ("p50", (|s: Spread| s.p50) as fn(Spread) -> f64),
            ("p90", |s| s.p90),
            ("max", |s| s.max),
        ] {
            let (b, a) = (f(b), f(a));
            out.push(cols.row(
                what,
                &fixed(b, 3),
                &fixed(a, 3),
                &format!("{:+.3}", a - b),
                &pct(crate::analysis::diff::delta_pct(b, a)),
            ));
        }
        if let Some(noise) = d.noise_pct() {
            out.push(Line::styled(
                format!("noise: before's step spread p90−p50 is {noise:.1}%"),
                theme.dim(),
            ));
        }
    } else {
        out.push(Line::styled(
            "no steps on both sides (see --step-marker)",
            theme.dim(),
        ));
    }
    exposed_nccl(&mut out, d, &cols, theme);
    step_account(&mut out, d, &cols, theme);

    // Kernels: the largest changes; Enter finds the kernel.
    out.push(Line::styled(
        cols.row("kernels, ms", "before", "after", "Δ", "Δ%"),
        theme.heading(),
    ));
    let changed: Vec<_> = d
        .kernels
        .iter()
        .filter(|k| k.delta_ns() != 0)
        .take(TOP_KERNELS)
        .collect();
    if changed.is_empty() {
        out.push(Line::styled("no kernel's total time changed", theme.dim()));
    }
    for k in &changed {
        let mark = match k.only() {
            Some(crate::analysis::diff::Which::Before) => "gone".to_string(),
            Some(crate::analysis::diff::Which::After) => "new".to_string(),
            None => pct(k.delta_pct()),
        };
        out.push_target(
            cols.row(
                &k.name,
                &ms(k.before_ns),
                &ms(k.after_ns),
                &signed_ms(k.delta_ns()),
                &mark,
            ),
            Some(PanelTarget::Kernel(k.name.clone())),
        );
    }
    let (tb, ta) = d.kernel_total_ns();
    out.push(Line::styled(
        cols.row(
            "all kernels",
            &ms(tb),
            &ms(ta),
            &signed_ms(ta.saturating_sub(tb)),
            &pct(crate::analysis::diff::delta_pct(tb as f64, ta as f64)),
        ),
        theme.dim(),
    ));

    // Skew: excess per paired group; Enter selects the worst instance.
    out.push(Line::styled(
        cols.row("skew excess, ms", "before", "after", "Δ", "Δ%"),
        theme.heading(),
    ));
    let mut unpaired = Vec::new();
    for s in &d.skew {
        let Some((b, a)) = s.excess_ns() else {
            unpaired.push(s);
            continue;
        };
        let name = match (s.paired_by, &s.before) {
            (Some(PairedBy::OpSequence), Some(before)) => format!("{}→{}", before.key, s.key),
            _ => s.key.clone(),
        };
        out.push_target(
            cols.row(
                &name,
                &ms(b),
                &ms(a),
                &signed_ms(a.saturating_sub(b)),
                &pct(s.excess_delta_pct()),
            ),
            worst_instance(s, baseline_shown),
        );
    }
    if d.skew.is_empty() {
        out.push(Line::styled(
            "no collective matched across ranks on either side",
            theme.dim(),
        ));
    }
    for s in unpaired {
        let side = if s.before.is_some() {
            "before"
        } else {
            "after"
        };
        out.push_target(
            Line::styled(format!("{}: only {side}, not paired", s.key), theme.dim()),
            worst_instance(s, baseline_shown),
        );
    }
    // `p Enter/click`: the panel takes the keys with `p`, then Enter.
    let how = if focus.is_empty() {
        "Click".to_string()
    } else {
        format!("{focus} Enter/click")
    };
    out.push(Line::styled(
        format!("{how}: a kernel finds it, a group its worst instance"),
        theme.dim(),
    ));
    out
}

/// The gate's exposed NCCL figure, as `rankline diff` computes it; and,
/// when it grew past the before capture's noise while the step p50 stayed
/// within it, why the steps did not show it.
fn exposed_nccl(out: &mut PanelLines, d: &Diff, cols: &Columns, theme: &Theme) {
    let Some(e) = d.exposed_nccl() else {
        return;
    };
    let name = match e.per {
        ExposedPer::Step => "exposed NCCL/step",
        ExposedPer::Second => "exposed NCCL/s",
    };
    out.push(cols.row(
        name,
        &fixed(e.before_ms, 3),
        &fixed(e.after_ms, 3),
        &format!("{:+.3}", e.after_ms - e.before_ms),
        &pct(e.delta_pct()),
    ));
    // The panel has no gate: the capture's own step spread stands in.
    if d.noise_pct()
        .is_some_and(|noise| d.exposed_grew_steps_did_not(noise))
    {
        out.push(Line::styled(STEPS_MISS_GPU_WAITS, theme.dim()));
    }
}

/// Each side's step account (`report steps`), part by part where either
/// side has time in it, then each side's first cause to fix.
fn step_account(out: &mut PanelLines, d: &Diff, cols: &Columns, theme: &Theme) {
    let (b, a) = (&d.step_account.before, &d.step_account.after);
    if b.is_none() && a.is_none() {
        return;
    }
    out.push(Line::styled(
        cols.row("step·rank, ms", "before", "after", "Δ", "Δ%"),
        theme.heading(),
    ));
    let part = |s: &Option<crate::analysis::diff::AccountSide>, i: usize| {
        s.as_ref().map(|s| s.parts_ms[i])
    };
    for (i, name) in crate::analysis::step_account::PARTS.iter().enumerate() {
        let (pb, pa) = (part(b, i), part(a, i));
        if pb.unwrap_or(0.0) == 0.0 && pa.unwrap_or(0.0) == 0.0 {
            continue;
        }
        let cell = |v: Option<f64>| v.map_or("-".to_string(), |v| fixed(v, 3));
        let (delta, change) = match (pb, pa) {
            (Some(pb), Some(pa)) => (
                format!("{:+.3}", pa - pb),
                pct(crate::analysis::diff::delta_pct(pb, pa)),
            ),
            _ => (String::new(), String::new()),
        };
        out.push(cols.row(name, &cell(pb), &cell(pa), &delta, &change));
    }
    for (which, side) in [("before", b), ("after", a)] {
        let first = side.as_ref().and_then(|s| s.causes.first());
        let Some(c) = first else { continue };
        let on =
            c.on.as_deref()
                .map(|o| format!(" on {o}"))
                .unwrap_or_default();
        out.push(Line::styled(
            format!(
                "{which}, first to fix: {}{on}: {:.3} ms",
                c.kind, c.saves_ms
            ),
            theme.dim(),
        ));
    }
}

/// The worst instance (largest start skew) of the pair's group in the
/// capture the timeline shows.
fn worst_instance(s: &SkewPair, baseline_shown: bool) -> Option<PanelTarget> {
    let side = if baseline_shown { &s.before } else { &s.after };
    let side = side.as_ref()?;
    Some(PanelTarget::Instance(side.group, side.worst_instance?))
}

/// `name` or `name +3`: the first file and how many more.
fn files(files: &[PathBuf]) -> String {
    let name = |f: &PathBuf| crate::profile::file_label(f);
    match files {
        [] => "-".into(),
        [one] => name(one),
        [first, rest @ ..] => format!("{} +{} more", name(first), rest.len()),
    }
}

fn ms(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

fn signed_ms(ns: i64) -> String {
    format!("{:+.3}", ns as f64 / 1e6)
}

fn signed_count(n: i64) -> String {
    format!("{n:+}")
}

/// `+12.5%`; from 1000 % on without decimals, so it fits [`PCT`].
fn pct(p: Option<f64>) -> String {
    match p {
        None => "-".into(),
        Some(p) if p.abs() >= 999.5 => format!("{p:+.0}%"),
        Some(p) => format!("{p:+.1}%"),
    }
}
