//! The symbols and modules of scale_frames.rs's stacks (PyTorch 2 on Python 3.10, CUDA 12,
//! NCCL, flash-attn, Transformer Engine, the 550 driver), interned into StringIds once, and the
//! frame lists the stacks are made of.

use std::collections::HashMap;

use super::{Frame, Frames, Op, Sec};
use crate::scale_step::{
    ALLGATHER, ALLREDUCE, FLASH_BWD, FLASH_FWD, REDUCESCATTER, ROPE_BWD, ROPE_FWD, Spec,
};
use crate::writer::Strings;

const PY: &str = "/usr/bin/python3.10";
const LIBC: &str = "/usr/lib/x86_64-linux-gnu/libc.so.6";
const LIBSTDCXX: &str = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30";
const SITE: &str = "/usr/local/lib/python3.10/dist-packages";
const KERNEL: &str = "[kernel.kallsyms]";
const LIBCUDA: &str = "/usr/lib/x86_64-linux-gnu/libcuda.so.550.90.07";
const LIBMLX5: &str = "/usr/lib/x86_64-linux-gnu/libmlx5.so.1.24.44.0";
const BROKEN: &str = "[Broken backtraces]";

/// Modules under site-packages.
const TORCH_PY: &str = "torch/lib/libtorch_python.so";
const TORCH_CPU: &str = "torch/lib/libtorch_cpu.so";
const TORCH_CUDA: &str = "torch/lib/libtorch_cuda.so";
const C10_CUDA: &str = "torch/lib/libc10_cuda.so";
const CUDART: &str = "torch/lib/libcudart-9335f6a2.so.12";
const CUBLASLT: &str = "nvidia/cublas/lib/libcublasLt.so.12";
const NCCL: &str = "nvidia/nccl/lib/libnccl.so.2";
const FLASH: &str = "flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so";
const TE: &str = "transformer_engine/libtransformer_engine.so";
const TE_PY: &str = "transformer_engine_torch.cpython-310-x86_64-linux-gnu.so";

/// Kernel-mode frames, outermost first; a sample takes a prefix of one of them.
const K_YIELD: &[&str] = &[
    "entry_SYSCALL_64_after_hwframe",
    "do_syscall_64",
    "__x64_sys_sched_yield",
    "do_sched_yield",
    "schedule",
    "__schedule",
];
const K_IOCTL: &[&str] = &[
    "entry_SYSCALL_64_after_hwframe",
    "do_syscall_64",
    "__x64_sys_ioctl",
    "nvidia_unlocked_ioctl",
    "nvidia_ioctl",
    "rm_ioctl",
];
const K_IRQ: &[&str] = &[
    "asm_sysvec_apic_timer_interrupt",
    "sysvec_apic_timer_interrupt",
    "__sysvec_apic_timer_interrupt",
    "hrtimer_interrupt",
    "__hrtimer_run_queues",
];
const K_FAULT: &[&str] = &[
    "asm_exc_page_fault",
    "exc_page_fault",
    "do_user_addr_fault",
    "handle_mm_fault",
    "__handle_mm_fault",
    "clear_page_erms",
];
const K_FUTEX: &[&str] = &[
    "entry_SYSCALL_64_after_hwframe",
    "do_syscall_64",
    "__x64_sys_futex",
    "do_futex",
    "futex_wait",
    "futex_wait_queue",
];
const K_POLL: &[&str] = &[
    "entry_SYSCALL_64_after_hwframe",
    "do_syscall_64",
    "__x64_sys_poll",
    "do_sys_poll",
    "do_poll.constprop.0",
    "schedule_hrtimeout_range_clock",
];

struct Builder<'s> {
    st: &'s mut Strings,
    frames: Vec<Frame>,
    seen: HashMap<(String, String), u16>,
}

