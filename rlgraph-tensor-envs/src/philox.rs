//! Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2,
//! 3", SC 2011): a counter-based generator. Four 32-bit words of output are a pure function of
//! four words of counter and two of key, so every copy of an environment can draw its `k`-th
//! restart from the counter `(k, copy)` on the device, in any order, with no state to carry.
//!
//! [`philox4x32_10`] is the host version; [`philox4x32_10_tensors`] computes the same words
//! element by element as backend ops on I64 tensors. The tensor version splits each 32x32-bit
//! product into 16-bit halves, so no intermediate exceeds 2^49 and nothing relies on a
//! backend's integer overflow.

use rlgraph_core::{Backend, DType, Device, Result};

/// The round multipliers.
const M: [u32; 2] = [0xD251_1F53, 0xCD9E_8D57];
/// The key's increments per round (the golden ratio and sqrt(3) - 1, in 32 bits).
const W: [u32; 2] = [0x9E37_79B9, 0xBB67_AE85];
/// Rounds, as Random123's default.
const ROUNDS: usize = 10;

/// The round keys: `key`, then bumped by [`W`] before each later round.
fn round_keys(key: [u32; 2]) -> [[u32; 2]; ROUNDS] {
    let mut keys = [key; ROUNDS];
    for r in 1..ROUNDS {
        keys[r] = [keys[r - 1][0].wrapping_add(W[0]), keys[r - 1][1].wrapping_add(W[1])];
    }
    keys
}

/// Philox4x32-10 of `counter` under `key`, on the host.
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mut c = counter;
    for k in round_keys(key) {
        let p0 = u64::from(M[0]) * u64::from(c[0]);
        let p1 = u64::from(M[1]) * u64::from(c[2]);
        c = [
            ((p1 >> 32) as u32) ^ c[1] ^ k[0],
            p1 as u32,
            ((p0 >> 32) as u32) ^ c[3] ^ k[1],
            p0 as u32,
        ];
    }
    c
}

/// Philox4x32-10 of the counter `(count mod 2^32, lane, count >> 32, last)` under `key`, on
/// the host: the `count`-th draw of stream `lane` in the domain `last`, as
/// [`PhiloxTensors::apply_count`] draws it on a device.
pub fn philox_count(key: [u32; 2], count: u64, lane: usize, last: u32) -> [u32; 4] {
    philox4x32_10([count as u32, lane as u32, (count >> 32) as u32, last], key)
}

/// Philox4x32-10's constants as I64 scalar tensors on one device, made once for one key: the
/// masks, the multipliers' 16-bit halves and every round's key. A stepping environment
/// applies them every step, so nothing is uploaded or filled on that path.
pub struct PhiloxTensors<B: Backend> {
    low16: B::Tensor,
    low32: B::Tensor,
    /// Each multiplier's (low, high) 16-bit halves.
    halves: [(B::Tensor, B::Tensor); 2],
    keys: Vec<[B::Tensor; 2]>,
}

impl<B: Backend> PhiloxTensors<B> {
    /// The constants for `key` on `device`.
    pub fn new(key: [u32; 2], device: Device) -> Result<Self> {
        let int = |v: u32| B::scalar(f64::from(v), DType::I64, device);
        let half = |m: u32| -> Result<(B::Tensor, B::Tensor)> { Ok((int(m & 0xFFFF)?, int(m >> 16)?)) };
        Ok(PhiloxTensors {
            low16: int(0xFFFF)?,
            low32: int(u32::MAX)?,
            halves: [half(M[0])?, half(M[1])?],
            keys: round_keys(key)
                .iter()
                .map(|k| Ok([int(k[0])?, int(k[1])?]))
                .collect::<Result<_>>()?,
        })
    }

