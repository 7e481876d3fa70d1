//! Bytes and bandwidth in `report nccl` and `report skew --instances`:
//! the figures of `analysis::bandwidth`, with what must be said beside
//! them (where the sizes come from, how they are timed, what busbw is not).

use super::context::Context;
use super::fit::Keep;
use super::json;
use super::table::Table;
use crate::analysis::bandwidth::{
    self, InstanceBandwidth, OpBandwidth, RankVolume, Sizes, Totals, size_convention,
};
pub use crate::analysis::bandwidth::{CAVEAT, TIMING};
use crate::analysis::bandwidth_n::{self, BusN};
use crate::analysis::matching::{Group, RanksFrom};
use crate::analysis::nccl_breakdown::OpKey;
use crate::analysis::nccl_name::CollOp;
use crate::analysis::pipeline::{self, Stage, Stages};
use crate::analysis::skew::GroupSkew;
use crate::analysis::stats::Spread;
use crate::figure_text::fixed;
use crate::profile::LaneId;
use crate::text_safe::escape_controls as safe;
use serde_json::{Value, json};
use std::collections::HashMap;

/// Everything `report` shows of bytes and bandwidth, computed once.
pub struct Figures {
    pub recorded: bool,
    /// The one line said of the sizes (none, how many, unverified).
    pub said: String,
    pub instances: HashMap<(usize, usize), InstanceBandwidth>,
    pub ops: Vec<OpBandwidth>,
    pub ranks: Vec<RankVolume>,
    /// Per (stream, op key) of the NCCL breakdown.
    pub lane_ops: HashMap<(LaneId, OpKey), Totals>,
    /// Per group of the matching the figures come from.
    groups: Vec<Shown>,
}

/// A group of the matching the figures come from.
struct Shown {
    key: String,
    /// Whether `--device` shows it.
    shown: bool,
    n: BusN,
}

impl Figures {
    /// From the report's analyses; when they hold no matching (`report
    /// nccl` alone does not match collectives) and the capture has sizes,
    /// the matching and skews are computed for them here. Without sizes
    /// nothing more is computed, and nothing is listed whatever the
    /// analyses hold (a report reads the same from a cache as without).
    pub fn of(cx: &Context) -> Figures {
        let (p, o) = (cx.profile, cx.options);
        let held = cx.analysis;
        let completed;
        let a = if held.holds.has(Stage::Skew) && !held.sizes.recorded() {
            return Figures::none(held.sizes.said());
        } else if held.holds.has(Stage::Skew) && held.holds.has(Stage::Completeness) {
            held
        } else {
            let sizes = Sizes::read(p, &held.classes);
            if !sizes.recorded() {
                return Figures::none(sizes.said());
            }
            // N is said short where the capture lacks devices or ranks.
            let want = Stages::of(&[Stage::Skew, Stage::Completeness]);
            completed = pipeline::resume(p, &o.settings, o.window, held.clone(), want, &mut |_| {});
            &completed
        };
        let instances = bandwidth::instances(&a.matching, &a.skews, &a.sizes);
        let ranks =
            bandwidth::rank_volume(p, &a.matching, &a.skews, &instances, &a.steps, &a.clock);
        let lane_ops = bandwidth::lane_ops(
            p,
            &a.classes,
            &a.clock,
            o.window,
            &a.matching,
            &a.sizes,
            &instances,
        );
        Figures {
            recorded: a.sizes.recorded(),
            said: a.sizes.said(),
            ops: bandwidth::per_op(&a.matching, &a.skews, &instances),
            instances,
            ranks,
            lane_ops,
            groups: a
                .matching
                .groups
                .iter()
                .map(|g| Shown {
                    key: g.key.clone(),
                    shown: cx.shows_group(g),
                    n: BusN::of(p, g, &a.completeness),
                })
                .collect(),
        }
    }

    fn none(said: String) -> Figures {
        Figures {
            recorded: false,
            said,
            instances: HashMap::new(),
            ops: Vec::new(),
            ranks: Vec::new(),
            lane_ops: HashMap::new(),
            groups: Vec::new(),
        }
    }

    /// The group/op rows `--device` shows, with their group's key.
    fn shown_ops(&self) -> impl Iterator<Item = (&str, &OpBandwidth)> {
        self.ops.iter().filter_map(|o| {
            let g = self.groups.get(o.group)?;
            g.shown.then_some((g.key.as_str(), o))
        })
    }

    /// The groups `--device` shows that have figures, with their key and
    /// N, in the order of their rows.
    fn shown_groups(&self) -> Vec<(&str, &BusN)> {
        let mut seen: Vec<usize> = self.ops.iter().map(|o| o.group).collect();
        seen.dedup();
        seen.iter()
            .filter_map(|&i| self.groups.get(i))
            .filter(|g| g.shown)
            .map(|g| (g.key.as_str(), &g.n))
            .collect()
    }

