//! The lists over the timeline — load messages (`!`) and the largest start
//! skews (`b`, sorted with `s`) — the clocks `t` cycles through, `y`, and
//! the help naming its keymap: the real state and views on TestBackend.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rankline::analysis::Settings;
use rankline::profile::{CacheDir, Source};
use rankline::tui::data::LoadMsg;
use rankline::tui::keymap::Keymap;
use rankline::tui::messages::Level;
use rankline::tui::state::{App, Overlay};
use rankline::tui::{osc52, ui};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::{Path, PathBuf};

const FIXTURE: &str = "fixtures/megatron_tp8.sqlite";
const SENDRECV: &str = "../shared/real-profiles/nsys2026_2gpu_nccl_sendrecv.sqlite";

fn source(path: &str) -> Source {
    Source::File(PathBuf::from(path))
}

/// An app that loaded `sources` synchronously, as the loop would.
fn loaded(
    keymap: Keymap,
    sources: &[Source],
    cache: Option<&CacheDir>,
    settings: &Settings,
) -> App {
    let mut app = App::new(keymap, false);
    app.load_now(sources, cache, settings);
    assert!(app.capture().data.is_some());
    app
}

fn fixture_app() -> App {
    loaded(
        Keymap::default_keymap(),
        &[source(FIXTURE)],
        None,
        &Settings::default(),
    )
}

fn keys(app: &mut App, terminal: &mut Terminal<TestBackend>, keys: &str) {
    for c in keys.chars() {
        let code = match c {
            '\n' => KeyCode::Enter,
            '\x1b' => KeyCode::Esc,
            c => KeyCode::Char(c),
        };
        app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
        terminal.draw(|f| ui::draw(f, app)).unwrap();
    }
}

fn text(terminal: &Terminal<TestBackend>) -> String {
    let buf = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let line: String = (0..buf.area.width)
            .map(|x| buf[(x, y)].symbol().to_string())
            .collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `app` drawn at `w`×`h` after `typed`.
fn screen(app: &mut App, w: u16, h: u16, typed: &str) -> (Terminal<TestBackend>, String) {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| ui::draw(f, app)).unwrap();
    keys(app, &mut terminal, typed);
    let s = text(&terminal);
    (terminal, s)
}

fn status_line(s: &str) -> &str {
    s.lines().last().unwrap_or("")
}

const LONG_MISSING: &str = "no/such/directory/with/a/rather/long/name/that/goes/on/and/on/past/the/hundredth/column/capture_rank_7.sqlite";

/// A bad file among good ones: the reason stays in the status line (not
/// only until the first key) and `!` lists every load message in full.
#[test]
fn load_messages_stay_and_bang_lists_them_all() {
    let cache = CacheDir {
        // A file where the cache directory should be: the cache is off.
        dir: PathBuf::from("Cargo.toml"),
        cap_bytes: 1 << 30,
    };
    let mut app = loaded(
        Keymap::default_keymap(),
        &[
            source(FIXTURE),
            source("no/such.sqlite"),
            source(LONG_MISSING),
        ],
        Some(&cache),
        &Settings::default(),
    );
    let levels: Vec<Level> = app
        .session()
        .messages
        .all()
        .iter()
        .map(|m| m.level)
        .collect();
    assert_eq!(
        levels,
        [Level::Error, Level::Error, Level::Warn],
        "{:?}",
        app.session().messages
    );
    let newest = app.session().messages.newest().unwrap().text.clone();
    assert!(newest.contains("Cargo.toml"), "{newest}");

    let (mut terminal, s) = screen(&mut app, 160, 48, "");
    assert!(status_line(&s).contains("Cargo.toml"), "{s}");
    assert!(status_line(&s).contains("! all 3"), "{s}");
    // A key that says something else, then one that says nothing: the
    // newest load message is back, and what the key said is listed.
    keys(&mut app, &mut terminal, "J");
    assert!(status_line(&text(&terminal)).contains("select a kernel or a launch call first"));
    keys(&mut app, &mut terminal, "w");
    assert!(status_line(&text(&terminal)).contains("Cargo.toml"));
    assert!(status_line(&text(&terminal)).contains("! all 4"));

    // The same failure said again is not listed twice.
    app.on_load(LoadMsg::FileError(
        app.session().messages.all()[0].text.clone(),
    ));
    assert_eq!(app.session().messages.len(), 4);

    let now_s = |_: ()| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            % 86_400
    };
    let said_by = now_s(());
    keys(&mut app, &mut terminal, "!");
    assert!(matches!(app.chrome().overlay, Overlay::Messages(s) if s.top == 0));
    let s = text(&terminal);
    assert!(s.contains("messages (4, UTC times)"), "{s}");
    // Each message has the UTC time it was said, after the level.
    let times = regex::Regex::new(r"(error|warning|info) +(\d\d):(\d\d):(\d\d)Z ").unwrap();
    let said: Vec<u64> = times
        .captures_iter(&s)
        .map(|c| (1..=3).fold(0, |t, i| t * 60 + c[i + 1].parse::<u64>().unwrap()))
        .collect();
    assert_eq!(said.len(), 4, "{s}");
    // Said during this test, a few seconds at most before the list
    // opened (a test straddling midnight UTC is let pass).
    assert!(
        said.iter()
            .all(|&t| t <= said_by && said_by - t < 120 || said_by < 120),
        "{said:?} before {said_by}: {s}"
    );
    assert!(s.contains("select a kernel or a launch call first"), "{s}");
    assert!(s.contains("no/such.sqlite: no such file"), "{s}");
    // The long path is whole, wrapped inside the list (100 columns wide
    // at 160, text from its 11th column), not cut.
    let listed: String = s
        .lines()
        .map(|l| {
            l.chars()
                .skip(30 + 1 + 10 + 10)
                .take(100 - 2 - 10 - 10)
                .collect::<String>()
        })
        .collect();
    assert!(
        listed.contains(&format!("{LONG_MISSING}: no such file")),
        "{s}"
    );
    let s = regex::Regex::new(r"\d\d:\d\d:\d\dZ ")
        .unwrap()
        .replace_all(&s, "HH:MM:SSZ ");
    insta::assert_snapshot!("messages_list", s);
    keys(&mut app, &mut terminal, "!");
    assert_eq!(app.chrome().overlay, Overlay::None);
}

