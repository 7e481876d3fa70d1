//! Each rank's program: the ops its main thread issues, in order, step by step — Megatron's
//! 1F1B pipeline schedule with batched point-to-point exchanges, sequence-parallel TP
//! collectives around each block's GEMMs, MoE all-to-alls, DP gradient buckets in the last
//! microbatch's backward, the embedding and grad-norm reductions and the optimizer. Every
//! NCCL op carries its instance key: (group, k) is the k-th op of that group on every member.

use super::keyed;
use super::layout::{Kind, Layout};
use super::spec::{Delay, Graphs, Spec};
use crate::names::Compute;

const MIB: u64 = 1 << 20;
/// One microbatch's activations between stages, and one TP shard's input (sequence
/// parallel: 4096 tokens × hidden 4096 × bf16 / tp 2).
const ACT: u64 = 16 * MIB;
const BUCKET: u64 = 48 * MIB;
const EMBEDDING: u64 = 100 * MIB;

/// Whose instances a NCCL op belongs to.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Hash)]
pub enum Group {
    Comm(usize),
    Exchange(usize),
}

/// One NCCL API call of an op: `ncclAllGather`, `ncclSend`, … with the bytes NCCL records
/// and, for ncclSend/ncclRecv, the peer's rank in the communicator.
#[derive(Clone, Debug)]
pub struct Call {
    pub name: &'static str,
    pub bytes: u64,
    pub peer: Option<usize>,
}

/// One NCCL kernel: a collective of a communicator or a grouped point-to-point call
/// (ncclGroupStart … ncclGroupEnd). `blocking`: the compute stream waits for it at once;
/// otherwise only at the next `WaitPending` (DP buckets overlapped with backward).
#[derive(Clone, Debug)]
pub struct Nccl {
    pub group: Group,
    pub kind: Kind,
    pub op: &'static str,
    pub dtype: Option<&'static str>,
    pub proto: &'static str,
    pub calls: Vec<Call>,
    pub blocking: bool,
}

impl Nccl {
    /// Point-to-point calls issued as one group: one SendRecv kernel, waited for at once.
    fn sendrecv(group: Group, kind: Kind, calls: Vec<Call>) -> Nccl {
        Nccl {
            group,
            kind,
            op: "SendRecv",
            dtype: None,
            proto: "Simple",
            calls,
            blocking: true,
        }
    }

    /// Issued between ncclGroupStart and ncclGroupEnd (point-to-point calls).
    pub fn grouped(&self) -> bool {
        self.calls.iter().any(|c| c.peer.is_some())
    }
}

#[derive(Clone, Debug)]
pub enum Work {
    /// The step's input batch copied to the device (cudaMemcpyAsync HtoD, compute stream).
    Input,
    /// A compute kernel on the compute stream; `dur` is the same on every sibling rank.
    Compute {
        kind: Compute,
        dur: i64,
    },
    Nccl(Nccl),
    /// The compute stream waits for the asynchronous NCCL ops issued so far.
    WaitPending,
    /// A CUDA graph replay: one cudaGraphLaunch, these kernels in order on the compute stream.
    Graph {
        graph: i64,
        kernels: Vec<(Compute, i64)>,
    },
    /// The launching thread off-CPU (planted).
    Stall {
        ms: f64,
    },
    /// The loss copied back (DtoH) and cudaStreamSynchronize: the CPU waits for the GPU.
    StepEnd,
}

#[derive(Clone, Debug)]
pub struct Op {
    /// 0-based.
    pub step: usize,
    pub work: Work,
    /// (group, k): the k-th (0-based) op of its group on this rank.
    pub key: Option<(Group, usize)>,
    /// A planted delay on this op (its index in the spec): a stall, or a GEMM that runs long.
    pub delay: Option<usize>,
    /// How much longer a delayed GEMM runs (ns).
    pub extra: i64,
    /// The planted delay (its index) whose target this op is: the op it makes late.
    pub target_of: Option<usize>,
    /// The node-level stall (its index in the spec) this op is one rank's part of.
    pub node_event: Option<usize>,
}

impl Op {
    fn new(step: usize, work: Work) -> Op {
        Op {
            step,
            work,
            key: None,
            delay: None,
            extra: 0,
            target_of: None,
            node_event: None,
        }
    }

    pub fn nccl(&self) -> Option<&Nccl> {
        match &self.work {
            Work::Nccl(n) => Some(n),
            _ => None,
        }
    }

    /// The group kind name a delay's target names ("graph" for a CUDA graph launch).
    fn target_kind(&self) -> Option<(&'static str, &'static str)> {
        match &self.work {
            Work::Nccl(n) => Some((n.kind.name(), n.op)),
            Work::Graph { .. } => Some(("graph", "")),
            _ => None,
        }
    }
}

