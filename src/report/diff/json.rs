//! `diff --format json`: the shape the README documents; times as
//! unrounded ms, devices as `report` writes them, `delta_pct` null when
//! the before value is 0.

use crate::analysis::bandwidth::Totals;
use crate::analysis::diff::AccountSide;
use crate::analysis::diff::{
    BytesDiff, DeviceSet, Diff, DiffCompleteness, OverlapPair, Regression, SkewPair, SkewSide,
    StepFigures,
};
use crate::analysis::launch::Verdict;
use crate::analysis::step_account::PARTS;
use crate::profile::{DeviceKey, DeviceLabel};
use crate::report::json::ms;
use crate::report::json::{spread_json, spread_or_null};
use crate::report::overlap::figures_json;
use serde_json::{Map, Value, json};
use std::path::PathBuf;

fn device(l: &DeviceLabel) -> Value {
    match &l.key {
        DeviceKey::Id(i) => Value::from(*i),
        DeviceKey::HostId(s) => Value::from(s.clone()),
    }
}

fn devices(ls: &[DeviceLabel]) -> Value {
    Value::Array(ls.iter().map(device).collect())
}

fn files(fs: &[PathBuf]) -> Value {
    json!({"files": fs.iter().map(|f| f.display().to_string()).collect::<Vec<_>>()})
}

fn steps(s: &StepFigures) -> Value {
    json!({
        "count": s.count,
        "p50_ms": s.spread_ms.map(|s| s.p50),
        "p90_ms": s.spread_ms.map(|s| s.p90),
        "max_ms": s.spread_ms.map(|s| s.max),
    })
}

fn account_side(s: &AccountSide) -> Value {
    let mut parts = Map::new();
    for (name, ms) in PARTS.iter().zip(s.parts_ms) {
        parts.insert(format!("{name}_ms"), ms.into());
    }
    json!({
        "steps": s.steps,
        "mean_per_step_rank": parts,
        "causes": s.causes.iter().map(|c| json!({
            "kind": c.kind, "on": c.on, "what": c.what, "saves_ms": c.saves_ms, "steps": c.steps,
        })).collect::<Vec<_>>(),
    })
}

fn overlap(o: &OverlapPair) -> Value {
    json!({
        "device": device(&o.device),
        "before": o.before.as_ref().map(figures_json),
        "after": o.after.as_ref().map(figures_json),
    })
}

fn skew_side(s: &SkewSide) -> Value {
    let late: Map<String, Value> = s
        .late_counts
        .iter()
        .map(|(d, n)| (d.key_string(), Value::from(*n)))
        .collect();
    let verdicts: Map<String, Value> = Verdict::ALL
        .into_iter()
        .map(|v| (v.name().to_string(), Value::from(s.verdicts.of(v))))
        .collect();
    json!({
        "group": s.key,
        "instances": s.instances,
        "excess_ms": ms(s.excess_ns),
        "excess_pct": s.excess_pct,
        "start_skew_ms": spread_json(s.start_skew_ms),
        "end_skew_ms": {"p50": s.end_skew_ms.map(|s| s.p50)},
        "big_events": s.big_events.iter().map(|e| json!({
            "instance": e.instance + 1,
            "op": e.op.name(),
            "start_skew_ms": ms(e.start_skew_ns),
            "late_device": device(&e.late_device),
            "step": e.step,
        })).collect::<Vec<_>>(),
        "late_counts": late,
        "verdicts": verdicts,
    })
}

fn skew(s: &SkewPair) -> Value {
    json!({
        "key": s.key,
        "paired_by": s.paired_by.map(|p| p.name()),
        "before": s.before.as_ref().map(skew_side),
        "after": s.after.as_ref().map(skew_side),
    })
}

fn op_bytes(o: &Totals) -> Value {
    json!({
        "instances": o.counted,
        "sized_instances": o.sized,
        "bytes": o.bytes,
        "busbw_gbps": spread_or_null(o.busbw_gbps),
    })
}

/// Bytes and busbw per op; every figure `null` on a side without sizes.
fn bandwidth(b: &BytesDiff) -> Value {
    json!({
        "sizes_recorded": {"before": b.recorded.0, "after": b.recorded.1},
        "note": {"before": b.said.0, "after": b.said.1},
        "caveat": crate::analysis::bandwidth::CAVEAT,
        "ops": b.ops.iter().map(|o| json!({
            "op": o.op.name(),
            "before": o.before.as_ref().map(op_bytes),
            "after": o.after.as_ref().map(op_bytes),
            "bytes_delta_pct": o.bytes_delta_pct(),
            "busbw_p50_delta_pct": o.busbw_p50_delta_pct(),
        })).collect::<Vec<_>>(),
    })
}

/// One side's devices, under the keys `report summary` gives them.
fn device_set(s: &DeviceSet) -> Value {
    json!({
        "expected_devices": devices(&s.expected),
        "devices_with_kernels": devices(&s.with_kernels),
        "missing_devices": devices(&s.missing),
        "listed_unused_devices": devices(&s.listed_unused),
        "world_size": s.world_size,
    })
}

fn completeness(c: &DiffCompleteness) -> Value {
    json!({
        "before": device_set(&c.before),
        "after": device_set(&c.after),
        "only_before": devices(&c.only_before),
        "only_after": devices(&c.only_after),
    })
}

fn regression(r: &Regression) -> Value {
    json!({
        "metric": r.metric.name(),
        "key": r.key,
        "before": r.before,
        "after": r.after,
        "pct": r.pct,
    })
}

pub fn to_json(d: &Diff, regressions: &[Regression]) -> Value {
    json!({
        "before": files(&d.before_files),
        "after": files(&d.after_files),
        "steps": {"before": steps(&d.steps.before), "after": steps(&d.steps.after)},
        "step_account": {
            "before": d.step_account.before.as_ref().map(account_side),
            "after": d.step_account.after.as_ref().map(account_side),
        },
        "kernels": d.kernels.iter().map(|k| json!({
            "name": k.name,
            "before_ms": ms(k.before_ns),
            "after_ms": ms(k.after_ns),
            "delta_ms": ms(k.delta_ns()),
            "delta_pct": k.delta_pct(),
            "before_count": k.before_count,
            "after_count": k.after_count,
        })).collect::<Vec<_>>(),
        "classes": d.classes.iter().map(|c| json!({
            "class": c.class.name(),
            "before_ms": ms(c.before_ns),
            "after_ms": ms(c.after_ns),
            "delta_ms": ms(c.delta_ns()),
            "delta_pct": c.delta_pct(),
        })).collect::<Vec<_>>(),
        "overlap": d.overlap.iter().map(overlap).collect::<Vec<_>>(),
        "skew": d.skew.iter().map(skew).collect::<Vec<_>>(),
        "bandwidth": bandwidth(&d.bytes),
        "exposed_nccl": d.exposed_nccl().map(|e| json!({
            "per": e.per.name(),
            "before_ms": e.before_ms,
            "after_ms": e.after_ms,
            "delta_pct": e.delta_pct(),
        })),
        "completeness": completeness(&d.completeness),
        "regressions": regressions.iter().map(regression).collect::<Vec<_>>(),
    })
}
