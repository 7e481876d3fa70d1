//! Which NCCL API calls (ranges of NCCL's NVTX domain with a payload)
//! issued each NCCL kernel. A call launches its kernel inside itself,
//! unless it is grouped: then `ncclGroupEnd` launches the kernels of every
//! call made since the outermost `ncclGroupStart` (the real 2026.2 export
//! shows ncclSend/ncclRecv so, the launch inside ncclGroupEnd). Rung 2 of
//! matching reads the communicator, the bandwidth figures the size.

use super::kernel_class::KernelClasses;
use super::nccl_name::CollOp;
use crate::profile::{NONE, NcclApiRanges, Profile, ThreadId};
use std::collections::HashMap;

/// What issued one NCCL kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Issued {
    /// The launch call's start (its thread's clock).
    pub at: i64,
    /// The kernel's GPU row.
    pub row: u32,
    pub thread: ThreadId,
    /// The communicator of its call(s), when they name one (all the same).
    pub comm: Option<u64>,
    /// The bytes NCCL recorded for it (per rank), when they can be told:
    /// its own call's, or a group's calls of its op when the group
    /// launched one kernel of that op — summed (coalesced calls), or for
    /// SendRecv the larger of the bytes sent and received (one direction).
    pub bytes: Option<u64>,
    /// For point-to-point calls (ncclSend, ncclRecv), the one peer (its
    /// rank in the communicator) every call of the kernel names; `None`
    /// when they name several (an all-to-all) or none.
    pub peer: Option<u32>,
}

/// The op an NCCL API call's name runs (`None`: not a collective or p2p
/// call, or one whose kernels may be of another op).
pub fn call_op(name: &str) -> Option<CollOp> {
    Some(match name.strip_prefix("nccl")? {
        "AllReduce" => CollOp::AllReduce,
        "AllGather" => CollOp::AllGather,
        "ReduceScatter" => CollOp::ReduceScatter,
        "Broadcast" | "Bcast" => CollOp::Broadcast,
        "Reduce" => CollOp::Reduce,
        "Send" | "Recv" => CollOp::SendRecv,
        "AlltoAll" | "AllToAll" => CollOp::AllToAll,
        _ => return None,
    })
}

/// Every NCCL kernel whose launch call lies inside an NCCL call or a
/// group's `ncclGroupEnd` on its thread, with what those calls say.
pub fn issuing_calls(p: &Profile, classes: &KernelClasses) -> Vec<Issued> {
    let a = &p.nccl_api;
    if a.thread.is_empty() {
        return Vec::new();
    }
    let kinds: Vec<Kind> = a.name.iter().map(|&s| Kind::of(p.strings.get(s))).collect();
    let mut by_thread: HashMap<ThreadId, Thread> = HashMap::new();
    for j in 0..a.thread.len() {
        by_thread.entry(a.thread[j]).or_default().ranges.push(j);
    }
    for t in by_thread.values_mut() {
        t.index(a);
    }
    // (launch start, row, container) per NCCL kernel launched inside one.
    let mut launched: Vec<(i64, u32, ThreadId, usize)> = Vec::new();
    for lane in &p.lanes {
        for i in lane.rows.clone() {
            let call = p.gpu.launch(i);
            if call == NONE || classes.comm(p, i).is_none() {
                continue;
            }
            let (t, at) = (
                p.runtime.thread(call as usize),
                p.runtime.start(call as usize),
            );
            if let Some(j) = by_thread.get(&t).and_then(|th| th.innermost(a, &kinds, at)) {
                launched.push((at, i as u32, t, j));
            }
        }
    }
    launched.sort_unstable();
    let op_of = |row: u32| classes.comm(p, row as usize).map(|c| c.op);
    // The kernels each container launched, in launch order.
    let mut by_container: HashMap<usize, Vec<u32>> = HashMap::new();
    for &(_, row, _, j) in &launched {
        by_container.entry(j).or_default().push(row);
    }
    let mut groups: HashMap<usize, Vec<usize>> = HashMap::new();
    for t in by_thread.values() {
        t.groups(&kinds, &by_container, &mut groups);
    }
    let mut out = Vec::with_capacity(launched.len());
    for &(at, row, thread, j) in &launched {
        let (comm, bytes, peer) = match kinds[j] {
            // A call's kernel of another op (an AllToAll run as SendRecv
            // kernels) does not take the call's size: its convention is
            // the call's op's.
            k @ (Kind::Call(_) | Kind::Recv) => {
                let same = k.op().is_some() && k.op() == op_of(row);
                (a.comm[j], a.bytes[j].filter(|_| same), a.peer[j])
            }
            Kind::GroupEnd => {
                let calls = groups.get(&j).map_or(&[][..], Vec::as_slice);
                let kernels = &by_container[&j];
                let k = kernels.iter().position(|&r| r == row).unwrap_or(0);
                let (comm, bytes) = grouped(a, &kinds, calls, kernels, k, &op_of);
                (comm, bytes, one_peer(a, calls))
            }
            Kind::GroupStart => continue,
        };
        out.push(Issued {
            at,
            row,
            thread,
            comm,
            bytes,
            peer,
        });
    }
    out
}

