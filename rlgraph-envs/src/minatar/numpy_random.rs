//! NumPy's legacy `numpy.random.RandomState`, exactly: its MT19937, its seeding, and the two
//! draws MinAtar makes (`rand`, and `randint` for the default int64 dtype), so that a seeded
//! MinAtar game here makes every random choice the Python package makes.

/// MT19937's state length, in 32-bit words.
pub(crate) const STATE_WORDS: usize = 624;
/// MT19937's shift.
const SHIFT: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;

/// NumPy's legacy `RandomState`: the MT19937 words and the position of the next one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RandomState {
    key: [u32; STATE_WORDS],
    /// The next word to temper; `STATE_WORDS` means a new block is generated first.
    pos: usize,
}

impl RandomState {
    /// `RandomState(seed)` for an int seed (NumPy takes 0 to 2^32 - 1 as one): MT19937's
    /// `init_genrand`.
    pub(crate) fn new(seed: u32) -> Self {
        let mut key = [0u32; STATE_WORDS];
        let mut s = seed;
        for (pos, k) in key.iter_mut().enumerate() {
            *k = s;
            s = 1_812_433_253u32
                .wrapping_mul(s ^ (s >> 30))
                .wrapping_add(pos as u32 + 1);
        }
        RandomState { key, pos: STATE_WORDS }
    }

