//! One classifier for NCCL kernel names, both naming schemes:
//! `ncclDevKernel_<Coll>[_<RedOp>_<type>]_<ALGO>_<PROTO>` (NCCL ≥ 2.19) and
//! `ncclKernel_<Coll>_<ALGO>_<PROTO>[_<RedOp>_<type>]` (older).
//!
//! The ALGO/PROTO tokens name the specialisation the kernel was compiled
//! for. They are *hints*: NCCL picks the algorithm and protocol per call at
//! run time, and one kernel may run several.

use serde::Serialize;

/// Collective type.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
pub enum CollOp {
    AllReduce,
    AllGather,
    ReduceScatter,
    Broadcast,
    Reduce,
    SendRecv,
    AllToAll,
    Other,
}

impl CollOp {
    pub fn name(self) -> &'static str {
        match self {
            CollOp::AllReduce => "AllReduce",
            CollOp::AllGather => "AllGather",
            CollOp::ReduceScatter => "ReduceScatter",
            CollOp::Broadcast => "Broadcast",
            CollOp::Reduce => "Reduce",
            CollOp::SendRecv => "SendRecv",
            CollOp::AllToAll => "AllToAll",
            CollOp::Other => "Other",
        }
    }
}

impl std::fmt::Display for CollOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A dtype, algorithm or protocol a kernel name was classified into: one
/// of the classifier's own spellings. (An alias, so that serde's derive
/// does not tie the stored form's lifetime to `'static`.)
pub type NamePart = Option<&'static str>;

/// What a communication kernel's name says.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct CommKernel {
    pub op: CollOp,
    /// Normalised element type (`f32`, `bf16`, …), when the name has one.
    #[serde(with = "static_name")]
    pub dtype: NamePart,
    /// Algorithm hint (`RING`, `TREE`, `NVLS`, …) — not the algorithm used.
    #[serde(with = "static_name")]
    pub algo: NamePart,
    /// Protocol hint (`LL`, `LL128`, `SIMPLE`) — not the protocol used.
    #[serde(with = "static_name")]
    pub proto: NamePart,
}

impl CommKernel {
    /// A kernel the user declared communication (`--comm-pattern`).
    pub fn other() -> Self {
        CommKernel {
            op: CollOp::Other,
            dtype: None,
            algo: None,
            proto: None,
        }
    }
}

/// Type spellings of both schemes, longest first so that `uint8_t` is not
/// read as `int8_t`.
const DTYPES: &[(&str, &str)] = &[
    ("__nv_bfloat16", "bf16"),
    ("__nv_fp8_e4m3", "f8e4m3"),
    ("__nv_fp8_e5m2", "f8e5m2"),
    ("uint8_t", "u8"),
    ("uint32_t", "u32"),
    ("uint64_t", "u64"),
    ("int8_t", "i8"),
    ("int32_t", "i32"),
    ("int64_t", "i64"),
    ("bfloat16", "bf16"),
    ("double", "f64"),
    ("float", "f32"),
    ("half", "f16"),
    ("f8e4m3", "f8e4m3"),
    ("f8e5m2", "f8e5m2"),
    ("bf16", "bf16"),
    ("f16", "f16"),
    ("f32", "f32"),
    ("f64", "f64"),
    ("u8", "u8"),
    ("u32", "u32"),
    ("u64", "u64"),
    ("i8", "i8"),
    ("i32", "i32"),
    ("i64", "i64"),
];

const ALGOS: &[&str] = &[
    "COLLNET_DIRECT",
    "COLLNET_CHAIN",
    "NVLS_TREE",
    "NVLS",
    "RING",
    "TREE",
    "PAT",
    "COLLNET",
];
const PROTOS: &[&str] = &["LL128", "LL", "SIMPLE"];