    /// Group `group`'s N, with the note said once beside its figures.
    pub fn n_of(&self, group: usize) -> Option<&BusN> {
        self.groups.get(group).map(|g| &g.n)
    }
}

/// MiB with one decimal, for a table column.
fn mib(b: u64) -> String {
    crate::figure_text::mib(b as f64)
}

fn gbps(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| fixed(v, 1))
}

fn spread_cell(s: Option<Spread>, pick: fn(&Spread) -> f64) -> String {
    gbps(s.map(|s| pick(&s)))
}

/// The `bandwidth` object of `report nccl`'s JSON.
pub fn nccl_json(cx: &Context, f: &Figures) -> Value {
    let p = cx.profile;
    let ops: Vec<Value> = f
        .shown_ops()
        .map(|(key, o)| {
            json!({
                "group": key,
                "op": o.op.name(),
                "instances": o.totals.counted,
                "sized_instances": o.totals.sized,
                "sizes_recorded": o.totals.sized > 0,
                "bytes": o.totals.bytes,
                "size_convention": size_convention(o.op),
                "busbw_factor": o.factor,
                "algbw_gbps": json::spread_or_null(o.totals.algbw_gbps),
                "busbw_gbps": json::spread_or_null(o.totals.busbw_gbps),
                "naive_gbps": json::spread_or_null(o.totals.naive_gbps),
            })
        })
        .collect();
    let ranks: Vec<Value> = f
        .ranks
        .iter()
        .filter(|r| cx.shows(r.device))
        .map(|r| {
            json!({
                "device": json::device(p, r.device),
                "step": r.step,
                "instances": r.instances,
                "bytes_sent_estimate": r.bytes_sent,
            })
        })
        .collect();
    let groups: Vec<Value> = f
        .shown_groups()
        .into_iter()
        .map(|(key, n)| {
            json!({
                "group": key,
                "n_used": n.n,
                "n_source": bandwidth_n::source(n.from),
                "matched_ranks": n.matched,
                "n_note": n.note,
            })
        })
        .collect();
    json!({
        "sizes_recorded": f.recorded,
        "note": f.said,
        "timing": TIMING,
        "caveat": CAVEAT,
        "groups": groups,
        "group_ops": ops,
        "rank_steps": ranks,
        "rank_steps_note": "bytes_sent_estimate = busbw factor × bytes per instance (a ring's volume): an estimate, not a measurement",
    })
}

/// The text of `report nccl` after its time tables.
pub fn nccl_text(cx: &Context, f: &Figures) -> String {
    let mut out = String::from("\nBytes and bandwidth per group and op (GB/s = 10^9 bytes/s)\n");
    out += &cx.note(&f.said);
    if !f.recorded {
        return out;
    }
    let mut t = Table::new(&[
        "group",
        "op",
        "N",
        "inst",
        "sized",
        "MiB",
        "algbw_p50",
        "algbw_p90",
        "busbw_p50",
        "busbw_p90",
    ])
    .shorten(0, Keep::Start);
    let shown: Vec<(&str, &OpBandwidth)> = f.shown_ops().collect();
    for (key, o) in &shown {
        t.row(vec![
            key.to_string(),
            o.op.name().into(),
            o.ranks.to_string(),
            o.totals.counted.to_string(),
            o.totals.sized.to_string(),
            o.totals.bytes.map_or("-".into(), mib),
            spread_cell(o.totals.algbw_gbps, |s| s.p50),
            spread_cell(o.totals.algbw_gbps, |s| s.p90),
            spread_cell(o.totals.busbw_gbps, |s| s.p50),
            spread_cell(o.totals.busbw_gbps, |s| s.p90),
        ]);
    }
    out += &t.render(cx.cols());
    let mut ops: Vec<CollOp> = shown.iter().map(|(_, o)| o.op).collect();
    ops.sort_by_key(|o| o.name());
    ops.dedup();
    let conventions: Vec<String> = ops
        .iter()
        .map(|&op| format!("{op}: {}", size_convention(op)))
        .collect();
    out += &cx.note(&format!("bytes per instance: {}", conventions.join("; ")));
    out += &cx.note(&format!("{TIMING} (naive figures in the JSON)"));
    out += &cx.note("busbw = algbw × the op's factor for N ranks (AllReduce 2(N−1)/N; AllGather, ReduceScatter, AllToAll (N−1)/N; others 1)");
    out += &n_text(cx, f);
    out += &cx.note(&format!("! {CAVEAT}"));
    out += &rank_text(cx, f);
    out
}

