//! Rung 2: each communicator's kernels, as NCCL's NVTX payloads name them.
//!
//! A payload says which communicator issued a kernel, not which call of
//! it: the communicator's kernels on each device are then placed in
//! sequence like any group's, so a rank that lacks one call (nsys drops
//! events under load: a lost range, a lost payload) shifts nothing. Such
//! a kernel — on a stream whose kernels the payloads do name — joins the
//! communicator its stream's evidence gives (the only one on the stream,
//! or the one of both its neighbours); a stream no call names at all joins
//! the communicator its stream id and ops fit ([`join_unnamed`]). Each
//! such kernel's end is checked against the instance it lands in
//! ([`ends_fit`]).
//!
//! Point-to-point traffic is not a collective: a communicator's Send/Recv
//! kernels each name their peer, and each pair of ranks that exchange is
//! a group of its own (a pipeline's stage pairs), its exchanges in order.
//! A rank's place in the communicator comes from its init payload.

use crate::analysis::nccl_streams::{Gathered, Seq, common_run};
use crate::analysis::op_keys::OpKeys;
use crate::profile::{DevId, LaneId, Profile};
use std::collections::BTreeMap;

/// The kernels of a capture, split by communicator.
#[derive(Debug, Default)]
pub struct Split {
    /// Per communicator (in id order; a point-to-point one per pair of
    /// ranks that exchange): one sequence per device holding its kernels
    /// of it, on whichever streams they ran.
    pub comms: Vec<Vec<Seq>>,
    /// Parallel to `comms`: NCCL's size of the communicator (for an
    /// exchange, of the communicator it is part of), from its init
    /// payload, when captured.
    pub sizes: Vec<Option<u32>>,
    /// Streams on which no payload names a communicator: matched as
    /// without payloads.
    pub rest: Vec<Seq>,
    /// Kernels on streams of several communicators that no evidence puts
    /// in one: left out of every instance, with their lanes.
    pub unplaced: Vec<(LaneId, u32)>,
}

/// Splits every stream's NCCL kernels by communicator (all of them
/// `rest` when no payload names one).
pub fn split(p: &Profile, seqs: Vec<Seq>, keys: &OpKeys) -> Split {
    if !keys.has_comms() {
        return Split {
            rest: seqs,
            ..Split::default()
        };
    }
    let mut out = Split::default();
    // (unit, device) → its kernels.
    let mut by: BTreeMap<(Unit, DevId), Vec<Gathered>> = BTreeMap::new();
    for s in seqs {
        let process = p.lanes[s.lane as usize].process;
        let named: Vec<Option<Unit>> = s
            .rows
            .iter()
            .map(|&r| {
                let comm = keys.comm(r)?;
                // A pair of ranks, when the peer and this rank are known.
                let pair = keys
                    .peer(r)
                    .zip(keys.rank_in(process, comm))
                    .map(|(peer, (me, _))| (me.min(peer), me.max(peer)));
                Some((comm, pair))
            })
            .collect();
        if named.iter().all(Option::is_none) {
            out.rest.push(s);
            continue;
        }
        for (i, (&row, &op)) in s.rows.iter().zip(&s.ops).enumerate() {
            let (comm, keyless) = match named[i] {
                Some(c) => (Some(c), false),
                None => (by_neighbours(&named, i), true),
            };
            match comm {
                Some(c) => by
                    .entry((c, s.device))
                    .or_default()
                    .push((row, op, s.lane, s.stream, keyless)),
                None => out.unplaced.push((s.lane, row)),
            }
        }
    }
    let mut comms: BTreeMap<Unit, Vec<Seq>> = BTreeMap::new();
    for ((comm, device), kernels) in by {
        comms
            .entry(comm)
            .or_default()
            .push(Seq::gathered(p, device, kernels));
    }
    let size = |comm: u64| {
        p.processes
            .iter()
            .enumerate()
            .find_map(|(i, _)| keys.rank_in(i as crate::profile::ProcId, comm))
            .map(|(_, n)| n)
    };
    for ((comm, _), seqs) in comms {
        out.sizes.push(size(comm));
        out.comms.push(seqs);
    }
    join_unnamed(&mut out);
    out
}

/// What a kernel belongs to: its communicator, and for an exchange the
/// pair of ranks (lower first) in it.
type Unit = (u64, Option<(u32, u32)>);

/// A stream on which no call names a communicator (its file lost every
/// payload, or holds none) joins the communicator that lacks its device,
/// runs on its stream id and shares the longest run of ops with it (at
/// least half the shorter sequence: the evidence used without payloads),
/// its kernels checked against ends like any placed without a call.
fn join_unnamed(out: &mut Split) {
    let rest = std::mem::take(&mut out.rest);
    for mut s in rest {
        let best = out
            .comms
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                c.iter()
                    .all(|m| m.device != s.device && m.stream == s.stream)
            })
            .map(|(i, c)| (common_run(&c[0].ops, &s.ops), i, c[0].ops.len()))
            .filter(|&(run, _, len)| run >= 1 && 2 * run >= len.min(s.ops.len()))
            .max_by_key(|&(run, i, _)| (run, std::cmp::Reverse(i)));
        match best {
            Some((_, i, _)) => {
                s.keyless = s.rows.clone();
                s.keyless.sort_unstable();
                out.comms[i].push(s);
            }
            None => out.rest.push(s),
        }
    }
}

/// The communicator of the kernel at `i` of a stream whose kernels'
/// communicators are `named` (`None` where no call names it): the
/// stream's only one, else the one of both its nearest named neighbours.
fn by_neighbours<T: Copy + PartialEq>(named: &[Option<T>], i: usize) -> Option<T> {
    let mut on_stream = named.iter().flatten();
    let first = *on_stream.next()?;
    if on_stream.all(|&c| c == first) {
        return Some(first);
    }
    let before = named[..i].iter().rev().find_map(|c| *c);
    let after = named[i + 1..].iter().find_map(|c| *c);
    before.filter(|b| Some(*b) == after)
}

/// Whether a kernel placed without its call, ending at `end`, belongs to
/// an instance whose kernels with calls end at `others` (same clock):
/// within `tolerance` of their median.
pub fn ends_fit(end: i64, others: &mut [i64], tolerance: i64) -> bool {
    if others.is_empty() {
        return true;
    }
    let mid = others.len() / 2;
    let (_, median, _) = others.select_nth_unstable(mid);
    end.abs_diff(*median) <= tolerance.unsigned_abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_without_its_call_takes_its_streams_communicator() {
        let named = [Some(7), None, Some(7), Some(7)];
        assert_eq!(by_neighbours(&named, 1), Some(7));
        // Two communicators on one stream: the one on both sides, or none.
        let shared = [Some(7), None, Some(7), Some(9), None, Some(7)];
        assert_eq!(by_neighbours(&shared, 1), Some(7));
        assert_eq!(by_neighbours(&shared, 4), None);
        assert_eq!(by_neighbours(&[None, Some(3)], 0), Some(3));
    }

    #[test]
    fn an_end_fits_near_the_median_of_the_others() {
        assert!(ends_fit(1_000, &mut [990, 1_010, 5_000], 50));
        assert!(!ends_fit(1_200, &mut [990, 1_010, 1_000], 50));
        assert!(ends_fit(1_200, &mut [], 50));
    }
}