/// Serde for the names a kernel name is classified into (dtype, algorithm,
/// protocol): stored as text, read back as the classifier's own `'static`
/// spelling; a name the classifier never produces is refused.
pub mod static_name {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<&'static str>, s: S) -> Result<S::Ok, S::Error> {
        v.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'static str>, D::Error> {
        let Some(name) = Option::<String>::deserialize(d)? else {
            return Ok(None);
        };
        super::DTYPES
            .iter()
            .map(|(_, norm)| norm)
            .chain(super::ALGOS)
            .chain(super::PROTOS)
            .find(|known| **known == name)
            .map(|known| Some(*known))
            .ok_or_else(|| serde::de::Error::custom(format!("unknown NCCL name part {name:?}")))
    }
}

fn op_of(token: &str) -> Option<CollOp> {
    Some(match token.to_ascii_lowercase().as_str() {
        "allreduce" => CollOp::AllReduce,
        "allgather" => CollOp::AllGather,
        "reducescatter" => CollOp::ReduceScatter,
        "broadcast" => CollOp::Broadcast,
        "reduce" => CollOp::Reduce,
        "sendrecv" | "send" | "recv" => CollOp::SendRecv,
        "alltoall" | "alltoallv" => CollOp::AllToAll,
        _ => return None,
    })
}

/// The kernel's base name: no `void `, no template or parameter list.
fn base_name(name: &str) -> &str {
    let name = name.trim();
    let name = name.strip_prefix("void ").unwrap_or(name);
    let cut = name.find(['(', '<']).unwrap_or(name.len());
    name[..cut].trim()
}

/// Classifies a kernel name; `None` when it is not an NCCL kernel.
pub fn classify(name: &str) -> Option<CommKernel> {
    let base = base_name(name);
    let rest = base
        .strip_prefix("ncclDevKernel_")
        .or_else(|| base.strip_prefix("ncclKernel_"));
    let Some(rest) = rest else {
        // Very old NCCL (`ncclAllReduceRingLLKernel…`) or helper kernels.
        if !base.starts_with("nccl") {
            return None;
        }
        let lower = base.to_ascii_lowercase();
        let op = [
            "reducescatter",
            "allreduce",
            "allgather",
            "broadcast",
            "sendrecv",
            "alltoall",
            "reduce",
        ]
        .iter()
        .find(|o| lower.contains(*o))
        .and_then(|o| op_of(o))
        .unwrap_or(CollOp::Other);
        return Some(CommKernel {
            op,
            ..CommKernel::other()
        });
    };
    let mut kernel = CommKernel {
        op: CollOp::Other,
        dtype: None,
        algo: None,
        proto: None,
    };
    let mut i = 0;
    let bytes = rest.as_bytes();
    let mut first = true;
    while i < rest.len() {
        let tail = &rest[i..];
        // Multi-token spellings first: `__nv_bfloat16`, `COLLNET_DIRECT`, `uint8_t`.
        let matched = DTYPES
            .iter()
            .find(|(spelled, _)| token_at(tail, spelled))
            .map(|&(spelled, norm)| {
                kernel.dtype.get_or_insert(norm);
                spelled.len()
            })
            .or_else(|| {
                ALGOS.iter().find(|a| token_at(tail, a)).map(|a| {
                    kernel.algo.get_or_insert(a);
                    a.len()
                })
            })
            .or_else(|| {
                PROTOS.iter().find(|p| token_at(tail, p)).map(|p| {
                    kernel.proto.get_or_insert(p);
                    p.len()
                })
            });
        let len = match matched {
            Some(len) => len,
            None => {
                let tok_len = tail.find('_').unwrap_or(tail.len());
                if first && let Some(op) = op_of(&tail[..tok_len]) {
                    kernel.op = op;
                }
                tok_len
            }
        };
        first = false;
        i += len;
        while i < rest.len() && bytes[i] == b'_' {
            i += 1;
        }
    }
    Some(kernel)
}

