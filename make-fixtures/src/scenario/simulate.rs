//! Programs → the dependency graph (graph.rs): each rank's main thread is a chain of CPU
//! nodes (Python between ops, the CUDA and NCCL calls), each stream a chain of GPU nodes that
//! also wait for their launch call and for CUDA events of other streams; a collective's
//! members meet at one rendezvous node (the latest member's start, then the transfer) and
//! each ends a small jitter after it. Durations are drawn by what they are (keyed.rs), so
//! sibling ranks run in lockstep unless a planted delay parts them.

use std::collections::{BTreeMap, HashMap};

use super::graph::{Graph, NodeId};
use super::keyed;
use super::layout::{Kind, Layout};
use super::program::{Call, Group, Op, Work};
use super::spec::Spec;
use super::streams::{COMPUTE, Streams};
use crate::names::Compute;

const US: i64 = 1_000;
/// Where the job's clock starts: 1.5 s into the capture (session-relative timestamps; below
/// 2^31 ns, so SQLite stores them in 4 bytes and the files stay small).
pub const ORIGIN: i64 = 1_500_000_000;

/// A CPU interval of a rank's main thread: [start of `start`, end of `end`].
pub struct Cpu {
    pub rank: usize,
    pub step: Option<usize>,
    pub start: NodeId,
    pub end: NodeId,
    pub what: CpuWhat,
}

pub enum CpuWhat {
    /// A CUDA runtime (class 0) or driver (class 1) call; `gpu`: what it launched.
    Api {
        api: &'static str,
        class: u32,
        gpu: Vec<usize>,
    },
    /// An NCCL API range (NCCL's NVTX domain) of communicator `comm`; `call`: the call whose
    /// payload it carries (None: ncclGroupStart, or a ncclGroupEnd whose calls carry theirs).
    Nccl {
        name: &'static str,
        comm: usize,
        call: Option<Call>,
    },
    /// NCCL's communicator init (ncclCommInitRankConfig) of communicator `comm`.
    CommInit { comm: usize },
    /// A planted off-CPU wait (an OS runtime pthread_cond_wait).
    Stall,
}

pub enum GpuWhat {
    Kernel(Compute),
    Nccl {
        instance: usize,
    },
    /// cudaMemcpyAsync: (copyKind 1 HtoD / 2 DtoH, bytes).
    Copy(u32, i64),
}

/// One GPU activity: [start of `start`, end of `end`] on `stream` of `rank`'s device.
pub struct Gpu {
    pub rank: usize,
    pub stream: u32,
    pub start: NodeId,
    pub end: NodeId,
    pub what: GpuWhat,
    /// (graphNodeId, graphId) of a graph replay's kernel.
    pub graph: Option<(i64, i64)>,
}

/// One collective instance (or exchange instance): its members' GPU activities.
pub struct Instance {
    pub group: Group,
    /// 0-based, in order along the group.
    pub k: usize,
    pub step: usize,
    pub op: &'static str,
    pub dtype: Option<&'static str>,
    pub proto: &'static str,
    /// (rank, GPU activity), in communicator-rank order.
    pub members: Vec<(usize, usize)>,
}

/// A planted delay as the graph holds it: the node, its duration without the delay.
pub struct Planted {
    pub node: NodeId,
    pub without: i64,
    /// The rank's first GPU activity the delay precedes (the late op).
    pub target: usize,
}

pub struct Sim {
    pub graph: Graph,
    pub cpu: Vec<Cpu>,
    pub gpu: Vec<Gpu>,
    pub instances: Vec<Instance>,
    pub planted: Vec<Planted>,
    /// Per rank, per step: the CPU nodes the step's NVTX range spans.
    pub steps: Vec<Vec<(NodeId, NodeId)>>,
    /// Per node-level stall of the spec: (rank, its stall's node).
    pub node_stalls: Vec<Vec<(usize, NodeId)>>,
    /// Each instance's rendezvous node (its duration is the transfer).
    pub rendezvous: Vec<NodeId>,
}

