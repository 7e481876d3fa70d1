//! The `skew` section: per matched group, start/end skew, late arrivers,
//! waiting time and the big events.

use super::bandwidth::{self, Figures};
use super::context::Context;
use super::fit::Keep;
use super::json::{self, spread_json};
use super::table::{self, Table};
use crate::analysis::caveats::{Caveat, group_caveats};
use crate::analysis::matching::{Group, Matching};
use crate::analysis::skew::{GroupSkew, HostFigures, InstanceSkew, host_name};
use crate::analysis::stats::Spread;
use crate::figure_text::fixed;
use crate::profile::DevId;
use crate::text_safe::escape_controls as safe;
use serde_json::{Map, Value, json};

fn per_device<T: Into<Value> + Copy>(cx: &Context, devices: &[DevId], v: &[T]) -> Value {
    let mut m = Map::new();
    for (d, x) in devices.iter().zip(v) {
        m.insert(cx.profile.device_label(*d).key_string(), (*x).into());
    }
    Value::Object(m)
}

/// Devices that had a CUDA context but recorded no GPU activity (in the
/// whole capture, whatever the window).
pub(super) fn missing_devices(cx: &Context) -> Vec<DevId> {
    let all = crate::analysis::Window::ALL;
    crate::analysis::completeness::completeness(cx.profile, cx.clock, all).missing
}

