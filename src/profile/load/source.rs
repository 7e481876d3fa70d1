//! Where an export comes from and what of it is read: its own file so that the parts of
//! the load (the ranged reads) use them without using the load module.

use crate::profile::open::{LoadError, open_embedded, open_readonly};
use rusqlite::Connection;
use std::path::Path;

/// What of an export is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Everything rankline shows.
    All,
    /// All but the runtime calls and NVTX ranges (the largest tables after
    /// GPU activity): what `report nccl` and `report overlap` read.
    Gpu,
    /// The GPU activity, and the runtime calls and NVTX ranges counted per
    /// thread instead of loaded (see `load/counts.rs`): what `report
    /// summary` reads.
    Counts,
}

/// Where an export comes from.
#[derive(Debug, Clone)]
pub enum Source {
    File(std::path::PathBuf),
    /// A database compiled into the binary (the demo profile).
    Embedded {
        name: &'static str,
        bytes: &'static [u8],
    },
}

impl Source {
    pub fn path(&self) -> &Path {
        match self {
            Source::File(p) => p,
            Source::Embedded { name, .. } => Path::new(name),
        }
    }
}

/// A new read-only connection to the source.
pub(super) fn open_source(source: &Source) -> Result<Connection, LoadError> {
    match source {
        Source::File(p) => open_readonly(p),
        Source::Embedded { bytes, .. } => open_embedded(source.path(), bytes),
    }
}