/// Durations of a compute kernel (µs).
fn range_us(kind: Compute) -> (f64, f64) {
    match kind {
        Compute::Xmma => (350.0, 700.0),
        Compute::Nvjet => (250.0, 500.0),
        Compute::FlashFwd => (300.0, 450.0),
        Compute::FlashBwd => (600.0, 900.0),
        Compute::Elementwise => (20.0, 60.0),
        Compute::Adam => (1500.0, 2500.0),
    }
}

/// Builds every rank's program.
struct Builder<'a> {
    spec: &'a Spec,
    layout: &'a Layout,
    rank: usize,
    stage: usize,
    step: usize,
    ops: Vec<Op>,
    /// Next k per group.
    next: std::collections::HashMap<Group, usize>,
}

impl Builder<'_> {
    fn push(&mut self, work: Work) {
        self.ops.push(Op::new(self.step, work));
    }

    /// A compute kernel whose duration depends on what it is, not on which rank runs it.
    fn compute(&mut self, kind: Compute, label: &'static str, mb: usize, layer: usize) {
        let dur = self.dur(kind, label, mb, layer);
        self.push(Work::Compute { kind, dur });
    }

    fn dur(&self, kind: Compute, label: &str, mb: usize, layer: usize) -> i64 {
        let (lo, hi) = range_us(kind);
        let key = [
            keyed::label(label),
            self.step as u64,
            mb as u64,
            layer as u64,
        ];
        keyed::rng(self.spec.seed, &key).us(lo, hi)
    }

    /// An NCCL op, keyed by its group's count so far.
    fn nccl(&mut self, n: Nccl) {
        let k = self.next.entry(n.group).or_insert(0);
        let mut o = Op::new(self.step, Work::Nccl(n));
        o.key = Some((o.nccl().unwrap().group, *k));
        *k += 1;
        self.ops.push(o);
    }

    /// A collective of this rank's communicator of kind `kind`, if it has one.
    fn coll(&mut self, kind: Kind, op: &'static str, bytes: u64, blocking: bool) {
        let Some(ci) = self.layout.comm_of(self.rank, kind) else {
            return;
        };
        let (api, dtype, proto) = match (op, kind) {
            ("AllGather", _) => ("ncclAllGather", None, "LL128"),
            ("ReduceScatter", Kind::Tp) => ("ncclReduceScatter", Some("bf16"), "LL128"),
            ("ReduceScatter", _) => ("ncclReduceScatter", Some("f32"), "Simple"),
            ("AllReduce", Kind::GradNorm) => ("ncclAllReduce", Some("f32"), "LL"),
            ("AllReduce", Kind::World) => ("ncclAllReduce", Some("i32"), "LL"),
            ("AllReduce", _) => ("ncclAllReduce", Some("f32"), "Simple"),
            _ => panic!("no collective {op}"),
        };
        let call = Call {
            name: api,
            bytes,
            peer: None,
        };
        self.nccl(Nccl {
            group: Group::Comm(ci),
            kind,
            op,
            dtype,
            proto,
            calls: vec![call],
            blocking,
        });
    }

    /// A batched exchange with the neighbouring stage `peer_stage`: what this rank sends and
    /// receives (bytes, 0 for none) as one SendRecv kernel.
    fn p2p(&mut self, peer_stage: usize, send: u64, recv: u64) {
        let peer = self.layout.stage_rank(self.rank, peer_stage);
        let x = self.layout.exchange(self.rank, peer);
        let mut calls = vec![];
        if send > 0 {
            calls.push(Call {
                name: "ncclSend",
                bytes: send,
                peer: Some(peer_stage),
            });
        }
        if recv > 0 {
            calls.push(Call {
                name: "ncclRecv",
                bytes: recv,
                peer: Some(peer_stage),
            });
        }
        self.nccl(Nccl::sendrecv(Group::Exchange(x), Kind::Pp, calls));
    }

    /// The expert-parallel all-to-all: one grouped ncclSend/ncclRecv per other member, sizes
    /// uneven per peer (how many tokens the router sent each way).
    fn all_to_all(&mut self, label: &str, mb: usize, layer: usize) {
        let ci = self
            .layout
            .comm_of(self.rank, Kind::Ep)
            .expect("an EP group");
        let members = self.layout.comms[ci].ranks.clone();
        let me = members.iter().position(|&m| m == self.rank).unwrap();
        let tokens = |src: usize, dst: usize| {
            let key = [
                keyed::label(label),
                self.step as u64,
                mb as u64,
                layer as u64,
                members[src] as u64,
                members[dst] as u64,
            ];
            keyed::rng(self.spec.seed, &key).range(1, 12) as u64 * MIB / 2
        };
        let mut calls = vec![];
        for peer in (0..members.len()).filter(|&p| p != me) {
            calls.push(Call {
                name: "ncclSend",
                bytes: tokens(me, peer),
                peer: Some(peer),
            });
            calls.push(Call {
                name: "ncclRecv",
                bytes: tokens(peer, me),
                peer: Some(peer),
            });
        }
        self.nccl(Nccl::sendrecv(Group::Comm(ci), Kind::Ep, calls));
    }

    fn first(&self) -> bool {
        self.stage == 0
    }

    fn last(&self) -> bool {
        self.stage + 1 == self.spec.pp
    }

    /// The compute of one microbatch's forward, as (kind, label) in order (no collectives):
    /// what a CUDA graph of the forward captures.
    fn forward_kernels(&self) -> Vec<(Compute, &'static str)> {
        let mut v = vec![];
        if self.first() {
            v.push((Compute::Elementwise, "fwd.embedding"));
        }
        for _ in 0..self.spec.layers {
            v.extend([
                (Compute::Xmma, "fwd.qkv"),
                (Compute::FlashFwd, "fwd.attention"),
                (Compute::Nvjet, "fwd.proj"),
                (Compute::Xmma, "fwd.fc1"),
                (Compute::Nvjet, "fwd.fc2"),
            ]);
        }
        if self.last() {
            v.extend([
                (Compute::Nvjet, "fwd.logits"),
                (Compute::Elementwise, "fwd.loss"),
            ]);
        }
        v
    }

    fn forward(&mut self, mb: usize) {
        if self.spec.cuda_graphs == Graphs::Forward {
            let kernels = self
                .forward_kernels()
                .into_iter()
                .enumerate()
                .map(|(i, (k, l))| (k, self.dur(k, l, mb, i)))
                .collect();
            self.push(Work::Graph { graph: 1, kernels });
            return;
        }
        if self.first() {
            self.compute(Compute::Elementwise, "fwd.embedding", mb, 0);
        }
        for l in 0..self.spec.layers {
            self.coll(Kind::Tp, "AllGather", ACT / 2, true);
            self.compute(Compute::Xmma, "fwd.qkv", mb, l);
            self.compute(Compute::FlashFwd, "fwd.attention", mb, l);
            self.compute(Compute::Nvjet, "fwd.proj", mb, l);
            self.coll(Kind::Tp, "ReduceScatter", ACT / 2, true);
            if self.spec.moe.is_some() {
                self.compute(Compute::Elementwise, "fwd.router", mb, l);
                self.all_to_all("fwd.dispatch", mb, l);
                self.compute(Compute::Xmma, "fwd.experts", mb, l);
                self.all_to_all("fwd.combine", mb, l);
                continue;
            }
            self.coll(Kind::Tp, "AllGather", ACT / 2, true);
            // fc1's bias and GeLU are fused into its GEMM's epilogue
            self.compute(Compute::Xmma, "fwd.fc1", mb, l);
            self.compute(Compute::Nvjet, "fwd.fc2", mb, l);
            self.coll(Kind::Tp, "ReduceScatter", ACT / 2, true);
        }
        if self.last() {
            self.compute(Compute::Nvjet, "fwd.logits", mb, 0);
            self.compute(Compute::Elementwise, "fwd.loss", mb, 0);
        }
    }

    /// One microbatch's backward; in the last microbatch each DP bucket is reduced as soon
    /// as the blocks that fill it are done.
    fn backward(&mut self, mb: usize, last_mb: bool) {
        if self.last() {
            self.compute(Compute::Elementwise, "bwd.loss", mb, 0);
            self.compute(Compute::Nvjet, "bwd.logits", mb, 0);
        }
        let blocks = 2 * self.spec.layers;
        let buckets = self.spec.dp_buckets;
        let mut done = 0;
        let mut fired = 0;
        for l in (0..self.spec.layers).rev() {
            for block in ["mlp", "attention"] {
                match (block, self.spec.moe.is_some()) {
                    ("mlp", true) => {
                        self.all_to_all("bwd.dispatch", mb, l);
                        self.compute(Compute::Xmma, "bwd.experts_dgrad", mb, l);
                        self.compute(Compute::Nvjet, "bwd.experts_wgrad", mb, l);
                        self.all_to_all("bwd.combine", mb, l);
                        self.compute(Compute::Elementwise, "bwd.router", mb, l);
                    }
                    ("mlp", false) => {
                        self.coll(Kind::Tp, "AllGather", ACT / 2, true);
                        self.compute(Compute::Xmma, "bwd.fc_dgrad", mb, l);
                        self.compute(Compute::Nvjet, "bwd.fc_wgrad", mb, l);
                        self.coll(Kind::Tp, "ReduceScatter", ACT / 2, true);
                    }
                    _ => {
                        self.coll(Kind::Tp, "AllGather", ACT / 2, true);
                        self.compute(Compute::Xmma, "bwd.proj_dgrad", mb, l);
                        self.compute(Compute::FlashBwd, "bwd.attention", mb, l);
                        self.compute(Compute::Nvjet, "bwd.qkv_wgrad", mb, l);
                        self.coll(Kind::Tp, "ReduceScatter", ACT / 2, true);
                    }
                }
                done += 1;
                if !last_mb {
                    continue;
                }
                while fired < buckets && (fired + 1) * blocks <= done * buckets {
                    let op = if self.spec.distributed_optimizer {
                        "ReduceScatter"
                    } else {
                        "AllReduce"
                    };
                    self.coll(Kind::Dp, op, BUCKET, false);
                    fired += 1;
                }
            }
        }
        if self.first() {
            self.compute(Compute::Elementwise, "bwd.embedding", mb, 0);
        }
    }

    /// Megatron's forward_backward_pipelining_without_interleaving with batched p2p: warm-up
    /// forwards, the steady 1F1B phase, cool-down backwards. Each send/receive pair with one
    /// neighbour is one exchange (one SendRecv kernel on each side).
    fn one_f_one_b(&mut self) {
        let (p, n, m) = (self.stage, self.spec.pp, self.spec.microbatches);
        let (prev, next) = (p.wrapping_sub(1), p + 1);
        let warmup = (n - p - 1).min(m);
        let (mut fwd, mut bwd) = (0, 0);
        for _ in 0..warmup {
            if !self.first() {
                self.p2p(prev, 0, ACT);
            }
            self.forward(fwd);
            fwd += 1;
            if !self.last() {
                self.p2p(next, ACT, 0);
            }
        }
        let steady = m - warmup;
        if steady > 0 && !self.first() {
            self.p2p(prev, 0, ACT);
        }
        for i in 0..steady {
            self.forward(fwd);
            fwd += 1;
            if !self.last() {
                self.p2p(next, ACT, ACT);
            }
            self.backward(bwd, bwd + 1 == m);
            bwd += 1;
            if !self.first() {
                let recv = if i + 1 == steady { 0 } else { ACT };
                self.p2p(prev, ACT, recv);
            }
        }
        for _ in 0..warmup {
            if !self.last() {
                self.p2p(next, 0, ACT);
            }
            self.backward(bwd, bwd + 1 == m);
            bwd += 1;
            if !self.first() {
                self.p2p(prev, ACT, 0);
            }
        }
    }

    fn step(&mut self) {
        self.push(Work::Input);
        if self.spec.pp > 1 {
            self.one_f_one_b();
        } else {
            for mb in 0..self.spec.microbatches {
                self.forward(mb);
                self.backward(mb, mb + 1 == self.spec.microbatches);
            }
        }
        if self.layout.comm_of(self.rank, Kind::Dp).is_some() {
            self.push(Work::WaitPending);
        }
        self.coll(Kind::Emb, "AllReduce", EMBEDDING, true);
        if self.layout.comm_of(self.rank, Kind::GradNorm).is_some() {
            self.compute(Compute::Elementwise, "opt.l2norm", 0, 0);
            self.coll(Kind::GradNorm, "AllReduce", 4, true);
        }
        self.compute(Compute::Adam, "opt.adam", 0, 0);
        if self.spec.distributed_optimizer {
            for _ in 0..self.spec.dp_buckets {
                self.coll(Kind::Dp, "AllGather", BUCKET / self.spec.dp as u64, true);
            }
        }
        // the step's token count summed over the world, for the throughput log
        self.coll(Kind::World, "AllReduce", 4, true);
        self.push(Work::StepEnd);
    }
}

