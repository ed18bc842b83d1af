//! RL helpers over sequences: sequence lengths and decays, discounted sums that restart at
//! sequence boundaries, bootstrapping, generalized advantage estimation and V-trace.
//!
//! Each algorithm is a plain function over host slices (what a test or a worker can call
//! directly) and a component whose graph functions run it. These outputs are targets and
//! advantages, constants for the optimizer, so the kernels compute them on the host and
//! upload the result: no gradient flows through them, as in RLgraph (which stops gradients
//! there too).

mod gae;
mod sequence;
mod vtrace;

pub use gae::{gae, gae_time_major, gae_values, td_errors};
pub use sequence::{bootstrap_next_values, reverse_discount, sequence_decays, sequence_helper, sequence_lengths};
pub use vtrace::{v_trace, vtrace_from_importance_weights, VTrace};

use rlgraph_core::{Backend, CoreError, Device, HostData, HostTensor, Result};

/// A tensor's elements as f64 on the host.
pub(crate) fn host<B: Backend>(t: &B::Tensor) -> Result<Vec<f64>> {
    Ok(B::to_host(t)?.data.to_f64())
}

/// A tensor's elements as flags (`!= 0`) on the host: terminals and sequence ends.
pub(crate) fn host_flags<B: Backend>(t: &B::Tensor) -> Result<Vec<bool>> {
    Ok(host::<B>(t)?.iter().map(|&x| x != 0.0).collect())
}

/// Uploads `values` with the shape and dtype of `like`.
pub(crate) fn upload<B: Backend>(values: &[f64], like: &B::Tensor, device: Device) -> Result<B::Tensor> {
    let shape = B::shape(like);
    B::from_host(
        &HostTensor::new(shape, HostData::from_f64(values, B::dtype(like)))?,
        device,
    )
}

/// Fails unless every input has `lengths[0]` elements.
pub(crate) fn check_lengths(what: &str, names: &[&str], lengths: &[usize]) -> Result<()> {
    if lengths.iter().all(|&n| n == lengths[0]) {
        return Ok(());
    }
    let listed: Vec<String> = names.iter().zip(lengths).map(|(n, l)| format!("{n}: {l}")).collect();
    // A Config error, so that a kernel's caller wraps it with the component path.
    Err(CoreError::Config {
        at: what.into(),
        reason: format!(
            "inputs must have the same number of elements, got {}",
            listed.join(", ")
        ),
    })
}
