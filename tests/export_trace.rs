//! `rankline export`: the trace parses (plain and gzipped), every event
//! has the fields the Chrome Trace Event Format requires, its counts equal
//! SQL's over the raw tables (in a window too), its flows are the launch
//! links by (process, correlation id), and across nodes its times are on
//! the aligned clock: an instance's kernels start as far apart as its
//! start skew says.

mod common;

use common::trace::export;
use common::*;
use rusqlite::Connection;
use serde_json::Value;
use std::collections::BTreeMap;

fn count(db: &Connection, sql: &str, params: &[i64]) -> usize {
    db.query_row(sql, rusqlite::params_from_iter(params), |r| {
        r.get::<_, i64>(0)
    })
    .unwrap() as usize
}

fn by_cat(v: &Value) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for e in v["traceEvents"].as_array().unwrap() {
        if e["ph"] == "X" {
            *m.entry(e["cat"].as_str().unwrap().to_string()).or_default() += 1;
        }
    }
    m
}

/// Every event has what the format needs for its phase.
fn assert_well_formed(v: &Value) {
    for e in v["traceEvents"].as_array().unwrap() {
        let ph = e["ph"].as_str().expect("ph");
        assert!(
            e["name"].is_string() && e["pid"].is_u64() && e["tid"].is_u64(),
            "{e}"
        );
        match ph {
            "M" => assert!(
                e["args"]["name"].is_string() || e["args"]["sort_index"].is_u64(),
                "{e}"
            ),
            "X" => {
                assert!(
                    e["ts"].is_number() && e["dur"].as_f64().unwrap() >= 0.0,
                    "{e}"
                );
                let cat = e["cat"].as_str().unwrap();
                assert!(
                    [
                        "kernel", "memcpy", "memset", "cuda_api", "nvtx", "osrt", "off_cpu"
                    ]
                    .contains(&cat),
                    "{e}"
                );
            }
            "s" | "f" => assert!(e["id"].is_u64() && e["ts"].is_number() && e["cat"] == "launch"),
            // CPU samples are the thread's; markers are global.
            "i" if e["cat"] == "cpu_sample" => {
                assert!(e["ts"].is_number() && e["s"] == "t" && e["args"]["stack"].is_array())
            }
            "i" => assert!(e["ts"].is_number() && e["s"] == "g"),
            other => panic!("phase {other}: {e}"),
        }
    }
}

