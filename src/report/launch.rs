//! The `launch` section: kernel ↔ launch call links, queue times, and the
//! verdict for each big event's late rank.

use super::context::Context;
use super::fit::Keep;
use super::json;
use super::json::spread_json;
use super::table::{self, Table};
use crate::analysis::launch::{LaunchReport, before_return};
use crate::analysis::matching::Matching;
use crate::analysis::stats::Spread;
use crate::figure_text::fixed;
use crate::text_safe::escape_controls as safe;
use serde_json::{Value, json};

pub fn to_json(cx: &Context, m: &Matching, l: &LaunchReport) -> Value {
    let p = cx.profile;
    let devices: Vec<Value> = l
        .devices
        .iter()
        .filter(|d| cx.shows(d.device))
        .map(|d| {
            json!({
                "device": json::device(p, d.device),
                "nccl_queue_ms": spread_json(d.nccl_ms),
                "other_queue_ms": spread_json(d.other_ms),
                "started_before_launch_returned": d.started_before_return,
                "most_before_launch_returned_ms": json::ms(d.most_before_return_ns),
            })
        })
        .collect();
    let late: Vec<Value> = l
        .late
        .iter()
        .filter(|x| cx.shows(x.device))
        .map(|x| {
            let preceding = x.preceding.as_ref().map(|pr| {
                json!({
                    "name": p.strings.get(p.gpu.name(pr.row)),
                    "stream": p.lanes[pr.lane as usize].stream,
                    "gap_ms": json::ms(pr.gap_ns),
                })
            });
            json!({
                "group": m.groups[x.group].key,
                "instance": x.instance + 1,
                "device": json::device(p, x.device),
                "api": x.api.map(|s| p.strings.get(s)),
                "api_end_to_start_ms": x.api_end_to_start_ns.map(json::ms),
                "cpu_delay_ms": x.cpu_delay_ns.map(json::ms),
                "verdict": x.verdict.name(),
                "resolvable": x.resolvable,
                // 0 on one clock; else a delay below it is not resolvable
                "clock_error_ms": x.clock_error_ns as f64 / 1e6,
                "from_graph": x.from_graph,
                "preceding_kernel": preceding,
            })
        })
        .collect();
    json!({
        "kernels_with_launch": l.kernels_with_launch,
        "kernels_without_launch": l.kernels_without_launch,
        "graph_kernels": l.graph_kernels,
        "devices": devices,
        "late_instances": late,
        "suspect_events_left_out": cx.suspect_events().total(),
    })
}

