//! Capture completeness: which devices were expected, which recorded GPU
//! activity, and what is missing. The first thing to check: a device with a
//! CUDA context but no activity means every cross-device figure covers
//! fewer GPUs than the job used.

use super::clock::Alignment;
use super::window::Window;
use crate::profile::{DevId, GpuKind, LaneId, ProcId, Profile, ThreadId};
use std::collections::BTreeSet;

/// Per-device counts of events wholly inside the window.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct DeviceCounts {
    pub device: DevId,
    /// Processes with a CUDA context on the device.
    pub processes: Vec<ProcId>,
    pub kernels: usize,
    pub memcpy: usize,
    pub memset: usize,
    /// Runtime/driver calls of those processes.
    pub runtime_calls: usize,
    /// NVTX ranges (push/pop and start/end) of those processes.
    pub nvtx_ranges: usize,
}

/// The completeness verdict.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Completeness {
    /// First start and last end over all events in the window, on the
    /// reference clock.
    pub span: Option<(i64, i64)>,
    /// Expected or listed devices, in device order.
    pub devices: Vec<DeviceCounts>,
    pub expected: Vec<DevId>,
    pub with_kernels: Vec<DevId>,
    pub missing: Vec<DevId>,
    pub listed_unused: Vec<DevId>,
    /// No kernel, memcpy or memset anywhere.
    pub no_gpu_activity: bool,
    /// The job's world size, when a capture environment records it.
    pub world_size: Option<u32>,
    /// Ranks below the world size that no device carries (only when some
    /// device carries a rank: without any, nothing can be said).
    pub ranks_missing: Vec<u32>,
    /// Plain statements of what limits the figures.
    pub warnings: Vec<String>,
}

/// Devices in display order: host name, then id, then rank (per-rank
/// files of one host each use "device 0").
pub fn device_order(p: &Profile) -> Vec<DevId> {
    let mut d: Vec<DevId> = (0..p.devices.len() as DevId).collect();
    d.sort_by(|&a, &b| {
        let (x, y) = (&p.devices[a as usize], &p.devices[b as usize]);
        (&p.hosts[x.host as usize], x.id, x.rank).cmp(&(&p.hosts[y.host as usize], y.id, y.rank))
    });
    d
}

/// The world size the files record and the ranks below it no device
/// carries.
pub fn missing_ranks(p: &Profile) -> (Option<u32>, Vec<u32>) {
    let world = p
        .files
        .iter()
        .filter_map(|f| f.world_size)
        .filter(|&n| believable_world(n))
        .max();
    let present: BTreeSet<u32> = p.devices.iter().filter_map(|d| d.rank).collect();
    let missing = match world {
        Some(n) if !present.is_empty() => (0..n).filter(|r| !present.contains(r)).collect(),
        _ => Vec::new(),
    };
    (world, missing)
}

/// Far beyond any job (the largest run on a million GPUs): a world size
/// past it is damage, and listing its ranks would take gigabytes.
const MAX_WORLD: u32 = 1 << 20;

fn believable_world(n: u32) -> bool {
    (1..=MAX_WORLD).contains(&n)
}

/// Ranks and world sizes the files record that cannot all be right, by
/// file name: two files claiming one rank, a rank not below the world
/// size, world sizes that disagree or cannot be one. Today's counts fold
/// them into "rank 4 of a world of 5 has no file" otherwise.
pub fn rank_conflicts(p: &Profile) -> Vec<String> {
    use std::collections::BTreeMap;
    let mut w = Vec::new();
    let mut by_rank: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for f in &p.files {
        if let Some(r) = f.rank {
            by_rank.entry(r).or_default().push(f.name());
        }
    }
    for (r, files) in &by_rank {
        if files.len() > 1 {
            w.push(format!(
                "rank {r} is claimed by {} files ({}): at most one can be it",
                files.len(),
                files.join(", ")
            ));
        }
    }
    for f in &p.files {
        match f.world_size {
            Some(n) if !believable_world(n) => w.push(format!(
                "{} records a world size that cannot be right ({}): not used",
                f.name(),
                if n == 0 {
                    "0 or below".to_string()
                } else {
                    n.to_string()
                }
            )),
            Some(n) if f.rank.is_some_and(|r| r >= n) => w.push(format!(
                "{} claims rank {} of a world of {n}: both cannot be right",
                f.name(),
                f.rank.unwrap_or_default()
            )),
            _ => {}
        }
    }
    let sizes: BTreeSet<u32> = p
        .files
        .iter()
        .filter_map(|f| f.world_size)
        .filter(|&n| believable_world(n))
        .collect();
    if sizes.len() > 1 {
        let each: Vec<String> = sizes
            .iter()
            .map(|n| {
                let first = p.files.iter().find(|f| f.world_size == Some(*n));
                format!("{n} in {}", first.map(|f| f.name()).unwrap_or_default())
            })
            .collect();
        w.push(format!(
            "files record different world sizes ({}): the largest is used",
            each.join(", ")
        ));
    }
    w
}

