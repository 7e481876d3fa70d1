//! Decoding of nsys "serialized GlobalId" integers.
//!
//! `globalTid` / `globalPid` pack the thread id in bits 0–23, the process id
//! in bits 24–47 and a host (VM) index in bits 48 and up.

/// The parts of a `globalTid` or `globalPid`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GlobalId {
    pub host: u32,
    pub pid: u32,
    pub tid: u32,
}

const MASK24: i64 = 0xFF_FFFF;

/// Splits a serialized global id into host, pid and tid.
pub fn decode(global: i64) -> GlobalId {
    GlobalId {
        host: ((global as u64) >> 48) as u32,
        pid: ((global >> 24) & MASK24) as u32,
        tid: (global & MASK24) as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_real_values() {
        // From the 2026 NCCL export: thread 281477392629904 of python3 pid 144.
        let id = decode(281_477_392_629_904);
        assert_eq!(id.host, 1);
        assert_eq!(id.pid, 144);
        assert_eq!(id.tid, 144);
        // A globalPid has tid 0.
        let p = decode(281_487_442_182_144);
        assert_eq!((p.host, p.pid, p.tid), (1, 743, 0));
    }

    #[test]
    fn fields_do_not_bleed() {
        let g = (3i64 << 48) | (0xFF_FFFF << 24) | 0xFF_FFFF;
        assert_eq!(
            decode(g),
            GlobalId {
                host: 3,
                pid: 0xFF_FFFF,
                tid: 0xFF_FFFF
            }
        );
        assert_eq!(
            decode(0),
            GlobalId {
                host: 0,
                pid: 0,
                tid: 0
            }
        );
    }
}
