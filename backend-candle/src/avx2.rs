//! Runs a CPU loop compiled for AVX2 where the processor has it.
//!
//! Why: the portable build targets x86-64's baseline (SSE2, four f32 lanes). The loops this
//! crate writes by hand (tanh, Adam's passes) vectorise to eight lanes with AVX2, and their
//! divisions and square roots were what their time waited on. No FMA is enabled, so a loop
//! does the same operations either way and gives the same bits.

/// `f()`, compiled with AVX2 enabled where the CPU has it, as it is otherwise.
#[inline(always)]
pub(crate) fn with_avx2<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has just been seen to have AVX2.
        return unsafe { on_avx2(f) };
    }
    f()
}

/// `f()` with AVX2 enabled for it (`f` is inlined here, so its loops are compiled for it).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn on_avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}
