//! `make-fixtures scale --cpu`: the CPU side of the scale run, derived from the simulation's
//! calls and kernels step by step, and written after the GPU and runtime tables, one table per
//! pass so that each is contiguous in the file. Each pass runs the simulation again, on a
//! thread of its own that hands the rows of each step to the writer; the generators are
//! seeded and consume the same draws in every pass, so the passes agree.
//!
//! Threads of each rank (process), on the CPUs of its NUMA slice of the 224-core host:
//! - the main thread (`python3`, launches every kernel): on CPU through the step (it spins in
//!   the driver while the launch queue is full and in the step's synchronize), preempted a
//!   few hundred times a second for 3–40 µs (sometimes 0.1–0.4 ms, sometimes moving to
//!   another CPU); an `ioctl` inside one or two calls per step; after the step a `futex` (the
//!   GIL) and a long `pthread_cond_wait` for the next batch, off CPU, until the next step;
//! - the pin-memory thread (`python3`, PIN_TID): wakes from `poll` just after a step starts,
//!   `read`s the batch, copies it for 3–10 ms (with a `futex`), and polls again;
//! - the NCCL proxy thread (`python3`, PROXY_TID): busy while each AllReduce runs, otherwise
//!   blocked in `pthread_cond_wait`;
//! - the NCCL watchdog (`pt_nccl_watchdg`) wakes every 100 ms from `pthread_cond_timedwait`
//!   (and for its `cudaEventQuery` calls), `cuda-EvtHandlr` from `poll` every 50–500 ms;
//!   `torchrun`'s main thread wakes every 100 ms (scheduling only).
//!
//! SCHED_EVENTS has a sched-out/sched-in pair for every off-CPU gap; COMPOSITE_EVENTS samples
//! each thread every 1 ms (±20 µs) of its on-CPU time (so ~1 kHz for the main threads), on
//! the CPU it runs on; scale_frames.rs gives each sample its stack. OSRT_API has the calls
//! above (OSRT_CALLCHAINS stays empty). A blocking call's row is written with the step its
//! start falls in, except the proxy's and the watchdog's/handler's waits, whose end is only
//! known when they wake: those rows are written with the step they end in.

#[path = "scale_cpu_tables.rs"]
mod tables;
pub use tables::write;

use super::frames::{Frames, Kind, NO_SPEC, What};
use super::{A_MEMCPY, BASE, Batch, Dev, NONE, PID0, ScaleWriter, WATCHDOG_TID};
use crate::model::global_tid;
use crate::rng::Rng;
use crate::scale_step::{NCCL_AR, Spec};
use crate::writer::Strings;

pub const PROXY_TID: u32 = 52;
pub const PIN_TID: u32 = 57;
/// Threads `--cpu` adds to each rank's process: NCCL's proxy thread and the DataLoader's
/// pin-memory thread (neither renames itself).
pub const HELPERS: [(u32, &str); 2] = [(PROXY_TID, "python3"), (PIN_TID, "python3")];
const EVT_TID: u32 = 31;
const HOST_CPUS: u16 = 224;

const OSRT: [&str; 6] = [
    "pthread_cond_wait",
    "pthread_cond_timedwait",
    "futex",
    "poll",
    "read",
    "ioctl",
];
const O_COND: u8 = 0;
const O_TIMED: u8 = 1;
const O_FUTEX: u8 = 2;
const O_POLL: u8 = 3;
const O_READ: u8 = 4;
const O_IOCTL: u8 = 5;

/// StringIds the CPU tables refer to (interned before StringIds is written).
pub struct Ids {
    osrt: [i64; OSRT.len()],
    frames: Frames,
}

