//! A desync (`fixtures/desync/node0..1.sqlite`): one file per node, 2 nodes × 2 ranks (rank =
//! node·2 + local, multinode.rs's layout and boot clocks), one job of 12 collectives with mixed
//! ops. At instances 7 and 8, where the others run AllGather then ReduceScatter, rank 3 runs
//! ReduceScatter then AllGather; everything else is identical.

use serde_json::{Value, json};

use crate::clock::Capture;
use crate::job::{self, AG, AR, BC, Job, MS, NodeClock, RS};
use crate::rng::Rng;
use crate::truth_clock::File;
use crate::truth_faults::Faults;

pub const DIR: &str = "fixtures/desync";
const NODES: usize = 2;
const GPUS: usize = 2;
/// Instance (1-based) where the swap starts, and the swapped rank.
pub const K: usize = 7;
pub const SWAPPED: usize = 3;
const SEQ: [&str; 12] = [BC, AR, AG, RS, AR, AR, AG, RS, AR, BC, AG, RS];
const T_FIRST: i64 = 6_300_000 * MS;

pub fn host(n: usize) -> String {
    format!("dsy{n:02}.cluster.example")
}

pub fn build(rng: &mut Rng) -> (Vec<File>, Value) {
    assert_eq!((SEQ[K - 1], SEQ[K]), (AG, RS));
    let n_ranks = NODES * GPUS;
    let ranks = job::ranks(n_ranks, GPUS, 33_110, false);
    let mut j = Job::new(ranks.clone(), &SEQ, T_FIRST, rng);
    j.run_all(rng, &|i, r| {
        if r == SWAPPED && (i == K - 1 || i == K) {
            SEQ[(K - 1) + K - i]
        } else {
            SEQ[i]
        }
    });
    let kernels = j.kernels.clone();
    let outs = j.finish(rng);
    let first = outs.iter().map(|o| job::span(o).0).min().unwrap();
    let last = outs.iter().map(|o| job::span(o).1).max().unwrap();
    let windows: Vec<(i64, i64)> = (0..NODES as i64)
        .map(|n| {
            (
                first - 400 * MS + n * 170 * MS,
                last + 600 * MS + n * 90 * MS,
            )
        })
        .collect();
    let clocks = [
        NodeClock {
            boot_offset: 0,
            drift_ppm: 0.0,
            utc_error_ns: 700_000,
        },
        NodeClock {
            boot_offset: -(5 * 3_600_000 * MS) - 41 * 60_000 * MS - 123_456_789,
            drift_ppm: -3.0,
            utc_error_ns: -2_600_000,
        },
    ];
    let hosts: Vec<String> = (0..NODES).map(host).collect();
    let files = job::per_node_files(
        DIR,
        &hosts,
        GPUS,
        &ranks,
        outs,
        &windows,
        &clocks,
        0x0DD5_EEDA,
    );
    let faults = Faults {
        files: &files,
        rank_at: (0..n_ranks)
            .map(|r| (r / GPUS, ranks[r].pid, ranks[r].device))
            .collect(),
        kernels: &kernels,
        seq: &SEQ,
        early_stop: vec![],
        crashed: vec![],
        behind: None,
    };
    let scenario = json!({
        "description": "2 nodes x 2 GPUs, one file per node, boot clocks; one job of 12 collectives (non-periodic ops) on stream 16, two per step every 600 ms; at instances 7 and 8, where ranks 0-2 run AllGather then ReduceScatter, rank 3 runs ReduceScatter then AllGather",
        "files": (0..NODES).map(|n| format!("{DIR}/node{n}.sqlite")).collect::<Vec<_>>(),
        "hosts": hosts,
        "swapped": {"rank": SWAPPED, "instances": [K, K + 1]},
        "note": "global rank r is GPU r % 2 of node r / 2",
    });
    let t = crate::truth_faults::truth(&faults, scenario);
    (files, t)
}

pub fn capture(n: usize) -> Capture {
    job::node_capture(
        n,
        NODES,
        GPUS,
        &host(0),
        "e5c7a3b1-2f9d-4e60-a8b4-6d1c0f3e7a",
    )
}
