//! `E`: what the timeline shows, handed to a GUI as a Perfetto trace — the
//! selected collective instance on every rank, else the visible window and
//! lanes. The trace goes under `$XDG_STATE_HOME/rankline/exports/` (never
//! beside an input). The writing itself is the command line's `export`,
//! handed in as an [`Exporter`]: the UI does not reach into `report`.

use super::data::Loaded;
use super::index::RenderIndex;
use super::lanes::LaneKind;
use crate::analysis::critical_path::StepPath;
use crate::analysis::matching::Matching;
use crate::analysis::step_overview::StepOverview;
use crate::analysis::tracks::Tracks;
use crate::analysis::{Analysis, Window};
use crate::profile::Profile;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Writes the trace of `tracks` over `window` (with the steps' critical
/// paths, when given) to a file; says what it wrote in a few words
/// (`4384 events, 1152 launch flows`), or why not.
pub type Exporter = Arc<
    dyn Fn(&Profile, &Analysis, Window, &Tracks, &[StepPath], &Path) -> Result<String, String>
        + Send
        + Sync,
>;

/// One export asked for: what, over which window, of which data.
#[derive(Clone)]
pub struct ExportJob {
    pub data: Arc<Loaded>,
    pub window: Window,
    pub tracks: Tracks,
    /// In the file name and the message: `s20-55`, `window`.
    pub what: String,
    /// For the message: `s20:55 on every rank`, `the visible window and lanes`.
    pub described: String,
    /// The steps' figures, when the steps view had derived them: their
    /// critical paths go in as a track.
    pub steps: Option<Arc<StepOverview>>,
}

/// The selected instance `(group, k)`: its kernels on every rank, from
/// the earliest start to the latest end, with a quarter of that on each
/// side (at least 100 µs) to show what led into it.
pub fn instance_job(data: &Arc<Loaded>, group: usize, k: usize) -> Option<ExportJob> {
    let m = &data.analysis.matching;
    let g = m.groups.get(group)?;
    let (start, end) = g
        .members(k)
        .map(|(_, _, span)| span)
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))?;
    let pad = ((end - start) / 4).max(100_000);
    Some(ExportJob {
        data: data.clone(),
        window: Window {
            start: start.saturating_sub(pad),
            end: end.saturating_add(pad),
        },
        tracks: Tracks::of_groups(&data.profile, m, &[group]),
        what: format!("{}-{}", file_safe(&g.key), k + 1),
        described: format!("{}:{} on every rank", g.key, k + 1),
        steps: None,
    })
}

/// The visible window and the lanes of the rows on screen (a merged
/// device or host row stands for all its streams).
pub fn view_job(data: &Arc<Loaded>, window: Window, rows: &[LaneKind]) -> ExportJob {
    let p = &data.profile;
    ExportJob {
        data: data.clone(),
        window,
        tracks: tracks_of_rows(p, &data.index, &data.analysis.matching, rows),
        what: "window".into(),
        described: "the visible window and lanes".into(),
        steps: None,
    }
}

/// The tracks the rows show.
pub fn tracks_of_rows(p: &Profile, idx: &RenderIndex, m: &Matching, rows: &[LaneKind]) -> Tracks {
    let mut lanes = vec![false; p.lanes.len()];
    let mut threads = vec![false; p.threads.len()];
    for &row in rows {
        match row {
            LaneKind::Stream(l) => lanes[l as usize] = true,
            LaneKind::Device(d) => {
                for (l, lane) in p.lanes.iter().enumerate() {
                    lanes[l] |= lane.device == d;
                }
            }
            LaneKind::Host(h) => {
                for (l, lane) in p.lanes.iter().enumerate() {
                    lanes[l] |= p.devices[lane.device as usize].host == h;
                }
            }
            LaneKind::Missing(_) => {}
            LaneKind::Api(t) => threads[t as usize] = true,
            LaneKind::Nvtx(tr) => threads[idx.nvtx_tracks[tr].thread as usize] = true,
            LaneKind::Cpu(tr) => threads[idx.cpu_tracks[tr].thread as usize] = true,
        }
    }
    Tracks::of(p, m, lanes, threads)
}

/// Where exports go: `exports` in rankline's state directory
/// (`$XDG_STATE_HOME/rankline`, else `~/.local/state/rankline`).
pub fn exports_dir() -> Result<PathBuf, String> {
    Ok(crate::profile::bookmarks::state_dir()?.join("exports"))
}

/// A new file in `dir` for the job: `<input>-<what>-<UTC time>.json.gz`,
/// `-2`, `-3` … when that is taken.
pub fn new_file(dir: &Path, input: &str, what: &str, utc: &str) -> PathBuf {
    let base = format!("{}-{what}-{utc}", file_safe(input));
    let mut path = dir.join(format!("{base}.json.gz"));
    let mut n = 2;
    // Any entry, a dangling symbolic link too, is taken.
    while path.symlink_metadata().is_ok() {
        path = dir.join(format!("{base}-{n}.json.gz"));
        n += 1;
    }
    path
}

/// A name from the capture as part of a file name: letters, digits and
/// `.-_` kept, the rest `_`, at most 60 characters.
fn file_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect()
}

/// Runs `job` with `exporter` into a new file under `dir`: the line the
/// messages show, `Ok` or `Err`.
pub fn run(
    exporter: &Exporter,
    job: &ExportJob,
    dir: &Path,
    input: &str,
    utc: &str,
) -> Result<String, String> {
    let shown = |p: &Path| crate::text_safe::path_text(p);
    std::fs::create_dir_all(dir).map_err(|e| format!("export: {}: {e}", shown(dir)))?;
    let path = new_file(dir, input, &job.what, utc);
    let paths = job.steps.as_ref().map_or(&[][..], |o| &o.paths[..]);
    let wrote = exporter(
        &job.data.profile,
        &job.data.analysis,
        job.window,
        &job.tracks,
        paths,
        &path,
    )
    .map_err(|why| format!("export of {} refused: {why}", job.described))?;
    Ok(format!(
        "exported {} ({}: {wrote}; open it in ui.perfetto.dev)",
        shown(&path),
        job.described
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_safe_and_never_overwrite() {
        let dir =
            std::env::temp_dir().join(format!("rankline-export-names-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let first = new_file(&dir, "rank 0/\x1b[2J", "s20-55", "20261204T220000Z");
        assert_eq!(
            first.file_name().unwrap(),
            "rank_0___2J-s20-55-20261204T220000Z.json.gz"
        );
        std::fs::write(&first, "").unwrap();
        let second = new_file(&dir, "rank 0/\x1b[2J", "s20-55", "20261204T220000Z");
        assert!(
            second.to_string_lossy().ends_with("-2.json.gz"),
            "{second:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
