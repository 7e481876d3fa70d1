//! The two points where the integration tests reach inside a run, each
//! through an environment variable no user sets: a cache entry cut short
//! while mapped, and a cache write held half done. Both act only on files
//! this run itself is writing or has just opened in its cache directory.

use std::path::Path;

/// Makes every opened model entry be truncated to nothing right after it
/// was checked, as another process would (see [`super::mapped`]).
pub const CUT_AFTER_OPEN: &str = "RANKLINE_TEST_CUT_ENTRY_AFTER_OPEN";
/// Names a FIFO: a model entry's write, its temp file created, says
/// `writing` into it and then waits there for a signal.
pub const HOLD_WRITE: &str = "RANKLINE_TEST_HOLD_CACHE_WRITE";

/// Cuts the entry at `path` to nothing when [`CUT_AFTER_OPEN`] is set.
pub fn cut_after_open(path: &Path) {
    if std::env::var_os(CUT_AFTER_OPEN).is_some() {
        let _ = std::fs::File::options()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(0));
    }
}

/// Says `writing` into the FIFO [`HOLD_WRITE`] names and waits for a
/// signal, when it is set.
pub fn hold_write() {
    let Some(fifo) = std::env::var_os(HOLD_WRITE) else {
        return;
    };
    use std::io::Write;
    if let Ok(mut f) = std::fs::File::options().write(true).open(fifo) {
        let _ = f.write_all(b"writing\n");
    }
    loop {
        std::thread::park();
    }
}