/// Whether `tail` starts with the whole token `tok` (followed by `_` or end).
fn token_at(tail: &str, tok: &str) -> bool {
    tail.starts_with(tok) && matches!(tail.as_bytes().get(tok.len()), None | Some(b'_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(name: &str) -> (CollOp, Option<&str>, Option<&str>, Option<&str>) {
        let k = classify(name).expect(name);
        (k.op, k.dtype, k.algo, k.proto)
    }

    #[test]
    fn new_scheme() {
        use CollOp::*;
        assert_eq!(
            c("ncclDevKernel_AllGather_RING_LL"),
            (AllGather, None, Some("RING"), Some("LL"))
        );
        assert_eq!(
            c("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            (ReduceScatter, Some("bf16"), Some("RING"), Some("LL"))
        );
        assert_eq!(
            c("ncclDevKernel_AllReduce_Sum_f32_TREE_LL128"),
            (AllReduce, Some("f32"), Some("TREE"), Some("LL128"))
        );
        assert_eq!(
            c("ncclDevKernel_AllReduce_Sum_bf16_NVLS_TREE_SIMPLE"),
            (AllReduce, Some("bf16"), Some("NVLS_TREE"), Some("SIMPLE"))
        );
        assert_eq!(
            c("ncclDevKernel_AllReduce_Sum_u8_COLLNET_DIRECT_SIMPLE"),
            (
                AllReduce,
                Some("u8"),
                Some("COLLNET_DIRECT"),
                Some("SIMPLE")
            )
        );
        assert_eq!(c("ncclDevKernel_SendRecv"), (SendRecv, None, None, None));
        assert_eq!(
            c("ncclDevKernel_Broadcast_RING_LL"),
            (Broadcast, None, Some("RING"), Some("LL"))
        );
        assert_eq!(
            c("ncclDevKernel_Reduce_Sum_f8e4m3_RING_LL"),
            (Reduce, Some("f8e4m3"), Some("RING"), Some("LL"))
        );
    }

    #[test]
    fn old_scheme() {
        use CollOp::*;
        assert_eq!(
            c("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"),
            (AllReduce, Some("f32"), Some("RING"), Some("LL"))
        );
        assert_eq!(
            c("ncclKernel_AllReduce_RING_LL_Sum___nv_bfloat16"),
            (AllReduce, Some("bf16"), Some("RING"), Some("LL"))
        );
        assert_eq!(
            c("ncclKernel_ReduceScatter_RING_SIMPLE_Sum_half"),
            (ReduceScatter, Some("f16"), Some("RING"), Some("SIMPLE"))
        );
        assert_eq!(
            c("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"),
            (SendRecv, Some("i8"), Some("RING"), Some("SIMPLE"))
        );
        assert_eq!(
            c("ncclKernel_AllGather_RING_LL128_Sum_uint8_t"),
            (AllGather, Some("u8"), Some("RING"), Some("LL128"))
        );
        assert_eq!(
            c("void ncclKernel_Broadcast_TREE_LL_Sum_double(ncclWorkElem)"),
            (Broadcast, Some("f64"), Some("TREE"), Some("LL"))
        );
    }

    #[test]
    fn odd_names() {
        use CollOp::*;
        assert_eq!(c("ncclDevKernel_Generic"), (Other, None, None, None));
        assert_eq!(c("ncclDevKernel_Generic_4"), (Other, None, None, None));
        assert_eq!(c("ncclAllReduceRingLLKernel_sum_f32").0, AllReduce);
        assert_eq!(c("ncclDevKernel_AllToAll").0, AllToAll);
        assert!(classify("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n").is_none());
        assert!(classify("void at::native::vectorized_elementwise_kernel<4, float>").is_none());
        assert!(classify("").is_none());
        assert!(classify("ncclDevKernel_").is_some());
        // A "RING" inside another token is not a hint.
        assert_eq!(
            c("ncclDevKernel_AllReduce_RINGX_LLX"),
            (AllReduce, None, None, None)
        );
    }
}
