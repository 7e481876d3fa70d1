//! `.nsys-rep` reports as input, with a stand-in `nsys` script written by
//! each test: the exact export command, where the export goes, its reuse,
//! `--no-cache`, the error lines, directories, `index`, `NSYS=` and Ctrl-C.

mod common;
use common::nodes::mkfifo;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The fixture the stand-in "exports" (nsys 2025.5.2.266 in its metadata).
const FIXTURE: &str = "fixtures/two_node_a.sqlite";
const FIXTURE_NSYS: &str = "2025.5.2.266";

/// What the stand-in does besides parsing its options.
enum Acts {
    /// Copies the fixture to the output.
    Exports,
    /// Says an error and exits 1, after writing half an output.
    Fails,
    /// Says "started" into the FIFO `ready`, then blocks reading `block`.
    Blocks { ready: PathBuf, block: PathBuf },
    /// A site's wrapper that does not `exec`: starts the real work in the
    /// background, writes its pid to `pid`, says "started" into `ready`
    /// (when given) and waits for it.
    Wraps {
        pid: PathBuf,
        ready: Option<PathBuf>,
    },
    /// Says `mb` MB of progress on stderr without a newline, then exports.
    Noisy { mb: usize },
}

/// Writes an executable `nsys` into `dir` that logs its arguments (one a
/// line, then `--`) to `log`, answers `--version`, and honours `export`
/// with `--type/-t`, `--output/-o`, `--force-overwrite/-f` and
/// `--include-blobs` as `--opt value` and `--opt=value`.
fn stand_in(dir: &Path, log: &Path, acts: Acts) -> PathBuf {
    stand_in_of(dir, log, acts, true)
}

/// [`stand_in`]; an nsys before 2026 (`blobs` false) refuses
/// `--include-blobs`, naming it.
fn stand_in_of(dir: &Path, log: &Path, acts: Acts, blobs: bool) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let act = match acts {
        Acts::Exports => format!("cp '{}' \"$out\"", root().join(FIXTURE).display()),
        Acts::Fails => "printf 'SQLite format 3\\000half' > \"$out\"\n\
             echo 'Processing events...'\n\
             echo \"ERROR: cannot read $input: the report is damaged\" >&2\n\
             exit 1"
            .to_string(),
        Acts::Blocks { ready, block } => format!(
            "echo started > '{}'\nexec cat '{}'",
            ready.display(),
            block.display()
        ),
        Acts::Wraps { pid, ready } => format!(
            "sleep 300 &\necho $! > '{}'\n{}wait",
            pid.display(),
            ready.map_or(String::new(), |r| format!(
                "echo started > '{}'\n",
                r.display()
            ))
        ),
        Acts::Noisy { mb } => format!(
            "head -c {} /dev/zero | tr '\\000' x >&2\necho >&2\necho 'Export done' >&2\ncp '{}' \"$out\"",
            mb << 20,
            root().join(FIXTURE).display()
        ),
    };
    let script = format!(
        r#"#!/bin/sh
for a in "$@"; do printf '%s\n' "$a" >> '{log}'; done
echo -- >> '{log}'
if [ "$1" = --version ]; then echo "NVIDIA Nsight Systems version 2025.5.2.266-255226543398v0"; exit 0; fi
[ "$1" = export ] || {{ echo "stand-in: unknown command $1" >&2; exit 2; }}
shift
type=; out=; force=false; input=
while [ $# -gt 0 ]; do
  case "$1" in
    --type=*|-t=*) type=${{1#*=}};;
    --type|-t) type=$2; shift;;
    --output=*|-o=*) out=${{1#*=}};;
    --output|-o) out=$2; shift;;
    --force-overwrite=*|-f=*) force=${{1#*=}};;
    --force-overwrite|-f) force=$2; shift;;
    --include-blobs|--include-blobs=*)
      [ {known} = 1 ] || {{ echo "ERROR: unrecognised option '--include-blobs'" >&2; exit 2; }}
      [ "$1" = --include-blobs ] && shift;;
    -*) echo "stand-in: unknown option $1" >&2; exit 2;;
    *) input=$1;;
  esac
  shift
done
[ "$type" = sqlite ] || {{ echo "ERROR: unsupported type '$type'" >&2; exit 1; }}
[ -f "$input" ] || {{ echo "ERROR: no such report $input" >&2; exit 1; }}
[ -n "$out" ] || out="${{input%.*}}.sqlite"
if [ -e "$out" ] && [ "$force" != true ]; then echo "ERROR: $out exists" >&2; exit 1; fi
echo "Exporting $input"
{act}
"#,
        log = log.display(),
        known = u8::from(blobs),
    );
    let nsys = dir.join("nsys");
    std::fs::write(&nsys, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&nsys, std::fs::Permissions::from_mode(0o755)).unwrap();
    nsys
}

