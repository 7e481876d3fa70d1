//! `make-fixtures scenario-scale` writes the same bytes every time, one file per node with
//! its truth beside the directory, and a second run into the same directory replaces the
//! first (no stale node files are left).

mod common;
use common::*;

use serde_json::Value;

#[test]
fn scenario_scale_is_deterministic_and_replaces_an_earlier_run() {
    let run = |dir: &std::path::Path, nodes: &str, dp: &str| {
        let out = dir.to_str().expect("UTF-8 temp path");
        let args = [
            "scenario-scale",
            "--nodes",
            nodes,
            "--gpus",
            "2",
            "--tp",
            "2",
            "--pp",
            "2",
            "--dp",
            dp,
            "--steps",
            "2",
            "--out",
            out,
        ];
        make_fixtures(&args, &[]);
    };
    let base = temp_dir("scenario_scale");
    let (a, b) = (base.join("a/job"), base.join("b/job"));
    run(&a, "4", "2");
    run(&a, "2", "1");
    run(&b, "2", "1");
    assert_eq!(names(&a), ["node0.sqlite", "node1.sqlite"]);
    for n in names(&a) {
        assert!(
            std::fs::read(a.join(&n)).unwrap() == std::fs::read(b.join(&n)).unwrap(),
            "{n}"
        );
    }
    let text =
        |d: &std::path::Path| std::fs::read_to_string(d.with_extension("truth.json")).unwrap();
    let t: Value = serde_json::from_str(&text(&a)).unwrap();
    assert_eq!(t["files"].as_array().unwrap().len(), 2);
    assert_eq!(t["hosts"][0]["offset_ns_to_reference"], 0);
    assert_eq!(t["layout"]["tp"], 2);
    // the truth names its own files: the two runs differ only there
    assert_eq!(text(&a).replace("/a/job/", "/b/job/"), text(&b));
    assert!(!t["delays"].as_array().unwrap().is_empty());
    assert_eq!(t["node_events"].as_array().unwrap().len(), 1);
}
