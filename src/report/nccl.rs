//! The `nccl` section: NCCL time per device, stream and collective type.

use super::bandwidth::{self, Figures};
use super::context::Context;
use super::fit::Keep;
use super::json;
use super::nccl_links;
use super::table::{self, Table};
use crate::analysis::nccl_breakdown::DeviceNccl;
use serde_json::{Value, json};

pub fn to_json(cx: &Context, devs: &[DeviceNccl]) -> Value {
    let p = cx.profile;
    let figures = Figures::of(cx);
    let bytes = &figures.lane_ops;
    let devices: Vec<Value> = devs
        .iter()
        .filter(|d| cx.shows(d.device))
        .map(|d| {
            let streams: Vec<Value> = d
                .streams
                .iter()
                .map(|s| {
                    let lane = &p.lanes[s.lane as usize];
                    let ops: Vec<Value> = s
                        .ops
                        .iter()
                        .map(|o| {
                            let b = bytes.get(&(s.lane, o.key())).cloned().unwrap_or_default();
                            json!({
                                "op": o.op.name(),
                                "dtype": o.dtype,
                                "hints": {"algo": o.algo, "proto": o.proto},
                                "count": o.count,
                                "total_ms": json::ms(o.total_ns),
                                "avg_ms": o.total_ns as f64 / o.count as f64 / 1e6,
                                "min_ms": json::ms(o.min_ns),
                                "max_ms": json::ms(o.max_ns),
                                "pct_of_device_nccl": 100.0 * o.total_ns as f64 / d.total_ns as f64,
                                "sizes_recorded": b.counted > 0,
                                "sized_kernels": b.counted,
                                "bytes": b.bytes,
                                "algbw_gbps": json::spread_or_null(b.algbw_gbps),
                                "busbw_gbps": json::spread_or_null(b.busbw_gbps),
                            })
                        })
                        .collect();
                    json!({"stream": lane.stream, "pid": p.processes[lane.process as usize].pid, "ops": ops})
                })
                .collect();
            json!({"device": json::device(p, d.device), "nccl_total_ms": json::ms(d.total_ns), "streams": streams})
        })
        .collect();
    json!({
        "devices": devices,
        "bandwidth": bandwidth::nccl_json(cx, &figures),
        "links": nccl_links::to_json(cx, &nccl_links::rows(cx)),
        "nics": nccl_links::nic_json(cx, &nccl_links::nic_rows(cx)),
    })
}

pub fn to_text(cx: &Context, devs: &[DeviceNccl]) -> String {
    let p = cx.profile;
    let mut out = String::from(
        "NCCL time per device, stream and collective (summed kernel time, not wall time)\n",
    );
    // The process of each device is in `summary` (and in JSON here).
    let mut t = Table::new(&[
        "device", "stream", "op", "dtype", "hints", "count", "total_ms", "avg_ms", "min_ms",
        "max_ms", "of_dev_%",
    ])
    .shorten(0, Keep::Middle)
    .heading_when_narrow(0);
    for d in devs.iter().filter(|d| cx.shows(d.device)) {
        for s in &d.streams {
            let lane = &p.lanes[s.lane as usize];
            for o in &s.ops {
                let hints = match (o.algo, o.proto) {
                    (None, None) => "-".to_string(),
                    (a, b) => format!("{}/{}?", a.unwrap_or("?"), b.unwrap_or("?")),
                };
                t.row(vec![
                    p.device_label(d.device).to_string(),
                    format!("s{}", lane.stream),
                    o.op.name().into(),
                    o.dtype.unwrap_or("-").into(),
                    hints,
                    o.count.to_string(),
                    table::ms(o.total_ns),
                    table::ms(o.total_ns / o.count as i64),
                    table::ms(o.min_ns),
                    table::ms(o.max_ns),
                    table::pct(Some(100.0 * o.total_ns as f64 / d.total_ns as f64)),
                ]);
            }
        }
    }
    if t.is_empty() {
        out += if cx.no_gpu_activity {
            "  nothing to analyse: no GPU activity was recorded\n"
        } else {
            "  no NCCL kernels in this capture\n"
        };
        return out;
    }
    out += &t.render(cx.cols());
    out += &cx.note("hints: algorithm/protocol tokens in kernel names (RING/LL…) are compile-time specialisations, not the algorithm or protocol NCCL used; of_dev_% = share of the device's NCCL time");
    let mut tot = Table::new(&["device", "nccl_total_ms"]).shorten(0, Keep::Middle);
    for d in devs.iter().filter(|d| cx.shows(d.device)) {
        tot.row(vec![
            p.device_label(d.device).to_string(),
            table::ms(d.total_ns),
        ]);
    }
    out += "\n";
    out += &tot.render(cx.cols());
    out += &bandwidth::nccl_text(cx, &Figures::of(cx));
    out += &nccl_links::to_text(cx, &nccl_links::rows(cx));
    out += &nccl_links::nic_text(cx, &nccl_links::nic_rows(cx));
    out
}