/// Where a module is mapped (the kernel's text as the signed value of 0xffffffff8a000000).
fn module_base(module: &str) -> i64 {
    if module == KERNEL {
        return 0xffff_ffff_8a00_0000_u64 as i64;
    }
    if module == PY {
        return 0x55d4_3a60_0000;
    }
    // FNV-1a of the path picks a 4 GiB-aligned slot below 0x7f00_0000_0000
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in module.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    0x7f00_0000_0000 + ((h % 0xe0) as i64) * 0x1_0000_0000
}

impl Builder<'_> {
    fn module(m: &str) -> String {
        if m.contains('/') || m.starts_with('[') {
            m.to_string()
        } else {
            format!("{SITE}/{m}")
        }
    }

    fn add(&mut self, symbol: &str, module: &str, kernel: bool) -> u16 {
        let module = Self::module(module);
        if let Some(&i) = self.seen.get(&(symbol.to_string(), module.clone())) {
            return i;
        }
        let unresolved = symbol.starts_with("0x");
        let ip = if unresolved {
            u64::from_str_radix(&symbol[2..], 16).expect("hex address") as i64
        } else {
            let mut h: u64 = 0x811c_9dc5;
            for b in symbol.bytes() {
                h = (h ^ b as u64).wrapping_mul(0x0100_0193);
            }
            module_base(&module).wrapping_add(((h & 0x00ff_fff0) + 0x1000) as i64)
        };
        let broken = symbol == BROKEN;
        let f = Frame {
            symbol: self.st.id(symbol),
            module: self.st.id(&module),
            unresolved,
            kernel,
            ip: if broken { 0 } else { ip },
            unwind: if kernel || broken { 0 } else { 7 },
        };
        self.frames.push(f);
        let i = self.frames.len() as u16 - 1;
        self.seen.insert((symbol.to_string(), module), i);
        i
    }

    /// Frames of `module`, outermost first.
    fn sec(&mut self, module: &str, symbols: &[&str]) -> Sec {
        symbols.iter().map(|s| self.add(s, module, false)).collect()
    }

    /// Unresolved frames of `module` at addresses `base + k * stride`.
    fn addrs(&mut self, module: &str, n: u64, stride: u64) -> Sec {
        let base = module_base(&Self::module(module)) as u64 + 0x2_4000;
        (0..n)
            .map(|k| self.add(&format!("0x{:x}", base + k * stride + 0x1b7), module, false))
            .collect()
    }

    fn kernel(&mut self, symbols: &[&str]) -> Sec {
        symbols.iter().map(|s| self.add(s, KERNEL, true)).collect()
    }
}

/// `aten::layer_norm` → `layer_norm`.
fn aten(op: &str) -> &str {
    op.strip_prefix("aten::").unwrap_or(op)
}

/// The autograd node of a backward op.
fn node(name: &str) -> &'static str {
    match name {
        "gelu_backward" => "GeluBackward0",
        "native_layer_norm_backward" => "NativeLayerNormBackward0",
        "_log_softmax_backward_data" => "LogSoftmaxBackward0",
        "embedding_dense_backward" => "EmbeddingBackward0",
        _ => "MmBackward0",
    }
}