/// What one of a thread's NCCL ranges is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A call with a payload, and the op of its kernels when its name
    /// says it.
    Call(Option<CollOp>),
    /// `ncclRecv`: a SendRecv call whose bytes are received, not sent.
    Recv,
    GroupStart,
    GroupEnd,
}

impl Kind {
    fn of(name: &str) -> Kind {
        match name {
            "ncclGroupStart" => Kind::GroupStart,
            "ncclGroupEnd" => Kind::GroupEnd,
            "ncclRecv" => Kind::Recv,
            other => Kind::Call(call_op(other)),
        }
    }

    fn is_call(self) -> bool {
        matches!(self, Kind::Call(_) | Kind::Recv)
    }

    /// The op of the call's kernels, when known.
    fn op(self) -> Option<CollOp> {
        match self {
            Kind::Call(op) => op,
            Kind::Recv => Some(CollOp::SendRecv),
            Kind::GroupStart | Kind::GroupEnd => None,
        }
    }
}

/// Communicator and bytes of kernel `k` of `kernels`, all launched by one
/// `ncclGroupEnd` whose group made `calls`: one kernel per call with the
/// calls' ops in order pairs them; a lone kernel of an op every call runs
/// takes all their bytes; anything else cannot be split (no bytes).
fn grouped(
    a: &NcclApiRanges,
    kinds: &[Kind],
    calls: &[usize],
    kernels: &[u32],
    k: usize,
    op_of: &dyn Fn(u32) -> Option<CollOp>,
) -> (Option<u64>, Option<u64>) {
    let first = calls.first().and_then(|&j| a.comm[j]);
    let comm = first.filter(|c| calls.iter().all(|&j| a.comm[j] == Some(*c)));
    let op = |j: usize| kinds[j].op();
    let paired = kernels.len() == calls.len()
        && kernels
            .iter()
            .zip(calls)
            .all(|(&r, &j)| op(j).is_some() && op(j) == op_of(r));
    if paired {
        let j = calls[k];
        return (a.comm[j].or(comm), a.bytes[j]);
    }
    let Some(kop) = op_of(kernels[k]) else {
        return (comm, None);
    };
    if kernels.len() != 1 || calls.is_empty() || calls.iter().any(|&j| op(j) != Some(kop)) {
        return (comm, None);
    }
    let sum = |want: &dyn Fn(usize) -> bool| -> Option<u64> {
        calls
            .iter()
            .filter(|&&j| want(j))
            .try_fold(0u64, |s, &j| a.bytes[j].map(|b| s.saturating_add(b)))
    };
    let bytes = if kop == CollOp::SendRecv {
        let sent = sum(&|j| kinds[j] != Kind::Recv);
        let received = sum(&|j| kinds[j] == Kind::Recv);
        sent.zip(received).map(|(x, y)| x.max(y))
    } else {
        sum(&|_| true)
    };
    (comm, bytes)
}