/// Where N comes from, once per source (with its groups when they differ),
/// and, once per group, why N is short of the communicator's ranks in the
/// capture.
fn n_text(cx: &Context, f: &Figures) -> String {
    let groups = f.shown_groups();
    let mut out = String::new();
    let sources: Vec<RanksFrom> = RanksFrom::ALL
        .into_iter()
        .filter(|&r| groups.iter().any(|(_, n)| n.from == r))
        .collect();
    for &r in &sources {
        let of: Vec<&str> = groups
            .iter()
            .filter(|(_, n)| n.from == r)
            .map(|(key, _)| *key)
            .collect();
        out += &cx.note(&if sources.len() == 1 {
            format!("N = {}", bandwidth_n::source(r))
        } else {
            format!("N of {} = {}", safe(&of.join(", ")), bandwidth_n::source(r))
        });
    }
    for (key, n) in &groups {
        if let Some(note) = &n.note {
            out += &cx.note(&format!("! {}: {note}", safe(key)));
        }
    }
    out
}

/// Per rank: the estimated bytes sent over the capture (steps in JSON).
fn rank_text(cx: &Context, f: &Figures) -> String {
    let p = cx.profile;
    let mut per_dev: Vec<(crate::profile::DevId, f64, usize, usize)> = Vec::new();
    for r in f.ranks.iter().filter(|r| cx.shows(r.device)) {
        match per_dev.last_mut() {
            Some(last) if last.0 == r.device => {
                last.1 += r.bytes_sent;
                last.2 += r.instances;
                last.3 += usize::from(r.step.is_some());
            }
            _ => per_dev.push((
                r.device,
                r.bytes_sent,
                r.instances,
                usize::from(r.step.is_some()),
            )),
        }
    }
    if per_dev.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nEstimated bytes sent per rank (an estimate: busbw factor × bytes per instance)\n",
    );
    let mut t = Table::new(&["device", "instances", "steps", "sent_MiB", "per_step_MiB"])
        .shorten(0, Keep::Middle);
    for (d, sent, n, steps) in per_dev {
        t.row(vec![
            p.device_label(d).to_string(),
            n.to_string(),
            steps.to_string(),
            crate::figure_text::mib(sent),
            if steps > 0 {
                crate::figure_text::mib(sent / steps as f64)
            } else {
                "-".into()
            },
        ]);
    }
    out += &t.render(cx.cols());
    out += &cx.note("a ring's volume: tree, NVLS and CollNet algorithms move other amounts; per step in the JSON");
    out
}

/// The fields an instance adds to `report skew --instances` JSON.
pub fn instance_fields(f: &Figures, group: usize, k: usize) -> Value {
    match f.instances.get(&(group, k)) {
        Some(b) => json!({
            "bytes": b.bytes,
            "recorded_bytes": b.recorded,
            "sizes_differ": b.sizes_differ,
            "transfer_ms": b.transfer_ns.map(json::ms),
            "algbw_gbps": b.algbw_gbps,
            "busbw_gbps": b.busbw_gbps,
        }),
        None => json!({
            "bytes": null,
            "recorded_bytes": null,
            "sizes_differ": null,
            "transfer_ms": null,
            "algbw_gbps": null,
            "busbw_gbps": null,
        }),
    }
}

/// Bytes and bandwidth of every instance of a group with a size, for
/// `report skew --instances`.
pub fn instances_text(cx: &Context, g: &Group, s: &GroupSkew, f: &Figures) -> String {
    let mut out = format!(
        "\nBytes and bandwidth per instance of {} (GB/s)\n",
        safe(&g.key)
    );
    let mut t = Table::new(&[
        "instance",
        "op",
        "MiB",
        "transfer_ms",
        "algbw",
        "busbw",
        "naive_min",
        "naive_max",
    ]);
    let mut without = 0;
    for i in &s.instances {
        let Some(b) = f.instances.get(&(s.group, i.index)) else {
            without += 1;
            continue;
        };
        let naive = |pick: fn(f64, f64) -> f64| b.naive_gbps.iter().map(|x| x.1).reduce(pick);
        t.row(vec![
            (i.index + 1).to_string(),
            i.op.name().into(),
            mib(b.bytes),
            b.transfer_ns.map_or("-".into(), super::table::ms),
            gbps(b.algbw_gbps),
            gbps(b.busbw_gbps),
            gbps(naive(f64::min)),
            gbps(naive(f64::max)),
        ]);
    }
    out += &t.render(cx.cols());
    if let Some(note) = f.n_of(s.group).and_then(|n| n.note.as_deref()) {
        out += &cx.note(&format!("! {note}"));
    }
    if without > 0 {
        out += &cx.note(&format!(
            "{without} instance(s) without a size are not listed"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mib_has_one_decimal() {
        assert_eq!(mib(8 << 20), "8.0");
        assert_eq!(mib(3 << 19), "1.5");
    }
}
