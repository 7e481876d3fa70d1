//! What a run leaves while it works: temp directories and the nsys child
//! of an export, and the temp file of a cache entry being written. Each is
//! registered here so that an interrupted rankline (Ctrl-C, a signal, the
//! timeline quit mid-export) kills nsys and removes them.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};

/// Temp directories in use.
static DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Temp files being written.
static FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// nsys processes running, and whether [`remove_scratch`] ran: after it,
/// no export starts (the process is ending).
static CHILDREN: Mutex<(Vec<Arc<Mutex<Child>>>, bool)> = Mutex::new((Vec::new(), false));

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A temp directory, removed (with what is in it) when dropped or when
/// [`remove_scratch`] runs.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// A new private directory in local temp space (`$TMPDIR`, else /tmp).
    pub fn local() -> std::io::Result<TempDir> {
        use std::os::unix::fs::DirBuilderExt;
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let base = std::env::temp_dir();
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("rankline-export-{}-{n}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(TempDir::registered(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// A new directory at `path` (what a dead run of the same name left
    /// there is removed first).
    pub fn named(path: &Path) -> std::io::Result<TempDir> {
        let _ = std::fs::remove_dir_all(path);
        std::fs::create_dir(path)?;
        Ok(TempDir::registered(path.to_path_buf()))
    }

    fn registered(path: PathBuf) -> TempDir {
        lock(&DIRS).push(path.clone());
        TempDir { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
        lock(&DIRS).retain(|p| *p != self.path);
    }
}

/// A temp file being written, removed when dropped (once renamed into
/// place there is nothing left to remove) or when [`remove_scratch`] runs.
pub struct TempFile {
    path: PathBuf,
}

impl TempFile {
    /// Registers `path`, about to be created.
    pub fn registered(path: PathBuf) -> TempFile {
        lock(&FILES).push(path.clone());
        TempFile { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        lock(&FILES).retain(|p| *p != self.path);
    }
}

/// How much of each of a child's outputs is kept: its end, where nsys
/// says what went wrong (it can print hundreds of MB of progress first).
pub const KEPT_OUTPUT_BYTES: usize = 16 << 10;

/// What a child said (the last [`KEPT_OUTPUT_BYTES`] of each output) and
/// how it ended.
pub struct Ran {
    /// `None`: still running at the deadline, and killed.
    pub status: Option<ExitStatus>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// The last [`KEPT_OUTPUT_BYTES`] of what `pipe` gives until it closes.
fn tail_of(mut pipe: impl std::io::Read) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > 2 * KEPT_OUTPUT_BYTES {
                    kept.drain(..kept.len() - KEPT_OUTPUT_BYTES);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    if kept.len() > KEPT_OUTPUT_BYTES {
        kept.drain(..kept.len() - KEPT_OUTPUT_BYTES);
    }
    kept
}

/// Kills `child` and everything it started: it runs in its own process
/// group, since a site's wrapper around nsys (a module, a container) may
/// not `exec` it, and killing the wrapper alone leaves the export running.
fn kill_group(child: &mut Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) of the process group this child leads.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Runs `cmd` to its end (at most `limit`) in a process group of its own,
/// with its output captured, registered meanwhile so that
/// [`remove_scratch`] can kill it.
pub fn run_child(cmd: &mut Command, limit: std::time::Duration) -> std::io::Result<Ran> {
    use std::os::unix::process::CommandExt;
    let mut running = lock(&CHILDREN);
    if running.1 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            "rankline is ending",
        ));
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    let read = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || pipe.map(tail_of).unwrap_or_default())
    };
    let out = read(child.stdout.take().map(|p| Box::new(p) as _));
    let err = read(child.stderr.take().map(|p| Box::new(p) as _));
    let child = Arc::new(Mutex::new(child));
    running.0.push(child.clone());
    drop(running);
    let started = std::time::Instant::now();
    // Polled, not waited on, so that `remove_scratch` can take the lock
    // and kill it meanwhile.
    let status = loop {
        let mut c = lock(&child);
        match c.try_wait() {
            Ok(Some(status)) => break Ok(Some(status)),
            Ok(None) if started.elapsed() > limit => {
                kill_group(&mut c);
                break Ok(None);
            }
            Ok(None) => {}
            Err(e) => break Err(e),
        }
        drop(c);
        std::thread::sleep(std::time::Duration::from_millis(25));
    };
    lock(&CHILDREN).0.retain(|c| !Arc::ptr_eq(c, &child));
    let status = status?;
    // The group's last members may hold the pipes open: end them too.
    if status.is_some()
        && let Ok(pid) = i32::try_from(lock(&child).id())
    {
        // SAFETY: kill(2) of the group the finished child led.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    Ok(Ran {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

/// Kills the running nsys exports and removes every temp directory and
/// file: for an
/// exit that does not unwind (a signal, the timeline's end while it still
/// loads).
pub fn remove_scratch() {
    let mut running = lock(&CHILDREN);
    running.1 = true;
    for child in running.0.drain(..) {
        kill_group(&mut lock(&child));
    }
    drop(running);
    for dir in lock(&DIRS).drain(..) {
        let _ = std::fs::remove_dir_all(dir);
    }
    for file in lock(&FILES).drain(..) {
        let _ = std::fs::remove_file(file);
    }
}

/// From now on, an ending signal ([`crate::ending_signals`]) runs
/// [`remove_scratch`] and ends the process with 128 + its number. For the
/// command line's `report` and `index`, whose exports and cache writes run
/// in the foreground; the timeline handles signals itself.
pub fn remove_scratch_on_signals() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        // Registered before this returns: a signal from now on is caught.
        let Some(signals) = rt.block_on(async { crate::ending_signals::register(false) }) else {
            return;
        };
        std::thread::spawn(move || {
            let number = rt.block_on(crate::ending_signals::first(signals));
            remove_scratch();
            std::process::exit(128 + number);
        });
    });
}
