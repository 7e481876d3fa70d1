//! The signals that end rankline, caught so that it ends its own way: the
//! terminal restored, temp files and nsys children removed. INT, TERM,
//! HUP; QUIT (its default dumps core with the terminal raw); USR1, USR2
//! and ALRM (their defaults end the process without a word, leaving the
//! terminal raw too); PIPE only where a terminal is drawn on (a report
//! piped into `head` ends on its write error instead).

use tokio::signal::unix::{Signal, SignalKind, signal};

const ENDING: [SignalKind; 7] = [
    SignalKind::interrupt(),
    SignalKind::terminate(),
    SignalKind::hangup(),
    SignalKind::quit(),
    SignalKind::user_defined1(),
    SignalKind::user_defined2(),
    SignalKind::alarm(),
];

/// Handlers for the ending signals (and SIGPIPE when `pipe`), registered
/// now: one sent from here on is caught. Inside a tokio runtime.
pub fn register(pipe: bool) -> Option<Vec<(Signal, i32)>> {
    let pipe = pipe.then_some(SignalKind::pipe());
    ENDING
        .iter()
        .copied()
        .chain(pipe)
        .map(|k| signal(k).ok().map(|s| (s, k.as_raw_value())))
        .collect()
}

/// The number of the first of `signals` to arrive.
pub async fn first(signals: Vec<(Signal, i32)>) -> i32 {
    let (tx, mut rx) = tokio::sync::mpsc::channel(1);
    for (mut s, n) in signals {
        let tx = tx.clone();
        tokio::spawn(async move {
            if s.recv().await.is_some() {
                let _ = tx.send(n).await;
            }
        });
    }
    drop(tx);
    rx.recv().await.unwrap_or(libc::SIGTERM)
}
