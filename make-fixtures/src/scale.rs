//! `make-fixtures scale`: a large profile for benchmarks, written deterministically and streamed
//! step by step into the export (no event list is held in memory).
//!
//! One process per device (pids 5001..), each running the same training steps (scale_step.rs):
//! the k-th collective of a stream is the same op on every device, ranks start it up to 2 ms
//! apart and all end within 45 µs. Every kernel has its launch call; runtime calls beyond the
//! kernel count are, in this order, memcpy/memset launches, a stream synchronize per step,
//! the event wait/record around each NCCL launch, and NCCL-watchdog `cudaEventQuery` calls.
//! NVTX ranges (push/pop, main thread) are kept in order train_step, phases, layers,
//! sub-layers, op ranges, as the budget allows.
//!
//! `--cpu` adds the CPU side of the same run (threads in scale_cpu.rs, callchains in
//! scale_frames.rs and scale_symbols.rs, the passes in scale_cpu_tables.rs, CUDA rows in
//! scale_sync.rs): OS runtime calls, thread scheduling, CPU samples at 1 kHz of each thread's
//! on-CPU time with their callchains, and the
//! CUDA synchronization and event rows of the stream synchronize and the event wait/record
//! calls, which `--cpu` turns on by default (one synchronize per step, a wait and a record
//! around every NCCL launch, every memcpy/memset launched by a call). Without `--cpu` the file
//! is the same, byte for byte, as before the option existed.

#[path = "scale_cpu.rs"]
mod cpu;
#[path = "scale_frames.rs"]
mod frames;
#[path = "scale_sync.rs"]
mod sync;

use std::path::{Component, Path, PathBuf};
use std::time::Instant;

use rusqlite::{Statement, params};

use crate::assemble::{process, threads};
use crate::model::{Context, DGX_BUS, Profile, global_pid, global_tid, h100, uuid};
use crate::rng::Rng;
use crate::scale_step::*;
use crate::writer::{self, Strings};

pub const USAGE: &str = "\
usage: make-fixtures                 write the small fixtures into fixtures/ (and truth JSON)
       make-fixtures scale [options] write one large profile for benchmarks
options of scale (counts accept 1_000_000, 1000000, 1m, 500k):
  --kernels N   kernels in total (default 10m)
  --devices D   devices, one process each (default 8, at most 64)
  --runtime M   runtime API calls in total, M >= N (default N: one launch call per kernel)
  --nvtx R      NVTX push/pop ranges in total (default N / 5)
  --out PATH    output file (default target/scale/scale_<N>.sqlite, with --cpu
                scale_<N>_cpu.sqlite; never under fixtures/)
  --cpu         add OS runtime calls, scheduling, 1 kHz CPU samples with callchains, and
                CUDA synchronization/event rows (--runtime then defaults to the calls
                those rows need: N plus, per step, memory ops, 1 sync, 2 per NCCL launch)
       make-fixtures scale-nodes [options]  one file per node, each on its own clock
options of scale-nodes:
  --files N     files (nodes), named node00.sqlite ... (default 64)
  --gpus G      GPUs per node, one process each (default 8, at most 8)
  --kernels K   kernels in total, about (default 1m)
  --out DIR     output directory (default target/scale/nodes; never under fixtures/)";

const PID0: u32 = 5001;
const HOST: &str = "dgx-s01";
const BASE: i64 = 5_000_000_000;
/// Ranks start a collective up to this late after they are ready.
const JITTER_US: f64 = 2000.0;
/// Ranks' ends of a collective are this close.
const END_SPREAD_NS: i64 = 45_000;
const WATCHDOG_TID: u32 = 23;
/// Launch queue depth: a launch blocks until the op this many places earlier has started.
const QUEUE: usize = 48;
const NONE: u32 = u32::MAX;

const API: [&str; 8] = [
    "cudaLaunchKernel_v7000",
    "cuLaunchKernelEx",
    "cudaMemcpyAsync_v3020",
    "cudaMemsetAsync_v3020",
    "cudaStreamSynchronize_v3020",
    "cudaStreamWaitEvent_v3020",
    "cudaEventRecord_v3020",
    "cudaEventQuery_v3020",
];
const A_LAUNCH: u8 = 0;
const A_LAUNCH_EX: u8 = 1;
const A_MEMCPY: u8 = 2;
const A_MEMSET: u8 = 3;
const A_SYNC: u8 = 4;
const A_WAIT: u8 = 5;
const A_RECORD: u8 = 6;
const A_QUERY: u8 = 7;

pub struct Args {
    pub kernels: u64,
    pub devices: u32,
    pub runtime: Option<u64>,
    pub nvtx: Option<u64>,
    pub out: Option<PathBuf>,
    pub cpu: bool,
}

/// `1_000_000`, `1000000`, `1m`, `1M`, `500k`.
pub fn count(s: &str) -> Result<u64, String> {
    let t: String = s.chars().filter(|&c| c != '_' && c != ',').collect();
    let (num, mul) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1_000),
        Some('m' | 'M') => (&t[..t.len() - 1], 1_000_000),
        _ => (&t[..], 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .ok_or_else(|| format!("not a count: {s:?}"))
}

