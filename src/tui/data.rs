//! What the UI shows once loading is done: the profile, every analysis and
//! the render index, built off the UI thread and shared read-only.

use super::filtered::FilterCache;
use super::finder::{self, Entry};
use super::index::RenderIndex;
use super::lanes::LaneKind;
use crate::analysis::behind::{self, Behind};
use crate::analysis::diff::Diff;
use crate::analysis::launch::{Verdict, explain_late};
use crate::analysis::nccl_name::CollOp;
use crate::analysis::pipeline::{self, Stages};
use crate::analysis::skew::{GroupSkew, InstanceSkew};
use crate::analysis::stored;
use crate::analysis::why::why_late;
use crate::analysis::why_words;
use crate::analysis::{Analysis, Settings, Window};
use crate::profile::{self, CacheDir, DevId, LoadError, LoadStage, Profile, Source};
use std::sync::Arc;

/// A big start-skew event, for `]`/`[` and the list.
#[derive(Debug, Clone, PartialEq)]
pub struct BigEvent {
    pub group: usize,
    /// 0-based instance index.
    pub instance: usize,
    pub start: i64,
    pub skew_ns: i64,
    pub step: Option<usize>,
    pub offset_in_step_ns: Option<i64>,
}

/// One row of the `b` list: an instance among the largest start skews.
#[derive(Debug, Clone, PartialEq)]
pub struct SkewRow {
    pub group: usize,
    /// 0-based instance index.
    pub instance: usize,
    pub start: i64,
    pub skew_ns: i64,
    pub op: CollOp,
    /// The device that started last.
    pub late: DevId,
    pub verdict: Verdict,
    /// The largest part of the late rank's delay in a few words ("sync",
    /// "queued: S7 gemm"…), from its account.
    pub cause: String,
    /// Above the big-skew threshold (`--big-skew-ms`).
    pub big: bool,
    /// Every rank of one host started after every other host's: the event
    /// is the node's, not its latest rank's.
    pub late_host: Option<crate::analysis::skew::LateHost>,
    /// `late` never started it (a hang): the skew is a lower bound, still
    /// open at capture end, and there is no launch to explain.
    pub open: bool,
}

/// How many instances the `b` list holds.
pub const TOP_SKEWS: usize = 20;

/// Everything the views read. The timeline can draw from the first,
/// quick version (profile, render index, completeness); the full version,
/// with the cross-rank analyses, replaces it moments later. Not `Clone`:
/// it is shared as `Arc<Loaded>`, a copy of a 10 M-event capture's
/// analyses costs memory and time.
pub struct Loaded {
    pub profile: Arc<Profile>,
    pub analysis: Analysis,
    pub index: Arc<RenderIndex>,
    pub entries: Vec<Entry>,
    /// In time order.
    pub big_events: Vec<BigEvent>,
    /// The [`TOP_SKEWS`] instances of all groups with the largest start
    /// skew, whatever the threshold; largest first.
    pub top_skews: Vec<SkewRow>,
    /// Who is behind (hangs, early stops), derived once from the matching.
    pub behind: Behind,
    /// First and last time of any event (computed once: it scans everything).
    pub span: Option<(i64, i64)>,
    /// The cross-rank analyses are done.
    pub complete: bool,
    /// The lanes drawn with the minimum-duration filter on, summarized.
    pub filtered: FilterCache<LaneKind>,
}

impl Loaded {
    /// What the first frame needs: the render index and completeness.
    pub fn quick(profile: Arc<Profile>, settings: &Settings) -> Loaded {
        let first = Stages::of(&[pipeline::Stage::Completeness]);
        let analysis = pipeline::run(&profile, settings, Window::ALL, first, &mut |_| {});
        let index = Arc::new(RenderIndex::build(&profile, &analysis.classes));
        let span = analysis.completeness.span;
        Loaded {
            profile,
            analysis,
            index,
            entries: Vec::new(),
            big_events: Vec::new(),
            top_skews: Vec::new(),
            behind: Behind::default(),
            span,
            complete: false,
            filtered: FilterCache::default(),
        }
    }