pub fn to_json(cx: &Context, m: &Matching, skews: &[GroupSkew]) -> Value {
    let p = cx.profile;
    let missing = missing_devices(cx);
    let bytes = cx.options.instances.then(|| Figures::of(cx));
    let groups: Vec<Value> = skews
        .iter()
        .filter(|s| cx.shows_group(&m.groups[s.group]))
        .map(|s| {
            let g = &m.groups[s.group];
            let notes: Vec<String> = group_caveats(p, g, &missing, s.end_skew_ms.map(|x| x.p90))
                .iter()
                .map(|c| c.sentence(p))
                .collect();
            let desync = g.desync.as_ref().map(|d| {
                let ops: serde_json::Map<String, Value> = d
                    .ops
                    .iter()
                    .map(|(op, on)| {
                        let devs: Vec<_> = on.iter().map(|&i| g.devices[i]).collect();
                        (op.name().to_string(), json::devices(p, &devs))
                    })
                    .collect();
                json!({"instance": d.instance, "ops": ops})
            });
            let captured: Vec<Value> = g
                .devices
                .iter()
                .zip(&g.captured)
                .map(|(&d, c)| {
                    json!({
                        "device": json::device(p, d),
                        "first": c.first,
                        "last": c.last,
                        "placed_by": c.basis.name(),
                        "confirmed": c.basis.confirmed(),
                    })
                })
                .collect();
            let big: Vec<Value> = s
                .big_events
                .iter()
                .map(|e| {
                    let i = &e.instance;
                    json!({
                        "instance": i.index + 1,
                        "op": i.op.name(),
                        "start_ns": i.earliest_start,
                        "start_skew_ms": json::ms(i.start_skew_ns),
                        // The late device never started it: the skew is at
                        // least start_skew_ms, still open at capture end.
                        "open": i.open,
                        "late_device": json::device(p, g.devices[i.late]),
                        "late_duration_ms": late_duration_ns(cx, g, i).map(json::ms),
                        "max_duration_ms": json::ms(i.max_duration_ns),
                        "step": e.step,
                        "offset_in_step_ms": e.offset_in_step_ns.map(json::ms),
                        "resolvable": i.resolvable,
                        "late_host": e.late_host.map(|h| json!({
                            "host": host_name(p, h.host),
                            "ranks": h.ranks,
                            "communicators": h.communicators,
                            "margin_ms": json::ms(h.margin_ns),
                            "node_event": h.node_event,
                        })),
                    })
                })
                .collect();
            let mut out = json!({
                "key": g.key,
                "match_method": g.method.name(),
                "match_verified": g.method.verified(),
                "devices": json::devices(p, &g.devices),
                "streams": g.lanes.iter().map(|&l| p.lanes[l as usize].stream).collect::<Vec<_>>(),
                "found_by": g.found_by.name(),
                "lockstep_ambiguous": g.lockstep_ambiguous,
                "comm_size": g.comm_size,
                "instances": s.instances.len(),
                "sequence_length": g.instances(),
                "sequence_consistent": g.sequence_consistent(),
                "desync": desync,
                "captured": captured,
                "without_calls": g.without_calls.iter().map(|w| json!({
                    "device": json::device(p, g.devices[w.device]),
                    "placed": w.placed,
                    "left_out": w.left_out,
                })).collect::<Vec<_>>(),
                "end_aligned": g.end_aligned,
                "note": notes.first(),
                "notes": notes,
                "start_skew_ms": spread_json(s.start_skew_ms),
                "end_skew_ms": spread_json(s.end_skew_ms),
                "nccl_total_ms": json::ms(s.nccl_total_ns),
                "baseline_ms": json::ms(s.baseline_ns),
                "excess_ms": json::ms(s.excess_ns()),
                "excess_pct": s.excess_pct(),
                "big_skew_threshold_ms": json::ms(s.big_threshold_ns),
                "big_events": big,
                "big_excess_ms": json::ms(s.big_excess_ns),
                "other_excess_ms": json::ms(s.other_excess_ns),
                "late_counts": per_device(cx, &g.devices, &s.late_counts),
                "early_counts": per_device(cx, &g.devices, &s.early_counts),
                "mean_lateness_ms_excluding_big": per_device(cx, &g.devices, &s.mean_lateness_ms_excluding_big),
            });
            let hosts = s.by_host(p, g);
            let by_host = |f: &dyn Fn(&HostFigures) -> Value| -> Value {
                hosts
                    .iter()
                    .map(|h| (host_name(p, h.host), f(h)))
                    .collect::<serde_json::Map<String, Value>>()
                    .into()
            };
            out["late_counts_by_host"] = by_host(&|h| h.late.into());
            out["early_counts_by_host"] = by_host(&|h| h.early.into());
            out["mean_lateness_ms_excluding_big_by_host"] =
                by_host(&|h| h.mean_lateness_ms_excluding_big.into());
            // Only when asked: a long capture has ~10⁵ instances.
            if cx.options.instances {
                let list: Vec<Value> = s
                    .instances
                    .iter()
                    .map(|i| {
                        let mut v = instance_json(cx, g, s, i);
                        if let (Some(f), Value::Object(o)) = (&bytes, &mut v)
                            && let Value::Object(b) = bandwidth::instance_fields(f, s.group, i.index)
                        {
                            o.extend(b);
                        }
                        v
                    })
                    .collect();
                out["instance_list"] = Value::Array(list);
            }
            out
        })
        .collect();
    let unpaired: Vec<Value> = m
        .unpaired
        .iter()
        .map(|&l| {
            let lane = &p.lanes[l as usize];
            json!({"device": json::device(p, lane.device), "stream": lane.stream})
        })
        .collect();
    let unmatched: Vec<Value> = m
        .unmatched
        .iter()
        .map(|&(l, n)| {
            let lane = &p.lanes[l as usize];
            json!({"device": json::device(p, lane.device), "stream": lane.stream, "kernels": n})
        })
        .collect();
    let all_events = crate::analysis::events::events(p, m, skews);
    let instances_json = |e: &crate::analysis::events::Event| {
        e.instances
            .iter()
            .map(|&(g, k)| json!({"group": m.groups[g].key, "instance": k + 1}))
            .collect::<Vec<_>>()
    };
    let events: Vec<Value> = all_events
        .iter()
        .map(|e| {
            json!({
                "start_ns": e.start_ns,
                "end_ns": e.end_ns,
                "origin": json::device(p, e.origin),
                "skew_ms": json::ms(e.skew_ns),
                "late_devices": json::devices(p, &e.late),
                "node": e.node.as_ref().map(|n| host_name(p, n.host)),
                "instances": instances_json(e),
            })
        })
        .collect();
    // Each node event once, with the ranks and communicators it held up.
    let node_events: Vec<Value> = all_events
        .iter()
        .filter_map(|e| {
            let n = e.node.as_ref()?;
            Some(json!({
                "host": host_name(p, n.host),
                "start_ns": e.start_ns,
                "ranks": json::devices(p, &n.ranks),
                "communicators": n.communicators,
                "margin_ms": json::ms(n.margin_ns),
                "instances": instances_json(e),
            }))
        })
        .collect();
    let mut out = json!({
        "groups": groups,
        "events": events,
        "node_events": node_events,
        "unpaired_streams": unpaired,
        "unmatched_kernels": unmatched,
        "suspect_events_left_out": cx.suspect_events().total(),
    });
    if let Some(f) = &bytes {
        out["sizes_recorded"] = f.recorded.into();
        out["sizes_note"] = f.said.clone().into();
        if f.recorded {
            out["bandwidth_caveat"] = bandwidth::CAVEAT.into();
        }
    }
    out
}

