//! Putting the terminal back from inside a signal handler: when a mapped
//! cache entry is cut short under the timeline (see
//! [`crate::profile::mapped`]), the process ends in the handler, where
//! crossterm's own restore (locks, allocation) cannot run. The terminal's
//! settings are saved here before raw mode; the restore is two writes.

use std::sync::OnceLock;

/// The terminal's file descriptor and its settings before raw mode.
static SAVED: OnceLock<(libc::c_int, libc::termios)> = OnceLock::new();

/// Mouse reporting off (as crossterm's `DisableMouseCapture`), cursor
/// shown, alternate screen left.
const RESTORE: &[u8] =
    b"\x1b[?1006l\x1b[?1015l\x1b[?1003l\x1b[?1002l\x1b[?1000l\x1b[?25h\x1b[?1049l";

/// Saves the terminal's settings and has a fault in a mapped entry
/// restore them. Call before raw mode is entered.
pub fn arm() {
    // crossterm's raw mode acts on stdin when it is a terminal.
    let fd = libc::STDIN_FILENO;
    // SAFETY: isatty(3) and tcgetattr(3) on a descriptor, into a zeroed
    // termios.
    let saved = unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        (libc::isatty(fd) == 1 && libc::tcgetattr(fd, &mut t) == 0).then_some(t)
    };
    if let Some(t) = saved {
        let _ = SAVED.set((fd, t));
    }
    crate::profile::mapped::before_fault_exit(restore);
}

/// Async-signal-safe: write(2) and tcsetattr(3) only.
extern "C" fn restore() {
    // SAFETY: writes a static buffer to stdout and sets saved settings.
    unsafe {
        libc::write(libc::STDOUT_FILENO, RESTORE.as_ptr().cast(), RESTORE.len());
        if let Some((fd, t)) = SAVED.get() {
            libc::tcsetattr(*fd, libc::TCSANOW, t);
        }
    }
}
