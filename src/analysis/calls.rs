//! The calls of matched collective instances: the members of an instance
//! that end together. An instance whose members end further apart holds
//! several calls (sibling groups in lockstep the matching could not
//! part), and each member waited only for the last member of its own.

use super::clock::Alignment;
use super::intervals::Span;
use super::matching::Matching;
use crate::profile::Profile;

/// Members of one call end within this of each other on one clock (plus
/// the clocks' error across hosts).
const ONE_END_NS: i64 = 10_000;

/// Calls `f` with each call of two members or more: its members' GPU rows
/// and spans (reference clock), by end, and the clock error between its
/// group's devices (0 on one clock).
pub fn for_each_call(
    p: &Profile,
    clock: &Alignment,
    m: &Matching,
    mut f: impl FnMut(&[(usize, Span)], i64),
) {
    let mut members: Vec<(usize, Span)> = Vec::new();
    for g in &m.groups {
        let apart = ONE_END_NS + g.clock_error_ns();
        for k in 0..g.instances() {
            members.clear();
            members.extend(
                g.members(k)
                    .map(|(_, row, _)| (row, clock.gpu_span(p, row))),
            );
            members.sort_unstable_by_key(|&(row, (_, end))| (end, row));
            for call in members.chunk_by(|a, b| b.1.1 - a.1.1 <= apart) {
                if call.len() >= 2 {
                    f(call, g.clock_error_ns());
                }
            }
        }
    }
}

/// The last start of a call's members: when its last member arrived.
pub fn last_arrival(call: &[(usize, Span)]) -> i64 {
    call.iter().map(|(_, s)| s.0).max().unwrap_or(0)
}
