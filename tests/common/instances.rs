//! Finding a truth instance's kernels among rankline's instances.

/// The one rankline instance (group, index) that holds all of `rows` (a
/// truth instance's kernels), and its members' rows sorted; else why not.
pub fn one_instance(
    m: &rankline::analysis::matching::Matching,
    rows: &[usize],
) -> Result<((usize, usize), Vec<usize>), String> {
    let places: std::collections::HashSet<Option<(usize, usize)>> =
        rows.iter().map(|&r| m.instance_of(r)).collect();
    match places.into_iter().collect::<Vec<_>>().as_slice() {
        [Some(x)] => {
            let mut got: Vec<usize> = m.groups[x.0].members(x.1).map(|k| k.1).collect();
            got.sort_unstable();
            Ok((*x, got))
        }
        other => Err(format!("its kernels are in {other:?}")),
    }
}

/// The big events (`group:instance`) that hold none of `rows` (the truth's
/// big instances' kernels): each a false one.
pub fn big_events_without(
    a: &rankline::analysis::Analysis,
    rows: &std::collections::HashSet<usize>,
) -> Vec<String> {
    let m = &a.matching;
    let mut out = Vec::new();
    for gs in &a.skews {
        let g = &m.groups[gs.group];
        for e in &gs.big_events {
            if !g.members(e.instance.index).any(|x| rows.contains(&x.1)) {
                out.push(format!("{}:{}", g.key, e.instance.index + 1));
            }
        }
    }
    out
}
