//! The diff panel: the `--baseline` capture against the main one — steps,
//! the largest kernel changes (Enter finds the kernel) and the excess of
//! each paired skew group (Enter selects its worst instance).

use super::PanelLines;
use crate::tui::data::Loaded;
use crate::tui::state::{App, BaselineStatus};
use crate::tui::ui::theme::Theme;
use ratatui::text::Line;

/// The diff of the two captures, or why there is none yet.
pub fn lines(app: &App, _l: &Loaded, theme: &Theme, _width: usize) -> PanelLines {
    let Some(b) = &app.baseline else {
        let mut out = PanelLines::one("No baseline to compare with. Start with");
        out.push(Line::styled(
            "  rankline AFTER... --baseline BEFORE",
            theme.heading(),
        ));
        out.push("(BEFORE: an export or a directory of them); B then switches between the two.");
        return out;
    };
    match &b.status {
        BaselineStatus::Loading(stage) => {
            PanelLines::one(format!("loading the baseline: {stage}…"))
        }
        BaselineStatus::Failed => {
            PanelLines::one("The baseline could not be opened (! lists why).")
        }
        BaselineStatus::Ready => PanelLines::one("comparing the captures…"),
    }
}
