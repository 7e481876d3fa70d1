//! What rankline gives the shell beside itself: completion scripts
//! (`rankline completions SHELL`) and the man page (`rankline man`), both
//! generated from the command-line definition, so they never fall behind it.

use clap::Command;
use clap_complete::Shell;
use std::io::Write;
use std::process::ExitCode;

/// Prints the completion script for `shell` to stdout.
pub fn completions(shell: Shell, mut cmd: Command) -> ExitCode {
    let name = cmd.get_name().to_string();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, name, &mut out);
    print(&out)
}

/// Prints the roff man page (section 1) to stdout.
pub fn man(cmd: Command) -> ExitCode {
    // The page's header holds the version on one line; --version's second
    // line (the nsys range) would break the roff.
    let cmd = cmd.version(env!("CARGO_PKG_VERSION"));
    let mut out = Vec::new();
    match clap_mangen::Man::new(cmd).render(&mut out) {
        Ok(()) => print(&out),
        Err(e) => {
            eprintln!("rankline: man: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Writes to stdout; a closed pipe (`rankline man | head`) is not an error.
fn print(bytes: &[u8]) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rankline: stdout: {e}");
            ExitCode::FAILURE
        }
    }
}