impl Ids {
    pub fn new(st: &mut Strings, specs: &[Spec]) -> Self {
        Ids {
            osrt: OSRT.map(|n| st.id(n)),
            frames: Frames::new(st, specs),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Main,
    Pin,
    Proxy,
    Watchdog,
    Evt,
    Torchrun,
}

impl Role {
    fn what(self) -> What {
        match self {
            Role::Main => What::Py,
            Role::Pin => What::Pin,
            Role::Proxy => What::Proxy,
            Role::Watchdog => What::Watchdog,
            Role::Evt => What::Evt,
            Role::Torchrun => What::Torchrun,
        }
    }
}

struct SchedRow {
    t: i64,
    gtid: i64,
    cpu: u16,
    sched_in: bool,
}

struct OsrtRow {
    start: i64,
    end: i64,
    gtid: i64,
    name: u8,
}

struct SampleRow {
    t: i64,
    gtid: i64,
    cpu: u16,
    kind: Kind,
}

/// The CPU rows of one step, each table sorted by time.
#[derive(Default)]
struct Rows {
    sched: Vec<SchedRow>,
    osrt: Vec<OsrtRow>,
    samples: Vec<SampleRow>,
}

struct Th {
    gtid: i64,
    role: Role,
    dev: usize,
    on: bool,
    cpu: u16,
    since: i64,
    /// On-CPU time until the next sample.
    owed: i64,
    lo: u16,
    width: u16,
    /// The next wake-up decided in advance (pin-memory: the poll's end; tickers: the timeout).
    wake: i64,
    /// Start of the blocking call it is in (when its end is not known yet), or 0.
    blocked: i64,
    /// This step's on-CPU intervals (start, end, cpu).
    on_cpu: Vec<(i64, i64, u16)>,
}

impl Th {
    fn sched_in(&mut self, t: i64, rng: &mut Rng, rows: &mut Rows) {
        debug_assert!(!self.on);
        if rng.range(0, 99) < 12 {
            self.cpu = self.lo + rng.range(0, self.width as i64 - 1) as u16;
        }
        rows.sched.push(SchedRow {
            t,
            gtid: self.gtid,
            cpu: self.cpu,
            sched_in: true,
        });
        self.on = true;
        self.since = t;
    }

    fn sched_out(&mut self, t: i64, rows: &mut Rows) {
        debug_assert!(self.on && t > self.since);
        rows.sched.push(SchedRow {
            t,
            gtid: self.gtid,
            cpu: self.cpu,
            sched_in: false,
        });
        self.on_cpu.push((self.since, t, self.cpu));
        self.on = false;
    }

    /// Involuntary preemptions while it runs between `from` and `to`.
    fn preempt(&mut self, from: i64, to: i64, rng: &mut Rng, rows: &mut Rows) {
        let mut t = from + rng.range(500_000, 7_000_000);
        while t + 60_000 < to {
            let gap = if rng.range(0, 19) == 0 {
                rng.range(60_000, 400_000)
            } else {
                rng.range(3_000, 40_000)
            };
            if t + gap + 10_000 >= to {
                break;
            }
            self.sched_out(t, rows);
            self.sched_in(t + gap, rng, rows);
            t += gap + rng.range(1_000_000, 7_000_000);
        }
    }

    /// Ends the step at `w1`: a running thread's interval is cut there.
    fn flush(&mut self, w1: i64) {
        if self.on && w1 > self.since {
            self.on_cpu.push((self.since, w1, self.cpu));
            self.since = w1;
        }
    }

    /// Samples every 1 ms (±20 µs) of on-CPU time, classified by `kind`.
    fn sample(&mut self, rng: &mut Rng, rows: &mut Rows, mut kind: impl FnMut(i64) -> Kind) {
        for &(a, b, cpu) in &self.on_cpu {
            let mut t = a + self.owed;
            while t < b {
                rows.samples.push(SampleRow {
                    t,
                    gtid: self.gtid,
                    cpu,
                    kind: kind(t),
                });
                t += rng.range(980_000, 1_020_000);
            }
            self.owed = t - b;
        }
        self.on_cpu.clear();
    }

    fn osrt(&self, start: i64, end: i64, name: u8, rows: &mut Rows) {
        debug_assert!(start < end);
        rows.osrt.push(OsrtRow {
            start,
            end,
            gtid: self.gtid,
            name,
        });
    }
}

/// The thread model of every rank, advanced one step at a time.
struct CpuGen {
    rng: Rng,
    threads: Vec<Th>,
    rows: Rows,
    /// Per device: the kernel spec of each main-thread call of the step (NO_SPEC if none).
    spec_of: Vec<Vec<u8>>,
    /// Per device: the step's AllReduce kernels (start, end).
    allreduce: Vec<Vec<(i64, i64)>>,
    ioctls: Vec<(i64, i64)>,
    next_id: i64,
}

impl CpuGen {
    fn new(devices: usize) -> Self {
        let mut rng = Rng::new(0xC9_5CA1_E000);
        let width = (HOST_CPUS / devices.max(8) as u16).clamp(2, 28);
        let mut threads = vec![];
        for d in 0..devices {
            let pid = PID0 + d as u32;
            let lo = d as u16 * width % HOST_CPUS;
            for (k, (role, tid)) in [
                (Role::Main, 0),
                (Role::Pin, PIN_TID),
                (Role::Proxy, PROXY_TID),
                (Role::Watchdog, WATCHDOG_TID),
                (Role::Evt, EVT_TID),
            ]
            .into_iter()
            .enumerate()
            {
                threads.push(Th {
                    gtid: global_tid(pid, pid + tid),
                    role,
                    dev: d,
                    on: false,
                    cpu: lo + (k as u16 * 3 + 1) % width,
                    since: 0,
                    owed: rng.range(0, 1_000_000),
                    lo,
                    width,
                    wake: match role {
                        Role::Pin => BASE + rng.range(300_000, 1_200_000),
                        Role::Watchdog => BASE + rng.range(0, 100_000_000),
                        Role::Evt => BASE + rng.range(0, 500_000_000),
                        _ => 0,
                    },
                    blocked: 0,
                    on_cpu: vec![],
                });
            }
        }
        let pid = PID0 - 1;
        threads.push(Th {
            gtid: global_tid(pid, pid),
            role: Role::Torchrun,
            dev: 0,
            on: false,
            cpu: HOST_CPUS - 3,
            since: 0,
            owed: rng.range(0, 1_000_000),
            lo: HOST_CPUS - 8,
            width: 8,
            wake: BASE + rng.range(0, 100_000_000),
            blocked: 0,
            on_cpu: vec![],
        });
        // the main threads run from the start
        let mut rows = Rows::default();
        for th in threads.iter_mut().filter(|t| t.role == Role::Main) {
            th.sched_in(BASE - rng.range(10_000, 40_000), &mut rng, &mut rows);
        }
        CpuGen {
            rng,
            threads,
            rows,
            spec_of: vec![vec![]; devices],
            allreduce: vec![vec![]; devices],
            ioctls: vec![],
            next_id: 1,
        }
    }

    /// The rows of the step the simulation just made (`sim.batch`, `sim.devs`); the next step
    /// starts at `sim.barrier`.
    fn step(&mut self, sim: &ScaleWriter) {
        let w1 = sim.barrier;
        let b: &Batch = &sim.batch;
        for (d, dev) in sim.devs.iter().enumerate() {
            self.spec_of[d].clear();
            self.spec_of[d].resize(dev.main.len(), NO_SPEC);
            self.allreduce[d].clear();
        }
        for k in &b.kernels {
            if k.call != NONE {
                self.spec_of[k.dev as usize][k.call as usize] = k.spec;
            }
            if k.stream == NCCL_AR {
                self.allreduce[k.dev as usize].push((k.start, k.end));
            }
        }
        let rng = &mut self.rng;
        let rows = &mut self.rows;
        for th in &mut self.threads {
            match th.role {
                Role::Main => {
                    let dev = &sim.devs[th.dev];
                    main_step(
                        th,
                        dev,
                        &self.spec_of[th.dev],
                        w1,
                        rng,
                        rows,
                        &mut self.ioctls,
                    );
                }
                Role::Pin => pin_step(th, w1, rng, rows),
                Role::Proxy => proxy_step(th, &self.allreduce[th.dev], rng, rows),
                Role::Watchdog => {
                    let calls = &sim.devs[th.dev].watch;
                    ticker_step(
                        th,
                        calls,
                        w1,
                        O_TIMED,
                        (100_050_000, 100_300_000),
                        rng,
                        rows,
                    )
                }
                Role::Evt => ticker_step(th, &[], w1, O_POLL, (50_000_000, 500_000_000), rng, rows),
                Role::Torchrun => {
                    ticker_step(th, &[], w1, u8::MAX, (99_000_000, 101_000_000), rng, rows)
                }
            }
        }
        rows.sched.sort_by_key(|r| (r.t, r.gtid));
        rows.osrt.sort_by_key(|r| (r.start, r.gtid));
        rows.samples.sort_by_key(|r| (r.t, r.gtid));
    }

    fn clear(&mut self) {
        self.rows.sched.clear();
        self.rows.osrt.clear();
        self.rows.samples.clear();
    }
}

/// The main thread: on CPU through the step, then the futex and the wait for the next batch.
fn main_step(
    th: &mut Th,
    dev: &Dev,
    spec_of: &[u8],
    w1: i64,
    rng: &mut Rng,
    rows: &mut Rows,
    ioctls: &mut Vec<(i64, i64)>,
) {
    let calls = &dev.main;
    let end = dev.cpu;
    debug_assert!(th.on);
    // one or two ioctls inside calls: the batch's copy (if it has a call) and one launch
    ioctls.clear();
    let mut inside = vec![];
    if let Some(i) = calls.iter().position(|c| c.2 == A_MEMCPY) {
        inside.push(i);
    }
    if !calls.is_empty() {
        inside.push(rng.range(0, calls.len() as i64 - 1) as usize);
    }
    inside.sort_unstable();
    inside.dedup();
    for i in inside {
        let (cs, ce, _) = calls[i];
        let s = cs + rng.range(600, 1_500);
        let e = s + rng.range(4_000, 30_000);
        if e + 300 < ce {
            ioctls.push((s, e));
            th.osrt(s, e, O_IOCTL, rows);
        }
    }
    th.preempt(th.since, end, rng, rows);
    // after the step: the GIL, a little Python, then the wait for the next batch
    let t = end + rng.range(1_000, 4_000);
    let f = rng.range(5_000, 400_000);
    th.osrt(t, t + f, O_FUTEX, rows);
    th.sched_out(t + 600, rows);
    th.sched_in(t + f - 400, rng, rows);
    let t2 = t + f + rng.range(30_000, 250_000);
    let wake = w1 - rng.range(2_000, 15_000);
    if t2 + 20_000 < wake {
        th.osrt(t2, wake + rng.range(1_000, 3_000), O_COND, rows);
        th.sched_out(t2 + 800, rows);
        th.sched_in(wake, rng, rows);
    }
    th.flush(w1);
    // what it was doing at each sample
    let (mut i, mut j) = (0, 0);
    th.sample(rng, rows, |t| {
        while i < calls.len() && calls[i].1 <= t {
            i += 1;
        }
        if i < calls.len() && calls[i].0 <= t {
            while j < ioctls.len() && ioctls[j].1 <= t {
                j += 1;
            }
            let what = if j < ioctls.len() && ioctls[j].0 <= t {
                What::Ioctl
            } else {
                What::Call
            };
            Kind {
                what,
                api: calls[i].2,
                spec: spec_of[i],
            }
        } else {
            Kind::of(What::Py)
        }
    });
}

/// The pin-memory thread: wakes (decided a step ahead), reads and copies the batch, polls.
fn pin_step(th: &mut Th, w1: i64, rng: &mut Rng, rows: &mut Rows) {
    let wake = th.wake;
    debug_assert!(wake < w1);
    th.sched_in(wake, rng, rows);
    let r = wake + rng.range(1_000, 3_000);
    th.osrt(r, r + rng.range(10_000, 60_000), O_READ, rows);
    let busy_end = (wake + rng.range(3_000_000, 10_000_000)).min(w1 - 100_000);
    let m = wake + (busy_end - wake) / 2 + rng.range(0, 200_000);
    let f = rng.range(10_000, 300_000);
    if m + f + 50_000 < busy_end {
        th.preempt(wake, m, rng, rows);
        th.osrt(m, m + f, O_FUTEX, rows);
        th.sched_out(m + 500, rows);
        th.sched_in(m + f - 500, rng, rows);
        th.preempt(m + f, busy_end, rng, rows);
    } else {
        th.preempt(wake, busy_end, rng, rows);
    }
    th.wake = w1 + rng.range(300_000, 1_200_000);
    th.osrt(busy_end, th.wake + rng.range(1_000, 3_000), O_POLL, rows);
    th.sched_out(busy_end + 1_000, rows);
    let what = Kind::of(What::Pin);
    th.sample(rng, rows, |_| what);
}

/// The NCCL proxy thread: busy while each AllReduce kernel runs (back-to-back ones merged).
fn proxy_step(th: &mut Th, kernels: &[(i64, i64)], rng: &mut Rng, rows: &mut Rows) {
    let mut busy: Vec<(i64, i64)> = vec![];
    for &(ks, ke) in kernels {
        let wake = ks + rng.range(2_000, 10_000);
        let end = ke.max(wake + 5_000) + rng.range(5_000, 30_000);
        match busy.last_mut() {
            Some(last) if wake <= last.1 + 20_000 => last.1 = last.1.max(end),
            _ => busy.push((wake, end)),
        }
    }
    for (wake, end) in busy {
        if th.blocked > 0 {
            th.osrt(th.blocked, wake + 1_000, O_COND, rows);
        }
        th.sched_in(wake, rng, rows);
        th.preempt(wake, end, rng, rows);
        th.sched_out(end, rows);
        th.blocked = end - 500;
    }
    let what = Kind::of(What::Proxy);
    th.sample(rng, rows, |_| what);
}

/// A thread that sleeps in `name` (u8::MAX: no OSRT row) with a timeout drawn from `every`,
/// waking for a few µs each time, and for each of `calls` (start, end).
fn ticker_step(
    th: &mut Th,
    calls: &[(i64, i64)],
    w1: i64,
    name: u8,
    every: (i64, i64),
    rng: &mut Rng,
    rows: &mut Rows,
) {
    // on-CPU intervals: the timeouts and the calls, overlapping ones merged
    let mut on: Vec<(i64, i64)> = vec![];
    let mut j = 0;
    loop {
        let (wake, sleep) = if j < calls.len() && calls[j].0 - 3_000 < th.wake {
            let c = calls[j];
            j += 1;
            (c.0 - rng.range(1_500, 3_000), c.1 + rng.range(1_500, 4_000))
        } else {
            let wake = th.wake;
            if wake >= w1 - 100_000 {
                // the next step's
                th.wake = wake.max(w1 + 5_000);
                break;
            }
            (wake, wake + rng.range(15_000, 60_000))
        };
        match on.last_mut() {
            Some(last) if wake <= last.1 + 1_000 => last.1 = last.1.max(sleep),
            _ => on.push((wake, sleep)),
        }
        th.wake = on.last().unwrap().1 + rng.range(every.0, every.1);
    }
    for (wake, sleep) in on {
        if th.blocked > 0 && name != u8::MAX {
            th.osrt(th.blocked, wake + 500, name, rows);
        }
        th.sched_in(wake, rng, rows);
        th.sched_out(sleep, rows);
        th.blocked = sleep - 400;
    }
    let what = Kind::of(th.role.what());
    th.sample(rng, rows, |_| what);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scale_step::{specs, template};

    /// Every thread's scheduling alternates in/out, its samples fall inside its on-CPU
    /// intervals, and each table's rows of a step come in time order.
    #[test]
    fn threads_alternate_and_samples_fall_on_cpu() {
        let specs = specs();
        let tpl = template(&specs);
        let a = super::super::Args {
            kernels: 40_000,
            devices: 4,
            runtime: None,
            nvtx: None,
            out: None,
            cpu: true,
        };
        let plan = super::super::plan(&a, &tpl).unwrap();
        let mut sim = ScaleWriter::new(&tpl, &specs, &plan);
        let mut g = CpuGen::new(plan.devices);
        let mut state: std::collections::HashMap<i64, (bool, i64)> = Default::default();
        let mut samples = 0;
        let mut last_t = i64::MIN;
        for s in 0..plan.steps {
            sim.step(s);
            g.step(&sim);
            for r in &g.rows.sched {
                let e = state.entry(r.gtid).or_insert((false, i64::MIN));
                assert_ne!(e.0, r.sched_in, "{} twice at {}", r.sched_in, r.t);
                assert!(e.1 < r.t);
                *e = (r.sched_in, r.t);
                assert!(r.t >= last_t);
            }
            for r in &g.rows.samples {
                assert!(r.t >= last_t);
            }
            last_t = g.rows.sched.last().map_or(last_t, |r| r.t).max(last_t);
            samples += g.rows.samples.len();
            g.clear();
        }
        // about 1 kHz on each main thread
        let secs = (sim.barrier - BASE) as f64 / 1e9;
        let per_main = samples as f64 / plan.devices as f64 / secs;
        assert!((900.0..1100.0).contains(&per_main), "{per_main}");
    }
}
