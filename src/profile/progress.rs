//! How loading reports progress: the stages of reading a file, and the
//! callback that hears them (file index, stage, rows).

/// A loading stage, reported to a progress callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// An nsys report is being exported to SQLite with nsys.
    Exporting,
    Opening,
    Strings,
    Targets,
    Kernels,
    Memcpy,
    Memset,
    Runtime,
    Nvtx,
    /// OS runtime API calls.
    Osrt,
    /// CPU samples and their leaf frames.
    Samples,
    /// Thread scheduling events.
    Sched,
    /// CUDA synchronization records.
    Syncs,
    /// CUDA event records.
    CudaEvents,
    Linking,
    Cache,
    WritingCache,
}

impl Stage {
    pub fn label(self) -> &'static str {
        match self {
            Stage::Exporting => "exporting with nsys",
            Stage::Opening => "opening",
            Stage::Strings => "reading strings",
            Stage::Targets => "reading processes and GPUs",
            Stage::Kernels => "reading kernels",
            Stage::Memcpy => "reading memcpy",
            Stage::Memset => "reading memset",
            Stage::Runtime => "reading runtime calls",
            Stage::Nvtx => "reading NVTX",
            Stage::Osrt => "reading OS runtime calls",
            Stage::Samples => "reading CPU samples",
            Stage::Sched => "reading thread scheduling",
            Stage::Syncs => "reading CUDA synchronization",
            Stage::CudaEvents => "reading CUDA events",
            Stage::Linking => "sorting and linking",
            Stage::Cache => "reading cache",
            Stage::WritingCache => "writing cache",
        }
    }
}

/// Progress report: file index, stage, rows read so far in that stage
/// (0 when it begins, 1 at its first row, then every so many rows).
pub type ProgressFn<'a> = dyn FnMut(usize, Stage, usize) + 'a;
