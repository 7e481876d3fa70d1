//! The timeline's rows: per device a header (its busy occupancy), one row
//! per stream, then per CPU thread that launches work a CUDA API row and its
//! NVTX rows. Devices the summary marks missing keep a row saying so. With
//! several hosts, each host's devices sit under a host header (host →
//! device → stream) that collapses the whole host.

use super::index::{CpuTrackKind, RenderIndex};
use super::selection::EventRef;
use crate::analysis::Analysis;
use crate::analysis::clock::Alignment;
use crate::analysis::completeness::device_order;
use crate::analysis::why::Why;
use crate::profile::{DevId, LaneId, NONE, ProcId, Profile, ThreadId};
use std::collections::HashSet;

/// What a timeline row shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LaneKind {
    /// All devices of a host (index into `Profile::hosts`), merged; only
    /// when the files come from several hosts.
    Host(u32),
    /// All streams of a device, merged.
    Device(DevId),
    /// A device with a CUDA context but no GPU activity.
    Missing(DevId),
    Stream(LaneId),
    /// CUDA runtime and driver calls of a thread.
    Api(ThreadId),
    /// An NVTX track (index into `RenderIndex::nvtx_tracks`).
    Nvtx(usize),
    /// A thread's OS runtime calls, descheduled spans or CPU samples
    /// (index into `RenderIndex::cpu_tracks`).
    Cpu(usize),
}

/// One row of the timeline.
#[derive(Debug, Clone)]
pub struct LaneRow {
    pub kind: LaneKind,
    pub label: String,
    /// Rows below a collapsible row are hidden when it is collapsed.
    pub collapsible: bool,
}

/// The device a row belongs to: its own, or for a CPU row the first device
/// its process has a context on.
pub fn row_device(p: &Profile, idx: &RenderIndex, kind: LaneKind) -> Option<DevId> {
    match kind {
        LaneKind::Device(d) | LaneKind::Missing(d) => Some(d),
        LaneKind::Stream(l) => Some(p.lanes[l as usize].device),
        _ => {
            let process = row_process(p, idx, kind)?;
            p.contexts
                .iter()
                .find(|c| c.process == process)
                .map(|c| c.device)
        }
    }
}

fn stream_label(p: &Profile, idx: &RenderIndex, lane: LaneId) -> String {
    let l = &p.lanes[lane as usize];
    let what = stream_kind(
        idx.lane_has_comm[lane as usize],
        idx.lane_has_compute[lane as usize],
        idx.lane_has_kernel[lane as usize],
    );
    format!("{} S{} {what}", p.device_label(l.device).tag(), l.stream)
}

/// What a stream lane carries: `NCCL` only when its kernels are all
/// communication, `mixed` when it has both kinds.
fn stream_kind(has_comm: bool, has_compute: bool, has_kernel: bool) -> &'static str {
    match (has_comm, has_compute) {
        (true, true) => "mixed",
        (true, false) => "NCCL",
        (false, _) if has_kernel => "compute",
        (false, _) => "copy",
    }
}

/// The first device each process has a context on.
fn home_devices(p: &Profile) -> Vec<Option<DevId>> {
    let order = device_order(p);
    let rank: Vec<usize> = {
        let mut r = vec![usize::MAX; p.devices.len()];
        for (i, &d) in order.iter().enumerate() {
            r[d as usize] = i;
        }
        r
    };
    let mut home: Vec<Option<DevId>> = vec![None; p.processes.len()];
    for c in &p.contexts {
        let h = &mut home[c.process as usize];
        if h.is_none_or(|d| rank[c.device as usize] < rank[d as usize]) {
            *h = Some(c.device);
        }
    }
    home
}

