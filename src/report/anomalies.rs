//! The `anomalies` section: anomalous NCCL rows, grouped into events.

use super::context::Context;
use super::fit::Keep;
use super::json;
use super::table::{self, Table};
use crate::analysis::anomalies::AnomalyEvent;
use crate::analysis::matching::Matching;
use crate::figure_text::fixed;
use serde_json::{Value, json};

pub fn to_json(
    cx: &Context,
    m: &Matching,
    ratio: f64,
    rows: usize,
    events: &[AnomalyEvent],
) -> Value {
    let p = cx.profile;
    let ev: Vec<Value> = events
        .iter()
        .filter(|e| e.devices.iter().any(|&d| cx.shows(d)))
        .map(|e| {
            json!({
                "group": m.groups[e.group].key,
                "instance": e.instance + 1,
                "op": e.op.name(),
                "devices": json::devices(p, &e.devices),
                "max_duration_ms": json::ms(e.max_duration_ns),
                "mean_ms": e.mean_ns / 1e6,
                "node_event": e.node_host.map(|h| crate::analysis::skew::host_name(p, h)),
            })
        })
        .collect();
    json!({"ratio": ratio, "rows": rows, "events": ev})
}

pub fn to_text(
    cx: &Context,
    m: &Matching,
    ratio: f64,
    rows: usize,
    events: &[AnomalyEvent],
) -> String {
    let p = cx.profile;
    let mut out = String::from("Anomalous NCCL kernels\n");
    out += &cx.note(&format!(
        "duration > {ratio} × the mean of their collective type in their group; {rows} anomalous rows in {} events (rows on several ranks of one instance are one event)",
        events.len()
    ));
    let mut t = Table::new(&["group", "instance", "op", "devices", "max_ms", "mean_ms"])
        .shorten(0, Keep::Start)
        .shorten(3, Keep::Start);
    for e in events
        .iter()
        .filter(|e| e.devices.iter().any(|&d| cx.shows(d)))
    {
        let devs: Vec<String> = e
            .devices
            .iter()
            .map(|&d| p.device_label(d).to_string())
            .collect();
        t.row(vec![
            m.groups[e.group].key.clone(),
            (e.instance + 1).to_string(),
            e.op.name().into(),
            devs.join(","),
            table::ms(e.max_duration_ns),
            fixed(e.mean_ns / 1e6, 3),
        ]);
    }
    if !t.is_empty() {
        out += &t.render(cx.cols());
        out += &node_events_note(cx, m, events);
        out += &cx.note(
            "a long NCCL kernel is usually a rank that waited for a late peer, not a slow transfer",
        );
    }
    out
}

/// The instances one node event held up, said once per host: they are
/// one event, not as many as their rows.
fn node_events_note(cx: &Context, m: &Matching, events: &[AnomalyEvent]) -> String {
    let mut by_host: std::collections::BTreeMap<u32, Vec<String>> = Default::default();
    for e in events
        .iter()
        .filter(|e| e.devices.iter().any(|&d| cx.shows(d)))
    {
        if let Some(h) = e.node_host {
            by_host.entry(h).or_default().push(format!(
                "{}:{}",
                m.groups[e.group].key,
                e.instance + 1
            ));
        }
    }
    by_host
        .into_iter()
        .map(|(h, at)| {
            let host = cx.profile.host_label(h);
            let said = match at.len() {
                1 => format!("{}: a node event of host {host} (it held up its ranks at once)", at[0]),
                n => format!(
                    "{} are one node event of host {host} (it held up its ranks at once), not {n} events",
                    at.join(", ")
                ),
            };
            cx.note(&crate::text_safe::escape_controls(&said))
        })
        .collect()
}
