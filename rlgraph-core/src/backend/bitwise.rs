//! `BitwiseOps`: bit operations on I64 tensors, for counter-based random numbers on the device.

use super::BackendCore;
use crate::error::{CoreError, Result};

/// A bitwise op of two I64 tensors (numpy broadcasting).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BitOp {
    /// `a & b`.
    And,
    /// `a | b`.
    Or,
    /// `a ^ b`.
    Xor,
}

impl BitOp {
    /// The op's name, as in error messages (`bit_and`, ...).
    pub fn name(self) -> &'static str {
        match self {
            BitOp::And => "bit_and",
            BitOp::Or => "bit_or",
            BitOp::Xor => "bit_xor",
        }
    }
}

/// Bit operations on I64 tensors (two's complement). Other dtypes are refused with an error
/// naming the op and the dtype. The named ops are provided through `bitwise`.
pub trait BitwiseOps: BackendCore {
    /// `op(a, b)` bit by bit, broadcasting numpy-style.
    fn bitwise(op: BitOp, a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor>;
    /// `t << bits` (bits below 64), the high bits dropped.
    fn shift_left(t: &Self::Tensor, bits: u32) -> Result<Self::Tensor>;
    /// `t >> bits` (bits below 64), arithmetic: the sign bit fills in.
    fn shift_right(t: &Self::Tensor, bits: u32) -> Result<Self::Tensor>;

    /// `a & b`.
    fn bit_and(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        Self::bitwise(BitOp::And, a, b)
    }
    /// `a | b`.
    fn bit_or(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        Self::bitwise(BitOp::Or, a, b)
    }
    /// `a ^ b`.
    fn bit_xor(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        Self::bitwise(BitOp::Xor, a, b)
    }
}

/// `bits` if a shift of I64 values by it is defined (0 to 63), else an error naming the
/// backend and the op: what every backend's shifts check first.
pub fn shift_in_range(backend: &'static str, op: &'static str, bits: u32) -> Result<u32> {
    if bits < 64 {
        return Ok(bits);
    }
    Err(CoreError::Backend {
        backend,
        op,
        message: format!("a shift of {bits} bits; I64 shifts take 0 to 63"),
    })
}
