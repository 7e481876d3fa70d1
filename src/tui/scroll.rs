//! One scroll position for every list (panels, help, finder): the first
//! row shown, kept within the rows there are, and what the last frame
//! could show.

#[cfg(test)]
mod tests;

/// A vertical scroll over `len` rows of which `visible` fit. The state
/// owns `top`; drawing records `len` and `visible` (gitui's
/// `VerticalScroll`), and every move clamps against them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scroll {
    /// The first row shown.
    pub top: usize,
    /// Rows in the list, as last drawn.
    pub len: usize,
    /// Rows the last frame could show.
    pub visible: usize,
}

impl Scroll {
    /// The highest `top` that still fills the view.
    pub fn max_top(&self) -> usize {
        self.len.saturating_sub(self.visible)
    }

    /// Records what a frame shows and clamps `top` to it (after a resize
    /// or a list that shrank). Returns the clamped scroll.
    pub fn fit(&mut self, len: usize, visible: usize) -> Scroll {
        self.len = len;
        self.visible = visible;
        self.top = self.top.min(self.max_top());
        *self
    }

    /// Moves by `rows` (negative: up), clamped.
    pub fn by(&mut self, rows: isize) {
        let top = self.top as isize + rows;
        self.top = (top.max(0) as usize).min(self.max_top());
    }

    /// One page down (`down`) or up, keeping one row of context.
    pub fn page(&mut self, down: bool) {
        let step = self.visible.saturating_sub(1).max(1) as isize;
        self.by(if down { step } else { -step });
    }

    /// Scrolls the least that shows `row`.
    pub fn show(&mut self, row: usize) {
        if row < self.top {
            self.top = row;
        } else if self.visible > 0 && row >= self.top + self.visible {
            self.top = row + 1 - self.visible;
        }
        self.top = self.top.min(self.max_top());
    }

    /// Rows hidden below the view.
    pub fn more_below(&self) -> bool {
        self.top + self.visible < self.len
    }

    /// Rows hidden above the view.
    pub fn more_above(&self) -> bool {
        self.top > 0
    }

    /// The list row drawn at view row `y`, if there is one.
    pub fn row_at(&self, y: usize) -> Option<usize> {
        (y < self.visible && self.top + y < self.len).then_some(self.top + y)
    }
}
