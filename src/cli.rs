//! The command line: `rankline report SECTION FILE...`, `rankline diff
//! BEFORE AFTER`, `rankline index`, `rankline bench`, `rankline
//! completions`/`man` and the timeline for
//! `rankline FILE...`.
//!
//! Exit codes (the README lists them): 0 success; 1 an input could not be
//! read or analysed, also when other inputs succeeded; 2 usage error (a bad
//! keymap file included: it is configuration, not input); 3 `diff
//! --fail-on-regression`: a watched figure grew too much, or `report
//! --fail-on-behind`: ranks are behind in a hang; 128+N ended by
//! signal N.

mod args;
mod csv_out;
mod devices;
mod diff;
mod export;
mod index_analyses;
mod input_files;
mod messages;

use args::{AnalysisArgs, NoCacheArg};
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use input_files::{distinct, input_files};
use messages::{fail, input_failed, say};
use rankline::analysis::Settings;
use rankline::analysis::Window;
use rankline::analysis::pipeline;
use rankline::analysis::stored;
use rankline::profile::{self, CacheDir, CacheUse, DevId, LoadStage, Profile, Source};
use rankline::report::{self, Format, Options, Section};
use rankline::text_safe::escape_controls;
use rankline::tui::keymap::Keymap;
use rankline::tui::run;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// `rankline --version`: the version and the nsys exports it is tested on
/// (the real exports of tests/real_profiles.rs, which checks this line).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "\ntested on nsys 2022.1 to 2026.2 SQLite exports (export schema 2.9.1 to 3.25.0)"
);

#[derive(Parser)]
#[command(
    name = "rankline",
    version = VERSION,
    about = "Explore Nsight Systems SQLite exports of multi-GPU jobs"
)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// nsys SQLite exports or .nsys-rep reports, or directories of them, to open in the timeline (none: the embedded demo)
    #[arg(value_name = "FILE|DIR")]
    files: Vec<PathBuf>,
    /// Also load this capture (an export or a directory of them): panel 6 shows the changes, `B` switches to it
    #[arg(long, value_name = "FILE|DIR")]
    baseline: Option<PathBuf>,
    /// Open with this collective instance selected (GROUP:INSTANCE, as in `report skew`)
    #[arg(long, value_name = "GROUP:INSTANCE")]
    goto: Option<String>,
    /// Keymap file overriding single bindings (default: $XDG_CONFIG_HOME/rankline/keymap.toml)
    #[arg(long, value_name = "FILE")]
    keymap: Option<PathBuf>,
    /// Leave the mouse to the terminal (text selection); `m` toggles it in the timeline
    #[arg(long)]
    no_mouse: bool,
    #[command(flatten)]
    cache: CacheArgs,
    #[command(flatten)]
    no_cache: NoCacheArg,
    #[command(flatten)]
    analysis: AnalysisArgs,
    #[command(flatten)]
    nsys: NsysArgs,
}

/// How `.nsys-rep` reports are exported.
#[derive(Args, Clone)]
struct NsysArgs {
    /// Stop an nsys export of a report that has run this many seconds
    #[arg(long, value_name = "SECONDS", global = true, default_value_t = profile::nsys_export::DEFAULT_TIMEOUT_S, value_parser = clap::value_parser!(u64).range(1..))]
    nsys_timeout: u64,
}

/// Where the columnar cache lives (used by the timeline, `report` and `index`).
#[derive(Args, Clone)]
struct CacheArgs {
    /// Cache directory (default: $XDG_CACHE_HOME/rankline, else ~/.cache/rankline)
    #[arg(long, value_name = "DIR", global = true)]
    cache_dir: Option<PathBuf>,
    /// Evict the oldest cache entries above this size
    #[arg(long, value_name = "GB", default_value_t = 20.0, global = true, value_parser = gigabytes)]
    cache_cap_gb: f64,
}

/// `--cache-cap-gb`: a size, so a number ≥ 0 (`-1` or `NaN` read as 0 would
/// evict every idle entry without a word).
fn gigabytes(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err("needs a number of gigabytes >= 0".into()),
    }
}

impl CacheArgs {
    fn dir(&self, no_cache: NoCacheArg) -> Option<CacheDir> {
        (!no_cache.no_cache).then(|| self.used())
    }

