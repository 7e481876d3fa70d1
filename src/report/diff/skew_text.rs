//! The skew part of `diff` text: a summary of every paired group, then
//! each pair's figures side by side, then the groups on one side only.

use super::layout::{Layout, count_row, figure_table, ms_row, signed, signed_pct};
use crate::analysis::diff::{SkewPair, SkewSide};
use crate::analysis::launch::Verdict;
use crate::figure_text::fixed;
use crate::report::fit::Keep;
use crate::report::table::{self, Table};
use crate::text_safe::escape_controls as safe;

fn pair_detail(l: &Layout, s: &SkewPair, b: &SkewSide, a: &SkewSide) -> String {
    let by = s.paired_by.map_or("", |p| p.name());
    let mut out = if b.key == a.key {
        format!("\nSkew of {} (paired by {by})\n", safe(&a.key))
    } else {
        format!(
            "\nSkew of {} (before: {}, paired by {by})\n",
            safe(&a.key),
            safe(&b.key)
        )
    };
    let mut t = figure_table();
    t.row(count_row("instances", b.instances, a.instances));
    t.row(ms_row(
        l,
        "excess_ms",
        Some(b.excess_ns as f64 / 1e6),
        Some(a.excess_ns as f64 / 1e6),
        true,
    ));
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| fixed(v, 1));
    t.row(vec![
        "excess_%".into(),
        pct(b.excess_pct),
        pct(a.excess_pct),
        match (b.excess_pct, a.excess_pct) {
            (Some(x), Some(y)) => signed_pct(Some(y - x)),
            _ => "-".into(),
        },
        "-".into(),
        "points".into(),
    ]);
    let spread = |x: &SkewSide, f: fn(&crate::analysis::stats::Spread) -> f64| {
        x.start_skew_ms.map(|s| f(&s))
    };
    t.row(ms_row(
        l,
        "start_skew_p50_ms",
        spread(b, |s| s.p50),
        spread(a, |s| s.p50),
        false,
    ));
    t.row(ms_row(
        l,
        "start_skew_p90_ms",
        spread(b, |s| s.p90),
        spread(a, |s| s.p90),
        false,
    ));
    t.row(ms_row(
        l,
        "start_skew_max_ms",
        spread(b, |s| s.max),
        spread(a, |s| s.max),
        false,
    ));
    t.row(ms_row(
        l,
        "end_skew_p50_ms",
        b.end_skew_ms.map(|s| s.p50),
        a.end_skew_ms.map(|s| s.p50),
        false,
    ));
    t.row(count_row(
        "big_events",
        b.big_events.len(),
        a.big_events.len(),
    ));
    for v in Verdict::ALL {
        // Undecided verdicts come only from clocks of several hosts.
        let (nb, na) = (b.verdicts.of(v), a.verdicts.of(v));
        if v == Verdict::NotResolvable && nb + na == 0 {
            continue;
        }
        t.row(count_row(
            &format!("verdict {}", v.name()),
            b.verdicts.of(v),
            a.verdicts.of(v),
        ));
    }
    // Late counts of devices on both sides whose count changed, and of
    // devices on one side only.
    let mut changed = 0;
    for (dev, n) in &a.late_counts {
        let before = b
            .late_counts
            .iter()
            .find(|(d, _)| d.key == dev.key)
            .map(|x| x.1);
        if before != Some(*n) {
            changed += 1;
            t.row(count_row(
                &format!("late {}", dev.tag()),
                before.unwrap_or(0),
                *n,
            ));
        }
    }
    for (dev, n) in &b.late_counts {
        if !a.late_counts.iter().any(|(d, _)| d.key == dev.key) {
            changed += 1;
            t.row(count_row(&format!("late {}", dev.tag()), *n, 0));
        }
    }
    out += &t.render(l.cols);
    out += &l.note(&format!(
        "late DEVICE: instances in which the device started last ({}); verdict: why each big event's late rank was late",
        if changed == 0 {
            "no device's count changed".to_string()
        } else {
            "only devices whose count changed".to_string()
        }
    ));
    out
}

/// The two sides' figures are the same (their group indices aside).
fn same_figures(b: &SkewSide, a: &SkewSide) -> bool {
    SkewSide {
        group: 0,
        ..b.clone()
    } == SkewSide {
        group: 0,
        ..a.clone()
    }
}

fn one_side(s: &SkewSide) -> String {
    format!(
        "{} ({} instances, excess {} ms)",
        safe(&s.key),
        s.instances,
        table::ms(s.excess_ns)
    )
}

pub(super) fn skew(l: &Layout) -> String {
    let pairs = &l.diff.skew;
    let mut out = String::from("\nSkew per group (excess = waiting summed over ranks)\n");
    if pairs.is_empty() {
        out += "  no NCCL collectives matched across devices on either side\n";
        return out;
    }
    let mut t = Table::new(&[
        "group",
        "paired_by",
        "before_ms",
        "after_ms",
        "delta_ms",
        "delta_%",
        "note",
    ])
    .shorten(0, Keep::Start);
    for s in pairs {
        if let (Some(b), Some(a)) = (&s.before, &s.after) {
            let delta = (a.excess_ns - b.excess_ns) as f64 / 1e6;
            t.row(vec![
                s.key.clone(),
                s.paired_by.map_or("-", |p| p.name()).into(),
                table::ms(b.excess_ns),
                table::ms(a.excess_ns),
                signed(delta),
                signed_pct(s.excess_delta_pct()),
                l.noise(delta, s.excess_delta_pct()),
            ]);
        }
    }
    if !t.is_empty() {
        out += &l.note("excess_ms of each paired group; paired by key (stream ids), else by an identical op sequence");
        out += &t.render(l.cols);
    }
    // Each changed pair in detail; an unchanged one is its summary row.
    let mut unchanged = Vec::new();
    for s in pairs {
        if let (Some(b), Some(a)) = (&s.before, &s.after) {
            if same_figures(b, a) {
                unchanged.push(safe(&s.key).into_owned());
            } else {
                out += &pair_detail(l, s, b, a);
            }
        }
    }
    if !unchanged.is_empty() {
        out += "\n";
        out += &l.note(&format!(
            "groups whose figures did not change: {}",
            unchanged.join(", ")
        ));
    }
    let only =
        |f: fn(&SkewPair) -> Option<&SkewSide>, other: fn(&SkewPair) -> bool| -> Vec<String> {
            pairs
                .iter()
                .filter(|s| other(s))
                .filter_map(|s| f(s).map(one_side))
                .collect()
        };
    let before_only = only(|s| s.before.as_ref(), |s| s.after.is_none());
    let after_only = only(|s| s.after.as_ref(), |s| s.before.is_none());
    if !before_only.is_empty() || !after_only.is_empty() {
        out += "\n";
    }
    if !before_only.is_empty() {
        out += &l.note(&format!(
            "groups only before (unpaired): {}",
            before_only.join("; ")
        ));
    }
    if !after_only.is_empty() {
        out += &l.note(&format!(
            "groups only after (unpaired): {}",
            after_only.join("; ")
        ));
    }
    out
}
