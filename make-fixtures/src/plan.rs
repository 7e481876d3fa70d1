//! Per-process plan: GPU operations with fixed times, and the CPU calls (on the main thread)
//! that launched them, placed backwards from the GPU times so that every launch call ends
//! before its operation starts and the calls of one thread never overlap.

use crate::model::{Call, Kernel, Memcpy, Memset, Nvtx, NvtxKind};
use crate::rng::Rng;

/// Gap between consecutive calls of the main thread.
const CALL_GAP: i64 = 1_500;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Phase {
    pub step: usize,
    /// Index into the scenario's sub-phase names (`forward`, `backward`, ...); None: step level.
    pub sub: Option<usize>,
}

pub enum Op {
    Kernel(Kernel),
    Memcpy(Memcpy),
    Memset(Memset),
}

impl Op {
    pub fn start(&self) -> i64 {
        match self {
            Op::Kernel(k) => k.start,
            Op::Memcpy(m) => m.start,
            Op::Memset(m) => m.start,
        }
    }
    fn stream(&self) -> u32 {
        match self {
            Op::Kernel(k) => k.stream,
            Op::Memcpy(m) => m.stream,
            Op::Memset(m) => m.stream,
        }
    }
    fn set_corr(&mut self, corr: i64) {
        match self {
            Op::Kernel(k) => k.corr = corr,
            Op::Memcpy(m) => m.corr = corr,
            Op::Memset(m) => m.corr = corr,
        }
    }
}