    /// The cache directory, used whatever `--no-cache` says.
    fn used(&self) -> CacheDir {
        // No directory at all (no $HOME) is still a cache that was asked
        // for: an empty path, which the cache refuses with the reason.
        let dir = self
            .cache_dir
            .clone()
            .or_else(CacheDir::default_dir)
            .unwrap_or_default();
        CacheDir {
            dir,
            cap_bytes: (self.cache_cap_gb * 1e9) as u64,
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Print an analysis section as text or JSON, without the UI
    Report(ReportArgs),
    /// Compare two captures (before and after a change); optionally fail on a regression
    Diff(diff::DiffArgs),
    /// Write a Perfetto / Chrome trace (JSON, .gz) of a capture on the aligned clock
    Export(export::ExportArgs),
    /// Build the columnar caches of FILEs without opening the UI (one line per file)
    Index {
        /// nsys SQLite exports or .nsys-rep reports (exported with nsys), or directories of them
        #[arg(required = true, value_name = "FILE|DIR")]
        files: Vec<PathBuf>,
        /// The analyses are stored for these settings: the timeline opened
        /// with the same ones reads them back
        #[command(flatten)]
        analysis: AnalysisArgs,
    },
    /// Measure open, memory, analysis and drawing on a file (prints figures)
    Bench {
        /// An nsys SQLite export (with --job: a directory of a job's files)
        file: PathBuf,
        /// Measure the job view of a directory of files from their cache
        /// entries: first frame, analyses settled, anonymous memory, the
        /// straggler map's frame, `report skew` (run `rankline index DIR`
        /// first to measure reopens)
        #[arg(long)]
        job: bool,
        /// Internal: run one measured phase in this process
        #[arg(long, hide = true, value_parser = ["open", "fresh", "one-reader", "cached", "job-timeline"])]
        phase: Option<String>,
        /// Rounds of the sqlite3 shell against a first open, alternated
        /// (the median is the figure)
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=50))]
        rounds: u16,
        #[command(flatten)]
        no_cache: NoCacheArg,
    },
    /// Print a shell completion script (a capture named `completions` opens as ./completions)
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page, roff (a capture named `man` opens as ./man)
    Man,
}

#[derive(Clone, Copy, ValueEnum)]
enum SectionArg {
    Summary,
    Nccl,
    Overlap,
    Skew,
    Launch,
    Anomalies,
    Stragglers,
    Clock,
    Behind,
    Why,
    /// nsys-style summary tables (--of kernels|nvtx|api|osrt|copies, --by name|device|stream)
    Stats,
    /// The places bookmarked in the timeline (M) for this capture
    Bookmarks,
    /// Each thread's NVTX push/pop ranges as a tree, with their kernels and GPU time (--thread T, --depth N)
    NvtxTree,
    /// GPU metric samples per device (nsys --gpu-metrics-devices): means, ranges, sampling interval, clocks below peers'
    Metrics,
    /// Where each training step's time went on each rank: compute, overlapped and exposed NCCL (waiting, transfer), copies, idle by cause (--warmup-steps N)
    Steps,
    All,
}

#[derive(Clone, Copy, ValueEnum)]
enum StatsOfArg {
    Kernels,
    Nvtx,
    Api,
    Osrt,
    Copies,
}

#[derive(Clone, Copy, ValueEnum)]
enum StatsByArg {
    Name,
    Device,
    Stream,
}

#[derive(Clone, Copy, ValueEnum)]
enum NamesArg {
    Short,
    Demangled,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Text,
    Json,
    /// stragglers and stats only
    Csv,
}

