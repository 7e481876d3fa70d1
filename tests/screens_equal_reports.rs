//! Screens equal reports: the timeline, opened on the multi-node, hang,
//! why, payload and one-node fixtures at each big event (`--goto`), states
//! the same facts as the report JSON — the late rank and its start skew
//! (status line), the verdict and its CPU and GPU parts (panel 2 against
//! `report launch` and `report why`), the start and end skew (panel 1
//! against `report skew`), the clock residual and its host (title against
//! `report clock`) and an open instance's "still open" skew (hang). Each
//! kernel's message size on panel 5 is checked against the payloads in
//! `tui_bandwidth.rs`. A new screen that states one of these joins this
//! test when it is written.

mod common;

use common::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rankline::analysis::Settings;
use rankline::profile::Source;
use rankline::tui::keymap::Keymap;
use rankline::tui::state::App;
use rankline::tui::timescale::format_duration;
use rankline::tui::ui;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::Value;

const INPUTS: &[&str] = &[
    "fixtures/multinode",
    "fixtures/hang",
    "fixtures/why.sqlite",
    "fixtures/payloads.sqlite",
    "fixtures/megatron_tp8.sqlite",
];

fn sources(input: &str) -> Vec<Source> {
    let path = root().join(input);
    if path.is_dir() {
        sqlite_files(&path).into_iter().map(Source::File).collect()
    } else {
        vec![Source::File(path)]
    }
}

