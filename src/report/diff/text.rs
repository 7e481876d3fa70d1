//! `diff` as text, within 100 columns unless `--wide`: the sides, steps,
//! kernels, classes, completeness and the gate's section, in order with
//! the overlap and skew parts (their own files).

use super::layout::{Layout, count_row, figure_table, ms_row, signed, signed_pct};
use super::options::DiffOptions;
use crate::analysis::diff::AccountSide;
use crate::analysis::diff::{
    DeviceSet, Diff, DiffCompleteness, Gate, Metric, Regression, STEPS_MISS_GPU_WAITS, delta_pct,
};
use crate::analysis::stats::Spread;
use crate::analysis::step_account::PARTS;
use crate::figure_text::given;
use crate::profile::DeviceLabel;
use crate::report::fit::{Keep, TEXT_WIDTH, shorten};
use crate::report::summary::device_counts;
use crate::report::table::{self, Table};
use crate::text_safe::escape_controls as safe;
use std::path::PathBuf;

/// Kernel names listed in text (JSON has them all).
pub const TOP_KERNELS: usize = 15;

fn side_files(l: &Layout, which: &str, files: &[PathBuf]) -> String {
    let first = files.first().map_or("(nothing)".to_string(), |f| {
        safe(&f.display().to_string()).into_owned()
    });
    let more = match files.len() {
        0 | 1 => String::new(),
        n => format!(" and {} more file{}", n - 1, if n == 2 { "" } else { "s" }),
    };
    let room = l.cols.map(|c| c.saturating_sub(10 + more.len()));
    let first = match room {
        Some(room) => shorten(&first, room.max(20), Keep::End),
        None => first,
    };
    format!("  {which:<7} {first}{more}\n")
}

fn steps(l: &Layout) -> String {
    let s = &l.diff.steps;
    let mut out = String::from("\nSteps\n");
    if s.before.count == 0 && s.after.count == 0 {
        out += "  no step ranges on either side (NVTX ranges matching --step-marker)\n";
        return out;
    }
    out += &l.note("a step lasts from the earliest start to the latest end of its NVTX step range over every rank");
    let mut t = figure_table();
    t.row(count_row("count", s.before.count, s.after.count));
    let pick =
        |f: &crate::analysis::diff::StepFigures, g: fn(&Spread) -> f64| f.spread_ms.map(|s| g(&s));
    for (name, g) in [
        ("p50_ms", (|s: &Spread| s.p50) as fn(&Spread) -> f64),
        ("p90_ms", |s| s.p90),
        ("max_ms", |s| s.max),
    ] {
        t.row(ms_row(l, name, pick(&s.before, g), pick(&s.after, g), true));
    }
    out += &t.render(l.cols);
    if let Some(noise) = l.diff.noise_pct() {
        out += &l.note(&format!(
            "within noise: a change smaller than the before capture's own step-to-step spread, (p90 − p50) / p50 of its steps = {noise:.1}%"
        ));
    }
    out
}

/// Each side's mean step × rank account after warm-up, part by part, and
/// the causes on its critical paths that would save most.
fn step_account(l: &Layout) -> String {
    let d = &l.diff.step_account;
    if d.before.is_none() && d.after.is_none() {
        return String::new();
    }
    let mut out = String::from("\nStep account (report steps)\n");
    out += &l.note("each part's mean per step and rank over the steps after the first (warm-up), ms: where a rank's GPU time in a step went");
    let mut t = figure_table();
    let steps = |s: &Option<AccountSide>| s.as_ref().map_or(0, |s| s.steps);
    t.row(count_row("steps", steps(&d.before), steps(&d.after)));
    for (i, name) in PARTS.iter().enumerate() {
        let part = |s: &Option<AccountSide>| s.as_ref().map(|s| s.parts_ms[i]);
        t.row(ms_row(
            l,
            &format!("{name}_ms"),
            part(&d.before),
            part(&d.after),
            false,
        ));
    }
    out += &t.render(l.cols);
    for (which, side) in [("before", &d.before), ("after", &d.after)] {
        let Some(s) = side else { continue };
        let first: Vec<String> = s
            .causes
            .iter()
            .take(3)
            .map(|c| {
                let mut w = c.kind.to_string();
                if let Some(on) = &c.on {
                    w += &format!(" on {on}");
                }
                if let Some(what) = &c.what {
                    w += &format!(" ({})", shorten(what, 40, Keep::Start));
                }
                format!(
                    "{w}: {:.3} ms over {} step{}",
                    c.saves_ms,
                    c.steps,
                    if c.steps == 1 { "" } else { "s" }
                )
            })
            .collect();
        out += &l.note(&match first.is_empty() {
            true => format!(
                "{which}, first to fix: nothing on a critical path would save time when removed"
            ),
            false => format!("{which}, first to fix: {}", first.join("; ")),
        });
    }
    out
}

