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

/// Per truth group, whether the truth names siblings it never parted from.
pub fn has_siblings(truth: &serde_json::Value) -> std::collections::HashMap<&str, bool> {
    truth["siblings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let any = !s["indistinguishable_from"].as_array().unwrap().is_empty();
            (s["group"].as_str().unwrap(), any)
        })
        .collect()
}

/// Every instance's skew by (group, 0-based instance).
pub fn skews_by_instance(
    a: &rankline::analysis::Analysis,
) -> std::collections::HashMap<(usize, usize), &rankline::analysis::skew::InstanceSkew> {
    a.skews
        .iter()
        .flat_map(|gs| gs.instances.iter().map(move |i| ((gs.group, i.index), i)))
        .collect()
}
