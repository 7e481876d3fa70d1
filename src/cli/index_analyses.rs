//! What `rankline index` stores beside each cache entry besides the model:
//! the cross-rank analyses and the render index that the timeline computes
//! on a first open, so that the first timeline open after `index` (say, of
//! every node's file by `srun`) is a reopen.

use rankline::analysis::Settings;
use rankline::analysis::pipeline::Stages;
use rankline::analysis::stored;
use rankline::profile;
use rankline::tui::data::Loaded;
use rankline::tui::index::RenderIndex;
use std::sync::Arc;
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
    let t0 = Instant::now();
    let profile = Arc::new(std::mem::take(&mut out.profile));
    // A damaged or partial (report's, without a render index) entry is
    // replaced; nothing of it needs saying here.
    let (loaded, not_stored) = stored::read_or_compute(
        Some(&slot),
        &profile,
        Stages::all(),
        &mut |_| {},
        |view| RenderIndex::decode(view, &profile).is_ok(),
        |analysis, indexed| {
            // Stored without the render index: build it and store both.
            let l = (!indexed).then(|| Loaded::from_stored(profile.clone(), analysis, None));
            (l, !indexed)
        },
        |_| {
            let quick = Loaded::quick(profile.clone(), settings);
            Some(Loaded::complete(&quick, settings, &mut |_| {}))
        },
        |l| {
            let l = l.as_ref().ok_or("nothing to store")?;
            Ok((&l.analysis, l.index.encode()?))
        },
    );
    if let Some(why) = not_stored {
        return Err(why);
    }
    Ok(Some(match loaded {
        Some(_) => Stored::Written(t0.elapsed()),
        None => Stored::Already,
    }))
}