/// The stand-in's calls, each its arguments.
fn calls(log: &Path) -> Vec<Vec<String>> {
    let Ok(text) = std::fs::read_to_string(log) else {
        return Vec::new();
    };
    let mut out = vec![];
    let mut call = vec![];
    for line in text.lines() {
        if line == "--" {
            out.push(std::mem::take(&mut call));
        } else {
            call.push(line.to_string());
        }
    }
    out
}

/// rankline with `PATH` set to `path` then the system's directories (for
/// the stand-in's `cp`), `NSYS` unset unless given, and temp space in `tmp`.
fn run(args: &[&str], path: &Path, nsys: Option<&Path>, tmp: &Path) -> Output {
    command(args, path, nsys, tmp)
        .output()
        .expect("run rankline")
}

/// `report summary --no-cache` of one report, the usual run here.
fn summary(rep: &Path, path: &Path, nsys: Option<&Path>, tmp: &Path) -> Output {
    run(
        &["report", "summary", "--no-cache", s(rep)],
        path,
        nsys,
        tmp,
    )
}

fn command(args: &[&str], path: &Path, nsys: Option<&Path>, tmp: &Path) -> Command {
    std::fs::create_dir_all(tmp).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_rankline"));
    c.args(args)
        .env("XDG_CACHE_HOME", test_cache_home())
        .env("PATH", search_path(path))
        .env("TMPDIR", tmp)
        .env_remove("NSYS")
        .current_dir(root());
    if let Some(n) = nsys {
        c.env("NSYS", n);
    }
    c
}

fn search_path(first: &Path) -> std::ffi::OsString {
    if first.ends_with("empty-bin") {
        // Where nsys must not be found: nothing else.
        return first.into();
    }
    std::env::join_paths([first, Path::new("/usr/bin"), Path::new("/bin")]).unwrap()
}

