//! `rankline export`: a capture (one file, a job's files or a directory)
//! as a Perfetto / Chrome trace on rankline's aligned clock.

use super::args::{AnalysisArgs, NoCacheArg};
use super::messages::{fail, input_failed, say};
use rankline::analysis::matching::Matching;
use rankline::analysis::tracks::Tracks;
use rankline::analysis::{Window, pipeline, stored};
use rankline::analysis::{critical_path, step_spans};
use rankline::profile::{self, CacheDir, DevId, Profile, Source};
use rankline::report::{self, Section};
use std::path::PathBuf;
use std::process::ExitCode;

/// A trace larger than this is refused unless `--max-events` says more.
const DEFAULT_MAX_EVENTS: usize = 5_000_000;

#[derive(clap::Args)]
pub struct ExportArgs {
    /// nsys SQLite exports or .nsys-rep reports, or directories of them
    #[arg(required = true, value_name = "FILE|DIR")]
    files: Vec<PathBuf>,
    /// The trace to write: Chrome Trace Event Format JSON, gzipped when
    /// the name ends in .gz, any case (Perfetto and chrome://tracing open
    /// both); never one of the inputs (exit 2); a FIFO is written in place
    #[arg(long, value_name = "TRACE.json[.gz]")]
    out: PathBuf,
    /// Only events overlapping this window, in seconds on the reference clock
    #[arg(long, num_args = 2, value_names = ["START_S", "END_S"], allow_negative_numbers = true)]
    window: Option<Vec<f64>>,
    /// Only these ranks' devices (and the CPU processes driving them): 0,4,8-15
    #[arg(long, value_name = "LIST")]
    ranks: Option<String>,
    /// Only these devices (and the CPU processes driving them), as `report --device` names them: 0,node02:3
    #[arg(long, value_name = "LIST")]
    devices: Option<String>,
    /// Only the streams carrying these collective groups (and the CPU threads that launched on them): s20,s24
    #[arg(long, value_name = "KEYS")]
    groups: Option<String>,
    /// Refuse (with one line, before writing) a trace of more events
    #[arg(long, default_value_t = DEFAULT_MAX_EVENTS, value_name = "N")]
    max_events: usize,
    /// Add each step's critical path (`report steps`) as a track of its own
    #[arg(long)]
    critical_path: bool,
    #[command(flatten)]
    analysis: AnalysisArgs,
    #[command(flatten)]
    pub no_cache: NoCacheArg,
}

