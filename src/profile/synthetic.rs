//! An in-memory profile of many ranks (no export behind it), for the
//! benchmark and tests that need hundreds of GPUs: each rank runs one NCCL
//! all-reduce stream; ranks arrive up to ~1.5 ms apart, and now and then
//! one arrives tens of ms late. All ranks leave together, as NCCL ranks do.

use super::finalize::finalize;
use super::job::Profile;
use super::model::*;
use std::path::PathBuf;

/// Lateness of most arrivals stays under this (ns).
const JITTER_NS: i64 = 1_500_000;
/// How late the odd straggler is (ns).
const STRAGGLER_NS: i64 = 30_000_000;
/// Every this many instances, one rank is a straggler.
const STRAGGLER_EVERY: usize = 37;
/// Time between instances (ns): longer than any straggler.
const PERIOD_NS: i64 = 50_000_000;

/// A deterministic pseudo-random number in `0..n` for (rank, instance).
fn noise(r: usize, k: usize, n: i64) -> i64 {
    let mut x = (r as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (k as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
    x ^= x >> 31;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 29;
    (x % n.max(1) as u64) as i64
}

/// The rank that straggles in instance `k`, if one does.
pub fn straggler(k: usize, ranks: usize) -> Option<usize> {
    (k % STRAGGLER_EVERY == STRAGGLER_EVERY - 1).then(|| (k * 13) % ranks.max(1))
}

/// `hosts` × `per_host` ranks (one process and GPU each, host names
/// `node00`…, one file per host), `instances` all-reduces on stream 7.
pub fn many_ranks(hosts: usize, per_host: usize, instances: usize) -> Profile {
    let ranks = hosts * per_host;
    let files = (0..hosts)
        .map(|h| host_file(h, per_host, ranks, instances))
        .collect();
    Profile::of_files(files)
}

/// The file of host `h`: its `per_host` ranks of the job's `ranks`.
fn host_file(h: usize, per_host: usize, ranks: usize, instances: usize) -> FileProfile {
    let mut p = FileProfile::default();
    let name = p.strings.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    let proc_name = p.strings.intern("python");
    p.hosts.push(format!("node{h:02}"));
    p.files.push(FileInfo {
        path: PathBuf::from(format!("node{h:02}.sqlite")),
        nsys_version: None,
        schema_version: None,
        export: Default::default(),
        host: Some(format!("node{h:02}")),
        tables: Vec::new(),
        utc_start_ns: None,
        system_clock_ns: None,
        timebase: Default::default(),
        boot_ns: None,
        timebase_alternative: None,
        capture_start_ns: None,
        capture_end_ns: None,
        rank: None,
        world_size: None,
        host_index: 0,
        suspect_rows: Default::default(),
        wal: None,
    });
    for id in 0..per_host {
        p.processes.push(Process {
            file: 0,
            pid: 1000 + (h * per_host + id) as u32,
            name: proc_name,
        });
        p.devices.push(Device {
            host: 0,
            id: id as u32,
            name: None,
            listed: true,
            uuid: None,
            rank: None,
        });
        p.lanes.push(Lane {
            device: id as DevId,
            process: id as ProcId,
            context: 1,
            stream: 7,
            rows: 0..0,
        });
    }
    let g = &mut p.gpu;
    let mut details = DetailIds::default();
    for k in 0..instances {
        let base = 1_000_000_000 + k as i64 * PERIOD_NS;
        let late: Vec<i64> = (0..ranks)
            .map(|r| match straggler(k, ranks) {
                Some(s) if s == r => STRAGGLER_NS,
                _ => noise(r, k, JITTER_NS),
            })
            .collect();
        let leave = base + late.iter().copied().max().unwrap_or(0) + 300_000;
        for id in 0..per_host {
            let r = h * per_host + id;
            g.start.push(base + late[r]);
            g.end.push(leave + noise(r, k + 1, 20_000));
            g.lane.push(id as LaneId);
            g.name.push(name);
            g.correlation.push(k as u32);
            g.launch.push(NONE);
            let detail = Detail {
                kind: GpuKind::Kernel,
                long_name: name,
                bytes: 0,
                graph_node: NO_GRAPH,
                shape: Shape::default(),
                copies: 1,
            };
            g.detail.push(details.id(&mut g.details, detail));
        }
    }
    finalize(&mut p);
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Settings;
    use crate::analysis::pipeline::analyze;

    #[test]
    fn every_rank_pairs_into_one_group_and_the_stragglers_are_its_big_events() {
        let p = many_ranks(4, 8, 80);
        assert_eq!((p.devices.len(), p.gpu.len()), (32, 32 * 80));
        let a = analyze(&p, &Settings::default(), &mut |_| {});
        assert_eq!(
            a.matching.groups.len(),
            1,
            "{:?}",
            a.matching.groups.iter().map(|g| &g.key).collect::<Vec<_>>()
        );
        let g = &a.matching.groups[0];
        assert_eq!((g.devices.len(), g.instances()), (32, 80));
        let big: Vec<(usize, usize)> = a.skews[0]
            .big_events
            .iter()
            .map(|e| (e.instance.index, e.instance.late))
            .collect();
        let want: Vec<(usize, usize)> = (0..80)
            .filter_map(|k| straggler(k, 32).map(|r| (k, r)))
            .collect();
        assert_eq!(big, want);
    }
}
