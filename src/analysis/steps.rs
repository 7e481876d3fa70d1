//! Training steps from NVTX: top-level push/pop ranges whose name matches a
//! marker (default: contains "step" or "iter", any case), per process.

use super::clock::Alignment;
use crate::profile::{NvtxKind, ProcId, Profile};
use regex::Regex;

/// The default `--step-marker`.
pub const DEFAULT_STEP_MARKER: &str = "(?i)step|iter";

/// Step ranges per process, in time order: the NVTX rows that mark them.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Steps {
    per_process: Vec<Vec<u32>>,
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
            let name = n.name(i);
            let hit =
                *matches[name as usize].get_or_insert_with(|| marker.is_match(p.strings.get(name)));
            if hit {
                per_process[p.thread_process(n.thread(i)) as usize].push(i as u32);
            }
        }
        for v in &mut per_process {
            // One process's rows share a file and its clock.
            v.sort_unstable_by_key(|&r| (n.start(r as usize), n.end(r as usize)));
        }
        Steps { per_process }
    }

    /// Whether these steps can be those of `p` (stored ones are checked).
    pub fn fits(&self, p: &Profile) -> bool {
        self.per_process.len() <= p.processes.len()
            && self
                .per_process
                .iter()
                .all(|rows| rows.iter().all(|&r| (r as usize) < p.nvtx.len()))
    }

    /// The 0-based step of `process` whose range contains `t` (on the
    /// reference clock), with the range's start there.
    pub fn containing(
        &self,
        p: &Profile,
        clock: &Alignment,
        process: ProcId,
        t: i64,
    ) -> Option<(usize, i64)> {
        let steps = self.per_process.get(process as usize)?;
        let span = |i: usize| clock.nvtx_span(p, steps[i] as usize);
        let after = steps.partition_point(|&r| clock.nvtx_span(p, r as usize).0 <= t);
        (0..after)
            .rev()
            .find(|&i| span(i).1 >= t)
            .map(|i| (i, span(i).0))
    }

    /// The step of GPU row `row`'s process that holds its launch call (or,
    /// with no launch call, `otherwise`), all on the reference clock: its
    /// number (from 1, as instances are numbered, on every screen and in
    /// every report) and its start.
    pub fn of_kernel(
        &self,
        p: &Profile,
        clock: &Alignment,
        row: usize,
        otherwise: i64,
    ) -> Option<(usize, i64)> {
        let process = p.lanes[p.gpu.lane(row) as usize].process;
        let at = match p.gpu.launch(row) {
            crate::profile::NONE => otherwise,
            call => clock.runtime_span(p, call as usize).0,
        };
        self.containing(p, clock, process, at)
            .map(|(i, start)| (i + 1, start))
    }

    pub fn any(&self) -> bool {
        self.per_process.iter().any(|v| !v.is_empty())
    }

    /// The job's steps on the reference clock: step k runs from the
    /// earliest start to the latest end of the k-th step range over every
    /// rank (process) that has one. As many steps as the rank with most.
    pub fn spans(&self, p: &Profile, clock: &Alignment) -> Vec<(i64, i64)> {
        let mut out: Vec<(i64, i64)> = Vec::new();
        for rows in &self.per_process {
            for (k, &r) in rows.iter().enumerate() {
                let (s, e) = clock.nvtx_span(p, r as usize);
                match out.get_mut(k) {
                    Some(span) => *span = (span.0.min(s), span.1.max(e)),
                    None => out.push((s, e)),
                }
            }
        }
        out
    }
}
