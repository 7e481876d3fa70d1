//! Whether a directory is on a network file system, where nsys's SQLite
//! export cannot lock its output: by the file system's `statfs` magic.

use std::path::Path;

/// `f_type` of the network and cluster file systems (linux/magic.h and
/// the vendors' own): NFS, SMB/CIFS (three), Lustre, GPFS, BeeGFS, 9p,
/// FUSE (sshfs, gcsfuse, …), Ceph, AFS (two), Coda, NCP, PanFS.
const NETWORK_MAGIC: [u32; 15] = [
    0x6969,      // NFS
    0x517B,      // SMB
    0xFF53_4D42, // CIFS
    0xFE53_4D42, // SMB2
    0x0BD0_0BD0, // Lustre
    0x4750_4653, // GPFS
    0x1983_0326, // BeeGFS
    0x0102_1997, // 9p
    0x6573_5546, // FUSE
    0x00C3_6400, // Ceph
    0x5346_414F, // AFS
    0x6B41_4653, // kAFS
    0x7375_7245, // Coda
    0x564C,      // NCP
    0xAAD7_AAEA, // PanFS
];

/// Whether `magic` is a network file system's.
fn is_network_magic(magic: u32) -> bool {
    NETWORK_MAGIC.contains(&magic)
}

/// Whether `dir` is on a network file system (`false` when that cannot
/// be told).
#[cfg(target_os = "linux")]
pub fn is_network(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c_path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    let mut buf = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: `c_path` is a NUL-terminated string and `buf` is a properly
    // sized out-parameter, read only after statfs reports success.
    let ok = unsafe { libc::statfs(c_path.as_ptr(), buf.as_mut_ptr()) } == 0;
    if !ok {
        return false;
    }
    // SAFETY: statfs succeeded, so it filled `buf`.
    let stat = unsafe { buf.assume_init() };
    // `f_type` is signed on some targets: only its low 32 bits are magic.
    is_network_magic(stat.f_type as u32)
}

#[cfg(not(target_os = "linux"))]
pub fn is_network(_dir: &Path) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_file_systems_are_told_by_their_magic() {
        for nfs_lustre_gpfs_fuse in [0x6969, 0x0BD0_0BD0, 0x4750_4653, 0x6573_5546] {
            assert!(is_network_magic(nfs_lustre_gpfs_fuse));
        }
        for ext4_xfs_tmpfs_btrfs in [0xEF53, 0x5846_5342, 0x0102_1994, 0x9123_683E] {
            assert!(!is_network_magic(ext4_xfs_tmpfs_btrfs));
        }
        assert!(!is_network(Path::new("/proc")));
    }
}
