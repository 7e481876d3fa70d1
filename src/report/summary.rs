//! The `summary` section: capture completeness.

use super::context::Context;
use super::fit::Keep;
use super::json;
use super::table::Table;
use crate::analysis::completeness::Completeness;
use crate::profile::inputs::is_nsys_report;
use crate::text_safe::escape_controls;
use crate::text_safe::path_text;
use serde_json::{Value, json};

pub fn to_json(cx: &Context, c: &Completeness) -> Value {
    let p = cx.profile;
    let files: Vec<Value> = p
        .files
        .iter()
        .map(|f| {
            json!({
                "path": path_text(&f.path),
                "nsys_version": f.nsys_version,
                "schema_version": f.schema_version,
                "exported_from_report": is_nsys_report(&f.path),
                "exported_with_nsys": if is_nsys_report(&f.path) { f.nsys_version.clone() } else { None },
                "host": f.host,
                "rank": f.rank,
                "world_size": f.world_size,
                // the options nsys export recorded (null: not recorded)
                "export_params": f.export,
                // left out of every figure: their times cannot be right
                // (every table's, and per table)
                "suspect_events": f.suspect_rows.total(),
                "suspect_events_by_table": f.suspect_rows,
            })
        })
        .collect();
    let shown = |ds: &[u32]| json::devices(p, &cx.filter_devices(ds));
    let devices: Vec<Value> = c
        .devices
        .iter()
        .filter(|d| cx.shows(d.device))
        .map(|d| {
            let pids: Vec<u32> = d
                .processes
                .iter()
                .map(|&pr| p.processes[pr as usize].pid)
                .collect();
            json!({
                "device": json::device(p, d.device),
                "rank": p.devices[d.device as usize].rank,
                "name": device_name(cx, d.device),
                "uuid": p.devices[d.device as usize].uuid,
                "processes": pids,
                "kernels": d.kernels,
                "memcpy": d.memcpy,
                "memset": d.memset,
                "runtime_calls": d.runtime_calls,
                "nvtx_ranges": d.nvtx_ranges,
            })
        })
        .collect();
    json!({
        "files": files,
        "span_ns": c.span.map_or(Value::Array(vec![]), |(a, b)| json!([a, b])),
        "devices": devices,
        "expected_devices": shown(&c.expected),
        "devices_with_kernels": shown(&c.with_kernels),
        "missing_devices": shown(&c.missing),
        "listed_unused_devices": shown(&c.listed_unused),
        "world_size": c.world_size,
        "ranks_missing": c.ranks_missing,
        "warnings": warnings(cx, c),
        "clock": super::clock::to_json(cx, cx.clock),
    })
}

/// `6 expected, 5 with kernels, 1 missing, 2 listed but unused`: how the
/// summary (and the diff, by the same definitions) counts devices.
pub(crate) fn device_counts(
    expected: usize,
    with_kernels: usize,
    missing: usize,
    listed_unused: usize,
) -> String {
    format!(
        "{expected} expected, {with_kernels} with kernels, {missing} missing, {listed_unused} listed but unused"
    )
}

fn device_name(cx: &Context, d: u32) -> String {
    let dev = &cx.profile.devices[d as usize];
    dev.name
        .clone()
        .unwrap_or_else(|| format!("GPU {}", dev.id))
}

pub fn to_text(cx: &Context, c: &Completeness) -> String {
    let p = cx.profile;
    let mut out = String::from("Capture completeness\n");
    let mut files = Table::new(&["file", "nsys", "schema", "host"])
        .shorten(0, Keep::End)
        .shorten(3, Keep::Start);
    for f in &p.files {
        files.row(vec![
            path_text(&f.path),
            f.nsys_version.clone().unwrap_or_else(|| "?".into()),
            f.schema_version.clone().unwrap_or_else(|| "?".into()),
            f.host.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    out += &files.render(cx.cols());
    for line in p.files.iter().flat_map(|f| f.suspect_warnings()) {
        out += &cx.note(&escape_controls(&format!("! {line}")));
    }
    // A report's nsys version is that of the user's nsys, which rankline ran.
    for f in p.files.iter().filter(|f| is_nsys_report(&f.path)) {
        let name = f.path.file_name().unwrap_or(f.path.as_os_str());
        out += &format!(
            "  {}: exported to SQLite by rankline with nsys {}\n",
            name.to_string_lossy(),
            f.nsys_version
                .as_deref()
                .unwrap_or("(version not recorded)")
        );
    }
    // Several files' times are on the first file's clock, as aligned.
    let on = if p.files.len() > 1 {
        "the reference clock (the first file's)"
    } else {
        "the capture clock"
    };
    match c.span {
        Some((a, b)) => {
            out += &cx.note(&format!(
                "span: {:.6} s to {:.6} s on {on} ({:.3} ms)",
                a as f64 / 1e9,
                b as f64 / 1e9,
                b.saturating_sub(a) as f64 / 1e6
            ))
        }
        None => out += "  span: no events\n",
    }
    out += &format!(
        "  devices: {}\n\n",
        device_counts(
            c.expected.len(),
            c.with_kernels.len(),
            c.missing.len(),
            c.listed_unused.len()
        )
    );
    let mut t = Table::new(&[
        "device", "name", "pids", "kernels", "memcpy", "memset", "runtime", "nvtx", "status",
    ])
    .shorten(0, Keep::Middle)
    .shorten(1, Keep::Start)
    .shorten(2, Keep::Start);
    for d in c.devices.iter().filter(|d| cx.shows(d.device)) {
        let pids: Vec<String> = d
            .processes
            .iter()
            .map(|&pr| p.processes[pr as usize].pid.to_string())
            .collect();
        let status = if c.missing.contains(&d.device) {
            "MISSING: no activity"
        } else if c.listed_unused.contains(&d.device) {
            "listed, unused"
        } else {
            "recorded"
        };
        t.row(vec![
            p.device_label(d.device).to_string(),
            device_name(cx, d.device),
            if pids.is_empty() {
                "-".into()
            } else {
                pids.join(",")
            },
            d.kernels.to_string(),
            d.memcpy.to_string(),
            d.memset.to_string(),
            d.runtime_calls.to_string(),
            d.nvtx_ranges.to_string(),
            status.into(),
        ]);
    }
    if t.is_empty() {
        out += "  no devices\n";
    } else {
        out += &t.render(cx.cols());
    }
    let warnings = warnings(cx, c);
    if !warnings.is_empty() {
        out += "\nWarnings\n";
        for w in &warnings {
            out += &cx.note(&format!("! {}", crate::text_safe::escape_controls(w)));
        }
    }
    out
}

/// The capture's warnings, the clock alignment's among them.
fn warnings(cx: &Context, c: &Completeness) -> Vec<String> {
    let mut w = c.warnings.clone();
    w.extend(cx.clock.said(cx.profile));
    w
}
