//! Display names derived from raw export values.

/// Which of a kernel's two names is shown: the short one nsys puts on its
/// timeline (`ncclKernel_AllReduce_RING_LL_Sum_float`), or the demangled
/// signature, which tells template instantiations apart. Copies and sets
/// have one name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum KernelNames {
    #[default]
    Short,
    Demangled,
}

impl KernelNames {
    pub fn other(self) -> KernelNames {
        match self {
            KernelNames::Short => KernelNames::Demangled,
            KernelNames::Demangled => KernelNames::Short,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            KernelNames::Short => "short",
            KernelNames::Demangled => "demangled",
        }
    }
}

/// Strips the `_v<N>` version suffix nsys appends to runtime API names
/// (`cudaLaunchKernel_v7000` → `cudaLaunchKernel`).
pub fn strip_api_version(name: &str) -> &str {
    if let Some(pos) = name.rfind("_v") {
        let digits = &name[pos + 2..];
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            return &name[..pos];
        }
    }
    name
}

/// Whether an API call (version suffix stripped) launches GPU work:
/// kernel, cooperative, graph and driver (`cuLaunchKernel*`) launches.
pub fn is_launch_api(name: &str) -> bool {
    let launch = name.starts_with("cudaLaunch")
        || name.starts_with("cuLaunch")
        || name.starts_with("cudaGraphLaunch")
        || name.starts_with("cuGraphLaunch");
    launch && !name.contains("HostFunc")
}

/// Names of CUPTI memcpy kinds (`copyKind`), as nsys shows them.
pub fn memcpy_name(copy_kind: Option<i64>) -> &'static str {
    match copy_kind {
        Some(1) => "Memcpy HtoD",
        Some(2) => "Memcpy DtoH",
        Some(3) => "Memcpy HtoA",
        Some(4) => "Memcpy AtoH",
        Some(5) => "Memcpy AtoA",
        Some(6) => "Memcpy AtoD",
        Some(7) => "Memcpy DtoA",
        Some(8) => "Memcpy DtoD",
        Some(9) => "Memcpy HtoH",
        Some(10) => "Memcpy PtoP",
        _ => "Memcpy",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_version_suffix_only() {
        assert_eq!(
            strip_api_version("cudaLaunchKernel_v7000"),
            "cudaLaunchKernel"
        );
        assert_eq!(
            strip_api_version("cudaMemcpyAsync_v3020"),
            "cudaMemcpyAsync"
        );
        assert_eq!(strip_api_version("cuLaunchKernelEx"), "cuLaunchKernelEx");
        assert_eq!(strip_api_version("my_var_vx"), "my_var_vx");
        assert_eq!(strip_api_version("name_v"), "name_v");
    }

    #[test]
    fn launch_apis() {
        for n in [
            "cudaLaunchKernel",
            "cudaLaunchKernelExC",
            "cuLaunchKernel",
            "cuLaunchKernelEx",
            "cudaGraphLaunch",
            "cudaLaunchCooperativeKernel",
        ] {
            assert!(is_launch_api(n), "{n}");
        }
        for n in [
            "cudaMemcpyAsync",
            "cudaStreamSynchronize",
            "cudaLaunchHostFunc",
        ] {
            assert!(!is_launch_api(n), "{n}");
        }
    }
}
