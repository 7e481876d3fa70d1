//! The side panels as a closed set, which are open, each one's scroll and
//! row cursor, which has the keys, and the geometry the last frame drew
//! them with (for keys and the mouse).

use super::scroll::Scroll;
use super::selection::EventRef;
use ratatui::layout::Rect;
use std::ops::Range;

/// A side panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PanelKind {
    Skew,
    Launch,
    Overlap,
    Summary,
    Details,
    Diff,
    Range,
}

impl PanelKind {
    /// In screen order.
    pub const ALL: [PanelKind; 7] = [
        PanelKind::Skew,
        PanelKind::Launch,
        PanelKind::Overlap,
        PanelKind::Summary,
        PanelKind::Details,
        PanelKind::Diff,
        PanelKind::Range,
    ];

    /// The panel's title.
    pub fn name(self) -> &'static str {
        match self {
            PanelKind::Skew => "skew",
            PanelKind::Launch => "launch",
            PanelKind::Overlap => "overlap",
            PanelKind::Summary => "summary",
            PanelKind::Details => "details",
            PanelKind::Diff => "diff",
            PanelKind::Range => "range",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Where Enter (a click) on a panel row goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PanelTarget {
    /// An event, selected and brought into view.
    Event(EventRef),
    /// A collective instance: (group, 0-based instance), jumped to.
    Instance(usize, usize),
    /// The kernels of this name, found as the finder finds them.
    Kernel(String),
}

/// Where one panel was drawn and what its rows lead to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PanelArea {
    pub kind: Option<PanelKind>,
    /// Inside the border: the rows of the panel.
    pub inner: Rect,
    /// Per row of the whole (wrapped) panel: where Enter or a click goes.
    pub targets: Vec<Option<PanelTarget>>,
    /// Per line of the panel: the rows it wrapped to (the cursor moves
    /// by lines).
    pub lines: Vec<Range<usize>>,
}

impl PanelArea {
    /// The line drawn on (wrapped) row `row`.
    pub fn line_at(&self, row: usize) -> Option<usize> {
        let i = self.lines.partition_point(|r| r.end <= row);
        (i < self.lines.len()).then_some(i)
    }

    /// Where Enter on line `line` goes.
    pub fn target(&self, line: usize) -> Option<PanelTarget> {
        let row = self.lines.get(line)?.start;
        self.targets.get(row).cloned().flatten()
    }
}

/// The geometry of the last frame, recorded by drawing for the keys and
/// the mouse.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrameLayout {
    /// Timeline columns for events (labels excluded): the cell width of
    /// cursor maths.
    pub timeline_width: usize,
    /// The timeline, ruler included.
    pub timeline: Rect,
    /// The lane rows of the timeline, labels included (ruler excluded).
    pub lanes: Rect,
    /// Columns of the lane labels at the left of `lanes`.
    pub label_width: u16,
    pub panels: Vec<PanelArea>,
    /// The straggler map's cells (labels and head excluded).
    pub map_cells: Rect,
    /// The steps view's cells, and the columns of one cell.
    pub steps_cells: Rect,
    pub steps_cell_width: u16,
}

impl FrameLayout {
    /// The panel whose box holds the cell (x, y): its border counts, so
    /// the wheel over a title scrolls that panel.
    pub fn panel_at(&self, x: u16, y: u16) -> Option<&PanelArea> {
        self.panels.iter().find(|p| {
            let outer = p.inner.outer(ratatui::layout::Margin::new(1, 1));
            outer.contains(ratatui::layout::Position::new(x, y))
        })
    }
}

/// Which panels are open, each one's scroll and cursor, the one `{` `}`
/// move (the last opened, or the last focused) and the one that has the
/// keys.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PanelView {
    /// Indexed by panel kind.
    open: [bool; PanelKind::ALL.len()],
    scroll: [Scroll; PanelKind::ALL.len()],
    /// The line under the cursor of each panel (shown while it has focus).
    cursor: [usize; PanelKind::ALL.len()],
    /// The first row each panel showed in the last frame: which way a
    /// scroll went, so a stop inside a wrapped line moves on in that
    /// direction.
    drawn_top: [usize; PanelKind::ALL.len()],
    pub last_opened: Option<PanelKind>,
    /// The panel whose rows the keys move over (`App::mode` is then
    /// `Panel`); None: the timeline has the keys.
    focused: Option<PanelKind>,
}

impl PanelView {
    pub fn is_open(&self, k: PanelKind) -> bool {
        self.open[k.index()]
    }

