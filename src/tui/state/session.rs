//! What belongs to the session, whichever capture is shown: keys, mouse,
//! messages, the work the loop runs for the UI, and how the session ends.

use super::writes::Writes;
use crate::tui::action::Action;
use crate::tui::keymap::Keymap;
use crate::tui::messages::Messages;
use crossterm::event::KeyEvent;

pub struct Session {
    pub keymap: Keymap,
    /// Mouse capture wanted (the loop turns it on or off to match).
    pub mouse: bool,
    /// Every message of the session: loading's and the keys' answers.
    pub messages: Messages,
    /// Said in the status line (demo profile, keymap in use…).
    pub banner: Option<String>,
    pub no_color: bool,
    /// Text for the terminal's clipboard (OSC 52), written by the loop.
    pub clipboard: Option<String>,
    /// A trace export asked for (`E`), run by the loop off the UI thread.
    pub export: Option<crate::tui::export::ExportJob>,
    /// Reads and writes of the bookmarks file, run by the loop.
    pub bookmark_jobs: crate::tui::bookmark_jobs::BookmarkJobs,
    /// Derived work asked for and not yet handed to the loop.
    pub derive_jobs: std::collections::VecDeque<crate::tui::derive_jobs::DeriveJob>,
    pub progress: Progress,
    /// `--goto GROUP:INSTANCE`, applied when loading ends.
    pub pending_goto: Option<String>,
    /// A key pressed before the cross-rank analyses were done, done when
    /// they are (a key pressed a moment early is not lost).
    pub pending_action: Option<Action>,
    /// Keys typed before the first frame's data arrived, applied when it
    /// does; and keys typed behind a `pending_action`, applied after it.
    pub typed_ahead: Vec<KeyEvent>,
    pub quit: bool,
    /// The loader's writes, which a quit lets finish.
    pub writes: Writes,
    /// Why the UI had to stop, printed after the terminal is restored.
    pub fatal: Option<String>,
    /// Something changed since the last frame.
    pub dirty: bool,
}

impl Session {
    pub fn new(keymap: Keymap, no_color: bool) -> Session {
        Session {
            keymap,
            mouse: true,
            messages: Messages::default(),
            banner: None,
            no_color,
            clipboard: None,
            export: None,
            bookmark_jobs: Default::default(),
            derive_jobs: Default::default(),
            progress: Progress {
                stage: "starting".into(),
                ..Default::default()
            },
            pending_goto: None,
            pending_action: None,
            typed_ahead: Vec::new(),
            quit: false,
            writes: Default::default(),
            fatal: None,
            dirty: true,
        }
    }
}

/// Loading progress.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    pub stage: String,
    pub file: usize,
    pub files: usize,
    pub rows: usize,
}
