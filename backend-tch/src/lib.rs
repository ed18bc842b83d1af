//! The libtorch backend for rlgraph-rs, through `tch` 0.26 (libtorch 2.13.0), on CPU and CUDA.
//!
//! libtorch comes from the `torch==2.13.0` wheel on PyPI: `scripts/install-libtorch.sh` puts a
//! CPU build of it in `.libtorch/` and `.cargo/config.toml` points `LIBTORCH` there.
//!
//! Status: the `Backend` trait implementation arrives with the core issue. For now this crate
//! re-exports `tch` so the workspace pins one version, and its smoke test (`tests/smoke.rs`)
//! proves that a tensor op runs through libtorch.

pub use tch;
