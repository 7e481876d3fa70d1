//! Running the user's nsys: which one (`$NSYS`, else `nsys` on PATH), the
//! exact export command line, and what it said.

use super::super::open::LoadError;
use crate::profile::scratch;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Whether nsys's own output is copied to stderr (the command line's
/// `report` and `index`; the timeline owns the terminal, so there it is
/// only kept for an error message).
static ECHO: AtomicBool = AtomicBool::new(false);

/// Copies nsys's output to stderr from now on.
pub fn echo_nsys_output(on: bool) {
    ECHO.store(on, Ordering::Relaxed);
}

/// How long one export may run (`--nsys-timeout`), in seconds.
static TIMEOUT_S: AtomicU64 = AtomicU64::new(DEFAULT_TIMEOUT_S);

/// Generous: a report of a long run exports in tens of minutes.
pub const DEFAULT_TIMEOUT_S: u64 = 4 * 3600;

/// Bounds each export from now on.
pub fn set_nsys_timeout(seconds: u64) {
    TIMEOUT_S.store(seconds, Ordering::Relaxed);
}

/// nsys's lines copied to stderr after a successful export, at most: its
/// progress can run to millions.
const ECHOED_LINES: usize = 4;

/// Where nsys is.
enum Nsys {
    /// `$NSYS`, as given.
    Given(PathBuf),
    /// Found on PATH.
    OnPath(PathBuf),
}

impl Nsys {
    fn find() -> Option<Nsys> {
        if let Some(given) = std::env::var_os("NSYS").filter(|v| !v.is_empty()) {
            return Some(Nsys::Given(PathBuf::from(given)));
        }
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .filter(|d| !d.as_os_str().is_empty())
            .map(|d| d.join("nsys"))
            .find(|p| is_executable(p))
            .map(Nsys::OnPath)
    }