/// A message of words wraps between words: each word reads whole on one
/// row of the list, at 160 and at 80 columns.
#[test]
fn bang_wraps_messages_between_words() {
    let words = "rank3.sqlite could not be read: the export stops inside its \
                 CUPTI_ACTIVITY_KIND_KERNEL table after 1048576 rows, so every \
                 figure leaves out that rank's remaining kernels";
    for (w, h) in [(160, 48), (80, 24)] {
        let mut app = fixture_app();
        app.on_load(LoadMsg::FileError(words.to_string()));
        let (_, s) = screen(&mut app, w, h, "!");
        for word in words.split(' ') {
            assert!(s.contains(word), "{word:?} split at {w} columns:\n{s}");
        }
    }
}

#[test]
fn bang_without_messages_says_so() {
    // A capture without big events: nothing is said on opening it.
    let mut app = loaded(
        Keymap::default_keymap(),
        &[source("fixtures/diff/no_big_skew.sqlite")],
        None,
        &Settings::default(),
    );
    assert!(
        app.session().messages.is_empty(),
        "{:?}",
        app.session().messages
    );
    let (_, s) = screen(&mut app, 120, 30, "!");
    assert!(matches!(app.chrome().overlay, Overlay::Messages(_)));
    assert!(s.contains("no messages: every input loaded"), "{s}");
}

/// Instance numbers (group:instance) of the `b` list's rows, top to bottom.
fn listed(s: &str) -> Vec<(String, usize, f64)> {
    s.lines()
        .filter_map(|l| {
            let inner = l.split('│').nth(1)?;
            let w: Vec<&str> = inner.split_whitespace().collect();
            let w: Vec<&str> = w.into_iter().filter(|x| *x != "●").collect();
            let inst = w.get(1)?.parse().ok()?;
            // The skew column is in ms, every row (its heading says so).
            let ms: f64 = w.get(3)?.parse().ok()?;
            Some((w[0].to_string(), inst, ms))
        })
        .collect()
}

