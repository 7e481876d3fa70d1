//! The samples' call stacks, built chunk by chunk as the callchain rows
//! arrive: each run of one sample's rows becomes its innermost
//! [`MAX_FRAMES`] user-mode frames, interned as one stack id, so that the
//! rows themselves (a dozen per sample) are never all held at once.

use crate::profile::intern::Sym;
use crate::profile::model::MAX_FRAMES;
use crate::profile::raw::RawFrames;
use rustc_hash::FxHashMap;

/// Stacks interned so far and the stack of each sample id seen.
pub(super) struct Stacks {
    known: FxHashMap<Box<[Sym]>, u32>,
    /// Where stack `s` starts in `frames` (one more entry than stacks;
    /// stack 0 is the empty one).
    at: Vec<u32>,
    frames: Vec<Sym>,
    /// (sample id, stack) per run of one sample's rows, in read order.
    runs: Vec<(i64, u32)>,
    /// The latest chunk's last run: the next chunk may go on with it.
    tail: RawFrames,
}

impl Default for Stacks {
    fn default() -> Self {
        Stacks {
            known: FxHashMap::default(),
            at: vec![0, 0],
            frames: Vec::new(),
            runs: Vec::new(),
            tail: RawFrames::default(),
        }
    }
}

/// Each sample's stack id, the stacks' offsets and their frames, as
/// [`crate::profile::CpuSamples`] holds them.
pub(super) struct Joined {
    pub stack: Vec<u32>,
    pub at: Vec<u32>,
    pub frames: Vec<Sym>,
}

impl Stacks {
    /// Takes the next chunk of callchain rows (in rowid order), naming
    /// symbols with `sym`.
    pub fn add(&mut self, chunk: RawFrames, sym: &mut impl FnMut(i64) -> Sym) {
        let mut rows = std::mem::take(&mut self.tail);
        rows.append(chunk);
        let rows = in_order(rows);
        let n = rows.id.len();
        let mut first = 0;
        while first < n {
            let id = rows.id[first];
            let end = first + rows.id[first..].iter().take_while(|&&f| f == id).count();
            if end == n {
                // may go on in the next chunk
                self.tail = RawFrames {
                    id: rows.id[first..].to_vec(),
                    depth: rows.depth[first..].to_vec(),
                    symbol: rows.symbol[first..].to_vec(),
                };
                break;
            }
            self.push_run(id, &rows.symbol[first..end], sym);
            first = end;
        }
    }

    fn push_run(&mut self, id: i64, symbols: &[i64], sym: &mut impl FnMut(i64) -> Sym) {
        let stack: Vec<Sym> = symbols.iter().take(MAX_FRAMES).map(|&s| sym(s)).collect();
        let s = self.intern(stack);
        self.runs.push((id, s));
    }

    fn intern(&mut self, stack: Vec<Sym>) -> u32 {
        if stack.is_empty() {
            return 0;
        }
        if let Some(&s) = self.known.get(stack.as_slice()) {
            return s;
        }
        // past u32 offsets (over 500 M distinct stacks) a sample keeps none
        let (Ok(s), Ok(end)) = (
            u32::try_from(self.at.len() - 1),
            u32::try_from(self.frames.len() + stack.len()),
        ) else {
            return 0;
        };
        self.frames.extend_from_slice(&stack);
        self.at.push(end);
        self.known.insert(stack.into_boxed_slice(), s);
        s
    }

    /// Each of `sample_ids`' stacks (0 for a sample without frames). One
    /// sample's rows scattered over several runs (no export writes them
    /// so) keep the first run's.
    pub fn join(mut self, sample_ids: &[i64], sym: &mut impl FnMut(i64) -> Sym) -> Joined {
        let tail = std::mem::take(&mut self.tail);
        if let Some(&id) = tail.id.first() {
            self.push_run(id, &tail.symbol, sym);
        }
        let mut runs = std::mem::take(&mut self.runs);
        if !runs.is_sorted_by_key(|r| r.0) {
            runs.sort_by_key(|r| r.0); // stable: the first run first
        }
        runs.dedup_by_key(|r| r.0);
        // Samples come in id order too: the next run is tried first.
        let mut next = 0usize;
        let stack = sample_ids
            .iter()
            .map(|&id| {
                let k = match runs.get(next) {
                    Some(r) if r.0 == id => next,
                    _ => runs.partition_point(|r| r.0 < id),
                };
                match runs.get(k) {
                    Some(r) if r.0 == id => {
                        next = k + 1;
                        r.1
                    }
                    _ => 0,
                }
            })
            .collect();
        Joined {
            stack,
            at: self.at,
            frames: self.frames,
        }
    }
}

/// The rows by (sample id, depth): exports write them so; sorted otherwise.
fn in_order(rows: RawFrames) -> RawFrames {
    let key = |i: usize| (rows.id[i], rows.depth[i]);
    if (1..rows.id.len()).all(|i| key(i - 1) <= key(i)) {
        return rows;
    }
    let mut order: Vec<u32> = (0..rows.id.len() as u32).collect();
    order.sort_by_key(|&i| key(i as usize));
    RawFrames {
        id: order.iter().map(|&i| rows.id[i as usize]).collect(),
        depth: order.iter().map(|&i| rows.depth[i as usize]).collect(),
        symbol: order.iter().map(|&i| rows.symbol[i as usize]).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(r: &[(i64, u8, i64)]) -> RawFrames {
        RawFrames {
            id: r.iter().map(|x| x.0).collect(),
            depth: r.iter().map(|x| x.1).collect(),
            symbol: r.iter().map(|x| x.2).collect(),
        }
    }

    fn frames(j: &Joined, sample: usize) -> Vec<Sym> {
        let s = j.stack[sample] as usize;
        j.frames[j.at[s] as usize..j.at[s + 1] as usize].to_vec()
    }

    #[test]
    fn a_sample_split_over_two_chunks_keeps_its_whole_stack() {
        let mut s = Stacks::default();
        let mut sym = |id: i64| id as Sym;
        // sample 1 at depths 0-1 ends the first chunk and goes on in the
        // second; sample 2 repeats sample 1's stack; sample 4 has none.
        s.add(rows(&[(1, 0, 10), (1, 1, 11)]), &mut sym);
        s.add(
            rows(&[(1, 2, 12), (2, 0, 10), (2, 1, 11), (2, 2, 12)]),
            &mut sym,
        );
        s.add(rows(&[(3, 1, 21), (3, 0, 20)]), &mut sym);
        let j = s.join(&[1, 2, 3, 4], &mut sym);
        assert_eq!(frames(&j, 0), [10, 11, 12]);
        assert_eq!(j.stack[0], j.stack[1]);
        assert_eq!(frames(&j, 2), [20, 21]);
        assert_eq!(j.stack[3], 0);
        assert!(frames(&j, 3).is_empty());
        // two stacks and the empty one
        assert_eq!(j.at.len(), 4);
    }

    #[test]
    fn a_deep_stack_keeps_its_innermost_frames() {
        let mut s = Stacks::default();
        let mut sym = |id: i64| id as Sym;
        let deep: Vec<(i64, u8, i64)> = (0..11).map(|d| (7, d as u8, 100 + d)).collect();
        s.add(rows(&deep), &mut sym);
        let j = s.join(&[7], &mut sym);
        assert_eq!(
            frames(&j, 0),
            (100..100 + MAX_FRAMES as Sym).collect::<Vec<_>>()
        );
    }
}
