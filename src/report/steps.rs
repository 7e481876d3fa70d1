//! The `steps` section: where each training step's time went on each rank
//! (analysis::step_account), per step, then per rank over the steps that
//! are not warm-up.

use super::context::Context;
use super::fit::Keep;
use super::json;
use super::table::{self, Table};
use crate::analysis::compute_stragglers::ComputeStraggler;
use crate::analysis::critical_path::{SegKind, Segment, StepPath, WhatIf};
use crate::analysis::step_account::{PARTS, RankStep, StepAccount};
use crate::analysis::step_overview::{self, StepOverview};
use crate::analysis::step_spans::{self, StepsFrom};
use crate::profile::{DevId, Sym};
use serde_json::{Value, json};

/// The text columns of the account's parts, in [`PARTS`]' order.
const PART_COLUMNS: [&str; 8] = [
    "compute_ms",
    "overlap_ms",
    "wait_ms",
    "xfer_ms",
    "copy_ms",
    "host_ms",
    "dep_ms",
    "idle_ms",
];

/// Text lists at most this many ranks (JSON and CSV have all, or `--device`).
const RANKS_LISTED: usize = 32;

/// The steps' figures, computed once for the whole section.
fn overview(cx: &Context) -> StepOverview {
    let a = cx.analysis;
    step_overview::overview(
        cx.profile,
        &a.classes,
        cx.clock,
        &a.matching,
        &a.steps,
        cx.options.warmup_steps,
    )
}

/// A straggler's GPU clock over its slow steps against its peers', where
/// the capture sampled GPU metrics.
fn straggler_clock(
    cx: &Context,
    o: &StepOverview,
    samples: &super::why_clock::Samples,
    s: &ComputeStraggler,
) -> Option<super::why_clock::ClockDuring> {
    let (first, last) = (s.slow_steps.first()?, s.slow_steps.last()?);
    let span = crate::analysis::Window {
        start: o.accounts.get(first - 1)?.span.0,
        end: o.accounts.get(last - 1)?.span.1,
    };
    let peers: Vec<DevId> = (0..cx.profile.devices.len() as DevId).collect();
    super::why_clock::between(cx.profile, cx.clock, samples, s.device, &peers, span)
}

fn straggler_json(
    cx: &Context,
    o: &StepOverview,
    samples: &super::why_clock::Samples,
    s: &ComputeStraggler,
) -> Value {
    let clock = straggler_clock(cx, o, samples, s).map(|c| {
        json!({"metric": c.metric, "mean": c.late, "samples": c.samples,
            "peers_median": c.peers_median, "peers": c.peers, "below_peers": c.below_peers()})
    });
    json!({
        "device": json::device(cx.profile, s.device),
        "slow_steps": s.slow_steps,
        "counted_steps": s.counted,
        "ratio": s.ratio,
        "extra_ms_per_step": json::ms(s.extra_ns_per_step),
        "kernel": s.kernel.map(|k| cx.profile.strings.get(k)),
        "gpu_clock": clock,
    })
}

fn stragglers_text(cx: &Context, o: &StepOverview) -> String {
    let all = &o.stragglers;
    if all.is_empty() {
        return cx.note("no compute straggler: no rank's compute ran 5 % or more over its peers' median for the same kernels in three steps of four after warm-up, and in two at least");
    }
    let samples = super::why_clock::Samples::read(cx.profile);
    let mut out = String::new();
    for s in all.iter().filter(|s| cx.shows(s.device)) {
        let p = cx.profile;
        let mut line = format!(
            "compute straggler {}: its kernels ran {:.2}× its peers' median for the same kernels in {} of {} steps after warm-up (+{} ms per step)",
            p.device_label(s.device).tag(),
            s.ratio,
            s.slow_steps.len(),
            s.counted,
            table::ms(s.extra_ns_per_step),
        );
        if let Some(k) = s.kernel {
            line += &format!(
                "; most in {}",
                super::fit::shorten(p.strings.get(k), 48, Keep::Start)
            );
        }
        if let Some(c) = straggler_clock(cx, o, &samples, s) {
            line += &format!(
                "; its {} {:.0} against its peers' median {:.0}{}",
                c.metric,
                c.late,
                c.peers_median,
                if c.below_peers() {
                    ": throttled, or held at a lower clock"
                } else {
                    ""
                }
            );
        }
        out += &cx.note(&line);
    }
    out
}

/// A cause's device and name as JSON.
fn who_json(cx: &Context, device: Option<DevId>, what: Option<Sym>) -> (Value, Value) {
    (
        device.map_or(Value::Null, |d| json::device(cx.profile, d)),
        what.map_or(Value::Null, |w| Value::from(cx.profile.strings.get(w))),
    )
}

fn segment_json(cx: &Context, s: &Segment) -> Value {
    let (device, what) = who_json(cx, s.device, s.what);
    json!({
        "device": device, "kind": s.kind.name(), "what": what,
        "start_ns": s.start, "end_ns": s.end, "ms": json::ms(s.end - s.start),
        "uncertain": s.uncertain,
    })
}