/// The one peer every point-to-point call of `calls` names, if they name
/// exactly one.
fn one_peer(a: &NcclApiRanges, calls: &[usize]) -> Option<u32> {
    let first = a.peer[*calls.first()?]?;
    calls
        .iter()
        .all(|&j| a.peer[j] == Some(first))
        .then_some(first)
}

/// Each communicator's size and each process's rank in it, from NCCL's
/// communicator-init payloads ("No. of ranks", "Rank"): (process,
/// communicator) → (rank, size).
pub fn ranks_in_communicators(p: &Profile) -> HashMap<(crate::profile::ProcId, u64), (u32, u32)> {
    let a = &p.nccl_api;
    let mut out = HashMap::new();
    for j in 0..a.thread.len() {
        if let (Some(comm), Some(rank), Some(n)) = (a.comm[j], a.rank[j], a.nranks[j]) {
            let process = p.threads[a.thread[j] as usize].process;
            out.insert((process, comm), (rank, n));
        }
    }
    out
}

/// One thread's NCCL ranges by start, with the latest end reached by any
/// range up to each (so a search back stops where none can reach).
#[derive(Default)]
struct Thread {
    ranges: Vec<usize>,
    reach: Vec<i64>,
}

impl Thread {
    fn index(&mut self, a: &NcclApiRanges) {
        self.ranges
            .sort_by_key(|&j| (a.start[j], std::cmp::Reverse(a.end[j])));
        let mut reach = i64::MIN;
        self.reach = self
            .ranges
            .iter()
            .map(|&j| {
                reach = reach.max(a.end[j]);
                reach
            })
            .collect();
    }

    /// The shortest call or `ncclGroupEnd` holding `at`: of ranges that
    /// nest, the one that starts last. Walks back only over ranges some of
    /// which reach `at`.
    fn innermost(&self, a: &NcclApiRanges, kinds: &[Kind], at: i64) -> Option<usize> {
        let upto = self.ranges.partition_point(|&j| a.start[j] <= at);
        let mut best: Option<usize> = None;
        for k in (0..upto).rev() {
            if self.reach[k] < at {
                break;
            }
            let j = self.ranges[k];
            let len = |j: usize| a.end[j].saturating_sub(a.start[j]);
            if a.end[j] >= at
                && kinds[j] != Kind::GroupStart
                && best.is_none_or(|b| len(j) < len(b))
            {
                best = Some(j);
            }
        }
        best
    }

    /// Each outermost `ncclGroupEnd` that launched kernels, with the calls
    /// of its group: those since its outermost `ncclGroupStart` (nested
    /// groups launch at the outermost end), or, when that start is not in
    /// the capture, since the previous group ended; a call that launched a
    /// kernel inside itself is not part of a group.
    fn groups(
        &self,
        kinds: &[Kind],
        launched: &HashMap<usize, Vec<u32>>,
        out: &mut HashMap<usize, Vec<usize>>,
    ) {
        let mut depth = 0usize;
        let mut calls: Vec<usize> = Vec::new();
        for &j in &self.ranges {
            match kinds[j] {
                Kind::GroupStart => {
                    if depth == 0 {
                        calls.clear();
                    }
                    depth += 1;
                }
                Kind::GroupEnd => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        let group = std::mem::take(&mut calls);
                        if launched.contains_key(&j) {
                            out.insert(j, group);
                        }
                    }
                }
                k if k.is_call() && !launched.contains_key(&j) => calls.push(j),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_names_give_their_ops() {
        assert_eq!(call_op("ncclAllReduce"), Some(CollOp::AllReduce));
        assert_eq!(call_op("ncclSend"), Some(CollOp::SendRecv));
        assert_eq!(call_op("ncclRecv"), Some(CollOp::SendRecv));
        assert_eq!(call_op("ncclBcast"), Some(CollOp::Broadcast));
        assert_eq!(call_op("ncclCommCount"), None);
        assert_eq!(call_op("AllReduce"), None);
    }

    /// (name, start, end, communicator, bytes).
    type Row<'a> = (&'a str, i64, i64, Option<u64>, Option<u64>);

