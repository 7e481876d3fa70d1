mod bench;
mod cli;
mod shell_files;

fn main() -> std::process::ExitCode {
    // A bug must still end in one line, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        // Where it happened makes the report actionable.
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let msg = rankline::text_safe::escape_controls(&msg).into_owned();
        eprintln!("rankline: internal error: {msg}{at} (please report this)");
    }));
    cli::run()
}
