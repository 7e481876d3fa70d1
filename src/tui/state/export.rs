//! `E`: the export asked for, from what the timeline shows; the loop runs
//! it and its line comes back as a message.

use super::App;
use crate::tui::data::Loaded;
use crate::tui::export::{instance_job, view_job};
use crate::tui::messages::Level;
use std::sync::Arc;

impl App {
    /// The selected instance on every rank, else the visible window and
    /// the lanes on screen; with the steps' critical paths when the steps
    /// view derived them.
    pub(super) fn export_trace(&mut self, l: &Arc<Loaded>) {
        let c = &self.capture;
        let mut job = c
            .instance()
            .and_then(|(g, k)| instance_job(l, g, k))
            .unwrap_or_else(|| {
                let rows: Vec<_> = c.lanes.rows[c.lanes.on_screen()]
                    .iter()
                    .map(|r| r.kind)
                    .collect();
                view_job(l, c.view.window(), &rows)
            });
        job.steps = c.steps_now().cloned();
        self.say(format!("exporting {}…", job.described));
        self.session.export = Some(job);
    }

    /// The export's line: where it went, or why not.
    pub fn on_exported(&mut self, result: Result<String, String>) {
        match result {
            Ok(line) => self.session.messages.answer(Level::Info, line),
            Err(why) => self.session.messages.answer(Level::Warn, why),
        }
        self.session.dirty = true;
    }
}
