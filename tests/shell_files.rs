//! What rankline gives the shell: completion scripts for five shells, a man
//! page, a `--version` that names the nsys exports it is tested on (checked
//! against the real exports), and captures named like those commands still
//! open when written as a path.

mod common;
use common::*;

use rusqlite::{Connection, OpenFlags};

#[test]
fn completions_are_printed_for_each_shell() {
    let marks = [
        ("bash", "complete -F _rankline"),
        ("zsh", "#compdef rankline"),
        ("fish", "complete -c rankline"),
        ("elvish", "edit:completion:arg-completer[rankline]"),
        ("powershell", "Register-ArgumentCompleter"),
    ];
    for (shell, mark) in marks {
        let script = text(&["completions", shell]);
        assert!(script.contains(mark), "{shell}: no {mark:?}");
        // The subcommands and options are in it.
        for word in ["report", "index", "big-skew-ms", "cache-dir"] {
            assert!(script.contains(word), "{shell}: no {word}");
        }
    }
}

#[test]
fn an_unknown_shell_is_a_one_line_usage_error() {
    let o = rankline(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).is_empty());
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("rankline: ") && err.contains("tcsh"),
        "{err}"
    );
}

#[test]
fn man_prints_a_roff_page_of_the_commands_and_options() {
    let page = text(&["man"]);
    let header = page
        .lines()
        .find(|l| l.starts_with(".TH "))
        .expect(".TH line");
    assert_eq!(
        header.trim_end(),
        concat!(
            ".TH rankline 1  \"rankline ",
            env!("CARGO_PKG_VERSION"),
            "\""
        )
    );
    for part in [".SH NAME", ".SH SYNOPSIS", ".SH OPTIONS", ".SH SUBCOMMANDS"] {
        assert!(page.contains(part), "no {part}");
    }
    for word in [
        "rankline\\-report",
        "\\-\\-comm\\-pattern",
        "\\-\\-no\\-cache",
    ] {
        assert!(page.contains(word), "no {word}");
    }
}

#[test]
fn a_capture_named_man_or_completions_opens_as_a_path() {
    // `./man` is a file for the timeline, not the man command: without a
    // terminal the timeline says it needs one, and nothing is printed.
    for path in ["./man", "./completions"] {
        let o = rankline(&[path]);
        assert_eq!(o.status.code(), Some(2), "{path}");
        assert!(stdout(&o).is_empty(), "{path}: {}", stdout(&o));
        assert!(
            stderr(&o).contains("the timeline needs a terminal"),
            "{path}"
        );
    }
}

/// The nsys release and export schema an export was written by.
fn export_versions(path: &std::path::Path) -> (String, String) {
    let db = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let table = ["META_DATA_EXPORT", "EXPORT_META_DATA"]
        .into_iter()
        .find(|t| {
            let sql = "SELECT count(*) FROM sqlite_master WHERE name = ?1";
            db.query_row(sql, [t], |r| r.get::<_, i64>(0)).unwrap() == 1
        })
        .expect("export metadata table");
    let value = |name: &str| -> String {
        let sql = format!("SELECT value FROM {table} WHERE name = ?1");
        db.query_row(&sql, [name], |r| r.get(0)).unwrap()
    };
    (
        value("EXPORT_PRODUCT_VERSION"),
        value("EXPORT_SCHEMA_VERSION"),
    )
}

fn numbers(version: &str) -> Vec<u64> {
    version.split('.').map(|n| n.parse().unwrap()).collect()
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn version_names_the_range_of_real_exports_it_is_tested_on() {
    let files = sqlite_files(&real_profiles());
    assert!(files.len() >= 8, "{files:?}");
    let versions: Vec<(String, String)> = files.iter().map(|f| export_versions(f)).collect();
    let range = |pick: fn(&(String, String)) -> &String, digits: usize| {
        let mut v: Vec<Vec<u64>> = versions.iter().map(|x| numbers(pick(x))).collect();
        v.sort();
        let show = |n: &Vec<u64>| {
            let parts: Vec<String> = n.iter().take(digits).map(u64::to_string).collect();
            parts.join(".")
        };
        (show(&v[0]), show(&v[v.len() - 1]))
    };
    let (nsys_low, nsys_high) = range(|x| &x.0, 2);
    let (schema_low, schema_high) = range(|x| &x.1, 3);
    let expected = format!(
        "rankline {}\ntested on nsys {nsys_low} to {nsys_high} SQLite exports \
         (export schema {schema_low} to {schema_high})\n",
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(text(&["--version"]), expected);
}