    /// Open panels in screen order.
    pub fn open(&self) -> Vec<PanelKind> {
        PanelKind::ALL
            .into_iter()
            .filter(|&k| self.is_open(k))
            .collect()
    }

    pub fn any_open(&self) -> bool {
        self.open.iter().any(|&o| o)
    }

    pub fn scroll(&self, k: PanelKind) -> Scroll {
        self.scroll[k.index()]
    }

    pub fn scroll_mut(&mut self, k: PanelKind) -> &mut Scroll {
        &mut self.scroll[k.index()]
    }

    /// The first row `k` showed in the last frame; `set_drawn_top` records it.
    pub fn drawn_top(&self, k: PanelKind) -> usize {
        self.drawn_top[k.index()]
    }

    pub fn set_drawn_top(&mut self, k: PanelKind, top: usize) {
        self.drawn_top[k.index()] = top;
    }

    /// The line under `k`'s cursor (may be past a list that shrank: the
    /// reader clamps it to the lines drawn).
    pub fn cursor(&self, k: PanelKind) -> usize {
        self.cursor[k.index()]
    }

    /// Puts `k`'s cursor on line `line` and scrolls the least that shows
    /// all of its rows in `area` (the last frame's).
    pub fn set_cursor(&mut self, k: PanelKind, area: &PanelArea, line: usize) {
        let Some(rows) = area.lines.get(line) else {
            return;
        };
        self.cursor[k.index()] = line;
        let s = &mut self.scroll[k.index()];
        s.show(rows.end.saturating_sub(1));
        s.show(rows.start);
    }

    /// The panel with the keys, if it is open.
    pub fn focused(&self) -> Option<PanelKind> {
        self.focused.filter(|&k| self.is_open(k))
    }

    /// Gives the keys to `k` (None: back to the timeline); a focused panel
    /// is also the one `{` `}` scroll after it.
    pub fn focus(&mut self, k: Option<PanelKind>) {
        self.focused = k;
        if k.is_some() {
            self.last_opened = k;
        }
    }

    /// Opens or closes `k`. An opened panel starts at its top and becomes
    /// the one `{` `}` scroll; closing it hands that to the last open one.
    pub fn toggle(&mut self, k: PanelKind) {
        let open = !self.open[k.index()];
        self.open[k.index()] = open;
        if open {
            self.scroll[k.index()].top = 0;
            self.cursor[k.index()] = 0;
            self.last_opened = Some(k);
        } else {
            if self.last_opened == Some(k) {
                self.last_opened = self.open().last().copied();
            }
            if self.focused == Some(k) {
                self.focused = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closing_the_scrolled_panel_hands_scrolling_to_another_open_one() {
        let mut view = PanelView::default();
        view.toggle(PanelKind::Skew);
        view.toggle(PanelKind::Details);
        assert_eq!(view.last_opened, Some(PanelKind::Details));
        view.toggle(PanelKind::Details);
        assert_eq!(view.last_opened, Some(PanelKind::Skew));
        view.toggle(PanelKind::Skew);
        assert_eq!(view.last_opened, None);
        assert!(!view.any_open());
    }

    #[test]
    fn lines_map_to_their_wrapped_rows() {
        let area = PanelArea {
            targets: vec![None, Some(PanelTarget::Instance(1, 2)), None, None],
            lines: vec![0..1, 1..3, 3..4],
            ..PanelArea::default()
        };
        assert_eq!(
            (0..5).map(|r| area.line_at(r)).collect::<Vec<_>>(),
            [Some(0), Some(1), Some(1), Some(2), None]
        );
        assert_eq!(area.target(1), Some(PanelTarget::Instance(1, 2)));
        assert_eq!(area.target(2), None);
    }

    #[test]
    fn the_cursor_scrolls_the_least_that_shows_its_whole_line() {
        let area = PanelArea {
            lines: vec![0..1, 1..3, 3..4, 4..7, 7..8],
            ..PanelArea::default()
        };
        let mut view = PanelView::default();
        let k = PanelKind::Diff;
        view.scroll_mut(k).fit(8, 3);
        view.set_cursor(k, &area, 3);
        assert_eq!((view.cursor(k), view.scroll(k).top), (3, 4));
        view.set_cursor(k, &area, 1);
        assert_eq!((view.cursor(k), view.scroll(k).top), (1, 1));
        // A line that is not there moves nothing.
        view.set_cursor(k, &area, 9);
        assert_eq!(view.cursor(k), 1);
    }
}
