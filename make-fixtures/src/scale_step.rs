//! Scale profiles: the kernels of one training step and the step template (program order of
//! GPU operations, their streams and dependencies, and the NVTX ranges around them).
//!
//! The step is an FSDP-style transformer step with `LAYERS` layers: a parameter AllGather per
//! layer in forward (prefetched one layer ahead), AllGather + two ReduceScatter (bf16) per layer
//! in backward, all on the main NCCL stream; two f32 AllReduce (grad norm, loss) on a second
//! NCCL stream in the optimizer. 690 kernels per step, 98 of them NCCL (14 %), plus 7
//! memcpy/memset (1 %).

use crate::model::KName;
use crate::names::{self, Compute, Shape};

pub const LAYERS: usize = 24;

/// Stream ids, the same in every process (so groups by stream id agree across ranks).
pub const S_COMPUTE: u32 = 7;
pub const S_SPARE: u32 = 13;
pub const S_NCCL: u32 = 20;
pub const S_NCCL_AR: u32 = 28;
/// Index of a stream in a device's stream state.
pub const COMPUTE: u8 = 0;
pub const NCCL: u8 = 1;
pub const NCCL_AR: u8 = 2;
pub const STREAM_IDS: [u32; 3] = [S_COMPUTE, S_NCCL, S_NCCL_AR];

pub struct Spec {
    pub name: KName,
    pub shape: Shape,
    /// Duration of a compute kernel; for NCCL, the transfer time after the last rank arrived.
    pub dur_us: (f64, f64),
    /// Text of the NVTX op range around the launch (compute kernels).
    pub op: &'static str,
    pub nccl: bool,
}

// kernel ids: indices into `specs()`
pub const EMB_FWD: u8 = 0;
pub const LN_FWD: u8 = 1;
pub const GEMM_QKV: u8 = 2;
pub const ROPE_FWD: u8 = 3;
pub const FLASH_FWD: u8 = 4;
pub const GEMM_PROJ: u8 = 5;
pub const GEMM_FC1: u8 = 6;
pub const GELU_FWD: u8 = 7;
pub const GEMM_FC2: u8 = 8;
pub const SOFTMAX_FWD: u8 = 9;
pub const NLL_FWD: u8 = 10;
pub const SOFTMAX_BWD: u8 = 11;
pub const GEMM_DGRAD: u8 = 12;
pub const GEMM_WGRAD: u8 = 13;
pub const GELU_BWD: u8 = 14;
pub const LN_BWD_INPUT: u8 = 15;
pub const LN_BWD_GAMMA: u8 = 16;
pub const GEMM_PROJ_DGRAD: u8 = 17;
pub const FLASH_BWD: u8 = 18;
pub const ROPE_BWD: u8 = 19;
pub const EMB_BWD: u8 = 20;
pub const UNSCALE: u8 = 21;
pub const L2NORM: u8 = 22;
pub const ADAM: u8 = 23;
pub const CAST: u8 = 24;
pub const FILL: u8 = 25;
pub const REDUCE: u8 = 26;
pub const RESIDUAL_ADD: u8 = 27;
pub const SPLITK: u8 = 28;
pub const ALLGATHER: u8 = 29;
pub const REDUCESCATTER: u8 = 30;
pub const ALLREDUCE: u8 = 31;

fn own(short: &str, demangled: &str, mangled: Option<&str>) -> KName {
    KName {
        demangled: demangled.into(),
        short: short.into(),
        mangled: mangled.map(Into::into),
    }
}

/// cuBLAS kernels carry the same string in all three name columns (as in real exports).
fn cublas(s: &str) -> KName {
    own(s, s, Some(s))
}

fn shape(
    grid: [u32; 3],
    block: [u32; 3],
    registers: u32,
    static_smem: u32,
    dyn_smem: u32,
) -> Shape {
    Shape {
        grid,
        block,
        registers,
        static_smem,
        dynamic_smem: dyn_smem,
    }
}

fn compute(name: KName, shape: Shape, dur_us: (f64, f64), op: &'static str) -> Spec {
    Spec {
        name,
        shape,
        dur_us,
        op,
        nccl: false,
    }
}

fn existing(c: Compute, dur_us: (f64, f64), op: &'static str) -> Spec {
    compute(names::compute_name(c), names::compute_shape(c), dur_us, op)
}

