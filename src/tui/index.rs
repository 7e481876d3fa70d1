//! Render support built once after loading: a category per event and
//! per-track prefix sums of durations, so a timeline cell's busy time is
//! two binary searches whatever the zoom (no scan of all events per frame).

use crate::analysis::kernel_class::KernelClasses;
use crate::analysis::nccl_name::CollOp;
use crate::profile::{GpuKind, GpuRows, NvtxKind, Profile, RuntimeRows, Sym, ThreadId};

/// What an event is, for colour and glyph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Cat {
    Compute = 0,
    Memcpy,
    Memset,
    AllReduce,
    AllGather,
    ReduceScatter,
    Broadcast,
    Reduce,
    SendRecv,
    AllToAll,
    CommOther,
    Api,
    Launch,
    Nvtx,
    /// An OS runtime call (`--trace=osrt`).
    Osrt,
    /// The thread descheduled (sched events).
    OffCpu,
    /// A CPU sample: the thread running there.
    Sample,
}

impl Cat {
    pub const ALL: [Cat; 17] = [
        Cat::Compute,
        Cat::Memcpy,
        Cat::Memset,
        Cat::AllReduce,
        Cat::AllGather,
        Cat::ReduceScatter,
        Cat::Broadcast,
        Cat::Reduce,
        Cat::SendRecv,
        Cat::AllToAll,
        Cat::CommOther,
        Cat::Api,
        Cat::Launch,
        Cat::Nvtx,
        Cat::Osrt,
        Cat::OffCpu,
        Cat::Sample,
    ];

    pub fn from_u8(v: u8) -> Cat {
        Cat::ALL.get(v as usize).copied().unwrap_or(Cat::Compute)
    }

    pub fn of_op(op: CollOp) -> Cat {
        match op {
            CollOp::AllReduce => Cat::AllReduce,
            CollOp::AllGather => Cat::AllGather,
            CollOp::ReduceScatter => Cat::ReduceScatter,
            CollOp::Broadcast => Cat::Broadcast,
            CollOp::Reduce => Cat::Reduce,
            CollOp::SendRecv => Cat::SendRecv,
            CollOp::AllToAll => Cat::AllToAll,
            CollOp::Other => Cat::CommOther,
        }
    }

    pub fn is_comm(self) -> bool {
        (Cat::AllReduce as u8..=Cat::CommOther as u8).contains(&(self as u8))
    }

    pub fn label(self) -> &'static str {
        match self {
            Cat::Compute => "compute kernel",
            Cat::Memcpy => "memcpy",
            Cat::Memset => "memset",
            Cat::AllReduce => "AllReduce",
            Cat::AllGather => "AllGather",
            Cat::ReduceScatter => "ReduceScatter",
            Cat::Broadcast => "Broadcast",
            Cat::Reduce => "Reduce",
            Cat::SendRecv => "SendRecv",
            Cat::AllToAll => "AllToAll",
            Cat::CommOther => "other communication",
            Cat::Api => "CUDA API call",
            Cat::Launch => "launch call",
            Cat::Nvtx => "NVTX range",
            Cat::Osrt => "OS runtime call",
            Cat::OffCpu => "thread descheduled (off-CPU)",
            Cat::Sample => "CPU sample (density: thread on-CPU)",
        }
    }
}

/// A time-sorted list of events, as the timeline reads it.
#[derive(Debug, Clone, Copy)]
pub struct Track<'a> {
    pub start: &'a [i64],
    pub end: &'a [i64],
    pub cat: Cats<'a>,
    /// Block summaries of the track.
    pub summary: &'a Summary,
    /// Source row of event `i`: `first + i`, or `rows[i]`.
    pub first: usize,
    pub rows: Option<&'a [u32]>,
    /// Events shorter than this are not drawn (0: every event is); set
    /// with the summary of the others by `Filtered::apply`.
    pub min_dur: i64,
}

