//! What a GPU row says beyond its time, lane and name, stored once per
//! distinct value: kind, demangled name, bytes, CUDA graph node and launch
//! configuration. A row holds a `u32` id into this table: the millions of
//! kernels of a capture repeat a few hundred such details, and keeping them
//! per row cost more memory than all the rest of the row.

use super::column::Col;
use super::gpu_kind::GpuKind;
use super::intern::Sym;
use super::launch_shape::{LaunchShape, Shape};
use rustc_hash::FxHashMap;

/// One distinct detail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Detail {
    pub kind: GpuKind,
    /// Kernel demangled name (the name for copies and sets).
    pub long_name: Sym,
    /// Bytes copied or set (0 for kernels).
    pub bytes: u64,
    /// CUDA graph node id, or `model::NO_GRAPH`.
    pub graph_node: u64,
    /// Kernels' launch configuration (zeros for copies and sets).
    pub shape: Shape,
    /// The copies one memcpy record holds (`copyCount`: batched by
    /// `cudaMemcpyBatchAsync`); 1 for every other row.
    pub copies: u32,
}

/// The distinct details, as columns (one row per detail, not per event).
#[derive(Debug, Default, Clone)]
pub struct GpuDetails {
    pub kind: Col<GpuKind>,
    pub long_name: Col<Sym>,
    pub bytes: Col<u64>,
    pub graph_node: Col<u64>,
    pub shape: LaunchShape,
    pub copies: Col<u32>,
}

impl GpuDetails {
    pub fn len(&self) -> usize {
        self.long_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.long_name.is_empty()
    }

    pub fn get(&self, id: u32) -> Detail {
        let i = id as usize;
        Detail {
            kind: self.kind[i],
            long_name: self.long_name[i],
            bytes: self.bytes[i],
            graph_node: self.graph_node[i],
            shape: self.shape.row(i),
            copies: self.copies[i],
        }
    }

    fn push(&mut self, d: Detail) {
        self.kind.push(d.kind);
        self.long_name.push(d.long_name);
        self.bytes.push(d.bytes);
        self.graph_node.push(d.graph_node);
        self.copies.push(d.copies);
        let s = d.shape;
        let values = [
            s.grid[0],
            s.grid[1],
            s.grid[2],
            s.block[0],
            s.block[1],
            s.block[2],
            s.registers,
            s.static_smem,
            s.dynamic_smem,
        ];
        for (c, v) in self.shape.columns_mut().into_iter().zip(values) {
            c.push(v);
        }
    }

    /// Appends `other`'s details (leaving it empty); their ids shift by
    /// the length this table had.
    pub fn append(&mut self, other: &mut GpuDetails) {
        self.kind.append(&mut other.kind);
        self.long_name.append(&mut other.long_name);
        self.bytes.append(&mut other.bytes);
        self.graph_node.append(&mut other.graph_node);
        self.copies.append(&mut other.copies);
        self.shape.append(&mut other.shape);
    }

    /// Whether every column has one length.
    pub fn consistent(&self) -> bool {
        let n = self.len();
        self.kind.len() == n
            && self.bytes.len() == n
            && self.graph_node.len() == n
            && self.copies.len() == n
            && self.shape.columns().iter().all(|c| c.len() == n)
    }
}

/// Gives each distinct detail one id while a table is built.
#[derive(Debug, Default)]
pub struct DetailIds {
    ids: FxHashMap<Detail, u32>,
}

impl DetailIds {
    /// The id of `d` in `table`, added when new.
    pub fn id(&mut self, table: &mut GpuDetails, d: Detail) -> u32 {
        *self.ids.entry(d).or_insert_with(|| {
            table.push(d);
            (table.len() - 1) as u32
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_detail_is_stored_once_and_read_back_whole() {
        let shape = Shape {
            grid: [4, 2, 1],
            block: [128, 1, 1],
            registers: 32,
            static_smem: 1024,
            dynamic_smem: 7,
        };
        let a = Detail {
            kind: GpuKind::Kernel,
            long_name: 3,
            bytes: 0,
            graph_node: 9,
            shape,
            copies: 1,
        };
        let b = Detail {
            kind: GpuKind::Memcpy,
            bytes: 64,
            copies: 3,
            ..a
        };
        let (mut table, mut ids) = (GpuDetails::default(), DetailIds::default());
        let got: Vec<u32> = [a, b, a, a, b]
            .into_iter()
            .map(|d| ids.id(&mut table, d))
            .collect();
        assert_eq!(got, [0, 1, 0, 0, 1]);
        assert_eq!(table.len(), 2);
        assert!(table.consistent());
        assert_eq!(table.get(0), a);
        assert_eq!(table.get(1), b);
    }
}
