//! `report metrics`: each device's GPU metric samples (`nsys profile
//! --gpu-metrics-devices`), and the devices whose clock ran below their
//! peers'. Read from each file when asked: they are not in the loaded
//! model (see `profile::gpu_metrics`).

use super::context::Context;
use super::json;
use crate::analysis::clock::Alignment;
use crate::analysis::gpu_metrics::{self, BelowPeers, MetricSummary};
use crate::analysis::window::Window;
use crate::profile::{DevId, Profile, gpu_metrics as read};
use serde_json::{Value, json};

/// What every figure is.
const SAMPLED: &str = "sampled: each figure is over readings taken at one instant every interval, not a count of what happened between them";
/// How to record them.
const HOW: &str = "nsys profile --gpu-metrics-devices=all (one process per node may sample)";

/// A device's metrics: its id in the job when it ran CUDA work there, and
/// its label.
struct Device {
    id: Option<DevId>,
    label: String,
    key: Value,
    metrics: Vec<MetricSummary>,
}

/// Per device, every file's metrics (a device sampled by several files of
/// one host, as per-rank files of one node are, once); the files that
/// recorded none; those that sampled none inside the window; the files
/// that could not be read.
struct Read {
    devices: Vec<Device>,
    without: Vec<String>,
    outside: Vec<String>,
    errors: Vec<String>,
}

/// The metrics sampled inside `window` (the reference clock), each file's
/// read on its own clock.
fn read_all(p: &Profile, clock: &Alignment, window: Window) -> Read {
    let mut out = Read {
        devices: Vec::new(),
        without: Vec::new(),
        outside: Vec::new(),
        errors: Vec::new(),
    };
    let mut seen: Vec<(u32, u32)> = Vec::new();
    for (fi, f) in p.files.iter().enumerate() {
        let path = crate::text_safe::path_text(&f.path);
        if !f.has_table("GPU_METRICS") {
            out.without.push(path);
            continue;
        }
        let w = clock.window_in_file(fi, window);
        let m = match read::totals(&f.path, (w.start, w.end)) {
            Ok(Some(m)) if m.series.is_empty() => {
                out.outside.push(path);
                continue;
            }
            Ok(Some(m)) => m,
            Ok(None) => {
                out.without.push(path);
                continue;
            }
            Err(e) => {
                out.errors.push(e.to_string());
                continue;
            }
        };
        let summaries = gpu_metrics::summarize(&m);
        let mut ids: Vec<u32> = summaries.iter().map(|s| s.device).collect();
        ids.dedup();
        for gpu in ids {
            if seen.contains(&(f.host_index, gpu)) {
                continue;
            }
            seen.push((f.host_index, gpu));
            let id = (0..p.devices.len() as DevId).find(|&d| {
                let dev = &p.devices[d as usize];
                dev.host == f.host_index && dev.id == gpu
            });
            let (label, key) = match id {
                Some(d) => (p.device_label(d).tag(), json::device(p, d)),
                None => {
                    let l = format!("{}:{gpu}", p.host_label(f.host_index));
                    (l.clone(), Value::from(l))
                }
            };
            out.devices.push(Device {
                id,
                label,
                key,
                metrics: summaries
                    .iter()
                    .filter(|s| s.device == gpu)
                    .cloned()
                    .collect(),
            });
        }
    }
    out
}

fn read(cx: &Context) -> Read {
    read_all(cx.profile, &cx.analysis.clock, cx.options.window)
}

/// Whether `d` is shown: the devices asked for (`--device`), all when
/// none were; a device that ran no CUDA work here only then. Peers are
/// every device either way.
fn shown(cx: &Context, d: &Device) -> bool {
    match (&cx.options.devices, d.id) {
        (None, _) => true,
        (Some(ds), Some(id)) => ds.contains(&id),
        (Some(_), None) => false,
    }
}

fn below(r: &Read) -> Vec<BelowPeers> {
    let per: Vec<&[MetricSummary]> = r.devices.iter().map(|d| d.metrics.as_slice()).collect();
    gpu_metrics::below_peers(&per)
}

pub fn to_json(cx: &Context) -> Value {
    let r = read(cx);
    let below: Vec<Value> = below(&r)
        .into_iter()
        .filter(|b| shown(cx, &r.devices[b.device]))
        .map(|b| {
            json!({
                "device": r.devices[b.device].key,
                "metric": b.metric,
                "mean": b.mean,
                "peers_median": b.peers_median,
            })
        })
        .collect();
    json!({
        "note": SAMPLED,
        "devices": r.devices.iter().filter(|d| shown(cx, d)).map(|d| json!({
            "device": d.key,
            "ran_cuda_work": d.id.is_some(),
            "metrics": d.metrics.iter().map(|m| json!({
                "metric": m.metric,
                "samples": m.samples,
                "interval_ns": m.interval_ns,
                "mean": m.mean,
                "min": m.min,
                "max": m.max,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "below_peers": below,
        "files_without_metrics": r.without,
        // sampled, but not inside --window
        "files_without_samples_in_window": r.outside,
        "how_to_record": HOW,
        "errors": r.errors,
    })
}

pub fn to_text(cx: &Context) -> String {
    let r = read(cx);
    let mut out = String::from("GPU metrics\n");
    for e in &r.errors {
        out.push_str(&format!("  {e}\n"));
    }
    if r.devices.is_empty() && !r.outside.is_empty() {
        out.push_str("  no sample inside the window\n");
        return out;
    }
    if r.devices.is_empty() {
        out.push_str(&format!("  not recorded: {HOW}\n"));
        return out;
    }
    out.push_str(&format!("  {SAMPLED}\n"));
    out.push_str(&format!(
        "  {:<16} {:<34} {:>8} {:>9} {:>10} {:>10} {:>10}\n",
        "device", "metric", "samples", "every", "mean", "min", "max"
    ));
    for d in r.devices.iter().filter(|d| shown(cx, d)) {
        for m in &d.metrics {
            let every = m
                .interval_ns
                .map_or("-".to_string(), |ns| format!("{:.3} ms", ns as f64 / 1e6));
            out.push_str(&format!(
                "  {:<16} {:<34} {:>8} {:>9} {:>10.1} {:>10.1} {:>10.1}\n",
                d.label,
                crate::text_safe::escape_controls(&m.metric),
                m.samples,
                every,
                m.mean,
                m.min,
                m.max
            ));
        }
    }
    let below: Vec<BelowPeers> = below(&r)
        .into_iter()
        .filter(|b| shown(cx, &r.devices[b.device]))
        .collect();
    if below.is_empty() {
        out.push_str("  no device's clock ran below its peers' (90% of their median)\n");
    }
    for b in below {
        let unit = gpu_metrics::unit(&b.metric);
        out.push_str(&format!(
            "  {} ran at {:.0}{unit} while its peers' median was {:.0}{unit} ({}, {:.0}%): throttled, or held at a lower clock\n",
            r.devices[b.device].label,
            b.mean,
            b.peers_median,
            crate::text_safe::escape_controls(&b.metric),
            100.0 * b.mean / b.peers_median
        ));
    }
    if !r.without.is_empty() {
        out.push_str(&format!(
            "  {} file(s) recorded none ({HOW})\n",
            r.without.len()
        ));
    }
    out
}