fn kernels(l: &Layout) -> String {
    let k = &l.diff.kernels;
    let mut out = format!(
        "\nKernels by name (top {} of {} by |delta|, summed over devices)\n",
        TOP_KERNELS.min(k.len()),
        k.len()
    );
    if k.is_empty() {
        out += "  no kernels on either side\n";
        return out;
    }
    let mut t = Table::new(&[
        "kernel",
        "before_ms",
        "after_ms",
        "delta_ms",
        "delta_%",
        "before_n",
        "after_n",
        "note",
    ])
    .shorten(0, Keep::Start);
    for d in k.iter().take(TOP_KERNELS) {
        let note = match d.only() {
            Some(w) => format!("only {}", w.name()),
            None => l.noise(d.delta_ns() as f64, d.delta_pct()),
        };
        t.row(vec![
            d.name.clone(),
            table::ms(d.before_ns),
            table::ms(d.after_ns),
            signed(d.delta_ns() as f64 / 1e6),
            signed_pct(d.delta_pct()),
            d.before_count.to_string(),
            d.after_count.to_string(),
            note,
        ]);
    }
    out += &t.render(l.cols);
    let (b, a) = l.diff.kernel_total_ns();
    let pct = delta_pct(b as f64, a as f64);
    out += &l.note(&format!(
        "all kernels: {} ms before, {} ms after ({} ms, {}%){}",
        table::ms(b),
        table::ms(a),
        signed((a - b) as f64 / 1e6),
        signed_pct(pct),
        match l.noise((a - b) as f64, pct).as_str() {
            "" => String::new(),
            n => format!(", {n}"),
        }
    ));
    out
}

fn classes(l: &Layout) -> String {
    let mut out = String::from("\nKernel classes (summed durations over devices)\n");
    let mut t = Table::new(&[
        "class",
        "before_ms",
        "after_ms",
        "delta_ms",
        "delta_%",
        "before_n",
        "after_n",
        "note",
    ]);
    for c in &l.diff.classes {
        t.row(vec![
            c.class.name(),
            table::ms(c.before_ns),
            table::ms(c.after_ns),
            signed(c.delta_ns() as f64 / 1e6),
            signed_pct(c.delta_pct()),
            c.before_count.to_string(),
            c.after_count.to_string(),
            l.noise(c.delta_ns() as f64, c.delta_pct()),
        ]);
    }
    if t.is_empty() {
        out += "  no GPU activity on either side\n";
        return out;
    }
    out += &t.render(l.cols);
    out
}