/// Every rank's ops, with the spec's delays planted.
pub fn build(spec: &Spec, layout: &Layout) -> Vec<Vec<Op>> {
    assert!(
        spec.cuda_graphs == Graphs::None || (spec.tp == 1 && spec.moe.is_none()),
        "CUDA graphs capture compute only: tp 1, no MoE"
    );
    let mut programs: Vec<Vec<Op>> = (0..layout.world())
        .map(|rank| {
            let mut b = Builder {
                spec,
                layout,
                rank,
                stage: layout.coord(rank).pp,
                step: 0,
                ops: vec![],
                next: Default::default(),
            };
            for s in 0..spec.steps {
                b.step = s;
                b.step();
            }
            b.ops
        })
        .collect();
    for (d, delay) in spec.delays.iter().enumerate() {
        plant(&mut programs[delay.target().rank], d, delay);
    }
    // a node-level stall: the same pause on every rank of the node, at the same op
    for (e, stall) in spec.node_stalls.iter().enumerate() {
        for r in (0..layout.world()).filter(|&r| spec.node_of(r) == stall.node) {
            let ops = &mut programs[r];
            let at = locate(ops, &stall.target(r), &format!("node stall {e}"));
            let mut o = Op::new(ops[at].step, Work::Stall { ms: stall.ms });
            o.node_event = Some(e);
            ops.insert(at, o);
        }
    }
    programs
}

