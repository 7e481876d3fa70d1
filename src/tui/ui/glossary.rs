//! Every term the screens use, defined once: help (`?`) lists them after
//! the keys, so no figure or label on screen goes unexplained.

/// (term, what it means), in the order a user meets them.
pub const TERMS: &[(&str, &str)] = &[
    (
        "S20",
        "lane of CUDA stream 20 (a queue, not a communicator; ids are per process)",
    ),
    (
        "S20 NCCL",
        "a stream whose kernels are NCCL collectives; `compute` otherwise",
    ),
    ("T4101 API", "the CUDA runtime calls of thread 4101"),
    (
        "T4101 nvtx0",
        "NVTX push/pop ranges of thread 4101 at nesting depth 0",
    ),
    (
        "T4101 nvtx±",
        "its start/end NVTX ranges (they may overlap, so no depth)",
    ),
    (
        "OS off-CPU",
        "a thread's OS runtime calls; the time it was descheduled",
    ),
    (
        "samples",
        "CPU samples of a thread (the innermost frame when zoomed in)",
    ),
    (
        "node03:3 r4",
        "device 3 of host node03, rank 4 (D3 when there is one host)",
    ),
    ("▾ ▸", "a row that folds (Space): ▾ open, ▸ folded"),
    (
        "start skew",
        "last start − first start of one collective over its ranks",
    ),
    (
        "end skew",
        "last end − first end: ends that line up confirm the pairing",
    ),
    (
        "wait",
        "a rank's NCCL kernel time beyond the shortest rank's: time waiting",
    ),
    (
        "excess",
        "wait summed over the ranks of a group (sums over devices are not wall time)",
    ),
    (
        "LATE ◀",
        "the rank that started the collective last (its kernel is the short one)",
    ),
    (
        "late host",
        "every rank of one host started after every other host's: the host's margin",
    ),
    (
        "cpu-late",
        "most of the lateness is on the CPU: the launch call ended after the first peer's kernel started, by more than the kernel then waited on the GPU",
    ),
    (
        "gpu-side",
        "most of the lateness is on the GPU: launched in time or less late than it then queued behind other work",
    ),
    (
        "not-resolvable",
        "the difference is within the clock error between the hosts",
    ),
    (
        "unknown",
        "no launch call in the capture (a CUDA graph's kernel has its cudaGraphLaunch)",
    ),
    (
        "comp nccl ovl",
        "overlap panel: compute only, NCCL only, both at once (interval unions)",
    ),
    (
        "copy idle",
        "a memcpy/memset and no kernel; nothing at all on the device",
    ),
    (
        "hid%",
        "share of NCCL time under compute; the rest is an upper bound on savings",
    ),
    (
        "72×",
        "in the finder: how many times the name occurs in the capture",
    ),
    (
        "RING LL",
        "name tokens are specialization hints, not the algorithm or protocol",
    ),
    (
        "algbw",
        "bytes ÷ (the instance's end − its latest start), GB/s; sizes from NCCL's payloads",
    ),
    (
        "busbw",
        "algbw × the op's factor (AllReduce 2(N−1)/N): nccl-tests' scale, not one link's use",
    ),
    ("naive", "bytes ÷ one rank's kernel time: includes its wait"),
    (
        "critical path",
        "steps view: the chain of work across ranks that set the step's time; its parts add up to the step",
    ),
    (
        "what-if",
        "the step replayed without one cause on its path: what that saves (slack respected; at most the cause's time)",
    ),
    (
        "first to fix",
        "the cause whose what-ifs save most, summed over the steps after warm-up",
    ),
    (
        "w",
        "steps view: a warm-up step (the first), left out of the sums and the colour scale",
    ),
];

/// The glossary as help lines, wrapped to `width` columns.
pub fn lines(width: usize) -> Vec<String> {
    term_rows(TERMS, 16, width)
}

/// `  term  meaning` rows, the meaning wrapped under itself to `width`
/// columns (a long key description is read whole, not cut at the frame).
/// A term too wide for its column (a user keymap binding many keys to one
/// action) gets a line of its own, the meaning under it, so the two never
/// run together.
pub fn term_rows(rows: &[(&str, &str)], term_w: usize, width: usize) -> Vec<String> {
    let room = width.saturating_sub(term_w + 2).max(20);
    let row = |first: bool, term: &str, text: &str| {
        let term = if first { term } else { "" };
        format!("  {term:<term_w$}{text}")
    };
    let mut out = Vec::new();
    for (term, meaning) in rows {
        let mut first = true;
        if term.chars().count() >= term_w {
            out.push(format!("  {term}"));
            first = false;
        }
        let mut line = String::new();
        for word in meaning.split(' ') {
            if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > room {
                out.push(row(first, term, &line));
                first = false;
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        out.push(row(first, term, &line));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_term_wider_than_its_column_stands_on_its_own_line() {
        let rows = [("Left a h ctrl-b alt-Left", "Pan left"), ("w", "Zoom in")];
        let out = term_rows(&rows, 19, 70);
        assert_eq!(out[0], "  Left a h ctrl-b alt-Left");
        assert_eq!(out[1], format!("  {:19}Pan left", ""));
        assert_eq!(out[2], format!("  {:19}Zoom in", "w"));
    }

    #[test]
    fn every_glossary_line_fits_and_every_term_is_listed() {
        for w in [70, 40] {
            let ls = lines(w);
            assert!(ls.iter().all(|l| l.chars().count() <= w.max(38)), "{ls:#?}");
            for (term, _) in TERMS {
                assert!(
                    ls.iter().any(|l| l.starts_with(&format!("  {term} "))),
                    "{term}"
                );
            }
        }
    }
}
