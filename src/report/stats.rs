//! The `stats` section: nsys-style summary tables (`cuda_gpu_kern_sum`,
//! `nvtx_sum`, `cuda_api_sum`, `osrt_sum`, memory operations) per name, or
//! per device or stream and name, in text, JSON and CSV.

use super::context::Context;
use super::fit::Keep;
use super::json;
use super::table::{self, Table};
use crate::analysis::name_stats::{self, StatRow, StatsBy, StatsOf};
use crate::profile::SuspectTable;
use serde_json::{Value, json};

/// The rows, or why there are none to give (`--by` on CPU events).
fn rows(cx: &Context) -> Result<Vec<StatRow>, String> {
    let (of, by) = (cx.options.stats_of, cx.options.stats_by);
    let names = cx.options.kernel_names;
    let rows = name_stats::table(cx.profile, cx.clock, of, by, names, cx.options.window)?;
    Ok(rows
        .into_iter()
        .filter(|r| r.device.is_none_or(|d| cx.shows(d)))
        .collect())
}

/// The tables whose rows `--of` reads, as their rows are judged (NVTX
/// ranges are not).
fn judged_tables(of: StatsOf) -> &'static [SuspectTable] {
    match of {
        StatsOf::Kernels | StatsOf::Api | StatsOf::Copies => &[SuspectTable::GpuOrCudaCalls],
        StatsOf::Osrt => &[SuspectTable::OsRuntime],
        StatsOf::Nvtx => &[],
    }
}

/// The stream column: `s20` (the device is its own column).
fn stream(cx: &Context, r: &StatRow) -> Option<u32> {
    r.lane.map(|l| cx.profile.lanes[l as usize].stream)
}

pub fn to_json(cx: &Context) -> Value {
    let rows = match rows(cx) {
        Ok(r) => r,
        Err(why) => return json!({ "error": why }),
    };
    let all = name_stats::total_ns(&rows);
    let p = cx.profile;
    let list: Vec<Value> = rows
        .iter()
        .map(|r| {
            // The keys first, so the CSV's columns read as the text's.
            let mut v = serde_json::Map::new();
            if let Some(d) = r.device {
                v.insert("device".into(), json::device(p, d));
            }
            if let Some(s) = stream(cx, r) {
                v.insert("stream".into(), s.into());
            }
            let figures: [(&str, Value); 9] = [
                (
                    "name",
                    crate::text_safe::escape_controls(&r.label(&p.strings)).into(),
                ),
                ("time_pct", name_stats::share_pct(r, all).into()),
                ("total_ms", json::ms(r.total_ns).into()),
                ("count", r.count.into()),
                ("avg_ms", (r.mean_ns / 1e6).into()),
                ("median_ms", (r.median_ns / 1e6).into()),
                ("min_ms", json::ms(r.min_ns).into()),
                ("max_ms", json::ms(r.max_ns).into()),
                ("stddev_ms", (r.stddev_ns / 1e6).into()),
            ];
            v.extend(figures.map(|(k, x)| (k.to_string(), x)));
            if cx.options.stats_of == StatsOf::Copies {
                v.insert("copies".into(), r.copies.into());
            }
            Value::Object(v)
        })
        .collect();
    let left_out = cx.suspect_events_of(judged_tables(cx.options.stats_of));
    json!({
        "of": cx.options.stats_of.name(),
        "by": cx.options.stats_by.name(),
        "rows": list,
        "suspect_events_left_out": left_out.total(),
    })
}

/// The columns before the figures: device and stream with `--by`.
fn keys(cx: &Context) -> Vec<&'static str> {
    match cx.options.stats_by {
        StatsBy::Name => vec![],
        StatsBy::Device => vec!["device"],
        StatsBy::Stream => vec!["device", "stream"],
    }
}

fn key_cells(cx: &Context, r: &StatRow) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(d) = r.device {
        out.push(cx.profile.device_label(d).to_string());
    }
    if let Some(s) = stream(cx, r) {
        out.push(format!("s{s}"));
    }
    out
}

pub fn to_text(cx: &Context) -> String {
    let of = cx.options.stats_of;
    let mut out = format!(
        "Stats: {} — durations summed over events, not wall time\n",
        of.described(cx.options.kernel_names)
    );
    out += &cx.suspect_note_of(judged_tables(of));
    let rows = match rows(cx) {
        Ok(r) => r,
        Err(why) => return out + &format!("  {why}\n"),
    };
    if rows.is_empty() {
        return out + "  none in this capture (or window)\n";
    }
    let all = name_stats::total_ns(&rows);
    let mut header = keys(cx);
    let figures = name_stats::COLUMNS;
    header.extend(figures);
    let name_col = header.len() - 1;
    let mut t = Table::new(&header).shorten(name_col, Keep::Start);
    if !keys(cx).is_empty() {
        // Rows come per device: the device becomes a heading where the
        // columns do not fit.
        t = t.shorten(0, Keep::Middle).heading_when_narrow(0);
    }
    for r in &rows {
        let mut cells = key_cells(cx, r);
        cells.extend([
            table::pct(Some(name_stats::share_pct(r, all))),
            table::ms(r.total_ns),
            r.count.to_string(),
            format!("{:.3}", r.mean_ns / 1e6),
            format!("{:.3}", r.median_ns / 1e6),
            table::ms(r.min_ns),
            table::ms(r.max_ns),
            format!("{:.3}", r.stddev_ns / 1e6),
            r.label(&cx.profile.strings).into_owned(),
        ]);
        t.row(cells);
    }
    out += &t.render(cx.cols());
    out += &cx.note(
        "time_% = share of this table's total; med = median (mean of the middle two for an even count); stddev over n − 1",
    );
    out += &batched_note(cx, &rows);
    out
}

/// Where records hold batched copies (`copyCount` > 1, schema 3.28.1+:
/// `cudaMemcpyBatchAsync`): how many copies each such row's records hold,
/// its count and times being the records'.
fn batched_note(cx: &Context, rows: &[StatRow]) -> String {
    let batched: Vec<String> = rows
        .iter()
        .filter(|r| r.batched())
        .map(|r| {
            format!(
                "{}: {} records hold {} copies",
                r.label(&cx.profile.strings),
                r.count,
                r.copies
            )
        })
        .collect();
    if batched.is_empty() {
        return String::new();
    }
    cx.note(&format!(
        "batched copies (copyCount, cudaMemcpyBatchAsync): count and times are per record; {}",
        batched.join("; ")
    ))
}
