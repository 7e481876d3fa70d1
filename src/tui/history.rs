//! The jump history: where `Backspace` goes back to and `alt-Right` forward
//! again. Pure and generic; the state decides what a place is.

/// Places left by jumps, newest last, and places gone back from.
#[derive(Debug, Clone)]
pub struct History<T> {
    back: Vec<T>,
    forward: Vec<T>,
}

/// The oldest places are forgotten beyond this many.
pub const KEPT: usize = 100;

impl<T> Default for History<T> {
    fn default() -> Self {
        History {
            back: Vec::new(),
            forward: Vec::new(),
        }
    }
}

impl<T: PartialEq> History<T> {
    /// Records the place a new jump leaves (once: a jump from where the
    /// last one left adds nothing); a new jump forgets the places gone
    /// back from, as in a browser.
    pub fn push(&mut self, left: T) {
        self.forward.clear();
        if self.back.last() == Some(&left) {
            return;
        }
        if self.back.len() == KEPT {
            self.back.remove(0);
        }
        self.back.push(left);
    }

    /// The place before `current`, which becomes the way forward.
    pub fn back(&mut self, current: T) -> Option<T> {
        let to = self.back.pop()?;
        self.forward.push(current);
        Some(to)
    }

    /// The place gone back from, with `current` the way back again.
    pub fn forward(&mut self, current: T) -> Option<T> {
        let to = self.forward.pop()?;
        self.back.push(current);
        Some(to)
    }

    pub fn can_go_back(&self) -> bool {
        !self.back.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_and_forward_retrace_the_jumps() {
        let mut h = History::default();
        // Jumps a → b → c: each records the place it left.
        h.push('a');
        h.push('b');
        assert_eq!(h.back('c'), Some('b'));
        assert_eq!(h.back('b'), Some('a'));
        assert_eq!(h.back('a'), None);
        assert_eq!(h.forward('a'), Some('b'));
        assert_eq!(h.forward('b'), Some('c'));
        assert_eq!(h.forward('c'), None);
        assert_eq!(h.back('c'), Some('b'));
    }

    #[test]
    fn a_new_jump_forgets_the_way_forward() {
        let mut h = History::default();
        h.push('a');
        assert_eq!(h.back('b'), Some('a'));
        h.push('a');
        assert_eq!(h.forward('x'), None);
        assert_eq!(h.back('d'), Some('a'));
        assert!(!h.can_go_back());
    }

    #[test]
    fn a_place_left_twice_in_a_row_is_kept_once() {
        let mut h = History::default();
        h.push('a');
        h.push('a');
        h.push('b');
        assert_eq!(h.back('c'), Some('b'));
        assert_eq!(h.back('b'), Some('a'));
        assert_eq!(h.back('a'), None);
    }

    #[test]
    fn only_the_newest_places_are_kept() {
        let mut h = History::default();
        for i in 0..KEPT + 5 {
            h.push(i);
        }
        let mut n = 0;
        let mut cur = usize::MAX;
        while let Some(p) = h.back(cur) {
            cur = p;
            n += 1;
        }
        assert_eq!(n, KEPT);
        assert_eq!(cur, 5);
    }
}
