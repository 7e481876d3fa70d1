//! The event loop: input on its own thread, loading on a blocking task,
//! redraws coalesced to at most one frame per ~16 ms and none when idle.
//! The terminal is restored on every exit path, panics and signals included.

use super::bookmark_jobs::{BookmarkJob, BookmarksDone};
use super::data::{self, LoadMsg};
use super::derive_jobs::{DeriveDone, DeriveJob};
use super::export::{self, ExportJob, Exporter};
use super::keymap::Keymap;
use super::state::App;
use super::terminal_rescue;
use crate::analysis::Settings;
use crate::profile::Source;
use crossterm::event::{self, Event};
use std::io::Write;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// The demo profile compiled into the binary, so `rankline` alone works
/// anywhere after `cargo install`.
pub const DEMO: &[u8] = include_bytes!("../../fixtures/megatron_tp8.sqlite");
pub const DEMO_NAME: &str = "demo:megatron_tp8.sqlite";

/// How the UI starts.
pub struct Options {
    pub sources: Vec<Source>,
    pub keymap: Keymap,
    pub goto: Option<String>,
    pub settings: Settings,
    pub no_color: bool,
    pub demo: bool,
    pub cache: Option<crate::profile::CacheDir>,
    /// Capture the mouse (`--no-mouse` turns it off; `m` toggles).
    pub mouse: bool,
    /// The `--baseline` capture's inputs (none: no baseline).
    pub baseline: Vec<Source>,
    /// Messages known before loading starts (inputs given twice, read
    /// once…), listed with the load messages.
    pub notes: Vec<String>,
    /// What writes a trace for `E` (the command line's `export`).
    pub exporter: Option<Exporter>,
}

/// What the loop reacts to.
pub enum Msg {
    Input(Event),
    Load(LoadMsg),
    Quit,
    /// A terminating signal (its number) arrived.
    Signal(i32),
    /// Loading ended and no input could be opened: nothing to show.
    NothingOpened,
    /// A trace export (`E`) ended: its line.
    Exported(Result<String, String>),
    /// A read or write of the bookmarks file ended.
    Bookmarks(BookmarksDone),
    /// Derived work (a window's overlap, a range's facts) ended.
    Derived(DeriveDone),
    /// Something went wrong that the UI cannot go on from.
    Fatal(String),
}

/// Why the UI ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The user quit (or every message source is gone).
    Quit,
    /// Every input failed; the failures are in [`Outcome::file_errors`].
    NothingOpened,
    /// Ended by this signal: the process exits with 128 + its number.
    Signal(i32),
}

/// How a session went, for the exit code and what to print afterwards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub ending: Ending,
    /// One line per input that could not be opened.
    pub file_errors: Vec<String>,
}

const FRAME: Duration = Duration::from_millis(16);

/// Runs the UI until the user quits, a signal arrives or no input could be
/// opened. Returns an error line for the caller to print after the
/// terminal is restored.
pub fn run(opts: Options) -> Result<Outcome, String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    terminal_rescue::arm();
    let mut terminal = ratatui::try_init().map_err(|e| format!("cannot open the terminal: {e}"))?;
    // `ratatui::restore()` leaves mouse reporting on: turn it off on every
    // way out, a panic included (its hook runs before ratatui's restore).
    let restore_terminal = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = set_mouse_capture(false);
        restore_terminal(info);
    }));
    if opts.mouse {
        let _ = set_mouse_capture(true);
    }
    let result = rt.block_on(event_loop(&mut terminal, opts));
    let _ = set_mouse_capture(false);
    ratatui::restore();
    // The input thread may still block on a read: do not wait for it.
    rt.shutdown_background();
    result
}

async fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    opts: Options,
) -> Result<Outcome, String> {
    let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
    let input_tx = tx.clone();
    std::thread::spawn(move || {
        while let Ok(ev) = event::read() {
            if input_tx.send(Msg::Input(ev)).is_err() {
                break;
            }
        }
    });
    let load_tx = tx.clone();
    let sources = opts.sources.clone();
    let settings = opts.settings.clone();
    let cache = opts.cache.clone();
    let baseline = opts.baseline.clone();
    let loader = tokio::task::spawn_blocking(move || {
        let send = |m| {
            let _ = load_tx.send(Msg::Load(m));
        };
        if baseline.is_empty() {
            data::load(&sources, cache.as_ref(), &settings, &mut |m| send(m))
        } else {
            super::baseline::load_pair(&sources, &baseline, cache.as_ref(), &settings, &send)
        }
    });
    // A loader that panicked (a bug) ends the UI cleanly with one line.
    let end_tx = tx.clone();
    tokio::spawn(async move {
        let _ = end_tx.send(match loader.await {
            Ok(true) => return,
            Ok(false) => Msg::NothingOpened,
            Err(_) => Msg::Fatal("internal error while loading (please report this)".into()),
        });
    });
    let signal_tx = tx.clone();
    tokio::spawn(async move {
        if let Some(signal) = wait_for_signal().await {
            let _ = signal_tx.send(Msg::Signal(signal));
        }
    });
    let export_tx = tx.clone();
    let bookmarks_tx = tx.clone();
    let derive_tx = tx.clone();
    drop(tx);
    let input = opts
        .sources
        .first()
        .map_or_else(|| "demo".to_string(), source_stem);
    let exporter = opts.exporter.clone();
    let mut export = move |job: ExportJob| {
        let (tx, input, exporter) = (export_tx.clone(), input.clone(), exporter.clone());
        tokio::task::spawn_blocking(move || {
            let line = match &exporter {
                Some(e) => export::exports_dir().and_then(|dir| {
                    export::run(e, &job, &dir, &input, &super::wallclock::compact_now())
                }),
                None => Err("export is not available here".into()),
            };
            let _ = tx.send(Msg::Exported(line));
        });
    };

    // The bookmarks file may be anything (a FIFO, a hung mount): never
    // touched on the loop's thread.
    let mut bookmarks = move |job: BookmarkJob| {
        let tx = bookmarks_tx.clone();
        tokio::task::spawn_blocking(move || {
            let _ = tx.send(Msg::Bookmarks(job.run()));
        });
    };

    // Derived work reads every kernel in a window: never on the loop's
    // thread, so that no key waits for it.
    let mut derive = move |job: DeriveJob| {
        let tx = derive_tx.clone();
        tokio::task::spawn_blocking(move || {
            let _ = tx.send(Msg::Derived(job.run()));
        });
        None
    };

    let mut app = App::new(opts.keymap, opts.no_color);
    app.set_mouse(opts.mouse);
    app.set_goto(opts.goto);
    if !opts.baseline.is_empty() {
        app.expect_baseline();
    }
    if opts.demo {
        app.set_banner("demo profile (embedded)");
    }
    for note in opts.notes {
        app.warn(note);
    }
    let mut set_mouse = |on| {
        let _ = set_mouse_capture(on);
    };
    let outside = Outside {
        set_mouse: &mut set_mouse,
        clipboard: &mut std::io::stdout(),
        export: &mut export,
        bookmarks: &mut bookmarks,
        derive: &mut derive,
    };
    let ending = drive_with(terminal, &mut app, &mut rx, outside).await?;
    Ok(Outcome {
        ending,
        file_errors: app
            .session()
            .messages
            .errors()
            .map(|m| m.text.clone())
            .collect(),
    })
}

/// Runs the UI on `terminal` until the user quits, a signal arrives, no
/// input could be opened or every sender is gone: handles each message as
/// it comes and draws at most one frame per [`FRAME`], none while nothing
/// changed.
pub async fn drive<B: ratatui::backend::Backend>(
    terminal: &mut ratatui::Terminal<B>,
    app: &mut App,
    rx: &mut mpsc::UnboundedReceiver<Msg>,
) -> Result<Ending, String> {
    let outside = Outside {
        set_mouse: &mut |_| {},
        clipboard: &mut std::io::sink(),
        export: &mut |_| {},
        bookmarks: &mut |_| {},
        // Derived on the loop's thread: a test sees each result before
        // the next frame.
        derive: &mut |job| Some(job.run()),
    };
    drive_with(terminal, app, rx, outside).await
}

/// What the loop does to the terminal outside ratatui's frames.
pub struct Outside<'a> {
    /// Called whenever the app's wish for mouse capture changes (`m`).
    pub set_mouse: &'a mut dyn FnMut(bool),
    /// Where what `y` copies goes (an OSC 52 sequence).
    pub clipboard: &'a mut dyn Write,
    /// Starts a trace export (`E`) off the loop; its line comes back as
    /// [`Msg::Exported`].
    pub export: &'a mut dyn FnMut(ExportJob),
    /// Starts a read or write of the bookmarks file off the loop; its end
    /// comes back as [`Msg::Bookmarks`].
    pub bookmarks: &'a mut dyn FnMut(BookmarkJob),
    /// Starts derived work; its result comes back as [`Msg::Derived`], or
    /// at once when the job ran here.
    pub derive: &'a mut dyn FnMut(DeriveJob) -> Option<DeriveDone>,
}

