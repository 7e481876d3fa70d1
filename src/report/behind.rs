//! The `behind` section: per group, the last instance every rank
//! completed, where the ranks diverge, who waits in it and since when, who
//! never launched it (behind) with what it was last seen doing, and the
//! ranks whose capture merely stopped earlier, said apart.

use super::context::Context;
use super::json;
use crate::analysis::behind::{Behind, GroupBehind, LastSeen, Seen, dev_ids};
use crate::analysis::matching::Group;
use crate::profile::Profile;
use crate::text_safe::escape_controls as safe;
use serde_json::{Map, Value, json};

fn seen_json(p: &Profile, s: Option<Seen>) -> (Value, Value) {
    match s {
        Some(s) => (p.strings.get(s.name).into(), s.at_ns.into()),
        None => (Value::Null, Value::Null),
    }
}

fn last_seen_json(p: &Profile, s: &LastSeen) -> Value {
    let (cuda_call, cuda_call_ns) = seen_json(p, s.cuda_call);
    let (nvtx, nvtx_ns) = seen_json(p, s.nvtx);
    let (osrt, osrt_ns) = seen_json(p, s.osrt);
    let (frame, frame_ns) = seen_json(p, s.frame);
    json!({
        "cuda_call": cuda_call, "cuda_call_ns": cuda_call_ns,
        "nvtx": nvtx, "nvtx_ns": nvtx_ns,
        "osrt": osrt, "osrt_ns": osrt_ns,
        "frame": frame, "frame_ns": frame_ns,
        "at_ns": s.at_ns(),
    })
}

fn group_json(cx: &Context, g: &Group, b: &GroupBehind) -> Value {
    let p = cx.profile;
    let mut last_seen = Map::new();
    for (d, s) in &b.last_seen {
        last_seen.insert(
            p.device_label(g.devices[*d]).key_string(),
            last_seen_json(p, s),
        );
    }
    let stopped: Vec<Value> = b
        .stopped_early
        .iter()
        .map(|s| {
            json!({
                "device": json::device(p, g.devices[s.device]),
                "last": s.last,
                "instances_before_end": s.before_end,
                "capture_end_ns": s.capture_end_ns,
            })
        })
        .collect();
    json!({
        "group": g.key,
        "hang": b.is_hang(),
        "op": g.ops.get(b.diverges_at - 1).map(|o| o.name()),
        "last_complete": b.last_complete,
        "diverges_at": b.diverges_at,
        "waiting": json::devices(p, &dev_ids(g, &b.waiting)),
        "behind": json::devices(p, &dev_ids(g, &b.behind)),
        "waiting_since_ns": b.waiting_since_ns,
        "last_seen": last_seen,
        "stopped_early": stopped,
        // 0 on one clock; else times compared across hosts agree to this
        "clock_error_ms": g.clock_error_ns() as f64 / 1e6,
    })
}

pub fn to_json(cx: &Context, b: &Behind) -> Value {
    let m = &cx.analysis.matching;
    let groups: Vec<Value> = b
        .groups
        .iter()
        .filter(|x| cx.shows_group(&m.groups[x.group]))
        .map(|x| group_json(cx, &m.groups[x.group], x))
        .collect();
    json!({
        "hang": b.any_behind(),
        "world_size": b.world_size,
        "never_captured": b.never_captured,
        "groups": groups,
    })
}

/// Seconds on the reference clock, as the other sections print times.
fn secs(ns: i64) -> String {
    format!("{:.6} s", ns as f64 / 1e9)
}

