//! `GraphCapture`: the op family that records a fixed sequence of kernels once and replays
//! it, and draws random tensors on the device so that a recording can hold them.

use super::{BackendCore, Device};
use crate::error::{CoreError, Result};

/// A recorded sequence of kernels, replayable on the device it was recorded on.
pub trait Replay: Send {
    /// Launches the recorded kernels again, after everything queued before.
    fn replay(&self) -> Result<()>;
}

/// The op family of recording (CUDA graphs on tch): record the kernels a closure launches on
/// a device once, then launch them all again with one call. A step that runs the same kernels
/// every time (a tensor environment's step, a forward pass at a fixed batch, a whole PPO
/// update) then pays one launch instead of one per op. Every method has a default for a
/// backend that cannot record: [`GraphCapture::can_record`] is false and the caller runs
/// uncaptured.
///
/// A replay reads the same memory the recording read and writes the same memory it wrote, so
/// inputs go in with [`GraphCapture::copy_into`] before each replay, and the tensors the
/// recording returned hold each replay's results (until the next one overwrites them).
/// Nothing that waits for the device (a download, an upload from host memory, a shape that
/// depends on values) may run while recording, nor a library's first use (cuBLAS makes its
/// handle then): run the work once uncaptured first, as PyTorch's warm-up does. Random
/// tensors are uploads unless [`GraphCapture::draw_on_device`] is on. The backend's error
/// says what failed.
pub trait GraphCapture: BackendCore {
    /// Whether [`GraphCapture::record`] works on `device`.
    fn can_record(_device: Device) -> bool {
        false
    }

    /// Records what `record` launches on `device` without running it.
    fn record(_device: Device, _record: &mut dyn FnMut() -> Result<()>) -> Result<Box<dyn Replay>> {
        Err(CoreError::Backend {
            backend: Self::NAME,
            op: "capture",
            message: "this backend records no kernel graphs; run the work uncaptured".into(),
        })
    }

    /// Overwrites `dst` with `src` (same shape; cast to `dst`'s dtype) in `dst`'s own memory,
    /// which a recording may have read or written.
    fn copy_into(_dst: &Self::Tensor, _src: &Self::Tensor) -> Result<()> {
        Err(CoreError::Backend {
            backend: Self::NAME,
            op: "copy_into",
            message: "this backend writes no tensor in place; it records no kernel graphs either".into(),
        })
    }

    /// From now on, draws the calling thread's random tensors on `device` with the backend's
    /// own counter-based generator, seeded `seed`, instead of drawing on the host and
    /// uploading, which no recording can hold. Other threads keep their host draws. The
    /// generator may be the process's (libtorch's is): the same seed gives the same draws in
    /// the same order while one thread at a time draws from it. Returns whether the backend
    /// does so there; by default it does not (`Ok(false)`).
    fn draw_on_device(_device: Device, _seed: u64) -> Result<bool> {
        Ok(false)
    }

    /// Whether the calling thread's random tensors on `device` are drawn there (see
    /// [`GraphCapture::draw_on_device`]).
    fn draws_on_device(_device: Device) -> bool {
        false
    }
}

/// Records what `record` launches on `device` with `B`'s [`GraphCapture::record`]; returns the
/// recording and `record`'s value (tensors whose memory each replay writes).
pub fn capture<B: GraphCapture, T>(device: Device, record: impl FnOnce() -> Result<T>) -> Result<(Box<dyn Replay>, T)> {
    let mut once = Some(record);
    let mut value = None;
    let graph = B::record(device, &mut || {
        if let Some(record) = once.take() {
            value = Some(record()?);
        }
        Ok(())
    })?;
    let value = value.ok_or_else(|| CoreError::Backend {
        backend: B::NAME,
        op: "capture",
        message: "the recording closure was never called".into(),
    })?;
    Ok((graph, value))
}
