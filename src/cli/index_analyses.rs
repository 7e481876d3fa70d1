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

/// What was found or done, and the entry's path.
pub enum Stored {
    /// Already there, render index included.
    Already(std::path::PathBuf),
    /// Computed and written, in this long.
    Written(Duration, std::path::PathBuf),
}

impl Stored {
    pub fn path(&self) -> &std::path::Path {
        match self {
            Stored::Already(p) | Stored::Written(_, p) => p,
        }
    }
}

/// Stores the analyses of `out`'s input set under `settings` when they are
/// not stored yet. Takes the profile (the analyses keep it); `Ok(None)`
/// when caching is off for this set.
pub fn store(out: &mut profile::Opened, settings: &Settings) -> Result<Option<Stored>, String> {
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
        Some(_) => Stored::Written(t0.elapsed(), slot.path()),
        None => Stored::Already(slot.path()),
    }))
}

/// Loads the job of `files` (every one cached by now) and stores its
/// analyses; returns the line that says what was done and the entry.
pub fn store_job(
    files: &[std::path::PathBuf],
    cache: &profile::cache::CacheDir,
    settings: &Settings,
) -> Result<(String, std::path::PathBuf), String> {
    let t0 = Instant::now();
    let sources: Vec<profile::Source> = files.iter().cloned().map(profile::Source::File).collect();
    let plan = profile::LoadPlan::cached(Some(cache));
    let mut out = profile::load(&sources, &plan, &mut |_, _, _| {});
    if let Some(e) = out.errors.first() {
        return Err(e.to_string());
    }
    let what = format!("job of {} files", files.len());
    match store(&mut out, settings) {
        Ok(Some(Stored::Already(path))) => Ok((format!("{what}: analyses already stored"), path)),
        Ok(Some(Stored::Written(_, path))) => Ok((
            format!(
                "{what}: analyses stored in {:.2} s (the job's first open is a reopen)",
                t0.elapsed().as_secs_f64()
            ),
            path,
        )),
        Ok(None) => Err(format!("{what}: caching is off, analyses not stored")),
        Err(why) => Err(format!("{what}: {why}; analyses not stored")),
    }
}