/// Calls `on` with each `--flag` of `args` and a function that takes its
/// value (`--flag V` or `--flag=V`); `-h`/`--help` is the empty error.
pub fn each_flag(
    args: &[String],
    mut on: impl FnMut(&str, &mut dyn FnMut() -> Result<String, String>) -> Result<(), String>,
) -> Result<(), String> {
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        if flag == "-h" || flag == "--help" {
            return Err(String::new());
        }
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        on(flag, &mut value)?;
    }
    Ok(())
}

/// Parses the arguments after `scale`.
pub fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        kernels: 10_000_000,
        devices: 8,
        runtime: None,
        nvtx: None,
        out: None,
        cpu: false,
    };
    each_flag(args, |flag, value| {
        match flag {
            "--kernels" => a.kernels = count(&value()?)?,
            "--devices" => a.devices = count(&value()?)? as u32,
            "--runtime" => a.runtime = Some(count(&value()?)?),
            "--nvtx" => a.nvtx = Some(count(&value()?)?),
            "--out" => a.out = Some(PathBuf::from(value()?)),
            "--cpu" => a.cpu = true,
            _ => return Err(format!("unknown argument {flag:?}")),
        }
        Ok(())
    })?;
    if !(1..=64).contains(&a.devices) {
        return Err(format!("--devices must be 1..=64, not {}", a.devices));
    }
    if a.kernels < a.devices as u64 {
        return Err(format!(
            "--kernels ({}) must be at least --devices ({})",
            a.kernels, a.devices
        ));
    }
    if a.runtime.is_some_and(|m| m < a.kernels) {
        return Err(format!(
            "--runtime must be at least --kernels ({}): every kernel has its launch call",
            a.kernels
        ));
    }
    Ok(a)
}

/// `10m`, `1m`, `500k`, `12345`.
fn label(n: u64) -> String {
    if n.is_multiple_of(1_000_000) {
        format!("{}m", n / 1_000_000)
    } else if n.is_multiple_of(1_000) {
        format!("{}k", n / 1_000)
    } else {
        n.to_string()
    }
}

/// `p` made absolute and lexically normalized, its existing part resolved (symlinks).
pub fn resolve(p: &Path) -> Result<PathBuf, String> {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| format!("no current directory: {e}"))?
            .join(p)
    };
    let mut norm = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                norm.pop();
            }
            Component::CurDir => {}
            c => norm.push(c),
        }
    }
    let mut base = norm.clone();
    let mut rest = vec![];
    while !base.exists() {
        let Some(name) = base.file_name() else { break };
        rest.push(name.to_os_string());
        base.pop();
    }
    let mut out = base.canonicalize().unwrap_or(base);
    for r in rest.iter().rev() {
        out.push(r);
    }
    Ok(out)
}

/// The output path; refuses anything inside a `fixtures` directory (the committed fixtures
/// are only what the plain `make-fixtures` writes).
fn out_path(a: &Args, root: &Path) -> Result<PathBuf, String> {
    let out = match &a.out {
        Some(p) => p.clone(),
        None => root.join("target/scale").join(format!(
            "scale_{}{}.sqlite",
            label(a.kernels),
            if a.cpu { "_cpu" } else { "" }
        )),
    };
    let resolved = resolve(&out)?;
    let fixtures = resolve(&root.join("fixtures"))?;
    if resolved.starts_with(&fixtures) || resolved.iter().any(|c| c == "fixtures") {
        return Err(format!(
            "refusing to write {} into a fixtures/ directory: scale profiles go under target/",
            out.display()
        ));
    }
    if resolved.is_dir() || resolved.file_name().is_none() {
        return Err(format!("{} is a directory", out.display()));
    }
    Ok(resolved)
}