/// The category of each event of a track, read where it is known rather
/// than copied per event: a kernel's from its name, a call's from whether
/// it launches, a track's one category for NVTX and CPU tracks.
#[derive(Debug, Clone, Copy)]
pub enum Cats<'a> {
    /// The same for every event.
    All(u8),
    /// GPU rows from `first`: memcpy, memset, or the kernel name's category.
    Gpu {
        rows: &'a GpuRows,
        first: usize,
        by_name: &'a [u8],
    },
    /// Runtime rows from `first`: a launch or another call.
    Runtime { rows: &'a RuntimeRows, first: usize },
    /// One per event (tests).
    Each(&'a [u8]),
}

impl Cats<'_> {
    /// The category of event `i` of the track.
    #[inline]
    pub fn get(&self, i: usize) -> u8 {
        match *self {
            Cats::All(c) => c,
            Cats::Gpu {
                rows,
                first,
                by_name,
            } => gpu_cat(rows, first + i, by_name) as u8,
            Cats::Runtime { rows, first } => {
                if rows.is_launch(first + i) {
                    Cat::Launch as u8
                } else {
                    Cat::Api as u8
                }
            }
            Cats::Each(c) => c[i],
        }
    }
}

/// The category of GPU row `r`.
#[inline]
fn gpu_cat(rows: &GpuRows, r: usize, by_name: &[u8]) -> Cat {
    match rows.kind_and_name(r) {
        (GpuKind::Memcpy, _) => Cat::Memcpy,
        (GpuKind::Memset, _) => Cat::Memset,
        (GpuKind::Kernel, name) => Cat::from_u8(
            by_name
                .get(name as usize)
                .copied()
                .unwrap_or(Cat::Compute as u8),
        ),
    }
}

impl Track<'_> {
    pub fn len(&self) -> usize {
        self.start.len()
    }

    /// Whether event `k` is drawn: as long as the minimum duration.
    #[inline]
    pub fn shown(&self, k: usize) -> bool {
        self.lasts(k, self.min_dur)
    }

    /// Whether event `k` lasts `min_dur` or longer (any event does for 0).
    #[inline]
    pub fn lasts(&self, k: usize, min_dur: i64) -> bool {
        min_dur <= 0 || self.end[k].saturating_sub(self.start[k]) >= min_dur
    }

    /// Σ durations of the drawn events `i..j`: whole blocks from their
    /// summaries, the rows of the two partial blocks read (at most 2 ×
    /// BLOCK).
    pub fn busy(&self, i: usize, j: usize) -> i64 {
        let d = |k: usize| {
            if self.shown(k) {
                self.end[k].saturating_sub(self.start[k]).max(0)
            } else {
                0
            }
        };
        let sum = |r: std::ops::Range<usize>| r.map(d).fold(0i64, i64::saturating_add);
        let (bi, bj) = (i.div_ceil(BLOCK), j / BLOCK);
        if bi >= bj {
            return sum(i..j);
        }
        let p = &self.summary.block_prefix;
        sum(i..bi * BLOCK)
            .saturating_add(p[bj] - p[bi])
            .saturating_add(sum(bj * BLOCK..j))
    }
    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }
    /// The profile row of event `i`.
    pub fn row(&self, i: usize) -> usize {
        match self.rows {
            Some(r) => r[i] as usize,
            None => self.first + i,
        }
    }
}

/// NVTX ranges of one thread at one nesting depth (or its start/end ranges).
/// Which tracks a thread has is known at once (its lanes); a track's
/// events are gathered the first time something reads them — a lane
/// drawn, an event looked up — so a job of a thousand ranks holds the
/// tracks it has shown, not a copy of every range.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct NvtxTrack {
    pub thread: ThreadId,
    /// Push/pop depth; `None` for the start/end ranges.
    pub depth: Option<u16>,
    #[serde(skip)]
    events: std::sync::OnceLock<NvtxEvents>,
}

/// A track's ranges in time order: their times, summary and profile rows.
#[derive(Debug, Clone)]
struct NvtxEvents {
    start: Vec<i64>,
    end: Vec<i64>,
    summary: Summary,
    rows: Vec<u32>,
}

impl NvtxTrack {
    fn events(&self, p: &Profile) -> &NvtxEvents {
        self.events.get_or_init(|| {
            let n = &p.nvtx;
            let rows: Vec<u32> = p.nvtx_by_thread[self.thread as usize]
                .clone()
                .filter(|&i| match (n.kind(i), self.depth) {
                    (NvtxKind::PushPop, Some(d)) => n.depth(i) == d,
                    (NvtxKind::StartEnd, None) => true,
                    _ => false,
                })
                .map(|i| i as u32)
                .collect();
            let start: Vec<i64> = rows.iter().map(|&i| n.start(i as usize)).collect();
            let end: Vec<i64> = rows.iter().map(|&i| n.end(i as usize)).collect();
            NvtxEvents {
                summary: summarize(&start, &end, Cats::All(Cat::Nvtx as u8)),
                start,
                end,
                rows,
            }
        })
    }
}

