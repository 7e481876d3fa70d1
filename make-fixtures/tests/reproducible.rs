//! The committed fixtures are exactly what the generator writes: anyone can
//! regenerate them, and nobody can edit one by hand unnoticed.

mod common;
use common::*;

use std::path::Path;

/// Every file under `dir`, as paths relative to it (`multinode/node0.sqlite`), sorted.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = vec![];
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap();
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn generator_reproduces_committed_fixtures_byte_for_byte() {
    let out = temp_dir("regen");
    make_fixtures(&[], &[("MAKE_FIXTURES_ROOT", &out)]);
    let committed = root().join("fixtures");
    let names = files_under(&out.join("fixtures"));
    assert!(names.len() >= 11, "{names:?}");
    for multi in [
        "multinode/node3.sqlite",
        "per_rank/rank3.sqlite",
        "ends_disagree/node1.sqlite",
        "multinode.truth.json",
        "per_rank.truth.json",
        "ends_disagree.truth.json",
        "diff/no_big_skew.sqlite",
        "diff/slow_gemm.sqlite",
        "diff/fewer_devices.sqlite",
        "diff/no_big_skew.truth.json",
        "diff/slow_gemm.truth.json",
        "diff/fewer_devices.truth.json",
        "staggered/rank7.sqlite",
        "hang/node1.sqlite",
        "crash/rank3.sqlite",
        "desync/node1.sqlite",
        "staggered.truth.json",
        "hang.truth.json",
        "crash.truth.json",
        "desync.truth.json",
    ] {
        assert!(names.iter().any(|n| n == multi), "{multi} not written");
    }
    // the scenario engine's jobs (make-fixtures/scenarios/), each with and without payloads
    for job in [
        "3d_dedicated",
        "3d_shared",
        "3d_lazy",
        "3d_sync_compute",
        "pp4",
        "moe_ep",
        "cuda_graphs",
        "3d_lockstep",
    ] {
        for variant in ["", "_payloads"] {
            for ext in ["sqlite", "truth.json"] {
                let f = format!("jobs/{job}{variant}.{ext}");
                assert!(names.contains(&f), "{f} not written");
            }
        }
    }
    // the multi-node jobs (issue 43): one file per node or per rank, and the clock faults
    // (only their faulty files: the others are nodes_3d_ranks's)
    for job in ["nodes_3d", "nodes_3d_ranks", "nodes_pp_dp"] {
        for variant in ["", "_payloads"] {
            let f = format!("jobs/{job}{variant}.truth.json");
            assert!(names.contains(&f), "{f} not written");
        }
    }
    for f in [
        "jobs/nodes_3d/node3.sqlite",
        "jobs/nodes_3d_payloads/node3.sqlite",
        "jobs/nodes_3d_ranks/rank15.sqlite",
        "jobs/nodes_3d_ranks_payloads/rank15.sqlite",
        "jobs/nodes_pp_dp/node3.sqlite",
        "jobs/nodes_pp_dp_payloads/node3.sqlite",
        "jobs/scaled_rank/rank5.sqlite",
        "jobs/scaled_rank.truth.json",
        "jobs/boot43/rank11.sqlite",
        "jobs/boot43.truth.json",
        "jobs/boot43_nodes/node0.sqlite",
        "jobs/boot43_nodes.truth.json",
    ] {
        assert!(names.iter().any(|n| n == f), "{f} not written");
    }
    assert_eq!(
        files_under(&committed),
        names,
        "fixtures/ holds files the generator does not write"
    );
    for n in &names {
        let a = std::fs::read(out.join("fixtures").join(n)).unwrap();
        let b = std::fs::read(committed.join(n)).unwrap_or_default();
        assert!(
            a == b,
            "fixtures/{n} differs from what make-fixtures writes"
        );
    }
}