    fn path(&self) -> &Path {
        match self {
            Nsys::Given(p) | Nsys::OnPath(p) => p,
        }
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The line said when there is no nsys to run.
pub fn no_nsys(report: &Path) -> LoadError {
    let file = report.display().to_string();
    LoadError::sentence(
        report,
        format!(
            "is an nsys report; rankline needs nsys on PATH (or NSYS=/path/to/nsys) to read it, or run: nsys export --type sqlite {}",
            shell_word(&file)
        ),
    )
}

/// `s` as one shell word: as it is when that is safe, else single-quoted.
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@%".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The arguments of the export, exactly: nsys picks no name of its own,
/// and overwrites whatever a dead run left at `out`; with `blobs`, NCCL's
/// payloads are kept (nsys leaves `binaryData` out unless asked).
pub fn export_args(report: &Path, out: &Path, blobs: bool) -> Vec<std::ffi::OsString> {
    // A report named `-x.nsys-rep` must not read as an option.
    let report = if report.to_string_lossy().starts_with('-') {
        Path::new(".").join(report)
    } else {
        report.to_path_buf()
    };
    let mut args: Vec<std::ffi::OsString> = [
        "export",
        "--type",
        "sqlite",
        "--force-overwrite",
        "true",
        "--output",
    ]
    .iter()
    .map(Into::into)
    .collect();
    args.push(out.into());
    if blobs {
        args.extend(["--include-blobs", "true"].map(Into::into));
    }
    args.push(report.into());
    args
}

/// Exports `report` to `out` with nsys. Err: one line, naming the report,
/// with nsys's own error line when it failed. `starting` is called once
/// nsys is found, before it runs.
pub fn run(report: &Path, out: &Path, starting: &mut dyn FnMut()) -> Result<(), LoadError> {
    let Some(nsys) = Nsys::find() else {
        return Err(no_nsys(report));
    };
    starting();
    // An nsys that does not know `--include-blobs` (before 2026) names it
    // in its error: it runs again without it.
    match run_with(&nsys, report, out, true) {
        Err(Failed {
            blobs_refused: true,
            ..
        }) => run_with(&nsys, report, out, false),
        done => done,
    }
    .map_err(|f| f.error)
}

/// An export that failed, and whether nsys named `--include-blobs` in
/// what it said.
struct Failed {
    error: LoadError,
    blobs_refused: bool,
}

impl From<LoadError> for Failed {
    fn from(error: LoadError) -> Failed {
        Failed {
            error,
            blobs_refused: false,
        }
    }
}

fn run_with(nsys: &Nsys, report: &Path, out: &Path, blobs: bool) -> Result<(), Failed> {
    let mut cmd = Command::new(nsys.path());
    cmd.args(export_args(report, out, blobs));
    let limit = TIMEOUT_S.load(Ordering::Relaxed);
    let ran = scratch::run_child(&mut cmd, std::time::Duration::from_secs(limit)).map_err(|e| {
        LoadError::new(
            report,
            match nsys {
                Nsys::Given(p) => format!("cannot run NSYS={} ({e})", p.display()),
                Nsys::OnPath(p) => format!("cannot run {} ({e})", p.display()),
            },
        )
    })?;
    let Some(status) = ran.status else {
        return Err(LoadError::new(
            report,
            format!("nsys export did not finish within {limit} s (--nsys-timeout), stopped"),
        )
        .into());
    };
    let said = said_lines(&ran.stdout, &ran.stderr);
    if !status.success() {
        let how = match (status.code(), signal_of(&status)) {
            (Some(code), _) => format!("exit status {code}"),
            (None, Some(sig)) => format!("ended by signal {sig}"),
            (None, None) => "failed".to_string(),
        };
        let line = error_line(&ran.stderr, &ran.stdout);
        return Err(Failed {
            error: LoadError::new(
                report,
                match line {
                    Some(line) => format!("nsys export failed ({how}): {line}"),
                    None => format!("nsys export failed ({how})"),
                },
            ),
            blobs_refused: blobs && said.iter().any(|l| l.contains("include-blobs")),
        });
    }
    if ECHO.load(Ordering::Relaxed) {
        let skipped = said.len().saturating_sub(ECHOED_LINES);
        if skipped > 0 {
            eprintln!("  (nsys said more; its last {ECHOED_LINES} lines:)");
        }
        for line in &said[skipped..] {
            eprintln!(
                "  {}",
                crate::text_safe::escape_controls(&one_line_cut(line))
            );
        }
    }
    if !out.is_file() {
        return Err(LoadError::new(
            report,
            format!("nsys export succeeded but wrote no {}", out.display()),
        )
        .into());
    }
    Ok(())
}

/// A line as echoed: at most 300 characters (one "line" of nsys's output
/// can be megabytes without a newline).
fn one_line_cut(line: &str) -> String {
    const MAX: usize = 300;
    match line.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

fn signal_of(status: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

/// The non-empty lines of some output; of a line redrawn with `\r` (a
/// progress bar), its last state.
fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter_map(|l| l.rsplit('\r').find(|s| !s.trim().is_empty()))
        .map(|l| l.trim_end().to_string())
        .collect()
}

/// Everything nsys said, stdout first.
fn said_lines(stdout: &[u8], stderr: &[u8]) -> Vec<String> {
    let mut all = lines(stdout);
    all.extend(lines(stderr));
    all
}

/// nsys's own error line: the first line of its stderr that says error,
/// else its last line there, else its last line on stdout.
fn error_line(stderr: &[u8], stdout: &[u8]) -> Option<String> {
    let err = lines(stderr);
    err.iter()
        .find(|l| l.to_ascii_lowercase().contains("error"))
        .or(err.last())
        .cloned()
        .or_else(|| lines(stdout).pop())
        .map(|l| one_line_cut(l.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_exactly_the_documented_one() {
        let args = export_args(
            Path::new("run/r0.nsys-rep"),
            Path::new("/c/exports/k.sqlite"),
            true,
        );
        assert_eq!(
            args,
            [
                "export",
                "--type",
                "sqlite",
                "--force-overwrite",
                "true",
                "--output",
                "/c/exports/k.sqlite",
                "--include-blobs",
                "true",
                "run/r0.nsys-rep"
            ]
        );
        let older = export_args(Path::new("r.nsys-rep"), Path::new("/o.sqlite"), false);
        assert!(!older.iter().any(|a| a == "--include-blobs"));
        let dashed = export_args(Path::new("-r.nsys-rep"), Path::new("/o.sqlite"), true);
        assert_eq!(dashed.last().unwrap(), "./-r.nsys-rep");
    }

    #[test]
    fn nsys_error_line_prefers_a_line_that_says_error() {
        let stderr = b"Processing...\nERROR: the report is damaged\nbye\n";
        assert_eq!(
            error_line(stderr, b"").as_deref(),
            Some("ERROR: the report is damaged")
        );
        assert_eq!(error_line(b"a\nlast\n", b"").as_deref(), Some("last"));
        assert_eq!(error_line(b"", b"out only\n").as_deref(), Some("out only"));
        assert_eq!(error_line(b"", b""), None);
        assert_eq!(lines(b"[==  ]\r[====]\n"), vec!["[====]"]);
    }

    #[test]
    fn the_file_in_the_advice_is_one_shell_word() {
        assert_eq!(shell_word("run/r0.nsys-rep"), "run/r0.nsys-rep");
        assert_eq!(
            shell_word("my run/r'0.nsys-rep"),
            r"'my run/r'\''0.nsys-rep'"
        );
    }
}