/// All kernels of a scale profile, indexed by the ids above: 29 compute kernels (29 demangled
/// names, 24 short names) and three NCCL collectives.
pub fn specs() -> Vec<Spec> {
    let nccl = |op, dtype, channels, dur_us| {
        let (name, _) = names::nccl(op, dtype, "RING", "LL");
        Spec {
            name,
            shape: names::nccl_shape(channels),
            dur_us,
            op: "",
            nccl: true,
        }
    };
    let v = vec![
        compute(
            own(
                "indexSelectLargeIndex",
                "void at::native::<unnamed>::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, (int)2, (int)2, (int)-2, (bool)1>(at::cuda::detail::TensorInfo<T1, T3>, at::cuda::detail::TensorInfo<const T1, T3>, at::cuda::detail::TensorInfo<const T2, T3>, int, int, T3, T3, long)",
                Some(
                    "_ZN2at6native12_GLOBAL__N_121indexSelectLargeIndexIN3c108BFloat16EljLi2ELi2ELin2ELb1EEEvNS_4cuda6detail10TensorInfoIT_T1_EENS8_IKS9_SA_EENS8_IKT0_SA_EEiiSA_SA_l",
                ),
            ),
            shape([4096, 1, 1], [128, 4, 1], 32, 0, 0),
            (30.0, 60.0),
            "aten::embedding",
        ),
        compute(
            own(
                "vectorized_layer_norm_kernel",
                "void at::native::<unnamed>::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, T2, const T1 *, const T1 *, const T1 *, T2 *, T2 *, T1 *)",
                Some(
                    "_ZN2at6native12_GLOBAL__N_128vectorized_layer_norm_kernelIN3c108BFloat16EfEEviT0_PKT_S8_S8_PS5_S9_PS6_",
                ),
            ),
            shape([8192, 1, 1], [256, 1, 1], 40, 0, 0),
            (25.0, 45.0),
            "aten::layer_norm",
        ),
        existing(Compute::Xmma, (250.0, 450.0), "aten::linear"),
        compute(
            own(
                "fused_rope_forward_kernel",
                "void transformer_engine::fused_rope_forward_kernel<__nv_bfloat16, __nv_bfloat16>(const T1 *, const int *, const float *, T2 *, bool, int, int, int, int, int, int, int, int, int, int, int)",
                Some(
                    "_ZN18transformer_engine25fused_rope_forward_kernelI13__nv_bfloat16S1_EEvPKT_PKiPKfPT0_biiiiiiiiiii",
                ),
            ),
            shape([4096, 8, 1], [32, 4, 1], 56, 0, 0),
            (20.0, 40.0),
            "FusedRoPEFunc",
        ),
        existing(Compute::FlashFwd, (400.0, 800.0), "FlashAttnFunc"),
        existing(Compute::Nvjet, (120.0, 250.0), "aten::linear"),
        compute(
            cublas(
                "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
            ),
            shape([132, 1, 1], [384, 1, 1], 168, 0, 213_504),
            (450.0, 800.0),
            "aten::linear",
        ),
        compute(
            own(
                "vectorized_elementwise_kernel",
                "void at::native::vectorized_elementwise_kernel<(int)4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase &, at::native::GeluType)::[lambda() (instance 2)]::operator ()() const::[lambda() (instance 4)]::operator ()() const::[lambda(c10::BFloat16) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)",
                None,
            ),
            shape([49_152, 1, 1], [128, 1, 1], 30, 0, 0),
            (40.0, 80.0),
            "aten::gelu",
        ),
        compute(
            cublas("nvjet_tst_256x128_64x4_2x1_v_bz_coopA_TNT"),
            shape([8, 66, 1], [384, 1, 1], 168, 0, 197_632),
            (450.0, 800.0),
            "aten::linear",
        ),
        compute(
            own(
                "cunn_SoftMaxForward",
                "void at::native::<unnamed>::cunn_SoftMaxForward<(int)8, c10::BFloat16, float, float, at::native::<unnamed>::LogSoftMaxForwardEpilogue>(T4 *, const T2 *, int)",
                Some(
                    "_ZN2at6native12_GLOBAL__N_119cunn_SoftMaxForwardILi8EN3c108BFloat16EffNS1_25LogSoftMaxForwardEpilogueEEEvPT2_PKT0_i",
                ),
            ),
            shape([8192, 1, 1], [1024, 1, 1], 40, 0, 4096),
            (300.0, 500.0),
            "aten::log_softmax",
        ),
        compute(
            own(
                "nll_loss_forward_reduce_cuda_kernel_2d",
                "void at::native::<unnamed>::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(T1 *, T1 *, const T1 *, const T3 *, const T1 *, bool, long, long, long, long)",
                Some(
                    "_ZN2at6native12_GLOBAL__N_138nll_loss_forward_reduce_cuda_kernel_2dIfflEEvPT_S4_PKS3_PKT1_S6_bllll",
                ),
            ),
            shape([1, 1, 1], [1024, 1, 1], 32, 8192, 0),
            (10.0, 20.0),
            "aten::nll_loss",
        ),
        compute(
            own(
                "cunn_SoftMaxBackward",
                "void at::native::<unnamed>::cunn_SoftMaxBackward<(int)8, c10::BFloat16, float, float, at::native::<unnamed>::LogSoftMaxBackwardEpilogue>(T2 *, const T4 *, const T4 *, long)",
                Some(
                    "_ZN2at6native12_GLOBAL__N_120cunn_SoftMaxBackwardILi8EN3c108BFloat16EffNS1_26LogSoftMaxBackwardEpilogueEEEvPT0_PKT2_SA_l",
                ),
            ),
            shape([8192, 1, 1], [1024, 1, 1], 38, 0, 0),
            (300.0, 500.0),
            "aten::_log_softmax_backward_data",
        ),
        compute(
            cublas(
                "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
            ),
            shape([132, 1, 1], [384, 1, 1], 168, 0, 213_504),
            (300.0, 700.0),
            "aten::mm",
        ),
        compute(
            cublas(
                "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
            ),
            shape([132, 1, 1], [256, 1, 1], 168, 0, 163_840),
            (300.0, 700.0),
            "aten::mm",
        ),
        compute(
            own(
                "vectorized_elementwise_kernel",
                "void at::native::vectorized_elementwise_kernel<(int)4, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase &, at::native::GeluType)::[lambda() (instance 2)]::operator ()() const::[lambda() (instance 4)]::operator ()() const::[lambda(c10::BFloat16, c10::BFloat16) (instance 1)], std::array<char *, (unsigned long)3>>(int, T2, T3)",
                None,
            ),
            shape([49_152, 1, 1], [128, 1, 1], 32, 0, 0),
            (50.0, 100.0),
            "aten::gelu_backward",
        ),
        compute(
            own(
                "layer_norm_grad_input_kernel_vectorized",
                "void at::native::<unnamed>::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>(const T1 *, const T1 *, const T2 *, const T2 *, const T1 *, T1 *, int)",
                Some(
                    "_ZN2at6native12_GLOBAL__N_139layer_norm_grad_input_kernel_vectorizedIN3c108BFloat16EfEEvPKT_S7_PKT0_SA_S7_PS5_i",
                ),
            ),
            shape([8192, 1, 1], [256, 1, 1], 48, 0, 0),
            (30.0, 60.0),
            "aten::native_layer_norm_backward",
        ),
        compute(
            own(
                "GammaBetaBackwardCUDAKernelTemplate",
                "void at::native::<unnamed>::GammaBetaBackwardCUDAKernelTemplate<c10::BFloat16, float, (unsigned int)32, (unsigned int)16, (unsigned int)256, (bool)0, (bool)1>(long, long, const T1 *, const T1 *, const T2 *, const T2 *, T1 *, T1 *)",
                Some(
                    "_ZN2at6native12_GLOBAL__N_135GammaBetaBackwardCUDAKernelTemplateIN3c108BFloat16EfLj32ELj16ELj256ELb0ELb1EEEvllPKT_S7_PKT0_SA_PS5_SB_",
                ),
            ),
            shape([128, 1, 1], [32, 16, 1], 64, 4224, 0),
            (20.0, 40.0),
            "aten::native_layer_norm_backward",
        ),
        compute(
            cublas("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN"),
            shape([16, 33, 1], [384, 1, 1], 168, 0, 197_632),
            (120.0, 250.0),
            "aten::mm",
        ),
        existing(Compute::FlashBwd, (900.0, 1600.0), "FlashAttnFuncBackward"),
        compute(
            own(
                "fused_rope_backward_kernel",
                "void transformer_engine::fused_rope_backward_kernel<__nv_bfloat16, __nv_bfloat16>(const T1 *, const int *, const float *, T2 *, bool, int, int, int, int, int, int, int, int, int, int)",
                Some(
                    "_ZN18transformer_engine26fused_rope_backward_kernelI13__nv_bfloat16S1_EEvPKT_PKiPKfPT0_biiiiiiiiii",
                ),
            ),
            shape([4096, 8, 1], [32, 4, 1], 56, 0, 0),
            (20.0, 40.0),
            "FusedRoPEFuncBackward",
        ),
        compute(
            own(
                "embedding_backward_feature_kernel",
                "void at::native::<unnamed>::embedding_backward_feature_kernel<c10::BFloat16, float, long>(const T3 *, const T1 *, T1 *, int, long, int)",
                Some(
                    "_ZN2at6native12_GLOBAL__N_133embedding_backward_feature_kernelIN3c108BFloat16EflEEvPKT1_PKT_PS8_ili",
                ),
            ),
            shape([2048, 1, 1], [32, 32, 1], 56, 8448, 0),
            (150.0, 300.0),
            "aten::embedding_dense_backward",
        ),
        compute(
            own(
                "multi_tensor_apply_kernel",
                "void at::native::<unnamed>::multi_tensor_apply_kernel<at::native::<unnamed>::TensorListMetadata<(int)1>, at::native::<unnamed>::BinaryOpScalarFunctor<float, (int)1, (int)1, (int)0>, std::multiplies<float>, float>(T1, T2, T3...)",
                None,
            ),
            shape([320, 1, 1], [512, 1, 1], 36, 0, 0),
            (200.0, 400.0),
            "aten::_foreach_mul_",
        ),
        compute(
            own(
                "multi_tensor_apply_kernel",
                "void at::native::<unnamed>::multi_tensor_apply_kernel<at::native::<unnamed>::TensorListMetadata<(int)1>, at::native::<unnamed>::LpNormFunctor<float, (at::native::<unnamed>::NormType)1, float, float>, float *, int>(T1, T2, T3...)",
                None,
            ),
            shape([320, 1, 1], [512, 1, 1], 40, 2048, 0),
            (200.0, 400.0),
            "aten::_foreach_norm",
        ),
        existing(Compute::Adam, (400.0, 700.0), "aten::_fused_adam_"),
        compute(
            own(
                "unrolled_elementwise_kernel",
                "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 3)]::operator ()() const::[lambda() (instance 10)]::operator ()() const::[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>, (int)4, TrivialOffsetCalculator<(int)1, unsigned int>, TrivialOffsetCalculator<(int)1, unsigned int>, at::native::memory::LoadWithCast<(int)1>, at::native::memory::StoreWithCast<(int)1>>(int, T1, T2, T3, T4, T5, T6)",
                None,
            ),
            shape([65_535, 1, 1], [128, 1, 1], 28, 0, 0),
            (150.0, 300.0),
            "aten::copy_",
        ),
        compute(
            own(
                "vectorized_elementwise_kernel",
                "void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, std::array<char *, (unsigned long)1>>(int, T2, T3)",
                Some(
                    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_",
                ),
            ),
            shape([65_535, 1, 1], [128, 1, 1], 16, 0, 0),
            (100.0, 200.0),
            "aten::zero_",
        ),
        compute(
            own(
                "reduce_kernel",
                "void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator ()(at::TensorIterator &)::[lambda(float, float) (instance 1)]>, unsigned int, float, (int)4, (int)4>>(T3)",
                None,
            ),
            shape([1, 1, 1], [512, 1, 1], 32, 0, 16),
            (10.0, 25.0),
            "aten::sum",
        ),
        existing(Compute::Elementwise, (20.0, 50.0), "aten::add_"),
        compute(
            own(
                "splitKreduce_kernel",
                "void cublasLt::splitKreduce_kernel<(int)32, (int)16, int, float, __nv_bfloat16, float, __nv_bfloat16, (bool)1, (bool)0, (bool)0>(cublasLt::cublasSplitKParams<T6>, const T4 *, const T5 *, T5 *, const T6 *, const T6 *, const T7 *, const T4 *, T7 *, void *, long, T6 *, int *)",
                None,
            ),
            shape([96, 1, 1], [512, 1, 1], 30, 0, 0),
            (8.0, 15.0),
            "aten::mm",
        ),
        nccl("AllGather", None, 24, (250.0, 500.0)),
        nccl("ReduceScatter", Some("bf16"), 24, (300.0, 700.0)),
        nccl("AllReduce", Some("f32"), 16, (400.0, 900.0)),
    ];
    assert_eq!(v.len(), ALLREDUCE as usize + 1);
    v
}

