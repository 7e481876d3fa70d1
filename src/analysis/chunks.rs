//! Pure work over many independent items (a group's instances), split
//! into contiguous chunks that run at once, one per core.

use std::ops::Range;

/// `f` over `0..n` in contiguous chunks, one per core, the results in
/// index order as one call over the whole range would give them. Fewer
/// than `min_chunk` items per chunk are not worth a thread: they run on
/// fewer.
pub fn map_chunks<R: Send>(
    n: usize,
    min_chunk: usize,
    f: impl Fn(Range<usize>) -> Vec<R> + Sync,
) -> Vec<R> {
    let chunks = crate::profile::parallel::cores()
        .min(n / min_chunk.max(1))
        .max(1);
    if chunks == 1 {
        return f(0..n);
    }
    let bounds: Vec<usize> = (0..=chunks).map(|k| k * n / chunks).collect();
    let f = &f;
    std::thread::scope(|s| {
        let others: Vec<_> = bounds[1..]
            .windows(2)
            .map(|w| s.spawn(move || f(w[0]..w[1])))
            .collect();
        let mut out = f(bounds[0]..bounds[1]);
        for h in others {
            match h.join() {
                Ok(part) => out.extend(part),
                Err(e) => std::panic::resume_unwind(e),
            }
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_give_what_one_pass_gives_in_order() {
        let f = |r: Range<usize>| r.filter(|i| i % 3 != 0).map(|i| i * 2).collect::<Vec<_>>();
        for n in [0, 1, 5, 999, 10_000] {
            assert_eq!(map_chunks(n, 100, f), f(0..n), "n = {n}");
        }
    }
}
