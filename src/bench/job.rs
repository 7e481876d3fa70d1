//! `rankline bench --job DIR`: the job view of a directory of files, as a
//! user on a login node meets it — from the cache entries (`rankline
//! index DIR` first measures reopens; without it the first run builds
//! them). Each figure comes from a fresh process whose anonymous memory
//! (`RssAnon`: the heap, not the entries mapped from the cache) is read
//! from `/proc/PID/status` every few milliseconds while it runs: the peak
//! is the figure a shared login node pays.

use rankline::analysis::Settings;
use rankline::profile::inputs::expand_inputs;
use rankline::profile::{CacheDir, Source};
use rankline::tui::data::{self, LoadMsg};
use rankline::tui::offscreen::Offscreen;
use rankline::tui::steps_view::StepFigure;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FIRST_FRAME: &str = "#first_frame_s";
const SETTLED: &str = "#settled_s";

/// A field of `/proc/PID/status` in bytes (`RssAnon`, `VmHWM`).
fn status_bytes(pid: &str, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn mib(b: u64) -> String {
    format!("{:.0} MB", b as f64 / 1e6)
}

/// What a child process printed, how long it ran and its peak anonymous
/// memory, sampled every 5 ms.
struct Run {
    stdout: String,
    wall: Duration,
    peak_anon: u64,
}

fn run_sampled(mut c: Command) -> Result<Run, String> {
    let t0 = Instant::now();
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let pid = child.id().to_string();
    let mut peak = 0;
    // Pipes drained by threads: a child blocked on a full pipe would
    // measure the pipe.
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut out, &mut s).ok();
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut err, &mut s).ok();
        s
    });
    let status = loop {
        if let Some(b) = status_bytes(&pid, "RssAnon:") {
            peak = peak.max(b);
        }
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let wall = t0.elapsed();
    let stdout = reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    if !status.success() {
        return Err(stderr.trim().to_string());
    }
    Ok(Run {
        stdout,
        wall,
        peak_anon: peak,
    })
}

fn mark(out: &str, name: &str) -> Option<f64> {
    out.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
}

/// The parent: the timeline phase, then `report skew` twice, then `report
/// steps` (its accounts, critical paths and what-ifs on the stored analyses).
pub fn run(dir: PathBuf, phase: Option<String>, cache: Option<CacheDir>) -> Result<(), String> {
    if phase.as_deref() == Some("job-timeline") {
        return timeline(&dir, cache.as_ref());
    }
    let files = expand_inputs(std::slice::from_ref(&dir))?;
    println!(
        "rankline bench --job {} ({} files)",
        rankline::text_safe::escape_controls(&dir.display().to_string()),
        files.len()
    );
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let cache_args = |c: &mut Command| match &cache {
        Some(cd) => {
            c.arg("--cache-dir").arg(&cd.dir);
        }
        None => {
            c.arg("--no-cache");
        }
    };
    let mut c = Command::new(&exe);
    c.args(["bench", "--job", "--phase", "job-timeline"]);
    cache_args(&mut c);
    c.arg(&dir);
    let t = run_sampled(c)?;
    for line in t.stdout.lines().filter(|l| !l.starts_with('#')) {
        println!("{line}");
    }
    println!(
        "  timeline: first frame {:.2} s, analyses settled {:.2} s, peak anonymous memory {} (whole process {:.2} s)",
        mark(&t.stdout, FIRST_FRAME).unwrap_or(f64::NAN),
        mark(&t.stdout, SETTLED).unwrap_or(f64::NAN),
        mib(t.peak_anon),
        t.wall.as_secs_f64()
    );
    for round in ["first", "again"] {
        let mut c = Command::new(&exe);
        c.args(["report", "skew", "--format", "json"]);
        cache_args(&mut c);
        c.arg(&dir);
        let r = run_sampled(c)?;
        println!(
            "  report skew ({round}): {:.2} s, peak anonymous memory {}",
            r.wall.as_secs_f64(),
            mib(r.peak_anon)
        );
    }
    let mut c = Command::new(&exe);
    c.args(["report", "steps", "--format", "json"]);
    cache_args(&mut c);
    c.arg(&dir);
    let r = run_sampled(c)?;
    println!(
        "  report steps: {:.2} s, peak anonymous memory {}",
        r.wall.as_secs_f64(),
        mib(r.peak_anon)
    );
    Ok(())
}