fn thread_rows(
    p: &Profile,
    idx: &RenderIndex,
    t: ThreadId,
    prefix: &str,
    collapsed: &HashSet<LaneKind>,
    out: &mut Vec<LaneRow>,
) {
    let has_api = !p.runtime_by_thread[t as usize].is_empty();
    let tracks = &idx.nvtx_of_thread[t as usize];
    let cpu = &idx.cpu_of_thread[t as usize];
    // A thread with only scheduling events (any thread of the machine)
    // gets no rows of its own.
    let only_sched = cpu
        .iter()
        .all(|&c| idx.cpu_tracks[c].kind == CpuTrackKind::OffCpu);
    if !has_api && tracks.is_empty() && only_sched {
        return;
    }
    let th = &p.threads[t as usize];
    let name = format!("{prefix}T{}", th.tid);
    out.push(LaneRow {
        kind: LaneKind::Api(t),
        label: format!("{name} API"),
        collapsible: !tracks.is_empty() || !cpu.is_empty(),
    });
    if collapsed.contains(&LaneKind::Api(t)) {
        return;
    }
    for &tr in tracks {
        out.push(LaneRow {
            kind: LaneKind::Nvtx(tr),
            label: nvtx_label(idx, tr, &name),
            collapsible: false,
        });
    }
    for &c in cpu {
        out.push(LaneRow {
            kind: LaneKind::Cpu(c),
            label: format!("{name} {}", cpu_word(idx, c)),
            collapsible: false,
        });
    }
}

/// Ranks above which hosts start collapsed, on the timeline and in the
/// straggler map: a thousand ranks are read host by host.
pub const COLLAPSE_HOSTS_ABOVE: usize = 256;

/// Whether a job whose ranks are on the hosts `host_of_rank` names opens
/// with its hosts collapsed: past [`COLLAPSE_HOSTS_ABOVE`] ranks, on more
/// than one host (one host collapsed would hide everything).
pub fn hosts_start_collapsed(host_of_rank: &[u32]) -> bool {
    host_of_rank.len() > COLLAPSE_HOSTS_ABOVE && host_of_rank.iter().any(|&h| h != host_of_rank[0])
}

/// All rows, in display order, honouring collapsed rows.
pub fn build(
    p: &Profile,
    a: &Analysis,
    idx: &RenderIndex,
    collapsed: &HashSet<LaneKind>,
) -> Vec<LaneRow> {
    let mut out = Vec::new();
    let home = home_devices(p);
    let mut threads_of: Vec<Vec<ThreadId>> = vec![Vec::new(); p.devices.len()];
    let mut homeless: Vec<ThreadId> = Vec::new();
    for (t, th) in p.threads.iter().enumerate() {
        match home[th.process as usize] {
            Some(d) => threads_of[d as usize].push(t as ThreadId),
            None => homeless.push(t as ThreadId),
        }
    }
    let missing: HashSet<DevId> = a.completeness.missing.iter().copied().collect();
    let order = device_order(p);
    if p.hosts.len() <= 1 {
        for &d in &order {
            device_rows(p, idx, d, &threads_of, &missing, a, collapsed, &mut out);
        }
        for t in homeless {
            thread_rows(p, idx, t, "", collapsed, &mut out);
        }
        return out;
    }
    // Hosts in the order of their first device; threads of processes
    // without a device under their file's host.
    let mut hosts: Vec<u32> = Vec::new();
    for &d in &order {
        let h = p.devices[d as usize].host;
        if !hosts.contains(&h) {
            hosts.push(h);
        }
    }
    let host_of_thread = |t: ThreadId| {
        let file = p.processes[p.threads[t as usize].process as usize].file as usize;
        p.files.get(file).map_or(0, |f| f.host_index)
    };
    for &t in &homeless {
        let h = host_of_thread(t);
        if !hosts.contains(&h) {
            hosts.push(h);
        }
    }
    for h in hosts {
        let devices: Vec<DevId> = order
            .iter()
            .copied()
            .filter(|&d| p.devices[d as usize].host == h)
            .collect();
        out.push(LaneRow {
            kind: LaneKind::Host(h),
            label: host_label(p, h, &devices),
            collapsible: true,
        });
        if collapsed.contains(&LaneKind::Host(h)) {
            continue;
        }
        for &d in &devices {
            device_rows(p, idx, d, &threads_of, &missing, a, collapsed, &mut out);
        }
        let prefix = format!("{} ", p.host_label(h));
        for &t in homeless.iter().filter(|&&t| host_of_thread(t) == h) {
            thread_rows(p, idx, t, &prefix, collapsed, &mut out);
        }
    }
    out
}

