//! `GraphCapture`: backends that record a fixed sequence of kernels once and replay it.

use crate::{Backend, Device, Result};

/// A capability beside [`Backend`]: record the kernels a closure launches on a device once,
/// then launch them all again with one call (CUDA graphs on tch). A step that runs the same
/// kernels every time (a tensor environment's step, a forward pass at a fixed batch) then pays
/// one launch instead of one per op.
///
/// A replay reads the same memory the recording read and writes the same memory it wrote, so
/// inputs go in with [`GraphCapture::copy_into`] before each replay, and the tensors the
/// recording returned hold each replay's results (until the next one overwrites them).
/// Nothing that waits for the device (a download, a shape that depends on values) may run
/// while recording, nor a library's first use (cuBLAS makes its handle then): run the work
/// once uncaptured first, as PyTorch's warm-up does. The backend's error says what failed.
pub trait GraphCapture: Backend {
    /// A recorded sequence, replayable on the device it was recorded on.
    type Graph: Send;

    /// Records what `record` launches on `device` without running it, and returns the
    /// recording and `record`'s value (tensors whose memory each replay writes).
    fn capture<T>(device: Device, record: impl FnOnce() -> Result<T>) -> Result<(Self::Graph, T)>;

    /// Launches the recorded kernels again, after everything queued before.
    fn replay(graph: &Self::Graph) -> Result<()>;

    /// Overwrites `dst` with `src` (same shape; cast to `dst`'s dtype) in `dst`'s own memory,
    /// which a recording may have read or written.
    fn copy_into(dst: &Self::Tensor, src: &Self::Tensor) -> Result<()>;
}