/// `0-3, 7, 9-10`: runs of consecutive ranks.
pub fn rank_ranges(ranks: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            ranks[i].to_string()
        } else {
            format!("{}-{}", ranks[i], ranks[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// Computes completeness over the window (on the reference clock).
/// Runtime calls and NVTX ranges counted but not loaded
/// ([`crate::profile::CpuCounts`]) are counted over the whole capture: such
/// a profile is read only without a window.
pub fn completeness(p: &Profile, clock: &Alignment, w: Window) -> Completeness {
    debug_assert!(w.is_all() || p.cpu_counts.is_empty());
    let nproc = p.processes.len();
    let counted = |per_proc: &[usize], proc: usize| per_proc.get(proc).copied().unwrap_or(0);
    let mut rt_per_proc: Vec<usize> = (0..nproc)
        .map(|pr| counted(&p.cpu_counts.runtime_calls, pr))
        .collect();
    // A thread's events are on its file's clock: the window is taken there.
    let in_file = |t: usize| clock.window_in_file(p.thread_file(t as ThreadId), w);
    for (t, rows) in p.runtime_by_thread.iter().enumerate() {
        let proc = p.threads[t].process as usize;
        let wf = in_file(t);
        // Over the whole capture every row counts: no times to read.
        rt_per_proc[proc] += if w.is_all() {
            rows.len()
        } else {
            rows.clone()
                .filter(|&i| wf.contains(p.runtime.start(i), p.runtime.end(i)))
                .count()
        };
    }
    let mut nvtx_per_proc: Vec<usize> = (0..nproc)
        .map(|pr| counted(&p.cpu_counts.nvtx_ranges, pr))
        .collect();
    for (t, rows) in p.nvtx_by_thread.iter().enumerate() {
        let proc = p.threads[t].process as usize;
        let wf = in_file(t);
        nvtx_per_proc[proc] += rows
            .clone()
            .filter(|&i| {
                p.nvtx.is_range(i) && (w.is_all() || wf.contains(p.nvtx.start(i), p.nvtx.end(i)))
            })
            .count();
    }
    let mut per_dev: Vec<DeviceCounts> = (0..p.devices.len() as DevId)
        .map(|device| DeviceCounts {
            device,
            ..Default::default()
        })
        .collect();
    let mut procs_on: Vec<BTreeSet<ProcId>> = vec![BTreeSet::new(); p.devices.len()];
    for c in &p.contexts {
        procs_on[c.device as usize].insert(c.process);
    }
    for (l, lane) in p.lanes.iter().enumerate() {
        let d = &mut per_dev[lane.device as usize];
        let (l, file) = (l as LaneId, p.lane_file(l as LaneId));
        let wf = clock.window_in_file(file, w);
        let rows: Box<dyn Iterator<Item = usize>> = if w.is_all() {
            Box::new(p.lanes[l as usize].rows.clone())
        } else {
            Box::new(
                clock
                    .lane_rows(p, l, w, file)
                    .filter(|&(_, s, e)| wf.contains(s, e))
                    .map(|(i, _, _)| i),
            )
        };
        for i in rows {
            match p.gpu.kind(i) {
                GpuKind::Kernel => d.kernels += 1,
                // A batched record counts its copies (`copyCount`).
                GpuKind::Memcpy => d.memcpy += p.gpu.copies(i) as usize,
                GpuKind::Memset => d.memset += 1,
            }
        }
    }
    let mut out = Completeness {
        span: clock.span_within(p, w),
        ..Default::default()
    };
    for dev in device_order(p) {
        let procs = &procs_on[dev as usize];
        let info = &p.devices[dev as usize];
        let mut counts = per_dev[dev as usize].clone();
        let expected = !procs.is_empty();
        if !expected && !info.listed {
            continue;
        }
        let mut procs: Vec<ProcId> = procs.iter().copied().collect();
        procs.sort_by_key(|&pr| (p.processes[pr as usize].pid, pr));
        counts.runtime_calls = procs.iter().map(|&pr| rt_per_proc[pr as usize]).sum();
        counts.nvtx_ranges = procs.iter().map(|&pr| nvtx_per_proc[pr as usize]).sum();
        counts.processes = procs;
        let active = counts.kernels + counts.memcpy + counts.memset > 0;
        if expected {
            out.expected.push(dev);
            if !active {
                out.missing.push(dev);
            }
        } else {
            out.listed_unused.push(dev);
        }
        if counts.kernels > 0 {
            out.with_kernels.push(dev);
        }
        out.devices.push(counts);
    }
    out.no_gpu_activity = out
        .devices
        .iter()
        .all(|d| d.kernels + d.memcpy + d.memset == 0);
    (out.world_size, out.ranks_missing) = missing_ranks(p);
    out.warnings = warnings(p, &out);
    out
}

fn list(p: &Profile, devs: &[DevId]) -> String {
    devs.iter()
        .map(|&d| p.device_label(d).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Files whose kernels were exported without the runtime calls that
/// launched them (`nsys export --tables` leaving the runtime table out):
/// said once, with what that leaves unknown.
fn partial_exports(p: &Profile) -> Vec<String> {
    use crate::profile::spec::{KERNEL, RUNTIME};
    let without: Vec<String> = p
        .files
        .iter()
        .filter(|f| f.has_table(KERNEL.table) && !f.has_table(RUNTIME.table))
        .map(|f| f.path.display().to_string())
        .collect();
    let named = match without.split_first() {
        None => return Vec::new(),
        Some((one, [])) => one.clone(),
        Some((first, rest)) => format!("{first} and {} more files", rest.len()),
    };
    vec![format!(
        "{named}: kernels without the runtime table (CUPTI_ACTIVITY_KIND_RUNTIME not exported, a partial export): launch verdicts are unknown and the why account has no CPU or GPU part; re-export without --tables"
    )]
}

/// Files exported with options that change what they hold, as the export
/// records them (`META_DATA_EXPORT`): a window, a subset of tables,
/// timestamps normalised or shifted. Said once per file and option.
fn export_options(p: &Profile) -> Vec<String> {
    use crate::text_safe::{escape_controls, path_text};
    let mut w = Vec::new();
    for f in &p.files {
        let (path, e) = (path_text(&f.path), &f.export);
        if let Some(times) = e.cut_times() {
            w.push(format!(
                "{path}: exported with --times {}: only the events of that window; work launched before it has no launch call, and ranges, waits and collectives are cut at its bounds",
                escape_controls(times)
            ));
        }
        if let Some(tables) = e.some_tables() {
            w.push(format!(
                "{path}: exported with --tables {}: the tables left out read as not traced",
                escape_controls(tables)
            ));
        }
        w.extend(export_time(f).into_iter().map(|t| format!("{path}: {t}")));
    }
    w
}

/// What the export did to a file's timestamps (`--ts-shift`,
/// `--ts-normalize`), as it records: said in `summary` and `clock`.
pub fn export_time(f: &crate::profile::FileInfo) -> Vec<String> {
    let e = &f.export;
    let mut w = Vec::new();
    if let Some(ns) = e.shift_ns() {
        w.push(format!(
            "timestamps shifted by {ns} ns at export (--ts-shift): placed against other files by its UTC start, its events are that far off, which the collective ends see as clock offset"
        ));
    }
    if e.normalized() {
        w.push(
            "timestamps normalised at export (--ts-normalize): in the vClock domain when the capture recorded vClock data, else UTC; the export does not record which"
                .to_string(),
        );
    }
    w
}

fn warnings(p: &Profile, c: &Completeness) -> Vec<String> {
    let mut w = Vec::new();
    if c.no_gpu_activity {
        w.push(
            "no kernel, memcpy or memset was recorded: there is no GPU activity to analyse"
                .to_string(),
        );
    } else if !c.missing.is_empty() {
        let recorded = c.expected.len() - c.missing.len();
        w.push(format!(
            "device{} {} ha{} a CUDA context but no kernel, memcpy or memset recorded: cross-device figures cover only the {} recorded device{} of {} expected",
            if c.missing.len() == 1 { "" } else { "s" },
            list(p, &c.missing),
            if c.missing.len() == 1 { "s" } else { "ve" },
            recorded,
            if recorded == 1 { "" } else { "s" },
            c.expected.len()
        ));
    }
    if let (Some(n), false) = (c.world_size, c.ranks_missing.is_empty()) {
        let k = c.ranks_missing.len();
        w.push(format!(
            "rank{} {} of a world of {n} {} no file: groups spanning the whole job lack {}",
            if k == 1 { "" } else { "s" },
            rank_ranges(&c.ranks_missing),
            if k == 1 { "has" } else { "have" },
            if k == 1 { "it" } else { "them" },
        ));
    }
    w.extend(rank_conflicts(p));
    w.extend(partial_exports(p));
    w.extend(export_options(p));
    for f in &p.files {
        if let Some(wal) = &f.wal {
            w.push(crate::profile::wal_warning(&f.path, wal));
        }
    }
    if p.hosts.len() > 1 {
        w.push(format!(
            "files come from {} hosts ({}): their times are compared on the first file's clock, as aligned in `clock`",
            p.hosts.len(),
            p.hosts.join(", ")
        ));
    }
    w
}