fn what_if_json(cx: &Context, w: &WhatIf) -> Value {
    let (device, what) = who_json(cx, w.device, w.what);
    json!({"device": device, "kind": w.kind.name(), "what": what, "ranks": w.ranks, "saves_ms": json::ms(w.saves_ns)})
}

fn rank_json(cx: &Context, span_ns: i64, r: &RankStep) -> Value {
    let mut v = serde_json::Map::new();
    v.insert("device".into(), json::device(cx.profile, r.device));
    v.insert("span_ms".into(), json::ms(span_ns).into());
    for (name, ns) in PARTS.iter().zip(r.parts()) {
        v.insert(format!("{name}_ms"), json::ms(ns).into());
    }
    Value::Object(v)
}

pub fn to_json(cx: &Context) -> Value {
    let o = overview(cx);
    let steps: Vec<Value> = o
        .accounts
        .iter()
        .zip(&o.paths)
        .map(|(s, path)| {
            json!({
                "step": s.step,
                "warmup": o.is_warmup(s.step),
                "time_ms": json::ms(s.span_ns()),
                "start_ns": s.span.0,
                "end_ns": s.span.1,
                "ranks": s.ranks.iter()
                    .filter(|r| cx.shows(r.device))
                    .map(|r| rank_json(cx, s.span_ns(), r))
                    .collect::<Vec<_>>(),
                "critical_path": path.path.iter().map(|g| segment_json(cx, g)).collect::<Vec<_>>(),
                "what_if": path.what_if.iter().map(|w| what_if_json(cx, w)).collect::<Vec<_>>(),
            })
        })
        .collect();
    let causes: Vec<Value> = o
        .causes
        .iter()
        .map(|(w, steps)| {
            let mut v = what_if_json(cx, w);
            v["steps"] = Value::from(*steps);
            v
        })
        .collect();
    let samples = super::why_clock::Samples::read(cx.profile);
    let stragglers: Vec<Value> = o
        .stragglers
        .iter()
        .filter(|s| cx.shows(s.device))
        .map(|s| straggler_json(cx, &o, &samples, s))
        .collect();
    let from = match &o.from {
        StepsFrom::None => Value::Null,
        StepsFrom::Markers => json!({"source": "markers"}),
        StepsFrom::Collectives { group, per_step } => {
            json!({"source": "collectives", "group": group, "per_step": per_step})
        }
    };
    json!({
        "steps_from": from,
        "warmup_steps": cx.options.warmup_steps,
        "steps": steps,
        "causes": causes,
        "compute_stragglers": stragglers,
    })
}

/// The mean of each part over the ranks shown, in ns.
fn mean_parts(ranks: &[&RankStep]) -> [i64; 8] {
    let mut sum = [0i64; 8];
    for r in ranks {
        for (s, v) in sum.iter_mut().zip(r.parts()) {
            *s += v;
        }
    }
    sum.map(|s| s / ranks.len().max(1) as i64)
}

pub fn to_text(cx: &Context) -> String {
    let p = cx.profile;
    let mut out = String::from("Where step time goes, per step and rank\n");
    let o = overview(cx);
    let all = &o.accounts;
    if all.is_empty() {
        out += &format!("  {}\n", step_spans::NO_STEPS);
        return out;
    }
    if let Some(said) = o.from.said() {
        out += &cx.note(&said);
    }
    out += &cx.note(
        "each rank's GPU time over the step's span (its NVTX ranges, earliest start to latest end over the ranks), by interval unions that add up to the span: compute alone; overlapped (NCCL under compute); NCCL alone while its collective's last member had not started (wait) or after (xfer); copy alone; idle because the next work's launch call ended after the GPU went idle (host), because its stream waited on an event recorded or completed later (dep), or other idle",
    );
    let mut t = Table::new(&[&["step", "time_ms"][..], &PART_COLUMNS].concat());
    for s in all {
        let shown: Vec<&RankStep> = s.ranks.iter().filter(|r| cx.shows(r.device)).collect();
        let mut row = vec![
            format!("{}{}", s.step, if o.is_warmup(s.step) { " w" } else { "" }),
            table::ms(s.span_ns()),
        ];
        row.extend(mean_parts(&shown).iter().map(|&ns| table::ms(ns)));
        t.row(row);
    }
    out += &t.render(cx.cols());
    out += &cx.note("per step, each part's mean over the ranks shown (ms); w: warm-up (the first --warmup-steps steps), left out below");
    let kept: Vec<&StepAccount> = all.iter().filter(|s| !o.is_warmup(s.step)).collect();
    if kept.is_empty() {
        return out;
    }
    out += "\n";
    let mut r =
        Table::new(&[&["rank", "steps_ms"][..], &PART_COLUMNS].concat()).shorten(0, Keep::Middle);
    let mut listed = 0;
    let ranks = kept[0].ranks.len();
    for i in 0..ranks {
        let device = kept[0].ranks[i].device;
        if !cx.shows(device) {
            continue;
        }
        listed += 1;
        if listed > RANKS_LISTED {
            continue;
        }
        let mut sum = [0i64; 8];
        let mut span = 0i64;
        for s in &kept {
            span += s.span_ns();
            for (a, v) in sum.iter_mut().zip(s.ranks[i].parts()) {
                *a += v;
            }
        }
        let mut row = vec![p.device_label(device).to_string(), table::ms(span)];
        row.extend(sum.iter().map(|&ns| table::ms(ns)));
        r.row(row);
    }
    out += &r.render(cx.cols());
    if listed > RANKS_LISTED {
        out += &cx.note(&format!(
            "{} more ranks: --device D, or --format json|csv for all",
            listed - RANKS_LISTED
        ));
    }
    out += &cx.note(&format!(
        "per rank, summed over the {} steps after warm-up (ms); sums over ranks are not wall time",
        kept.len()
    ));
    out += &stragglers_text(cx, &o);
    out += "\n";
    out += &paths_text(cx, &o);
    out
}

