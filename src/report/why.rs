//! The `why` section: per big event, the late rank's lateness split into
//! its CPU part (what the launching thread did instead of launching, every
//! nanosecond to one explanation) and its GPU part (the chain of work that
//! held it: ahead on its stream, or behind an event it waited on), with
//! what the capture did not record; then the causes by kind over all big
//! events.

use super::context::Context;
use super::json;
use super::why_clock::{self, ClockDuring, Samples};
use crate::analysis::account::{CpuKind, Share, Split};
use crate::analysis::why::{Why, big_events};
use crate::analysis::why_words as words;
use crate::profile::{SuspectTable, Sym};
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

fn parts_json(cx: &Context, w: &Why, s: &Split<Sym>) -> Vec<Value> {
    let p = cx.profile;
    s.shares
        .iter()
        .map(|x| {
            json!({
                "kind": x.kind.name(),
                "name": words::share_name(p, x.kind, x.label),
                "ms": ms(x.ns()),
                "start_ns": x.spans.first().map(|s| s.0),
                "end_ns": x.spans.last().map(|s| s.1),
                "detail": detail_json(cx, w, x),
            })
        })
        .collect()
}

fn detail_json(cx: &Context, w: &Why, x: &Share<Sym>) -> Value {
    let p = cx.profile;
    match x.kind {
        CpuKind::CudaSync => {
            w.waits
                .iter()
                .rev()
                .find(|v| v.name == x.label)
                .map_or(Value::Null, |v| {
                    json!({"waited_for": {
                        "name": p.strings.get(p.gpu.name(v.row)),
                        "stream": p.lanes[v.lane as usize].stream,
                        "start_ns": v.start_ns,
                        "end_ns": v.end_ns,
                        "ms": ms(v.end_ns - v.start_ns),
                    }})
                })
        }
        CpuKind::OffCpu => json!({
            // the spans the part counts, so they add up to its ms
            "spans": w.off_cpu_counted(x).iter().map(|o| json!({
                "start_ns": o.span.0,
                "end_ns": o.span.1,
                "cpu": o.cpu,
                "ran_meanwhile": o.ran.iter().map(|&t| words::thread_name(p, t)).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        }),
        CpuKind::OnCpu => w.on_cpu.as_ref().map_or(Value::Null, |on| {
            json!({
                "frame": p.strings.get(on.frame),
                "samples": on.samples,
                // the period these samples show; null when they show none
                "period_ms": on.period_ns.map(ms),
            })
        }),
        _ => Value::Null,
    }
}

/// The late rank's GPU clock over its GPU part against its peers', when
/// the capture sampled GPU metrics.
fn clock_during(cx: &Context, s: &Samples, w: &Why) -> Option<ClockDuring> {
    let g = &cx.analysis.matching.groups[w.group];
    why_clock::during(cx.profile, cx.clock, s, w, &g.devices)
}

fn clock_json(c: Option<ClockDuring>) -> Value {
    c.map_or(Value::Null, |c| {
        json!({
            "metric": c.metric,
            "mean": c.late,
            "samples": c.samples,
            "peers_median": c.peers_median,
            "peers": c.peers,
            "below_peers": c.below_peers(),
        })
    })
}

fn clock_text(cx: &Context, w: &Why, c: &ClockDuring) -> String {
    let unit = crate::analysis::gpu_metrics::unit(&c.metric);
    let tag = cx.profile.device_label(w.device).tag();
    let verdict = if c.below_peers() {
        ": throttled, or held at a lower clock: its work ran slower than theirs"
    } else {
        ": as fast as they were"
    };
    format!(
        "GPU clock over its GPU part: {tag} at {:.0}{unit} ({} sample(s)), its {} peers' median {:.0}{unit} ({}){verdict}",
        c.late,
        c.samples,
        c.peers,
        c.peers_median,
        safe(&c.metric)
    )
}

fn why_json(cx: &Context, w: &Why, samples: &Samples) -> Value {
    let p = cx.profile;
    let g = &cx.analysis.matching.groups[w.group];
    let chain: Vec<Value> = w
        .gpu_chain
        .iter()
        .map(|l| {
            json!({
                "kind": l.kind.name(),
                "lane": p.lanes[l.lane as usize].stream,
                "name": p.strings.get(p.gpu.name(l.row)),
                "start_ns": l.start_ns,
                "end_ns": l.end_ns,
                "ms": ms(l.end_ns - l.start_ns),
                "held_ms": ms(l.held_ns),
                "event": l.event,
                "waits_on": l.waits_on,
                "late_launch": l.late_launch.as_ref().map(|late| json!({
                    "thread": words::thread_name(p, late.thread),
                    "cpu_parts": parts_json(cx, w, &late.split),
                    "unaccounted_ms": ms(late.split.unaccounted_ns()),
                })),
            })
        })
        .collect();
    json!({
        "group": g.key,
        "instance": w.instance + 1,
        "device": json::device(p, w.device),
        "lateness_ms": ms(w.lateness_ns),
        // null when the launch call is not in the capture: the split is unknown
        "cpu_ms": w.split_known().then(|| ms(w.cpu_ns)),
        "gpu_ms": w.split_known().then(|| ms(w.gpu_ns)),
        "resolvable": w.resolvable,
        "clock_error_ms": ms(w.clock_error_ns),
        "cpu_parts": w.cpu.as_ref().map_or(Vec::new(), |s| parts_json(cx, w, s)),
        "gpu_chain": chain,
        // signed: negative when the kernel started before its launch call
        // returned (the parts add up to lateness_ms)
        "gpu_unexplained_ms": w.split_known().then(|| ms(w.gpu_rest_ns())),
        "unaccounted_ms": ms(w.unaccounted_ns()),
        "largest": words::largest_cause(p, w),
        "missing": w.missing.iter().map(|m| m.name()).collect::<Vec<_>>(),
        "gpu_clock": clock_json(clock_during(cx, samples, w)),
    })
}

/// Time per cause kind over all accounts: the CPU parts by kind, the
/// chain links by kind, and what nothing explains.
fn causes(ws: &[Why]) -> BTreeMap<&'static str, i64> {
    let mut out = BTreeMap::new();
    for w in ws {
        if let Some(s) = &w.cpu {
            for x in &s.shares {
                *out.entry(x.kind.name()).or_insert(0) += x.ns();
            }
            *out.entry("unaccounted").or_insert(0) += s.unaccounted_ns();
        }
        for l in &w.gpu_chain {
            *out.entry(l.kind.name()).or_insert(0) += l.held_ns;
        }
        if w.gpu_rest_ns() != 0 {
            *out.entry("gpu-unexplained").or_insert(0) += w.gpu_rest_ns();
        }
    }
    out
}

pub fn to_json(cx: &Context) -> Value {
    let ws = accounts(cx);
    // Read from the files: only when there is an account to give.
    let samples = if ws.is_empty() {
        Samples::default()
    } else {
        Samples::read(cx.profile)
    };
    let summary: serde_json::Map<String, Value> = causes(&ws)
        .into_iter()
        .map(|(k, ns)| (k.to_string(), ms(ns).into()))
        .collect();
    json!({
        "why": ws.iter().map(|w| why_json(cx, w, &samples)).collect::<Vec<_>>(),
        "causes_ms": summary,
        // rows of the tables the accounts read, left out: their times
        // cannot be right
        "suspect_events_left_out": cx.suspect_events_of(&SuspectTable::ALL).total(),
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
    out += &cx.suspect_note_of(&SuspectTable::ALL);
    if ws.is_empty() {
        out += "  no big-skew events: nothing to account for\n";
        return out;
    }
    let samples = Samples::read(p);
    // What every account lacks is said once, below them.
    let common: Vec<_> = ws[0]
        .listed_missing()
        .into_iter()
        .filter(|m| ws.iter().all(|w| w.missing.contains(m)))
        .collect();
    for w in &ws {
        let g = &cx.analysis.matching.groups[w.group];
        let split = if w.split_known() {
            format!(
                "CPU {:.3} ms ({}), GPU {:.3} ms",
                ms(w.cpu_ns),
                if w.cpu_ns > 0 {
                    "its launch call ended after the earliest peer started"
                } else {
                    "launched before the earliest peer started"
                },
                ms(w.gpu_ns)
            )
        } else {
            "CPU and GPU parts unknown (its launch call is not in the capture)".to_string()
        };
        out += &cx.note(&format!(
            "{}:{} {} late by {:.3} ms: {split}{}",
            safe(&g.key),
            w.instance + 1,
            p.device_label(w.device).tag(),
            ms(w.lateness_ns),
            match (w.resolvable, w.clock_error_ns) {
                (_, 0) => String::new(),
                (true, e) => format!(" (across hosts, clocks agree to ±{:.3} ms)", ms(e)),
                (false, e) => format!(
                    " (not resolvable: within the ±{:.3} ms clock error between the hosts)",
                    ms(e)
                ),
            }
        ));
        if let Some(s) = &w.cpu {
            let mut shares: Vec<_> = s.shares.iter().collect();
            shares.sort_by_key(|x| std::cmp::Reverse(x.ns()));
            for x in shares {
                let what = words::share_text(p, w, x);
                out += &part_line(cx, x.kind.name(), x.ns(), &safe(&what));
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
        for r in words::chain_rows(p, &w.gpu_chain) {
            out += &part_line(
                cx,
                r.kind.name(),
                r.held_ns,
                &safe(&words::chain_row_text(p, &r)),
            );
        }
        // What the chain leaves of the GPU part, so the rows add up.
        if let Some(text) = words::gpu_rest_text(p, &cx.analysis.clock, w) {
            out += &part_line(cx, "gpu", w.gpu_rest_ns(), &safe(&text));
        }
        // A GPU part shorter than the sampling says nothing of the clock
        // unless that one reading is already below the peers'.
        if let Some(c) = clock_during(cx, &samples, w).filter(|c| c.samples >= 2 || c.below_peers())
        {
            out += &cx.note_in(1, &clock_text(cx, w, &c));
        }
        for m in w.listed_missing().iter().filter(|m| !common.contains(m)) {
            out += &cx.note_in(1, &format!("· {}", m.sentence()));
        }
    }
    if !common.is_empty() {
        out += "\nNot in the capture, for every event above\n";
        for m in &common {
            out += &cx.note(&format!("· {}", m.sentence()));
        }
    }
    out += "\nCauses over all big events, largest first\n";
    let mut by_size: Vec<(&str, i64)> = causes(&ws).into_iter().filter(|c| c.1 != 0).collect();
    by_size.sort_by_key(|&(k, ns)| (std::cmp::Reverse(ns), k));
    for (k, ns) in by_size {
        out += &part_line(cx, k, ns, "");
    }
    out += &cx.note("CPU parts are interval unions over [earliest peer's start, launch-call end] on the launching thread, each nanosecond to the first of: sync CUDA call, other CUDA call, OS runtime call, off-CPU, on-CPU, innermost NVTX range; sums over events are not wall time");
    out
}