/// What a thread's CPU track shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CpuTrackKind {
    /// OS runtime calls (rows of `Profile::osrt`).
    Osrt,
    /// Descheduled spans, switch out to switch in (rows: the switch out).
    OffCpu,
    /// CPU samples, each half a sampling period either side (rows of
    /// `Profile::samples`).
    Samples,
}

impl CpuTrackKind {
    fn cat(self) -> Cat {
        match self {
            CpuTrackKind::Osrt => Cat::Osrt,
            CpuTrackKind::OffCpu => Cat::OffCpu,
            CpuTrackKind::Samples => Cat::Sample,
        }
    }
}

/// One CPU thread's OS runtime calls, descheduled spans or samples.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CpuTrack {
    pub thread: ThreadId,
    pub kind: CpuTrackKind,
    #[serde(with = "crate::binary::packed")]
    start: Vec<i64>,
    #[serde(with = "crate::binary::packed")]
    end: Vec<i64>,
    summary: Summary,
    #[serde(with = "crate::binary::packed")]
    rows: Vec<u32>,
}

impl CpuTrack {
    fn new(thread: ThreadId, kind: CpuTrackKind, events: Vec<(i64, i64, u32)>) -> CpuTrack {
        let cat = kind.cat() as u8;
        let start: Vec<i64> = events.iter().map(|e| e.0).collect();
        let end: Vec<i64> = events.iter().map(|e| e.1).collect();
        CpuTrack {
            thread,
            kind,
            summary: summarize(&start, &end, Cats::All(cat)),
            start,
            end,
            rows: events.iter().map(|e| e.2).collect(),
        }
    }

    fn fits(&self, p: &Profile) -> bool {
        let n = self.rows.len();
        let rows = match self.kind {
            CpuTrackKind::Osrt => p.osrt.len(),
            CpuTrackKind::OffCpu => p.sched.len(),
            CpuTrackKind::Samples => p.samples.len(),
        };
        (self.thread as usize) < p.threads.len()
            && self.start.len() == n
            && self.end.len() == n
            && self.rows.iter().all(|&r| (r as usize) < rows)
            && self.summary.fits(n)
    }
}

/// The CPU tracks of thread `t` (file clock, as every track): its OS
/// runtime calls, its descheduled spans (a switch out with no switch back
/// lasts to the capture's end) and its samples.
fn cpu_tracks(p: &Profile, t: ThreadId) -> Vec<CpuTrack> {
    let ti = t as usize;
    let mut out = Vec::new();
    let osrt: Vec<(i64, i64, u32)> = p.osrt_by_thread[ti]
        .clone()
        .map(|r| (p.osrt.start(r), p.osrt.end(r), r as u32))
        .collect();
    if !osrt.is_empty() {
        out.push(CpuTrack::new(t, CpuTrackKind::Osrt, osrt));
    }
    let file_end = p.files[p.thread_file(t)].capture_end_ns;
    let off: Vec<(i64, i64, u32)> = crate::analysis::cpu_state::descheduled_rows(p, t)
        .into_iter()
        .map(|(left, back)| {
            let a = p.sched.start(left);
            let b = back.map_or(file_end.unwrap_or(a), |r| p.sched.start(r));
            (a, b.max(a), left as u32)
        })
        .collect();
    if !off.is_empty() {
        out.push(CpuTrack::new(t, CpuTrackKind::OffCpu, off));
    }
    let rows = p.samples_by_thread.get(ti).cloned().unwrap_or(0..0);
    let times: Vec<i64> = rows.clone().map(|r| p.samples.start(r)).collect();
    if !times.is_empty() {
        let h = crate::analysis::cpu_state::period_of_times(&times) / 2;
        let samples = rows
            .zip(&times)
            .map(|(r, &at)| (at.saturating_sub(h), at.saturating_add(h), r as u32))
            .collect();
        out.push(CpuTrack::new(t, CpuTrackKind::Samples, samples));
    }
    out
}

