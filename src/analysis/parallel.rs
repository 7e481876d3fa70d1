//! Independent pieces of one analysis (devices, groups) computed on all
//! cores: analyses are pure, so the pieces share nothing but their input.

/// `f` of every item, in order, on as many threads as the machine has
/// cores (one item, or one core, runs on the caller's thread).
pub fn map<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |c| c.get());
    if threads <= 1 || items.len() <= 1 {
        return items.into_iter().map(f).collect();
    }
    // Items dealt round-robin: neighbouring devices often weigh alike.
    let n = items.len();
    let mut hands: Vec<Vec<(usize, T)>> = (0..threads.min(n)).map(|_| Vec::new()).collect();
    let hands_len = hands.len();
    for (i, item) in items.into_iter().enumerate() {
        hands[i % hands_len].push((i, item));
    }
    let f = &f;
    let mut out: Vec<Option<R>> = (0..n).map(|_| None).collect();
    std::thread::scope(|s| {
        let running: Vec<_> = hands
            .into_iter()
            .map(|hand| {
                s.spawn(move || {
                    hand.into_iter()
                        .map(|(i, item)| (i, f(item)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for r in running {
            match r.join() {
                Ok(done) => done.into_iter().for_each(|(i, v)| out[i] = Some(v)),
                Err(e) => std::panic::resume_unwind(e),
            }
        }
    });
    out.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_come_back_in_item_order() {
        let items: Vec<u64> = (0..37).collect();
        let out = super::map(items, |i| i * i);
        assert_eq!(out, (0..37).map(|i| i * i).collect::<Vec<_>>());
        assert!(super::map(Vec::<u8>::new(), |i| i).is_empty());
    }
}
