//! The timeline's work on the bookmarks file (`'` reads it, `M` adds to
//! it), handed to the loop to run off the UI thread: the file may be
//! anything, on any mount, and `q` and signals must still be answered.

use crate::profile::bookmarks::{self, Bookmark, Kept};
use std::path::PathBuf;

/// Work on the bookmarks file, run off the UI thread.
#[derive(Debug, Clone)]
pub enum BookmarkJob {
    /// Read them, then list them when `list`.
    Load { inputs: Vec<PathBuf>, list: bool },
    Add {
        inputs: Vec<PathBuf>,
        bookmark: Bookmark,
    },
}

/// A [`BookmarkJob`] done.
#[derive(Debug)]
pub enum BookmarksDone {
    Loaded {
        kept: Result<Kept, String>,
        list: bool,
    },
    Added {
        name: String,
        kept: Result<(PathBuf, Kept), String>,
    },
}

impl BookmarkJob {
    /// Does it: file operations, which may block.
    pub fn run(self) -> BookmarksDone {
        match self {
            BookmarkJob::Load { inputs, list } => BookmarksDone::Loaded {
                kept: bookmarks::load(&inputs),
                list,
            },
            BookmarkJob::Add { inputs, bookmark } => BookmarksDone::Added {
                name: bookmark.name.clone(),
                kept: bookmarks::add(&inputs, bookmark),
            },
        }
    }
}

/// The jobs asked for, and whether one is running: one at a time, as an
/// add reads the file, then writes it whole.
#[derive(Debug, Default)]
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
