//! Deterministic test data for the fused CPU kernels' bit-for-bit tests.

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