/// [`drive`], with the terminal's side effects in `outside`.
pub async fn drive_with<B: ratatui::backend::Backend>(
    terminal: &mut ratatui::Terminal<B>,
    app: &mut App,
    rx: &mut mpsc::UnboundedReceiver<Msg>,
    outside: Outside<'_>,
) -> Result<Ending, String> {
    let Outside {
        set_mouse,
        clipboard,
        export,
        bookmarks,
        derive,
    } = outside;
    let mut mouse = app.session().mouse;
    let mut last_frame = Instant::now() - FRAME;
    let mut ending = Ending::Quit;
    loop {
        if app.session().dirty {
            let wait = FRAME.saturating_sub(last_frame.elapsed());
            if wait.is_zero() {
                terminal
                    .draw(|f| super::ui::draw(f, app))
                    .map_err(|e| format!("drawing failed: {e}"))?;
                app.session_mut().dirty = false;
                app.after_frame();
                last_frame = Instant::now();
            } else {
                // Gather what arrives before the next frame is due.
                match tokio::time::timeout(wait, rx.recv()).await {
                    Ok(Some(m)) => handle(app, m, &mut ending),
                    Ok(None) => return Ok(ending),
                    Err(_) => {}
                }
            }
        } else {
            match rx.recv().await {
                Some(m) => handle(app, m, &mut ending),
                None => return Ok(ending),
            }
        }
        while let Ok(m) = rx.try_recv() {
            handle(app, m, &mut ending);
        }
        if let Some(seq) = app.session_mut().clipboard.take() {
            // A terminal without OSC 52 ignores it; nothing to report.
            let _ = clipboard
                .write_all(seq.as_bytes())
                .and_then(|()| clipboard.flush());
        }
        if let Some(job) = app.session_mut().export.take() {
            export(job);
        }
        if let Some(job) = app.next_bookmark_job() {
            bookmarks(job);
        }
        while let Some(job) = app.next_derive_job() {
            if let Some(done) = derive(job) {
                app.on_derived(done);
            }
        }
        if app.session().quit {
            return app.session_mut().fatal.take().map_or(Ok(ending), Err);
        }
        if app.session().mouse != mouse {
            mouse = app.session().mouse;
            set_mouse(mouse);
        }
    }
}

/// Turns the terminal's mouse reporting on or off.
fn set_mouse_capture(on: bool) -> std::io::Result<()> {
    use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
    let mut out = std::io::stdout();
    if on {
        crossterm::execute!(out, EnableMouseCapture)
    } else {
        crossterm::execute!(out, DisableMouseCapture)
    }
}

fn handle(app: &mut App, m: Msg, ending: &mut Ending) {
    match m {
        Msg::Input(Event::Key(k)) => app.on_key(k),
        Msg::Input(Event::Resize(..)) => app.session_mut().dirty = true,
        Msg::Input(Event::Mouse(me)) => app.on_mouse(me),
        Msg::Input(_) => {}
        Msg::Load(l) => app.on_load(l),
        Msg::Quit => app.session_mut().quit = true,
        Msg::Signal(signal) => {
            *ending = Ending::Signal(signal);
            app.session_mut().quit = true;
        }
        Msg::NothingOpened => {
            *ending = Ending::NothingOpened;
            app.session_mut().quit = true;
        }
        Msg::Exported(line) => app.on_exported(line),
        Msg::Bookmarks(done) => app.on_bookmarks(done),
        Msg::Derived(done) => app.on_derived(done),
        Msg::Fatal(e) => {
            app.session_mut().fatal = Some(e);
            app.session_mut().quit = true;
        }
    }
}

/// The first ending signal's number (see [`crate::ending_signals`]).
#[cfg(unix)]
async fn wait_for_signal() -> Option<i32> {
    let signals = crate::ending_signals::register(true)?;
    Some(crate::ending_signals::first(signals).await)
}

#[cfg(not(unix))]
async fn wait_for_signal() -> Option<i32> {
    tokio::signal::ctrl_c().await.ok().map(|()| 2)
}

/// An input's name for an export's file name: its file stem.
fn source_stem(s: &Source) -> String {
    match s {
        Source::File(p) => p
            .file_stem()
            .map_or_else(|| "capture".into(), |x| x.to_string_lossy().into_owned()),
        _ => "demo".into(),
    }
}
