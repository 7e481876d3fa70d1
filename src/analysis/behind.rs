//! Who is behind: per group, where the ranks stop completing collectives
//! together, which ranks are stuck waiting in that collective, which never
//! launched it (these are behind, the ones a hung job's owner looks for —
//! NCCL's own RAS names the ranks that are ahead), and what each of those
//! was last seen doing. Ranks whose capture simply stopped earlier are told
//! apart: their capture ended before the others reached the collective.
//!
//! Derived from the matching when asked for (cheap: one pass over each
//! group's instances, a few searches per rank named), not stored.

use super::clock::Alignment;
use super::matching::{Group, Matching};
use crate::profile::{DevId, LaneId, Profile, Sym};

/// Every group with something to say, and the ranks with no file at all.
#[derive(Debug, Clone, Default)]
pub struct Behind {
    pub groups: Vec<GroupBehind>,
    /// Ranks of the world size (`NCCL`/launcher environment) that no file
    /// holds: they are not in any group's figures.
    pub never_captured: Vec<u32>,
    pub world_size: Option<u32>,
}

impl Behind {
    /// Whether some rank of some group is behind (a hang signature).
    pub fn any_behind(&self) -> bool {
        self.groups.iter().any(|g| g.is_hang())
    }
}

/// One group where the ranks stop completing instances together.
#[derive(Debug, Clone)]
pub struct GroupBehind {
    /// Index into the matching's groups.
    pub group: usize,
    /// The last instance (1-based) every rank captured that far completed;
    /// `None` when they diverge at the first.
    pub last_complete: Option<usize>,
    /// The first instance (1-based) some rank did not complete.
    pub diverges_at: usize,
    /// Devices (indices into the group) whose kernel of `diverges_at` was
    /// still running when their capture ended.
    pub waiting: Vec<usize>,
    /// The earliest start of those kernels (reference clock).
    pub waiting_since_ns: Option<i64>,
    /// Devices whose capture went on past the others' start of
    /// `diverges_at` and never launched it.
    pub behind: Vec<usize>,
    /// Devices whose capture ended before the others reached the
    /// instance after their last.
    pub stopped_early: Vec<StoppedEarly>,
    /// What each device of `behind` and `stopped_early` was last seen doing.
    pub last_seen: Vec<(usize, LastSeen)>,
}

impl GroupBehind {
    /// Ranks wait in a collective that others never launched.
    pub fn is_hang(&self) -> bool {
        !self.waiting.is_empty() && !self.behind.is_empty()
    }

    pub fn last_seen_of(&self, d: usize) -> Option<&LastSeen> {
        self.last_seen.iter().find(|(x, _)| *x == d).map(|(_, s)| s)
    }
}

/// A device whose capture stopped before the others'.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoppedEarly {
    pub device: usize,
    /// Its last captured instance (1-based).
    pub last: usize,
    /// Instances the others went on to that it lacks.
    pub before_end: usize,
    /// Its file's capture end, on the reference clock.
    pub capture_end_ns: i64,
}

/// One thing a rank's process was seen doing: its name and start
/// (reference clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    pub name: Sym,
    pub at_ns: i64,
}

/// The last things a rank's process was seen doing in the capture.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LastSeen {
    /// Its last CUDA runtime or driver call.
    pub cuda_call: Option<Seen>,
    /// The innermost NVTX range still open at the capture end.
    pub nvtx: Option<Seen>,
    /// Its last OS runtime call (captures with `--trace osrt`).
    pub osrt: Option<Seen>,
    /// The leaf frame of its last CPU sample (captures with sampling).
    pub frame: Option<Seen>,
}

impl LastSeen {
    /// When it was last seen: its last CUDA call, else the latest of the
    /// others.
    pub fn at_ns(&self) -> Option<i64> {
        self.cuda_call.map(|s| s.at_ns).or_else(|| {
            [self.nvtx, self.osrt, self.frame]
                .iter()
                .flatten()
                .map(|s| s.at_ns)
                .max()
        })
    }
}

pub fn find(p: &Profile, m: &Matching, clock: &Alignment) -> Behind {
    let world_size = p.files.iter().filter_map(|f| f.world_size).max();
    let groups = m
        .groups
        .iter()
        .enumerate()
        .filter_map(|(i, g)| group_behind(p, clock, i, g))
        .collect();
    Behind {
        groups,
        never_captured: never_captured(p, world_size),
        world_size,
    }
}

/// Ranks `0..world` that no device of any file has.
fn never_captured(p: &Profile, world: Option<u32>) -> Vec<u32> {
    let Some(world) = world else {
        return Vec::new();
    };
    let seen: std::collections::BTreeSet<u32> = p.devices.iter().filter_map(|d| d.rank).collect();
    if seen.is_empty() {
        return Vec::new();
    }
    (0..world.min(1 << 20))
        .filter(|r| !seen.contains(r))
        .collect()
}

/// Whether GPU row `r` was still running when its file's capture ended:
/// its end was missing, or at or past the capture end.
pub fn still_running(p: &Profile, r: usize) -> bool {
    if p.gpu.is_unfinished(r) {
        return true;
    }
    let f = p.gpu.file(r);
    p.files[f]
        .capture_end_ns
        .is_some_and(|end| p.gpu.end(r) >= end)
}

/// The capture end of the file holding `lane`, on the reference clock.
fn capture_end(p: &Profile, clock: &Alignment, lane: LaneId) -> Option<i64> {
    clock.capture_end(p, p.lane_file(lane))
}

