//! NCCL's NVTX payloads, laid out by the schema rows of a real 2026.2 export
//! (`nccl_payload_schemas.sql`) and wrapped in nsys's record header: the communicator id at
//! offset 0, then the call's fields at the schema's offsets.

use super::program::Call;
use crate::payloads::{nsys_record, static_schema as schema};

/// A call's payload: communicator, message size [bytes], then the reduction op (Sum, 0) of
/// AllReduce and ReduceScatter or the peer rank of ncclSend/ncclRecv (4 bytes, padded to 8).
pub fn call(comm_id: u64, c: &Call) -> Vec<u8> {
    let mut v = comm_id.to_le_bytes().to_vec();
    v.extend(c.bytes.to_le_bytes());
    match c.name {
        "ncclAllGather" => {}
        _ => {
            v.extend((c.peer.unwrap_or(0) as u32).to_le_bytes());
            v.extend([0u8; 4]);
        }
    }
    nsys_record(schema(c.name), &v)
}

/// ncclCommInitRankConfig's payload (the schema CommInitRank shares): communicator, number
/// of ranks, this member's rank in it, its CUDA device.
pub fn comm_init(comm_id: u64, nranks: usize, rank: usize, device: u32) -> Vec<u8> {
    let mut v = comm_id.to_le_bytes().to_vec();
    v.extend((nranks as u32).to_le_bytes());
    v.extend((rank as u32).to_le_bytes());
    v.extend(device.to_le_bytes());
    v.extend([0u8; 4]);
    nsys_record(schema("ncclCommInitRankConfig"), &v)
}
