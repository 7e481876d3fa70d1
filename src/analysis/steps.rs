//! Training steps from NVTX: top-level push/pop ranges whose name matches a
//! marker (default: contains "step" or "iter", any case), per process,
//! numbered job-wide: step k is the same iteration on every rank, found
//! from the collectives each rank's step ranges launch (a rank whose
//! capture starts a step later numbers its first range 2, not 1).

use super::clock::Alignment;
use super::matching::Matching;
use crate::profile::{NvtxKind, ProcId, Profile};
use regex::Regex;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

/// Per pair of processes, how many instances give each step offset.
type Votes = FxHashMap<(usize, usize), FxHashMap<i64, u32>>;

/// The default `--step-marker`.
pub const DEFAULT_STEP_MARKER: &str = "(?i)step|iter";

/// Step ranges per process, in time order: the NVTX rows that mark them.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Steps {
    per_process: Vec<Vec<u32>>,
    /// Per process, how many job steps come before its first range (0
    /// for the ranks whose capture holds the job's first step).
    #[serde(default)]
    first: Vec<usize>,
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
        Steps {
            per_process,
            first: Vec::new(),
        }
    }

    /// Numbers the steps job-wide: two ranks' ranges that launch kernels
    /// of one collective instance are one step (the offset most such
    /// instances agree on, so a collective launched across a step's edge
    /// does not move it); ranks linked to no other keep their own count.
    pub fn number_job_wide(&mut self, p: &Profile, clock: &Alignment, m: &Matching) {
        let n = self.per_process.len();
        self.first = vec![0; n];
        // Per instance, the first (process, step) seen launching it, and
        // for each other process the offset to it, counted: the instances
        // in chunks on every core, their counts summed.
        let instances: Vec<(usize, usize)> = m
            .groups
            .iter()
            .enumerate()
            .flat_map(|(gi, g)| (0..g.instances()).map(move |k| (gi, k)))
            .collect();
        let chunks = super::chunks::map_chunks(instances.len(), 4096, |range| {
            let mut votes: Votes = FxHashMap::default();
            for &(gi, k) in &instances[range] {
                let mut anchor: Option<(usize, usize)> = None;
                for (_, row, (start, _)) in m.groups[gi].members(k) {
                    let Some((process, i, _)) = self.own_step(p, clock, row, start) else {
                        continue;
                    };
                    match anchor {
                        None => anchor = Some((process as usize, i)),
                        Some((a, ai)) if a != process as usize => {
                            *votes
                                .entry((a, process as usize))
                                .or_default()
                                .entry(ai as i64 - i as i64)
                                .or_default() += 1;
                        }
                        Some(_) => {}
                    }
                }
            }
            vec![votes]
        });
        // In pair order: the same edges whatever order the chunks gave.
        let mut votes: BTreeMap<(usize, usize), FxHashMap<i64, u32>> = BTreeMap::new();
        for chunk in chunks {
            for (pair, counts) in chunk {
                let all = votes.entry(pair).or_default();
                for (off, c) in counts {
                    *all.entry(off).or_default() += c;
                }
            }
        }
        // Each pair's offset: the one most instances give (the smaller
        // on a tie, for a stable answer).
        let mut edges: Vec<Vec<(usize, i64)>> = vec![Vec::new(); n];
        for ((a, b), counts) in votes {
            if let Some((&off, _)) = counts
                .iter()
                .max_by_key(|&(&off, &c)| (c, std::cmp::Reverse(off)))
            {
                // first[b] − first[a] = off
                edges[a].push((b, off));
                edges[b].push((a, -off));
            }
        }
        let mut offset: Vec<Option<i64>> = vec![None; n];
        for root in 0..n {
            if offset[root].is_some() || self.per_process[root].is_empty() {
                continue;
            }
            offset[root] = Some(0);
            let mut component = vec![root];
            let mut todo = vec![root];
            while let Some(a) = todo.pop() {
                let at = offset[a].unwrap_or(0);
                for &(b, off) in &edges[a] {
                    if offset[b].is_none() {
                        offset[b] = Some(at + off);
                        component.push(b);
                        todo.push(b);
                    }
                }
            }
            // The component's earliest-starting rank holds its step 1.
            let low = component
                .iter()
                .filter_map(|&c| offset[c])
                .min()
                .unwrap_or(0);
            for c in component {
                self.first[c] = (offset[c].unwrap_or(0) - low) as usize;
            }
        }
    }

    /// How many job steps come before `process`'s first range.
    fn first_of(&self, process: usize) -> usize {
        self.first.get(process).copied().unwrap_or(0)
    }

    /// Whether these steps can be those of `p` (stored ones are checked).
    pub fn fits(&self, p: &Profile) -> bool {
        self.per_process.len() <= p.processes.len()
            && self.first.len() <= self.per_process.len()
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
    /// job-wide number (from 1, as instances are numbered, on every screen
    /// and in every report) and its start.
    pub fn of_kernel(
        &self,
        p: &Profile,
        clock: &Alignment,
        row: usize,
        otherwise: i64,
    ) -> Option<(usize, i64)> {
        self.own_step(p, clock, row, otherwise)
            .map(|(process, i, start)| (i + 1 + self.first_of(process as usize), start))
    }

    /// [`Steps::of_kernel`] in its process's own count: the process, the
    /// 0-based index of its step range and the range's start.
    fn own_step(
        &self,
        p: &Profile,
        clock: &Alignment,
        row: usize,
        otherwise: i64,
    ) -> Option<(ProcId, usize, i64)> {
        let process = p.lanes[p.gpu.lane(row) as usize].process;
        let at = match p.gpu.launch(row) {
            crate::profile::NONE => otherwise,
            call => clock.runtime_span(p, call as usize).0,
        };
        self.containing(p, clock, process, at)
            .map(|(i, start)| (process, i, start))
    }

    pub fn any(&self) -> bool {
        self.per_process.iter().any(|v| !v.is_empty())
    }

    /// The job's steps on the reference clock: step k runs from the
    /// earliest start to the latest end of the ranges numbered k over
    /// every rank (process) that has one. A step no rank recorded (between
    /// two that are) spans nothing, at the end of the one before it, so
    /// that starts stay in order.
    pub fn spans(&self, p: &Profile, clock: &Alignment) -> Vec<(i64, i64)> {
        let mut out: Vec<Option<(i64, i64)>> = Vec::new();
        for (process, rows) in self.per_process.iter().enumerate() {
            let first = self.first_of(process);
            for (i, &r) in rows.iter().enumerate() {
                let k = first + i;
                if out.len() <= k {
                    out.resize(k + 1, None);
                }
                let (s, e) = clock.nvtx_span(p, r as usize);
                out[k] = Some(out[k].map_or((s, e), |span| (span.0.min(s), span.1.max(e))));
            }
        }
        let mut last_end = out.iter().flatten().map(|s| s.0).min().unwrap_or(0);
        out.into_iter()
            .map(|s| {
                let s = s.unwrap_or((last_end, last_end));
                last_end = s.1;
                s
            })
            .collect()
    }
}
