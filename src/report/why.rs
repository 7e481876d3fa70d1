//! The `why` section: per big event, the late rank's lateness split into
//! its CPU part (what the launching thread did instead of launching, every
//! nanosecond to one explanation) and its GPU part (the work ahead of it on
//! its stream), with what the capture did not record; then the causes by
//! kind over all big events.

use super::context::Context;
use super::json;
use crate::analysis::account::CpuKind;
use crate::analysis::launch::preceding_kernel;
use crate::analysis::why::{Why, big_events};
use crate::text_safe::escape_controls as safe;
use serde_json::{Value, json};
use std::collections::BTreeMap;

fn ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

fn accounts(cx: &Context) -> Vec<Why> {
    let a = cx.analysis;
    big_events(cx.profile, &a.clock, &a.matching, &a.skews)
        .into_iter()
        .filter(|w| cx.shows(w.device))
        .collect()
}

fn why_json(cx: &Context, w: &Why) -> Value {
    let p = cx.profile;
    let g = &cx.analysis.matching.groups[w.group];
    let parts: Vec<Value> = w.cpu.as_ref().map_or(Vec::new(), |s| {
        s.shares
            .iter()
            .map(|x| {
                json!({
                    "kind": x.kind.name(),
                    "name": p.strings.get(x.label),
                    "ms": ms(x.ns()),
                    "start_ns": x.spans.first().map(|s| s.0),
                    "end_ns": x.spans.last().map(|s| s.1),
                    "detail": w
                        .waits
                        .iter()
                        .rev()
                        .find(|v| x.kind == CpuKind::CudaSync && v.name == x.label)
                        .map_or(Value::Null, |v| json!({
                            "waited_for": p.strings.get(p.gpu.name(v.row)),
                            "stream": p.lanes[v.lane as usize].stream,
                            "start_ns": v.start_ns,
                            "end_ns": v.end_ns,
                            "ms": ms(v.end_ns - v.start_ns),
                        })),
                })
            })
            .collect()
    });
    let chain: Vec<Value> = w
        .gpu_chain
        .iter()
        .map(|l| {
            json!({
                "kind": "stream",
                "lane": p.lanes[l.lane as usize].stream,
                "name": p.strings.get(p.gpu.name(l.row)),
                "start_ns": l.start_ns,
                "end_ns": l.end_ns,
                "ms": ms(l.end_ns - l.start_ns),
                "waits_on": Value::Null,
            })
        })
        .collect();
    json!({
        "group": g.key,
        "instance": w.instance + 1,
        "device": json::device(p, w.device),
        "lateness_ms": ms(w.lateness_ns),
        "cpu_ms": ms(w.cpu_ns),
        "gpu_ms": ms(w.gpu_ns),
        "resolvable": w.resolvable,
        "cpu_parts": parts,
        "gpu_chain": chain,
        "unaccounted_ms": ms(w.unaccounted_ns()),
        "missing": w.missing.iter().map(|m| m.name()).collect::<Vec<_>>(),
    })
}

/// Time per cause kind over all accounts: the CPU parts by kind, the
/// stream links, and what nothing explains.
fn causes(ws: &[Why]) -> BTreeMap<&'static str, i64> {
    let mut out = BTreeMap::new();
    for w in ws {
        if let Some(s) = &w.cpu {
            for x in &s.shares {
                *out.entry(x.kind.name()).or_insert(0) += x.ns();
            }
            *out.entry("unaccounted").or_insert(0) += s.unaccounted_ns();
        }
        if w.gpu_ns > 0 {
            let (key, ns) = if w.gpu_chain.is_empty() {
                ("gpu-unexplained", w.gpu_ns)
            } else {
                ("stream", w.gpu_chain.iter().map(|l| l.held_ns).sum())
            };
            *out.entry(key).or_insert(0) += ns;
        }
    }
    out
}

pub fn to_json(cx: &Context) -> Value {
    let ws = accounts(cx);
    let summary: serde_json::Map<String, Value> = causes(&ws)
        .into_iter()
        .map(|(k, ns)| (k.to_string(), ms(ns).into()))
        .collect();
    json!({
        "why": ws.iter().map(|w| why_json(cx, w)).collect::<Vec<_>>(),
        "causes_ms": summary,
    })
}

/// `    kind        12.345 ms  what`, the text wrapped under itself.
fn part_line(cx: &Context, kind: &str, ns: i64, text: &str) -> String {
    let head = format!("    {kind:<16}{:>10.3} ms  ", ms(ns));
    let body = super::fit::wrap(
        text,
        "",
        cx.cols().map(|c| c.saturating_sub(head.len()).max(20)),
    );
    let pad = " ".repeat(head.len());
    let mut out = String::new();
    for (i, line) in body.lines().enumerate() {
        out += if i == 0 { &head } else { &pad };
        out += line.trim_start();
        out.truncate(out.trim_end().len());
        out.push('\n');
    }
    out
}

