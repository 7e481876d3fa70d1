//! Staggered captures (`fixtures/staggered/rank0..7.sqlite`): one file per rank (8 ranks, 4 per
//! host on two hosts, per_rank.rs's layout and session-relative clocks), one job of 14
//! collectives with mixed ops in a non-periodic sequence. Rank r's capture starts `START[r]`
//! collectives in (its file lacks the earlier kernels and every event before its capture
//! start), and rank 6's capture stops 4 instances before the others', between collectives.

use serde_json::{Value, json};

use crate::clock::Capture;
use crate::job::{self, AG, AR, BC, Job, MS, RS, RankClock};
use crate::rng::Rng;
use crate::truth_clock::File;
use crate::truth_faults::Faults;

pub const DIR: &str = "fixtures/staggered";
const RANKS: usize = 8;
const PER_HOST: usize = 4;
pub const START: [usize; RANKS] = [0, 3, 1, 5, 0, 2, 4, 1];
/// The rank whose capture stops early, and how many instances before the others' last.
pub const EARLY: (usize, usize) = (6, 4);
const SEQ: [&str; 14] = [BC, AG, RS, AR, AG, RS, AR, AR, AG, BC, RS, AG, AR, RS];
const T_FIRST: i64 = 7_200_000 * MS;

pub fn host(h: usize) -> String {
    format!("stg0{h}.hpc.example")
}

pub fn build(rng: &mut Rng) -> (Vec<File>, Value) {
    // every rank's captured ops are found at its own offset only
    for (r, &s) in START.iter().enumerate() {
        let end = if r == EARLY.0 {
            SEQ.len() - EARLY.1
        } else {
            SEQ.len()
        };
        let mine = &SEQ[s..end];
        for o in (0..=SEQ.len() - mine.len()).filter(|&o| o != s) {
            assert_ne!(
                &SEQ[o..o + mine.len()],
                mine,
                "rank {r}: offset {o} fits too"
            );
        }
    }
    let ranks = job::ranks(RANKS, PER_HOST, 6_210, true);
    let mut j = Job::new(ranks.clone(), &SEQ, T_FIRST, rng);
    j.run_all(rng, &|i, _| SEQ[i]);
    let kernels = j.kernels.clone();
    let outs = j.finish(rng);
    let windows: Vec<(i64, i64)> = outs
        .iter()
        .enumerate()
        .map(|(r, o)| {
            let (first, last) = job::span(o);
            let lo = match START[r] {
                0 => first - 300 * MS + r as i64 * 11 * MS,
                s => job::quiet_after(o, kernels[s - 1][r].unwrap().2 + 50_000),
            };
            let hi = if r == EARLY.0 {
                let last_inst = SEQ.len() - EARLY.1 - 1;
                job::quiet_after(o, kernels[last_inst][r].unwrap().2 + 20 * MS)
            } else {
                last + 500 * MS + r as i64 * 5 * MS
            };
            (lo, hi)
        })
        .collect();
    for (r, w) in windows.iter().enumerate() {
        assert!(kernels[START[r]][r].unwrap().1 > w.0);
        if START[r] > 0 {
            assert!(kernels[START[r] - 1][r].unwrap().2 < w.0);
        }
    }
    let hosts: Vec<String> = (0..RANKS / PER_HOST).map(host).collect();
    let clocks = [
        RankClock {
            drift_ppm: 0.0,
            utc_error_ns: 1_200_000,
            uptime_at_zero: 3_100_000 * MS,
        },
        RankClock {
            drift_ppm: 3.0,
            utc_error_ns: -4_700_000,
            uptime_at_zero: 901_234 * MS,
        },
    ];
    let files = job::per_rank_files(
        DIR,
        &hosts,
        PER_HOST,
        &ranks,
        outs,
        &windows,
        &clocks,
        0x0DD5_EED7,
    );
    let faults = Faults {
        files: &files,
        rank_at: (0..RANKS).map(|r| (r, ranks[r].pid, 0)).collect(),
        kernels: &kernels,
        seq: &SEQ,
        early_stop: vec![EARLY.0],
        crashed: vec![],
        behind: None,
    };
    let scenario = json!({
        "description": "one file per rank (8 ranks, 4 per host on stg00/stg01, each process sees its GPU as CUDA device 0), session-relative timestamps; one job of 14 collectives (Broadcast, AllGather, ReduceScatter bf16, AllReduce bf16, non-periodic) on stream 16, two per step every 600 ms; rank r's capture starts start[r] collectives in; rank 6's capture stops 4 instances before the others', between collectives",
        "files": (0..RANKS).map(|r| format!("{DIR}/rank{r}.sqlite")).collect::<Vec<_>>(),
        "start": START,
        "early_stop": {"rank": EARLY.0, "instances_before_end": EARLY.1},
    });
    let t = crate::truth_faults::truth(&faults, scenario);
    (files, t)
}

pub fn capture(r: usize) -> Capture {
    job::rank_capture(
        r,
        RANKS,
        PER_HOST,
        &host(0),
        "3f7c2a10-5d4e-4b8a-9c61-2e8f0a7b5d",
    )
}