/// `node03 · 8 GPUs · r0-7`: the host's short name, its GPUs and the
/// ranks they carry.
fn host_label(p: &Profile, h: u32, devices: &[DevId]) -> String {
    let mut label = p.host_label(h).to_string();
    if !devices.is_empty() {
        let n = devices.len();
        label += &format!(" · {n} GPU{}", if n == 1 { "" } else { "s" });
    }
    let mut ranks: Vec<u32> = devices
        .iter()
        .filter_map(|&d| p.devices[d as usize].rank)
        .collect();
    ranks.sort_unstable();
    ranks.dedup();
    if !ranks.is_empty() {
        let runs = crate::analysis::completeness::rank_ranges(&ranks);
        label += &format!(" · r{}", runs.replace(", ", ",r"));
    }
    label
}

/// A device's header, its missing note, its streams and its threads.
#[allow(clippy::too_many_arguments)]
fn device_rows(
    p: &Profile,
    idx: &RenderIndex,
    d: DevId,
    threads_of: &[Vec<ThreadId>],
    missing: &HashSet<DevId>,
    a: &Analysis,
    collapsed: &HashSet<LaneKind>,
    out: &mut Vec<LaneRow>,
) {
    let mut lanes: Vec<LaneId> = (0..p.lanes.len() as LaneId)
        .filter(|&l| p.lanes[l as usize].device == d)
        .collect();
    let expected = a.completeness.expected.contains(&d);
    if lanes.is_empty() && !expected {
        return;
    }
    lanes.sort_by_key(|&l| (p.lanes[l as usize].stream, p.lanes[l as usize].process));
    let dev = &p.devices[d as usize];
    let name = dev
        .name
        .clone()
        .unwrap_or_else(|| format!("GPU {}", dev.id));
    out.push(LaneRow {
        kind: LaneKind::Device(d),
        label: format!("{} {name}", p.device_label(d).tag()),
        collapsible: true,
    });
    if collapsed.contains(&LaneKind::Device(d)) {
        return;
    }
    if missing.contains(&d) {
        out.push(LaneRow {
            kind: LaneKind::Missing(d),
            label: format!("{} missing", p.device_label(d).tag()),
            collapsible: false,
        });
    }
    for l in lanes {
        out.push(LaneRow {
            kind: LaneKind::Stream(l),
            label: stream_label(p, idx, l),
            collapsible: false,
        });
    }
    let prefix = format!("{} ", p.device_label(d).tag());
    for &t in &threads_of[d as usize] {
        thread_rows(p, idx, t, &prefix, collapsed, out);
    }
}

/// Focus mode: only the selected group's streams, latest arriver first;
/// ranks whose capture lacks the instance last. Below the latest arriver,
/// what its account names: its launching thread's API and CPU rows (and
/// its NVTX rows, when the account says which range it was in), and every
/// stream a link of its GPU chain, the work a sync waited for or the
/// kernel it says competed is on.
pub fn focus(
    p: &Profile,
    a: &Analysis,
    idx: &RenderIndex,
    group: usize,
    instance: usize,
    why: Option<&Why>,
) -> Vec<LaneRow> {
    let g = &a.matching.groups[group];
    // Arrival offsets compare files: on the reference clock.
    let start = |d: usize| g.span(instance, d).map(|s| s.0);
    let earliest = g.members(instance).map(|m| m.2.0).min().unwrap_or(0);
    let mut order: Vec<usize> = (0..g.devices.len()).collect();
    order.sort_by_key(|&d| (start(d).is_none(), std::cmp::Reverse(start(d)), d));
    let mut out = Vec::with_capacity(order.len() + 1);
    for (i, d) in order.into_iter().enumerate() {
        let lane = &p.lanes[g.lanes[d] as usize];
        let (Some(row), Some(at)) = (g.row(instance, d), start(d)) else {
            // Recording while the others were in it: it never launched it.
            let never = crate::analysis::skew::never_started(p, g, &a.clock, instance, d, earliest)
                .is_some();
            out.push(LaneRow {
                kind: LaneKind::Stream(g.lanes[d]),
                label: format!(
                    "{} S{} {}",
                    p.device_label(lane.device).tag(),
                    lane.stream,
                    if never {
                        "never launched"
                    } else {
                        "not captured"
                    }
                ),
                collapsible: false,
            });
            continue;
        };
        let late_ms = (at - earliest) as f64 / 1e6;
        // No kind word: every focus row is one of the group's streams,
        // and the arrival offset is what must fit.
        out.push(LaneRow {
            kind: LaneKind::Stream(g.lanes[d]),
            label: format!(
                "{} S{} +{late_ms:.1}ms",
                p.device_label(lane.device).tag(),
                lane.stream
            ),
            collapsible: false,
        });
        let account = why.filter(|w| i == 0 && w.row == row);
        // The latest arriver's launching thread, right below it: a
        // cpu-late cause (a launch call that came late) shows there.
        let call = p.gpu.launch(row);
        if i == 0 && call != NONE {
            let t = p.runtime.thread(call as usize);
            let name = format!(
                "{} T{}",
                p.device_label(lane.device).tag(),
                p.threads[t as usize].tid
            );
            out.push(LaneRow {
                kind: LaneKind::Api(t),
                label: format!("{name} API"),
                collapsible: false,
            });
            // The range the account says the thread was in.
            if account.is_some_and(Why::names_nvtx) {
                for &tr in &idx.nvtx_of_thread[t as usize] {
                    out.push(LaneRow {
                        kind: LaneKind::Nvtx(tr),
                        label: nvtx_label(idx, tr, &name),
                        collapsible: false,
                    });
                }
            }
            for &c in &idx.cpu_of_thread[t as usize] {
                out.push(LaneRow {
                    kind: LaneKind::Cpu(c),
                    label: format!("{name} {}", cpu_word(idx, c)),
                    collapsible: false,
                });
            }
        }
        if let Some(w) = account {
            chain_rows(p, &a.clock, w, &mut out);
        }
    }
    out
}

