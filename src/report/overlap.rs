//! The `overlap` section: communication hidden under compute, per device.

use super::context::Context;
use super::fit::Keep;
use super::json;
use super::table::{self, Table};
use crate::analysis::overlap::DeviceOverlap;
use serde_json::{Value, json};

pub fn to_json(cx: &Context, devs: &[DeviceOverlap]) -> Value {
    let p = cx.profile;
    let devices: Vec<Value> = devs
        .iter()
        .filter(|d| cx.shows(d.device))
        .map(|d| {
            let mut v = serde_json::Map::new();
            v.insert("device".into(), json::device(p, d.device));
            if let Value::Object(figures) = figures_json(d) {
                v.extend(figures);
            }
            Value::Object(v)
        })
        .collect();
    json!({
        "devices": devices,
        "suspect_events_left_out": cx.suspect_events().total(),
    })
}

/// A device's figures, without the device (`diff` names it once for two).
pub fn figures_json(d: &DeviceOverlap) -> Value {
    json!({
        "span_ms": json::ms(d.span_ns),
        "compute_only_ms": json::ms(d.compute_only_ns),
        "nccl_only_ms": json::ms(d.nccl_only_ns),
        "overlap_ms": json::ms(d.overlap_ns),
        "copy_only_ms": json::ms(d.copy_only_ns),
        "idle_ms": json::ms(d.idle_ns),
        "nccl_overlapped_pct": d.nccl_overlapped_pct(),
        "compute_kernels": d.compute_kernels,
        "nccl_kernels": d.nccl_kernels,
        "copies": d.copies,
    })
}

/// The text columns of a device's figures (after its label), as `diff`
/// shows them too.
pub const FIGURE_COLUMNS: [&str; 7] = [
    "span_ms",
    "compute_ms",
    "nccl_ms",
    "both_ms",
    "copy_ms",
    "idle_ms",
    "hidden_%",
];

/// A device's figures under [`FIGURE_COLUMNS`].
pub fn figure_cells(d: &DeviceOverlap) -> Vec<String> {
    vec![
        table::ms(d.span_ns),
        table::ms(d.compute_only_ns),
        table::ms(d.nccl_only_ns),
        table::ms(d.overlap_ns),
        table::ms(d.copy_only_ns),
        table::ms(d.idle_ns),
        table::pct(d.nccl_overlapped_pct()),
    ]
}

pub fn to_text(cx: &Context, devs: &[DeviceOverlap]) -> String {
    let p = cx.profile;
    let mut out = String::from("Compute/NCCL overlap per device\n");
    out += &cx.suspect_note();
    out += &cx.note(
        "interval unions; compute = every non-communication kernel; compute_ms, nccl_ms: only that runs; both_ms: compute and NCCL at once; copy_ms: a memcpy or memset runs and no kernel does; idle_ms: nothing runs; hidden_% = share of NCCL time under compute",
    );
    let mut t = Table::new(&[&["device"][..], &FIGURE_COLUMNS].concat()).shorten(0, Keep::Middle);
    // Counts apart: with every time column they would not fit 100 columns.
    let mut counts = Table::new(&["device", "compute_kernels", "nccl_kernels", "copies"])
        .shorten(0, Keep::Middle);
    for d in devs.iter().filter(|d| cx.shows(d.device)) {
        let mut row = vec![p.device_label(d.device).to_string()];
        row.extend(figure_cells(d));
        t.row(row);
        counts.row(vec![
            p.device_label(d.device).to_string(),
            d.compute_kernels.to_string(),
            d.nccl_kernels.to_string(),
            d.copies.to_string(),
        ]);
    }
    if t.is_empty() && !cx.options.window.is_all() {
        out += "  nothing to analyse: the window lies outside every device's GPU activity\n";
        return out;
    }
    if t.is_empty() {
        out += "  nothing to analyse: no kernel, memcpy or memset in this capture\n";
        return out;
    }
    out += &t.render(cx.cols());
    out += &cx.note(if cx.options.window.is_all() {
        "span = first start to last end of any GPU activity; compute + nccl + both + copy + idle = span"
    } else {
        "span = the window, within the device's first start and last end over the capture (idle at the window's edges counts; events are cut at them); compute + nccl + both + copy + idle = span"
    });
    out += &cx.note("nccl_ms (NCCL alone) is an upper bound on what better overlap could save, not a promise; figures are per device, and sums over devices are not wall time");
    out += "\n";
    out += &counts.render(cx.cols());
    out
}