/// Splits `total` over slots with capacities `caps` as evenly as possible (water filling);
/// None if the capacities are too small.
fn spread(total: u64, caps: &[u64]) -> Option<Vec<u64>> {
    let fill = |level: u64| caps.iter().map(|&c| c.min(level)).sum::<u64>();
    let max = caps.iter().copied().max().unwrap_or(0);
    if fill(max) < total {
        return None;
    }
    let (mut lo, mut hi) = (0, max);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if fill(mid) >= total {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let mut v: Vec<u64> = caps.iter().map(|&c| c.min(lo.saturating_sub(1))).collect();
    let mut rest = total - v.iter().sum::<u64>();
    for (x, &c) in v.iter_mut().zip(caps) {
        if rest > 0 && c >= lo && *x < c {
            *x += 1;
            rest -= 1;
        }
    }
    debug_assert_eq!(rest, 0);
    Some(v)
}

/// `total` split over `n` parts, the first ones one larger.
fn split(total: u64, n: u64, i: u64) -> u64 {
    total / n + u64::from(i < total % n)
}

/// What the simulation needs to know about the run.
struct Plan {
    devices: usize,
    steps: usize,
    /// Template positions of the last step (all of them unless it is cut short).
    last_len: usize,
    /// Devices that run one kernel more (a FILL at the end of the last step).
    tail: Vec<bool>,
    /// [device][step] NVTX ranges and extra (non-kernel-launch) runtime calls.
    nvtx: Vec<Vec<u64>>,
    extra: Vec<Vec<u64>>,
    /// Runtime calls in total.
    calls: u64,
}

fn plan(a: &Args, tpl: &Template) -> Result<Plan, String> {
    let d = a.devices as u64;
    let per = a.kernels / d;
    let k = tpl.kernels as u64;
    let (full, rem) = (per / k, per % k);
    let steps = (full + u64::from(rem > 0)) as usize;
    let last_len = if rem == 0 {
        tpl.pos.len()
    } else {
        // up to and including the rem-th kernel
        let mut seen = 0;
        let mut len = 0;
        for (p, pos) in tpl.pos.iter().enumerate() {
            if let Op::Kernel(_) = pos.op {
                seen += 1;
                if seen == rem {
                    len = p + 1;
                    break;
                }
            }
        }
        len
    };
    let cap_full = tpl.ranges.len() as u64;
    let cap_last = tpl.ranks(last_len).1 as u64;
    let mut caps = vec![cap_full; steps];
    caps[steps - 1] = cap_last;
    let r_total = a.nvtx.unwrap_or(a.kernels / 5);
    let m_total = a.runtime.unwrap_or(a.kernels);
    let mut nvtx = vec![];
    let mut extra = vec![];
    for i in 0..d {
        let r = split(r_total, d, i);
        nvtx.push(spread(r, &caps).ok_or_else(|| {
            format!(
                "--nvtx {r_total} is more than these steps can nest (at most {} for {} kernels)",
                caps.iter().sum::<u64>() * d,
                a.kernels
            )
        })?);
        let e = split(m_total - a.kernels, d, i);
        extra.push(
            (0..steps as u64)
                .map(|s| split(e, steps as u64, s))
                .collect(),
        );
    }
    if a.cpu && a.runtime.is_none() {
        // every step: its memory ops' calls, a synchronize, a wait and a record per NCCL launch
        let need = |len: usize| {
            tpl.pos[..len]
                .iter()
                .map(|p| match p.op {
                    Op::Kernel(_) if p.stream != COMPUTE => 2,
                    Op::Kernel(_) => 0,
                    _ => 1,
                })
                .sum::<u64>()
                + 1
        };
        let (full, last) = (need(tpl.pos.len()), need(last_len));
        let per: Vec<u64> = (0..steps)
            .map(|s| if s + 1 == steps { last } else { full })
            .collect();
        extra = vec![per; d as usize];
    }
    let calls = a.kernels + extra.iter().flatten().sum::<u64>();
    Ok(Plan {
        devices: d as usize,
        steps,
        last_len,
        tail: (0..d).map(|i| i < a.kernels % d).collect(),
        nvtx,
        extra,
        calls,
    })
}

struct KRow {
    start: i64,
    end: i64,
    dev: u32,
    spec: u8,
    stream: u8,
    /// Index of the launch call in the device's `main` calls of the step, or NONE.
    call: u32,
    corr: i64,
    grid_id: i64,
}

struct MRow {
    start: i64,
    end: i64,
    dev: u32,
    /// 0 memset, else the memcpy copy kind.
    copy_kind: u32,
    bytes: i64,
    call: u32,
    corr: i64,
}

struct CRow {
    start: i64,
    end: i64,
    dev: u32,
    watchdog: bool,
    api: u8,
    corr: i64,
}

struct NRow {
    start: i64,
    end: i64,
    dev: u32,
    range: u32,
}

/// The rows of one step, every table sorted by start.
#[derive(Default)]
struct Batch {
    kernels: Vec<KRow>,
    mem: Vec<MRow>,
    calls: Vec<CRow>,
    nvtx: Vec<NRow>,
}

#[derive(Default)]
struct Dev {
    cpu: i64,
    free: [i64; 3],
    end_at: Vec<i64>,
    stack: Vec<(u32, i64)>,
    /// (start, end, api) of the main thread's calls in this step, in time order.
    main: Vec<(i64, i64, u8)>,
    watch: Vec<(i64, i64)>,
    corr_of_main: Vec<i64>,
    next_corr: i64,
    next_orphan: i64,
    next_grid: i64,
    step_start: i64,
    // this step's budgets
    nvtx_budget: u32,
    memop_calls: u64,
    sync: bool,
    nccl_extra: u64,
    watch_calls: u64,
    /// GPU start of the last QUEUE ops, by op number modulo QUEUE.
    queue: Vec<i64>,
    ops: usize,
    // a collective in flight
    ready: i64,
    pending: i64,
    slot: usize,
}

impl Dev {
    fn call(&mut self, rng: &mut Rng, api: u8, dur: i64) -> (u32, i64) {
        self.call_gated(rng, api, dur, 0)
    }

    /// A call that cannot return before `gate` (a launch into a full queue).
    fn call_gated(&mut self, rng: &mut Rng, api: u8, dur: i64, gate: i64) -> (u32, i64) {
        let start = self.cpu + 1_500 + rng.range(0, 900);
        let end = (start + dur).max(gate + dur / 2);
        self.main.push((start, end, api));
        self.cpu = end;
        (self.main.len() as u32 - 1, end)
    }
}

/// Counts of what was generated.
#[derive(Default)]
struct Totals {
    kernels: u64,
    memcpy: u64,
    memset: u64,
    calls: u64,
    nvtx: u64,
    /// Instances per NCCL stream (device 0).
    nccl: [u64; 3],
    end_ns: i64,
}

/// The scale profile as it is written, step by step.
struct ScaleWriter<'a> {
    tpl: &'a Template,
    specs: &'a [Spec],
    plan: &'a Plan,
    rng: Rng,
    devs: Vec<Dev>,
    batch: Batch,
    rank_full: Vec<u32>,
    rank_last: Vec<u32>,
    barrier: i64,
    totals: Totals,
}