/// The index of the op target `t` names in its rank's program.
fn locate(ops: &[Op], t: &super::spec::Target, what: &str) -> usize {
    ops.iter()
        .enumerate()
        .filter(|(_, o)| o.step + 1 == t.step)
        .filter(|(_, o)| {
            o.target_kind()
                .is_some_and(|(k, op)| k == t.group && t.op.as_deref().is_none_or(|x| x == op))
        })
        .nth(t.nth - 1)
        .unwrap_or_else(|| panic!("{what}: no target {t:?}"))
        .0
}

/// Puts delay `d` into its rank's program.
fn plant(ops: &mut Vec<Op>, d: usize, delay: &Delay) {
    let at = locate(ops, delay.target(), &format!("delay {d}"));
    ops[at].target_of = Some(d);
    match delay {
        Delay::CpuStall { ms, .. } => {
            let mut o = Op::new(ops[at].step, Work::Stall { ms: *ms });
            o.delay = Some(d);
            ops.insert(at, o);
        }
        Delay::SlowGemm { ms, factor, .. } => {
            let gemm = (0..at)
                .rev()
                .find(|&i| {
                    matches!(
                        ops[i].work,
                        Work::Compute {
                            kind: Compute::Xmma | Compute::Nvjet,
                            ..
                        }
                    )
                })
                .unwrap_or_else(|| panic!("delay {d}: no GEMM before {:?}", delay.target()));
            let Work::Compute { dur, .. } = ops[gemm].work else {
                unreachable!()
            };
            ops[gemm].delay = Some(d);
            ops[gemm].extra = match (ms, factor) {
                (Some(ms), None) => (ms * 1e6) as i64,
                (None, Some(f)) if *f >= 1.0 => (dur as f64 * (f - 1.0)) as i64,
                _ => panic!("delay {d}: slow_gemm takes ms or a factor ≥ 1"),
            };
        }
    }
}