/// The child: the job's timeline loaded as the TUI loads it and its first
/// frame drawn, then the straggler map of its largest group.
fn timeline(dir: &Path, cache: Option<&CacheDir>) -> Result<(), String> {
    let t0 = Instant::now();
    let files = expand_inputs(&[dir.to_path_buf()])?;
    let sources: Vec<Source> = files.into_iter().map(Source::File).collect();
    let mut first = None;
    let mut settled = None;
    let mut errors = Vec::new();
    let loaded = data::load_then(
        &sources,
        cache,
        &Settings::default(),
        &mut |m| match m {
            LoadMsg::Done(l) => {
                first.get_or_insert(t0.elapsed());
                if l.complete {
                    settled.get_or_insert(t0.elapsed());
                }
            }
            LoadMsg::Analysed(_) => {
                settled.get_or_insert(t0.elapsed());
            }
            LoadMsg::FileError(e) => errors.push(e),
            _ => {}
        },
        &mut || {},
    );
    if let Some(e) = errors.first() {
        return Err(e.clone());
    }
    let loaded = loaded.ok_or("nothing loaded")?;
    let p = &loaded.profile;
    println!(
        "  {} ranks on {} hosts, {} GPU rows, {} collective instances × ranks matched",
        p.devices.len(),
        p.hosts.len(),
        p.gpu.len(),
        loaded
            .analysis
            .matching
            .groups
            .iter()
            .map(|g| (0..g.instances())
                .map(|k| g.members(k).count())
                .sum::<usize>())
            .sum::<usize>()
    );
    println!("{FIRST_FRAME} {}", first.unwrap_or_default().as_secs_f64());
    println!("{SETTLED} {}", settled.unwrap_or_default().as_secs_f64());
    // The first timeline frame drawn (its lanes' tracks gathered), as a
    // user sees it.
    let mut screen = Offscreen::new(loaded.clone(), 200, 60);
    screen.frame();
    if let Some(b) = status_bytes("self", "RssAnon:") {
        println!("  anonymous memory, settled and drawn: {}", mib(b));
    }
    // The largest group's straggler map: a row per rank.
    screen.open_straggler_map();
    screen.frame();
    let ranks = screen.straggler_map_size().map_or(0, |(ranks, _)| ranks);
    for how in ["as it opens", "every host open"] {
        if how == "every host open" {
            screen.expand_straggler_hosts();
        }
        let ms = screen.mean_frame(20).as_secs_f64() * 1e3;
        let rows = screen.straggler_map_size().map_or(0, |(_, rows)| rows);
        println!(
            "  straggler map of {ranks} ranks, {how} ({rows} rows), one 200×60 frame: {ms:.2} ms"
        );
    }
    // The steps view: its figures (off the UI thread in the TUI), then
    // its frame with hosts folded as it opens, and every host open.
    let took = screen.open_steps_view().as_secs_f64();
    println!("  steps view's figures derived (off the UI thread): {took:.2} s");
    for how in [
        "as it opens",
        "every host open",
        "every host open, cells on the critical path",
    ] {
        match how {
            "every host open" => screen.expand_steps_hosts(),
            "every host open, cells on the critical path" => {
                screen.steps_figure(StepFigure::OnPath)
            }
            _ => {}
        }
        let ms = screen.mean_frame(20).as_secs_f64() * 1e3;
        let (ranks, cols) = screen.steps_view_size().unwrap_or_default();
        println!(
            "  steps view of {ranks} ranks, {how} ({cols} columns), one 200×60 frame: {ms:.2} ms (target < 16)"
        );
    }
    Ok(())
}
