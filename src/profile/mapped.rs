//! Cache entries mapped in place, and what happens when one is cut short
//! under us. Entries are mapped, not read (a reopen costs a checksum pass,
//! a 1000-GPU job fits in memory), so a file truncated by someone else (a
//! shared `--cache-dir`, a quota tool, NFS replacing it) turns the next
//! read of a lost page into SIGBUS. The handler here knows every mapped
//! range: a fault in one restores the terminal (through the hook the UI
//! sets), sets the entry aside so the next run rebuilds it, names it in one
//! line and exits 1. A fault anywhere else goes to whatever handled SIGBUS
//! before.
//!
//! The handler may only do what is safe in a signal handler: it reads a
//! lock-free list of ranges whose messages and paths were prepared when
//! they were mapped, and calls `stat`, `rename`, `write` and `_exit`.

use memmap2::Mmap;
use std::ffi::CString;
use std::ops::Deref;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

/// A read-only mapping of a whole file, watched for faults while it lives.
pub struct Mapping {
    map: Mmap,
    watched: Option<&'static Watched>,
}

impl Mapping {
    /// Maps `file` (opened from `path`) and watches the range: a fault in
    /// it sets `path` aside as `aside` (if it is still the mapped file) and
    /// ends the process with one line.
    pub fn open(file: &std::fs::File, path: &Path, aside: &Path) -> std::io::Result<Mapping> {
        // SAFETY: cache files are only ever replaced by rename, never
        // written in place; one cut short under us is caught below.
        let map = unsafe { Mmap::map(file)? };
        install_handler();
        let meta = file.metadata()?;
        let watched = watch(&map, path, aside, &meta);
        Ok(Mapping { map, watched })
    }
}

/// A mapping no handler knows of (anonymous ones, in tests).
impl From<Mmap> for Mapping {
    fn from(map: Mmap) -> Mapping {
        Mapping { map, watched: None }
    }
}

impl Deref for Mapping {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // Before the unmap: the range may be reused by another mapping.
        if let Some(w) = self.watched {
            w.alive.store(false, Ordering::Release);
        }
    }
}

/// One watched range and everything the handler needs, prepared ahead.
struct Watched {
    start: usize,
    len: usize,
    alive: AtomicBool,
    dev: u64,
    ino: u64,
    path: CString,
    aside: CString,
    /// The line when the entry was set aside, and when it could not be
    /// (gone, replaced, another user's).
    set_aside: Vec<u8>,
    left: Vec<u8>,
    next: *const Watched,
}

// SAFETY: immutable after it is published but for `alive`, an atomic.
unsafe impl Sync for Watched {}

/// The watched ranges, newest first. Nodes are never freed (the handler
/// may be reading one): a few hundred bytes per entry opened.
static WATCHED: AtomicPtr<Watched> = AtomicPtr::new(std::ptr::null_mut());

/// Called first when a watched range faults: the UI's terminal restore.
/// Stored as a plain function address so that the handler reads it
/// without a lock.
static BEFORE_EXIT: AtomicUsize = AtomicUsize::new(0);

/// Sets what a fault in a mapped entry runs before its line is written:
/// it must be async-signal-safe (writes and `tcsetattr`, no allocation).
pub fn before_fault_exit(f: extern "C" fn()) {
    BEFORE_EXIT.store(f as usize, Ordering::Release);
}

fn watch(
    map: &Mmap,
    path: &Path,
    aside: &Path,
    meta: &std::fs::Metadata,
) -> Option<&'static Watched> {
    use std::os::unix::fs::MetadataExt;
    let shown = crate::text_safe::path_text(path);
    let node = Box::leak(Box::new(Watched {
        start: map.as_ptr() as usize,
        len: map.len(),
        alive: AtomicBool::new(true),
        dev: meta.dev(),
        ino: meta.ino(),
        path: CString::new(path.as_os_str().as_bytes()).ok()?,
        aside: CString::new(aside.as_os_str().as_bytes()).ok()?,
        set_aside: format!(
            "rankline: {shown}: cache entry cut short while in use (truncated or replaced by another process); set aside, the next run rebuilds it\n"
        )
        .into_bytes(),
        left: format!(
            "rankline: {shown}: cache entry cut short while in use (truncated or replaced by another process); the next run checks it again\n"
        )
        .into_bytes(),
        next: std::ptr::null(),
    }));
    let mut head = WATCHED.load(Ordering::Acquire);
    loop {
        node.next = head;
        match WATCHED.compare_exchange(head, node, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return Some(node),
            Err(now) => head = now,
        }
    }
}

/// SIGBUS's action before ours, restored for a fault that is not ours.
static PREVIOUS: std::sync::OnceLock<libc::sigaction> = std::sync::OnceLock::new();

fn install_handler() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: sigaction(2) with zeroed, then filled, actions.
        unsafe {
            let mut previous: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous);
            let _ = PREVIOUS.set(previous);
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_fault as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
        }
    });
}

extern "C" fn on_fault(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    let mut at = WATCHED.load(Ordering::Acquire) as *const Watched;
    while !at.is_null() {
        // SAFETY: nodes are leaked, never freed.
        let w = unsafe { &*at };
        if w.alive.load(Ordering::Acquire) && addr >= w.start && addr - w.start < w.len {
            fault_exit(w);
        }
        at = w.next;
    }
    // Not a cache entry: put back what handled SIGBUS before; returning
    // repeats the access, which faults again under it.
    // SAFETY: sigaction(2) back to the action read at installation (or
    // the default, should there be none).
    unsafe {
        let default: libc::sigaction = std::mem::zeroed();
        let previous = PREVIOUS.get().unwrap_or(&default);
        libc::sigaction(libc::SIGBUS, previous, std::ptr::null_mut());
    }
}

/// Restores the terminal, sets the entry aside if it is still the file
/// that was mapped, says so and exits 1. Async-signal-safe calls only.
fn fault_exit(w: &Watched) -> ! {
    let hook = BEFORE_EXIT.load(Ordering::Acquire);
    if hook != 0 {
        // SAFETY: only `before_fault_exit` stores here, from an
        // `extern "C" fn()`.
        let f: extern "C" fn() = unsafe { std::mem::transmute(hook) };
        f();
    }
    // SAFETY: stat(2), rename(2), write(2) and _exit(2) are
    // async-signal-safe; the strings were prepared when it was mapped.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        let same =
            libc::stat(w.path.as_ptr(), &mut st) == 0 && st.st_dev == w.dev && st.st_ino == w.ino;
        let line = if same && libc::rename(w.path.as_ptr(), w.aside.as_ptr()) == 0 {
            &w.set_aside
        } else {
            &w.left
        };
        libc::write(2, line.as_ptr().cast(), line.len());
        libc::_exit(1);
    }
}
