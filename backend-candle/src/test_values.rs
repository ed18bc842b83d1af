//! Deterministic test data for the fused CPU kernels' bit-for-bit tests, and their bits.

use candle_core::Tensor;

/// `n` values in [-1, 1) from a small linear congruential sequence started at `seed`.
pub(crate) fn values(n: usize, seed: u32) -> Vec<f32> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (x >> 8) as f32 / (1u32 << 23) as f32 - 1.0
        })
        .collect()
}

/// Every element of an f32 tensor as its bits, row-major.
pub(crate) fn bits(t: &Tensor) -> Vec<u32> {
    match t.flatten_all().and_then(|t| t.to_vec1::<f32>()) {
        Ok(v) => v.iter().map(|x| x.to_bits()).collect(),
        Err(e) => panic!("not an f32 tensor: {e}"),
    }
}
