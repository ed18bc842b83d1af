//! Loads libtorch's CUDA half before the first question about GPUs.
//!
//! Rust links with `--as-needed`, and nothing a tch program calls lives in
//! `libtorch_cuda.so`, so the linker drops it and libtorch then reports no GPU even on a CUDA
//! install. PyTorch loads it at import; this does the same, once. It must come before the
//! first `is_available`: libtorch caches its CUDA hooks on that first call.

use std::sync::OnceLock;

/// Whether libtorch sees a CUDA runtime, and if not, why (for error messages).
pub(crate) fn cuda_status() -> &'static Result<(), String> {
    static STATUS: OnceLock<Result<(), String>> = OnceLock::new();
    STATUS.get_or_init(|| {
        let loaded = load_torch_cuda();
        if tch::Cuda::is_available() {
            Ok(())
        } else {
            Err(match loaded {
                Ok(()) => "libtorch_cuda.so is loaded but reports no CUDA device".to_string(),
                Err(e) => e,
            })
        }
    })
}

/// Loads `libtorch_cuda.so` for good (its static initializers register the CUDA hooks with
/// libtorch).
fn load_torch_cuda() -> Result<(), String> {
    open_global("libtorch_cuda.so")
}

/// Opens libtorch's library `name` for good with its symbols global (loaded already or not);
/// looks on the loader's path, then in `$LIBTORCH/lib`.
pub(crate) fn open_global(name: &str) -> Result<(), String> {
    let mut candidates = vec![std::path::PathBuf::from(name)];
    if let Some(root) = std::env::var_os("LIBTORCH") {
        candidates.push(std::path::Path::new(&root).join("lib").join(name));
    }
    let mut errors = vec![];
    for path in &candidates {
        // SAFETY: the library is one of libtorch's own, whose initializers only register
        // CUDA support with the libtorch already loaded; it is never unloaded.
        let lib = unsafe {
            libloading::os::unix::Library::open(
                Some(path),
                libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_GLOBAL,
            )
        };
        match lib {
            Ok(lib) => {
                std::mem::forget(lib);
                return Ok(());
            }
            Err(e) => errors.push(e.to_string()),
        }
    }
    Err(format!("no CUDA libtorch ({name}): {}", errors.join("; ")))
}