#[test]
fn b_lists_the_20_largest_skews_and_s_sorts_by_time() {
    let mut app = fixture_app();
    let (mut terminal, s) = screen(&mut app, 160, 48, "b");
    assert!(
        s.contains("group")
            && s.contains("inst")
            && s.contains("verdict")
            && s.contains("largest cause"),
        "{s}"
    );
    let header = s.lines().find(|l| l.contains("verdict")).unwrap();
    let cols: Vec<&str> = header
        .split('│')
        .nth(1)
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        cols,
        [
            "group", "inst", "op", "skew", "ms", "late", "verdict", "largest", "cause"
        ]
    );
    // The largest cause comes from each late rank's account: the Megatron
    // fixture's D4 spent its delay on the CPU in the forward NVTX range
    // (where it was, not a cause); D3's wait is on the GPU with no sync
    // records to follow.
    let row = |inst: &str| {
        s.lines()
            .find(|l| l.contains(&format!(" {inst} ")) && l.contains("s20"))
            .unwrap()
            .to_string()
    };
    assert!(row("145").contains("cpu, in forward"), "{s}");
    assert!(!row("145").contains("nvtx"), "{s}");
    assert!(row("100").contains("gpu: ?"), "{s}");
    let rows = listed(&s);
    assert_eq!(rows.len(), 20, "{s}");
    // Largest first; the worst of the fixture on top.
    assert!(rows.windows(2).all(|w| w[0].2 >= w[1].2), "{rows:?}");
    assert_eq!((rows[0].0.as_str(), rows[0].1), ("s20", 145), "{s}");
    // The 4 above the default 20 ms threshold are marked.
    assert_eq!(s.matches('●').count(), 4 + 1, "{s}");
    insta::assert_snapshot!("big_list_by_skew", s);

    keys(&mut app, &mut terminal, "s");
    let s = text(&terminal);
    assert!(s.contains("in time order"), "{s}");
    let by_time = listed(&s);
    let l = app.capture().data.clone().unwrap();
    let starts: Vec<i64> = app.big_list(&l).iter().map(|r| r.start).collect();
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");
    let mut a: Vec<_> = rows.iter().map(|r| (r.0.clone(), r.1)).collect();
    let mut b: Vec<_> = by_time.iter().map(|r| (r.0.clone(), r.1)).collect();
    assert_ne!(a, b, "the order did not change");
    a.sort();
    b.sort();
    assert_eq!(a, b, "sorting changed which instances are listed");
    insta::assert_snapshot!("big_list_by_time", s);

    // Enter jumps to the selected row: the first in time.
    keys(&mut app, &mut terminal, "\n");
    let first = &app.big_list(&l)[0];
    assert_eq!(
        app.capture().instance(),
        Some((first.group, first.instance))
    );
}

#[test]
fn the_threshold_only_marks_big_rows() {
    let settings = Settings {
        big_skew_ns: 1_000_000,
        ..Settings::default()
    };
    let mut app = loaded(
        Keymap::default_keymap(),
        &[source(FIXTURE)],
        None,
        &settings,
    );
    let l = app.capture().data.clone().unwrap();
    let default = fixture_app().capture().data.clone().unwrap();
    // The same 20 instances, more of them marked big.
    assert_eq!(
        l.top_skews
            .iter()
            .map(|r| (r.group, r.instance))
            .collect::<Vec<_>>(),
        default
            .top_skews
            .iter()
            .map(|r| (r.group, r.instance))
            .collect::<Vec<_>>()
    );
    let big = l.top_skews.iter().filter(|r| r.big).count();
    assert!(big > 4, "{big}");
    let (_, s) = screen(&mut app, 160, 48, "b");
    assert_eq!(s.matches('●').count(), big + 1, "{s}");
    assert!(s.contains("above 1.00 ms"), "{s}");
}

fn real(path: &str) -> Source {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    assert!(p.is_file(), "{} is missing", p.display());
    Source::File(p)
}

