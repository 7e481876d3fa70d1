//! `report stragglers`: the lateness matrix agrees with `report skew
//! --instances` and the fixture's ground truth; CSV has one row per
//! (instance, rank); text fits 100 columns.

mod common;

use common::*;
use serde_json::Value;

const MEGATRON: &str = "fixtures/megatron_tp8.sqlite";

fn near(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

fn matrix(g: &Value) -> Vec<Vec<f64>> {
    g["lateness_ms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            row.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        })
        .collect()
}

#[test]
fn the_matrix_agrees_with_report_skew_instances_and_the_truth() {
    let truth: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("fixtures/megatron_tp8.truth.json")).unwrap(),
    )
    .unwrap();
    let s = json(&[
        "report",
        "stragglers",
        MEGATRON,
        "--no-cache",
        "--format",
        "json",
    ]);
    let skew = json(&[
        "report",
        "skew",
        MEGATRON,
        "--no-cache",
        "--format",
        "json",
        "--instances",
    ]);
    let groups = s["groups"].as_array().unwrap();
    let skew_groups = skew["groups"].as_array().unwrap();
    assert_eq!(groups.len(), skew_groups.len());
    for (g, sg) in groups.iter().zip(skew_groups) {
        assert_eq!(g["group"], sg["key"]);
        assert_eq!(g["ranks"], sg["devices"]);
        let ranks: Vec<Value> = g["ranks"].as_array().unwrap().clone();
        let m = matrix(g);
        assert_eq!(m.len(), ranks.len());
        let list = sg["instance_list"].as_array().unwrap();
        let numbers: Vec<&Value> = list.iter().map(|i| &i["instance"]).collect();
        assert_eq!(
            g["instances"]
                .as_array()
                .unwrap()
                .iter()
                .collect::<Vec<_>>(),
            numbers
        );
        for (c, inst) in list.iter().enumerate() {
            let col: Vec<f64> = m.iter().map(|row| row[c]).collect();
            // The earliest rank is 0; the latest is the start skew, and it
            // is the late device (ties: the first).
            let max = col.iter().copied().fold(f64::MIN, f64::max);
            assert!(near(max, inst["start_skew_ms"].as_f64().unwrap()), "{inst}");
            let late = col.iter().position(|&x| x == max).unwrap();
            assert_eq!(ranks[late], inst["late_device"], "{inst}");
            let early = col.iter().position(|&x| x == 0.0).unwrap();
            assert_eq!(ranks[early], inst["early_device"], "{inst}");
        }
    }
    // The truth: big events' late ranks and skews, and mean lateness over
    // the instances that are not big.
    let g = &groups[0];
    let t = &truth["skew"]["groups"][0];
    assert_eq!(g["group"], t["key"]);
    let m = matrix(g);
    let ranks = g["ranks"].as_array().unwrap();
    let instances = g["instances"].as_array().unwrap();
    let big: Vec<usize> = t["big_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let c = instances.iter().position(|k| *k == e["instance"]).unwrap();
            let r = ranks.iter().position(|d| *d == e["late_device"]).unwrap();
            assert!(near(m[r][c], e["start_skew_ms"].as_f64().unwrap()), "{e}");
            c
        })
        .collect();
    assert_eq!(big.len(), 4);
    for (r, d) in ranks.iter().enumerate() {
        let small: Vec<f64> = (0..instances.len())
            .filter(|c| !big.contains(c))
            .map(|c| m[r][c])
            .collect();
        let mean = small.iter().sum::<f64>() / small.len() as f64;
        let want = t["mean_lateness_ms_excluding_big"][d.to_string()]
            .as_f64()
            .unwrap();
        assert!((mean - want).abs() < 1e-6, "device {d}: {mean} vs {want}");
    }
}

