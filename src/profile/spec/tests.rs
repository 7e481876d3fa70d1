//! The declarations' own rules: each column named once, and the partial
//! kernel read a part of the kernel table that reads what it must.

use super::*;

fn names<C: Columns>() -> Vec<&'static str> {
    C::DECLARED.iter().map(|c| c.name).collect()
}

#[test]
fn every_declaration_names_each_column_once() {
    for names in [
        names::<GpuColumn>(),
        names::<RuntimeColumn>(),
        names::<NvtxColumn>(),
        names::<StringColumn>(),
    ] {
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "{names:?}");
    }
}

#[test]
fn a_set_keeps_declared_order_and_all_is_every_column() {
    let set = GpuColumn::set(&[GpuColumn::Bytes, GpuColumn::Start]);
    let got: Vec<(usize, &str)> = set.declared().map(|(i, c)| (i, c.name)).collect();
    assert_eq!(got, [(0, "start"), (GpuColumn::Bytes as usize, "bytes")]);
    assert!(set.contains(GpuColumn::Bytes) && !set.contains(GpuColumn::End));
    assert_eq!(StringColumn::ALL.declared().count(), 2);
    assert_eq!(
        NvtxColumn::ALL.declared().count(),
        NvtxColumn::DECLARED.len()
    );
}

#[test]
fn every_gpu_table_has_the_shared_columns_and_only_kernels_a_launch_shape() {
    for t in [&KERNEL, &MEMCPY, &MEMSET] {
        assert!(t.columns.includes(GPU_SHARED), "{}", t.table);
        assert_eq!(
            t.columns.intersects(LAUNCH_SHAPE),
            t.table == KERNEL.table,
            "{}",
            t.table
        );
    }
    assert!(KERNEL.columns.includes(LAUNCH_SHAPE));
}

#[test]
fn the_partial_kernel_read_is_part_of_the_kernel_table_with_every_required_column() {
    let part = KERNEL_TIMES_AND_NAMES;
    assert!(KERNEL.columns.includes(part));
    for (_, c) in KERNEL.columns.declared() {
        assert!(!c.required || part.declared().any(|(_, p)| p == c), "{c:?}");
    }
    assert!(!part.intersects(LAUNCH_SHAPE));
    assert!(!part.contains(GpuColumn::CorrelationId) && !part.contains(GpuColumn::GraphNodeId));
}

#[test]
fn the_loaded_tables_list_their_own_columns() {
    let memset: Vec<&str> = MEMSET.loaded().columns().map(|c| c.name).collect();
    assert_eq!(
        memset,
        [
            "start",
            "end",
            "deviceId",
            "contextId",
            "streamId",
            "correlationId",
            "globalPid",
            "graphNodeId",
            "bytes"
        ]
    );
    let text: Vec<&str> = LOADED
        .iter()
        .flat_map(|t| t.columns())
        .filter(|c| c.text)
        .map(|c| c.name)
        .collect();
    assert_eq!(text, ["value", "text", "binaryData"]);
}
