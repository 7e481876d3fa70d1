//! The columns rankline reads from the large tables, each declared once:
//! the loader selects them by these declarations and reads each row's
//! values by the declared column, never by a position, and the benchmark's
//! `sqlite3` baseline scans exactly these.

mod declare;

pub(crate) use declare::columns;
pub use declare::{Column, ColumnSet, Columns, MAX_COLUMNS, flag};

/// A large table: its name, the declared columns it has, and which of its
/// rows are read.
#[derive(Debug)]
pub struct TableSpec<C> {
    pub table: &'static str,
    pub columns: ColumnSet<C>,
    /// `WHERE …` clause, or empty.
    pub filter: &'static str,
}

impl<C: Columns> TableSpec<C> {
    /// The table as a list of its columns' declarations.
    pub const fn loaded(&self) -> LoadedTable {
        LoadedTable {
            table: self.table,
            filter: self.filter,
            declared: C::DECLARED,
            columns: self.columns.bits(),
        }
    }
}

/// A [`TableSpec`] without the type of its column names: what the
/// `sqlite3` baseline scans.
#[derive(Debug, Clone, Copy)]
pub struct LoadedTable {
    pub table: &'static str,
    pub filter: &'static str,
    declared: &'static [Column],
    columns: u32,
}

impl LoadedTable {
    /// The table's columns, in declared order.
    pub fn columns(&self) -> impl Iterator<Item = &'static Column> {
        let bits = self.columns;
        self.declared
            .iter()
            .enumerate()
            .filter(move |&(i, _)| bits & (1 << i) != 0)
            .map(|(_, c)| c)
    }
}

columns! {
    /// The columns of the GPU activity tables: those every one of them has
    /// ([`GPU_SHARED`]), then the kernels', the copies' and the sets' own.
    pub enum GpuColumn {
        Start = "start" (required),
        End = "end" (required),
        DeviceId = "deviceId" (required),
        ContextId = "contextId",
        StreamId = "streamId" (required),
        CorrelationId = "correlationId",
        GlobalPid = "globalPid",
        GraphNodeId = "graphNodeId",
        ShortName = "shortName" (required),
        DemangledName = "demangledName",
        GridX = "gridX",
        GridY = "gridY",
        GridZ = "gridZ",
        BlockX = "blockX",
        BlockY = "blockY",
        BlockZ = "blockZ",
        RegistersPerThread = "registersPerThread",
        StaticSharedMemory = "staticSharedMemory",
        DynamicSharedMemory = "dynamicSharedMemory",
        CopyKind = "copyKind",
        Bytes = "bytes",
        /// Schema 3.28.1+: copies one record holds (`cudaMemcpyBatchAsync`).
        CopyCount = "copyCount",
    }
}

/// The columns every GPU activity table has.
pub const GPU_SHARED: ColumnSet<GpuColumn> = {
    use GpuColumn::*;
    GpuColumn::set(&[
        Start,
        End,
        DeviceId,
        ContextId,
        StreamId,
        CorrelationId,
        GlobalPid,
        GraphNodeId,
    ])
};

/// A kernel's launch configuration (read into a `launch_shape::Shape`).
pub const LAUNCH_SHAPE: ColumnSet<GpuColumn> = {
    use GpuColumn::*;
    GpuColumn::set(&[
        GridX,
        GridY,
        GridZ,
        BlockX,
        BlockY,
        BlockZ,
        RegistersPerThread,
        StaticSharedMemory,
        DynamicSharedMemory,
    ])
};

pub const KERNEL: TableSpec<GpuColumn> = TableSpec {
    table: "CUPTI_ACTIVITY_KIND_KERNEL",
    columns: GPU_SHARED
        .union(GpuColumn::set(&[
            GpuColumn::ShortName,
            GpuColumn::DemangledName,
        ]))
        .union(LAUNCH_SHAPE),
    filter: "",
};

/// The [`KERNEL`] columns a load that needs neither launch links nor
/// launch configurations reads ([`super::Need::Gpu`]).
pub const KERNEL_TIMES_AND_NAMES: ColumnSet<GpuColumn> = KERNEL
    .columns
    .without(GpuColumn::set(&[
        GpuColumn::CorrelationId,
        GpuColumn::GraphNodeId,
    ]))
    .without(LAUNCH_SHAPE);

pub const MEMCPY: TableSpec<GpuColumn> = TableSpec {
    table: "CUPTI_ACTIVITY_KIND_MEMCPY",
    columns: GPU_SHARED.union(GpuColumn::set(&[
        GpuColumn::CopyKind,
        GpuColumn::Bytes,
        GpuColumn::CopyCount,
    ])),
    filter: "",
};

pub const MEMSET: TableSpec<GpuColumn> = TableSpec {
    table: "CUPTI_ACTIVITY_KIND_MEMSET",
    // Not `value`, the byte a memset writes: nothing shows it.
    columns: GPU_SHARED.union(GpuColumn::set(&[GpuColumn::Bytes])),
    filter: "",
};

columns! {
    /// The columns of the runtime and driver API table.
    pub enum RuntimeColumn {
        Start = "start" (required),
        End = "end" (required),
        EventClass = "eventClass",
        GlobalTid = "globalTid" (required),
        CorrelationId = "correlationId",
        NameId = "nameId" (required),
    }
}

pub const RUNTIME: TableSpec<RuntimeColumn> = TableSpec {
    table: "CUPTI_ACTIVITY_KIND_RUNTIME",
    columns: RuntimeColumn::ALL,
    filter: "",
};