impl<'a> ScaleWriter<'a> {
    fn new(tpl: &'a Template, specs: &'a [Spec], plan: &'a Plan) -> Self {
        let devs = (0..plan.devices)
            .map(|_| Dev {
                end_at: vec![0; tpl.pos.len()],
                queue: vec![0; QUEUE],
                next_corr: 1,
                next_grid: 1_000,
                ..Default::default()
            })
            .collect();
        ScaleWriter {
            tpl,
            specs,
            plan,
            rng: Rng::new(0x5CA1_E000),
            devs,
            batch: Batch::default(),
            rank_full: tpl.ranks(tpl.pos.len()).0,
            rank_last: tpl.ranks(plan.last_len).0,
            barrier: BASE,
            totals: Totals::default(),
        }
    }

    /// Simulates step `s` of every device into `self.batch`.
    fn step(&mut self, s: usize) {
        let tpl = self.tpl;
        let last = s + 1 == self.plan.steps;
        let len = if last {
            self.plan.last_len
        } else {
            tpl.pos.len()
        };
        let rank = if last {
            &self.rank_last
        } else {
            &self.rank_full
        };
        let (mut memops, mut colls) = (0, 0);
        for p in &tpl.pos[..len] {
            match p.op {
                Op::Kernel(k) if self.specs[k as usize].nccl => colls += 1,
                Op::Kernel(_) => {}
                _ => memops += 1,
            }
        }
        let b = &mut self.batch;
        b.kernels.clear();
        b.mem.clear();
        b.calls.clear();
        b.nvtx.clear();
        let rng = &mut self.rng;
        for (d, dev) in self.devs.iter_mut().enumerate() {
            dev.cpu = self.barrier + rng.us(0.0, 200.0);
            dev.step_start = dev.cpu;
            dev.main.clear();
            dev.watch.clear();
            dev.stack.clear();
            dev.nvtx_budget = self.plan.nvtx[d][s] as u32;
            let mut e = self.plan.extra[d][s];
            dev.memop_calls = e.min(memops);
            e -= dev.memop_calls;
            dev.sync = e > 0;
            e -= u64::from(dev.sync);
            dev.nccl_extra = e.min(2 * colls);
            e -= dev.nccl_extra;
            dev.watch_calls = e;
        }

        for p in 0..len {
            let pos = &tpl.pos[p];
            let nccl = matches!(pos.op, Op::Kernel(k) if self.specs[k as usize].nccl);
            for (d, dev) in self.devs.iter_mut().enumerate() {
                for &r in &tpl.starts_at[p] {
                    if rank[r as usize] < dev.nvtx_budget {
                        dev.stack.push((r, dev.cpu));
                        dev.cpu += rng.range(200, 600);
                    }
                }
                // the CPU side: launch (and the calls around it)
                let slot = dev.ops % QUEUE;
                dev.ops += 1;
                let gate = dev.queue[slot];
                let (call, call_end) = match pos.op {
                    Op::Kernel(_) if nccl => {
                        if dev.nccl_extra > 0 {
                            dev.nccl_extra -= 1;
                            let dur = rng.us(1.5, 3.0);
                            dev.call(rng, A_WAIT, dur);
                        }
                        let dur = rng.us(6.0, 14.0);
                        let c = dev.call_gated(rng, A_LAUNCH_EX, dur, gate);
                        if dev.nccl_extra > 0 {
                            dev.nccl_extra -= 1;
                            let dur = rng.us(2.0, 4.0);
                            dev.call(rng, A_RECORD, dur);
                        }
                        c
                    }
                    Op::Kernel(_) => {
                        let dur = rng.us(3.0, 9.0);
                        dev.call_gated(rng, A_LAUNCH, dur, gate)
                    }
                    Op::Memcpy { .. } | Op::Memset { .. } => {
                        if dev.memop_calls > 0 {
                            dev.memop_calls -= 1;
                            let (api, dur) = match pos.op {
                                Op::Memcpy { .. } => (A_MEMCPY, rng.us(10.0, 20.0)),
                                _ => (A_MEMSET, rng.us(4.0, 8.0)),
                            };
                            dev.call_gated(rng, api, dur, gate)
                        } else {
                            // launched without a recorded call
                            dev.cpu = dev.cpu.max(gate) + rng.range(1_000, 3_000);
                            (NONE, dev.cpu)
                        }
                    }
                };
                // the GPU side: ready when launched, the stream is free and the waited op ended
                let st = pos.stream as usize;
                let mut ready = (call_end + rng.range(4_000, 10_000))
                    .max(dev.free[st] + rng.range(1_000, 4_000));
                if let Some(w) = pos.wait {
                    ready = ready.max(dev.end_at[w as usize] + rng.range(1_000, 3_000));
                }
                if nccl {
                    dev.ready = ready;
                    dev.pending = call as i64;
                    dev.slot = slot;
                } else {
                    dev.queue[slot] = ready;
                    let dur_us = match pos.op {
                        Op::Kernel(k) => self.specs[k as usize].dur_us,
                        Op::Memcpy { dur_us, .. } | Op::Memset { dur_us, .. } => dur_us,
                    };
                    let end = ready + rng.us(dur_us.0, dur_us.1);
                    dev.end_at[p] = end;
                    dev.free[st] = end;
                    match pos.op {
                        Op::Kernel(k) => b.kernels.push(KRow {
                            start: ready,
                            end,
                            dev: d as u32,
                            spec: k,
                            stream: pos.stream,
                            call,
                            corr: 0,
                            grid_id: 0,
                        }),
                        Op::Memcpy { bytes, kind, .. } => b.mem.push(MRow {
                            start: ready,
                            end,
                            dev: d as u32,
                            copy_kind: kind,
                            bytes,
                            call,
                            corr: 0,
                        }),
                        Op::Memset { bytes, .. } => b.mem.push(MRow {
                            start: ready,
                            end,
                            dev: d as u32,
                            copy_kind: 0,
                            bytes,
                            call,
                            corr: 0,
                        }),
                    }
                }
                while let Some(&(r, start)) = dev.stack.last() {
                    if tpl.ranges[r as usize].last != p as u32 {
                        break;
                    }
                    dev.stack.pop();
                    dev.cpu += rng.range(200, 600);
                    b.nvtx.push(NRow {
                        start,
                        end: dev.cpu,
                        dev: d as u32,
                        range: r,
                    });
                }
            }
            if nccl {
                // each rank starts when it is ready plus up to JITTER_US; all end together
                let Op::Kernel(k) = pos.op else {
                    unreachable!()
                };
                let spec = &self.specs[k as usize];
                let mut latest = 0;
                let mut starts = [0i64; 64];
                for (d, dev) in self.devs.iter().enumerate() {
                    starts[d] = dev.ready + rng.us(0.0, JITTER_US);
                    latest = latest.max(starts[d]);
                }
                let end = latest + rng.us(spec.dur_us.0, spec.dur_us.1);
                let st = pos.stream as usize;
                for (d, dev) in self.devs.iter_mut().enumerate() {
                    let e = end + rng.range(0, END_SPREAD_NS);
                    dev.queue[dev.slot] = starts[d];
                    dev.end_at[p] = e;
                    dev.free[st] = e;
                    b.kernels.push(KRow {
                        start: starts[d],
                        end: e,
                        dev: d as u32,
                        spec: k,
                        stream: pos.stream,
                        call: dev.pending as u32,
                        corr: 0,
                        grid_id: 0,
                    });
                }
                self.totals.nccl[st] += 1;
            }
        }

        let mut barrier = 0;
        for (d, dev) in self.devs.iter_mut().enumerate() {
            if last && self.plan.tail[d] {
                // the one kernel more of this device
                let dur = rng.us(3.0, 9.0);
                let (call, call_end) = dev.call(rng, A_LAUNCH, dur);
                let start = (call_end + rng.range(4_000, 10_000))
                    .max(dev.free[COMPUTE as usize] + rng.range(1_000, 4_000));
                let end = start + rng.us(100.0, 200.0);
                dev.free[COMPUTE as usize] = end;
                b.kernels.push(KRow {
                    start,
                    end,
                    dev: d as u32,
                    spec: FILL,
                    stream: COMPUTE,
                    call,
                    corr: 0,
                    grid_id: 0,
                });
            }
            let gpu_end = dev.free.iter().copied().max().unwrap();
            let done = gpu_end + rng.range(5_000, 15_000);
            if dev.sync {
                let start = dev.cpu + 1_500 + rng.range(0, 900);
                let end = done.max(start + 2_000);
                dev.main.push((start, end, A_SYNC));
                dev.cpu = end;
            } else {
                dev.cpu = dev.cpu.max(done);
            }
            while let Some((r, start)) = dev.stack.pop() {
                dev.cpu += rng.range(200, 600);
                b.nvtx.push(NRow {
                    start,
                    end: dev.cpu,
                    dev: d as u32,
                    range: r,
                });
            }
            let span = dev.cpu - dev.step_start;
            let n = dev.watch_calls as i64;
            let gap = (span / (n + 1)).max(5_000);
            for i in 0..n {
                let t = dev.step_start + gap * (i + 1) + rng.range(0, gap / 4);
                let dur = rng.range(1_000, 3_000);
                dev.watch.push((t, t + dur));
            }
            barrier = barrier
                .max(dev.cpu)
                .max(dev.watch.last().map_or(0, |w| w.1));

            // correlation ids: the process's calls in time order, over both threads
            dev.corr_of_main.clear();
            let (mut i, mut j) = (0, 0);
            while i < dev.main.len() || j < dev.watch.len() {
                let corr = dev.next_corr;
                dev.next_corr += 1;
                if j == dev.watch.len() || (i < dev.main.len() && dev.main[i].0 <= dev.watch[j].0) {
                    let (start, end, api) = dev.main[i];
                    dev.corr_of_main.push(corr);
                    b.calls.push(CRow {
                        start,
                        end,
                        dev: d as u32,
                        watchdog: false,
                        api,
                        corr,
                    });
                    i += 1;
                } else {
                    let (start, end) = dev.watch[j];
                    b.calls.push(CRow {
                        start,
                        end,
                        dev: d as u32,
                        watchdog: true,
                        api: A_QUERY,
                        corr,
                    });
                    j += 1;
                }
            }
        }
        self.barrier = barrier + rng.us(1500.0, 3000.0);
        self.totals.end_ns = barrier;

        let devs = &mut self.devs;
        for k in &mut b.kernels {
            let dev = &mut devs[k.dev as usize];
            k.corr = if k.call == NONE {
                dev.next_orphan -= 1;
                dev.next_orphan + 1
            } else {
                dev.corr_of_main[k.call as usize]
            };
        }
        for m in &mut b.mem {
            let dev = &mut devs[m.dev as usize];
            m.corr = if m.call == NONE {
                dev.next_orphan -= 1;
                dev.next_orphan + 1
            } else {
                dev.corr_of_main[m.call as usize]
            };
        }
        b.kernels.sort_by_key(|k| (k.start, k.dev, k.stream));
        for k in &mut b.kernels {
            let dev = &mut devs[k.dev as usize];
            k.grid_id = dev.next_grid;
            dev.next_grid += 1;
        }
        b.mem.sort_by_key(|m| (m.start, m.dev));
        b.calls.sort_by_key(|c| (c.start, c.dev, c.watchdog));
        b.nvtx.sort_by_key(|n| (n.start, n.dev));
        // check: one stream runs one thing at a time (kernels and memory ops of a device)
        #[cfg(debug_assertions)]
        {
            let mut last_end = vec![[i64::MIN; 3]; devs.len()];
            let mut gpu: Vec<(i64, i64, u32, usize)> = b
                .kernels
                .iter()
                .map(|k| (k.start, k.end, k.dev, k.stream as usize))
                .chain(b.mem.iter().map(|m| (m.start, m.end, m.dev, 0)))
                .collect();
            gpu.sort();
            for (s, e, d, st) in gpu {
                assert!(
                    s < e && last_end[d as usize][st] <= s,
                    "overlap on a stream"
                );
                last_end[d as usize][st] = e;
            }
        }

        let t = &mut self.totals;
        t.kernels += b.kernels.len() as u64;
        t.memcpy += b.mem.iter().filter(|m| m.copy_kind != 0).count() as u64;
        t.memset += b.mem.iter().filter(|m| m.copy_kind == 0).count() as u64;
        t.calls += b.calls.len() as u64;
        t.nvtx += b.nvtx.len() as u64;
    }
}

