//! NCCL call rows read twice: an export (or a damaged copy of one) can
//! hold the same NVTX row more than once, and each copy would add its
//! message size again. Rows alike in thread, times, name and what their
//! payload says are one call.

use crate::profile::NcclApiRanges;

/// Drops, from `a`'s rows at `from..` (one file's), every row identical to
/// an earlier one, keeping the first; counts the dropped calls that carry
/// a payload in `a.payloads.duplicates`.
pub fn drop_duplicates(a: &mut NcclApiRanges, from: usize) {
    let key = |j: usize| {
        (
            a.thread[j],
            a.start[j],
            a.end[j],
            a.name[j],
            a.comm[j],
            a.bytes[j],
        )
    };
    let mut order: Vec<usize> = (from..a.start.len()).collect();
    order.sort_by_key(|&j| (key(j), j));
    let mut dropped = vec![false; a.start.len()];
    let mut payloads = 0u64;
    for w in order.windows(2) {
        if key(w[0]) == key(w[1]) {
            dropped[w[1]] = true;
            if a.comm[w[1]].is_some() || a.bytes[w[1]].is_some() || a.rank[w[1]].is_some() {
                payloads += 1;
            }
        }
    }
    if !dropped.contains(&true) {
        return;
    }
    fn kept<T>(v: &mut Vec<T>, dropped: &[bool]) {
        let mut i = 0;
        v.retain(|_| {
            i += 1;
            !dropped[i - 1]
        });
    }
    kept(&mut a.name, &dropped);
    kept(&mut a.thread, &dropped);
    kept(&mut a.start, &dropped);
    kept(&mut a.end, &dropped);
    kept(&mut a.comm, &dropped);
    kept(&mut a.bytes, &dropped);
    kept(&mut a.peer, &dropped);
    kept(&mut a.rank, &dropped);
    kept(&mut a.nranks, &dropped);
    a.payloads.duplicates = a.payloads.duplicates.saturating_add(payloads);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_rows_count_once_and_different_payloads_twice() {
        let mut a = NcclApiRanges::default();
        let rows = [
            (0, 10, 20, Some(1), Some(64)),
            (0, 10, 20, Some(1), Some(64)), // a copy
            (0, 10, 20, Some(1), Some(32)), // same times, another size: kept
            (1, 10, 20, Some(1), Some(64)), // another thread: kept
            (0, 30, 40, None, None),        // a group mark
            (0, 30, 40, None, None),        // its copy: dropped, not a payload
        ];
        for (t, s, e, c, b) in rows {
            a.name.push(5);
            a.thread.push(t);
            a.start.push(s);
            a.end.push(e);
            a.comm.push(c);
            a.bytes.push(b);
            a.peer.push(None);
            a.rank.push(None);
            a.nranks.push(None);
        }
        drop_duplicates(&mut a, 0);
        assert_eq!(a.bytes, vec![Some(64), Some(32), Some(64), None]);
        assert_eq!(a.thread, vec![0, 0, 1, 0]);
        assert_eq!(a.payloads.duplicates, 1);
    }
}
