//! The step account before and after: each side's mean step × rank
//! account over its steps after warm-up, and the causes on its critical
//! paths that would save most (`report steps`' own figures, one
//! [`StepOverview`] per side).

use super::side::Side;
use crate::analysis::step_overview::{self, WARMUP_STEPS};

/// A cause on a side's critical paths, named with that side's labels.
#[derive(Debug, Clone, PartialEq)]
pub struct CauseBrief {
    /// The path segment's kind (`os_wait`, `compute`, …).
    pub kind: &'static str,
    /// Its rank (`D3`), or its host and ranks for a host-wide cause.
    pub on: Option<String>,
    /// The kernel's, call's or OS function's name.
    pub what: Option<String>,
    /// Summed over the steps after warm-up it was found in.
    pub saves_ms: f64,
    pub steps: usize,
}

/// One side's account.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountSide {
    /// Steps after warm-up.
    pub steps: usize,
    /// Each part's mean per step and rank (ms), in `step_account::PARTS`
    /// order.
    pub parts_ms: [f64; 8],
    /// Largest saving first (at most [`CAUSES`]).
    pub causes: Vec<CauseBrief>,
}

/// Before and after; a side without steps after warm-up has none.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StepAccountDiff {
    pub before: Option<AccountSide>,
    pub after: Option<AccountSide>,
}

/// Causes kept per side.
pub const CAUSES: usize = 5;

pub fn step_account_diff(before: Side, after: Side) -> StepAccountDiff {
    StepAccountDiff {
        before: account_side(before),
        after: account_side(after),
    }
}

fn account_side(s: Side) -> Option<AccountSide> {
    let (p, a) = (s.profile, s.analysis);
    let o = step_overview::overview(p, &a.classes, &a.clock, &a.matching, &a.steps, WARMUP_STEPS);
    let kept: Vec<_> = o.accounts.iter().filter(|x| !o.is_warmup(x.step)).collect();
    let cells: usize = kept.iter().map(|x| x.ranks.len()).sum();
    if cells == 0 {
        return None;
    }
    let mut sum = [0i64; 8];
    for r in kept.iter().flat_map(|x| &x.ranks) {
        for (s, v) in sum.iter_mut().zip(r.parts()) {
            *s += v;
        }
    }
    let causes = o
        .causes
        .iter()
        .take(CAUSES)
        .map(|(w, steps)| CauseBrief {
            kind: w.kind.name(),
            on: step_overview::cause_place(p, w),
            what: w.what.map(|s| p.strings.get(s).to_string()),
            saves_ms: w.saves_ns as f64 / 1e6,
            steps: *steps,
        })
        .collect();
    Some(AccountSide {
        steps: kept.len(),
        parts_ms: sum.map(|ns| ns as f64 / 1e6 / cells as f64),
        causes,
    })
}
