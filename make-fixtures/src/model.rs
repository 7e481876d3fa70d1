//! The generator's own event model: what a fixture contains, before it is written to SQLite.
//! The truth oracle reads these structs directly (never the SQLite file, never rankline code).

/// Host field of every globalPid/globalTid (bits 48+), as in real single-host captures.
pub const HOST_FIELD: i64 = 1 << 48;

pub fn global_pid(pid: u32) -> i64 {
    HOST_FIELD | ((pid as i64) << 24)
}

pub fn global_tid(pid: u32, tid: u32) -> i64 {
    global_pid(pid) | tid as i64
}

pub struct Gpu {
    pub id: u32,
    pub name: String,
    pub bus: String,
    pub uuid: String,
    /// CUDA device ordinal the capturing process saw (TARGET_INFO_GPU.cuDevice and
    /// TARGET_INFO_CUDA_DEVICE.cudaId); None: not visible to it (CUDA_VISIBLE_DEVICES).
    pub cuda_id: Option<u32>,
}

pub struct Thread {
    pub tid: u32,
    pub name: String,
}

/// A CUDA context of a process on one device.
pub struct Context {
    pub device: u32,
    pub context_id: u32,
    pub null_stream: u32,
    /// (streamId, flag from ENUM_CUPTI_STREAM_TYPE, priority)
    pub streams: Vec<(u32, u32, i64)>,
}

pub struct Process {
    pub pid: u32,
    pub name: String,
    pub threads: Vec<Thread>,
    pub context: Option<Context>,
}

#[derive(Clone)]
pub struct KName {
    pub demangled: String,
    pub short: String,
    pub mangled: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Nccl {
    pub op: &'static str,
    pub dtype: Option<&'static str>,
    pub algo: Option<&'static str>,
    pub proto: Option<&'static str>,
}

#[derive(Clone)]
pub struct Kernel {
    pub pid: u32,
    pub device: u32,
    pub context_id: u32,
    pub stream: u32,
    pub start: i64,
    pub end: i64,
    pub name: KName,
    /// Set for NCCL kernels (known at generation time, not parsed back).
    pub nccl: Option<Nccl>,
    pub corr: i64,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub registers: u32,
    pub static_smem: u32,
    pub dynamic_smem: u32,
    pub grid_id: i64,
    /// (graphNodeId, graphId) of a kernel replayed from a CUDA graph; None: launched alone.
    pub graph: Option<(i64, i64)>,
}

#[derive(Clone)]
pub struct Memcpy {
    pub pid: u32,
    pub device: u32,
    pub context_id: u32,
    pub stream: u32,
    pub start: i64,
    pub end: i64,
    pub bytes: i64,
    /// ENUM_CUDA_MEMCPY_OPER: 1 HtoD, 2 DtoH.
    pub copy_kind: u32,
    pub corr: i64,
}

#[derive(Clone)]
pub struct Memset {
    pub pid: u32,
    pub device: u32,
    pub context_id: u32,
    pub stream: u32,
    pub start: i64,
    pub end: i64,
    pub bytes: i64,
    pub corr: i64,
}

/// A CUPTI_ACTIVITY_KIND_RUNTIME row (runtime or driver call).
#[derive(Clone)]
pub struct Call {
    pub pid: u32,
    pub tid: u32,
    pub start: i64,
    pub end: i64,
    pub api: String,
    /// 0 = CUDA runtime, 1 = CUDA driver.
    pub class: u32,
    pub corr: i64,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum NvtxKind {
    /// eventType 59
    PushPop,
    /// eventType 60
    StartEnd,
    /// eventType 34
    Mark,
    /// eventType 75
    DomainCreate,
}

impl NvtxKind {
    pub fn event_type(self) -> i64 {
        match self {
            NvtxKind::PushPop => 59,
            NvtxKind::StartEnd => 60,
            NvtxKind::Mark => 34,
            NvtxKind::DomainCreate => 75,
        }
    }
}

#[derive(Clone)]
pub struct Nvtx {
    pub pid: u32,
    pub tid: u32,
    pub kind: NvtxKind,
    pub start: i64,
    pub end: Option<i64>,
    pub text: String,
    /// true: the text is a registered string (written as `textId` into StringIds), else inline `text`.
    pub registered: bool,
    pub domain: i64,
    pub range_id: Option<i64>,
}

#[derive(Default)]
pub struct Profile {
    /// Path as given on the rankline command line, e.g. `fixtures/megatron_tp8.sqlite`.
    pub path: String,
    pub host: String,
    pub gpus: Vec<Gpu>,
    pub processes: Vec<Process>,
    pub kernels: Vec<Kernel>,
    pub memcpys: Vec<Memcpy>,
    pub memsets: Vec<Memset>,
    pub calls: Vec<Call>,
    pub nvtx: Vec<Nvtx>,
}

pub const H100_NAME: &str = "NVIDIA H100 80GB HBM3";

pub fn h100(id: u32, bus: &str, uuid: String) -> Gpu {
    Gpu {
        id,
        name: H100_NAME.to_string(),
        bus: bus.to_string(),
        uuid,
        cuda_id: Some(id),
    }
}

/// PCI bus locations of the 8 GPUs of a DGX H100 board.
pub const DGX_BUS: [&str; 8] = [
    "0000:18:00.0",
    "0000:2a:00.0",
    "0000:3a:00.0",
    "0000:5d:00.0",
    "0000:9a:00.0",
    "0000:ab:00.0",
    "0000:ba:00.0",
    "0000:db:00.0",
];

pub fn uuid(rng: &mut crate::rng::Rng) -> String {
    let h = rng.hex(32);
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}
