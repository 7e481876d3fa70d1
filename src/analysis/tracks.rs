//! Which tracks a trace export holds: every one, those of some devices
//! (ranks), of some collective groups, or what the timeline shows. A CPU
//! thread goes with the devices its process drives (the process that owns
//! a kept stream), since its calls launched their work.

use super::matching::Matching;
use crate::profile::{DevId, Profile};

/// Kept GPU lanes, CPU threads and groups (whose big events are marked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracks {
    lanes: Vec<bool>,
    threads: Vec<bool>,
    groups: Vec<bool>,
}

impl Tracks {
    /// Every track of the capture.
    pub fn all(p: &Profile, m: &Matching) -> Tracks {
        Tracks {
            lanes: vec![true; p.lanes.len()],
            threads: vec![true; p.threads.len()],
            groups: vec![true; m.groups.len()],
        }
    }

    /// The streams of `devices`, the threads of the processes driving
    /// them, the groups they take part in.
    pub fn of_devices(p: &Profile, m: &Matching, devices: &[DevId]) -> Tracks {
        let lanes: Vec<bool> = p
            .lanes
            .iter()
            .map(|l| devices.contains(&l.device))
            .collect();
        let groups = m
            .groups
            .iter()
            .map(|g| g.devices.iter().any(|d| devices.contains(d)))
            .collect();
        Tracks::with_threads(p, lanes, groups)
    }

    /// The streams that carry the groups `groups` (indices into the
    /// matching), on every device, and the threads that launched on them.
    pub fn of_groups(p: &Profile, m: &Matching, groups: &[usize]) -> Tracks {
        let mut lanes = vec![false; p.lanes.len()];
        for &g in groups {
            for &l in &m.groups[g].lanes {
                lanes[l as usize] = true;
            }
        }
        let groups = (0..m.groups.len()).map(|g| groups.contains(&g)).collect();
        Tracks::with_threads(p, lanes, groups)
    }

    /// Exactly these lanes and threads (what a screen shows); groups are
    /// marked where one of their streams is kept.
    pub fn of(p: &Profile, m: &Matching, lanes: Vec<bool>, threads: Vec<bool>) -> Tracks {
        debug_assert_eq!(lanes.len(), p.lanes.len());
        let groups = m
            .groups
            .iter()
            .map(|g| g.lanes.iter().any(|&l| lanes[l as usize]))
            .collect();
        Tracks {
            lanes,
            threads,
            groups,
        }
    }

    /// What both keep.
    pub fn and(self, other: &Tracks) -> Tracks {
        let both = |a: Vec<bool>, b: &[bool]| a.iter().zip(b).map(|(x, y)| *x && *y).collect();
        Tracks {
            lanes: both(self.lanes, &other.lanes),
            threads: both(self.threads, &other.threads),
            groups: both(self.groups, &other.groups),
        }
    }

    fn with_threads(p: &Profile, lanes: Vec<bool>, groups: Vec<bool>) -> Tracks {
        let mut driving = vec![false; p.processes.len()];
        for (l, lane) in p.lanes.iter().enumerate() {
            if lanes[l] {
                driving[lane.process as usize] = true;
            }
        }
        let threads = p
            .threads
            .iter()
            .map(|t| driving[t.process as usize])
            .collect();
        Tracks {
            lanes,
            threads,
            groups,
        }
    }

    pub fn lane(&self, l: usize) -> bool {
        self.lanes.get(l).copied().unwrap_or(false)
    }

    pub fn thread(&self, t: usize) -> bool {
        self.threads.get(t).copied().unwrap_or(false)
    }

    pub fn group(&self, g: usize) -> bool {
        self.groups.get(g).copied().unwrap_or(false)
    }

    /// Whether a device has a kept stream (its process track is named).
    pub fn device(&self, p: &Profile, d: DevId) -> bool {
        p.lanes
            .iter()
            .enumerate()
            .any(|(l, lane)| lane.device == d && self.lane(l))
    }

    /// Whether a CPU process has a kept thread.
    pub fn process(&self, p: &Profile, process: usize) -> bool {
        p.threads
            .iter()
            .enumerate()
            .any(|(t, th)| th.process as usize == process && self.thread(t))
    }
}
