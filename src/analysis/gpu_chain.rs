//! What held a GPU row back between when it could have started and when it
//! did: the work ahead of it on its stream, or the work an event it waited
//! on followed (a stream-wait-event), whichever ended last; then what held
//! that work, and so on back to work that was itself not waiting. A link
//! whose own launch call came after the chain's start was late on the CPU:
//! the first such link gets its launching thread's account (one level).

use super::account::Split;
use super::clock::Alignment;
use super::cuda_sync;
use super::intervals::Span;
use super::thread_account::thread_account;
use crate::profile::{LaneId, NONE, Profile, Sym, ThreadId};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    /// Work ahead of it on the same stream.
    Stream,
    /// The work an event it waited on (stream-wait-event) followed, on
    /// another stream.
    EventWait,
}

impl LinkKind {
    pub fn name(self) -> &'static str {
        match self {
            LinkKind::Stream => "stream",
            LinkKind::EventWait => "event-wait",
        }
    }
}

/// A link's own lateness on the CPU: its launch call ended after the
/// chain's start, so over [chain start, launch-call end] its thread's
/// account explains the wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LateLaunch {
    pub thread: ThreadId,
    pub split: Split<Sym>,
}

/// One link of the chain: work that held what came after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub kind: LinkKind,
    /// The GPU row (kernel, copy or set) and its stream's lane.
    pub row: usize,
    pub lane: LaneId,
    /// Its whole span on the reference clock (not clipped).
    pub start_ns: i64,
    pub end_ns: i64,
    /// How much of the chain's window it covers.
    pub held_ns: i64,
    /// For an event wait, the event (CUDA_EVENT eventId).
    pub event: Option<u32>,
    /// The index in the chain of the link that held this one.
    pub waits_on: Option<usize>,
    pub late_launch: Option<LateLaunch>,
}

/// Chains longer than this are cut (a stream of back-to-back work).
const MAX_LINKS: usize = 16;

/// What it waited behind: (kind, GPU row, event).
fn blockers(p: &Profile, clock: &Alignment, row: usize) -> Vec<(LinkKind, usize, Option<u32>)> {
    let lane = p.gpu.lane(row);
    let rows = &p.lanes[lane as usize].rows;
    let mut out = Vec::new();
    if row > rows.start {
        out.push((LinkKind::Stream, row - 1, None));
    }
    for w in cuda_sync::waits_before(p, clock, row) {
        if let Some(f) = w.followed {
            out.push((LinkKind::EventWait, f, Some(w.event)));
        }
    }
    out
}

/// The chain that held `row` over `window` = [when it could have started,
/// when it did] (reference clock).
pub fn chain(p: &Profile, clock: &Alignment, row: usize, window: Span) -> Vec<Link> {
    let (mut lo, mut hi) = window;
    let mut cur = row;
    let mut out: Vec<Link> = Vec::new();
    let mut cpu_accounted = false;
    while hi > lo && out.len() < MAX_LINKS {
        // the blocker that ended last is the one that held it
        let best = blockers(p, clock, cur)
            .into_iter()
            .map(|(k, r, e)| (k, r, e, clock.gpu_span(p, r)))
            .filter(|&(_, _, _, (_, end))| end > lo)
            .max_by_key(|&(k, r, _, (_, end))| (end, k == LinkKind::Stream, r));
        let Some((kind, b, event, (start_ns, end_ns))) = best else {
            break;
        };
        let at = out.len();
        if let Some(prev) = out.last_mut() {
            prev.waits_on = Some(at);
        }
        let mut link = Link {
            kind,
            row: b,
            lane: p.gpu.lane(b),
            start_ns,
            end_ns,
            held_ns: end_ns.min(hi).saturating_sub(start_ns.max(lo)).max(0),
            event,
            waits_on: None,
            late_launch: None,
        };
        hi = hi.min(start_ns);
        let call = p.gpu.launch(b);
        if call != NONE {
            let call_end = clock.runtime_span(p, call as usize).1.min(hi);
            if call_end > lo {
                if !cpu_accounted {
                    let t = p.runtime.thread(call as usize);
                    link.late_launch = Some(LateLaunch {
                        thread: t,
                        split: thread_account(p, clock, t, (lo, call_end)),
                    });
                    cpu_accounted = true;
                }
                lo = call_end;
            }
        }
        out.push(link);
        cur = b;
    }
    out
}

/// How much of `window` the chain covers (its links' held spans are
/// disjoint: each is clipped to before the one it held).
pub fn held_ns(links: &[Link]) -> i64 {
    links.iter().map(|l| l.held_ns).sum()
}
