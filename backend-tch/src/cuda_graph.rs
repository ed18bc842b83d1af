//! CUDA graphs on tch: [`GraphCapture`] through the shim's wrapper of libtorch's own
//! `at::cuda::CUDAGraph` (so libtorch's caching allocator keeps the recording's memory in the
//! graph's private pool, as `torch.cuda.graph` does; the pool goes back once the graph and
//! every tensor the recording returned are dropped).

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::{Mutex, MutexGuard, PoisonError};

use rlgraph_core::{BackendCore, CoreError, Device, GraphCapture, Result};

use crate::cuda_shim::{shim_for, Shim};
use crate::{Tch, TchTensor};

/// Held while a graph records and while the device is waited for: libtorch's recording
/// begins with a device-wide wait, and a device-wide wait from another thread while a stream
/// records invalidates that recording (CUDA refuses one and fails the other), so the two
/// never overlap in this process.
static DEVICE_WIDE: Mutex<()> = Mutex::new(());

thread_local! {
    /// Whether this thread is recording (it may then neither wait for the device nor record
    /// again, which would wait on itself).
    static RECORDING: Cell<bool> = const { Cell::new(false) };
}

/// The device-wide lock, or an error naming `op` where this thread is recording.
pub(crate) fn device_wide(op: &'static str) -> Result<MutexGuard<'static, ()>> {
    if RECORDING.with(Cell::get) {
        return Err(CoreError::Backend {
            backend: Tch::NAME,
            op,
            message: "this thread is recording a CUDA graph, which may not wait for the device or record another"
                .into(),
        });
    }
    Ok(DEVICE_WIDE.lock().unwrap_or_else(PoisonError::into_inner))
}

/// Marks this thread as recording until dropped.
struct RecordingHere;

impl RecordingHere {
    fn start() -> Self {
        RECORDING.with(|r| r.set(true));
        RecordingHere
    }
}

impl Drop for RecordingHere {
    fn drop(&mut self) {
        RECORDING.with(|r| r.set(false));
    }
}

/// A recorded CUDA graph; dropping it frees the graph (its memory pool once the recording's
/// tensors are gone too).
pub struct CudaGraph {
    raw: *mut c_void,
    shim: &'static Shim,
}

// SAFETY: the graph is an owned C++ object with no thread affinity (replays launch on the
// calling thread's current stream), and `&CudaGraph` offers only `replay`, which libtorch
// allows from any thread.
unsafe impl Send for CudaGraph {}

impl Drop for CudaGraph {
    fn drop(&mut self) {
        // SAFETY: `raw` came from the shim's begin and is freed once, here.
        unsafe { (self.shim.graph_free)(self.raw) }
    }
}

/// A graph while it records: ends the recording when dropped unended (a panic inside the
/// recorded closure), so the stream it records on is usable again.
struct Recording {
    graph: Option<CudaGraph>,
}

impl Recording {
    /// Ends the recording; the graph, or why it could not be made.
    fn end(&mut self) -> Result<CudaGraph> {
        let Some(graph) = self.graph.take() else {
            return Err(CoreError::Backend {
                backend: Tch::NAME,
                op: "capture_end",
                message: "the recording had already ended".into(),
            });
        };
        // SAFETY: `raw` is a live graph that began recording on this thread.
        let ended = unsafe { (graph.shim.graph_end)(graph.raw) };
        graph.shim.check(ended, "capture_end")?;
        Ok(graph)
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if self.graph.is_some() {
            let _ = self.end();
        }
    }
}

impl GraphCapture for Tch {
    type Graph = CudaGraph;

    fn capture<T>(device: Device, record: impl FnOnce() -> Result<T>) -> Result<(CudaGraph, T)> {
        let shim = shim_for(device, "graph capture")?;
        let Device::Cuda(index) = device else {
            unreachable!("shim_for refuses other devices")
        };
        let _exclusive = device_wide("capture")?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: the shim writes a graph pointer or returns an error message, nothing else.
        shim.check(unsafe { (shim.graph_begin)(index as c_int, &mut raw) }, "capture_begin")?;
        let mut recording = Recording {
            graph: Some(CudaGraph { raw, shim }),
        };
        let recorded = {
            let _here = RecordingHere::start();
            record()
        };
        let graph = recording.end()?;
        Ok((graph, recorded?))
    }

    fn replay(graph: &CudaGraph) -> Result<()> {
        // SAFETY: `raw` is a live graph whose recording ended.
        graph
            .shim
            .check(unsafe { (graph.shim.graph_replay)(graph.raw) }, "replay")
    }

    fn copy_into(dst: &TchTensor, src: &TchTensor) -> Result<()> {
        let mut target = dst.0.shallow_clone();
        target.f_copy_(&src.0).map_err(crate::err("copy_into"))
    }
}
