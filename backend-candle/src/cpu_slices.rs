//! The f32 elements of a contiguous CPU storage, for the hand-written CPU kernels.

use candle_core::{CpuStorage, Layout, Result};

/// The f32 elements `l` lays out in `s`; an error naming `op` when they are not f32 or not
/// contiguous.
pub(crate) fn contiguous_f32<'a>(s: &'a CpuStorage, l: &Layout, op: &str) -> Result<&'a [f32]> {
    match (s, l.contiguous_offsets()) {
        (CpuStorage::F32(v), Some((start, end))) => Ok(&v[start..end]),
        _ => Err(candle_core::Error::Msg(format!("{op} takes contiguous f32 tensors"))),
    }
}

/// [`contiguous_f32`], to write in place.
pub(crate) fn contiguous_f32_mut<'a>(s: &'a mut CpuStorage, l: &Layout, op: &str) -> Result<&'a mut [f32]> {
    match (s, l.contiguous_offsets()) {
        (CpuStorage::F32(v), Some((start, end))) => Ok(&mut v[start..end]),
        _ => Err(candle_core::Error::Msg(format!("{op} takes contiguous f32 tensors"))),
    }
}
