//! The `Backend`: the tensor operations components are written against, once, cut into op
//! families.
//!
//! Design choices, in the spirit of burn's backend traits and candle's op enums:
//! - **Families.** [`BackendCore`] holds the tensor type, creation and transfer; each other
//!   trait is one family of ops over it: [`ElementwiseOps`], [`CompareOps`], [`ReduceOps`],
//!   [`ShapeOps`], [`ModuleOps`] (matrix products, convolution, pooling), [`IndexOps`],
//!   [`BitwiseOps`] (bit operations on integers), [`AutodiffOps`] (variables and gradients),
//!   [`OptimizerOps`] (fused optimizer steps), [`RandomOps`] and
//!   [`GraphCapture`] (recording kernel graphs, where a backend can). [`Backend`] is every family at once, and any type that implements them
//!   all is one. A new op joins one family; the others, and their conformance cases, stay
//!   as they are.
//! - **Ops as parameters.** Elementwise, comparison, reduction and bit ops are one required
//!   method each, taking the op ([`BinaryOp`], [`UnaryOp`], [`CmpOp`], [`ReduceOp`], [`BitOp`]); the
//!   named methods (`add`, `exp`, `gt`, `sum`, ...) are provided on top. A backend writes
//!   one `match`, and adding an op adds a variant, not a trait method.
//! - **Fused kernels are overridable defaults.** `linear` (matmul then add), `adam_step`
//!   (separate ops) and the random draws (host draws uploaded) have working defaults that a
//!   backend may replace with one kernel giving the same numbers.
//! - **Eager.** Both libtorch and candle are define-by-run, so every operation runs when
//!   called. The "static graph" lives above, in the execution plan; here there is none.
//! - **Static functions on the backend type.** A component calls `B::matmul(&x, &w)`; the
//!   tensor type is an associated type, so one component source serves every backend.
//!   Through a `B: Backend` bound every family's methods are in reach; a concrete backend
//!   (`Candle::add`) needs the families in scope: `use rlgraph_core::backend::prelude::*`.
//! - **Few dtypes.** `F32`, `F64`, `I64` (all integer data, indices included) and `U8`
//!   (bytes and boolean masks: comparisons return 0/1 `U8`).
//! - **Randomness comes from the host.** Random tensors are drawn from the caller's seeded
//!   RNG on the host and uploaded, so the same seed gives the same numbers on every backend;
//!   a run that records kernel graphs turns on the device's own seeded generator instead
//!   (`GraphCapture::draw_on_device`), since no recording can hold an upload.
//! - **Explicit broadcasting.** Binary and comparison ops broadcast numpy-style; `matmul`
//!   needs equal leading (batch) dimensions.
//! - **Gradients** are taken of a scalar with respect to variables (`AutodiffOps::Var`),
//!   which are the only mutable state: `var_set` overwrites a variable in place.
//!
//! The conformance suite in `tests/` runs the same cases on every backend, one module per
//! family.

mod autodiff;
mod bitwise;
mod capture;
mod compare;
mod core_ops;
mod elementwise;
mod host;
mod index;
mod module;
mod optimizer;
mod random;
mod reduce;
mod shape;

pub use autodiff::AutodiffOps;
pub use bitwise::{shift_in_range, BitOp, BitwiseOps};
pub use capture::{capture, GraphCapture, Replay};
pub use compare::{CmpOp, CompareOps};
pub use core_ops::BackendCore;
pub use elementwise::{BinaryOp, ElementwiseOps, UnaryOp};
pub use host::{DType, Device, HostData, HostTensor};
pub use index::IndexOps;
pub use module::ModuleOps;
pub use optimizer::{
    adam_step_ops, adam_step_scaled_ops, rmsprop_step_ops, AdamScalars, AdamStep, OptimizerOps, RmsPropSlots,
    RmsPropStep,
};
pub use random::{normal_on_host, sample_indices_on_host, uniform_on_host, RandomOps};
pub use reduce::{ReduceOp, ReduceOps};
pub use shape::ShapeOps;

/// Every op family a backend implements and the op enums, for
/// `use rlgraph_core::backend::prelude::*` where a concrete backend's ops are called by name
/// (`Candle::add`) or ops are passed as parameters (`B::unary(UnaryOp::Exp, &x)`).
pub mod prelude {
    pub use super::{
        AutodiffOps, Backend, BackendCore, BinaryOp, BitOp, BitwiseOps, CmpOp, CompareOps, ElementwiseOps,
        GraphCapture, IndexOps, ModuleOps, OptimizerOps, RandomOps, ReduceOp, ReduceOps, ShapeOps, UnaryOp,
    };
}

/// A tensor library that can run rlgraph components: every op family at once. It has no
/// methods of its own; any type implementing all the families is a `Backend`.
pub trait Backend:
    BackendCore
    + ElementwiseOps
    + CompareOps
    + ReduceOps
    + ShapeOps
    + ModuleOps
    + IndexOps
    + BitwiseOps
    + AutodiffOps
    + OptimizerOps
    + RandomOps
    + GraphCapture
{
}

impl<B> Backend for B where
    B: BackendCore
        + ElementwiseOps
        + CompareOps
        + ReduceOps
        + ShapeOps
        + ModuleOps
        + IndexOps
        + BitwiseOps
        + AutodiffOps
        + OptimizerOps
        + RandomOps
        + GraphCapture
{
}
