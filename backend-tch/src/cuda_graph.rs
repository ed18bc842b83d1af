//! CUDA graphs on tch: [`GraphCapture`] through the shim's wrapper of libtorch's own
//! `at::cuda::CUDAGraph` (so libtorch's caching allocator keeps the recording's memory in the
//! graph's private pool, as `torch.cuda.graph` does; the pool goes back once the graph and
//! every tensor the recording returned are dropped).

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::{Mutex, MutexGuard, PoisonError};

use rlgraph_core::{BackendCore, CoreError, Device, GraphCapture, Replay, Result};

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
    not_recording(op)?;
    Ok(DEVICE_WIDE.lock().unwrap_or_else(PoisonError::into_inner))
}

/// An error naming `op` where this thread is recording: `op` would wait for the device (a
/// download, say), which no recording can hold.
pub(crate) fn not_recording(op: &'static str) -> Result<()> {
    if RECORDING.with(Cell::get) {
        return Err(CoreError::Backend {
            backend: Tch::NAME,
            op,
            message: "this thread is recording a CUDA graph, which may not wait for the device or record another"
                .into(),
        });
    }
    Ok(())
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

impl CudaGraph {
    /// Records what `record` launches on `device` (see [`GraphCapture::record`]).
    fn record(device: Device, record: &mut dyn FnMut() -> Result<()>) -> Result<CudaGraph> {
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
        recorded?;
        Ok(graph)
    }
}

impl Replay for CudaGraph {
    fn replay(&self) -> Result<()> {
        // SAFETY: `raw` is a live graph whose recording ended.
        self.shim.check(unsafe { (self.shim.graph_replay)(self.raw) }, "replay")
    }
}

thread_local! {
    /// The CUDA devices whose random tensors libtorch's generator draws for this thread (bit
    /// `i`: `cuda:i`). Per thread, so a run that moves its draws leaves every other thread's
    /// host draws (and their numbers) as they were.
    static DRAWS_ON_DEVICE: Cell<u64> = const { Cell::new(0) };
}

/// Whether this thread's random tensors on `device` are drawn there.
pub(crate) fn draws_on(device: Device) -> bool {
    match device {
        Device::Cuda(i) if i < 64 => DRAWS_ON_DEVICE.with(Cell::get) & (1 << i) != 0,
        _ => false,
    }
}

impl GraphCapture for Tch {
    fn can_record(device: Device) -> bool {
        shim_for(device, "graph capture").is_ok()
    }

    fn record(device: Device, record: &mut dyn FnMut() -> Result<()>) -> Result<Box<dyn Replay>> {
        Ok(Box::new(CudaGraph::record(device, record)?))
    }

    fn copy_into(dst: &TchTensor, src: &TchTensor) -> Result<()> {
        let mut target = dst.0.shallow_clone();
        target.f_copy_(&src.0).map_err(crate::err("copy_into"))
    }

    fn draw_on_device(device: Device, seed: u64) -> Result<bool> {
        let Device::Cuda(i) = device else {
            return Ok(false);
        };
        if i >= 64 || !tch::Cuda::is_available() {
            return Ok(false);
        }
        // libtorch's CUDA generator is Philox (counter-based): a recording registers it, and
        // each replay moves its offset on by what the recorded kernels drew.
        tch::Cuda::manual_seed_all(seed);
        DRAWS_ON_DEVICE.with(|d| d.set(d.get() | (1 << i)));
        Ok(true)
    }

    fn draws_on_device(device: Device) -> bool {
        draws_on(device)
    }
}
