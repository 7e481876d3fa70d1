//! The details panel's launch-configuration lines for a GPU row: grid,
//! block, registers, shared memory and the correlation id.

use crate::profile::{GpuKind, Profile};
use ratatui::text::Line;

/// Lines for GPU row `r`: for a kernel its launch configuration, for any
/// GPU row its correlation id (what links it to its launch call).
pub fn lines(p: &Profile, r: usize) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    if p.gpu.kind(r) == GpuKind::Kernel {
        let s = p.gpu.shape(r);
        let dims = |d: [u32; 3]| format!("{}×{}×{}", d[0], d[1], d[2]);
        out.push(Line::from(format!(
            "grid {}  block {}",
            dims(s.grid),
            dims(s.block)
        )));
        out.push(Line::from(format!("registers/thread {}", s.registers)));
        out.push(Line::from(format!(
            "shared memory: static {}  dynamic {}",
            bytes(s.static_smem),
            bytes(s.dynamic_smem)
        )));
    }
    out.push(Line::from(format!(
        "correlation id {}",
        p.gpu.correlation(r)
    )));
    out
}

/// `0 B`, `48 KiB`, `21568 B`: exact, in KiB only when whole.
fn bytes(n: u32) -> String {
    if n >= 1024 && n.is_multiple_of(1024) {
        format!("{} KiB", n / 1024)
    } else {
        format!("{n} B")
    }
}

#[cfg(test)]
mod tests {
    use super::bytes;

    #[test]
    fn shared_memory_reads_in_kib() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(197_632), "193 KiB");
        assert_eq!(bytes(21_568), "21568 B");
    }
}
