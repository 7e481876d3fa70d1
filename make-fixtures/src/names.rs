//! Kernel names (demangled / short / mangled) and launch shapes modelled on real exports.

use crate::model::{KName, Nccl};

pub const XMMA_GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas";
pub const NVJET_GEMM: &str = "nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN";

/// A compute kernel kind with its launch shape.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Compute {
    Xmma,
    Nvjet,
    Elementwise,
    FlashFwd,
    FlashBwd,
    Adam,
}

pub struct Shape {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub registers: u32,
    pub static_smem: u32,
    pub dynamic_smem: u32,
}

/// cuBLAS-style kernels carry the same string in all three name columns (as in real exports).
fn same(s: &str) -> KName {
    KName {
        demangled: s.to_string(),
        short: s.to_string(),
        mangled: Some(s.to_string()),
    }
}

pub fn compute_name(c: Compute) -> KName {
    match c {
        Compute::Xmma => same(XMMA_GEMM),
        Compute::Nvjet => same(NVJET_GEMM),
        Compute::Elementwise => KName {
            demangled: "void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char *, (unsigned long)3>>(int, T2, T3)".into(),
            short: "vectorized_elementwise_kernel".into(),
            mangled: Some("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIN3c108BFloat16EEESt5arrayIPcLm3EEEEviT0_T1_".into()),
        },
        Compute::FlashFwd => KName {
            demangled: "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<(int)128, (int)128, (int)64, (int)4, (bool)0, (bool)0, cutlass::bfloat16_t, Flash_kernel_traits<(int)128, (int)128, (int)64, (int)4, cutlass::bfloat16_t>>, (bool)0, (bool)0, (bool)0, (bool)0, (bool)0, (bool)1, (bool)0, (bool)0>(flash::Flash_fwd_params)".into(),
            short: "flash_fwd_kernel".into(),
            mangled: Some("_ZN5flash16flash_fwd_kernelI23Flash_fwd_kernel_traitsILi128ELi128ELi64ELi4ELb0ELb0EN7cutlass10bfloat16_tE19Flash_kernel_traitsILi128ELi128ELi64ELi4ES3_EELb0ELb0ELb0ELb0ELb0ELb1ELb0ELb0EEEvNS_16Flash_fwd_paramsE".into()),
        },
        Compute::FlashBwd => KName {
            demangled: "void flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<(int)128, (int)64, (int)128, (int)8, (int)2, (int)4, (int)2, (bool)0, (bool)0, cutlass::bfloat16_t, Flash_kernel_traits<(int)128, (int)64, (int)128, (int)8, cutlass::bfloat16_t>>, (bool)1, (bool)0, (bool)0, (bool)0, (bool)0, (bool)0, (bool)0>(flash::Flash_bwd_params)".into(),
            short: "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel".into(),
            mangled: Some("_ZN5flash44flash_bwd_dq_dk_dv_loop_seqk_parallel_kernelI23Flash_bwd_kernel_traitsILi128ELi64ELi128ELi8ELi2ELi4ELi2ELb0ELb0EN7cutlass10bfloat16_tE19Flash_kernel_traitsILi128ELi64ELi128ELi8ES3_EELb1ELb0ELb0ELb0ELb0ELb0ELb0EEEvNS_16Flash_bwd_paramsE".into()),
        },
        // Some exports leave mangledName NULL; keep one such kernel.
        Compute::Adam => KName {
            demangled: "void at::native::<unnamed>::multi_tensor_apply_kernel<at::native::<unnamed>::TensorListMetadata<(int)4>, at::native::<unnamed>::FusedAdamMathFunctor<float, (int)4, (at::native::ADAM_MODE)1, (bool)0>, double *, double, double, double, double, double, double, bool, float *, float *>(T1, T2, T3...)".into(),
            short: "multi_tensor_apply_kernel".into(),
            mangled: None,
        },
    }
}

pub fn compute_shape(c: Compute) -> Shape {
    let (grid, block, registers, static_smem, dynamic_smem) = match c {
        Compute::Xmma => ([132, 1, 1], [384, 1, 1], 168, 0, 213_504),
        Compute::Nvjet => ([8, 66, 1], [384, 1, 1], 168, 0, 197_632),
        Compute::Elementwise => ([24_576, 1, 1], [128, 1, 1], 32, 0, 0),
        Compute::FlashFwd => ([16, 32, 8], [128, 1, 1], 255, 0, 49_152),
        Compute::FlashBwd => ([8, 16, 32], [256, 1, 1], 255, 0, 98_304),
        Compute::Adam => ([320, 1, 1], [512, 1, 1], 60, 0, 0),
    };
    Shape {
        grid,
        block,
        registers,
        static_smem,
        dynamic_smem,
    }
}

/// An NCCL device kernel name, e.g. `ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL`.
/// Reductions carry `_Sum_<dtype>`; AllGather and Broadcast carry no dtype.
pub fn nccl(
    op: &'static str,
    dtype: Option<&'static str>,
    algo: &'static str,
    proto: &'static str,
) -> (KName, Nccl) {
    let short = match dtype {
        Some(d) => format!("ncclDevKernel_{op}_Sum_{d}_{algo}_{proto}"),
        None => format!("ncclDevKernel_{op}_{algo}_{proto}"),
    };
    let info = Nccl {
        op,
        dtype,
        algo: Some(algo),
        proto: Some(proto),
    };
    (nccl_name(short), info)
}

/// NCCL's point-to-point kernel, `ncclDevKernel_SendRecv`: no dtype, algorithm or protocol.
pub fn nccl_sendrecv() -> (KName, Nccl) {
    let info = Nccl {
        op: "SendRecv",
        dtype: None,
        algo: None,
        proto: None,
    };
    (nccl_name("ncclDevKernel_SendRecv".into()), info)
}

/// An NCCL device kernel's names: short, demangled with its argument storage, mangled.
fn nccl_name(short: String) -> KName {
    KName {
        demangled: format!("{short}(ncclDevKernelArgsStorage<4096ul>)"),
        mangled: Some(format!(
            "_Z{}{short}24ncclDevKernelArgsStorageILm4096EE",
            short.len()
        )),
        short,
    }
}

/// Launch shape of NCCL kernels (taken from a real ncclDevKernel_SendRecv row).
pub fn nccl_shape(channels: u32) -> Shape {
    Shape {
        grid: [channels, 1, 1],
        block: [640, 1, 1],
        registers: 96,
        static_smem: 21_568,
        dynamic_smem: 82_240,
    }
}