/// Per-event categories and per-track prefix sums.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct RenderIndex {
    /// Per kernel name (a symbol of the profile's strings): its category.
    /// Per name, not per row: a job of 16 M kernels has a few hundred.
    #[serde(with = "crate::binary::packed")]
    name_cat: Vec<u8>,
    gpu_summary: Vec<Summary>,
    rt_summary: Vec<Summary>,
    pub nvtx_tracks: Vec<NvtxTrack>,
    /// Per lane: it has NCCL kernels / any kernel.
    pub lane_has_comm: Vec<bool>,
    pub lane_has_kernel: Vec<bool>,
    /// Per lane: it has kernels that are not communication.
    pub lane_has_compute: Vec<bool>,
    /// Thread → its NVTX tracks, depth order, start/end ranges last.
    pub nvtx_of_thread: Vec<Vec<usize>>,
    /// OS runtime, off-CPU and sample tracks, and each thread's.
    pub cpu_tracks: Vec<CpuTrack>,
    pub cpu_of_thread: Vec<Vec<usize>>,
}

/// Rows per block of a [`Summary`].
pub const BLOCK: usize = 64;

/// What a zoomed-out cell needs without touching every row: per block of
/// [`BLOCK`] rows its first start, the busy time before it and the
/// category of its longest event. A fraction of a byte per event (no
/// per-event sums: a slice's partial blocks are summed from the rows), so
/// a job's index grows with its blocks, not its events; a cell that spans
/// thousands of rows reads a few cache lines, not thousands.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    #[serde(with = "crate::binary::packed")]
    pub block_start: Vec<i64>,
    /// Σ durations of the events before each block boundary (blocks + 1
    /// entries): busy time of any run of blocks in one subtraction.
    #[serde(with = "crate::binary::packed")]
    pub block_prefix: Vec<i64>,
    #[serde(with = "crate::binary::packed")]
    pub block_cat: Vec<u8>,
}

impl Summary {
    /// Whether this can be the summary of `n` events (a stored one is
    /// checked before use).
    fn fits(&self, n: usize) -> bool {
        let blocks = n.div_ceil(BLOCK);
        self.block_start.len() == blocks
            && self.block_prefix.len() == blocks + 1
            && self.block_cat.len() == blocks
    }
}

pub fn summarize(start: &[i64], end: &[i64], cat: Cats) -> Summary {
    summarize_min(start, end, cat, 0)
}

/// The summary of the events of `min_dur` or longer (block starts stay
/// every event's: they place rows, not busy time). A block with none of
/// them gets the category of its first event; it adds no busy time.
pub fn summarize_min(start: &[i64], end: &[i64], cat: Cats, min_dur: i64) -> Summary {
    let blocks = start.len().div_ceil(BLOCK);
    let mut out = Summary {
        block_start: Vec::with_capacity(blocks),
        block_prefix: Vec::with_capacity(blocks + 1),
        block_cat: Vec::with_capacity(blocks),
    };
    let mut sum = 0i64;
    out.block_prefix.push(0);
    for b in 0..blocks {
        let rows = b * BLOCK..((b + 1) * BLOCK).min(start.len());
        out.block_start.push(start[rows.start]);
        let d = |i: usize| {
            let d = end[i].saturating_sub(start[i]);
            if min_dur > 0 && d < min_dur { 0 } else { d }
        };
        // Reversed or extreme timestamps (a damaged file) add no busy time
        // and must not wrap.
        for i in rows.clone() {
            sum = d(i).max(0).saturating_add(sum);
        }
        out.block_prefix.push(sum);
        let longest = rows
            .clone()
            .max_by_key(|&i| (d(i), std::cmp::Reverse(i)))
            .unwrap_or(rows.start);
        out.block_cat.push(cat.get(longest));
    }
    out
}