#[derive(Args)]
struct ReportArgs {
    /// Which section to print
    #[arg(value_enum)]
    section: SectionArg,
    /// nsys SQLite exports or .nsys-rep reports, or directories of them (several files load into one model)
    #[arg(required = true, value_name = "FILE|DIR")]
    files: Vec<PathBuf>,
    /// Only events inside this window, in seconds on the reference clock (the first file's capture clock; one file: its own)
    #[arg(
        long,
        num_args = 2,
        value_names = ["START_S", "END_S"],
        allow_negative_numbers = true,
        visible_alias = "trim"
    )]
    window: Option<Vec<f64>>,
    /// Print only this device (`3` or `host:3`); repeatable
    #[arg(long = "device", value_name = "D")]
    devices: Vec<String>,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
    #[command(flatten)]
    csv: csv_out::CsvArgs,
    #[command(flatten)]
    analysis: AnalysisArgs,
    #[command(flatten)]
    no_cache: NoCacheArg,
    /// Text: print long names and paths whole (default: fit 100 columns)
    #[arg(long)]
    wide: bool,
    /// skew: list every instance of each group (JSON: `instance_list`)
    #[arg(long)]
    instances: bool,
    /// behind: exit 3 when ranks are behind in a hang (for watchdog scripts)
    #[arg(long)]
    fail_on_behind: bool,
    /// stats: which events the table is of
    #[arg(long, value_enum, default_value = "kernels")]
    of: StatsOfArg,
    /// stats: a row per name, or per device (or stream) and name (GPU events)
    #[arg(long, value_enum, default_value = "name")]
    by: StatsByArg,
    /// stats: count kernels under their demangled names (as nsys stats) or short ones
    #[arg(long, value_enum, default_value = "demangled")]
    names: NamesArg,
    /// nvtx-tree: one thread (T4101 or 4101)
    #[arg(long, value_name = "T")]
    thread: Option<String>,
    /// nvtx-tree: levels of ranges to show
    #[arg(long, value_name = "N")]
    depth: Option<usize>,
    /// steps: the first N steps are warm-up, left out of the per-rank sums
    #[arg(long, value_name = "N", default_value_t = rankline::analysis::step_overview::WARMUP_STEPS)]
    warmup_steps: usize,
}

/// Runs the command line; returns the process exit code.
pub fn run() -> ExitCode {
    let cli = match Cli::try_parse()
        .inspect(|c| profile::nsys_export::set_nsys_timeout(c.nsys.nsys_timeout))
    {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                e.exit();
            }
            // One line, like every other error.
            let text = e.to_string();
            let said: Vec<&str> = text
                .lines()
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            let said = said.join(" ");
            let said = said.strip_prefix("error: ").unwrap_or(&said);
            return fail(format!("{said} (see rankline --help)"));
        }
    };
    match cli.command {
        Some(Command::Report(args)) => {
            let cache = cli.cache.dir(args.no_cache);
            report(args, cache)
        }
        Some(Command::Diff(args)) => {
            let cache = cli.cache.dir(args.no_cache);
            diff::run(args, cache)
        }
        Some(Command::Export(args)) => {
            let cache = cli.cache.dir(args.no_cache);
            export::run(args, cache)
        }
        Some(Command::Index { files, analysis }) => match (analysis.settings(), distinct(files)) {
            (Err(e), _) => fail(e),
            (_, Err(e)) => input_failed(e),
            (Ok(settings), Ok(files)) => {
                index(files, cli.cache.used(), cli.cache.cache_cap_gb, &settings)
            }
        },
        Some(Command::Bench {
            file,
            job,
            phase,
            rounds,
            no_cache,
        }) => {
            // Whatever goes wrong, it is the measured file that could not
            // be read or analysed.
            let cache = cli.cache.dir(no_cache);
            let done = if job {
                crate::bench::job::run(file, phase, cache)
            } else {
                crate::bench::run(file, phase, rounds.into(), cache)
            };
            match done {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => input_failed(e),
            }
        }
        Some(Command::Completions { shell }) => {
            crate::shell_files::completions(shell, Cli::command())
        }
        Some(Command::Man) => crate::shell_files::man(Cli::command()),
        None => {
            let settings = match cli.analysis.settings() {
                Ok(s) => s,
                Err(e) => return fail(e),
            };
            let cache = cli.cache.dir(cli.no_cache);
            timeline(
                cli.files,
                cli.baseline,
                cli.goto,
                cli.keymap,
                cache,
                settings,
                !cli.no_mouse,
            )
        }
    }
}

/// A progress callback that says on stderr when nsys starts exporting
/// one of `files` (stdout stays the report).
fn say_exports(files: &[PathBuf]) -> impl FnMut(usize, LoadStage, usize) + '_ {
    |i, stage, _| {
        if stage == LoadStage::Exporting
            && let Some(f) = files.get(i)
        {
            say(format!("{}: exporting to SQLite with nsys", f.display()));
        }
    }
}

