//! The `--baseline` capture: loaded beside the main one (after the main
//! one's first frame, so that frame does not wait), then the diff of the
//! two, all off the UI thread.

pub use super::data::BaselineMsg;
use super::data::{self, LoadMsg, Loaded};
use crate::analysis::Settings;
use crate::analysis::diff::{Side, diff};
use crate::profile::{CacheDir, Source};
use std::sync::Arc;

/// Loads `after` as [`data::load`] does and, once its first frame is sent,
/// `before` beside its analyses, then the diff of the two; the baseline's
/// stages, result and the diff arrive as [`LoadMsg::Baseline`], its failed files and cache notes as the main
/// ones'. Returns whether any of `after` could be opened.
pub fn load_pair(
    after: &[Source],
    before: &[Source],
    cache: Option<&CacheDir>,
    settings: &Settings,
    send: &(dyn Fn(LoadMsg) + Sync),
) -> bool {
    let (go, wait) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        let baseline = s.spawn(move || {
            // No first frame (nothing opened): nothing to compare with.
            wait.recv().ok()?;
            let loaded = data::load_then(
                before,
                cache,
                settings,
                &mut |m| forward(m, send),
                &mut || {},
            );
            send(LoadMsg::Baseline(match &loaded {
                Some(l) => BaselineMsg::Loaded(l.clone()),
                None => BaselineMsg::Failed,
            }));
            loaded
        });
        let main = data::load_then(after, cache, settings, &mut |m| send(m), &mut || {
            let _ = go.send(());
        });
        drop(go);
        let before = baseline.join().ok().flatten();
        if let (Some(after), Some(before)) = (&main, before) {
            let d = diff(side(&before), side(after));
            send(LoadMsg::Baseline(BaselineMsg::Diff(Arc::new(d))));
        }
        main.is_some()
    })
}

/// A baseline loader message as the UI takes it: its progress and result
/// tagged as the baseline's, errors and cache notes as any input's.
fn forward(m: LoadMsg, send: &(dyn Fn(LoadMsg) + Sync)) {
    match m {
        LoadMsg::Progress { stage, .. } => send(LoadMsg::Baseline(BaselineMsg::Stage(stage))),
        LoadMsg::FileError(_) | LoadMsg::CacheOff(_) | LoadMsg::Note(_) => send(m),
        // The baseline is shown only once analysed; a quit waits for the
        // main capture's writes alone.
        LoadMsg::Done(_)
        | LoadMsg::Analysed(_)
        | LoadMsg::Baseline(_)
        | LoadMsg::Writing
        | LoadMsg::Finished => {}
    }
}

/// A loaded capture as the diff reads it.
fn side(l: &Loaded) -> Side<'_> {
    Side {
        profile: &l.profile,
        analysis: &l.analysis,
    }
}
