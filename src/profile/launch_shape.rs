//! Kernel launch configuration as columns of the GPU details table (see
//! [`super::gpu_details`]): grid, block, registers per thread and shared
//! memory. Copies and sets (and exports without a column) hold 0. The
//! export's columns are declared in `spec.rs` (`spec::LAUNCH_SHAPE`).

use super::column::Col;

/// One launch-configuration value per GPU detail.
#[derive(Debug, Default, Clone)]
pub struct LaunchShape {
    pub grid_x: Col<u32>,
    pub grid_y: Col<u32>,
    pub grid_z: Col<u32>,
    pub block_x: Col<u32>,
    pub block_y: Col<u32>,
    pub block_z: Col<u32>,
    pub registers: Col<u32>,
    /// Bytes per block.
    pub static_smem: Col<u32>,
    pub dynamic_smem: Col<u32>,
}

/// The cache's names for the columns, in the order of [`LaunchShape::columns`].
pub const CACHE_NAMES: [&str; 9] = [
    "gpu.details.grid_x",
    "gpu.details.grid_y",
    "gpu.details.grid_z",
    "gpu.details.block_x",
    "gpu.details.block_y",
    "gpu.details.block_z",
    "gpu.details.registers",
    "gpu.details.static_smem",
    "gpu.details.dynamic_smem",
];

/// One row's launch configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Shape {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub registers: u32,
    pub static_smem: u32,
    pub dynamic_smem: u32,
}

impl LaunchShape {
    pub fn columns(&self) -> [&Col<u32>; 9] {
        [
            &self.grid_x,
            &self.grid_y,
            &self.grid_z,
            &self.block_x,
            &self.block_y,
            &self.block_z,
            &self.registers,
            &self.static_smem,
            &self.dynamic_smem,
        ]
    }

    pub fn columns_mut(&mut self) -> [&mut Col<u32>; 9] {
        [
            &mut self.grid_x,
            &mut self.grid_y,
            &mut self.grid_z,
            &mut self.block_x,
            &mut self.block_y,
            &mut self.block_z,
            &mut self.registers,
            &mut self.static_smem,
            &mut self.dynamic_smem,
        ]
    }

    /// Builds from columns in [`CACHE_NAMES`] order.
    pub fn from_columns(c: [Col<u32>; 9]) -> LaunchShape {
        let [
            grid_x,
            grid_y,
            grid_z,
            block_x,
            block_y,
            block_z,
            registers,
            static_smem,
            dynamic_smem,
        ] = c;
        LaunchShape {
            grid_x,
            grid_y,
            grid_z,
            block_x,
            block_y,
            block_z,
            registers,
            static_smem,
            dynamic_smem,
        }
    }

    /// Appends `other`'s rows (leaving it empty).
    pub fn append(&mut self, other: &mut LaunchShape) {
        for (d, s) in self.columns_mut().into_iter().zip(other.columns_mut()) {
            d.append(s);
        }
    }

    pub fn row(&self, r: usize) -> Shape {
        Shape {
            grid: [self.grid_x[r], self.grid_y[r], self.grid_z[r]],
            block: [self.block_x[r], self.block_y[r], self.block_z[r]],
            registers: self.registers[r],
            static_smem: self.static_smem[r],
            dynamic_smem: self.dynamic_smem[r],
        }
    }
}