/// A fake report: its bytes only need to differ per capture.
fn report(path: &Path, content: &str) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
    path.to_path_buf()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|l| {
            l.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn a_report_is_exported_once_into_the_cache_with_the_exact_command_and_reused() {
    let d = temp_dir("nsys_report_export");
    let bin = d.join("bin");
    let log = d.join("nsys.log");
    stand_in(&bin, &log, Acts::Exports);
    let rep = report(&d.join("run/rank0.nsys-rep"), "report of rank 0");
    let cache = d.join("cache");
    let args = [
        "report",
        "summary",
        "--format",
        "json",
        "--cache-dir",
        s(&cache),
        s(&rep),
    ];
    let o = run(&args, &bin, None, &d.join("tmp"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let c = calls(&log);
    assert_eq!(c.len(), 1, "{c:?}");
    let out = &c[0][6];
    assert_eq!(
        c[0],
        [
            "export",
            "--type",
            "sqlite",
            "--force-overwrite",
            "true",
            "--output",
            out,
            "--include-blobs",
            "true",
            s(&rep)
        ]
    );
    // Into the cache directory's exports, never beside the report.
    let out = Path::new(out);
    assert!(out.starts_with(cache.join("exports")), "{}", out.display());
    assert!(
        out.extension().is_some_and(|e| e == "sqlite"),
        "{}",
        out.display()
    );
    assert_eq!(files_in(&d.join("run")), ["rank0.nsys-rep"]);
    let kept = files_in(&cache.join("exports"));
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(Some(kept[0].as_str()), out.file_name().unwrap().to_str());
    // The report is the file, the nsys that exported it is said; stdout
    // is the report only, the progress line went to stderr.
    let v: Value = serde_json::from_str(&stdout(&o)).expect("stdout is the JSON report");
    assert_eq!(v["files"][0]["path"], s(&rep));
    assert_eq!(v["files"][0]["exported_from_report"], true);
    assert_eq!(v["files"][0]["exported_with_nsys"], FIXTURE_NSYS);
    assert!(
        stderr(&o).contains(&format!(
            "rankline: {}: exporting to SQLite with nsys",
            rep.display()
        )),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains(&format!("Exporting {}", rep.display())),
        "nsys's own output on stderr: {}",
        stderr(&o)
    );

    // Opened again: from the cache, nsys is not run.
    let text_args = ["report", "summary", "--cache-dir", s(&cache), s(&rep)];
    let o = run(&text_args, &bin, None, &d.join("tmp"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(calls(&log).len(), 1);
    assert!(
        stdout(&o).contains(&format!(
            "rank0.nsys-rep: exported to SQLite by rankline with nsys {FIXTURE_NSYS}"
        )),
        "{}",
        stdout(&o)
    );
    // Without the columnar entries, the export itself is reused.
    for f in files_in(&cache) {
        if f.ends_with(".rlcache") {
            std::fs::remove_file(cache.join(f)).unwrap();
        }
    }
    let o = run(&args, &bin, None, &d.join("tmp"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(calls(&log).len(), 1, "the export was reused");
    // A changed report is exported again.
    report(&rep, "report of rank 0, captured again");
    let o = run(&args, &bin, None, &d.join("tmp"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(calls(&log).len(), 2);
}

#[test]
fn without_the_cache_the_export_goes_to_a_private_temp_dir_that_is_removed() {
    let d = temp_dir("nsys_report_no_cache");
    let bin = d.join("bin");
    let log = d.join("nsys.log");
    stand_in(&bin, &log, Acts::Exports);
    let rep = report(&d.join("run/r.qdrep"), "an old report");
    let tmp = d.join("tmp");
    let o = summary(&rep, &bin, None, &tmp);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let c = calls(&log);
    assert_eq!(c.len(), 1);
    let out = Path::new(&c[0][6]);
    assert!(out.starts_with(&tmp), "{}", out.display());
    assert_eq!(files_in(&tmp), Vec::<String>::new(), "temp space left");
    assert_eq!(files_in(&d.join("run")), ["r.qdrep"]);
}

#[test]
fn an_nsys_without_include_blobs_exports_again_without_it() {
    let d = temp_dir("nsys_report_before_2026");
    let bin = d.join("bin");
    let log = d.join("nsys.log");
    stand_in_of(&bin, &log, Acts::Exports, false);
    let rep = report(&d.join("run/r.nsys-rep"), "a report");
    let o = summary(&rep, &bin, None, &d.join("tmp"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let c = calls(&log);
    assert_eq!(c.len(), 2, "{c:?}");
    assert!(c[0].iter().any(|a| a == "--include-blobs"), "{c:?}");
    assert!(!c[1].iter().any(|a| a == "--include-blobs"), "{c:?}");
    assert_eq!(c[1].last().map(String::as_str), Some(s(&rep)));
}

#[test]
fn without_nsys_one_line_says_how_and_exit_1() {
    let d = temp_dir("nsys_report_no_nsys");
    let empty = d.join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let rep = report(&d.join("run/rank0.nsys-rep"), "report");
    let o = summary(&rep, &empty, None, &d.join("tmp"));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "");
    let f = rep.display();
    assert_eq!(
        stderr(&o),
        format!(
            "rankline: {f} is an nsys report; rankline needs nsys on PATH (or NSYS=/path/to/nsys) to read it, or run: nsys export --type sqlite {f}\n"
        )
    );
}

#[test]
fn a_failing_export_shows_nsys_error_line_and_leaves_nothing() {
    let d = temp_dir("nsys_report_fails");
    let bin = d.join("bin");
    let log = d.join("nsys.log");
    stand_in(&bin, &log, Acts::Fails);
    let rep = report(&d.join("run/rank0.nsys-rep"), "damaged");
    let cache = d.join("cache");
    let o = run(
        &["report", "summary", "--cache-dir", s(&cache), s(&rep)],
        &bin,
        None,
        &d.join("tmp"),
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    // The progress line, then the error.
    assert_eq!(lines.len(), 2, "{err}");
    assert_eq!(
        lines[1],
        format!(
            "rankline: {f}: nsys export failed (exit status 1): ERROR: cannot read {f}: the report is damaged",
            f = rep.display()
        )
    );
    assert_eq!(files_in(&cache.join("exports")), Vec::<String>::new());
    assert_eq!(files_in(&d.join("run")), ["rank0.nsys-rep"]);
}

#[test]
fn nsys_from_the_environment_comes_before_path() {
    let d = temp_dir("nsys_report_env");
    let (on_path, given) = (d.join("path.log"), d.join("given.log"));
    let path_bin = d.join("bin");
    stand_in(&path_bin, &on_path, Acts::Exports);
    let nsys = stand_in(&d.join("nsys-2026/bin"), &given, Acts::Exports);
    let rep = report(&d.join("run/rank0.nsys-rep"), "report");
    let o = summary(&rep, &path_bin, Some(&nsys), &d.join("tmp"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(calls(&given).len(), 1);
    assert_eq!(calls(&on_path).len(), 0);
}

#[test]
fn a_directory_holds_reports_and_an_export_beside_its_report_is_read_instead() {
    let d = temp_dir("nsys_report_dir");
    let bin = d.join("bin");
    let log = d.join("nsys.log");
    stand_in(&bin, &log, Acts::Exports);
    let run_dir = d.join("run");
    report(&run_dir.join("node1.nsys-rep"), "node 1");
    report(&run_dir.join("node2.nsys-rep"), "node 2");
    std::fs::copy(
        root().join("fixtures/two_node_b.sqlite"),
        run_dir.join("node2.sqlite"),
    )
    .unwrap();
    let o = run(
        &[
            "report",
            "summary",
            "--no-cache",
            "--format",
            "json",
            s(&run_dir),
        ],
        &bin,
        None,
        &d.join("tmp"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let paths: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    let node1 = run_dir.join("node1.nsys-rep");
    let node2 = run_dir.join("node2.sqlite");
    assert_eq!(paths, [s(&node1), s(&node2)]);
    assert_eq!(calls(&log).len(), 1, "only node1 is exported");
    let said = format!(
        "rankline: {}: 1 report has a .sqlite export beside it, read instead (node2.nsys-rep)",
        run_dir.display()
    );
    let err = stderr(&o);
    assert_eq!(err.lines().filter(|l| *l == said).count(), 1, "{err}");
}

#[test]
fn index_exports_and_caches_a_directory_of_reports() {
    let d = temp_dir("nsys_report_index");
    let bin = d.join("bin");
    let log = d.join("nsys.log");
    stand_in(&bin, &log, Acts::Exports);
    let run_dir = d.join("run");
    for r in 0..3 {
        report(
            &run_dir.join(format!("rank{r}.nsys-rep")),
            &format!("rank {r}"),
        );
    }
    let cache = d.join("cache");
    let args = ["index", "--cache-dir", s(&cache), s(&run_dir)];
    let o = run(&args, &bin, None, &d.join("tmp"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    // A line per report, then the job's analyses.
    assert_eq!(lines.len(), 4, "{out}");
    assert!(
        lines[3].starts_with("job of 3 files: analyses stored in "),
        "{out}"
    );
    for (r, line) in lines[..3].iter().enumerate() {
        let rep = run_dir.join(format!("rank{r}.nsys-rep"));
        assert!(
            line.starts_with(&format!(
                "{}: exported with nsys, cached in ",
                rep.display()
            )),
            "{out}"
        );
    }
    assert_eq!(calls(&log).len(), 3);
    assert_eq!(files_in(&cache.join("exports")).len(), 3);
    assert_eq!(files_in(&run_dir).len(), 3, "nothing beside the reports");
    // Again: all cached, nsys not run.
    let o = run(&args, &bin, None, &d.join("tmp"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[..3]
            .iter()
            .all(|l| l.contains(": already cached in ")),
        "{out}"
    );
    assert_eq!(lines[3], "job of 3 files: analyses already stored", "{out}");
    assert_eq!(calls(&log).len(), 3);
}

/// The FIFO held open for reading and writing: the stand-in's write never
/// blocks, and a watcher can write "exited" into it if rankline ends
/// without running the stand-in (the read then returns, not hangs).
fn hold_open(fifo: &Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(fifo)
        .unwrap()
}

/// `rankline index` of `rep` started with the stand-in nsys in `bin`,
/// its output kept for `wait_with_output`.
fn spawn_index(rep: &Path, cache: &Path, bin: &Path, tmp: &Path) -> std::process::Child {
    command(&["index", "--cache-dir", s(cache), s(rep)], bin, None, tmp)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// The next line said into a held FIFO.
fn line_from(fifo: &std::fs::File) -> String {
    use std::io::BufRead;
    let mut said = String::new();
    std::io::BufReader::new(fifo).read_line(&mut said).unwrap();
    said
}

#[test]
fn ctrl_c_during_index_kills_nsys_and_removes_the_temp_files() {
    let d = temp_dir("nsys_report_ctrl_c");
    let (ready, block) = (d.join("ready"), d.join("block"));
    mkfifo(&ready);
    mkfifo(&block);
    let bin = d.join("bin");
    let log = d.join("nsys.log");
    stand_in(
        &bin,
        &log,
        Acts::Blocks {
            ready: ready.clone(),
            block: block.clone(),
        },
    );
    let rep = report(&d.join("run/rank0.nsys-rep"), "report");
    let cache = d.join("cache");
    let signals = hold_open(&ready);
    let child = spawn_index(&rep, &cache, &bin, &d.join("tmp"));
    let pid = child.id() as i32;
    let mut exited = signals.try_clone().unwrap();
    let watcher = std::thread::spawn(move || {
        let o = child.wait_with_output().unwrap();
        use std::io::Write;
        let _ = exited.write_all(b"exited\n");
        o
    });
    let said = line_from(&signals);
    assert_eq!(said, "started\n", "the stand-in runs");
    let exports = cache.join("exports");
    let temps = files_in(&exports);
    assert_eq!(temps.len(), 1, "{temps:?}");
    assert!(temps[0].starts_with(".rankline-"), "{temps:?}");
    // SAFETY: a plain kill(2) of the child this test started.
    let sent = unsafe { libc::kill(pid, libc::SIGINT) };
    assert_eq!(sent, 0);
    let o = watcher.join().unwrap();
    // If the stand-in were still alive, this would let it end.
    {
        use std::os::unix::fs::OpenOptionsExt;
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&block);
    }
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert_eq!(files_in(&exports), Vec::<String>::new());
    assert_eq!(files_in(&d.join("tmp")), Vec::<String>::new());
}

/// Whether process `pid` runs (a zombie no longer does).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|st| {
        st.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
    })
}

/// Whether `pid` is gone within a few seconds: SIGKILL is delivered when
/// the process is next scheduled, which on a loaded machine is after
/// rankline has already exited.
fn dies(pid: i32) -> bool {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while alive(pid) {
        if std::time::Instant::now() > until {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    true
}

fn pid_in(file: &Path) -> i32 {
    std::fs::read_to_string(file)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn an_export_past_its_timeout_is_stopped_with_what_it_started() {
    let d = temp_dir("nsys_report_timeout");
    let bin = d.join("bin");
    let pid = d.join("work.pid");
    stand_in(
        &bin,
        &d.join("nsys.log"),
        Acts::Wraps {
            pid: pid.clone(),
            ready: None,
        },
    );
    let rep = report(&d.join("run/rank0.nsys-rep"), "report");
    let cache = d.join("cache");
    let o = run(
        &[
            "report",
            "summary",
            "--nsys-timeout",
            "1",
            "--cache-dir",
            s(&cache),
            s(&rep),
        ],
        &bin,
        None,
        &d.join("tmp"),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(
        err.lines().last().unwrap(),
        format!(
            "rankline: {}: nsys export did not finish within 1 s (--nsys-timeout), stopped",
            rep.display()
        )
    );
    assert!(dies(pid_in(&pid)), "the wrapper's child runs on");
    assert_eq!(files_in(&cache.join("exports")), Vec::<String>::new());
    assert_eq!(files_in(&d.join("tmp")), Vec::<String>::new());
}

#[test]
fn ctrl_c_stops_what_a_wrapper_around_nsys_started() {
    let d = temp_dir("nsys_report_wrapper");
    let ready = d.join("ready");
    mkfifo(&ready);
    let bin = d.join("bin");
    let pid = d.join("work.pid");
    stand_in(
        &bin,
        &d.join("nsys.log"),
        Acts::Wraps {
            pid: pid.clone(),
            ready: Some(ready.clone()),
        },
    );
    let rep = report(&d.join("run/rank0.nsys-rep"), "report");
    let signals = hold_open(&ready);
    let child = spawn_index(&rep, &d.join("cache"), &bin, &d.join("tmp"));
    let said = line_from(&signals);
    assert_eq!(said, "started\n");
    // SAFETY: a plain kill(2) of the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130));
    assert!(dies(pid_in(&pid)), "the wrapper's child runs on");
}

#[test]
fn nsys_output_is_kept_and_echoed_in_bounds() {
    let d = temp_dir("nsys_report_noisy");
    let bin = d.join("bin");
    stand_in(&bin, &d.join("nsys.log"), Acts::Noisy { mb: 40 });
    let rep = report(&d.join("run/rank0.nsys-rep"), "report");
    let o = summary(&rep, &bin, None, &d.join("tmp"));
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        &stderr(&o)[..2000.min(o.stderr.len())]
    );
    let err = stderr(&o);
    assert!(err.len() < 4096, "{} bytes echoed", err.len());
    assert!(err.contains("Export done"), "{err}");
}
