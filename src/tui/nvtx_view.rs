//! The NVTX tree view (`T`): one thread's push/pop ranges nested, each
//! with its time, launched kernels and GPU time, and the kernels launched
//! directly in it (not in a child range) as leaves. Rows are derived once
//! per thread; Enter goes to a range or a kernel.

use crate::analysis::nvtx_tree::{self, Node};
use crate::tui::data::Loaded;
use std::collections::HashSet;

/// One row of the view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeRow {
    /// A range: its node in `NvtxTree::nodes`.
    Range(usize),
    /// A kernel launched directly in the range above it: GPU row, level.
    Kernel(usize, usize),
}

/// A thread's tree, as rows.
#[derive(Debug, Clone)]
pub struct NvtxTree {
    pub thread: usize,
    pub nodes: Vec<Node>,
    pub rows: Vec<TreeRow>,
}

/// The tree of thread `t`, with each range's direct kernels under it.
pub fn build(l: &Loaded, t: usize) -> NvtxTree {
    let nodes = nvtx_tree::tree(&l.profile, &l.analysis.clock, t, usize::MAX);
    let mut rows = Vec::with_capacity(nodes.len());
    for (i, n) in nodes.iter().enumerate() {
        rows.push(TreeRow::Range(i));
        // The kernels of its children, which their rows list.
        let mut in_children: HashSet<usize> = HashSet::new();
        for c in nodes[i + 1..].iter().take_while(|c| c.level > n.level) {
            if c.level == n.level + 1 {
                in_children.extend(&c.kernels);
            }
        }
        rows.extend(
            n.kernels
                .iter()
                .filter(|k| !in_children.contains(k))
                .map(|&k| TreeRow::Kernel(k, n.level + 1)),
        );
    }
    // Each range's direct kernels come right after it, before its
    // children: what it launched itself reads first.
    NvtxTree {
        thread: t,
        nodes,
        rows,
    }
}

/// The threads the view can show, and the one to start with: the cursor
/// row's thread when it has ranges, else the first.
pub fn threads(l: &Loaded) -> Vec<usize> {
    nvtx_tree::threads_with_ranges(&l.profile)
}