/// A cause in words: `os_wait on D3 (pthread_cond_wait)`, or on every
/// rank of a host at once: `os_wait on gpu-a23 ×8 ranks (…)`.
fn cause_words(cx: &Context, w: &WhatIf) -> String {
    let (p, what) = (cx.profile, w.what);
    let mut s = w.kind.name().to_string();
    if let Some(on) = step_overview::cause_place(p, w) {
        s += &format!(" on {on}");
    }
    if let Some(w) = what {
        s += &format!(
            " ({})",
            super::fit::shorten(p.strings.get(w), 48, Keep::Start)
        );
    }
    s
}

/// A path's time by kind (ms, largest first; the small kinds as `other`),
/// with the devices that hold most of compute, os_wait and host.
fn composition(cx: &Context, path: &StepPath) -> String {
    step_overview::composition(path)
        .iter()
        .map(|k| {
            let mut s = format!("{} {}", table::ms(k.ns), k.kind.name());
            if matches!(k.kind, SegKind::Compute | SegKind::OsWait | SegKind::Host) {
                let top: Vec<String> = k
                    .devices
                    .iter()
                    .take(2)
                    .filter_map(|(d, ns)| {
                        d.map(|d| {
                            format!("{} {}", cx.profile.device_label(d).tag(), table::ms(*ns))
                        })
                    })
                    .collect();
                if !top.is_empty() {
                    s += &format!(
                        " ({}{})",
                        top.join(", "),
                        if k.devices.len() > 2 { ", …" } else { "" }
                    );
                }
            }
            s
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn paths_text(cx: &Context, o: &StepOverview) -> String {
    let mut out = String::from("Critical path per step, and what removing a cause would save\n");
    out += &cx.note("the chain of work across ranks that set each step's time (ms; its parts add up to the step): a rank's kernels, a collective's transfer after its last member arrived, the CPU in a CUDA call (cuda_call: a synchronous copy waits there), in an OS call (os_wait) or between calls (host), copies; other = launch and queue latencies, sync returns, time before the path's first node. A what-if replays the step without one cause on the path (an OS wait or a host gap of 1 ms or more taken out, a kernel slower than its peers' median for the same kernel in the same step brought to that median): another path may take over, so it saves at most that cause's time");
    for p in &o.paths {
        let head = format!(
            "step {}{}: {} ms — {}",
            p.step,
            if o.is_warmup(p.step) {
                " (warm-up)"
            } else {
                ""
            },
            table::ms(p.span.1 - p.span.0),
            composition(cx, p)
        );
        out += &cx.note(&head);
        if p.path.iter().any(|s| s.uncertain) {
            out += &cx.note_in(1, "crosses hosts at a collective whose last two arrivals are within the clocks' error: the path may run through either");
        }
        for w in p.what_if.iter().take(3) {
            out += &cx.note_in(
                1,
                &format!(
                    "without {}: saves {} ms",
                    cause_words(cx, w),
                    table::ms(w.saves_ns)
                ),
            );
        }
    }
    let causes = &o.causes;
    out += "\n";
    if causes.is_empty() {
        out += &cx.note("no cause on a critical path after warm-up would save time when removed");
        return out;
    }
    out += "Causes over the steps after warm-up, by time saved (what to fix first)\n";
    let mut t = Table::new(&["saves_ms", "steps", "cause"]).shorten(2, Keep::Start);
    for (w, steps) in causes.iter().take(10) {
        t.row(vec![
            table::ms(w.saves_ns),
            steps.to_string(),
            cause_words(cx, w),
        ]);
    }
    out += &t.render(cx.cols());
    out += &cx.note("each what-if alone, summed over steps: removing two causes together can save less than their sum");
    out
}