    /// Every analysis, sharing the quick version's profile and index.
    pub fn complete(
        quick: &Loaded,
        settings: &Settings,
        stage: &mut dyn FnMut(&'static str),
    ) -> Loaded {
        let profile = quick.profile.clone();
        let (all, w) = (Stages::all(), Window::ALL);
        let analysis = pipeline::resume(&profile, settings, w, quick.analysis.clone(), all, stage);
        stage("indexing for the finder");
        Loaded::finish(profile, analysis, quick.index.clone())
    }

    /// From analyses read back from the cache, and the render index when
    /// it was stored with them (built here when it was not): everything at
    /// once, as [`Loaded::build`] would give it.
    pub fn from_stored(
        profile: Arc<Profile>,
        analysis: Analysis,
        index: Option<RenderIndex>,
    ) -> Loaded {
        let index = index.unwrap_or_else(|| RenderIndex::build(&profile, &analysis.classes));
        Loaded::finish(profile, analysis, Arc::new(index))
    }

    /// The finder entries and skew lists of finished analyses.
    fn finish(profile: Arc<Profile>, analysis: Analysis, index: Arc<RenderIndex>) -> Loaded {
        // On the clocks as aligned (measured when the clocks were).
        let span = analysis.completeness.span;
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
                    offset_in_step_ns: e.offset_in_step_ns,
                })
            })
            .collect();
        big_events.sort_by_key(|e| (e.start, e.group, e.instance));
        let top_skews = top_skews(&profile, &analysis);
        let behind = behind::find(&profile, &analysis.matching, &analysis.clock);
        // The analyses' scratch memory, freed by now, would otherwise stay
        // with the process for as long as the timeline is open.
        crate::profile::give_back_freed();
        Loaded {
            profile,
            analysis,
            index,
            entries,
            big_events,
            top_skews,
            behind,
            span,
            complete: true,
            filtered: FilterCache::default(),
        }
    }

    /// Both stages at once (tests, benchmarks).
    pub fn build(
        profile: Profile,
        settings: &Settings,
        stage: &mut dyn FnMut(&'static str),
    ) -> Loaded {
        let quick = Loaded::quick(Arc::new(profile), settings);
        Loaded::complete(&quick, settings, stage)
    }
}

/// The instances with the largest start skew over every group, each with
/// its late rank's verdict and largest cause.
fn top_skews(p: &Profile, a: &Analysis) -> Vec<SkewRow> {
    let mut all: Vec<(&GroupSkew, &InstanceSkew)> = a
        .skews
        .iter()
        .flat_map(|gs| gs.instances.iter().map(move |i| (gs, i)))
        .collect();
    all.sort_by_key(|(gs, i)| {
        (
            std::cmp::Reverse(i.start_skew_ns),
            i.earliest_start,
            gs.group,
            i.index,
        )
    });
    all.truncate(TOP_SKEWS);
    all.into_iter()
        .map(|(gs, i)| {
            let g = &a.matching.groups[gs.group];
            // A rank that never started it has no launch to explain.
            let (verdict, cause) = if i.open {
                (
                    Verdict::Unknown,
                    "never launched it (W: behind)".to_string(),
                )
            } else {
                (
                    explain_late(p, &a.clock, &a.matching, gs.group, i).verdict,
                    why_words::largest_cause(p, &why_late(p, &a.clock, &a.matching, gs.group, i)),
                )
            };
            SkewRow {
                group: gs.group,
                instance: i.index,
                start: i.earliest_start,
                skew_ns: i.start_skew_ns,
                op: i.op,
                late: g.devices[i.late],
                verdict,
                cause,
                open: i.open,
                big: i.start_skew_ns > gs.big_threshold_ns,
                late_host: crate::analysis::skew::late_host_in(p, &a.skews, gs.group, g, i),
            }
        })
        .collect()
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
    /// Why caching is off for this run (the timeline works without it).
    CacheOff(String),
    /// The timeline can draw. Shared with the loader, which goes on from
    /// it (analyses, the cache entry): a copy would double the memory.
    Done(Arc<Loaded>),
    /// The cross-rank analyses are done too.
    Analysed(Arc<Loaded>),
    /// About the `--baseline` capture.
    Baseline(BaselineMsg),
    /// Something the user should know that did not stop loading (stored
    /// analyses rejected and recomputed), one line.
    Note(String),
    /// The loader began writing the cache (the analyses, the entry).
    Writing,
    /// The loader is done, its writes included.
    Finished,
}

/// What the baseline loader ([`super::baseline::load_pair`]) says.
pub enum BaselineMsg {
    /// What it is doing now.
    Stage(String),
    /// The baseline, analysed.
    Loaded(Arc<Loaded>),
    /// The differences from the baseline to the main capture.
    Diff(Arc<Diff>),
    /// None of the baseline's inputs could be opened (their errors were
    /// sent as [`LoadMsg::FileError`]).
    Failed,
}

