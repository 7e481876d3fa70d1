//! Training steps from NVTX: top-level push/pop ranges whose name matches a
//! marker (default: contains "step" or "iter", any case), per process.

use super::clock::Alignment;
use crate::profile::{NvtxKind, ProcId, Profile};
use regex::Regex;

/// The default `--step-marker`.
pub const DEFAULT_STEP_MARKER: &str = "(?i)step|iter";

/// Step ranges per process, in time order.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Steps {
    per_process: Vec<Vec<(i64, i64)>>,
}

impl Steps {
    pub fn new(p: &Profile, marker: &Regex) -> Steps {
        let mut per_process = vec![Vec::new(); p.processes.len()];
        let mut matches = vec![None::<bool>; p.strings.len()];
        let n = &p.nvtx;
        for i in 0..n.len() {
            if n.kind(i) != NvtxKind::PushPop || n.depth(i) != 0 {
                continue;
            }
            let name = n.name(i) as usize;
            let hit =
                *matches[name].get_or_insert_with(|| marker.is_match(p.strings.get(n.name(i))));
            if hit {
                per_process[p.thread_process(n.thread(i)) as usize].push((n.start(i), n.end(i)));
            }
        }
        for v in &mut per_process {
            v.sort_unstable();
        }
        Steps { per_process }
    }

    /// The 0-based step of `process` whose range contains `t`, with the
    /// range's start.
    pub fn containing(&self, process: ProcId, t: i64) -> Option<(usize, i64)> {
        let steps = self.per_process.get(process as usize)?;
        let after = steps.partition_point(|s| s.0 <= t);
        (0..after)
            .rev()
            .find(|&i| steps[i].1 >= t)
            .map(|i| (i, steps[i].0))
    }

    pub fn any(&self) -> bool {
        self.per_process.iter().any(|v| !v.is_empty())
    }

    /// The job's steps on the reference clock: step k runs from the
    /// earliest start to the latest end of the k-th step range over every
    /// rank (process) that has one. As many steps as the rank with most.
    pub fn spans(&self, p: &Profile, clock: &Alignment) -> Vec<(i64, i64)> {
        let mut out: Vec<(i64, i64)> = Vec::new();
        for (proc, ranges) in self.per_process.iter().enumerate() {
            let file = p.processes[proc].file as usize;
            for (k, &(s, e)) in ranges.iter().enumerate() {
                let (s, e) = (clock.at(file, s), clock.at(file, e));
                match out.get_mut(k) {
                    Some(span) => *span = (span.0.min(s), span.1.max(e)),
                    None => out.push((s, e)),
                }
            }
        }
        out
    }
}