/// The streams and threads the account names — its links', what its syncs
/// waited for, the kernel it says competed — each once, not already shown.
fn chain_rows(p: &Profile, clock: &Alignment, w: &Why, out: &mut Vec<LaneRow>) {
    let gpu = w
        .gpu_chain
        .iter()
        .map(|l| (l.lane, l.kind.name()))
        .chain(w.waits.iter().map(|v| (v.lane, "waited for")))
        .chain(w.competed(p, clock).map(|k| (k.lane, "competed")));
    for (lane, why) in gpu {
        if out.iter().any(|r| r.kind == LaneKind::Stream(lane)) {
            continue;
        }
        let l = &p.lanes[lane as usize];
        out.push(LaneRow {
            kind: LaneKind::Stream(lane),
            label: format!("{} S{} {why}", p.device_label(l.device).tag(), l.stream),
            collapsible: false,
        });
    }
    for late in w.gpu_chain.iter().filter_map(|l| l.late_launch.as_ref()) {
        if !out.iter().any(|r| r.kind == LaneKind::Api(late.thread)) {
            out.push(LaneRow {
                kind: LaneKind::Api(late.thread),
                label: format!("T{} API (link)", p.threads[late.thread as usize].tid),
                collapsible: false,
            });
        }
    }
}

/// An NVTX track's row label under its thread's `name`.
fn nvtx_label(idx: &RenderIndex, tr: usize, name: &str) -> String {
    match idx.nvtx_tracks[tr].depth {
        Some(d) => format!("{name} nvtx{d}"),
        None => format!("{name} nvtx±"),
    }
}

fn cpu_word(idx: &RenderIndex, c: usize) -> &'static str {
    match idx.cpu_tracks[c].kind {
        CpuTrackKind::Osrt => "OS",
        CpuTrackKind::OffCpu => "off-CPU",
        CpuTrackKind::Samples => "samples",
    }
}

/// Whether row `kind` shows event `e` (a device row shows all its GPU
/// events, a host row all its devices').
/// The stream lanes a host or device header row draws merged (none for
/// other rows).
pub fn streams_under(p: &Profile, kind: LaneKind) -> impl Iterator<Item = LaneId> + '_ {
    (0..p.lanes.len() as LaneId).filter(move |&i| {
        let ln = &p.lanes[i as usize];
        match kind {
            LaneKind::Host(h) => p.devices[ln.device as usize].host == h,
            LaneKind::Device(d) => ln.device == d,
            _ => false,
        }
    })
}

pub fn event_on_row(p: &Profile, idx: &RenderIndex, kind: LaneKind, e: EventRef) -> bool {
    match (kind, e) {
        (LaneKind::Stream(lane), EventRef::Gpu(r)) => p.gpu.lane(r) == lane,
        (LaneKind::Device(d), EventRef::Gpu(r)) => p.lanes[p.gpu.lane(r) as usize].device == d,
        (LaneKind::Host(h), EventRef::Gpu(r)) => {
            p.devices[p.lanes[p.gpu.lane(r) as usize].device as usize].host == h
        }
        (LaneKind::Api(t), EventRef::Api(r)) => p.runtime.thread(r) == t,
        // A track's rows are in profile order: binary search.
        (LaneKind::Nvtx(tr), EventRef::Nvtx(r)) => idx
            .nvtx_track(p, tr)
            .rows
            .is_some_and(|rs| rs.binary_search(&(r as u32)).is_ok()),
        (LaneKind::Cpu(tr), e) => cpu_row_of(idx, tr, e),
        _ => false,
    }
}

