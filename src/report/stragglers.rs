//! The `stragglers` section: per group, every rank's start lateness in
//! every instance (JSON, CSV), or a per-rank summary (text, since the
//! matrix is as wide as the capture is long).

use super::context::Context;
use super::csv_tables::Table as CsvTable;
use super::json;
use super::table::{self, Table};
use crate::analysis::caveats::group_caveats;
use crate::analysis::matching::{Group, Matching};
use crate::analysis::stragglers::{StragglerMap, by_mean_lateness, straggler_map};
use crate::figure_text::fixed;
use crate::profile::DevId;
use crate::text_safe::escape_controls as safe;
use serde_json::{Value, json};

/// The maps of the groups `--device` lets through (derived from the skew
/// stage, as the timeline derives them), with the rows (ranks) it lets
/// through.
fn maps(cx: &Context) -> Vec<(StragglerMap, Vec<usize>)> {
    let a = cx.analysis;
    a.skews
        .iter()
        .map(|s| straggler_map(&a.matching.groups[s.group], s))
        .map(|map| {
            let rows: Vec<usize> = (0..map.ranks())
                .filter(|&r| cx.shows(map.devices[r]))
                .collect();
            (map, rows)
        })
        .filter(|(_, rows)| !rows.is_empty())
        .collect()
}

/// Group `group`'s caveats as sentences (the clock line among them), as
/// `report skew` gives them; `missing` as [`super::skew::missing_devices`].
fn notes(cx: &Context, group: usize, missing: &[DevId]) -> Vec<String> {
    let end_p90 = cx
        .analysis
        .skews
        .iter()
        .find(|s| s.group == group)
        .and_then(|s| s.end_skew_ms.map(|x| x.p90));
    group_caveats(
        cx.profile,
        &cx.analysis.matching.groups[group],
        missing,
        end_p90,
    )
    .iter()
    .map(|c| c.sentence(cx.profile))
    .collect()
}

/// The big instances of group `group` a node event held up: (host,
/// 0-based instance). Each is one event with the other groups' it held up
/// at that moment (`report skew`'s `node_events`).
fn node_event_instances(cx: &Context, group: usize) -> Vec<(u32, usize)> {
    cx.analysis
        .skews
        .iter()
        .filter(|s| s.group == group)
        .flat_map(|s| &s.big_events)
        .filter_map(|b| {
            let h = b.late_host.filter(|h| h.node_event)?;
            Some((h.host, b.instance.index))
        })
        .collect()
}

/// The clock error (ms) under which a lateness of the group is not
/// resolvable: 0 on one clock.
fn uncertainty_ms(g: &Group) -> f64 {
    g.clock_error_ns() as f64 / 1e6
}

/// `{"groups": [{group, ranks, instances, lateness_ms, notes,
/// clock_uncertainty_ms}]}`; `lateness_ms`
/// has one row per rank (in `ranks` order), one value per instance (null
/// where the rank's capture does not cover it).
pub fn to_json(cx: &Context, m: &Matching) -> Value {
    let p = cx.profile;
    let missing = super::skew::missing_devices(cx);
    let groups: Vec<Value> = maps(cx)
        .iter()
        .map(|(map, rows)| {
            let g = &m.groups[map.group];
            json!({
                "group": g.key,
                "notes": notes(cx, map.group, &missing),
                "clock_uncertainty_ms": uncertainty_ms(g),
                "node_events": node_event_instances(cx, map.group)
                    .into_iter()
                    .map(|(h, k)| json!({
                        "host": crate::analysis::skew::host_name(p, h),
                        "instance": k + 1,
                    }))
                    .collect::<Vec<_>>(),
                "ranks": rows.iter().map(|&r| json::device(p, map.devices[r])).collect::<Vec<_>>(),
                "instances": map.instances.iter().map(|k| k + 1).collect::<Vec<_>>(),
                "lateness_ms": rows
                    .iter()
                    .map(|&r| map.row(r).map(|ns| ns.map(json::ms)).collect::<Vec<_>>())
                    .collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "groups": groups })
}

/// One row per (group, instance, rank), instances in time order; an empty
/// lateness where the rank's capture does not cover the instance. Each row
/// carries its group's clock error: a lateness below it is not resolvable.
/// The CSV's table: the JSON's rows of lists are no table of their own.
pub fn csv_table(cx: &Context, m: &Matching) -> CsvTable {
    let p = cx.profile;
    let mut rows = Vec::new();
    for (map, ranks) in maps(cx) {
        let key = m.groups[map.group].key.clone();
        let clock = uncertainty_ms(&m.groups[map.group]).to_string();
        let labels: Vec<String> = ranks
            .iter()
            .map(|&r| p.device_label(map.devices[r]).to_string())
            .collect();
        for (c, k) in map.instances.iter().enumerate() {
            for (label, &r) in labels.iter().zip(&ranks) {
                let ms = map
                    .at(r, c)
                    .map_or(String::new(), |ns| json::ms(ns).to_string());
                rows.push(vec![
                    key.clone(),
                    (k + 1).to_string(),
                    label.clone(),
                    ms,
                    clock.clone(),
                ]);
            }
        }
    }
    CsvTable {
        name: "stragglers.lateness".into(),
        columns: [
            "group",
            "instance",
            "rank",
            "lateness_ms",
            "clock_uncertainty_ms",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

/// Per group, per rank: mean and largest lateness and how often it was
/// the last to start, latest first.
pub fn to_text(cx: &Context, m: &Matching) -> String {
    let p = cx.profile;
    let mut out = String::from(
        "Stragglers: how late each rank starts (per-instance matrix: --format json|csv)\n",
    );
    let all = maps(cx);
    let missing = super::skew::missing_devices(cx);
    if all.is_empty() {
        out += if cx.no_gpu_activity {
            "  nothing to analyse: no GPU activity was recorded\n"
        } else {
            "  no NCCL collectives matched across devices\n"
        };
        return out;
    }
    for (map, rows) in &all {
        out += &format!(
            "\n{}: {} ranks × {} instances\n",
            safe(&m.groups[map.group].key),
            map.ranks(),
            map.columns()
        );
        let mut t = Table::new(&["rank", "mean_late_ms", "max_late_ms", "times_last"]);
        for r in by_mean_lateness(map)
            .into_iter()
            .filter(|r| rows.contains(r))
        {
            t.row(vec![
                p.device_label(map.devices[r]).to_string(),
                fixed(map.mean_ns[r] / 1e6, 3),
                table::ms(map.max_ns[r]),
                map.late_count[r].to_string(),
            ]);
        }
        out += &t.render(cx.cols());
        for (h, k) in node_event_instances(cx, map.group) {
            out += &cx.note(&safe(&format!(
                "instance {}: a node event of host {} (its ranks held up at once, one event with the other groups' at that moment: report skew)",
                k + 1,
                p.host_label(h)
            )));
        }
        for n in notes(cx, map.group, &missing) {
            out += &cx.note(&safe(&n));
        }
    }
    out += &cx.note(
        "late: start − the instance's earliest start (0 when first), over every instance, big events included",
    );
    out
}