/// On a real capture whose skews are all below the default threshold, `b`
/// still lists its instances; `--big-skew-ms 1` makes `]` find some.
#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn b_lists_instances_of_a_real_capture_with_small_skews() {
    let mut app = loaded(
        Keymap::default_keymap(),
        &[real(SENDRECV)],
        None,
        &Settings::default(),
    );
    let (mut terminal, s) = screen(&mut app, 160, 48, "b");
    let rows = listed(&s);
    assert_eq!(rows.len(), 20, "{s}");
    // Largest first: instance 32 at 3.340 ms (as `report skew` says).
    assert_eq!(rows[0].1, 32, "{s}");
    assert!((rows[0].2 - 3.34).abs() < 0.01, "{rows:?}");
    // Only the legend's mark: nothing is above 20 ms.
    assert_eq!(s.matches('●').count(), 1, "{s}");
    assert!(s.contains("SendRecv"), "{s}");
    keys(&mut app, &mut terminal, "\x1b]");
    assert!(status_line(&text(&terminal)).contains("no big start-skew events"));

    let settings = Settings {
        big_skew_ns: 1_000_000,
        ..Settings::default()
    };
    let mut app = loaded(Keymap::default_keymap(), &[real(SENDRECV)], None, &settings);
    let (_, s) = screen(&mut app, 160, 48, "]");
    assert!(app.capture().instance().is_some(), "{s}");
    let (_, s) = screen(&mut app, 160, 48, "b");
    // Instances 14, 30 and 32 are above 1 ms.
    assert_eq!(s.matches('●').count(), 3 + 1, "{s}");
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn t_cycles_to_utc_wall_clock_time_on_a_capture_that_records_it() {
    let mut app = loaded(
        Keymap::default_keymap(),
        &[real(SENDRECV)],
        None,
        &Settings::default(),
    );
    let (mut terminal, s) = screen(&mut app, 160, 48, "t");
    assert!(s.contains("time (rel)"), "{s}");
    keys(&mut app, &mut terminal, "t");
    let s = text(&terminal);
    assert!(s.contains("time (utc)"), "{s}");
    // The session started at 2026-05-26T07:58:50 UTC (utcTime in the
    // export) at boot-clock time 28.25 s (systemClockNs, ANALYSIS_DETAILS
    // startTime); the kernels run at about 60.1 to 60.4 s, 31.9 s later.
    let title = s.lines().next().unwrap();
    assert!(title.contains("2026-05-26 07:59 UTC"), "{title}");
    let ruler = s.lines().find(|l| l.contains("time (utc)")).unwrap();
    assert!(ruler.contains("07:59:22."), "{ruler}");
    insta::assert_snapshot!("utc_ruler", s);
    // g reads the ruler's clock: a UTC time of day, or one with a log's zone.
    keys(&mut app, &mut terminal, "g");
    assert!(
        text(&terminal).contains("go to time (UTC: 07:59:50.5, +02:00 for a zone, or ISO)"),
        "{}",
        text(&terminal)
    );
    let l = app.data().unwrap();
    let origin = app.utc_origin(&l).expect("UTC on the ruler");
    let centre_utc = |app: &App| origin + app.capture().view.center() as i64;
    // A millisecond inside the kernels' span, zoomed in so the view can
    // centre on it.
    let (a, b) = l.span.unwrap();
    let want = (origin + (a + b) / 2) / 1_000_000 * 1_000_000;
    let c = rankline::tui::wallclock::civil(want);
    assert_eq!((c.hour, c.minute), (7, 59));
    let ms = c.nanos / 1_000_000;
    keys(&mut app, &mut terminal, "\x1bwwwww");
    for typed in [
        format!("g07:59:{:02}.{ms:03}\n", c.second),
        format!("g09:59:{:02}.{ms:03}+02:00\n", c.second),
        format!("g2026-05-26T07:59:{:02}.{ms:03}Z\n", c.second),
    ] {
        // Away first, so that each time typed has to bring the view back.
        keys(&mut app, &mut terminal, "aaaa");
        assert!((centre_utc(&app) - want).abs() > 1_000_000);
        keys(&mut app, &mut terminal, &typed);
        assert!(
            (centre_utc(&app) - want).abs() < 1_000,
            "{typed}: {} ns off",
            centre_utc(&app) - want
        );
    }
    keys(&mut app, &mut terminal, "g22.3\n");
    assert!(
        status_line(&text(&terminal)).contains("not a wall-clock time: 22.3"),
        "{}",
        text(&terminal)
    );
    keys(&mut app, &mut terminal, "t");
    assert!(text(&terminal).contains("time (abs)"));
    keys(&mut app, &mut terminal, "g");
    assert!(text(&terminal).contains("seconds on the capture clock"));
}

#[test]
fn without_a_utc_stamp_t_skips_utc_and_says_why() {
    let mut app = fixture_app();
    let (mut terminal, _) = screen(&mut app, 160, 48, "t");
    keys(&mut app, &mut terminal, "t");
    let s = text(&terminal);
    assert!(s.contains("time (abs)"), "{s}");
    assert!(status_line(&s).contains("no UTC start stamp"), "{s}");
}

#[test]
fn help_names_the_active_keymap_file() {
    let mut app = fixture_app();
    let (_, s) = screen(&mut app, 160, 48, "?");
    assert!(
        s.contains("keymap: the built-in keymaps/default.toml"),
        "{s}"
    );
    let vim = Keymap::load(Some(Path::new("keymaps/vim.toml"))).unwrap();
    let mut app = loaded(vim, &[source(FIXTURE)], None, &Settings::default());
    let (_, s) = screen(&mut app, 160, 48, "?");
    assert!(
        s.contains("keymap: keymaps/vim.toml over the built-in keymaps/default.toml"),
        "{s}"
    );
    insta::assert_snapshot!("help_vim_keymap", s);
}