/// Whether instance `i` of `s` is one of its big events.
fn is_big(s: &GroupSkew, i: &InstanceSkew) -> bool {
    s.big_events.iter().any(|e| e.instance.index == i.index)
}

/// The big instances as events, when one delay showed in several groups.
fn events_text(cx: &Context, m: &Matching, skews: &[GroupSkew]) -> String {
    let p = cx.profile;
    let events = crate::analysis::events::events(p, m, skews);
    let big: usize = events.iter().map(|e| e.instances.len()).sum();
    let nodes = events.iter().filter(|e| e.node.is_some()).count();
    if events.len() == big && nodes == 0 {
        return String::new();
    }
    let mut out = format!(
        "\n{big} big instances are {} events (one delay shows in every group it holds up)\n",
        events.len()
    );
    for e in events
        .iter()
        .filter(|e| e.instances.len() > 1 || e.node.is_some())
    {
        let at: Vec<String> = e
            .instances
            .iter()
            .map(|&(g, k)| format!("{}:{}", m.groups[g].key, k + 1))
            .collect();
        let who = match &e.node {
            Some(n) => n.late_host().phrase(p),
            None => format!("{} late", p.device_label(e.origin).tag()),
        };
        out += &cx.note(&format!(
            "at {} s: {}, up to {} ms, in {} instance{} ({})",
            fixed(e.start_ns as f64 / 1e9, 6),
            safe(&who),
            table::ms(e.skew_ns),
            e.instances.len(),
            if e.instances.len() == 1 { "" } else { "s" },
            safe(&at.join(", "))
        ));
    }
    out
}

/// Each group as a communicator: its members (ranks when every member's
/// is recorded, else devices), the stream ids they ran on, and how they
/// were found to be one.
fn communicators_text(cx: &Context, m: &Matching, skews: &[GroupSkew]) -> String {
    let p = cx.profile;
    let mut t = Table::new(&["group", "found_by", "members", "streams"])
        .shorten(0, Keep::Start)
        .shorten(2, Keep::Start);
    for s in skews.iter().filter(|s| cx.shows_group(&m.groups[s.group])) {
        let g = &m.groups[s.group];
        let members = crate::analysis::caveats::members(p, g);
        let mut streams: Vec<u32> = g
            .lanes
            .iter()
            .map(|&l| p.lanes[l as usize].stream)
            .collect();
        streams.sort_unstable();
        streams.dedup();
        let streams: Vec<String> = streams.iter().map(|s| s.to_string()).collect();
        let found = if g.lockstep_ambiguous {
            format!("{} (lockstep?)", g.found_by.name())
        } else {
            g.found_by.name().to_string()
        };
        t.row(vec![g.key.clone(), found, members, streams.join(" ")]);
    }
    let mut out = t.render(cx.cols());
    out += &cx.note("found_by: payload = NCCL's NVTX payloads name the communicator; ends = its members' kernels always end together (one clock); sequence = stream ids and op sequences agree");
    out
}

