//! The shape of a scenario file (`make-fixtures/scenarios/*.toml`): the job's layout, its
//! stream policy, its schedule and its planted delays. A file may `include` another (its keys
//! override the included file's, key by key) and name `variants`: suffixes of its file stem,
//! each with keys of its own (`"" = {}` and `"_payloads" = { payloads = true }` write
//! `<stem>.sqlite` and `<stem>_payloads.sqlite` from one file).

use std::path::Path;

use serde::Deserialize;
use toml::{Table, Value};

/// Which CUDA stream each process group's NCCL kernels run on.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Each kind of group its own NCCL stream, created in the same order on every rank: the
    /// same stream id everywhere.
    Dedicated,
    /// TP and DP on one NCCL stream (same id on every rank), the others dedicated.
    Shared,
    /// Each rank creates a group's stream when it first uses it: the ids depend on the order
    /// in which the rank meets its groups (stage 0 meets TP before PP, the last stage PP first).
    Lazy,
    /// PyTorch ≥ 2.8: synchronous collectives (TP, embedding, grad norm) on the current
    /// (compute) stream; asynchronous ones (DP buckets, PP, EP) on their groups' streams.
    SyncOnCompute,
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Dedicated => "dedicated",
            Policy::Shared => "shared",
            Policy::Lazy => "lazy",
            Policy::SyncOnCompute => "sync_on_compute",
        }
    }
}

/// What a CUDA graph captures.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug, Default)]
#[serde(rename_all = "snake_case")]
pub enum Graphs {
    #[default]
    None,
    /// Each microbatch's forward compute: one graph, captured before the capture window and
    /// replayed with `cudaGraphLaunch` once per microbatch.
    Forward,
}

/// How a job's ranks are written: one host in one file, or many hosts, each on its own clock.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug, Default)]
#[serde(rename_all = "snake_case")]
pub enum Files {
    /// One host holding every rank, one file `fixtures/jobs/<name>.sqlite`, its timestamps the
    /// engine's time (session-relative, no clock tables).
    #[default]
    Job,
    /// One file per node, `<name>/node<k>.sqlite`: boot-clock timestamps (nsys 2026.2).
    Node,
    /// One file per rank, `<name>/rank<k>.sqlite`: session-relative timestamps, each file its
    /// own capture start, the files of a host sharing its clock's rate.
    Rank,
}

impl Files {
    pub fn name(self) -> &'static str {
        match self {
            Files::Job => "job",
            Files::Node => "node",
            Files::Rank => "rank",
        }
    }
}

/// Megatron-core's rank order: "tp-cp-ep-dp-pp" (the default), or "tp-cp-ep-pp-dp" (NeMo's
/// `use_tp_pp_dp_mapping`), in which a pipeline's stages are neighbouring ranks.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Order {
    #[default]
    #[serde(rename = "tp-dp-pp")]
    TpDpPp,
    #[serde(rename = "tp-pp-dp")]
    TpPpDp,
}

impl Order {
    pub fn name(self) -> &'static str {
        match self {
            Order::TpDpPp => "tp-cp-ep-dp-pp",
            Order::TpPpDp => "tp-cp-ep-pp-dp",
        }
    }
}

/// Every rank of node `node` sits off-CPU for `ms` right before its `nth` op of group kind
/// `group` (and `op`) in `step`: a host-wide pause (all its ranks late at once).
#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct NodeStall {
    pub node: usize,
    pub ms: f64,
    pub step: usize,
    pub group: String,
    pub op: Option<String>,
    #[serde(default = "one")]
    pub nth: usize,
}

impl NodeStall {
    /// The op rank `rank` (of the node) stalls before.
    pub fn target(&self, rank: usize) -> Target {
        Target {
            rank,
            step: self.step,
            group: self.group.clone(),
            op: self.op.clone(),
            nth: self.nth,
        }
    }
}

/// A clock fault planted in the written files (the job itself runs as without it).
#[derive(Deserialize, Clone, Debug)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Fault {
    /// Rank `rank`'s file has its timestamps (from its capture start) times `factor`: its
    /// clock ran wrong, though its host's other files are right.
    Scaled { rank: usize, factor: f64 },
    /// Node `node` booted 43 s before its capture started: a boot reading under a minute.
    Boot43 { node: usize },
}

impl Fault {
    pub fn name(&self) -> &'static str {
        match self {
            Fault::Scaled { .. } => "scaled",
            Fault::Boot43 { .. } => "boot43",
        }
    }
}

/// A planted cause of lateness on one rank.
#[derive(Deserialize, Clone, Debug)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Delay {
    /// The launching thread sits off-CPU (an OS runtime `pthread_cond_wait`) for `ms` right
    /// before the call that launches the target op: it and what follows launch late.
    CpuStall { at: Target, ms: f64 },
    /// The GEMM that runs right before the target op on the compute stream takes `ms` longer
    /// (or `factor` times as long): the op is launched in time but starts late on the GPU.
    SlowGemm {
        at: Target,
        ms: Option<f64>,
        factor: Option<f64>,
    },
}

impl Delay {
    pub fn target(&self) -> &Target {
        match self {
            Delay::CpuStall { at, .. } | Delay::SlowGemm { at, .. } => at,
        }
    }
    pub fn name(&self) -> &'static str {
        match self {
            Delay::CpuStall { .. } => "cpu_stall",
            Delay::SlowGemm { .. } => "slow_gemm",
        }
    }
}

