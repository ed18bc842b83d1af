//! Lets this crate's own tests and benches find libtorch at run time without LD_LIBRARY_PATH,
//! and with the `cuda-shim` feature builds the CUDA shim (`shim/cuda_shim.cpp`) as a
//! shared library that `src/cuda_shim.rs` embeds and opens at run time.

use std::path::Path;
#[cfg(feature = "cuda-shim")]
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=LIBTORCH");
    if let Ok(dir) = std::env::var("LIBTORCH") {
        let lib = Path::new(&dir).join("lib");
        let lib = lib.canonicalize().unwrap_or(lib);
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    }
    #[cfg(feature = "cuda-shim")]
    if let Err(why) = build_shim() {
        // A build script's panic is how cargo shows a build error; this one says what to do.
        panic!("backend-tch, feature cuda-shim: {why}");
    }
}

#[cfg(feature = "cuda-shim")]
/// Compiles the shim against libtorch's headers and the CUDA runtime's, leaving its symbols
/// from libtorch_cuda.so unresolved: the running program has loaded that library by then.
fn build_shim() -> Result<(), String> {
    println!("cargo:rerun-if-changed=shim/cuda_shim.cpp");
    println!("cargo:rerun-if-env-changed=RLGRAPH_CUDA_INCLUDE");
    println!("cargo:rerun-if-env-changed=LIBTORCH_CXX11_ABI");
    let libtorch = PathBuf::from(
        std::env::var("LIBTORCH")
            .map_err(|_| "set LIBTORCH to the libtorch to build against (scripts/build-cuda.sh does)")?,
    );
    let cuda_include = cuda_include(&libtorch)?;
    let out = PathBuf::from(std::env::var("OUT_DIR").map_err(|e| e.to_string())?).join("librlgraph_cuda_shim.so");
    let compiler = cc::Build::new().cpp(true).get_compiler();
    let abi = std::env::var("LIBTORCH_CXX11_ABI").unwrap_or_else(|_| "1".into());
    let status = compiler
        .to_command()
        .args(["-shared", "-fPIC", "-O2", "-std=c++17"])
        .arg(format!("-D_GLIBCXX_USE_CXX11_ABI={abi}"))
        .arg("-I")
        .arg(libtorch.join("include"))
        .arg("-I")
        .arg(libtorch.join("include/torch/csrc/api/include"))
        .arg("-I")
        .arg(&cuda_include)
        .arg("shim/cuda_shim.cpp")
        .arg("-o")
        .arg(&out)
        .status()
        .map_err(|e| format!("cannot run the C++ compiler: {e}"))?;
    if !status.success() {
        return Err(format!("the C++ compiler failed on shim/cuda_shim.cpp ({status})"));
    }
    Ok(())
}

#[cfg(feature = "cuda-shim")]
/// Where `cuda_runtime_api.h` is: `RLGRAPH_CUDA_INCLUDE`, or the `nvidia` wheels beside a
/// Python torch that `LIBTORCH` points into, or a CUDA toolkit.
fn cuda_include(libtorch: &Path) -> Result<PathBuf, String> {
    let mut candidates: Vec<PathBuf> = std::env::var_os("RLGRAPH_CUDA_INCLUDE")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    if let Some(site) = libtorch.parent() {
        for cu in ["cu13", "cu12", "cuda_runtime"] {
            candidates.push(site.join("nvidia").join(cu).join("include"));
        }
    }
    candidates.push(PathBuf::from("/usr/local/cuda/include"));
    candidates
        .iter()
        .find(|dir| dir.join("cuda_runtime_api.h").is_file() && dir.join("crt/host_config.h").is_file())
        .cloned()
        .ok_or_else(|| {
            format!(
                "no CUDA runtime headers in {candidates:?}; set RLGRAPH_CUDA_INCLUDE to a folder with cuda_runtime_api.h and crt/ (the nvidia-cuda-runtime and nvidia-cuda-crt wheels hold them)"
            )
        })
}
