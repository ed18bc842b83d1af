//! The C++ shim (`shim/cuda_shim.cpp`): CUDA graphs over libtorch's own `at::cuda::CUDAGraph`
//! and kernels compiled at run time with NVRTC, for [`crate::cuda_graph`] and
//! [`crate::cuda_kernel`].
//!
//! build.rs compiles the shim as a shared library with the `cuda-shim` feature
//! (`scripts/build-cuda.sh` turns it on); it is embedded in the binary, written to an
//! anonymous in-memory file and opened from there after `libtorch_cuda.so`, whose symbols it
//! uses. Without the
//! feature, or on a machine without CUDA, every use is an error that says so.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::OnceLock;

use rlgraph_core::{BackendCore, CoreError, Device, Result};

use crate::Tch;

type Begin = unsafe extern "C" fn(c_int, *mut *mut c_void) -> *mut c_char;
type OnGraph = unsafe extern "C" fn(*mut c_void) -> *mut c_char;
type Free = unsafe extern "C" fn(*mut c_void);
type FreeMessage = unsafe extern "C" fn(*mut c_char);
type Compile = unsafe extern "C" fn(c_int, *const c_char, *const c_char, *mut *mut c_void) -> *mut c_char;
type Launch = unsafe extern "C" fn(*mut c_void, c_int, c_uint, c_uint, *mut *mut c_void) -> *mut c_char;

/// The shim's functions.
pub(crate) struct Shim {
    pub(crate) graph_begin: Begin,
    pub(crate) graph_end: OnGraph,
    pub(crate) graph_replay: OnGraph,
    pub(crate) graph_free: Free,
    pub(crate) kernel_compile: Compile,
    pub(crate) kernel_launch: Launch,
    pub(crate) kernel_free: Free,
    free_message: FreeMessage,
}

impl Shim {
    /// `Ok` for a null message; otherwise the message as a backend error naming `op`, freed.
    pub(crate) fn check(&self, message: *mut c_char, op: &'static str) -> Result<()> {
        if message.is_null() {
            return Ok(());
        }
        // SAFETY: a non-null message is a NUL-terminated string the shim allocated for us.
        let text = unsafe { CStr::from_ptr(message) }.to_string_lossy().into_owned();
        // SAFETY: freed once, with the shim's own allocator.
        unsafe { (self.free_message)(message) };
        Err(CoreError::Backend {
            backend: Tch::NAME,
            op,
            message: text,
        })
    }
}

/// The shim for work on `device`, or an error saying why there is none.
pub(crate) fn shim_for(device: Device, what: &str) -> Result<&'static Shim> {
    if !matches!(device, Device::Cuda(_)) {
        return Err(CoreError::Device(format!(
            "{what} runs on CUDA devices and {device} is not a CUDA device; use the uncaptured, unfused path on the CPU"
        )));
    }
    crate::to_tdevice(device)?;
    static SHIM: OnceLock<std::result::Result<Shim, String>> = OnceLock::new();
    SHIM.get_or_init(open_shim)
        .as_ref()
        .map_err(|why| CoreError::Device(format!("{what} on {device}: {why}")))
}

#[cfg(not(feature = "cuda-shim"))]
fn open_shim() -> std::result::Result<Shim, String> {
    Err("this build has no CUDA shim; build with scripts/build-cuda.sh (backend-tch's cuda-shim feature)".into())
}

#[cfg(feature = "cuda-shim")]
fn open_shim() -> std::result::Result<Shim, String> {
    use std::io::Write;
    use std::os::fd::{AsRawFd, FromRawFd};

    use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};

    static BYTES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/librlgraph_cuda_shim.so"));
    crate::cuda_runtime::cuda_status().clone()?;
    // The shim calls into libc10_cuda.so too; libtorch_cuda.so loaded it, this makes its
    // symbols global as well.
    crate::cuda_runtime::open_global("libc10_cuda.so")?;
    // An anonymous in-memory file: nothing another user can put in its place between the
    // write and the open, as a named file in a shared temporary folder would allow.
    // SAFETY: the name is NUL-terminated; the flags are valid.
    let fd = unsafe { libc::memfd_create(c"rlgraph-cuda-shim".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(format!(
            "memfd_create for the CUDA shim: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: `fd` is a fresh descriptor this function owns from here on.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    file.write_all(BYTES)
        .map_err(|e| format!("cannot write the CUDA shim to memory: {e}"))?;
    let path = format!("/proc/self/fd/{}", file.as_raw_fd());
    // SAFETY: the library is the shim built with this binary; its initializers do nothing and
    // it is never unloaded (the mapping outlives the descriptor).
    let lib = unsafe { Library::open(Some(&path), RTLD_NOW | RTLD_LOCAL) }
        .map_err(|e| format!("cannot open the CUDA shim ({path}): {e}"))?;
    // SAFETY: each symbol has the C signature declared above.
    let shim = unsafe {
        let get = |name: &[u8]| lib.get::<*mut c_void>(name).map(|s| *s).map_err(|e| e.to_string());
        Shim {
            graph_begin: std::mem::transmute::<*mut c_void, Begin>(get(b"rg_cuda_graph_begin")?),
            graph_end: std::mem::transmute::<*mut c_void, OnGraph>(get(b"rg_cuda_graph_end")?),
            graph_replay: std::mem::transmute::<*mut c_void, OnGraph>(get(b"rg_cuda_graph_replay")?),
            graph_free: std::mem::transmute::<*mut c_void, Free>(get(b"rg_cuda_graph_free")?),
            kernel_compile: std::mem::transmute::<*mut c_void, Compile>(get(b"rg_kernel_compile")?),
            kernel_launch: std::mem::transmute::<*mut c_void, Launch>(get(b"rg_kernel_launch")?),
            kernel_free: std::mem::transmute::<*mut c_void, Free>(get(b"rg_kernel_free")?),
            free_message: std::mem::transmute::<*mut c_void, FreeMessage>(get(b"rg_cuda_graph_free_message")?),
        }
    };
    std::mem::forget(lib);
    Ok(shim)
}
