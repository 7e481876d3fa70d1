//! A dependency graph that replays a trace: each node has a duration and
//! starts at the latest end of its dependencies plus each edge's lag (a
//! node with none at its own release time). Built from observed times
//! with each node's binding edge (the dependency that ended last) lagged
//! by what was observed, it replays the trace exactly; with some
//! durations or lags overridden it says when everything would have ended
//! without them — a what-if that respects slack, since another path may
//! take over.

pub type NodeId = u32;

#[derive(Debug, Default)]
pub struct DepGraph {
    dur: Vec<i64>,
    /// Start of a node with no dependencies.
    release: Vec<i64>,
    /// Per node, its edges `deps[offsets[n]..offsets[n + 1]]`.
    offsets: Vec<u32>,
    deps: Vec<(NodeId, i64)>,
}

/// One replay: each node's start and end, and the dependency that set its
/// start (none: its release).
#[derive(Debug)]
pub struct Replay {
    pub start: Vec<i64>,
    pub end: Vec<i64>,
    pub via: Vec<Option<NodeId>>,
}

/// What a what-if changes: a node's duration, or the lag of the edge from
/// `.1` into `.0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Duration(NodeId, i64),
    Lag(NodeId, NodeId, i64),
}

impl DepGraph {
    /// Adds a node; its edges are the `deps` given (dependency, lag).
    pub fn node(&mut self, dur: i64, release: i64, deps: &[(NodeId, i64)]) -> NodeId {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.dur.push(dur);
        self.release.push(release);
        self.deps.extend_from_slice(deps);
        self.offsets.push(self.deps.len() as u32);
        (self.dur.len() - 1) as NodeId
    }

    pub fn len(&self) -> usize {
        self.dur.len()
    }

    pub fn is_empty(&self) -> bool {
        self.dur.is_empty()
    }

    pub fn dur(&self, n: NodeId) -> i64 {
        self.dur[n as usize]
    }

    pub fn deps(&self, n: NodeId) -> &[(NodeId, i64)] {
        let n = n as usize;
        &self.deps[self.offsets[n] as usize..self.offsets[n + 1] as usize]
    }

    /// Every node's times with `changes` applied. Nodes are added after
    /// their dependencies ([`DepGraph::node`] takes only existing ids), so
    /// one pass in id order is a topological one.
    pub fn replay(&self, changes: &[Change]) -> Replay {
        let n = self.dur.len();
        let mut dur = self.dur.clone();
        let mut lag_of: Vec<(NodeId, NodeId, i64)> = Vec::new();
        for c in changes {
            match *c {
                Change::Duration(node, d) => dur[node as usize] = d,
                Change::Lag(node, on, lag) => lag_of.push((node, on, lag)),
            }
        }
        let mut r = Replay {
            start: vec![0; n],
            end: vec![0; n],
            via: vec![None; n],
        };
        for (i, &d_i) in dur.iter().enumerate() {
            let mut start = None::<(i64, Option<NodeId>)>;
            for &(d, lag) in self.deps(i as NodeId) {
                let lag = lag_of
                    .iter()
                    .find(|c| c.0 as usize == i && c.1 == d)
                    .map_or(lag, |c| c.2);
                let t = r.end[d as usize] + lag;
                if start.is_none_or(|(s, _)| t > s) {
                    start = Some((t, Some(d)));
                }
            }
            let (s, via) = start.unwrap_or((self.release[i], None));
            r.start[i] = s;
            r.end[i] = s + d_i;
            r.via[i] = via;
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// a (10) and b (30) → c: c waits for the later; without b's 30, for a.
    #[test]
    fn a_node_starts_after_its_latest_dependency_and_changes_replay_without_a_cause() {
        let mut g = DepGraph::default();
        let a = g.node(10, 100, &[]);
        let b = g.node(30, 100, &[]);
        let c = g.node(5, 0, &[(a, 2), (b, 1)]);
        let r = g.replay(&[]);
        assert_eq!((r.start[c as usize], r.end[c as usize]), (131, 136));
        assert_eq!(r.via[c as usize], Some(b));
        let r = g.replay(&[Change::Duration(b, 0)]);
        assert_eq!((r.start[c as usize], r.via[c as usize]), (112, Some(a)));
        let r = g.replay(&[Change::Lag(c, b, -20)]);
        assert_eq!((r.start[c as usize], r.via[c as usize]), (112, Some(a)));
    }
}
