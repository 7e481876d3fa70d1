//! Finds cycles in a directed graph of names: one shortest cycle per strongly connected
//! group of two or more nodes (Tarjan's algorithm, then a breadth-first search inside it).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// Each group of two or more nodes that reach each other, with one cycle through its first
/// node as `[a, b, …, a]`; empty when there is none.
pub fn cycles(graph: &Graph) -> Vec<(BTreeSet<String>, Vec<String>)> {
    strongly_connected(graph)
        .into_iter()
        .filter(|group| group.len() > 1)
        .map(|group| {
            let cycle = shortest_cycle(graph, &group);
            (group, cycle)
        })
        .collect()
}

/// The shortest way from the group's first node back to itself, inside the group.
fn shortest_cycle(graph: &Graph, group: &BTreeSet<String>) -> Vec<String> {
    let start = group.iter().next().expect("non-empty group");
    let mut came_from: BTreeMap<&String, &String> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for next in graph.get(node).into_iter().flatten() {
            if !group.contains(next) {
                continue;
            }
            if next == start {
                let mut cycle = vec![start.clone()];
                let mut at = node;
                while at != start {
                    cycle.push(at.clone());
                    at = came_from[at];
                }
                cycle.push(start.clone());
                cycle.reverse();
                return cycle;
            }
            if !came_from.contains_key(next) {
                came_from.insert(next, node);
                queue.push_back(next);
            }
        }
    }
    unreachable!("a strongly connected group of two or more nodes has a cycle")
}

/// Tarjan's strongly connected components.
fn strongly_connected(graph: &Graph) -> Vec<BTreeSet<String>> {
    struct Walk<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g String, usize>,
        low: BTreeMap<&'g String, usize>,
        stack: Vec<&'g String>,
        on_stack: BTreeSet<&'g String>,
        groups: Vec<BTreeSet<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, node: &'g String) {
            let n = self.index.len();
            self.index.insert(node, n);
            self.low.insert(node, n);
            self.stack.push(node);
            self.on_stack.insert(node);
            for next in self.graph.get(node).into_iter().flatten() {
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.on_stack.contains(next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut group = BTreeSet::new();
                while let Some(top) = self.stack.pop() {
                    self.on_stack.remove(top);
                    group.insert(top.clone());
                    if top == node {
                        break;
                    }
                }
                self.groups.push(group);
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: vec![],
        on_stack: BTreeSet::new(),
        groups: vec![],
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node) {
            walk.visit(node);
        }
    }
    walk.groups
}
