//! Why the late rank was late (issue 21, first part): its lateness split
//! into a CPU part (its launch call ended after the earliest peer started)
//! and a GPU part (issued in time, started late), the CPU part accounted
//! for by what its launching thread recorded over exactly that window
//! ([`super::thread_account`]), the GPU part by the work ahead of it on its
//! own stream or the work a stream-wait-event's event followed
//! ([`super::gpu_chain`]); and what the capture did not record, with the
//! nsys option that records it.
//!
//! lateness = kernel start − earliest peer's start = cpu + gpu, where
//! cpu = max(0, launch-call end − earliest peer's start) and
//! gpu = kernel start − max(launch-call end, earliest peer's start) (a few
//! µs negative when a kernel starts before its launch call returns: kept
//! signed), all on the reference clock. A kernel replayed from a CUDA graph
//! has the graph's `cudaGraphLaunch` as its launch call; the export records
//! no dependencies between a graph's nodes, so what its earlier nodes held
//! it for is said to be unrecorded, never guessed.

use super::account::{CpuKind, Share, Split};
use super::clock::Alignment;
use super::cpu_state::{self, OffCpu, OnCpu};
use super::launch::{Preceding, preceding_kernel};
use super::matching::Matching;
use super::skew::{GroupSkew, InstanceSkew};
use super::thread_account::thread_account;
use crate::profile::{DevId, LaneId, NO_GRAPH, NONE, Profile, Sym, ThreadId};

/// What a capture did not record that the account would use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// No OS runtime calls (`--trace=osrt`).
    Osrt,
    /// No scheduling events (`--cpuctxsw=process-tree`).
    Sched,
    /// No CPU samples (`--sample=process-tree`).
    Samples,
    /// No stream-wait-event records to follow (synchronisation or CUDA
    /// event tables absent).
    Syncs,
    /// The kernel has no launch call in the capture.
    LaunchCall,
    /// The export holds no CUDA runtime calls at all: a partial export
    /// (`nsys export --tables`) or a capture without CUDA API trace.
    Runtime,
    /// A kernel replayed from a CUDA graph started late with nothing
    /// recorded holding it: the export records no dependencies between a
    /// graph's nodes, so what its earlier nodes held on the GPU is unseen.
    Graph,
}

impl Missing {
    pub fn name(self) -> &'static str {
        match self {
            Missing::Osrt => "osrt",
            Missing::Sched => "sched",
            Missing::Samples => "samples",
            Missing::Syncs => "syncs",
            Missing::LaunchCall => "launch-call",
            Missing::Runtime => "runtime",
            Missing::Graph => "graph",
        }
    }

    /// What to say, with the nsys option that records it.
    pub fn sentence(self) -> &'static str {
        match self {
            Missing::Osrt => "no OS runtime calls recorded (nsys --trace=osrt)",
            Missing::Sched => "no scheduling events recorded (nsys --cpuctxsw=process-tree)",
            Missing::Syncs => {
                "no CUDA event records to follow a stream's waits (nsys --cuda-event-trace=true)"
            }
            Missing::Samples => "no CPU samples recorded (nsys --sample=process-tree)",
            Missing::LaunchCall => "the kernel's launch call is not in the capture",
            Missing::Runtime => {
                "no CUDA runtime calls in the export (CUPTI_ACTIVITY_KIND_RUNTIME not exported: a partial export, re-export without --tables): launch times unknown"
            }
            Missing::Graph => {
                "inside a CUDA graph: what its earlier nodes held on the GPU is not recorded"
            }
        }
    }
}

pub use super::gpu_chain::{Link, LinkKind};

/// GPU time left unexplained up to this much is the GPU's own latency
/// between a launch and its start, not worth a cause of its own.
pub const GPU_LATENCY_NS: i64 = 20_000;

/// What a synchronising call waited for: the GPU work of its process that
/// ended last while the call ran (the call returns after it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waited {
    /// The sync call (a runtime row) and its name.
    pub call: usize,
    pub name: Sym,
    /// The GPU row, its stream lane and its whole span (reference clock).
    pub row: usize,
    pub lane: LaneId,
    pub start_ns: i64,
    pub end_ns: i64,
}

/// The account of one instance's late rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Why {
    pub group: usize,
    /// 0-based.
    pub instance: usize,
    pub device: DevId,
    /// The late kernel's GPU row.
    pub row: usize,
    pub lateness_ns: i64,
    pub cpu_ns: i64,
    pub gpu_ns: i64,
    /// The launching thread, and its time over [earliest peer's start,
    /// launch-call end] split (empty when the CPU part is 0).
    pub thread: Option<ThreadId>,
    pub cpu: Option<Split<Sym>>,
    /// What held it over the GPU part: the work ahead on its stream or an
    /// event wait's work, back to work that was not waiting.
    pub gpu_chain: Vec<Link>,
    /// For each sync call in the CPU part, what it waited for.
    pub waits: Vec<Waited>,
    /// The CPU part's descheduled spans, with who ran meanwhile.
    pub off_cpu: Vec<OffCpu>,
    /// What CPU samples say of the CPU part.
    pub on_cpu: Option<OnCpu>,
    pub missing: Vec<Missing>,
    /// The CPU/GPU split is larger than the clock error between the files.
    pub resolvable: bool,
    /// The clock error (ns) between the late rank's file and its first
    /// peer's: 0 on one clock.
    pub clock_error_ns: i64,
}

