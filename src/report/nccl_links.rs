//! For the `nccl` section: NVLink and PCIe throughput while each
//! collective type ran on a device, against while no NCCL kernel did,
//! where the capture sampled GPU metrics with link counters; and each
//! host's NIC byte counters the same way over the host's NCCL kernels.
//! Read from the files on demand, as `report metrics` reads them.

use super::context::Context;
use super::fit::Keep;
use super::table::{self, Table};
use crate::analysis::intervals::Span;
use crate::analysis::link_metrics::{self, Split, is_link};
use crate::analysis::nccl_name::CollOp;
use crate::profile::DevId;
use crate::profile::gpu_metrics::read;
use crate::profile::nic_metrics;
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
    let spans = link_metrics::nccl_spans(p, &cx.analysis.classes, cx.clock, w, |lane, op| {
        (p.lanes[lane as usize].device, op)
    });
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

/// One NIC byte counter of one host while one op ran on the host.
pub struct NicRow {
    /// Index into the profile's hosts.
    pub host: u32,
    /// Interface and port as the export names them (untrusted text).
    pub nic: String,
    pub op: CollOp,
    pub counter: String,
    pub during: link_metrics::Rate,
    /// While no NCCL kernel of the host's file ran.
    pub idle: link_metrics::Rate,
}

/// Whether a NIC counter counts bytes (sent or received).
fn counts_bytes(name: &str) -> bool {
    name.to_ascii_lowercase().contains("bytes")
}

/// The NIC rows, by file, interface, op and counter; empty when no file
/// recorded NIC byte counters.
pub fn nic_rows(cx: &Context) -> Vec<NicRow> {
    let p = cx.profile;
    let w = cx.options.window;
    // Most captures count nothing: their kernels are not walked.
    if !p.files.iter().any(|f| f.has_table("NET_NIC_METRIC")) {
        return Vec::new();
    }
    let by_file = link_metrics::nccl_spans(p, &cx.analysis.classes, cx.clock, w, |lane, op| {
        (p.lane_file(lane), op)
    });
    let mut out = Vec::new();
    for (f, file) in p.files.iter().enumerate() {
        if !file.has_table("NET_NIC_METRIC") {
            continue;
        }
        let Ok(Some(m)) = nic_metrics::read(&file.path, &counts_bytes) else {
            continue;
        };
        let spans: Vec<(CollOp, &[Span])> = by_file
            .range((f, CollOp::AllReduce)..)
            .take_while(|((of, _), _)| *of == f)
            .map(|((_, op), s)| (*op, s.as_slice()))
            .collect();
        let all = crate::analysis::intervals::union(
            spans.iter().flat_map(|(_, s)| s.iter().copied()).collect(),
        );
        let wf = cx.clock.window_in_file(f, w);
        let bounds = (wf.start, wf.end);
        for s in &m.series {
            let (_, idle) = link_metrics::counted(&s.start, &s.end, &s.v, &all, bounds);
            for &(op, inside) in &spans {
                out.push(NicRow {
                    host: file.host_index,
                    nic: s.nic.clone(),
                    op,
                    counter: m.names[s.metric].clone(),
                    during: link_metrics::counted(&s.start, &s.end, &s.v, inside, bounds).0,
                    idle,
                });
            }
        }
    }
    out.sort_by(|a, b| (a.host, &a.nic, a.op, &a.counter).cmp(&(b.host, &b.nic, b.op, &b.counter)));
    out
}

const NIC_NOTE: &str = "NIC counters: bytes each interval added, an interval counted where its middle falls (while one of the host's NCCL kernels of that op ran, or while none did: no_nccl); MB = 10^6 bytes";

fn mb_per_s(r: &link_metrics::Rate) -> Option<f64> {
    r.per_s().map(|b| b / 1e6)
}

pub fn nic_json(cx: &Context, rows: &[NicRow]) -> Value {
    let p = cx.profile;
    let rows: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({
                "host": p.host_label(r.host),
                "nic": r.nic,
                "op": r.op.name(),
                "counter": r.counter,
                "intervals": r.during.intervals,
                "mb_per_s": mb_per_s(&r.during),
                "no_nccl_intervals": r.idle.intervals,
                "no_nccl_mb_per_s": mb_per_s(&r.idle),
            })
        })
        .collect();
    json!({"rows": rows, "note": NIC_NOTE})
}

pub fn nic_text(cx: &Context, rows: &[NicRow]) -> String {
    let p = cx.profile;
    let mut t = Table::new(&[
        "host",
        "nic",
        "op",
        "counter",
        "intervals",
        "MB/s",
        "no_nccl_MB/s",
    ])
    .shorten(0, Keep::Middle)
    .shorten(1, Keep::Start)
    .shorten(3, Keep::Start);
    let rate = |r: &link_metrics::Rate| mb_per_s(r).map_or("-".into(), |x| format!("{x:.1}"));
    for r in rows {
        t.row(vec![
            p.host_label(r.host).to_string(),
            r.nic.clone(),
            r.op.name().into(),
            r.counter.clone(),
            r.during.intervals.to_string(),
            rate(&r.during),
            rate(&r.idle),
        ]);
    }
    if t.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nNIC throughput while each collective type ran on the host\n");
    out += &t.render(cx.cols());
    out += &cx.note(NIC_NOTE);
    out
}
