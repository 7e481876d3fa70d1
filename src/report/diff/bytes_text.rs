//! `diff` text: bytes and busbw per op before and after, or why there are
//! none (the sizes come from NCCL's NVTX payloads, often absent).

use super::layout::{Layout, signed_pct};
use crate::analysis::bandwidth::Totals;
use crate::analysis::bandwidth::{CAVEAT, NOT_RECORDED};
use crate::figure_text::fixed;
use crate::report::table::Table;

fn mib(s: Option<&Totals>) -> String {
    s.and_then(|s| s.bytes)
        .map_or("-".into(), |b| crate::figure_text::mib(b as f64))
}

fn busbw(s: Option<&Totals>) -> String {
    s.and_then(|s| s.busbw_gbps)
        .map_or("-".into(), |b| fixed(b.p50, 1))
}

pub(super) fn bytes(l: &Layout) -> String {
    let b = &l.diff.bytes;
    let mut out = String::from("\nBytes and busbw per op (NCCL's recorded message sizes)\n");
    if b.recorded == (false, false) {
        if b.said.0 == b.said.1 {
            out += &l.note(&format!("either side: {}", b.said.0));
        } else {
            out += &l.note(&format!("{NOT_RECORDED} on either side"));
            out += &l.note(&format!("before: {}", b.said.0));
            out += &l.note(&format!("after: {}", b.said.1));
        }
        return out;
    }
    if b.said.0 == b.said.1 {
        out += &l.note(&b.said.0);
    } else {
        out += &l.note(&format!("before: {}", b.said.0));
        out += &l.note(&format!("after: {}", b.said.1));
    }
    let mut t = Table::new(&[
        "op",
        "before_MiB",
        "after_MiB",
        "bytes_%",
        "busbw_before",
        "busbw_after",
        "busbw_%",
    ]);
    for o in &b.ops {
        t.row(vec![
            o.op.name().into(),
            mib(o.before.as_ref()),
            mib(o.after.as_ref()),
            signed_pct(o.bytes_delta_pct()),
            busbw(o.before.as_ref()),
            busbw(o.after.as_ref()),
            signed_pct(o.busbw_p50_delta_pct()),
        ]);
    }
    out += &t.render(l.cols);
    out += &l.note("MiB: nccl-tests' bytes summed over the op's instances; busbw: p50 in GB/s over its instances, from each one's latest start to its end");
    out += &l.note(&format!("! {CAVEAT}"));
    out
}
