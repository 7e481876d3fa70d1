//! `y`: the selection's reference for the clipboard — `GROUP:INSTANCE` as
//! `--goto` takes it for a matched collective, else the event's name.

use super::{App, EventRef};
use crate::tui::osc52;

impl App {
    /// What `y` copies for the current selection.
    pub fn selection_reference(&self) -> Option<String> {
        let c = &self.capture;
        let l = c.data.as_ref()?;
        if let Some((g, k)) = c.instance() {
            return Some(format!("{}:{}", l.analysis.matching.groups[g].key, k + 1));
        }
        let p = &l.profile;
        let name = match c.selection? {
            EventRef::Gpu(r) => p.gpu.name_as(r, c.show.names),
            EventRef::Api(r) => p.runtime.name(r),
            EventRef::Nvtx(r) => p.nvtx.name(r),
            EventRef::Osrt(r) => p.osrt.name(r),
            EventRef::Sched(_) => return Some("descheduled".into()),
            EventRef::Sample(r) => p.samples.leaf(r),
        };
        Some(p.strings.get(name).to_string())
    }

    pub(super) fn copy_reference(&mut self) {
        if let Some(text) = self.range_reference() {
            self.session.clipboard = Some(osc52::copy_sequence(&text));
            self.say(format!("copied the range as {text} (OSC 52 clipboard)"));
            return;
        }
        let Some(text) = self.selection_reference() else {
            self.say("nothing selected to copy (Enter selects)");
            return;
        };
        let what = if self.capture.instance().is_some() {
            "--goto reference"
        } else {
            "name"
        };
        self.session.clipboard = Some(osc52::copy_sequence(&text));
        self.say(format!("copied the {what} {text} (OSC 52 clipboard)"));
    }
}
