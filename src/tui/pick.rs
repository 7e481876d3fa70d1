//! A list's cursor: the row under it and the rows the last frame showed.

use super::scroll::Scroll;

/// A list with a cursor (the finder's hits, the largest skews): the row
/// under the cursor and the rows the last frame showed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pick {
    pub selected: usize,
    pub scroll: Scroll,
}

impl Pick {
    /// Moves the cursor by `by` over `len` rows and scrolls to show it.
    pub fn step(&mut self, by: isize, len: usize) {
        let last = len.saturating_sub(1) as isize;
        self.selected = (self.selected as isize + by).clamp(0, last.max(0)) as usize;
        self.scroll.show(self.selected);
    }
}
