//! Analyses stored in the cache: a reopen reads them back and gives the
//! answers computed fresh; a stale, truncated, corrupted or other-settings
//! entry is reported, recomputed and replaced, never trusted. And reports
//! that need only GPU activity read only that when nothing is cached.

mod common;
use common::*;
use rankline::analysis::Settings;
use rankline::profile::{CacheDir, Source};
use rankline::tui::data::{LoadMsg, Loaded};
use rankline::tui::keymap::Keymap;
use rankline::tui::state::App;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// A private copy of `fixture` and a private cache directory.
fn setup(test: &str, fixture: &str) -> (PathBuf, PathBuf) {
    let d = temp_dir(test);
    let f = d.join("input").join(format!("{fixture}.sqlite"));
    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    std::fs::copy(root().join(format!("fixtures/{fixture}.sqlite")), &f).unwrap();
    (f, d.join("cache"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `report all` as JSON with `extra` options: (stdout, stderr).
fn report(files: &[&Path], cache: Option<&Path>, extra: &[&str]) -> (String, String) {
    let mut args = vec!["report", "all", "--format", "json"];
    args.extend(files.iter().map(|f| s(f)));
    match cache {
        Some(c) => args.extend(["--cache-dir", s(c)]),
        None => args.push("--no-cache"),
    }
    args.extend(extra);
    let o = rankline(&args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    (stdout(&o), stderr(&o))
}

fn stored_entries(cache: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(cache)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "rlanalysis"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Sets a file's mtime an hour into the past.
fn age(path: &Path) {
    let t = SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

/// Whether the entry was read back as it is: its file is the same (not
/// replaced by a rename) and its last use was just set.
fn read_in_place(entry: &Path, ino_before: u64) -> bool {
    let m = std::fs::metadata(entry).unwrap();
    let recent = m.modified().unwrap().elapsed().unwrap() < Duration::from_secs(600);
    m.ino() == ino_before && recent
}

#[test]
fn stored_analyses_are_read_back_and_give_the_fresh_answers() {
    let (f, cache) = setup("analyses_roundtrip", "megatron_tp8");
    let (fresh, _) = report(&[&f], None, &[]);
    let (first, err) = report(&[&f], Some(&cache), &[]);
    assert_eq!(first, fresh);
    assert_eq!(err, "");
    let entry = stored_entries(&cache).pop().expect("analyses stored");
    age(&entry);
    let ino = std::fs::metadata(&entry).unwrap().ino();
    let (second, err) = report(&[&f], Some(&cache), &[]);
    assert_eq!(err, "", "read back without complaint");
    assert!(read_in_place(&entry, ino), "the stored analyses were used");
    assert_eq!(second, fresh);
    // Each section alone, from the stored analyses, as fresh.
    for section in [
        "summary",
        "clock",
        "nccl",
        "overlap",
        "skew",
        "launch",
        "anomalies",
        "stragglers",
    ] {
        let args = ["report", section, s(&f), "--format", "json"];
        let cached = json(&[&args[..], &["--cache-dir", s(&cache)]].concat());
        let fresh = json(&[&args[..], &["--no-cache"]].concat());
        assert_eq!(cached, fresh, "{section}");
    }
}

/// Damages the stored analyses, then checks they are reported, recomputed
/// to the same answers and replaced.
fn damaged(test: &str, damage: impl Fn(&Path)) {
    let (f, cache) = setup(test, "megatron_tp8");
    let (good, _) = report(&[&f], Some(&cache), &[]);
    let entry = stored_entries(&cache).pop().unwrap();
    damage(&entry);
    let ino = std::fs::metadata(&entry).unwrap().ino();
    let (again, err) = report(&[&f], Some(&cache), &[]);
    assert_eq!(again, good, "damaged analyses must not change the answers");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "rankline: {}: stored analyses rejected (",
            entry.display()
        )) && err.trim_end().ends_with("; recomputed"),
        "{err}"
    );
    // Replaced whole by a rename; read back silently afterwards.
    assert_ne!(std::fs::metadata(&entry).unwrap().ino(), ino);
    assert_eq!(report(&[&f], Some(&cache), &[]), (good, String::new()));
}

#[test]
fn truncated_analyses_are_recomputed() {
    damaged("analyses_truncated", |e| {
        let len = std::fs::metadata(e).unwrap().len();
        std::fs::File::options()
            .write(true)
            .open(e)
            .unwrap()
            .set_len(len - 7)
            .unwrap();
    });
}

#[test]
fn corrupted_analyses_are_recomputed() {
    damaged("analyses_corrupt", |e| {
        let mut b = std::fs::read(e).unwrap();
        let at = b.len() / 2;
        b[at] ^= 0x5A;
        std::fs::write(e, b).unwrap();
    });
}

#[test]
fn an_empty_analyses_file_is_recomputed() {
    damaged("analyses_empty", |e| std::fs::write(e, b"").unwrap());
}

#[test]
fn each_analysis_setting_has_its_own_stored_analyses() {
    let (f, cache) = setup("analyses_settings", "megatron_tp8");
    report(&[&f], Some(&cache), &[]);
    let settings: [&[&str]; 5] = [
        &["--big-skew-ms", "0.5"],
        &["--anomaly-ratio", "1.5"],
        &["--step-marker", "^nothing$"],
        &["--align", "utc"],
        &["--comm-pattern", "gemm"],
    ];
    for (i, extra) in settings.iter().enumerate() {
        let (fresh, _) = report(&[&f], None, extra);
        let (stored, err) = report(&[&f], Some(&cache), extra);
        assert_eq!(stored, fresh, "{extra:?} computed");
        assert_eq!(err, "");
        assert_eq!(stored_entries(&cache).len(), i + 2, "{extra:?}");
        let (again, err) = report(&[&f], Some(&cache), extra);
        assert_eq!((again, err), (fresh, String::new()), "{extra:?} read back");
    }
    let (default_fresh, _) = report(&[&f], None, &[]);
    assert_eq!(report(&[&f], Some(&cache), &[]).0, default_fresh);
    // `--trim` reads nothing stored (it is not the whole capture).
    let trim = ["--trim", "0", "0.05"];
    assert_eq!(
        report(&[&f], Some(&cache), &trim).0,
        report(&[&f], None, &trim).0
    );
}

#[test]
fn a_changed_input_is_never_answered_with_its_old_analyses() {
    let (f, cache) = setup("analyses_stale", "megatron_tp8");
    report(&[&f], Some(&cache), &[]);
    // Another capture at the same path.
    std::fs::copy(root().join("fixtures/shared_stream_two_comms.sqlite"), &f).unwrap();
    let (fresh, _) = report(&[&f], None, &[]);
    let (cached, err) = report(&[&f], Some(&cache), &[]);
    assert_eq!(cached, fresh);
    assert_eq!(err, "");
}

#[test]
fn analyses_of_several_files_are_keyed_by_the_whole_set() {
    let d = temp_dir("analyses_set");
    let cache = d.join("cache");
    let a = root().join("fixtures/two_node_a.sqlite");
    let b = root().join("fixtures/two_node_b.sqlite");
    for set in [vec![&a, &b], vec![&a], vec![&b, &a], vec![&a, &b]] {
        let files: Vec<&Path> = set.iter().map(|p| p.as_path()).collect();
        let (fresh, _) = report(&files, None, &[]);
        assert_eq!(report(&files, Some(&cache), &[]).0, fresh, "{files:?}");
    }
    // Pair, single, reversed pair: three sets, three entries.
    assert_eq!(stored_entries(&cache).len(), 3);
}

/// Messages of a timeline load of `f` with `cache`, progress included,
/// and what the loader returned.
fn timeline_load_then(f: &Path, cache: &Path) -> (Vec<LoadMsg>, Option<Arc<Loaded>>) {
    let dir = CacheDir {
        dir: cache.to_path_buf(),
        cap_bytes: rankline::profile::cache::DEFAULT_CAP,
    };
    let mut msgs = Vec::new();
    let returned = rankline::tui::data::load_then(
        &[Source::File(f.to_path_buf())],
        Some(&dir),
        &Settings::default(),
        &mut |m| msgs.push(m),
        &mut || {},
    );
    (msgs, returned)
}

/// Messages of a timeline load of `f` with `cache`, progress included.
fn timeline_load(f: &Path, cache: &Path) -> Vec<LoadMsg> {
    let (msgs, opened) = timeline_load_then(f, cache);
    assert!(opened.is_some());
    msgs
}

fn stages(msgs: &[LoadMsg]) -> Vec<String> {
    msgs.iter()
        .filter_map(|m| match m {
            LoadMsg::Progress { stage, .. } => Some(stage.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_timeline_reopen_has_every_analysis_with_its_first_frame() {
    let (f, cache) = setup("analyses_timeline", "megatron_tp8");
    let first = timeline_load(&f, &cache);
    assert!(stages(&first).iter().any(|s| s == "matching collectives"));
    let analysed = first.iter().find_map(|m| match m {
        LoadMsg::Analysed(l) => Some(l),
        _ => None,
    });
    let analysed = analysed.expect("analysed after the first frame");
    let again = timeline_load(&f, &cache);
    let stages = stages(&again);
    assert!(
        !stages.iter().any(|s| s == "matching collectives"),
        "{stages:?}"
    );
    let done: Vec<_> = again
        .iter()
        .filter_map(|m| match m {
            LoadMsg::Done(l) => Some(l),
            LoadMsg::Analysed(_) | LoadMsg::Baseline(_) => panic!("nothing left to analyse"),
            LoadMsg::Note(n) | LoadMsg::CacheOff(n) | LoadMsg::FileError(n) => panic!("{n}"),
            LoadMsg::Progress { .. } | LoadMsg::Writing | LoadMsg::Finished => None,
        })
        .collect();
    let [reopened] = &done[..] else {
        panic!("one Done, got {}", done.len())
    };
    assert!(reopened.complete, "the first frame has every analysis");
    let bytes = |l: &rankline::tui::data::Loaded| {
        (
            rankline::analysis::stored::encode(&l.analysis).unwrap(),
            l.index.encode().unwrap(),
        )
    };
    assert!(bytes(reopened) == bytes(analysed), "stored == computed");
    assert_eq!(reopened.span, analysed.span);
    assert_eq!(reopened.big_events, analysed.big_events);
    assert_eq!(reopened.top_skews, analysed.top_skews);
    assert_eq!(reopened.entries.len(), analysed.entries.len());
}

/// The timeline's capture once a load of `f` is taken as the UI takes it,
/// what the loader returned, and whether the analyses were computed (not
/// read back).
fn timeline_and_loader(f: &Path, cache: &Path) -> (Arc<Loaded>, Arc<Loaded>, bool) {
    let (msgs, returned) = timeline_load_then(f, cache);
    let analysed = msgs.iter().any(|m| matches!(m, LoadMsg::Analysed(_)));
    let mut app = App::new(Keymap::default_keymap(), false);
    for m in msgs {
        app.on_load(m);
    }
    let timeline = app.capture().data.clone().expect("drawn");
    (timeline, returned.expect("opened"), analysed)
}

#[test]
fn the_timeline_shares_the_loaded_capture_instead_of_copying_it() {
    // A copy of a 10 M-event capture's analyses doubles the memory of a
    // reopen for a moment and costs time: first open and reopen, the
    // timeline draws from the very allocation the loader returns.
    let (f, cache) = setup("analyses_shared", "megatron_tp8");
    for (open, computed) in [("first open", true), ("reopen", false)] {
        let (timeline, loader, analysed) = timeline_and_loader(&f, &cache);
        assert_eq!(analysed, computed, "{open}");
        assert!(timeline.complete, "{open}");
        assert!(Arc::ptr_eq(&timeline, &loader), "{open}: a copy");
    }
}

#[test]
fn a_timeline_rebuilds_a_damaged_render_index_and_says_so() {
    let (f, cache) = setup("analyses_timeline_damaged", "megatron_tp8");
    // `report` stores the analyses alone; the timeline adds its index.
    report(&[&f], Some(&cache), &[]);
    let entry = stored_entries(&cache).pop().unwrap();
    let ino = std::fs::metadata(&entry).unwrap().ino();
    let msgs = timeline_load(&f, &cache);
    assert!(msgs.iter().all(|m| !matches!(m, LoadMsg::Note(_))));
    assert_ne!(std::fs::metadata(&entry).unwrap().ino(), ino, "index added");
    // Damage the end (the render index section).
    let mut b = std::fs::read(&entry).unwrap();
    let at = b.len() - 3;
    b[at] ^= 0xFF;
    std::fs::write(&entry, b).unwrap();
    let msgs = timeline_load(&f, &cache);
    let notes: Vec<&String> = msgs
        .iter()
        .filter_map(|m| match m {
            LoadMsg::Note(n) => Some(n),
            _ => None,
        })
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("stored analyses rejected ("),
        "{}",
        notes[0]
    );
    assert!(
        msgs.iter()
            .any(|m| matches!(m, LoadMsg::Analysed(l) if l.complete)),
        "recomputed"
    );
}

/// A section's JSON read with the partial load (`report SECTION`, no
/// cache) and the same section of the full load (`report all`).
fn partial_and_full(f: &Path, section: &str) -> (serde_json::Value, serde_json::Value) {
    let partial = json(&["report", section, s(f), "--format", "json", "--no-cache"]);
    let full = json(&["report", "all", s(f), "--format", "json", "--no-cache"]);
    (partial, full[section].clone())
}

#[test]
fn nccl_and_overlap_read_partially_answer_as_the_full_load_on_fixtures() {
    for f in sqlite_files(&root().join("fixtures")) {
        for section in ["nccl", "overlap"] {
            let (partial, full) = partial_and_full(&f, section);
            assert_eq!(partial, full, "{} {section}", f.display());
        }
    }
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn nccl_and_overlap_read_partially_answer_as_the_full_load_on_real_profiles() {
    for f in sqlite_files(&real_profiles()) {
        for section in ["nccl", "overlap"] {
            let (partial, full) = partial_and_full(&f, section);
            assert_eq!(partial, full, "{} {section}", f.display());
        }
    }
}

#[test]
fn a_partial_load_writes_no_cache_and_a_cached_one_is_used() {
    let (f, cache) = setup("analyses_partial", "megatron_tp8");
    let args = [
        "report",
        "overlap",
        s(&f),
        "--format",
        "json",
        "--cache-dir",
        s(&cache),
    ];
    let partial = json(&args);
    assert!(
        std::fs::read_dir(&cache).map_or(true, |d| d.count() == 0),
        "a partial profile is never cached"
    );
    // With a model entry (written by a full load), overlap opens it.
    report(&[&f], Some(&cache), &[]);
    assert_eq!(json(&args), partial);
}

/// `rankline index` with `extra` options into `cache`: its one line.
fn index(f: &Path, cache: &Path, extra: &[&str]) -> String {
    let mut args = vec!["index", s(f), "--cache-dir", s(cache)];
    args.extend(extra);
    let o = rankline(&args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn index_stores_the_analyses_so_the_first_timeline_open_is_a_reopen() {
    let (f, cache) = setup("analyses_index", "megatron_tp8");
    let line = index(&f, &cache, &[]);
    assert!(line.contains(": cached in "), "{line}");
    assert!(line.contains("; analyses stored in "), "{line}");
    // The timeline computes nothing: every analysis comes with the first
    // frame, and equals what a fresh computation gives.
    let opened = timeline_load(&f, &cache);
    let stages = stages(&opened);
    assert!(
        !stages.iter().any(|s| s == "matching collectives"),
        "{stages:?}"
    );
    assert!(
        opened.iter().all(|m| !matches!(m, LoadMsg::Analysed(_))),
        "nothing left to analyse"
    );
    let reopened = opened
        .iter()
        .find_map(|m| match m {
            LoadMsg::Done(l) => Some(l.clone()),
            _ => None,
        })
        .unwrap();
    assert!(reopened.complete);
    let (fresh_dir, fresh_cache) = setup("analyses_index_fresh", "megatron_tp8");
    let fresh = timeline_load(&fresh_dir, &fresh_cache);
    let computed = fresh
        .iter()
        .find_map(|m| match m {
            LoadMsg::Analysed(l) => Some(l.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        rankline::analysis::stored::encode(&reopened.analysis).unwrap()
            == rankline::analysis::stored::encode(&computed.analysis).unwrap(),
        "stored by index == computed by the timeline"
    );
    assert!(reopened.index.encode().unwrap() == computed.index.encode().unwrap());
    // Indexed again: nothing to do. With other settings: stored for those.
    assert!(index(&f, &cache, &[]).contains(": already cached in "));
    assert!(index(&f, &cache, &[]).ends_with("; analyses already stored\n"));
    let other = index(&f, &cache, &["--big-skew-ms", "7"]);
    assert!(other.contains("; analyses stored in "), "{other}");
    assert_eq!(stored_entries(&cache).len(), 2);
    // A bad setting is a usage error, before anything is read.
    let o = rankline(&[
        "index",
        s(&f),
        "--cache-dir",
        s(&cache),
        "--big-skew-ms",
        "-1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn the_timeline_says_once_that_a_damaged_model_entry_was_rebuilt() {
    let (f, cache) = setup("timeline_rejected_entry", "megatron_tp8");
    timeline_load(&f, &cache);
    let entry = std::fs::read_dir(&cache)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "rlcache"))
        .expect("a model entry");
    let mut bytes = std::fs::read(&entry).unwrap();
    let at = bytes.len() - 100;
    bytes[at] ^= 0xFF;
    std::fs::write(&entry, bytes).unwrap();
    let notes = |msgs: &[LoadMsg]| -> Vec<String> {
        msgs.iter()
            .filter_map(|m| match m {
                LoadMsg::Note(n) => Some(n.clone()),
                _ => None,
            })
            .collect()
    };
    let said = notes(&timeline_load(&f, &cache));
    let rejected: Vec<&String> = said
        .iter()
        .filter(|n| n.contains("cache entry rejected (") && n.ends_with("; rebuilt"))
        .collect();
    assert_eq!(rejected.len(), 1, "{said:?}");
    // Rebuilt: the next open has nothing to say.
    let again = notes(&timeline_load(&f, &cache));
    assert!(again.is_empty(), "{again:?}");
}

/// `rankline index DIR` of a job stores the job's analyses as well as each
/// file's: the job's first timeline after it matches nothing (a reopen),
/// and its reports equal those of an uncached run. Indexing again (as
/// after per-file `srun … rankline index FILE` tasks) finds them stored.
#[test]
fn index_of_a_job_stores_the_jobs_analyses_too() {
    let d = temp_dir("analyses_index_job");
    let job = d.join("multinode");
    std::fs::create_dir_all(&job).unwrap();
    let files = sqlite_files(&root().join("fixtures/multinode"));
    for f in &files {
        std::fs::copy(f, job.join(f.file_name().unwrap())).unwrap();
    }
    let cache = d.join("cache");
    // Per-file tasks first, as a scheduler runs them: no job line.
    for f in sqlite_files(&job) {
        let line = index(&f, &cache, &[]);
        assert!(!line.contains("job of"), "{line}");
    }
    let line = index(&job, &cache, &[]);
    assert_eq!(line.matches(": already cached in ").count(), 4, "{line}");
    assert!(
        line.lines()
            .last()
            .unwrap()
            .starts_with("job of 4 files: analyses stored in "),
        "{line}"
    );
    let again = index(&job, &cache, &[]);
    assert!(
        again.ends_with("job of 4 files: analyses already stored\n"),
        "{again}"
    );
    // The timeline of the job analyses nothing.
    let dir = CacheDir {
        dir: cache.clone(),
        cap_bytes: rankline::profile::cache::DEFAULT_CAP,
    };
    let sources: Vec<Source> = sqlite_files(&job).into_iter().map(Source::File).collect();
    let mut msgs = Vec::new();
    rankline::tui::data::load_then(
        &sources,
        Some(&dir),
        &Settings::default(),
        &mut |m| msgs.push(m),
        &mut || {},
    )
    .expect("the job opens");
    assert!(
        !stages(&msgs).iter().any(|s| s == "matching collectives"),
        "{:?}",
        stages(&msgs)
    );
    assert!(msgs.iter().all(|m| !matches!(m, LoadMsg::Analysed(_))));
    // Its report is the uncached one.
    let (cached, _) = report(&[&job], Some(&cache), &[]);
    let (uncached, _) = report(&[&job], None, &[]);
    assert_eq!(cached, uncached);
}