/// Duration of the late rank's kernel of instance `i`: none when it
/// never started it.
fn late_duration_ns(cx: &Context, g: &Group, i: &InstanceSkew) -> Option<i64> {
    let p = cx.profile;
    g.row(i.index, i.late)
        .map(|row| p.gpu.end(row).saturating_sub(p.gpu.start(row)))
}

/// The cells an instance row starts with, in the instance list and the
/// big-event table alike: instance, op, start_s, skew_ms, late_dev,
/// late_dur_ms, max_dur_ms.
fn instance_cells(cx: &Context, g: &Group, i: &InstanceSkew) -> Vec<String> {
    vec![
        (i.index + 1).to_string(),
        i.op.name().into(),
        format!("{:.6}", i.earliest_start as f64 / 1e9),
        if i.open {
            // A lower bound: whole ms say it (the note below has the rest).
            format!("≥{:.0}", i.start_skew_ns as f64 / 1e6)
        } else {
            table::ms(i.start_skew_ns)
        },
        cx.profile.device_label(g.devices[i.late]).to_string(),
        late_duration_ns(cx, g, i).map_or("-".into(), table::ms),
        table::ms(i.max_duration_ns),
    ]
}

fn instance_json(cx: &Context, g: &Group, s: &GroupSkew, i: &InstanceSkew) -> Value {
    let p = cx.profile;
    json!({
        "instance": i.index + 1,
        "op": i.op.name(),
        "start_ns": i.earliest_start,
        "start_skew_ms": json::ms(i.start_skew_ns),
        "end_skew_ms": json::ms(i.end_skew_ns),
        "late_device": json::device(p, g.devices[i.late]),
        "early_device": json::device(p, g.devices[i.early]),
        "late_duration_ms": late_duration_ns(cx, g, i).map(json::ms),
        "open": i.open,
        "max_duration_ms": json::ms(i.max_duration_ns),
        "excess_ms": json::ms(i.excess_ns()),
        "ranks": i.ranks,
        "missing": json::devices(p, &g.missing(i.index).iter().map(|&d| g.devices[d]).collect::<Vec<_>>()),
        "big": is_big(s, i),
        "resolvable": i.resolvable,
        "unfinished": i.unfinished,
    })
}

/// Every instance of a group, for `--instances`; with sizes, each one's
/// bytes and bandwidth after.
fn instances_text(cx: &Context, g: &Group, s: &GroupSkew, bytes: &Figures) -> String {
    let mut out = format!(
        "\nEvery instance of {} ({})\n",
        safe(&g.key),
        s.instances.len()
    );
    out += &cx.note(
        "excess_ms = Σ over ranks of duration − the shortest; big = start skew above the threshold",
    );
    let mut t = Table::new(&[
        "instance",
        "op",
        "start_s",
        "skew_ms",
        "late_dev",
        "late_dur_ms",
        "max_dur_ms",
        "excess_ms",
        "big",
    ])
    .shorten(4, Keep::Middle);
    for i in &s.instances {
        let mut row = instance_cells(cx, g, i);
        row.push(table::ms(i.excess_ns()));
        row.push(if is_big(s, i) { "yes" } else { "no" }.into());
        t.row(row);
    }
    out += &t.render(cx.cols());
    if bytes.recorded {
        out += &bandwidth::instances_text(cx, g, s, bytes);
    }
    out
}