impl RenderIndex {
    pub fn build(p: &Profile, classes: &KernelClasses) -> RenderIndex {
        let g = &p.gpu;
        let name_cat: Vec<u8> = (0..p.strings.len() as Sym)
            .map(|name| {
                classes
                    .comm_by_name(name)
                    .map_or(Cat::Compute, |k| Cat::of_op(k.op)) as u8
            })
            .collect();
        let gpu_cats = |first: usize| Cats::Gpu {
            rows: g,
            first,
            by_name: &name_cat,
        };
        let gpu_summary = p
            .lanes
            .iter()
            .map(|l| {
                summarize(
                    g.starts(l.rows.clone()),
                    g.ends(l.rows.clone()),
                    gpu_cats(l.rows.start),
                )
            })
            .collect();
        let r = &p.runtime;
        let rt_summary = p
            .runtime_by_thread
            .iter()
            .map(|rows| {
                summarize(
                    r.starts(rows.clone()),
                    r.ends(rows.clone()),
                    Cats::Runtime {
                        rows: r,
                        first: rows.start,
                    },
                )
            })
            .collect();
        let mut nvtx_tracks = Vec::new();
        let mut nvtx_of_thread = vec![Vec::new(); p.threads.len()];
        let n = &p.nvtx;
        for (t, rows) in p.nvtx_by_thread.iter().enumerate() {
            // The thread's tracks: one per depth up to its deepest push/pop
            // range, and one for its start/end ranges if it has any.
            let mut depths = 0usize;
            let mut start_end = false;
            for i in rows.clone() {
                match n.kind(i) {
                    NvtxKind::PushPop => depths = depths.max(n.depth(i) as usize + 1),
                    NvtxKind::StartEnd => start_end = true,
                    NvtxKind::Mark => {}
                }
            }
            let tracks = (0..depths)
                .map(|d| Some(d as u16))
                .chain(start_end.then_some(None));
            for depth in tracks {
                nvtx_of_thread[t].push(nvtx_tracks.len());
                nvtx_tracks.push(NvtxTrack {
                    thread: t as ThreadId,
                    depth,
                    events: Default::default(),
                });
            }
        }
        let mut cpu_tracks_all = Vec::new();
        let mut cpu_of_thread = vec![Vec::new(); p.threads.len()];
        for (t, mine) in cpu_of_thread.iter_mut().enumerate() {
            for tr in cpu_tracks(p, t as ThreadId) {
                mine.push(cpu_tracks_all.len());
                cpu_tracks_all.push(tr);
            }
        }
        let lane_has = |pred: &dyn Fn(u8) -> bool| -> Vec<bool> {
            p.lanes
                .iter()
                .map(|l| {
                    let cats = gpu_cats(l.rows.start);
                    (0..l.rows.len()).any(|i| pred(cats.get(i)))
                })
                .collect()
        };
        let lane_has_comm = lane_has(&|c| Cat::from_u8(c).is_comm());
        let lane_has_kernel = lane_has(&|c| c != Cat::Memcpy as u8 && c != Cat::Memset as u8);
        let lane_has_compute = lane_has(&|c| c == Cat::Compute as u8);
        RenderIndex {
            lane_has_compute,
            lane_has_comm,
            lane_has_kernel,
            name_cat,
            gpu_summary,
            rt_summary,
            nvtx_tracks,
            nvtx_of_thread,
            cpu_tracks: cpu_tracks_all,
            cpu_of_thread,
        }
    }

    /// The bytes the cache stores.
    pub fn encode(&self) -> Result<Vec<u8>, String> {
        crate::binary::to_bytes(self).map_err(|e| e.to_string())
    }

    /// The index stored in `bytes`, if it decodes and fits `p`.
    pub fn decode(bytes: &[u8], p: &Profile) -> Result<RenderIndex, String> {
        let index: RenderIndex = crate::binary::from_bytes(bytes).map_err(|e| e.to_string())?;
        if index.fits(p) {
            Ok(index)
        } else {
            Err("stored render index does not fit the profile".into())
        }
    }

    /// Whether every length and id fits `p`: what the drawing code indexes
    /// without checking.
    fn fits(&self, p: &Profile) -> bool {
        let lanes = p.lanes.len();
        // A track's events are gathered from the profile itself: only its
        // thread can be wrong.
        let tracks_fit = self
            .nvtx_tracks
            .iter()
            .all(|t| (t.thread as usize) < p.threads.len());
        // Every name a row can have has its category (the reader indexes
        // `name_cat` by the row's symbol, so a short table is a fault).
        self.name_cat.len() == p.strings.len()
            && self.gpu_summary.len() == lanes
            && p.lanes
                .iter()
                .zip(&self.gpu_summary)
                .all(|(l, s)| s.fits(l.rows.len()))
            && self.rt_summary.len() == p.runtime_by_thread.len()
            && p.runtime_by_thread
                .iter()
                .zip(&self.rt_summary)
                .all(|(r, s)| s.fits(r.len()))
            && tracks_fit
            && [
                &self.lane_has_comm,
                &self.lane_has_kernel,
                &self.lane_has_compute,
            ]
            .iter()
            .all(|v| v.len() == lanes)
            && self.cpu_tracks.iter().all(|t| t.fits(p))
            && self.cpu_of_thread.len() == p.threads.len()
            && self
                .cpu_of_thread
                .iter()
                .flatten()
                .all(|&t| t < self.cpu_tracks.len())
            && self.nvtx_of_thread.len() == p.threads.len()
            && self
                .nvtx_of_thread
                .iter()
                .flatten()
                .all(|&t| t < self.nvtx_tracks.len())
    }

