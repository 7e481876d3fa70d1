//! `rankline bench FILE`: the figures behind BENCHMARKS.md — open rate
//! against the `sqlite3` shell scanning the same columns, memory per event,
//! analysis time and frame time at several zooms. Figures are printed, never
//! asserted.

use rankline::analysis::Window;
use rankline::analysis::bundle::{Settings, analyze};
use rankline::analysis::matching::match_collectives;
use rankline::analysis::overlap::overlap;
use rankline::analysis::skew::skew;
use rankline::profile::{self, Profile, spec};
use rankline::tui::data::Loaded;
use rankline::tui::keymap::Keymap;
use rankline::tui::state::App;
use rankline::tui::timescale::View;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Resident memory of this process, bytes (Linux).
fn rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

/// Rows and seconds of the `sqlite3` shell scanning exactly the columns
/// rankline loads, one query per table.
fn sqlite3_baseline(file: &Path) -> Result<(u64, Duration), String> {
    let conn =
        rusqlite::Connection::open_with_flags(file, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| e.to_string())?;
    let mut rows = 0u64;
    let mut time = Duration::ZERO;
    for t in spec::LOADED {
        let cols: Vec<String> = {
            let mut st = conn
                .prepare(&format!("PRAGMA table_info(\"{}\")", t.table))
                .map_err(|e| e.to_string())?;
            st.query_map([], |r| r.get::<_, String>(1))
                .map_err(|e| e.to_string())?
                .filter_map(Result::ok)
                .collect()
        };
        if cols.is_empty() {
            continue;
        }
        let exprs: Vec<String> = t
            .columns
            .iter()
            .filter(|c| cols.iter().any(|x| x == c.0))
            .map(|c| {
                if c.2 {
                    format!("total(length(\"{}\"))", c.0)
                } else {
                    format!("total(\"{}\")", c.0)
                }
            })
            .collect();
        let n: i64 = conn
            .query_row(
                &format!("SELECT count(*) FROM \"{}\" {}", t.table, t.filter),
                [],
                |r| r.get(0),
            )
            .map_err(|e| e.to_string())?;
        let sql = format!(
            "SELECT {} FROM \"{}\" {}",
            exprs.join(", "),
            t.table,
            t.filter
        );
        let t0 = Instant::now();
        let out = Command::new("sqlite3")
            .arg("-readonly")
            .arg(file)
            .arg(&sql)
            .output()
            .map_err(|e| {
                format!("cannot run sqlite3 ({e}); install it (apt-get install sqlite3)")
            })?;
        time += t0.elapsed();
        if !out.status.success() {
            return Err(format!(
                "sqlite3 failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        rows += n as u64;
    }
    Ok((rows, time))
}

/// Mean time of `frames` draws of a 200×60 timeline showing `view`.
fn frame_time(loaded: &Arc<Loaded>, view: View, frames: u32) -> Duration {
    let mut app = App::new(Keymap::default_keymap(), false);
    app.set_loaded(loaded.clone());
    app.view = view;
    let mut term = Terminal::new(TestBackend::new(200, 60)).expect("test backend");
    term.draw(|f| rankline::tui::ui::draw(f, &mut app))
        .expect("draw");
    let t0 = Instant::now();
    for _ in 0..frames {
        term.draw(|f| rankline::tui::ui::draw(f, &mut app))
            .expect("draw");
    }
    t0.elapsed() / frames
}

fn events(p: &Profile) -> usize {
    p.gpu.len() + p.runtime.len() + p.nvtx.len()
}

pub fn run(file: PathBuf) -> Result<(), String> {
    println!("rankline bench {}", file.display());
    let size = std::fs::metadata(&file)
        .map_err(|e| format!("{}: {e}", file.display()))?
        .len();
    println!("  file size: {:.1} MiB", size as f64 / (1 << 20) as f64);

    let (base_rows, base_time) = sqlite3_baseline(&file)?;
    let base_rate = base_rows as f64 / base_time.as_secs_f64();
    println!(
        "  sqlite3 shell, same columns: {base_rows} rows in {} = {:.2} M rows/s",
        secs(base_time),
        base_rate / 1e6
    );

    let rss0 = rss().unwrap_or(0);
    let t0 = Instant::now();
    let (p, errors) = profile::load(std::slice::from_ref(&file), &mut |_, _, _| {});
    let open = t0.elapsed();
    if let Some(e) = errors.first() {
        return Err(e.to_string());
    }
    let rate = base_rows as f64 / open.as_secs_f64();
    println!(
        "  first open (no cache): {} = {:.2} M rows/s = {:.0}% of sqlite3",
        secs(open),
        rate / 1e6,
        100.0 * rate / base_rate
    );
    let n = events(&p);
    println!(
        "  model: {} kernels/copies, {} runtime calls, {} NVTX = {} events",
        p.gpu.len(),
        p.runtime.len(),
        p.nvtx.len(),
        n
    );

    let settings = Settings::default();
    let t0 = Instant::now();
    let classes = rankline::analysis::kernel_class::KernelClasses::new(&p, None);
    let m = match_collectives(&p, &classes);
    let steps = rankline::analysis::steps::Steps::new(&p, &settings.step_marker);
    let sk = skew(&p, &m, &steps, Window::ALL, settings.big_skew_ns);
    let matching = t0.elapsed();
    let instances: usize = sk.iter().map(|g| g.instances.len()).sum();
    println!(
        "  matching + skew: {} ({} groups, {} instances)",
        secs(matching),
        m.groups.len(),
        instances
    );
    let t0 = Instant::now();
    let ov = overlap(&p, &classes, Window::ALL);
    println!(
        "  overlap, all devices: {} ({} devices)",
        secs(t0.elapsed()),
        ov.len()
    );

    let t0 = Instant::now();
    let loaded = Arc::new(Loaded::build(p, &settings, &mut |_| {}));
    println!("  all analyses + render index: {}", secs(t0.elapsed()));
    let rss1 = rss().unwrap_or(0);
    println!(
        "  resident memory after load, ready to draw: {:.1} MiB = {:.1} bytes per event",
        (rss1.saturating_sub(rss0)) as f64 / (1 << 20) as f64,
        rss1.saturating_sub(rss0) as f64 / n.max(1) as f64
    );

    let (a, b) = loaded.profile.span().unwrap_or((0, 1));
    let mid = (a + b) / 2;
    let kernel = (0..loaded.profile.gpu.len())
        .find(|&i| loaded.profile.gpu.start[i] >= mid)
        .unwrap_or(0);
    let (ks, ke) = (
        loaded.profile.gpu.start[kernel],
        loaded.profile.gpu.end[kernel],
    );
    for (label, view) in [
        ("whole profile", View::fit(a, b)),
        (
            "1 ms window",
            View {
                t0: mid as f64,
                span: 1e6,
            },
        ),
        (
            "one kernel",
            View {
                t0: ks as f64,
                span: ((ke - ks) as f64).max(10.0),
            },
        ),
    ] {
        let t = frame_time(&loaded, view, 20);
        println!("  frame 200x60, {label}: {:.2} ms", t.as_secs_f64() * 1e3);
    }
    let _ = analyze;
    Ok(())
}
