//! When the collectives a host shares with the aligned hosts imply offsets
//! that disagree by milliseconds, each communicator votes once. Pairings
//! made on UTC stamps (ms off) can place one communicator's calls a
//! period of a repeating pattern away (a pipeline's micro-batches, two
//! data-parallel calls in a row): that communicator's offsets are
//! constant, and wrong. Another communicator misplaced by another
//! shift gives another constant offset. Only the true offset is one
//! that every correctly paired communicator agrees on, so the offset
//! most communicators give wins, where a median over instances would land
//! between the shifts.

use super::fit::median;
use std::collections::BTreeMap;

/// The offset most communicators agree on.
#[derive(Debug, Clone, PartialEq)]
pub struct Agreed {
    /// Its points (indices).
    pub points: Vec<usize>,
    /// How many communicators agree on it, of how many.
    pub communicators: Voted,
}

/// How many of a host's communicators agreed on its offset, of how many
/// it shares with the aligned hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Voted {
    pub agreeing: usize,
    pub of: usize,
}

/// The points of the offset most communicators agree on: `keys[i]` names
/// point `i`'s communicator (on the host fitted), `ys[i]` its offset.
/// Communicators whose median offsets lie within `apart` of each other
/// agree. `None` unless at least two communicators agree and no other
/// offset has as many.
pub fn agreed(keys: &[usize], ys: &[f64], apart: f64) -> Option<Agreed> {
    let mut by_key: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for (&k, &y) in keys.iter().zip(ys) {
        by_key.entry(k).or_default().push(y);
    }
    let mut medians: Vec<(f64, usize)> = by_key.into_iter().map(|(k, v)| (median(v), k)).collect();
    medians.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Runs of medians no further than `apart` from the run's first.
    let mut runs: Vec<&[(f64, usize)]> = Vec::new();
    let mut from = 0;
    for i in 1..=medians.len() {
        if i == medians.len() || medians[i].0 - medians[from].0 > apart {
            runs.push(&medians[from..i]);
            from = i;
        }
    }
    runs.sort_by_key(|r| std::cmp::Reverse(r.len()));
    let best = *runs.first()?;
    if best.len() < 2 || runs.get(1).is_some_and(|r| r.len() == best.len()) {
        return None;
    }
    let at = median(best.iter().map(|m| m.0).collect());
    Some(Agreed {
        points: (0..ys.len())
            .filter(|&i| best.iter().any(|m| m.1 == keys[i]) && (ys[i] - at).abs() <= apart)
            .collect(),
        communicators: Voted {
            agreeing: best.len(),
            of: medians.len(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offset_most_communicators_give_wins_over_the_instances_median() {
        // Three communicators at 0 ms, one misplaced by 3.1 ms (four
        // instances), one by 6.8 ms (five): the median of the fifteen
        // instances is 3.1 ms, the misplaced one's.
        let keys = [0, 0, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4];
        let ys = [
            0.0, 0.01, 0.0, 0.02, 0.01, 0.0, 3.1, 3.1, 3.2, 3.2, 6.8, 6.9, 6.8, 6.8, 11.9,
        ]
        .map(|ms| ms * 1e6);
        assert_eq!(median(ys.to_vec()), ys[6]);
        let a = agreed(&keys, &ys, 0.4e6).unwrap();
        assert_eq!(a.points, [0, 1, 2, 3, 4, 5]);
        assert_eq!(a.communicators, Voted { agreeing: 3, of: 5 });
    }

    #[test]
    fn a_tie_or_a_lone_communicator_decides_nothing() {
        let ys = [0.0, 0.0, 3.0e6, 3.0e6];
        assert_eq!(agreed(&[0, 1, 2, 3], &ys, 0.4e6), None);
        assert_eq!(agreed(&[0, 0, 1, 1], &ys, 0.4e6), None);
    }

    #[test]
    fn a_communicators_stray_instance_is_left_out() {
        let keys = [0, 0, 0, 1, 1, 2];
        let ys = [0.0, 0.1e6, 5.0e6, 0.05e6, 0.0, 9.0e6];
        assert_eq!(agreed(&keys, &ys, 0.4e6).unwrap().points, [0, 1, 3, 4]);
    }
}
