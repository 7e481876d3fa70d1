//! `report` text: fits 100 columns unless `--wide`, units in every numeric
//! header, host and path shown as the file has them, and `skew --instances`.

mod common;
use common::*;
use rusqlite::Connection;
use serde_json::Value;
use unicode_width::UnicodeWidthStr;

/// Lines of `out` wider than 100 display columns.
pub fn too_wide(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| UnicodeWidthStr::width(*l) > 100)
        .collect()
}

/// Cells of a table line: columns are two or more spaces apart.
fn cells(line: &str) -> Vec<&str> {
    line.trim()
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

/// Each table header of `out` whose column holds decimals in every row,
/// with that column's name: a header line (lower-case names) followed by
/// rows of as many cells.
fn decimal_columns(out: &str) -> Vec<String> {
    let lines: Vec<&str> = out.lines().collect();
    let mut found = Vec::new();
    for (i, h) in lines.iter().enumerate() {
        let head = cells(h);
        let is_header = head.len() >= 2
            && head.iter().all(|c| {
                c.chars()
                    .all(|ch| ch.is_ascii_lowercase() || "_%→0-9".contains(ch))
            });
        if !is_header {
            continue;
        }
        let rows: Vec<Vec<&str>> = lines[i + 1..]
            .iter()
            .map(|l| cells(l))
            .take_while(|r| r.len() == head.len())
            .collect();
        if rows.is_empty() {
            continue;
        }
        for (c, name) in head.iter().enumerate() {
            let decimal = rows
                .iter()
                .all(|r| r[c] == "-" || (r[c].contains('.') && r[c].parse::<f64>().is_ok()));
            if decimal && rows.iter().any(|r| r[c] != "-") {
                found.push(name.to_string());
            }
        }
    }
    found
}

#[test]
fn every_fixture_report_fits_100_columns() {
    for f in sqlite_files(&root().join("fixtures")) {
        let path = f.to_str().unwrap();
        let out = text(&["report", "all", path, "--no-cache"]);
        assert_eq!(too_wide(&out), Vec::<&str>::new(), "{path}");
        let out = text(&["report", "skew", path, "--no-cache", "--instances"]);
        assert_eq!(too_wide(&out), Vec::<&str>::new(), "{path}");
    }
    // Two hosts: device labels are host:id.
    let out = text(&[
        "report",
        "all",
        "fixtures/two_node_a.sqlite",
        "fixtures/two_node_b.sqlite",
        "--no-cache",
    ]);
    assert_eq!(too_wide(&out), Vec::<&str>::new());
}

#[test]
fn wide_prints_a_long_kernel_name_whole() {
    let gemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas";
    let args = [
        "report",
        "launch",
        "fixtures/megatron_tp8.sqlite",
        "--no-cache",
    ];
    let short = text(&args);
    assert!(!short.contains(gemm), "{short}");
    assert!(short.contains("sm90_xmma_gemm_bf16bf16_"), "{short}");
    assert!(short.contains('…'), "{short}");
    let wide = text(&[&args[..], &["--wide"]].concat());
    assert!(wide.contains(gemm), "{wide}");
    assert!(
        !too_wide(&wide).is_empty(),
        "the whole name is wider than 100"
    );
}

#[test]
fn every_numeric_header_carries_its_unit() {
    for f in sqlite_files(&root().join("fixtures")) {
        let path = f.to_str().unwrap();
        let out = text(&["report", "all", path, "--no-cache"]);
        let cols = decimal_columns(&out);
        assert!(
            cols.len() > 10,
            "{path}: the check found no tables: {cols:?}"
        );
        for c in &cols {
            assert!(
                c.ends_with("_ms") || c.ends_with("_s") || c.ends_with("_%"),
                "{path}: column {c} holds times or shares without a unit"
            );
        }
    }
    let out = text(&[
        "report",
        "skew",
        "fixtures/megatron_tp8.sqlite",
        "--no-cache",
    ]);
    for h in ["start_p50_ms", "nccl_ms", "excess_%"] {
        assert!(out.contains(h), "{h}: {out}");
    }
}

#[test]
fn the_missing_device_is_named_as_a_device() {
    let out = text(&[
        "report",
        "skew",
        "fixtures/megatron_tp8.sqlite",
        "--no-cache",
    ]);
    assert!(
        out.contains("counts cover only the recorded devices: D0 had a CUDA context"),
        "{out}"
    );
}

#[test]
fn host_is_a_dash_without_a_host_name_and_paths_stay_as_given() {
    let dir = temp_dir("report_text_no_host");
    let copy = dir.join("no_host.sqlite");
    std::fs::copy(root().join("fixtures/megatron_tp8.sqlite"), &copy).unwrap();
    Connection::open(&copy)
        .unwrap()
        .execute(
            "DELETE FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'",
            [],
        )
        .unwrap();
    // Relative to the working directory (the project root), as typed.
    let given = "target/test-tmp/report_text_no_host/no_host.sqlite";
    let out = text(&["report", "summary", given, "--no-cache"]);
    let row = out
        .lines()
        .find(|l| l.contains("no_host.sqlite"))
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(cells(row)[0], given, "{out}");
    assert_eq!(cells(row).last(), Some(&"-"), "{out}");
    let v = json(&["report", "summary", given, "--no-cache", "--format", "json"]);
    assert_eq!(v["files"][0]["host"], Value::Null);
    assert_eq!(v["files"][0]["path"], given);

    // From the cache, a file keeps the name it is given now, not the one
    // it was cached under.
    let cache = dir.join("cache");
    let cache = cache.to_str().unwrap();
    text(&["report", "summary", given, "--cache-dir", cache]);
    let again = format!("./{given}");
    let out = text(&["report", "summary", &again, "--cache-dir", cache]);
    assert!(out.contains(&format!("  {again}  ")), "{out}");
    assert!(!out.contains(&format!("  {given}  ")), "{out}");
}

#[test]
fn instances_lists_every_instance_with_the_truths_figures() {
    let truth: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("fixtures/megatron_tp8.truth.json")).unwrap(),
    )
    .unwrap();
    let g_truth = &truth["skew"]["groups"][0];
    assert_eq!(g_truth["key"], "s20");
    let path = "fixtures/megatron_tp8.sqlite";

    // Without the option, only the count.
    let v = json(&["report", "skew", path, "--no-cache", "--format", "json"]);
    assert_eq!(v["groups"][0]["instances"], 225);
    assert!(v["groups"][0].get("instance_list").is_none());
    let out = text(&["report", "skew", path, "--no-cache"]);
    assert!(!out.contains("Every instance"), "{out}");

    let v = json(&[
        "report",
        "skew",
        path,
        "--no-cache",
        "--format",
        "json",
        "--instances",
    ]);
    let g = &v["groups"][0];
    assert_eq!(g["instances"], 225);
    let list = g["instance_list"].as_array().unwrap();
    let numbers: Vec<u64> = list
        .iter()
        .map(|i| i["instance"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, (1..=225).collect::<Vec<u64>>());
    let near = |a: &Value, b: &Value| (a.as_f64().unwrap() - b.as_f64().unwrap()).abs() < 1e-6;
    // Each big event of the truth, figure by figure.
    let big: Vec<&Value> = list.iter().filter(|i| i["big"] == true).collect();
    let truth_big = g_truth["big_events"].as_array().unwrap();
    assert_eq!(big.len(), truth_big.len());
    for (got, want) in big.iter().zip(truth_big) {
        for k in ["instance", "op", "start_ns", "late_device"] {
            assert_eq!(got[k], want[k], "{k}: {got} vs {want}");
        }
        for k in ["start_skew_ms", "late_duration_ms", "max_duration_ms"] {
            assert!(near(&got[k], &want[k]), "{k}: {got} vs {want}");
        }
    }
    // Over every instance: the group's totals and counts.
    let sum = |k: &str| list.iter().map(|i| i[k].as_f64().unwrap()).sum::<f64>();
    assert!((sum("excess_ms") - g_truth["excess_ms"].as_f64().unwrap()).abs() < 1e-3);
    let max_skew = list
        .iter()
        .map(|i| i["start_skew_ms"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!((max_skew - g_truth["start_skew_ms"]["max"].as_f64().unwrap()).abs() < 1e-6);
    for (dev, count) in g_truth["late_counts"].as_object().unwrap() {
        let got = list
            .iter()
            .filter(|i| {
                i["late_device"].as_u64().map(|d| d.to_string()).as_deref() == Some(dev.as_str())
            })
            .count();
        assert_eq!(
            Some(got as u64),
            count.as_u64(),
            "late count of device {dev}"
        );
    }

    // Text: one row per instance, the same figures.
    let out = text(&["report", "skew", path, "--no-cache", "--instances"]);
    let table: Vec<Vec<&str>> = out
        .split("Every instance of s20 (225)")
        .nth(1)
        .unwrap_or_else(|| panic!("{out}"))
        .lines()
        .map(cells)
        .skip_while(|r| r.first() != Some(&"instance"))
        .skip(1)
        .take_while(|r| r.len() == 9)
        .collect();
    assert_eq!(table.len(), 225, "{out}");
    for (row, i) in table.iter().zip(list) {
        assert_eq!(row[0], i["instance"].to_string());
        assert_eq!(
            row[3],
            format!("{:.3}", i["start_skew_ms"].as_f64().unwrap())
        );
        assert_eq!(row[4], i["late_device"].to_string());
        assert_eq!(row[8] == "yes", i["big"] == true);
    }
}

/// No false doubt: one file, every instance present, ends within 0.04 ms —
/// nothing says a pairing is a guess, and no block lists which instances
/// each rank captured (they all captured all).
#[test]
fn a_complete_one_file_capture_raises_no_doubt_about_its_pairing() {
    let text = text(&[
        "report",
        "skew",
        "--no-cache",
        "fixtures/megatron_tp8.sqlite",
    ]);
    for doubt in [
        "is a guess",
        "not confirmed",
        "Captured instances",
        "captures cover different",
    ] {
        assert!(!text.contains(doubt), "{doubt:?} in:\n{text}");
    }
}
