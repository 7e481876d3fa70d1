//! A crash (`fixtures/crash/rank0..3.sqlite`): one file per rank (4 ranks, 2 per host,
//! per_rank.rs's layout and session-relative clocks), one job of 16 collectives with mixed
//! ops. Rank 2's process dies mid-step after collective 9: its file ends with a few compute
//! kernels and their launch calls after that collective (ANALYSIS_DETAILS stopTime right
//! after them), while the other ranks run all 16.

use serde_json::{Value, json};

use crate::clock::Capture;
use crate::job::{self, AG, AR, BC, Job, MS, RS, RankClock};
use crate::rng::Rng;
use crate::truth_clock::File;
use crate::truth_faults::Faults;

pub const DIR: &str = "fixtures/crash";
const RANKS: usize = 4;
const PER_HOST: usize = 2;
pub const CRASHED: usize = 2;
/// The last collective (1-based) of the crashed rank.
pub const J: usize = 9;
/// Compute kernels of the crashed rank after collective J that its file still holds.
const TAIL_KERNELS: usize = 2;
const SEQ: [&str; 16] = [
    BC, AG, RS, AR, AG, RS, AR, AR, AG, BC, RS, AG, AR, RS, AG, AR,
];
const T_FIRST: i64 = 5_100_000 * MS;

pub fn host(h: usize) -> String {
    format!("crash0{h}.hpc.example")
}

pub fn build(rng: &mut Rng) -> (Vec<File>, Value) {
    let ranks = job::ranks(RANKS, PER_HOST, 15_020, true);
    let mut j = Job::new(ranks.clone(), &SEQ, T_FIRST, rng);
    j.run_all(rng, &|i, _| SEQ[i]);
    let kernels = j.kernels.clone();
    let outs = j.finish(rng);
    let windows: Vec<(i64, i64)> = outs
        .iter()
        .enumerate()
        .map(|(r, o)| {
            let (first, last) = job::span(o);
            let lo = first - 300 * MS + r as i64 * 9 * MS;
            let hi = if r == CRASHED {
                let after = kernels[J - 1][r].unwrap().2;
                let mut tail: Vec<_> = o
                    .kernels
                    .iter()
                    .filter(|k| k.nccl.is_none() && k.start > after)
                    .collect();
                tail.sort_by_key(|k| k.start);
                job::quiet_after(o, tail[TAIL_KERNELS - 1].end + 1_000)
            } else {
                last + 500 * MS + r as i64 * 5 * MS
            };
            (lo, hi)
        })
        .collect();
    let hosts: Vec<String> = (0..RANKS / PER_HOST).map(host).collect();
    let clocks = [
        RankClock {
            drift_ppm: 0.0,
            utc_error_ns: -800_000,
            uptime_at_zero: 2_200_000 * MS,
        },
        RankClock {
            drift_ppm: -2.0,
            utc_error_ns: 3_900_000,
            uptime_at_zero: 612_345 * MS,
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
        0x0DD5_EED9,
    );
    let faults = Faults {
        files: &files,
        rank_at: (0..RANKS).map(|r| (r, ranks[r].pid, 0)).collect(),
        kernels: &kernels,
        seq: &SEQ,
        early_stop: vec![],
        crashed: vec![CRASHED],
        behind: None,
    };
    let scenario = json!({
        "description": "one file per rank (4 ranks, 2 per host on crash00/crash01), session-relative timestamps; one job of 16 collectives (non-periodic ops) on stream 16, two per step every 600 ms; rank 2's process dies after collective 9: its file ends with 2 compute kernels and their launch calls after it, the others run all 16",
        "files": (0..RANKS).map(|r| format!("{DIR}/rank{r}.sqlite")).collect::<Vec<_>>(),
        "crashed": {"rank": CRASHED, "last_collective": J, "tail_compute_kernels": TAIL_KERNELS},
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
        "b81d5e2a-6c3f-4a97-8e10-4d7b9c2f1a",
    )
}
