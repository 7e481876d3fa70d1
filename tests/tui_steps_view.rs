//! The steps view (`P`): every cell is the figure `report steps` gives
//! for that step and rank, drawn as the report rounds it; Enter goes to
//! the step on the timeline with its critical path marked, and `n` walks
//! along the path to the cause the report ranks first.

mod common;

use common::tui::*;
use crossterm::event::KeyCode;
use rankline::tui::selection::{EventRef, JumpSource, Screen};
use rankline::tui::steps_view::StepFigure;
use serde_json::Value;

const JOB: &str = "jobs/3d_dedicated.sqlite";

fn report() -> Value {
    common::json(&[
        "report",
        "steps",
        "--no-cache",
        "--format",
        "json",
        "fixtures/jobs/3d_dedicated.sqlite",
    ])
}

/// The report's figure for a rank in a step (ms), as the view names it.
fn reported(step: &Value, rank: &Value, f: StepFigure) -> Option<f64> {
    let ms = |k: &str| rank[k].as_f64().unwrap();
    Some(match f {
        StepFigure::Waiting => ms("waiting_ms"),
        StepFigure::Transfer => ms("transfer_ms"),
        StepFigure::HostBound => ms("host_bound_ms"),
        StepFigure::Dependency => ms("dependency_ms"),
        StepFigure::Idle => ms("idle_ms"),
        StepFigure::Compute => ms("compute_ms") + ms("overlapped_ms"),
        StepFigure::OnPath => step["critical_path"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["device"] == rank["device"])
            .map(|s| s["ms"].as_f64().unwrap())
            .sum(),
        // Not in the report per rank: the view's own unit test has it.
        StepFigure::Slowdown => return None,
    })
}

#[test]
fn every_cell_is_the_reports_figure() {
    let want = report();
    let (mut app, mut t) = open_at(&[fixture(JOB)], None, 160, 48);
    press(&mut app, &mut t, "P");
    assert_eq!(app.chrome().screen, Screen::Steps);
    let c = app.capture();
    let o = c.steps_now().expect("derived").clone();
    let steps = want["steps"].as_array().unwrap();
    assert_eq!(o.accounts.len(), steps.len());
    let mut checked = 0;
    for (s, step) in steps.iter().enumerate() {
        let ranks = step["ranks"].as_array().unwrap();
        assert_eq!(o.accounts[s].ranks.len(), ranks.len());
        for (r, rank) in ranks.iter().enumerate() {
            for f in StepFigure::ALL {
                let Some(ms) = reported(step, rank, f) else {
                    continue;
                };
                let got = f.value(&o, s, r).unwrap() as f64 / 1e6;
                assert!(
                    (got - ms).abs() < 2e-6,
                    "step {} rank {r} {}: view {got} report {ms}",
                    s + 1,
                    f.name()
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 3 * 8 * 7);
    // Drawn: step 2's row of waiting, each rank's figure as the view
    // rounds it, in rank order.
    let text = screen(&t);
    let row = text
        .lines()
        .find(|l| l.starts_with("    2 "))
        .unwrap_or_else(|| panic!("{text}"));
    let drawn: Vec<&str> = row.split_whitespace().skip(2).collect();
    let expected: Vec<String> = steps[1]["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| ms2(r["waiting_ms"].as_f64().unwrap()))
        .collect();
    assert_eq!(drawn, expected, "{text}");
    assert!(
        text.contains("first to fix: os_wait on D3 (pthread_cond_wait)"),
        "{text}"
    );
}

/// Milliseconds with two significant digits, as the cells show them.
fn ms2(ms: f64) -> String {
    match ms {
        0.0 => "·".into(),
        m if m >= 10.0 => format!("{m:.0}"),
        m if m >= 1.0 => format!("{m:.1}"),
        m if m >= 0.1 => format!("{m:.2}"),
        m => format!("{m:.3}"),
    }
}

#[test]
fn enter_opens_the_step_and_n_walks_its_path_to_the_stall() {
    let (mut app, mut t) = open_at(&[fixture(JOB)], None, 160, 48);
    press(&mut app, &mut t, "P");
    // Step 2 (the first after warm-up) is where the cursor opens; D3 is
    // the stalled rank.
    for _ in 0..3 {
        key(&mut app, &mut t, KeyCode::Right);
    }
    key(&mut app, &mut t, KeyCode::Enter);
    assert_eq!(app.chrome().screen, Screen::Timeline);
    let c = app.capture();
    let Some(JumpSource::Path { step, events }) = c.jump.clone() else {
        panic!("{:?}", c.jump)
    };
    assert_eq!(step, 2);
    let o = c.steps_now().unwrap().clone();
    let span = o.accounts[1].span;
    // The window holds the step.
    let w = c.view.window();
    assert!(w.start <= span.0 && w.end >= span.1, "{w:?} {span:?}");
    let l = c.data().unwrap();
    let mut found = false;
    for _ in 0..events.len() {
        if let Some(EventRef::Osrt(r)) = app.capture().selection {
            let name = l.profile.strings.get(l.profile.osrt.name(r));
            assert_eq!(name, "pthread_cond_wait");
            found = true;
            break;
        }
        press(&mut app, &mut t, "n");
    }
    assert!(found, "n never reached the OS wait on the path");
    assert!(
        screen(&t).contains("critical path of step 2 · row"),
        "{}",
        screen(&t)
    );
    // Back: the steps view again.
    key(&mut app, &mut t, KeyCode::Backspace);
    while app.chrome().screen != Screen::Steps {
        key(&mut app, &mut t, KeyCode::Backspace);
    }
}

#[test]
fn the_view_says_it_computes_then_fits_80_columns() {
    let (mut app, mut t) = open_at(&[fixture(JOB)], None, 80, 24);
    app.on_key(crossterm::event::KeyEvent::new(
        KeyCode::Char('P'),
        crossterm::event::KeyModifiers::NONE,
    ));
    t.draw(|f| rankline::tui::ui::draw(f, &mut app)).unwrap();
    assert!(screen(&t).contains("computing"), "{}", screen(&t));
    draw(&mut app, &mut t);
    let text = screen(&t);
    assert!(text.contains("3 steps × 8 ranks"), "{text}");
    // Too narrow for values: one glyph per rank, then the cursor's account.
    assert!(text.contains("step 2 · 58.7 ms · D0"), "{text}");
    key(&mut app, &mut t, KeyCode::Tab);
    assert!(screen(&t).contains("cells: transfer"), "{}", screen(&t));
    key(&mut app, &mut t, KeyCode::Esc);
    assert_eq!(app.chrome().screen, Screen::Timeline);
}

#[test]
fn a_capture_without_steps_says_how_to_find_them() {
    let (mut app, mut t) = open_at(&[fixture("why.sqlite")], None, 160, 48);
    press(&mut app, &mut t, "P");
    let text = screen(&t);
    assert!(
        text.contains("no step ranges") && text.contains("--step-marker"),
        "{text}"
    );
    // Enter there does nothing; Esc goes back.
    key(&mut app, &mut t, KeyCode::Enter);
    assert_eq!(app.chrome().screen, Screen::Steps);
    key(&mut app, &mut t, KeyCode::Esc);
    assert_eq!(app.chrome().screen, Screen::Timeline);
}
