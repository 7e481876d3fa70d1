//! The `steps` section: where each training step's time went on each rank
//! (analysis::step_account), per step, then per rank over the steps that
//! are not warm-up.

use super::context::Context;
use super::fit::Keep;
use super::json;
use super::table::{self, Table};
use crate::analysis::step_account::{self, PARTS, RankStep, StepAccount};
use serde_json::{Value, json};

/// Text lists at most this many ranks (JSON and CSV have all, or `--device`).
const RANKS_LISTED: usize = 32;

fn accounts(cx: &Context) -> Vec<StepAccount> {
    let a = cx.analysis;
    step_account::account(cx.profile, &a.classes, cx.clock, &a.matching, &a.steps)
}

fn is_warmup(cx: &Context, step: usize) -> bool {
    step <= cx.options.warmup_steps
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
    let steps: Vec<Value> = accounts(cx)
        .iter()
        .map(|s| {
            json!({
                "step": s.step,
                "warmup": is_warmup(cx, s.step),
                "time_ms": json::ms(s.span_ns()),
                "start_ns": s.span.0,
                "end_ns": s.span.1,
                "ranks": s.ranks.iter()
                    .filter(|r| cx.shows(r.device))
                    .map(|r| rank_json(cx, s.span_ns(), r))
                    .collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "warmup_steps": cx.options.warmup_steps,
        "steps": steps,
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
    let all = accounts(cx);
    if all.is_empty() {
        out += "  no step ranges: no top-level NVTX range matches the step marker (--step-marker REGEX)\n";
        return out;
    }
    out += &cx.note(
        "each rank's GPU time over the step's span (its NVTX ranges, earliest start to latest end over the ranks), by interval unions that add up to the span: compute alone; overlapped (NCCL under compute); NCCL alone while its collective's last member had not started (wait) or after (xfer); copy alone; idle because the next work's launch call ended after the GPU went idle (host), because its stream waited on an event recorded or completed later (dep), or other idle",
    );
    let mut t = Table::new(&[
        "step", "time_ms", "compute", "overlap", "wait", "xfer", "copy", "host", "dep", "idle",
    ]);
    for s in &all {
        let shown: Vec<&RankStep> = s.ranks.iter().filter(|r| cx.shows(r.device)).collect();
        let mut row = vec![
            format!(
                "{}{}",
                s.step,
                if is_warmup(cx, s.step) { " w" } else { "" }
            ),
            table::ms(s.span_ns()),
        ];
        row.extend(mean_parts(&shown).iter().map(|&ns| table::ms(ns)));
        t.row(row);
    }
    out += &t.render(cx.cols());
    out += &cx.note("per step, each part's mean over the ranks shown (ms); w: warm-up (the first --warmup-steps steps), left out below");
    let kept: Vec<&StepAccount> = all.iter().filter(|s| !is_warmup(cx, s.step)).collect();
    if kept.is_empty() {
        return out;
    }
    out += "\n";
    let mut r = Table::new(&[
        "rank", "steps_ms", "compute", "overlap", "wait", "xfer", "copy", "host", "dep", "idle",
    ])
    .shorten(0, Keep::Middle);
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
    out
}