    /// The calls of `rows` on one thread, and what each is.
    fn table(rows: &[Row]) -> (NcclApiRanges, Vec<Kind>) {
        let mut a = NcclApiRanges::default();
        let mut kinds = Vec::new();
        for (i, &(name, s, e, c, b)) in rows.iter().enumerate() {
            a.name.push(i as u32);
            a.thread.push(0);
            a.start.push(s);
            a.end.push(e);
            a.comm.push(c);
            a.bytes.push(b);
            a.peer.push(None);
            a.rank.push(None);
            a.nranks.push(None);
            kinds.push(Kind::of(name));
        }
        (a, kinds)
    }

    #[test]
    fn a_group_is_its_calls_since_the_outermost_start() {
        let (a, kinds) = table(&[
            ("ncclAllReduce", 0, 10, Some(1), Some(5)), // launched its own kernel
            ("ncclGroupStart", 20, 21, None, None),
            ("ncclGroupStart", 22, 23, None, None),
            ("ncclSend", 24, 25, Some(1), Some(7)),
            ("ncclGroupEnd", 26, 27, None, None), // inner: launches nothing
            ("ncclRecv", 28, 29, Some(1), Some(9)),
            ("ncclGroupEnd", 30, 40, None, None),
            ("ncclSend", 50, 51, Some(1), Some(3)),
            ("ncclGroupEnd", 52, 60, None, None), // its start is not captured
        ]);
        let mut t = Thread {
            ranges: (0..a.start.len()).collect(),
            ..Default::default()
        };
        t.index(&a);
        assert_eq!(t.innermost(&a, &kinds, 5), Some(0));
        assert_eq!(t.innermost(&a, &kinds, 35), Some(6));
        assert_eq!(
            t.innermost(&a, &kinds, 20),
            None,
            "a group start holds no launch"
        );
        let launched: HashMap<usize, Vec<u32>> =
            [(0, vec![100]), (6, vec![101]), (8, vec![102])].into();
        let mut groups = HashMap::new();
        t.groups(&kinds, &launched, &mut groups);
        assert_eq!(groups[&6], vec![3, 5]);
        assert_eq!(groups[&8], vec![7]);
        let sendrecv = |_: u32| Some(CollOp::SendRecv);
        // One SendRecv kernel: one direction's bytes, the larger.
        assert_eq!(
            grouped(&a, &kinds, &groups[&6], &[101], 0, &sendrecv),
            (Some(1), Some(9))
        );
    }

    #[test]
    fn grouped_calls_pair_with_kernels_or_are_not_split() {
        let (a, kinds) = table(&[
            ("ncclAllReduce", 0, 1, Some(4), Some(2)),
            ("ncclAllReduce", 2, 3, Some(4), Some(6)),
            ("ncclAllGather", 4, 5, Some(4), Some(1)),
        ]);
        let ar = |_: u32| Some(CollOp::AllReduce);
        // Two calls, one kernel: coalesced, both calls' bytes.
        assert_eq!(
            grouped(&a, &kinds, &[0, 1], &[9], 0, &ar),
            (Some(4), Some(8))
        );
        // Two calls, two kernels of their ops: one each, in order.
        assert_eq!(
            grouped(&a, &kinds, &[0, 1], &[8, 9], 1, &ar),
            (Some(4), Some(6))
        );
        // Calls of two ops, one kernel: the communicator, no bytes.
        assert_eq!(grouped(&a, &kinds, &[0, 2], &[9], 0, &ar), (Some(4), None));
        // Three kernels for two calls: no bytes.
        assert_eq!(
            grouped(&a, &kinds, &[0, 1], &[7, 8, 9], 0, &ar),
            (Some(4), None)
        );
    }
}