/// The state of one rank while its program is laid into the graph.
struct Rank {
    rank: usize,
    cpu: NodeId,
    /// The last node of each stream.
    streams: HashMap<u32, NodeId>,
    /// Asynchronous NCCL ends the compute stream has not waited for yet.
    pending: Vec<NodeId>,
}

struct Builder<'a> {
    spec: &'a Spec,
    layout: &'a Layout,
    streams: &'a Streams,
    sim: Sim,
    /// The rendezvous node of each instance; its index by key.
    rendezvous: Vec<NodeId>,
    index: BTreeMap<(Group, usize), usize>,
    /// The collective init of each communicator (its rendezvous node).
    inits: HashMap<usize, NodeId>,
}

pub fn run(spec: &Spec, layout: &Layout, streams: &Streams, programs: &[Vec<Op>]) -> Sim {
    let mut b = Builder {
        spec,
        layout,
        streams,
        sim: Sim {
            graph: Graph::default(),
            cpu: vec![],
            gpu: vec![],
            instances: vec![],
            planted: (0..spec.delays.len())
                .map(|_| Planted {
                    node: 0,
                    without: 0,
                    target: usize::MAX,
                })
                .collect(),
            steps: vec![vec![]; programs.len()],
            node_stalls: vec![vec![]; spec.node_stalls.len()],
            rendezvous: vec![],
        },
        rendezvous: vec![],
        index: BTreeMap::new(),
        inits: HashMap::new(),
    };
    b.instances(programs);
    for (r, ops) in programs.iter().enumerate() {
        b.rank(r, ops);
    }
    for (d, p) in b.sim.planted.iter().enumerate() {
        assert!(p.target != usize::MAX, "delay {d} precedes no GPU work");
    }
    b.sim.rendezvous = std::mem::take(&mut b.rendezvous);
    b.sim
}

