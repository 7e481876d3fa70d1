//! What `rankline index` stores beside each cache entry besides the model:
//! the cross-rank analyses and the render index that the timeline computes
//! on a first open, so that the first timeline open after `index` (say, of
//! every node's file by `srun`) is a reopen.

use rankline::analysis::bundle::Settings;
use rankline::analysis::stored;
use rankline::profile::{self, Profile};
use rankline::tui::data::Loaded;
use rankline::tui::index::RenderIndex;
use std::time::{Duration, Instant};

/// What was found or done.
pub enum Stored {
    /// Already there, render index included.
    Already,
    /// Computed and written, in this long.
    Written(Duration),
}

/// Stores the analyses of `out`'s input set under `settings` when they are
/// not stored yet. Takes the profile (the analyses keep it); `Ok(None)`
/// when caching is off for this set.
pub fn store(out: &mut profile::Loaded, settings: &Settings) -> Result<Option<Stored>, String> {
    let Some(slot) = out.analyses_slot(&stored::settings_key(settings, &out.profile)) else {
        return Ok(None);
    };
    // A damaged or partial (report's, without a render index) entry is
    // replaced; nothing of it needs saying here.
    let found = stored::read_then(&slot, &out.profile, &mut |_| {}, |view| {
        RenderIndex::decode(view, &out.profile).is_ok()
    });
    if found.is_some_and(|(_, indexed)| indexed) {
        return Ok(Some(Stored::Already));
    }
    let t0 = Instant::now();
    let profile: Profile = std::mem::take(&mut out.profile);
    let quick = Loaded::quick(profile, settings);
    let full = Loaded::complete(&quick, settings, &mut |_| {});
    drop(quick);
    let view = full.index.encode()?;
    stored::write(&slot, &full.analysis, &view)?;
    Ok(Some(Stored::Written(t0.elapsed())))
}