    /// Philox4x32-10 element by element over I64 tensors of one shape holding the counter's
    /// four words (each in `0..2^32`): the four output words, as I64 tensors in `0..2^32`.
    pub fn apply(&self, counter: [B::Tensor; 4]) -> Result<[B::Tensor; 4]> {
        // The product of a word and a multiplier, as (high word, low word), from 16-bit halves
        // of the multiplier: a * m = (a * m_hi) << 16 + a * m_lo.
        let mulhilo = |a: &B::Tensor, (m_lo, m_hi): &(B::Tensor, B::Tensor)| -> Result<(B::Tensor, B::Tensor)> {
            let by_low = B::mul(a, m_lo)?;
            let by_high = B::mul(a, m_hi)?;
            let sum = B::add(&B::shift_left(&B::bit_and(&by_high, &self.low16)?, 16)?, &by_low)?;
            let high = B::add(&B::shift_right(&by_high, 16)?, &B::shift_right(&sum, 32)?)?;
            Ok((high, B::bit_and(&sum, &self.low32)?))
        };
        let [mut c0, mut c1, mut c2, mut c3] = counter;
        for [k0, k1] in &self.keys {
            let (hi0, lo0) = mulhilo(&c0, &self.halves[0])?;
            let (hi1, lo1) = mulhilo(&c2, &self.halves[1])?;
            let n0 = B::bit_xor(&B::bit_xor(&hi1, &c1)?, k0)?;
            let n2 = B::bit_xor(&B::bit_xor(&hi0, &c3)?, k1)?;
            (c0, c1, c2, c3) = (n0, lo1, n2, lo0);
        }
        Ok([c0, c1, c2, c3])
    }

    /// Philox4x32-10 of the counters `(count mod 2^32, lane, count >> 32, last)`, from I64
    /// tensors of one shape (`count` in `0..2^63`, `lane` and `last` in `0..2^32`): the
    /// `count`-th draw of stream `lane` in the domain `last`.
    pub fn apply_count(&self, count: &B::Tensor, lane: &B::Tensor, last: &B::Tensor) -> Result<[B::Tensor; 4]> {
        self.apply([
            B::bit_and(count, &self.low32)?,
            lane.clone(),
            B::shift_right(count, 32)?,
            last.clone(),
        ])
    }
}

/// Philox4x32-10 element by element over I64 tensors of one shape holding the counter's four
/// words (each in `0..2^32`), under `key`: the four output words, as I64 tensors in `0..2^32`.
/// A caller that draws repeatedly under one key keeps a [`PhiloxTensors`] instead.
pub fn philox4x32_10_tensors<B: Backend>(counter: [B::Tensor; 4], key: [u32; 2]) -> Result<[B::Tensor; 4]> {
    PhiloxTensors::<B>::new(key, B::device(&counter[0]))?.apply(counter)
}

/// A word's top 24 bits as a float in `[0, 1)`: exact in f32, so the host and every backend
/// give the same number.
pub fn unit_float(word: u32) -> f32 {
    (word >> 8) as f32 * (1.0 / (1u32 << 24) as f32)
}

/// [`unit_float`] element by element over I64 words in `0..2^32`: F32 uniforms in `[0, 1)`.
pub fn unit_floats<B: Backend>(words: &B::Tensor) -> Result<B::Tensor> {
    let top = B::cast(&B::shift_right(words, 8)?, DType::F32)?;
    B::affine(&top, 1.0 / f64::from(1u32 << 24), 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's published known-answer vectors for Philox4x32-10 (its `kat_vectors`).
    #[test]
    fn matches_random123s_known_answers() {
        let cases = [
            ([0; 4], [0; 2], [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]),
            (
                [u32::MAX; 4],
                [u32::MAX; 2],
                [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd],
            ),
            (
                [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
                [0xa409_3822, 0x299f_31d0],
                [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
            ),
        ];
        for (counter, key, expected) in cases {
            assert_eq!(
                philox4x32_10(counter, key),
                expected,
                "counter {counter:x?} key {key:x?}"
            );
        }
    }

    #[test]
    fn unit_floats_span_zero_to_below_one() {
        assert_eq!(unit_float(0), 0.0);
        assert_eq!(unit_float(0x8000_0000), 0.5);
        assert_eq!(unit_float(u32::MAX), 1.0 - 1.0 / (1u32 << 24) as f32);
    }
}