/// A kernel's columns that follow from its name and shape.
struct KStatic {
    demangled: i64,
    short: i64,
    mangled: Option<i64>,
    registers: u32,
    grid: [u32; 3],
    block: [u32; 3],
    static_smem: u32,
    dynamic_smem: u32,
    x: [i64; 7],
}

struct Stmts<'c> {
    kern: Statement<'c>,
    memcpy: Statement<'c>,
    memset: Statement<'c>,
    runtime: Statement<'c>,
    nvtx: Statement<'c>,
    kstatic: Vec<KStatic>,
    api: [i64; 8],
    /// Per range: (textId, inline text).
    text: Vec<(Option<i64>, Option<&'static str>)>,
    gpid: Vec<i64>,
    main_tid: Vec<i64>,
    watch_tid: Vec<i64>,
}

/// The event tables, written one after the other so that each is contiguous in the file.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Table {
    Kernel,
    /// MEMCPY and MEMSET
    Memory,
    Runtime,
    Nvtx,
}

impl Stmts<'_> {
    fn write(&mut self, b: &Batch, table: Table) -> rusqlite::Result<()> {
        match table {
            Table::Kernel => self.kernels(b),
            Table::Memory => self.memory(b),
            Table::Runtime => self.calls(b),
            Table::Nvtx => self.nvtx(b),
        }
    }

    fn kernels(&mut self, b: &Batch) -> rusqlite::Result<()> {
        for k in &b.kernels {
            let s = &self.kstatic[k.spec as usize];
            self.kern.execute(params![
                k.start,
                k.end,
                k.dev,
                k.dev + 1,
                STREAM_IDS[k.stream as usize],
                k.corr,
                self.gpid[k.dev as usize],
                s.demangled,
                s.short,
                s.mangled,
                s.registers,
                s.grid[0],
                s.grid[1],
                s.grid[2],
                s.block[0],
                s.block[1],
                s.block[2],
                s.static_smem,
                s.dynamic_smem,
                s.x[0],
                k.grid_id,
                s.x[1],
                s.x[2],
                s.x[3],
                s.x[4],
                s.x[5],
                s.x[6],
            ])?;
        }
        Ok(())
    }

    fn memory(&mut self, b: &Batch) -> rusqlite::Result<()> {
        for m in &b.mem {
            let gpid = self.gpid[m.dev as usize];
            if m.copy_kind == 0 {
                self.memset.execute(params![
                    m.start,
                    m.end,
                    m.dev,
                    m.dev + 1,
                    S_COMPUTE,
                    m.corr,
                    gpid,
                    m.bytes
                ])?;
            } else {
                let (src, dst) = writer::copy_kinds(m.copy_kind);
                self.memcpy.execute(params![
                    m.start,
                    m.end,
                    m.dev,
                    m.dev + 1,
                    S_COMPUTE,
                    m.corr,
                    gpid,
                    m.bytes,
                    m.copy_kind,
                    src,
                    dst
                ])?;
            }
        }
        Ok(())
    }

    fn calls(&mut self, b: &Batch) -> rusqlite::Result<()> {
        for c in &b.calls {
            let tid = if c.watchdog {
                self.watch_tid[c.dev as usize]
            } else {
                self.main_tid[c.dev as usize]
            };
            let class = i64::from(c.api == A_LAUNCH_EX);
            self.runtime.execute(params![
                c.start,
                c.end,
                class,
                tid,
                c.corr,
                self.api[c.api as usize]
            ])?;
        }
        Ok(())
    }

    fn nvtx(&mut self, b: &Batch) -> rusqlite::Result<()> {
        for n in &b.nvtx {
            let (text_id, text) = self.text[n.range as usize];
            self.nvtx.execute(params![
                n.start,
                n.end,
                59,
                None::<i64>,
                text,
                self.main_tid[n.dev as usize],
                None::<i64>,
                text_id,
                0
            ])?;
        }
        Ok(())
    }
}

