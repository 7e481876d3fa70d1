//! `make-fixtures scale-nodes` writes the same bytes every time, and a second run
//! into the same directory replaces the first (no stale node files are left).

mod common;
use common::*;

use serde_json::Value;

#[test]
fn scale_nodes_is_deterministic_and_replaces_an_earlier_run() {
    let run = |dir: &std::path::Path, files: &str| {
        let out = dir.to_str().expect("UTF-8 temp path");
        let args = [
            "scale-nodes",
            "--files",
            files,
            "--gpus",
            "2",
            "--kernels",
            "2k",
            "--out",
            out,
        ];
        make_fixtures(&args, &[]);
    };
    let base = temp_dir("scale_nodes");
    let (a, b) = (base.join("a/nodes"), base.join("b/nodes"));
    run(&a, "4");
    run(&a, "3");
    run(&b, "3");
    assert_eq!(
        names(&a),
        ["node00.sqlite", "node01.sqlite", "node02.sqlite"]
    );
    assert_eq!(names(&a), names(&b));
    for n in names(&a) {
        assert!(
            std::fs::read(a.join(&n)).unwrap() == std::fs::read(b.join(&n)).unwrap(),
            "{n}"
        );
    }
    let t: Value =
        serde_json::from_str(&std::fs::read_to_string(base.join("a/nodes.truth.json")).unwrap())
            .unwrap();
    assert_eq!(t["files"].as_array().unwrap().len(), 3);
    assert_eq!(t["files"][0]["true_offset_ns"], 0.0);
}