fn index(files: Vec<PathBuf>, cache: CacheDir, cap_gb: f64, settings: &Settings) -> ExitCode {
    let mut failed = false;
    // Files are indexed at once, one per core; lines come out in file order.
    let done = profile::parallel::each_on(
        files.len(),
        profile::parallel::cores(),
        &mut |_, _, _| {},
        |i, _| {
            let t0 = std::time::Instant::now();
            let source = Source::File(files[i].clone());
            let one = std::slice::from_ref(&files[i]);
            let plan = profile::LoadPlan::cached(Some(&cache));
            let mut out = profile::load(&[source], &plan, &mut say_exports(one));
            // Only the figures are kept: 64 profiles at once would not fit.
            let p = &out.profile;
            let rows = (p.gpu.len(), p.runtime.len(), p.nvtx.len());
            let exported = !out.exported.is_empty();
            let took = t0.elapsed();
            let analyses = index_analyses::store(&mut out, settings);
            (
                out.errors,
                out.cache_use,
                (out.cache_off, out.notes),
                rows,
                took,
                exported,
                analyses,
            )
        },
    );
    let job = files.clone();
    // Every entry this run found or wrote: what the job needs in the cache.
    let mut entries: Vec<PathBuf> = Vec::new();
    for (f, (errors, cache_use, (cache_off, notes), rows, took, exported, analyses)) in
        files.into_iter().zip(done)
    {
        if let Some(e) = errors.first() {
            failed = true;
            say(e);
            continue;
        }
        // An entry rejected and rebuilt; a file that changed while read.
        for note in &notes {
            say(note);
        }
        let (how, entry) = match (cache_use.first(), &cache_off) {
            (Some(CacheUse::Opened(entry)), _) => ("already cached", entry),
            (Some(CacheUse::Written(entry)), _) if exported => {
                ("exported with nsys, cached", entry)
            }
            (Some(CacheUse::Written(entry)), _) => ("cached", entry),
            (None, Some(why)) => {
                failed = true;
                say(why);
                continue;
            }
            (None, None) => {
                failed = true;
                if notes.is_empty() {
                    say(format!("{}: not cached", f.display()));
                }
                continue;
            }
        };
        entries.push(entry.clone());
        if let Ok(Some(stored)) = &analyses {
            entries.push(stored.path().to_path_buf());
        }
        let analyses = match analyses {
            Ok(Some(index_analyses::Stored::Already(_))) => "; analyses already stored".to_string(),
            Ok(Some(index_analyses::Stored::Written(t, _))) => {
                format!("; analyses stored in {:.2} s", t.as_secs_f64())
            }
            Ok(None) => String::new(),
            Err(why) => {
                failed = true;
                say(format!("{why}; analyses not stored"));
                String::new()
            }
        };
        println!(
            "{}: {how} in {:.2} s ({} GPU rows, {} runtime calls, {} NVTX) -> {}{analyses}",
            escape_controls(&f.display().to_string()),
            took.as_secs_f64(),
            rows.0,
            rows.1,
            rows.2,
            escape_controls(&entry.display().to_string())
        );
    }
    // The job's own analyses (matching, clocks, skew across every file),
    // so that the first timeline or report of the job after `index` is a
    // reopen: every file is cached now, so this load reads entries only.
    if job.len() > 1 && !failed {
        match index_analyses::store_job(&job, &cache, settings) {
            Ok((line, entry)) => {
                println!("{line}");
                entries.push(entry);
            }
            Err(why) => {
                failed = true;
                say(why);
            }
        }
    }
    if let Some(line) = over_cap(&cache, cap_gb, &entries) {
        say(line);
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// When the cache is over its cap after an index: how much the indexed
/// files' entries need (they are kept while in use, an hour; after that
/// the next writer's eviction may take them). The cap is said as
/// `--cache-cap-gb` gave it (`0.001`, not `0.00`), the sizes with as many
/// decimals.
fn over_cap(cache: &CacheDir, cap_gb: f64, entries: &[PathBuf]) -> Option<String> {
    let total = profile::cache::counted_bytes(&cache.dir);
    if total <= cache.cap_bytes {
        return None;
    }
    let ours: u64 = entries
        .iter()
        .filter_map(|e| std::fs::metadata(e).ok())
        .map(|m| m.len())
        .sum();
    let gb = |b: u64| b as f64 / 1e9;
    let cap = cap_gb.to_string();
    let places = cap.split_once('.').map_or(0, |(_, f)| f.len()).max(2);
    Some(format!(
        "{}: the cache holds {:.places$} GB, over its cap of {cap} GB; these files' entries take {:.places$} GB and are kept for an hour after use, then older entries go first: --cache-cap-gb {:.0} or more keeps this job",
        escape_controls(&cache.dir.display().to_string()),
        gb(total),
        gb(ours),
        gb(ours).ceil().max(1.0)
    ))
}

fn timeline(
    files: Vec<PathBuf>,
    baseline: Option<PathBuf>,
    goto: Option<String>,
    keymap: Option<PathBuf>,
    cache: Option<CacheDir>,
    settings: Settings,
    mouse: bool,
) -> ExitCode {
    let keymap = match Keymap::load(keymap.as_deref()) {
        Ok(k) => k,
        Err(e) => return fail(e),
    };
    if files.is_empty() && baseline.is_some() {
        return fail(
            "--baseline BEFORE needs the capture to compare: rankline AFTER... --baseline BEFORE",
        );
    }
    if !std::io::stdout().is_terminal() {
        return fail(
            "the timeline needs a terminal on stdout; for text or JSON use `rankline report all FILE...`",
        );
    }
    let (files, mut notes) = match input_files(&files) {
        Ok(f) => f,
        Err(e) => return input_failed(e),
    };
    let demo = files.is_empty();
    // The baseline is one more input set, read by the same rules.
    let (baseline, baseline_notes) = match baseline.map(|b| input_files(&[b])).transpose() {
        Ok(b) => b.unwrap_or_default(),
        Err(e) => return input_failed(e),
    };
    notes.extend(baseline_notes);
    let sources = if demo {
        vec![Source::Embedded {
            name: run::DEMO_NAME,
            bytes: run::DEMO,
        }]
    } else {
        files.into_iter().map(Source::File).collect()
    };
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let opts = run::Options {
        sources,
        keymap,
        goto,
        settings,
        no_color,
        demo,
        cache,
        baseline: baseline.into_iter().map(Source::File).collect(),
        notes: notes.clone(),
        mouse,
        exporter: Some(export::exporter()),
    };
    // Printed once the terminal is restored, where they stay readable.
    let outcome = run::run(opts);
    // An export still running when the timeline ended is abandoned.
    profile::nsys_export::remove_scratch();
    for n in &notes {
        say(n);
    }
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => return input_failed(e),
    };
    for e in &outcome.file_errors {
        say(e);
    }
    match outcome.ending {
        run::Ending::Signal(n) => ExitCode::from(128u8.saturating_add(n.clamp(0, 127) as u8)),
        run::Ending::NothingOpened => ExitCode::FAILURE,
        run::Ending::Quit if outcome.file_errors.is_empty() => ExitCode::SUCCESS,
        run::Ending::Quit => ExitCode::FAILURE,
    }
}

fn report(args: ReportArgs, cache: Option<CacheDir>) -> ExitCode {
    let sections: Vec<Section> = match args.section {
        SectionArg::Summary => vec![Section::Summary],
        SectionArg::Nccl => vec![Section::Nccl],
        SectionArg::Overlap => vec![Section::Overlap],
        SectionArg::Skew => vec![Section::Skew],
        SectionArg::Launch => vec![Section::Launch],
        SectionArg::Anomalies => vec![Section::Anomalies],
        SectionArg::Stragglers => vec![Section::Stragglers],
        SectionArg::Clock => vec![Section::Clock],
        SectionArg::Behind => vec![Section::Behind],
        SectionArg::Why => vec![Section::Why],
        SectionArg::Stats => vec![Section::Stats],
        SectionArg::Bookmarks => vec![Section::Bookmarks],
        SectionArg::NvtxTree => vec![Section::NvtxTree],
        SectionArg::Metrics => vec![Section::Metrics],
        SectionArg::Steps => vec![Section::Steps],
        SectionArg::All => Section::ALL.into_iter().filter(|s| s.in_all()).collect(),
    };
    let csv = matches!(args.format, FormatArg::Csv);
    if let Some(why) = args.csv.refused_without_csv(csv) {
        return fail(why);
    }
    use rankline::analysis::name_stats::{StatsBy, StatsOf};
    let stats_of = match args.of {
        StatsOfArg::Kernels => StatsOf::Kernels,
        StatsOfArg::Nvtx => StatsOf::Nvtx,
        StatsOfArg::Api => StatsOf::Api,
        StatsOfArg::Osrt => StatsOf::Osrt,
        StatsOfArg::Copies => StatsOf::Copies,
    };
    let stats_by = match args.by {
        StatsByArg::Name => StatsBy::Name,
        StatsByArg::Device => StatsBy::Device,
        StatsByArg::Stream => StatsBy::Stream,
    };
    if let Some(why) = rankline::analysis::name_stats::by_refused(stats_of, stats_by) {
        return fail(why);
    }
    let settings = match args.analysis.settings() {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let window = match args::window(args.window.as_deref()) {
        Ok(w) => w,
        Err(e) => return fail(e),
    };
    let given = args.files.clone();
    let files = match distinct(args.files) {
        Ok(f) => f,
        Err(e) => return input_failed(e),
    };
    let sources: Vec<Source> = files.iter().cloned().map(Source::File).collect();
    // `nccl` and `overlap` read no runtime calls or NVTX ranges, `summary`
    // only their counts: without a cache entry, those tables are not read
    // (and nothing is cached).
    let need = report::need(&sections, window);
    let plan = profile::LoadPlan {
        need,
        ..profile::LoadPlan::cached(cache.as_ref())
    };
    let mut loaded = profile::load(&sources, &plan, &mut say_exports(&files));
    let profile = std::mem::take(&mut loaded.profile);
    let errors = std::mem::take(&mut loaded.errors);
    if let Some(why) = &loaded.cache_off {
        say(why);
    }
    for note in &loaded.notes {
        say(note);
    }
    for e in &errors {
        say(e);
    }
    if errors.len() == files.len() {
        return ExitCode::FAILURE;
    }
    let devices = match select_devices(&profile, &args.devices) {
        Ok(d) => d,
        Err(msg) => return fail(msg),
    };
    let options = Options {
        settings,
        window,
        devices,
        format: match args.format {
            FormatArg::Text => Format::Text,
            FormatArg::Json => Format::Json,
            FormatArg::Csv => Format::Csv,
        },
        wide: args.wide,
        instances: args.instances,
        stats_of,
        stats_by,
        kernel_names: match args.names {
            NamesArg::Short => profile::names::KernelNames::Short,
            NamesArg::Demangled => profile::names::KernelNames::Demangled,
        },
        nvtx_thread: args.thread.clone(),
        nvtx_depth: args.depth,
        warmup_steps: args.warmup_steps,
    };
    // Whole-capture analyses come from the cache when stored there; when
    // not, they are all computed and stored (the next report or timeline
    // reads them back). In a window, only what the sections show.
    let slot = (window == Window::ALL)
        .then(|| loaded.analyses_slot(&stored::settings_key(&options.settings, &profile)))
        .flatten();
    let (analysis, not_stored) = stored::read_or_compute(
        slot.as_ref(),
        &profile,
        report::stages(&sections),
        &mut |m| say(m),
        |_| (),
        |a, ()| (a, false),
        |stages| pipeline::run(&profile, &options.settings, window, stages, &mut |_| {}),
        |a| Ok((a, Vec::new())),
    );
    if let Some(why) = not_stored {
        say(why);
    }
    if csv {
        let tables = report::tables_with(&profile, &sections, &options, &analysis);
        let what = format!(
            "report {}",
            args.section
                .to_possible_value()
                .map_or_else(String::new, |v| v.get_name().to_string())
        );
        if let Err(code) = csv_out::write(&what, &tables, &args.csv, &given) {
            return code;
        }
    } else {
        let out = report::render_with(&profile, &sections, &options, &analysis);
        // A closed pipe (`| head`) is not an error worth a message.
        let _ = std::io::stdout().lock().write_all(out.as_bytes());
    }
    if args.fail_on_behind && report::any_behind(&profile, &analysis) {
        return ExitCode::from(3);
    }
    if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn select_devices(p: &Profile, labels: &[String]) -> Result<Option<Vec<DevId>>, String> {
    if labels.is_empty() {
        return Ok(None);
    }
    devices::named(p, "--device", labels).map(Some)
}
