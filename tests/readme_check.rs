//! The README is checked, in the style of `trycmd`: every fenced block
//! that shows a `$ rankline …` command with its output is run, and the
//! output must be the block's (a `...` or `…` line stands for any lines;
//! trailing spaces do not count; `$ echo $?` then a number is the exit
//! status). Every JSON field the README names by its full
//! path with a list in it (`skew.groups[].big_events[].step`) exists in
//! the output for at least one bundled fixture.

mod common;
use common::*;
use serde_json::Value;

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

/// Each fenced block whose first line is `$ rankline …`: the arguments
/// and the lines shown below it.
fn shown_commands(readme: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let mut out = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        if !line.starts_with("```") {
            continue;
        }
        let block: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
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
