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

/// What a NVTX domain no domain-create event names is called on screens:
/// `domain 3`.
pub fn unnamed_domain(id: i64) -> String {
    format!("domain {id}")
}

/// Whether `name` is [`unnamed_domain`]'s: nsys's tables show such a
/// domain as nothing (`:range`).
pub fn is_unnamed_domain(name: &str) -> bool {
    name.strip_prefix("domain ")
        .is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
}

/// The name nsys's `cuda_api_sum` shows: a runtime call's six-character
/// `_vNNNN` version suffix dropped (`cudaLaunchKernel_v7000` →
/// `cudaLaunchKernel`), as nsys's own SQL does (`substr(name, -6, 2) =
/// '_v'`); longer suffixes and driver entry points' `_v2` stay
/// (`cuGetProcAddress` and `cuGetProcAddress_v2` are two rows there).
pub fn nsys_api_name(name: &str) -> &str {
    // Six characters, as SQLite's substr counts them.
    match name.char_indices().rev().nth(5) {
        Some((at, _)) if name[at..].starts_with("_v") => &name[..at],
        _ => name,
    }
}

/// Any `_v<N>` version suffix stripped, for telling what a call does
/// (`cuCtxSynchronize_v2` synchronizes as `cuCtxSynchronize` does).
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
    fn api_names_are_nsys_names() {
        assert_eq!(nsys_api_name("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
        assert_eq!(nsys_api_name("cudaMemcpyAsync_v3020"), "cudaMemcpyAsync");
        assert_eq!(nsys_api_name("cudaFoo_v10000"), "cudaFoo_v10000");
        assert_eq!(nsys_api_name("cuGetProcAddress_v2"), "cuGetProcAddress_v2");
        assert_eq!(nsys_api_name("cuLaunchKernelEx"), "cuLaunchKernelEx");
        assert_eq!(nsys_api_name("_v1234"), "");
        assert_eq!(nsys_api_name("x_vé12"), "x_vé12");
    }

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
