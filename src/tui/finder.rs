//! The fuzzy finder's entries: kernel names, NVTX range names and matched
//! collective groups, each with how often it occurs; with several hosts or
//! ranks, the devices too (users think in ranks: `r4`, `node03`).

use crate::analysis::Analysis;
use crate::profile::names::KernelNames;
use crate::profile::{GpuKind, Profile, Sym};
use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;

/// What an entry names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// A kernel by one of its names: the finder lists those of the form
    /// the views show.
    Kernel(KernelNames, Sym),
    Nvtx(Sym),
    Group(usize),
    Device(crate::profile::DevId),
    /// A host (index into `Profile::hosts`): `node02` finds the host, not
    /// every device numbered 2.
    Host(u32),
}

/// One finder entry.
#[derive(Debug, Clone)]
pub struct Entry {
    pub kind: EntryKind,
    pub label: String,
    pub count: usize,
}

/// All entries of a profile, most frequent first within each kind.
pub fn entries(p: &Profile, a: &Analysis) -> Vec<Entry> {
    let mut out = Vec::new();
    for (g, group) in a.matching.groups.iter().enumerate() {
        out.push(Entry {
            kind: EntryKind::Group(g),
            label: format!(
                "{} (communicator of {} devices, found by {}{})",
                group.key,
                group.devices.len(),
                group.found_by.name(),
                if group.lockstep_ambiguous {
                    "; may be several in lockstep"
                } else {
                    ""
                }
            ),
            count: group.instances(),
        });
    }
    // Counted by symbol: a slot per interned string beats hashing millions
    // of rows.
    for names in [KernelNames::Short, KernelNames::Demangled] {
        let mut kernels = vec![0usize; p.strings.len()];
        for i in 0..p.gpu.len() {
            if p.gpu.kind(i) == GpuKind::Kernel
                && let Some(c) = kernels.get_mut(p.gpu.name_as(i, names) as usize)
            {
                *c += 1;
            }
        }
        let mut k: Vec<(Sym, usize)> = counted(kernels);
        k.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        out.extend(k.into_iter().map(|(s, count)| Entry {
            kind: EntryKind::Kernel(names, s),
            label: format!("{} (kernel)", p.strings.get(s)),
            count,
        }));
    }
    let mut nvtx = vec![0usize; p.strings.len()];
    for i in 0..p.nvtx.len() {
        if p.nvtx.is_range(i)
            && let Some(c) = nvtx.get_mut(p.nvtx.name(i) as usize)
        {
            *c += 1;
        }
    }
    let mut n: Vec<(Sym, usize)> = counted(nvtx);
    n.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    out.extend(n.into_iter().map(|(s, count)| Entry {
        kind: EntryKind::Nvtx(s),
        label: format!("{} (NVTX)", p.strings.get(s)),
        count,
    }));
    let ranked = p.devices.iter().any(|d| d.rank.is_some());
    if p.hosts.len() > 1 || ranked {
        let mut kernels = vec![0usize; p.devices.len()];
        for l in &p.lanes {
            kernels[l.device as usize] += l.rows.len();
        }
        if p.hosts.len() > 1 {
            for h in 0..p.hosts.len() as u32 {
                let on: Vec<usize> = (0..p.devices.len())
                    .filter(|&d| p.devices[d].host == h)
                    .collect();
                out.push(Entry {
                    kind: EntryKind::Host(h),
                    label: format!("{} (host, {} devices)", p.host_label(h), on.len()),
                    count: on.iter().map(|&d| kernels[d]).sum(),
                });
            }
        }
        for d in crate::analysis::completeness::device_order(p) {
            let dev = &p.devices[d as usize];
            let host = p.host_label(dev.host);
            out.push(Entry {
                kind: EntryKind::Device(d),
                label: format!("{} (device on {host})", p.device_label(d).tag()),
                count: kernels[d as usize],
            });
        }
    }
    out
}

/// The symbols counted at least once, with their counts.
fn counted(per_symbol: Vec<usize>) -> Vec<(Sym, usize)> {
    per_symbol
        .into_iter()
        .enumerate()
        .filter(|c| c.1 > 0)
        .map(|(s, c)| (s as Sym, c))
        .collect()
}

/// How many hits the finder lists.
pub const SHOWN: usize = 200;

/// Entries matching `query`, best first (all, in order, for an empty query).
/// Where some entries hold the query as it was typed (case aside), only
/// those match: `node02` is the host and its devices, not `node00:2`,
/// which matches it letter by letter.
/// Kernels are found by the names the views show (`names`).
pub fn search(entries: &[Entry], query: &str, limit: usize, names: KernelNames) -> Vec<usize> {
    let listed = |e: &Entry| match e.kind {
        EntryKind::Kernel(form, _) => form == names,
        _ => true,
    };
    if query.is_empty() {
        return (0..entries.len())
            .filter(|&i| listed(&entries[i]))
            .take(limit)
            .collect();
    }
    let matcher = SkimMatcherV2::default();
    let lower = query.to_lowercase();
    let literal = |e: &Entry| e.label.to_lowercase().contains(&lower);
    let any_literal = entries.iter().filter(|e| listed(e)).any(literal);
    let mut scored: Vec<(i64, usize)> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| listed(e))
        .filter(|(_, e)| !any_literal || literal(e))
        .filter_map(|(i, e)| matcher.fuzzy_match(&e.label, query).map(|s| (s, i)))
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(limit).map(|(_, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuzzy_search_ranks_matches() {
        let e = |label: &str| Entry {
            kind: EntryKind::Group(0),
            label: label.into(),
            count: 1,
        };
        let entries = vec![
            e("sm90_xmma_gemm (kernel)"),
            e("ncclDevKernel_AllGather_RING_LL (kernel)"),
            e("train_step (NVTX)"),
        ];
        assert_eq!(
            search(&entries, "allgather", 10, KernelNames::Short),
            vec![1]
        );
        assert_eq!(search(&entries, "step", 10, KernelNames::Short), vec![2]);
        assert_eq!(search(&entries, "", 2, KernelNames::Short), vec![0, 1]);
        assert!(search(&entries, "zzzz", 10, KernelNames::Short).is_empty());
    }

    #[test]
    fn a_query_typed_whole_matches_only_what_holds_it() {
        let e = |label: &str| Entry {
            kind: EntryKind::Group(0),
            label: label.into(),
            count: 1,
        };
        let entries = vec![
            e("node00:2 (device on node00)"),
            e("node02 (host, 4 devices)"),
            e("node02:0 (device on node02)"),
        ];
        assert_eq!(
            search(&entries, "node02", 10, KernelNames::Short),
            vec![1, 2]
        );
        // Nothing holds it: letter by letter, as before.
        assert_eq!(search(&entries, "nd02", 10, KernelNames::Short).len(), 3);
    }
}
