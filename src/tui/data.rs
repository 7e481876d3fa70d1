//! What the UI shows once loading is done: the profile, every analysis and
//! the render index, built off the UI thread and shared read-only.

use super::finder::{self, Entry};
use super::index::RenderIndex;
use crate::analysis::bundle::{Analysis, Settings, analyze};
use crate::profile::{self, CacheDir, LoadError, Profile, Source, Stage};

/// A big start-skew event, for `]`/`[` and the list.
#[derive(Debug, Clone, PartialEq)]
pub struct BigEvent {
    pub group: usize,
    /// 0-based instance index.
    pub instance: usize,
    pub start: i64,
    pub skew_ns: i64,
    pub step: Option<usize>,
    pub offset_ns: Option<i64>,
}

/// Everything the views read.
pub struct Loaded {
    pub profile: Profile,
    pub analysis: Analysis,
    pub index: RenderIndex,
    pub entries: Vec<Entry>,
    /// In time order.
    pub big_events: Vec<BigEvent>,
    /// First and last time of any event (computed once: it scans everything).
    pub span: Option<(i64, i64)>,
}

impl Loaded {
    pub fn build(
        profile: Profile,
        settings: &Settings,
        stage: &mut dyn FnMut(&'static str),
    ) -> Loaded {
        let analysis = analyze(&profile, settings, stage);
        stage("indexing for drawing");
        let index = RenderIndex::build(&profile, &analysis.classes);
        let entries = finder::entries(&profile, &analysis);
        let mut big_events: Vec<BigEvent> = analysis
            .skews
            .iter()
            .flat_map(|gs| {
                gs.big_events.iter().map(move |e| BigEvent {
                    group: gs.group,
                    instance: e.instance.index,
                    start: e.instance.earliest_start,
                    skew_ns: e.instance.start_skew_ns,
                    step: e.step,
                    offset_ns: e.offset_in_step_ns,
                })
            })
            .collect();
        big_events.sort_by_key(|e| (e.start, e.group, e.instance));
        let span = profile.span();
        Loaded {
            profile,
            analysis,
            index,
            entries,
            big_events,
            span,
        }
    }

    /// The 20 biggest events by start skew.
    pub fn top_big_events(&self) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..self.big_events.len()).collect();
        idx.sort_by_key(|&i| (std::cmp::Reverse(self.big_events[i].skew_ns), i));
        idx.truncate(20);
        idx
    }
}

/// Messages from the background loader to the UI.
pub enum LoadMsg {
    Progress {
        stage: String,
        file: usize,
        files: usize,
        rows: usize,
    },
    /// A file that failed; the others still load.
    FileError(String),
    Done(Box<Loaded>),
}

/// Loads and analyses `sources`, reporting through `send`. Runs on a
/// blocking thread.
pub fn load(
    sources: &[Source],
    cache: Option<&CacheDir>,
    settings: &Settings,
    send: &mut dyn FnMut(LoadMsg),
) {
    let files = sources.len();
    let out = profile::load_with(sources, cache, &mut |file, stage: Stage, rows| {
        send(LoadMsg::Progress {
            stage: stage.label().to_string(),
            file,
            files,
            rows,
        });
    });
    let (profile, errors) = (out.profile, out.errors);
    for e in errors {
        send(LoadMsg::FileError(LoadError::to_string(&e)));
    }
    let loaded = Loaded::build(profile, settings, &mut |stage| {
        send(LoadMsg::Progress {
            stage: stage.to_string(),
            file: files.saturating_sub(1),
            files,
            rows: 0,
        })
    });
    send(LoadMsg::Done(Box::new(loaded)));
}
