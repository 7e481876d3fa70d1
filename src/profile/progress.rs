//! How loading reports progress: the stages of reading a file, and the
//! callback that hears them (file index, stage, rows).

/// A loading stage, reported to a progress callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LoadStage {
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

impl LoadStage {
    pub fn label(self) -> &'static str {
        match self {
            LoadStage::Exporting => "exporting with nsys",
            LoadStage::Opening => "opening",
            LoadStage::Strings => "reading strings",
            LoadStage::Targets => "reading processes and GPUs",
            LoadStage::Kernels => "reading kernels",
            LoadStage::Memcpy => "reading memcpy",
            LoadStage::Memset => "reading memset",
            LoadStage::Runtime => "reading runtime calls",
            LoadStage::Nvtx => "reading NVTX",
            LoadStage::Osrt => "reading OS runtime calls",
            LoadStage::Samples => "reading CPU samples",
            LoadStage::Sched => "reading thread scheduling",
            LoadStage::Syncs => "reading CUDA synchronization",
            LoadStage::CudaEvents => "reading CUDA events",
            LoadStage::Linking => "sorting and linking",
            LoadStage::Cache => "reading cache",
            LoadStage::WritingCache => "writing cache",
        }
    }
}

/// Progress report: file index, stage, rows read so far in that stage
/// (0 when it begins, 1 at its first row, then every so many rows).
pub type ProgressFn<'a> = dyn FnMut(usize, LoadStage, usize) + 'a;
