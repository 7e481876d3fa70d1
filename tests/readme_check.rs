//! The README is checked, in the style of `trycmd`: every fenced block
//! that shows a `$ rankline …` command with its output is run, and the
//! output must be the block's (a `...` or `…` line stands for any lines;
//! trailing spaces do not count; `$ echo $?` then a number is the exit
//! status). Every JSON field the README names by its full
//! path with a list in it (`skew.groups[].big_events[].step`) exists in
//! the output for at least one bundled fixture. Every timeline screen it
//! shows (a block under `<!-- screen: … -->`) and the screen text its prose
//! quotes are what the timeline draws.

mod common;
use common::*;
use serde_json::Value;

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

/// Each fenced block whose first line is `$ rankline …`: the arguments
/// and the lines shown below it. A block indented under a list item is
/// read without its indent.
fn shown_commands(readme: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let mut out = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        if !line.trim_start().starts_with("```") {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let block: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.trim_start().starts_with("```"))
            .map(|l| l.get(indent..).unwrap_or(l.trim_start()))
            .collect();
        let Some(cmd) = block.first().and_then(|l| l.strip_prefix("$ rankline ")) else {
            continue;
        };
        let args = cmd.split_whitespace().map(str::to_string).collect();
        let shown = block[1..]
            .iter()
            .map(|l| l.trim_end().to_string())
            .collect();
        out.push((args, shown));
    }
    out
}

/// Whether `got` is `shown`, a `...` line matching any run of lines.
fn matches(shown: &[String], got: &[&str]) -> bool {
    match shown.split_first() {
        None => got.is_empty(),
        Some((first, rest)) if matches!(first.trim(), "..." | "…") => {
            (0..=got.len()).any(|skip| matches(rest, &got[skip..]))
        }
        Some((first, rest)) => got
            .split_first()
            .is_some_and(|(g, tail)| g.trim_end() == first && matches(rest, tail)),
    }
}

