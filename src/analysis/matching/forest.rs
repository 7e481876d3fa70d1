//! Union-find, as the matching joins devices, units and exchanges into
//! sets.

/// The root of `x` in a union-find forest (`parent[r] == r` at a root),
/// halving the path on the way.
pub fn root(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}