    pub fn gpu_track<'a>(&'a self, p: &'a Profile, lane: usize) -> Track<'a> {
        let rows = p.lanes[lane].rows.clone();
        Track {
            start: p.gpu.starts(rows.clone()),
            end: p.gpu.ends(rows.clone()),
            cat: Cats::Gpu {
                rows: &p.gpu,
                first: rows.start,
                by_name: &self.name_cat,
            },
            summary: &self.gpu_summary[lane],
            first: rows.start,
            rows: None,
            min_dur: 0,
        }
    }

    pub fn api_track<'a>(&'a self, p: &'a Profile, thread: usize) -> Track<'a> {
        let rows = p.runtime_by_thread[thread].clone();
        Track {
            start: p.runtime.starts(rows.clone()),
            end: p.runtime.ends(rows.clone()),
            cat: Cats::Runtime {
                rows: &p.runtime,
                first: rows.start,
            },
            summary: &self.rt_summary[thread],
            first: rows.start,
            rows: None,
            min_dur: 0,
        }
    }

    pub fn cpu_track(&self, track: usize) -> Track<'_> {
        let t = &self.cpu_tracks[track];
        Track {
            start: &t.start,
            end: &t.end,
            cat: Cats::All(t.kind.cat() as u8),
            summary: &t.summary,
            first: 0,
            rows: Some(&t.rows),
            min_dur: 0,
        }
    }

    pub fn nvtx_track<'a>(&'a self, p: &Profile, track: usize) -> Track<'a> {
        let t = self.nvtx_tracks[track].events(p);
        Track {
            start: &t.start,
            end: &t.end,
            cat: Cats::All(Cat::Nvtx as u8),
            summary: &t.summary,
            first: 0,
            rows: Some(&t.rows),
            min_dur: 0,
        }
    }

    pub fn gpu_cat(&self, p: &Profile, row: usize) -> Cat {
        gpu_cat(&p.gpu, row, &self.name_cat)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Profile {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(format!("{name}.sqlite"));
        let plan = crate::profile::LoadPlan::default();
        crate::profile::load(&crate::profile::files(&[path]), &plan, &mut |_, _, _| {}).profile
    }

    /// NVTX tracks hold their ranges only once read, and then exactly the
    /// thread's ranges of that depth, in time order.
    #[test]
    fn an_nvtx_track_gathers_its_ranges_when_first_read() {
        let p = fixture("megatron_tp8");
        let index = RenderIndex::build(&p, &KernelClasses::new(&p, None));
        assert!(!index.nvtx_tracks.is_empty());
        assert!(index.nvtx_tracks.iter().all(|t| t.events.get().is_none()));
        let (tr, t) = index
            .nvtx_tracks
            .iter()
            .enumerate()
            .find(|(_, t)| t.depth == Some(1))
            .unwrap();
        let track = index.nvtx_track(&p, tr);
        let want: Vec<usize> = p.nvtx_by_thread[t.thread as usize]
            .clone()
            .filter(|&i| p.nvtx.kind(i) == NvtxKind::PushPop && p.nvtx.depth(i) == 1)
            .collect();
        assert!(!want.is_empty());
        assert_eq!(
            (0..track.len()).map(|i| track.row(i)).collect::<Vec<_>>(),
            want
        );
        assert!(track.start.windows(2).all(|w| w[0] <= w[1]));
        let gathered = index
            .nvtx_tracks
            .iter()
            .filter(|t| t.events.get().is_some());
        assert_eq!(gathered.count(), 1, "only the track read");
    }

    #[test]
    fn a_stored_index_reads_back_and_only_for_its_own_profile() {
        let (big, small) = (fixture("megatron_tp8"), fixture("shared_stream_two_comms"));
        let index = RenderIndex::build(&big, &KernelClasses::new(&big, None));
        let bytes = index.encode().unwrap();
        let back = RenderIndex::decode(&bytes, &big).unwrap();
        assert_eq!(back.encode().unwrap(), bytes);
        assert_eq!(back.name_cat, index.name_cat);
        let err = RenderIndex::decode(&bytes, &small).unwrap_err();
        assert!(err.contains("does not fit"), "{err}");
        assert!(RenderIndex::decode(&bytes[..bytes.len() - 1], &big).is_err());
    }
}