/// GPUs, processes, threads, contexts and streams (with `cpu`, two helper threads more per
/// process: cpu::PROXY_TID and cpu::PIN_TID).
fn targets(devices: u32, cpu: bool) -> Profile {
    let mut p = Profile {
        path: String::new(),
        host: HOST.into(),
        ..Default::default()
    };
    let mut urng = Rng::new(0x0DD5_CA1E);
    for d in 0..devices {
        let bus = DGX_BUS
            .get(d as usize)
            .map_or_else(|| format!("0000:{:02x}:00.0", 0x20 + d), |b| b.to_string());
        p.gpus.push(h100(d, &bus, uuid(&mut urng)));
    }
    p.processes.push(process(
        PID0 - 1,
        "torchrun",
        threads(PID0 - 1, &[(0, "torchrun")]),
        None,
    ));
    for d in 0..devices {
        let pid = PID0 + d;
        let mut names = vec![
            (0, "python3"),
            (14, "pt_autograd_0"),
            (WATCHDOG_TID, "pt_nccl_watchdg"),
            (31, "cuda-EvtHandlr"),
            (40, "pt_data_worker"),
        ];
        if cpu {
            names.extend(cpu::HELPERS);
        }
        let th = threads(pid, &names);
        let ctx = Context {
            device: d,
            context_id: d + 1,
            null_stream: S_COMPUTE,
            streams: vec![
                (S_COMPUTE, 3, 0),
                (S_SPARE, 1, 0),
                (S_NCCL, 2, 0),
                (S_NCCL_AR, 2, 0),
            ],
        };
        p.processes.push(process(pid, "python3", th, Some(ctx)));
    }
    p
}

