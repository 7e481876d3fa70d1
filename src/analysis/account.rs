//! Splitting a window of time among what was recorded in it: the core of
//! the "why" account (issue 21). The CPU part of a late rank's delay is the
//! window [earliest peer's start, launch-call end] of its launching thread;
//! every nanosecond of it goes to exactly one explanation, the first in
//! order of precedence that covers it (a synchronising CUDA call before any
//! other CUDA call, before an OS runtime call, before off-CPU time, before
//! on-CPU samples, before an open NVTX range), and what nothing covers is
//! unaccounted. Each explanation's share is an interval union, never a sum
//! of durations, so the shares and the unaccounted time add up to the
//! window exactly.

use super::intervals::{self, Span};

/// What explains a share of the CPU part, in order of precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CpuKind {
    /// A CUDA call that waits for the GPU (stream, event, device sync).
    CudaSync,
    /// Any other CUDA runtime or driver call.
    CudaCall,
    /// An OS runtime call (blocking waits among them).
    Osrt,
    /// The thread was descheduled.
    OffCpu,
    /// On the CPU, named by the frame most samples share.
    OnCpu,
    /// Inside an NVTX range, with nothing finer recorded.
    Nvtx,
}

impl CpuKind {
    pub const ALL: [CpuKind; 6] = [
        CpuKind::CudaSync,
        CpuKind::CudaCall,
        CpuKind::Osrt,
        CpuKind::OffCpu,
        CpuKind::OnCpu,
        CpuKind::Nvtx,
    ];

    /// The name in reports (JSON `kind`).
    pub fn name(self) -> &'static str {
        match self {
            CpuKind::CudaSync => "cuda-sync",
            CpuKind::CudaCall => "cuda-call",
            CpuKind::Osrt => "osrt",
            CpuKind::OffCpu => "off-cpu",
            CpuKind::OnCpu => "on-cpu",
            CpuKind::Nvtx => "nvtx",
        }
    }
}

/// One explanation's share of the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Share<L> {
    pub kind: CpuKind,
    /// The caller's label (a call's or frame's name).
    pub label: L,
    /// The parts of the window it explains (sorted, disjoint).
    pub spans: Vec<Span>,
}

impl<L> Share<L> {
    pub fn ns(&self) -> i64 {
        intervals::total(&self.spans)
    }
}

/// The window split: shares in order of precedence (then of first start),
/// and what nothing explains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split<L> {
    pub window: Span,
    pub shares: Vec<Share<L>>,
    pub unaccounted: Vec<Span>,
}

impl<L> Split<L> {
    pub fn unaccounted_ns(&self) -> i64 {
        intervals::total(&self.unaccounted)
    }
}

/// Splits `window` among `recorded` — (kind, label, span) in any order —
/// by [`CpuKind`] precedence. Within a kind the later-starting span goes
/// first: spans of one kind overlap on a thread only when nested, and the
/// inner one (an NVTX range inside another) is the finer explanation. A
/// label's share is the union of what its spans took; shares go in kind
/// order, then by first start. An empty or reversed window splits into
/// nothing.
pub fn split<L: Clone + PartialEq>(window: Span, recorded: &[(CpuKind, L, Span)]) -> Split<L> {
    let mut free: Vec<Span> = if window.1 > window.0 {
        vec![window]
    } else {
        Vec::new()
    };
    let mut shares: Vec<Share<L>> = Vec::new();
    for kind in CpuKind::ALL {
        let mut mine: Vec<&(CpuKind, L, Span)> = recorded
            .iter()
            .filter(|(k, _, s)| *k == kind && s.1 > s.0)
            .collect();
        // Latest start first; of equal starts, the shorter (inner) first.
        mine.sort_by_key(|(_, _, s)| (std::cmp::Reverse(s.0), s.1));
        let first = shares.len();
        for (_, label, span) in mine {
            let left = intervals::subtract(&free, &[*span]);
            let taken = intervals::subtract(&free, &left);
            free = left;
            if taken.is_empty() {
                continue;
            }
            match shares[first..].iter_mut().find(|x| x.label == *label) {
                Some(x) => x.spans.extend(taken),
                None => shares.push(Share {
                    kind,
                    label: label.clone(),
                    spans: taken,
                }),
            }
        }
        for x in &mut shares[first..] {
            x.spans = intervals::union(std::mem::take(&mut x.spans));
        }
        shares[first..].sort_by_key(|x| x.spans[0].0);
    }
    Split {
        window,
        shares,
        unaccounted: free,
    }
}