impl Frames {
    pub fn new(st: &mut Strings, specs: &[Spec]) -> Self {
        let mut b = Builder {
            st,
            frames: vec![],
            seen: HashMap::new(),
        };
        let libc_start = b.addrs(LIBC, 2, 0x6c55);
        let mut main_base = vec![b.add("_start", PY, false)];
        main_base.push(b.add("__libc_start_main", LIBC, false));
        main_base.push(libc_start[0]);
        main_base.extend(b.sec(PY, &["Py_BytesMain", "Py_RunMain", "PyEval_EvalCode"]));
        let mut thread_base = vec![b.add("clone3", LIBC, false), libc_start[1]];
        thread_base.extend(b.sec(PY, &["thread_run", "_PyObject_Call"]));
        let py_eval = b.add("_PyEval_EvalFrameDefault", PY, false);
        let py_calls = b.sec(
            PY,
            &[
                "_PyFunction_Vectorcall",
                "method_vectorcall",
                "_PyObject_Call",
                "slot_tp_call",
                "_PyObject_MakeTpCall",
            ],
        );
        let py_leaves = b.sec(
            PY,
            &[
                "_PyEval_EvalFrameDefault",
                "PyObject_GetAttr",
                "_PyObject_GenericGetAttrWithDict",
                "_PyType_Lookup",
                "PyDict_GetItemWithError",
                "_PyObject_Malloc",
                "list_dealloc",
            ],
        );
        let engine = {
            let mut v = b.sec(
                TORCH_PY,
                &[
                    "torch::autograd::THPEngine_run_backward(_object*, _object*, _object*)",
                    "torch::autograd::python::PythonEngine::execute(std::vector<torch::autograd::Edge, std::allocator<torch::autograd::Edge> > const&, std::vector<at::Tensor, std::allocator<at::Tensor> > const&, bool, bool, std::vector<torch::autograd::Edge, std::allocator<torch::autograd::Edge> > const&)",
                ],
            );
            v.extend(b.sec(
                TORCH_CPU,
                &[
                    "torch::autograd::Engine::execute(std::vector<torch::autograd::Edge, std::allocator<torch::autograd::Edge> > const&, std::vector<at::Tensor, std::allocator<at::Tensor> > const&, bool, bool, bool, std::vector<torch::autograd::Edge, std::allocator<torch::autograd::Edge> > const&)",
                    "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)",
                    "torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&, std::shared_ptr<torch::autograd::ReadyQueue> const&)",
                ],
            ));
            v
        };
        let py_node = b.sec(
            TORCH_PY,
            &[
                "torch::autograd::PyNode::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)",
            ],
        );
        let cublas = |b: &mut Builder, cuda: &str, backward: bool| -> Sec {
            let mut v = if backward {
                b.sec(
                    TORCH_CPU,
                    &[
                        "torch::autograd::generated::MmBackward0::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)",
                        "at::_ops::mm::call(at::Tensor const&, at::Tensor const&)",
                    ],
                )
            } else {
                let mut v = b.sec(
                    TORCH_PY,
                    &["torch::autograd::THPVariable_linear(_object*, _object*, _object*)"],
                );
                v.extend(b.sec(
                    TORCH_CPU,
                    &[
                        "at::_ops::linear::call(at::Tensor const&, at::Tensor const&, std::optional<at::Tensor> const&)",
                        "at::native::linear(at::Tensor const&, at::Tensor const&, std::optional<at::Tensor> const&)",
                        "at::_ops::addmm::call(at::Tensor const&, at::Tensor const&, at::Tensor const&, c10::Scalar const&, c10::Scalar const&)",
                    ],
                ));
                v
            };
            v.extend(b.sec(TORCH_CUDA, &[cuda]));
            v.extend(b.sec(
                TORCH_CUDA,
                &[
                    "void at::cuda::blas::gemm_internal<c10::BFloat16>(char, char, long, long, long, c10::BFloat16, c10::BFloat16 const*, long, c10::BFloat16 const*, long, c10::BFloat16, c10::BFloat16*, long)",
                ],
            ));
            v.push(b.add("cublasLtMatmul", CUBLASLT, false));
            v.extend(b.addrs(CUBLASLT, 1, 0x0));
            v
        };
        let mut ops = vec![];
        for (i, s) in specs.iter().enumerate() {
            let i = i as u8;
            let name = aten(s.op);
            let op = if s.nccl {
                let (pg, nccl) = match i {
                    ALLGATHER => (
                        "c10d::ProcessGroupNCCL::_allgather_base(at::Tensor&, at::Tensor&, c10d::AllgatherOptions const&)",
                        "ncclAllGather",
                    ),
                    REDUCESCATTER => (
                        "c10d::ProcessGroupNCCL::_reduce_scatter_base(at::Tensor&, at::Tensor&, c10d::ReduceScatterOptions const&)",
                        "ncclReduceScatter",
                    ),
                    _ => {
                        debug_assert_eq!(i, ALLREDUCE);
                        (
                            "c10d::ProcessGroupNCCL::allreduce(std::vector<at::Tensor, std::allocator<at::Tensor> >&, c10d::AllreduceOptions const&)",
                            "ncclAllReduce",
                        )
                    }
                };
                let mut v = b.sec(
                    TORCH_PY,
                    &["pybind11::cpp_function::dispatcher(_object*, _object*, _object*)"],
                );
                v.extend(b.sec(TORCH_CUDA, &[pg]));
                v.extend(b.sec(
                    NCCL,
                    &[
                        nccl,
                        "ncclEnqueueCheck(ncclInfo*)",
                        "ncclGroupEndInternal(ncclSimInfo*)",
                        "groupLaunch(ncclAsyncJob*, ncclSimInfo*)",
                        "doLaunches(ncclComm*)",
                        "ncclLaunchKernel(ncclComm*, ncclKernelPlan*)",
                    ],
                ));
                Op {
                    backward: false,
                    py_node: false,
                    frames: v,
                }
            } else if name == "linear" {
                Op {
                    backward: false,
                    py_node: false,
                    frames: cublas(
                        &mut b,
                        "at::(anonymous namespace)::wrapper_CUDA_addmm(at::Tensor const&, at::Tensor const&, at::Tensor const&, c10::Scalar const&, c10::Scalar const&)",
                        false,
                    ),
                }
            } else if name == "mm" {
                Op {
                    backward: true,
                    py_node: false,
                    frames: cublas(
                        &mut b,
                        "at::(anonymous namespace)::wrapper_CUDA_mm(at::Tensor const&, at::Tensor const&)",
                        true,
                    ),
                }
            } else if i == FLASH_FWD || i == FLASH_BWD {
                let mut v = b.sec(
                    FLASH,
                    &["pybind11::cpp_function::dispatcher(_object*, _object*, _object*)"],
                );
                v.extend(b.sec(
                    FLASH,
                    if i == FLASH_FWD {
                        &[
                            "mha_fwd(at::Tensor&, at::Tensor const&, at::Tensor const&, std::optional<at::Tensor>&, std::optional<at::Tensor>&, float, float, bool, int, int, float, bool, std::optional<at::Generator>)",
                            "run_mha_fwd(Flash_fwd_params&, CUstream_st*, bool)",
                            "void run_mha_fwd_<cutlass::bfloat16_t, 128, true>(Flash_fwd_params&, CUstream_st*)",
                        ]
                    } else {
                        &[
                            "mha_bwd(at::Tensor const&, at::Tensor const&, at::Tensor const&, at::Tensor const&, at::Tensor const&, at::Tensor const&, std::optional<at::Tensor>&, std::optional<at::Tensor>&, std::optional<at::Tensor>&, std::optional<at::Tensor>&, float, float, bool, int, int, float, bool, std::optional<at::Generator>, std::optional<at::Tensor>&)",
                            "run_mha_bwd(Flash_bwd_params&, CUstream_st*)",
                            "void run_mha_bwd_<cutlass::bfloat16_t, 128, true>(Flash_bwd_params&, CUstream_st*)",
                        ]
                    },
                ));
                Op {
                    backward: i == FLASH_BWD,
                    py_node: i == FLASH_BWD,
                    frames: v,
                }
            } else if i == ROPE_FWD || i == ROPE_BWD {
                let fwd = i == ROPE_FWD;
                let mut v = b.sec(
                    TE_PY,
                    &[
                        "pybind11::cpp_function::dispatcher(_object*, _object*, _object*)",
                        if fwd {
                            "transformer_engine::pytorch::fused_rope_forward(at::Tensor const&, at::Tensor const&, transformer_engine::NVTE_QKV_Format, bool)"
                        } else {
                            "transformer_engine::pytorch::fused_rope_backward(at::Tensor const&, at::Tensor const&, transformer_engine::NVTE_QKV_Format, bool)"
                        },
                    ],
                );
                v.extend(b.sec(
                    TE,
                    if fwd {
                        &[
                            "nvte_fused_rope_forward",
                            "transformer_engine::fused_rope_forward(transformer_engine::Tensor const&, transformer_engine::Tensor const&, transformer_engine::Tensor*, NVTE_QKV_Format, bool, int, int, int, int, int, int, int, int, int, int, int, CUstream_st*)",
                        ]
                    } else {
                        &[
                            "nvte_fused_rope_backward",
                            "transformer_engine::fused_rope_backward(transformer_engine::Tensor const&, transformer_engine::Tensor const&, transformer_engine::Tensor*, NVTE_QKV_Format, bool, int, int, int, int, int, int, int, int, int, int, CUstream_st*)",
                        ]
                    },
                ));
                Op {
                    backward: !fwd,
                    py_node: !fwd,
                    frames: v,
                }
            } else {
                let backward = name.contains("backward");
                let mut v = if backward {
                    let n = format!(
                        "torch::autograd::generated::{}::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)",
                        node(name)
                    );
                    b.sec(TORCH_CPU, &[&n])
                } else {
                    let n = format!(
                        "torch::autograd::THPVariable_{name}(_object*, _object*, _object*)"
                    );
                    b.sec(TORCH_PY, &[&n])
                };
                let call = format!("at::_ops::{name}::call(at::Tensor const&)");
                v.extend(b.sec(TORCH_CPU, &[&call]));
                let wrapper =
                    format!("at::(anonymous namespace)::wrapper_CUDA_{name}(at::Tensor const&)");
                v.extend(b.sec(TORCH_CUDA, &[&wrapper]));
                let launcher = if name.starts_with("_foreach") || name == "_fused_adam_" {
                    "void at::native::multi_tensor_apply<1, at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float>(std::vector<std::vector<at::Tensor, std::allocator<at::Tensor> >, std::allocator<std::vector<at::Tensor, std::allocator<at::Tensor> > > >&, at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float)"
                } else {
                    "void at::native::gpu_kernel_impl<at::native::(anonymous namespace)::LoadWithoutCast>(at::TensorIteratorBase&, at::native::(anonymous namespace)::LoadWithoutCast const&)"
                };
                v.extend(b.sec(TORCH_CUDA, &[launcher]));
                Op {
                    backward,
                    py_node: false,
                    frames: v,
                }
            };
            ops.push(op);
        }
        let cuda_launch = b.add("cudaLaunchKernel", CUDART, false);
        let cu_launch_ex = b.add("cuLaunchKernelEx", LIBCUDA, false);
        let libcuda = b.addrs(LIBCUDA, 6, 0x3_1a5);
        let mut memcpy = b.sec(
            TORCH_PY,
            &["torch::autograd::THPVariable_to(_object*, _object*, _object*)"],
        );
        memcpy.extend(b.sec(
            TORCH_CPU,
            &[
                "at::native::_to_copy(at::Tensor const&, std::optional<c10::ScalarType>, std::optional<c10::Layout>, std::optional<c10::Device>, std::optional<bool>, bool, std::optional<c10::MemoryFormat>)",
                "at::_ops::copy_::call(at::Tensor&, at::Tensor const&, bool)",
                "at::native::copy_(at::Tensor&, at::Tensor const&, bool)",
            ],
        ));
        memcpy.extend(b.sec(
            TORCH_CUDA,
            &[
                "at::native::copy_kernel_cuda(at::TensorIterator&, bool)",
                "at::native::copy_device_to_host_or_host_to_device(at::TensorIterator&, bool)",
            ],
        ));
        memcpy.push(b.add("cudaMemcpyAsync", CUDART, false));
        let mut memset = b.sec(
            TORCH_PY,
            &["torch::autograd::THPVariable_zero_(_object*, _object*)"],
        );
        memset.extend(b.sec(
            TORCH_CPU,
            &[
                "at::_ops::zero_::call(at::Tensor&)",
                "at::native::zero_(at::Tensor&)",
            ],
        ));
        memset.extend(b.sec(
            TORCH_CUDA,
            &["at::native::fill_kernel_cuda(at::TensorIterator&, c10::Scalar const&)"],
        ));
        memset.push(b.add("cudaMemsetAsync", CUDART, false));
        let mut sync = b.sec(
            TORCH_PY,
            &["torch::autograd::THPVariable_item(_object*, _object*)"],
        );
        sync.extend(b.sec(
            TORCH_CPU,
            &[
                "at::_ops::item::call(at::Tensor const&)",
                "at::native::item(at::Tensor const&)",
                "at::_ops::_local_scalar_dense::call(at::Tensor const&)",
            ],
        ));
        sync.extend(b.sec(
            TORCH_CUDA,
            &[
                "at::native::_local_scalar_dense_cuda(at::Tensor const&)",
                "at::cuda::memcpy_and_sync(void*, void const*, long, cudaMemcpyKind, CUstream_st*)",
            ],
        ));
        sync.push(b.add(
            "c10::cuda::stream_synchronize(CUstream_st*)",
            C10_CUDA,
            false,
        ));
        sync.push(b.add("cudaStreamSynchronize", CUDART, false));
        let collective = |b: &mut Builder| -> Sec {
            let mut v = b.sec(
                TORCH_PY,
                &["pybind11::cpp_function::dispatcher(_object*, _object*, _object*)"],
            );
            v.extend(b.sec(
                TORCH_CUDA,
                &[
                    "c10d::ProcessGroupNCCL::_allgather_base(at::Tensor&, at::Tensor&, c10d::AllgatherOptions const&)",
                    "c10::intrusive_ptr<c10d::Work, c10::detail::intrusive_target_default_null_type<c10d::Work> > c10d::ProcessGroupNCCL::collective<c10d::ProcessGroupNCCL::_allgather_base(at::Tensor&, at::Tensor&, c10d::AllgatherOptions const&)::{lambda(at::Tensor&, at::Tensor&, ncclComm*, c10::cuda::CUDAStream&)#1}>(at::Tensor&, at::Tensor&, c10d::ProcessGroupNCCL::_allgather_base(at::Tensor&, at::Tensor&, c10d::AllgatherOptions const&)::{lambda(at::Tensor&, at::Tensor&, ncclComm*, c10::cuda::CUDAStream&)#1}, c10d::OpType, char const*, bool, bool)",
                ],
            ));
            v
        };
        let mut wait = collective(&mut b);
        wait.extend(b.sec(
            TORCH_CUDA,
            &[
                "c10d::(anonymous namespace)::syncStream(c10::Device&, at::cuda::CUDAEvent&, c10::cuda::CUDAStream&)",
                "at::cuda::CUDAEvent::block(c10::cuda::CUDAStream const&)",
            ],
        ));
        wait.push(b.add("cudaStreamWaitEvent", CUDART, false));
        let mut record = collective(&mut b);
        record.extend(b.sec(
            TORCH_CUDA,
            &["at::cuda::CUDAEvent::record(c10::cuda::CUDAStream const&)"],
        ));
        record.push(b.add("cudaEventRecord", CUDART, false));
        let sched_yield = b.add("sched_yield", LIBC, false);
        let ioctl = b.add("ioctl", LIBC, false);
        let futex_wait = b.add("__futex_abstimed_wait_common", LIBC, false);
        let poll = b.add("poll", LIBC, false);
        let mut pin = b.sec(
            TORCH_PY,
            &["torch::autograd::THPVariable_pin_memory(_object*, _object*, _object*)"],
        );
        pin.extend(b.sec(
            TORCH_CPU,
            &[
                "at::_ops::pin_memory::call(at::Tensor const&, std::optional<c10::Device>)",
                "at::native::pin_memory(at::Tensor const&, std::optional<c10::Device>)",
                "at::_ops::_pin_memory::call(at::Tensor const&, std::optional<c10::Device>)",
                "at::native::_pin_memory(at::Tensor const&, std::optional<c10::Device>)",
                "at::_ops::copy_::call(at::Tensor&, at::Tensor const&, bool)",
                "at::native::copy_(at::Tensor&, at::Tensor const&, bool)",
                "at::native::copy_impl(at::Tensor&, at::Tensor const&, bool)",
                "at::native::(anonymous namespace)::copy_kernel(at::TensorIterator&, bool)",
            ],
        ));
        let memmove = b.add("__memmove_avx_unaligned_erms", LIBC, false);
        let mut proxy = vec![thread_base[0], thread_base[1]];
        proxy.extend(b.sec(NCCL, &["ncclProxyProgress(void*)"]));
        proxy.extend(b.addrs(NCCL, 1, 0));
        proxy.extend(b.sec(
            NCCL,
            &[
                "progressOps(ncclProxyState*, ncclProxyProgressState*, ncclProxyArgs*, int*)",
                "sendProxyProgress(ncclProxyState*, ncclProxyArgs*)",
                "ncclNetIb::test(void*, int*, int*)",
                "ncclIbTest(void*, int*, int*)",
            ],
        ));
        proxy.push(b.add("ibv_poll_cq", LIBMLX5, false));
        let proxy_leaves = {
            let mut v = b.sec(LIBMLX5, &["mlx5_poll_cq_v1", "mlx5_poll_one"]);
            v.extend(b.addrs(LIBMLX5, 2, 0x1_0e3));
            v
        };
        let mut watchdog = vec![thread_base[0], thread_base[1]];
        watchdog.extend(b.addrs(LIBSTDCXX, 1, 0));
        watchdog.extend(b.sec(
            TORCH_CUDA,
            &[
                "std::thread::_State_impl<std::thread::_Invoker<std::tuple<void (c10d::ProcessGroupNCCL::*)(), c10d::ProcessGroupNCCL*> > >::_M_run()",
                "c10d::ProcessGroupNCCL::ncclCommWatchdog()",
                "c10d::ProcessGroupNCCL::watchdogHandler()",
                "c10d::ProcessGroupNCCL::WorkNCCL::isCompleted()",
                "c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal() const",
                "at::cuda::CUDAEvent::query() const",
            ],
        ));
        watchdog.push(b.add("cudaEventQuery", CUDART, false));
        let mut evt = vec![thread_base[0], thread_base[1]];
        evt.extend(b.addrs(LIBCUDA, 7, 0x7_4c1));
        let torchrun = b.sec(PY, &["time_sleep", "pysleep"]);
        let k_yield = b.kernel(K_YIELD);
        let k_ioctl = b.kernel(K_IOCTL);
        let k_irq = b.kernel(K_IRQ);
        let k_fault = b.kernel(K_FAULT);
        let k_futex = b.kernel(K_FUTEX);
        let k_poll = b.kernel(K_POLL);
        let broken = b.add(BROKEN, BROKEN, false);
        assert!(b.frames.len() < u16::MAX as usize);
        Frames {
            frames: b.frames,
            main_base,
            thread_base,
            py_eval,
            py_calls,
            py_leaves,
            engine,
            py_node,
            ops,
            cuda_launch,
            cu_launch_ex,
            libcuda,
            memcpy,
            memset,
            sync,
            wait,
            record,
            sched_yield,
            ioctl,
            futex_wait,
            poll,
            pin,
            memmove,
            proxy,
            proxy_leaves,
            watchdog,
            evt,
            torchrun,
            k_yield,
            k_ioctl,
            k_irq,
            k_fault,
            k_futex,
            k_poll,
            broken,
        }
    }
}
