//! Runs a CPU loop compiled for the widest vector lanes the processor has: AVX-512 (sixteen
//! f32 lanes), else AVX2 (eight).
//!
//! Why: the portable build targets x86-64's baseline (SSE2, four f32 lanes). The loops this
//! crate writes by hand (tanh and its gradient, Adam's passes) vectorise to eight lanes with
//! AVX2 and to sixteen with AVX-512; their divisions, square roots and polynomial steps were
//! what their time waited on (tanh was a sixth of device PPO on an AVX-512 Xeon in eight
//! lanes). No FMA is enabled, so a loop does the same operations at every width and gives the
//! same bits.

/// `f()`, compiled with AVX-512 or AVX2 enabled where the CPU has it, as it is otherwise.
#[inline(always)]
pub(crate) fn with_wide_lanes<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has just been seen to have AVX-512F.
            return unsafe { on_avx512(f) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has just been seen to have AVX2.
            return unsafe { on_avx2(f) };
        }
    }
    f()
}

/// `f()` with AVX-512F enabled for it (`f` is inlined here, so its loops are compiled for it).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn on_avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// `f()` with AVX2 enabled for it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn on_avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}