/// The whole screen, at 160×48, after `--goto` and `keys`.
fn screen(input: &str, goto: Option<String>, keys: &str) -> String {
    let mut app = App::new(Keymap::default_keymap(), false);
    app.set_goto(goto);
    app.load_now(&sources(input), None, &Settings::default());
    let mut t = Terminal::new(TestBackend::new(160, 48)).unwrap();
    t.draw(|f| ui::draw(f, &mut app)).unwrap();
    for c in keys.chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        t.draw(|f| ui::draw(f, &mut app)).unwrap();
    }
    let buf = t.backend().buffer();
    let area = buf.area;
    (area.y..area.bottom())
        .map(|y| {
            (area.x..area.right())
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn report(section: &str, input: &str) -> Value {
    json(&["report", section, "--format", "json", "--no-cache", input])
}

/// A device as screens tag it: `D2` on one host, `node01:2` (the host's
/// first label) on several; a rank is not part of the JSON name.
fn tag(json_device: &str) -> String {
    match json_device.rsplit_once(':') {
        Some((host, id)) => format!("{}:{id}", host.split('.').next().unwrap()),
        None => format!("D{json_device}"),
    }
}

fn ms(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn ns(v: &Value) -> i64 {
    (ms(v) * 1e6).round() as i64
}

struct Event {
    group: String,
    instance: u64,
    late: String,
    skew_ms: f64,
    open: bool,
    late_host: Value,
}

fn big_events(input: &str) -> Vec<Event> {
    report("skew", input)["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| {
            let key = g["key"].as_str().unwrap().to_string();
            g["big_events"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |e| Event {
                    group: key.clone(),
                    instance: e["instance"].as_u64().unwrap(),
                    // a number on one host, `host:id` on several
                    late: match &e["late_device"] {
                        Value::String(d) => d.clone(),
                        d => d.to_string(),
                    },
                    skew_ms: ms(&e["start_skew_ms"]),
                    open: e["open"].as_bool().unwrap_or(false),
                    late_host: e["late_host"].clone(),
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Rows of the panel boxes and the lines around them joined, with the
/// box-drawing and the timeline beside them out of the way: what a reader
/// reads in a panel, wrapped rows put back together.
fn panel_text(s: &str) -> String {
    s.lines()
        .filter_map(|l| l.split('│').nth(1))
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
}

fn find<'a>(list: &'a Value, group: &str, instance: u64) -> Option<&'a Value> {
    list.as_array()?
        .iter()
        .find(|x| x["group"] == group && x["instance"] == instance)
}

#[test]
fn status_line_and_panels_state_what_the_reports_state_at_every_big_event() {
    let mut checked = 0;
    let mut wrong = Vec::new();
    for input in INPUTS {
        let launch = report("launch", input);
        let why = report("why", input);
        let skew = json(&[
            "report",
            "skew",
            "--instances",
            "--format",
            "json",
            "--no-cache",
            input,
        ]);
        for e in big_events(input) {
            let goto = format!("{}:{}", e.group, e.instance);
            let s = screen(input, Some(goto.clone()), "12");
            let status = s.lines().last().unwrap().to_string();
            let panels = panel_text(&s);
            let mut want: Vec<String> = Vec::new();
            if e.open {
                // still open at capture end: the missing rank, no lateness
                want.push(format!(
                    "start skew ≥ {:.3} ms · still open at capture end",
                    e.skew_ms
                ));
                want.push(format!("{} never launched it", tag(&e.late)));
            } else {
                match e.late_host.get("host").and_then(Value::as_str) {
                    // a host whose ranks all started last: the status
                    // line names the host and its margin
                    Some(host) => want.push(format!(
                        "late host {} ({} ranks) +{:.3} ms after every other host's last start",
                        host.split('.').next().unwrap(),
                        e.late_host["ranks"],
                        ms(&e.late_host["margin_ms"])
                    )),
                    None => want.push(format!("late {} +{:.1} ms", tag(&e.late), e.skew_ms)),
                }
                let l = find(&launch["late_instances"], &e.group, e.instance)
                    .unwrap_or_else(|| panic!("{input} {goto}: no launch verdict"));
                let verdict = l["verdict"].as_str().unwrap();
                want.push(format!("· {verdict}"));
                want.push(format!("late rank {}: {verdict}", tag(&e.late)));
                if let Some(w) = find(&why["why"], &e.group, e.instance) {
                    want.push(format!(
                        "delay {} = CPU {} + GPU {}",
                        format_duration(ns(&w["lateness_ms"])),
                        format_duration(ns(&w["cpu_ms"])),
                        format_duration(ns(&w["gpu_ms"]))
                    ));
                }
            }
            let g = skew["groups"]
                .as_array()
                .unwrap()
                .iter()
                .find(|g| g["key"] == e.group.as_str())
                .unwrap();
            let i = &g["instance_list"][(e.instance - 1) as usize];
            assert_eq!(i["instance"], e.instance, "{input} {goto}: {i}");
            if !e.open {
                want.push(format!(
                    "start skew {:.3} ms · end skew {:.3} ms",
                    e.skew_ms,
                    ms(&i["end_skew_ms"])
                ));
            }
            for w in want {
                checked += 1;
                let on_screen = status.contains(&w) || panels.contains(&w);
                if !on_screen {
                    wrong.push(format!("{input} {goto}: {w:?} not on screen\n{s}"));
                }
            }
        }
    }
    assert!(checked >= 40, "{checked}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

/// The title's clock figure is `report clock`'s largest residual p90 with
/// its host.
#[test]
fn the_titles_clock_residual_is_report_clocks() {
    for input in ["fixtures/multinode", "fixtures/per_rank", "fixtures/hang"] {
        let files = report("clock", input)["files"].as_array().unwrap().clone();
        let p90s: Vec<(f64, &str)> = files
            .iter()
            .filter_map(|f| {
                Some((
                    ms(f["residual_end_skew_ms"].get("p90")?),
                    f["host"].as_str()?,
                ))
            })
            .collect();
        let Some(worst) = p90s.iter().map(|x| x.0).reduce(f64::max) else {
            continue;
        };
        if files.len() < 2 {
            continue;
        }
        let s = screen(input, None, "");
        let title = s.lines().next().unwrap();
        let figure = rankline::analysis::clock::short_ms(worst);
        // Any host with the largest figure (ties: the report names one).
        let hosts: Vec<&str> = p90s.iter().filter(|x| x.0 == worst).map(|x| x.1).collect();
        assert!(
            title.contains(&format!("residual p90 {figure}"))
                && hosts.iter().any(|h| title.contains(&format!("worst: {h}"))),
            "{input}: {figure} on {hosts:?}: {title}"
        );
    }
}
