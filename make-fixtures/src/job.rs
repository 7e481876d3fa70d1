//! Shared engine of the failure scenarios (staggered.rs, hang.rs, crash.rs, desync.rs): one
//! training job whose NCCL collectives (mixed ops, a non-periodic sequence) run two per step on
//! stream 16 of every rank, simulated in true time with the sim.rs/plan.rs building blocks;
//! then each rank's capture window is cut out of it and the files are laid out as per_rank.rs
//! (one file per rank, session-relative clocks, the rank in the capture environment) or
//! multinode.rs (one file per node, boot clocks, torchrun as the profiled command) do.

use crate::assemble::*;
use crate::clock::{Capture, FileClock};
use crate::model::*;
use crate::names::{self, Compute};
use crate::plan::{Phase, RankOut};
use crate::rng::Rng;
use crate::sim::{StepLoop, US, member};
use crate::truth_clock::File;

pub const S_COMPUTE: u32 = 7;
pub const S_NCCL: u32 = 16;
pub const MS: i64 = 1_000_000;
/// Steps start every 600 ms.
pub const PERIOD: i64 = 600 * MS;
pub const STEP_NAME: &str = "train_step";
pub const SUB_NAMES: [&str; 2] = ["forward", "backward"];

pub const AG: &str = "AllGather";
pub const RS: &str = "ReduceScatter";
pub const AR: &str = "AllReduce";
pub const BC: &str = "Broadcast";

/// The kernel name and NCCL info of an op.
pub fn coll(op: &str) -> (KName, Nccl) {
    match op {
        AG => names::nccl(AG, None, "RING", "SIMPLE"),
        RS => names::nccl(RS, Some("bf16"), "RING", "SIMPLE"),
        AR => names::nccl(AR, Some("bf16"), "RING", "LL128"),
        BC => names::nccl(BC, None, "RING", "LL"),
        _ => panic!("unknown op {op}"),
    }
}

