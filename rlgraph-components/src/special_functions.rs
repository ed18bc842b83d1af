//! `ln Gamma` and digamma on tensors of positive floats, built from differentiable backend
//! operations, for the Beta distribution's log-density, entropy and KL divergence.
//!
//! Both shift the argument up by six with the recurrences `lnG(x) = lnG(x + 6) - ln(x (x + 1)
//! ... (x + 5))` and `psi(x) = psi(x + 6) - sum 1 / (x + k)`, then use their asymptotic
//! (Stirling) series, accurate to about 1e-10 from 6 on.

use std::f64::consts::PI;

use rlgraph_core::{Backend, Result};

fn shifted<B: Backend>(x: &B::Tensor, k: f64) -> Result<B::Tensor> {
    B::affine(x, 1.0, k)
}

/// `ln Gamma(x)` elementwise, for `x > 0`.
pub fn ln_gamma<B: Backend>(x: &B::Tensor) -> Result<B::Tensor> {
    let z = shifted::<B>(x, 6.0)?;
    let mut product = x.clone();
    for k in 1..6 {
        product = B::mul(&product, &shifted::<B>(x, k as f64)?)?;
    }
    let inv = B::div(&B::affine(&z, 0.0, 1.0)?, &z)?;
    let inv2 = B::square(&inv)?;
    // 1/(12 z) - 1/(360 z^3) + 1/(1260 z^5)
    let series = B::mul(
        &inv,
        &B::affine(
            &B::mul(&inv2, &B::affine(&inv2, 1.0 / 1260.0, -1.0 / 360.0)?)?,
            1.0,
            1.0 / 12.0,
        )?,
    )?;
    // (z - 1/2) ln z - z + ln(2 pi) / 2
    let stirling = B::add(
        &B::mul(&shifted::<B>(&z, -0.5)?, &B::log(&z)?)?,
        &B::affine(&z, -1.0, 0.5 * (2.0 * PI).ln())?,
    )?;
    B::sub(&B::add(&stirling, &series)?, &B::log(&product)?)
}

/// The digamma function `psi(x) = d ln Gamma(x) / dx` elementwise, for `x > 0`.
pub fn digamma<B: Backend>(x: &B::Tensor) -> Result<B::Tensor> {
    let z = shifted::<B>(x, 6.0)?;
    let one = B::affine(x, 0.0, 1.0)?;
    let mut recurrence = B::div(&one, x)?;
    for k in 1..6 {
        recurrence = B::add(&recurrence, &B::div(&one, &shifted::<B>(x, k as f64)?)?)?;
    }
    let inv = B::div(&one, &z)?;
    let inv2 = B::square(&inv)?;
    // ln z - 1/(2z) - 1/(12 z^2) + 1/(120 z^4) - 1/(252 z^6)
    let tail = B::mul(
        &inv2,
        &B::affine(
            &B::mul(&inv2, &B::affine(&inv2, -1.0 / 252.0, 1.0 / 120.0)?)?,
            1.0,
            -1.0 / 12.0,
        )?,
    )?;
    let asymptotic = B::add(&B::sub(&B::log(&z)?, &B::affine(&inv, 0.5, 0.0)?)?, &tail)?;
    B::sub(&asymptotic, &recurrence)
}

/// `ln B(a, b) = ln Gamma(a) + ln Gamma(b) - ln Gamma(a + b)`.
pub fn ln_beta<B: Backend>(a: &B::Tensor, b: &B::Tensor) -> Result<B::Tensor> {
    B::sub(
        &B::add(&ln_gamma::<B>(a)?, &ln_gamma::<B>(b)?)?,
        &ln_gamma::<B>(&B::add(a, b)?)?,
    )
}