/// How an operation was launched.
pub struct Launch {
    pub api: &'static str,
    pub class: u32,
    pub dur: i64,
    /// Minimum queue time: the call ends at most `op.start - q`.
    pub q: i64,
    /// Force the call's end (e.g. issued early, kernel started late on the GPU).
    pub fixed_end: Option<i64>,
    /// Calls right before the launch (api, class, duration).
    pub pre: Vec<(&'static str, u32, i64)>,
    /// Calls right after the launch.
    pub post: Vec<(&'static str, u32, i64)>,
}

impl Launch {
    pub fn new(api: &'static str, class: u32, dur: i64, q: i64) -> Self {
        Launch {
            api,
            class,
            dur,
            q,
            fixed_end: None,
            pre: vec![],
            post: vec![],
        }
    }
}

enum ItemKind {
    Op {
        op: usize,
        launch: Option<Launch>,
    },
    Free {
        api: &'static str,
        class: u32,
        dur: i64,
        gap: i64,
    },
    Sync {
        api: &'static str,
        class: u32,
        end: i64,
    },
}

struct Item {
    key: i64,
    seq: usize,
    kind: ItemKind,
    phase: Option<Phase>,
}

pub struct RankPlan {
    pub pid: u32,
    pub main_tid: u32,
    /// false: the GPU activity of this process was lost by the capture (calls are kept).
    pub recorded: bool,
    pub ops: Vec<Op>,
    items: Vec<Item>,
    /// Calls of other threads (already timed).
    pub other_calls: Vec<Call>,
    /// NVTX rows added by hand (marks, start/end ranges, domain creates).
    pub extra_nvtx: Vec<Nvtx>,
}

/// The outcome of a plan: rows, plus the launch call of each op (by op index).
pub struct RankOut {
    pub kernels: Vec<Kernel>,
    pub memcpys: Vec<Memcpy>,
    pub memsets: Vec<Memset>,
    pub calls: Vec<Call>,
    pub nvtx: Vec<Nvtx>,
    pub launch_of: Vec<Option<(i64, i64)>>,
    /// (start, end) of each step range, in step order.
    pub steps: Vec<(i64, i64)>,
}

impl RankPlan {
    pub fn new(pid: u32, main_tid: u32, recorded: bool) -> Self {
        RankPlan {
            pid,
            main_tid,
            recorded,
            ops: vec![],
            items: vec![],
            other_calls: vec![],
            extra_nvtx: vec![],
        }
    }

    fn push(&mut self, key: i64, kind: ItemKind, phase: Option<Phase>) {
        let seq = self.items.len();
        self.items.push(Item {
            key,
            seq,
            kind,
            phase,
        });
    }

    /// Adds a GPU operation; `launch` None makes it an orphan (no launch call recorded).
    pub fn op(&mut self, op: Op, launch: Option<Launch>, phase: Option<Phase>) -> usize {
        let idx = self.ops.len();
        let key = op.start();
        self.ops.push(op);
        self.push(key, ItemKind::Op { op: idx, launch }, phase);
        idx
    }

    /// A call without GPU work, placed `gap` before the next call in program order
    /// (program order = `key`, the GPU time it precedes).
    pub fn free(
        &mut self,
        key: i64,
        api: &'static str,
        class: u32,
        dur: i64,
        gap: i64,
        phase: Option<Phase>,
    ) {
        self.push(
            key,
            ItemKind::Free {
                api,
                class,
                dur,
                gap,
            },
            phase,
        );
    }

    /// A blocking call that returns at `end` (e.g. cudaStreamSynchronize); it starts right
    /// after the previous call.
    pub fn sync(&mut self, key: i64, api: &'static str, end: i64, phase: Option<Phase>) {
        self.push(key, ItemKind::Sync { api, class: 0, end }, phase);
    }

    /// Places the calls, assigns correlation ids (per process, from `corr_base`, in time order
    /// over all its threads) and derives the NVTX ranges of the phases.
    pub fn finish(
        mut self,
        corr_base: i64,
        step_name: &str,
        sub_names: &[&str],
        rng: &mut Rng,
    ) -> RankOut {
        self.items.sort_by_key(|it| (it.key, it.seq));
        let n = self.items.len();
        // calls per item: Vec of (start, end, api, class); the launch call index per op.
        let mut item_calls: Vec<Vec<(i64, i64, &'static str, u32)>> = vec![vec![]; n];
        let mut launch_call: Vec<Option<(usize, usize)>> = vec![None; self.ops.len()];
        let mut upper = i64::MAX;
        for i in (0..n).rev() {
            let it = &self.items[i];
            let gap = CALL_GAP + rng.range(0, 900);
            match &it.kind {
                ItemKind::Sync { api, class, end } => {
                    assert!(
                        *end <= upper,
                        "sync call overlaps the next call (pid {})",
                        self.pid
                    );
                    // start fixed below, once the previous call is placed
                    item_calls[i].push((*end, *end, api, *class));
                    upper = end - 5_000 - gap;
                }
                ItemKind::Free {
                    api,
                    class,
                    dur,
                    gap: g,
                } => {
                    let end = upper - g;
                    item_calls[i].push((end - dur, end, api, *class));
                    upper = end - dur - gap;
                }
                ItemKind::Op { op, launch } => {
                    let Some(l) = launch else { continue };
                    let post_total: i64 = l.post.iter().map(|p| p.2 + CALL_GAP).sum();
                    let target = l.fixed_end.unwrap_or(self.ops[*op].start() - l.q);
                    let end = target.min(upper - post_total);
                    let start = end - l.dur;
                    let mut calls = vec![];
                    let mut t = start;
                    for p in l.pre.iter().rev() {
                        t -= CALL_GAP;
                        calls.insert(0, (t - p.2, t, p.0, p.1));
                        t -= p.2;
                    }
                    let li = calls.len();
                    calls.push((start, end, l.api, l.class));
                    let mut t = end;
                    for p in &l.post {
                        t += CALL_GAP;
                        calls.push((t, t + p.2, p.0, p.1));
                        t += p.2;
                    }
                    upper = calls[0].0 - gap;
                    launch_call[*op] = Some((i, li));
                    item_calls[i] = calls;
                }
            }
        }
        // sync calls start right after the previous call
        let mut prev_end = i64::MIN;
        for (i, it) in self.items.iter().enumerate() {
            if let ItemKind::Sync { .. } = it.kind {
                let c = &mut item_calls[i][0];
                c.0 = prev_end + CALL_GAP;
                assert!(c.0 < c.1 - 1_000, "sync call too short (pid {})", self.pid);
            }
            if let Some(last) = item_calls[i].last() {
                assert!(
                    item_calls[i][0].0 > prev_end,
                    "calls overlap (pid {})",
                    self.pid
                );
                prev_end = last.1;
            }
        }

        // all calls of the process, correlation ids in time order
        struct Tmp {
            call: Call,
            item: Option<(usize, usize)>,
        }
        let mut all: Vec<Tmp> = vec![];
        for (i, calls) in item_calls.iter().enumerate() {
            for (j, c) in calls.iter().enumerate() {
                all.push(Tmp {
                    call: Call {
                        pid: self.pid,
                        tid: self.main_tid,
                        start: c.0,
                        end: c.1,
                        api: c.2.to_string(),
                        class: c.3,
                        corr: 0,
                    },
                    item: Some((i, j)),
                });
            }
        }
        for c in self.other_calls.drain(..) {
            all.push(Tmp {
                call: c,
                item: None,
            });
        }
        all.sort_by_key(|t| (t.call.start, t.call.tid));
        let mut corr_of: std::collections::HashMap<(usize, usize), i64> = Default::default();
        for (k, t) in all.iter_mut().enumerate() {
            t.call.corr = corr_base + k as i64;
            if let Some(key) = t.item {
                corr_of.insert(key, t.call.corr);
            }
        }
        let mut orphan = corr_base - 1;
        let mut launch_of = vec![None; self.ops.len()];
        for (idx, op) in self.ops.iter_mut().enumerate() {
            match launch_call[idx] {
                Some((i, j)) => {
                    op.set_corr(corr_of[&(i, j)]);
                    let c = item_calls[i][j];
                    launch_of[idx] = Some((c.0, c.1));
                    assert!(
                        c.1 < op.start(),
                        "launch call must end before its op starts"
                    );
                }
                None => {
                    op.set_corr(orphan);
                    orphan -= 1;
                }
            }
        }

        // NVTX: one push/pop range per step, nested ranges per sub-phase
        let mut nvtx = vec![];
        let mut steps = vec![];
        let nsteps = self
            .items
            .iter()
            .filter_map(|it| it.phase.map(|p| p.step + 1))
            .max()
            .unwrap_or(0);
        for s in 0..nsteps {
            let span = |sub: Option<Option<usize>>| {
                let mut lo = i64::MAX;
                let mut hi = i64::MIN;
                for (i, it) in self.items.iter().enumerate() {
                    let Some(p) = it.phase else { continue };
                    if p.step != s || sub.is_some_and(|x| x != p.sub) {
                        continue;
                    }
                    for c in &item_calls[i] {
                        lo = lo.min(c.0);
                        hi = hi.max(c.1);
                    }
                }
                (lo < hi).then_some((lo, hi))
            };
            let (lo, hi) = span(None).expect("step without calls");
            let range = (lo - 25_000, hi + 15_000);
            if let Some(&(_, prev_hi)) = steps.last() {
                assert!(range.0 > prev_hi, "step ranges overlap (pid {})", self.pid);
            }
            steps.push(range);
            nvtx.push(self.range(range.0, range.1, step_name, false));
            let mut prev = i64::MIN;
            for (si, name) in sub_names.iter().enumerate() {
                if let Some((a, b)) = span(Some(Some(si))) {
                    assert!(a - 4_000 > prev, "sub-phases overlap (pid {})", self.pid);
                    prev = b + 3_000;
                    nvtx.push(self.range(a - 4_000, b + 3_000, name, true));
                }
            }
        }
        nvtx.append(&mut self.extra_nvtx);

        let mut out = RankOut {
            kernels: vec![],
            memcpys: vec![],
            memsets: vec![],
            calls: all.into_iter().map(|t| t.call).collect(),
            nvtx,
            launch_of,
            steps,
        };
        // check: one stream runs one thing at a time
        let mut by_stream: Vec<(u32, i64, i64)> = self
            .ops
            .iter()
            .map(|o| {
                let (s, e) = match o {
                    Op::Kernel(k) => (k.start, k.end),
                    Op::Memcpy(m) => (m.start, m.end),
                    Op::Memset(m) => (m.start, m.end),
                };
                assert!(s < e, "empty op");
                (o.stream(), s, e)
            })
            .collect();
        by_stream.sort();
        for w in by_stream.windows(2) {
            if w[0].0 == w[1].0 {
                assert!(
                    w[0].2 <= w[1].1,
                    "ops overlap on stream {} (pid {})",
                    w[0].0,
                    self.pid
                );
            }
        }
        if self.recorded {
            for op in self.ops {
                match op {
                    Op::Kernel(k) => out.kernels.push(k),
                    Op::Memcpy(m) => out.memcpys.push(m),
                    Op::Memset(m) => out.memsets.push(m),
                }
            }
        }
        out
    }

    fn range(&self, start: i64, end: i64, text: &str, registered: bool) -> Nvtx {
        Nvtx {
            pid: self.pid,
            tid: self.main_tid,
            kind: NvtxKind::PushPop,
            start,
            end: Some(end),
            text: text.to_string(),
            registered,
            domain: 0,
            range_id: None,
        }
    }
}
