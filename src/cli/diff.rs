//! `rankline diff BEFORE AFTER`: both captures loaded and analysed at
//! once, compared, printed; `--fail-on-regression PCT` exits 3 when a
//! watched figure grew by more than PCT %.

use super::args::{AnalysisArgs, NoCacheArg};
use super::csv_out::{self, CsvArgs};
use super::input_files::input_files;
use super::messages::{fail, say};
use rankline::analysis::diff::{self, Gate, Side, diff};
use rankline::analysis::{Analysis, Settings, Window, pipeline, stored};
use rankline::profile::{self, CacheDir, Profile, Source};
use rankline::report::Format;
use rankline::report::diff::{DiffOptions, gate_lines, render, tables};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit code of a failed regression gate.
const REGRESSED: u8 = 3;

#[derive(clap::Args)]
pub struct DiffArgs {
    /// The capture before the change: an nsys SQLite export, or a directory of them
    #[arg(value_name = "BEFORE")]
    before: PathBuf,
    /// The capture after the change: an nsys SQLite export, or a directory of them
    #[arg(value_name = "AFTER")]
    after: PathBuf,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: DiffFormat,
    #[command(flatten)]
    csv: CsvArgs,
    /// Text: print long names and paths whole (default: fit 100 columns)
    #[arg(long)]
    wide: bool,
    /// Exit 3 when the step p50, the exposed NCCL time or a paired group's excess grows by more than PCT %
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    fail_on_regression: Option<f64>,
    /// Also gate on a figure the gate does not watch by default
    #[arg(
        long,
        value_enum,
        value_name = "FIGURE",
        requires = "fail_on_regression"
    )]
    gate: Vec<GateFigure>,
    #[command(flatten)]
    analysis: AnalysisArgs,
    #[command(flatten)]
    pub no_cache: NoCacheArg,
}

/// `diff --gate`.
#[derive(Clone, Copy, PartialEq, clap::ValueEnum)]
enum GateFigure {
    /// Every kernel's duration summed over every device (includes NCCL waiting)
    TotalKernel,
}

/// `diff --format`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum DiffFormat {
    Text,
    Json,
    Csv,
}

/// One side, loaded and analysed.
struct AnalysedSide {
    profile: Profile,
    analysis: Option<Analysis>,
    /// One line each: duplicates dropped, cache trouble, files that failed.
    said: Vec<String>,
    failed: bool,
}

/// A side's export files, duplicates dropped (within the side only, so
/// that a capture compared with itself stays whole on both sides).
fn side_files(path: &Path) -> Result<(Vec<PathBuf>, Vec<String>), String> {
    let (kept, dropped) = input_files(&[path.to_path_buf()])?;
    Ok((kept, dropped.iter().map(ToString::to_string).collect()))
}

fn load(files: &[PathBuf], cache: Option<&CacheDir>, settings: &Settings) -> AnalysedSide {
    let sources: Vec<Source> = files.iter().cloned().map(Source::File).collect();
    let out = profile::load(
        &sources,
        &profile::LoadPlan::cached(cache),
        &mut |_, _, _| {},
    );
    let mut said: Vec<String> = out.cache_off.iter().cloned().collect();
    said.extend(out.errors.iter().map(ToString::to_string));
    said.extend(out.notes.iter().cloned());
    let nothing = out.errors.len() == files.len();
    let slot = out.analyses_slot(&stored::settings_key(settings, &out.profile));
    let analysis = (!nothing).then(|| {
        let (a, not_stored) = stored::read_or_compute(
            slot.as_ref(),
            &out.profile,
            diff::stages(),
            &mut |m| said.push(m),
            |_| (),
            |a, ()| (a, false),
            |stages| pipeline::run(&out.profile, settings, Window::ALL, stages, &mut |_| {}),
            |a| Ok((a, Vec::new())),
        );
        said.extend(not_stored);
        a
    });
    AnalysedSide {
        profile: out.profile,
        analysis,
        said,
        failed: !out.errors.is_empty(),
    }
}

/// The files as the cache names them: both sides naming one file must not
/// write its cache entry from two threads at once.
fn canonical(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = files
        .iter()
        .map(|f| std::fs::canonicalize(f).unwrap_or_else(|_| f.clone()))
        .collect();
    v.sort();
    v
}

/// Both sides: one load when they name the same files, one after the
/// other when they share some, else at once.
fn load_both(
    before: &[PathBuf],
    after: &[PathBuf],
    cache: Option<&CacheDir>,
    settings: &Settings,
) -> (AnalysedSide, Option<AnalysedSide>) {
    let (cb, ca) = (canonical(before), canonical(after));
    if cb == ca {
        return (load(before, cache, settings), None);
    }
    if cb.iter().any(|f| ca.contains(f)) {
        let b = load(before, cache, settings);
        return (b, Some(load(after, cache, settings)));
    }
    let (b, a) = profile::parallel::beside(
        || load(before, cache, settings),
        || load(after, cache, settings),
    );
    (b, Some(a))
}

pub fn run(args: DiffArgs, cache: Option<CacheDir>) -> ExitCode {
    let format = match args.format {
        DiffFormat::Text => Format::Text,
        DiffFormat::Json => Format::Json,
        DiffFormat::Csv => Format::Csv,
    };
    if let Some(why) = args.csv.refused_without_csv(format == Format::Csv) {
        return fail(why);
    }
    let settings = match args.analysis.settings() {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    if let Some(pct) = args.fail_on_regression
        && !(pct.is_finite() && pct >= 0.0)
    {
        return fail("--fail-on-regression needs a percentage >= 0");
    }
    let (before, after) = (side_files(&args.before), side_files(&args.after));
    let (before, after) = match (before, after) {
        (Ok(b), Ok(a)) => (b, a),
        (b, a) => {
            for e in [b.err(), a.err()].into_iter().flatten() {
                say(e);
            }
            return ExitCode::FAILURE;
        }
    };
    for d in before.1.iter().chain(&after.1) {
        say(d);
    }
    let (b, a) = load_both(&before.0, &after.0, cache.as_ref(), &settings);
    for line in b.said.iter().chain(a.iter().flat_map(|a| &a.said)) {
        say(line);
    }
    let a = a.as_ref().unwrap_or(&b);
    let (Some(ba), Some(aa)) = (&b.analysis, &a.analysis) else {
        return ExitCode::FAILURE;
    };
    let d = diff(
        Side {
            profile: &b.profile,
            analysis: ba,
        },
        Side {
            profile: &a.profile,
            analysis: aa,
        },
    );
    let gate = args.fail_on_regression.map(|pct| Gate {
        pct,
        total_kernel: args.gate.contains(&GateFigure::TotalKernel),
    });
    let options = DiffOptions {
        format,
        wide: args.wide,
        gate,
    };
    if format == Format::Csv {
        if let Err(code) = csv_out::write(
            "diff",
            &tables(&d, &options),
            &args.csv,
            &[args.before.clone(), args.after.clone()],
        ) {
            return code;
        }
    } else {
        // A closed pipe (`| head`) is not an error worth a message.
        let _ = std::io::stdout()
            .lock()
            .write_all(render(&d, &options).as_bytes());
    }
    if b.failed || a.failed {
        return ExitCode::FAILURE;
    }
    match gate {
        Some(g) => {
            let regressions = d.regressions(g);
            for line in gate_lines(g.pct, &regressions) {
                say(line);
            }
            if regressions.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(REGRESSED)
            }
        }
        None => ExitCode::SUCCESS,
    }
}