#[derive(Clone, Copy)]
pub enum Op {
    Kernel(u8),
    /// ENUM_CUDA_MEMCPY_OPER copy kind: 1 HtoD, 2 DtoH.
    Memcpy {
        bytes: i64,
        kind: u32,
        dur_us: (f64, f64),
    },
    Memset {
        bytes: i64,
        dur_us: (f64, f64),
    },
}

pub struct Pos {
    pub op: Op,
    /// COMPUTE, NCCL or NCCL_AR.
    pub stream: u8,
    /// The op waits (stream-wait-event) for the end of the op at this earlier position.
    pub wait: Option<u32>,
}

/// Popped at the end of the step (after the step's synchronize).
pub const STEP_END: u32 = u32::MAX;

/// An NVTX push/pop range of the main thread around positions `first..=last`.
pub struct Range {
    pub text: &'static str,
    /// Inline `text` column (else a registered string, `textId`).
    pub inline: bool,
    pub first: u32,
    pub last: u32,
    /// 0 train_step, 1 phase, 2 layer, 3 sub-layer, 4 op: a child has a higher level than its
    /// parent, and ranges are kept in order of (level, first) when a budget cuts the list.
    pub level: u8,
}

pub struct Template {
    pub pos: Vec<Pos>,
    pub ranges: Vec<Range>,
    /// Per position: ranges pushed before it, outermost first.
    pub starts_at: Vec<Vec<u32>>,
    /// Number of kernels in `pos`.
    pub kernels: usize,
}

