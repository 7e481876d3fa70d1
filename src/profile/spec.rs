//! The columns rankline reads from the large tables, in one place: the
//! loader selects exactly these, and the benchmark's `sqlite3` baseline
//! scans exactly these.

/// A column: name, required, holds text (scanned through `length()`).
pub type ColumnSpec = (&'static str, bool, bool);

/// A large table and the columns read from it.
#[derive(Debug, Clone, Copy)]
pub struct TableSpec {
    pub table: &'static str,
    pub columns: &'static [ColumnSpec],
    /// `WHERE …` clause, or empty.
    pub filter: &'static str,
}

/// The columns every GPU activity table shares, then the table's own.
macro_rules! gpu_columns {
    ($($own:expr),* $(,)?) => {
        &[
            ("start", true, false),
            ("end", true, false),
            ("deviceId", true, false),
            ("contextId", false, false),
            ("streamId", true, false),
            ("correlationId", false, false),
            ("globalPid", false, false),
            ("graphNodeId", false, false),
            $($own),*
        ]
    };
}

pub const KERNEL: TableSpec = TableSpec {
    table: "CUPTI_ACTIVITY_KIND_KERNEL",
    // The launch configuration's names are `launch_shape::EXPORT_COLUMNS`.
    columns: gpu_columns![
        ("shortName", true, false),
        ("demangledName", false, false),
        ("gridX", false, false),
        ("gridY", false, false),
        ("gridZ", false, false),
        ("blockX", false, false),
        ("blockY", false, false),
        ("blockZ", false, false),
        ("registersPerThread", false, false),
        ("staticSharedMemory", false, false),
        ("dynamicSharedMemory", false, false),
    ],
    filter: "",
};

/// [`KERNEL`] for a load that needs neither launch links nor launch
/// configurations ([`super::Need::Gpu`]): the same column positions, with
/// correlation, graph node and launch configuration not read (an empty
/// name selects `NULL`).
pub const KERNEL_TIMES_AND_NAMES: TableSpec = TableSpec {
    table: "CUPTI_ACTIVITY_KIND_KERNEL",
    columns: &[
        ("start", true, false),
        ("end", true, false),
        ("deviceId", true, false),
        ("contextId", false, false),
        ("streamId", true, false),
        ("", false, false),
        ("globalPid", false, false),
        ("", false, false),
        ("shortName", true, false),
        ("demangledName", false, false),
        ("", false, false),
        ("", false, false),
        ("", false, false),
        ("", false, false),
        ("", false, false),
        ("", false, false),
        ("", false, false),
        ("", false, false),
        ("", false, false),
    ],
    filter: "",
};

pub const MEMCPY: TableSpec = TableSpec {
    table: "CUPTI_ACTIVITY_KIND_MEMCPY",
    columns: gpu_columns![("copyKind", false, false), ("bytes", false, false)],
    filter: "",
};

pub const MEMSET: TableSpec = TableSpec {
    table: "CUPTI_ACTIVITY_KIND_MEMSET",
    columns: gpu_columns![("bytes", false, false), ("value", false, false)],
    filter: "",
};

pub const RUNTIME: TableSpec = TableSpec {
    table: "CUPTI_ACTIVITY_KIND_RUNTIME",
    columns: &[
        ("start", true, false),
        ("end", true, false),
        ("eventClass", false, false),
        ("globalTid", true, false),
        ("correlationId", false, false),
        ("nameId", true, false),
    ],
    filter: "",
};

pub const NVTX: TableSpec = TableSpec {
    table: "NVTX_EVENTS",
    columns: &[
        ("start", true, false),
        ("end", false, false),
        ("eventType", true, false),
        ("text", false, true),
        ("globalTid", false, false),
        ("textId", false, false),
        ("domainId", false, false),
        ("binaryData", false, true),
    ],
    filter: "WHERE eventType IN (34, 59, 60, 75)",
};

pub const STRINGS: TableSpec = TableSpec {
    table: "StringIds",
    columns: &[("id", true, false), ("value", true, true)],
    filter: "",
};

/// Every large table the loader reads.
pub const LOADED: [TableSpec; 6] = [STRINGS, KERNEL, MEMCPY, MEMSET, RUNTIME, NVTX];

impl TableSpec {
    /// `(name, required)` pairs for [`super::open::Schema::select`].
    pub fn wanted(&self) -> Vec<(&'static str, bool)> {
        self.columns.iter().map(|c| (c.0, c.1)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_partial_kernel_spec_keeps_every_position_and_what_it_reads() {
        let (full, part) = (KERNEL.columns, KERNEL_TIMES_AND_NAMES.columns);
        assert_eq!(full.len(), part.len());
        for (f, p) in full.iter().zip(part) {
            assert!(p.0.is_empty() || p == f, "{p:?} in place of {f:?}");
            assert!(!f.1 || p == f, "required column {f:?} dropped");
        }
    }
}
