//! The frame of every one-kernel step ([`crate::OneKernel`]): the parameters it documents,
//! the step clock, truncation and restart, around the environment's own dynamics. What
//! `Batched::step` does around `Dynamics::advance`, in its order and rounding, so a kernel
//! built here gives the tensor path's numbers.

/// `format!("{:?}f", v as f32)`: a constant of the tensor ops (which round their f64 scalars
/// to the tensor's f32) as CUDA C++ source.
pub(crate) fn f32_literal(v: f64) -> String {
    format!("{:?}f", v as f32)
}

/// Shared device functions: torch's `clamp` (NaN stays NaN) and `lerp`-free helpers.
const HELPERS: &str = r#"
__device__ __forceinline__ float clamp_like_torch(float x, float lo, float hi) {
  return isnan(x) ? x : fminf(fmaxf(x, lo), hi);
}
"#;

/// The source of kernel `name` stepping copies of `width` state columns (at most 4, the words
/// of one Philox draw). `helpers` is source placed before the kernel (device functions);
/// `body` reads `const float* s` (the copy's state) and `float v` (its action as a float,
/// unclamped) and sets `float next[width]`, `float rew` and `bool term`.
pub(crate) fn kernel_source(name: &str, width: usize, helpers: &str, body: &str) -> String {
    debug_assert!((1..=4).contains(&width), "a Philox draw has four words");
    format!(
        r#"
#ifndef RLGRAPH_ACTION
#define RLGRAPH_ACTION long long
#endif
{HELPERS}
{helpers}
extern "C" __global__ void {name}(
    int n, const RLGRAPH_ACTION* actions, const float* state, float* next_state, float* elapsed,
    long long* cursor, const float* pool, long long rows, float limit, float* reward,
    unsigned char* terminated, unsigned char* truncated) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float* s = state + {width} * (long long)i;
  float v = (float)actions[i];
  float next[{width}];
  float rew;
  bool term;
  {{
{body}
  }}
  float clock = elapsed[i] * 1.0f + 1.0f;
  bool trunc = !term && clock >= limit;
  float* out = next_state + {width} * (long long)i;
  if (term || trunc) {{
#ifdef RLGRAPH_PHILOX
    // Philox4x32-10 of the counter (k, i) under the key `rows` holds; `pool` holds the start
    // box's lows, then its spans: the tensor ops' draw, word for word and bit for bit.
    unsigned long long k = (unsigned long long)cursor[i];
    unsigned int c0 = (unsigned int)k, c1 = (unsigned int)i, c2 = (unsigned int)(k >> 32), c3 = 0u;
    unsigned int k0 = (unsigned int)rows, k1 = (unsigned int)((unsigned long long)rows >> 32);
    for (int r = 0; r < 10; ++r) {{
      if (r > 0) {{ k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }}
      unsigned long long p0 = 0xD2511F53ull * c0, p1 = 0xCD9E8D57ull * c2;
      unsigned int n0 = (unsigned int)(p1 >> 32) ^ c1 ^ k0, n2 = (unsigned int)(p0 >> 32) ^ c3 ^ k1;
      c0 = n0; c1 = (unsigned int)p1; c2 = n2; c3 = (unsigned int)p0;
    }}
    unsigned int w[4] = {{c0, c1, c2, c3}};
    for (int j = 0; j < {width}; ++j) {{
      float u = (float)(w[j] >> 8) * 5.9604644775390625e-08f + 0.0f;
      out[j] = u * pool[{width} + j] + pool[j];
    }}
    cursor[i] = (long long)(k + 1);
#else
    long long row = cursor[i];
    const float* start = pool + {width} * row;
    for (int j = 0; j < {width}; ++j) out[j] = start[j];
    long long moved = row + n;
    cursor[i] = moved >= rows ? moved - rows : moved;
#endif
    elapsed[i] = 0.0f;
  }} else {{
    for (int j = 0; j < {width}; ++j) out[j] = next[j];
    elapsed[i] = clock;
  }}
  reward[i] = rew;
  terminated[i] = term;
  truncated[i] = trunc;
}}
"#
    )
}
