//! What a GPU activity row is (kernel, memcpy or memset): its own file so that the
//! model and the table of GPU row details both use it without using each other.

use super::column::Pod;

/// What a GPU activity row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
#[repr(u8)]
pub enum GpuKind {
    #[default]
    Kernel = 0,
    Memcpy = 1,
    Memset = 2,
}

// SAFETY: repr(u8) enums; `valid` admits only their discriminants.
unsafe impl Pod for GpuKind {
    fn valid(bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| b <= 2)
    }
}
