//! Checking that the files of one host share its clock. Files that name
//! one host and one boot are tied to one clock before any collective is
//! seen; that is a claim their ends can refute. On one clock the ranks of
//! a collective end within microseconds, so two files of a host whose
//! ranks' ends lie further apart at most of the instances they share do
//! not share a clock as read (a file whose timestamps were scaled, a
//! wrong host name): the files that agree with most of their host stay
//! tied, each other one is fitted on its own.

use super::fit::median;
use super::{Alignment, Apart, MAX_END_MAD_NS, MIN_INSTANCES, MatchedRows, short_ms};
use crate::profile::Profile;
use std::collections::BTreeMap;

/// Files of a host whose ends disagree with most of its other files, each
/// with why (the sentence `report clock` gives).
pub fn disagreeing_files(p: &Profile, a: &Alignment, m: &MatchedRows) -> BTreeMap<usize, Apart> {
    // (file a, file b) → |median end of a's ranks − of b's| per instance.
    let mut apart: BTreeMap<(usize, usize), Vec<f64>> = BTreeMap::new();
    for rows in &m.0 {
        let mut by_file: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
        for &r in rows {
            let r = r as usize;
            let f = p.gpu.file(r);
            by_file
                .entry(f)
                .or_default()
                .push(a.on_domain_clock(f, p.gpu.end(r)) as f64);
        }
        let ends: Vec<(usize, f64)> = by_file.into_iter().map(|(f, e)| (f, median(e))).collect();
        for (i, &(fa, ea)) in ends.iter().enumerate() {
            for &(fb, eb) in &ends[i + 1..] {
                if a.domain(fa) == a.domain(fb) {
                    apart.entry((fa, fb)).or_default().push((ea - eb).abs());
                }
            }
        }
    }
    // Pairs with enough shared instances to judge: (p50 apart, count).
    let judged: BTreeMap<(usize, usize), (f64, usize)> = apart
        .into_iter()
        .filter(|(_, v)| v.len() >= MIN_INSTANCES)
        .map(|(k, v)| {
            let n = v.len();
            (k, (median(v), n))
        })
        .collect();
    let mut out = BTreeMap::new();
    let mut domains: Vec<usize> = (0..a.file_count()).map(|f| a.domain(f)).collect();
    domains.sort_unstable();
    domains.dedup();
    for d in domains {
        let files: Vec<usize> = (0..a.file_count()).filter(|&f| a.domain(f) == d).collect();
        if files.len() < 2 {
            continue;
        }
        let agree = |x: usize, y: usize| {
            judged
                .get(&(x.min(y), x.max(y)))
                .is_none_or(|&(ms, _)| ms <= MAX_END_MAD_NS)
        };
        // The files that agree with each other, most of them; on a tie
        // the one holding the host's first file.
        let components = components(&files, &agree);
        let Some(kept) = components
            .iter()
            .max_by_key(|c| (c.len(), std::cmp::Reverse(c[0])))
        else {
            continue;
        };
        for &f in files.iter().filter(|f| !kept.contains(f)) {
            // The figure against the kept files it was compared with.
            let against: Vec<(f64, usize)> = kept
                .iter()
                .filter_map(|&k| judged.get(&(f.min(k), f.max(k))).copied())
                .collect();
            let Some(&(ns, n)) = against.iter().max_by(|x, y| x.1.cmp(&y.1)) else {
                continue;
            };
            let host = p.files[d].host.as_deref().unwrap_or("its host");
            // Tied by UTC stamps only, the files' timestamps may share a
            // clock while their session starts are known to ms.
            let tie = match a.files[f].host_link {
                Some(super::HostLink::UtcClock) => {
                    "their UTC start stamps tie them only to the stamps' error".to_string()
                }
                _ => format!(
                    "one clock keeps them within {}",
                    short_ms(MAX_END_MAD_NS / 1e6)
                ),
            };
            out.insert(
                f,
                Apart {
                    why: format!(
                        "its ranks' ends lie {} from those of {host}'s other files (median over {n} shared instances; {tie}): fitted on its own",
                        short_ms(ns / 1e6),
                    ),
                    isolate: false,
                },
            );
        }
    }
    out
}

/// The groups of `files` connected by `agree`, each in file order, in
/// order of their first file.
fn components(files: &[usize], agree: &dyn Fn(usize, usize) -> bool) -> Vec<Vec<usize>> {
    let mut seen = vec![false; files.len()];
    let mut out = Vec::new();
    for start in 0..files.len() {
        if seen[start] {
            continue;
        }
        seen[start] = true;
        let mut comp = vec![start];
        let mut i = 0;
        while i < comp.len() {
            let x = comp[i];
            for y in 0..files.len() {
                if !seen[y] && agree(files[x], files[y]) {
                    seen[y] = true;
                    comp.push(y);
                }
            }
            i += 1;
        }
        comp.sort_unstable();
        out.push(comp.into_iter().map(|i| files[i]).collect());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_that_agrees_with_none_is_the_one_apart() {
        // files 0, 1, 3 agree; 2 agrees with nobody
        let agree = |x: usize, y: usize| x != 2 && y != 2;
        let c = components(&[0, 1, 2, 3], &agree);
        assert_eq!(c, vec![vec![0, 1, 3], vec![2]]);
        // two files that disagree: two components, the first file's first
        let c = components(&[4, 7], &|_, _| false);
        assert_eq!(c, vec![vec![4], vec![7]]);
    }
}
