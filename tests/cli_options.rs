//! The analysis options are one set for the timeline and `report`, checked
//! the same way for both; `index` does not offer `--no-cache`.

mod common;
use common::*;

const FIXTURE: &str = "fixtures/megatron_tp8.sqlite";

/// The one stderr line of a usage error (exit 2).
fn usage_error(args: &[&str]) -> String {
    let o = rankline(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(o.stdout.is_empty(), "{args:?} printed to stdout");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    err
}

#[test]
fn the_timeline_accepts_the_report_options() {
    // Without a terminal the timeline stops with a usage error, after the
    // options were read and checked: the error is about the terminal.
    for extra in [
        &["--big-skew-ms", "1"][..],
        &["--anomaly-ratio", "2.5"],
        &["--step-marker", "^step"],
        &["--comm-pattern", "my_allreduce"],
    ] {
        let mut args = extra.to_vec();
        args.push(FIXTURE);
        let err = usage_error(&args);
        assert!(err.contains("needs a terminal"), "{args:?}: {err}");
    }
}

#[test]
fn a_bad_value_is_the_same_one_line_usage_error_for_timeline_and_report() {
    for (flag, value, says) in [
        (
            "--big-skew-ms",
            "-1",
            "--big-skew-ms needs a number of milliseconds >= 0",
        ),
        (
            "--big-skew-ms",
            "nan",
            "--big-skew-ms needs a number of milliseconds >= 0",
        ),
        ("--anomaly-ratio", "0", "--anomaly-ratio needs a number > 0"),
        (
            "--anomaly-ratio",
            "-3",
            "--anomaly-ratio needs a number > 0",
        ),
        ("--step-marker", "(", "--step-marker is not a valid regex"),
        ("--comm-pattern", "[", "--comm-pattern is not a valid regex"),
    ] {
        let timeline = usage_error(&[flag, value, FIXTURE]);
        let report = usage_error(&["report", "skew", flag, value, FIXTURE]);
        assert!(timeline.contains(says), "{flag} {value}: {timeline}");
        assert_eq!(timeline, report, "{flag} {value}");
    }
    // Not a number at all: clap's own one-line error, also exit 2.
    let err = usage_error(&["--big-skew-ms", "soon", FIXTURE]);
    assert!(err.contains("--big-skew-ms"), "{err}");
}

#[test]
fn the_threshold_reaches_the_report() {
    let o = rankline(&[
        "report",
        "skew",
        "--big-skew-ms",
        "1",
        "--no-cache",
        FIXTURE,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("start skew > 1.000 ms"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn index_does_not_offer_no_cache() {
    let help = stdout(&rankline(&["index", "--help"]));
    assert!(help.contains("--cache-dir"), "{help}");
    assert!(!help.contains("--no-cache"), "{help}");
    let err = usage_error(&["index", "--no-cache", FIXTURE]);
    assert!(err.contains("--no-cache"), "{err}");
    // Where it makes sense it is still there.
    assert!(stdout(&rankline(&["report", "--help"])).contains("--no-cache"));
    assert!(stdout(&rankline(&["--help"])).contains("--no-cache"));
    assert!(stdout(&rankline(&["--help"])).contains("--big-skew-ms"));
}