pub const LAYER_NAMES: [&str; LAYERS] = [
    "layer_00", "layer_01", "layer_02", "layer_03", "layer_04", "layer_05", "layer_06", "layer_07",
    "layer_08", "layer_09", "layer_10", "layer_11", "layer_12", "layer_13", "layer_14", "layer_15",
    "layer_16", "layer_17", "layer_18", "layer_19", "layer_20", "layer_21", "layer_22", "layer_23",
];
pub const STEP_NAME: &str = "train_step";

struct Builder {
    pos: Vec<Pos>,
    ranges: Vec<Range>,
    open: Vec<usize>,
}

impl Builder {
    fn push(&mut self, op: Op, stream: u8, wait: Option<u32>) -> u32 {
        self.pos.push(Pos { op, stream, wait });
        self.pos.len() as u32 - 1
    }
    fn k(&mut self, spec: u8) -> u32 {
        self.push(Op::Kernel(spec), COMPUTE, None)
    }
    fn k_after(&mut self, spec: u8, wait: u32) -> u32 {
        self.push(Op::Kernel(spec), COMPUTE, Some(wait))
    }
    fn coll(&mut self, spec: u8, stream: u8, wait: Option<u32>) -> u32 {
        self.push(Op::Kernel(spec), stream, wait)
    }
    fn open(&mut self, text: &'static str, level: u8) {
        self.ranges.push(Range {
            text,
            inline: level == 0,
            first: self.pos.len() as u32,
            last: STEP_END,
            level,
        });
        self.open.push(self.ranges.len() - 1);
    }
    fn close(&mut self) {
        let r = self.open.pop().unwrap();
        self.ranges[r].last = self.pos.len() as u32 - 1;
    }
}