impl Why {
    /// Whether the delay splits into a CPU and a GPU part: only when the
    /// kernel's launch call is in the capture.
    pub fn split_known(&self) -> bool {
        !self.missing.contains(&Missing::LaunchCall)
    }

    /// CPU time nothing recorded explains.
    pub fn unaccounted_ns(&self) -> i64 {
        self.cpu.as_ref().map_or(0, |s| s.unaccounted_ns())
    }

    /// What the capture lacks, to be listed: all but a graph's unseen
    /// dependencies, which are said with the GPU part they may explain.
    pub fn listed_missing(&self) -> Vec<Missing> {
        let mut v = self.missing.clone();
        v.retain(|&m| m != Missing::Graph);
        v
    }

    /// GPU time the chain does not cover (never negative).
    pub fn gpu_unexplained_ns(&self) -> i64 {
        self.gpu_rest_ns().max(0)
    }

    /// The GPU part less what the chain covers, signed: negative when the
    /// kernel started before its launch call returned (the call's tail
    /// is in the CPU part), so that the parts add up to the lateness.
    pub fn gpu_rest_ns(&self) -> i64 {
        self.gpu_ns - super::gpu_chain::held_ns(&self.gpu_chain)
    }

    /// The kernel another stream of its device ran just before it, which
    /// the account names as competing with the GPU part's rest (not proven
    /// to block): only where that rest is more than the GPU's own latency
    /// and the kernel is no link of the chain (a link is said as one).
    pub fn competed(&self, p: &Profile, clock: &Alignment) -> Option<Preceding> {
        if self.gpu_rest_ns() <= GPU_LATENCY_NS {
            return None;
        }
        preceding_kernel(p, clock, self.row)
            .filter(|k| !self.gpu_chain.iter().any(|l| l.row == k.row))
    }

    /// Whether the CPU part names an NVTX range the thread was in.
    pub fn names_nvtx(&self) -> bool {
        self.cpu
            .as_ref()
            .is_some_and(|s| s.shares.iter().any(|x| x.kind == CpuKind::Nvtx))
    }

    /// The launching thread's off-CPU spans cut to what share `x` of its
    /// own account counts (an earlier kind may claim part of a span);
    /// none for a share of another thread's account (a late link's).
    pub fn off_cpu_counted(&self, x: &Share<Sym>) -> Vec<OffCpu> {
        // Identity, not equality: a link's account may hold a share with
        // the same kind and label.
        let own = self
            .cpu
            .as_ref()
            .is_some_and(|s| s.shares.iter().any(|y| std::ptr::eq(y, x)));
        if !own {
            return Vec::new();
        }
        let mut out = Vec::new();
        for o in &self.off_cpu {
            for &(a, b) in &x.spans {
                let (a, b) = (a.max(o.span.0), b.min(o.span.1));
                if b > a {
                    out.push(OffCpu {
                        span: (a, b),
                        cpu: o.cpu,
                        ran: o.ran.clone(),
                    });
                }
            }
        }
        out
    }
}

/// The account of every big event's late rank, in the skew stage's order.
pub fn big_events(p: &Profile, clock: &Alignment, m: &Matching, skews: &[GroupSkew]) -> Vec<Why> {
    skews
        .iter()
        .flat_map(|gs| {
            // A rank that never started it has no launch to account.
            gs.big_events
                .iter()
                .filter(|e| !e.instance.open)
                .map(move |e| why_late(p, clock, m, gs.group, &e.instance))
        })
        .collect()
}