/// The op a delay lands before: on `rank`, in `step` (1-based), the `nth` (1-based) op of
/// group kind `group` ("tp", "pp", "dp", "emb", "gradnorm", "ep", or "graph" for a
/// `cudaGraphLaunch`), of NCCL op `op` when given ("AllGather", "ReduceScatter", …).
#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct Target {
    pub rank: usize,
    pub step: usize,
    pub group: String,
    pub op: Option<String>,
    #[serde(default = "one")]
    pub nth: usize,
}

/// A GPU that runs slow for several steps (throttled, or held at a lower clock): every
/// compute kernel of rank `rank` in steps `steps` (1-based) takes `factor` times as long.
#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct Throttle {
    pub rank: usize,
    pub steps: Vec<usize>,
    pub factor: f64,
}

/// Mixture-of-experts: expert-parallel groups of `ep` ranks inside the data-parallel
/// dimension; each MLP becomes a router, an all-to-all dispatch, the experts' GEMM and an
/// all-to-all combine.
#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct Moe {
    pub ep: usize,
}

#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    pub description: String,
    pub seed: u64,
    pub host: String,
    pub pid_base: u32,
    pub tp: usize,
    pub pp: usize,
    pub dp: usize,
    pub moe: Option<Moe>,
    pub steps: usize,
    pub microbatches: usize,
    /// Transformer layers per pipeline stage.
    pub layers: usize,
    /// Gradient buckets of the data-parallel reduction, launched during the last
    /// microbatch's backward.
    pub dp_buckets: usize,
    /// Megatron's distributed optimizer: buckets are reduce-scattered, and the updated
    /// parameters all-gathered after the optimizer step (else each bucket is all-reduced).
    #[serde(default)]
    pub distributed_optimizer: bool,
    pub streams: Policy,
    #[serde(default)]
    pub cuda_graphs: Graphs,
    /// NCCL's NVTX ranges with their payloads (communicator id, size, peer).
    #[serde(default)]
    pub payloads: bool,
    /// Those payloads in the tables `nsys export --dynamic-tables=all` writes, not in
    /// `binaryData` (payload_tables.rs).
    #[serde(default)]
    pub payload_tables: bool,
    /// Upper bound of each member's end after a collective's common end (µs).
    pub end_jitter_us: f64,
    /// Natural drift: each kernel of each rank up to this much longer (µs, 0: lockstep).
    #[serde(default)]
    pub drift_us: f64,
    #[serde(default, rename = "delay")]
    pub delays: Vec<Delay>,
    /// GPUs per node (device = the rank's index on its node); none: one host holds the job.
    pub gpus_per_node: Option<usize>,
    #[serde(default)]
    pub files: Files,
    #[serde(default)]
    pub order: Order,
    /// Idle time between steps (ms): a capture long enough for clocks to drift apart.
    #[serde(default)]
    pub step_gap_ms: f64,
    /// Each step ends with the step's token count summed over the world (throughput
    /// logging): a 4-byte AllReduce of the default process group, every rank a member.
    #[serde(default)]
    pub world_allreduce: bool,
    #[serde(default, rename = "node_stall")]
    pub node_stalls: Vec<NodeStall>,
    #[serde(default)]
    pub throttle: Option<Throttle>,
    #[serde(default, rename = "fault")]
    pub faults: Vec<Fault>,
    /// The job (a scenario name) this one is a clock-fault variant of — the same run: only
    /// the files a fault touches are written, the others are the base job's.
    pub base: Option<String>,
}

impl Spec {
    pub fn world(&self) -> usize {
        self.tp * self.pp * self.dp
    }

    /// GPUs per host: the whole job on one host unless the spec says.
    pub fn gpus_per_node(&self) -> usize {
        self.gpus_per_node.unwrap_or(self.world())
    }

    pub fn nodes(&self) -> usize {
        self.world().div_ceil(self.gpus_per_node())
    }

    /// The node rank `r` runs on.
    pub fn node_of(&self, r: usize) -> usize {
        r / self.gpus_per_node()
    }
}

fn one() -> usize {
    1
}

/// One job a scenario file writes: its name and its spec.
pub struct Job {
    pub name: String,
    pub spec: Spec,
}

/// The jobs of scenario file `path`, in the order of their names.
pub fn load(path: &Path) -> Vec<Job> {
    let stem = path.file_stem().unwrap().to_string_lossy().to_string();
    let mut table = read(path);
    let variants = match table.remove("variants") {
        Some(Value::Table(v)) => v,
        Some(_) => panic!("{}: variants must be a table", path.display()),
        None => Table::from_iter([(String::new(), Value::Table(Table::new()))]),
    };
    let mut jobs: Vec<Job> = variants
        .into_iter()
        .map(|(suffix, keys)| {
            let Value::Table(keys) = keys else {
                panic!("{}: variant {suffix:?} must be a table", path.display())
            };
            let mut t = table.clone();
            t.extend(keys);
            let spec: Spec = Value::Table(t)
                .try_into()
                .unwrap_or_else(|e| panic!("{}{suffix}: {e}", path.display()));
            Job {
                name: format!("{stem}{suffix}"),
                spec,
            }
        })
        .collect();
    jobs.sort_by(|a, b| a.name.cmp(&b.name));
    jobs
}

/// A file's keys over those of the file it includes (a path beside it).
fn read(path: &Path) -> Table {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut table: Table = text
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match table.remove("include") {
        None => table,
        Some(Value::String(base)) => {
            let mut merged = read(&path.with_file_name(base));
            merged.extend(table);
            merged
        }
        Some(_) => panic!("{}: include must be a file name", path.display()),
    }
}
