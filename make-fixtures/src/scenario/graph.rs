//! The timing model as an explicit dependency graph: each node has a duration and waits for
//! other nodes' ends (plus a lag); one topological longest-path pass gives every node's
//! start and end. A step's critical path follows `via` back from its end, and "what if this
//! cause were removed" is the same pass with one node's duration overridden.

pub type NodeId = usize;

struct Node {
    dur: i64,
    /// (node, lag): this node starts no earlier than that node's end plus the lag.
    deps: Vec<(NodeId, i64)>,
}

#[derive(Default)]
pub struct Graph {
    nodes: Vec<Node>,
}

/// The outcome of one pass.
pub struct Times {
    pub start: Vec<i64>,
    pub end: Vec<i64>,
    /// The dependency that set each node's start (None: it started at the origin).
    pub via: Vec<Option<NodeId>>,
}

impl Graph {
    pub fn node(&mut self, dur: i64) -> NodeId {
        assert!(dur >= 0, "negative duration");
        self.nodes.push(Node { dur, deps: vec![] });
        self.nodes.len() - 1
    }

    pub fn dur(&self, n: NodeId) -> i64 {
        self.nodes[n].dur
    }

    /// `n` starts no earlier than `on`'s end + `lag`.
    pub fn after(&mut self, n: NodeId, on: NodeId, lag: i64) {
        self.nodes[n].deps.push((on, lag));
    }

    /// Every node's times, nodes without dependencies starting at `origin`; `overrides`
    /// replaces some nodes' durations. Panics on a cycle (a program that would deadlock).
    pub fn eval(&self, origin: i64, overrides: &[(NodeId, i64)]) -> Times {
        let n = self.nodes.len();
        let mut dur: Vec<i64> = self.nodes.iter().map(|x| x.dur).collect();
        for &(id, d) in overrides {
            dur[id] = d;
        }
        let mut waiting: Vec<usize> = self.nodes.iter().map(|x| x.deps.len()).collect();
        let mut users: Vec<Vec<NodeId>> = vec![vec![]; n];
        for (i, x) in self.nodes.iter().enumerate() {
            for &(d, _) in &x.deps {
                users[d].push(i);
            }
        }
        let mut t = Times {
            start: vec![origin; n],
            end: vec![0; n],
            via: vec![None; n],
        };
        let mut ready: Vec<NodeId> = (0..n).filter(|&i| waiting[i] == 0).collect();
        let mut done = 0;
        while let Some(i) = ready.pop() {
            for &(d, lag) in &self.nodes[i].deps {
                if t.end[d] + lag > t.start[i] || t.via[i].is_none() {
                    t.start[i] = t.end[d] + lag;
                    t.via[i] = Some(d);
                }
            }
            t.end[i] = t.start[i] + dur[i];
            done += 1;
            for &u in &users[i] {
                waiting[u] -= 1;
                if waiting[u] == 0 {
                    ready.push(u);
                }
            }
        }
        assert_eq!(done, n, "the programs deadlock: a cycle of waits");
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// a (10) → c, b (30) → c: c waits for the later of the two; without b's 30, for a.
    #[test]
    fn a_node_starts_after_its_latest_dependency_and_overrides_replay_without_a_cause() {
        let mut g = Graph::default();
        let (a, b, c) = (g.node(10), g.node(30), g.node(5));
        g.after(c, a, 2);
        g.after(c, b, 1);
        let t = g.eval(100, &[]);
        assert_eq!((t.start[c], t.end[c], t.via[c]), (131, 136, Some(b)));
        let t = g.eval(100, &[(b, 0)]);
        assert_eq!((t.start[c], t.via[c]), (112, Some(a)));
    }

    #[test]
    #[should_panic(expected = "deadlock")]
    fn a_cycle_is_a_deadlock() {
        let mut g = Graph::default();
        let (a, b) = (g.node(1), g.node(1));
        g.after(a, b, 0);
        g.after(b, a, 0);
        g.eval(0, &[]);
    }
}