#[test]
fn csv_has_one_row_per_instance_and_rank_with_the_json_values() {
    let o = rankline(&[
        "report",
        "stragglers",
        MEGATRON,
        "--no-cache",
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("group,instance,rank,lateness_ms,clock_uncertainty_ms")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let v = json(&[
        "report",
        "stragglers",
        MEGATRON,
        "--no-cache",
        "--format",
        "json",
    ]);
    let groups = v["groups"].as_array().unwrap();
    let want: usize = groups
        .iter()
        .map(|g| g["instances"].as_array().unwrap().len() * g["ranks"].as_array().unwrap().len())
        .sum();
    assert_eq!(rows.len(), want);
    // s20: 225 instances × 7 ranks, in (instance, rank) order.
    let s20: Vec<&Vec<&str>> = rows.iter().filter(|r| r[0] == "s20").collect();
    assert_eq!(s20.len(), 225 * 7);
    let m = matrix(&groups[0]);
    for (i, r) in s20.iter().enumerate() {
        let (c, rank) = (i / 7, i % 7);
        assert_eq!(r[1], (c + 1).to_string());
        assert_eq!(r[2], groups[0]["ranks"][rank].to_string());
        assert!(near(r[3].parse().unwrap(), m[rank][c]), "{r:?}");
        assert_eq!(r[4], "0", "one clock: {r:?}");
    }
}

#[test]
fn text_is_a_per_rank_summary_within_100_columns() {
    let o = rankline(&["report", "stragglers", MEGATRON, "--no-cache"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.lines().all(|l| l.chars().count() <= 100), "{out}");
    assert!(out.contains("s20: 7 ranks × 225 instances"), "{out}");
    // Latest first: in s20, device 3 (the big events' 41 ms straggler and
    // most often last) heads the list.
    let s20 = &out[out.find("s20:").unwrap()..];
    let first_row = s20.lines().nth(2).unwrap();
    let cells: Vec<&str> = first_row.split_whitespace().collect();
    assert_eq!(cells, ["3", "0.951", "41.163", "40"], "{s20}");
    // `report all` leaves the matrix out.
    let all = stdout(&rankline(&["report", "all", MEGATRON, "--no-cache"]));
    assert!(!all.contains("Stragglers"), "{all}");
}

/// The clock line travels with the figures: text, JSON and CSV say how far
/// the clocks between the ranks' hosts can be trusted (fixtures/per_rank,
/// 2 hosts, `--align utc`: the second host's UTC stamp errs by 6.2–6.4 ms
/// over the capture, and the residual p90, 6.394 ms, says so).
#[test]
fn stragglers_carry_the_clock_line_in_every_format() {
    let dir = root().join("fixtures/per_rank");
    let d = dir.to_str().unwrap();
    let args = |f: &'static str| {
        [
            "report",
            "stragglers",
            "--no-cache",
            "--align",
            "utc",
            "--format",
            f,
            d,
        ]
    };
    let v = json(&args("json"));
    let g = &v["groups"][0];
    let notes = g["notes"].to_string();
    assert!(
        notes.contains("clocks aligned by UTC only (residual p90 6.394 ms"),
        "{notes}"
    );
    // every rank's place is confirmed by the ops: the ends need not
    assert!(!notes.contains("could not confirm"), "{notes}");
    let err = g["clock_uncertainty_ms"].as_f64().unwrap();
    assert!((err - 6.394).abs() < 0.001, "{err}");
    // within the UTC error the generator put on the second host's clock
    let truth: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("fixtures/per_rank.truth.json")).unwrap(),
    )
    .unwrap();
    let utc_error = truth["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["utc_only_error_at_last_event_ms"].as_f64().unwrap().abs())
        .fold(0.0, f64::max);
    assert!((err - utc_error).abs() < 0.1, "{err} vs {utc_error}");
    let csv = text(&args("csv"));
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("group,instance,rank,lateness_ms,clock_uncertainty_ms")
    );
    let last: f64 = lines
        .next()
        .unwrap()
        .rsplit(',')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(last, err);
    let out = text(&args("text")).replace("\n    ", " ");
    assert!(
        out.contains("clocks aligned by UTC only (residual p90 6.394 ms"),
        "{out}"
    );
    // one clock: no error to carry
    let one = json(&[
        "report",
        "stragglers",
        "--no-cache",
        "--format",
        "json",
        MEGATRON,
    ]);
    assert_eq!(one["groups"][0]["clock_uncertainty_ms"].as_f64(), Some(0.0));
}

/// Ends that spread while every rank's place is confirmed: the pairing
/// holds, and the note says by how much the ends spread, not that the
/// pairing is in doubt.
#[test]
fn confirmed_pairings_say_how_far_the_ends_spread() {
    let dir = root().join("fixtures/per_rank");
    let v = json(&[
        "report",
        "skew",
        "--no-cache",
        "--align",
        "utc",
        "--format",
        "json",
        dir.to_str().unwrap(),
    ]);
    let g = &v["groups"][0];
    let notes = g["notes"].to_string();
    let p90 = g["end_skew_ms"]["p90"].as_f64().unwrap();
    assert!(p90 >= 1.0, "{p90}");
    assert!(
        notes.contains(&format!("ends spread by {p90:.3} ms (p90 end skew)")),
        "{notes}"
    );
    assert!(!notes.contains("the pairing is not confirmed"), "{notes}");
}