/// Whether a CUDA runtime or driver call (its name without the `_v<N>`
/// suffix) waits for the GPU: syncs of a stream, an event, the device or
/// the context, and the copies and frees that synchronise implicitly.
/// Recognised by name because `CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`'s
/// `syncType` is wrong in some exports (2024.5 records a stream
/// synchronize as type 2 with eventId 2³²−1).
pub fn is_sync_call(name: &str) -> bool {
    const SYNC: [&str; 12] = [
        "cudaStreamSynchronize",
        "cudaDeviceSynchronize",
        "cudaEventSynchronize",
        "cudaThreadSynchronize",
        "cudaMemcpy",
        "cudaMemcpy2D",
        "cudaFree",
        "cuStreamSynchronize",
        "cuCtxSynchronize",
        "cuEventSynchronize",
        "cuMemcpyDtoH",
        "cuMemcpyHtoD",
    ];
    SYNC.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use CpuKind::*;

    fn total<L>(s: &Split<L>) -> i64 {
        s.shares.iter().map(Share::ns).sum::<i64>() + s.unaccounted_ns()
    }

    #[test]
    fn each_nanosecond_goes_to_the_first_kind_that_covers_it() {
        // A sync call inside an NVTX range, an OS call overlapping the
        // sync's end, another CUDA call; the window cuts the range.
        let rec = vec![
            (Nvtx, "step", (0, 100)),
            (CudaSync, "cudaStreamSynchronize", (20, 60)),
            (Osrt, "pthread_cond_wait", (50, 70)),
            (CudaCall, "cudaLaunchKernel", (80, 85)),
        ];
        let s = split((10, 90), &rec);
        let got: Vec<(CpuKind, &str, i64)> =
            s.shares.iter().map(|x| (x.kind, x.label, x.ns())).collect();
        assert_eq!(
            got,
            vec![
                (CudaSync, "cudaStreamSynchronize", 40),
                (CudaCall, "cudaLaunchKernel", 5),
                (Osrt, "pthread_cond_wait", 10),
                (Nvtx, "step", 25),
            ]
        );
        assert_eq!(s.unaccounted_ns(), 0);
        assert_eq!(total(&s), 80);
    }

    #[test]
    fn calls_of_one_name_are_one_union_and_gaps_are_unaccounted() {
        // Two overlapping OS calls of one name count their union once.
        let rec = vec![
            (Osrt, "futex", (0, 30)),
            (Osrt, "futex", (20, 40)),
            (Osrt, "poll", (60, 70)),
        ];
        let s = split((0, 100), &rec);
        assert_eq!(s.shares.len(), 2);
        assert_eq!((s.shares[0].label, s.shares[0].ns()), ("futex", 40));
        assert_eq!((s.shares[1].label, s.shares[1].ns()), ("poll", 10));
        assert_eq!(s.unaccounted, vec![(40, 60), (70, 100)]);
        assert_eq!(total(&s), 100);
    }

    #[test]
    fn the_innermost_of_nested_ranges_explains_its_time() {
        let rec = vec![
            (Nvtx, "train_step", (0, 100)),
            (Nvtx, "optimizer_step", (40, 90)),
            (Nvtx, "train_step", (100, 200)),
        ];
        let s = split((0, 150), &rec);
        let got: Vec<(&str, Vec<Span>)> = s
            .shares
            .iter()
            .map(|x| (x.label, x.spans.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("train_step", vec![(0, 40), (90, 150)]),
                ("optimizer_step", vec![(40, 90)]),
            ]
        );
        assert_eq!(total(&s), 150);
    }

    #[test]
    fn nothing_recorded_is_all_unaccounted_and_an_empty_window_nothing() {
        let s = split::<&str>((5, 25), &[]);
        assert!(s.shares.is_empty());
        assert_eq!(s.unaccounted_ns(), 20);
        let s = split((25, 5), &[(Osrt, "poll", (0, 30))]);
        assert!(s.shares.is_empty());
        assert_eq!(s.unaccounted_ns(), 0);
    }

    #[test]
    fn sync_calls_are_known_by_name() {
        assert!(is_sync_call("cudaStreamSynchronize"));
        assert!(is_sync_call("cuCtxSynchronize"));
        assert!(!is_sync_call("cudaStreamWaitEvent"));
        assert!(!is_sync_call("cudaLaunchKernel"));
        assert!(!is_sync_call("cudaMemcpyAsync"));
    }
}