#[test]
fn y_copies_the_goto_reference_or_the_kernel_name() {
    let mut app = fixture_app();
    let (mut terminal, s) = screen(&mut app, 160, 48, "y");
    assert!(app.session().clipboard.is_none());
    assert!(status_line(&s).contains("nothing selected"), "{s}");
    keys(&mut app, &mut terminal, "]y");
    let (g, k) = app.capture().instance().unwrap();
    let l = app.capture().data.clone().unwrap();
    let reference = format!("{}:{}", l.analysis.matching.groups[g].key, k + 1);
    assert_eq!(reference, "s20:55");
    assert_eq!(app.take_clipboard(), Some(osc52::copy_sequence("s20:55")));
    assert!(status_line(&text(&terminal)).contains("s20:55"));
    // A kernel outside any collective: its name.
    let r = (0..l.profile.gpu.len())
        .find(|&r| {
            l.analysis.matching.instance_of(r).is_none()
                && l.profile.gpu.launch(r) != rankline::profile::NONE
        })
        .unwrap();
    app.select(Some(rankline::tui::state::EventRef::Gpu(r)), true);
    keys(&mut app, &mut terminal, "y");
    let name = l.profile.strings.get(l.profile.gpu.name(r)).to_string();
    assert_eq!(app.take_clipboard(), Some(osc52::copy_sequence(&name)));
}

/// Everything a popup holds, read by scrolling it: the rows inside its
/// frame, page after page (PgDn), until `↓ more` is gone.
fn read_whole_popup(app: &mut App, terminal: &mut Terminal<TestBackend>) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for _ in 0..40 {
        let s = text(terminal);
        for l in s.lines() {
            if let Some(inner) = l.split('│').nth(1) {
                let inner = inner.trim_end().to_string();
                if !seen.contains(&inner) {
                    seen.push(inner);
                }
            }
        }
        if !s.contains("↓ more") {
            return seen;
        }
        app.on_key(KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE));
        terminal.draw(|f| ui::draw(f, app)).unwrap();
    }
    panic!("the popup never reached its end")
}

/// Help ends with a glossary of every term the screens use, the legend
/// explains lane labels, both read whole at 80×24 (scrolled, nothing cut
/// at the frame), and `L` closes the legend it opened.
#[test]
fn help_defines_every_term_and_the_legend_every_lane_label_at_both_sizes() {
    for (w, h) in [(80, 24), (160, 48)] {
        let mut app = fixture_app();
        let (mut terminal, _) = screen(&mut app, w, h, "?");
        let help = read_whole_popup(&mut app, &mut terminal);
        let glossary = help
            .iter()
            .position(|l| l.contains("glossary: what the screens' labels and figures mean"))
            .expect("a glossary");
        for term in [
            "cpu-late",
            "gpu-side",
            "wait",
            "excess",
            "hid%",
            "comp nccl ovl",
            "copy idle",
            "not-resolvable",
            "late host",
            "S20",
            "T4101 API",
            "T4101 nvtx0",
            "T4101 nvtx±",
            "▾ ▸",
            "72×",
        ] {
            assert!(
                help[glossary..]
                    .iter()
                    .any(|l| l.starts_with(&format!("  {term} "))),
                "{w}x{h}: {term} not defined: {help:#?}"
            );
        }
        // Every key's description whole (wrapped, not cut at the frame).
        let words = help
            .iter()
            .flat_map(|l| l.split_whitespace())
            .collect::<Vec<_>>()
            .join(" ");
        for mode in rankline::tui::action::Mode::ALL {
            for (_, desc) in app.session().keymap.help(mode) {
                let desc = desc.split_whitespace().collect::<Vec<_>>().join(" ");
                assert!(words.contains(&desc), "{w}x{h}: {desc:?} cut");
            }
        }
        keys(&mut app, &mut terminal, "\x1bL");
        let legend = read_whole_popup(&mut app, &mut terminal);
        assert!(
            legend.iter().any(|l| l.contains("lane labels")),
            "{legend:#?}"
        );
        assert!(legend.iter().any(|l| l.contains("S20 NCCL")), "{legend:#?}");
        assert!(legend.iter().any(|l| l.contains("nvtx±")), "{legend:#?}");
        keys(&mut app, &mut terminal, "L");
        assert_eq!(app.chrome().overlay, Overlay::None, "L toggles the legend");
    }
}