pub fn run(args: ExportArgs, cache: Option<CacheDir>) -> ExitCode {
    let files = match super::input_files::distinct(args.files.clone()) {
        Ok(f) => f,
        Err(e) => return input_failed(e),
    };
    // A list that cannot be read, or an --out that would destroy a file,
    // is said before the capture is loaded.
    if let Some(Err(why)) = args.ranks.as_deref().map(ranks) {
        return fail(why);
    }
    if let Err(why) = profile::out_file::check(&args.out, &args.files) {
        return fail(format!("--out {why}"));
    }
    let settings = match args.analysis.settings() {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let window = match super::args::window(args.window.as_deref()) {
        Ok(w) => w,
        Err(e) => return fail(e),
    };
    let sources: Vec<Source> = files.iter().cloned().map(Source::File).collect();
    let plan = profile::LoadPlan::cached(cache.as_ref());
    let mut loaded = profile::load(&sources, &plan, &mut |_, _, _| {});
    let p = std::mem::take(&mut loaded.profile);
    for e in &loaded.errors {
        say(e);
    }
    if loaded.errors.len() == files.len() {
        return ExitCode::FAILURE;
    }
    // The whole capture's analyses (stored ones when there are): the
    // window only chooses what is written.
    let slot = loaded.analyses_slot(&stored::settings_key(&settings, &p));
    let sections: &[Section] = match args.critical_path {
        true => &[Section::Skew, Section::Clock, Section::Steps],
        false => &[Section::Skew, Section::Clock],
    };
    let (analysis, _) = stored::read_or_compute(
        slot.as_ref(),
        &p,
        report::stages(sections),
        &mut |m| say(m),
        |_| (),
        |a, ()| (a, false),
        |stages| pipeline::run(&p, &settings, Window::ALL, stages, &mut |_| {}),
        |a| Ok((a, Vec::new())),
    );
    let tracks = match tracks(&args, &p, &analysis.matching) {
        Ok(t) => t,
        Err(why) => return fail(why),
    };
    let out = &args.out;
    let (marks, left_out) = bookmarks_of(&p);
    if let Some(why) = left_out {
        say(why);
    }
    // Every step's path: computed over the whole capture, drawn where
    // it overlaps the window.
    let paths = match args.critical_path {
        true => {
            let a = &analysis;
            let spans = step_spans::step_spans(&p, &a.clock, &a.matching, &a.steps).spans;
            critical_path::critical_paths(&p, &a.classes, &a.clock, &a.matching, &spans)
        }
        false => Vec::new(),
    };
    if args.critical_path && paths.is_empty() {
        say(
            "--critical-path: no step ranges (no top-level NVTX range matches --step-marker), so no path",
        );
    }
    let trace = report::trace::Trace {
        profile: &p,
        analysis: &analysis,
        window,
        tracks: &tracks,
        marks: &marks,
        paths: &paths,
        max_events: args.max_events,
    };
    let written = match report::trace::write_file(out, &args.files, &trace) {
        Ok(n) => n,
        Err(profile::out_file::Error::Refused(why)) => return fail(format!("--out {why}")),
        Err(profile::out_file::Error::Failed(why)) => return input_failed(why),
    };
    println!(
        "{}: {} events ({} kernels, {} copies, {} CUDA calls, {} NVTX ranges, {} OS runtime calls, {} off-CPU spans, {} CPU samples{}), {} launch flows, {} markers (big events, bookmarks); open it in https://ui.perfetto.dev",
        rankline::text_safe::escape_controls(&out.display().to_string()),
        written.events(),
        written.kernels,
        written.copies,
        written.api,
        written.nvtx,
        written.osrt,
        written.off_cpu,
        written.samples,
        match args.critical_path {
            true => format!(", {} critical path segments", written.path),
            false => String::new(),
        },
        written.flows,
        written.markers
    );
    if !loaded.errors.is_empty() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// The tracks `--ranks`, `--devices` and `--groups` keep (all of them
/// when none is given; what all given keep when several are).
fn tracks(args: &ExportArgs, p: &Profile, m: &Matching) -> Result<Tracks, String> {
    let mut keep = Tracks::all(p, m);
    let items = |list: &str| -> Vec<String> {
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    };
    if let Some(list) = &args.ranks {
        let mut by_rank: std::collections::BTreeMap<u32, Vec<DevId>> = Default::default();
        for d in 0..p.devices.len() as DevId {
            if let Some(r) = p.devices[d as usize].rank {
                by_rank.entry(r).or_default().push(d);
            }
        }
        if by_rank.is_empty() {
            return Err(
                "--ranks: the capture records no ranks (name devices with --devices)".into(),
            );
        }
        let mut devices = Vec::new();
        for (item, a, b) in ranks(list)? {
            let found: Vec<DevId> = by_rank.range(a..=b).flat_map(|(_, d)| d.clone()).collect();
            if found.is_empty() {
                return Err(format!("--ranks {item}: no device has that rank"));
            }
            devices.extend(found);
        }
        keep = keep.and(&Tracks::of_devices(p, m, &devices));
    }
    if let Some(list) = &args.devices {
        let devices = super::devices::named(p, "--devices", &items(list))?;
        keep = keep.and(&Tracks::of_devices(p, m, &devices));
    }
    if let Some(list) = &args.groups {
        let mut groups = Vec::new();
        for key in items(list) {
            match m.groups.iter().position(|g| g.key == key) {
                Some(g) => groups.push(g),
                None => {
                    let known: Vec<&str> = m.groups.iter().map(|g| g.key.as_str()).collect();
                    return Err(format!(
                        "--groups {key}: no such collective group (groups: {})",
                        known.join(", ")
                    ));
                }
            }
        }
        keep = keep.and(&Tracks::of_groups(p, m, &groups));
    }
    Ok(keep)
}

/// `0,4,8-15` as (item, first, last) rank ranges.
fn ranks(list: &str) -> Result<Vec<(&str, u32, u32)>, String> {
    let bad = |item: &str| format!("--ranks {item}: not a rank or a range of ranks (0,4,8-15)");
    let mut out = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (a, b) = item.split_once('-').unwrap_or((item, item));
        match (a.trim().parse::<u32>(), b.trim().parse::<u32>()) {
            (Ok(a), Ok(b)) if a <= b => out.push((item, a, b)),
            _ => return Err(bad(item)),
        }
    }
    if out.is_empty() {
        return Err(bad(list));
    }
    Ok(out)
}

/// The timeline's `E`: the same trace as `rankline export`, bounded as its
/// default `--max-events` bounds it.
pub fn exporter() -> rankline::tui::export::Exporter {
    std::sync::Arc::new(|p, a, window, tracks, paths, path| {
        // Said in the line: the terminal is the timeline's.
        let (marks, left_out) = bookmarks_of(p);
        let trace = report::trace::Trace {
            profile: p,
            analysis: a,
            window,
            tracks,
            marks: &marks,
            paths,
            max_events: DEFAULT_MAX_EVENTS,
        };
        let inputs = rankline::profile::bookmarks::inputs(p);
        let n = report::trace::write_file(path, &inputs, &trace).map_err(|e| e.to_string())?;
        let mut line = format!("{} events, {} launch flows", n.events(), n.flows);
        if n.path > 0 {
            line += &format!(", {} critical path segments", n.path);
        }
        if let Some(why) = left_out {
            line += &format!("; {why}");
        }
        Ok(line)
    })
}

/// The capture's bookmarks, as markers; none, and why, when they cannot
/// be read.
fn bookmarks_of(p: &Profile) -> (Vec<rankline::profile::bookmarks::Bookmark>, Option<String>) {
    use rankline::profile::bookmarks;
    match bookmarks::load(&bookmarks::inputs(p)) {
        Ok(kept) => (kept.marks, kept.left_out),
        Err(why) => (
            Vec::new(),
            Some(format!("bookmarks left out of the trace: {why}")),
        ),
    }
}