/// The kinds of group rank `ops` uses, in the order of first use (lazy stream creation).
pub fn first_use(ops: &[Op]) -> Vec<Kind> {
    let mut v = vec![];
    for o in ops {
        if let Work::Nccl(n) = &o.work
            && !v.contains(&n.kind)
        {
            v.push(n.kind);
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::spec::Target;

    fn ops() -> Vec<Op> {
        let gemm = Work::Compute {
            kind: Compute::Xmma,
            dur: 400 * 1_000,
        };
        let rs = Nccl {
            group: Group::Comm(0),
            kind: Kind::Tp,
            op: "ReduceScatter",
            dtype: Some("bf16"),
            proto: "LL128",
            calls: vec![],
            blocking: true,
        };
        vec![Op::new(0, gemm), Op::new(0, Work::Nccl(rs))]
    }

    fn at() -> Target {
        Target {
            rank: 0,
            step: 1,
            group: "tp".into(),
            op: Some("ReduceScatter".into()),
            nth: 1,
        }
    }

    #[test]
    fn a_slow_gemm_runs_long_by_ms_or_by_a_factor() {
        for (ms, factor, extra) in [(Some(8.0), None, 8_000_000), (None, Some(3.0), 800_000)] {
            let mut v = ops();
            plant(
                &mut v,
                0,
                &Delay::SlowGemm {
                    at: at(),
                    ms,
                    factor,
                },
            );
            assert_eq!((v[0].delay, v[0].extra), (Some(0), extra));
            assert_eq!(v[1].target_of, Some(0));
        }
    }

    #[test]
    fn a_stall_goes_right_before_its_target() {
        let mut v = ops();
        plant(&mut v, 0, &Delay::CpuStall { at: at(), ms: 22.0 });
        assert!(matches!(v[1].work, Work::Stall { ms } if ms == 22.0));
        assert_eq!(v[2].target_of, Some(0));
    }
}
