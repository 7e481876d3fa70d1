//! The side panels as a closed set, which are open, each one's scroll, and
//! the geometry the last frame drew them with (for keys and the mouse).

use super::scroll::Scroll;
use super::selection::{EventRef, Panels};
use ratatui::layout::Rect;

/// A side panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PanelKind {
    Skew,
    Launch,
    Overlap,
    Summary,
    Details,
}

impl PanelKind {
    /// In screen order.
    pub const ALL: [PanelKind; 5] = [
        PanelKind::Skew,
        PanelKind::Launch,
        PanelKind::Overlap,
        PanelKind::Summary,
        PanelKind::Details,
    ];

    /// The panel's title.
    pub fn name(self) -> &'static str {
        match self {
            PanelKind::Skew => "skew",
            PanelKind::Launch => "launch",
            PanelKind::Overlap => "overlap",
            PanelKind::Summary => "summary",
            PanelKind::Details => "details",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl Panels {
    pub fn is_open(&self, k: PanelKind) -> bool {
        *self.slot(k)
    }

    fn slot(&self, k: PanelKind) -> &bool {
        match k {
            PanelKind::Skew => &self.skew,
            PanelKind::Launch => &self.launch,
            PanelKind::Overlap => &self.overlap,
            PanelKind::Summary => &self.summary,
            PanelKind::Details => &self.details,
        }
    }

    fn slot_mut(&mut self, k: PanelKind) -> &mut bool {
        match k {
            PanelKind::Skew => &mut self.skew,
            PanelKind::Launch => &mut self.launch,
            PanelKind::Overlap => &mut self.overlap,
            PanelKind::Summary => &mut self.summary,
            PanelKind::Details => &mut self.details,
        }
    }

    /// Open panels in screen order.
    pub fn open(&self) -> Vec<PanelKind> {
        PanelKind::ALL
            .into_iter()
            .filter(|&k| self.is_open(k))
            .collect()
    }
}

/// Where one panel was drawn and what its rows lead to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PanelArea {
    pub kind: Option<PanelKind>,
    /// Inside the border: the rows of the panel.
    pub inner: Rect,
    /// Per row of the whole (wrapped) panel: where Enter or a click goes.
    pub targets: Vec<Option<EventRef>>,
}

/// The geometry of the last frame, recorded by drawing for the mouse.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrameLayout {
    /// The timeline, ruler included.
    pub timeline: Rect,
    /// The lane rows of the timeline, labels included (ruler excluded).
    pub lanes: Rect,
    /// Columns of the lane labels at the left of `lanes`.
    pub label_width: u16,
    pub panels: Vec<PanelArea>,
    /// The straggler map's cells (labels and head excluded).
    pub map_cells: Rect,
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

/// Scroll of every panel and the one `{` `}` move: the last opened.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PanelView {
    scroll: [Scroll; 5],
    pub last_opened: Option<PanelKind>,
}

impl PanelView {
    pub fn scroll(&self, k: PanelKind) -> Scroll {
        self.scroll[k.index()]
    }

    pub fn scroll_mut(&mut self, k: PanelKind) -> &mut Scroll {
        &mut self.scroll[k.index()]
    }

    /// Opens or closes `k`. An opened panel starts at its top and becomes
    /// the one `{` `}` scroll; closing it hands that to the last open one.
    pub fn toggle(&mut self, panels: &mut Panels, k: PanelKind) {
        let slot = panels.slot_mut(k);
        *slot = !*slot;
        if *slot {
            self.scroll[k.index()].top = 0;
            self.last_opened = Some(k);
        } else if self.last_opened == Some(k) {
            self.last_opened = panels.open().last().copied();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closing_the_scrolled_panel_hands_scrolling_to_another_open_one() {
        let mut panels = Panels::default();
        let mut view = PanelView::default();
        view.toggle(&mut panels, PanelKind::Skew);
        view.toggle(&mut panels, PanelKind::Details);
        assert_eq!(view.last_opened, Some(PanelKind::Details));
        view.toggle(&mut panels, PanelKind::Details);
        assert_eq!(view.last_opened, Some(PanelKind::Skew));
        view.toggle(&mut panels, PanelKind::Skew);
        assert_eq!(view.last_opened, None);
        assert!(!panels.any());
    }
}