fn group_behind(p: &Profile, clock: &Alignment, index: usize, g: &Group) -> Option<GroupBehind> {
    let n = g.instances();
    let devs = g.devices.len();
    let started = |k: usize, d: usize| g.captured[d].first <= k + 1;
    let ends: Vec<Option<i64>> = g.lanes.iter().map(|&l| capture_end(p, clock, l)).collect();
    let earliest = |k: usize| g.members(k).map(|(_, _, s)| s.0).min();
    // Still recording when the others started instance k (unknown: yes).
    let recording = |k: usize, d: usize| {
        ends[d]
            .zip(earliest(k))
            .is_none_or(|(end, start)| end >= start)
    };
    // The first instance some rank still recording did not finish: a rank
    // whose capture stopped before the others got there is set aside
    // (`stopped_early`), and the ranks still recording are followed past it.
    let unfinished = |k: usize, d: usize| g.row(k, d).is_none_or(|r| still_running(p, r));
    let k = (0..n)
        .find(|&k| {
            (0..devs).any(|d| {
                started(k, d)
                    && match g.row(k, d) {
                        Some(r) => still_running(p, r),
                        None => recording(k, d),
                    }
            })
        })
        // Else where the first rank stopped, to say who stopped early.
        .or_else(|| (0..n).find(|&k| (0..devs).any(|d| started(k, d) && unfinished(k, d))))?;
    let first_start = earliest(k);
    let mut waiting = Vec::new();
    let mut behind = Vec::new();
    for d in (0..devs).filter(|&d| started(k, d)) {
        match g.row(k, d) {
            Some(r) if still_running(p, r) => waiting.push(d),
            Some(_) => {}
            // Recorded while the others were in it, and never launched it.
            None if ends[d]
                .zip(first_start)
                .is_some_and(|(end, start)| end >= start) =>
            {
                behind.push(d)
            }
            None => {}
        }
    }
    let waiting_since_ns = waiting
        .iter()
        .filter_map(|&d| g.span(k, d))
        .map(|s| s.0)
        .min();
    // Every rank whose capture ends before the others reach its next
    // instance, wherever that is.
    let stopped_early: Vec<StoppedEarly> = (0..devs)
        .filter_map(|d| {
            let c = g.captured[d];
            if c.last >= n || c.last < c.first {
                return None;
            }
            let end = ends[d]?;
            let next = earliest(c.last)?;
            (end < next).then_some(StoppedEarly {
                device: d,
                last: c.last,
                before_end: n - c.last,
                capture_end_ns: end,
            })
        })
        .collect();
    if waiting.is_empty() && behind.is_empty() && stopped_early.is_empty() {
        return None;
    }
    let last_seen = behind
        .iter()
        .copied()
        .chain(stopped_early.iter().map(|s| s.device))
        .map(|d| (d, last_seen(p, clock, g.lanes[d])))
        .collect();
    Some(GroupBehind {
        group: index,
        last_complete: (k > 0).then_some(k),
        diverges_at: k + 1,
        waiting,
        waiting_since_ns,
        behind,
        stopped_early,
        last_seen,
    })
}

/// What the process that launched onto `lane` was last seen doing, over
/// all its threads.
pub fn last_seen(p: &Profile, clock: &Alignment, lane: LaneId) -> LastSeen {
    let process = p.lanes[lane as usize].process;
    let threads = (0..p.threads.len()).filter(|&t| p.threads[t].process == process);
    let mut seen = LastSeen::default();
    let later = |a: Option<Seen>, b: Seen| match a {
        Some(a) if a.at_ns >= b.at_ns => Some(a),
        _ => Some(b),
    };
    for t in threads {
        // Rows are sorted by start per thread: the last is the latest.
        if let Some(r) = p.runtime_by_thread.get(t).and_then(|r| r.clone().last()) {
            let s = Seen {
                name: p.runtime.name(r),
                at_ns: clock.runtime_span(p, r).0,
            };
            seen.cuda_call = later(seen.cuda_call, s);
        }
        if let Some(r) = p.osrt_by_thread.get(t).and_then(|r| r.clone().last()) {
            let s = Seen {
                name: p.osrt.name(r),
                at_ns: clock.osrt_start(p, r),
            };
            seen.osrt = later(seen.osrt, s);
        }
        if let Some(r) = p.samples_by_thread.get(t).and_then(|r| {
            r.clone()
                .rev()
                .find(|&r| p.samples.leaf(r) != Sym::default())
        }) {
            let s = Seen {
                name: p.samples.leaf(r),
                at_ns: clock.sample_time(p, r),
            };
            seen.frame = later(seen.frame, s);
        }
        // A range never closed ends where it starts; the innermost open
        // one is the deepest, then the latest.
        if let Some(rows) = p.nvtx_by_thread.get(t) {
            let open = rows
                .clone()
                .filter(|&r| p.nvtx.is_range(r) && p.nvtx.end(r) == p.nvtx.start(r))
                .max_by_key(|&r| (p.nvtx.depth(r), p.nvtx.start(r)));
            if let Some(r) = open {
                let s = Seen {
                    name: p.nvtx.name(r),
                    at_ns: clock.nvtx_span(p, r).0,
                };
                seen.nvtx = later(seen.nvtx, s);
            }
        }
    }
    seen
}

/// Device ids of group devices (indices), for the callers that print them.
pub fn dev_ids(g: &Group, ds: &[usize]) -> Vec<DevId> {
    ds.iter().map(|&d| g.devices[d]).collect()
}