#[test]
fn every_command_the_readme_shows_prints_what_it_shows() {
    let commands = shown_commands(&readme());
    assert!(commands.len() >= 4, "{commands:?}");
    let mut wrong = Vec::new();
    for (args, mut shown) in commands {
        let mut run: Vec<&str> = args.iter().map(String::as_str).collect();
        run.push("--no-cache");
        let o = rankline(&run);
        if let Some(at) = shown.iter().position(|l| l == "$ echo $?") {
            let code: i32 = shown[at + 1].parse().unwrap();
            assert_eq!(o.status.code(), Some(code), "$ rankline {}", args.join(" "));
            shown.truncate(at);
        }
        // Gate lines go to stderr, after the report: as a terminal shows.
        let all = format!("{}{}", stdout(&o), stderr(&o));
        let got: Vec<&str> = all.lines().collect();
        if !matches(&shown, &got) {
            wrong.push(format!(
                "$ rankline {}\n--- README\n{}\n--- now\n{}",
                args.join(" "),
                shown.join("\n"),
                all
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

/// Report sections, as the JSON of `report all` keys them.
const SECTIONS: &[&str] = &[
    "summary",
    "nccl",
    "overlap",
    "skew",
    "launch",
    "anomalies",
    "stragglers",
    "clock",
    "behind",
    "why",
];

/// The values at `path` (`a.b[].c`) in `v`; a `[]` steps into every
/// element of a list (or value of a map).
fn at<'a>(v: &'a Value, path: &str) -> Vec<&'a Value> {
    let mut cur = vec![v];
    for part in path.split('.') {
        let (key, each) = match part.strip_suffix("[]") {
            Some(k) => (k, true),
            None => (part, false),
        };
        cur = cur
            .into_iter()
            .filter_map(|c| c.get(key))
            .flat_map(|c| -> Vec<&Value> {
                match (each, c) {
                    (true, Value::Array(a)) => a.iter().collect(),
                    (true, Value::Object(m)) => m.values().collect(),
                    (true, _) => Vec::new(),
                    (false, c) => vec![c],
                }
            })
            .collect();
    }
    cur
}

#[test]
fn every_json_path_the_readme_names_exists_for_a_fixture() {
    let text = readme();
    let path = regex::Regex::new(r"`([a-z_]+(?:\[\])?(?:\.[a-z_0-9]+(?:\[\])?)+)`").unwrap();
    let named: std::collections::BTreeSet<String> = path
        .captures_iter(&text)
        .map(|c| c[1].to_string())
        .filter(|p| p.contains("[]") && SECTIONS.contains(&p.split(['.', '[']).next().unwrap()))
        .collect();
    assert!(named.len() >= 5, "{named:?}");
    let inputs = [
        "fixtures/megatron_tp8.sqlite",
        "fixtures/why.sqlite",
        "fixtures/multinode",
        "fixtures/hang",
        "fixtures/payloads.sqlite",
        "fixtures/per_rank",
        "fixtures/jobs/pp4_payloads.sqlite",
    ];
    let docs: Vec<Value> = inputs
        .iter()
        .flat_map(|i| {
            [
                json(&["report", "all", "--format", "json", "--no-cache", i]),
                // the instance list is asked for
                serde_json::json!({"skew": json(&["report", "skew", "--instances", "--format", "json", "--no-cache", i])}),
            ]
        })
        .collect();
    let missing: Vec<&String> = named
        .iter()
        .filter(|p| {
            // A list that is empty in every fixture still exists.
            let list = p.strip_suffix("[]").unwrap_or(p);
            docs.iter()
                .all(|d| at(d, p).is_empty() && !at(d, list).iter().any(|v| v.is_array()))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "README names JSON fields no fixture has: {missing:?}"
    );
}

/// The sections table has a row for every section `report` takes.
#[test]
fn the_sections_table_names_every_section() {
    let help = text(&["report", "--help"]);
    let values = help
        .split("Possible values:")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap();
    let sections: Vec<&str> = values
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|l| l.split(':').next().unwrap().trim())
        .collect();
    assert!(sections.len() >= 14, "{sections:?}");
    let text = readme();
    let missing: Vec<&&str> = sections
        .iter()
        .filter(|s| !text.contains(&format!("\n| `{s}` |")))
        .collect();
    assert!(
        missing.is_empty(),
        "sections the README's table lacks: {missing:?}"
    );
}

/// A timeline screen the README shows: `<!-- screen: INPUTS [--goto G:I]
/// [; keys: K…] [; size: WxH] -->` on the line above a fenced block. The
/// inputs open as the binary opens them, each key is typed (every
/// character of it), and the block's lines must be a run of the screen's
/// lines, each inside its screen line (a list drawn over the timeline has
/// the timeline either side); a `...` or `…` line stands for any lines.
struct Screen {
    marker: String,
    inputs: Vec<String>,
    goto: Option<String>,
    keys: Vec<String>,
    size: (u16, u16),
    shown: Vec<String>,
}

fn shown_screens(readme: &str) -> Vec<Screen> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(spec) = line
            .trim()
            .strip_prefix("<!-- screen:")
            .and_then(|s| s.strip_suffix("-->"))
        else {
            continue;
        };
        assert!(
            lines
                .get(i + 1)
                .is_some_and(|l| l.trim_start().starts_with("```")),
            "a fenced block must follow {line}"
        );
        let shown = lines[i + 2..]
            .iter()
            .take_while(|l| !l.trim_start().starts_with("```"))
            .map(|l| l.trim_end().to_string())
            .collect();
        let mut s = Screen {
            marker: line.trim().to_string(),
            inputs: Vec::new(),
            goto: None,
            keys: Vec::new(),
            size: (160, 48),
            shown,
        };
        for part in spec.split(';') {
            let part = part.trim();
            if let Some(keys) = part.strip_prefix("keys:") {
                s.keys = keys.split_whitespace().map(String::from).collect();
            } else if let Some(size) = part.strip_prefix("size:") {
                let (w, h) = size.trim().split_once('x').unwrap();
                s.size = (w.parse().unwrap(), h.parse().unwrap());
            } else {
                let mut words = part.split_whitespace();
                while let Some(w) = words.next() {
                    match w {
                        "--goto" => s.goto = words.next().map(String::from),
                        _ => s.inputs.push(w.to_string()),
                    }
                }
            }
        }
        out.push(s);
    }
    out
}

/// The screen `s` asks for, one string per row (trailing spaces cut).
fn draw_screen(s: &Screen) -> String {
    use common::tui::{open_at, press, screen};
    let sources: Vec<rankline::profile::Source> = s
        .inputs
        .iter()
        .map(|i| rankline::profile::Source::File(root().join(i)))
        .collect();
    let (mut app, mut t) = open_at(&sources, s.goto.as_deref(), s.size.0, s.size.1);
    for k in &s.keys {
        press(&mut app, &mut t, k);
    }
    screen(&t)
}

/// Whether `shown` is a run of `got` from its start, each line inside
/// its screen line, a `...` line matching any run of lines.
fn run_from(shown: &[String], got: &[&str]) -> bool {
    match shown.split_first() {
        None => true,
        Some((first, rest)) if matches!(first.trim(), "..." | "…") => {
            (0..=got.len()).any(|skip| run_from(rest, &got[skip..]))
        }
        Some((first, rest)) => got
            .split_first()
            .is_some_and(|(g, tail)| g.contains(first.as_str()) && run_from(rest, tail)),
    }
}

#[test]
fn every_screen_the_readme_shows_is_the_timelines() {
    let screens = shown_screens(&readme());
    assert!(screens.len() >= 3, "{}", screens.len());
    let mut wrong = Vec::new();
    for s in &screens {
        let got = draw_screen(s);
        let lines: Vec<&str> = got.lines().collect();
        if !(0..lines.len()).any(|at| run_from(&s.shown, &lines[at..])) {
            wrong.push(format!(
                "{}\n--- README\n{}\n--- now\n{got}",
                s.marker,
                s.shown.join("\n")
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

/// Screen text the README quotes in its prose, and the screen that shows
/// it: the quote must be in both (the README's line breaks are spaces).
#[test]
fn the_screen_text_the_readme_quotes_is_on_screen() {
    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = flat(&readme());
    let megatron = |keys: &[&str]| Screen {
        marker: format!("megatron_tp8.sqlite; keys: {}", keys.join(" ")),
        inputs: vec!["fixtures/megatron_tp8.sqlite".into()],
        goto: None,
        keys: keys.iter().map(|k| k.to_string()).collect(),
        size: (160, 48),
        shown: Vec::new(),
    };
    let narrow = Screen {
        size: (80, 48),
        ..megatron(&["x", "x", "x"])
    };
    // fixtures/why.sqlite's `b` list: one planted cause of each kind.
    let why = || Screen {
        marker: "why.sqlite; keys: b".into(),
        inputs: vec!["fixtures/why.sqlite".into()],
        ..megatron(&["b"])
    };
    let quotes = [
        (why(), "queued: S20 vectorized_ele…"),
        (why(), "event: S24 gemm"),
        (why(), "unaccounted"),
        (why(), "on-cpu"),
        (
            megatron(&["x", "x", "x"]),
            "events ≥ 100 µs (6212 hidden in view)",
        ),
        (narrow, "≥ 100 µs: 6212 hidden"),
        (
            megatron(&["x", "x", "x"]),
            "x: drawing only events ≥ 100 µs; the title counts those hidden in view (x: the next step)",
        ),
        (
            megatron(&["x", "x", "x", "x", "x"]),
            "x: every event drawn again",
        ),
    ];
    let mut wrong = Vec::new();
    for (s, quote) in &quotes {
        let got = draw_screen(s);
        if !text.contains(quote) || !got.contains(quote) {
            wrong.push(format!(
                "{quote:?} (README: {}, screen: {}) at {}\n{got}",
                text.contains(quote),
                got.contains(quote),
                s.marker
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}
