//! Draws keyed by what they are for (a kernel's label, step, microbatch, rank…) rather than
//! by the order they are made in: siblings that do the same work get the same durations
//! whatever order the engine visits them in, and adding a draw somewhere shifts nothing else.

use crate::rng::Rng;

/// A generator for the key `parts` under the scenario's `seed`.
pub fn rng(seed: u64, parts: &[u64]) -> Rng {
    let mut h = Rng::new(seed);
    let mut x = h.next_u64();
    for &p in parts {
        x = Rng::new(x ^ p).next_u64();
    }
    Rng::new(x)
}

/// A label as a key part (FNV-1a).
pub fn label(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}
