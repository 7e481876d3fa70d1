//! `rankline export`: a capture (one file, a job's files or a directory)
//! as a Perfetto / Chrome trace on rankline's aligned clock.

use super::args::{AnalysisArgs, NoCacheArg};
use super::messages::{fail, input_failed, say};
use rankline::analysis::{Window, pipeline, stored};
use rankline::profile::{self, CacheDir, Source};
use rankline::report::{self, Section};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ExportArgs {
    /// nsys SQLite exports or .nsys-rep reports, or directories of them
    #[arg(required = true, value_name = "FILE|DIR")]
    files: Vec<PathBuf>,
    /// The trace to write: Chrome Trace Event Format JSON, gzipped when
    /// the name ends in .gz (Perfetto and chrome://tracing open both)
    #[arg(long, value_name = "TRACE.json[.gz]")]
    out: PathBuf,
    /// Only events overlapping this window, in seconds on the reference clock
    #[arg(long, num_args = 2, value_names = ["START_S", "END_S"], allow_negative_numbers = true)]
    window: Option<Vec<f64>>,
    /// Refuse (with one line, before writing) a trace of more events
    #[arg(long, default_value_t = 5_000_000, value_name = "N")]
    max_events: usize,
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
    let (analysis, _) = stored::read_or_compute(
        slot.as_ref(),
        &p,
        report::stages(&[Section::Skew, Section::Clock]),
        &mut |m| say(m),
        |_| (),
        |a, ()| (a, false),
        |stages| pipeline::run(&p, &settings, Window::ALL, stages, &mut |_| {}),
        |a| Ok((a, Vec::new())),
    );
    let out = &args.out;
    let file = match std::fs::File::create(out) {
        Ok(f) => f,
        Err(e) => return input_failed(format!("{}: {e}", out.display())),
    };
    let mut buffered = std::io::BufWriter::new(file);
    let gz = out.extension().is_some_and(|x| x == "gz");
    let done = if gz {
        let mut z = flate2::write::GzEncoder::new(&mut buffered, flate2::Compression::fast());
        report::trace::write(&mut z, &p, &analysis, window, args.max_events)
            .and_then(|n| z.finish().map(|_| n).map_err(|e| e.to_string()))
    } else {
        report::trace::write(&mut buffered, &p, &analysis, window, args.max_events)
    }
    .and_then(|n| buffered.flush().map(|_| n).map_err(|e| e.to_string()));
    let written = match done {
        Ok(n) => n,
        Err(why) => {
            drop(buffered);
            let _ = std::fs::remove_file(out);
            return input_failed(format!("{}: {why}", out.display()));
        }
    };
    println!(
        "{}: {} events ({} kernels, {} copies, {} CUDA calls, {} NVTX ranges, {} OS runtime calls), {} launch flows, {} big-event markers; open it in https://ui.perfetto.dev",
        rankline::text_safe::escape_controls(&out.display().to_string()),
        written.events(),
        written.kernels,
        written.copies,
        written.api,
        written.nvtx,
        written.osrt,
        written.flows,
        written.markers
    );
    if !loaded.errors.is_empty() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