#[test]
fn the_trace_of_one_file_counts_what_sql_counts_and_links_launches_per_process() {
    let f = root().join("fixtures/megatron_tp8.sqlite");
    let d = temp_dir("export_trace_one");
    let (o, v) = export(&[&f], &d.join("t.json.gz"), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("open it in https://ui.perfetto.dev"),
        "{}",
        stdout(&o)
    );
    let v = v.unwrap();
    assert_well_formed(&v);
    let db = Connection::open(&f).unwrap();
    let cats = by_cat(&v);
    let kernels = count(&db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL", &[]);
    assert_eq!(cats["kernel"], kernels);
    assert_eq!(
        cats["memcpy"] + cats["memset"],
        count(
            &db,
            "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY) + (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET)",
            &[]
        )
    );
    assert_eq!(
        cats["cuda_api"],
        count(&db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME", &[])
    );
    assert_eq!(
        cats["nvtx"],
        count(
            &db,
            "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND \"end\" IS NOT NULL",
            &[]
        )
    );
    // One flow per launch link: a GPU row and the call of its process with
    // its correlation id (never the bare correlation-id join).
    let links = ["KERNEL", "MEMCPY", "MEMSET"]
        .iter()
        .map(|t| {
            count(
                &db,
                &format!(
                    "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_{t} g WHERE EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r \
                     WHERE r.correlationId = g.correlationId AND (r.globalTid >> 24) = (g.globalPid >> 24))"
                ),
                &[],
            )
        })
        .sum::<usize>();
    let events = v["traceEvents"].as_array().unwrap();
    let starts = events.iter().filter(|e| e["ph"] == "s").count();
    let ends = events.iter().filter(|e| e["ph"] == "f").count();
    assert_eq!((starts, ends), (links, links));
    // Matched kernels carry their instance; big events are markers.
    let matched = events
        .iter()
        .filter(|e| e["cat"] == "kernel" && e["args"]["group"].is_string())
        .count();
    assert!(matched > 1000, "{matched}");
    assert_eq!(events.iter().filter(|e| e["ph"] == "i").count(), 4);
}

#[test]
fn a_window_keeps_the_events_overlapping_it_found_by_search_and_max_events_refuses_before_writing()
{
    let f = root().join("fixtures/megatron_tp8.sqlite");
    let db = Connection::open(&f).unwrap();
    let (lo, hi) = kernel_span(&db);
    let (a, b) = (lo + (hi - lo) / 3, lo + (hi - lo) / 2);
    let secs = window_seconds;
    let d = temp_dir("export_trace_window");
    let (o, v) = export(&[&f], &d.join("w.json"), &["--window", &secs(a), &secs(b)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let want = count(
        &db,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start <= ?2 AND (\"end\" > ?1 OR start >= ?1)",
        &[a, b],
    );
    assert!(want > 100);
    let cats = by_cat(&v.unwrap());
    assert_eq!(cats["kernel"], want);
    let calls = count(
        &db,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE start <= ?2 AND (\"end\" > ?1 OR start >= ?1)",
        &[a, b],
    );
    assert!(calls > 100);
    assert_eq!(cats["cuda_api"], calls);
    let out = d.join("big.json");
    let (o, v) = export(&[&f], &out, &["--max-events", "10"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("over --max-events 10"), "{err}");
    assert!(
        v.is_none() && !out.exists(),
        "a refused trace leaves no file"
    );
}

/// Four nodes, four clocks: in the trace an instance's kernels start as
/// far apart as the skew report says (raw clocks would put them seconds
/// apart).
#[test]
fn across_nodes_the_trace_is_on_the_aligned_clock() {
    let dir = root().join("fixtures/multinode");
    let d = temp_dir("export_trace_nodes");
    let (o, v) = export(&[&dir], &d.join("m.json"), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = v.unwrap();
    assert_well_formed(&v);
    assert!(
        v["otherData"]["clock_alignment"]
            .as_str()
            .unwrap()
            .starts_with("collective ends"),
        "{}",
        v["otherData"]
    );
    let mut starts: BTreeMap<(String, u64), Vec<f64>> = BTreeMap::new();
    let mut skew: BTreeMap<(String, u64), f64> = BTreeMap::new();
    for e in v["traceEvents"].as_array().unwrap() {
        let a = &e["args"];
        if e["cat"] == "kernel" && a["group"].is_string() {
            let k = (
                a["group"].as_str().unwrap().to_string(),
                a["instance"].as_u64().unwrap(),
            );
            starts
                .entry(k.clone())
                .or_default()
                .push(e["ts"].as_f64().unwrap());
            skew.insert(k, a["start_skew_ms"].as_f64().unwrap());
        }
    }
    assert!(starts.len() > 40);
    for (k, ts) in &starts {
        let spread_ms = (ts.iter().cloned().fold(f64::MIN, f64::max)
            - ts.iter().cloned().fold(f64::MAX, f64::min))
            / 1e3;
        assert!(
            (spread_ms - skew[k]).abs() < 1e-5,
            "{k:?}: {spread_ms} vs {}",
            skew[k]
        );
    }
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn every_real_export_becomes_a_well_formed_trace() {
    let d = temp_dir("export_trace_real");
    for f in sqlite_files(&real_profiles()) {
        let out = d.join(format!("{}.json", f.file_stem().unwrap().to_string_lossy()));
        let (o, v) = export(&[&f], &out, &[]);
        assert!(o.status.success(), "{}: {}", f.display(), stderr(&o));
        assert_well_formed(&v.unwrap());
    }
}

/// `--ranks` keeps those ranks' files' GPU events and CPU calls (SQL's
/// counts over exactly those files), `--devices` the same by name, and
/// `--groups` the streams carrying a group on every device, its big
/// events and no other group's; what names nothing is one line, exit 2.
#[test]
fn ranks_devices_and_groups_keep_their_tracks() {
    let dir = root().join("fixtures/per_rank");
    let d = temp_dir("export_trace_filters");
    let sql_sum = |files: &[&str], sql: &str| -> usize {
        files
            .iter()
            .map(|f| count(&Connection::open(dir.join(f)).unwrap(), sql, &[]))
            .sum()
    };
    let kernels = "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL";
    let calls = "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME";
    let kept = ["rank0.sqlite", "rank1.sqlite", "rank3.sqlite"];
    for filter in [
        ["--ranks", "0-1,3"],
        ["--devices", "gpu07:0,gpu07:1,gpu08:1"],
    ] {
        let (o, v) = export(&[&dir], &d.join("r.json"), &filter);
        assert!(o.status.success(), "{filter:?}: {}", stderr(&o));
        let v = v.unwrap();
        assert_well_formed(&v);
        let cats = by_cat(&v);
        assert_eq!(cats["kernel"], sql_sum(&kept, kernels), "{filter:?}");
        assert_eq!(cats["cuda_api"], sql_sum(&kept, calls), "{filter:?}");
        let names: Vec<&str> = v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["name"] == "process_name")
            .filter_map(|e| e["args"]["name"].as_str())
            .filter(|n| n.contains(" GPU "))
            .collect();
        // host, CUDA device, rank and model: never a bare number
        let h100 = "NVIDIA H100 80GB HBM3";
        assert_eq!(
            names,
            [
                format!("gpu07 GPU 0 · rank 0 · {h100}"),
                format!("gpu07 GPU 1 · rank 1 · {h100}"),
                format!("gpu08 GPU 1 · rank 3 · {h100}")
            ]
        );
    }
    let (o, full) = export(&[&dir], &d.join("all.json"), &[]);
    assert!(o.status.success());
    let full = full.unwrap();
    // The late rank is the rank; the device is named beside it.
    let late = full["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["args"]["late_rank"].is_u64())
        .expect("a collective with its late rank");
    let rank = late["args"]["late_rank"].as_u64().unwrap();
    let device = late["args"]["late_device"].as_str().unwrap();
    assert!(device.ends_with(&format!(" r{rank}")), "{late}");
    let group_of = |e: &Value| e["args"]["group"].as_str().map(String::from);
    let events = |v: &Value| v["traceEvents"].as_array().unwrap().clone();
    let key = events(&full)
        .iter()
        .find_map(group_of)
        .expect("a matched kernel");
    let (o, g) = export(&[&dir], &d.join("g.json"), &["--groups", &key]);
    assert!(o.status.success(), "{}", stderr(&o));
    let g = g.unwrap();
    let of_group = |v: &Value| {
        events(v)
            .iter()
            .filter(|e| e["cat"] == "kernel" && group_of(e).as_deref() == Some(&key))
            .count()
    };
    assert!(of_group(&full) > 0);
    assert_eq!(of_group(&g), of_group(&full), "every kernel of {key}");
    assert!(
        events(&g).iter().filter_map(group_of).all(|k| k == key),
        "no other group's kernels"
    );
    assert!(
        events(&g)
            .iter()
            .filter(|e| e["cat"] == "big_event")
            .all(|e| e["name"].as_str().unwrap().contains(&format!(" {key}:"))),
    );
    for (args, says) in [
        (["--ranks", "7"], "--ranks 7: no device has that rank"),
        (["--ranks", "x"], "--ranks x: not a rank"),
        (["--devices", "nope"], "--devices nope: no such device"),
        (
            ["--groups", "nope"],
            "--groups nope: no such collective group",
        ),
    ] {
        let out = d.join("refused.json");
        let (o, v) = export(&[&dir], &out, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert!(v.is_none() && !out.exists());
    }
}

/// A trace refused (or failing) leaves the file that was there before.
#[test]
fn a_refused_trace_leaves_the_old_file() {
    let f = root().join("fixtures/megatron_tp8.sqlite");
    let d = temp_dir("export_trace_keep_old");
    let out = d.join("old.json");
    std::fs::write(&out, "before").unwrap();
    let o = rankline(&[
        "export",
        "--no-cache",
        "--max-events",
        "10",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "before");
    assert_eq!(
        std::fs::read_dir(&d).unwrap().count(),
        1,
        "no temp file left"
    );
}
