//! `E` on the timeline: the selected instance on every rank (its kernels
//! on all the group's devices, and the window around them), else exactly
//! the lanes on screen over the visible window; written by the real binary
//! under $XDG_STATE_HOME/rankline/exports, said in a message, never beside
//! the input.

mod common;

use common::tui::*;
use rankline::tui::export::run as run_export;
use rankline::tui::lanes::LaneKind;

const MEGATRON: &str = "megatron_tp8.sqlite";

/// The trace written for `job` by the command line's writer.
fn written(job: &rankline::tui::export::ExportJob, test: &str) -> serde_json::Value {
    let dir = common::temp_dir(test);
    let exporter: rankline::tui::export::Exporter =
        std::sync::Arc::new(|p, a, w, tr, paths, path| {
            let trace = rankline::report::trace::Trace {
                profile: p,
                analysis: a,
                window: w,
                tracks: tr,
                marks: &[],
                paths,
                max_events: 1_000_000,
            };
            rankline::report::trace::write_file(path, &[], &trace)
                .map_err(|e| e.to_string())
                .map(|n| format!("{} events", n.events()))
        });
    let line = run_export(&exporter, job, &dir, "megatron_tp8", "20261204T000000Z").unwrap();
    let path = dir.join("megatron_tp8-".to_string() + &job.what + "-20261204T000000Z.json.gz");
    assert!(
        line.starts_with(&format!("exported {}", path.display())),
        "{line}"
    );
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap()),
        &mut text,
    )
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn e_on_an_instance_exports_its_kernels_on_every_rank() {
    let (mut app, mut t) = open_at(&[fixture(MEGATRON)], Some("s20:55"), 160, 48);
    press(&mut app, &mut t, "E");
    let job = app.take_export().expect("an export asked for");
    assert_eq!(job.described, "s20:55 on every rank");
    let l = app.capture().data().unwrap();
    let m = &l.analysis.matching;
    let g = m.group("s20").unwrap();
    let members: Vec<_> = m.groups[g].members(54).collect();
    assert!(members.len() > 2);
    for (_, _, (s, e)) in &members {
        assert!(job.window.start < *s && *e < job.window.end);
    }
    let v = written(&job, "tui-export-instance");
    let of_instance = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["args"]["group"] == "s20" && e["args"]["instance"] == 55)
        .count();
    assert_eq!(of_instance, members.len(), "every rank's kernel of s20:55");
}

#[test]
fn e_without_a_selection_exports_the_lanes_on_screen() {
    let (mut app, mut t) = open_at(&[fixture(MEGATRON)], None, 160, 48);
    press(&mut app, &mut t, "jjjE");
    let job = app.take_export().expect("an export asked for");
    assert_eq!(job.described, "the visible window and lanes");
    let c = &app.capture();
    let s = &c.lanes.scroll;
    let on_screen: Vec<LaneKind> = c.lanes.rows[s.top..(s.top + s.visible).min(c.lanes.rows.len())]
        .iter()
        .map(|r| r.kind)
        .collect();
    assert!(
        on_screen.len() < c.lanes.rows.len(),
        "some lanes are off screen"
    );
    let l = c.data().unwrap();
    let p = &l.profile;
    for lane in 0..p.lanes.len() {
        let shown = on_screen.iter().any(|k| match *k {
            LaneKind::Stream(x) => x as usize == lane,
            LaneKind::Device(d) => p.lanes[lane].device == d,
            _ => false,
        });
        assert_eq!(job.tracks.lane(lane), shown, "lane {lane}");
    }
    let v = written(&job, "tui-export-view");
    let (a, b) = (job.window.start as f64 / 1e3, job.window.end as f64 / 1e3);
    let events: Vec<_> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .collect();
    assert!(!events.is_empty());
    for e in events {
        let (s, d) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
        assert!(s <= b + 1e-3 && s + d >= a - 1e-3, "{e}");
    }
}

/// Once the steps view has derived the steps, `E` adds their critical
/// paths as a track: every segment overlapping the window, each with its
/// step; before, the export has none.
#[test]
fn e_after_the_steps_view_adds_the_critical_paths() {
    let (mut app, mut t) = open_at(&[fixture("jobs/3d_dedicated.sqlite")], None, 160, 48);
    press(&mut app, &mut t, "E");
    assert!(app.take_export().expect("an export").steps.is_none());
    press(&mut app, &mut t, "P");
    key(&mut app, &mut t, crossterm::event::KeyCode::Esc);
    press(&mut app, &mut t, "E");
    let job = app.take_export().expect("an export asked for");
    let o = job.steps.clone().expect("the steps' figures");
    let (a, b) = (job.window.start, job.window.end);
    let want = o
        .paths
        .iter()
        .flat_map(|sp| &sp.path)
        .filter(|s| s.start < b && s.end > a)
        .count();
    assert!(want > 0);
    let v = written(&job, "tui-export-paths");
    let got: Vec<_> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "critical_path")
        .collect();
    assert_eq!(got.len(), want);
    assert!(got.iter().all(|e| e["args"]["step"].is_u64()));
}