fn labels(p: &Profile, g: &Group, ds: &[usize]) -> String {
    ds.iter()
        .map(|&d| p.device_label(g.devices[d]).to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// "in cudaStreamSynchronize since …; NVTX optimizer_step; …".
fn last_seen_text(p: &Profile, s: &LastSeen) -> String {
    let name = |x: Seen| safe(p.strings.get(x.name)).into_owned();
    let mut parts = Vec::new();
    if let Some(c) = s.cuda_call {
        parts.push(format!("last CUDA call {} at {}", name(c), secs(c.at_ns)));
    }
    if let Some(n) = s.nvtx {
        parts.push(format!("inside NVTX {}", name(n)));
    }
    if let Some(o) = s.osrt {
        parts.push(format!("last OS call {}", name(o)));
    }
    if let Some(f) = s.frame {
        parts.push(format!("last sample in {}", name(f)));
    }
    if parts.is_empty() {
        return "nothing recorded on its CPU threads".into();
    }
    parts.join("; ")
}

fn group_text(cx: &Context, g: &Group, b: &GroupBehind) -> String {
    let p = cx.profile;
    let key = safe(&g.key);
    let k = b.diverges_at;
    let op = g.ops.get(k - 1).map_or("?", |o| o.name());
    let mut out = String::new();
    let complete = b
        .last_complete
        .map_or("none".to_string(), |c| c.to_string());
    if b.is_hang() {
        out += &cx.note(&format!(
            "{key}: HANG at instance {k} ({op}): {} waiting in it, {} never launched it; last instance every rank completed: {complete}",
            b.waiting.len(),
            b.behind.len(),
        ));
        out += &cx.note_in(
            1,
            &format!(
                "waiting since {} (kernel still running at capture end): {}",
                b.waiting_since_ns.map_or("-".into(), secs),
                labels(p, g, &b.waiting)
            ),
        );
        out += &cx.note_in(1, "behind (never launched it):");
        for &d in &b.behind {
            let seen = b.last_seen_of(d).map(|s| last_seen_text(p, s));
            out += &cx.note_in(
                2,
                &format!(
                    "{}: {}",
                    p.device_label(g.devices[d]),
                    seen.unwrap_or_default()
                ),
            );
        }
    } else if !b.waiting.is_empty() || !b.behind.is_empty() {
        out += &cx.note(&format!(
            "{key}: ranks diverge at instance {k} ({op}); last instance every rank completed: {complete}"
        ));
        if !b.waiting.is_empty() {
            out += &cx.note_in(1, &format!(
                "still running at capture end: {} (every rank lacking it stopped capturing first)",
                labels(p, g, &b.waiting)
            ));
        }
        if !b.behind.is_empty() {
            out += &cx.note_in(
                1,
                &format!(
                    "never launched it while recording: {}",
                    labels(p, g, &b.behind)
                ),
            );
        }
    }
    if !b.stopped_early.is_empty() {
        out += &cx.note(&format!(
            "{key}: stopped early, not a hang (its last event is not inside a collective):"
        ));
        for s in &b.stopped_early {
            let seen = b.last_seen_of(s.device).map(|x| last_seen_text(p, x));
            out += &cx.note_in(
                1,
                &format!(
                    "{}: capture ends {} instance{} before the others' (last {}, at {}); {}",
                    p.device_label(g.devices[s.device]),
                    s.before_end,
                    if s.before_end == 1 { "" } else { "s" },
                    s.last,
                    secs(s.capture_end_ns),
                    seen.unwrap_or_default()
                ),
            );
        }
    }
    if let Some(c) = &g.clocks {
        out += &cx.note_in(
            1,
            &format!(
                "times compared across {} clocks aligned by {}, which agree to ±{:.3} ms: a difference below that is not resolvable",
                c.domains,
                c.method.name(),
                c.uncertainty_ns as f64 / 1e6
            ),
        );
    }
    out
}

pub fn to_text(cx: &Context, b: &Behind) -> String {
    let m = &cx.analysis.matching;
    let mut out = String::from("Who is behind\n");
    let mut said = false;
    for (i, g) in m
        .groups
        .iter()
        .enumerate()
        .filter(|(_, g)| cx.shows_group(g))
    {
        if let Some(x) = b.groups.iter().find(|x| x.group == i) {
            out += &group_text(cx, g, x);
            said = true;
        }
        if let Some(d) = &g.desync {
            out += &cx.note(&format!(
                "{}: desync at instance {}: the ranks ran different collectives there; not a hang",
                safe(&g.key),
                d.instance
            ));
            for (op, ds) in &d.ops {
                out += &cx.note_in(
                    1,
                    &format!("ran {}: {}", op.name(), labels(cx.profile, g, ds)),
                );
            }
            said = true;
        }
    }
    if !said {
        out += if m.groups.is_empty() {
            "  no NCCL collectives matched across devices\n"
        } else {
            "  no rank is behind: in every group, every rank completed every instance it captured\n"
        };
    }
    if !b.never_captured.is_empty() {
        let ranks: Vec<String> = b.never_captured.iter().map(|r| r.to_string()).collect();
        out += &cx.note(&format!(
            "never captured: rank{} {} of a world of {} (no file holds {}): not in any figure",
            if ranks.len() == 1 { "" } else { "s" },
            ranks.join(" "),
            b.world_size.unwrap_or_default(),
            if ranks.len() == 1 { "it" } else { "them" },
        ));
    }
    out += &cx.note("times in seconds on the reference clock (the first file's); a rank is behind when its capture went on past the others' start of the instance and it never launched it");
    out
}
