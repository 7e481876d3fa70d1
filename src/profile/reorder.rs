//! Every per-row column of a table reordered by one permutation, or
//! thinned by a shorter one: one list of each table's columns for sorting
//! it ([`super::finalize`]) and for leaving rows out (`load/suspect.rs`).
//! Tables are taken apart whole (no `..` but for what is not per row), so
//! a column added to a table cannot be left behind.

use super::column::{Col, Pod};
use super::model::*;

/// Column `v` in the order `perm` gives (row `perm[i]` becomes row `i`).
pub(crate) fn permute<T: Pod>(v: &mut Col<T>, perm: &[u32]) {
    Spare::default().permute(v, perm);
}

/// A buffer lent to each column of one type a table reorders: the column's
/// old buffer becomes the next one's, so a table takes fresh memory once
/// per type rather than once per column: each fresh page costs a page
/// fault (they were most of a 10 M-kernel `report all`'s system time).
pub(crate) struct Spare<T: Pod>(Vec<T>);

impl<T: Pod> Default for Spare<T> {
    fn default() -> Self {
        Spare(Vec::new())
    }
}

impl<T: Pod> Spare<T> {
    /// Column `v` in the order `perm` gives (row `perm[i]` becomes row `i`).
    pub(crate) fn permute(&mut self, v: &mut Col<T>, perm: &[u32]) {
        let src: &[T] = v;
        self.0.clear();
        self.0.extend(perm.iter().map(|&i| src[i as usize]));
        v.swap_owned(&mut self.0);
    }
}

/// Reorders `table` by `perm` unless `perm` keeps every row where it is
/// (a table already in order: one read of `perm` instead of a copy of
/// every column).
pub(crate) fn reorder_unless_in_order(table: &mut impl Reorder, perm: &[u32]) {
    if !perm.iter().enumerate().all(|(i, &p)| p as usize == i) {
        table.reorder(perm);
    }
}

/// `rows` (ascending row numbers before `perm` reordered the table) as
/// the numbers of the same rows after it, ascending: one pass, no inverse
/// permutation (the list is short, the table is not).
pub(crate) fn renumber(rows: &mut Col<u32>, perm: &[u32]) {
    if rows.is_empty() {
        return;
    }
    let old: &[u32] = rows;
    let out: Col<u32> = perm
        .iter()
        .enumerate()
        .filter(|&(_, i)| old.binary_search(i).is_ok())
        .map(|(j, _)| j as u32)
        .collect();
    *rows = out;
}

/// A table whose rows [`permute`] reorders, every column alike.
pub(crate) trait Reorder {
    fn reorder(&mut self, perm: &[u32]);
}

impl Reorder for GpuActivity {
    fn reorder(&mut self, perm: &[u32]) {
        let GpuActivity {
            start,
            end,
            lane,
            name,
            correlation,
            launch,
            detail,
            details: _,
            unfinished,
        } = self;
        // Half the columns on another core: when only GPU rows were read
        // (`report overlap`), nothing else runs beside the sort.
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut spare = Spare::default();
                spare.permute(start, perm);
                spare.permute(end, perm);
                permute(correlation, perm);
            });
            let mut spare = Spare::default();
            for c in [lane, name, launch, detail] {
                spare.permute(c, perm);
            }
            renumber(unfinished, perm);
        });
    }
}

impl Reorder for RuntimeCalls {
    fn reorder(&mut self, perm: &[u32]) {
        let RuntimeCalls {
            start,
            end,
            thread,
            name,
            correlation,
            class,
            is_launch,
        } = self;
        let mut spare = Spare::default();
        spare.permute(start, perm);
        spare.permute(end, perm);
        let mut spare = Spare::default();
        for c in [thread, name, correlation] {
            spare.permute(c, perm);
        }
        permute(class, perm);
        permute(is_launch, perm);
    }
}

impl Reorder for Nvtx {
    fn reorder(&mut self, perm: &[u32]) {
        let Nvtx {
            start,
            end,
            thread,
            name,
            kind,
            domain,
            depth,
        } = self;
        let mut spare = Spare::default();
        spare.permute(start, perm);
        spare.permute(end, perm);
        let mut spare = Spare::default();
        for c in [thread, name, domain] {
            spare.permute(c, perm);
        }
        permute(kind, perm);
        permute(depth, perm);
    }
}

/// Its calls still open at the capture's end are not in the table (the
/// loader keeps them): renumbered by whoever holds them.
impl Reorder for OsrtCalls {
    fn reorder(&mut self, perm: &[u32]) {
        let OsrtCalls {
            start,
            end,
            thread,
            name,
        } = self;
        permute(start, perm);
        permute(end, perm);
        permute(thread, perm);
        permute(name, perm);
    }
}

/// Stacks are shared, by number: only each sample's number moves.
impl Reorder for CpuSamples {
    fn reorder(&mut self, perm: &[u32]) {
        let CpuSamples {
            start,
            thread,
            stack,
            stack_at: _,
            stack_frames: _,
        } = self;
        permute(start, perm);
        permute(thread, perm);
        permute(stack, perm);
    }
}

impl Reorder for SchedEvents {
    fn reorder(&mut self, perm: &[u32]) {
        let SchedEvents {
            start,
            thread,
            cpu,
            sched_in,
        } = self;
        permute(start, perm);
        permute(thread, perm);
        permute(cpu, perm);
        permute(sched_in, perm);
    }
}

impl Reorder for CudaSyncs {
    fn reorder(&mut self, perm: &[u32]) {
        let CudaSyncs {
            start,
            end,
            process,
            device,
            stream,
            lane,
            sync_type,
            event,
            correlation,
            call,
        } = self;
        permute(start, perm);
        permute(end, perm);
        permute(process, perm);
        permute(device, perm);
        permute(stream, perm);
        permute(lane, perm);
        permute(sync_type, perm);
        permute(event, perm);
        permute(correlation, perm);
        permute(call, perm);
    }
}

impl Reorder for CudaEvents {
    fn reorder(&mut self, perm: &[u32]) {
        let CudaEvents {
            process,
            device,
            stream,
            lane,
            event,
            correlation,
            call,
            timestamp,
        } = self;
        permute(process, perm);
        permute(device, perm);
        permute(stream, perm);
        permute(lane, perm);
        permute(event, perm);
        permute(correlation, perm);
        permute(call, perm);
        permute(timestamp, perm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renumber_follows_the_rows_through_a_permutation() {
        // Rows 0 and 3 of the old order are at 2 and 0 of the new one.
        let mut rows: Col<u32> = vec![0, 3].into();
        renumber(&mut rows, &[3, 1, 0, 2]);
        assert_eq!(&rows[..], &[0, 2]);
    }

    #[test]
    fn permute_reorders() {
        let mut v64: Col<i64> = vec![10, 20, 30].into();
        permute(&mut v64, &[2, 0, 1]);
        assert_eq!(&v64[..], &[30, 10, 20]);
    }
}