/// Whether CPU track `tr` holds event `e` (its rows are sorted).
fn cpu_row_of(idx: &RenderIndex, tr: usize, e: EventRef) -> bool {
    let t = &idx.cpu_tracks[tr];
    let r = match (t.kind, e) {
        (CpuTrackKind::Osrt, EventRef::Osrt(r))
        | (CpuTrackKind::OffCpu, EventRef::Sched(r))
        | (CpuTrackKind::Samples, EventRef::Sample(r)) => r,
        _ => return false,
    };
    idx.cpu_track(tr)
        .rows
        .is_some_and(|rs| rs.binary_search(&(r as u32)).is_ok())
}

/// The CPU row of thread `t` holding `e`, else its API row.
fn cpu_row(idx: &RenderIndex, t: ThreadId, e: EventRef) -> LaneKind {
    idx.cpu_of_thread[t as usize]
        .iter()
        .copied()
        .find(|&tr| cpu_row_of(idx, tr, e))
        .map_or(LaneKind::Api(t), LaneKind::Cpu)
}

/// The row an event lives on.
pub fn row_of_event(p: &Profile, idx: &RenderIndex, e: EventRef) -> LaneKind {
    match e {
        EventRef::Osrt(r) => cpu_row(idx, p.osrt.thread(r), e),
        EventRef::Sched(r) => cpu_row(idx, p.sched.thread(r), e),
        EventRef::Sample(r) => cpu_row(idx, p.samples.thread(r), e),
        EventRef::Gpu(r) => LaneKind::Stream(p.gpu.lane(r)),
        EventRef::Api(r) => LaneKind::Api(p.runtime.thread(r)),
        EventRef::Nvtx(r) => {
            let t = p.nvtx.thread(r);
            idx.nvtx_of_thread[t as usize]
                .iter()
                .map(|&tr| LaneKind::Nvtx(tr))
                .find(|&k| event_on_row(p, idx, k, e))
                .unwrap_or(LaneKind::Api(t))
        }
    }
}

/// The collapsible rows that, collapsed, hide row `kind`: its device, its
/// host, and for an NVTX track its thread's API row.
pub fn hidden_by(p: &Profile, idx: &RenderIndex, kind: LaneKind) -> Vec<LaneKind> {
    let mut out = Vec::new();
    if let LaneKind::Stream(lane) = kind {
        out.push(LaneKind::Device(p.lanes[lane as usize].device));
    }
    if let Some(d) = row_device(p, idx, kind) {
        out.push(LaneKind::Host(p.devices[d as usize].host));
    }
    if let LaneKind::Nvtx(tr) = kind {
        out.push(LaneKind::Api(idx.nvtx_tracks[tr].thread));
    }
    if let LaneKind::Cpu(tr) = kind {
        out.push(LaneKind::Api(idx.cpu_tracks[tr].thread));
    }
    out
}

/// The process a row's events belong to, if one.
pub fn row_process(p: &Profile, idx: &RenderIndex, kind: LaneKind) -> Option<ProcId> {
    match kind {
        LaneKind::Stream(l) => Some(p.lanes[l as usize].process),
        LaneKind::Api(t) => Some(p.threads[t as usize].process),
        LaneKind::Nvtx(tr) => Some(p.threads[idx.nvtx_tracks[tr].thread as usize].process),
        LaneKind::Cpu(tr) => Some(p.threads[idx.cpu_tracks[tr].thread as usize].process),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::stream_kind;

    #[test]
    fn a_stream_is_nccl_only_when_all_its_kernels_communicate() {
        assert_eq!(stream_kind(true, false, true), "NCCL");
        assert_eq!(stream_kind(true, true, true), "mixed");
        assert_eq!(stream_kind(false, true, true), "compute");
        assert_eq!(stream_kind(false, false, false), "copy");
    }
}