const PRAGMAS: &str = "PRAGMA page_size=4096; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; \
                       PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-262144;";

/// Runs `make-fixtures scale`.
pub fn run(a: &Args, root: &Path) -> Result<(), String> {
    let t0 = Instant::now();
    let path = out_path(a, root)?;
    let specs = specs();
    let tpl = template(&specs);
    let plan = plan(a, &tpl)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    let shown = path
        .strip_prefix(root)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.clone());
    eprintln!(
        "writing {} ({} devices, {} steps of {} kernels)",
        shown.display(),
        a.devices,
        plan.steps,
        tpl.kernels
    );
    let sql = |e: rusqlite::Error| format!("writing {}: {e}", path.display());
    let mut conn = writer::create(&path, PRAGMAS).map_err(sql)?;
    let tx = conn.transaction().map_err(sql)?;
    let targets = targets(a.devices, a.cpu);
    let mut st = Strings::default();
    let totals;
    let mut cpu_counts = vec![];
    {
        writer::write_targets(&tx, &targets, &mut st).map_err(sql)?;
        let kstatic = specs
            .iter()
            .map(|s| KStatic {
                demangled: st.id(&s.name.demangled),
                short: st.id(&s.name.short),
                mangled: s.name.mangled.as_deref().map(|m| st.id(m)),
                registers: s.shape.registers,
                grid: s.shape.grid,
                block: s.shape.block,
                static_smem: s.shape.static_smem,
                dynamic_smem: s.shape.dynamic_smem,
                x: writer::kernel_derived(s.nccl, s.shape.static_smem, s.shape.dynamic_smem),
            })
            .collect();
        let api = API.map(|n| st.id(n));
        let text = tpl
            .ranges
            .iter()
            .map(|r| {
                if r.inline {
                    (None, Some(r.text))
                } else {
                    (Some(st.id(r.text)), None)
                }
            })
            .collect();
        let cpu_ids = a.cpu.then(|| cpu::Ids::new(&mut st, &specs));
        writer::write_strings(&tx, &st).map_err(sql)?;
        let pids: Vec<u32> = (0..a.devices).map(|d| PID0 + d).collect();
        let mut out = Stmts {
            kern: tx.prepare(writer::KERNEL_SQL).map_err(sql)?,
            memcpy: tx.prepare(writer::MEMCPY_SQL).map_err(sql)?,
            memset: tx.prepare(writer::MEMSET_SQL).map_err(sql)?,
            runtime: tx.prepare(writer::RUNTIME_SQL).map_err(sql)?,
            nvtx: tx.prepare(writer::NVTX_SQL).map_err(sql)?,
            kstatic,
            api,
            text,
            gpid: pids.iter().map(|&p| global_pid(p)).collect(),
            main_tid: pids.iter().map(|&p| global_tid(p, p)).collect(),
            watch_tid: pids
                .iter()
                .map(|&p| global_tid(p, p + WATCHDOG_TID))
                .collect(),
        };
        // The simulation is deterministic and cheap next to SQLite: it runs once per table.
        let mut last = None;
        for (table, name) in [
            (Table::Kernel, "kernels"),
            (Table::Memory, "memcpy/memset"),
            (Table::Runtime, "runtime calls"),
            (Table::Nvtx, "NVTX ranges"),
        ] {
            let mut sim = ScaleWriter::new(&tpl, &specs, &plan);
            for s in 0..plan.steps {
                sim.step(s);
                out.write(&sim.batch, table).map_err(sql)?;
            }
            eprintln!("  {name} written ({:.1} s)", t0.elapsed().as_secs_f64());
            last = Some(sim.totals);
        }
        totals = last.unwrap();
        if let Some(ids) = &cpu_ids {
            cpu_counts = cpu::write(&tx, ids, &tpl, &specs, &plan, t0).map_err(sql)?;
        }
    }
    tx.commit().map_err(sql)?;
    drop(conn);
    let secs = t0.elapsed().as_secs_f64();
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);

    assert_eq!(totals.kernels, a.kernels);
    assert_eq!(totals.calls, plan.calls);
    assert_eq!(totals.nvtx, a.nvtx.unwrap_or(a.kernels / 5));
    let contexts = a.devices as usize;
    let mut counts = vec![
        ("StringIds", st.rows.len() as u64),
        ("PROCESSES", targets.processes.len() as u64),
        (
            "ThreadNames",
            targets
                .processes
                .iter()
                .map(|p| p.threads.len())
                .sum::<usize>() as u64,
        ),
        ("TARGET_INFO_GPU", targets.gpus.len() as u64),
        ("TARGET_INFO_CUDA_CONTEXT_INFO", contexts as u64),
        ("TARGET_INFO_CUDA_DEVICE", contexts as u64),
        ("TARGET_INFO_CUDA_STREAM", 4 * contexts as u64),
        ("CUPTI_ACTIVITY_KIND_KERNEL", totals.kernels),
        ("CUPTI_ACTIVITY_KIND_MEMCPY", totals.memcpy),
        ("CUPTI_ACTIVITY_KIND_MEMSET", totals.memset),
        ("CUPTI_ACTIVITY_KIND_RUNTIME", totals.calls),
        ("NVTX_EVENTS", totals.nvtx),
    ];
    counts.extend(cpu_counts);
    println!(
        "{} ({:.1} MiB, {} bytes) in {:.1} s",
        shown.display(),
        size as f64 / (1 << 20) as f64,
        size,
        secs
    );
    let line: Vec<String> = counts.iter().map(|(t, n)| format!("{t}={n}")).collect();
    println!("  {}", line.join(" "));
    let nccl_kernels = (totals.nccl[1] + totals.nccl[2]) * a.devices as u64;
    println!(
        "  {} devices (pids {}-{}, host {HOST}), {} steps of {} kernels ('{STEP_NAME}' NVTX ranges, {:.1} s of timeline); \
         NCCL {:.1} % of kernels: stream {S_NCCL} AllGather + ReduceScatter bf16 ({} instances), \
         stream {S_NCCL_AR} AllReduce f32 ({} instances), same sequence on every device; compute stream {S_COMPUTE}",
        a.devices,
        PID0,
        PID0 + a.devices - 1,
        plan.steps,
        tpl.kernels,
        (totals.end_ns - BASE) as f64 / 1e9,
        nccl_kernels as f64 * 100.0 / totals.kernels as f64,
        totals.nccl[1],
        totals.nccl[2],
    );
    Ok(())
}
