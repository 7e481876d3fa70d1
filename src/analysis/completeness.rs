//! Capture completeness: which devices were expected, which recorded GPU
//! activity, and what is missing. The first thing to check: a device with a
//! CUDA context but no activity means every cross-device figure covers
//! fewer GPUs than the job used.

use super::window::Window;
use crate::profile::{DevId, GpuKind, ProcId, Profile};
use std::collections::BTreeSet;

/// Per-device counts of events wholly inside the window.
#[derive(Debug, Clone, Default)]
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
#[derive(Debug, Clone, Default)]
pub struct Completeness {
    /// First start and last end over all events in the window.
    pub span: Option<(i64, i64)>,
    /// Expected or listed devices, in device order.
    pub devices: Vec<DeviceCounts>,
    pub expected: Vec<DevId>,
    pub with_kernels: Vec<DevId>,
    pub missing: Vec<DevId>,
    pub listed_unused: Vec<DevId>,
    /// No kernel, memcpy or memset anywhere.
    pub no_gpu_activity: bool,
    /// Plain statements of what limits the figures.
    pub warnings: Vec<String>,
}

/// Devices in display order: host name, then id.
pub fn device_order(p: &Profile) -> Vec<DevId> {
    let mut d: Vec<DevId> = (0..p.devices.len() as DevId).collect();
    d.sort_by(|&a, &b| {
        let (x, y) = (&p.devices[a as usize], &p.devices[b as usize]);
        (&p.hosts[x.host as usize], x.id).cmp(&(&p.hosts[y.host as usize], y.id))
    });
    d
}

/// Computes completeness over the window.
pub fn completeness(p: &Profile, w: Window) -> Completeness {
    let nproc = p.processes.len();
    let mut rt_per_proc = vec![0usize; nproc];
    for (t, rows) in p.runtime_by_thread.iter().enumerate() {
        let proc = p.threads[t].process as usize;
        rt_per_proc[proc] += rows
            .clone()
            .filter(|&i| w.contains(p.runtime.start[i], p.runtime.end[i]))
            .count();
    }
    let mut nvtx_per_proc = vec![0usize; nproc];
    for (t, rows) in p.nvtx_by_thread.iter().enumerate() {
        let proc = p.threads[t].process as usize;
        nvtx_per_proc[proc] += rows
            .clone()
            .filter(|&i| p.nvtx.is_range(i) && w.contains(p.nvtx.start[i], p.nvtx.end[i]))
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
    for lane in &p.lanes {
        let d = &mut per_dev[lane.device as usize];
        for i in lane.rows.clone() {
            if !w.contains(p.gpu.start[i], p.gpu.end[i]) {
                continue;
            }
            match p.gpu.kind[i] {
                GpuKind::Kernel => d.kernels += 1,
                GpuKind::Memcpy => d.memcpy += 1,
                GpuKind::Memset => d.memset += 1,
            }
        }
    }
    let mut out = Completeness {
        span: span_in(p, w),
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
    out.warnings = warnings(p, &out);
    out
}

fn span_in(p: &Profile, w: Window) -> Option<(i64, i64)> {
    if w.is_all() {
        return p.span();
    }
    let cols: [(&[i64], &[i64]); 3] = [
        (&p.gpu.start, &p.gpu.end),
        (&p.runtime.start, &p.runtime.end),
        (&p.nvtx.start, &p.nvtx.end),
    ];
    let mut span: Option<(i64, i64)> = None;
    for (starts, ends) in cols {
        for (&s, &e) in starts.iter().zip(ends) {
            if w.contains(s, e) {
                span = Some(span.map_or((s, e), |(a, b)| (a.min(s), b.max(e))));
            }
        }
    }
    span
}

fn list(p: &Profile, devs: &[DevId]) -> String {
    devs.iter()
        .map(|&d| p.device_label(d).to_string())
        .collect::<Vec<_>>()
        .join(", ")
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
