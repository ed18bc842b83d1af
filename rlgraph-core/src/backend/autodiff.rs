//! `AutodiffOps`: trainable variables and gradients.

use super::BackendCore;
use crate::error::Result;

/// Variables, the only mutable state, and gradients of a scalar with respect to them.
pub trait AutodiffOps: BackendCore {
    /// A trainable variable: a tensor that gradients are taken against and that can be overwritten.
    type Var: Send + 'static;

    /// A trainable variable holding `t`.
    fn var(t: &Self::Tensor) -> Result<Self::Var>;
    /// The tensor of a variable; gradients flow through it to the variable.
    fn var_tensor(v: &Self::Var) -> &Self::Tensor;
    /// Overwrites a variable in place (same shape and dtype).
    fn var_set(v: &Self::Var, t: &Self::Tensor) -> Result<()>;
    /// `t` cut off from the gradient computation.
    fn detach(t: &Self::Tensor) -> Self::Tensor;
    /// Gradients of the scalar `loss` with respect to `vars` (zeros for variables it does not use).
    fn grads(loss: &Self::Tensor, vars: &[&Self::Var]) -> Result<Vec<Self::Tensor>>;
    /// Runs `f` without recording how its tensors were computed, for calls whose results
    /// no gradient will flow through (acting). A backend with a gradient tape (libtorch)
    /// skips it; without one this is just `f()`.
    fn without_grad<R>(f: impl FnOnce() -> R) -> R {
        f()
    }
}
