//! Tells the tests whether `../shared/real-profiles` is beside the checkout:
//! without it the tests that read real exports show as ignored, not passed
//! (under CI they run, and fail, so a missing directory cannot pass unseen).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(no_real_profiles)");
    println!("cargo::rerun-if-env-changed=CI");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/real-profiles");
    println!("cargo::rerun-if-changed={}", dir.display());
    if !dir.is_dir() && std::env::var_os("CI").is_none() {
        println!("cargo::rustc-cfg=no_real_profiles");
    }
}
