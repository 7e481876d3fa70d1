//! `rankline export --critical-path`: each step's critical path is a track
//! of its own, its segments the ones `report steps` gives (same times, same
//! kinds and devices), inside a window only those overlapping it; without
//! the flag there is no such track.

mod common;

use common::trace::export;
use common::*;
use serde_json::Value;

const JOB: &str = "fixtures/jobs/3d_dedicated.sqlite";

fn path_events(v: &Value) -> Vec<&Value> {
    v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "critical_path")
        .collect()
}

/// The report's segments of no time are not drawn.
fn reported() -> Vec<(u64, Value)> {
    let r = json(&["report", "steps", "--no-cache", "--format", "json", JOB]);
    r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| {
            let step = s["step"].as_u64().unwrap();
            s["critical_path"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|g| g["end_ns"].as_i64() > g["start_ns"].as_i64())
                .map(move |g| (step, g.clone()))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn the_path_track_is_the_reports_path() {
    let dir = temp_dir("export_critical_path");
    let out = dir.join("t.json");
    let root = root();
    let (o, v) = export(&[&root.join(JOB)], &out, &["--critical-path"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("critical path segments"),
        "{}",
        stdout(&o)
    );
    let v = v.unwrap();
    let got = path_events(&v);
    let want = reported();
    assert_eq!(got.len(), want.len());
    assert!(want.len() > 10, "three steps' paths");
    for (e, (step, g)) in got.iter().zip(&want) {
        assert_eq!(e["args"]["step"].as_u64(), Some(*step));
        assert_eq!(e["args"]["kind"], g["kind"]);
        let start = g["start_ns"].as_i64().unwrap() as f64 / 1e3;
        let dur = (g["end_ns"].as_i64().unwrap() - g["start_ns"].as_i64().unwrap()) as f64 / 1e3;
        assert!((e["ts"].as_f64().unwrap() - start).abs() < 1e-3, "{e} {g}");
        assert!((e["dur"].as_f64().unwrap() - dur).abs() < 1e-3, "{e} {g}");
        // One track, in its own process.
        assert_eq!(e["tid"], 1);
        assert_eq!(e["pid"], got[0]["pid"]);
    }
    // The planted stall is on the path, on its rank.
    let stall = got
        .iter()
        .find(|e| e["name"] == "os_wait pthread_cond_wait")
        .expect("the stall on the path");
    assert_eq!(stall["args"]["step"], 2);
    assert!(
        stall["args"]["device"].as_str().unwrap().contains("GPU 3"),
        "{stall}"
    );
    // In a window: the segments overlapping it, and fewer.
    let w0 = stall["ts"].as_f64().unwrap() / 1e6;
    let w1 = w0 + stall["dur"].as_f64().unwrap() / 1e6;
    let win = dir.join("w.json");
    let (o, v) = export(
        &[&root.join(JOB)],
        &win,
        &[
            "--critical-path",
            "--window",
            &format!("{w0}"),
            &format!("{w1}"),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = v.unwrap();
    let inside = path_events(&v);
    assert!(
        !inside.is_empty() && inside.len() < got.len(),
        "{}",
        inside.len()
    );
    assert!(
        inside
            .iter()
            .any(|e| e["name"] == "os_wait pthread_cond_wait")
    );
    // Without the flag: no path.
    let plain = dir.join("p.json");
    let (o, v) = export(&[&root.join(JOB)], &plain, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(path_events(&v.unwrap()).is_empty());
}

#[test]
fn without_steps_it_says_there_is_no_path() {
    let dir = temp_dir("export_critical_path_none");
    let out = dir.join("t.json");
    let (o, v) = export(
        &[&root().join("fixtures/why.sqlite")],
        &out,
        &["--critical-path"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("no step ranges"), "{}", stderr(&o));
    assert!(path_events(&v.unwrap()).is_empty());
}
