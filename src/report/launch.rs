//! The `launch` section: kernel ↔ launch call links, queue times, and the
//! verdict for each big event's late rank.

use super::skew::spread_json;
use super::table::{self, Table};
use super::{Context, json};
use crate::analysis::launch::{LaunchReport, before_return};
use crate::analysis::matching::Matching;
use crate::analysis::stats::Spread;
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
                    "name": p.strings.get(p.gpu.name[pr.row]),
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
    })
}

pub fn to_text(cx: &Context, m: &Matching, l: &LaunchReport) -> String {
    let p = cx.profile;
    let mut out =
        String::from("Launch correlation (kernel ↔ launch call by process and correlation id)\n");
    let total = l.kernels_with_launch + l.kernels_without_launch;
    if total == 0 {
        out += "  nothing to analyse: no kernels were recorded\n";
        return out;
    }
    out += &format!(
        "  {} of {} kernels have their launch call; {} from CUDA graphs\n",
        l.kernels_with_launch, total, l.graph_kernels
    );
    if l.kernels_without_launch > 0 {
        out += &format!(
            "  ! {} kernels have no launch call in the capture (trimmed or partial capture): they are left unexplained, not guessed\n",
            l.kernels_without_launch
        );
    }
    let f = |s: Option<Spread>, pick: fn(&Spread) -> f64| {
        s.map_or("-".to_string(), |s| format!("{:.3}", pick(&s)))
    };
    let mut t = Table::new(&[
        "device",
        "nccl_q_p50",
        "nccl_q_p90",
        "nccl_q_max",
        "other_q_p50",
        "other_q_p90",
        "other_q_max",
    ]);
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
    out += "\n  queue time = kernel start − launch call end, ms (signed)\n";
    out += &t.render();
    for d in l.devices.iter().filter(|d| cx.shows(d.device)) {
        if d.started_before_return > 0 {
            out += &format!(
                "  ! device {}: {} kernel{} started up to {}\n",
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
            );
        }
    }
    let late: Vec<_> = l.late.iter().filter(|x| cx.shows(x.device)).collect();
    if late.is_empty() {
        out += "\n  no big start-skew events: no late rank to explain\n";
        return out;
    }
    out += "\nWhy the late rank was late (big events)\n";
    let mut t = Table::new(&[
        "group",
        "inst",
        "late_dev",
        "api",
        "api_end→start_ms",
        "cpu_delay_ms",
        "verdict",
        "queued behind",
    ]);
    let mut early_notes = String::new();
    for x in late {
        if let Some(ns) = x.api_end_to_start_ns.filter(|&ns| ns < 0) {
            early_notes += &format!(
                "  ! {} instance {}: kernel started {}\n",
                m.groups[x.group].key,
                x.instance + 1,
                before_return(-ns, "its")
            );
        }
        let behind = x.preceding.as_ref().map_or("-".to_string(), |pr| {
            format!(
                "{} (s{}, gap {} ms)",
                p.strings.get(p.gpu.name[pr.row]),
                p.lanes[pr.lane as usize].stream,
                table::ms(pr.gap_ns)
            )
        });
        t.row(vec![
            m.groups[x.group].key.clone(),
            (x.instance + 1).to_string(),
            p.device_label(x.device).to_string(),
            x.api.map_or("-".into(), |s| p.strings.get(s).to_string()),
            x.api_end_to_start_ns.map_or("-".into(), table::ms),
            x.cpu_delay_ns.map_or("-".into(), table::ms),
            x.verdict.name().into(),
            behind,
        ]);
    }
    out += &t.render();
    out += &early_notes;
    out += "  cpu-late: the launch call ended after a peer's kernel had started; gpu-side: issued in time, started late on the GPU; unknown: no launch call, or a CUDA graph\n";
    out
}
