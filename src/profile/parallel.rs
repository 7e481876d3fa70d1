//! Loading several files at once: a few workers (as many as the machine
//! has cores) take the files in turn; results come back in file order and
//! progress is relayed to the caller's thread.

use super::progress::{LoadStage, ProgressFn};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// A progress report, or the end of one file.
enum Event {
    Progress(LoadStage, usize),
    FileDone,
}

/// `other` on another core while `here` runs on this one: both results,
/// `other`'s first. A panic in `other` goes on here, as if it had run here.
pub fn beside<O: Send, H>(other: impl FnOnce() -> O + Send, here: impl FnOnce() -> H) -> (O, H) {
    std::thread::scope(|s| {
        let theirs = s.spawn(other);
        let mine = here();
        match theirs.join() {
            Ok(theirs) => (theirs, mine),
            Err(e) => std::panic::resume_unwind(e),
        }
    })
}

/// How many files load at once: one per core. Each load also reads its
/// GPU and CPU tables on two threads of its own, which overlap SQLite's
/// waits.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |c| c.get())
}

/// `work(i, progress)` for every `i` in `0..n` on at most `workers`
/// threads, the results in order. One item (or one worker) runs on the
/// caller's thread with `progress` as it is. With several, the workers'
/// reports reach `progress` on the caller's thread, and the file index
/// reported is the number of files finished so far: reports of files read
/// at once interleave, and a gauge over files must not run backwards.
pub fn each_on<T: Send>(
    n: usize,
    workers: usize,
    progress: &mut ProgressFn<'_>,
    work: impl Fn(usize, &mut ProgressFn<'_>) -> T + Sync,
) -> Vec<T> {
    if n <= 1 || workers <= 1 {
        return (0..n).map(|i| work(i, progress)).collect();
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    let (tx, rx) = mpsc::channel::<Event>();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers.min(n))
            .map(|_| {
                let tx = tx.clone();
                let (next, results, work) = (&next, &results, &work);
                s.spawn(move || {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= n {
                            break;
                        }
                        let relay = tx.clone();
                        let mut report = move |_: usize, stage: LoadStage, rows: usize| {
                            let _ = relay.send(Event::Progress(stage, rows));
                        };
                        let out = work(i, &mut report);
                        if let Ok(mut r) = results.lock() {
                            r[i] = Some(out);
                        }
                        let _ = tx.send(Event::FileDone);
                    }
                })
            })
            .collect();
        drop(tx);
        let mut done = 0usize;
        for e in rx {
            match e {
                Event::Progress(stage, rows) => progress(done.min(n - 1), stage, rows),
                Event::FileDone => done += 1,
            }
        }
        for h in handles {
            if let Err(e) = h.join() {
                std::panic::resume_unwind(e);
            }
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("every item was worked on"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beside_gives_both_results_and_passes_a_panic_on() {
        assert_eq!(beside(|| 1, || "here"), (1, "here"));
        let caught = std::panic::catch_unwind(|| beside(|| panic!("other side"), || 2));
        let message = caught.err().unwrap();
        assert_eq!(message.downcast_ref::<&str>(), Some(&"other side"));
    }

    #[test]
    fn results_come_back_in_order_and_the_file_gauge_never_runs_backwards() {
        let mut seen: Vec<usize> = Vec::new();
        let out = each_on(9, 3, &mut |f, _, _| seen.push(f), |i, p| {
            p(i, LoadStage::Kernels, 1);
            p(i, LoadStage::Nvtx, 2);
            i * 10
        });
        assert_eq!(out, (0..9).map(|i| i * 10).collect::<Vec<_>>());
        assert_eq!(seen.len(), 18);
        assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
        assert!(seen.iter().all(|&f| f < 9));
    }
}
