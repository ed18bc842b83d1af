//! `ElementwiseOps`: arithmetic element by element, one required method per arity.

use super::BackendCore;
use crate::error::Result;

/// An elementwise op of two tensors (numpy broadcasting).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b`; integer division truncates toward zero.
    Div,
    /// `max(a, b)`.
    Maximum,
    /// `min(a, b)`.
    Minimum,
    /// `a ^ b` (floats).
    Pow,
}

impl BinaryOp {
    /// The op's name, as in error messages (`add`, `maximum`, ...).
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Maximum => "maximum",
            BinaryOp::Minimum => "minimum",
            BinaryOp::Pow => "pow",
        }
    }
}

/// An elementwise op of one tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-t`.
    Neg,
    /// `e^t`.
    Exp,
    /// Natural logarithm.
    Log,
    /// Square root.
    Sqrt,
    /// `t * t`.
    Square,
    /// `|t|`.
    Abs,
    /// Hyperbolic tangent.
    Tanh,
    /// Sine (radians).
    Sin,
    /// Cosine (radians).
    Cos,
    /// The largest integer not above each element (floats).
    Floor,
    /// Logistic sigmoid `1 / (1 + e^-t)`.
    Sigmoid,
    /// `max(t, 0)`.
    Relu,
}

impl UnaryOp {
    /// The op's name, as in error messages (`exp`, `relu`, ...).
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Exp => "exp",
            UnaryOp::Log => "log",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Square => "square",
            UnaryOp::Abs => "abs",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Sin => "sin",
            UnaryOp::Cos => "cos",
            UnaryOp::Floor => "floor",
            UnaryOp::Sigmoid => "sigmoid",
            UnaryOp::Relu => "relu",
        }
    }
}

/// Elementwise arithmetic: [`BinaryOp`]s with numpy broadcasting, [`UnaryOp`]s, and the two
/// ops with scalar operands. The named methods are provided through `binary` and `unary`.
pub trait ElementwiseOps: BackendCore {
    /// `op(a, b)` elementwise, broadcasting numpy-style.
    fn binary(op: BinaryOp, a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor>;
    /// `op(t)` elementwise.
    fn unary(op: UnaryOp, t: &Self::Tensor) -> Result<Self::Tensor>;
    /// `t * mul + add`, with scalars.
    fn affine(t: &Self::Tensor, mul: f64, add: f64) -> Result<Self::Tensor>;
    /// `t` clamped into `[min, max]`.
    fn clamp(t: &Self::Tensor, min: f64, max: f64) -> Result<Self::Tensor>;

    /// `a + b`.
    fn add(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        Self::binary(BinaryOp::Add, a, b)
    }
    /// `a - b`.
    fn sub(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        Self::binary(BinaryOp::Sub, a, b)
    }
    /// `a * b`.
    fn mul(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        Self::binary(BinaryOp::Mul, a, b)
    }
    /// `a / b`.
    fn div(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        Self::binary(BinaryOp::Div, a, b)
    }
    /// `max(a, b)` elementwise.
    fn maximum(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        Self::binary(BinaryOp::Maximum, a, b)
    }
    /// `min(a, b)` elementwise.
    fn minimum(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        Self::binary(BinaryOp::Minimum, a, b)
    }
    /// `a ^ b` elementwise (floats).
    fn pow(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        Self::binary(BinaryOp::Pow, a, b)
    }
    /// `-t`.
    fn neg(t: &Self::Tensor) -> Result<Self::Tensor> {
        Self::unary(UnaryOp::Neg, t)
    }
    /// `e^t`.
    fn exp(t: &Self::Tensor) -> Result<Self::Tensor> {
        Self::unary(UnaryOp::Exp, t)
    }
    /// Natural logarithm.
    fn log(t: &Self::Tensor) -> Result<Self::Tensor> {
        Self::unary(UnaryOp::Log, t)
    }
    /// Square root.
    fn sqrt(t: &Self::Tensor) -> Result<Self::Tensor> {
        Self::unary(UnaryOp::Sqrt, t)
    }
    /// `t * t`.
    fn square(t: &Self::Tensor) -> Result<Self::Tensor> {
        Self::unary(UnaryOp::Square, t)
    }
    /// `|t|`.
    fn abs(t: &Self::Tensor) -> Result<Self::Tensor> {
        Self::unary(UnaryOp::Abs, t)
    }
    /// Hyperbolic tangent.
    fn tanh(t: &Self::Tensor) -> Result<Self::Tensor> {
        Self::unary(UnaryOp::Tanh, t)
    }
    /// Sine (radians).
    fn sin(t: &Self::Tensor) -> Result<Self::Tensor> {
        Self::unary(UnaryOp::Sin, t)
    }
    /// Cosine (radians).
    fn cos(t: &Self::Tensor) -> Result<Self::Tensor> {
        Self::unary(UnaryOp::Cos, t)
    }
    /// The largest integer not above each element (floats).
    fn floor(t: &Self::Tensor) -> Result<Self::Tensor> {
        Self::unary(UnaryOp::Floor, t)
    }
    /// Logistic sigmoid `1 / (1 + e^-t)`.
    fn sigmoid(t: &Self::Tensor) -> Result<Self::Tensor> {
        Self::unary(UnaryOp::Sigmoid, t)
    }
    /// `max(t, 0)`.
    fn relu(t: &Self::Tensor) -> Result<Self::Tensor> {
        Self::unary(UnaryOp::Relu, t)
    }
}