pub fn to_text(cx: &Context, m: &Matching, skews: &[GroupSkew]) -> String {
    let p = cx.profile;
    let mut out = String::from("Cross-rank skew of matched collectives\n");
    out += &cx.suspect_note();
    if skews.is_empty() {
        out += if cx.no_gpu_activity {
            "  nothing to analyse: no GPU activity was recorded\n"
        } else {
            "  no NCCL collectives matched across devices\n"
        };
        return out;
    }
    // How each group was matched, then its figures: one table would not
    // fit 100 columns.
    let mut t = Table::new(&[
        "group",
        "method",
        "devices",
        "instances",
        "consistent",
        "ends",
        "big_events",
    ])
    .shorten(0, Keep::Start);
    let mut figures = Table::new(&[
        "group",
        "start_p50_ms",
        "start_p90_ms",
        "start_max_ms",
        "end_p90_ms",
        "nccl_ms",
        "excess_ms",
        "excess_%",
    ])
    .shorten(0, Keep::Start);
    let f = |s: Option<Spread>, pick: fn(&Spread) -> f64| {
        s.map_or("-".to_string(), |s| fixed(pick(&s), 3))
    };
    for s in skews.iter().filter(|s| cx.shows_group(&m.groups[s.group])) {
        let g = &m.groups[s.group];
        t.row(vec![
            g.key.clone(),
            if g.method.verified() {
                g.method.name().into()
            } else {
                format!("{} (unverified)", g.method.name())
            },
            g.devices.len().to_string(),
            s.instances.len().to_string(),
            if g.sequence_consistent() {
                "yes".into()
            } else {
                "NO".into()
            },
            if g.end_aligned {
                "aligned".into()
            } else {
                "NOT aligned".into()
            },
            s.big_events.len().to_string(),
        ]);
        figures.row(vec![
            g.key.clone(),
            f(s.start_skew_ms, |s| s.p50),
            f(s.start_skew_ms, |s| s.p90),
            f(s.start_skew_ms, |s| s.max),
            f(s.end_skew_ms, |s| s.p90),
            table::ms(s.nccl_total_ns),
            table::ms(s.excess_ns()),
            table::pct(s.excess_pct()),
        ]);
    }
    out += &t.render(cx.cols());
    out += "\n";
    out += &figures.render(cx.cols());
    out += "\n";
    out += &communicators_text(cx, m, skews);
    // Missing devices concern every group: said once, below.
    let missing = missing_devices(cx);
    for s in skews.iter().filter(|s| cx.shows_group(&m.groups[s.group])) {
        let g = &m.groups[s.group];
        for c in group_caveats(p, g, &missing, s.end_skew_ms.map(|x| x.p90)) {
            if !matches!(c, Caveat::MissingDevices(_)) {
                out += &cx.note(&format!("! {}: {}", safe(&g.key), safe(&c.sentence(p))));
            }
        }
    }
    out += &super::captures::to_text(cx, m);
    for s in skews
        .iter()
        .filter(|s| cx.shows_group(&m.groups[s.group]) && !s.big_events.is_empty())
    {
        let g = &m.groups[s.group];
        out += &format!(
            "\nBig events in {} (start skew > {} ms)\n",
            safe(&g.key),
            table::ms(s.big_threshold_ns),
        );
        out += &cx.note(&format!(
            "{} ms of excess, {} ms in all other instances",
            table::ms(s.big_excess_ns),
            table::ms(s.other_excess_ns)
        ));
        out += &cx.note("offset_in_step_ms = the instance's earliest start − the start of the late rank's step (the step holding the late kernel's launch call)");
        let mut b = Table::new(&[
            "instance",
            "op",
            "start_s",
            "skew_ms",
            "late_dev",
            "late_dur_ms",
            "max_dur_ms",
            "step",
            "offset_in_step_ms",
        ])
        .shorten(4, Keep::Middle)
        // `ReduceSc…` still names the op: the last resort at 100 columns.
        .shorten_to(1, Keep::Start, 9);
        for e in &s.big_events {
            let mut row = instance_cells(cx, g, &e.instance);
            row.push(e.step.map_or("-".into(), |s| s.to_string()));
            row.push(e.offset_in_step_ns.map_or("-".into(), table::ms));
            b.row(row);
        }
        out += &b.render(cx.cols());
        for e in &s.big_events {
            if e.instance.open {
                out += &cx.note(&format!(
                    "instance {}: {} never launched it; the others wait ≥ {} ms, still open at capture end",
                    e.instance.index + 1,
                    p.device_label(g.devices[e.instance.late]),
                    table::ms(e.instance.start_skew_ns)
                ));
                continue;
            }
            // A node event is said once, with the events below.
            let said = match &e.late_host {
                Some(h) if h.node_event => format!(
                    "part of host {}'s node event (see the events below)",
                    p.host_label(h.host)
                ),
                Some(h) => h.phrase(p),
                None => continue,
            };
            out += &cx.note(&format!(
                "instance {}: {}",
                e.instance.index + 1,
                safe(&said)
            ));
        }
        let unresolved = s
            .big_events
            .iter()
            .filter(|e| !e.instance.resolvable)
            .count();
        if unresolved > 0 {
            out += &cx.note(&format!(
                "{unresolved} big event(s) have a start skew below the clock residual: not resolvable"
            ));
        }
    }
    out += &events_text(cx, m, skews);
    if cx.options.instances {
        let bytes = Figures::of(cx);
        for s in skews.iter().filter(|s| cx.shows_group(&m.groups[s.group])) {
            out += &instances_text(cx, &m.groups[s.group], s, &bytes);
        }
        out += "\n";
        out += &cx.note(&bytes.said);
        if bytes.recorded {
            out += &cx.note(bandwidth::TIMING);
            out += &cx.note(&format!("! {}", bandwidth::CAVEAT));
        }
    }
    for s in skews.iter().filter(|s| cx.shows_group(&m.groups[s.group])) {
        let g = &m.groups[s.group];
        out += &format!("\nLate and early arrivals in {}\n", safe(&g.key));
        out += &cx.note("mean_late_ms: start − the instance's earliest start, 0 when first, averaged over the instances that are not big events");
        let mut r =
            Table::new(&["device", "late", "early", "mean_late_ms"]).shorten(0, Keep::Middle);
        for (d, &dev) in g.devices.iter().enumerate() {
            r.row(vec![
                p.device_label(dev).to_string(),
                s.late_counts[d].to_string(),
                s.early_counts[d].to_string(),
                s.mean_lateness_ms_excluding_big[d].map_or("-".into(), |v| fixed(v, 3)),
            ]);
        }
        out += &r.render(cx.cols());
    }
    if !m.unpaired.is_empty() {
        let list: Vec<String> = m
            .unpaired
            .iter()
            .map(|&l| {
                format!(
                    "s{}@D{}",
                    p.lanes[l as usize].stream,
                    safe(&p.device_label(p.lanes[l as usize].device).to_string())
                )
            })
            .collect();
        out += "\n";
        out += &cx.note(&format!(
            "streams with NCCL kernels that pair with no other device: {}",
            list.join(", ")
        ));
    }
    if !m.unmatched.is_empty() {
        let total: u32 = m.unmatched.iter().map(|x| x.1).sum();
        let list: Vec<String> = m
            .unmatched
            .iter()
            .map(|&(l, n)| {
                format!(
                    "s{}@D{} ({n})",
                    p.lanes[l as usize].stream,
                    safe(&p.device_label(p.lanes[l as usize].device).to_string())
                )
            })
            .collect();
        out += &cx.note(&format!(
            "{total} NCCL kernel{} in no instance: {}",
            if total == 1 { " is" } else { "s are" },
            list.join(", ")
        ));
    }
    out += "\n";
    out += &cx.note("excess = duration above the fastest rank, an estimate of waiting summed over ranks — not step time to win back");
    out += &cx.note("the long kernel is the rank that waited; the late arriver has the short one");
    if missing.is_empty() {
        out += &cx.note("counts cover only the recorded devices");
    } else {
        let list: Vec<String> = missing
            .iter()
            .map(|&d| safe(&p.device_label(d).tag()).into_owned())
            .collect();
        out += &cx.note(&format!(
            "counts cover only the recorded devices: {} had a CUDA context but recorded no GPU activity",
            list.join(", ")
        ));
    }
    out
}
