//! The event loop: input on its own thread, loading on a blocking task,
//! redraws coalesced to at most one frame per ~16 ms and none when idle.
//! The terminal is restored on every exit path, panics included.

use super::data::{self, LoadMsg};
use super::keymap::Keymap;
use super::state::App;
use crate::analysis::bundle::Settings;
use crate::profile::Source;
use crossterm::event::{self, Event};
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
}

/// What the loop reacts to.
pub enum Msg {
    Input(Event),
    Load(LoadMsg),
    Quit,
    /// Something went wrong that the UI cannot go on from.
    Fatal(String),
}

const FRAME: Duration = Duration::from_millis(16);

/// Runs the UI until the user quits. Returns an error line for the caller
/// to print after the terminal is restored.
pub fn run(opts: Options) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let mut terminal = ratatui::try_init().map_err(|e| format!("cannot open the terminal: {e}"))?;
    let result = rt.block_on(event_loop(&mut terminal, opts));
    ratatui::restore();
    // The input thread may still block on a read: do not wait for it.
    rt.shutdown_background();
    result
}

async fn event_loop(terminal: &mut ratatui::DefaultTerminal, opts: Options) -> Result<(), String> {
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
    let loader = tokio::task::spawn_blocking(move || {
        data::load(&sources, cache.as_ref(), &settings, &mut |m| {
            let _ = load_tx.send(Msg::Load(m));
        })
    });
    // A loader that panicked (a bug) ends the UI cleanly with one line.
    let fatal_tx = tx.clone();
    tokio::spawn(async move {
        if loader.await.is_err() {
            let _ = fatal_tx.send(Msg::Fatal(
                "internal error while loading (please report this)".into(),
            ));
        }
    });
    let signal_tx = tx.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        let _ = signal_tx.send(Msg::Quit);
    });
    drop(tx);

    let mut app = App::new(opts.keymap, opts.no_color);
    app.pending_goto = opts.goto;
    if opts.demo {
        app.banner = Some("demo profile (embedded)".into());
    }
    drive(terminal, &mut app, &mut rx).await
}

/// Runs the UI on `terminal` until the user quits or every sender is gone:
/// handles each message as it comes and draws at most one frame per
/// [`FRAME`], none while nothing changed.
pub async fn drive<B: ratatui::backend::Backend>(
    terminal: &mut ratatui::Terminal<B>,
    app: &mut App,
    rx: &mut mpsc::UnboundedReceiver<Msg>,
) -> Result<(), String> {
    let mut last_frame = Instant::now() - FRAME;
    loop {
        if app.dirty {
            let wait = FRAME.saturating_sub(last_frame.elapsed());
            if wait.is_zero() {
                terminal
                    .draw(|f| super::ui::draw(f, app))
                    .map_err(|e| format!("drawing failed: {e}"))?;
                app.dirty = false;
                last_frame = Instant::now();
            } else {
                // Gather what arrives before the next frame is due.
                match tokio::time::timeout(wait, rx.recv()).await {
                    Ok(Some(m)) => handle(app, m),
                    Ok(None) => return Ok(()),
                    Err(_) => {}
                }
            }
        } else {
            match rx.recv().await {
                Some(m) => handle(app, m),
                None => return Ok(()),
            }
        }
        while let Ok(m) = rx.try_recv() {
            handle(app, m);
        }
        if app.quit {
            return app.fatal.take().map_or(Ok(()), Err);
        }
    }
}

fn handle(app: &mut App, m: Msg) {
    match m {
        Msg::Input(Event::Key(k)) => app.on_key(k),
        Msg::Input(Event::Resize(..)) => app.dirty = true,
        Msg::Input(Event::Mouse(me)) => app.on_mouse(me),
        Msg::Input(_) => {}
        Msg::Load(l) => app.on_load(l),
        Msg::Quit => app.quit = true,
        Msg::Fatal(e) => {
            app.fatal = Some(e);
            app.quit = true;
        }
    }
}

#[cfg(unix)]
async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut hup), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = hup.recv() => {}
        _ = int.recv() => {}
    }
}

#[cfg(not(unix))]
async fn wait_for_signal() {
    let _ = tokio::signal::ctrl_c().await;
}