fn labels(ls: &[DeviceLabel]) -> String {
    ls.iter()
        .map(|l| safe(&l.tag()).into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

fn world(w: Option<u32>) -> String {
    w.map_or("not recorded".into(), |w| w.to_string())
}

/// The warning said first when the two captures cover different devices.
fn differs_warning(l: &Layout, c: &DiffCompleteness) -> String {
    if !c.differs() {
        return String::new();
    }
    let mut parts = vec![format!(
        "the captures cover different devices ({} expected before, {} after)",
        c.before.expected.len(),
        c.after.expected.len()
    )];
    if c.before.world_size != c.after.world_size {
        parts.push(format!(
            "world size {} before, {} after",
            world(c.before.world_size),
            world(c.after.world_size)
        ));
    }
    parts.push("figures are compared per device; totals cover different device sets".into());
    l.note(&format!("! {}", parts.join(": ")))
}

fn completeness(l: &Layout) -> String {
    let c = &l.diff.completeness;
    let mut out = String::from("\nCompleteness\n");
    let counts = |s: &DeviceSet| {
        device_counts(
            s.expected.len(),
            s.with_kernels.len(),
            s.missing.len(),
            s.listed_unused.len(),
        )
    };
    out += &l.note(&format!("devices before: {}", counts(&c.before)));
    out += &l.note(&format!("devices after: {}", counts(&c.after)));
    out += &l.note(&format!(
        "world size: {} before, {} after",
        world(c.before.world_size),
        world(c.after.world_size)
    ));
    let lists = [
        ("devices expected only before", &c.only_before),
        ("devices expected only after", &c.only_after),
        (
            "no GPU activity recorded before (CUDA context only)",
            &c.before.missing,
        ),
        (
            "no GPU activity recorded after (CUDA context only)",
            &c.after.missing,
        ),
    ];
    for (what, list) in lists {
        if !list.is_empty() {
            out += &l.note(&format!("{what}: {}", labels(list)));
        }
    }
    if !c.differs() && c.before.missing.is_empty() && c.after.missing.is_empty() {
        out += &l.note("both captures cover the same devices");
    }
    out
}

fn regressions(l: &Layout, gate: Gate, rs: &[Regression]) -> String {
    let mut out = format!(
        "\nRegressions (gate: growth above {}% of the before value)\n",
        given(gate.pct)
    );
    let watched = if gate.total_kernel {
        "the step p50, the exposed NCCL time, every paired group's excess and the total kernel time"
    } else {
        "the step p50, the exposed NCCL time and every paired group's excess"
    };
    if rs.is_empty() {
        out += &l.note(&format!("none: {watched} are within the gate"));
    }
    for r in rs {
        out += &l.note(&safe(&r.phrase()));
        if r.metric == Metric::ExposedNcclPerStep && l.diff.exposed_grew_steps_did_not(gate.pct) {
            out += &l.note(STEPS_MISS_GPU_WAITS);
        }
    }
    if !gate.total_kernel
        && let Some(r) = l.diff.kernel_total_grown(gate.pct)
    {
        out += &l.note(&format!(
            "not gated: {} (summed kernel time includes NCCL kernels waiting for a late peer; --gate total-kernel gates it)",
            r.phrase()
        ));
    }
    out
}

pub fn to_text(d: &Diff, o: &DiffOptions, rs: &[Regression]) -> String {
    let l = Layout {
        diff: d,
        cols: (!o.wide).then_some(TEXT_WIDTH),
    };
    let mut out = String::from("Before and after\n");
    out += &side_files(&l, "before:", &d.before_files);
    out += &side_files(&l, "after:", &d.after_files);
    out += &differs_warning(&l, &d.completeness);
    if d.unchanged() {
        // Tables of zeros would only hide the answer.
        out += &l.note("no change: every figure (steps, kernels, overlap, skew, devices) is the same on both sides");
        // What was compared: the devices either side covers.
        out += &completeness(&l);
        if let Some(g) = o.gate {
            out += &regressions(&l, g, rs);
        }
        return out;
    }
    out += &steps(&l);
    out += &step_account(&l);
    out += &kernels(&l);
    out += &classes(&l);
    out += &super::overlap_text::overlap(&l);
    out += &super::skew_text::skew(&l);
    out += &super::bytes_text::bytes(&l);
    out += &completeness(&l);
    if let Some(g) = o.gate {
        out += &regressions(&l, g, rs);
    }
    out
}
