//! A partial export (`nsys export --tables` leaving the runtime table out):
//! kernels without the calls that launched them. Said once, and nothing
//! that needs a launch call is claimed: the four late ranks of the
//! Megatron fixture were late on the CPU, and without the runtime table
//! that cannot be seen, so no part of their delay may be called the GPU's.

mod common;
use common::*;
use rusqlite::Connection;

/// The Megatron fixture without its runtime table, in a fresh directory.
fn without_runtime(test: &str) -> std::path::PathBuf {
    let f = copy_fixture(test, "megatron_tp8.sqlite");
    Connection::open(&f)
        .unwrap()
        .execute_batch("DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME")
        .unwrap();
    f
}

#[test]
fn a_missing_runtime_table_leaves_the_delay_unsplit_and_is_said_once() {
    let f = without_runtime("partial_export_runtime");
    let path = f.display().to_string();

    let why = json(&["report", "why", "--format", "json", "--no-cache", &path]);
    let events = why["why"].as_array().unwrap();
    assert_eq!(events.len(), 4, "{why:#}");
    for e in events {
        assert!(e["lateness_ms"].as_f64().unwrap() > 20.0, "{e:#}");
        assert!(e["cpu_ms"].is_null() && e["gpu_ms"].is_null(), "{e:#}");
        assert!(e["gpu_chain"].as_array().unwrap().is_empty(), "{e:#}");
        let missing: Vec<&str> = e["missing"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect();
        assert!(missing.contains(&"runtime") && missing.contains(&"launch-call"));
    }
    let said = text(&["report", "why", "--no-cache", &path]);
    assert_eq!(
        said.matches("CPU and GPU parts unknown").count(),
        4,
        "{said}"
    );
    assert!(
        !said.contains("launched before the earliest peer"),
        "{said}"
    );

    let launch = json(&["report", "launch", "--format", "json", "--no-cache", &path]);
    let verdicts: Vec<&str> = launch["late_instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["unknown"; 4], "{launch:#}");

    let summary = text(&["report", "summary", "--no-cache", &path]);
    let flat = summary.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(
        flat.matches("CUPTI_ACTIVITY_KIND_RUNTIME not exported")
            .count(),
        1,
        "{summary}"
    );
    assert!(
        flat.contains("megatron_tp8.sqlite: kernels without the runtime table"),
        "{summary}"
    );
}

/// The whole export says nothing of the kind.
#[test]
fn a_whole_export_has_no_partial_export_warning() {
    let f = root().join("fixtures/megatron_tp8.sqlite");
    let summary = text(&["report", "summary", "--no-cache", &f.display().to_string()]);
    assert!(!summary.contains("runtime table"), "{summary}");
}
