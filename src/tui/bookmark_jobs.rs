//! The timeline's work on the bookmarks file (`'` reads it, `M` adds to
//! it), handed to the loop to run off the UI thread: the file may be
//! anything, on any mount, and `q` and signals must still be answered.

use crate::profile::bookmarks::{self, Bookmark, Kept};
use crate::tui::data::Loaded;
use std::path::PathBuf;
use std::sync::Arc;

/// Which of a `--baseline` pair a job is for: `B` may swap them while it
/// runs, and its result belongs to the capture it was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Main,
    Baseline,
}

/// Work on the bookmarks file of the capture `data` was loaded from, run
/// off the UI thread (naming the file stats the inputs too).
#[derive(Clone)]
pub enum BookmarkJob {
    /// Read them, then list them when `list`.
    Load {
        data: Arc<Loaded>,
        side: Side,
        list: bool,
    },
    Add {
        data: Arc<Loaded>,
        side: Side,
        bookmark: Bookmark,
    },
}

/// A [`BookmarkJob`] done.
#[derive(Debug)]
pub enum BookmarksDone {
    Loaded {
        side: Side,
        kept: Result<Kept, String>,
        list: bool,
    },
    Added {
        side: Side,
        name: String,
        kept: Result<(PathBuf, Kept), String>,
    },
}

impl BookmarkJob {
    /// Does it: file operations, which may block.
    pub fn run(self) -> BookmarksDone {
        match self {
            BookmarkJob::Load { data, side, list } => BookmarksDone::Loaded {
                side,
                kept: inputs(&data).and_then(|i| bookmarks::load(&i)),
                list,
            },
            BookmarkJob::Add {
                data,
                side,
                bookmark,
            } => BookmarksDone::Added {
                side,
                name: bookmark.name.clone(),
                kept: inputs(&data).and_then(|i| bookmarks::add(&i, bookmark)),
            },
        }
    }
}

/// The capture's files, which its bookmarks are kept for.
fn inputs(data: &Loaded) -> Result<Vec<PathBuf>, String> {
    let inputs = bookmarks::inputs(&data.profile);
    if inputs.is_empty() {
        return Err("bookmarks are kept for files: the demo has none".into());
    }
    Ok(inputs)
}

/// The jobs asked for, and whether one is running: one at a time, as an
/// add reads the file, then writes it whole.
#[derive(Default)]
pub struct BookmarkJobs {
    queued: std::collections::VecDeque<BookmarkJob>,
    running: bool,
}

impl BookmarkJobs {
    pub fn push(&mut self, job: BookmarkJob) {
        self.queued.push_back(job);
    }

    /// The next job to run, when none is running.
    pub fn start_next(&mut self) -> Option<BookmarkJob> {
        if self.running {
            return None;
        }
        let job = self.queued.pop_front()?;
        self.running = true;
        Some(job)
    }

    /// The running job ended.
    pub fn done(&mut self) {
        self.running = false;
    }
}