columns! {
    /// The columns of the NVTX events table.
    pub enum NvtxColumn {
        Start = "start" (required),
        End = "end",
        EventType = "eventType" (required),
        Text = "text" (text),
        GlobalTid = "globalTid",
        TextId = "textId",
        DomainId = "domainId",
        BinaryData = "binaryData" (text),
        /// Schema 3.28.1+: what a dynamic payload table's row names.
        EventId = "eventId",
    }
}

/// Schema 3.28.1+ (`--dynamic-tables`): links NVTX events to the tables
/// that hold their payloads (`load/payload_tables.rs`).
pub const PAYLOAD_LINK: &str = "NVTX_EVENTS_PAYLOAD_SCHEMAS";

pub const NVTX: TableSpec<NvtxColumn> = TableSpec {
    table: "NVTX_EVENTS",
    columns: NvtxColumn::ALL,
    filter: "WHERE eventType IN (34, 59, 60, 75)",
};

columns! {
    /// The columns of the string table.
    pub enum StringColumn {
        Id = "id" (required),
        Value = "value" (required, text),
    }
}

pub const STRINGS: TableSpec<StringColumn> = TableSpec {
    table: "StringIds",
    columns: StringColumn::ALL,
    filter: "",
};

columns! {
    /// The columns of the OS runtime API table (`--trace osrt`).
    pub enum OsrtColumn {
        Start = "start" (required),
        End = "end" (required),
        GlobalTid = "globalTid" (required),
        NameId = "nameId" (required),
        /// 27 for a traced call; others are markers nsys's `osrt_sum`
        /// leaves out (`[Unknown]`, no duration). Absent: all are calls.
        EventClass = "eventClass",
    }
}

pub const OSRT: TableSpec<OsrtColumn> = TableSpec {
    table: "OSRT_API",
    columns: OsrtColumn::ALL,
    filter: "",
};

columns! {
    /// The columns of the CPU sampling events (`--sample`).
    pub enum SampleColumn {
        Id = "id" (required),
        Start = "start" (required),
        GlobalTid = "globalTid" (required),
    }
}

pub const SAMPLES: TableSpec<SampleColumn> = TableSpec {
    table: "COMPOSITE_EVENTS",
    columns: SampleColumn::ALL,
    filter: "",
};

columns! {
    /// The columns of the samples' call stacks; only the innermost frames
    /// are read.
    pub enum FrameColumn {
        Id = "id" (required),
        Symbol = "symbol" (required),
        StackDepth = "stackDepth" (required),
        /// NULL or absent reads as user mode.
        KernelMode = "kernelMode",
        /// nsys marks the frames under a system call's entry as user mode
        /// although their addresses lie in the kernel half (top bit set):
        /// those are kernel frames too.
        OriginalIp = "originalIP",
    }
}

/// The innermost frames of each sample's call stack: enough to hold
/// [`MAX_FRAMES`](crate::profile::model::MAX_FRAMES) user-mode frames
/// under the kernel frames a sample taken in a system call has (six in
/// nsys 2025.5's, of which five marked user mode).
pub const FRAMES: TableSpec<FrameColumn> = TableSpec {
    table: "SAMPLING_CALLCHAINS",
    columns: FrameColumn::ALL,
    filter: "WHERE stackDepth < 24",
};

columns! {
    /// The columns of the thread scheduling events (`--cpuctxsw`). Newer
    /// exports add `threadState` and `threadBlock`, not read.
    pub enum SchedColumn {
        Start = "start" (required),
        Cpu = "cpu" (required),
        IsSchedIn = "isSchedIn" (required),
        /// NULL in some rows: those are skipped.
        GlobalTid = "globalTid" (required),
    }
}

pub const SCHED: TableSpec<SchedColumn> = TableSpec {
    table: "SCHED_EVENTS",
    columns: SchedColumn::ALL,
    filter: "",
};

columns! {
    /// The columns of the CUDA synchronization records. Newer exports add
    /// `greenContextId`, `deprecatedSyncType` and `eventSyncId`, not read.
    pub enum SyncColumn {
        Start = "start" (required),
        End = "end" (required),
        DeviceId = "deviceId" (required),
        ContextId = "contextId" (required),
        StreamId = "streamId" (required),
        CorrelationId = "correlationId",
        GlobalPid = "globalPid",
        SyncType = "syncType" (required),
        EventId = "eventId" (required),
    }
}

pub const SYNCS: TableSpec<SyncColumn> = TableSpec {
    table: "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    columns: SyncColumn::ALL,
    filter: "",
};

columns! {
    /// The columns of the CUDA event records (`cudaEventRecord`, by
    /// stream). Newer exports add `greenContextId` and `eventSyncId`, not
    /// read.
    pub enum CudaEventColumn {
        DeviceId = "deviceId" (required),
        ContextId = "contextId" (required),
        StreamId = "streamId" (required),
        CorrelationId = "correlationId",
        GlobalPid = "globalPid",
        EventId = "eventId" (required),
        /// The device-side completion time: only in newer exports (2026.2),
        /// 0 when not collected.
        Timestamp = "timestamp",
    }
}

pub const CUDA_EVENTS: TableSpec<CudaEventColumn> = TableSpec {
    table: "CUPTI_ACTIVITY_KIND_CUDA_EVENT",
    columns: CudaEventColumn::ALL,
    filter: "",
};

/// Every large table the loader reads.
pub const LOADED: [LoadedTable; 12] = [
    STRINGS.loaded(),
    KERNEL.loaded(),
    MEMCPY.loaded(),
    MEMSET.loaded(),
    RUNTIME.loaded(),
    NVTX.loaded(),
    OSRT.loaded(),
    SAMPLES.loaded(),
    FRAMES.loaded(),
    SCHED.loaded(),
    SYNCS.loaded(),
    CUDA_EVENTS.loaded(),
];

#[cfg(test)]
mod tests;