    /// `RandomState([w0, w1, ...])` for an array seed of 32-bit words: MT19937's
    /// `init_by_array`. An empty array is taken as `[0]` (NumPy refuses it).
    pub(crate) fn from_words(words: &[u32]) -> Self {
        let words = if words.is_empty() { &[0][..] } else { words };
        let mut state = RandomState::new(19_650_218);
        let mt = &mut state.key;
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..STATE_WORDS.max(words.len()) {
            let prev = mt[i - 1] ^ (mt[i - 1] >> 30);
            mt[i] = (mt[i] ^ prev.wrapping_mul(1_664_525))
                .wrapping_add(words[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= STATE_WORDS {
                mt[0] = mt[STATE_WORDS - 1];
                i = 1;
            }
            if j >= words.len() {
                j = 0;
            }
        }
        for _ in 0..STATE_WORDS - 1 {
            let prev = mt[i - 1] ^ (mt[i - 1] >> 30);
            mt[i] = (mt[i] ^ prev.wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
            i += 1;
            if i >= STATE_WORDS {
                mt[0] = mt[STATE_WORDS - 1];
                i = 1;
            }
        }
        mt[0] = 0x8000_0000;
        state
    }

    /// The generator for a `u64` seed: `RandomState(seed)` where NumPy takes the seed as an
    /// int (below 2^32), else `RandomState([seed & 0xffffffff, seed >> 32])`, since NumPy
    /// refuses larger int seeds but takes them split into words this way.
    pub(crate) fn from_seed(seed: u64) -> Self {
        match u32::try_from(seed) {
            Ok(small) => RandomState::new(small),
            Err(_) => RandomState::from_words(&[seed as u32, (seed >> 32) as u32]),
        }
    }

    /// The state as NumPy's `get_state()` gives it: the 624 words and the position.
    pub(crate) fn words_and_pos(&self) -> (&[u32; STATE_WORDS], usize) {
        (&self.key, self.pos)
    }

    /// The generator in the state `(words, pos)` (NumPy's `set_state`); `None` when `pos`
    /// is past 624.
    pub(crate) fn from_words_and_pos(key: [u32; STATE_WORDS], pos: usize) -> Option<Self> {
        (pos <= STATE_WORDS).then_some(RandomState { key, pos })
    }

    /// Refills the block of 624 words (MT19937's `gen`).
    fn generate(&mut self) {
        let twist = |upper: u32, lower: u32, far: u32| {
            let y = (upper & UPPER_MASK) | (lower & LOWER_MASK);
            far ^ (y >> 1) ^ (0u32.wrapping_sub(y & 1) & MATRIX_A)
        };
        let k = &mut self.key;
        for i in 0..STATE_WORDS - 1 {
            let far = k[(i + SHIFT) % STATE_WORDS];
            k[i] = twist(k[i], k[i + 1], far);
        }
        k[STATE_WORDS - 1] = twist(k[STATE_WORDS - 1], k[0], k[SHIFT - 1]);
        self.pos = 0;
    }

    /// The next tempered 32-bit word (NumPy's `next_uint32` for MT19937).
    pub(crate) fn next_u32(&mut self) -> u32 {
        if self.pos >= STATE_WORDS {
            self.generate();
        }
        let mut y = self.key[self.pos];
        self.pos += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// The next 64-bit word: two 32-bit words, the first high (NumPy's `mt19937_next64`).
    fn next_u64(&mut self) -> u64 {
        let high = self.next_u32() as u64;
        (high << 32) | self.next_u32() as u64
    }

    /// `rand()` (`random_sample()`): a double in [0, 1) from two words, 27 and 26 bits.
    pub(crate) fn rand(&mut self) -> f64 {
        let a = (self.next_u32() >> 5) as f64;
        let b = (self.next_u32() >> 6) as f64;
        (a * 67_108_864.0 + b) / 9_007_199_254_740_992.0
    }

    /// `randint(low, high)` for the default int64 dtype: uniform in `low..high` by NumPy's
    /// legacy masked rejection (32-bit draws when the range fits 32 bits; no draw at all
    /// when it holds one value). `low >= high` (which NumPy refuses) gives `low`.
    pub(crate) fn randint(&mut self, low: i64, high: i64) -> i64 {
        if high <= low {
            return low;
        }
        // NumPy works on the closed interval [low, high - 1].
        let range = (high as u64).wrapping_sub(low as u64).wrapping_sub(1);
        let offset = if range == 0 {
            0
        } else if range == u32::MAX as u64 {
            self.next_u32() as u64
        } else if range < u32::MAX as u64 {
            let mask = mask_of(range) as u32;
            loop {
                let v = self.next_u32() & mask;
                if v as u64 <= range {
                    break v as u64;
                }
            }
        } else if range == u64::MAX {
            self.next_u64()
        } else {
            let mask = mask_of(range);
            loop {
                let v = self.next_u64() & mask;
                if v <= range {
                    break v;
                }
            }
        };
        (low as u64).wrapping_add(offset) as i64
    }
}

/// The smallest mask of ones from bit 0 that covers `max` (NumPy's `gen_mask`).
fn mask_of(max: u64) -> u64 {
    match max {
        0 => 0,
        _ => u64::MAX >> max.leading_zeros(),
    }
}

#[cfg(test)]
mod tests {
    //! Every expected value was printed once by NumPy 2.4.6 in the minatar venv
    //! (`python -c "import numpy as np; R = np.random.RandomState; print(...)"`), with the
    //! expression named beside each.

    use super::*;

    fn rand_n(r: &mut RandomState, n: usize) -> Vec<f64> {
        (0..n).map(|_| r.rand()).collect()
    }

    fn randint_n(r: &mut RandomState, low: i64, high: i64, n: usize) -> Vec<i64> {
        (0..n).map(|_| r.randint(low, high)).collect()
    }

    #[test]
    fn rand_equals_numpys() {
        // R(0).rand(5)
        let want = [
            0.5488135039273248,
            0.7151893663724195,
            0.6027633760716439,
            0.5448831829968969,
            0.4236547993389047,
        ];
        assert_eq!(rand_n(&mut RandomState::new(0), 5), want);
        // R(123).rand(3)
        let want = [0.6964691855978616, 0.28613933495037946, 0.2268514535642031];
        assert_eq!(rand_n(&mut RandomState::new(123), 3), want);
        // R(2**32 - 1).rand(2)
        let want = [0.0976320289940138, 0.9123828453026218];
        assert_eq!(rand_n(&mut RandomState::new(u32::MAX), 2), want);
    }

    #[test]
    fn rand_across_the_block_boundary_equals_numpys() {
        // r = R(42); r.rand(700); r.rand(2), then r.get_state()[2] (the position)
        let mut r = RandomState::new(42);
        rand_n(&mut r, 700);
        assert_eq!(rand_n(&mut r, 2), [0.5325894325515859, 0.05182353682242691]);
        assert_eq!(r.words_and_pos().1, 156);
        // R(42).get_state(): key[:3], key[-1] and pos, before any draw
        let fresh = RandomState::new(42);
        let (key, pos) = fresh.words_and_pos();
        assert_eq!(key[..3], [42, 3107752595, 1895908407]);
        assert_eq!(key[STATE_WORDS - 1], 26719530);
        assert_eq!(pos, 624);
    }

    #[test]
    fn randint_equals_numpys_for_small_ranges() {
        // R(123).randint(1, 6, 8): Freeway's car speeds
        assert_eq!(randint_n(&mut RandomState::new(123), 1, 6, 8), [3, 5, 3, 2, 4, 3, 4, 2]);
        // R(7).randint(high, size=12) for each high
        let cases: [(i64, [i64; 12]); 9] = [
            (2, [1, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0, 1]),
            (5, [4, 1, 3, 3, 4, 1, 0, 1, 2, 2, 0, 4]),
            (8, [7, 4, 1, 6, 3, 3, 7, 7, 4, 1, 6, 7]),
            (3, [0, 1, 2, 0, 1, 2, 0, 1, 2, 2, 2, 0]),
            (7, [4, 1, 6, 3, 3, 4, 1, 6, 0, 1, 6, 2]),
            (9, [4, 6, 3, 3, 7, 7, 7, 8, 8, 7, 6, 4]),
            (10, [4, 9, 6, 3, 3, 7, 7, 9, 7, 8, 9, 8]),
            (100, [47, 68, 25, 67, 83, 23, 92, 57, 14, 23, 72, 89]),
            (
                1000003,
                [
                    585903, 189636, 573977, 535030, 759363, 839891, 328599, 79463, 886108, 650425, 712078, 854551,
                ],
            ),
        ];
        for (high, want) in cases {
            assert_eq!(
                randint_n(&mut RandomState::new(7), 0, high, 12),
                want,
                "randint({high})"
            );
        }
    }

    #[test]
    fn draws_interleave_as_numpys() {
        // r = R(5); r.rand(), r.randint(2), r.randint(1, 9), r.randint(1), r.rand(), r.randint(-3, 4)
        // randint(1) holds one value and draws nothing, as NumPy's.
        let mut r = RandomState::new(5);
        assert_eq!(r.rand(), 0.22199317108973948);
        assert_eq!(r.randint(0, 2), 1);
        assert_eq!(r.randint(1, 9), 6);
        assert_eq!(r.randint(0, 1), 0);
        assert_eq!(r.rand(), 0.20671915533942642);
        assert_eq!(r.randint(-3, 4), -3);
    }

    #[test]
    fn randint_equals_numpys_for_wide_ranges() {
        // R(11).randint(0, 2**40, size=4)
        let want = [657423371967, 346452335707, 348726071223, 59812929868];
        assert_eq!(randint_n(&mut RandomState::new(11), 0, 1 << 40, 4), want);
        // R(11).randint(-2**62, 2**62, size=3)
        let want = [-1286297105190842689, -4252431242715521957, 3933187637257539511];
        assert_eq!(randint_n(&mut RandomState::new(11), -(1 << 62), 1 << 62, 3), want);
        // R(11).randint(0, 2**32, size=3): the full 32-bit range, one raw word each
        let want = [774252441, 293375679, 83645520];
        assert_eq!(randint_n(&mut RandomState::new(11), 0, 1 << 32, 3), want);
    }

    #[test]
    fn array_seeds_equal_numpys() {
        // R([5, 1]).rand(3): what a u64 seed of 2^32 + 5 seeds
        let want = [0.15727238718789782, 0.2824866316461999, 0.6044540318498407];
        assert_eq!(rand_n(&mut RandomState::from_seed((1 << 32) + 5), 3), want);
        // R([0xdeadbeef, 0xffffffff]).randint(1, 9, 6)
        let mut r = RandomState::from_words(&[0xdead_beef, 0xffff_ffff]);
        assert_eq!(randint_n(&mut r, 1, 9, 6), [6, 3, 5, 3, 6, 4]);
        // Below 2^32 a u64 seed is NumPy's int seed.
        assert_eq!(RandomState::from_seed(123), RandomState::new(123));
    }

    #[test]
    fn a_saved_state_continues_the_same_draws() {
        let mut r = RandomState::new(9);
        rand_n(&mut r, 400);
        let (key, pos) = r.words_and_pos();
        let mut copy = RandomState::from_words_and_pos(*key, pos).unwrap();
        assert_eq!(rand_n(&mut copy, 500), rand_n(&mut r, 500));
        assert!(RandomState::from_words_and_pos([0; STATE_WORDS], STATE_WORDS + 1).is_none());
    }
}