impl Builder<'_> {
    /// Collects the instances from the programs' keys and gives each its rendezvous node.
    fn instances(&mut self, programs: &[Vec<Op>]) {
        let mut by_key: BTreeMap<(Group, usize), Vec<(usize, &Op)>> = BTreeMap::new();
        for (r, ops) in programs.iter().enumerate() {
            for o in ops {
                if let Some(key) = o.key {
                    by_key.entry(key).or_default().push((r, o));
                }
            }
        }
        for ((group, k), members) in by_key {
            let ranks: Vec<usize> = match group {
                Group::Comm(c) => self.layout.comms[c].ranks.clone(),
                Group::Exchange(x) => self.layout.exchanges[x].ranks.to_vec(),
            };
            let mut have: Vec<usize> = members.iter().map(|m| m.0).collect();
            have.sort();
            let mut want = ranks.clone();
            want.sort();
            assert_eq!(have, want, "{group:?} #{k}: members");
            let first = members[0].1.nccl().expect("a keyed op is an NCCL op");
            for (r, o) in &members {
                let op = o.nccl().unwrap().op;
                assert_eq!(op, first.op, "{group:?} #{k}: rank {r} runs another op");
            }
            if let Group::Exchange(_) = group {
                check_directions(&members);
            }
            let t = self.transfer(group, first.kind, first.op, k);
            self.rendezvous.push(self.sim.graph.node(t));
            self.index.insert((group, k), self.sim.instances.len());
            self.sim.instances.push(Instance {
                group,
                k,
                step: members[0].1.step,
                op: first.op,
                dtype: first.dtype,
                proto: first.proto,
                members: vec![],
            });
        }
    }

    /// An instance's transfer time: the same for sibling groups (drawn by kind, op, k and,
    /// for an exchange, its stage pair).
    fn transfer(&self, group: Group, kind: Kind, op: &str, k: usize) -> i64 {
        let (lo, hi) = match (kind, op) {
            (Kind::Tp, _) => (90.0, 140.0),
            (Kind::Pp, _) => (60.0, 110.0),
            (Kind::Dp, "AllReduce") => (1500.0, 2500.0),
            (Kind::Dp, _) => (800.0, 1200.0),
            (Kind::Emb, _) => (400.0, 600.0),
            (Kind::GradNorm, _) => (15.0, 25.0),
            (Kind::Ep, _) => (150.0, 300.0),
            (Kind::World, _) => (20.0, 35.0),
        };
        let pair = match group {
            Group::Exchange(x) => self.layout.coord(self.layout.exchanges[x].ranks[0]).pp,
            Group::Comm(_) => 0,
        };
        let key = [
            keyed::label(kind.name()),
            keyed::label(op),
            k as u64,
            pair as u64,
        ];
        keyed::rng(self.spec.seed, &key).us(lo, hi)
    }

    fn draw(&self, r: usize, parts: &[u64], lo_us: f64, hi_us: f64) -> i64 {
        let mut key = vec![r as u64];
        key.extend(parts);
        keyed::rng(self.spec.seed ^ 0xC0FF_EE00, &key).us(lo_us, hi_us)
    }

    /// A node of `dur` on the rank's thread after its previous one (+ `gap`).
    fn cpu_node(&mut self, st: &mut Rank, dur: i64, gap: i64) -> NodeId {
        let n = self.sim.graph.node(dur);
        self.sim.graph.after(n, st.cpu, gap);
        st.cpu = n;
        n
    }

    /// A CPU interval of `dur` after the thread's previous one (+ `gap`).
    fn cpu(
        &mut self,
        st: &mut Rank,
        step: Option<usize>,
        dur: i64,
        gap: i64,
        what: CpuWhat,
    ) -> usize {
        let n = self.cpu_node(st, dur, gap);
        self.interval(st.rank, step, (n, n), what)
    }

    /// Records CPU interval [start of `span.0`, end of `span.1`] of rank `rank`.
    fn interval(
        &mut self,
        rank: usize,
        step: Option<usize>,
        span: (NodeId, NodeId),
        what: CpuWhat,
    ) -> usize {
        let (start, end) = span;
        self.sim.cpu.push(Cpu {
            rank,
            step,
            start,
            end,
            what,
        });
        self.sim.cpu.len() - 1
    }

    /// A runtime call launching GPU work.
    fn api(
        &mut self,
        st: &mut Rank,
        step: usize,
        api: &'static str,
        class: u32,
        dur: i64,
        gap: i64,
    ) -> usize {
        self.cpu(st, Some(step), dur, gap, api_what(api, class))
    }

    /// A GPU node on `stream` of `dur`, after launch call `call` and the stream's last node.
    fn gpu_node(&mut self, st: &mut Rank, stream: u32, call: usize, dur: i64, salt: u64) -> NodeId {
        let n = self.sim.graph.node(dur);
        let launch = self.sim.cpu[call].end;
        let latency = self.draw(st.rank, &[salt, 1], 4.0, 7.0);
        self.sim.graph.after(n, launch, latency);
        if let Some(&prev) = st.streams.get(&stream) {
            let gap = self.draw(st.rank, &[salt, 2], 1.0, 2.0);
            self.sim.graph.after(n, prev, gap);
        }
        n
    }

    /// Adds GPU activity `g` launched by call `call`; `o`'s planted delay, if `o` is a
    /// delay's target, gets it as its late op.
    fn push_gpu(&mut self, st: &mut Rank, g: Gpu, call: usize, o: &Op) -> usize {
        let i = self.sim.gpu.len();
        st.streams.insert(g.stream, g.end);
        self.sim.gpu.push(g);
        if let CpuWhat::Api { gpu, .. } = &mut self.sim.cpu[call].what {
            gpu.push(i);
        }
        if let Some(d) = o.target_of
            && self.sim.planted[d].target == usize::MAX
        {
            self.sim.planted[d].target = i;
        }
        i
    }

    /// The compute stream waits (a CUDA event) for `ends`.
    fn compute_waits(&mut self, st: &mut Rank, ends: &[NodeId]) {
        let w = self.sim.graph.node(0);
        if let Some(&prev) = st.streams.get(&COMPUTE) {
            self.sim.graph.after(w, prev, 0);
        }
        for &e in ends {
            self.sim.graph.after(w, e, 2 * US);
        }
        st.streams.insert(COMPUTE, w);
    }

    fn rank(&mut self, r: usize, ops: &[Op]) {
        let root = self.sim.graph.node(0);
        let mut st = Rank {
            rank: r,
            cpu: root,
            streams: HashMap::new(),
            pending: vec![],
        };
        // processes start a little apart; each creates its NCCL streams and communicators
        let start = self.draw(r, &[0], 0.0, 2000.0);
        let props = api_what("cudaGetDeviceProperties_v2_v12000", 0);
        self.cpu(&mut st, None, 2 * US, start, props);
        for s in self.streams.created_by(r) {
            let d = self.draw(r, &[s as u64, 2], 5.0, 15.0);
            let create = api_what("cudaStreamCreateWithPriority_v5050", 0);
            self.cpu(&mut st, None, d, 300 * US, create);
        }
        // NCCL's init is collective: each member returns when all have joined (and the job
        // starts in step), every rank creating its communicators in the same kind order
        for kind in Kind::ALL {
            if let Some(comm) = self.layout.comm_of(r, kind) {
                let enter = self.cpu_node(&mut st, 0, 400 * US);
                let all = *self.inits.entry(comm).or_insert_with(|| {
                    // as long for sibling communicators: the job starts in lockstep
                    let key = [0x1417, keyed::label(kind.name())];
                    let d = keyed::rng(self.spec.seed, &key).us(2000.0, 4000.0);
                    self.sim.graph.node(d)
                });
                self.sim.graph.after(all, enter, 0);
                let d = self.draw(r, &[comm as u64, 3], 5.0, 20.0);
                let leave = self.cpu_node(&mut st, d, 0);
                self.sim.graph.after(leave, all, 0);
                self.interval(r, None, (enter, leave), CpuWhat::CommInit { comm });
            }
        }
        let mut step_first: Option<NodeId> = None;
        for (i, o) in ops.iter().enumerate() {
            let salt = ((o.step as u64) << 32) | i as u64;
            let first_item = self.sim.cpu.len();
            self.op(&mut st, o, salt);
            if step_first.is_none() && first_item < self.sim.cpu.len() {
                step_first = Some(self.sim.cpu[first_item].start);
            }
            if let Work::StepEnd = o.work {
                let first = step_first.take().expect("a step has CPU work");
                self.sim.steps[r].push((first, st.cpu));
            }
        }
    }

    fn op(&mut self, st: &mut Rank, o: &Op, salt: u64) {
        let step = o.step;
        let python = |b: &Self, lo, hi| b.draw(st.rank, &[salt, 9], lo, hi);
        match &o.work {
            Work::Input => {
                // between steps the job idles (evaluation, checkpointing: no CUDA work)
                let idle = if step > 0 { self.spec.step_gap_ms } else { 0.0 };
                let gap = python(self, 40.0, 80.0) + (idle * 1e6) as i64;
                let d = self.draw(st.rank, &[salt, 3], 10.0, 20.0);
                let call = self.api(st, step, "cudaMemcpyAsync_v3020", 0, d, gap);
                // the same batch size on every rank: drawn as rank 0's
                let dur = self.draw(0, &[salt, 4], 150.0, 200.0);
                let n = self.gpu_node(st, COMPUTE, call, dur, salt);
                let g = gpu(st.rank, COMPUTE, n, GpuWhat::Copy(1, 4 << 20));
                self.push_gpu(st, g, call, o);
            }
            Work::Compute { kind, dur } => {
                let gap = python(self, 15.0, 40.0);
                let d = self.draw(st.rank, &[salt, 3], 4.0, 9.0);
                let call = self.api(st, step, "cudaLaunchKernel_v7000", 0, d, gap);
                let jitter = self.draw(st.rank, &[salt, 5], 0.0, 1.0)
                    + self.draw(st.rank, &[salt, 6], 0.0, self.spec.drift_us);
                let dur = match &self.spec.throttle {
                    Some(t) if t.rank == st.rank && t.steps.contains(&(step + 1)) => {
                        (*dur as f64 * t.factor) as i64
                    }
                    _ => *dur,
                };
                let n = self.gpu_node(st, COMPUTE, call, dur + jitter + o.extra, salt);
                if let Some(d) = o.delay {
                    self.sim.planted[d].node = n;
                    self.sim.planted[d].without = dur + jitter;
                }
                let g = gpu(st.rank, COMPUTE, n, GpuWhat::Kernel(*kind));
                self.push_gpu(st, g, call, o);
            }
            Work::Nccl(_) => self.nccl(st, o, salt),
            Work::WaitPending => {
                let ends = std::mem::take(&mut st.pending);
                self.compute_waits(st, &ends);
            }
            Work::Graph { graph, kernels } => {
                let gap = python(self, 30.0, 60.0);
                let d = self.draw(st.rank, &[salt, 3], 12.0, 20.0);
                let call = self.api(st, step, "cudaGraphLaunch_v10000", 0, d, gap);
                for (j, (kind, dur)) in kernels.iter().enumerate() {
                    let jitter = self.draw(st.rank, &[salt, 5, j as u64], 0.0, 1.0);
                    let n = if j == 0 {
                        self.gpu_node(st, COMPUTE, call, dur + jitter, salt)
                    } else {
                        let n = self.sim.graph.node(dur + jitter);
                        self.sim.graph.after(n, st.streams[&COMPUTE], US);
                        n
                    };
                    let mut g = gpu(st.rank, COMPUTE, n, GpuWhat::Kernel(*kind));
                    g.graph = Some(((graph << 32) | (j as i64 + 1), *graph));
                    self.push_gpu(st, g, call, o);
                }
            }
            Work::Stall { ms } => {
                let dur = (ms * 1e6) as i64;
                let c = self.cpu(st, Some(step), dur, 2 * US, CpuWhat::Stall);
                let n = self.sim.cpu[c].start;
                match (o.delay, o.node_event) {
                    (Some(d), _) => {
                        self.sim.planted[d].node = n;
                        self.sim.planted[d].without = 0;
                    }
                    (None, Some(e)) => self.sim.node_stalls[e].push((st.rank, n)),
                    (None, None) => panic!("a stall is planted"),
                }
            }
            Work::StepEnd => {
                let gap = python(self, 30.0, 60.0);
                let d = self.draw(st.rank, &[salt, 3], 10.0, 20.0);
                let call = self.api(st, step, "cudaMemcpyAsync_v3020", 0, d, gap);
                let dur = self.draw(st.rank, &[salt, 4], 2.0, 4.0);
                let n = self.gpu_node(st, COMPUTE, call, dur, salt);
                let g = gpu(st.rank, COMPUTE, n, GpuWhat::Copy(2, 4));
                self.push_gpu(st, g, call, o);
                // cudaStreamSynchronize: entered after the copy's call, returns after the copy
                let enter = self.cpu_node(st, 0, 2 * US);
                let ret = self.sim.graph.node(0);
                self.sim.graph.after(ret, enter, 2 * US);
                let back = self.draw(st.rank, &[salt, 7], 8.0, 15.0);
                self.sim.graph.after(ret, n, back);
                st.cpu = ret;
                let sync = api_what("cudaStreamSynchronize_v3020", 0);
                self.interval(st.rank, Some(step), (enter, ret), sync);
            }
        }
    }

    /// An NCCL op: PyTorch makes the NCCL stream wait for the compute stream's event, then
    /// the NCCL API call (or ncclGroupStart, the calls, ncclGroupEnd) launches the kernel with
    /// cuLaunchKernelEx; the kernel waits for its peers at the instance's rendezvous. (The
    /// event records around it are left out: rows that time nothing, in files kept small.)
    fn nccl(&mut self, st: &mut Rank, o: &Op, salt: u64) {
        let n = o.nccl().expect("an NCCL op");
        let step = Some(o.step);
        let comm = match n.group {
            Group::Comm(c) => c,
            Group::Exchange(x) => self.layout.exchanges[x].comm,
        };
        let stream = self.streams.of(st.rank, n.kind);
        let gap = self.draw(st.rank, &[salt, 9], 25.0, 60.0);
        let d = self.draw(st.rank, &[salt, 10], 1.5, 3.0);
        self.cpu(st, step, d, gap, api_what("cudaStreamWaitEvent_v3020", 0));
        let (open_name, open_call) = if n.grouped() {
            let start = CpuWhat::Nccl {
                name: "ncclGroupStart",
                comm,
                call: None,
            };
            self.cpu(st, step, US, 2 * US, start);
            for (j, c) in n.calls.iter().enumerate() {
                let d = self.draw(st.rank, &[salt, 11, j as u64], 3.0, 5.0);
                let what = CpuWhat::Nccl {
                    name: c.name,
                    comm,
                    call: Some(c.clone()),
                };
                self.cpu(st, step, d, US, what);
            }
            ("ncclGroupEnd", None)
        } else {
            (n.calls[0].name, Some(n.calls[0].clone()))
        };
        // the range that encloses the launch: opened here, closed after it
        let open = self.cpu_node(st, 2 * US, US);
        let d = self.draw(st.rank, &[salt, 12], 6.0, 14.0);
        let call = self.api(st, o.step, "cuLaunchKernelEx", 1, d, US);
        let close = self.cpu_node(st, US, US);
        let range = CpuWhat::Nccl {
            name: open_name,
            comm,
            call: open_call,
        };
        self.interval(st.rank, step, (open, close), range);

        let inst = self.index[&o.key.expect("an NCCL op has its key")];
        let s = self.gpu_node(st, stream, call, 0, salt);
        if stream != COMPUTE
            && let Some(&c) = st.streams.get(&COMPUTE)
        {
            self.sim.graph.after(s, c, 2 * US);
        }
        let rv = self.rendezvous[inst];
        self.sim.graph.after(rv, s, 0);
        let k = self.sim.instances[inst].k as u64;
        let jitter = keyed::rng(self.spec.seed, &[0xE4D, comm as u64, k, st.rank as u64])
            .us(0.0, self.spec.end_jitter_us);
        let e = self.sim.graph.node(jitter);
        self.sim.graph.after(e, rv, 0);
        let mut g = gpu(st.rank, stream, s, GpuWhat::Nccl { instance: inst });
        g.end = e;
        let i = self.push_gpu(st, g, call, o);
        self.sim.instances[inst].members.push((st.rank, i));
        if stream != COMPUTE {
            if n.blocking {
                self.compute_waits(st, &[e]);
            } else {
                st.pending.push(e);
            }
        }
    }
}

fn api_what(api: &'static str, class: u32) -> CpuWhat {
    CpuWhat::Api {
        api,
        class,
        gpu: vec![],
    }
}

fn gpu(rank: usize, stream: u32, n: NodeId, what: GpuWhat) -> Gpu {
    Gpu {
        rank,
        stream,
        start: n,
        end: n,
        what,
        graph: None,
    }
}

/// An exchange's two sides agree: what one sends the other receives.
fn check_directions(members: &[(usize, &Op)]) {
    let flow = |o: &Op, name: &str| -> u64 {
        let calls = &o.nccl().unwrap().calls;
        calls
            .iter()
            .filter(|c| c.name == name)
            .map(|c| c.bytes)
            .sum()
    };
    let (a, b) = (members[0].1, members[1].1);
    assert_eq!(
        flow(a, "ncclSend"),
        flow(b, "ncclRecv"),
        "exchange {:?}",
        a.key
    );
    assert_eq!(
        flow(a, "ncclRecv"),
        flow(b, "ncclSend"),
        "exchange {:?}",
        a.key
    );
}
