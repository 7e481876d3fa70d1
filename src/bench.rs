//! `rankline bench FILE`: the figures behind BENCHMARKS.md — open rate
//! against the `sqlite3` shell scanning the same columns, memory per event,
//! analysis time and frame time at several zooms. Figures are printed, never
//! asserted.

use rankline::analysis::Settings;
use rankline::analysis::Window;
use rankline::analysis::pipeline::{self, Stage, Stages};
use rankline::analysis::stored;
use rankline::profile::cache::AnalysesSlot;
use rankline::profile::{self, CacheDir, Profile};
use rankline::tui::data::Loaded;
use rankline::tui::index::RenderIndex;
use rankline::tui::offscreen::Offscreen;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub mod job;
mod shell;

/// Resident memory of this process, bytes (Linux).
fn rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

/// Every row read, for the bytes-per-row figure: the GPU activity, runtime
/// calls and NVTX events, and [`other_rows`].
fn events(p: &Profile) -> usize {
    p.gpu.len() + p.runtime.len() + p.nvtx.len() + other_rows(p)
}

/// Resident memory per event (a row the model keeps) and per row read:
/// the samples' call-stack rows are read too, and kept as a few frames.
fn memory_line(when: &str, bytes: u64, events: usize, file: &Path) {
    let read = events as u64 + shell::frame_rows(file);
    println!(
        "  resident memory {when}, ready to draw (analyses and render index included): {:.1} MiB = {:.1} bytes per event; {:.1} bytes per row read ({read} rows: the events and {} call-stack rows)",
        bytes as f64 / (1 << 20) as f64,
        bytes as f64 / events.max(1) as f64,
        bytes as f64 / read.max(1) as f64,
        read - events as u64,
    );
}

/// The rows read of the tables only a full read reads: OS runtime calls,
/// CPU samples, scheduling events, CUDA sync and event records.
fn other_rows(p: &Profile) -> usize {
    p.osrt.len() + p.samples.len() + p.sched.len() + p.syncs.len() + p.cuda_events.len()
}