pub fn to_text(cx: &Context) -> String {
    let p = cx.profile;
    let ws = accounts(cx);
    let mut out = String::from("The late ranks' delay, accounted (big events)\n");
    if ws.is_empty() {
        out += "  no big-skew events: nothing to account for\n";
        return out;
    }
    // What every account lacks is said once, below them.
    let common: Vec<_> = ws[0]
        .missing
        .iter()
        .copied()
        .filter(|m| ws.iter().all(|w| w.missing.contains(m)))
        .collect();
    for w in &ws {
        let g = &cx.analysis.matching.groups[w.group];
        out += &cx.note(&format!(
            "{}:{} {} late by {:.3} ms: CPU {:.3} ms ({}), GPU {:.3} ms{}",
            safe(&g.key),
            w.instance + 1,
            p.device_label(w.device).tag(),
            ms(w.lateness_ns),
            ms(w.cpu_ns),
            if w.cpu_ns > 0 {
                "its launch call ended after the earliest peer started"
            } else {
                "launched in time"
            },
            ms(w.gpu_ns),
            if w.resolvable {
                ""
            } else {
                " (not resolvable: within the clock error)"
            }
        ));
        if let Some(s) = &w.cpu {
            let mut shares: Vec<_> = s.shares.iter().collect();
            shares.sort_by_key(|x| std::cmp::Reverse(x.ns()));
            for x in shares {
                let mut what = safe(p.strings.get(x.label)).into_owned();
                if x.kind == CpuKind::CudaSync
                    && let Some(v) = w.waits.iter().rev().find(|v| v.name == x.label)
                {
                    what += &format!(
                        ", returned after {} on S{} ended (it ran {:.3} ms)",
                        safe(p.strings.get(p.gpu.name(v.row))),
                        p.lanes[v.lane as usize].stream,
                        ms(v.end_ns - v.start_ns)
                    );
                }
                out += &part_line(cx, x.kind.name(), x.ns(), &what);
            }
            if s.unaccounted_ns() > 0 {
                out += &part_line(
                    cx,
                    "unaccounted",
                    s.unaccounted_ns(),
                    "nothing recorded explains it",
                );
            }
        }
        for l in &w.gpu_chain {
            out += &part_line(
                cx,
                "stream",
                l.held_ns,
                &format!(
                    "queued behind {} on S{} (it ran {:.3} ms, {:.6}–{:.6} s)",
                    safe(p.strings.get(p.gpu.name(l.row))),
                    p.lanes[l.lane as usize].stream,
                    ms(l.end_ns - l.start_ns),
                    l.start_ns as f64 / 1e9,
                    l.end_ns as f64 / 1e9,
                ),
            );
        }
        if w.gpu_ns > 0 && w.gpu_chain.is_empty() {
            let meanwhile = preceding_kernel(p, &cx.analysis.clock, w.row).map(|k| {
                let (a, b) = cx.analysis.clock.gpu_span(p, k.row);
                format!(
                    "; meanwhile the device ran {} on S{} ({:.3} ms, ended {:.3} ms before it started: competes, not proven to block)",
                    safe(p.strings.get(p.gpu.name(k.row))),
                    p.lanes[k.lane as usize].stream,
                    ms(b - a),
                    ms(k.gap_ns),
                )
            });
            out += &part_line(
                cx,
                "gpu",
                w.gpu_ns,
                &format!(
                    "started late with its own stream idle: not explained yet (stream-wait-event syncs are not read){}",
                    meanwhile.unwrap_or_default()
                ),
            );
        }
        for m in w.missing.iter().filter(|m| !common.contains(m)) {
            out += &cx.note_in(1, &format!("· {}", m.sentence()));
        }
    }
    if !common.is_empty() {
        out += "\nNot in the capture, for every event above\n";
        for m in &common {
            out += &cx.note(&format!("· {}", m.sentence()));
        }
    }
    out += "\nCauses over all big events\n";
    for (k, ns) in causes(&ws) {
        if ns != 0 {
            out += &part_line(cx, k, ns, "");
        }
    }
    out += &cx.note("CPU parts are interval unions over [earliest peer's start, launch-call end] on the launching thread, each nanosecond to the first of: sync CUDA call, other CUDA call, OS runtime call, off-CPU, on-CPU, innermost NVTX range; sums over events are not wall time");
    out
}