/// Loads and analyses `sources`, reporting through `send`. Runs on a
/// blocking thread. Returns whether any input could be opened: when none
/// could, only their [`LoadMsg::FileError`]s were sent.
pub fn load(
    sources: &[Source],
    cache: Option<&CacheDir>,
    settings: &Settings,
    send: &mut dyn FnMut(LoadMsg),
) -> bool {
    load_then(sources, cache, settings, send, &mut || {}).is_some()
}

/// [`load`], calling `drawable` once the first frame's version is sent;
/// returns the analysed version (None: no input could be opened).
pub fn load_then(
    sources: &[Source],
    cache: Option<&CacheDir>,
    settings: &Settings,
    send: &mut dyn FnMut(LoadMsg),
    drawable: &mut dyn FnMut(),
) -> Option<Arc<Loaded>> {
    let files = sources.len();
    let plan = profile::LoadPlan {
        defer_cache_write: true,
        ..profile::LoadPlan::cached(cache)
    };
    let out = profile::load(sources, &plan, &mut |file, stage: LoadStage, rows| {
        send(LoadMsg::Progress {
            stage: stage.label().to_string(),
            file,
            files,
            rows,
        });
    });
    let slot = out.analyses_slot(&stored::settings_key(settings, &out.profile));
    let (profile, errors, unwritten) = (Arc::new(out.profile), out.errors, out.unwritten);
    // Said with the analyses' own notes, after the first frame.
    let mut notes = out.notes;
    let cache_off = out.cache_off;
    let nothing_opened = profile.files.is_empty() && !errors.is_empty();
    for e in errors {
        send(LoadMsg::FileError(LoadError::to_string(&e)));
    }
    if nothing_opened {
        return None;
    }
    let progress = |stage: &str| LoadMsg::Progress {
        stage: stage.to_string(),
        file: files.saturating_sub(1),
        files,
        rows: 0,
    };
    // Both ways to the first frame tell the UI and the loop alike; only
    // one of them runs.
    let told = std::cell::RefCell::new((send, drawable, cache_off));
    let show = |msg: LoadMsg| {
        let mut t = told.borrow_mut();
        let (send, drawable, cache_off) = &mut *t;
        send(msg);
        drawable();
        if let Some(why) = cache_off.take() {
            send(LoadMsg::CacheOff(why));
        }
    };
    let tell = |msg: LoadMsg| (told.borrow_mut().0)(msg);
    let (full, not_stored) = stored::read_or_compute(
        slot.as_ref(),
        &profile,
        Stages::all(),
        &mut |m| notes.push(m),
        |view| (view.is_empty(), RenderIndex::decode(view, &profile)),
        |analysis, (no_view, index)| {
            // Everything at once: no "matching collectives…" on a reopen.
            tell(progress("reading stored analyses"));
            let index = match index {
                Ok(index) => Some(index),
                Err(why) => {
                    // Empty when `report` stored the analyses alone.
                    if let (false, Some(slot)) = (no_view, &slot) {
                        tell(LoadMsg::Note(stored::rejected(slot, &why)));
                    }
                    None
                }
            };
            // Stored again with the index when it was not there.
            let store = index.is_none();
            let full = Arc::new(Loaded::from_stored(profile.clone(), analysis, index));
            show(LoadMsg::Done(full.clone()));
            (full, store)
        },
        |_| {
            tell(progress("indexing for drawing"));
            let quick = Arc::new(Loaded::quick(profile.clone(), settings));
            // Hand over the quick version first: the timeline draws while
            // the cross-rank analyses run.
            show(LoadMsg::Done(quick.clone()));
            let full = Loaded::complete(&quick, settings, &mut |stage| tell(progress(stage)));
            let full = Arc::new(full);
            tell(LoadMsg::Analysed(full.clone()));
            full
        },
        |full| {
            tell(LoadMsg::Writing);
            Ok((&full.analysis, full.index.encode()?))
        },
    );
    let send = told.into_inner().0;
    for note in notes {
        send(LoadMsg::Note(note));
    }
    match not_stored {
        // Said once: the cache entry is not tried after it.
        Some(why) => send(LoadMsg::CacheOff(why)),
        None => {
            if let Some(entry) = unwritten {
                send(LoadMsg::Writing);
                if let Err(why) = entry.write(&full.profile) {
                    send(LoadMsg::CacheOff(why));
                }
            }
        }
    }
    send(LoadMsg::Finished);
    Some(full)
}