/// A rank's kernel of one instance: (op, start, end) in true time.
pub type Slot = Option<(&'static str, i64, i64)>;

pub struct Job {
    pub sim: StepLoop,
    /// The op of each instance (what the ranks run, unless a scenario swaps one).
    pub seq: Vec<&'static str>,
    /// [instance][rank]: the rank's NCCL kernel of that instance (None: never launched).
    pub kernels: Vec<Vec<Slot>>,
    t0: i64,
}

impl Job {
    /// A job on `ranks` whose first step starts at true time `t0`.
    pub fn new(ranks: Vec<Rank>, seq: &[&'static str], t0: i64, rng: &mut Rng) -> Self {
        let n = ranks.len();
        let mut sim = StepLoop::new(ranks, vec![S_COMPUTE; n]);
        sim.end_spread_us = 4.0;
        sim.init_calls(t0 - 100 * MS, rng);
        Job {
            sim,
            seq: seq.to_vec(),
            kernels: vec![vec![None; n]; seq.len()],
            t0,
        }
    }

    pub fn ranks(&self) -> usize {
        self.sim.ranks.len()
    }

    /// Step `s`'s HtoD copy and memset on `ranks`.
    pub fn step_start(&mut self, s: usize, ranks: &[usize], rng: &mut Rng) {
        let g = self.t0 + s as i64 * PERIOD;
        for &r in ranks {
            self.sim
                .step_start_for(r, g, rng, Some(Phase { step: s, sub: None }));
        }
    }

    /// Instance `inst` (0-based; slot `inst % 2` of step `inst / 2`): on each rank of `who`,
    /// three compute kernels, then its NCCL kernel of the op given (ranks running different
    /// ops start from the same base).
    pub fn collective(&mut self, inst: usize, who: &[(usize, &'static str)], rng: &mut Rng) {
        let phase = Some(Phase {
            step: inst / 2,
            sub: Some(inst % 2),
        });
        let kind = if inst.is_multiple_of(2) {
            Compute::Xmma
        } else {
            Compute::Nvjet
        };
        for &(r, _) in who {
            for _ in 0..3 {
                let d = rng.us(400.0, 700.0);
                self.sim.compute(r, 0, d, kind, false, rng, phase);
            }
        }
        let base = who.iter().map(|&(r, _)| self.sim.ready[r]).max().unwrap() + 30 * US;
        let mut ops: Vec<&'static str> = who.iter().map(|w| w.1).collect();
        ops.sort();
        ops.dedup();
        for op in ops {
            let ms: Vec<_> = who
                .iter()
                .filter(|w| w.1 == op)
                .map(|w| member(w.0, S_NCCL))
                .collect();
            let c = coll(op);
            let se = self
                .sim
                .collective(&ms, base, 2000.0, (800.0, 1300.0), &c, rng, phase);
            for (m, x) in ms.iter().zip(&se) {
                self.sim.ready[m.rank] = self.sim.ready[m.rank].max(x.1);
                self.kernels[inst][m.rank] = Some((op, x.0, x.1));
            }
        }
    }

    /// The optimizer kernel of step `s` on rank `r` (step level, no sub-phase); returns its
    /// end.
    pub fn adam(&mut self, s: usize, r: usize, rng: &mut Rng) -> i64 {
        let d = rng.us(300.0, 500.0);
        let phase = Some(Phase { step: s, sub: None });
        self.sim
            .compute(r, 0, d, Compute::Adam, false, rng, phase)
            .1
    }

    /// Step `s`'s end on `ranks`: the optimizer kernel, loss copy and stream synchronize.
    pub fn step_end(&mut self, s: usize, ranks: &[usize], rng: &mut Rng) {
        for &r in ranks {
            let after = self.adam(s, r, rng);
            self.sim
                .step_end_for(r, after, rng, Some(Phase { step: s, sub: None }));
        }
    }

    /// Every step on every rank, each instance running `op_of(instance, rank)`.
    pub fn run_all(&mut self, rng: &mut Rng, op_of: &dyn Fn(usize, usize) -> &'static str) {
        let all: Vec<usize> = (0..self.ranks()).collect();
        assert!(self.seq.len().is_multiple_of(2), "two collectives per step");
        for s in 0..self.seq.len() / 2 {
            self.step_start(s, &all, rng);
            for inst in [2 * s, 2 * s + 1] {
                let who: Vec<_> = all.iter().map(|&r| (r, op_of(inst, r))).collect();
                self.collective(inst, &who, rng);
            }
            self.step_end(s, &all, rng);
        }
    }

    /// The plans' rows, per rank (true time).
    pub fn finish(self, rng: &mut Rng) -> Vec<RankOut> {
        self.sim
            .plans
            .into_iter()
            .map(|p| p.finish(1, STEP_NAME, &SUB_NAMES, rng))
            .collect()
    }
}

/// Earliest start and latest end of the rows of a rank's plan output.
pub fn span(o: &crate::plan::RankOut) -> (i64, i64) {
    let p = Profile {
        kernels: o.kernels.clone(),
        memcpys: o.memcpys.clone(),
        memsets: o.memsets.clone(),
        calls: o.calls.clone(),
        nvtx: o.nvtx.clone(),
        ..Default::default()
    };
    crate::clock::event_span(&p)
}

/// Intervals of the GPU rows and calls of `o`.
fn intervals(o: &RankOut) -> Vec<(i64, i64)> {
    let mut v: Vec<(i64, i64)> = o.kernels.iter().map(|k| (k.start, k.end)).collect();
    v.extend(o.memcpys.iter().map(|m| (m.start, m.end)));
    v.extend(o.memsets.iter().map(|m| (m.start, m.end)));
    v.extend(o.calls.iter().map(|c| (c.start, c.end)));
    v
}

/// The first instant ≥ `t` at least 1 µs clear of every GPU row and call of `o` (a capture
/// boundary there cuts none of them).
pub fn quiet_after(o: &RankOut, t: i64) -> i64 {
    let iv = intervals(o);
    let mut t = t;
    while let Some(&(_, e)) = iv.iter().find(|&&(s, e)| s - US < t && t < e + US) {
        t = e + US;
    }
    t
}

/// Keeps the rows of `o` inside the capture window [`lo`, `hi`]: GPU rows and calls that start
/// in it (none may straddle a boundary), NVTX ranges that start in it, open (end NULL) when
/// they end after `hi`.
pub fn crop(o: &mut RankOut, lo: i64, hi: i64) {
    let inside = |s: i64, e: i64| {
        let keep = s >= lo && s < hi;
        assert!(
            !keep || e <= hi,
            "a row [{s}, {e}] straddles the capture end {hi}"
        );
        assert!(
            keep || e <= lo || s >= hi,
            "a row [{s}, {e}] straddles the capture start {lo}"
        );
        keep
    };
    o.kernels.retain(|k| inside(k.start, k.end));
    o.memcpys.retain(|m| inside(m.start, m.end));
    o.memsets.retain(|m| inside(m.start, m.end));
    o.calls.retain(|c| inside(c.start, c.end));
    o.nvtx.retain(|e| e.start >= lo && e.start < hi);
    for e in &mut o.nvtx {
        if e.end.is_some_and(|x| x > hi) {
            e.end = None;
        }
    }
    let launches = o
        .calls
        .iter()
        .filter(|c| c.api == "cuLaunchKernelEx")
        .count();
    let nccl = o.kernels.iter().filter(|k| k.nccl.is_some()).count();
    assert_eq!(launches, nccl, "a kept NCCL launch without its kernel");
}

/// Closes nothing, opens the last `train_step` range of `o` (the capture stopped inside it).
pub fn open_last_step(o: &mut RankOut) {
    let last = o
        .nvtx
        .iter_mut()
        .filter(|e| e.text == STEP_NAME)
        .max_by_key(|e| e.start)
        .expect("a step range");
    last.end = None;
}

/// Process ids: rank `r` of host `h`.
pub fn pid(base: u32, r: usize) -> u32 {
    base + r as u32 * 13
}

fn context(device: u32) -> Context {
    Context {
        device,
        context_id: device + 1,
        null_stream: S_COMPUTE,
        streams: vec![(S_COMPUTE, 3, 0), (S_NCCL, 2, 0)],
    }
}

/// Ranks of a job laid out `per_host` GPUs to a host (rank = host·per_host + local).
pub fn ranks(n: usize, per_host: usize, pid_base: u32, per_rank_files: bool) -> Vec<Rank> {
    (0..n)
        .map(|r| {
            // a per-rank file's process sees its GPU as CUDA device 0 (per_rank.rs)
            let device = if per_rank_files {
                0
            } else {
                (r % per_host) as u32
            };
            Rank {
                pid: pid(pid_base, r),
                device,
                context_id: device + 1,
            }
        })
        .collect()
}

/// The clock of a per-rank file: host drift, UTC stamp error, host uptime at true time 0.
pub struct RankClock {
    pub drift_ppm: f64,
    pub utc_error_ns: i64,
    pub uptime_at_zero: i64,
}

/// One file per rank, as per_rank.rs lays them out: the host's GPUs in TARGET_INFO_GPU, only
/// the rank's own visible (as CUDA device 0), a session-relative clock starting at
/// `windows[r].0` and stopping at `windows[r].1`.
#[allow(clippy::too_many_arguments)]
pub fn per_rank_files(
    dir: &str,
    hosts: &[String],
    per_host: usize,
    ranks: &[Rank],
    outs: Vec<RankOut>,
    windows: &[(i64, i64)],
    clocks: &[RankClock],
    uuid_seed: u64,
) -> Vec<File> {
    let mut urng = Rng::new(uuid_seed);
    let uuids: Vec<String> = (0..hosts.len() * per_host)
        .map(|_| uuid(&mut urng))
        .collect();
    let mut files = vec![];
    for (r, mut out) in outs.into_iter().enumerate() {
        let (h, local) = (r / per_host, r % per_host);
        let (lo, hi) = windows[r];
        crop(&mut out, lo, hi);
        let mut p = Profile {
            path: format!("{dir}/rank{r}.sqlite"),
            host: hosts[h].clone(),
            ..Default::default()
        };
        for g in 0..per_host {
            let mut gpu = h100(g as u32, DGX_BUS[g], uuids[h * per_host + g].clone());
            gpu.cuda_id = (g == local).then_some(0);
            p.gpus.push(gpu);
        }
        let pid = ranks[r].pid;
        let th = threads(pid, &[(0, "python3"), (23, "pt_nccl_watchdg")]);
        p.processes
            .push(process(pid, "python3", th, Some(context(0))));
        merge(&mut p, vec![out]);
        let c = &clocks[h];
        let mut clock = FileClock::session(lo, c.uptime_at_zero + lo, c.drift_ppm, c.utc_error_ns);
        clock.stop_true = hi;
        assert!(
            crate::clock::event_span(&p).0 > lo,
            "an event at capture start"
        );
        files.push(File {
            profile: p,
            clock,
            ranks: vec![(pid, r as u32)],
        });
    }
    files
}

/// The clock of a per-node file: boot-clock offset against node 0, drift, UTC stamp error.
pub struct NodeClock {
    pub boot_offset: i64,
    pub drift_ppm: f64,
    pub utc_error_ns: i64,
}

/// One file per node, as multinode.rs lays them out: `gpus` GPUs and one process per GPU, a
/// boot clock whose capture window is `windows[n]`.
#[allow(clippy::too_many_arguments)]
pub fn per_node_files(
    dir: &str,
    hosts: &[String],
    gpus: usize,
    ranks: &[Rank],
    mut outs: Vec<RankOut>,
    windows: &[(i64, i64)],
    clocks: &[NodeClock],
    uuid_seed: u64,
) -> Vec<File> {
    let mut urng = Rng::new(uuid_seed);
    let mut files = vec![];
    for (n, host) in hosts.iter().enumerate() {
        let (lo, hi) = windows[n];
        let mut p = Profile {
            path: format!("{dir}/node{n}.sqlite"),
            host: host.clone(),
            ..Default::default()
        };
        for g in 0..gpus as u32 {
            p.gpus.push(h100(g, DGX_BUS[g as usize], uuid(&mut urng)));
        }
        for rk in &ranks[n * gpus..(n + 1) * gpus] {
            let th = threads(rk.pid, &[(0, "python3"), (23, "pt_nccl_watchdg")]);
            p.processes
                .push(process(rk.pid, "python3", th, Some(context(rk.device))));
        }
        let rest = outs.split_off(gpus);
        let mut mine = std::mem::replace(&mut outs, rest);
        for o in &mut mine {
            crop(o, lo, hi);
        }
        merge(&mut p, mine);
        let c = &clocks[n];
        let mut clock = FileClock::boot(lo, c.boot_offset, c.drift_ppm, c.utc_error_ns);
        clock.stop_true = hi;
        assert!(
            crate::clock::event_span(&p).0 > lo,
            "an event at capture start"
        );
        files.push(File {
            profile: p,
            clock,
            ranks: vec![],
        });
    }
    files
}

/// The capture metadata of a per-rank file (per_rank.rs's layout).
pub fn rank_capture(
    r: usize,
    world: usize,
    per_host: usize,
    master: &str,
    uuid_stem: &str,
) -> Capture {
    let env = [
        ("RANK", r.to_string()),
        ("WORLD_SIZE", world.to_string()),
        ("LOCAL_RANK", (r % per_host).to_string()),
        ("LOCAL_WORLD_SIZE", per_host.to_string()),
        ("CUDA_VISIBLE_DEVICES", (r % per_host).to_string()),
        ("MASTER_ADDR", master.into()),
        ("MASTER_PORT", "29500".into()),
    ];
    Capture {
        command: "python3",
        arguments: vec!["train.py".into(), "--config".into(), "small.yaml".into()],
        environment: env.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        session_uuid: format!("{uuid_stem}{r:02}"),
    }
}

/// The capture metadata of a per-node file (multinode.rs's layout: torchrun, no RANK).
pub fn node_capture(n: usize, nodes: usize, gpus: usize, master: &str, uuid_stem: &str) -> Capture {
    let visible: Vec<String> = (0..gpus).map(|g| g.to_string()).collect();
    Capture {
        command: "torchrun",
        arguments: vec![
            format!("--nnodes={nodes}"),
            format!("--nproc_per_node={gpus}"),
            format!("--node_rank={n}"),
            format!("--rdzv_endpoint={master}:29500"),
            "train.py".into(),
        ],
        environment: vec![
            ("CUDA_VISIBLE_DEVICES".into(), visible.join(",")),
            ("NCCL_VERSION".into(), "2.25.1-1".into()),
        ],
        session_uuid: format!("{uuid_stem}{n:02}"),
    }
}