pub fn to_text(cx: &Context, m: &Matching, l: &LaunchReport) -> String {
    let p = cx.profile;
    let mut out =
        String::from("Launch correlation (kernel ↔ launch call by process and correlation id)\n");
    out += &cx.suspect_note();
    let total = l.kernels_with_launch + l.kernels_without_launch;
    if total == 0 {
        out += "  nothing to analyse: no kernels were recorded\n";
        return out;
    }
    out += &cx.note(&format!(
        "{} of {} kernels have their launch call; {} from CUDA graphs",
        l.kernels_with_launch, total, l.graph_kernels
    ));
    if l.kernels_without_launch > 0 {
        out += &cx.note(&format!(
            "! {} kernels have no launch call in the capture (trimmed or partial capture): they are left unexplained, not guessed",
            l.kernels_without_launch
        ));
    }
    let f = |s: Option<Spread>, pick: fn(&Spread) -> f64| {
        s.map_or("-".to_string(), |s| fixed(pick(&s), 3))
    };
    let mut t = Table::new(&[
        "device",
        "nccl_p50_ms",
        "nccl_p90_ms",
        "nccl_max_ms",
        "other_p50_ms",
        "other_p90_ms",
        "other_max_ms",
    ])
    .shorten(0, Keep::Middle);
    for d in l.devices.iter().filter(|d| cx.shows(d.device)) {
        t.row(vec![
            p.device_label(d.device).to_string(),
            f(d.nccl_ms, |s| s.p50),
            f(d.nccl_ms, |s| s.p90),
            f(d.nccl_ms, |s| s.max),
            f(d.other_ms, |s| s.p50),
            f(d.other_ms, |s| s.p90),
            f(d.other_ms, |s| s.max),
        ]);
    }
    out += "\n";
    out += &cx
        .note("queue time = kernel start − launch call end (signed), of NCCL and of other kernels");
    out += &t.render(cx.cols());
    for d in l.devices.iter().filter(|d| cx.shows(d.device)) {
        if d.started_before_return > 0 {
            out += &cx.note(&format!(
                "! device {}: {} kernel{} started up to {}",
                p.device_label(d.device),
                d.started_before_return,
                if d.started_before_return == 1 {
                    ""
                } else {
                    "s"
                },
                before_return(
                    d.most_before_return_ns,
                    if d.started_before_return == 1 {
                        "its"
                    } else {
                        "their"
                    }
                )
            ));
        }
    }
    let late: Vec<_> = l.late.iter().filter(|x| cx.shows(x.device)).collect();
    if late.is_empty() {
        out += "\n  no big start-skew events: no late rank to explain\n";
        return out;
    }
    out += "\nWhy the late rank was late (big events)\n";
    out += &cx.note("`rankline report why` accounts for each late rank's delay, part by part");
    let mut t = Table::new(&[
        "group",
        "instance",
        "late_dev",
        "verdict",
        "api_end→start_ms",
        "cpu_delay_ms",
        "clock_err_ms",
        "api",
    ])
    .shorten(0, Keep::Start)
    .shorten(2, Keep::Middle)
    .shorten(7, Keep::Start);
    // The kernel ahead on the late device has a long name: a table of its own.
    let mut behind = Table::new(&["group", "instance", "stream", "gap_ms", "queued_behind"])
        .shorten(0, Keep::Start)
        .shorten(4, Keep::Start);
    let mut early_notes = String::new();
    for &x in &late {
        let key = &m.groups[x.group].key;
        if let Some(ns) = x.api_end_to_start_ns.filter(|&ns| ns < 0) {
            early_notes += &cx.note(&format!(
                "! {} instance {}: kernel started {}",
                safe(key),
                x.instance + 1,
                before_return(-ns, "its")
            ));
        }
        if let Some(pr) = &x.preceding {
            behind.row(vec![
                key.clone(),
                (x.instance + 1).to_string(),
                format!("s{}", p.lanes[pr.lane as usize].stream),
                table::ms(pr.gap_ns),
                p.strings.get(p.gpu.name(pr.row)).to_string(),
            ]);
        }
        t.row(vec![
            key.clone(),
            (x.instance + 1).to_string(),
            p.device_label(x.device).to_string(),
            x.verdict.name().into(),
            x.api_end_to_start_ns.map_or("-".into(), table::ms),
            x.cpu_delay_ns.map_or("-".into(), table::ms),
            match x.clock_error_ns {
                0 => "-".into(),
                ns => table::ms(ns),
            },
            x.api.map_or("-".into(), |s| p.strings.get(s).to_string()),
        ]);
    }
    out += &t.render(cx.cols());
    out += &early_notes;
    out += &cx.note("the verdict names the larger part of the lateness — cpu-late: the launch call (a CUDA graph's kernel: its cudaGraphLaunch) ended after the first peer's kernel had started, by more than the kernel then waited on the GPU (cpu_delay_ms > api_end_to_start_ms); gpu-side: launched in time or less late than it then queued on the GPU; unknown: no launch call in the capture");
    if late.iter().any(|x| x.clock_error_ns > 0) {
        out += &cx.note("clock_err_ms: the late rank and its first peer are on two hosts' clocks, which agree to within this (- = one clock); a delay below it is not resolvable");
    }
    if late.iter().any(|x| !x.resolvable) {
        out += &cx.note("not-resolvable: the launch call and the peer's start are on two hosts' clocks, aligned less closely than the delay between them (cpu_delay_ms keeps its sign); times on the reference clock, see `report clock`");
    }
    if !behind.is_empty() {
        out += "\nWhat the late kernel queued behind\n";
        out += &cx.note("the last kernel on another stream of the late device to end within 1 ms before it started; gap_ms = that end to the late kernel's start");
        out += &behind.render(cx.cols());
    }
    out
}