pub fn why_late(
    p: &Profile,
    clock: &Alignment,
    m: &Matching,
    group: usize,
    inst: &InstanceSkew,
) -> Why {
    let g = &m.groups[group];
    let (row, start, peer) = super::launch::late_and_first_peer(g, inst);
    let earliest = peer.map_or(start, |x| x.2.0);
    let lateness = start.saturating_sub(earliest);
    let mut missing = recorded_gaps(p, clock.row_file(p, row));
    let call = p.gpu.launch(row);
    let (mut cpu_ns, mut thread, mut cpu, mut resolvable) = (0, None, None, true);
    let (mut waits, mut off_cpu, mut on_cpu) = (Vec::new(), Vec::new(), None);
    let issued;
    let error = peer.map_or(0, |x| clock.rows_error_ns(p, row, x.1));
    if call == NONE {
        // When it was issued is unknown: no part of the delay is the CPU's
        // or the GPU's (it is not all the GPU's because no call was found).
        missing.push(Missing::LaunchCall);
        issued = start;
    } else {
        // A graph kernel's call is its cudaGraphLaunch: a launch like any.
        let call = call as usize;
        let end = clock.runtime_span(p, call).1;
        resolvable = end.saturating_sub(earliest).unsigned_abs() > error.unsigned_abs();
        cpu_ns = end.saturating_sub(earliest).max(0);
        issued = end.max(earliest);
        let t = p.runtime.thread(call);
        thread = Some(t);
        let window = (earliest, earliest + cpu_ns);
        cpu = Some(thread_account(p, clock, t, window));
        waits = waited_for(p, clock, t, window);
        off_cpu = cpu_state::off_cpu(p, clock, t, window);
        on_cpu = cpu_state::on_cpu(p, clock, t, window);
    }
    let gpu_ns = start.saturating_sub(issued);
    let mut why = Why {
        group,
        instance: inst.index,
        device: g.devices[inst.late],
        row,
        lateness_ns: lateness,
        cpu_ns,
        gpu_ns,
        thread,
        cpu,
        gpu_chain: if gpu_ns > 0 {
            super::gpu_chain::chain(p, clock, row, (issued, start))
        } else {
            Vec::new()
        },
        waits,
        off_cpu,
        on_cpu,
        missing,
        resolvable,
        clock_error_ns: error,
    };
    // Only GPU time that nothing recorded explains can be what a graph's
    // unrecorded dependencies held.
    if p.gpu.graph_node(row) != NO_GRAPH && why.gpu_unexplained_ns() > GPU_LATENCY_NS {
        why.missing.push(Missing::Graph);
    }
    why
}

/// For each sync call of `thread` overlapping `window`, the GPU work of
/// its process that ended last while the call ran.
pub fn waited_for(
    p: &Profile,
    clock: &Alignment,
    thread: ThreadId,
    window: (i64, i64),
) -> Vec<Waited> {
    let Some(rows) = p.runtime_by_thread.get(thread as usize) else {
        return Vec::new();
    };
    let lanes = process_lanes(p, thread);
    let mut out = Vec::new();
    for r in rows.clone() {
        let (s, e) = clock.runtime_span(p, r);
        if s >= window.1 {
            break;
        }
        if e <= window.0 {
            continue;
        }
        out.extend(waited_for_call(p, clock, &lanes, r));
    }
    out
}

/// The streams of `thread`'s process: where its sync calls wait.
pub fn process_lanes(p: &Profile, thread: ThreadId) -> Vec<LaneId> {
    let process = p.threads[thread as usize].process;
    (0..p.lanes.len() as LaneId)
        .filter(|&l| p.lanes[l as usize].process == process)
        .collect()
}

/// If runtime call `r` is a sync call, the GPU work on `lanes` (its
/// process's) that ended last while it ran.
pub fn waited_for_call(
    p: &Profile,
    clock: &Alignment,
    lanes: &[LaneId],
    r: usize,
) -> Option<Waited> {
    let (s, e) = clock.runtime_span(p, r);
    let name = p.runtime.name(r);
    if !super::account::is_sync_call(p.strings.get(name)) {
        return None;
    }
    let w = super::window::Window { start: s, end: e };
    let (lane, row, _, _) = lanes
        .iter()
        .flat_map(|&l| {
            clock
                .lane_rows(p, l, w, 0)
                .map(move |(i, a, b)| (l, i, a, b))
        })
        .filter(|&(_, _, a, b)| b >= s && b <= e && a < b)
        .max_by_key(|&(_, i, _, b)| (b, std::cmp::Reverse(i)))?;
    let (start_ns, end_ns) = clock.gpu_span(p, row);
    Some(Waited {
        call: r,
        name,
        row,
        lane,
        start_ns,
        end_ns,
    })
}

/// What file `f` did not record (or rankline does not read) of the tables
/// the CPU account uses.
fn recorded_gaps(p: &Profile, f: usize) -> Vec<Missing> {
    use crate::profile::spec::{CUDA_EVENTS, OSRT, RUNTIME, SAMPLES, SCHED, SYNCS};
    let has = |t: &str| p.files[f].has_table(t);
    let mut out = Vec::new();
    if !has(OSRT.table) {
        out.push(Missing::Osrt);
    }
    if !has(SCHED.table) {
        out.push(Missing::Sched);
    }
    if !has(SAMPLES.table) {
        out.push(Missing::Samples);
    }
    if !has(SYNCS.table) || !has(CUDA_EVENTS.table) {
        out.push(Missing::Syncs);
    }
    if !has(RUNTIME.table) {
        out.push(Missing::Runtime);
    }
    out
}