/// Runs the benchmark: the `sqlite3` baseline here, then each measured
/// phase in a fresh process so memory figures start from nothing.
pub fn run(
    file: PathBuf,
    phase: Option<String>,
    rounds: usize,
    cache: Option<CacheDir>,
) -> Result<(), String> {
    match phase.as_deref() {
        Some("open") => return open_only(&file),
        Some("fresh") => return measure(&file, cache.as_ref(), false),
        Some("cached") => return measure(&file, cache.as_ref(), true),
        Some("one-reader") => return one_reader(&file),
        Some(other) => return Err(format!("unknown bench phase {other}")),
        None => {}
    }
    let meta = std::fs::metadata(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    if !meta.is_file() {
        // sqlite3 would block forever opening a FIFO.
        return Err(format!(
            "{}: not a regular file, not an nsys SQLite export",
            file.display()
        ));
    }
    println!(
        "rankline bench {}",
        rankline::text_safe::escape_controls(&file.display().to_string())
    );
    let size = meta.len();
    println!("  file size: {:.1} MiB", size as f64 / (1 << 20) as f64);
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let (base_rows, base_time) = first_open_rounds(&exe, &file, rounds)?;
    let base_rate = base_rows as f64 / base_time.as_secs_f64();
    // A cache of our own, so the first open really is a first open; named
    // so that removing it afterwards never removes anything else.
    let own = format!(".rankline-bench-{}", std::process::id());
    let dir = cache.map_or_else(|| std::env::temp_dir().join(&own), |c| c.dir.join(&own));
    let _ = std::fs::remove_dir_all(&dir);
    let mut opens: Vec<f64> = Vec::new();
    let mut frames: Vec<f64> = Vec::new();
    let mut readies: Vec<f64> = Vec::new();
    let env = [
        ("RANKLINE_BENCH_BASE_RATE", base_rate.to_string()),
        ("RANKLINE_BENCH_BASE_ROWS", base_rows.to_string()),
    ];
    for name in ["one-reader", "fresh", "cached"] {
        for line in run_phase(&exe, &file, name, Some(&dir), &env)? {
            if let Some(s) = mark(&line, OPEN_MARK) {
                opens.push(s);
            } else if let Some(s) = mark(&line, FRAME_MARK) {
                frames.push(s);
            } else if let Some(s) = mark(&line, READY_MARK) {
                readies.push(s);
            } else {
                println!("{line}");
            }
        }
    }
    if let ([first, reopen], [first_frame, reopen_frame]) = (&opens[..], &frames[..]) {
        println!(
            "  reopen / first open, model loaded: {:.3} (target under 0.1)",
            reopen / first
        );
        println!(
            "  reopen / first open, timeline ready to draw (model + render index): {:.3} ({:.3} s vs {:.3} s)",
            reopen_frame / first_frame,
            reopen_frame,
            first_frame
        );
    }
    if let ([first, _], [first_ready, reopen_ready]) = (&opens[..], &readies[..]) {
        println!(
            "  reopen including the cross-rank analyses / first open: {:.3} ({:.3} s vs {:.3} s; target under 0.1)",
            reopen_ready / first,
            reopen_ready,
            first
        );
        println!(
            "  reopen including the cross-rank analyses / first open with them: {:.3} ({:.3} s vs {:.3} s)",
            reopen_ready / first_ready,
            reopen_ready,
            first_ready
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    fresh_reports(&exe, &file, rounds, base_time)?;
    straggler_map_frame();
    Ok(())
}

/// Wall time of `rankline report SECTION --no-cache FILE` (JSON to a
/// pipe that is drained and dropped).
fn report_time(exe: &Path, section: &str, file: &Path) -> Result<f64, String> {
    let t0 = Instant::now();
    let out = Command::new(exe)
        .args(["report", section, "--no-cache", "--format", "json"])
        .arg(file)
        .output()
        .map_err(|e| e.to_string())?;
    let took = t0.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(format!(
            "report {section} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(took)
}

/// A fresh-file `report overlap` and `report summary` against a
/// fresh-file `report all` (no cache: each reads the file), in `rounds`
/// rounds of the three: the figure is the median of the rounds' ratios,
/// as for the first open. The median `report all` is also set against
/// `shell`, the median time of the `sqlite3` shell's scan of the same
/// columns.
fn fresh_reports(exe: &Path, file: &Path, rounds: usize, shell: Duration) -> Result<(), String> {
    let mut overlap = Vec::new();
    let mut summary = Vec::new();
    for _ in 0..rounds {
        let o = report_time(exe, "overlap", file)?;
        let s = report_time(exe, "summary", file)?;
        let a = report_time(exe, "all", file)?;
        overlap.push((o / a, o, a));
        summary.push((s / a, s, a));
    }
    let by_ratio = |x: &(f64, f64, f64), y: &(f64, f64, f64)| x.0.total_cmp(&y.0);
    let (ratio, o, a) = median(&mut overlap, by_ratio);
    println!(
        "  fresh file, no cache: report overlap {o:.3} s, report all {a:.3} s = {ratio:.2} of it (target under 0.5; the median round of {rounds})"
    );
    let (ratio, s, a) = median(&mut summary, by_ratio);
    println!(
        "  fresh file, no cache: report summary {s:.3} s (runtime calls and NVTX counted, not loaded), report all {a:.3} s = {ratio:.2} of it (the median round of {rounds})"
    );
    let mut all: Vec<f64> = overlap.iter().map(|r| r.2).collect();
    let a = median(&mut all, f64::total_cmp);
    println!(
        "  fresh file, no cache: report all {a:.3} s = {:.2}× the sqlite3 shell's scan of the same columns ({}; target under 0.8×; medians of {rounds} rounds)",
        a / shell.as_secs_f64(),
        secs(shell)
    );
    Ok(())
}

/// Ranks of the straggler-map figure: 64 hosts × 8 GPUs.
const MAP_HOSTS: usize = 64;
const MAP_PER_HOST: usize = 8;
const MAP_INSTANCES: usize = 400;

/// One 200×60 frame of the straggler map at 512 ranks (target under
/// 5 ms). The profile is built in memory (`profile::synthetic`): the
/// figure is the drawing, whatever file the bench was given.
fn straggler_map_frame() {
    let p = rankline::profile::synthetic::many_ranks(MAP_HOSTS, MAP_PER_HOST, MAP_INSTANCES);
    let loaded = Arc::new(Loaded::build(p, &Settings::default(), &mut |_| {}));
    let mut screen = Offscreen::new(loaded, 200, 60);
    screen.open_straggler_map();
    let ms = screen.mean_frame(50).as_secs_f64() * 1e3;
    let ranks = screen.straggler_map_size().map_or(0, |(ranks, _)| ranks);
    println!(
        "  straggler map, {ranks} ranks × {MAP_INSTANCES} instances (in memory), one 200×60 frame: {ms:.2} ms (target under 5 ms)"
    );
}

/// How a phase tells the parent its open time, and its time until the
/// timeline can draw (model plus render index).
const OPEN_MARK: &str = "#open_s";
const FRAME_MARK: &str = "#first_frame_s";
/// Time until every analysis is in (the status line has nothing left to say).
const READY_MARK: &str = "#ready_s";

fn env_f64(name: &str) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

/// Where the bench stores the analyses of `file` (as the timeline would).
fn analyses_slot(
    cache: &CacheDir,
    file: &Path,
    p: &Profile,
    s: &Settings,
) -> Result<AnalysesSlot, String> {
    let key = profile::cache::Key::of(file)?;
    Ok(AnalysesSlot::new(
        cache,
        vec![(file.to_path_buf(), key)],
        &stored::settings_key(s, p),
    ))
}

/// The first open's rate against the baseline's, as a line.
fn rate_line(open: Duration) -> String {
    let (base_rate, base_rows) = (
        env_f64("RANKLINE_BENCH_BASE_RATE"),
        env_f64("RANKLINE_BENCH_BASE_ROWS"),
    );
    let rate = base_rows / open.as_secs_f64();
    format!(
        "{} = {:.2} M rows/s = {:.0}% of the sqlite3 rate",
        secs(open),
        rate / 1e6,
        100.0 * rate / base_rate.max(1e-9)
    )
}

/// Where a first open's time went: from each stage's first report to the
/// next stage's (the large tables' stages overlap, so they are one figure).
fn stage_times(t0: Instant, seen: &[(profile::LoadStage, Instant)]) -> String {
    use profile::LoadStage::*;
    let at = |f: &dyn Fn(profile::LoadStage) -> bool| seen.iter().find(|(s, _)| f(*s)).map(|x| x.1);
    let tables = at(&|s| matches!(s, Kernels | Memcpy | Memset | Runtime | Nvtx));
    let linking = at(&|s| s == Linking);
    let (Some(tables), Some(linking)) = (tables, linking) else {
        return "not reported".into();
    };
    let end = Instant::now();
    format!(
        "metadata {}, large tables {}, sorting and linking {}",
        secs(tables - t0),
        secs(linking - tables),
        secs(end - linking)
    )
}

/// The first open against the shell in `rounds` rounds, each the shell
/// then a fresh process opening the file (no cache, all readers): the two
/// runs of a round see the same machine, so the median of the rounds'
/// ratios is steadier than one run of each on a shared VM. Returns the
/// shell's rows and median time, the baseline of the other figures.
fn first_open_rounds(exe: &Path, file: &Path, rounds: usize) -> Result<(u64, Duration), String> {
    let mut shell_times = Vec::new();
    let mut ratios = Vec::new();
    let mut rows = 0;
    for round in 1..=rounds {
        let (n, shell_time) = shell::sqlite3_baseline(file)?;
        rows = n;
        let out = run_phase(exe, file, "open", None, &[])?;
        let open = out
            .iter()
            .find_map(|l| mark(l, OPEN_MARK))
            .ok_or("the open phase printed no time")?;
        let ratio = shell_time.as_secs_f64() / open;
        println!(
            "  round {round}: sqlite3 shell, same columns: {n} rows in {} = {:.2} M rows/s; first open, {} readers: {open:.3} s = {:.0}% of the shell's rate",
            secs(shell_time),
            n as f64 / shell_time.as_secs_f64() / 1e6,
            profile::ReadPlan::default().readers,
            100.0 * ratio
        );
        shell_times.push(shell_time);
        ratios.push(ratio);
    }
    // Sorted by `median`: the rounds' ratios are listed in order.
    let ratio = median(&mut ratios, f64::total_cmp);
    let shell_time = median(&mut shell_times, Duration::cmp);
    println!(
        "  first open, {} readers, median of {rounds} rounds: {:.0}% of the sqlite3 shell's rate (rounds: {})",
        profile::ReadPlan::default().readers,
        100.0 * ratio,
        ratios
            .iter()
            .map(|r| format!("{:.0}%", 100.0 * r))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok((rows, shell_time))
}

/// The middle value of `v` (the upper one of an even count) in `cmp`'s
/// order; `v` is left sorted. `v` is never empty here (rounds ≥ 1).
fn median<T: Copy>(v: &mut [T], cmp: impl Fn(&T, &T) -> std::cmp::Ordering) -> T {
    v.sort_by(cmp);
    v[v.len() / 2]
}

/// A value printed after `m` by a phase.
fn mark(line: &str, m: &str) -> Option<f64> {
    line.strip_prefix(m)
        .and_then(|v| v.trim().parse::<f64>().ok())
}

/// Runs `rankline bench --phase NAME` on `file` and returns its stdout
/// lines.
fn run_phase(
    exe: &Path,
    file: &Path,
    name: &str,
    cache: Option<&Path>,
    env: &[(&str, String)],
) -> Result<Vec<String>, String> {
    let mut c = Command::new(exe);
    c.args(["bench", "--phase", name]);
    if let Some(dir) = cache {
        c.arg("--cache-dir").arg(dir);
    }
    let out = c
        .arg(file)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "phase {name} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect())
}

/// A first open and nothing else, as a fresh process does it.
fn open_only(file: &Path) -> Result<(), String> {
    let took = timed_open(file, None)?;
    println!("{OPEN_MARK} {}", took.as_secs_f64());
    Ok(())
}

/// How long a first open of `file` (no cache) takes, its tables read on
/// `readers` connections (default: every core).
fn timed_open(file: &Path, readers: Option<usize>) -> Result<Duration, String> {
    let t0 = Instant::now();
    let plan = profile::LoadPlan {
        readers,
        ..profile::LoadPlan::default()
    };
    let out = profile::load(
        &profile::files(&[file.to_path_buf()]),
        &plan,
        &mut |_, _, _| {},
    );
    match out.errors.first() {
        Some(e) => Err(e.to_string()),
        None => Ok(t0.elapsed()),
    }
}

/// The first open with the large tables read on one connection (ranges
/// in turn), to show how reading scales with readers.
fn one_reader(file: &Path) -> Result<(), String> {
    let took = timed_open(file, Some(1))?;
    println!("  first open (no cache), 1 reader: {}", rate_line(took));
    Ok(())
}

/// One phase: open (from SQLite, writing the cache and the analyses; or
/// from the cache, analyses included), then memory, analysis and frame
/// times.
fn measure(file: &Path, cache: Option<&CacheDir>, from_cache: bool) -> Result<(), String> {
    let cache = cache.ok_or("bench needs a cache directory")?;
    let settings = Settings::default();
    let rss0 = rss().unwrap_or(0);
    let t0 = Instant::now();
    let mut reopened = None;
    let p = if from_cache {
        // As the timeline reopens: by the loader, from the cache.
        let mut out = profile::load(
            &profile::files(&[file.to_path_buf()]),
            &profile::LoadPlan::cached(Some(cache)),
            &mut |_, _, _| {},
        );
        if !matches!(out.cache_use[..], [profile::CacheUse::Opened(_)]) {
            return Err("no valid cache entry to reopen".into());
        }
        let p = std::mem::take(&mut out.profile);
        reopened = Some(out);
        p
    } else {
        let mut first_seen: Vec<(profile::LoadStage, Instant)> = Vec::new();
        let out = profile::load(
            &profile::files(&[file.to_path_buf()]),
            &profile::LoadPlan::default(),
            &mut |_, stage, _| {
                if first_seen.iter().all(|(s, _)| *s != stage) {
                    first_seen.push((stage, Instant::now()));
                }
            },
        );
        if let Some(e) = out.errors.first() {
            return Err(e.to_string());
        }
        let p = out.profile;
        println!("  first open by stage: {}", stage_times(t0, &first_seen));
        p
    };
    let open = t0.elapsed();
    let n = events(&p);
    println!("{OPEN_MARK} {}", open.as_secs_f64());
    let slot = match &reopened {
        Some(out) => out
            .analyses_slot(&stored::settings_key(&settings, &p))
            .ok_or("no analyses slot")?,
        None => analyses_slot(cache, file, &p, &settings)?,
    };
    if from_cache {
        drop(reopened);
        println!(
            "  reopen from the memory-mapped cache (model): {}",
            secs(open)
        );
        let t1 = Instant::now();
        // As the timeline reopens (`tui::data::load_then`).
        let found = stored::read_then(&slot, &p, &mut |m| println!("  {m}"), |view| {
            RenderIndex::decode(view, &p)
        });
        let (analysis, index) = found.ok_or("no stored analyses to reopen")?;
        let index = index?;
        let loaded = Arc::new(Loaded::from_stored(Arc::new(p), analysis, Some(index)));
        let stored_time = t1.elapsed();
        let ready = open + stored_time;
        println!("{FRAME_MARK} {}", ready.as_secs_f64());
        println!("{READY_MARK} {}", ready.as_secs_f64());
        println!(
            "  reopen including the cross-rank analyses and render index (stored): {} (model {} + analyses {})",
            secs(ready),
            secs(open),
            secs(stored_time)
        );
        let rss1 = rss().unwrap_or(0);
        memory_line("after reopen", rss1.saturating_sub(rss0), n, file);
        return frames(&loaded);
    }
    println!(
        "  first open (no cache), {} readers: {}",
        profile::ReadPlan::default().readers,
        rate_line(open)
    );
    println!(
        "  model: {} GPU rows, {} runtime calls, {} NVTX, {} other rows read (OS runtime, samples, scheduling, CUDA syncs and events) = {n} events",
        p.gpu.len(),
        p.runtime.len(),
        p.nvtx.len(),
        other_rows(&p)
    );
    let t0 = Instant::now();
    let model = p.file_models().next().ok_or("no file loaded")?;
    let entry = profile::cache::write(&cache.dir, file, model)?;
    let size = std::fs::metadata(&entry).map(|m| m.len()).unwrap_or(0);
    println!(
        "  cache written: {} ({:.1} MiB)",
        secs(t0.elapsed()),
        size as f64 / (1 << 20) as f64
    );
    // The pipeline's stages on their own, timed.
    let alone = |stage: Stage| {
        let t0 = Instant::now();
        let a = pipeline::run(
            &p,
            &settings,
            Window::ALL,
            Stages::of(&[stage]),
            &mut |_| {},
        );
        (a, t0.elapsed())
    };
    let (a, matching) = alone(Stage::Skew);
    let instances: usize = a.skews.iter().map(|g| g.instances.len()).sum();
    let groups = a.matching.groups.len();
    // Only what the UI keeps counts towards memory.
    drop(a);
    let (a, overlap_time) = alone(Stage::Overlap);
    let devices = a.overlap.len();
    drop(a);
    let t0 = Instant::now();
    let quick = Loaded::quick(Arc::new(p), &settings);
    let first_frame = t0.elapsed();
    let loaded = Arc::new(Loaded::complete(&quick, &settings, &mut |_| {}));
    drop(quick);
    let ready = t0.elapsed();
    println!(
        "{FRAME_MARK} {}",
        open.as_secs_f64() + first_frame.as_secs_f64()
    );
    println!("{READY_MARK} {}", (open + ready).as_secs_f64());
    let rss1 = rss().unwrap_or(0);
    memory_line("after first open", rss1.saturating_sub(rss0), n, file);
    println!(
        "  matching + skew: {} ({groups} groups, {instances} instances)",
        secs(matching)
    );
    println!(
        "  overlap, all devices: {} ({devices} devices)",
        secs(overlap_time)
    );
    println!("  all analyses + render index: {}", secs(ready));
    let t0 = Instant::now();
    let written = stored::write(&slot, &loaded.analysis, &loaded.index.encode()?)?;
    let size = written
        .and_then(|e| std::fs::metadata(e).ok())
        .map_or(0, |m| m.len());
    println!(
        "  analyses + render index stored: {} ({:.1} MiB)",
        secs(t0.elapsed()),
        size as f64 / (1 << 20) as f64
    );
    Ok(())
}

/// Frame times at three zooms.
fn frames(loaded: &Arc<Loaded>) -> Result<(), String> {
    let (a, b) = loaded.span.unwrap_or((0, 1));
    let mid = (a + b) / 2;
    let g = &loaded.profile.gpu;
    let kernel = (0..g.len()).find(|&i| g.start(i) >= mid).unwrap_or(0);
    let (ks, ke) = (g.start(kernel), g.end(kernel));
    // (label, first ns shown, span shown: none for the whole profile).
    let kernel_span = ((ke - ks) as f64).max(10.0);
    for (label, t0, span) in [
        ("whole profile", a, None),
        ("1 ms window", mid, Some(1e6)),
        ("one kernel", ks, Some(kernel_span)),
    ] {
        let mut screen = Offscreen::new(loaded.clone(), 200, 60);
        match span {
            Some(span) => screen.show_from(t0, span),
            None => screen.show(a, b),
        }
        let t = screen.mean_frame(20);
        println!("  frame 200x60, {label}: {:.2} ms", t.as_secs_f64() * 1e3);
    }
    key_latency(loaded);
    Ok(())
}

/// The keys of each panel's round: zooms, pans and jumps to big events,
/// as a user moves through a capture.
const LATENCY_KEYS: &str = "ww]ad]s-w+]dd";

/// The UI thread's work per key with each panel open: the key's handling
/// (asking for derived work included) and the next 200×60 frame. The
/// derived work itself (a window's overlap, a range's facts) runs off the
/// thread in the timeline and is not counted here. Target: one frame,
/// ≤ 16 ms.
fn key_latency(loaded: &Arc<Loaded>) {
    use rankline::tui::panel::PanelKind;
    let (a, b) = loaded.span.unwrap_or((0, 1));
    // The middle tenth in view, and marked as the range panel's range.
    let (lo, hi) = (a + (b - a) / 20 * 9, a + (b - a) / 20 * 11);
    for kind in PanelKind::ALL {
        let mut screen = Offscreen::new(loaded.clone(), 200, 60);
        let mut took = screen.key_latency(kind, lo, hi, LATENCY_KEYS);
        let worst = took.iter().max().copied().unwrap_or_default();
        let mid = median(&mut took, Duration::cmp);
        println!(
            "  key latency, panel {kind:?} open, 200x60 (UI thread: key and frame): median {:.2} ms, worst {:.2} ms over {} keys (target under 16 ms)",
            mid.as_secs_f64() * 1e3,
            worst.as_secs_f64() * 1e3,
            LATENCY_KEYS.len()
        );
    }
}
