//! For the `nccl` section: NVLink and PCIe throughput while each
//! collective type ran on a device, against while no NCCL kernel did,
//! where the capture sampled GPU metrics with link counters. Read from
//! the files on demand, as `report metrics` reads them.

use super::context::Context;
use super::fit::Keep;
use super::table::{self, Table};
use crate::analysis::link_metrics::{self, Split, is_link};
use crate::analysis::nccl_name::CollOp;
use crate::profile::DevId;
use crate::profile::gpu_metrics::read;
use serde_json::{Value, json};

/// One link metric of one device while one op ran.
pub struct LinkRow {
    pub device: DevId,
    pub op: CollOp,
    /// As the export names it (untrusted text).
    pub metric: String,
    pub split: Split,
    /// While no NCCL kernel of the device ran.
    pub idle: link_metrics::Level,
    /// The series' sampling interval (ns).
    pub interval_ns: Option<i64>,
}

/// The rows, by device, op and metric; empty when no file sampled a link
/// metric (or none could be read: `report metrics` says why).
pub fn rows(cx: &Context) -> Vec<LinkRow> {
    let p = cx.profile;
    let w = cx.options.window;
    // Most captures sample no metrics: their kernels are not walked.
    if !p.files.iter().any(|f| f.has_table("GPU_METRICS")) {
        return Vec::new();
    }
    let spans = link_metrics::nccl_spans(p, &cx.analysis.classes, cx.clock, w);
    if spans.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (f, file) in p.files.iter().enumerate() {
        if !file.has_table("GPU_METRICS") {
            continue;
        }
        let Ok(Some(m)) = read(&file.path, &is_link) else {
            continue;
        };
        let wf = cx.clock.window_in_file(f, w);
        let bounds = (wf.start, wf.end);
        for s in &m.series {
            let Some(device) = p
                .devices
                .iter()
                .position(|d| d.host == file.host_index && d.id == s.device)
                .map(|d| d as DevId)
            else {
                continue;
            };
            let all = link_metrics::any_op(&spans, device);
            let idle = link_metrics::split(s, &all, bounds).outside;
            let interval_ns = link_metrics::interval(s);
            for ((_, op), inside) in spans
                .range((device, CollOp::AllReduce)..)
                .take_while(|((d, _), _)| *d == device)
            {
                out.push(LinkRow {
                    device,
                    op: *op,
                    metric: m.names[s.metric].clone(),
                    split: link_metrics::split(s, inside, bounds),
                    idle,
                    interval_ns,
                });
            }
        }
    }
    out.sort_by(|a, b| (a.device, a.op, &a.metric).cmp(&(b.device, b.op, &b.metric)));
    out
}

const NOTE: &str = "GPU metric samples (a link's level at an instant, as a share of its peak), not byte counts: a collective shorter than the sampling interval may hold none; no_nccl = the device's samples while none of its NCCL kernels ran";

pub fn to_json(cx: &Context, rows: &[LinkRow]) -> Value {
    let p = cx.profile;
    let rows: Vec<Value> = rows
        .iter()
        .filter(|r| cx.shows(r.device))
        .map(|r| {
            json!({
                "device": super::json::device(p, r.device),
                "op": r.op.name(),
                "metric": r.metric,
                "samples": r.split.inside.samples,
                "mean_pct": r.split.inside.mean(),
                "no_nccl_samples": r.idle.samples,
                "no_nccl_mean_pct": r.idle.mean(),
                "interval_ms": r.interval_ns.map(|n| n as f64 / 1e6),
            })
        })
        .collect();
    json!({"rows": rows, "note": NOTE})
}

pub fn to_text(cx: &Context, rows: &[LinkRow]) -> String {
    let p = cx.profile;
    let mut t = Table::new(&[
        "device",
        "op",
        "metric",
        "every_ms",
        "samples",
        "mean_%",
        "no_nccl_%",
    ])
    .shorten(0, Keep::Middle)
    .shorten(2, Keep::Start);
    for r in rows.iter().filter(|r| cx.shows(r.device)) {
        t.row(vec![
            p.device_label(r.device).to_string(),
            r.op.name().into(),
            r.metric
                .strip_suffix(" [Throughput %]")
                .unwrap_or(&r.metric)
                .to_string(),
            r.interval_ns
                .map_or("-".into(), |n| format!("{:.3}", n as f64 / 1e6)),
            r.split.inside.samples.to_string(),
            table::pct(r.split.inside.mean()),
            table::pct(r.idle.mean()),
        ]);
    }
    if t.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nNVLink and PCIe throughput while each collective type ran\n");
    out += &t.render(cx.cols());
    out += &cx.note(NOTE);
    out
}
