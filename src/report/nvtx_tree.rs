//! `report nvtx-tree`: each thread's NVTX push/pop ranges as a tree, with
//! the kernels launched inside each and their GPU time (the union of
//! their execution intervals; see `analysis::nvtx_tree`).

use super::context::Context;
use super::json;
use crate::analysis::nvtx_tree::{self, Node};
use crate::figure_text::fixed;
use crate::text_safe::escape_controls;
use serde_json::{Value, json};

/// The threads asked for (`--thread T4101` or `4101`), or why none.
fn threads(cx: &Context) -> Result<Vec<usize>, String> {
    let p = cx.profile;
    let all = nvtx_tree::threads_with_ranges(p);
    let Some(want) = cx.options.nvtx_thread.as_deref() else {
        return Ok(all);
    };
    let tid = want.trim_start_matches('T');
    let found: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&t| p.threads[t].tid.to_string() == tid)
        .collect();
    if found.is_empty() {
        let known: Vec<String> = all
            .iter()
            .map(|&t| format!("T{}", p.threads[t].tid))
            .collect();
        return Err(format!(
            "--thread {want}: no thread with NVTX push/pop ranges has that id (threads: {})",
            known.join(", ")
        ));
    }
    Ok(found)
}

fn depth(cx: &Context) -> usize {
    cx.options.nvtx_depth.unwrap_or(usize::MAX)
}

/// Nodes `from..` at `level` and below, nested: (the JSON, the next node).
fn nest(cx: &Context, nodes: &[Node], from: usize, level: usize, t: usize) -> (Vec<Value>, usize) {
    let p = cx.profile;
    let mut out = Vec::new();
    let mut i = from;
    while i < nodes.len() && nodes[i].level == level {
        let n = &nodes[i];
        let (children, next) = nest(cx, nodes, i + 1, level + 1, t);
        out.push(json!({
            "name": escape_controls(p.strings.get(p.nvtx.name(n.row))),
            "domain": escape_controls(p.strings.get(p.nvtx.domain(n.row))),
            "thread": p.threads[t].tid,
            "start_ns": n.start,
            "end_ns": n.end,
            "ms": json::ms(n.end - n.start),
            "kernels": n.kernels.len(),
            "gpu_ms": json::ms(n.gpu_ns),
            "children": children,
        }));
        i = next;
    }
    (out, i)
}

pub fn to_json(cx: &Context) -> Value {
    let threads = match threads(cx) {
        Ok(t) => t,
        Err(why) => return json!({ "error": why }),
    };
    let mut ranges = Vec::new();
    for t in threads {
        let nodes = nvtx_tree::tree(cx.profile, cx.clock, t, depth(cx));
        ranges.extend(nest(cx, &nodes, 0, 0, t).0);
    }
    json!({ "ranges": ranges })
}

pub fn to_text(cx: &Context) -> String {
    let p = cx.profile;
    let mut out = String::from(
        "NVTX tree: push/pop ranges per thread, the kernels launched inside each, their GPU time\n  (gpu_ms: the union of those kernels' execution intervals, as nsys's GPU projection)\n",
    );
    let threads = match threads(cx) {
        Ok(t) => t,
        Err(why) => return out + &format!("  {why}\n"),
    };
    if threads.is_empty() {
        return out + "  no NVTX push/pop ranges in this capture\n";
    }
    let width = cx.cols();
    for t in threads {
        let th = &p.threads[t];
        let pr = &p.processes[th.process as usize];
        out += &format!(
            "\nthread T{} (pid {}, {})\n{:>12} {:>8} {:>12}  name\n",
            th.tid,
            pr.pid,
            escape_controls(&p.files[pr.file as usize].name()),
            "ms",
            "kernels",
            "gpu_ms"
        );
        for n in nvtx_tree::tree(p, cx.clock, t, depth(cx)) {
            let lead = format!(
                "{:>12} {:>8} {:>12}  {}",
                fixed((n.end - n.start) as f64 / 1e6, 3),
                n.kernels.len(),
                fixed(n.gpu_ns as f64 / 1e6, 3),
                "  ".repeat(n.level.min(20))
            );
            let name = escape_controls(p.strings.get(p.nvtx.name(n.row)));
            let room = width.map_or(usize::MAX, |w| w.saturating_sub(lead.chars().count()));
            let name = if name.chars().count() <= room {
                name.into_owned()
            } else {
                name.chars()
                    .take(room.saturating_sub(1))
                    .chain(['…'])
                    .collect()
            };
            out += &format!("{lead}{name}\n");
        }
    }
    out
}
