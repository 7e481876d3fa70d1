//! FIFOs and device nodes for the tests of what rankline writes and reads.

use std::path::Path;

pub fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

/// Makes a device node; false when not allowed (not root).
pub fn mknod(path: &Path, kind: libc::mode_t, major: u32, minor: u32) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    unsafe { libc::mknod(c.as_ptr(), kind | 0o666, libc::makedev(major, minor)) == 0 }
}

/// Runs `run` while reading the FIFO at `path` to its end: (its result,
/// the bytes read). A writer is held open here meanwhile, so the reader
/// never sees an end before `run` is over, and never blocks after it.
pub fn reading_fifo<T>(path: &Path, run: impl FnOnce() -> T) -> (T, Vec<u8>) {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    let mut reader = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .unwrap();
    let held = std::fs::File::options().write(true).open(path).unwrap();
    // SAFETY: fcntl(2) on a descriptor this function owns.
    unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_SETFL, 0) };
    let read = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).unwrap();
        bytes
    });
    let out = run();
    drop(held);
    (out, read.join().unwrap())
}