pub fn template(specs: &[Spec]) -> Template {
    let mut b = Builder {
        pos: vec![],
        ranges: vec![],
        open: vec![],
    };
    let htod = |bytes: i64, dur_us| Op::Memcpy {
        bytes,
        kind: 1,
        dur_us,
    };
    b.open(STEP_NAME, 0); // popped at STEP_END
    b.push(htod(8 << 20, (300.0, 380.0)), COMPUTE, None); // tokens
    b.push(htod(8 << 20, (300.0, 380.0)), COMPUTE, None); // labels
    b.push(htod(1 << 20, (40.0, 60.0)), COMPUTE, None); // position ids
    let memset = |bytes: i64, dur_us| Op::Memset { bytes, dur_us };
    b.push(memset(32 << 20, (20.0, 40.0)), COMPUTE, None);

    b.open("forward", 1);
    b.k(EMB_FWD);
    let mut ag = b.coll(ALLGATHER, NCCL, None);
    for name in LAYER_NAMES {
        b.open(name, 2);
        b.open("self_attention", 3);
        let ln = b.k_after(LN_FWD, ag);
        // prefetch the next layer's parameters once this layer has started
        if name != LAYER_NAMES[LAYERS - 1] {
            ag = b.coll(ALLGATHER, NCCL, Some(ln));
        }
        for k in [GEMM_QKV, ROPE_FWD, FLASH_FWD, GEMM_PROJ] {
            b.k(k);
        }
        b.close();
        b.open("mlp", 3);
        for k in [LN_FWD, GEMM_FC1, GELU_FWD, GEMM_FC2] {
            b.k(k);
        }
        b.close();
        b.close();
    }
    b.k(SOFTMAX_FWD);
    b.k(NLL_FWD);
    b.close();

    b.open("backward", 1);
    b.push(memset(256 << 20, (120.0, 160.0)), COMPUTE, None); // gradient buckets
    let mut prev = b.k(SOFTMAX_BWD);
    let mut last_rs = prev;
    for name in LAYER_NAMES.iter().rev() {
        b.open(name, 2);
        let ag = b.coll(ALLGATHER, NCCL, Some(prev));
        b.open("mlp", 3);
        prev = b.k_after(GEMM_DGRAD, ag);
        for k in [
            GEMM_WGRAD,
            GELU_BWD,
            GEMM_DGRAD,
            GEMM_WGRAD,
            SPLITK,
            LN_BWD_INPUT,
        ] {
            b.k(k);
        }
        b.coll(REDUCESCATTER, NCCL, Some(b.pos.len() as u32 - 1));
        b.close();
        b.open("self_attention", 3);
        for k in [
            GEMM_PROJ_DGRAD,
            GEMM_WGRAD,
            FLASH_BWD,
            ROPE_BWD,
            GEMM_DGRAD,
            GEMM_WGRAD,
            LN_BWD_INPUT,
            LN_BWD_GAMMA,
        ] {
            b.k(k);
        }
        last_rs = b.coll(REDUCESCATTER, NCCL, Some(b.pos.len() as u32 - 1));
        b.close();
        b.close();
    }
    b.k(EMB_BWD);
    b.close();

    b.open("optimizer", 1);
    b.k_after(UNSCALE, last_rs);
    let norm = b.k(L2NORM);
    let ar = b.coll(ALLREDUCE, NCCL_AR, Some(norm));
    b.k_after(ADAM, ar);
    for k in [ADAM, ADAM, ADAM, CAST, CAST, FILL, RESIDUAL_ADD] {
        b.k(k);
    }
    b.push(memset(4, (1.5, 3.0)), COMPUTE, None); // found_inf
    let loss = b.k(REDUCE);
    let ar = b.coll(ALLREDUCE, NCCL_AR, Some(loss));
    b.push(
        Op::Memcpy {
            bytes: 4,
            kind: 2,
            dur_us: (2.0, 4.0),
        },
        COMPUTE,
        Some(ar),
    );
    b.close();
    assert_eq!(b.open.len(), 1, "only train_step stays open");

    // one op range around each compute kernel launch
    let n = b.pos.len();
    for p in 0..n {
        if let Op::Kernel(k) = b.pos[p].op
            && !specs[k as usize].nccl
        {
            b.ranges.push(Range {
                text: specs[k as usize].op,
                inline: false,
                first: p as u32,
                last: p as u32,
                level: 4,
            });
        }
    }
    let mut starts_at = vec![vec![]; n];
    for (i, r) in b.ranges.iter().enumerate() {
        starts_at[r.first as usize].push(i as u32);
    }
    for v in &mut starts_at {
        v.sort_by_key(|&i| b.ranges[i as usize].level);
    }
    let kernels = b
        .pos
        .iter()
        .filter(|p| matches!(p.op, Op::Kernel(_)))
        .count();
    Template {
        pos: b.pos,
        ranges: b.ranges,
        starts_at,
        kernels,
    }
}

impl Template {
    /// Rank of each range among those present in a step cut after `len` positions, in order of
    /// (level, first); u32::MAX for ranges not present. A budget of `b` keeps ranks `< b`, so
    /// a kept range always has its parent kept.
    pub fn ranks(&self, len: usize) -> (Vec<u32>, usize) {
        let mut present: Vec<usize> = (0..self.ranges.len())
            .filter(|&i| (self.ranges[i].first as usize) < len)
            .collect();
        present.sort_by_key(|&i| (self.ranges[i].level, self.ranges[i].first));
        let mut rank = vec![u32::MAX; self.ranges.len()];
        for (k, &i) in present.iter().enumerate() {
            rank[i] = k as u32;
        }
        (rank, present.len())
    }
}
